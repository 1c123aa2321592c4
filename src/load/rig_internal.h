/* Inside the rig loader: what load/rig_parse.c (text -> statements and
 * elements) and load/rig_build.c (those -> the topology model) share, and
 * load/rig.c runs one after the other. Not for use outside load/rig*.c. */
#ifndef GPURIG_RIG_INTERNAL_H
#define GPURIG_RIG_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "base/util.h"
#include "facts/catalog.h"
#include "model/topo.h"

#define MAX_TOKENS 32

/* Limits far above any real machine (a 10-GPU server is about 40 elements and
 * a dozen nvlink lines), checked while parsing so that a runaway or hostile
 * file is refused at the first line over, with that line, not after the whole
 * file is read (docs/rig-format.md, "Limits"). */
#define RIG_MAX_ELEMS 4096          /* named elements of every kind, GPUs and drives included */
#define RIG_MAX_NVLINKS 4096        /* nvlink and nvswitch statements */
#define RIG_MAX_BUSES 255           /* bus numbers of one PCI domain (1 .. 0xff) */
#define RIG_MAX_LINES 100000        /* a real rig is under 100 lines; comments and notes included */
#define RIG_MAX_NODES 8             /* NUMA nodes per socket (NPS4, SNC4; 8 leaves room) */
#define RIG_MAX_FUNCTIONS 8         /* PCI functions of one device */
#define RIG_MAX_DEVS 32             /* device numbers on one PCI bus */
#define RIG_MAX_RAM_GIB 1048576     /* 1 PiB per socket */

struct token {
  char *text;
  int col;
  bool quoted;
};

enum kind { K_CPU, K_RC, K_SWITCH, K_GPU, K_NIC, K_NVME };

/* One named element of the block diagram. */
struct elem {
  enum kind kind;
  char *name;
  int line, col;          /* where it was defined */
  char *parent;           /* name, NULL for cpus */
  int pline, pcol;        /* where the parent was named */
  int parent_idx;         /* resolved element index */
  char *model;            /* GPU catalog model, NIC/switch/CPU model */
  const struct gr_gpu_model *gpu;
  int gen, width;         /* device link (nic, nvme, switch uplink) */
  int slot_gen, slot_width; /* slot or riser limit on the port above */
  int lanes;              /* switch lanes */
  int p2p;                /* gpu: -1 default, 0 off, 1 on */
  int rdma;               /* nic */
  char *rdma_name;        /* nic: `rdma NAME`, the RDMA device of function 0, NULL not said */
  int rdma_col;           /* where that name was written */
  int functions;          /* nic: PCI functions (ports), 1 by default */
  double port_gbit;       /* nic: `speed GBIT`, the port's line rate, 0 not said */
  bool storage;           /* nic: `storage`, not one NCCL uses */
  bool direct;            /* on its root complex's bus, no port above it */
  int direct_col;         /* where `direct` was written */
  int vendor_amd;         /* cpu */
  int channels, mts, rc_p2p;
  int nodes;              /* cpu: NUMA nodes (numa N), 1 by default */
  long ram_gib;           /* cpu: RAM on the socket, 0 unknown */
  int first_node;         /* cpu: os index of its first NUMA node (sockets in declaration order) */
  int node;               /* rootcomplex: NUMA node within its socket, 0-based; -1 unknown */
  int node_col;           /* rootcomplex: where that node was written, 0 if not */
  char *cpulist;          /* rootcomplex: `cpus LIST`, the CPUs local to its devices, NULL not said */
  int cpu_index;          /* cpu: its package number, in declaration order */
  int pci_index;          /* node in the topology once built */
  unsigned sec_bus;       /* direct switch: the bus below it */
  unsigned next_dev;      /* root complex, direct switch: next device number on its bus */
  struct gr_gpu_power gpow; /* gpu: its power path as the line states it (psu -1: set by `feeds`) */
  int riser_power_col;    /* gpu: where `riser-power` was written, 0 not */
};

/* `psu ... feeds LIST`, kept as written and resolved once every GPU and CPU
 * is known (a psu line may come before the gpu lines it names). */
struct feed_stmt {
  size_t psu;             /* index in the rig's psus */
  char *text;             /* "gpu0-gpu3,cpus" */
  int line, col;          /* the list's place */
};

/* nvlink A B | nvlink mesh RANGE | nvswitch RANGE: kept as written, resolved
 * in file order once the GPUs exist. */
enum link_kind { LK_PAIR, LK_MESH, LK_FABRIC };

struct link_stmt {
  enum link_kind kind;
  char *a, *b;            /* pair: the two GPU names */
  unsigned lo, hi;        /* mesh, fabric: gpuLO .. gpuHI */
  int line, col;          /* the statement */
  int acol, bcol;         /* its GPU words (the range's for mesh and fabric) */
  int links;              /* links per pair (per GPU for a fabric); 0: the catalog's default */
  int switches;           /* fabric: NVSwitch chips, 0 unknown */
  int gen;                /* fabric: NVLink generation, 0: the GPUs' catalog generation */
  bool xgmi;              /* pair, mesh: an xgmi statement (AMD's Infinity Fabric links), not nvlink */
};

struct parser {
  const char *name;
  struct gr_err *err;
  int line;
  struct token tok[MAX_TOKENS];
  int ntok;
  struct elem *elems;
  size_t nelems, cap;
  int *index;             /* names -> element indices, open addressing; -1 empty */
  size_t index_cap, nindexed;
  size_t ncpus, ngpus, nnvmes; /* elements of those kinds so far: their names and numbers */
  unsigned nbuses;        /* bus numbers the elements so far will take once built */
  size_t notes_len, notes_cap; /* t->rig->notes, grown by doubling */
  struct gr_topo *t;
  bool have_rig;
  int global_p2p;         /* -1 none, 0 off, 1 on */
  struct link_stmt *links; /* nvlink and nvswitch statements */
  size_t nlinks, links_cap;
  int *gpu_elem;          /* while linking: pci index -> element index of that GPU, -1 */
  int *used;              /* while linking: NVLinks per pci index so far */
  unsigned next_bus;
  struct feed_stmt *feeds; /* the psu lines' feeds, in file order */
  size_t nfeeds;
  int once_line[7], once_col[7]; /* where each one-value statement (parse_statement's list) was, 0 not yet */
};

/* rig_parse.c: errors, tokens, statements, names and their resolution */
int perr(struct parser *p, int col, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void free_tokens(struct parser *p);
int tokenize(struct parser *p, const char *s, size_t n);
int parse_statement(struct parser *p);
int resolve_parents(struct parser *p);
int find_elem(const struct parser *p, const char *name);

/* rig_options.c: value words (each returns 0, or -1 after perr naming the
 * token) and the options of device lines */
bool is_name(const char *s); /* a letter, then letters, digits, '_' or '-' */
int want_count(struct parser *p, const struct token *t, long lo, long hi, long *out);
int want_gen(struct parser *p, const struct token *t, int *gen);
int want_width(struct parser *p, const struct token *t, int *width);
int want_onoff(struct parser *p, const struct token *t, int *v);
int want_number(struct parser *p, const struct token *t, double *v);
int want_cpulist(struct parser *p, const struct token *t); /* "0-23,48-71", ascending */
/* The options of a switch, gpu, nic or nvme line from token `from` on into e;
 * an option e's kind does not take is an error naming it. */
int device_options(struct parser *p, struct elem *e, int from);

/* rig_power.c: `psu` and `circuit` lines into t->rig (0, or -1 after perr) */
int stmt_psu(struct parser *p);
int stmt_circuit(struct parser *p);
/* A gpu line's power options at token i (power CONNS [from CONNS] [cables N],
 * riser-power KIND, limit W): the tokens used, 0 if the word is none of
 * them, -1 after perr. */
int gpu_power_option(struct parser *p, struct elem *e, int i);
/* Every GPU's power path into t->rig->gpu_power and the feeds resolved to
 * PSU indices: a load fed twice, or a GPU or the CPUs fed by none while
 * some psu says what it feeds, is an error naming its line and column. */
int resolve_power(struct parser *p);

/* rig_build.c: the topology from the resolved elements and links */
void build_cpus(struct parser *p);
int build_tree(struct parser *p);
int build_links(struct parser *p);
bool has_gpulink(const struct gr_gpu_model *m);
/* The catalog gives the model GPU links of this kind: "nvlink" or "xgmi". */
bool has_link_kind(const struct gr_gpu_model *m, const char *kind);
double link_rate(const struct gr_gpu_model *m);
const char *article(const char *model);

#endif
