/* Predictions on top of the analysis: what the wiring will deliver before
 * anyone measures it. P2P matrix, ring all-reduce bus bandwidth, switch lane
 * budgets, NIC and NVMe placement, and verdicts per workload. The constants
 * come from data/calibration.tsv (docs/predict.md gives their sources).
 *
 * Ownership: gr_predict fills a struct gr_prediction that owns its arrays
 * (gr_predict_groups adds one more); free with gr_prediction_free. It points
 * at the topology and analysis, which must outlive it. */
#ifndef GPURIG_PREDICT_H
#define GPURIG_PREDICT_H

#include <stdbool.h>
#include <stddef.h>

#include "analysis/analysis.h"
#include "model/topo.h"
#include "base/util.h"

/* How one GPU's data reaches another. */
enum gr_xfer { GR_XFER_GPULINK, GR_XFER_P2P, GR_XFER_HOST };

struct gr_pair_predict {
  bool p2p_capable;      /* GPUs, driver and platform allow direct P2P (NVLink or PCIe): the analysis's */
  enum gr_xfer nccl;     /* what NCCL does with its defaults (a communicator of every GPU) */
  enum gr_xfer best;     /* what it can do with NCCL_P2P_LEVEL set high enough */
  double gbps;           /* predicted one-way copy rate with `best`, GB/s */
};

/* What bounds a ring all-reduce. */
enum gr_bound_kind {
  GR_BOUND_NONE,     /* nothing known (no rates, or fewer than 2 GPUs) */
  GR_BOUND_LINK,     /* a PCIe link (node) */
  GR_BOUND_SOCKET,   /* the inter-socket link */
  GR_BOUND_HOST_MEM, /* host memory, for host-staged hops */
  GR_BOUND_GPULINK,   /* one NVLink hop of a mixed ring */
  GR_BOUND_GPULINK_RINGS, /* an all-NVLink set: each GPU's NVLink bandwidth to the others */
  GR_BOUND_NVLS,     /* an all-NVLink set on an NVLink SHARP fabric, where NVLS is faster */
};

struct gr_ring_bound {
  enum gr_bound_kind kind;
  int node;          /* GR_BOUND_LINK: the pci index below the link; -1 otherwise */
  double gbps;       /* the resource's raw GB/s per direction: the link's, NCCL's inter-socket
                        figure, host memory's, the NVLink hop's, or (NVLink sets) the least any
                        GPU of the set has to the others, before calibration */
  int hops;          /* ring hops sharing it (host memory: host-staged hops, each written and read) */
  bool down;         /* GR_BOUND_LINK: the hops cross it downward (else upward) */
  enum gr_xfer xfer; /* GR_BOUND_LINK: peer-to-peer or staged through host memory */
  bool singled_out;  /* GR_BOUND_LINK: a switch uplink, or a link slower than the fastest GPU's own:
                        one link a picture can mark without singling out a GPU no different */
};

/* One ring all-reduce prediction. */
struct gr_ring {
  double busbw_gbps;     /* nccl-tests' bus bandwidth, large messages */
  int *order;            /* GPU indices in ring order (ngpus of them) */
  size_t nhops_p2p, nhops_host, nhops_gpulink;
  struct gr_ring_bound bound; /* what bounds it (gr_ring_bound_text words it) */
  double ring_busbw_gbps; /* all-NVLink sets: the rings alone; 0 otherwise */
  double nvls_busbw_gbps; /* all on one NVLink SHARP fabric with NCCL 2.17+: NVLS; 0 otherwise. The larger
                             of the two is busbw_gbps: NCCL picks NVLS for large all-reduces where it runs */
};

enum gr_rating { GR_RATE_GOOD, GR_RATE_FAIR, GR_RATE_POOR };

struct gr_verdict {
  const char *workload;  /* "training", "tensor-parallel inference", "independent jobs" */
  int gpus;              /* how many GPUs it spans */
  enum gr_rating rating;
  char *reasons;         /* plain sentences */
};

struct gr_switch_budget {
  int node;              /* upstream port index */
  int lanes;             /* the chip's lanes, 0 unknown */
  int down_lanes;        /* lanes of its downstream links in use */
  int up_lanes;
  double oversubscription; /* down / up */
  int gpus, nvme, nics;  /* devices below it */
};

struct gr_prediction {
  const struct gr_topo *t;
  const struct gr_analysis *a;
  size_t ngpus;
  struct gr_pair_predict *pairs; /* ngpus x ngpus */
  struct gr_ring nccl_default;   /* with NCCL's defaults (the analysis's NCCL version; the headline) */
  struct gr_ring best;           /* with NCCL_P2P_LEVEL raised where that is faster (an option beside it) */
  bool best_needs_p2p_level;     /* best differs from the default setting */
  const char *best_p2p_level;    /* the NCCL_P2P_LEVEL it needs ("PHB", "SYS"), static */
  int largest_p2p_domain;        /* P2P groups: GPUs that reach each other by P2P without crossing a
                                    socket (hives joined through a root complex); each hive lies in one */
  size_t ndomains;
  struct gr_switch_budget *switches;
  size_t nswitches;
  struct gr_verdict *verdicts;
  size_t nverdicts;
  double *group_busbw_gbps;      /* [k]: best ring of k GPUs (nearest groups) with NCCL's defaults for a
                                    communicator of k GPUs, k = 2 .. ngpus-1 (at most 64); 0 elsewhere.
                                    NULL until gr_predict_groups */
  double *group_busbw_raised_gbps; /* [k]: the same with NCCL_P2P_LEVEL raised, 0 where that buys nothing */
  const char **group_p2p_level;  /* [k]: the NCCL_P2P_LEVEL that takes ("PHB"), static; NULL where none */
  struct gr_findings notes;      /* placement notes (a switch's shared uplink, NICs for GPUDirect RDMA,
                                    NVMe beside GPUs, no verdicts without the GPU links): info findings
                                    "predict.*", the one finding type (model/finding.h) */
};

/* What the prediction says of the copy from GPU i to GPU j (GPU indices).
 * Every reader goes through this: the figures are alike for every pair of
 * the same two GPU classes, and are kept once per pair of classes. Points
 * into *p. */
const struct gr_pair_predict *gr_pair_at(const struct gr_prediction *p, size_t i, size_t j);

/* Fills *p from the topology and its analysis (the facts must be loaded). */
void gr_predict(const struct gr_topo *t, const struct gr_analysis *a, struct gr_prediction *p);
/* Fills p->group_busbw_gbps (replacing any earlier one) on a prediction that
 * gr_predict filled, from its p->t and p->a. Only plans read it, and it
 * costs more than all of gr_predict on larger machines, so it is asked for
 * separately (GR_MACHINE_GROUPS). */
void gr_predict_groups(struct gr_prediction *p, const size_t *sizes, size_t nsizes);
/* sizes: the group sizes wanted (nsizes of them), or NULL for every size. */
void gr_prediction_free(struct gr_prediction *p);

const char *gr_xfer_name(enum gr_xfer x);     /* "nvlink", "p2p", "host" */
/* What bounds ring r of prediction p, in words ("the GPU3 link (Gen4 x8,
 * 15.8 GB/s) carrying 2 ring hops upward, peer-to-peer"); "" for none.
 * Returns buf. */
const char *gr_ring_bound_text(const struct gr_prediction *p, const struct gr_ring *r, char *buf, size_t cap);
/* "link", "inter_socket", "host_memory", "nvlink", "nvlink_rings", "nvls"; NULL for none. */
const char *gr_bound_kind_key(enum gr_bound_kind k);
const char *gr_rating_name(enum gr_rating r); /* "good", "fair", "poor" */

#endif
