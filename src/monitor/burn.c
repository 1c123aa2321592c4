/* Burn-in: set-up, loads and the sampler; the verdicts are burn_verdict.c's.
 * See burn.h. */
#include "monitor/burn.h"

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model/topo.h"
#include "monitor/burn_run.h"

enum { AR_PER_ROUND = 8 };

enum { MEM_SHARE_PCT = 10 }; /* a load takes at most this share of a GPU's free memory */

/* The copies' size within the bound: each GPU holds a source and a
 * destination of copy_bytes (and the all-reduce two more), so the size is cut
 * to keep them under MEM_SHARE_PCT of the free memory the driver reports. */
static void bound_memory(struct run *x)
{
  x->copy_bytes = x->o->copy_bytes;
  for (unsigned k = 0; k < x->nsel; k++) {
    const struct gr_burn_gpu *g = &x->r->gpu[x->order[k]];
    size_t free_b = x->be->free_bytes(x->st, g->cuda);
    size_t cap = free_b / 100 * MEM_SHARE_PCT / 4;
    cap -= cap % 4096;
    if (free_b && cap >= 4096 && cap < x->copy_bytes) {
      x->copy_bytes = cap;
      snprintf(x->r->note, sizeof(x->r->note), "copies of %zu KiB: %d%% of the free memory of %s (%zu MiB) bounds "
               "the load's buffers", cap >> 10, MEM_SHARE_PCT, gr_sampler_gpu_name(x->s, x->order[k]), free_b >> 20);
    }
  }
}

double burn_now_s(void)
{
  return gr_clock_s(CLOCK_MONOTONIC);
}

/* ------------------------------------------------------------ set-up */

/* The measurement backend's GPU at the sampler GPU's bus id, -1 none. */
static int cuda_of(const struct gr_bench_backend *be, void *st, const char *busid)
{
  char b[64], norm[32];
  for (int d = 0; d < be->device_count(st); d++)
    if (be->device_busid(st, d, b, sizeof(b)) == 0 && gr_busid_normalize(b, norm, sizeof(norm)) &&
        strcmp(norm, busid) == 0)
      return d;
  return -1;
}

static int select_gpus(struct run *x, struct gr_err *err)
{
  struct gr_burn_report *r = x->r;
  r->ngpu = gr_sampler_ngpu(x->s);
  r->gpu = xcalloc(r->ngpu + 1, sizeof(*r->gpu));
  r->nlink = gr_sampler_nlinks(x->s);
  r->link = xcalloc(r->nlink + 1, sizeof(*r->link));
  r->first_problem_s = -1;
  x->order = xcalloc(r->ngpu + 1, sizeof(*x->order));
  for (unsigned i = 0; i < r->ngpu; i++) {
    struct gr_burn_gpu *g = &r->gpu[i];
    g->cuda = cuda_of(x->be, x->st, gr_sampler_gpu_static(x->s, i)->busid);
    g->selected = i < 64 && (!x->o->gpus || (x->o->gpus >> i) & 1) && g->cuda >= 0;
    g->joined_s = g->lost_s = -1;
    if (g->selected)
      x->order[x->nsel++] = i;
  }
  if (x->nsel == 0)
    return gr_fail(err, GR_EXIT_FAIL, "no GPU to load: %s", x->o->gpus ? "--gpus names none the driver sees"
                                                                       : "the compute runtime sees none of the GPUs");
  return 0;
}

/* Which selected GPUs run at elapsed time t: all; one more each step
 * (staggered); one at a time (per-gpu). */
/* Pairs: the p-th pair (a < b) in the order (0,1), (0,2), ... (1,2), ... */
static bool in_pair(unsigned nsel, unsigned p, unsigned k)
{
  for (unsigned a = 0; a + 1 < nsel; a++)
    for (unsigned b = a + 1; b < nsel; b++)
      if (p-- == 0)
        return k == a || k == b;
  return false;
}

static bool active(const struct run *x, unsigned k, double t)
{
  double step = x->o->duration_s / x->nsel;
  unsigned npairs = x->nsel * (x->nsel - 1) / 2;
  switch (x->o->pattern) {
  case GR_PAT_PAIRS: {
    if (npairs == 0)
      return true; /* one GPU: itself */
    unsigned p = (unsigned)(t / (x->o->duration_s / npairs));
    return in_pair(x->nsel, p < npairs ? p : npairs - 1, k);
  }
  case GR_PAT_STAGGERED: return t >= step * k;
  case GR_PAT_PER_GPU: return (unsigned)(t / step) == k || (k == x->nsel - 1 && t >= step * k);
  default: return true;
  }
}

/* ------------------------------------------------------------ loads */

static void mark_lost(struct run *x, unsigned i)
{
  struct gr_burn_gpu *g = &x->r->gpu[i];
  if (!g->lost) {
    g->lost = true;
    g->lost_s = burn_now_s() - x->t0;
  }
}

/* After a failed gang: which GPUs the backend says are gone; a failure no
 * lost GPU explains stops the load (ls), a verdict of its own. */
static void find_lost(struct run *x, const unsigned *gpus, unsigned n, struct load_stop *ls, const char *what)
{
  unsigned lost = 0;
  for (unsigned k = 0; k < n; k++)
    if (x->be->device_lost(x->st, x->r->gpu[gpus[k]].cuda)) {
      pthread_mutex_lock(&x->mu);
      mark_lost(x, gpus[k]);
      pthread_mutex_unlock(&x->mu);
      lost++;
    }
  if (lost || ls->stopped)
    return;
  ls->stopped = true;
  ls->at_s = burn_now_s() - x->t0;
  snprintf(ls->why, sizeof(ls->why), "%s: %s", what, x->be->last_error(x->st));
}

/* The selected GPUs loaded at elapsed time t (not lost, active in the
 * pattern), at most cap, into who; each is marked joined. */
static unsigned active_gpus(struct run *x, double t, unsigned *who, unsigned cap)
{
  unsigned n = 0;
  pthread_mutex_lock(&x->mu); /* lost is the sampler thread's too */
  for (unsigned k = 0; k < x->nsel && n < cap; k++) {
    unsigned i = x->order[k];
    struct gr_burn_gpu *g = &x->r->gpu[i];
    if (g->lost || !active(x, k, t))
      continue;
    if (g->joined_s < 0)
      g->joined_s = t;
    who[n++] = i;
  }
  pthread_mutex_unlock(&x->mu);
  return n;
}

static void account(struct run *x, unsigned i, const struct gr_copy_spec *sp, const struct gr_copy_sample *out,
                    bool host)
{
  struct gr_burn_gpu *g = &x->r->gpu[i];
  pthread_mutex_lock(&x->mu);
  double bytes = (double)sp->bytes * sp->loops * (sp->reverse ? 2 : 1);
  double secs = out->seconds[0] + (sp->reverse ? out->seconds[1] : 0);
  if (host) {
    g->host_bytes += bytes;
    g->host_seconds += secs;
  } else {
    g->p2p_bytes += bytes;
    g->p2p_seconds += secs;
  }
  if (out->corrupt && g->corrupt++ == 0)
    snprintf(g->corrupt_text, sizeof(g->corrupt_text), "%s: byte %zu arrived as 0x%02x, sent as 0x%02x",
             host ? (out->corrupt_dir ? "GPU -> host" : "host -> GPU") : "peer copy", out->bad_offset, out->got,
             out->expected);
  pthread_mutex_unlock(&x->mu);
}

/* Every active GPU's host link busy in both directions at once. */
static void round_pcie(struct run *x, double t)
{
  struct gr_copy_spec sp[GR_BENCH_GANG_MAX];
  struct gr_copy_sample out[GR_BENCH_GANG_MAX];
  unsigned who[GR_BENCH_GANG_MAX], n = active_gpus(x, t, who, GR_BENCH_GANG_MAX);
  for (unsigned k = 0; k < n; k++)
    sp[k] = (struct gr_copy_spec){.kind = GR_BK_HOST_BIDIR, .engine = GR_ENGINE_CE, .src = GR_BENCH_HOST,
                                  .dst = x->r->gpu[who[k]].cuda, .bytes = x->copy_bytes, .loops = 4, .reverse = true,
                                  .seed = (unsigned)(t * 1000) + who[k]};
  if (n == 0)
    return;
  if (x->be->copy_many(x->st, sp, (int)n, out) != 0) {
    find_lost(x, who, n, &x->copies, "host<->GPU copies");
    return;
  }
  for (unsigned k = 0; k < n; k++)
    account(x, who[k], &sp[k], &out[k], true);
}

/* Peer copies, both ways at once, between disjoint pairs of active GPUs
 * that can do P2P (0-1, 2-3, ... in index order). */
static void round_p2p(struct run *x, double t)
{
  struct gr_copy_spec sp[GR_BENCH_GANG_MAX];
  struct gr_copy_sample out[GR_BENCH_GANG_MAX];
  unsigned who[GR_BENCH_GANG_MAX], peer[GR_BENCH_GANG_MAX], n = 0, last = 0, act[64];
  unsigned nact = active_gpus(x, t, act, 64);
  bool have = false;
  for (unsigned k = 0; k < nact && n < GR_BENCH_GANG_MAX; k++) {
    unsigned i = act[k];
    const struct gr_burn_gpu *g = &x->r->gpu[i];
    if (!have) {
      last = i;
      have = true;
      continue;
    }
    const struct gr_burn_gpu *a = &x->r->gpu[last];
    have = false;
    if (!x->be->can_peer(x->st, a->cuda, g->cuda)) {
      last = i; /* try this one with the next */
      have = true;
      continue;
    }
    sp[n] = (struct gr_copy_spec){.kind = GR_BK_P2P_BIDIR, .engine = GR_ENGINE_CE, .src = a->cuda, .dst = g->cuda,
                                  .bytes = x->copy_bytes, .loops = 4, .reverse = true, .seed = (unsigned)t + i};
    peer[n] = i;
    who[n++] = last;
  }
  if (n == 0)
    return;
  if (x->be->copy_many(x->st, sp, (int)n, out) != 0) {
    find_lost(x, x->order, x->nsel, &x->copies, "peer copies");
    return;
  }
  for (unsigned k = 0; k < n; k++) { /* both ends of a pair carried the copies */
    account(x, who[k], &sp[k], &out[k], false);
    account(x, peer[k], &sp[k], &out[k], false);
  }
}

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* The median of the window (at most AR_WINDOW values: no allocation). */
static double median_of(const double *v, size_t n)
{
  double c[AR_WINDOW];
  memcpy(c, v, n * sizeof(*c));
  qsort(c, n, sizeof(*c), cmp_double);
  return n ? c[n / 2] : 0;
}

/* What the sampler said nearest to a moment: the last event at or before it. */
static void seen_near(const struct gr_sampler *s, double mono, char *out, size_t cap)
{
  out[0] = '\0';
  for (unsigned long k = gr_sampler_nevents(s); k-- > 0;) {
    const struct gr_mon_event *e = gr_sampler_event(s, k);
    if (!e)
      break;
    if (e->mono_s <= mono + 1.0) {
      if (mono - e->mono_s < 10.0)
        str_copy(out, cap, e->f.text);
      return;
    }
  }
}

/* One iteration into the histogram, the maximum and the window. */
static void ar_record(struct run *x, double secs)
{
  struct gr_burn_report *r = x->r;
  int bin = secs > AR_BIN0 ? (int)floor(log(secs / AR_BIN0) / log(AR_STEP)) : 0;
  x->ar_hist[bin < 0 ? 0 : bin >= AR_BINS ? AR_BINS - 1 : bin]++;
  if (secs > r->ar_max)
    r->ar_max = secs;
  r->nar++;
  if (x->ar_win_n < AR_WINDOW)
    x->ar_win[x->ar_win_n++] = secs;
  else
    x->ar_win[(r->nar - 1) % AR_WINDOW] = secs;
}

static void add_stall(struct run *x, double secs, double med)
{
  struct gr_burn_report *r = x->r;
  if (r->nstall++ >= GR_BURN_STALLS_KEPT)
    return; /* counted, not kept: a run full of stalls has said so by then */
  r->stall = xrealloc(r->stall, r->nstall * sizeof(*r->stall));
  struct gr_burn_stall *st = &r->stall[r->nstall - 1];
  st->mono = burn_now_s();
  st->at_s = st->mono - x->t0;
  st->seconds = secs;
  st->median_s = med;
  gr_sampler_lock(x->s); /* the sampler thread steps meanwhile */
  seen_near(x->s, st->mono, st->seen, sizeof(st->seen));
  gr_sampler_unlock(x->s);
}

/* A few all-reduce iterations, each timed alone; a slow one is a stall. */
static void round_allreduce(struct run *x, double t)
{
  struct gr_burn_report *r = x->r;
  unsigned who[64];
  active_gpus(x, t, who, 64); /* every GPU takes part: each is loaded from now */
  for (int k = 0; k < AR_PER_ROUND; k++) {
    /* a stop does not wait for the round's end */
    if (k > 0 && x->o->stop && x->o->stop())
      return;
    struct gr_ar_sample a;
    struct gr_ar_spec spec = {.bytes = x->copy_bytes, .warmup = 0, .iters = 1};
    if (x->be->allreduce(x->st, &spec, &a) != 0) {
      /* whether or not a lost GPU explains it, the collective stopped */
      x->allreduce.stopped = true;
      x->allreduce.at_s = t;
      snprintf(x->allreduce.why, sizeof(x->allreduce.why), "%s", x->be->last_error(x->st));
      x->ar_ready = false;
      find_lost(x, x->order, x->nsel, &x->allreduce, "the all-reduce");
      return;
    }
    /* the median of the iterations before it: a stall cannot hide in its own median */
    double med = r->nar >= 8 ? median_of(x->ar_win, x->ar_win_n) : 0;
    if (r->nar >= 8 && a.seconds > x->o->stall_factor * med)
      add_stall(x, a.seconds, med);
    ar_record(x, a.seconds);
  }
}

/* How many products this round: enough that they fill GEMM_SHARE of the
 * round, the copies and the all-reduce the rest. The loads take turns, and
 * two products a round (0.4 ms on an H200) beside 64 MiB copies (2.5 ms)
 * left a real H200 at 19% busy and 133 of its 700 W: a burn-in that does
 * not load the GPU. Capped at half a second a call, so that a stop is seen. */
enum { GEMM_SHARE_PCT = 75, GEMM_MIN_ITERS = 2, GEMM_MAX_ITERS = 4096 };
static int gemm_iters(const struct run *x)
{
  if (x->gemm_iter_s <= 0)
    return GEMM_MIN_ITERS;
  double want_s = x->others_s * GEMM_SHARE_PCT / (100.0 - GEMM_SHARE_PCT);
  if (want_s > 0.5)
    want_s = 0.5;
  double n = ceil(want_s / x->gemm_iter_s);
  return n < GEMM_MIN_ITERS ? GEMM_MIN_ITERS : n > GEMM_MAX_ITERS ? GEMM_MAX_ITERS : (int)n;
}

/* Matrix products on every active GPU at once, each checked. */
static void round_gemm(struct run *x, double t)
{
  int devs[64];
  unsigned who[64], n = active_gpus(x, t, who, 64);
  struct gr_gemm_sample out[64];
  for (unsigned k = 0; k < n; k++)
    devs[k] = x->r->gpu[who[k]].cuda;
  if (n == 0)
    return;
  const int iters = gemm_iters(x);
  double t0 = burn_now_s();
  if (x->be->gemm(x->st, devs, (int)n, iters, out) != 0) {
    find_lost(x, who, n, &x->gemm, "the matrix products");
    return;
  }
  /* the wall clock, as the other loads are timed: the call with its checks */
  x->gemm_iter_s = (burn_now_s() - t0) / iters;
  double flops = 2.0 * iters * pow((double)x->r->gemm_n, 3);
  pthread_mutex_lock(&x->mu);
  for (unsigned k = 0; k < n; k++) {
    struct gr_burn_gpu *g = &x->r->gpu[who[k]];
    x->gemm_busy[who[k]] = true;
    g->gemm_flops += flops;
    g->gemm_seconds += out[k].seconds;
    g->tflops_last = out[k].seconds > 0 ? flops / out[k].seconds / 1e12 : 0;
    if (out[k].wrong && g->gemm_wrong++ == 0)
      str_copy(g->gemm_wrong_text, sizeof(g->gemm_wrong_text), out[k].what);
  }
  pthread_mutex_unlock(&x->mu);
}

/* The GEMM size: 4096 (fp16 in, fp32 out: 8 n^2 bytes a GPU), cut to keep
 * the matrices under the memory share of the GPU with the least free. */
static void open_gemm(struct run *x)
{
  struct gr_burn_report *r = x->r;
  if (!(x->o->loads & GR_LOAD_GEMM))
    return;
  if (!x->be->gemm_open || !x->be->gemm) {
    snprintf(x->gemm_open_fail, sizeof(x->gemm_open_fail), "the %s backend has no matrix products", x->be->name);
    return;
  }
  int n = 4096;
  for (unsigned k = 0; k < x->nsel; k++) {
    size_t free_b = x->be->free_bytes(x->st, x->r->gpu[x->order[k]].cuda);
    int fit = free_b ? (int)sqrt((double)free_b / 100 * MEM_SHARE_PCT / 8) / 64 * 64 : n;
    if (fit < n)
      n = fit;
  }
  char why[256];
  if (n < 64 || x->be->gemm_open(x->st, n, why, sizeof(why)) != 0) {
    str_copy(x->gemm_open_fail, sizeof(x->gemm_open_fail), n < 64 ? "too little free GPU memory" : why);
    return;
  }
  r->gemm_n = n;
  r->loads_run |= GR_LOAD_GEMM;
}

/* ------------------------------------------------------------ watching */

/* What the sampler saw of a GPU while it ran matrix products (the rate is
 * held against it: a GPU that never reached load, or slowed, says why). */
static void fold_gemm_gpu(struct gr_burn_gpu *g, const struct gr_gpu_dynamic *d)
{
  if (d->util_gpu_pct.ok) { /* a driver that does not tell is not taken for an idle GPU */
    g->gemm_samples++;
    if (d->util_gpu_pct.v > g->gemm_util_max)
      g->gemm_util_max = d->util_gpu_pct.v;
  }
  if (d->sm_clock_mhz.ok && d->sm_clock_mhz.v > g->gemm_clock_max)
    g->gemm_clock_max = d->sm_clock_mhz.v;
  if (d->power_w.ok && d->power_w.v > g->gemm_power_max)
    g->gemm_power_max = d->power_w.v;
  if (d->power_limit_w.ok)
    g->gemm_power_limit = d->power_limit_w.v;
  if (d->throttle.ok)
    g->gemm_thr_bits |= (unsigned)d->throttle.v;
  if (d->link_gen.ok && (g->gemm_link_gen_min == 0 || (int)d->link_gen.v < g->gemm_link_gen_min))
    g->gemm_link_gen_min = (int)d->link_gen.v;
}

static void fold_gpu(struct run *x, unsigned i, const struct gr_sample *smp, double dt)
{
  struct gr_burn_gpu *g = &x->r->gpu[i];
  const struct gr_gpu_dynamic *d = &smp->gpu[i];
  if (smp->gpu_read[i] == GR_READ_LOST)
    mark_lost(x, i);
  if (smp->gpu_read[i] == GR_READ_FRESH && g->joined_s < 0 && d->pcie_replay.ok) {
    /* the count the load starts from: a GPU that joined late in a short run
     * (staggered, a starved machine) may be sampled only once after it */
    g->replay_before = d->pcie_replay.v;
    g->replay_seen = true;
  }
  if (smp->gpu_read[i] != GR_READ_FRESH || g->joined_s < 0)
    return;
  for (unsigned b = 0; d->throttle.ok && b < GR_THR_NBITS; b++)
    if ((unsigned)d->throttle.v & (1u << b))
      g->throttle_s[b] += dt;
  if (d->temp_c.ok && (!g->temp_max.ok || d->temp_c.v > g->temp_max.v))
    g->temp_max = d->temp_c;
  if (d->power_w.ok && (!g->power_max.ok || d->power_w.v > g->power_max.v))
    g->power_max = d->power_w;
  if (d->power_w.ok) {
    g->power_sum += d->power_w.v;
    g->power_n++;
  }
  if (d->sm_clock_mhz.ok && (!g->sm_clock_min.ok || d->sm_clock_mhz.v < g->sm_clock_min.v))
    g->sm_clock_min = d->sm_clock_mhz;
  if (d->pcie_replay.ok) {
    if (!g->replay_ok)
      g->replay_start = g->replay_seen ? g->replay_before : d->pcie_replay.v;
    g->replay_ok = true;
    g->replay_end = d->pcie_replay.v;
  }
  if (i < 64 && x->gemm_busy[i])
    fold_gemm_gpu(g, d);
}

/* The narrowest width each link ran at while the GPUs were loaded. */
static void fold_links(struct run *x, const struct gr_sample *smp)
{
  for (size_t i = 0; smp->pci && i < x->r->nlink; i++) {
    const struct gr_mon_link *l = gr_sampler_link(x->s, i);
    for (int end = 0; end < 2; end++) {
      int node = end == 0 ? l->dev : l->port;
      int w = node >= 0 && (size_t)node < smp->npci ? smp->pci[node].cur_width : 0;
      if (w > 0 && (x->r->link[i].width == 0 || w < x->r->link[i].width))
        x->r->link[i].width = w;
    }
  }
}

/* The events this sample found: Xids per GPU, the first problem (staggered). */
static void fold_events(struct run *x)
{
  struct gr_burn_report *r = x->r;
  for (; x->ev_seen < gr_sampler_nevents(x->s); x->ev_seen++) {
    const struct gr_mon_event *e = gr_sampler_event(x->s, x->ev_seen);
    if (!e || e->mono_s < x->t0)
      continue;
    if (e->kind == GR_EV_XID && e->gpu >= 0 && (unsigned)e->gpu < r->ngpu && r->gpu[e->gpu].selected) {
      struct gr_burn_gpu *g = &r->gpu[e->gpu];
      if (g->xids++ == 0)
        str_copy(g->xid_text, sizeof(g->xid_text), e->f.text);
      if (e->f.sev > g->xid_sev)
        g->xid_sev = e->f.sev;
    }
    if (e->f.sev >= GR_SEV_WARN && r->first_problem_s < 0) {
      r->first_problem_s = e->mono_s - x->t0;
      str_copy(r->first_problem, sizeof(r->first_problem), e->f.text);
    }
  }
}

/* Every GPU's draw in one sample summed, loaded or not (a power supply
 * carries them all), when every GPU reports one. */
static void fold_power_total(struct gr_burn_report *r, const struct gr_sample *smp)
{
  double sum = 0;
  for (unsigned i = 0; i < smp->ngpu; i++) {
    if (smp->gpu_read[i] == GR_READ_LOST || !smp->gpu[i].power_w.ok)
      return;
    sum += smp->gpu[i].power_w.v;
  }
  if (!smp->ngpu)
    return;
  if (sum > r->power_total_max)
    r->power_total_max = sum;
  r->power_total_sum += sum;
  r->power_total_n++;
}

static void fold_sample(struct run *x, double dt)
{
  const struct gr_sample *smp = gr_sampler_sample(x->s, 0);
  if (!smp)
    return;
  fold_power_total(x->r, smp);
  for (unsigned i = 0; i < x->r->ngpu; i++)
    if (x->r->gpu[i].selected)
      fold_gpu(x, i, smp, dt);
  memset(x->gemm_busy, 0, sizeof(x->gemm_busy));
  fold_links(x, smp);
  fold_events(x);
  burn_judge_running(x, burn_now_s() - x->t0);
}

/* One sample: the step, what it says folded into the report, the caller's
 * progress call (its log line). The sampler thread's, and the main
 * thread's for the last word after the load. */
static int take_sample(struct run *x, double dt, struct gr_err *err)
{
  if (gr_sampler_step(x->s, err) != 0)
    return -1;
  double now = burn_now_s();
  pthread_mutex_lock(&x->mu);
  fold_sample(x, dt);
  if (x->o->progress)
    x->o->progress(x->o->progress_ctx, x->s, x->r, now - x->t0, x->o->duration_s);
  pthread_mutex_unlock(&x->mu);
  return 0;
}

/* The sampler's own thread: a sample every interval on a fixed schedule,
 * whatever the loads do meanwhile (a copy or a collective that takes long,
 * or a driver call that never returns, does not stop the timeline). */
static void *sampler_main(void *arg)
{
  struct run *x = arg;
  double next = x->last_sample;
  while (!atomic_load(&x->sampler_quit)) {
    next += x->o->interval_s;
    double now = burn_now_s();
    if (next < now)
      next = now; /* fell behind: start again from now */
    while (!atomic_load(&x->sampler_quit) && (now = burn_now_s()) < next) {
      double left = fmin(next - now, 0.05); /* a quit is seen within 50 ms */
      struct timespec ts = {0, (long)(left * 1e9)};
      nanosleep(&ts, NULL);
    }
    if (atomic_load(&x->sampler_quit))
      break;
    if (take_sample(x, now - x->last_sample, &x->sampler_err) != 0) {
      atomic_store(&x->sampler_failed, true);
      break;
    }
    x->last_sample = now;
  }
  return NULL;
}

/* ------------------------------------------------------------ the run */

static void open_allreduce(struct run *x)
{
  struct gr_burn_report *r = x->r;
  if (!(x->o->loads & GR_LOAD_ALLREDUCE))
    return;
  /* every GPU of the runtime: on a machine with two vendors' GPUs the
   * sampler sees both, the runtime (and the all-reduce) one vendor's */
  unsigned visible = 0;
  for (unsigned i = 0; i < r->ngpu; i++)
    visible += r->gpu[i].cuda >= 0;
  if (x->o->pattern != GR_PAT_ALL || x->nsel != visible || x->nsel < 2) {
    snprintf(x->ar_skipped, sizeof(x->ar_skipped), "%s", x->nsel < 2 ? "one GPU has nothing to all-reduce with"
             : x->o->pattern != GR_PAT_ALL ? "the all-reduce runs over every GPU at once: only with the pattern all"
                                            : "the all-reduce runs over every GPU at once: not with a --gpus subset");
    return;
  }
  char why[256];
  if (!x->be->allreduce_open || x->be->allreduce_open(x->st, x->copy_bytes, why, sizeof(why)) != 0) {
    str_copy(x->ar_open_fail, sizeof(x->ar_open_fail), x->be->allreduce_open ? why : "no collective library");
    return;
  }
  x->ar_ready = true;
  r->loads_run |= GR_LOAD_ALLREDUCE;
}

/* Whether to stop: the duration is over, or a signal asked (interrupted). */
static bool run_over(struct run *x)
{
  int sig = x->o->stop ? x->o->stop() : 0;
  if (sig) {
    x->r->interrupted = true;
    x->r->stop_signal = sig;
    return true;
  }
  /* every load runs once whatever the duration: on a starved machine the
   * first products took longer than a short run, which then ended with
   * its copies and all-reduce never run and nothing of them judged */
  return x->round_done && burn_now_s() - x->t0 >= x->o->duration_s;
}

/* One round: each load in turn, a stop seen between them (and between
 * all-reduce iterations), so that it does not wait for a whole round. */
static int one_round(struct run *x, struct gr_err *err)
{
  const struct gr_burn_opts *o = x->o;
  double others = 0;
  for (int k = 0; k < 4; k++) {
    double t = burn_now_s() - x->t0;
    if (k == 1) /* the products are done: the rest of the round is the other loads */
      others = -t;
    if (k == 0 && x->r->gemm_n && !x->gemm.stopped)
      round_gemm(x, t);
    else if (k == 1 && (o->loads & GR_LOAD_PCIE) && !x->copies.stopped)
      round_pcie(x, t);
    else if (k == 2 && (o->loads & GR_LOAD_P2P) && !x->copies.stopped)
      round_p2p(x, t);
    else if (k == 3 && x->ar_ready)
      round_allreduce(x, t);
    if (atomic_load(&x->sampler_failed)) {
      *err = x->sampler_err;
      return -1;
    }
    x->round_done |= k == 3;
    if (run_over(x))
      return 1;
  }
  x->others_s = others + (burn_now_s() - x->t0);
  return 0;
}

static int run_loads(struct run *x, struct gr_err *err)
{
  const struct gr_burn_opts *o = x->o;
  if (o->loads & GR_LOAD_PCIE)
    x->r->loads_run |= GR_LOAD_PCIE;
  if (o->loads & GR_LOAD_P2P)
    x->r->loads_run |= GR_LOAD_P2P;
  open_allreduce(x);
  open_gemm(x);
  /* The run's clock starts once the loads can run: starting NCCL and
   * filling the matrices takes seconds on a busy machine, and counted
   * against --duration it left a short run no time to load the GPUs (a
   * staggered run ended before its second step). */
  x->t0 = x->last_sample = burn_now_s();
  if (gr_sampler_step(x->s, err) != 0) /* the baseline before any load */
    return -1;
  x->ev_seen = gr_sampler_nevents(x->s); /* what came before the load is not the load's */
  int rc = run_over(x) ? 1 : 0;
  pthread_t th;
  bool threaded = rc == 0 && pthread_create(&th, NULL, sampler_main, x) == 0;
  while (rc == 0)
    rc = threaded ? one_round(x, err) : gr_fail(err, GR_EXIT_CANNOT_RUN, "cannot start the sampler's thread");
  if (threaded) {
    atomic_store(&x->sampler_quit, true);
    pthread_join(th, NULL);
  }
  x->r->run_s = burn_now_s() - x->t0;
  /* the last word after the load */
  return rc < 0 || take_sample(x, burn_now_s() - x->last_sample, err) != 0 ? -1 : 0;
}

int gr_burn_run(const struct gr_bench_backend *be, void *state, struct gr_sampler *s, const struct gr_burn_opts *o,
                struct gr_burn_report *r, struct gr_err *err)
{
  struct run x = {.be = be, .st = state, .s = s, .o = o, .r = r, .mu = PTHREAD_MUTEX_INITIALIZER};
  memset(r, 0, sizeof(*r));
  int rc = select_gpus(&x, err);
  if (rc == 0 && !be->copy_many && (o->loads & (GR_LOAD_PCIE | GR_LOAD_P2P)))
    rc = gr_fail(err, GR_EXIT_CANNOT_RUN, "the %s backend cannot run copies at once", be->name);
  if (rc == 0) {
    bound_memory(&x);
    rc = run_loads(&x, err);
  }
  if (rc == 0)
    burn_verdicts(&x);
  free(x.order);
  if (rc != 0)
    gr_burn_report_free(r);
  return rc;
}

void gr_burn_report_free(struct gr_burn_report *r)
{
  free(r->gpu);
  free(r->link);
  free(r->stall);
  gr_findings_free(&r->verdicts);
  memset(r, 0, sizeof(*r));
}
