/* NVSwitch fabrics: built from reported GPU-to-NVSwitch links, or inferred
 * when an input records no NVLink at all (topo.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "facts/catalog.h"
#include "model/topo.h"

static const struct gr_gpu_model *catalog_lookup(const struct gr_pci *p)
{
  const struct gr_gpu_model *m = p->model ? gr_catalog_find(p->model) : NULL;
  return m ? m : gr_catalog_find_pci(p->vendor, p->device);
}

const struct gr_gpu_model *gr_pci_catalog(const struct gr_pci *p)
{
  return p->catalog_known ? p->catalog : catalog_lookup(p);
}

void gr_pci_resolve_catalog(struct gr_pci *p)
{
  p->catalog = catalog_lookup(p);
  p->catalog_known = true;
}

void gr_pci_set_model(struct gr_pci *p, const char *model)
{
  free(p->model);
  p->model = model ? xstrdup(model) : NULL;
  if (p->catalog_known)
    gr_pci_resolve_catalog(p);
}

struct gr_fabric *gr_topo_add_fabric(struct gr_topo *t, enum gr_fabric_from from, int gpulink_gen, int nswitches,
                                     const char *why)
{
  t->fabrics = xrealloc(t->fabrics, (t->nfabrics + 1) * sizeof(*t->fabrics));
  struct gr_fabric *f = &t->fabrics[t->nfabrics++];
  memset(f, 0, sizeof(*f));
  f->from = from;
  f->gpulink_gen = gpulink_gen;
  f->nswitches = nswitches;
  f->why = why ? xstrdup(why) : NULL;
  return f;
}

const struct gr_fabric_member *gr_fabric_member_of(const struct gr_fabric *f, int gpu)
{
  for (size_t i = 0; i < f->nmembers; i++)
    if (f->members[i].gpu == gpu)
      return &f->members[i];
  return NULL;
}

void gr_fabric_add_links(struct gr_fabric *f, int gpu, int links, double gbps)
{
  struct gr_fabric_member *m = (struct gr_fabric_member *)gr_fabric_member_of(f, gpu);
  if (!m) {
    f->members = xrealloc(f->members, (f->nmembers + 1) * sizeof(*f->members));
    m = &f->members[f->nmembers++];
    *m = (struct gr_fabric_member){.gpu = gpu};
  }
  m->links += links;
  m->gbps += gbps;
}

void gr_topo_fabric_from_gpulinks(struct gr_topo *t, enum gr_fabric_from from)
{
  if (t->nfabrics)
    return;
  struct gr_fabric *f = NULL;
  int nswitches = 0;
  for (size_t i = 0; i < t->npci; i++)
    nswitches += t->pci[i].kind == GR_KIND_NVSWITCH;
  for (size_t k = 0; k < t->ngpulinks; k++) {
    const struct gr_gpulink *l = &t->gpulinks[k];
    if (l->b < 0)
      continue;
    int gpu = -1;
    if (t->pci[l->a].gpu_index >= 0 && t->pci[l->b].kind == GR_KIND_NVSWITCH)
      gpu = l->a;
    else if (t->pci[l->b].gpu_index >= 0 && t->pci[l->a].kind == GR_KIND_NVSWITCH)
      gpu = l->b;
    if (gpu < 0)
      continue;
    if (!f) {
      const struct gr_gpu_model *m = gr_pci_catalog(&t->pci[gpu]);
      f = gr_topo_add_fabric(t, from, m ? m->link_gen : 0, nswitches, NULL);
    }
    gr_fabric_add_links(f, gpu, l->count, l->bw_gbps);
  }
}

/* Why a fabric may be inferred, in words; false when it may not. */
static bool inference_basis(const struct gr_topo *t, char *why, size_t cap)
{
  size_t nswitches = 0, on_board = 0;
  const struct gr_gpu_model *first = NULL;
  for (size_t i = 0; i < t->npci; i++)
    nswitches += t->pci[i].kind == GR_KIND_NVSWITCH;
  for (size_t g = 0; g < t->ngpus; g++) {
    const struct gr_gpu_model *m = gr_pci_catalog(&t->pci[t->gpus[g]]);
    if (!m || m->links <= 0 || strcmp(m->link, "nvlink") != 0)
      return false; /* a GPU whose links are unknown: no figure to infer */
    on_board += strcmp(m->board, "nvswitch") == 0;
    first = first ? first : m;
  }
  if (nswitches) {
    snprintf(why, cap, "%zu NVSwitch PCI device%s on the bus and no NVLink recorded", nswitches,
             nswitches == 1 ? "" : "s");
    return true;
  }
  /* 8-GPU HGX/DGX boards put every SXM GPU on NVSwitches; 4-GPU boards join them directly */
  if (on_board == t->ngpus && t->ngpus >= 8) {
    snprintf(why, cap, "%zu %s GPUs, a model sold on NVSwitch baseboards, and no NVLink recorded", t->ngpus,
             first->model);
    return true;
  }
  return false;
}

void gr_topo_infer_fabric(struct gr_topo *t)
{
  char why[160];
  if (t->nfabrics || t->ngpulinks || t->ngpus < 2 || t->gpulink_ignored || !inference_basis(t, why, sizeof(why)))
    return;
  int nswitches = 0;
  for (size_t i = 0; i < t->npci; i++)
    nswitches += t->pci[i].kind == GR_KIND_NVSWITCH;
  const struct gr_gpu_model *m0 = gr_pci_catalog(&t->pci[t->gpus[0]]);
  struct gr_fabric *f = gr_topo_add_fabric(t, GR_FABRIC_INFERRED, m0->link_gen, nswitches, why);
  for (size_t g = 0; g < t->ngpus; g++) {
    const struct gr_gpu_model *m = gr_pci_catalog(&t->pci[t->gpus[g]]);
    gr_fabric_add_links(f, t->gpus[g], m->links, m->link_gbps);
  }
}

static void fabrics_free(struct gr_topo *t)
{
  for (size_t i = 0; i < t->nfabrics; i++) {
    free(t->fabrics[i].members);
    free(t->fabrics[i].why);
  }
  free(t->fabrics);
  t->fabrics = NULL;
  t->nfabrics = 0;
}

void gr_topo_forget_gpulinks(struct gr_topo *t)
{
  free(t->gpulinks);
  t->gpulinks = NULL;
  t->ngpulinks = 0;
  fabrics_free(t);
  t->gpulink_ignored = true;
}

void gr_topo_free_fabrics(struct gr_topo *t)
{
  fabrics_free(t);
}

const char *gr_fabric_from_name(enum gr_fabric_from f)
{
  switch (f) {
  case GR_FABRIC_HWLOC: return "hwloc";
  case GR_FABRIC_NVML: return "nvml";
  case GR_FABRIC_RIG: return "rig";
  case GR_FABRIC_NCCL: return "nccl";
  case GR_FABRIC_INFERRED: return "inferred";
  }
  return "?";
}
