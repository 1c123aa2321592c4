/* The fleet's majority and the nodes that differ from it (analysis/fleet.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/fleet.h"

/* The fact `where`/`what` of node n, NULL where the node does not report it. */
static const struct gr_fleet_fact *fact_of(const struct gr_fleet_node *n, const char *where, const char *what)
{
  for (size_t i = 0; i < n->nfacts; i++)
    if (strcmp(n->facts[i].where, where) == 0 && strcmp(n->facts[i].what, what) == 0)
      return &n->facts[i];
  return NULL;
}

static const char *value_of(const struct gr_fleet_node *n, const struct gr_fleet_common *c)
{
  const struct gr_fleet_fact *f = fact_of(n, c->where, c->what);
  return f ? f->value : NULL;
}

static bool same(const char *a, const char *b)
{
  return a == b || (a && b && strcmp(a, b) == 0);
}

/* Every fact any answering node reports, once, in the order first met. */
static void collect_facts(struct gr_fleet *f)
{
  const struct gr_fleet_nodes *ns = f->nodes;
  for (size_t i = 0; i < ns->n; i++)
    for (size_t k = 0; ns->v[i].answered && k < ns->v[i].nfacts; k++) {
      const struct gr_fleet_fact *x = &ns->v[i].facts[k];
      bool known = false;
      for (size_t c = 0; c < f->ncommon && !known; c++)
        known = strcmp(f->common[c].where, x->where) == 0 && strcmp(f->common[c].what, x->what) == 0;
      if (known)
        continue;
      f->common = xrealloc(f->common, (f->ncommon + 1) * sizeof(*f->common));
      f->common[f->ncommon++] = (struct gr_fleet_common){.where = x->where, .what = x->what};
    }
}

/* The most common value (a missing device counts as the value NULL); on a
 * tie, the one met first. */
static void majority(const struct gr_fleet *f, struct gr_fleet_common *c)
{
  const struct gr_fleet_nodes *ns = f->nodes;
  size_t best = 0;
  for (size_t i = 0; i < ns->n; i++) {
    if (!ns->v[i].answered)
      continue;
    const char *v = value_of(&ns->v[i], c);
    size_t k = 0;
    for (size_t j = 0; j < ns->n; j++)
      k += ns->v[j].answered && same(value_of(&ns->v[j], c), v);
    if (k > best) {
      best = k;
      c->value = v;
      const struct gr_fleet_fact *x = v ? fact_of(&ns->v[i], c->where, c->what) : NULL;
      c->shown = x ? x->shown : NULL;
    }
  }
  c->count = best;
}

/* "link" of "GPU link": the attribute without the device kind. */
static const char *attribute(const char *what)
{
  const char *sp = strchr(what, ' ');
  return sp && (strncmp(what, "GPU ", 4) == 0 || strncmp(what, "NIC ", 4) == 0) ? sp + 1 : what;
}

static struct gr_finding *differs(struct gr_fleet *f, size_t node, enum gr_sev sev, const char *subject,
                                  const char *bus, const char *fmt, ...) __attribute__((format(printf, 6, 7)));
static struct gr_finding *differs(struct gr_fleet *f, size_t node, enum gr_sev sev, const char *subject,
                                  const char *bus, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  struct gr_finding *x = gr_finding_vadd(&f->findings, sev, "fleet.differs", fmt, ap);
  va_end(ap);
  gr_finding_subject(x, -1, subject, bus);
  gr_finding_evidence(x, f->nodes->v[node].file, "node %s", f->nodes->v[node].name);
  f->differs[node] = true;
  return x;
}

/* One node's value of fact c against the majority's. The counts (GPUs,
 * NICs) are left to the devices themselves, which say which one. */
static void judge(struct gr_fleet *f, const struct gr_fleet_common *c, size_t i)
{
  const struct gr_fleet_node *n = &f->nodes->v[i];
  const struct gr_fleet_fact *x = fact_of(n, c->where, c->what);
  const char *v = x ? x->value : NULL;
  size_t others = f->answered - 1;
  char subject[192];
  if (same(v, c->value) || strcmp(c->what, "GPUs") == 0 || strcmp(c->what, "NICs") == 0)
    return;
  bool gpu = strncmp(c->what, "GPU ", 4) == 0;
  if (!v && strcmp(attribute(c->what), "model") == 0) { /* a device most nodes have is missing */
    snprintf(subject, sizeof(subject), "%s", n->name);
    differs(f, i, gpu ? GR_SEV_FAIL : GR_SEV_WARN, subject, c->where,
            "%s: no %.3s at %s, where %zu of the %zu others have %s (%s): off the bus, or not seated", n->name,
            c->what, c->where, c->count, others, c->shown, c->value);
    return;
  }
  if (!v)
    return; /* the missing device's model said it */
  snprintf(subject, sizeof(subject), "%s%s%s", n->name, x->shown ? " " : "", x->shown ? x->shown : "");
  if (!c->value) {
    if (strcmp(attribute(c->what), "model") == 0)
      differs(f, i, GR_SEV_WARN, subject, c->where[0] ? c->where : NULL,
              "%s: %s %s, a device %zu of the %zu others lack at this address", subject, attribute(c->what), v,
              c->count, others);
    return;
  }
  differs(f, i, GR_SEV_WARN, subject, c->where[0] ? c->where : NULL, "%s: %s %s, %s%zu other%s %s", subject,
          attribute(c->what), v, c->count == others ? "the " : "", c->count, c->count == 1 ? "" : "s", c->value);
  if (c->count != others)
    gr_finding_evidence(&f->findings.v[f->findings.n - 1], "fleet", "%zu of the %zu others have %s", c->count,
                        others, c->value);
}

/* How many answering nodes have a doctor result like r (same check, subject
 * and severity). */
static size_t nodes_with(const struct gr_fleet *f, const struct gr_finding *r)
{
  size_t k = 0;
  for (size_t i = 0; i < f->nodes->n; i++) {
    const struct gr_findings *fs = &f->nodes->v[i].findings;
    bool has = false;
    for (size_t j = 0; j < fs->n && !has; j++)
      has = fs->v[j].sev == r->sev && strcmp(fs->v[j].id, r->id) == 0 && same(fs->v[j].subject, r->subject);
    k += has;
  }
  return k;
}

static size_t first_answered(const struct gr_fleet *f)
{
  size_t i = 0;
  while (i < f->nodes->n && !f->nodes->v[i].answered)
    i++;
  return i;
}

/* doctor's problems: one finding for a problem every node has, one per node
 * for a problem only some have. */
static void doctor_problems(struct gr_fleet *f, size_t i)
{
  const struct gr_fleet_node *n = &f->nodes->v[i];
  for (size_t j = 0; j < n->findings.n; j++) {
    const struct gr_finding *r = &n->findings.v[j];
    size_t k = nodes_with(f, r);
    if (k == f->answered && i != first_answered(f) && f->answered > 1)
      continue; /* said once, for the first node */
    char subject[256];
    snprintf(subject, sizeof(subject), "%s%s%s", k == f->answered && f->answered > 1 ? "every node" : n->name,
             r->subject ? " " : "", r->subject ? r->subject : "");
    struct gr_finding *x = gr_finding_add(&f->findings, r->sev, r->id, "%s: %s", subject, r->text);
    gr_finding_subject(x, -1, subject, r->pci_bus_id);
    gr_finding_evidence(x, n->file, "doctor %s on %zu of %zu nodes", gr_sev_name(r->sev), k, f->answered);
    if (r->fix)
      gr_finding_fix(x, NULL, "%s", r->fix);
    if (k < f->answered)
      f->differs[i] = true;
  }
}

void gr_fleet_compare(const struct gr_fleet_nodes *nodes, struct gr_fleet *out)
{
  memset(out, 0, sizeof(*out));
  out->nodes = nodes;
  out->differs = xcalloc(nodes->n ? nodes->n : 1, sizeof(bool));
  for (size_t i = 0; i < nodes->n; i++)
    out->answered += nodes->v[i].answered;
  collect_facts(out);
  for (size_t c = 0; c < out->ncommon; c++)
    majority(out, &out->common[c]);
  for (size_t i = 0; i < nodes->n; i++) {
    const struct gr_fleet_node *n = &nodes->v[i];
    if (!n->answered) {
      struct gr_finding *x = gr_finding_add(&out->findings, GR_SEV_FAIL, "fleet.no-answer", "%s: no report: %s",
                                            n->name, n->problem ? n->problem : "unreadable");
      gr_finding_subject(x, -1, n->name, NULL);
      out->differs[i] = true;
      continue;
    }
    for (size_t c = 0; c < out->ncommon && out->answered > 1; c++)
      judge(out, &out->common[c], i);
    doctor_problems(out, i);
  }
  gr_findings_sort(&out->findings);
}

void gr_fleet_free(struct gr_fleet *f)
{
  free(f->common);
  free(f->differs);
  gr_findings_free(&f->findings);
  memset(f, 0, sizeof(*f));
}
