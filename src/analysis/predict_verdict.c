/* The predictions' prose: NIC notes, the ring texts and the verdicts per
 * workload (training, tensor parallelism, independent jobs). */
#include "analysis/predict.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "facts/catalog.h"
#include "facts/facts.h"
#include "facts/pcilink.h"

#include "analysis/predict_internal.h"

void nic_notes(struct gr_prediction *p)
{
  const struct gr_topo *t = p->t;
  char name[32];
  for (size_t k = 0; k < t->nnics && p->ngpus; k++) {
    size_t close = 0;
    enum gr_level best = GR_LVL_SYS;
    for (size_t g = 0; g < p->ngpus; g++) {
      enum gr_level l = p->a->gpu_nic[g * t->nnics + k].level;
      close += l <= GR_LVL_PXB;
      if (l < best)
        best = l;
    }
    gr_pci_label(t, t->nics[k], name, sizeof(name));
    if (close)
      predict_note(p, "predict.nic-gdr", t->nics[k], "%s shares a PCIe switch with %zu GPU%s: GPUDirect RDMA goes peer-to-peer for them.", name, close,
                   close == 1 ? "" : "s");
    else
      predict_note(p, "predict.nic-gdr", t->nics[k], "%s shares no switch with a GPU (nearest: %s): GPUDirect RDMA crosses the CPU, or NCCL stages through host memory.",
                   name, gr_level_name(best));
  }
  size_t sockets_with_gpus = 0, sockets_with_nics = 0;
  for (size_t s = 0; s < t->npackages; s++) {
    bool g = false, n = false;
    for (size_t i = 0; i < p->ngpus; i++)
      g |= t->pci[t->gpus[i]].package == t->packages[s].os_index;
    for (size_t i = 0; i < t->nnics; i++)
      n |= t->pci[t->nics[i]].package == t->packages[s].os_index;
    sockets_with_gpus += g;
    sockets_with_nics += g && n;
  }
  if (t->nnics && sockets_with_nics < sockets_with_gpus)
    predict_note(p, "predict.nic-sockets", -1, "GPUs sit on %zu sockets but RDMA NICs on %zu of them: multi-node traffic from the other socket's GPUs crosses the inter-socket link.",
                 sockets_with_gpus, sockets_with_nics);
}

void count_hops(const struct ctx *c, struct gr_ring *r, size_t k, int mode)
{
  r->nhops_p2p = r->nhops_host = r->nhops_gpulink = 0;
  for (size_t i = 0; i < k && k > 1; i++) {
    enum gr_xfer x = hop_of(c, mode, r->order[i], r->order[(i + 1) % k])->x;
    r->nhops_p2p += x == GR_XFER_P2P;
    r->nhops_host += x == GR_XFER_HOST;
    r->nhops_gpulink += x == GR_XFER_GPULINK;
  }
}

/* "GPU0>GPU3>...": at most 1 + 3 + 11 bytes a GPU, so any ring fits whole. */
static size_t ring_text_cap(size_t k)
{
  return 15 * k + 1;
}

static void ring_text(const struct gr_ring *r, size_t k, char *buf, size_t cap)
{
  size_t off = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < k && off < cap; i++)
    off += (size_t)snprintf(buf + off, cap - off, "%sGPU%d", i ? ">" : "", r->order[i]);
}

static double gpu_link_floor(const struct gr_analysis *a)
{
  double m = INFINITY;
  for (size_t g = 0; g < a->t->ngpus; g++) {
    double v = a->link[a->t->gpus[g]].gbps;
    if (v > 0 && v < m)
      m = v;
  }
  return isinf(m) ? 0 : m;
}

/* "peer-to-peer without crossing a socket" only where there are sockets to cross. */
static const char *socket_words(const struct gr_topo *t)
{
  return t->npackages > 1 ? " without crossing a socket" : "";
}

/* Who can exchange gradients by P2P, in words: the largest P2P group, or
 * that no two GPUs can (on one socket, or at all). Returns what it wrote. */
static size_t p2p_reach_text(const struct ctx *c, const struct gr_prediction *p, char *buf, size_t cap)
{
  size_t n = p->ngpus, off = 0, nc = p->a->nclasses, x, y;
  bool any_p2p = false; /* some pair can do P2P, if only across sockets: by class pair */
  for (size_t i = 0; i < nc * nc; i++)
    any_p2p |= gr_class_pair_rep(p->a, i / nc, i % nc, &x, &y) && p->pairs[i].p2p_capable;
  if (p->largest_p2p_domain < 2 && any_p2p)
    return (size_t)snprintf(buf, cap, " No two GPUs can talk peer-to-peer without crossing %s.",
                            c->t->npackages > 1 ? "a socket" : "NUMA nodes");
  if (p->largest_p2p_domain < 2)
    return (size_t)snprintf(buf, cap,
                            " No two GPUs can talk peer-to-peer (driver or platform), so every gradient goes through CPU memory.");
  off += (size_t)snprintf(buf + off, cap - off, " %d of %zu GPUs can exchange gradients peer-to-peer%s",
                          p->largest_p2p_domain, n, socket_words(c->t));
  if (p->ndomains > 1)
    off += (size_t)snprintf(buf + off, cap - off, " (%zu such groups)", p->ndomains);
  return off + (size_t)snprintf(buf + off, cap - off, ";");
}

void training_verdict(struct ctx *c, struct gr_prediction *p)
{
  size_t n = p->ngpus;
  if (n < 2) {
    add_verdict(p, "training", (int)n, GR_RATE_GOOD, "One GPU: data-parallel training needs no gradient all-reduce.");
    return;
  }
  /* sized by two rings, which name every GPU: 2048 for the sentences */
  size_t ring_cap = ring_text_cap(n), cap = 2048 + 2 * ring_cap, off = 0;
  char *ring = xmalloc(ring_cap), *reasons = xmalloc(cap), bound[256];
  const struct gr_ring *d = &p->nccl_default;
  ring_text(d, n, ring, ring_cap);
  if (d->busbw_gbps <= 0)
    off += (size_t)snprintf(reasons + off, cap - off,
                            "All-reduce bandwidth not known (the input records no link rates; ring %s).", ring);
  else
    off += (size_t)snprintf(reasons + off, cap - off,
                            "Predicted all-reduce bus bandwidth %.1f GB/s with %s's defaults (%s %s, bounded by %s).",
                            d->busbw_gbps, gr_topo_collective(p->t), d->nvls_busbw_gbps > d->ring_busbw_gbps ? "GPUs" : "ring",
                            ring, gr_ring_bound_text(p, d, bound, sizeof(bound)));
  if (p->best_needs_p2p_level && p->best.busbw_gbps > 0) {
    ring_text(&p->best, n, ring, ring_cap);
    off += (size_t)snprintf(reasons + off, cap - off, " With NCCL_P2P_LEVEL=%s: %.1f GB/s (ring %s, bounded by %s).",
                            p->best_p2p_level, p->best.busbw_gbps, ring,
                            gr_ring_bound_text(p, &p->best, bound, sizeof(bound)));
  }
  off += p2p_reach_text(c, p, reasons + off, cap - off);
  off += (size_t)snprintf(reasons + off, cap - off, " %zu of %zu ring hops go through host memory with %s's defaults.",
                          d->nhops_host, n, gr_topo_collective(p->t));
  bool crosses = false;
  for (size_t i = 0; i < n; i++)
    crosses |= gr_gpu_path(c->a, (size_t)d->order[i], (size_t)d->order[(i + 1) % n]).level == GR_LVL_SYS;
  if (crosses)
    snprintf(reasons + off, cap - off, " The ring crosses the link between %s twice.",
             c->t->npackages > 1 ? "sockets" : "NUMA nodes");
  double floor = gpu_link_floor(c->a), ratio = floor > 0 ? d->busbw_gbps / floor : 0.5; /* unknown: no verdict from it */
  enum gr_rating r;
  if (d->nhops_gpulink == n || ((size_t)p->largest_p2p_domain == n && ratio >= 0.6))
    r = GR_RATE_GOOD;
  else if ((size_t)p->largest_p2p_domain * 4 <= n || p->largest_p2p_domain < 2 || ratio < 0.35)
    r = GR_RATE_POOR;
  else
    r = GR_RATE_FAIR;
  add_verdict(p, "training", (int)n, r, reasons);
  free(ring);
  free(reasons);
}

/* The NCCL_P2P_LEVEL a ring needs in mode 1: the farthest NCCL path of its
 * P2P hops ("PHB", "SYS"). */
const char *level_needed(const struct ctx *c, const int *order, size_t k)
{
  enum gr_level need = GR_LVL_PIX;
  for (size_t i = 0; i < k && k > 1; i++) {
    size_t x = (size_t)order[i], y = (size_t)order[(i + 1) % k];
    if (hop_of(c, 1, (int)x, (int)y)->x == GR_XFER_P2P && gr_gpu_path(c->a, x, y).nccl > need)
      need = gr_gpu_path(c->a, x, y).nccl;
  }
  return gr_nccl_level_str(need);
}

/* The name of the GPU links on a ring: xGMI between AMD GPUs, else NVLink. */
static const char *ring_link_name(const struct ctx *c, const int *order, size_t k)
{
  for (size_t i = 0; i < k && k > 1; i++) {
    struct gr_path p = gr_gpu_path(c->a, (size_t)order[i], (size_t)order[(i + 1) % k]);
    if (p.level == GR_LVL_GPULINK)
      return p.xgmi ? "xGMI" : "NVLink";
  }
  return "NVLink";
}

/* How a ring's hops move their bytes, in words; link names its GPU links. */
static void hops_text(const struct gr_ring *r, size_t k, const char *link, char *buf, size_t cap)
{
  if (r->nhops_gpulink == k)
    snprintf(buf, cap, "joined by %s", link);
  else if (r->nhops_host == k)
    snprintf(buf, cap, "every hop staged through host memory");
  else if (r->nhops_host)
    snprintf(buf, cap, "%zu of %zu hops staged through host memory", r->nhops_host, k);
  else if (r->nhops_gpulink)
    snprintf(buf, cap, "over %s and PCIe peer-to-peer", link);
  else
    snprintf(buf, cap, "peer-to-peer over PCIe");
}

/* The raised NCCL_P2P_LEVEL as an option beside a group's default figure,
 * in words, or "" when it buys nothing. */
static void tp_option_text(struct ctx *c, size_t k, double dflt_gbps, char *buf, size_t cap)
{
  int *raised = xcalloc(k + 1, sizeof(int));
  double v = c->modes_differ ? best_group(c, k, 1, raised) : 0;
  buf[0] = '\0';
  if (v > dflt_gbps * 1.01 && dflt_gbps > 0) {
    struct gr_ring rr = {.order = raised};
    char ring[256];
    ring_text(&rr, k, ring, sizeof(ring));
    snprintf(buf, cap, " With NCCL_P2P_LEVEL=%s: about %.1f GB/s (%s).", level_needed(c, raised, k), v, ring);
  }
  free(raised);
}

/* NCCL counts the communicator's GPUs: a sentence where that gives the
 * group's ring P2P the whole machine's communicator would not get. */
static void tp_rule_text(const struct ctx *c, const struct gr_prediction *p, const int *order, size_t k, char *buf,
                         size_t cap)
{
  bool matters = false;
  char why[128];
  for (size_t i = 0; i < k; i++) {
    size_t x = (size_t)order[i], y = (size_t)order[(i + 1) % k];
    matters |= hop_of(c, 0, (int)x, (int)y)->x == GR_XFER_P2P && gr_gpu_path(c->a, x, y).nccl > p->a->nccl_p2p_level;
  }
  buf[0] = '\0';
  if (matters)
    snprintf(buf, cap, " %s allows P2P up to %s in a communicator of %zu GPUs (%s).", gr_topo_collective(c->t), gr_nccl_level_str(c->level), k,
             gr_nccl_why(p->a, k, why, sizeof(why)));
}

/* Tensor parallelism over k GPUs, judged with NCCL's defaults for a
 * communicator of k GPUs (not the machine's count), with the raised
 * NCCL_P2P_LEVEL offered beside it where it helps. */
void tp_verdict(struct ctxs *cs, struct gr_prediction *p, size_t k)
{
  struct ctx *c = ctx_for(cs, k);
  int *dflt = xcalloc(k + 1, sizeof(int));
  best_group(c, k, 0, dflt);
  struct gr_ring r = {.order = dflt};
  describe_ring(c, &r, k, 0);
  count_hops(c, &r, k, 0);
  char ring[256], how[96], bw[320], more[400], rule[200], reasons[1400], bound[256];
  ring_text(&r, k, ring, sizeof(ring));
  bool sys = false;
  for (size_t i = 0; i < k; i++)
    sys |= gr_gpu_path(c->a, (size_t)dflt[i], (size_t)dflt[(i + 1) % k]).level == GR_LVL_SYS;
  enum gr_rating rating = r.nhops_gpulink == k ? GR_RATE_GOOD
                          : r.nhops_host == 0 && !sys ? GR_RATE_FAIR
                                                       : GR_RATE_POOR;
  if (k == 2 && rating == GR_RATE_FAIR)
    rating = GR_RATE_GOOD; /* two GPUs P2P: two all-reduces per layer over one link, no sharing */
  hops_text(&r, k, ring_link_name(c, dflt, k), how, sizeof(how));
  if (r.busbw_gbps > 0)
    snprintf(bw, sizeof(bw), "all-reduce about %.1f GB/s with %s's defaults (bounded by %s)", r.busbw_gbps, gr_topo_collective(c->t),
             gr_ring_bound_text(p, &r, bound, sizeof(bound)));
  else
    snprintf(bw, sizeof(bw), "all-reduce bandwidth not known (the input records no link rates)");
  tp_option_text(c, k, r.busbw_gbps, more, sizeof(more));
  tp_rule_text(c, p, dflt, k, rule, sizeof(rule));
  snprintf(reasons, sizeof(reasons), "Best group of %zu: %s, %s; %s.%s%s%s", k, ring, how, bw,
           sys ? (p->t->npackages > 1 ? " It spans both sockets." : " It spans NUMA nodes.") : "", more, rule);
  add_verdict(p, "tensor-parallel inference", (int)k, rating, reasons);
  free(dflt);
}

void jobs_verdict(struct gr_prediction *p)
{
  const struct gr_topo *t = p->t;
  char reasons[1024];
  double floor = gpu_link_floor(p->a);
  int worst_share = 1;
  for (size_t i = 0; i < p->nswitches; i++)
    if (p->switches[i].gpus > worst_share)
      worst_share = p->switches[i].gpus;
  int gen = t->ngpus ? p->a->link[t->gpus[0]].gen : 0;
  double eff = gen >= 5 ? gr_calib()->h2d_eff_gen5 : gen == 4 ? gr_calib()->h2d_eff_gen4
                                                                      : gr_calib()->h2d_eff_gen3;
  size_t off = floor > 0 ? (size_t)snprintf(reasons, sizeof(reasons),
                                             "Each GPU runs its own job; host-to-GPU copies reach about %.1f GB/s per GPU (%.0f%% of its %.1f GB/s link).",
                                             floor * eff, eff * 100, floor)
                         : (size_t)snprintf(reasons, sizeof(reasons),
                                            "Each GPU runs its own job; its host link rate is not recorded in this input.");
  if (worst_share > 1)
    snprintf(reasons + off, sizeof(reasons) - off,
             " Up to %d GPUs share one switch uplink, so loading all at once gives each about 1/%d of it.", worst_share,
             worst_share);
  add_verdict(p, "independent jobs", (int)t->ngpus, worst_share > 2 ? GR_RATE_FAIR : GR_RATE_GOOD, reasons);
}
