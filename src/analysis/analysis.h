/* The one analysis module: everything derived from a topology model. Every
 * command that needs path levels, hives, bandwidths or findings calls this.
 *
 * Ownership: gr_analyze fills a struct gr_analysis that owns its arrays;
 * free with gr_analysis_free. It keeps a pointer to the topology, which must
 * outlive it. */
#ifndef GPURIG_ANALYSIS_H
#define GPURIG_ANALYSIS_H

#include <stdbool.h>
#include <stddef.h>

#include "model/finding.h"
#include "model/topo.h"
#include "base/util.h"

/* nvidia-smi topo -m levels, nearest first (NVML nvmlGpuTopologyLevel_t plus
 * NVLink and self). */
enum gr_level {
  GR_LVL_X,    /* self */
  GR_LVL_NV,   /* bonded NVLinks (NV#) */
  GR_LVL_PIX,  /* at most a single PCIe bridge (one switch) */
  GR_LVL_PXB,  /* multiple PCIe bridges, no host bridge */
  GR_LVL_PHB,  /* through one PCIe host bridge */
  GR_LVL_NODE, /* different host bridges, same NUMA node */
  GR_LVL_SYS,  /* different NUMA nodes (SMP interconnect) */
};

/* What bounds a path's bandwidth. */
enum gr_via { GR_VIA_NONE, GR_VIA_PCIE, GR_VIA_NVLINK, GR_VIA_SOCKET };

struct gr_path {
  enum gr_level level;
  int nvlinks;            /* for GR_LVL_NV */
  bool nv_inferred;       /* NV joined only through an inferred NVSwitch fabric (model/topo.h) */
  enum gr_level nccl;     /* NCCL's view: NODE folds into PHB; NV = NVL */
  bool nccl_p2p;          /* NCCL would use P2P on this path by default */
  enum gr_via via;
  int bottleneck;         /* pci index whose upstream link is narrowest (PCIe), else -1 */
  double bw_gbps;         /* theoretical per direction at the bottleneck, 0 unknown */
  double nccl_bw_gbps;    /* NCCL's figure for the same, 0 unknown */
};

struct gr_analysis {
  const struct gr_topo *t;
  size_t ngpus, nnics;
  struct gr_path *gpu_gpu;  /* ngpus x ngpus */
  struct gr_path *gpu_nic;  /* ngpus x nnics */
  int *hive;                /* per GPU: hive number, 0-based */
  size_t nhives;
  bool cpu_amd;             /* NCCL's AMD exception applies to the CPU vendor */
  enum gr_level nccl_p2p_level; /* NCCL default P2P level on this machine */
  double socket_nccl_gbps;  /* NCCL's inter-socket figure for this machine, 0 unknown */
  const char *socket_link;  /* its name ("UPI"), owned by the topology or the facts; may be NULL */
  struct gr_findings findings; /* about the wiring: info and warn only (model/finding.h) */
};

/* Fills *a from *t (the facts must be loaded). */
void gr_analyze(const struct gr_topo *t, struct gr_analysis *a);
void gr_analysis_free(struct gr_analysis *a);

/* Legend string for a path as nvidia-smi prints it ("X", "NV6", "PIX", ...). */
const char *gr_level_str(const struct gr_path *p, char *buf, size_t cap);
/* NCCL path type name ("NVL", "PIX", "PXB", "PHB", "SYS", "LOC"). */
const char *gr_nccl_level_str(enum gr_level l);
const char *gr_level_name(enum gr_level l);

/* How the link above a node falls short of what both ends support; shared by
 * the topology findings and doctor's link checks. */
struct gr_link_shortfall {
  int can_gen, can_width;  /* lower of both ends' maxima, 0 unknown */
  bool width_short;        /* runs narrower than both ends support */
  bool gen_short;          /* runs slower than both ends support (GPUs do so at idle) */
  bool slot_width;         /* the port (slot, riser) is narrower than the device */
  bool slot_gen;           /* the port is an older generation than the device */
  bool gen_idle;           /* gen_short at the generation idle GPUs park at (data/health.tsv gen1_idle_gen) */
};
void gr_link_shortfall(const struct gr_link *l, struct gr_link_shortfall *s);
/* The one severity of a link's width and generation facts, for every
 * command; loaded: the GPUs are known to be busy (doctor --loaded). */
enum gr_sev gr_link_width_sev(const struct gr_link_shortfall *s);
enum gr_sev gr_link_gen_sev(const struct gr_link_shortfall *s, bool loaded);

/* The link between a device and host memory: the narrowest link on its way
 * up to the host bridge, as it trains now and as both ends could run it. */
struct gr_host_link {
  int bottleneck;          /* pci index whose upstream link is narrowest now, -1 unknown */
  int gen, width;          /* that link as it trains (gen at its maximum, width as now) */
  int can_gen, can_width;  /* the narrowest link with both ends at their maxima */
  double bw_gbps;          /* per direction as it trains, 0 unknown */
  double can_gbps;         /* per direction at both ends' maxima, 0 unknown */
  double nccl_gbps;        /* NCCL's figure for the bottleneck, 0 unknown */
};
void gr_host_link(const struct gr_topo *t, int node, struct gr_host_link *h);

/* Path between two pci nodes (exposed for tests). */
struct gr_path gr_path_between(const struct gr_analysis *a, int x, int y);

#endif
