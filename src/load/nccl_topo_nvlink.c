/* NCCL topology files (load/nccl_topo_internal.h): the <nvlink> and <c2c>
 * elements of each GPU -> NVLinks between GPUs, to a CPU and into the
 * NVSwitch fabric, with NCCL's rates for GPUs the catalog does not know. */
#include <stdlib.h>
#include <string.h>

#include "facts/catalog.h"
#include "load/nccl_topo_internal.h"

/* ---- NVLink ---- */

/* NCCL's effective GB/s per NVLink per direction by compute capability
 * (NVIDIA/nccl src/graph/topo.h ncclTopoNVLinkBw: SM60_NVLINK_BW ..
 * SM100_NVLINK_BW), below the links' signalling rate: used only for GPUs the
 * catalog does not know. 0 when the capability is unknown. */
static double nccl_nvlink_gbps(long sm)
{
  if (sm <= 0)
    return 0;
  return sm >= 100 ? 40.1 : sm >= 90 ? 20.6 : sm == 86 ? 12.0 : sm >= 80 ? 20.0 : sm >= 70 ? 20.0 : sm >= 60 ? 18.0
                                                                                                                : 20.0;
}

/* NVLink generation by compute capability: P100 1, V100 2, A100 and GA102 3,
 * H100 4, B200 5. */
static int nvlink_gen_of_sm(long sm)
{
  return sm >= 100 ? 5 : sm >= 90 ? 4 : sm >= 80 ? 3 : sm >= 70 ? 2 : sm >= 60 ? 1 : 0;
}

/* GB/s per link per direction for GPU node g: the catalog's figure (links'
 * rate / link count) for a GPU it knows, NCCL's otherwise. */
static double link_gbps(const struct gr_pci *g, long sm)
{
  const struct gr_gpu_model *m = gr_pci_catalog(g);
  if (m && m->links > 0 && m->link_gbps > 0 && strcmp(m->link, "nvlink") == 0)
    return m->link_gbps / m->links;
  return nccl_nvlink_gbps(sm);
}

static int link_gen(const struct gr_pci *g, long sm)
{
  const struct gr_gpu_model *m = gr_pci_catalog(g);
  return m && m->link_gen > 0 ? m->link_gen : nvlink_gen_of_sm(sm);
}

enum peer { PEER_GPU, PEER_CPU, PEER_NVSWITCH };

/* The peer kind by tclass as NCCL reads it (topo.cc kvDictPciClass and
 * ncclTopoAddNvLinks): a class starting 0x03 is a GPU, 0x068001 the NVLink
 * bridge of an IBM POWER CPU, anything else an NVSwitch (0x068000, or NCCL's
 * placeholder for one it cannot see). */
static enum peer peer_of(const char *tclass)
{
  if (strncmp(tclass, "0x03", 4) == 0)
    return PEER_GPU;
  if (strcmp(tclass, "0x068001") == 0)
    return PEER_CPU;
  return PEER_NVSWITCH;
}

static void add_pair(struct build *b, int a, int c, int count, double gbps)
{
  grow_array((void **)&b->pairs, sizeof(*b->pairs), &b->cap_pairs, b->npairs);
  b->pairs[b->npairs++] = (struct pair_ent){a < c ? a : c, a < c ? c : a, a < c ? 0 : 1, count, gbps};
}

static void add_to_fabric(struct build *b, const struct elem *e, int gpu, long sm, int count, double gbps)
{
  char buf[NT_MAX_VALUE + 1];
  unsigned dom, bus, dev, fn;
  const struct gr_xml_attr *target = attr_of(b->d, e, "target");
  if (target && gr_parse_busid(value_str(target, buf), &dom, &bus, &dev, &fn)) {
    grow_array((void **)&b->nvs, sizeof(*b->nvs), &b->cap_nvs, b->nnvs);
    b->nvs[b->nnvs++] = busid_key(dom, bus, dev, fn);
  } else {
    b->nvs_unknown = true;
  }
  if (b->fabric < 0) {
    gr_topo_add_fabric(b->t, GR_FABRIC_NCCL, link_gen(&b->t->pci[gpu], sm), 0, NULL);
    b->fabric = (int)b->t->nfabrics - 1;
  }
  gr_fabric_add_links(&b->t->fabrics[b->fabric], gpu, count, count * gbps);
}

/* The GPU peer of a GPU-to-GPU <nvlink> in *peer, -1 (after a warning)
 * when it is none. 0, or -1 for a malformed target. */
static int gpu_peer(struct build *b, const struct elem *e, int gpu, int *peer)
{
  char buf[NT_MAX_VALUE + 1];
  unsigned dom, bus, dev, fn;
  const struct gr_xml_attr *target = attr_of(b->d, e, "target");
  *peer = -1;
  if (!target)
    return fail_elem(b, e, "no target attribute (NCCL requires it)");
  if (!gr_parse_busid(value_str(target, buf), &dom, &bus, &dev, &fn))
    return fail_attr(b, target, "expected the bus id of a GPU");
  int n = node_by_busid(b, busid_key(dom, bus, dev, fn));
  if (n < 0 || b->t->pci[n].kind != GR_KIND_GPU)
    warn_at(b, target->line, target->col, "NVLink target %s is not a GPU of this file: link ignored", buf);
  else if (n == gpu)
    warn_at(b, target->line, target->col, "an NVLink from a GPU to itself: ignored");
  else
    *peer = n;
  return 0;
}

/* The GPU node an <nvlink>/<c2c> belongs to and its sm, or -1 when NCCL
 * would not read it (not its <pci>'s first <gpu>, or inside a switch). */
static int link_owner(struct build *b, const struct elem *e, long *sm)
{
  const struct elem *gpu = &b->d->el[e->parent], *pci = &b->d->el[gpu->parent];
  if (pci->first_gpu != e->parent || pci->npci || pci->node < 0 || b->t->pci[pci->node].kind != GR_KIND_GPU)
    return -1;
  *sm = 0;
  return int_attr(b, gpu, "sm", 0, 10000, sm) < 0 ? -2 : pci->node;
}

static int build_nvlink(struct build *b, const struct elem *e)
{
  char buf[NT_MAX_VALUE + 1];
  long sm, count;
  int gpu = link_owner(b, e, &sm);
  if (gpu == -2)
    return -1;
  if (gpu < 0)
    return 0;
  const struct gr_xml_attr *tclass = attr_of(b->d, e, "tclass");
  if (!tclass)
    return fail_elem(b, e, "no tclass attribute (NCCL requires it)");
  if (required_int(b, e, "count", 1, 64, &count) != 0)
    return -1;
  struct gr_pci *g = &b->t->pci[gpu];
  double gbps = link_gbps(g, sm);
  switch (peer_of(value_str(tclass, buf))) {
  case PEER_GPU: {
    int peer;
    if (gpu_peer(b, e, gpu, &peer) != 0)
      return -1;
    if (peer >= 0)
      add_pair(b, gpu, peer, (int)count, gbps);
    return 0;
  }
  case PEER_CPU:
    gr_topo_add_gpulink(b->t, gpu, -1, g->package, (int)count, count * gbps);
    return 0;
  case PEER_NVSWITCH:
    add_to_fabric(b, e, gpu, sm, (int)count, gbps);
    return 0;
  }
  return 0;
}

/* <c2c bw= count=>: NVLink-C2C to the GPU's own CPU (Grace); bw is MB/s per
 * link, as NCCL reads it (topo.cc ncclTopoAddC2c). */
static int build_c2c(struct build *b, const struct elem *e)
{
  long sm, count, mbps;
  int gpu = link_owner(b, e, &sm);
  if (gpu == -2)
    return -1;
  if (gpu < 0)
    return 0;
  if (required_int(b, e, "count", 1, 64, &count) != 0 || required_int(b, e, "bw", 1, 10000000, &mbps) != 0)
    return -1;
  gr_topo_add_gpulink(b->t, gpu, -1, b->t->pci[gpu].package, (int)count, (double)(count * mbps) / 1000.0);
  return 0;
}

static int cmp_pair(const void *x, const void *y)
{
  const struct pair_ent *a = x, *c = y;
  if (a->lo != c->lo)
    return a->lo < c->lo ? -1 : 1;
  if (a->hi != c->hi)
    return a->hi < c->hi ? -1 : 1;
  return a->dir - c->dir;
}

/* One NVLink per GPU pair: both ends list it, so a pair listed both ways
 * takes the lower count (a link is up at both ends or not at all); links
 * one end lists twice add up, as NCCL adds them. */
static void merge_pairs(struct build *b)
{
  if (b->npairs) /* qsort of NULL is undefined even for 0 elements */
    qsort(b->pairs, b->npairs, sizeof(*b->pairs), cmp_pair);
  for (size_t i = 0; i < b->npairs;) {
    int count[2] = {0, 0};
    double gbps[2] = {0, 0};
    size_t j = i;
    for (; j < b->npairs && b->pairs[j].lo == b->pairs[i].lo && b->pairs[j].hi == b->pairs[i].hi; j++) {
      count[b->pairs[j].dir] += b->pairs[j].count;
      gbps[b->pairs[j].dir] += b->pairs[j].count * b->pairs[j].link_gbps;
    }
    int k = !count[1] || (count[0] && count[0] <= count[1]) ? 0 : 1;
    if (count[0] && count[1] && count[0] != count[1]) {
      char x[32], y[32];
      gr_pci_busid(&b->t->pci[b->pairs[i].lo], x, sizeof(x));
      gr_pci_busid(&b->t->pci[b->pairs[i].hi], y, sizeof(y));
      gr_topo_add_warning(b->t, "%s: GPU %s lists %d NVLinks to %s, which lists %d back: counted %d", b->name, x,
                          count[0], y, count[1], count[k]);
    }
    gr_topo_add_gpulink(b->t, b->pairs[i].lo, b->pairs[i].hi, -1, count[k], gbps[k]);
    i = j;
  }
}

static int cmp_u64(const void *x, const void *y)
{
  uint64_t a = *(const uint64_t *)x, c = *(const uint64_t *)y;
  return a < c ? -1 : a > c;
}

/* The fabric's switch count: the distinct NVSwitches its links name. */
static void count_switches(struct build *b)
{
  if (b->fabric < 0)
    return;
  size_t distinct = 0;
  if (b->nnvs)
    qsort(b->nvs, b->nnvs, sizeof(*b->nvs), cmp_u64);
  for (size_t i = 0; i < b->nnvs; i++)
    distinct += i == 0 || b->nvs[i] != b->nvs[i - 1];
  b->t->fabrics[b->fabric].nswitches = b->nvs_unknown ? 0 : (int)distinct;
}

int nt_build_links(struct build *b)
{
  for (size_t i = 0; i < b->d->nel; i++) {
    const struct elem *e = &b->d->el[i];
    int rc = e->kind == EL_NVLINK ? build_nvlink(b, e) : e->kind == EL_C2C ? build_c2c(b, e) : 0;
    if (rc != 0)
      return -1;
  }
  merge_pairs(b);
  count_switches(b);
  return 0;
}
