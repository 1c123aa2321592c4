/* The topo and report outputs, composed of the topology and prediction
 * sections; see machine.h. */
#include "print/machine.h"

#include <stdlib.h>
#include <string.h>

#include "model/names.h"
#include "base/util.h"
#include "print/cluster.h"
#include "print/common.h"
#include "print/diagram/diagram.h"
#include "print/json_stream.h"
#include "print/predict.h"
#include "print/text.h"
#include "print/topo.h"

void gr_print_topo_text(FILE *out, const struct gr_machine *m, unsigned flags, const struct gr_text_style *st)
{
  const struct gr_topo *t = &m->topo;
  const struct gr_analysis *a = &m->analysis;
  gr_print_summary(out, t, a);
  gr_print_tree(out, t, a, flags);
  gr_print_matrix(out, t, a);
  gr_print_nccl(out, t, a);
  gr_print_bandwidth(out, t, a);
  gr_print_hives(out, t, a);
  if (m->predicted)
    gr_print_prediction(out, t, &m->prediction, st);
  if (m->clustered)
    gr_print_cluster(out, &m->cluster);
  gr_print_findings(out, t, a, st);
}

void gr_print_report_text(FILE *out, const struct gr_machine *m, const struct gr_text_style *st)
{
  const struct gr_topo *t = &m->topo;
  const struct gr_analysis *a = &m->analysis;
  gr_print_summary(out, t, a);
  gr_print_gpu_table(out, t, a);
  gr_print_matrix(out, t, a);
  gr_print_hives(out, t, a);
  if (m->predicted)
    gr_print_prediction(out, t, &m->prediction, st);
  if (m->clustered)
    gr_print_cluster(out, &m->cluster);
  gr_print_findings(out, t, a, st);
}

/* ---- the one-screen report ---- */

/* "2 sockets (2x Xeon Platinum 8174), 16 GPUs, 8 RDMA NICs, 2 NVMe drives, 1 P2P hive";
 * counts of none are left out, but for GPUs. */
static void brief_summary(FILE *out, const struct gr_topo *t, const struct gr_analysis *a)
{
  size_t nvme = 0;
  for (size_t i = 0; i < t->npci; i++)
    nvme += t->pci[i].kind == GR_KIND_NVME;
  fprintf(out, "%zu socket%s", t->npackages, t->npackages == 1 ? "" : "s");
  const char *cpu = t->npackages ? t->packages[0].cpu_model : NULL;
  for (size_t i = 1; cpu && i < t->npackages; i++)
    if (!t->packages[i].cpu_model || strcmp(t->packages[i].cpu_model, cpu) != 0)
      cpu = NULL;
  char *name = cpu ? gr_cpu_short_name(cpu) : NULL;
  if (name && t->npackages > 1)
    fprintf(out, " (%zux %s)", t->npackages, name);
  else if (name)
    fprintf(out, " (%s)", name);
  free(name);
  fprintf(out, ", %zu GPU%s", t->ngpus, t->ngpus == 1 ? "" : "s");
  if (t->naccels)
    fprintf(out, ", %zu accelerator%s", t->naccels, t->naccels == 1 ? "" : "s");
  if (t->nnics)
    fprintf(out, ", %zu RDMA NIC%s", t->nnics, t->nnics == 1 ? "" : "s");
  if (nvme)
    fprintf(out, ", %zu NVMe drive%s", nvme, nvme == 1 ? "" : "s");
  if (t->ngpus > 1)
    fprintf(out, ", %zu P2P hive%s", a->nhives, a->nhives == 1 ? "" : "s");
  fputc('\n', out);
}

/* GPUs of one model on links alike, one line: "GPU0-9  RTX 3090  Gen3 x16, 15.8 GB/s  NUMA 0,1". */
static void brief_gpu_group(FILE *out, const struct gr_analysis *a, const bool *in, struct gr_names *names,
                            size_t first)
{
  const struct gr_topo *t = a->t;
  char list[256], link[64], numa[64] = "";
  size_t off = 0;
  bool seen[64] = {false}, unknown = false;
  for (size_t g = 0; g < t->ngpus; g++) {
    int n = t->pci[t->gpus[g]].numa;
    if (!in[g])
      continue;
    if (n < 0 || n >= 64)
      unknown = true;
    else if (!seen[n] && off < sizeof(numa))
      off += (size_t)snprintf(numa + off, sizeof(numa) - off, "%s%d", off ? "," : "", n), seen[n] = true;
  }
  gr_link_text(a, t->gpus[first], link, sizeof(link));
  fprintf(out, "  %-9s %-28s %-24s NUMA %s\n", gr_gpu_ranges(in, t->ngpus, list, sizeof(list)),
          gr_pci_display_name(t, t->gpus[first], names), link[0] ? link : "link not recorded",
          off ? numa : unknown ? "?" : "-");
}

/* At most max_lines groups; the rest are counted. Returns lines printed. */
static size_t brief_gpus(FILE *out, const struct gr_topo *t, const struct gr_analysis *a, size_t max_lines)
{
  struct gr_names names = {0};
  bool *done = xcalloc(t->ngpus + 1, sizeof(bool)), *in = xcalloc(t->ngpus + 1, sizeof(bool));
  size_t lines = 0, rest = 0;
  char a_link[64], b_link[64];
  for (size_t g = 0; g < t->ngpus; g++) {
    if (done[g])
      continue;
    memset(in, 0, t->ngpus * sizeof(bool));
    const char *name = gr_pci_display_name(t, t->gpus[g], &names);
    gr_link_text(a, t->gpus[g], a_link, sizeof(a_link));
    size_t n = 0;
    for (size_t k = g; k < t->ngpus; k++) {
      gr_link_text(a, t->gpus[k], b_link, sizeof(b_link));
      if (!done[k] && strcmp(gr_pci_display_name(t, t->gpus[k], &names), name) == 0 && strcmp(a_link, b_link) == 0)
        in[k] = done[k] = true, n++;
    }
    if (lines < max_lines) {
      brief_gpu_group(out, a, in, &names, g);
      lines++;
    } else {
      rest += n;
    }
  }
  if (rest)
    fprintf(out, "  +%zu more GPU%s on other links (gpurig report --verbose)\n", rest, rest == 1 ? "" : "s"), lines++;
  free(done);
  free(in);
  gr_names_free(&names);
  return lines;
}

/* The all-reduce predicted beside what bounds it. */
static void brief_allreduce(FILE *out, const struct gr_prediction *p, const struct gr_text_style *st)
{
  char dflt[160], line[768], cut[768], bound[256];
  if (p->ngpus < 2)
    return;
  if (p->a->gpulink_unrecorded) {
    fprintf(out, "All-reduce: not predicted: NVLink is not recorded in this input (gpurig topo says why)\n");
    return;
  }
  if (p->nccl_default.busbw_gbps <= 0) {
    fprintf(out, "All-reduce: not known (this input records no link rates)\n");
    return;
  }
  snprintf(line, sizeof(line), "All-reduce: %.1f GB/s predicted (nccl-tests busbw), bounded by %s; %s",
           p->nccl_default.busbw_gbps, gr_ring_bound_text(p, &p->nccl_default, bound, sizeof(bound)),
           gr_nccl_defaults_text(p->a, dflt, sizeof(dflt)));
  fprintf(out, "%s\n", st->verbose ? line : gr_text_point(line, (size_t)st->width * 2 - 8, cut, sizeof(cut)));
  if (p->best_needs_p2p_level)
    fprintf(out, "  with NCCL_P2P_LEVEL=%s: %.1f GB/s\n", p->best_p2p_level, p->best.busbw_gbps);
}

/* "training x16: ", "TP-4: ", "16 jobs: " */
static void verdict_head(const struct gr_verdict *v, char *buf, size_t cap)
{
  if (strncmp(v->workload, "tensor", 6) == 0)
    snprintf(buf, cap, "TP-%d: ", v->gpus);
  else if (strncmp(v->workload, "independent", 11) == 0)
    snprintf(buf, cap, "%d independent job%s: ", v->gpus, v->gpus == 1 ? "" : "s");
  else
    snprintf(buf, cap, "%s on %d GPU%s: ", v->workload, v->gpus, v->gpus == 1 ? "" : "s");
}

/* One line per verdict: "  good  TP-4: <its point>". */
static void brief_verdicts(FILE *out, const struct gr_prediction *p, const struct gr_text_style *st)
{
  char head[128], cut[768];
  if (!p->nverdicts || !p->ngpus)
    return;
  fprintf(out, "Verdicts:\n");
  for (size_t i = 0; i < p->nverdicts; i++) {
    const struct gr_verdict *v = &p->verdicts[i];
    verdict_head(v, head, sizeof(head));
    size_t used = 8 + gr_text_columns(head);
    size_t room = (size_t)st->width > used + 20 ? (size_t)st->width - used : 20;
    if (strcmp(v->workload, "training") == 0) /* its why (P2P, host hops) takes two lines; the rest one */
      room += (size_t)st->width > 28 ? (size_t)st->width - 8 : 20;
    fprintf(out, "  %-4s  %s%s\n", gr_rating_name(v->rating), head,
            st->verbose ? v->reasons : gr_text_point(gr_verdict_point(v->reasons), room, cut, sizeof(cut)));
  }
}

static void brief_findings(FILE *out, const struct gr_analysis *a, const struct gr_text_style *st)
{
  const size_t *c = a->findings.count;
  fprintf(out, "Findings:");
  if (!a->findings.n)
    fprintf(out, " none");
  static const enum gr_sev order[] = {GR_SEV_FAIL, GR_SEV_WARN, GR_SEV_ERROR, GR_SEV_INFO};
  for (size_t k = 0, shown = 0; k < sizeof(order) / sizeof(order[0]); k++)
    if (c[order[k]])
      fprintf(out, "%s %zu %s", shown++ ? "," : "", c[order[k]], gr_sev_name(order[k]));
  fputc('\n', out);
  gr_print_finding_groups(out, &a->findings, st, 6, GR_SEV_INFO, "gpurig report --verbose");
}

/* Accelerators that are not GPUs, one line per model and link alike:
 * "  8x Vector Engine 1.0  Gen3 x16, 15.8 GB/s  NUMA 0"; their bus ids are in
 * `gpurig topo`. No verdicts follow: NCCL does not drive them. */
static void brief_accels(FILE *out, const struct gr_topo *t, const struct gr_analysis *a)
{
  struct gr_names names = {0};
  bool *done = xcalloc(t->npci + 1, sizeof(bool));
  char link[64], other[64];
  fprintf(out, "\nAccelerators (not GPUs: no NCCL, P2P or all-reduce verdicts):\n");
  for (size_t i = 0; i < t->npci; i++) {
    if (done[i] || t->pci[i].kind != GR_KIND_ACCEL)
      continue;
    char *name = xstrdup(gr_pci_display_name(t, (int)i, &names));
    gr_link_text(a, (int)i, link, sizeof(link));
    size_t n = 0;
    for (size_t k = i; k < t->npci; k++)
      if (!done[k] && t->pci[k].kind == GR_KIND_ACCEL && t->pci[k].numa == t->pci[i].numa &&
          strcmp(gr_pci_display_name(t, (int)k, &names), name) == 0 &&
          strcmp(gr_link_text(a, (int)k, other, sizeof(other)), link) == 0)
        done[k] = true, n++;
    if (t->pci[i].numa >= 0)
      fprintf(out, "  %zux %-28s %-24s NUMA %d\n", n, name, link[0] ? link : "link not recorded", t->pci[i].numa);
    else
      fprintf(out, "  %zux %-28s %s\n", n, name, link[0] ? link : "link not recorded");
    free(name);
  }
  free(done);
  gr_names_free(&names);
}

void gr_print_report_brief(FILE *out, const struct gr_machine *m, const struct gr_text_style *st)
{
  const struct gr_topo *t = &m->topo;
  const struct gr_analysis *a = &m->analysis;
  gr_print_machine_line(out, t);
  fputc('\n', out);
  brief_summary(out, t, a);
  if (t->ngpus) {
    fprintf(out, "\nGPUs:\n");
    brief_gpus(out, t, a, 4);
  }
  if (t->naccels)
    brief_accels(out, t, a);
  if (t->ngpus > 1 || t->nnics) { /* the wiring, and the hives under it */
    fprintf(out, "\nWiring:\n");
    gr_diagram_text(out, m, st->width);
    if (t->rig)
      fprintf(out, "(RC bus ids modelled from the rig, no machine's)\n");
    fputc('\n', out);
  }
  if (m->predicted) {
    brief_allreduce(out, &m->prediction, st);
    if (m->clustered)
      gr_print_cluster_brief(out, &m->cluster);
    brief_verdicts(out, &m->prediction, st);
  }
  const size_t *c = a->findings.count;
  if (!t->ngpus && !c[GR_SEV_FAIL] && !c[GR_SEV_WARN] && !c[GR_SEV_ERROR])
    return; /* no GPU, nothing wrong: the summary line said it all */
  fputc('\n', out);
  brief_findings(out, a, st);
}

void gr_machine_json_members(struct gr_jw *w, const struct gr_machine *m)
{
  gr_topo_json_members(w, &m->topo, &m->analysis);
  if (m->predicted) {
    gr_jw_object(w, "prediction");
    gr_prediction_json_members(w, &m->topo, &m->prediction);
    gr_jw_close(w);
  }
  if (m->clustered)
    gr_jw_put(w, "cluster", gr_cluster_to_json(&m->cluster));
}

static void write_machine(struct gr_jw *w, const void *m)
{
  gr_machine_json_members(w, m);
}

json_t *gr_machine_to_json(const struct gr_machine *m)
{
  return gr_json_from_stream(write_machine, m);
}

void gr_machine_json_print(FILE *out, const struct gr_machine *m)
{
  struct gr_jw w;
  gr_jw_begin(&w, out);
  gr_machine_json_members(&w, m);
  gr_jw_end(&w);
}
