/* The live Linux loader: hwloc for tree and locality (gr_hwloc_load hands
 * it the root prefix, so a gathered tree replays), then gpurig's own reads of
 * each PCI device's sysfs directory for the facts hwloc does not keep. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "load/hwloc_internal.h"
#include "load/loaders.h"
#include "facts/pcilink.h"

#define PCI_DEVICES "/sys/bus/pci/devices"

int gr_hwloc_open_live(const struct gr_fs *fs, bool no_io, hwloc_topology_t *out, struct gr_err *err)
{
  /* hwloc's own warnings (e.g. 32-bit PCI domains) are dropped: gpurig
   * reports those itself from sysfs, and keeps stderr for its own lines */
  char msg[512];
  struct gr_hwloc_src src = {.fs = fs, .no_io = no_io};
  switch (gr_hwloc_load(&src, out, msg, sizeof(msg))) {
  case GR_HWLOC_OK:
    return 0;
  case GR_HWLOC_INIT_FAILED:
    return gr_fail(err, GR_EXIT_CANNOT_RUN, "hwloc_topology_init failed");
  default:
    return gr_fail(err, GR_EXIT_CANNOT_RUN, "%s: hwloc could not read this machine's topology: %s",
                   gr_fs_is_live(fs) ? "/" : fs->root, strerror(errno));
  }
}

bool gr_parse_aer_total(const char *text, uint64_t *total)
{
  const char *p = text;
  while (p && *p) {
    const char *nl = strchr(p, '\n');
    size_t n = nl ? (size_t)(nl - p) : strlen(p);
    if (n > 10 && n < 128 && str_starts_with(p, "TOTAL_ERR_")) {
      char line[128];
      memcpy(line, p, n);
      line[n] = '\0';
      char *sp = strrchr(line, ' ');
      unsigned long v;
      if (sp && parse_ulong(sp + 1, 10, &v)) {
        *total = v;
        return true;
      }
      return false;
    }
    p = nl ? nl + 1 : NULL;
  }
  return false;
}

/* One device's sysfs directory, and where problems with its files go: at
 * load, t gets a warning and p keeps the first problem of each kind; in a
 * re-read (gr_load_dynamic) t and p are NULL, nothing is written but the
 * values read, and a malformed value just stays unknown. */
struct devdir {
  const struct gr_fs *fs;
  struct gr_topo *t;
  struct gr_pci *p;
  char dir[128]; /* /sys/bus/pci/devices/<bdf> */
  int dirfd;     /* that directory opened (a re-read with gr_dyn_dirs), else -1 */
};

/* A malformed attribute: one loader warning, and the first per device kept
 * in the model (*slot) so that doctor can name the file. Load only. */
static void note_problem(struct devdir *d, char **slot, const char *attr, const char *problem, const char *value)
{
  char *msg = value ? xasprintf("%s%s/%s: %s \"%s\"", d->fs->root, d->dir, attr, problem, value)
                    : xasprintf("%s%s/%s: %s", d->fs->root, d->dir, attr, problem);
  gr_topo_add_warning(d->t, "%s", msg);
  if (!*slot)
    *slot = msg;
  else
    free(msg);
}

static int read_attr(struct devdir *d, const char *attr, char *buf, size_t cap)
{
  if (d->dirfd >= 0)
    return gr_fs_read_str_at(d->dirfd, attr, buf, cap);
  char path[256];
  snprintf(path, sizeof(path), "%s/%s", d->dir, attr);
  return gr_fs_read_str(d->fs, path, buf, cap);
}

/* Whether reading attr failed (r is read_attr's result). An absent file is
 * normal (older kernels, non-PCIe devices): unknown, nothing said. Any other
 * failure (unreadable, binary, not a regular file) is reported at load like
 * a malformed value, so that a check never calls a link it could not read
 * fine. */
static bool read_failed(struct devdir *d, const char *attr, int r)
{
  if (r == 0)
    return false;
  if (r != -ENOENT && d->t)
    note_problem(d, &d->p->link_problem, attr, gr_fs_strerror(r), NULL);
  return true;
}

/* Malformed values are reported once at load and treated as unknown. */
static void read_speed(struct devdir *d, const char *attr, int *gen)
{
  char v[64];
  int g = 0;
  if (read_failed(d, attr, read_attr(d, attr, v, sizeof(v))))
    return;
  enum gr_speed_parse r = gr_pcie_parse_speed(v, &g);
  if (r == GR_SPEED_OK)
    *gen = g;
  else if (r == GR_SPEED_INVALID && d->t)
    note_problem(d, &d->p->link_problem, attr, "unrecognised link speed", v);
}

static void read_width(struct devdir *d, const char *attr, int *width)
{
  char v[64];
  int w;
  if (read_failed(d, attr, read_attr(d, attr, v, sizeof(v))))
    return;
  if (gr_pcie_parse_width(v, &w))
    *width = w;
  else if (d->t)
    note_problem(d, &d->p->link_problem, attr, "unrecognised link width", v);
}

static void read_aer(struct devdir *d, const char *attr, struct gr_count *c)
{
  char v[4096];
  uint64_t total;
  int r = read_attr(d, attr, v, sizeof(v));
  if (r == -ENOENT)
    return;
  if (r == 0 && gr_parse_aer_total(v, &total)) {
    c->valid = true;
    c->value = total;
  } else if (d->t) {
    note_problem(d, &d->p->aer_problem, attr, r ? gr_fs_strerror(r) : "no TOTAL_ERR_* line (malformed AER counters)",
                 NULL);
  }
}

/* The dynamic part, in two halves (see overlay_device): the link as it runs
 * now, and the AER totals. The load and gr_load_dynamic share them. */
static void read_current_link(struct devdir *d, struct gr_pci_dynamic *dy)
{
  read_speed(d, "current_link_speed", &dy->cur_gen);
  read_width(d, "current_link_width", &dy->cur_width);
}

static void read_aer_totals(struct devdir *d, struct gr_pci_dynamic *dy)
{
  read_aer(d, "aer_dev_correctable", &dy->aer.correctable);
  read_aer(d, "aer_dev_nonfatal", &dy->aer.nonfatal);
  read_aer(d, "aer_dev_fatal", &dy->aer.fatal);
}

/* The static part, read once at load: the link's maxima, NUMA node, driver
 * and IOMMU group. */
static void read_static(struct devdir *d, struct gr_pci *p)
{
  char v[256], path[256];
  long n;
  read_speed(d, "max_link_speed", &p->link.max_gen);
  read_width(d, "max_link_width", &p->link.max_width);
  int r = read_attr(d, "numa_node", v, sizeof(v));
  if (r == 0 && !(parse_long(v, 10, &n) && n >= -1 && n < 65536))
    gr_topo_add_warning(d->t, "%s%s/numa_node: unrecognised value \"%s\"", d->fs->root, d->dir, v);
  else if (r == 0)
    p->numa = (int)n;
  else if (r != -ENOENT)
    gr_topo_add_warning(d->t, "%s%s/numa_node: %s", d->fs->root, d->dir, gr_fs_strerror(r));
  snprintf(path, sizeof(path), "%s/driver", d->dir);
  if (gr_fs_link_basename(d->fs, path, v, sizeof(v)) == 0) {
    free(p->driver);
    p->driver = xstrdup(v);
  }
  snprintf(path, sizeof(path), "%s/iommu_group", d->dir);
  if (gr_fs_link_basename(d->fs, path, v, sizeof(v)) == 0 && parse_long(v, 10, &n))
    p->iommu_group = (int)n;
}

/* Both parts at load. The warnings come in the files' usual order (current
 * link, maxima, NUMA node, AER), hence the static part in the middle. */
static void overlay_device(struct devdir *d, struct gr_pci *p)
{
  struct gr_pci_dynamic dy = {0};
  read_current_link(d, &dy);
  read_static(d, p);
  read_aer_totals(d, &dy);
  p->link.cur_gen = dy.cur_gen;
  p->link.cur_width = dy.cur_width;
  p->aer = dy.aer;
}

/* A name the kernel could give an RDMA device: short, printable, no blanks
 * (a tab would split nvidia-smi's tab-separated legend). */
static bool plausible_rdma_name(const char *s)
{
  size_t n = strlen(s);
  if (n == 0 || n >= 64 || s[0] == '.')
    return false;
  for (; *s; s++)
    if (*s <= ' ' || *s >= 0x7f)
      return false;
  return true;
}

/* The RDMA device of a NIC where hwloc found none (a tree gathered without
 * /sys/class/infiniband): the kernel lists it under the PCI function's
 * infiniband/ directory. The first name in byte order, so that readdir's
 * order does not matter; anything implausible is passed over. Load only. */
static void read_rdma_name(struct devdir *d, struct gr_pci *p)
{
  char path[192];
  if (p->rdma_name)
    return;
  snprintf(path, sizeof(path), "%s/infiniband", d->dir);
  DIR *dir = gr_fs_opendir(d->fs, path);
  if (!dir)
    return;
  struct dirent *e;
  while ((e = readdir(dir)))
    if (plausible_rdma_name(e->d_name) && (!p->rdma_name || strcmp(e->d_name, p->rdma_name) < 0)) {
      free(p->rdma_name);
      p->rdma_name = xstrdup(e->d_name);
    }
  closedir(dir);
}

static int package_of_numa(const struct gr_topo *t, int numa)
{
  for (size_t i = 0; i < t->nnumas; i++)
    if (t->numas[i].os_index == numa)
      return t->numas[i].package;
  return -1;
}

/* hwloc (built with 16-bit PCI domains, as Debian ships it) skips devices in
 * 32-bit domains such as Intel VMD; say so instead of silently losing them. */
static void note_skipped_domains(const struct gr_fs *fs, struct gr_topo *t, DIR *dir)
{
  struct dirent *e;
  size_t skipped = 0;
  char first[64] = "";
  while ((e = readdir(dir))) {
    unsigned d, b, v, f;
    if (e->d_name[0] == '.' || !gr_parse_busid(e->d_name, &d, &b, &v, &f))
      continue;
    if (d > 0xffff) {
      if (!skipped++)
        snprintf(first, sizeof(first), "%.40s", e->d_name);
    }
  }
  if (skipped)
    gr_topo_add_warning(t, "%s" PCI_DEVICES "/%s: %zu device(s) in 32-bit PCI domains (e.g. Intel VMD) are not "
                        "shown: this libhwloc supports 16-bit domains only", fs->root, first, skipped);
}

/* The GPUs the NVIDIA driver holds, from /proc/driver/nvidia/gpus/BDF/: a
 * device there is NVIDIA's whatever its files say (a tree gathered without
 * vendor files: hwloc's AC922 gather has only `class`), and its numa_status
 * names the NUMA node of its own memory where the GPU has one (POWER9 with
 * NVLink to the CPU, Grace Hopper): nvidia-smi's GPU NUMA ID. hwloc hides
 * those nodes on POWER unless HWLOC_KEEP_NVIDIA_GPU_NUMA_NODES=1, so they are
 * never host NUMA nodes here. */
static void read_nvidia_gpus(const struct gr_fs *fs, struct gr_topo *t)
{
  DIR *dir = gr_fs_opendir(fs, "/proc/driver/nvidia/gpus");
  if (!dir)
    return;
  struct dirent *e;
  while ((e = readdir(dir))) {
    unsigned d, b, v, f;
    if (e->d_name[0] == '.' || !gr_parse_busid(e->d_name, &d, &b, &v, &f))
      continue;
    for (size_t i = 0; i < t->npci; i++) {
      struct gr_pci *p = &t->pci[i];
      if (p->role == GR_ROLE_HOSTBRIDGE || p->domain != d || p->bus != b || p->dev != v || p->func != f)
        continue;
      if (p->vendor == 0)
        p->vendor = 0x10de;
      char path[128], buf[512];
      snprintf(path, sizeof(path), "/proc/driver/nvidia/gpus/%.16s/numa_status", e->d_name);
      const char *at = gr_fs_read_str(fs, path, buf, sizeof(buf)) == 0 ? strstr(buf, "Node:") : NULL;
      if (!at || p->gpu_numa >= 0)
        continue;
      at += strspn(at + 5, " \t") + 5;
      char *end;
      long node = strtol(at, &end, 10);
      if (end != at && (*end == '\n' || *end == '\0') && node >= 0 && node < 65536)
        p->gpu_numa = (int)node;
    }
  }
  closedir(dir);
}

int gr_sysfs_overlay(const struct gr_fs *fs, struct gr_topo *t, struct gr_err *err)
{
  DIR *dir = gr_fs_opendir(fs, PCI_DEVICES);
  if (!dir && gr_fs_is_live(fs)) {
    gr_topo_add_warning(t, "%s: %s (no PCI devices visible to gpurig)", PCI_DEVICES, strerror(errno));
    return 0;
  }
  if (!dir)
    return gr_fail(err, GR_EXIT_FAIL, "%s%s: %s (not a Linux /sys tree with PCI devices)", fs->root, PCI_DEVICES,
                   strerror(errno));
  note_skipped_domains(fs, t, dir);
  closedir(dir);
  for (size_t i = 0; i < t->npci; i++) {
    struct gr_pci *p = &t->pci[i];
    if (p->role == GR_ROLE_HOSTBRIDGE)
      continue;
    struct devdir d = {.fs = fs, .t = t, .p = p, .dirfd = -1};
    gr_pci_sysfs_path(p, NULL, d.dir, sizeof(d.dir));
    overlay_device(&d, p);
    read_rdma_name(&d, p);
    if (p->numa >= 0)
      p->package = package_of_numa(t, p->numa);
  }
  read_nvidia_gpus(fs, t);
  t->link_details = true;
  return 0;
}

int gr_load_dynamic(const struct gr_fs *fs, const struct gr_topo *t, const bool *only, const int *dirfd,
                    struct gr_pci_dynamic *out, struct gr_err *err)
{
  char path[8192];
  struct stat st; /* stat, not opendir: a sampler's step allocates nothing */
  if (!gr_fs_path(fs, PCI_DEVICES, path, sizeof(path)) || stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
    return gr_fail(err, gr_fs_is_live(fs) ? GR_EXIT_CANNOT_RUN : GR_EXIT_FAIL,
                   "%s%s: %s (no PCI devices to re-read)", fs->root, PCI_DEVICES, strerror(errno ? errno : ENOTDIR));
  for (size_t i = 0; i < t->npci; i++) {
    struct devdir d = {.fs = fs, .dirfd = dirfd ? dirfd[i] : -1}; /* no t, no p: a re-read reports nothing */
    memset(&out[i], 0, sizeof(out[i]));
    if (t->pci[i].role == GR_ROLE_HOSTBRIDGE || (only && !only[i]))
      continue;
    gr_pci_sysfs_path(&t->pci[i], NULL, d.dir, sizeof(d.dir));
    read_current_link(&d, &out[i]);
    read_aer_totals(&d, &out[i]);
  }
  return 0;
}

void gr_load_dynamic_dirs(const struct gr_fs *fs, const struct gr_topo *t, const bool *only, int *dirfd)
{
  for (size_t i = 0; i < t->npci; i++) {
    char dir[128];
    dirfd[i] = -1;
    if (t->pci[i].role == GR_ROLE_HOSTBRIDGE || (only && !only[i]))
      continue;
    gr_pci_sysfs_path(&t->pci[i], NULL, dir, sizeof(dir));
    int fd = gr_fs_open_dir(fs, dir);
    dirfd[i] = fd >= 0 ? fd : -1; /* a device without a directory is read by path, and found missing */
  }
}

/* One entry of a gathered tree's sys/bus/pci/devices: a link into
 * /sys/devices (the hierarchy), or a plain directory, as hwloc-gather-topology
 * leaves a tree gathered without it (hwloc's AC922 tree): lstopo reads that
 * one, each device on a host bridge of its own, and so does gpurig. Needs the
 * identity files: `class`, and `vendor` and `device` unless the entry is a
 * plain directory (hwloc then knows the class alone). Returns 0, 1 for a
 * plain directory, -1 after gr_fail. */
static int check_tree_device(const struct gr_fs *fs, const char *name, struct gr_err *err)
{
  char rel[512], v[64], target[4096];
  snprintf(rel, sizeof(rel), PCI_DEVICES "/%s", name);
  int r = gr_fs_resolve(fs, rel, target, sizeof(target));
  bool flat = r == -EINVAL;
  if (!flat && (r != 0 || !str_starts_with(target, "/sys/devices/")))
    return gr_fail(err, GR_EXIT_FAIL, "%s%s: %s", fs->root, rel,
                   r ? "broken link (partial tree)" : "link points outside /sys/devices");
  const char *need[] = {"class", "vendor", "device"};
  for (size_t k = 0; k < 3; k++) {
    char f[600];
    snprintf(f, sizeof(f), "%s/%s", rel, need[k]);
    r = gr_fs_read_str(fs, f, v, sizeof(v));
    if (flat && k > 0 && r == -ENOENT)
      continue;
    unsigned long x;
    if (r != 0 || !parse_ulong(v, 16, &x))
      return gr_fail(err, GR_EXIT_FAIL, "%s%s: %s", fs->root, f, r ? gr_fs_strerror(r) : "not a hexadecimal PCI id");
  }
  return flat;
}

/* A gathered tree must at least have PCI devices with their identity files;
 * anything less is refused with the first missing piece named. *flat counts
 * the devices without the hierarchy (plain directories). */
int gr_live_check_tree(const struct gr_fs *fs, size_t *flat, struct gr_err *err)
{
  int rc = -1;
  *flat = 0;
  if (gr_fs_check_tree(fs, err) != 0)
    return -1;
  DIR *dir = gr_fs_opendir(fs, PCI_DEVICES);
  if (!dir)
    return gr_fail(err, GR_EXIT_FAIL, "%s%s: %s (expected a gathered Linux tree with sys/bus/pci/devices)", fs->root,
                   PCI_DEVICES, strerror(errno));
  struct dirent *e;
  size_t ndev = 0;
  while ((e = readdir(dir))) {
    if (e->d_name[0] == '.')
      continue;
    int r = check_tree_device(fs, e->d_name, err);
    if (r < 0)
      goto out;
    *flat += (size_t)r;
    ndev++;
  }
  if (ndev == 0) {
    gr_fail(err, GR_EXIT_FAIL, "%s%s: no PCI devices (empty or partial tree)", fs->root, PCI_DEVICES);
    goto out;
  }
  rc = 0;
out:
  closedir(dir);
  return rc;
}

/* hwloc may name the machine it runs on; a replayed tree names itself (as
 * hwloc-gather-topology records it) or nothing. */
static char *replayed_hostname(const struct gr_fs *fs)
{
  char buf[4096];
  if (gr_fs_read_str(fs, "/proc/hwloc-nofile-info", buf, sizeof(buf)) == 0) {
    const char *h = strstr(buf, "HostName: ");
    if (h && (h == buf || h[-1] == '\n')) {
      h += strlen("HostName: ");
      size_t n = strcspn(h, "\n");
      if (n)
        return xstrndup(h, n);
    }
  }
  if (gr_fs_read_str(fs, "/proc/sys/kernel/hostname", buf, sizeof(buf)) == 0 && buf[0])
    return xstrdup(buf);
  return NULL;
}

int gr_load_live(const struct gr_fs *fs, struct gr_topo *t, struct gr_err *err)
{
  hwloc_topology_t topo = NULL;
  gr_topo_init(t);
  /* A replayed tree must be whole; the live machine is what it is. */
  size_t flat = 0;
  if (!gr_fs_is_live(fs) && gr_live_check_tree(fs, &flat, err) != 0)
    return -1;
  if (gr_hwloc_open_live(fs, false, &topo, err) != 0)
    return -1;
  int rc = gr_topo_from_hwloc(topo, t, NULL, err);
  hwloc_topology_destroy(topo);
  if (rc == 0)
    rc = gr_sysfs_overlay(fs, t, err);
  if (rc != 0) {
    gr_topo_free(t);
    return -1;
  }
  gr_live_finish(fs, t, flat);
  gr_topo_fabric_from_gpulinks(t, GR_FABRIC_HWLOC);
  return 0;
}

void gr_live_finish(const struct gr_fs *fs, struct gr_topo *t, size_t flat)
{
  if (!gr_fs_is_live(fs)) {
    free(t->hostname);
    t->hostname = replayed_hostname(fs);
  }
  if (flat)
    gr_topo_add_warning(t, "%s" PCI_DEVICES ": %zu device(s) are plain directories, not links into /sys/devices: the tree "
                        "was gathered without the PCI hierarchy, so each is shown on a host bridge of its own (as lstopo "
                        "shows them), with no switches above them", fs->root, flat);
  t->source_kind = xstrdup(gr_fs_is_live(fs) ? "live" : "root");
  t->source_path = gr_fs_is_live(fs) ? NULL : xstrdup(fs->root);
  gr_topo_finish(t);
}
