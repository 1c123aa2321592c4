/* Burn-in's state during a run, shared by its loads (monitor/burn.c) and
 * its verdicts (monitor/burn_verdict.c); nothing outside monitor/burn*
 * includes it. */
#ifndef GPURIG_BURN_RUN_H
#define GPURIG_BURN_RUN_H

#include <pthread.h>
#include <stdatomic.h>

#include "monitor/burn.h"

enum {
  AR_WINDOW = 256, /* the all-reduce iterations the stall median is taken over */
  AR_BINS = 480,   /* the histogram: bin k holds times from AR_BIN0 x AR_STEP^k, up to hours */
};
#define AR_BIN0 1e-6
#define AR_STEP 1.05

/* A load that stopped mid-run without a GPU lost to explain it. */
struct load_stop {
  bool stopped;
  double at_s;
  char why[200];
};

struct run {
  const struct gr_bench_backend *be;
  void *st;
  struct gr_sampler *s;
  const struct gr_burn_opts *o;
  struct gr_burn_report *r;
  double t0;             /* CLOCK_MONOTONIC at the start */
  unsigned nsel;         /* GPUs selected */
  unsigned *order;       /* the selected GPUs, in index order */
  bool ar_ready;
  bool round_done;       /* every load has run once: only then may the duration end the run */
  /* The sampler runs on its own thread while the loads run on the caller's.
   * mu guards what both touch: each GPU's figures, lost and joined_s,
   * gemm_busy, the links' and GPUs' failing flags (the log reads them). The
   * sampler's events are read under gr_sampler_lock by the loads' thread. */
  pthread_mutex_t mu;
  atomic_bool sampler_quit, sampler_failed;
  struct gr_err sampler_err;
  double last_sample;    /* CLOCK_MONOTONIC of the last step (the sampler thread's while it runs) */
  size_t copy_bytes;     /* per copy, within the memory bound */
  unsigned long ev_seen; /* the sampler's events folded in so far */
  double ar_win[AR_WINDOW];
  size_t ar_win_n;
  unsigned ar_hist[AR_BINS];
  bool gemm_busy[64];    /* sampler GPU index: it ran matrix products since the last sample */
  double gemm_iter_s;    /* the last round's seconds per matrix product (the slowest GPU's) */
  double others_s;       /* the last round's seconds in the other loads (copies, all-reduce) */
  struct load_stop copies, gemm, allreduce;
  char ar_open_fail[256], gemm_open_fail[256], ar_skipped[200]; /* why a load did not start, "" it did */
};

double burn_now_s(void);
/* The generation and width link i is judged by: its maximum generation (a
 * link slows down at idle by design) and the width it trained to. */
void burn_link_judged(const struct run *x, size_t i, int *gen, int *width);
/* Refreshes each link's and GPU's failing flag for the time run so far. */
void burn_judge_running(struct run *x, double run_s);
/* Every verdict of a finished (or stopped) run. */
void burn_verdicts(struct run *x);

#endif
