/* Doctor checks on the GPU driver side: NVIDIA driver version against known
 * issues, GeForce P2P, GPUDirect RDMA module, Xid errors in the kernel log. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "facts/catalog.h"
#include "doctor/doctor_internal.h"
#include "doctor/kmsg.h"

#define NV_PROC "/proc/driver/nvidia/version"
#define NV_MODULE "/sys/module/nvidia/version"

static size_t nvidia_gpus(const struct gr_topo *t)
{
  size_t n = 0;
  for (size_t g = 0; g < t->ngpus; g++)
    n += t->pci[t->gpus[g]].vendor == 0x10de;
  return n;
}

/* The first dotted number of at least two fields in s. */
static bool find_version(const char *s, char *out, size_t cap)
{
  for (const char *p = s; *p; p++) {
    if (!isdigit((unsigned char)*p) || (p > s && (isalnum((unsigned char)p[-1]) || p[-1] == '.')))
      continue;
    size_t n = strspn(p, "0123456789.");
    while (n && p[n - 1] == '.')
      n--;
    if (n < cap && memchr(p, '.', n)) {
      memcpy(out, p, n);
      out[n] = '\0';
      if (gr_version_valid(out))
        return true;
    }
    p += n ? n - 1 : 0;
  }
  return false;
}

int dr_nvidia_driver(struct gr_doctor_ctx *c, char *version, size_t vcap, const char **flavour, const char **from_file)
{
  char text[512], taint[32];
  *flavour = "unknown flavour";
  *from_file = NV_PROC;
  int rc = dr_read_input(c, NV_PROC, text, sizeof(text));
  if (rc == 0) {
    *flavour = strstr(text, "Open Kernel Module") ? "open" : "proprietary";
    return find_version(text, version, vcap) ? 1 : -2;
  }
  if (rc == -ENOENT) {
    *from_file = NV_MODULE;
    rc = dr_read_input(c, NV_MODULE, text, sizeof(text));
  }
  if (rc == 0) {
    /* the proprietary module taints the kernel with P; the open one does not */
    if (dr_read(c, "/sys/module/nvidia/taint", taint, sizeof(taint)) == 0)
      *flavour = strchr(taint, 'P') ? "proprietary" : "open";
    return find_version(text, version, vcap) ? 1 : -2;
  }
  if (rc != -ENOENT)
    return -1;
  *from_file = NULL;
  return 0;
}

static bool model_present(const struct gr_topo *t, const char *list, const char **which)
{
  for (size_t g = 0; g < t->ngpus; g++) {
    const struct gr_gpu_model *m = dr_gpu_model(&t->pci[t->gpus[g]]);
    if (!m)
      continue;
    if (strcmp(list, "*") == 0) {
      *which = m->model;
      return true;
    }
    /* a comma-separated list of catalog names */
    for (const char *p = list; *p;) {
      size_t n = strcspn(p, ",");
      while (*p == ' ')
        p++, n--;
      if (n == strlen(m->model) && strncasecmp(p, m->model, n) == 0) {
        *which = m->model;
        return true;
      }
      p += n;
      if (*p == ',')
        p++;
    }
  }
  return false;
}

static bool in_range(const char *v, const char *lo, const char *hi)
{
  return (strcmp(lo, "*") == 0 || gr_version_cmp(v, lo) >= 0) && (strcmp(hi, "*") == 0 || gr_version_cmp(v, hi) <= 0);
}

/* A result per row of data/driver-issues.tsv that matches this driver and these GPUs. */
static void known_issues(struct gr_doctor_ctx *c, const char *version, const char *file)
{
  const struct gr_table *tb = &gr_facts()->driver_issues;
  int col[8];
  static const char *const names[] = {"id", "gpu_match", "driver_min", "driver_max", "severity", "problem", "fix", "source"};
  for (size_t k = 0; k < 8; k++)
    col[k] = gr_table_col(tb, names[k]); /* the facts loader checked they exist */
  for (size_t i = 0; i < tb->nrows; i++) {
    const char *which = NULL;
#define CELL(k) gr_table_cell(tb, i, (size_t)col[k])
    if (!model_present(c->t, CELL(1), &which) || !in_range(version, CELL(2), CELL(3)))
      continue;
    struct gr_finding *r = dr_add(c, strcmp(CELL(4), "fail") == 0 ? GR_SEV_FAIL : GR_SEV_WARN, -1,
                                       "Driver %s with %s: %s", version, which, CELL(5));
    gr_finding_evidence(r, file, "%s", version);
    gr_finding_evidence(r, "data/driver-issues.tsv", "%s: %s .. %s; %s", CELL(0), CELL(2), CELL(3), CELL(7));
    gr_finding_fix(r, "a driver change means a reboot", "%s", CELL(6));
#undef CELL
  }
}

static void driver_against_expectation(struct gr_doctor_ctx *c, const char *version)
{
  const struct gr_expect *e = c->o->expect;
  if (!e || !e->line_driver)
    return;
  if ((!e->driver_min || gr_version_cmp(version, e->driver_min) >= 0) &&
      (!e->driver_max || gr_version_cmp(version, e->driver_max) <= 0))
    return;
  struct gr_finding *r = dr_add(c, GR_SEV_FAIL, -1, "Driver %s is outside the expected range %s .. %s.", version,
                                     e->driver_min ? e->driver_min : "*", e->driver_max ? e->driver_max : "*");
  gr_finding_evidence(r, e->file, "line %zu: driver %s %s", e->line_driver, e->driver_min ? e->driver_min : "*",
              e->driver_max ? e->driver_max : "*");
  gr_finding_fix(r, "a reboot", "Install a driver from the expected range (or update the expectation file if the fleet moved on).");
}

void check_driver_version(struct gr_doctor_ctx *c)
{
  char version[64], shown[4400];
  const char *flavour, *file;
  size_t nv = nvidia_gpus(c->t);
  int loaded = dr_nvidia_driver(c, version, sizeof(version), &flavour, &file);
  if (loaded == -1)
    return; /* unreadable: the error result names the file */
  if (loaded == -2) {
    struct gr_finding *r = dr_add(c, GR_SEV_ERROR, -1, "%s: no driver version in it.", dr_shown(c, file, shown, sizeof(shown)));
    gr_finding_evidence(r, file, "unparsable");
    return;
  }
  if (!loaded) {
    const char *drv = nv ? c->t->pci[c->t->gpus[0]].driver : NULL;
    if (drv && strcmp(drv, "nvidia") == 0)
      dr_add(c, GR_SEV_SKIPPED, -1, "The GPUs are bound to the nvidia driver, but its version file (%s) is not in this input.",
             NV_PROC);
    else if (nv)
      dr_add(c, GR_SEV_WARN, -1, "%zu NVIDIA GPU%s but no NVIDIA driver loaded (%s and %s absent; GPU0's driver: %s).", nv,
             nv == 1 ? "" : "s", NV_PROC, NV_MODULE, drv ? drv : "none");
    else
      dr_add(c, GR_SEV_OK, -1, "No NVIDIA GPU and no NVIDIA driver: nothing to check.");
    return;
  }
  size_t before = c->r->findings.n;
  known_issues(c, version, file);
  driver_against_expectation(c, version);
  if (c->r->findings.n > before)
    return;
  struct gr_finding *r = dr_add(c, GR_SEV_OK, -1, "NVIDIA driver %s (%s kernel module): no known multi-GPU issue for these GPUs in data/driver-issues.tsv.",
                                     version, flavour);
  gr_finding_evidence(r, file, "%s", version);
}

void check_driver_p2p(struct gr_doctor_ctx *c)
{
  const struct gr_topo *t = c->t;
  const struct gr_gpu_model *geforce = NULL;
  size_t pairs = 0, p2p_pairs = 0, unknown = 0;
  for (size_t g = 0; g < t->ngpus; g++) {
    const struct gr_gpu_model *m = dr_gpu_model(&t->pci[t->gpus[g]]);
    unknown += !m;
    if (m && m->p2p != GR_P2P_YES && !geforce)
      geforce = m;
  }
  for (size_t i = 0; i < c->a->ngpus; i++)
    for (size_t j = i + 1; j < c->a->ngpus; j++) {
      pairs++;
      p2p_pairs += c->a->gpu_gpu[i * c->a->ngpus + j].nccl_p2p;
    }
  if (t->ngpus < 2) {
    dr_add(c, GR_SEV_OK, -1, "Fewer than two GPUs: no peer-to-peer traffic.");
    return;
  }
  struct gr_finding *r;
  if (geforce) {
    r = dr_add(c, GR_SEV_INFO, -1,
               "%s cards: NVIDIA's stock driver %s, and where it reports no peer access NCCL moves every GPU-to-GPU transfer through host memory (SHM), about two thirds of the P2P rate. Even with P2P, NCCL's defaults use it on %zu of %zu pairs of this topology.",
               geforce->model,
               geforce->p2p == GR_P2P_NO ? "gives them no PCIe peer-to-peer" : "allows them PCIe peer-to-peer only in some versions",
               p2p_pairs, pairs);
    gr_finding_fix(r, "an unsupported driver build",
           "Measure what the driver does with `gpurig bench` (or nvidia-smi topo -p2p r); P2P on GeForce needs the P2P-enabled open kernel modules (tinygrad/open-gpu-kernel-modules), Resizable BAR and IOMMU off or passthrough.");
  } else if (unknown) {
    r = dr_add(c, GR_SEV_INFO, -1, "%zu of the %zu GPUs are not in gpurig's catalog, so whether their driver allows PCIe peer-to-peer is unknown; the topology lets NCCL use P2P on %zu of %zu pairs by default (up to %s).",
               unknown, t->ngpus, p2p_pairs, pairs, gr_nccl_level_str(c->a->nccl_p2p_level));
  } else {
    r = dr_add(c, GR_SEV_OK, -1, "These GPUs support PCIe peer-to-peer on stock drivers; with its defaults NCCL uses P2P on %zu of %zu pairs (up to %s).",
               p2p_pairs, pairs, gr_nccl_level_str(c->a->nccl_p2p_level));
  }
  gr_finding_evidence(r, "data/gpus.tsv", "p2p column of %s", geforce ? geforce->model : "these models");
}

void check_rdma_peermem(struct gr_doctor_ctx *c)
{
  const struct gr_topo *t = c->t;
  int near_nic = -1;
  char state[32];
  for (size_t n = 0; n < c->a->nnics && near_nic < 0; n++)
    for (size_t g = 0; g < c->a->ngpus; g++)
      if (t->pci[t->nics[n]].rdma && c->a->gpu_nic[g * c->a->nnics + n].level <= GR_LVL_PXB) {
        near_nic = t->nics[n];
        break;
      }
  if (near_nic < 0 || !nvidia_gpus(t)) {
    dr_add(c, GR_SEV_OK, -1, "No RDMA NIC shares a PCIe switch with an NVIDIA GPU: GPUDirect RDMA is not in play.");
    return;
  }
  struct gr_finding *r;
  int rc = dr_read_input(c, "/sys/module/nvidia_peermem/initstate", state, sizeof(state));
  if (rc != 0 && rc != -ENOENT)
    return; /* the error result names the file */
  if (rc == 0 && strcmp(state, "live") == 0) {
    r = dr_add(c, GR_SEV_OK, near_nic, "nvidia_peermem is loaded: this RDMA NIC can read and write GPU memory directly.");
  } else {
    r = dr_add(c, GR_SEV_WARN, near_nic,
               "This RDMA NIC shares a PCIe switch with a GPU, but nvidia_peermem is not loaded: NCCL's network traffic is staged through host memory instead of going NIC-to-GPU directly (unless NCCL uses DMA-BUF: NCCL 2.19+, open kernel modules, Linux 5.12+).");
    gr_finding_fix(r, "none", "`sudo modprobe nvidia-peermem`; to keep it: `echo nvidia-peermem | sudo tee /etc/modules-load.d/nvidia-peermem.conf`.");
  }
  gr_finding_evidence(r, "/sys/module/nvidia_peermem/initstate", "%s", r->sev == GR_SEV_OK ? "live" : "absent");
}

/* ---- Xid ---- */

#define KMSG_MAX (64u << 20)

struct xid_group {
  unsigned domain, bus, dev;
  int xid;
  size_t count;
  double first_t, last_t;
  size_t line;
  const char *detail;
};

/* The log to read: the file given with --kmsg (the user's own, not under the
 * root), else /dev/kmsg under the root. O_NONBLOCK: the device would block
 * after its last record. Returns an fd or -errno. */
static int open_log(const struct gr_doctor_ctx *c)
{
  if (!c->o->kmsg_path)
    return gr_fs_open(c->fs, "/dev/kmsg", O_RDONLY | O_NONBLOCK);
  int fd = open(c->o->kmsg_path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  return fd >= 0 ? fd : -errno;
}

/* /dev/kmsg hands out one record per read() and EAGAIN at the end; a
 * gathered tree or a saved log is a plain file. Both land in one buffer
 * (NUL-terminated, the caller frees it, even on error). Returns 0 or -errno;
 * an error after some records keeps what was read. */
static int read_log(const struct gr_doctor_ctx *c, bool device, char **buf, size_t *len)
{
  size_t cap = 1 << 16;
  int rc = 0;
  *len = 0;
  *buf = NULL;
  int fd = open_log(c);
  if (fd < 0)
    return fd;
  *buf = xmalloc(cap + 1);
  for (;;) {
    if (cap - *len < 8192) {
      if (cap >= KMSG_MAX)
        break;
      cap *= 2;
      *buf = xrealloc(*buf, cap + 1);
    }
    ssize_t n = read(fd, *buf + *len, cap - *len);
    if (n < 0 && (errno == EPIPE || errno == EINTR))
      continue; /* EPIPE: records overwritten while reading: go on with the next */
    if (n < 0 && device && errno == EAGAIN)
      break;
    if (n < 0) {
      rc = *len ? 0 : -errno;
      break;
    }
    if (n == 0)
      break;
    *len += (size_t)n;
  }
  (*buf)[*len] = '\0';
  close(fd);
  return rc;
}

static int xid_row(const struct gr_table *tb, int xid)
{
  int c = gr_table_col(tb, "xid");
  char want[16];
  snprintf(want, sizeof(want), "%d", xid);
  for (size_t i = 0; c >= 0 && i < tb->nrows; i++)
    if (strcmp(gr_table_cell(tb, i, (size_t)c), want) == 0)
      return (int)i;
  return -1;
}

static int gpu_by_bus(const struct gr_topo *t, unsigned domain, unsigned bus, unsigned dev)
{
  for (size_t g = 0; g < t->ngpus; g++) {
    const struct gr_pci *p = &t->pci[t->gpus[g]];
    if (p->domain == domain && p->bus == bus && p->dev == dev)
      return t->gpus[g];
  }
  return -1;
}

static size_t group_xids(const struct gr_xid_log *log, double since, struct xid_group *out, size_t *older)
{
  size_t n = 0;
  *older = 0;
  for (size_t i = 0; i < log->nev; i++) {
    const struct gr_xid_event *e = &log->ev[i];
    if (since > 0 && e->t_sec >= 0 && e->t_sec < since) {
      (*older)++;
      continue;
    }
    size_t k = 0;
    while (k < n && !(out[k].domain == e->domain && out[k].bus == e->bus && out[k].dev == e->dev && out[k].xid == e->xid))
      k++;
    if (k == n)
      out[n++] = (struct xid_group){e->domain, e->bus, e->dev, e->xid, 0, e->t_sec, e->t_sec, e->line, e->detail};
    out[k].count++;
    out[k].last_t = e->t_sec;
    out[k].line = e->line;
    out[k].detail = e->detail;
  }
  return n;
}

static void report_xid_group(struct gr_doctor_ctx *c, const struct gr_table *tb, const struct xid_group *x,
                             const char *logname)
{
  int row = xid_row(tb, x->xid);
  int node = gpu_by_bus(c->t, x->domain, x->bus, x->dev);
  const char *sev = row >= 0 ? gr_table_cell(tb, (size_t)row, (size_t)gr_table_col(tb, "severity")) : "warn";
  const char *name = row >= 0 ? gr_table_cell(tb, (size_t)row, (size_t)gr_table_col(tb, "name")) : "not in data/xid.tsv";
  enum gr_sev s = strcmp(sev, "fail") == 0 ? GR_SEV_FAIL : strcmp(sev, "warn") == 0 ? GR_SEV_WARN : GR_SEV_INFO;
  char when[96] = "";
  if (x->last_t >= 0)
    snprintf(when, sizeof(when), ", last at %.0f s after boot", x->last_t);
  struct gr_finding *r = dr_add(c, s, node, "Xid %d (%s) %zu time%s%s%s.", x->xid, name, x->count,
                                     x->count == 1 ? "" : "s", when,
                                     node < 0 ? "; no GPU at that bus address now (it may have fallen off the bus)" : "");
  if (node < 0) {
    free(r->subject);
    r->subject = xasprintf("PCI %04x:%02x:%02x", x->domain, x->bus, x->dev);
  }
  char where[4200];
  snprintf(where, sizeof(where), "%s:%zu", logname, x->line);
  gr_finding_evidence(r, where, "NVRM: Xid (PCI:%04x:%02x:%02x): %d, %s", x->domain, x->bus, x->dev, x->xid, x->detail);
  if (row >= 0)
    gr_finding_fix(r, s == GR_SEV_INFO ? "none" : "depends on the cause", "%s",
           gr_table_cell(tb, (size_t)row, (size_t)gr_table_col(tb, "action")));
}

static void report_xids(struct gr_doctor_ctx *c, const struct gr_xid_log *log, const char *logname, double now)
{
  const struct gr_table *tb = &gr_facts()->xid;
  double window_h = c->o->xid_window_h >= 0 ? c->o->xid_window_h : gr_health("xid_window_h");
  double since = window_h > 0 && now >= 0 ? now - window_h * 3600.0 : 0;
  size_t older;
  struct xid_group *groups = xcalloc(log->nev + 1, sizeof(*groups));
  size_t n = group_xids(log, since, groups, &older);
  for (size_t i = 0; i < n; i++)
    report_xid_group(c, tb, &groups[i], logname);
  char span[96];
  if (since > 0)
    snprintf(span, sizeof(span), "in the last %g h", window_h);
  else
    snprintf(span, sizeof(span), "%s", now < 0 ? "(the log has no boot-relative times, so no window)" : "since boot");
  if (older)
    dr_add(c, GR_SEV_INFO, -1, "%zu older Xid event%s before the %g h window (--xid-window 0 shows all).", older,
           older == 1 ? "" : "s", window_h);
  if (!n) {
    struct gr_finding *r = dr_add(c, GR_SEV_OK, -1, "No NVIDIA Xid error %s (%zu lines of kernel log read).", span, log->lines);
    gr_finding_evidence(r, logname, "%zu lines", log->lines);
  }
  free(groups);
}

void check_xid_errors(struct gr_doctor_ctx *c)
{
  char full[4400];
  const char *path = c->o->kmsg_path;
  bool device = false;
  char *buf = NULL;
  size_t len = 0;
  struct gr_xid_log log = {0};
  if (!path) {
    path = gr_fs_path(c->fs, "/dev/kmsg", full, sizeof(full));
    device = gr_fs_is_live(c->fs);
  }
  int rc = path ? read_log(c, device, &buf, &len) : -ENAMETOOLONG;
  if (rc == -EACCES || rc == -EPERM) {
    dr_skip_root(c, "Reading the kernel log (%s) needs root here (kernel.dmesg_restrict); or save it and pass it: `journalctl -k -b > k.log; gpurig doctor --kmsg k.log`.", path);
    goto out;
  }
  if (rc == -ENOENT && !c->o->kmsg_path) {
    dr_add(c, GR_SEV_SKIPPED, -1, "No kernel log in this input (%s); pass one with --kmsg FILE (dmesg, journalctl -k or /dev/kmsg format).", path);
    goto out;
  }
  if (rc != 0) {
    dr_add(c, GR_SEV_ERROR, -1, "%s: %s.", path, strerror(-rc));
    goto out;
  }
  gr_kmsg_parse_xids(buf, len, &log);
  if (log.bad_lines) {
    struct gr_finding *r = dr_add(c, GR_SEV_ERROR, -1,
                                       "%s:%zu: binary data, not kernel log text (%zu such line%s skipped; the Xids on the other lines are reported).",
                                       path, log.first_bad_line, log.bad_lines, log.bad_lines == 1 ? "" : "s");
    gr_finding_evidence(r, path, "%zu lines, %zu not text", log.lines, log.bad_lines);
  }
  report_xids(c, &log, path, device ? c->uptime_s : log.last_t_sec);
out:
  gr_xid_log_free(&log);
  free(buf);
}
