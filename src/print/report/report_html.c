/* gpurig report --html: the report's blocks (report_doc.h) as one
 * self-contained HTML5 page; see report_html.h. Inline CSS and SVG only,
 * and a Content-Security-Policy that forbids fetching anything, so that
 * even a mistake here cannot reach the network. The markup is also
 * well-formed XML (every element closed, attributes quoted, numeric
 * character references only), which the tests check. */
#include "print/report/report_html.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "print/fleet.h"
#include "print/report/report_doc.h"

/* ---- escaping ---- */

/* Text for an element or a quoted attribute: markup characters as
 * references, controls as spaces, bytes that are not UTF-8 as U+FFFD. */
static void esc(FILE *f, const char *s)
{
  const unsigned char *p = (const unsigned char *)(s ? s : "");
  while (*p) {
    size_t n = rd_utf8_len(p);
    if (!n) {
      fputs("\xef\xbf\xbd", f);
      p++;
      continue;
    }
    switch (*p) {
    case '&': fputs("&amp;", f); break;
    case '<': fputs("&lt;", f); break;
    case '>': fputs("&gt;", f); break;
    case '"': fputs("&quot;", f); break;
    case '\'': fputs("&#39;", f); break;
    default:
      if (*p < 0x20 || *p == 0x7f)
        fputc(' ', f);
      else
        fwrite(p, 1, n, f);
    }
    p += n;
  }
}

/* ---- page ---- */

static const char css[] =
    "body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;color:#1d1d1f;background:#fff;"
    "margin:0 auto;max-width:1180px;padding:16px 24px 48px}\n"
    "h1{font-size:22px;margin:8px 0 4px}h2{font-size:18px;border-bottom:1px solid #d0d4da;padding-bottom:3px;"
    "margin:28px 0 10px}h3{font-size:15px;margin:18px 0 6px}\n"
    "p{margin:4px 0 8px}p.note{color:#555;font-size:12.5px}.head p{margin:2px 0;color:#333}\n"
    ".toc{border:1px solid #e1e4e8;background:#f8f9fb;padding:6px 12px;margin:12px 0;font-size:13px}\n"
    ".toc a{margin-right:14px;color:#1f5fa8;text-decoration:none}\n"
    ".scroll{overflow-x:auto;max-width:100%;margin:6px 0 10px}\n"
    "table{border-collapse:collapse;font-size:13px}th,td{border:1px solid #d9dde3;padding:3px 7px;"
    "text-align:left;vertical-align:top}thead th{background:#f1f3f6;font-weight:600}\n"
    "table:not(.matrix) td{overflow-wrap:anywhere;min-width:3em}td.id{white-space:nowrap;overflow-wrap:normal}\n"
    "caption{caption-side:top;text-align:left;font-weight:600;padding:2px 0 4px;white-space:nowrap;"
    "font:600 13px system-ui,sans-serif}\n"
    "table.matrix{font:11px/1.2 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}\n"
    "table.matrix td,table.matrix th{padding:2px 4px;text-align:center;white-space:nowrap;min-width:2.6em}\n"
    "table.matrix tbody th{background:#f1f3f6}\n"
    "td.lv-x{background:#e9ebee;color:#777}td.lv-nv{background:#2e7d4f;color:#fff}td.lv-pix{background:#8fd19e}"
    "td.lv-pxb{background:#c9e69a}td.lv-phb{background:#ffe08a}td.lv-node{background:#ffc27a}"
    "td.lv-sys{background:#f3a09a}td.lv-shm{background:#e4c6ea}\n"
    "td.h0{background:#eef4fc}td.h1{background:#dbe8f8}td.h2{background:#c3d8f2}td.h3{background:#a6c4ea}"
    "td.h4{background:#84aee0}td.h5{background:#5f93d2;color:#fff}td.h6{background:#3c76bf;color:#fff}"
    "td.h7{background:#1f5aa6;color:#fff}\n"
    "td.sev-ok{background:#dcf3dc}td.sev-info{background:#e3ecf8}td.sev-warn{background:#ffe4b5}"
    "td.sev-fail{background:#f8c9c6}td.sev-skipped{background:#eeeff1;color:#666}td.sev-error{background:#efd3f2}\n"
    "td.odd{background:#ffe4b5;font-weight:600;outline:2px solid #e99a2c;outline-offset:-2px}\n"
    "svg.chart{max-width:100%;height:auto;font-family:system-ui,sans-serif;display:block;margin:6px 0 12px}\n"
    "svg.chart text{font-size:11px;fill:#333}svg.chart .axis{stroke:#bbb;stroke-width:1}svg.chart .grid{stroke:#eee;stroke-width:1}\n"
    "svg.chart .limit{fill:#e2e5ea}svg.chart .tick{stroke:#111;stroke-width:2}svg.chart .val{fill:#4a7fc1}"
    "svg.chart .sev-ok{fill:#4f9d5d}svg.chart .sev-warn{fill:#e99a2c}svg.chart .sev-fail{fill:#d0463f}svg.chart .sev-info{fill:#5b8def}"
    "svg.chart .sev-error{fill:#a05fb0}svg.chart .sev-skipped{fill:#aaa}\n"
    "svg.chart .line{fill:none;stroke:#1f5aa6;stroke-width:2}svg.chart .dot{fill:#1f5aa6}"
    "svg.chart .ref{stroke:#d0463f;stroke-width:1.5;stroke-dasharray:6 4}\n"
    ".diagram{overflow-x:auto}.diagram svg{display:block;margin:6px 0 12px}\n"
    "@media print{body{max-width:none;padding:0}.scroll,.diagram{overflow:visible}.toc{display:none}"
    "h2{break-after:avoid}table,svg{break-inside:avoid}}\n";

static void page_head(FILE *f, const struct rd_doc *d)
{
  fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n"
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
        "img-src data:\"/>\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n"
        "<meta name=\"generator\" content=\"gpurig " GPURIG_VERSION "\"/>\n<title>",
        f);
  esc(f, d->n && d->v[0].kind == RD_HEADING ? d->v[0].text : "gpurig report");
  fprintf(f, "</title>\n<style>\n%s</style>\n</head>\n<body>\n", css);
}

static void toc(FILE *f, const struct rd_doc *d)
{
  fputs("<div class=\"toc\">Contents: ", f);
  for (size_t i = 0; i < d->n; i++) {
    if (d->v[i].kind != RD_HEADING || d->v[i].level != 2)
      continue;
    fputs("<a href=\"#", f);
    esc(f, d->v[i].id);
    fputs("\">", f);
    esc(f, d->v[i].text);
    fputs("</a> ", f);
  }
  fputs("</div>\n", f);
}

/* ---- tables ---- */

static void td(FILE *f, const char *tag, const struct rd_cell *c, const char *extra)
{
  fprintf(f, "<%s%s", tag, extra ? extra : "");
  if (c->cls)
    fprintf(f, " class=\"%s\"", c->cls);
  fputc('>', f);
  esc(f, c->text);
  fprintf(f, "</%s>", tag);
}

static void html_table(FILE *f, const struct rd_block *b)
{
  const struct rd_table *t = b->table;
  fprintf(f, "<div class=\"scroll\"><table%s>", t->matrix ? " class=\"matrix\"" : "");
  if (b->text) {
    fputs("<caption>", f);
    esc(f, b->text);
    fputs("</caption>", f);
  }
  fputs("\n<thead><tr>", f);
  for (size_t c = 0; c < t->ncols; c++)
    if (rd_column_shown(t, c))
      td(f, "th", &t->head[c], t->matrix && c ? " scope=\"col\"" : NULL);
  fputs("</tr></thead>\n<tbody>\n", f);
  for (size_t r = 0; r < t->nrows; r++) {
    fputs("<tr", f);
    if (t->row_gpu && t->row_gpu[r]) {
      fputs(" data-gpu=\"", f);
      esc(f, t->row_gpu[r]);
      fputc('"', f);
    }
    if (t->row_node && t->row_node[r]) {
      fputs(" data-node=\"", f);
      esc(f, t->row_node[r]);
      fputc('"', f);
    }
    fputc('>', f);
    for (size_t c = 0; c < t->ncols; c++)
      if (rd_column_shown(t, c))
        td(f, t->matrix && c == 0 ? "th" : "td", &t->cells[r * t->ncols + c], t->matrix && c == 0 ? " scope=\"row\"" : NULL);
    fputs("</tr>\n", f);
  }
  fputs("</tbody></table></div>\n", f);
}

/* ---- charts ---- */

/* A step of 1, 2 or 5 times a power of ten giving about 5 ticks up to hi;
 * 0 where there is none (hi so small that the power of ten underflows):
 * the caller then draws no grid rather than looping on a step of 0. */
static double nice_step(double hi)
{
  double raw = hi / 5, p = pow(10, floor(log10(raw))), m = raw / p;
  double step = (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
  return isfinite(step) && step > 0 && hi / step < 20 ? step : 0;
}

static void svg_open(FILE *f, int w, int h, const char *title)
{
  fprintf(f, "<svg class=\"chart\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"", w, h, w, h);
  esc(f, title);
  fputs("\">\n", f);
}

static void svg_title(FILE *f, int x, int y, const char *text)
{
  fprintf(f, "<text x=\"%d\" y=\"%d\" style=\"font-size:13px;font-weight:600\">", x, y);
  esc(f, text);
  fputs("</text>\n", f);
}

/* Vertical grid lines and their labels over [x0, x0+w] for 0..hi. */
static void x_grid(FILE *f, int x0, int w, int y0, int y1, double hi, const char *unit)
{
  double step = nice_step(hi);
  for (double v = 0; step > 0 && v <= hi * 1.0001; v += step) {
    double x = x0 + v / hi * w;
    fprintf(f, "<line class=\"grid\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>", x, y0, x, y1);
    fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%g</text>\n", x, y1 + 13, v);
  }
  fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">", x0 + w, y1 + 27);
  esc(f, unit);
  fputs("</text>\n", f);
}

enum { BAR_W = 940, BAR_LABEL = 240, BAR_PLOT = 520, BAR_ROW = 18, BAR_TOP = 46 };

static double bar_hi(const struct rd_block *b)
{
  double hi = 0;
  for (size_t i = 0; i < b->nbars; i++) {
    const struct rd_bar *r = &b->bars[i];
    double m = fmax(fmax(isfinite(r->value) ? r->value : 0, isfinite(r->predicted) ? r->predicted : 0),
                    isfinite(r->limit) ? r->limit : 0);
    hi = m > hi ? m : hi;
  }
  return hi > 1e-9 ? hi * 1.05 : 1; /* a scale of 1e-320 would make the pixels per unit infinite */
}

static void bar_row(FILE *f, const struct rd_bar *r, int y, double hi, const char *unit)
{
  double sx = BAR_PLOT / hi;
  fputs("<g><title>", f);
  esc(f, r->label);
  fputs(":", f);
  if (isfinite(r->value))
    fprintf(f, " measured %.1f", r->value);
  if (isfinite(r->predicted))
    fprintf(f, " predicted %.1f", r->predicted);
  if (isfinite(r->limit))
    fprintf(f, " limit %.1f", r->limit);
  fputc(' ', f);
  esc(f, unit);
  fprintf(f, "</title>\n<text x=\"%d\" y=\"%d\" text-anchor=\"end\">", BAR_LABEL - 8, y + 12);
  esc(f, r->label);
  fputs("</text>", f);
  if (isfinite(r->limit))
    fprintf(f, "<rect class=\"limit\" x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"14\"/>", BAR_LABEL, y + 1,
            fmax(r->limit, 0) * sx);
  if (isfinite(r->value))
    fprintf(f, "<rect class=\"%s\" x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"8\"/>", r->cls ? r->cls : "val",
            BAR_LABEL, y + 4, fmax(r->value, 0) * sx);
  if (isfinite(r->predicted))
    fprintf(f, "<line class=\"tick\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>",
            BAR_LABEL + fmax(r->predicted, 0) * sx, y, BAR_LABEL + fmax(r->predicted, 0) * sx, y + 16);
  double shown = isfinite(r->value) ? r->value : r->predicted;
  if (isfinite(shown)) {
    fprintf(f, "<text x=\"%d\" y=\"%d\">%.1f", BAR_LABEL + BAR_PLOT + 8, y + 12, shown);
    if (isfinite(r->limit) && r->limit > 0)
      fprintf(f, " (%.0f%% of %.1f)", shown / r->limit * 100, r->limit);
    fputs("</text>", f);
  }
  fputs("</g>\n", f);
}

static void html_bars(FILE *f, const struct rd_block *b)
{
  double hi = bar_hi(b);
  int h = BAR_TOP + (int)b->nbars * BAR_ROW + 36;
  bool any_value = false, any_pred = false, any_warn = false;
  const char *value_cls = "val";
  for (size_t i = 0; i < b->nbars; i++) {
    any_value |= isfinite(b->bars[i].value);
    any_pred |= isfinite(b->bars[i].predicted);
    any_warn |= b->bars[i].cls && strcmp(b->bars[i].cls, "sev-warn") == 0;
    value_cls = b->bars[i].cls && strcmp(b->bars[i].cls, "sev-ok") == 0 ? "sev-ok" : value_cls;
  }
  svg_open(f, BAR_W, h, b->text);
  svg_title(f, 0, 16, b->text);
  /* the legend: only the marks this chart has */
  int x = 0;
  if (any_value) {
    fprintf(f, "<rect class=\"%s\" x=\"%d\" y=\"27\" width=\"18\" height=\"8\"/><text x=\"%d\" y=\"35\">measured"
               "</text>", value_cls, x, x + 24);
    x += 100;
  }
  if (any_warn) {
    fprintf(f, "<rect class=\"sev-warn\" x=\"%d\" y=\"27\" width=\"18\" height=\"8\"/><text x=\"%d\" y=\"35\">"
               "under its floor</text>", x, x + 24);
    x += 130;
  }
  if (any_pred) {
    fprintf(f, "<line class=\"tick\" x1=\"%d\" y1=\"24\" x2=\"%d\" y2=\"38\"/><text x=\"%d\" y=\"35\">predicted</text>",
            x + 8, x + 8, x + 16);
    x += 100;
  }
  fprintf(f, "<rect class=\"limit\" x=\"%d\" y=\"25\" width=\"18\" height=\"12\"/><text x=\"%d\" y=\"35\">limit</text>\n",
          x, x + 24);
  int y1 = BAR_TOP + (int)b->nbars * BAR_ROW;
  x_grid(f, BAR_LABEL, BAR_PLOT, BAR_TOP - 2, y1, hi, b->unit);
  for (size_t i = 0; i < b->nbars; i++)
    bar_row(f, &b->bars[i], BAR_TOP + (int)i * BAR_ROW, hi, b->unit);
  fputs("</svg>\n", f);
}

enum { LN_W = 900, LN_H = 330, LN_L = 60, LN_R = 130, LN_T = 46, LN_B = 46 };

static void html_line(FILE *f, const struct rd_block *b)
{
  const struct rd_line *l = b->line;
  double xmin = INFINITY, xmax = 0, hi = isfinite(l->ref) ? l->ref : 0;
  for (size_t i = 0; i < l->n; i++) {
    xmin = fmin(xmin, l->x[i]);
    xmax = fmax(xmax, l->x[i]);
    hi = fmax(hi, l->y[i]);
  }
  hi = hi > 1e-9 ? hi * 1.1 : 1;
  double lx0 = log2(xmin), span = log2(xmax) - lx0 > 0 ? log2(xmax) - lx0 : 1;
  int pw = LN_W - LN_L - LN_R, ph = LN_H - LN_T - LN_B;
  svg_open(f, LN_W, LN_H, b->text);
  svg_title(f, 0, 16, b->text);
  double step = nice_step(hi);
  for (double v = 0; step > 0 && v <= hi * 1.0001; v += step) {
    double y = LN_T + ph - v / hi * ph;
    fprintf(f, "<line class=\"grid\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/><text x=\"%d\" y=\"%.1f\" "
               "text-anchor=\"end\">%g</text>\n", LN_L, y, LN_L + pw, y, LN_L - 6, y + 4, v);
  }
  fprintf(f, "<text x=\"%d\" y=\"%d\">", LN_L, LN_T - 12);
  esc(f, b->unit);
  fprintf(f, " busbw</text>\n<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n", LN_L, LN_T + ph,
          LN_L + pw, LN_T + ph);
  size_t every = l->n > 12 ? (l->n + 11) / 12 : 1;
  fputs("<polyline class=\"line\" points=\"", f);
  for (size_t i = 0; i < l->n; i++)
    fprintf(f, "%.1f,%.1f ", LN_L + (log2(l->x[i]) - lx0) / span * pw, LN_T + ph - l->y[i] / hi * ph);
  fputs("\"/>\n", f);
  for (size_t i = 0; i < l->n; i++) {
    double x = LN_L + (log2(l->x[i]) - lx0) / span * pw, y = LN_T + ph - l->y[i] / hi * ph;
    char size[32];
    gr_size_text(l->x[i] < 1e18 ? (size_t)l->x[i] : 0, size, sizeof(size));
    fprintf(f, "<circle class=\"dot\" cx=\"%.1f\" cy=\"%.1f\" r=\"3\"><title>%s: %.2f GB/s</title></circle>", x, y,
            size, l->y[i]);
    if (i % every == 0 || i + 1 == l->n)
      fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>", x, LN_T + ph + 14, size);
    fputc('\n', f);
  }
  fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">message size (log scale)</text>\n", LN_L + pw / 2,
          LN_T + ph + 32);
  if (isfinite(l->ref) && l->ref > 0) {
    double y = LN_T + ph - l->ref / hi * ph;
    fprintf(f, "<line class=\"ref\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/><text x=\"%d\" y=\"%.1f\">", LN_L, y,
            LN_L + pw, y, LN_L + pw + 6, y + 4);
    esc(f, l->ref_label);
    fprintf(f, " %.1f</text>\n", l->ref);
  }
  fputs("</svg>\n", f);
}

enum { PN_W = 220, PN_LABEL = 50, PN_ROW = 18, PN_TOP = 44 };

static void html_panels(FILE *f, const struct rd_block *b)
{
  const struct rd_panels *p = b->panels;
  int w = (int)p->npanels * PN_W, h = PN_TOP + (int)p->nrows * PN_ROW + 10, plot = PN_W - PN_LABEL - 50;
  svg_open(f, w, h, b->text);
  svg_title(f, 0, 16, b->text);
  for (size_t k = 0; k < p->npanels; k++) {
    int x0 = (int)k * PN_W;
    double hi = 0;
    for (size_t r = 0; r < p->nrows; r++)
      hi = isfinite(p->v[r * p->npanels + k]) ? fmax(hi, p->v[r * p->npanels + k]) : hi;
    hi = hi > 1e-9 ? hi : 1;
    fprintf(f, "<text x=\"%d\" y=\"36\" style=\"font-weight:600\">", x0 + PN_LABEL);
    esc(f, p->panel_title[k]);
    fputs("</text>\n", f);
    for (size_t r = 0; r < p->nrows; r++) {
      double v = p->v[r * p->npanels + k];
      int y = PN_TOP + (int)r * PN_ROW;
      fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">", x0 + PN_LABEL - 6, y + 12);
      esc(f, p->row_label[r]);
      fputs("</text>", f);
      if (isfinite(v)) {
        fprintf(f, "<rect class=\"%s\" x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"12\"/>", p->row_cls[r] ? p->row_cls[r] : "val",
                x0 + PN_LABEL, y + 2, fmax(v, 0) / hi * plot);
        fprintf(f, "<text x=\"%.1f\" y=\"%d\">%.*f</text>", x0 + PN_LABEL + fmax(v, 0) / hi * plot + 4, y + 12,
                v < 100 ? 1 : 0, v);
      } else {
        fprintf(f, "<text x=\"%d\" y=\"%d\">n/a</text>", x0 + PN_LABEL + 4, y + 12);
      }
      fputc('\n', f);
    }
  }
  fputs("</svg>\n", f);
}

/* The diagram string as inline SVG: without an XML declaration or doctype
 * (not HTML) and without the namespace attributes, which the HTML parser
 * implies and which would put an address in the page. */
static void html_diagram(FILE *f, const char *svg)
{
  const char *p = strstr(svg, "<svg");
  if (!p) {
    fputs("<p>block diagram: not available (the diagram is not SVG)</p>\n", f);
    return;
  }
  static const char *const drop[] = {" xmlns=\"http://www.w3.org/2000/svg\"", " xmlns:xlink=\"http://www.w3.org/1999/xlink\""};
  fputs("<div class=\"diagram\">\n", f);
  while (*p) {
    size_t k = 0;
    while (k < sizeof(drop) / sizeof(drop[0]) && strncmp(p, drop[k], strlen(drop[k])) != 0)
      k++;
    if (k < sizeof(drop) / sizeof(drop[0])) {
      p += strlen(drop[k]);
      continue;
    }
    fputc(*p++, f);
  }
  fputs("\n</div>\n", f);
}

static void block(FILE *f, const struct rd_doc *d, const struct rd_block *b, bool *in_head)
{
  if (*in_head && (b->kind != RD_PARA && b->kind != RD_NOTE && !(b->kind == RD_HEADING && b->level == 1))) {
    fputs("</div>\n", f);
    toc(f, d);
    *in_head = false;
  }
  switch (b->kind) {
  case RD_HEADING:
    if (b->level == 1) {
      fputs("<div class=\"head\">\n", f);
      *in_head = true;
    }
    fprintf(f, "<h%d id=\"", b->level);
    esc(f, b->id);
    fputs("\">", f);
    esc(f, b->text);
    fprintf(f, "</h%d>\n", b->level);
    break;
  case RD_PARA:
  case RD_NOTE:
    fputs(b->kind == RD_NOTE ? "<p class=\"note\">" : "<p>", f);
    esc(f, b->text);
    fputs("</p>\n", f);
    break;
  case RD_TABLE: html_table(f, b); break;
  case RD_BARS: html_bars(f, b); break;
  case RD_LINE: html_line(f, b); break;
  case RD_PANELS: html_panels(f, b); break;
  case RD_DIAGRAM: html_diagram(f, d->diagram_svg); break;
  }
}

/* The page of d (which it frees), made by the command named. */
static int page(FILE *out, struct rd_doc *d, const char *command)
{
  bool in_head = false;
  page_head(out, d);
  for (size_t i = 0; i < d->n; i++)
    block(out, d, &d->v[i], &in_head);
  if (in_head)
    fputs("</div>\n", out);
  fprintf(out, "<p class=\"note\">Made by gpurig " GPURIG_VERSION " (%s --html): one file, no scripts, nothing "
          "fetched.</p>\n</body>\n</html>\n", command);
  rd_free(d);
  return ferror(out) ? -1 : 0;
}

int gr_print_report_html(FILE *out, const struct gr_report_doc *doc)
{
  struct rd_doc d;
  rd_build(doc, &d);
  return page(out, &d, "gpurig report");
}

int gr_print_fleet_html(FILE *out, const struct gr_fleet *f)
{
  struct rd_doc d;
  rd_build_fleet(f, &d);
  return page(out, &d, "gpurig fleet");
}
