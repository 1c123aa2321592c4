#include <stdio.h>

#include "cli/cli.h"
#include "facts/data.h"
#include "print/machine.h"
#include "print/text.h"

static void report_usage(void)
{
  printf("usage: gpurig report [--root DIR | --input FILE.xml | --rig RIG [--gpu MODEL]] [--json]\n"
         "                     [--nccl-version X.Y[.Z]] [--verbose]\n"
         "\n"
         "An overview of the machine on one screen (40 lines of 100 columns): the machine, its\n"
         "GPUs grouped, the wiring, the P2P hives, the predicted all-reduce against what bounds\n"
         "it, one line per verdict and the top findings. Lines wrap to the terminal; colour only\n"
         "on a terminal and never with NO_COLOR set. This is what a bare `gpurig` runs. On a\n"
         "machine without GPUs it says so, then shows a bundled real topology (an NVIDIA DGX-2H\n"
         "from hwloc's test suite), labelled as an example.\n"
         "\n"
         "  --root DIR        replay a gathered tree instead of this machine\n"
         "  --input FILE.xml  read an hwloc XML or NCCL topology file (- reads standard input)\n"
         "  --rig RIG         a machine described in a rig file (docs/rig-format.md)\n"
         "  --gpu MODEL       with --rig: put this catalog GPU in every GPU slot\n"
         "  -v, --verbose     everything: the GPU table, the matrices, every verdict and finding whole\n"
         "  --json            {\"machine_report\": {...}, \"example\": {...} or null} (docs/json.md)\n"
         "  --nccl-version V  the NCCL whose P2P defaults the predictions and advice follow (2.21,\n"
         "                    2.21.5; default: the newest in data/nccl-p2p.tsv, stated as assumed)\n"
         "\n"
         "Exit status: 0 ok, 1 a finding is a warning, 2 bad input, 3 could not run.\n");
}

/* No GPU on this machine: a bundled real one stands in, labelled as an example. */
static int open_example(const struct gr_machine *m, struct gr_machine *ex, bool *have, struct gr_err *err)
{
  *have = false;
  if (m->topo.ngpus > 0 || m->src.kind != GR_SRC_LIVE)
    return 0; /* the example only stands in for this machine, never for a given input */
  if (gr_machine_open_example(ex, err) != 0)
    return -1;
  *have = true;
  return 0;
}

/* One machine as text: the one-screen overview, or everything with --verbose. */
static void print_machine(FILE *out, const struct gr_machine *m, const struct gr_text_style *st)
{
  if (st->verbose)
    gr_print_report_text(out, m, st);
  else
    gr_print_report_brief(out, m, st);
}

static void print_report(const struct gr_opts *o, const struct gr_machine *m, const struct gr_machine *ex)
{
  if (o->json) {
    json_t *root = json_object();
    json_object_set_new(root, "machine_report", gr_machine_to_json(m));
    json_object_set_new(root, "example", ex ? gr_machine_to_json(ex) : json_null());
    cli_print_json(root);
    return;
  }
  struct gr_text_style st;
  FILE *out = cli_text_begin(o->verbose, &st);
  if (ex)
    fprintf(out, "No GPU found on this machine: gpurig describes it below, then shows a bundled example.\n");
  print_machine(out, m, &st);
  if (ex) {
    fprintf(out, "\n==== EXAMPLE, NOT THIS MACHINE: a real NVIDIA DGX-2H from hwloc's test suite ====\n");
    print_machine(out, ex, &st);
  }
  cli_text_end(out);
}

int cmd_report(int argc, char **argv)
{
  struct gr_opts o;
  struct gr_machine m, ex = {0};
  struct gr_err err = {0};
  bool have_example = false;
  int rc;
  if (gr_parse_opts(argc, argv, GR_OPT_SOURCE | GR_OPT_RIG | GR_OPT_GPU_RIG | GR_OPT_JSON | GR_OPT_NCCL | GR_OPT_VERBOSE, &o) != 0)
    return GR_EXIT_FAIL;
  if (o.help) {
    report_usage();
    return GR_EXIT_OK;
  }
  struct gr_source src = cli_source(&o);
  src.nccl = o.nccl;
  if (cli_open(&src, GR_MACHINE_PREDICT, &m, &err) != 0)
    return gr_report_error(&err);
  if (open_example(&m, &ex, &have_example, &err) != 0) {
    rc = gr_report_error(&err);
    goto out;
  }
  print_report(&o, &m, have_example ? &ex : NULL);
  rc = gr_findings_exit(&m.analysis.findings);
out:
  gr_machine_close(&ex);
  gr_machine_close(&m);
  return rc;
}
