/* Loaders: each fills a struct gr_topo (see topo.h) from one kind of input.
 * All return 0 on success; on failure -1 with one line in err (err->code is
 * GR_EXIT_FAIL for bad input, GR_EXIT_CANNOT_RUN when gpurig itself cannot
 * work) and *t left empty. The caller owns *t either way (gr_topo_free). */
#ifndef GPURIG_LOADERS_H
#define GPURIG_LOADERS_H

#include "base/fs.h"
#include "model/topo.h"
#include "base/util.h"

/* Reads NVLink from a GPU driver into a topology just loaded from this
 * machine (NV# edges and the NVSwitch fabric). The GPU layer provides it and
 * the command line hands it over, since load cannot call up; it notes what
 * it could not do as a loader warning and never fails the load. */
typedef void (*gr_gpulink_reader)(struct gr_topo *t);

/* The machine under fs (live when fs is the real root): hwloc for the tree
 * and locality, then gpurig's own reads of /sys/bus/pci/devices/<bdf>/. */
int gr_load_live(const struct gr_fs *fs, struct gr_topo *t, struct gr_err *err);
/* The same for a command that needs the GPUs and the paths to them (plan,
 * report): only the GPUs, other accelerators, NICs, NVMe drives and
 * NVSwitches, the bridges above them and what sits below a switch kept,
 * from sysfs; hwloc for the CPUs and memory alone. No device's config space
 * is opened (live_gpus.c says why). */
int gr_load_live_gpus(const struct gr_fs *fs, struct gr_topo *t, struct gr_err *err);

/* Re-reads the dynamic part of every node of t (a topology gr_load_live
 * loaded from the same fs) into out[0 .. t->npci-1], without hwloc: sysfs
 * files only. Host bridges and nodes without sysfs files are left unknown.
 * A malformed value stays unknown. Returns 0, or -1 with err when the tree
 * has no /sys/bus/pci/devices any more. Thread-safe (reads only). only,
 * when non-NULL, names the nodes to read (npci flags; the others are left
 * unknown): a sampler reads the links it watches. dirfd, when non-NULL,
 * holds the directories gr_load_dynamic_dirs opened. It allocates nothing. */
int gr_load_dynamic(const struct gr_fs *fs, const struct gr_topo *t, const bool *only, const int *dirfd,
                    struct gr_pci_dynamic *out, struct gr_err *err);
/* Opens each node's sysfs directory once (npci descriptors into dirfd, -1
 * where there is none or only says no), for gr_load_dynamic to read its
 * files there without walking the path at every sample. The caller closes
 * the descriptors that are not -1. */
void gr_load_dynamic_dirs(const struct gr_fs *fs, const struct gr_topo *t, const bool *only, int *dirfd);

/* An hwloc XML file (what `lstopo FILE.xml` writes), including the
 * NVLinkBandwidth matrix and gpurig snapshot attributes when present. */
int gr_load_xml(const char *path, struct gr_topo *t, struct gr_err *err);
/* The same from memory (fuzzing); name is used in messages. */
int gr_load_xml_buffer(const char *name, const char *buf, size_t len, struct gr_topo *t,
                       struct gr_err *err);

/* An NCCL topology file (what NCCL reads from NCCL_TOPO_FILE and writes to
 * NCCL_TOPO_DUMP_FILE; docs/topology.md says what gpurig makes of it). path
 * "-" is standard input. Errors name FILE:LINE:COL. */
int gr_load_nccl_topo(const char *path, struct gr_topo *t, struct gr_err *err);
/* The same from memory; name is used in messages. */
int gr_load_nccl_topo_buffer(const char *name, const char *buf, size_t len, struct gr_topo *t, struct gr_err *err);
/* Whether buf is an NCCL topology file: its first element (after a byte
 * order mark, blanks, comments and declarations) is <system>. Reads only as
 * far as that element. */
bool gr_nccl_topo_sniff(const char *buf, size_t len);

/* A saved `nvidia-smi topo -m` (the matrix, its CPU and NUMA Affinity
 * columns and NIC Legend, as people post it) or `rocm-smi --showtopo` (or
 * any of its Weight, Hops, Link Type and Numa Nodes parts). Neither states
 * the PCIe tree: the loader draws the smallest tree with the stated levels,
 * on made-up bus ids, and lists what the input leaves out in t->gaps
 * (docs/topology.md). Errors name FILE:LINE. */
int gr_load_nvsmi_topo_buffer(const char *name, const char *buf, size_t len, struct gr_topo *t, struct gr_err *err);
int gr_load_rocmsmi_topo_buffer(const char *name, const char *buf, size_t len, struct gr_topo *t, struct gr_err *err);
/* A saved `amd-smi topology`: its text tables (ACCESS, WEIGHT, HOPS, LINK
 * TYPE, NUMA BW, rows and columns by bus id) or its --json (either layout
 * amd-smi has printed). The same tree and gaps as rocm-smi's, with the GPUs'
 * stated bus ids. */
int gr_load_amdsmi_topo_buffer(const char *name, const char *buf, size_t len, struct gr_topo *t, struct gr_err *err);
/* Which of them buf is: 1 nvidia-smi topo -m (a line starting with GPU0), 2
 * rocm-smi (a "between two GPUs" title or a "(Topology) Numa" line), 3
 * amd-smi (an ACCESS, WEIGHT, HOPS or LINK TYPE "TABLE:" line; or a JSON
 * array with "link_type"), 0 none (XML starts with '<'). */
int gr_smi_topo_sniff(const char *buf, size_t len);

/* Writes the machine under fs as hwloc XML with gpurig's per-device facts as
 * info attributes, and the NVLink the driver reports (gpulink_reader, NULL
 * none) where hwloc records none, so that a replay of the file sees the
 * same NV# and fabric. Writes to a temporary file beside out_path and
 * renames it, so a failure never leaves a partial file. */
int gr_snapshot_write(const struct gr_fs *fs, const char *out_path, gr_gpulink_reader gpulink_reader,
                      struct gr_err *err);

/* Parsers of single sysfs values, exposed for tests and fuzzing. */
/* Parses an aer_dev_* file ("NAME COUNT" lines with a TOTAL_ERR_* line);
 * returns false if it has no parsable total. */
bool gr_parse_aer_total(const char *text, uint64_t *total);

#endif
