/* `gpurig gpus`: per GPU what the driver reports, and the P2P status
 * matrices; JSON (docs/json.md) the caller owns (json_decref). */
#ifndef GPURIG_PRINT_GPUS_H
#define GPURIG_PRINT_GPUS_H

#include <stdio.h>

#include <jansson.h>

#include "gpu/gpu.h"
#include "model/topo.h"

void gr_print_gpus(FILE *out, const struct gr_topo *t, const struct gr_gpus_report *r);
json_t *gr_gpus_to_json(const struct gr_gpus_report *r);

#endif
