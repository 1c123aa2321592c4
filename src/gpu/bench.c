/* The vendor-neutral side of gpurig bench (see bench.h): which tests run,
 * samples and statistics, the limit and prediction each figure is held
 * against, and the findings. The thresholds are fractions of the link's
 * theoretical rate from data/health.tsv, never per GPU model. */
#include "gpu/bench.h"

#include "base/term.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "facts/catalog.h"
#include "facts/facts.h"
#include "gpu/gpu.h"
#include "facts/pcilink.h"

#define MIB ((size_t)1 << 20)
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

static int cmp_double(const void *a, const void *b)
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

/* ------------------------------------------------------------- findings */

static void finding(struct gr_bench_report *rep, enum gr_sev sev, const char *id, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void finding(struct gr_bench_report *rep, enum gr_sev sev, const char *id, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  gr_finding_vadd(&rep->findings, sev, id, fmt, ap);
  va_end(ap);
}

/* "GPU1 0000:02:00.0" */
static const char *gpu_label(const struct gr_bench_report *rep, int g, char *buf, size_t cap)
{
  if (g == GR_BENCH_HOST)
    snprintf(buf, cap, "host");
  else
    snprintf(buf, cap, "GPU%d %s", g, rep->gpus[g].busid);
  return buf;
}

/* ---------------------------------------------------------------- limits */


static int topo_node(const struct run *r, int g)
{
  const struct gr_bench_links *l = r->links;
  int tg = g >= 0 ? r->rep->gpus[g].topo_gpu : -1;
  return l->t && tg >= 0 ? l->t->gpus[tg] : -1;
}

static double h2d_eff(int gen)
{
  return gen >= 5 ? gr_calibration("h2d_eff_gen5") : gen == 4 ? gr_calibration("h2d_eff_gen4")
                                                              : gr_calibration("h2d_eff_gen3");
}

/* The link between GPU g and host memory: from the topology, else from
 * what the GPU reports about its own link. */
static void host_link_of(const struct run *r, int g, struct gr_host_link *h)
{
  int node = topo_node(r, g);
  memset(h, 0, sizeof(*h));
  h->bottleneck = -1;
  if (node >= 0) {
    gr_host_link(r->links->t, node, h);
    if (h->bw_gbps > 0)
      return;
  }
  if (r->links->gpu_gen && r->links->gpu_gen[g] > 0 && r->links->gpu_width[g] > 0) {
    const int *cur = r->links->gpu_cur_width;
    h->gen = h->can_gen = r->links->gpu_gen[g];
    h->width = h->can_width = r->links->gpu_width[g];
    if (cur && cur[g] > 0 && cur[g] < h->width)
      h->width = cur[g];
    h->bw_gbps = gr_pcie_bw_gbps(h->gen, h->width);
    h->can_gbps = gr_pcie_bw_gbps(h->can_gen, h->can_width);
    h->nccl_gbps = gr_pcie_nccl_gbps(h->gen, h->width);
  }
}

static void describe_link(const struct gr_host_link *h, char *buf, size_t cap)
{
  char now[24], can[24];
  gr_pcie_label(h->gen, h->width, now, sizeof(now));
  gr_pcie_label(h->can_gen, h->can_width, can, sizeof(can));
  if (h->can_gbps > h->bw_gbps * 1.01)
    snprintf(buf, cap, "%s (capable of %s)", now, can);
  else
    snprintf(buf, cap, "%s", now);
}

static void limits_host(struct run *r, struct gr_bench_result *res, int g)
{
  struct gr_host_link h;
  host_link_of(r, g, &h);
  if (h.bw_gbps <= 0)
    return;
  res->limit_gbps = h.bw_gbps;
  res->nccl_gbps = h.nccl_gbps;
  res->predicted_gbps = h.bw_gbps * h2d_eff(h.gen);
  res->floor_gbps = h.can_gbps * gr_health("bench_host_min");
  describe_link(&h, res->link, sizeof(res->link));
}

/* The GPU's memory bandwidth from the catalog: by what the driver reported,
 * else by the topology's PCI ids. 0 unknown. */
static double mem_bw_of(const struct run *r, int g)
{
  const double *bw = r->links->mem_bw_gbps;
  if (bw && bw[g] > 0)
    return bw[g];
  int node = topo_node(r, g);
  const struct gr_gpu_model *m = node >= 0 ? gr_pci_catalog(&r->links->t->pci[node]) : NULL;
  return m ? m->mem_bw_gbps : 0;
}

static void limits_local(struct run *r, struct gr_bench_result *res, int g)
{
  double bw = mem_bw_of(r, g);
  if (bw <= 0)
    return;
  /* a local copy reads and writes every byte: one side sees half the memory rate */
  res->limit_gbps = bw / 2;
  res->floor_gbps = res->limit_gbps * gr_health("bench_local_min");
  snprintf(res->link, sizeof(res->link), "memory %.0f GB/s, half each way", bw);
}

static void limits_pair(struct run *r, struct gr_bench_result *res)
{
  const struct gr_bench_links *l = r->links;
  int ta = r->rep->gpus[res->src].topo_gpu, tb = r->rep->gpus[res->dst].topo_gpu;
  if (res->via_host || !l->a || ta < 0 || tb < 0) {
    /* host-staged: each byte crosses both GPUs' host links */
    struct gr_host_link ha, hb;
    host_link_of(r, res->src, &ha);
    host_link_of(r, res->dst, &hb);
    const struct gr_host_link *lo = ha.bw_gbps > 0 && (hb.bw_gbps <= 0 || ha.bw_gbps <= hb.bw_gbps) ? &ha : &hb;
    if (lo->bw_gbps <= 0)
      return;
    res->limit_gbps = lo->bw_gbps;
    res->nccl_gbps = lo->nccl_gbps;
    bool staged = res->via_host;
    res->predicted_gbps = lo->bw_gbps * gr_calibration(staged ? "copy_host_eff" : "copy_p2p_eff");
    res->floor_gbps = lo->can_gbps * gr_health(staged ? "bench_staged_min" : "bench_p2p_min");
    describe_link(lo, res->link, sizeof(res->link));
    return;
  }
  const struct gr_path *p = &l->a->gpu_gpu[(size_t)ta * l->a->ngpus + (size_t)tb];
  if (p->bw_gbps <= 0)
    return;
  res->limit_gbps = p->bw_gbps;
  res->nccl_gbps = p->nccl_bw_gbps;
  const struct gr_pair_predict *pp = &l->p->pairs[(size_t)ta * l->p->ngpus + (size_t)tb];
  res->predicted_gbps = pp->best != GR_XFER_HOST ? pp->gbps : p->bw_gbps * gr_calibration("copy_p2p_eff");
  bool nvl = p->via == GR_VIA_NVLINK;
  res->floor_gbps = p->bw_gbps * gr_health(nvl ? "bench_nvlink_min" : "bench_p2p_min");
  char lvl[16];
  snprintf(res->link, sizeof(res->link), "%s, %s", gr_level_str(p, lvl, sizeof(lvl)),
           nvl ? "NVLink" : "PCIe P2P");
}

static void set_limits(struct run *r, struct gr_bench_result *res)
{
  switch (res->kind) {
  case GR_BK_H2D:
  case GR_BK_HOST_BIDIR:
    limits_host(r, res, res->dst);
    break;
  case GR_BK_D2H:
    limits_host(r, res, res->src);
    break;
  case GR_BK_LOCAL:
    limits_local(r, res, res->src);
    break;
  case GR_BK_P2P:
  case GR_BK_P2P_BIDIR:
  case GR_BK_P2P_READ:
  case GR_BK_P2P_BIDIR_READ:
    limits_pair(r, res);
    break;
  default:
    break;
  }
  /* bidirectional: each direction shares the link's budget with the other
   * only where the link is half-duplex; PCIe is full duplex, so the floor
   * applies per direction but at a lower fraction (host memory and the root
   * complex are shared) */
  if (res->kind == GR_BK_HOST_BIDIR || res->kind == GR_BK_P2P_BIDIR || res->kind == GR_BK_P2P_BIDIR_READ)
    res->floor_gbps *= gr_health("bench_bidir_share");
}

/* -------------------------------------------------------------- progress */

static void progress(struct run *r, const char *what)
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

static bool involves_lost(const struct run *r, int src, int dst)
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
            "%s stopped answering during %s (%s). The tests that need it were not run. Look for Xid 79 (GPU "
            "fallen off the bus) with `gpurig doctor`, and reseat or re-power the card and its riser.",
            gpu_label(r->rep, g, a, sizeof(a)), what, res->note ? res->note : "no error text");
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
  for (int g = 0; g < n; g++) {
    run_copy(r, GR_BK_H2D, GR_ENGINE_CE, GR_BENCH_HOST, g, bytes, c->loops);
    run_copy(r, GR_BK_D2H, GR_ENGINE_CE, g, GR_BENCH_HOST, bytes, c->loops);
    run_copy(r, GR_BK_HOST_BIDIR, GR_ENGINE_CE, GR_BENCH_HOST, g, bytes, c->loops);
    run_copy(r, GR_BK_LOCAL, GR_ENGINE_CE, g, g, bytes, c->loops);
    if (c->sm) {
      run_copy(r, GR_BK_H2D, GR_ENGINE_SM, GR_BENCH_HOST, g, bytes, c->loops);
      run_copy(r, GR_BK_D2H, GR_ENGINE_SM, g, GR_BENCH_HOST, bytes, c->loops);
      run_copy(r, GR_BK_LOCAL, GR_ENGINE_SM, g, g, bytes, c->loops);
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

/* The share of its way to host memory that GPU g gets when every member
 * copies at once: its own link, or a link above it split evenly among the
 * members below it (a switch uplink, a root port's link), whichever is
 * less; *via is the pci index of the shared link that sets it, -1 none. */
static double share_of(const struct run *r, int g, const int *members, int m, int *via)
{
  struct gr_host_link own;
  host_link_of(r, g, &own);
  double share = own.bw_gbps;
  const struct gr_topo *t = r->links->t;
  *via = -1;
  int node = topo_node(r, g);
  for (int x = node >= 0 ? t->pci[node].parent : -1; x >= 0 && share > 0; x = t->pci[x].parent) {
    const struct gr_pci *p = &t->pci[x];
    double bw = p->has_link ? gr_link_bw_gbps(p) : 0;
    int below = 0;
    for (int k = 0; k < m && bw > 0; k++)
      for (int y = topo_node(r, members[k]); y >= 0; y = t->pci[y].parent)
        if (y == x) {
          below++;
          break;
        }
    if (below > 1 && bw / below < share) {
      share = bw / below;
      *via = x;
    }
  }
  return share;
}

/* "the switch uplink 0000:01:00.0 (Gen4 x16, 31.5 GB/s) that 2 GPUs share" */
static void describe_shared(const struct run *r, int x, const int *members, int m, char *buf, size_t cap)
{
  const struct gr_topo *t = r->links->t;
  const struct gr_pci *p = &t->pci[x];
  char bus[32], lab[24];
  int below = 0;
  struct gr_link_facts f;
  for (int k = 0; k < m; k++)
    for (int y = topo_node(r, members[k]); y >= 0; y = t->pci[y].parent)
      if (y == x) {
        below++;
        break;
      }
  gr_pci_busid(p, bus, sizeof(bus));
  gr_link_facts(p, &f);
  gr_pcie_label(f.gen, f.width, lab, sizeof(lab));
  snprintf(buf, cap, "the %s %s (%s, %.1f GB/s) that %d GPUs share",
           p->role == GR_ROLE_SWITCH_UP ? "switch uplink" : "link above", bus, lab, f.gbps, below);
}

/* The aggregate's limits: GPUs x the smallest share one of them gets (every
 * GPU copies the same bytes, so the slowest sets the common window), the
 * sum of their own links, and what they measured alone. */
static void limits_aggregate(struct run *r, struct gr_bench_result *sum, const int *members, int m)
{
  enum gr_bench_kind alone = sum->kind == GR_BK_H2D_ALL ? GR_BK_H2D : GR_BK_D2H;
  double least = 0, slowest = 0, shares[GR_BENCH_GANG_MAX];
  int via = -1, gen = 0, vias[GR_BENCH_GANG_MAX], nlike = 0;
  bool known = true;
  for (int k = 0; k < m; k++) {
    struct gr_host_link own;
    int g = members[k], v;
    host_link_of(r, g, &own);
    double share = share_of(r, g, members, m, &v);
    shares[k] = share;
    vias[k] = v;
    known &= share > 0;
    if (share > 0 && (least == 0 || share < least)) {
      least = share;
      via = v;
      gen = own.gen;
    }
    sum->own_limits_gbps += own.bw_gbps;
    for (size_t i = 0; i < r->rep->nresults; i++) {
      const struct gr_bench_result *a = &r->rep->results[i];
      int ag = alone == GR_BK_H2D ? a->dst : a->src;
      if (a->kind == alone && a->engine == GR_ENGINE_CE && ag == g && a->status == GR_BS_OK &&
          (slowest == 0 || a->median < slowest))
        slowest = a->median;
    }
  }
  sum->alone_gbps = slowest * m;
  if (!known)
    return;
  sum->limit_gbps = least * m;
  sum->predicted_gbps = sum->limit_gbps * h2d_eff(gen);
  sum->floor_gbps = sum->limit_gbps * gr_health("bench_host_min");
  for (int k = 0; k < m; k++) { /* the other shared links that set the same share */
    bool seen = vias[k] < 0 || vias[k] == via || shares[k] > least * 1.0001;
    for (int j = 0; j < k && !seen; j++)
      seen = vias[j] == vias[k];
    nlike += !seen;
  }
  if (via >= 0) {
    describe_shared(r, via, members, m, sum->shared, sizeof(sum->shared));
    size_t len = strlen(sum->shared);
    if (nlike > 0)
      snprintf(sum->shared + len, sizeof(sum->shared) - len, ", and %d more like it", nlike);
    snprintf(sum->link, sizeof(sum->link), "%d x %.1f: shared uplinks", m, least);
  } else {
    snprintf(sum->link, sizeof(sum->link), "%d x %.1f: each GPU's own link", m, least);
  }
}

/* Whether the topology's "independent jobs" verdict rated the machine, and how. */
static const char *jobs_rating(const struct run *r)
{
  const struct gr_prediction *p = r->links->p;
  for (size_t i = 0; p && i < p->nverdicts; i++)
    if (strcmp(p->verdicts[i].workload, "independent jobs") == 0)
      return gr_rating_name(p->verdicts[i].rating);
  return NULL;
}

/* The finding that says whether the GPUs' host links stay independent when
 * all are busy: info when the aggregate reaches the floor of the limit the
 * topology gives, warn when it is far below it. */
static void aggregate_finding(struct run *r, const struct gr_bench_result *sum, const int *members, int m)
{
  char verdict[96] = "", why[1024];
  bool in_topo = true; /* else the limits come from what each GPU reports, and no verdict speaks for them */
  for (int k = 0; k < m; k++)
    in_topo &= topo_node(r, members[k]) >= 0;
  const char *rating = in_topo ? jobs_rating(r) : NULL, *who = in_topo ? "the topology allows" : "their links allow";
  bool in = sum->kind == GR_BK_H2D_ALL, floors = (double)r->rep->cfg.bytes >= gr_health("bench_floor_min_mib") * MIB;
  double of_alone = sum->alone_gbps > 0 ? sum->median / sum->alone_gbps : 0;
  bool low = floors && sum->floor_gbps > 0 && sum->median < sum->floor_gbps;
  if (rating)
    snprintf(verdict, sizeof(verdict), "the topology's \"independent jobs\" verdict (%s)", rating);
  else
    snprintf(verdict, sizeof(verdict), "their independence (no topology verdict covers these GPUs)");
  if (low)
    snprintf(why, sizeof(why),
             "That is under the %.1f GB/s floor of the %.1f GB/s %s all at once (%s): something the "
             "topology does not show is shared or slow (the root complex, host memory bandwidth and NUMA placement, "
             "the IOMMU), and %s does not hold in measurement.",
             sum->floor_gbps, sum->limit_gbps, who, sum->link, verdict);
  else if (of_alone >= 0.9 || of_alone == 0)
    snprintf(why, sizeof(why), "Loading every GPU's host link at once costs little: %s holds in measurement.", verdict);
  else if (sum->shared[0])
    snprintf(why, sizeof(why),
             "The shortfall is %s: each GPU gets about %.0f%% of its own rate when all are busy, as the topology "
             "predicts, so %s holds in measurement with that share.",
             sum->shared, of_alone * 100, verdict);
  else
    snprintf(why, sizeof(why),
             "The topology shows no shared link on the way to host memory, so something it does not show is shared "
             "(the root complex, the CPU's I/O die, host memory bandwidth, the IOMMU): each GPU gets about %.0f%% of "
             "its own rate when all are busy, and %s is optimistic here.",
             of_alone * 100, verdict);
  char lim[512] = "";
  if (sum->limit_gbps > 0)
    snprintf(lim, sizeof(lim), " and %.0f%% of the %.1f GB/s %s all at once (%s; their own links add up to %.1f GB/s)",
             sum->median / sum->limit_gbps * 100, sum->limit_gbps, who, sum->link, sum->own_limits_gbps);
  finding(r->rep, low ? GR_SEV_WARN : GR_SEV_INFO, "bench.host-aggregate",
          "%s%d GPUs%s at once: %.1f GB/s (total bytes / the longest GPU's time), %.0f%% of the %d x %.1f GB/s they "
          "reach alone (the slowest GPU alone: every GPU copies the same bytes)%s. %s",
          in ? "host -> " : "", sum->at_once, in ? "" : " -> host", sum->median, of_alone * 100, sum->at_once,
          sum->at_once ? sum->alone_gbps / sum->at_once : 0, lim, why);
}

/* One timed run of every member at once: the common window's aggregate and
 * each GPU's own figure. -1 when the run failed or the data was wrong (the
 * rows say so). */
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

/* ------------------------------------------------------------ all-reduce */

static size_t min_free(struct run *r, int n)
{
  size_t lo = 0;
  for (int g = 0; g < n; g++) {
    size_t f = r->be->free_bytes(r->st, g);
    if (f > 0 && (lo == 0 || f < lo))
      lo = f;
  }
  return lo;
}

static size_t pow2_floor(size_t x)
{
  size_t p = 1;
  while (p <= x / 2)
    p <<= 1;
  return x ? p : 0;
}

static void ar_note(struct gr_bench_report *rep, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void ar_note(struct gr_bench_report *rep, const char *fmt, ...)
{
  char buf[600];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  free(rep->ar_note);
  rep->ar_note = xstrdup(buf);
}

/* Timed all-reduces per size and placement: nccl-tests' -n 20 after -w 5
 * warm-up ones; --quick keeps a 256 MiB byte budget (3 to 10, 1 warm-up). */
static int ar_iters(const struct run *r, size_t bytes)
{
  if (!r->cfg->quick)
    return 20;
  size_t it = 256 * MIB / bytes;
  return it < 3 ? 3 : it > 10 ? 10 : (int)it;
}

static int ar_warmup(const struct run *r)
{
  return r->cfg->quick ? 1 : 5;
}

/* One backend all-reduce; on failure the note, the lost GPUs and a failure. */
static int ar_measure(struct run *r, int n, const struct gr_ar_spec *spec, struct gr_ar_sample *s)
{
  struct gr_bench_report *rep = r->rep;
  if (r->be->allreduce(r->st, spec, s) == 0)
    return 0;
  ar_note(rep, "the all-reduce failed at %zu bytes%s: %s", spec->bytes,
          spec->iter_seconds ? " (soak)" : spec->in_place ? " (in place)" : "", r->be->last_error(r->st));
  for (int g = 0; g < n; g++)
    if (!rep->gpus[g].lost && r->be->device_lost(r->st, g))
      rep->gpus[g].lost = true;
  finding(rep, GR_SEV_FAIL, "bench.allreduce-error", "%s", rep->ar_note);
  return -1;
}

static void ar_wrong(struct run *r, int n, size_t bytes, long wrong, const char *placement)
{
  if (wrong > 0)
    finding(r->rep, GR_SEV_FAIL, "bench.allreduce-wrong",
            "The all-reduce of %zu bytes over %d GPUs (%s) gave %ld wrong values (of the checked windows): a GPU, "
            "link or NCCL transport corrupts data. Run `gpurig bench` per pair to find which path.",
            bytes, n, placement, wrong);
}

static int cmp_slowest_first(const void *a, const void *b)
{
  const struct gr_ar_slow *x = a, *y = b;
  if (x->us != y->us)
    return x->us > y->us ? -1 : 1;
  return x->index - y->index;
}

/* Nearest rank: the smallest value with at least p of the samples at or below it. */
static double nearest_rank(const double *sorted, int n, double p)
{
  int k = (int)ceil(p * n - 1e-9);
  return sorted[k < 1 ? 0 : k > n ? n - 1 : k - 1];
}

double gr_ar_soak_stats(const double *seconds, int n, double start_s, struct gr_ar_soak *out)
{
  memset(out, 0, sizeof(*out));
  out->iters = n > 0 ? n : 0;
  if (n <= 0)
    return start_s;
  double *sorted = xcalloc((size_t)n, sizeof(double)), at = start_s;
  struct gr_ar_slow *all = xcalloc((size_t)n, sizeof(*all));
  for (int k = 0; k < n; k++) {
    sorted[k] = seconds[k];
    all[k] = (struct gr_ar_slow){.index = k, .us = seconds[k] * 1e6, .at_s = at};
    at += seconds[k];
  }
  qsort(sorted, (size_t)n, sizeof(double), cmp_double);
  out->p50_us = nearest_rank(sorted, n, 0.50) * 1e6;
  out->p99_us = nearest_rank(sorted, n, 0.99) * 1e6;
  out->max_us = sorted[n - 1] * 1e6;
  qsort(all, (size_t)n, sizeof(*all), cmp_slowest_first);
  out->nslow = n < GR_AR_SLOWEST ? n : GR_AR_SLOWEST;
  memcpy(out->slow, all, (size_t)out->nslow * sizeof(*all));
  for (int k = 0; k < n; k++)
    if (all[k].us > GR_AR_STALL_FACTOR * out->p50_us && all[k].us - out->p50_us >= GR_AR_STALL_MIN_US)
      out->stalls++;
  free(sorted);
  free(all);
  return at;
}

/* The soak at one size: --allreduce-iters iterations, each timed alone. */
static int ar_soak(struct run *r, int n, struct gr_ar_row *row, double *soak_s)
{
  int iters = r->cfg->ar_soak;
  double *t = xcalloc((size_t)iters, sizeof(double));
  struct gr_ar_sample s;
  struct gr_ar_spec spec = {.bytes = row->bytes, .warmup = 0, .iters = iters, .iter_seconds = t};
  int rc = ar_measure(r, n, &spec, &s);
  if (rc == 0) {
    row->soak = xcalloc(1, sizeof(*row->soak));
    *soak_s = gr_ar_soak_stats(t, iters, *soak_s, row->soak);
    r->rep->ar_stalls += row->soak->stalls;
    ar_wrong(r, n, row->bytes, s.wrong, "soak");
  }
  free(t);
  return rc;
}

/* Each size as nccl-tests measures it: out of place, then in place. */
static void ar_sweep(struct run *r, int n, size_t max)
{
  struct gr_bench_report *rep = r->rep;
  size_t step = r->cfg->quick ? 4 : 2;
  double soak_s = 0, f = gr_allreduce_busbw_factor(n);
  for (size_t bytes = r->cfg->quick ? 64 * 1024 : 4096; bytes <= max;
       bytes = bytes < max && bytes * step > max ? max : bytes * step) { /* the largest size always runs */
    struct gr_ar_sample o, ip;
    char what[48];
    snprintf(what, sizeof(what), "all-reduce %zu bytes", bytes);
    progress(r, what);
    struct gr_ar_spec spec = {.bytes = bytes, .warmup = ar_warmup(r), .iters = ar_iters(r, bytes)};
    if (ar_measure(r, n, &spec, &o) != 0)
      return;
    spec.in_place = true;
    if (ar_measure(r, n, &spec, &ip) != 0)
      return;
    rep->ar = xrealloc(rep->ar, (rep->nar + 1) * sizeof(*rep->ar));
    struct gr_ar_row *row = &rep->ar[rep->nar++];
    *row = (struct gr_ar_row){.bytes = bytes, .iters = spec.iters, .warmup = spec.warmup};
    row->time_us = o.seconds * 1e6;
    row->algbw_gbps = o.seconds > 0 ? (double)bytes / o.seconds / 1e9 : 0;
    row->busbw_gbps = row->algbw_gbps * f;
    row->wrong = o.wrong;
    row->host_us = o.host_seconds * 1e6;
    row->ip_time_us = ip.seconds * 1e6;
    row->ip_algbw_gbps = ip.seconds > 0 ? (double)bytes / ip.seconds / 1e9 : 0;
    row->ip_busbw_gbps = row->ip_algbw_gbps * f;
    row->ip_wrong = ip.wrong;
    row->ip_host_us = ip.host_seconds * 1e6;
    ar_wrong(r, n, bytes, o.wrong, "out of place");
    ar_wrong(r, n, bytes, ip.wrong, "in place");
    if (r->cfg->ar_soak > 0 && ar_soak(r, n, row, &soak_s) != 0)
      return;
  }
}

/* The planning pass's cost of the all-reduce sweep: each size out of place
 * and in place (and the soak), at the busbw the topology predicts for
 * NCCL's defaults, else PLAN_UNKNOWN_GBPS; the largest size as ar_largest
 * will pick it, without its notes. */
static double plan_allreduce(struct run *r, int n)
{
  const struct gr_prediction *p = r->links->p;
  double busbw = p && p->ngpus == (size_t)n && p->nccl_default.busbw_gbps > 0 ? p->nccl_default.busbw_gbps
                                                                            : PLAN_UNKNOWN_GBPS;
  size_t fr = min_free(r, n), want = r->cfg->ar_max_bytes, step = r->cfg->quick ? 4 : 2;
  size_t max = pow2_floor(fr > 0 && fr / 4 < want ? fr / 4 : want);
  double f = gr_allreduce_busbw_factor(n), total = 0;
  if (n < 2 || !r->be->allreduce_open || max < GR_BENCH_AR_MIN_BYTES)
    return 0;
  for (size_t bytes = r->cfg->quick ? 64 * 1024 : 4096; bytes <= max;
       bytes = bytes < max && bytes * step > max ? max : bytes * step) {
    double one = PLAN_AR_LATENCY_S + (double)bytes * f / (busbw * 1e9);
    total += 2 * (ar_warmup(r) + ar_iters(r, bytes)) * one + r->cfg->ar_soak * (one + PLAN_AR_LATENCY_S);
  }
  return total;
}

/* "GPU0 -> GPU1 P2P/IPC, GPU1 -> GPU2 SHM/direct/direct" */
static void ar_links_text(const struct gr_bench_report *rep, char *buf, size_t cap)
{
  size_t off = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < rep->nar_links && off < cap; i++)
    off += (size_t)snprintf(buf + off, cap - off, "%sGPU%d -> GPU%d %s", i ? ", " : "", rep->ar_links[i].from,
                            rep->ar_links[i].to, rep->ar_links[i].via);
}

/* A stall finding per size: how many, how long, when, over which connections. */
static void ar_stall_findings(struct run *r, int n)
{
  struct gr_bench_report *rep = r->rep;
  char links[1024] = "", sz[32], when[512];
  ar_links_text(rep, links, sizeof(links));
  for (size_t i = 0; i < rep->nar; i++) {
    const struct gr_ar_soak *k = rep->ar[i].soak;
    if (!k || k->stalls == 0)
      continue;
    size_t off = 0;
    when[0] = '\0';
    for (int j = 0; j < k->nslow && j < k->stalls && off < sizeof(when); j++)
      off += (size_t)snprintf(when + off, sizeof(when) - off, "%s%.1f us (%.0fx) at iteration %d, +%.4f s",
                              j ? "; " : "", k->slow[j].us, k->slow[j].us / k->p50_us, k->slow[j].index,
                              k->slow[j].at_s);
    finding(rep, GR_SEV_WARN, "bench.allreduce-stall",
            "The all-reduce of %s over %d GPUs stalled in %d of %d iterations (over %.0fx the p50 of %.1f us): %s%s "
            "(+s: all-reduce time of the soak before it). Intermittent stalls with a steady p50 point at a link that "
            "retrains or replays (riser, slot, PCIe errors: `gpurig doctor` and `gpurig burn` show AER and replay "
            "counts), at ACS or the IOMMU sending peer traffic up to the root complex, or at CPU/host memory "
            "latency on SHM paths. Every iteration crosses every connection of NCCL's ring, so one of these carried "
            "it; NCCL %s: %s. Try again with NCCL_P2P_DISABLE=1 (everything through host "
            "memory): if the stalls go, the peer path is the cause; NCCL_DEBUG=INFO shows what NCCL picked.",
            gr_size_text(rep->ar[i].bytes, sz, sizeof(sz)), n, k->stalls, k->iters, GR_AR_STALL_FACTOR, k->p50_us,
            when, k->stalls > k->nslow ? " and more" : "", links[0] ? "connected" : "connections",
            links[0] ? links : (rep->ar_links_note ? rep->ar_links_note : "unknown"));
  }
}

/* How the collective library connected the GPUs, as far as it says: the
 * backend's "0 -> 1 P2P/IPC" lines. */
static void ar_transports(struct run *r)
{
  struct gr_bench_report *rep = r->rep;
  char buf[2048] = "";
  if (!r->be->transports)
    return;
  if (r->be->transports(r->st, buf, sizeof(buf)) != 0 || !buf[0]) {
    rep->ar_links_note = xstrdup(buf[0] ? buf : "the library did not say");
    return;
  }
  for (const char *p = buf; *p;) {
    int a, b, used = 0;
    size_t len = strcspn(p, "\n");
    if (sscanf(p, "%d -> %d %n", &a, &b, &used) == 2 && used > 0 && (size_t)used < len) {
      rep->ar_links = xrealloc(rep->ar_links, (rep->nar_links + 1) * sizeof(*rep->ar_links));
      struct gr_ar_link *l = &rep->ar_links[rep->nar_links++];
      l->from = a;
      l->to = b;
      snprintf(l->via, sizeof(l->via), "%.*s", (int)(len - (size_t)used), p + used);
    }
    p += len + (p[len] == '\n');
  }
  if (!rep->nar_links)
    rep->ar_links_note = xstrdup("the library's answer named no connection");
}

/* The largest all-reduce: --allreduce-max, or a quarter of the least free
 * GPU memory (send and receive buffers, with room to spare), rounded down to
 * a power of two. A note names whichever of the two set it, and 0 means not
 * run. */
static size_t ar_largest(struct run *r, int n)
{
  char a[32], b[32];
  size_t fr = min_free(r, n), want = r->cfg->ar_max_bytes;
  bool by_memory = fr > 0 && fr / 4 < want;
  size_t max = pow2_floor(by_memory ? fr / 4 : want);
  if (max < GR_BENCH_AR_MIN_BYTES && by_memory)
    ar_note(r->rep, "not run: too little free GPU memory (%s free; the smallest all-reduce, %s, needs 4 times that)",
            gr_size_text(fr, a, sizeof(a)), gr_size_text(GR_BENCH_AR_MIN_BYTES, b, sizeof(b)));
  else if (max < GR_BENCH_AR_MIN_BYTES)
    ar_note(r->rep, "not run: --allreduce-max %s is below the smallest size measured (%s)",
            gr_size_text(want, a, sizeof(a)), gr_size_text(GR_BENCH_AR_MIN_BYTES, b, sizeof(b)));
  else if (max < want && by_memory)
    ar_note(r->rep, "sizes capped at %s by free GPU memory: a quarter of the %s free, rounded down to a power of two",
            gr_size_text(max, a, sizeof(a)), gr_size_text(fr, b, sizeof(b)));
  else if (max < want)
    ar_note(r->rep, "sizes capped at %s by --allreduce-max %s, rounded down to a power of two",
            gr_size_text(max, a, sizeof(a)), gr_size_text(want, b, sizeof(b)));
  return max < GR_BENCH_AR_MIN_BYTES ? 0 : max;
}

static void allreduce_tests(struct run *r, int n)
{
  struct gr_bench_report *rep = r->rep;
  char why[512] = "";
  if (n < 2) {
    ar_note(rep, "an all-reduce needs two GPUs or more");
    return;
  }
  for (int g = 0; g < n; g++)
    if (rep->gpus[g].lost) {
      ar_note(rep, "not run: GPU%d stopped answering earlier", g);
      return;
    }
  size_t max = ar_largest(r, n);
  if (max == 0)
    return;
  if (r->be->allreduce_open(r->st, max, why, sizeof(why)) != 0) {
    ar_note(rep, "not run: %s", why);
    if (strstr(why, "cannot open shared object"))
      finding(rep, GR_SEV_INFO, "bench.allreduce-skipped", "The all-reduce was not measured: %s. %s", why,
              r->be->collective_install);
    else /* the library is there but cannot start: training jobs will fail the same way */
      finding(rep, GR_SEV_WARN, "bench.allreduce-error",
              "%s is installed but could not start an all-reduce over the GPUs: %s. Run with %s "
              "to see why; training jobs on this machine will stop the same way.",
              r->be->collective, why, r->be->collective_debug);
    return;
  }
  const char *cn = r->be->collective_name(r->st);
  snprintf(rep->collective, sizeof(rep->collective), "%s", cn && *cn ? cn : r->be->collective);
  ar_sweep(r, n, max);
  ar_transports(r); /* after an all-reduce: NCCL 2.22+ connects the GPUs at the first */
  gr_bench_plateau(rep, 0.05);
  ar_stall_findings(r, n);
}

/* ------------------------------------------------------- threshold checks */

/* A read (pull) clearly slower than the same pair written (push). */
static bool pull_below_push(const struct run *r, const struct gr_bench_result *res)
{
  enum gr_bench_kind push = res->kind == GR_BK_P2P_READ ? GR_BK_P2P : res->kind == GR_BK_P2P_BIDIR_READ ? GR_BK_P2P_BIDIR
                                                                                                        : GR_BK_COUNT;
  for (size_t i = 0; push != GR_BK_COUNT && i < r->rep->nresults; i++) {
    const struct gr_bench_result *w = &r->rep->results[i];
    if (w->kind == push && w->engine == res->engine && w->src == res->src && w->dst == res->dst &&
        w->status == GR_BS_OK)
      return res->median < w->median * 0.9;
  }
  return false;
}

static void below_floor(struct run *r, const struct gr_bench_result *res)
{
  char a[64], b[64], lab[256];
  const char *id = "bench.host-bw";
  if (res->kind == GR_BK_LOCAL) {
    id = "bench.local-bw";
    snprintf(lab, sizeof(lab), "%s %s", gpu_label(r->rep, res->src, a, sizeof(a)), gr_bench_kind_title(res->kind));
  } else if (res->kind == GR_BK_P2P || res->kind == GR_BK_P2P_BIDIR || res->kind == GR_BK_P2P_READ ||
             res->kind == GR_BK_P2P_BIDIR_READ) {
    bool pull = res->kind == GR_BK_P2P_READ || res->kind == GR_BK_P2P_BIDIR_READ;
    id = "bench.p2p-bw";
    snprintf(lab, sizeof(lab), "%s -> %s (%s%s%s)", gpu_label(r->rep, res->src, a, sizeof(a)),
             gpu_label(r->rep, res->dst, b, sizeof(b)), res->via_host ? "through host memory" : "direct P2P",
             pull ? ", pulled by the destination" : "",
             res->kind == GR_BK_P2P_BIDIR || res->kind == GR_BK_P2P_BIDIR_READ ? ", both directions at once" : "");
  } else {
    int g = res->kind == GR_BK_D2H ? res->src : res->dst;
    snprintf(lab, sizeof(lab), "%s %s", gpu_label(r->rep, g, a, sizeof(a)), gr_bench_kind_title(res->kind));
  }
  finding(r->rep, GR_SEV_WARN, id,
          "%s, %s copy: %.1f GB/s (median of %d), %.0f%% of the %.1f GB/s limit of %s; a healthy path gives at "
          "least %.1f GB/s.%s",
          lab, res->engine == GR_ENGINE_SM ? "SM" : "copy-engine", res->median, res->nsamples,
          res->limit_gbps > 0 ? res->median / res->limit_gbps * 100 : 0, res->limit_gbps, res->link,
          res->floor_gbps,
          strstr(res->link, "capable of") ? " The link trains below what both ends support: `gpurig doctor` "
                                           "names the cause (riser, slot, BIOS setting)."
          : res->kind == GR_BK_LOCAL ? " Memory clocks held low (power cap, thermal) or a failing GPU show this way."
          : pull_below_push(r, res) ? " The same pair written (pushed by the source) is faster: peer reads are slower "
                                      "than posted writes on this path (some AMD root complexes and PCIe switches do "
                                      "this). Code that reads peer memory (NCCL_P2P_READ_ENABLE=1, kernels loading "
                                      "a peer's buffers) gets the read rate."
                                     : " With the link at full width and speed, look at host memory placement "
                                       "(NUMA), the IOMMU mode and power-saving states (`gpurig doctor`).");
}

static void check_results(struct run *r)
{
  struct gr_bench_report *rep = r->rep;
  size_t staged = 0, pairs = 0;
  char sz[32];
  bool floors = (double)rep->cfg.bytes >= gr_health("bench_floor_min_mib") * MIB;
  for (size_t i = 0; i < rep->nresults; i++) {
    const struct gr_bench_result *res = &rep->results[i];
    if (res->kind == GR_BK_P2P && res->engine == GR_ENGINE_CE && res->status == GR_BS_OK) {
      pairs++;
      staged += res->via_host;
    }
    if (res->status == GR_BS_ERROR && !involves_lost(r, res->src, res->dst)) {
      char a[16], b[16];
      finding(rep, GR_SEV_FAIL, "bench.copy-error", "%s -> %s (%s, %s): the copy failed: %s",
              gr_bench_endpoint(res->src, a, sizeof(a)), gr_bench_endpoint(res->dst, b, sizeof(b)),
              gr_bench_kind_title(res->kind), gr_engine_name(res->engine), res->note ? res->note : "");
    }
    bool aggregate = res->kind == GR_BK_H2D_ALL || res->kind == GR_BK_D2H_ALL; /* their own finding */
    if (res->status == GR_BS_OK && res->floor_gbps > 0 && res->median < res->floor_gbps && floors && !aggregate)
      below_floor(r, res);
  }
  if (!floors)
    finding(rep, GR_SEV_INFO, "bench.small-copies",
            "Copies of %s are bound by per-copy latency, not by the links: the figures are not held against "
            "their floors (from %.0f MiB up they are).",
            gr_size_text(rep->cfg.bytes, sz, sizeof(sz)), gr_health("bench_floor_min_mib"));
  if (staged)
    finding(rep, GR_SEV_INFO, "bench.no-peer",
            "%zu of %zu GPU pairs have no peer access from the driver: their copies went through host memory "
            "(marked h), written and read alike. NCCL does the same for them (its SHM transport). nvbandwidth "
            "waives such pairs, so these figures have no nvbandwidth counterpart: compare them only with each other.",
            staged, pairs);
  const struct gr_prediction *p = r->links->p;
  char bound[256];
  rep->ar_predicted_gbps = p && p->ngpus == rep->ngpus ? p->nccl_default.busbw_gbps : 0;
  if (rep->ar_plateau_gbps > 0 && rep->ar_predicted_gbps > 0 &&
      rep->ar_plateau_gbps < rep->ar_predicted_gbps * gr_health("bench_allreduce_min"))
    finding(rep, GR_SEV_WARN, "bench.allreduce-bw",
            "All-reduce bus bandwidth plateaus at %.1f GB/s, %.0f%% of the %.1f GB/s the topology predicts for "
            "NCCL's defaults (%s). Run with NCCL_DEBUG=INFO to see which transport NCCL picked.",
            rep->ar_plateau_gbps, rep->ar_plateau_gbps / rep->ar_predicted_gbps * 100, rep->ar_predicted_gbps,
            gr_ring_bound_text(p, &p->nccl_default, bound, sizeof(bound)));
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
  struct run r = {.be = be, .st = state, .cfg = cfg, .links = links, .rep = rep};
  int rc = -1;
  memset(rep, 0, sizeof(*rep));
  rep->cfg = *cfg;
  snprintf(rep->backend, sizeof(rep->backend), "%s", be->name);
  int n = be->device_count(state);
  if (n <= 0) {
    gr_fail(err, GR_EXIT_CANNOT_RUN, "the driver reports no GPU to measure");
    goto out;
  }
  join_gpus(&r, n);
  rep->cfg.bytes = copy_bytes(&r, n);
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
  free(rep->ar_note);
  free(rep->ar_links);
  free(rep->ar_links_note);
  memset(rep, 0, sizeof(*rep));
}

/* ------------------------------------------------ backends and GPU facts */

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
      return 0;
    }
    off += (size_t)snprintf(why + off, off < sizeof(why) ? sizeof(why) - off : 0, "%s%s", off ? "; " : "", one);
    if (off >= sizeof(why))
      off = sizeof(why) - 1;
  }
  return gr_fail(err, GR_EXIT_CANNOT_RUN, "nothing to measure: %s", why);
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
