/* Predictions (analysis/predict.h): a text section for topo and report, and
 * a JSON object (docs/json.md) the caller owns (json_decref). */
#ifndef GPURIG_PRINT_PREDICT_H
#define GPURIG_PRINT_PREDICT_H

#include <stdio.h>

#include <jansson.h>

#include "analysis/predict.h"

struct gr_text_style;
/* Verdicts and placement notes cut to their point unless st->verbose. */
void gr_print_prediction(FILE *out, const struct gr_topo *t, const struct gr_prediction *p, const struct gr_text_style *st);
json_t *gr_prediction_to_json(const struct gr_topo *t, const struct gr_prediction *p);
/* The same members written into the open object of a JSON stream as they are
 * made (print/json_stream.h), the n x n matrices a row at a time. */
struct gr_jw;
void gr_prediction_json_members(struct gr_jw *w, const struct gr_topo *t, const struct gr_prediction *p);

#endif
