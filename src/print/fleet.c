/* A fleet side by side: a node per row, the majority, what differs
 * (print/fleet.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "print/common.h"
#include "print/fleet.h"
#include "print/text.h"

/* "4x Gen4 x16" or "3x Gen4 x16, 1x Gen4 x8": a node's GPU links, each
 * value counted, in the order first met. */
static const char *links_summary(const struct gr_fleet_node *n, char *buf, size_t cap)
{
  size_t len = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < n->nfacts; i++) {
    const struct gr_fleet_fact *x = &n->facts[i];
    bool first = strcmp(x->what, "GPU link") == 0;
    for (size_t j = 0; j < i && first; j++)
      first = strcmp(n->facts[j].what, "GPU link") != 0 || strcmp(n->facts[j].value, x->value) != 0;
    if (!first)
      continue;
    size_t k = 0;
    for (size_t j = 0; j < n->nfacts; j++)
      k += strcmp(n->facts[j].what, "GPU link") == 0 && strcmp(n->facts[j].value, x->value) == 0;
    int w = snprintf(buf + len, cap - len, "%s%zux %s", len ? ", " : "", k, x->value);
    if (w < 0 || (size_t)w >= cap - len)
      break;
    len += (size_t)w;
  }
  return buf[0] ? buf : "-";
}

static const char *node_value(const struct gr_fleet_node *n, const char *what)
{
  for (size_t i = 0; i < n->nfacts; i++)
    if (!n->facts[i].where[0] && strcmp(n->facts[i].what, what) == 0)
      return n->facts[i].value;
  return "-";
}

/* A node's errors of one kind over its GPUs: the sum of the facts whose
 * `what` starts with prefix ("GPU AER", "GPU Xids"); "-" when none is
 * known (unknown is not 0). */
static const char *errors_summary(const struct gr_fleet_node *n, const char *prefix, char *buf, size_t cap)
{
  unsigned long long sum = 0;
  bool known = false;
  for (size_t i = 0; i < n->nfacts; i++)
    if (strncmp(n->facts[i].what, prefix, strlen(prefix)) == 0 && strcmp(n->facts[i].value, "unknown") != 0) {
      known = true;
      sum += strtoull(n->facts[i].value, NULL, 10);
    }
  snprintf(buf, cap, known ? "%llu" : "-", sum);
  return buf;
}

/* "ok", or the counts of doctor's failures, warnings and errors there are. */
static const char *doctor_summary(const struct gr_fleet_node *n, char *buf, size_t cap)
{
  static const enum gr_sev shown[] = {GR_SEV_FAIL, GR_SEV_WARN, GR_SEV_ERROR};
  size_t len = 0;
  snprintf(buf, cap, "ok");
  for (size_t k = 0; k < sizeof(shown) / sizeof(shown[0]); k++)
    if (n->count[shown[k]] && len < cap) {
      int w = snprintf(buf + len, cap - len, "%s%zu %s", len ? ", " : "", n->count[shown[k]], gr_sev_name(shown[k]));
      len += w > 0 ? (size_t)w : 0;
    }
  return buf;
}

/* Whether any node reports HIP or RCCL (doctor asks them on machines with
 * AMD GPUs): their columns are shown then, and a fleet of NVIDIA nodes
 * keeps its table as it was. */
static bool any_amd_libraries(const struct gr_fleet *f)
{
  for (size_t i = 0; i < f->nodes->n; i++)
    if (f->nodes->v[i].answered &&
        (strcmp(node_value(&f->nodes->v[i], "HIP"), "-") != 0 || strcmp(node_value(&f->nodes->v[i], "RCCL"), "-") != 0))
      return true;
  return false;
}

/* A row per node: its GPUs and their links, the driver, CUDA, NCCL (HIP,
 * RCCL), IOMMU, the AER errors and Xids over its GPUs, doctor's counts. */
#define ROW_HEAD "  %-16s %-7s %4s  %-26s %-14s "
#define ROW_LIBS "%-6s %-8s "
#define ROW_AMD "%-10s %-8s "
#define ROW_TAIL "%-11s %5s %4s  %s\n"
static void print_nodes(FILE *out, const struct gr_fleet *f)
{
  char links[256], doc[64], gpus[24], aer[32], xid[32];
  bool amd = any_amd_libraries(f);
  fprintf(out, ROW_HEAD ROW_LIBS, "node", "", "GPUs", "GPU links", "driver", "CUDA", "NCCL");
  if (amd)
    fprintf(out, ROW_AMD, "HIP", "RCCL");
  fprintf(out, ROW_TAIL, "IOMMU", "AER", "Xid", "doctor");
  for (size_t i = 0; i < f->nodes->n; i++) {
    const struct gr_fleet_node *n = &f->nodes->v[i];
    const char *mark = !n->answered ? "silent" : f->differs[i] ? "differs" : "";
    if (!n->answered) {
      fprintf(out, ROW_HEAD ROW_LIBS, n->name, mark, "-", "-", "-", "-", "-");
      if (amd)
        fprintf(out, ROW_AMD, "-", "-");
      fprintf(out, ROW_TAIL, "-", "-", "-", "no report");
      continue;
    }
    snprintf(gpus, sizeof(gpus), "%zu", n->ngpus);
    fprintf(out, ROW_HEAD ROW_LIBS, n->name, mark, gpus, links_summary(n, links, sizeof(links)), node_value(n, "driver"),
            node_value(n, "CUDA"), node_value(n, "NCCL"));
    if (amd)
      fprintf(out, ROW_AMD, node_value(n, "HIP"), node_value(n, "RCCL"));
    fprintf(out, ROW_TAIL, node_value(n, "IOMMU"), errors_summary(n, "GPU AER", aer, sizeof(aer)),
            errors_summary(n, "GPU Xids", xid, sizeof(xid)), doctor_summary(n, doc, sizeof(doc)));
  }
}
#undef ROW_HEAD
#undef ROW_LIBS
#undef ROW_AMD
#undef ROW_TAIL

/* "; GPU link Gen4 x16 (4 of 4 addresses)": the value the majority has at
 * most of the addresses most nodes have. */
static void print_device_majority(FILE *out, const struct gr_fleet *f, const char *what)
{
  const char *best = NULL;
  size_t nbest = 0, addresses = 0;
  for (size_t c = 0; c < f->ncommon; c++) {
    const struct gr_fleet_common *x = &f->common[c];
    if (strcmp(x->what, what) != 0 || !x->value)
      continue;
    addresses++;
    size_t k = 0;
    for (size_t d = 0; d < f->ncommon; d++)
      k += strcmp(f->common[d].what, what) == 0 && f->common[d].value && strcmp(f->common[d].value, x->value) == 0;
    if (k > nbest) {
      nbest = k;
      best = x->value;
    }
  }
  if (best)
    fprintf(out, "; %s %s (%zu of %zu addresses)", what, best, nbest, addresses);
}

/* The majority's node facts, and per device kind its most common model and
 * link over the devices most nodes have. */
static void print_majority(FILE *out, const struct gr_fleet *f)
{
  fprintf(out, "Majority:");
  const char *sep = " ";
  for (size_t c = 0; c < f->ncommon; c++) {
    const struct gr_fleet_common *x = &f->common[c];
    if (x->where[0] || !x->value)
      continue;
    fprintf(out, "%s%s %s (%zu of %zu)", sep, x->what, x->value, x->count, f->answered);
    sep = "; ";
  }
  static const char *const kinds[] = {"GPU model", "GPU link", "NIC model", "NIC link"};
  for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
    print_device_majority(out, f, kinds[k]);
  fprintf(out, "\n");
}

void gr_print_fleet(FILE *out, const struct gr_fleet *f, const struct gr_text_style *st)
{
  size_t ndiffer = 0;
  for (size_t i = 0; i < f->nodes->n; i++)
    ndiffer += f->differs[i];
  fprintf(out, "Fleet: %zu node%s, %zu answered; %zu differ%s from the majority or report%s a problem the others do not\n",
          f->nodes->n, f->nodes->n == 1 ? "" : "s", f->answered, ndiffer, ndiffer == 1 ? "s" : "", ndiffer == 1 ? "s" : "");
  print_nodes(out, f);
  print_majority(out, f);
  if (!f->findings.n) {
    fprintf(out, "\nEvery node is like the others, and doctor found no problem on any.\n");
    return;
  }
  fprintf(out, "\nFindings (worst first):\n");
  char cut[1024];
  size_t room = st->width > 40 ? (size_t)st->width - 8 : 32;
  for (size_t i = 0; i < f->findings.n; i++) {
    const struct gr_finding *x = &f->findings.v[i];
    fprintf(out, "  %-5s %s\n", gr_sev_name(x->sev), st->verbose ? x->text : gr_text_point(x->text, room * 2, cut, sizeof(cut)));
    if (x->fix && x->sev >= GR_SEV_WARN && x->sev <= GR_SEV_FAIL)
      fprintf(out, "        fix: %s\n", x->fix);
  }
}

static json_t *node_json(const struct gr_fleet *f, size_t i)
{
  const struct gr_fleet_node *n = &f->nodes->v[i];
  json_t *o = json_object(), *counts = json_object();
  json_object_set_new(o, "name", json_string(n->name));
  json_object_set_new(o, "file", gr_json_text(n->file));
  json_object_set_new(o, "hostname", gr_json_text(n->hostname));
  json_object_set_new(o, "answered", json_boolean(n->answered));
  json_object_set_new(o, "problem", gr_json_text(n->problem));
  json_object_set_new(o, "differs", json_boolean(f->differs[i]));
  json_object_set_new(o, "gpus", n->answered ? json_integer((json_int_t)n->ngpus) : json_null());
  for (int k = 0; k < GR_SEV_COUNT; k++)
    json_object_set_new(counts, gr_sev_name((enum gr_sev)k), json_integer((json_int_t)n->count[k]));
  json_object_set_new(o, "doctor_counts", counts);
  json_t *facts = json_array();
  for (size_t k = 0; k < n->nfacts; k++) {
    json_t *x = json_object();
    json_object_set_new(x, "where", n->facts[k].where[0] ? json_string(n->facts[k].where) : json_null());
    json_object_set_new(x, "what", json_string(n->facts[k].what));
    json_object_set_new(x, "value", json_string(n->facts[k].value));
    json_array_append_new(facts, x);
  }
  json_object_set_new(o, "facts", facts);
  return o;
}

json_t *gr_fleet_to_json(const struct gr_fleet *f)
{
  json_t *o = json_object(), *nodes = json_array(), *maj = json_array(), *fs = json_array();
  for (size_t i = 0; i < f->nodes->n; i++)
    json_array_append_new(nodes, node_json(f, i));
  for (size_t c = 0; c < f->ncommon; c++) {
    const struct gr_fleet_common *x = &f->common[c];
    json_t *m = json_object();
    json_object_set_new(m, "where", x->where[0] ? json_string(x->where) : json_null());
    json_object_set_new(m, "what", json_string(x->what));
    json_object_set_new(m, "value", gr_json_text(x->value));
    json_object_set_new(m, "nodes", json_integer((json_int_t)x->count));
    json_array_append_new(maj, m);
  }
  for (size_t i = 0; i < f->findings.n; i++)
    json_array_append_new(fs, gr_finding_to_json(&f->findings.v[i]));
  json_object_set_new(o, "nodes", nodes);
  json_object_set_new(o, "answered", json_integer((json_int_t)f->answered));
  json_object_set_new(o, "majority", maj);
  json_object_set_new(o, "findings", fs);
  json_object_set_new(o, "exit_status", json_integer(gr_findings_exit(&f->findings)));
  return o;
}
