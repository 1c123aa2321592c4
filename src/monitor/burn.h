/* Burn-in: load the GPUs and the bus the way training does, watch every
 * GPU and PCIe link with the sampler meanwhile, and give each GPU and each
 * link a verdict with its reason and its physical place.
 *
 * Loads (the measurement backend, gpu/bench_backend.h): matrix products on
 * every GPU at once (fp16 in, fp32 out, each checked), host<->GPU copies
 * in both directions on every GPU at once (ZeRO-3's gathers and offloads),
 * peer copies between disjoint pairs where P2P works, and an all-reduce
 * loop timed one iteration at a time (an iteration over stall_factor x the
 * median is a stall). Every copy is verified. Patterns: all GPUs, one more
 * GPU each step (staggered: the power-supply question), one GPU at a time,
 * every pair of GPUs in turn, or a subset.
 *
 * Verdicts are findings (model/finding.h): pass (ok), warn, fail, one per
 * GPU, per link and for the all-reduce, with the rules of docs/burn.md.
 *
 * Ownership: gr_burn_run fills a report the caller frees with
 * gr_burn_report_free; the machine, GPUs and sampler it was given must
 * outlive the run, not the report. */
#ifndef GPURIG_BURN_H
#define GPURIG_BURN_H

#include <stdbool.h>
#include <stddef.h>

#include "gpu/bench_backend.h"
#include "model/finding.h"
#include "monitor/sampler.h"

enum gr_burn_load { GR_LOAD_PCIE = 1 << 0, GR_LOAD_P2P = 1 << 1, GR_LOAD_ALLREDUCE = 1 << 2, GR_LOAD_GEMM = 1 << 3 };
enum gr_burn_pattern { GR_PAT_ALL, GR_PAT_STAGGERED, GR_PAT_PER_GPU, GR_PAT_PAIRS };

struct gr_burn_opts {
  unsigned loads;            /* enum gr_burn_load bits */
  enum gr_burn_pattern pattern;
  unsigned long long gpus;   /* bit i: backend GPU i takes part; 0: all */
  double duration_s;
  double interval_s;         /* the sampler's */
  double stall_factor;       /* an all-reduce iteration over this x the median is a stall */
  size_t copy_bytes;         /* per copy and per all-reduce (cut to 10 % of a GPU's free memory over 4 buffers) */
  /* Called after every sample (progress on a terminal); may be NULL. */
  void (*progress)(void *ctx, const struct gr_sampler *s, double elapsed_s, double duration_s);
  void *progress_ctx;
  /* Polled between rounds: true ends the run early with a partial verdict. */
  bool (*stop)(void);
};

/* One GPU's run. Indices are the sampler's (the facts backend's); cuda is
 * the measurement backend's index of the same GPU (-1: not found there). */
struct gr_burn_gpu {
  bool selected, lost;
  int cuda;
  double joined_s;           /* when it was first loaded (staggered: its step), -1 never */
  double lost_s;             /* when it stopped answering, -1 never */
  double host_bytes, host_seconds; /* host<->GPU copies: bytes moved and time, both directions */
  double p2p_bytes, p2p_seconds;
  double gemm_flops, gemm_seconds; /* matrix products: floating-point operations done and their time */
  double tflops_last;        /* the last round's rate, for the progress line */
  long gemm_wrong;           /* products that came out wrong */
  char gemm_wrong_text[96];
  long corrupt;              /* copies whose data arrived wrong */
  char corrupt_text[160];
  double throttle_s[GR_THR_NBITS]; /* seconds with each reason while loaded */
  struct gr_metric temp_max, power_max, sm_clock_min;
  double replay_start, replay_end; /* the PCIe replay counter (valid when replay_ok) */
  bool replay_ok;
};

struct gr_burn_stall {
  double at_s, seconds, median_s;
  double mono;               /* CLOCK_MONOTONIC when it ended, for charts */
  char seen[224];            /* what the sampler reported nearest to it, "" nothing */
};

struct gr_burn_report {
  double run_s;              /* how long it ran */
  bool interrupted;          /* stopped early (SIGINT): the verdicts cover what ran */
  unsigned loads_run;        /* the loads that ran (a load the machine cannot do is left out, said in notes) */
  struct gr_burn_gpu *gpu;   /* one per sampler GPU */
  unsigned ngpu;
  double *ar_s;              /* every all-reduce iteration's time, in order */
  size_t nar;
  double ar_p50, ar_p99, ar_max;
  struct gr_burn_stall *stall;
  size_t nstall;
  char ar_note[256];         /* why the all-reduce did not run, "" it did */
  char gemm_note[256];       /* why the GEMM load did not run, "" it did */
  int gemm_n;                /* its matrices' size (n x n), 0 not run */
  char note[512];            /* loads left out, "" none */
  struct gr_findings verdicts;
};

/* Runs the burn-in. be/state are the measurement backend, open; s the
 * sampler over the machine's GPUs (its facts backend). 0, or -1 with err
 * when nothing could be loaded (no GPU selected, the backend fails at once). */
int gr_burn_run(const struct gr_bench_backend *be, void *state, struct gr_sampler *s, const struct gr_burn_opts *o,
                struct gr_burn_report *r, struct gr_err *err);
void gr_burn_report_free(struct gr_burn_report *r);

#endif
