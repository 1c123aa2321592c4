/* gpurig burn: burn-in under the loads that break home-built rigs, watched
 * by the sampler, a verdict per GPU and per link. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/file.h"
#include "base/fs.h"
#include "cli/cli.h"
#include "cli/loop.h"
#include "analysis/machine.h"
#include "gpu/bench.h"
#include "monitor/burn.h"
#include "print/burn.h"
#include "print/monitor.h"
#include "print/svg.h"

enum { BURN_RING = 1200 }; /* samples held: 20 minutes at 1 s (the chart); the log has the whole run */
#define LOG_SYNC_S 5.0     /* the log reaches the disk at least this often */

/* burn: the source (--root), JSON, and its own load, pattern, time and
 * files; the values stay text for parse_burn to check. */
struct burn_opts {
  struct gr_source_opts src;
  struct gr_output_opts out;
  struct gr_monitor_opts mon; /* interval and svg only */
  const char *load, *pattern, *gpus, *duration, *size, *log, *psu, *psu_rig;
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
                "the timeline: a JSON line per sample, appended as taken (as gpurig watch --json)"),
    BURN_STRING("psu", "WATTS", psu, NULL,
                "hold the GPUs' measured draw (peak and mean, summed) against this PSU's watts"),
    BURN_STRING("rig", "RIG", psu_rig, "option '--rig' needs a rig file or a name from data/rigs/, not an empty value",
                "the same against the rig's psu lines together, its CPUs at TDP added"),
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
    "duration", "size", "interval", "psu", "rig",
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
         "                   [--log FILE.jsonl] [--psu WATTS | --rig RIG] [--force]\n"
         "                   [--root DIR]\n"
         "\n"
         "Loads the GPUs and the bus the way training does while the sampler (gpurig watch) reads every\n"
         "GPU and every PCIe link on their paths, then gives each GPU and each link a verdict (pass,\n"
         "warn, fail) with the reason and the place: the slot, the riser, the root port.\n"
         "\n"
         "Loads (default: all the machine supports):\n"
         "  gemm       matrix products on every GPU at once (cuBLAS, or rocBLAS on AMD GPUs, fp16 in, fp32\n"
         "             accumulate), n = 4096 or less to fit, each product's first column checked exactly\n"
         "             against the host's;\n"
         "             the loads take turns, and the products fill 3/4 of each round\n"
         "  pcie       host<->GPU copies in both directions at once on every GPU (ZeRO-3's gathers and\n"
         "             offloads), every copy verified\n"
         "  p2p        peer copies both ways between pairs of GPUs that can do P2P, verified\n"
         "  allreduce  an NCCL (RCCL on AMD GPUs) all-reduce loop timed one iteration at a time: an\n"
         "             iteration over 10x the median is a stall, reported with what the sampler saw then\n"

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
         "It never changes a clock, a power limit or a mode. SIGINT, SIGTERM and SIGHUP stop it with the\n"
         "verdicts so far, the chart and the log, and a burn.interrupted warning: a stopped run exits 1 (2\n"
         "with a failure), never 0.\n"
         "Verdict rules: docs/burn.md (AER and PCIe replays against DCGM's error rate, Xid classes,\n"
         "throttle reasons, lost GPUs, data checks, stalls).\n"
         "Exit status: 0 every GPU and link passed over the whole duration, 1 warnings (a run stopped\n"
         "early included), 2 a failure or bad input, 3 nothing to load (no GPU driver or compute runtime).\n");
}

/* What runs after each sample: the progress line on a terminal, the log. */
struct sampled {
  bool tty;
  int log_fd;                /* --log, -1 none */
  const char *log_path;
  bool log_failed;
  unsigned long since;       /* the sampler's events written so far */
  double synced;             /* CLOCK_MONOTONIC of the last fsync */
  double psu_w;              /* --psu or --rig's PSUs: the log's power_budget_ratio, 0 none */
};

/* One line on a terminal's stderr, rewritten after each sample. */
static void progress_line(const struct gr_sampler *s, const struct gr_burn_report *r, double elapsed, double duration)
{
  const struct gr_sample *x = gr_sampler_sample(s, 0); /* per-GPU TFLOPS ("T") of the last round */
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

/* The events of a log line at burn's severity: an AER or replay event of a
 * link or GPU over its allowance so far is a failure. The line's events are
 * the sampler's from since on, in order, those the ring dropped left out. */
static void judge_events(json_t *line, const struct gr_sampler *s, const struct gr_burn_report *r,
                         unsigned long since)
{
  json_t *events = json_object_get(line, "events");
  size_t j = 0;
  for (unsigned long k = since; k < gr_sampler_nevents(s) && j < json_array_size(events); k++) {
    const struct gr_mon_event *e = gr_sampler_event(s, k);
    if (!e)
      continue;
    json_object_set_new(json_array_get(events, j++), "severity", json_string(gr_sev_name(gr_burn_event_sev(r, e))));
  }
}

static void log_write(struct sampled *c, const char *text, size_t len)
{
  while (len > 0 && !c->log_failed) {
    ssize_t n = write(c->log_fd, text, len);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      c->log_failed = true;
      fprintf(stderr, "gpurig: burn: --log %s: cannot write: %s; the run goes on without it\n", c->log_path,
              strerror(n < 0 ? errno : EIO));
    }
    text += n > 0 ? n : 0;
    len -= n > 0 ? (size_t)n : len;
  }
}

/* The newest sample as a line of the log, written at once (a SIGKILL
 * keeps it: the kernel has it), on disk every few seconds (a host that
 * hangs or loses power keeps all but the last seconds). */
static void log_sample(struct sampled *c, const struct gr_sampler *s, const struct gr_burn_report *r)
{
  unsigned long since = c->since;
  json_t *j = gr_sample_at_to_json(s, 0, &c->since, c->psu_w);
  judge_events(j, s, r, since);
  char *text = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15));
  json_decref(j);
  if (text) {
    log_write(c, text, strlen(text));
    log_write(c, "\n", 1);
    free(text);
  }
  double now = gr_clock_s(CLOCK_MONOTONIC);
  if (!c->log_failed && now - c->synced >= LOG_SYNC_S) {
    fdatasync(c->log_fd);
    c->synced = now;
  }
}

static void sampled(void *ctx, const struct gr_sampler *s, const struct gr_burn_report *r, double elapsed,
                    double duration)
{
  struct sampled *c = ctx;
  if (c->tty)
    progress_line(s, r, elapsed, duration);
  if (c->log_fd >= 0)
    log_sample(c, s, r);
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

/* --gpus 0,2,3: a bit per GPU index; digits and commas only, no empty
 * item ("1,,2" and "0, 1" are refused, not read as something else). */
static int parse_gpus(const char *text, unsigned long long *mask)
{
  *mask = 0;
  if (!text)
    return 0;
  int rc = 0;
  for (const char *p = text; rc == 0;) {
    size_t n = strspn(p, "0123456789");
    long i = 0;
    for (size_t k = 0; k < n && i < 64; k++)
      i = i * 10 + (p[k] - '0');
    if (n == 0 || n > 2 || i >= 64 || (p[n] != ',' && p[n] != '\0'))
      rc = -1;
    else
      *mask |= 1ull << i;
    if (p[n] != ',')
      break;
    p += n + 1;
  }
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
  b->stop = cli_stop_signal;
  return 0;
}

/* An index --gpus names that the driver does not have: one line naming it
 * and what exists. */
static int gpus_exist(const char *text, unsigned long long mask, unsigned ngpu)
{
  for (unsigned i = 0; i < 64; i++)
    if (((mask >> i) & 1) && i >= ngpu) {
      if (ngpu > 1)
        fprintf(stderr, "gpurig: burn: --gpus %s: GPU %u: the driver sees %u GPUs (0-%u)\n", text, i, ngpu, ngpu - 1);
      else
        fprintf(stderr, "gpurig: burn: --gpus %s: GPU %u: the driver sees %s\n", text, i,
                ngpu ? "1 GPU (0)" : "no GPU");
      return -1;
    }
  return 0;
}

/* --svg and --log, refused before any load when they could not be written
 * (a directory not there, a symlink, a device): the log is opened now. */
static int open_targets(const struct burn_opts *o, struct sampled *c)
{
  struct gr_err err = {0};
  if (o->mon.svg && gr_out_check(o->mon.svg, &err) != 0) {
    fprintf(stderr, "gpurig: burn: --svg %s\n", err.msg);
    return -1;
  }
  if (o->log && (c->log_fd = gr_log_open(o->log, &err)) < 0) {
    fprintf(stderr, "gpurig: burn: --log %s\n", err.msg);
    return -1;
  }
  c->log_path = o->log;
  c->synced = gr_clock_s(CLOCK_MONOTONIC);
  return 0;
}

/* The chart's judge: burn's severity of an event (gr_burn_event_sev). */
static enum gr_sev judge(const void *ctx, const struct gr_mon_event *e)
{
  return gr_burn_event_sev(ctx, e);
}

static int report(const struct burn_opts *o, struct cli_monitor *mon, const struct gr_burn_opts *b,
                  const struct gr_burn_report *r, const struct sampled *c)
{
  struct gr_err err = {0};
  if (c->tty)
    fputc('\n', stderr);
  if (o->out.json)
    cli_print_json(gr_burn_to_json(mon->s, b, r));
  else
    gr_print_burn(stdout, mon->s, b, r);
  if (o->mon.svg) {
    struct gr_svg_mark *marks = xcalloc(r->nstall + 1, sizeof(*marks));
    char (*texts)[96] = xcalloc(r->nstall + 1, sizeof(*texts));
    for (size_t k = 0; k < r->nstall && k < GR_BURN_STALLS_KEPT; k++) {
      snprintf(texts[k], sizeof(texts[k]), "all-reduce stall: %.3f ms, %.0fx the median", r->stall[k].seconds * 1e3,
               r->stall[k].seconds / r->stall[k].median_s);
      marks[k] = (struct gr_svg_mark){r->stall[k].mono, texts[k]};
    }
    size_t kept = r->nstall < GR_BURN_STALLS_KEPT ? r->nstall : GR_BURN_STALLS_KEPT;
    char *svg = gr_svg_timeline_judged(mon->s, "gpurig burn", marks, kept, judge, r);
    free(marks);
    free(texts);
    int w = gr_file_write(o->mon.svg, svg, strlen(svg), &err);
    free(svg);
    if (w != 0)
      return gr_report_error(&err);
  }
  if (c->log_failed)
    return GR_EXIT_FAIL; /* said when it happened */
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

/* Opens the monitor and refuses what cannot run: an unknown --gpus index,
 * GPUs in use, output files that could not be written. 0, or an exit status
 * (the monitor closed). */
static int burn_setup(const struct burn_opts *o, const struct gr_burn_opts *b, struct cli_monitor *mon,
                      struct sampled *c)
{
  struct gr_err err = {0};
  /* a fixed ring, whatever the duration (the log holds the whole run): the
   * chart shows its last BURN_RING samples */
  double held = b->duration_s / b->interval_s + 8;
  unsigned ring = held > BURN_RING ? BURN_RING : (unsigned)held;
  if (cli_monitor_open_quiet("burn", &o->src, NULL, b->interval_s, ring, b->interval_s, mon, &err) != 0)
    return gr_report_error(&err);
  int rc = GR_EXIT_OK;
  /* without a driver, the missing runtime is said below (exit 3), not the index */
  if (mon->have_gpus && gpus_exist(o->gpus, b->gpus, gr_sampler_ngpu(mon->s)) != 0)
    rc = GR_EXIT_FAIL;
  else if (!o->force && gpus_in_use(mon, b) > 0) { /* before gpurig's own compute contexts exist */
    fprintf(stderr, "gpurig: burn: not loading GPUs other processes use: stop them, choose others with --gpus, "
                    "or give --force\n");
    rc = GR_EXIT_FAIL;
  } else if (open_targets(o, c) != 0) {
    rc = GR_EXIT_FAIL;
  }
  if (rc != GR_EXIT_OK)
    cli_monitor_close(mon);
  return rc;
}

/* --psu WATTS, or --rig RIG's psu lines together with its CPUs' TDP as
 * the rest of their load: the budget the power verdict holds the GPUs'
 * measured draw against, named in what. */
static int burn_budget(const struct burn_opts *o, struct gr_burn_opts *b, char *what, size_t cap)
{
  if (o->psu && o->psu_rig) {
    fprintf(stderr, "gpurig: burn: --psu and --rig both give the power budget; give one\n");
    return -1;
  }
  if (o->psu) {
    char *end;
    b->psu_w = strtod(o->psu, &end);
    if (end == o->psu || *end || !(b->psu_w >= 50 && b->psu_w <= 100000)) {
      fprintf(stderr, "gpurig: burn: --psu %s: a PSU's watts, from 50 to 100000\n", o->psu);
      return -1;
    }
    snprintf(what, cap, "--psu");
  }
  if (!o->psu_rig)
    return 0;
  struct gr_source src = gr_source_from(NULL, NULL, o->psu_rig, NULL, false);
  struct gr_machine m;
  struct gr_err err = {0};
  if (gr_machine_open(&src, 0, &m, &err) != 0)
    return gr_report_error(&err), -1;
  int rc = 0;
  if (!m.has_power) {
    fprintf(stderr, "gpurig: burn: --rig %s states no psu line: give --psu WATTS, or add `psu NAME WATTS` to it\n",
            o->psu_rig);
    rc = -1;
  }
  size_t off = (size_t)snprintf(what, cap, "--rig %s: psu", o->psu_rig);
  for (size_t i = 0; rc == 0 && i < m.power.npsus && off < cap; i++) {
    b->psu_w += m.power.psus[i].watts;
    off += (size_t)snprintf(what + off, cap - off, "%s %s", i ? "," : "", m.power.psus[i].name);
  }
  b->psu_other_w = m.power.cpu_w > 0 ? m.power.cpu_w : 0;
  gr_machine_close(&m);
  return rc;
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
  char budget[160] = "";
  if (parse_burn(&o, &b) != 0 || burn_budget(&o, &b, budget, sizeof(budget)) != 0)
    return GR_EXIT_FAIL;
  b.psu_what = budget;
  struct sampled c = {.tty = isatty(STDERR_FILENO), .log_fd = -1, .psu_w = b.psu_w};
  int rc = burn_setup(&o, &b, &mon, &c);
  if (rc != GR_EXIT_OK) {
    if (c.log_fd >= 0)
      close(c.log_fd);
    return rc;
  }
  if (gr_bench_open(&be, &st, &err) != 0) {
    cli_monitor_close(&mon);
    if (c.log_fd >= 0)
      close(c.log_fd);
    return gr_report_error(&err);
  }
  /* from here a signal stops the run with its partial report, chart and log */
  cli_catch_stop();
  struct gr_burn_report r;
  b.progress = sampled;
  b.progress_ctx = &c;
  rc = gr_burn_run(be, st, mon.s, &b, &r, &err);
  rc = rc == 0 ? report(&o, &mon, &b, &r, &c) : gr_report_error(&err);
  if (c.log_fd >= 0 && (fsync(c.log_fd) != 0 || close(c.log_fd) != 0) && !c.log_failed) {
    fprintf(stderr, "gpurig: burn: --log %s: cannot write: %s\n", o.log, strerror(errno));
    rc = rc > GR_EXIT_FAIL ? rc : GR_EXIT_FAIL;
  }
  gr_burn_report_free(&r);
  cli_monitor_close(&mon);
  be->shutdown(st);
  return rc;
}
