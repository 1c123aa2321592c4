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
static enum gr_xfer xfer_at(const struct gr_prediction *p, size_t i, size_t j, enum gr_level level)
{
  struct gr_path pv = gr_gpu_path(p->a, i, j);
  const struct gr_path *path = &pv;
  if (path->level == GR_LVL_GPULINK)
    return GR_XFER_GPULINK;
  return path->p2p_capable && path->nccl <= level ? GR_XFER_P2P : GR_XFER_HOST;
}

static void classify_pairs(struct gr_prediction *p)
{
  size_t n = p->ngpus;
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; j < n; j++) {
      struct gr_pair_predict *pp = &p->pairs[i * n + j];
      pp->p2p_capable = gr_gpu_path(p->a, i, j).p2p_capable; /* the analysis's word: GPUs, driver, platform */
      pp->best = xfer_at(p, i, j, GR_LVL_SYS);
      pp->nccl = xfer_at(p, i, j, p->a->nccl_p2p_level);
    }
}

/* One copy alone: the narrowest resource on its path. */
static void copy_rates(const struct ctx *c, struct gr_prediction *p)
{
  size_t n = c->n;
  /* a copy runs on the copy engines: copy_nvlink_eff, not NCCL's SM-driven
   * ring_nvlink_eff; looked up once, not per pair and use */
  double copy_eff[GR_XFER_HOST + 1];
  copy_eff[GR_XFER_GPULINK] = gr_calib()->copy_nvlink_eff;
  copy_eff[GR_XFER_P2P] = gr_calib()->copy_p2p_eff;
  copy_eff[GR_XFER_HOST] = gr_calib()->copy_host_eff;
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; j < n; j++) {
      struct gr_pair_predict *pp = &p->pairs[i * n + j];
      const struct hop *h = hop_of(c, 1, (int)i, (int)j);
      double bw = INFINITY;
      for (int r = 0; r < h->nres; r++) {
        double e = HOP_GIVEN(c, h, r) ? 1.0 : copy_eff[pp->best];
        if (HOP_CAP(c, h, r) * e < bw)
          bw = HOP_CAP(c, h, r) * e;
      }
      pp->gbps = i == j || isinf(bw) ? 0 : bw;
    }
}

/* Resource id r of a hop between GPUs ri and rj, renamed for GPUs i and j
 * of the same classes (gr_class_rename): a link direction of ri's or rj's
 * own bridges, or its NVLink port, becomes i's or j's. */
static inline int rename_res(const struct ctx *c, int r, size_t ri, size_t rj, size_t i, size_t j)
{
  int np = (int)c->t->npci, nv = 2 * np + 2;
  if (r < 2 * np) { /* gr_class_rename, inline: it runs once per use of every copied hop */
    const struct gr_gpu_chains *ch = c->a->chains;
    int node = r / 2, owner = ch->owner[node];
    if (owner < 0 || (owner != (int)ri && owner != (int)rj))
      return r;
    return ch->nodes[ch->off[owner == (int)ri ? i : j] + ch->pos[node]] * 2 + r % 2;
  }
  if (r >= nv && r < nv + 2 * (int)c->n) {
    size_t g = (size_t)(r - nv) / 2;
    g = g == ri ? i : g == rj ? j : g;
    return nv + (int)g * 2 + (r - nv) % 2;
  }
  return r; /* the socket link, a socket's memory */
}

/* Hop `to` as a copy of `from` (GPUs ri to rj) for GPUs i to j: its uses
 * renamed and appended to the pool, each with its resource's capacity. */
static void hop_copy(struct ctx *c, const struct hop *from, struct hop *to, size_t ri, size_t rj, size_t i, size_t j)
{
  *to = *from;
  to->off = (uint32_t)c->npool;
  if (c->npool + from->nres > c->pool_cap_n) {
    c->pool_cap_n = (c->pool_cap_n + from->nres) * 2;
    c->pool_res = xrealloc(c->pool_res, c->pool_cap_n * sizeof(int));
  }
  for (int u = 0; u < from->nres; u++) {
    int old = c->pool_res[from->off + u], id = rename_res(c, old, ri, rj, i, j);
    c->pool_res[c->npool++] = id;
    if (!from->nvlink) {
      c->res_cap[id] = c->res_cap[old];
      c->res_given[id] = c->res_given[old];
    }
  }
}

/* Both modes' hops from GPU i to j, built (and both mode tables' entries
 * shared where the modes agree). */
static void hops_build(struct ctx *c, const struct gr_prediction *p, struct hop_build *b, size_t i, size_t j)
{
  size_t n = c->n;
  enum gr_xfer d = xfer_at(p, i, j, c->level), best = p->pairs[i * n + j].best;
  build_hop(c, &c->hops[i * n + j], b, i, j, d);
  hop_store(c, b, &c->hops[i * n + j]);
  if (best == d) { /* the same path in both modes: one copy of its uses */
    c->hops[n * n + i * n + j] = c->hops[i * n + j];
    return;
  }
  build_hop(c, &c->hops[n * n + i * n + j], b, i, j, best);
  hop_store(c, b, &c->hops[n * n + i * n + j]);
  c->modes_differ = true;
}

/* Both modes' hops from GPU i to j as copies of rep[0] to rep[1]'s, of the
 * same classes: the same kinds, capacities and sharing, renamed. */
static void hops_copy(struct ctx *c, const int *rep, size_t i, size_t j)
{
  size_t n = c->n, ri = (size_t)rep[0], rj = (size_t)rep[1];
  const struct hop *f0 = &c->hops[ri * n + rj], *f1 = &c->hops[n * n + ri * n + rj];
  hop_copy(c, f0, &c->hops[i * n + j], ri, rj, i, j);
  if (f1->off == f0->off && f1->nres == f0->nres && f1->x == f0->x)
    c->hops[n * n + i * n + j] = c->hops[i * n + j];
  else
    hop_copy(c, f1, &c->hops[n * n + i * n + j], ri, rj, i, j);
}

/* The search's tables for p's classified pairs: every hop in both modes
 * (mode 0 with NCCL's default level for a communicator of the size that
 * gives `level`) and the NVLink sums. ctx_close frees them. */
static void ctx_open(struct ctx *c, const struct gr_prediction *p, enum gr_level level)
{
  const struct gr_topo *t = p->t;
  size_t n = t->ngpus;
  *c = (struct ctx){.t = t, .a = p->a, .n = n, .level = level};
  c->socket_gbps = p->a->socket_nccl_gbps; /* the analysis's figure: a rig's declared one, else NCCL's */
  c->nres = 2 * t->npci + 2 + 2 * n + t->npackages + 1;
  c->count = xcalloc(c->nres + 1, sizeof(int));
  c->pcount = xcalloc(c->nres + 1, sizeof(int));
  c->out_left = xcalloc(c->nres + 1, sizeof(int));
  c->in_left = xcalloc(c->nres + 1, sizeof(int));
  c->hops = xcalloc(2 * n * n + 1, sizeof(*c->hops));
  c->res_cap = xcalloc(c->nres + 1, sizeof(double));
  c->res_given = xcalloc(c->nres + 1, sizeof(bool));
  c->ring_eff[GR_XFER_GPULINK] = gr_calib()->ring_nvlink_eff;
  c->ring_eff[GR_XFER_P2P] = gr_calib()->ring_p2p_eff;
  c->ring_eff[GR_XFER_HOST] = gr_calib()->ring_host_eff;
  struct hop_build *b = xmalloc(sizeof(*b));
  predict_nvlink_tables(c);
  /* one pair per two GPU classes is built, the others copied from it
   * (analysis/classes.c): at 512 GPUs of 64 switches 4,096 walks, not 262,144 */
  const struct gr_analysis *a = p->a;
  size_t nc = a->gpu_class ? a->nclasses : 0;
  int *rep = xmalloc((nc * nc + 1) * 2 * sizeof(int));
  for (size_t k = 0; k < nc * nc; k++)
    rep[2 * k] = -1;
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; j < n; j++) {
      int *r = nc && i != j ? rep + 2 * ((size_t)a->gpu_class[i] * nc + (size_t)a->gpu_class[j]) : NULL;
      if (r && r[0] >= 0) {
        hops_copy(c, r, i, j);
        continue;
      }
      hops_build(c, p, b, i, j);
      if (r) {
        r[0] = (int)i;
        r[1] = (int)j;
      }
    }
  free(rep);
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
  free(c->pool_res);
  free(c->res_cap);
  free(c->res_given);
  free(c->nvls_fabric);
}

static void p2p_domains(struct gr_prediction *p)
{
  size_t n = p->ngpus;
  int *dom = xmalloc((n + 1) * sizeof(int)), *size = xcalloc(n + 1, sizeof(int));
  for (size_t i = 0; i < n; i++)
    dom[i] = (int)i;
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; j < n; j++)
      if (i != j && p->pairs[i * n + j].p2p_capable && gr_gpu_path(p->a, i, j).level != GR_LVL_SYS)
        gr_uf_union(dom, (int)i, (int)j);
  p->largest_p2p_domain = n ? 1 : 0;
  for (size_t i = 0; i < n; i++) {
    int r = gr_uf_find(dom, (int)i);
    p->ndomains += r == (int)i; /* a root is its domain's lowest GPU: counted once */
    if (++size[r] > p->largest_p2p_domain)
      p->largest_p2p_domain = size[r];
  }
  free(size);
  free(dom);
}

static void switch_budgets(struct gr_prediction *p)
{
  const struct gr_topo *t = p->t;
  for (size_t i = 0; i < t->npci; i++) {
    const struct gr_pci *up = &t->pci[i];
    if (up->role != GR_ROLE_SWITCH_UP)
      continue;
    struct gr_switch_budget b = {.node = (int)i, .lanes = up->lanes};
    bool p2p = false; /* two GPUs below it can talk P2P */
    int first = -1;
    b.up_lanes = p->a->link[i].width;
    for (size_t k = 0; k < t->npci; k++) {
      const struct gr_pci *d = &t->pci[k];
      if (d->parent < 0 || t->pci[d->parent].parent != (int)i || t->pci[d->parent].role != GR_ROLE_SWITCH_DOWN)
        continue;
      b.down_lanes += p->a->link[k].width;
      b.gpus += d->kind == GR_KIND_GPU;
      if (d->kind == GR_KIND_GPU && d->gpu_index >= 0) {
        if (first >= 0)
          p2p |= p->pairs[(size_t)first * p->ngpus + (size_t)d->gpu_index].p2p_capable;
        else
          first = d->gpu_index;
      }
      b.nvme += d->kind == GR_KIND_NVME;
      b.nics += d->kind == GR_KIND_NIC;
    }
    b.oversubscription = b.up_lanes ? (double)b.down_lanes / b.up_lanes : 0;
    p->switches = xrealloc(p->switches, (p->nswitches + 1) * sizeof(*p->switches));
    p->switches[p->nswitches++] = b;
    char bus[32];
    gr_pci_busid(up, bus, sizeof(bus));
    if (b.lanes && b.down_lanes + b.up_lanes > b.lanes)
      predict_note(p, "predict.switch-lanes", (int)i, "Switch %s has %d lanes but its links use %d (x%d up, %d down): this wiring cannot exist as described.",
                   bus, b.lanes, b.down_lanes + b.up_lanes, b.up_lanes, b.down_lanes);
    if (b.gpus > 1 && b.oversubscription > 1.0 && p2p)
      predict_note(p, "predict.switch-uplink", (int)i, "Switch %s: %d GPU%s share an x%d uplink (%d lanes down, %.0f:1): P2P inside the switch runs at full speed, but traffic to the CPU, host memory and the other side is shared.",
                   bus, b.gpus, b.gpus == 1 ? "" : "s", b.up_lanes, b.down_lanes, b.oversubscription);
    else if (b.gpus > 1 && b.oversubscription > 1.0)
      predict_note(p, "predict.switch-uplink", (int)i, "Switch %s: %d GPU%s share an x%d uplink (%d lanes down, %.0f:1) and cannot do P2P, so all their traffic, between them too, goes up that link to host memory.",
                   bus, b.gpus, b.gpus == 1 ? "" : "s", b.up_lanes, b.down_lanes, b.oversubscription);
    if (b.nvme && b.gpus)
      predict_note(p, "predict.switch-nvme", (int)i, "Switch %s carries %d NVMe drive%s beside %d GPU%s: data loading competes with GPU traffic on its uplink.",
                   bus, b.nvme, b.nvme == 1 ? "" : "s", b.gpus, b.gpus == 1 ? "" : "s");
  }
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

static void ctxs_close(struct ctxs *cs)
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
  p->pairs = xcalloc(p->ngpus * p->ngpus + 1, sizeof(*p->pairs));
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
  return &p->pairs[i * p->ngpus + j];
}

const char *gr_xfer_name(enum gr_xfer x)
{
  return x == GR_XFER_GPULINK ? "nvlink" : x == GR_XFER_P2P ? "p2p" : "host";
}

const char *gr_rating_name(enum gr_rating r)
{
  return r == GR_RATE_GOOD ? "good" : r == GR_RATE_FAIR ? "fair" : "poor";
}
