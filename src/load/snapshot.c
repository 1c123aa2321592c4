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

/* The driver's NVLink as info attributes (GR_INFO_NVLINK and the fabric's). */
static void annotate_nvlink(hwloc_topology_t topo, const struct gr_topo *t, hwloc_obj_t *objs)
{
  char buf[96], bus[32];
  for (size_t k = 0; k < t->ngpulinks; k++) {
    const struct gr_gpulink *l = &t->gpulinks[k];
    if (!objs[l->a])
      continue;
    if (l->b >= 0)
      snprintf(buf, sizeof(buf), "%s %d %.3f", gr_pci_busid(&t->pci[l->b], bus, sizeof(bus)), l->count, l->bw_gbps);
    else
      snprintf(buf, sizeof(buf), "cpu %d %d %.3f", l->peer_package, l->count, l->bw_gbps);
    hwloc_obj_add_info(objs[l->a], GR_INFO_NVLINK, buf);
  }
  if (!t->nfabrics)
    return;
  const struct gr_fabric *f = &t->fabrics[0]; /* a machine has one (model/topo.h) */
  snprintf(buf, sizeof(buf), "%s %d %d", gr_fabric_from_name(f->from), f->gpulink_gen, f->nswitches);
  hwloc_obj_add_info(hwloc_get_root_obj(topo), GR_INFO_FABRIC, buf);
  for (size_t i = 0; i < f->nmembers; i++)
    if (objs[f->members[i].gpu]) {
      snprintf(buf, sizeof(buf), "%d %.3f", f->members[i].links, f->members[i].gbps);
      hwloc_obj_add_info(objs[f->members[i].gpu], GR_INFO_FABRIC_LINKS, buf);
    }
}

int gr_snapshot_write(const struct gr_fs *fs, const char *out_path, gr_gpulink_reader gpulink_reader,
                      struct gr_err *err)
{
  hwloc_topology_t topo = NULL;
  hwloc_obj_t *objs = NULL;
  struct gr_topo t;
  char *xml = NULL;
  int xml_len = 0;
  int rc = -1;
  gr_topo_init(&t);
  /* a replayed tree is checked whole before anything is written */
  size_t flat;
  if ((!gr_fs_is_live(fs) && gr_live_check_tree(fs, &flat, err) != 0) || gr_hwloc_open_live(fs, false, &topo, err) != 0)
    return -1;
  if (gr_topo_from_hwloc(topo, &t, &objs, err) != 0 || gr_sysfs_overlay(fs, &t, err) != 0)
    goto out;
  for (size_t i = 0; i < t.npci; i++)
    if (t.pci[i].role != GR_ROLE_HOSTBRIDGE && objs[i])
      annotate(topo, &t.pci[i], objs[i]);
  if (gpulink_reader && !t.ngpulinks) {
    /* hwloc recorded no NVLink: the driver's goes into the file, so that a
     * replay sees what `gpurig topo` sees on the machine */
    t.source_kind = xstrdup(gr_fs_is_live(fs) ? "live" : "root");
    gr_topo_finish(&t);
    gpulink_reader(&t);
    annotate_nvlink(topo, &t, objs);
  }
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
