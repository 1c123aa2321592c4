/* NVSwitch fabrics (model/fabric.c): built from reported GPU-to-NVSwitch
 * links, inferred only where an input records no NVLink and the catalog
 * says what the GPUs' links are, forgotten with --pcie-only. */
#include <math.h>

#include "testutil.h"
#include "analysis/predict.h"

/* n GPUs with PCI ids vendor:device, each on its own root port of one host
 * bridge; nswitch NVSwitch functions (class 0680, NVIDIA) beside them. */
static void machine(struct gr_topo *t, size_t n, unsigned device, size_t nswitch)
{
  gr_topo_init(t);
  t->source_kind = xstrdup("xml");
  t->packages = xcalloc(1, sizeof(*t->packages));
  t->packages[0] = (struct gr_package){.os_index = 0, .cpu_vendor = xstrdup("AuthenticAMD"), .cpu_family = 23,
                                       .cpu_model_number = 49, .rc_p2p = -1};
  t->npackages = 1;
  int hb = gr_topo_add_pci(t);
  t->pci[hb].role = GR_ROLE_HOSTBRIDGE;
  t->pci[hb].sec_bus = 0;
  t->pci[hb].sub_bus = 255;
  t->pci[hb].numa = t->pci[hb].package = 0;
  for (size_t i = 0; i < n + nswitch; i++) {
    int rp = gr_topo_add_pci(t);
    t->pci[rp].role = GR_ROLE_BRIDGE;
    t->pci[rp].parent = hb;
    t->pci[rp].class_id = 0x060400;
    t->pci[rp].bus = 0;
    t->pci[rp].dev = (unsigned)i + 1;
    t->pci[rp].sec_bus = t->pci[rp].sub_bus = (unsigned)i + 1;
    int d = gr_topo_add_pci(t);
    t->pci[d].role = GR_ROLE_ENDPOINT;
    t->pci[d].parent = rp;
    t->pci[d].bus = (unsigned)i + 1;
    t->pci[d].vendor = 0x10de;
    t->pci[d].device = i < n ? device : 0x1af1;
    t->pci[d].class_id = i < n ? 0x030200 : 0x068000;
    t->pci[d].link = (struct gr_link){4, 16, 4, 16, 4, 16, 0};
    t->pci[rp].numa = t->pci[d].numa = 0;
    t->pci[rp].package = t->pci[d].package = 0;
  }
  gr_topo_finish(t);
}

static void eight_sxm4_without_nvlink_are_inferred_nv12(void **state)
{
  struct gr_topo t;
  struct gr_analysis a;
  struct gr_prediction p;
  char l[16];
  (void)state;
  machine(&t, 8, 0x20b0, 0); /* A100 SXM4 40GB: board nvswitch, 12 links, 300 GB/s */
  gr_topo_infer_fabric(&t);
  assert_int_equal(t.nfabrics, 1);
  assert_int_equal(t.fabrics[0].from, GR_FABRIC_INFERRED);
  assert_int_equal(t.fabrics[0].nmembers, 8);
  assert_int_equal(t.fabrics[0].gpulink_gen, 3);
  assert_non_null(strstr(t.fabrics[0].why, "NVSwitch baseboards"));
  gr_analyze(&t, &a);
  for (int i = 0; i < 8; i++)
    for (int j = 0; j < 8; j++)
      if (i != j) {
        assert_string_equal(tu_level(&a, i, j, l), "NV12");
        assert_true(tu_path(&a, i * 8 + j).nv_inferred);
      }
  assert_int_equal(a.nhives, 1);
  assert_non_null(tu_find(&a, "topo.nvlink-inferred", -1));
  gr_predict(&t, &a, &p);
  /* 300 GB/s per direction into the fabric at NCCL's NVLink efficiency */
  assert_true(fabs(p.nccl_default.busbw_gbps - 300 * gr_calib()->ring_nvlink_eff) < 1e-6);
  gr_prediction_free(&p);
  gr_analysis_free(&a);
  gr_topo_free(&t);
}

/* 512 H100 SXM GPUs are 64 HGX boards, not one fabric: inference stops at a
 * baseboard (8 GPUs in bus order; 16 for the NVLink 2 DGX-2/HGX-2). */
static void many_sxm_are_inferred_one_fabric_per_baseboard(void **state)
{
  struct gr_topo t;
  struct gr_analysis a;
  (void)state;
  machine(&t, 20, 0x20b0, 0); /* A100 SXM4: boards of 8, the last one holding 4 */
  gr_topo_infer_fabric(&t);
  assert_int_equal(t.nfabrics, 3);
  assert_int_equal(t.fabrics[0].nmembers, 8);
  assert_int_equal(t.fabrics[1].nmembers, 8);
  assert_int_equal(t.fabrics[2].nmembers, 4);
  assert_int_equal(t.fabrics[1].members[0].gpu, t.gpus[8]);
  assert_non_null(strstr(t.fabrics[0].why, "one fabric per baseboard of 8"));
  gr_analyze(&t, &a);
  assert_int_equal(a.nv_links[0 * 20 + 7], 12);   /* GPU0-GPU7: one board */
  assert_int_equal(a.nv_links[7 * 20 + 8], 0);    /* GPU7-GPU8: two boards, PCIe */
  assert_int_equal(a.nv_links[16 * 20 + 19], 12); /* the last, smaller board */
  gr_analysis_free(&a);
  gr_topo_free(&t);
  machine(&t, 32, 0x1db8, 0); /* V100 SXM3: DGX-2's two boards are one fabric of 16 */
  gr_topo_infer_fabric(&t);
  assert_int_equal(t.nfabrics, 2);
  assert_int_equal(t.fabrics[0].nmembers, 16);
  assert_int_equal(t.fabrics[0].gpulink_gen, 2);
  gr_topo_free(&t);
}

static void four_sxm4_are_not_inferred(void **state)
{
  struct gr_topo t;
  (void)state;
  machine(&t, 4, 0x20b0, 0); /* 4-GPU HGX boards join GPUs directly: nothing to infer */
  gr_topo_infer_fabric(&t);
  assert_int_equal(t.nfabrics, 0);
  gr_topo_free(&t);
}

static void nvswitch_devices_infer_a_fabric(void **state)
{
  struct gr_topo t;
  (void)state;
  machine(&t, 4, 0x1db1, 2); /* V100 SXM2 (6 links) beside two NVSwitch functions */
  gr_topo_infer_fabric(&t);
  assert_int_equal(t.nfabrics, 1);
  assert_int_equal(t.fabrics[0].nswitches, 2);
  assert_int_equal(t.fabrics[0].members[0].links, 6);
  assert_non_null(strstr(t.fabrics[0].why, "2 NVSwitch PCI devices"));
  gr_topo_free(&t);
}

static void unknown_gpu_or_recorded_nvlink_infers_nothing(void **state)
{
  struct gr_topo t;
  (void)state;
  machine(&t, 8, 0x9999, 6); /* not in the catalog: no link count to infer */
  gr_topo_infer_fabric(&t);
  assert_int_equal(t.nfabrics, 0);
  gr_topo_free(&t);
  machine(&t, 8, 0x20b0, 0);
  gr_topo_add_gpulink(&t, t.gpus[0], t.gpus[1], -1, 4, 100.0); /* the input records NVLink */
  gr_topo_infer_fabric(&t);
  assert_int_equal(t.nfabrics, 0);
  gr_topo_free(&t);
}

static void reported_switch_links_make_one_fabric(void **state)
{
  struct gr_topo t;
  struct gr_analysis a;
  char l[16];
  (void)state;
  machine(&t, 3, 0x20b0, 2);
  int sw0 = -1, sw1 = -1;
  for (size_t i = 0; i < t.npci; i++)
    if (t.pci[i].kind == GR_KIND_NVSWITCH)
      *(sw0 < 0 ? &sw0 : &sw1) = (int)i;
  for (size_t g = 0; g < 3; g++) { /* GPU2 has fewer links into the fabric */
    gr_topo_add_gpulink(&t, t.gpus[g], sw0, -1, g == 2 ? 2 : 6, g == 2 ? 50.0 : 150.0);
    gr_topo_add_gpulink(&t, t.gpus[g], sw1, -1, 6, 150.0);
  }
  gr_topo_fabric_from_gpulinks(&t, GR_FABRIC_HWLOC);
  assert_int_equal(t.nfabrics, 1);
  assert_int_equal(t.fabrics[0].nswitches, 2);
  assert_int_equal(gr_fabric_member_of(&t.fabrics[0], t.gpus[2])->links, 8);
  gr_analyze(&t, &a);
  assert_string_equal(tu_level(&a, 0, 1, l), "NV12");
  assert_string_equal(tu_level(&a, 0, 2, l), "NV8"); /* bounded by the member with fewer links */
  assert_false(tu_path(&a, 1).nv_inferred);
  gr_analysis_free(&a);
  gr_topo_forget_gpulinks(&t); /* --pcie-only */
  assert_int_equal(t.nfabrics, 0);
  assert_int_equal(t.ngpulinks, 0);
  gr_analyze(&t, &a);
  assert_string_equal(tu_level(&a, 0, 1, l), "PHB");
  assert_non_null(tu_find(&a, "topo.nvlink-ignored", -1));
  gr_analysis_free(&a);
  gr_topo_free(&t);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(eight_sxm4_without_nvlink_are_inferred_nv12),
      cmocka_unit_test(many_sxm_are_inferred_one_fabric_per_baseboard),
      cmocka_unit_test(four_sxm4_are_not_inferred),
      cmocka_unit_test(nvswitch_devices_infer_a_fabric),
      cmocka_unit_test(unknown_gpu_or_recorded_nvlink_infers_nothing),
      cmocka_unit_test(reported_switch_links_make_one_fabric),
  };
  return cmocka_run_group_tests(tests, tu_setup_data, NULL);
}
