/* The nearest groups of k GPUs (tensor-parallel and plan groups) and the
 * best ring among them, searched over GPU classes (analysis/classes.c):
 * every pair of two classes is as near as any other, so a seed's nearest
 * peers come from its nearest classes (analysis/predict_internal.h). */
#include "analysis/predict.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/predict_internal.h"

/* Whether path p is nearer than q: a lower level, or the same level and more
 * bandwidth. */
static bool nearer(const struct gr_path *p, const struct gr_path *q)
{
  return p->level < q->level || (p->level == q->level && p->bw_gbps > q->bw_gbps + 1e-9);
}

/* The path between every two GPU classes (a class with itself: between two
 * of its GPUs), which every such pair's level and bandwidth are; kept in the
 * ctx from the first nearest-group search on. */
static void near_paths(struct ctx *c)
{
  size_t i, j;
  if (c->near)
    return;
  c->near = xcalloc(c->nc * c->nc + 1, sizeof(*c->near));
  for (size_t u = 0; u < c->nc; u++)
    for (size_t v = 0; v < c->nc; v++)
      if (gr_class_pair_rep(c->a, u, v, &i, &j))
        c->near[u * c->nc + v] = gr_gpu_path(c->a, i, j);
}

static inline const struct gr_path *class_path(const struct ctx *c, size_t x, size_t y)
{
  return &c->near[x * c->nc + y];
}

/* The nearest groups' search over classes. GPU j is nearer to a seed of
 * class x than GPU j' where its class pair's path is nearer, or neither is
 * and j < j' (the order nearest_group kept GPU by GPU). So the k-1 nearest
 * GPUs lie in the k-1 nearest classes, each class ranked by its lowest
 * member other than the seed: any GPU of a later class has k-1 GPUs before
 * it, those classes' lowest. And in a class only its k-1 lowest members can
 * be among them. */
struct near_search {
  struct ctx *c;
  size_t k;
  int *classes;      /* room for k classes */
  int *firsts;       /* room for k: their lowest members other than the seed */
  size_t *at;        /* room for k: take_members' scratch */
};

/* Class y's lowest member other than seed, -1 none. */
static int class_first(const struct ctx *c, size_t y, size_t seed)
{
  const struct gr_analysis *a = c->a;
  size_t at = a->class_start[y];
  if (at < a->class_start[y + 1] && (size_t)a->class_gpus[at] == seed)
    at++;
  return at < a->class_start[y + 1] ? a->class_gpus[at] : -1;
}

/* Whether class y (lowest member fy) comes before class z (fz) from class x. */
static bool class_before(const struct ctx *c, size_t x, size_t y, int fy, size_t z, int fz)
{
  const struct gr_path *py = class_path(c, x, y), *pz = class_path(c, x, z);
  return nearer(py, pz) || (!nearer(pz, py) && fy < fz);
}

/* The k-1 nearest classes from seed's class into ns->classes (ranked);
 * returns how many (fewer where there are fewer). */
/* Inserts class y (lowest member fy) into the ranking cl (firsts fl, m of
 * them, at most want kept) from class x; returns the new count. */
static size_t rank_insert(const struct ctx *c, size_t x, int *cl, int *fl, size_t m, size_t want, size_t y, int fy)
{
  size_t at = m;
  while (at > 0 && class_before(c, x, y, fy, (size_t)cl[at - 1], fl[at - 1]))
    at--;
  if (at >= want)
    return m;
  if (m < want)
    m++;
  for (size_t q = m - 1; q > at; q--) {
    cl[q] = cl[q - 1];
    fl[q] = fl[q - 1];
  }
  cl[at] = (int)y;
  fl[at] = fy;
  return m;
}

/* The 7 here: the tensor-parallel verdicts' groups of 2, 4 and 8 (in both
 * modes) share one ranking. */
#define RANK_AT_LEAST 7

/* Per class, the other classes' ranking from it, want of them at least
 * (c->rank): the seed changes only where its own class stands, and a
 * shorter ranking is the start of a longer one, so it is kept in the ctx
 * for every group size and mode. */
static void near_ranks(struct ctx *c, size_t want)
{
  if (c->rank && c->rank_want >= want)
    return;
  want = want > RANK_AT_LEAST ? want : RANK_AT_LEAST;
  free(c->rank);
  c->rank = xmalloc((2 * c->nc * want + 1) * sizeof(int));
  c->rank_n = xrealloc(c->rank_n, (c->nc + 1) * sizeof(size_t));
  c->rank_want = want;
  for (size_t x = 0; x < c->nc; x++) {
    int *cl = c->rank + 2 * x * want, *fl = cl + want;
    size_t m = 0;
    for (size_t y = 0; y < c->nc; y++)
      if (y != x) /* x has no member in y: its lowest is the same from every seed */
        m = rank_insert(c, x, cl, fl, m, want, y, class_first(c, y, (size_t)c->a->class_gpus[c->a->class_start[x]]));
    c->rank_n[x] = m;
  }
}

static size_t nearest_classes(struct near_search *ns, size_t seed)
{
  struct ctx *c = ns->c;
  size_t x = (size_t)c->cls[seed], want = ns->k - 1, m = c->rank_n[x] < want ? c->rank_n[x] : want;
  const int *cl = c->rank + 2 * x * c->rank_want, *fl = cl + c->rank_want;
  memcpy(ns->classes, cl, m * sizeof(int));
  memcpy(ns->firsts, fl, m * sizeof(int));
  int fx = class_first(c, x, seed); /* the seed's own class, where it has another GPU */
  return fx < 0 ? m : rank_insert(c, x, ns->classes, ns->firsts, m, want, x, fx);
}

static int cmp_int(const void *x, const void *y)
{
  return (*(const int *)x > *(const int *)y) - (*(const int *)x < *(const int *)y);
}

/* Sorts m ints ascending: by insertion where there are few (a group, the
 * candidates of a group of 8), qsort's set-up costs more than it saves. */
static void sort_ints(int *v, size_t m)
{
  if (m > 64) {
    qsort(v, m, sizeof(int), cmp_int);
    return;
  }
  for (size_t i = 1; i < m; i++)
    for (size_t j = i; j > 0 && v[j - 1] > v[j]; j--) {
      int tmp = v[j];
      v[j] = v[j - 1];
      v[j - 1] = tmp;
    }
}

/* Takes up to `want` members of the ranked classes cl[0..ncl) whose paths
 * are alike (none nearer than another), lowest GPU first, the seed left out,
 * into peers; returns how many. */
static size_t take_members(const struct ctx *c, const int *cl, size_t ncl, size_t seed, int *peers, size_t want,
                           size_t *at)
{
  const struct gr_analysis *a = c->a;
  size_t took = 0; /* at[q]: class q's next member */
  for (size_t q = 0; q < ncl; q++)
    at[q] = a->class_start[cl[q]];
  while (took < want) {
    size_t pick = ncl;
    for (size_t q = 0; q < ncl; q++) {
      if (at[q] < a->class_start[cl[q] + 1] && (size_t)a->class_gpus[at[q]] == seed)
        at[q]++;
      if (at[q] < a->class_start[cl[q] + 1] &&
          (pick == ncl || a->class_gpus[at[q]] < a->class_gpus[at[pick]]))
        pick = q;
    }
    if (pick == ncl)
      break;
    peers[took++] = a->class_gpus[at[pick]++];
  }
  return took;
}

/* Candidate groups for tensor parallelism: from each GPU, its k-1 nearest
 * peers (by path level, then bandwidth; the lower GPU first among equals).
 * Trying every subset grows too fast (16 GPUs choose 8 is 12870), and the
 * best group is always a near one. The peers are the ranked classes'
 * members in turn (near_search), classes with alike paths merged by GPU
 * index: k per seed, where a pass over the seed's row was n. */
static void nearest_group(struct near_search *ns, size_t seed, int *set)
{
  struct ctx *c = ns->c;
  size_t k = ns->k, x = (size_t)c->cls[seed], ncl = nearest_classes(ns, seed), m = 0;
  set[0] = (int)seed;
  for (size_t q = 0, e; q < ncl && m + 1 < k; q = e) {
    const struct gr_path *pq = class_path(c, x, (size_t)ns->classes[q]);
    for (e = q + 1; e < ncl && !nearer(pq, class_path(c, x, (size_t)ns->classes[e])); e++)
      ;
    m += take_members(c, ns->classes + q, e - q, seed, set + 1 + m, k - 1 - m, ns->at);
  }
  /* keep bus order inside the group so rings start from the lowest GPU */
  sort_ints(set, k);
}

/* A group's hash (FNV-1a over its GPUs), for the groups already tried. */
static size_t group_hash(const int *set, size_t k)
{
  uint64_t h = 1469598103934665603ULL;
  for (size_t i = 0; i < k; i++) {
    h ^= (uint32_t)set[i];
    h *= 1099511628211ULL;
  }
  return (size_t)h;
}

/* Whether set was tried already (in seen, by a hash table of nseen groups'
 * numbers plus one, 0 empty); else records it. */
static bool group_seen(int *seen, size_t *nseen, size_t *table, size_t mask, const int *set, size_t k)
{
  size_t at = group_hash(set, k) & mask;
  for (; table[at]; at = (at + 1) & mask)
    if (memcmp(&seen[(table[at] - 1) * k], set, k * sizeof(int)) == 0)
      return true;
  memcpy(&seen[*nseen * k], set, k * sizeof(int));
  table[at] = ++*nseen;
  return false;
}

/* The best ring in a mode among the nearest groups of k GPUs; its order in
 * best_order (k ints). */
double best_group(struct ctx *c, size_t k, int mode, int *best_order)
{
  size_t n = c->n, mask = 1;
  while (mask < 2 * n)
    mask *= 2;
  int *set = xmalloc((k + 1) * sizeof(int)), *order = xmalloc((k + 1) * sizeof(int));
  struct near_search ns = {.c = c, .k = k, .classes = xmalloc((k + 1) * sizeof(int)),
                           .at = xmalloc((k + 1) * sizeof(size_t)),
                           .firsts = xmalloc((k + 1) * sizeof(int))};
  near_paths(c);
  near_ranks(c, k - 1);
  double best = -1;
  int *seen = xcalloc(n * k + 1, sizeof(int));
  size_t nseen = 0, *table = xcalloc(mask, sizeof(size_t));
  for (size_t seed = 0; seed < n; seed++) {
    nearest_group(&ns, seed, set);
    if (group_seen(seen, &nseen, table, mask - 1, set, k))
      continue;
    double v = best_ring(c, set, k, mode, order);
    if (v > best + 1e-9) {
      best = v;
      memcpy(best_order, order, k * sizeof(int));
    }
  }
  free(table);
  free(seen);
  free(ns.classes);
  free(ns.at);
  free(ns.firsts);
  free(set);
  free(order);
  return best;
}
