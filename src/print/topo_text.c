#include <stdlib.h>
#include <string.h>

#include "model/names.h"
#include "facts/pcilink.h"
#include "print/common.h"
#include "print/topo.h"
#include "base/util.h"

/* "Gen4 x16, 31.5 GB/s" with cur/max where they differ; "" when unknown. */
static const char *link_text(const struct gr_pci *p, char *buf, size_t cap)
{
  const struct gr_link *l = &p->link;
  int eg, ew;
  buf[0] = '\0';
  if (!p->has_link)
    return buf;
  gr_link_effective(l, &eg, &ew);
  int maxw = l->max_width && l->port_max_width ? (l->max_width < l->port_max_width ? l->max_width : l->port_max_width)
                                               : (l->max_width ? l->max_width : l->port_max_width);
  char g[48], w[48];
  if (eg > 0 && l->cur_gen > 0 && l->cur_gen != eg)
    snprintf(g, sizeof(g), "Gen%d/Gen%d", l->cur_gen, eg);
  else if (eg > 0)
    snprintf(g, sizeof(g), "Gen%d", eg);
  else
    g[0] = '\0';
  if (l->cur_width > 0 && maxw > 0 && l->cur_width != maxw)
    snprintf(w, sizeof(w), "x%d/x%d", l->cur_width, maxw);
  else if (ew > 0)
    snprintf(w, sizeof(w), "x%d", ew);
  else
    w[0] = '\0';
  double bw = gr_link_bw_gbps(p);
  if (g[0] || w[0])
    snprintf(buf, cap, "%s%s%s, %.1f GB/s", g, g[0] && w[0] ? " " : "", w, bw);
  else if (bw > 0)
    snprintf(buf, cap, "%.1f GB/s", bw);
  return buf;
}

/* ---- summary ---- */

void gr_print_summary(FILE *out, const struct gr_topo *t, const struct gr_analysis *a)
{
  size_t nvme = 0;
  for (size_t i = 0; i < t->npci; i++)
    nvme += t->pci[i].kind == GR_KIND_NVME;
  gr_print_machine_line(out, t);
  size_t endpoints = 0;
  for (size_t i = 0; i < t->npci; i++)
    endpoints += t->pci[i].role == GR_ROLE_ENDPOINT;
  fprintf(out, "\n%zu socket%s, %zu NUMA node%s, %zu GPU%s, %zu RDMA NIC%s, %zu NVMe drive%s, %zu P2P hive%s"
               " (%zu PCI devices in all)\n",
          t->npackages, t->npackages == 1 ? "" : "s", t->nnumas, t->nnumas == 1 ? "" : "s", t->ngpus,
          t->ngpus == 1 ? "" : "s", t->nnics, t->nnics == 1 ? "" : "s", nvme, nvme == 1 ? "" : "s", a->nhives,
          a->nhives == 1 ? "" : "s", endpoints);
  for (size_t i = 0; i < t->npackages; i++)
    fprintf(out, "  Socket %d: %s\n", t->packages[i].os_index,
            t->packages[i].cpu_model ? t->packages[i].cpu_model : "(CPU model not recorded)");
}

/* ---- tree ---- */

struct tree_ctx {
  FILE *out;
  const struct gr_topo *t;
  unsigned flags;
  bool *interesting; /* node or a descendant is worth showing */
  struct gr_names names;
};

static bool is_interesting_node(const struct gr_pci *p)
{
  return p->kind == GR_KIND_GPU || p->kind == GR_KIND_NIC || p->kind == GR_KIND_NVME ||
         p->kind == GR_KIND_NVSWITCH || p->role == GR_ROLE_SWITCH_UP;
}

static void mark_interesting(struct tree_ctx *c)
{
  const struct gr_topo *t = c->t;
  c->interesting = xcalloc(t->npci + 1, sizeof(bool));
  for (size_t i = t->npci; i-- > 0;) {
    const struct gr_pci *p = &t->pci[i];
    if ((c->flags & GR_PRINT_ALL_DEVICES) || is_interesting_node(p))
      c->interesting[i] = true;
    if (c->interesting[i] && p->parent >= 0)
      c->interesting[p->parent] = true;
  }
}

/* AER counts are shown where they are non-zero: the counter may sit at
 * either end of a link, so a port's count matters as much as a device's. */
static void print_aer(FILE *out, const struct gr_pci *p)
{
  const struct gr_aer *e = &p->aer;
  if ((e->correctable.valid && e->correctable.value) || (e->nonfatal.valid && e->nonfatal.value) ||
      (e->fatal.valid && e->fatal.value))
    fprintf(out, "  AER: %llu correctable, %llu non-fatal, %llu fatal",
            (unsigned long long)(e->correctable.valid ? e->correctable.value : 0),
            (unsigned long long)(e->nonfatal.valid ? e->nonfatal.value : 0),
            (unsigned long long)(e->fatal.valid ? e->fatal.value : 0));
}

static void print_node_line(struct tree_ctx *c, int idx, int depth)
{
  const struct gr_topo *t = c->t;
  const struct gr_pci *p = &t->pci[idx];
  char bus[32], label[32], link[128], ids[32];
  gr_pci_busid(p, bus, sizeof(bus));
  if (p->vendor || p->device)
    snprintf(ids, sizeof(ids), "[%04x:%04x]", p->vendor, p->device);
  else if (p->vendor)
    snprintf(ids, sizeof(ids), "[%04x]", p->vendor);
  else
    ids[0] = '\0'; /* a described device (rig file) has no ids */
  link_text(p, link, sizeof(link));
  fprintf(c->out, "%*s", depth * 2, "");
  if (p->role == GR_ROLE_SWITCH_UP) {
    size_t ports = 0;
    for (size_t i = 0; i < t->npci; i++)
      ports += t->pci[i].parent == idx && t->pci[i].role == GR_ROLE_SWITCH_DOWN;
    const char *vn = gr_pci_vendor_name(p, &c->names);
    const char *model = gr_pci_display_name(t, idx, &c->names);
    bool named = strcmp(model, "PCIe switch") != 0;
    fprintf(c->out, "Switch %s %s%s%s%s%s, %zu downstream port%s", bus, vn ? vn : "", vn ? " " : "", named ? model : "",
            named ? " " : "", ids, ports, ports == 1 ? "" : "s");
    if (link[0])
      fprintf(c->out, ", uplink %s", link);
    print_aer(c->out, p);
    fputc('\n', c->out);
    return;
  }
  if (p->role == GR_ROLE_ROOTPORT || p->role == GR_ROLE_BRIDGE) {
    const char *name = gr_pci_display_name(t, idx, &c->names);
    bool generic = strcmp(name, "root port") == 0 || strcmp(name, "PCI bridge") == 0;
    fprintf(c->out, "%s %s%s%s %s", p->role == GR_ROLE_ROOTPORT ? "Root port" : "Bridge", bus, generic ? "" : " ",
            generic ? "" : name, ids);
    print_aer(c->out, p);
    fputc('\n', c->out);
    return;
  }
  if (p->gpu_index >= 0 || p->nic_index >= 0)
    fprintf(c->out, "%-5s ", gr_pci_label(t, idx, label, sizeof(label)));
  else if (p->kind == GR_KIND_NVME)
    fprintf(c->out, "NVMe  ");
  fprintf(c->out, "%s %s %s", bus, gr_pci_display_name(t, idx, &c->names), ids);
  if (link[0])
    fprintf(c->out, "  %s", link);
  if (p->osdevs && (p->kind == GR_KIND_NIC || p->kind == GR_KIND_NVME))
    fprintf(c->out, "  (%s)", p->osdevs);
  if (p->driver && p->kind == GR_KIND_GPU)
    fprintf(c->out, "  driver %s", p->driver);
  print_aer(c->out, p);
  fputc('\n', c->out);
}

static void print_subtree(struct tree_ctx *c, int idx, int depth)
{
  const struct gr_topo *t = c->t;
  const struct gr_pci *p = &t->pci[idx];
  /* downstream ports are folded into their switch */
  bool fold = p->role == GR_ROLE_SWITCH_DOWN && !(c->flags & GR_PRINT_ALL_DEVICES);
  if (!fold) {
    print_node_line(c, idx, depth);
    depth++;
  }
  size_t hidden = 0;
  for (size_t i = (size_t)idx + 1; i < t->npci; i++) {
    if (t->pci[i].parent != idx)
      continue;
    if (c->interesting[i])
      print_subtree(c, (int)i, depth);
    else
      hidden++;
  }
  if (hidden && p->role == GR_ROLE_HOSTBRIDGE)
    fprintf(c->out, "%*s(+%zu other device%s)\n", depth * 2, "", hidden, hidden == 1 ? "" : "s");
}

static void print_hostbridges_of(struct tree_ctx *c, int package, int depth)
{
  const struct gr_topo *t = c->t;
  size_t quiet = 0;
  for (size_t i = 0; i < t->npci; i++) {
    const struct gr_pci *p = &t->pci[i];
    if (p->role != GR_ROLE_HOSTBRIDGE || p->package != package)
      continue;
    if (!c->interesting[i]) {
      quiet++;
      continue;
    }
    char bus[32];
    fprintf(c->out, "%*sHost bridge %s", depth * 2, "", gr_pci_busid(p, bus, sizeof(bus)));
    if (p->numa >= 0)
      fprintf(c->out, "  NUMA %d", p->numa);
    fputc('\n', c->out);
    size_t hidden = 0;
    for (size_t k = i + 1; k < t->npci; k++) {
      if (t->pci[k].parent != (int)i)
        continue;
      if (c->interesting[k])
        print_subtree(c, (int)k, depth + 1);
      else
        hidden++;
    }
    if (hidden)
      fprintf(c->out, "%*s(+%zu other device%s)\n", (depth + 1) * 2, "", hidden, hidden == 1 ? "" : "s");
  }
  if (quiet)
    fprintf(c->out, "%*s(+%zu host bridge%s without GPUs, NICs or NVMe)\n", depth * 2, "", quiet,
            quiet == 1 ? "" : "s");
}

void gr_print_tree(FILE *out, const struct gr_topo *t, unsigned flags)
{
  struct tree_ctx c = {.out = out, .t = t, .flags = flags};
  mark_interesting(&c);
  fprintf(out, "\nPCIe tree (link: Gen and width it trains to, cur/max where they differ, GB/s per direction):\n");
  for (size_t s = 0; s < t->npackages; s++) {
    const struct gr_package *pk = &t->packages[s];
    fprintf(out, "Socket %d", pk->os_index);
    for (size_t n = 0; n < t->nnumas; n++)
      if (t->numas[n].package == pk->os_index && t->numas[n].mem_bytes)
        fprintf(out, "  NUMA %d (%.1f GiB)", t->numas[n].os_index,
                (double)t->numas[n].mem_bytes / (1024.0 * 1024.0 * 1024.0));
      else if (t->numas[n].package == pk->os_index)
        fprintf(out, "  NUMA %d", t->numas[n].os_index);
    fputc('\n', out);
    print_hostbridges_of(&c, pk->os_index, 1);
  }
  bool orphans = false;
  for (size_t i = 0; i < t->npci; i++)
    orphans |= t->pci[i].role == GR_ROLE_HOSTBRIDGE && t->pci[i].package < 0;
  if (orphans) {
    fprintf(out, "Not attached to a socket (locality unknown)\n");
    print_hostbridges_of(&c, -1, 1);
  }
  free(c.interesting);
  gr_names_free(&c.names);
}

/* ---- GPU table ---- */

void gr_print_gpu_table(FILE *out, const struct gr_topo *t, const struct gr_analysis *a)
{
  char bus[32], link[64];
  struct gr_names names = {0};
  if (!t->ngpus)
    return;
  fprintf(out, "\nGPUs:\n  %-5s %-13s %-32s %-26s %-5s %s\n", "", "PCI bus id", "model", "link", "NUMA", "hive");
  for (size_t g = 0; g < t->ngpus; g++) {
    const struct gr_pci *p = &t->pci[t->gpus[g]];
    char numa[16];
    snprintf(numa, sizeof(numa), "%d", p->numa);
    fprintf(out, "  GPU%-2zu %-13s %-32.32s %-26s %-5s %d\n", g, gr_pci_busid(p, bus, sizeof(bus)),
            gr_pci_display_name(t, t->gpus[g], &names), link_text(p, link, sizeof(link)), p->numa >= 0 ? numa : "?",
            a->hive[g]);
  }
  gr_names_free(&names);
}

/* ---- matrices ---- */

static void matrix_header(FILE *out, const struct gr_topo *t, bool nics)
{
  fprintf(out, "%-7s", "");
  for (size_t g = 0; g < t->ngpus; g++)
    fprintf(out, " GPU%-4zu", g);
  if (nics)
    for (size_t n = 0; n < t->nnics; n++)
      fprintf(out, " NIC%-4zu", n);
}

void gr_print_matrix(FILE *out, const struct gr_topo *t, const struct gr_analysis *a)
{
  char cell[16];
  if (!t->ngpus)
    return;
  fprintf(out, "\nGPU matrix (nvidia-smi topo -m levels):\n");
  matrix_header(out, t, true);
  fprintf(out, " %-16s %s\n", "CPU Affinity", "NUMA Affinity");
  size_t rows = t->ngpus + t->nnics;
  for (size_t r = 0; r < rows; r++) {
    int node = r < t->ngpus ? t->gpus[r] : t->nics[r - t->ngpus];
    const struct gr_pci *p = &t->pci[node];
    fprintf(out, "%s%-*zu", r < t->ngpus ? "GPU" : "NIC", 4, r < t->ngpus ? r : r - t->ngpus);
    for (size_t c = 0; c < rows; c++) {
      int other = c < t->ngpus ? t->gpus[c] : t->nics[c - t->ngpus];
      struct gr_path path;
      if (r < t->ngpus && c < t->ngpus)
        path = a->gpu_gpu[r * a->ngpus + c];
      else if (r < t->ngpus)
        path = a->gpu_nic[r * a->nnics + (c - t->ngpus)];
      else if (c < t->ngpus)
        path = a->gpu_nic[c * a->nnics + (r - t->ngpus)];
      else
        path = gr_path_between(a, node, other);
      fprintf(out, " %-7s", gr_level_str(&path, cell, sizeof(cell)));
    }
    char numa[16];
    snprintf(numa, sizeof(numa), "%d", p->numa);
    fprintf(out, " %-16s %s\n", p->cpulist ? p->cpulist : "N/A", p->numa >= 0 ? numa : "N/A");
  }
  fprintf(out, "\nLegend:\n\n"
               "  X    = Self\n"
               "  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)\n"
               "  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node\n"
               "  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)\n"
               "  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)\n"
               "  PIX  = Connection traversing at most a single PCIe bridge\n"
               "  NV#  = Connection traversing a bonded set of # NVLinks\n");
  if (t->nnics) {
    fprintf(out, "\nNIC Legend:\n\n");
    char bus[32];
    struct gr_names names = {0};
    for (size_t n = 0; n < t->nnics; n++) {
      const struct gr_pci *p = &t->pci[t->nics[n]];
      fprintf(out, "  NIC%zu: %s (%s)\n", n, p->osdevs ? p->osdevs : gr_pci_display_name(t, t->nics[n], &names),
              gr_pci_busid(p, bus, sizeof(bus)));
    }
    gr_names_free(&names);
  }
}

/* Prints a GPU x GPU matrix whose cells come from `cell`. */
typedef void (*cell_fn)(const struct gr_analysis *a, size_t r, size_t c, char *buf, size_t cap);

static void print_gpu_grid(FILE *out, const struct gr_topo *t, const struct gr_analysis *a, cell_fn cell)
{
  matrix_header(out, t, false);
  fputc('\n', out);
  for (size_t r = 0; r < t->ngpus; r++) {
    fprintf(out, "GPU%-4zu", r);
    for (size_t c = 0; c < t->ngpus; c++) {
      char buf[16];
      cell(a, r, c, buf, sizeof(buf));
      fprintf(out, " %-7s", buf);
    }
    fputc('\n', out);
  }
}

static void nccl_cell(const struct gr_analysis *a, size_t r, size_t c, char *buf, size_t cap)
{
  const struct gr_path *p = &a->gpu_gpu[r * a->ngpus + c];
  snprintf(buf, cap, "%s%s", r == c ? "X" : gr_nccl_level_str(p->nccl), r != c && !p->nccl_p2p ? "/shm" : "");
}

static void gbps_cell(double v, bool self, char *buf, size_t cap)
{
  if (self)
    snprintf(buf, cap, "X");
  else if (v > 0)
    snprintf(buf, cap, "%.1f", v);
  else
    snprintf(buf, cap, "?");
}

static void bw_cell(const struct gr_analysis *a, size_t r, size_t c, char *buf, size_t cap)
{
  gbps_cell(a->gpu_gpu[r * a->ngpus + c].bw_gbps, r == c, buf, cap);
}

static void nccl_bw_cell(const struct gr_analysis *a, size_t r, size_t c, char *buf, size_t cap)
{
  gbps_cell(a->gpu_gpu[r * a->ngpus + c].nccl_bw_gbps, r == c, buf, cap);
}

void gr_print_nccl(FILE *out, const struct gr_topo *t, const struct gr_analysis *a)
{
  if (t->ngpus < 2)
    return;
  fprintf(out, "\nNCCL's view (NODE folds into PHB; \"/shm\" = no P2P by default, copies go through host memory):\n");
  print_gpu_grid(out, t, a, nccl_cell);
  char dflt[160], why[160];
  fprintf(out, "%s: P2P up to %s (%s)%s\n", gr_nccl_defaults_text(a, dflt, sizeof(dflt)),
          gr_nccl_level_str(a->nccl_p2p_level), gr_nccl_why(a, a->ngpus, why, sizeof(why)),
          "; change with NCCL_P2P_LEVEL=PIX|PXB|PHB|SYS, disable with NCCL_P2P_DISABLE=1.");
}

/* Names the links that hold GPU pairs below what the best pairs reach, so
 * each low number in the matrix has its cause next to it. */
static void print_bottlenecks(FILE *out, const struct gr_topo *t, const struct gr_analysis *a)
{
  double best = 0;
  size_t n = a->ngpus;
  for (size_t i = 0; i < n * n; i++)
    if (a->gpu_gpu[i].bw_gbps > best)
      best = a->gpu_gpu[i].bw_gbps;
  bool any = false;
  for (size_t i = 0; i < t->npci; i++) {
    size_t pairs = 0;
    char list[256] = "";
    size_t off = 0;
    double nccl = 0;
    for (size_t x = 0; x < n; x++)
      for (size_t y = x + 1; y < n; y++) {
        const struct gr_path *p = &a->gpu_gpu[x * n + y];
        if (p->bottleneck != (int)i || !(p->bw_gbps < best - 1e-9))
          continue;
        nccl = p->nccl_bw_gbps;
        if (pairs++ < 6 && off < sizeof(list))
          off += (size_t)snprintf(list + off, sizeof(list) - off, "%sGPU%zu-GPU%zu", pairs > 1 ? ", " : "", x, y);
      }
    if (!pairs)
      continue;
    if (!any)
      fprintf(out, "Links that hold pairs below the best pair's %.1f GB/s:\n", best);
    any = true;
    char name[64], link[128];
    const struct gr_pci *p = &t->pci[i];
    if (p->role == GR_ROLE_SWITCH_UP)
      snprintf(name, sizeof(name), "the uplink of switch %s", gr_pci_busid(p, link, sizeof(link)));
    else
      snprintf(name, sizeof(name), "%s's link", gr_pci_label(t, (int)i, link, sizeof(link)));
    fprintf(out, "  %s, %s (NCCL %.1f): %zu pair%s (%s%s)\n", name, link_text(p, link, sizeof(link)), nccl, pairs,
            pairs == 1 ? "" : "s", list, pairs > 6 ? ", ..." : "");
  }
}

void gr_print_bandwidth(FILE *out, const struct gr_topo *t, const struct gr_analysis *a)
{
  if (t->ngpus < 2)
    return;
  fprintf(out, "\nBottleneck bandwidth per direction, GB/s (theoretical, from gen x width or NVLink):\n");
  print_gpu_grid(out, t, a, bw_cell);
  fprintf(out, "\nThe same as NCCL models it (12/24/48 GB/s for Gen3/4/5 x16; inter-socket link included):\n");
  print_gpu_grid(out, t, a, nccl_bw_cell);
  if (a->socket_link)
    fprintf(out, "Inter-socket link: %s, NCCL counts %g GB/s.\n", a->socket_link, a->socket_nccl_gbps);
  print_bottlenecks(out, t, a);
}

void gr_print_hives(FILE *out, const struct gr_topo *t, const struct gr_analysis *a)
{
  if (!t->ngpus)
    return;
  fprintf(out, "\nP2P hives (GPUs that reach each other peer-to-peer through NVLink or PCIe switches, without crossing the CPU):\n");
  for (size_t h = 0; h < a->nhives; h++) {
    fprintf(out, "  hive %zu:", h);
    enum gr_level worst = GR_LVL_X;
    for (size_t g = 0; g < t->ngpus; g++) {
      if (a->hive[g] != (int)h)
        continue;
      fprintf(out, " GPU%zu", g);
      for (size_t k = 0; k < t->ngpus; k++)
        if (a->hive[k] == (int)h && a->gpu_gpu[g * a->ngpus + k].level > worst)
          worst = a->gpu_gpu[g * a->ngpus + k].level;
    }
    if (worst == GR_LVL_NV)
      fprintf(out, "  (NVLink)");
    else if (worst == GR_LVL_PIX || worst == GR_LVL_PXB)
      fprintf(out, "  (PCIe switch%s, worst pair %s)", worst == GR_LVL_PXB ? "es" : "", gr_level_name(worst));
    else
      fprintf(out, "  (alone)");
    fputc('\n', out);
  }
}

void gr_print_findings(FILE *out, const struct gr_topo *t, const struct gr_analysis *a)
{
  (void)t;
  fprintf(out, "\nFindings:\n");
  if (!a->findings.n)
    fprintf(out, "  none\n");
  for (size_t i = 0; i < a->findings.n; i++)
    fprintf(out, "  %-4s  %s\n        [%s]\n", gr_sev_name(a->findings.v[i].sev), a->findings.v[i].text,
            a->findings.v[i].id);
}

