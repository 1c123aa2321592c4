/* The fleet's page (report_doc.h: rd_build_fleet): `gpurig fleet --html`
 * draws the same blocks as `gpurig report --html`, so the page has the
 * report's skeleton, style and escaping. A row per node and a column per
 * fact, every value that is not the majority's marked; then the majority
 * and the findings, worst first, with their fixes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/fleet.h"
#include "print/report/report_doc_internal.h"

/* What a node that lacks a device shows for its facts: the word the
 * comparison's findings use (docs/fleet.md). */
static const char absent[] = "absent";

/* The node's value of the fact at where/what; NULL when it lacks it. */
static const char *fact_value(const struct gr_fleet_node *n, const char *where, const char *what)
{
  for (size_t i = 0; i < n->nfacts; i++)
    if (strcmp(n->facts[i].where, where) == 0 && strcmp(n->facts[i].what, what) == 0)
      return n->facts[i].value;
  return NULL;
}

/* "GPU1 0000:02:00.0 link": the device as the majority names it, then the
 * fact without the device kind it repeats; a node's fact as it is. The
 * caller frees it. */
static char *fact_name(const struct gr_fleet_common *x)
{
  const char *what = x->what;
  if (x->shown && (strncmp(what, "GPU ", 4) == 0 || strncmp(what, "NIC ", 4) == 0))
    what += 4;
  return xasprintf("%s%s%s", x->shown ? x->shown : x->where, x->where[0] ? " " : "", what);
}

/* "; doctor 1 fail, 2 warn": doctor's problems on the node, "" for none. */
static const char *doctor_counts(const struct gr_fleet_node *n, char *buf, size_t cap)
{
  static const enum gr_sev shown[] = {GR_SEV_FAIL, GR_SEV_WARN, GR_SEV_ERROR};
  size_t len = 0;
  buf[0] = '\0';
  for (size_t k = 0; k < sizeof(shown) / sizeof(shown[0]); k++)
    if (n->count[shown[k]] && len < cap) {
      int w = snprintf(buf + len, cap - len, "%s%zu %s", len ? ", " : "; doctor ", n->count[shown[k]],
                       gr_sev_name(shown[k]));
      len += w > 0 ? (size_t)w : 0;
    }
  return buf;
}

static void node_row(struct rd_table *t, const struct gr_fleet *f, size_t i)
{
  const struct gr_fleet_node *n = &f->nodes->v[i];
  char counts[96];
  size_t row = t->filled / t->ncols;
  doc_row_node(t, row, n->name);
  doc_cell_str(t, "id", n->name);
  if (!n->answered) {
    doc_cell(t, doc_sev_cls(GR_SEV_FAIL), "no report: %s", n->problem ? n->problem : "unreadable");
    for (size_t c = 0; c < f->ncommon; c++)
      doc_cell_str(t, NULL, "");
    return;
  }
  doc_cell(t, f->differs[i] ? doc_sev_cls(GR_SEV_WARN) : doc_sev_cls(GR_SEV_OK), "%s%s", f->differs[i] ? "differs" : "alike",
           doctor_counts(n, counts, sizeof(counts)));
  for (size_t c = 0; c < f->ncommon; c++) {
    const struct gr_fleet_common *x = &f->common[c];
    const char *v = fact_value(n, x->where, x->what);
    bool odd = v ? !x->value || strcmp(v, x->value) != 0 : x->value != NULL;
    doc_cell_str(t, odd ? "odd" : NULL, v ? v : absent);
  }
}

static void nodes_table(struct rd_doc *d, const struct gr_fleet *f)
{
  doc_heading(d, 2, "nodes", "Nodes");
  para(d, "A row per node, a column per fact (devices by PCI address, as the majority numbers them); a value "
          "that is not the majority's is marked.");
  struct rd_table *t = doc_table_raw(d, NULL, f->nodes->n, 2 + f->ncommon);
  t->head[0].text = xstrdup("node");
  t->head[1].text = xstrdup("status");
  for (size_t c = 0; c < f->ncommon; c++)
    t->head[2 + c].text = fact_name(&f->common[c]);
  for (size_t i = 0; i < f->nodes->n; i++)
    node_row(t, f, i);
}

static void majority_table(struct rd_doc *d, const struct gr_fleet *f)
{
  doc_heading(d, 2, "majority", "The majority");
  struct rd_table *t = doc_table(d, NULL, f->ncommon, 3, "fact", "value most nodes have", "nodes");
  for (size_t c = 0; c < f->ncommon; c++) {
    const struct gr_fleet_common *x = &f->common[c];
    char *name = fact_name(x);
    doc_cell_str(t, NULL, name);
    free(name);
    doc_cell_str(t, NULL, x->value ? x->value : absent);
    doc_cell(t, x->count < f->answered ? "odd" : NULL, "%zu of %zu", x->count, f->answered);
  }
}

void rd_build_fleet(const struct gr_fleet *f, struct rd_doc *out)
{
  size_t ndiffer = 0;
  memset(out, 0, sizeof(*out));
  for (size_t i = 0; i < f->nodes->n; i++)
    ndiffer += f->differs[i];
  doc_heading(out, 1, "top", "gpurig fleet: %zu node%s", f->nodes->n, doc_plural(f->nodes->n));
  para(out, "%zu answered; %zu differ%s from the majority or report%s a problem the others do not.", f->answered,
       ndiffer, ndiffer == 1 ? "s" : "", ndiffer == 1 ? "s" : "");
  nodes_table(out, f);
  majority_table(out, f);
  doc_heading(out, 2, "findings", "Findings");
  if (f->findings.n)
    doc_findings_table(out, &f->findings);
  else
    para(out, "Every node is like the others, and doctor found no problem on any.");
}
