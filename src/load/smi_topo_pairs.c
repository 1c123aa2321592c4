/* What AMD's tools state per GPU pair made into a tree (smi_topo_internal.h):
 * the one place that turns link types, hops and weights into levels, for
 * `rocm-smi --showtopo` (smi_topo_rocm.c) and `amd-smi topology`
 * (smi_topo_amd.c) alike.
 *
 * What the numbers mean (both tools read them from the amdgpu KFD io_links;
 * AMD's MI200 system guide and amd-smi's CLI documentation say it): a link
 * type of XGMI or PCIE; hops 1 for GPUs joined by xGMI, 2 for GPUs on the
 * same CPU socket, 3 across sockets; weight 15 per xGMI hop and 20 per PCIe
 * segment, so a PCIe pair weighs 40 or more. */
#include "load/smi_topo_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void amd_pairs_alloc(struct amd_pairs *p, size_t n)
{
  p->n = n;
  p->weight = xcalloc(n * n + 1, sizeof(int));
  p->hops = xcalloc(n * n + 1, sizeof(int));
  p->type = xcalloc(n * n + 1, 1);
  p->access = xcalloc(n * n + 1, 1);
  p->numa = xcalloc(n + 1, sizeof(int));
  p->bus = xcalloc(n + 1, sizeof(*p->bus));
  for (size_t i = 0; i < n * n; i++) {
    p->weight[i] = p->hops[i] = -1;
    p->access[i] = -1;
  }
  for (size_t i = 0; i < n; i++)
    p->numa[i] = -1;
}

void amd_pairs_free(struct amd_pairs *p)
{
  free(p->weight);
  free(p->hops);
  free(p->type);
  free(p->access);
  free(p->numa);
  free(p->bus);
  memset(p, 0, sizeof(*p));
}

/* A pair's level, and whether it is xGMI through another GPU. */
static enum mx_level pair_level(const struct amd_pairs *p, size_t at, bool numa_known, bool *multihop)
{
  int w = p->weight[at], h = p->hops[at];
  enum amd_link ty = p->type[at];
  *multihop = false;
  /* no link type: weight 15 per xGMI hop, 20 per PCIe segment (40 at least);
   * 60, both three xGMI hops and three PCIe segments, is left to hops */
  if (ty == AMD_LINK_UNKNOWN && w > 0 && w % 15 == 0 && w % 20 != 0)
    ty = AMD_LINK_XGMI;
  if (ty == AMD_LINK_XGMI) {
    *multihop = w > 15;
    return *multihop ? MX_UNKNOWN : MX_GPULINK;
  }
  if (numa_known || (ty == AMD_LINK_UNKNOWN && w < 0 && h < 0))
    return MX_UNKNOWN;
  if (h >= 2)
    return h == 2 ? MX_NODE : MX_SYS;
  return w >= 40 ? (w == 40 ? MX_NODE : MX_SYS) : MX_UNKNOWN;
}

/* A GPU's P2P access as the ACCESS table states it: enabled to some other
 * GPU, disabled to every one stated, or not stated. */
static int gpu_access(const struct amd_pairs *p, size_t g)
{
  int v = -1;
  for (size_t j = 0; j < p->n; j++) {
    int a = j == g ? -1 : p->access[g * p->n + j];
    if (a == 1)
      return 1;
    if (a == 0)
      v = 0;
  }
  return v;
}

void amd_pairs_build(const struct amd_pairs *p, const char *name, const struct amd_tool *tool, struct gr_topo *t)
{
  struct mx m = {.name = name, .vendor = 0x1002};
  bool numa_known = true;
  size_t multihop = 0;
  mx_alloc(&m, p->n);
  for (size_t i = 0; i < p->n; i++) {
    char label[24];
    snprintf(label, sizeof(label), "GPU%zu", i);
    m.dev[i].label = xstrdup(label);
    m.dev[i].numa = p->numa[i];
    m.dev[i].p2p = gpu_access(p, i);
    m.dev[i].has_bdf = p->bus[i].has_bdf;
    m.dev[i].domain = p->bus[i].domain;
    m.dev[i].bus = p->bus[i].bus;
    m.dev[i].devno = p->bus[i].devno;
    m.dev[i].func = p->bus[i].func;
    numa_known &= p->numa[i] >= 0;
  }
  for (size_t a = 0; a < p->n; a++)
    for (size_t b = a + 1; b < p->n; b++) {
      bool mh;
      /* the upper half, as the tools' rows are read: row a, column b */
      mx_set(&m, a, b, pair_level(p, a * p->n + b, numa_known, &mh), 1);
      multihop += mh;
    }
  mx_build(&m, tool->kind, t);
  gr_topo_add_gap(t, "%s", tool->states);
  if (multihop)
    gr_topo_add_gap(t, "%zu GPU pair%s over xGMI through another GPU (weight above 15, which is one xGMI hop): no "
                    "direct link, so %s drawn at %s PCIe level; RCCL does not route over 2-hop xGMI (ROCm/rccl#272).",
                    multihop, multihop == 1 ? " is joined" : "s are joined", multihop == 1 ? "it is" : "they are",
                    multihop == 1 ? "its" : "their");
  if (!numa_known)
    gr_topo_add_gap(t, "%s", tool->numa_gap);
  mx_free(&m);
}
