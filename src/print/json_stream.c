/* The streamed JSON writer (print/json_stream.h). */
#include "print/json_stream.h"

#include <math.h>
#include <stdint.h>
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

/* ---- JSON lines, compact, without allocation ---- */

static void jl_lead(struct gr_jl *l, const char *key)
{
  if (l->more[l->level])
    fputc(',', l->out);
  l->more[l->level] = true;
  if (key)
    fprintf(l->out, "\"%s\":", key);
}

static void jl_open(struct gr_jl *l, const char *key, char c)
{
  jl_lead(l, key);
  fputc(c, l->out);
  if (l->level < GR_JW_DEPTH)
    l->level++;
  l->more[l->level] = false;
  l->array[l->level] = c == '[';
}

void gr_jl_begin(struct gr_jl *l, FILE *out)
{
  l->out = out;
  l->level = 0;
  l->more[0] = false;
  jl_open(l, NULL, '{');
}

void gr_jl_object(struct gr_jl *l, const char *key)
{
  jl_open(l, key, '{');
}

void gr_jl_array(struct gr_jl *l, const char *key)
{
  jl_open(l, key, '[');
}

void gr_jl_close(struct gr_jl *l)
{
  fputc(l->array[l->level] ? ']' : '}', l->out);
  if (l->level > 0)
    l->level--;
}

void gr_jl_end(struct gr_jl *l)
{
  gr_jl_close(l);
  fputc('\n', l->out);
}

/* Length of the UTF-8 sequence at s as jansson accepts it (no overlong
 * forms, no surrogates, nothing past U+10FFFF), 0 when there is none. */
static size_t utf8_len(const unsigned char *s)
{
  size_t n = s[0] < 0x80 ? 1 : s[0] < 0xc2 ? 0 : s[0] < 0xe0 ? 2 : s[0] < 0xf0 ? 3 : s[0] < 0xf5 ? 4 : 0;
  uint32_t cp = n == 1 ? s[0] : s[0] & (0x7f >> n);
  for (size_t k = 1; k < n; k++) {
    if ((s[k] & 0xc0) != 0x80)
      return 0;
    cp = cp << 6 | (s[k] & 0x3f);
  }
  if ((n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
    return 0;
  return n;
}

static bool utf8_ok(const char *s)
{
  for (const unsigned char *p = (const unsigned char *)s; *p;) {
    size_t n = utf8_len(p);
    if (!n)
      return false;
    p += n;
  }
  return true;
}

/* jansson's escapes: the quote, the backslash and control characters. */
static void jl_string(FILE *out, const char *s, bool clean)
{
  fputc('"', out);
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    unsigned c = clean ? *p : (*p >= 0x80 || *p < 0x20) ? '?' : *p;
    switch (c) {
    case '\\': fputs("\\\\", out); break;
    case '"': fputs("\\\"", out); break;
    case '\b': fputs("\\b", out); break;
    case '\f': fputs("\\f", out); break;
    case '\n': fputs("\\n", out); break;
    case '\r': fputs("\\r", out); break;
    case '\t': fputs("\\t", out); break;
    default:
      if (c < 0x20)
        fprintf(out, "\\u%04X", c);
      else
        fputc((int)c, out);
    }
  }
  fputc('"', out);
}

void gr_jl_text(struct gr_jl *l, const char *key, const char *s)
{
  jl_lead(l, key);
  if (!s)
    fputs("null", l->out);
  else
    jl_string(l->out, s, utf8_ok(s));
}

void gr_jl_int(struct gr_jl *l, const char *key, long long v)
{
  jl_lead(l, key);
  fprintf(l->out, "%lld", v);
}

/* jansson's jsonp_dtostr: %.15g, a ".0" where it would read as an integer,
 * the exponent without its '+' and leading zeros. */
void gr_jl_real(struct gr_jl *l, const char *key, double v)
{
  char buf[64];
  jl_lead(l, key);
  if (!isfinite(v)) {
    fputs("null", l->out);
    return;
  }
  int len = snprintf(buf, sizeof(buf) - 3, "%.15g", v);
  if (len < 0 || (size_t)len >= sizeof(buf) - 3)
    len = 0;
  buf[len] = '\0';
  if (!strchr(buf, '.') && !strchr(buf, 'e'))
    strcat(buf, ".0");
  char *e = strchr(buf, 'e');
  if (e) {
    char *start = e + 1, *end = start + 1;
    if (*start == '-')
      start++;
    while (*end == '0')
      end++;
    if (end != start)
      memmove(start, end, strlen(end) + 1);
  }
  fputs(buf, l->out);
}

void gr_jl_bool(struct gr_jl *l, const char *key, bool v)
{
  jl_lead(l, key);
  fputs(v ? "true" : "false", l->out);
}

void gr_jl_null(struct gr_jl *l, const char *key)
{
  jl_lead(l, key);
  fputs("null", l->out);
}
