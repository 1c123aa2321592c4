/* The vendor-neutral side of gpurig bench (see bench.h), its driver: which
 * tests run and in what order, the planning pass, samples and statistics,
 * progress, and the backends and their GPU facts. The all-reduce tests are
 * in gpu/bench_allreduce.c, the limit, prediction and floor each figure is
 * held against and the findings in gpu/bench_limits.c (gpu/bench_internal.h). */
#include "gpu/bench.h"

#include "base/term.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "facts/catalog.h"
#include "gpu/bench_internal.h"
#include "gpu/gpu.h"

static double now_s(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

void gr_bench_config_defaults(struct gr_bench_config *c, bool quick)
{
  memset(c, 0, sizeof(*c));
  c->quick = quick;
  /* nvbandwidth: 512 MiB, 16 copies per sample, 3 samples; --quick trades
   * buffer size for time so a 8-GPU box finishes in seconds */
  c->bytes = quick ? 16 * MIB : 256 * MIB;
  c->loops = quick ? 2 : 8;
  c->samples = quick ? 3 : 5;
  /* --quick: no discarded first run, 2 warm-up copies inside each run
   * instead of 4, and no pairs read both ways at once: 192 MiB per test,
   * so 8 GPUs on PCIe finish in seconds */
  c->warmup = quick ? 0 : 1;
  c->warmup_copies = quick ? 2 : 4;
  c->bidir_read = !quick;
  c->ar_max_bytes = (size_t)1 << 30;
  c->sm = !quick;
  c->progress = true;
}

void gr_bench_config_like_nvbandwidth(struct gr_bench_config *c)
{
  /* nvbandwidth v0.8 common.h: defaultBufferSize 512 MiB, defaultLoopCount
   * 16, defaultAverageLoopCount 3; it takes the median */
  c->quick = false;
  c->bytes = 512 * MIB;
  c->loops = 16;
  c->samples = 3;
  c->warmup = 1;
  c->warmup_copies = 4; /* WARMUP_COUNT */
  c->bidir_read = true;
  c->sm = true;
  c->like_nvbandwidth = true;
}

/* ------------------------------------------------------------ statistics */

int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

void gr_bench_stats(const double *v, int n, double *median, double *min, double *max, double *spread_pct)
{
  double s[GR_BENCH_MAX_SAMPLES];
  *median = *min = *max = *spread_pct = 0;
  if (n <= 0)
    return;
  if (n > GR_BENCH_MAX_SAMPLES)
    n = GR_BENCH_MAX_SAMPLES;
  memcpy(s, v, (size_t)n * sizeof(double));
  qsort(s, (size_t)n, sizeof(double), cmp_double);
  *median = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
  *min = s[0];
  *max = s[n - 1];
  *spread_pct = *median > 0 ? (*max - *min) / *median * 100 : 0;
}

double gr_allreduce_busbw_factor(int n)
{
  return n > 0 ? 2.0 * (n - 1) / n : 0;
}

void gr_bench_plateau(struct gr_bench_report *rep, double tolerance)
{
  double best = 0, v[64];
  int nv = 0;
  rep->ar_plateau_gbps = 0;
  rep->ar_rising = false;
  for (size_t i = 0; i < rep->nar; i++)
    if (rep->ar[i].busbw_gbps > best)
      best = rep->ar[i].busbw_gbps;
  if (best <= 0)
    return;
  /* walk down from the largest size while busbw stays near the best */
  size_t i = rep->nar;
  while (i > 0 && rep->ar[i - 1].busbw_gbps >= best * (1 - tolerance) && nv < 64) {
    v[nv++] = rep->ar[i - 1].busbw_gbps;
    i--;
  }
  if (nv == 0) {
    /* the largest size fell off the plateau (e.g. memory pressure): report
     * the best point alone */
    for (size_t k = 0; k < rep->nar; k++)
      if (rep->ar[k].busbw_gbps == best)
        rep->ar_plateau_from = rep->ar_plateau_to = rep->ar[k].bytes;
    rep->ar_plateau_gbps = best;
    return;
  }
  double mn, mx, sp;
  gr_bench_stats(v, nv > GR_BENCH_MAX_SAMPLES ? GR_BENCH_MAX_SAMPLES : nv, &rep->ar_plateau_gbps, &mn, &mx, &sp);
  rep->ar_plateau_from = rep->ar[i].bytes;
  rep->ar_plateau_to = rep->ar[rep->nar - 1].bytes;
  /* a single point on the plateau, still climbing: larger sizes would give more */
  rep->ar_rising = nv == 1 && rep->nar >= 2 && rep->ar[rep->nar - 2].busbw_gbps < best * 0.97;
}

/* ---------------------------------------------------------------- names */

static const char *const kind_names[] = {"h2d",      "d2h",     "host_bidir", "local",   "p2p", "p2p_bidir",
                                         "latency",  "p2p_read", "p2p_bidir_read", "h2d_all", "d2h_all", "chase"};
static const char *const kind_titles[] = {"host -> GPU", "GPU -> host", "host <-> GPU at once", "within GPU",
                                          "GPU -> GPU", "GPU <-> GPU at once", "small-copy latency",
                                          "GPU -> GPU (read)", "GPU <-> GPU at once (read)", "host -> all GPUs at once",
                                          "all GPUs -> host at once", "pointer-chase latency"};

const char *gr_bench_kind_name(enum gr_bench_kind k)
{
  return k < GR_BK_COUNT ? kind_names[k] : "?";
}

const char *gr_bench_kind_title(enum gr_bench_kind k)
{
  return k < GR_BK_COUNT ? kind_titles[k] : "?";
}

const char *gr_engine_name(enum gr_engine e)
{
  return e == GR_ENGINE_SM ? "sm" : "ce";
}

const char *gr_bench_status_name(enum gr_bench_status s)
{
  static const char *const n[] = {"ok", "skipped", "error", "corrupt", "lost"};
  return (unsigned)s <= GR_BS_LOST ? n[s] : "?";
}

const char *gr_bench_endpoint(int e, char *buf, size_t cap)
{
  if (e == GR_BENCH_HOST)
    snprintf(buf, cap, "host");
  else if (e == GR_BENCH_ALL)
    snprintf(buf, cap, "all GPUs");
  else
    snprintf(buf, cap, "GPU%d", e);
  return buf;
}

/* -------------------------------------------------------------- progress */

void progress(struct run *r, const char *what)
{
  if (!r->cfg->progress)
    return;
  double el = now_s() - r->t0;
  if (el < 1.0 && !r->bar_shown)
    return;
  int width = 30, fill = r->total ? (int)(r->done * (size_t)width / r->total) : 0;
  char bar[40];
  memset(bar, '#', (size_t)fill);
  memset(bar + fill, '.', (size_t)(width - fill));
  bar[width] = '\0';
  char line[128];
  snprintf(line, sizeof(line), "[%s] %3zu%% %5.1f s  %-32.32s", bar, r->total ? r->done * 100 / r->total : 100, el,
           what);
  gr_term_status_line(line);
  r->bar_shown = true;
}

static void progress_end(struct run *r)
{
  if (r->bar_shown)
    gr_term_status_line(NULL);
}

/* ------------------------------------------------------------- copy tests */

static struct gr_bench_result *add_result(struct gr_bench_report *rep, enum gr_bench_kind k, enum gr_engine e,
                                          int src, int dst)
{
  rep->results = xrealloc(rep->results, (rep->nresults + 1) * sizeof(*rep->results));
  struct gr_bench_result *res = &rep->results[rep->nresults++];
  memset(res, 0, sizeof(*res));
  res->kind = k;
  res->engine = e;
  res->src = src;
  res->dst = dst;
  return res;
}

bool involves_lost(const struct run *r, int src, int dst)
{
  return (src >= 0 && r->rep->gpus[src].lost) || (dst >= 0 && r->rep->gpus[dst].lost);
}

static void mark_lost(struct run *r, struct gr_bench_result *res)
{
  int ends[2] = {res->src, res->dst};
  char a[64], what[160];
  for (int k = 0; k < 2; k++) {
    int g = ends[k];
    if (g < 0 || r->rep->gpus[g].lost || !r->be->device_lost(r->st, g))
      continue;
    r->rep->gpus[g].lost = true;
    res->status = GR_BS_LOST;
    snprintf(what, sizeof(what), "%s", gr_bench_kind_title(res->kind));
    finding(r->rep, GR_SEV_FAIL, "bench.gpu-lost",
            "%s stopped answering during %s (%s). The tests that need it were not run. %s, and reseat or "
            "re-power the card and its riser.",
            gpu_label(r->rep, g, a, sizeof(a)), what, res->note ? res->note : "no error text",
            r->be->lost_hint ? r->be->lost_hint : "Look for Xid 79 (GPU fallen off the bus) with `gpurig doctor`");
  }
}

static void report_corrupt(struct run *r, struct gr_bench_result *res, const struct gr_copy_sample *s)
{
  char a[64], b[64], note[320];
  int from = s->corrupt_dir ? res->dst : res->src, to = s->corrupt_dir ? res->src : res->dst;
  snprintf(note, sizeof(note), "byte %zu of the destination was 0x%02x instead of 0x%02x (%ld wrong 32-bit word%s)",
           s->bad_offset, s->got, s->expected, s->mismatches, s->mismatches == 1 ? "" : "s");
  res->status = GR_BS_CORRUPT;
  res->mismatched_words = s->mismatches;
  free(res->note);
  res->note = xstrdup(note);
  bool pair = res->src >= 0 && res->dst >= 0 && res->src != res->dst;
  const char *path = res->via_host ? "through host memory" : pair ? "direct P2P" : "direct";
  finding(r->rep, GR_SEV_FAIL, "bench.verify",
          "%s -> %s (%s, %s, %s copy): the data check after the copy failed: %s. Data sent this way arrives wrong "
          "without any error; do not use this path (for P2P: NCCL_P2P_DISABLE=1) until it is explained (DCGM's "
          "broken_p2p test looks for the same).",
          gpu_label(r->rep, from, a, sizeof(a)), gpu_label(r->rep, to, b, sizeof(b)), gr_bench_kind_title(res->kind),
          path, res->engine == GR_ENGINE_SM ? "SM" : "copy-engine", note);
}

static double sample_value(const struct gr_copy_spec *sp, const struct gr_copy_sample *s, int dir)
{
  double t = s->seconds[dir];
  if (t <= 0)
    return 0;
  if (sp->kind == GR_BK_LATENCY)
    return t / sp->loops * 1e6; /* microseconds per copy */
  return (double)sp->bytes * sp->loops / t / 1e9;
}

/* A run whose spin kernel gave up started its clock before all its copies
 * were queued: its figure is dropped, and said. */
static void report_spin_timeout(struct run *r, struct gr_bench_result *res, int dropped, int runs)
{
  char a[64], b[64];
  finding(r->rep, GR_SEV_WARN, "bench.spin-timeout",
          "%s -> %s (%s, %s copy): in %d of %d runs the spin kernel holding the GPU's stream gave up (after 10 s) "
          "before gpurig released it, so the copies were not all queued when the clock started: a slow or stalled "
          "host thread or driver queue. %s Run the bench again on an idle machine; if it recurs, look for CPU "
          "starvation (other load, a cgroup CPU limit) or a driver stall (dmesg, `gpurig doctor`).",
          gpu_label(r->rep, res->src, a, sizeof(a)), gpu_label(r->rep, res->dst, b, sizeof(b)),
          gr_bench_kind_title(res->kind), res->engine == GR_ENGINE_SM ? "SM" : "copy-engine", dropped, runs,
          res->nsamples ? "The figure is the median of the other runs." : "No run is left: the test has no figure.");
  if (!res->nsamples) {
    res->status = GR_BS_ERROR;
    free(res->note);
    res->note = xstrdup("every run's spin kernel timed out before the copies were queued");
  }
}

/* Runs one test: warm-up, then samples; fills res. Each run queues the
 * config's warm-up copies before its start event, except the 16-byte
 * latency test, whose first copy is what it times. */
static void measure(struct run *r, struct gr_bench_result *res, const struct gr_copy_spec *base)
{
  struct gr_copy_spec sp = *base;
  struct gr_copy_sample s;
  double rev[GR_BENCH_MAX_SAMPLES];
  int nrev = 0, dropped = 0, runs = 0;
  sp.warmup = sp.kind == GR_BK_LATENCY ? 0 : r->cfg->warmup_copies;
  for (int i = -r->cfg->warmup; i < r->cfg->samples && i < GR_BENCH_MAX_SAMPLES; i++) {
    sp.seed = (unsigned)(r->rep->nresults * 131 + (size_t)(i + 8));
    if (r->be->copy(r->st, &sp, &s) != 0) {
      res->status = GR_BS_ERROR;
      res->note = xstrdup(r->be->last_error(r->st));
      mark_lost(r, res);
      return;
    }
    res->via_host = s.via_host;
    if (s.corrupt) {
      report_corrupt(r, res, &s);
      return;
    }
    if (i < 0)
      continue;
    runs++;
    if (s.spin_timeout) {
      dropped++;
      continue;
    }
    res->samples[res->nsamples++] = sample_value(&sp, &s, 0);
    if (sp.reverse)
      rev[nrev++] = sample_value(&sp, &s, 1);
  }
  gr_bench_stats(res->samples, res->nsamples, &res->median, &res->min, &res->max, &res->spread_pct);
  if (nrev) {
    double mn, mx, spr;
    gr_bench_stats(rev, nrev, &res->reverse_median, &mn, &mx, &spr);
  }
  if (dropped)
    report_spin_timeout(r, res, dropped, runs);
}

/* The rate a copy test should reach: the link's predicted rate, else its
 * limit, else PLAN_UNKNOWN_GBPS. */
static double plan_rate(struct run *r, enum gr_bench_kind k, enum gr_engine e, int src, int dst)
{
  struct gr_bench_result t = {.kind = k, .engine = e, .src = src, .dst = dst};
  set_limits(r, &t);
  return t.predicted_gbps > 0 ? t.predicted_gbps : t.limit_gbps > 0 ? t.limit_gbps : PLAN_UNKNOWN_GBPS;
}

/* The planning pass's part of a copy test: counted, and costed as its runs
 * of warm-up and timed copies at the rate plan_rate gives (both directions
 * of a bidirectional test at once, so one direction's time). */
static void plan_copy(struct run *r, enum gr_bench_kind k, enum gr_engine e, int src, int dst, size_t bytes, int loops)
{
  const struct gr_bench_config *c = r->cfg;
  int runs = c->warmup + c->samples;
  r->total++;
  if (k == GR_BK_LATENCY) {
    r->expect_s += runs * (PLAN_RUN_S + loops * PLAN_SMALL_COPY_S);
    return;
  }
  double per_run = (double)bytes * (loops + c->warmup_copies) / (plan_rate(r, k, e, src, dst) * 1e9);
  if (dst == GR_BENCH_HOST || k == GR_BK_HOST_BIDIR)
    per_run += (double)bytes / (PLAN_CPU_CHECK_GBPS * 1e9);
  r->expect_s += runs * (PLAN_RUN_S + per_run);
}

static void run_copy(struct run *r, enum gr_bench_kind k, enum gr_engine e, int src, int dst, size_t bytes,
                     int loops)
{
  char a[16], b[16], what[64];
  if (r->planning) {
    plan_copy(r, k, e, src, dst, bytes, loops);
    return;
  }
  struct gr_bench_result *res = add_result(r->rep, k, e, src, dst);
  snprintf(what, sizeof(what), "%s %s %s->%s", gr_bench_kind_name(k), gr_engine_name(e),
           gr_bench_endpoint(src, a, sizeof(a)), gr_bench_endpoint(dst, b, sizeof(b)));
  progress(r, what);
  r->done++;
  if (involves_lost(r, src, dst)) {
    res->status = GR_BS_SKIPPED;
    res->note = xstrdup("a GPU it needs stopped answering earlier");
    return;
  }
  if (e == GR_ENGINE_SM && src >= 0 && dst >= 0 && src != dst && !r->be->can_peer(r->st, src, dst)) {
    res->status = GR_BS_SKIPPED;
    res->via_host = true;
    res->note = xstrdup("the SM copy kernel needs peer access, which this pair does not have");
    return;
  }
  struct gr_copy_spec sp = {.kind = k,
                            .engine = e,
                            .src = src,
                            .dst = dst,
                            .bytes = bytes,
                            .loops = loops,
                            .reverse = k == GR_BK_HOST_BIDIR || k == GR_BK_P2P_BIDIR || k == GR_BK_P2P_BIDIR_READ,
                            .read = k == GR_BK_P2P_READ || k == GR_BK_P2P_BIDIR_READ};
  if (k == GR_BK_HOST_BIDIR) { /* host -> GPU measured, GPU -> host alongside */
    sp.src = GR_BENCH_HOST;
    sp.dst = dst;
  }
  measure(r, res, &sp);
  set_limits(r, res);
}

/* Pairs whose pointer chase runs: peer access either way round. */
static bool chase_pair(struct run *r, int mem, int exec)
{
  return mem != exec && r->be->chase && r->be->can_peer(r->st, exec, mem);
}

static void host_tests(struct run *r, int n, size_t bytes)
{
  const struct gr_bench_config *c = r->cfg;
  size_t local = c->local_bytes > bytes ? c->local_bytes : bytes;
  /* at least LOCAL_MIN_LOOPS copies a run: the copy engine starts a copy
   * while the one before it still writes, so the events miss part of the
   * first copy; over --quick's 2 copies a real H200 read 2400 GB/s (its
   * memory's whole 4.8 TB/s, impossible) where 8 copies read 2091 */
  int local_loops = c->loops < LOCAL_MIN_LOOPS ? LOCAL_MIN_LOOPS : c->loops;
  for (int g = 0; g < n; g++) {
    /* the within-GPU copy first, so that the GPU's buffers are made at its
     * larger size: on a real H200, 256 MiB buffers made after 16 MiB ones
     * (freed, made again) read 2450-2550 GB/s, more than the memory can
     * move, and 2095 GB/s when made first (bench --quick --size 256M) */
    run_copy(r, GR_BK_LOCAL, GR_ENGINE_CE, g, g, local, local_loops);
    run_copy(r, GR_BK_H2D, GR_ENGINE_CE, GR_BENCH_HOST, g, bytes, c->loops);
    run_copy(r, GR_BK_D2H, GR_ENGINE_CE, g, GR_BENCH_HOST, bytes, c->loops);
    run_copy(r, GR_BK_HOST_BIDIR, GR_ENGINE_CE, GR_BENCH_HOST, g, bytes, c->loops);
    if (c->sm) {
      run_copy(r, GR_BK_H2D, GR_ENGINE_SM, GR_BENCH_HOST, g, bytes, c->loops);
      run_copy(r, GR_BK_D2H, GR_ENGINE_SM, g, GR_BENCH_HOST, bytes, c->loops);
      run_copy(r, GR_BK_LOCAL, GR_ENGINE_SM, g, g, local, local_loops);
    }
  }
}

/* Every ordered pair written (pushed: the source issues the copy) and read
 * (pulled: the destination issues it), as nvbandwidth's _write_ and _read_
 * tests: peer reads and posted writes run at different rates on some root
 * complexes and switches. */
static void pair_tests(struct run *r, int n, size_t bytes)
{
  const struct gr_bench_config *c = r->cfg;
  static const enum gr_bench_kind one_way[2] = {GR_BK_P2P, GR_BK_P2P_READ};
  static const enum gr_bench_kind both_ways[2] = {GR_BK_P2P_BIDIR, GR_BK_P2P_BIDIR_READ};
  for (int k = 0; k < 2; k++)
    for (int a = 0; a < n; a++)
      for (int b = 0; b < n; b++)
        if (a != b)
          run_copy(r, one_way[k], GR_ENGINE_CE, a, b, bytes, c->loops);
  for (int k = 0; k < (c->bidir_read ? 2 : 1); k++)
    for (int a = 0; a < n; a++)
      for (int b = a + 1; b < n; b++)
        run_copy(r, both_ways[k], GR_ENGINE_CE, a, b, bytes, c->loops);
  for (int k = 0; c->sm && k < 2; k++)
    for (int a = 0; a < n; a++)
      for (int b = 0; b < n; b++)
        if (a != b)
          run_copy(r, one_way[k], GR_ENGINE_SM, a, b, bytes, c->loops);
}

/* ------------------------------------------------------ aggregate tests */
static int aggregate_sample(struct run *r, size_t first, const struct gr_copy_spec *specs, int m, bool keep)
{
  struct gr_copy_sample out[GR_BENCH_GANG_MAX];
  struct gr_bench_result *sum = &r->rep->results[first];
  if (r->be->copy_many(r->st, specs, m, out) != 0) {
    sum->status = GR_BS_ERROR;
    sum->note = xstrdup(r->be->last_error(r->st));
    for (int k = 0; k < m; k++) { /* the summary row carries the error; a GPU that went is named once */
      struct gr_bench_result *one = &r->rep->results[first + 1 + (size_t)k];
      one->status = GR_BS_SKIPPED;
      one->note = xstrdup(sum->note);
      mark_lost(r, one);
    }
    return -1;
  }
  double longest = 0, rates = 0;
  int bad = 0;
  for (int k = 0; k < m; k++) {
    struct gr_bench_result *one = &r->rep->results[first + 1 + (size_t)k];
    if (out[k].corrupt) {
      report_corrupt(r, one, &out[k]);
      bad++;
      continue;
    }
    double v = sample_value(&specs[k], &out[k], 0);
    longest = out[k].seconds[0] > longest ? out[k].seconds[0] : longest;
    rates += v;
    if (keep)
      one->samples[one->nsamples++] = v;
  }
  if (bad) {
    sum->status = GR_BS_CORRUPT;
    sum->note = xstrdup("the data check failed on a GPU (its row says where)");
    return -1;
  }
  if (keep && longest > 0) {
    sum->samples[sum->nsamples] = (double)specs[0].bytes * specs[0].loops * m / longest / 1e9;
    sum->sum_rates_gbps += rates; /* averaged below */
    sum->nsamples++;
  }
  return 0;
}

/* Host -> every GPU (or every GPU -> host) at once with the backend's
 * copy_many, as nvbandwidth's host_to_all / all_to_host tests. */
static void aggregate_run(struct run *r, enum gr_bench_kind k, int n, size_t bytes)
{
  bool in = k == GR_BK_H2D_ALL;
  int members[GR_BENCH_GANG_MAX], m = 0;
  struct gr_copy_spec specs[GR_BENCH_GANG_MAX];
  size_t first = r->rep->nresults;
  if (r->planning) { /* every GPU's copies at once: at worst one after another */
    for (int g = 0; g < n && g < GR_BENCH_GANG_MAX; g++)
      plan_copy(r, in ? GR_BK_H2D : GR_BK_D2H, GR_ENGINE_CE, in ? GR_BENCH_HOST : g, in ? g : GR_BENCH_HOST, bytes,
                r->cfg->loops);
    r->total -= (size_t)(n < GR_BENCH_GANG_MAX ? n : GR_BENCH_GANG_MAX) - 1; /* one test */
    return;
  }
  struct gr_bench_result *sum = add_result(r->rep, k, GR_ENGINE_CE, in ? GR_BENCH_HOST : GR_BENCH_ALL,
                                           in ? GR_BENCH_ALL : GR_BENCH_HOST);
  progress(r, gr_bench_kind_title(k));
  r->done++;
  for (int g = 0; g < n && m < GR_BENCH_GANG_MAX; g++)
    if (!r->rep->gpus[g].lost)
      members[m++] = g;
  sum->at_once = m;
  if (!r->be->copy_many || m < 2) {
    sum->status = GR_BS_SKIPPED;
    sum->note = xstrdup(m < 2 ? "needs two GPUs or more that still answer" : "the backend cannot run copies at once");
    return;
  }
  for (int i = 0; i < m; i++) {
    add_result(r->rep, k, GR_ENGINE_CE, in ? GR_BENCH_HOST : members[i], in ? members[i] : GR_BENCH_HOST);
    specs[i] = (struct gr_copy_spec){.kind = k, .engine = GR_ENGINE_CE, .src = in ? GR_BENCH_HOST : members[i],
                                     .dst = in ? members[i] : GR_BENCH_HOST, .bytes = bytes, .loops = r->cfg->loops,
                                     .warmup = r->cfg->warmup_copies};
  }
  for (int i = -r->cfg->warmup; i < r->cfg->samples && i < GR_BENCH_MAX_SAMPLES; i++) {
    for (int j = 0; j < m; j++)
      specs[j].seed = (unsigned)(first * 131 + (size_t)j * 17 + (size_t)(i + 8));
    if (aggregate_sample(r, first, specs, m, i >= 0) != 0)
      return;
  }
  for (int i = 0; i < m; i++) {
    struct gr_bench_result *one = &r->rep->results[first + 1 + (size_t)i];
    gr_bench_stats(one->samples, one->nsamples, &one->median, &one->min, &one->max, &one->spread_pct);
    limits_host(r, one, members[i]);
    one->floor_gbps = 0; /* a share of a busy machine, held against nothing alone */
  }
  sum = &r->rep->results[first];
  sum->sum_rates_gbps = sum->nsamples ? sum->sum_rates_gbps / sum->nsamples : 0;
  gr_bench_stats(sum->samples, sum->nsamples, &sum->median, &sum->min, &sum->max, &sum->spread_pct);
  limits_aggregate(r, sum, members, m);
  aggregate_finding(r, sum, members, m);
}

static void aggregate_tests(struct run *r, int n, size_t bytes)
{
  aggregate_run(r, GR_BK_H2D_ALL, n, bytes);
  aggregate_run(r, GR_BK_D2H_ALL, n, bytes);
}

/* One pointer-chase test: GPU exec follows dependent loads through the
 * memory of `mem` (a GPU, or pinned host memory); the result runs from the
 * memory to the GPU reading it, ns per load. */
static void run_chase(struct run *r, int mem, int exec, size_t bytes)
{
  char a[16], b[16], what[64];
  if (r->planning) {
    r->total++;
    r->expect_s += (r->cfg->warmup + r->cfg->samples) * (PLAN_RUN_S + PLAN_CHASE_RUN_S);
    return;
  }
  struct gr_bench_result *res = add_result(r->rep, GR_BK_CHASE, GR_ENGINE_SM, mem, exec);
  struct gr_chase_sample cs;
  int dropped = 0, runs = 0;
  snprintf(what, sizeof(what), "chase %s->%s", gr_bench_endpoint(mem, a, sizeof(a)), gr_bench_endpoint(exec, b, sizeof(b)));
  progress(r, what);
  r->done++;
  if (involves_lost(r, mem, exec)) {
    res->status = GR_BS_SKIPPED;
    res->note = xstrdup("a GPU it needs stopped answering earlier");
    return;
  }
  for (int i = -r->cfg->warmup; i < r->cfg->samples && i < GR_BENCH_MAX_SAMPLES; i++) {
    if (r->be->chase(r->st, exec, mem, bytes, &cs) != 0) {
      res->status = GR_BS_ERROR;
      res->note = xstrdup(r->be->last_error(r->st));
      mark_lost(r, res);
      return;
    }
    if (i < 0)
      continue;
    runs++;
    if (cs.spin_timeout)
      dropped++;
    else
      res->samples[res->nsamples++] = cs.ns_per_load;
  }
  gr_bench_stats(res->samples, res->nsamples, &res->median, &res->min, &res->max, &res->spread_pct);
  if (dropped)
    report_spin_timeout(r, res, dropped, runs);
}

static void latency_tests(struct run *r, int n)
{
  for (int g = 0; g < n; g++) {
    run_copy(r, GR_BK_LATENCY, GR_ENGINE_CE, GR_BENCH_HOST, g, LATENCY_BYTES, LATENCY_LOOPS);
    run_copy(r, GR_BK_LATENCY, GR_ENGINE_CE, g, GR_BENCH_HOST, LATENCY_BYTES, LATENCY_LOOPS);
  }
  for (int a = 0; a < n; a++)
    for (int b = 0; b < n; b++)
      if (a != b)
        run_copy(r, GR_BK_LATENCY, GR_ENGINE_CE, a, b, LATENCY_BYTES, LATENCY_LOOPS);
  size_t chase_bytes = r->rep->cfg.bytes > CHASE_MIN_BYTES ? r->rep->cfg.bytes : CHASE_MIN_BYTES;
  for (int g = 0; g < n && r->be->chase; g++)
    run_chase(r, GR_BENCH_HOST, g, chase_bytes);
  for (int a = 0; a < n; a++)
    for (int b = 0; b < n; b++)
      if (chase_pair(r, a, b))
        run_chase(r, a, b, chase_bytes);
}

/* ---------------------------------------------------------------- driver */

static void join_gpus(struct run *r, int n)
{
  struct gr_bench_report *rep = r->rep;
  const struct gr_topo *t = r->links->t;
  rep->ngpus = (size_t)n;
  rep->gpus = xcalloc((size_t)n, sizeof(*rep->gpus));
  for (int g = 0; g < n; g++) {
    char raw[64] = "";
    struct gr_bench_gpu *bg = &rep->gpus[g];
    bg->topo_gpu = -1;
    if (r->be->device_busid(r->st, g, raw, sizeof(raw)) != 0 || !gr_busid_normalize(raw, bg->busid, sizeof(bg->busid)))
      snprintf(bg->busid, sizeof(bg->busid), "?");
    bg->topo_gpu = gr_topo_gpu_by_busid(t, bg->busid);
    if (bg->topo_gpu >= 0)
      r->be->set_numa(r->st, g, t->pci[t->gpus[bg->topo_gpu]].numa);
  }
}

/* The copy size: the configured one (whole 16-byte words, as the command
 * line checks), unless free memory is short: then an eighth of it (two
 * buffers per GPU, with most memory left free), rounded to whole MiB. The
 * header prints the size used. */
static size_t copy_bytes(struct run *r, int n)
{
  size_t bytes = r->cfg->bytes, fr = min_free(r, n);
  if (fr > 0 && fr / 8 < bytes)
    bytes = fr / 8 >= MIB ? fr / 8 / MIB * MIB : fr / 8;
  bytes -= bytes % GR_BENCH_COPY_ALIGN; /* the SM kernel copies 16-byte words */
  return bytes > 0 ? bytes : GR_BENCH_COPY_ALIGN;
}

/* The within-GPU copy size: the copy size, raised to 256 MiB where an
 * eighth of free memory allows. On a real H200 (60 MB of L2) --quick's
 * 16 MiB copy read 2260 GB/s against 2083 at 256 MiB (PyTorch's too): the
 * cache, not the memory. Host copies keep the configured size: the link,
 * not a cache, limits them. */
static size_t local_copy_bytes(struct run *r, int n, size_t bytes)
{
  size_t want = LOCAL_MIN_BYTES, fr = min_free(r, n);
  if (fr > 0 && fr / 8 < want)
    want = fr / 8 / MIB * MIB;
  return want > bytes ? want : bytes;
}

/* Every copy, chase and aggregate test, in the order they run. */
static void copy_tests(struct run *r, int n)
{
  host_tests(r, n, r->rep->cfg.bytes);
  if (n > 1) {
    aggregate_tests(r, n, r->rep->cfg.bytes);
    pair_tests(r, n, r->rep->cfg.bytes);
  }
  latency_tests(r, n);
}

/* The planning pass: the same test functions with r->planning set count
 * and cost every test, so the progress bar's total and the expected
 * duration come from the run itself, not from a second list of tests. */
static void plan_tests(struct run *r, int n)
{
  r->planning = true;
  copy_tests(r, n);
  r->expect_s += plan_allreduce(r, n);
  r->planning = false;
  r->rep->planned_tests = r->total;
  r->rep->expected_seconds = r->expect_s;
  if (!r->cfg->notice)
    return;
  char took[32];
  if (r->expect_s < 120)
    snprintf(took, sizeof(took), "%.0f s", r->expect_s < 1 ? 1 : r->expect_s);
  else
    snprintf(took, sizeof(took), "%.0f min", r->expect_s / 60);
  fprintf(r->cfg->notice, "gpurig bench: %zu tests on %d GPU%s%s; expected to take about %s at the links' "
          "predicted rates\n", r->total, n, n == 1 ? "" : "s", n > 1 ? " and an all-reduce sweep" : "", took);
}

int gr_bench_run(const struct gr_bench_backend *be, void *state, const struct gr_bench_config *cfg,
                 const struct gr_bench_links *links, struct gr_bench_report *rep, struct gr_err *err)
{
  struct gr_bench_config own = *cfg;
  struct run r = {.be = be, .st = state, .cfg = &own, .links = links, .rep = rep};
  int rc = -1;
  memset(rep, 0, sizeof(*rep));
  if (be->no_kernels && own.sm) { /* said once, rather than a skipped row per SM test */
    own.sm = false;
    finding(rep, GR_SEV_INFO, "bench.no-sm", "SM copies not measured: %s; the copies below are the copy engines' "
            "(SDMA) only", be->no_kernels);
  }
  rep->cfg = own;
  snprintf(rep->backend, sizeof(rep->backend), "%s", be->name);
  int n = be->device_count(state);
  if (n <= 0) {
    gr_fail(err, GR_EXIT_CANNOT_RUN, "the driver reports no GPU to measure");
    goto out;
  }
  join_gpus(&r, n);
  rep->cfg.bytes = copy_bytes(&r, n);
  rep->cfg.local_bytes = local_copy_bytes(&r, n, rep->cfg.bytes);
  plan_tests(&r, n);
  r.t0 = now_s();
  copy_tests(&r, n);
  allreduce_tests(&r, n);
  progress_end(&r);
  check_results(&r);
  rep->wall_seconds = now_s() - r.t0;
  rc = 0;
out:
  return rc;
}

void gr_bench_report_free(struct gr_bench_report *rep)
{
  for (size_t i = 0; i < rep->nresults; i++)
    free(rep->results[i].note);
  free(rep->results);
  gr_findings_free(&rep->findings);
  free(rep->gpus);
  for (size_t i = 0; i < rep->nar; i++)
    free(rep->ar[i].soak);
  free(rep->ar);
  free(rep->ar_links);
  free(rep->ar_links_note);
  memset(rep, 0, sizeof(*rep));
}

/* ------------------------------------------------ backends and GPU facts */

/* On a machine with GPUs of two vendors one run measures one vendor's: the
 * others' are counted here and named on stderr, with the way to measure
 * them (each vendor's runtime hides its GPUs when told to). */
static void others_left_out(size_t first, const struct gr_bench_backend *be, void *state)
{
  for (size_t i = first + 1; gr_vendors[i]; i++) {
    const struct gr_bench_backend *b = gr_vendors[i]->bench;
    void *st = NULL;
    char why[768];
    if (!b || b->init(&st, why, sizeof(why)) != 0)
      continue;
    int n = b->device_count(st), mine = be->device_count(state);
    gr_diag("gpurig: %d %s GPU%s measured, not the %d %s GPU%s also here (one vendor a run): run again with "
            "%s= (empty) to hide the %s ones and measure these\n",
            mine, gr_vendors[first]->name, mine == 1 ? "" : "s", n, gr_vendors[i]->name, n == 1 ? "" : "s",
            be->hide_env ? be->hide_env : "the runtime's visible-devices variable", gr_vendors[first]->name);
    b->shutdown(st);
  }
}

int gr_bench_open(const struct gr_bench_backend **be, void **state, struct gr_err *err)
{
  char why[1024] = "", one[768];
  size_t off = 0;
  *be = NULL;
  *state = NULL;
  for (size_t i = 0; gr_vendors[i]; i++) {
    const struct gr_bench_backend *b = gr_vendors[i]->bench;
    if (!b)
      continue;
    one[0] = '\0';
    if (b->init(state, one, sizeof(one)) == 0) {
      *be = b;
      others_left_out(i, b, *state);
      return 0;
    }
    off += (size_t)snprintf(why + off, off < sizeof(why) ? sizeof(why) - off : 0, "%s%s", off ? "; " : "", one);
    if (off >= sizeof(why))
      off = sizeof(why) - 1;
  }
  return gr_fail(err, GR_EXIT_CANNOT_RUN, "nothing to measure: %s", why);
}

void gr_bench_versions(const char *vendor, struct gr_lib_version *runtime, struct gr_lib_version *collective)
{
  memset(runtime, 0, sizeof(*runtime));
  memset(collective, 0, sizeof(*collective));
  /* each vendor's runtime is a fact of its own: CUDA and NCCL, HIP and RCCL */
  for (size_t i = 0; gr_vendors[i]; i++)
    if (gr_vendors[i]->bench && gr_vendors[i]->bench->versions && strcmp(gr_vendors[i]->name, vendor) == 0) {
      gr_vendors[i]->bench->versions(runtime, collective);
      return;
    }
}

/* The backend's device with this bus id: the facts backend and the
 * measurement backend may number GPUs differently (CUDA_DEVICE_ORDER). */
static int device_of(const struct gr_bench_backend *be, void *st, int n, const char *busid)
{
  for (int d = 0; d < n; d++) {
    char raw[64] = "", norm[32];
    if (be->device_busid(st, d, raw, sizeof(raw)) == 0 && gr_busid_normalize(raw, norm, sizeof(norm)) &&
        strcmp(norm, busid) == 0)
      return d;
  }
  return -1;
}

static void facts_of_gpu(const struct gr_gpus *g, unsigned i, int d, struct gr_bench_facts *f)
{
  struct gr_gpu_static gs;
  struct gr_gpu_dynamic dy;
  if (g->be->static_info(g->state, i, &gs) != 0)
    return;
  f->gen[d] = gs.max_link_gen.ok ? (int)gs.max_link_gen.v : 0;
  f->width[d] = gs.max_link_width.ok ? (int)gs.max_link_width.v : 0;
  if (g->be->dynamic_info(g->state, i, &dy) == 0 && dy.link_width.ok)
    f->cur_width[d] = (int)dy.link_width.v;
  const struct gr_gpu_model *m = gr_catalog_find_pci(gs.vendor, gs.device);
  f->mem_bw[d] = m ? m->mem_bw_gbps : 0;
}

void gr_bench_facts_read(const struct gr_bench_backend *be, void *state, struct gr_bench_facts *f)
{
  struct gr_gpus g;
  struct gr_err err = {0};
  int n = be->device_count(state);
  size_t cap = n > 0 ? (size_t)n : 1;
  f->gen = xcalloc(cap, sizeof(int));
  f->width = xcalloc(cap, sizeof(int));
  f->cur_width = xcalloc(cap, sizeof(int));
  f->mem_bw = xcalloc(cap, sizeof(double));
  if (gr_gpus_open(&g, &err) != 0)
    return; /* the limits then come from the topology alone */
  for (unsigned i = 0; i < g.count; i++) {
    struct gr_gpu_static gs;
    if (g.be->static_info(g.state, i, &gs) != 0)
      continue;
    int d = device_of(be, state, n, gs.busid);
    if (d >= 0)
      facts_of_gpu(&g, i, d, f);
  }
  gr_gpus_close(&g);
}

void gr_bench_facts_free(struct gr_bench_facts *f)
{
  free(f->gen);
  free(f->width);
  free(f->cur_width);
  free(f->mem_bw);
  memset(f, 0, sizeof(*f));
}

void gr_bench_links_set(struct gr_bench_links *l, const struct gr_machine *m, const struct gr_bench_facts *f)
{
  memset(l, 0, sizeof(*l));
  if (m) {
    l->t = &m->topo;
    l->a = &m->analysis;
    l->p = &m->prediction;
  }
  l->gpu_gen = f->gen;
  l->gpu_width = f->width;
  l->gpu_cur_width = f->cur_width;
  l->mem_bw_gbps = f->mem_bw;
}
