/* gpurig fleet: many nodes side by side, from their doctor reports. */
#include <stdio.h>
#include <stdlib.h>

#include "base/file.h"
#include "analysis/fleet.h"
#include "cli/cli.h"
#include "cli/options.h"
#include "print/fleet.h"
#include "print/text.h"

struct fleet_opts {
  struct gr_output_opts out;
  struct gr_source_opts src; /* --mpi: the machine each rank checks */
  bool mpi;
  const char *timeout;
  const char *html; /* "-": standard output */
};

static const struct gr_option fleet_rows[] = {
    GR_OPT_STRING_ROW("html", "FILE", struct fleet_opts, html,
                      "option '--html' needs a file to write (- for standard output), not an empty value",
                      "write the fleet as one self-contained HTML page, as report --html does\n"
                      "(no scripts, nothing fetched): a row per node and a column per fact\n"
                      "with the odd values marked, the majority, the findings with their\n"
                      "fixes; - writes it to standard output. Nothing else is printed"),
    GR_OPT_FLAG_ROW("mpi", 0, struct fleet_opts, mpi,
                    "gather the reports over MPI instead of files: in gpurig-mpi started by\n"
                    "mpirun (or srun), one rank per node (--map-by ppr:1:node), each rank\n"
                    "checks its node as doctor does and rank 0 compares them"),
    GR_OPT_STRING_ROW("timeout", "SECONDS", struct fleet_opts, timeout, false,
                      "with --mpi: how long rank 0 waits for the reports (default 60); a node\n"
                      "that has not answered by then is a failure, and the run ends"),
};

static const struct gr_option_group fleet_groups[] = {
    GR_OPTION_GROUP(gr_rows_json, struct fleet_opts, out, NULL),
    GR_OPTION_GROUP(gr_rows_verbose, struct fleet_opts, out, NULL),
    GR_OPTION_GROUP(gr_rows_source, struct fleet_opts, src, gr_check_source),
    GR_OPTION_GROUP(gr_rows_rig, struct fleet_opts, src, NULL),
    GR_OPTION_OWN(fleet_rows, NULL),
};
static const struct gr_command_options fleet_spec = {fleet_groups, sizeof(fleet_groups) / sizeof(fleet_groups[0]),
                                                     GR_POSITIONAL_MANY};

static void fleet_usage(void)
{
  printf("usage: gpurig fleet [--json | --html FILE] [--verbose] FILE|DIR...\n"
         "       mpirun --map-by ppr:1:node gpurig-mpi fleet --mpi [--timeout SECONDS] [--root DIR] [--json | --html FILE]\n"
         "\n"
         "Puts many nodes side by side and finds the one that is not like the others. Each node is\n"
         "its `gpurig doctor --json` report, as any launcher collects them, one file per node:\n"
         "  srun -N16 --ntasks-per-node=1 sh -c 'gpurig doctor --json > reports/$(hostname).json'\n"
         "  pdsh -w node[01-16] 'gpurig doctor --json' ... (or Ansible, or scp)\n"
         "A directory gives its *.json files. For every fact the nodes report (each GPU's and NIC's\n"
         "model, link and NUMA node by PCI address, each GPU's AER and Xid counts, the driver, CUDA,\n"
         "NCCL, HIP and RCCL (AMD nodes), IOMMU, ACS, sockets, NUMA nodes) the value most nodes have\n"
         "is the majority, and each node that differs is a finding naming the node, the device and\n"
         "both values (`node07 GPU3 0000:42:00.0: link Gen3 x16, the 15 others Gen4 x16`; `node03:\n"
         "NCCL 2.18.5, the 2 others 2.21.5`). An unknown value differs from nothing; error counts are\n"
         "a finding only where the majority has none (a fatal or uncorrectable AER error: a failure).\n"
         "A GPU most nodes have and one node lacks is a failure. Problems doctor found on some nodes\n"
         "only are findings of those nodes; a problem on every node is said once. A report that cannot\n"
         "be read is a node that did not answer, a failure, not a stop.\n"
         "\n");
  gr_print_option_help(stdout, &fleet_spec,
                       (const char *const[]){"json", "html", "verbose", "mpi", "timeout",
                                             "root=with --mpi: the gathered tree each rank checks instead of its machine",
                                             "input=with --mpi: the hwloc XML each rank checks",
                                             "rig=with --mpi: the rig each rank checks", NULL},
                       21);
  printf("\n"
         "Exit status: the worst finding's (0 every node alike and healthy, 1 warnings, 2 a failure\n"
         "or bad input, 3 a node's report says it could not check).\n");
}

#ifndef GPURIG_MPI
/* This binary has no MPI: gpurig-mpi is built beside it when libopenmpi-dev
 * is there at build time. */
int cmd_fleet_mpi(const struct gr_source_opts *so, const struct cli_fleet_out *out, double timeout_s)
{
  (void)so;
  (void)out;
  (void)timeout_s;
  fprintf(stderr, "gpurig: fleet --mpi: this gpurig was built without MPI; install libopenmpi-dev "
                  "(apt-get install libopenmpi-dev openmpi-bin), rebuild, and run "
                  "`mpirun --map-by ppr:1:node gpurig-mpi fleet --mpi`\n");
  return GR_EXIT_CANNOT_RUN;
}
#endif

/* --html FILE: the page made in memory, then written by the one writer
 * (whole or not at all). 0, or the exit status of the failure, said. */
static int write_html(const char *path, const struct gr_fleet *f)
{
  char *buf = NULL;
  size_t len = 0;
  struct gr_err err = {0};
  FILE *mem = open_memstream(&buf, &len);
  if (!mem) {
    gr_fail(&err, GR_EXIT_CANNOT_RUN, "%s: out of memory", path);
    return gr_report_error(&err);
  }
  int printed = gr_print_fleet_html(mem, f);
  int closed = fclose(mem);
  int rc = printed == 0 && closed == 0 ? gr_file_write(path, buf, len, &err)
                                       : gr_fail(&err, GR_EXIT_CANNOT_RUN, "%s: the page could not be made", path);
  free(buf);
  return rc == 0 ? 0 : gr_report_error(&err);
}

int cli_fleet_print(const struct gr_fleet *f, const struct cli_fleet_out *out)
{
  if (out->html) {
    int rc = write_html(out->html, f);
    return rc ? rc : (int)gr_findings_exit(&f->findings);
  }
  if (out->json)
    cli_print_json(gr_fleet_to_json(f));
  else {
    struct gr_text_style st;
    FILE *o = cli_text_begin(out->verbose, &st);
    gr_print_fleet(o, f, &st);
    cli_text_end(o);
  }
  return gr_findings_exit(&f->findings);
}

static int fleet_mpi(const struct fleet_opts *o, const struct gr_parsed *p)
{
  double timeout_s = 60;
  char *end;
  if (p->nargs > 0) {
    fprintf(stderr, "gpurig: fleet: --mpi gathers the reports itself; files (%s) do not apply\n", p->args[0]);
    return GR_EXIT_FAIL;
  }
  if (o->timeout) {
    timeout_s = strtod(o->timeout, &end);
    if (end == o->timeout || *end || !(timeout_s >= 1 && timeout_s <= 86400)) {
      fprintf(stderr, "gpurig: fleet: --timeout %s: expected seconds, from 1 to 86400\n", o->timeout);
      return GR_EXIT_FAIL;
    }
  }
  struct cli_fleet_out out = {o->out.json, o->out.verbose, o->html};
  return cmd_fleet_mpi(&o->src, &out, timeout_s);
}

int cmd_fleet(int argc, char **argv)
{
  struct fleet_opts o;
  struct gr_parsed p;
  struct gr_fleet_nodes nodes;
  struct gr_fleet f;
  struct gr_err err = {0};
  if (gr_parse_options(argc, argv, &fleet_spec, &o, sizeof(o), &p) != 0)
    return GR_EXIT_FAIL;
  if (p.help) {
    fleet_usage();
    return GR_EXIT_OK;
  }
  if (o.html && o.out.json) {
    fprintf(stderr, "gpurig: fleet: --json and --html exclude each other (both are the whole output)\n");
    return GR_EXIT_FAIL;
  }
  if (o.html && gr_out_check(o.html, &err) != 0)
    return gr_report_error(&err); /* before any node is read or any rank started */
  if (o.mpi)
    return fleet_mpi(&o, &p);
  if (o.timeout || o.src.root || o.src.input || o.src.rig) {
    fprintf(stderr, "gpurig: fleet: --%s belongs to --mpi (what each rank checks); without it, give the nodes' "
            "doctor --json reports\n", o.timeout ? "timeout" : o.src.root ? "root" : o.src.input ? "input" : "rig");
    return GR_EXIT_FAIL;
  }
  if (p.nargs < 1) {
    fprintf(stderr, "gpurig: fleet: no node given (usage: gpurig fleet FILE|DIR..., files of gpurig doctor --json)\n");
    return GR_EXIT_FAIL;
  }
  if (gr_fleet_read(p.args, (size_t)p.nargs, &nodes, &err) != 0)
    return gr_report_error(&err);
  gr_fleet_compare(&nodes, &f);
  struct cli_fleet_out out = {o.out.json, o.out.verbose, o.html};
  int rc = cli_fleet_print(&f, &out);
  gr_fleet_free(&f);
  gr_fleet_nodes_free(&nodes);
  return rc;
}
