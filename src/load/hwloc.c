/* hwloc -> gpurig model, the XML loader, and the one place where gpurig
 * changes process-global state for hwloc (gr_hwloc_load, see
 * hwloc_internal.h). */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "load/hwloc_internal.h"
#include "base/file.h"
#include "load/loaders.h"

struct conv {
  hwloc_topology_t topo;
  struct gr_topo *t;
  hwloc_obj_t *objs;
  size_t cap_objs;
};

static const char *info(hwloc_obj_t o, const char *name)
{
  return hwloc_obj_get_info_by_name(o, name);
}

static int info_int(hwloc_obj_t o, const char *name, int dflt)
{
  const char *v = info(o, name);
  long x;
  return v && parse_long(v, 10, &x) ? (int)x : dflt;
}

static void info_count(hwloc_obj_t o, const char *name, struct gr_count *c)
{
  const char *v = info(o, name);
  unsigned long x;
  if (v && parse_ulong(v, 10, &x)) {
    c->valid = true;
    c->value = x;
  }
}

static int package_of(hwloc_topology_t topo, hwloc_obj_t nonio)
{
  hwloc_obj_t pkg = nonio->type == HWLOC_OBJ_PACKAGE ? nonio
                                                      : hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_PACKAGE, nonio);
  if (pkg)
    return (int)pkg->os_index;
  if (hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE) == 1)
    return (int)hwloc_get_obj_by_type(topo, HWLOC_OBJ_PACKAGE, 0)->os_index;
  return -1;
}

static bool is_gpu_memory(hwloc_obj_t numa)
{
  return numa && numa->subtype && strcmp(numa->subtype, "GPUMemory") == 0;
}

/* The one NUMA node of CPU memory in nodeset, or -1 (none, or several).
 * Nodes of GPU memory (POWER9, Grace Hopper) sit in their socket's nodeset
 * beside the CPU's node; a device's NUMA node is the CPU's, as nvidia-smi's
 * NUMA Affinity says. */
static int cpu_node_in(hwloc_topology_t topo, hwloc_const_nodeset_t nodeset)
{
  int found = -1, id;
  hwloc_bitmap_foreach_begin(id, nodeset) {
    if (is_gpu_memory(hwloc_get_numanode_obj_by_os_index(topo, (unsigned)id)))
      continue;
    if (found >= 0)
      return -1;
    found = id;
  }
  hwloc_bitmap_foreach_end();
  return found;
}

/* A host bridge's NUMA node (one, or unknown), socket and local CPUs, from
 * the object it hangs from. */
static void set_locality(hwloc_topology_t topo, hwloc_obj_t nonio, hwloc_const_nodeset_t nodeset,
                         hwloc_const_cpuset_t cpuset, struct gr_pci *p)
{
  if (nodeset)
    p->numa = cpu_node_in(topo, nodeset);
  p->package = package_of(topo, nonio);
  if (cpuset && !hwloc_bitmap_iszero(cpuset)) {
    char *s = NULL;
    if (hwloc_bitmap_list_asprintf(&s, cpuset) >= 0) {
      p->cpulist = xstrdup(s);
      free(s);
    }
  }
}

/* Locality as hwloc attached the host bridge: one NUMA node, or unknown. */
static void fill_locality(struct conv *c, hwloc_obj_t o, struct gr_pci *p)
{
  hwloc_obj_t nonio = hwloc_get_non_io_ancestor_obj(c->topo, o);
  if (!nonio)
    return;
  set_locality(c->topo, nonio, nonio->nodeset, nonio->cpuset, p);
  int snap_numa = info_int(o, GR_INFO_NUMA, -2);
  if (snap_numa >= -1)
    p->numa = snap_numa;
}

/* Counts the normal objects walk_normal meets before target (the I/O under
 * an object is met before its children); true once found. */
static bool preorder(hwloc_obj_t o, hwloc_obj_t target, int *n)
{
  if (o == target)
    return true;
  (*n)++;
  for (hwloc_obj_t ch = o->first_child; ch; ch = ch->next_sibling)
    if (preorder(ch, target, n))
      return true;
  return false;
}

static int rank_of(hwloc_topology_t topo, hwloc_obj_t o)
{
  int n = 0;
  preorder(hwloc_get_root_obj(topo), o, &n);
  return 2 * n;
}

/* hwloc's rule for a PCI root bus (pci-common.c, topology-linux.c): the
 * local_cpus of the bus's first device, within the machine's CPUs, or the
 * whole machine where that is empty; the bus hangs from the highest object
 * of exactly those CPUs, or from a Group of them that hwloc makes under the
 * smallest object covering them. The Group is not made here: its NUMA nodes
 * are its CPUs', its socket its parent's, and its place in the walk just
 * before the first child it takes. */
void gr_hwloc_bus_locality(hwloc_topology_t topo, hwloc_const_cpuset_t local, struct gr_pci *p, int *rank)
{
  hwloc_obj_t root = hwloc_get_root_obj(topo), o = NULL;
  hwloc_bitmap_t set = hwloc_bitmap_alloc(), nodes = hwloc_bitmap_alloc();
  if (local)
    hwloc_bitmap_and(set, local, hwloc_topology_get_complete_cpuset(topo));
  if (!hwloc_bitmap_iszero(set))
    o = hwloc_get_obj_covering_cpuset(topo, set);
  if (!o) {
    o = root;
    hwloc_bitmap_copy(set, root->cpuset);
  }
  while (o->parent && hwloc_bitmap_isequal(o->parent->cpuset, o->cpuset))
    o = o->parent;
  *rank = rank_of(topo, o);
  if (hwloc_bitmap_isequal(o->cpuset, set)) {
    set_locality(topo, o, o->nodeset, o->cpuset, p);
  } else {
    hwloc_bitmap_and(set, set, o->cpuset);
    for (hwloc_obj_t pu = NULL; (pu = hwloc_get_next_obj_inside_cpuset_by_type(topo, set, HWLOC_OBJ_PU, pu));)
      if (pu->nodeset)
        hwloc_bitmap_or(nodes, nodes, pu->nodeset);
    for (hwloc_obj_t ch = o->first_child; ch; ch = ch->next_sibling)
      if (hwloc_bitmap_intersects(ch->cpuset, set)) {
        *rank = rank_of(topo, ch) - 1;
        break;
      }
    set_locality(topo, o, nodes, set, p);
  }
  hwloc_bitmap_free(set);
  hwloc_bitmap_free(nodes);
}

static void fill_snapshot_facts(hwloc_obj_t o, struct gr_pci *p, struct gr_topo *t)
{
  p->link.cur_gen = info_int(o, GR_INFO_CUR_GEN, 0);
  p->link.cur_width = info_int(o, GR_INFO_CUR_WIDTH, 0);
  p->link.max_gen = info_int(o, GR_INFO_MAX_GEN, 0);
  p->link.max_width = info_int(o, GR_INFO_MAX_WIDTH, 0);
  p->iommu_group = info_int(o, GR_INFO_IOMMU, -1);
  if (info(o, GR_INFO_DRIVER))
    p->driver = xstrdup(info(o, GR_INFO_DRIVER));
  info_count(o, GR_INFO_AER_COR, &p->aer.correctable);
  info_count(o, GR_INFO_AER_NONFATAL, &p->aer.nonfatal);
  info_count(o, GR_INFO_AER_FATAL, &p->aer.fatal);
  if (p->link.max_gen || p->link.cur_gen)
    t->link_details = true;
}

static int add_node(struct conv *c, hwloc_obj_t o, int parent)
{
  int idx = gr_topo_add_pci(c->t);
  struct gr_pci *p = &c->t->pci[idx];
  grow_array((void **)&c->objs, sizeof(*c->objs), &c->cap_objs, (size_t)idx);
  c->objs[idx] = o;
  p->parent = parent;
  if (o->type == HWLOC_OBJ_BRIDGE && o->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_HOST) {
    p->role = GR_ROLE_HOSTBRIDGE;
    p->domain = o->attr->bridge.downstream.pci.domain;
    p->sec_bus = o->attr->bridge.downstream.pci.secondary_bus;
    p->sub_bus = o->attr->bridge.downstream.pci.subordinate_bus;
    p->bus = p->sec_bus;
    fill_locality(c, o, p);
    return idx;
  }
  const struct hwloc_pcidev_attr_s *a =
      o->type == HWLOC_OBJ_BRIDGE ? &o->attr->bridge.upstream.pci : &o->attr->pcidev;
  p->role = o->type == HWLOC_OBJ_BRIDGE ? GR_ROLE_BRIDGE : GR_ROLE_ENDPOINT;
  p->domain = a->domain;
  p->bus = a->bus;
  p->dev = a->dev;
  p->func = a->func;
  /* hwloc keeps the 16-bit class; the prog-if byte is only needed for NVMe. */
  p->class_id = (unsigned)a->class_id << 8;
  if (a->class_id == 0x0108)
    p->class_id |= 0x02;
  p->vendor = a->vendor_id;
  p->device = a->device_id;
  p->subvendor = a->subvendor_id;
  p->subdevice = a->subdevice_id;
  p->revision = a->revision;
  if (a->linkspeed > 0)
    p->link.recorded_gbps = a->linkspeed;
  if (o->type == HWLOC_OBJ_BRIDGE && o->attr->bridge.downstream_type == HWLOC_OBJ_BRIDGE_PCI) {
    p->sec_bus = o->attr->bridge.downstream.pci.secondary_bus;
    p->sub_bus = o->attr->bridge.downstream.pci.subordinate_bus;
  }
  /* hwloc marks NVLink peers that are switches, even when their class is garbled */
  if (o->subtype && strcmp(o->subtype, "NVSwitch") == 0)
    p->kind = GR_KIND_NVSWITCH;
  if (info(o, "PCIVendor"))
    p->vendor_name = xstrdup(info(o, "PCIVendor"));
  if (info(o, "PCIDevice"))
    p->device_name = xstrdup(info(o, "PCIDevice"));
  if (parent >= 0) {
    const struct gr_pci *par = &c->t->pci[parent];
    p->numa = par->numa;
    p->package = par->package;
    p->cpulist = xstrdup(par->cpulist);
  }
  int snap_numa = info_int(o, GR_INFO_NUMA, -2);
  if (snap_numa >= -1)
    p->numa = snap_numa;
  fill_snapshot_facts(o, p, c->t);
  return idx;
}

static void append_word(char **dst, const char *word)
{
  char *n = *dst ? xasprintf("%s %s", *dst, word) : xstrdup(word);
  free(*dst);
  *dst = n;
}

static void attach_osdev(struct conv *c, hwloc_obj_t o, int idx)
{
  if (idx < 0)
    return;
  struct gr_pci *p = &c->t->pci[idx];
  if (o->name)
    append_word(&p->osdevs, o->name);
  const char *model = info(o, "GPUModel");
  if (model && !p->model)
    p->model = xstrdup(model);
  const char *uuid = info(o, "NVIDIAUUID");
  if (!uuid)
    uuid = info(o, "AMDUUID");
  if (uuid && !p->uuid)
    p->uuid = xstrdup(uuid);
  if (o->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS) {
    p->rdma = true;
    /* the verbs device (mlx5_0), not the netdev beside it: the name NCCL_IB_HCA
     * takes and nvidia-smi's NIC legend prints; a function has one */
    if (o->name && !p->rdma_name)
      p->rdma_name = xstrdup(o->name);
  }
}

static void walk_io(struct conv *c, hwloc_obj_t obj, int parent)
{
  for (hwloc_obj_t ch = obj->io_first_child; ch; ch = ch->next_sibling) {
    if (ch->type == HWLOC_OBJ_BRIDGE || ch->type == HWLOC_OBJ_PCI_DEVICE) {
      int idx = add_node(c, ch, parent);
      walk_io(c, ch, idx);
    } else if (ch->type == HWLOC_OBJ_OS_DEVICE) {
      attach_osdev(c, ch, parent);
    }
  }
}

static void walk_normal(struct conv *c, hwloc_obj_t obj)
{
  walk_io(c, obj, -1);
  for (hwloc_obj_t ch = obj->first_child; ch; ch = ch->next_sibling)
    walk_normal(c, ch);
}

void gr_hwloc_cpus(hwloc_topology_t topo, struct gr_topo *t)
{
  int np = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE);
  int nn = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
  t->packages = xcalloc((size_t)(np > 0 ? np : 1), sizeof(*t->packages));
  t->numas = xcalloc((size_t)(nn > 0 ? nn : 1), sizeof(*t->numas));
  for (int i = 0; i < np; i++) {
    hwloc_obj_t o = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PACKAGE, (unsigned)i);
    struct gr_package *g = &t->packages[t->npackages++];
    g->os_index = (int)o->os_index;
    g->cpu_vendor = xstrdup(info(o, "CPUVendor"));
    g->cpu_model = xstrdup(info(o, "CPUModel"));
    g->cpu_family = info_int(o, "CPUFamilyNumber", -1);
    g->cpu_model_number = info_int(o, "CPUModelNumber", -1);
    g->rc_p2p = -1;
  }
  for (int i = 0; i < nn; i++) {
    hwloc_obj_t o = hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE, (unsigned)i);
    struct gr_numa *n = &t->numas[t->nnumas++];
    n->os_index = (int)o->os_index;
    n->mem_bytes = o->attr->numanode.local_memory;
    n->package = package_of(topo, o);
  }
  hwloc_obj_t root = hwloc_get_root_obj(topo);
  t->product = xstrdup(info(root, "DMIProductName"));
  t->hostname = xstrdup(info(root, "HostName"));
}

/* hwloc stores NVLink bandwidth in MB/s per direction: 20000 per NVLink 1.0
 * link, 25000 per link of later versions (hwloc topology-nvml.c). A bonded
 * value is a whole multiple; prefer 25000 when both divide. */
static int nvlink_count(double mbps)
{
  long v = lround(mbps);
  if (v > 0 && v % 25000 == 0)
    return (int)(v / 25000);
  if (v > 0 && v % 20000 == 0)
    return (int)(v / 20000);
  return v > 0 ? 1 : 0;
}

static int obj_to_index(struct conv *c, hwloc_obj_t o, int *peer_package)
{
  *peer_package = -1;
  if (o->type == HWLOC_OBJ_OS_DEVICE)
    o = o->parent;
  if (o && (o->type == HWLOC_OBJ_PCI_DEVICE || o->type == HWLOC_OBJ_BRIDGE)) {
    for (size_t i = 0; i < c->t->npci; i++)
      if (c->objs[i] == o)
        return (int)i;
    return -2;
  }
  if (o && o->cpuset) {
    *peer_package = package_of(c->topo, o);
    return -1;
  }
  return -2;
}

static void fill_nvlinks(struct conv *c)
{
  unsigned nr = 1;
  struct hwloc_distances_s *d = NULL;
  if (hwloc_distances_get_by_name(c->topo, "NVLinkBandwidth", &nr, &d, 0) != 0 || nr == 0)
    return;
  unsigned n = d->nbobjs;
  for (unsigned i = 0; i < n; i++) {
    for (unsigned j = i + 1; j < n; j++) {
      double mbps = (double)d->values[i * n + j];
      if (mbps <= 0 || mbps >= 1e6) /* hwloc puts an artificial 1 TB/s on the diagonal */
        continue;
      int pa, pb, ia = obj_to_index(c, d->objs[i], &pa), ib = obj_to_index(c, d->objs[j], &pb);
      if (ia == -2 || ib == -2 || (ia == -1 && ib == -1))
        continue;
      if (ia == -1) { /* keep the CPU peer on the b side */
        ia = ib;
        ib = -1;
        pb = pa;
      }
      gr_topo_add_gpulink(c->t, ia, ib, pb, nvlink_count(mbps), mbps / 1000.0);
    }
  }
  hwloc_distances_release(c->topo, d);
}

/* The endpoint at bus id s ("0004:04:00.0"), or NULL. */
static struct gr_pci *endpoint_at(struct gr_topo *t, const char *s)
{
  unsigned dom, bus, dev, fn;
  if (!s || !gr_parse_busid(s, &dom, &bus, &dev, &fn))
    return NULL;
  for (size_t i = 0; i < t->npci; i++) {
    struct gr_pci *p = &t->pci[i];
    if (p->role == GR_ROLE_ENDPOINT && p->domain == dom && p->bus == bus && p->dev == dev && p->func == fn)
      return p;
  }
  return NULL;
}

/* Whether GPU memory node o names its GPU better than cur (NULL: none yet):
 * one that holds memory, then the lowest number. */
static bool better_gpu_node(hwloc_obj_t o, hwloc_obj_t cur)
{
  if (!cur)
    return true;
  bool mem = o->attr->numanode.local_memory > 0, cur_mem = cur->attr->numanode.local_memory > 0;
  return mem != cur_mem ? mem : o->os_index < cur->os_index;
}

/* hwloc marks a NUMA node of GPU memory with the subtype "GPUMemory" and
 * names its GPU in the info "PCIBusID" (topology-linux.c; on POWER9 only
 * with HWLOC_KEEP_NVIDIA_GPU_NUMA_NODES=1 set when it ran). Grace Hopper
 * lists several nodes per GPU (one per MIG slice, the memory in the first). */
void gr_hwloc_gpu_numa(hwloc_topology_t topo, struct gr_topo *t)
{
  int nn = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
  for (int i = 0; i < nn; i++) {
    hwloc_obj_t o = hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE, (unsigned)i);
    if (!is_gpu_memory(o))
      continue;
    struct gr_pci *p = endpoint_at(t, info(o, "PCIBusID"));
    if (!p)
      continue;
    hwloc_obj_t cur = p->gpu_numa >= 0 ? hwloc_get_numanode_obj_by_os_index(topo, (unsigned)p->gpu_numa) : NULL;
    if (better_gpu_node(o, cur))
      p->gpu_numa = (int)o->os_index;
  }
}

/* The fabric line on the root ("FROM GEN NSWITCHES"); false when absent,
 * malformed or an inference (made again on reading, never recorded as fact). */
struct snap_fabric {
  enum gr_fabric_from from;
  int gen, nswitches;
};

static bool snapshot_fabric(struct conv *c, struct snap_fabric *sf)
{
  const char *v = info(hwloc_get_root_obj(c->topo), GR_INFO_FABRIC);
  char from[16];
  if (!v || sscanf(v, "%15s %d %d", from, &sf->gen, &sf->nswitches) != 3 || sf->gen < 0 || sf->gen > 9 ||
      sf->nswitches < 0 || sf->nswitches > 4096)
    return false;
  sf->from = GR_FABRIC_NVML;
  for (int k = GR_FABRIC_HWLOC; k <= GR_FABRIC_INFERRED; k++)
    if (strcmp(from, gr_fabric_from_name((enum gr_fabric_from)k)) == 0)
      sf->from = (enum gr_fabric_from)k;
  return sf->from != GR_FABRIC_INFERRED;
}

static bool plausible_links(int count, double gbps)
{
  return count > 0 && count <= 64 && gbps >= 0 && gbps < 1e5;
}

/* One GPU's recorded NVLinks; its fabric links join the fabric sf names,
 * made at the first member (*f NULL before). */
static void snapshot_nvlink_infos(struct conv *c, size_t i, const struct snap_fabric *sf, struct gr_fabric **f)
{
  hwloc_obj_t o = c->objs[i];
  for (unsigned k = 0; k < o->infos_count; k++) {
    const char *name = o->infos[k].name, *v = o->infos[k].value;
    char peer[40];
    int count, pkg;
    double gbps;
    if (!name || !v)
      continue;
    if (strcmp(name, GR_INFO_NVLINK) == 0 && sscanf(v, "cpu %d %d %lf", &pkg, &count, &gbps) == 3) {
      if (plausible_links(count, gbps))
        gr_topo_add_gpulink(c->t, (int)i, -1, pkg, count, gbps);
    } else if (strcmp(name, GR_INFO_NVLINK) == 0 && sscanf(v, "%39s %d %lf", peer, &count, &gbps) == 3) {
      struct gr_pci *p = endpoint_at(c->t, peer);
      if (p && plausible_links(count, gbps))
        gr_topo_add_gpulink(c->t, (int)i, (int)(p - c->t->pci), -1, count, gbps);
    } else if (strcmp(name, GR_INFO_FABRIC_LINKS) == 0 && sf && sscanf(v, "%d %lf", &count, &gbps) == 2 &&
               plausible_links(count, gbps)) {
      if (!*f)
        *f = gr_topo_add_fabric(c->t, sf->from, sf->gen, sf->nswitches, NULL);
      gr_fabric_add_links(*f, (int)i, count, gbps);
    }
  }
}

/* The driver's NVLink a gpurig snapshot recorded (hwloc_internal.h
 * GR_INFO_NVLINK, GR_INFO_FABRIC*): read only where hwloc itself recorded
 * none. A malformed value is skipped: the file is gpurig's own, but a user
 * may have edited it. */
static void fill_snapshot_nvlinks(struct conv *c)
{
  struct gr_fabric *f = NULL;
  struct snap_fabric sf;
  if (c->t->ngpulinks || !info(hwloc_get_root_obj(c->topo), GR_INFO_SNAPSHOT))
    return;
  bool have_fabric = snapshot_fabric(c, &sf);
  for (size_t i = 0; i < c->t->npci; i++)
    if (c->objs[i] && c->t->pci[i].role == GR_ROLE_ENDPOINT)
      snapshot_nvlink_infos(c, i, have_fabric ? &sf : NULL, &f);
}

int gr_topo_from_hwloc(hwloc_topology_t topo, struct gr_topo *t, hwloc_obj_t **objs, struct gr_err *err)
{
  struct conv c = {.topo = topo, .t = t};
  (void)err;
  gr_hwloc_cpus(topo, t);
  walk_normal(&c, hwloc_get_root_obj(topo));
  gr_hwloc_gpu_numa(topo, t);
  fill_nvlinks(&c);
  fill_snapshot_nvlinks(&c);
  if (info(hwloc_get_root_obj(topo), GR_INFO_SNAPSHOT))
    t->link_details = true;
  if (objs)
    *objs = c.objs;
  else
    free(c.objs);
  return 0;
}

/* ---- hwloc and the process: the one place (see hwloc_internal.h) ---- */

/* One environment variable set for a load and put back after it. */
struct env_var {
  const char *name;
  char *old; /* its value before, NULL if it was unset */
};

struct env_saved {
  struct env_var v[3]; /* HWLOC_FSROOT, HWLOC_PLUGINS_BLACKLIST, HWLOC_XML_VERBOSE */
  size_t n;
};

/* Sets name to value (NULL: unsets it), remembering what was there. */
static void env_set(struct env_saved *s, const char *name, const char *value)
{
  const char *cur = getenv(name);
  struct env_var *v = &s->v[s->n++];
  v->name = name;
  v->old = cur ? xstrdup(cur) : NULL;
  if (value)
    setenv(name, value, 1);
  else
    unsetenv(name);
}

/* Sets what hwloc reads from the environment at init and load for src;
 * env_restore puts back what was there. */
static void env_prepare(struct env_saved *s, const struct gr_hwloc_src *src)
{
  s->n = 0;
  /* the root prefix reaches hwloc here and nowhere else; the live machine
   * is "/" whatever HWLOC_FSROOT the user has set */
  if (src->fs)
    env_set(s, "HWLOC_FSROOT", gr_fs_is_live(src->fs) ? NULL : src->fs->root);
  /* hwloc's Linux backend reads PCI from sysfs itself (honouring the root
   * prefix); the libpciaccess plugin would read the live machine's config
   * space even when replaying a tree (and leaks doing it). The GL and OpenCL
   * plugins would start display and OpenCL runtimes only to name devices.
   * The libxml2 plugin costs more than hwloc's own XML parser (dlopen of
   * libxml2, ICU and libstdc++, then a DOM) for the same topology: it is let
   * in only to name the line of a syntax error. hwloc reads this list at the
   * first hwloc_topology_init while no topology exists. A user's own
   * setting wins. */
  if (!getenv("HWLOC_PLUGINS_BLACKLIST"))
    env_set(s, "HWLOC_PLUGINS_BLACKLIST",
            src->libxml ? "hwloc_pci,hwloc_gl,hwloc_opencl" : "hwloc_pci,hwloc_gl,hwloc_opencl,hwloc_xml_libxml");
  /* both XML parsers stay silent about the why unless asked; their words go
   * to the capture */
  if (!src->fs)
    env_set(s, "HWLOC_XML_VERBOSE", "1");
}

static void env_restore(struct env_saved *s)
{
  while (s->n > 0) {
    struct env_var *v = &s->v[--s->n];
    if (v->old)
      setenv(v->name, v->old, 1);
    else
      unsetenv(v->name);
    free(v->old);
  }
}

/* Captures what hwloc and libxml2 print on stderr between begin and end:
 * their complaints become one line of gpurig's instead of several of theirs. */
struct quiet {
  FILE *tmp;
  int saved; /* the real stderr, -1 if not redirected */
};

static void quiet_begin(struct quiet *q)
{
  fflush(stderr);
  q->saved = -1;
  /* an anonymous in-memory file: no filesystem work on every load */
  int fd = memfd_create("gpurig-hwloc-stderr", MFD_CLOEXEC);
  q->tmp = fd >= 0 ? fdopen(fd, "w+") : tmpfile();
  if (!q->tmp && fd >= 0)
    close(fd);
  if (q->tmp) {
    q->saved = dup(STDERR_FILENO);
    dup2(fileno(q->tmp), STDERR_FILENO);
  }
}

/* Restores stderr and keeps the first non-empty line captured in msg. */
static void quiet_end(struct quiet *q, char *msg, size_t cap)
{
  char line[512];
  if (!q->tmp)
    return;
  fflush(stderr);
  dup2(q->saved, STDERR_FILENO);
  close(q->saved);
  rewind(q->tmp);
  while (!msg[0] && fgets(line, sizeof(line), q->tmp)) {
    str_rtrim(line);
    if (line[0])
      snprintf(msg, cap, "%s", line);
  }
  fclose(q->tmp);
}

/* libhwloc 2.9 dereferences NULL on some malformed XML (an object with a
 * cpuset but no complete_cpuset crashes lstopo too; see
 * fuzz/regress/). Bad input must never crash gpurig, so while hwloc parses,
 * a fault ends the process with one line and the bad-input status. The
 * message is formatted beforehand: a signal handler may only write(). */
static const int crash_sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
#define NCRASH_SIGS (sizeof(crash_sigs) / sizeof(crash_sigs[0]))
static char crash_msg[1200];
static size_t crash_len;
static int crash_fd = STDERR_FILENO;

static void on_hwloc_crash(int sig)
{
  (void)sig;
  if (write(crash_fd, crash_msg, crash_len) < 0) {
    /* nothing more can be done inside a signal handler */
  }
  _exit(GR_EXIT_FAIL);
}

/* The handler runs on its own stack: a stack overflow inside hwloc's
 * recursive parser leaves no room on the thread's stack for it. */
#define CRASH_STACK_BYTES (256u << 10)
static void *crash_stack;
static stack_t saved_stack;

static void crash_stack_set(bool on)
{
  if (on) {
    crash_stack = xmalloc(CRASH_STACK_BYTES);
    stack_t ss = {.ss_sp = crash_stack, .ss_size = CRASH_STACK_BYTES, .ss_flags = 0};
    sigaltstack(&ss, &saved_stack);
  } else {
    sigaltstack(&saved_stack, NULL);
    free(crash_stack);
    crash_stack = NULL;
  }
}

static void crash_guard(bool on, const char *name, int fd, struct sigaction *saved)
{
  crash_stack_set(on);
  if (on) {
    crash_len = (size_t)snprintf(crash_msg, sizeof(crash_msg),
                                 "gpurig: %s: libhwloc %s crashed parsing this XML (malformed input); "
                                 "re-export it with `lstopo-no-graphics --whole-io FILE.xml` or `gpurig snapshot`\n",
                                 name, HWLOC_VERSION);
    if (crash_len >= sizeof(crash_msg))
      crash_len = sizeof(crash_msg) - 1;
    crash_fd = fd;
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_hwloc_crash;
    sa.sa_flags = SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < NCRASH_SIGS; i++)
      sigaction(crash_sigs[i], &sa, &saved[i]);
  } else {
    for (size_t i = 0; i < NCRASH_SIGS; i++)
      sigaction(crash_sigs[i], &saved[i], NULL);
  }
}

/* Per-topology settings (no process state): keep every I/O object (or, with
 * no_io, none: then hwloc opens no device's config space), and for
 * a gathered tree leave out what would describe the machine gpurig runs on. */
static void configure(hwloc_topology_t topo, const struct gr_fs *fs, bool no_io)
{
  static const char *live_only[] = {"x86", "nvml", "cuda", "opencl", "rsmi", "levelzero", "gl"};
  hwloc_topology_set_io_types_filter(topo, no_io ? HWLOC_TYPE_FILTER_KEEP_NONE : HWLOC_TYPE_FILTER_KEEP_ALL);
  for (size_t i = 0; fs && !gr_fs_is_live(fs) && i < sizeof(live_only) / sizeof(live_only[0]); i++)
    hwloc_topology_set_components(topo, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, live_only[i]);
}

/* Sets the XML source (libxml2 parses at set time, hwloc's own parser at
 * load time) and loads. Returns 0 or -1. */
static int set_and_load(hwloc_topology_t topo, const struct gr_hwloc_src *src)
{
  if (!src->fs) {
    int set = src->path ? hwloc_topology_set_xml(topo, src->path)
                        : hwloc_topology_set_xmlbuffer(topo, src->buf, (int)src->len);
    if (set != 0)
      return -1;
  }
  return hwloc_topology_load(topo) == 0 ? 0 : -1;
}

enum gr_hwloc_rc gr_hwloc_load(const struct gr_hwloc_src *src, hwloc_topology_t *out, char *msg, size_t cap)
{
  hwloc_topology_t topo = NULL;
  struct env_saved env;
  struct quiet q;
  struct sigaction saved[NCRASH_SIGS];
  enum gr_hwloc_rc rc = GR_HWLOC_INIT_FAILED;
  int saved_errno = 0;
  msg[0] = '\0';
  env_prepare(&env, src);
  if (hwloc_topology_init(&topo) != 0) {
    saved_errno = errno;
    topo = NULL;
    goto out;
  }
  configure(topo, src->fs, src->no_io);
  quiet_begin(&q);
  if (!src->fs)
    crash_guard(true, src->name, q.saved >= 0 ? q.saved : STDERR_FILENO, saved);
  int failed = set_and_load(topo, src);
  saved_errno = errno;
  if (!src->fs)
    crash_guard(false, src->name, STDERR_FILENO, saved);
  quiet_end(&q, msg, cap);
  rc = GR_HWLOC_LOAD_FAILED;
  if (failed)
    goto out;
  *out = topo;
  topo = NULL;
  rc = GR_HWLOC_OK;
out:
  if (topo)
    hwloc_topology_destroy(topo);
  env_restore(&env);
  errno = saved_errno;
  return rc;
}

/* ---- XML ---- */

/* Recognises inputs hwloc would reject with an unhelpful message. */
static int precheck_xml(const char *name, const char *head, size_t n, struct gr_err *err)
{
  if (n == 0)
    return gr_fail(err, GR_EXIT_FAIL, "%s: empty file, expected hwloc XML (write one with `lstopo FILE.xml`)", name);
  if (memchr(head, '\0', n))
    return gr_fail(err, GR_EXIT_FAIL, "%s: binary data, not an XML file", name);
  char *copy = xstrndup(head, n);
  int rc = 0;
  if (strstr(copy, "<system") && !strstr(copy, "<topology")) {
    rc = gr_fail(err, GR_EXIT_FAIL,
                 "%s: this is an NCCL topology file (NCCL_TOPO_FILE format), not hwloc XML; "
                 "on that machine run `lstopo-no-graphics --whole-io FILE.xml` or `gpurig snapshot FILE.xml`",
                 name);
  } else if (!strstr(copy, "<topology")) {
    rc = gr_fail(err, GR_EXIT_FAIL, "%s: not an hwloc XML topology (no <topology> element)", name);
  } else {
    const char *v = strstr(copy, "<topology version=\"");
    if (v && v[19] >= '3' && v[19] <= '9')
      rc = gr_fail(err, GR_EXIT_FAIL,
                   "%s: hwloc XML format %c.x is newer than this libhwloc %s reads; export it with hwloc 2.x "
                   "(`lstopo-no-graphics --whole-io FILE.xml`) or rebuild gpurig against a newer libhwloc",
                   name, v[19], HWLOC_VERSION);
  }
  free(copy);
  return rc;
}

/* Limits on what libhwloc is handed. Its own XML importer (used where the
 * libxml2 plugin is not installed) recurses per nested element and
 * overflows the stack at about 20,000 levels; libxml2 stops at 256, so the
 * same limit holds whichever parser runs. A PU or NUMA node without a sane
 * os_index makes hwloc set bit 2^32-1 of a bitmap: 512 MB from a 20 KB file.
 * Real topologies nest about 20 levels and number fewer than 2^20 CPUs. */
#define XML_MAX_DEPTH 256
#define XML_MAX_OS_INDEX (1ul << 20)

struct xml_scan {
  const char *name, *buf;
  size_t len, pos, line;
  int depth;
  struct gr_err *err;
};

/* The value of attribute attr inside tag [tag, end), or NULL; *n its length. */
static const char *tag_attr(const char *tag, const char *end, const char *attr, size_t *n)
{
  size_t alen = strlen(attr);
  for (const char *p = tag; p + alen + 2 < end; p++) {
    if ((p[-1] == ' ' || p[-1] == '\t' || p[-1] == '\n') && memcmp(p, attr, alen) == 0 && p[alen] == '=' &&
        p[alen + 1] == '"') {
      const char *v = p + alen + 2;
      const char *q = memchr(v, '"', (size_t)(end - v));
      if (!q)
        return NULL;
      *n = (size_t)(q - v);
      return v;
    }
  }
  return NULL;
}

/* An <object> of a type that indexes a bitmap must carry a sane os_index. */
static int check_object(struct xml_scan *x, const char *tag, const char *end)
{
  size_t n = 0, tn = 0;
  const char *type = tag_attr(tag, end, "type", &tn);
  if (!type || !((tn == 2 && memcmp(type, "PU", 2) == 0) || (tn == 8 && memcmp(type, "NUMANode", 8) == 0)))
    return 0;
  const char *v = tag_attr(tag, end, "os_index", &n);
  char num[24];
  unsigned long idx = 0;
  if (v && n > 0 && n < sizeof(num)) {
    memcpy(num, v, n);
    num[n] = '\0';
  }
  if (!v || n == 0 || n >= sizeof(num) || !parse_ulong(num, 10, &idx) || idx >= XML_MAX_OS_INDEX)
    return gr_fail(x->err, GR_EXIT_FAIL, "%s:%zu: a %.*s object without a valid os_index (0 to %lu)", x->name,
                   x->line, (int)tn, type, XML_MAX_OS_INDEX - 1);
  return 0;
}

/* One markup item starting at x->pos ('<'): comments, declarations and
 * processing instructions are skipped, tags change the depth. */
static int scan_tag(struct xml_scan *x)
{
  const char *p = x->buf + x->pos, *end = x->buf + x->len;
  const char *close = NULL;
  if (p + 4 <= end && memcmp(p, "<!--", 4) == 0)
    close = strstr(p + 4, "-->");
  else
    for (const char *q = p + 1; q < end && !close; q++)
      if (*q == '"') {
        const char *e = memchr(q + 1, '"', (size_t)(end - q - 1));
        q = e ? e : end - 1;
      } else if (*q == '>') {
        close = q;
      }
  if (!close)
    close = end - 1; /* unterminated: the parser will say so */
  for (const char *q = p; q < close; q++)
    x->line += *q == '\n';
  x->pos = (size_t)(close - x->buf) + 1;
  if (p[1] == '!' || p[1] == '?')
    return 0;
  if (p[1] == '/') {
    x->depth--;
    return 0;
  }
  if (close[-1] != '/' && ++x->depth > XML_MAX_DEPTH)
    return gr_fail(x->err, GR_EXIT_FAIL, "%s:%zu: elements nested more than %d levels deep (a real topology has "
                   "about 20)", x->name, x->line, XML_MAX_DEPTH);
  if (close - p > 8 && memcmp(p, "<object", 7) == 0 && (p[7] == ' ' || p[7] == '\t' || p[7] == '\n'))
    return check_object(x, p + 7, close);
  return 0;
}

/* Walks the whole document once, in linear time, before hwloc sees it. */
static int scan_xml(const char *name, const char *buf, size_t len, struct gr_err *err)
{
  struct xml_scan x = {.name = name, .buf = buf, .len = len, .line = 1, .err = err};
  while (x.pos < x.len) {
    const char *lt = memchr(buf + x.pos, '<', x.len - x.pos);
    if (!lt)
      break;
    for (const char *q = buf + x.pos; q < lt; q++)
      x.line += *q == '\n';
    x.pos = (size_t)(lt - buf);
    if (scan_tag(&x) != 0)
      return -1;
  }
  return 0;
}

/* One line for a refused XML: libxml2 says "FILE:LINE: parser error : what",
 * hwloc's own parser names no line. */
static int xml_failure(const char *name, const char *msg, struct gr_err *err)
{
  const char *where = strstr(msg, ": parser error : ");
  const char *line = NULL;
  if (where) {
    line = where;
    while (line > msg && line[-1] != ':')
      line--;
  }
  if (where && line > msg)
    return gr_fail(err, GR_EXIT_FAIL, "%s:%.*s: not valid XML: %s", name, (int)(where - line), line,
                   where + strlen(": parser error : "));
  return gr_fail(err, GR_EXIT_FAIL, "%s: not a valid hwloc XML topology%s%s", name, msg[0] ? ": " : "", msg);
}

int gr_hwloc_open_xml(const char *name, const char *path, const char *buf, size_t len, hwloc_topology_t *out,
                      struct gr_err *err)
{
  char msg[512];
  if (precheck_xml(name, buf, len < 65536 ? len : 65536, err) != 0 || scan_xml(name, buf, len, err) != 0)
    return -1;
  struct gr_hwloc_src src = {.name = name, .path = path, .buf = buf, .len = len};
  enum gr_hwloc_rc rc = gr_hwloc_load(&src, out, msg, sizeof(msg));
  if (rc == GR_HWLOC_LOAD_FAILED) {
    /* hwloc's own parser names no line; libxml2, where its plugin is
     * installed, does (and takes what it accepts). Without the plugin the
     * same parser runs again and says the same. */
    src.libxml = true;
    rc = gr_hwloc_load(&src, out, msg, sizeof(msg));
  }
  switch (rc) {
  case GR_HWLOC_OK:
    return 0;
  case GR_HWLOC_INIT_FAILED:
    return gr_fail(err, GR_EXIT_CANNOT_RUN, "%s: hwloc_topology_init failed", name);
  default:
    return xml_failure(name, msg, err);
  }
}

static int load_xml_common(const char *name, const char *path, const char *buf, size_t len, struct gr_topo *t,
                           struct gr_err *err)
{
  hwloc_topology_t topo;
  gr_topo_init(t);
  if (len > (size_t)0x7fffffff)
    return gr_fail(err, GR_EXIT_FAIL, "%s: file too large for hwloc", name);
  if (gr_hwloc_open_xml(name, path, buf, len, &topo, err) != 0)
    return -1;
  int rc = gr_topo_from_hwloc(topo, t, NULL, err);
  hwloc_topology_destroy(topo);
  if (rc == 0) {
    t->source_kind = xstrdup("xml");
    t->source_path = xstrdup(name);
    gr_topo_finish(t);
    gr_topo_fabric_from_gpulinks(t, GR_FABRIC_HWLOC);
  } else {
    gr_topo_free(t);
  }
  return rc;
}

int gr_load_xml_buffer(const char *name, const char *buf, size_t len, struct gr_topo *t, struct gr_err *err)
{
  return load_xml_common(name, NULL, buf, len, t, err);
}

/* hwloc XML of the largest real machines is a few MB; the cap keeps a
 * runaway input (or /dev/zero through standard input) from eating memory. */
#define XML_MAX_BYTES (64u << 20)

int gr_load_xml(const char *path, struct gr_topo *t, struct gr_err *err)
{
  struct gr_file f;
  gr_topo_init(t);
  if (gr_file_read(path, XML_MAX_BYTES, GR_FILE_STDIN, &f, err) != 0) {
    if (err && strstr(err->msg, ": a directory, not a file"))
      gr_fail(err, GR_EXIT_FAIL, "%s: a directory, not an XML file (for a gathered /sys tree use --root DIR)", path);
    return -1;
  }
  /* a regular file is handed to hwloc by name (libxml2 then names the line
   * of a syntax error); a stream cannot be read twice, so its bytes go */
  const char *name = f.from_stdin ? "standard input" : path;
  int rc = load_xml_common(name, f.regular && !f.from_stdin ? path : NULL, f.data, f.len, t, err);
  gr_file_free(&f);
  return rc;
}
