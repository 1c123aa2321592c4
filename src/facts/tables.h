/* The row tables of data/ as typed rows: each file's columns declared once,
 * here, as an X-macro list, from which come its row struct, the loader's
 * column checks and the accessor. A consumer reads a field
 * (gr_xid_rows()->v[i].severity), so a misspelt column is a compile error,
 * and every number was parsed and range-checked when the table was loaded,
 * with FILE:LINE:COLUMN in the error.
 *
 * A column is X(T, name, KIND, lo, hi, words):
 *   STR   any text (const char *);
 *   WORD  one of the words of `words`, "a|b|c" (const char *);
 *   INT   a whole number from lo to hi (long); `words`, when not NULL, is
 *         the one word that stands for "none" ("*", "-"), stored as -1;
 *   NUM   a number from lo to hi (double);
 *   BOOL  yes or no (bool).
 * T is passed through for the macros that expand the list.
 *
 * Ownership: rows and their strings belong to the facts (facts.h) and live
 * until gr_facts_unload. */
#ifndef GPURIG_TABLES_H
#define GPURIG_TABLES_H

#include <stdbool.h>
#include <stddef.h>

/* data/cpu-interconnect.tsv: NCCL's figure for the link between sockets (analysis) */
#define GR_CPU_INTERCONNECT_COLS(X, T) \
  X(T, vendor, STR, 0, 0, NULL) \
  X(T, family, INT, 0, 4095, "*") \
  X(T, model_min, INT, 0, 4095, NULL) \
  X(T, nccl_gbps, NUM, 0.001, 10000, NULL) \
  X(T, link, STR, 0, 0, NULL) \
  X(T, source, STR, 0, 0, NULL)

/* data/cpu-memory.tsv: memory channels per socket of a CPU model (doctor) */
#define GR_CPU_MEMORY_COLS(X, T) \
  X(T, match, STR, 0, 0, NULL) \
  X(T, channels, INT, 1, 64, NULL) \
  X(T, source, STR, 0, 0, NULL)

/* data/driver-issues.tsv: known driver bugs by driver range and GPU (doctor) */
#define GR_DRIVER_ISSUES_COLS(X, T) \
  X(T, id, STR, 0, 0, NULL) \
  X(T, gpu_match, STR, 0, 0, NULL) \
  X(T, driver_min, STR, 0, 0, NULL) \
  X(T, driver_max, STR, 0, 0, NULL) \
  X(T, severity, WORD, 0, 0, "fail|warn") \
  X(T, problem, STR, 0, 0, NULL) \
  X(T, fix, STR, 0, 0, NULL) \
  X(T, source, STR, 0, 0, NULL)

/* data/xid.tsv: what an NVIDIA Xid means and what to do (doctor) */
#define GR_XID_COLS(X, T) \
  X(T, xid, INT, 0, 99999, NULL) \
  X(T, name, STR, 0, 0, NULL) \
  X(T, class, STR, 0, 0, NULL) \
  X(T, severity, WORD, 0, 0, "fail|warn|info") \
  X(T, action, STR, 0, 0, NULL) \
  X(T, source, STR, 0, 0, NULL)

/* data/models.tsv: built-in language models' shapes (plan) */
#define GR_MODELS_COLS(X, T) \
  X(T, name, STR, 0, 0, NULL) \
  X(T, model_type, STR, 0, 0, NULL) \
  X(T, layers, INT, 1, 1e6, NULL) \
  X(T, hidden, INT, 1, 1e7, NULL) \
  X(T, intermediate, INT, 1, 1e7, NULL) \
  X(T, heads, INT, 1, 1e5, NULL) \
  X(T, kv_heads, INT, 1, 1e5, NULL) \
  X(T, head_dim, INT, 1, 1e5, NULL) \
  X(T, vocab, INT, 1, 1e8, NULL) \
  X(T, tied, BOOL, 0, 0, NULL) \
  X(T, qkv_bias, BOOL, 0, 0, NULL) \
  X(T, experts, INT, 0, 1e5, NULL) \
  X(T, experts_per_tok, INT, 0, 1e5, NULL) \
  X(T, max_ctx, INT, 0, 1e9, NULL) \
  X(T, sliding_window, INT, 0, 1e9, NULL) \
  X(T, source, STR, 0, 0, NULL)

/* data/quant.tsv: weight formats and their block layout (plan) */
#define GR_QUANT_COLS(X, T) \
  X(T, name, STR, 0, 0, NULL) \
  X(T, kind, WORD, 0, 0, "float|ggml|gguf|gptq|awq|bnb") \
  X(T, base, STR, 0, 0, NULL) \
  X(T, block_weights, INT, 1, 1e6, "-") \
  X(T, block_bytes, INT, 1, 1e6, "-") \
  X(T, source, STR, 0, 0, NULL)

/* data/engines.tsv: inference and training engines and what they load (plan) */
#define GR_ENGINES_COLS(X, T) \
  X(T, name, STR, 0, 0, NULL) \
  X(T, aliases, STR, 0, 0, NULL) \
  X(T, formats, STR, 0, 0, NULL) \
  X(T, kv_quants, STR, 0, 0, NULL) \
  X(T, jobs, STR, 0, 0, NULL) \
  X(T, swa, WORD, 0, 0, "all|interleaved|none") \
  X(T, min_cc, STR, 0, 0, NULL) \
  X(T, rocm, STR, 0, 0, NULL) \
  X(T, source, STR, 0, 0, NULL)

/* data/diffusion.tsv: diffusion pipelines, one row per part (plan/diffusion.c
 * reads each part's config keys) */
#define GR_DIFFUSION_COLS(X, T) \
  X(T, name, STR, 0, 0, NULL) \
  X(T, aliases, STR, 0, 0, NULL) \
  X(T, part, WORD, 0, 0, "unet|vae|text_encoder|text_encoder_2") \
  X(T, class, WORD, 0, 0, "UNet2DConditionModel|AutoencoderKL|CLIPTextModel|CLIPTextModelWithProjection") \
  X(T, config, STR, 0, 0, NULL) \
  X(T, source, STR, 0, 0, NULL)

/* data/nics.tsv: the NIC catalog (analysis/cluster.c) */
#define GR_NICS_COLS(X, T) \
  X(T, name, STR, 0, 0, NULL) \
  X(T, aliases, STR, 0, 0, NULL) \
  X(T, kind, WORD, 0, 0, "infiniband|ethernet|efa") \
  X(T, port_gbit, NUM, 1, 1e5, NULL) \
  X(T, ports, INT, 1, 64, NULL) \
  X(T, pcie_gen, INT, 0, 9, NULL) \
  X(T, pcie_width, INT, 0, 32, NULL) \
  X(T, rdma, WORD, 0, 0, "yes|no") \
  X(T, gdr, WORD, 0, 0, "yes|no|unknown") \
  X(T, source, STR, 0, 0, NULL)

/* data/power-clock.tsv: the SM clock sustained under a power limit, per
 * architecture (plan/power.c) */
#define GR_POWER_CLOCK_COLS(X, T) \
  X(T, arch, STR, 0, 0, NULL) \
  X(T, static_share, NUM, 0, 0.9, NULL) \
  X(T, floor_clock_share, NUM, 0.1, 1, NULL) \
  X(T, source, STR, 0, 0, NULL)

/* data/power-gpus.tsv: GPU board power, power-limit range and transient peaks (analysis/power.c) */
#define GR_POWER_GPUS_COLS(X, T) \
  X(T, model, STR, 0, 0, NULL) \
  X(T, board_w, INT, 1, 5000, NULL) \
  X(T, limit_min_w, INT, 1, 5000, "-") \
  X(T, limit_max_w, INT, 1, 5000, "-") \
  X(T, peak_w, INT, 1, 20000, "-") \
  X(T, window_us, INT, 1, 1e7, "-") \
  X(T, connectors, STR, 0, 0, NULL) \
  X(T, source, STR, 0, 0, NULL)

/* data/power-psu.tsv: PSU efficiency by 80 PLUS level at 20/50/100% load (analysis/power.c) */
#define GR_POWER_PSU_COLS(X, T) \
  X(T, level, WORD, 0, 0, "standard|bronze|silver|gold|platinum|titanium") \
  X(T, input, INT, 100, 240, NULL) \
  X(T, eff20, INT, 50, 100, NULL) \
  X(T, eff50, INT, 50, 100, NULL) \
  X(T, eff100, INT, 50, 100, NULL) \
  X(T, source, STR, 0, 0, NULL)

/* data/power-parts.tsv: connector ratings, CPU power, fixed loads, budget rules (analysis/power.c) */
#define GR_POWER_PARTS_COLS(X, T) \
  X(T, kind, WORD, 0, 0, "connector|cpu|fixed|rule") \
  X(T, name, STR, 0, 0, NULL) \
  X(T, watts, INT, 0, 100000, "-") \
  X(T, peak_w, INT, 0, 100000, "-") \
  X(T, source, STR, 0, 0, NULL)

/* Every row table: its name in C, its file, its columns. */
#define GR_ROW_TABLES(X) \
  X(cpu_interconnect, "cpu-interconnect.tsv", GR_CPU_INTERCONNECT_COLS) \
  X(cpu_memory, "cpu-memory.tsv", GR_CPU_MEMORY_COLS) \
  X(driver_issues, "driver-issues.tsv", GR_DRIVER_ISSUES_COLS) \
  X(xid, "xid.tsv", GR_XID_COLS) \
  X(models, "models.tsv", GR_MODELS_COLS) \
  X(quant, "quant.tsv", GR_QUANT_COLS) \
  X(engines, "engines.tsv", GR_ENGINES_COLS) \
  X(diffusion, "diffusion.tsv", GR_DIFFUSION_COLS) \
  X(nics, "nics.tsv", GR_NICS_COLS) \
  X(power_clock, "power-clock.tsv", GR_POWER_CLOCK_COLS) \
  X(power_gpus, "power-gpus.tsv", GR_POWER_GPUS_COLS) \
  X(power_psu, "power-psu.tsv", GR_POWER_PSU_COLS) \
  X(power_parts, "power-parts.tsv", GR_POWER_PARTS_COLS)

#define GR_CTYPE_STR const char *
#define GR_CTYPE_WORD const char *
#define GR_CTYPE_INT long
#define GR_CTYPE_NUM double
#define GR_CTYPE_BOOL bool
#define GR_ROW_FIELD(T, name, kind, lo, hi, words) GR_CTYPE_##kind name;

/* struct gr_ID_row (the fields, and the row's line in its file, for
 * messages about it), struct gr_ID_rows (the rows, their count and the
 * file's path), and gr_ID_rows(), which loads the table on first use. */
#define GR_ROW_TABLE_DECL(id, path, COLS) \
  struct gr_##id##_row { \
    COLS(GR_ROW_FIELD, id) \
    size_t line; \
  }; \
  struct gr_##id##_rows { \
    const struct gr_##id##_row *v; \
    size_t n; \
    const char *file; \
  }; \
  const struct gr_##id##_rows *gr_##id##_rows(void);
GR_ROW_TABLES(GR_ROW_TABLE_DECL)
#undef GR_ROW_TABLE_DECL

#endif
