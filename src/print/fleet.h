/* A fleet side by side (analysis/fleet.h): text, a node per row, the
 * majority and what differs; JSON (docs/json.md) the caller owns
 * (json_decref); an HTML page. */
#ifndef GPURIG_PRINT_FLEET_H
#define GPURIG_PRINT_FLEET_H

#include <stdio.h>

#include <jansson.h>

#include "analysis/fleet.h"

struct gr_text_style;
void gr_print_fleet(FILE *out, const struct gr_fleet *f, const struct gr_text_style *st);
json_t *gr_fleet_to_json(const struct gr_fleet *f);
/* The fleet as an HTML page with the HTML report's skeleton, style and
 * escaping (print/report/report_html.c; self-contained, no script): a row
 * per node and a column per fact with the odd values marked, the majority,
 * the findings. 0, or -1 when writing to out failed. */
int gr_print_fleet_html(FILE *out, const struct gr_fleet *f);

#endif
