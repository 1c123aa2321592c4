/* Analysis rules on topologies built in code: every level, hive and finding
 * rule is exercised without any input file. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "analysis/predict.h"

struct builder {
  struct gr_topo t;
  unsigned next_bus;
};

static void b_init(struct builder *b, const char *vendor, int sockets)
{
  gr_topo_init(&b->t);
  b->t.source_kind = xstrdup("xml");
  b->t.link_details = true;
  b->t.packages = xcalloc((size_t)sockets, sizeof(*b->t.packages));
  b->t.numas = xcalloc((size_t)sockets, sizeof(*b->t.numas));
  for (int s = 0; s < sockets; s++) {
    b->t.packages[s] = (struct gr_package){.os_index = s, .cpu_vendor = xstrdup(vendor), .cpu_model = xstrdup("test CPU"),
                                           .cpu_family = vendor[0] == 'A' ? 23 : 6, .cpu_model_number = 85, .rc_p2p = -1};
    b->t.numas[s] = (struct gr_numa){s, s, 1ull << 30};
  }
  b->t.npackages = b->t.nnumas = (size_t)sockets;
  b->next_bus = 1;
}

static int b_hostbridge(struct builder *b, int numa)
{
  int i = gr_topo_add_pci(&b->t);
  b->t.pci[i].role = GR_ROLE_HOSTBRIDGE;
  b->t.pci[i].bus = b->t.pci[i].sec_bus = b->next_bus;
  b->t.pci[i].numa = numa;
  b->t.pci[i].package = numa;
  b->next_bus += 0x10;
  return i;
}

/* A bridge or endpoint with Gen4 x16 at both ends unless changed later. */
static int b_node(struct builder *b, int parent, bool bridge, unsigned class_id)
{
  int i = gr_topo_add_pci(&b->t);
  struct gr_pci *p = &b->t.pci[i];
  p->role = bridge ? GR_ROLE_BRIDGE : GR_ROLE_ENDPOINT;
  p->parent = parent;
  p->bus = b->next_bus++;
  p->class_id = bridge ? 0x060400 : class_id;
  p->vendor = class_id == 0x030200 ? 0x10de : 0x15b3;
  p->numa = b->t.pci[parent].numa;
  p->package = b->t.pci[parent].package;
  p->link = (struct gr_link){4, 16, 4, 16, 0, 0, 0};
  return i;
}

#define GPU 0x030200
#define NIC 0x020700

/* host bridge -> root port -> switch (up) -> n downstream ports -> one device each */
static int b_switch(struct builder *b, int parent, int ports, int *devs, unsigned class_id)
{
  int up = b_node(b, parent, true, 0);
  for (int k = 0; k < ports; k++) {
    int down = b_node(b, up, true, 0);
    if (devs)
      devs[k] = class_id ? b_node(b, down, false, class_id) : down;
  }
  return up;
}

static void b_done(struct builder *b, struct gr_analysis *a)
{
  gr_topo_finish(&b->t);
  gr_analyze(&b->t, a);
}

static void b_free(struct builder *b, struct gr_analysis *a)
{
  gr_analysis_free(a);
  gr_topo_free(&b->t);
}

static void one_switch_is_pix_and_one_hive(void **state)
{
  struct builder b;
  struct gr_analysis a;
  char l[16];
  int devs[3];
  (void)state;
  b_init(&b, "GenuineIntel", 1);
  int rp = b_node(&b, b_hostbridge(&b, 0), true, 0);
  b_switch(&b, rp, 3, devs, GPU);
  b_done(&b, &a);
  assert_int_equal(a.ngpus, 3);
  assert_string_equal(tu_level(&a, 0, 1, l), "PIX");
  assert_string_equal(tu_level(&a, 0, 0, l), "X");
  assert_int_equal(a.nhives, 1);
  assert_true(a.gpu_gpu[1].nccl_p2p);
  assert_non_null(tu_find(&a, "topo.hives", -1));
  b_free(&b, &a);
}

static void nested_switches_are_pxb_and_root_ports_phb(void **state)
{
  struct builder b;
  struct gr_analysis a;
  char l[16];
  int ports[2], g1[2], g2[2];
  (void)state;
  b_init(&b, "GenuineIntel", 1);
  int hb = b_hostbridge(&b, 0);
  int rp = b_node(&b, hb, true, 0);
  b_switch(&b, rp, 2, ports, 0);      /* top switch: two downstream ports */
  b_switch(&b, ports[0], 2, g1, GPU); /* GPU0, GPU1 */
  b_switch(&b, ports[1], 2, g2, GPU); /* GPU2, GPU3 */
  int rp2 = b_node(&b, hb, true, 0);
  b_node(&b, rp2, false, GPU);        /* GPU4 on its own root port */
  b_done(&b, &a);
  assert_int_equal(b.t.pci[rp].role, GR_ROLE_ROOTPORT);
  assert_string_equal(tu_level(&a, 0, 1, l), "PIX");
  assert_string_equal(tu_level(&a, 0, 2, l), "PXB");
  assert_string_equal(tu_level(&a, 3, 4, l), "PHB");
  assert_int_equal(a.gpu_gpu[3 * 5 + 4].nccl, GR_LVL_PHB);
  assert_false(a.gpu_gpu[3 * 5 + 4].nccl_p2p); /* Intel: P2P only up to PXB */
  assert_true(a.gpu_gpu[0 * 5 + 2].nccl_p2p);
  assert_int_equal(a.nhives, 2);
  assert_int_equal(a.hive[0], a.hive[3]);
  assert_int_not_equal(a.hive[0], a.hive[4]);
  const struct gr_finding *f = tu_find(&a, "nccl.p2p-level", -1);
  assert_non_null(f);
  assert_non_null(strstr(f->text, "NCCL_P2P_LEVEL=PHB"));
  b_free(&b, &a);
}

static void host_bridges_and_sockets(void **state)
{
  struct builder b;
  struct gr_analysis a;
  char l[16];
  (void)state;
  b_init(&b, "GenuineIntel", 2);
  b_node(&b, b_node(&b, b_hostbridge(&b, 0), true, 0), false, GPU);
  b_node(&b, b_node(&b, b_hostbridge(&b, 0), true, 0), false, GPU);
  b_node(&b, b_node(&b, b_hostbridge(&b, 1), true, 0), false, GPU);
  b_done(&b, &a);
  assert_string_equal(tu_level(&a, 0, 1, l), "NODE");
  assert_int_equal(a.gpu_gpu[1].nccl, GR_LVL_PHB); /* NCCL folds NODE into PHB */
  assert_string_equal(tu_level(&a, 0, 2, l), "SYS");
  /* Skylake-class Intel: NCCL counts 10 GB/s between sockets, below Gen4's 24 */
  assert_int_equal(a.gpu_gpu[2].via, GR_VIA_SOCKET);
  assert_true(fabs(a.gpu_gpu[2].nccl_bw_gbps - 10.0) < 1e-9);
  assert_true(fabs(a.gpu_gpu[2].bw_gbps - gr_pcie_bw_gbps(4, 16)) < 1e-9);
  assert_non_null(tu_find(&a, "topo.gpus-split", -1));
  b_free(&b, &a);
}

static void amd_with_two_gpus_allows_sys_p2p(void **state)
{
  struct builder b;
  struct gr_analysis a;
  (void)state;
  b_init(&b, "AuthenticAMD", 2);
  b_node(&b, b_node(&b, b_hostbridge(&b, 0), true, 0), false, GPU);
  b_node(&b, b_node(&b, b_hostbridge(&b, 1), true, 0), false, GPU);
  b_done(&b, &a);
  assert_true(a.cpu_amd);
  assert_int_equal(a.nccl_p2p_level, GR_LVL_SYS);
  assert_true(a.gpu_gpu[1].nccl_p2p);
  assert_null(tu_find(&a, "nccl.p2p-level", -1));
  b_free(&b, &a);
}

static void nvlink_direct_and_through_switches(void **state)
{
  struct builder b;
  struct gr_analysis a;
  char l[16];
  int gpus[4];
  (void)state;
  b_init(&b, "GenuineIntel", 1);
  int hb = b_hostbridge(&b, 0);
  for (int i = 0; i < 4; i++)
    gpus[i] = b_node(&b, b_node(&b, hb, true, 0), false, GPU);
  int sw1 = b_node(&b, b_node(&b, hb, true, 0), false, 0x068000);
  int sw2 = b_node(&b, b_node(&b, hb, true, 0), false, 0x068000);
  b.t.pci[sw1].vendor = b.t.pci[sw2].vendor = 0x10de;
  gr_topo_finish(&b.t);
  gr_topo_add_gpulink(&b.t, gpus[0], gpus[1], -1, 2, 50.0);  /* bridged pair */
  for (int i = 2; i < 4; i++) {                            /* GPU2, GPU3 on two NVSwitches */
    gr_topo_add_gpulink(&b.t, gpus[i], sw1, -1, 3, 75.0);
    gr_topo_add_gpulink(&b.t, gpus[i], sw2, -1, 3, 75.0);
  }
  gr_topo_fabric_from_gpulinks(&b.t, GR_FABRIC_HWLOC);
  assert_int_equal(b.t.nfabrics, 1);
  assert_int_equal(b.t.fabrics[0].nmembers, 2);
  b_done(&b, &a);
  assert_string_equal(tu_level(&a, 0, 1, l), "NV2");
  assert_true(fabs(a.gpu_gpu[1].bw_gbps - 50.0) < 1e-9);
  assert_string_equal(tu_level(&a, 2, 3, l), "NV6");
  assert_true(fabs(a.gpu_gpu[2 * 4 + 3].bw_gbps - 150.0) < 1e-9);
  assert_string_equal(tu_level(&a, 0, 2, l), "PHB");
  assert_int_equal(a.nhives, 2);
  b_free(&b, &a);
}

static void link_findings_name_the_device(void **state)
{
  struct builder b;
  struct gr_analysis a;
  (void)state;
  b_init(&b, "GenuineIntel", 1);
  int hb = b_hostbridge(&b, 0);
  int g0 = b_node(&b, b_node(&b, hb, true, 0), false, GPU);
  int rp1 = b_node(&b, hb, true, 0);
  int g1 = b_node(&b, rp1, false, GPU);
  int rp2 = b_node(&b, hb, true, 0);
  int g2 = b_node(&b, rp2, false, GPU);
  int g3 = b_node(&b, b_node(&b, hb, true, 0), false, GPU);
  b.t.pci[g0].link.cur_width = 8;                          /* trained x8 of x16 */
  b.t.pci[rp1].link.max_width = 8;                         /* an x8 slot */
  b.t.pci[g1].link.cur_width = 8;
  b.t.pci[rp2].link.max_gen = 3;                           /* Gen3 port, Gen4 GPU */
  b.t.pci[rp2].link.cur_gen = 3;
  b.t.pci[g2].link.cur_gen = 3;
  b.t.pci[g3].link.cur_gen = 1;                            /* idle */
  b_done(&b, &a);
  const struct gr_finding *f = tu_find(&a, "pcie.link-width", g0);
  assert_non_null(f);
  assert_int_equal(f->sev, GR_SEV_WARN);
  assert_non_null(strstr(f->text, "GPU0 runs at x8 of x16"));
  f = tu_find(&a, "pcie.slot-width", g1);
  assert_non_null(f);
  assert_non_null(strstr(f->text, "GPU1 is an x16 device on an x8 port"));
  assert_int_equal(f->sev, GR_SEV_INFO); /* the slot's design, as doctor says */
  assert_null(tu_find(&a, "pcie.link-width", g1)); /* one finding per cause */
  f = tu_find(&a, "pcie.slot-gen", g2);
  assert_non_null(f);
  assert_non_null(strstr(f->text, "Gen4 device on a Gen3 port"));
  assert_int_equal(f->sev, GR_SEV_INFO); /* a Gen3 board is a design limit, not a set-up problem */
  assert_null(tu_find(&a, "pcie.link-gen-idle", g2)); /* runs at what both ends allow */
  f = tu_find(&a, "pcie.link-gen-idle", g3);
  assert_non_null(f);
  assert_int_equal(f->sev, GR_SEV_INFO);
  /* the x8 link is the bottleneck of GPU0's pairs */
  assert_int_equal(a.gpu_gpu[0 * 4 + 3].bottleneck, g0);
  assert_true(fabs(a.gpu_gpu[3].bw_gbps - gr_pcie_bw_gbps(4, 8)) < 1e-9);
  /* warnings sort first */
  assert_int_equal(a.findings.v[0].sev, GR_SEV_WARN);
  b_free(&b, &a);
}

/* One rule for an unknown end, whichever end it is: the known end's maximum
 * bounds the link, for the analysis's facts, the label every printer shows,
 * the rate and the findings alike. */
static void link_with_an_unknown_end(void **state)
{
  struct builder b;
  struct gr_analysis a;
  char l[96];
  (void)state;
  b_init(&b, "GenuineIntel", 1);
  int hb = b_hostbridge(&b, 0);
  int rp0 = b_node(&b, hb, true, 0), g0 = b_node(&b, rp0, false, GPU);
  int rp1 = b_node(&b, hb, true, 0), g1 = b_node(&b, rp1, false, GPU);
  int rp2 = b_node(&b, hb, true, 0), g2 = b_node(&b, rp2, false, GPU);
  /* GPU0: the device's maxima unreadable, the port's Gen4 x16; trained Gen4 x8 */
  b.t.pci[g0].link = (struct gr_link){4, 8, 0, 0, 4, 16, 0};
  /* GPU1: the port's maxima unknown (its parent reports none), the device's Gen4 x16; trained Gen4 x8 */
  b.t.pci[rp1].link.max_gen = b.t.pci[rp1].link.max_width = 0;
  b.t.pci[g1].link = (struct gr_link){4, 8, 4, 16, 0, 0, 0};
  /* GPU2: neither end known: what it runs at now */
  b.t.pci[rp2].link.max_gen = b.t.pci[rp2].link.max_width = 0;
  b.t.pci[g2].link = (struct gr_link){3, 8, 0, 0, 0, 0, 0};
  b_done(&b, &a);
  const struct gr_link_facts *f0 = &a.link[g0], *f1 = &a.link[g1], *f2 = &a.link[g2];
  assert_int_equal(f0->unknown, GR_LINK_DEVICE_UNKNOWN);
  assert_int_equal(f1->unknown, GR_LINK_PORT_UNKNOWN);
  assert_int_equal(f2->unknown, GR_LINK_BOTH_UNKNOWN);
  for (int k = 0; k < 2; k++) { /* the same answer for either unknown end */
    const struct gr_link_facts *f = k ? f1 : f0;
    assert_true(f->present);
    assert_int_equal(f->can_gen, 4);
    assert_int_equal(f->can_width, 16);
    assert_int_equal(f->gen, 4);
    assert_int_equal(f->width, 8);
    assert_true(f->width_short);
    assert_false(f->slot_width || f->slot_gen || f->gen_short);
    assert_true(fabs(f->gbps - gr_pcie_bw_gbps(4, 8)) < 1e-9);
    assert_true(fabs(f->nccl_gbps - gr_pcie_nccl_gbps(4, 8)) < 1e-9);
    assert_string_equal(gr_link_label(f, GR_LABEL_NOW, l, sizeof(l)), "Gen4 x8/x16");
    assert_string_equal(gr_link_label(f, GR_LABEL_CAPABLE, l, sizeof(l)), "Gen4 x8 (capable of x16)");
    assert_string_equal(gr_link_label(f, 0, l, sizeof(l)), "Gen4 x8");
    const struct gr_finding *w = tu_find(&a, "pcie.link-width", k ? g1 : g0);
    assert_non_null(w);
    assert_non_null(strstr(w->text, "runs at x8 of x16"));
  }
  /* neither end: no maximum, so nothing runs short; the label is what it runs at */
  assert_int_equal(f2->can_gen, 0);
  assert_int_equal(f2->can_width, 0);
  assert_int_equal(f2->gen, 3);
  assert_int_equal(f2->width, 8);
  assert_false(f2->width_short || f2->gen_short);
  assert_string_equal(gr_link_label(f2, GR_LABEL_NOW | GR_LABEL_RATE, l, sizeof(l)), "Gen3 x8, 7.9 GB/s");
  assert_null(tu_find(&a, "pcie.link-width", g2));
  /* a node without a link of its own has no label and no rate */
  assert_false(a.link[hb].present);
  assert_string_equal(gr_link_label(&a.link[hb], GR_LABEL_RATE, l, sizeof(l)), "");
  b_free(&b, &a);
}

static void unknown_numa_on_two_sockets(void **state)
{
  struct builder b;
  struct gr_analysis a;
  char l[16];
  (void)state;
  b_init(&b, "GenuineIntel", 2);
  int g0 = b_node(&b, b_node(&b, b_hostbridge(&b, 0), true, 0), false, GPU);
  int g1 = b_node(&b, b_node(&b, b_hostbridge(&b, 1), true, 0), false, GPU);
  b.t.pci[g0].numa = b.t.pci[g1].numa = -1;
  b_done(&b, &a);
  const struct gr_finding *f = tu_find(&a, "numa.unknown", -1);
  assert_non_null(f);
  assert_non_null(strstr(f->text, "GPU0 GPU1"));
  assert_string_equal(tu_level(&a, 0, 1, l), "SYS"); /* not provably the same node */
  b_free(&b, &a);
}

static void nic_placement(void **state)
{
  struct builder b;
  struct gr_analysis a;
  int devs[2];
  char l[16];
  (void)state;
  b_init(&b, "GenuineIntel", 1);
  int hb = b_hostbridge(&b, 0);
  int rp = b_node(&b, hb, true, 0);
  int up = b_switch(&b, rp, 2, devs, GPU);
  (void)up;
  int nic = b_node(&b, b_node(&b, hb, true, 0), false, NIC);
  b_done(&b, &a);
  assert_int_equal(a.nnics, 1);
  assert_string_equal(gr_level_str(&a.gpu_nic[0], l, sizeof(l)), "PHB");
  assert_non_null(tu_find(&a, "nic.gdr-placement", nic));
  b_free(&b, &a);
}

static void no_gpu(void **state)
{
  struct builder b;
  struct gr_analysis a;
  (void)state;
  b_init(&b, "GenuineIntel", 1);
  b_node(&b, b_node(&b, b_hostbridge(&b, 0), true, 0), false, NIC);
  b_done(&b, &a);
  assert_int_equal(a.ngpus, 0);
  assert_non_null(tu_find(&a, "topo.no-gpu", -1));
  b_free(&b, &a);
}

static void display_adapters_are_not_gpus(void **state)
{
  (void)state;
  assert_int_equal(gr_kind_from_ids(0x030000, 0x1a03, 0), GR_KIND_OTHER); /* ASPEED BMC */
  assert_int_equal(gr_kind_from_ids(0x030000, 0x1d0f, 0), GR_KIND_OTHER); /* Amazon VGA */
  assert_int_equal(gr_kind_from_ids(0x030000, 0x10de, 0), GR_KIND_GPU);   /* GeForce */
  /* data/pci-devices.tsv: display-only chips with a GPU maker's id, accelerators in class 0380 */
  assert_int_equal(gr_kind_from_ids(0x030000, 0x1002, 0x515e), GR_KIND_OTHER); /* ATI ES1000 onboard VGA */
  assert_int_equal(gr_kind_from_ids(0x030000, 0x1002, 0x6798), GR_KIND_GPU);   /* Radeon HD 7970 */
  assert_int_equal(gr_kind_from_ids(0x038000, 0x1d94, 0x55b7), GR_KIND_GPU);   /* Hygon DCU */
  assert_int_equal(gr_kind_from_ids(0x038000, 0x8086, 0x0bd5), GR_KIND_GPU);   /* Data Center GPU Max */
  assert_int_equal(gr_kind_from_ids(0x038000, 0x8086, 0x56c0), GR_KIND_OTHER); /* not in the table */
  assert_int_equal(gr_kind_from_ids(0x0c0600, 0x15b3, 0x6746), GR_KIND_NIC);   /* ConnectX-2, class 0c06 */
  assert_int_equal(gr_kind_from_ids(0x0c0600, 0x1077, 0x7322), GR_KIND_NIC);   /* QLogic InfiniPath */
  assert_int_equal(gr_kind_from_ids(0x030200, 0x1234, 0), GR_KIND_GPU);   /* any 3D controller */
  /* GPUs are the GPU makers' (issue 31); other accelerators are listed apart */
  assert_int_equal(gr_kind_from_ids(0x0b4000, 0x1bcf, 0), GR_KIND_ACCEL); /* NEC VE */
  assert_int_equal(gr_kind_from_ids(0x120000, 0x1da3, 0), GR_KIND_ACCEL); /* Gaudi */
  assert_int_equal(gr_kind_from_ids(0x120000, 0x1ae0, 0), GR_KIND_ACCEL); /* Google (TPU) */
  assert_int_equal(gr_kind_from_ids(0x120000, 0x1002, 0x74a1), GR_KIND_GPU); /* MI300X, a processing accelerator */
  assert_int_equal(gr_kind_from_ids(0x030000, 0x1bcf, 0), GR_KIND_OTHER); /* VGA from no GPU maker */
  assert_int_equal(gr_kind_from_ids(0x020700, 0x15b3, 0), GR_KIND_NIC);
  assert_int_equal(gr_kind_from_ids(0x010802, 0x144d, 0), GR_KIND_NVME);
  assert_int_equal(gr_kind_from_ids(0x068000, 0x10de, 0), GR_KIND_NVSWITCH);
}

/* More GPUs than the ring search's and the group table's 64: the
 * whole-machine rings fall back to 2-opt over all 80 GPUs and nothing
 * overruns (ASan caught a write past a 64-int array here). 2 sockets x 5 root
 * ports x a switch of 8 GPUs. */
static void predicts_more_than_64_gpus(void **state)
{
  struct builder b;
  struct gr_analysis a;
  struct gr_prediction p;
  int devs[8];
  (void)state;
  b_init(&b, "GenuineIntel", 2);
  for (int s = 0; s < 2; s++) {
    int hb = b_hostbridge(&b, s);
    for (int r = 0; r < 5; r++)
      b_switch(&b, b_node(&b, hb, true, 0), 8, devs, GPU);
  }
  b_done(&b, &a);
  gr_predict(&b.t, &a, &p);
  assert_int_equal(p.ngpus, 80);
  const struct gr_ring *rings[] = {&p.nccl_default, &p.best};
  for (int r = 0; r < 2; r++) {
    bool seen[80] = {0};
    for (size_t i = 0; i < 80; i++) {
      int g = rings[r]->order[i];
      assert_true(g >= 0 && g < 80 && !seen[g]);
      seen[g] = true;
    }
    assert_true(rings[r]->busbw_gbps > 0);
  }
  assert_int_equal(p.nverdicts, 5); /* training, tensor-parallel on 2, 4 and 8, independent jobs */
  assert_int_equal(p.verdicts[0].gpus, 80);
  assert_int_equal(p.verdicts[3].gpus, 8);
  gr_prediction_free(&p);
  b_free(&b, &a);
}

/* n GPUs (even): 2 sockets, each with root ports carrying a switch of up to
 * 8 GPUs; returns how many switches. */
static size_t b_gpu_machine(struct builder *b, size_t n)
{
  size_t per = n / 2 < 8 ? n / 2 : 8, switches = 0;
  int *devs = xmalloc(per * sizeof(int));
  b_init(b, "GenuineIntel", 2);
  for (int s = 0; s < 2; s++) {
    int hb = b_hostbridge(b, s);
    for (size_t left = n / 2; left > 0; left -= per, switches++)
      b_switch(b, b_node(b, hb, true, 0), (int)per, devs, GPU);
  }
  free(devs);
  return switches;
}

/* A ring names every GPU once, with a finite, positive bandwidth. */
static void assert_ring_whole(const struct gr_ring *r, size_t n)
{
  bool *seen = xcalloc(n, sizeof(bool));
  for (size_t i = 0; i < n; i++) {
    int g = r->order[i];
    assert_true(g >= 0 && (size_t)g < n && !seen[g]);
    seen[g] = true;
  }
  free(seen);
  assert_true(isfinite(r->busbw_gbps) && r->busbw_gbps > 0);
}

/* Every GPU in one hive, and the hive finding names them all. */
static void assert_hives_whole(const struct gr_analysis *a, size_t n, size_t switches)
{
  assert_int_equal(a->nhives, switches);
  for (size_t g = 0; g < n; g++)
    assert_true(a->hive[g] >= 0 && (size_t)a->hive[g] < a->nhives);
  const struct gr_finding *f = tu_find(a, "topo.hives", -2);
  assert_non_null(f);
  char *last = xasprintf(" GPU%zu]", n - 1);
  assert_non_null(strstr(f->text, last));
  free(last);
}

static void assert_prediction_sane(const struct gr_prediction *p, size_t n)
{
  assert_int_equal(p->ngpus, n);
  assert_ring_whole(&p->nccl_default, n);
  assert_ring_whole(&p->best, n);
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; j < n; j++)
      assert_true(i == j || (isfinite(gr_pair_at(p, i, j)->gbps) && gr_pair_at(p, i, j)->gbps > 0));
  assert_int_equal(p->nverdicts, 5); /* training, tensor-parallel on 2, 4 and 8, independent jobs */
  assert_int_equal(p->verdicts[0].gpus, (int)n);
  char *tail = xasprintf(">GPU%d, bounded by", p->best.order[n - 1]); /* the ring is named whole */
  assert_non_null(strstr(p->verdicts[0].reasons, tail));
  free(tail);
  assert_int_equal(p->verdicts[3].gpus, 8);
}

/* 8, 64, 128 and 256 GPUs through the analysis, the prediction and the
 * group rings a plan asks for: nothing in them is sized by a fixed GPU count
 * (ASan), and the results stay whole and sane. */
static void predicts_8_to_256_gpus(void **state)
{
  static const size_t sizes[] = {8, 64, 128, 256};
  (void)state;
  for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
    struct builder b;
    struct gr_analysis a;
    struct gr_prediction p;
    size_t n = sizes[s], switches = b_gpu_machine(&b, n);
    b_done(&b, &a);
    assert_int_equal(a.ngpus, n);
    assert_hives_whole(&a, n, switches);
    gr_predict(&b.t, &a, &p);
    assert_prediction_sane(&p, n);
    gr_predict_groups(&p, NULL, 0);
    for (size_t k = 2; k < n && k <= 64; k++)
      assert_true(isfinite(p.group_busbw_gbps[k]) && p.group_busbw_gbps[k] > 0);
    gr_prediction_free(&p);
    b_free(&b, &a);
  }
}


/* ---- NCCL's P2P default per NCCL version (data/nccl-p2p.tsv) ---- */

static struct gr_nccl_version ver(const char *text)
{
  struct gr_nccl_version v;
  if (!gr_nccl_version_parse(text, &v))
    fail_msg("not a version: %s", text);
  return v;
}

static const char *rule_level(const char *version, const char *cpu, size_t ngpus)
{
  struct gr_nccl_version v = ver(version);
  const struct gr_nccl_rule *r = gr_nccl_p2p_rule(&v, cpu, ngpus);
  return r ? r->level : "none";
}

static void nccl_versions_parse_and_compare(void **state)
{
  struct gr_nccl_version v, w;
  char buf[32];
  (void)state;
  static const char *const bad[] = {"", "2", "2.", ".23", "2.23.", "2.23.4.1", "v2.23", "2.23-1", "2.x", "0.5",
                                    "2.12345", "2.23 ", "-2.23"};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
    assert_false(gr_nccl_version_parse(bad[i], &v));
  assert_true(gr_nccl_version_parse("2.21.5", &v));
  assert_string_equal(gr_nccl_version_text(&v, buf, sizeof(buf)), "2.21.5");
  assert_true(gr_nccl_version_parse("2.23", &w));
  assert_int_equal(w.patch, -1);
  assert_true(gr_nccl_version_cmp(&v, &w) < 0);
  v = ver("2.23.4");
  assert_true(gr_nccl_version_cmp(&v, &w) < 0); /* 2.23 stands for its newest patch */
  v = ver("2.9.6");
  w = ver("2.10");
  assert_true(gr_nccl_version_cmp(&v, &w) < 0); /* numbers, not text */
  assert_string_equal(gr_nccl_version_text(&w, buf, sizeof(buf)), "2.10");
}

static void nccl_rule_per_version_cpu_and_count(void **state)
{
  (void)state;
  /* NCCL 2.23 on: PXB, and SYS on AMD for communicators of at most 2 GPUs */
  assert_string_equal(rule_level("2.23.4", "amd", 8), "PXB");
  assert_string_equal(rule_level("2.23", "amd", 2), "SYS");
  assert_string_equal(rule_level("2.30.7", "amd", 1), "SYS");
  assert_string_equal(rule_level("2.26", "intel", 2), "PXB");
  assert_string_equal(rule_level("2.26", "other", 2), "PXB");
  assert_string_equal(rule_level("2.99", "amd", 4), "PXB"); /* newer than the table: its newest rule */
  /* before 2.23: SYS unless Intel, Zhaoxin or ARM (PyTorch 2.6 bundles 2.21.5) */
  assert_string_equal(rule_level("2.21.5", "amd", 8), "SYS");
  assert_string_equal(rule_level("2.22.3", "intel", 2), "PXB");
  assert_string_equal(rule_level("2.21", "zhaoxin", 8), "PXB");
  assert_string_equal(rule_level("2.21", "arm", 8), "PXB");
  assert_string_equal(rule_level("2.21", "other", 8), "SYS");
  /* 2.7 to 2.8.4: Skylake and newer Intel PHB, older PXB; Zhaoxin from 2.8.4 */
  assert_string_equal(rule_level("2.7.8", "intel", 4), "PHB");
  assert_string_equal(rule_level("2.8.3", "intel-bdw", 4), "PXB");
  assert_string_equal(rule_level("2.8.3", "zhaoxin", 4), "SYS");
  assert_string_equal(rule_level("2.8.4", "zhaoxin", 4), "PXB");
  assert_string_equal(rule_level("2.6.4", "intel", 4), "SYS");
  assert_string_equal(rule_level("2.6", "intel-bdw", 4), "PXB");
  assert_string_equal(rule_level("2.5.7", "amd", 4), "none"); /* before the table */
  struct gr_nccl_version newest = gr_nccl_newest(), oldest = gr_nccl_oldest();
  char buf[32];
  assert_string_equal(gr_nccl_version_text(&newest, buf, sizeof(buf)), "2.30.7");
  assert_string_equal(gr_nccl_version_text(&oldest, buf, sizeof(buf)), "2.6.4");
}

/* An AMD machine with four GPUs on four root complexes of one socket. */
static void b_amd_four(struct builder *b, struct gr_analysis *a, const char *nccl)
{
  b_init(b, "AuthenticAMD", 1);
  for (int g = 0; g < 4; g++)
    b_node(b, b_node(b, b_hostbridge(b, 0), true, 0), false, GPU);
  gr_topo_finish(&b->t);
  struct gr_analysis_opts o = {0};
  if (nccl)
    o.nccl = ver(nccl);
  gr_analyze_with(&b->t, &o, a);
}

static void nccl_view_follows_the_version(void **state)
{
  struct builder b;
  struct gr_analysis a;
  char buf[160];
  (void)state;
  b_amd_four(&b, &a, NULL); /* the default: the newest NCCL, stated as assumed */
  assert_true(a.nccl_assumed);
  assert_string_equal(a.cpu_class, "amd");
  assert_int_equal(a.nccl_p2p_level, GR_LVL_PXB);
  assert_int_equal(a.gpu_gpu[1].nccl, GR_LVL_PHB);
  assert_false(a.gpu_gpu[1].nccl_p2p);
  assert_string_equal(gr_nccl_defaults_text(&a, buf, sizeof(buf)), "NCCL 2.23+ defaults (assumed; --nccl-version to change)");
  assert_non_null(strstr(gr_nccl_why(&a, 4, buf, sizeof(buf)), "more than 2 GPUs in the communicator"));
  /* the communicator's size, not the machine's: a group of 2 gets SYS */
  assert_int_equal(gr_nccl_p2p_level_for(&a, 2, NULL), GR_LVL_SYS);
  const struct gr_finding *f = tu_find(&a, "nccl.p2p-level", -1);
  assert_non_null(f);
  assert_non_null(strstr(f->text, "NCCL 2.23+"));
  b_free(&b, &a);
  b_amd_four(&b, &a, "2.21.5"); /* PyTorch 2.6's NCCL: P2P everywhere on AMD */
  assert_false(a.nccl_assumed);
  assert_int_equal(a.nccl_p2p_level, GR_LVL_SYS);
  assert_true(a.gpu_gpu[1].nccl_p2p);
  assert_null(tu_find(&a, "nccl.p2p-level", -1));
  assert_string_equal(gr_nccl_defaults_text(&a, buf, sizeof(buf)), "NCCL 2.21.5 defaults");
  b_free(&b, &a);
}

/* The TP-2 verdict counts the 2 GPUs of its communicator: on AMD with 4 GPUs,
 * NCCL 2.23 takes P2P for the pair by default; the machine's ring does not. */
static void tp2_judged_with_its_own_communicator(void **state)
{
  struct builder b;
  struct gr_analysis a;
  struct gr_prediction p;
  (void)state;
  b_amd_four(&b, &a, NULL);
  gr_predict(&b.t, &a, &p);
  assert_int_equal(p.nccl_default.nhops_host, 4); /* the machine: PXB, host-staged */
  assert_true(p.best_needs_p2p_level);
  assert_true(p.best.busbw_gbps > p.nccl_default.busbw_gbps);
  const struct gr_verdict *tp2 = NULL;
  for (size_t i = 0; i < p.nverdicts; i++)
    if (strcmp(p.verdicts[i].workload, "tensor-parallel inference") == 0 && p.verdicts[i].gpus == 2)
      tp2 = &p.verdicts[i];
  assert_non_null(tp2);
  assert_non_null(strstr(tp2->reasons, "peer-to-peer over PCIe"));
  assert_non_null(strstr(tp2->reasons, "NCCL allows P2P up to SYS in a communicator of 2 GPUs"));
  assert_null(strstr(tp2->reasons, "NCCL_P2P_LEVEL="));
  assert_int_equal(tp2->rating, GR_RATE_GOOD);
  /* the headline is NCCL's default; the training verdict says the same figure first */
  char head[400];
  snprintf(head, sizeof(head), "bandwidth %.1f GB/s with NCCL's defaults", p.nccl_default.busbw_gbps);
  assert_non_null(strstr(p.verdicts[0].reasons, head));
  assert_non_null(strstr(p.verdicts[0].reasons, "With NCCL_P2P_LEVEL=PHB"));
  gr_predict_groups(&p, NULL, 0);
  assert_true(p.group_busbw_gbps[2] > p.group_busbw_gbps[3]); /* 2: P2P by default; 3: host-staged */
  assert_true(p.group_busbw_raised_gbps[3] > p.group_busbw_gbps[3]);
  assert_string_equal(p.group_p2p_level[3], "PHB");
  gr_prediction_free(&p);
  b_free(&b, &a);
}

/* GPUs that cannot do P2P (RTX 4090 on the stock driver) on one switch:
 * nvidia-smi's PIX stays, NCCL's view is the host path, no hive, and no
 * NCCL_P2P_LEVEL advice; a sentence says why. */
static void p2p_incapable_gpus_take_the_host_path(void **state)
{
  struct builder b;
  struct gr_analysis a;
  char l[16];
  int devs[2];
  (void)state;
  b_init(&b, "AuthenticAMD", 1);
  int hb = b_hostbridge(&b, 0);
  b_switch(&b, b_node(&b, hb, true, 0), 2, devs, GPU);
  int third = b_node(&b, b_node(&b, hb, true, 0), false, GPU);
  b.t.pci[devs[0]].device = b.t.pci[devs[1]].device = b.t.pci[third].device = 0x2684; /* RTX 4090 */
  b_done(&b, &a);
  assert_string_equal(tu_level(&a, 0, 1, l), "PIX"); /* the wiring, as nvidia-smi prints it */
  assert_false(a.gpu_gpu[1].p2p_capable);
  assert_int_equal(a.gpu_gpu[1].nccl, GR_LVL_PHB);
  assert_false(a.gpu_gpu[1].nccl_p2p);
  assert_true(a.gpu_gpu[1].nccl_bw_gbps > 0);
  assert_int_equal(a.nhives, 3);
  assert_null(tu_find(&a, "nccl.p2p-level", -1));
  const struct gr_finding *f = tu_find(&a, "topo.no-p2p", -1);
  assert_non_null(f);
  assert_non_null(strstr(f->text, "RTX 4090: no PCIe P2P on the vendor's stock driver"));
  assert_non_null(strstr(f->text, "tinygrad"));
  assert_non_null(strstr(tu_find(&a, "topo.hives", -1)->text, "No two GPUs form a P2P hive"));
  b_free(&b, &a);
  /* the same GPUs with a driver that allows P2P form a hive again */
  b_init(&b, "AuthenticAMD", 1);
  hb = b_hostbridge(&b, 0);
  b_switch(&b, b_node(&b, hb, true, 0), 2, devs, GPU);
  b.t.pci[devs[0]].device = b.t.pci[devs[1]].device = 0x2684;
  b.t.pci[devs[0]].p2p = b.t.pci[devs[1]].p2p = 1;
  b_done(&b, &a);
  assert_true(a.gpu_gpu[1].p2p_capable);
  assert_int_equal(a.gpu_gpu[1].nccl, GR_LVL_PIX);
  assert_int_equal(a.nhives, 1);
  b_free(&b, &a);
}

/* NCCL's NVLink figure comes from the GPUs' compute capability; an unknown
 * GPU keeps it unknown rather than borrowing another's. */
static void nccl_nvlink_figure_by_compute_capability(void **state)
{
  struct builder b;
  struct gr_analysis a;
  (void)state;
  b_init(&b, "GenuineIntel", 1);
  int hb = b_hostbridge(&b, 0);
  int g0 = b_node(&b, b_node(&b, hb, true, 0), false, GPU), g1 = b_node(&b, b_node(&b, hb, true, 0), false, GPU);
  int g2 = b_node(&b, b_node(&b, hb, true, 0), false, GPU), g3 = b_node(&b, b_node(&b, hb, true, 0), false, GPU);
  b.t.pci[g0].device = b.t.pci[g1].device = 0x1db1; /* V100 SXM2 16GB: 7.0 */
  gr_topo_finish(&b.t);
  gr_topo_add_gpulink(&b.t, g0, g1, -1, 2, 50.0);
  gr_topo_add_gpulink(&b.t, g2, g3, -1, 2, 50.0);
  gr_analyze(&b.t, &a);
  assert_true(fabs(a.gpu_gpu[0 * 4 + 1].nccl_bw_gbps - 2 * 20.0) < 1e-9); /* SM70_NVLINK_BW x 2 links */
  assert_true(a.gpu_gpu[2 * 4 + 3].nccl_bw_gbps == 0);                    /* unknown GPU: unknown */
  b_free(&b, &a);
}

/* GPU classes (analysis/classes.c): GPUs under one switch with the same
 * model and links are one class, numbered by first member; a pair's path
 * copied from its class pair names its own GPUs' links. */
static void gpu_classes_by_switch(void **state)
{
  struct builder b;
  struct gr_analysis a;
  int g[8];
  (void)state;
  b_init(&b, "GenuineIntel", 1);
  int hb = b_hostbridge(&b, 0);
  b_switch(&b, b_node(&b, hb, true, 0), 4, g, GPU);     /* GPU0-3 */
  b_switch(&b, b_node(&b, hb, true, 0), 4, g + 4, GPU); /* GPU4-7 */
  for (int i = 0; i < 8; i++)
    b.t.pci[g[i]].link = (struct gr_link){4, 8, 4, 8, 0, 0, 0}; /* each GPU's own link narrowest */
  b_done(&b, &a);
  assert_int_equal(a.nclasses, 2);
  assert_int_equal(a.gpu_class[0], 0);
  assert_int_equal(a.gpu_class[3], 0);
  assert_int_equal(a.gpu_class[4], 1);
  assert_int_equal(a.class_start[1], 4);
  assert_int_equal(a.class_gpus[4], 4);
  /* GPU2 -> GPU6 is a copy of GPU0 -> GPU4: its bottleneck is GPU2's own link, not GPU0's */
  assert_int_equal(a.gpu_gpu[2 * 8 + 6].bottleneck, g[2]);
  assert_int_equal(a.gpu_gpu[6 * 8 + 2].bottleneck, g[6]);
  assert_int_equal(a.gpu_gpu[1 * 8 + 3].bottleneck, g[1]);
  assert_int_equal(a.gpu_gpu[3 * 8 + 1].bottleneck, g[3]);
  assert_int_equal(a.gpu_gpu[1 * 8 + 3].top, b.t.pci[b.t.pci[g[1]].parent].parent);
  assert_true(fabs(a.gpu_gpu[2 * 8 + 6].bw_gbps - a.gpu_gpu[0 * 8 + 4].bw_gbps) < 1e-9);
  b_free(&b, &a);
}

/* Classes that must be singletons: a GPU of another model, or with a
 * narrower link, under the same switch; GPUs joined by links of their own
 * (a DGX-1's hybrid cube mesh, an NVLink bridge). */
static void gpu_classes_singletons(void **state)
{
  struct builder b;
  struct gr_analysis a;
  int g[6];
  char l[16];
  (void)state;
  b_init(&b, "GenuineIntel", 1);
  b_switch(&b, b_node(&b, b_hostbridge(&b, 0), true, 0), 6, g, GPU);
  b.t.pci[g[1]].device = 0x1db1;                          /* another model */
  b.t.pci[g[2]].link = (struct gr_link){4, 8, 4, 16, 0, 0, 0}; /* a narrower link */
  gr_topo_finish(&b.t);
  gr_topo_add_gpulink(&b.t, g[4], g[5], -1, 2, 50.0);     /* a bridged pair */
  gr_analyze(&b.t, &a);
  assert_int_equal(a.nclasses, 5);                        /* {0,3}, {1}, {2}, {4}, {5} */
  assert_int_equal(a.gpu_class[0], a.gpu_class[3]);
  for (int i = 1; i < 6; i++)
    for (int j = 0; j < 6; j++)
      if (i != j && i != 3 && j != 3 && !(i == 0 || j == 0))
        assert_int_not_equal(a.gpu_class[i], a.gpu_class[j]);
  assert_string_equal(tu_level(&a, 4, 5, l), "NV2");
  assert_string_equal(tu_level(&a, 3, 5, l), "PIX");
  assert_int_equal(a.gpu_gpu[2 * 6 + 0].bottleneck, g[2]);
  b_free(&b, &a);
}

/* A DGX-1 style hybrid cube mesh: every GPU has links of its own to four
 * others, so each is a class of its own and every level stays per pair. */
static void gpu_classes_mesh_singletons(void **state)
{
  struct builder b;
  struct gr_analysis a;
  int g[8];
  char l[16];
  (void)state;
  b_init(&b, "GenuineIntel", 2);
  b_switch(&b, b_node(&b, b_hostbridge(&b, 0), true, 0), 4, g, GPU);
  b_switch(&b, b_node(&b, b_hostbridge(&b, 1), true, 0), 4, g + 4, GPU);
  gr_topo_finish(&b.t);
  static const int mesh[][2] = {{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}, {4, 5}, {4, 6},
                                {4, 7}, {5, 6}, {5, 7}, {6, 7}, {0, 4}, {1, 5}, {2, 6}, {3, 7}};
  for (size_t k = 0; k < sizeof(mesh) / sizeof(mesh[0]); k++)
    gr_topo_add_gpulink(&b.t, g[mesh[k][0]], g[mesh[k][1]], -1, 1, 25.0);
  gr_analyze(&b.t, &a);
  assert_int_equal(a.nclasses, 8);
  for (int i = 0; i < 8; i++)
    assert_int_equal(a.gpu_class[i], i);
  assert_string_equal(tu_level(&a, 0, 4, l), "NV1");
  assert_string_equal(tu_level(&a, 0, 5, l), "SYS");
  assert_string_equal(tu_level(&a, 1, 6, l), "SYS");
  b_free(&b, &a);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(one_switch_is_pix_and_one_hive),
      cmocka_unit_test(nested_switches_are_pxb_and_root_ports_phb),
      cmocka_unit_test(host_bridges_and_sockets),
      cmocka_unit_test(amd_with_two_gpus_allows_sys_p2p),
      cmocka_unit_test(nvlink_direct_and_through_switches),
      cmocka_unit_test(link_findings_name_the_device),
      cmocka_unit_test(link_with_an_unknown_end),
      cmocka_unit_test(unknown_numa_on_two_sockets),
      cmocka_unit_test(nic_placement),
      cmocka_unit_test(no_gpu),
      cmocka_unit_test(display_adapters_are_not_gpus),
      cmocka_unit_test(predicts_more_than_64_gpus),
      cmocka_unit_test(predicts_8_to_256_gpus),
      cmocka_unit_test(nccl_versions_parse_and_compare),
      cmocka_unit_test(nccl_rule_per_version_cpu_and_count),
      cmocka_unit_test(nccl_view_follows_the_version),
      cmocka_unit_test(tp2_judged_with_its_own_communicator),
      cmocka_unit_test(p2p_incapable_gpus_take_the_host_path),
      cmocka_unit_test(nccl_nvlink_figure_by_compute_capability),
      cmocka_unit_test(gpu_classes_by_switch),
      cmocka_unit_test(gpu_classes_singletons),
      cmocka_unit_test(gpu_classes_mesh_singletons),
  };
  return cmocka_run_group_tests(tests, tu_setup_data, NULL);
}
