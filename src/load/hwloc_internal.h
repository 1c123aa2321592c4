/* Shared between the hwloc-based loader (hwloc.c), the live loader and its
 * sysfs overlay (live.c) and snapshot.c. Not part of the public core API. */
#ifndef GPURIG_HWLOC_INTERNAL_H
#define GPURIG_HWLOC_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include <hwloc.h>

#include "base/fs.h"
#include "model/topo.h"
#include "base/util.h"

/* Info attribute names gpurig adds to PCI objects in a snapshot. */
#define GR_INFO_CUR_GEN "GPURigLinkCurGen"
#define GR_INFO_CUR_WIDTH "GPURigLinkCurWidth"
#define GR_INFO_MAX_GEN "GPURigLinkMaxGen"
#define GR_INFO_MAX_WIDTH "GPURigLinkMaxWidth"
#define GR_INFO_NUMA "GPURigNUMANode"
#define GR_INFO_DRIVER "GPURigDriver"
#define GR_INFO_IOMMU "GPURigIOMMUGroup"
#define GR_INFO_AER_COR "GPURigAERCorrectable"
#define GR_INFO_AER_NONFATAL "GPURigAERNonFatal"
#define GR_INFO_AER_FATAL "GPURigAERFatal"
#define GR_INFO_SNAPSHOT "GPURigSnapshot"
/* NVLink the driver reported when the snapshot was taken (hwloc without its
 * NVML component records none): on a GPU, one "PEER_BUSID COUNT GBPS" per
 * GPU peer ("cpu PACKAGE COUNT GBPS" for a CPU peer), and "COUNT GBPS" for
 * its links into the NVSwitch fabric; on the root, the fabric as
 * "FROM GEN NSWITCHES" (FROM as gr_fabric_from_name says it). */
#define GR_INFO_NVLINK "GPURigNVLink"
#define GR_INFO_FABRIC_LINKS "GPURigNVSwitchLinks"
#define GR_INFO_FABRIC "GPURigNVSwitchFabric"

/* ---- hwloc and the process (hwloc.c) ----
 * hwloc 2.x takes its root prefix, plugin blacklist and XML verbosity from the
 * environment only, prints its complaints on stderr, and libhwloc 2.9 crashes
 * on some malformed XML. gr_hwloc_load is the one place where gpurig changes
 * process-global state for it: setenv/unsetenv of HWLOC_FSROOT,
 * HWLOC_PLUGINS_BLACKLIST and HWLOC_XML_VERBOSE (put back after each load),
 * fd 2 redirected into a memory file while hwloc runs, and SIGSEGV, SIGBUS,
 * SIGFPE, SIGILL and SIGABRT handlers while it parses XML. It is also the
 * only place where the root prefix reaches hwloc (HWLOC_FSROOT).
 * NOT THREAD-SAFE: load before any thread starts. (What changes while a
 * machine runs is re-read with gr_load_dynamic, which needs none of this.) */

/* What hwloc reads: the machine under fs, or hwloc XML. */
struct gr_hwloc_src {
  const struct gr_fs *fs; /* the live machine or a gathered tree; NULL for XML */
  const char *name;       /* XML: how messages name it */
  const char *path;       /* XML: a file hwloc reads itself (libxml2 then names the line), or NULL */
  const char *buf;        /* XML: the same bytes in memory, NUL-terminated */
  size_t len;
  bool libxml;            /* XML: let hwloc load its libxml2 plugin (else its own parser) */
  bool no_io;             /* fs: CPUs and memory only, no PCI discovery (hwloc reads every
                             device's config space before its type filter applies) */
};

enum gr_hwloc_rc {
  GR_HWLOC_OK = 0,
  GR_HWLOC_INIT_FAILED = -1, /* hwloc_topology_init failed */
  GR_HWLOC_LOAD_FAILED = -2, /* hwloc refused the input */
};

/* Initialises an hwloc topology that keeps all I/O objects, loads src into
 * it with stderr captured (XML under the crash guard), and puts the
 * environment back. On GR_HWLOC_OK the caller owns *out
 * (hwloc_topology_destroy). On failure nothing is left to free; for
 * GR_HWLOC_LOAD_FAILED msg holds the first line hwloc (or libxml2) printed,
 * "" if none, and errno what hwloc left. */
enum gr_hwloc_rc gr_hwloc_load(const struct gr_hwloc_src *src, hwloc_topology_t *out, char *msg, size_t cap);

/* XML as gpurig hands it to hwloc: the checks first (empty, binary, not
 * hwloc's, nesting, os_index), then hwloc's own importer, then libxml2's
 * where that fails. path, when given, is read by hwloc itself (libxml2 then
 * names the line of a syntax error; from memory it names none); buf holds
 * the same bytes, NUL-terminated. On success the caller owns *out
 * (hwloc_topology_destroy). Nothing of gpurig's model is built here: the
 * XML fuzz target parses with this alone in a child process. */
int gr_hwloc_open_xml(const char *name, const char *path, const char *buf, size_t len, hwloc_topology_t *out,
                      struct gr_err *err);

/* Opens the live topology (fs root honoured) with all I/O objects kept
 * (no_io: none, and no PCI discovery).
 * The caller destroys *out with hwloc_topology_destroy. */
int gr_hwloc_open_live(const struct gr_fs *fs, bool no_io, hwloc_topology_t *out, struct gr_err *err);

/* Converts an hwloc topology into *t. objs (optional) receives a malloc'd
 * array mapping each t->pci index to its hwloc object (NULL for none);
 * the caller frees it. */
int gr_topo_from_hwloc(hwloc_topology_t topo, struct gr_topo *t, hwloc_obj_t **objs,
                       struct gr_err *err);

/* The parts of gr_topo_from_hwloc that gr_load_live_gpus uses on a topology
 * loaded with no_io: the packages, NUMA nodes, product and host name; the
 * locality hwloc would give a PCI root bus whose local CPUs are `local`
 * (NULL or empty: the whole machine), into a host bridge p; the NUMA nodes
 * of GPU memory (once the GPUs are in t). *rank: where gr_topo_from_hwloc's
 * walk of hwloc's tree would meet that bus's host bridge (host bridges sort
 * by it), so that both loaders give their nodes in one order. */
void gr_hwloc_cpus(hwloc_topology_t topo, struct gr_topo *t);
void gr_hwloc_bus_locality(hwloc_topology_t topo, hwloc_const_cpuset_t local, struct gr_pci *p, int *rank);
void gr_hwloc_gpu_numa(hwloc_topology_t topo, struct gr_topo *t);

/* The light loader's and the whole one's common end: the replayed host
 * name, the flat-tree warning, the source's name, gr_topo_finish. */
void gr_live_finish(const struct gr_fs *fs, struct gr_topo *t, size_t flat);

/* Reads /sys/bus/pci/devices/<bdf>/ for every node and fills link, NUMA,
 * driver, IOMMU group and AER facts. Problems with single values become
 * warnings on t. Fails only if the tree has no PCI devices directory. */
int gr_sysfs_overlay(const struct gr_fs *fs, struct gr_topo *t, struct gr_err *err);

/* A gathered tree must at least have PCI devices with their identity
 * files; anything less is refused with the first missing piece named
 * (GR_EXIT_FAIL). Call only for a replayed root, not the live machine.
 * *flat: how many devices are plain directories, without the PCI hierarchy
 * (each then on a host bridge of its own, as hwloc shows them). */
int gr_live_check_tree(const struct gr_fs *fs, size_t *flat, struct gr_err *err);

#endif
