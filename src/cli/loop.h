/* The monitor loop of watch, export and burn (cli/loop.c): the machine, GPUs
 * and sampler they open together, their --interval and --count, the one stop
 * flag and the schedule they sleep on. */
#ifndef GPURIG_CLI_LOOP_H
#define GPURIG_CLI_LOOP_H

#include <stdbool.h>

#include "analysis/machine.h"
#include "base/util.h"
#include "cli/cli.h"
#include "cli/options.h"
#include "gpu/gpu.h"
#include "monitor/sampler.h"

/* watch, export and burn: a machine, its GPUs (when a driver loads) and a
 * sampler over both. */
struct cli_monitor {
  struct gr_machine m;
  struct gr_gpus g;
  bool have_machine, have_gpus;
  struct gr_sampler *s;
};
/* Opens all three; without a GPU driver a warning and the links alone.
 * 0, or -1 with err (nothing left open). */
/* The ring holds history samples, and at least the last minute at interval. */
/* src: --root (--input is refused: a description has no counters); kmsg:
 * the kernel log to follow, or NULL. */
int cli_monitor_open(const char *cmd, const struct gr_source_opts *src, const char *kmsg, double interval,
                     unsigned history, struct cli_monitor *mon, struct gr_err *err);
/* The same with the sampler's quiet_s (monitor/sampler.h): burn reports a
 * rising counter every interval (counts per interval on its chart and in its
 * log), watch and export once a minute (0). */
int cli_monitor_open_quiet(const char *cmd, const struct gr_source_opts *src, const char *kmsg, double interval,
                           unsigned history, double quiet_s, struct cli_monitor *mon, struct gr_err *err);
void cli_monitor_close(struct cli_monitor *mon);
/* --count N (1 up), --once (1), else 0 (no end); -1 after one error line. */
int cli_parse_count(const char *cmd, const struct gr_monitor_opts *o, long *count);
/* --interval: 0.1 to 3600 s, default 1 (text NULL); -1 after one error line. */
int cli_parse_interval(const char *cmd, const char *text, double *out);
/* --psu WATTS into *out (0 when not given); -1 after one line on a bad value. */
int cli_parse_psu(const char *cmd, const char *text, double *out);
/* SIGINT, SIGTERM and SIGHUP end a command's loop (cli_sleep_until, the
 * view's loop and burn's rounds see the flag): watch, export and burn alike,
 * so that timeout(1), Slurm, systemd and a closed ssh session get the same
 * partial result as Ctrl-C. */
void cli_catch_stop(void);
/* Whether a stop was asked for (the flag cli_catch_stop's handler sets). */
bool cli_stop_asked(void);
/* Which signal asked for it first (SIGINT, SIGTERM, SIGHUP), 0 none. */
int cli_stop_signal(void);
/* Sleeps to the next tick of a fixed schedule; false when asked to stop. */
bool cli_sleep_until(double *next_mono, double interval_s);

#endif
