/* Rig files: the parser's errors, the seed rigs, the calibration cases and
 * the compare ranking the seed authors would give. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "facts/catalog.h"
#include "facts/data.h"
#include "analysis/cluster.h"
#include "analysis/compare.h"
#include "analysis/machine.h"
#include "analysis/predict.h"
#include "analysis/power.h"
#include "load/rig.h"

static int setup(void **state)
{
  return tu_setup_data(state);
}

static void expect_error(const char *text, const char *where, const char *what)
{
  struct gr_topo t;
  struct gr_err err = {0};
  if (gr_rig_parse("bad.rig", text, strlen(text), &t, &err) == 0) {
    gr_topo_free(&t);
    fail_msg("no error for:\n%s", text);
  }
  assert_int_equal(err.code, GR_EXIT_FAIL);
  if (!str_starts_with(err.msg, where) || !strstr(err.msg, what))
    fail_msg("'%s' is not '%s ... %s'", err.msg, where, what);
  assert_null(strchr(err.msg, '\n'));
  assert_int_equal(t.npci, 0);
}

#define HEAD "rig \"t\"\ncpu c0 \"EPYC 7302\"\nrootcomplex rc0 c0 gen4\n"

static void bad_rigs_name_file_line_col(void **state)
{
  (void)state;
  expect_error(HEAD "gpu \"RTX 9999\" rc0\n", "bad.rig:4:5:", "unknown GPU model \"RTX 9999\"");
  expect_error(HEAD "gpu \"RTX 309\" rc0\n", "bad.rig:4:5:", "unknown GPU model \"RTX 309\"; did you mean \"RTX 3090\"?");
  expect_error(HEAD "gpu \"RTX 3090\" rc9\n", "bad.rig:4:16:", "undefined parent 'rc9'");
  expect_error(HEAD "switch a b\nswitch b a\ngpu \"RTX 3090\" a\n", "bad.rig:4:10:", "cycle");
  expect_error(HEAD "switch rc0 rc0\n", "bad.rig:4:8:", "duplicate name 'rc0' (first defined at line 3, column 13)");
  /* a one-value statement given twice: the second is refused, naming the first (REL-22) */
  expect_error(HEAD "gpu \"RTX 3090\" rc0\nnodes 2\nnodes 3\n", "bad.rig:6:1:",
               "a second nodes statement (the first is at line 5, column 1)");
  expect_error(HEAD "gpu \"RTX 3090\" rc0\n  peermem yes\npeermem no\n", "bad.rig:6:1:",
               "a second peermem statement (the first is at line 5, column 3)");
  expect_error(HEAD "fabric switch\ngpu \"RTX 3090\" rc0\nfabric fat-tree\n", "bad.rig:6:1:",
               "a second fabric statement (the first is at line 4, column 1)");
  expect_error(HEAD "gdr-level PIX\ngdr-level SYS\n", "bad.rig:5:1:", "a second gdr-level statement (the first is at line 4");
  expect_error(HEAD "price 100 USD\nprice 200 USD\n", "bad.rig:5:1:", "a second price statement (the first is at line 4");
  expect_error(HEAD "p2p on\np2p off\n", "bad.rig:5:1:", "a second p2p statement (the first is at line 4");
  expect_error(HEAD "intersocket upi 20\nintersocket upi 30\n", "bad.rig:5:1:",
               "a second intersocket statement (the first is at line 4");
  expect_error(HEAD "gpu \"RTX 3090\" rc0 slot gen4 x32\n", "bad.rig:4:30:", "width x32: a PCIe link is x1, x2, x4, x8 or x16");
  expect_error(HEAD "nic n0 \"CX6\" rc0\ngpu \"RTX 3090\" n0\n", "bad.rig:5:16:",
               "a gpu's parent must be a rootcomplex or a switch; 'n0' is a nic");
  expect_error(HEAD "gpu \"RTX 3090", "bad.rig:4:5:", "unterminated string");
  expect_error("rig \"t\"\ncpu c0 \"EPYC\"\n", "bad.rig:2:1:", "no gpu statement"); /* at the end */
  expect_error("", "bad.rig:1:1:", "empty rig file");
  expect_error("\x7f" "ELF\x02\x01", "bad.rig:1:1:", "unexpected byte 0x7f");
  static const char nul[] = "rig \"t\"\nc\0pu";
  struct gr_topo t;
  struct gr_err err = {0};
  assert_int_equal(gr_rig_parse("bad.rig", nul, sizeof(nul) - 1, &t, &err), -1);
  assert_string_equal(err.msg, "bad.rig:2:2: binary data (NUL byte): not a rig file");
  expect_error(HEAD "frobnicate\n", "bad.rig:4:1:", "unknown statement \"frobnicate\"");
  expect_error("cpu c0 \"EPYC\"\n", "bad.rig:1:1:", "expected `rig \"NAME\"` as the first statement");
  expect_error(HEAD "gpu \"RTX 3090\" rc0 slot gen9 x16\n", "bad.rig:4:25:", "expected a PCIe generation");
  expect_error(HEAD "gpu 2 \"RTX 4090\" rc0\nnvlink gpu0 gpu1\n", "bad.rig:5:8:", "has no NVLink");
  expect_error(HEAD "gpu \"RTX 3090\" rc0\nnvlink gpu0 gpu7\n", "bad.rig:5:13:", "undefined GPU 'gpu7'");
  /* xgmi: AMD's links, checked against the catalog's xgmi links as nvlink is against NVLink */
  expect_error(HEAD "gpu 2 \"RX 7900 XTX\" rc0\nxgmi gpu0 gpu1\n", "bad.rig:5:6:", "gpu0 (RX 7900 XTX) has no xGMI");
  expect_error(HEAD "gpu 2 \"RTX 3090\" rc0\nxgmi gpu0 gpu1\n", "bad.rig:5:6:", "gpu0 (RTX 3090) has no xGMI");
  expect_error(HEAD "gpu 2 \"MI50\" rc0\nnvlink gpu0 gpu1\n", "bad.rig:5:8:", "gpu0 (MI50) has no NVLink");
  expect_error(HEAD "gpu 4 \"MI50\" rc0\nxgmi mesh gpu0-gpu3\n", "bad.rig:5:1:",
               "a mesh of 4 GPUs needs 3 xGMI links per GPU at least; an MI50 has 2");
  expect_error(HEAD "gpu 3 \"MI50\" rc0\nxgmi gpu0 gpu1\nxgmi gpu0 gpu2 links 2\n", "bad.rig:6:1:",
               "gpu0 would have 3 xGMI links; an MI50 has 2");
  expect_error(HEAD "gpu \"MI50\" rc0\nxgmi none\n", "bad.rig:5:1:", "expected: xgmi GPU GPU [links N]");
  expect_error(HEAD "xgm gpu0 gpu1\n", "bad.rig:4:1:", "unknown statement \"xgm\"; did you mean 'xgmi'?");
}

/* A bridged MI50 ring: xGMI where the bridge joins two cards, PCIe across
 * the ring, each link at the catalog's rate; the matrix says XGMI as
 * rocm-smi --showtopo does. */
static void xgmi_links_print_as_rocm_smi_does(void **state)
{
  (void)state;
  struct gr_topo t;
  struct gr_analysis a;
  struct gr_err err = {0};
  char l[16];
  if (gr_load_rig("mi50-bridge", &t, &err) != 0)
    fail_msg("%s", err.msg);
  gr_analyze(&t, &a);
  assert_int_equal(t.ngpus, 4);
  assert_int_equal(t.ngpulinks, 4);
  assert_string_equal(tu_level(&a, 0, 1, l), "XGMI");
  assert_string_equal(tu_level(&a, 0, 3, l), "XGMI");
  assert_string_equal(tu_level(&a, 0, 2, l), "NODE");
  struct gr_path pv = tu_path(&a, 1);
  const struct gr_path *p = &pv;
  assert_true(p->xgmi);
  assert_int_equal(p->gpulinks, 1);
  assert_true(p->bw_gbps > 45.9 && p->bw_gbps < 46.1); /* 92 GB/s per direction over the MI50's 2 links */
  gr_analysis_free(&a);
  /* NVIDIA cards in the AMD slots (--gpu): the same links print as NVLink */
  assert_int_equal(gr_rig_replace_gpus(&t, "RTX 3090", &err), 0);
  gr_analyze(&t, &a);
  assert_string_equal(tu_level(&a, 0, 1, l), "NV1");
  gr_analysis_free(&a);
  gr_topo_free(&t);
}

static void every_bundled_rig_loads_and_matches_its_description(void **state)
{
  (void)state;
  static const struct {
    const char *name;
    size_t gpus;
    const char *level01;  /* GPU0-GPU1 */
    const char *level0n;  /* GPU0 to the last GPU */
  } rigs[] = {
      {"wopr", 7, "PHB", "NODE"},
      {"sys-4029gp-trt2", 10, "PIX", "NODE"},
      {"gigabyte-g482", 8, "PHB", "SYS"},
      {"asus-esc4000", 4, "PHB", "SYS"},
      {"sys-4028gr-tr-x9drg", 8, "PIX", "SYS"},
      {"sys-4028gr-tr-x10drg", 8, "PIX", "PHB"},
      {"gigabyte-t181-g20", 4, "NV2", "NV2"},
      {"tyan-s8030", 4, "NODE", "NODE"},
      {"tinybox-red", 6, "PHB", "NODE"},
      {"tinybox-green", 6, "PHB", "NODE"},
  };
  for (size_t i = 0; i < sizeof(rigs) / sizeof(rigs[0]); i++) {
    struct gr_topo t;
    struct gr_analysis a;
    struct gr_err err = {0};
    char l[16];
    if (gr_load_rig(rigs[i].name, &t, &err) != 0)
      fail_msg("%s: %s", rigs[i].name, err.msg);
    gr_analyze(&t, &a);
    if (t.ngpus != rigs[i].gpus)
      fail_msg("%s: %zu GPUs", rigs[i].name, t.ngpus);
    if (strcmp(tu_level(&a, 0, 1, l), rigs[i].level01) != 0)
      fail_msg("%s: GPU0-GPU1 %s, expected %s", rigs[i].name, l, rigs[i].level01);
    if (strcmp(tu_level(&a, 0, (int)t.ngpus - 1, l), rigs[i].level0n) != 0)
      fail_msg("%s: GPU0-last %s, expected %s", rigs[i].name, l, rigs[i].level0n);
    assert_non_null(t.rig->notes); /* every rig cites its seed */
    gr_analysis_free(&a);
    gr_topo_free(&t);
  }
}

static double predicted_busbw(const char *rig)
{
  struct gr_topo t;
  struct gr_analysis a;
  struct gr_prediction p;
  struct gr_err err = {0};
  if (gr_load_rig(rig, &t, &err) != 0)
    fail_msg("%s", err.msg);
  gr_analyze(&t, &a);
  gr_predict(&t, &a, &p);
  double v = p.best.busbw_gbps;
  gr_prediction_free(&p);
  gr_analysis_free(&a);
  gr_topo_free(&t);
  return v;
}

/* Published: 6x 4090 P2P on one EPYC 24.5 GB/s; 4x 4090 likewise 25.7-25.95. */
static void calibration_within_15_percent(void **state)
{
  (void)state;
  double six = predicted_busbw("tinybox-green");
  char *four_path = xasprintf("%s/rigs/4x4090-p2p-epyc.rig", getenv("GPURIG_TEST_DATA"));
  double four = predicted_busbw(four_path);
  free(four_path);
  assert_true(fabs(six - 24.5) / 24.5 < 0.15);
  assert_true(fabs(four - 25.8) / 25.8 < 0.15);
}

static void seed_ranking_for_training(void **state)
{
  (void)state;
  const char *rigs[] = {"sys-4028gr-tr-x10drg", "sys-4028gr-tr-x9drg", "gigabyte-g482"};
  int group[3];
  double bw[3];
  enum gr_rating train[3], tp2[3];
  for (int i = 0; i < 3; i++) {
    struct gr_topo t;
    struct gr_analysis a;
    struct gr_prediction p;
    struct gr_err err = {0};
    assert_int_equal(gr_load_rig(rigs[i], &t, &err), 0);
    assert_int_equal(gr_rig_replace_gpus(&t, "V100 PCIe 32GB", &err), 0); /* the same GPUs everywhere */
    gr_analyze(&t, &a);
    gr_predict(&t, &a, &p);
    group[i] = p.largest_p2p_domain;
    bw[i] = p.best.busbw_gbps;
    train[i] = p.verdicts[0].rating;
    assert_string_equal(p.verdicts[0].workload, "training");
    assert_string_equal(p.verdicts[1].workload, "tensor-parallel inference");
    assert_int_equal(p.verdicts[1].gpus, 2);
    tp2[i] = p.verdicts[1].rating;
    gr_prediction_free(&p);
    gr_analysis_free(&a);
    gr_topo_free(&t);
  }
  /* X10DRG: one P2P group of 8; X9DRG: two of 4 across QPI; G482: pairs */
  assert_int_equal(group[0], 8);
  assert_int_equal(group[1], 4);
  assert_int_equal(group[2], 2);
  assert_true(bw[0] > bw[1]);
  assert_int_equal(train[0], GR_RATE_GOOD);
  assert_int_equal(train[2], GR_RATE_POOR);
  assert_int_equal(tp2[2], GR_RATE_GOOD); /* G482: fine for 1-2 GPU inference */
}

static void nvlink_makes_tensor_parallel_fast(void **state)
{
  struct gr_topo t;
  struct gr_analysis a;
  struct gr_prediction p;
  struct gr_err err = {0};
  (void)state;
  assert_int_equal(gr_load_rig("gigabyte-t181-g20", &t, &err), 0);
  gr_analyze(&t, &a);
  gr_predict(&t, &a, &p);
  for (size_t i = 0; i < p.nverdicts; i++)
    if (strcmp(p.verdicts[i].workload, "tensor-parallel inference") == 0)
      assert_int_equal(p.verdicts[i].rating, GR_RATE_GOOD);
  assert_true(p.best.busbw_gbps > 50); /* far above any PCIe figure */
  assert_int_equal(gr_pair_at(&p, 0, 1)->best, GR_XFER_GPULINK);
  gr_prediction_free(&p);
  gr_analysis_free(&a);
  gr_topo_free(&t);
}

static void nccl_default_vs_p2p_level(void **state)
{
  struct gr_topo t;
  struct gr_analysis a;
  struct gr_prediction p;
  struct gr_err err = {0};
  (void)state;
  /* 6 GPUs on AMD: NCCL keeps P2P to PXB, so the P2P driver helps only with the setting */
  assert_int_equal(gr_load_rig("tinybox-green", &t, &err), 0);
  gr_analyze(&t, &a);
  gr_predict(&t, &a, &p);
  assert_true(p.best_needs_p2p_level);
  assert_string_equal(p.best_p2p_level, "PHB");
  assert_int_equal(gr_pair_at(&p, 0, 1)->nccl, GR_XFER_HOST);
  assert_int_equal(gr_pair_at(&p, 0, 1)->best, GR_XFER_P2P);
  assert_true(p.nccl_default.busbw_gbps < p.best.busbw_gbps);
  gr_prediction_free(&p);
  gr_analysis_free(&a);
  gr_topo_free(&t);
  /* stock 4090s never P2P: WOPR goes through host memory either way */
  assert_int_equal(gr_load_rig("wopr", &t, &err), 0);
  gr_analyze(&t, &a);
  gr_predict(&t, &a, &p);
  assert_false(p.best_needs_p2p_level);
  assert_int_equal(p.largest_p2p_domain, 1);
  assert_int_equal(p.best.nhops_host, 7);
  assert_int_equal(p.best.bound.kind, GR_BOUND_HOST_MEM);
  char bound[256];
  assert_non_null(strstr(gr_ring_bound_text(&p, &p.best, bound, sizeof(bound)), "host memory"));
  gr_prediction_free(&p);
  gr_analysis_free(&a);
  gr_topo_free(&t);
}

/* The best ring of each group size is computed only when asked for (only
 * plans read it), with NCCL's defaults and with NCCL_P2P_LEVEL raised.
 * X9DRG: two GPUs share a switch and talk P2P by default (Gen3 x16 x 0.80);
 * three or four span two switches of one root complex, host-staged by
 * default (x 0.67) and P2P with NCCL_P2P_LEVEL=PHB; larger ones cross QPI
 * (6 GB/s) either way. */
static void group_rings_on_demand(void **state)
{
  struct gr_topo t;
  struct gr_analysis a;
  struct gr_prediction p;
  struct gr_err err = {0};
  (void)state;
  assert_int_equal(gr_load_rig("sys-4028gr-tr-x9drg", &t, &err), 0);
  gr_analyze(&t, &a);
  gr_predict(&t, &a, &p);
  assert_null(p.group_busbw_gbps);
  for (int pass = 0; pass < 2; pass++) { /* the second call replaces the table (ASan, valgrind: no leak) */
    gr_predict_groups(&p, NULL, 0);
    assert_non_null(p.group_busbw_gbps);
    assert_true(fabs(p.group_busbw_gbps[2] - 15.754 * 0.8) < 0.01);
    assert_true(p.group_busbw_raised_gbps[2] == 0 && !p.group_p2p_level[2]);
    for (size_t k = 3; k <= 4; k++) {
      assert_true(fabs(p.group_busbw_gbps[k] - 15.754 * 0.67) < 0.01);
      assert_true(fabs(p.group_busbw_raised_gbps[k] - 15.754 * 0.8) < 0.01);
      assert_string_equal(p.group_p2p_level[k], "PHB");
    }
    for (size_t k = 5; k <= 7; k++) {
      assert_true(fabs(p.group_busbw_gbps[k] - 6.0) < 1e-9);
      assert_true(p.group_busbw_raised_gbps[k] == 0);
    }
    assert_true(p.group_busbw_gbps[8] == 0); /* the whole machine is p.nccl_default */
  }
  gr_prediction_free(&p);
  gr_analysis_free(&a);
  gr_topo_free(&t);
}

/* A rig generated in memory: HEAD, then `lines` copies of line (a printf
 * format given the copy's number). The caller frees it. */
static char *generated_rig(const char *head, const char *line, size_t lines, size_t *len)
{
  size_t cap = strlen(head) + lines * (strlen(line) + 16) + 1, off = 0;
  char *text = xmalloc(cap);
  off += (size_t)snprintf(text, cap, "%s", head);
  for (size_t i = 0; i < lines; i++)
    off += (size_t)snprintf(text + off, cap - off, line, i);
  *len = off;
  return text;
}

/* Parses a generated rig; returns 0 or -1 with the error in err. */
static int parse_generated(const char *head, const char *line, size_t lines, struct gr_topo *t, struct gr_err *err)
{
  size_t len;
  char *text = generated_rig(head, line, lines, &len);
  int rc = gr_rig_parse("big.rig", text, len, t, err);
  free(text);
  return rc;
}

/* D5: each source line once appended the whole notes string again (25,000
 * lines took 9 s); the notes now grow by doubling. Timing lives in
 * tests/robust (D05-rig-25k-source); this checks the result. */
static void many_source_lines_parse(void **state)
{
  struct gr_topo t;
  struct gr_err err = {0};
  (void)state;
  if (parse_generated(HEAD "gpu \"RTX 3090\" rc0\n", "source \"s%zu\"\n", 25000, &t, &err) != 0)
    fail_msg("%s", err.msg);
  assert_int_equal(t.ngpus, 1);
  size_t lines = 1;
  for (const char *c = t.rig->notes; *c; c++)
    lines += *c == '\n';
  assert_int_equal(lines, 25000);
  assert_true(str_starts_with(t.rig->notes, "s0\ns1\ns2\n"));
  assert_string_equal(strrchr(t.rig->notes, '\n'), "\ns24999");
  gr_topo_free(&t);
}

/* The bus numbers of one PCI domain run out at the line that declares one
 * device too many, not after the file: HEAD's root complex takes bus 1, each
 * GPU two more (its root port and itself), so the 128th GPU, on line 131,
 * would need bus 256. */
static void device_cap_names_its_line(void **state)
{
  struct gr_topo t;
  struct gr_err err = {0};
  (void)state;
  assert_int_equal(parse_generated(HEAD, "gpu \"RTX 3090\" rc0 # %zu\n", 300, &t, &err), -1);
  assert_true(str_starts_with(err.msg, "big.rig:131:1: too many devices for one PCI domain (at most 255"));
  assert_int_equal(t.npci, 0);
  /* 127 GPUs fill the domain exactly */
  if (parse_generated(HEAD, "gpu \"RTX 3090\" rc0 # %zu\n", 127, &t, &err) != 0)
    fail_msg("%s", err.msg);
  assert_int_equal(t.ngpus, 127);
  gr_topo_free(&t);
  /* a count counts each GPU: gpu 64 on line 4 fills buses 2..129, the next line's 64th GPU is one too many */
  expect_error(HEAD "gpu 64 \"RTX 3090\" rc0\ngpu 64 \"RTX 3090\" rc0\n", "bad.rig:5:1:", "at most 255");
}

/* A million lines: refused at the first device over the cap, or, for
 * source lines, at the line cap (100,000); 25,000 source lines parse. */
static void million_line_rigs(void **state)
{
  struct gr_topo t;
  struct gr_err err = {0};
  (void)state;
  assert_int_equal(parse_generated(HEAD, "gpu \"RTX 3090\" rc0 # %zu\n", 1000000, &t, &err), -1);
  assert_true(str_starts_with(err.msg, "big.rig:131:1: too many devices"));
  /* switch s0 takes buses 2-3, so switch t126 (line 131) would need 256 */
  assert_int_equal(parse_generated(HEAD "switch s0 rc0\n", "switch t%zu s0\n", 1000000, &t, &err), -1);
  assert_true(str_starts_with(err.msg, "big.rig:131:1: too many devices"));
  assert_int_equal(parse_generated(HEAD "gpu \"RTX 3090\" rc0\n", "source \"%zu\"\n", 1000000, &t, &err), -1);
  assert_true(str_starts_with(err.msg, "big.rig:100001:1: more than 100000 lines"));
}

/* Elements without bus numbers (cpus) and nvlink statements have caps of
 * their own; names still resolve, and duplicates are still found, past the
 * hash table's growth. */
static void element_and_nvlink_caps(void **state)
{
  struct gr_topo t;
  struct gr_err err = {0};
  (void)state;
  /* c0 and rc0 are elements 1 and 2; line 3 + j declares element 2 + j; the 4097th is on line 4098 */
  assert_int_equal(parse_generated(HEAD, "cpu x%zu \"EPYC 7302\"\n", 5000, &t, &err), -1);
  assert_true(str_starts_with(err.msg, "big.rig:4098:1: too many elements (at most 4096"));
  assert_int_equal(parse_generated(HEAD "gpu 2 \"A100 SXM4 40GB\" rc0\n", "nvlink gpu0 gpu1 # %zu\n", 5000, &t, &err), -1);
  assert_true(str_starts_with(err.msg, "big.rig:4101:1: too many nvlink statements (at most 4096"));
  /* a mesh of 64 A100s would give each 63 peers and 12 links: refused at its first line (the links
   * per GPU bound a rig's NVLink pairs, no count of pairs is needed) */
  assert_int_equal(parse_generated(HEAD "gpu 64 \"A100 SXM4 40GB\" rc0\n", "nvlink mesh gpu0-gpu63 # %zu\n", 9, &t, &err), -1);
  assert_string_equal(err.msg, "big.rig:5:1: a mesh of 64 GPUs needs 63 NVLinks per GPU at least; an A100 SXM4 40GB "
                      "has 12 (an HGX board joins GPUs through NVSwitches: write nvswitch gpu0-gpu63)");
  assert_int_equal(parse_generated(HEAD "gpu 64 \"A100 SXM4 40GB\" rc0\n", "nvlink mesh gpu0-gpu63 links 1 # %zu\n", 9, &t, &err), -1);
  assert_true(str_starts_with(err.msg, "big.rig:5:1: gpu0 would have 63 NVLinks; an A100 SXM4 40GB has 12"));
  assert_int_equal(parse_generated(HEAD "gpu \"RTX 3090\" rc0\n", "cpu x%zu \"EPYC 7302\"\n", 3000, &t, &err), 0);
  assert_int_equal(t.npackages, 3001);
  gr_topo_free(&t);
  expect_error(HEAD "gpu \"RTX 3090\" rc0\n"
               "cpu a1 \"x\"\ncpu a2 \"x\"\ncpu a3 \"x\"\ncpu a4 \"x\"\ncpu a5 \"x\"\ncpu a6 \"x\"\ncpu a7 \"x\"\n"
               "cpu a8 \"x\"\ncpu a9 \"x\"\ncpu a10 \"x\"\ncpu a11 \"x\"\ncpu a12 \"x\"\ncpu a13 \"x\"\ncpu a14 \"x\"\n"
               "cpu a15 \"x\"\ncpu a16 \"x\"\ncpu a17 \"x\"\ncpu a18 \"x\"\ncpu a19 \"x\"\ncpu a20 \"x\"\ncpu a21 \"x\"\n"
               "cpu a22 \"x\"\ncpu a23 \"x\"\ncpu a24 \"x\"\ncpu a25 \"x\"\ncpu a26 \"x\"\ncpu a27 \"x\"\ncpu a28 \"x\"\n"
               "cpu a29 \"x\"\ncpu a30 \"x\"\ncpu a31 \"x\"\ncpu a32 \"x\"\ncpu a33 \"x\"\ncpu a34 \"x\"\n"
               "switch a3 rc0\n",
               "bad.rig:39:8:", "duplicate name 'a3' (first defined at line 7, column 5)");
  /* a GPU's automatic name after a user's of the same name: lookups find the first, a switch */
  expect_error(HEAD "switch gpu0 rc0\ngpu 2 \"A100 SXM4 40GB\" gpu0\nnvlink gpu0 gpu1\n", "bad.rig:6:8:",
               "undefined GPU 'gpu0'");
}

/* ---- the grammar for real machines (docs/rig-format.md) ---- */

static void parse_ok(const char *text, struct gr_topo *t)
{
  struct gr_err err = {0};
  if (gr_rig_parse("t.rig", text, strlen(text), t, &err) != 0)
    fail_msg("%s", err.msg);
}

/* nvidia-smi's level between two PCI nodes (GPUs or NICs). */
static const char *level_of(const struct gr_analysis *a, int x, int y, char *buf)
{
  struct gr_path p = gr_path_between(a, x, y);
  return gr_level_str(&p, buf, 16);
}

#define GIB ((uint64_t)1 << 30)

/* NPS4 and NPS2 sockets: nodes numbered across the machine in socket order,
 * the socket's RAM split over them, SYS between nodes of one socket (NVML's
 * rule: a different NUMA node is SYS, whatever the socket), NODE within one. */
static void numa_nodes_per_socket(void **state)
{
  struct gr_topo t;
  struct gr_analysis a;
  char l[16];
  (void)state;
  parse_ok("rig \"nps\"\ncpu c0 \"EPYC 7763\" numa 4 ram 512\ncpu c1 \"EPYC 7763\" numa 2 ram 101\n"
           "rootcomplex r0 c0 gen4 numa 0\nrootcomplex r1 c0 gen4\nrootcomplex r2 c0 gen4 numa 3\n"
           "rootcomplex r3 c1 gen4 numa 1\ngpu \"A100 PCIe 80GB\" r0\ngpu \"A100 PCIe 80GB\" r1\n"
           "gpu \"A100 PCIe 80GB\" r2\ngpu \"A100 PCIe 80GB\" r3\n", &t);
  assert_int_equal(t.npackages, 2);
  assert_int_equal(t.nnumas, 6);
  for (int k = 0; k < 6; k++) {
    assert_int_equal(t.numas[k].os_index, k);
    assert_int_equal(t.numas[k].package, k < 4 ? 0 : 1);
  }
  assert_true(t.numas[0].mem_bytes == 128 * GIB && t.numas[3].mem_bytes == 128 * GIB);
  assert_true(t.numas[4].mem_bytes + t.numas[5].mem_bytes == 101 * GIB);
  assert_true(t.packages[0].mem_bytes == 512 * GIB && t.packages[1].mem_bytes == 101 * GIB);
  static const int numa[] = {0, 0, 3, 5}, package[] = {0, 0, 0, 1};
  for (int g = 0; g < 4; g++) {
    assert_int_equal(t.pci[t.gpus[g]].numa, numa[g]);
    assert_int_equal(t.pci[t.gpus[g]].package, package[g]);
  }
  gr_analyze(&t, &a);
  assert_string_equal(tu_level(&a, 0, 1, l), "NODE");
  assert_string_equal(tu_level(&a, 0, 2, l), "SYS"); /* one socket, two nodes */
  assert_string_equal(tu_level(&a, 0, 3, l), "SYS");
  gr_analysis_free(&a);
  gr_topo_free(&t);
  expect_error(HEAD "rootcomplex rc1 c0 gen4 numa 1\ngpu \"RTX 3090\" rc1\n", "bad.rig:4:30:",
               "numa 1: cpu 'c0' has 1 NUMA node (numa 0 .. 0");
  expect_error(HEAD "rootcomplex rc1 c0 numa lots\ngpu \"RTX 3090\" rc1\n", "bad.rig:4:25:", "expected a whole number");
  expect_error(HEAD "rootcomplex rc1 c0 numa\n", "bad.rig:4:20:", "expected a NUMA node");
  expect_error("rig \"t\"\ncpu c0 \"EPYC\" numa 9\n", "bad.rig:2:20:", "expected a whole number from 1 to 8");
  expect_error("rig \"t\"\ncpu c0 \"EPYC\" ram 0\n", "bad.rig:2:19:", "expected a whole number from 1");
  expect_error("rig \"t\"\ncpu c0 \"EPYC\" ram\n", "bad.rig:2:15:", "expected a value after \"ram\"");
}

/* numa unknown: the root complex's devices report node -1; across host
 * bridges that is SYS on a machine of several nodes (nvidia-smi prints SYS
 * then), NODE on a single-node one; below one root complex the PCIe levels
 * stand. */
static void numa_unknown(void **state)
{
  struct gr_topo t;
  struct gr_analysis a;
  char l[16];
  (void)state;
  parse_ok("rig \"u\"\ncpu c0 \"Xeon\"\ncpu c1 \"Xeon\"\nrootcomplex r0 c0 gen4\nrootcomplex r1 c0 gen4 numa unknown\n"
           "gpu \"A100 PCIe 80GB\" r0\ngpu 2 \"A100 PCIe 80GB\" r1\n", &t);
  assert_int_equal(t.pci[t.gpus[1]].numa, -1);
  assert_int_equal(t.pci[t.gpus[1]].package, 0); /* the socket is known */
  gr_analyze(&t, &a);
  assert_string_equal(tu_level(&a, 0, 1, l), "SYS");
  assert_string_equal(tu_level(&a, 1, 2, l), "PHB");
  assert_non_null(tu_find(&a, "numa.unknown", -2));
  gr_analysis_free(&a);
  gr_topo_free(&t);
  parse_ok(HEAD "rootcomplex r1 c0 gen4 numa unknown\ngpu \"A100 PCIe 80GB\" rc0\ngpu \"A100 PCIe 80GB\" r1\n", &t);
  gr_analyze(&t, &a);
  assert_string_equal(tu_level(&a, 0, 1, l), "NODE");
  assert_null(tu_find(&a, "numa.unknown", -2));
  gr_analysis_free(&a);
  gr_topo_free(&t);
}

/* A dual-port NIC: one device, functions 0 and 1 on one port, PIX to each
 * other like nvidia-smi's mlx5_0/mlx5_1. */
static void multi_function_nic(void **state)
{
  struct gr_topo t;
  struct gr_analysis a;
  char l[16];
  (void)state;
  parse_ok(HEAD "gpu \"A100 PCIe 80GB\" rc0\nnic ib0 \"ConnectX-6 Dx\" rc0 gen4 x16 ports 2\n"
           "nic ib1 \"ConnectX-7\" rc0 functions 3 rdma off\n", &t);
  assert_int_equal(t.nnics, 2); /* ib1 is plain Ethernet */
  const struct gr_pci *f0 = &t.pci[t.nics[0]], *f1 = &t.pci[t.nics[1]];
  assert_int_equal(f0->bus, f1->bus);
  assert_int_equal(f0->dev, f1->dev);
  assert_int_equal(f0->func, 0);
  assert_int_equal(f1->func, 1);
  assert_int_equal(f0->parent, f1->parent);
  assert_string_equal(f0->osdevs, "ib0");
  assert_string_equal(f1->osdevs, "ib0.1");
  size_t eth = 0;
  for (size_t i = 0; i < t.npci; i++)
    eth += t.pci[i].osdevs && str_starts_with(t.pci[i].osdevs, "ib1");
  assert_int_equal(eth, 3);
  gr_analyze(&t, &a);
  assert_string_equal(level_of(&a, t.nics[0], t.nics[1], l), "PIX");
  assert_string_equal(level_of(&a, t.gpus[0], t.nics[1], l), "PHB");
  gr_analysis_free(&a);
  gr_topo_free(&t);
  expect_error(HEAD "nic ib0 \"CX6\" rc0 ports 9\n", "bad.rig:4:25:", "expected a whole number from 1 to 8");
  expect_error(HEAD "gpu \"RTX 3090\" rc0 ports 2\n", "bad.rig:4:20:", "unexpected \"ports\"");
}

/* direct: devices on the root complex's bus, no root port, no link of their
 * own (a cloud VM's GPUs); a direct switch's devices hang from it. */
static void direct_devices(void **state)
{
  struct gr_topo t;
  struct gr_analysis a;
  char l[16];
  (void)state;
  parse_ok(HEAD "gpu 2 \"A100 SXM4 40GB\" rc0 direct\nnic efa0 \"EFA\" rc0 direct\nnvme rc0 direct\n", &t);
  assert_int_equal(t.npci, 5); /* the host bridge and four devices: no ports */
  const struct gr_pci *hb = &t.pci[t.pci[t.gpus[0]].parent];
  assert_int_equal(hb->role, GR_ROLE_HOSTBRIDGE);
  for (int g = 0; g < 2; g++) {
    const struct gr_pci *p = &t.pci[t.gpus[g]];
    assert_false(p->has_link);
    assert_int_equal(p->bus, hb->bus);
    assert_int_equal(p->dev, g);
  }
  assert_int_equal(t.pci[t.nics[0]].dev, 2);
  gr_analyze(&t, &a);
  assert_string_equal(tu_level(&a, 0, 1, l), "PHB");
  gr_analysis_free(&a);
  gr_topo_free(&t);
  parse_ok(HEAD "switch sw0 rc0 direct model \"PEX88096\"\ngpu 2 \"RTX 3090\" sw0\n", &t);
  assert_int_equal(t.npci, 4);
  assert_true(t.pci[t.gpus[0]].has_link);
  assert_true(gr_link_bw_gbps(&t.pci[t.gpus[0]]) > 31);
  gr_analyze(&t, &a);
  assert_string_equal(tu_level(&a, 0, 1, l), "PIX");
  gr_analysis_free(&a);
  gr_topo_free(&t);
  expect_error(HEAD "switch sw0 rc0\ngpu \"RTX 3090\" sw0 direct\n", "bad.rig:5:20:",
               "direct puts a device on its root complex's bus; 'sw0' is a switch");
  expect_error(HEAD "gpu 32 \"A100 SXM4 40GB\" rc0 direct\nnvme rc0 direct\n", "bad.rig:5:1:",
               "no device number left on the bus of 'rc0'");
}

/* NICs numbered as nvidia-smi numbers them (issue 31): a rig keeps its
 * declared order, `direct` devices included, unless `rdma NAME` gives the
 * RDMA devices, which then number the NICs in natural order. */
static void nic_numbering(void **state)
{
  struct gr_topo t;
  char l[32];
  (void)state;
  /* nic a behind a root port (bus 1), b direct (the root bus 0): declared order */
  parse_ok(HEAD "gpu \"RTX 3090\" rc0\nnic a \"CX6\" rc0\nnic b \"CX6\" rc0 direct\ngpu \"RTX 3090\" rc0 direct\n", &t);
  assert_true(t.pci[t.nics[0]].bus > t.pci[t.nics[1]].bus);
  assert_string_equal(t.pci[t.nics[0]].osdevs, "a");
  assert_string_equal(gr_pci_label(&t, t.gpus[1], l, sizeof(l)), "GPU1");
  assert_true(t.pci[t.gpus[1]].bus < t.pci[t.gpus[0]].bus); /* gpu1 on the root bus, still GPU1 */
  gr_topo_free(&t);
  parse_ok(HEAD "gpu \"RTX 3090\" rc0\nnic a \"CX6\" rc0 rdma mlx5_10\nnic b \"CX6\" rc0\n"
                "nic c \"CX6\" rc0 rdma mlx5_2 ports 2\n", &t);
  assert_int_equal(t.nnics, 4);
  assert_string_equal(t.pci[t.nics[0]].rdma_name, "mlx5_2");
  assert_string_equal(t.pci[t.nics[1]].rdma_name, "mlx5_3"); /* function 1 of c */
  assert_string_equal(t.pci[t.nics[2]].rdma_name, "mlx5_10");
  assert_null(t.pci[t.nics[3]].rdma_name); /* without one: after them */
  assert_string_equal(t.pci[t.nics[3]].osdevs, "b");
  gr_topo_free(&t);
  expect_error(HEAD "gpu \"RTX 3090\" rc0\nnic a \"CX6\" rc0 rdma ib ports 2\n", "bad.rig:5:22:",
               "must end in a number");
  expect_error(HEAD "gpu \"RTX 3090\" rc0\nnic a \"CX6\" rc0 rdma mlx5_0 rdma off\n", "bad.rig:5:22:",
               "an RDMA name on a NIC with rdma off");
  expect_error(HEAD "gpu \"RTX 3090\" rc0\nnic a \"CX6\" rc0 rdma \"mlx5_0\"\n", "bad.rig:5:22:",
               "expected on, off or an RDMA device name");
}

/* `gpu ... genN xW` is the card's own link (a consumer board's x8/x8), and a
 * device line refuses what its kind cannot take, naming line and column. */
static void device_line_options(void **state)
{
  struct gr_topo t;
  (void)state;
  parse_ok("rig \"t\"\ncpu cpu0 \"Ryzen 9 9950X\"\nrootcomplex rc0 cpu0 gen5\ngpu 2 \"RTX 5090\" rc0 gen5 x8\n", &t);
  for (size_t g = 0; g < t.ngpus; g++) {
    const struct gr_pci *p = &t.pci[t.gpus[g]];
    assert_int_equal(p->link.max_gen, 5);
    assert_int_equal(p->link.max_width, 8);
    assert_float_equal(gr_link_bw_gbps(p), 31.5, 0.1);
  }
  gr_topo_free(&t);
  expect_error(HEAD "gpu \"RTX 3090\" rc0 lanes 16\n", "bad.rig:4:20:", "unexpected \"lanes\" (a gpu line takes");
  expect_error(HEAD "gpu \"RTX 3090\" rc0 uplink gen4 x16\n", "bad.rig:4:20:", "unexpected \"uplink\"");
  expect_error(HEAD "gpu \"RTX 3090\" rc0\nnvme rc0 storage\n", "bad.rig:5:10:", "unexpected \"storage\" (a nvme line");
  expect_error(HEAD "gpu \"RTX 3090\" rc0\nnic a \"CX6\" rc0 p2p on\n", "bad.rig:5:17:", "unexpected \"p2p\"");
  expect_error(HEAD "gpu \"RTX 3090\" rc0 p2p\n", "bad.rig:4:23:", "expected a value after 'p2p'");
  expect_error(HEAD "switch s rc0 p2p on\ngpu \"RTX 3090\" s\n", "bad.rig:4:14:", "unexpected \"p2p\"");
}

/* `nvlink none`: no fabric is inferred (the loader checks the flag), what is
 * declared stays; `rootcomplex ... numa unknown cpus LIST` gives the devices
 * a CPU list without a NUMA node. */
static void nvlink_none_and_cpu_lists(void **state)
{
  struct gr_topo t;
  (void)state;
  parse_ok(HEAD "gpu 8 \"H100 SXM5\" rc0\nnvlink none\n", &t);
  assert_true(t.gpulink_none);
  assert_int_equal(t.nfabrics, 0);
  gr_topo_free(&t);
  parse_ok(HEAD "gpu 2 \"V100 SXM2 16GB\" rc0\nnvlink none\nnvlink gpu0 gpu1\n", &t);
  assert_true(t.gpulink_none);
  assert_int_equal(t.ngpulinks, 1);
  gr_topo_free(&t);
  expect_error(HEAD "gpu \"RTX 3090\" rc0\nnvlink none gpu0\n", "bad.rig:5:13:", "nvlink none stands alone");
  parse_ok("rig \"t\"\ncpu c0 \"EPYC 7302\"\nrootcomplex rc0 c0 gen4 numa unknown cpus 0-15,32-47\n"
           "gpu \"RTX 3090\" rc0\nnic n \"CX6\" rc0\n", &t);
  assert_int_equal(t.pci[t.gpus[0]].numa, -1);
  assert_string_equal(t.pci[t.gpus[0]].cpulist, "0-15,32-47");
  assert_string_equal(t.pci[t.nics[0]].cpulist, "0-15,32-47");
  gr_topo_free(&t);
  expect_error(HEAD "rootcomplex rc1 c0 cpus 8-4\ngpu \"RTX 3090\" rc1\n", "bad.rig:4:25:", "expected a CPU list");
  expect_error(HEAD "rootcomplex rc1 c0 cpus 0,0\ngpu \"RTX 3090\" rc1\n", "bad.rig:4:25:", "ascending");
  expect_error(HEAD "rootcomplex rc1 c0 cpus\ngpu \"RTX 3090\" rc1\n", "bad.rig:4:20:", "expected a CPU list");
}

/* One NVSwitch fabric from nvswitch statements: every GPU its catalog links
 * (or links N), the catalog's NVLink generation (or gen G). */
static void nvswitch_fabric(void **state)
{
  struct gr_topo t;
  struct gr_analysis a;
  struct gr_prediction p;
  char l[16];
  (void)state;
  parse_ok(HEAD "gpu 8 \"A100 SXM4 40GB\" rc0\nnvswitch 6 gpu0-gpu7\n", &t);
  assert_int_equal(t.nfabrics, 1);
  const struct gr_fabric *f = &t.fabrics[0];
  assert_int_equal(f->from, GR_FABRIC_RIG);
  assert_int_equal(f->nswitches, 6);
  assert_int_equal(f->gpulink_gen, 3);
  assert_int_equal(f->nmembers, 8);
  for (size_t i = 0; i < 8; i++) {
    assert_int_equal(f->members[i].links, 12);
    assert_float_equal(f->members[i].gbps, 300, 1e-9);
  }
  assert_int_equal(t.ngpulinks, 0);
  gr_analyze(&t, &a);
  gr_predict(&t, &a, &p);
  assert_string_equal(tu_level(&a, 0, 7, l), "NV12");
  assert_float_equal(p.best.busbw_gbps, 240, 1);
  gr_prediction_free(&p);
  gr_analysis_free(&a);
  gr_topo_free(&t);
  /* two baseboards in two statements: one fabric; links and gen given */
  parse_ok(HEAD "gpu 8 \"A100 SXM4 40GB\" rc0\nnvswitch 6 gpu0-gpu3 links 6 gen 3\nnvswitch 6 gpu4-gpu7 links 6\n", &t);
  assert_int_equal(t.nfabrics, 1);
  assert_int_equal(t.fabrics[0].nswitches, 12);
  assert_int_equal(t.fabrics[0].nmembers, 8);
  assert_int_equal(t.fabrics[0].members[7].links, 6);
  gr_topo_free(&t);
  /* a GPU not sold on an NVSwitch board may sit on one, within its links */
  parse_ok(HEAD "gpu 4 \"V100 SXM2 16GB\" rc0\nnvswitch gpu0-gpu3\n", &t);
  assert_int_equal(t.fabrics[0].members[0].links, 6);
  assert_int_equal(t.fabrics[0].nswitches, 0);
  gr_topo_free(&t);
  expect_error(HEAD "gpu 8 \"A100 SXM4 40GB\" rc0\nnvlink gpu0 gpu1\nnvswitch 6 gpu0-gpu7\n", "bad.rig:6:1:",
               "gpu0 would have 13 NVLinks; an A100 SXM4 40GB has 12");
  expect_error(HEAD "gpu 2 \"A100 SXM4 40GB\" rc0\nnvswitch gpu0-gpu1 links 13\n", "bad.rig:5:1:",
               "gpu0 would have 13 NVLinks");
  expect_error(HEAD "gpu 2 \"RTX 4090\" rc0\nnvswitch gpu0-gpu1\n", "bad.rig:5:10:", "gpu0 (RTX 4090) has no NVLink");
  expect_error(HEAD "gpu 2 \"A100 SXM4 40GB\" rc0\nnvswitch 6 gpu0-gpu2\n", "bad.rig:5:12:", "undefined GPU 'gpu2' in nvswitch");
  expect_error(HEAD "gpu 2 \"A100 SXM4 40GB\" rc0\nnvswitch 6 gpu1-gpu0\n", "bad.rig:5:12:", "expected a GPU range");
  expect_error(HEAD "gpu 2 \"A100 SXM4 40GB\" rc0\nnvswitch 6\n", "bad.rig:5:1:", "expected: nvswitch [COUNT]");
  expect_error(HEAD "gpu 2 \"A100 SXM4 40GB\" rc0\nnvswitch gpu0-gpu1 speed 9\n", "bad.rig:5:20:", "unexpected \"speed\"");
  expect_error(HEAD "gpu 2 \"A100 SXM4 40GB\" rc0\nnvswitch gpu0-gpu1 gen\n", "bad.rig:5:20:", "unexpected \"gen\"");
  expect_error(HEAD "gpu 4 \"A100 SXM4 40GB\" rc0\nnvswitch gpu0-gpu1\nnvswitch gpu2-gpu3 gen 4\n", "bad.rig:6:1:",
               "NVLink generation 4: the rig's NVSwitch fabric is generation 3");
}

/* nvlink without links: a bridge card's catalog links, a mesh's links shared
 * among its peers; a GPU's links never above its catalog's. */
static void nvlink_counts_from_the_catalog(void **state)
{
  struct gr_topo t;
  struct gr_analysis a;
  char l[16];
  (void)state;
  parse_ok(HEAD "rootcomplex rc1 c0 gen4\ngpu \"RTX 3090\" rc0\ngpu \"RTX 3090\" rc1\nnvlink gpu0 gpu1\n", &t);
  assert_int_equal(t.ngpulinks, 1);
  assert_int_equal(t.gpulinks[0].count, 4);
  assert_float_equal(t.gpulinks[0].bw_gbps, 56.25, 1e-9);
  gr_analyze(&t, &a);
  assert_string_equal(tu_level(&a, 0, 1, l), "NV4");
  gr_analysis_free(&a);
  gr_topo_free(&t);
  parse_ok(HEAD "gpu \"RTX 3090\" rc0\ngpu \"RTX 3090\" rc0\nnvlink gpu0 gpu1 links 2\n", &t);
  assert_float_equal(t.gpulinks[0].bw_gbps, 28.125, 1e-9); /* the per-link rate is the catalog's */
  gr_topo_free(&t);
  parse_ok(HEAD "gpu 4 \"V100 SXM2 16GB\" rc0\nnvlink mesh gpu0-gpu3\n", &t);
  assert_int_equal(t.ngpulinks, 6);
  for (size_t k = 0; k < 6; k++)
    assert_int_equal(t.gpulinks[k].count, 2);
  gr_topo_free(&t);
  parse_ok(HEAD "gpu 2 \"A100 PCIe 80GB\" rc0\nnvlink gpu0 gpu1\n", &t);
  assert_int_equal(t.gpulinks[0].count, 12);
  gr_topo_free(&t);
  parse_ok(HEAD "gpu 2 \"A100 SXM4 40GB\" rc0\nnvlink gpu0 gpu1\n", &t); /* not a bridge card: one */
  assert_int_equal(t.gpulinks[0].count, 1);
  gr_topo_free(&t);
  expect_error(HEAD "gpu \"RTX 3090\" rc0\ngpu \"RTX 4090\" rc0\nnvlink gpu0 gpu1\n", "bad.rig:6:13:",
               "gpu1 (RTX 4090) has no NVLink");
  expect_error(HEAD "gpu 2 \"RTX 3090\" rc0\nnvlink gpu0 gpu1\nnvlink gpu1 gpu0\n", "bad.rig:6:1:",
               "gpu1 would have 8 NVLinks; an RTX 3090 has 4 (an NVLink bridge joins two cards with all of them)");
  expect_error(HEAD "gpu 3 \"RTX 3090\" rc0\nnvlink mesh gpu0-gpu2 links 3\n", "bad.rig:5:1:",
               "gpu0 would have 6 NVLinks; an RTX 3090 has 4");
  /* the bridge beats the same two cards over PCIe (host-staged: no 3090 P2P on stock drivers) */
  char *nv = xasprintf("%s/rigs/2x3090-nvlink.rig", getenv("GPURIG_TEST_DATA"));
  char *pcie = xasprintf("%s/rigs/2x3090-pcie.rig", getenv("GPURIG_TEST_DATA"));
  assert_float_equal(predicted_busbw(nv), 56.25 * 0.8, 1e-6);
  assert_true(predicted_busbw(pcie) < 31.5);
  free(nv);
  free(pcie);
  /* the review's repro: an HGX board written as a mesh */
  struct gr_err err = {0};
  char *path = xasprintf("%s/repro/bug-nvswitch-mesh.rig", getenv("GPURIG_TEST_DATA"));
  assert_int_equal(gr_load_rig(path, &t, &err), -1);
  char *want = xasprintf("%s:5:1: gpu0 would have 84 NVLinks; an A100 SXM4 40GB has 12 (an HGX board joins GPUs "
                         "through NVSwitches: write nvswitch gpu0-gpu7)", path);
  assert_string_equal(err.msg, want);
  free(want);
  free(path);
}

/* compare --gpu on a rig with NVLink: fabric members take the new model's
 * links, direct links it cannot carry go (with a warning), a model without
 * NVLink drops both. */
static void replaced_gpus_keep_links_consistent(void **state)
{
  struct gr_topo t;
  struct gr_err err = {0};
  (void)state;
  assert_int_equal(gr_load_rig("gigabyte-t181-g20", &t, &err), 0);
  assert_int_equal(gr_rig_replace_gpus(&t, "V100 SXM2 32GB", &err), 0);
  assert_int_equal(t.ngpulinks, 6);
  assert_float_equal(t.gpulinks[0].bw_gbps, 50, 1e-9);
  assert_int_equal(t.nwarnings, 1); /* its price left out (replaced_gpus_drop_the_price) */
  assert_int_equal(gr_rig_replace_gpus(&t, "RTX 3090", &err), 0); /* 6 links per GPU, a 3090 has 4 */
  assert_int_equal(t.ngpulinks, 0);
  assert_int_equal(t.nwarnings, 2);
  assert_non_null(strstr(t.warnings[1], "direct NVLinks are dropped"));
  gr_topo_free(&t);
  parse_ok(HEAD "gpu 8 \"A100 SXM4 40GB\" rc0\nnvswitch 6 gpu0-gpu7\n", &t);
  assert_int_equal(gr_rig_replace_gpus(&t, "H100 SXM5", &err), 0);
  assert_int_equal(t.nfabrics, 1);
  assert_int_equal(t.fabrics[0].gpulink_gen, 4);
  assert_int_equal(t.fabrics[0].members[3].links, 18);
  assert_float_equal(t.fabrics[0].members[3].gbps, 450, 1e-9);
  assert_int_equal(gr_rig_replace_gpus(&t, "RTX 4090", &err), 0);
  assert_int_equal(t.nfabrics, 0);
  gr_topo_free(&t);
}

/* The AWS p4d rig (direct devices, an nvswitch line) gives the levels of the
 * machine's own hwloc capture. */
static void p4d_rig_matches_its_capture(void **state)
{
  struct gr_machine rig, xml;
  struct gr_err err = {0};
  char l1[16], l2[16];
  (void)state;
  char *rp = xasprintf("%s/rigs/aws-p4d.rig", getenv("GPURIG_TEST_DATA"));
  char *xp = xasprintf("%s/hwloc-aws/p4d.xml", getenv("GPURIG_TEST_DATA"));
  struct gr_source rs = {.kind = GR_SRC_RIG, .path = rp}, xs = {.kind = GR_SRC_XML, .path = xp};
  if (gr_machine_open(&rs, GR_MACHINE_PREDICT, &rig, &err) != 0 || gr_machine_open(&xs, GR_MACHINE_PREDICT, &xml, &err) != 0)
    fail_msg("%s", err.msg);
  const struct gr_topo *a = &rig.topo, *b = &xml.topo;
  assert_int_equal(a->ngpus, b->ngpus);
  assert_int_equal(a->nnics, b->nnics);
  for (size_t g = 0; g < a->ngpus; g++) {
    for (size_t h = 0; h < a->ngpus; h++)
      assert_string_equal(tu_level(&rig.analysis, (int)g, (int)h, l1), tu_level(&xml.analysis, (int)g, (int)h, l2));
    for (size_t n = 0; n < a->nnics; n++)
      assert_string_equal(level_of(&rig.analysis, a->gpus[g], a->nics[n], l1),
                          level_of(&xml.analysis, b->gpus[g], b->nics[n], l2));
  }
  assert_float_equal(rig.prediction.best.busbw_gbps, xml.prediction.best.busbw_gbps, 1e-9);
  gr_machine_close(&rig);
  gr_machine_close(&xml);
  free(rp);
  free(xp);
}

/* compare --gpu "V100 SXM2 32GB" gigabyte-t181-g20 showed 16 USD/GiB: the
 * 2000 USD bought 16 GB cards. Other cards drop the price (kept as
 * own_price, with a warning); the rig's own cards keep it. */
static void replaced_gpus_drop_the_price(void **state)
{
  struct gr_topo t;
  struct gr_err err = {0};
  (void)state;
  assert_int_equal(gr_load_rig("gigabyte-t181-g20", &t, &err), 0);
  assert_int_equal(gr_rig_replace_gpus(&t, "V100 SXM2 16GB", &err), 0); /* its own cards */
  assert_float_equal(t.rig->price, 2000, 1e-9);
  assert_float_equal(t.rig->own_price, 0, 1e-9);
  assert_int_equal(t.nwarnings, 0);
  assert_int_equal(gr_rig_replace_gpus(&t, "V100 SXM2 32GB", &err), 0);
  assert_float_equal(t.rig->price, 0, 1e-9);
  assert_float_equal(t.rig->own_price, 2000, 1e-9);
  assert_int_equal(t.nwarnings, 1);
  assert_non_null(strstr(t.warnings[0], "the rig's price (2000 USD) is for its own cards"));
  gr_topo_free(&t);
  /* compare reads the same: no price per GiB of VRAM for the new cards */
  struct gr_judged *js;
  char *rigs[] = {"gigabyte-t181-g20"};
  assert_int_equal(gr_compare_open(rigs, 1, "V100 SXM2 32GB", NULL, 0, &js, &err), 0);
  assert_float_equal(js[0].vram_gib, 128, 1e-9);
  assert_float_equal(gr_compare_price_per_gib(&js[0]), 0, 1e-9);
  gr_compare_close(js, 1);
  assert_int_equal(gr_compare_open(rigs, 1, NULL, NULL, 0, &js, &err), 0);
  assert_float_equal(gr_compare_price_per_gib(&js[0]), 2000.0 / 64, 1e-9);
  gr_compare_close(js, 1);
}

/* compare --job ranks by the job's speed: rigs where it fits first, each
 * class fastest first, speeds within 1% (and no speed at all) tied; the
 * order shown follows, the training rank breaking ties. */
static void job_rank_by_speed(void **state)
{
  (void)state;
  struct gr_judged js[5];
  memset(js, 0, sizeof(js));
  static const struct {
    bool fits;
    double tps;
    int training_rank, want;
  } in[5] = {{true, 3489, 1, 1}, {true, 3489.0 * 0.995, 4, 1}, {true, 4000, 3, 0}, {false, 9000, 2, 4}, {false, 0, 5, 5}};
  for (int i = 0; i < 5; i++) {
    js[i].job = true;
    js[i].job_fits = in[i].fits;
    js[i].job_tps = in[i].tps;
    js[i].rank = in[i].training_rank;
    snprintf(js[i].name, sizeof(js[i].name), "rig%d", i);
  }
  gr_compare_rank_job(js, 5);
  assert_int_equal(js[2].job_rank, 1); /* 4000: the fastest that fits */
  assert_int_equal(js[0].job_rank, 2); /* 3489 and 3472: within 1%, one rank */
  assert_int_equal(js[1].job_rank, 2);
  assert_true(gr_compare_job_tied(&js[0], &js[1]));
  assert_int_equal(js[3].job_rank, 4); /* does not fit: after every rig that fits, however fast */
  assert_int_equal(js[4].job_rank, 5);
  const struct gr_judged **order = gr_compare_order(js, 5);
  assert_ptr_equal(order[0], &js[2]);
  assert_ptr_equal(order[3], &js[3]);
  free(order);
  /* no speed predicted (a diffusion job): fit alone ranks */
  for (int i = 0; i < 5; i++)
    js[i].job_tps = 0;
  gr_compare_rank_job(js, 5);
  assert_int_equal(js[0].job_rank, 1);
  assert_int_equal(js[2].job_rank, 1);
  assert_int_equal(js[3].job_rank, 4);
  assert_int_equal(js[4].job_rank, 4);
}

/* The seed rigs' RAM and prices, as their seeds state them (each quoted in a
 * source line); where a seed is silent, none. The X10DRG seed's $1600 is the
 * server without its GPUs, so that rig has no price. */
static void seed_ram_and_prices(void **state)
{
  (void)state;
  static const struct {
    const char *name;
    unsigned ram_gib;   /* per socket, every socket */
    double price;
  } rigs[] = {{"wopr", 512, 0},           {"sys-4029gp-trt2", 192, 0},  {"gigabyte-t181-g20", 48, 2000},
              {"tyan-s8030", 512, 0},     {"sys-4028gr-tr-x10drg", 0, 0}, {"tinybox-red", 0, 15000},
              {"tinybox-green", 0, 25000}, {"gigabyte-g482", 0, 0},       {"asus-esc4000", 0, 0}};
  for (size_t i = 0; i < sizeof(rigs) / sizeof(rigs[0]); i++) {
    struct gr_topo t;
    struct gr_err err = {0};
    if (gr_load_rig(rigs[i].name, &t, &err) != 0)
      fail_msg("%s: %s", rigs[i].name, err.msg);
    for (size_t k = 0; k < t.npackages; k++)
      if (t.packages[k].mem_bytes != (uint64_t)rigs[i].ram_gib << 30)
        fail_msg("%s: socket %zu has %llu bytes", rigs[i].name, k, (unsigned long long)t.packages[k].mem_bytes);
    if (t.rig->price != rigs[i].price)
      fail_msg("%s: price %g", rigs[i].name, t.rig->price);
    if (rigs[i].ram_gib && !strstr(t.rig->notes, "RAM:"))
      fail_msg("%s: no source line for its RAM", rigs[i].name);
    gr_topo_free(&t);
  }
}

/* A cluster's statements, their errors, and what the inter-node prediction
 * makes of them: NCCL's GPUDirect RDMA rule, the NIC's slot, the fabric. */
static void cluster_of_text(const char *text, struct gr_cluster_prediction *c)
{
  struct gr_topo t;
  struct gr_analysis a;
  struct gr_prediction p;
  struct gr_err err = {0};
  if (gr_rig_parse("c.rig", text, strlen(text), &t, &err) != 0)
    fail_msg("%s", err.msg);
  gr_analyze(&t, &a);
  gr_predict(&t, &a, &p);
  gr_cluster_predict(&t, &a, &p, t.cluster, 0, c);
  gr_prediction_free(&p);
  gr_analysis_free(&a);
  gr_topo_free(&t);
}

#define NODE HEAD "gpu 2 \"A100 SXM4 40GB\" sw0\nswitch sw0 rc0 gen4\nnvswitch gpu0-gpu1\n"

static void cluster_statements(void **state)
{
  (void)state;
  struct gr_cluster_prediction c;
  /* a 200 Gb/s NIC below the GPUs' switch: PIX, GDR on, the ring at the NIC rate */
  cluster_of_text(NODE "nic ib0 \"ConnectX-6 VPI HDR\" sw0 gen4 x16\nnodes 4\n", &c);
  assert_int_equal(c.nodes, 4);
  assert_true(c.gdr && c.gdr_read);
  assert_true(fabs(c.nic_gbps - 25.0) < 1e-9);
  assert_true(c.busbw_gbps > 20 && c.busbw_gbps < 25);
  /* the same NIC on the root complex: PHB, farther than NCCL's default PXB */
  cluster_of_text(NODE "nic ib0 \"ConnectX-6 VPI HDR\" rc0 gen4 x16\nnodes 4\n", &c);
  assert_false(c.gdr);
  assert_non_null(strstr(c.gdr_why, "farther than PXB"));
  cluster_of_text(NODE "nic ib0 \"ConnectX-6 VPI HDR\" rc0 gen4 x16\nnodes 4\ngdr-level PHB\n", &c);
  assert_true(c.gdr);
  cluster_of_text(NODE "nic ib0 \"ConnectX-6 VPI HDR\" sw0 gen4 x16\nnodes 4\npeermem no\n", &c);
  assert_false(c.gdr);
  assert_non_null(strstr(c.gdr_why, "nvidia_peermem"));
  /* a 100 Gb/s NIC in a Gen3 x8 slot: the slot (7.9 GB/s) bounds it, not the port (12.5) */
  cluster_of_text(NODE "nic ib0 \"ConnectX-4 100Gb\" sw0 slot gen3 x8\nnodes 2\n", &c);
  assert_true(c.nic_gbps < 8 && c.port_gbps > 12);
  assert_non_null(strstr(c.nic_bound, "narrower"));
  /* a 2:1 fat tree halves the network's share; `speed` gives an uncatalogued NIC its rate */
  cluster_of_text(NODE "nic ib0 \"Some NIC\" sw0 gen4 x16 speed 200\nnodes 4\nfabric fat-tree oversubscription 2:1\n",
                  &c);
  assert_true(fabs(c.inter_busbw_gbps - 25.0 * gr_calib()->net_ring_eff / 2) < 1e-9);
  cluster_of_text(NODE "nic ib0 \"Some NIC\" sw0 gen4 x16\nnodes 4\n", &c);
  assert_true(c.busbw_gbps == 0 && c.nic_gbps == 0);
  /* GeForce: no GPUDirect RDMA on stock drivers, wherever the NIC sits */
  cluster_of_text(HEAD "switch sw0 rc0 gen4\ngpu 2 \"RTX 4090\" sw0\nnic ib0 \"ConnectX-6\" sw0 gen4 x16\nnodes 2\n", &c);
  assert_false(c.gdr);
  assert_non_null(strstr(c.gdr_why, "GeForce"));
  /* storage NICs do not count */
  cluster_of_text(NODE "nic ib0 \"ConnectX-6\" sw0 gen4 x16\nnic st0 \"ConnectX-6\" rc0 gen4 x16 storage\nnodes 2\n", &c);
  assert_int_equal(c.nics, 1);
  expect_error(HEAD "nodes 0\n", "bad.rig:4:7:", "expected a whole number from 1 to 4096");
  expect_error(HEAD "nodes\n", "bad.rig:4:1:", "expected: nodes N");
  expect_error(HEAD "fabric ring\n", "bad.rig:4:8:", "expected: fabric switch | fabric fat-tree");
  expect_error(HEAD "fabric fat-tree oversubscription 1:2\n", "bad.rig:4:34:", "expected an oversubscription");
  expect_error(HEAD "fabric fat-tree oversubscription x\n", "bad.rig:4:34:", "expected an oversubscription");
  expect_error(HEAD "peermem maybe\n", "bad.rig:4:9:", "expected on or off");
  expect_error(HEAD "gdr-level NV\n", "bad.rig:4:11:", "expected a GPUDirect RDMA level");
  expect_error(HEAD "nic ib0 \"CX6\" rc0 speed 0\n", "bad.rig:4:25:", "expected a whole number from 1 to 3200");
  expect_error(HEAD "gpu \"RTX 3090\" rc0 storage\n", "bad.rig:4:20:", "unexpected \"storage\"");
}

/* The bundled cluster rigs of seed 003: 100 Gb/s NICs against 40 Gb/s. */
static void seed003_clusters(void **state)
{
  (void)state;
  struct gr_source s100 = {.kind = GR_SRC_RIG, .path = "t181-g20-cluster-100g"};
  struct gr_source s40 = {.kind = GR_SRC_RIG, .path = "t181-g20-cluster-40g"};
  struct gr_machine m100, m40;
  struct gr_err err = {0};
  assert_int_equal(gr_machine_open(&s100, GR_MACHINE_PREDICT, &m100, &err), 0);
  assert_int_equal(gr_machine_open(&s40, GR_MACHINE_PREDICT, &m40, &err), 0);
  assert_true(m100.clustered && m40.clustered);
  assert_int_equal(m100.cluster.nodes, 2);
  assert_true(fabs(m100.cluster.nic_gbps - 25.0) < 1e-9); /* 2x 100 Gb/s */
  assert_true(fabs(m40.cluster.nic_gbps - 10.0) < 1e-9);  /* 2x 40 Gb/s */
  assert_true(m100.cluster.busbw_gbps > 2 * m40.cluster.busbw_gbps);
  assert_false(m100.cluster.gdr); /* GPUs and NICs on their own root ports: PHB */
  gr_machine_close(&m100);
  gr_machine_close(&m40);
}

/* psu and circuit lines: what they state is kept, what they leave out stays
 * unknown (0 / NULL), and a bad value is refused at its line and column with
 * what was expected or the word that was meant. */
static void power_statements(void **state)
{
  (void)state;
  const char *text = HEAD "gpu \"RTX 3090\" rc0\n"
                     "psu main 2000 rail-amps 40,40,30 80plus gold input 120\n"
                     "psu spare 1600\n"
                     "circuit wall 120 15 psus main,spare\n";
  struct gr_topo t;
  struct gr_err err = {0};
  if (gr_rig_parse("ok.rig", text, strlen(text), &t, &err) != 0)
    fail_msg("%s", err.msg);
  const struct gr_rig_meta *m = t.rig;
  assert_int_equal(m->npsus, 2);
  assert_string_equal(m->psus[0].name, "main");
  assert_float_equal(m->psus[0].watts, 2000, 0);
  assert_int_equal(m->psus[0].rails, 3);
  assert_float_equal(m->psus[0].rail_amps[2], 30, 0);
  assert_string_equal(m->psus[0].level, "gold");
  assert_int_equal(m->psus[0].input_v, 120);
  assert_int_equal(m->psus[0].line, 5);
  assert_int_equal(m->psus[1].rails, 0);
  assert_null(m->psus[1].level);
  assert_int_equal(m->psus[1].input_v, 0);
  assert_int_equal(m->ncircuits, 1);
  assert_float_equal(m->circuits[0].amps, 15, 0);
  assert_string_equal(m->circuits[0].psus, "main,spare");
  gr_topo_free(&t);
  expect_error(HEAD "psu main\n", "bad.rig:4:1:", "expected: psu NAME WATTS");
  expect_error(HEAD "psu main lots\n", "bad.rig:4:10:", "expected a number");
  expect_error(HEAD "psu main 2000 80plus golden\n", "bad.rig:4:22:", "80plus must be one of");
  expect_error(HEAD "psu main 2000 rials 2\n", "bad.rig:4:15:", "did you mean 'rails'?");
  expect_error(HEAD "psu main 2000 rails 2 rail-amps 40,40\n", "bad.rig:4:23:", "a psu line takes");
  expect_error(HEAD "psu main 2000 rail-amps 40,x\n", "bad.rig:4:25:", "expected a number, got \"x\"");
  expect_error(HEAD "psu main 2000 input 110\n", "bad.rig:4:21:", "input must be 120 or 230");
  expect_error(HEAD "psu main 2000 80plus gold efficiency 90\n", "bad.rig:4:27:", "a psu line takes");
  expect_error(HEAD "psu a 1000\npsu a 800\n", "bad.rig:5:5:", "a second psu named \"a\"");
  expect_error(HEAD "circuit wall 120 15 psus main\n", "bad.rig:4:26:", "no psu named \"main\" above this line");
  expect_error(HEAD "circuit wall 12 15\n", "bad.rig:4:14:", "a circuit's volts must be from 100 to 480");
  expect_error(HEAD "psuu a 1000\n", "bad.rig:4:1:", "unknown statement \"psuu\"; did you mean 'psu'?");
}

/* The budget of a rig text: parsed, budgeted, the finding with id (NULL
 * if none) returned through *found (valid until gr_power_free). */
static const struct gr_finding *budget_of(const char *text, struct gr_topo *t, struct gr_power_budget *b,
                                          const char *id)
{
  struct gr_err err = {0};
  if (gr_rig_parse("p.rig", text, strlen(text), t, &err) != 0)
    fail_msg("%s", err.msg);
  assert_int_equal(gr_power_budget(t, b), 0);
  for (size_t i = 0; i < b->findings.n; i++)
    if (strcmp(b->findings.v[i].id, id) == 0)
      return &b->findings.v[i];
  return NULL;
}

static const struct gr_finding *budget_of_find(const struct gr_power_budget *b, const char *id)
{
  for (size_t i = 0; i < b->findings.n; i++)
    if (strcmp(b->findings.v[i].id, id) == 0)
      return &b->findings.v[i];
  return NULL;
}

#define P4 "rig \"p\"\ncpu c0 \"AMD EPYC 7282 16-Core Processor\"\nrootcomplex rc0 c0 gen4\ngpu 4 \"RTX 3090\" rc0\n"

/* 4x RTX 3090 (350 W board power, NVIDIA) and an EPYC 7282 (120 W TDP,
 * AMD): 1520 W sustained. On one 2000 W gold single-rail PSU at 120 V:
 * 480 W headroom, efficiency at 76% load 90 + (87 - 90) x 0.26 / 0.5 =
 * 88.44% (80 PLUS gold, 115 V), wall 1718.7 W, over a 15 A / 120 V
 * circuit's continuous 1440 W; on 1200 W, overloaded, and the fix is a
 * power limit of floor((0.9 x 1200 - 120) / 4) = 240 W saving 440 W. */
static void power_budget(void **state)
{
  (void)state;
  struct gr_topo t;
  struct gr_power_budget b;
  const struct gr_finding *f = budget_of(P4, &t, &b, "power.unknown");
  assert_non_null(f);
  assert_int_equal(f->sev, GR_SEV_INFO);
  assert_float_equal(b.sustained_w, 1520, 1e-9);
  gr_power_free(&b);
  gr_topo_free(&t);

  f = budget_of(P4 "psu gw 2000 rails 1 80plus gold input 120\ncircuit wall 120 15\n", &t, &b, "power.circuit");
  assert_int_equal(b.npsus, 1);
  assert_float_equal(b.psus[0].sustained_w, 1520, 1e-9);
  assert_float_equal(b.psus[0].headroom_w, 480, 1e-9);
  assert_float_equal(b.psus[0].transient_w, 4 * 378 + 120, 1e-9); /* ASCII.jp's PCAT peak, 100 ms */
  assert_float_equal(b.psus[0].wall_w, 1520 / 0.8844, 1e-6);
  assert_float_equal(b.circuits[0].limit_w, 1440, 1e-9);
  assert_non_null(f);
  assert_int_equal(f->sev, GR_SEV_FAIL);
  assert_non_null(strstr(f->fix, "230 V"));
  assert_null(budget_of_find(&b, "power.psu-overload"));
  /* seed 004 before its fix: one rail for four 3090s warns, naming the PSU,
   * both loads and the fix */
  f = budget_of_find(&b, "power.single-rail");
  assert_non_null(f);
  assert_int_equal(f->sev, GR_SEV_WARN);
  assert_non_null(strstr(f->text, "PSU gw (2000 W)"));
  assert_non_null(strstr(f->text, "1520 W sustained and 1632 W over 100 ms"));
  assert_non_null(strstr(f->fix, "a rail of its own"));
  assert_int_equal(b.psus[0].gpus_per_rail, 4);
  assert_float_equal(b.psus[0].rail_w, 1400, 1e-9);
  gr_power_free(&b);
  gr_topo_free(&t);

  /* after the fix: ten rails, one GPU each; 40 A rails (480 W) carry a
   * 3090's 350 W and its 378 W peak; 25 A rails (300 W) do not */
  f = budget_of(P4 "psu gw 2000 rail-amps 40,40,40,40,40,40,40,40,40,40\n", &t, &b, "power.rail-overload");
  assert_null(f);
  assert_null(budget_of_find(&b, "power.rail-transient"));
  assert_null(budget_of_find(&b, "power.single-rail"));
  assert_int_equal(b.psus[0].gpus_per_rail, 1);
  assert_float_equal(b.psus[0].rail_w, 350, 1e-9);
  assert_float_equal(b.psus[0].rail_peak_w, 378, 1e-9);
  assert_float_equal(b.psus[0].rail_limit_w, 480, 1e-9);
  gr_power_free(&b);
  gr_topo_free(&t);
  f = budget_of(P4 "psu gw 2000 rail-amps 25,25\n", &t, &b, "power.rail-overload");
  assert_non_null(f); /* two GPUs a rail: 700 W on 300 W */
  assert_int_equal(f->sev, GR_SEV_FAIL);
  assert_non_null(strstr(f->text, "2 GPUs, 700 W sustained, over the rail's 300 W (25 A at 12 V)"));
  gr_power_free(&b);
  gr_topo_free(&t);
  f = budget_of(P4 "psu gw 2000 rail-amps 30,30,30,30\n", &t, &b, "power.rail-transient");
  assert_non_null(f); /* 350 W within 360 W, 378 W over it */
  assert_int_equal(f->sev, GR_SEV_WARN);
  gr_power_free(&b);
  gr_topo_free(&t);

  /* a power limit caps the sustained draw, not the published peaks */
  struct gr_err err = {0};
  if (gr_rig_parse("p.rig", P4 "psu gw 2000 rails 1\n", strlen(P4 "psu gw 2000 rails 1\n"), &t, &err) != 0)
    fail_msg("%s", err.msg);
  assert_int_equal(gr_power_budget_at(&t, 280, &b), 0);
  assert_float_equal(b.gpu_w, 4 * 280, 1e-9);
  assert_float_equal(b.gpu_peak_w, 4 * 378, 1e-9);
  assert_float_equal(b.psus[0].sustained_w, 4 * 280 + 120, 1e-9);
  gr_power_free(&b);
  gr_topo_free(&t);

  f = budget_of(P4 "psu small 1200\n", &t, &b, "power.psu-overload");
  assert_non_null(f);
  assert_int_equal(f->sev, GR_SEV_FAIL);
  assert_non_null(strstr(f->text, "small"));
  assert_non_null(strstr(f->fix, "nvidia-smi -pl 240 on each GPU (saves 440 W)"));
  assert_float_equal(b.psus[0].wall_w, -1, 0); /* no efficiency stated */
  gr_power_free(&b);
  gr_topo_free(&t);

  /* 4x RTX 5090: 575 W board power, 901 W peaks under 1 ms (Igor's Lab):
   * 2420 W sustained on 2600 W, 3724 W at the peaks: a warning. */
  f = budget_of("rig \"p\"\ncpu c0 \"EPYC 7282\"\nrootcomplex rc0 c0 gen4\ngpu 4 \"RTX 5090\" rc0\npsu big 2600\n", &t,
                &b, "power.psu-transient");
  assert_non_null(f);
  assert_int_equal(f->sev, GR_SEV_WARN);
  assert_float_equal(b.psus[0].transient_w, 3724, 1e-9);
  gr_power_free(&b);
  gr_topo_free(&t);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(bad_rigs_name_file_line_col),
      cmocka_unit_test(power_statements),
      cmocka_unit_test(power_budget),
      cmocka_unit_test(every_bundled_rig_loads_and_matches_its_description),
      cmocka_unit_test(xgmi_links_print_as_rocm_smi_does),
      cmocka_unit_test(calibration_within_15_percent),
      cmocka_unit_test(seed_ranking_for_training),
      cmocka_unit_test(nvlink_makes_tensor_parallel_fast),
      cmocka_unit_test(nccl_default_vs_p2p_level),
      cmocka_unit_test(group_rings_on_demand),
      cmocka_unit_test(many_source_lines_parse),
      cmocka_unit_test(device_cap_names_its_line),
      cmocka_unit_test(million_line_rigs),
      cmocka_unit_test(element_and_nvlink_caps),
      cmocka_unit_test(numa_nodes_per_socket),
      cmocka_unit_test(numa_unknown),
      cmocka_unit_test(multi_function_nic),
      cmocka_unit_test(direct_devices),
      cmocka_unit_test(nic_numbering),
      cmocka_unit_test(device_line_options),
      cmocka_unit_test(nvlink_none_and_cpu_lists),
      cmocka_unit_test(nvswitch_fabric),
      cmocka_unit_test(nvlink_counts_from_the_catalog),
      cmocka_unit_test(replaced_gpus_keep_links_consistent),
      cmocka_unit_test(replaced_gpus_drop_the_price),
      cmocka_unit_test(job_rank_by_speed),
      cmocka_unit_test(p4d_rig_matches_its_capture),
      cmocka_unit_test(seed_ram_and_prices),
      cmocka_unit_test(cluster_statements),
      cmocka_unit_test(seed003_clusters),
  };
  return cmocka_run_group_tests(tests, setup, NULL);
}
