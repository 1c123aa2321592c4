/* Typed rows from a parsed table; see rows.h. */
#include "facts/rows.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Whether word is one of the '|'-separated words of list. */
static bool word_in(const char *word, const char *list)
{
  size_t n = strlen(word);
  for (const char *p = list; *p;) {
    size_t len = strcspn(p, "|");
    if (len == n && strncmp(p, word, n) == 0)
      return true;
    p += len + (p[len] == '|');
  }
  return false;
}

/* "from 1 to 64" or "from 1 to 64, or *": the range a cell must be in, for the message. */
static void range_text(const struct gr_col_spec *c, char *buf, size_t cap)
{
  snprintf(buf, cap, "from %g to %g%s%s", c->lo, c->hi, c->words ? ", or " : "", c->words ? c->words : "");
}

/* One cell into its field; false (and *what, what was expected) when it
 * does not read as its kind. */
static bool parse_cell(const struct gr_col_spec *c, const char *v, char *dst, char *what, size_t cap)
{
  long l;
  double d;
  char *end;
  switch (c->kind) {
  case GR_COL_STR:
    memcpy(dst + c->offset, &v, sizeof(v));
    return true;
  case GR_COL_WORD:
    snprintf(what, cap, "one of %s", c->words);
    memcpy(dst + c->offset, &v, sizeof(v));
    return word_in(v, c->words);
  case GR_COL_BOOL:
    snprintf(what, cap, "yes or no");
    *(bool *)(void *)(dst + c->offset) = strcmp(v, "yes") == 0;
    return strcmp(v, "yes") == 0 || strcmp(v, "no") == 0;
  case GR_COL_INT: {
    char range[96];
    range_text(c, range, sizeof(range));
    snprintf(what, cap, "a whole number %s", range);
    bool none = c->words && strcmp(v, c->words) == 0;
    l = none ? -1 : 0;
    if (!none && (!parse_long(v, 10, &l) || (double)l < c->lo || (double)l > c->hi))
      return false;
    memcpy(dst + c->offset, &l, sizeof(l));
    return true;
  }
  case GR_COL_NUM: {
    char range[96];
    range_text(c, range, sizeof(range));
    snprintf(what, cap, "a number %s", range);
    d = gr_strtod(v, &end);
    if (end == v || *end || !isfinite(d) || d < c->lo || d > c->hi)
      return false;
    memcpy(dst + c->offset, &d, sizeof(d));
    return true;
  }
  }
  return false;
}

int gr_rows_parse(const struct gr_table *t, const struct gr_col_spec *spec, size_t nspec, size_t row_size,
                  size_t line_offset, void **rows, struct gr_err *err)
{
  size_t *col = xcalloc(nspec + 1, sizeof(*col));
  char *out = xcalloc(t->nrows + 1, row_size);
  *rows = out;
  for (size_t k = 0; k < nspec; k++) {
    int i = gr_table_col(t, spec[k].name);
    if (i < 0) {
      free(col);
      return gr_fail(err, GR_EXIT_CANNOT_RUN, "%s: missing column %s", t->name, spec[k].name);
    }
    col[k] = (size_t)i;
  }
  for (size_t r = 0; r < t->nrows; r++) {
    char *row = out + r * row_size;
    memcpy(row + line_offset, &t->lines[r], sizeof(size_t));
    for (size_t k = 0; k < nspec; k++) {
      const char *v = gr_table_cell(t, r, col[k]);
      char what[160] = "";
      if (!parse_cell(&spec[k], v, row, what, sizeof(what))) {
        gr_fail(err, GR_EXIT_CANNOT_RUN, "%s:%zu:%zu: %s must be %s, not \"%.80s\"", t->name, t->lines[r],
                col[k] + 1, spec[k].name, what, v);
        free(col);
        return -1;
      }
    }
  }
  free(col);
  return 0;
}
