/* The GPU pair matrix kept per pair of GPU classes (analysis/classes.c),
 * and what is computed over it: the hives and the bottlenecks. Every pair
 * of two classes has the same level, P2P support and bandwidths, and its
 * path differs only in which GPU's own bridges it names, so each of these
 * is computed once per pair of classes and renamed or counted for its
 * members: classes^2 + n work where the matrix was n^2 (512 GPUs of 64
 * switches: 4,096 paths, not 262,144). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis_internal.h"
#include "base/util.h"

/* ---- the matrix ---- */

int gr_node_owner(const struct gr_analysis *a, int node)
{
  return node >= 0 && a->chains ? a->chains->owner[node] : -1;
}

int gr_class_rename(const struct gr_analysis *a, int b, size_t ri, size_t rj, size_t i, size_t j)
{
  const struct gr_gpu_chains *c = a->chains;
  if (b < 0 || !c || c->owner[b] < 0)
    return b;
  if (c->owner[b] == (int)ri)
    return c->nodes[c->off[i] + c->pos[b]];
  if (c->owner[b] == (int)rj)
    return c->nodes[c->off[j] + c->pos[b]];
  return b;
}

bool gr_class_pair_rep(const struct gr_analysis *a, size_t c, size_t d, size_t *i, size_t *j)
{
  size_t sc = a->class_start[c], sd = a->class_start[d];
  if (c == d && a->class_start[c + 1] - sc < 2)
    return false;
  *i = (size_t)a->class_gpus[sc];
  *j = (size_t)a->class_gpus[c == d ? sd + 1 : sd];
  return true;
}

/* How many (x of c, y of d) have x < y: a merge of the two sorted member
 * lists. */
static size_t pairs_below(const struct gr_analysis *a, size_t c, size_t d)
{
  const int *xs = a->class_gpus + a->class_start[c], *ys = a->class_gpus + a->class_start[d];
  size_t nx = a->class_start[c + 1] - a->class_start[c], ny = a->class_start[d + 1] - a->class_start[d];
  if (c == d)
    return nx * (nx - 1) / 2;
  size_t count = 0, k = 0;
  for (size_t q = 0; q < ny; q++) { /* y = ys[q]: the members of c below it */
    while (k < nx && xs[k] < ys[q])
      k++;
    count += k;
  }
  return count;
}

/* One path per class pair, walked for the pair gr_class_pair_rep names
 * (both ways at once: the pair (c, d) and (d, c) share their walk). */
void gpu_paths(struct gr_analysis *a)
{
  const struct gr_topo *t = a->t;
  size_t n = a->ngpus;
  a->chains = xcalloc(1, sizeof(*a->chains));
  gpu_classes(a, a->chains);
  size_t nc = a->nclasses;
  a->class_path = xcalloc(nc * nc + 1, sizeof(*a->class_path));
  a->class_rep = xmalloc((nc * nc + 1) * 2 * sizeof(int));
  bool *p2p = xcalloc(n + 1, sizeof(bool));
  for (size_t i = 0; i < n; i++)
    p2p[i] = gpu_p2p(&t->pci[t->gpus[i]]);
  for (size_t c = 0; c < nc; c++)
    for (size_t d = c; d < nc; d++) {
      size_t i, j, cd = c * nc + d, dc = d * nc + c;
      if (!gr_class_pair_rep(a, c, d, &i, &j)) {
        a->class_rep[2 * cd] = a->class_rep[2 * cd + 1] = -1;
        continue;
      }
      gpu_pair_paths(a, p2p, i, j, &a->class_path[cd], &a->class_path[dc]);
      a->class_rep[2 * cd] = a->class_rep[2 * dc + 1] = (int)i;
      a->class_rep[2 * cd + 1] = a->class_rep[2 * dc] = (int)j;
    }
  free(p2p);
  a->class_below = xmalloc((nc * nc + 1) * sizeof(size_t));
  for (size_t c = 0; c < nc; c++)
    for (size_t d = 0; d < nc; d++)
      a->class_below[c * nc + d] = pairs_below(a, c, d);
}

struct gr_path gr_gpu_path(const struct gr_analysis *a, size_t i, size_t j)
{
  static const struct gr_path self = {.level = GR_LVL_X, .nccl = GR_LVL_X, .p2p_capable = true, .nccl_p2p = true,
                                      .bottleneck = -1, .top = -1};
  if (i == j)
    return self;
  size_t k = (size_t)a->gpu_class[i] * a->nclasses + (size_t)a->gpu_class[j];
  struct gr_path p = a->class_path[k];
  size_t ri = (size_t)a->class_rep[2 * k], rj = (size_t)a->class_rep[2 * k + 1];
  if (ri != i || rj != j) {
    p.bottleneck = gr_class_rename(a, p.bottleneck, ri, rj, i, j);
    p.top = gr_class_rename(a, p.top, ri, rj, i, j);
  }
  return p;
}

struct gr_path gr_gpu_path_walked(const struct gr_analysis *a, size_t i, size_t j)
{
  const struct gr_topo *t = a->t;
  if (i == j)
    return path_between(a, t->gpus[i], t->gpus[j], true);
  bool p2p[2] = {gpu_p2p(&t->pci[t->gpus[i]]), gpu_p2p(&t->pci[t->gpus[j]])};
  struct gr_path xy, yx;
  /* gpu_pair_paths reads p2p by GPU index: a two-GPU table in their order */
  bool *table = xcalloc(a->ngpus + 1, sizeof(bool));
  table[i] = p2p[0];
  table[j] = p2p[1];
  gpu_pair_paths(a, table, i, j, &xy, &yx);
  free(table);
  return xy;
}

void gr_each_pair_class(const struct gr_analysis *a, gr_pair_class_fn fn, void *ctx)
{
  size_t nc = a->nclasses;
  for (size_t k = 0; k < nc * nc; k++) /* a pair of classes with pairs below has a walked pair: its path as is */
    if (a->class_below[k])
      fn(ctx, &a->class_path[k], k / nc, k % nc, a->class_below[k]);
}

bool gr_any_p2p_pair(const struct gr_analysis *a)
{
  for (size_t c = 0; c < a->nclasses; c++)
    for (size_t d = 0; d < a->nclasses; d++) {
      size_t i, j;
      if (gr_class_pair_rep(a, c, d, &i, &j) && a->class_path[c * a->nclasses + d].p2p_capable)
        return true;
    }
  return false;
}

/* ---- hives ---- */

static void join_pair_class(void *ctx, const struct gr_path *p, size_t c, size_t d, size_t np)
{
  struct gr_analysis *a = ((void **)ctx)[0];
  int *uf = ((void **)ctx)[1];
  (void)np;
  if (p->level > GR_LVL_PXB || !p->p2p_capable)
    return;
  /* the pairs x of c < y of d: each y joins the x below it, so those x join
   * each other too; one union per GPU, not per pair */
  const int *xs = a->class_gpus + a->class_start[c], *ys = a->class_gpus + a->class_start[d];
  size_t nx = a->class_start[c + 1] - a->class_start[c], ny = a->class_start[d + 1] - a->class_start[d];
  size_t below = 0, joined = 1; /* xs[0 .. joined-1] are joined to xs[0] */
  for (size_t q = 0; q < ny; q++) {
    while (below < nx && xs[below] < ys[q])
      below++;
    if (below == 0)
      continue;
    for (; joined < below; joined++)
      gr_uf_union(uf, xs[0], xs[joined]);
    gr_uf_union(uf, xs[0], ys[q]);
  }
}

/* Each hive's worst pair and worst joining pair, over the pairs of classes
 * that have members in it: per hive, its classes and how many members of
 * each (a class's members may lie in different hives where they cannot
 * do P2P with each other). */
static void hive_levels(struct gr_analysis *a, enum gr_level *joined)
{
  size_t n = a->ngpus, nc = a->nclasses;
  size_t *start = xcalloc(a->nhives + 2, sizeof(size_t)); /* per hive: where its (class, count) entries start */
  int *cls = xmalloc((n + 1) * sizeof(int));
  size_t *cnt = xcalloc(n + 1, sizeof(size_t));
  int *last = xmalloc((nc + 1) * sizeof(int)); /* per class: the hive it was last counted in */
  for (size_t c = 0; c < nc; c++)
    last[c] = -1;
  /* GPUs by hive, then class: a counting pass over the hives */
  int *order = xmalloc((n + 1) * sizeof(int));
  size_t *fill = xcalloc(a->nhives + 1, sizeof(size_t)), *hstart = xcalloc(a->nhives + 2, sizeof(size_t));
  for (size_t g = 0; g < n; g++)
    hstart[a->hive[g] + 1]++;
  for (size_t h = 0; h < a->nhives; h++)
    hstart[h + 1] += hstart[h];
  for (size_t k = 0; k < n; k++) { /* class_gpus is class by class: each hive's GPUs come out by class */
    int g = a->class_gpus[k];
    order[hstart[a->hive[g]] + fill[a->hive[g]]++] = g;
  }
  size_t ne = 0;
  for (size_t h = 0; h < a->nhives; h++) {
    start[h] = ne;
    for (size_t k = hstart[h]; k < hstart[h + 1]; k++) {
      int c = a->gpu_class[order[k]];
      if (last[c] != (int)h) {
        last[c] = (int)h;
        cls[ne] = c;
        cnt[ne++] = 0;
      }
      cnt[ne - 1]++;
    }
  }
  start[a->nhives] = ne;
  for (size_t h = 0; h < a->nhives; h++) {
    struct gr_hive *hv = &a->hives[h];
    hv->ngpus = hstart[h + 1] - hstart[h];
    for (size_t x = start[h]; x < start[h + 1]; x++)
      for (size_t y = start[h]; y < start[h + 1]; y++) {
        if (x == y && cnt[x] < 2)
          continue; /* one member of its class here: no pair with itself */
        const struct gr_path *p = &a->class_path[(size_t)cls[x] * nc + (size_t)cls[y]];
        if (p->level > hv->worst)
          hv->worst = p->level;
        if (p->level <= GR_LVL_PXB && p->p2p_capable && p->level > joined[h])
          joined[h] = p->level;
        hv->xgmi |= p->level == GR_LVL_GPULINK && p->xgmi; /* xGMI joins AMD GPUs only: all its pairs or none */
      }
  }
  free(fill);
  free(hstart);
  free(order);
  free(last);
  free(cnt);
  free(cls);
  free(start);
}

/* Hives: GPUs that talk P2P without crossing the CPU; a GPU that cannot do
 * P2P is a hive of its own, whatever switch it shares. Each hive's kind is
 * the worst of the pairs that join it (NVLink, one switch, several). */
void find_hives(struct gr_analysis *a)
{
  size_t n = a->ngpus;
  int *uf = xmalloc((n + 1) * sizeof(int));
  for (size_t i = 0; i < n; i++)
    uf[i] = (int)i;
  void *ctx[2] = {a, uf};
  gr_each_pair_class(a, join_pair_class, ctx);
  a->hive = xcalloc(n + 1, sizeof(int));
  int *hive_of_root = xmalloc((n + 1) * sizeof(int));
  for (size_t i = 0; i < n; i++)
    hive_of_root[i] = -1;
  for (size_t i = 0; i < n; i++) {
    int r = gr_uf_find(uf, (int)i);
    if (hive_of_root[r] < 0)
      hive_of_root[r] = (int)a->nhives++;
    a->hive[i] = hive_of_root[r];
  }
  free(hive_of_root);
  free(uf);
  a->hives = xcalloc(a->nhives + 1, sizeof(*a->hives));
  enum gr_level *joined = xcalloc(a->nhives + 1, sizeof(*joined)); /* its worst joining pair */
  hive_levels(a, joined);
  for (size_t h = 0; h < a->nhives; h++)
    a->hives[h].kind = a->hives[h].ngpus < 2 ? GR_HIVE_ALONE : joined[h] == GR_LVL_GPULINK ? GR_HIVE_GPULINK
                     : joined[h] == GR_LVL_PIX ? GR_HIVE_SWITCH : GR_HIVE_SWITCHES;
  free(joined);
}

const char *gr_hive_name(const struct gr_analysis *a, size_t h)
{
  if (a->hives[h].kind == GR_HIVE_GPULINK && a->hives[h].xgmi)
    return "xGMI"; /* AMD's GPU links, the same kind of hive */
  return gr_hive_kind_name(a->hives[h].kind);
}

/* ---- bottlenecks ---- */

static void hold_group(struct gr_analysis *a, int *entry, int node, struct gr_pair_group g)
{
  if (entry[node] < 0) {
    a->bottlenecks = xrealloc(a->bottlenecks, (a->nbottlenecks + 1) * sizeof(*a->bottlenecks));
    a->bottlenecks[a->nbottlenecks] =
        (struct gr_bottleneck){.node = node, .gbps = a->link[node].gbps, .nccl_gbps = a->link[node].nccl_gbps};
    entry[node] = (int)a->nbottlenecks++;
  }
  struct gr_bottleneck *b = &a->bottlenecks[entry[node]];
  if (b->ngroups == b->cap_groups) {
    b->cap_groups = b->cap_groups ? 2 * b->cap_groups : 4;
    b->groups = xrealloc(b->groups, b->cap_groups * sizeof(*b->groups));
  }
  b->groups[b->ngroups++] = g;
  b->npairs += g.npairs;
}

/* How many GPUs of class d lie above (up) or below GPU g in index order. */
static size_t members_beyond(const struct gr_analysis *a, size_t d, int g, bool up)
{
  size_t k = 0, nd = a->class_start[d + 1] - a->class_start[d];
  const int *ys = a->class_gpus + a->class_start[d];
  while (k < nd && ys[k] < g)
    k++;
  size_t self = k < nd && ys[k] == g;
  return up ? nd - k - self : k;
}

struct hold_ctx {
  struct gr_analysis *a;
  int *entry;
  double best;
};

/* A link on the walked pair's way up (ri's or rj's own, or shared) that
 * runs at the pair's rate holds the class pair's pairs (x of c < y of d,
 * the path x -> y a copy of ri -> rj): a shared link all of them, a link of
 * ri's own each x's pairs at x's copy of it, one of rj's each y's at y's. */
static void hold_link(struct hold_ctx *h, size_t c, size_t d, int k, size_t ri, size_t rj, size_t np)
{
  struct gr_analysis *a = h->a;
  const struct gr_gpu_chains *ch = a->chains;
  int owner = ch->owner[k];
  if (owner != (int)ri && owner != (int)rj) {
    hold_group(a, h->entry, k, (struct gr_pair_group){(int)c, (int)d, -1, 0, np});
    return;
  }
  bool high = owner == (int)rj; /* the GPU is the pair's y (higher index), of d */
  size_t own = high ? d : c, other = high ? c : d;
  for (size_t q = a->class_start[own]; q < a->class_start[own + 1]; q++) {
    int g = a->class_gpus[q];
    size_t n = members_beyond(a, other, g, !high); /* x pairs with the y above it, y with the x below */
    if (n)
      hold_group(a, h->entry, ch->nodes[ch->off[g] + ch->pos[k]], (struct gr_pair_group){(int)c, (int)d, g, high, n});
  }
}

static void hold_class_pair(void *ctx, const struct gr_path *p, size_t c, size_t d, size_t np)
{
  struct hold_ctx *h = ctx;
  const struct gr_analysis *a = h->a;
  const struct gr_topo *t = a->t;
  if (!(p->bw_gbps < h->best - 1e-9 && p->bottleneck >= 0))
    return;
  size_t ri = 0, rj = 0;
  if (!gr_class_pair_rep(a, c, d, &ri, &rj))
    return;
  for (int end = 0; end < 2; end++)
    for (int k = t->gpus[end ? rj : ri], steps = 0; k >= 0 && k != p->top && steps <= (int)t->npci; steps++) {
      if (a->link[k].present && fabs(a->link[k].gbps - p->bw_gbps) < 1e-9)
        hold_link(h, c, d, k, ri, rj, np);
      k = t->pci[k].parent;
    }
}

static int cmp_bottleneck(const void *x, const void *y)
{
  const struct gr_bottleneck *a = x, *b = y;
  return (a->node > b->node) - (a->node < b->node);
}

static void socket_held(void *ctx, const struct gr_path *p, size_t c, size_t d, size_t np)
{
  double *best_nccl = ctx;
  (void)c, (void)d, (void)np;
  /* the theoretical figures leave the socket link out; NCCL's count it */
  if (p->via == GR_VIA_SOCKET && p->nccl_bw_gbps < best_nccl[0] - 1e-9)
    best_nccl[1] = 1;
}

/* The links (and the inter-socket link) that hold GPU pairs below what the
 * best pairs reach, so every output names the same causes. */
void find_bottlenecks(struct gr_analysis *a)
{
  size_t nc = a->nclasses;
  double best_nccl[2] = {0, 0};
  for (size_t k = 0; k < nc * nc; k++)
    if (a->class_rep[2 * k] >= 0) {
      a->best_pair_gbps = fmax(a->best_pair_gbps, a->class_path[k].bw_gbps);
      best_nccl[0] = fmax(best_nccl[0], a->class_path[k].nccl_bw_gbps);
    }
  gr_each_pair_class(a, socket_held, best_nccl);
  a->socket_bottleneck = best_nccl[1] != 0;
  int *entry = xmalloc((a->t->npci + 1) * sizeof(int));
  for (size_t i = 0; i < a->t->npci; i++)
    entry[i] = -1;
  struct hold_ctx h = {a, entry, a->best_pair_gbps};
  gr_each_pair_class(a, hold_class_pair, &h);
  free(entry);
  if (a->nbottlenecks > 1)
    qsort(a->bottlenecks, a->nbottlenecks, sizeof(*a->bottlenecks), cmp_bottleneck);
}

const struct gr_bottleneck *gr_bottleneck_of(const struct gr_analysis *a, int idx)
{
  for (size_t i = 0; i < a->nbottlenecks; i++)
    if (a->bottlenecks[i].node == idx)
      return &a->bottlenecks[i];
  return NULL;
}

/* ---- a bottleneck's pairs, listed ---- */

static int cmp_pair(const void *x, const void *y)
{
  const int *p = x, *q = y;
  if (p[0] != q[0])
    return (p[0] > q[0]) - (p[0] < q[0]);
  return (p[1] > q[1]) - (p[1] < q[1]);
}

/* Group g's pairs in matrix order, each to fn until it returns false. A
 * GPU's group walks only that GPU's pairs. */
typedef bool (*pair_fn)(void *ctx, int x, int y);
static void each_group_pair(const struct gr_analysis *a, const struct gr_pair_group *g, pair_fn fn, void *ctx)
{
  const int *xs = a->class_gpus + a->class_start[g->from_class], *ys = a->class_gpus + a->class_start[g->to_class];
  size_t nx = a->class_start[g->from_class + 1] - a->class_start[g->from_class];
  size_t ny = a->class_start[g->to_class + 1] - a->class_start[g->to_class];
  if (g->gpu >= 0 && !g->gpu_high) { /* (gpu, each y above it) */
    for (size_t q = 0; q < ny; q++)
      if (ys[q] > g->gpu && !fn(ctx, g->gpu, ys[q]))
        return;
    return;
  }
  if (g->gpu >= 0) { /* (each x below it, gpu) */
    for (size_t p = 0; p < nx && xs[p] < g->gpu; p++)
      if (!fn(ctx, xs[p], g->gpu))
        return;
    return;
  }
  for (size_t p = 0; p < nx; p++)
    for (size_t q = 0; q < ny; q++)
      if (xs[p] < ys[q] && !fn(ctx, xs[p], ys[q]))
        return;
}

struct pair_list {
  int *v;
  size_t n, max;
};

static bool append_pair(void *ctx, int x, int y)
{
  struct pair_list *l = ctx;
  if (l->n == l->max)
    return false;
  l->v[2 * l->n] = x;
  l->v[2 * l->n + 1] = y;
  l->n++;
  return true;
}

/* Pair (x, y) into the sorted list (its n of at most max), if it is among
 * the first max: an insertion. Returns false where it comes after all of a
 * full list (so the group's later pairs do too). */
static bool keep_first(void *ctx, int x, int y)
{
  struct pair_list *l = ctx;
  int p[2] = {x, y}, *top = l->v;
  if (l->n == l->max && cmp_pair(p, top + 2 * (l->max - 1)) >= 0)
    return false;
  size_t at = l->n < l->max ? l->n++ : l->max - 1;
  for (; at > 0 && cmp_pair(p, top + 2 * (at - 1)) < 0; at--) {
    top[2 * at] = top[2 * at - 2];
    top[2 * at + 1] = top[2 * at - 1];
  }
  top[2 * at] = x;
  top[2 * at + 1] = y;
  return true;
}

size_t gr_bottleneck_pairs(const struct gr_analysis *a, const struct gr_bottleneck *b, int *out, size_t max)
{
  if (max == 0 || b->npairs == 0)
    return 0;
  if (max <= 64) { /* a printer's first few: each group is left at its first pair not among them */
    struct pair_list top = {out, 0, max};
    for (size_t k = 0; k < b->ngroups; k++)
      each_group_pair(a, &b->groups[k], keep_first, &top);
    return top.n;
  }
  /* each group's first max pairs, then the first max of them all */
  size_t cap = 0;
  for (size_t k = 0; k < b->ngroups; k++)
    cap += b->groups[k].npairs < max ? b->groups[k].npairs : max;
  struct pair_list all = {xmalloc((2 * cap + 2) * sizeof(int)), 0, 0};
  for (size_t k = 0; k < b->ngroups; k++) {
    all.max = all.n + (b->groups[k].npairs < max ? b->groups[k].npairs : max);
    each_group_pair(a, &b->groups[k], append_pair, &all);
  }
  qsort(all.v, all.n, 2 * sizeof(int), cmp_pair);
  size_t m = all.n < max ? all.n : max;
  memcpy(out, all.v, m * 2 * sizeof(int));
  free(all.v);
  return m;
}
