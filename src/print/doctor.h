/* A doctor report: text grouped by severity with evidence and fixes; the NHC
 * form (one "ERROR: gpurig: ID: message" line per failure, nothing else);
 * JSON (docs/json.md) the caller owns (json_decref). */
#ifndef GPURIG_PRINT_DOCTOR_H
#define GPURIG_PRINT_DOCTOR_H

#include <stdio.h>

#include <jansson.h>

#include "analysis/machine.h"
#include "doctor/doctor.h"

struct gr_text_style;
/* Findings that say the same of several devices once, each cut to its point
 * with its fix; st->verbose: each whole with evidence, cost and source, and
 * the checks skipped or passed. */
void gr_print_doctor(FILE *out, const struct gr_topo *t, const struct gr_doctor_report *r, const struct gr_text_style *st);
void gr_print_doctor_nhc(FILE *out, const struct gr_doctor_report *r);
/* The JSON carries the results and the machine's inventory (its GPUs and
 * NICs with their links, the driver), which `gpurig fleet` compares. */
json_t *gr_doctor_to_json(const struct gr_machine *m, const struct gr_doctor_report *r);
/* --list: the registry, one check per line. */
void gr_print_doctor_checks(FILE *out);

#endif
