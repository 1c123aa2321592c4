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

static bool is_unknown(const char *v)
{
  return v && strcmp(v, "unknown") == 0;
}

/* The most common value (a missing device counts as the value NULL); on a
 * tie, the one met first. known_first: "unknown" is a value only when no
 * node knows one (the facts with rules: nodes that cannot tell do not
 * outvote those that can). */
static void majority(const struct gr_fleet *f, struct gr_fleet_common *c, bool known_first)
{
  const struct gr_fleet_nodes *ns = f->nodes;
  size_t best = 0;
  for (size_t pass = known_first ? 0 : 1; pass < 2 && !best; pass++)
    for (size_t i = 0; i < ns->n; i++) {
      const char *v = ns->v[i].answered ? value_of(&ns->v[i], c) : NULL;
      if (!ns->v[i].answered || (pass == 0 && is_unknown(v)))
        continue;
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

#define AER_FIX                                                                                                     \
  "Reseat the GPU, replace its riser or cable, check its power cables (doctor's pcie.aer on that node names the "   \
  "link and the device that counted them)."

/* How a fact other than a device's model, link or NUMA node (any value
 * unlike the majority's: warn) is judged. */
enum fact_kind {
  FACT_SETTING, /* a version or setting: any other value is a finding, but "unknown" is no value to differ by */
  FACT_COUNT,   /* an error count: a finding only where the node has some and the majority none */
};
static const struct fact_rule {
  const char *what;
  enum fact_kind kind;
  enum gr_sev sev;
  const char *noun; /* counts: "AER correctable error" */
  const char *fix;
} fact_rules[] = {
    /* Another CUDA or NCCL on one node is a set-up problem with a fix
     * (install the fleet's), not broken hardware: warn. A job across the
     * nodes fails to start, or runs with the oldest's protocols and bugs. */
    {"CUDA", FACT_SETTING, GR_SEV_WARN, NULL,
     "Install the NVIDIA driver the other nodes run: the CUDA driver (libcuda) comes with it."},
    {"NCCL", FACT_SETTING, GR_SEV_WARN, NULL,
     "Install the NCCL the other nodes have (libnccl2 of that version), or give every node the same copy."},
    /* The same for AMD's: HIP comes with a ROCm release, RCCL is its NCCL. */
    {"HIP", FACT_SETTING, GR_SEV_WARN, NULL,
     "Install the ROCm release the other nodes run: the HIP runtime (libamdhip64) comes with it."},
    {"RCCL", FACT_SETTING, GR_SEV_WARN, NULL,
     "Install the RCCL the other nodes have (ROCm's rccl package of that version), or give every node the same "
     "copy."},
    /* IOMMU translation or ACS redirect on one node: its GPUs' peer traffic
     * takes the slow way while the others' does not; a BIOS or kernel
     * setting: warn, as doctor's iommu.mode and pcie.acs say. */
    {"IOMMU", FACT_SETTING, GR_SEV_WARN, NULL,
     "Set the kernel command line and BIOS IOMMU setting as on the other nodes (doctor's iommu.mode there says how)."},
    {"ACS redirect", FACT_SETTING, GR_SEV_WARN, NULL,
     "Set ACS in the BIOS as on the other nodes (doctor's pcie.acs there names the bridges and the setpci line)."},
    /* Correctable errors accumulate on any link over its uptime, so a
     * count a little unlike the others' is noise: only a GPU with errors
     * where most nodes' same GPU has none is a finding, a warning (a riser,
     * a cable, a seating: fixable). Uncorrectable ones (non-fatal, fatal)
     * mean data was lost: broken hardware, a failure, as doctor's pcie.aer
     * has them. Xids: a warning; doctor's xid.errors judges each by its
     * code, and that result is compared as doctor's problem. */
    {"GPU AER correctable", FACT_COUNT, GR_SEV_WARN, "AER correctable error", AER_FIX},
    {"GPU AER nonfatal", FACT_COUNT, GR_SEV_FAIL, "AER non-fatal (uncorrectable) error", AER_FIX},
    {"GPU AER fatal", FACT_COUNT, GR_SEV_FAIL, "AER fatal error", AER_FIX},
    {"GPU Xids", FACT_COUNT, GR_SEV_WARN, "Xid event",
     "doctor's xid.errors on that node lists each Xid with what it means and what to do."},
};

static const struct fact_rule *rule_of(const char *what)
{
  for (size_t k = 0; k < sizeof(fact_rules) / sizeof(fact_rules[0]); k++)
    if (strcmp(fact_rules[k].what, what) == 0)
      return &fact_rules[k];
  return NULL;
}

/* "node03 GPU1 0000:02:00.0" or "node03": the node and the fact's device. */
static const char *subject_of(const struct gr_fleet_node *n, const struct gr_fleet_fact *x, char *buf, size_t cap)
{
  snprintf(buf, cap, "%s%s%s", n->name, x->shown ? " " : "", x->shown ? x->shown : "");
  return buf;
}

/* ", the 2 others 0" or ", 2 of the 3 others ..." as judge words it: the
 * majority's count first, the evidence adds the rest. */
static void others_evidence(struct gr_fleet *f, const struct gr_fleet_common *c, size_t others)
{
  if (c->count != others)
    gr_finding_evidence(&f->findings.v[f->findings.n - 1], "fleet", "%zu of the %zu others have %s", c->count,
                        others, c->value);
}

/* A fact with a rule (fact_rules): node i's value v against the majority's.
 * Unknown on either side says nothing: it is not a value to differ by (the
 * majority is unknown only where no node knows). */
static void judge_rule(struct gr_fleet *f, const struct fact_rule *rule, const struct gr_fleet_common *c, size_t i,
                       const struct gr_fleet_fact *x)
{
  const struct gr_fleet_node *n = &f->nodes->v[i];
  size_t others = f->answered - 1;
  char subject[192];
  if (strcmp(x->value, "unknown") == 0 || strcmp(c->value, "unknown") == 0)
    return;
  subject_of(n, x, subject, sizeof(subject));
  const char *bus = c->where[0] ? c->where : NULL, *the = c->count == others ? "the " : "";
  const char *s = c->count == 1 ? "" : "s";
  if (rule->kind == FACT_COUNT) {
    unsigned long long k = strtoull(x->value, NULL, 10);
    if (!k || strcmp(c->value, "0") != 0)
      return;
    differs(f, i, rule->sev, subject, bus, "%s: %llu %s%s, %s%zu other%s 0", subject, k, rule->noun, k == 1 ? "" : "s",
            the, c->count, s);
  } else if (strcmp(x->value, "none") == 0)
    differs(f, i, rule->sev, subject, bus, "%s: no %s, %s%zu other%s %s", subject, c->what, the, c->count, s, c->value);
  else
    differs(f, i, rule->sev, subject, bus, "%s: %s %s, %s%zu other%s %s", subject, c->what, x->value, the, c->count, s,
            c->value);
  others_evidence(f, c, others);
  gr_finding_fix(&f->findings.v[f->findings.n - 1], NULL, "%s", rule->fix);
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
  const struct fact_rule *rule = rule_of(c->what);
  if (rule) {
    if (v && c->value) /* a device absent here or on most nodes: its model says so */
      judge_rule(f, rule, c, i, x);
    return;
  }
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
  subject_of(n, x, subject, sizeof(subject));
  if (!c->value) {
    if (strcmp(attribute(c->what), "model") == 0)
      differs(f, i, GR_SEV_WARN, subject, c->where[0] ? c->where : NULL,
              "%s: %s %s, a device %zu of the %zu others lack at this address", subject, attribute(c->what), v,
              c->count, others);
    return;
  }
  differs(f, i, GR_SEV_WARN, subject, c->where[0] ? c->where : NULL, "%s: %s %s, %s%zu other%s %s", subject,
          attribute(c->what), v, c->count == others ? "the " : "", c->count, c->count == 1 ? "" : "s", c->value);
  others_evidence(f, c, others);
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
    majority(out, &out->common[c], rule_of(out->common[c].what) != NULL);
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
