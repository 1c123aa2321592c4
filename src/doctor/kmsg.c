/* Kernel log reader for NVIDIA Xid lines. Lines are not NUL-terminated (they
 * point into the caller's buffer), so every scan here runs between a cursor
 * and the line's end, never with the str* functions. */
#include "doctor/kmsg.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

enum {
  XID_MAX = 100000,     /* larger numbers are not Xids the driver prints: noise, not events */
  DEC_MAX_DIGITS = 19,  /* fits unsigned long long without overflow */
  HEX_MAX_DIGITS = 8,   /* a PCI domain is at most 32 bits */
};

/* A line's message and its monotonic time (-1 when the line has none). */
struct kline {
  const char *msg, *end;
  double t;
};

/* Text, as the header defines it: no control bytes except tab, no DEL. */
static bool is_text(const char *s, size_t n)
{
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if ((c < 0x20 && c != '\t') || c == 0x7f)
      return false;
  }
  return true;
}

static bool skip_char(const char **p, const char *end, char c)
{
  if (*p >= end || **p != c)
    return false;
  (*p)++;
  return true;
}

static void skip_spaces(const char **p, const char *end)
{
  while (*p < end && **p == ' ')
    (*p)++;
}

/* Decimal digits at *p into *v; false when there are none or too many. */
static bool read_dec(const char **p, const char *end, unsigned long long *v)
{
  const char *q = *p;
  unsigned long long x = 0;
  while (q < end && *q >= '0' && *q <= '9') {
    if (q - *p >= DEC_MAX_DIGITS)
      return false;
    x = x * 10 + (unsigned)(*q - '0');
    q++;
  }
  if (q == *p)
    return false;
  *v = x;
  *p = q;
  return true;
}

static int hex_value(char c)
{
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

/* Hex digits at *p into *v; returns how many, 0 when there are none or too many. */
static size_t read_hex(const char **p, const char *end, unsigned long *v)
{
  const char *q = *p;
  unsigned long x = 0;
  int d;
  while (q < end && (d = hex_value(*q)) >= 0) {
    if (q - *p >= HEX_MAX_DIGITS)
      return 0;
    x = x * 16 + (unsigned)d;
    q++;
  }
  size_t n = (size_t)(q - *p);
  if (n > 0) {
    *v = x;
    *p = q;
  }
  return n;
}

/* "[ 5678.901234]" and the one space after it; *t in seconds. */
static bool read_bracket_time(const char **p, const char *end, double *t)
{
  const char *q = *p;
  unsigned long long sec;
  double frac = 0, scale = 0.1;
  if (!skip_char(&q, end, '['))
    return false;
  skip_spaces(&q, end);
  if (!read_dec(&q, end, &sec))
    return false;
  if (skip_char(&q, end, '.')) {
    for (; q < end && *q >= '0' && *q <= '9'; q++, scale /= 10)
      frac += (*q - '0') * scale;
  }
  if (!skip_char(&q, end, ']'))
    return false;
  skip_char(&q, end, ' ');
  *t = (double)sec + frac;
  *p = q;
  return true;
}

/* "PRI,SEQ,USEC,FLAGS;" of a /dev/kmsg record; FLAGS may carry more
 * comma-separated fields (newer kernels add caller=), so only ';' ends it. */
static bool read_kmsg_prefix(const char **p, const char *end, double *t)
{
  const char *q = *p;
  unsigned long long pri, seq, usec;
  if (!read_dec(&q, end, &pri) || !skip_char(&q, end, ',') || !read_dec(&q, end, &seq) ||
      !skip_char(&q, end, ',') || !read_dec(&q, end, &usec) || !skip_char(&q, end, ','))
    return false;
  const char *semi = memchr(q, ';', (size_t)(end - q));
  if (!semi)
    return false;
  *t = (double)usec / 1e6;
  *p = semi + 1;
  return true;
}

/* Finds the message part of a text line and its time. Returns false for
 * lines to ignore (kmsg continuation lines). */
static bool split_line(const char *line, size_t n, struct kline *k)
{
  static const char tag[] = "kernel: ";
  const char *p = line, *end = line + n;
  k->t = -1;
  k->end = end;
  if (n > 0 && line[0] == ' ')
    return false;
  if (!read_kmsg_prefix(&p, end, &k->t) && !read_bracket_time(&p, end, &k->t)) {
    const char *kern = memmem(line, n, tag, sizeof(tag) - 1);
    if (kern) {
      p = kern + sizeof(tag) - 1;
      read_bracket_time(&p, end, &k->t);
    }
  }
  k->msg = p;
  return true;
}

/* "DDDD:BB:DD" or "BB:DD" (domain 0), with an optional ".F" that is dropped.
 * Bus and device are at most two digits, as the driver prints them, so a
 * domain is never mistaken for a bus. */
static bool read_pci_addr(const char **p, const char *end, struct gr_xid_event *ev)
{
  const char *q = *p;
  unsigned long g[3], fn;
  size_t digits[3], n = 0;
  do {
    if (n == 3 || (digits[n] = read_hex(&q, end, &g[n])) == 0)
      return false;
    n++;
  } while (skip_char(&q, end, ':'));
  if (n < 2 || digits[n - 2] > 2 || digits[n - 1] > 2)
    return false;
  if (skip_char(&q, end, '.') && read_hex(&q, end, &fn) == 0)
    return false;
  ev->domain = n == 3 ? (unsigned)g[0] : 0;
  ev->bus = (unsigned)g[n - 2];
  ev->dev = (unsigned)g[n - 1];
  *p = q;
  return true;
}

/* Copies the event's free text, keeping printable ASCII only. */
static void copy_detail(const char *p, const char *end, char *dst, size_t cap)
{
  size_t n = (size_t)(end - p) < cap - 1 ? (size_t)(end - p) : cap - 1;
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)p[i];
    dst[i] = c >= 0x20 && c < 0x7f ? (char)c : '?';
  }
  dst[n] = '\0';
}

/* "NVRM: Xid (PCI:0000:01:00): 79, detail" anywhere in the message. */
static bool parse_xid(const char *msg, const char *end, struct gr_xid_event *ev)
{
  static const char tag[] = "NVRM: Xid (";
  unsigned long long xid;
  const char *p = memmem(msg, (size_t)(end - msg), tag, sizeof(tag) - 1);
  if (!p)
    return false;
  p += sizeof(tag) - 1;
  if (end - p >= 4 && memcmp(p, "PCI:", 4) == 0)
    p += 4;
  if (!read_pci_addr(&p, end, ev) || !skip_char(&p, end, ')') || !skip_char(&p, end, ':'))
    return false;
  skip_spaces(&p, end);
  if (!read_dec(&p, end, &xid) || xid > XID_MAX)
    return false;
  ev->xid = (int)xid;
  skip_char(&p, end, ',');
  skip_spaces(&p, end);
  copy_detail(p, end, ev->detail, sizeof(ev->detail));
  return true;
}

int gr_kmsg_parse_xids(const char *buf, size_t len, struct gr_xid_log *out)
{
  size_t pos = 0, n, cap = 0;
  const char *line;
  memset(out, 0, sizeof(*out));
  out->last_t_sec = -1;
  while ((line = next_line(buf, len, &pos, &n))) {
    struct kline k;
    struct gr_xid_event ev = {0};
    out->lines++;
    if (n > 0 && line[n - 1] == '\r')
      n--;
    if (!is_text(line, n)) {
      if (out->bad_lines++ == 0)
        out->first_bad_line = out->lines;
      continue;
    }
    if (!split_line(line, n, &k))
      continue;
    if (k.t > out->last_t_sec)
      out->last_t_sec = k.t;
    if (!parse_xid(k.msg, k.end, &ev))
      continue;
    ev.t_sec = k.t;
    ev.line = out->lines;
    grow_array((void **)&out->ev, sizeof(*out->ev), &cap, out->nev);
    out->ev[out->nev++] = ev;
  }
  return 0;
}

void gr_xid_log_free(struct gr_xid_log *l)
{
  if (!l)
    return;
  free(l->ev);
  memset(l, 0, sizeof(*l));
  l->last_t_sec = -1;
}

/* ---- grouping ---- */

/* An open-addressing index of the groups by address and Xid: a slot holds a
 * group's index + 1, 0 when empty. It has at least twice as many slots as
 * there are events, so it never fills and probes stay short. */
struct group_index {
  size_t *slot;
  size_t mask;
};

/* splitmix64's finaliser: every bit of the key moves the slot, so bus
 * addresses that differ only in the domain still spread out. */
static uint64_t mix64(uint64_t x)
{
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

static size_t group_hash(const struct gr_xid_event *e)
{
  uint64_t addr = (uint64_t)e->domain << 32 | (uint64_t)e->bus << 8 | e->dev;
  return (size_t)mix64(addr ^ mix64((uint64_t)(uint32_t)e->xid));
}

static bool same_group(const struct gr_xid_group *g, const struct gr_xid_event *e)
{
  return g->domain == e->domain && g->bus == e->bus && g->dev == e->dev && g->xid == e->xid;
}

/* The slot of e's group, or the empty slot where it belongs. */
static size_t find_slot(const struct group_index *ix, const struct gr_xid_group *v, const struct gr_xid_event *e)
{
  size_t i = group_hash(e) & ix->mask;
  while (ix->slot[i] && !same_group(&v[ix->slot[i] - 1], e))
    i = (i + 1) & ix->mask;
  return i;
}

static void index_init(struct group_index *ix, size_t nev)
{
  size_t cap = 16;
  while (cap < 2 * nev)
    cap *= 2;
  ix->slot = xcalloc(cap, sizeof(*ix->slot));
  ix->mask = cap - 1;
}

void gr_xid_group(const struct gr_xid_log *log, double since, struct gr_xid_groups *out)
{
  struct group_index ix;
  size_t cap = 0;
  memset(out, 0, sizeof(*out));
  index_init(&ix, log->nev);
  for (size_t i = 0; i < log->nev; i++) {
    const struct gr_xid_event *e = &log->ev[i];
    if (since > 0 && e->t_sec >= 0 && e->t_sec < since) {
      out->older++;
      continue;
    }
    size_t s = find_slot(&ix, out->v, e);
    if (!ix.slot[s]) {
      grow_array((void **)&out->v, sizeof(*out->v), &cap, out->n);
      out->v[out->n] = (struct gr_xid_group){e->domain, e->bus, e->dev, e->xid, 0, e->t_sec, e->t_sec, e->line, e->detail};
      ix.slot[s] = ++out->n;
    }
    struct gr_xid_group *g = &out->v[ix.slot[s] - 1];
    g->count++;
    g->last_t = e->t_sec;
    g->line = e->line;
    g->detail = e->detail;
  }
  free(ix.slot);
}

void gr_xid_groups_free(struct gr_xid_groups *g)
{
  if (!g)
    return;
  free(g->v);
  memset(g, 0, sizeof(*g));
}
