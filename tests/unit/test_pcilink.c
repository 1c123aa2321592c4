#include <math.h>
#include <string.h>

#include "testutil.h"
#include "facts/data.h"
#include "load/loaders.h"

static void speeds_parse_in_both_kernel_formats(void **state)
{
  int gen = 0;
  (void)state;
  assert_int_equal(gr_pcie_parse_speed("8 GT/s", &gen), GR_SPEED_OK);
  assert_int_equal(gen, 3);
  assert_int_equal(gr_pcie_parse_speed("16.0 GT/s PCIe", &gen), GR_SPEED_OK);
  assert_int_equal(gen, 4);
  assert_int_equal(gr_pcie_parse_speed("2.5 GT/s PCIe", &gen), GR_SPEED_OK);
  assert_int_equal(gen, 1);
  assert_int_equal(gr_pcie_parse_speed("32.0 GT/s PCIe", &gen), GR_SPEED_OK);
  assert_int_equal(gen, 5);
  assert_int_equal(gr_pcie_parse_speed("Unknown speed", &gen), GR_SPEED_UNKNOWN);
  assert_int_equal(gr_pcie_parse_speed("9.9 GT/s", &gen), GR_SPEED_INVALID);
  assert_int_equal(gr_pcie_parse_speed("fast", &gen), GR_SPEED_INVALID);
  assert_int_equal(gr_pcie_parse_speed("8 GT/s PCIe extra", &gen), GR_SPEED_INVALID);
  assert_int_equal(gr_pcie_parse_speed("", &gen), GR_SPEED_INVALID);
}

static void widths_are_checked(void **state)
{
  int w = -1;
  (void)state;
  assert_true(gr_pcie_parse_width("16", &w));
  assert_int_equal(w, 16);
  assert_true(gr_pcie_parse_width("0", &w));
  assert_int_equal(w, 0);
  assert_false(gr_pcie_parse_width("x16", &w));
  assert_false(gr_pcie_parse_width("64", &w));
  assert_false(gr_pcie_parse_width("-1", &w));
}

static void bandwidths_follow_gen_width_and_encoding(void **state)
{
  (void)state;
  assert_true(fabs(gr_pcie_bw_gbps(3, 16) - 15.7538) < 0.001);
  assert_true(fabs(gr_pcie_bw_gbps(4, 16) - 31.5077) < 0.001);
  assert_true(fabs(gr_pcie_bw_gbps(5, 16) - 63.0154) < 0.001);
  assert_true(fabs(gr_pcie_bw_gbps(1, 16) - 4.0) < 0.001);   /* 8b/10b */
  assert_true(fabs(gr_pcie_bw_gbps(2, 8) - 4.0) < 0.001);
  assert_true(fabs(gr_pcie_nccl_gbps(3, 16) - 12.0) < 1e-9); /* NCCL's figures */
  assert_true(fabs(gr_pcie_nccl_gbps(4, 16) - 24.0) < 1e-9);
  assert_true(fabs(gr_pcie_nccl_gbps(5, 16) - 48.0) < 1e-9);
  assert_true(fabs(gr_pcie_nccl_gbps(4, 8) - 12.0) < 1e-9);
  assert_true(gr_pcie_bw_gbps(9, 16) == 0);
  assert_true(gr_pcie_bw_gbps(3, 0) == 0);
}

static void nccl_figure_from_a_bare_rate(void **state)
{
  (void)state;
  /* hwloc XML stores 15.753846 for Gen3 x16 (and Gen4 x8): NCCL counts 12 for both */
  assert_true(fabs(gr_pcie_nccl_from_bw(15.753846) - 12.0) < 0.01);
  assert_true(fabs(gr_pcie_nccl_from_bw(31.507692) - 24.0) < 0.01);
  assert_true(fabs(gr_pcie_nccl_from_bw(4.0) - 3.0) < 0.01); /* Gen1 x16, 8b/10b */
  assert_true(gr_pcie_nccl_from_bw(0) == 0);
}

static void aer_totals(void **state)
{
  uint64_t v = 0;
  (void)state;
  assert_true(gr_parse_aer_total("RxErr 3\nBadTLP 0\nTOTAL_ERR_COR 3\n", &v));
  assert_int_equal(v, 3);
  assert_true(gr_parse_aer_total("TOTAL_ERR_FATAL 0", &v));
  assert_int_equal(v, 0);
  assert_false(gr_parse_aer_total("RxErr 3\n", &v));
  assert_false(gr_parse_aer_total("TOTAL_ERR_COR lots\n", &v));
  assert_false(gr_parse_aer_total("TOTAL_ERR_COR -4\n", &v));
  assert_false(gr_parse_aer_total("", &v));
}

static void tables_report_file_and_line(void **state)
{
  struct gr_table t;
  struct gr_err err = {0};
  (void)state;
  const char ok[] = "# comment\na\tb\n1\t2\n\n# another\n3\t4\n";
  assert_int_equal(gr_table_parse("ok.tsv", ok, strlen(ok), &t, &err), 0);
  assert_int_equal(t.nrows, 2);
  assert_string_equal(gr_table_cell(&t, 1, (size_t)gr_table_col(&t, "b")), "4");
  assert_int_equal(t.lines[1], 6);
  assert_int_equal(gr_table_col(&t, "c"), -1);
  gr_table_free(&t);
  const char bad[] = "a\tb\n1\t2\n3\n";
  assert_int_equal(gr_table_parse("bad.tsv", bad, strlen(bad), &t, &err), -1);
  assert_string_equal(err.msg, "bad.tsv:3: 1 fields, expected 2 (tab-separated, as in the header)");
  const char bin[] = "a\tb\n1\0\t2\n";
  assert_int_equal(gr_table_parse("bin.tsv", bin, sizeof(bin) - 1, &t, &err), -1);
  assert_non_null(strstr(err.msg, "bin.tsv:2:"));
  assert_int_equal(gr_table_parse("empty.tsv", "", 0, &t, &err), -1);
  assert_non_null(strstr(err.msg, "no header"));
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(speeds_parse_in_both_kernel_formats),
      cmocka_unit_test(widths_are_checked),
      cmocka_unit_test(bandwidths_follow_gen_width_and_encoding),
      cmocka_unit_test(nccl_figure_from_a_bare_rate),
      cmocka_unit_test(aer_totals),
      cmocka_unit_test(tables_report_file_and_line),
  };
  return cmocka_run_group_tests(tests, tu_setup_data, NULL);
}
