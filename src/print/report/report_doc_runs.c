/* The report's sections for bench's and burn's saved JSON results
 * (print/report/report_doc_internal.h). */
#include "print/report/report_doc.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "facts/catalog.h"
#include "model/names.h"
#include "print/common.h"
#include "print/report/report_doc_internal.h"

/* ---- bench ---- */

static const char *test_title(const char *test)
{
  static const char *const names[][2] = {{"h2d", "host -> GPU"},        {"d2h", "GPU -> host"},
                                         {"host_bidir", "host <-> GPU"}, {"local", "within the GPU"},
                                         {"p2p", "GPU -> GPU"},          {"p2p_bidir", "GPU <-> GPU"},
                                         {"latency", "latency"}};
  for (size_t i = 0; test && i < sizeof(names) / sizeof(names[0]); i++)
    if (strcmp(test, names[i][0]) == 0)
      return names[i][1];
  return test ? test : "?";
}

/* "GPU0 host -> GPU (CE)", "GPU0 -> GPU1 (SM)". */
static char *result_label(const json_t *r)
{
  const char *test = doc_jstr(r, "test"), *engine = doc_jstr(r, "engine");
  long src = doc_jidx(r, "src_gpu"), dst = doc_jidx(r, "dst_gpu");
  const char *eng = engine && strcmp(engine, "sm") == 0 ? "SM" : "CE";
  if (test && (strcmp(test, "p2p") == 0 || strcmp(test, "p2p_bidir") == 0))
    return xasprintf("GPU%ld %s GPU%ld (%s)", src, strcmp(test, "p2p") == 0 ? "->" : "<->", dst, eng);
  return xasprintf("GPU%ld %s (%s)", dst >= 0 ? dst : src, test_title(test), eng);
}

static bool test_in(const json_t *r, const char *const *tests)
{
  const char *t = doc_jstr(r, "test");
  for (; t && *tests; tests++)
    if (strcmp(t, *tests) == 0)
      return true;
  return false;
}

/* Bars for the ok results of these tests: median over the limit, the
 * prediction as a tick, orange where the median is under its floor. */
static size_t result_bars(struct rd_doc *d, const json_t *results, const char *const *tests, const char *title)
{
  size_t n = 0, i, k = 0;
  const json_t *r;
  json_array_foreach(results, i, r) n += test_in(r, tests) && isfinite(doc_jnum(r, "median_gbps"));
  if (!n)
    return 0;
  struct rd_bar *b = doc_bars(d, title, "GB/s", n);
  json_array_foreach(results, i, r)
  {
    double med = doc_jnum(r, "median_gbps"), floor = doc_jnum(r, "floor_gbps");
    if (!test_in(r, tests) || !isfinite(med) || k >= n)
      continue;
    b[k].label = result_label(r);
    b[k].value = med;
    b[k].predicted = doc_jnum(r, "predicted_gbps");
    b[k].limit = doc_jnum(r, "limit_gbps");
    b[k].cls = isfinite(floor) && med < floor ? "sev-warn" : "sev-ok";
    k++;
  }
  return n;
}

/* The bench's GPUs by its own index; p2p medians (copy engine, one way). */
static void p2p_matrix(struct rd_doc *d, const json_t *bench)
{
  const json_t *results = json_object_get(bench, "results"), *r;
  size_t n = json_array_size(json_object_get(bench, "gpus")), i;
  if (n < 2 || n > 1024)
    return;
  double *v = xcalloc(n * n, sizeof(double)), hi = 0;
  bool any = false;
  for (size_t k = 0; k < n * n; k++)
    v[k] = NAN;
  json_array_foreach(results, i, r)
  {
    long s = doc_jidx(r, "src_gpu"), t = doc_jidx(r, "dst_gpu");
    const char *eng = doc_jstr(r, "engine"), *test = doc_jstr(r, "test");
    double med = doc_jnum(r, "median_gbps");
    if (!test || strcmp(test, "p2p") || !eng || strcmp(eng, "ce") || s < 0 || t < 0 || (size_t)s >= n ||
        (size_t)t >= n || !isfinite(med))
      continue;
    v[(size_t)s * n + (size_t)t] = med;
    hi = med > hi ? med : hi;
    any = true;
  }
  if (any) {
    struct rd_table *tb = doc_matrix(d, "Measured GPU-to-GPU copies, copy engine, one way, GB/s (median)", n, 0);
    for (size_t x = 0; x < n; x++) {
      doc_cell(tb, NULL, "GPU%zu", x);
      for (size_t y = 0; y < n; y++)
        if (x == y)
          doc_cell_str(tb, doc_level_cls(GR_LVL_X), "X");
        else
          doc_cell_num(tb, doc_heat(v[x * n + y], hi), v[x * n + y], 1);
    }
  }
  free(v);
}

static void not_run_table(struct rd_doc *d, const json_t *results)
{
  size_t n = 0, i;
  const json_t *r;
  json_array_foreach(results, i, r) n += doc_jstr(r, "status") && strcmp(doc_jstr(r, "status"), "ok") != 0;
  if (!n)
    return;
  struct rd_table *tb = doc_table(d, "Tests that did not give a figure", n, 3, "test", "status", "why");
  json_array_foreach(results, i, r)
  {
    const char *st = doc_jstr(r, "status");
    if (!st || strcmp(st, "ok") == 0)
      continue;
    char *label = result_label(r);
    doc_cell_str(tb, NULL, label);
    doc_cell_str(tb, strcmp(st, "skipped") == 0 ? "sev-skipped" : "sev-fail", st);
    doc_cell_str(tb, NULL, doc_jstr(r, "note") ? doc_jstr(r, "note") : doc_jstr(r, "via") ? doc_jstr(r, "via") : "");
    free(label);
  }
}

static void latency_table(struct rd_doc *d, const json_t *results)
{
  size_t n = 0, i;
  const json_t *r;
  static const char *const lat[] = {"latency", NULL};
  json_array_foreach(results, i, r) n += test_in(r, lat) && isfinite(doc_jnum(r, "median_us"));
  if (!n)
    return;
  struct rd_table *tb = doc_table(d, "Small-copy latency", n, 4, "copy", "median, us", "min, us", "max, us");
  json_array_foreach(results, i, r)
  {
    if (!test_in(r, lat) || !isfinite(doc_jnum(r, "median_us")))
      continue;
    long src = doc_jidx(r, "src_gpu"), dst = doc_jidx(r, "dst_gpu");
    if (src >= 0)
      doc_cell(tb, NULL, "GPU%ld -> %s", src, dst >= 0 ? "GPU" : "host");
    else
      doc_cell(tb, NULL, "host -> GPU%ld", dst);
    doc_cell_num(tb, NULL, doc_jnum(r, "median_us"), 1);
    doc_cell_num(tb, NULL, doc_jnum(r, "min_us"), 1);
    doc_cell_num(tb, NULL, doc_jnum(r, "max_us"), 1);
  }
}

/* "NCCL connected: GPU0 -> GPU1 P2P/IPC, ..." (bench JSON from before the
 * connections were read has no "transports": nothing then). */
static void bench_ar_links(struct rd_doc *d, const json_t *links)
{
  char text[1024] = "";
  size_t off = 0, i;
  const json_t *l;
  json_array_foreach(links, i, l)
  {
    const char *via = doc_jstr(l, "via");
    double a = doc_jnum(l, "from_gpu"), b = doc_jnum(l, "to_gpu");
    if (via && isfinite(a) && isfinite(b) && off < sizeof(text))
      off += (size_t)snprintf(text + off, sizeof(text) - off, "%sGPU%.0f -> GPU%.0f %s", off ? ", " : "", a, b, via);
  }
  if (text[0])
    para(d, "NCCL connected: %s.", text);
}

static void bench_allreduce(struct rd_doc *d, const json_t *ar)
{
  const json_t *sizes = json_object_get(ar, "sizes"), *s;
  size_t n = 0, i;
  doc_heading(d, 3, "bench-allreduce", "All-reduce (%s)", doc_jstr(ar, "library") ? doc_jstr(ar, "library") : "NCCL");
  if (doc_jstr(ar, "note"))
    note(d, "%s", doc_jstr(ar, "note"));
  json_array_foreach(sizes, i, s) n += isfinite(doc_jnum(s, "size_bytes")) && doc_jnum(s, "size_bytes") > 0 &&
                                       isfinite(doc_jnum(s, "busbw_gbps"));
  if (!n) {
    para(d, "No all-reduce figure.");
    return;
  }
  double plateau = doc_jnum(ar, "plateau_busbw_gbps"), pred = doc_jnum(ar, "predicted_busbw_gbps");
  char plat[32] = "?", pr[32] = "?"; /* "%.1f" of NAN would print "nan" */
  if (isfinite(plateau))
    snprintf(plat, sizeof(plat), "%.1f", plateau);
  if (isfinite(pred))
    snprintf(pr, sizeof(pr), "%.1f", pred);
  para(d, "Plateau: %s GB/s busbw%s; predicted: %s GB/s.", plat,
       json_is_true(json_object_get(ar, "still_rising")) ? " (still rising at the largest size)" : "", pr);
  struct rd_block *lb = doc_add(d, RD_LINE);
  lb->text = xstrdup("All-reduce bus bandwidth against message size");
  lb->unit = xstrdup("GB/s");
  lb->line = xcalloc(1, sizeof(*lb->line));
  struct rd_line *l = lb->line;
  l->x = xcalloc(n, sizeof(double));
  l->y = xcalloc(n, sizeof(double));
  l->ref = pred;
  l->ref_label = xstrdup("predicted");
  struct rd_table *tb = doc_table(d, NULL, n, 5, "size", "time, us", "algbw, GB/s", "busbw, GB/s", "wrong");
  json_array_foreach(sizes, i, s)
  {
    double sz = doc_jnum(s, "size_bytes"), bw = doc_jnum(s, "busbw_gbps");
    if (!(isfinite(sz) && sz > 0 && isfinite(bw)) || l->n >= n)
      continue;
    l->x[l->n] = sz;
    l->y[l->n++] = bw;
    char size[32];
    doc_cell_str(tb, NULL, sz < 1e18 ? gr_size_text((size_t)sz, size, sizeof(size)) : "?");
    doc_cell_num(tb, NULL, doc_jnum(s, "time_us"), 1);
    doc_cell_num(tb, NULL, doc_jnum(s, "algbw_gbps"), 2);
    doc_cell_num(tb, NULL, bw, 2);
    doc_cell_num(tb, doc_jnum(s, "wrong") > 0 ? "sev-fail" : NULL, doc_jnum(s, "wrong"), 0);
  }
  bench_ar_links(d, json_object_get(ar, "transports"));
}

/* The bench's GPUs that are not the report's machine's, by bus id. */
static void bench_gpus_note(struct rd_doc *d, const struct gr_topo *t, const json_t *gpus)
{
  size_t i, missing = 0, renumbered = 0;
  const json_t *g;
  json_array_foreach(gpus, i, g)
  {
    const char *bus = doc_jstr(g, "pci_bus_id");
    int tg = bus ? gr_topo_gpu_by_busid(t, bus) : -1;
    missing += tg < 0;
    renumbered += tg >= 0 && tg != doc_jidx(g, "index");
  }
  if (missing)
    note(d, "%zu of the bench's %zu GPUs are not in this report's machine (by PCI bus id): were these results taken "
            "on another machine?", missing, json_array_size(gpus));
  if (renumbered)
    note(d, "bench numbers GPUs in CUDA's order, which differs here from the topology's: the GPU numbers in this "
            "section are bench's.");
}

void doc_bench(struct rd_doc *d, const struct gr_report_doc *doc)
{
  const json_t *j = doc->bench;
  doc_heading(d, 2, "bench", "Measured (gpurig bench)");
  if (!j) {
    para(d, "No bench results given (gpurig bench --json > bench.json, then gpurig report --bench bench.json).");
    return;
  }
  const json_t *cfg = json_object_get(j, "config"), *results = json_object_get(j, "results");
  char size[32] = "?";
  double cb = doc_jnum(cfg, "copy_bytes");
  if (isfinite(cb) && cb > 0 && cb < 1e18)
    gr_size_text((size_t)cb, size, sizeof(size));
  para(d, "From %s: backend %s, %zu GPU%s, copies of %s, median of %.0f runs%s.", doc->bench_name ? doc->bench_name : "--bench",
       doc_jstr(j, "backend") ? doc_jstr(j, "backend") : "?", json_array_size(json_object_get(j, "gpus")),
       doc_plural(json_array_size(json_object_get(j, "gpus"))), size, isfinite(doc_jnum(cfg, "runs")) ? doc_jnum(cfg, "runs") : 0,
       json_is_true(json_object_get(cfg, "quick")) ? " (--quick)" : "");
  bench_gpus_note(d, &doc->m->topo, json_object_get(j, "gpus"));
  static const char *const host[] = {"h2d", "d2h", "host_bidir", NULL}, *const local[] = {"local", NULL},
                           *const p2p[] = {"p2p", "p2p_bidir", NULL};
  doc_heading(d, 3, "bench-copies", "Copies against their limits");
  result_bars(d, results, host, "Host <-> GPU: measured median (bar), predicted (tick), the link's limit (grey)");
  result_bars(d, results, local, "Within each GPU: measured median (bar) against half the memory bandwidth (grey)");
  p2p_matrix(d, j);
  size_t np2p = 0, i;
  const json_t *r;
  json_array_foreach(results, i, r) np2p += test_in(r, p2p) && isfinite(doc_jnum(r, "median_gbps"));
  if (np2p <= 64)
    result_bars(d, results, p2p, "GPU to GPU: measured median (bar), predicted (tick), the path's limit (grey)");
  else
    note(d, "%zu GPU-to-GPU figures: the matrix above shows them (copy engine, one way).", np2p);
  note(d, "An orange bar is under its floor, the least a healthy path gives (docs/measure.md).");
  latency_table(d, results);
  not_run_table(d, results);
  bench_allreduce(d, json_object_get(j, "allreduce"));
  doc_heading(d, 3, "bench-findings", "What bench found");
  if (json_array_size(json_object_get(j, "findings")))
    doc_json_findings(d, json_object_get(j, "findings"));
  else
    para(d, "Nothing: every figure is at or above its floor.");
}

/* ---- burn ---- */

/* The worst verdict whose subject names this GPU's bus id. */
static enum gr_sev burn_gpu_sev(const json_t *verdicts, const char *bus, bool *any)
{
  enum gr_sev worst = GR_SEV_OK;
  static const int rank[GR_SEV_COUNT] = {[GR_SEV_OK] = 0, [GR_SEV_SKIPPED] = 0, [GR_SEV_INFO] = 1,
                                         [GR_SEV_ERROR] = 2, [GR_SEV_WARN] = 3, [GR_SEV_FAIL] = 4};
  size_t i;
  const json_t *v;
  *any = false;
  json_array_foreach(verdicts, i, v)
  {
    const char *subj = doc_jstr(v, "subject");
    if (!bus || !subj || !strstr(subj, bus) || strstr(subj, "<->"))
      continue; /* links ("GPU0 ... <-> root port ...") have their own rows in the verdicts */
    enum gr_sev s = doc_sev_of(doc_jstr(v, "severity"));
    *any = true;
    if (rank[s] > rank[worst])
      worst = s;
  }
  return worst;
}

static char *throttle_text(const json_t *th)
{
  char buf[256] = "";
  size_t off = 0;
  const char *key;
  const json_t *v;
  json_object_foreach((json_t *)th, key, v)
  {
    if (strcmp(key, "idle") == 0 || !json_is_number(v) || off >= sizeof(buf))
      continue; /* idle is not slowing down */
    off += (size_t)snprintf(buf + off, sizeof(buf) - off, "%s%s %.0f s", off ? ", " : "", key, json_number_value(v));
  }
  return xstrdup(buf);
}

enum { BURN_PANELS = 4 };

static void burn_gpus(struct rd_doc *d, const json_t *burn)
{
  const json_t *gpus = json_object_get(burn, "gpus"), *verdicts = json_object_get(burn, "verdicts"), *g;
  size_t n = json_array_size(gpus), i;
  struct rd_table *tb = doc_table(d, NULL, n, 12, "GPU", "bus id", "verdict", "TFLOPS fp16", "wrong products",
                                  "host GB/s", "P2P GB/s", "hottest, C", "most power, W", "lowest SM clock, MHz",
                                  "PCIe replays", "slowed");
  struct rd_block *pb = doc_add(d, RD_PANELS);
  struct rd_panels *p = pb->panels = xcalloc(1, sizeof(*p));
  pb->text = xstrdup("Per GPU under load (bar colour: its verdict)");
  p->nrows = n;
  p->npanels = BURN_PANELS;
  p->row_label = xcalloc(n + 1, sizeof(char *));
  p->row_cls = xcalloc(n + 1, sizeof(char *));
  p->panel_title = xcalloc(BURN_PANELS, sizeof(char *));
  p->v = xcalloc(n * BURN_PANELS + 1, sizeof(double));
  static const char *const titles[BURN_PANELS] = {"TFLOPS fp16", "host<->GPU GB/s", "hottest, C", "most power, W"};
  static const char *const keys[BURN_PANELS] = {"gemm_tflops", "host_gbps", "temp_max_c", "power_max_w"};
  for (size_t k = 0; k < BURN_PANELS; k++)
    p->panel_title[k] = xstrdup(titles[k]);
  json_array_foreach(gpus, i, g)
  {
    bool any;
    const char *bus = doc_jstr(g, "bus_id");
    bool lost = json_is_true(json_object_get(g, "lost"));
    enum gr_sev s = burn_gpu_sev(verdicts, bus, &any);
    const char *verdict = lost ? "lost" : !any ? "?" : s == GR_SEV_OK ? "pass" : gr_sev_name(s);
    const char *cls = lost ? "sev-fail" : any ? doc_sev_cls(s) : NULL;
    char *th = throttle_text(json_object_get(g, "throttle_s"));
    doc_cell(tb, NULL, "GPU%ld", doc_jidx(g, "index"));
    doc_cell_str(tb, NULL, bus);
    doc_cell_str(tb, cls, verdict);
    doc_cell_num(tb, NULL, doc_jnum(g, "gemm_tflops"), 1);
    doc_cell_num(tb, doc_jnum(g, "gemm_wrong") > 0 ? "sev-fail" : NULL, doc_jnum(g, "gemm_wrong"), 0);
    doc_cell_num(tb, NULL, doc_jnum(g, "host_gbps"), 1);
    doc_cell_num(tb, NULL, doc_jnum(g, "p2p_gbps"), 1);
    doc_cell_num(tb, NULL, doc_jnum(g, "temp_max_c"), 0);
    doc_cell_num(tb, NULL, doc_jnum(g, "power_max_w"), 0);
    doc_cell_num(tb, NULL, doc_jnum(g, "sm_clock_min_mhz"), 0);
    doc_cell_num(tb, doc_jnum(g, "pcie_replays") > 0 ? "sev-warn" : NULL, doc_jnum(g, "pcie_replays"), 0);
    doc_cell_str(tb, th[0] ? "sev-warn" : NULL, th[0] ? th : "no");
    free(th);
    p->row_label[i] = xasprintf("GPU%ld", doc_jidx(g, "index"));
    p->row_cls[i] = cls;
    for (size_t k = 0; k < BURN_PANELS; k++)
      p->v[i * BURN_PANELS + k] = doc_jnum(g, keys[k]);
  }
}

void doc_burn(struct rd_doc *d, const struct gr_report_doc *doc)
{
  const json_t *j = doc->burn;
  doc_heading(d, 2, "burn", "Burn-in (gpurig burn)");
  if (!j) {
    para(d, "No burn-in results given (gpurig burn --json > burn.json, then gpurig report --burn burn.json).");
    return;
  }
  double ran = doc_jnum(j, "ran_s"), dur = doc_jnum(j, "duration_s"), n = doc_jnum(j, "gemm_n");
  para(d, "From %s: loads %s, pattern %s, %.0f s of %.0f%s; matrices %.0f x %.0f; exit status %.0f.",
       doc->burn_name ? doc->burn_name : "--burn", doc_jstr(j, "loads") ? doc_jstr(j, "loads") : "?",
       doc_jstr(j, "pattern") ? doc_jstr(j, "pattern") : "?", isfinite(ran) ? ran : 0, isfinite(dur) ? dur : 0,
       json_is_true(json_object_get(j, "interrupted")) ? " (interrupted)" : "", isfinite(n) ? n : 0, isfinite(n) ? n : 0,
       isfinite(doc_jnum(j, "exit")) ? doc_jnum(j, "exit") : -1);
  if (doc_jstr(j, "gemm_note"))
    note(d, "%s", doc_jstr(j, "gemm_note"));
  burn_gpus(d, j);
  const json_t *ar = json_object_get(j, "allreduce");
  if (json_is_object(ar)) {
    struct rd_table *tb = doc_table(d, "All-reduce under load", 1, 5, "iterations", "p50, ms", "p99, ms", "max, ms",
                                    "stalls");
    doc_cell_num(tb, NULL, doc_jnum(ar, "iterations"), 0);
    doc_cell_num(tb, NULL, doc_jnum(ar, "p50_ms"), 2);
    doc_cell_num(tb, NULL, doc_jnum(ar, "p99_ms"), 2);
    doc_cell_num(tb, NULL, doc_jnum(ar, "max_ms"), 2);
    doc_cell(tb, json_array_size(json_object_get(ar, "stalls")) ? "sev-warn" : NULL, "%zu",
             json_array_size(json_object_get(ar, "stalls")));
    if (doc_jstr(ar, "note"))
      note(d, "%s", doc_jstr(ar, "note"));
  }
  doc_heading(d, 3, "burn-verdicts", "Burn-in verdicts");
  doc_json_findings(d, json_object_get(j, "verdicts"));
}
