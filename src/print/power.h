/* A rig's power budget (analysis/power.h) as a text section and as JSON
 * (docs/json.md "power"): per PSU the sustained load, the transient peak,
 * the wall draw and the headroom, per rail where the rails are known, and
 * per circuit the wall draw against its continuous limit. These print the
 * one budget the analysis made; they compute nothing of their own.
 *
 * Ownership: gr_power_to_json's value is the caller's (json_decref). */
#ifndef GPURIG_PRINT_POWER_H
#define GPURIG_PRINT_POWER_H

#include <stdio.h>

#include <jansson.h>

#include "analysis/power.h"

/* "Power budget (...):" and its lines; what is unknown is said, not left out. */
void gr_print_power(FILE *out, const struct gr_power_budget *b);
json_t *gr_power_to_json(const struct gr_power_budget *b);

#endif
