/* Rig files: the parser's errors, the seed rigs, the calibration cases and
 * the compare ranking the seed authors would give. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "facts/catalog.h"
#include "facts/data.h"
#include "analysis/predict.h"
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
  expect_error(HEAD "gpu \"RTX 3090\" rc9\n", "bad.rig:4:16:", "undefined parent 'rc9'");
  expect_error(HEAD "switch a b\nswitch b a\ngpu \"RTX 3090\" a\n", "bad.rig:4:10:", "cycle");
  expect_error(HEAD "switch rc0 rc0\n", "bad.rig:4:8:", "duplicate name 'rc0' (first defined at line 3, column 13)");
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
  expect_error(HEAD "gpu \"RTX 3090\" rc0\nnvlink gpu0 gpu7\n", "bad.rig:5:8:", "undefined GPU 'gpu7'");
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
  assert_int_equal(p.pairs[1].best, GR_XFER_NVLINK);
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
  assert_int_equal(p.pairs[1].nccl, GR_XFER_HOST);
  assert_int_equal(p.pairs[1].best, GR_XFER_P2P);
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
  assert_non_null(strstr(p.best.bottleneck, "host memory"));
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
    gr_predict_groups(&p);
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
  /* meshes of 64 GPUs are 2016 pairs each: the 9th goes over 16384 */
  assert_int_equal(parse_generated(HEAD "gpu 64 \"A100 SXM4 40GB\" rc0\n", "nvlink mesh gpu0-gpu63 # %zu\n", 9, &t, &err), -1);
  assert_true(str_starts_with(err.msg, "big.rig:13:8: too many NVLinks (at most 16384"));
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

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(bad_rigs_name_file_line_col),
      cmocka_unit_test(every_bundled_rig_loads_and_matches_its_description),
      cmocka_unit_test(calibration_within_15_percent),
      cmocka_unit_test(seed_ranking_for_training),
      cmocka_unit_test(nvlink_makes_tensor_parallel_fast),
      cmocka_unit_test(nccl_default_vs_p2p_level),
      cmocka_unit_test(group_rings_on_demand),
      cmocka_unit_test(many_source_lines_parse),
      cmocka_unit_test(device_cap_names_its_line),
      cmocka_unit_test(million_line_rigs),
      cmocka_unit_test(element_and_nvlink_caps),
  };
  return cmocka_run_group_tests(tests, setup, NULL);
}
