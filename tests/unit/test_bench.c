/* gpurig bench's vendor-neutral driver (src/gpu/bench.c) with an in-test
 * measurement backend: statistics, the plateau, limits from the topology
 * (tests/data/trees/epyc-riser), thresholds and findings, and the error
 * paths (corruption, a failed copy, a GPU lost mid-run) without any driver.
 * The dlopen paths are tested against the stand-in libraries by the CLI
 * golden tests. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "backends/ccl/nccl_log.h"
#include "gpu/bench.h"
#include "gpu/bench_mpi.h"
#include "facts/catalog.h"
#include "load/loaders.h"

/* ------------------------------------------------------- fake backend */

#define NG 4
struct fake {
  double h2d[NG], d2h[NG], local, peer, staged, ar_busbw;
  bool can_peer[NG][NG];
  int corrupt_src, corrupt_dst;   /* -2 none */
  int error_src, error_dst;       /* -2 none */
  int lose_gpu, lose_after;       /* -1 none; the GPU fails on its lose_after-th copy */
  int calls[NG];
  bool lost[NG];
  bool no_nccl;
  char err[128];
  double pull_factor;   /* GPU -> GPU copies issued by the destination (spec.read) run at this x the rate; 0: 1 */
  int reads;            /* copies asked with spec.read */
  double host_ceiling;  /* copy_many: host copies at once share this many GB/s per direction; 0: none */
  int spin_src, spin_dst;         /* -2 none: this test's timed runs report a spin timeout */
  int spin_every;                 /* every spin_every-th run of it does (1: all) */
  int spin_runs;
  int warmup_seen[GR_BK_COUNT];   /* the largest spec.warmup asked per kind, -1 never asked */
  int stall_iter;                 /* soak: iteration stall_iter - 1 of the first soaked size takes 50x; 0 none */
  int soaks;                      /* soak calls so far */
};

static const char *const busids[NG] = {"0000:01:00.0", "0000:02:00.0", "0000:41:00.0", "0000:44:00.0"};

static int f_init(void **st, char *why, size_t cap)
{
  (void)st, (void)why, (void)cap;
  return 0;
}
static void f_shutdown(void *st) { (void)st; }
static const char *f_last_error(void *st) { return ((struct fake *)st)->err; }
static int f_count(void *st) { (void)st; return NG; }
static int f_busid(void *st, int d, char *buf, size_t cap)
{
  (void)st;
  snprintf(buf, cap, "%s", busids[d]);
  return 0;
}
static void f_set_numa(void *st, int d, int node) { (void)st, (void)d, (void)node; }
static bool f_can_peer(void *st, int a, int b) { return ((struct fake *)st)->can_peer[a][b]; }
static size_t f_free(void *st, int d) { (void)st, (void)d; return (size_t)256 << 20; }
static bool f_lost(void *st, int d) { return ((struct fake *)st)->lost[d]; }

static double rate(struct fake *f, int src, int dst)
{
  if (src < 0)
    return f->h2d[dst];
  if (dst < 0)
    return f->d2h[src];
  if (src == dst)
    return f->local;
  return f->can_peer[src][dst] ? f->peer : f->staged;
}

static int f_copy(void *st, const struct gr_copy_spec *s, struct gr_copy_sample *out)
{
  struct fake *f = st;
  memset(out, 0, sizeof(*out));
  int ends[2] = {s->src, s->dst};
  for (int k = 0; k < 2; k++) {
    int g = ends[k];
    if (g >= 0 && g == f->lose_gpu && ++f->calls[g] >= f->lose_after) {
      f->lost[g] = true;
      snprintf(f->err, sizeof(f->err), "cuMemcpyAsync on GPU%d: CUDA error 999 (unknown error)", g);
      return -1;
    }
  }
  if (s->src == f->error_src && s->dst == f->error_dst) {
    snprintf(f->err, sizeof(f->err), "cuMemcpyPeerAsync on GPU%d: CUDA error 1 (invalid argument)", s->src);
    return -1;
  }
  out->via_host = s->src >= 0 && s->dst >= 0 && s->src != s->dst && !f->can_peer[s->src][s->dst];
  double pull = s->read && f->pull_factor > 0 ? f->pull_factor : 1.0;
  f->reads += s->read;
  out->seconds[0] = (double)s->bytes * s->loops / (rate(f, s->src, s->dst) * pull * 1e9) + 2e-6 * s->loops;
  if (s->reverse)
    out->seconds[1] = (double)s->bytes * s->loops / (rate(f, s->dst, s->src) * pull * 1e9) + 2e-6 * s->loops;
  if (s->warmup > f->warmup_seen[s->kind])
    f->warmup_seen[s->kind] = s->warmup;
  if (s->src == f->spin_src && s->dst == f->spin_dst && s->kind == GR_BK_H2D)
    out->spin_timeout = ++f->spin_runs % f->spin_every == 0;
  if (s->src == f->corrupt_src && s->dst == f->corrupt_dst && s->bytes > 4097) {
    out->corrupt = true;
    out->bad_offset = 4097;
    out->expected = 0x5a;
    out->got = 0x5b;
  }
  return 0;
}

static int f_ar_open(void *st, size_t max, char *why, size_t cap)
{
  struct fake *f = st;
  (void)max;
  if (f->no_nccl) {
    snprintf(why, cap, "libnccl.so.2: cannot open shared object file: No such file or directory");
    return -1;
  }
  return 0;
}

static int f_ar(void *st, const struct gr_ar_spec *spec, struct gr_ar_sample *out)
{
  struct fake *f = st;
  size_t bytes = spec->bytes;
  /* a latency term makes small sizes slow, as on real links */
  memset(out, 0, sizeof(*out));
  out->seconds = 20e-6 + gr_allreduce_busbw_factor(NG) * (double)bytes / (f->ar_busbw * 1e9);
  out->host_seconds = out->seconds + 3e-6; /* host launch time on top */
  for (int k = 0; spec->iter_seconds && k < spec->iters; k++)
    spec->iter_seconds[k] = out->seconds * (f->soaks == 0 && k == f->stall_iter - 1 ? 50 : 1);
  f->soaks += spec->iter_seconds != NULL;
  return 0;
}

static const char *f_name(void *st) { (void)st; return "NCCL 9.9.9"; }

/* Copies at once: each as f_copy alone, then, with host_ceiling, every
 * one stretched so that together they move no more than the ceiling (a
 * root complex the topology does not show). */
static int f_copy_many(void *st, const struct gr_copy_spec *specs, int n, struct gr_copy_sample *out)
{
  struct fake *f = st;
  double bytes = 0, longest = 0;
  for (int i = 0; i < n; i++) {
    if (f_copy(st, &specs[i], &out[i]) != 0)
      return -1;
    bytes += (double)specs[i].bytes * specs[i].loops;
    longest = out[i].seconds[0] > longest ? out[i].seconds[0] : longest;
  }
  double least = f->host_ceiling > 0 ? bytes / (f->host_ceiling * 1e9) : 0;
  for (int i = 0; i < n && least > longest; i++)
    out[i].seconds[0] = least;
  return 0;
}

static const struct gr_bench_backend fake_backend = {
    .name = "fake", .init = f_init, .shutdown = f_shutdown, .last_error = f_last_error,
    .device_count = f_count, .device_busid = f_busid, .set_numa = f_set_numa, .can_peer = f_can_peer,
    .free_bytes = f_free, .copy = f_copy, .device_lost = f_lost, .allreduce_open = f_ar_open,
    .allreduce = f_ar, .collective_name = f_name, .collective = "NCCL",
};
/* the same with copies at once (the aggregate tests) */
static const struct gr_bench_backend fake_gang_backend = {
    .name = "fake", .init = f_init, .shutdown = f_shutdown, .last_error = f_last_error,
    .device_count = f_count, .device_busid = f_busid, .set_numa = f_set_numa, .can_peer = f_can_peer,
    .free_bytes = f_free, .copy = f_copy, .copy_many = f_copy_many, .device_lost = f_lost,
    .allreduce_open = f_ar_open, .allreduce = f_ar, .collective_name = f_name, .collective = "NCCL",
};

/* Like the stand-in library's default: GPU1's link trains at x8. */
static void fake_default(struct fake *f)
{
  memset(f, 0, sizeof(*f));
  for (int g = 0; g < NG; g++) {
    f->h2d[g] = 24.0;
    f->d2h[g] = 25.0;
  }
  f->h2d[1] = 12.0;
  f->d2h[1] = 12.5;
  f->local = 400;
  f->peer = 22;
  f->staged = 12;
  f->ar_busbw = 18;
  f->can_peer[0][1] = f->can_peer[1][0] = f->can_peer[2][3] = f->can_peer[3][2] = true;
  f->corrupt_src = f->corrupt_dst = f->error_src = f->error_dst = -2;
  f->lose_gpu = -1;
  f->spin_src = f->spin_dst = -2;
  f->spin_every = 1;
  for (int k = 0; k < GR_BK_COUNT; k++)
    f->warmup_seen[k] = -1;
}

/* -------------------------------------------------------------- fixture */

struct world {
  struct gr_machine m;
  struct gr_bench_links links;
  struct gr_bench_config cfg;
  struct gr_bench_report rep;
  struct fake f;
  size_t bytes, ar_max; /* the copy size and --allreduce-max; 0: 4 MiB and 16 MiB */
  bool gang;            /* the backend runs copies at once (copy_many) */
  int ar_soak;          /* --allreduce-iters */
  bool full;            /* the default run's settings, not --quick's */
};

static void world_run(struct world *w, bool with_topology)
{
  char root[1024];
  struct gr_err err = {0};
  static int gen[NG] = {4, 4, 4, 4}, width[NG] = {16, 16, 16, 16}, cur_width[NG] = {16, 8, 16, 16};
  static double mem[NG] = {936, 936, 936, 936};
  const struct gr_bench_facts facts = {gen, width, cur_width, mem};
  memset(&w->m, 0, sizeof(w->m));
  if (with_topology) {
    snprintf(root, sizeof(root), "%s/trees/epyc-riser", getenv("GPURIG_TEST_DATA"));
    struct gr_source src = {.kind = GR_SRC_ROOT, .path = root};
    if (gr_machine_open(&src, GR_MACHINE_PREDICT, &w->m, &err) != 0)
      fail_msg("%s", err.msg);
  }
  gr_bench_links_set(&w->links, with_topology ? &w->m : NULL, &facts);
  gr_bench_config_defaults(&w->cfg, !w->full);
  w->cfg.bytes = w->bytes ? w->bytes : (size_t)4 << 20;
  w->cfg.progress = false;
  w->cfg.ar_max_bytes = w->ar_max ? w->ar_max : (size_t)16 << 20;
  w->cfg.ar_soak = w->ar_soak;
  if (gr_bench_run(w->gang ? &fake_gang_backend : &fake_backend, &w->f, &w->cfg, &w->links, &w->rep, &err) != 0)
    fail_msg("%s", err.msg);
}

static void world_free(struct world *w)
{
  gr_bench_report_free(&w->rep);
  gr_machine_close(&w->m);
}

static const struct gr_finding *finding_with(const struct gr_bench_report *r, const char *id, const char *text)
{
  for (size_t i = 0; i < r->findings.n; i++)
    if (strcmp(r->findings.v[i].id, id) == 0 && (!text || strstr(r->findings.v[i].text, text)))
      return &r->findings.v[i];
  return NULL;
}

static const struct gr_bench_result *result(const struct gr_bench_report *r, enum gr_bench_kind k, int src, int dst)
{
  for (size_t i = 0; i < r->nresults; i++)
    if (r->results[i].kind == k && r->results[i].engine == GR_ENGINE_CE && r->results[i].src == src &&
        r->results[i].dst == dst)
      return &r->results[i];
  return NULL;
}

/* ---------------------------------------------------------------- tests */

static int setup(void **state)
{
  return tu_setup_data(state);
}

static void test_stats(void **state)
{
  double med, mn, mx, sp;
  (void)state;
  gr_bench_stats((double[]){3, 1, 2}, 3, &med, &mn, &mx, &sp);
  assert_float_equal(med, 2, 1e-12);
  assert_float_equal(sp, 100, 1e-9); /* (3 - 1) / 2 */
  gr_bench_stats((double[]){10, 30, 20, 40}, 4, &med, &mn, &mx, &sp);
  assert_float_equal(med, 25, 1e-12);
  assert_float_equal(mn, 10, 1e-12);
  assert_float_equal(mx, 40, 1e-12);
  gr_bench_stats(NULL, 0, &med, &mn, &mx, &sp);
  assert_float_equal(med, 0, 0);
  assert_float_equal(gr_allreduce_busbw_factor(4), 1.5, 1e-12);
  assert_float_equal(gr_allreduce_busbw_factor(8), 1.75, 1e-12);
  assert_float_equal(gr_allreduce_busbw_factor(1), 0, 1e-12);
}

static void test_plateau(void **state)
{
  struct gr_ar_row flat[] = {{.bytes = 1 << 20, .busbw_gbps = 5}, {.bytes = 4 << 20, .busbw_gbps = 15}, {.bytes = 16 << 20, .busbw_gbps = 19.5},
                             {.bytes = 64 << 20, .busbw_gbps = 20}, {.bytes = 256 << 20, .busbw_gbps = 19.8}};
  struct gr_ar_row rising[] = {{.bytes = 1 << 20, .busbw_gbps = 5}, {.bytes = 4 << 20, .busbw_gbps = 10}, {.bytes = 16 << 20, .busbw_gbps = 16}};
  struct gr_bench_report r;
  (void)state;
  memset(&r, 0, sizeof(r));
  r.ar = flat;
  r.nar = 5;
  gr_bench_plateau(&r, 0.05);
  assert_float_equal(r.ar_plateau_gbps, 19.8, 1e-9); /* median of 19.5, 20, 19.8: never the average of all sizes */
  assert_int_equal(r.ar_plateau_from, 16 << 20);
  assert_int_equal(r.ar_plateau_to, 256 << 20);
  assert_false(r.ar_rising);
  r.ar = rising;
  r.nar = 3;
  gr_bench_plateau(&r, 0.05);
  assert_float_equal(r.ar_plateau_gbps, 16, 1e-9);
  assert_true(r.ar_rising);
}

/* The soak: nearest-rank percentiles, the slowest with index and time
 * before them, and the stall rule (over 10x p50 and 50 us over it). */
static void test_soak_stats(void **state)
{
  double t[200];
  struct gr_ar_soak k;
  (void)state;
  for (int i = 0; i < 200; i++)
    t[i] = 100e-6 + (i % 10) * 1e-6; /* 100..109 us */
  t[48] = 5e-3;   /* 50x: a stall */
  t[150] = 1.2e-3; /* 12x: a stall */
  t[7] = 900e-6;  /* 9x: slow, not a stall */
  double end = gr_ar_soak_stats(t, 200, 2.0, &k);
  assert_int_equal(k.iters, 200);
  assert_float_equal(k.p50_us, 105, 1e-6);   /* the 100th of 200 sorted (three of the 197 others left out) */
  assert_float_equal(k.p99_us, 900, 1e-6);   /* the 198th: below the two stalls */
  assert_float_equal(k.max_us, 5000, 1e-6);
  assert_int_equal(k.stalls, 2);
  assert_int_equal(k.nslow, GR_AR_SLOWEST);
  assert_int_equal(k.slow[0].index, 48);
  assert_int_equal(k.slow[1].index, 150);
  assert_int_equal(k.slow[2].index, 7);
  double before = 2.0;
  for (int i = 0; i < 48; i++)
    before += t[i];
  assert_float_equal(k.slow[0].at_s, before, 1e-12);
  assert_true(end > before + 5e-3);
  /* tiny all-reduces: 10x a 2 us p50 is host noise, not a stall, under 50 us over it */
  for (int i = 0; i < 20; i++)
    t[i] = 2e-6;
  t[3] = 40e-6;
  gr_ar_soak_stats(t, 20, 0, &k);
  assert_int_equal(k.stalls, 0);
  t[3] = 60e-6;
  gr_ar_soak_stats(t, 20, 0, &k);
  assert_int_equal(k.stalls, 1);
  assert_int_equal(k.slow[0].index, 3);
  /* fewer iterations than kept, and none */
  gr_ar_soak_stats(t, 2, 0, &k);
  assert_int_equal(k.nslow, 2);
  assert_int_equal(gr_ar_soak_stats(t, 0, 1.5, &k) == 1.5, 1);
  assert_int_equal(k.nslow, 0);
}

static void test_parse_size(void **state)
{
  size_t v;
  (void)state;
  assert_true(gr_parse_size("64K", &v) && v == 65536);
  assert_true(gr_parse_size("512MiB", &v) && v == (size_t)512 << 20);
  assert_true(gr_parse_size("1G", &v) && v == (size_t)1 << 30);
  assert_true(gr_parse_size("4096", &v) && v == 4096);
  assert_false(gr_parse_size("0", &v));
  assert_false(gr_parse_size("-1M", &v));
  assert_false(gr_parse_size("1T", &v));
  assert_false(gr_parse_size("12Mx", &v));
  assert_false(gr_parse_size("", &v));
}

/* GPU1's link trains at x8: its host copies are a finding naming it and the
 * link; the others pass. Limits and predictions come from the topology. */
static void test_limits_and_floor(void **state)
{
  struct world *w = calloc(1, sizeof(*w));
  (void)state;
  fake_default(&w->f);
  world_run(w, true);
  const struct gr_bench_result *h0 = result(&w->rep, GR_BK_H2D, GR_BENCH_HOST, 0);
  const struct gr_bench_result *h1 = result(&w->rep, GR_BK_H2D, GR_BENCH_HOST, 1);
  assert_non_null(h0);
  assert_non_null(h1);
  assert_int_equal(h0->status, GR_BS_OK);
  assert_int_equal(h0->nsamples, 3);
  assert_float_equal(h0->limit_gbps, 31.5, 0.1);       /* Gen4 x16 */
  assert_float_equal(h0->predicted_gbps, 31.5 * 0.81, 0.2);
  assert_float_equal(h0->floor_gbps, 31.5 * 0.65, 0.2);
  assert_true(h0->median > 23.5 && h0->median < 24); /* 4 MiB copies: the 2 us per copy shows */
  assert_float_equal(h1->limit_gbps, 15.75, 0.1);      /* trains at x8 */
  assert_non_null(strstr(h1->link, "capable of Gen4 x16"));
  assert_non_null(finding_with(&w->rep, "bench.host-bw", "GPU1 0000:02:00.0 host -> GPU"));
  assert_null(finding_with(&w->rep, "bench.host-bw", "GPU0 "));
  /* pairs: P2P where the driver allows it, through host memory elsewhere, never skipped */
  const struct gr_bench_result *p01 = result(&w->rep, GR_BK_P2P, 0, 1), *p02 = result(&w->rep, GR_BK_P2P, 0, 2);
  assert_int_equal(p01->status, GR_BS_OK);
  assert_false(p01->via_host);
  assert_int_equal(p02->status, GR_BS_OK);
  assert_true(p02->via_host);
  assert_non_null(finding_with(&w->rep, "bench.no-peer", "8 of 12 GPU pairs"));
  /* the all-reduce sweep reaches its plateau at the fake's 18 GB/s */
  assert_true(w->rep.nar >= 3);
  assert_float_equal(w->rep.ar_plateau_gbps, 18, 1.0); /* 20 us per call keeps it under 18 */
  assert_true(w->rep.ar_predicted_gbps > 0);
  assert_int_equal(gr_findings_exit(&w->rep.findings), GR_EXIT_WARN);
  world_free(w);
  free(w);
}

/* Without a topology, in a process where nothing was predicted before: the
 * host copies are predicted from the link the GPU reports times the
 * calibrated efficiency, never 0 (an outside review found 0.00 here when
 * the calibration table was loaded only by a prediction). */
static void test_no_topology_predicts(void **state)
{
  struct world *w = calloc(1, sizeof(*w));
  (void)state;
  fake_default(&w->f);
  w->f.no_nccl = true;
  world_run(w, false);
  const struct gr_bench_result *h0 = result(&w->rep, GR_BK_H2D, GR_BENCH_HOST, 0);
  assert_float_equal(h0->limit_gbps, 31.5, 0.1);
  assert_true(h0->predicted_gbps > 0);
  assert_float_equal(h0->predicted_gbps, h0->limit_gbps * gr_calib()->h2d_eff_gen4, 1e-9);
  world_free(w);
  free(w);
}

static void test_corruption(void **state)
{
  struct world *w = calloc(1, sizeof(*w));
  (void)state;
  fake_default(&w->f);
  w->f.corrupt_src = 1;
  w->f.corrupt_dst = 3;
  world_run(w, true);
  const struct gr_finding *f = finding_with(&w->rep, "bench.verify", "GPU1 0000:02:00.0 -> GPU3 0000:44:00.0");
  assert_non_null(f);
  assert_int_equal(f->sev, GR_SEV_FAIL);
  assert_non_null(strstr(f->text, "byte 4097"));
  assert_non_null(strstr(f->text, "through host memory"));
  assert_int_equal(result(&w->rep, GR_BK_P2P, 1, 3)->status, GR_BS_CORRUPT);
  assert_int_equal(gr_findings_exit(&w->rep.findings), GR_EXIT_FAIL);
  world_free(w);
  free(w);
}

/* A run whose spin kernel timed out is dropped with a warning; when every
 * run of a test is, the test has no figure. Bandwidth runs get 4 warm-up
 * copies, the 16-byte latency runs none. */
static void test_spin_timeout(void **state)
{
  struct world *w = calloc(1, sizeof(*w));
  (void)state;
  fake_default(&w->f);
  w->f.spin_src = GR_BENCH_HOST;
  w->f.spin_dst = 2;
  w->f.spin_every = 2; /* the warm-up run (1st) keeps; the 2nd, 4th... time out */
  w->full = true;
  world_run(w, true);
  const struct gr_bench_result *r = result(&w->rep, GR_BK_H2D, GR_BENCH_HOST, 2);
  assert_int_equal(r->status, GR_BS_OK);
  assert_int_equal(r->nsamples, w->rep.cfg.samples / 2); /* runs 2, 4, ... of 1 + samples are dropped */
  const struct gr_finding *f = finding_with(&w->rep, "bench.spin-timeout", "host -> GPU2 0000:41:00.0");
  assert_non_null(f);
  assert_int_equal(f->sev, GR_SEV_WARN);
  assert_non_null(strstr(f->text, "median of the other runs"));
  assert_int_equal(w->f.warmup_seen[GR_BK_H2D], 4);
  assert_int_equal(w->f.warmup_seen[GR_BK_P2P], 4);
  assert_int_equal(w->f.warmup_seen[GR_BK_LATENCY], 0);
  world_free(w);

  fake_default(&w->f);
  w->f.spin_src = GR_BENCH_HOST;
  w->f.spin_dst = 2;
  world_run(w, true);
  r = result(&w->rep, GR_BK_H2D, GR_BENCH_HOST, 2);
  assert_int_equal(r->status, GR_BS_ERROR);
  assert_int_equal(r->nsamples, 0);
  assert_non_null(strstr(r->note, "spin kernel timed out"));
  f = finding_with(&w->rep, "bench.spin-timeout", "host -> GPU2 0000:41:00.0");
  assert_non_null(f);
  assert_non_null(strstr(f->text, "No run is left"));
  world_free(w);
  free(w);
}

static void test_copy_error(void **state)
{
  struct world *w = calloc(1, sizeof(*w));
  (void)state;
  fake_default(&w->f);
  w->f.error_src = 0;
  w->f.error_dst = 3;
  world_run(w, true);
  assert_int_equal(result(&w->rep, GR_BK_P2P, 0, 3)->status, GR_BS_ERROR);
  assert_non_null(finding_with(&w->rep, "bench.copy-error", "GPU0 -> GPU3"));
  assert_int_equal(result(&w->rep, GR_BK_P2P, 3, 0)->status, GR_BS_OK); /* the run goes on */
  world_free(w);
  free(w);
}

static void test_gpu_lost(void **state)
{
  struct world *w = calloc(1, sizeof(*w));
  (void)state;
  fake_default(&w->f);
  w->f.lose_gpu = 2;
  w->f.lose_after = 6;
  w->f.no_nccl = true;
  world_run(w, false);
  const struct gr_finding *f = finding_with(&w->rep, "bench.gpu-lost", "GPU2 0000:41:00.0 stopped answering");
  assert_non_null(f);
  assert_non_null(strstr(f->text, "CUDA error 999"));
  assert_true(w->rep.gpus[2].lost);
  const struct gr_bench_result *later = result(&w->rep, GR_BK_P2P, 0, 2);
  assert_int_equal(later->status, GR_BS_SKIPPED);
  assert_int_equal(result(&w->rep, GR_BK_P2P, 0, 1)->status, GR_BS_OK);
  assert_non_null(finding_with(&w->rep, "bench.allreduce-note", "GPU2 stopped answering"));
  /* without a topology the limits come from the GPUs' own link reports */
  assert_float_equal(result(&w->rep, GR_BK_H2D, GR_BENCH_HOST, 0)->limit_gbps, 31.5, 0.1);
  const struct gr_bench_result *h1 = result(&w->rep, GR_BK_H2D, GR_BENCH_HOST, 1);
  assert_float_equal(h1->limit_gbps, 15.75, 0.1); /* the width the driver says it trains at */
  assert_float_equal(h1->floor_gbps, 31.5 * 0.65, 0.2);
  assert_non_null(strstr(h1->link, "capable of Gen4 x16"));
  assert_int_equal(gr_findings_exit(&w->rep.findings), GR_EXIT_FAIL);
  world_free(w);
  free(w);
}

static void test_no_nccl(void **state)
{
  struct world *w = calloc(1, sizeof(*w));
  (void)state;
  fake_default(&w->f);
  w->f.no_nccl = true;
  world_run(w, true);
  assert_int_equal(w->rep.nar, 0);
  assert_non_null(finding_with(&w->rep, "bench.allreduce-skipped", "libnccl.so.2"));
  world_free(w);
  free(w);
}

static void test_size_text(void **state)
{
  static const struct {
    size_t b;
    const char *want;
  } cases[] = {{0, "0 B"}, {16, "16 B"}, {4080, "4080 B"}, {4096, "4 KiB"}, {1025 << 10, "1025 KiB"},
               {(1 << 20) + 16, "1.0 MiB"}, {(size_t)3 << 20, "3 MiB"}, {(size_t)1 << 30, "1 GiB"},
               {((size_t)3 << 29), "1536 MiB"}};
  (void)state;
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    char buf[32];
    assert_string_equal(gr_size_text(cases[i].b, buf, sizeof(buf)), cases[i].want);
  }
}

/* The fake bench run with a copy size and --allreduce-max (0: the defaults of world_run). */
static struct world *world_with(size_t bytes, size_t ar_max)
{
  struct world *w = calloc(1, sizeof(*w));
  fake_default(&w->f);
  w->bytes = bytes;
  w->ar_max = ar_max;
  world_run(w, true);
  return w;
}

/* The note says what limited the all-reduce: the user's own --allreduce-max
 * (and its rounding to a power of two) or free GPU memory (256 MiB here). */
static void test_allreduce_caps(void **state)
{
  (void)state;
  struct world *w = world_with(0, (size_t)3 << 20);
  assert_non_null(finding_with(&w->rep, "bench.allreduce-note", "sizes capped at 2 MiB by --allreduce-max 3 MiB, rounded down to a power of two"));
  assert_int_equal(w->rep.ar[w->rep.nar - 1].bytes, (size_t)2 << 20);
  world_free(w);
  free(w);
  w = world_with(0, 4096);
  assert_int_equal(w->rep.nar, 0);
  assert_non_null(finding_with(&w->rep, "bench.allreduce-note", "not run: --allreduce-max 4 KiB is below the smallest size measured (64 KiB)"));
  world_free(w);
  free(w);
  w = world_with(0, (size_t)1 << 30);
  assert_non_null(finding_with(&w->rep, "bench.allreduce-note", "sizes capped at 64 MiB by free GPU memory: a quarter of "
                                                                 "the 256 MiB free, rounded down to a power of two"));
  world_free(w);
  free(w);
  w = world_with(0, (size_t)16 << 20);
  assert_null(finding_with(&w->rep, "bench.allreduce-note", ""));
  world_free(w);
  free(w);
}

/* Both placements and the host clock reach the rows; a soak's stall is a
 * warning naming the size, the iteration and how long. */
static void test_allreduce_soak(void **state)
{
  (void)state;
  struct world *w = calloc(1, sizeof(*w));
  fake_default(&w->f);
  w->ar_max = (size_t)1 << 20;
  w->ar_soak = 100;
  w->f.stall_iter = 38;
  world_run(w, true);
  const struct gr_ar_row *r = &w->rep.ar[0];
  assert_int_equal(r->bytes, 64 << 10);
  assert_float_equal(r->host_us, r->time_us + 3, 1e-6);
  assert_float_equal(r->ip_time_us, r->time_us, 1e-9);
  assert_float_equal(r->ip_busbw_gbps, r->busbw_gbps, 1e-9);
  assert_non_null(r->soak);
  assert_int_equal(r->soak->stalls, 1);
  assert_int_equal(r->soak->slow[0].index, 37);
  assert_float_equal(r->soak->slow[0].us, 50 * r->time_us, 1e-6);
  assert_int_equal(w->rep.ar_stalls, 1);
  assert_int_equal(w->rep.ar[1].soak->stalls, 0);
  bool found = false;
  for (size_t i = 0; i < w->rep.findings.n; i++)
    if (strcmp(w->rep.findings.v[i].id, "bench.allreduce-stall") == 0) {
      found = true;
      assert_int_equal(w->rep.findings.v[i].sev, GR_SEV_WARN);
      assert_non_null(strstr(w->rep.findings.v[i].text, "of 64 KiB over 4 GPUs stalled in 1 of 100 iterations"));
      assert_non_null(strstr(w->rep.findings.v[i].text, "(50x) at iteration 37"));
      assert_non_null(strstr(w->rep.findings.v[i].text, "NCCL connections: unknown"));
    }
  assert_true(found);
  world_free(w);
  free(w);
}

/* NCCL's INFO log as NCCL 2.6, 2.18 and 2.21 write it: channel and ring
 * lines, NET with both ends, noise, an overlong line; one line per
 * connection and transport, sorted. */
static void test_nccl_log(void **state)
{
  (void)state;
  char big[600], out[512];
  memset(big, 'x', sizeof(big) - 1);
  big[sizeof(big) - 1] = '\0';
  char *log = NULL;
  size_t len = 0;
  FILE *w = open_memstream(&log, &len);
  fprintf(w, "h:1:1 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\n"
             "h:1:1 [0] NCCL INFO Channel 00/02 :    0   1   2   3\n"
             "h:1:1 [1] NCCL INFO Channel 00/0 : 1[1] -> 2[2] via SHM/direct/direct\n"
             "h:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read\n"
             "h:1:1 [0] NCCL INFO Channel 01/0 : 0[0] -> 1[1] via P2P/CUMEM/read\n"
             "h:1:1 [0] NCCL INFO Channel 01 : 0[1000] -> 3[4000] via P2P/IPC\r\n"
             "h:1:1 [3] NCCL INFO Channel 00/0 : 3[3] -> 0[0] [receive] via NET/IB/0/GDRDMA\n"
             "h:1:1 [3] NCCL INFO Channel 00/0 : 3[3] -> 0[0] [send] via NET/IB/0/GDRDMA\n"
             "h:1:1 [2] NCCL INFO Ring 00 : 2[2] -> 3[3] via P2P/direct pointer\n"
             "%s NCCL INFO Channel 00/0 : 5[5] -> 6[6] via P2P/IPC\n" /* overlong: skipped whole */
             "h:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> via P2P/IPC\n"
             "h:1:1 [0] NCCL INFO Connected all rings\n", big);
  fclose(w);
  FILE *f = fmemopen(log, len, "r");
  assert_int_equal(gr_nccl_log_links(f, out, sizeof(out)), 5);
  fclose(f);
  assert_string_equal(out, "0 -> 1 P2P/CUMEM/read\n0 -> 3 P2P/IPC\n1 -> 2 SHM/direct/direct\n"
                           "2 -> 3 P2P/direct pointer\n3 -> 0 NET/IB/0/GDRDMA\n");
  f = fmemopen(log, len, "r");
  assert_int_equal(gr_nccl_log_links(f, out, 20), -1); /* does not fit */
  assert_string_equal(out, "");
  fclose(f);
  f = fmemopen((char *)"nothing here\n", 13, "r");
  assert_int_equal(gr_nccl_log_links(f, out, sizeof(out)), 0);
  fclose(f);
  free(log);
}

/* Small copies are named in the unit that holds them, never "0 KiB". */
static void test_small_copy_text(void **state)
{
  (void)state;
  struct world *w = world_with(4080, 0);
  assert_int_equal(w->rep.cfg.bytes, 4080);
  assert_non_null(finding_with(&w->rep, "bench.small-copies", "Copies of 4080 B are bound by per-copy latency"));
  world_free(w);
  free(w);
}

/* bench --mpi's report over ranks on two hosts: the slowest node is the
 * host whose rank took longest (named by its local rank 0), the slowest
 * link the lowest GB/s; the exit status follows the warnings and failures. */
static void test_mpi_report(void **state)
{
  (void)state;
  struct gr_mpi_rank ranks[3] = {
      {.host = "a", .rank = 0, .local_rank = 0, .ndev = 1, .link_gbps = 31.5, .gen = 4, .width = 16,
       .cur_width = 16, .largest_us = 900, .node_checked = true, .peermem = 1, .nics_known = 1},
      {.host = "b", .rank = 1, .local_rank = 0, .ndev = 1, .link_gbps = 31.5, .gen = 4, .width = 16,
       .cur_width = 16, .largest_us = 1000, .node_checked = true, .peermem = 1, .nics_known = 1},
      {.host = "b", .rank = 2, .local_rank = 1, .ndev = 1, .link_gbps = 15.75, .gen = 4, .width = 16,
       .cur_width = 8, .largest_us = 1200},
  };
  struct gr_mpi_report rep = {.nranks = 3, .nccl_ranks = 3, .ranks = ranks, .nrows = 1};
  rep.rows[0] = (struct gr_mpi_row){.bytes = 1 << 20, .avg_us = 1033, .max_us = 1200};
  gr_mpi_report_finish(&rep);
  assert_int_equal(rep.nnodes, 2);
  assert_int_equal(rep.slowest_node, 1); /* host b, through its rank 2 */
  assert_int_equal(rep.slowest_link, 2);
  gr_mpi_report_finish(&rep);
  assert_int_equal(gr_findings_exit(&rep.findings), GR_EXIT_WARN); /* rank 2 trains at x8 of x16 */
  ranks[2].cur_width = 16;
  gr_mpi_report_finish(&rep);
  assert_int_equal(gr_findings_exit(&rep.findings), GR_EXIT_OK);
  ranks[0].nics_rdma = ranks[0].nics = 1; /* an RDMA NIC but no GPU near it */
  ranks[0].gpus = 1;
  gr_mpi_report_finish(&rep);
  assert_int_equal(gr_findings_exit(&rep.findings), GR_EXIT_WARN);
  ranks[0].gpus_near = 1;
  ranks[0].peermem = 0; /* near, but no nvidia_peermem */
  gr_mpi_report_finish(&rep);
  assert_int_equal(gr_findings_exit(&rep.findings), GR_EXIT_WARN);
  ranks[0].peermem = 1;
  rep.rows[0].wrong = 3;
  gr_mpi_report_finish(&rep);
  assert_int_equal(gr_findings_exit(&rep.findings), GR_EXIT_FAIL);
  rep.nrows = 0; /* nothing measured: no slowest node */
  gr_mpi_report_finish(&rep);
  assert_int_equal(rep.slowest_node, -1);
  gr_mpi_report_free(&rep);
}

static void test_mpi_sizes(void **state)
{
  (void)state;
  size_t sz[GR_MPI_MAX_SIZES];
  int n = gr_mpi_sizes((size_t)64 << 20, true, sz);
  assert_int_equal(n, 6);
  assert_int_equal(sz[0], 64 << 10);
  assert_int_equal(sz[5], 64 << 20);
  n = gr_mpi_sizes((size_t)1 << 30, false, sz); /* 4 KiB .. 1 GiB by twos */
  assert_int_equal(n, 19);
  assert_int_equal(sz[18], 1 << 30);
  n = gr_mpi_sizes((size_t)96 << 10, true, sz); /* the largest always runs */
  assert_int_equal(n, 2);
  assert_int_equal(sz[1], 96 << 10);
  assert_int_equal(gr_mpi_iters(64 << 10, true), 10);
  assert_int_equal(gr_mpi_iters(1 << 30, false), 5);
}

/* The planning pass counts exactly the tests the run then makes (an
 * aggregate is one test with a row per GPU), and --quick plans less time
 * than the default run. */
static size_t tests_made(const struct gr_bench_report *rep)
{
  size_t n = 0;
  for (size_t i = 0; i < rep->nresults; i++) {
    const struct gr_bench_result *r = &rep->results[i];
    bool gpu_row = (r->kind == GR_BK_H2D_ALL || r->kind == GR_BK_D2H_ALL) && r->src != GR_BENCH_ALL &&
                   r->dst != GR_BENCH_ALL;
    n += !gpu_row;
  }
  return n;
}

static void test_plan(void **state)
{
  struct world *q = calloc(1, sizeof(*q)), *f = calloc(1, sizeof(*f));
  (void)state;
  fake_default(&q->f);
  fake_default(&f->f);
  f->full = true;
  world_run(q, true);
  world_run(f, true);
  assert_int_equal(q->rep.planned_tests, tests_made(&q->rep));
  assert_int_equal(f->rep.planned_tests, tests_made(&f->rep));
  assert_true(f->rep.planned_tests > q->rep.planned_tests); /* SM copies and the bidirectional reads */
  assert_true(q->rep.expected_seconds > 0);
  assert_true(f->rep.expected_seconds > q->rep.expected_seconds);
  world_free(q);
  world_free(f);
  free(q);
  free(f);
}

/* Reads (pulls) are issued with spec.read, held against the pair's path as
 * writes are, and a read under its floor where the write is faster says
 * that peer reads are slower on this path. */
static void test_read_variants(void **state)
{
  struct world *w = calloc(1, sizeof(*w));
  (void)state;
  fake_default(&w->f);
  w->f.pull_factor = 0.5;
  w->full = true; /* --quick leaves out the pairs read both ways at once */
  world_run(w, true);
  assert_true(w->f.reads > 0);
  const struct gr_bench_result *wr = result(&w->rep, GR_BK_P2P, 2, 3), *rd = result(&w->rep, GR_BK_P2P_READ, 2, 3);
  const struct gr_bench_result *bi = result(&w->rep, GR_BK_P2P_BIDIR_READ, 2, 3);
  assert_non_null(wr);
  assert_non_null(rd);
  assert_non_null(bi);
  assert_float_equal(rd->median, wr->median / 2, 0.3);
  assert_float_equal(rd->limit_gbps, wr->limit_gbps, 1e-9);
  assert_true(bi->reverse_median > 0);
  assert_non_null(finding_with(&w->rep, "bench.p2p-bw", "GPU2 0000:41:00.0 -> GPU3 0000:44:00.0 (direct P2P, pulled"));
  assert_non_null(finding_with(&w->rep, "bench.p2p-bw", "peer reads are slower than posted writes"));
  assert_null(finding_with(&w->rep, "bench.p2p-bw", "GPU2 0000:41:00.0 -> GPU3 0000:44:00.0 (direct P2P),"));
  assert_non_null(finding_with(&w->rep, "bench.no-peer", "no nvbandwidth counterpart"));
  world_free(w);
  free(w);
}

/* Host <-> all GPUs at once: skipped without copy_many; with it, the
 * aggregate over the common window, each GPU's own row, the limit from
 * each GPU's own link (epyc-riser shares no uplink among the GPUs), and a
 * warning when something the topology does not show caps them together. */
static void test_aggregates(void **state)
{
  struct world *w = calloc(1, sizeof(*w));
  (void)state;
  fake_default(&w->f);
  world_run(w, true);
  const struct gr_bench_result *sum = result(&w->rep, GR_BK_H2D_ALL, GR_BENCH_HOST, GR_BENCH_ALL);
  assert_non_null(sum);
  assert_int_equal(sum->status, GR_BS_SKIPPED);
  assert_null(finding_with(&w->rep, "bench.host-aggregate", NULL));
  world_free(w);

  memset(w, 0, sizeof(*w));
  fake_default(&w->f);
  w->gang = true;
  world_run(w, true);
  sum = result(&w->rep, GR_BK_H2D_ALL, GR_BENCH_HOST, GR_BENCH_ALL);
  assert_non_null(sum);
  assert_int_equal(sum->status, GR_BS_OK);
  assert_int_equal(sum->at_once, NG);
  /* GPU1 (12 GB/s) sets the common window: 4 x about 12, not the 84 of the sum of rates */
  assert_float_equal(sum->median, 4 * 12.0, 1.5);
  assert_true(sum->sum_rates_gbps > 80);
  assert_float_equal(sum->limit_gbps, 4 * 15.75, 0.1); /* 4 x GPU1's x8 link: no shared uplink */
  assert_float_equal(sum->own_limits_gbps, 3 * 31.5 + 15.75, 0.2);
  assert_string_equal(sum->shared, "");
  const struct gr_bench_result *one = result(&w->rep, GR_BK_H2D_ALL, GR_BENCH_HOST, 2);
  assert_non_null(one);
  assert_float_equal(one->median, 24, 0.5);
  assert_non_null(finding_with(&w->rep, "bench.host-aggregate", "holds in measurement"));
  assert_non_null(result(&w->rep, GR_BK_D2H_ALL, GR_BENCH_ALL, GR_BENCH_HOST));
  world_free(w);

  memset(w, 0, sizeof(*w));
  fake_default(&w->f);
  w->gang = true;
  w->f.host_ceiling = 20;
  world_run(w, true);
  sum = result(&w->rep, GR_BK_H2D_ALL, GR_BENCH_HOST, GR_BENCH_ALL);
  assert_float_equal(sum->median, 20, 0.5);
  const struct gr_finding *fw = finding_with(&w->rep, "bench.host-aggregate", "does not hold in measurement");
  assert_non_null(fw);
  assert_int_equal(fw->sev, GR_SEV_WARN);
  assert_non_null(strstr(fw->text, "host -> 4 GPUs at once: 20.0 GB/s"));
  world_free(w);

  /* a copy that fails at once: the summary row carries the error, once */
  memset(w, 0, sizeof(*w));
  fake_default(&w->f);
  w->gang = true;
  w->f.error_src = GR_BENCH_HOST;
  w->f.error_dst = 2;
  world_run(w, true);
  sum = result(&w->rep, GR_BK_H2D_ALL, GR_BENCH_HOST, GR_BENCH_ALL);
  assert_int_equal(sum->status, GR_BS_ERROR);
  assert_int_equal(result(&w->rep, GR_BK_H2D_ALL, GR_BENCH_HOST, 2)->status, GR_BS_SKIPPED);
  assert_non_null(finding_with(&w->rep, "bench.copy-error", "host -> all GPUs (host -> all GPUs at once, ce)"));
  assert_null(finding_with(&w->rep, "bench.host-aggregate", "host -> 4 GPUs"));
  assert_non_null(finding_with(&w->rep, "bench.host-aggregate", "4 GPUs -> host")); /* the other way runs */
  world_free(w);
  free(w);
}

/* --like nvbandwidth: its sizes and repetitions on top of the defaults. */
static void test_like_nvbandwidth(void **state)
{
  struct gr_bench_config c;
  (void)state;
  gr_bench_config_defaults(&c, false);
  gr_bench_config_like_nvbandwidth(&c);
  assert_int_equal(c.bytes, (size_t)512 << 20);
  assert_int_equal(c.loops, 16);
  assert_int_equal(c.samples, 3);
  assert_true(c.sm);
  assert_true(c.like_nvbandwidth);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_no_topology_predicts), /* first: nothing predicted in this process yet */
      cmocka_unit_test(test_stats),      cmocka_unit_test(test_plateau), cmocka_unit_test(test_soak_stats),    cmocka_unit_test(test_parse_size),
      cmocka_unit_test(test_limits_and_floor), cmocka_unit_test(test_corruption), cmocka_unit_test(test_copy_error),
      cmocka_unit_test(test_gpu_lost),   cmocka_unit_test(test_no_nccl),    cmocka_unit_test(test_size_text),
      cmocka_unit_test(test_allreduce_caps), cmocka_unit_test(test_allreduce_soak), cmocka_unit_test(test_nccl_log),
      cmocka_unit_test(test_small_copy_text), cmocka_unit_test(test_mpi_report), cmocka_unit_test(test_mpi_sizes),
      cmocka_unit_test(test_spin_timeout), cmocka_unit_test(test_read_variants), cmocka_unit_test(test_aggregates),
      cmocka_unit_test(test_like_nvbandwidth), cmocka_unit_test(test_plan),
  };
  return cmocka_run_group_tests(tests, setup, NULL);
}
