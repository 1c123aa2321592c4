/* The doctor's registry and the plumbing every check shares: results,
 * evidence, reads through the root prefix, thresholds. The checks live in
 * doctor_pcie.c, doctor_host.c and doctor_gpu.c. */
#include "doctor/doctor.h"

#include <errno.h>
#include <fcntl.h>
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
    {{"gpu.power-limit", "GPU power limits: alike, and within the PSU",
      "NVML nvmlDeviceGetEnforcedPowerLimit; data/power-*.tsv and docs/power.md (--psu)", true},
     check_gpu_power_limits},
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
    {{"gpu.xgmi", "xGMI link errors",
      "rocm_smi.h rsmi_dev_xgmi_error_status, rsmi_dev_ecc_count_get (RSMI_GPU_BLOCK_XGMI_WAFL); rocm-smi --resetxgmierr",
      false},
     check_gpu_xgmi},
};

size_t gr_doctor_ncheck(void)
{
  return sizeof(checks) / sizeof(checks[0]);
}

const struct gr_check_def *gr_doctor_check(size_t i)
{
  return i < gr_doctor_ncheck() ? &checks[i].def : NULL;
}

struct gr_finding *dr_add(struct gr_doctor_ctx *c, enum gr_sev sev, int node, const char *fmt, ...)
{
  char subject[96], bus[32];
  struct gr_findings *into = &c->r->findings;
  if (c->added++ >= DR_MAX_RESULTS) {
    gr_findings_free(&c->overflow); /* kept only for the caller to finish filling in */
    into = &c->overflow;
  }
  va_list ap;
  va_start(ap, fmt);
  struct gr_finding *x = gr_finding_vadd(into, sev, c->def->id, fmt, ap);
  va_end(ap);
  if (into == &c->overflow)
    c->dropped[x->sev]++;
  x->title = c->def->title;
  x->reference = c->def->reference;
  if (node >= 0)
    gr_finding_subject(x, node, gr_pci_subject(c->t, node, subject, sizeof(subject)),
                       gr_pci_busid(&c->t->pci[node], bus, sizeof(bus)));
  return x;
}

struct gr_finding *dr_skip_root(struct gr_doctor_ctx *c, const char *fmt, ...)
{
  char *msg;
  va_list ap;
  va_start(ap, fmt);
  if (vasprintf(&msg, fmt, ap) < 0)
    abort();
  va_end(ap);
  struct gr_finding *x = dr_add(c, GR_SEV_SKIPPED, -1, "%s", msg);
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

int dr_read_input(struct gr_doctor_ctx *c, const char *path, char *buf, size_t cap)
{
  char shown[4400];
  int rc = dr_read(c, path, buf, cap);
  if (rc == 0 || rc == -ENOENT)
    return rc;
  struct gr_finding *r = dr_add(c, GR_SEV_ERROR, -1, "%s: %s.", dr_shown(c, path, shown, sizeof(shown)), gr_fs_strerror(rc));
  gr_finding_evidence(r, path, "unreadable: %s", gr_fs_strerror(rc));
  return rc;
}

int dr_read_file(const struct gr_doctor_ctx *c, const char *path, size_t max, unsigned flags, struct gr_file *f,
                 struct gr_err *err)
{
  char full[8192];
  memset(f, 0, sizeof(*f));
  if (!c->fs) {
    gr_fail(err, GR_EXIT_FAIL, "%s: not in this input", path);
    return -ENOENT;
  }
  if (!gr_fs_path(c->fs, path, full, sizeof(full))) {
    gr_fail(err, GR_EXIT_FAIL, "%s%s: %s", c->fs->root, path, strerror(ENAMETOOLONG));
    return -ENAMETOOLONG;
  }
  if (!gr_fs_is_live(c->fs))
    flags &= ~(unsigned)GR_FILE_DEVICE; /* in a gathered tree a regular file stands for the device */
  /* Opening it first gives the errno that tells "absent" and "needs root"
   * from the rest, which gr_file_read's one line does not; gr_file_read then
   * reads it with the cap (and checks its kind again). */
  int fd = (flags & GR_FILE_DEVICE) ? gr_fs_open_device(c->fs, path, O_RDONLY) : gr_fs_open(c->fs, path, O_RDONLY);
  if (fd < 0) {
    gr_fail(err, GR_EXIT_FAIL, "%s: %s", full, gr_fs_strerror(fd));
    return fd;
  }
  close(fd);
  return gr_file_read(full, max, flags, f, err) == 0 ? 0 : -EIO;
}

const char *dr_shown(const struct gr_doctor_ctx *c, const char *path, char *buf, size_t cap)
{
  snprintf(buf, cap, "%s%s", c->fs ? c->fs->root : "", path);
  return buf;
}

const struct gr_gpu_model *dr_gpu_model(const struct gr_pci *p)
{
  return gr_pci_catalog(p);
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

/* The results a check had past DR_MAX_RESULTS, as one result as bad as the
 * worst of them, so that the exit status is what all of them would give. */
static void summarise_dropped(struct gr_doctor_ctx *c)
{
  static const enum gr_sev worst_first[] = {GR_SEV_FAIL, GR_SEV_WARN, GR_SEV_ERROR,
                                            GR_SEV_INFO, GR_SEV_SKIPPED, GR_SEV_OK};
  char counts[256] = "";
  size_t total = 0, off = 0;
  enum gr_sev worst = GR_SEV_OK;
  for (size_t k = 0; k < sizeof(worst_first) / sizeof(worst_first[0]); k++) {
    size_t n = c->dropped[worst_first[k]];
    if (!n)
      continue;
    worst = total ? worst : worst_first[k];
    total += n;
    off += (size_t)snprintf(counts + off, sizeof(counts) - off, "%s%zu %s", off ? ", " : "", n, gr_sev_name(worst_first[k]));
  }
  if (!total)
    return;
  c->added = 0; /* the summary itself is always listed */
  dr_add(c, worst, -1, "%zu more results of this check are not listed (%s): doctor lists at most %d per check.", total,
         counts, DR_MAX_RESULTS);
}

static void run_check(struct gr_doctor_ctx *c, const struct check *k, const struct gr_machine *m)
{
  c->def = &k->def;
  c->root_skipped = false;
  c->added = 0;
  memset(c->dropped, 0, sizeof(c->dropped));
  /* the Xid check reads a log given with --kmsg whatever the input: a rig
   * with the machine's kernel log beside it */
  bool given_log = c->o->kmsg_path && strcmp(c->def->id, "xid.errors") == 0;
  if (c->def->needs_fs && !c->fs && !given_log)
    dr_add(c, GR_SEV_SKIPPED, -1, "This input (%s) records the wiring only; run doctor on the machine or on a gathered tree (--root DIR).",
           gr_topo_input_name(&m->topo));
  else
    k->run(c);
  summarise_dropped(c);
  gr_findings_free(&c->overflow);
  if (c->root_skipped)
    collect_root_additions(c->r, c->def->id);
}

void gr_doctor_run(const struct gr_machine *m, const struct gr_doctor_opts *o, struct gr_doctor_report *r)
{
  const struct gr_fs *fs = m->has_fs ? &m->fs : NULL;
  struct gr_doctor_ctx c = {.fs = fs, .t = &m->topo, .a = &m->analysis, .o = o, .r = r};
  memset(r, 0, sizeof(*r));
  c.uptime_s = read_uptime(&c);
  c.is_root = fs && gr_fs_is_live(fs) && geteuid() == 0;
  r->is_root = c.is_root;
  r->cuda = o->cuda;
  r->nccl = o->nccl;
  r->hip = o->hip;
  r->rccl = o->rccl;
  r->acs_redirecting = -1;
  for (size_t i = 0; i < sizeof(checks) / sizeof(checks[0]); i++)
    run_check(&c, &checks[i], m);
}

void gr_doctor_report_free(struct gr_doctor_report *r)
{
  gr_findings_free(&r->findings);
  free(r->root_would_add);
  free(r->driver_version);
  free(r->gpu_xids);
  memset(r, 0, sizeof(*r));
}
