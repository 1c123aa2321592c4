/* The report's content, built once for both printers; see report_doc.h.
 * The machine's sections come first (header, summary, diagram, GPUs,
 * matrices, hives, predictions, verdicts, findings), then bench's and
 * burn's results when given. Nothing here analyses: every figure is the
 * analysis's, the prediction's, doctor's or the JSON's.
 *
 * This file holds the building blocks, the JSON readers and the whole; the
 * machine's sections are in report_doc_machine.c, bench's and burn's in
 * report_doc_runs.c (print/report/report_doc_internal.h). */
#include "print/report/report_doc.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "facts/catalog.h"
#include "model/names.h"
#include "print/common.h"
#include "print/report/report_doc_internal.h"

/* ---- building blocks ---- */

static char *vfmt(const char *fmt, va_list ap)
{
  va_list c;
  va_copy(c, ap);
  int n = vsnprintf(NULL, 0, fmt, c);
  va_end(c);
  char *p = xmalloc(n > 0 ? (size_t)n + 1 : 1);
  vsnprintf(p, n > 0 ? (size_t)n + 1 : 1, fmt, ap);
  return p;
}

struct rd_block *doc_add(struct rd_doc *d, enum rd_kind kind)
{
  grow_array((void **)&d->v, sizeof(*d->v), &d->cap, d->n + 1);
  struct rd_block *b = &d->v[d->n++];
  memset(b, 0, sizeof(*b));
  b->kind = kind;
  return b;
}

void doc_heading(struct rd_doc *d, int level, const char *id, const char *fmt, ...)
{
  struct rd_block *b = doc_add(d, RD_HEADING);
  va_list ap;
  va_start(ap, fmt);
  b->text = vfmt(fmt, ap);
  va_end(ap);
  b->level = level;
  b->id = xstrdup(id);
}

void doc_text_block(struct rd_doc *d, enum rd_kind kind, const char *fmt, ...)
{
  struct rd_block *b = doc_add(d, kind);
  va_list ap;
  va_start(ap, fmt);
  b->text = vfmt(fmt, ap);
  va_end(ap);
}

/* A table of nrows rows and ncols columns, its header cells empty. */
struct rd_table *doc_table_raw(struct rd_doc *d, const char *title, size_t nrows, size_t ncols)
{
  struct rd_block *b = doc_add(d, RD_TABLE);
  struct rd_table *t = xcalloc(1, sizeof(*t));
  b->text = xstrdup(title);
  b->table = t;
  t->ncols = ncols;
  t->nrows = nrows;
  t->head = xcalloc(ncols + 1, sizeof(*t->head));
  t->cells = xcalloc(nrows * ncols + 1, sizeof(*t->cells));
  return t;
}

/* A table whose header is the ncols strings given. */
struct rd_table *doc_table(struct rd_doc *d, const char *title, size_t nrows, size_t ncols, ...)
{
  struct rd_table *t = doc_table_raw(d, title, nrows, ncols);
  va_list ap;
  va_start(ap, ncols);
  for (size_t c = 0; c < ncols; c++)
    t->head[c].text = xstrdup(va_arg(ap, const char *));
  va_end(ap);
  return t;
}

/* Fills the next cell, row by row; a cell past the last is dropped. */
void doc_cell(struct rd_table *t, const char *cls, const char *fmt, ...)
{
  if (t->filled >= t->nrows * t->ncols)
    return;
  va_list ap;
  va_start(ap, fmt);
  t->cells[t->filled].text = vfmt(fmt, ap);
  va_end(ap);
  t->cells[t->filled++].cls = cls;
}

void doc_cell_str(struct rd_table *t, const char *cls, const char *s)
{
  doc_cell(t, cls, "%s", s ? s : "");
}

void doc_row_gpu(struct rd_table *t, size_t row, size_t gpu)
{
  if (!t->row_gpu)
    t->row_gpu = xcalloc(t->nrows + 1, sizeof(char *));
  if (row < t->nrows)
    t->row_gpu[row] = xasprintf("GPU%zu", gpu);
}

void doc_row_node(struct rd_table *t, size_t row, const char *name)
{
  if (!t->row_node)
    t->row_node = xcalloc(t->nrows + 1, sizeof(char *));
  if (row < t->nrows)
    t->row_node[row] = xstrdup(name);
}

struct rd_bar *doc_bars(struct rd_doc *d, const char *title, const char *unit, size_t n)
{
  struct rd_block *b = doc_add(d, RD_BARS);
  b->text = xstrdup(title);
  b->unit = xstrdup(unit);
  b->bars = xcalloc(n + 1, sizeof(*b->bars));
  b->nbars = n;
  for (size_t i = 0; i < n; i++)
    b->bars[i].value = b->bars[i].predicted = b->bars[i].limit = NAN;
  return b->bars;
}

/* The heat class of v on a scale up to hi (0 and unknown: none). */
const char *doc_heat(double v, double hi)
{
  static const char *const cls[RD_HEAT] = {"h0", "h1", "h2", "h3", "h4", "h5", "h6", "h7"};
  if (!(v > 0) || !(hi > 0))
    return NULL;
  int k = (int)(v / hi * (RD_HEAT - 1) + 0.5);
  return cls[k < 0 ? 0 : k >= RD_HEAT ? RD_HEAT - 1 : k];
}

const char *doc_sev_cls(enum gr_sev s)
{
  static const char *const cls[GR_SEV_COUNT] = {[GR_SEV_OK] = "sev-ok",     [GR_SEV_INFO] = "sev-info",
                                                [GR_SEV_WARN] = "sev-warn", [GR_SEV_FAIL] = "sev-fail",
                                                [GR_SEV_SKIPPED] = "sev-skipped", [GR_SEV_ERROR] = "sev-error"};
  return (unsigned)s < GR_SEV_COUNT ? cls[s] : NULL;
}

const char *doc_level_cls(enum gr_level l)
{
  static const char *const cls[] = {[GR_LVL_X] = "lv-x",     [GR_LVL_GPULINK] = "lv-nv",     [GR_LVL_PIX] = "lv-pix",
                                    [GR_LVL_PXB] = "lv-pxb", [GR_LVL_PHB] = "lv-phb",   [GR_LVL_NODE] = "lv-node",
                                    [GR_LVL_SYS] = "lv-sys"};
  return (unsigned)l <= GR_LVL_SYS ? cls[l] : NULL;
}

/* ---- JSON, read defensively: a file a user saved may hold anything ---- */

double doc_jnum(const json_t *o, const char *key)
{
  const json_t *v = json_object_get(o, key);
  double x = json_is_number(v) ? json_number_value(v) : NAN;
  return isfinite(x) ? x : NAN;
}

const char *doc_jstr(const json_t *o, const char *key)
{
  return json_string_value(json_object_get(o, key));
}

/* An index (a GPU), -1 for null or anything else. */
long doc_jidx(const json_t *o, const char *key)
{
  const json_t *v = json_object_get(o, key);
  return json_is_integer(v) && json_integer_value(v) >= 0 && json_integer_value(v) < 100000
             ? (long)json_integer_value(v) : -1;
}

enum gr_sev doc_sev_of(const char *s)
{
  for (int k = 0; k < GR_SEV_COUNT && s; k++)
    if (strcmp(s, gr_sev_name((enum gr_sev)k)) == 0)
      return (enum gr_sev)k;
  return GR_SEV_ERROR; /* a severity gpurig does not write: shown, never hidden as fine */
}

/* A number for a cell: one decimal, "" unknown. */
static char *num_text(double v, int decimals)
{
  return isfinite(v) ? xasprintf("%.*f", decimals, v) : xstrdup("");
}

void doc_cell_num(struct rd_table *t, const char *cls, double v, int decimals)
{
  char *s = num_text(v, decimals);
  doc_cell_str(t, cls, s);
  free(s);
}

/* ---- the whole ---- */

void rd_build(const struct gr_report_doc *doc, struct rd_doc *out)
{
  memset(out, 0, sizeof(*out));
  out->diagram_svg = doc->diagram_svg;
  doc_header(out, doc);
  doc_summary(out, doc);
  doc_diagram(out, doc);
  doc_gpus(out, doc->m);
  doc_matrices(out, doc->m);
  doc_hives(out, doc->m);
  doc_predictions(out, doc);
  doc_verdicts(out, doc->m);
  doc_power(out, doc->m);
  doc_findings(out, doc);
  doc_bench(out, doc);
  doc_burn(out, doc);
}

static void free_table(struct rd_table *t)
{
  if (!t)
    return;
  for (size_t c = 0; c < t->ncols; c++)
    free(t->head[c].text);
  for (size_t i = 0; i < t->nrows * t->ncols; i++)
    free(t->cells[i].text);
  for (size_t r = 0; t->row_gpu && r < t->nrows; r++)
    free(t->row_gpu[r]);
  for (size_t r = 0; t->row_node && r < t->nrows; r++)
    free(t->row_node[r]);
  free(t->row_gpu);
  free(t->row_node);
  free(t->head);
  free(t->cells);
  free(t);
}

static void free_panels(struct rd_panels *p)
{
  if (!p)
    return;
  for (size_t r = 0; r < p->nrows; r++)
    free(p->row_label[r]);
  for (size_t k = 0; k < p->npanels; k++)
    free(p->panel_title[k]);
  free(p->row_label);
  free(p->row_cls);
  free(p->panel_title);
  free(p->v);
  free(p);
}

void rd_free(struct rd_doc *d)
{
  for (size_t i = 0; i < d->n; i++) {
    struct rd_block *b = &d->v[i];
    free(b->id);
    free(b->text);
    free(b->unit);
    free_table(b->table);
    for (size_t k = 0; k < b->nbars; k++)
      free(b->bars[k].label);
    free(b->bars);
    if (b->line) {
      free(b->line->x);
      free(b->line->y);
      free(b->line->ref_label);
      free(b->line);
    }
    free_panels(b->panels);
  }
  free(d->v);
  memset(d, 0, sizeof(*d));
}

bool rd_column_shown(const struct rd_table *t, size_t c)
{
  if (!t->drop_empty)
    return true;
  for (size_t r = 0; r < t->nrows; r++)
    if (t->cells[r * t->ncols + c].text && t->cells[r * t->ncols + c].text[0])
      return true;
  return false;
}

size_t rd_utf8_len(const unsigned char *s)
{
  if (s[0] < 0x80)
    return 1;
  size_t n = s[0] >= 0xc2 && s[0] <= 0xdf ? 2 : s[0] >= 0xe0 && s[0] <= 0xef ? 3 : s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : 0;
  for (size_t i = 1; i < n; i++)
    if ((s[i] & 0xc0) != 0x80)
      return 0;
  if ((n == 3 && s[0] == 0xe0 && s[1] < 0xa0) || (n == 3 && s[0] == 0xed && s[1] >= 0xa0) ||
      (n == 4 && s[0] == 0xf0 && s[1] < 0x90) || (n == 4 && s[0] == 0xf4 && s[1] >= 0x90))
    return 0; /* overlong, a surrogate, or past U+10FFFF */
  if (n == 2 && s[0] == 0xc2 && s[1] < 0xa0)
    return 0; /* a C1 control */
  return n;
}

/* ---- input checks ---- */

bool gr_report_bench_ok(const json_t *j, const char **why)
{
  if (!json_is_object(j))
    *why = "is not a JSON object (expected gpurig bench --json output)";
  else if (json_is_array(json_object_get(j, "verdicts")) && json_is_array(json_object_get(j, "gpus")) &&
           !json_object_get(j, "results"))
    *why = "is gpurig burn --json output, not bench's (give it to --burn)";
  else if (!json_is_array(json_object_get(j, "results")) || !json_is_string(json_object_get(j, "backend")))
    *why = "is not gpurig bench --json output (no \"results\" array or \"backend\")";
  else
    return true;
  return false;
}

bool gr_report_burn_ok(const json_t *j, const char **why)
{
  if (!json_is_object(j))
    *why = "is not a JSON object (expected gpurig burn --json output)";
  else if (json_is_array(json_object_get(j, "results")) && json_object_get(j, "backend"))
    *why = "is gpurig bench --json output, not burn's (give it to --bench)";
  else if (!json_is_array(json_object_get(j, "gpus")) || !json_is_array(json_object_get(j, "verdicts")))
    *why = "is not gpurig burn --json output (no \"gpus\" and \"verdicts\" arrays)";
  else
    return true;
  return false;
}
