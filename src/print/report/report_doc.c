/* The report's content, built once for both printers; see report_doc.h.
 * The machine's sections come first (header, summary, diagram, GPUs,
 * matrices, hives, predictions, verdicts, findings), then bench's and
 * burn's results when given. Nothing here analyses: every figure is the
 * analysis's, the prediction's, doctor's or the JSON's. */
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

/* ---- building blocks ---- */

static char *vfmt(const char *fmt, va_list ap)
{
  va_list c;
  va_copy(c, ap);
  int n = vsnprintf(NULL, 0, fmt, c);
  va_end(c);
  char *p = xmalloc(n > 0 ? (size_t)n + 1 : 1);
  vsnprintf(p, n > 0 ? (size_t)n + 1 : 1, fmt, ap);
  return p;
}

static struct rd_block *add(struct rd_doc *d, enum rd_kind kind)
{
  grow_array((void **)&d->v, sizeof(*d->v), &d->cap, d->n + 1);
  struct rd_block *b = &d->v[d->n++];
  memset(b, 0, sizeof(*b));
  b->kind = kind;
  return b;
}

static void heading(struct rd_doc *d, int level, const char *id, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void heading(struct rd_doc *d, int level, const char *id, const char *fmt, ...)
{
  struct rd_block *b = add(d, RD_HEADING);
  va_list ap;
  va_start(ap, fmt);
  b->text = vfmt(fmt, ap);
  va_end(ap);
  b->level = level;
  b->id = xstrdup(id);
}

static void text_block(struct rd_doc *d, enum rd_kind kind, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void text_block(struct rd_doc *d, enum rd_kind kind, const char *fmt, ...)
{
  struct rd_block *b = add(d, kind);
  va_list ap;
  va_start(ap, fmt);
  b->text = vfmt(fmt, ap);
  va_end(ap);
}
#define para(d, ...) text_block(d, RD_PARA, __VA_ARGS__)
#define note(d, ...) text_block(d, RD_NOTE, __VA_ARGS__)

/* A table of nrows rows and ncols columns, its header cells empty. */
static struct rd_table *table_raw(struct rd_doc *d, const char *title, size_t nrows, size_t ncols)
{
  struct rd_block *b = add(d, RD_TABLE);
  struct rd_table *t = xcalloc(1, sizeof(*t));
  b->text = xstrdup(title);
  b->table = t;
  t->ncols = ncols;
  t->nrows = nrows;
  t->head = xcalloc(ncols + 1, sizeof(*t->head));
  t->cells = xcalloc(nrows * ncols + 1, sizeof(*t->cells));
  return t;
}

/* A table whose header is the ncols strings given. */
static struct rd_table *table(struct rd_doc *d, const char *title, size_t nrows, size_t ncols, ...)
{
  struct rd_table *t = table_raw(d, title, nrows, ncols);
  va_list ap;
  va_start(ap, ncols);
  for (size_t c = 0; c < ncols; c++)
    t->head[c].text = xstrdup(va_arg(ap, const char *));
  va_end(ap);
  return t;
}

/* Fills the next cell, row by row; a cell past the last is dropped. */
static void cell(struct rd_table *t, const char *cls, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void cell(struct rd_table *t, const char *cls, const char *fmt, ...)
{
  if (t->filled >= t->nrows * t->ncols)
    return;
  va_list ap;
  va_start(ap, fmt);
  t->cells[t->filled].text = vfmt(fmt, ap);
  va_end(ap);
  t->cells[t->filled++].cls = cls;
}

static void cell_str(struct rd_table *t, const char *cls, const char *s)
{
  cell(t, cls, "%s", s ? s : "");
}

static void row_gpu(struct rd_table *t, size_t row, size_t gpu)
{
  if (!t->row_gpu)
    t->row_gpu = xcalloc(t->nrows + 1, sizeof(char *));
  if (row < t->nrows)
    t->row_gpu[row] = xasprintf("GPU%zu", gpu);
}

static struct rd_bar *bars(struct rd_doc *d, const char *title, const char *unit, size_t n)
{
  struct rd_block *b = add(d, RD_BARS);
  b->text = xstrdup(title);
  b->unit = xstrdup(unit);
  b->bars = xcalloc(n + 1, sizeof(*b->bars));
  b->nbars = n;
  for (size_t i = 0; i < n; i++)
    b->bars[i].value = b->bars[i].predicted = b->bars[i].limit = NAN;
  return b->bars;
}

/* The heat class of v on a scale up to hi (0 and unknown: none). */
static const char *heat(double v, double hi)
{
  static const char *const cls[RD_HEAT] = {"h0", "h1", "h2", "h3", "h4", "h5", "h6", "h7"};
  if (!(v > 0) || !(hi > 0))
    return NULL;
  int k = (int)(v / hi * (RD_HEAT - 1) + 0.5);
  return cls[k < 0 ? 0 : k >= RD_HEAT ? RD_HEAT - 1 : k];
}

static const char *sev_cls(enum gr_sev s)
{
  static const char *const cls[GR_SEV_COUNT] = {[GR_SEV_OK] = "sev-ok",     [GR_SEV_INFO] = "sev-info",
                                                [GR_SEV_WARN] = "sev-warn", [GR_SEV_FAIL] = "sev-fail",
                                                [GR_SEV_SKIPPED] = "sev-skipped", [GR_SEV_ERROR] = "sev-error"};
  return (unsigned)s < GR_SEV_COUNT ? cls[s] : NULL;
}

static const char *level_cls(enum gr_level l)
{
  static const char *const cls[] = {[GR_LVL_X] = "lv-x",     [GR_LVL_NV] = "lv-nv",     [GR_LVL_PIX] = "lv-pix",
                                    [GR_LVL_PXB] = "lv-pxb", [GR_LVL_PHB] = "lv-phb",   [GR_LVL_NODE] = "lv-node",
                                    [GR_LVL_SYS] = "lv-sys"};
  return (unsigned)l <= GR_LVL_SYS ? cls[l] : NULL;
}

/* ---- JSON, read defensively: a file a user saved may hold anything ---- */

static double jnum(const json_t *o, const char *key)
{
  const json_t *v = json_object_get(o, key);
  double x = json_is_number(v) ? json_number_value(v) : NAN;
  return isfinite(x) ? x : NAN;
}

static const char *jstr(const json_t *o, const char *key)
{
  return json_string_value(json_object_get(o, key));
}

/* An index (a GPU), -1 for null or anything else. */
static long jidx(const json_t *o, const char *key)
{
  const json_t *v = json_object_get(o, key);
  return json_is_integer(v) && json_integer_value(v) >= 0 && json_integer_value(v) < 100000
             ? (long)json_integer_value(v) : -1;
}

static enum gr_sev sev_of(const char *s)
{
  for (int k = 0; k < GR_SEV_COUNT && s; k++)
    if (strcmp(s, gr_sev_name((enum gr_sev)k)) == 0)
      return (enum gr_sev)k;
  return GR_SEV_ERROR; /* a severity gpurig does not write: shown, never hidden as fine */
}

/* A number for a cell: one decimal, "" unknown. */
static char *num_text(double v, int decimals)
{
  return isfinite(v) ? xasprintf("%.*f", decimals, v) : xstrdup("");
}

static void cell_num(struct rd_table *t, const char *cls, double v, int decimals)
{
  char *s = num_text(v, decimals);
  cell_str(t, cls, s);
  free(s);
}

/* ---- header and summary ---- */

static void header(struct rd_doc *d, const struct gr_report_doc *doc)
{
  const struct gr_topo *t = &doc->m->topo;
  char *line = NULL, nccl[160];
  size_t len = 0;
  FILE *f = open_memstream(&line, &len);
  if (f) {
    gr_print_machine_line(f, t);
    fclose(f);
  }
  heading(d, 1, "top", "gpurig report: %s", t->product ? t->product : t->hostname ? t->hostname : "machine");
  para(d, "%s", line ? line : "");
  free(line);
  para(d, "Source: %s%s%s. gpurig %s. NCCL's view and the predictions follow %s.", gr_topo_input_name(t),
       t->source_path ? " " : "", t->source_path ? t->source_path : "", GPURIG_VERSION,
       gr_nccl_defaults_text(&doc->m->analysis, nccl, sizeof(nccl)));
  if (t->rig && t->rig->notes)
    note(d, "Rig sources: %s", t->rig->notes);
  for (size_t i = 0; i < t->nwarnings; i++)
    note(d, "Loader warning: %s", t->warnings[i]);
}

static const char *plural(size_t n)
{
  return n == 1 ? "" : "s";
}

static void counts_line(struct rd_doc *d, const struct gr_topo *t, const struct gr_analysis *a)
{
  size_t nvme = 0;
  for (size_t i = 0; i < t->npci; i++)
    nvme += t->pci[i].kind == GR_KIND_NVME;
  para(d, "%zu socket%s, %zu NUMA node%s, %zu GPU%s, %zu RDMA NIC%s, %zu NVMe drive%s, %zu P2P hive%s.", t->npackages,
       plural(t->npackages), t->nnumas, plural(t->nnumas), t->ngpus, plural(t->ngpus), t->nnics, plural(t->nnics),
       nvme, plural(nvme), a->nhives, plural(a->nhives));
  for (size_t i = 0; i < t->npackages; i++) {
    const struct gr_package *pk = &t->packages[i];
    char ram[64] = "";
    if (pk->mem_bytes)
      snprintf(ram, sizeof(ram), ", %.0f GiB RAM", (double)pk->mem_bytes / (1024.0 * 1024.0 * 1024.0));
    para(d, "Socket %d: %s%s", pk->os_index, pk->cpu_model ? pk->cpu_model : "(CPU model not recorded)", ram);
  }
}

/* "2 fail, 1 warn, 3 info" of the severities that are there, "none". */
static char *counts_text(const size_t *count)
{
  static const enum gr_sev order[] = {GR_SEV_FAIL, GR_SEV_WARN, GR_SEV_ERROR, GR_SEV_INFO, GR_SEV_SKIPPED, GR_SEV_OK};
  char buf[256] = "";
  size_t off = 0;
  for (size_t k = 0; k < sizeof(order) / sizeof(order[0]); k++)
    if (count[order[k]] && off < sizeof(buf))
      off += (size_t)snprintf(buf + off, sizeof(buf) - off, "%s%zu %s", off ? ", " : "", count[order[k]],
                              gr_sev_name(order[k]));
  return xstrdup(off ? buf : "none");
}

/* The worst of a list by the exit mapping's order: fail, warn, error, info, ok. */
static enum gr_sev worst_of(const size_t *count)
{
  static const enum gr_sev order[] = {GR_SEV_FAIL, GR_SEV_WARN, GR_SEV_ERROR, GR_SEV_INFO, GR_SEV_OK, GR_SEV_SKIPPED};
  for (size_t k = 0; k < sizeof(order) / sizeof(order[0]); k++)
    if (count[order[k]])
      return order[k];
  return GR_SEV_OK;
}

static const char *rating_cls(enum gr_rating r)
{
  return r == GR_RATE_GOOD ? "sev-ok" : r == GR_RATE_FAIR ? "sev-warn" : "sev-fail";
}

/* Severity counts of a JSON list of findings (bench's "findings", burn's "verdicts"). */
static void json_counts(const json_t *list, size_t *count)
{
  memset(count, 0, GR_SEV_COUNT * sizeof(*count));
  size_t i;
  const json_t *v;
  json_array_foreach(list, i, v) count[sev_of(jstr(v, "severity"))]++;
}

static void summary(struct rd_doc *d, const struct gr_report_doc *doc)
{
  const struct gr_machine *m = doc->m;
  const struct gr_prediction *p = &m->prediction;
  heading(d, 2, "summary", "Summary");
  counts_line(d, &m->topo, &m->analysis);
  size_t rows = 2 + (m->predicted ? p->nverdicts + 1 : 0) + (doc->doctor != NULL) + (doc->bench != NULL) +
                (doc->burn != NULL);
  struct rd_table *t = table(d, "Verdicts at a glance", rows, 3, "what", "verdict", "detail");
  for (size_t i = 0; m->predicted && i < p->nverdicts; i++) {
    cell(t, NULL, "%s across %d GPU%s", p->verdicts[i].workload, p->verdicts[i].gpus, plural((size_t)p->verdicts[i].gpus));
    cell_str(t, rating_cls(p->verdicts[i].rating), gr_rating_name(p->verdicts[i].rating));
    cell_str(t, NULL, "see Verdicts");
  }
  if (m->predicted) {
    cell_str(t, NULL, "all-reduce, predicted");
    if (p->nccl_default.busbw_gbps > 0 && !m->analysis.nvlink_unrecorded)
      cell(t, NULL, "%.1f GB/s", p->nccl_default.busbw_gbps);
    else
      cell_str(t, NULL, "not predicted");
    char bound[256] = "";
    if (p->ngpus > 1 && p->nccl_default.busbw_gbps > 0)
      gr_ring_bound_text(p, &p->nccl_default, bound, sizeof(bound));
    cell_str(t, NULL, bound);
  }
  const struct gr_findings *tf = &m->analysis.findings;
  char *c = counts_text(tf->count);
  cell_str(t, NULL, "topology findings");
  cell_str(t, sev_cls(worst_of(tf->count)), gr_sev_name(worst_of(tf->count)));
  cell_str(t, NULL, c);
  free(c);
  if (doc->doctor) {
    c = counts_text(doc->doctor->findings.count);
    cell_str(t, NULL, "doctor");
    cell_str(t, sev_cls(worst_of(doc->doctor->findings.count)), gr_sev_name(worst_of(doc->doctor->findings.count)));
    cell_str(t, NULL, c);
    free(c);
  }
  size_t count[GR_SEV_COUNT];
  for (int k = 0; k < 2; k++) {
    const json_t *j = k ? doc->burn : doc->bench;
    if (!j)
      continue;
    json_counts(json_object_get(j, k ? "verdicts" : "findings"), count);
    enum gr_sev w = worst_of(count);
    c = counts_text(count);
    cell_str(t, NULL, k ? "burn-in (gpurig burn)" : "measured (gpurig bench)");
    cell_str(t, sev_cls(w), gr_sev_name(w));
    cell_str(t, NULL, c);
    free(c);
  }
  cell_str(t, NULL, "exit status of gpurig report");
  cell(t, NULL, "%d", (int)gr_findings_exit(tf));
  cell_str(t, NULL, "from the topology findings (0 ok, 1 a warning)");
}

static void diagram(struct rd_doc *d, const struct gr_report_doc *doc)
{
  heading(d, 2, "diagram", "Block diagram");
  if (doc->diagram_svg)
    add(d, RD_DIAGRAM);
  else
    para(d, "block diagram: not available in this build");
}

/* ---- GPUs ---- */


/* One line per fabric, its members grouped by their links: "GPU0 GPU1 ...:
 * 6 links each, 150 GB/s per direction". */
static void fabric_para(struct rd_doc *d, const struct gr_topo *t, const struct gr_fabric *f)
{
  char text[2048] = "";
  size_t off = 0;
  bool *done = xcalloc(f->nmembers + 1, sizeof(bool));
  for (size_t m = 0; m < f->nmembers; m++) {
    const struct gr_fabric_member *lead = &f->members[m];
    size_t count = 0;
    for (size_t k = m; k < f->nmembers && off < sizeof(text); k++) {
      const struct gr_fabric_member *x = &f->members[k];
      char label[32];
      if (done[k] || x->links != lead->links || fabs(x->gbps - lead->gbps) > 1e-9)
        continue;
      done[k] = true;
      off += (size_t)snprintf(text + off, sizeof(text) - off, "%s%s", count++ ? " " : m ? "; " : "",
                              gr_pci_label(t, x->gpu, label, sizeof(label)));
    }
    if (count && off < sizeof(text))
      off += (size_t)snprintf(text + off, sizeof(text) - off, ": %d link%s%s, %.0f GB/s per direction", lead->links,
                              lead->links == 1 ? "" : "s", count > 1 ? " each" : "", lead->gbps);
  }
  free(done);
  char sw[48] = "", gen[32] = "";
  if (f->nswitches > 0)
    snprintf(sw, sizeof(sw), ", %d NVSwitch%s", f->nswitches, f->nswitches == 1 ? "" : "es");
  if (f->nvlink_gen > 0)
    snprintf(gen, sizeof(gen), ", NVLink%d", f->nvlink_gen);
  para(d, "NVSwitch fabric (%s%s%s%s%s%s): %s.", f->from == GR_FABRIC_INFERRED ? "inferred" : "from ",
       f->from == GR_FABRIC_INFERRED ? "" : gr_fabric_from_name(f->from), sw, gen, f->why ? ": " : "",
       f->why ? f->why : "", text);
}

static void gpus(struct rd_doc *d, const struct gr_machine *m)
{
  const struct gr_topo *t = &m->topo;
  struct gr_names names = {0};
  heading(d, 2, "gpus", "GPUs");
  if (!t->ngpus) {
    para(d, "No GPU in this input.");
    return;
  }
  struct rd_table *tb = table(d, NULL, t->ngpus, 8, "GPU", "model", "PCI bus id", "link (trains to)",
                              "GB/s per direction", "memory", "NUMA", "hive");
  for (size_t g = 0; g < t->ngpus; g++) {
    const struct gr_pci *p = &t->pci[t->gpus[g]];
    const struct gr_gpu_model *cat = gr_pci_catalog(p);
    const struct gr_link_facts *lf = &m->analysis.link[t->gpus[g]];
    char bus[32], link[96];
    gr_link_label(lf, GR_LABEL_CAPABLE, link, sizeof(link));
    row_gpu(tb, g, g);
    cell(tb, NULL, "GPU%zu", g);
    cell_str(tb, NULL, gr_pci_display_name(t, t->gpus[g], &names));
    cell_str(tb, NULL, gr_pci_busid(p, bus, sizeof(bus)));
    cell_str(tb, NULL, link);
    cell_num(tb, NULL, lf->gbps > 0 ? lf->gbps : NAN, 1);
    if (cat && cat->mem_gib > 0)
      cell(tb, NULL, "%.0f GiB", cat->mem_gib);
    else
      cell_str(tb, NULL, "");
    if (p->numa >= 0)
      cell(tb, NULL, "%d", p->numa);
    else
      cell_str(tb, NULL, "?");
    cell(tb, NULL, "%d", m->analysis.hive[g]);
  }
  note(d, "Memory is the catalog's (data/gpus.tsv) for the model; an empty cell: the catalog does not know it.");
  for (size_t i = 0; i < t->nfabrics; i++)
    if (t->fabrics[i].nmembers)
      fabric_para(d, t, &t->fabrics[i]);
  gr_names_free(&names);
}

/* ---- matrices ---- */

/* A GPU x GPU (and NIC) table: a header cell per column, "GPUr" first. */
static struct rd_table *matrix(struct rd_doc *d, const char *title, size_t ngpus, size_t nnics)
{
  struct rd_table *t = table_raw(d, title, ngpus, 1 + ngpus + nnics);
  t->matrix = true;
  t->head[0].text = xstrdup("");
  for (size_t c = 1; c < t->ncols; c++)
    t->head[c].text = c <= ngpus ? xasprintf("GPU%zu", c - 1) : xasprintf("NIC%zu", c - 1 - ngpus);
  return t;
}

static void level_matrix(struct rd_doc *d, const struct gr_topo *t, const struct gr_analysis *a)
{
  heading(d, 3, "levels", "GPU matrix (nvidia-smi topo -m levels)");
  struct rd_table *tb = matrix(d, NULL, t->ngpus, t->nnics);
  for (size_t r = 0; r < t->ngpus; r++) {
    cell(tb, NULL, "GPU%zu", r);
    for (size_t c = 0; c < t->ngpus + t->nnics; c++) {
      struct gr_path p = c < t->ngpus ? a->gpu_gpu[r * a->ngpus + c] : a->gpu_nic[r * a->nnics + (c - t->ngpus)];
      char lv[16];
      if (c == r)
        cell_str(tb, level_cls(GR_LVL_X), "X");
      else
        cell(tb, level_cls(p.level), "%s%s", gr_level_str(&p, lv, sizeof(lv)), p.nv_inferred ? "*" : "");
    }
  }
  note(d, "NV# a bonded set of # NVLinks (* inferred, not recorded); PIX at most one PCIe bridge; PXB several PCIe "
          "bridges, no host bridge; PHB through a PCIe host bridge (the CPU); NODE between host bridges of one NUMA "
          "node; SYS across the SMP interconnect between NUMA nodes.");
  if (t->nnics) {
    char list[2048] = "", name[128];
    size_t off = 0;
    for (size_t n = 0; n < t->nnics && off < sizeof(list); n++)
      off += (size_t)snprintf(list + off, sizeof(list) - off, "%sNIC%zu: %s", n ? ", " : "", n,
                              gr_nic_legend_name(&t->pci[t->nics[n]], name, sizeof(name)));
    note(d, "NICs: %s.", list);
  }
}

static char xfer_letter(enum gr_xfer x)
{
  return x == GR_XFER_NVLINK ? 'N' : x == GR_XFER_P2P ? 'P' : 'H';
}

static void copy_matrix(struct rd_doc *d, const struct gr_prediction *p)
{
  size_t n = p->ngpus;
  double hi = 0;
  for (size_t i = 0; i < n * n; i++)
    hi = p->pairs[i].gbps > hi && i / n != i % n ? p->pairs[i].gbps : hi;
  heading(d, 3, "copy-matrix", "Predicted GPU-to-GPU copies, GB/s one way");
  struct rd_table *tb = matrix(d, NULL, n, 0);
  for (size_t r = 0; r < n; r++) {
    cell(tb, NULL, "GPU%zu", r);
    for (size_t c = 0; c < n; c++) {
      const struct gr_pair_predict *pp = &p->pairs[r * n + c];
      if (r == c)
        cell_str(tb, level_cls(GR_LVL_X), "X");
      else if (pp->gbps > 0)
        cell(tb, heat(pp->gbps, hi), "%c %.1f", xfer_letter(pp->best), pp->gbps);
      else
        cell(tb, NULL, "%c ?", xfer_letter(pp->best));
    }
  }
  note(d, "N NVLink, P PCIe peer-to-peer, H staged through host memory; the page colours faster pairs darker (the scale's top: %.1f GB/s).",
       hi);
}

static void nccl_matrix(struct rd_doc *d, const struct gr_topo *t, const struct gr_analysis *a)
{
  char dflt[160], why[160];
  heading(d, 3, "nccl-view", "NCCL's view");
  struct rd_table *tb = matrix(d, NULL, t->ngpus, 0);
  for (size_t r = 0; r < t->ngpus; r++) {
    cell(tb, NULL, "GPU%zu", r);
    for (size_t c = 0; c < t->ngpus; c++) {
      const struct gr_path *p = &a->gpu_gpu[r * a->ngpus + c];
      if (r == c)
        cell_str(tb, level_cls(GR_LVL_X), "X");
      else
        cell(tb, p->nccl_p2p ? level_cls(p->nccl) : "lv-shm", "%s%s", gr_nccl_level_str(p->nccl),
             p->nccl_p2p ? "" : "/shm");
    }
  }
  note(d, "NODE folds into PHB; /shm: no P2P by default, copies go through host memory. %s: P2P up to %s (%s).",
       gr_nccl_defaults_text(a, dflt, sizeof(dflt)), gr_nccl_level_str(a->nccl_p2p_level),
       gr_nccl_why(a, a->ngpus, why, sizeof(why)));
}

static void matrices(struct rd_doc *d, const struct gr_machine *m)
{
  const struct gr_topo *t = &m->topo;
  heading(d, 2, "matrices", "Matrices");
  if (!t->ngpus) {
    para(d, "No GPU in this input.");
    return;
  }
  level_matrix(d, t, &m->analysis);
  if (t->ngpus < 2)
    return;
  if (m->predicted)
    copy_matrix(d, &m->prediction);
  nccl_matrix(d, t, &m->analysis);
}

/* ---- hives ---- */

static void hives(struct rd_doc *d, const struct gr_machine *m)
{
  const struct gr_topo *t = &m->topo;
  const struct gr_analysis *a = &m->analysis;
  heading(d, 2, "hives", "P2P hives");
  if (!t->ngpus) {
    para(d, "No GPU in this input.");
    return;
  }
  struct rd_table *tb = table(d, NULL, a->nhives, 3, "hive", "GPUs", "joined by");
  for (size_t h = 0; h < a->nhives; h++) {
    char list[1024] = "";
    size_t off = 0;
    enum gr_level worst = GR_LVL_X;
    for (size_t g = 0; g < t->ngpus; g++) {
      if (a->hive[g] != (int)h)
        continue;
      if (off < sizeof(list))
        off += (size_t)snprintf(list + off, sizeof(list) - off, "%sGPU%zu", off ? " " : "", g);
      for (size_t k = 0; k < t->ngpus; k++)
        if (a->hive[k] == (int)h && a->gpu_gpu[g * a->ngpus + k].level > worst)
          worst = a->gpu_gpu[g * a->ngpus + k].level;
    }
    cell(tb, NULL, "%zu", h);
    cell_str(tb, NULL, list);
    if (worst == GR_LVL_NV)
      cell_str(tb, level_cls(worst), "NVLink");
    else if (worst == GR_LVL_PIX || worst == GR_LVL_PXB)
      cell(tb, level_cls(worst), "PCIe switch%s, worst pair %s", worst == GR_LVL_PXB ? "es" : "", gr_level_name(worst));
    else
      cell_str(tb, NULL, "alone");
  }
  note(d, "A hive: GPUs that reach each other peer-to-peer through NVLink or PCIe switches, without crossing the CPU.");
  if (m->predicted && t->ngpus > 1)
    para(d, "P2P groups (hives joined through a CPU's root complex, without crossing a socket): %zu, the largest with "
            "%d of %zu GPUs.", m->prediction.ndomains, m->prediction.largest_p2p_domain, t->ngpus);
}

/* ---- predictions beside the link limits ---- */

/* The slowest hop of a ring: its theoretical and NCCL's GB/s (0 unknown). */
static void ring_limit(const struct gr_analysis *a, const struct gr_ring *r, size_t n, double *lim, double *nccl)
{
  *lim = *nccl = 0;
  for (size_t i = 0; i < n && r->order; i++) {
    int x = r->order[i], y = r->order[(i + 1) % n];
    if (x < 0 || y < 0 || (size_t)x >= n || (size_t)y >= n)
      continue;
    const struct gr_path *p = &a->gpu_gpu[(size_t)x * a->ngpus + (size_t)y];
    if (p->bw_gbps > 0 && (*lim == 0 || p->bw_gbps < *lim))
      *lim = p->bw_gbps;
    if (p->nccl_bw_gbps > 0 && (*nccl == 0 || p->nccl_bw_gbps < *nccl))
      *nccl = p->nccl_bw_gbps;
  }
}

static double bench_plateau(const json_t *bench)
{
  return bench ? jnum(json_object_get(bench, "allreduce"), "plateau_busbw_gbps") : NAN;
}

static void allreduce_prediction(struct rd_doc *d, const struct gr_report_doc *doc)
{
  const struct gr_prediction *p = &doc->m->prediction;
  const struct gr_analysis *a = &doc->m->analysis;
  char dflt[160], bound[256];
  heading(d, 3, "allreduce-prediction", "All-reduce");
  if (a->nvlink_unrecorded)
    para(d, "All-reduce bus bandwidth: not predicted (this input shows NVSwitches but records no NVLink); over PCIe "
            "alone it would be %.1f GB/s.", p->nccl_default.busbw_gbps);
  else if (p->nccl_default.busbw_gbps > 0)
    para(d, "All-reduce bus bandwidth (nccl-tests busbw, large messages): %.1f GB/s with %s, bounded by %s.",
         p->nccl_default.busbw_gbps, gr_nccl_defaults_text(a, dflt, sizeof(dflt)),
         gr_ring_bound_text(p, &p->nccl_default, bound, sizeof(bound)));
  else {
    para(d, "All-reduce bus bandwidth: not known (this input records no link rates).");
    return;
  }
  size_t rows = 1 + (p->best_needs_p2p_level ? 1 : 0);
  struct rd_table *tb = table(d, NULL, rows, 7, "setting", "predicted busbw, GB/s", "algorithm",
                              "ring hops: NVLink / P2P / host", "slowest hop's limit, GB/s", "NCCL's figure, GB/s",
                              "bounded by");
  struct rd_bar *b = bars(d, "All-reduce: predicted (tick) and measured (bar, from --bench) against the ring's slowest "
                             "link (grey)", "GB/s", rows);
  d->v[d->n - 1].md_skip = true; /* the table holds the prediction and the limit, bench's section the plateau */
  for (size_t k = 0; k < rows; k++) {
    const struct gr_ring *r = k ? &p->best : &p->nccl_default;
    double lim, nccl;
    ring_limit(a, r, p->ngpus, &lim, &nccl);
    if (k)
      cell(tb, NULL, "NCCL_P2P_LEVEL=%s", p->best_p2p_level ? p->best_p2p_level : "?");
    else
      cell_str(tb, NULL, "NCCL's defaults");
    cell_num(tb, NULL, r->busbw_gbps, 1);
    cell_str(tb, NULL, r->nvls_busbw_gbps > r->ring_busbw_gbps ? "NVLS" : "ring");
    cell(tb, NULL, "%zu / %zu / %zu", r->nhops_nvlink, r->nhops_p2p, r->nhops_host);
    cell_num(tb, NULL, lim > 0 ? lim : NAN, 1);
    cell_num(tb, NULL, nccl > 0 ? nccl : NAN, 1);
    cell_str(tb, NULL, gr_ring_bound_text(p, r, bound, sizeof(bound)));
    b[k].label = k ? xasprintf("NCCL_P2P_LEVEL=%s", p->best_p2p_level ? p->best_p2p_level : "?")
                   : xstrdup("NCCL's defaults");
    b[k].predicted = r->busbw_gbps;
    b[k].limit = lim > 0 ? lim : NAN;
    b[k].value = k ? NAN : bench_plateau(doc->bench);
  }
}

/* GPU pairs that share a path class, predicted rate and limit, listed once. */
struct pair_group {
  char path[24];
  enum gr_xfer best;
  double gbps, limit, nccl;
  size_t count;
  char pairs[160];
  size_t off;
};

static size_t group_pairs(const struct gr_prediction *p, struct pair_group **out)
{
  size_t n = p->ngpus, ng = 0, cap = 0;
  struct pair_group *g = NULL;
  for (size_t x = 0; x < n; x++)
    for (size_t y = x + 1; y < n; y++) {
      const struct gr_path *path = &p->a->gpu_gpu[x * p->a->ngpus + y];
      const struct gr_pair_predict *pp = &p->pairs[x * n + y];
      char lv[24];
      gr_level_str(path, lv, sizeof(lv));
      size_t k = 0;
      while (k < ng && !(strcmp(g[k].path, lv) == 0 && g[k].best == pp->best && fabs(g[k].gbps - pp->gbps) < 0.05 &&
                         fabs(g[k].limit - path->bw_gbps) < 0.05))
        k++;
      if (k == ng) {
        grow_array((void **)&g, sizeof(*g), &cap, ng + 1);
        memset(&g[ng], 0, sizeof(*g));
        snprintf(g[ng].path, sizeof(g[ng].path), "%s", lv);
        g[ng].best = pp->best;
        g[ng].gbps = pp->gbps;
        g[ng].limit = path->bw_gbps;
        g[ng].nccl = path->nccl_bw_gbps;
        ng++;
      }
      if (g[k].count++ < 4 && g[k].off < sizeof(g[k].pairs))
        g[k].off += (size_t)snprintf(g[k].pairs + g[k].off, sizeof(g[k].pairs) - g[k].off, "%sGPU%zu-GPU%zu",
                                     g[k].off ? ", " : "", x, y);
    }
  *out = g;
  return ng;
}

static void copy_prediction(struct rd_doc *d, const struct gr_prediction *p)
{
  struct pair_group *g;
  size_t ng = group_pairs(p, &g);
  heading(d, 3, "copy-prediction", "GPU-to-GPU copies");
  struct rd_table *tb = table(d, NULL, ng, 7, "pairs", "path", "how", "predicted, GB/s", "link limit, GB/s",
                              "NCCL's figure, GB/s", "predicted / limit");
  struct rd_bar *b = bars(d, "Copies, one way: predicted (tick) against the path's link limit (grey)", "GB/s", ng);
  d->v[d->n - 1].md_skip = true;
  for (size_t k = 0; k < ng; k++) {
    cell(tb, NULL, "%s%s (%zu pair%s)", g[k].pairs, g[k].count > 4 ? ", ..." : "", g[k].count, plural(g[k].count));
    cell_str(tb, NULL, g[k].path);
    cell_str(tb, NULL, g[k].best == GR_XFER_NVLINK ? "NVLink" : g[k].best == GR_XFER_P2P ? "PCIe P2P" : "through host");
    cell_num(tb, NULL, g[k].gbps > 0 ? g[k].gbps : NAN, 1);
    cell_num(tb, NULL, g[k].limit > 0 ? g[k].limit : NAN, 1);
    cell_num(tb, NULL, g[k].nccl > 0 ? g[k].nccl : NAN, 1);
    if (g[k].gbps > 0 && g[k].limit > 0)
      cell(tb, NULL, "%.0f%%", g[k].gbps / g[k].limit * 100);
    else
      cell_str(tb, NULL, "");
    b[k].label = xasprintf("%s%s, %zu pair%s", g[k].path, g[k].best == GR_XFER_HOST ? " via host" : "", g[k].count,
                           plural(g[k].count));
    b[k].predicted = g[k].gbps > 0 ? g[k].gbps : NAN;
    b[k].limit = g[k].limit > 0 ? g[k].limit : NAN;
  }
  note(d, "The link limit is the theoretical rate per direction of the narrowest link on the path (PCIe gen x width, "
          "or the NVLinks); the prediction applies data/calibration.tsv's efficiencies to it.");
  free(g);
}

static void predictions(struct rd_doc *d, const struct gr_report_doc *doc)
{
  const struct gr_machine *m = doc->m;
  heading(d, 2, "predictions", "Predictions beside the link limits");
  if (!m->predicted || m->prediction.ngpus < 2) {
    para(d, "Fewer than two GPUs: no GPU-to-GPU copy or all-reduce to predict.");
    return;
  }
  allreduce_prediction(d, doc);
  copy_prediction(d, &m->prediction);
  if (m->prediction.nnotes) {
    struct rd_table *tb = table(d, "Placement", m->prediction.nnotes, 1, "NICs and NVMe drives beside the GPUs");
    for (size_t i = 0; i < m->prediction.nnotes; i++)
      cell_str(tb, NULL, m->prediction.notes[i]);
  }
}

static void verdicts(struct rd_doc *d, const struct gr_machine *m)
{
  const struct gr_prediction *p = &m->prediction;
  if (!m->predicted)
    return;
  heading(d, 2, "verdicts", "Verdicts");
  if (!p->nverdicts) {
    para(d, "None: the predictions withhold them (see the all-reduce note above).");
    return;
  }
  struct rd_table *tb = table(d, NULL, p->nverdicts, 4, "rating", "workload", "GPUs", "why");
  for (size_t i = 0; i < p->nverdicts; i++) {
    cell_str(tb, rating_cls(p->verdicts[i].rating), gr_rating_name(p->verdicts[i].rating));
    cell_str(tb, NULL, p->verdicts[i].workload);
    cell(tb, NULL, "%d", p->verdicts[i].gpus);
    cell_str(tb, NULL, p->verdicts[i].reasons);
  }
}

/* ---- findings ---- */

static const enum gr_sev shown_order[] = {GR_SEV_FAIL, GR_SEV_WARN, GR_SEV_ERROR, GR_SEV_INFO, GR_SEV_SKIPPED, GR_SEV_OK};

static char *evidence_text(const struct gr_evidence *ev, size_t n)
{
  char *s = xstrdup("");
  for (size_t e = 0; e < n; e++) {
    char *t = xasprintf("%s%s%s: %s", s, e ? "; " : "", ev[e].file ? ev[e].file : "", ev[e].value ? ev[e].value : "");
    free(s);
    s = t;
  }
  return s;
}

static void finding_row(struct rd_table *tb, const struct gr_finding *f)
{
  char *ev = evidence_text(f->ev, f->nev);
  cell_str(tb, sev_cls(f->sev), gr_sev_name(f->sev));
  cell_str(tb, "id", f->id);
  cell(tb, NULL, "%s%s%s", f->subject ? f->subject : "", f->subject ? ": " : "", f->text ? f->text : "");
  cell_str(tb, NULL, f->fix);
  cell_str(tb, NULL, f->cost);
  cell_str(tb, NULL, ev);
  free(ev);
}

static void findings_table(struct rd_doc *d, const struct gr_findings *fs)
{
  struct rd_table *tb = table(d, NULL, fs->n, 6, "severity", "check", "finding", "fix", "cost", "evidence");
  tb->drop_empty = true;
  for (size_t k = 0; k < sizeof(shown_order) / sizeof(shown_order[0]); k++)
    for (size_t i = 0; i < fs->n; i++)
      if (fs->v[i].sev == shown_order[k])
        finding_row(tb, &fs->v[i]);
}

static void findings(struct rd_doc *d, const struct gr_report_doc *doc)
{
  const struct gr_findings *tf = &doc->m->analysis.findings;
  heading(d, 2, "findings", "Findings");
  heading(d, 3, "topology-findings", "The wiring (gpurig topo)");
  if (tf->n)
    findings_table(d, tf);
  else
    para(d, "None.");
  heading(d, 3, "doctor-findings", "The set-up (gpurig doctor)");
  if (!doc->doctor) {
    para(d, "gpurig doctor was not run.");
    return;
  }
  const size_t *c = doc->doctor->findings.count;
  para(d, "%zu fail, %zu warn, %zu error, %zu info, %zu skipped, %zu ok. gpurig doctor read only; it changed nothing.",
       c[GR_SEV_FAIL], c[GR_SEV_WARN], c[GR_SEV_ERROR], c[GR_SEV_INFO], c[GR_SEV_SKIPPED], c[GR_SEV_OK]);
  if (doc->doctor->root_would_add)
    note(d, "Run as root to add: %s.", doc->doctor->root_would_add);
  findings_table(d, &doc->doctor->findings);
}

/* A list of JSON findings (bench's {severity, id, text}; burn's verdicts as
 * doctor's JSON), worst first. */
static void json_findings(struct rd_doc *d, const json_t *list)
{
  size_t n = json_array_size(list), i;
  const json_t *v;
  struct rd_table *tb = table(d, NULL, n, 4, "severity", "check", "finding", "fix");
  tb->drop_empty = true;
  for (size_t k = 0; k < sizeof(shown_order) / sizeof(shown_order[0]); k++)
    json_array_foreach(list, i, v)
    {
      enum gr_sev s = sev_of(jstr(v, "severity"));
      if (s != shown_order[k])
        continue;
      const char *text = jstr(v, "text") ? jstr(v, "text") : jstr(v, "message");
      cell_str(tb, sev_cls(s), gr_sev_name(s));
      cell_str(tb, "id", jstr(v, "id"));
      cell_str(tb, NULL, text);
      cell_str(tb, NULL, jstr(v, "fix"));
    }
}

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
  const char *test = jstr(r, "test"), *engine = jstr(r, "engine");
  long src = jidx(r, "src_gpu"), dst = jidx(r, "dst_gpu");
  const char *eng = engine && strcmp(engine, "sm") == 0 ? "SM" : "CE";
  if (test && (strcmp(test, "p2p") == 0 || strcmp(test, "p2p_bidir") == 0))
    return xasprintf("GPU%ld %s GPU%ld (%s)", src, strcmp(test, "p2p") == 0 ? "->" : "<->", dst, eng);
  return xasprintf("GPU%ld %s (%s)", dst >= 0 ? dst : src, test_title(test), eng);
}

static bool test_in(const json_t *r, const char *const *tests)
{
  const char *t = jstr(r, "test");
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
  json_array_foreach(results, i, r) n += test_in(r, tests) && isfinite(jnum(r, "median_gbps"));
  if (!n)
    return 0;
  struct rd_bar *b = bars(d, title, "GB/s", n);
  json_array_foreach(results, i, r)
  {
    double med = jnum(r, "median_gbps"), floor = jnum(r, "floor_gbps");
    if (!test_in(r, tests) || !isfinite(med) || k >= n)
      continue;
    b[k].label = result_label(r);
    b[k].value = med;
    b[k].predicted = jnum(r, "predicted_gbps");
    b[k].limit = jnum(r, "limit_gbps");
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
    long s = jidx(r, "src_gpu"), t = jidx(r, "dst_gpu");
    const char *eng = jstr(r, "engine"), *test = jstr(r, "test");
    double med = jnum(r, "median_gbps");
    if (!test || strcmp(test, "p2p") || !eng || strcmp(eng, "ce") || s < 0 || t < 0 || (size_t)s >= n ||
        (size_t)t >= n || !isfinite(med))
      continue;
    v[(size_t)s * n + (size_t)t] = med;
    hi = med > hi ? med : hi;
    any = true;
  }
  if (any) {
    struct rd_table *tb = matrix(d, "Measured GPU-to-GPU copies, copy engine, one way, GB/s (median)", n, 0);
    for (size_t x = 0; x < n; x++) {
      cell(tb, NULL, "GPU%zu", x);
      for (size_t y = 0; y < n; y++)
        if (x == y)
          cell_str(tb, level_cls(GR_LVL_X), "X");
        else
          cell_num(tb, heat(v[x * n + y], hi), v[x * n + y], 1);
    }
  }
  free(v);
}

static void not_run_table(struct rd_doc *d, const json_t *results)
{
  size_t n = 0, i;
  const json_t *r;
  json_array_foreach(results, i, r) n += jstr(r, "status") && strcmp(jstr(r, "status"), "ok") != 0;
  if (!n)
    return;
  struct rd_table *tb = table(d, "Tests that did not give a figure", n, 3, "test", "status", "why");
  json_array_foreach(results, i, r)
  {
    const char *st = jstr(r, "status");
    if (!st || strcmp(st, "ok") == 0)
      continue;
    char *label = result_label(r);
    cell_str(tb, NULL, label);
    cell_str(tb, strcmp(st, "skipped") == 0 ? "sev-skipped" : "sev-fail", st);
    cell_str(tb, NULL, jstr(r, "note") ? jstr(r, "note") : jstr(r, "via") ? jstr(r, "via") : "");
    free(label);
  }
}

static void latency_table(struct rd_doc *d, const json_t *results)
{
  size_t n = 0, i;
  const json_t *r;
  static const char *const lat[] = {"latency", NULL};
  json_array_foreach(results, i, r) n += test_in(r, lat) && isfinite(jnum(r, "median_us"));
  if (!n)
    return;
  struct rd_table *tb = table(d, "Small-copy latency", n, 4, "copy", "median, us", "min, us", "max, us");
  json_array_foreach(results, i, r)
  {
    if (!test_in(r, lat) || !isfinite(jnum(r, "median_us")))
      continue;
    long src = jidx(r, "src_gpu"), dst = jidx(r, "dst_gpu");
    if (src >= 0)
      cell(tb, NULL, "GPU%ld -> %s", src, dst >= 0 ? "GPU" : "host");
    else
      cell(tb, NULL, "host -> GPU%ld", dst);
    cell_num(tb, NULL, jnum(r, "median_us"), 1);
    cell_num(tb, NULL, jnum(r, "min_us"), 1);
    cell_num(tb, NULL, jnum(r, "max_us"), 1);
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
    const char *via = jstr(l, "via");
    double a = jnum(l, "from_gpu"), b = jnum(l, "to_gpu");
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
  heading(d, 3, "bench-allreduce", "All-reduce (%s)", jstr(ar, "library") ? jstr(ar, "library") : "NCCL");
  if (jstr(ar, "note"))
    note(d, "%s", jstr(ar, "note"));
  json_array_foreach(sizes, i, s) n += isfinite(jnum(s, "size_bytes")) && jnum(s, "size_bytes") > 0 &&
                                       isfinite(jnum(s, "busbw_gbps"));
  if (!n) {
    para(d, "No all-reduce figure.");
    return;
  }
  double plateau = jnum(ar, "plateau_busbw_gbps"), pred = jnum(ar, "predicted_busbw_gbps");
  char plat[32] = "?", pr[32] = "?"; /* "%.1f" of NAN would print "nan" */
  if (isfinite(plateau))
    snprintf(plat, sizeof(plat), "%.1f", plateau);
  if (isfinite(pred))
    snprintf(pr, sizeof(pr), "%.1f", pred);
  para(d, "Plateau: %s GB/s busbw%s; predicted: %s GB/s.", plat,
       json_is_true(json_object_get(ar, "still_rising")) ? " (still rising at the largest size)" : "", pr);
  struct rd_block *lb = add(d, RD_LINE);
  lb->text = xstrdup("All-reduce bus bandwidth against message size");
  lb->unit = xstrdup("GB/s");
  lb->line = xcalloc(1, sizeof(*lb->line));
  struct rd_line *l = lb->line;
  l->x = xcalloc(n, sizeof(double));
  l->y = xcalloc(n, sizeof(double));
  l->ref = pred;
  l->ref_label = xstrdup("predicted");
  struct rd_table *tb = table(d, NULL, n, 5, "size", "time, us", "algbw, GB/s", "busbw, GB/s", "wrong");
  json_array_foreach(sizes, i, s)
  {
    double sz = jnum(s, "size_bytes"), bw = jnum(s, "busbw_gbps");
    if (!(isfinite(sz) && sz > 0 && isfinite(bw)) || l->n >= n)
      continue;
    l->x[l->n] = sz;
    l->y[l->n++] = bw;
    char size[32];
    cell_str(tb, NULL, sz < 1e18 ? gr_size_text((size_t)sz, size, sizeof(size)) : "?");
    cell_num(tb, NULL, jnum(s, "time_us"), 1);
    cell_num(tb, NULL, jnum(s, "algbw_gbps"), 2);
    cell_num(tb, NULL, bw, 2);
    cell_num(tb, jnum(s, "wrong") > 0 ? "sev-fail" : NULL, jnum(s, "wrong"), 0);
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
    const char *bus = jstr(g, "pci_bus_id");
    int tg = bus ? gr_topo_gpu_by_busid(t, bus) : -1;
    missing += tg < 0;
    renumbered += tg >= 0 && tg != jidx(g, "index");
  }
  if (missing)
    note(d, "%zu of the bench's %zu GPUs are not in this report's machine (by PCI bus id): were these results taken "
            "on another machine?", missing, json_array_size(gpus));
  if (renumbered)
    note(d, "bench numbers GPUs in CUDA's order, which differs here from the topology's: the GPU numbers in this "
            "section are bench's.");
}

static void bench(struct rd_doc *d, const struct gr_report_doc *doc)
{
  const json_t *j = doc->bench;
  heading(d, 2, "bench", "Measured (gpurig bench)");
  if (!j) {
    para(d, "No bench results given (gpurig bench --json > bench.json, then gpurig report --bench bench.json).");
    return;
  }
  const json_t *cfg = json_object_get(j, "config"), *results = json_object_get(j, "results");
  char size[32] = "?";
  double cb = jnum(cfg, "copy_bytes");
  if (isfinite(cb) && cb > 0 && cb < 1e18)
    gr_size_text((size_t)cb, size, sizeof(size));
  para(d, "From %s: backend %s, %zu GPU%s, copies of %s, median of %.0f runs%s.", doc->bench_name ? doc->bench_name : "--bench",
       jstr(j, "backend") ? jstr(j, "backend") : "?", json_array_size(json_object_get(j, "gpus")),
       plural(json_array_size(json_object_get(j, "gpus"))), size, isfinite(jnum(cfg, "runs")) ? jnum(cfg, "runs") : 0,
       json_is_true(json_object_get(cfg, "quick")) ? " (--quick)" : "");
  bench_gpus_note(d, &doc->m->topo, json_object_get(j, "gpus"));
  static const char *const host[] = {"h2d", "d2h", "host_bidir", NULL}, *const local[] = {"local", NULL},
                           *const p2p[] = {"p2p", "p2p_bidir", NULL};
  heading(d, 3, "bench-copies", "Copies against their limits");
  result_bars(d, results, host, "Host <-> GPU: measured median (bar), predicted (tick), the link's limit (grey)");
  result_bars(d, results, local, "Within each GPU: measured median (bar) against half the memory bandwidth (grey)");
  p2p_matrix(d, j);
  size_t np2p = 0, i;
  const json_t *r;
  json_array_foreach(results, i, r) np2p += test_in(r, p2p) && isfinite(jnum(r, "median_gbps"));
  if (np2p <= 64)
    result_bars(d, results, p2p, "GPU to GPU: measured median (bar), predicted (tick), the path's limit (grey)");
  else
    note(d, "%zu GPU-to-GPU figures: the matrix above shows them (copy engine, one way).", np2p);
  note(d, "An orange bar is under its floor, the least a healthy path gives (docs/measure.md).");
  latency_table(d, results);
  not_run_table(d, results);
  bench_allreduce(d, json_object_get(j, "allreduce"));
  heading(d, 3, "bench-findings", "What bench found");
  if (json_array_size(json_object_get(j, "findings")))
    json_findings(d, json_object_get(j, "findings"));
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
    const char *subj = jstr(v, "subject");
    if (!bus || !subj || !strstr(subj, bus) || strstr(subj, "<->"))
      continue; /* links ("GPU0 ... <-> root port ...") have their own rows in the verdicts */
    enum gr_sev s = sev_of(jstr(v, "severity"));
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
  struct rd_table *tb = table(d, NULL, n, 12, "GPU", "bus id", "verdict", "TFLOPS fp16", "wrong products",
                              "host GB/s", "P2P GB/s", "hottest, C", "most power, W", "lowest SM clock, MHz",
                              "PCIe replays", "slowed");
  struct rd_block *pb = add(d, RD_PANELS);
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
    const char *bus = jstr(g, "bus_id");
    bool lost = json_is_true(json_object_get(g, "lost"));
    enum gr_sev s = burn_gpu_sev(verdicts, bus, &any);
    const char *verdict = lost ? "lost" : !any ? "?" : s == GR_SEV_OK ? "pass" : gr_sev_name(s);
    const char *cls = lost ? "sev-fail" : any ? sev_cls(s) : NULL;
    char *th = throttle_text(json_object_get(g, "throttle_s"));
    cell(tb, NULL, "GPU%ld", jidx(g, "index"));
    cell_str(tb, NULL, bus);
    cell_str(tb, cls, verdict);
    cell_num(tb, NULL, jnum(g, "gemm_tflops"), 1);
    cell_num(tb, jnum(g, "gemm_wrong") > 0 ? "sev-fail" : NULL, jnum(g, "gemm_wrong"), 0);
    cell_num(tb, NULL, jnum(g, "host_gbps"), 1);
    cell_num(tb, NULL, jnum(g, "p2p_gbps"), 1);
    cell_num(tb, NULL, jnum(g, "temp_max_c"), 0);
    cell_num(tb, NULL, jnum(g, "power_max_w"), 0);
    cell_num(tb, NULL, jnum(g, "sm_clock_min_mhz"), 0);
    cell_num(tb, jnum(g, "pcie_replays") > 0 ? "sev-warn" : NULL, jnum(g, "pcie_replays"), 0);
    cell_str(tb, th[0] ? "sev-warn" : NULL, th[0] ? th : "no");
    free(th);
    p->row_label[i] = xasprintf("GPU%ld", jidx(g, "index"));
    p->row_cls[i] = cls;
    for (size_t k = 0; k < BURN_PANELS; k++)
      p->v[i * BURN_PANELS + k] = jnum(g, keys[k]);
  }
}

static void burn(struct rd_doc *d, const struct gr_report_doc *doc)
{
  const json_t *j = doc->burn;
  heading(d, 2, "burn", "Burn-in (gpurig burn)");
  if (!j) {
    para(d, "No burn-in results given (gpurig burn --json > burn.json, then gpurig report --burn burn.json).");
    return;
  }
  double ran = jnum(j, "ran_s"), dur = jnum(j, "duration_s"), n = jnum(j, "gemm_n");
  para(d, "From %s: loads %s, pattern %s, %.0f s of %.0f%s; matrices %.0f x %.0f; exit status %.0f.",
       doc->burn_name ? doc->burn_name : "--burn", jstr(j, "loads") ? jstr(j, "loads") : "?",
       jstr(j, "pattern") ? jstr(j, "pattern") : "?", isfinite(ran) ? ran : 0, isfinite(dur) ? dur : 0,
       json_is_true(json_object_get(j, "interrupted")) ? " (interrupted)" : "", isfinite(n) ? n : 0, isfinite(n) ? n : 0,
       isfinite(jnum(j, "exit")) ? jnum(j, "exit") : -1);
  if (jstr(j, "gemm_note"))
    note(d, "%s", jstr(j, "gemm_note"));
  burn_gpus(d, j);
  const json_t *ar = json_object_get(j, "allreduce");
  if (json_is_object(ar)) {
    struct rd_table *tb = table(d, "All-reduce under load", 1, 5, "iterations", "p50, ms", "p99, ms", "max, ms",
                                "stalls");
    cell_num(tb, NULL, jnum(ar, "iterations"), 0);
    cell_num(tb, NULL, jnum(ar, "p50_ms"), 2);
    cell_num(tb, NULL, jnum(ar, "p99_ms"), 2);
    cell_num(tb, NULL, jnum(ar, "max_ms"), 2);
    cell(tb, json_array_size(json_object_get(ar, "stalls")) ? "sev-warn" : NULL, "%zu",
         json_array_size(json_object_get(ar, "stalls")));
    if (jstr(ar, "note"))
      note(d, "%s", jstr(ar, "note"));
  }
  heading(d, 3, "burn-verdicts", "Burn-in verdicts");
  json_findings(d, json_object_get(j, "verdicts"));
}

/* ---- the whole ---- */

void rd_build(const struct gr_report_doc *doc, struct rd_doc *out)
{
  memset(out, 0, sizeof(*out));
  out->diagram_svg = doc->diagram_svg;
  header(out, doc);
  summary(out, doc);
  diagram(out, doc);
  gpus(out, doc->m);
  matrices(out, doc->m);
  hives(out, doc->m);
  predictions(out, doc);
  verdicts(out, doc->m);
  findings(out, doc);
  bench(out, doc);
  burn(out, doc);
}

static void free_table(struct rd_table *t)
{
  if (!t)
    return;
  for (size_t c = 0; c < t->ncols; c++)
    free(t->head[c].text);
  for (size_t i = 0; i < t->nrows * t->ncols; i++)
    free(t->cells[i].text);
  for (size_t r = 0; t->row_gpu && r < t->nrows; r++)
    free(t->row_gpu[r]);
  free(t->row_gpu);
  free(t->head);
  free(t->cells);
  free(t);
}

static void free_panels(struct rd_panels *p)
{
  if (!p)
    return;
  for (size_t r = 0; r < p->nrows; r++)
    free(p->row_label[r]);
  for (size_t k = 0; k < p->npanels; k++)
    free(p->panel_title[k]);
  free(p->row_label);
  free(p->row_cls);
  free(p->panel_title);
  free(p->v);
  free(p);
}

void rd_free(struct rd_doc *d)
{
  for (size_t i = 0; i < d->n; i++) {
    struct rd_block *b = &d->v[i];
    free(b->id);
    free(b->text);
    free(b->unit);
    free_table(b->table);
    for (size_t k = 0; k < b->nbars; k++)
      free(b->bars[k].label);
    free(b->bars);
    if (b->line) {
      free(b->line->x);
      free(b->line->y);
      free(b->line->ref_label);
      free(b->line);
    }
    free_panels(b->panels);
  }
  free(d->v);
  memset(d, 0, sizeof(*d));
}

bool rd_column_shown(const struct rd_table *t, size_t c)
{
  if (!t->drop_empty)
    return true;
  for (size_t r = 0; r < t->nrows; r++)
    if (t->cells[r * t->ncols + c].text && t->cells[r * t->ncols + c].text[0])
      return true;
  return false;
}

size_t rd_utf8_len(const unsigned char *s)
{
  if (s[0] < 0x80)
    return 1;
  size_t n = s[0] >= 0xc2 && s[0] <= 0xdf ? 2 : s[0] >= 0xe0 && s[0] <= 0xef ? 3 : s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : 0;
  for (size_t i = 1; i < n; i++)
    if ((s[i] & 0xc0) != 0x80)
      return 0;
  if ((n == 3 && s[0] == 0xe0 && s[1] < 0xa0) || (n == 3 && s[0] == 0xed && s[1] >= 0xa0) ||
      (n == 4 && s[0] == 0xf0 && s[1] < 0x90) || (n == 4 && s[0] == 0xf4 && s[1] >= 0x90))
    return 0; /* overlong, a surrogate, or past U+10FFFF */
  if (n == 2 && s[0] == 0xc2 && s[1] < 0xa0)
    return 0; /* a C1 control */
  return n;
}

/* ---- input checks ---- */

bool gr_report_bench_ok(const json_t *j, const char **why)
{
  if (!json_is_object(j))
    *why = "is not a JSON object (expected gpurig bench --json output)";
  else if (json_is_array(json_object_get(j, "verdicts")) && json_is_array(json_object_get(j, "gpus")) &&
           !json_object_get(j, "results"))
    *why = "is gpurig burn --json output, not bench's (give it to --burn)";
  else if (!json_is_array(json_object_get(j, "results")) || !json_is_string(json_object_get(j, "backend")))
    *why = "is not gpurig bench --json output (no \"results\" array or \"backend\")";
  else
    return true;
  return false;
}

bool gr_report_burn_ok(const json_t *j, const char **why)
{
  if (!json_is_object(j))
    *why = "is not a JSON object (expected gpurig burn --json output)";
  else if (json_is_array(json_object_get(j, "results")) && json_object_get(j, "backend"))
    *why = "is gpurig bench --json output, not burn's (give it to --bench)";
  else if (!json_is_array(json_object_get(j, "gpus")) || !json_is_array(json_object_get(j, "verdicts")))
    *why = "is not gpurig burn --json output (no \"gpus\" and \"verdicts\" arrays)";
  else
    return true;
  return false;
}
