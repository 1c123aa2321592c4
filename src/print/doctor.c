/* Printers of a doctor report: text grouped by severity, JSON, and the NHC
 * convention (silent on success, one ERROR line per failure). */
#include <stdint.h>
#include <string.h>

#include "model/names.h"
#include "print/common.h"
#include "print/doctor.h"
#include "print/text.h"

/* A report shows the worst first: fail, warn, error, info, skipped, ok. */
static const enum gr_sev shown_order[GR_SEV_COUNT] = {GR_SEV_FAIL, GR_SEV_WARN, GR_SEV_ERROR,
                                                      GR_SEV_INFO, GR_SEV_SKIPPED, GR_SEV_OK};
static const char *const group_title[GR_SEV_COUNT] = {
    [GR_SEV_FAIL] = "Failures", [GR_SEV_WARN] = "Warnings", [GR_SEV_ERROR] = "Could not check (errors)",
    [GR_SEV_INFO] = "Information", [GR_SEV_SKIPPED] = "Skipped", [GR_SEV_OK] = "OK"};

/* Every detail of one finding (--verbose), in lines the wrapping stream can
 * wrap: one space between a label and its text. */
static void print_result(FILE *out, const struct gr_finding *r)
{
  bool brief = r->sev == GR_SEV_OK || r->sev == GR_SEV_SKIPPED;
  fprintf(out, "  %-8s %s %s%s%s\n", gr_sev_name(r->sev), r->id, r->subject ? r->subject : "",
          r->subject ? ": " : "", r->text);
  if (brief)
    return;
  for (size_t e = 0; e < r->nev; e++)
    fprintf(out, "           evidence: %s: %s\n", r->ev[e].file, r->ev[e].value);
  if (r->fix)
    fprintf(out, "           fix: %s\n", r->fix);
  if (r->cost)
    fprintf(out, "           cost: %s\n", r->cost);
  if (r->reference)
    fprintf(out, "           see: %s\n", r->reference);
}

/* One group of findings that say the same thing: "warn  pcie.slot-gen  GPU0-9: each ...", its
 * point unless verbose, and the fix (every detail with --verbose). */
static void print_group(FILE *out, const struct gr_finding_group *g, const struct gr_finding *r,
                        const struct gr_text_style *st)
{
  char who[160], point[1024];
  if (g->who[0])
    snprintf(who, sizeof(who), "%s: ", g->who);
  else if (g->n > 1)
    snprintf(who, sizeof(who), "%zux, like %s: ", g->n, r->subject ? r->subject : "this");
  else
    snprintf(who, sizeof(who), "%s%s", r->subject ? r->subject : "", r->subject ? ": " : "");
  size_t used = 11 + strlen(r->id) + gr_text_columns(who);
  /* two lines: the first after the id and subject, one more under the text */
  size_t room = (size_t)st->width > used + 20 ? (size_t)st->width * 2 - used - 11 : 40;
  fprintf(out, "  %-8s %s %s%s\n", gr_sev_name(r->sev), r->id, who,
          st->verbose ? g->text : gr_text_point(g->text, room, point, sizeof(point)));
  if (r->fix) /* the fix whole: its action is often its second sentence */
    fprintf(out, "           fix: %s\n", r->fix);
}

void gr_print_doctor(FILE *out, const struct gr_topo *t, const struct gr_doctor_report *r, const struct gr_text_style *st)
{
  gr_print_machine_line(out, t);
  fprintf(out, "\n%zu GPU%s, ", t->ngpus, t->ngpus == 1 ? "" : "s");
  if (t->naccels)
    fprintf(out, "%zu accelerator%s, ", t->naccels, t->naccels == 1 ? "" : "s");
  fprintf(out, "%zu socket%s. gpurig doctor read only; it changed nothing.\n", t->npackages, t->npackages == 1 ? "" : "s");
  const size_t *count = r->findings.count;
  struct gr_finding_group *g;
  size_t ng = gr_finding_groups(&r->findings, &g);
  for (int k = 0; k < GR_SEV_COUNT; k++) {
    enum gr_sev s = shown_order[k];
    bool brief = s == GR_SEV_OK || s == GR_SEV_SKIPPED;
    if (!count[s] || (brief && !st->verbose))
      continue;
    fprintf(out, "\n%s (%zu)\n", group_title[s], count[s]);
    for (size_t i = 0; i < r->findings.n && st->verbose; i++)
      if (r->findings.v[i].sev == s)
        print_result(out, &r->findings.v[i]);
    for (size_t i = 0; i < ng && !st->verbose; i++)
      if (r->findings.v[g[i].first].sev == s)
        print_group(out, &g[i], &r->findings.v[g[i].first], st);
  }
  gr_finding_groups_free(g, ng);
  fprintf(out, "\nSummary: %zu fail, %zu warn, %zu error, %zu info, %zu skipped, %zu ok.%s\n", count[GR_SEV_FAIL],
          count[GR_SEV_WARN], count[GR_SEV_ERROR], count[GR_SEV_INFO], count[GR_SEV_SKIPPED], count[GR_SEV_OK],
          st->verbose ? "" : " More: --verbose.");
  if (r->root_would_add)
    fprintf(out, "Run as root to add: %s.\n", r->root_would_add);
}

void gr_print_doctor_nhc(FILE *out, const struct gr_doctor_report *r)
{
  for (size_t i = 0; i < r->findings.n; i++) {
    const struct gr_finding *x = &r->findings.v[i];
    if (x->sev == GR_SEV_FAIL)
      fprintf(out, "ERROR: gpurig: %s: %s%s%s\n", x->id, x->subject ? x->subject : "", x->subject ? ": " : "", x->text);
  }
}

/* A count as a number, or null where 0 means unknown. */
static json_t *known_int(int v)
{
  return v > 0 ? json_integer(v) : json_null();
}

/* The link above a device: what it trains to (the generation both ends
 * support, which idle does not lower, and the width now), what both ends
 * support, and what it runs at now. */
static json_t *link_json(const struct gr_link_facts *f)
{
  json_t *o = json_object();
  json_object_set_new(o, "gen", known_int(f->gen));
  json_object_set_new(o, "width", known_int(f->width));
  json_object_set_new(o, "can_gen", known_int(f->can_gen));
  json_object_set_new(o, "can_width", known_int(f->can_width));
  json_object_set_new(o, "cur_gen", known_int(f->cur_gen));
  json_object_set_new(o, "cur_width", known_int(f->cur_width));
  return o;
}

static json_t *device_json(const struct gr_machine *m, int node, int index, struct gr_names *names)
{
  const struct gr_pci *p = &m->topo.pci[node];
  char bus[32];
  json_t *o = json_object();
  json_object_set_new(o, "index", json_integer(index));
  json_object_set_new(o, "pci_bus_id", json_string(gr_pci_busid(p, bus, sizeof(bus))));
  json_object_set_new(o, "model", gr_json_text(gr_pci_display_name(&m->topo, node, names)));
  json_object_set_new(o, "numa", p->numa >= 0 ? json_integer(p->numa) : json_null());
  json_object_set_new(o, "driver", gr_json_text(p->driver));
  json_object_set_new(o, "link", link_json(&m->analysis.link[node]));
  return o;
}

/* One AER counter summed over a GPU's path: the GPU and every port and
 * bridge above it up to the root complex, as the pcie.aer check reads them
 * (errors are counted where they are detected, often at the far end of the
 * faulty link). null where no device on the path reports that counter:
 * unknown is not 0. */
static json_t *aer_path_count(const struct gr_topo *t, int gpu_node, int which)
{
  uint64_t sum = 0;
  bool any = false;
  for (int i = gpu_node; i >= 0; i = t->pci[i].parent) {
    const struct gr_pci *p = &t->pci[i];
    const struct gr_count *k = which == 0 ? &p->aer.correctable : which == 1 ? &p->aer.nonfatal : &p->aer.fatal;
    if (p->role == GR_ROLE_HOSTBRIDGE || !k->valid)
      continue;
    any = true;
    sum += k->value;
  }
  return any ? json_integer((json_int_t)(sum > INT64_MAX ? INT64_MAX : sum)) : json_null();
}

static json_t *aer_json(const struct gr_topo *t, int gpu_node)
{
  json_t *o = json_object();
  json_object_set_new(o, "correctable", aer_path_count(t, gpu_node, 0));
  json_object_set_new(o, "nonfatal", aer_path_count(t, gpu_node, 1));
  json_object_set_new(o, "fatal", aer_path_count(t, gpu_node, 2));
  return o;
}

/* {"present": true, "version": "2.21.5"}; present false: absent; null:
 * unknown (nobody asked: a description of a machine). */
static json_t *lib_json(const struct gr_lib_version *v)
{
  json_t *o = json_object();
  json_object_set_new(o, "present", v->state == GR_LIB_UNKNOWN ? json_null() : json_boolean(v->state == GR_LIB_PRESENT));
  json_object_set_new(o, "version", gr_json_text(v->state == GR_LIB_PRESENT && v->version[0] ? v->version : NULL));
  return o;
}

/* What `gpurig fleet` compares between nodes (docs/json.md, docs/fleet.md). */
static json_t *inventory_json(const struct gr_machine *m, const struct gr_doctor_report *r)
{
  const struct gr_topo *t = &m->topo;
  json_t *o = json_object(), *gpus = json_array(), *nics = json_array();
  struct gr_names names = {0};
  json_object_set_new(o, "driver_version", gr_json_text(r->driver_version));
  json_object_set_new(o, "sockets", json_integer((json_int_t)t->npackages));
  json_object_set_new(o, "numa_nodes", json_integer((json_int_t)t->nnumas));
  json_object_set_new(o, "cuda", lib_json(&r->cuda));
  json_object_set_new(o, "nccl", lib_json(&r->nccl));
  json_t *hip = lib_json(&r->hip);
  json_object_set_new(hip, "driver_version",
                      gr_json_text(r->hip.state == GR_LIB_PRESENT && r->hip.driver[0] ? r->hip.driver : NULL));
  json_object_set_new(o, "hip", hip);
  json_object_set_new(o, "rccl", lib_json(&r->rccl));
  json_object_set_new(o, "iommu", gr_json_text(r->iommu_mode));
  json_object_set_new(o, "acs_redirecting", r->acs_redirecting >= 0 ? json_integer(r->acs_redirecting) : json_null());
  for (size_t g = 0; g < t->ngpus; g++) {
    json_t *d = device_json(m, t->gpus[g], (int)g, &names);
    json_object_set_new(d, "aer", aer_json(t, t->gpus[g]));
    json_object_set_new(d, "xids", r->gpu_xids ? json_integer((json_int_t)r->gpu_xids[g]) : json_null());
    json_array_append_new(gpus, d);
  }
  for (size_t k = 0; k < t->nnics; k++) {
    json_t *n = device_json(m, t->nics[k], (int)k, &names);
    json_object_set_new(n, "rdma_name", gr_json_text(t->pci[t->nics[k]].rdma_name));
    json_array_append_new(nics, n);
  }
  json_object_set_new(o, "gpus", gpus);
  json_object_set_new(o, "nics", nics);
  gr_names_free(&names);
  return o;
}

json_t *gr_doctor_to_json(const struct gr_machine *m, const struct gr_doctor_report *r)
{
  const struct gr_topo *t = &m->topo;
  json_t *o = json_object(), *res = json_array(), *counts = json_object();
  json_object_set_new(o, "source", gr_json_text(t->source_kind));
  json_object_set_new(o, "source_path", gr_json_text(t->source_path));
  json_object_set_new(o, "hostname", gr_json_text(t->hostname));
  json_object_set_new(o, "gpus", json_integer((json_int_t)t->ngpus));
  json_object_set_new(o, "is_root", json_boolean(r->is_root));
  for (size_t i = 0; i < r->findings.n; i++)
    json_array_append_new(res, gr_finding_to_json(&r->findings.v[i]));
  json_object_set_new(o, "results", res);
  for (int k = 0; k < GR_SEV_COUNT; k++)
    json_object_set_new(counts, gr_sev_name(shown_order[k]), json_integer((json_int_t)r->findings.count[shown_order[k]]));
  json_object_set_new(o, "counts", counts);
  json_t *root_add = json_array();
  for (const char *p = r->root_would_add; p && *p;) {
    size_t n = strcspn(p, " ");
    json_array_append_new(root_add, json_stringn(p, n));
    p += n + (p[n] == ' ');
  }
  json_object_set_new(o, "root_would_add", root_add);
  json_object_set_new(o, "exit_status", json_integer(gr_findings_exit(&r->findings)));
  json_object_set_new(o, "inventory", inventory_json(m, r));
  return o;
}

void gr_print_doctor_checks(FILE *out)
{
  for (size_t i = 0; i < gr_doctor_ncheck(); i++) {
    const struct gr_check_def *d = gr_doctor_check(i);
    fprintf(out, "%-19s %s%s\n", d->id, d->title, d->needs_fs ? "" : " (also on hwloc XML and rig files)");
  }
}
