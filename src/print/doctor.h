/* A doctor report: text grouped by severity with evidence and fixes; the NHC
 * form (one "ERROR: gpurig: ID: message" line per failure, nothing else);
 * JSON (docs/json.md) the caller owns (json_decref). */
#ifndef GPURIG_PRINT_DOCTOR_H
#define GPURIG_PRINT_DOCTOR_H

#include <stdio.h>

#include <jansson.h>

#include "doctor/doctor.h"

void gr_print_doctor(FILE *out, const struct gr_topo *t, const struct gr_doctor_report *r);
void gr_print_doctor_nhc(FILE *out, const struct gr_doctor_report *r);
json_t *gr_doctor_to_json(const struct gr_topo *t, const struct gr_doctor_report *r);
/* --list: the registry, one check per line. */
void gr_print_doctor_checks(FILE *out);

#endif
