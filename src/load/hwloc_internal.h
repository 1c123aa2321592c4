/* Shared between the hwloc-based loader, the sysfs overlay and snapshot.
 * Not part of the public core API. */
#ifndef GPURIG_HWLOC_INTERNAL_H
#define GPURIG_HWLOC_INTERNAL_H

#include <stdio.h>

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

/* Captures what hwloc and libxml2 print on stderr between begin and end:
 * their complaints become one line of gpurig's instead of several of theirs.
 * quiet_end restores stderr and keeps the first non-empty line in msg
 * (msg may be NULL to drop it all). */
struct quiet {
  FILE *tmp;
  int saved;
};
void quiet_begin(struct quiet *q);
void quiet_end(struct quiet *q, char *msg, size_t cap);

/* Call before any hwloc_topology_init: keeps out hwloc plugins gpurig does not
 * want (see load_hwloc.c). */
void gr_hwloc_setup_env(void);

/* Opens the live topology (fs root honoured) with all I/O objects kept.
 * The caller destroys *out with hwloc_topology_destroy. */
int gr_hwloc_open_live(const struct gr_fs *fs, hwloc_topology_t *out, struct gr_err *err);

/* Converts an hwloc topology into *t. objs (optional) receives a malloc'd
 * array mapping each t->pci index to its hwloc object (NULL for none);
 * the caller frees it. */
int gr_topo_from_hwloc(hwloc_topology_t topo, struct gr_topo *t, hwloc_obj_t **objs,
                       struct gr_err *err);

/* Reads /sys/bus/pci/devices/<bdf>/ for every node and fills link, NUMA,
 * driver, IOMMU group and AER facts. Problems with single values become
 * warnings on t. Fails only if the tree has no PCI devices directory. */
int gr_sysfs_overlay(const struct gr_fs *fs, struct gr_topo *t, struct gr_err *err);

#endif
