#include "base/util.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

/* The escape of one control character c into out (at least 5 bytes). */
static size_t shown_char(unsigned char c, char *out)
{
  static const char named[][3] = {['\n'] = "\\n", ['\r'] = "\\r", ['\t'] = "\\t"};
  if (c < sizeof(named) / sizeof(named[0]) && named[c][0]) {
    memcpy(out, named[c], 2);
    return 2;
  }
  return (size_t)snprintf(out, 5, "\\x%02x", c);
}

const char *gr_shown(const char *s, char *buf, size_t cap)
{
  size_t used = 0;
  if (!cap)
    return buf;
  for (; s && *s; s++) {
    unsigned char c = (unsigned char)*s;
    char esc[5];
    size_t n = c < 0x20 || c == 0x7f ? shown_char(c, esc) : (esc[0] = (char)c, 1);
    if (used + n + 1 > cap) { /* cut: "..." says so */
      if (cap >= 4) {
        used = used > cap - 4 ? cap - 4 : used;
        memcpy(buf + used, "...", 3);
        used += 3;
      }
      break;
    }
    memcpy(buf + used, esc, n);
    used += n;
  }
  buf[used] = '\0';
  return buf;
}

void gr_diag(const char *fmt, ...)
{
  char msg[1024], shown[2048];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  if (n > 0 && (size_t)n < sizeof(msg) && msg[n - 1] == '\n')
    msg[n - 1] = '\0'; /* the line's own end */
  fprintf(stderr, "%s\n", gr_shown(msg, shown, sizeof(shown)));
}

int gr_fail(struct gr_err *err, int code, const char *fmt, ...)
{
  if (err) {
    char msg[sizeof(err->msg)];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    gr_shown(msg, err->msg, sizeof(err->msg));
    err->code = code;
  }
  return -1;
}

static void out_of_memory(size_t n)
{
  fprintf(stderr, "gpurig: out of memory (%zu bytes)\n", n);
  abort();
}

int gr_fail_at(struct gr_err *err, const char *name, size_t line, size_t col, const char *fmt, va_list ap)
{
  char msg[512];
  vsnprintf(msg, sizeof(msg), fmt, ap);
  return gr_fail(err, GR_EXIT_FAIL, "%s:%zu:%zu: %s", name, line, col, msg);
}

int gr_fail_place(struct gr_err *err, const char *name, size_t line, size_t col, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  gr_fail_at(err, name, line, col, fmt, ap);
  va_end(ap);
  return -1;
}

void *xmalloc(size_t n)
{
  void *p = malloc(n ? n : 1);
  if (!p)
    out_of_memory(n);
  return p;
}

void *xcalloc(size_t count, size_t size)
{
  void *p = calloc(count ? count : 1, size ? size : 1);
  if (!p)
    out_of_memory(count * size);
  return p;
}

void *xrealloc(void *p, size_t n)
{
  void *q = realloc(p, n ? n : 1);
  if (!q)
    out_of_memory(n);
  return q;
}

char *xstrdup(const char *s)
{
  return s ? xstrndup(s, strlen(s)) : NULL;
}

char *xstrndup(const char *s, size_t n)
{
  char *p = xmalloc(n + 1);
  memcpy(p, s, n);
  p[n] = '\0';
  return p;
}

char *xasprintf(const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0)
    n = 0;
  char *p = xmalloc((size_t)n + 1);
  va_start(ap, fmt);
  vsnprintf(p, (size_t)n + 1, fmt, ap);
  va_end(ap);
  return p;
}

void grow_array(void **arr, size_t elem_size, size_t *cap, size_t need)
{
  if (need < *cap)
    return;
  size_t ncap = *cap ? *cap * 2 : 8;
  while (ncap <= need)
    ncap *= 2;
  *arr = xrealloc(*arr, ncap * elem_size);
  memset((char *)*arr + *cap * elem_size, 0, (ncap - *cap) * elem_size);
  *cap = ncap;
}

char *str_rtrim(char *s)
{
  size_t n = strlen(s);
  while (n > 0 && isspace((unsigned char)s[n - 1]))
    s[--n] = '\0';
  return s;
}

bool str_starts_with(const char *s, const char *prefix)
{
  return strncmp(s, prefix, strlen(prefix)) == 0;
}

const char *next_line(const char *buf, size_t len, size_t *pos, size_t *n)
{
  if (*pos >= len)
    return NULL;
  const char *line = buf + *pos;
  const char *nl = memchr(line, '\n', len - *pos);
  *n = nl ? (size_t)(nl - line) : len - *pos;
  *pos += *n + (nl ? 1 : 0);
  return line;
}

bool parse_long(const char *s, int base, long *out)
{
  char *end;
  while (isspace((unsigned char)*s))
    s++;
  if (!*s)
    return false;
  errno = 0;
  long v = strtol(s, &end, base);
  while (isspace((unsigned char)*end))
    end++;
  if (errno || *end)
    return false;
  *out = v;
  return true;
}

bool parse_ulong(const char *s, int base, unsigned long *out)
{
  long v;
  while (isspace((unsigned char)*s))
    s++;
  if (*s == '-' || !parse_long(s, base, &v) || v < 0)
    return false;
  *out = (unsigned long)v;
  return true;
}

bool gr_version_valid(const char *v)
{
  if (!v || !isdigit((unsigned char)*v))
    return false;
  for (const char *p = v; *p; p++) {
    if (*p == '.' && (!isdigit((unsigned char)p[1])))
      return false;
    if (*p != '.' && !isdigit((unsigned char)*p))
      return false;
  }
  return strlen(v) < 32;
}

int gr_version_cmp(const char *a, const char *b)
{
  while (*a || *b) {
    unsigned long x = 0, y = 0;
    /* digit runs compare as numbers, so 535.104 > 535.54 */
    while (isdigit((unsigned char)*a) && x < 100000000UL)
      x = x * 10 + (unsigned long)(*a++ - '0');
    while (isdigit((unsigned char)*b) && y < 100000000UL)
      y = y * 10 + (unsigned long)(*b++ - '0');
    if (x != y)
      return x < y ? -1 : 1;
    while (*a && !isdigit((unsigned char)*a))
      a++;
    while (*b && !isdigit((unsigned char)*b))
      b++;
  }
  return 0;
}

bool gr_parse_size(const char *s, size_t *out)
{
  char *end;
  if (!s || !*s || *s == '-')
    return false;
  unsigned long long v = strtoull(s, &end, 10);
  unsigned shift = 0;
  if (end == s)
    return false;
  switch (*end) {
  case 'K': case 'k': shift = 10; end++; break;
  case 'M': case 'm': shift = 20; end++; break;
  case 'G': case 'g': shift = 30; end++; break;
  default: break;
  }
  if (*end == 'i' && shift)
    end++;
  if (*end == 'B' && shift)
    end++;
  if (*end || v == 0 || v > (1ULL << 40) >> shift)
    return false;
  *out = (size_t)(v << shift);
  return true;
}

const char *gr_size_text(size_t b, char *buf, size_t cap)
{
  static const char *const units[] = {"B", "KiB", "MiB", "GiB"};
  int whole = 0, big = 0; /* the largest unit that divides b; the largest not above it */
  for (int u = 1; u < 4; u++) {
    size_t unit = (size_t)1 << (10 * u);
    big = b >= unit ? u : big;
    whole = b >= unit && b % unit == 0 ? u : whole;
  }
  if (whole > 0 || b < ((size_t)1 << 20)) /* exact: "4 KiB", "1025 KiB", "4080 B" */
    snprintf(buf, cap, "%zu %s", b >> (10 * whole), units[whole]);
  else { /* not whole: one decimal below 10 units ("4.7 MiB"), none above ("113 MiB") */
    double v = (double)b / (double)((size_t)1 << (10 * big));
    snprintf(buf, cap, "%.*f %s", v < 9.95 ? 1 : 0, v, units[big]);
  }
  return buf;
}

void str_copy(char *dst, size_t cap, const char *src)
{
  size_t n = strnlen(src, cap - 1);
  memcpy(dst, src, n);
  dst[n] = '\0';
}

double gr_pow10(int d)
{
  static const double t[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
  return d >= 0 && d < (int)(sizeof(t) / sizeof(t[0])) ? t[d] : pow(10, d);
}

double gr_strtod(const char *s, char **end)
{
  static const double pow10[] = {1e0, 1e1, 1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
  const char *p = s + (*s == '-');
  unsigned long long m = 0;
  int digits = 0, frac = 0;
  for (; *p >= '0' && *p <= '9' && digits <= 15; p++, digits++)
    m = m * 10 + (unsigned)(*p - '0');
  if (*p == '.')
    for (p++; *p >= '0' && *p <= '9' && digits <= 15; p++, digits++, frac++)
      m = m * 10 + (unsigned)(*p - '0');
  if (digits == 0 || digits > 15 || (*p >= '0' && *p <= '9') || *p == 'e' || *p == 'E' || *p == 'x' || *p == 'X')
    return strtod(s, end);
  double v = (double)m / pow10[frac];
  if (end)
    *end = (char *)p;
  return *s == '-' ? -v : v;
}

bool gr_parse_seconds(const char *s, double min, double max, double *out)
{
  char *end = NULL;
  errno = 0;
  double v = strtod(s, &end);
  if (errno || end == s || isspace((unsigned char)*s))
    return false;
  if (strcmp(end, "ms") == 0)
    v /= 1000.0;
  else if (*end && strcmp(end, "s") != 0)
    return false;
  if (!isfinite(v) || v < min - 1e-9 || v > max)
    return false;
  *out = v;
  return true;
}

bool gr_parse_listen(const char *s, struct sockaddr_storage *sa, unsigned *len)
{
  char addr[128];
  const char *colon = strrchr(s, ':');
  char *end = NULL;
  if (!colon || !isdigit((unsigned char)colon[1]) || (size_t)(colon - s) >= sizeof(addr))
    return false;
  errno = 0;
  long port = strtol(colon + 1, &end, 10);
  if (errno || *end || port < 1 || port > 65535)
    return false;
  memcpy(addr, s, (size_t)(colon - s));
  addr[colon - s] = '\0';
  memset(sa, 0, sizeof(*sa));
  size_t n = strlen(addr);
  if (n >= 2 && addr[0] == '[' && addr[n - 1] == ']') {
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)sa;
    addr[n - 1] = '\0';
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons((uint16_t)port);
    *len = sizeof(*v6);
    return inet_pton(AF_INET6, addr + 1, &v6->sin6_addr) == 1;
  }
  struct sockaddr_in *v4 = (struct sockaddr_in *)sa;
  v4->sin_family = AF_INET;
  v4->sin_port = htons((uint16_t)port);
  *len = sizeof(*v4);
  return inet_pton(AF_INET, n ? addr : "127.0.0.1", &v4->sin_addr) == 1;
}

int gr_uf_find(int *parent, int x)
{
  while (parent[x] != x) {
    parent[x] = parent[parent[x]]; /* path halving: later finds are shorter */
    x = parent[x];
  }
  return x;
}

void gr_uf_union(int *parent, int x, int y)
{
  int a = gr_uf_find(parent, x), b = gr_uf_find(parent, y);
  if (a != b)
    parent[b < a ? a : b] = b < a ? b : a;
}
