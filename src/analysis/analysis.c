/* The analysis: CPU facts, who may talk P2P, NCCL's defaults, NVLink, PCIe
 * paths, hives and bottlenecks, and the entry points; the findings are in
 * analysis_findings.c (analysis/analysis_internal.h). */
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

/* ---- small helpers ---- */

void add_finding(struct gr_analysis *a, enum gr_sev sev, const char *id, int node, const char *fmt, ...)
{
  char subject[96], bus[32];
  va_list ap;
  va_start(ap, fmt);
  struct gr_finding *f = gr_finding_vadd(&a->findings, sev, id, fmt, ap);
  va_end(ap);
  if (node >= 0)
    gr_finding_subject(f, node, gr_pci_subject(a->t, node, subject, sizeof(subject)),
                       gr_pci_busid(&a->t->pci[node], bus, sizeof(bus)));
}

/* ---- CPU facts NCCL depends on ---- */

/* Whether a row of data/cpu-interconnect.tsv names this CPU (family -1: "*", any). */
static bool table_row_matches(const struct gr_cpu_interconnect_row *row, const struct gr_package *p)
{
  if (!p->cpu_vendor || strcmp(row->vendor, p->cpu_vendor) != 0)
    return false;
  if (row->family >= 0 && row->family != p->cpu_family)
    return false;
  return row->family < 0 || p->cpu_model_number < 0 || p->cpu_model_number >= row->model_min;
}

/* The link between sockets: what the input declares (a rig's intersocket),
 * else NCCL's figure for this CPU (data/cpu-interconnect.tsv). */
void socket_link(struct gr_analysis *a)
{
  const struct gr_topo *t = a->t;
  if (t->npackages < 2 && t->nnumas < 2)
    return;
  if (t->socket_gbps > 0) {
    a->socket_nccl_gbps = t->socket_gbps;
    a->socket_link = t->socket_link;
    return;
  }
  const struct gr_cpu_interconnect_rows *tb = gr_cpu_interconnect_rows();
  long best = -1;
  for (size_t r = 0; r < tb->n && t->npackages > 0; r++) {
    const struct gr_cpu_interconnect_row *row = &tb->v[r];
    if (table_row_matches(row, &t->packages[0]) && row->model_min > best) {
      best = row->model_min;
      a->socket_nccl_gbps = row->nccl_gbps;
      a->socket_link = row->link;
    }
  }
}

/* The CPU as NCCL's P2P rule names it (data/nccl-p2p.tsv): NCCL reads the
 * first CPU it meets, so the first package that names its vendor. NCCL's
 * BDW is every Intel CPU but family 6 from model 0x55 (Skylake) on; a CPU
 * whose model number the input does not record counts as Skylake or newer. */
static const char *cpu_class_of(const struct gr_topo *t)
{
  for (size_t i = 0; i < t->npackages; i++) {
    const struct gr_package *p = &t->packages[i];
    const char *v = p->cpu_vendor;
    if (!v)
      continue;
    if (strcmp(v, "GenuineIntel") == 0)
      return p->cpu_family < 0 || (p->cpu_family == 6 && (p->cpu_model_number < 0 || p->cpu_model_number >= 0x55))
                 ? "intel"
                 : "intel-bdw";
    if (strcmp(v, "AuthenticAMD") == 0)
      return "amd";
    if (strcmp(v, "CentaurHauls") == 0 || strcmp(v, "  Shanghai  ") == 0 || strcmp(v, "Shanghai") == 0)
      return "zhaoxin";
    return "other";
  }
  return "other";
}

/* ---- who may talk P2P ---- */

/* The driver's word for one GPU: the topology's, else the catalog's. */
bool gpu_p2p(const struct gr_pci *g)
{
  if (g->p2p >= 0)
    return g->p2p;
  const struct gr_gpu_model *m = gr_pci_catalog(g);
  if (!m)
    return true; /* an accelerator gpurig does not know: P2P is the rule off GeForce */
  return m->p2p == GR_P2P_YES;
}

static const struct gr_package *package_at(const struct gr_topo *t, int os_index)
{
  for (size_t i = 0; i < t->npackages; i++)
    if (t->packages[i].os_index == os_index)
      return &t->packages[i];
  return NULL;
}

/* Whether the platform forwards PCIe P2P on a path of this level. */
static bool platform_p2p(const struct gr_analysis *a, const struct gr_pci *x, const struct gr_pci *y,
                         enum gr_level level)
{
  const struct gr_package *px = package_at(a->t, x->package), *py = package_at(a->t, y->package);
  if (level <= GR_LVL_PHB)
    return true;
  if (level == GR_LVL_NODE)
    return !px || px->rc_p2p != 0;
  /* across sockets: never over Intel's QPI/UPI (NVML reports it unsupported); AMD forwards it */
  return a->cpu_amd && (!px || px->rc_p2p != 0) && (!py || py->rc_p2p != 0);
}

/* ---- NCCL's defaults ---- */

static enum gr_level level_of_name(const char *name)
{
  return strcmp(name, "PIX") == 0 ? GR_LVL_PIX : strcmp(name, "PXB") == 0 ? GR_LVL_PXB
                                                : strcmp(name, "PHB") == 0 ? GR_LVL_PHB
                                                                           : GR_LVL_SYS;
}

enum gr_level gr_nccl_p2p_level_for(const struct gr_analysis *a, size_t ngpus, const struct gr_nccl_rule **rule)
{
  const struct gr_nccl_rule *r = gr_nccl_p2p_rule(&a->nccl_version, a->cpu_class, ngpus);
  if (rule)
    *rule = r;
  return r ? level_of_name(r->level) : GR_LVL_PXB;
}

const char *gr_nccl_defaults_text(const struct gr_analysis *a, char *buf, size_t cap)
{
  char v[32], until[32];
  struct gr_nccl_version newest = gr_nccl_newest();
  const struct gr_nccl_rule *r = a->nccl_rule;
  if (a->nccl_assumed && r)
    snprintf(buf, cap, "NCCL %d.%d+ defaults (assumed; --nccl-version to change)", r->since.major, r->since.minor);
  else if (gr_nccl_version_cmp(&a->nccl_version, &newest) > 0 && r)
    snprintf(buf, cap, "NCCL %s defaults (as checked up to %s, the newest gpurig knows)",
             gr_nccl_version_text(&a->nccl_version, v, sizeof(v)), gr_nccl_version_text(&newest, until, sizeof(until)));
  else
    snprintf(buf, cap, "NCCL %s defaults", gr_nccl_version_text(&a->nccl_version, v, sizeof(v)));
  return buf;
}

const char *gr_nccl_why(const struct gr_analysis *a, size_t ngpus, char *buf, size_t cap)
{
  static const struct {
    const char *cls, *name;
  } names[] = {{"amd", "AMD CPU"}, {"intel", "Intel CPU"}, {"intel-bdw", "Intel CPU older than Skylake"},
               {"zhaoxin", "Zhaoxin CPU"}, {"arm", "ARM CPU"}};
  const char *model = a->t->npackages ? a->t->packages[0].cpu_model : NULL;
  const char *cpu = a->cpu_vendor_known                      ? "a CPU no NCCL rule names"
                    : model && strncmp(model, "POWER", 5) == 0 ? "POWER CPU"
                                                               : "CPU vendor not recorded";
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
    if (strcmp(a->cpu_class, names[i].cls) == 0)
      cpu = names[i].name;
  const struct gr_nccl_rule *r = NULL, *small = NULL;
  gr_nccl_p2p_level_for(a, ngpus, &r);
  gr_nccl_p2p_level_for(a, 1, &small); /* the rule of the smallest communicator */
  if (r && r->gpus_max > 0)
    snprintf(buf, cap, "%s, at most %d GPUs in the communicator", cpu, r->gpus_max);
  else if (r && small && small != r && small->gpus_max > 0)
    snprintf(buf, cap, "%s, more than %d GPUs in the communicator", cpu, small->gpus_max);
  else
    snprintf(buf, cap, "%s", cpu);
  return buf;
}

/* NCCL's NVLink figure per link by compute capability (ncclTopoNVLinkBw). */
static double nccl_nvlink_per_link(int cc)
{
  return cc >= 100 ? gr_calib()->nccl_nvlink_sm100
         : cc >= 90 ? gr_calib()->nccl_nvlink_sm90
         : cc == 86 ? gr_calib()->nccl_nvlink_sm86
         : cc >= 80 ? gr_calib()->nccl_nvlink_sm80
         : cc >= 70 ? gr_calib()->nccl_nvlink_sm70
         : cc >= 60 ? gr_calib()->nccl_nvlink_sm60
                    : 0; /* unknown: no figure rather than NCCL's fallback for a GPU it would know */
}

double gr_nccl_gpulink_gbps(const struct gr_topo *t, int x, int y, int links)
{
  const struct gr_gpu_model *mx = gr_pci_catalog(&t->pci[x]), *my = gr_pci_catalog(&t->pci[y]);
  if (!mx || !my || mx->cc_major <= 0 || my->cc_major <= 0 || links <= 0)
    return 0;
  int cx = mx->cc_major * 10 + mx->cc_minor, cy = my->cc_major * 10 + my->cc_minor;
  return links * nccl_nvlink_per_link(cx < cy ? cx : cy);
}

/* ---- NVLink ---- */

/* The NVLink pair matrix (gr_analysis.nv_*): direct links, and pairs
 * through an NVSwitch fabric (model/topo.h: a pair through a fabric gets
 * what the member with fewer links into it has); nv_inferred marks pairs
 * joined only by an inferred fabric. */
static void nvlink_direct(struct gr_analysis *a)
{
  const struct gr_topo *t = a->t;
  size_t n = a->ngpus;
  for (size_t k = 0; k < t->ngpulinks; k++) {
    const struct gr_gpulink *l = &t->gpulinks[k];
    if (l->b < 0)
      continue;
    int ga = t->pci[l->a].gpu_index, gb = t->pci[l->b].gpu_index;
    if (ga < 0 || gb < 0)
      continue;
    size_t ab = (size_t)ga * n + (size_t)gb, ba = (size_t)gb * n + (size_t)ga;
    a->nv_links[ab] += l->count;
    a->nv_links[ba] += l->count;
    a->nv_direct_gbps[ab] += l->bw_gbps;
    a->nv_direct_gbps[ba] += l->bw_gbps;
  }
  memcpy(a->nv_gbps, a->nv_direct_gbps, n * n * sizeof(double));
}

static void nvlink_tables(struct gr_analysis *a)
{
  const struct gr_topo *t = a->t;
  size_t n = a->ngpus;
  a->nv_links = xcalloc(n * n + 1, sizeof(int));
  a->nv_gbps = xcalloc(n * n + 1, sizeof(double));
  a->nv_inferred = xcalloc(n * n + 1, sizeof(bool));
  a->nv_direct_gbps = xcalloc(n * n + 1, sizeof(double));
  a->nv_fabric_gbps = xcalloc(n + 1, sizeof(double));
  nvlink_direct(a);
  for (size_t f = 0; f < t->nfabrics; f++) {
    const struct gr_fabric *fb = &t->fabrics[f];
    for (size_t i = 0; i < fb->nmembers; i++) {
      const struct gr_fabric_member *x = &fb->members[i];
      int gx = t->pci[x->gpu].gpu_index;
      if (gx >= 0)
        a->nv_fabric_gbps[gx] += x->gbps;
      for (size_t j = 0; j < fb->nmembers; j++) {
        const struct gr_fabric_member *y = &fb->members[j];
        int gy = t->pci[y->gpu].gpu_index;
        if (i == j || gx < 0 || gy < 0)
          continue;
        size_t c = (size_t)gx * n + (size_t)gy;
        a->nv_inferred[c] = a->nv_links[c] == 0 && fb->from == GR_FABRIC_INFERRED;
        a->nv_links[c] += x->links < y->links ? x->links : y->links;
        a->nv_gbps[c] += x->gbps < y->gbps ? x->gbps : y->gbps;
      }
    }
  }
}

/* ---- PCIe paths ---- */

/* Walks from x up to (not including) stop, keeping the narrowest known link. */
static void narrowest_on_way_up(const struct gr_analysis *a, int x, int stop, struct gr_path *p)
{
  for (; x >= 0 && x != stop; x = a->t->pci[x].parent) {
    const struct gr_link_facts *f = &a->link[x];
    if (!f->present || f->gbps <= 0)
      continue;
    if (p->bottleneck < 0 || f->gbps < p->bw_gbps) {
      p->bottleneck = x;
      p->bw_gbps = f->gbps;
      p->nccl_bw_gbps = f->nccl_gbps;
    }
  }
}

/* Whether the way from x up to lca passes a switch (or standalone bridge)
 * other than *only, the first one met on either way (-1 before any). PIX
 * needs one switch at most, so one id is all there is to remember, however
 * deep the tree. */
static bool other_switch_on_way_up(const struct gr_topo *t, int x, int lca, int *only)
{
  for (x = t->pci[x].parent; x >= 0; x = t->pci[x].parent) {
    const struct gr_pci *n = &t->pci[x];
    int id = n->switch_up >= 0 ? n->switch_up : x;
    if (*only < 0)
      *only = id;
    else if (id != *only)
      return true;
    if (x == lca)
      break;
  }
  return false;
}

static bool same_numa(const struct gr_topo *t, const struct gr_pci *x, const struct gr_pci *y)
{
  if (x->numa >= 0 && y->numa >= 0)
    return x->numa == y->numa;
  /* unknown locality: only certain on a single-node machine */
  return t->nnumas <= 1;
}

static enum gr_level pcie_level(const struct gr_topo *t, int x, int y, int *lca_out)
{
  const struct gr_pci *px = &t->pci[x], *py = &t->pci[y];
  *lca_out = -1;
  if (px->hostbridge < 0 || px->hostbridge != py->hostbridge)
    return same_numa(t, px, py) ? GR_LVL_NODE : GR_LVL_SYS;
  int lca = gr_topo_common_ancestor(t, x, y);
  *lca_out = lca;
  if (lca < 0 || t->pci[lca].role == GR_ROLE_HOSTBRIDGE)
    return GR_LVL_PHB;
  int only = -1;
  if (other_switch_on_way_up(t, x, lca, &only) || other_switch_on_way_up(t, y, lca, &only))
    return GR_LVL_PXB;
  return GR_LVL_PIX;
}

enum gr_level nccl_of(enum gr_level l)
{
  return l == GR_LVL_NODE ? GR_LVL_PHB : l;
}

/* NCCL's figure for a path that crosses NUMA nodes: the inter-socket link
 * when it is the narrower. */
static void socket_bound(const struct gr_analysis *a, struct gr_path *p)
{
  if (p->level == GR_LVL_SYS && a->socket_nccl_gbps > 0 &&
      (p->nccl_bw_gbps <= 0 || a->socket_nccl_gbps < p->nccl_bw_gbps)) {
    p->nccl_bw_gbps = a->socket_nccl_gbps;
    p->via = GR_VIA_SOCKET;
  }
}

/* The narrowest link on one way up, from a node to (not including) stop:
 * the first such link met, as narrowest_on_way_up keeps it. */
static struct gr_path way_up(const struct gr_analysis *a, int x, int stop)
{
  struct gr_path w = {.bottleneck = -1};
  narrowest_on_way_up(a, x, stop, &w);
  return w;
}

/* The PCIe path's figures from its level and its two ways up (x's, then
 * y's: on a tie x's link is the one named). */
static void pcie_finish(const struct gr_analysis *a, struct gr_path *p, int lca, const struct gr_path *wx,
                        const struct gr_path *wy)
{
  p->nccl = nccl_of(p->level);
  if (!p->p2p_capable) {
    /* NCCL diverts the pair through the CPU (ncclTopoComputePaths,
     * addCpuStep): PHB, or SYS when the way crosses NUMA nodes; the bytes
     * climb to the host bridges and come down again */
    p->nccl = p->level == GR_LVL_SYS ? GR_LVL_SYS : GR_LVL_PHB;
    lca = -1;
  }
  p->nccl_p2p = p->p2p_capable && p->nccl <= a->nccl_p2p_level;
  p->top = lca;
  /* y's way wins only with a narrower link: x's way was walked first */
  const struct gr_path *w = wx->bottleneck < 0 || (wy->bottleneck >= 0 && wy->bw_gbps < wx->bw_gbps) ? wy : wx;
  p->bottleneck = w->bottleneck;
  p->bw_gbps = w->bw_gbps;
  p->nccl_bw_gbps = w->nccl_bw_gbps;
  if (p->bottleneck >= 0)
    p->via = GR_VIA_PCIE;
  socket_bound(a, p);
}

struct gr_path path_between(const struct gr_analysis *a, int x, int y, bool nvlink)
{
  const struct gr_topo *t = a->t;
  struct gr_path p = {.bottleneck = -1, .top = -1};
  if (x == y) {
    p.level = p.nccl = GR_LVL_X;
    p.nccl_p2p = p.p2p_capable = true;
    return p;
  }
  int gx = t->pci[x].gpu_index, gy = t->pci[y].gpu_index;
  size_t c = (size_t)gx * a->ngpus + (size_t)gy;
  if (nvlink && gx >= 0 && gy >= 0 && a->nv_links[c] > 0) {
    p.level = p.nccl = GR_LVL_GPULINK;
    p.gpulinks = a->nv_links[c];
    /* AMD GPUs have one GPU link, xGMI: the level is the same, its name not */
    p.xgmi = gr_pci_amd_gpu(&t->pci[x]) && gr_pci_amd_gpu(&t->pci[y]);
    p.nccl_p2p = p.p2p_capable = true;
    p.via = GR_VIA_GPULINK;
    p.bw_gbps = a->nv_gbps[c];
    p.nccl_bw_gbps = gr_nccl_gpulink_gbps(t, x, y, p.gpulinks);
    p.nv_inferred = a->nv_inferred[c];
    return p;
  }
  int lca;
  p.level = pcie_level(t, x, y, &lca);
  p.p2p_capable = gx < 0 || gy < 0 ||
                  (gpu_p2p(&t->pci[x]) && gpu_p2p(&t->pci[y]) && platform_p2p(a, &t->pci[x], &t->pci[y], p.level));
  /* different host bridges, or the host path: both ways up to the root complex */
  int stop = p.p2p_capable ? lca : -1;
  struct gr_path wx = way_up(a, x, stop), wy = way_up(a, y, stop);
  pcie_finish(a, &p, lca, &wx, &wy);
  return p;
}

/* GPUs gi < gj both ways at once: the level, the common ancestor and the
 * two ways up are the same in either direction, so they are found once per
 * pair, not per ordered pair (half the walks of the n x n matrix). NVLink
 * pairs and pairs whose P2P differs by direction take path_between twice. */
void gpu_pair_paths(const struct gr_analysis *a, const bool *p2p, size_t gi, size_t gj, struct gr_path *xy,
                    struct gr_path *yx)
{
  const struct gr_topo *t = a->t;
  size_t n = a->ngpus;
  int x = t->gpus[gi], y = t->gpus[gj];
  int lca;
  enum gr_level level = pcie_level(t, x, y, &lca);
  bool pxy = p2p[gi] && p2p[gj] && platform_p2p(a, &t->pci[x], &t->pci[y], level);
  bool pyx = p2p[gi] && p2p[gj] && platform_p2p(a, &t->pci[y], &t->pci[x], level);
  if (a->nv_links[gi * n + gj] > 0 || a->nv_links[gj * n + gi] > 0 || pxy != pyx) {
    *xy = path_between(a, x, y, true);
    *yx = path_between(a, y, x, true);
    return;
  }
  int stop = pxy ? lca : -1;
  struct gr_path wx = way_up(a, x, stop), wy = way_up(a, y, stop);
  *xy = (struct gr_path){.level = level, .p2p_capable = pxy, .bottleneck = -1, .top = -1};
  *yx = *xy;
  pcie_finish(a, xy, lca, &wx, &wy);
  pcie_finish(a, yx, lca, &wy, &wx);
}

struct gr_path gr_path_between(const struct gr_analysis *a, int x, int y)
{
  int gx = a->t->pci[x].gpu_index, gy = a->t->pci[y].gpu_index;
  if (gx >= 0 && gy >= 0 && a->class_path)
    return gr_gpu_path(a, (size_t)gx, (size_t)gy);
  return path_between(a, x, y, false);
}

/* ---- entry points ---- */

void gr_analyze(const struct gr_topo *t, struct gr_analysis *a)
{
  gr_analyze_with(t, NULL, a);
}

const char *gr_hive_kind_name(enum gr_hive_kind k)
{
  switch (k) {
  case GR_HIVE_ALONE: return "alone";
  case GR_HIVE_GPULINK: return "NVLink";
  case GR_HIVE_SWITCH: return "PCIe switch";
  case GR_HIVE_SWITCHES: return "PCIe switches";
  }
  return "?";
}

const char *gr_gpulink_name(const struct gr_path *p)
{
  return p->xgmi ? "xGMI" : "NVLink";
}

const char *gr_hive_kind_key(enum gr_hive_kind k)
{
  switch (k) {
  case GR_HIVE_ALONE: return "alone";
  case GR_HIVE_GPULINK: return "nvlink";
  case GR_HIVE_SWITCH: return "pcie_switch";
  case GR_HIVE_SWITCHES: return "pcie_switches";
  }
  return "?";
}

void gr_analyze_with(const struct gr_topo *t, const struct gr_analysis_opts *o, struct gr_analysis *a)
{
  memset(a, 0, sizeof(*a));
  a->t = t;
  a->ngpus = t->ngpus;
  a->nnics = t->nnics;
  for (size_t i = 0; i < t->npackages; i++)
    a->cpu_amd |= t->packages[i].cpu_vendor && strcmp(t->packages[i].cpu_vendor, "AuthenticAMD") == 0;
  a->cpu_class = cpu_class_of(t);
  for (size_t i = 0; i < t->npackages; i++)
    a->cpu_vendor_known |= t->packages[i].cpu_vendor != NULL;
  a->nccl_assumed = !o || o->nccl.major == 0;
  a->nccl_version = a->nccl_assumed ? gr_nccl_newest() : o->nccl;
  if (!gr_nccl_p2p_rule(&a->nccl_version, a->cpu_class, t->ngpus))
    a->nccl_version = gr_nccl_oldest(); /* the caller refuses such a version; never a rule-less analysis */
  /* NCCL's default P2P level for a communicator of every GPU (data/nccl-p2p.tsv) */
  a->nccl_p2p_level = gr_nccl_p2p_level_for(a, t->ngpus, &a->nccl_rule);
  socket_link(a);
  a->link = xcalloc(t->npci + 1, sizeof(*a->link));
  for (size_t i = 0; i < t->npci; i++)
    gr_link_facts(&t->pci[i], &a->link[i]);
  size_t n = a->ngpus;
  nvlink_tables(a);
  a->gpu_nic = xcalloc(n * a->nnics + 1, sizeof(*a->gpu_nic));
  gpu_paths(a);
  for (size_t i = 0; i < n; i++) {
    for (size_t k = 0; k < a->nnics; k++)
      a->gpu_nic[i * a->nnics + k] = path_between(a, t->gpus[i], t->nics[k], false);
  }
  find_hives(a);
  find_bottlenecks(a);
  link_findings(a);
  locality_findings(a);
  hive_findings(a);
  nccl_findings(a);
  nic_findings(a);
  data_findings(a);
  gr_findings_sort(&a->findings);
}

void gr_analysis_free(struct gr_analysis *a)
{
  if (!a)
    return;
  gr_findings_free(&a->findings);
  free(a->class_path);
  free(a->class_rep);
  free(a->class_below);
  free(a->gpu_nic);
  free(a->gpu_class);
  free(a->class_start);
  free(a->class_gpus);
  if (a->chains)
    gpu_chains_free(a->chains);
  free(a->chains);
  free(a->hive);
  free(a->hives);
  free(a->link);
  free(a->nv_links);
  free(a->nv_gbps);
  free(a->nv_inferred);
  free(a->nv_direct_gbps);
  free(a->nv_fabric_gbps);
  for (size_t i = 0; i < a->nbottlenecks; i++)
    free(a->bottlenecks[i].groups);
  free(a->bottlenecks);
  memset(a, 0, sizeof(*a));
}

const char *gr_level_name(enum gr_level l)
{
  switch (l) {
  case GR_LVL_X: return "X";
  case GR_LVL_GPULINK: return "NV";
  case GR_LVL_PIX: return "PIX";
  case GR_LVL_PXB: return "PXB";
  case GR_LVL_PHB: return "PHB";
  case GR_LVL_NODE: return "NODE";
  case GR_LVL_SYS: return "SYS";
  }
  return "?";
}

const char *gr_level_str(const struct gr_path *p, char *buf, size_t cap)
{
  /* a cell of every matrix, n x n of them: built by hand, not printf'd */
  char nv[8] = "NV";
  const char *s = gr_level_name(p->level);
  if (p->level == GR_LVL_GPULINK && p->xgmi)
    s = "XGMI";
  else if (p->level == GR_LVL_GPULINK && (p->gpulinks < 0 || p->gpulinks > 999)) {
    snprintf(buf, cap, "NV%d", p->gpulinks);
    return buf;
  }
  if (p->level == GR_LVL_GPULINK && !p->xgmi) {
    size_t k = 2;
    int v = p->gpulinks;
    if (v >= 100)
      nv[k++] = (char)('0' + v / 100);
    if (v >= 10)
      nv[k++] = (char)('0' + v / 10 % 10);
    nv[k++] = (char)('0' + v % 10);
    nv[k] = '\0';
    s = nv;
  }
  size_t n = strlen(s);
  n = n < cap ? n : cap - 1;
  memcpy(buf, s, n);
  buf[n] = '\0';
  return buf;
}

const char *gr_nccl_level_str(enum gr_level l)
{
  switch (l) {
  case GR_LVL_X: return "LOC";
  case GR_LVL_GPULINK: return "NVL";
  case GR_LVL_PIX: return "PIX";
  case GR_LVL_PXB: return "PXB";
  case GR_LVL_PHB:
  case GR_LVL_NODE: return "PHB";
  case GR_LVL_SYS: return "SYS";
  }
  return "?";
}

const char *gr_nccl_path_str(const struct gr_path *p)
{
  /* RCCL keeps NCCL's path types and prints PATH_NVL as "XGMI": ROCm/rccl
   * src/graph/topo.cc:27 at 0cbce2a7, topoPathTypeStr[] = { "LOC", "XGMI",
   * "NVB", "PIX", ... } (NCCL_P2P_LEVEL takes the same words there) */
  return p->nccl == GR_LVL_GPULINK && p->xgmi ? "XGMI" : gr_nccl_level_str(p->nccl);
}

void gr_host_link(const struct gr_topo *t, int node, struct gr_host_link *h)
{
  memset(h, 0, sizeof(*h));
  h->bottleneck = -1;
  for (int x = node; x >= 0; x = t->pci[x].parent) {
    struct gr_link_facts f;
    gr_link_facts(&t->pci[x], &f);
    if (!f.present || f.gbps <= 0)
      continue;
    double can = f.can_gen > 0 && f.can_width > 0 ? gr_pcie_bw_gbps(f.can_gen, f.can_width) : f.gbps;
    if (h->bottleneck < 0 || f.gbps < h->bw_gbps) {
      h->bottleneck = x;
      h->bw_gbps = f.gbps;
      h->nccl_gbps = f.nccl_gbps;
      h->gen = f.gen;
      h->width = f.width;
    }
    if (h->can_gbps <= 0 || can < h->can_gbps) {
      h->can_gbps = can;
      h->can_gen = f.can_gen;
      h->can_width = f.can_width;
    }
  }
}
