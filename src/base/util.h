/* Small helpers shared by the whole core: allocation that aborts on OOM,
 * an error record that carries one human-readable line, and the exit codes. */
#ifndef GPURIG_UTIL_H
#define GPURIG_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

/* The one documented set of exit codes (docs/cli.md). Nagios-style so that
 * doctor can reuse it: 0 ok, 1 warnings, 2 failures or bad input, 3 could not
 * run; and 4, a plan's answer "does not fit", which is a verdict on a valid
 * request rather than a failure (scripts tell it from bad input). */
enum gr_exit {
  GR_EXIT_OK = 0,
  GR_EXIT_WARN = 1,
  GR_EXIT_FAIL = 2,
  GR_EXIT_CANNOT_RUN = 3,
  GR_EXIT_NOFIT = 4,
};

/* One error line: "FILE: problem" or "FILE:LINE: problem". Filled by loaders
 * and parsers, printed once by the command. code is an enum gr_exit. */
struct gr_err {
  int code;
  char msg[768];
};

/* Text from the user or an input (a path, an option's value) shown inside a
 * one-line message: its control characters as visible escapes (a newline
 * as "\n", a carriage return "\r", a tab "\t", the others "\x1b"), so a
 * newline in a file name cannot turn one error into two lines, the second
 * posing as a message of its own. Writes at most cap bytes into buf (cut
 * with "..." when longer) and returns buf, which the caller owns. */
const char *gr_shown(const char *s, char *buf, size_t cap);

/* A diagnostic line to stderr: formatted as fprintf does, every control
 * character in it escaped as gr_shown does (one message stays one line),
 * then the one newline that ends it (a newline at the end of fmt is that
 * newline, not doubled). Every error path that quotes user input prints
 * through it or through gr_fail. */
void gr_diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Sets err (if non-NULL) and returns -1, so callers can `return gr_fail(...)`.
 * The message is kept to one line: its control characters are escaped as
 * gr_shown does. */
int gr_fail(struct gr_err *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The same for a place in a text file: "NAME:LINE:COL: message". */
int gr_fail_at(struct gr_err *err, const char *name, size_t line, size_t col, const char *fmt, va_list ap)
    __attribute__((format(printf, 5, 0)));
/* The same with the message's arguments given directly. */
int gr_fail_place(struct gr_err *err, const char *name, size_t line, size_t col, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* Allocation helpers: abort with a message on out-of-memory, never return NULL.
 * The caller owns the returned memory and frees it with free(). */
void *xmalloc(size_t n);
void *xcalloc(size_t count, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);             /* NULL in, NULL out */
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Grows *arr (of elem_size items) so that index `need` fits; *cap is updated. */
void grow_array(void **arr, size_t elem_size, size_t *cap, size_t need);

/* Union-find over parent[] (parent[i] == i at first): the set's root, and
 * the union of two sets, the smaller root kept (so a root is its set's
 * lowest index). Components in near-linear time, where relabelling a whole
 * array per union is quadratic per pair: cubic over a GPU matrix. */
int gr_uf_find(int *parent, int x);
void gr_uf_union(int *parent, int x, int y);

/* Trims trailing whitespace (newline from sysfs files) in place; returns s. */
char *str_rtrim(char *s);
/* Copies src into dst[cap], cut to fit and always terminated (cap > 0). */
void str_copy(char *dst, size_t cap, const char *src);
bool str_starts_with(const char *s, const char *prefix);

/* Walks a buffer line by line: returns the next line's start and sets *n to
 * its length (without the newline), or NULL at the end; *pos advances. */
const char *next_line(const char *buf, size_t len, size_t *pos, size_t *n);

/* Strict integer parsing: whole string (after trimming) must be a number. */
bool parse_long(const char *s, int base, long *out);
bool parse_ulong(const char *s, int base, unsigned long *out);

/* Sizes: "64K", "512M", "1G", "4096" (K/M/G are powers of 1024; KiB/MiB/GiB
 * too). false for anything else, 0, or more than 1 TiB. */
bool gr_parse_size(const char *s, size_t *out);
/* A time in seconds from min to max: "1", "0.5", "2s", "500ms". */
/* 10^d as pow(10, d) gives it, from a table for 0 <= d <= 15 (exact
 * there, as pow's result is): the JSON writers round every figure with it,
 * and pow was 2% of topo --json at 512 GPUs. */
double gr_pow10(int d);

/* strtod, with a fast path for the plain decimals data tables hold
 * ("936.2", "-3", at most 15 digits): the value is the digits as an integer
 * over a power of ten, both exact, so one IEEE division rounds it as
 * strtod does. Anything else (exponents, signs but '-', inf, hex, more
 * digits) goes to strtod. */
double gr_strtod(const char *s, char **end);

bool gr_parse_seconds(const char *s, double min, double max, double *out);
/* A listening address: "ADDR:PORT" (IPv4), "[ADDR]:PORT" (IPv6) or ":PORT"
 * (loopback, 127.0.0.1); port 1 to 65535. sa is a struct sockaddr_storage,
 * *len its used length. */
struct sockaddr_storage;
bool gr_parse_listen(const char *s, struct sockaddr_storage *sa, unsigned *len);

/* A byte count in words, in the largest binary unit that holds it whole
 * ("256 MiB", "4 KiB", "4080 B"); from 1 MiB up, when it is not whole, one
 * decimal below 10 of the unit ("1.5 MiB") and none above ("113 MiB").
 * Never "0 KiB". Returns buf. The one formatter of sizes in messages. */
const char *gr_size_text(size_t bytes, char *buf, size_t cap);

/* Dotted numeric versions ("535.104.05"): valid means digits and single dots,
 * starting with a digit. cmp compares field by field as numbers (missing
 * fields count as 0): <0, 0, >0. */
bool gr_version_valid(const char *v);
int gr_version_cmp(const char *a, const char *b);

#endif
