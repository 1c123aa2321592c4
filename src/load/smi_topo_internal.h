/* What the readers of saved vendor matrices (nvidia-smi topo -m, rocm-smi
 * --showtopo) share: the matrix they parse into, and the one builder that
 * turns a matrix of levels into the smallest PCIe tree with those levels.
 * Internal to load/. Ownership: a struct mx owns its arrays and strings;
 * mx_free frees them. */
#ifndef GPURIG_SMI_TOPO_INTERNAL_H
#define GPURIG_SMI_TOPO_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "base/util.h"
#include "model/topo.h"

/* The most devices (GPUs and NICs) one matrix may hold: the builder's work
 * is O(n^2), and no machine's nvidia-smi prints more than a few dozen. */
#define MX_MAX_DEVICES 1024

/* A cell, nearest first. UNKNOWN: the matrix does not state the PCIe level
 * (NV# hides it; rocm-smi states none). */
enum mx_level { MX_UNKNOWN, MX_SELF, MX_GPULINK, MX_PIX, MX_PXB, MX_PHB, MX_NODE, MX_SYS };

struct mx_dev {
  bool nic;
  char *label;   /* as the matrix prints it: "GPU3", "NIC0", "mlx5_2" */
  char *rdma;    /* NICs: the RDMA device (the NIC Legend's, or the label in the older layout), NULL none */
  char *cpulist; /* CPU Affinity, NULL not stated */
  int numa;      /* NUMA Affinity (rocm-smi: Numa Node), -1 not stated */
  int gpu_numa;  /* GPU NUMA ID, -1 not stated */
  int p2p;       /* the driver lets it do P2P (amd-smi's ACCESS TABLE): 1, 0, -1 not stated */
  bool has_bdf;  /* the input states its bus id (amd-smi): the builder keeps it */
  unsigned domain, bus, devno, func;
  int group[4];  /* the builder's: NUMA node, host bridge, switch tree, switch */
};

struct mx {
  const char *name;      /* the input, for messages */
  unsigned vendor;       /* PCI vendor of the GPUs: 0x10de, 0x1002 */
  size_t n;              /* devices, GPUs first in matrix order */
  struct mx_dev *dev;
  unsigned char *lvl;    /* n x n enum mx_level */
  int *links;            /* n x n: GPU links for MX_GPULINK cells (0: a count not stated) */
  size_t hidden;         /* GPU pairs whose PCIe level the matrix hides */
};

void mx_alloc(struct mx *m, size_t n);
void mx_free(struct mx *m);
/* The cell (a, b). */
static inline enum mx_level mx_at(const struct mx *m, size_t a, size_t b)
{
  return (enum mx_level)m->lvl[a * m->n + b];
}
void mx_set(struct mx *m, size_t a, size_t b, enum mx_level l, int links);

/* Builds t from m: NUMA nodes, host bridges, switches and the devices, with
 * made-up bus ids (domain ffffffff, which no PCI segment uses), one CPU per
 * NUMA node, and the GPU links. source_kind is copied into t. Calls
 * gr_topo_finish. Cannot fail. */
void mx_build(struct mx *m, const char *source_kind, struct gr_topo *t);

/* ---- AMD's tools (smi_topo_pairs.c) ----
 * rocm-smi --showtopo and amd-smi topology state the same things per GPU
 * pair, read from the amdgpu KFD io_links: a link type, hops, a weight and
 * (amd-smi) whether P2P access is enabled; per GPU a NUMA node (rocm-smi) or
 * a bus id (amd-smi). A reader fills a struct amd_pairs; amd_pairs_build
 * makes the tree from it through mx_build. Ownership: amd_pairs_free frees
 * what amd_pairs_alloc made. */
enum amd_link { AMD_LINK_UNKNOWN, AMD_LINK_PCIE, AMD_LINK_XGMI };

struct amd_pairs {
  size_t n;
  int *weight, *hops;   /* n x n, -1 not stated */
  unsigned char *type;  /* n x n enum amd_link */
  signed char *access;  /* n x n: 1 P2P enabled, 0 disabled, -1 not stated */
  int *numa;            /* n, -1 not stated */
  struct mx_dev *bus;   /* n: has_bdf and the bus id only */
};

/* What differs between the tools in what gpurig says of their output. */
struct amd_tool {
  const char *kind;      /* source_kind: "rocm-smi", "amd-smi" */
  const char *states;    /* the first gap: what the output states and what it does not */
  const char *numa_gap;  /* when not every GPU's NUMA node is stated */
};

void amd_pairs_alloc(struct amd_pairs *p, size_t n);
void amd_pairs_free(struct amd_pairs *p);
/* Builds t (mx_build) and adds the gaps every AMD output shares. */
void amd_pairs_build(const struct amd_pairs *p, const char *name, const struct amd_tool *tool, struct gr_topo *t);

/* Splits the line at p (up to its end or '\n') into whitespace-separated
 * words: at most max, each (start, length). Returns the count, or max + 1
 * when there are more. */
size_t mx_words(const char *p, const char *end, const char **w, size_t *wl, size_t max);
/* The next line after p, or end. */
const char *mx_next_line(const char *p, const char *end);
/* Parses a non-negative decimal word of at most 9 digits; false otherwise. */
bool mx_uint(const char *w, size_t n, int *out);
/* Whether the word is w (exact, case-sensitive). */
bool mx_is(const char *w, size_t n, const char *s);

#endif
