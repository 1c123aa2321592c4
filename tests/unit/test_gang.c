/* The measurement backend's copies at once (copy_many, burn-in's load) on
 * the stand-in CUDA library (tests/stub): every GPU's host link busy in
 * both directions together, each verified; a GPU in two copies refused; a
 * GPU that falls off the bus mid-load named. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "gpu/bench_backend.h"
#include "gpu/gpu.h"

static const struct gr_bench_backend *be;
static void *st;

static int setup(void **state)
{
  char why[512];
  if (tu_setup_data(state) != 0)
    return -1;
  setenv("GPURIG_DRIVER_DIR", getenv("GPURIG_TEST_STUB"), 1);
  unsetenv("GPURIG_STUB_SCENARIO");
  be = gr_vendors[0]->bench;
  if (!be || !be->copy_many || be->init(&st, why, sizeof(why)) != 0) {
    fprintf(stderr, "no stand-in CUDA: %s\n", why);
    return -1;
  }
  return 0;
}

static int teardown(void **state)
{
  (void)state;
  be->shutdown(st);
  return 0;
}

static void test_every_host_link_at_once(void **state)
{
  struct gr_copy_spec specs[4];
  struct gr_copy_sample out[4];
  (void)state;
  for (int g = 0; g < 4; g++)
    specs[g] = (struct gr_copy_spec){.kind = GR_BK_HOST_BIDIR, .engine = GR_ENGINE_CE, .src = GR_BENCH_HOST,
                                     .dst = g, .bytes = 1 << 20, .loops = 3, .reverse = true, .seed = 7};
  assert_int_equal(be->copy_many(st, specs, 4, out), 0);
  for (int g = 0; g < 4; g++) {
    assert_true(out[g].seconds[0] > 0 && out[g].seconds[1] > 0);
    assert_false(out[g].corrupt);
    /* the stand-in's host->GPU rate: 24 GB/s, 12 behind GPU1's x8 link */
    double gbps = 3.0 * (1 << 20) / out[g].seconds[0] / 1e9;
    assert_true(g == 1 ? gbps > 10 && gbps < 12.5 : gbps > 20 && gbps < 24.5);
  }
}

static void test_a_gpu_twice_is_refused(void **state)
{
  struct gr_copy_spec specs[2] = {
      {.kind = GR_BK_H2D, .src = GR_BENCH_HOST, .dst = 1, .bytes = 1 << 20, .loops = 1},
      {.kind = GR_BK_P2P, .src = 0, .dst = 1, .bytes = 1 << 20, .loops = 1},
  };
  struct gr_copy_sample out[2];
  (void)state;
  assert_int_equal(be->copy_many(st, specs, 2, out), -1);
  assert_non_null(strstr(be->last_error(st), "each GPU in one of them"));
}

static void test_gpu_lost_mid_load(void **state)
{
  struct gr_copy_spec specs[4];
  struct gr_copy_sample out[4];
  (void)state;
  for (int g = 0; g < 4; g++)
    specs[g] = (struct gr_copy_spec){.kind = GR_BK_HOST_BIDIR, .src = GR_BENCH_HOST, .dst = g, .bytes = 1 << 20,
                                     .loops = 2, .reverse = true, .seed = 9};
  setenv("GPURIG_STUB_SCENARIO", "vanish", 1);
  int rc = 0;
  for (int round = 0; round < 8 && rc == 0; round++)
    rc = be->copy_many(st, specs, 4, out);
  assert_int_equal(rc, -1);
  assert_true(be->device_lost(st, 2));
  assert_false(be->device_lost(st, 0));
  unsetenv("GPURIG_STUB_SCENARIO");
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_host_link_at_once),
      cmocka_unit_test(test_a_gpu_twice_is_refused),
      cmocka_unit_test(test_gpu_lost_mid_load), /* last: the stand-in's GPU2 stays lost in this process */
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
