/* Predictions: the entry points, the per-level search contexts, P2P
 * domains and switch budgets; the ring search is in predict_ring.c, the
 * verdicts in predict_verdict.c (analysis/predict_internal.h). */
#include "analysis/predict.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "facts/catalog.h"
#include "facts/facts.h"
#include "facts/pcilink.h"

#include "analysis/analysis_internal.h"
#include "analysis/predict_internal.h"

/* ---- entry ---- */


void predict_note(struct gr_prediction *p, const char *id, int node, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  struct gr_finding *f = gr_finding_vadd(&p->notes, GR_SEV_INFO, id, fmt, ap);
  va_end(ap);
  if (node >= 0) {
    char name[64], bus[32];
    gr_pci_label(p->t, node, name, sizeof(name));
    gr_pci_busid(&p->t->pci[node], bus, sizeof(bus));
    gr_finding_subject(f, node, name, bus);
  }
}

void add_verdict(struct gr_prediction *p, const char *workload, int gpus, enum gr_rating r, const char *reasons)
{
  p->verdicts = xrealloc(p->verdicts, (p->nverdicts + 1) * sizeof(*p->verdicts));
  p->verdicts[p->nverdicts++] = (struct gr_verdict){workload, gpus, r, xstrdup(reasons)};
}

/* How NCCL moves one GPU's data to another with P2P allowed up to level:
 * NVLink, PCIe P2P where the pair can and the level reaches, else through
 * host memory. */
static enum gr_xfer xfer_of(const struct gr_path *path, enum gr_level level)
{
  if (path->level == GR_LVL_GPULINK)
    return GR_XFER_GPULINK;
  return path->p2p_capable && path->nccl <= level ? GR_XFER_P2P : GR_XFER_HOST;
}

static enum gr_xfer xfer_at(const struct gr_prediction *p, size_t i, size_t j, enum gr_level level)
{
  struct gr_path path = gr_gpu_path(p->a, i, j);
  return xfer_of(&path, level);
}

/* p->pairs: one entry per ordered pair of classes, then one per GPU for the
 * GPU with itself (gr_pair_at). Every pair of two classes has the same level
 * and P2P support (analysis/classes.c), so its class pair's stand-in speaks
 * for it. */
static void classify_one(const struct gr_prediction *p, struct gr_pair_predict *pp, size_t i, size_t j)
{
  struct gr_path path = gr_gpu_path(p->a, i, j);
  pp->p2p_capable = path.p2p_capable; /* the analysis's word: GPUs, driver, platform */
  pp->best = xfer_of(&path, GR_LVL_SYS);
  pp->nccl = xfer_of(&path, p->a->nccl_p2p_level);
}

static void classify_pairs(struct gr_prediction *p)
{
  const struct gr_analysis *a = p->a;
  size_t nc = a->nclasses, i, j;
  for (size_t x = 0; x < nc; x++)
    for (size_t y = 0; y < nc; y++)
      if (gr_class_pair_rep(a, x, y, &i, &j))
        classify_one(p, &p->pairs[x * nc + y], i, j);
  for (size_t g = 0; g < p->ngpus; g++)
    classify_one(p, &p->pairs[nc * nc + g], g, g);
}

/* One copy alone: the narrowest resource on its path, once per class pair
 * (the GPU with itself copies nothing: 0). */
static void copy_rates(const struct ctx *c, struct gr_prediction *p)
{
  const struct gr_analysis *a = p->a;
  size_t nc = a->nclasses, i, j;
  /* a copy runs on the copy engines: copy_nvlink_eff, not NCCL's SM-driven
   * ring_nvlink_eff; looked up once, not per pair and use */
  double copy_eff[GR_XFER_HOST + 1];
  copy_eff[GR_XFER_GPULINK] = gr_calib()->copy_nvlink_eff;
  copy_eff[GR_XFER_P2P] = gr_calib()->copy_p2p_eff;
  copy_eff[GR_XFER_HOST] = gr_calib()->copy_host_eff;
  for (size_t x = 0; x < nc; x++)
    for (size_t y = 0; y < nc; y++) {
      if (!gr_class_pair_rep(a, x, y, &i, &j))
        continue;
      struct gr_pair_predict *pp = &p->pairs[x * nc + y];
      const struct hop *h = hop_of(c, 1, (int)i, (int)j);
      double bw = INFINITY;
      for (int r = 0; r < h->nres; r++) {
        int res = hop_res(c, h, r, (int)i, (int)j);
        double e = HOP_GIVEN(c, h, res) ? 1.0 : copy_eff[pp->best];
        if (HOP_CAP(c, h, res) * e < bw)
          bw = HOP_CAP(c, h, res) * e;
      }
      pp->gbps = isinf(bw) ? 0 : bw;
    }
  for (size_t g = 0; g < p->ngpus; g++)
    p->pairs[nc * nc + g].gbps = 0;
}

/* Resource id r of a hop built between GPUs ri and rj, as an own use where
 * it is a link of ri's or rj's own bridges or its NVLink port (the uses
 * gr_class_rename would rename), else r itself. */
static int own_res(const struct ctx *c, int r, size_t ri, size_t rj)
{
  int np = (int)c->t->npci;
  if (r < 2 * np) {
    const struct gr_gpu_chains *ch = c->a->chains;
    int node = r / 2, owner = ch->owner[node];
    if (owner < 0 || (owner != (int)ri && owner != (int)rj))
      return r;
    return OWN_RES(owner == (int)ri ? 0 : 1, 0, ch->pos[node], r % 2);
  }
  if (r >= c->nv_base && r < c->nv_base + 2 * (int)c->n) {
    size_t g = (size_t)(r - c->nv_base) / 2;
    if (g != ri && g != rj)
      return r;
    return OWN_RES(g == ri ? 0 : 1, 1, 0, (r - c->nv_base) % 2);
  }
  return r; /* the socket link, a socket's memory */
}

/* Both modes' hops from GPU i to j into h0 and h1 (one copy of the uses
 * where the modes agree); own: store the GPUs' own uses as such (a class
 * pair's hop), else the ids as they are (a GPU to itself). */
static void hops_build(struct ctx *c, const struct gr_prediction *p, struct hop_build *b, size_t i, size_t j,
                       struct hop *h0, struct hop *h1, bool own)
{
  enum gr_xfer d = xfer_at(p, i, j, c->level), best = gr_pair_at(p, i, j)->best;
  for (int m = 0; m < 2; m++) {
    struct hop *h = m ? h1 : h0;
    if (m && best == d) { /* the same path in both modes: one copy of its uses */
      *h1 = *h0;
      return;
    }
    build_hop(c, h, b, i, j, m ? best : d);
    for (int r = 0; r < b->nres && own; r++)
      b->res[r] = own_res(c, b->res[r], i, j);
    hop_store(c, b, h);
  }
  c->modes_differ = true;
}

/* Every resource's capacity, from what it is: a PCIe link direction, the
 * socket link, a socket's memory (the figures build_hop gives its uses). */
static void res_caps(struct ctx *c)
{
  const struct gr_topo *t = c->t;
  for (size_t x = 0; x < t->npci; x++)
    if (c->a->link[x].present && c->a->link[x].gbps > 0)
      c->res_cap[2 * x] = c->res_cap[2 * x + 1] = c->a->link[x].gbps;
  for (int s = 0; s < 2 && c->socket_gbps > 0; s++) {
    c->res_cap[2 * t->npci + (size_t)s] = c->socket_gbps;
    c->res_given[2 * t->npci + (size_t)s] = true;
  }
  for (size_t k = 0; k < t->npackages; k++) {
    const struct gr_package *pk = &t->packages[k];
    size_t res = (size_t)c->nv_base + 2 * c->n + k;
    c->res_cap[res] = pk->mem_channels && pk->mem_mts ? pk->mem_channels * pk->mem_mts * 8.0 / 1000.0 : 0;
    c->res_given[res] = true;
  }
}

/* The search's tables for p's classified pairs: every class pair's hop in
 * both modes (mode 0 with NCCL's default level for a communicator of the
 * size that gives `level`), each GPU's to itself, and the NVLink sums.
 * ctx_close frees them. */
static void ctx_open(struct ctx *c, const struct gr_prediction *p, enum gr_level level)
{
  const struct gr_topo *t = p->t;
  const struct gr_analysis *a = p->a;
  size_t n = t->ngpus, nc = a->nclasses, i, j;
  *c = (struct ctx){.t = t, .a = a, .n = n, .level = level, .cls = a->gpu_class, .nc = nc,
                    .chain_off = a->chains->off, .chain_nodes = a->chains->nodes, .nv_base = (int)(2 * t->npci + 2)};
  c->socket_gbps = a->socket_nccl_gbps; /* the analysis's figure: a rig's declared one, else NCCL's */
  c->nres = 2 * t->npci + 2 + 2 * n + t->npackages + 1;
  c->count = xcalloc(c->nres + 1, sizeof(int));
  c->pcount = xcalloc(c->nres + 1, sizeof(int));
  c->out_left = xcalloc(c->nres + 1, sizeof(int));
  c->in_left = xcalloc(c->nres + 1, sizeof(int));
  c->hops = xcalloc(2 * nc * nc + 1, sizeof(*c->hops));
  c->diag = xcalloc(2 * n + 1, sizeof(*c->diag));
  c->res_cap = xcalloc(c->nres + 1, sizeof(double));
  c->res_given = xcalloc(c->nres + 1, sizeof(bool));
  c->ring_eff[GR_XFER_GPULINK] = gr_calib()->ring_nvlink_eff;
  c->ring_eff[GR_XFER_P2P] = gr_calib()->ring_p2p_eff;
  c->ring_eff[GR_XFER_HOST] = gr_calib()->ring_host_eff;
  res_caps(c);
  struct hop_build *b = xmalloc(sizeof(*b));
  predict_nvlink_tables(c);
  for (size_t x = 0; x < nc; x++)
    for (size_t y = 0; y < nc; y++)
      if (gr_class_pair_rep(a, x, y, &i, &j))
        hops_build(c, p, b, i, j, &c->hops[x * nc + y], &c->hops[nc * nc + x * nc + y], true);
  for (size_t g = 0; g < n; g++)
    hops_build(c, p, b, g, g, &c->diag[g], &c->diag[n + g], false);
  if (!c->pool_res) { /* no hop uses anything (one GPU): still valid pointers */
    c->pool_res = xcalloc(1, sizeof(int));
  }
  free(b);
}

/* The search tables for each NCCL level a communicator size may get, each
 * opened when first asked for: the level depends on how many GPUs the
 * communicator has (NCCL's AMD rule), so a group of 2 may differ from the
 * machine. */

struct ctx *ctx_for(struct ctxs *cs, size_t k)
{
  enum gr_level l = gr_nccl_p2p_level_for(cs->p->a, k, NULL);
  if (!cs->open[l]) {
    ctx_open(&cs->c[l], cs->p, l);
    cs->open[l] = true;
  }
  return &cs->c[l];
}

static void ctx_close(struct ctx *c)
{
  free(c->count);
  free(c->pcount);
  free(c->out_left);
  free(c->in_left);
  free(c->hops);
  free(c->diag);
  free(c->pool_res);
  free(c->res_cap);
  free(c->res_given);
  free(c->nvls_fabric);
  free(c->near);
  free(c->rank);
  free(c->rank_n);
}

/* P2P domains by class pair: where a class pair's stand-in talks P2P
 * without crossing a socket, every pair of the two classes does, so both
 * classes' members join one domain: each class's members are joined to its
 * first once, and the classes' firsts per such pair (classes^2 + n, not
 * n^2). */
static void p2p_domains(struct gr_prediction *p)
{
  const struct gr_analysis *a = p->a;
  size_t n = p->ngpus, nc = a->nclasses, i, j;
  int *dom = xmalloc((n + 1) * sizeof(int)), *size = xcalloc(n + 1, sizeof(int));
  bool *joined = xcalloc(nc + 1, sizeof(bool)); /* a class's members joined to its first */
  for (size_t g = 0; g < n; g++)
    dom[g] = (int)g;
  for (size_t x = 0; x < nc; x++)
    for (size_t y = 0; y < nc; y++) {
      if (!gr_class_pair_rep(a, x, y, &i, &j) || !p->pairs[x * nc + y].p2p_capable ||
          gr_gpu_path(a, i, j).level == GR_LVL_SYS)
        continue;
      for (int e = 0; e < 2; e++) {
        size_t z = e ? y : x;
        for (size_t m = a->class_start[z] + 1; m < a->class_start[z + 1] && !joined[z]; m++)
          gr_uf_union(dom, a->class_gpus[a->class_start[z]], a->class_gpus[m]);
        joined[z] = true;
      }
      gr_uf_union(dom, a->class_gpus[a->class_start[x]], a->class_gpus[a->class_start[y]]);
    }
  free(joined);
  p->largest_p2p_domain = n ? 1 : 0;
  for (size_t g = 0; g < n; g++) {
    int r = gr_uf_find(dom, (int)g);
    p->ndomains += r == (int)g; /* each domain has one root: counted once */
    if (++size[r] > p->largest_p2p_domain)
      p->largest_p2p_domain = size[r];
  }
  free(size);
  free(dom);
}

/* What lies below each switch: per upstream port, its downstream links'
 * lanes and devices, in one pass over the nodes (a pass per switch was
 * npci^2). */
struct below_switch {
  int down_lanes, gpus, nvme, nics;
  int first;             /* the first GPU below it, -1 none */
  bool p2p;              /* two GPUs below it can talk P2P */
};

static struct below_switch *switches_below(const struct gr_prediction *p)
{
  const struct gr_topo *t = p->t;
  struct below_switch *sw = xcalloc(t->npci + 1, sizeof(*sw));
  for (size_t i = 0; i < t->npci; i++)
    sw[i].first = -1;
  for (size_t k = 0; k < t->npci; k++) {
    const struct gr_pci *d = &t->pci[k];
    if (d->parent < 0 || t->pci[d->parent].role != GR_ROLE_SWITCH_DOWN || t->pci[d->parent].parent < 0)
      continue;
    struct below_switch *b = &sw[t->pci[d->parent].parent];
    b->down_lanes += p->a->link[k].width;
    b->gpus += d->kind == GR_KIND_GPU;
    if (d->kind == GR_KIND_GPU && d->gpu_index >= 0) {
      if (b->first >= 0)
        b->p2p |= gr_pair_at(p, (size_t)b->first, (size_t)d->gpu_index)->p2p_capable;
      else
        b->first = d->gpu_index;
    }
    b->nvme += d->kind == GR_KIND_NVME;
    b->nics += d->kind == GR_KIND_NIC;
  }
  return sw;
}

static void switch_notes(struct gr_prediction *p, const struct gr_switch_budget *b, bool p2p)
{
  int i = b->node;
  char bus[32];
  gr_pci_busid(&p->t->pci[i], bus, sizeof(bus));
  if (b->lanes && b->down_lanes + b->up_lanes > b->lanes)
    predict_note(p, "predict.switch-lanes", i, "Switch %s has %d lanes but its links use %d (x%d up, %d down): this wiring cannot exist as described.",
                 bus, b->lanes, b->down_lanes + b->up_lanes, b->up_lanes, b->down_lanes);
  if (b->gpus > 1 && b->oversubscription > 1.0 && p2p)
    predict_note(p, "predict.switch-uplink", i, "Switch %s: %d GPU%s share an x%d uplink (%d lanes down, %.0f:1): P2P inside the switch runs at full speed, but traffic to the CPU, host memory and the other side is shared.",
                 bus, b->gpus, b->gpus == 1 ? "" : "s", b->up_lanes, b->down_lanes, b->oversubscription);
  else if (b->gpus > 1 && b->oversubscription > 1.0)
    predict_note(p, "predict.switch-uplink", i, "Switch %s: %d GPU%s share an x%d uplink (%d lanes down, %.0f:1) and cannot do P2P, so all their traffic, between them too, goes up that link to host memory.",
                 bus, b->gpus, b->gpus == 1 ? "" : "s", b->up_lanes, b->down_lanes, b->oversubscription);
  if (b->nvme && b->gpus)
    predict_note(p, "predict.switch-nvme", i, "Switch %s carries %d NVMe drive%s beside %d GPU%s: data loading competes with GPU traffic on its uplink.",
                 bus, b->nvme, b->nvme == 1 ? "" : "s", b->gpus, b->gpus == 1 ? "" : "s");
}

static void switch_budgets(struct gr_prediction *p)
{
  const struct gr_topo *t = p->t;
  struct below_switch *sw = switches_below(p);
  for (size_t i = 0; i < t->npci; i++) {
    const struct gr_pci *up = &t->pci[i];
    if (up->role != GR_ROLE_SWITCH_UP)
      continue;
    struct gr_switch_budget b = {.node = (int)i, .lanes = up->lanes, .down_lanes = sw[i].down_lanes,
                                 .up_lanes = p->a->link[i].width, .gpus = sw[i].gpus, .nvme = sw[i].nvme,
                                 .nics = sw[i].nics};
    b.oversubscription = b.up_lanes ? (double)b.down_lanes / b.up_lanes : 0;
    p->switches = xrealloc(p->switches, (p->nswitches + 1) * sizeof(*p->switches));
    p->switches[p->nswitches++] = b;
    switch_notes(p, &b, sw[i].p2p);
  }
  free(sw);
}

/* The whole-machine rings, with NCCL's defaults and with NCCL_P2P_LEVEL
 * raised, and the level that takes. */
static void machine_rings(struct ctx *c, struct gr_prediction *p)
{
  size_t n = c->n;
  int *all = xmalloc((n + 1) * sizeof(int));
  for (size_t i = 0; i < n; i++)
    all[i] = (int)i;
  p->nccl_default.order = xcalloc(n + 1, sizeof(int));
  p->best.order = xcalloc(n + 1, sizeof(int));
  best_ring(c, all, n, 0, p->nccl_default.order);
  best_ring(c, all, n, 1, p->best.order);
  describe_ring(c, &p->nccl_default, n, 0);
  describe_ring(c, &p->best, n, 1);
  count_hops(c, &p->nccl_default, n, 0);
  count_hops(c, &p->best, n, 1);
  p->best_needs_p2p_level = p->best.busbw_gbps > p->nccl_default.busbw_gbps * 1.01;
  p->best_p2p_level = level_needed(c, p->best.order, n);
  if (!p->best_needs_p2p_level) {
    /* the setting buys nothing: report the default ring as the best */
    memcpy(p->best.order, p->nccl_default.order, n * sizeof(int));
    describe_ring(c, &p->best, n, 0);
    count_hops(c, &p->best, n, 0);
  }
  free(all);
}

void ctxs_close(struct ctxs *cs)
{
  for (size_t l = 0; l <= GR_LVL_SYS; l++)
    if (cs->open[l])
      ctx_close(&cs->c[l]);
}

void gr_predict(const struct gr_topo *t, const struct gr_analysis *a, struct gr_prediction *p)
{
  memset(p, 0, sizeof(*p));
  p->t = t;
  p->a = a;
  p->ngpus = t->ngpus;
  /* one per ordered pair of classes, then one per GPU for itself (gr_pair_at) */
  p->pairs = xcalloc(a->nclasses * a->nclasses + p->ngpus + 1, sizeof(*p->pairs));
  classify_pairs(p);
  struct ctxs cs = {.p = p};
  struct ctx *c = ctx_for(&cs, p->ngpus);
  copy_rates(c, p);
  p2p_domains(p);
  machine_rings(c, p);
  switch_budgets(p);
  nic_notes(p);
  if (a->gpulink_unrecorded) {
    /* PCIe-only verdicts beside NVSwitches would be presented as fact while
     * the GPUs most likely talk over NVLink: none is given */
    predict_note(p, "predict.no-gpulink", -1, "No verdicts: the GPUs sit beside NVSwitches but this input records no NVLink and the catalog does not know their links, so every GPU figure here is PCIe only. Run gpurig on the machine (it reads NVLink from the driver) or describe it in a rig with `nvswitch`.");
  } else if (p->ngpus) { /* no GPU (none, or accelerators NCCL does not drive): no verdict */
    training_verdict(c, p);
    for (size_t k = 2; k <= p->ngpus && k <= 8; k *= 2)
      tp_verdict(&cs, p, k);
    jobs_verdict(p);
  }
  ctxs_close(&cs);
}

void gr_predict_groups(struct gr_prediction *p, const size_t *sizes, size_t nsizes)
{
  free(p->group_busbw_gbps);
  free(p->group_busbw_raised_gbps);
  free(p->group_p2p_level);
  p->group_busbw_gbps = xcalloc(p->ngpus + 1, sizeof(double));
  p->group_busbw_raised_gbps = xcalloc(p->ngpus + 1, sizeof(double));
  p->group_p2p_level = xcalloc(p->ngpus + 1, sizeof(const char *));
  if (p->ngpus < 3) /* no group smaller than the machine */
    return;
  struct ctxs cs = {.p = p};
  int *order = xmalloc((p->ngpus + 1) * sizeof(int));
  /* 64: the most GPUs a plan spreads one job over (--gpus, --tp) */
  for (size_t k = 2; k < p->ngpus && k <= 64; k++) {
    bool asked = !sizes;
    for (size_t i = 0; i < nsizes && sizes; i++)
      asked |= sizes[i] == k;
    if (!asked) /* a plan asks for its TP and data-parallel group sizes only */
      continue;
    struct ctx *c = ctx_for(&cs, k);
    p->group_busbw_gbps[k] = best_group(c, k, 0, order);
    /* a raised level changes only host-staged hops: when the best default
     * ring has none, it runs the same with it, and the search is skipped */
    bool host = false;
    for (size_t i = 0; i < k; i++)
      host |= hop_of(c, 0, order[i], order[(i + 1) % k])->x == GR_XFER_HOST;
    double raised = c->modes_differ && host ? best_group(c, k, 1, order) : 0;
    if (raised > p->group_busbw_gbps[k] * 1.01) {
      p->group_busbw_raised_gbps[k] = raised;
      p->group_p2p_level[k] = level_needed(c, order, k);
    }
  }
  free(order);
  ctxs_close(&cs);
}

void gr_prediction_free(struct gr_prediction *p)
{
  if (!p)
    return;
  free(p->pairs);
  free(p->group_busbw_gbps);
  free(p->group_busbw_raised_gbps);
  free(p->group_p2p_level);
  free(p->nccl_default.order);
  free(p->best.order);
  free(p->switches);
  for (size_t i = 0; i < p->nverdicts; i++)
    free(p->verdicts[i].reasons);
  free(p->verdicts);
  gr_findings_free(&p->notes);
  memset(p, 0, sizeof(*p));
}

const struct gr_pair_predict *gr_pair_at(const struct gr_prediction *p, size_t i, size_t j)
{
  size_t nc = p->a->nclasses;
  if (i == j)
    return &p->pairs[nc * nc + i];
  return &p->pairs[(size_t)p->a->gpu_class[i] * nc + (size_t)p->a->gpu_class[j]];
}

const char *gr_xfer_name(enum gr_xfer x)
{
  return x == GR_XFER_GPULINK ? "nvlink" : x == GR_XFER_P2P ? "p2p" : "host";
}

const char *gr_rating_name(enum gr_rating r)
{
  return r == GR_RATE_GOOD ? "good" : r == GR_RATE_FAIR ? "fair" : "poor";
}
