/* A machine as `gpurig topo` and `gpurig report` show it: the wiring and
 * prediction sections composed, as text or one JSON object (docs/json.md)
 * the caller owns (json_decref). */
#ifndef GPURIG_PRINT_MACHINE_H
#define GPURIG_PRINT_MACHINE_H

#include <stdio.h>

#include <jansson.h>

#include "analysis/machine.h"

struct gr_text_style;
/* Every section: summary, tree (flags: print/topo.h), matrices, hives,
 * prediction, findings (grouped and cut to their point unless st->verbose). */
void gr_print_topo_text(FILE *out, const struct gr_machine *m, unsigned flags, const struct gr_text_style *st);
/* The whole overview (report --verbose): summary, GPU table, matrix, hives,
 * prediction, findings. */
void gr_print_report_text(FILE *out, const struct gr_machine *m, const struct gr_text_style *st);
/* The one-screen overview `gpurig report` prints by default: the machine in
 * one line, the GPUs grouped, the wiring, the hives, the all-reduce against
 * what bounds it, one line per verdict and the top findings grouped; with
 * st->verbose the sentences whole. Fits 40 lines of 100 columns. */
void gr_print_report_brief(FILE *out, const struct gr_machine *m, const struct gr_text_style *st);
/* The topology and analysis, with "prediction" when the machine has one
 * (docs/json.md), as a tree (the caller's, json_decref; NULL when out of
 * memory): for tests. The commands stream it with the two below. */
json_t *gr_machine_to_json(const struct gr_machine *m);
struct gr_jw;
/* The same members written into w's open object as they are made
 * (print/json_stream.h): a 512-GPU machine's matrices are never in memory. */
void gr_machine_json_members(struct gr_jw *w, const struct gr_machine *m);
/* The whole document on out, as gr_json_print would print the tree. */
void gr_machine_json_print(FILE *out, const struct gr_machine *m);

#endif
