/* The streamed JSON writer (print/json_stream.h). */
#include "print/json_stream.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "base/util.h"


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

static bool utf8_ok(const char *s);
static void jl_string(FILE *out, const char *s, bool clean);

/* A member or element built in a small buffer and written with one fwrite:
 * a matrix cell went out as a dozen fputc and fwrite calls, each taking the
 * stream's lock (most of topo --json's instructions at 512 GPUs). */
struct piece {
  char b[192];
  size_t n;
};

static void piece_flush(FILE *out, struct piece *p)
{
  fwrite(p->b, 1, p->n, out);
  p->n = 0;
}

static void piece_add(struct piece *p, const char *s, size_t n)
{
  memcpy(p->b + p->n, s, n);
  p->n += n;
}

/* s quoted, when it needs no escape and fits with room left for ": " and
 * a number after it: printable ASCII without a quote or a backslash (every
 * key, level and name of a matrix). */
static bool piece_quoted(struct piece *p, const char *s)
{
  size_t n = 0;
  while (s[n] && (unsigned char)s[n] >= 0x20 && (unsigned char)s[n] < 0x7f && s[n] != '"' && s[n] != '\\')
    n++;
  if (s[n] || p->n + n + 2 > sizeof(p->b) - 48)
    return false;
  p->b[p->n++] = '"';
  piece_add(p, s, n);
  p->b[p->n++] = '"';
  return true;
}

/* What comes before a member or element: the comma after the last one, the
 * new line and its indentation, and the key (as jansson escapes it; a key
 * that is not UTF-8 was written "", where json_string refused it). */
static void lead_piece(struct gr_jw *w, const char *key, struct piece *p)
{
  static const char blank[] = "                                                                "; /* more than 2 x GR_JW_DEPTH */
  if (w->n[w->level]++)
    p->b[p->n++] = ',';
  p->b[p->n++] = '\n';
  piece_add(p, blank, 2 * (size_t)w->level < sizeof(blank) - 1 ? 2 * (size_t)w->level : sizeof(blank) - 1);
  if (key) {
    if (!piece_quoted(p, key)) {
      piece_flush(w->out, p);
      if (utf8_ok(key))
        jl_string(w->out, key, true);
      else
        fputs("\"\"", w->out);
    }
    piece_add(p, ": ", 2);
  }
}

static void lead(struct gr_jw *w, const char *key)
{
  struct piece p = {.n = 0};
  lead_piece(w, key, &p);
  piece_flush(w->out, &p);
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

void gr_jw_str(struct gr_jw *w, const char *key, const char *s)
{
  struct piece p = {.n = 0};
  lead_piece(w, key, &p);
  if (s && piece_quoted(&p, s)) {
    piece_flush(w->out, &p);
    return;
  }
  piece_flush(w->out, &p);
  if (s && utf8_ok(s))
    jl_string(w->out, s, true);
  else
    fputs("null", w->out);
}

/* v's decimal digits, written backwards ending at end; returns the first. */
static char *digits_back(char *end, unsigned long long v)
{
  do
    *--end = (char)('0' + v % 10);
  while ((v /= 10) > 0);
  return end;
}

void gr_jw_int(struct gr_jw *w, const char *key, long long v)
{
  struct piece p = {.n = 0};
  char num[24], *b = digits_back(num + sizeof(num), v < 0 ? 0 - (unsigned long long)v : (unsigned long long)v);
  if (v < 0)
    *--b = '-';
  lead_piece(w, key, &p);
  piece_add(&p, b, (size_t)(num + sizeof(num) - b));
  piece_flush(w->out, &p);
}

void gr_jw_bool(struct gr_jw *w, const char *key, bool v)
{
  struct piece p = {.n = 0};
  lead_piece(w, key, &p);
  piece_add(&p, v ? "true" : "false", v ? 4 : 5);
  piece_flush(w->out, &p);
}

void gr_jw_null(struct gr_jw *w, const char *key)
{
  struct piece p = {.n = 0};
  lead_piece(w, key, &p);
  piece_add(&p, "null", 4);
  piece_flush(w->out, &p);
}

static void put_real(FILE *out, double v, int precision);

/* A figure of at most 10 significant digits with 2 decimals or fewer, as
 * %.10g prints the double nearest it: its digits, the decimals without
 * trailing zeros, ".0" for a whole number. No printf for the common case. */
static bool put_cents(struct piece *p, double v, int decimals)
{
  if (decimals < 0 || decimals > 2 || !(v < 1e8))
    return false;
  long long k = llround(v * (decimals == 2 ? 100.0 : decimals == 1 ? 10.0 : 1.0));
  char buf[32], *e = buf + sizeof(buf), *b = e;
  int frac = decimals;
  while (frac > 0 && k % 10 == 0) { /* trailing zeros of the decimals go */
    k /= 10;
    frac--;
  }
  if (frac == 0) {
    *--b = '0';
    *--b = '.';
  }
  for (int d = 0; d < frac; d++, k /= 10)
    *--b = (char)('0' + k % 10);
  if (frac > 0)
    *--b = '.';
  b = digits_back(b, (unsigned long long)k);
  piece_add(p, b, (size_t)(e - b));
  return true;
}

void gr_jw_positive(struct gr_jw *w, const char *key, double v, int decimals)
{
  struct piece p = {.n = 0};
  lead_piece(w, key, &p);
  double scale = gr_pow10(decimals), r = round(v * scale) / scale; /* gr_json_rounded's */
  if (!(v > 0) || !isfinite(r)) { /* json_real refuses what is not finite */
    piece_add(&p, "null", 4);
    piece_flush(w->out, &p);
  } else if (put_cents(&p, r, decimals)) {
    piece_flush(w->out, &p);
  } else {
    piece_flush(w->out, &p);
    put_real(w->out, r, 10);
  }
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

/* jansson's jsonp_dtostr: %.*g at its precision, a ".0" where it would read
 * as an integer, the exponent without its '+' and leading zeros. */
static void put_real(FILE *out, double v, int precision)
{
  char buf[64];
  int len = snprintf(buf, sizeof(buf) - 3, "%.*g", precision, v);
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
  fputs(buf, out);
}

/* v as json_real prints it at 15 digits; null when not finite. */
void gr_jl_real(struct gr_jl *l, const char *key, double v)
{
  jl_lead(l, key);
  if (!isfinite(v))
    fputs("null", l->out);
  else
    put_real(l->out, v, 15);
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
