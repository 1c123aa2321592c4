#include "doctor/expect.h"

#include <ctype.h>
#include <stdarg.h>
#include <strings.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/file.h"
#include "facts/data.h"

#define MAX_WORDS 4
#define EXPECT_MAX (1u << 20) /* a manifest is a few lines; more is not one */

struct word {
  char text[96];
  size_t col; /* 1-based */
};

struct line_ctx {
  const char *name;
  size_t line;
  struct gr_err *err;
};

static int fail_at(const struct line_ctx *lc, size_t col, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail_at(const struct line_ctx *lc, size_t col, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  int rc = gr_fail_at(lc->err, lc->name, lc->line, col, fmt, ap);
  va_end(ap);
  return rc;
}

/* Splits one line into words; a word is a run of non-blank bytes or a
 * double-quoted string. '#' outside quotes ends the line. */
static int split_words(const struct line_ctx *lc, const char *s, size_t n, struct word *w, size_t *nw)
{
  size_t i = 0;
  *nw = 0;
  while (i < n) {
    unsigned char ch = (unsigned char)s[i];
    if (ch == ' ' || ch == '\t' || ch == '\r') {
      i++;
      continue;
    }
    if (ch == '#')
      break;
    if (ch < 0x20 || ch == 0x7f)
      return fail_at(lc, i + 1, "unexpected byte 0x%02x (an expectation file is plain text)", ch);
    if (*nw == MAX_WORDS)
      return fail_at(lc, i + 1, "too many words (a key takes at most 3 values)");
    struct word *cur = &w[(*nw)++];
    size_t len = 0;
    cur->col = i + 1;
    bool quoted = ch == '"';
    if (quoted)
      i++;
    while (i < n && (quoted ? s[i] != '"' : (s[i] != ' ' && s[i] != '\t' && s[i] != '#' && s[i] != '\r'))) {
      if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
        return fail_at(lc, i + 1, "unexpected byte 0x%02x (an expectation file is plain text)", (unsigned char)s[i]);
      if (len + 1 >= sizeof(cur->text))
        return fail_at(lc, cur->col, "value too long (at most 95 bytes)");
      cur->text[len++] = s[i++];
    }
    if (quoted && i >= n)
      return fail_at(lc, cur->col, "unterminated string");
    if (quoted)
      i++;
    cur->text[len] = '\0';
  }
  return 0;
}

static int parse_gpus(const struct line_ctx *lc, const struct word *w, size_t nw, struct gr_expect *e)
{
  long n;
  if (nw != 2 || !parse_long(w[1].text, 10, &n) || n < 0 || n > 4096)
    return fail_at(lc, nw > 1 ? w[1].col : w[0].col + 4, "gpus takes one count from 0 to 4096");
  e->gpus = (int)n;
  e->line_gpus = lc->line;
  return 0;
}

static int parse_link(const struct line_ctx *lc, const struct word *w, size_t nw, struct gr_expect *e)
{
  long gen = 0, width = 0;
  if (nw != 3)
    return fail_at(lc, w[0].col, "link takes a generation and a width, e.g. `link gen4 x16`");
  if (strncasecmp(w[1].text, "gen", 3) != 0 || !parse_long(w[1].text + 3, 10, &gen) || gen < 1 || gen > 7)
    return fail_at(lc, w[1].col, "generation \"%s\": expected gen1 to gen7", w[1].text);
  if ((w[2].text[0] != 'x' && w[2].text[0] != 'X') || !parse_long(w[2].text + 1, 10, &width) ||
      (width != 1 && width != 2 && width != 4 && width != 8 && width != 16 && width != 32))
    return fail_at(lc, w[2].col, "width \"%s\": expected x1, x2, x4, x8, x16 or x32", w[2].text);
  e->link_gen = (int)gen;
  e->link_width = (int)width;
  e->line_link = lc->line;
  return 0;
}

static int parse_driver(const struct line_ctx *lc, const struct word *w, size_t nw, struct gr_expect *e)
{
  if (nw != 3)
    return fail_at(lc, w[0].col, "driver takes a range MIN MAX (inclusive; '*' for an open end)");
  for (size_t i = 1; i < 3; i++)
    if (strcmp(w[i].text, "*") != 0 && !gr_version_valid(w[i].text))
      return fail_at(lc, w[i].col, "driver version \"%s\": expected digits and dots (535.104.05) or '*'", w[i].text);
  if (strcmp(w[1].text, "*") != 0)
    e->driver_min = xstrdup(w[1].text);
  if (strcmp(w[2].text, "*") != 0)
    e->driver_max = xstrdup(w[2].text);
  if (e->driver_min && e->driver_max && gr_version_cmp(e->driver_min, e->driver_max) > 0)
    return fail_at(lc, w[1].col, "driver range is empty: %s is above the maximum", w[1].text);
  e->line_driver = lc->line;
  return 0;
}

static int parse_line(const struct line_ctx *lc, const struct word *w, size_t nw, struct gr_expect *e)
{
  static const char *const keys[] = {"gpus", "model", "link", "driver"};
  size_t *seen[] = {&e->line_gpus, &e->line_model, &e->line_link, &e->line_driver};
  for (size_t k = 0; k < 4; k++) {
    if (strcmp(w[0].text, keys[k]) != 0)
      continue;
    if (*seen[k]) {
      return fail_at(lc, w[0].col, "duplicate key %s (first given at line %zu)", keys[k], *seen[k]);
    }
    switch (k) {
    case 0: return parse_gpus(lc, w, nw, e);
    case 1:
      if (nw != 2 || !w[1].text[0])
        return fail_at(lc, w[0].col, "model takes one name, quoted if it has spaces: model \"RTX 3090\"");
      e->model = xstrdup(w[1].text);
      e->line_model = lc->line;
      return 0;
    case 2: return parse_link(lc, w, nw, e);
    default: return parse_driver(lc, w, nw, e);
    }
  }
  return fail_at(lc, w[0].col, "unknown key \"%s\" (expected gpus, model, link or driver)", w[0].text);
}

int gr_expect_parse(const char *name, const char *buf, size_t len, struct gr_expect *e, struct gr_err *err)
{
  struct line_ctx lc = {name, 0, err};
  struct word w[MAX_WORDS];
  size_t pos = 0, n, nw;
  const char *s;
  memset(e, 0, sizeof(*e));
  e->gpus = -1;
  e->file = xstrdup(name);
  if (memchr(buf, '\0', len))
    goto bad_binary;
  while ((s = next_line(buf, len, &pos, &n)) != NULL) {
    lc.line++;
    if (split_words(&lc, s, n, w, &nw) != 0)
      goto fail;
    if (nw && parse_line(&lc, w, nw, e) != 0)
      goto fail;
  }
  return 0;
bad_binary:
  gr_fail(err, GR_EXIT_FAIL, "%s: binary data (a NUL byte), not an expectation file", name);
fail:
  gr_expect_free(e);
  e->gpus = -1;
  return -1;
}

int gr_expect_load(const char *path, struct gr_expect *e, struct gr_err *err)
{
  struct gr_file f;
  memset(e, 0, sizeof(*e));
  e->gpus = -1;
  /* the shared reader: a directory or a FIFO is named as such at once, and the cap holds while reading */
  if (gr_file_read(path, EXPECT_MAX, 0, &f, err) != 0)
    return -1;
  int rc = gr_expect_parse(path, f.data, f.len, e, err);
  gr_file_free(&f);
  return rc;
}

void gr_expect_free(struct gr_expect *e)
{
  free(e->file);
  free(e->model);
  free(e->driver_min);
  free(e->driver_max);
  memset(e, 0, sizeof(*e));
}
