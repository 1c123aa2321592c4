/* gpurig report --markdown: the report's blocks (report_doc.h) as
 * GitHub-flavoured Markdown for issues and forums; see report_html.h. Heat
 * maps become plain tables, charts become tables of their figures, the
 * diagram an image link to the SVG file the caller writes beside it. */
#include "print/report/report_html.h"

#include <math.h>
#include <string.h>

#include "print/report/report_doc.h"

/* Text with Markdown's and HTML's active characters escaped by a backslash
 * (CommonMark escapes any ASCII punctuation), line breaks and other controls
 * as spaces, so that an input cannot open a link, an image, HTML or a new
 * table cell. */
static void md(FILE *f, const char *s)
{
  const unsigned char *p = (const unsigned char *)(s ? s : "");
  while (*p) {
    size_t n = rd_utf8_len(p);
    if (!n) {
      fputs("\xef\xbf\xbd", f); /* not UTF-8: U+FFFD */
      p++;
      continue;
    }
    if (strchr("\\`*_[]<>|~&#!", *p))
      fputc('\\', f);
    if (*p < 0x20 || *p == 0x7f)
      fputc(' ', f);
    else
      fwrite(p, 1, n, f);
    p += n;
  }
}

static void md_row_start(FILE *f)
{
  fputc('|', f);
}

static void md_cell(FILE *f, const char *s)
{
  fputc(' ', f);
  md(f, s && *s ? s : "");
  fputs(" |", f);
}

static void md_rule(FILE *f, size_t ncols)
{
  md_row_start(f);
  for (size_t c = 0; c < ncols; c++)
    fputs("---|", f);
  fputc('\n', f);
}

static void md_table(FILE *f, const struct rd_block *b)
{
  const struct rd_table *t = b->table;
  if (b->text) {
    fputs("**", f);
    md(f, b->text);
    fputs("**\n\n", f);
  }
  size_t shown = 0;
  md_row_start(f);
  for (size_t c = 0; c < t->ncols; c++)
    if (rd_column_shown(t, c)) {
      md_cell(f, t->head[c].text);
      shown++;
    }
  fputc('\n', f);
  md_rule(f, shown);
  for (size_t r = 0; r < t->nrows; r++) {
    md_row_start(f);
    for (size_t c = 0; c < t->ncols; c++)
      if (rd_column_shown(t, c))
        md_cell(f, t->cells[r * t->ncols + c].text);
    fputc('\n', f);
  }
  fputc('\n', f);
}

static void md_num(FILE *f, double v, int decimals)
{
  if (isfinite(v))
    fprintf(f, " %.*f |", decimals, v);
  else
    fputs("  |", f);
}

/* A bullet chart as its figures, with the share of the limit. */
static void md_bars(FILE *f, const struct rd_block *b)
{
  bool any_value = false;
  for (size_t i = 0; i < b->nbars; i++)
    any_value |= isfinite(b->bars[i].value);
  fputs("**", f);
  md(f, b->text);
  fputs("**\n\n|  |", f);
  if (any_value)
    fprintf(f, " measured, %s | predicted, %s | limit, %s | measured / limit |\n|---|---|---|---|---|\n", b->unit,
            b->unit, b->unit);
  else
    fprintf(f, " predicted, %s | limit, %s | predicted / limit |\n|---|---|---|---|\n", b->unit, b->unit);
  for (size_t i = 0; i < b->nbars; i++) {
    const struct rd_bar *r = &b->bars[i];
    double shown = any_value ? r->value : r->predicted;
    md_row_start(f);
    md_cell(f, r->label);
    if (any_value)
      md_num(f, r->value, 1);
    md_num(f, r->predicted, 1);
    md_num(f, r->limit, 1);
    if (isfinite(shown) && isfinite(r->limit) && r->limit > 0)
      fprintf(f, " %.0f%% |\n", shown / r->limit * 100);
    else
      fputs("  |\n", f);
  }
  fputc('\n', f);
}

static void md_block(FILE *f, const struct rd_doc *d, const struct rd_block *b, const char *svg_name)
{
  if (b->md_skip)
    return;
  switch (b->kind) {
  case RD_HEADING:
    fprintf(f, "%.*s ", b->level < 1 ? 1 : b->level > 6 ? 6 : b->level, "######");
    md(f, b->text);
    fputs("\n\n", f);
    break;
  case RD_PARA:
  case RD_NOTE:
    if (b->kind == RD_NOTE)
      fputc('_', f);
    md(f, b->text);
    fputs(b->kind == RD_NOTE ? "_\n\n" : "\n\n", f);
    break;
  case RD_TABLE: md_table(f, b); break;
  case RD_BARS: md_bars(f, b); break;
  case RD_LINE: break;   /* the table that follows it holds its points */
  case RD_PANELS: break; /* the table before it holds its figures */
  case RD_DIAGRAM:
    if (svg_name && d->diagram_svg) {
      fputs("![block diagram](", f);
      /* a file name in a link: the characters that end or break one escaped */
      for (const char *p = svg_name; *p; p++)
        if (strchr("()<> %\\", *p))
          fprintf(f, "%%%02X", (unsigned char)*p);
        else
          fputc(*p, f);
      fputs(")\n\n", f);
    } else {
      fputs("block diagram: written only beside a --markdown FILE, not to standard output\n\n", f);
    }
    break;
  }
}

int gr_print_report_markdown(FILE *out, const struct gr_report_doc *doc, const char *svg_name)
{
  struct rd_doc d;
  rd_build(doc, &d);
  for (size_t i = 0; i < d.n; i++)
    md_block(out, &d, &d.v[i], svg_name);
  fputs("_Made by gpurig " GPURIG_VERSION " (gpurig report \\-\\-markdown)._\n", out);
  rd_free(&d);
  return ferror(out) ? -1 : 0;
}
