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
 * GPU, per link and for the all-reduce, with the rules of docs/burn.md. A
 * load that could not start or stopped mid-run is a verdict too, and so is
 * a run stopped by a signal (burn.interrupted, warn): a partial burn-in
 * never passes.
 *
 * Memory does not grow with the duration: the all-reduce's times go into a
 * fixed window (the stall median) and a histogram (the percentiles), the
 * events the verdicts need are folded in as each sample finds them, and the
 * sampler's ring is the caller's fixed size (the whole timeline is the
 * caller's streamed log, written from the progress call).
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

struct gr_burn_report;

struct gr_burn_opts {
  unsigned loads;            /* enum gr_burn_load bits */
  enum gr_burn_pattern pattern;
  unsigned long long gpus;   /* bit i: backend GPU i takes part; 0: all */
  double duration_s;
  double interval_s;         /* the sampler's */
  double stall_factor;       /* an all-reduce iteration over this x the median is a stall */
  size_t copy_bytes;         /* per copy and per all-reduce (cut to 10 % of a GPU's free memory over 4 buffers) */
  /* Called after every sample, with the report so far (the progress line
   * on a terminal, a line of the streamed log); may be NULL. */
  void (*progress)(void *ctx, const struct gr_sampler *s, const struct gr_burn_report *r, double elapsed_s,
                   double duration_s);
  void *progress_ctx;
  /* Polled between loads: the signal that asked for a stop (ends the run
   * early with a partial verdict), 0 go on. May be NULL. */
  int (*stop)(void);
  /* The power budget the GPUs' measured draw is held against (burn.power):
   * the PSUs' watts (--psu, or a rig's psu lines together), 0 none; what
   * names it ("--psu 1600", "rig R: psu gw"), and what else those PSUs
   * carry (the rig's CPUs at TDP), 0 unknown or nothing. */
  double psu_w;
  const char *psu_what;
  double psu_other_w;
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
  double power_sum;          /* its draws summed over power_n samples while loaded: the mean */
  unsigned power_n;
  double replay_start, replay_end; /* the PCIe replay counter (valid when replay_ok) */
  bool replay_ok;
  double replay_before;            /* its last reading before the GPU joined the load (valid when replay_seen) */
  bool replay_seen;
  bool replay_failing;       /* the replays are over the allowance so far (its events are failures) */
  /* what the sampler saw while this GPU ran matrix products */
  unsigned gemm_samples;     /* samples with its utilisation (the idle check needs one) */
  double gemm_util_max, gemm_clock_max, gemm_power_max, gemm_power_limit;
  unsigned gemm_thr_bits;    /* throttle reasons seen then (enum gr_throttle bits) */
  int gemm_link_gen_min;     /* the PCIe generation it ran at then, 0 unknown */
  /* Xids under load, folded in as each sample finds them */
  long xids;
  enum gr_sev xid_sev;
  char xid_text[224];        /* the first */
};

/* A watched link (the sampler's order): the width it trained to under load
 * and whether its AER counts are over the allowance so far. */
struct gr_burn_link {
  int width;                 /* the narrowest either end ran at, 0 unknown */
  bool failing;
};

struct gr_burn_stall {
  double at_s, seconds, median_s;
  double mono;               /* CLOCK_MONOTONIC when it ended, for charts */
  char seen[224];            /* what the sampler reported nearest to it, "" nothing */
};

struct gr_burn_report {
  double run_s;              /* how long it ran */
  bool interrupted;          /* stopped early by a signal: the verdicts cover what ran */
  int stop_signal;           /* which (SIGINT, SIGTERM, SIGHUP), 0 none */
  unsigned loads_run;        /* the loads that ran (a load that could not is a verdict) */
  struct gr_burn_gpu *gpu;   /* one per sampler GPU */
  unsigned ngpu;
  struct gr_burn_link *link; /* one per sampler link */
  size_t nlink;
  size_t nar;                /* all-reduce iterations */
  double ar_p50, ar_p99, ar_max; /* p50 and p99 from a histogram of 2.5 % bins, max exact */
  struct gr_burn_stall *stall; /* the first GR_BURN_STALLS_KEPT */
  size_t nstall;             /* all of them */
  int gemm_n;                /* its matrices' size (n x n), 0 not run */
  char note[512];            /* the copies' size when memory bounds it, "" none */
  /* every GPU's draw summed per sample (a sample where one GPU does not
   * report is left out: the sum would be short): the highest and the mean */
  double power_total_max, power_total_sum;
  unsigned power_total_n;
  double first_problem_s;    /* the first warning or failure the sampler saw, -1 none */
  char first_problem[224];
  struct gr_findings verdicts;
};

enum { GR_BURN_STALLS_KEPT = 64 };

/* Runs the burn-in. be/state are the measurement backend, open; s the
 * sampler over the machine's GPUs (its facts backend). 0, or -1 with err
 * when nothing could be loaded (no GPU selected, the backend fails at once). */
int gr_burn_run(const struct gr_bench_backend *be, void *state, struct gr_sampler *s, const struct gr_burn_opts *o,
                struct gr_burn_report *r, struct gr_err *err);
void gr_burn_report_free(struct gr_burn_report *r);
/* The severity burn gives a sampler event: fail for the AER errors of a link
 * or the replays of a GPU that are over the allowance (so far during the
 * run, for the final verdict after it), the sampler's own otherwise. */
enum gr_sev gr_burn_event_sev(const struct gr_burn_report *r, const struct gr_mon_event *e);

#endif
