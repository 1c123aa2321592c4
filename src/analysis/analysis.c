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

/* ---- small helpers ---- */

static int uf_find(int *parent, int x)
{
  while (parent[x] != x) {
    parent[x] = parent[parent[x]];
    x = parent[x];
  }
  return x;
}

static void uf_union(int *parent, int x, int y)
{
  int a = uf_find(parent, x), b = uf_find(parent, y);
  if (a != b)
    parent[b < a ? a : b] = b < a ? b : a;
}

static void add_finding(struct gr_analysis *a, enum gr_sev sev, const char *id, int node, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static void add_finding(struct gr_analysis *a, enum gr_sev sev, const char *id, int node, const char *fmt, ...)
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

static bool table_row_matches(const struct gr_table *tb, size_t r, const struct gr_package *p, long *model_min)
{
  const char *vendor = gr_table_cell(tb, r, (size_t)gr_table_col(tb, "vendor"));
  const char *family = gr_table_cell(tb, r, (size_t)gr_table_col(tb, "family"));
  long fam, mm;
  if (!p->cpu_vendor || strcmp(vendor, p->cpu_vendor) != 0)
    return false;
  if (strcmp(family, "*") != 0 && (!parse_long(family, 10, &fam) || fam != p->cpu_family))
    return false;
  if (!parse_long(gr_table_cell(tb, r, (size_t)gr_table_col(tb, "model_min")), 10, &mm))
    return false;
  if (strcmp(family, "*") != 0 && p->cpu_model_number >= 0 && p->cpu_model_number < mm)
    return false;
  *model_min = mm;
  return true;
}

/* The link between sockets: what the input declares (a rig's intersocket),
 * else NCCL's figure for this CPU (data/cpu-interconnect.tsv). */
static void socket_link(struct gr_analysis *a)
{
  const struct gr_topo *t = a->t;
  if (t->npackages < 2 && t->nnumas < 2)
    return;
  if (t->socket_gbps > 0) {
    a->socket_nccl_gbps = t->socket_gbps;
    a->socket_link = t->socket_link;
    return;
  }
  const struct gr_table *tb = &gr_facts()->cpu_interconnect;
  size_t cn = (size_t)gr_table_col(tb, "nccl_gbps"), cl = (size_t)gr_table_col(tb, "link");
  long best = -1;
  for (size_t r = 0; r < tb->nrows && t->npackages > 0; r++) {
    long mm;
    if (table_row_matches(tb, r, &t->packages[0], &mm) && mm > best) {
      best = mm;
      a->socket_nccl_gbps = strtod(gr_table_cell(tb, r, cn), NULL);
      a->socket_link = gr_table_cell(tb, r, cl);
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
static bool gpu_p2p(const struct gr_pci *g)
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

double gr_nccl_nvlink_gbps(const struct gr_topo *t, int x, int y, int links)
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
  for (size_t k = 0; k < t->nnvlinks; k++) {
    const struct gr_nvlink *l = &t->nvlinks[k];
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

static enum gr_level nccl_of(enum gr_level l)
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

static struct gr_path path_between(const struct gr_analysis *a, int x, int y, bool nvlink)
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
    p.level = p.nccl = GR_LVL_NV;
    p.nvlinks = a->nv_links[c];
    p.nccl_p2p = p.p2p_capable = true;
    p.via = GR_VIA_NVLINK;
    p.bw_gbps = a->nv_gbps[c];
    p.nccl_bw_gbps = gr_nccl_nvlink_gbps(t, x, y, p.nvlinks);
    p.nv_inferred = a->nv_inferred[c];
    return p;
  }
  int lca;
  p.level = pcie_level(t, x, y, &lca);
  p.nccl = nccl_of(p.level);
  p.p2p_capable = gx < 0 || gy < 0 ||
                  (gpu_p2p(&t->pci[x]) && gpu_p2p(&t->pci[y]) && platform_p2p(a, &t->pci[x], &t->pci[y], p.level));
  if (!p.p2p_capable) {
    /* NCCL diverts the pair through the CPU (ncclTopoComputePaths,
     * addCpuStep): PHB, or SYS when the way crosses NUMA nodes; the bytes
     * climb to the host bridges and come down again */
    p.nccl = p.level == GR_LVL_SYS ? GR_LVL_SYS : GR_LVL_PHB;
    lca = -1;
  }
  p.nccl_p2p = p.p2p_capable && p.nccl <= a->nccl_p2p_level;
  p.top = lca;
  /* different host bridges, or the host path: both ways up to the root complex */
  narrowest_on_way_up(a, x, lca, &p);
  narrowest_on_way_up(a, y, lca, &p);
  if (p.bottleneck >= 0)
    p.via = GR_VIA_PCIE;
  socket_bound(a, &p);
  return p;
}

struct gr_path gr_path_between(const struct gr_analysis *a, int x, int y)
{
  int gx = a->t->pci[x].gpu_index, gy = a->t->pci[y].gpu_index;
  if (gx >= 0 && gy >= 0 && a->gpu_gpu)
    return a->gpu_gpu[gx * (int)a->ngpus + gy];
  return path_between(a, x, y, false);
}

/* ---- findings ---- */

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

static void link_findings(struct gr_analysis *a)
{
  const struct gr_topo *t = a->t;
  char name[64];
  for (size_t i = 0; i < t->npci; i++) {
    const struct gr_pci *p = &t->pci[i];
    const struct gr_link_facts *sf = &a->link[i];
    bool carries_gpu_traffic = p->kind == GR_KIND_GPU || p->kind == GR_KIND_NVME || p->rdma ||
                               p->role == GR_ROLE_SWITCH_UP;
    if (!p->has_link || !carries_gpu_traffic)
      continue;
    gr_pci_label(t, (int)i, name, sizeof(name));
    const char *what = p->role == GR_ROLE_SWITCH_UP ? "The uplink of switch" : "";
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

static void locality_findings(struct gr_analysis *a)
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
  int first = -2, nodes = 0;
  for (size_t g = 0; g < a->ngpus; g++) {
    int n = t->pci[t->gpus[g]].numa;
    bool seen = false;
    for (size_t h = 0; h < g; h++)
      seen |= t->pci[t->gpus[h]].numa == n;
    if (!seen && n >= 0) {
      nodes++;
      if (first == -2)
        first = n;
    }
  }
  if (nodes > 1) {
    char socket[128] = "";
    if (a->socket_link)
      snprintf(socket, sizeof(socket), " (%s; NCCL counts %g GB/s)", a->socket_link, a->socket_nccl_gbps);
    bool all_nvlink = true; /* every GPU pair NV#: GPU traffic never takes the socket link */
    for (size_t i = 0; i < a->ngpus * a->ngpus; i++)
      all_nvlink &= i / a->ngpus == i % a->ngpus || a->gpu_gpu[i].level == GR_LVL_NV;
    if (all_nvlink)
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

static void hive_findings(struct gr_analysis *a)
{
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
  bool wired = false; /* some pair shares a switch but cannot do P2P */
  for (size_t i = 0; i < a->ngpus * a->ngpus; i++)
    wired |= a->gpu_gpu[i].level > GR_LVL_X && a->gpu_gpu[i].level <= GR_LVL_PXB;
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
  size_t n = a->ngpus, off = 0, platform = 0, cap = 1024 + 600 * n; /* a group: its list, 30 bytes, a reason under 512 */
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
  size_t sockets = 0; /* of the platform's pairs, those across sockets (the rest: between root complexes) */
  for (size_t i = 0; i < n; i++)
    for (size_t j = i + 1; j < n; j++)
      if (!a->gpu_gpu[i * n + j].p2p_capable && !done[i] && !done[j]) {
        platform++;
        sockets += a->gpu_gpu[i * n + j].level == GR_LVL_SYS;
      }
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
              "%s So %zu of %zu GPU pairs go through host memory whatever NCCL_P2P_LEVEL says, and NCCL's view shows them on the host path (PHB, or SYS across NUMA nodes).",
              text, incapable, pairs);
  free(done);
  free(members);
  free(text);
}

static void nccl_findings(struct gr_analysis *a)
{
  size_t pairs = 0, no_p2p = 0, incapable = 0;
  enum gr_level worst = GR_LVL_X;
  for (size_t i = 0; i < a->ngpus; i++)
    for (size_t j = i + 1; j < a->ngpus; j++) {
      const struct gr_path *p = &a->gpu_gpu[i * a->ngpus + j];
      pairs++;
      incapable += !p->p2p_capable;
      /* advice only where P2P could run: a raised level cannot help a pair
       * that has no P2P at any level */
      if (p->p2p_capable && !p->nccl_p2p) {
        no_p2p++;
        if (p->level > worst)
          worst = p->level;
      }
    }
  if (incapable)
    no_p2p_findings(a, incapable, pairs);
  if (!no_p2p)
    return;
  char dflt[160], why[160];
  add_finding(a, GR_SEV_INFO, "nccl.p2p-level", -1,
              "With %s NCCL uses PCIe P2P only up to %s on this machine (%s), so %zu of the %zu GPU pair%s that can do P2P (paths up to %s) go%s through host memory; NCCL_P2P_LEVEL=%s allows P2P there, which helps only if the CPU forwards P2P traffic well (measure it with gpurig bench).",
              gr_nccl_defaults_text(a, dflt, sizeof(dflt)), gr_nccl_level_str(a->nccl_p2p_level),
              gr_nccl_why(a, a->ngpus, why, sizeof(why)), no_p2p, pairs - incapable, pairs - incapable == 1 ? "" : "s",
              gr_level_name(worst), no_p2p == 1 ? "es" : "",
              gr_nccl_level_str(nccl_of(worst)));
}

static void nic_findings(struct gr_analysis *a)
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

static void data_findings(struct gr_analysis *a)
{
  size_t nvswitches = 0;
  for (size_t i = 0; i < a->t->npci; i++)
    nvswitches += a->t->pci[i].kind == GR_KIND_NVSWITCH;
  if (a->t->nvlink_ignored)
    add_finding(a, GR_SEV_INFO, "topo.nvlink-ignored", -1,
                "NVLink is ignored as asked (--pcie-only): the levels show the PCIe paths under it.");
  else if (a->t->nfabrics && a->t->fabrics[0].from == GR_FABRIC_INFERRED)
    add_finding(a, GR_SEV_INFO, "topo.nvlink-inferred", -1,
                "NVLink inferred, not recorded: %s, so gpurig assumes the NVSwitch fabric these GPUs are sold on (NV%d per pair from the catalog). Run gpurig on the machine itself (it reads NVLink from the driver) to confirm.",
                a->t->fabrics[0].why, a->t->fabrics[0].nmembers ? a->t->fabrics[0].members[0].links : 0);
  else if (nvswitches && !a->t->nnvlinks && !a->t->nfabrics && a->ngpus > 1) {
    a->nvlink_unrecorded = true;
    add_finding(a, GR_SEV_INFO, "topo.nvlink-unknown", -1,
                "%zu NVSwitch%s present but this input has no NVLink matrix (hwloc records it only through NVML) and the GPUs' NVLink counts are not in the catalog, so the GPU levels above are PCIe only; the GPUs are most likely joined by NVLink.",
                nvswitches, nvswitches == 1 ? " is" : "es are");
  }
  if (!a->t->link_details && a->ngpus > 0) {
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

/* ---- entry points ---- */

void gr_analyze(const struct gr_topo *t, struct gr_analysis *a)
{
  gr_analyze_with(t, NULL, a);
}

/* ---- hives and bottlenecks ---- */

/* Hives: GPUs that talk P2P without crossing the CPU; a GPU that cannot do
 * P2P is a hive of its own, whatever switch it shares. Each hive's kind is
 * the worst of the pairs that join it (NVLink, one switch, several). */
static void find_hives(struct gr_analysis *a)
{
  size_t n = a->ngpus;
  int *uf = xmalloc((n + 1) * sizeof(int));
  for (size_t i = 0; i < n; i++)
    uf[i] = (int)i;
  for (size_t i = 0; i < n; i++)
    for (size_t j = i + 1; j < n; j++)
      if (a->gpu_gpu[i * n + j].level <= GR_LVL_PXB && a->gpu_gpu[i * n + j].p2p_capable)
        uf_union(uf, (int)i, (int)j);
  a->hive = xcalloc(n + 1, sizeof(int));
  int *hive_of_root = xmalloc((n + 1) * sizeof(int));
  for (size_t i = 0; i < n; i++)
    hive_of_root[i] = -1;
  for (size_t i = 0; i < n; i++) {
    int r = uf_find(uf, (int)i);
    if (hive_of_root[r] < 0)
      hive_of_root[r] = (int)a->nhives++;
    a->hive[i] = hive_of_root[r];
  }
  free(hive_of_root);
  free(uf);
  a->hives = xcalloc(a->nhives + 1, sizeof(*a->hives));
  enum gr_level *joined = xcalloc(a->nhives + 1, sizeof(*joined)); /* its worst joining pair */
  for (size_t i = 0; i < n; i++) {
    struct gr_hive *h = &a->hives[a->hive[i]];
    h->ngpus++;
    for (size_t j = 0; j < n; j++) {
      const struct gr_path *p = &a->gpu_gpu[i * n + j];
      if (a->hive[j] != a->hive[i])
        continue;
      if (p->level > h->worst)
        h->worst = p->level;
      if (p->level <= GR_LVL_PXB && p->p2p_capable && p->level > joined[a->hive[i]])
        joined[a->hive[i]] = p->level;
    }
  }
  for (size_t h = 0; h < a->nhives; h++)
    a->hives[h].kind = a->hives[h].ngpus < 2 ? GR_HIVE_ALONE : joined[h] == GR_LVL_NV ? GR_HIVE_NVLINK
                     : joined[h] == GR_LVL_PIX ? GR_HIVE_SWITCH : GR_HIVE_SWITCHES;
  free(joined);
}

static void hold_pair(struct gr_analysis *a, int *entry, int node, size_t x, size_t y)
{
  if (entry[node] < 0) {
    a->bottlenecks = xrealloc(a->bottlenecks, (a->nbottlenecks + 1) * sizeof(*a->bottlenecks));
    a->bottlenecks[a->nbottlenecks] =
        (struct gr_bottleneck){.node = node, .gbps = a->link[node].gbps, .nccl_gbps = a->link[node].nccl_gbps};
    entry[node] = (int)a->nbottlenecks++;
  }
  struct gr_bottleneck *b = &a->bottlenecks[entry[node]];
  b->pairs = xrealloc(b->pairs, (b->npairs + 1) * 2 * sizeof(int));
  b->pairs[b->npairs * 2] = (int)x;
  b->pairs[b->npairs * 2 + 1] = (int)y;
  b->npairs++;
}

/* Each link on pair x, y's path (both ways up to where it turns) that runs
 * at the pair's rate holds it. */
static void hold_on_path(struct gr_analysis *a, int *entry, size_t x, size_t y, const struct gr_path *p)
{
  const struct gr_topo *t = a->t;
  for (int end = 0; end < 2; end++)
    for (int k = t->gpus[end ? y : x], steps = 0; k >= 0 && k != p->top && steps <= (int)t->npci; steps++) {
      if (a->link[k].present && fabs(a->link[k].gbps - p->bw_gbps) < 1e-9)
        hold_pair(a, entry, k, x, y);
      k = t->pci[k].parent;
    }
}

static int cmp_bottleneck(const void *x, const void *y)
{
  const struct gr_bottleneck *a = x, *b = y;
  return (a->node > b->node) - (a->node < b->node);
}

/* The links (and the inter-socket link) that hold GPU pairs below what the
 * best pairs reach, so every output names the same causes. */
static void find_bottlenecks(struct gr_analysis *a)
{
  size_t n = a->ngpus;
  double best_nccl = 0;
  for (size_t i = 0; i < n * n; i++) {
    a->best_pair_gbps = fmax(a->best_pair_gbps, a->gpu_gpu[i].bw_gbps);
    best_nccl = fmax(best_nccl, a->gpu_gpu[i].nccl_bw_gbps);
  }
  int *entry = xmalloc((a->t->npci + 1) * sizeof(int));
  for (size_t i = 0; i < a->t->npci; i++)
    entry[i] = -1;
  for (size_t x = 0; x < n; x++)
    for (size_t y = x + 1; y < n; y++) {
      const struct gr_path *p = &a->gpu_gpu[x * n + y];
      /* the theoretical figures leave the socket link out; NCCL's count it */
      if (p->via == GR_VIA_SOCKET && p->nccl_bw_gbps < best_nccl - 1e-9)
        a->socket_bottleneck = true;
      if (p->bw_gbps < a->best_pair_gbps - 1e-9 && p->bottleneck >= 0)
        hold_on_path(a, entry, x, y, p);
    }
  free(entry);
  if (a->nbottlenecks > 1)
    qsort(a->bottlenecks, a->nbottlenecks, sizeof(*a->bottlenecks), cmp_bottleneck);
}

const struct gr_bottleneck *gr_bottleneck_of(const struct gr_analysis *a, int idx)
{
  for (size_t i = 0; i < a->nbottlenecks; i++)
    if (a->bottlenecks[i].node == idx)
      return &a->bottlenecks[i];
  return NULL;
}

const char *gr_hive_kind_name(enum gr_hive_kind k)
{
  switch (k) {
  case GR_HIVE_ALONE: return "alone";
  case GR_HIVE_NVLINK: return "NVLink";
  case GR_HIVE_SWITCH: return "PCIe switch";
  case GR_HIVE_SWITCHES: return "PCIe switches";
  }
  return "?";
}

const char *gr_hive_kind_key(enum gr_hive_kind k)
{
  switch (k) {
  case GR_HIVE_ALONE: return "alone";
  case GR_HIVE_NVLINK: return "nvlink";
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
  a->gpu_gpu = xcalloc(n * n + 1, sizeof(*a->gpu_gpu));
  a->gpu_nic = xcalloc(n * a->nnics + 1, sizeof(*a->gpu_nic));
  for (size_t i = 0; i < n; i++) {
    for (size_t j = 0; j < n; j++)
      a->gpu_gpu[i * n + j] = path_between(a, t->gpus[i], t->gpus[j], true);
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
  free(a->gpu_gpu);
  free(a->gpu_nic);
  free(a->hive);
  free(a->hives);
  free(a->link);
  free(a->nv_links);
  free(a->nv_gbps);
  free(a->nv_inferred);
  free(a->nv_direct_gbps);
  free(a->nv_fabric_gbps);
  for (size_t i = 0; i < a->nbottlenecks; i++)
    free(a->bottlenecks[i].pairs);
  free(a->bottlenecks);
  memset(a, 0, sizeof(*a));
}

const char *gr_level_name(enum gr_level l)
{
  switch (l) {
  case GR_LVL_X: return "X";
  case GR_LVL_NV: return "NV";
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
  if (p->level == GR_LVL_NV)
    snprintf(buf, cap, "NV%d", p->nvlinks);
  else
    snprintf(buf, cap, "%s", gr_level_name(p->level));
  return buf;
}

const char *gr_nccl_level_str(enum gr_level l)
{
  switch (l) {
  case GR_LVL_X: return "LOC";
  case GR_LVL_NV: return "NVL";
  case GR_LVL_PIX: return "PIX";
  case GR_LVL_PXB: return "PXB";
  case GR_LVL_PHB:
  case GR_LVL_NODE: return "PHB";
  case GR_LVL_SYS: return "SYS";
  }
  return "?";
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
