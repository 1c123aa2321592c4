/* Inside gpurig bench's vendor-neutral side: what the driver (gpu/bench.c:
 * which tests run, in what order, and their samples), the all-reduce tests
 * (gpu/bench_allreduce.c) and the limits (gpu/bench_limits.c: what each
 * result is held to, and the findings) share. Not for use outside gpu/bench*.c. */
#ifndef GPURIG_BENCH_INTERNAL_H
#define GPURIG_BENCH_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "gpu/bench.h"
#include "gpu/bench_backend.h"

#define MIB ((size_t)1 << 20)
#define LOCAL_MIN_BYTES (256 * MIB) /* within-GPU copies: larger than any GPU's L2 (an H200 has 60 MB) */
#define LOCAL_MIN_LOOPS 8           /* within-GPU copies per run: see host_tests */
#define LATENCY_BYTES 16
#define LATENCY_LOOPS 100
#define CHASE_MIN_BYTES (4 * MIB) /* a pointer chase spans at least this: 32768 lines, 6 runs of 5000 hops */
/* The planning pass's costs (plan_copy): a run's fixed cost beside its
 * bytes (spin kernel, events, the compare kernel and its 20-byte read-back),
 * a 16-byte copy's issue and completion, one pointer-chase load, one
 * all-reduce's latency, and the rate assumed where nothing is known. */
#define PLAN_RUN_S 300e-6
#define PLAN_SMALL_COPY_S 10e-6
#define PLAN_CHASE_RUN_S (5000 * 1e-6)
#define PLAN_AR_LATENCY_S 30e-6
#define PLAN_UNKNOWN_GBPS 10.0
#define PLAN_CPU_CHECK_GBPS 8.0 /* the CPU compares a host destination (a GPU destination: the compare kernel) */

struct run {
  const struct gr_bench_backend *be;
  void *st;
  const struct gr_bench_config *cfg;
  const struct gr_bench_links *links;
  struct gr_bench_report *rep;
  size_t done, total;        /* progress */
  double t0;
  bool bar_shown;
  bool planning;             /* the planning pass: tests are counted and costed, none runs */
  double expect_s;           /* what the planned tests should take */
};

/* bench.c: the driver */
int cmp_double(const void *a, const void *b);
void progress(struct run *r, const char *what);
bool involves_lost(const struct run *r, int src, int dst);

/* bench_allreduce.c: the all-reduce tests */
size_t min_free(struct run *r, int n);
double plan_allreduce(struct run *r, int n);
void allreduce_tests(struct run *r, int n);

/* bench_limits.c: limits, floors and findings */
void finding(struct gr_bench_report *rep, enum gr_sev sev, const char *id, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
const char *gpu_label(const struct gr_bench_report *rep, int g, char *buf, size_t cap);
void set_limits(struct run *r, struct gr_bench_result *res);
void limits_host(struct run *r, struct gr_bench_result *res, int g);
void limits_aggregate(struct run *r, struct gr_bench_result *sum, const int *members, int m);
void aggregate_finding(struct run *r, const struct gr_bench_result *sum, const int *members, int m);
void check_results(struct run *r);

#endif
