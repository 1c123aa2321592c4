/* gpurig watch: the sampler on a terminal (a full-screen view), or as lines
 * and JSON lines for logs and pipes. The monitor loop it shares with export
 * and burn is cli/loop.c. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/loop.h"
#include "base/file.h"
#include "print/monitor.h"
#include "print/svg.h"
#include "print/tui.h"

/* watch: the source (--root; --input is refused with a reason), JSON
 * lines, and the monitor group (--listen and --textfile are export's, and
 * refused below in words that say so). */
struct watch_opts {
  struct gr_source_opts src;
  struct gr_output_opts out;
  struct gr_monitor_opts mon;
};

static const struct gr_option_group watch_groups[] = {
    GR_OPTION_GROUP(gr_rows_source, struct watch_opts, src, gr_check_source),
    GR_OPTION_GROUP(gr_rows_json, struct watch_opts, out, NULL),
    GR_OPTION_GROUP(gr_rows_monitor, struct watch_opts, mon, NULL),
};
static const struct gr_command_options watch_spec = {watch_groups, sizeof(watch_groups) / sizeof(watch_groups[0]),
                                                     GR_POSITIONAL_NONE};

/* --help's option lines, in watch's order and words */
static const char *const watch_help[] = {
    "once=one sample as plain lines (a line per GPU, per link with AER errors, per event)",
    "count=N samples as lines (like nvidia-smi dmon), then exit",
    "interval=seconds between samples, 0.1 to 3600 (\"500ms\", \"2s\"); default 1",
    "json=JSON lines, one object per sample (docs/monitor.md)",
    "root=a gathered tree whose counter files may change between samples",
    "kmsg",
    "svg=at the end, draw the samples held as an SVG chart: per GPU temperature, power\n"
    "and SM clock over time, every event marked and listed; a file, not - (standard\n"
    "output carries the samples)",
    "psu=with --json, the power supply's watts: each line's power_budget_ratio is the\n"
    "GPUs' summed draw (power_total_w) over it",
    NULL,
};

static void watch_usage(void)
{
  printf("usage: gpurig watch [--once | --count N] [--interval SECONDS] [--json] [--root DIR] [--kmsg FILE]\n"
         "                    [--svg FILE] [--psu WATTS]\n"
         "\n"
         "Samples every GPU and every PCIe link on a GPU's path to its root port, again and again:\n"
         "utilisation, memory, power and limit, GPU and memory temperature, fan, SM and memory clocks,\n"
         "why the clocks are held down (throttle reasons in words), PCIe rx/tx GB/s, the link's\n"
         "generation and width now and at most, PCIe replays, ECC and row remapping, NVLink errors,\n"
         "and each link's AER error counts at both ends, with the physical slot where the board names\n"
         "it. Errors, a link changing width (or speed while its GPU is busy: downtraining), a busy\n"
         "GPU whose link runs below its maximum (state SLOW), a GPU lost or not answering, and Xids\n"
         "become events.\n"
         "A GPU whose driver call hangs is shown STALE after 0.5 s; the others go on.\n"
         "\n"
         "On a terminal: a full-screen view (q quits, s sorts by index/utilisation/temperature/\n"
         "power, p pauses), with a sparkline of each GPU's utilisation and the events as they come.\n"
         "A narrow terminal drops columns, the clocks and memory first, the link and replays last.\n"
         "\n");
  gr_print_option_help(stdout, &watch_spec, watch_help, 18);
  printf("\n"
         "Without a terminal (a pipe, a log), watch prints lines until interrupted.\n"
         "GPURIG_DRIVER_DIR=DIR loads the driver libraries from DIR (the tests use stand-ins).\n"
         "Exit status: 0 ok, 1 a warning event (AER errors, a stale GPU, a link that changed to a\n"
         "narrower width, or runs below its maximum under load, PCIe replays),\n"
         "2 a failure (a lost GPU, a fatal AER error, an Xid that needs a reset) or bad input,\n"
         "3 nothing to watch.\n");
}

static int watch_lines(const struct watch_opts *o, struct cli_monitor *mon, long count, double interval,
                       double psu_w)
{
  struct gr_err err = {0};
  unsigned long since = 0;
  double next = gr_clock_s(CLOCK_MONOTONIC);
  for (long n = 0; count <= 0 || n < count; n++) {
    if (n > 0 && !cli_sleep_until(&next, interval))
      break;
    if (gr_sampler_step(mon->s, &err) != 0)
      return gr_report_error(&err);
    if (o->out.json) { /* one compact object per line: JSON lines, no allocation per sample */
      unsigned long from = since;
      gr_sample_json_line(stdout, mon->s, 0, &from, psu_w);
    } else
      gr_print_sample_text(stdout, mon->s, since, n == 0);
    since = gr_sampler_nevents(mon->s);
    if (fflush(stdout) != 0)
      break; /* the reader went away; main reports the write error */
  }
  return gr_findings_exit(gr_sampler_findings(mon->s)); /* the worst event's */
}

static int watch_screen(struct cli_monitor *mon, double interval)
{
  struct gr_err err = {0};
  struct gr_tui_view v = {.interval_s = interval};
  struct gr_tui *t = gr_tui_open();
  if (!t) {
    gr_diag("gpurig: watch: this terminal cannot be driven (TERM=%s); use --once, --count or --json\n",
            getenv("TERM") ? getenv("TERM") : "");
    return GR_EXIT_CANNOT_RUN;
  }
  int rc = GR_EXIT_OK;
  double next = gr_clock_s(CLOCK_MONOTONIC);
  bool due = true;
  while (!cli_stop_asked()) {
    if (due && !v.paused && gr_sampler_step(mon->s, &err) != 0) {
      rc = -1;
      break;
    }
    gr_tui_draw(t, mon->s, &v);
    double left = next + interval - gr_clock_s(CLOCK_MONOTONIC);
    int k = gr_tui_key(t, left > 0 ? (int)(left * 1000) : 0);
    due = k < 0;
    if (due)
      next = gr_clock_s(CLOCK_MONOTONIC);
    if (k == 'q' || k == 'Q')
      break;
    if (k == 's' || k == 'S')
      v.sort = (enum gr_tui_sort)((v.sort + 1) % GR_SORT_COUNT);
    if (k == 'p' || k == 'P')
      v.paused = !v.paused;
  }
  gr_tui_close(t);
  if (rc < 0)
    return gr_report_error(&err);
  return gr_findings_exit(gr_sampler_findings(mon->s)); /* the worst event's */
}

/* --svg FILE: refused before any sampling when it could not be written at
 * the end (a directory that is not there, a link or a FIFO in its place),
 * and "-": standard output is the samples' (lines, JSON lines or the
 * screen), and an SVG after them would break every reader of that stream. */
static int svg_target_ok(const char *path)
{
  struct stat st;
  if (gr_file_is_stdout(path)) { /* the chart would be appended to the lines or JSON lines there */
    gr_diag("gpurig: watch: --svg %s: standard output carries the samples; give the chart a file\n", path);
    return -1;
  }
  char *dir = xstrdup(path), *slash = strrchr(dir, '/');
  const char *parent = slash ? (slash == dir ? "/" : (*slash = '\0', dir)) : ".";
  int rc = 0;
  if (stat(parent, &st) != 0 || !S_ISDIR(st.st_mode)) {
    gr_diag("gpurig: watch: --svg %s: %s: no such directory\n", path, parent);
    rc = -1;
  } else if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
    gr_diag("gpurig: watch: --svg %s: %s; gpurig writes only a new file or over a regular file\n", path,
            gr_file_kind(st.st_mode));
    rc = -1;
  }
  free(dir);
  return rc;
}

static int write_svg(const char *path, const struct gr_sampler *s)
{
  struct gr_err err = {0};
  char *svg = gr_svg_timeline(s, "gpurig watch", NULL, 0);
  int rc = gr_file_write(path, svg, strlen(svg), &err);
  free(svg);
  return rc == 0 ? 0 : gr_report_error(&err);
}

int cmd_watch(int argc, char **argv)
{
  struct watch_opts o;
  struct gr_parsed p;
  struct cli_monitor mon;
  struct gr_err err = {0};
  double interval = 1.0;
  long count = 0;
  if (gr_parse_options(argc, argv, &watch_spec, &o, sizeof(o), &p) != 0)
    return GR_EXIT_FAIL;
  if (p.help) {
    watch_usage();
    return GR_EXIT_OK;
  }
  if (o.mon.listen || o.mon.textfile) {
    gr_diag("gpurig: watch: --%s belongs to gpurig export\n", o.mon.listen ? "listen" : "textfile");
    return GR_EXIT_FAIL;
  }
  if (cli_parse_interval("watch", o.mon.interval, &interval) != 0 || (o.mon.svg && svg_target_ok(o.mon.svg) != 0))
    return GR_EXIT_FAIL;
  double psu_w;
  if (cli_parse_count("watch", &o.mon, &count) != 0 || cli_parse_psu("watch", o.mon.psu, &psu_w) != 0)
    return GR_EXIT_FAIL;
  if (psu_w > 0 && !o.out.json) { /* the share is a field of the JSON lines; the screen has no room for it */
    gr_diag("gpurig: watch: --psu adds power_budget_ratio to the --json lines; give --json\n");
    return GR_EXIT_FAIL;
  }
  bool screen = !o.mon.once && !o.mon.count && !o.out.json && isatty(STDOUT_FILENO) && isatty(STDIN_FILENO);
  if (cli_monitor_open("watch", &o.src, o.mon.kmsg, interval, screen ? 1200 : 64, &mon, &err) != 0)
    return gr_report_error(&err);
  /* docs/cli.md's exit 3: no driver, no GPU on the bus, no link to read */
  if (!mon.have_gpus && gr_sampler_nlinks(mon.s) == 0 && mon.m.topo.ngpus == 0) {
    fprintf(stderr, "gpurig: watch: nothing to watch: no GPU driver, no GPU on the bus and no PCIe link\n");
    cli_monitor_close(&mon);
    return GR_EXIT_CANNOT_RUN;
  }
  cli_catch_stop();
  int rc = screen ? watch_screen(&mon, interval) : watch_lines(&o, &mon, count, interval, psu_w);
  /* GPUs on the bus that no driver answers for: their values are all missing */
  if (!mon.have_gpus && mon.m.topo.ngpus > 0) {
    fprintf(stderr, "gpurig: watch: warning: the bus shows %zu GPU(s) and no GPU driver answers for them\n",
            mon.m.topo.ngpus);
    if (rc == GR_EXIT_OK)
      rc = GR_EXIT_WARN;
  }
  if (o.mon.svg && gr_sampler_count(mon.s) > 0) {
    int w = write_svg(o.mon.svg, mon.s);
    if (w != 0)
      rc = w;
  }
  cli_monitor_close(&mon);
  return rc;
}
