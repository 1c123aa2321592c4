/* NVLink read from the GPU driver (gpu/gpu.c gr_gpus_read_gpulinks) into a
 * gathered tree, against the stand-in NVML (tests/stub, scenarios v100-hcm,
 * 3090-bridge, a100-nvswitch, a100-nvswitch-old): direct links counted once
 * per pair, NVSwitch links as one fabric from NVML, a tree of another
 * machine left alone with one warning, and `gpurig gpus` taking its peers
 * from the same topology. */
#include "testutil.h"
#include "base/fs.h"
#include "gpu/gpu.h"
#include "load/loaders.h"

/* Loads tests/data/trees/NAME (or the tree at dir) as a --root source, then
 * runs the reader with the stub in scenario. */
static void load_dir(const char *dir, const char *scenario, struct gr_topo *t)
{
  struct gr_fs fs;
  struct gr_err err = {0};
  assert_int_equal(gr_fs_init(&fs, dir), 0);
  gr_topo_init(t);
  if (gr_load_live(&fs, t, &err) != 0)
    fail_msg("%s: %s", dir, err.msg);
  assert_string_equal(t->source_kind, "root");
  setenv("GPURIG_DRIVER_DIR", getenv("GPURIG_TEST_STUB"), 1);
  setenv("GPURIG_STUB_SCENARIO", scenario, 1);
  gr_gpus_read_gpulinks(t);
  unsetenv("GPURIG_STUB_SCENARIO");
}

static void load(const char *tree, const char *scenario, struct gr_topo *t)
{
  char *dir = xasprintf("%s/trees/%s", getenv("GPURIG_TEST_DATA"), tree);
  load_dir(dir, scenario, t);
  free(dir);
}

/* The nvlink entry between topology GPUs ga and gb, or NULL. */
static const struct gr_gpulink *pair(const struct gr_topo *t, int ga, int gb)
{
  for (size_t k = 0; k < t->ngpulinks; k++) {
    const struct gr_gpulink *l = &t->gpulinks[k];
    if (l->b >= 0 && ((l->a == t->gpus[ga] && l->b == t->gpus[gb]) || (l->a == t->gpus[gb] && l->b == t->gpus[ga])))
      return l;
  }
  return NULL;
}

static void t181_hybrid_cube_mesh_is_nv2_between_every_pair(void **state)
{
  struct gr_topo t;
  struct gr_analysis a;
  char l[16];
  (void)state;
  load("t181-v100", "v100-hcm", &t);
  assert_int_equal(t.nwarnings, 0);
  assert_int_equal(t.ngpus, 4);
  assert_int_equal(t.ngpulinks, 6); /* one per pair, though each link is seen from both ends */
  assert_int_equal(t.nfabrics, 0);
  for (int x = 0; x < 4; x++)
    for (int y = x + 1; y < 4; y++) {
      const struct gr_gpulink *n = pair(&t, x, y);
      assert_non_null(n);
      assert_int_equal(n->count, 2);
      assert_float_equal(n->bw_gbps, 50.0, 1e-9); /* V100 SXM2: 150 GB/s over 6 links */
    }
  gr_analyze(&t, &a);
  assert_string_equal(tu_level(&a, 0, 3, l), "NV2");
  assert_string_equal(tu_level(&a, 1, 2, l), "NV2");
  assert_int_equal(a.nhives, 1);
  gr_analysis_free(&a);
  gr_topo_free(&t);
}

static void rtx3090_bridge_is_nv4_at_the_catalog_rate(void **state)
{
  struct gr_topo t;
  (void)state;
  load("pair-3090-bridge", "3090-bridge", &t);
  assert_int_equal(t.nwarnings, 0);
  assert_int_equal(t.ngpulinks, 1);
  assert_int_equal(t.gpulinks[0].count, 4);
  assert_float_equal(t.gpulinks[0].bw_gbps, 56.25, 1e-9); /* GA102 whitepaper: 112.5 GB/s both ways */
  gr_topo_free(&t);
}

static void check_hgx_fabric(const char *scenario)
{
  struct gr_topo t;
  load("hgx-a100", scenario, &t);
  assert_int_equal(t.nwarnings, 0);
  assert_int_equal(t.ngpulinks, 0);
  assert_int_equal(t.nfabrics, 1);
  const struct gr_fabric *f = &t.fabrics[0];
  assert_int_equal(f->from, GR_FABRIC_NVML);
  assert_null(f->why);
  assert_int_equal(f->nswitches, 6);
  assert_int_equal(f->gpulink_gen, 3); /* NVML's version 5 is "3.1" */
  assert_int_equal(f->nmembers, 8);
  for (size_t g = 0; g < t.ngpus; g++) {
    const struct gr_fabric_member *m = gr_fabric_member_of(f, t.gpus[g]);
    assert_non_null(m);
    assert_int_equal(m->links, 12);
    assert_float_equal(m->gbps, 300.0, 1e-9);
  }
  gr_topo_free(&t);
}

static void a100_links_to_nvswitches_are_one_fabric(void **state)
{
  (void)state;
  check_hgx_fabric("a100-nvswitch");
}

/* Without nvmlDeviceGetNvLinkRemoteDeviceType: a far end that is no GPU of
 * the driver's is an NVSwitch. */
static void old_driver_tells_switches_by_bus_id(void **state)
{
  (void)state;
  check_hgx_fabric("a100-nvswitch-old");
}

static void another_machines_driver_is_not_read(void **state)
{
  struct gr_topo t;
  (void)state;
  load("epyc-riser", "v100-hcm", &t); /* 4 GPUs each, at other bus ids */
  assert_int_equal(t.ngpulinks, 0);
  assert_int_equal(t.nfabrics, 0);
  assert_int_equal(t.nwarnings, 1);
  assert_non_null(strstr(t.warnings[0], "another machine's"));
  assert_non_null(strstr(t.warnings[0], "GPU0 (0000:18:00.0) is not in the tree"));
  gr_topo_free(&t);

  load("t181-v100", "a100-nvswitch", &t);
  assert_int_equal(t.ngpulinks + t.nfabrics, 0);
  assert_int_equal(t.nwarnings, 1);
  assert_non_null(strstr(t.warnings[0], "the driver sees 8 GPUs, the tree has 4"));
  gr_topo_free(&t);

  /* a driver without GPUs describes no machine: nothing to say */
  load("t181-v100", "nogpu", &t);
  assert_int_equal(t.ngpulinks + t.nfabrics + t.nwarnings, 0);
  gr_topo_free(&t);
}

/* Same bus ids, other chips: not this machine either. */
static void same_bus_ids_other_ids_is_another_machine(void **state)
{
  struct gr_topo t;
  (void)state;
  char *dir = tu_tree_copy("t181-v100");
  tu_tree_write_attr(dir, "0000:87:00.0", "device", "0x1db5\n");
  load_dir(dir, "v100-hcm", &t);
  assert_int_equal(t.ngpulinks, 0);
  assert_int_equal(t.nwarnings, 1);
  assert_non_null(strstr(t.warnings[0], "0000:87:00.0 is 10de:1db1 to the driver and 10de:1db5 in the tree"));
  gr_topo_free(&t);
  tu_tree_remove(dir);
}

static void no_driver_is_silent_for_a_tree_and_said_for_this_machine(void **state)
{
  struct gr_topo t;
  struct gr_fs fs;
  struct gr_err err = {0};
  char *dir = xasprintf("%s/trees/hgx-a100", getenv("GPURIG_TEST_DATA"));
  (void)state;
  setenv("GPURIG_DRIVER_DIR", "/nonexistent", 1);
  assert_int_equal(gr_fs_init(&fs, dir), 0);
  gr_topo_init(&t);
  assert_int_equal(gr_load_live(&fs, &t, &err), 0);
  gr_gpus_read_gpulinks(&t);
  assert_int_equal(t.ngpulinks + t.nfabrics + t.nwarnings, 0);
  /* the same GPUs as this machine's: one line saying why NVLink is missing */
  free(t.source_kind);
  t.source_kind = xstrdup("live");
  gr_gpus_read_gpulinks(&t);
  assert_int_equal(t.ngpulinks + t.nfabrics, 0);
  assert_int_equal(t.nwarnings, 1);
  assert_non_null(strstr(t.warnings[0], "NVLink not read from the GPU driver"));
  assert_non_null(strstr(t.warnings[0], "libnvidia-ml.so.1"));
  gr_topo_free(&t);
  free(dir);
}

static void a_lost_gpu_is_one_warning(void **state)
{
  struct gr_topo t;
  (void)state;
  load("epyc-riser", "vanish", &t);
  assert_int_equal(t.ngpulinks + t.nfabrics, 0);
  assert_int_equal(t.nwarnings, 1);
  assert_non_null(strstr(t.warnings[0], "NVLink of 1 GPU not read"));
  assert_non_null(strstr(t.warnings[0], "GPU is lost"));
  gr_topo_free(&t);
}

/* An input that records NVLink keeps it: the driver is not asked again. */
static void recorded_nvlink_is_kept(void **state)
{
  struct gr_topo t;
  struct gr_fs fs;
  struct gr_err err = {0};
  char *dir = xasprintf("%s/trees/t181-v100", getenv("GPURIG_TEST_DATA"));
  (void)state;
  assert_int_equal(gr_fs_init(&fs, dir), 0);
  gr_topo_init(&t);
  assert_int_equal(gr_load_live(&fs, &t, &err), 0);
  gr_topo_add_gpulink(&t, t.gpus[0], t.gpus[1], -1, 1, 25);
  setenv("GPURIG_DRIVER_DIR", getenv("GPURIG_TEST_STUB"), 1);
  setenv("GPURIG_STUB_SCENARIO", "v100-hcm", 1);
  gr_gpus_read_gpulinks(&t);
  unsetenv("GPURIG_STUB_SCENARIO");
  assert_int_equal(t.ngpulinks, 1);
  assert_int_equal(t.gpulinks[0].count, 1);
  assert_int_equal(t.nwarnings, 0);
  gr_topo_free(&t);
  free(dir);
}

/* `gpurig gpus` shows the topology's peers, named by the driver's index. */
static void gpus_report_takes_peers_from_the_topology(void **state)
{
  struct gr_topo t;
  struct gr_gpus g;
  struct gr_gpus_report r;
  struct gr_err err = {0};
  (void)state;
  load("t181-v100", "v100-hcm", &t);
  setenv("GPURIG_STUB_SCENARIO", "v100-hcm", 1);
  if (gr_gpus_open(&g, &err) != 0)
    fail_msg("%s", err.msg);
  gr_gpus_collect(&g, &t, &r);
  assert_int_equal(r.count, 4);
  for (unsigned i = 0; i < 4; i++) {
    assert_int_equal(r.rows[i].nnv_peers, 3);
    assert_int_equal(r.rows[i].nv_switch_links, -1);
    for (size_t k = 0; k < 3; k++) {
      assert_int_equal(r.rows[i].nv_peers[k].links, 2);
      assert_int_not_equal(r.rows[i].nv_peers[k].row, (int)i);
      assert_int_equal(r.rows[i].nv_peers[k].row, r.rows[i].nv_peers[k].topo_gpu);
    }
  }
  gr_gpus_report_free(&r);
  gr_gpus_close(&g);
  gr_topo_free(&t);

  load("hgx-a100", "a100-nvswitch", &t);
  setenv("GPURIG_STUB_SCENARIO", "a100-nvswitch", 1);
  if (gr_gpus_open(&g, &err) != 0)
    fail_msg("%s", err.msg);
  gr_gpus_collect(&g, &t, &r);
  assert_int_equal(r.count, 8);
  assert_int_equal(r.rows[5].nnv_peers, 0);
  assert_int_equal(r.rows[5].nv_switch_links, 12);
  gr_gpus_report_free(&r);
  gr_gpus_close(&g);
  gr_topo_free(&t);
  unsetenv("GPURIG_STUB_SCENARIO");
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(t181_hybrid_cube_mesh_is_nv2_between_every_pair),
      cmocka_unit_test(rtx3090_bridge_is_nv4_at_the_catalog_rate),
      cmocka_unit_test(a100_links_to_nvswitches_are_one_fabric),
      cmocka_unit_test(old_driver_tells_switches_by_bus_id),
      cmocka_unit_test(another_machines_driver_is_not_read),
      cmocka_unit_test(same_bus_ids_other_ids_is_another_machine),
      cmocka_unit_test(no_driver_is_silent_for_a_tree_and_said_for_this_machine),
      cmocka_unit_test(a_lost_gpu_is_one_warning),
      cmocka_unit_test(recorded_nvlink_is_kept),
      cmocka_unit_test(gpus_report_takes_peers_from_the_topology),
  };
  return cmocka_run_group_tests(tests, tu_setup_data, NULL);
}
