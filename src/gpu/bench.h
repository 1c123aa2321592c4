/* gpurig bench: measures what the wiring promises, with nvbandwidth's method
 * (docs/bench.md), and holds every figure against the link's limit, NCCL's
 * effective figure and the topology model's prediction.
 *
 * Two halves: a measurement backend (gpu/bench_backend.h; one per vendor,
 * e.g. backends/nvidia/cuda_bench.c over libcuda + libnccl, opened at run
 * time) that times one copy or all-reduce at a time, and the vendor-neutral
 * driver here that plans the tests, takes samples, computes medians and
 * spreads, and turns results into findings. The report owns all its memory:
 * free it with gr_bench_report_free. */
#ifndef GPURIG_BENCH_H
#define GPURIG_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "analysis/analysis.h"
#include "analysis/machine.h"
#include "analysis/predict.h"
#include "base/util.h"
#include "gpu/bench_backend.h"
#include "model/finding.h"
#include "model/topo.h"


/* The smallest all-reduce sweep: a largest size under this is not run. */
#define GR_BENCH_AR_MIN_BYTES ((size_t)64 << 10)
/* Copy sizes: whole 16-byte words (the SM copy kernel's unit), at least
 * 4 KiB (below it a copy times only its own latency, which the 16-byte
 * latency test measures anyway). */
#define GR_BENCH_COPY_ALIGN 16
#define GR_BENCH_COPY_MIN_BYTES ((size_t)4 << 10)
/* An endpoint of an aggregate's summary row: every GPU measured at once. */
#define GR_BENCH_ALL (-2)

struct gr_bench_config {
  bool quick;            /* --quick: under 10 s */
  size_t bytes;          /* copy size; 0 = default for the mode */
  size_t local_bytes;    /* within-GPU copy size: bytes, raised to 256 MiB where free memory allows (set by the
                            run): a smaller copy is held in L2 and measures the cache, not the memory */
  int samples;           /* timed runs per test (median of these) */
  int loops;             /* copies per run */
  int warmup;            /* untimed runs first */
  size_t ar_max_bytes;   /* largest all-reduce */
  bool sm;               /* also the SM copy kernel */
  bool progress;         /* progress bar on stderr */
  bool like_nvbandwidth; /* --like nvbandwidth: its sizes and repetitions, and its test names printed */
  int ar_soak;           /* --allreduce-iters: all-reduces per size each timed alone (soak); 0 off */
  int warmup_copies;     /* untimed copies queued before each run's start event (nvbandwidth's WARMUP_COUNT) */
  bool bidir_read;       /* also the GPU pairs read both ways at once (not with --quick) */
  FILE *notice;          /* where the plan (tests, expected duration) is said before the first test; NULL none */
};
void gr_bench_config_defaults(struct gr_bench_config *c, bool quick);
/* nvbandwidth's sizes and repetitions on top of the defaults: 512 MiB copies
 * (capped by free memory as the default is), 16 per run, the median of 3
 * runs, SM copies too; sets like_nvbandwidth. */
void gr_bench_config_like_nvbandwidth(struct gr_bench_config *c);

enum gr_bench_status { GR_BS_OK, GR_BS_SKIPPED, GR_BS_ERROR, GR_BS_CORRUPT, GR_BS_LOST };

struct gr_bench_result {
  enum gr_bench_kind kind;
  enum gr_engine engine;
  int src, dst;
  enum gr_bench_status status;
  char *note;              /* why skipped, the error, or the corruption; NULL if none */
  bool via_host;
  int nsamples;
  double samples[GR_BENCH_MAX_SAMPLES]; /* GB/s, microseconds for latency, ns per load for chase */
  double median, min, max, spread_pct;  /* spread = (max - min) / median */
  double reverse_median;   /* bidirectional: the other direction, GB/s */
  double limit_gbps;       /* theoretical per direction of the narrowest link, 0 unknown */
  double nccl_gbps;        /* NCCL's figure for that link, 0 unknown */
  double predicted_gbps;   /* the topology model's prediction, 0 none */
  double floor_gbps;       /* below this it is a finding, 0 no rule */
  char link[64];           /* the limit in words: "Gen4 x16", "Gen4 x8 (link runs below its Gen4 x16)" */
  /* Aggregates (GR_BK_H2D_ALL, GR_BK_D2H_ALL): the summary row has src or dst
   * GR_BENCH_ALL, median = total bytes / the longest GPU's time (the common
   * window), limit_gbps = GPUs x the smallest share the topology gives one
   * GPU when all are busy; each GPU's own row (src or dst that GPU) keeps
   * its figure in the same runs. */
  int at_once;             /* GPUs measured at once (summary row) */
  double sum_rates_gbps;   /* the sum of each GPU's own rate, each over its own time (nvbandwidth's SUM line) */
  double alone_gbps;       /* GPUs x the slowest GPU's figure measured alone: what independent links give */
  double own_limits_gbps;  /* the sum of each GPU's own host-link limit */
  char shared[160];        /* the shared link that binds, in words; empty when none does */
  long mismatched_words;   /* GR_BS_CORRUPT: 32-bit words wrong in the destination(s) of the failed run */
};

/* The soak at one size (--allreduce-iters): every iteration timed alone. */
#define GR_AR_SLOWEST 5         /* slowest iterations kept per size */
#define GR_AR_STALL_FACTOR 10.0 /* a stall: over this many times the size's p50 ... */
#define GR_AR_STALL_MIN_US 50.0 /* ... and at least this much over it (host noise at the smallest sizes) */
struct gr_ar_slow {
  int index;           /* iteration of this size, from 0 */
  double us;           /* its time */
  double at_s;         /* all-reduce time of the soak before it, seconds (host gaps not counted) */
};
struct gr_ar_soak {
  int iters;
  double p50_us, p99_us, max_us; /* nearest-rank percentiles */
  int nslow;
  struct gr_ar_slow slow[GR_AR_SLOWEST]; /* slowest first */
  int stalls;                    /* iterations over the stall rule */
};

/* One connection of the collective library (NCCL's channel lines). */
struct gr_ar_link {
  int from, to;        /* GPU indices (ranks of this process's communicator) */
  char via[48];        /* in the library's words: "P2P/IPC", "SHM/direct/direct", "NET/IB/0" */
};

struct gr_ar_row {
  size_t bytes;
  double time_us, algbw_gbps, busbw_gbps; /* out of place, CUDA events (the slowest GPU's) */
  long wrong;
  double host_us;      /* out of place, host clock as nccl-tests: synchronised start to every stream done */
  double ip_time_us, ip_algbw_gbps, ip_busbw_gbps, ip_host_us; /* in place, the same */
  long ip_wrong;
  int iters, warmup;   /* timed and untimed all-reduces, per placement */
  struct gr_ar_soak *soak; /* --allreduce-iters, else NULL; the report owns it */
};

/* One GPU as the benchmark saw it, joined to the topology. */
struct gr_bench_gpu {
  char busid[32];
  int topo_gpu;            /* index among the topology's GPUs, -1 not found */
  char name[96];
  bool lost;
};

struct gr_bench_report {
  struct gr_bench_config cfg;
  char backend[32], collective[48];
  size_t ngpus;
  struct gr_bench_gpu *gpus;
  struct gr_bench_result *results;
  size_t nresults;
  struct gr_ar_row *ar;
  size_t nar;
  double ar_plateau_gbps;    /* median busbw over the plateau, 0 none */
  size_t ar_plateau_from, ar_plateau_to; /* sizes of the plateau, bytes */
  bool ar_rising;            /* busbw still rising at the largest size */
  double ar_predicted_gbps, ar_limit_gbps;
  struct gr_findings findings;  /* info, warn (under a floor), fail (corrupt data, a failed copy, a lost GPU) */
  double wall_seconds;
  struct gr_ar_link *ar_links; /* how the collective library connected the GPUs; NULL unknown */
  size_t nar_links;
  char *ar_links_note;       /* why they are unknown, NULL when known or not asked */
  int ar_stalls;             /* soak iterations over the stall rule, all sizes */
  size_t planned_tests;      /* tests the run planned (copies, chases, aggregates) */
  double expected_seconds;   /* what they and the all-reduce sweep should take on these links, from the
                                predicted rates (the limit where none, 10 GB/s where nothing is known) */
};

/* Link and prediction facts the driver holds results against; filled from
 * the topology when the GPU is in it, else from what the GPU reports. */
struct gr_bench_links {
  const struct gr_topo *t;         /* may be NULL */
  const struct gr_analysis *a;     /* NULL when t is */
  const struct gr_prediction *p;   /* NULL when t is */
  /* per bench GPU, used when the topology lacks it: max gen and width, and
   * the width the link trains to now (0 unknown; width does not drop at idle) */
  const int *gpu_gen, *gpu_width, *gpu_cur_width;
  const double *mem_bw_gbps;       /* per bench GPU, catalog figure, 0 unknown */
};

/* Opens the first vendor whose measurement backend starts (*be, *state; the
 * caller ends it with be->shutdown(state)), in gr_vendors[]'s order: NVIDIA,
 * then AMD. One vendor a run: another vendor's GPUs also present are named
 * on stderr with the variable that hides the first's (be->hide_env). -1 with
 * err (GR_EXIT_CANNOT_RUN) saying, per vendor, what is missing. */
int gr_bench_open(const struct gr_bench_backend **be, void **state, struct gr_err *err);

/* A vendor's ("nvidia", "amd": struct gr_vendor's name) compute runtime
 * and collective library versions as its measurement backend reads them:
 * NVIDIA's CUDA driver and NCCL (cuDriverGetVersion, ncclGetVersion), AMD's
 * HIP runtime with its driver version and RCCL (hipRuntimeGetVersion,
 * hipDriverGetVersion, ncclGetVersion); no GPU is used. Each present with
 * its version, or absent; both unknown when no backend of that vendor can
 * tell. */
void gr_bench_versions(const char *vendor, struct gr_lib_version *runtime, struct gr_lib_version *collective);

/* Per measured GPU, what the vendor's facts backend (gpu/gpu.h) reports:
 * max link generation and width, the width it trains to now, the catalog's
 * memory bandwidth; 0 unknown. Used where the topology lacks the GPU. The
 * arrays are the struct's: free with gr_bench_facts_free. */
struct gr_bench_facts {
  int *gen, *width, *cur_width;
  double *mem_bw;
};
void gr_bench_facts_read(const struct gr_bench_backend *be, void *state, struct gr_bench_facts *f);
void gr_bench_facts_free(struct gr_bench_facts *f);

/* The links to hold results against: a machine (NULL: none) and the facts,
 * which must outlive l. */
void gr_bench_links_set(struct gr_bench_links *l, const struct gr_machine *m, const struct gr_bench_facts *f);

/* Runs the whole benchmark on an initialised backend. Returns 0 (the
 * report then holds results and findings, some maybe failures), or -1 with
 * err when nothing could be measured. */
int gr_bench_run(const struct gr_bench_backend *be, void *state, const struct gr_bench_config *cfg,
                 const struct gr_bench_links *links, struct gr_bench_report *rep, struct gr_err *err);
void gr_bench_report_free(struct gr_bench_report *rep);

/* Statistics over n samples (exposed for tests): median, min, max, spread. */
void gr_bench_stats(const double *v, int n, double *median, double *min, double *max, double *spread_pct);
/* The nccl-tests bus bandwidth factor for an all-reduce over n ranks: 2(n-1)/n. */
double gr_allreduce_busbw_factor(int n);
/* Finds the plateau of an all-reduce sweep: the largest sizes whose busbw is
 * within tolerance of the best; sets rep's plateau fields. */
void gr_bench_plateau(struct gr_bench_report *rep, double tolerance);
/* A soak's figures from n iterations' seconds (order as run): p50, p99,
 * max, the GR_AR_SLOWEST slowest with their index and the time summed
 * before them from start_s, and the stalls (over GR_AR_STALL_FACTOR x p50
 * and GR_AR_STALL_MIN_US over it). Returns start_s plus all n. */
double gr_ar_soak_stats(const double *seconds, int n, double start_s, struct gr_ar_soak *out);

const char *gr_bench_kind_name(enum gr_bench_kind k);   /* "h2d", "p2p_bidir", ... */
const char *gr_bench_kind_title(enum gr_bench_kind k);  /* "host -> GPU" */
const char *gr_engine_name(enum gr_engine e);           /* "ce", "sm" */
const char *gr_bench_status_name(enum gr_bench_status s);
/* "GPU3", or "host" */
const char *gr_bench_endpoint(int e, char *buf, size_t cap);

#endif
