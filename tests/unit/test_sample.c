/* The dynamic part of a machine, re-read by one call without reloading the
 * topology: a copy of the fixture tree tests/data/trees/epyc-riser whose
 * counter and link files are rewritten between two samples, and the
 * stand-in NVIDIA libraries (tests/stub) for the GPU backend's values. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

#include "analysis/machine.h"
#include "gpu/gpu.h"
#include "monitor/sample.h"

static int setup(void **state)
{
  return tu_setup_data(state);
}

static size_t node_of(const struct gr_topo *t, int gpu)
{
  return (size_t)t->gpus[gpu];
}

static void test_counters_rewritten(void **state)
{
  struct gr_machine m;
  struct gr_sample s1, s2;
  struct gr_err err = {0};
  (void)state;
  char *root = tu_tree_copy("epyc-riser");
  struct gr_source src = {.kind = GR_SRC_ROOT, .path = root};
  assert_int_equal(gr_machine_open(&src, 0, &m, &err), 0);
  size_t g0 = node_of(&m.topo, 0), g1 = node_of(&m.topo, 1);
  assert_int_equal(gr_sample_read(&m, NULL, &s1, &err), 0);
  assert_int_equal(s1.npci, m.topo.npci);
  assert_int_equal(s1.pci[g1].cur_width, 8); /* the riser trains x8 */
  assert_true(s1.pci[g0].aer.correctable.valid);
  uint64_t before = s1.pci[g0].aer.correctable.value;

  tu_tree_write_attr(root, "0000:02:00.0", "current_link_width", "16\n");
  tu_tree_write_attr(root, "0000:02:00.0", "current_link_speed", "2.5 GT/s PCIe\n");
  tu_tree_write_attr(root, "0000:01:00.0", "aer_dev_correctable", "RxErr 40\nBadTLP 2\nTOTAL_ERR_COR 42\n");
  assert_int_equal(gr_sample_read(&m, NULL, &s2, &err), 0);
  assert_true(s2.mono_s >= s1.mono_s);
  assert_int_equal(s2.pci[g1].cur_width, 16);
  assert_int_equal(s2.pci[g1].cur_gen, 1);
  assert_true(s2.pci[g0].aer.correctable.valid);
  assert_int_equal(s2.pci[g0].aer.correctable.value, 42);
  /* the static part is what was loaded: nothing reloaded it */
  assert_int_equal(m.topo.pci[g1].link.cur_width, 8);
  assert_int_equal(m.topo.pci[g0].aer.correctable.value, before);

  gr_sample_free(&s1);
  gr_sample_free(&s2);
  gr_machine_close(&m);
  tu_tree_remove(root);
}

/* A sample of a description (a rig) has nothing to re-read. */
static void test_rig_has_no_counters(void **state)
{
  struct gr_machine m;
  struct gr_sample s;
  struct gr_err err = {0};
  (void)state;
  struct gr_source src = {.kind = GR_SRC_RIG, .path = "wopr"};
  assert_int_equal(gr_machine_open(&src, 0, &m, &err), 0);
  assert_int_equal(gr_sample_read(&m, NULL, &s, &err), 0);
  assert_null(s.pci);
  assert_int_equal(s.ngpu, 0);
  gr_sample_free(&s);
  gr_machine_close(&m);
}

/* The GPU backend's dynamic values, twice; the second time GPU2 has fallen
 * off the bus (the stand-in's "vanish" scenario): recorded, not an error. */
static void test_gpu_values(void **state)
{
  struct gr_machine m;
  struct gr_gpus g;
  struct gr_sample s;
  struct gr_err err = {0};
  char root[1024];
  (void)state;
  setenv("GPURIG_DRIVER_DIR", getenv("GPURIG_TEST_STUB"), 1);
  unsetenv("GPURIG_STUB_SCENARIO");
  snprintf(root, sizeof(root), "%s/trees/epyc-riser", getenv("GPURIG_TEST_DATA"));
  struct gr_source src = {.kind = GR_SRC_ROOT, .path = root};
  assert_int_equal(gr_machine_open(&src, 0, &m, &err), 0);
  if (gr_gpus_open(&g, &err) != 0)
    fail_msg("%s", err.msg);
  assert_int_equal(gr_sample_read(&m, &g, &s, &err), 0);
  assert_int_equal(s.ngpu, 4);
  for (unsigned i = 0; i < 4; i++)
    assert_int_equal(s.gpu_read[i], GR_READ_FRESH);
  assert_true(s.gpu[0].power_w.ok);
  assert_float_equal(s.gpu[0].power_w.v, 28.5, 1e-9);
  assert_true(s.gpu[1].link_width.ok);
  assert_float_equal(s.gpu[1].link_width.v, 8, 0);
  gr_sample_free(&s);

  setenv("GPURIG_STUB_SCENARIO", "vanish", 1);
  assert_int_equal(gr_sample_read(&m, &g, &s, &err), 0);
  assert_int_equal(s.gpu_read[2], GR_READ_LOST);
  assert_false(s.gpu[2].power_w.ok); /* unknown, never a stale or zero value */
  assert_true(s.gpu_error[2][0] != 0);
  assert_int_equal(s.gpu_read[0], GR_READ_FRESH);
  gr_sample_free(&s);
  unsetenv("GPURIG_STUB_SCENARIO");
  gr_gpus_close(&g);
  gr_machine_close(&m);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_counters_rewritten),
      cmocka_unit_test(test_rig_has_no_counters),
      cmocka_unit_test(test_gpu_values),
  };
  return cmocka_run_group_tests(tests, setup, NULL);
}
