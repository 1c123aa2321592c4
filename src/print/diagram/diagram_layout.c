/* Where the block diagram's pieces go (diagram_internal.h): a layered tree
 * layout. Sockets are columns side by side, each root complex and switch
 * level a row below them, every endpoint in the bottom row; each node gets
 * the width its subtree needs (its box, the label of the link into it, or
 * its children side by side), so a node's column holds only its own
 * subtree and an edge runs down through empty space. NVLinks run below the
 * endpoint row in lanes chosen so their labels never meet; NVSwitch fabrics
 * sit below those, the legend last. Text widths follow from their length in
 * a monospace font, so the boxes fit their text without a renderer. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "print/diagram/diagram_internal.h"
#include "print/text.h"
#include "base/util.h"

enum {
  MARGIN = 20,  /* around the drawing */
  PAD_X = 8,    /* inside a box, left and right */
  PAD_Y = 5,    /* inside a box, top and bottom */
  HGAP = 24,    /* between sibling columns */
  BUS = 14,     /* from a box's bottom to the line that joins its children */
  VGAP = 62,    /* between rows: the bus, then two lines of link label */
  HIVE_PAD = 6, /* a hive's shading around its GPUs */
  LANE = 28,    /* between NVLink lanes */
};
#define TITLE_FONT 16.0

struct lay {
  const struct dg_model *d;
  struct dg_scene *s;
  int **kids;
  size_t *nkids;
  double *w, *h, *span, *x, *y;
  int leaf_row, nrows;
  double *row_y, *row_h;
};

static bool is_leaf(const struct dg_node *n)
{
  return n->kind == DG_GPU || n->kind == DG_NIC || n->kind == DG_NVME || n->kind == DG_NVSWITCH;
}

static double text_w(const char *s, double size)
{
  return (double)dg_cols(s) * 0.6 * size;
}

/* ---- the scene's parts ---- */

static void add_rect(struct dg_scene *s, struct dg_box b, enum dg_shape shape, int node, int hive, const char *fill,
                     const char *stroke)
{
  grow_array((void **)&s->rects, sizeof(*s->rects), &s->caprects, s->nrects + 1);
  s->rects[s->nrects++] = (struct dg_rect){b, shape, node, hive, fill, stroke};
}

static void add_path(struct dg_scene *s, enum dg_line_kind kind, char *d)
{
  grow_array((void **)&s->paths, sizeof(*s->paths), &s->cappaths, s->npaths + 1);
  s->paths[s->npaths++] = (struct dg_path){d, kind};
}

/* A line of text whose box starts at top; centred on x, or starting at x. */
static struct dg_text *add_text(struct dg_scene *s, const char *text, double x, double top, bool middle, double size,
                                int node)
{
  grow_array((void **)&s->texts, sizeof(*s->texts), &s->captexts, s->ntexts + 1);
  struct dg_text *t = &s->texts[s->ntexts++];
  double w = text_w(text, size), lh = size * 1.25;
  *t = (struct dg_text){.box = {middle ? x - w / 2 : x, top, w, lh},
                        .x = x, .y = top + size * 0.95, .middle = middle, .size = size, .node = node,
                        .fill = "#111", .s = xstrdup(text)};
  return t;
}

/* ---- sizes ---- */

static double edge_w(const struct dg_node *n)
{
  double w = 0;
  for (size_t k = 0; k < n->nedge; k++)
    w = fmax(w, text_w(n->edge[k], DG_FONT) + 8);
  return w;
}

static void measure(struct lay *L)
{
  const struct dg_model *d = L->d;
  for (size_t i = 0; i < d->n; i++) {
    double w = 0;
    for (size_t k = 0; k < d->nodes[i].nlines; k++)
      w = fmax(w, text_w(d->nodes[i].line[k], DG_FONT));
    L->w[i] = w + 2 * PAD_X;
    L->h[i] = (double)d->nodes[i].nlines * DG_LINE_H + 2 * PAD_Y;
  }
  /* children come after their parent, so a backward pass sums subtrees */
  for (size_t i = d->n; i-- > 0;) {
    double kids = 0;
    for (size_t k = 0; k < L->nkids[i]; k++)
      kids += L->span[L->kids[i][k]] + (k ? HGAP : 0);
    L->span[i] = fmax(fmax(L->w[i], edge_w(&d->nodes[i])), kids);
  }
}

static int row_of(const struct lay *L, size_t i)
{
  return is_leaf(&L->d->nodes[i]) ? L->leaf_row : L->d->nodes[i].depth;
}

static void rows(struct lay *L)
{
  const struct dg_model *d = L->d;
  L->leaf_row = 0;
  for (size_t i = 0; i < d->n; i++)
    L->leaf_row = (int)fmax(L->leaf_row, d->nodes[i].depth);
  L->nrows = L->leaf_row + 1;
  L->row_y = xcalloc((size_t)L->nrows, sizeof(double));
  L->row_h = xcalloc((size_t)L->nrows, sizeof(double));
  for (size_t i = 0; i < d->n; i++)
    L->row_h[row_of(L, i)] = fmax(L->row_h[row_of(L, i)], L->h[i]);
  double y = MARGIN + 2.2 * TITLE_FONT + DG_LINE_H;
  for (int r = 0; r < L->nrows; r++) {
    L->row_y[r] = y;
    y += L->row_h[r] + VGAP;
  }
}

/* Node i gets [x0, x0 + span): its children side by side in the middle,
 * its box centred over them (kept inside its own interval). */
static void place(struct lay *L, size_t i, double x0)
{
  double kids = 0;
  for (size_t k = 0; k < L->nkids[i]; k++)
    kids += L->span[L->kids[i][k]] + (k ? HGAP : 0);
  double cx = x0 + (L->span[i] - kids) / 2;
  for (size_t k = 0; k < L->nkids[i]; k++) {
    place(L, (size_t)L->kids[i][k], cx);
    cx += L->span[L->kids[i][k]] + HGAP;
  }
  double mid = x0 + L->span[i] / 2;
  if (L->nkids[i]) {
    int first = L->kids[i][0], last = L->kids[i][L->nkids[i] - 1];
    mid = (L->x[first] + L->w[first] / 2 + L->x[last] + L->w[last] / 2) / 2;
  }
  L->x[i] = fmin(fmax(mid - L->w[i] / 2, x0), x0 + L->span[i] - L->w[i]);
  L->y[i] = L->row_y[row_of(L, i)];
}

/* ---- drawing ---- */

const char *dg_kind_fill(enum dg_kind k)
{
  static const char *fills[] = {"#e3ebf7", "#eef0f3", "#fff4dc", "#e6f6ea", "#e9ecfb", "#f1ebfb", "#def5f3"};
  return fills[k];
}

const char *dg_kind_stroke(enum dg_kind k)
{
  static const char *strokes[] = {"#2f4f7f", "#5f6670", "#a86b00", "#23733f", "#3f48a8", "#6a3fb0", "#1f6f6a"};
  return strokes[k];
}

static void box_text(struct dg_scene *s, char *const *line, size_t nlines, struct dg_box b, int node)
{
  for (size_t k = 0; k < nlines; k++) {
    struct dg_text *t =
        add_text(s, line[k], b.x + b.w / 2, b.y + PAD_Y + (double)k * DG_LINE_H, true, DG_FONT, node);
    t->bold = k == 0;
  }
}

static void draw_nodes(struct lay *L)
{
  for (size_t i = 0; i < L->d->n; i++) {
    const struct dg_node *n = &L->d->nodes[i];
    struct dg_box b = {L->x[i], L->y[i], L->w[i], L->h[i]};
    add_rect(L->s, b, DG_SHAPE_NODE, (int)i, n->hive, dg_kind_fill(n->kind), dg_kind_stroke(n->kind));
    box_text(L->s, n->line, n->nlines, b, (int)i);
  }
}

/* Each link from a parent: down to the parent's bus, across, down into the
 * child; its label just above the child, on a white ground. */
static void draw_edges(struct lay *L)
{
  for (size_t i = 0; i < L->d->n; i++) {
    const struct dg_node *n = &L->d->nodes[i];
    if (n->parent < 0)
      continue;
    size_t p = (size_t)n->parent;
    double px = L->x[p] + L->w[p] / 2, pb = L->y[p] + L->h[p], cx = L->x[i] + L->w[i] / 2, ct = L->y[i];
    add_path(L->s, n->edge_bad ? DG_LINE_BAD : DG_LINE_PCIE,
             xasprintf("M%.1f %.1fV%.1fH%.1fV%.1f", px, pb, pb + BUS, cx, ct));
    double top = ct - 10 - (double)n->nedge * DG_LINE_H;
    double w = edge_w(n);
    if (n->nedge)
      add_rect(L->s, (struct dg_box){cx - w / 2, top - 1, w, (double)n->nedge * DG_LINE_H + 2}, DG_SHAPE_LABEL_BG,
               (int)i, -1, "#ffffff", NULL);
    for (size_t k = 0; k < n->nedge; k++) {
      struct dg_text *t = add_text(L->s, n->edge[k], cx, top + (double)k * DG_LINE_H, true, DG_FONT, DG_NO_NODE);
      t->edge = true;
      t->fill = n->edge_bad ? "#c0261f" : k ? "#555" : "#222";
      t->bold = n->edge_bad && k == 0;
    }
  }
}

/* The inter-socket link: a thick line between neighbouring CPU boxes, its
 * label above it in the gap (the gap is made wide enough for it). */
static void draw_sockets(struct lay *L)
{
  const struct dg_model *d = L->d;
  int prev = -1;
  for (size_t i = 0; i < d->n; i++) {
    if (d->nodes[i].kind != DG_CPU || d->nodes[i].unplaced)
      continue;
    if (prev >= 0 && d->socket_label) {
      size_t p = (size_t)prev;
      double y = L->y[i] + fmin(L->h[i], L->h[p]) / 2, x0 = L->x[p] + L->w[p], x1 = L->x[i];
      add_path(L->s, d->socket_bad ? DG_LINE_SOCKET_BAD : DG_LINE_SOCKET,
               xasprintf("M%.1f %.1fH%.1f", x0, y, x1));
      struct dg_text *t = add_text(L->s, d->socket_label, (x0 + x1) / 2, y - DG_LINE_H - 4, true, DG_FONT, DG_NO_NODE);
      t->edge = true;
      t->fill = d->socket_bad ? "#c0261f" : "#222";
    }
    prev = (int)i;
  }
}

const char *dg_hive_fill(int hive)
{
  static const char *fills[] = {"#f9d77e", "#9cc9f5", "#f5a9c8", "#a9e5b5", "#c8b6f2", "#f7be8d", "#8fded8", "#d9d97a"};
  return fills[(size_t)hive % (sizeof(fills) / sizeof(fills[0]))];
}

static size_t hive_size(const struct dg_model *d, int hive)
{
  size_t n = 0;
  for (size_t g = 0; g < d->m->analysis.ngpus; g++)
    n += d->m->analysis.hive[g] == hive;
  return n;
}

/* Sorts indices by key[index], ties kept in order (insertion sort: the
 * lists are short, and the result must not depend on the C library). */
static void sort_by(int *v, size_t n, const double *key)
{
  for (size_t i = 1; i < n; i++) {
    int x = v[i];
    size_t j = i;
    for (; j > 0 && key[v[j - 1]] > key[x]; j--)
      v[j] = v[j - 1];
    v[j] = x;
  }
}

/* Shading behind the GPUs of each hive of two or more: one band over each
 * run of neighbouring GPUs of the hive in the bottom row. */
static void draw_hives(struct lay *L, const int *leaves, size_t nleaves)
{
  for (size_t k = 0; k < nleaves;) {
    const struct dg_node *n = &L->d->nodes[leaves[k]];
    if (n->hive < 0 || hive_size(L->d, n->hive) < 2) {
      k++;
      continue;
    }
    size_t end = k;
    double h = L->h[leaves[k]];
    while (end + 1 < nleaves && L->d->nodes[leaves[end + 1]].hive == n->hive) {
      end++;
      h = fmax(h, L->h[leaves[end]]);
    }
    double x0 = L->x[leaves[k]] - HIVE_PAD, x1 = L->x[leaves[end]] + L->w[leaves[end]] + HIVE_PAD;
    add_rect(L->s, (struct dg_box){x0, L->row_y[L->leaf_row] - HIVE_PAD, x1 - x0, h + 2 * HIVE_PAD}, DG_SHAPE_HIVE, -1,
             n->hive, dg_hive_fill(n->hive), NULL);
    k = end + 1;
  }
}

/* Where each link leaves its GPU (end e of link k at port[2k+e]): links to
 * the left from the left of the box, links to the right from the right,
 * a nearer link inside a farther one, so the lines of one GPU never cross. */
static void nvlink_ports(struct lay *L, double *port)
{
  const struct dg_model *d = L->d;
  int *ends = xcalloc(2 * d->nlinks + 1, sizeof(int));
  double *key = xcalloc(2 * d->nlinks + 1, sizeof(double));
  for (size_t g = 0; g < d->n; g++) {
    size_t m = 0;
    double own = L->x[g] + L->w[g] / 2;
    for (size_t k = 0; k < d->nlinks; k++)
      for (int e = 0; e < 2; e++) {
        if ((size_t)(e ? d->links[k].b : d->links[k].a) != g)
          continue;
        size_t o = (size_t)(e ? d->links[k].a : d->links[k].b);
        double other = L->x[o] + L->w[o] / 2;
        ends[m++] = (int)(2 * k + (size_t)e);
        key[2 * k + (size_t)e] = (other > own ? 1e7 : 0) - other;
      }
    sort_by(ends, m, key);
    for (size_t j = 0; j < m; j++)
      port[ends[j]] = L->x[g] + L->w[g] * (double)(j + 1) / (double)(m + 1);
  }
  free(ends);
  free(key);
}

/* NVLinks below the bottom row, each in the lowest lane where neither its
 * line nor its label meets another's, shortest links first (so longer ones
 * run outside them). Returns the y below them. */
static double draw_nvlinks(struct lay *L, double y0)
{
  const struct dg_model *d = L->d;
  if (!d->nlinks)
    return y0;
  double *port = xcalloc(2 * d->nlinks, sizeof(double));
  double *lo = xcalloc(d->nlinks, sizeof(double)), *hi = xcalloc(d->nlinks, sizeof(double));
  double *len = xcalloc(d->nlinks, sizeof(double));
  int *lane = xcalloc(d->nlinks, sizeof(int)), *order = xcalloc(d->nlinks, sizeof(int));
  nvlink_ports(L, port);
  for (size_t k = 0; k < d->nlinks; k++) {
    order[k] = (int)k;
    len[k] = fabs(port[2 * k] - port[2 * k + 1]);
  }
  sort_by(order, d->nlinks, len);
  int lanes = 0;
  for (size_t o = 0; o < d->nlinks; o++) {
    size_t k = (size_t)order[o];
    const struct dg_nvlink *l = &d->links[k];
    double xa = port[2 * k], xb = port[2 * k + 1];
    double tw = text_w(l->label, DG_FONT) + 8, mid = (xa + xb) / 2;
    lo[k] = fmin(fmin(xa, xb), mid - tw / 2) - 6;
    hi[k] = fmax(fmax(xa, xb), mid + tw / 2) + 6;
    for (lane[k] = 0;; lane[k]++) {
      bool clash = false;
      for (size_t q = 0; q < o && !clash; q++) {
        size_t j = (size_t)order[q];
        clash = lane[j] == lane[k] && lo[j] < hi[k] && lo[k] < hi[j];
      }
      if (!clash)
        break;
    }
    lanes = (int)fmax(lanes, lane[k] + 1);
    double y = y0 + DG_LINE_H + lane[k] * LANE;
    add_path(L->s, DG_LINE_NVLINK,
             xasprintf("M%.1f %.1fV%.1fH%.1fV%.1f", xa, L->y[l->a] + L->h[l->a], y, xb, L->y[l->b] + L->h[l->b]));
    add_rect(L->s, (struct dg_box){mid - tw / 2, y - DG_LINE_H / 2, tw, DG_LINE_H}, DG_SHAPE_LABEL_BG, -1, -1,
             "#ffffff", NULL);
    struct dg_text *t = add_text(L->s, l->label, mid, y - DG_LINE_H / 2, true, DG_FONT, DG_NO_NODE);
    t->edge = true;
    t->fill = "#5b21b6";
  }
  free(port);
  free(lo);
  free(hi);
  free(len);
  free(lane);
  free(order);
  return y0 + DG_LINE_H + lanes * LANE;
}

/* Each fabric a box below the NVLinks, under its GPUs, with a line up to
 * each of them. Returns the y below the last. */
static double draw_fabrics(struct lay *L, double y)
{
  const struct dg_model *d = L->d;
  for (size_t f = 0; f < d->nfabrics; f++) {
    const struct dg_fabric *df = &d->fabrics[f];
    double x0 = INFINITY, x1 = -INFINITY, tw = 0;
    for (size_t k = 0; k < df->ngpus; k++) {
      x0 = fmin(x0, L->x[df->gpus[k]]);
      x1 = fmax(x1, L->x[df->gpus[k]] + L->w[df->gpus[k]]);
    }
    for (size_t k = 0; k < df->nlines; k++)
      tw = fmax(tw, text_w(df->line[k], DG_FONT) + 2 * PAD_X);
    if (!df->ngpus)
      x0 = x1 = MARGIN + tw / 2;
    if (x1 - x0 < tw) {
      double c = (x0 + x1) / 2;
      x0 = fmax(MARGIN, c - tw / 2);
      x1 = x0 + tw;
    }
    y += 12;
    struct dg_box b = {x0, y, x1 - x0, (double)df->nlines * DG_LINE_H + 2 * PAD_Y};
    for (size_t k = 0; k < df->ngpus; k++) {
      size_t g = (size_t)df->gpus[k];
      double cx = L->x[g] + L->w[g] / 2;
      add_path(L->s, DG_LINE_FABRIC, xasprintf("M%.1f %.1fV%.1f", cx, L->y[g] + L->h[g], y));
    }
    add_rect(L->s, b, DG_SHAPE_NODE, -1 - (int)f, -1, dg_kind_fill(DG_NVSWITCH), dg_kind_stroke(DG_NVSWITCH));
    box_text(L->s, df->line, df->nlines, b, -1 - (int)f);
    y += b.h + 12;
  }
  return y;
}

/* The legend flows left to right and wraps at width: a swatch, then text. */
struct flow {
  double x, y, x0, width;
};

static void legend_item(struct lay *L, struct flow *f, int hive, enum dg_line_kind line, const char *fill,
                        const char *text)
{
  double w = 22 + text_w(text, DG_FONT) + 24;
  if (f->x > f->x0 && f->x + w > f->x0 + f->width) {
    f->x = f->x0;
    f->y += DG_LINE_H + 8;
  }
  if (fill)
    add_rect(L->s, (struct dg_box){f->x, f->y + 2, 16, 11}, DG_SHAPE_SWATCH, -1, hive, fill, "#888");
  else
    add_path(L->s, line, xasprintf("M%.1f %.1fH%.1f", f->x, f->y + 8, f->x + 16));
  add_text(L->s, text, f->x + 22, f->y, false, DG_FONT, DG_NO_NODE);
  f->x += w;
}

/* Text in lines of at most cols columns, broken at spaces; returns the y
 * below it. */
static double wrapped(struct lay *L, const char *text, double y, size_t cols)
{
  const char *p = text;
  while (*p) {
    size_t n = 0, cut = 0, bytes = 0;
    for (const char *q = p; *q; q++) {
      if (((unsigned char)*q & 0xc0) != 0x80 && n++ == cols)
        break;
      bytes = (size_t)(q - p) + 1;
      if (*q == ' ')
        cut = (size_t)(q - p);
    }
    size_t take = p[bytes] && cut ? cut : bytes;
    char *line = xstrndup(p, take);
    add_text(L->s, line, MARGIN, y, false, DG_FONT, DG_NO_NODE);
    free(line);
    y += DG_LINE_H + 2;
    p += take;
    while (*p == ' ')
      p++;
  }
  return y + 6;
}

static double draw_legend(struct lay *L, double y, double width)
{
  const struct dg_model *d = L->d;
  const struct gr_analysis *a = &d->m->analysis;
  struct flow f = {MARGIN, y, MARGIN, width};
  char list[256], text[320];
  bool bad = d->socket_bad, lone = false;
  for (size_t i = 0; i < d->n; i++)
    bad |= d->nodes[i].edge_bad;
  for (size_t h = 0; h < a->nhives; h++) {
    if (hive_size(d, (int)h) < 2) {
      lone = true;
      continue;
    }
    snprintf(text, sizeof(text), "P2P hive %zu: %s (%s)", h, dg_hive_gpus(d, (int)h, list, sizeof(list)),
             dg_hive_kind(d, (int)h));
    legend_item(L, &f, (int)h, DG_LINE_PCIE, dg_hive_fill((int)h), text);
  }
  if (lone) {
    int *v = xcalloc(a->ngpus + 1, sizeof(int));
    size_t nv = 0;
    for (size_t g = 0; g < a->ngpus; g++)
      if (hive_size(d, a->hive[g]) < 2)
        v[nv++] = (int)g;
    snprintf(text, sizeof(text), "in no hive (reach the others through the CPU): %s",
             gr_index_ranges("GPU", v, nv, list, sizeof(list)));
    free(v);
    legend_item(L, &f, -1, DG_LINE_PCIE, "#ffffff", text);
  }
  if (bad)
    legend_item(L, &f, -1, DG_LINE_BAD, NULL, "bottleneck: holds GPU pairs below the best pair, bounds the all-reduce, or runs below both ends");
  if (d->nlinks)
    legend_item(L, &f, -1, DG_LINE_NVLINK, NULL,
                d->links[0].xgmi ? "xGMI (AMD Infinity Fabric): GB/s per direction" : "NVLink: NV<links> · GB/s per direction");
  if (f.x > f.x0)
    f.y += DG_LINE_H + 8;
  if (d->ring_note)
    f.y = wrapped(L, d->ring_note, f.y, (size_t)fmax(40, width / DG_CHAR_W));
  return f.y;
}

static void children_of(struct lay *L)
{
  const struct dg_model *d = L->d;
  size_t *cap = xcalloc(d->n + 1, sizeof(size_t));
  for (size_t i = 0; i < d->n; i++) {
    int p = d->nodes[i].parent;
    if (p < 0)
      continue;
    grow_array((void **)&L->kids[p], sizeof(int), &cap[p], L->nkids[p] + 1);
    L->kids[p][L->nkids[p]++] = (int)i;
  }
  free(cap);
}

static double draw_bottom(struct lay *L, double width)
{
  const struct dg_model *d = L->d;
  int *leaves = xcalloc(d->n + 1, sizeof(int));
  size_t nleaves = 0;
  for (size_t i = 0; i < d->n; i++)
    if (is_leaf(&d->nodes[i]))
      leaves[nleaves++] = (int)i;
  sort_by(leaves, nleaves, L->x);
  draw_hives(L, leaves, nleaves);
  free(leaves);
  double y = L->row_y[L->nrows - 1] + L->row_h[L->nrows - 1] + HIVE_PAD + 4;
  y = draw_nvlinks(L, y);
  y = draw_fabrics(L, y);
  return draw_legend(L, y + 10, width);
}

void dg_layout(const struct dg_model *d, struct dg_scene *s)
{
  memset(s, 0, sizeof(*s));
  size_t n = d->n + 1;
  struct lay L = {.d = d, .s = s, .kids = xcalloc(n, sizeof(int *)), .nkids = xcalloc(n, sizeof(size_t)),
                  .w = xcalloc(n, sizeof(double)), .h = xcalloc(n, sizeof(double)), .span = xcalloc(n, sizeof(double)),
                  .x = xcalloc(n, sizeof(double)), .y = xcalloc(n, sizeof(double))};
  children_of(&L);
  measure(&L);
  rows(&L);
  double gap = d->socket_label ? fmax(48, text_w(d->socket_label, DG_FONT) + 40) : 48, x = MARGIN;
  for (size_t i = 0; i < d->n; i++)
    if (d->nodes[i].kind == DG_CPU) {
      place(&L, i, x);
      x += L.span[i] + gap;
    }
  double width = fmax(fmax(x - gap - MARGIN, 640), text_w(d->title, TITLE_FONT));
  for (size_t f = 0; f < d->nfabrics; f++)
    for (size_t k = 0; k < d->fabrics[f].nlines; k++)
      width = fmax(width, text_w(d->fabrics[f].line[k], DG_FONT) + 2 * PAD_X);
  struct dg_text *t = add_text(s, d->title, MARGIN, MARGIN, false, TITLE_FONT, DG_NO_NODE);
  t->bold = true;
  add_text(s, "PCIe links: generation, width · GB/s per direction; red: bottleneck", MARGIN,
           MARGIN + 1.25 * TITLE_FONT + 4, false, DG_FONT, DG_NO_NODE)
      ->fill = "#555";
  draw_nodes(&L);
  draw_edges(&L);
  draw_sockets(&L);
  double bottom = draw_bottom(&L, width);
  s->w = ceil(width + 2 * MARGIN);
  s->h = ceil(bottom + MARGIN);
  for (size_t i = 0; i < n; i++)
    free(L.kids[i]);
  free(L.kids);
  free(L.nkids);
  free(L.w);
  free(L.h);
  free(L.span);
  free(L.x);
  free(L.y);
  free(L.row_y);
  free(L.row_h);
}

void dg_scene_free(struct dg_scene *s)
{
  for (size_t i = 0; i < s->npaths; i++)
    free(s->paths[i].d);
  for (size_t i = 0; i < s->ntexts; i++)
    free(s->texts[i].s);
  free(s->paths);
  free(s->texts);
  free(s->rects);
  memset(s, 0, sizeof(*s));
}

/* ---- the checker ---- */

static bool meets(const struct dg_box *a, const struct dg_box *b)
{
  const double e = 0.5; /* touching is not overlapping */
  return a->x < b->x + b->w - e && b->x < a->x + a->w - e && a->y < b->y + b->h - e && b->y < a->y + a->h - e;
}

static bool inside(const struct dg_box *in, const struct dg_box *out)
{
  const double e = 0.5;
  return in->x >= out->x - e && in->y >= out->y - e && in->x + in->w <= out->x + out->w + e &&
         in->y + in->h <= out->y + out->h + e;
}

static void note(char *why, size_t cap, const char *fmt, ...)
{
  if (why[0])
    return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, cap, fmt, ap);
  va_end(ap);
}

void dg_scene_overlaps(const struct dg_scene *s, struct dg_overlaps *o, char *why, size_t cap)
{
  memset(o, 0, sizeof(*o));
  why[0] = '\0';
  for (size_t i = 0; i < s->ntexts; i++)
    for (size_t j = i + 1; j < s->ntexts; j++)
      if (meets(&s->texts[i].box, &s->texts[j].box)) {
        o->text_text++;
        note(why, cap, "text '%s' meets text '%s'", s->texts[i].s, s->texts[j].s);
      }
  for (size_t i = 0; i < s->nrects; i++) {
    const struct dg_rect *a = &s->rects[i];
    if (a->shape != DG_SHAPE_NODE)
      continue;
    for (size_t j = i + 1; j < s->nrects; j++)
      if (s->rects[j].shape == DG_SHAPE_NODE && meets(&a->box, &s->rects[j].box)) {
        o->node_node++;
        note(why, cap, "box of node %d meets box of node %d", a->node, s->rects[j].node);
      }
    for (size_t k = 0; k < s->ntexts; k++) {
      const struct dg_text *t = &s->texts[k];
      bool own = t->node == a->node;
      if (own ? !inside(&t->box, &a->box) : meets(&t->box, &a->box)) {
        o->text_node++;
        note(why, cap, "text '%s' %s box of node %d", t->s, own ? "strays out of its" : "meets the", a->node);
      }
    }
  }
}
