/* A matrix of levels made into a PCIe tree (smi_topo_internal.h), and the
 * shared text helpers of the matrix readers. */
#include "load/smi_topo_internal.h"

#include <stdlib.h>
#include <string.h>

void mx_alloc(struct mx *m, size_t n)
{
  m->n = n;
  m->dev = xcalloc(n + 1, sizeof(*m->dev));
  m->lvl = xcalloc(n * n + 1, 1);
  m->links = xcalloc(n * n + 1, sizeof(int));
  for (size_t i = 0; i < n; i++) {
    m->dev[i].numa = m->dev[i].gpu_numa = m->dev[i].p2p = -1;
    m->lvl[i * n + i] = MX_SELF;
  }
}

void mx_free(struct mx *m)
{
  for (size_t i = 0; i < m->n; i++) {
    free(m->dev[i].label);
    free(m->dev[i].rdma);
    free(m->dev[i].cpulist);
  }
  free(m->dev);
  free(m->lvl);
  free(m->links);
  memset(m, 0, sizeof(*m));
}

void mx_set(struct mx *m, size_t a, size_t b, enum mx_level l, int links)
{
  m->lvl[a * m->n + b] = m->lvl[b * m->n + a] = (unsigned char)l;
  m->links[a * m->n + b] = m->links[b * m->n + a] = links;
}

/* ---- text ---- */

static bool blank(char c)
{
  return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

const char *mx_next_line(const char *p, const char *end)
{
  const char *nl = memchr(p, '\n', (size_t)(end - p));
  return nl ? nl + 1 : end;
}

size_t mx_words(const char *p, const char *end, const char **w, size_t *wl, size_t max)
{
  size_t n = 0;
  for (;;) {
    while (p < end && blank(*p))
      p++;
    if (p >= end || *p == '\n')
      return n;
    const char *s = p;
    while (p < end && *p != '\n' && !blank(*p))
      p++;
    if (n == max)
      return max + 1;
    w[n] = s;
    wl[n++] = (size_t)(p - s);
  }
}

bool mx_uint(const char *w, size_t n, int *out)
{
  if (n == 0 || n > 9)
    return false;
  int v = 0;
  for (size_t i = 0; i < n; i++) {
    if (w[i] < '0' || w[i] > '9')
      return false;
    v = v * 10 + (w[i] - '0');
  }
  *out = v;
  return true;
}

bool mx_is(const char *w, size_t n, const char *s)
{
  return strlen(s) == n && memcmp(w, s, n) == 0;
}

/* ---- levels into groups ---- */

static size_t uf_find(size_t *up, size_t x)
{
  while (up[x] != x)
    x = up[x] = up[up[x]];
  return x;
}

/* group[k] of every device: the components of "the cell is PIX .. lim"
 * among devices that share group[k - 1]. Nested by construction, so a
 * matrix that contradicts itself still gives one tree. */
static void group_by(struct mx *m, int k, enum mx_level lim, size_t *up)
{
  for (size_t i = 0; i < m->n; i++)
    up[i] = i;
  for (size_t i = 0; i < m->n; i++)
    for (size_t j = i + 1; j < m->n; j++) {
      enum mx_level l = mx_at(m, i, j);
      /* GPUs local to the same CPUs share a NUMA node, whatever NV# hides */
      bool cpus = k == 0 && m->dev[i].cpulist && m->dev[j].cpulist && strcmp(m->dev[i].cpulist, m->dev[j].cpulist) == 0;
      if ((l >= MX_PIX && l <= lim && (k == 0 || m->dev[i].group[k - 1] == m->dev[j].group[k - 1])) || cpus)
        up[uf_find(up, i)] = uf_find(up, j);
    }
  for (size_t i = 0; i < m->n; i++)
    m->dev[i].group[k] = (int)uf_find(up, i);
}

/* NUMA nodes: a device's own NUMA Affinity; else its component's (a NIC
 * takes the node of the GPUs it is NODE or nearer to, a GPU that of the GPUs
 * with the same CPU Affinity); else, where the
 * matrix has no SYS cell, node 0 (one node); else a node of its own,
 * numbered after the stated ones. */
static void numa_groups(struct mx *m, size_t *up)
{
  bool sys = false;
  int top = -1;
  for (size_t i = 0; i < m->n * m->n; i++)
    sys |= m->lvl[i] == MX_SYS;
  group_by(m, 0, MX_NODE, up);
  for (size_t i = 0; i < m->n; i++)
    top = m->dev[i].numa > top ? m->dev[i].numa : top;
  int *comp = xcalloc(m->n + 1, sizeof(int));
  for (size_t i = 0; i < m->n; i++)
    comp[i] = -1;
  for (size_t i = 0; i < m->n; i++)
    if (m->dev[i].numa >= 0 && comp[m->dev[i].group[0]] < 0)
      comp[m->dev[i].group[0]] = m->dev[i].numa;
  for (size_t i = 0; i < m->n; i++) {
    int *c = &comp[m->dev[i].group[0]];
    if (*c < 0)
      *c = sys || top >= 0 ? ++top : 0;
  }
  for (size_t i = 0; i < m->n; i++)
    m->dev[i].group[0] = m->dev[i].numa >= 0 ? m->dev[i].numa : comp[m->dev[i].group[0]];
  free(comp);
}

/* ---- the tree ---- */

struct bld {
  struct mx *m;
  struct gr_topo *t;
  unsigned synth;
  size_t *ord; /* devices sorted by their groups */
};

static int cmp_groups(const void *x, const void *y, void *arg)
{
  const struct mx *m = arg;
  const struct mx_dev *a = &m->dev[*(const size_t *)x], *b = &m->dev[*(const size_t *)y];
  for (int k = 0; k < 4; k++)
    if (a->group[k] != b->group[k])
      return a->group[k] < b->group[k] ? -1 : 1;
  return *(const size_t *)x < *(const size_t *)y ? -1 : 1;
}

/* The package (one per NUMA node: the matrix names no sockets) of node numa. */
static int package_of(struct gr_topo *t, int numa)
{
  for (size_t i = 0; i < t->nnumas; i++)
    if (t->numas[i].os_index == numa)
      return t->numas[i].package;
  int k = (int)t->npackages;
  t->packages = xrealloc(t->packages, (t->npackages + 1) * sizeof(*t->packages));
  t->packages[t->npackages++] = (struct gr_package){.os_index = k, .rc_p2p = -1, .cpu_family = -1,
                                                    .cpu_model_number = -1};
  t->numas = xrealloc(t->numas, (t->nnumas + 1) * sizeof(*t->numas));
  t->numas[t->nnumas++] = (struct gr_numa){.os_index = numa, .package = k};
  return k;
}

static int add_node(struct bld *b, int parent, int numa, bool bridge)
{
  int i = gr_topo_add_pci(b->t);
  struct gr_pci *p = &b->t->pci[i];
  unsigned n = b->synth++;
  p->role = parent < 0 ? GR_ROLE_HOSTBRIDGE : bridge ? GR_ROLE_BRIDGE : GR_ROLE_ENDPOINT;
  p->parent = parent;
  p->numa = numa;
  p->package = package_of(b->t, numa);
  p->domain = 0xffffffffu;
  p->bus = p->sec_bus = p->sub_bus = (n >> 8) & 0xff;
  p->dev = (n >> 3) & 0x1f;
  p->func = n & 7;
  if (bridge)
    p->class_id = 0x060400;
  return i;
}

static void add_device(struct bld *b, size_t d, int parent, int *node)
{
  const struct mx_dev *v = &b->m->dev[d];
  int i = add_node(b, parent, v->group[0], false);
  struct gr_pci *p = &b->t->pci[i];
  p->order = (int)d;
  p->cpulist = v->cpulist ? xstrdup(v->cpulist) : NULL;
  p->gpu_numa = v->gpu_numa;
  p->p2p = v->p2p;
  if (v->has_bdf) {
    /* the stated bus id, under made-up bridges of domain ffffffff: no bus id
     * of the drawing can clash with it */
    p->domain = v->domain;
    p->bus = p->sec_bus = p->sub_bus = v->bus;
    p->dev = v->devno;
    p->func = v->func;
  }
  if (v->nic) {
    /* the matrices list RDMA devices alone */
    p->class_id = 0x020000;
    p->rdma = true;
    p->rdma_name = v->rdma ? xstrdup(v->rdma) : NULL;
    p->vendor = v->rdma && strncmp(v->rdma, "mlx", 3) == 0 ? 0x15b3 : 0;
  } else {
    p->class_id = 0x030200;
    p->vendor = b->m->vendor;
  }
  node[d] = i;
}

/* The devices ord[lo .. hi) of one switch tree (group[2]) under host bridge
 * hb: one device on its root port; one switch (group[3]) below the root
 * port; or several, each below a port of a switch above them, which makes
 * their pairs PXB. */
static void build_tree(struct bld *b, size_t lo, size_t hi, int hb, int *node)
{
  const struct mx_dev *first = &b->m->dev[b->ord[lo]];
  int numa = first->group[0];
  int rp = add_node(b, hb, numa, true);
  if (hi - lo == 1) {
    add_device(b, b->ord[lo], rp, node);
    return;
  }
  bool one_switch = b->m->dev[b->ord[hi - 1]].group[3] == first->group[3];
  int top = add_node(b, rp, numa, true);
  for (size_t i = lo; i < hi;) {
    size_t j = i;
    while (j < hi && b->m->dev[b->ord[j]].group[3] == b->m->dev[b->ord[i]].group[3])
      j++;
    int up = top;
    if (!one_switch)
      up = add_node(b, add_node(b, top, numa, true), numa, true);
    for (; i < j; i++)
      add_device(b, b->ord[i], add_node(b, up, numa, true), node);
  }
}

static void build_links(const struct mx *m, struct gr_topo *t, const int *node)
{
  for (size_t i = 0; i < m->n; i++)
    for (size_t j = i + 1; j < m->n; j++)
      if (mx_at(m, i, j) == MX_GPULINK && !m->dev[i].nic && !m->dev[j].nic)
        gr_topo_add_gpulink(t, node[i], node[j], -1, m->links[i * m->n + j] > 0 ? m->links[i * m->n + j] : 1, 0);
}

void mx_build(struct mx *m, const char *source_kind, struct gr_topo *t)
{
  size_t *up = xcalloc(m->n + 1, sizeof(size_t));
  int *node = xcalloc(m->n + 1, sizeof(int));
  numa_groups(m, up);
  group_by(m, 1, MX_PHB, up);
  group_by(m, 2, MX_PXB, up);
  group_by(m, 3, MX_PIX, up);
  struct bld b = {.m = m, .t = t, .ord = up};
  for (size_t i = 0; i < m->n; i++)
    up[i] = i;
  qsort_r(up, m->n, sizeof(size_t), cmp_groups, m);
  t->source_kind = xstrdup(source_kind);
  for (size_t i = 0; i < m->n;) {
    size_t j = i;
    const struct mx_dev *d = &m->dev[up[i]];
    int hb = add_node(&b, -1, d->group[0], true);
    t->pci[hb].class_id = 0;
    while (j < m->n && m->dev[up[j]].group[1] == d->group[1] && m->dev[up[j]].group[0] == d->group[0]) {
      size_t k = j;
      while (k < m->n && m->dev[up[k]].group[2] == m->dev[up[j]].group[2] &&
             m->dev[up[k]].group[1] == d->group[1] && m->dev[up[k]].group[0] == d->group[0])
        k++;
      build_tree(&b, j, k, hb, node);
      j = k;
    }
    i = j;
  }
  gr_topo_finish(t);
  build_links(m, t, node);
  free(node);
  free(up);
}
