/* gpurig burn's report: text (a line per GPU, the all-reduce's timing, the
 * verdicts worst first) and JSON (docs/burn.md).
 * Ownership: JSON values returned are the caller's (json_decref). */
#ifndef GPURIG_PRINT_BURN_H
#define GPURIG_PRINT_BURN_H

#include <stdio.h>

#include <jansson.h>

#include "monitor/burn.h"

void gr_print_burn(FILE *out, const struct gr_sampler *s, const struct gr_burn_opts *o, const struct gr_burn_report *r);
json_t *gr_burn_to_json(const struct gr_sampler *s, const struct gr_burn_opts *o, const struct gr_burn_report *r);
/* "pcie,p2p,allreduce" */
const char *gr_burn_loads_text(unsigned loads, char *buf, size_t cap);
const char *gr_burn_pattern_name(enum gr_burn_pattern p);

#endif
