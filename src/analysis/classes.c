/* GPU classes (gr_analysis.gpu_class): GPUs that hang from the same
 * attachment the same way are interchangeable, so every pair between two
 * classes has the same level, P2P support and bandwidth, and its path
 * differs only in which GPU's own links it names. The analysis computes a
 * path per pair of classes and copies it, renaming those links (gpu_paths):
 * at 512 GPUs of 64 switches that is 4,096 paths walked, not 130,816.
 *
 * A GPU's own chain is the GPU and the bridges above it that lead to no
 * other GPU and no NIC (a NIC beside a GPU makes its GPU-to-NIC paths its
 * own); its attachment is the first node above that leads to another
 * (a switch, a root port, a host bridge), or -1. Two GPUs are of one class
 * when their attachments, models, P2P support, NUMA node, socket and NVSwitch
 * membership, local CPUs and GPU NUMA node are the same (so that every grid
 * and affinity column a printer groups by class is alike) and their chains are alike link by link (the
 * facts narrowest_on_way_up reads, and which switch each bridge belongs to).
 * A GPU with a link of its own to another GPU (a DGX-1's hybrid cube mesh,
 * an NVLink bridge), or in more than one fabric, is a class of its own. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis_internal.h"
#include "base/util.h"

/* One bridge of a chain as the paths read it. */
struct chain_el {
  bool present;
  double gbps, nccl_gbps;
  int role;
  int sw_in;  /* the switch it belongs to is the chain's node at this position, else -1 */
  int sw_out; /* else that switch's (or the node's own) pci index: shared with other GPUs */
};

struct gpu_key {
  int gpu;          /* its index: the tie-break that keeps a singleton alone */
  bool single;      /* pair-specific links: a class of its own */
  int attach, hostbridge, numa, gpu_numa, package, p2p;
  const char *cpulist;
  unsigned vendor, device;
  const struct gr_gpu_model *catalog;
  int fabric, fab_links;
  double fab_gbps;
  const struct chain_el *chain;
  int nchain;
};

#define CMP(x, y) \
  do { \
    if ((x) != (y)) \
      return (x) < (y) ? -1 : 1; \
  } while (0)

static int cmp_el(const struct chain_el *x, const struct chain_el *y)
{
  CMP(x->present, y->present);
  CMP(x->gbps, y->gbps);
  CMP(x->nccl_gbps, y->nccl_gbps);
  CMP(x->role, y->role);
  CMP(x->sw_in, y->sw_in);
  CMP(x->sw_out, y->sw_out);
  return 0;
}

static int cmp_key(const void *px, const void *py)
{
  const struct gpu_key *x = px, *y = py;
  CMP(x->single, y->single);
  if (x->single)
    return (x->gpu > y->gpu) - (x->gpu < y->gpu);
  CMP(x->attach, y->attach);
  CMP(x->hostbridge, y->hostbridge);
  CMP(x->numa, y->numa);
  CMP(x->gpu_numa, y->gpu_numa);
  int lc = strcmp(x->cpulist ? x->cpulist : "", y->cpulist ? y->cpulist : "");
  if (lc)
    return lc;
  CMP(x->package, y->package);
  CMP(x->p2p, y->p2p);
  CMP(x->vendor, y->vendor);
  CMP(x->device, y->device);
  CMP((uintptr_t)x->catalog, (uintptr_t)y->catalog);
  CMP(x->fabric, y->fabric);
  CMP(x->fab_links, y->fab_links);
  CMP(x->fab_gbps, y->fab_gbps);
  CMP(x->nchain, y->nchain);
  for (int k = 0; k < x->nchain; k++) {
    int c = cmp_el(&x->chain[k], &y->chain[k]);
    if (c)
      return c;
  }
  return 0;
}

/* Each GPU's chain (nodes and where each node sits in it), from the number
 * of GPUs below every node. */
static void find_chains(const struct gr_analysis *a, struct gr_gpu_chains *c, int *attach)
{
  const struct gr_topo *t = a->t;
  size_t n = a->ngpus;
  int *below = xcalloc(t->npci + 1, sizeof(int));
  for (size_t g = 0; g < n + t->nnics; g++) /* GPUs and NICs below each node */
    for (int x = g < n ? t->gpus[g] : t->nics[g - n], steps = 0; x >= 0 && steps <= (int)t->npci;
         x = t->pci[x].parent, steps++)
      below[x]++;
  c->off = xcalloc(n + 1, sizeof(int));
  c->nodes = xcalloc(t->npci + 1, sizeof(int));
  c->owner = xmalloc((t->npci + 1) * sizeof(int));
  c->pos = xcalloc(t->npci + 1, sizeof(int));
  for (size_t i = 0; i < t->npci; i++)
    c->owner[i] = -1;
  int used = 0;
  for (size_t g = 0; g < n; g++) {
    c->off[g] = used;
    int x = t->gpus[g];
    for (; x >= 0 && below[x] == 1 && c->owner[x] < 0; x = t->pci[x].parent) {
      c->owner[x] = (int)g;
      c->pos[x] = used - c->off[g];
      c->nodes[used++] = x;
    }
    attach[g] = x;
  }
  c->off[n] = used;
  free(below);
}

/* Each GPU's NVSwitch fabric membership, in one pass over the fabrics (a
 * pass per GPU was quadratic: 64 fabrics of 8 at 512 GPUs). */
static void fabric_keys(const struct gr_topo *t, struct gpu_key *keys)
{
  for (size_t f = 0; f < t->nfabrics; f++)
    for (size_t m = 0; m < t->fabrics[f].nmembers; m++) {
      const struct gr_fabric_member *fm = &t->fabrics[f].members[m];
      int g = t->pci[fm->gpu].gpu_index;
      if (g < 0)
        continue;
      keys[g].single |= keys[g].fabric >= 0; /* in two fabrics: a class of its own */
      keys[g].fabric = (int)f;
      keys[g].fab_links = fm->links;
      keys[g].fab_gbps = fm->gbps;
    }
}

/* GPU g's key but its fabric (fabric_keys); els: room for its chain. */
static void key_of(const struct gr_analysis *a, const struct gr_gpu_chains *c, const int *attach, const int *links,
                   size_t g, struct chain_el *els, struct gpu_key *k)
{
  const struct gr_topo *t = a->t;
  const struct gr_pci *p = &t->pci[t->gpus[g]];
  *k = (struct gpu_key){.gpu = (int)g, .single = links[g] != 0, .attach = attach[g], .hostbridge = p->hostbridge,
                        .numa = p->numa, .gpu_numa = p->gpu_numa, .cpulist = p->cpulist, .package = p->package, .p2p = gpu_p2p(p), .vendor = p->vendor,
                        .device = p->device, .catalog = gr_pci_catalog(p), .fabric = -1, .chain = els,
                        .nchain = c->off[g + 1] - c->off[g]};
  for (int i = 0; i < k->nchain; i++) {
    int x = c->nodes[c->off[g] + i];
    const struct gr_pci *q = &t->pci[x];
    int sw = q->switch_up >= 0 ? q->switch_up : x;
    bool in = sw >= 0 && c->owner[sw] == (int)g;
    els[i] = (struct chain_el){.present = a->link[x].present, .gbps = a->link[x].gbps,
                               .nccl_gbps = a->link[x].nccl_gbps, .role = (int)q->role,
                               .sw_in = in ? c->pos[sw] : -1, .sw_out = in ? -1 : sw};
  }
}

/* Per GPU: its links of its own to another GPU or to a CPU (NVLink between
 * two GPUs makes that pair specific; a POWER9's link to its CPU is the GPU's
 * alone). Links into an NVSwitch are the fabric's, in the key. */
static int *own_links(const struct gr_topo *t, size_t n)
{
  int *links = xcalloc(n + 1, sizeof(int));
  for (size_t k = 0; k < t->ngpulinks; k++) {
    const struct gr_gpulink *l = &t->gpulinks[k];
    int ga = l->a >= 0 ? t->pci[l->a].gpu_index : -1, gb = l->b >= 0 ? t->pci[l->b].gpu_index : -1;
    if (ga >= 0 && (gb >= 0 || l->b < 0))
      links[ga]++;
    if (gb >= 0 && ga >= 0)
      links[gb]++;
  }
  return links;
}

void gpu_classes(struct gr_analysis *a, struct gr_gpu_chains *c)
{
  size_t n = a->ngpus;
  int *attach = xcalloc(n + 1, sizeof(int));
  find_chains(a, c, attach);
  int *links = own_links(a->t, n);
  struct chain_el *els = xcalloc((size_t)c->off[n] + 1, sizeof(*els));
  struct gpu_key *keys = xcalloc(n + 1, sizeof(*keys));
  for (size_t g = 0; g < n; g++)
    key_of(a, c, attach, links, g, els + c->off[g], &keys[g]);
  fabric_keys(a->t, keys);
  qsort(keys, n, sizeof(*keys), cmp_key);
  /* sorted runs of equal keys are the classes; numbered by first member */
  int *run = xcalloc(n + 1, sizeof(int));
  size_t nruns = 0;
  for (size_t i = 0; i < n; i++) {
    if (i == 0 || cmp_key(&keys[i - 1], &keys[i]) != 0)
      nruns++;
    run[keys[i].gpu] = (int)nruns - 1;
  }
  a->gpu_class = xcalloc(n + 1, sizeof(int));
  a->class_start = xcalloc(nruns + 2, sizeof(size_t));
  a->class_gpus = xcalloc(n + 1, sizeof(int));
  int *number = xmalloc((nruns + 1) * sizeof(int));
  for (size_t r = 0; r < nruns; r++)
    number[r] = -1;
  for (size_t g = 0; g < n; g++) { /* in GPU order: class 0 holds GPU0 */
    if (number[run[g]] < 0)
      number[run[g]] = (int)a->nclasses++;
    a->gpu_class[g] = number[run[g]];
    a->class_start[a->gpu_class[g] + 1]++;
  }
  for (size_t k = 0; k < a->nclasses; k++)
    a->class_start[k + 1] += a->class_start[k];
  size_t *fill = xcalloc(a->nclasses + 1, sizeof(size_t));
  for (size_t g = 0; g < n; g++) {
    int k = a->gpu_class[g];
    a->class_gpus[a->class_start[k] + fill[k]++] = (int)g;
  }
  free(fill);
  free(number);
  free(run);
  free(keys);
  free(els);
  free(links);
  free(attach);
}

void gpu_chains_free(struct gr_gpu_chains *c)
{
  free(c->off);
  free(c->nodes);
  free(c->owner);
  free(c->pos);
  memset(c, 0, sizeof(*c));
}
