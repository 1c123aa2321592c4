/* What analysis.c and analysis_findings.c share: the helpers one calls in
 * the other. Only those two files, classes.c and predict.c (the GPU chains,
 * for renaming copied hops) include it. */
#ifndef GR_ANALYSIS_ANALYSIS_INTERNAL_H
#define GR_ANALYSIS_ANALYSIS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "analysis/analysis.h"

/* analysis_findings.c */
void link_findings(struct gr_analysis *a);
void locality_findings(struct gr_analysis *a);
void hive_findings(struct gr_analysis *a);
void nccl_findings(struct gr_analysis *a);
void nic_findings(struct gr_analysis *a);
void data_findings(struct gr_analysis *a);

/* classes.c: each GPU's own chain (the GPU and the bridges above it that
 * lead to no other GPU), for renaming a class pair's path to another pair
 * of the same classes. Arrays owned by the struct: gpu_chains_free. */
struct gr_gpu_chains {
  int *off;   /* per GPU (and one past): where its chain starts in nodes */
  int *nodes; /* the chains, each from the GPU up */
  int *owner; /* per pci node: the GPU whose chain holds it, -1 none */
  int *pos;   /* per pci node in a chain: its position there */
};
/* Fills a->gpu_class, nclasses, class_start and class_gpus, and *c. */
void gpu_classes(struct gr_analysis *a, struct gr_gpu_chains *c);
void gpu_chains_free(struct gr_gpu_chains *c);

/* analysis.c */
void add_finding(struct gr_analysis *a, enum gr_sev sev, const char *id, int node, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
void socket_link(struct gr_analysis *a);
bool gpu_p2p(const struct gr_pci *g);
enum gr_level nccl_of(enum gr_level l);

#endif
