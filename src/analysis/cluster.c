/* The cluster prediction; see cluster.h and docs/cluster.md. */
#include "analysis/cluster.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "facts/catalog.h"
#include "facts/facts.h"

/* ---- the NIC catalog ---- */

/* model is name, or starts with it followed by a space or a comma. */
static bool nic_name_matches(const char *model, const char *name, size_t n)
{
  if (n == 0 || strncasecmp(model, name, n) != 0)
    return false;
  return model[n] == '\0' || model[n] == ' ' || model[n] == ',';
}

/* The length of the longest of row r's name and aliases that model matches, 0 none. */
static size_t row_match(const struct gr_nics_row *row, const char *model)
{
  const char *name = row->name, *aliases = row->aliases;
  size_t best = nic_name_matches(model, name, strlen(name)) ? strlen(name) : 0;
  for (const char *s = aliases; *s;) {
    size_t n = strcspn(s, ";");
    if (n > best && nic_name_matches(model, s, n))
      best = n;
    s += n + (s[n] == ';');
  }
  return best;
}

const struct gr_nics_row *gr_nic_catalog_find(const char *model)
{
  const struct gr_nics_rows *tb = gr_nics_rows();
  const struct gr_nics_row *found = NULL;
  size_t best = 0;
  for (size_t r = 0; model && r < tb->n; r++) {
    size_t n = row_match(&tb->v[r], model);
    if (n > best) {
      best = n;
      found = &tb->v[r];
    }
  }
  return found;
}

/* ---- the NICs of a node ---- */

/* A NIC port's line rate in Gb/s: the input's, else the catalog's; 0 unknown. */
static double port_gbit(const struct gr_pci *d)
{
  if (d->port_gbit > 0)
    return d->port_gbit;
  const struct gr_nics_row *row = gr_nic_catalog_find(d->model);
  double v = row ? row->port_gbit : 0;
  return v;
}

/* Whether NIC n counts: RDMA ones when the node has any. */
static bool nic_counts(const struct gr_topo *t, size_t n, bool want_rdma)
{
  const struct gr_pci *d = &t->pci[t->nics[n]];
  return !d->storage_nic && (!want_rdma || d->rdma);
}

/* The ports of one PCI device (its functions) share its link: their line rate
 * together, bounded by the link. Adds to out and names the bound. */
static void device_rate(const struct gr_topo *t, size_t n, bool want_rdma, struct gr_cluster_prediction *o)
{
  const struct gr_pci *d = &t->pci[t->nics[n]];
  double ports = 0;
  for (size_t k = 0; k < t->nnics; k++) {
    const struct gr_pci *e = &t->pci[t->nics[k]];
    if (nic_counts(t, k, want_rdma) && e->domain == d->domain && e->bus == d->bus && e->dev == d->dev)
      ports += port_gbit(e) / 8.0;
  }
  struct gr_link_facts f;
  gr_link_facts(d, &f);
  double slot = f.gbps;
  o->port_gbps += ports;
  if (slot > 0 && slot < ports) {
    char bus[32], link[64];
    snprintf(o->nic_bound, sizeof(o->nic_bound), "%s's PCIe link (%s) is narrower than its %.1f GB/s of ports",
             d->osdevs ? d->osdevs : gr_pci_busid(d, bus, sizeof(bus)), gr_link_label(&f, GR_LABEL_RATE, link, sizeof(link)),
             ports);
    ports = slot;
  }
  o->nic_gbps += ports;
}

static void node_nics(const struct gr_topo *t, struct gr_cluster_prediction *o)
{
  bool any_rdma = false;
  for (size_t n = 0; n < t->nnics; n++)
    any_rdma |= t->pci[t->nics[n]].rdma && !t->pci[t->nics[n]].storage_nic;
  o->rdma = any_rdma;
  bool unknown = false;
  for (size_t n = 0; n < t->nnics; n++) {
    const struct gr_pci *d = &t->pci[t->nics[n]];
    if (!nic_counts(t, n, any_rdma))
      continue;
    if (o->nics++ == 0) {
      snprintf(o->nic_model, sizeof(o->nic_model), "%s", d->model ? d->model : "NIC");
      o->port_gbit = port_gbit(d);
    }
    unknown |= port_gbit(d) <= 0;
    if (d->func == 0)
      device_rate(t, n, any_rdma, o);
  }
  if (unknown) /* one port of unknown rate leaves the node's figure unknown rather than low */
    o->nic_gbps = o->port_gbps = 0;
}

/* ---- GPUDirect RDMA, as NCCL's ncclTopoCheckGdr decides it ---- */

/* GeForce and TITAN cards: NVIDIA's stock driver offers no GPUDirect RDMA on
 * them. NVIDIA's GPUDirect RDMA User Manual lists only Tesla and Quadro
 * GPUs under its system requirements:
 * https://docs.nvidia.com/networking/display/GPUDirectRDMAv18/System+Requirements+and+Recommendations */
static bool gpu_gdr_capable(const struct gr_pci *d)
{
  const struct gr_gpu_model *gm = gr_pci_catalog(d);
  if (!gm)
    return true; /* unknown: NCCL asks the driver; gpurig assumes a data-centre card */
  if (strcmp(gm->vendor, "nvidia") != 0)
    return false;
  const char *m = gm->model;
  bool geforce_rtx = strncmp(m, "RTX ", 4) == 0 && isdigit((unsigned char)m[4]);
  return !(geforce_rtx || strncasecmp(m, "GTX", 3) == 0 || strncasecmp(m, "TITAN", 5) == 0);
}

/* NCCL's path type for a GPU-NIC pair: it has no NODE (NODE is PHB to it). */
static enum gr_level nccl_level(enum gr_level l)
{
  return l == GR_LVL_NODE ? GR_LVL_PHB : l;
}

static bool gpu_has_nvlink(const struct gr_analysis *a, size_t g)
{
  for (size_t h = 0; h < a->ngpus; h++)
    if (h != g && gr_gpu_path(a, g, h).level == GR_LVL_GPULINK)
      return true;
  return a->ngpus == 1; /* NCCL: a single GPU keeps GDR reads */
}

/* The nearest counted NIC of GPU g, as NCCL's level; GR_LVL_SYS + 1 when none. */
static int nearest_nic(const struct gr_topo *t, const struct gr_analysis *a, size_t g, bool rdma)
{
  int best = GR_LVL_SYS + 1;
  for (size_t n = 0; n < a->nnics; n++)
    if (nic_counts(t, n, rdma) && (int)nccl_level(a->gpu_nic[g * a->nnics + n].level) < best)
      best = (int)nccl_level(a->gpu_nic[g * a->nnics + n].level);
  return best;
}

static void gdr_decide(const struct gr_topo *t, const struct gr_analysis *a, const struct gr_cluster *c,
                       struct gr_cluster_prediction *o)
{
  o->gdr_level = c && c->gdr_level >= 0 ? c->gdr_level : GR_LVL_PXB;
  bool peermem = !c || c->peermem;
  const struct gr_nics_row *nic = gr_nic_catalog_find(o->nic_model);
  const char *nic_gdr = nic ? nic->gdr : "";
  size_t far = 0, consumer = 0, reads_off = 0;
  for (size_t g = 0; g < a->ngpus; g++) {
    const struct gr_pci *d = &t->pci[t->gpus[g]];
    bool near = nearest_nic(t, a, g, o->rdma) <= o->gdr_level, capable = gpu_gdr_capable(d);
    far += !near;
    consumer += !capable;
    const struct gr_gpu_model *gm = gr_pci_catalog(d);
    reads_off += gm && gm->cc_major > 0 && gm->cc_major < 8 && !gpu_has_nvlink(a, g);
    o->gdr_gpus += near && capable && peermem && o->rdma && strcmp(nic_gdr, "no") != 0;
  }
  o->gdr = a->ngpus > 0 && (size_t)o->gdr_gpus == a->ngpus;
  o->gdr_read = o->gdr && reads_off == 0;
  const char *lvl = gr_nccl_level_str((enum gr_level)o->gdr_level);
  if (!o->rdma)
    snprintf(o->gdr_why, sizeof(o->gdr_why), "off: no RDMA NIC (NCCL's socket transport stages through host memory)");
  else if (!peermem)
    snprintf(o->gdr_why, sizeof(o->gdr_why), "off: nvidia_peermem is not loaded (peermem no)");
  else if (strcmp(nic_gdr, "no") == 0)
    snprintf(o->gdr_why, sizeof(o->gdr_why), "off: the %s does not do GPUDirect RDMA (data/nics.tsv)", o->nic_model);
  else if (consumer)
    snprintf(o->gdr_why, sizeof(o->gdr_why), "off for %zu GPU%s: GeForce cards have no GPUDirect RDMA on stock "
             "drivers", consumer, consumer == 1 ? "" : "s");
  else if (far)
    snprintf(o->gdr_why, sizeof(o->gdr_why), "off for %zu of %zu GPUs: their nearest NIC is farther than %s "
             "(NCCL_NET_GDR_LEVEL%s); the NIC reads and writes host memory instead", far, a->ngpus, lvl,
             c && c->gdr_level >= 0 ? "" : " default PXB: a NIC below the GPU's PCIe switch");
  else
    snprintf(o->gdr_why, sizeof(o->gdr_why), "on: every GPU has a NIC within %s, nvidia_peermem loaded%s", lvl,
             o->gdr_read ? "" : "; receives only: NCCL disables GDR reads before Ampere without NVLink");
}

/* ---- the all-reduce across nodes and the verdicts ---- */

static void verdict(struct gr_cluster_prediction *o, const char *w, enum gr_rating r, const char *fmt, ...)
  __attribute__((format(printf, 4, 5)));

static void verdict(struct gr_cluster_prediction *o, const char *w, enum gr_rating r, const char *fmt, ...)
{
  struct gr_cluster_verdict *v = &o->verdicts[o->nverdicts++];
  va_list ap;
  va_start(ap, fmt);
  v->workload = w;
  v->rating = r;
  vsnprintf(v->reason, sizeof(v->reason), fmt, ap);
  va_end(ap);
}

static void verdicts(struct gr_cluster_prediction *o)
{
  if (o->busbw_gbps <= 0 || o->intra_busbw_gbps <= 0)
    return;
  double ratio = o->intra_busbw_gbps / o->inter_busbw_gbps;
  /* tensor parallel all-reduces twice per layer: it belongs where the all-reduce is fastest */
  verdict(o, "tensor parallel", ratio > 2 ? GR_RATE_GOOD : GR_RATE_FAIR,
          "keep it within a node (--tp up to %d): the node all-reduces at %.1f GB/s, across nodes it would run at "
          "the network's %.1f GB/s (%.1fx slower)",
          o->gpus_per_node, o->intra_busbw_gbps, o->inter_busbw_gbps, ratio);
  verdict(o, "pipeline across nodes", GR_RATE_GOOD,
          "stages on different nodes send one token's activations per step (hidden size x 2 bytes: 8 KiB for a "
          "4096-wide model, 32 KiB for 16384), well within %.1f GB/s per node", o->nic_gbps);
  enum gr_rating dp = o->scaling >= 0.5 ? GR_RATE_GOOD : o->scaling >= 0.2 ? GR_RATE_FAIR : GR_RATE_POOR;
  verdict(o, "data parallel across nodes", dp,
          "gradient all-reduce at %.1f GB/s busbw over %d nodes, %.0f%% of the node's own %.1f GB/s: an all-reduce "
          "takes %.1fx as long as within one node", o->busbw_gbps, o->nodes, o->scaling * 100, o->intra_busbw_gbps,
          1 / o->scaling);
}

void gr_cluster_predict(const struct gr_topo *t, const struct gr_analysis *a, const struct gr_prediction *p,
                        const struct gr_cluster *c, int nodes, struct gr_cluster_prediction *o)
{
  memset(o, 0, sizeof(*o));
  o->nodes = nodes > 0 ? nodes : c ? c->nodes : 1;
  o->gpus_per_node = (int)t->ngpus;
  o->oversubscription = c && c->fabric == GR_NET_FAT_TREE ? c->oversubscription : 1;
  o->fabric = c && c->fabric == GR_NET_FAT_TREE ? "fat-tree" : "switch";
  o->intra_busbw_gbps = p ? p->nccl_default.busbw_gbps : 0;
  node_nics(t, o);
  gdr_decide(t, a, c, o);
  if (!o->gdr && o->nic_gbps > 0) { /* host-staged: every byte also crosses the GPUs' host links */
    double links = 0;
    for (size_t g = 0; g < t->ngpus; g++)
      links += gr_link_bw_gbps(&t->pci[t->gpus[g]]);
    if (links > 0 && links < o->nic_gbps) {
      o->nic_gbps = links;
      snprintf(o->nic_bound, sizeof(o->nic_bound), "without GPUDirect RDMA the GPUs' host links (%.1f GB/s together)",
               links);
    }
  }
  if (!o->nic_bound[0] && o->nic_gbps > 0)
    snprintf(o->nic_bound, sizeof(o->nic_bound), "the ports' line rate");
  if (o->nodes < 2 || o->nic_gbps <= 0)
    return;
  o->inter_busbw_gbps = o->nic_gbps * gr_calib()->net_ring_eff / o->oversubscription;
  o->busbw_gbps = o->intra_busbw_gbps > 0 && o->intra_busbw_gbps < o->inter_busbw_gbps ? o->intra_busbw_gbps
                                                                                      : o->inter_busbw_gbps;
  o->scaling = o->intra_busbw_gbps > 0 ? o->busbw_gbps / o->intra_busbw_gbps : 0;
  verdicts(o);
}
