/* Text that comes from inputs (sysfs values, host names, rig names, model
 * config fields, driver strings) must never reach a terminal as control
 * characters: an escape sequence in a gathered tree could clear the screen,
 * retitle the window or hide a line. Rather than trusting every printer to
 * escape every field, gpurig's standard output and standard error pass
 * through one filter that writes C0 controls other than newline and tab,
 * DEL, and the UTF-8 C1 controls (U+0080-U+009F) as visible escapes
 * ("\x1b", "\u009b"). JSON output has none to escape (jansson writes
 * them as \u escapes), so it passes unchanged. */
#ifndef GPURIG_TERM_H
#define GPURIG_TERM_H

#include <stddef.h>
#include <stdio.h>

/* Puts the filter in front of stdout and stderr (and first holds a closed
 * fd 0, 1 or 2 with /dev/null opened read-only, so that no file opened later
 * takes its place; writes to it still fail). The streams are fopencookie ones that
 * write to file descriptors 1 and 2; stdout's write errors still surface at
 * fflush/fclose, as the command's exit checks expect). Call once, first
 * thing in main. 0, or -1 if the streams could not be made (they stay as
 * they were). */
int gr_term_filter_stdio(void);

/* The C library's own stdout and stderr, in place while a vendor library
 * loads (base/dl.c): a C++ library's iostreams keep the FILE pointers they
 * find when libstdc++ starts and flush them at exit, after main has closed
 * the filtered stdout (ROCm SMI is C++). gr_term_std_original flushes and
 * swaps them in (nothing when the filter is not in front) and returns what
 * gr_term_std_restore puts back. */
struct gr_term_std {
  FILE *out, *err;
};
struct gr_term_std gr_term_std_original(void);
void gr_term_std_restore(struct gr_term_std saved);

/* A status line redrawn in place on standard error (a progress bar): a
 * carriage return, then text with its control characters escaped like any
 * other. NULL clears the line. The only '\r' gpurig sends to a terminal. */
void gr_term_status_line(const char *text);

/* The filter on its own: escapes src[0..n) into dst (at most cap bytes, each
 * input byte takes at most 6). *c1_lead carries a 0xC2 byte held back at the
 * end of one call for the next. Returns the bytes written to dst. */
size_t gr_term_escape(const char *src, size_t n, char *dst, size_t cap, int *c1_lead);

/* The width text output wraps to: $COLUMNS when set to a number, else the
 * terminal's width when fd is a terminal, else 100 (a pipe or a file: the
 * width a reader's terminal most likely has). Clamped to 40..10000
 * (COLUMNS=10000 keeps every sentence on one line for scripts that grep). */
int gr_term_width(int fd);

/* Whether output on fd may carry colour: only a terminal (not a pipe or a
 * file), never with NO_COLOR set to anything (no-color.org) or TERM=dumb. */
int gr_term_color_ok(int fd);

/* gpurig's own escape sequence (colour), which the filter above would make
 * visible: f is flushed, then seq goes straight to its descriptor. Only for
 * the filtered stdout and stderr; any other stream gets nothing. seq must be
 * a constant of gpurig's, never text from an input. */
void gr_term_raw(FILE *f, const char *seq);

#endif
