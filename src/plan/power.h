/* What a power limit costs: the SM clock a GPU sustains under a cap, from
 * the board power's split into a part that follows the clock (C V^2 f,
 * the voltage rising with the clock down to its floor) and one that does
 * not (data/power-clock.tsv, docs/plan.md "Power limit").
 *
 * Ownership: nothing is allocated; the row returned belongs to the facts. */
#ifndef GPURIG_PLAN_POWER_H
#define GPURIG_PLAN_POWER_H

#include "facts/catalog.h"
#include "facts/tables.h"

/* The power-clock row for the GPU's architecture, else the "-" row; NULL
 * when the table has neither. */
const struct gr_power_clock_row *gr_power_clock_row(const struct gr_gpu_model *g);

/* The lowest limit the model gives a clock for, W: the part of the board
 * power that does not follow the clock; 0 when the board power is unknown. */
double gr_power_limit_floor_w(const struct gr_gpu_model *g);

/* The share of its boost clock the GPU sustains at limit_w under a
 * sustained compute-bound load; 1 for no limit (0), a limit at or above
 * the board power, or a GPU whose board power is unknown. */
double gr_power_clock_share(const struct gr_gpu_model *g, double limit_w);

#endif
