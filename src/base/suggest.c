#include "base/suggest.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/util.h"

/* Lower case without ' ', '-', '_'; false when s is longer than the cap. */
static bool loose(const char *s, char out[GR_SUGGEST_MAX + 1], size_t *n)
{
  *n = 0;
  for (; *s; s++) {
    if (*s == ' ' || *s == '-' || *s == '_')
      continue;
    if (*n == GR_SUGGEST_MAX)
      return false;
    out[(*n)++] = (char)tolower((unsigned char)*s);
  }
  out[*n] = '\0';
  return true;
}

static size_t min3(size_t a, size_t b, size_t c)
{
  size_t m = a < b ? a : b;
  return m < c ? m : c;
}

size_t gr_edit_distance(const char *a, const char *b)
{
  char x[GR_SUGGEST_MAX + 1], y[GR_SUGGEST_MAX + 1];
  size_t n, m;
  if (!a || !b || !loose(a, x, &n) || !loose(b, y, &m))
    return SIZE_MAX;
  /* three rows of the dynamic programme: two back for the swap */
  size_t rows[3][GR_SUGGEST_MAX + 1];
  size_t *prev2 = rows[0], *prev = rows[1], *cur = rows[2];
  for (size_t j = 0; j <= m; j++)
    prev[j] = j;
  for (size_t i = 1; i <= n; i++) {
    cur[0] = i;
    for (size_t j = 1; j <= m; j++) {
      size_t cost = x[i - 1] == y[j - 1] ? 0 : 1;
      cur[j] = min3(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost);
      if (i > 1 && j > 1 && x[i - 1] == y[j - 2] && x[i - 2] == y[j - 1] && prev2[j - 2] + 1 < cur[j])
        cur[j] = prev2[j - 2] + 1;
    }
    size_t *t = prev2;
    prev2 = prev;
    prev = cur;
    cur = t;
  }
  return prev[m];
}

bool gr_name_loose_eq(const char *a, const char *b)
{
  char x[GR_SUGGEST_MAX + 1], y[GR_SUGGEST_MAX + 1];
  size_t n, m;
  return a && b && loose(a, x, &n) && loose(b, y, &m) && n > 0 && n == m && memcmp(x, y, n) == 0;
}

void gr_suggest_init(struct gr_suggest *s, const char *word)
{
  s->word = word;
  s->best[0] = '\0';
  s->dist = SIZE_MAX;
}

/* The word (loose, 3 characters or more) begins the candidate: "tyan" for
 * "tyan-s8030". */
static bool begins(const char *word, const char *candidate)
{
  char x[GR_SUGGEST_MAX + 1], y[GR_SUGGEST_MAX + 1];
  size_t n, m;
  return loose(word, x, &n) && loose(candidate, y, &m) && n >= 3 && n < m && memcmp(x, y, n) == 0;
}

void gr_suggest_offer(struct gr_suggest *s, const char *candidate)
{
  if (!s->word || !candidate)
    return;
  char x[GR_SUGGEST_MAX + 1];
  size_t n;
  if (!loose(s->word, x, &n))
    return;
  size_t limit = n / 3 > 1 ? n / 3 : 1;
  size_t d = gr_edit_distance(s->word, candidate);
  if (d > limit && begins(s->word, candidate))
    d = limit; /* a prefix counts as close: as close as the farthest near miss */
  if (d <= limit && d < s->dist && strlen(candidate) < sizeof(s->best)) {
    str_copy(s->best, sizeof(s->best), candidate);
    s->dist = d;
  }
}

const char *gr_suggest_best(const struct gr_suggest *s)
{
  return s->best[0] ? s->best : NULL;
}

const char *gr_suggest_text(const struct gr_suggest *s, char *buf, size_t cap)
{
  if (s->best[0])
    snprintf(buf, cap, "; did you mean '%s'?", s->best);
  else if (cap)
    buf[0] = '\0';
  return buf;
}
