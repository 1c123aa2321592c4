/* What every printer shares; see common.h. */
#include "print/common.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "model/finding.h"

json_t *gr_json_text(const char *s)
{
  if (!s)
    return json_null();
  json_t *j = json_string(s);
  if (j)
    return j;
  /* not UTF-8 (bytes quoted from a broken file): keep the text readable */
  char *copy = xstrdup(s);
  for (char *p = copy; *p; p++)
    if ((unsigned char)*p >= 0x80 || (unsigned char)*p < 0x20)
      *p = '?';
  j = json_string(copy);
  free(copy);
  return j;
}

/* Length of the well-formed UTF-8 sequence at s that is an XML character
 * (no surrogates, U+FFFE, U+FFFF, nor overlong forms), 0 if there is none. */
static size_t xml_utf8_len(const unsigned char *s)
{
  size_t n = s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc2 && s[0] < 0xe0 ? 2 : 0;
  if (n == 0 || s[0] > 0xf4)
    return 0;
  unsigned long cp = s[0] & (0x7f >> n);
  for (size_t k = 1; k < n; k++) {
    if ((s[k] & 0xc0) != 0x80)
      return 0;
    cp = cp << 6 | (s[k] & 0x3f);
  }
  bool overlong = (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000);
  if (overlong || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) || cp == 0xfffe || cp == 0xffff)
    return 0;
  return n;
}

char *gr_text_clean(const char *s)
{
  const unsigned char *p = (const unsigned char *)s;
  char *out = xmalloc(strlen(s) + 1), *o = out;
  while (*p) {
    size_t n = *p >= 0x80 ? xml_utf8_len(p) : 1;
    if (*p >= 0x80 && n) {
      memcpy(o, p, n);
      o += n;
    } else if (*p >= 0x80) {
      *o++ = '?';
    } else if (*p >= 0x20 && *p != 0x7f) {
      *o++ = (char)*p;
    }
    p += n ? n : 1;
  }
  *o = '\0';
  return out;
}

void gr_xml_text(FILE *out, const char *s)
{
  char *clean = gr_text_clean(s);
  for (const char *p = clean; *p; p++) {
    switch (*p) {
    case '&': fputs("&amp;", out); break;
    case '<': fputs("&lt;", out); break;
    case '>': fputs("&gt;", out); break;
    case '"': fputs("&quot;", out); break;
    default: fputc(*p, out);
    }
  }
  free(clean);
}

json_t *gr_json_rounded(double v, int decimals)
{
  double scale = gr_pow10(decimals);
  return json_real(round(v * scale) / scale);
}

json_t *gr_json_positive(double v, int decimals)
{
  return v > 0 ? gr_json_rounded(v, decimals) : json_null();
}

void gr_json_print(FILE *out, json_t *j)
{
  json_dumpf(j, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
  fputc('\n', out);
}

void gr_print_machine_line(FILE *out, const struct gr_topo *t)
{
  fprintf(out, "Machine: %s", t->product ? t->product : "(unnamed)");
  if (t->hostname)
    fprintf(out, " (%s)", t->hostname);
  if (t->source_path)
    fprintf(out, " [%s %s]", gr_topo_input_name(t), t->source_path);
  else
    fprintf(out, " [%s]", gr_topo_input_name(t));
}

char *gr_cpu_short_name(const char *model)
{
  static const char *const drop[] = {"(R)", "(r)", "(TM)", "(tm)", " CPU", " Processor"};
  char *s = xstrdup(model);
  s[strcspn(s, "@,")] = '\0';
  for (size_t k = 0; k < sizeof(drop) / sizeof(drop[0]); k++)
    for (char *p; (p = strstr(s, drop[k])) != NULL;)
      memmove(p, p + strlen(drop[k]), strlen(p + strlen(drop[k])) + 1);
  const char *start = s;
  if (str_starts_with(start, "Intel ") && start[6])
    start += 6;
  else if (str_starts_with(start, "AMD ") && start[4])
    start += 4;
  while (*start == ' ')
    start++;
  char *name = xstrdup(*start ? start : model);
  str_rtrim(name);
  free(s);
  return name;
}

const char *gr_nic_legend_name(const struct gr_pci *p, char *buf, size_t cap)
{
  if (p->rdma_name)
    snprintf(buf, cap, "%s", p->rdma_name);
  else if (p->osdevs && p->osdevs[0])
    snprintf(buf, cap, "%.*s", (int)strcspn(p->osdevs, " "), p->osdevs);
  else
    gr_pci_busid(p, buf, cap);
  return buf;
}

void gr_print_warnings(FILE *err, const struct gr_topo *t)
{
  for (size_t i = 0; i < t->nwarnings; i++)
    fprintf(err, "gpurig: warning: %s\n", t->warnings[i]);
}

json_t *gr_finding_to_json(const struct gr_finding *r)
{
  json_t *o = json_object(), *ev = json_array();
  json_object_set_new(o, "id", json_string(r->id));
  json_object_set_new(o, "title", json_string(r->title));
  json_object_set_new(o, "severity", json_string(gr_sev_name(r->sev)));
  json_object_set_new(o, "subject", gr_json_text(r->subject));
  json_object_set_new(o, "pci_bus_id", gr_json_text(r->pci_bus_id));
  json_object_set_new(o, "message", gr_json_text(r->text));
  for (size_t e = 0; e < r->nev; e++) {
    json_t *x = json_object();
    json_object_set_new(x, "file", gr_json_text(r->ev[e].file));
    json_object_set_new(x, "value", gr_json_text(r->ev[e].value));
    json_array_append_new(ev, x);
  }
  json_object_set_new(o, "evidence", ev);
  json_object_set_new(o, "fix", gr_json_text(r->fix));
  json_object_set_new(o, "cost", gr_json_text(r->cost));
  json_object_set_new(o, "reference", gr_json_text(r->reference));
  json_object_set_new(o, "needs_root", json_boolean(r->needs_root));
  return o;
}

void gr_set_text(char *buf, size_t cap, const char *s)
{
  size_t n = strlen(s);
  n = n < cap ? n : cap - 1;
  memcpy(buf, s, n);
  buf[n] = '\0';
}

size_t gr_put_cell(char *dst, const char *s, size_t width)
{
  size_t n = strlen(s), len = 0;
  dst[len++] = ' ';
  memcpy(dst + len, s, n);
  len += n;
  for (; n < width; n++)
    dst[len++] = ' ';
  return len;
}

void gr_fmt_1f(double v, char *buf, size_t cap)
{
  static _Thread_local double last_v = NAN;
  static _Thread_local char last_text[32];
  if (v != last_v) { /* NAN never equals: the first call formats */
    snprintf(last_text, sizeof(last_text), "%.1f", v);
    last_v = v;
  }
  gr_set_text(buf, cap, last_text);
}
