/* NVIDIA Xid events from a kernel log. Reads any mix of three line forms:
 *   /dev/kmsg records   PRI,SEQ,USEC,FLAGS;MESSAGE   (continuation lines, which
 *                       start with a space, are ignored)
 *   dmesg output        [ 5678.901234] MESSAGE
 *   journal / syslog    Nov 21 10:00:00 host kernel: MESSAGE
 *                       Nov 21 10:00:00 host kernel: [ 12.34] MESSAGE
 * A line in none of these forms is searched as a bare message without time.
 * The driver's Xid line, new and old style:
 *   NVRM: Xid (PCI:0000:01:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.
 *   NVRM: Xid (0000:01:00): 13, Graphics SM Warp Exception on (GPC 0, TPC 0): Out Of Range Address
 *   NVRM: Xid (PCI:01:00): ...   (no domain: domain 0000)
 *
 * Ownership: the parser copies what it keeps; the caller owns *out and frees
 * it with gr_xid_log_free. A struct gr_xid_groups is the caller's too
 * (gr_xid_groups_free); its details point into the log it was made from. */
#ifndef GPURIG_KMSG_H
#define GPURIG_KMSG_H

#include <stddef.h>

struct gr_xid_event {
  unsigned domain, bus, dev;   /* as the driver prints it (no function number) */
  int xid;
  double t_sec;                /* seconds since boot, -1 if the line has no monotonic time */
  char detail[160];            /* text after "NN, " truncated, printable ASCII only (others -> '?') */
  size_t line;                 /* 1-based line number in the input */
};

struct gr_xid_log {
  struct gr_xid_event *ev;     /* owned, input order */
  size_t nev;
  size_t lines;                /* lines read */
  size_t bad_lines;            /* lines that are not text (a NUL byte, or bytes < 0x20 other than tab, or 0x7f) */
  size_t first_bad_line;       /* 1-based, 0 if none */
  double last_t_sec;           /* latest monotonic time seen on any line, -1 if none */
};

/* Parses len bytes at buf (need not be NUL-terminated). Never fails on
 * content: bad lines are counted and skipped, not fatal; returns 0. Bytes
 * >= 0x80 are allowed (UTF-8 text); one '\r' before the newline is dropped
 * (CRLF exports). An Xid number above 100000, or none, makes the line no
 * event (and not a bad line either). The caller frees *out with
 * gr_xid_log_free. */
int gr_kmsg_parse_xids(const char *buf, size_t len, struct gr_xid_log *out);
void gr_xid_log_free(struct gr_xid_log *l);

/* The events of one GPU (bus address) and one Xid number. */
struct gr_xid_group {
  unsigned domain, bus, dev;
  int xid;
  size_t count;
  double first_t, last_t;      /* seconds since boot, -1 if the lines had none */
  size_t line;                 /* the last event's line */
  const char *detail;          /* the last event's detail, inside the log */
};

struct gr_xid_groups {
  struct gr_xid_group *v;      /* owned, in the order of each group's first event */
  size_t n;
  size_t older;                /* events before `since`, not grouped */
};

/* Groups the events of log at or after since (seconds since boot; <= 0: all;
 * an event without a time is always kept) by bus address and Xid. A hash
 * table keeps this linear in the number of events: a log can hold millions
 * of distinct pairs. The caller frees *out with gr_xid_groups_free. */
void gr_xid_group(const struct gr_xid_log *log, double since, struct gr_xid_groups *out);
void gr_xid_groups_free(struct gr_xid_groups *g);

#endif
