#include "analysis/predict.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "facts/catalog.h"
#include "facts/facts.h"
#include "facts/pcilink.h"

static const struct gr_package *package_at(const struct gr_topo *t, int os_index)
{
  for (size_t i = 0; i < t->npackages; i++)
    if (t->packages[i].os_index == os_index)
      return &t->packages[i];
  return NULL;
}

/* ---- paths as lists of shared resources ---- */

/* A hop's resources live in its ctx's pools (one entry per resource use),
 * so a hop takes a few dozen bytes plus its uses, not room for the most
 * uses any hop may have: the n x n table stays small at 256 GPUs. */
struct hop {
  int nres;
  const int *res;        /* resource ids, into ctx.pool_res */
  const double *cap;     /* GB/s of each, into ctx.pool_cap */
  const bool *effective; /* capacity already an effective figure (socket link, host memory) */
  double eff;
  bool nvlink;
  enum gr_xfer x;     /* how the bytes go: NVLink, PCIe P2P, through host memory */
};

/* A hop while it is built, before its resources move to the pools. */
#define HOP_MAX_RES 48
struct hop_build {
  int nres;
  int res[HOP_MAX_RES];
  double cap[HOP_MAX_RES];
  bool effective[HOP_MAX_RES];
};

struct ctx {
  const struct gr_topo *t;
  const struct gr_analysis *a;
  size_t n, nres;
  struct hop *hops;      /* [mode][a][b]: mode 0 = NCCL default, 1 = best */
  int *pool_res;         /* every hop's resource uses, hop after hop */
  double *pool_cap;
  bool *pool_eff;
  size_t npool, pool_cap_n;
  int *count;            /* ring_busbw's scratch counts, all zero between calls */
  int *pcount;           /* the ring search's counts on its fixed stretch, */
  int *out_left, *in_left; /* and the uses certain for the GPUs still to send, to receive */
  double socket_gbps;
  enum gr_level level;   /* NCCL's default P2P level behind mode 0 (it depends on the communicator's size) */
  bool modes_differ;     /* some pair moves differently in mode 0 and mode 1 */
  const double *nv_direct; /* [g][h]: direct NVLink GB/s between two GPUs (the analysis's) */
  const double *nv_fabric; /* [g]: GPU's NVLink GB/s into NVSwitches (the analysis's) */
  int *nvls_fabric;      /* [g]: 1 + the NVLink-SHARP-capable fabric the GPU is on, 0 none */
  bool nvls_nccl;        /* the NCCL version has NVLS (2.17 and later) */
};

/* The hop from GPU `from` to GPU `to` in a mode (0 NCCL's default for the
 * ctx's communicator size, 1 with NCCL_P2P_LEVEL raised where P2P runs). */
static const struct hop *hop_of(const struct ctx *c, int mode, int from, int to)
{
  return &c->hops[(size_t)mode * c->n * c->n + (size_t)from * c->n + (size_t)to];
}

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
static void build_hop(const struct ctx *c, struct hop *hd, struct hop_build *h, size_t ga, size_t gb,
                      enum gr_xfer mode)
{
  const struct gr_topo *t = c->t;
  int x = t->gpus[ga], y = t->gpus[gb];
  memset(hd, 0, sizeof(*hd));
  h->nres = 0;
  hd->x = mode;
  if (mode == GR_XFER_NVLINK) {
    double bw = c->a->gpu_gpu[ga * c->n + gb].bw_gbps;
    hop_add(h, (int)(2 * t->npci + 2 + ga * 2), bw, false);
    hop_add(h, (int)(2 * t->npci + 2 + gb * 2 + 1), bw, false);
    hd->eff = gr_calib()->ring_nvlink_eff;
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
  hd->eff = mode == GR_XFER_P2P ? gr_calib()->ring_p2p_eff : gr_calib()->ring_host_eff;
}

/* Appends a built hop's uses to the pools; its offset in *off (the pools
 * may move until every hop is in, so pointers are set after). */
static void hop_store(struct ctx *c, const struct hop_build *b, struct hop *h, size_t *off)
{
  *off = c->npool;
  h->nres = b->nres;
  if (b->nres == 0) /* a GPU to itself: no uses to copy */
    return;
  if (c->npool + (size_t)b->nres > c->pool_cap_n) {
    c->pool_cap_n = (c->pool_cap_n + (size_t)b->nres) * 2;
    c->pool_res = xrealloc(c->pool_res, c->pool_cap_n * sizeof(int));
    c->pool_cap = xrealloc(c->pool_cap, c->pool_cap_n * sizeof(double));
    c->pool_eff = xrealloc(c->pool_eff, c->pool_cap_n * sizeof(bool));
  }
  memcpy(c->pool_res + c->npool, b->res, (size_t)b->nres * sizeof(int));
  memcpy(c->pool_cap + c->npool, b->cap, (size_t)b->nres * sizeof(double));
  memcpy(c->pool_eff + c->npool, b->effective, (size_t)b->nres * sizeof(bool));
  c->npool += (size_t)b->nres;
}

/* NCCL runs several rings at once over NVLink (one per link direction it can
 * pair up), so an all-NVLink ring is bounded by each GPU's NVLink bandwidth
 * towards the others in the set (direct links plus links into NVSwitches),
 * not by one pair's links. The NVLink figures are the analysis's pair
 * matrix; the NVLS fabrics are the predictions' own. */
static void nvlink_tables(struct ctx *c)
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
      if (t->fabrics[f].nvlink_gen >= 4)
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

static double ring_busbw(struct ctx *c, const int *order, size_t k, int mode, const struct hop **worst_hop,
                         int *worst_res)
{
  bool all_nvlink = k > 1;
  for (size_t i = 0; i < k && all_nvlink; i++)
    all_nvlink = c->hops[(size_t)mode * c->n * c->n + (size_t)order[i] * c->n + (size_t)order[(i + 1) % k]].nvlink;
  if (all_nvlink) {
    if (worst_hop)
      *worst_hop = NULL;
    return nvlink_set_bound(c, order, k);
  }
  double bw = INFINITY;
  for (size_t i = 0; i < k; i++) {
    const struct hop *h = &c->hops[(size_t)mode * c->n * c->n + (size_t)order[i] * c->n + (size_t)order[(i + 1) % k]];
    for (int r = 0; r < h->nres; r++)
      c->count[h->res[r]]++;
  }
  for (size_t i = 0; i < k; i++) {
    const struct hop *h = &c->hops[(size_t)mode * c->n * c->n + (size_t)order[i] * c->n + (size_t)order[(i + 1) % k]];
    for (int r = 0; r < h->nres; r++) {
      double v = h->cap[r] / c->count[h->res[r]] * (h->effective[r] ? 1.0 : h->eff);
      if (v < bw) {
        bw = v;
        if (worst_hop) {
          *worst_hop = h;
          *worst_res = r;
        }
      }
    }
  }
  for (size_t i = 0; i < k; i++) {
    const struct hop *h = &c->hops[(size_t)mode * c->n * c->n + (size_t)order[i] * c->n + (size_t)order[(i + 1) % k]];
    for (int r = 0; r < h->nres; r++)
      c->count[h->res[r]] = 0;
  }
  return isinf(bw) ? 0 : bw;
}

/* Improves a ring by reversing segments while that helps (2-opt). */
static double improve_ring(struct ctx *c, int *ring, size_t k, int mode)
{
  double top = ring_busbw(c, ring, k, mode, NULL, NULL);
  bool better = true;
  while (better) {
    better = false;
    for (size_t i = 1; i + 1 < k; i++)
      for (size_t j = i + 1; j < k; j++) {
        for (size_t a = i, b = j; a < b; a++, b--) {
          int tmp = ring[a];
          ring[a] = ring[b];
          ring[b] = tmp;
        }
        double v = ring_busbw(c, ring, k, mode, NULL, NULL);
        if (v > top + 1e-9) {
          top = v;
          better = true;
        } else {
          for (size_t a = i, b = j; a < b; a++, b--) {
            int tmp = ring[a];
            ring[a] = ring[b];
            ring[b] = tmp;
          }
        }
      }
  }
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

static const struct hop *search_hop(const struct search *s, int from, int to)
{
  return hop_of(s->c, s->mode, s->set[from], s->set[to]);
}

/* Counts h's uses of each resource into scratch (ring_busbw's counts, zero
 * between calls), or takes them back out (sign -1). */
static void hop_tally(int *scratch, const struct hop *h, int sign)
{
  for (int r = 0; r < h->nres; r++)
    scratch[h->res[r]] += sign;
}

/* Starts ct from one hop: its resources and how often it uses each. */
static void certain_first(struct certain *ct, const struct hop *h, int *scratch)
{
  ct->n = 0;
  hop_tally(scratch, h, 1);
  for (int r = 0; r < h->nres; r++)
    if (scratch[h->res[r]] > 0) {
      ct->res[ct->n] = h->res[r];
      ct->uses[ct->n++] = scratch[h->res[r]];
      scratch[h->res[r]] = 0; /* listed once; and scratch is zero again at the end */
    }
}

/* Keeps what h uses too, with the fewer uses. */
static void certain_keep(struct certain *ct, const struct hop *h, int *scratch)
{
  int kept = 0;
  hop_tally(scratch, h, 1);
  for (int e = 0; e < ct->n; e++) {
    int u = scratch[ct->res[e]];
    if (u > 0) {
      ct->res[kept] = ct->res[e];
      ct->uses[kept++] = u < ct->uses[e] ? u : ct->uses[e];
    }
  }
  hop_tally(scratch, h, -1);
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
    const struct hop *h = out ? search_hop(s, g, x) : search_hop(s, x, g);
    if (first)
      certain_first(ct, h, s->c->count);
    else
      certain_keep(ct, h, s->c->count);
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
  const struct hop *h = search_hop(s, from, to);
  for (int r = 0; r < h->nres; r++)
    s->c->pcount[h->res[r]]++;
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
  for (int r = 0; r < h->nres; r++)
    s->c->pcount[h->res[r]]--;
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
    for (int r = 0; r < h->nres; r++) {
      int res = h->res[r], more = c->out_left[res] > c->in_left[res] ? c->out_left[res] : c->in_left[res];
      double v = h->cap[r] / (c->pcount[res] + more) * (h->effective[r] ? 1.0 : h->eff);
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

static bool all_nvlink_set(const struct ctx *c, const int *set, size_t k, int mode)
{
  for (size_t i = 0; i < k; i++)
    for (size_t j = 0; j < k; j++)
      if (i != j && !hop_of(c, mode, set[i], set[j])->nvlink)
        return false;
  return true;
}

/* Best ring over the GPUs in `set` (k of them, any k): the exact search when
 * k <= 9 (the first GPU fixed), else bus order improved by 2-opt. Writes
 * the order to best (k ints). */
static double best_ring(struct ctx *c, const int *set, size_t k, int mode, int *best)
{
  memcpy(best, set, k * sizeof(int));
  if (k < 2)
    return 0;
  if (all_nvlink_set(c, set, k, mode)) /* every order gives the same NVLink bound */
    return nvlink_set_bound(c, set, k);
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

/* Fills r->bound from the ring's bounding resource res of hop wh (NULL for
 * an all-NVLink set). */
static void ring_bound(const struct ctx *c, struct gr_ring *r, size_t k, int mode, const struct hop *wh, int wr)
{
  struct gr_ring_bound *b = &r->bound;
  const struct gr_topo *t = c->t;
  if (!wh) {
    b->kind = r->nvls_busbw_gbps > r->ring_busbw_gbps ? GR_BOUND_NVLS : GR_BOUND_NVLINK_RINGS;
    b->gbps = nvlink_set_raw(c, r->order, k);
    return;
  }
  int res = wh->res[wr];
  for (size_t i = 0; i < k; i++) { /* how many ring hops share the bounding resource */
    const struct hop *h = &c->hops[(size_t)mode * c->n * c->n + (size_t)r->order[i] * c->n + (size_t)r->order[(i + 1) % k]];
    for (int q = 0; q < h->nres; q++)
      b->hops += h->res[q] == res;
  }
  if (res < (int)(2 * t->npci)) {
    *b = (struct gr_ring_bound){GR_BOUND_LINK, res / 2, c->a->link[res / 2].gbps, b->hops, res % 2 != 0, wh->x,
                                link_singled_out(c, res / 2)};
  } else if (res < (int)(2 * t->npci + 2)) {
    b->kind = GR_BOUND_SOCKET;
    b->gbps = c->socket_gbps;
  } else if (res >= (int)(2 * t->npci + 2 + 2 * c->n)) {
    b->kind = GR_BOUND_HOST_MEM;
    b->gbps = wh->cap[wr];
    b->hops /= 2;
  } else {
    b->kind = GR_BOUND_NVLINK;
    b->gbps = wh->cap[wr];
  }
}

static void describe_ring(struct ctx *c, struct gr_ring *r, size_t k, int mode)
{
  const struct hop *wh = NULL;
  int wr = 0;
  r->busbw_gbps = ring_busbw(c, r->order, k, mode, &wh, &wr);
  r->bound = (struct gr_ring_bound){.kind = GR_BOUND_NONE, .node = -1};
  if (!wh && r->busbw_gbps > 0) {
    r->ring_busbw_gbps = nvlink_ring_bound(c, r->order, k);
    r->nvls_busbw_gbps = nvls_bound(c, r->order, k);
  }
  if (wh || r->busbw_gbps > 0)
    ring_bound(c, r, k, mode, wh, wr);
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
  case GR_BOUND_NVLINK: snprintf(buf, cap, "NVLink (%.0f GB/s per direction)", b->gbps); break;
  case GR_BOUND_NVLINK_RINGS:
    snprintf(buf, cap, "each GPU's NVLink bandwidth to the others (%.0f GB/s per direction; NCCL runs one ring per link)",
             b->gbps);
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
                                    [GR_BOUND_NVLINK] = "nvlink", [GR_BOUND_NVLINK_RINGS] = "nvlink_rings",
                                    [GR_BOUND_NVLS] = "nvls"};
  return key[k];
}

/* ---- entry ---- */

static void note(struct gr_prediction *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void note(struct gr_prediction *p, const char *fmt, ...)
{
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  p->notes = xrealloc(p->notes, (p->nnotes + 1) * sizeof(char *));
  p->notes[p->nnotes++] = xstrdup(buf);
}

static void add_verdict(struct gr_prediction *p, const char *workload, int gpus, enum gr_rating r, const char *reasons)
{
  p->verdicts = xrealloc(p->verdicts, (p->nverdicts + 1) * sizeof(*p->verdicts));
  p->verdicts[p->nverdicts++] = (struct gr_verdict){workload, gpus, r, xstrdup(reasons)};
}

/* How NCCL moves one GPU's data to another with P2P allowed up to level:
 * NVLink, PCIe P2P where the pair can and the level reaches, else through
 * host memory. */
static enum gr_xfer xfer_at(const struct gr_prediction *p, size_t i, size_t j, enum gr_level level)
{
  const struct gr_path *path = &p->a->gpu_gpu[i * p->ngpus + j];
  if (path->level == GR_LVL_NV)
    return GR_XFER_NVLINK;
  return path->p2p_capable && path->nccl <= level ? GR_XFER_P2P : GR_XFER_HOST;
}

static void classify_pairs(struct gr_prediction *p)
{
  size_t n = p->ngpus;
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; j < n; j++) {
      struct gr_pair_predict *pp = &p->pairs[i * n + j];
      pp->p2p_capable = p->a->gpu_gpu[i * n + j].p2p_capable; /* the analysis's word: GPUs, driver, platform */
      pp->best = xfer_at(p, i, j, GR_LVL_SYS);
      pp->nccl = xfer_at(p, i, j, p->a->nccl_p2p_level);
    }
}

/* One copy alone: the narrowest resource on its path. */
static void copy_rates(const struct ctx *c, struct gr_prediction *p)
{
  size_t n = c->n;
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; j < n; j++) {
      struct gr_pair_predict *pp = &p->pairs[i * n + j];
      const struct hop *h = hop_of(c, 1, (int)i, (int)j);
      double bw = INFINITY;
      for (int r = 0; r < h->nres; r++) {
        /* a copy runs on the copy engines: copy_nvlink_eff, not NCCL's SM-driven ring_nvlink_eff */
        double e = h->effective[r] ? 1.0
                   : pp->best == GR_XFER_NVLINK ? gr_calib()->copy_nvlink_eff
                   : pp->best == GR_XFER_P2P    ? gr_calib()->copy_p2p_eff
                                                : gr_calib()->copy_host_eff;
        if (h->cap[r] * e < bw)
          bw = h->cap[r] * e;
      }
      pp->gbps = i == j || isinf(bw) ? 0 : bw;
    }
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
  size_t *off = xcalloc(2 * n * n + 1, sizeof(size_t));
  struct hop_build *b = xmalloc(sizeof(*b));
  nvlink_tables(c);
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; j < n; j++) {
      enum gr_xfer d = xfer_at(p, i, j, level), best = p->pairs[i * n + j].best;
      build_hop(c, &c->hops[i * n + j], b, i, j, d);
      hop_store(c, b, &c->hops[i * n + j], &off[i * n + j]);
      if (best == d) { /* the same path in both modes: one copy of its uses */
        c->hops[n * n + i * n + j] = c->hops[i * n + j];
        off[n * n + i * n + j] = off[i * n + j];
        continue;
      }
      build_hop(c, &c->hops[n * n + i * n + j], b, i, j, best);
      hop_store(c, b, &c->hops[n * n + i * n + j], &off[n * n + i * n + j]);
      c->modes_differ = true;
    }
  if (!c->pool_res) { /* no hop uses anything (one GPU): still valid pointers */
    c->pool_res = xcalloc(1, sizeof(int));
    c->pool_cap = xcalloc(1, sizeof(double));
    c->pool_eff = xcalloc(1, sizeof(bool));
  }
  for (size_t h = 0; h < 2 * n * n; h++) {
    c->hops[h].res = c->pool_res + off[h];
    c->hops[h].cap = c->pool_cap + off[h];
    c->hops[h].effective = c->pool_eff + off[h];
  }
  free(b);
  free(off);
}

/* The search tables for each NCCL level a communicator size may get, each
 * opened when first asked for: the level depends on how many GPUs the
 * communicator has (NCCL's AMD rule), so a group of 2 may differ from the
 * machine. */
struct ctxs {
  const struct gr_prediction *p;
  struct ctx c[GR_LVL_SYS + 1];
  bool open[GR_LVL_SYS + 1];
};

static struct ctx *ctx_for(struct ctxs *cs, size_t k)
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
  free(c->pool_cap);
  free(c->pool_eff);
  free(c->nvls_fabric);
}

static void p2p_domains(struct gr_prediction *p)
{
  size_t n = p->ngpus;
  int *dom = xmalloc((n + 1) * sizeof(int));
  for (size_t i = 0; i < n; i++)
    dom[i] = (int)i;
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; j < n; j++)
      if (i != j && p->pairs[i * n + j].p2p_capable && p->a->gpu_gpu[i * n + j].level != GR_LVL_SYS) {
        int a = dom[i], b = dom[j];
        for (size_t k = 0; k < n; k++)
          if (dom[k] == b)
            dom[k] = a;
      }
  p->largest_p2p_domain = n ? 1 : 0;
  for (size_t i = 0; i < n; i++) {
    int size = 0;
    bool first = true;
    for (size_t k = 0; k < n; k++) {
      size += dom[k] == dom[i];
      if (dom[k] == dom[i] && k < i)
        first = false;
    }
    if (first)
      p->ndomains++;
    if (size > p->largest_p2p_domain)
      p->largest_p2p_domain = size;
  }
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
      note(p, "Switch %s has %d lanes but its links use %d (x%d up, %d down): this wiring cannot exist as described.",
           bus, b.lanes, b.down_lanes + b.up_lanes, b.up_lanes, b.down_lanes);
    if (b.gpus > 1 && b.oversubscription > 1.0 && p2p)
      note(p, "Switch %s: %d GPU%s share an x%d uplink (%d lanes down, %.0f:1): P2P inside the switch runs at full speed, but traffic to the CPU, host memory and the other side is shared.",
           bus, b.gpus, b.gpus == 1 ? "" : "s", b.up_lanes, b.down_lanes, b.oversubscription);
    else if (b.gpus > 1 && b.oversubscription > 1.0)
      note(p, "Switch %s: %d GPU%s share an x%d uplink (%d lanes down, %.0f:1) and cannot do P2P, so all their traffic, between them too, goes up that link to host memory.",
           bus, b.gpus, b.gpus == 1 ? "" : "s", b.up_lanes, b.down_lanes, b.oversubscription);
    if (b.nvme && b.gpus)
      note(p, "Switch %s carries %d NVMe drive%s beside %d GPU%s: data loading competes with GPU traffic on its uplink.",
           bus, b.nvme, b.nvme == 1 ? "" : "s", b.gpus, b.gpus == 1 ? "" : "s");
  }
}

static void nic_notes(struct gr_prediction *p)
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
      note(p, "%s shares a PCIe switch with %zu GPU%s: GPUDirect RDMA goes peer-to-peer for them.", name, close,
           close == 1 ? "" : "s");
    else
      note(p, "%s shares no switch with a GPU (nearest: %s): GPUDirect RDMA crosses the CPU, or NCCL stages through host memory.",
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
    note(p, "GPUs sit on %zu sockets but RDMA NICs on %zu of them: multi-node traffic from the other socket's GPUs crosses the inter-socket link.",
         sockets_with_gpus, sockets_with_nics);
}

static void count_hops(const struct ctx *c, struct gr_ring *r, size_t k, int mode)
{
  r->nhops_p2p = r->nhops_host = r->nhops_nvlink = 0;
  for (size_t i = 0; i < k && k > 1; i++) {
    enum gr_xfer x = hop_of(c, mode, r->order[i], r->order[(i + 1) % k])->x;
    r->nhops_p2p += x == GR_XFER_P2P;
    r->nhops_host += x == GR_XFER_HOST;
    r->nhops_nvlink += x == GR_XFER_NVLINK;
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
  size_t n = p->ngpus, off = 0;
  bool any_p2p = false; /* some pair can do P2P, if only across sockets */
  for (size_t i = 0; i < n * n; i++)
    any_p2p |= i / n != i % n && p->pairs[i].p2p_capable;
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

static void training_verdict(struct ctx *c, struct gr_prediction *p)
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
                            "Predicted all-reduce bus bandwidth %.1f GB/s with NCCL's defaults (%s %s, bounded by %s).",
                            d->busbw_gbps, d->nvls_busbw_gbps > d->ring_busbw_gbps ? "GPUs" : "ring", ring,
                            gr_ring_bound_text(p, d, bound, sizeof(bound)));
  if (p->best_needs_p2p_level && p->best.busbw_gbps > 0) {
    ring_text(&p->best, n, ring, ring_cap);
    off += (size_t)snprintf(reasons + off, cap - off, " With NCCL_P2P_LEVEL=%s: %.1f GB/s (ring %s, bounded by %s).",
                            p->best_p2p_level, p->best.busbw_gbps, ring,
                            gr_ring_bound_text(p, &p->best, bound, sizeof(bound)));
  }
  off += p2p_reach_text(c, p, reasons + off, cap - off);
  off += (size_t)snprintf(reasons + off, cap - off, " %zu of %zu ring hops go through host memory with NCCL's defaults.",
                          d->nhops_host, n);
  bool crosses = false;
  for (size_t i = 0; i < n; i++)
    crosses |= c->a->gpu_gpu[(size_t)d->order[i] * n + (size_t)d->order[(i + 1) % n]].level == GR_LVL_SYS;
  if (crosses)
    snprintf(reasons + off, cap - off, " The ring crosses the link between %s twice.",
             c->t->npackages > 1 ? "sockets" : "NUMA nodes");
  double floor = gpu_link_floor(c->a), ratio = floor > 0 ? d->busbw_gbps / floor : 0.5; /* unknown: no verdict from it */
  enum gr_rating r;
  if (d->nhops_nvlink == n || ((size_t)p->largest_p2p_domain == n && ratio >= 0.6))
    r = GR_RATE_GOOD;
  else if ((size_t)p->largest_p2p_domain * 4 <= n || p->largest_p2p_domain < 2 || ratio < 0.35)
    r = GR_RATE_POOR;
  else
    r = GR_RATE_FAIR;
  add_verdict(p, "training", (int)n, r, reasons);
  free(ring);
  free(reasons);
}

/* Candidate groups for tensor parallelism: from each GPU, its k-1 nearest
 * peers (by path level, then bandwidth). Trying every subset grows too fast
 * (16 GPUs choose 8 is 12870), and the best group is always a near one. */
static void nearest_group(const struct ctx *c, size_t seed, size_t k, int *set)
{
  size_t n = c->n, m = 0;
  bool *used = xcalloc(n + 1, sizeof(bool));
  set[m++] = (int)seed;
  used[seed] = true;
  while (m < k) {
    size_t best = n;
    for (size_t j = 0; j < n; j++) {
      if (used[j])
        continue;
      const struct gr_path *pj = &c->a->gpu_gpu[seed * n + j];
      if (best == n)
        best = j;
      const struct gr_path *pb = &c->a->gpu_gpu[seed * n + best];
      if (pj->level < pb->level || (pj->level == pb->level && pj->bw_gbps > pb->bw_gbps + 1e-9))
        best = j;
    }
    set[m++] = (int)best;
    used[best] = true;
  }
  free(used);
  /* keep bus order inside the group so rings start from the lowest GPU */
  for (size_t i = 1; i < k; i++)
    for (size_t j = i; j > 0 && set[j - 1] > set[j]; j--) {
      int tmp = set[j];
      set[j] = set[j - 1];
      set[j - 1] = tmp;
    }
}

/* The best ring in a mode among the nearest groups of k GPUs; its order in
 * best_order (k ints). */
static double best_group(struct ctx *c, size_t k, int mode, int *best_order)
{
  size_t n = c->n;
  int *set = xmalloc((k + 1) * sizeof(int)), *order = xmalloc((k + 1) * sizeof(int));
  double best = -1;
  int *seen = xcalloc(n * k + 1, sizeof(int));
  size_t nseen = 0;
  for (size_t seed = 0; seed < n; seed++) {
    nearest_group(c, seed, k, set);
    bool dup = false;
    for (size_t g = 0; g < nseen && !dup; g++)
      dup = memcmp(&seen[g * k], set, k * sizeof(int)) == 0;
    if (dup)
      continue;
    memcpy(&seen[nseen++ * k], set, k * sizeof(int));
    double v = best_ring(c, set, k, mode, order);
    if (v > best + 1e-9) {
      best = v;
      memcpy(best_order, order, k * sizeof(int));
    }
  }
  free(seen);
  free(set);
  free(order);
  return best;
}

/* The NCCL_P2P_LEVEL a ring needs in mode 1: the farthest NCCL path of its
 * P2P hops ("PHB", "SYS"). */
static const char *level_needed(const struct ctx *c, const int *order, size_t k)
{
  enum gr_level need = GR_LVL_PIX;
  for (size_t i = 0; i < k && k > 1; i++) {
    size_t x = (size_t)order[i], y = (size_t)order[(i + 1) % k];
    if (hop_of(c, 1, (int)x, (int)y)->x == GR_XFER_P2P && c->a->gpu_gpu[x * c->n + y].nccl > need)
      need = c->a->gpu_gpu[x * c->n + y].nccl;
  }
  return gr_nccl_level_str(need);
}

/* How a ring's hops move their bytes, in words. */
static void hops_text(const struct gr_ring *r, size_t k, char *buf, size_t cap)
{
  if (r->nhops_nvlink == k)
    snprintf(buf, cap, "joined by NVLink");
  else if (r->nhops_host == k)
    snprintf(buf, cap, "every hop staged through host memory");
  else if (r->nhops_host)
    snprintf(buf, cap, "%zu of %zu hops staged through host memory", r->nhops_host, k);
  else if (r->nhops_nvlink)
    snprintf(buf, cap, "over NVLink and PCIe peer-to-peer");
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
    matters |= hop_of(c, 0, (int)x, (int)y)->x == GR_XFER_P2P && c->a->gpu_gpu[x * c->n + y].nccl > p->a->nccl_p2p_level;
  }
  buf[0] = '\0';
  if (matters)
    snprintf(buf, cap, " NCCL allows P2P up to %s in a communicator of %zu GPUs (%s).", gr_nccl_level_str(c->level), k,
             gr_nccl_why(p->a, k, why, sizeof(why)));
}

/* Tensor parallelism over k GPUs, judged with NCCL's defaults for a
 * communicator of k GPUs (not the machine's count), with the raised
 * NCCL_P2P_LEVEL offered beside it where it helps. */
static void tp_verdict(struct ctxs *cs, struct gr_prediction *p, size_t k)
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
    sys |= c->a->gpu_gpu[(size_t)dflt[i] * c->n + (size_t)dflt[(i + 1) % k]].level == GR_LVL_SYS;
  enum gr_rating rating = r.nhops_nvlink == k ? GR_RATE_GOOD
                          : r.nhops_host == 0 && !sys ? GR_RATE_FAIR
                                                       : GR_RATE_POOR;
  if (k == 2 && rating == GR_RATE_FAIR)
    rating = GR_RATE_GOOD; /* two GPUs P2P: two all-reduces per layer over one link, no sharing */
  hops_text(&r, k, how, sizeof(how));
  if (r.busbw_gbps > 0)
    snprintf(bw, sizeof(bw), "all-reduce about %.1f GB/s with NCCL's defaults (bounded by %s)", r.busbw_gbps,
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

static void jobs_verdict(struct gr_prediction *p)
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
  if (a->nvlink_unrecorded) {
    /* PCIe-only verdicts beside NVSwitches would be presented as fact while
     * the GPUs most likely talk over NVLink: none is given */
    note(p, "No verdicts: the GPUs sit beside NVSwitches but this input records no NVLink and the catalog does not know their links, so every GPU figure here is PCIe only. Run gpurig on the machine (it reads NVLink from the driver) or describe it in a rig with `nvswitch`.");
  } else {
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
  for (size_t i = 0; i < p->nnotes; i++)
    free(p->notes[i]);
  free(p->notes);
  memset(p, 0, sizeof(*p));
}

const char *gr_xfer_name(enum gr_xfer x)
{
  return x == GR_XFER_NVLINK ? "nvlink" : x == GR_XFER_P2P ? "p2p" : "host";
}

const char *gr_rating_name(enum gr_rating r)
{
  return r == GR_RATE_GOOD ? "good" : r == GR_RATE_FAIR ? "fair" : "poor";
}
