/* What each figure of gpurig bench is held to (gpu/bench_internal.h): the
 * link's theoretical limit, the prediction and the floor under it, per copy
 * and for all GPUs at once; the threshold checks after the run, and the
 * findings they give. The thresholds are fractions of the link's theoretical
 * rate from data/health.tsv, never per GPU model. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "facts/facts.h"
#include "facts/pcilink.h"
#include "gpu/bench_internal.h"

/* ------------------------------------------------------------- findings */

void finding(struct gr_bench_report *rep, enum gr_sev sev, const char *id, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  gr_finding_vadd(&rep->findings, sev, id, fmt, ap);
  va_end(ap);
}

/* "GPU1 0000:02:00.0" */
const char *gpu_label(const struct gr_bench_report *rep, int g, char *buf, size_t cap)
{
  if (g == GR_BENCH_HOST)
    snprintf(buf, cap, "host");
  else
    snprintf(buf, cap, "GPU%d %s", g, rep->gpus[g].busid);
  return buf;
}

/* ---------------------------------------------------------------- limits */


static int topo_node(const struct run *r, int g)
{
  const struct gr_bench_links *l = r->links;
  int tg = g >= 0 ? r->rep->gpus[g].topo_gpu : -1;
  return l->t && tg >= 0 ? l->t->gpus[tg] : -1;
}

static double h2d_eff(int gen)
{
  return gen >= 5 ? gr_calib()->h2d_eff_gen5 : gen == 4 ? gr_calib()->h2d_eff_gen4
                                                              : gr_calib()->h2d_eff_gen3;
}

/* The link between GPU g and host memory: from the topology, else from
 * what the GPU reports about its own link. */
static void host_link_of(const struct run *r, int g, struct gr_host_link *h)
{
  int node = topo_node(r, g);
  memset(h, 0, sizeof(*h));
  h->bottleneck = -1;
  if (node >= 0) {
    gr_host_link(r->links->t, node, h);
    if (h->bw_gbps > 0)
      return;
  }
  if (r->links->gpu_gen && r->links->gpu_gen[g] > 0 && r->links->gpu_width[g] > 0) {
    const int *cur = r->links->gpu_cur_width;
    h->gen = h->can_gen = r->links->gpu_gen[g];
    h->width = h->can_width = r->links->gpu_width[g];
    if (cur && cur[g] > 0 && cur[g] < h->width)
      h->width = cur[g];
    h->bw_gbps = gr_pcie_bw_gbps(h->gen, h->width);
    h->can_gbps = gr_pcie_bw_gbps(h->can_gen, h->can_width);
    h->nccl_gbps = gr_pcie_nccl_gbps(h->gen, h->width);
  }
}

static void describe_link(const struct gr_host_link *h, char *buf, size_t cap)
{
  char now[24], can[24];
  gr_pcie_label(h->gen, h->width, now, sizeof(now));
  gr_pcie_label(h->can_gen, h->can_width, can, sizeof(can));
  if (h->can_gbps > h->bw_gbps * 1.01)
    snprintf(buf, cap, "%s (capable of %s)", now, can);
  else
    snprintf(buf, cap, "%s", now);
}

void limits_host(struct run *r, struct gr_bench_result *res, int g)
{
  struct gr_host_link h;
  host_link_of(r, g, &h);
  if (h.bw_gbps <= 0)
    return;
  res->limit_gbps = h.bw_gbps;
  res->nccl_gbps = h.nccl_gbps;
  res->predicted_gbps = h.bw_gbps * h2d_eff(h.gen);
  res->floor_gbps = h.can_gbps * gr_health_consts()->bench_host_min;
  describe_link(&h, res->link, sizeof(res->link));
}

/* The GPU's memory bandwidth from the catalog: by what the driver reported,
 * else by the topology's PCI ids. 0 unknown. */
static double mem_bw_of(const struct run *r, int g)
{
  const double *bw = r->links->mem_bw_gbps;
  if (bw && bw[g] > 0)
    return bw[g];
  int node = topo_node(r, g);
  const struct gr_gpu_model *m = node >= 0 ? gr_pci_catalog(&r->links->t->pci[node]) : NULL;
  return m ? m->mem_bw_gbps : 0;
}

static void limits_local(struct run *r, struct gr_bench_result *res, int g)
{
  double bw = mem_bw_of(r, g);
  if (bw <= 0)
    return;
  /* a local copy reads and writes every byte: one side sees half the memory rate */
  res->limit_gbps = bw / 2;
  res->floor_gbps = res->limit_gbps * gr_health_consts()->bench_local_min;
  snprintf(res->link, sizeof(res->link), "memory %.0f GB/s, half each way", bw);
}

static void limits_pair(struct run *r, struct gr_bench_result *res)
{
  const struct gr_bench_links *l = r->links;
  int ta = r->rep->gpus[res->src].topo_gpu, tb = r->rep->gpus[res->dst].topo_gpu;
  if (res->via_host || !l->a || ta < 0 || tb < 0) {
    /* host-staged: each byte crosses both GPUs' host links */
    struct gr_host_link ha, hb;
    host_link_of(r, res->src, &ha);
    host_link_of(r, res->dst, &hb);
    const struct gr_host_link *lo = ha.bw_gbps > 0 && (hb.bw_gbps <= 0 || ha.bw_gbps <= hb.bw_gbps) ? &ha : &hb;
    if (lo->bw_gbps <= 0)
      return;
    res->limit_gbps = lo->bw_gbps;
    res->nccl_gbps = lo->nccl_gbps;
    bool staged = res->via_host;
    res->predicted_gbps = lo->bw_gbps * (staged ? gr_calib()->copy_host_eff : gr_calib()->copy_p2p_eff);
    res->floor_gbps = lo->can_gbps * (staged ? gr_health_consts()->bench_staged_min : gr_health_consts()->bench_p2p_min);
    describe_link(lo, res->link, sizeof(res->link));
    return;
  }
  struct gr_path path = gr_gpu_path(l->a, (size_t)ta, (size_t)tb);
  const struct gr_path *p = &path;
  if (p->bw_gbps <= 0)
    return;
  res->limit_gbps = p->bw_gbps;
  res->nccl_gbps = p->nccl_bw_gbps;
  const struct gr_pair_predict *pp = gr_pair_at(l->p, (size_t)ta, (size_t)tb);
  res->predicted_gbps = pp->best != GR_XFER_HOST ? pp->gbps : p->bw_gbps * gr_calib()->copy_p2p_eff;
  bool nvl = p->via == GR_VIA_GPULINK;
  res->floor_gbps = p->bw_gbps * (nvl ? gr_health_consts()->bench_nvlink_min : gr_health_consts()->bench_p2p_min);
  char lvl[16];
  snprintf(res->link, sizeof(res->link), "%s, %s", gr_level_str(p, lvl, sizeof(lvl)),
           nvl ? (p->xgmi ? "xGMI" : "NVLink") : "PCIe P2P");
}

void set_limits(struct run *r, struct gr_bench_result *res)
{
  switch (res->kind) {
  case GR_BK_H2D:
  case GR_BK_HOST_BIDIR:
    limits_host(r, res, res->dst);
    break;
  case GR_BK_D2H:
    limits_host(r, res, res->src);
    break;
  case GR_BK_LOCAL:
    limits_local(r, res, res->src);
    break;
  case GR_BK_P2P:
  case GR_BK_P2P_BIDIR:
  case GR_BK_P2P_READ:
  case GR_BK_P2P_BIDIR_READ:
    limits_pair(r, res);
    break;
  default:
    break;
  }
  /* bidirectional: each direction shares the link's budget with the other
   * only where the link is half-duplex; PCIe is full duplex, so the floor
   * applies per direction but at a lower fraction (host memory and the root
   * complex are shared) */
  if (res->kind == GR_BK_HOST_BIDIR || res->kind == GR_BK_P2P_BIDIR || res->kind == GR_BK_P2P_BIDIR_READ)
    res->floor_gbps *= gr_health_consts()->bench_bidir_share;
}

/* ------------------------------------ aggregate tests: limits and finding */

/* The share of its way to host memory that GPU g gets when every member
 * copies at once: its own link, or a link above it split evenly among the
 * members below it (a switch uplink, a root port's link), whichever is
 * less; *via is the pci index of the shared link that sets it, -1 none. */
static double share_of(const struct run *r, int g, const int *members, int m, int *via)
{
  struct gr_host_link own;
  host_link_of(r, g, &own);
  double share = own.bw_gbps;
  const struct gr_topo *t = r->links->t;
  *via = -1;
  int node = topo_node(r, g);
  for (int x = node >= 0 ? t->pci[node].parent : -1; x >= 0 && share > 0; x = t->pci[x].parent) {
    const struct gr_pci *p = &t->pci[x];
    double bw = p->has_link ? gr_link_bw_gbps(p) : 0;
    int below = 0;
    for (int k = 0; k < m && bw > 0; k++)
      for (int y = topo_node(r, members[k]); y >= 0; y = t->pci[y].parent)
        if (y == x) {
          below++;
          break;
        }
    if (below > 1 && bw / below < share) {
      share = bw / below;
      *via = x;
    }
  }
  return share;
}

/* "the switch uplink 0000:01:00.0 (Gen4 x16, 31.5 GB/s) that 2 GPUs share" */
static void describe_shared(const struct run *r, int x, const int *members, int m, char *buf, size_t cap)
{
  const struct gr_topo *t = r->links->t;
  const struct gr_pci *p = &t->pci[x];
  char bus[32], lab[24];
  int below = 0;
  struct gr_link_facts f;
  for (int k = 0; k < m; k++)
    for (int y = topo_node(r, members[k]); y >= 0; y = t->pci[y].parent)
      if (y == x) {
        below++;
        break;
      }
  gr_pci_busid(p, bus, sizeof(bus));
  gr_link_facts(p, &f);
  gr_pcie_label(f.gen, f.width, lab, sizeof(lab));
  snprintf(buf, cap, "the %s %s (%s, %.1f GB/s) that %d GPUs share",
           p->role == GR_ROLE_SWITCH_UP ? "switch uplink" : "link above", bus, lab, f.gbps, below);
}

/* The aggregate's limits: GPUs x the smallest share one of them gets (every
 * GPU copies the same bytes, so the slowest sets the common window), the
 * sum of their own links, and what they measured alone. */
void limits_aggregate(struct run *r, struct gr_bench_result *sum, const int *members, int m)
{
  enum gr_bench_kind alone = sum->kind == GR_BK_H2D_ALL ? GR_BK_H2D : GR_BK_D2H;
  double least = 0, slowest = 0, shares[GR_BENCH_GANG_MAX];
  int via = -1, gen = 0, vias[GR_BENCH_GANG_MAX], nlike = 0;
  bool known = true;
  for (int k = 0; k < m; k++) {
    struct gr_host_link own;
    int g = members[k], v;
    host_link_of(r, g, &own);
    double share = share_of(r, g, members, m, &v);
    shares[k] = share;
    vias[k] = v;
    known &= share > 0;
    if (share > 0 && (least == 0 || share < least)) {
      least = share;
      via = v;
      gen = own.gen;
    }
    sum->own_limits_gbps += own.bw_gbps;
    for (size_t i = 0; i < r->rep->nresults; i++) {
      const struct gr_bench_result *a = &r->rep->results[i];
      int ag = alone == GR_BK_H2D ? a->dst : a->src;
      if (a->kind == alone && a->engine == GR_ENGINE_CE && ag == g && a->status == GR_BS_OK &&
          (slowest == 0 || a->median < slowest))
        slowest = a->median;
    }
  }
  sum->alone_gbps = slowest * m;
  if (!known)
    return;
  sum->limit_gbps = least * m;
  sum->predicted_gbps = sum->limit_gbps * h2d_eff(gen);
  sum->floor_gbps = sum->limit_gbps * gr_health_consts()->bench_host_min;
  for (int k = 0; k < m; k++) { /* the other shared links that set the same share */
    bool seen = vias[k] < 0 || vias[k] == via || shares[k] > least * 1.0001;
    for (int j = 0; j < k && !seen; j++)
      seen = vias[j] == vias[k];
    nlike += !seen;
  }
  if (via >= 0) {
    describe_shared(r, via, members, m, sum->shared, sizeof(sum->shared));
    size_t len = strlen(sum->shared);
    if (nlike > 0)
      snprintf(sum->shared + len, sizeof(sum->shared) - len, ", and %d more like it", nlike);
    snprintf(sum->link, sizeof(sum->link), "%d x %.1f: shared uplinks", m, least);
  } else {
    snprintf(sum->link, sizeof(sum->link), "%d x %.1f: each GPU's own link", m, least);
  }
}

/* Whether the topology's "independent jobs" verdict rated the machine, and how. */
static const char *jobs_rating(const struct run *r)
{
  const struct gr_prediction *p = r->links->p;
  for (size_t i = 0; p && i < p->nverdicts; i++)
    if (strcmp(p->verdicts[i].workload, "independent jobs") == 0)
      return gr_rating_name(p->verdicts[i].rating);
  return NULL;
}

/* The finding that says whether the GPUs' host links stay independent when
 * all are busy: info when the aggregate reaches the floor of the limit the
 * topology gives, warn when it is far below it. */
void aggregate_finding(struct run *r, const struct gr_bench_result *sum, const int *members, int m)
{
  char verdict[96] = "", why[1024];
  bool in_topo = true; /* else the limits come from what each GPU reports, and no verdict speaks for them */
  for (int k = 0; k < m; k++)
    in_topo &= topo_node(r, members[k]) >= 0;
  const char *rating = in_topo ? jobs_rating(r) : NULL, *who = in_topo ? "the topology allows" : "their links allow";
  bool in = sum->kind == GR_BK_H2D_ALL, floors = (double)r->rep->cfg.bytes >= gr_health_consts()->bench_floor_min_mib * MIB;
  double of_alone = sum->alone_gbps > 0 ? sum->median / sum->alone_gbps : 0;
  bool low = floors && sum->floor_gbps > 0 && sum->median < sum->floor_gbps;
  if (rating)
    snprintf(verdict, sizeof(verdict), "the topology's \"independent jobs\" verdict (%s)", rating);
  else
    snprintf(verdict, sizeof(verdict), "their independence (no topology verdict covers these GPUs)");
  if (low)
    snprintf(why, sizeof(why),
             "That is under the %.1f GB/s floor of the %.1f GB/s %s all at once (%s): something the "
             "topology does not show is shared or slow (the root complex, host memory bandwidth and NUMA placement, "
             "the IOMMU), and %s does not hold in measurement.",
             sum->floor_gbps, sum->limit_gbps, who, sum->link, verdict);
  else if (of_alone >= 0.9 || of_alone == 0)
    snprintf(why, sizeof(why), "Loading every GPU's host link at once costs little: %s holds in measurement.", verdict);
  else if (sum->shared[0])
    snprintf(why, sizeof(why),
             "The shortfall is %s: each GPU gets about %.0f%% of its own rate when all are busy, as the topology "
             "predicts, so %s holds in measurement with that share.",
             sum->shared, of_alone * 100, verdict);
  else
    snprintf(why, sizeof(why),
             "The topology shows no shared link on the way to host memory, so something it does not show is shared "
             "(the root complex, the CPU's I/O die, host memory bandwidth, the IOMMU): each GPU gets about %.0f%% of "
             "its own rate when all are busy, and %s is optimistic here.",
             of_alone * 100, verdict);
  char lim[512] = "";
  if (sum->limit_gbps > 0)
    snprintf(lim, sizeof(lim), " and %.0f%% of the %.1f GB/s %s all at once (%s; their own links add up to %.1f GB/s)",
             sum->median / sum->limit_gbps * 100, sum->limit_gbps, who, sum->link, sum->own_limits_gbps);
  finding(r->rep, low ? GR_SEV_WARN : GR_SEV_INFO, "bench.host-aggregate",
          "%s%d GPUs%s at once: %.1f GB/s (total bytes / the longest GPU's time), %.0f%% of the %d x %.1f GB/s they "
          "reach alone (the slowest GPU alone: every GPU copies the same bytes)%s. %s",
          in ? "host -> " : "", sum->at_once, in ? "" : " -> host", sum->median, of_alone * 100, sum->at_once,
          sum->at_once ? sum->alone_gbps / sum->at_once : 0, lim, why);
}

/* One timed run of every member at once: the common window's aggregate and
 * each GPU's own figure. -1 when the run failed or the data was wrong (the
 * rows say so). */
/* ------------------------------------------------------- threshold checks */

/* A read (pull) clearly slower than the same pair written (push). */
static bool pull_below_push(const struct run *r, const struct gr_bench_result *res)
{
  enum gr_bench_kind push = res->kind == GR_BK_P2P_READ ? GR_BK_P2P : res->kind == GR_BK_P2P_BIDIR_READ ? GR_BK_P2P_BIDIR
                                                                                                        : GR_BK_COUNT;
  for (size_t i = 0; push != GR_BK_COUNT && i < r->rep->nresults; i++) {
    const struct gr_bench_result *w = &r->rep->results[i];
    if (w->kind == push && w->engine == res->engine && w->src == res->src && w->dst == res->dst &&
        w->status == GR_BS_OK)
      return res->median < w->median * 0.9;
  }
  return false;
}

static void below_floor(struct run *r, const struct gr_bench_result *res)
{
  char a[64], b[64], lab[256];
  const char *id = "bench.host-bw";
  if (res->kind == GR_BK_LOCAL) {
    id = "bench.local-bw";
    snprintf(lab, sizeof(lab), "%s %s", gpu_label(r->rep, res->src, a, sizeof(a)), gr_bench_kind_title(res->kind));
  } else if (res->kind == GR_BK_P2P || res->kind == GR_BK_P2P_BIDIR || res->kind == GR_BK_P2P_READ ||
             res->kind == GR_BK_P2P_BIDIR_READ) {
    bool pull = res->kind == GR_BK_P2P_READ || res->kind == GR_BK_P2P_BIDIR_READ;
    id = "bench.p2p-bw";
    snprintf(lab, sizeof(lab), "%s -> %s (%s%s%s)", gpu_label(r->rep, res->src, a, sizeof(a)),
             gpu_label(r->rep, res->dst, b, sizeof(b)), res->via_host ? "through host memory" : "direct P2P",
             pull ? ", pulled by the destination" : "",
             res->kind == GR_BK_P2P_BIDIR || res->kind == GR_BK_P2P_BIDIR_READ ? ", both directions at once" : "");
  } else {
    int g = res->kind == GR_BK_D2H ? res->src : res->dst;
    snprintf(lab, sizeof(lab), "%s %s", gpu_label(r->rep, g, a, sizeof(a)), gr_bench_kind_title(res->kind));
  }
  finding(r->rep, GR_SEV_WARN, id,
          "%s, %s copy: %.1f GB/s (median of %d), %.0f%% of the %.1f GB/s limit of %s; a healthy path gives at "
          "least %.1f GB/s.%s",
          lab, res->engine == GR_ENGINE_SM ? "SM" : "copy-engine", res->median, res->nsamples,
          res->limit_gbps > 0 ? res->median / res->limit_gbps * 100 : 0, res->limit_gbps, res->link,
          res->floor_gbps,
          strstr(res->link, "capable of") ? " The link trains below what both ends support: `gpurig doctor` "
                                           "names the cause (riser, slot, BIOS setting)."
          : res->kind == GR_BK_LOCAL ? " Memory clocks held low (power cap, thermal) or a failing GPU show this way."
          : pull_below_push(r, res) ? " The same pair written (pushed by the source) is faster: peer reads are slower "
                                      "than posted writes on this path (some AMD root complexes and PCIe switches do "
                                      "this). Code that reads peer memory (NCCL_P2P_READ_ENABLE=1, kernels loading "
                                      "a peer's buffers) gets the read rate."
                                     : " With the link at full width and speed, look at host memory placement "
                                       "(NUMA), the IOMMU mode and power-saving states (`gpurig doctor`).");
}

void check_results(struct run *r)
{
  struct gr_bench_report *rep = r->rep;
  size_t staged = 0, pairs = 0;
  char sz[32];
  bool floors = (double)rep->cfg.bytes >= gr_health_consts()->bench_floor_min_mib * MIB;
  for (size_t i = 0; i < rep->nresults; i++) {
    const struct gr_bench_result *res = &rep->results[i];
    if (res->kind == GR_BK_P2P && res->engine == GR_ENGINE_CE && res->status == GR_BS_OK) {
      pairs++;
      staged += res->via_host;
    }
    if (res->status == GR_BS_ERROR && !involves_lost(r, res->src, res->dst)) {
      char a[16], b[16];
      finding(rep, GR_SEV_FAIL, "bench.copy-error", "%s -> %s (%s, %s): the copy failed: %s",
              gr_bench_endpoint(res->src, a, sizeof(a)), gr_bench_endpoint(res->dst, b, sizeof(b)),
              gr_bench_kind_title(res->kind), gr_engine_name(res->engine), res->note ? res->note : "");
    }
    bool aggregate = res->kind == GR_BK_H2D_ALL || res->kind == GR_BK_D2H_ALL; /* their own finding */
    if (res->status == GR_BS_OK && res->floor_gbps > 0 && res->median < res->floor_gbps && floors && !aggregate)
      below_floor(r, res);
  }
  if (!floors)
    finding(rep, GR_SEV_INFO, "bench.small-copies",
            "Copies of %s are bound by per-copy latency, not by the links: the figures are not held against "
            "their floors (from %.0f MiB up they are).",
            gr_size_text(rep->cfg.bytes, sz, sizeof(sz)), gr_health_consts()->bench_floor_min_mib);
  if (staged)
    finding(rep, GR_SEV_INFO, "bench.no-peer",
            "%zu of %zu GPU pairs have no peer access from the driver: their copies went through host memory "
            "(marked h), written and read alike. NCCL does the same for them (its SHM transport). nvbandwidth "
            "waives such pairs, so these figures have no nvbandwidth counterpart: compare them only with each other.",
            staged, pairs);
  const struct gr_prediction *p = r->links->p;
  char bound[256];
  rep->ar_predicted_gbps = p && p->ngpus == rep->ngpus ? p->nccl_default.busbw_gbps : 0;
  if (rep->ar_plateau_gbps > 0 && rep->ar_predicted_gbps > 0 &&
      rep->ar_plateau_gbps < rep->ar_predicted_gbps * gr_health_consts()->bench_allreduce_min)
    finding(rep, GR_SEV_WARN, "bench.allreduce-bw",
            "All-reduce bus bandwidth plateaus at %.1f GB/s, %.0f%% of the %.1f GB/s the topology predicts for "
            "%s's defaults (%s). Run with NCCL_DEBUG=INFO to see which transport %s picked.",
            rep->ar_plateau_gbps, rep->ar_plateau_gbps / rep->ar_predicted_gbps * 100, rep->ar_predicted_gbps,
            gr_topo_collective(p->t), gr_ring_bound_text(p, &p->nccl_default, bound, sizeof(bound)),
            gr_topo_collective(p->t));
}

