/* libFuzzer target: the HTML and Markdown report's readers of saved
 * `gpurig bench --json` and `gpurig burn --json` output (src/print/report/report_doc.c):
 * any JSON that passes the shape checks is drawn by both printers, as the
 * wopr rig's report, and must neither crash nor leak. */
#include "fuzz_common.h"

#include "analysis/machine.h"
#include "print/report/report_html.h"

static void render(const struct gr_report_doc *doc)
{
  char *buf = NULL;
  size_t len = 0;
  for (int html = 0; html < 2; html++) {
    FILE *f = open_memstream(&buf, &len);
    if (!f)
      abort();
    html ? gr_print_report_html(f, doc) : gr_print_report_markdown(f, doc, "x-wiring.svg");
    fclose(f);
    free(buf);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  static struct gr_machine m;
  static bool opened;
  struct gr_err err = {0};
  json_error_t je;
  const char *why;
  if (!opened) { /* one machine for every input: its load is not what is tested */
    struct gr_source src = {.kind = GR_SRC_RIG, .path = "wopr"};
    if (gr_machine_open(&src, GR_MACHINE_PREDICT, &m, &err) != 0)
      abort();
    opened = true;
  }
  json_t *j = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, &je);
  if (!j)
    return 0;
  struct gr_report_doc doc = {.m = &m, .diagram_svg = "<svg xmlns=\"http://www.w3.org/2000/svg\"></svg>"};
  if (gr_report_bench_ok(j, &why)) {
    doc.bench = j;
    render(&doc);
  }
  if (gr_report_burn_ok(j, &why)) {
    doc.bench = NULL;
    doc.burn = j;
    render(&doc);
  }
  json_decref(j);
  return 0;
}
