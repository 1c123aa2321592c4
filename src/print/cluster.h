/* A cluster's prediction (analysis/cluster.h) as text and JSON: the
 * inter-node all-reduce, the NICs and the GPUDirect RDMA decision. */
#ifndef GPURIG_PRINT_CLUSTER_H
#define GPURIG_PRINT_CLUSTER_H

#include <stdio.h>

#include <jansson.h>

#include "analysis/cluster.h"

/* The section `topo` and `report --verbose` print ("Cluster: ..."). */
void gr_print_cluster(FILE *out, const struct gr_cluster_prediction *c);
/* The two lines of the one-screen report. */
void gr_print_cluster_brief(FILE *out, const struct gr_cluster_prediction *c);
/* The JSON object "cluster" (docs/json.md); a new reference. */
json_t *gr_cluster_to_json(const struct gr_cluster_prediction *c);

#endif
