/* The prediction's searches against their plain forms (issue 30): the
 * narrowest-hop 2-opt with its pruning against the same search valuing
 * every reversal, on random rings; and the nearest groups searched over GPU
 * classes against the GPU-by-GPU search they replaced. Both must give the
 * same rings to the last bit: the pruning and the classes only skip work. */
#include <math.h>

#include "testutil.h"

#include "analysis/machine.h"
#include "analysis/predict_internal.h"

static int setup(void **state)
{
  return tu_setup_data(state);
}

/* Machines with many classes of several GPUs (the synthetic 72, one GPU of
 * it a class of its own), NVSwitch GPUs, and a generic box of 60 that has
 * no P2P. */
struct input {
  const char *xml;     /* under tests/data; NULL: generic */
  const char *model;
  int gpus;
};

static const struct input inputs[] = {
  {"synthetic/h100-72.xml", NULL, 0},
  {"hwloc/nvidiaDGX2.xml", NULL, 0},
  {"hwloc-aws/p5en.xml", NULL, 0},
  {NULL, "RTX 3090", 60},
};

static void open_input(const struct input *in, struct gr_machine *m)
{
  struct gr_err err = {0};
  char *path = in->xml ? xasprintf("%s/%s", getenv("GPURIG_TEST_DATA"), in->xml) : NULL;
  struct gr_source src = in->xml ? (struct gr_source){.kind = GR_SRC_XML, .path = path}
                                 : (struct gr_source){.kind = GR_SRC_GENERIC, .gpu_model = in->model, .gpus = in->gpus};
  if (gr_machine_open(&src, GR_MACHINE_PREDICT, m, &err) != 0)
    fail_msg("%s: %s", in->xml ? in->xml : in->model, err.msg);
  free(path);
}

/* A small fixed generator: the same rings on every run. */
static unsigned next_rand(unsigned *s)
{
  *s = *s * 1103515245u + 12345u;
  return (*s >> 8) & 0xffffff;
}

/* k of the n GPUs in a random order. */
static void random_ring(unsigned *seed, size_t n, size_t k, int *ring)
{
  int *all = xmalloc((n + 1) * sizeof(int));
  for (size_t i = 0; i < n; i++)
    all[i] = (int)i;
  for (size_t i = 0; i < k; i++) { /* a partial Fisher-Yates shuffle */
    size_t j = i + next_rand(seed) % (n - i);
    int t = all[i];
    all[i] = all[j];
    all[j] = t;
  }
  memcpy(ring, all, k * sizeof(int));
  free(all);
}

/* The pruned 2-opt keeps what the unpruned one keeps: the same value and
 * the same ring, from random starting rings of random sizes in both modes.
 * Some of them must improve, or the comparison says nothing (the synthetic
 * 72's do; the NVSwitch rings and the generic box's host-staged ones are
 * as wide in any order). */
static void pruned_2opt_matches_unpruned(void **state)
{
  size_t improved = 0;
  (void)state;
  for (size_t in = 0; in < sizeof(inputs) / sizeof(inputs[0]); in++) {
    struct gr_machine m;
    open_input(&inputs[in], &m);
    size_t n = m.prediction.ngpus;
    struct ctxs cs = {.p = &m.prediction};
    unsigned seed = 7 + (unsigned)in;
    int *start = xmalloc((n + 1) * sizeof(int)), *r1 = xmalloc((n + 1) * sizeof(int)),
        *r2 = xmalloc((n + 1) * sizeof(int));
    for (int trial = 0; trial < 64; trial++) {
      size_t k = 3 + next_rand(&seed) % (n - 2);
      int mode = trial % 2;
      struct ctx *c = ctx_for(&cs, k);
      random_ring(&seed, n, k, start);
      memcpy(r1, start, k * sizeof(int));
      memcpy(r2, start, k * sizeof(int));
      double v1 = ring_improve_narrowest(c, r1, k, mode, true);
      double v2 = ring_improve_narrowest(c, r2, k, mode, false);
      if (v1 != v2 || memcmp(r1, r2, k * sizeof(int)) != 0)
        fail_msg("%s: ring of %zu, mode %d: pruned %.17g, unpruned %.17g", inputs[in].xml ? inputs[in].xml : "generic",
                 k, mode, v1, v2);
      improved += memcmp(r1, start, k * sizeof(int)) != 0;
    }
    free(start);
    free(r1);
    free(r2);
    ctxs_close(&cs);
    gr_machine_close(&m);
  }
  assert_true(improved > 0);
}

/* The GPU-by-GPU nearest group the class search replaced: one pass over
 * the seed's row, keeping the k-1 nearest so far (lower GPU first among
 * equals), then in bus order. */
static void plain_nearest_group(const struct ctx *c, size_t seed, size_t k, int *set)
{
  size_t m = 0;
  set[0] = (int)seed;
  for (size_t j = 0; j < c->n; j++) {
    if (j == seed)
      continue;
    struct gr_path pj = gr_gpu_path(c->a, seed, j);
    size_t at = m + 1;
    while (at > 1) {
      struct gr_path q = gr_gpu_path(c->a, seed, (size_t)set[at - 1]);
      if (!(pj.level < q.level || (pj.level == q.level && pj.bw_gbps > q.bw_gbps + 1e-9)))
        break;
      at--;
    }
    if (at >= k)
      continue;
    if (m + 1 < k)
      m++;
    for (size_t q = m; q > at; q--)
      set[q] = set[q - 1];
    set[at] = (int)j;
  }
  for (size_t i = 1; i < k; i++)
    for (size_t j = i; j > 0 && set[j - 1] > set[j]; j--) {
      int t = set[j];
      set[j] = set[j - 1];
      set[j - 1] = t;
    }
}

/* best_group the plain way: every seed's group, repeats found by a scan. */
static double plain_best_group(struct ctx *c, size_t k, int mode, int *best_order)
{
  size_t n = c->n, nseen = 0;
  int *seen = xcalloc(n * k + 1, sizeof(int)), *set = xmalloc((k + 1) * sizeof(int)),
      *order = xmalloc((k + 1) * sizeof(int));
  double best = -1;
  for (size_t seed = 0; seed < n; seed++) {
    plain_nearest_group(c, seed, k, set);
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

/* The nearest groups over classes give the plain search's best ring, for
 * group sizes from 2 to past the exact search, in both modes. */
static void class_groups_match_plain(void **state)
{
  static const size_t sizes[] = {2, 3, 4, 5, 8, 9, 12, 33};
  (void)state;
  for (size_t in = 0; in < sizeof(inputs) / sizeof(inputs[0]); in++) {
    struct gr_machine m;
    open_input(&inputs[in], &m);
    size_t n = m.prediction.ngpus;
    struct ctxs cs = {.p = &m.prediction};
    int *o1 = xmalloc((n + 1) * sizeof(int)), *o2 = xmalloc((n + 1) * sizeof(int));
    for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]) && sizes[s] < n; s++)
      for (int mode = 0; mode < 2; mode++) {
        size_t k = sizes[s];
        struct ctx *c = ctx_for(&cs, k);
        double v1 = best_group(c, k, mode, o1), v2 = plain_best_group(c, k, mode, o2);
        if (v1 != v2 || memcmp(o1, o2, k * sizeof(int)) != 0)
          fail_msg("%s: group of %zu, mode %d: by class %.17g (GPU%d first), plain %.17g (GPU%d first)",
                   inputs[in].xml ? inputs[in].xml : "generic", k, mode, v1, o1[0], v2, o2[0]);
        assert_true(isfinite(v1));
      }
    free(o1);
    free(o2);
    ctxs_close(&cs);
    gr_machine_close(&m);
  }
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(pruned_2opt_matches_unpruned),
    cmocka_unit_test(class_groups_match_plain),
  };
  return cmocka_run_group_tests(tests, setup, NULL);
}
