/* gpurig burn: burn-in under the loads that break home-built rigs, watched
 * by the sampler, a verdict per GPU and per link. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/file.h"
#include "base/fs.h"
#include "cli/cli.h"
#include "cli/loop.h"
#include "gpu/bench.h"
#include "monitor/burn.h"
#include "print/burn.h"
#include "print/monitor.h"
#include "print/svg.h"

/* burn: the source (--root), JSON, and its own load, pattern, time and
 * files; the values stay text for parse_burn to check. */
struct burn_opts {
  struct gr_source_opts src;
  struct gr_output_opts out;
  struct gr_monitor_opts mon; /* interval and svg only */
  const char *load, *pattern, *gpus, *duration, *size, *log;
  bool quick, force;
};

#define BURN_STRING(name, arg, field, empty, help) GR_OPT_STRING_ROW(name, arg, struct burn_opts, field, empty, help)
static const struct gr_option burn_rows[] = {
    BURN_STRING("load", "LIST", load, NULL, "gemm, pcie, p2p, allreduce: the loads to run (default: all)"),
    BURN_STRING("pattern", "NAME", pattern, NULL, "all, staggered, per-gpu or pairs"),
    BURN_STRING("gpus", "LIST", gpus, NULL, "the GPUs to load (0,2,3)"),
    BURN_STRING("duration", "S", duration, NULL, "how long, default 600 (10 minutes); --quick: 60"),
    GR_OPT_FLAG_ROW("quick", 0, struct burn_opts, quick, "a short run: 60 s unless --duration says"),
    BURN_STRING("size", "SIZE", size, NULL, "bytes per copy, default 64M (the stand-in tests use less)"),
    BURN_STRING("interval", "S", mon.interval, NULL, "the sampler's interval, default 1"),
    BURN_STRING("svg", "FILE", mon.svg, "option '--svg' needs a file to write, not an empty value",
                "a chart of temperature, power and SM clock per GPU over the run, events marked"),
    BURN_STRING("log", "FILE", log, "option '--log' needs a file to write, not an empty value",
                "the run's timeline: every sample as a JSON line (as gpurig watch --json)"),
    GR_OPT_FLAG_ROW("force", 0, struct burn_opts, force,
                    "load GPUs that other processes compute on (refused by default, naming them)"),
};

static const struct gr_option_group burn_groups[] = {
    GR_OPTION_GROUP(gr_rows_source, struct burn_opts, src, gr_check_source),
    GR_OPTION_GROUP(gr_rows_json, struct burn_opts, out, NULL),
    GR_OPTION_OWN(burn_rows, NULL),
};
static const struct gr_command_options burn_spec = {burn_groups, sizeof(burn_groups) / sizeof(burn_groups[0]),
                                                    GR_POSITIONAL_NONE};

/* --help's option lines (--load, --pattern, --gpus and --quick are told in
 * the prose above them), and --force apart */
static const char *const burn_help[] = {
    "duration", "size", "interval",
    "json=the report as JSON (docs/burn.md)",
    "svg", "log",
    "root=watch a gathered tree's counters (tests: the stand-in libraries rewrite them)",
    NULL,
};
static const char *const burn_force_help[] = {"force", NULL};

static void burn_usage(void)
{
  printf("usage: gpurig burn [--load gemm,pcie,p2p,allreduce] [--pattern all|staggered|per-gpu|pairs] [--gpus LIST]\n"
         "                   [--duration SECONDS | --quick] [--size SIZE] [--interval SECONDS] [--json] [--svg FILE]\n"
         "                   [--log FILE.jsonl] [--force]\n"
         "                   [--root DIR]\n"
         "\n"
         "Loads the GPUs and the bus the way training does while the sampler (gpurig watch) reads every\n"
         "GPU and every PCIe link on their paths, then gives each GPU and each link a verdict (pass,\n"
         "warn, fail) with the reason and the place: the slot, the riser, the root port.\n"
         "\n"
         "Loads (default: all the machine supports):\n"
         "  gemm       matrix products on every GPU at once (cuBLAS, fp16 in, fp32 accumulate), n = 4096 or\n"
         "             less to fit, each product's first column checked exactly against the host's\n"
         "  pcie       host<->GPU copies in both directions at once on every GPU (ZeRO-3's gathers and\n"
         "             offloads), every copy verified\n"
         "  p2p        peer copies both ways between pairs of GPUs that can do P2P, verified\n"
         "  allreduce  an NCCL all-reduce loop timed one iteration at a time: an iteration over 10x the\n"
         "             median is a stall, reported with what the sampler saw then\n"

         "\n"
         "Patterns: all (default); staggered: one more GPU every duration/N seconds, to find the step\n"
         "at which errors, throttling or a lost GPU begin (the power-supply question); per-gpu: one\n"
         "GPU at a time; pairs: every pair of GPUs in turn. --gpus 0,2,3 loads a subset (the\n"
         "all-reduce needs every GPU).\n"
         "\n");
  gr_print_option_help(stdout, &burn_spec, burn_help, 15);
  printf("\n");
  gr_print_option_help(stdout, &burn_spec, burn_force_help, 15);
  printf("\n"
         "It never changes a clock, a power limit or a mode. SIGINT stops it with the verdicts so far.\n"
         "Verdict rules: docs/burn.md (AER and PCIe replays against DCGM's error rate, Xid classes,\n"
         "throttle reasons, lost GPUs, data checks, stalls).\n"
         "Exit status: 0 every GPU and link passed, 1 warnings, 2 a failure or bad input, 3 nothing to\n"
         "load (no GPU driver or compute runtime).\n");
}

/* One line on a terminal's stderr, rewritten after each sample. */
static void progress(void *ctx, const struct gr_sampler *s, double elapsed, double duration)
{
  const struct gr_burn_report *r = ctx; /* per-GPU TFLOPS ("T") of the last round */
  const struct gr_sample *x = gr_sampler_sample(s, 0);
  fprintf(stderr, "\rburn %4.0f/%.0f s ", elapsed, duration);
  for (unsigned i = 0; x && i < x->ngpu; i++) {
    const struct gr_gpu_dynamic *d = &x->gpu[i];
    if (x->gpu_read[i] == GR_READ_LOST)
      fprintf(stderr, " GPU%u LOST", i);
    else
      fprintf(stderr, " GPU%u %.0fT %.0fC %.0fW", i, r && i < r->ngpu ? r->gpu[i].tflops_last : 0,
              d->temp_c.ok ? d->temp_c.v : 0, d->power_w.ok ? d->power_w.v : 0);
  }
  fprintf(stderr, "  events %lu ", gr_sampler_nevents(s));
}

static int parse_loads(const char *text, unsigned *loads)
{
  *loads = 0;
  if (!text) {
    *loads = GR_LOAD_GEMM | GR_LOAD_PCIE | GR_LOAD_P2P | GR_LOAD_ALLREDUCE;
    return 0;
  }
  char *copy = xstrdup(text), *save = NULL;
  int rc = 0;
  for (char *w = strtok_r(copy, ",", &save); w && rc == 0; w = strtok_r(NULL, ",", &save)) {
    if (strcmp(w, "pcie") == 0)
      *loads |= GR_LOAD_PCIE;
    else if (strcmp(w, "p2p") == 0)
      *loads |= GR_LOAD_P2P;
    else if (strcmp(w, "allreduce") == 0)
      *loads |= GR_LOAD_ALLREDUCE;
    else if (strcmp(w, "gemm") == 0)
      *loads |= GR_LOAD_GEMM;
    else {
      fprintf(stderr, "gpurig: burn: --load %s: '%s' is not a load (gemm, pcie, p2p, allreduce)\n", text, w);
      rc = -1;
    }
  }
  free(copy);
  return rc == 0 && *loads == 0 ? (fprintf(stderr, "gpurig: burn: --load %s: no load named\n", text), -1) : rc;
}

/* --gpus 0,2,3: a bit per GPU index. */
static int parse_gpus(const char *text, unsigned long long *mask)
{
  *mask = 0;
  if (!text)
    return 0;
  char *copy = xstrdup(text), *save = NULL;
  int rc = 0;
  for (char *w = strtok_r(copy, ",", &save); w && rc == 0; w = strtok_r(NULL, ",", &save)) {
    long i;
    if (parse_long(w, 10, &i) && i >= 0 && i < 64)
      *mask |= 1ull << i;
    else
      rc = -1;
  }
  free(copy);
  if (rc != 0 || !*mask)
    fprintf(stderr, "gpurig: burn: --gpus %s: not a list of GPU indices (0,2,3)\n", text);
  return rc != 0 || !*mask ? -1 : 0;
}

static int parse_burn(const struct burn_opts *o, struct gr_burn_opts *b)
{
  memset(b, 0, sizeof(*b));
  b->duration_s = o->quick ? 60 : 600;
  b->stall_factor = 10;
  b->copy_bytes = (size_t)64 << 20;
  if (parse_loads(o->load, &b->loads) != 0 || parse_gpus(o->gpus, &b->gpus) != 0 ||
      cli_parse_interval("burn", o->mon.interval, &b->interval_s) != 0)
    return -1;
  static const char *const patterns[] = {"all", "staggered", "per-gpu", "pairs"};
  b->pattern = GR_PAT_ALL;
  bool known = !o->pattern;
  for (int k = 0; o->pattern && k < 4; k++)
    if (strcmp(o->pattern, patterns[k]) == 0) {
      b->pattern = (enum gr_burn_pattern)k;
      known = true;
    }
  if (!known) {
    fprintf(stderr, "gpurig: burn: --pattern %s: all, staggered, per-gpu or pairs\n", o->pattern);
    return -1;
  }
  if (o->duration && !gr_parse_seconds(o->duration, 1, 7 * 24 * 3600, &b->duration_s)) {
    fprintf(stderr, "gpurig: burn: --duration %s: not a time from 1 s to a week (\"600\", \"90s\")\n", o->duration);
    return -1;
  }
  size_t bytes;
  if (o->size && (!gr_parse_size(o->size, &bytes) || bytes < 4096 || bytes > ((size_t)1 << 30) || bytes % 4)) {
    fprintf(stderr, "gpurig: burn: --size %s: a size from 4K to 1G, a multiple of 4 bytes\n", o->size);
    return -1;
  }
  if (o->size)
    b->copy_bytes = bytes;
  b->stop = cli_stop_asked;
  if (isatty(STDERR_FILENO))
    b->progress = progress;
  return 0;
}

/* --log FILE.jsonl: every sample of the run as JSON lines (as watch --json
 * prints them), oldest first, with the events each found. */
static int write_log(const char *path, const struct gr_sampler *s)
{
  struct gr_err err = {0};
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f)
    return gr_report_error(&(struct gr_err){.code = GR_EXIT_FAIL, .msg = "out of memory"});
  unsigned long since = 0;
  for (unsigned ago = gr_sampler_count(s); ago-- > 0;) {
    json_t *j = gr_sample_at_to_json(s, ago, &since);
    json_dumpf(j, f, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15));
    fputc('\n', f);
    json_decref(j);
  }
  fclose(f);
  int rc = gr_file_write(path, buf, len, &err);
  free(buf);
  return rc == 0 ? 0 : gr_report_error(&err);
}

static int report(const struct burn_opts *o, struct cli_monitor *mon, const struct gr_burn_opts *b,
                  const struct gr_burn_report *r)
{
  struct gr_err err = {0};
  if (b->progress)
    fputc('\n', stderr);
  if (o->out.json)
    cli_print_json(gr_burn_to_json(mon->s, b, r));
  else
    gr_print_burn(stdout, mon->s, b, r);
  if (o->log && write_log(o->log, mon->s) != 0)
    return GR_EXIT_FAIL;
  if (o->mon.svg) {
    struct gr_svg_mark *marks = xcalloc(r->nstall + 1, sizeof(*marks));
    char (*texts)[96] = xcalloc(r->nstall + 1, sizeof(*texts));
    for (size_t k = 0; k < r->nstall; k++) {
      snprintf(texts[k], sizeof(texts[k]), "all-reduce stall: %.3f ms, %.0fx the median", r->stall[k].seconds * 1e3,
               r->stall[k].seconds / r->stall[k].median_s);
      marks[k] = (struct gr_svg_mark){r->stall[k].mono, texts[k]};
    }
    char *svg = gr_svg_timeline(mon->s, "gpurig burn", marks, r->nstall);
    free(marks);
    free(texts);
    int w = gr_file_write(o->mon.svg, svg, strlen(svg), &err);
    free(svg);
    if (w != 0)
      return gr_report_error(&err);
  }
  return gr_findings_exit(&r->verdicts);
}

/* A GPU another process computes on is not loaded unless --force: its job
 * would slow down or fail, and the burn's figures would be wrong. Returns
 * how many selected GPUs are in use (named on stderr), -1 when the driver
 * cannot tell (said, not refused). */
static int gpus_in_use(const struct cli_monitor *mon, const struct gr_burn_opts *b)
{
  const struct gr_gpu_backend *be = mon->g.be;
  int busy = 0;
  if (!mon->have_gpus || !be->processes)
    return -1;
  for (unsigned i = 0; i < mon->g.count; i++) {
    struct gr_gpu_process p[8];
    unsigned n = 0;
    if ((b->gpus && (i >= 64 || !((b->gpus >> i) & 1))) || be->processes(mon->g.state, i, p, 8, &n) != 0)
      continue;
    for (unsigned k = 0; k < n; k++) {
      if (p[k].pid == (unsigned)getpid())
        continue;
      char path[64], comm[64] = "";
      snprintf(path, sizeof(path), "/proc/%u/comm", p[k].pid);
      if (!mon->m.has_fs || gr_fs_read_str(&mon->m.fs, path, comm, sizeof(comm)) != 0)
        comm[0] = '\0'; /* gone, or another machine's tree */
      fprintf(stderr, "gpurig: burn: GPU%u %s is in use: %s%spid %u", i, gr_sampler_gpu_static(mon->s, i)->busid, comm,
              comm[0] ? " " : "", p[k].pid);
      if (p[k].mem_gib.ok)
        fprintf(stderr, ", %.1f GiB", p[k].mem_gib.v);
      fputc('\n', stderr);
      busy++;
    }
  }
  return busy;
}

int cmd_burn(int argc, char **argv)
{
  struct burn_opts o;
  struct gr_parsed p;
  struct gr_burn_opts b;
  struct cli_monitor mon;
  struct gr_err err = {0};
  const struct gr_bench_backend *be;
  void *st;
  if (gr_parse_options(argc, argv, &burn_spec, &o, sizeof(o), &p) != 0)
    return GR_EXIT_FAIL;
  if (p.help) {
    burn_usage();
    return GR_EXIT_OK;
  }
  if (parse_burn(&o, &b) != 0)
    return GR_EXIT_FAIL;
  /* the ring holds the whole run: the chart and the log cover all of it */
  double held = b.duration_s / b.interval_s + 8;
  if (cli_monitor_open("burn", &o.src, NULL, b.interval_s, held > 200000 ? 200000 : (unsigned)held, &mon, &err) != 0)
    return gr_report_error(&err);
  /* before gpurig's own compute contexts exist */
  if (!o.force && gpus_in_use(&mon, &b) > 0) {
    fprintf(stderr, "gpurig: burn: not loading GPUs other processes use: stop them, choose others with --gpus, "
                    "or give --force\n");
    cli_monitor_close(&mon);
    return GR_EXIT_FAIL;
  }
  if (gr_bench_open(&be, &st, &err) != 0) {
    cli_monitor_close(&mon);
    return gr_report_error(&err);
  }
  cli_catch_interrupt();
  struct gr_burn_report r;
  b.progress_ctx = &r;
  int rc = gr_burn_run(be, st, mon.s, &b, &r, &err);
  rc = rc == 0 ? report(&o, &mon, &b, &r) : gr_report_error(&err);
  gr_burn_report_free(&r);
  cli_monitor_close(&mon);
  be->shutdown(st);
  return rc;
}
