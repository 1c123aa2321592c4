#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "facts/data.h"
#include "load/loaders.h"
#include "print/print.h"

#define EXAMPLE_XML "examples/nvidiaDGX2.xml"

static void report_usage(void)
{
  printf("usage: gpurig report [--root DIR | --input FILE.xml | --rig RIG [--gpu MODEL]] [--json]\n"
         "\n"
         "An overview of the machine: GPUs and their links, the GPU matrix, P2P hives and\n"
         "findings. This is what a bare `gpurig` runs. On a machine without GPUs it says so,\n"
         "then shows a bundled real topology (an NVIDIA DGX-2H from hwloc's test suite),\n"
         "labelled as an example.\n"
         "\n"
         "  --root DIR        replay a gathered tree instead of this machine\n"
         "  --input FILE.xml  read an hwloc XML file\n"
         "  --rig RIG         a machine described in a rig file (docs/rig-format.md)\n"
         "  --gpu MODEL       with --rig: put this catalog GPU in every GPU slot\n"
         "  --json            {\"machine_report\": {...}, \"example\": {...} or null} (docs/json.md)\n"
         "\n"
         "Exit status: 0 ok, 1 a finding is a warning, 2 bad input, 3 could not run.\n");
}

static void print_report_text(const struct gr_topo *t, const struct gr_analysis *a, const struct gr_prediction *p)
{
  gr_print_summary(stdout, t, a);
  gr_print_gpu_table(stdout, t, a);
  gr_print_matrix(stdout, t, a);
  gr_print_hives(stdout, t, a);
  gr_print_prediction(stdout, t, p);
  gr_print_findings(stdout, t, a);
}

static json_t *report_json(const struct gr_topo *t, const struct gr_analysis *a, const struct gr_prediction *p)
{
  json_t *j = gr_topo_to_json(t, a);
  json_object_set_new(j, "prediction", gr_prediction_to_json(t, p));
  return j;
}

/* Loads and analyses the bundled example; 0 or -1 with err. */
static int load_example(struct gr_topo *t, struct gr_analysis *a, struct gr_prediction *p, struct gr_err *err)
{
  char path[PATH_MAX];
  if (!gr_data_path(EXAMPLE_XML, path, sizeof(path)))
    return gr_fail(err, GR_EXIT_CANNOT_RUN, "data path too long");
  if (gr_load_xml(path, t, err) != 0) {
    err->code = GR_EXIT_CANNOT_RUN; /* gpurig's own file: not the user's input */
    return -1;
  }
  if (gr_analyze(t, a, err) != 0) {
    gr_topo_free(t);
    return -1;
  }
  if (gr_predict(t, a, p, err) != 0) {
    gr_analysis_free(a);
    gr_topo_free(t);
    return -1;
  }
  return 0;
}

int cmd_report(int argc, char **argv)
{
  struct gr_opts o;
  struct gr_topo t, ex;
  struct gr_analysis a, exa;
  struct gr_prediction pr, expr;
  struct gr_err err = {0};
  bool have_example = false;
  int rc;
  if (gr_parse_opts(argc, argv, GR_OPT_SOURCE | GR_OPT_RIG | GR_OPT_GPU | GR_OPT_JSON, &o) != 0)
    return GR_EXIT_FAIL;
  if (o.help) {
    report_usage();
    return GR_EXIT_OK;
  }
  if (gr_load_and_analyze(&o, &t, &a, &pr, &err) != 0)
    return gr_report_error(&err);
  rc = gr_exit_for_findings(&a);
  /* The example only stands in for this machine, never for a given input. */
  if (t.ngpus == 0 && !o.root && !o.input) {
    if (load_example(&ex, &exa, &expr, &err) != 0) {
      gr_prediction_free(&pr);
      gr_analysis_free(&a);
      gr_topo_free(&t);
      return gr_report_error(&err);
    }
    have_example = true;
  }
  if (o.json) {
    json_t *root = json_object();
    json_object_set_new(root, "machine_report", report_json(&t, &a, &pr));
    json_object_set_new(root, "example", have_example ? report_json(&ex, &exa, &expr) : json_null());
    gr_print_json_stdout(root);
    json_decref(root);
  } else {
    if (have_example)
      printf("No GPU found on this machine: gpurig describes it below, then shows a bundled example.\n\n");
    print_report_text(&t, &a, &pr);
    if (have_example) {
      printf("\n========================================================================\n"
             "EXAMPLE, NOT THIS MACHINE: a real NVIDIA DGX-2H topology (hwloc test suite,\n"
             "%s/%s). Run gpurig on a GPU machine to see its own.\n"
             "========================================================================\n",
             gr_data_dir(), EXAMPLE_XML);
      print_report_text(&ex, &exa, &expr);
    }
  }
  if (have_example) {
    gr_prediction_free(&expr);
    gr_analysis_free(&exa);
    gr_topo_free(&ex);
  }
  gr_prediction_free(&pr);
  gr_analysis_free(&a);
  gr_topo_free(&t);
  return rc;
}
