/* gpurig export: the sampler's newest sample as Prometheus metrics, served
 * over HTTP at /metrics (cli/http.c, gpurig's own server) and/or written for
 * node_exporter's textfile collector. The text is rendered once per sample;
 * a scrape copies it: it never waits on hardware or on the sampler. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
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

enum { DOCTOR_EVERY_S = 300, TEXTFILE_STALE_S = 60 };

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
    "count=stop after N samples; --once: one sample, no port (--textfile, else stdout)",
    "root=a gathered tree whose counter files may change between samples",
    "kmsg",
    "psu=the power supply's watts: gpurig_power_budget_ratio is the GPUs' summed draw\n"
    "(gpurig_power_total_watts) over it",
    NULL,
};

static void export_usage(void)
{
  printf("usage: gpurig export [--listen ADDR:PORT] [--textfile DIR] [--interval SECONDS] [--count N | --once]\n"
         "                     [--root DIR] [--kmsg FILE] [--psu WATTS]\n"
         "\n"
         "Samples the GPUs and their PCIe links (as gpurig watch) and serves the newest sample as\n"
         "Prometheus metrics at http://ADDR:PORT/metrics: dcgm-exporter's names and labels for what\n"
         "gpurig reads (DCGM_FI_DEV_GPU_TEMP, _POWER_USAGE, _FB_USED, _SM_CLOCK, _PCIE_REPLAY_COUNTER,\n"
         "_XID_ERRORS, ...), so existing Grafana dashboards work on GeForce rigs, and gpurig's own:\n"
         "gpurig_pcie_aer_errors_total{link,end,slot,severity}, gpurig_pcie_link_gen/_width (now and\n"
         "_max), gpurig_gpu_throttle{reason}, gpurig_gpu_up (0 when a GPU is lost: the series stays;\n"
         "with no driver, 0 for each GPU on the bus), gpurig_driver_up, gpurig_finding{id,severity}\n"
         "(gpurig doctor, every 5 minutes), gpurig_sample_age_seconds, gpurig_power_total_watts and\n"
         "with --psu gpurig_power_budget_ratio. Every series names the host\n"
         "Hostname, as dcgm-exporter does.\n"
         "docs/monitor.md has the table, a systemd unit and a Slurm note.\n"
         "\n");
  gr_print_option_help(stdout, &export_spec, export_help, 20);
  printf("\n"
         "It reads only; it needs no root (root adds the AER counters some kernels restrict).\n"
         "A textfile write that fails after the first is warned once and tried again each sample\n"
         "(HTTP goes on); after a minute of failures the file says gpurig_textfile_ok 0.\n"
         "Exit status: 0 stopped cleanly (SIGINT, SIGTERM or --count), 1 a bounded run (--once,\n"
         "--count) with GPUs on the bus and no driver, 2 bad input, the address cannot be bound or\n"
         "the first textfile write fails, 3 nothing to watch.\n");
}

struct exporter {
  struct cli_monitor mon;
  struct gr_doctor_report doc; /* guarded by the sampler's lock */
  bool have_doc;
  double doctor_at; /* CLOCK_MONOTONIC of the last doctor run */
  char host[256];
  struct cli_http *http;  /* NULL: not serving */
  bool to_stdout;         /* --once without --textfile: the text once, on stdout */
  const char *textfile;   /* DIR, or NULL */
  char path[4096];        /* DIR/gpurig.prom */
  bool wrote_once;        /* a write was tried: later failures are retried, not fatal */
  bool first_failed;      /* the first write failed (reported; export ends with 2) */
  double fail_since;      /* CLOCK_MONOTONIC of the first failed write in a row, 0 none */
  bool stale_cleared;     /* the file was cleared for this run of failures */
  double psu_w;           /* --psu: gpurig_power_budget_ratio's denominator, 0 none */
};

/* The body renders once per sample (not per scrape): under the sampler's
 * lock, with the sample's time for the age each scrape adds. */
static char *render(struct exporter *x, size_t *len, double *stamp)
{
  gr_sampler_lock(x->mon.s);
  struct gr_prom_in in = {.findings = x->have_doc ? &x->doc.findings : NULL, .hostname = x->host,
                          .driver_up = x->mon.have_gpus, .bus = &x->mon.m.topo, .psu_w = x->psu_w};
  char *text = gr_prom_render(x->mon.s, &in);
  const struct gr_sample *last = gr_sampler_sample(x->mon.s, 0);
  *stamp = last ? last->mono_s : gr_clock_s(CLOCK_MONOTONIC);
  gr_sampler_unlock(x->mon.s);
  *len = strlen(text);
  return text;
}

static size_t age_tail(void *ctx, double stamp, char *buf, size_t cap)
{
  const struct exporter *x = ctx;
  return gr_prom_age(buf, cap, gr_clock_s(CLOCK_MONOTONIC) - stamp, x->host);
}

/* After a minute of failed writes the last good file would go on saying
 * every GPU is up: it is overwritten in place with gpurig_textfile_ok 0
 * (which needs no new block and no directory write), else removed. */
static void clear_stale(struct exporter *x)
{
  char text[512];
  size_t len = gr_prom_textfile_ok(text, sizeof(text), false, x->host);
  int fd = open(x->path, O_WRONLY | O_TRUNC | O_NOFOLLOW | O_CLOEXEC);
  bool ok = fd >= 0 && write(fd, text, len) == (ssize_t)len;
  if (fd >= 0 && close(fd) != 0)
    ok = false;
  if (ok) {
    gr_diag("gpurig: export: %s: writes failed for a minute: it now says gpurig_textfile_ok 0\n", x->path);
  } else if (unlink(x->path) == 0) {
    gr_diag("gpurig: export: %s: writes failed for a minute: removed, so that it says nothing stale\n",
            x->path);
  } else if (errno != ENOENT) {
    gr_diag("gpurig: export: warning: %s: writes failed for a minute, and it can be neither cleared nor "
            "removed: %s\n", x->path, strerror(errno));
  }
}

/* A failed write (disk full, no descriptor, a read-only directory) warns
 * once and is tried again at the next sample: the HTTP side keeps serving. */
static void write_textfile(struct exporter *x, const char *body, size_t len, double stamp)
{
  struct gr_err err = {0};
  char tail[512], ok[512];
  size_t tlen = gr_prom_age(tail, sizeof(tail), gr_clock_s(CLOCK_MONOTONIC) - stamp, x->host);
  size_t oklen = gr_prom_textfile_ok(ok, sizeof(ok), true, x->host);
  struct gr_out w;
  int rc = gr_out_open(x->path, &w, &err);
  if (rc == 0) {
    gr_out_write(&w, body, len);
    gr_out_write(&w, tail, tlen);
    gr_out_write(&w, ok, oklen);
    rc = gr_out_commit(&w, &err);
  }
  double now = gr_clock_s(CLOCK_MONOTONIC);
  if (!x->wrote_once) { /* the first write is the check of DIR: its failure is the one error line */
    x->wrote_once = true;
    if (rc != 0) {
      x->first_failed = true;
      gr_report_error(&err);
      return;
    }
  }
  if (rc == 0) {
    if (x->fail_since)
      gr_diag("gpurig: export: %s: written again\n", x->path);
    x->fail_since = 0;
    x->stale_cleared = false;
    return;
  }
  if (!x->fail_since) {
    x->fail_since = now;
    gr_diag("gpurig: export: warning: %s; trying again at each sample%s\n", err.msg,
            x->http ? ", serving on" : "");
  }
  if (!x->stale_cleared && now - x->fail_since >= TEXTFILE_STALE_S) {
    x->stale_cleared = true;
    clear_stale(x);
  }
}

/* The sample's text to each place it goes: once per sample. */
static void publish(struct exporter *x)
{
  size_t len;
  double stamp;
  char *body = render(x, &len, &stamp);
  if (x->textfile)
    write_textfile(x, body, len, stamp);
  if (x->to_stdout) {
    char tail[512];
    fwrite(body, 1, len, stdout);
    fwrite(tail, 1, gr_prom_age(tail, sizeof(tail), gr_clock_s(CLOCK_MONOTONIC) - stamp, x->host), stdout);
  }
  if (x->http)
    cli_http_publish(x->http, body, len, stamp); /* the server owns it now */
  else
    free(body);
}

/* Doctor's findings for gpurig_finding, again every few minutes. */
static void refresh_findings(struct exporter *x)
{
  double now = gr_clock_s(CLOCK_MONOTONIC);
  if (x->have_doc && now - x->doctor_at < DOCTOR_EVERY_S)
    return;
  x->doctor_at = now;
  struct gr_doctor_opts o = {.expect_gpus = -1, .kmsg_path = NULL, .xid_window_h = -1, .psu_w = x->psu_w};
  /* the power limits the sampler read last, for gpu.power-limit */
  gr_sampler_lock(x->mon.s);
  const struct gr_sample *last = gr_sampler_sample(x->mon.s, 0);
  unsigned n = last ? gr_sampler_ngpu(x->mon.s) : 0;
  struct gr_doctor_gpu_power *pw = xcalloc(n ? n : 1, sizeof(*pw));
  for (unsigned i = 0; i < n; i++) {
    const struct gr_gpu_static *st = gr_sampler_gpu_static(x->mon.s, i);
    snprintf(pw[i].busid, sizeof(pw[i].busid), "%s", st->busid);
    snprintf(pw[i].name, sizeof(pw[i].name), "%s", st->name);
    pw[i].limit_w = last->gpu[i].power_limit_w.ok && last->gpu_read[i] != GR_READ_LOST ? last->gpu[i].power_limit_w.v
                                                                                         : -1;
    pw[i].default_w = st->power_default_w.ok ? st->power_default_w.v : -1;
    cli_doctor_xgmi(&last->gpu[i], last->gpu_read[i] != GR_READ_LOST, &pw[i]);
  }
  gr_sampler_unlock(x->mon.s);
  o.gpu_power = pw;
  o.ngpu_power = n;
  o.why_no_power = x->mon.have_gpus ? "no sample yet" : "no GPU driver answers";
  struct gr_doctor_report rep;
  gr_doctor_run(&x->mon.m, &o, &rep);
  free(pw);
  gr_sampler_lock(x->mon.s);
  if (x->have_doc)
    gr_doctor_report_free(&x->doc);
  x->doc = rep;
  x->have_doc = true;
  gr_sampler_unlock(x->mon.s);
}

static int run(struct exporter *x, long count, double interval, bool sleep_first)
{
  struct gr_err err = {0};
  double next = gr_clock_s(CLOCK_MONOTONIC);
  for (long n = 0; count <= 0 || n < count; n++) {
    if ((n > 0 || sleep_first) && !cli_sleep_until(&next, interval))
      break;
    if (gr_sampler_step(x->mon.s, &err) != 0)
      return gr_report_error(&err);
    refresh_findings(x);
    publish(x);
  }
  return GR_EXIT_OK;
}

/* Nothing to watch (docs/cli.md: exit 3): no GPU driver, no GPU on the bus
 * and no PCIe link with counters. */
static bool nothing_to_watch(const struct exporter *x)
{
  return !x->mon.have_gpus && gr_sampler_nlinks(x->mon.s) == 0 && x->mon.m.topo.ngpus == 0;
}

/* Options into o, interval, count and listen ("none" or ADDR:PORT); 1 after
 * --help, -1 after an error line. */
static int parse(int argc, char **argv, struct export_opts *o, double *interval, long *count, const char **listen)
{
  struct gr_parsed p;
  if (gr_parse_options(argc, argv, &export_spec, o, sizeof(*o), &p) != 0)
    return -1;
  if (p.help) {
    export_usage();
    return 1;
  }
  if (cli_parse_interval("export", o->mon.interval, interval) != 0 || cli_parse_count("export", &o->mon, count) != 0)
    return -1;
  if (o->mon.svg) {
    gr_diag("gpurig: export: --svg belongs to gpurig watch\n");
    return -1;
  }
  *listen = o->mon.listen ? o->mon.listen : "127.0.0.1:9400";
  if (strcmp(*listen, "none") == 0 && !o->mon.textfile && *count != 1) {
    gr_diag("gpurig: export: --listen none leaves nothing to do without --textfile DIR\n");
    return -1;
  }
  struct sockaddr_storage sa;
  unsigned salen;
  if (strcmp(*listen, "none") != 0 && !gr_parse_listen(*listen, &sa, &salen)) {
    gr_diag("gpurig: export: --listen %s: not ADDR:PORT (127.0.0.1:9400, [::1]:9400, 0.0.0.0:9400) or none\n",
            *listen);
    return -1;
  }
  if (o->mon.textfile && snprintf(NULL, 0, "%s/gpurig.prom", o->mon.textfile) >= 4096) {
    gr_diag("gpurig: export: --textfile %s: path too long\n", o->mon.textfile);
    return -1;
  }
  return 0;
}

/* The first sample, before the port opens (a scrape always has one) and
 * with the first textfile write: that one failing is an error (a wrong
 * DIR), later ones are retried. */
static int first_sample(struct exporter *x, const char *listen, long count)
{
  struct gr_err err = {0};
  if (gr_sampler_step(x->mon.s, &err) != 0)
    return gr_report_error(&err);
  if (nothing_to_watch(x)) {
    gr_diag("gpurig: export: nothing to watch: no GPU driver, no GPU on the bus and no PCIe link\n");
    return GR_EXIT_CANNOT_RUN;
  }
  refresh_findings(x);
  /* --once shows one sample: it serves none (the port would close at once) */
  if (count != 1 && strcmp(listen, "none") != 0 && !(x->http = cli_http_serve(listen, NULL, age_tail, x, &err)))
    return gr_report_error(&err);
  publish(x);
  if (x->first_failed)
    return GR_EXIT_FAIL;
  if (x->http)
    gr_diag("gpurig: export: serving http://%s/metrics\n", listen);
  return GR_EXIT_OK;
}

int cmd_export(int argc, char **argv)
{
  struct export_opts o;
  struct exporter x;
  struct gr_err err = {0};
  double interval = 1.0;
  long count = 0;
  const char *listen = NULL;
  memset(&x, 0, sizeof(x));
  int prc = parse(argc, argv, &o, &interval, &count, &listen);
  if (prc != 0)
    return prc > 0 ? GR_EXIT_OK : GR_EXIT_FAIL;
  if (cli_parse_psu("export", o.mon.psu, &x.psu_w) != 0)
    return GR_EXIT_FAIL;
  x.textfile = o.mon.textfile;
  x.to_stdout = count == 1 && !x.textfile;
  if (x.textfile)
    snprintf(x.path, sizeof(x.path), "%s/gpurig.prom", x.textfile);
  if (gethostname(x.host, sizeof(x.host) - 1) != 0)
    snprintf(x.host, sizeof(x.host), "unknown");
  if (cli_monitor_open("export", &o.src, o.mon.kmsg, interval, 120, &x.mon, &err) != 0)
    return gr_report_error(&err);
  cli_catch_stop();
  int rc = first_sample(&x, listen, count);
  if (rc == GR_EXIT_OK && count != 1)
    rc = run(&x, count > 0 ? count - 1 : 0, interval, true);
  /* a bounded run (cron, --once) tells its caller the driver is down; a
   * service stopped by a signal exits 0, as docs/cli.md says */
  if (rc == GR_EXIT_OK && count > 0 && !x.mon.have_gpus && x.mon.m.topo.ngpus > 0) {
    gr_diag("gpurig: export: warning: the bus shows %zu GPU(s) and no GPU driver answers for them "
            "(gpurig_driver_up 0, gpurig_gpu_up 0)\n", x.mon.m.topo.ngpus);
    rc = GR_EXIT_WARN;
  }
  cli_http_stop(x.http);
  if (x.have_doc)
    gr_doctor_report_free(&x.doc);
  cli_monitor_close(&x.mon);
  return rc;
}
