/* The gpurig command line: one dispatch table of subcommands (main.c), each
 * a handler in cmd_<name>.c that reads argv into a request, calls the core,
 * picks a printer and maps the result to an exit code: nothing else. */
#ifndef GPURIG_CLI_H
#define GPURIG_CLI_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "analysis/machine.h"
#include "base/util.h"
#include "load/source.h"
#include "monitor/sampler.h"
#include "plan/request.h"

/* Options shared by the topology commands. */
struct gr_opts {
  const char *root;    /* --root DIR: replay a gathered /sys + /proc tree */
  const char *input;   /* --input FILE.xml: hwloc XML or an NCCL topology file */
  const char *rig;     /* --rig FILE|NAME: a rig file (data/rigs/NAME.rig) */
  const char *gpu;     /* --gpu MODEL: put this GPU model in every slot of a rig */
  bool json;           /* --json */
  bool verbose;        /* --verbose, -v: whole sentences, every finding and detail */
  bool all;            /* --all: every PCI device in the tree */
  bool pcie_only;      /* --pcie-only: ignore NVLink */
  struct gr_nccl_version nccl; /* --nccl-version X.Y[.Z]: NCCL whose defaults to assume; major 0: not given */
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
  const char *allreduce_iters; /* --allreduce-iters N: the soak */
  bool no_progress;        /* --no-progress */
  bool no_sm;              /* --no-sm */
  const char *like;        /* --like nvbandwidth: its sizes, repetitions and test names */
  bool mpi;                /* --mpi: across ranks launched by mpirun (gpurig-mpi) */
  const char *per;         /* --per node|gpu (with --mpi) */
  /* watch, export */
  bool once;               /* --once */
  const char *count;       /* --count N */
  const char *interval;    /* --interval SECONDS (0.1 .. 3600; "500ms", "2s") */
  const char *listen;      /* --listen ADDR:PORT */
  const char *textfile;    /* --textfile DIR */
  const char *svg;         /* --svg FILE (watch, burn; topo: the block diagram) */
  const char *dot;         /* --dot FILE (topo: the block diagram as Graphviz DOT) */
  /* burn */
  const char *load, *pattern, *duration; /* --load LIST, --pattern NAME, --duration SECONDS */
  const char *log;         /* --log FILE.jsonl (burn) */
  bool force;              /* --force: load GPUs other processes use (burn) */
  /* report */
  const char *html, *markdown;       /* --html FILE, --markdown FILE ("-": standard output) */
  const char *bench_json, *burn_json; /* --bench FILE, --burn FILE: saved `bench --json`, `burn --json` */
  /* plan (and compare --job): kept as text, turned into a request by plan/request.c */
  const char *model, *params, *job, *quant, *kv_quant, *engine, *ctx, *batch, *gpus, *zero, *offload, *tp, *pp, *nodes;
  const char *estimator, *lora_rank, *lora_targets, *state_bytes, *price, *kwh, *rent, *cpu;
  bool checkpointing, rank0_load;
  const char *optimizer, *resolution, *dataset_images, *workers; /* diffusion models */
  bool cache_latents, cache_text, full_bf16;
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
  GR_OPT_GPU = 1 << 6,      /* --gpu, with or without --rig (plan, compare) */
  GR_OPT_MANY = 1 << 7,     /* any number of positional arguments */
  GR_OPT_LIST = 1 << 8,     /* --list */
  GR_OPT_DOCTOR = 1 << 9,   /* --expect-gpus --expect --kmsg --xid-window --loaded --nhc */
  GR_OPT_BENCH = 1 << 10,   /* --quick --size --allreduce-max --no-progress --no-sm --mpi --per */
  GR_OPT_PLAN = 1 << 11,    /* --model --params --job --quant ... (gpurig plan --help) */
  GR_OPT_GPU_RIG = 1 << 12, /* --gpu, only together with --rig (topo, report) */
  GR_OPT_NCCL = 1 << 13,    /* --nccl-version X.Y[.Z] (topo, report, compare, plan) */
  GR_OPT_MONITOR = 1 << 14, /* --once --count --interval --kmsg (watch); --listen --textfile (export) */
  GR_OPT_VERBOSE = 1 << 16, /* --verbose, -v (report, topo, doctor, compare) */
  GR_OPT_BURN = 1 << 15,    /* --load --pattern --duration, and --gpus LIST --quick --size --interval --svg (burn) */
  GR_OPT_REPORT = 1 << 17,  /* --html --markdown --bench --burn (report) */
  GR_OPT_DIAGRAM = 1 << 18, /* --svg --dot: the block diagram (topo) */
};

/* Parses argv (argv[0] is the subcommand). Options and positional arguments
 * may come in any order (argv is permuted, as GNU getopt does); `--` ends
 * the options. An empty --root, --input, --rig, --kmsg, --expect or --model
 * is refused, and so is an --nccl-version that is not X.Y[.Z] or is older
 * than data/nccl-p2p.tsv covers (the facts must be loaded). Returns 0, or
 * -1 after printing one error line (exit with GR_EXIT_FAIL). */
int gr_parse_opts(int argc, char **argv, unsigned accepted, struct gr_opts *o);

/* The source the options name (--root, --input, --rig with --gpu, else
 * this machine); its strings are argv's. */
struct gr_source cli_source(const struct gr_opts *o);
/* The plan options as the planner's arguments (plan/request.h). */
struct gr_plan_args cli_plan_args(const struct gr_opts *o);

/* Opens the machine (analysis/machine.h) and shows its loader warnings on
 * stderr. 0, or -1 with err; the caller closes m either way. */
int cli_open(const struct gr_source *src, unsigned flags, struct gr_machine *m, struct gr_err *err);
/* For the GPU commands: as cli_open, but when this machine's wiring cannot
 * be read, a warning and *have false instead of an error (the GPUs are
 * still shown, without it). */
int cli_open_for_gpus(const struct gr_source *src, struct gr_machine *m, bool *have, struct gr_err *err);

/* Prints err as "gpurig: MESSAGE" and returns its exit code. */
int gr_report_error(const struct gr_err *err);
/* Writes a JSON value to stdout and drops it. */
/* Text for standard output through the wrapping stream (print/text.h):
 * lines wrapped to the terminal, colour only on one. Returns the stream to
 * print to (stdout itself if the wrapper could not be made) and fills *st;
 * cli_text_end flushes it into stdout. */
struct gr_text_style;
FILE *cli_text_begin(bool verbose, struct gr_text_style *st);
void cli_text_end(FILE *out);
void cli_print_json(json_t *j);

int cmd_topo(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_snapshot(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_gpus(int argc, char **argv);
int cmd_bench(int argc, char **argv);
/* bench --mpi: in gpurig-mpi (cli/mpi_bench.c) the all-reduce across the
 * ranks mpirun started; in gpurig, one line saying how to get it. */
struct gr_bench_config;
int cmd_bench_mpi(const struct gr_opts *o, const struct gr_bench_config *cfg);
int cmd_plan(int argc, char **argv);
int cmd_watch(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_burn(int argc, char **argv);

#endif
