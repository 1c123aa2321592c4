/* What the block diagram draws (diagram_internal.h): the PCI tree cut down
 * to what a vendor's diagram shows. Root ports, downstream ports and other
 * bridges fold into the edge they sit on (their count said on it); devices
 * of one kind, name and link under one parent become one box (the 4 ENA
 * adapters of a p5en switch); GPUs are always boxes of their own. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/names.h"
#include "facts/pcilink.h"
#include "print/common.h"
#include "print/diagram/diagram_internal.h"
#include "print/text.h"
#include "base/util.h"

size_t dg_cols(const char *s)
{
  size_t n = 0;
  for (; *s; s++)
    n += ((unsigned char)*s & 0xc0) != 0x80;
  return n;
}

char *dg_cut(const char *s, size_t cols)
{
  if (dg_cols(s) <= cols || cols < 2)
    return xstrdup(s);
  size_t n = 0, i = 0;
  for (; s[i]; i++) {
    if (((unsigned char)s[i] & 0xc0) != 0x80 && n++ == cols - 1)
      break;
  }
  return xasprintf("%.*s…", (int)i, s);
}

const char *dg_hive_gpus(const struct dg_model *d, int hive, char *buf, size_t cap)
{
  const struct gr_analysis *a = &d->m->analysis;
  int *v = xcalloc(a->ngpus + 1, sizeof(int));
  size_t n = 0;
  for (size_t g = 0; g < a->ngpus; g++)
    if (a->hive[g] == hive)
      v[n++] = (int)g;
  gr_index_ranges("GPU", v, n, buf, cap);
  free(v);
  return buf;
}

const char *dg_hive_kind(const struct dg_model *d, int hive)
{
  return gr_hive_name(&d->m->analysis, (size_t)hive);
}

/* ---- building ---- */

struct build {
  struct dg_model *d;
  const struct gr_topo *t;
  struct gr_names names;
  bool *shown;      /* pci node: drawn, or on the way to something drawn */
  bool *bottleneck; /* pci node: its upstream link holds GPU pairs below the best pair */
  int **children;   /* pci node: its children in PCI order */
  size_t *nchildren;
};

static bool is_drawn_kind(const struct gr_pci *p)
{
  return p->kind == GR_KIND_GPU || p->kind == GR_KIND_NIC || p->kind == GR_KIND_NVME || p->kind == GR_KIND_NVSWITCH;
}

/* Marks every drawn device and its ancestors; the parent walk stops after
 * npci steps, so a malformed parent chain cannot loop. */
static void mark_shown(struct build *b)
{
  const struct gr_topo *t = b->t;
  b->shown = xcalloc(t->npci + 1, sizeof(bool));
  b->children = xcalloc(t->npci + 1, sizeof(int *));
  b->nchildren = xcalloc(t->npci + 1, sizeof(size_t));
  size_t *cap = xcalloc(t->npci + 1, sizeof(size_t));
  for (size_t i = 0; i < t->npci; i++) {
    int p = t->pci[i].parent;
    if (p >= 0 && (size_t)p < t->npci && p != (int)i) {
      grow_array((void **)&b->children[p], sizeof(int), &cap[p], b->nchildren[p] + 1);
      b->children[p][b->nchildren[p]++] = (int)i;
    }
    if (!is_drawn_kind(&t->pci[i]))
      continue;
    for (int k = (int)i, steps = 0; k >= 0 && (size_t)k < t->npci && steps <= (int)t->npci; steps++) {
      b->shown[k] = true;
      k = t->pci[k].parent;
    }
  }
  free(cap);
}

/* The analysis's bottlenecks (each link that holds GPU pairs below the best
 * pair, and the inter-socket link), and the link that bounds the predicted
 * all-reduce where the prediction singles it out. */
static void mark_bottlenecks(struct build *b)
{
  const struct gr_analysis *a = &b->d->m->analysis;
  b->bottleneck = xcalloc(b->t->npci + 1, sizeof(bool));
  for (size_t i = 0; i < a->nbottlenecks; i++)
    b->bottleneck[a->bottlenecks[i].node] = true;
  b->d->socket_bad = a->socket_bottleneck;
  const struct gr_ring *r = &b->d->m->prediction.nccl_default;
  if (!b->d->m->predicted)
    return;
  b->d->socket_bad |= r->bound.kind == GR_BOUND_SOCKET;
  if (r->bound.kind == GR_BOUND_LINK && r->bound.singled_out)
    b->bottleneck[r->bound.node] = true;
}

static int add_node(struct dg_model *d, enum dg_kind kind, int parent)
{
  grow_array((void **)&d->nodes, sizeof(*d->nodes), &d->cap, d->n + 1);
  struct dg_node *n = &d->nodes[d->n];
  memset(n, 0, sizeof(*n));
  n->kind = kind;
  n->parent = parent;
  n->depth = parent >= 0 ? d->nodes[parent].depth + 1 : 0;
  n->gpu = n->hive = -1;
  return (int)d->n++;
}

static void add_line(struct dg_node *n, char *s)
{
  if (n->nlines < DG_MAX_LINES)
    n->line[n->nlines++] = s;
  else
    free(s);
}

static void add_member(struct dg_node *n, int pci)
{
  n->members = xrealloc(n->members, (n->nmembers + 1) * sizeof(int));
  n->members[n->nmembers++] = pci;
}

static char *gbps_text(double v)
{
  return xasprintf(fabs(v - round(v)) < 0.05 ? "%.0f" : "%.1f", v);
}

/* The chain of links between a drawn node and the one above it: the
 * narrowest known link on it, how many plain bridges it folds, and whether
 * any link on it is a bottleneck or runs short. */
struct chain {
  int narrowest;    /* pci index, -1 none with a link */
  double gbps;
  int bridges;
  bool bad;
};

static void chain_add(struct build *b, struct chain *c, int idx)
{
  const struct gr_pci *p = &b->t->pci[idx];
  c->bridges += p->role == GR_ROLE_BRIDGE;
  c->bad |= b->bottleneck[idx];
  const struct gr_link_facts *f = &b->d->m->analysis.link[idx];
  if (!f->present)
    return;
  c->bad |= gr_link_width_sev(f) >= GR_SEV_WARN || gr_link_gen_sev(f, false) >= GR_SEV_WARN;
  double bw = f->gbps;
  if (c->narrowest < 0 || (bw > 0 && (c->gbps <= 0 || bw < c->gbps))) {
    c->narrowest = idx;
    c->gbps = bw;
  }
}

/* "Gen4 x16 · 31.5 GB/s", "31.5 GB/s" (a rate without gen and width, as
 * hwloc XML records it), "on the root bus" (no link of its own), "link rate
 * unknown"; the second line says where it
 * runs short and which bridges it passes. */
static void edge_label(const struct build *b, const struct chain *c, struct dg_node *n, int idx)
{
  char first[96] = "link rate unknown", second[96] = "";
  int up = b->t->pci[idx].parent;
  /* a device straight on the root bus (a cloud VM's) has no PCIe link of its own */
  if (c->narrowest < 0 && up >= 0 && b->t->pci[up].role == GR_ROLE_HOSTBRIDGE)
    snprintf(first, sizeof(first), "on the root bus");
  if (c->narrowest >= 0) {
    const struct gr_link_facts *f = &b->d->m->analysis.link[c->narrowest];
    if (f->gen > 0 && f->width > 0)
      gr_link_label(f, GR_LABEL_RATE | GR_LABEL_DOT, first, sizeof(first));
    else if (f->width > 0 && c->gbps <= 0)
      snprintf(first, sizeof(first), "x%d · rate unknown", f->width);
    else if (c->gbps > 0) {
      char *bw = gbps_text(c->gbps);
      snprintf(first, sizeof(first), "%s GB/s", bw);
      free(bw);
    }
    if (f->width_short && f->can_width > 0)
      snprintf(second, sizeof(second), "runs x%d of x%d", f->cur_width, f->can_width);
    else if (f->gen_short && !f->gen_idle && f->can_gen > 0)
      snprintf(second, sizeof(second), "runs Gen%d of Gen%d", f->cur_gen, f->can_gen);
  }
  if (c->bridges > 0) {
    size_t off = strlen(second);
    snprintf(second + off, sizeof(second) - off, "%svia %d bridge%s", off ? " · " : "", c->bridges,
             c->bridges == 1 ? "" : "s");
  }
  n->edge[n->nedge++] = xstrdup(first);
  if (second[0])
    n->edge[n->nedge++] = xstrdup(second);
  n->edge_bad = c->bad;
}

/* A device's name without its vendor's ornaments: pci.ids' marketing name
 * in brackets where it has one ("GA102 [GeForce RTX 3090]", "MT27700 Family
 * [ConnectX-4]"), else up to the first comma or parenthesis; "NVIDIA "
 * dropped, at most 24 columns. */
static char *short_name(const char *name)
{
  const char *open = strchr(name, '['), *close = open ? strchr(open, ']') : NULL;
  if (open && close && close > open + 1) {
    char *inner = xstrndup(open + 1, (size_t)(close - open - 1));
    char *cut = short_name(inner);
    free(inner);
    return cut;
  }
  if (str_starts_with(name, "NVIDIA "))
    name += 7;
  size_t n = strcspn(name, ",(");
  while (n > 0 && name[n - 1] == ' ')
    n--;
  char *part = xstrndup(name, n ? n : strlen(name));
  char *cut = dg_cut(part, 24);
  free(part);
  return cut;
}

static enum dg_kind kind_of(const struct gr_pci *p)
{
  switch (p->kind) {
  case GR_KIND_GPU: return DG_GPU;
  case GR_KIND_NIC: return DG_NIC;
  case GR_KIND_NVME: return DG_NVME;
  case GR_KIND_NVSWITCH: return DG_NVSWITCH;
  default: return DG_SWITCH;
  }
}

/* A like sibling box this endpoint joins: same kind, name and link label. */
static int like_sibling(struct build *b, int parent, const struct dg_node *probe, int idx)
{
  const struct dg_model *d = b->d;
  const char *name = gr_pci_display_name(b->t, idx, &b->names);
  for (size_t i = (size_t)parent + 1; i < d->n; i++) {
    const struct dg_node *s = &d->nodes[i];
    if (s->parent != parent || s->kind != probe->kind || s->kind == DG_GPU || s->kind == DG_SWITCH ||
        s->nedge != probe->nedge || s->edge_bad != probe->edge_bad)
      continue;
    bool same = strcmp(gr_pci_display_name(b->t, s->members[0], &b->names), name) == 0;
    for (size_t k = 0; k < s->nedge && same; k++)
      same = strcmp(s->edge[k], probe->edge[k]) == 0;
    if (same)
      return (int)i;
  }
  return -1;
}

static void free_node(struct dg_node *n)
{
  for (size_t k = 0; k < n->nlines; k++)
    free(n->line[k]);
  for (size_t k = 0; k < n->nedge; k++)
    free(n->edge[k]);
  free(n->members);
}

static void add_children(struct build *b, int pci, int parent, struct chain c);

/* A switch's box: its name, ports and uplink, and its lane budget when
 * the prediction has one. */
static void switch_lines(struct build *b, struct dg_node *n, int idx)
{
  const struct gr_topo *t = b->t;
  const struct gr_pci *p = &t->pci[idx];
  const char *name = gr_pci_display_name(t, idx, &b->names);
  bool generic = strcmp(name, "PCIe switch") == 0;
  if (generic) {
    const char *vn = gr_pci_vendor_name(p, &b->names);
    add_line(n, vn ? xasprintf("%.*s switch", (int)strcspn(vn, " ,."), vn) : xstrdup("PCIe switch"));
    if (p->vendor || p->device) /* the chip known by its ids alone: they tell it apart */
      add_line(n, xasprintf("%04x:%04x", p->vendor, p->device));
  } else {
    char *s = short_name(name);
    add_line(n, xasprintf("%s", s));
    free(s);
  }
  size_t ports = 0;
  for (size_t k = 0; k < b->nchildren[idx]; k++)
    ports += t->pci[b->children[idx][k]].role == GR_ROLE_SWITCH_DOWN;
  int width = b->d->m->analysis.link[idx].width;
  n->up_width = width;
  if (width > 0)
    add_line(n, xasprintf("%zu port%s · up x%d", ports, ports == 1 ? "" : "s", width));
  else
    add_line(n, xasprintf("%zu downstream port%s", ports, ports == 1 ? "" : "s"));
  const struct gr_prediction *pr = &b->d->m->prediction;
  for (size_t k = 0; b->d->m->predicted && k < pr->nswitches; k++) {
    const struct gr_switch_budget *sb = &pr->switches[k];
    if (sb->node != idx || sb->down_lanes <= 0)
      continue;
    n->oversub = sb->oversubscription;
    char lanes[32] = "";
    if (sb->lanes > 0)
      snprintf(lanes, sizeof(lanes), "%d lanes · ", sb->lanes);
    if (sb->oversubscription > 1.0 + 1e-9)
      add_line(n, xasprintf("%s%d down · %.1f:1", lanes, sb->down_lanes, sb->oversubscription));
    else
      add_line(n, xasprintf("%s%d down", lanes, sb->down_lanes));
  }
}

static void gpu_lines(struct build *b, struct dg_node *n, int idx)
{
  const struct gr_pci *p = &b->t->pci[idx];
  char bus[32];
  n->gpu = p->gpu_index;
  if (p->gpu_index >= 0 && (size_t)p->gpu_index < b->d->m->analysis.ngpus)
    n->hive = b->d->m->analysis.hive[p->gpu_index];
  add_line(n, xasprintf("GPU%d", p->gpu_index));
  add_line(n, short_name(gr_pci_display_name(b->t, idx, &b->names)));
  add_line(n, xstrdup(gr_pci_busid(p, bus, sizeof(bus))));
  /* NVLink to a CPU (POWER9, Grace): a line in the box, since a line up to
   * the socket would cross the tree */
  for (size_t k = 0; k < b->t->ngpulinks; k++) {
    const struct gr_gpulink *l = &b->t->gpulinks[k];
    if (l->a != idx || l->b >= 0 || l->peer_package < 0)
      continue;
    char *bw = gbps_text(l->bw_gbps);
    add_line(n, l->bw_gbps > 0 ? xasprintf("NV%d to CPU%d · %s GB/s", l->count, l->peer_package, bw)
                               : xasprintf("NV%d to CPU%d", l->count, l->peer_package));
    free(bw);
  }
}

/* The text of a box of endpoints other than GPUs, once its members are in. */
static void endpoint_lines(struct build *b, struct dg_node *n)
{
  const struct gr_topo *t = b->t;
  const struct gr_pci *p = &t->pci[n->members[0]];
  char title[160] = "", count[32] = "";
  if (n->nmembers > 1)
    snprintf(count, sizeof(count), " ×%zu", n->nmembers);
  if (n->kind == DG_NIC) {
    int *v = xcalloc(n->nmembers, sizeof(int));
    size_t nv = 0;
    for (size_t k = 0; k < n->nmembers; k++)
      if (t->pci[n->members[k]].nic_index >= 0)
        v[nv++] = t->pci[n->members[k]].nic_index;
    if (nv == n->nmembers)
      gr_index_ranges("NIC", v, nv, title, sizeof(title));
    else
      snprintf(title, sizeof(title), "NIC");
    free(v);
  } else {
    snprintf(title, sizeof(title), "%s", n->kind == DG_NVME ? "NVMe" : "NVSwitch");
  }
  for (size_t k = 0; k < n->nlines; k++)
    free(n->line[k]);
  n->nlines = 0;
  add_line(n, xasprintf("%s%s", title, count));
  if (n->kind != DG_NVSWITCH)
    add_line(n, short_name(gr_pci_display_name(t, n->members[0], &b->names)));
  const char *dev = p->rdma_name ? p->rdma_name : p->osdevs;
  if (n->nmembers == 1 && dev && dev[0])
    add_line(n, dg_cut(dev, 24));
}

/* Adds pci node idx (a switch or an endpoint) under parent with the links
 * gathered on its way, joining a like sibling where there is one. */
static void add_drawn(struct build *b, int idx, int parent, struct chain c)
{
  const struct gr_pci *p = &b->t->pci[idx];
  int ni = add_node(b->d, kind_of(p), parent);
  struct dg_node *n = &b->d->nodes[ni];
  chain_add(b, &c, idx);
  edge_label(b, &c, n, idx);
  add_member(n, idx);
  if (n->kind == DG_SWITCH) {
    switch_lines(b, n, idx);
    add_children(b, idx, ni, (struct chain){.narrowest = -1});
    return;
  }
  if (n->kind == DG_GPU) {
    gpu_lines(b, n, idx);
    return;
  }
  int like = like_sibling(b, parent, n, idx);
  if (like >= 0 && like != ni) {
    free_node(n);
    b->d->n--;
    n = &b->d->nodes[like];
    add_member(n, idx);
  }
  endpoint_lines(b, n);
}

static void add_children(struct build *b, int pci, int parent, struct chain c)
{
  const struct gr_topo *t = b->t;
  for (size_t k = 0; k < b->nchildren[pci]; k++) {
    int ch = b->children[pci][k];
    const struct gr_pci *p = &t->pci[ch];
    if (!b->shown[ch])
      continue;
    if (is_drawn_kind(p) || p->role == GR_ROLE_SWITCH_UP) {
      add_drawn(b, ch, parent, c);
      continue;
    }
    struct chain via = c;
    chain_add(b, &via, ch);
    add_children(b, ch, parent, via);
  }
}

/* Other devices below a root complex, however deep: what its box counts. */
static size_t quiet_below(const struct build *b, int pci)
{
  size_t n = 0;
  for (size_t k = 0; k < b->nchildren[pci]; k++) {
    int ch = b->children[pci][k];
    if (!b->shown[ch])
      n += b->t->pci[ch].role == GR_ROLE_ENDPOINT;
    n += quiet_below(b, ch);
  }
  return n;
}

static void add_root_complex(struct build *b, int hb, int cpu)
{
  const struct gr_pci *p = &b->t->pci[hb];
  int ni = add_node(b->d, DG_RC, cpu);
  add_member(&b->d->nodes[ni], hb);
  if (p->domain <= 0xffff) /* an NCCL topology file may leave the domain out */
    add_line(&b->d->nodes[ni], xasprintf("RC %04x:%02x", p->domain, p->bus));
  else
    add_line(&b->d->nodes[ni], xasprintf("RC ?:%02x", p->bus));
  if (p->numa >= 0)
    add_line(&b->d->nodes[ni], xasprintf("NUMA %d", p->numa));
  add_children(b, hb, ni, (struct chain){.narrowest = -1});
  size_t quiet = b->d->nodes[ni].quiet = quiet_below(b, hb);
  if (quiet)
    add_line(&b->d->nodes[ni], xasprintf("+%zu other device%s", quiet, quiet == 1 ? "" : "s"));
}

static bool package_known(const struct gr_topo *t, int os_index)
{
  for (size_t s = 0; s < t->npackages; s++)
    if (t->packages[s].os_index == os_index)
      return true;
  return false;
}

/* A CPU's model as a diagram names it: gr_cpu_short_name, at most 30 columns. */
static char *cpu_name(const char *model)
{
  char *name = gr_cpu_short_name(model);
  char *cut = dg_cut(name, 30);
  free(name);
  return cut;
}

static void cpu_lines(struct build *b, struct dg_node *n, const struct gr_package *pk)
{
  const struct gr_topo *t = b->t;
  if (!pk) {
    n->unplaced = true;
    add_line(n, xstrdup("No socket"));
    add_line(n, xstrdup("locality unknown"));
    return;
  }
  add_line(n, xasprintf("CPU%d", pk->os_index));
  if (pk->cpu_model)
    add_line(n, cpu_name(pk->cpu_model));
  else if (pk->cpu_vendor)
    add_line(n, xasprintf("%.20s, model not recorded", pk->cpu_vendor));
  uint64_t mem = pk->mem_bytes;
  for (size_t k = 0; !mem && k < t->nnumas; k++)
    mem += t->numas[k].package == pk->os_index ? t->numas[k].mem_bytes : 0;
  char memtext[48] = "";
  if (mem)
    snprintf(memtext, sizeof(memtext), "%.0f GiB", (double)mem / (1024.0 * 1024.0 * 1024.0));
  if (pk->mem_channels > 0 && pk->mem_mts > 0)
    add_line(n, xasprintf("%s%s%d ch · %d MT/s", memtext, mem ? " · " : "", pk->mem_channels, pk->mem_mts));
  else if (mem)
    add_line(n, xstrdup(memtext));
}

/* One socket (pk NULL: host bridges outside any known socket) with its
 * root complexes; a socket without any is drawn, one without a CPU is not. */
static void add_socket(struct build *b, const struct gr_package *pk)
{
  const struct gr_topo *t = b->t;
  bool any = false;
  for (size_t i = 0; i < t->npci && !pk; i++)
    any |= t->pci[i].role == GR_ROLE_HOSTBRIDGE && b->shown[i] && !package_known(t, t->pci[i].package);
  if (!pk && !any)
    return;
  int cpu = add_node(b->d, DG_CPU, -1);
  cpu_lines(b, &b->d->nodes[cpu], pk);
  size_t quiet = 0;
  for (size_t i = 0; i < t->npci; i++) {
    const struct gr_pci *p = &t->pci[i];
    if (p->role != GR_ROLE_HOSTBRIDGE || (pk ? p->package != pk->os_index : package_known(t, p->package)))
      continue;
    if (b->shown[i])
      add_root_complex(b, (int)i, cpu);
    else
      quiet++;
  }
  b->d->nodes[cpu].quiet = quiet;
  if (quiet)
    add_line(&b->d->nodes[cpu], xasprintf("+%zu RC%s without devices shown", quiet, quiet == 1 ? "" : "s"));
}

static int node_of_pci(const struct dg_model *d, int pci)
{
  for (size_t i = 0; i < d->n; i++)
    if (d->nodes[i].kind == DG_GPU && d->nodes[i].members[0] == pci)
      return (int)i;
  return -1;
}

static void add_nvlinks(struct build *b)
{
  const struct gr_topo *t = b->t;
  struct dg_model *d = b->d;
  d->links = xcalloc(t->ngpulinks + 1, sizeof(*d->links));
  for (size_t i = 0; i < t->ngpulinks; i++) {
    const struct gr_gpulink *l = &t->gpulinks[i];
    int a = l->a >= 0 && (size_t)l->a < t->npci ? node_of_pci(d, l->a) : -1;
    int c = l->b >= 0 && (size_t)l->b < t->npci ? node_of_pci(d, l->b) : -1;
    bool dup = a < 0 || c < 0 || a == c;
    for (size_t k = 0; k < d->nlinks && !dup; k++)
      dup = (d->links[k].a == a && d->links[k].b == c) || (d->links[k].a == c && d->links[k].b == a);
    if (dup)
      continue;
    char *bw = gbps_text(l->bw_gbps);
    const struct gr_analysis *an = &d->m->analysis;
    int ga = d->nodes[a].gpu, gc = d->nodes[c].gpu;
    bool xgmi = ga >= 0 && gc >= 0 && gr_gpu_path(an, (size_t)ga, (size_t)gc).xgmi;
    /* rocm-smi names an xGMI pair XGMI, with no bonded count; NVLink's is NV<links> */
    char count[16] = "";
    if (l->count > 0 && (!xgmi || l->count > 1))
      snprintf(count, sizeof(count), xgmi ? " x%d" : "%d", l->count);
    const char *kind = xgmi ? "xGMI" : "NV";
    d->links[d->nlinks++] = (struct dg_nvlink){
        .a = a < c ? a : c, .b = a < c ? c : a, .xgmi = xgmi,
        .label = l->bw_gbps > 0 ? xasprintf("%s%s · %s GB/s", kind, count, bw) : xasprintf("%s%s", kind, count)};
    free(bw);
  }
}

/* A fabric's box: its switches and generation, then its members grouped by
 * their links ("GPU0-15: 6 links · 150 GB/s"), and where an inferred one
 * comes from. */
static void add_fabric(struct build *b, const struct gr_fabric *f)
{
  const struct gr_topo *t = b->t;
  struct dg_model *d = b->d;
  struct dg_fabric *df = &d->fabrics[d->nfabrics];
  df->gpus = xcalloc(f->nmembers + 1, sizeof(int));
  char head[96], groups[256] = "", text[256] = "", list[160];
  snprintf(head, sizeof(head), "NVSwitch fabric");
  if (f->nswitches > 0)
    snprintf(head + strlen(head), sizeof(head) - strlen(head), " · %d NVSwitch%s", f->nswitches,
             f->nswitches == 1 ? "" : "es");
  if (f->gpulink_gen > 0)
    snprintf(head + strlen(head), sizeof(head) - strlen(head), " · NVLink%d", f->gpulink_gen);
  bool *done = xcalloc(f->nmembers + 1, sizeof(bool));
  int *v = xcalloc(f->nmembers + 1, sizeof(int));
  for (size_t m = 0; m < f->nmembers; m++) {
    int node = node_of_pci(d, f->members[m].gpu);
    if (node >= 0)
      df->gpus[df->ngpus++] = node;
    if (done[m])
      continue;
    size_t nv = 0;
    for (size_t k = m; k < f->nmembers; k++) {
      const struct gr_fabric_member *x = &f->members[k];
      if (done[k] || x->links != f->members[m].links || fabs(x->gbps - f->members[m].gbps) > 1e-9)
        continue;
      done[k] = true;
      if (x->gpu >= 0 && (size_t)x->gpu < t->npci && t->pci[x->gpu].gpu_index >= 0)
        v[nv++] = t->pci[x->gpu].gpu_index;
    }
    char *bw = gbps_text(f->members[m].gbps);
    size_t toff = strlen(text);
    snprintf(text + toff, sizeof(text) - toff, "%s%s, %d NVLink%.0d%s, %s GB/s", toff ? "; " : "",
             gr_index_ranges("GPU", v, nv, list, sizeof(list)), f->members[m].links, f->gpulink_gen,
             nv > 1 ? " each" : "", bw);
    size_t off = strlen(groups);
    snprintf(groups + off, sizeof(groups) - off, "%s%s: %d link%s · %s GB/s", off ? "; " : "",
             gr_index_ranges("GPU", v, nv, list, sizeof(list)), f->members[m].links, f->members[m].links == 1 ? "" : "s",
             bw);
    free(bw);
  }
  df->text = xasprintf("NVSwitch fabric: %s%s", text, f->from == GR_FABRIC_INFERRED ? " (inferred)" : "");
  df->line[df->nlines++] = xstrdup(head);
  df->line[df->nlines++] = dg_cut(groups, 90);
  if (f->from == GR_FABRIC_INFERRED)
    df->line[df->nlines++] = f->why ? xasprintf("inferred: %s", f->why) : xstrdup("inferred");
  if (df->nlines == 3) {
    char *cut = dg_cut(df->line[2], 90);
    free(df->line[2]);
    df->line[2] = cut;
  }
  free(done);
  free(v);
  d->nfabrics++;
}

static void add_notes(struct build *b)
{
  struct dg_model *d = b->d;
  const struct gr_topo *t = b->t;
  const struct gr_machine *m = d->m;
  const char *name = t->rig && t->rig->name ? t->rig->name : t->product ? t->product : t->hostname;
  d->title = dg_cut(name ? name : gr_topo_input_name(t), 100);
  if (t->npackages > 1) {
    const char *link = m->analysis.socket_link ? m->analysis.socket_link : "inter-socket link";
    char *bw = gbps_text(m->analysis.socket_nccl_gbps);
    d->socket_label = m->analysis.socket_nccl_gbps > 0 ? xasprintf("%s · %s GB/s (NCCL)", link, bw) : xstrdup(link);
    free(bw);
  }
  if (m->predicted && t->ngpus > 1 && m->prediction.nccl_default.busbw_gbps > 0) {
    const struct gr_ring *r = &m->prediction.nccl_default;
    char bound[256];
    const char *lib = gr_topo_collective(t);
    d->ring_note = r->bound.kind != GR_BOUND_NONE
                       ? xasprintf("All-reduce over all GPUs (%s defaults): %.1f GB/s bus bandwidth, bound by %s", lib,
                                   r->busbw_gbps, gr_ring_bound_text(&m->prediction, r, bound, sizeof(bound)))
                       : xasprintf("All-reduce over all GPUs (%s defaults): %.1f GB/s bus bandwidth", lib, r->busbw_gbps);
  }
}

void dg_model_build(const struct gr_machine *m, struct dg_model *d)
{
  memset(d, 0, sizeof(*d));
  d->m = m;
  struct build b = {.d = d, .t = &m->topo};
  mark_shown(&b);
  mark_bottlenecks(&b);
  for (size_t s = 0; s < b.t->npackages; s++)
    add_socket(&b, &b.t->packages[s]);
  add_socket(&b, NULL);
  add_nvlinks(&b);
  d->fabrics = xcalloc(b.t->nfabrics + 1, sizeof(*d->fabrics));
  for (size_t f = 0; f < b.t->nfabrics; f++)
    if (b.t->fabrics[f].nmembers)
      add_fabric(&b, &b.t->fabrics[f]);
  add_notes(&b);
  for (size_t i = 0; i < b.t->npci; i++)
    free(b.children[i]);
  free(b.children);
  free(b.nchildren);
  free(b.shown);
  free(b.bottleneck);
  gr_names_free(&b.names);
}

void dg_model_free(struct dg_model *d)
{
  for (size_t i = 0; i < d->n; i++)
    free_node(&d->nodes[i]);
  free(d->nodes);
  for (size_t i = 0; i < d->nlinks; i++)
    free(d->links[i].label);
  free(d->links);
  for (size_t i = 0; i < d->nfabrics; i++) {
    for (size_t k = 0; k < d->fabrics[i].nlines; k++)
      free(d->fabrics[i].line[k]);
    free(d->fabrics[i].gpus);
    free(d->fabrics[i].text);
  }
  free(d->fabrics);
  free(d->title);
  free(d->socket_label);
  free(d->ring_note);
  memset(d, 0, sizeof(*d));
}
