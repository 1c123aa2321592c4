/* The wiring: a topology and its analysis as text sections (commands pick
 * them) or one JSON object (docs/json.md) the caller owns (json_decref). */
#ifndef GPURIG_PRINT_TOPO_H
#define GPURIG_PRINT_TOPO_H

#include <stdio.h>

#include <jansson.h>

#include "analysis/analysis.h"

enum gr_print_flags {
  GR_PRINT_ALL_DEVICES = 1 << 0, /* tree: show every PCI device, not only GPU/NIC/NVMe paths */
};

/* "Gen4 x16, 31.5 GB/s" (now/both ends where they differ: "Gen1/Gen4 x16")
 * for the link above pci node idx, from the analysis's facts (gr_link_label),
 * in buf; "" when unknown. */
const char *gr_link_text(const struct gr_analysis *a, int idx, char *buf, size_t cap);

void gr_print_summary(FILE *out, const struct gr_topo *t, const struct gr_analysis *a);
void gr_print_tree(FILE *out, const struct gr_topo *t, const struct gr_analysis *a, unsigned flags);
void gr_print_gpu_table(FILE *out, const struct gr_topo *t, const struct gr_analysis *a);
void gr_print_matrix(FILE *out, const struct gr_topo *t, const struct gr_analysis *a);
void gr_print_nccl(FILE *out, const struct gr_topo *t, const struct gr_analysis *a);
void gr_print_bandwidth(FILE *out, const struct gr_topo *t, const struct gr_analysis *a);
void gr_print_hives(FILE *out, const struct gr_topo *t, const struct gr_analysis *a);
struct gr_text_style;
/* The analysis's findings: grouped and cut to their point, or (st->verbose)
 * each whole with its id. */
void gr_print_findings(FILE *out, const struct gr_topo *t, const struct gr_analysis *a, const struct gr_text_style *st);

struct gr_jw;
/* The members of the topology's JSON object (docs/json.md), written into
 * w's open object as they are made (print/json_stream.h). */
void gr_topo_json_members(struct gr_jw *w, const struct gr_topo *t, const struct gr_analysis *a);
/* The same as a tree (the caller's, json_decref): for tests and fuzzers;
 * the commands stream it. NULL when out of memory. */
json_t *gr_topo_to_json(const struct gr_topo *t, const struct gr_analysis *a);
/* What write(w, ctx) streams into an object, read back as a tree (the
 * caller's); NULL when out of memory. */
json_t *gr_json_from_stream(void (*write)(struct gr_jw *w, const void *ctx), const void *ctx);

#endif
