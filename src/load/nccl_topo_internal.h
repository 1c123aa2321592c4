/* Inside the NCCL topology loader: what load/nccl_topo.c (the document,
 * classified as NCCL reads it; nodes, packages and NUMA nodes) and
 * load/nccl_topo_nvlink.c (NVLinks, C2C links and the NVSwitch fabric)
 * share. Not for use outside load/nccl_topo*.c. */
#ifndef GPURIG_NCCL_TOPO_INTERNAL_H
#define GPURIG_NCCL_TOPO_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/util.h"
#include "base/xml.h"
#include "model/topo.h"

/* Limits. NCCL itself reads at most 256 elements per machine (topo.h,
 * NCCL_TOPO_XML_MAX_NODES), 640 inside one element (xml.h MAX_SUBS) and
 * values of 255 bytes (MAX_STR_LEN); an 8-GPU server with NVSwitches is
 * about 150 elements nested 6 deep. */
#define NT_MAX_BYTES (64u << 20) /* what gr_file_read takes */
#define NT_MAX_DEPTH 64
#define NT_MAX_ELEMS 16384
#define NT_MAX_CHILDREN 640
#define NT_MAX_ATTRS 32   /* per element */
#define NT_MAX_VALUE 255  /* bytes of one attribute value */
#define NT_MAX_NAME 64    /* bytes of an element or attribute name */
#define NT_MAX_CPUS 1024  /* <cpu> elements: Linux's MAX_NUMNODES */
#define NT_MAX_NET_NAMES 16 /* <net> names kept per NIC */
#define NT_MAX_WARNINGS 10  /* warnings shown one by one; the rest are counted */

/* ---- the document ---- */

enum el_kind { EL_OTHER, EL_SYSTEM, EL_CPU, EL_PCI, EL_GPU, EL_NIC, EL_NET, EL_NVLINK, EL_C2C };

/* An element the reader found (doc.x.el, by the same index) and what NCCL
 * makes of it. */
struct elem {
  enum el_kind kind;
  const char *name;
  size_t nlen;
  unsigned line, col;     /* of its '<' */
  int parent;             /* index in doc.el, -1 for the root */
  size_t attr0;           /* its attributes: doc.x.at[attr0 .. attr0 + nattrs - 1] */
  unsigned nattrs;
  unsigned npci, ngpu, nnic;
  int first_gpu;          /* pci: its first <gpu> child (the one NCCL takes NVLinks from), -1 none */
  /* filled while building the model */
  int cpu;                /* the <cpu> it is under: index in build.cpus, -1 none */
  int node;               /* pci: its node; nic: the NIC node its nets name; -1 none */
  int hb;                 /* pci: the host bridge above it */
  bool hb_real;           /* host bridge: its bus range comes from a real bus id */
};

struct doc {
  struct gr_xml_doc x;    /* what the reader found */
  struct elem *el;        /* x's elements, classified */
  size_t nel;
  size_t misplaced;       /* known elements where NCCL does not read them */
  int first_misplaced;
};

/* ---- building the model ---- */

struct cpu_info {
  int numa;               /* NUMA node (numaid), -1 unknown */
  int package;            /* its package index (= os_index) */
  char *cpulist;          /* from affinity, NULL unknown */
  int vnic;               /* the NIC node of its PCI-less <nic> elements, -1 none */
  unsigned line;          /* of its <cpu> */
};

struct busid_ent {
  uint64_t key;
  int elem;               /* the <pci> element */
};

/* One direction of a GPU-to-GPU NVLink as a <nvlink> lists it. */
struct pair_ent {
  int lo, hi;             /* pci indices, lo < hi */
  int dir;                /* 0: listed by lo, 1: by hi */
  int count;
  double link_gbps;       /* per link, of the GPU that lists it */
};

struct build {
  const char *name;
  struct doc *d;
  struct gr_topo *t;
  struct gr_err *err;
  struct cpu_info *cpus;
  size_t ncpus;
  unsigned synth;         /* made-up bus ids handed out */
  size_t nwarn;           /* warnings so far */
  struct busid_ent *ids;  /* the <pci> elements by bus id, sorted */
  size_t nids;
  struct pair_ent *pairs;
  size_t npairs, cap_pairs;
  uint64_t *nvs;          /* NVSwitch bus ids the GPUs name, for the switch count */
  size_t nnvs, cap_nvs;
  bool nvs_unknown;       /* a target names no switch (NCCL's "not visible" placeholder) */
  int fabric;             /* index in t->fabrics, -1 none yet */
};

/* nccl_topo.c: attributes, errors and warnings, bus ids */
const struct gr_xml_attr *attr_of(const struct doc *d, const struct elem *e, const char *key);
const char *value_str(const struct gr_xml_attr *a, char buf[NT_MAX_VALUE + 1]);
int fail_attr(struct build *b, const struct gr_xml_attr *a, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int fail_elem(struct build *b, const struct elem *e, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void warn_at(struct build *b, unsigned line, unsigned col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
int int_attr(struct build *b, const struct elem *e, const char *key, long lo, long hi, long *out);
int required_int(struct build *b, const struct elem *e, const char *key, long lo, long hi, long *out);
uint64_t busid_key(unsigned domain, unsigned bus, unsigned dev, unsigned func);
int node_by_busid(const struct build *b, uint64_t key);

/* nccl_topo_nvlink.c: NVLinks, C2C links and the fabric, once every node exists */
int nt_build_links(struct build *b);

#endif
