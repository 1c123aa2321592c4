/* Printers of a `gpurig bench` report: every figure beside the link's
 * limit, NCCL's figure for it and the topology's prediction (docs/bench.md). */
#include <stdio.h>
#include <string.h>

#include "gpu/bench.h"
#include "print/common.h"
#include "print/bench.h"

static const char *fig(double v, const char *fmt, char *buf, size_t cap)
{
  if (v > 0)
    snprintf(buf, cap, fmt, v);
  else
    snprintf(buf, cap, "-");
  return buf;
}

/* The nvbandwidth v0.8 testcase (`nvbandwidth -t NAME`) that measures what
 * a row does; reverse: the other direction of a bidirectional row. NULL
 * where nvbandwidth has none (its latency tests time pointer chases, not
 * 16-byte copies; it has no SM copy within one GPU). */
static const char *nvbandwidth_test(enum gr_bench_kind k, enum gr_engine e, bool reverse)
{
  static const struct {
    enum gr_bench_kind kind;
    const char *ce, *sm;
  } names[] = {
      {GR_BK_H2D, "host_to_device_memcpy_ce", "host_to_device_memcpy_sm"},
      {GR_BK_D2H, "device_to_host_memcpy_ce", "device_to_host_memcpy_sm"},
      {GR_BK_HOST_BIDIR, "host_to_device_bidirectional_memcpy_ce", "host_to_device_bidirectional_memcpy_sm"},
      {GR_BK_LOCAL, "device_local_copy", NULL},
      {GR_BK_P2P, "device_to_device_memcpy_write_ce", "device_to_device_memcpy_write_sm"},
      {GR_BK_P2P_READ, "device_to_device_memcpy_read_ce", "device_to_device_memcpy_read_sm"},
      {GR_BK_P2P_BIDIR, "device_to_device_bidirectional_memcpy_write_ce",
       "device_to_device_bidirectional_memcpy_write_sm"},
      {GR_BK_P2P_BIDIR_READ, "device_to_device_bidirectional_memcpy_read_ce",
       "device_to_device_bidirectional_memcpy_read_sm"},
      {GR_BK_H2D_ALL, "host_to_all_memcpy_ce", "host_to_all_memcpy_sm"},
      {GR_BK_D2H_ALL, "all_to_host_memcpy_ce", "all_to_host_memcpy_sm"},
  };
  if (k == GR_BK_HOST_BIDIR && reverse) /* the GPU -> host side of the same run */
    return e == GR_ENGINE_CE ? "device_to_host_bidirectional_memcpy_ce" : "device_to_host_bidirectional_memcpy_sm";
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
    if (names[i].kind == k)
      return e == GR_ENGINE_CE ? names[i].ce : names[i].sm;
  return NULL;
}

static const struct gr_bench_result *find(const struct gr_bench_report *rep, enum gr_bench_kind k, enum gr_engine e,
                                          int src, int dst);

/* --like nvbandwidth: which of its testcases each kind of row matches, in
 * the order the rows come, so the two outputs can be held side by side. */
static void print_nvbandwidth_names(FILE *out, const struct gr_bench_report *rep)
{
  bool seen[GR_BK_COUNT][2] = {{false}};
  fprintf(out, "nvbandwidth testcases beside these rows (`nvbandwidth -t NAME`; its matrices are GB/s too; pairs "
               "through host memory (h) have none, nvbandwidth waives them):\n");
  for (size_t i = 0; i < rep->nresults; i++) {
    const struct gr_bench_result *r = &rep->results[i];
    const char *name = nvbandwidth_test(r->kind, r->engine, false);
    if (!name || seen[r->kind][r->engine])
      continue;
    seen[r->kind][r->engine] = true;
    char what[48];
    snprintf(what, sizeof(what), "%s%s, %s", gr_bench_kind_title(r->kind),
             r->kind == GR_BK_P2P || r->kind == GR_BK_P2P_BIDIR ? " (write)" : "", r->engine == GR_ENGINE_SM ? "SM" : "CE");
    fprintf(out, "  %-38s %s", what, name);
    if (r->kind == GR_BK_HOST_BIDIR)
      fprintf(out, " (its other direction: %s)", nvbandwidth_test(r->kind, r->engine, true));
    fputc('\n', out);
  }
}

static void print_header(FILE *out, const struct gr_bench_report *rep)
{
  char sz[32];
  const struct gr_bench_config *c = &rep->cfg;
  char first[48] = "";
  if (c->warmup > 0)
    snprintf(first, sizeof(first), " after %d discarded", c->warmup);
  char local[64] = "", lsz[32];
  if (c->local_bytes > c->bytes || c->loops < 8)
    snprintf(local, sizeof(local), " (within a GPU %s, %d a run)",
             gr_size_text(c->local_bytes > c->bytes ? c->local_bytes : c->bytes, lsz, sizeof(lsz)),
             c->loops < 8 ? 8 : c->loops);
  fprintf(out, "gpurig bench%s: %zu GPU%s; copies of %s%s, %d per run after %d warm-up copies, median of %d runs%s; "
               "data checked after every run\n",
          c->quick ? " --quick" : c->like_nvbandwidth ? " --like nvbandwidth" : "", rep->ngpus,
          rep->ngpus == 1 ? "" : "s", gr_size_text(c->bytes, sz, sizeof(sz)), local, c->loops, c->warmup_copies,
          c->samples, first);
  if (rep->expected_seconds > 0)
    fprintf(out, "%zu tests planned, expected to take %.1f s at the links' predicted rates\n", rep->planned_tests,
            rep->expected_seconds);
  for (size_t g = 0; g < rep->ngpus; g++)
    if (rep->gpus[g].topo_gpu < 0)
      fprintf(out, "note: GPU%zu (%s) is not in the topology: its limits come from what it reports\n", g,
              rep->gpus[g].busid);
  if (c->like_nvbandwidth) {
    if (c->bytes < (size_t)512 << 20)
      fprintf(out, "note: nvbandwidth copies 512 MiB; %s here, capped by free GPU memory (or --size)\n",
              gr_size_text(c->bytes, sz, sizeof(sz)));
    print_nvbandwidth_names(out, rep);
  }
}

/* The figure against its limits; beside: NULL, or a column printed right
 * after the median (the pairs' read figure). */
static void result_cells(FILE *out, const struct gr_bench_result *r, const char *beside)
{
  char m[16], l[16], n[16], p[16], f[16], pct[16];
  if (r->status != GR_BS_OK) {
    fprintf(out, "  %-7s %s\n", gr_bench_status_name(r->status), r->note ? r->note : "");
    return;
  }
  snprintf(pct, sizeof(pct), r->limit_gbps > 0 ? "%.0f%%" : "-", r->median / (r->limit_gbps > 0 ? r->limit_gbps : 1) * 100);
  fprintf(out, "%7s ", fig(r->median, "%.1f", m, sizeof(m)));
  if (beside)
    fprintf(out, "%7s ", beside);
  fprintf(out, "%6.1f%% %7s %6s %9s %6s %8s  %s\n", r->spread_pct,
          fig(r->limit_gbps, "%.1f", l, sizeof(l)), fig(r->nccl_gbps, "%.1f", n, sizeof(n)),
          fig(r->predicted_gbps, "%.1f", p, sizeof(p)), fig(r->floor_gbps, "%.1f", f, sizeof(f)), pct, r->link);
}

static void print_host(FILE *out, const struct gr_bench_report *rep)
{
  fprintf(out, "\nHost <-> GPU and within each GPU, GB/s per direction (pinned host memory on the GPU's NUMA node)\n");
  fprintf(out, "%-5s %-22s %-3s %7s %7s %7s %6s %9s %6s %8s  %s\n", "GPU", "test", "by", "median", "spread", "limit",
          "NCCL", "predicted", "floor", "of limit", "limit from");
  for (size_t i = 0; i < rep->nresults; i++) {
    const struct gr_bench_result *r = &rep->results[i];
    if (r->kind != GR_BK_H2D && r->kind != GR_BK_D2H && r->kind != GR_BK_HOST_BIDIR && r->kind != GR_BK_LOCAL)
      continue;
    int g = r->kind == GR_BK_D2H || r->kind == GR_BK_LOCAL ? r->src : r->dst;
    fprintf(out, "GPU%-2d %-22s %-3s ", g, gr_bench_kind_title(r->kind), gr_engine_name(r->engine));
    result_cells(out, r, NULL);
    if (r->kind == GR_BK_HOST_BIDIR && r->status == GR_BS_OK)
      fprintf(out, "%-5s %-22s %-3s %7.1f   (the other direction, at the same time)\n", "", "  GPU -> host", "",
              r->reverse_median);
  }
}

static const struct gr_bench_result *find(const struct gr_bench_report *rep, enum gr_bench_kind k, enum gr_engine e,
                                          int src, int dst);

/* Host <-> every GPU at once: the common window's aggregate against what
 * the GPUs reach alone and the limit the topology gives all at once, then
 * each GPU's own figure in the same runs. */
static void print_aggregates(FILE *out, const struct gr_bench_report *rep)
{
  char a[16], b[16], l[16], p[16], f[16], pct[16], al[16];
  for (int k = GR_BK_H2D_ALL; k <= GR_BK_D2H_ALL; k++) {
    bool in = k == GR_BK_H2D_ALL;
    const struct gr_bench_result *sum = find(rep, (enum gr_bench_kind)k, GR_ENGINE_CE, in ? GR_BENCH_HOST : GR_BENCH_ALL,
                                             in ? GR_BENCH_ALL : GR_BENCH_HOST);
    if (!sum)
      continue;
    if (k == GR_BK_H2D_ALL)
      fprintf(out, "\nHost <-> all GPUs at once, copy engine, GB/s (at once = total bytes / the longest GPU's time; sum "
                   "= each GPU's rate over its own time, added; alone = GPUs x the slowest GPU alone)\n"
                   "%-26s %7s %7s %7s %8s %7s %9s %6s %8s  %s\n",
              "test", "at once", "sum", "alone", "of alone", "limit", "predicted", "floor", "of limit", "limit from");
    fprintf(out, "%-26s ", gr_bench_kind_title(sum->kind));
    if (sum->status != GR_BS_OK) {
      fprintf(out, " %-7s %s\n", gr_bench_status_name(sum->status), sum->note ? sum->note : "");
      continue;
    }
    snprintf(pct, sizeof(pct), sum->limit_gbps > 0 ? "%.0f%%" : "-",
             sum->median / (sum->limit_gbps > 0 ? sum->limit_gbps : 1) * 100);
    snprintf(al, sizeof(al), sum->alone_gbps > 0 ? "%.0f%%" : "-",
             sum->median / (sum->alone_gbps > 0 ? sum->alone_gbps : 1) * 100);
    fprintf(out, "%7.1f %7s %7s %8s %7s %9s %6s %8s  %s\n", sum->median, fig(sum->sum_rates_gbps, "%.1f", a, sizeof(a)),
            fig(sum->alone_gbps, "%.1f", b, sizeof(b)), al, fig(sum->limit_gbps, "%.1f", l, sizeof(l)),
            fig(sum->predicted_gbps, "%.1f", p, sizeof(p)), fig(sum->floor_gbps, "%.1f", f, sizeof(f)), pct, sum->link);
    if (sum->shared[0])
      fprintf(out, "%-26s (%s)\n", "", sum->shared);
    for (size_t i = 0; i < rep->nresults; i++) {
      const struct gr_bench_result *one = &rep->results[i];
      int g = in ? one->dst : one->src;
      if (one->kind != sum->kind || g < 0)
        continue;
      fprintf(out, "  GPU%-21d ", g);
      if (one->status == GR_BS_OK)
        fprintf(out, "%7.1f   (its own rate at the same time; its limit alone %s)\n", one->median,
                fig(one->limit_gbps, "%.1f", l, sizeof(l)));
      else
        fprintf(out, " %-7s %s\n", gr_bench_status_name(one->status), one->note ? one->note : "");
    }
  }
}

static const struct gr_bench_result *find(const struct gr_bench_report *rep, enum gr_bench_kind k, enum gr_engine e,
                                          int src, int dst)
{
  for (size_t i = 0; i < rep->nresults; i++) {
    const struct gr_bench_result *r = &rep->results[i];
    if (r->kind == k && r->engine == e && r->src == src && r->dst == dst)
      return r;
  }
  return NULL;
}

static void cell(FILE *out, const struct gr_bench_result *r, double v)
{
  char buf[24];
  if (!r)
    snprintf(buf, sizeof(buf), "-");
  else if (r->status == GR_BS_OK)
    snprintf(buf, sizeof(buf), "%.1f %c", v, r->via_host ? 'h' : 'p');
  else
    snprintf(buf, sizeof(buf), "%s", r->status == GR_BS_SKIPPED ? "n/a" : gr_bench_status_name(r->status));
  fprintf(out, " %9s", buf);
}

static void print_matrix(FILE *out, const struct gr_bench_report *rep, enum gr_bench_kind k, enum gr_engine e,
                         const char *title)
{
  int n = (int)rep->ngpus;
  if (n < 2 || !find(rep, k, e, 0, 1))
    return;
  fprintf(out, "\n%s\n%-6s", title, "");
  for (int b = 0; b < n; b++) {
    char h[16];
    snprintf(h, sizeof(h), "GPU%d", b);
    fprintf(out, " %9s", h);
  }
  fputc('\n', out);
  for (int a = 0; a < n; a++) {
    fprintf(out, "GPU%-3d", a);
    for (int b = 0; b < n; b++) {
      if (a == b) {
        fprintf(out, " %9s", "-");
        continue;
      }
      /* bidirectional runs are stored once per pair (low -> high) with the
       * reverse direction alongside */
      bool bidir = k == GR_BK_P2P_BIDIR || k == GR_BK_P2P_BIDIR_READ;
      const struct gr_bench_result *r = bidir ? find(rep, k, e, a < b ? a : b, a < b ? b : a) : find(rep, k, e, a, b);
      cell(out, r, !r ? 0 : bidir && a > b ? r->reverse_median : r->median);
    }
    fputc('\n', out);
  }
}

/* Each pair's write (push) figure against its path, with its read (pull)
 * figure beside it where it was measured. */
static void print_pairs(FILE *out, const struct gr_bench_report *rep)
{
  bool any = false;
  for (size_t i = 0; i < rep->nresults; i++) {
    const struct gr_bench_result *r = &rep->results[i];
    if (r->kind != GR_BK_P2P || r->engine != GR_ENGINE_CE)
      continue;
    if (!any)
      fprintf(out,
              "\nGPU -> GPU against the path, copy engine, GB/s (write = pushed by the source, read = pulled by the "
              "destination)\n%-12s %-5s %7s %7s %7s %7s %6s %9s %6s %8s  %s\n",
              "pair", "via", "write", "read", "spread", "limit", "NCCL", "predicted", "floor", "of limit", "limit from");
    any = true;
    char pr[24], rd[16];
    const struct gr_bench_result *pull = find(rep, GR_BK_P2P_READ, GR_ENGINE_CE, r->src, r->dst);
    snprintf(pr, sizeof(pr), "GPU%d->GPU%d", r->src, r->dst);
    if (!pull)
      snprintf(rd, sizeof(rd), "-");
    else if (pull->status != GR_BS_OK)
      snprintf(rd, sizeof(rd), "%s", gr_bench_status_name(pull->status));
    else
      snprintf(rd, sizeof(rd), "%.1f", pull->median);
    fprintf(out, "%-12s %-5s ", pr, r->status != GR_BS_OK ? "" : r->via_host ? "host" : "p2p");
    result_cells(out, r, rd);
  }
}

static bool any_result(const struct gr_bench_report *rep, enum gr_bench_kind k)
{
  for (size_t i = 0; i < rep->nresults; i++)
    if (rep->results[i].kind == k)
      return true;
  return false;
}

/* A matrix over host and every GPU (row = from) of one latency kind. */
static void latency_matrix(FILE *out, const struct gr_bench_report *rep, enum gr_bench_kind k, enum gr_engine e,
                           const char *fmt)
{
  int n = (int)rep->ngpus;
  char h[16];
  fprintf(out, "%-6s", "from");
  fprintf(out, " %9s", "host");
  for (int b = 0; b < n; b++) {
    snprintf(h, sizeof(h), "GPU%d", b);
    fprintf(out, " %9s", h);
  }
  fputc('\n', out);
  for (int a = -1; a < n; a++) {
    fprintf(out, "%-6s", gr_bench_endpoint(a, h, sizeof(h)));
    for (int b = -1; b < n; b++) {
      const struct gr_bench_result *r = a == b ? NULL : find(rep, k, e, a, b);
      char v[24];
      if (!r)
        snprintf(v, sizeof(v), "-");
      else if (r->status != GR_BS_OK)
        snprintf(v, sizeof(v), "%s", gr_bench_status_name(r->status));
      else
        snprintf(v, sizeof(v), fmt, r->median);
      fprintf(out, " %9s", v);
    }
    fputc('\n', out);
  }
}

/* Two different quantities, side by side and each with its unit: the
 * copy engine's time per 16-byte copy (issue and completion included, µs),
 * and the SM's time per dependent load (ns), nvbandwidth's latency. */
static void print_latency(FILE *out, const struct gr_bench_report *rep)
{
  fprintf(out, "\nLatency, microseconds per 16-byte copy (copy engine; median of runs of 100)\n");
  latency_matrix(out, rep, GR_BK_LATENCY, GR_ENGINE_CE, "%.2f");
  if (!any_result(rep, GR_BK_CHASE))
    return;
  fprintf(out, "\nLatency, nanoseconds per dependent 8-byte load (SM pointer chase, one thread, as nvbandwidth's "
               "_latency_sm;\nrow = the memory read, column = the GPU reading it; - = no peer access)\n");
  latency_matrix(out, rep, GR_BK_CHASE, GR_ENGINE_SM, "%.0f");
}

/* The collective library's name without its version ("NCCL", "RCCL"). */
static const char *ar_lib(const struct gr_bench_report *rep, char *buf, size_t cap)
{
  size_t n = strcspn(rep->collective, " ");
  snprintf(buf, cap, "%.*s", (int)n, n ? rep->collective : "NCCL");
  return buf;
}

/* The GPU runtime whose events timed the all-reduce. */
static const char *ar_runtime(const struct gr_bench_report *rep)
{
  return strcmp(rep->backend, "hip") == 0 ? "HIP" : "CUDA";
}

/* "GPU0 -> GPU1 P2P/IPC" per line of the report's connections. */
static void print_ar_links(FILE *out, const struct gr_bench_report *rep)
{
  char lib[16];
  if (!rep->ar_links) {
    if (rep->ar_links_note)
      fprintf(out, "%s connections: %s (%s)\n", ar_lib(rep, lib, sizeof(lib)), rep->ngpus == 1 ? "none" : "unknown",
              rep->ar_links_note);
    return;
  }
  fprintf(out, "%s connected (its INFO log, one line per pair and transport):\n", ar_lib(rep, lib, sizeof(lib)));
  for (size_t i = 0; i < rep->nar_links; i++)
    fprintf(out, "  GPU%d -> GPU%d %s\n", rep->ar_links[i].from, rep->ar_links[i].to, rep->ar_links[i].via);
}

static void print_ar_soak(FILE *out, const struct gr_bench_report *rep)
{
  char sz[32];
  int iters = 0;
  for (size_t i = 0; i < rep->nar; i++)
    if (rep->ar[i].soak)
      iters = rep->ar[i].soak->iters;
  if (!iters)
    return;
  fprintf(out, "Soak: %d all-reduces per size, each timed alone (out of place, %s events); a stall is over %.0fx its "
          "size's p50 and %.0f us over it\n", iters, ar_runtime(rep), GR_AR_STALL_FACTOR, GR_AR_STALL_MIN_US);
  fprintf(out, "%10s %10s %10s %10s %7s  %s\n", "size", "p50 us", "p99 us", "max us", "stalls",
          "slowest: us #iteration +s (all-reduce time of the soak before it)");
  for (size_t i = 0; i < rep->nar; i++) {
    const struct gr_ar_soak *k = rep->ar[i].soak;
    if (!k)
      continue;
    fprintf(out, "%10s %10.1f %10.1f %10.1f %7d ", gr_size_text(rep->ar[i].bytes, sz, sizeof(sz)), k->p50_us,
            k->p99_us, k->max_us, k->stalls);
    for (int j = 0; j < k->nslow; j++)
      fprintf(out, "%s%.1f #%d +%.4f", j ? ", " : " ", k->slow[j].us, k->slow[j].index, k->slow[j].at_s);
    fprintf(out, "\n");
  }
}

static void print_allreduce(FILE *out, const struct gr_bench_report *rep)
{
  char sz[32], a[32], b[32];
  fprintf(out, "\nAll-reduce, %s, float sum over %zu GPUs in one process (busbw = algbw x 2(n-1)/n, as nccl-tests)\n",
          rep->collective[0] ? rep->collective : "NCCL", rep->ngpus);
  if (rep->nar == 0) {
    fprintf(out, "  not run (the findings say why)\n");
    return;
  }
  int lo = 0, hi = 0;
  for (size_t i = 0; i < rep->nar; i++) {
    lo = i == 0 || rep->ar[i].iters < lo ? rep->ar[i].iters : lo;
    hi = rep->ar[i].iters > hi ? rep->ar[i].iters : hi;
  }
  if (rep->nar > 0 && lo == hi)
    fprintf(out, "%d timed after %d warm-up per size and placement (nccl-tests -n %d -w %d)", hi, rep->ar[0].warmup,
            hi, rep->ar[0].warmup);
  else if (rep->nar > 0)
    fprintf(out, "%d to %d timed (fewer at larger sizes) after %d warm-up per size and placement", lo, hi,
            rep->ar[0].warmup);
  if (rep->nar > 0)
    fprintf(out, "\ntime: the slowest GPU's %s events; host time: nccl-tests' host clock, from every stream idle "
            "to every stream done\n", ar_runtime(rep));
  fprintf(out, "%10s %-38s   %-38s   %s\n", "", "out-of-place", "in-place", "host time us");
  fprintf(out, "%10s %9s %10s %10s %6s   %9s %10s %10s %6s   %9s %9s\n", "size", "time us", "algbw GB/s",
          "busbw GB/s", "wrong", "time us", "algbw GB/s", "busbw GB/s", "wrong", "out", "in");
  for (size_t i = 0; i < rep->nar; i++) {
    const struct gr_ar_row *r = &rep->ar[i];
    fprintf(out, "%10s %9.1f %10.2f %10.2f %6ld   %9.1f %10.2f %10.2f %6ld   %9.1f %9.1f\n",
            gr_size_text(r->bytes, sz, sizeof(sz)), r->time_us, r->algbw_gbps, r->busbw_gbps, r->wrong, r->ip_time_us,
            r->ip_algbw_gbps, r->ip_busbw_gbps, r->ip_wrong, r->host_us, r->ip_host_us);
  }
  char lib[16];
  if (rep->ar_plateau_gbps > 0) /* the library that ran: RCCL keeps NCCL's P2P rules */
    fprintf(out, "Plateau: busbw %.1f GB/s (out-of-place, events) from %s to %s%s; the topology predicts %s GB/s with "
            "%s's defaults\n",
            rep->ar_plateau_gbps, gr_size_text(rep->ar_plateau_from, a, sizeof(a)),
            gr_size_text(rep->ar_plateau_to, b, sizeof(b)),
            rep->ar_rising ? " (still rising at the largest size: larger messages would give more)" : "",
            fig(rep->ar_predicted_gbps, "%.1f", sz, sizeof(sz)), ar_lib(rep, lib, sizeof(lib)));
  print_ar_links(out, rep);
  print_ar_soak(out, rep);
}

void gr_print_bench_findings(FILE *out, const struct gr_findings *fs)
{
  for (size_t i = 0; i < fs->n; i++) {
    const struct gr_finding *f = &fs->v[i];
    fprintf(out, "  %-4s %s: %s%s%s\n", gr_sev_name(f->sev), f->id, f->subject ? f->subject : "",
            f->subject ? ": " : "", f->text);
  }
}

json_t *gr_bench_findings_json(const struct gr_findings *fs)
{
  json_t *a = json_array();
  for (size_t i = 0; i < fs->n; i++) {
    json_t *f = json_object();
    json_object_set_new(f, "severity", json_string(gr_sev_name(fs->v[i].sev)));
    json_object_set_new(f, "id", json_string(fs->v[i].id));
    if (fs->v[i].subject)
      json_object_set_new(f, "subject", gr_json_text(fs->v[i].subject));
    json_object_set_new(f, "text", gr_json_text(fs->v[i].text));
    json_array_append_new(a, f);
  }
  return a;
}

static void print_findings(FILE *out, const struct gr_bench_report *rep)
{
  size_t nf = rep->findings.count[GR_SEV_FAIL], nw = rep->findings.count[GR_SEV_WARN];
  fprintf(out, "\nFindings:\n");
  gr_print_bench_findings(out, &rep->findings);
  if (rep->findings.n == 0)
    fprintf(out, "  none: every figure is above its floor and every data check passed\n");
  fprintf(out, "\n%zu fail, %zu warn; measured in %.1f s\n", nf, nw, rep->wall_seconds);
}

void gr_print_bench(FILE *out, const struct gr_bench_report *rep)
{
  print_header(out, rep);
  print_host(out, rep);
  print_aggregates(out, rep);
  print_matrix(out, rep, GR_BK_P2P, GR_ENGINE_CE,
               "GPU -> GPU write (push: the source issues it), copy engine, GB/s (row = source; p = direct P2P, h = "
               "through host memory)");
  print_matrix(out, rep, GR_BK_P2P_READ, GR_ENGINE_CE,
               "GPU -> GPU read (pull: the destination issues it), copy engine, GB/s (row = source)");
  print_matrix(out, rep, GR_BK_P2P_BIDIR, GR_ENGINE_CE,
               "GPU <-> GPU write, both directions at once, copy engine, GB/s per direction (row = source)");
  print_matrix(out, rep, GR_BK_P2P_BIDIR_READ, GR_ENGINE_CE,
               "GPU <-> GPU read, both directions at once, copy engine, GB/s per direction (row = source)");
  print_matrix(out, rep, GR_BK_P2P, GR_ENGINE_SM, "GPU -> GPU write (push), SM copy kernel, GB/s (row = source)");
  print_matrix(out, rep, GR_BK_P2P_READ, GR_ENGINE_SM,
               "GPU -> GPU read (pull: the kernel runs on the destination), SM copy kernel, GB/s (row = source)");
  print_pairs(out, rep);
  print_latency(out, rep);
  print_allreduce(out, rep);
  print_findings(out, rep);
}

/* ------------------------------------------------------------------ JSON */

static json_t *jpos(double v)
{
  return v > 0 ? json_real(v) : json_null();
}

static json_t *endpoint_json(int e)
{
  return e == GR_BENCH_HOST ? json_null() : e == GR_BENCH_ALL ? json_string("all") : json_integer(e);
}

static json_t *result_json(const struct gr_bench_result *r)
{
  json_t *o = json_object(), *s = json_array();
  bool lat = r->kind == GR_BK_LATENCY, chase = r->kind == GR_BK_CHASE;
  const char *unit[4] = {"samples_gbps", "median_gbps", "min_gbps", "max_gbps"};
  if (lat || chase) {
    unit[0] = lat ? "samples_us" : "samples_ns";
    unit[1] = lat ? "median_us" : "latency_ns";
    unit[2] = lat ? "min_us" : "min_ns";
    unit[3] = lat ? "max_us" : "max_ns";
  }
  json_object_set_new(o, "test", json_string(gr_bench_kind_name(r->kind)));
  json_object_set_new(o, "engine", json_string(gr_engine_name(r->engine)));
  json_object_set_new(o, "src_gpu", endpoint_json(r->src));
  json_object_set_new(o, "dst_gpu", endpoint_json(r->dst));
  json_object_set_new(o, "status", json_string(gr_bench_status_name(r->status)));
  json_object_set_new(o, "note", gr_json_text(r->note));
  const char *nvb = nvbandwidth_test(r->kind, r->engine, false);
  json_object_set_new(o, "nvbandwidth_test", nvb ? json_string(nvb) : json_null());
  if (r->kind == GR_BK_HOST_BIDIR && nvb)
    json_object_set_new(o, "nvbandwidth_test_reverse", json_string(nvbandwidth_test(r->kind, r->engine, true)));
  bool pair = r->src >= 0 && r->dst >= 0 && r->src != r->dst;
  json_object_set_new(o, "via", pair ? json_string(r->via_host ? "host" : "p2p") : json_null());
  for (int i = 0; i < r->nsamples; i++)
    json_array_append_new(s, json_real(r->samples[i]));
  json_object_set_new(o, unit[0], s);
  json_object_set_new(o, unit[1], r->nsamples ? json_real(r->median) : json_null());
  json_object_set_new(o, unit[2], r->nsamples ? json_real(r->min) : json_null());
  json_object_set_new(o, unit[3], r->nsamples ? json_real(r->max) : json_null());
  json_object_set_new(o, "spread_pct", r->nsamples ? json_real(r->spread_pct) : json_null());
  if (r->kind == GR_BK_HOST_BIDIR || r->kind == GR_BK_P2P_BIDIR || r->kind == GR_BK_P2P_BIDIR_READ)
    json_object_set_new(o, "reverse_median_gbps", jpos(r->reverse_median));
  if (r->at_once > 0) { /* an aggregate's summary row */
    json_object_set_new(o, "gpus_at_once", json_integer(r->at_once));
    json_object_set_new(o, "sum_of_rates_gbps", jpos(r->sum_rates_gbps));
    json_object_set_new(o, "alone_gbps", jpos(r->alone_gbps));
    json_object_set_new(o, "own_limits_sum_gbps", jpos(r->own_limits_gbps));
    json_object_set_new(o, "shared_link", gr_json_text(r->shared[0] ? r->shared : NULL));
  }
  if (r->status == GR_BS_CORRUPT)
    json_object_set_new(o, "mismatched_words", json_integer(r->mismatched_words));
  if (!lat && !chase) {
    json_object_set_new(o, "limit_gbps", jpos(r->limit_gbps));
    json_object_set_new(o, "nccl_gbps", jpos(r->nccl_gbps));
    json_object_set_new(o, "predicted_gbps", jpos(r->predicted_gbps));
    json_object_set_new(o, "floor_gbps", jpos(r->floor_gbps));
    json_object_set_new(o, "limit_from", gr_json_text(r->link[0] ? r->link : NULL));
  }
  return o;
}

static json_t *ar_soak_json(const struct gr_ar_soak *k)
{
  json_t *o = json_object(), *slow = json_array();
  json_object_set_new(o, "iterations", json_integer(k->iters));
  json_object_set_new(o, "p50_us", json_real(k->p50_us));
  json_object_set_new(o, "p99_us", json_real(k->p99_us));
  json_object_set_new(o, "max_us", json_real(k->max_us));
  json_object_set_new(o, "stalls", json_integer(k->stalls));
  for (int j = 0; j < k->nslow; j++) {
    json_t *x = json_object();
    json_object_set_new(x, "iteration", json_integer(k->slow[j].index));
    json_object_set_new(x, "time_us", json_real(k->slow[j].us));
    json_object_set_new(x, "at_s", json_real(k->slow[j].at_s));
    json_array_append_new(slow, x);
  }
  json_object_set_new(o, "slowest", slow);
  return o;
}

static json_t *ar_row_json(const struct gr_ar_row *r)
{
  json_t *row = json_object(), *ip = json_object();
  json_object_set_new(row, "size_bytes", json_integer((json_int_t)r->bytes));
  json_object_set_new(row, "time_us", json_real(r->time_us));
  json_object_set_new(row, "algbw_gbps", json_real(r->algbw_gbps));
  json_object_set_new(row, "busbw_gbps", json_real(r->busbw_gbps));
  json_object_set_new(row, "wrong", json_integer(r->wrong));
  json_object_set_new(row, "host_time_us", jpos(r->host_us));
  json_object_set_new(ip, "time_us", json_real(r->ip_time_us));
  json_object_set_new(ip, "algbw_gbps", json_real(r->ip_algbw_gbps));
  json_object_set_new(ip, "busbw_gbps", json_real(r->ip_busbw_gbps));
  json_object_set_new(ip, "wrong", json_integer(r->ip_wrong));
  json_object_set_new(ip, "host_time_us", jpos(r->ip_host_us));
  json_object_set_new(row, "in_place", ip);
  json_object_set_new(row, "iterations", json_integer(r->iters));
  json_object_set_new(row, "warmup_iterations", json_integer(r->warmup));
  json_object_set_new(row, "soak", r->soak ? ar_soak_json(r->soak) : json_null());
  return row;
}

static json_t *ar_links_json(const struct gr_bench_report *rep)
{
  json_t *a = json_array();
  for (size_t i = 0; i < rep->nar_links; i++) {
    json_t *x = json_object();
    json_object_set_new(x, "from_gpu", json_integer(rep->ar_links[i].from));
    json_object_set_new(x, "to_gpu", json_integer(rep->ar_links[i].to));
    json_object_set_new(x, "via", json_string(rep->ar_links[i].via));
    json_array_append_new(a, x);
  }
  return a;
}

/* The all-reduce's note (why it did not run, or what capped its sizes): the
 * text of its finding, bench.allreduce-note, NULL if none. The JSON keeps
 * it as allreduce.note, which the report reads (docs/json.md). */
static const char *ar_note_text(const struct gr_bench_report *rep)
{
  const char *t = NULL;
  for (size_t i = 0; i < rep->findings.n; i++)
    if (strcmp(rep->findings.v[i].id, "bench.allreduce-note") == 0)
      t = rep->findings.v[i].text;
  return t;
}

static json_t *allreduce_json(const struct gr_bench_report *rep)
{
  json_t *o = json_object(), *sizes = json_array();
  json_object_set_new(o, "library", gr_json_text(rep->collective[0] ? rep->collective : NULL));
  json_object_set_new(o, "note", gr_json_text(ar_note_text(rep)));
  for (size_t i = 0; i < rep->nar; i++)
    json_array_append_new(sizes, ar_row_json(&rep->ar[i]));
  json_object_set_new(o, "sizes", sizes);
  json_object_set_new(o, "plateau_busbw_gbps", jpos(rep->ar_plateau_gbps));
  json_object_set_new(o, "plateau_from_bytes", rep->ar_plateau_gbps > 0 ? json_integer((json_int_t)rep->ar_plateau_from) : json_null());
  json_object_set_new(o, "plateau_to_bytes", rep->ar_plateau_gbps > 0 ? json_integer((json_int_t)rep->ar_plateau_to) : json_null());
  json_object_set_new(o, "still_rising", json_boolean(rep->ar_rising));
  json_object_set_new(o, "predicted_busbw_gbps", jpos(rep->ar_predicted_gbps));
  json_object_set_new(o, "transports", rep->ar_links ? ar_links_json(rep) : json_null());
  json_object_set_new(o, "transports_note", gr_json_text(rep->ar_links_note));
  json_object_set_new(o, "stalls", json_integer(rep->ar_stalls));
  return o;
}

json_t *gr_bench_to_json(const struct gr_bench_report *rep)
{
  json_t *o = json_object(), *cfg = json_object(), *gpus = json_array(), *res = json_array();
  json_object_set_new(cfg, "quick", json_boolean(rep->cfg.quick));
  json_object_set_new(cfg, "copy_bytes", json_integer((json_int_t)rep->cfg.bytes));
  json_object_set_new(cfg, "local_copy_bytes", json_integer((json_int_t)(rep->cfg.local_bytes > rep->cfg.bytes ? rep->cfg.local_bytes : rep->cfg.bytes)));
  json_object_set_new(cfg, "copies_per_run", json_integer(rep->cfg.loops));
  json_object_set_new(cfg, "runs", json_integer(rep->cfg.samples));
  json_object_set_new(cfg, "warmup_runs", json_integer(rep->cfg.warmup));
  json_object_set_new(cfg, "warmup_copies", json_integer(rep->cfg.warmup_copies));
  json_object_set_new(cfg, "planned_tests", json_integer((json_int_t)rep->planned_tests));
  json_object_set_new(cfg, "expected_s", json_real(rep->expected_seconds));
  json_object_set_new(cfg, "sm_copies", json_boolean(rep->cfg.sm));
  json_object_set_new(cfg, "like", rep->cfg.like_nvbandwidth ? json_string("nvbandwidth") : json_null());
  json_object_set_new(o, "config", cfg);
  json_object_set_new(o, "backend", json_string(rep->backend));
  for (size_t g = 0; g < rep->ngpus; g++) {
    json_t *x = json_object();
    json_object_set_new(x, "index", json_integer((json_int_t)g));
    json_object_set_new(x, "pci_bus_id", gr_json_text(rep->gpus[g].busid));
    json_object_set_new(x, "topology_gpu", rep->gpus[g].topo_gpu >= 0 ? json_integer(rep->gpus[g].topo_gpu) : json_null());
    json_object_set_new(x, "lost", json_boolean(rep->gpus[g].lost));
    json_array_append_new(gpus, x);
  }
  json_object_set_new(o, "gpus", gpus);
  for (size_t i = 0; i < rep->nresults; i++)
    json_array_append_new(res, result_json(&rep->results[i]));
  json_object_set_new(o, "results", res);
  json_object_set_new(o, "allreduce", allreduce_json(rep));
  json_object_set_new(o, "findings", gr_bench_findings_json(&rep->findings));
  json_object_set_new(o, "wall_s", json_real(rep->wall_seconds));
  return o;
}
