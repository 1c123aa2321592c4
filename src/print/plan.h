/* `gpurig plan`: the breakdown per GPU and for the host, the verdict, speed
 * and cost, as text or JSON (docs/json.md); and DeepSpeed's estimator.
 * A json_t returned is the caller's (json_decref). */
#ifndef GPURIG_PRINT_PLAN_H
#define GPURIG_PRINT_PLAN_H

#include <stdio.h>

#include <jansson.h>

#include "plan/request.h"

void gr_print_plan(FILE *out, const struct gr_planned *pl);
json_t *gr_plan_to_json(const struct gr_planned *pl);
/* --estimator deepspeed --json: the request's counts and DeepSpeed's printout. */
json_t *gr_deepspeed_to_json(const struct gr_planned *pl, const char *printout);

/* Plan before buying (plan/request.h gr_plan_shop): memory per GPU count
 * and the catalog GPUs that hold the job. */
void gr_print_shop(FILE *out, const struct gr_shop *s);
json_t *gr_shop_to_json(const struct gr_shop *s);

#endif
