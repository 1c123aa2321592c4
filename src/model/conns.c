/* A GPU's power connectors; see conns.h. */
#include "model/conns.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const gr_gpu_conn_words = "6pin|8pin|12vhpwr|12v-2x6|eps8";

/* Whether w (n bytes) is one of gr_gpu_conn_words. */
static int is_conn_word(const char *w, size_t n)
{
  for (const char *q = gr_gpu_conn_words; *q;) {
    size_t len = strcspn(q, "|");
    if (len == n && strncmp(q, w, n) == 0)
      return 1;
    q += len + (q[len] == '|');
  }
  return 0;
}

/* One term, "8pin" or "3x8pin", of n bytes at s, into c. "12v-2x6" is a
 * word of its own, so the whole term is tried as a word before a count. */
static int add_term(const char *s, size_t n, struct gr_conns *c)
{
  int count = 1;
  if (!is_conn_word(s, n)) {
    size_t d = 0;
    while (d < n && isdigit((unsigned char)s[d]))
      d++;
    if (d == 0 || d > 1 || d + 1 >= n || s[d] != 'x' || !is_conn_word(s + d + 1, n - d - 1))
      return -1;
    count = s[0] - '0';
    s += d + 1;
    n -= d + 1;
  }
  if (count < 1 || count > 8 || c->n == GR_CONNS_MAX || n >= sizeof(c->kind[0]))
    return -1;
  for (int i = 0; i < c->n; i++) /* "8pin+8pin" is 2x8pin */
    if (strlen(c->kind[i]) == n && strncmp(c->kind[i], s, n) == 0) {
      c->count[i] += count;
      return c->count[i] > 8 ? -1 : 0;
    }
  memcpy(c->kind[c->n], s, n);
  c->kind[c->n][n] = '\0';
  c->count[c->n++] = count;
  return 0;
}

int gr_conns_parse(const char *text, struct gr_conns *c, char *bad, size_t cap)
{
  memset(c, 0, sizeof(*c));
  const char *s = text;
  do {
    size_t n = strcspn(s, "+");
    if (n == 0 || add_term(s, n, c) != 0) {
      snprintf(bad, cap, "%.*s", (int)n, s);
      memset(c, 0, sizeof(*c));
      return -1;
    }
    s += n + (s[n] == '+');
  } while (*s);
  if (s[-1] == '+') { /* "8pin+": a term left out */
    snprintf(bad, cap, "%s", text);
    memset(c, 0, sizeof(*c));
    return -1;
  }
  return 0;
}

const char *gr_conns_text(const struct gr_conns *c, char *buf, size_t cap)
{
  size_t len = 0;
  buf[0] = '\0';
  for (int i = 0; i < c->n && len < cap; i++) {
    int w = c->count[i] > 1 ? snprintf(buf + len, cap - len, "%s%dx%s", i ? "+" : "", c->count[i], c->kind[i])
                            : snprintf(buf + len, cap - len, "%s%s", i ? "+" : "", c->kind[i]);
    len += w > 0 ? (size_t)w : 0;
  }
  return buf;
}

int gr_conns_pcie_plugs(const struct gr_conns *c)
{
  int n = 0;
  for (int i = 0; i < c->n; i++)
    if (strcmp(c->kind[i], "6pin") == 0 || strcmp(c->kind[i], "8pin") == 0)
      n += c->count[i];
  return n;
}
