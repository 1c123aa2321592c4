/* The light live loader (gr_load_live_gpus, loaders.h), for commands that
 * need the GPUs and the paths to them, not every device (plan, report).
 *
 * libhwloc's PCI discovery opens every device's config space before its type
 * filter applies; a config read goes to the device (one in a low-power state
 * is woken for it) and is refused to a non-root user past the first 64 bytes.
 * Here hwloc reads the CPUs and memory only, and gpurig walks
 * /sys/bus/pci/devices itself: the class, vendor and device files of every
 * device (which the kernel keeps in memory), the sysfs path for the
 * hierarchy, and then, for the devices kept alone, the same per-device files
 * as the whole loader (gr_sysfs_overlay). Kept are the devices whose kind
 * the analysis and printers use (GPUs, other accelerators, NICs, NVMe
 * drives, NVSwitches: model/topo.h's gr_kind_from_ids), the bridges above
 * them, and everything below a switch that is kept, since a switch's uplink
 * budget counts every link under it. The result is the same model as
 * gr_load_live builds (the same fields from the same files where hwloc read
 * sysfs, the same node order), so that the analysis and printers are shared
 * and a command stays a source, the machine pipeline and a printer. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "load/hwloc_internal.h"
#include "load/loaders.h"

#define PCI_DEVICES "/sys/bus/pci/devices"

struct dev {
  unsigned dom, bus, dev, fn;
  unsigned cls, vendor, device; /* cls as hwloc keeps it (see class_as_hwloc) */
  unsigned root_bus;            /* the root bus it hangs from, in domain dom: its host bridge */
  char *path;                   /* its sysfs path (/sys/devices/pci0000:00/...), NULL when flat */
  bool flat, bridge, keep;
  int parent;                   /* index in the sorted array, -1 on the root bus */
  int first_child, next_sibling;
};

struct scan {
  const struct gr_fs *fs;
  struct dev *d;
  size_t n, cap;
};

/* hwloc keeps the 16-bit class (and gr_topo_from_hwloc adds NVMe's prog-if):
 * the same here, so that both loaders give one model. */
static unsigned class_as_hwloc(unsigned long cls)
{
  unsigned c = (unsigned)(cls >> 8) << 8;
  return (cls >> 8) == 0x0108 ? c | 0x02 : c;
}

static bool read_num(const struct gr_fs *fs, const char *name, const char *attr, int base, unsigned long *v)
{
  char path[600], buf[64];
  snprintf(path, sizeof(path), PCI_DEVICES "/%s/%s", name, attr);
  return gr_fs_read_str(fs, path, buf, sizeof(buf)) == 0 && parse_ulong(buf, base, v);
}

static bool read_hex(const struct gr_fs *fs, const char *name, const char *attr, unsigned long *v)
{
  return read_num(fs, name, attr, 16, v);
}

/* The device's place in the hierarchy from its sysfs path
 * (/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0): the root bus, and the
 * path for link_devices. A plain directory (a tree gathered without the
 * hierarchy) is on a root bus of its own bus number, as hwloc shows it. */
static void place(const struct gr_fs *fs, const char *name, struct dev *d)
{
  char rel[512], target[4096];
  snprintf(rel, sizeof(rel), PCI_DEVICES "/%s", name);
  d->root_bus = d->bus;
  if (gr_fs_resolve(fs, rel, target, sizeof(target)) != 0) {
    d->flat = true;
    return;
  }
  d->path = xstrdup(target);
  for (char *save = NULL, *c = strtok_r(target, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
    unsigned dom, rb;
    char tail;
    if (sscanf(c, "pci%x:%x%c", &dom, &rb, &tail) == 2)
      d->root_bus = rb;
  }
}

/* A device the NVIDIA driver holds is NVIDIA's whatever its files say (a
 * tree gathered with `class` alone: gr_sysfs_overlay does the same). */
static bool nvidia_driver_gpu(const struct gr_fs *fs, const char *name)
{
  char path[128];
  snprintf(path, sizeof(path), "/proc/driver/nvidia/gpus/%.40s", name);
  DIR *d = gr_fs_opendir(fs, path);
  if (d)
    closedir(d);
  return d != NULL;
}

/* Every device of the tree, by its class, vendor and device files: nothing
 * else is read of a device that is not kept. */
static void scan_devices(struct scan *s, DIR *dir)
{
  struct dirent *e;
  while ((e = readdir(dir))) {
    struct dev d = {.parent = -1, .first_child = -1, .next_sibling = -1};
    unsigned long cls, v;
    /* hwloc, built with 16-bit PCI domains, leaves out those in 32-bit ones
     * (the overlay warns of them): the same devices here */
    if (e->d_name[0] == '.' || !gr_parse_busid(e->d_name, &d.dom, &d.bus, &d.dev, &d.fn) || d.dom > 0xffff ||
        !read_hex(s->fs, e->d_name, "class", &cls))
      continue;
    d.cls = class_as_hwloc(cls);
    d.vendor = read_hex(s->fs, e->d_name, "vendor", &v) ? (unsigned)v : 0;
    d.device = read_hex(s->fs, e->d_name, "device", &v) ? (unsigned)v : 0;
    if (!d.vendor)
      d.vendor = nvidia_driver_gpu(s->fs, e->d_name) ? 0x10de : 0;
    place(s->fs, e->d_name, &d);
    /* without the hierarchy hwloc cannot tell a bridge (its config space says
     * so), and shows it as a device */
    d.bridge = !d.flat && (d.cls >> 8) == 0x0604;
    grow_array((void **)&s->d, sizeof(*s->d), &s->cap, s->n);
    s->d[s->n++] = d;
  }
}

static int cmp_dev(const void *x, const void *y)
{
  const struct dev *a = x, *b = y;
  unsigned ka[4] = {a->dom, a->bus, a->dev, a->fn}, kb[4] = {b->dom, b->bus, b->dev, b->fn};
  for (int i = 0; i < 4; i++)
    if (ka[i] != kb[i])
      return ka[i] < kb[i] ? -1 : 1;
  return 0;
}

/* The nearest bridge above d in its path that is in the tree: a bridge the
 * kernel hides from the device list (one of a switch's ports, on some
 * boards) is passed over, as hwloc's placement by bus range passes it. */
static int parent_of(const struct scan *s, const struct dev *d)
{
  if (!d->path)
    return -1;
  char *copy = xstrdup(d->path);
  int found = -1;
  for (char *end = strrchr(copy, '/'); end && found < 0; end = strrchr(copy, '/')) {
    *end = '\0';
    const char *c = strrchr(copy, '/');
    struct dev key = {0};
    if (!c || !gr_parse_busid(c + 1, &key.dom, &key.bus, &key.dev, &key.fn))
      break; /* the root bus (pciDDDD:BB) or above: none */
    const struct dev *p = bsearch(&key, s->d, s->n, sizeof(*s->d), cmp_dev);
    if (p && p->bridge)
      found = (int)(p - s->d);
  }
  free(copy);
  return found;
}

/* Parents and children by index, children in bus-id order. A parent that is
 * not in the tree (a partial tree) leaves the device on its root bus. */
static void link_devices(struct scan *s)
{
  if (s->n > 1)
    qsort(s->d, s->n, sizeof(*s->d), cmp_dev);
  for (size_t i = 0; i < s->n; i++)
    s->d[i].parent = parent_of(s, &s->d[i]);
  for (size_t i = s->n; i-- > 0;) {
    struct dev *d = &s->d[i];
    if (d->parent >= 0) {
      d->next_sibling = s->d[d->parent].first_child;
      s->d[d->parent].first_child = (int)i;
    }
  }
}

static bool wanted_kind(enum gr_kind k)
{
  return k == GR_KIND_GPU || k == GR_KIND_ACCEL || k == GR_KIND_NIC || k == GR_KIND_NVME || k == GR_KIND_NVSWITCH;
}

/* A bridge below a bridge that is kept: a switch port, or a bridge behind one. */
static bool kept_switch(const struct scan *s, int i)
{
  const struct dev *d = &s->d[i];
  return d->bridge && d->keep && d->parent >= 0;
}

static void mark_kept(struct scan *s)
{
  for (size_t i = 0; i < s->n; i++) {
    struct dev *d = &s->d[i];
    if (d->bridge || !wanted_kind(gr_kind_from_ids(d->cls, d->vendor, d->device)))
      continue;
    for (int k = (int)i; k >= 0 && !s->d[k].keep; k = s->d[k].parent)
      s->d[k].keep = true;
  }
  /* parents sort before their children (a bridge's secondary bus is above
   * its own), so one pass carries a kept switch down its whole subtree */
  bool *below = xcalloc(s->n + 1, sizeof(bool));
  for (size_t i = 0; i < s->n; i++) {
    int p = s->d[i].parent;
    below[i] = p >= 0 && (below[p] || kept_switch(s, p));
    s->d[i].keep |= below[i];
  }
  free(below);
}

/* One root bus with something kept on it: its host bridge. */
struct root {
  unsigned dom, bus, sub;
  int first; /* the first device on it (kept or not): hwloc asks its local_cpus */
  int rank;  /* where hwloc's tree would put it (gr_hwloc_bus_locality) */
  struct gr_pci loc; /* the locality found: numa, package, cpulist */
};

static int cmp_root(const void *x, const void *y)
{
  const struct root *a = x, *b = y;
  if (a->rank != b->rank)
    return a->rank < b->rank ? -1 : 1;
  if (a->dom != b->dom)
    return a->dom < b->dom ? -1 : 1;
  return a->bus < b->bus ? -1 : a->bus > b->bus;
}

/* The kernel's CPU mask ("ffffffff,00000000": 32-bit words, the highest
 * first) as an hwloc set; false if malformed. */
static bool parse_cpumask(const char *s, hwloc_bitmap_t set)
{
  size_t nwords = 1;
  for (const char *p = s; *p; p++)
    nwords += *p == ',';
  hwloc_bitmap_zero(set);
  for (size_t w = nwords; w-- > 0;) {
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 16);
    if (errno || end == s || v > 0xffffffffUL || (*end != ',' && *end != '\0'))
      return false;
    for (unsigned b = 0; b < 32; b++)
      if (v & (1UL << b))
        hwloc_bitmap_set(set, (unsigned)(w * 32 + b));
    s = *end ? end + 1 : end;
  }
  return true;
}

static void root_locality(const struct scan *s, hwloc_topology_t topo, struct root *r)
{
  const struct dev *d = &s->d[r->first];
  char path[128], buf[1200];
  hwloc_bitmap_t set = hwloc_bitmap_alloc();
  snprintf(path, sizeof(path), PCI_DEVICES "/%04x:%02x:%02x.%x/local_cpus", d->dom, d->bus, d->dev, d->fn);
  bool ok = gr_fs_read_str(s->fs, path, buf, sizeof(buf)) == 0 && parse_cpumask(buf, set);
  r->loc.numa = r->loc.package = -1;
  gr_hwloc_bus_locality(topo, ok ? set : NULL, &r->loc, &r->rank);
  hwloc_bitmap_free(set);
}

/* Older kernels have no subordinate_bus_number: the highest bus the bridge
 * opens (its pci_bus/DDDD:BB directories) stands in for it. */
static bool bus_below(const struct gr_fs *fs, const char *name, unsigned long *v)
{
  char path[128];
  snprintf(path, sizeof(path), PCI_DEVICES "/%s/pci_bus", name);
  DIR *dir = gr_fs_opendir(fs, path);
  struct dirent *e;
  bool any = false;
  unsigned dom, bus;
  char tail;
  while (dir && (e = readdir(dir)))
    if (sscanf(e->d_name, "%x:%x%c", &dom, &bus, &tail) == 2 && (!any || bus > *v)) {
      *v = bus;
      any = true;
    }
  if (dir)
    closedir(dir);
  return any;
}

/* The bus range below a host bridge, as hwloc gives it: its root bus to the
 * highest subordinate bus of the bridges on it (sysfs keeps that number, so
 * no config space is read), at least every bus seen below it. */
static void root_range(const struct scan *s, struct root *r)
{
  r->sub = r->bus;
  for (size_t i = 0; i < s->n; i++) {
    const struct dev *d = &s->d[i];
    unsigned long v;
    char name[32];
    if (d->dom != r->dom || d->root_bus != r->bus)
      continue;
    if (d->bus > r->sub)
      r->sub = d->bus;
    snprintf(name, sizeof(name), "%04x:%02x:%02x.%x", d->dom, d->bus, d->dev, d->fn);
    if (d->parent < 0 && d->bridge && (read_num(s->fs, name, "subordinate_bus_number", 10, &v) || bus_below(s->fs, name, &v)) &&
        v > r->sub && v < 256)
      r->sub = (unsigned)v;
  }
}

/* A kept device and, depth first, the kept devices below it: the order
 * gr_topo_from_hwloc walks hwloc's I/O tree in. The fields hwloc takes from
 * config space come from their sysfs files here (bridges' bus ranges,
 * subsystem ids); the link, NUMA node and the rest from the overlay, as for
 * the whole loader. */
static void add_device(const struct scan *s, struct gr_topo *t, int i, int parent)
{
  const struct dev *d = &s->d[i];
  char name[32];
  unsigned long v;
  snprintf(name, sizeof(name), "%04x:%02x:%02x.%x", d->dom, d->bus, d->dev, d->fn);
  int idx = gr_topo_add_pci(t);
  struct gr_pci *p = &t->pci[idx];
  const struct gr_pci *par = &t->pci[parent];
  p->parent = parent;
  p->role = d->bridge ? GR_ROLE_BRIDGE : GR_ROLE_ENDPOINT;
  p->domain = d->dom, p->bus = d->bus, p->dev = d->dev, p->func = d->fn;
  p->class_id = d->cls, p->vendor = d->vendor, p->device = d->device;
  p->subvendor = read_hex(s->fs, name, "subsystem_vendor", &v) ? (unsigned)v : 0;
  p->subdevice = read_hex(s->fs, name, "subsystem_device", &v) ? (unsigned)v : 0;
  p->revision = read_hex(s->fs, name, "revision", &v) ? (unsigned)v : 0;
  if (d->bridge) {
    p->sec_bus = read_num(s->fs, name, "secondary_bus_number", 10, &v) ? (unsigned)v : 0;
    p->sub_bus = read_num(s->fs, name, "subordinate_bus_number", 10, &v) ? (unsigned)v : 0;
  }
  p->numa = par->numa;
  p->package = par->package;
  p->cpulist = xstrdup(par->cpulist);
  for (int k = d->first_child; k >= 0; k = s->d[k].next_sibling)
    if (s->d[k].keep)
      add_device(s, t, k, idx);
}

/* The host bridges of the root buses with something kept, in the order of
 * hwloc's tree, each with its kept devices. */
static void add_roots(const struct scan *s, hwloc_topology_t topo, struct gr_topo *t)
{
  struct root *r = NULL;
  size_t nr = 0, cap = 0;
  for (size_t i = 0; i < s->n; i++) {
    const struct dev *d = &s->d[i];
    size_t k = 0;
    while (k < nr && !(r[k].dom == d->dom && r[k].bus == d->root_bus))
      k++;
    if (d->parent >= 0 || k < nr)
      continue;
    grow_array((void **)&r, sizeof(*r), &cap, nr);
    r[nr++] = (struct root){.dom = d->dom, .bus = d->root_bus, .first = (int)i};
  }
  size_t keep = 0;
  for (size_t k = 0; k < nr; k++) {
    bool any = false;
    for (size_t i = 0; i < s->n && !any; i++)
      any = s->d[i].keep && s->d[i].parent < 0 && s->d[i].dom == r[k].dom && s->d[i].root_bus == r[k].bus;
    if (!any)
      continue;
    r[keep] = r[k];
    root_locality(s, topo, &r[keep]);
    root_range(s, &r[keep]);
    keep++;
  }
  if (keep > 1)
    qsort(r, keep, sizeof(*r), cmp_root);
  for (size_t k = 0; k < keep; k++) {
    int hb = gr_topo_add_pci(t);
    struct gr_pci *p = &t->pci[hb];
    p->role = GR_ROLE_HOSTBRIDGE;
    p->parent = -1;
    p->domain = r[k].dom;
    p->bus = p->sec_bus = r[k].bus;
    p->sub_bus = r[k].sub;
    p->numa = r[k].loc.numa;
    p->package = r[k].loc.package;
    p->cpulist = r[k].loc.cpulist;
    for (size_t i = 0; i < s->n; i++)
      if (s->d[i].keep && s->d[i].parent < 0 && s->d[i].dom == r[k].dom && s->d[i].root_bus == r[k].bus)
        add_device(s, t, (int)i, hb);
  }
  free(r);
}

/* The kept device (or bridge) at the last bus id of a sysfs path, or NULL. */
static struct gr_pci *device_in_path(struct gr_topo *t, char *path)
{
  unsigned dom = 0, bus = 0, dv = 0, fn = 0, a, b, c, e;
  bool any = false;
  for (char *save = NULL, *p = strtok_r(path, "/", &save); p; p = strtok_r(NULL, "/", &save))
    if (gr_parse_busid(p, &a, &b, &c, &e)) {
      dom = a, bus = b, dv = c, fn = e;
      any = true;
    }
  for (size_t i = 0; any && i < t->npci; i++) {
    struct gr_pci *q = &t->pci[i];
    if (q->role != GR_ROLE_HOSTBRIDGE && q->domain == dom && q->bus == bus && q->dev == dv && q->func == fn)
      return q;
  }
  return NULL;
}

/* The OS devices of the kept devices, as hwloc's Linux backend names them:
 * from these classes in this order, each in its directory's order
 * (topology-linux.c), leaving out partitions and display connectors; an
 * InfiniBand device makes its function an RDMA NIC (gr_topo_from_hwloc's
 * attach_osdev). */
static void add_osdevs(const struct gr_fs *fs, struct gr_topo *t)
{
  static const char *const classes[] = {"block", "net", "infiniband", "mic", "ve", "drm", "dma"};
  for (size_t k = 0; k < sizeof(classes) / sizeof(classes[0]); k++) {
    char dirpath[64], rel[600], target[4096], v[16];
    snprintf(dirpath, sizeof(dirpath), "/sys/class/%s", classes[k]);
    DIR *dir = gr_fs_opendir(fs, dirpath);
    struct dirent *e;
    while (dir && (e = readdir(dir))) {
      snprintf(rel, sizeof(rel), "%s/%.255s", dirpath, e->d_name);
      if (e->d_name[0] == '.' || (k == 5 && strchr(e->d_name, '-')) || gr_fs_resolve(fs, rel, target, sizeof(target)))
        continue;
      snprintf(rel, sizeof(rel), "%s/%.255s/partition", dirpath, e->d_name);
      if (k == 0 && gr_fs_read_str(fs, rel, v, sizeof(v)) != -ENOENT)
        continue;
      struct gr_pci *p = device_in_path(t, target);
      if (!p)
        continue;
      char *n = p->osdevs ? xasprintf("%s %s", p->osdevs, e->d_name) : xstrdup(e->d_name);
      free(p->osdevs);
      p->osdevs = n;
      if (k == 2) {
        p->rdma = true;
        if (!p->rdma_name)
          p->rdma_name = xstrdup(e->d_name);
      }
    }
    if (dir)
      closedir(dir);
  }
}

static size_t count_devices(const struct scan *s)
{
  size_t n = 0;
  for (size_t i = 0; i < s->n; i++)
    n += !s->d[i].bridge;
  return n;
}

int gr_load_live_gpus(const struct gr_fs *fs, struct gr_topo *t, struct gr_err *err)
{
  hwloc_topology_t topo = NULL;
  struct scan s = {.fs = fs};
  size_t flat = 0;
  gr_topo_init(t);
  if (!gr_fs_is_live(fs) && gr_live_check_tree(fs, &flat, err) != 0)
    return -1;
  if (gr_hwloc_open_live(fs, true, &topo, err) != 0)
    return -1;
  gr_hwloc_cpus(topo, t);
  DIR *dir = gr_fs_opendir(fs, PCI_DEVICES);
  if (dir) {
    scan_devices(&s, dir);
    closedir(dir);
  }
  link_devices(&s);
  mark_kept(&s);
  add_roots(&s, topo, t);
  t->pci_devices_seen = count_devices(&s);
  for (size_t i = 0; i < s.n; i++)
    free(s.d[i].path);
  free(s.d);
  add_osdevs(fs, t);
  gr_hwloc_gpu_numa(topo, t);
  hwloc_topology_destroy(topo);
  if (gr_sysfs_overlay(fs, t, err) != 0) {
    gr_topo_free(t);
    return -1;
  }
  gr_live_finish(fs, t, flat);
  return 0;
}
