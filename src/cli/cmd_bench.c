/* gpurig bench: measures host<->GPU, GPU<->GPU, latency and all-reduce, and
 * holds each figure against the link's limit and the topology's prediction. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "gpu/bench.h"
#include "print/bench.h"

#define BENCH_STRING(name, arg, field, help) GR_OPT_STRING_ROW(name, arg, struct cli_bench_opts, field, NULL, help)
#define BENCH_FLAG(name, field, help) GR_OPT_FLAG_ROW(name, 0, struct cli_bench_opts, field, help)
static const struct gr_option bench_rows[] = {
    BENCH_FLAG("quick", quick,
               "a run under 10 s: 16 MiB copies, 2 warm-up + 2 timed per run, 3 runs,\n"
               "copy engine only, no pairs read both ways at once; copies within a GPU\n"
               "stay 256 MiB, 8 a run (a smaller one measured more than an H200's memory moves)"),
    BENCH_STRING("size", "SIZE", size,
                 "copy size (default 256 MiB, 16 MiB with --quick; K, M, G = 2^10..2^30):\n"
                 "4K or more, a multiple of 16 bytes"),
    BENCH_STRING("like", "nvbandwidth", like,
                 "nvbandwidth's sizes and repetitions (512 MiB copies, capped by free\n"
                 "memory as the default is, 16 per run, median of 3 runs, SM copies\n"
                 "too), and each row names the nvbandwidth testcase it matches\n"
                 "(host_to_device_memcpy_ce, device_to_device_memcpy_read_ce, ...)"),
    BENCH_STRING("allreduce-max", "SIZE", allreduce_max,
                 "largest all-reduce, 64K or more (default 1 GiB; rounded down to a\n"
                 "power of two and capped by free GPU memory, with a note saying which)"),
    BENCH_STRING("allreduce-iters", "N", allreduce_iters,
                 "soak: after each all-reduce size, N more (100 or more) each timed\n"
                 "alone; p50, p99, max and the 5 slowest per size, and a stall (over\n"
                 "10x the size's p50 and 50 us over it) is a warning; lower\n"
                 "--allreduce-max to soak fewer sizes"),
    BENCH_FLAG("no-sm", no_sm, "skip the SM copy kernel tests"),
    BENCH_FLAG("no-progress", no_progress, "no progress bar on stderr (it shows on a terminal after 1 s)"),
    BENCH_FLAG("mpi", mpi,
               "across machines, in gpurig-mpi started by mpirun (or srun): rank 0 makes\n"
               "NCCL's unique id and sends it over MPI, the ranks all-reduce from 4 KiB\n"
               "(64 KiB with --quick, up to 64 MiB) with nccl-tests' busbw, each node's\n"
               "local rank 0 checks its NICs' placement, nvidia_peermem and GPU links,\n"
               "and rank 0 prints one report naming the slowest node and link"),
    BENCH_STRING("per", "gpu|node", per,
                 "with --mpi: one rank per GPU (default) or one per node using all its GPUs"),
};

static const struct gr_option_group bench_groups[] = {
    GR_OPTION_GROUP(gr_rows_source, struct cli_bench_opts, src, gr_check_source),
    GR_OPTION_GROUP(gr_rows_json, struct cli_bench_opts, out, NULL),
    GR_OPTION_OWN(bench_rows, NULL),
};
static const struct gr_command_options bench_spec = {bench_groups, sizeof(bench_groups) / sizeof(bench_groups[0]),
                                                     GR_POSITIONAL_NONE};

/* --help's option lines, in bench's order and words */
static const char *const bench_help[] = {
    "quick", "size", "like", "allreduce-max", "allreduce-iters", "no-sm", "no-progress",
    "json=print the results as JSON (docs/json.md)",
    "root=take the topology from a gathered tree instead of this machine",
    "input=take the topology from an hwloc XML or NCCL topology file",
    "mpi", "per", NULL,
};

static void bench_usage(void)
{
  printf("usage: gpurig bench [--quick | --like nvbandwidth] [--json] [--size SIZE] [--allreduce-max SIZE]\n"
         "                    [--allreduce-iters N] [--no-sm] [--no-progress] [--root DIR | --input FILE.xml]\n"
         "       mpirun [-np N] gpurig-mpi bench --mpi [--per gpu|node] [--quick] [--json] [--allreduce-max SIZE]\n"
         "\n"
         "Measures what the wiring promises, with nvbandwidth's method: pinned host memory on\n"
         "each GPU's NUMA node, a spin kernel that holds each stream until its copies are queued,\n"
         "CUDA events, a warm-up run, the median and spread of several runs, and the data checked\n"
         "after every run. Tests: host -> GPU, GPU -> host, both at once, within each GPU; host ->\n"
         "all GPUs and all GPUs -> host at once, held against what the GPUs share on their way to\n"
         "the host; every GPU pair written (pushed by the source) and read (pulled by the\n"
         "destination), one way and both ways, by direct P2P where the driver allows it and through\n"
         "host memory where not (labelled, never skipped); copy-engine and SM-kernel copies; 16-byte\n"
         "copy latency and the SM pointer chase (ns per dependent load, as nvbandwidth); and an NCCL\n"
         "all-reduce over all GPUs from 4 KiB to 1 GiB, out of place and in place as nccl-tests (20\n"
         "timed after 5 warm-up per size; --quick fewer), with algbw, busbw, nccl-tests' host-clock\n"
         "time, the plateau and how NCCL connected each pair (from its INFO log, read from a private\n"
         "temporary file). Each figure is printed beside its link's theoretical limit, NCCL's\n"
         "figure for that link and the topology's prediction; a figure under its floor (a fraction\n"
         "of the link's rate, data/health.tsv) is a finding naming the GPU and the link. Before the\n"
         "first test it says on stderr how many tests it plans and how long they should take.\n"
         "\n");
  gr_print_option_help(stdout, &bench_spec, bench_help, 21);
  printf("\n"
         "Needs libcuda.so.1 (and libnccl.so.2 for the all-reduce), or for AMD GPUs libamdhip64 (and\n"
         "librccl.so.1; no SM copies or pointer chase there: HIP has no PTX), loaded at run time;\n"
         "GPURIG_DRIVER_DIR=DIR loads them from DIR. One vendor a run, NVIDIA first: on a machine\n"
         "with both, CUDA_VISIBLE_DEVICES= (empty) measures the AMD GPUs. Never changes a GPU\n"
         "setting; needs no root.\n"
         "Exit status: 0 ok, 1 a figure under its floor, 2 a data check failed, a copy failed or\n"
         "a GPU stopped answering (or bad input), 3 no GPU driver found.\n");
}

/* --size: refused rather than rounded, so that the size printed is the
 * size asked for. */
static int parse_copy_size(const char *s, size_t *bytes)
{
  const char *why = NULL;
  if (!gr_parse_size(s, bytes))
    why = "expected a size such as 64M or 1G";
  else if (*bytes < GR_BENCH_COPY_MIN_BYTES)
    why = "below 4 KiB a copy times only its own latency (the 16-byte latency test measures that); give 4K or more";
  else if (*bytes % GR_BENCH_COPY_ALIGN != 0)
    why = "copies are whole 16-byte words (the SM copy kernel's unit); give a multiple of 16 bytes";
  if (why)
    gr_diag("gpurig: bench: --size '%s': %s\n", s, why);
  return why ? -1 : 0;
}

static int parse_allreduce_max(const char *s, size_t *bytes)
{
  const char *why = NULL;
  if (!gr_parse_size(s, bytes))
    why = "expected a size such as 256M or 1G";
  else if (*bytes < GR_BENCH_AR_MIN_BYTES)
    why = "below 64 KiB, the smallest all-reduce sweep gpurig runs; give 64K or more";
  if (why)
    gr_diag("gpurig: bench: --allreduce-max '%s': %s\n", s, why);
  return why ? -1 : 0;
}

/* --like TOOL: only nvbandwidth's method is known; --quick picks other
 * sizes, so the two are refused together. */
static int parse_like(const struct cli_bench_opts *o, struct gr_bench_config *cfg)
{
  if (!o->like)
    return 0;
  if (strcmp(o->like, "nvbandwidth") != 0) {
    gr_diag("gpurig: bench: --like '%s': the one tool gpurig can imitate is nvbandwidth\n", o->like);
    return -1;
  }
  if (o->quick) {
    gr_diag("gpurig: bench: --like nvbandwidth runs nvbandwidth's sizes and repetitions; --quick runs "
            "smaller ones: give one of the two\n");
    return -1;
  }
  gr_bench_config_like_nvbandwidth(cfg);
  return 0;
}

/* --allreduce-iters: enough iterations for a p99 that is not just the max. */
static int parse_allreduce_iters(const char *s, int *iters)
{
  char *end = NULL;
  long v = strtol(s, &end, 10);
  if (end == s || *end || v < 100 || v > 1000000) {
    gr_diag("gpurig: bench: --allreduce-iters '%s': expected a whole number from 100 (a p99 needs 100 "
            "iterations) to 1000000\n", s);
    return -1;
  }
  *iters = (int)v;
  return 0;
}

static int bench_config(const struct cli_bench_opts *o, struct gr_bench_config *cfg)
{
  gr_bench_config_defaults(cfg, o->quick);
  if (parse_like(o, cfg) != 0)
    return -1;
  if ((o->size && parse_copy_size(o->size, &cfg->bytes) != 0) ||
      (o->allreduce_max && parse_allreduce_max(o->allreduce_max, &cfg->ar_max_bytes) != 0) ||
      (o->allreduce_iters && parse_allreduce_iters(o->allreduce_iters, &cfg->ar_soak) != 0))
    return -1;
  if (o->no_sm)
    cfg->sm = false;
  cfg->progress = !o->no_progress && isatty(2);
  cfg->notice = stderr; /* the plan and its expected duration, before the first test */
  return 0;
}

static void print_report(const struct cli_bench_opts *o, const struct gr_bench_report *rep)
{
  if (o->out.json)
    cli_print_json(gr_bench_to_json(rep));
  else
    gr_print_bench(stdout, rep);
}

#ifndef GPURIG_MPI
/* This binary has no MPI: gpurig-mpi is built beside it when libopenmpi-dev
 * is there at build time. */
int cmd_bench_mpi(const struct cli_bench_opts *o, const struct gr_bench_config *cfg)
{
  (void)o;
  (void)cfg;
  gr_diag("gpurig: bench --mpi: this gpurig was built without MPI; install libopenmpi-dev "
          "(apt-get install libopenmpi-dev openmpi-bin), rebuild, and run "
          "`mpirun -np N gpurig-mpi bench --mpi`\n");
  return GR_EXIT_CANNOT_RUN;
}
#endif

int cmd_bench(int argc, char **argv)
{
  struct cli_bench_opts o;
  struct gr_parsed p;
  struct gr_machine m = {0};
  struct gr_bench_config cfg;
  struct gr_bench_report rep;
  struct gr_bench_links links;
  struct gr_bench_facts facts = {0};
  struct gr_err err = {0};
  const struct gr_bench_backend *be = NULL;
  bool have_topo = false;
  void *st = NULL;
  int rc;
  if (gr_parse_options(argc, argv, &bench_spec, &o, sizeof(o), &p) != 0)
    return GR_EXIT_FAIL;
  if (p.help) {
    bench_usage();
    return GR_EXIT_OK;
  }
  if (bench_config(&o, &cfg) != 0)
    return GR_EXIT_FAIL;
  if (o.per && !o.mpi) {
    gr_diag("gpurig: bench: --per belongs to --mpi (one rank per GPU or per node)\n");
    return GR_EXIT_FAIL;
  }
  if (o.mpi && (o.size || o.no_sm || o.like)) { /* copies are not measured across nodes */
    gr_diag("gpurig: bench: --mpi measures the all-reduce only; %s belongs to the copy tests\n",
            o.size ? "--size" : o.no_sm ? "--no-sm" : "--like");
    return GR_EXIT_FAIL;
  }
  if (o.mpi && o.allreduce_iters) { /* left out across processes: each rank would need the soak's timing */
    gr_diag("gpurig: bench: --allreduce-iters is not available with --mpi; run it on each node without "
            "--mpi\n");
    return GR_EXIT_FAIL;
  }
  if (o.mpi)
    return cmd_bench_mpi(&o, &cfg);
  struct gr_source src = cli_source_of(&o.src, false);
  if (cli_open_for_gpus(&src, &m, &have_topo, &err) != 0)
    return gr_report_error(&err);
  if (gr_bench_open(&be, &st, &err) != 0) {
    rc = gr_report_error(&err);
    goto out;
  }
  gr_bench_facts_read(be, st, &facts);
  gr_bench_links_set(&links, have_topo ? &m : NULL, &facts);
  if (gr_bench_run(be, st, &cfg, &links, &rep, &err) != 0) {
    rc = gr_report_error(&err);
    goto out;
  }
  print_report(&o, &rep);
  rc = gr_findings_exit(&rep.findings);
  gr_bench_report_free(&rep);
out:
  if (st)
    be->shutdown(st);
  gr_bench_facts_free(&facts);
  gr_machine_close(&m);
  return rc;
}
