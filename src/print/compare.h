/* `gpurig compare`: rigs side by side (the table, the reasons per rank and
 * per tensor-parallel group), the plan of a job on each, and the rig list;
 * JSON (docs/json.md) the caller owns (json_decref). */
#ifndef GPURIG_PRINT_COMPARE_H
#define GPURIG_PRINT_COMPARE_H

#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

#include "analysis/compare.h"
#include "plan/request.h"

/* The table in the order shown (gr_compare_order: by the job's speed with
 * --job, else the training rank), a line that says what the rank is, and
 * the reasons. plans: --job's plans (plans[i] on js[i]), or NULL. */
struct gr_text_style;
/* The reasons cut to what the table does not say unless st->verbose. */
void gr_print_compare(FILE *out, const struct gr_judged *js, const struct gr_planned *plans, size_t n,
                      const struct gr_text_style *st);
/* --job: one row per rig (plans[i] planned on js[i]), in the order shown,
 * then the rigs that share a rank and what a raised NCCL_P2P_LEVEL would
 * change, which the rank leaves out. */
void gr_print_compare_plans(FILE *out, const struct gr_judged *js, const struct gr_planned *plans, size_t n,
                            const char *what, const char *job);
/* Each rig's draw and that draw's energy and cost per day at kwh_price
 * (--kwh, default data/planner.tsv's kwh_price_usd): with plans (--job),
 * the planned job's draw (plans[i] on js[i]: the plan's power model, which
 * --power-limit caps); without, full load from its power budget
 * (analysis/power.h: GPUs at board power or the rig's limit, CPUs at TDP),
 * at the wall where its one PSU's efficiency is known. */
void gr_print_compare_power(FILE *out, const struct gr_judged *js, const struct gr_planned *plans, size_t n,
                            double kwh_price);
/* {"rigs": [...]}, each with its plan when plans is non-NULL and its power
 * (basis "job" with plans, else "full_load") with the energy cost at
 * kwh_price. */
json_t *gr_compare_to_json(const struct gr_judged *js, const struct gr_planned *plans, size_t n, double kwh_price);
/* --list: "NAME  TITLE" per rig, or why it does not load. */
void gr_print_rig_list(FILE *out, const struct gr_rig_entry *rigs, size_t n);

#endif
