/* The sampler's history as an SVG chart; see svg.h. */
#include "print/svg.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "print/common.h"

enum { W = 960, LEFT = 100, RIGHT = 20, PANEL_H = 80, GAP = 26, TOP = 74 };

/* What one panel draws: a GPU value over time, with its own scale. */
struct series {
  const char *label, *unit;
  size_t field;     /* offset of a struct gr_metric in struct gr_gpu_dynamic */
  const char *color;
};

static const struct series gpu_series[] = {
    {"temperature", "C", offsetof(struct gr_gpu_dynamic, temp_c), "#d62728"},
    {"power", "W", offsetof(struct gr_gpu_dynamic, power_w), "#1f77b4"},
    {"SM clock", "MHz", offsetof(struct gr_gpu_dynamic, sm_clock_mhz), "#2ca02c"},
};
enum { NSERIES = sizeof(gpu_series) / sizeof(gpu_series[0]) };

static const struct gr_metric *metric_of(const struct gr_sample *x, unsigned gpu, size_t field)
{
  return (const struct gr_metric *)((const char *)&x->gpu[gpu] + field);
}

struct frame {
  double t0, t1;      /* CLOCK_MONOTONIC of the oldest and newest sample held */
  int plot_w;
  gr_svg_judge judge; /* an event's severity as the caller judges it, NULL its own */
  const void *judge_ctx;
};

static enum gr_sev sev_of(const struct frame *fr, const struct gr_mon_event *e)
{
  return fr->judge ? fr->judge(fr->judge_ctx, e) : e->f.sev;
}

static double x_of(const struct frame *fr, double mono)
{
  double span = fr->t1 > fr->t0 ? fr->t1 - fr->t0 : 1;
  return LEFT + (mono - fr->t0) / span * fr->plot_w;
}

/* One panel: the series' line over every sample held (a gap where it is
 * unknown or the GPU did not answer), its scale and label. */
static void panel(FILE *f, const struct gr_sampler *s, const struct frame *fr, unsigned gpu, const struct series *se,
                  int y)
{
  unsigned n = gr_sampler_count(s);
  double hi = 0;
  for (unsigned ago = 0; ago < n; ago++) {
    const struct gr_sample *x = gr_sampler_sample(s, ago);
    const struct gr_metric *m = metric_of(x, gpu, se->field);
    if (m->ok && x->gpu_read[gpu] != GR_READ_LOST && m->v > hi)
      hi = m->v;
  }
  hi = hi > 0 ? hi * 1.1 : 1;
  fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#fafafa\" stroke=\"#ccc\"/>\n", LEFT, y,
          fr->plot_w, PANEL_H);
  fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"11\" text-anchor=\"end\">%s</text>\n", LEFT - 6, y + 12, se->label);
  fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"10\" text-anchor=\"end\" fill=\"#666\">%.0f %s</text>\n", LEFT - 6,
          y + 26, hi, se->unit);
  fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"10\" text-anchor=\"end\" fill=\"#666\">0</text>\n", LEFT - 6,
          y + PANEL_H);
  fprintf(f, "<path fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" d=\"", se->color);
  bool pen_down = false;
  for (unsigned ago = n; ago-- > 0;) {
    const struct gr_sample *x = gr_sampler_sample(s, ago);
    const struct gr_metric *m = metric_of(x, gpu, se->field);
    if (!m->ok || x->gpu_read[gpu] == GR_READ_LOST) {
      pen_down = false;
      continue;
    }
    fprintf(f, "%c%.1f %.1f ", pen_down ? 'L' : 'M', x_of(fr, x->mono_s), y + PANEL_H - m->v / hi * PANEL_H);
    pen_down = true;
  }
  fputs("\"/>\n", f);
}

static const char *sev_color(enum gr_sev sev)
{
  return sev == GR_SEV_FAIL ? "#d62728" : sev == GR_SEV_WARN ? "#ff7f0e" : "#7f7f7f";
}

/* Every event held, a vertical line over the whole chart at its time, with
 * its text as the line's tooltip, and a number keyed to the list below. */
static void events(FILE *f, const struct gr_sampler *s, const struct frame *fr, int y0, int y1)
{
  unsigned long n = gr_sampler_nevents(s), shown = 0;
  for (unsigned long k = 0; k < n; k++) {
    const struct gr_mon_event *e = gr_sampler_event(s, k);
    if (!e || e->mono_s < fr->t0)
      continue;
    double x = x_of(fr, e->mono_s);
    fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"%s\" stroke-dasharray=\"3,2\"><title>",
            x, y0, x, y1, sev_color(sev_of(fr, e)));
    gr_xml_text(f, e->f.text);
    fprintf(f, "</title></line>\n<text x=\"%.1f\" y=\"%d\" font-size=\"9\" fill=\"%s\" text-anchor=\"middle\">%lu</text>\n",
            x, y0 - 14, sev_color(sev_of(fr, e)), ++shown);
  }
}

static int event_list(FILE *f, const struct gr_sampler *s, const struct frame *fr, int y)
{
  unsigned long n = gr_sampler_nevents(s), shown = 0;
  for (unsigned long k = 0; k < n; k++) {
    const struct gr_mon_event *e = gr_sampler_event(s, k);
    if (!e || e->mono_s < fr->t0)
      continue;
    enum gr_sev sev = sev_of(fr, e);
    fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"11\" fill=\"%s\">%lu  +%.1f s  %s: ", LEFT, y, sev_color(sev),
            ++shown, e->mono_s - fr->t0, gr_sev_name(sev));
    gr_xml_text(f, e->f.text);
    fputs("</text>\n", f);
    y += 15;
  }
  return y;
}

/* The caller's marks: solid purple lines with their text as the tooltip,
 * lettered (a, b, ...) and listed after the events. */
static void marks_draw(FILE *f, const struct frame *fr, const struct gr_svg_mark *m, size_t n, int y0, int y1)
{
  for (size_t k = 0; k < n; k++) {
    if (m[k].mono < fr->t0 || m[k].mono > fr->t1 + 1)
      continue;
    double x = x_of(fr, m[k].mono);
    fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#9467bd\" stroke-width=\"1.5\"><title>", x,
            y0, x, y1);
    gr_xml_text(f, m[k].text);
    fprintf(f, "</title></line>\n<text x=\"%.1f\" y=\"%d\" font-size=\"9\" fill=\"#9467bd\" text-anchor=\"middle\">%c"
               "</text>\n", x, y0 - 4, (char)('a' + k % 26));
  }
}

static int marks_list(FILE *f, const struct frame *fr, const struct gr_svg_mark *m, size_t n, int y)
{
  for (size_t k = 0; k < n; k++) {
    fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"11\" fill=\"#9467bd\">%c  +%.1f s  ", LEFT, y,
            (char)('a' + k % 26), m[k].mono - fr->t0);
    gr_xml_text(f, m[k].text);
    fputs("</text>\n", f);
    y += 15;
  }
  return y;
}

char *gr_svg_timeline(const struct gr_sampler *s, const char *title, const struct gr_svg_mark *marks, size_t nmarks)
{
  return gr_svg_timeline_judged(s, title, marks, nmarks, NULL, NULL);
}

char *gr_svg_timeline_judged(const struct gr_sampler *s, const char *title, const struct gr_svg_mark *marks,
                             size_t nmarks, gr_svg_judge judge, const void *judge_ctx)
{
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f)
    return xstrdup("");
  const struct gr_sample *newest = gr_sampler_sample(s, 0);
  unsigned n = gr_sampler_count(s), ngpu = gr_sampler_ngpu(s);
  struct frame fr = {.plot_w = W - LEFT - RIGHT, .judge = judge, .judge_ctx = judge_ctx};
  fr.t1 = newest ? newest->mono_s : 0;
  fr.t0 = n ? gr_sampler_sample(s, n - 1)->mono_s : 0;
  unsigned long nev = gr_sampler_nevents(s);
  int charts_h = (int)ngpu * (NSERIES * (PANEL_H + 6) + GAP);
  int h = TOP + charts_h + 40 + (int)((nev < 256 ? nev : 256) + nmarks) * 15 + 20;
  fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
             "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
             "font-family=\"sans-serif\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
          W, h, W, h);
  fputs("<text x=\"10\" y=\"22\" font-size=\"16\" font-weight=\"bold\">", f);
  gr_xml_text(f, title);
  fprintf(f, "</text>\n<text x=\"10\" y=\"40\" font-size=\"11\" fill=\"#444\">%u samples over %.1f s; dashed lines "
             "are events (red fail, orange warn, grey info), numbered as listed below%s</text>\n",
          n, fr.t1 - fr.t0, nmarks ? "; solid purple lines, lettered, are all-reduce stalls" : "");
  int y = TOP;
  for (unsigned g = 0; g < ngpu && newest; g++) {
    fputs("<text x=\"10\" y=\"", f);
    fprintf(f, "%d\" font-size=\"12\" font-weight=\"bold\">", y + 4);
    gr_xml_text(f, gr_sampler_gpu_name(s, g));
    fputs(" ", f);
    gr_xml_text(f, gr_sampler_gpu_static(s, g)->name);
    fputs("</text>\n", f);
    y += 10;
    for (unsigned k = 0; k < NSERIES; k++) {
      panel(f, s, &fr, g, &gpu_series[k], y);
      y += PANEL_H + 6;
    }
    y += GAP - 10;
  }
  events(f, s, &fr, TOP - 10, y);
  marks_draw(f, &fr, marks, nmarks, TOP - 10, y);
  fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"10\" fill=\"#666\">0 s</text>\n", LEFT, y + 4);
  fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"10\" fill=\"#666\" text-anchor=\"end\">%.1f s</text>\n", W - RIGHT,
          y + 4, fr.t1 - fr.t0);
  y = event_list(f, s, &fr, y + 30);
  y = marks_list(f, &fr, marks, nmarks, y);
  fputs("</svg>\n", f);
  fclose(f);
  return buf;
}
