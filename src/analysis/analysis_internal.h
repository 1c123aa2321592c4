/* What analysis.c and analysis_findings.c share: the helpers one calls in
 * the other. Only those two files include it. */
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

/* analysis.c */
void add_finding(struct gr_analysis *a, enum gr_sev sev, const char *id, int node, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
void socket_link(struct gr_analysis *a);
bool gpu_p2p(const struct gr_pci *g);
enum gr_level nccl_of(enum gr_level l);

#endif
