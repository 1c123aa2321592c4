/* The HTML and Markdown reports' common content (report_html.h): the report
 * is built once as a list of blocks (headings, paragraphs, tables, charts)
 * of plain, unescaped text, and each printer renders the same list, so the
 * two outputs cannot say different things; `gpurig fleet --html` builds its
 * own list (rd_build_fleet) for the same HTML printer. Only the files under
 * print/report/ include this.
 *
 * Ownership: rd_build fills a struct rd_doc that owns every block, table and
 * string in it; rd_free frees it. */
#ifndef GPURIG_PRINT_REPORT_DOC_H
#define GPURIG_PRINT_REPORT_DOC_H

#include <stdbool.h>
#include <stddef.h>

#include "print/report/report_html.h"

/* A table cell: its text and how the page colours it. cls is a static CSS
 * class ("lv-nv", "sev-warn", "h7" for a heat bucket; "id" a check's id, kept on
 * one line), NULL for none. */
struct rd_cell {
  char *text;
  const char *cls;
};

struct rd_table {
  size_t ncols, nrows;
  struct rd_cell *head;  /* ncols */
  struct rd_cell *cells; /* nrows x ncols */
  char **row_gpu;        /* per row, "GPU3" for the data-gpu attribute, or NULL; the whole array may be NULL */
  char **row_node;       /* per row, a fleet node's name for the data-node attribute, as row_gpu */
  bool matrix;           /* a GPU x GPU heat map: small cells, the first column a header */
  bool drop_empty;       /* leave out the columns whose every cell is empty (a findings list without fixes) */
  size_t filled;         /* cells added so far */
};

/* One bar of a bullet chart: the value as a bar over its limit, the
 * prediction as a tick. NAN where unknown. */
struct rd_bar {
  char *label;
  double value, predicted, limit;
  const char *cls; /* the bar's colour class ("sev-ok", "sev-warn", ...), NULL default */
};

/* A line chart: y over x on a log2 x axis, with a dashed reference line. */
struct rd_line {
  double *x, *y;
  size_t n;
  double ref;          /* NAN: none */
  char *ref_label;
};

/* Small multiples: one bar per row in each panel (burn's per-GPU figures). */
struct rd_panels {
  size_t nrows, npanels;
  char **row_label;         /* nrows */
  const char **row_cls;     /* nrows, the bar colour class */
  char **panel_title;       /* npanels, with the unit */
  double *v;                /* nrows x npanels, NAN unknown */
};

enum rd_kind { RD_HEADING, RD_PARA, RD_NOTE, RD_TABLE, RD_BARS, RD_LINE, RD_PANELS, RD_DIAGRAM };

struct rd_block {
  enum rd_kind kind;
  int level;        /* headings: 1 the title, 2 a section (in the contents), 3 a part */
  char *id;         /* headings: the anchor */
  char *text;       /* heading, paragraph or note text; a chart's or table's title (may be NULL) */
  char *unit;       /* charts: "GB/s" */
  struct rd_table *table;
  struct rd_bar *bars; size_t nbars;
  struct rd_line *line;
  struct rd_panels *panels;
  bool md_skip;     /* a chart whose figures the table before it holds: Markdown leaves it out */
};

struct rd_doc {
  struct rd_block *v;
  size_t n, cap;
  const char *diagram_svg; /* the caller's, for RD_DIAGRAM */
};

void rd_build(const struct gr_report_doc *doc, struct rd_doc *out);
/* A fleet's page (report_doc_fleet.c): the nodes by their facts with the
 * odd values marked, the majority, the findings. */
struct gr_fleet;
void rd_build_fleet(const struct gr_fleet *f, struct rd_doc *out);
void rd_free(struct rd_doc *d);

/* Whether column c of t is shown (drop_empty). */
bool rd_column_shown(const struct rd_table *t, size_t c);
/* The length of the valid UTF-8 sequence at s (1 to 4), 0 for a byte that
 * does not start one, or a C1 control (not text in HTML or Markdown). */
size_t rd_utf8_len(const unsigned char *s);

/* The number of heat classes h0 .. h(RD_HEAT-1). */
#define RD_HEAT 8

#endif
