/* A machine as `gpurig topo` and `gpurig report` show it: the wiring and
 * prediction sections composed, as text or one JSON object (docs/json.md)
 * the caller owns (json_decref). */
#ifndef GPURIG_PRINT_MACHINE_H
#define GPURIG_PRINT_MACHINE_H

#include <stdio.h>

#include <jansson.h>

#include "analysis/machine.h"

/* Every section: summary, tree (flags: print/topo.h), matrices, hives,
 * prediction, findings. */
void gr_print_topo_text(FILE *out, const struct gr_machine *m, unsigned flags);
/* The overview: summary, GPU table, matrix, hives, prediction, findings. */
void gr_print_report_text(FILE *out, const struct gr_machine *m);
/* The topology and analysis, with "prediction" when the machine has one. */
json_t *gr_machine_to_json(const struct gr_machine *m);

#endif
