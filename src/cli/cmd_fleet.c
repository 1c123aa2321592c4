/* gpurig fleet: many nodes side by side, from their doctor reports. */
#include <stdio.h>

#include "analysis/fleet.h"
#include "cli/cli.h"
#include "cli/options.h"
#include "print/fleet.h"
#include "print/text.h"

struct fleet_opts {
  struct gr_output_opts out;
};

static const struct gr_option_group fleet_groups[] = {
    GR_OPTION_GROUP(gr_rows_json, struct fleet_opts, out, NULL),
    GR_OPTION_GROUP(gr_rows_verbose, struct fleet_opts, out, NULL),
};
static const struct gr_command_options fleet_spec = {fleet_groups, sizeof(fleet_groups) / sizeof(fleet_groups[0]),
                                                     GR_POSITIONAL_MANY};

static void fleet_usage(void)
{
  printf("usage: gpurig fleet [--json] [--verbose] FILE|DIR...\n"
         "\n"
         "Puts many nodes side by side and finds the one that is not like the others. Each node is\n"
         "its `gpurig doctor --json` report, as any launcher collects them, one file per node:\n"
         "  srun -N16 --ntasks-per-node=1 sh -c 'gpurig doctor --json > reports/$(hostname).json'\n"
         "  pdsh -w node[01-16] 'gpurig doctor --json' ... (or Ansible, or scp)\n"
         "A directory gives its *.json files. For every fact the nodes report (each GPU's and NIC's\n"
         "model, link and NUMA node by PCI address, the driver, sockets, NUMA nodes) the value most\n"
         "nodes have is the majority, and each node that differs is a finding naming the node, the\n"
         "device and both values (`node07 GPU3 0000:42:00.0: link Gen3 x16, the 15 others Gen4 x16`).\n"
         "A GPU most nodes have and one node lacks is a failure. Problems doctor found on some\n"
         "nodes only are findings of those nodes; a problem on every node is said once. A report\n"
         "that cannot be read is a node that did not answer, a failure, not a stop.\n"
         "\n");
  gr_print_option_help(stdout, &fleet_spec, (const char *const[]){"json", "verbose", NULL}, 21);
  printf("\n"
         "Exit status: the worst finding's (0 every node alike and healthy, 1 warnings, 2 a failure\n"
         "or bad input, 3 a node's report says it could not check).\n");
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
  if (p.nargs < 1) {
    fprintf(stderr, "gpurig: fleet: no node given (usage: gpurig fleet FILE|DIR..., files of gpurig doctor --json)\n");
    return GR_EXIT_FAIL;
  }
  if (gr_fleet_read(p.args, (size_t)p.nargs, &nodes, &err) != 0)
    return gr_report_error(&err);
  gr_fleet_compare(&nodes, &f);
  if (o.out.json)
    cli_print_json(gr_fleet_to_json(&f));
  else {
    struct gr_text_style st;
    FILE *out = cli_text_begin(o.out.verbose, &st);
    gr_print_fleet(out, &f, &st);
    cli_text_end(out);
  }
  int rc = gr_findings_exit(&f.findings);
  gr_fleet_free(&f);
  gr_fleet_nodes_free(&nodes);
  return rc;
}
