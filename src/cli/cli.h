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
#include "cli/options.h"
#include "load/source.h"
#include "monitor/sampler.h"
#include "plan/request.h"

/* Each command's options are its own struct and rows (cli/options.h). */

/* The source the options name (--root, --input, --rig with --gpu, else
 * this machine); its strings are argv's. */
struct gr_source cli_source_of(const struct gr_source_opts *o, bool pcie_only);

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
/* A GPU's xGMI errors from a driver reading into doctor's row (-1 where
 * not reported, or the GPU did not answer: fresh false). */
struct gr_doctor_gpu_power;
void cli_doctor_xgmi(const struct gr_gpu_dynamic *d, bool fresh, struct gr_doctor_gpu_power *row);
int cmd_fleet(int argc, char **argv);
/* What doctor asks the GPU driver and libraries before it runs (doctor reads
 * no library itself; cmd_doctor.c), of m, opened from src: the GPUs' power
 * limits, only of a machine (live, or a gathered tree the driver answers
 * for), never of a description; the CUDA driver's and NCCL's versions only
 * of this machine or a tree gathered on it (its host name is this one's).
 * Fills d's gpu_power (the caller frees it), why_no_power, cuda and nccl. */
struct gr_source;
struct gr_doctor_opts;
struct gr_machine;
void cli_doctor_driver_facts(const struct gr_source *src, const struct gr_machine *m, struct gr_doctor_opts *d,
                             struct gr_err *err);
int cmd_gpus(int argc, char **argv);
int cmd_bench(int argc, char **argv);
/* bench's options: cmd_bench.c parses them, gpurig-mpi's bench reads them. */
struct cli_bench_opts {
  struct gr_source_opts src;
  struct gr_output_opts out;
  const char *size, *allreduce_max, *allreduce_iters, *like, *per; /* text: cmd_bench.c and mpi_bench.c check it */
  bool quick, no_progress, no_sm, mpi;
};
/* bench --mpi: in gpurig-mpi (cli/mpi_bench.c) the all-reduce across the
 * ranks mpirun started; in gpurig, one line saying how to get it. */
struct gr_bench_config;
int cmd_bench_mpi(const struct cli_bench_opts *o, const struct gr_bench_config *cfg);
/* How fleet prints (cmd_fleet.c): text, --json, or --html FILE. */
struct cli_fleet_out {
  bool json, verbose;
  const char *html; /* NULL: not asked; "-": standard output */
};
/* Prints f as out asks; returns the fleet's exit status (the worst
 * finding's), or the failure to write the page's, said on stderr. */
struct gr_fleet;
int cli_fleet_print(const struct gr_fleet *f, const struct cli_fleet_out *out);
/* fleet --mpi (cli/mpi_fleet.c, in gpurig-mpi): each rank's doctor report of
 * the machine `so` names, side by side on rank 0, printed as out asks;
 * timeout_s: how long rank 0 waits for a node. The exit status is the
 * fleet's (every rank returns it). */
int cmd_fleet_mpi(const struct gr_source_opts *so, const struct cli_fleet_out *out, double timeout_s);
int cmd_plan(int argc, char **argv);
int cmd_watch(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_burn(int argc, char **argv);

#endif
