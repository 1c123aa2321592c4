/* The HTML and Markdown build report (print/report/report_html.h): the diagram is
 * embedded without its XML declaration and namespace addresses and linked
 * from the Markdown; bench and burn JSON of any shape is drawn or skipped,
 * never a crash or "nan"; the shape checks tell the two outputs apart. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "analysis/machine.h"
#include "doctor/doctor.h"
#include "print/report/report_html.h"

static int setup(void **state)
{
  return tu_setup_data(state);
}

static void open_rig(struct gr_machine *m, const char *rig)
{
  struct gr_err err = {0};
  struct gr_source src = {.kind = GR_SRC_RIG, .path = rig};
  if (gr_machine_open(&src, GR_MACHINE_PREDICT, m, &err) != 0)
    fail_msg("%s: %s", rig, err.msg);
}

/* The printer's whole output; the caller frees it. */
static char *render(const struct gr_report_doc *doc, bool html, const char *svg_name)
{
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  assert_non_null(f);
  int rc = html ? gr_print_report_html(f, doc) : gr_print_report_markdown(f, doc, svg_name);
  assert_int_equal(rc, 0);
  fclose(f);
  return buf;
}

static void test_diagram(void **state)
{
  (void)state;
  struct gr_machine m;
  open_rig(&m, "wopr");
  const char *svg = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" "
                    "xmlns:xlink=\"http://www.w3.org/1999/xlink\" width=\"10\" height=\"10\"><rect width=\"4\" "
                    "height=\"4\"/></svg>\n";
  struct gr_report_doc doc = {.m = &m, .diagram_svg = svg};
  char *html = render(&doc, true, NULL);
  assert_non_null(strstr(html, "<div class=\"diagram\">\n<svg width=\"10\" height=\"10\"><rect"));
  assert_null(strstr(html, "<?xml"));
  assert_null(strstr(html, "http:"));
  assert_null(strstr(html, "not available in this build"));
  char *md = render(&doc, false, "my rig-wiring.svg");
  assert_non_null(strstr(md, "![block diagram](my%20rig-wiring.svg)\n"));
  free(md);
  md = render(&doc, false, NULL);
  assert_non_null(strstr(md, "block diagram: written only beside a --markdown FILE"));
  free(md);
  free(html);
  doc.diagram_svg = NULL;
  html = render(&doc, true, NULL);
  assert_non_null(strstr(html, "<p>block diagram: not available in this build</p>"));
  assert_non_null(strstr(html, "<tr data-gpu=\"GPU6\">"));
  assert_null(strstr(html, "data-gpu=\"GPU7\""));
  assert_non_null(strstr(html, "gpurig doctor was not run."));
  free(html);
  gr_machine_close(&m);
}

/* JSON that passes the shape checks but holds the wrong types, huge and
 * negative numbers, and lists of the wrong things everywhere else. */
static const char weird_bench[] =
    "{\"backend\": \"cuda\", \"config\": 7, \"gpus\": [1, {\"index\": -3, \"pci_bus_id\": 5}, null],"
    " \"results\": [7, null, {\"test\": \"p2p\", \"engine\": \"ce\", \"src_gpu\": 0, \"dst_gpu\": 99,"
    "  \"median_gbps\": 1e308}, {\"test\": \"h2d\", \"median_gbps\": -5, \"limit_gbps\": \"x\", \"status\": 3},"
    "  {\"test\": \"d2h\", \"median_gbps\": 1e-320, \"dst_gpu\": 0, \"engine\": \"ce\"},"
    "  {\"test\": \"latency\", \"median_us\": 1e300, \"src_gpu\": 1}, {\"test\": {}, \"status\": \"odd\"}],"
    " \"allreduce\": {\"sizes\": [{\"size_bytes\": 1e300, \"busbw_gbps\": 2}, {\"size_bytes\": -1, \"busbw_gbps\": 1},"
    "  {\"size_bytes\": 4096, \"busbw_gbps\": 1e300}, 5], \"predicted_busbw_gbps\": \"x\"},"
    " \"findings\": [{\"severity\": \"dreadful\", \"id\": 4, \"text\": null}, 3]}";
static const char weird_burn[] =
    "{\"gpus\": [3, {\"index\": 1e9, \"bus_id\": [], \"throttle_s\": {\"thermal\": \"x\", \"power\": 1e300}},"
    " {\"index\": 0, \"bus_id\": \"0000:06:00.0\", \"lost\": true, \"gemm_tflops\": -1}],"
    " \"verdicts\": [{\"severity\": \"fail\", \"subject\": \"GPU0 0000:06:00.0\", \"message\": \"<b>&\"}, \"x\"],"
    " \"allreduce\": {\"stalls\": 5, \"p50_ms\": \"fast\"}, \"ran_s\": -1e308}";

static void test_weird_json(void **state)
{
  (void)state;
  struct gr_machine m;
  open_rig(&m, "wopr");
  json_error_t je;
  json_t *bench = json_loads(weird_bench, 0, &je), *burn = json_loads(weird_burn, 0, &je);
  assert_non_null(bench);
  assert_non_null(burn);
  const char *why = NULL;
  assert_true(gr_report_bench_ok(bench, &why));
  assert_true(gr_report_burn_ok(burn, &why));
  struct gr_report_doc doc = {.m = &m, .bench = bench, .burn = burn, .bench_name = "b.json", .burn_name = "c.json"};
  for (int html = 0; html < 2; html++) {
    char *out = render(&doc, html, NULL);
    assert_null(strstr(out, "nan"));
    assert_null(strstr(out, "inf "));
    assert_non_null(strstr(out, html ? "&lt;b&gt;&amp;" : "\\<b\\>\\&"));
    assert_non_null(strstr(out, html ? "<h2 id=\"burn\">" : "## Burn-in"));
    free(out);
  }
  json_decref(bench);
  json_decref(burn);
  gr_machine_close(&m);
}

static void test_shapes(void **state)
{
  (void)state;
  static const struct {
    const char *json;
    bool bench, burn;
    const char *why;
  } cases[] = {
      {"{\"backend\": \"cuda\", \"results\": []}", true, false, "is gpurig bench --json output, not burn's"},
      {"{\"gpus\": [], \"verdicts\": []}", false, true, "is gpurig burn --json output, not bench's"},
      {"[1, 2]", false, false, "is not a JSON object"},
      {"{\"results\": {}}", false, false, "no \"results\" array"},
      {"{\"gpus\": [], \"verdicts\": 3}", false, false, "no \"gpus\" and \"verdicts\" arrays"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    json_error_t je;
    json_t *j = json_loads(cases[i].json, 0, &je);
    const char *why_bench = "", *why_burn = "";
    assert_non_null(j);
    assert_int_equal(gr_report_bench_ok(j, &why_bench), cases[i].bench);
    assert_int_equal(gr_report_burn_ok(j, &why_burn), cases[i].burn);
    if (!cases[i].bench && !strstr(why_bench, cases[i].why) && !cases[i].burn && !strstr(why_burn, cases[i].why))
      fail_msg("case %zu: '%s' / '%s', expected '%s'", i, why_bench, why_burn, cases[i].why);
    if (cases[i].bench && !strstr(why_burn, cases[i].why))
      fail_msg("case %zu: burn says '%s', expected '%s'", i, why_burn, cases[i].why);
    if (cases[i].burn && !strstr(why_bench, cases[i].why))
      fail_msg("case %zu: bench says '%s', expected '%s'", i, why_bench, cases[i].why);
    json_decref(j);
  }
}

/* doctor's findings are in the report, with their fixes. */
static void test_doctor(void **state)
{
  (void)state;
  struct gr_machine m;
  struct gr_doctor_report r;
  struct gr_doctor_opts o = {.expect_gpus = 8, .xid_window_h = -1};
  open_rig(&m, "wopr");
  gr_doctor_run(&m, &o, &r);
  struct gr_report_doc doc = {.m = &m, .doctor = &r};
  char *html = render(&doc, true, NULL);
  assert_non_null(strstr(html, "<td class=\"sev-fail\">fail</td><td class=\"id\">gpu.count</td>"));
  assert_non_null(strstr(html, "<td class=\"sev-info\">info</td><td class=\"id\">driver.p2p</td>"));
  assert_non_null(strstr(html, "P2P-enabled open kernel modules")); /* its fix */
  free(html);
  gr_doctor_report_free(&r);
  gr_machine_close(&m);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_diagram),
      cmocka_unit_test(test_weird_json),
      cmocka_unit_test(test_shapes),
      cmocka_unit_test(test_doctor),
  };
  return cmocka_run_group_tests(tests, setup, NULL);
}
