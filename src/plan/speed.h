/* The planner's speeds: decode, prefill and a training step, each a small
 * roofline over named costs (docs/plan.md "Speed"). The costs of an engine
 * come from its speed profile (data/engine-speed.tsv, by release), the
 * machine's from the GPU catalog and the topology's predicted all-reduce.
 * Every term goes into the plan's basis line with its value.
 *
 * Ownership: the functions fill fields of the plan they are given (ranges,
 * communication times, the basis text); nothing is allocated. */
#ifndef GPURIG_PLAN_SPEED_H
#define GPURIG_PLAN_SPEED_H

#include "plan/plan.h"

/* Decode tokens/s (short and full context) with the basis; needs the
 * plan's weight bytes (gr_plan_run's memory pass first). */
void gr_speed_decode(const struct gr_plan_req *r, const struct gr_model *m, const struct gr_plan_hw *hw,
                     struct gr_plan *o);

/* Prompt-processing tokens/s; appended to the basis. */
void gr_speed_prefill(const struct gr_plan_req *r, const struct gr_model *m, const struct gr_plan_hw *hw,
                      struct gr_plan *o);

/* Training step time and tokens/s with the basis. */
void gr_speed_train(const struct gr_plan_req *r, const struct gr_model *m, const struct gr_plan_hw *hw,
                    struct gr_plan *o);

/* Appends what a power limit does to the clocks to the basis line
 * (o->clock_share set by gr_plan_run, plan/power.h). */
void gr_speed_power_basis(const struct gr_plan_req *r, const struct gr_plan_hw *hw, struct gr_plan *o);

/* The GPU's boost clock in GHz (gpus.tsv boost_mhz, else the planner's default). */
double gr_speed_clock_ghz(const struct gr_gpu_model *gpu);

#endif
