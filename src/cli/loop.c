/* The monitor loop that watch, export and burn share: a machine, its GPUs
 * and a sampler opened and closed together, --interval and --count, the one
 * stop flag that SIGINT, SIGTERM and SIGHUP set, and the fixed schedule the loop sleeps on (cli/loop.h). */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/loop.h"

static volatile sig_atomic_t stop_requested;

/* The signal that asked for the stop (the first one), 0 none. */
static void on_stop(int sig)
{
  if (!stop_requested)
    stop_requested = sig;
}

bool cli_stop_asked(void)
{
  return stop_requested != 0;
}

int cli_stop_signal(void)
{
  return (int)stop_requested;
}

void cli_catch_stop(void)
{
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = on_stop; /* no SA_RESTART: a sleep or a wait ends at once */
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGHUP, &sa, NULL);
}

int cli_parse_interval(const char *cmd, const char *text, double *out)
{
  *out = 1.0;
  if (!text || gr_parse_seconds(text, 0.1, 3600, out))
    return 0;
  gr_diag("gpurig: %s: --interval %s: not a time from 0.1 to 3600 seconds (\"1\", \"0.5\", \"500ms\")\n", cmd,
          text);
  return -1;
}

int cli_parse_psu(const char *cmd, const char *text, double *out)
{
  *out = 0;
  if (!text)
    return 0;
  char *end;
  *out = strtod(text, &end);
  if (end != text && !*end && *out >= 50 && *out <= 100000)
    return 0;
  gr_diag("gpurig: %s: --psu %s: a power supply's watts, from 50 to 100000\n", cmd, text);
  return -1;
}

int cli_parse_count(const char *cmd, const struct gr_monitor_opts *o, long *count)
{
  *count = o->once ? 1 : 0;
  if (o->once && o->count) {
    gr_diag("gpurig: %s: --once and --count %s: give one of them\n", cmd, o->count);
    return -1;
  }
  if (!o->count)
    return 0;
  if (parse_long(o->count, 10, count) && *count >= 1 && *count <= 100000000)
    return 0;
  gr_diag("gpurig: %s: --count %s: not a number of samples from 1\n", cmd, o->count);
  return -1;
}

int cli_monitor_open(const char *cmd, const struct gr_source_opts *o, const char *kmsg, double interval,
                     unsigned history, struct cli_monitor *mon, struct gr_err *err)
{
  return cli_monitor_open_quiet(cmd, o, kmsg, interval, history, 0, mon, err);
}

int cli_monitor_open_quiet(const char *cmd, const struct gr_source_opts *o, const char *kmsg, double interval,
                           unsigned history, double quiet_s, struct cli_monitor *mon, struct gr_err *err)
{
  memset(mon, 0, sizeof(*mon));
  if (o->input)
    return gr_fail(err, GR_EXIT_FAIL, "--input %s: a description has no counters; %s samples this machine or a "
                   "gathered tree (--root DIR)", o->input, cmd);
  /* the ring holds at least the last minute: "in the last minute" means that */
  unsigned minute = (unsigned)(60.0 / interval) + 2;
  if (history < minute)
    history = minute;
  if (gr_gpus_open(&mon->g, err) == 0) {
    mon->have_gpus = true;
  } else {
    /* the PCIe links can still be watched: say what is missing, go on */
    fprintf(stderr, "gpurig: %s: warning: no GPU values: %s\n", cmd, err->msg);
    memset(err, 0, sizeof(*err));
  }
  struct gr_source src = cli_source_of(o, false);
  bool have_topo = false;
  if (cli_open_for_gpus(&src, &mon->m, &have_topo, err) != 0)
    goto fail;
  mon->have_machine = true;
  if (!mon->m.has_fs && !mon->have_gpus) {
    gr_fail(err, GR_EXIT_CANNOT_RUN, "nothing to watch: no GPU driver, and the PCI tree could not be read");
    goto fail;
  }
  struct gr_sampler_opts so = {.history = history, .gpu_timeout_s = 0.5, .quiet_s = quiet_s, .kmsg = kmsg};
  if (gr_sampler_open(&mon->m, mon->have_gpus ? &mon->g : NULL, &so, &mon->s, err) != 0)
    goto fail;
  return 0;
fail:
  cli_monitor_close(mon);
  return -1;
}

void cli_monitor_close(struct cli_monitor *mon)
{
  bool clean = gr_sampler_close(mon->s);
  if (!clean)
    fprintf(stderr, "gpurig: a GPU's driver call still had not returned; its reader thread is left to exit\n");
  if (mon->have_gpus && clean)
    gr_gpus_close(&mon->g); /* never under a thread still inside the driver */
  if (mon->have_machine)
    gr_machine_close(&mon->m);
  memset(mon, 0, sizeof(*mon));
}

/* Sleeps until the next tick of a fixed schedule (a slow sample does not
 * shift the ones after it); false when a stop was asked for. */
bool cli_sleep_until(double *next_mono, double interval_s)
{
  *next_mono += interval_s;
  double now = gr_clock_s(CLOCK_MONOTONIC);
  if (*next_mono < now)
    *next_mono = now; /* fell behind: start again from now */
  while (!stop_requested) {
    double left = *next_mono - gr_clock_s(CLOCK_MONOTONIC);
    if (left <= 0)
      return true;
    struct timespec ts = {(time_t)left, (long)((left - (double)(time_t)left) * 1e9)};
    nanosleep(&ts, NULL);
  }
  return false;
}
