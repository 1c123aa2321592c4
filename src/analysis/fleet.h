/* A fleet side by side (docs/fleet.md): for every fact that the nodes
 * report (a GPU's link, a NIC's model, the driver), the value most nodes
 * have, and each node that differs from it as a finding that names the
 * node, the device and both values. Problems doctor found on some nodes
 * only are findings of those nodes; problems on every node are said once.
 *
 * Ownership: gr_fleet_compare fills a struct gr_fleet that owns its arrays
 * and findings, and points into the nodes it was given (keep them alive);
 * free it with gr_fleet_free. */
#ifndef GPURIG_ANALYSIS_FLEET_H
#define GPURIG_ANALYSIS_FLEET_H

#include <stdbool.h>
#include <stddef.h>

#include "load/fleet.h"
#include "model/finding.h"

/* The majority's value of one fact. */
struct gr_fleet_common {
  const char *where, *what; /* the fact (load/fleet.h) */
  const char *value;        /* the most common value; NULL: most nodes lack the device */
  const char *shown;        /* the device as the first node with that value names it, NULL for the node */
  size_t count;             /* nodes with that value */
};

struct gr_fleet {
  const struct gr_fleet_nodes *nodes;
  size_t answered;                 /* nodes whose document was read */
  struct gr_fleet_common *common;  /* one per fact, node facts first, in the order first met */
  size_t ncommon;
  bool *differs;                   /* per node: a finding names it */
  struct gr_findings findings;     /* worst first; the exit status is gr_findings_exit of them */
};

void gr_fleet_compare(const struct gr_fleet_nodes *nodes, struct gr_fleet *out);
void gr_fleet_free(struct gr_fleet *f);

#endif
