/* The GPU pair matrix kept per pair of classes (analysis/pairs.c), held to
 * the same computed pair by pair, on every input the tests ship: each
 * path against a fresh walk of its own pair, each bottleneck's pairs against
 * the links every pair's two ways up cross, and the hives against a union
 * over every pair. A class that joins GPUs which are not alike shows here
 * as a path, a pair or a hive that differs. */
#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "analysis/analysis.h"
#include "load/source.h"

static void same_path(const struct gr_path *x, const struct gr_path *y, const char *what, size_t i, size_t j)
{
  if (x->level != y->level || x->gpulinks != y->gpulinks || x->xgmi != y->xgmi || x->nv_inferred != y->nv_inferred ||
      x->p2p_capable != y->p2p_capable || x->nccl != y->nccl || x->nccl_p2p != y->nccl_p2p || x->via != y->via ||
      x->bottleneck != y->bottleneck || x->top != y->top || fabs(x->bw_gbps - y->bw_gbps) > 1e-9 ||
      fabs(x->nccl_bw_gbps - y->nccl_bw_gbps) > 1e-9)
    fail_msg("%s: GPU%zu -> GPU%zu: the class pair's copy differs from the pair's own walk", what, i, j);
}

/* Every pair x < y below the best pair, each link on its two ways up that
 * runs at its rate: (node, x, y), as find_bottlenecks did pair by pair. */
static size_t held_by_walk(const struct gr_analysis *a, int *held)
{
  const struct gr_topo *t = a->t;
  size_t n = 0;
  for (size_t x = 0; x < a->ngpus; x++)
    for (size_t y = x + 1; y < a->ngpus; y++) {
      struct gr_path p = gr_gpu_path_walked(a, x, y);
      if (!(p.bw_gbps < a->best_pair_gbps - 1e-9 && p.bottleneck >= 0))
        continue;
      for (int end = 0; end < 2; end++)
        for (int k = t->gpus[end ? y : x]; k >= 0 && k != p.top; k = t->pci[k].parent)
          if (a->link[k].present && fabs(a->link[k].gbps - p.bw_gbps) < 1e-9) {
            held[3 * n] = k;
            held[3 * n + 1] = (int)x;
            held[3 * n + 2] = (int)y;
            n++;
          }
    }
  return n;
}

static int cmp3(const void *p, const void *q)
{
  const int *x = p, *y = q;
  for (int k = 0; k < 3; k++)
    if (x[k] != y[k])
      return (x[k] > y[k]) - (x[k] < y[k]);
  return 0;
}

static void check_bottlenecks(const struct gr_analysis *a, const char *what)
{
  size_t cap = a->ngpus * a->ngpus * 2 * (a->t->npci + 1) + 3;
  int *want = xmalloc(cap * sizeof(int)), *got = xmalloc(cap * sizeof(int));
  size_t nwant = held_by_walk(a, want), ngot = 0;
  for (size_t b = 0; b < a->nbottlenecks; b++) {
    const struct gr_bottleneck *bn = &a->bottlenecks[b];
    int *pairs = xmalloc((2 * bn->npairs + 2) * sizeof(int));
    size_t np = gr_bottleneck_pairs(a, bn, pairs, bn->npairs);
    assert_int_equal(np, bn->npairs);
    for (size_t k = 0; k < np; k++) {
      if (k > 0 && cmp3((int[]){0, pairs[2 * k - 2], pairs[2 * k - 1]}, (int[]){0, pairs[2 * k], pairs[2 * k + 1]}) >= 0)
        fail_msg("%s: bottleneck %d: its pairs are not in matrix order", what, bn->node);
      got[3 * ngot] = bn->node;
      got[3 * ngot + 1] = pairs[2 * k];
      got[3 * ngot + 2] = pairs[2 * k + 1];
      ngot++;
    }
    /* the first few, as text prints them: the same as the head of the whole list */
    int first[12];
    size_t nf = gr_bottleneck_pairs(a, bn, first, 6);
    assert_int_equal(nf, np < 6 ? np : 6);
    assert_memory_equal(first, pairs, nf * 2 * sizeof(int));
    free(pairs);
  }
  qsort(want, nwant, 3 * sizeof(int), cmp3);
  qsort(got, ngot, 3 * sizeof(int), cmp3);
  if (nwant != ngot || memcmp(want, got, nwant * 3 * sizeof(int)) != 0)
    fail_msg("%s: bottlenecks hold %zu (link, pair)s, the walks %zu", what, ngot, nwant);
  free(want);
  free(got);
}

static void check_hives(const struct gr_analysis *a, const char *what)
{
  size_t n = a->ngpus;
  int *uf = xmalloc((n + 1) * sizeof(int));
  for (size_t i = 0; i < n; i++)
    uf[i] = (int)i;
  for (size_t i = 0; i < n; i++)
    for (size_t j = i + 1; j < n; j++) {
      struct gr_path p = gr_gpu_path_walked(a, i, j);
      if (p.level <= GR_LVL_PXB && p.p2p_capable)
        gr_uf_union(uf, (int)i, (int)j);
    }
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; j < n; j++)
      if ((gr_uf_find(uf, (int)i) == gr_uf_find(uf, (int)j)) != (a->hive[i] == a->hive[j]))
        fail_msg("%s: GPU%zu and GPU%zu: hives differ from the union over every pair", what, i, j);
  enum gr_level *worst = xcalloc(a->nhives + 1, sizeof(*worst));
  bool *xgmi = xcalloc(a->nhives + 1, sizeof(bool));
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; j < n; j++) {
      struct gr_path p = gr_gpu_path_walked(a, i, j);
      if (a->hive[i] != a->hive[j])
        continue;
      if (p.level > worst[a->hive[i]])
        worst[a->hive[i]] = p.level;
      xgmi[a->hive[i]] |= p.level == GR_LVL_GPULINK && p.xgmi;
    }
  for (size_t h = 0; h < a->nhives; h++) {
    if (worst[h] != a->hives[h].worst)
      fail_msg("%s: hive %zu: worst level %d, every pair says %d", what, h, a->hives[h].worst, worst[h]);
    if (xgmi[h] != a->hives[h].xgmi)
      fail_msg("%s: hive %zu: xGMI %d, every pair says %d", what, h, a->hives[h].xgmi, xgmi[h]);
  }
  free(xgmi);
  free(worst);
  free(uf);
}

static void check_source(const struct gr_source *src, const char *what)
{
  struct gr_topo t;
  struct gr_err err = {0};
  if (gr_source_load(src, &t, &err) != 0)
    return; /* an input made to be refused (tests/data/bad) */
  struct gr_analysis a;
  gr_analyze(&t, &a);
  for (size_t i = 0; i < a.ngpus; i++)
    for (size_t j = 0; j < a.ngpus; j++) {
      struct gr_path x = gr_gpu_path(&a, i, j), y = gr_gpu_path_walked(&a, i, j);
      same_path(&x, &y, what, i, j);
    }
  check_bottlenecks(&a, what);
  check_hives(&a, what);
  gr_analysis_free(&a);
  gr_topo_free(&t);
}

/* Every file in dir ending in one of the suffixes, as kind. */
static size_t check_dir(const char *dir, enum gr_source_kind kind, const char *suffix)
{
  DIR *d = opendir(dir);
  size_t seen = 0;
  assert_non_null(d);
  for (struct dirent *e; (e = readdir(d));) {
    size_t len = strlen(e->d_name), sl = strlen(suffix);
    if (e->d_name[0] == '.' || (sl && (len < sl || strcmp(e->d_name + len - sl, suffix) != 0)))
      continue;
    char *path = xasprintf("%s/%s", dir, e->d_name);
    struct gr_source src = {.kind = kind, .path = path};
    check_source(&src, path);
    free(path);
    seen++;
  }
  closedir(d);
  return seen;
}

static void every_input(void **state)
{
  (void)state;
  const char *td = getenv("GPURIG_TEST_DATA"), *trees = getenv("GPURIG_TEST_TREES"), *data = getenv("GPURIG_DATA");
  static const char *xml_dirs[] = {"hwloc", "hwloc-aws", "synthetic", "nccl-topo", "smi-topo"};
  size_t seen = 0;
  for (size_t k = 0; k < sizeof(xml_dirs) / sizeof(xml_dirs[0]); k++) {
    char *dir = xasprintf("%s/%s", td, xml_dirs[k]);
    seen += check_dir(dir, GR_SRC_XML, k < 4 ? ".xml" : "");
    free(dir);
  }
  char *rigs = xasprintf("%s/rigs", td), *shipped = xasprintf("%s/rigs", data);
  seen += check_dir(rigs, GR_SRC_RIG, ".rig");
  seen += check_dir(shipped, GR_SRC_RIG, ".rig");
  seen += check_dir(trees, GR_SRC_ROOT, "");
  char *fixtures = xasprintf("%s/trees", td);
  seen += check_dir(fixtures, GR_SRC_ROOT, "");
  free(fixtures);
  free(rigs);
  free(shipped);
  assert_true(seen > 60);
}

int main(void)
{
  if (!getenv("GPURIG_TEST_DATA") || !getenv("GPURIG_TEST_TREES") || !getenv("GPURIG_DATA")) {
    fprintf(stderr, "set GPURIG_DATA, GPURIG_TEST_DATA and GPURIG_TEST_TREES (ctest does)\n");
    return 1;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_input),
  };
  return cmocka_run_group_tests(tests, tu_setup_data, NULL);
}
