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

bool gr_pci_amd_gpu(const struct gr_pci *p)
{
  const struct gr_gpu_model *m = gr_pci_catalog(p);
  return m ? strcmp(m->vendor, "amd") == 0 : p->vendor == 0x1002;
}

size_t gr_topo_amd_gpus(const struct gr_topo *t)
{
  size_t n = 0;
  for (size_t g = 0; g < t->ngpus; g++)
    n += gr_pci_amd_gpu(&t->pci[t->gpus[g]]);
  return n;
}

const char *gr_topo_collective(const struct gr_topo *t)
{
  return t->ngpus && gr_topo_amd_gpus(t) == t->ngpus ? "RCCL" : "NCCL";
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

/* GPUs per NVSwitch fabric on the baseboard a model is sold on. HGX and DGX
 * boards from the A100 on hold 8 GPUs, and each board's NVSwitches join only
 * its own 8: a machine room of them is many fabrics, not one. The first
 * NVSwitch generation (NVLink 2: DGX-2, HGX-2) bridged two 8-GPU boards into
 * one fabric of 16. The catalog has no column for it yet, so the rule is here. */
static size_t board_gpus(const struct gr_gpu_model *m)
{
  return m->link_gen == 2 ? 16 : 8;
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
  /* one fabric per baseboard, its GPUs taken in bus order (t->gpus is sorted so), the
   * NVSwitches seen on the bus shared out evenly among the boards */
  size_t per = board_gpus(m0), nboards = (t->ngpus + per - 1) / per;
  if (nboards > 1) {
    size_t used = strlen(why);
    snprintf(why + used, sizeof(why) - used, ", one fabric per baseboard of %zu", per);
  }
  for (size_t b = 0; b < nboards; b++) {
    struct gr_fabric *f =
      gr_topo_add_fabric(t, GR_FABRIC_INFERRED, m0->link_gen, (int)((size_t)nswitches / nboards), why);
    size_t end = (b + 1) * per < t->ngpus ? (b + 1) * per : t->ngpus;
    f->members = xcalloc(end - b * per, sizeof(*f->members));
    for (size_t g = b * per; g < end; g++) {
      const struct gr_gpu_model *m = gr_pci_catalog(&t->pci[t->gpus[g]]);
      f->members[f->nmembers++] = (struct gr_fabric_member){.gpu = t->gpus[g], .links = m->links, .gbps = m->link_gbps};
    }
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
