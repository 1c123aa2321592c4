/* The full-screen view of `gpurig watch` (ncurses): one row per GPU, a row
 * per PCIe link that counted AER errors, sparklines of the last minutes and
 * the events as they come. It restores the terminal on every exit path:
 * gr_tui_close, exit() (atexit), and a fatal signal (SIGSEGV, SIGABRT,
 * SIGBUS, SIGFPE: the terminal is restored, then the signal is raised
 * again). SIGINT, SIGTERM and SIGHUP are the caller's (they end its loop).
 *
 * Ownership: gr_tui_open returns a view the caller ends with gr_tui_close. */
#ifndef GPURIG_PRINT_TUI_H
#define GPURIG_PRINT_TUI_H

#include <stdbool.h>

#include "monitor/sampler.h"

enum gr_tui_sort { GR_SORT_INDEX, GR_SORT_UTIL, GR_SORT_TEMP, GR_SORT_POWER, GR_SORT_COUNT };

struct gr_tui_view {
  enum gr_tui_sort sort; /* s cycles */
  bool paused;           /* p toggles */
  double interval_s;
};

struct gr_tui;
/* NULL when the terminal cannot be driven (not a terminal, unknown TERM). */
struct gr_tui *gr_tui_open(void);
void gr_tui_draw(struct gr_tui *t, const struct gr_sampler *s, const struct gr_tui_view *v);
/* Waits up to timeout_ms for a key: the key (ncurses' code, KEY_RESIZE on a
 * resize), or -1. */
int gr_tui_key(struct gr_tui *t, int timeout_ms);
void gr_tui_close(struct gr_tui *t);
const char *gr_tui_sort_name(enum gr_tui_sort s);

#endif
