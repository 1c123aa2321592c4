/* The facts gpurig knows: every data file, data/NAME.tsv (each row with its source),
 * and the system's pci.ids, loaded by one call into one read-only structure.
 *
 * gr_facts_load runs once, before any other work and before any thread
 * (main does it; each unit test and fuzz target too). Afterwards every
 * module reads the same structure through gr_facts(), and nothing in it
 * changes: no table is loaded lazily, no lookup caches, so any number of
 * threads may read facts at once and no result depends on which command
 * ran first.
 *
 * Ownership: the facts own every table, string and mapping in them until
 * gr_facts_unload (called at exit so leak checkers stay quiet). Pointers
 * handed out (a catalog entry, a table cell) live as long as the facts. */
#ifndef GPURIG_FACTS_H
#define GPURIG_FACTS_H

#include <stdbool.h>
#include <stddef.h>

#include "base/util.h"
#include "facts/catalog.h"
#include "facts/data.h"
#include "facts/pcilink.h"

#define GR_FACTS_MAX_GENS 9

/* One row of a key/value table (calibration, planner, health): a constant
 * with its source. Kept sorted by key. */
struct gr_kv {
  const char *key;
  double value;
  const char *source;
};

struct gr_kv_table {
  const char *name;       /* the file, for messages */
  struct gr_kv *rows;
  size_t n;
};

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

struct gr_facts {
  char data_dir[4096];                         /* where data/ was found */
  struct gr_pcie_gen gens[GR_FACTS_MAX_GENS];  /* pcie-links.tsv */
  size_t ngens;
  struct gr_gpu_model *gpus;                   /* gpus.tsv, the GPU catalog */
  size_t ngpus;
  struct gr_kv_table calibration;              /* calibration.tsv: prediction efficiencies */
  struct gr_calibration_consts calib;          /* the same as fields */
  struct gr_planner_consts plan;               /* planner.tsv as fields */
  struct gr_health_consts health_c;            /* health.tsv as fields */
  struct gr_diffusion_consts diffusion_c;      /* diffusion-memory.tsv as fields */
  struct gr_kv_table planner;                  /* planner.tsv: planner constants */
  struct gr_kv_table health;                   /* health.tsv: doctor and bench thresholds */
  /* Tables read row by row by their module, columns checked at load. */
  struct gr_table cpu_interconnect;            /* cpu-interconnect.tsv (analysis) */
  struct gr_table cpu_memory;                  /* cpu-memory.tsv (doctor) */
  struct gr_table driver_issues;               /* driver-issues.tsv (doctor) */
  struct gr_table xid;                         /* xid.tsv (doctor) */
  struct gr_table models;                      /* models.tsv (plan) */
  struct gr_table quant;                       /* quant.tsv (plan) */
  struct gr_table engines;                     /* engines.tsv (plan) */
  struct gr_table engine_speed;                /* engine-speed.tsv: the engines' speed profiles (plan/engine.c) */
  struct gr_engine_speed_row *speed_rows;      /* the same, parsed */
  size_t nspeed_rows;
  struct gr_table diffusion;                   /* diffusion.tsv (plan/diffusion.c) */
  struct gr_table nics;                        /* nics.tsv, the NIC catalog (analysis/cluster.c) */
  struct gr_kv_table diffusion_memory;         /* diffusion-memory.tsv: the diffusion planner's constants */
  struct gr_table pci_devices;                 /* pci-devices.tsv (model), parsed into pci_rules */
  struct gr_pci_rule *pci_rules;
  size_t npci_rules;
  struct gr_table nccl_p2p;                    /* nccl-p2p.tsv (analysis), parsed into nccl_rules */
  struct gr_nccl_rule *nccl_rules;
  size_t nnccl_rules;
  /* pci.ids ($GPURIG_PCI_IDS, else the system's), mapped read-only; NULL absent. */
  const char *pciids;
  size_t pciids_len;
  /* backing store of the key/value tables and the catalog */
  struct gr_table raw_gpus, raw_pcie, raw_calibration, raw_planner, raw_health, raw_diffusion_memory;
};

/* Loads every data file and maps pci.ids. Returns 0, or -1 with err
 * (GR_EXIT_CANNOT_RUN: gpurig's own data is missing or broken) naming the
 * file, the line and the problem; nothing stays loaded then. A second call
 * after success returns 0 at once. */
int gr_facts_load(struct gr_err *err);
void gr_facts_unload(void);

/* The loaded facts. Calling it before gr_facts_load succeeded is a bug in
 * gpurig: it says so on stderr and aborts. */
const struct gr_facts *gr_facts(void);

/* A constant of a key/value table. Every key gpurig asks for is checked at
 * load, so an absent key is a bug in gpurig: it says so and aborts. */
double gr_kv(const struct gr_kv_table *t, const char *key);

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
