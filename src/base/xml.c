/* The XML reader (base/xml.h): one linear pass over the bytes with a stack
 * of the open elements, every byte passed once, every error at its line
 * and column. */
#include "base/xml.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

void gr_xml_free(struct gr_xml_doc *d)
{
  free(d->el);
  free(d->at);
  memset(d, 0, sizeof(*d));
}

struct reader {
  const char *name, *buf;
  size_t len, pos;
  unsigned line;
  size_t line_start;      /* offset of the current line's first byte */
  int *stack;             /* the open elements, f->max_depth of them at most */
  unsigned depth;
  bool root_done;
  const struct gr_xml_format *f;
  struct gr_xml_doc *d;
  struct gr_err *err;
};


static unsigned col_of(const struct reader *r)
{
  return (unsigned)(r->pos - r->line_start + 1);
}

/* Moves n bytes on, counting lines: every byte is passed once. */
static void advance(struct reader *r, size_t n)
{
  size_t end = r->pos + n;
  for (; r->pos < end; r->pos++)
    if (r->buf[r->pos] == '\n') {
      r->line++;
      r->line_start = r->pos + 1;
    }
}

bool gr_xml_is_space(char c)
{
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static bool looking_at(const struct reader *r, const char *s)
{
  size_t n = strlen(s);
  return r->len - r->pos >= n && memcmp(r->buf + r->pos, s, n) == 0;
}

static void skip_space(struct reader *r)
{
  size_t n = 0;
  while (r->pos + n < r->len && gr_xml_is_space(r->buf[r->pos + n]))
    n++;
  advance(r, n);
}

static bool name_start(char c)
{
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
}

static bool name_char(char c)
{
  return name_start(c) || (c >= '0' && c <= '9') || c == '-' || c == '.';
}

/* The length of the name at the reader, 0 when none starts there. */
static size_t name_at(const struct reader *r)
{
  size_t n = 0;
  if (r->pos >= r->len || !name_start(r->buf[r->pos]))
    return 0;
  while (r->pos + n < r->len && name_char(r->buf[r->pos + n]))
    n++;
  return n;
}

/* Skips from the reader (at an opening `from` bytes long) past `end` (a
 * comment, a processing instruction); what is not closed is an error at its
 * start. */
static int skip_past(struct reader *r, size_t from, const char *end, const char *what)
{
  unsigned line = r->line, col = col_of(r);
  const char *hit = memmem(r->buf + r->pos + from, r->len - r->pos - from, end, strlen(end));
  if (!hit)
    return gr_fail_place(r->err, r->name, line, col, "%s never closed with \"%s\" (the file ends first)", what, end);
  advance(r, (size_t)(hit - (r->buf + r->pos)) + strlen(end));
  return 0;
}

bool gr_xml_name_is(const char *s, size_t n, const char *want)
{
  return n == strlen(want) && memcmp(s, want, n) == 0;
}

static int check_value(struct reader *r, size_t start, size_t n, unsigned line, unsigned col)
{
  if (n > r->f->max_value)
    return gr_fail_place(r->err, r->name, line, col, "attribute value longer than %u bytes%s", r->f->max_value,
                   r->f->limit_note);
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)r->buf[start + i];
    if (c == '<')
      return gr_fail_place(r->err, r->name, line, col + (unsigned)i, "'<' inside an attribute value");
    if (c < 0x20 || c >= 0x7f)
      return gr_fail_place(r->err, r->name, line, col + (unsigned)i,
                     "byte 0x%02x inside an attribute value (%s is plain ASCII)", c, r->f->what);
  }
  return 0;
}

/* One `key="value"` (or 'value') of element e, at the reader. */
static int read_attr(struct reader *r, struct gr_xml_elem *e)
{
  unsigned line = r->line, col = col_of(r);
  size_t klen = name_at(r);
  if (!klen)
    return gr_fail_place(r->err, r->name, line, col, "expected an attribute name, '>' or '/>'");
  if (klen > r->f->max_name)
    return gr_fail_place(r->err, r->name, line, col, "attribute name longer than %u bytes", r->f->max_name);
  if (e->nattrs == r->f->max_attrs)
    return gr_fail_place(r->err, r->name, line, col, "more than %u attributes in one element", r->f->max_attrs);
  const char *key = r->buf + r->pos;
  for (unsigned i = 0; i < e->nattrs; i++) {
    const struct gr_xml_attr *a = &r->d->at[e->attr0 + i];
    if (a->klen == klen && memcmp(a->key, key, klen) == 0)
      return gr_fail_place(r->err, r->name, line, col, "attribute %.*s given twice", (int)klen, key);
  }
  advance(r, klen);
  skip_space(r);
  if (!looking_at(r, "="))
    return gr_fail_place(r->err, r->name, r->line, col_of(r), "expected '=' after attribute %.*s", (int)klen, key);
  advance(r, 1);
  skip_space(r);
  char quote = r->pos < r->len ? r->buf[r->pos] : '\0';
  if (quote != '"' && quote != '\'')
    return gr_fail_place(r->err, r->name, r->line, col_of(r), "expected a quoted value for attribute %.*s", (int)klen, key);
  advance(r, 1);
  unsigned vline = r->line, vcol = col_of(r);
  const char *end = memchr(r->buf + r->pos, quote, r->len - r->pos);
  if (!end)
    return gr_fail_place(r->err, r->name, vline, vcol - 1, "unterminated attribute value (no closing %c)", quote);
  size_t vlen = (size_t)(end - (r->buf + r->pos));
  if (check_value(r, r->pos, vlen, vline, vcol) != 0)
    return -1;
  grow_array((void **)&r->d->at, sizeof(*r->d->at), &r->d->cap_at, r->d->nat);
  r->d->at[r->d->nat++] = (struct gr_xml_attr){key, r->buf + r->pos, klen, vlen, vline, vcol};
  e->nattrs++;
  advance(r, vlen + 1);
  return 0;
}

/* A new element at the reader (its '<' at line, col) named [s, s+n). */
static int new_elem(struct reader *r, const char *s, size_t n, unsigned line, unsigned col)
{
  struct gr_xml_doc *d = r->d;
  const struct gr_xml_format *f = r->f;
  int parent = r->depth ? r->stack[r->depth - 1] : -1;
  if (d->nel == f->max_elems)
    return gr_fail_place(r->err, r->name, line, col, "more than %u elements%s", f->max_elems, f->elems_note);
  if (r->depth == f->max_depth)
    return gr_fail_place(r->err, r->name, line, col, "elements nested more than %u levels deep%s", f->max_depth,
                   f->depth_note);
  if (parent < 0 && r->root_done)
    return gr_fail_place(r->err, r->name, line, col, "a second top-level element <%.*s> after </%.*s>", (int)n, s,
                   (int)d->el[0].nlen, d->el[0].name);
  if (parent < 0 && !gr_xml_name_is(s, n, f->root))
    return gr_fail_place(r->err, r->name, line, col, "expected %s (%s), got <%.*s>", f->root_hint, f->what, (int)n, s);
  if (parent >= 0 && ++d->el[parent].nchildren > f->max_children)
    return gr_fail_place(r->err, r->name, line, col, "more than %u elements inside one <%.*s>%s", f->max_children,
                   (int)d->el[parent].nlen, d->el[parent].name, f->limit_note);
  grow_array((void **)&d->el, sizeof(*d->el), &d->cap_el, d->nel);
  d->el[d->nel++] = (struct gr_xml_elem){.name = s, .nlen = n, .line = line, .col = col, .parent = parent,
                                         .attr0 = d->nat};
  return 0;
}

/* `<name attr="v" ...>` or `<name .../>`, the reader at '<'. */
static int open_tag(struct reader *r)
{
  unsigned line = r->line, col = col_of(r);
  advance(r, 1);
  size_t n = name_at(r);
  if (!n)
    return gr_fail_place(r->err, r->name, line, col, "expected an element name after '<'");
  if (n > r->f->max_name)
    return gr_fail_place(r->err, r->name, line, col, "element name longer than %u bytes", r->f->max_name);
  const char *s = r->buf + r->pos;
  if (new_elem(r, s, n, line, col) != 0)
    return -1;
  int self = (int)r->d->nel - 1;
  advance(r, n);
  for (;;) {
    size_t before = r->pos;
    skip_space(r);
    if (looking_at(r, "/>")) {
      advance(r, 2);
      r->root_done |= r->depth == 0;
      return 0;
    }
    if (looking_at(r, ">")) {
      advance(r, 1);
      r->stack[r->depth++] = self;
      return 0;
    }
    if (r->pos >= r->len)
      return gr_fail_place(r->err, r->name, line, col, "unterminated tag <%.*s> (the file ends first)", (int)n, s);
    if (r->pos == before)
      return gr_fail_place(r->err, r->name, r->line, col_of(r), "expected a space, '>' or '/>' in <%.*s>", (int)n, s);
    if (read_attr(r, &r->d->el[self]) != 0)
      return -1;
  }
}

/* `</name>`, the reader at '<'. */
static int close_tag(struct reader *r)
{
  unsigned line = r->line, col = col_of(r);
  advance(r, 2);
  size_t n = name_at(r);
  const char *s = r->buf + r->pos;
  if (!n)
    return gr_fail_place(r->err, r->name, line, col, "expected an element name after '</'");
  if (!r->depth)
    return gr_fail_place(r->err, r->name, line, col, "closing tag </%.*s> with no element open", (int)n, s);
  const struct gr_xml_elem *open = &r->d->el[r->stack[r->depth - 1]];
  if (n != open->nlen || memcmp(s, open->name, n) != 0)
    return gr_fail_place(r->err, r->name, line, col, "closing tag </%.*s> does not match <%.*s> (line %u, column %u)",
                   (int)n, s, (int)open->nlen, open->name, open->line, open->col);
  advance(r, n);
  skip_space(r);
  if (!looking_at(r, ">"))
    return gr_fail_place(r->err, r->name, r->line, col_of(r), "expected '>' to end </%.*s>", (int)n, s);
  advance(r, 1);
  r->depth--;
  r->root_done |= r->depth == 0;
  return 0;
}

/* One item of markup, the reader at '<'. */
static int read_markup(struct reader *r)
{
  if (looking_at(r, "<!--"))
    return skip_past(r, 4, "-->", "comment");
  if (looking_at(r, "<?"))
    return skip_past(r, 2, "?>", "processing instruction");
  if (looking_at(r, "<!"))
    return gr_fail_place(r->err, r->name, r->line, col_of(r), "%s are not part of %s",
                   looking_at(r, "<![CDATA[") ? "CDATA sections" : "document type declarations", r->f->what);
  if (looking_at(r, "</"))
    return close_tag(r);
  return open_tag(r);
}

/* The position of the first NUL byte, as line and column. */
static int refuse_binary(struct reader *r, const char *nul)
{
  size_t n = (size_t)(nul - r->buf);
  advance(r, n);
  return gr_fail_place(r->err, r->name, r->line, col_of(r), "binary data (NUL byte): not %s", r->f->what);
}

static int read_all(struct reader *r)
{
  const char *nul = memchr(r->buf, '\0', r->len);
  if (nul)
    return refuse_binary(r, nul);
  if (r->len >= 3 && memcmp(r->buf, "\xef\xbb\xbf", 3) == 0) /* a UTF-8 byte order mark */
    r->pos = r->line_start = 3;
  for (;;) {
    skip_space(r);
    if (r->pos >= r->len)
      break;
    if (r->buf[r->pos] != '<')
      return gr_fail_place(r->err, r->name, r->line, col_of(r), "text outside a tag (%s holds only elements)", r->f->what);
    if (read_markup(r) != 0)
      return -1;
  }
  if (r->depth) {
    const struct gr_xml_elem *open = &r->d->el[r->stack[r->depth - 1]];
    return gr_fail_place(r->err, r->name, open->line, open->col, "<%.*s> is never closed (the file ends first)",
                   (int)open->nlen, open->name);
  }
  if (!r->d->nel)
    return gr_fail_place(r->err, r->name, r->line, col_of(r), "no <%s> element: not %s", r->f->root, r->f->what);
  return 0;
}

int gr_xml_read(const char *name, const char *buf, size_t len, const struct gr_xml_format *f, struct gr_xml_doc *d,
                struct gr_err *err)
{
  struct reader r = {.name = name, .buf = buf, .len = len, .line = 1, .f = f, .d = d, .err = err};
  memset(d, 0, sizeof(*d));
  r.stack = xcalloc(f->max_depth + 1, sizeof(*r.stack));
  int rc = read_all(&r);
  free(r.stack);
  if (rc != 0)
    gr_xml_free(d);
  return rc;
}
