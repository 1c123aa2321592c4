/* The report's machine sections: header, summary, diagram, GPUs, matrices,
 * hives, predictions, verdicts and findings (print/report/report_doc_internal.h). */
#include "print/report/report_doc.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/power.h"
#include "base/util.h"
#include "facts/catalog.h"
#include "model/names.h"
#include "print/common.h"
#include "print/report/report_doc_internal.h"

/* ---- header and summary ---- */

void doc_header(struct rd_doc *d, const struct gr_report_doc *doc)
{
  const struct gr_topo *t = &doc->m->topo;
  char *line = NULL, nccl[160];
  size_t len = 0;
  FILE *f = open_memstream(&line, &len);
  if (f) {
    gr_print_machine_line(f, t);
    fclose(f);
  }
  doc_heading(d, 1, "top", "gpurig report: %s", t->product ? t->product : t->hostname ? t->hostname : "machine");
  para(d, "%s", line ? line : "");
  free(line);
  /* RCCL where it is what runs: it keeps NCCL's path types and P2P rules */
  para(d, "Source: %s%s%s. gpurig %s. %s's view and the predictions follow %s.", gr_topo_input_name(t),
       t->source_path ? " " : "", t->source_path ? t->source_path : "", GPURIG_VERSION, gr_topo_collective(t),
       gr_nccl_defaults_text(&doc->m->analysis, nccl, sizeof(nccl)));
  if (t->rig && t->rig->notes)
    note(d, "Rig sources: %s", t->rig->notes);
  if (t->rig)
    note(d, "Bus ids are modelled: a rig names no buses, so gpurig numbers them in declaration order; they are no "
         "machine's.");
  for (size_t i = 0; i < t->nwarnings; i++)
    note(d, "Loader warning: %s", t->warnings[i]);
}

const char *doc_plural(size_t n)
{
  return n == 1 ? "" : "s";
}

static void counts_line(struct rd_doc *d, const struct gr_topo *t, const struct gr_analysis *a)
{
  size_t nvme = 0;
  for (size_t i = 0; i < t->npci; i++)
    nvme += t->pci[i].kind == GR_KIND_NVME;
  char accels[64] = ""; /* accelerators that are no GPUs (docs/topology.md) */
  if (t->naccels)
    snprintf(accels, sizeof(accels), ", %zu accelerator%s", t->naccels, doc_plural(t->naccels));
  para(d, "%zu socket%s, %zu NUMA node%s, %zu GPU%s%s, %zu RDMA NIC%s, %zu NVMe drive%s, %zu P2P hive%s.", t->npackages,
       doc_plural(t->npackages), t->nnumas, doc_plural(t->nnumas), t->ngpus, doc_plural(t->ngpus), accels, t->nnics,
       doc_plural(t->nnics), nvme, doc_plural(nvme), a->nhives, doc_plural(a->nhives));
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
  json_array_foreach(list, i, v) count[doc_sev_of(doc_jstr(v, "severity"))]++;
}

void doc_summary(struct rd_doc *d, const struct gr_report_doc *doc)
{
  const struct gr_machine *m = doc->m;
  const struct gr_prediction *p = &m->prediction;
  doc_heading(d, 2, "summary", "Summary");
  counts_line(d, &m->topo, &m->analysis);
  size_t rows = 2 + (m->predicted ? p->nverdicts + 1 : 0) + (doc->doctor != NULL) + (doc->bench != NULL) +
                (doc->burn != NULL);
  struct rd_table *t = doc_table(d, "Verdicts at a glance", rows, 3, "what", "verdict", "detail");
  for (size_t i = 0; m->predicted && i < p->nverdicts; i++) {
    doc_cell(t, NULL, "%s across %d GPU%s", p->verdicts[i].workload, p->verdicts[i].gpus, doc_plural((size_t)p->verdicts[i].gpus));
    doc_cell_str(t, rating_cls(p->verdicts[i].rating), gr_rating_name(p->verdicts[i].rating));
    doc_cell_str(t, NULL, "see Verdicts");
  }
  if (m->predicted) {
    doc_cell_str(t, NULL, "all-reduce, predicted");
    if (p->nccl_default.busbw_gbps > 0 && !m->analysis.gpulink_unrecorded)
      doc_cell(t, NULL, "%.1f GB/s", p->nccl_default.busbw_gbps);
    else
      doc_cell_str(t, NULL, "not predicted");
    char bound[256] = "";
    if (p->ngpus > 1 && p->nccl_default.busbw_gbps > 0)
      gr_ring_bound_text(p, &p->nccl_default, bound, sizeof(bound));
    doc_cell_str(t, NULL, bound);
  }
  const struct gr_findings *tf = &m->analysis.findings;
  char *c = counts_text(tf->count);
  doc_cell_str(t, NULL, "topology findings");
  doc_cell_str(t, doc_sev_cls(worst_of(tf->count)), gr_sev_name(worst_of(tf->count)));
  doc_cell_str(t, NULL, c);
  free(c);
  if (doc->doctor) {
    c = counts_text(doc->doctor->findings.count);
    doc_cell_str(t, NULL, "doctor");
    doc_cell_str(t, doc_sev_cls(worst_of(doc->doctor->findings.count)), gr_sev_name(worst_of(doc->doctor->findings.count)));
    doc_cell_str(t, NULL, c);
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
    doc_cell_str(t, NULL, k ? "burn-in (gpurig burn)" : "measured (gpurig bench)");
    doc_cell_str(t, doc_sev_cls(w), gr_sev_name(w));
    doc_cell_str(t, NULL, c);
    free(c);
  }
  doc_cell_str(t, NULL, "exit status of gpurig report");
  doc_cell(t, NULL, "%d", (int)gr_findings_exit(tf));
  doc_cell_str(t, NULL, "from the topology findings (0 ok, 1 a warning)");
}

void doc_diagram(struct rd_doc *d, const struct gr_report_doc *doc)
{
  doc_heading(d, 2, "diagram", "Block diagram");
  if (doc->diagram_svg)
    doc_add(d, RD_DIAGRAM);
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
  if (f->gpulink_gen > 0)
    snprintf(gen, sizeof(gen), ", NVLink%d", f->gpulink_gen);
  para(d, "NVSwitch fabric (%s%s%s%s%s%s): %s.", f->from == GR_FABRIC_INFERRED ? "inferred" : "from ",
       f->from == GR_FABRIC_INFERRED ? "" : gr_fabric_from_name(f->from), sw, gen, f->why ? ": " : "",
       f->why ? f->why : "", text);
}

void doc_gpus(struct rd_doc *d, const struct gr_machine *m)
{
  const struct gr_topo *t = &m->topo;
  struct gr_names names = {0};
  doc_heading(d, 2, "gpus", "GPUs");
  if (!t->ngpus) {
    para(d, "No GPU in this input.");
    return;
  }
  struct rd_table *tb = doc_table(d, NULL, t->ngpus, 8, "GPU", "model", "PCI bus id", "link (trains to)",
                                  "GB/s per direction", "memory", "NUMA", "hive");
  for (size_t g = 0; g < t->ngpus; g++) {
    const struct gr_pci *p = &t->pci[t->gpus[g]];
    const struct gr_gpu_model *cat = gr_pci_catalog(p);
    const struct gr_link_facts *lf = &m->analysis.link[t->gpus[g]];
    char bus[32], link[96];
    gr_link_label(lf, GR_LABEL_CAPABLE, link, sizeof(link));
    doc_row_gpu(tb, g, g);
    doc_cell(tb, NULL, "GPU%zu", g);
    doc_cell_str(tb, NULL, gr_pci_display_name(t, t->gpus[g], &names));
    doc_cell_str(tb, NULL, gr_pci_busid(p, bus, sizeof(bus)));
    doc_cell_str(tb, NULL, link);
    doc_cell_num(tb, NULL, lf->gbps > 0 ? lf->gbps : NAN, 1);
    if (cat && cat->mem_gib > 0)
      doc_cell(tb, NULL, "%.0f GiB", cat->mem_gib);
    else
      doc_cell_str(tb, NULL, "");
    if (p->numa >= 0)
      doc_cell(tb, NULL, "%d", p->numa);
    else
      doc_cell_str(tb, NULL, "?");
    doc_cell(tb, NULL, "%d", m->analysis.hive[g]);
  }
  note(d, "Memory is the catalog's (data/gpus.tsv) for the model; an empty cell: the catalog does not know it.");
  for (size_t i = 0; i < t->nfabrics; i++)
    if (t->fabrics[i].nmembers)
      fabric_para(d, t, &t->fabrics[i]);
  gr_names_free(&names);
}

/* ---- power ---- */

/* "1520 W", or "unknown". */
static void watts_cell(struct rd_table *tb, double w)
{
  if (w < 0)
    doc_cell_str(tb, NULL, "unknown");
  else
    doc_cell(tb, NULL, "%.0f W", w);
}

/* The budget the analysis made (analysis/power.h), a row per PSU and per
 * circuit; shown for a rig with psu lines. */
void doc_power(struct rd_doc *d, const struct gr_machine *m)
{
  const struct gr_power_budget *b = &m->power;
  char pk[64];
  if (!m->has_power)
    return;
  doc_heading(d, 2, "power", "Power budget");
  para(d, "Full load: GPUs at board power (%s), CPUs at TDP (%s); peaks are published transients, %s in all.",
       b->gpu_w < 0 ? "unknown" : "known", b->cpu_w < 0 ? "unknown" : "known",
       gr_power_peak_text(b->gpu_peak_w, b->peak_window_us, pk, sizeof(pk)));
  struct rd_table *tb = doc_table(d, NULL, b->npsus + b->ncircuits, 7, "part", "rating", "sustained", "peak",
                                  "wall", "headroom", "busiest rail");
  for (size_t i = 0; i < b->npsus; i++) {
    const struct gr_power_psu *p = &b->psus[i];
    doc_cell(tb, NULL, "PSU %s", p->name);
    doc_cell(tb, NULL, "%.0f W", p->watts);
    watts_cell(tb, p->sustained_w);
    watts_cell(tb, p->transient_w);
    watts_cell(tb, p->wall_w);
    if (p->sustained_w < 0)
      doc_cell_str(tb, NULL, "unknown");
    else /* below zero: by how much the load is over the rating */
      doc_cell(tb, p->headroom_w < 0 ? "sev-fail" : NULL, "%.0f W", p->headroom_w);
    if (p->rail_w < 0)
      doc_cell_str(tb, NULL, p->rails > 0 ? "unknown" : "rails unknown");
    else if (p->rail_limit_w < 0)
      doc_cell(tb, NULL, "%zu GPU%s: %.0f W (limit unknown)", p->gpus_per_rail, doc_plural(p->gpus_per_rail),
               p->rail_w);
    else
      doc_cell(tb, NULL, "%zu GPU%s: %.0f W of %.0f W", p->gpus_per_rail, doc_plural(p->gpus_per_rail), p->rail_w,
               p->rail_limit_w);
  }
  for (size_t i = 0; i < b->ncircuits; i++) {
    const struct gr_power_circuit *c = &b->circuits[i];
    doc_cell(tb, NULL, "circuit %s", c->name);
    if (c->limit_w < 0)
      doc_cell_str(tb, NULL, "unknown");
    else
      doc_cell(tb, NULL, "%.0f W continuous", c->limit_w);
    doc_cell_str(tb, NULL, "");
    doc_cell_str(tb, NULL, "");
    watts_cell(tb, c->wall_w);
    if (c->wall_w < 0 || c->limit_w < 0)
      doc_cell_str(tb, NULL, "unknown");
    else /* below zero: by how much the wall draw is over */
      doc_cell(tb, c->wall_w > c->limit_w ? "sev-fail" : NULL, "%.0f W", c->limit_w - c->wall_w);
    doc_cell_str(tb, NULL, "");
  }
  note(d, "Wall draw is the sustained load through the PSU's 80 PLUS curve (data/power-psu.tsv); a circuit may carry "
       "80%% of its breaker continuously. The power findings below name what is over and the fix.");
}

/* ---- matrices ---- */

/* A GPU x GPU (and NIC) table: a header cell per column, "GPUr" first. */
struct rd_table *doc_matrix(struct rd_doc *d, const char *title, size_t ngpus, size_t nnics)
{
  struct rd_table *t = doc_table_raw(d, title, ngpus, 1 + ngpus + nnics);
  t->matrix = true;
  t->head[0].text = xstrdup("");
  for (size_t c = 1; c < t->ncols; c++)
    t->head[c].text = c <= ngpus ? xasprintf("GPU%zu", c - 1) : xasprintf("NIC%zu", c - 1 - ngpus);
  return t;
}

static void level_matrix(struct rd_doc *d, const struct gr_topo *t, const struct gr_analysis *a)
{
  doc_heading(d, 3, "levels", "GPU matrix (nvidia-smi topo -m levels)");
  struct rd_table *tb = doc_matrix(d, NULL, t->ngpus, t->nnics);
  for (size_t r = 0; r < t->ngpus; r++) {
    doc_cell(tb, NULL, "GPU%zu", r);
    for (size_t c = 0; c < t->ngpus + t->nnics; c++) {
      struct gr_path p = c < t->ngpus ? gr_gpu_path(a, r, c) : a->gpu_nic[r * a->nnics + (c - t->ngpus)];
      char lv[16];
      if (c == r)
        doc_cell_str(tb, doc_level_cls(GR_LVL_X), "X");
      else
        doc_cell(tb, doc_level_cls(p.level), "%s%s", gr_level_str(&p, lv, sizeof(lv)), p.nv_inferred ? "*" : "");
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
  return x == GR_XFER_GPULINK ? 'N' : x == GR_XFER_P2P ? 'P' : 'H';
}

static void copy_matrix(struct rd_doc *d, const struct gr_prediction *p)
{
  size_t n = p->ngpus;
  double hi = 0;
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; j < n; j++)
      hi = i != j && gr_pair_at(p, i, j)->gbps > hi ? gr_pair_at(p, i, j)->gbps : hi;
  doc_heading(d, 3, "copy-matrix", "Predicted GPU-to-GPU copies, GB/s one way");
  struct rd_table *tb = doc_matrix(d, NULL, n, 0);
  for (size_t r = 0; r < n; r++) {
    doc_cell(tb, NULL, "GPU%zu", r);
    for (size_t c = 0; c < n; c++) {
      const struct gr_pair_predict *pp = gr_pair_at(p, r, c);
      if (r == c)
        doc_cell_str(tb, doc_level_cls(GR_LVL_X), "X");
      else if (pp->gbps > 0)
        doc_cell(tb, doc_heat(pp->gbps, hi), "%c %.1f", xfer_letter(pp->best), pp->gbps);
      else
        doc_cell(tb, NULL, "%c ?", xfer_letter(pp->best));
    }
  }
  note(d, "N NVLink, P PCIe peer-to-peer, H staged through host memory; the page colours faster pairs darker (the scale's top: %.1f GB/s).",
       hi);
}

static void nccl_matrix(struct rd_doc *d, const struct gr_topo *t, const struct gr_analysis *a)
{
  char dflt[160], why[160];
  doc_heading(d, 3, "nccl-view", "%s's view", gr_topo_collective(t));
  struct rd_table *tb = doc_matrix(d, NULL, t->ngpus, 0);
  for (size_t r = 0; r < t->ngpus; r++) {
    doc_cell(tb, NULL, "GPU%zu", r);
    for (size_t c = 0; c < t->ngpus; c++) {
      struct gr_path path = gr_gpu_path(a, r, c);
      const struct gr_path *p = &path;
      if (r == c)
        doc_cell_str(tb, doc_level_cls(GR_LVL_X), "X");
      else
        doc_cell(tb, p->nccl_p2p ? doc_level_cls(p->nccl) : "lv-shm", "%s%s", gr_nccl_path_str(p),
                 p->nccl_p2p ? "" : "/shm");
    }
  }
  note(d, "NODE folds into PHB; /shm: no P2P by default, copies go through host memory. %s: P2P up to %s (%s).",
       gr_nccl_defaults_text(a, dflt, sizeof(dflt)), gr_nccl_level_str(a->nccl_p2p_level),
       gr_nccl_why(a, a->ngpus, why, sizeof(why)));
}

void doc_matrices(struct rd_doc *d, const struct gr_machine *m)
{
  const struct gr_topo *t = &m->topo;
  doc_heading(d, 2, "matrices", "Matrices");
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

void doc_hives(struct rd_doc *d, const struct gr_machine *m)
{
  const struct gr_topo *t = &m->topo;
  const struct gr_analysis *a = &m->analysis;
  doc_heading(d, 2, "hives", "P2P hives");
  if (!t->ngpus) {
    para(d, "No GPU in this input.");
    return;
  }
  struct rd_table *tb = doc_table(d, NULL, a->nhives, 3, "hive", "GPUs", "joined by");
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
        if (a->hive[k] == (int)h && gr_gpu_path(a, g, k).level > worst)
          worst = gr_gpu_path(a, g, k).level;
    }
    doc_cell(tb, NULL, "%zu", h);
    doc_cell_str(tb, NULL, list);
    if (worst == GR_LVL_GPULINK)
      doc_cell_str(tb, doc_level_cls(worst), gr_hive_name(a, h));
    else if (worst == GR_LVL_PIX || worst == GR_LVL_PXB)
      doc_cell(tb, doc_level_cls(worst), "PCIe switch%s, worst pair %s", worst == GR_LVL_PXB ? "es" : "", gr_level_name(worst));
    else
      doc_cell_str(tb, NULL, "alone");
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
    struct gr_path path = gr_gpu_path(a, (size_t)x, (size_t)y);
    const struct gr_path *p = &path;
    if (p->bw_gbps > 0 && (*lim == 0 || p->bw_gbps < *lim))
      *lim = p->bw_gbps;
    if (p->nccl_bw_gbps > 0 && (*nccl == 0 || p->nccl_bw_gbps < *nccl))
      *nccl = p->nccl_bw_gbps;
  }
}

static double bench_plateau(const json_t *bench)
{
  return bench ? doc_jnum(json_object_get(bench, "allreduce"), "plateau_busbw_gbps") : NAN;
}

static void allreduce_prediction(struct rd_doc *d, const struct gr_report_doc *doc)
{
  const struct gr_prediction *p = &doc->m->prediction;
  const struct gr_analysis *a = &doc->m->analysis;
  char dflt[160], bound[256];
  doc_heading(d, 3, "allreduce-prediction", "All-reduce");
  if (a->gpulink_unrecorded)
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
  struct rd_table *tb = doc_table(d, NULL, rows, 7, "setting", "predicted busbw, GB/s", "algorithm",
                                  "ring hops: NVLink / P2P / host", "slowest hop's limit, GB/s", "NCCL's figure, GB/s",
                                  "bounded by");
  struct rd_bar *b = doc_bars(d, "All-reduce: predicted (tick) and measured (bar, from --bench) against the ring's slowest "
                                 "link (grey)", "GB/s", rows);
  d->v[d->n - 1].md_skip = true; /* the table holds the prediction and the limit, bench's section the plateau */
  for (size_t k = 0; k < rows; k++) {
    const struct gr_ring *r = k ? &p->best : &p->nccl_default;
    double lim, nccl;
    ring_limit(a, r, p->ngpus, &lim, &nccl);
    if (k)
      doc_cell(tb, NULL, "NCCL_P2P_LEVEL=%s", p->best_p2p_level ? p->best_p2p_level : "?");
    else
      doc_cell(tb, NULL, "%s's defaults", gr_topo_collective(&doc->m->topo));
    doc_cell_num(tb, NULL, r->busbw_gbps, 1);
    doc_cell_str(tb, NULL, r->nvls_busbw_gbps > r->ring_busbw_gbps ? "NVLS" : "ring");
    doc_cell(tb, NULL, "%zu / %zu / %zu", r->nhops_gpulink, r->nhops_p2p, r->nhops_host);
    doc_cell_num(tb, NULL, lim > 0 ? lim : NAN, 1);
    doc_cell_num(tb, NULL, nccl > 0 ? nccl : NAN, 1);
    doc_cell_str(tb, NULL, gr_ring_bound_text(p, r, bound, sizeof(bound)));
    b[k].label = k ? xasprintf("NCCL_P2P_LEVEL=%s", p->best_p2p_level ? p->best_p2p_level : "?")
                   : xasprintf("%s's defaults", gr_topo_collective(&doc->m->topo));
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
      struct gr_path xy = gr_gpu_path(p->a, x, y);
      const struct gr_path *path = &xy;
      const struct gr_pair_predict *pp = gr_pair_at(p, x, y);
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
  doc_heading(d, 3, "copy-prediction", "GPU-to-GPU copies");
  struct rd_table *tb = doc_table(d, NULL, ng, 7, "pairs", "path", "how", "predicted, GB/s", "link limit, GB/s",
                                  "NCCL's figure, GB/s", "predicted / limit");
  struct rd_bar *b = doc_bars(d, "Copies, one way: predicted (tick) against the path's link limit (grey)", "GB/s", ng);
  d->v[d->n - 1].md_skip = true;
  for (size_t k = 0; k < ng; k++) {
    doc_cell(tb, NULL, "%s%s (%zu pair%s)", g[k].pairs, g[k].count > 4 ? ", ..." : "", g[k].count, doc_plural(g[k].count));
    doc_cell_str(tb, NULL, g[k].path);
    /* the group's level is the matrix's: XGMI for AMD's GPU links */
    const char *gpulink = strcmp(g[k].path, "XGMI") == 0 ? "xGMI" : "NVLink";
    doc_cell_str(tb, NULL, g[k].best == GR_XFER_GPULINK ? gpulink : g[k].best == GR_XFER_P2P ? "PCIe P2P" : "through host");
    doc_cell_num(tb, NULL, g[k].gbps > 0 ? g[k].gbps : NAN, 1);
    doc_cell_num(tb, NULL, g[k].limit > 0 ? g[k].limit : NAN, 1);
    doc_cell_num(tb, NULL, g[k].nccl > 0 ? g[k].nccl : NAN, 1);
    if (g[k].gbps > 0 && g[k].limit > 0)
      doc_cell(tb, NULL, "%.0f%%", g[k].gbps / g[k].limit * 100);
    else
      doc_cell_str(tb, NULL, "");
    b[k].label = xasprintf("%s%s, %zu pair%s", g[k].path, g[k].best == GR_XFER_HOST ? " via host" : "", g[k].count,
                           doc_plural(g[k].count));
    b[k].predicted = g[k].gbps > 0 ? g[k].gbps : NAN;
    b[k].limit = g[k].limit > 0 ? g[k].limit : NAN;
  }
  note(d, "The link limit is the theoretical rate per direction of the narrowest link on the path (PCIe gen x width, "
          "or the NVLinks); the prediction applies data/calibration.tsv's efficiencies to it.");
  free(g);
}

void doc_predictions(struct rd_doc *d, const struct gr_report_doc *doc)
{
  const struct gr_machine *m = doc->m;
  doc_heading(d, 2, "predictions", "Predictions beside the link limits");
  if (!m->predicted || m->prediction.ngpus < 2) {
    para(d, "Fewer than two GPUs: no GPU-to-GPU copy or all-reduce to predict.");
    return;
  }
  allreduce_prediction(d, doc);
  copy_prediction(d, &m->prediction);
  const struct gr_findings *notes = &m->prediction.notes;
  if (notes->n) {
    struct rd_table *tb = doc_table(d, "Placement", notes->n, 1, "NICs and NVMe drives beside the GPUs");
    for (size_t i = 0; i < notes->n; i++)
      doc_cell_str(tb, NULL, notes->v[i].text);
  }
}

void doc_verdicts(struct rd_doc *d, const struct gr_machine *m)
{
  const struct gr_prediction *p = &m->prediction;
  if (!m->predicted)
    return;
  doc_heading(d, 2, "verdicts", "Verdicts");
  if (!p->nverdicts) {
    para(d, "None: the predictions withhold them (see the all-reduce note above).");
    return;
  }
  struct rd_table *tb = doc_table(d, NULL, p->nverdicts, 4, "rating", "workload", "GPUs", "why");
  for (size_t i = 0; i < p->nverdicts; i++) {
    doc_cell_str(tb, rating_cls(p->verdicts[i].rating), gr_rating_name(p->verdicts[i].rating));
    doc_cell_str(tb, NULL, p->verdicts[i].workload);
    doc_cell(tb, NULL, "%d", p->verdicts[i].gpus);
    doc_cell_str(tb, NULL, p->verdicts[i].reasons);
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
  doc_cell_str(tb, doc_sev_cls(f->sev), gr_sev_name(f->sev));
  doc_cell_str(tb, "id", f->id);
  /* a text that already starts with its subject (fleet's: "node03 GPU1 ...")
   * is not given it twice */
  bool named = f->subject && f->text && strncmp(f->text, f->subject, strlen(f->subject)) == 0;
  const char *subject = f->subject && !named ? f->subject : NULL;
  doc_cell(tb, NULL, "%s%s%s", subject ? subject : "", subject ? ": " : "", f->text ? f->text : "");
  doc_cell_str(tb, NULL, f->fix);
  doc_cell_str(tb, NULL, f->cost);
  doc_cell_str(tb, NULL, ev);
  free(ev);
}

void doc_findings_table(struct rd_doc *d, const struct gr_findings *fs)
{
  struct rd_table *tb = doc_table(d, NULL, fs->n, 6, "severity", "check", "finding", "fix", "cost", "evidence");
  tb->drop_empty = true;
  for (size_t k = 0; k < sizeof(shown_order) / sizeof(shown_order[0]); k++)
    for (size_t i = 0; i < fs->n; i++)
      if (fs->v[i].sev == shown_order[k])
        finding_row(tb, &fs->v[i]);
}

void doc_findings(struct rd_doc *d, const struct gr_report_doc *doc)
{
  const struct gr_findings *tf = &doc->m->analysis.findings;
  doc_heading(d, 2, "findings", "Findings");
  doc_heading(d, 3, "topology-findings", "The wiring (gpurig topo)");
  if (tf->n)
    doc_findings_table(d, tf);
  else
    para(d, "None.");
  doc_heading(d, 3, "doctor-findings", "The set-up (gpurig doctor)");
  if (!doc->doctor) {
    para(d, "gpurig doctor was not run.");
    return;
  }
  const size_t *c = doc->doctor->findings.count;
  para(d, "%zu fail, %zu warn, %zu error, %zu info, %zu skipped, %zu ok. gpurig doctor read only; it changed nothing.",
       c[GR_SEV_FAIL], c[GR_SEV_WARN], c[GR_SEV_ERROR], c[GR_SEV_INFO], c[GR_SEV_SKIPPED], c[GR_SEV_OK]);
  if (doc->doctor->root_would_add)
    note(d, "Run as root to add: %s.", doc->doctor->root_would_add);
  doc_findings_table(d, &doc->doctor->findings);
}

/* A list of JSON findings (bench's {severity, id, text}; burn's verdicts as
 * doctor's JSON), worst first. */
void doc_json_findings(struct rd_doc *d, const json_t *list)
{
  size_t n = json_array_size(list), i;
  const json_t *v;
  struct rd_table *tb = doc_table(d, NULL, n, 4, "severity", "check", "finding", "fix");
  tb->drop_empty = true;
  for (size_t k = 0; k < sizeof(shown_order) / sizeof(shown_order[0]); k++)
    json_array_foreach(list, i, v)
    {
      enum gr_sev s = doc_sev_of(doc_jstr(v, "severity"));
      if (s != shown_order[k])
        continue;
      const char *text = doc_jstr(v, "text") ? doc_jstr(v, "text") : doc_jstr(v, "message");
      doc_cell_str(tb, doc_sev_cls(s), gr_sev_name(s));
      doc_cell_str(tb, "id", doc_jstr(v, "id"));
      doc_cell_str(tb, NULL, text);
      doc_cell_str(tb, NULL, doc_jstr(v, "fix"));
    }
}
