#include "model/topo.h"

#include "facts/facts.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "facts/facts.h"
#include "facts/pcilink.h"
#include "base/util.h"

void gr_topo_init(struct gr_topo *t)
{
  memset(t, 0, sizeof(*t));
}

static void free_pci(struct gr_pci *p)
{
  free(p->vendor_name);
  free(p->device_name);
  free(p->model);
  free(p->uuid);
  free(p->osdevs);
  free(p->rdma_name);
  free(p->cpulist);
  free(p->driver);
  free(p->link_problem);
  free(p->aer_problem);
}

void gr_topo_free(struct gr_topo *t)
{
  if (!t)
    return;
  for (size_t i = 0; i < t->npci; i++)
    free_pci(&t->pci[i]);
  for (size_t i = 0; i < t->npackages; i++) {
    free(t->packages[i].cpu_vendor);
    free(t->packages[i].cpu_model);
  }
  for (size_t i = 0; i < t->nwarnings; i++)
    free(t->warnings[i]);
  free(t->warnings);
  for (size_t i = 0; i < t->ngaps; i++)
    free(t->gaps[i]);
  free(t->gaps);
  free(t->socket_link);
  free(t->cluster);
  if (t->rig) {
    free(t->rig->name);
    free(t->rig->file);
    free(t->rig->notes);
    free(t->rig->currency);
    for (size_t i = 0; i < t->rig->npsus; i++) {
      free(t->rig->psus[i].name);
      free(t->rig->psus[i].level);
    }
    free(t->rig->psus);
    for (size_t i = 0; i < t->rig->ncircuits; i++) {
      free(t->rig->circuits[i].name);
      free(t->rig->circuits[i].psus);
    }
    free(t->rig->circuits);
    free(t->rig->gpu_power);
    free(t->rig);
  }
  free(t->packages);
  free(t->numas);
  free(t->pci);
  free(t->gpus);
  free(t->nics);
  free(t->gpulinks);
  gr_topo_free_fabrics(t);
  free(t->source_kind);
  free(t->source_path);
  free(t->product);
  free(t->hostname);
  memset(t, 0, sizeof(*t));
}

int gr_topo_add_pci(struct gr_topo *t)
{
  grow_array((void **)&t->pci, sizeof(*t->pci), &t->cap_pci, t->npci);
  struct gr_pci *p = &t->pci[t->npci];
  memset(p, 0, sizeof(*p));
  p->iommu_group = -1;
  p->numa = -1;
  p->gpu_numa = -1;
  p->package = -1;
  p->parent = -1;
  p->hostbridge = -1;
  p->switch_up = -1;
  p->gpu_index = -1;
  p->nic_index = -1;
  p->order = -1;
  p->p2p = -1;
  return (int)t->npci++;
}

void gr_topo_add_warning(struct gr_topo *t, const char *fmt, ...)
{
  va_list ap;
  char buf[1024];
  va_start(ap, fmt);
  vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  t->warnings = xrealloc(t->warnings, (t->nwarnings + 1) * sizeof(char *));
  t->warnings[t->nwarnings++] = xstrdup(buf);
}

void gr_topo_add_gap(struct gr_topo *t, const char *fmt, ...)
{
  va_list ap;
  char buf[1024];
  va_start(ap, fmt);
  vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  t->gaps = xrealloc(t->gaps, (t->ngaps + 1) * sizeof(char *));
  t->gaps[t->ngaps++] = xstrdup(buf);
}

void gr_topo_add_gpulink(struct gr_topo *t, int a, int b, int peer_package, int count, double bw_gbps)
{
  t->gpulinks = xrealloc(t->gpulinks, (t->ngpulinks + 1) * sizeof(*t->gpulinks));
  t->gpulinks[t->ngpulinks++] = (struct gr_gpulink){a, b, peer_package, count, bw_gbps};
}

/* The first row of pci-devices.tsv that names this device, or NULL. */
static const struct gr_pci_rule *pci_rule(unsigned class_id, unsigned vendor, unsigned device)
{
  size_t n;
  const struct gr_pci_rule *rules = gr_pci_rules(&n);
  for (size_t i = 0; i < n; i++) {
    const struct gr_pci_rule *r = &rules[i];
    if (r->vendor == vendor && (r->device < 0 || (unsigned)r->device == device) &&
        (r->class_sub < 0 || (unsigned)r->class_sub == class_id >> 8))
      return r;
  }
  return NULL;
}

enum gr_kind gr_kind_from_ids(unsigned class_id, unsigned vendor, unsigned device)
{
  unsigned base_sub = class_id >> 8;
  const struct gr_pci_rule *rule = pci_rule(class_id, vendor, device);
  if (rule)
    return rule->accelerator ? GR_KIND_GPU : GR_KIND_OTHER;
  bool gpu_maker = vendor == 0x10de || vendor == 0x1002;
  if (base_sub == 0x0302)
    return GR_KIND_GPU;
  /* VGA and display controllers are compute GPUs only from the GPU makers:
   * every server board also carries a BMC VGA device (ASPEED 1a03, Matrox 102b),
   * and cloud instances an emulated one (Amazon 1d0f). AMD's Instinct MI300
   * is a processing accelerator (1200) and a GPU all the same. */
  if ((base_sub == 0x0300 || base_sub == 0x0380 || (class_id >> 16) == 0x12) && gpu_maker)
    return GR_KIND_GPU;
  /* Co-processors and other processing accelerators (NEC's Vector Engine,
   * Habana Gaudi, TPUs) run no CUDA or ROCm: NCCL never sees them. */
  if (base_sub == 0x0b40 || (class_id >> 16) == 0x12)
    return GR_KIND_ACCEL;
  /* InfiniBand HCAs of the ConnectX-2 and QLogic era carry the serial-bus
   * class 0c06 (InfiniBand) instead of the network class 0207 */
  if ((class_id >> 16) == 0x02 || base_sub == 0x0c06)
    return GR_KIND_NIC;
  if (class_id == 0x010802)
    return GR_KIND_NVME;
  if (base_sub == 0x0680 && vendor == 0x10de)
    return GR_KIND_NVSWITCH;
  return GR_KIND_OTHER;
}

static bool is_bridge_role(enum gr_role r)
{
  return r != GR_ROLE_ENDPOINT && r != GR_ROLE_HOSTBRIDGE;
}

static int cmp_busid(const struct gr_pci *a, const struct gr_pci *b)
{
  if (a->domain != b->domain)
    return a->domain < b->domain ? -1 : 1;
  if (a->bus != b->bus)
    return a->bus < b->bus ? -1 : 1;
  if (a->dev != b->dev)
    return a->dev < b->dev ? -1 : 1;
  if (a->func != b->func)
    return a->func < b->func ? -1 : 1;
  return 0;
}

/* A loader's declared rank, then the bus id. */
static int cmp_order_busid(const struct gr_pci *a, const struct gr_pci *b)
{
  if (a->order >= 0 && b->order >= 0 && a->order != b->order)
    return a->order < b->order ? -1 : 1;
  return cmp_busid(a, b);
}

/* Natural order: runs of digits compare as numbers, so mlx5_2 comes before
 * mlx5_10, as the kernel's numbering and nvidia-smi's NIC legend have them. */
static int cmp_natural(const char *a, const char *b)
{
  while (*a && *b) {
    if (isdigit((unsigned char)*a) && isdigit((unsigned char)*b)) {
      while (*a == '0' && isdigit((unsigned char)a[1]))
        a++;
      while (*b == '0' && isdigit((unsigned char)b[1]))
        b++;
      size_t na = strspn(a, "0123456789"), nb = strspn(b, "0123456789");
      if (na != nb)
        return na < nb ? -1 : 1;
      int c = strncmp(a, b, na);
      if (c)
        return c < 0 ? -1 : 1;
      a += na;
      b += nb;
    } else {
      if (*a != *b)
        return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
      a++;
      b++;
    }
  }
  return *a ? 1 : *b ? -1 : 0;
}

/* qsort_r's context is the topology: no process-global state while loading. */
static int cmp_gpu_index(const void *x, const void *y, void *topo)
{
  const struct gr_topo *t = topo;
  return cmp_order_busid(&t->pci[*(const int *)x], &t->pci[*(const int *)y]);
}

/* nvidia-smi numbers NICs by their RDMA device (NICk is mlx5_k), and lists
 * those without one after them (nccl-tests#320, nccl#1866). */
static int cmp_nic_index(const void *x, const void *y, void *topo)
{
  const struct gr_topo *t = topo;
  const struct gr_pci *a = &t->pci[*(const int *)x], *b = &t->pci[*(const int *)y];
  if (a->rdma_name && b->rdma_name) {
    int c = cmp_natural(a->rdma_name, b->rdma_name);
    if (c)
      return c;
  } else if (a->rdma_name || b->rdma_name) {
    return a->rdma_name ? -1 : 1;
  }
  return cmp_order_busid(a, b);
}

static void assign_roles(struct gr_topo *t)
{
  bool *has_bridge_child = xcalloc(t->npci, sizeof(bool));
  for (size_t i = 0; i < t->npci; i++) {
    int par = t->pci[i].parent;
    if (par >= 0 && is_bridge_role(t->pci[i].role))
      has_bridge_child[par] = true;
  }
  /* Loaders add parents before children, so one forward pass sees each
   * parent's final role before its children. */
  for (size_t i = 0; i < t->npci; i++) {
    struct gr_pci *p = &t->pci[i];
    const struct gr_pci *par = p->parent >= 0 ? &t->pci[p->parent] : NULL;
    if (p->role == GR_ROLE_HOSTBRIDGE) {
      p->hostbridge = (int)i;
      continue;
    }
    p->hostbridge = par ? par->hostbridge : -1;
    if (is_bridge_role(p->role) && par) {
      if (par->role == GR_ROLE_HOSTBRIDGE)
        p->role = GR_ROLE_ROOTPORT;
      else if (par->role == GR_ROLE_SWITCH_UP)
        p->role = GR_ROLE_SWITCH_DOWN;
      else if ((par->role == GR_ROLE_ROOTPORT || par->role == GR_ROLE_SWITCH_DOWN) && has_bridge_child[i])
        p->role = GR_ROLE_SWITCH_UP;
      else
        p->role = GR_ROLE_BRIDGE;
    }
    if (p->role == GR_ROLE_SWITCH_UP)
      p->switch_up = (int)i;
    else if (p->role == GR_ROLE_SWITCH_DOWN)
      p->switch_up = p->parent;
    p->has_link = par && (par->role == GR_ROLE_ROOTPORT || par->role == GR_ROLE_SWITCH_DOWN) &&
                  (p->role == GR_ROLE_ENDPOINT || p->role == GR_ROLE_SWITCH_UP || p->role == GR_ROLE_BRIDGE);
    /* A port's own maxima are the far end of the link below it. */
    if (p->has_link && p->link.port_max_gen == 0 && p->link.port_max_width == 0) {
      p->link.port_max_gen = par->link.max_gen;
      p->link.port_max_width = par->link.max_width;
    }
  }
  free(has_bridge_child);
}

void gr_topo_finish(struct gr_topo *t)
{
  assign_roles(t);
  free(t->gpus);
  free(t->nics);
  t->gpus = xcalloc(t->npci, sizeof(int));
  t->nics = xcalloc(t->npci, sizeof(int));
  t->ngpus = t->nnics = t->naccels = 0;
  const struct gr_pci *last_gpu = NULL;
  for (size_t i = 0; i < t->npci; i++) {
    struct gr_pci *p = &t->pci[i];
    if (p->kind != GR_KIND_NVSWITCH) /* a loader may know better than the class code */
      p->kind = p->role == GR_ROLE_ENDPOINT ? gr_kind_from_ids(p->class_id, p->vendor, p->device) : GR_KIND_NONE;
    if (p->kind == GR_KIND_NIC && ((p->class_id >> 8) == 0x0207 || (p->class_id >> 8) == 0x0c06 || p->vendor == 0x15b3))
      p->rdma = true;
    t->naccels += p->kind == GR_KIND_ACCEL;
    if (p->kind == GR_KIND_GPU) {
      t->gpus[t->ngpus++] = (int)i;
      /* a machine's GPUs are mostly one model: its row is looked up once */
      if (last_gpu && last_gpu->vendor == p->vendor && last_gpu->device == p->device &&
          (last_gpu->model && p->model ? strcmp(last_gpu->model, p->model) == 0 : last_gpu->model == p->model)) {
        p->catalog = last_gpu->catalog;
        p->catalog_known = true;
      } else {
        gr_pci_resolve_catalog(p);
      }
      last_gpu = p;
    }
    else if (p->kind == GR_KIND_NIC && p->rdma)
      t->nics[t->nnics++] = (int)i;
  }
  qsort_r(t->gpus, t->ngpus, sizeof(int), cmp_gpu_index, t);
  qsort_r(t->nics, t->nnics, sizeof(int), cmp_nic_index, t);
  for (size_t i = 0; i < t->ngpus; i++)
    t->pci[t->gpus[i]].gpu_index = (int)i;
  for (size_t i = 0; i < t->nnics; i++)
    t->pci[t->nics[i]].nic_index = (int)i;
}

static bool kind_is(const struct gr_topo *t, const char *kind)
{
  return t->source_kind && strcmp(t->source_kind, kind) == 0;
}

const char *gr_topo_input_name(const struct gr_topo *t)
{
  return kind_is(t, "xml")          ? "hwloc XML"
         : kind_is(t, "nccl")       ? "NCCL topology file"
         : kind_is(t, "nvidia-smi") ? "nvidia-smi topo -m output"
         : kind_is(t, "rocm-smi")   ? "rocm-smi topology output"
         : kind_is(t, "amd-smi")    ? "amd-smi topology output"
         : kind_is(t, "rig")  ? "rig file"
         : kind_is(t, "root") ? "gathered tree"
                              : "this machine";
}

bool gr_topo_from_file(const struct gr_topo *t)
{
  return kind_is(t, "xml") || kind_is(t, "nccl") || kind_is(t, "rig") || kind_is(t, "nvidia-smi") ||
         kind_is(t, "rocm-smi") || kind_is(t, "amd-smi");
}

/* v in hex, lower case, at least minw digits: printf's "%0*x". Returns the
 * end. */
static char *put_hex(char *q, unsigned v, int minw)
{
  char d[8];
  int n = 0;
  do {
    d[n++] = "0123456789abcdef"[v & 0xf];
    v >>= 4;
  } while (v);
  for (int i = n; i < minw; i++)
    *q++ = '0';
  while (n)
    *q++ = d[--n];
  return q;
}

const char *gr_pci_busid(const struct gr_pci *p, char *buf, size_t cap)
{
  if (p->role == GR_ROLE_HOSTBRIDGE) {
    snprintf(buf, cap, "%04x:[%02x-%02x]", p->domain, p->sec_bus, p->sub_bus);
    return buf;
  }
  /* every device line and finding names one: built by hand, not printf'd */
  char tmp[48], *q = put_hex(tmp, p->domain, 4); /* 4 x 8 digits and 3 separators at most */
  *q++ = ':';
  q = put_hex(q, p->bus, 2);
  *q++ = ':';
  q = put_hex(q, p->dev, 2);
  *q++ = '.';
  q = put_hex(q, p->func, 1);
  *q = '\0';
  size_t n = (size_t)(q - tmp);
  n = n < cap ? n : cap - 1;
  memcpy(buf, tmp, n);
  buf[n] = '\0';
  return buf;
}

const char *gr_pci_sysfs_path(const struct gr_pci *p, const char *attr, char *buf, size_t cap)
{
  snprintf(buf, cap, "/sys/bus/pci/devices/%04x:%02x:%02x.%x%s%s", p->domain, p->bus, p->dev, p->func, attr ? "/" : "",
           attr ? attr : "");
  return buf;
}

bool gr_parse_busid(const char *s, unsigned *domain, unsigned *bus, unsigned *dev, unsigned *func)
{
  char tail;
  unsigned d, b, v, f;
  if (sscanf(s, "%x:%x:%x.%x%c", &d, &b, &v, &f, &tail) != 4)
    return false;
  if (b > 0xff || v > 0x1f || f > 7)
    return false;
  *domain = d;
  *bus = b;
  *dev = v;
  *func = f;
  return true;
}

static int depth_of(const struct gr_topo *t, int x)
{
  int d = 0;
  while (t->pci[x].parent >= 0) {
    x = t->pci[x].parent;
    d++;
  }
  return d;
}

int gr_topo_common_ancestor(const struct gr_topo *t, int x, int y)
{
  int dx = depth_of(t, x), dy = depth_of(t, y);
  while (dx > dy) {
    x = t->pci[x].parent;
    dx--;
  }
  while (dy > dx) {
    y = t->pci[y].parent;
    dy--;
  }
  while (x != y && x >= 0 && y >= 0) {
    x = t->pci[x].parent;
    y = t->pci[y].parent;
  }
  return x == y ? x : -1;
}

const char *gr_role_name(enum gr_role r)
{
  switch (r) {
  case GR_ROLE_HOSTBRIDGE: return "host_bridge";
  case GR_ROLE_ROOTPORT: return "root_port";
  case GR_ROLE_SWITCH_UP: return "switch_upstream";
  case GR_ROLE_SWITCH_DOWN: return "switch_downstream";
  case GR_ROLE_BRIDGE: return "bridge";
  case GR_ROLE_ENDPOINT: return "endpoint";
  }
  return "?";
}

const char *gr_kind_name(enum gr_kind k)
{
  switch (k) {
  case GR_KIND_NONE: return "bridge";
  case GR_KIND_GPU: return "gpu";
  case GR_KIND_ACCEL: return "accelerator";
  case GR_KIND_NIC: return "nic";
  case GR_KIND_NVME: return "nvme";
  case GR_KIND_NVSWITCH: return "nvswitch";
  case GR_KIND_OTHER: return "other";
  }
  return "?";
}

const char *gr_pci_label(const struct gr_topo *t, int idx, char *buf, size_t cap)
{
  const struct gr_pci *p = &t->pci[idx];
  if (p->gpu_index >= 0)
    snprintf(buf, cap, "GPU%d", p->gpu_index);
  else if (p->nic_index >= 0)
    snprintf(buf, cap, "NIC%d", p->nic_index);
  else
    gr_pci_busid(p, buf, cap);
  return buf;
}

int gr_topo_gpu_by_busid(const struct gr_topo *t, const char *busid)
{
  char b[32];
  for (size_t k = 0; t && k < t->ngpus; k++)
    if (strcmp(gr_pci_busid(&t->pci[t->gpus[k]], b, sizeof(b)), busid) == 0)
      return (int)k;
  return -1;
}
