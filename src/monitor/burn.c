/* Burn-in: loads, the sampler, verdicts; see burn.h. */
#include "monitor/burn.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "facts/pcilink.h"
#include "model/topo.h"

enum { AR_PER_ROUND = 8 };

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
  size_t ar_cap;
  double last_sample;    /* CLOCK_MONOTONIC of the last step */
  size_t copy_bytes;     /* per copy, within the memory bound */
};

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

static double now_s(void)
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
  x->order = xcalloc(r->ngpu + 1, sizeof(*x->order));
  for (unsigned i = 0; i < r->ngpu; i++) {
    struct gr_burn_gpu *g = &r->gpu[i];
    g->cuda = cuda_of(x->be, x->st, gr_sampler_gpu_static(x->s, i)->busid);
    g->selected = (!x->o->gpus || (i < 64 && (x->o->gpus >> i) & 1)) && g->cuda >= 0;
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
    g->lost_s = now_s() - x->t0;
  }
}

/* After a failed gang: which GPUs the backend says are gone. */
static void find_lost(struct run *x, const unsigned *gpus, unsigned n)
{
  for (unsigned k = 0; k < n; k++)
    if (x->be->device_lost(x->st, x->r->gpu[gpus[k]].cuda))
      mark_lost(x, gpus[k]);
}

/* The selected GPUs loaded at elapsed time t (not lost, active in the
 * pattern), at most cap, into who; each is marked joined. */
static unsigned active_gpus(struct run *x, double t, unsigned *who, unsigned cap)
{
  unsigned n = 0;
  for (unsigned k = 0; k < x->nsel && n < cap; k++) {
    unsigned i = x->order[k];
    struct gr_burn_gpu *g = &x->r->gpu[i];
    if (g->lost || !active(x, k, t))
      continue;
    if (g->joined_s < 0)
      g->joined_s = t;
    who[n++] = i;
  }
  return n;
}

static void account(struct run *x, unsigned i, const struct gr_copy_spec *sp, const struct gr_copy_sample *out,
                    bool host)
{
  struct gr_burn_gpu *g = &x->r->gpu[i];
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
    find_lost(x, who, n);
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
  unsigned who[GR_BENCH_GANG_MAX], peer[GR_BENCH_GANG_MAX], n = 0, last = 0;
  bool have = false;
  for (unsigned k = 0; k < x->nsel && n < GR_BENCH_GANG_MAX; k++) {
    unsigned i = x->order[k];
    struct gr_burn_gpu *g = &x->r->gpu[i];
    if (g->lost || !active(x, k, t))
      continue;
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
    find_lost(x, x->order, x->nsel);
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

static double median_of(const double *v, size_t n)
{
  double *c = xcalloc(n + 1, sizeof(*c));
  memcpy(c, v, n * sizeof(*c));
  qsort(c, n, sizeof(*c), cmp_double);
  double m = n ? c[n / 2] : 0;
  free(c);
  return m;
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

/* A few all-reduce iterations, each timed alone; a slow one is a stall. */
static void round_allreduce(struct run *x, double t)
{
  struct gr_burn_report *r = x->r;
  for (int k = 0; k < AR_PER_ROUND; k++) {
    struct gr_ar_sample a;
    struct gr_ar_spec spec = {.bytes = x->copy_bytes, .warmup = 0, .iters = 1};
    if (x->be->allreduce(x->st, &spec, &a) != 0) {
      char *note = xasprintf("the all-reduce failed at +%.0f s: %s", t, x->be->last_error(x->st));
      str_copy(r->ar_note, sizeof(r->ar_note), note);
      free(note);
      x->ar_ready = false;
      find_lost(x, x->order, x->nsel);
      return;
    }
    if (r->nar == x->ar_cap)
      grow_array((void **)&r->ar_s, sizeof(*r->ar_s), &x->ar_cap, r->nar + 1);
    r->ar_s[r->nar++] = a.seconds;
    /* the median of what came before: a stall cannot hide in its own median */
    if (r->nar > 8) {
      double med = median_of(r->ar_s, r->nar - 1);
      if (a.seconds > x->o->stall_factor * med) {
        r->stall = xrealloc(r->stall, (r->nstall + 1) * sizeof(*r->stall));
        struct gr_burn_stall *st = &r->stall[r->nstall++];
        st->mono = now_s();
        st->at_s = st->mono - x->t0;
        st->seconds = a.seconds;
        st->median_s = med;
        seen_near(x->s, now_s(), st->seen, sizeof(st->seen));
      }
    }
  }
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
  const int iters = 2;
  if (x->be->gemm(x->st, devs, (int)n, iters, out) != 0) {
    find_lost(x, who, n);
    return;
  }
  double flops = 2.0 * iters * pow((double)x->r->gemm_n, 3);
  for (unsigned k = 0; k < n; k++) {
    struct gr_burn_gpu *g = &x->r->gpu[who[k]];
    g->gemm_flops += flops;
    g->gemm_seconds += out[k].seconds;
    g->tflops_last = out[k].seconds > 0 ? flops / out[k].seconds / 1e12 : 0;
    if (out[k].wrong && g->gemm_wrong++ == 0)
      str_copy(g->gemm_wrong_text, sizeof(g->gemm_wrong_text), out[k].what);
  }
}

/* The GEMM size: 4096 (fp16 in, fp32 out: 8 n^2 bytes a GPU), cut to keep
 * the matrices under the memory share of the GPU with the least free. */
static void open_gemm(struct run *x)
{
  struct gr_burn_report *r = x->r;
  if (!(x->o->loads & GR_LOAD_GEMM))
    return;
  if (!x->be->gemm_open || !x->be->gemm) {
    snprintf(r->gemm_note, sizeof(r->gemm_note), "no GEMM load: the %s backend has none", x->be->name);
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
    char *note = xasprintf("no GEMM load: %s", n < 64 ? "too little free GPU memory" : why);
    str_copy(r->gemm_note, sizeof(r->gemm_note), note);
    free(note);
    return;
  }
  r->gemm_n = n;
  r->loads_run |= GR_LOAD_GEMM;
}

/* ------------------------------------------------------------ watching */

static void fold_sample(struct run *x, double dt)
{
  const struct gr_sample *smp = gr_sampler_sample(x->s, 0);
  for (unsigned i = 0; smp && i < x->r->ngpu; i++) {
    struct gr_burn_gpu *g = &x->r->gpu[i];
    const struct gr_gpu_dynamic *d = &smp->gpu[i];
    if (!g->selected)
      continue;
    if (smp->gpu_read[i] == GR_READ_LOST)
      mark_lost(x, i);
    if (smp->gpu_read[i] != GR_READ_FRESH || g->joined_s < 0)
      continue;
    for (unsigned b = 0; d->throttle.ok && b < GR_THR_NBITS; b++)
      if ((unsigned)d->throttle.v & (1u << b))
        g->throttle_s[b] += dt;
    if (d->temp_c.ok && (!g->temp_max.ok || d->temp_c.v > g->temp_max.v))
      g->temp_max = d->temp_c;
    if (d->power_w.ok && (!g->power_max.ok || d->power_w.v > g->power_max.v))
      g->power_max = d->power_w;
    if (d->sm_clock_mhz.ok && (!g->sm_clock_min.ok || d->sm_clock_mhz.v < g->sm_clock_min.v))
      g->sm_clock_min = d->sm_clock_mhz;
    if (d->pcie_replay.ok) {
      if (!g->replay_ok)
        g->replay_start = d->pcie_replay.v;
      g->replay_ok = true;
      g->replay_end = d->pcie_replay.v;
    }
  }
}

static int sample_if_due(struct run *x, struct gr_err *err)
{
  double now = now_s();
  if (now - x->last_sample < x->o->interval_s)
    return 0;
  if (gr_sampler_step(x->s, err) != 0)
    return -1;
  fold_sample(x, now - x->last_sample);
  x->last_sample = now;
  if (x->o->progress)
    x->o->progress(x->o->progress_ctx, x->s, now - x->t0, x->o->duration_s);
  return 0;
}

/* ------------------------------------------------------------ the run */

static void open_allreduce(struct run *x)
{
  struct gr_burn_report *r = x->r;
  if (!(x->o->loads & GR_LOAD_ALLREDUCE))
    return;
  if (x->o->pattern != GR_PAT_ALL || x->nsel != r->ngpu || x->nsel < 2) {
    snprintf(r->ar_note, sizeof(r->ar_note), "the all-reduce runs over every GPU at once: only with the pattern "
                                             "all, no --gpus subset, and two GPUs or more");
    return;
  }
  char why[256];
  if (!x->be->allreduce_open || x->be->allreduce_open(x->st, x->copy_bytes, why, sizeof(why)) != 0) {
    char *note = xasprintf("no all-reduce: %s", x->be->allreduce_open ? why : "no collective library");
    str_copy(r->ar_note, sizeof(r->ar_note), note);
    free(note);
    return;
  }
  x->ar_ready = true;
  r->loads_run |= GR_LOAD_ALLREDUCE;
}

static int run_loads(struct run *x, struct gr_err *err)
{
  const struct gr_burn_opts *o = x->o;
  x->t0 = x->last_sample = now_s();
  if (gr_sampler_step(x->s, err) != 0) /* the baseline before any load */
    return -1;
  if (o->loads & GR_LOAD_PCIE)
    x->r->loads_run |= GR_LOAD_PCIE;
  if (o->loads & GR_LOAD_P2P)
    x->r->loads_run |= GR_LOAD_P2P;
  open_allreduce(x);
  open_gemm(x);
  for (;;) {
    double t = now_s() - x->t0;
    if (t >= o->duration_s)
      break;
    if (o->stop && o->stop()) {
      x->r->interrupted = true;
      break;
    }
    if (x->r->gemm_n)
      round_gemm(x, t);
    if (o->loads & GR_LOAD_PCIE)
      round_pcie(x, t);
    if (o->loads & GR_LOAD_P2P)
      round_p2p(x, t);
    if (x->ar_ready)
      round_allreduce(x, t);
    if (sample_if_due(x, err) != 0)
      return -1;
  }
  if (gr_sampler_step(x->s, err) != 0) /* the last word after the load */
    return -1;
  fold_sample(x, now_s() - x->last_sample);
  x->r->run_s = now_s() - x->t0;
  return 0;
}

/* ------------------------------------------------------------ verdicts */

static struct gr_finding *verdict(struct gr_burn_report *r, enum gr_sev sev, const char *id, const char *subject,
                                  const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static struct gr_finding *verdict(struct gr_burn_report *r, enum gr_sev sev, const char *id, const char *subject,
                                  const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  struct gr_finding *f = gr_finding_vadd(&r->verdicts, sev, id, fmt, ap);
  va_end(ap);
  gr_finding_subject(f, -1, subject, NULL);
  return f;
}

/* Whether the topology GPU under a link takes part in the run. */
static bool gpu_of_topo_selected(const struct run *x, int topo_gpu)
{
  for (unsigned i = 0; i < x->r->ngpu; i++)
    if (gr_sampler_topo_gpu(x->s, i) == topo_gpu)
      return x->r->gpu[i].selected;
  return false;
}

static void link_verdicts(struct run *x)
{
  static const char *const sev_word[] = {"correctable", "non-fatal", "fatal"};
  for (size_t i = 0; i < gr_sampler_nlinks(x->s); i++) {
    const struct gr_mon_link *l = gr_sampler_link(x->s, i);
    if (l->gpu >= 0 && !gpu_of_topo_selected(x, l->gpu))
      continue;
    char place[200], subj[160];
    snprintf(subj, sizeof(subj), "%s <-> %s", l->dev_name, l->port_name);
    snprintf(place, sizeof(place), "%s%s%s", l->slot[0] ? "slot " : "", l->slot, l->slot[0] ? ", " : "");
    int gen, width;
    gr_mon_link_max(x->s, i, &gen, &width);
    double allowed = gr_pcie_error_allowance(gen, width, x->r->run_s);
    enum gr_sev worst = GR_SEV_OK;
    for (int end = 0; end < 2; end++)
      for (int k = 0; k < 3; k++) {
        struct gr_aer_window w = gr_sampler_link_aer(x->s, i, end, k);
        if (!w.since.valid || w.since.value == 0)
          continue;
        bool over = k > 0 || (allowed >= 0 && (double)w.since.value > allowed);
        enum gr_sev sev = over ? GR_SEV_FAIL : GR_SEV_WARN;
        char allow[160] = "", lab[32];
        if (k == 0 && allowed >= 0)
          snprintf(allow, sizeof(allow), "; a healthy %s link allows %.0f in this time (DCGM's error-rate rule)",
                   gr_pcie_label(gen, width, lab, sizeof(lab)), allowed);
        struct gr_finding *f = verdict(
            x->r, sev, "burn.link", subj, "%s%s: %llu %s AER error%s in %.0f s under load, at %s%s: %s", place,
            l->dev_name, (unsigned long long)w.since.value, sev_word[k], w.since.value == 1 ? "" : "s", x->r->run_s,
            end == 0 ? l->dev_name : l->port_name, allow,
            over ? "reseat or replace the riser or cable, or lower this slot to Gen3 in the BIOS"
                 : "watch it: reseat the riser or cable if it grows");
        gr_finding_evidence(f, "AER", "%s %s since start %llu", end == 0 ? "device end" : "port end", sev_word[k],
                            (unsigned long long)w.since.value);
        if (sev > worst)
          worst = sev;
      }
    if (worst == GR_SEV_OK)
      verdict(x->r, GR_SEV_OK, "burn.link", subj, "%s%s <-> %s: no AER error in %.0f s under load", place,
              l->dev_name, l->port_name, x->r->run_s);
  }
}

/* The reasons a GPU slowed under load that point at cooling or power, with
 * the time each held (power cap and idle are normal under load). */
static int throttle_words(const struct gr_burn_gpu *g, double run_s, char *buf, size_t cap)
{
  static const unsigned bad[] = {3, 5, 6, 7}; /* hw slowdown, thermal (driver), thermal (hw), power brake */
  size_t used = 0;
  int n = 0;
  buf[0] = '\0';
  for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
    double t = g->throttle_s[bad[k]];
    if (t <= 0)
      continue;
    int w = snprintf(buf + used, cap - used, "%s%s for %.0f s of %.0f", n ? ", " : "", gr_throttle_word(bad[k]), t,
                     run_s);
    if (w > 0 && (size_t)w < cap - used)
      used += (size_t)w;
    n++;
  }
  return n;
}

static void gpu_verdict(struct run *x, unsigned i)
{
  struct gr_burn_gpu *g = &x->r->gpu[i];
  const char *name = gr_sampler_gpu_name(x->s, i);
  enum gr_sev worst = GR_SEV_OK;
  if (g->lost) {
    verdict(x->r, GR_SEV_FAIL, "burn.gpu-lost", name,
            "%s fell off the bus at +%.1f s under load (the others went on): check the riser or cable, the slot and "
            "the GPU's power cables; if it recurs at full load only, the power supply", name, g->lost_s);
    worst = GR_SEV_FAIL;
  }
  if (g->gemm_wrong) {
    verdict(x->r, GR_SEV_FAIL, "burn.gemm", name, "%s: %ld matrix product%s came out wrong (%s): this GPU computes "
            "wrong results under load; check its cooling and power, then replace it", name, g->gemm_wrong,
            g->gemm_wrong == 1 ? "" : "s", g->gemm_wrong_text);
    worst = GR_SEV_FAIL;
  }
  if (g->corrupt) {
    verdict(x->r, GR_SEV_FAIL, "burn.corrupt", name, "%s: %ld cop%s arrived wrong (%s): data through this GPU's "
            "link cannot be trusted", name, g->corrupt, g->corrupt == 1 ? "y" : "ies", g->corrupt_text);
    worst = GR_SEV_FAIL;
  }
  for (unsigned long k = 0; k < gr_sampler_nevents(x->s); k++) {
    const struct gr_mon_event *e = gr_sampler_event(x->s, k);
    if (e && e->kind == GR_EV_XID && e->gpu == (int)i) {
      verdict(x->r, e->f.sev, "burn.xid", name, "%s under load", e->f.text);
      if (e->f.sev > worst)
        worst = e->f.sev;
    }
  }
  int link = gr_sampler_gpu_link(x->s, i), gen = 0, width = 0;
  if (link >= 0)
    gr_mon_link_max(x->s, (size_t)link, &gen, &width);
  double allowed = gr_pcie_error_allowance(gen, width, x->r->run_s), replays = g->replay_end - g->replay_start;
  if (g->replay_ok && replays > 0) {
    enum gr_sev sev = allowed >= 0 && replays > allowed ? GR_SEV_FAIL : GR_SEV_WARN;
    verdict(x->r, sev, "burn.replay", name, "%s: %.0f PCIe replays in %.0f s under load%s%s%.0f%s", name, replays,
            x->r->run_s, allowed >= 0 ? "; a healthy link of this GPU's generation and width allows " : "",
            "", allowed >= 0 ? allowed : 0, allowed >= 0 ? " (DCGM's error-rate rule)" : "");
    if (sev > worst)
      worst = sev;
  }
  char thr[256];
  if (throttle_words(g, x->r->run_s, thr, sizeof(thr)) > 0) {
    verdict(x->r, GR_SEV_WARN, "burn.throttle", name, "%s slowed under load: %s (hottest %.0f C): clean the cooler, "
            "improve the case airflow or the spacing, or check the power cables", name, thr,
            g->temp_max.ok ? g->temp_max.v : 0);
    worst = worst > GR_SEV_WARN ? worst : GR_SEV_WARN;
  }
  if (worst == GR_SEV_OK) {
    double host = g->host_seconds > 0 ? g->host_bytes / g->host_seconds / 1e9 : 0;
    char tf[48] = "";
    if (g->gemm_seconds > 0)
      snprintf(tf, sizeof(tf), "%.1f TFLOPS fp16, ", g->gemm_flops / g->gemm_seconds / 1e12);
    verdict(x->r, GR_SEV_OK, "burn.gpu", name, "%s passed: %s%.1f GB/s host<->GPU under load, hottest %.0f C, up to "
            "%.0f W, no error", name, tf, host, g->temp_max.ok ? g->temp_max.v : 0,
            g->power_max.ok ? g->power_max.v : 0);
  }
}

static double percentile(const double *v, size_t n, double p)
{
  double *c = xcalloc(n + 1, sizeof(*c));
  memcpy(c, v, n * sizeof(*c));
  qsort(c, n, sizeof(*c), cmp_double);
  double q = n ? c[(size_t)fmin((double)(n - 1), floor(p * (double)n))] : 0;
  free(c);
  return q;
}

static void allreduce_verdict(struct run *x)
{
  struct gr_burn_report *r = x->r;
  if (!r->nar)
    return;
  r->ar_p50 = percentile(r->ar_s, r->nar, 0.5);
  r->ar_p99 = percentile(r->ar_s, r->nar, 0.99);
  r->ar_max = percentile(r->ar_s, r->nar, 1.0);
  if (!r->nstall) {
    verdict(r, GR_SEV_OK, "burn.allreduce", NULL, "all-reduce: %zu iterations, p50 %.3f ms, p99 %.3f ms, max %.3f ms, "
            "no stall (none over %.0fx the median)", r->nar, r->ar_p50 * 1e3, r->ar_p99 * 1e3, r->ar_max * 1e3,
            x->o->stall_factor);
    return;
  }
  for (size_t k = 0; k < r->nstall; k++) {
    const struct gr_burn_stall *st = &r->stall[k];
    verdict(r, GR_SEV_WARN, "burn.stall", NULL, "all-reduce stalled at +%.1f s: %.3f ms, %.0fx the median %.3f ms%s%s",
            st->at_s, st->seconds * 1e3, st->seconds / st->median_s, st->median_s * 1e3,
            st->seen[0] ? "; the sampler saw: " : "; the sampler saw nothing then", st->seen);
  }
}

/* Staggered: how many GPUs were loaded when the first warning or failure
 * came (the power-supply question: errors that start at the Nth GPU). */
static void staggered_step(struct run *x)
{
  if (x->o->pattern != GR_PAT_STAGGERED)
    return;
  for (unsigned long k = 0; k < gr_sampler_nevents(x->s); k++) {
    const struct gr_mon_event *e = gr_sampler_event(x->s, k);
    if (!e || e->f.sev < GR_SEV_WARN || e->mono_s < x->t0)
      continue;
    double at = e->mono_s - x->t0;
    unsigned loaded = 0;
    for (unsigned i = 0; i < x->r->ngpu; i++)
      loaded += x->r->gpu[i].joined_s >= 0 && x->r->gpu[i].joined_s <= at;
    verdict(x->r, GR_SEV_INFO, "burn.staggered", NULL,
            "staggered: the first problem came with %u of %u GPUs loaded (+%.0f s): %s%s", loaded, x->nsel, at,
            e->f.text, loaded > 1 ? "; a problem that starts only with several GPUs loaded points at the power "
                                  "supply or its cabling" : "");
    return;
  }
  verdict(x->r, GR_SEV_INFO, "burn.staggered", NULL, "staggered: no problem up to all %u GPUs loaded", x->nsel);
}

int gr_burn_run(const struct gr_bench_backend *be, void *state, struct gr_sampler *s, const struct gr_burn_opts *o,
                struct gr_burn_report *r, struct gr_err *err)
{
  struct run x = {.be = be, .st = state, .s = s, .o = o, .r = r};
  memset(r, 0, sizeof(*r));
  int rc = select_gpus(&x, err);
  if (rc == 0 && !be->copy_many && (o->loads & (GR_LOAD_PCIE | GR_LOAD_P2P)))
    rc = gr_fail(err, GR_EXIT_CANNOT_RUN, "the %s backend cannot run copies at once", be->name);
  if (rc == 0) {
    bound_memory(&x);
    rc = run_loads(&x, err);
  }
  if (rc == 0) {
    for (unsigned i = 0; i < r->ngpu; i++)
      if (r->gpu[i].selected)
        gpu_verdict(&x, i);
    link_verdicts(&x);
    allreduce_verdict(&x);
    staggered_step(&x);
    gr_findings_sort(&r->verdicts);
  }
  free(x.order);
  if (rc != 0)
    gr_burn_report_free(r);
  return rc;
}

void gr_burn_report_free(struct gr_burn_report *r)
{
  free(r->gpu);
  free(r->ar_s);
  free(r->stall);
  gr_findings_free(&r->verdicts);
  memset(r, 0, sizeof(*r));
}
