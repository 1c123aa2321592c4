/* The ring search: each GPU pair's hop as a list of shared resources, the
 * exact ring search (k <= 9) and the greedy one above it, and what bounds a
 * ring (analysis/predict_internal.h). */
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

static const struct gr_package *package_at(const struct gr_topo *t, int os_index)
{
  for (size_t i = 0; i < t->npackages; i++)
    if (t->packages[i].os_index == os_index)
      return &t->packages[i];
  return NULL;
}

/* ---- paths as lists of shared resources ---- */

static void hop_add(struct hop_build *h, int res, double cap, bool effective)
{
  if (cap <= 0 || h->nres >= HOP_MAX_RES)
    return;
  h->res[h->nres] = res;
  h->cap[h->nres] = cap;
  h->effective[h->nres] = effective;
  h->nres++;
}

/* Links from x up to (not including) stop, in direction dir (0 up, 1 down). */
static void add_links(const struct ctx *c, struct hop_build *h, int x, int stop, int dir)
{
  for (; x >= 0 && x != stop; x = c->t->pci[x].parent)
    if (c->a->link[x].present)
      hop_add(h, x * 2 + dir, c->a->link[x].gbps, false);
}

/* Fills hop hd (its kind and efficiency) and h (its resource uses). */
void build_hop(const struct ctx *c, struct hop *hd, struct hop_build *h, size_t ga, size_t gb,
               enum gr_xfer mode)
{
  const struct gr_topo *t = c->t;
  int x = t->gpus[ga], y = t->gpus[gb];
  memset(hd, 0, sizeof(*hd));
  h->nres = 0;
  hd->x = (uint8_t)mode;
  if (mode == GR_XFER_GPULINK) {
    double bw = gr_gpu_path(c->a, ga, gb).bw_gbps;
    hop_add(h, (int)(2 * t->npci + 2 + ga * 2), bw, false);
    hop_add(h, (int)(2 * t->npci + 2 + gb * 2 + 1), bw, false);
    hd->cap = bw;
    hd->nvlink = true;
    return;
  }
  int stop = mode == GR_XFER_P2P ? gr_topo_common_ancestor(t, x, y) : -1;
  if (stop >= 0 && t->pci[stop].role == GR_ROLE_HOSTBRIDGE && mode == GR_XFER_P2P)
    stop = -1; /* through the root complex: both ways up to their root ports */
  add_links(c, h, x, stop, 0);
  add_links(c, h, y, stop, 1);
  if (t->pci[x].package != t->pci[y].package && c->socket_gbps > 0)
    hop_add(h, (int)(2 * t->npci + (t->pci[x].package < t->pci[y].package ? 0 : 1)), c->socket_gbps, true);
  if (mode == GR_XFER_HOST) {
    /* the bytes are written to and read from the sender's socket's memory:
     * two uses of its bandwidth, counted as two uses of one resource */
    const struct gr_package *pk = package_at(t, t->pci[x].package);
    double mem = pk && pk->mem_channels && pk->mem_mts ? pk->mem_channels * pk->mem_mts * 8.0 / 1000.0 : 0;
    int res = (int)(2 * t->npci + 2 + 2 * c->n + (pk ? (size_t)(pk - t->packages) : 0));
    hop_add(h, res, mem, true);
    hop_add(h, res, mem, true);
  }
}

/* Appends a built hop's uses to the pool and points h at them (each
 * resource's capacity is the ctx's, res_caps). */
void hop_store(struct ctx *c, const struct hop_build *b, struct hop *h)
{
  h->off = (uint32_t)c->npool;
  h->nres = (uint8_t)b->nres;
  if (b->nres == 0) /* a GPU to itself: no uses to copy */
    return;
  if (c->npool + (size_t)b->nres > c->pool_cap_n) {
    c->pool_cap_n = (c->pool_cap_n + (size_t)b->nres) * 2;
    c->pool_res = xrealloc(c->pool_res, c->pool_cap_n * sizeof(int));
  }
  memcpy(c->pool_res + c->npool, b->res, (size_t)b->nres * sizeof(int));
  c->npool += (size_t)b->nres;
}

/* NCCL runs several rings at once over NVLink (one per link direction it can
 * pair up), so an all-NVLink ring is bounded by each GPU's NVLink bandwidth
 * towards the others in the set (direct links plus links into NVSwitches),
 * not by one pair's links. The NVLink figures are the analysis's pair
 * matrix; the NVLS fabrics are the predictions' own. */
void predict_nvlink_tables(struct ctx *c)
{
  const struct gr_topo *t = c->t;
  c->nv_direct = c->a->nv_direct_gbps;
  c->nv_fabric = c->a->nv_fabric_gbps;
  c->nvls_fabric = xcalloc(c->n + 1, sizeof(int));
  struct gr_nccl_version nvls_since = {2, 17, 1};
  c->nvls_nccl = gr_nccl_version_cmp(&c->a->nccl_version, &nvls_since) >= 0;
  for (size_t f = 0; f < t->nfabrics; f++)
    for (size_t i = 0; i < t->fabrics[f].nmembers; i++) {
      const struct gr_fabric_member *m = &t->fabrics[f].members[i];
      if (t->pci[m->gpu].gpu_index < 0)
        continue;
      /* switch-side reduction came with the third-generation NVSwitch (NVLink 4) */
      if (t->fabrics[f].gpulink_gen >= 4)
        c->nvls_fabric[t->pci[m->gpu].gpu_index] = (int)f + 1;
    }
}

/* NVLink SHARP (NVLS): on NVSwitch generations that reduce in the switch
 * (NVLink 4 and later: HGX H100/H200/H800, B200), NCCL 2.17+ runs large
 * all-reduces as NVLS by default; nccl-tests then shows a busbw above the
 * ring's, about 1.07x the NVLink line rate on 8 H100 (480 GB/s against the
 * ring's 370, sjeaugey in NVIDIA/nccl-tests#212). 0 where the set is not all
 * on one such fabric or NCCL lacks NVLS. */
static double nvls_bound(const struct ctx *c, const int *set, size_t k)
{
  if (!c->nvls_nccl || k < 2)
    return 0;
  double bound = INFINITY;
  for (size_t i = 0; i < k; i++) {
    if (!c->nvls_fabric[set[i]] || c->nvls_fabric[set[i]] != c->nvls_fabric[set[0]])
      return 0;
    bound = fmin(bound, c->nv_fabric[set[i]]);
  }
  return bound * gr_calib()->nvls_busbw_eff;
}

/* The least NVLink GB/s per direction any GPU of the set has to the others
 * (direct links plus links into NVSwitches), 0 none. */
static double nvlink_set_raw(const struct ctx *c, const int *set, size_t k)
{
  double bound = INFINITY;
  for (size_t i = 0; i < k; i++) {
    double total = c->nv_fabric[set[i]];
    for (size_t j = 0; j < k; j++)
      total += c->nv_direct[(size_t)set[i] * c->n + (size_t)set[j]];
    if (total < bound)
      bound = total;
  }
  return isinf(bound) ? 0 : bound;
}

/* The ring over NVLink only (NCCL runs one ring per link it can pair up). */
static double nvlink_ring_bound(const struct ctx *c, const int *set, size_t k)
{
  return nvlink_set_raw(c, set, k) * gr_calib()->ring_nvlink_eff;
}

/* An all-NVLink set's all-reduce with NCCL's choice: NVLS where it runs and
 * is faster, else the rings. */
static double nvlink_set_bound(const struct ctx *c, const int *set, size_t k)
{
  return fmax(nvlink_ring_bound(c, set, k), nvls_bound(c, set, k));
}

/* The ring's bus bandwidth: its narrowest use's capacity shared by the uses
 * of that resource, times the hop's efficiency. worst_at (may be NULL) gets
 * the narrowest hop's position (ring[i] to ring[i+1]) and worst_res its use,
 * or -1 where none bounds it (an all-NVLink set, or no rates). */
static double ring_busbw(struct ctx *c, const int *order, size_t k, int mode, long *worst_at, int *worst_res)
{
  bool all_gpulink = k > 1;
  for (size_t i = 0; i < k && all_gpulink; i++)
    all_gpulink = hop_of(c, mode, order[i], order[(i + 1) % k])->nvlink;
  if (worst_at)
    *worst_at = -1;
  if (all_gpulink)
    return nvlink_set_bound(c, order, k);
  double bw = INFINITY;
  for (size_t i = 0; i < k; i++) {
    int x = order[i], y = order[(i + 1) % k];
    const struct hop *h = hop_of(c, mode, x, y);
    for (int r = 0; r < h->nres; r++)
      c->count[hop_res(c, h, r, x, y)]++;
  }
  for (size_t i = 0; i < k; i++) {
    int x = order[i], y = order[(i + 1) % k];
    const struct hop *h = hop_of(c, mode, x, y);
    for (int r = 0; r < h->nres; r++) {
      int res = hop_res(c, h, r, x, y);
      double v = HOP_CAP(c, h, res) / c->count[res] * (HOP_GIVEN(c, h, res) ? 1.0 : HOP_EFF(c, h));
      if (v < bw) {
        bw = v;
        if (worst_at) {
          *worst_at = (long)i;
          *worst_res = r;
        }
      }
    }
  }
  for (size_t i = 0; i < k; i++) {
    int x = order[i], y = order[(i + 1) % k];
    const struct hop *h = hop_of(c, mode, x, y);
    for (int r = 0; r < h->nres; r++)
      c->count[hop_res(c, h, r, x, y)] = 0;
  }
  return isinf(bw) ? 0 : bw;
}

/* Reverses ring[i..j]. */
static void reverse_span(int *ring, size_t i, size_t j)
{
  for (size_t a = i, b = j; a < b; a++, b--) {
    int tmp = ring[a];
    ring[a] = ring[b];
    ring[b] = tmp;
  }
}

/* Tries reversing ring[i..j]: keeps it and returns true when the ring gets
 * wider than *top, else undoes it. */
static bool try_reversal(struct ctx *c, int *ring, size_t k, int mode, size_t i, size_t j, double *top)
{
  reverse_span(ring, i, j);
  double v = ring_busbw(c, ring, k, mode, NULL, NULL);
  if (v > *top + 1e-9) {
    *top = v;
    return true;
  }
  reverse_span(ring, i, j);
  return false;
}

/* Improves a ring by reversing segments while that helps (2-opt). */
static double improve_ring(struct ctx *c, int *ring, size_t k, int mode)
{
  double top = ring_busbw(c, ring, k, mode, NULL, NULL);
  bool better = true;
  while (better) {
    better = false;
    for (size_t i = 1; i + 1 < k; i++)
      for (size_t j = i + 1; j < k; j++)
        better |= try_reversal(c, ring, k, mode, i, j, &top);
  }
  return top;
}

/* Full 2-opt values O(k^2) reversals per pass at O(k) each: 256 GPUs took
 * 2 G instructions. Above this size only the reversals that take the
 * narrowest hop out of the ring are tried (O(k) of them), a bounded number of
 * times, so the search stays O(k^2). Every machine gpurig ships a rig or a
 * test input for is below it and keeps the full 2-opt. */
#define RING_2OPT_FULL_MAX 32
#define RING_2OPT_STEPS 16

/* Counts the uses of the hop from GPU x to GPU y into scratch (ring_busbw's
 * counts, zero between calls), or takes them back out (sign -1). */
static void hop_tally(const struct ctx *c, int *scratch, int mode, int x, int y, int sign)
{
  const struct hop *h = hop_of(c, mode, x, y);
  for (int r = 0; r < h->nres; r++)
    scratch[hop_res(c, h, r, x, y)] += sign;
}

/* Pruning the narrowest-hop 2-opt. Reversing ring[i..j] keeps hops 0..i-2
 * and j+1..k-1 (hop a: ring[a] to ring[a+1]), turns hops i..j-1 round and
 * makes two new ones. Two shares bound what the new ring can give, each
 * computed as ring_busbw computes a share, with a count no higher than the
 * new ring's, so the bound holds to the last bit:
 *  - the ring's narrowest resource R with the uses the new ring makes of it,
 *    counted from prefix sums of its uses along the ring, one way and the
 *    other (most reversals leave R as loaded as before);
 *  - each use of the two new hops with the uses those two make of it (a
 *    reversal that frees R mostly puts a hop as narrow in its place).
 * Where the bound cannot beat the best by the search's 1e-9, ring_busbw is
 * not called. A ring of NVLink hops only is valued by nvlink_set_bound, not
 * by shares: never pruned. */
struct prune {
  bool on;           /* R is a PCIe link direction, the socket link or a socket's memory: one capacity
                        (an NVLink port's differs from hop to hop: R gives no bound) */
  int res;
  double cap;
  bool given;        /* cap is already effective: every use's share is cap / uses */
  int *fwd, *bwd;    /* [a + 1]: R's uses by hops 0..a as they run, and turned round */
  int *fwdp, *bwdp;  /* the same by P2P hops (the other hops on a link are staged through host memory) */
  int *fwds, *bwds;  /* hops that are not NVLink, the same way */
};

/* R's uses by the hop from GPU x to GPU y; *p2p gets them where it is a P2P
 * hop, *slow 1 where it is not NVLink. */
static int res_uses(const struct ctx *c, int mode, int x, int y, int res, int *p2p, int *slow)
{
  const struct hop *h = hop_of(c, mode, x, y);
  int u = 0;
  for (int r = 0; r < h->nres; r++)
    u += hop_res(c, h, r, x, y) == res;
  *p2p = h->x == GR_XFER_P2P ? u : 0;
  *slow = !h->nvlink;
  return u;
}

/* The prefix counts for ring's narrowest use wr of hop p. */
static void prune_prepare(const struct ctx *c, const int *ring, size_t k, int mode, long p, int wr, struct prune *pr)
{
  int x = ring[p], y = ring[((size_t)p + 1) % k];
  const struct hop *h = hop_of(c, mode, x, y);
  pr->res = hop_res(c, h, wr, x, y);
  pr->on = !h->nvlink;
  pr->cap = HOP_CAP(c, h, pr->res);
  pr->given = HOP_GIVEN(c, h, pr->res);
  pr->fwd[0] = pr->bwd[0] = pr->fwdp[0] = pr->bwdp[0] = pr->fwds[0] = pr->bwds[0] = 0;
  for (size_t a = 0; a < k; a++) {
    int q, sl, u = res_uses(c, mode, ring[a], ring[(a + 1) % k], pr->res, &q, &sl);
    pr->fwd[a + 1] = pr->fwd[a] + u;
    pr->fwdp[a + 1] = pr->fwdp[a] + q;
    pr->fwds[a + 1] = pr->fwds[a] + sl;
    u = q = sl = 0;
    if (a + 1 < k)
      u = res_uses(c, mode, ring[a + 1], ring[a], pr->res, &q, &sl);
    pr->bwd[a + 1] = pr->bwd[a] + u;
    pr->bwdp[a + 1] = pr->bwdp[a] + q;
    pr->bwds[a + 1] = pr->bwds[a] + sl;
  }
}

/* R's share in the new ring of n uses, np of them by P2P hops. */
static double res_share(const struct ctx *c, const struct prune *pr, int n, int np)
{
  if (!pr->on || n == 0)
    return INFINITY;
  if (pr->given)
    return pr->cap / n * 1.0;
  double v = INFINITY;
  if (np > 0)
    v = fmin(v, pr->cap / n * c->ring_eff[GR_XFER_P2P]);
  if (n > np)
    v = fmin(v, pr->cap / n * c->ring_eff[GR_XFER_HOST]);
  return v;
}

/* The narrowest share of the two new hops' uses among their own uses. */
static double new_hops_share(struct ctx *c, int mode, const int *xy)
{
  double v = INFINITY;
  for (int e = 0; e < 2; e++)
    hop_tally(c, c->count, mode, xy[2 * e], xy[2 * e + 1], 1);
  for (int e = 0; e < 2; e++) {
    const struct hop *h = hop_of(c, mode, xy[2 * e], xy[2 * e + 1]);
    for (int r = 0; r < h->nres; r++) {
      int res = hop_res(c, h, r, xy[2 * e], xy[2 * e + 1]);
      v = fmin(v, HOP_CAP(c, h, res) / c->count[res] * (HOP_GIVEN(c, h, res) ? 1.0 : HOP_EFF(c, h)));
    }
  }
  for (int e = 0; e < 2; e++)
    hop_tally(c, c->count, mode, xy[2 * e], xy[2 * e + 1], -1);
  return v;
}

/* The most the ring can give with ring[i..j] reversed (1 <= i < j < k);
 * INFINITY where nothing bounds it. */
static double prune_bound(struct ctx *c, const struct prune *pr, const int *ring, size_t k, int mode, size_t i,
                          size_t j)
{
  int q1, q2, s1, s2, xy[4] = {ring[i - 1], ring[j], ring[i], ring[(j + 1) % k]};
  int n = pr->fwd[i - 1] + (pr->fwd[k] - pr->fwd[j + 1]) + (pr->bwd[j] - pr->bwd[i]) +
          res_uses(c, mode, xy[0], xy[1], pr->res, &q1, &s1) + res_uses(c, mode, xy[2], xy[3], pr->res, &q2, &s2);
  int np = pr->fwdp[i - 1] + (pr->fwdp[k] - pr->fwdp[j + 1]) + (pr->bwdp[j] - pr->bwdp[i]) + q1 + q2;
  int slow = pr->fwds[i - 1] + (pr->fwds[k] - pr->fwds[j + 1]) + (pr->bwds[j] - pr->bwds[i]) + s1 + s2;
  if (slow == 0)
    return INFINITY;
  return fmin(res_share(c, pr, n, np), new_hops_share(c, mode, xy));
}

/* try_reversal where the bound lets the reversal beat top (prune), else false. */
static bool try_bounded(struct ctx *c, const struct prune *pr, int *ring, size_t k, int mode, size_t i, size_t j,
                        double *top)
{
  if (pr && !(prune_bound(c, pr, ring, k, mode, i, j) > *top + 1e-9))
    return false; /* try_reversal would undo it */
  return try_reversal(c, ring, k, mode, i, j, top);
}

/* 2-opt aimed at the narrowest hop: the reversals ring[p+1..j] and
 * ring[i..p] are the ones that replace the hop from ring[p] (ring[0]
 * stays). prune: skip the reversals that cannot win (the same result). */
double ring_improve_narrowest(struct ctx *c, int *ring, size_t k, int mode, bool prune)
{
  double top = ring_busbw(c, ring, k, mode, NULL, NULL);
  struct prune pr = {.fwd = xmalloc((k + 1) * sizeof(int)), .bwd = xmalloc((k + 1) * sizeof(int)),
                     .fwdp = xmalloc((k + 1) * sizeof(int)), .bwdp = xmalloc((k + 1) * sizeof(int)),
                     .fwds = xmalloc((k + 1) * sizeof(int)), .bwds = xmalloc((k + 1) * sizeof(int))};
  for (int step = 0; step < RING_2OPT_STEPS; step++) {
    long p;
    int wr = 0;
    ring_busbw(c, ring, k, mode, &p, &wr);
    if (p >= 0 && prune)
      prune_prepare(c, ring, k, mode, p, wr, &pr);
    const struct prune *use = p >= 0 && prune ? &pr : NULL;
    bool better = false;
    for (size_t j = (size_t)p + 2; p >= 0 && j < k && !better; j++)
      better = try_bounded(c, use, ring, k, mode, (size_t)p + 1, j, &top);
    for (size_t i = 1; p >= 2 && i < (size_t)p && !better; i++)
      better = try_bounded(c, use, ring, k, mode, i, (size_t)p, &top);
    if (!better)
      break;
  }
  free(pr.fwd);
  free(pr.bwd);
  free(pr.fwdp);
  free(pr.bwdp);
  free(pr.fwds);
  free(pr.bwds);
  return top;
}

/* ---- the exact ring search (k <= 9) ----
 *
 * It keeps what the exhaustive search over every order (Heap's algorithm,
 * the first GPU fixed) would keep, ties included, without valuing every
 * order. Heap's algorithm written recursively fixes the array from its end:
 * the sub-call over q[0..j-1] runs with q[j..] fixed, and q[j] > ... > q[m-1]
 * > the first GPU is a stretch of the ring. The rings through a stretch share
 * its hops, and each of its resources is used at least as often as the
 * stretch uses it plus what the GPUs still to send (or to receive) use on
 * every hop they could make; so the narrowest share over the stretch's hops
 * with those counts bounds every ring through it. A sub-call whose stretch
 * cannot beat the best ring so far by more than the search's 1e-9 is skipped
 * (only its reordering of q is applied), so the rings valued, in the order
 * met, and the winner are those of the full search. A stretch of NVLink hops
 * only is never cut: an all-NVLink ring is valued by nvlink_set_bound, not by
 * shares. */

#define RING_SEARCH_MAX 9

/* The resources every hop out of (or into) one GPU of the set uses, each with
 * the fewest uses among those hops. */
struct certain {
  int n;
  int res[48], uses[48];
};

struct search {
  struct ctx *c;
  const int *set;                        /* the GPUs; the search permutes positions in it */
  int mode;
  size_t k, m;                           /* ring size; m = k - 1 positions permuted */
  int perm[RING_SEARCH_MAX];             /* the ring as positions in set; q = perm + 1 */
  int *best;
  double top;
  const struct hop *path[RING_SEARCH_MAX]; /* the fixed stretch's hops */
  int path_from[RING_SEARCH_MAX], path_to[RING_SEARCH_MAX];
  size_t npath, nslow;                   /* its hops; how many are not NVLink */
  struct certain out[RING_SEARCH_MAX], in[RING_SEARCH_MAX]; /* per position */
  int moved[RING_SEARCH_MAX][RING_SEARCH_MAX]; /* [j][x]: what a full sub-call over j leaves at x */
};

/* Heap's step after the i-th sub-call over j elements: swap the last
 * element with the i-th (j even) or the first (j odd). */
static void heap_swap(int *q, size_t j, size_t i)
{
  size_t y = j % 2 == 0 ? i : 0;
  int t = q[y];
  q[y] = q[j - 1];
  q[j - 1] = t;
}

/* Reorders q[0..len-1] as one whole sub-call over len elements would. */
static void heap_apply(int *q, const int *moved, size_t len)
{
  int tmp[RING_SEARCH_MAX];
  for (size_t x = 0; x < len; x++)
    tmp[x] = q[moved[x]];
  memcpy(q, tmp, len * sizeof(int));
}

/* What one whole sub-call over j elements does to their order: moved[j][x]
 * is the position whose element ends at x (a sub-call over 1 does nothing). */
static void heap_moves(int moved[RING_SEARCH_MAX][RING_SEARCH_MAX], size_t m)
{
  moved[1][0] = 0;
  for (size_t j = 2; j <= m; j++) {
    for (size_t x = 0; x < j; x++)
      moved[j][x] = (int)x;
    for (size_t i = 0; i < j; i++) {
      heap_apply(moved[j], moved[j - 1], j - 1);
      if (i + 1 < j)
        heap_swap(moved[j], j, i);
    }
  }
}

/* Starts ct from the hop from GPU x to GPU y: its resources and how often it
 * uses each. */
static void certain_first(const struct ctx *c, struct certain *ct, int mode, int x, int y, int *scratch)
{
  const struct hop *h = hop_of(c, mode, x, y);
  ct->n = 0;
  hop_tally(c, scratch, mode, x, y, 1);
  for (int r = 0; r < h->nres; r++) {
    int res = hop_res(c, h, r, x, y);
    if (scratch[res] > 0) {
      ct->res[ct->n] = res;
      ct->uses[ct->n++] = scratch[res];
      scratch[res] = 0; /* listed once; and scratch is zero again at the end */
    }
  }
}

/* Keeps what the hop from GPU x to GPU y uses too, with the fewer uses. */
static void certain_keep(const struct ctx *c, struct certain *ct, int mode, int x, int y, int *scratch)
{
  int kept = 0;
  hop_tally(c, scratch, mode, x, y, 1);
  for (int e = 0; e < ct->n; e++) {
    int u = scratch[ct->res[e]];
    if (u > 0) {
      ct->res[kept] = ct->res[e];
      ct->uses[kept++] = u < ct->uses[e] ? u : ct->uses[e];
    }
  }
  hop_tally(c, scratch, mode, x, y, -1);
  ct->n = kept;
}

/* What every hop out of position g (or into it) uses, whichever GPU of the
 * set is at its other end. */
static void certain_uses(const struct search *s, int g, bool out, struct certain *ct)
{
  bool first = true;
  ct->n = 0;
  for (int x = 0; x < (int)s->k; x++) {
    if (x == g)
      continue;
    int from = s->set[out ? g : x], to = s->set[out ? x : g];
    if (first)
      certain_first(s->c, ct, s->mode, from, to, s->c->count);
    else
      certain_keep(s->c, ct, s->mode, from, to, s->c->count);
    first = false;
  }
}

/* Adds (sign 1) or takes away (-1) ct's uses to left, the counts of the GPUs
 * still to send (out_left) or still to receive (in_left). */
static void certain_count(int *left, const struct certain *ct, int sign)
{
  for (int e = 0; e < ct->n; e++)
    left[ct->res[e]] += sign * ct->uses[e];
}

static void path_push(struct search *s, int from, int to)
{
  const struct hop *h = hop_of(s->c, s->mode, s->set[from], s->set[to]);
  hop_tally(s->c, s->c->pcount, s->mode, s->set[from], s->set[to], 1);
  certain_count(s->c->out_left, &s->out[from], -1);
  certain_count(s->c->in_left, &s->in[to], -1);
  s->path_from[s->npath] = from;
  s->path_to[s->npath] = to;
  s->path[s->npath++] = h;
  s->nslow += !h->nvlink;
}

static void path_pop(struct search *s)
{
  const struct hop *h = s->path[--s->npath];
  hop_tally(s->c, s->c->pcount, s->mode, s->set[s->path_from[s->npath]], s->set[s->path_to[s->npath]], -1);
  certain_count(s->c->out_left, &s->out[s->path_from[s->npath]], 1);
  certain_count(s->c->in_left, &s->in[s->path_to[s->npath]], 1);
  s->nslow -= !h->nvlink;
}

/* Whether a ring through the fixed stretch may still beat the best. Each
 * share is computed as ring_busbw computes it, with a count no higher than
 * any such ring's, so the bound holds to the last bit. The hops still to come
 * each have one sender and one receiver left, so either count of their
 * certain uses is a floor; not both summed, as one hop may be in both. */
static bool path_may_win(const struct search *s)
{
  if (s->nslow == 0)
    return true;
  const struct ctx *c = s->c;
  double bw = INFINITY;
  for (size_t i = 0; i < s->npath; i++) {
    const struct hop *h = s->path[i];
    int x = s->set[s->path_from[i]], y = s->set[s->path_to[i]];
    for (int r = 0; r < h->nres; r++) {
      int res = hop_res(c, h, r, x, y), more = c->out_left[res] > c->in_left[res] ? c->out_left[res] : c->in_left[res];
      double v = HOP_CAP(c, h, res) / (c->pcount[res] + more) * (HOP_GIVEN(c, h, res) ? 1.0 : HOP_EFF(c, h));
      if (v < bw)
        bw = v;
    }
  }
  return bw > s->top + 1e-9;
}

static void ring_leaf(struct search *s)
{
  int ring[RING_SEARCH_MAX];
  for (size_t i = 0; i < s->k; i++)
    ring[i] = s->set[s->perm[i]];
  double v = ring_busbw(s->c, ring, s->k, s->mode, NULL, NULL);
  if (v > s->top + 1e-9) {
    s->top = v;
    memcpy(s->best, ring, s->k * sizeof(int));
  }
}

/* Heap's algorithm over q[0..j-1], q[j..m-1] fixed. */
static void heap_search(struct search *s, size_t j)
{
  int *q = s->perm + 1;
  if (j <= 1) {
    ring_leaf(s);
    return;
  }
  for (size_t i = 0; i < j; i++) {
    path_push(s, q[j - 1], j == s->m ? s->perm[0] : q[j]);
    if (path_may_win(s))
      heap_search(s, j - 1);
    else /* skipped: leave q as the sub-call would have */
      heap_apply(q, s->moved[j - 1], j - 1);
    path_pop(s);
    if (i + 1 < j)
      heap_swap(q, j, i);
  }
}

static double search_rings(struct ctx *c, const int *set, size_t k, int mode, int *best)
{
  struct search s = {.c = c, .set = set, .mode = mode, .k = k, .m = k - 1, .best = best, .top = -INFINITY};
  for (int g = 0; g < (int)k; g++) {
    s.perm[g] = g;
    certain_uses(&s, g, true, &s.out[g]);
    certain_uses(&s, g, false, &s.in[g]);
    certain_count(c->out_left, &s.out[g], 1);
    certain_count(c->in_left, &s.in[g], 1);
  }
  heap_moves(s.moved, s.m);
  heap_search(&s, s.m);
  for (size_t g = 0; g < k; g++) { /* back to zero for the next search */
    certain_count(c->out_left, &s.out[g], -1);
    certain_count(c->in_left, &s.in[g], -1);
  }
  return s.top;
}

/* Whether every hop between two GPUs of the set is NVLink, by class above
 * 16 GPUs: a hop is its class pair's, so each pair of the set's classes is
 * looked at once (a class with itself where two of its GPUs are in the set). */
static bool all_nvlink_set(const struct ctx *c, const int *set, size_t k, int mode)
{
  if (k <= 16) { /* a few pairs: looked at directly, without the classes' tables */
    for (size_t i = 0; i < k; i++)
      for (size_t j = 0; j < k; j++)
        if (i != j && !hop_of(c, mode, set[i], set[j])->nvlink)
          return false;
    return true;
  }
  int *first = xmalloc((c->nc + 1) * sizeof(int)), *second = xmalloc((c->nc + 1) * sizeof(int));
  int *in = xmalloc((k + 1) * sizeof(int)); /* the set's classes, each once */
  size_t nin = 0;
  for (size_t i = 0; i < k; i++) {
    first[c->cls[set[i]]] = -1;
    second[c->cls[set[i]]] = -1;
  }
  for (size_t i = 0; i < k; i++) {
    int x = c->cls[set[i]];
    if (first[x] < 0) {
      first[x] = set[i];
      in[nin++] = x;
    } else if (second[x] < 0) {
      second[x] = set[i];
    }
  }
  bool all = true;
  for (size_t i = 0; i < nin && all; i++)
    for (size_t j = 0; j < nin && all; j++) {
      int x = first[in[i]], y = i == j ? second[in[i]] : first[in[j]];
      all = y < 0 || hop_of(c, mode, x, y)->nvlink;
    }
  free(in);
  free(second);
  free(first);
  return all;
}

/* Best ring over the GPUs in `set` (k of them, any k): the exact search when
 * k <= 9 (the first GPU fixed), else bus order improved by 2-opt (aimed at
 * the narrowest hop above 32 GPUs). Writes
 * the order to best (k ints). */
double best_ring(struct ctx *c, const int *set, size_t k, int mode, int *best)
{
  memcpy(best, set, k * sizeof(int));
  if (k < 2)
    return 0;
  if (all_nvlink_set(c, set, k, mode)) /* every order gives the same NVLink bound */
    return nvlink_set_bound(c, set, k);
  if (k > RING_2OPT_FULL_MAX)
    return ring_improve_narrowest(c, best, k, mode, true);
  if (k > RING_SEARCH_MAX)
    return improve_ring(c, best, k, mode);
  return search_rings(c, set, k, mode, best);
}

/* Whether the link above pci node x stands out: a switch uplink, or slower
 * than the fastest GPU's own link (not one of many equal GPU links). */
static bool link_singled_out(const struct ctx *c, int x)
{
  double fastest = 0;
  for (size_t g = 0; g < c->t->ngpus; g++)
    fastest = fmax(fastest, c->a->link[c->t->gpus[g]].gbps);
  return c->t->pci[x].role == GR_ROLE_SWITCH_UP || c->a->link[x].gbps < fastest - 1e-9;
}

/* Fills r->bound from the ring's bounding use wr of its hop at position wat
 * (-1 for an all-NVLink set). */
static void ring_bound(const struct ctx *c, struct gr_ring *r, size_t k, int mode, long wat, int wr)
{
  struct gr_ring_bound *b = &r->bound;
  const struct gr_topo *t = c->t;
  if (wat < 0) {
    b->kind = r->nvls_busbw_gbps > r->ring_busbw_gbps ? GR_BOUND_NVLS : GR_BOUND_GPULINK_RINGS;
    b->gbps = nvlink_set_raw(c, r->order, k);
    return;
  }
  int wx = r->order[wat], wy = r->order[((size_t)wat + 1) % k];
  const struct hop *wh = hop_of(c, mode, wx, wy);
  int res = hop_res(c, wh, wr, wx, wy);
  for (size_t i = 0; i < k; i++) { /* how many ring hops share the bounding resource */
    int x = r->order[i], y = r->order[(i + 1) % k];
    const struct hop *h = hop_of(c, mode, x, y);
    for (int q = 0; q < h->nres; q++)
      b->hops += hop_res(c, h, q, x, y) == res;
  }
  if (res < (int)(2 * t->npci)) {
    *b = (struct gr_ring_bound){GR_BOUND_LINK, res / 2, c->a->link[res / 2].gbps, b->hops, res % 2 != 0, wh->x,
                                link_singled_out(c, res / 2)};
  } else if (res < (int)(2 * t->npci + 2)) {
    b->kind = GR_BOUND_SOCKET;
    b->gbps = c->socket_gbps;
  } else if (res >= (int)(2 * t->npci + 2 + 2 * c->n)) {
    b->kind = GR_BOUND_HOST_MEM;
    b->gbps = HOP_CAP(c, wh, res);
    b->hops /= 2;
  } else {
    b->kind = GR_BOUND_GPULINK;
    b->gbps = HOP_CAP(c, wh, res);
  }
}

void describe_ring(struct ctx *c, struct gr_ring *r, size_t k, int mode)
{
  long wat;
  int wr = 0;
  r->busbw_gbps = ring_busbw(c, r->order, k, mode, &wat, &wr);
  r->bound = (struct gr_ring_bound){.kind = GR_BOUND_NONE, .node = -1};
  if (wat < 0 && r->busbw_gbps > 0) {
    r->ring_busbw_gbps = nvlink_ring_bound(c, r->order, k);
    r->nvls_busbw_gbps = nvls_bound(c, r->order, k);
  }
  if (wat >= 0 || r->busbw_gbps > 0)
    ring_bound(c, r, k, mode, wat, wr);
}

static const char *link_bound_text(const struct gr_prediction *p, const struct gr_ring_bound *b, char *buf,
                                   size_t cap)
{
  const struct gr_pci *x = &p->t->pci[b->node];
  char label[48], bus[32], rate[64];
  if (x->role == GR_ROLE_SWITCH_UP)
    snprintf(label, sizeof(label), "switch %s uplink", gr_pci_busid(x, bus, sizeof(bus)));
  else
    snprintf(label, sizeof(label), "%s link", gr_pci_label(p->t, b->node, bus, sizeof(bus)));
  gr_link_label(&p->a->link[b->node], GR_LABEL_RATE, rate, sizeof(rate));
  snprintf(buf, cap, "the %s (%s) carrying %d ring hop%s %s, %s", label, rate, b->hops, b->hops == 1 ? "" : "s",
           b->down ? "downward" : "upward", b->xfer == GR_XFER_HOST ? "staged through host memory" : "peer-to-peer");
  return buf;
}

const char *gr_ring_bound_text(const struct gr_prediction *p, const struct gr_ring *r, char *buf, size_t cap)
{
  const struct gr_ring_bound *b = &r->bound;
  const char *s = b->hops == 1 ? "" : "s";
  /* a GPU-link bound's ring has two GPUs or more, every hop on GPU links: its
   * first pair names their family (read only for those bounds) */
  bool gpulink = b->kind == GR_BOUND_GPULINK || b->kind == GR_BOUND_GPULINK_RINGS;
  struct gr_path first = gpulink && r->order ? gr_gpu_path(p->a, (size_t)r->order[0], (size_t)r->order[1])
                                             : (struct gr_path){.level = GR_LVL_X};
  const char *link = gpulink && r->order ? gr_gpulink_name(&first) : "NVLink";
  switch (b->kind) {
  case GR_BOUND_NONE: snprintf(buf, cap, "%s", ""); break;
  case GR_BOUND_LINK: return link_bound_text(p, b, buf, cap);
  case GR_BOUND_SOCKET:
    snprintf(buf, cap, "the inter-socket link (%.1f GB/s per direction) carrying %d ring hop%s", b->gbps, b->hops, s);
    break;
  case GR_BOUND_HOST_MEM:
    snprintf(buf, cap, "host memory (%.1f GB/s theoretical) carrying %d host-staged hop%s, each written and read once",
             b->gbps, b->hops, s);
    break;
  case GR_BOUND_GPULINK: snprintf(buf, cap, "%s (%.0f GB/s per direction)", link, b->gbps); break;
  case GR_BOUND_GPULINK_RINGS:
    snprintf(buf, cap, "each GPU's %s bandwidth to the others (%.0f GB/s per direction; %s runs one ring per link)", link,
             b->gbps, strcmp(link, "xGMI") == 0 ? "RCCL" : "NCCL");
    break;
  case GR_BOUND_NVLS:
    snprintf(buf, cap, "NVLink SHARP in the NVSwitches (NVLS, NCCL's default here; rings alone: %.1f GB/s), each GPU's "
             "%.0f GB/s per direction into the fabric", r->ring_busbw_gbps, b->gbps);
    break;
  }
  return buf;
}

const char *gr_bound_kind_key(enum gr_bound_kind k)
{
  static const char *const key[] = {[GR_BOUND_NONE] = NULL, [GR_BOUND_LINK] = "link",
                                    [GR_BOUND_SOCKET] = "inter_socket", [GR_BOUND_HOST_MEM] = "host_memory",
                                    [GR_BOUND_GPULINK] = "nvlink", [GR_BOUND_GPULINK_RINGS] = "nvlink_rings",
                                    [GR_BOUND_NVLS] = "nvls"};
  return key[k];
}
