/* The streamed JSON writer (print/json_stream.h). */
#include "print/json_stream.h"

#include <string.h>


/* jansson's dump of one value at the root, re-indented by `indent` spaces
 * after each newline: a string's own newlines are escaped, so every newline
 * in the dump is the layout's. */
struct dump_to {
  FILE *out;
  int indent;
};

static void spaces(FILE *out, int n)
{
  static const char blank[] = "                                                                "; /* more than 2 x GR_JW_DEPTH */
  fwrite(blank, 1, (size_t)n < sizeof(blank) - 1 ? (size_t)n : sizeof(blank) - 1, out);
}

static int put_indented(const char *buf, size_t len, void *data)
{
  const struct dump_to *d = data;
  const char *end = buf + len, *nl;
  while ((nl = memchr(buf, '\n', (size_t)(end - buf))) != NULL) {
    fwrite(buf, 1, (size_t)(nl + 1 - buf), d->out);
    spaces(d->out, d->indent);
    buf = nl + 1;
  }
  fwrite(buf, 1, (size_t)(end - buf), d->out);
  return 0;
}

/* What comes before a member or element: the comma after the last one, the
 * new line and its indentation, and the key. */
static void lead(struct gr_jw *w, const char *key)
{
  if (w->n[w->level]++)
    fputc(',', w->out);
  fputc('\n', w->out);
  spaces(w->out, 2 * w->level);
  if (key) {
    json_t *k = json_string(key);
    struct dump_to d = {w->out, 2 * w->level};
    if (!k || json_dump_callback(k, put_indented, &d, JSON_ENCODE_ANY) != 0)
      fputs("\"\"", w->out);
    json_decref(k);
    fputs(": ", w->out);
  }
}

static void open_as(struct gr_jw *w, char c)
{
  fputc(c, w->out);
  if (w->level < GR_JW_DEPTH)
    w->level++;
  w->n[w->level] = 0;
  w->array[w->level] = c == '[';
}

void gr_jw_begin(struct gr_jw *w, FILE *out)
{
  w->out = out;
  w->level = 0;
  w->n[0] = 0;
  open_as(w, '{');
}

void gr_jw_put(struct gr_jw *w, const char *key, json_t *v)
{
  lead(w, key);
  struct dump_to d = {w->out, 2 * w->level};
  if (!v || json_dump_callback(v, put_indented, &d,
                               JSON_ENCODE_ANY | JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10)) != 0)
    fputs("null", w->out);
  json_decref(v);
}

void gr_jw_object(struct gr_jw *w, const char *key)
{
  lead(w, key);
  open_as(w, '{');
}

void gr_jw_array(struct gr_jw *w, const char *key)
{
  lead(w, key);
  open_as(w, '[');
}

/* Closes the innermost container; the root's close is gr_jw_end's. */
static void close_one(struct gr_jw *w, char c)
{
  bool empty = w->n[w->level] == 0;
  if (w->level > 0)
    w->level--;
  if (!empty) {
    fputc('\n', w->out);
    spaces(w->out, 2 * w->level);
  }
  fputc(c, w->out);
}

void gr_jw_close(struct gr_jw *w)
{
  close_one(w, w->array[w->level] ? ']' : '}');
}

void gr_jw_end(struct gr_jw *w)
{
  close_one(w, '}');
  fputc('\n', w->out);
}
