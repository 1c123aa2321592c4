/* `gpurig bench`: the measured figures against limits and predictions, the
 * all-reduce sweep and the findings; JSON (docs/json.md) the caller owns
 * (json_decref). */
#ifndef GPURIG_PRINT_BENCH_H
#define GPURIG_PRINT_BENCH_H

#include <stdio.h>

#include <jansson.h>

#include "gpu/bench.h"

void gr_print_bench(FILE *out, const struct gr_bench_report *r);
json_t *gr_bench_to_json(const struct gr_bench_report *r);
/* Findings as bench prints them: "  warn ID: [SUBJECT: ]TEXT" lines, and
 * JSON [{severity, id, subject (when one), text}] (docs/json.md); bench
 * --mpi's too. */
void gr_print_bench_findings(FILE *out, const struct gr_findings *fs);
json_t *gr_bench_findings_json(const struct gr_findings *fs);

#endif
