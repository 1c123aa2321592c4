/* The rig's topology: the parsed elements -> PCI nodes, buses, sockets and
 * NUMA nodes; the nvlink and nvswitch statements -> NVLinks and the fabric
 * (load/rig_internal.h). */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "load/rig_internal.h"

/* ---- building the topology ---- */

/* Where a node goes: its parent node, bus, device number, socket and NUMA node. */
struct place {
  int parent;
  unsigned bus, dev;
  int package, numa;
};

static void apply_link(struct gr_pci *n, int gen, int width, int port_gen, int port_width)
{
  n->link.max_gen = gen;
  n->link.max_width = width;
  n->link.port_max_gen = port_gen;
  n->link.port_max_width = port_width;
  n->link.cur_gen = gen < port_gen ? gen : port_gen;
  n->link.cur_width = width < port_width ? width : port_width;
}

/* A bus number, or -1 after reporting that the domain has none left.
 * check_room counted every element's buses while parsing; this guards the
 * range should the two ever disagree. */
static int new_bus(struct parser *p)
{
  if (p->next_bus > RIG_MAX_BUSES)
    return perr(p, 1, "too many devices for one PCI domain (at most %d)", RIG_MAX_BUSES);
  return (int)p->next_bus++;
}

static int add_node(struct parser *p, enum gr_role role, const struct place *at, unsigned func, unsigned class_id,
                    unsigned vendor, unsigned device)
{
  int i = gr_topo_add_pci(p->t);
  struct gr_pci *n = &p->t->pci[i];
  n->role = role;
  n->parent = at->parent;
  n->bus = at->bus;
  n->dev = at->dev;
  n->func = func;
  n->sec_bus = n->sub_bus = at->bus;
  n->class_id = class_id;
  n->vendor = vendor;
  n->device = device;
  n->numa = at->numa;
  n->package = at->package;
  return i;
}

/* The CPU list of element e's root complex (`cpus LIST`), NULL unsaid. */
static const char *rc_cpulist(const struct parser *p, int e)
{
  while (p->elems[e].kind != K_RC)
    e = p->elems[e].parent_idx;
  return p->elems[e].cpulist;
}

/* The socket and NUMA node of element e, a root complex or below one: its
 * root complex's node (-1 when the rig says unknown). */
static void locality(const struct parser *p, int e, int *package, int *numa)
{
  while (p->elems[e].kind != K_RC)
    e = p->elems[e].parent_idx;
  const struct elem *rc = &p->elems[e], *cpu = &p->elems[rc->parent_idx];
  *package = cpu->cpu_index;
  *numa = rc->node < 0 ? -1 : cpu->first_node + rc->node;
}

/* The next device number on the bus of `host` (a root complex, or the bus
 * below a direct switch), or -1 after reporting that the bus is full. */
static int next_dev(struct parser *p, struct elem *host, const struct elem *e)
{
  if (host->next_dev >= RIG_MAX_DEVS) {
    p->line = e->line;
    return perr(p, e->col, "no device number left on the bus of '%s' (a PCI bus has %d: devices with direct, or "
                "below a direct switch, share it)", host->name, RIG_MAX_DEVS);
  }
  return (int)host->next_dev++;
}

/* Where element e's node goes, and the limits of the port above it: below a
 * new port (a root port of its root complex, a downstream port of its switch),
 * or on its parent's own bus (direct, or below a direct switch, whose
 * downstream ports gpurig folds into the switch: the same levels and links). */
static int attach(struct parser *p, struct elem *e, struct place *at, int *port_gen, int *port_width)
{
  struct elem *par = &p->elems[e->parent_idx];
  locality(p, e->parent_idx, &at->package, &at->numa);
  *port_gen = e->slot_gen ? e->slot_gen : par->gen ? par->gen : 3;
  *port_width = e->slot_width ? e->slot_width : 16;
  if (e->direct || (par->kind == K_SWITCH && par->direct)) {
    int dev = next_dev(p, par, e);
    if (dev < 0)
      return -1;
    at->parent = par->pci_index;
    at->bus = par->kind == K_RC ? p->t->pci[par->pci_index].bus : par->sec_bus;
    at->dev = (unsigned)dev;
    return 0;
  }
  int bus = new_bus(p);
  if (bus < 0)
    return -1;
  /* described, not read: no vendor or device id of its own */
  struct place port_at = {par->pci_index, (unsigned)bus, 0, at->package, at->numa};
  int port = add_node(p, GR_ROLE_BRIDGE, &port_at, 0, 0x060400, 0, 0);
  p->t->pci[port].link.max_gen = *port_gen;
  p->t->pci[port].link.max_width = *port_width;
  if ((bus = new_bus(p)) < 0)
    return -1;
  at->parent = port;
  at->bus = (unsigned)bus;
  at->dev = 0;
  return 0;
}

static unsigned first_pci_id(const char *ids, unsigned *vendor)
{
  unsigned v = 0, d = 0;
  if (sscanf(ids, "%x:%x", &v, &d) != 2)
    v = d = 0;
  *vendor = v;
  return d;
}

static int build_rc(struct parser *p, size_t i)
{
  struct elem *e = &p->elems[i];
  struct place at = {.parent = -1};
  int bus = new_bus(p);
  if (bus < 0)
    return -1;
  at.bus = (unsigned)bus;
  locality(p, (int)i, &at.package, &at.numa);
  e->pci_index = add_node(p, GR_ROLE_HOSTBRIDGE, &at, 0, 0, 0, 0);
  return 0;
}

static int build_switch(struct parser *p, struct elem *e)
{
  struct place at;
  int pg, pw;
  if (attach(p, e, &at, &pg, &pw) != 0)
    return -1;
  /* PEX87xx/PEX97xx (Gen3) carry PLX's vendor id; the Gen4/Gen5 PEX88xxx/PEX89xxx Broadcom's */
  size_t digits = e->model && strncasecmp(e->model, "PEX", 3) == 0 ? strspn(e->model + 3, "0123456789") : 0;
  bool plx = !e->model || (digits == 4 && (e->model[3] == '8' || e->model[3] == '9'));
  int n = add_node(p, GR_ROLE_BRIDGE, &at, 0, 0x060400, plx ? 0x10b5 : 0x1000, 0);
  if (!e->gen)
    e->gen = pg;
  apply_link(&p->t->pci[n], e->gen, e->width ? e->width : 16, pg, pw);
  p->t->pci[n].model = e->model ? xstrdup(e->model) : NULL;
  p->t->pci[n].lanes = e->lanes;
  e->pci_index = n;
  if (e->direct) {
    int bus = new_bus(p);
    if (bus < 0)
      return -1;
    e->sec_bus = (unsigned)bus;
    p->t->pci[n].sec_bus = p->t->pci[n].sub_bus = e->sec_bus;
  }
  return 0;
}

static int build_gpu(struct parser *p, struct elem *e)
{
  struct place at;
  int pg, pw;
  if (attach(p, e, &at, &pg, &pw) != 0)
    return -1;
  unsigned vendor, device = first_pci_id(e->gpu->pci_ids, &vendor);
  int n = add_node(p, GR_ROLE_ENDPOINT, &at, 0, strcmp(e->gpu->vendor, "amd") == 0 ? 0x030000 : 0x030200,
                   vendor ? vendor : 0x10de, device);
  struct gr_pci *g = &p->t->pci[n];
  /* `gpu ... gen5 x8`: the card's own link as the rig states it (a board's
   * x8/x8 wiring that the catalog's x16 card cannot know) */
  apply_link(g, e->gen ? e->gen : e->gpu->pcie_gen, e->width ? e->width : 16, pg, pw);
  g->order = (int)(e - p->elems);
  const char *cpus = rc_cpulist(p, (int)(e - p->elems));
  g->cpulist = cpus ? xstrdup(cpus) : NULL;
  g->model = xstrdup(e->gpu->model);
  g->p2p = e->p2p >= 0 ? e->p2p : p->global_p2p >= 0 ? p->global_p2p : e->gpu->p2p == GR_P2P_YES ? 1
                                                                     : e->gpu->p2p == GR_P2P_NO ? 0 : -1;
  e->pci_index = n;
  return 0;
}

/* Function f's RDMA device from `rdma NAME` (function 0's): the name's
 * trailing number plus f, as the kernel numbers a card's functions. */
static char *function_rdma_name(const char *name, int f)
{
  size_t n = strlen(name), digits = 0;
  while (digits < n && isdigit((unsigned char)name[n - 1 - digits]))
    digits++;
  if (f == 0 || digits == 0)
    return xstrdup(name);
  return xasprintf("%.*s%ld", (int)(n - digits), name, strtol(name + n - digits, NULL, 10) + f);
}

/* A NIC (one node per PCI function, all on one device number: a dual-port
 * card is PIX to itself) or an NVMe drive. Function 0 is named as the rig
 * names it, function k NAME.k. NICs are numbered in declaration order unless
 * `rdma NAME` gives them their RDMA devices, which nvidia-smi numbers by. */
static int build_endpoint(struct parser *p, struct elem *e)
{
  struct place at;
  int pg, pw;
  if (attach(p, e, &at, &pg, &pw) != 0)
    return -1;
  unsigned class_id = e->kind == K_NVME ? 0x010802 : e->rdma == 0 ? 0x020000 : 0x020700;
  for (int f = 0; f < e->functions; f++) {
    int n = add_node(p, GR_ROLE_ENDPOINT, &at, (unsigned)f, class_id, 0, 0);
    struct gr_pci *d = &p->t->pci[n];
    apply_link(d, e->gen ? e->gen : pg, e->width ? e->width : e->kind == K_NVME ? 4 : 16, pg, pw);
    d->model = e->model ? xstrdup(e->model) : xstrdup("NVMe drive");
    d->osdevs = f ? xasprintf("%s.%d", e->name, f) : xstrdup(e->name);
    d->port_gbit = e->port_gbit;
    d->storage_nic = e->storage;
    d->rdma_name = e->rdma_name ? function_rdma_name(e->rdma_name, f) : NULL;
    d->order = (int)(e - p->elems) * RIG_MAX_FUNCTIONS + f;
    const char *cpus = rc_cpulist(p, (int)(e - p->elems));
    d->cpulist = cpus ? xstrdup(cpus) : NULL;
    if (f == 0)
      e->pci_index = n;
  }
  return 0;
}

static int build_element(struct parser *p, size_t i)
{
  struct elem *e = &p->elems[i];
  switch (e->kind) {
  case K_CPU:
    return 0;
  case K_RC:
    return build_rc(p, i);
  case K_SWITCH:
    return build_switch(p, e);
  case K_GPU:
    return build_gpu(p, e);
  case K_NIC:
  case K_NVME:
    return build_endpoint(p, e);
  }
  return 0;
}

/* Builds elements parents-first (a switch may be declared before its parent). */
int build_tree(struct parser *p)
{
  bool progress = true;
  while (progress) {
    progress = false;
    for (size_t i = 0; i < p->nelems; i++) {
      struct elem *e = &p->elems[i];
      bool done = e->pci_index >= 0 || (e->kind == K_CPU && e->pci_index == -2);
      if (done)
        continue;
      if (e->kind != K_CPU && e->kind != K_RC && p->elems[e->parent_idx].pci_index < 0)
        continue;
      if (build_element(p, i) != 0)
        return -1;
      if (e->kind == K_CPU)
        e->pci_index = -2;
      progress = true;
    }
  }
  return 0;
}

/* Sockets in declaration order, each with its NUMA nodes (os indices numbered
 * across the machine in socket order) and its RAM split evenly over them. */
void build_cpus(struct parser *p)
{
  struct gr_topo *t = p->t;
  size_t nodes = 0;
  for (size_t i = 0; i < p->nelems; i++)
    nodes += p->elems[i].kind == K_CPU ? (size_t)p->elems[i].nodes : 0;
  t->packages = xcalloc(p->ncpus + 1, sizeof(*t->packages));
  t->numas = xcalloc(nodes + 1, sizeof(*t->numas));
  for (size_t i = 0; i < p->nelems; i++) {
    struct elem *e = &p->elems[i];
    if (e->kind != K_CPU)
      continue;
    struct gr_package *g = &t->packages[t->npackages];
    g->os_index = (int)t->npackages;
    g->cpu_model = xstrdup(e->model);
    g->cpu_vendor = xstrdup(e->vendor_amd ? "AuthenticAMD" : "GenuineIntel");
    g->cpu_family = g->cpu_model_number = -1;
    g->mem_channels = e->channels;
    g->mem_mts = e->mts;
    g->rc_p2p = e->rc_p2p;
    g->mem_bytes = (uint64_t)e->ram_gib << 30;
    e->first_node = (int)t->nnumas;
    for (int k = 0; k < e->nodes; k++) {
      uint64_t share = g->mem_bytes / (uint64_t)e->nodes;
      if (k == e->nodes - 1)
        share = g->mem_bytes - share * (uint64_t)(e->nodes - 1); /* the remainder on the last */
      t->numas[t->nnumas] = (struct gr_numa){(int)t->nnumas, (int)t->npackages, share};
      t->nnumas++;
    }
    t->npackages++;
  }
}

/* ---- NVLink: pairs, meshes and the NVSwitch fabric ---- */

bool has_link_kind(const struct gr_gpu_model *m, const char *kind)
{
  return m && m->links > 0 && strcmp(m->link, kind) == 0;
}

bool has_gpulink(const struct gr_gpu_model *m)
{
  return has_link_kind(m, "nvlink");
}

/* A statement's link kind, as the catalog's link column and its messages name it. */
static const char *kind_of(const struct link_stmt *s)
{
  return s->xgmi ? "xgmi" : "nvlink";
}

static const char *kind_name(const struct link_stmt *s)
{
  return s->xgmi ? "xGMI" : "NVLink";
}

/* Their plural in messages: "NVLinks", "xGMI links". */
static const char *links_word(const struct link_stmt *s)
{
  return s->xgmi ? "xGMI links" : "NVLinks";
}

/* GB/s per direction of one NVLink of a model: the catalog's links share its figure. */
double link_rate(const struct gr_gpu_model *m)
{
  return m->link_gbps / m->links;
}

const char *article(const char *model)
{
  /* model names read as letters: "an A100", "an RTX 3090", "a V100" */
  return strchr("AEFHILMNORSX", toupper((unsigned char)model[0])) ? "an" : "a";
}

/* The pci index and catalog row of the GPU named `name`, whose catalog row
 * has links of the statement's kind, or -1 after an error at column col. */
static int nvlink_gpu(struct parser *p, const struct link_stmt *s, const char *name, int col, const char *what,
                      const struct gr_gpu_model **m)
{
  int i = find_elem(p, name);
  if (i < 0 || p->elems[i].kind != K_GPU)
    return perr(p, col, "undefined GPU '%s' in %s (GPUs are gpu0, gpu1, ... in declaration order)", name, what);
  *m = p->elems[i].gpu;
  if (!has_link_kind(*m, kind_of(s)))
    return perr(p, col, "%s (%s) has no %s", name, (*m)->model, kind_name(s));
  return p->elems[i].pci_index;
}

/* The GPUs of a range: pci indices and catalog rows, the caller frees both. */
static int range_gpus(struct parser *p, const struct link_stmt *s, const char *what, int **pci,
                      const struct gr_gpu_model ***m)
{
  size_t n = s->hi - s->lo + 1;
  *pci = xcalloc(n, sizeof(int));
  *m = xcalloc(n, sizeof(**m));
  for (size_t k = 0; k < n; k++) {
    char name[32];
    snprintf(name, sizeof(name), "gpu%zu", s->lo + k);
    if (((*pci)[k] = nvlink_gpu(p, s, name, s->acol, what, &(*m)[k])) < 0)
      return -1;
  }
  return 0;
}

/* How to write an NVSwitch board the catalog knows, for the error below. */
static void board_hint(const struct parser *p, const struct link_stmt *s, const struct gr_gpu_model *m, char *buf,
                       size_t cap)
{
  buf[0] = '\0';
  if (strcmp(m->board, "nvswitch") == 0 && s->kind != LK_FABRIC)
    snprintf(buf, cap, " (an HGX board joins GPUs through NVSwitches: write nvswitch gpu%u-gpu%u)",
             s->kind == LK_MESH ? s->lo : 0, s->kind == LK_MESH ? s->hi : (unsigned)(p->ngpus - 1));
  else if (strcmp(m->board, "bridge") == 0)
    snprintf(buf, cap, s->xgmi ? " (AMD's Infinity Fabric Link bridge joins up to 4 cards, one link between each pair "
                                 "it joins)"
                               : " (an NVLink bridge joins two cards with all of them)");
}

/* Counts `links` more NVLinks on GPU `gpu`; more than its catalog has is an
 * error naming the statement that goes over. */
static int charge(struct parser *p, const struct link_stmt *s, int gpu, const struct gr_gpu_model *m, int links)
{
  p->used[gpu] += links;
  if (p->used[gpu] <= m->links)
    return 0;
  char hint[160];
  board_hint(p, s, m, hint, sizeof(hint));
  return perr(p, s->col, "%s would have %d %s; %s %s has %d%s", p->elems[p->gpu_elem[gpu]].name, p->used[gpu],
              links_word(s), article(m->model), m->model, m->links, hint);
}

/* Adds one GPU pair. No cap of its own: charge() bounds every GPU by its
 * catalog links (18 at most) and the bus numbers bound a rig to 255 GPUs, so
 * a rig's pairs stay under 2300. */
static void add_pair(struct parser *p, int x, int y, int links, double rate)
{
  gr_topo_add_gpulink(p->t, x, y, -1, links, links * rate);
}

/* A pair's links by default: all of an NVLink bridge card's (an RTX 3090's
 * bridge carries its 4), else one; AMD's Infinity Fabric Link bridge joins 4
 * cards, one link between each pair it joins. */
static int pair_default(const struct link_stmt *s, const struct gr_gpu_model *m)
{
  return !s->xgmi && strcmp(m->board, "bridge") == 0 ? m->links : 1;
}

static int link_pair(struct parser *p, const struct link_stmt *s)
{
  const struct gr_gpu_model *mx = NULL, *my = NULL;
  const char *kw = kind_of(s);
  int x = nvlink_gpu(p, s, s->a, s->acol, kw, &mx), y = x < 0 ? -1 : nvlink_gpu(p, s, s->b, s->bcol, kw, &my);
  if (x < 0 || y < 0)
    return -1;
  if (x == y)
    return perr(p, s->acol, "an %s link joins two different GPUs", kind_name(s));
  int dx = pair_default(s, mx), dy = pair_default(s, my);
  int links = s->links ? s->links : dx < dy ? dx : dy;
  double rate = link_rate(mx) < link_rate(my) ? link_rate(mx) : link_rate(my);
  if (charge(p, s, x, mx, links) != 0 || charge(p, s, y, my, links) != 0)
    return -1;
  add_pair(p, x, y, links, rate);
  return 0;
}

/* Every pair of a range; without `links`, each GPU's links shared evenly
 * among its peers (4x V100 SXM2: 6 / 3 = 2 per pair). */
static int link_mesh(struct parser *p, const struct link_stmt *s, const int *pci, const struct gr_gpu_model **m)
{
  int n = (int)(s->hi - s->lo + 1), links = s->links, least = 0;
  double rate = link_rate(m[0]);
  for (int k = 0; k < n; k++) {
    least = m[k]->links < m[least]->links ? k : least;
    rate = link_rate(m[k]) < rate ? link_rate(m[k]) : rate;
  }
  if (!links)
    links = m[least]->links / (n - 1);
  if (links == 0) {
    char hint[160];
    board_hint(p, s, m[least], hint, sizeof(hint));
    return perr(p, s->col, "a mesh of %d GPUs needs %d %s per GPU at least; %s %s has %d%s", n, n - 1,
                links_word(s), article(m[least]->model), m[least]->model, m[least]->links, hint);
  }
  for (int k = 0; k < n; k++)
    if (charge(p, s, pci[k], m[k], links * (n - 1)) != 0)
      return -1;
  for (int a = 0; a < n; a++)
    for (int b = a + 1; b < n; b++)
      add_pair(p, pci[a], pci[b], links, rate);
  return 0;
}

/* The rig's one NVSwitch fabric (model/topo.h: every NVSwitch of a machine is
 * one), made by the first nvswitch statement; later ones add to it. */
static int link_fabric(struct parser *p, const struct link_stmt *s, const int *pci, const struct gr_gpu_model **m)
{
  struct gr_topo *t = p->t;
  int gen = s->gen ? s->gen : m[0]->link_gen;
  if (!t->nfabrics)
    gr_topo_add_fabric(t, GR_FABRIC_RIG, gen, 0, NULL);
  struct gr_fabric *f = &t->fabrics[0];
  if (f->gpulink_gen != gen)
    return perr(p, s->col, "NVLink generation %d: the rig's NVSwitch fabric is generation %d (one fabric, one "
                "generation)", gen, f->gpulink_gen);
  f->nswitches += s->switches;
  for (unsigned k = 0; k <= s->hi - s->lo; k++) {
    int links = s->links ? s->links : m[k]->links;
    if (charge(p, s, pci[k], m[k], links) != 0)
      return -1;
    gr_fabric_add_links(f, pci[k], links, links * link_rate(m[k]));
  }
  return 0;
}

static int link_statement(struct parser *p, const struct link_stmt *s)
{
  if (s->kind == LK_PAIR)
    return link_pair(p, s);
  int *pci = NULL;
  const struct gr_gpu_model **m = NULL;
  int rc = range_gpus(p, s, s->kind == LK_MESH ? (s->xgmi ? "xgmi mesh" : "nvlink mesh") : "nvswitch", &pci, &m);
  if (rc == 0)
    rc = s->kind == LK_MESH ? link_mesh(p, s, pci, m) : link_fabric(p, s, pci, m);
  free(pci);
  free(m);
  return rc;
}

/* The nvlink and nvswitch statements in file order, each GPU's links counted
 * against its catalog's as they come. */
int build_links(struct parser *p)
{
  int rc = 0;
  p->used = xcalloc(p->t->npci + 1, sizeof(int));
  p->gpu_elem = xcalloc(p->t->npci + 1, sizeof(int));
  for (size_t i = 0; i < p->nelems; i++)
    if (p->elems[i].kind == K_GPU)
      p->gpu_elem[p->elems[i].pci_index] = (int)i;
  for (size_t k = 0; k < p->nlinks && rc == 0; k++) {
    p->line = p->links[k].line;
    rc = link_statement(p, &p->links[k]);
  }
  free(p->used);
  free(p->gpu_elem);
  p->used = p->gpu_elem = NULL;
  return rc;
}
