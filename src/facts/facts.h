/* The facts gpurig knows: every data file, data/NAME.tsv (each row with its
 * source), and the system's pci.ids, read into one read-only store.
 *
 * Each table is loaded on first use: the first call that reads it parses
 * and checks the whole file, under a lock, so `gpurig --version` parses
 * nothing and `gpurig topo` only the tables it reads. A loaded table never
 * changes and no lookup caches, so any number of threads may read facts at
 * once, and no result depends on which command or call ran first.
 *
 * gpurig's own data being missing or broken is not the user's input: the
 * call that finds it says so on stderr, "gpurig: FILE:LINE[:COLUMN]:
 * problem", and the process exits with GR_EXIT_CANNOT_RUN. A test loads
 * every table with gr_facts_load_all, which returns the error instead, so
 * a broken data file fails the build's tests, not only the command that
 * reads it.
 *
 * Ownership: the facts own every table, string and mapping in them until
 * gr_facts_unload (called at exit so leak checkers stay quiet). Pointers
 * handed out (a catalog entry, a row) live as long as the facts. */
#ifndef GPURIG_FACTS_H
#define GPURIG_FACTS_H

#include <stdbool.h>
#include <stddef.h>

#include "base/util.h"
#include "facts/catalog.h"
#include "facts/data.h"
#include "facts/pcilink.h"
#include "facts/tables.h"

#define GR_FACTS_MAX_GENS 9

/* The constants of the key/value tables as struct fields, one list per
 * table: a consumer names a field, so a typo is a compile error, and the
 * loader refuses a file that lacks a row for any field (GR_EXIT_CANNOT_RUN,
 * "FILE: no row for KEY"). The rows keep their sources in the tables. */
#define GR_CALIBRATION_CONSTS(X) \
  X(ring_p2p_eff) \
  X(ring_host_eff) \
  X(net_ring_eff) \
  X(ring_nvlink_eff) \
  X(copy_p2p_eff) \
  X(copy_host_eff) \
  X(h2d_eff_gen3) \
  X(h2d_eff_gen4) \
  X(h2d_eff_gen5) \
  X(copy_nvlink_eff) \
  X(nccl_nvlink_sm60) \
  X(nccl_nvlink_sm70) \
  X(nccl_nvlink_sm80) \
  X(nccl_nvlink_sm86) \
  X(nccl_nvlink_sm90) \
  X(nccl_nvlink_sm100) \
  X(nvlink1_link_gbps) \
  X(nvlink2_link_gbps) \
  X(nvlink3_link_gbps) \
  X(nvlink4_link_gbps) \
  X(nvlink5_link_gbps) \
  X(nvls_busbw_eff)

#define GR_PLANNER_CONSTS(X) \
  X(cuda_context_gib) \
  X(decode_eff_cpu_low) \
  X(decode_eff_cpu_high) \
  X(allreduce_latency_us) \
  X(allreduce_latency_nvlink_us) \
  X(allreduce_overlap) \
  X(inference_chunk_tokens) \
  X(zero3_live_gib) \
  X(zero_bucket_gib) \
  X(kwh_price_usd) \
  X(gpu_power_share) \
  X(host_power_w) \
  X(vllm_gpu_memory_utilization) \
  X(decode_spread) \
  X(prefill_spread) \
  X(train_spread) \
  X(cpu_adam_bytes_per_param) \
  X(cpu_adam_mem_eff) \
  X(offload_pcie_eff) \
  X(gpu_clock_ghz_default)

#define GR_HEALTH_CONSTS(X) \
  X(aer_ber) \
  X(host_ram_per_vram) \
  X(xid_window_h) \
  X(gen1_idle_gen) \
  X(bench_host_min) \
  X(bench_p2p_min) \
  X(bench_staged_min) \
  X(bench_nvlink_min) \
  X(bench_local_min) \
  X(bench_bidir_share) \
  X(bench_allreduce_min) \
  X(bench_floor_min_mib)

#define GR_DIFFUSION_CONSTS(X) \
  X(load_bytes_per_param) \
  X(vae_bytes_per_param) \
  X(frozen_bytes_per_param) \
  X(latent_cache_bytes) \
  X(text_cache_bytes) \
  X(cache_copies_per_rank) \
  X(worker_base_gib) \
  X(worker_cache_share) \
  X(reported_host_low_gb) \
  X(reported_host_high_gb) \
  X(adam8bit_state_bytes)

/* The keys of data/engine-speed.tsv (docs/plan.md "Speed"): the loader
 * refuses any other key, and plan/engine.h turns a build's rows into a
 * struct of these fields. */
#define GR_ENGINE_SPEED_KEYS(X) \
  X(mem_eff_gddr) X(mem_eff_hbm) X(quant_read_eff) X(layer_us_ghz) X(layer_size_exp) X(token_us) X(seq_us) \
  X(handoff_us) X(pp_fp16_acc) X(pp_eff_float) X(pp_int8) X(pp_eff_int8) X(pp_dequant_eff) X(decode_compute_eff) \
  X(train_mfu)

/* One row of engine-speed.tsv, parsed at load: the key as its index in
 * GR_ENGINE_SPEED_KEYS, the month as year * 12 + month - 1. */
enum gr_engine_speed_key {
#define GR_KEY_ENUM(k) GR_ES_##k,
  GR_ENGINE_SPEED_KEYS(GR_KEY_ENUM)
#undef GR_KEY_ENUM
  GR_ES_NKEYS
};
struct gr_engine_speed_row {
  const char *engine;       /* as engines.tsv names it */
  const char *arch;         /* NULL: every GPU */
  int since;                /* year * 12 + month - 1 */
  enum gr_engine_speed_key key;
  double value;
};

#define GR_CONST_FIELD(k) double k;
struct gr_calibration_consts { GR_CALIBRATION_CONSTS(GR_CONST_FIELD) };  /* calibration.tsv */
struct gr_planner_consts { GR_PLANNER_CONSTS(GR_CONST_FIELD) };          /* planner.tsv */
struct gr_health_consts { GR_HEALTH_CONSTS(GR_CONST_FIELD) };            /* health.tsv */
struct gr_diffusion_consts { GR_DIFFUSION_CONSTS(GR_CONST_FIELD) };      /* diffusion-memory.tsv */
#undef GR_CONST_FIELD

/* An NCCL release: 2.23 or 2.23.4 (patch -1: not given, which stands for
 * the newest patch of that minor version). */
struct gr_nccl_version {
  int major, minor, patch;
};

/* A row of nccl-p2p.tsv: NCCL's default P2P level for a CPU class and a
 * communicator size, in the era of releases that starts at `since`. */
struct gr_nccl_rule {
  struct gr_nccl_version since, until; /* the releases it was read from, first and last */
  const char *cpu;      /* "amd", "intel", "intel-bdw", "zhaoxin", "arm" or "*" */
  int gpus_max;         /* applies to communicators of at most this many GPUs; 0: any */
  const char *level;    /* "PIX", "PXB", "PHB" or "SYS" */
  const char *source;
};

/* A row of pci-devices.tsv: a device whose kind its class code gets wrong. */
struct gr_pci_rule {
  unsigned vendor;
  int device;      /* -1: every device of the vendor */
  int class_sub;   /* base class and subclass (0x0300), -1: any */
  bool accelerator; /* a compute device; else display-only (never a GPU) */
};

/* Finds the data directory ($GPURIG_DATA, else next to the executable) and
 * loads nothing: each table loads on first use. Always 0; err is kept for
 * the callers' sake. */
int gr_facts_load(struct gr_err *err);
/* Loads every table that is not loaded yet and maps pci.ids: 0, or -1 with
 * err (GR_EXIT_CANNOT_RUN) naming the file, the line and the problem, and
 * nothing stays loaded then. For the test that checks every data file. */
int gr_facts_load_all(struct gr_err *err);
/* Frees every loaded table; a later read loads it again. No other thread
 * may be reading facts. */
void gr_facts_unload(void);

/* Parses buf (len bytes) as the data file `file` ("xid.tsv") would be
 * loaded, checks every row, and drops it: 0, or -1 with err as a load would
 * give it ("xid.tsv:3:1: xid must be ..."). An unknown file name is -1. For
 * tests; the loaded facts are not touched. */
int gr_facts_check_file(const char *file, const char *buf, size_t len, struct gr_err *err);
/* The same for a table already parsed (its name in messages is t's). */
int gr_facts_check_table(const char *file, const struct gr_table *t, struct gr_err *err);

/* Whether the data file `file` ("xid.tsv") is loaded now: what a test asks
 * to show that a command loads only the tables it reads. */
bool gr_facts_is_loaded(const char *file);

/* The tables that are not row tables (facts/tables.h has those), each
 * loaded on first use: their rows and *n. */
const struct gr_pcie_gen *gr_pcie_gens(size_t *n);                 /* pcie-links.tsv */
const struct gr_gpu_model *gr_catalog_models(size_t *n);           /* gpus.tsv, the GPU catalog */
const struct gr_pci_rule *gr_pci_rules(size_t *n);                 /* pci-devices.tsv */
const struct gr_engine_speed_row *gr_engine_speed_rows(size_t *n); /* engine-speed.tsv */
/* pci.ids ($GPURIG_PCI_IDS, else the system's), mapped read-only: the
 * bytes and *len, or NULL and 0 when there is none. */
const char *gr_pciids_db(size_t *len);

/* NCCL versions. parse: "X.Y" or "X.Y.Z", digits only (false otherwise).
 * cmp: <0, 0, >0; a version without a patch compares as its newest patch.
 * text: "2.23" or "2.23.4" into buf, which it returns. */
bool gr_nccl_version_parse(const char *text, struct gr_nccl_version *v);
int gr_nccl_version_cmp(const struct gr_nccl_version *a, const struct gr_nccl_version *b);
const char *gr_nccl_version_text(const struct gr_nccl_version *v, char *buf, size_t cap);
/* The newest release data/nccl-p2p.tsv was checked against (gpurig's
 * default NCCL version), and the oldest it covers. */
struct gr_nccl_version gr_nccl_newest(void);
struct gr_nccl_version gr_nccl_oldest(void);
/* NCCL's default P2P rule for version v, a CPU of class cpu ("amd",
 * "intel", "intel-bdw", "zhaoxin", "arm", or anything else for a CPU no
 * rule names) and a communicator of ngpus GPUs on the node; NULL when v is
 * older than the table. The rule lives as long as the facts. */
const struct gr_nccl_rule *gr_nccl_p2p_rule(const struct gr_nccl_version *v, const char *cpu, size_t ngpus);

/* The constants by table, as fields (gr_calib()->ring_p2p_eff); they live
 * as long as the facts. */
const struct gr_calibration_consts *gr_calib(void);
const struct gr_planner_consts *gr_plan_consts(void);
const struct gr_health_consts *gr_health_consts(void);
const struct gr_diffusion_consts *gr_diffusion_consts(void);

#endif
