/* The doctor's registry and the plumbing every check shares: results,
 * evidence, reads through the root prefix, thresholds. The checks live in
 * doctor_pcie.c, doctor_host.c and doctor_gpu.c. */
#include "doctor/doctor.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "facts/catalog.h"
#include "doctor/doctor_internal.h"

struct check {
  struct gr_check_def def;
  void (*run)(struct gr_doctor_ctx *c);
};

/* The registry: adding a check is adding a row. */
static const struct check checks[] = {
    {{"gpu.count", "GPUs found", "--expect-gpus / --expect; AzNHC check_gpu_count", false}, check_gpu_count},
    {{"gpu.link-uniform", "GPUs of one model have the same link", "GCM checks/check_pci.py (degraded link)", false},
     check_gpu_link_uniform},
    {{"pcie.link-width", "PCIe link width on GPU paths",
      "PCIe Base Spec: a link trains to the lower of both ends' widths; DCGM nvvs pcie min_pci_width", false},
     check_pcie_link_width},
    {{"pcie.link-gen", "PCIe link generation on GPU paths",
      "DCGM nvvs pcie min_pci_generation; NVIDIA GPUs drop to 2.5 GT/s at idle", false},
     check_pcie_link_gen},
    {{"pcie.aer", "PCIe AER error counters on GPU paths",
      "kernel Documentation/ABI/testing/sysfs-bus-pci-devices-aer_stats; DCGM DcgmHealthWatch.cpp replay rate", true},
     check_pcie_aer},
    {{"pcie.acs", "PCIe ACS redirection between GPUs",
      "NCCL user guide, Troubleshooting: PCI Access Control Services (ACS)", true},
     check_pcie_acs},
    {{"iommu.mode", "IOMMU mode", "NCCL user guide, Troubleshooting: IOMMU; kernel-parameters.txt iommu=", true},
     check_iommu_mode},
    {{"gpu.bar1", "GPU BAR1 size (Resizable BAR)", "tinygrad/open-gpu-kernel-modules README (P2P needs large BAR1)",
      true},
     check_gpu_bar1},
    {{"driver.version", "NVIDIA driver version and known issues", "data/driver-issues.tsv", true},
     check_driver_version},
    {{"driver.p2p", "GeForce P2P and what NCCL does by default",
      "NCCL user guide, Environment variables: NCCL_P2P_DISABLE, NCCL_P2P_LEVEL", false},
     check_driver_p2p},
    {{"rdma.peermem", "GPUDirect RDMA module", "NVIDIA GPUDirect RDMA documentation (nvidia-peermem)", true},
     check_rdma_peermem},
    {{"numa.locality", "NUMA locality of GPUs", "NCCL/CUDA use numa_node to place memory and threads", false},
     check_numa_locality},
    {{"mem.host", "Host memory against GPU memory", "data/health.tsv host_ram_per_vram", true}, check_mem_host},
    {{"mem.channels", "Memory channels populated per socket", "SMBIOS 3.x type 17; data/cpu-memory.tsv", true},
     check_mem_channels},
    {{"mem.memlock", "Locked-memory limit for RDMA", "NVIDIA MLNX_OFED docs: ulimit -l unlimited for RDMA", true},
     check_mem_memlock},
    {{"cpu.governor", "CPU frequency governor", "kernel Documentation/admin-guide/pm/cpufreq.rst", true},
     check_cpu_governor},
    {{"kernel.mitigations", "CPU vulnerability mitigations",
      "kernel Documentation/admin-guide/hw-vuln; kernel-parameters.txt mitigations=", true},
     check_kernel_mitigations},
    {{"kernel.thp", "Transparent huge pages", "kernel Documentation/admin-guide/mm/transhuge.rst", true},
     check_kernel_thp},
    {{"xid.errors", "NVIDIA Xid errors in the kernel log", "docs.nvidia.com/deploy/xid-errors; data/xid.tsv", true},
     check_xid_errors},
};

const struct gr_check_def *gr_doctor_checks(size_t *n)
{
  static struct gr_check_def defs[sizeof(checks) / sizeof(checks[0])];
  *n = sizeof(checks) / sizeof(checks[0]);
  for (size_t i = 0; i < *n; i++)
    defs[i] = checks[i].def;
  return defs;
}

const char *gr_check_sev_name(enum gr_check_sev s)
{
  static const char *const names[] = {"fail", "warn", "error", "info", "skipped", "ok"};
  return s < GR_CHECK_NSEV ? names[s] : "?";
}

const char *dr_subject(const struct gr_topo *t, int i, char *buf, size_t cap)
{
  char label[32], bus[32];
  const struct gr_pci *p = &t->pci[i];
  gr_pci_label(t, i, label, sizeof(label));
  gr_pci_busid(p, bus, sizeof(bus));
  if (strcmp(label, bus) == 0) {
    const char *role = p->role == GR_ROLE_ROOTPORT      ? "root port "
                       : p->role == GR_ROLE_SWITCH_UP   ? "switch upstream port "
                       : p->role == GR_ROLE_SWITCH_DOWN ? "switch downstream port "
                                                        : "";
    snprintf(buf, cap, "%s%s", role, bus);
  } else {
    snprintf(buf, cap, "%s %s", label, bus);
  }
  return buf;
}

struct gr_check_result *dr_add(struct gr_doctor_ctx *c, enum gr_check_sev sev, int node, const char *fmt, ...)
{
  struct gr_doctor_report *r = c->r;
  char buf[64];
  va_list ap;
  r->res = xrealloc(r->res, (r->nres + 1) * sizeof(*r->res));
  struct gr_check_result *x = &r->res[r->nres++];
  memset(x, 0, sizeof(*x));
  x->id = c->def->id;
  x->title = c->def->title;
  x->reference = c->def->reference;
  x->sev = sev;
  if (node >= 0) {
    x->subject = xstrdup(dr_subject(c->t, node, buf, sizeof(buf)));
    x->pci_bus_id = xstrdup(gr_pci_busid(&c->t->pci[node], buf, sizeof(buf)));
  }
  va_start(ap, fmt);
  if (vasprintf(&x->message, fmt, ap) < 0)
    abort();
  va_end(ap);
  r->count[sev]++;
  return x;
}

void dr_evidence(struct gr_check_result *r, const char *file, const char *fmt, ...)
{
  va_list ap;
  r->ev = xrealloc(r->ev, (r->nev + 1) * sizeof(*r->ev));
  struct gr_evidence *e = &r->ev[r->nev++];
  e->file = xstrdup(file);
  va_start(ap, fmt);
  if (vasprintf(&e->value, fmt, ap) < 0)
    abort();
  va_end(ap);
}

void dr_fix(struct gr_check_result *r, const char *cost, const char *fmt, ...)
{
  va_list ap;
  free(r->fix);
  free(r->cost);
  va_start(ap, fmt);
  if (vasprintf(&r->fix, fmt, ap) < 0)
    abort();
  va_end(ap);
  r->cost = xstrdup(cost);
}

struct gr_check_result *dr_skip_root(struct gr_doctor_ctx *c, const char *fmt, ...)
{
  char *msg;
  va_list ap;
  va_start(ap, fmt);
  if (vasprintf(&msg, fmt, ap) < 0)
    abort();
  va_end(ap);
  struct gr_check_result *x = dr_add(c, GR_CHECK_SKIPPED, -1, "%s", msg);
  free(msg);
  x->needs_root = true;
  c->root_skipped = true;
  return x;
}

int dr_read(const struct gr_doctor_ctx *c, const char *path, char *buf, size_t cap)
{
  if (!c->fs)
    return -ENOENT;
  return gr_fs_read_str(c->fs, path, buf, cap);
}

const char *dr_shown(const struct gr_doctor_ctx *c, const char *path, char *buf, size_t cap)
{
  snprintf(buf, cap, "%s%s", c->fs ? c->fs->root : "", path);
  return buf;
}

double dr_threshold(const struct gr_doctor_ctx *c, const char *key)
{
  double v = 0;
  gr_table_number(&c->health, key, &v); /* gr_doctor_run verified every key exists */
  return v;
}

const struct gr_gpu_model *dr_gpu_model(const struct gr_pci *p)
{
  return gr_catalog_find_pci(p->vendor, p->device);
}

static int load_health(struct gr_doctor_ctx *c, struct gr_err *err)
{
  static const char *const keys[] = {"aer_ber",        "host_ram_per_vram", "xid_window_h",
                                     "gen1_idle_gen"};
  if (gr_table_load("health.tsv", &c->health, err) != 0)
    return -1;
  if (gr_table_col(&c->health, "key") < 0 || gr_table_col(&c->health, "value") < 0)
    return gr_fail(err, GR_EXIT_CANNOT_RUN, "%s: needs the columns key and value", c->health.name);
  size_t kc = (size_t)gr_table_col(&c->health, "key");
  for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
    bool found = false;
    for (size_t i = 0; i < c->health.nrows; i++)
      found |= strcmp(gr_table_cell(&c->health, i, kc), keys[k]) == 0;
    if (!found)
      return gr_fail(err, GR_EXIT_CANNOT_RUN, "%s: no row for %s", c->health.name, keys[k]);
  }
  return 0;
}

static double read_uptime(const struct gr_doctor_ctx *c)
{
  char buf[128];
  if (dr_read(c, "/proc/uptime", buf, sizeof(buf)) != 0)
    return -1;
  char *end;
  double up = strtod(buf, &end);
  return end != buf && up >= 0 ? up : -1;
}

static void collect_root_additions(struct gr_doctor_report *r, const char *id)
{
  char *prev = r->root_would_add;
  r->root_would_add = prev ? xasprintf("%s %s", prev, id) : xstrdup(id);
  free(prev);
}

int gr_doctor_run(const struct gr_fs *fs, const struct gr_topo *t, const struct gr_analysis *a,
                  const struct gr_doctor_opts *o, struct gr_doctor_report *r, struct gr_err *err)
{
  struct gr_doctor_ctx c = {.fs = fs, .t = t, .a = a, .o = o, .r = r};
  int rc = -1;
  memset(r, 0, sizeof(*r));
  if (load_health(&c, err) != 0)
    goto out;
  c.uptime_s = read_uptime(&c);
  c.is_root = fs && gr_fs_is_live(fs) && geteuid() == 0;
  r->is_root = c.is_root;
  for (size_t i = 0; i < sizeof(checks) / sizeof(checks[0]); i++) {
    c.def = &checks[i].def;
    c.root_skipped = false;
    if (c.def->needs_fs && !fs)
      dr_add(&c, GR_CHECK_SKIPPED, -1, "This input (%s) records the wiring only; run doctor on the machine or on a gathered tree (--root DIR).",
             t->rig ? "a rig file" : "hwloc XML");
    else
      checks[i].run(&c);
    if (c.root_skipped)
      collect_root_additions(r, c.def->id);
  }
  rc = 0;
out:
  gr_table_free(&c.health);
  if (rc != 0)
    gr_doctor_report_free(r);
  return rc;
}

void gr_doctor_report_free(struct gr_doctor_report *r)
{
  for (size_t i = 0; i < r->nres; i++) {
    struct gr_check_result *x = &r->res[i];
    free(x->subject);
    free(x->pci_bus_id);
    free(x->message);
    free(x->fix);
    free(x->cost);
    for (size_t e = 0; e < x->nev; e++) {
      free(x->ev[e].file);
      free(x->ev[e].value);
    }
    free(x->ev);
  }
  free(r->res);
  free(r->root_would_add);
  memset(r, 0, sizeof(*r));
}

enum gr_exit gr_doctor_exit(const struct gr_doctor_report *r)
{
  if (r->count[GR_CHECK_FAIL])
    return GR_EXIT_FAIL;
  if (r->count[GR_CHECK_WARN])
    return GR_EXIT_WARN;
  if (r->count[GR_CHECK_ERROR])
    return GR_EXIT_CANNOT_RUN;
  return GR_EXIT_OK;
}
