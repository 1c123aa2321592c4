/* gpurig bench's all-reduce tests (gpu/bench_internal.h): the sweep over
 * sizes and placements, the soak and its stalls, the transports NCCL chose,
 * and the plan of what they will cost. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/bench_internal.h"

/* ------------------------------------------------------------ all-reduce */

size_t min_free(struct run *r, int n)
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

/* Why the all-reduce did not run, or what capped its sizes, is an info
 * finding: bench.allreduce-note. */
#define AR_NOTE "bench.allreduce-note"

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
  finding(rep, GR_SEV_FAIL, "bench.allreduce-error", "the all-reduce failed at %zu bytes%s: %s", spec->bytes,
          spec->iter_seconds ? " (soak)" : spec->in_place ? " (in place)" : "", r->be->last_error(r->st));
  for (int g = 0; g < n; g++)
    if (!rep->gpus[g].lost && r->be->device_lost(r->st, g))
      rep->gpus[g].lost = true;
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
double plan_allreduce(struct run *r, int n)
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
            "latency on SHM paths. Every iteration crosses every connection of %s's ring, so one of these carried "
            "it; %s %s: %s. Try again with NCCL_P2P_DISABLE=1 (everything through host "
            "memory): if the stalls go, the peer path is the cause; NCCL_DEBUG=INFO shows what %s picked.",
            gr_size_text(rep->ar[i].bytes, sz, sizeof(sz)), n, k->stalls, k->iters, GR_AR_STALL_FACTOR, k->p50_us,
            when, k->stalls > k->nslow ? " and more" : "", r->be->collective, r->be->collective,
            links[0] ? "connected" : "connections",
            links[0] ? links : (rep->ar_links_note ? rep->ar_links_note : "unknown"), r->be->collective);
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
    finding(r->rep, GR_SEV_INFO, AR_NOTE, "not run: too little free GPU memory (%s free; the smallest all-reduce, %s, needs 4 times that)",
            gr_size_text(fr, a, sizeof(a)), gr_size_text(GR_BENCH_AR_MIN_BYTES, b, sizeof(b)));
  else if (max < GR_BENCH_AR_MIN_BYTES)
    finding(r->rep, GR_SEV_INFO, AR_NOTE, "not run: --allreduce-max %s is below the smallest size measured (%s)",
            gr_size_text(want, a, sizeof(a)), gr_size_text(GR_BENCH_AR_MIN_BYTES, b, sizeof(b)));
  else if (max < want && by_memory)
    finding(r->rep, GR_SEV_INFO, AR_NOTE, "sizes capped at %s by free GPU memory: a quarter of the %s free, rounded down to a power of two",
            gr_size_text(max, a, sizeof(a)), gr_size_text(fr, b, sizeof(b)));
  else if (max < want)
    finding(r->rep, GR_SEV_INFO, AR_NOTE, "sizes capped at %s by --allreduce-max %s, rounded down to a power of two",
            gr_size_text(max, a, sizeof(a)), gr_size_text(want, b, sizeof(b)));
  return max < GR_BENCH_AR_MIN_BYTES ? 0 : max;
}

void allreduce_tests(struct run *r, int n)
{
  struct gr_bench_report *rep = r->rep;
  char why[512] = "";
  for (int g = 0; g < n; g++)
    if (rep->gpus[g].lost) {
      finding(rep, GR_SEV_INFO, AR_NOTE, "not run: GPU%d stopped answering earlier", g);
      return;
    }
  size_t max = ar_largest(r, n);
  if (max == 0)
    return;
  if (r->be->allreduce_open(r->st, max, why, sizeof(why)) != 0) {
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
  if (n > 1)
    ar_transports(r); /* after an all-reduce: NCCL 2.22+ connects the GPUs at the first */
  else /* one rank reduces in place: busbw is 0 by nccl-tests' rule, the time is the kernel's */
    rep->ar_links_note = xasprintf("one GPU: %s connects nothing; busbw is 0 by nccl-tests' rule, the time is "
                                   "one GPU's reduction kernel", r->be->collective);
  gr_bench_plateau(rep, 0.05);
  ar_stall_findings(r, n);
}

