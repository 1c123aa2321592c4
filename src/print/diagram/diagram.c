/* The block diagram as SVG and as Graphviz DOT; see diagram.h. The SVG
 * writes out a scene (diagram_layout.c), the DOT the model
 * (diagram_model.c) and leaves the layout to Graphviz. */
#include "print/diagram/diagram.h"

#include <stdlib.h>
#include <string.h>

#include "print/common.h"
#include "print/diagram/diagram_internal.h"
#include "base/util.h"

static const char *class_of(enum dg_kind k)
{
  static const char *names[] = {"cpu", "rc", "switch", "gpu", "nic", "nvme", "nvswitch"};
  return names[k];
}

static void svg_text(FILE *f, const struct dg_text *t)
{
  fprintf(f, "<text class=\"label%s\" x=\"%.1f\" y=\"%.1f\"%s%s", t->edge ? " edge-label" : "", t->x, t->y,
          t->middle ? " text-anchor=\"middle\"" : "", t->bold ? " font-weight=\"bold\"" : "");
  if (t->size != DG_FONT)
    fprintf(f, " font-size=\"%g\"", t->size);
  fprintf(f, " fill=\"%s\">", t->fill);
  gr_xml_text(f, t->s);
  fputs("</text>\n", f);
}

static void svg_rect(FILE *f, const struct dg_rect *r, const char *cls, double radius)
{
  fprintf(f, "<rect class=\"%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" rx=\"%g\" fill=\"%s\"", cls,
          r->box.x, r->box.y, r->box.w, r->box.h, radius, r->fill);
  if (r->stroke)
    fprintf(f, " stroke=\"%s\"", r->stroke);
  fputs("/>\n", f);
}

static void svg_paths(FILE *f, const struct dg_scene *s)
{
  static const struct {
    const char *cls, *stroke;
    double width;
  } style[] = {
      [DG_LINE_PCIE] = {"edge pcie", "#4a4f57", 1.5},
      [DG_LINE_BAD] = {"edge pcie bottleneck", "#d62728", 4},
      [DG_LINE_NVLINK] = {"edge nvlink", "#7c3aed", 2.5},
      [DG_LINE_FABRIC] = {"edge fabric", "#1f8f86", 2.5},
      [DG_LINE_SOCKET] = {"edge socket", "#2f4f7f", 5},
      [DG_LINE_SOCKET_BAD] = {"edge socket bottleneck", "#d62728", 6},
  };
  for (size_t i = 0; i < s->npaths; i++)
    fprintf(f, "<path class=\"%s\" d=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"%g\"/>\n",
            style[s->paths[i].kind].cls, s->paths[i].d, style[s->paths[i].kind].stroke, style[s->paths[i].kind].width);
}

/* One node: its group (GPUs name themselves in data-gpu), box and text. */
static void svg_node(FILE *f, const struct dg_model *d, const struct dg_scene *s, const struct dg_rect *r)
{
  bool gpu = r->node >= 0 && d->nodes[r->node].kind == DG_GPU;
  fprintf(f, "<g class=\"node %s\"", r->node >= 0 ? class_of(d->nodes[r->node].kind) : "fabric");
  if (gpu)
    fprintf(f, " data-gpu=\"GPU%d\"", d->nodes[r->node].gpu);
  if (gpu && r->hive >= 0)
    fprintf(f, " data-hive=\"%d\"", r->hive);
  fputs(">\n", f);
  svg_rect(f, r, "box", 5);
  for (size_t k = 0; k < s->ntexts; k++)
    if (s->texts[k].node == r->node)
      svg_text(f, &s->texts[k]);
  fputs("</g>\n", f);
}

static void svg_write(FILE *f, const struct dg_model *d, const struct dg_scene *s)
{
  fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"gr-diagram\" viewBox=\"0 0 %.0f %.0f\" width=\"%.0f\" "
             "height=\"%.0f\" font-family=\"DejaVu Sans Mono, monospace\" font-size=\"%g\">\n<title>",
          s->w, s->h, s->w, s->h, DG_FONT);
  gr_xml_text(f, d->title);
  fprintf(f, " (gpurig block diagram)</title>\n<rect class=\"background\" width=\"%.0f\" height=\"%.0f\" "
             "fill=\"#ffffff\"/>\n", s->w, s->h);
  for (size_t i = 0; i < s->nrects; i++)
    if (s->rects[i].shape == DG_SHAPE_HIVE)
      svg_rect(f, &s->rects[i], "hive", 8);
  svg_paths(f, s);
  for (size_t i = 0; i < s->nrects; i++)
    if (s->rects[i].shape == DG_SHAPE_LABEL_BG)
      svg_rect(f, &s->rects[i], "label-bg", 2);
  for (size_t k = 0; k < s->ntexts; k++)
    if (s->texts[k].edge)
      svg_text(f, &s->texts[k]);
  for (size_t i = 0; i < s->nrects; i++)
    if (s->rects[i].shape == DG_SHAPE_NODE)
      svg_node(f, d, s, &s->rects[i]);
  for (size_t i = 0; i < s->nrects; i++)
    if (s->rects[i].shape == DG_SHAPE_SWATCH)
      svg_rect(f, &s->rects[i], s->rects[i].hive >= 0 ? "hive-swatch" : "swatch", 2);
  for (size_t k = 0; k < s->ntexts; k++)
    if (!s->texts[k].edge && s->texts[k].node == DG_NO_NODE)
      svg_text(f, &s->texts[k]);
  fputs("</svg>\n", f);
}

/* The machine's model written by one of the writers below into a string. */
static char *render(const struct gr_machine *m, void (*write)(FILE *f, const struct dg_model *d))
{
  struct dg_model d;
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f)
    return xstrdup("");
  dg_model_build(m, &d);
  write(f, &d);
  fclose(f);
  dg_model_free(&d);
  return buf;
}

static void svg_of(FILE *f, const struct dg_model *d)
{
  struct dg_scene s;
  dg_layout(d, &s);
  svg_write(f, d, &s);
  dg_scene_free(&s);
}

char *gr_diagram_svg(const struct gr_machine *m)
{
  return render(m, svg_of);
}

/* ---- DOT ---- */

/* A DOT string's inside: the text cleaned (print/common.h), quotes and
 * backslashes escaped. */
static void dot_text(FILE *f, const char *s)
{
  char *clean = gr_text_clean(s);
  for (const char *p = clean; *p; p++) {
    if (*p == '"' || *p == '\\')
      fputc('\\', f);
    fputc(*p, f);
  }
  free(clean);
}

static void dot_lines(FILE *f, char *const *line, size_t n)
{
  fputc('"', f);
  for (size_t k = 0; k < n; k++) {
    dot_text(f, line[k]);
    if (k + 1 < n)
      fputs("\\n", f);
  }
  fputc('"', f);
}

static void dot_nodes(FILE *f, const struct dg_model *d)
{
  for (size_t i = 0; i < d->n; i++) {
    const struct dg_node *n = &d->nodes[i];
    fprintf(f, "  n%zu [label=", i);
    dot_lines(f, n->line, n->nlines);
    fprintf(f, ", class=\"%s\", fillcolor=\"%s\"];\n", class_of(n->kind), dg_kind_fill(n->kind));
  }
  for (size_t i = 0; i < d->n; i++) {
    const struct dg_node *n = &d->nodes[i];
    if (n->parent < 0)
      continue;
    fprintf(f, "  n%d -> n%zu [label=", n->parent, i);
    dot_lines(f, n->edge, n->nedge);
    fprintf(f, "%s];\n", n->edge_bad ? ", color=\"#d62728\", fontcolor=\"#c0261f\", penwidth=3" : "");
  }
}

/* Sockets on one rank joined by their link; NVLinks and fabric links do not
 * pull the tree's ranks about (constraint=false). */
static void dot_overlay(FILE *f, const struct dg_model *d)
{
  fputs("  { rank=same;", f);
  for (size_t i = 0; i < d->n; i++)
    if (d->nodes[i].kind == DG_CPU)
      fprintf(f, " n%zu;", i);
  fputs(" }\n", f);
  int prev = -1;
  for (size_t i = 0; i < d->n; i++) {
    if (d->nodes[i].kind != DG_CPU)
      continue;
    if (prev >= 0 && d->socket_label) {
      fprintf(f, "  n%d -> n%zu [dir=none, penwidth=4, label=\"", prev, i);
      dot_text(f, d->socket_label);
      fprintf(f, "\"%s];\n", d->socket_bad ? ", color=\"#d62728\"" : ", color=\"#2f4f7f\"");
    }
    prev = (int)i;
  }
  for (size_t k = 0; k < d->nlinks; k++) {
    fprintf(f, "  n%d -> n%d [dir=none, constraint=false, color=\"#7c3aed\", penwidth=2, label=\"", d->links[k].a,
            d->links[k].b);
    dot_text(f, d->links[k].label);
    fputs("\"];\n", f);
  }
  for (size_t i = 0; i < d->nfabrics; i++) {
    fprintf(f, "  fabric%zu [label=", i);
    dot_lines(f, d->fabrics[i].line, d->fabrics[i].nlines);
    fprintf(f, ", class=\"fabric\", fillcolor=\"%s\"];\n", dg_kind_fill(DG_NVSWITCH));
    for (size_t k = 0; k < d->fabrics[i].ngpus; k++)
      fprintf(f, "  n%d -> fabric%zu [dir=none, color=\"#1f8f86\", penwidth=2];\n", d->fabrics[i].gpus[k], i);
  }
}

/* Each hive of two or more GPUs a shaded cluster. */
static void dot_hives(FILE *f, const struct dg_model *d)
{
  const struct gr_analysis *a = &d->m->analysis;
  char list[256];
  for (size_t h = 0; h < a->nhives; h++) {
    size_t n = 0;
    for (size_t i = 0; i < d->n; i++)
      n += d->nodes[i].kind == DG_GPU && d->nodes[i].hive == (int)h;
    if (n < 2)
      continue;
    fprintf(f, "  subgraph cluster_hive%zu {\n    label=\"P2P hive %zu: %s (%s)\"; style=\"filled,rounded\"; "
               "fillcolor=\"%s\"; color=\"%s\";\n   ",
            h, h, dg_hive_gpus(d, (int)h, list, sizeof(list)), dg_hive_kind(d, (int)h), dg_hive_fill((int)h), dg_hive_fill((int)h));
    for (size_t i = 0; i < d->n; i++)
      if (d->nodes[i].kind == DG_GPU && d->nodes[i].hive == (int)h)
        fprintf(f, " n%zu;", i);
    fputs("\n  }\n", f);
  }
}

static void dot_of(FILE *f, const struct dg_model *d)
{
  fputs("digraph gpurig {\n  graph [rankdir=TB, fontname=\"DejaVu Sans Mono\", labelloc=t, label=\"", f);
  dot_text(f, d->title);
  fputs("\"];\n  node [shape=box, style=\"rounded,filled\", fontname=\"DejaVu Sans Mono\", fontsize=10];\n"
        "  edge [fontname=\"DejaVu Sans Mono\", fontsize=9, arrowhead=none];\n",
        f);
  dot_nodes(f, d);
  dot_overlay(f, d);
  dot_hives(f, d);
  fputs("}\n", f);
}

char *gr_diagram_dot(const struct gr_machine *m)
{
  return render(m, dot_of);
}
