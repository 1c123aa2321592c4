#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/names.h"
#include "facts/pcilink.h"
#include "print/common.h"
#include "print/groups.h"
#include "print/text.h"
#include "print/topo.h"
#include "base/util.h"

const char *gr_link_text(const struct gr_analysis *a, int idx, char *buf, size_t cap)
{
  return gr_link_label(&a->link[idx], GR_LABEL_NOW | GR_LABEL_RATE, buf, cap);
}

/* ---- summary ---- */

void gr_print_summary(FILE *out, const struct gr_topo *t, const struct gr_analysis *a)
{
  size_t nvme = 0;
  for (size_t i = 0; i < t->npci; i++)
    nvme += t->pci[i].kind == GR_KIND_NVME;
  gr_print_machine_line(out, t);
  size_t endpoints = t->pci_devices_seen; /* a loader that kept only some knows how many there are */
  for (size_t i = 0; i < t->npci && !t->pci_devices_seen; i++)
    endpoints += t->pci[i].role == GR_ROLE_ENDPOINT;
  fprintf(out, "\n%zu socket%s, %zu NUMA node%s, %zu GPU%s", t->npackages, t->npackages == 1 ? "" : "s", t->nnumas,
          t->nnumas == 1 ? "" : "s", t->ngpus, t->ngpus == 1 ? "" : "s");
  if (t->naccels) /* not GPUs: listed, paths and links judged, no NCCL verdicts */
    fprintf(out, ", %zu accelerator%s", t->naccels, t->naccels == 1 ? "" : "s");
  fprintf(out, ", %zu RDMA NIC%s, %zu NVMe drive%s, %zu P2P hive%s (%zu PCI devices in all)\n", t->nnics,
          t->nnics == 1 ? "" : "s", nvme, nvme == 1 ? "" : "s", a->nhives, a->nhives == 1 ? "" : "s", endpoints);
  for (size_t i = 0; i < t->npackages; i++) {
    const struct gr_package *pk = &t->packages[i];
    if (pk->cpu_model)
      fprintf(out, "  Socket %d: %s", pk->os_index, pk->cpu_model);
    else if (pk->cpu_vendor && pk->cpu_family >= 0 && pk->cpu_model_number >= 0)
      fprintf(out, "  Socket %d: %s family %d model %d (model name not recorded)", pk->os_index, pk->cpu_vendor,
              pk->cpu_family, pk->cpu_model_number);
    else
      fprintf(out, "  Socket %d: (CPU model not recorded)", pk->os_index);
    /* the RAM a description states (a rig's cpu ... ram); captures give it per NUMA node, in the tree */
    if (pk->mem_bytes) {
      double gib = (double)pk->mem_bytes / (1024.0 * 1024.0 * 1024.0);
      fprintf(out, ", %.*f GiB RAM", gib == (double)(uint64_t)gib ? 0 : 1, gib);
    }
    fputc('\n', out);
  }
}

/* ---- tree ---- */

struct tree_ctx {
  FILE *out;
  const struct gr_topo *t;
  const struct gr_analysis *a;
  unsigned flags;
  bool *interesting; /* node or a descendant is worth showing */
  int *first_child, *next_sibling; /* per node, in index order: a scan of every later node per node was
                                      npci^2 (6.4 M instructions at 512 GPUs) */
  struct gr_names names;
};

static bool is_interesting_node(const struct gr_pci *p)
{
  return p->kind == GR_KIND_GPU || p->kind == GR_KIND_ACCEL || p->kind == GR_KIND_NIC || p->kind == GR_KIND_NVME ||
         p->kind == GR_KIND_NVSWITCH || p->role == GR_ROLE_SWITCH_UP;
}

static void mark_interesting(struct tree_ctx *c)
{
  const struct gr_topo *t = c->t;
  c->interesting = xcalloc(t->npci + 1, sizeof(bool));
  c->first_child = xmalloc((t->npci + 1) * sizeof(int));
  c->next_sibling = xmalloc((t->npci + 1) * sizeof(int));
  int *last = xmalloc((t->npci + 1) * sizeof(int));
  for (size_t i = 0; i < t->npci; i++)
    c->first_child[i] = c->next_sibling[i] = last[i] = -1;
  for (size_t i = 0; i < t->npci; i++) {
    int up = t->pci[i].parent;
    if (up < 0 || (size_t)up >= i) /* the tree lists parents first; a later parent was never printed */
      continue;
    if (last[up] < 0)
      c->first_child[up] = (int)i;
    else
      c->next_sibling[last[up]] = (int)i;
    last[up] = (int)i;
  }
  free(last);
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
  gr_link_text(c->a, idx, link, sizeof(link));
  fprintf(c->out, "%*s", depth * 2, "");
  if (p->role == GR_ROLE_SWITCH_UP) {
    size_t ports = 0;
    for (size_t i = 0; i < t->npci; i++)
      ports += t->pci[i].parent == idx && t->pci[i].role == GR_ROLE_SWITCH_DOWN;
    const char *vn = gr_pci_vendor_name(p, &c->names);
    const char *model = gr_pci_display_name(t, idx, &c->names);
    bool named = strcmp(model, "PCIe switch") != 0;
    /* each part brings its own leading space, so a switch known by its bus id alone reads cleanly */
    fprintf(c->out, "Switch %s%s%s%s%s%s%s, %zu downstream port%s", bus, vn ? " " : "", vn ? vn : "", named ? " " : "",
            named ? model : "", ids[0] ? " " : "", ids, ports, ports == 1 ? "" : "s");
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
  else if (p->kind == GR_KIND_ACCEL)
    fprintf(c->out, "Accel ");
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
  for (int i = c->first_child[idx]; i >= 0; i = c->next_sibling[i]) {
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
    for (int k = c->first_child[i]; k >= 0; k = c->next_sibling[k]) {
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

void gr_print_tree(FILE *out, const struct gr_topo *t, const struct gr_analysis *a, unsigned flags)
{
  struct tree_ctx c = {.out = out, .t = t, .a = a, .flags = flags};
  mark_interesting(&c);
  fprintf(out, "\nPCIe tree (link: Gen and width it trains to, cur/max where they differ, GB/s per direction):\n");
  if (t->rig) /* ux-3 L7: made-up numbers must not pass for a machine's */
    fprintf(out, "(bus ids modelled: a rig names no buses, so gpurig numbers them in declaration order)\n");
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
  free(c.first_child);
  free(c.next_sibling);
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
            gr_pci_display_name(t, t->gpus[g], &names), gr_link_text(a, t->gpus[g], link, sizeof(link)), p->numa >= 0 ? numa : "?",
            a->hive[g]);
  }
  gr_names_free(&names);
}

/* ---- matrices ---- */

/* gpurig's own GPU x GPU grids keep space-aligned columns. */
static void matrix_header(FILE *out, const struct gr_topo *t)
{
  fprintf(out, "%-7s", "");
  for (size_t g = 0; g < t->ngpus; g++)
    fprintf(out, " GPU%-4zu", g);
}

/* Row r, column c of nvidia-smi's matrix: GPUs first, then NICs. */
static struct gr_path smi_path(const struct gr_topo *t, const struct gr_analysis *a, size_t r, size_t c)
{
  size_t ng = t->ngpus;
  if (r < ng && c < ng)
    return gr_gpu_path(a, r, c);
  if (r < ng)
    return a->gpu_nic[r * a->nnics + (c - ng)];
  if (c < ng)
    return a->gpu_nic[c * a->nnics + (r - ng)];
  return gr_path_between(a, t->nics[r - ng], t->nics[c - ng]);
}

/* A GPU row's last columns: CPU affinity, NUMA affinity, a second tab and
 * the GPU NUMA ID. */
static void print_affinity(FILE *out, const struct gr_pci *p)
{
  char numa[16] = "N/A", gpu_numa[16] = "N/A";
  if (p->numa >= 0)
    snprintf(numa, sizeof(numa), "%d", p->numa);
  if (p->gpu_numa >= 0)
    snprintf(gpu_numa, sizeof(gpu_numa), "%d", p->gpu_numa);
  fprintf(out, "\t%s\t%s\t\t%s\n", p->cpulist ? p->cpulist : "N/A", numa, gpu_numa);
}

/* The cell of row r, column c (GPUs first, then NICs), " X " on r == c. */
static const char *smi_cell(const struct gr_topo *t, const struct gr_analysis *a, size_t r, size_t c, char *cell,
                            size_t cap)
{
  if (r == c)
    return " X ";
  struct gr_path path = smi_path(t, a, r, c);
  return gr_level_str(&path, cell, cap);
}

/* nvidia-smi's rows by GPU class (print/groups.h): a row and a column per
 * group, then the NICs one by one; a group's affinity is its GPUs' (the
 * classes share local CPUs and NUMA nodes). */
static void print_smi_group_rows(FILE *out, const struct gr_topo *t, const struct gr_analysis *a)
{
  struct gr_groups g;
  char cell[16];
  gr_groups_make(a, &g);
  gr_print_group_note(out, a);
  for (size_t k = 0; k < g.n; k++)
    fprintf(out, "\t%s", g.label[k]);
  for (size_t n = 0; n < t->nnics; n++)
    fprintf(out, "\tNIC%zu", n);
  fprintf(out, "\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\n");
  for (size_t r = 0; r < g.n + t->nnics; r++) {
    size_t ri = r < g.n ? (size_t)a->class_gpus[a->class_start[r]] : t->ngpus + (r - g.n);
    if (r < g.n)
      fputs(g.label[r], out);
    else
      fprintf(out, "NIC%zu", r - g.n);
    for (size_t c = 0; c < g.n + t->nnics; c++) {
      size_t i = ri, j = c < g.n ? (size_t)a->class_gpus[a->class_start[c]] : t->ngpus + (c - g.n);
      if (r < g.n && c < g.n)
        gr_group_pair(a, r, c, &i, &j);
      fputc('\t', out);
      fputs(smi_cell(t, a, i, j, cell, sizeof(cell)), out);
    }
    if (r >= g.n)
      fputs("\t\t\t\t\n", out);
    else
      print_affinity(out, &t->pci[t->gpus[ri]]);
  }
  gr_groups_free(&g);
}

/* The tab-separated rows nvidia-smi topo -m prints (r535 and later): a tab
 * before every cell, " X " on the diagonal; GPU rows end with CPU affinity,
 * NUMA affinity, a second tab and the GPU NUMA ID; NIC rows leave those
 * three empty. */
static void print_smi_rows(FILE *out, const struct gr_topo *t, const struct gr_analysis *a)
{
  char cell[16];
  for (size_t g = 0; g < t->ngpus; g++)
    fprintf(out, "\tGPU%zu", g);
  for (size_t n = 0; n < t->nnics; n++)
    fprintf(out, "\tNIC%zu", n);
  fprintf(out, "\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\n");
  size_t rows = t->ngpus + t->nnics;
  char *line = xmalloc(sizeof(cell) * rows + 1); /* a cell: a tab and a level */
  for (size_t r = 0; r < rows; r++) {
    fprintf(out, "%s%zu", r < t->ngpus ? "GPU" : "NIC", r < t->ngpus ? r : r - t->ngpus);
    size_t len = 0;
    for (size_t c = 0; c < rows; c++) { /* n x n cells: no printf parsing, one write per row */
      const char *text = smi_cell(t, a, r, c, cell, sizeof(cell));
      size_t n = strlen(text); /* at most 15: gr_level_str fills cell[16] */
      line[len++] = '\t';
      memcpy(line + len, text, n);
      len += n;
    }
    fwrite(line, 1, len, out);
    if (r >= t->ngpus) {
      fputs("\t\t\t\t\n", out);
      continue;
    }
    print_affinity(out, &t->pci[t->gpus[r]]);
  }
  free(line);
}

/* nvidia-smi's legend, and gpurig's note where NV# cells are inferred. */
static void print_legend(FILE *out, const struct gr_topo *t, const struct gr_analysis *a)
{
  fprintf(out, "\nLegend:\n\n"
               "  X    = Self\n"
               "  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)\n"
               "  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node\n"
               "  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)\n"
               "  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)\n"
               "  PIX  = Connection traversing at most a single PCIe bridge\n"
               "  NV#  = Connection traversing a bonded set of # NVLinks\n");
  bool *inferred = xcalloc(t->ngpus + 1, sizeof(bool));
  bool any = false, xgmi = false;
  for (size_t cr = 0; cr < a->nclasses; cr++) /* alike for every pair of two classes: one pair each */
    for (size_t cc = 0; cc < a->nclasses; cc++) {
      size_t i, j;
      if (!gr_class_pair_rep(a, cr, cc, &i, &j))
        continue;
      struct gr_path p = gr_gpu_path(a, i, j);
      if (p.level == GR_LVL_GPULINK && p.nv_inferred)
        for (size_t k = a->class_start[cr]; k < a->class_start[cr + 1]; k++)
          inferred[a->class_gpus[k]] = any = true;
      xgmi |= p.level == GR_LVL_GPULINK && p.xgmi;
    }
  /* rocm-smi's word for AMD's GPU links, which nvidia-smi's legend lacks */
  if (xgmi)
    fprintf(out, "  XGMI = Connection traversing AMD xGMI (Infinity Fabric) links, as rocm-smi --showtopo prints it\n");
  char list[256];
  if (any)
    fprintf(out, "  (gpurig: the NV# cells between %s are inferred, not recorded: see \"NVSwitch fabric\" below)\n",
            gr_gpu_ranges(inferred, t->ngpus, list, sizeof(list)));
  free(inferred);
}

static const char *gbps_text(double v, char *buf, size_t cap)
{
  snprintf(buf, cap, fabs(v - round(v)) < 0.05 ? "%.0f" : "%.1f", v);
  return buf;
}

static const char *fabric_origin(const struct gr_fabric *f, char *buf, size_t cap)
{
  const char *from = "";
  switch (f->from) {
  case GR_FABRIC_HWLOC: from = "from the hwloc NVLink matrix"; break;
  case GR_FABRIC_NVML: from = "from the driver"; break;
  case GR_FABRIC_RIG: from = "from the rig"; break;
  case GR_FABRIC_NCCL: from = "from the NCCL topology file"; break;
  case GR_FABRIC_INFERRED:
    snprintf(buf, cap, "inferred%s%s", f->why ? ": " : "", f->why ? f->why : "");
    return buf;
  }
  if (f->nswitches > 0)
    snprintf(buf, cap, "%s, %d NVSwitch%s", from, f->nswitches, f->nswitches == 1 ? "" : "es");
  else
    snprintf(buf, cap, "%s", from);
  return buf;
}

/* One line per fabric: its origin, then its members grouped by their links
 * ("GPU0-7, 12 NVLink3 links each, 300 GB/s per direction"). Outside the
 * tab-separated block, so that nvidia-smi parsers read past it. */
static void print_fabric(FILE *out, const struct gr_topo *t, const struct gr_fabric *f)
{
  char origin[256], list[256], gb[32], links[48];
  bool *done = xcalloc(f->nmembers + 1, sizeof(bool));
  bool *in = xcalloc(t->ngpus + 1, sizeof(bool));
  fprintf(out, "\nNVSwitch fabric (%s):", fabric_origin(f, origin, sizeof(origin)));
  for (size_t m = 0, groups = 0; m < f->nmembers; m++) {
    if (done[m])
      continue;
    const struct gr_fabric_member *lead = &f->members[m];
    size_t count = 0;
    memset(in, 0, (t->ngpus + 1) * sizeof(bool));
    for (size_t k = m; k < f->nmembers; k++) {
      const struct gr_fabric_member *x = &f->members[k];
      int g = t->pci[x->gpu].gpu_index;
      if (done[k] || x->links != lead->links || fabs(x->gbps - lead->gbps) > 1e-9 || g < 0)
        continue;
      done[k] = in[g] = true;
      count++;
    }
    if (!count)
      continue;
    if (f->gpulink_gen > 0)
      snprintf(links, sizeof(links), "%d NVLink%d link%s", lead->links, f->gpulink_gen, lead->links == 1 ? "" : "s");
    else
      snprintf(links, sizeof(links), "%d NVLink%s", lead->links, lead->links == 1 ? "" : "s");
    fprintf(out, "%s %s, %s%s, %s GB/s per direction", groups++ ? ";" : "", gr_gpu_ranges(in, t->ngpus, list, sizeof(list)),
            links, count > 1 ? " each" : "", gbps_text(lead->gbps, gb, sizeof(gb)));
  }
  fputc('\n', out);
  free(in);
  free(done);
}

void gr_print_matrix(FILE *out, const struct gr_topo *t, const struct gr_analysis *a)
{
  if (!t->ngpus)
    return;
  fprintf(out, "\nGPU matrix (nvidia-smi topo -m levels):\n");
  if (gr_grids_grouped(a))
    print_smi_group_rows(out, t, a);
  else
    print_smi_rows(out, t, a);
  print_legend(out, t, a);
  if (t->nnics) {
    char name[128];
    fprintf(out, "\nNIC Legend:\n\n");
    for (size_t n = 0; n < t->nnics; n++)
      fprintf(out, "  NIC%zu: %s\n", n, gr_nic_legend_name(&t->pci[t->nics[n]], name, sizeof(name)));
  }
  for (size_t i = 0; i < t->nfabrics; i++)
    if (t->fabrics[i].nmembers)
      print_fabric(out, t, &t->fabrics[i]);
}

/* Prints a GPU x GPU matrix whose cells come from `cell`. */
typedef void (*cell_fn)(const struct gr_analysis *a, size_t r, size_t c, char *buf, size_t cap);

/* The same grid by class (print/groups.h), through its cell_fn. */
struct grid_cell {
  const struct gr_analysis *a;
  cell_fn cell;
};

static void group_cell(const void *ctx, size_t i, size_t j, char *buf, size_t cap)
{
  const struct grid_cell *g = ctx;
  g->cell(g->a, i, j, buf, cap);
}

static void print_gpu_grid(FILE *out, const struct gr_topo *t, const struct gr_analysis *a, cell_fn cell)
{
  if (gr_grids_grouped(a)) {
    gr_print_group_grid(out, a, group_cell, &(struct grid_cell){a, cell});
    return;
  }
  char *row = xmalloc(16 * t->ngpus + 1); /* a cell: a space and at most 15 bytes */
  matrix_header(out, t);
  fputc('\n', out);
  for (size_t r = 0; r < t->ngpus; r++) {
    size_t len = 0;
    fprintf(out, "GPU%-4zu", r);
    for (size_t c = 0; c < t->ngpus; c++) {
      char buf[16];
      cell(a, r, c, buf, sizeof(buf));
      len += gr_put_cell(row + len, buf, 7);
    }
    row[len++] = '\n';
    fwrite(row, 1, len, out);
  }
  free(row);
}

static void nccl_cell(const struct gr_analysis *a, size_t r, size_t c, char *buf, size_t cap)
{
  struct gr_path p = gr_gpu_path(a, r, c);
  gr_set_text(buf, cap, r == c ? "X" : gr_nccl_path_str(&p));
  if (r != c && !p.nccl_p2p && strlen(buf) + 5 <= cap)
    strcat(buf, "/shm");
}

static void gbps_cell(double v, bool self, char *buf, size_t cap)
{
  if (self)
    gr_set_text(buf, cap, "X");
  else if (v > 0)
    gr_fmt_1f(v, buf, cap);
  else
    gr_set_text(buf, cap, "?");
}

static void bw_cell(const struct gr_analysis *a, size_t r, size_t c, char *buf, size_t cap)
{
  gbps_cell(gr_gpu_path(a, r, c).bw_gbps, r == c, buf, cap);
}

static void nccl_bw_cell(const struct gr_analysis *a, size_t r, size_t c, char *buf, size_t cap)
{
  gbps_cell(gr_gpu_path(a, r, c).nccl_bw_gbps, r == c, buf, cap);
}

void gr_print_nccl(FILE *out, const struct gr_topo *t, const struct gr_analysis *a)
{
  if (t->ngpus < 2)
    return;
  /* RCCL on AMD GPUs: the same rules and NCCL_* variables (docs/predict.md, "RCCL on AMD machines") */
  fprintf(out, "\n%s's view (NODE folds into PHB; \"/shm\" = no P2P by default, copies go through host memory):\n",
          gr_topo_collective(t));
  print_gpu_grid(out, t, a, nccl_cell);
  char dflt[160], why[160];
  bool any_p2p = gr_any_p2p_pair(a);
  /* no setting is offered where no pair can do P2P at any level (topo.no-p2p says why) */
  fprintf(out, "%s: P2P up to %s (%s)%s\n", gr_nccl_defaults_text(a, dflt, sizeof(dflt)),
          gr_nccl_level_str(a->nccl_p2p_level), gr_nccl_why(a, a->ngpus, why, sizeof(why)),
          any_p2p ? "; change with NCCL_P2P_LEVEL=PIX|PXB|PHB|SYS, disable with NCCL_P2P_DISABLE=1."
                  : "; no GPU pair here can do P2P, so no NCCL_P2P_LEVEL changes that (see topo.no-p2p).");
}

/* The analysis's bottlenecks: the links that hold GPU pairs below what the
 * best pairs reach, so each low number in the matrix has its cause next to it. */
static void print_bottlenecks(FILE *out, const struct gr_topo *t, const struct gr_analysis *a)
{
  for (size_t i = 0; i < a->nbottlenecks; i++) {
    const struct gr_bottleneck *b = &a->bottlenecks[i];
    char list[256] = "", name[64], link[128];
    size_t off = 0;
    int first[12];
    size_t nfirst = gr_bottleneck_pairs(a, b, first, 6);
    for (size_t k = 0; k < nfirst && off < sizeof(list); k++)
      off += (size_t)snprintf(list + off, sizeof(list) - off, "%sGPU%d-GPU%d", k ? ", " : "", first[2 * k],
                              first[2 * k + 1]);
    if (i == 0)
      fprintf(out, "Links that hold pairs below the best pair's %.1f GB/s:\n", a->best_pair_gbps);
    const struct gr_pci *p = &t->pci[b->node];
    if (p->role == GR_ROLE_SWITCH_UP)
      snprintf(name, sizeof(name), "the uplink of switch %s", gr_pci_busid(p, link, sizeof(link)));
    else
      snprintf(name, sizeof(name), "%s's link", gr_pci_label(t, b->node, link, sizeof(link)));
    fprintf(out, "  %s, %s (NCCL %.1f): %zu pair%s (%s%s)\n", name, gr_link_text(a, b->node, link, sizeof(link)),
            b->nccl_gbps, b->npairs, b->npairs == 1 ? "" : "s", list, b->npairs > 6 ? ", ..." : "");
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
    for (size_t g = 0; g < t->ngpus; g++)
      if (a->hive[g] == (int)h)
        fprintf(out, " GPU%zu", g);
    const struct gr_hive *hv = &a->hives[h];
    if (hv->kind == GR_HIVE_SWITCH || hv->kind == GR_HIVE_SWITCHES)
      fprintf(out, "  (%s, worst pair %s)", gr_hive_kind_name(hv->kind), gr_level_name(hv->worst));
    else
      fprintf(out, "  (%s)", gr_hive_name(a, h));
    fputc('\n', out);
  }
}

void gr_print_findings(FILE *out, const struct gr_topo *t, const struct gr_analysis *a, const struct gr_text_style *st)
{
  (void)t;
  fprintf(out, "\nFindings:\n");
  if (!a->findings.n)
    fprintf(out, "  none\n");
  if (!st->verbose) {
    gr_print_finding_groups(out, &a->findings, st, 0, GR_SEV_OK, NULL);
    return;
  }
  for (size_t i = 0; i < a->findings.n; i++) {
    const struct gr_finding *f = &a->findings.v[i];
    fprintf(out, "  %-4s  %s\n", gr_sev_name(f->sev), f->text);
    if (f->fix) /* the whole finding: what to do too, as the short form says it */
      fprintf(out, "        fix: %s\n", f->fix);
    fprintf(out, "        [%s]\n", f->id);
  }
}

