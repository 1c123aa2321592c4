/* The analysis's findings: each PCIe link's facts and label, and the
 * link, locality, hive, P2P, NCCL, NIC and data findings
 * (analysis/analysis_internal.h). */
#include "analysis/analysis.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "facts/catalog.h"
#include "facts/facts.h"
#include "model/names.h"
#include "facts/pcilink.h"
#include "base/util.h"
#include "analysis/analysis_internal.h"

/* ---- findings ---- */


/* Counts over the GPU pairs x < y, by class (gr_each_pair_class): alike
 * for every pair of two classes, so classes^2 work, not n^2. */
struct pair_counts {
  size_t pairs, gpulink, near;     /* all; NV#; NV#, PIX or PXB */
  size_t incapable;                /* no P2P at any level */
  size_t platform, platform_sys;   /* of those, both GPUs P2P-capable (the platform's doing); across sockets */
  size_t no_nccl_p2p;              /* P2P-capable but not by NCCL's default */
  enum gr_level no_nccl_p2p_worst; /* the worst level among those */
  const struct gr_analysis *a;
};

static void count_class_pair(void *ctx, const struct gr_path *p, size_t c, size_t d, size_t np)
{
  struct pair_counts *pc = ctx;
  const struct gr_analysis *a = pc->a;
  const struct gr_topo *t = a->t;
  bool gpus_p2p = gpu_p2p(&t->pci[t->gpus[a->class_gpus[a->class_start[c]]]]) &&
                  gpu_p2p(&t->pci[t->gpus[a->class_gpus[a->class_start[d]]]]);
  pc->pairs += np;
  pc->gpulink += p->level == GR_LVL_GPULINK ? np : 0;
  pc->near += p->level > GR_LVL_X && p->level <= GR_LVL_PXB ? np : 0;
  if (!p->p2p_capable) {
    pc->incapable += np;
    pc->platform += gpus_p2p ? np : 0;
    pc->platform_sys += gpus_p2p && p->level == GR_LVL_SYS ? np : 0;
  }
  /* advice only where P2P could run: a raised level cannot help a pair that
   * has no P2P at any level */
  if (p->p2p_capable && !p->nccl_p2p) {
    pc->no_nccl_p2p += np;
    if (p->level > pc->no_nccl_p2p_worst)
      pc->no_nccl_p2p_worst = p->level;
  }
}

static struct pair_counts count_pairs(const struct gr_analysis *a)
{
  struct pair_counts pc = {.a = a, .no_nccl_p2p_worst = GR_LVL_X};
  gr_each_pair_class(a, count_class_pair, &pc);
  return pc;
}

static int min_known(int a, int b)
{
  if (a <= 0)
    return b > 0 ? b : 0;
  if (b <= 0)
    return a;
  return a < b ? a : b;
}

static enum gr_link_unknown unknown_end(const struct gr_link *l)
{
  bool dev = l->max_gen <= 0 || l->max_width <= 0, port = l->port_max_gen <= 0 || l->port_max_width <= 0;
  return dev && port ? GR_LINK_BOTH_UNKNOWN : dev ? GR_LINK_DEVICE_UNKNOWN : port ? GR_LINK_PORT_UNKNOWN
                                                                                  : GR_LINK_ENDS_KNOWN;
}

void gr_link_facts(const struct gr_pci *p, struct gr_link_facts *f)
{
  const struct gr_link *l = &p->link;
  *f = (struct gr_link_facts){.present = p->has_link, .cur_gen = l->cur_gen, .cur_width = l->cur_width,
                              .max_gen = l->max_gen, .max_width = l->max_width, .port_gen = l->port_max_gen,
                              .port_width = l->port_max_width, .unknown = unknown_end(l)};
  /* the one rule for an unknown end: the known end's maximum bounds the link */
  f->can_gen = min_known(l->max_gen, l->port_max_gen);
  f->can_width = min_known(l->max_width, l->port_max_width);
  f->gen = f->can_gen > 0 ? f->can_gen : (l->cur_gen > 0 ? l->cur_gen : 0);
  f->width = min_known(f->can_width, l->cur_width);
  bool rated = f->gen > 0 && f->width > 0;
  if (f->present) {
    f->gbps = rated ? gr_pcie_bw_gbps(f->gen, f->width) : l->recorded_gbps;
    f->nccl_gbps = rated ? gr_pcie_nccl_gbps(f->gen, f->width) : gr_pcie_nccl_from_bw(l->recorded_gbps);
  }
  f->slot_width = l->max_width > 0 && l->port_max_width > 0 && l->port_max_width < l->max_width;
  f->slot_gen = l->max_gen > 0 && l->port_max_gen > 0 && l->port_max_gen < l->max_gen;
  f->width_short = l->cur_width > 0 && f->can_width > 0 && l->cur_width < f->can_width;
  f->gen_short = l->cur_gen > 0 && f->can_gen > 0 && l->cur_gen < f->can_gen;
  f->gen_idle = f->gen_short && l->cur_gen == (int)gr_health_consts()->gen1_idle_gen;
}

double gr_link_bw_gbps(const struct gr_pci *p)
{
  struct gr_link_facts f;
  gr_link_facts(p, &f);
  return f.gbps;
}

double gr_link_nccl_gbps(const struct gr_pci *p)
{
  struct gr_link_facts f;
  gr_link_facts(p, &f);
  return f.nccl_gbps;
}

/* The rate after a label: ", 31.5 GB/s", or the diagram's " · 31.5 GB/s"
 * (whole figures without a decimal). */
static void label_rate(const struct gr_link_facts *f, unsigned flags, char *buf, size_t cap)
{
  size_t off = strlen(buf);
  const char *sep = !buf[0] ? "" : flags & GR_LABEL_DOT ? " · " : ", ";
  if (!buf[0] && !(f->gbps > 0))
    return;
  if (flags & GR_LABEL_DOT)
    snprintf(buf + off, cap - off, fabs(f->gbps - round(f->gbps)) < 0.05 ? "%s%.0f GB/s" : "%s%.1f GB/s", sep,
             f->gbps);
  else
    snprintf(buf + off, cap - off, "%s%.1f GB/s", sep, f->gbps);
}

const char *gr_link_label(const struct gr_link_facts *f, unsigned flags, char *buf, size_t cap)
{
  char g[32] = "", w[48] = "";
  bool plain = true; /* one generation and one width: the facts' "GenN xW" */
  buf[0] = '\0';
  if (!f->present)
    return buf;
  bool now = flags & GR_LABEL_NOW;
  if (now && f->gen > 0 && f->cur_gen > 0 && f->cur_gen != f->gen) {
    snprintf(g, sizeof(g), "Gen%d/Gen%d", f->cur_gen, f->gen);
    plain = false;
  } else if (f->gen > 0)
    snprintf(g, sizeof(g), "Gen%d", f->gen);
  if (now && f->cur_width > 0 && f->can_width > 0 && f->cur_width != f->can_width) {
    snprintf(w, sizeof(w), "x%d/x%d", f->cur_width, f->can_width);
    plain = false;
  } else if ((flags & GR_LABEL_CAPABLE) && f->width > 0 && f->can_width > f->width) {
    snprintf(w, sizeof(w), "x%d (capable of x%d)", f->width, f->can_width);
    plain = false;
  } else if (f->width > 0)
    snprintf(w, sizeof(w), "x%d", f->width);
  if (plain && g[0] && w[0])
    gr_pcie_label(f->gen, f->width, buf, (int)cap);
  else
    snprintf(buf, cap, "%s%s%s", g, g[0] && w[0] ? " " : "", w);
  if (flags & GR_LABEL_RATE)
    label_rate(f, flags, buf, cap);
  return buf;
}

/* One severity per link fact, for topo and doctor alike: a slot or port
 * narrower or older than the device is the board's design (info); a link
 * narrower than both ends support is a set-up problem (warn); a link parked
 * at the idle generation is expected unless the GPUs are busy (info), and
 * one slower than both ends support otherwise is a set-up problem (warn). */
enum gr_sev gr_link_width_sev(const struct gr_link_facts *s)
{
  return s->width_short ? GR_SEV_WARN : s->slot_width ? GR_SEV_INFO : GR_SEV_OK;
}

enum gr_sev gr_link_gen_sev(const struct gr_link_facts *s, bool loaded)
{
  if (s->gen_short)
    return s->gen_idle && !loaded ? GR_SEV_INFO : GR_SEV_WARN;
  return s->slot_gen ? GR_SEV_INFO : GR_SEV_OK;
}

static void link_width_finding(struct gr_analysis *a, int i, const struct gr_link_facts *sf, const char *what,
                               const char *name)
{
  const struct gr_link *l = &a->t->pci[i].link;
  if (sf->slot_width)
    add_finding(a, GR_SEV_INFO, "pcie.slot-width", i,
                "%s%s%s is an x%d device on an x%d port: its slot or riser limits it to %s of x%d (%.1f instead of %.1f GB/s per direction).",
                what, *what ? " " : "", name, l->max_width, l->port_max_width,
                l->port_max_width * 2 == l->max_width ? "half" : "a fraction", l->max_width,
                gr_pcie_bw_gbps(l->max_gen ? l->max_gen : l->cur_gen, l->port_max_width),
                gr_pcie_bw_gbps(l->max_gen ? l->max_gen : l->cur_gen, l->max_width));
  else if (sf->width_short)
    add_finding(a, gr_link_width_sev(sf), "pcie.link-width", i,
                "%s%s%s runs at x%d of x%d: %s of its bandwidth; reseat it or check the riser, slot and BIOS bifurcation setting.",
                what, *what ? " " : "", name, l->cur_width, sf->can_width, l->cur_width * 2 == sf->can_width ? "half" : "part");
}

static void link_gen_finding(struct gr_analysis *a, int i, const struct gr_link_facts *sf, const char *what,
                             const char *name)
{
  const struct gr_pci *p = &a->t->pci[i];
  const struct gr_link *l = &p->link;
  char want[32], have[32];
  if (sf->slot_gen)
    add_finding(a, GR_SEV_INFO, "pcie.slot-gen", i, "%s%s%s is a Gen%d device on a Gen%d port: the link is limited to Gen%d (%s).",
                what, *what ? " " : "", name, l->max_gen, l->port_max_gen, l->port_max_gen,
                gr_pcie_label(l->port_max_gen, l->max_width, want, sizeof(want)));
  if (!sf->gen_short)
    return;
  if (p->kind == GR_KIND_GPU && sf->gen_idle)
    add_finding(a, gr_link_gen_sev(sf, false), "pcie.link-gen-idle", i,
                "%s runs at Gen%d now and can train to Gen%d: GPUs lower the link speed when idle, so this is expected unless it was busy (`gpurig doctor` checks it under load).",
                name, l->cur_gen, sf->can_gen);
  else
    add_finding(a, gr_link_gen_sev(sf, false), "pcie.link-gen", i,
                "%s%s%s runs at %s, below the Gen%d both ends support (%s).", what, *what ? " " : "", name,
                gr_pcie_label(l->cur_gen, l->cur_width, have, sizeof(have)), sf->can_gen,
                sf->gen_idle ? "power saving, or a signal problem if it stays there under load"
                             : "not the idle generation: a riser, cable or slot that cannot hold the speed, or a BIOS setting");
}

void link_findings(struct gr_analysis *a)
{
  const struct gr_topo *t = a->t;
  char name[64];
  for (size_t i = 0; i < t->npci; i++) {
    const struct gr_pci *p = &t->pci[i];
    const struct gr_link_facts *sf = &a->link[i];
    bool carries_gpu_traffic = p->kind == GR_KIND_GPU || p->kind == GR_KIND_ACCEL || p->kind == GR_KIND_NVME ||
                               p->rdma || p->role == GR_ROLE_SWITCH_UP;
    if (!p->has_link || !carries_gpu_traffic)
      continue;
    gr_pci_label(t, (int)i, name, sizeof(name));
    const char *what = p->role == GR_ROLE_SWITCH_UP ? "The uplink of switch" : p->kind == GR_KIND_ACCEL ? "Accelerator" : "";
    link_width_finding(a, (int)i, sf, what, name);
    link_gen_finding(a, (int)i, sf, what, name);
  }
}

/* "GPU0 GPU3 ...", allocated to fit every GPU named (at most 15 bytes each);
 * the caller frees it. */
static char *gpu_list(const int *members, size_t n)
{
  size_t cap = 15 * n + 1, off = 0;
  char *buf = xmalloc(cap);
  buf[0] = '\0';
  for (size_t i = 0; i < n && off < cap; i++)
    off += (size_t)snprintf(buf + off, cap - off, "%sGPU%d", i ? " " : "", members[i]);
  return buf;
}

static int cmp_int(const void *x, const void *y)
{
  int p = *(const int *)x, q = *(const int *)y;
  return (p > q) - (p < q);
}

void locality_findings(struct gr_analysis *a)
{
  const struct gr_topo *t = a->t;
  int *members = xmalloc((a->ngpus + 1) * sizeof(int));
  size_t nm = 0;
  for (size_t g = 0; g < a->ngpus; g++)
    if (t->pci[t->gpus[g]].numa < 0)
      members[nm++] = (int)g;
  if (nm && t->nnumas > 1) {
    char *list = gpu_list(members, nm);
    add_finding(a, GR_SEV_WARN, "numa.unknown", -1,
                "%s report NUMA node -1 on a machine with %zu NUMA nodes: the firmware does not describe their locality, so gpurig, NCCL and the CUDA runtime cannot place memory and threads next to them (check the BIOS ACPI SRAT/NUMA options).",
                list, t->nnumas);
    free(list);
  }
  /* GPUs spread over NUMA nodes */
  int nodes = 0; /* the distinct NUMA nodes GPUs report: sorted, not a scan of the GPUs before each */
  for (size_t g = 0; g < a->ngpus; g++)
    members[g] = t->pci[t->gpus[g]].numa;
  qsort(members, a->ngpus, sizeof(int), cmp_int);
  for (size_t g = 0; g < a->ngpus; g++)
    nodes += members[g] >= 0 && (g == 0 || members[g] != members[g - 1]);
  if (nodes > 1) {
    char socket[128] = "";
    if (a->socket_link)
      snprintf(socket, sizeof(socket), " (%s; NCCL counts %g GB/s)", a->socket_link, a->socket_nccl_gbps);
    struct pair_counts pc = count_pairs(a);
    bool all_gpulink = pc.gpulink == pc.pairs; /* every GPU pair NV#: GPU traffic never takes the socket link */
    if (all_gpulink)
      add_finding(a, GR_SEV_INFO, "topo.gpus-split", -1,
                  "The %zu GPUs sit on %d NUMA nodes, but NVLink joins every pair: GPU-to-GPU traffic stays on NVLink, and the link between the nodes%s carries only host traffic (data loading, each GPU's copies to the other node's memory).",
                  a->ngpus, nodes, socket);
    else
      add_finding(a, GR_SEV_INFO, "topo.gpus-split", -1,
                  "The %zu GPUs sit on %d NUMA nodes: traffic between GPUs of different nodes crosses the link between them%s.",
                  a->ngpus, nodes, socket);
  }
  free(members);
}

/* The GPUs of hive h into members; returns how many. */
static size_t hive_members(const struct gr_analysis *a, size_t h, int *members)
{
  size_t nm = 0;
  for (size_t g = 0; g < a->ngpus; g++)
    if (a->hive[g] == (int)h)
      members[nm++] = (int)g;
  return nm;
}

/* "[GPU0 GPU1] [GPU2 GPU3] ...", allocated to fit every hive whole (each GPU
 * at most 15 bytes, each hive 3 more); the caller frees it. */
static char *hive_list(const struct gr_analysis *a, int *members)
{
  size_t cap = 18 * a->ngpus + 1, off = 0;
  char *list = xmalloc(cap);
  list[0] = '\0';
  for (size_t h = 0; h < a->nhives && off < cap; h++) {
    char *one = gpu_list(members, hive_members(a, h, members));
    off += (size_t)snprintf(list + off, cap - off, "%s[%s]", h ? " " : "", one);
    free(one);
  }
  return list;
}

void hive_findings(struct gr_analysis *a)
{
  if (a->ngpus == 0 && a->t->naccels) {
    add_finding(a, GR_SEV_INFO, "topo.no-gpu", -1,
                "No GPU was found on the PCI bus, only %zu accelerator%s that %s (class 0b40 or 12xx, from a maker of no "
                "GPU): NCCL, P2P and all-reduce verdicts do not apply; their PCIe paths and links are judged.",
                a->t->naccels, a->t->naccels == 1 ? "" : "s", a->t->naccels == 1 ? "is not a GPU" : "are not GPUs");
    return;
  }
  if (a->ngpus == 0) {
    add_finding(a, GR_SEV_INFO, "topo.no-gpu", -1, "No GPU or accelerator was found on the PCI bus.");
    return;
  }
  if (a->ngpus < 2)
    return;
  if (a->nhives == 1) {
    add_finding(a, GR_SEV_INFO, "topo.hives", -1,
                "All %zu GPUs form one P2P hive: every pair is joined by NVLink or PCIe switches without crossing the CPU.",
                a->ngpus);
    return;
  }
  int *members = xmalloc(a->ngpus * sizeof(int));
  size_t singles = 0;
  for (size_t h = 0; h < a->nhives; h++)
    singles += hive_members(a, h, members) == 1;
  bool wired = count_pairs(a).near > 0; /* some pair shares a switch but cannot do P2P */
  if (singles == a->ngpus && wired) {
    add_finding(a, GR_SEV_INFO, "topo.hives", -1,
                "No two GPUs form a P2P hive: those that share a PCIe switch cannot do P2P (topo.no-p2p), so every GPU-to-GPU transfer goes through the CPU.");
  } else if (singles == a->ngpus) {
    add_finding(a, GR_SEV_INFO, "topo.hives", -1,
                "No two GPUs share a PCIe switch or NVLink: every GPU-to-GPU transfer goes through the CPU's root complex.");
  } else {
    char *list = hive_list(a, members);
    add_finding(a, GR_SEV_INFO, "topo.hives", -1,
                "The %zu GPUs form %zu P2P hives %s: GPUs in different hives exchange data through the CPU.",
                a->ngpus, a->nhives, list);
    free(list);
  }
  free(members);
}

/* The references of a catalog source about P2P: in the "; "-separated
 * piece that names P2P, what follows its first ": " ("no P2P on stock
 * drivers: NVIDIA/nccl-tests#117, ..." gives "NVIDIA/nccl-tests#117, ..."). */
static void p2p_source(const char *source, char *buf, size_t cap)
{
  const char *hit = source ? strstr(source, "P2P") : NULL;
  buf[0] = '\0';
  if (!hit)
    return;
  const char *start = hit;
  while (start > source && !(start - 1 > source && start[-1] == ' ' && start[-2] == ';'))
    start--;
  size_t len = strcspn(start, ";");
  const char *colon = strstr(start, ": ");
  if (colon && colon < start + len) {
    len -= (size_t)(colon + 2 - start);
    start = colon + 2;
  }
  snprintf(buf, cap, "%.*s", (int)len, start);
}

/* Why GPU g cannot do P2P on its own (driver or catalog), into buf; false
 * when it can. */
static bool gpu_no_p2p_why(const struct gr_topo *t, int g, char *buf, size_t cap)
{
  const struct gr_pci *d = &t->pci[g];
  const struct gr_gpu_model *m = gr_pci_catalog(d);
  char src[256];
  if (gpu_p2p(d))
    return false;
  if (m)
    p2p_source(m->source, src, sizeof(src));
  if (m && m->p2p == GR_P2P_NO) /* a rig and the driver on a stock machine agree with the catalog */
    snprintf(buf, cap, "%s: no PCIe P2P on the vendor's stock driver%s; data/gpus.tsv: %s", m->model,
             strstr(src, "tinygrad") ? ", tinygrad's patched open kernel modules enable it" : "",
             src[0] ? src : "its source column");
  else if (d->p2p == 0)
    snprintf(buf, cap, "%s", t->rig ? "the rig declares p2p off" : "the driver reports no peer access");
  else if (m)
    snprintf(buf, cap, "%s: P2P works on some driver versions only, so gpurig assumes it off; data/gpus.tsv: %s; "
                       "`p2p on` in a rig, or gpurig on the machine itself, says otherwise",
             m->model, src[0] ? src : "its source column");
  else
    snprintf(buf, cap, "no P2P");
  return true;
}

/* GPUs and pairs that cannot do P2P at any NCCL_P2P_LEVEL, with the reason:
 * the GPU (driver, catalog) or the platform (sockets, root complexes). */
static void no_p2p_findings(struct gr_analysis *a, size_t incapable, size_t pairs)
{
  const struct gr_topo *t = a->t;
  size_t n = a->ngpus, off = 0, cap = 1024 + 600 * n; /* a group: its list, 30 bytes, a reason under 512 */
  char *text = xmalloc(cap), why[512], other[512];
  int *members = xmalloc((n + 1) * sizeof(int));
  bool *done = xcalloc(n + 1, sizeof(bool));
  text[0] = '\0';
  for (size_t g = 0; g < n; g++) {
    if (done[g] || !gpu_no_p2p_why(t, t->gpus[g], why, sizeof(why)))
      continue;
    size_t nm = 0;
    for (size_t h = g; h < n; h++) /* the GPUs with the same reason */
      if (!done[h] && gpu_no_p2p_why(t, t->gpus[h], other, sizeof(other)) && strcmp(why, other) == 0) {
        done[h] = true;
        members[nm++] = (int)h;
      }
    char *list = gpu_list(members, nm);
    off += (size_t)snprintf(text + off, off < cap ? cap - off : 0, "%s%s cannot do P2P (%s).", off ? " " : "", list,
                            why);
    free(list);
  }
  struct pair_counts pc = count_pairs(a);
  size_t platform = pc.platform, sockets = pc.platform_sys; /* of the platform's pairs, those across sockets (the rest: between root complexes) */
  const char *across = a->cpu_amd ? "the input says this AMD CPU does not forward P2P between its sockets"
                       : strncmp(a->cpu_class, "intel", 5) == 0
                           ? "Intel CPUs do not forward PCIe P2P between sockets; NVML reports it unsupported"
                           : "gpurig assumes a CPU other than AMD's does not forward PCIe P2P between sockets, as Intel's do not";
  if (platform)
    off += (size_t)snprintf(text + off, off < cap ? cap - off : 0,
                            "%s%zu GPU pair%s cannot do P2P because the platform does not forward it (%s%s%s).",
                            off ? " " : "", platform, platform == 1 ? "" : "s", sockets ? across : "",
                            sockets && sockets < platform ? "; " : "",
                            sockets < platform ? "the input says the CPU does not forward P2P between its root complexes"
                                               : "");
  add_finding(a, GR_SEV_INFO, "topo.no-p2p", -1,
              "%s So %zu of %zu GPU pairs go through host memory whatever NCCL_P2P_LEVEL says, and %s's view shows them on the host path (PHB, or SYS across NUMA nodes).",
              text, incapable, pairs, gr_topo_collective(a->t));
  free(done);
  free(members);
  free(text);
}

void nccl_findings(struct gr_analysis *a)
{
  struct pair_counts pc = count_pairs(a);
  size_t pairs = pc.pairs, no_p2p = pc.no_nccl_p2p, incapable = pc.incapable;
  enum gr_level worst = pc.no_nccl_p2p_worst;
  if (incapable)
    no_p2p_findings(a, incapable, pairs);
  if (!no_p2p)
    return;
  char dflt[160], why[160];
  add_finding(a, GR_SEV_INFO, "nccl.p2p-level", -1,
              "With %s %s uses PCIe P2P only up to %s on this machine (%s), so %zu of the %zu GPU pair%s that can do P2P (paths up to %s) go%s through host memory; NCCL_P2P_LEVEL=%s allows P2P there, which helps only if the CPU forwards P2P traffic well (measure it with gpurig bench).",
              gr_nccl_defaults_text(a, dflt, sizeof(dflt)), gr_topo_collective(a->t), gr_nccl_level_str(a->nccl_p2p_level),
              gr_nccl_why(a, a->ngpus, why, sizeof(why)), no_p2p, pairs - incapable, pairs - incapable == 1 ? "" : "s",
              gr_level_name(worst), no_p2p == 1 ? "es" : "",
              gr_nccl_level_str(nccl_of(worst)));
}

void nic_findings(struct gr_analysis *a)
{
  const struct gr_topo *t = a->t;
  char name[32];
  if (a->ngpus == 0)
    return;
  for (size_t n = 0; n < a->nnics; n++) {
    enum gr_level best = GR_LVL_SYS;
    for (size_t g = 0; g < a->ngpus; g++)
      if (a->gpu_nic[g * a->nnics + n].level < best)
        best = a->gpu_nic[g * a->nnics + n].level;
    if (best > GR_LVL_PXB)
      add_finding(a, GR_SEV_INFO, "nic.gdr-placement", t->nics[n],
                  "%s shares no PCIe switch with any GPU (nearest GPU: %s): GPUDirect RDMA traffic crosses the CPU; NCCL uses it only up to NCCL_NET_GDR_LEVEL.",
                  gr_pci_label(t, t->nics[n], name, sizeof(name)), gr_level_name(best));
  }
}

void data_findings(struct gr_analysis *a)
{
  size_t nvswitches = 0;
  for (size_t i = 0; i < a->t->npci; i++)
    nvswitches += a->t->pci[i].kind == GR_KIND_NVSWITCH;
  if (a->t->gpulink_ignored)
    add_finding(a, GR_SEV_INFO, "topo.nvlink-ignored", -1,
                "NVLink is ignored as asked (--pcie-only): the levels show the PCIe paths under it.");
  else if (a->t->nfabrics && a->t->fabrics[0].from == GR_FABRIC_INFERRED)
    add_finding(a, GR_SEV_INFO, "topo.nvlink-inferred", -1,
                "NVLink inferred, not recorded: %s, so gpurig assumes the NVSwitch fabric these GPUs are sold on (NV%d per pair from the catalog). Run gpurig on the machine itself (it reads NVLink from the driver) to confirm.",
                a->t->fabrics[0].why, a->t->fabrics[0].nmembers ? a->t->fabrics[0].members[0].links : 0);
  else if (nvswitches && !a->t->ngpulinks && !a->t->nfabrics && a->ngpus > 1) {
    a->gpulink_unrecorded = true;
    add_finding(a, GR_SEV_INFO, "topo.nvlink-unknown", -1,
                "%zu NVSwitch%s present but this input has no NVLink matrix (hwloc records it only through NVML) and the GPUs' NVLink counts are not in the catalog, so the GPU levels above are PCIe only; the GPUs are most likely joined by NVLink.",
                nvswitches, nvswitches == 1 ? " is" : "es are");
  }
  /* an input's own gaps say what it leaves out (links included) in its words */
  for (size_t i = 0; i < a->t->ngaps; i++)
    add_finding(a, GR_SEV_INFO, "topo.input-gap", -1, "%s", a->t->gaps[i]);
  if (!a->t->link_details && a->ngpus > 0 && !a->t->ngaps) {
    /* what the input does record decides the sentence: some formats (an
     * NCCL topology file) give each link as it ran, others its rate alone */
    bool as_ran = false;
    for (size_t i = 0; i < a->t->npci && !as_ran; i++)
      as_ran = a->t->pci[i].has_link && a->t->pci[i].link.cur_gen > 0 && a->t->pci[i].link.cur_width > 0;
    add_finding(a, GR_SEV_INFO, "topo.link-unrecorded", -1,
                as_ran ? "This input records each link's generation and width as it ran, not both ends' maxima or error counters: run `gpurig snapshot FILE.xml` on the machine to record them."
                       : "This input records each link's rate only, not its generation, width, maxima or error counters: run `gpurig snapshot FILE.xml` on the machine to record them.");
  }
}
