/* What analysis.c, analysis_findings.c, pairs.c and classes.c share: the
 * helpers one calls in another. Only they and predict.c (the GPU chains,
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

/* pairs.c: the GPU pair matrix kept per pair of classes, the hives and the
 * bottlenecks (each computed per pair of classes) */
void gpu_paths(struct gr_analysis *a);
void find_hives(struct gr_analysis *a);
void find_bottlenecks(struct gr_analysis *a);

/* analysis.c */
/* The path from pci node x to y, walked (nvlink: NVLink counts). */
struct gr_path path_between(const struct gr_analysis *a, int x, int y, bool nvlink);
/* GPUs gi and gj both ways at once: *xy from gi to gj, *yx back. */
void gpu_pair_paths(const struct gr_analysis *a, const bool *p2p, size_t gi, size_t gj, struct gr_path *xy,
                    struct gr_path *yx);
void add_finding(struct gr_analysis *a, enum gr_sev sev, const char *id, int node, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
void socket_link(struct gr_analysis *a);
bool gpu_p2p(const struct gr_pci *g);
enum gr_level nccl_of(enum gr_level l);

#endif
