/* The one topology model. Loaders (live Linux via hwloc + sysfs, hwloc XML)
 * fill it; analysis.h derives levels, hives and bandwidths from it; the
 * printers show it.
 *
 * Ownership: a struct gr_topo owns every array and string reachable from it.
 * Free it with gr_topo_free(). Nodes refer to each other by index into
 * topo->pci (never by pointer), so arrays may grow while loading. */
#ifndef GPURIG_TOPO_H
#define GPURIG_TOPO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/conns.h"

enum gr_role {
  GR_ROLE_HOSTBRIDGE,  /* a PCI root bus (/sys/devices/pciDDDD:BB), i.e. a root complex */
  GR_ROLE_ROOTPORT,    /* bridge directly below a host bridge */
  GR_ROLE_SWITCH_UP,   /* switch upstream port: a bridge below a port, with bridges below it */
  GR_ROLE_SWITCH_DOWN, /* switch downstream port: a bridge below an upstream port */
  GR_ROLE_BRIDGE,      /* any other bridge (e.g. PCIe-to-PCI) */
  GR_ROLE_ENDPOINT,
};

enum gr_kind {
  GR_KIND_NONE,     /* bridges */
  GR_KIND_GPU,      /* a GPU: class 0302, 0300/0380/1200 from the GPU makers (NVIDIA, AMD), and the
                       accelerator rows of data/pci-devices.tsv (Hygon DCU, Intel Max) */
  GR_KIND_ACCEL,    /* another accelerator (NEC SX-Aurora 0b40, Gaudi and TPUs 12xx): its PCIe path and
                       link are judged, but it is no GPU: no NCCL, P2P or all-reduce verdicts */
  GR_KIND_NIC,      /* class 02xx; InfiniBand is 0207 */
  GR_KIND_NVME,     /* class 010802 */
  GR_KIND_NVSWITCH, /* NVIDIA bridge-class device (0680) that carries NVLink */
  GR_KIND_OTHER,
};

/* A counter the machine may or may not report: valid=false means "not
 * available", never zero. */
struct gr_count {
  bool valid;
  uint64_t value;
};

struct gr_aer {
  struct gr_count correctable, nonfatal, fatal;
};

/* What changes while a machine runs, per PCI node: the link's current
 * generation and width (0 unknown) and the AER totals (invalid: not reported). */
struct gr_pci_dynamic {
  int cur_gen, cur_width;
  struct gr_aer aer;
};

/* The PCIe link above a device (between it and its parent port). gen/width 0
 * means unknown. A link trains to the lower of both ends' maxima. */
struct gr_link {
  int cur_gen, cur_width;           /* what it runs at now (gen drops when idle) */
  int max_gen, max_width;           /* this device's capability */
  int port_max_gen, port_max_width; /* the parent port's capability (other end) */
  double recorded_gbps;             /* hwloc's rate, when gen/width were not recorded */
};

struct gr_pci {
  enum gr_role role;
  enum gr_kind kind;
  unsigned domain, bus, dev, func;  /* host bridges: domain and first bus */
  unsigned sec_bus, sub_bus;        /* bridges and host bridges: bus range below */
  unsigned class_id;                /* 24-bit: base, sub, prog-if (0x030200) */
  unsigned vendor, device, subvendor, subdevice, revision;
  char *vendor_name, *device_name;  /* may be NULL */
  char *model;                      /* GPU/NIC model from OS devices, may be NULL */
  char *uuid;                       /* may be NULL */
  char *osdevs;                     /* space-separated OS device names, may be NULL */
  char *rdma_name;                  /* the RDMA (verbs) device as NCCL_IB_HCA and nvidia-smi's NIC
                                       legend name it ("mlx5_0", EFA's "rdmap16s27"), may be NULL */
  char *cpulist;                    /* CPUs local to it ("0-23,48-71"), may be NULL */
  char *driver;                     /* may be NULL */
  int iommu_group;                  /* -1 unknown */
  int numa;                         /* NUMA node os index, -1 unknown */
  int gpu_numa;                     /* GPUs whose memory is a NUMA node of its own (POWER9 with
                                       NVLink to the CPU, Grace Hopper): that node, nvidia-smi's
                                       "GPU NUMA ID"; -1 none or unknown */
  int package;                      /* socket os index, -1 unknown */
  int parent;                       /* index in topo->pci, -1 for host bridges */
  int hostbridge;                   /* index of its host bridge (itself for one) */
  int switch_up;                    /* upstream port of the switch it is part of, -1 if none */
  bool has_link;                    /* endpoints and switch upstream ports below a port */
  bool rdma;                        /* NIC able to do RDMA (InfiniBand class, verbs device, Mellanox) */
  struct gr_link link;
  struct gr_aer aer;
  int gpu_index, nic_index;         /* position among GPUs / NICs, -1 otherwise */
  int order;                        /* the loader's rank for that numbering where bus order is not the
                                       machine's (a rig's declaration order), -1 none: bus order */
  int p2p;                          /* the driver lets this GPU do PCIe P2P: 1 yes, 0 no, -1 unknown */
  int lanes;                        /* switch upstream ports: the chip's lanes, 0 unknown */
  bool storage_nic;                 /* NICs: for storage or in-band traffic, left out of NCCL_IB_HCA (a rig's
                                       `storage`): the inter-node predictions do not count it */
  double port_gbit;                 /* NICs: the port's line rate in Gb/s as the input states it (a rig's
                                       `speed`), 0 unknown (the NIC catalog may know the model's) */
  /* The first malformed file met while reading this device's link or AER
   * attributes ("<path>: problem"), NULL if none: the values stay unknown and
   * doctor reports the check as an error naming the file. */
  char *link_problem, *aer_problem;
  /* The catalog row resolved once for a GPU (gr_topo_finish, gr_pci_set_model):
   * every pair of GPUs asks for it, and a look-up scans the catalog's rows up
   * to three times. Valid only when catalog_known; NULL when it does not know
   * the GPU. Not owned: it lives as long as the facts. */
  const struct gr_gpu_model *catalog;
  bool catalog_known;
};

struct gr_package {
  int os_index;
  int mem_channels;     /* populated channels, 0 unknown (rig files) */
  int mem_mts;          /* memory transfer rate in MT/s, 0 unknown */
  int rc_p2p;           /* the CPU forwards P2P between its root complexes: 1, 0, -1 unknown */
  uint64_t mem_bytes;   /* RAM installed on the socket as the input states it (a rig's cpu ... ram),
                           0 unknown; NUMA nodes carry what the OS reports (gr_numa.mem_bytes) */
  char *cpu_vendor; /* "GenuineIntel", "AuthenticAMD", may be NULL */
  char *cpu_model;  /* may be NULL */
  int cpu_family, cpu_model_number; /* -1 unknown */
};

struct gr_numa {
  int os_index;
  int package;  /* -1 unknown */
  uint64_t mem_bytes;
};

/* One NVLink adjacency as reported (hwloc NVLinkBandwidth matrix or NVML):
 * a and b index topo->pci; b is -1 when the peer is a CPU (POWER). */
struct gr_gpulink {
  int a, b;
  int peer_package;   /* when b == -1 */
  int count;          /* links bonded */
  double bw_gbps;     /* per direction, all links together */
};

/* Where an NVSwitch fabric's facts come from. */
enum gr_fabric_from {
  GR_FABRIC_HWLOC,    /* hwloc's NVLinkBandwidth matrix (GPU-to-NVSwitch links) */
  GR_FABRIC_NVML,     /* the NVIDIA driver (NVML), live */
  GR_FABRIC_RIG,      /* a rig file's `nvswitch` statement */
  GR_FABRIC_NCCL,     /* an NCCL topology file's nvlink elements */
  GR_FABRIC_INFERRED, /* not recorded: inferred from NVSwitch PCI devices or the GPUs' catalog rows */
};

/* One GPU's links into an NVSwitch fabric. */
struct gr_fabric_member {
  int gpu;            /* index in topo->pci */
  int links;          /* NVLinks from this GPU into the fabric */
  double gbps;        /* per direction, all its links together */
};

/* GPUs joined through NVSwitches. Every NVSwitch of a machine is one fabric
 * (DGX-2 links its two baseboards by switch-to-switch trunks that NVML and
 * hwloc never report), so what two members can use is bounded by the member
 * with fewer links into it. An input of many baseboards with no NVLink
 * recorded gets one inferred fabric per board (gr_topo_infer_fabric). */
struct gr_fabric {
  struct gr_fabric_member *members; size_t nmembers;
  int nswitches;          /* NVSwitch chips, 0 unknown */
  int gpulink_gen;         /* NVLink generation (2 V100, 3 A100, 4 H100/H200, 5 B200), 0 unknown */
  enum gr_fabric_from from;
  char *why;              /* inferred: what from, in words; NULL otherwise */
};

struct gr_topo {
  char *source_kind;  /* "live", "root", "xml", "nccl", "rig", "nvidia-smi", "rocm-smi", "amd-smi"
                         (gr_topo_input_name names it) */
  char *source_path;  /* root dir or file, may be NULL */
  char *product;      /* DMI product name, may be NULL */
  char *hostname;     /* may be NULL */
  bool link_details;  /* gen/width/AER etc. known (sysfs or a gpurig snapshot) */
  bool gpulink_ignored; /* the user asked for PCIe levels only (--pcie-only) */
  bool gpulink_none;    /* the input says the GPUs have no working NVLink beyond what it declares (a rig's
                           `nvlink none`): no fabric is inferred for them */

  struct gr_package *packages; size_t npackages;
  struct gr_numa *numas; size_t nnumas;
  struct gr_pci *pci; size_t npci, cap_pci;
  size_t pci_devices_seen;   /* PCI devices (not bridges) the machine has where the loader kept only those a
                                command needs (load/loaders.h gr_load_live_gpus); 0: the endpoints in pci */
  int *gpus; size_t ngpus;   /* indices into pci, in numbering order (gr_topo_finish) */
  int *nics; size_t nnics;
  size_t naccels;            /* accelerators that are not GPUs (GR_KIND_ACCEL) */
  struct gr_gpulink *gpulinks; size_t ngpulinks;  /* GPU-GPU and GPU-CPU links; GPU-NVSwitch links as
                                                 reported (the fabrics below are built from them) */
  struct gr_fabric *fabrics; size_t nfabrics;

  char **warnings; size_t nwarnings;  /* input problems that were survivable */
  /* What the input leaves out, one sentence each (a matrix printed by
   * nvidia-smi or rocm-smi states levels, not bus ids or link widths): the
   * analysis reports each as an info finding, so that a figure it cannot
   * give is said, never guessed. */
  char **gaps; size_t ngaps;

  /* The link between CPU sockets as the input declares it (a rig file's
   * `intersocket`), NCCL-style GB/s per direction; NULL and 0 when the input
   * does not say. Only the analysis reads it: it takes NCCL's figure for the
   * CPU (data/cpu-interconnect.tsv) where this is unknown. */
  char *socket_link;
  double socket_gbps;

  /* Set by the rig loader only (a machine described, not measured). */
  struct gr_rig_meta *rig;
  /* Several such machines joined by a network (a rig's `nodes`, `fabric`, `peermem`, `gdr-level`);
   * NULL: one machine, nothing said about a network. Owned by the topology. */
  struct gr_cluster *cluster;
};

/* How the nodes' NICs are joined. */
enum gr_net_fabric {
  GR_NET_SWITCH,   /* one non-blocking switch (or a full-bisection fabric) */
  GR_NET_FAT_TREE, /* a fat tree whose leaves are oversubscribed by `oversubscription` */
};

/* A cluster of identical nodes, each the machine the topology describes.
 * Every NIC of the topology is a NIC of every node. */
struct gr_cluster {
  int nodes;                 /* >= 1 */
  enum gr_net_fabric fabric;
  double oversubscription;   /* down:up bandwidth of a leaf switch, 1 for non-blocking */
  int peermem;               /* nvidia_peermem (or dma-buf) loaded: 1 yes, 0 no */
  int gdr_level;             /* NCCL_NET_GDR_LEVEL as an analysis level number (GR_LVL_PIX ..
                                GR_LVL_SYS of analysis.h), -1: NCCL's default (PXB) */
};

/* A power supply as a rig file states it (`psu`); what is not stated is 0
 * or NULL, unknown, never a default. */
#define GR_PSU_MAX_RAILS 16
struct gr_psu {
  char *name;
  double watts;                        /* rated DC output */
  int rails;                           /* 12 V rails, 0 unknown */
  double rail_amps[GR_PSU_MAX_RAILS];  /* each rail's over-current limit in A, when given */
  int nrail_amps;
  char *level;                         /* 80 PLUS level (data/power-psu.tsv), NULL unknown */
  double efficiency_pct;               /* a stated efficiency instead of a level, 0 unknown */
  int input_v;                         /* 120 or 230, 0 unknown */
  int line;                            /* where the rig file states it */
  bool has_feeds;                      /* `feeds` given: what it carries is what gr_rig_meta's
                                          gpu_power[].psu, cpus_psu and board_psu name */
};

/* What a rig states about one GPU's power path (`gpu ... power, riser-power,
 * limit` and the psu that `feeds` it); what a line leaves out stays unknown. */
struct gr_gpu_power {
  struct gr_conns conns;               /* the card's power inputs, n 0 not stated (data/power-gpus.tsv's
                                          reference layout may give them) */
  struct gr_conns from;                /* an adapter's PSU-side plugs into conns ("12vhpwr from 3x8pin"), n 0 none */
  int cables;                          /* PSU cables carrying its 6/8-pin plugs (a daisy chain: fewer than the
                                          plugs), 0 not said */
  bool riser;                          /* on a riser (`riser GEN WIDTH`) */
  char riser_power[8];                 /* where that riser takes the slot's power: "sata", "molex", "6pin",
                                          "8pin", "slot" (through from the board), "none"; "" not said */
  double limit_w;                      /* the power limit the rig sets on it (nvidia-smi -pl), 0 none */
  int psu;                             /* index in psus of the psu that feeds it, -1 not said */
};

/* A wall circuit (`circuit`): its volts, its breaker's amps and the PSUs on it. */
struct gr_circuit {
  char *name;
  double volts, amps;
  char *psus;                          /* "A,B": names of psu lines, NULL all of them */
  int line;
};

/* What a rig file adds beyond wiring. Owned by the topology. */
struct gr_rig_meta {
  struct gr_psu *psus;    /* `psu` lines in file order */
  size_t npsus;
  struct gr_circuit *circuits;
  size_t ncircuits;
  struct gr_gpu_power *gpu_power; /* by GPU number (gpu0, gpu1, ...: t->gpus order), ngpu_power of them */
  size_t ngpu_power;
  int cpus_psu, board_psu; /* index in psus of the psu that feeds the CPUs, the board; -1 not said */
  char *name;             /* the rig's title */
  char *file;             /* the file it came from */
  char *notes;            /* its `source` lines joined, may be NULL */
  double price;           /* whole rig as described, 0 unknown (or no longer the machine's: own_price) */
  double own_price;       /* --gpu put other cards in its slots: the price the rig states, for its own
                             cards, kept here and price set to 0, since it does not buy these; else 0 */
  char *currency;         /* "USD" ... , may be NULL */
};

void gr_topo_init(struct gr_topo *t);
void gr_topo_free(struct gr_topo *t);

/* Appends a zeroed node and returns its index. */
int gr_topo_add_pci(struct gr_topo *t);
void gr_topo_add_warning(struct gr_topo *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void gr_topo_add_gap(struct gr_topo *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void gr_topo_add_gpulink(struct gr_topo *t, int a, int b, int peer_package, int count, double bw_gbps);

/* Adds an empty fabric and returns it (valid until the next add). why is
 * copied (NULL for none). */
struct gr_fabric *gr_topo_add_fabric(struct gr_topo *t, enum gr_fabric_from from, int gpulink_gen, int nswitches,
                                     const char *why);
/* Adds links (and their GB/s per direction) from GPU gpu (a pci index) into
 * fabric f; a GPU added twice gets the sum. */
void gr_fabric_add_links(struct gr_fabric *f, int gpu, int links, double gbps);
/* The members' entry for pci index gpu, or NULL. */
const struct gr_fabric_member *gr_fabric_member_of(const struct gr_fabric *f, int gpu);
/* Turns the GPU-to-NVSwitch entries of t->gpulinks into one fabric of origin
 * `from` (when there are any and t has no fabric yet). Run after
 * gr_topo_finish, which sets the kinds. */
void gr_topo_fabric_from_gpulinks(struct gr_topo *t, enum gr_fabric_from from);
/* When the input records no NVLink at all, infers the NVSwitch fabrics the
 * GPUs sit on: from NVSwitch PCI devices on the bus, or from a catalog row
 * that says the model sits on an NVSwitch baseboard (8 or more such GPUs).
 * One fabric per baseboard (8 GPUs in bus order; 16 for NVLink 2's DGX-2
 * and HGX-2), never one across a whole input. Each member gets its catalog
 * link count and rate; each fabric is marked GR_FABRIC_INFERRED with why.
 * Does nothing when a GPU's model (and so its link count) is unknown. */
void gr_topo_infer_fabric(struct gr_topo *t);
/* Forgets every NVLink and fabric (--pcie-only: the PCIe paths under them)
 * and marks t so. */
void gr_topo_forget_gpulinks(struct gr_topo *t);
void gr_topo_free_fabrics(struct gr_topo *t); /* part of gr_topo_free */
const char *gr_fabric_from_name(enum gr_fabric_from f); /* "hwloc", "nvml", "rig", "nccl", "inferred" */

struct gr_gpu_model;
/* A GPU's catalog row (facts/catalog.h): by its model name, else its PCI
 * ids; NULL when the catalog does not know it. A GPU of a finished topology
 * answers from the row resolved then; any other device looks it up. */
const struct gr_gpu_model *gr_pci_catalog(const struct gr_pci *p);
/* Whether a GPU is AMD's: its catalog row's maker (a rig's --gpu may have
 * put another maker's card in an AMD slot), else its PCI vendor (1002). */
bool gr_pci_amd_gpu(const struct gr_pci *p);
/* How many of t's GPUs are AMD's. */
size_t gr_topo_amd_gpus(const struct gr_topo *t);
/* The collective library a job across t's GPUs runs, for the words of
 * predictions and advice: "RCCL" where every GPU is AMD's (ROCm's PyTorch
 * and the rest link RCCL, which keeps NCCL's API, path rules and NCCL_*
 * environment variables), else "NCCL" (static). */
const char *gr_topo_collective(const struct gr_topo *t);
/* Replaces a device's model name (a copy is kept; NULL clears it) and
 * resolves its catalog row again: the one way to change p->model after
 * gr_topo_finish. */
void gr_pci_set_model(struct gr_pci *p, const char *model);
/* Looks p's catalog row up now and keeps it (gr_topo_finish does it for
 * every GPU). */
void gr_pci_resolve_catalog(struct gr_pci *p);

/* Derives role, kind, switch membership, GPU/NIC numbering: run once after a
 * loader has filled nodes, classes and parents. GPUs are numbered in bus
 * order; NICs as nvidia-smi numbers them: those with an RDMA name first, in
 * the names' natural order (mlx5_2 before mlx5_10), then the rest in bus
 * order. A loader's `order` ranks either before the bus ids. */
void gr_topo_finish(struct gr_topo *t);

/* Classification by PCI class code and vendor. */
/* A device's kind from its ids: the rows of data/pci-devices.tsv first
 * (display-only chips that carry a GPU class, accelerators in a display
 * class), then the class code. */
enum gr_kind gr_kind_from_ids(unsigned class_id, unsigned vendor, unsigned device);

/* What t was read from, as a noun for sentences and the machine line: "this
 * machine", "gathered tree", "hwloc XML", "NCCL topology file", "rig file",
 * "nvidia-smi topo -m output", "rocm-smi topology output". Static. */
const char *gr_topo_input_name(const struct gr_topo *t);
/* Whether t was read from a file (hwloc XML, NCCL topology file, rig, a saved
 * nvidia-smi or rocm-smi matrix), not
 * from a machine's /sys (this one or a gathered tree). */
bool gr_topo_from_file(const struct gr_topo *t);

/* Formats "0000:34:00.0" (or "0000:[2b-3b]" for host bridges). */
const char *gr_pci_busid(const struct gr_pci *p, char *buf, size_t cap);
/* "/sys/bus/pci/devices/DDDD:BB:DD.F" plus "/attr" when attr is non-NULL:
 * the path of a device's sysfs file (under the root prefix, see fs.h). */
const char *gr_pci_sysfs_path(const struct gr_pci *p, const char *attr, char *buf, size_t cap);
/* Parses "DDDD:BB:DD.F"; returns false if malformed. */
bool gr_parse_busid(const char *s, unsigned *domain, unsigned *bus, unsigned *dev, unsigned *func);
/* Lowest common ancestor of two nodes in the PCI tree, -1 if none (different
 * host bridges). */
int gr_topo_common_ancestor(const struct gr_topo *t, int x, int y);

const char *gr_role_name(enum gr_role r);  /* "root_port" ... */
const char *gr_kind_name(enum gr_kind k);  /* "gpu", "accelerator" ... */

/* The index among t's GPUs (t->gpus) of the GPU at bus id "0000:41:00.0", or
 * -1; this is how driver-reported GPUs are joined to the topology. */
int gr_topo_gpu_by_busid(const struct gr_topo *t, const char *busid);

/* Short display names: "GPU3", "NIC0", else the bus id. */
const char *gr_pci_label(const struct gr_topo *t, int idx, char *buf, size_t cap);

#endif
