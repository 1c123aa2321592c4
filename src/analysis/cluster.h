/* Beyond one machine: a cluster of identical nodes (a rig's `nodes`,
 * `fabric`, `peermem`, `gdr-level`; model/topo.h's struct gr_cluster) and
 * what NCCL does across them: the GPUDirect RDMA decision (NCCL's
 * ncclTopoCheckGdr), each node's NIC rate after its PCIe slots, and the
 * inter-node ring all-reduce as nccl-tests reports its busbw.
 *
 * Ownership: gr_cluster_predict fills a caller-owned struct with no pointers
 * to free; its strings are arrays, its model name points into the facts. */
#ifndef GPURIG_CLUSTER_H
#define GPURIG_CLUSTER_H

#include <stdbool.h>
#include <stddef.h>

#include "analysis/analysis.h"
#include "analysis/predict.h"
#include "model/topo.h"

struct gr_cluster_verdict {
  const char *workload;  /* "tensor parallel", "pipeline across nodes", "data parallel across nodes" (static) */
  enum gr_rating rating;
  char reason[320];
};

struct gr_cluster_prediction {
  int nodes;                 /* >= 1 */
  int gpus_per_node;
  size_t nics;               /* NIC ports per node the prediction counts (RDMA ones, else all) */
  bool rdma;                 /* those ports do RDMA (else NCCL's socket transport) */
  char nic_model[96];        /* the first counted NIC's model as the input names it */
  double port_gbit;          /* its port rate in Gb/s, 0 unknown */
  double nic_gbps;           /* per node, GB/s per direction: the ports' line rate, each device's PCIe slot
                                and (without GPUDirect RDMA) the GPUs' host links as the bound; 0 unknown */
  double port_gbps;          /* per node: the ports' line rate alone */
  char nic_bound[200];       /* what bounds nic_gbps, in words */
  int gdr_gpus;              /* GPUs for which NCCL would use GPUDirect RDMA */
  bool gdr;                  /* every GPU (GDR for both directions where gdr_read) */
  bool gdr_read;             /* sends too: NCCL disables GDR reads before Ampere without NVLink */
  char gdr_why[320];         /* the decision in words, with NCCL's rule */
  int gdr_level;             /* the level NCCL allows (analysis levels: GR_LVL_PXB by default) */
  double oversubscription;   /* the fabric's, 1 non-blocking */
  const char *fabric;        /* "switch", "fat-tree" (static) */
  double intra_busbw_gbps;   /* the node's own all-reduce (predict.h's NCCL default), 0 unknown */
  double inter_busbw_gbps;   /* the network's share: nic_gbps x net_ring_eff / oversubscription */
  double busbw_gbps;         /* the ring over every GPU of every node: the lower of the two; 0 unknown */
  double scaling;            /* busbw / the node's own: what an all-reduce keeps when it leaves the node */
  struct gr_cluster_verdict verdicts[3];
  size_t nverdicts;
};

/* Predicts the cluster of c (nodes overrides c->nodes when > 0; c may be
 * NULL for a machine with no `nodes` statement, which then counts as one
 * node with NCCL's defaults: a switch, nvidia_peermem loaded). */
void gr_cluster_predict(const struct gr_topo *t, const struct gr_analysis *a, const struct gr_prediction *p,
                        const struct gr_cluster *c, int nodes, struct gr_cluster_prediction *out);

/* The NIC catalog (data/nics.tsv): the row of a model (the longest name or
 * alias it starts with), NULL when the catalog does not know it. The row
 * lives as long as the facts. */
struct gr_nics_row;
const struct gr_nics_row *gr_nic_catalog_find(const char *model);

#endif
