/* The gpurig command line: one dispatch table of subcommands (main.c), each
 * a handler in cmd_<name>.c that is a loader, the analysis and a printer. */
#ifndef GPURIG_CLI_H
#define GPURIG_CLI_H

#include <stdbool.h>
#include <stddef.h>

#include "analysis/analysis.h"
#include "analysis/predict.h"
#include "model/topo.h"
#include "base/util.h"

/* Options shared by the topology commands. */
struct gr_opts {
  const char *root;    /* --root DIR: replay a gathered /sys + /proc tree */
  const char *input;   /* --input FILE.xml: hwloc XML */
  const char *rig;     /* --rig FILE|NAME: a rig file (data/rigs/NAME.rig) */
  const char *gpu;     /* --gpu MODEL: put this GPU model in every slot of a rig */
  bool json;           /* --json */
  bool all;            /* --all: every PCI device in the tree */
  bool pcie_only;      /* --pcie-only: ignore NVLink */
  bool help;
  bool list;           /* --list (compare, doctor) */
  /* doctor */
  const char *expect_gpus; /* --expect-gpus N */
  const char *expect;      /* --expect FILE */
  const char *kmsg;        /* --kmsg FILE */
  const char *xid_window;  /* --xid-window HOURS */
  bool loaded;             /* --loaded */
  bool nhc;                /* --nhc */
  /* bench */
  bool quick;              /* --quick */
  const char *size;        /* --size SIZE */
  const char *allreduce_max; /* --allreduce-max SIZE */
  bool no_progress;        /* --no-progress */
  bool no_sm;              /* --no-sm */
  /* plan (and compare --job): kept as text, read by gr_plan_from_opts */
  const char *model, *params, *job, *quant, *kv_quant, *ctx, *batch, *gpus, *zero, *offload, *tp, *pp;
  const char *estimator, *lora_rank, *lora_targets, *state_bytes, *price, *kwh, *rent, *cpu;
  bool checkpointing, rank0_load;
  const char *positional; /* first non-option argument, if accepted */
  char **args;            /* all positional arguments (GR_OPT_MANY) */
  int nargs;
};

enum gr_opt_set {
  GR_OPT_SOURCE = 1 << 0,  /* --root, --input */
  GR_OPT_JSON = 1 << 1,
  GR_OPT_ALL = 1 << 2,
  GR_OPT_PCIE_ONLY = 1 << 3,
  GR_OPT_POSITIONAL = 1 << 4,
  GR_OPT_RIG = 1 << 5,      /* --rig */
  GR_OPT_GPU = 1 << 6,      /* --gpu */
  GR_OPT_MANY = 1 << 7,     /* any number of positional arguments */
  GR_OPT_LIST = 1 << 8,     /* --list */
  GR_OPT_DOCTOR = 1 << 9,   /* --expect-gpus --expect --kmsg --xid-window --loaded --nhc */
  GR_OPT_BENCH = 1 << 10,   /* --quick --size --allreduce-max --no-progress --no-sm */
  GR_OPT_PLAN = 1 << 11,    /* --model --params --job --quant ... (gpurig plan --help) */
};

/* Parses argv (argv[0] is the subcommand). Returns 0, or -1 after printing
 * one error line (exit with GR_EXIT_FAIL). */
int gr_parse_opts(int argc, char **argv, unsigned accepted, struct gr_opts *o);

/* The topology for the GPU commands: the one --root/--input selects (an
 * error there is bad input), else this machine; when this machine cannot be
 * read, a warning and *loaded false. On success with *loaded the caller
 * frees p, a, t. */
int gr_load_for_gpus(const struct gr_opts *o, struct gr_topo *t, struct gr_analysis *a, struct gr_prediction *p,
                     bool *loaded, struct gr_err *err);

/* Loads the topology the options select (live machine by default). */
int gr_load_selected(const struct gr_opts *o, struct gr_topo *t, struct gr_err *err);

/* Loads, analyses, predicts (when p is non-NULL) and prints the loader's
 * warnings on stderr. On success the caller frees *p, *a, then *t; on
 * failure nothing is left to free. */
int gr_load_and_analyze(const struct gr_opts *o, struct gr_topo *t, struct gr_analysis *a, struct gr_prediction *p,
                        struct gr_err *err);

/* The second half of gr_load_and_analyze, for a topology loaded some other
 * way: on failure *t is freed too. */
int gr_analyze_loaded(struct gr_topo *t, struct gr_analysis *a, struct gr_prediction *p, struct gr_err *err);

/* Prints err as "gpurig: MESSAGE" and returns its exit code. */
int gr_report_error(const struct gr_err *err);

/* Writes a JSON value to stdout with a trailing newline. */
void gr_print_json_stdout(void *json);

/* 1 when the analysis has warn findings, else 0. */
int gr_exit_for_findings(const struct gr_analysis *a);

int cmd_topo(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_snapshot(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_gpus(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_plan(int argc, char **argv);

struct gr_plan_req;
struct gr_model;
/* Reads the plan options into a request and a model (--model or --params),
 * with the defaults of `gpurig plan --help`. gpus_in_machine fills --gpus
 * when it is not given. -1 with one error line in err (GR_EXIT_FAIL); on
 * success the caller frees *m with gr_model_free. */
int gr_plan_from_opts(const struct gr_opts *o, int gpus_in_machine, struct gr_plan_req *r, struct gr_model *m,
                      struct gr_err *err);

#endif
