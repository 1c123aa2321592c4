/* gpurig: one binary, subcommands dispatched from one table. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/suggest.h"
#include "base/term.h"
#include "cli/cli.h"
#include "facts/facts.h"

struct command {
  const char *name;
  int (*handler)(int argc, char **argv);
  const char *help;
};

static const struct command commands[] = {
    {"report", cmd_report, "overview of this machine: GPUs, wiring, hives, findings (the default)"},
    {"topo", cmd_topo, "PCIe/NVLink wiring, GPU matrix, NCCL view, bandwidth per pair, hives"},
    {"snapshot", cmd_snapshot, "write this machine as hwloc XML with gpurig's link and error facts"},
    {"compare", cmd_compare, "judge machines described in rig files side by side (before buying)"},
    {"doctor", cmd_doctor, "check the set-up for multi-GPU work: links, errors, IOMMU/ACS, driver, memory, Xids"},
    {"fleet", cmd_fleet, "many nodes side by side from their doctor reports: the node that is not like the others"},
    {"gpus", cmd_gpus, "the GPUs as the driver reports them: memory, links, power, temperatures, P2P status"},
    {"plan", cmd_plan, "will a model and job fit on a machine, how fast, at what cost (before buying)"},
    {"watch", cmd_watch, "sample GPUs and their PCIe links over time: a live view, lines or JSON lines"},
    {"export", cmd_export, "serve the samples as Prometheus metrics (dcgm-exporter's names and gpurig's own)"},
    {"burn", cmd_burn, "burn-in: load the GPUs and the bus as training does, watch every link, a verdict per GPU and slot"},
    {"bench", cmd_bench, "measure host<->GPU, GPU<->GPU and all-reduce bandwidth against what the wiring promises"},
};

static void usage(FILE *out)
{
  fprintf(out, "usage: gpurig [COMMAND] [OPTIONS]\n\n"
               "gpurig judges and checks multi-GPU machines: how GPUs, switches, CPUs and NICs are\n"
               "wired, and what that means for peer-to-peer traffic.\n\nCommands:\n");
  for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
    fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].help);
  fprintf(out, "\n`gpurig COMMAND --help` describes each command. Without a command gpurig runs `report`.\n"
               "Exit status: 0 ok, 1 warnings, 2 failures or bad input, 3 could not run.\n");
}

/* Like git: a command's output is only complete if stdout took all of it. */
static int finish_stdout(int rc)
{
  if (fflush(stdout) != 0 || ferror(stdout) || fclose(stdout) != 0) {
    if (errno != EPIPE)
      gr_diag("gpurig: write error on standard output: %s\n", strerror(errno));
    return GR_EXIT_CANNOT_RUN;
  }
  return rc;
}

/* Where gpurig's data lies; each table loads when a command first reads it
 * (facts/facts.h). */
static int init_data(void)
{
  struct gr_err err = {0};
  if (gr_facts_load(&err) != 0)
    return gr_report_error(&err);
  return 0;
}

int main(int argc, char **argv)
{
  const char *name = argc > 1 ? argv[1] : "report";
  gr_term_filter_stdio(); /* before anything is printed: see base/term.h */
  if (argc > 1 && (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0)) {
    usage(stdout);
    return finish_stdout(GR_EXIT_OK);
  }
  if (argc > 1 && strcmp(name, "--version") == 0) {
    printf("gpurig %s\n", GPURIG_VERSION);
    return finish_stdout(GR_EXIT_OK);
  }
  /* `gpurig --json` etc.: options for the default command */
  char *default_argv[64] = {"report"};
  int sub_argc = argc - 1;
  char **sub_argv = argv + 1;
  if (argc == 1 || name[0] == '-') {
    if (argc > 63) {
      gr_diag("gpurig: too many arguments\n");
      return GR_EXIT_FAIL;
    }
    for (int i = 1; i < argc; i++)
      default_argv[i] = argv[i];
    sub_argc = argc;
    sub_argv = default_argv;
    name = "report";
  }
  for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
    if (strcmp(commands[i].name, name) == 0) {
      int rc = init_data();
      if (rc != 0)
        return rc;
      rc = finish_stdout(commands[i].handler(sub_argc, sub_argv));
      gr_facts_unload();
      return rc;
    }
  }
  /* one line, with the closest command: `gpurig topoo` meant topo */
  struct gr_suggest s;
  gr_suggest_init(&s, name);
  for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
    gr_suggest_offer(&s, commands[i].name);
  if (gr_suggest_best(&s))
    gr_diag("gpurig: '%s' is not a gpurig command; did you mean '%s'?\n", name, gr_suggest_best(&s));
  else
    gr_diag("gpurig: '%s' is not a gpurig command (gpurig --help lists them)\n", name);
  return GR_EXIT_FAIL;
}
