/* Saved vendor matrices (load/smi_topo*.c): the levels a matrix states come
 * back out of the tree gpurig draws for it, NV#, NIC names and affinity
 * columns survive, rocm-smi's XGMI, hops and NUMA lines are read as AMD
 * documents them, amd-smi's tables and both its --json layouts give the same
 * machine with its bus ids and P2P access, and bad text names its line. The matrices here are made up
 * for the tests (every level in one matrix, which no posted one has); the
 * real posts are the goldens' and ctest smi_roundtrip's. */
#include "testutil.h"
#include "load/loaders.h"

static void load_nv(const char *text, struct gr_topo *t, struct gr_analysis *a)
{
  struct gr_err err = {0};
  if (gr_load_nvsmi_topo_buffer("m.txt", text, strlen(text), t, &err) != 0)
    fail_msg("%s", err.msg);
  gr_analyze(t, a);
}

static void load_rocm(const char *text, struct gr_topo *t, struct gr_analysis *a)
{
  struct gr_err err = {0};
  if (gr_load_rocmsmi_topo_buffer("r.txt", text, strlen(text), t, &err) != 0)
    fail_msg("%s", err.msg);
  gr_analyze(t, a);
}

/* GPU0-1 under one switch, GPU2 under another switch of the same tree,
 * GPU3 on the same host bridge's other root port, GPU4 on another host
 * bridge of node 0, GPU5 on node 1; NIC0 beside GPU0-1; GPU4-5 NV2. */
static const char every_level[] =
    "\tGPU0\tGPU1\tGPU2\tGPU3\tGPU4\tGPU5\tNIC0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\n"
    "GPU0\t X \tPIX\tPXB\tPHB\tNODE\tSYS\tPIX\t0-7\t0\t\tN/A\n"
    "GPU1\tPIX\t X \tPXB\tPHB\tNODE\tSYS\tPIX\t0-7\t0\t\tN/A\n"
    "GPU2\tPXB\tPXB\t X \tPHB\tNODE\tSYS\tPXB\t0-7\t0\t\tN/A\n"
    "GPU3\tPHB\tPHB\tPHB\t X \tNODE\tSYS\tPHB\t0-7\t0\t\tN/A\n"
    "GPU4\tNODE\tNODE\tNODE\tNODE\t X \tNV2\tNODE\t0-7\t0\t\tN/A\n"
    "GPU5\tSYS\tSYS\tSYS\tSYS\tNV2\t X \tSYS\t8-15\t1\t\t2\n"
    "NIC0\tPIX\tPIX\tPXB\tPHB\tNODE\tSYS\t X \n"
    "\nLegend:\n\n  X    = Self\n\nNIC Legend:\n\n  NIC0: mlx5_3\n";

static void every_level_comes_back(void **state)
{
  (void)state;
  struct gr_topo t;
  struct gr_analysis a;
  char l[16];
  load_nv(every_level, &t, &a);
  assert_int_equal(t.ngpus, 6);
  assert_int_equal(t.nnics, 1);
  static const char *const want[6][6] = {
      {"X", "PIX", "PXB", "PHB", "NODE", "SYS"},  {"PIX", "X", "PXB", "PHB", "NODE", "SYS"},
      {"PXB", "PXB", "X", "PHB", "NODE", "SYS"},  {"PHB", "PHB", "PHB", "X", "NODE", "SYS"},
      {"NODE", "NODE", "NODE", "NODE", "X", "NV2"}, {"SYS", "SYS", "SYS", "SYS", "NV2", "X"},
  };
  for (int i = 0; i < 6; i++)
    for (int j = 0; j < 6; j++)
      if (strcmp(tu_level(&a, i, j, l), want[i][j]) != 0)
        fail_msg("GPU%d GPU%d: %s, want %s", i, j, l, want[i][j]);
  assert_int_equal(gr_path_between(&a, t.gpus[0], t.nics[0]).level, GR_LVL_PIX);
  assert_int_equal(gr_path_between(&a, t.gpus[2], t.nics[0]).level, GR_LVL_PXB);
  const struct gr_pci *nic = &t.pci[t.nics[0]], *g5 = &t.pci[t.gpus[5]];
  assert_string_equal(nic->rdma_name, "mlx5_3");
  assert_string_equal(g5->cpulist, "8-15");
  assert_int_equal(g5->numa, 1);
  assert_int_equal(g5->gpu_numa, 2);
  assert_string_equal(t.source_kind, "nvidia-smi");
  /* what it leaves out is said: the tree, and the NV2 pair's PCIe level */
  assert_non_null(tu_find(&a, "topo.input-gap", -1));
  assert_true(t.ngaps >= 2);
  assert_non_null(strstr(t.gaps[1], "1 GPU pair shows NV#"));
  gr_analysis_free(&a);
  gr_topo_free(&t);
}

static void expect_nv_error(const char *text, const char *want)
{
  struct gr_topo t;
  struct gr_err err = {0};
  assert_int_equal(gr_load_nvsmi_topo_buffer("m.txt", text, strlen(text), &t, &err), -1);
  if (!strstr(err.msg, want))
    fail_msg("got \"%s\", want \"%s\"", err.msg, want);
  gr_topo_free(&t);
}

static void bad_matrices_name_their_line(void **state)
{
  (void)state;
  expect_nv_error("x\n\tGPU0\tGPU1\nGPU0\t X \tNV0\nGPU1\tNV0\t X \n", "m.txt:3: row GPU0, column GPU1: \"NV0\"");
  expect_nv_error("\tGPU0\tGPU1\nGPU0\tPIX\tPIX\nGPU1\tPIX\t X \n", "m.txt:2: row GPU0, column GPU0: the diagonal is not X");
  expect_nv_error("\tGPU0\tGPU1\nGPU0\t X \tPIX\n", "m.txt:1: the matrix has no row for column GPU1");
  expect_nv_error("\tGPU0\tGPU0\nGPU0\t X \tPIX\n", "m.txt:1: column GPU0 given twice");
  expect_nv_error("\tGPU0\tGPU1\nGPU0\t X \nGPU1\tPIX\t X \n", "m.txt:2: row GPU0 has 1 cells, the header 2 columns");
  expect_nv_error("\tGPU0\tNIC0\nGPU0\t X \tNV2\nNIC0\tNV2\t X \n", "NV# between a NIC and another device");
  /* the halves disagree: a warning, the upper half kept */
  struct gr_topo t;
  struct gr_analysis a;
  char l[16];
  load_nv("\tGPU0\tGPU1\nGPU0\t X \tPIX\nGPU1\tSYS\t X \n", &t, &a);
  assert_int_equal(t.nwarnings, 1);
  assert_string_equal(tu_level(&a, 0, 1, l), "PIX");
  gr_analysis_free(&a);
  gr_topo_free(&t);
}

/* rocm-smi: XGMI at weight 15 is a link, at 30 a 2-hop path drawn at its
 * PCIe level; PCIE pairs take their NUMA nodes from the Numa Node lines;
 * N/A is unknown. */
static const char rocm_xgmi[] =
    "=================== Weight between two GPUs ===================\n"
    "       GPU0   GPU1   GPU2   GPU3\n"
    "GPU0   0      15     30     N/A\n"
    "GPU1   15     0      15     52\n"
    "GPU2   30     15     0      52\n"
    "GPU3   N/A    52     52     0\n"
    "================= Link Type between two GPUs ==================\n"
    "       GPU0   GPU1   GPU2   GPU3\n"
    "GPU0   0      XGMI   XGMI   PCIE\n"
    "GPU1   XGMI   0      XGMI   PCIE\n"
    "GPU2   XGMI   XGMI   0      PCIE\n"
    "GPU3   PCIE   PCIE   PCIE   0\n"
    "========================= Numa Nodes ==========================\n"
    "GPU[0]\t\t: (Topology) Numa Node: 0\n"
    "GPU[1]\t\t: (Topology) Numa Node: 0\n"
    "GPU[2]\t\t: (Topology) Numa Node: 0\n"
    "GPU[3]\t\t: (Topology) Numa Node: 1\n";

static void rocm_xgmi_hops_and_numa(void **state)
{
  (void)state;
  struct gr_topo t;
  struct gr_analysis a;
  char l[16];
  assert_int_equal(gr_smi_topo_sniff(rocm_xgmi, sizeof(rocm_xgmi) - 1), 2);
  assert_int_equal(gr_smi_topo_sniff(every_level, sizeof(every_level) - 1), 1);
  assert_int_equal(gr_smi_topo_sniff("<topology/>", 11), 0);
  load_rocm(rocm_xgmi, &t, &a);
  assert_int_equal(t.ngpus, 4);
  assert_string_equal(tu_level(&a, 0, 1, l), "XGMI");
  assert_string_equal(tu_level(&a, 1, 2, l), "XGMI");
  assert_string_equal(tu_level(&a, 0, 2, l), "NODE"); /* weight 30: through GPU1 */
  assert_string_equal(tu_level(&a, 0, 3, l), "SYS");
  assert_int_equal(t.ngpulinks, 2);
  assert_int_equal(t.pci[t.gpus[3]].numa, 1);
  bool multihop = false;
  for (size_t i = 0; i < t.ngaps; i++)
    multihop |= strstr(t.gaps[i], "1 GPU pair is joined over xGMI through another GPU") != NULL;
  assert_true(multihop);
  gr_analysis_free(&a);
  gr_topo_free(&t);
  /* hops alone part the sockets: 3 is another socket */
  load_rocm("==== Hops between two GPUs ====\n GPU0 GPU1 GPU2\nGPU0 0 2 3\nGPU1 2 0 3\nGPU2 3 3 0\n", &t, &a);
  assert_string_equal(tu_level(&a, 0, 1, l), "NODE");
  assert_string_equal(tu_level(&a, 0, 2, l), "SYS");
  gr_analysis_free(&a);
  gr_topo_free(&t);
  struct gr_err err = {0};
  static const char bad[] = "==== Link Type between two GPUs ====\n GPU0 GPU1\nGPU0 0 NVLINK\nGPU1 PCIE 0\n";
  assert_int_equal(gr_load_rocmsmi_topo_buffer("r.txt", bad, sizeof(bad) - 1, &t, &err), -1);
  assert_string_equal(err.msg, "r.txt:3: GPU0, GPU1: \"NVLINK\" is not a link type (PCIE, XGMI)");
  gr_topo_free(&t);
}

/* Three GPUs: 0-1 xGMI, 2 on the other socket (hops 3) with P2P disabled. */
static const char amd_text[] =
    "$ amd-smi topology\n"
    "ACCESS TABLE:\n"
    "             0000:0c:00.0 0000:22:00.0 0001:c1:1f.7\n"
    "0000:0c:00.0 ENABLED      ENABLED      DISABLED\n"
    "0000:22:00.0 ENABLED      ENABLED      DISABLED\n"
    "0001:c1:1f.7 DISABLED     DISABLED     ENABLED\n"
    "\nWEIGHT TABLE:\n"
    "             0000:0c:00.0 0000:22:00.0 0001:c1:1f.7\n"
    "0000:0c:00.0 0            0            72\n"
    "0000:22:00.0 0            0            72\n"
    "0001:c1:1f.7 72           72           0\n"
    "HOPS TABLE:\n"
    "             0000:0c:00.0 0000:22:00.0 0001:c1:1f.7\n"
    "0000:0c:00.0 0            1            3\n"
    "0000:22:00.0 1            0            3\n"
    "0001:c1:1f.7 3            3            0\n"
    "LINK TYPE TABLE:\n"
    "             0000:0c:00.0 0000:22:00.0 0001:c1:1f.7\n"
    "0000:0c:00.0 SELF         XGMI         PCIE\n"
    "0000:22:00.0 XGMI         SELF         PCIE\n"
    "0001:c1:1f.7 PCIE         PCIE         SELF\n"
    "\nLegend:\n  SELF = Current GPU\n";

/* The same machine in each --json layout amd-smi has printed. */
static const char amd_json_links[] =
    "[{\"gpu\": 0, \"bdf\": \"0000:0c:00.0\", \"links\": ["
    "{\"gpu\": 1, \"weight\": 0, \"link_status\": \"ENABLED\", \"link_type\": \"XGMI\", \"num_hops\": 1},"
    "{\"gpu\": 2, \"weight\": 72, \"link_status\": \"DISABLED\", \"link_type\": \"PCIE\", \"num_hops\": 3}]},"
    "{\"gpu\": 2, \"bdf\": \"0001:c1:1f.7\", \"links\": ["
    "{\"gpu\": 0, \"link_status\": \"DISABLED\", \"link_type\": \"PCIE\", \"num_hops\": 3},"
    "{\"gpu\": 1, \"link_status\": \"DISABLED\", \"link_type\": \"PCIE\", \"num_hops\": 3}]},"
    "{\"gpu\": 1, \"bdf\": \"0000:22:00.0\", \"links\": ["
    "{\"gpu\": 0, \"link_status\": \"ENABLED\", \"link_type\": \"XGMI\", \"num_hops\": 1},"
    "{\"gpu\": 2, \"link_status\": \"DISABLED\", \"link_type\": \"PCIE\", \"num_hops\": 3}]}]";
static const char amd_json_tables[] =
    "[{\"gpu\": 0, \"link_accessibility\": {\"gpu_0\": \"ENABLED\", \"gpu_1\": \"ENABLED\", \"gpu_2\": \"DISABLED\"},"
    " \"hops\": {\"gpu_0\": 0, \"gpu_1\": 1, \"gpu_2\": 3},"
    " \"link_type\": {\"gpu_0\": \"SELF\", \"gpu_1\": \"XGMI\", \"gpu_2\": \"PCIE\"}},"
    " {\"gpu\": 1, \"link_accessibility\": {\"gpu_2\": \"DISABLED\"}, \"hops\": {\"gpu_2\": 3}},"
    " {\"gpu\": 2, \"link_accessibility\": {\"gpu_0\": \"DISABLED\", \"gpu_1\": \"DISABLED\"},"
    " \"numa_bandwidth\": {\"gpu_0\": \"N/A\", \"gpu_1\": \"0-0\"}}]";

static void check_amd(const char *text, bool bus_ids)
{
  struct gr_topo t;
  struct gr_analysis a;
  struct gr_err err = {0};
  char l[16];
  assert_int_equal(gr_smi_topo_sniff(text, strlen(text)), 3);
  if (gr_load_amdsmi_topo_buffer("a.txt", text, strlen(text), &t, &err) != 0)
    fail_msg("%s", err.msg);
  gr_analyze(&t, &a);
  assert_int_equal(t.ngpus, 3);
  assert_string_equal(t.source_kind, "amd-smi");
  assert_string_equal(tu_level(&a, 0, 1, l), "XGMI");
  assert_string_equal(tu_level(&a, 0, 2, l), "SYS");
  assert_string_equal(tu_level(&a, 1, 2, l), "SYS");
  assert_int_equal(t.ngpulinks, 1);
  assert_int_equal(t.pci[t.gpus[0]].p2p, 1);
  assert_int_equal(t.pci[t.gpus[2]].p2p, 0);
  const struct gr_pci *g2 = &t.pci[t.gpus[2]];
  if (bus_ids) {
    assert_int_equal(g2->domain, 1);
    assert_int_equal(g2->bus, 0xc1);
    assert_int_equal(g2->dev, 0x1f);
    assert_int_equal(g2->func, 7);
  } else {
    assert_int_equal(g2->domain, 0xffffffffu); /* no bus ids stated: drawn */
  }
  gr_analysis_free(&a);
  gr_topo_free(&t);
}

static void amd_text_and_json_agree(void **state)
{
  (void)state;
  struct gr_topo t;
  struct gr_err err = {0};
  check_amd(amd_text, true);
  check_amd(amd_json_links, true);
  check_amd(amd_json_tables, false);
  /* the weights of 0 are said, and set aside */
  assert_int_equal(gr_load_amdsmi_topo_buffer("a.txt", amd_text, sizeof(amd_text) - 1, &t, &err), 0);
  bool zero = false;
  for (size_t i = 0; i < t.ngaps; i++)
    zero |= strstr(t.gaps[i], "1 GPU pair has weight 0") != NULL;
  assert_true(zero);
  gr_topo_free(&t);
  static const char bad_row[] = "HOPS TABLE:\n 0000:0c:00.0 0000:22:00.0\n0000:0c:00.0 0 1\n0000:23:00.0 1 0\n";
  assert_int_equal(gr_load_amdsmi_topo_buffer("a.txt", bad_row, sizeof(bad_row) - 1, &t, &err), -1);
  assert_string_equal(err.msg, "a.txt:4: row 0000:23:00.0: expected one of the header's bus ids and 2 cells");
  gr_topo_free(&t);
  static const char bad_json[] = "[{\"gpu\": 0, \"links\": [{\"gpu\": 0}]}, {\"gpu\": 0}]";
  assert_int_equal(gr_load_amdsmi_topo_buffer("a.json", bad_json, sizeof(bad_json) - 1, &t, &err), -1);
  assert_string_equal(err.msg, "a.json: entry 1 has no \"gpu\" among 0 .. 1, or one given twice");
  gr_topo_free(&t);
  static const char bad_hops[] = "HOPS TABLE:\n 0000:0c:00.0 0000:22:00.0\n0000:0c:00.0 0 one\n";
  assert_int_equal(gr_load_amdsmi_topo_buffer("a.txt", bad_hops, sizeof(bad_hops) - 1, &t, &err), -1);
  assert_string_equal(err.msg, "a.txt:3: GPU0, GPU1: \"one\" is not a number");
  gr_topo_free(&t);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_level_comes_back),
      cmocka_unit_test(bad_matrices_name_their_line),
      cmocka_unit_test(rocm_xgmi_hops_and_numa),
      cmocka_unit_test(amd_text_and_json_agree),
  };
  return cmocka_run_group_tests(tests, tu_setup_data, NULL);
}
