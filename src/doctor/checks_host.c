/* Doctor checks on the host: IOMMU, NUMA, memory, CPU frequency, kernel
 * settings. They read /proc and /sys through the root prefix. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "facts/catalog.h"
#include "doctor/dmi.h"
#include "doctor/doctor_internal.h"

#define CMDLINE "/proc/cmdline"

/* Counts entries of a directory under the root (not . and ..); -1 if absent. */
static long count_dir(const struct gr_doctor_ctx *c, const char *path, char *first, size_t cap)
{
  struct dirent *e;
  long n = 0;
  DIR *d = gr_fs_opendir(c->fs, path);
  if (!d)
    return -1;
  if (first && cap)
    first[0] = '\0';
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.')
      continue;
    if (first && !n)
      snprintf(first, cap, "%.*s", (int)(cap > 1 ? cap - 1 : 0), e->d_name);
    n++;
  }
  closedir(d);
  return n;
}

/* True if the kernel command line has `word` as a whole parameter. */
static bool cmdline_has(const char *cmdline, const char *word)
{
  size_t n = strlen(word);
  for (const char *p = strstr(cmdline, word); p; p = strstr(p + 1, word))
    if ((p == cmdline || p[-1] == ' ') && (p[n] == '\0' || p[n] == ' ' || p[n] == '\n'))
      return true;
  return false;
}

/* ---- IOMMU ---- */

enum iommu_mode { IOMMU_OFF, IOMMU_PASSTHROUGH, IOMMU_TRANSLATED, IOMMU_UNKNOWN };

static enum iommu_mode iommu_mode(struct gr_doctor_ctx *c, const char *cmdline, char *how, size_t cap)
{
  char type[64], path[128];
  long units = count_dir(c, "/sys/class/iommu", NULL, 0), groups = count_dir(c, "/sys/kernel/iommu_groups", NULL, 0);
  if (units <= 0 && groups <= 0) {
    snprintf(how, cap, "no IOMMU units in /sys/class/iommu and no IOMMU groups");
    return IOMMU_OFF;
  }
  for (size_t g = 0; g < c->t->ngpus; g++) {
    int grp = c->t->pci[c->t->gpus[g]].iommu_group;
    snprintf(path, sizeof(path), "/sys/kernel/iommu_groups/%d/type", grp);
    if (grp < 0 || dr_read_input(c, path, type, sizeof(type)) != 0)
      continue;
    snprintf(how, cap, "GPU%zu's IOMMU group %d has type %s", g, grp, type);
    if (strcmp(type, "identity") == 0)
      return IOMMU_PASSTHROUGH;
    if (strncmp(type, "DMA", 3) == 0)
      return IOMMU_TRANSLATED;
    return IOMMU_UNKNOWN;
  }
  if (cmdline_has(cmdline, "iommu=pt") || cmdline_has(cmdline, "iommu.passthrough=1")) {
    snprintf(how, cap, "the kernel command line asks for passthrough");
    return IOMMU_PASSTHROUGH;
  }
  snprintf(how, cap, "%ld IOMMU groups but no group type file (kernels before 5.11, or a partial gather): passthrough or translation cannot be told", groups);
  return IOMMU_UNKNOWN;
}

void check_iommu_mode(struct gr_doctor_ctx *c)
{
  char cmdline[4096] = "", how[256];
  bool have_cmdline = dr_read_input(c, CMDLINE, cmdline, sizeof(cmdline)) == 0;
  enum iommu_mode m = iommu_mode(c, cmdline, how, sizeof(how));
  static const char *const names[] = {"off", "passthrough", "translated", "unknown"};
  struct gr_finding *r;
  c->r->iommu_mode = m == IOMMU_UNKNOWN ? NULL : names[m];
  if (m == IOMMU_TRANSLATED && c->t->ngpus >= 2) {
    r = dr_add(c, GR_SEV_WARN, -1,
               "The IOMMU translates DMA addresses (%s): GPU peer-to-peer traffic is remapped or sent through the root complex, which is slow or hangs NCCL.",
               how);
    gr_finding_fix(r, "iommu=pt: host devices lose DMA isolation (VFIO passthrough to VMs still works); turning the IOMMU off in the BIOS: no VM passthrough",
           "Add iommu=pt to GRUB_CMDLINE_LINUX in /etc/default/grub (on AMD with amd_iommu=on), run update-grub and reboot; or turn off VT-d / AMD-Vi (IOMMU) in the BIOS if no VM needs device passthrough.");
  } else {
    r = dr_add(c, m == IOMMU_UNKNOWN ? GR_SEV_INFO : GR_SEV_OK, -1, "IOMMU %s (%s)%s.", names[m], how,
               m == IOMMU_TRANSLATED ? "; harmless with fewer than two GPUs"
               : m == IOMMU_UNKNOWN ? "; if it translates, GPU peer-to-peer suffers (see the fix)"
                                    : "");
    if (m == IOMMU_UNKNOWN && c->t->ngpus >= 2)
      gr_finding_fix(r, "iommu=pt: host devices lose DMA isolation",
             "`cat /sys/kernel/iommu_groups/*/type` shows the mode; for GPU peer-to-peer use iommu=pt on the kernel command line (or the IOMMU off in the BIOS).");
  }
  if (have_cmdline)
    gr_finding_evidence(r, CMDLINE, "%s", cmdline);
}

/* ---- NUMA ---- */

void check_numa_locality(struct gr_doctor_ctx *c)
{
  const struct gr_topo *t = c->t;
  size_t unknown = 0;
  char path[128], who[64];
  struct gr_finding *r = NULL;
  for (size_t g = 0; g < t->ngpus && t->nnumas > 1; g++) {
    const struct gr_pci *p = &t->pci[t->gpus[g]];
    if (p->numa >= 0)
      continue;
    if (!unknown++)
      r = dr_add(c, GR_SEV_WARN, -1, "GPUs report NUMA node -1 on a machine with %zu NUMA nodes: the firmware does not say which socket they hang off, so NCCL and the CUDA runtime cannot keep their buffers and threads local.",
                 t->nnumas);
    gr_finding_evidence(r, gr_pci_sysfs_path(p, "numa_node", path, sizeof(path)), "-1 (%s)", gr_pci_subject(t, t->gpus[g], who, sizeof(who)));
  }
  if (r)
    gr_finding_fix(r, "none",
           "Enable NUMA / ACPI SRAT in the BIOS (e.g. \"NUMA\" on, \"Socket Interleave\" off) or update the BIOS; until then pin jobs by hand: `numactl --cpunodebind=N --membind=N` with the socket each GPU's slot belongs to.");
  size_t per_socket = t->npackages ? t->nnumas / t->npackages : 0;
  if (t->npackages && per_socket > 1 && t->nnumas % t->npackages == 0) {
    r = dr_add(c, GR_SEV_INFO, -1,
               "Each of the %zu sockets has %zu NUMA nodes (AMD NPS%zu or Intel sub-NUMA clustering): GPUs on different nodes of one socket are NODE apart, and memory bandwidth per node is a fraction of the socket's.",
               t->npackages, per_socket, per_socket);
    gr_finding_fix(r, "NPS1 gives up memory locality within a socket", "For GPU work NPS1 (one node per socket) is the usual choice; it is a BIOS setting.");
    return;
  }
  if (unknown)
    return;
  if (t->nnumas <= 1)
    dr_add(c, GR_SEV_OK, -1, "One NUMA node: nothing to place.");
  else
    dr_add(c, GR_SEV_OK, -1, "Every GPU reports its NUMA node (%zu nodes on %zu sockets).", t->nnumas, t->npackages);
}

/* ---- memory ---- */

static bool meminfo_kib(const char *text, const char *key, unsigned long long *kib)
{
  const char *p = strstr(text, key);
  return p && sscanf(p + strlen(key), " %llu", kib) == 1;
}

static double total_vram_gib(const struct gr_topo *t, size_t *unknown)
{
  double sum = 0;
  *unknown = 0;
  for (size_t g = 0; g < t->ngpus; g++) {
    const struct gr_gpu_model *m = dr_gpu_model(&t->pci[t->gpus[g]]);
    if (m)
      sum += m->mem_gib;
    else
      (*unknown)++;
  }
  return sum;
}

void check_mem_host(struct gr_doctor_ctx *c)
{
  char text[8192];
  unsigned long long total_kib, swap_kib = 0;
  size_t unknown;
  int rc = dr_read_input(c, "/proc/meminfo", text, sizeof(text));
  if (rc != 0 && rc != -ENOENT)
    return; /* the error result names the file */
  if (rc != 0 || !meminfo_kib(text, "MemTotal:", &total_kib)) {
    dr_add(c, GR_SEV_SKIPPED, -1, "No MemTotal in /proc/meminfo in this input.");
    return;
  }
  bool have_swap = meminfo_kib(text, "SwapTotal:", &swap_kib);
  double ram_gib = (double)total_kib / (1024.0 * 1024.0), want = gr_health_consts()->host_ram_per_vram;
  double vram = total_vram_gib(c->t, &unknown);
  struct gr_finding *r;
  if (vram <= 0)
    r = dr_add(c, GR_SEV_OK, -1, "%.1f GiB of host memory%s.", ram_gib,
               c->t->ngpus ? " (the GPUs are not in gpurig's catalog, so their memory is unknown)" : "");
  else if (ram_gib < vram)
    r = dr_add(c, GR_SEV_WARN, -1,
               "%.1f GiB of host memory for %.0f GiB of GPU memory: less than the GPUs hold, so a model that fills them cannot even be staged in RAM to load, and CPU offload has no room.",
               ram_gib, vram);
  else if (ram_gib < want * vram)
    r = dr_add(c, GR_SEV_INFO, -1,
               "%.1f GiB of host memory for %.0f GiB of GPU memory: below the usual %.0fx (%.0f GiB); loading checkpoints on every rank and CPU offload will be tight.",
               ram_gib, vram, want, want * vram);
  else
    r = dr_add(c, GR_SEV_OK, -1, "%.1f GiB of host memory for %.0f GiB of GPU memory (at least %.0fx).", ram_gib, vram, want);
  if (r->sev == GR_SEV_WARN || r->sev == GR_SEV_INFO)
    gr_finding_fix(r, "the DIMMs", "Add DIMMs to reach about %.0f GiB, one per channel so bandwidth grows too (see mem.channels).", want * vram);
  gr_finding_evidence(r, "/proc/meminfo", "MemTotal %llu kB%s", total_kib, have_swap ? "" : ", no SwapTotal");
  if (have_swap)
    gr_finding_evidence(r, "/proc/meminfo", "SwapTotal %llu kB%s", swap_kib, swap_kib ? "" : " (no swap: the OOM killer acts at once)");
  if (unknown && vram > 0)
    gr_finding_evidence(r, "data/gpus.tsv", "%zu GPU(s) not in the catalog, not counted", unknown);
}

#define DMI_TABLE "/sys/firmware/dmi/tables/DMI"

/* Memory channels of a CPU model: data/cpu-memory.tsv, longest match wins. */
static int cpu_channels(const char *model)
{
  int best = 0;
  size_t best_len = 0;
  if (!model)
    return 0;
  const struct gr_cpu_memory_rows *tb = gr_cpu_memory_rows();
  for (size_t i = 0; i < tb->n; i++) {
    const char *m = tb->v[i].match;
    if (strstr(model, m) && strlen(m) > best_len) {
      best_len = strlen(m);
      best = (int)tb->v[i].channels;
    }
  }
  return best;
}

static void channels_per_socket(struct gr_doctor_ctx *c, const struct gr_dmi_memory *mem)
{
  const struct gr_topo *t = c->t;
  size_t sockets = t->npackages ? t->npackages : 1, before = c->r->findings.n, total = 0;
  bool by_array = mem->narrays == sockets;
  int channels = cpu_channels(t->npackages ? t->packages[0].cpu_model : NULL);
  for (size_t d = 0; d < mem->ndimms; d++)
    total += mem->dimms[d].populated;
  for (size_t s = 0; s < (by_array ? sockets : 1); s++) {
    size_t n = 0;
    for (size_t d = 0; d < mem->ndimms; d++)
      n += mem->dimms[d].populated && (!by_array || mem->dimms[d].array == (int)s);
    size_t want = (size_t)channels * (by_array ? 1 : sockets);
    if (!channels || n >= want)
      continue;
    struct gr_finding *r = dr_add(
        c, GR_SEV_WARN, -1,
        "%s has %zu DIMM%s for %zu memory channels: at most %zu of %zu channels work, so host memory bandwidth (CPU offload, data loading, CPU inference) is at most %.0f%% of what the CPU%s can do.",
        by_array && sockets > 1 ? (s ? "Socket 1" : "Socket 0") : "The machine", n, n == 1 ? "" : "s", want, n, want,
        100.0 * (double)n / (double)want, sockets > 1 && !by_array ? "s" : "");
    gr_finding_evidence(r, DMI_TABLE, "%zu memory devices, %zu populated, %zu array(s)", mem->ndimms, total, mem->narrays);
    gr_finding_evidence(r, "data/cpu-memory.tsv", "%s: %d channels", t->packages[0].cpu_model, channels);
    gr_finding_fix(r, "the DIMMs", "Populate one DIMM per channel, in the order the board manual gives (usually the A1, B1, C1 ... slots first).");
  }
  if (c->r->findings.n > before)
    return;
  struct gr_finding *r =
      dr_add(c, channels ? GR_SEV_OK : GR_SEV_INFO, -1, "%zu of %zu DIMM slots populated%s.", total, mem->ndimms,
             channels ? ", at least one per channel" : " (this CPU's channel count is not in data/cpu-memory.tsv)");
  gr_finding_evidence(r, DMI_TABLE, "%zu memory devices, %zu array(s)", mem->ndimms, mem->narrays);
}

void check_mem_channels(struct gr_doctor_ctx *c)
{
  char shown[4400];
  struct gr_file f = {0};
  struct gr_dmi_memory mem = {0};
  struct gr_err err = {0};
  /* binary, so read whole through the shared reader, which names the file in its messages */
  int rc = dr_read_file(c, DMI_TABLE, 16u << 20, 0, &f, &err);
  if (rc == -EACCES || rc == -EPERM)
    dr_skip_root(c, "The SMBIOS table (%s) is readable by root only.", DMI_TABLE);
  else if (rc == -ENOENT)
    dr_add(c, GR_SEV_SKIPPED, -1, "No SMBIOS table in this input (%s): a VM, a non-x86 machine, or a tree gathered without it.",
           DMI_TABLE);
  else if (rc != 0)
    dr_add(c, GR_SEV_ERROR, -1, "%s.", err.msg);
  else if (gr_dmi_parse_memory(dr_shown(c, DMI_TABLE, shown, sizeof(shown)), (const unsigned char *)f.data, f.len, &mem,
                               &err) != 0)
    dr_add(c, GR_SEV_ERROR, -1, "%s.", err.msg);
  else if (!mem.ndimms)
    dr_add(c, GR_SEV_SKIPPED, -1, "The SMBIOS table lists no memory devices (typical of VMs).");
  else
    channels_per_socket(c, &mem);
  gr_dmi_memory_free(&mem);
  gr_file_free(&f);
}

void check_mem_memlock(struct gr_doctor_ctx *c)
{
  char text[4096], soft[32], hard[32];
  size_t rdma = 0;
  for (size_t n = 0; n < c->t->nnics; n++)
    rdma += c->t->pci[c->t->nics[n]].rdma;
  int rc = dr_read_input(c, "/proc/self/limits", text, sizeof(text));
  if (rc != 0 && rc != -ENOENT)
    return; /* the error result names the file */
  if (rc != 0) {
    dr_add(c, GR_SEV_SKIPPED, -1, "No /proc/self/limits in this input (a gathered tree has no process).");
    return;
  }
  const char *p = strstr(text, "Max locked memory");
  if (!p || sscanf(p + strlen("Max locked memory"), " %31s %31s", soft, hard) != 2) {
    dr_add(c, GR_SEV_ERROR, -1, "/proc/self/limits: no \"Max locked memory\" line.");
    return;
  }
  bool unlimited = strcmp(soft, "unlimited") == 0;
  struct gr_finding *r;
  if (rdma && !unlimited) {
    r = dr_add(c, GR_SEV_WARN, -1,
               "The locked-memory limit is %s bytes with %zu RDMA NIC%s: registering GPU or host buffers for RDMA fails or falls back to slow copies.",
               soft, rdma, rdma == 1 ? "" : "s");
    gr_finding_fix(r, "none on a dedicated machine",
           "Set `* soft memlock unlimited` and `* hard memlock unlimited` in /etc/security/limits.conf (LimitMEMLOCK=infinity for systemd services, --ulimit memlock=-1 for containers) and log in again.");
  } else {
    r = dr_add(c, GR_SEV_OK, -1, "Locked-memory limit %s%s (CUDA's pinned memory does not count against it; only RDMA registration does).",
               soft, unlimited ? "" : " bytes");
  }
  gr_finding_evidence(r, "/proc/self/limits", "Max locked memory %s %s (gpurig's own limits, inherited from this shell)", soft, hard);
}

/* ---- CPU and kernel ---- */

void check_cpu_governor(struct gr_doctor_ctx *c)
{
  char path[128], gov[64], first[64] = "", driver[64] = "?";
  size_t n = 0, performance = 0;
  int rc = 0;
  for (int cpu = 0; cpu < 4096; cpu++) {
    snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/cpufreq/scaling_governor", cpu);
    if ((rc = dr_read_input(c, path, gov, sizeof(gov))) != 0)
      break; /* the last CPU, or an error result naming the file */
    n++;
    performance += strcmp(gov, "performance") == 0;
    if (strcmp(gov, "performance") != 0 && !first[0])
      snprintf(first, sizeof(first), "%s", gov);
  }
  if (!n && rc != -ENOENT)
    return;
  if (!n) {
    dr_add(c, GR_SEV_SKIPPED, -1, "No cpufreq governor in this input (a VM, cpufreq off, or a tree gathered without it).");
    return;
  }
  dr_read(c, "/sys/devices/system/cpu/cpu0/cpufreq/scaling_driver", driver, sizeof(driver));
  struct gr_finding *r;
  if (performance == n)
    r = dr_add(c, GR_SEV_OK, -1, "All %zu CPUs use the performance governor (driver %s).", n, driver);
  else {
    r = dr_add(c, GR_SEV_INFO, -1,
               "%zu of %zu CPUs use the %s governor (driver %s): the data-loading and launch threads that feed the GPUs ramp up their clock late%s.",
               n - performance, n, first, driver,
               strstr(driver, "pstate") ? " (with a pstate driver in active mode \"powersave\" still boosts; the gap is small)" : "");
    gr_finding_fix(r, "higher idle power and heat",
           "`sudo cpupower frequency-set -g performance` (until reboot; keep it with a tuned profile such as `tuned-adm profile throughput-performance`).");
  }
  gr_finding_evidence(r, "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "%s", first[0] ? first : "performance");
}

void check_kernel_mitigations(struct gr_doctor_ctx *c)
{
  char cmdline[4096] = "", first[128] = "";
  long n = count_dir(c, "/sys/devices/system/cpu/vulnerabilities", first, sizeof(first));
  dr_read(c, CMDLINE, cmdline, sizeof(cmdline));
  struct gr_finding *r;
  if (cmdline_has(cmdline, "mitigations=off")) {
    r = dr_add(c, GR_SEV_INFO, -1,
               "CPU vulnerability mitigations are off (mitigations=off): system calls and context switches are faster, and local code can attack the kernel (Spectre/Meltdown class). Reasonable only on a single-user machine that runs trusted code.");
    gr_finding_evidence(r, CMDLINE, "%s", cmdline);
    return;
  }
  if (n <= 0) {
    dr_add(c, GR_SEV_SKIPPED, -1, "No /sys/devices/system/cpu/vulnerabilities in this input.");
    return;
  }
  r = dr_add(c, GR_SEV_INFO, -1,
             "The kernel's CPU vulnerability mitigations are on (the default; %ld entries in /sys/devices/system/cpu/vulnerabilities). They cost a few percent on system-call-heavy work such as data loading; GPU kernels are not affected. gpurig never changes them; mitigations=off trades that security for speed.",
             n);
  gr_finding_evidence(r, "/sys/devices/system/cpu/vulnerabilities", "%ld entries, e.g. %s", n, first);
}

void check_kernel_thp(struct gr_doctor_ctx *c)
{
  char v[128];
  const char *path = "/sys/kernel/mm/transparent_hugepage/enabled";
  int rc = dr_read_input(c, path, v, sizeof(v));
  if (rc != 0 && rc != -ENOENT)
    return; /* the error result names the file */
  if (rc != 0) {
    dr_add(c, GR_SEV_SKIPPED, -1, "No %s in this input.", path);
    return;
  }
  const char *open = strchr(v, '['), *close = open ? strchr(open, ']') : NULL;
  if (!open || !close) {
    char shown[4400];
    struct gr_finding *r = dr_add(c, GR_SEV_ERROR, -1, "%s: no [selected] mode in \"%s\".",
                                       dr_shown(c, path, shown, sizeof(shown)), v);
    gr_finding_evidence(r, path, "%s", v);
    return;
  }
  char mode[32];
  snprintf(mode, sizeof(mode), "%.*s", (int)(close - open - 1), open + 1);
  struct gr_finding *r;
  if (strcmp(mode, "never") == 0) {
    r = dr_add(c, GR_SEV_INFO, -1,
               "Transparent huge pages are off: large host buffers (datasets, pinned staging, offloaded optimizer state) use 4 KiB pages and more TLB misses.");
    gr_finding_fix(r, "khugepaged compaction can add latency spikes", "`echo madvise | sudo tee %s` (until reboot; transparent_hugepage=madvise on the kernel command line keeps it).", path);
  } else {
    r = dr_add(c, GR_SEV_OK, -1, "Transparent huge pages: %s.", mode);
  }
  gr_finding_evidence(r, path, "%s", v);
}
