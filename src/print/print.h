/* Printers of a topology and its analysis. Text goes to a FILE*; JSON is
 * returned as a jansson object the caller owns (json_decref). Commands pick
 * sections; no command formats topology on its own. */
#ifndef GPURIG_PRINT_H
#define GPURIG_PRINT_H

#include <stdio.h>

#include <jansson.h>

#include "analysis/analysis.h"
#include "gpu/bench.h"
#include "doctor/doctor.h"
#include "gpu/gpu.h"
#include "plan/plan.h"
#include "analysis/predict.h"
#include "model/topo.h"

enum gr_print_flags {
  GR_PRINT_ALL_DEVICES = 1 << 0, /* tree: show every PCI device, not only GPU/NIC/NVMe paths */
};

/* "Machine: PRODUCT (HOST)  [SOURCE]" without a newline. */
void gr_print_machine_line(FILE *out, const struct gr_topo *t);
void gr_print_summary(FILE *out, const struct gr_topo *t, const struct gr_analysis *a);
void gr_print_tree(FILE *out, const struct gr_topo *t, unsigned flags);
void gr_print_gpu_table(FILE *out, const struct gr_topo *t, const struct gr_analysis *a);
void gr_print_matrix(FILE *out, const struct gr_topo *t, const struct gr_analysis *a);
void gr_print_nccl(FILE *out, const struct gr_topo *t, const struct gr_analysis *a);
void gr_print_bandwidth(FILE *out, const struct gr_topo *t, const struct gr_analysis *a);
void gr_print_hives(FILE *out, const struct gr_topo *t, const struct gr_analysis *a);
void gr_print_findings(FILE *out, const struct gr_topo *t, const struct gr_analysis *a);
/* Loader warnings, one "gpurig: warning: ..." line each. */
void gr_print_warnings(FILE *err, const struct gr_topo *t);

/* Display name of a device: GPU model, PCI device name, or its class. Static or
 * topology-owned storage; valid while t lives. */
const char *gr_pci_display_name(const struct gr_topo *t, int idx);
const char *gr_vendor_name(unsigned vendor_id); /* from pci.ids; NULL when unknown */

/* Predictions: a text section, and a JSON object (caller owns it). */
void gr_print_prediction(FILE *out, const struct gr_topo *t, const struct gr_prediction *p);
json_t *gr_prediction_to_json(const struct gr_topo *t, const struct gr_prediction *p);

/* A JSON number rounded to `decimals` places (half away from zero). Caller
 * owns the result. */
json_t *gr_json_rounded(double v, int decimals);
/* The same, or null when v <= 0 (a rate or price that is not known). */
json_t *gr_json_positive(double v, int decimals);

/* A JSON string, null for NULL; text that is not UTF-8 has its non-ASCII
 * bytes replaced by '?' (never a missing key). Caller owns the result. */
json_t *gr_json_text(const char *s);

/* The whole topology and analysis as one JSON object (docs/json.md). */
json_t *gr_topo_to_json(const struct gr_topo *t, const struct gr_analysis *a);

/* A doctor report: text grouped by severity with evidence and fixes; the NHC
 * form (one "ERROR: gpurig: ID: message" line per failure, nothing else);
 * JSON (docs/json.md, caller owns it). */
void gr_print_doctor(FILE *out, const struct gr_topo *t, const struct gr_doctor_report *r);
void gr_print_doctor_nhc(FILE *out, const struct gr_doctor_report *r);
json_t *gr_doctor_to_json(const struct gr_topo *t, const struct gr_doctor_report *r);

/* `gpurig gpus`: per GPU what the driver reports, and the P2P status
 * matrices; JSON (docs/json.md, caller owns it). */
void gr_print_gpus(FILE *out, const struct gr_topo *t, const struct gr_gpus_report *r);
json_t *gr_gpus_to_json(const struct gr_gpus_report *r);

/* `gpurig bench`: the measured figures against limits and predictions, the
 * all-reduce sweep and the findings; JSON (docs/json.md, caller owns it). */
void gr_print_bench(FILE *out, const struct gr_bench_report *r);
json_t *gr_bench_to_json(const struct gr_bench_report *r);

/* `gpurig plan`: the breakdown, verdict, speed and cost; JSON (docs/json.md,
 * caller owns it). */
void gr_print_plan(FILE *out, const struct gr_plan_req *r, const struct gr_model *m, const struct gr_plan_hw *hw,
                   const struct gr_plan *p);
json_t *gr_plan_to_json(const struct gr_plan_req *r, const struct gr_model *m, const struct gr_plan_hw *hw,
                        const struct gr_plan *p);

#endif
