/* gpurig export: the sampler's newest sample as Prometheus metrics, served
 * over HTTP at /metrics (cli/http.c, libmicrohttpd) and/or written for
 * node_exporter's textfile collector. A scrape renders what the sampler
 * last read: it never waits on hardware. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "base/file.h"
#include "cli/cli.h"
#include "cli/http.h"
#include "cli/loop.h"
#include "doctor/doctor.h"
#include "print/monitor.h"

enum { DOCTOR_EVERY_S = 300 };

/* export: --root (--input is refused with a reason) and the monitor group
 * (--svg is watch's, refused below in words that say so). */
struct export_opts {
  struct gr_source_opts src;
  struct gr_monitor_opts mon;
};

static const struct gr_option_group export_groups[] = {
    GR_OPTION_GROUP(gr_rows_source, struct export_opts, src, gr_check_source),
    GR_OPTION_GROUP(gr_rows_monitor, struct export_opts, mon, NULL),
};
static const struct gr_command_options export_spec = {
    export_groups, sizeof(export_groups) / sizeof(export_groups[0]), GR_POSITIONAL_NONE};

/* --help's option lines, in export's order and words */
static const char *const export_help[] = {
    "listen",
    "textfile",
    "interval",
    "count=stop after N samples; --once: one sample (with --textfile, for cron)",
    "root=a gathered tree whose counter files may change between samples",
    "kmsg",
    NULL,
};

static void export_usage(void)
{
  printf("usage: gpurig export [--listen ADDR:PORT] [--textfile DIR] [--interval SECONDS] [--count N | --once]\n"
         "                     [--root DIR] [--kmsg FILE]\n"
         "\n"
         "Samples the GPUs and their PCIe links (as gpurig watch) and serves the newest sample as\n"
         "Prometheus metrics at http://ADDR:PORT/metrics: dcgm-exporter's names and labels for what\n"
         "gpurig reads (DCGM_FI_DEV_GPU_TEMP, _POWER_USAGE, _FB_USED, _SM_CLOCK, _PCIE_REPLAY_COUNTER,\n"
         "_XID_ERRORS, ...), so existing Grafana dashboards work on GeForce rigs, and gpurig's own:\n"
         "gpurig_pcie_aer_errors_total{link,end,slot,severity}, gpurig_pcie_link_gen/_width (now and\n"
         "_max), gpurig_gpu_throttle{reason}, gpurig_gpu_up (0 when a GPU is lost: the series stays),\n"
         "gpurig_finding{id,severity} (gpurig doctor, every 5 minutes), gpurig_sample_age_seconds.\n"
         "docs/monitor.md has the table, a systemd unit and a Slurm note.\n"
         "\n");
  gr_print_option_help(stdout, &export_spec, export_help, 20);
  printf("\n"
         "It reads only; it needs no root (root adds the AER counters some kernels restrict).\n"
         "Exit status: 0 stopped cleanly (SIGINT, SIGTERM or --count), 2 bad input, the address\n"
         "cannot be bound or the textfile cannot be written, 3 nothing to watch.\n");
}

struct exporter {
  struct cli_monitor mon;
  struct gr_doctor_report doc; /* guarded by the sampler's lock */
  bool have_doc;
  double doctor_at; /* CLOCK_MONOTONIC of the last doctor run */
  char host[256];
};

static char *render(void *ctx)
{
  struct exporter *x = ctx;
  gr_sampler_lock(x->mon.s);
  char *text = gr_prom_render(x->mon.s, x->have_doc ? &x->doc.findings : NULL, x->host, gr_clock_s(CLOCK_MONOTONIC));
  gr_sampler_unlock(x->mon.s);
  return text;
}

static int write_textfile(struct exporter *x, const char *dir, struct gr_err *err)
{
  char path[4096];
  if (snprintf(path, sizeof(path), "%s/gpurig.prom", dir) >= (int)sizeof(path))
    return gr_fail(err, GR_EXIT_FAIL, "--textfile %s: path too long", dir);
  char *text = render(x);
  int rc = gr_file_write(path, text, strlen(text), err);
  free(text);
  return rc;
}

/* Doctor's findings for gpurig_finding, again every few minutes. */
static void refresh_findings(struct exporter *x)
{
  double now = gr_clock_s(CLOCK_MONOTONIC);
  if (x->have_doc && now - x->doctor_at < DOCTOR_EVERY_S)
    return;
  x->doctor_at = now;
  struct gr_doctor_opts o = {.expect_gpus = -1, .kmsg_path = NULL, .xid_window_h = -1};
  struct gr_doctor_report rep;
  gr_doctor_run(&x->mon.m, &o, &rep);
  gr_sampler_lock(x->mon.s);
  if (x->have_doc)
    gr_doctor_report_free(&x->doc);
  x->doc = rep;
  x->have_doc = true;
  gr_sampler_unlock(x->mon.s);
}

static int run(struct exporter *x, const struct gr_monitor_opts *o, long count, double interval, bool sleep_first)
{
  struct gr_err err = {0};
  double next = gr_clock_s(CLOCK_MONOTONIC);
  for (long n = 0; count <= 0 || n < count; n++) {
    if ((n > 0 || sleep_first) && !cli_sleep_until(&next, interval))
      break;
    if (gr_sampler_step(x->mon.s, &err) != 0)
      return gr_report_error(&err);
    refresh_findings(x);
    if (o->textfile && write_textfile(x, o->textfile, &err) != 0)
      return gr_report_error(&err);
  }
  return GR_EXIT_OK;
}

int cmd_export(int argc, char **argv)
{
  struct export_opts o;
  struct gr_parsed p;
  struct exporter x;
  struct gr_err err = {0};
  double interval = 1.0;
  long count = 0;
  memset(&x, 0, sizeof(x));
  if (gr_parse_options(argc, argv, &export_spec, &o, sizeof(o), &p) != 0)
    return GR_EXIT_FAIL;
  if (p.help) {
    export_usage();
    return GR_EXIT_OK;
  }
  if (cli_parse_interval("export", o.mon.interval, &interval) != 0)
    return GR_EXIT_FAIL;
  if (o.mon.svg) {
    fprintf(stderr, "gpurig: export: --svg belongs to gpurig watch\n");
    return GR_EXIT_FAIL;
  }
  if (cli_parse_count("export", &o.mon, &count) != 0)
    return GR_EXIT_FAIL;
  const char *listen = o.mon.listen ? o.mon.listen : "127.0.0.1:9400";
  bool serving = strcmp(listen, "none") != 0;
  if (!serving && !o.mon.textfile) {
    fprintf(stderr, "gpurig: export: --listen none leaves nothing to do without --textfile DIR\n");
    return GR_EXIT_FAIL;
  }
  struct sockaddr_storage sa;
  unsigned salen;
  if (serving && !gr_parse_listen(listen, &sa, &salen)) {
    gr_diag("gpurig: export: --listen %s: not ADDR:PORT (127.0.0.1:9400, [::1]:9400, 0.0.0.0:9400) or none\n",
            listen);
    return GR_EXIT_FAIL;
  }
  if (gethostname(x.host, sizeof(x.host) - 1) != 0)
    snprintf(x.host, sizeof(x.host), "unknown");
  if (cli_monitor_open("export", &o.src, o.mon.kmsg, interval, 120, &x.mon, &err) != 0)
    return gr_report_error(&err);
  cli_catch_stop();
  /* the first sample before the port opens: a scrape always has one */
  int rc = run(&x, &o.mon, 1, interval, false);
  struct cli_http *d = NULL;
  if (rc == GR_EXIT_OK && serving && !(d = cli_http_serve(listen, render, &x, &err)))
    rc = gr_report_error(&err);
  if (rc == GR_EXIT_OK && serving)
    gr_diag("gpurig: export: serving http://%s/metrics\n", listen);
  if (rc == GR_EXIT_OK && count != 1)
    rc = run(&x, &o.mon, count > 0 ? count - 1 : 0, interval, true);
  cli_http_stop(d);
  if (x.have_doc)
    gr_doctor_report_free(&x.doc);
  cli_monitor_close(&x.mon);
  return rc;
}
