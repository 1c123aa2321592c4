/* The sampler's history as an SVG chart (`gpurig watch --svg FILE`, and
 * burn-in's chart): per GPU, temperature, power and SM clock over the
 * samples held, each on its own scale, with every event as a dashed
 * vertical line (its text as the tooltip) and listed below. A value the GPU
 * does not report, or a GPU lost, is a gap, never a drop to 0.
 *
 * Ownership: gr_svg_timeline returns a string the caller frees. */
#ifndef GPURIG_PRINT_SVG_H
#define GPURIG_PRINT_SVG_H

#include "monitor/sampler.h"

/* A mark of the caller's (burn's all-reduce stalls): a solid purple line at
 * CLOCK_MONOTONIC mono with its text, listed with the events. */
struct gr_svg_mark {
  double mono;
  const char *text;
};

char *gr_svg_timeline(const struct gr_sampler *s, const char *title, const struct gr_svg_mark *marks, size_t nmarks);
/* The same with each event drawn and listed at the severity judge gives it
 * (burn: the AER errors of a link whose verdict fails are failures). */
typedef enum gr_sev (*gr_svg_judge)(const void *ctx, const struct gr_mon_event *e);
char *gr_svg_timeline_judged(const struct gr_sampler *s, const char *title, const struct gr_svg_mark *marks,
                             size_t nmarks, gr_svg_judge judge, const void *judge_ctx);

#endif
