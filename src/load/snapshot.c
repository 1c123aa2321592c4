/* `gpurig snapshot`: the live machine as hwloc XML plus gpurig's per-device
 * facts as info attributes, written through the one writer (base/file.h):
 * a temporary file beside the target, renamed over it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/file.h"
#include "load/hwloc_internal.h"
#include "load/loaders.h"

static void add_int_info(hwloc_topology_t topo, hwloc_obj_t o, const char *name, long v)
{
  char buf[32];
  snprintf(buf, sizeof(buf), "%ld", v);
  hwloc_obj_add_info(o, name, buf);
  (void)topo;
}

static void annotate(hwloc_topology_t topo, const struct gr_pci *p, hwloc_obj_t o)
{
  if (p->link.cur_gen)
    add_int_info(topo, o, GR_INFO_CUR_GEN, p->link.cur_gen);
  if (p->link.cur_width)
    add_int_info(topo, o, GR_INFO_CUR_WIDTH, p->link.cur_width);
  if (p->link.max_gen)
    add_int_info(topo, o, GR_INFO_MAX_GEN, p->link.max_gen);
  if (p->link.max_width)
    add_int_info(topo, o, GR_INFO_MAX_WIDTH, p->link.max_width);
  add_int_info(topo, o, GR_INFO_NUMA, p->numa);
  if (p->driver)
    hwloc_obj_add_info(o, GR_INFO_DRIVER, p->driver);
  if (p->iommu_group >= 0)
    add_int_info(topo, o, GR_INFO_IOMMU, p->iommu_group);
  if (p->aer.correctable.valid)
    add_int_info(topo, o, GR_INFO_AER_COR, (long)p->aer.correctable.value);
  if (p->aer.nonfatal.valid)
    add_int_info(topo, o, GR_INFO_AER_NONFATAL, (long)p->aer.nonfatal.value);
  if (p->aer.fatal.valid)
    add_int_info(topo, o, GR_INFO_AER_FATAL, (long)p->aer.fatal.value);
}

int gr_snapshot_write(const struct gr_fs *fs, const char *out_path, struct gr_err *err)
{
  hwloc_topology_t topo = NULL;
  hwloc_obj_t *objs = NULL;
  struct gr_topo t;
  char *xml = NULL;
  int xml_len = 0;
  int rc = -1;
  gr_topo_init(&t);
  /* a replayed tree is checked whole before anything is written */
  if ((!gr_fs_is_live(fs) && gr_live_check_tree(fs, err) != 0) || gr_hwloc_open_live(fs, &topo, err) != 0)
    return -1;
  if (gr_topo_from_hwloc(topo, &t, &objs, err) != 0 || gr_sysfs_overlay(fs, &t, err) != 0)
    goto out;
  for (size_t i = 0; i < t.npci; i++)
    if (t.pci[i].role != GR_ROLE_HOSTBRIDGE && objs[i])
      annotate(topo, &t.pci[i], objs[i]);
  hwloc_obj_add_info(hwloc_get_root_obj(topo), GR_INFO_SNAPSHOT, GPURIG_VERSION);
  if (hwloc_topology_export_xmlbuffer(topo, &xml, &xml_len, 0) != 0) {
    gr_fail(err, GR_EXIT_CANNOT_RUN, "%s: libhwloc could not export the topology: %s", out_path, strerror(errno));
    goto out;
  }
  /* xml_len counts the final NUL */
  if (gr_file_write(out_path, xml, xml_len > 0 ? (size_t)xml_len - 1 : 0, err) != 0)
    goto out;
  rc = 0;
out:
  if (xml)
    hwloc_free_xmlbuffer(topo, xml);
  free(objs);
  gr_topo_free(&t);
  hwloc_topology_destroy(topo);
  return rc;
}
