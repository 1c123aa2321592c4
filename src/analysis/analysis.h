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

#include "facts/facts.h"
#include "model/finding.h"
#include "model/topo.h"
#include "base/util.h"

/* nvidia-smi topo -m levels, nearest first (NVML nvmlGpuTopologyLevel_t plus
 * NVLink and self). */
enum gr_level {
  GR_LVL_X,    /* self */
  GR_LVL_GPULINK,   /* bonded NVLinks (NV#) */
  GR_LVL_PIX,  /* at most a single PCIe bridge (one switch) */
  GR_LVL_PXB,  /* multiple PCIe bridges, no host bridge */
  GR_LVL_PHB,  /* through one PCIe host bridge */
  GR_LVL_NODE, /* different host bridges, same NUMA node */
  GR_LVL_SYS,  /* different NUMA nodes (SMP interconnect) */
};

/* What bounds a path's bandwidth. */
enum gr_via { GR_VIA_NONE, GR_VIA_PCIE, GR_VIA_GPULINK, GR_VIA_SOCKET };

struct gr_path {
  enum gr_level level;
  int gpulinks;            /* for GR_LVL_GPULINK */
  bool xgmi;              /* GR_LVL_GPULINK between AMD GPUs: xGMI (Infinity Fabric), printed XGMI as
                             rocm-smi --showtopo prints it, not NV# */
  bool nv_inferred;       /* NV joined only through an inferred NVSwitch fabric (model/topo.h) */
  bool p2p_capable;       /* GPUs, driver and platform allow P2P here (NVLink, or PCIe P2P at some
                             NCCL_P2P_LEVEL); false: every byte goes through host memory */
  enum gr_level nccl;     /* NCCL's view: NODE folds into PHB; NV = NVL; a pair that cannot do P2P
                             takes the host path (PHB, or SYS across NUMA nodes) */
  bool nccl_p2p;          /* NCCL would use P2P on this path by default (whole-machine communicator) */
  enum gr_via via;
  int bottleneck;         /* pci index whose upstream link is narrowest (PCIe), else -1 */
  int top;                /* where its PCIe way turns: the common ancestor, -1 when it climbs to the
                             host bridges (different ones, or the host path); the links below it on
                             both ways are the path's */
  double bw_gbps;         /* theoretical per direction at the bottleneck, 0 unknown */
  double nccl_bw_gbps;    /* NCCL's figure for the same, 0 unknown */
};

/* What the analysis assumes beyond the topology. */
struct gr_analysis_opts {
  struct gr_nccl_version nccl; /* whose defaults NCCL's view follows; major 0: the newest release
                                  data/nccl-p2p.tsv was checked against (gr_nccl_newest) */
};

/* What joins a hive's GPUs: the worst of the pairs that join it (a V100
 * hybrid cube mesh is joined by NVLink alone, though some of its pairs
 * meet over PCIe). */
enum gr_hive_kind {
  GR_HIVE_ALONE,    /* one GPU */
  GR_HIVE_GPULINK,   /* joined by NVLink */
  GR_HIVE_SWITCH,   /* worst joining pair PIX: one PCIe switch */
  GR_HIVE_SWITCHES, /* worst joining pair PXB: several PCIe switches */
};

struct gr_hive {
  enum gr_hive_kind kind;
  enum gr_level worst;      /* its worst pair's level (X for one GPU) */
  size_t ngpus;
  bool xgmi;                /* its GPU links are xGMI (its GPUs are AMD's): gr_hive_name */
};

/* A PCIe link that holds GPU pairs below the best pair's bandwidth: it is on
 * each pair's path and runs at the pair's rate (a pair held by two equal
 * links, each GPU's own, is held by both). */
/* Some of a bottleneck's GPU pairs: the pairs x < y with x of class
 * from_class and y of class to_class (each unordered pair of classes is
 * two such groups, one per index order); where gpu >= 0, only those whose
 * x (gpu_high: whose y) is that GPU: a link of a GPU's own holds its pairs
 * alone. */
struct gr_pair_group {
  int from_class, to_class, gpu;
  bool gpu_high;
  size_t npairs;
};

struct gr_bottleneck {
  int node;                 /* pci index below the link */
  double gbps, nccl_gbps;   /* the link's (gr_link_facts) */
  size_t npairs;            /* the GPU pairs it holds (gr_bottleneck_pairs lists them) */
  size_t ngroups, cap_groups;
  struct gr_pair_group *groups; /* its pairs by class: a link can hold n^2/4 pairs, so they are kept by
                                   pair of classes (at most classes^2 + n groups), not one by one */
};

struct gr_gpu_chains; /* analysis_internal.h */

struct gr_analysis {
  const struct gr_topo *t;
  size_t ngpus, nnics;
  /* The GPU pair matrix, one path per ordered pair of classes (read it
   * through gr_gpu_path, which renames the GPUs' own bridges): at 512 GPUs
   * of 64 switches, 4,096 paths, not 262,144 */
  struct gr_path *class_path; /* nclasses x nclasses: from a GPU of the first to one of the second */
  int *class_rep;           /* 2 per class pair: the GPUs its path was walked for, -1 where there is none
                               (a class of one GPU with itself) */
  size_t *class_below;      /* per class pair (c, d): how many GPU pairs x < y have x of c and y of d */
  struct gr_path *gpu_nic;  /* ngpus x nnics */
  /* GPU classes: GPUs that hang from the same attachment the same way (the
   * same switch or bridge, model, NUMA node, NVSwitch fabric and links), so
   * that every pair between two classes has the same level, P2P support and
   * bandwidths (analysis/classes.c). A GPU with a link of its own to another
   * GPU (NVLink mesh or bridge) is a class of its own. Numbered by first
   * member: GPU0 is in class 0. */
  int *gpu_class;           /* per GPU: its class */
  size_t nclasses;
  size_t *class_start;      /* per class and one past: where its members start in class_gpus */
  int *class_gpus;          /* the members of each class in GPU order, class after class */
  struct gr_gpu_chains *chains; /* each GPU's own bridges, for gr_class_rename (classes.c) */
  int *hive;                /* per GPU: hive number, 0-based */
  size_t nhives;             /* hives: GPUs that talk P2P without crossing the CPU (NVLink, switches) */
  bool cpu_amd;             /* an AMD CPU: it forwards P2P between its sockets */
  const char *cpu_class;    /* the CPU as NCCL's rule names it: "amd", "intel", "intel-bdw", "zhaoxin",
                               "arm" or "other" (static) */
  bool cpu_vendor_known;    /* the input names the CPU's vendor */
  struct gr_nccl_version nccl_version; /* the NCCL whose defaults NCCL's view follows */
  bool nccl_assumed;        /* gpurig's default version, not one the user named */
  const struct gr_nccl_rule *nccl_rule; /* NCCL's P2P rule for a communicator of every GPU (the facts') */
  enum gr_level nccl_p2p_level; /* NCCL default P2P level for a communicator of every GPU */
  double socket_nccl_gbps;  /* NCCL's inter-socket figure for this machine, 0 unknown */
  const char *socket_link;  /* its name ("UPI"), owned by the topology or the facts; may be NULL */
  /* NVSwitches on the bus but neither NVLink recorded nor a fabric inferred
   * (the GPUs' link counts unknown): every GPU figure is PCIe only, so the
   * predictions withhold their verdicts and say so. */
  bool gpulink_unrecorded;
  struct gr_link_facts *link; /* per pci node (t->npci): the link above it (gr_link_facts) */
  struct gr_hive *hives;    /* nhives: what joins each */
  /* NVLink between GPUs, ngpus x ngpus (per GPU for the fabric): the one
   * NVLink pair matrix, which the levels and the predictions read */
  int *nv_links;            /* NVLinks joining a pair, direct or through a fabric (the member with
                               fewer links into it bounds it) */
  double *nv_gbps;          /* their GB/s per direction, the same way */
  bool *nv_inferred;        /* joined only through an inferred fabric */
  double *nv_direct_gbps;   /* direct GPU-to-GPU links only */
  double *nv_fabric_gbps;   /* per GPU: its links into NVSwitch fabrics, all together */
  /* Bottlenecks: what holds GPU pairs below the best pair */
  double best_pair_gbps;    /* the best pair's theoretical GB/s, 0 unknown */
  struct gr_bottleneck *bottlenecks; /* in pci order */
  size_t nbottlenecks;
  bool socket_bottleneck;   /* the inter-socket link holds pairs below the best pair (NCCL's figures,
                               which count it; the theoretical ones leave it out) */
  struct gr_findings findings; /* about the wiring: info and warn only (model/finding.h) */
};

/* Fills *a from *t (the facts must be loaded), with NCCL's defaults of
 * o->nccl (o NULL: gpurig's default version). gr_analyze is the same with
 * o NULL. A version older than data/nccl-p2p.tsv covers is the caller's
 * to refuse (gr_nccl_p2p_rule returns NULL for it); it gets the oldest. */
void gr_analyze_with(const struct gr_topo *t, const struct gr_analysis_opts *o, struct gr_analysis *a);
void gr_analyze(const struct gr_topo *t, struct gr_analysis *a);
void gr_analysis_free(struct gr_analysis *a);

/* NCCL's default P2P level (and the rule behind it, when rule is not NULL)
 * for a communicator of ngpus of this machine's GPUs: NCCL counts the GPUs
 * in the communicator, not in the machine (a tensor-parallel group of 2 on
 * an AMD machine with 8 GPUs gets SYS from NCCL 2.23 on). */
enum gr_level gr_nccl_p2p_level_for(const struct gr_analysis *a, size_t ngpus, const struct gr_nccl_rule **rule);
/* Which defaults NCCL's view follows, for the outputs: "NCCL 2.23+ defaults
 * (assumed; --nccl-version to change)" or "NCCL 2.21.5 defaults". */
const char *gr_nccl_defaults_text(const struct gr_analysis *a, char *buf, size_t cap);
/* Why NCCL's default level is what it is for a communicator of ngpus GPUs:
 * "AMD CPU, more than 2 GPUs in the communicator", "Intel CPU", ... */
const char *gr_nccl_why(const struct gr_analysis *a, size_t ngpus, char *buf, size_t cap);
/* NCCL's bandwidth figure for NVLinks between GPUs x and y (pci indices):
 * links x its per-link figure for the lower compute capability; 0 unknown. */
double gr_nccl_gpulink_gbps(const struct gr_topo *t, int x, int y, int links);

/* "NVLink", "PCIe switch", "PCIe switches", "alone" (static). */
const char *gr_hive_kind_name(enum gr_hive_kind k);
/* Hive h's kind in words: gr_hive_kind_name's, but "xGMI" for a hive joined
 * by AMD's GPU links (static). */
const char *gr_hive_name(const struct gr_analysis *a, size_t h);
/* The GPU link family of a GPU-link path: "xGMI" between AMD GPUs, else
 * "NVLink" (static). */
const char *gr_gpulink_name(const struct gr_path *p);
/* The same for JSON: "nvlink", "pcie_switch", "pcie_switches", "alone". */
const char *gr_hive_kind_key(enum gr_hive_kind k);
/* The bottleneck entry of pci node idx, or NULL when its link holds no pair. */
const struct gr_bottleneck *gr_bottleneck_of(const struct gr_analysis *a, int idx);

/* Legend string for a path as nvidia-smi prints it ("X", "NV6", "PIX", ...). */
const char *gr_level_str(const struct gr_path *p, char *buf, size_t cap);
/* NCCL path type name ("NVL", "PIX", "PXB", "PHB", "SYS", "LOC"). */
const char *gr_nccl_level_str(enum gr_level l);
/* A pair's path type as the library that runs it names it: NCCL's, or
 * "XGMI" for an xGMI pair, as RCCL names its PATH_NVL (static). */
const char *gr_nccl_path_str(const struct gr_path *p);
const char *gr_level_name(enum gr_level l);

/* Which end of a PCIe link does not report its maxima. */
enum gr_link_unknown {
  GR_LINK_ENDS_KNOWN,     /* both ends report their maximum generation and width */
  GR_LINK_DEVICE_UNKNOWN, /* the device's maxima are unknown: the port's bound the link */
  GR_LINK_PORT_UNKNOWN,   /* the port's maxima are unknown: the device's bound the link */
  GR_LINK_BOTH_UNKNOWN,   /* neither: only what it runs at now (or hwloc's recorded rate) */
};

/* The facts of the PCIe link above one node, computed once per node by the
 * analysis (gr_analysis.link) with one rule for an unknown end: the known
 * end's maximum bounds the link (per figure, generation and width apart).
 * Every printer, the sampler, the predictions and doctor read these; 0 means
 * unknown throughout. */
struct gr_link_facts {
  bool present;            /* the node has a link of its own to a port (gr_pci.has_link): only then
                              are there rates and a label; the other figures are filled for every
                              node that reports them (a switch's downstream ports report its
                              internal link, which the sampler watches) */
  int cur_gen, cur_width;  /* what it runs at now (the generation drops at idle) */
  int max_gen, max_width;  /* the device's end */
  int port_gen, port_width; /* the parent port's end */
  int can_gen, can_width;  /* what both ends support: the lower of the two maxima, the known one's
                              where one end is unknown */
  int gen, width;          /* what it trains to: can_gen (cur_gen where no maximum is known), and
                              can_width limited by the current width (width does not drop at idle) */
  double gbps;             /* theoretical per direction at gen x width, else hwloc's recorded rate */
  double nccl_gbps;        /* NCCL's figure for the same */
  bool width_short;        /* runs narrower than both ends support */
  bool gen_short;          /* runs slower than both ends support (GPUs do so at idle) */
  bool slot_width;         /* the port (slot, riser) is narrower than the device */
  bool slot_gen;           /* the port is an older generation than the device */
  bool gen_idle;           /* gen_short at the generation idle GPUs park at (data/health.tsv gen1_idle_gen) */
  enum gr_link_unknown unknown;
};
/* The one rule: fills *f for the link above p. The analysis stores it per node; callers without an analysis (a
 * bench, a plan) call it directly. */
void gr_link_facts(const struct gr_pci *p, struct gr_link_facts *f);
/* f->gbps and f->nccl_gbps of gr_link_facts, for callers that want one figure. */
double gr_link_bw_gbps(const struct gr_pci *p);
double gr_link_nccl_gbps(const struct gr_pci *p);

/* How gr_link_label words a link (flags, or'ed). */
enum {
  GR_LABEL_NOW = 1,     /* "Gen1/Gen4 x8/x16": what it runs at now beside what both ends support */
  GR_LABEL_CAPABLE = 2, /* "Gen4 x8 (capable of x16)": a width below what both ends support said so */
  GR_LABEL_RATE = 4,    /* ", 31.5 GB/s" after it, or the rate alone where gen and width are unknown */
  GR_LABEL_DOT = 8,     /* " · 31.5 GB/s" (the diagram's edge label) instead of ", 31.5 GB/s" */
};
/* The one "GenN xW" label of a link: "Gen4 x16" as it trains; "" where
 * nothing is known. Returns buf. */
const char *gr_link_label(const struct gr_link_facts *f, unsigned flags, char *buf, size_t cap);

/* The one severity of a link's width and generation facts, for every
 * command; loaded: the GPUs are known to be busy (doctor --loaded). */
enum gr_sev gr_link_width_sev(const struct gr_link_facts *s);
enum gr_sev gr_link_gen_sev(const struct gr_link_facts *s, bool loaded);

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

/* Pci node `node` on a path between GPUs ri and rj, renamed to the same
 * place on GPUs i and j (ri and i of one class, rj and j of one class): a
 * node of ri's or rj's own bridges becomes i's or j's; any other node is
 * itself. What is computed once per pair of classes is copied this way. */
int gr_class_rename(const struct gr_analysis *a, int node, size_t ri, size_t rj, size_t i, size_t j);

/* The GPU (index) whose own bridges hold pci node `node` (classes.c), -1
 * none: a path's bottleneck there is that GPU's and differs from pair to
 * pair of the same classes. */
int gr_node_owner(const struct gr_analysis *a, int node);

/* The path from GPU i to GPU j (GPU indices). Every reader of the GPU pair
 * matrix goes through this: the analysis keeps one path per pair of GPU
 * classes and renames it here (gr_class_rename), so that nothing costs n^2
 * until something reads n^2 pairs. */
struct gr_path gr_gpu_path(const struct gr_analysis *a, size_t i, size_t j);

/* The pair of GPUs that stands for classes c and d (class indices): every
 * pair of distinct GPUs, one of each, has its level, P2P support and
 * bandwidths. False where there is none (a class of one GPU with itself). */
bool gr_class_pair_rep(const struct gr_analysis *a, size_t c, size_t d, size_t *i, size_t *j);

/* The GPU pairs x < y by class: for each ordered pair of classes (c, d)
 * that holds some (x of c, y of d, x < y), fn gets the path x -> y (alike
 * for all of them but the GPUs' own bridges), c, d and how many pairs. So a
 * count over the matrix's upper triangle costs classes^2, not n^2. */
typedef void (*gr_pair_class_fn)(void *ctx, const struct gr_path *p, size_t c, size_t d, size_t npairs);
void gr_each_pair_class(const struct gr_analysis *a, gr_pair_class_fn fn, void *ctx);

/* Whether some pair of distinct GPUs can do P2P at some level. */
bool gr_any_p2p_pair(const struct gr_analysis *a);

/* The same walked afresh for this pair, not copied from its class pair's
 * (for tests that hold gr_gpu_path to it). */
struct gr_path gr_gpu_path_walked(const struct gr_analysis *a, size_t i, size_t j);

/* Up to max of bottleneck b's GPU pairs (b->npairs in all; x < y, in matrix
 * order: by x, then y) into out (2 ints each); returns how many it wrote.
 * The caller owns out. */
size_t gr_bottleneck_pairs(const struct gr_analysis *a, const struct gr_bottleneck *b, int *out, size_t max);

/* Path between two pci nodes (exposed for tests). */
struct gr_path gr_path_between(const struct gr_analysis *a, int x, int y);

#endif
