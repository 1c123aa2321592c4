/* Doctor checks on the GPU driver side: NVIDIA driver version against known
 * issues, GeForce P2P, GPUDirect RDMA module, Xid errors in the kernel log. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

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
  const struct gr_driver_issues_rows *tb = gr_driver_issues_rows();
  for (size_t i = 0; i < tb->n; i++) {
    const struct gr_driver_issues_row *row = &tb->v[i];
    const char *which = NULL;
    if (!model_present(c->t, row->gpu_match, &which) || !in_range(version, row->driver_min, row->driver_max))
      continue;
    struct gr_finding *r = dr_add(c, strcmp(row->severity, "fail") == 0 ? GR_SEV_FAIL : GR_SEV_WARN, -1,
                                  "Driver %s with %s: %s", version, which, row->problem);
    gr_finding_evidence(r, file, "%s", version);
    gr_finding_evidence(r, "data/driver-issues.tsv", "%s: %s .. %s; %s", row->id, row->driver_min, row->driver_max,
                        row->source);
    gr_finding_fix(r, "a driver change means a reboot", "%s", row->fix);
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
  free(c->r->driver_version);
  c->r->driver_version = xstrdup(version);
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
      p2p_pairs += gr_gpu_path(c->a, i, j).nccl_p2p;
    }
  if (t->ngpus < 2) {
    dr_add(c, GR_SEV_OK, -1, "Fewer than two GPUs: no peer-to-peer traffic.");
    return;
  }
  struct gr_finding *r;
  if (geforce && geforce->vendor && strcmp(geforce->vendor, "amd") == 0) {
    r = dr_add(c, GR_SEV_INFO, -1,
               "%s cards: the amdgpu driver allows them PCIe peer-to-peer only where the whole of their memory is "
               "visible through the BAR (Resizable BAR) and the IOMMU does not translate; without it every "
               "GPU-to-GPU transfer goes through host memory. The topology puts %zu of %zu pairs within P2P reach "
               "by %s's defaults (NCCL's P2P rules, which RCCL keeps).",
               geforce->model, p2p_pairs, pairs, gr_topo_collective(t));
    gr_finding_fix(r, "Resizable BAR off or a translating IOMMU",
                   "Enable Resizable BAR (Above 4G decoding) in the BIOS and set the IOMMU off or to passthrough "
                   "(iommu=pt); check with `gpurig gpus` (BAR1 equal to the memory) and rocm-smi --showtopoaccess.");
  } else if (geforce) {
    r = dr_add(c, GR_SEV_INFO, -1,
               "%s cards: NVIDIA's stock driver %s, and where it reports no peer access NCCL moves every GPU-to-GPU transfer through host memory (SHM), about two thirds of the P2P rate. Even with P2P, NCCL's defaults use it on %zu of %zu pairs of this topology.",
               geforce->model,
               geforce->p2p == GR_P2P_NO ? "gives them no PCIe peer-to-peer" : "allows them PCIe peer-to-peer only in some versions",
               p2p_pairs, pairs);
    gr_finding_fix(r, "an unsupported driver build",
           "Measure what the driver does with `gpurig bench` (or nvidia-smi topo -p2p r); P2P on GeForce needs the P2P-enabled open kernel modules (tinygrad/open-gpu-kernel-modules), Resizable BAR and IOMMU off or passthrough.");
  } else if (unknown) {
    r = dr_add(c, GR_SEV_INFO, -1, "%zu of the %zu GPUs are not in gpurig's catalog, so whether their driver allows PCIe peer-to-peer is unknown; the topology lets %s use P2P on %zu of %zu pairs by default (up to %s).",
               unknown, t->ngpus, gr_topo_collective(t), p2p_pairs, pairs, gr_nccl_level_str(c->a->nccl_p2p_level));
  } else {
    r = dr_add(c, GR_SEV_OK, -1, "These GPUs support PCIe peer-to-peer on stock drivers; with its defaults %s uses P2P on %zu of %zu pairs (up to %s).",
               gr_topo_collective(t), p2p_pairs, pairs, gr_nccl_level_str(c->a->nccl_p2p_level));
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
/* The Xid groups listed one by one, the worst and most recent first chosen;
 * the rest are summed up in one result. A real log has a handful; a log
 * flooded with distinct ones must not flood the report (D18). */
#define XID_GROUPS_LISTED 20

/* The kernel log as read. */
struct klog {
  struct gr_file f;
  const char *name; /* as shown in results */
  bool device;      /* the live /dev/kmsg: times count from this boot's uptime */
};

/* A group's place in the report (its line is copied here so that qsort's
 * comparison needs nothing else). */
struct xid_rank {
  size_t group; /* index in the groups */
  size_t line;  /* of its last event */
  enum gr_sev sev;
  const struct gr_xid_row *row; /* in data/xid.tsv, NULL if not there */
};

/* What the cap left unread, as evidence: the Xids found are only those of
 * the newest part, and line numbers count from where it starts. */
static void note_skipped(struct gr_finding *r, const struct klog *k)
{
  char a[32], b[32];
  if (k->f.skipped)
    gr_finding_evidence(r, k->name, "the first %s were not read: the newest %s were (the most doctor reads)",
                        gr_size_text(k->f.skipped, a, sizeof(a)), gr_size_text(k->f.len, b, sizeof(b)));
}

/* "FILE:LINE", or after a tail read, where in the part read. */
static const char *log_place(const struct klog *k, size_t line, char *buf, size_t cap)
{
  char a[32];
  if (k->f.skipped)
    snprintf(buf, cap, "%s (line %zu of its newest %s)", k->name, line, gr_size_text(k->f.len, a, sizeof(a)));
  else
    snprintf(buf, cap, "%s:%zu", k->name, line);
  return buf;
}

/* The live /dev/kmsg (or the file standing for it in a gathered tree). A
 * failure adds the result that says why and returns -1. */
static int read_kmsg_device(struct gr_doctor_ctx *c, struct klog *k, char *shown, size_t cap)
{
  struct gr_err err = {0};
  k->name = dr_shown(c, "/dev/kmsg", shown, cap);
  k->device = gr_fs_is_live(c->fs);
  int rc = dr_read_file(c, "/dev/kmsg", KMSG_MAX, GR_FILE_TAIL | GR_FILE_DEVICE, &k->f, &err);
  if (rc == 0)
    return 0;
  if (k->device && (rc == -EACCES || rc == -EPERM))
    dr_skip_root(c, "Reading the kernel log (%s) needs root here (kernel.dmesg_restrict); or save it and pass it: `journalctl -k -b > k.log; gpurig doctor --kmsg k.log`.", k->name);
  else if (rc == -ENOENT)
    dr_add(c, GR_SEV_SKIPPED, -1, "No kernel log in this input (%s); pass one with --kmsg FILE (dmesg, journalctl -k or /dev/kmsg format).", k->name);
  else
    dr_add(c, GR_SEV_ERROR, -1, "%s.", err.msg);
  return -1;
}

/* The log: the file given with --kmsg (the user's own, not under the root),
 * else /dev/kmsg under the root. Over the cap the newest part is kept: an
 * Xid 79 at the end of a long log is the one that matters (D7). A --kmsg
 * file that cannot be read (absent, no permission, a directory, a FIFO) is
 * an error naming it and the cause, never a skip: the user asked for it
 * (docs/doctor.md: exit 3 unless something worse is found).
 * 0, or -1 with the result that says why. */
static int read_klog(struct gr_doctor_ctx *c, struct klog *k, char *shown, size_t cap)
{
  struct gr_err err = {0};
  if (!c->o->kmsg_path)
    return read_kmsg_device(c, k, shown, cap);
  k->name = c->o->kmsg_path;
  /* a device only when it is the kernel log: in tail mode a device is read
   * until it has nothing more, which /dev/zero never reaches */
  unsigned device = strcmp(k->name, "/dev/kmsg") == 0 ? GR_FILE_DEVICE : 0;
  if (gr_file_read(k->name, KMSG_MAX, GR_FILE_TAIL | device, &k->f, &err) == 0)
    return 0;
  struct gr_finding *r = dr_add(c, GR_SEV_ERROR, -1, "%s (--kmsg); no Xid was checked.", err.msg);
  gr_finding_evidence(r, "--kmsg", "%s", k->name);
  return -1;
}

/* The row of data/xid.tsv for an Xid, or NULL. */
static const struct gr_xid_row *xid_row(int xid)
{
  const struct gr_xid_rows *tb = gr_xid_rows();
  for (size_t i = 0; i < tb->n; i++)
    if (tb->v[i].xid == xid)
      return &tb->v[i];
  return NULL;
}

static int gpu_by_bus(const struct gr_topo *t, unsigned domain, unsigned bus, unsigned dev)
{
  /* a rig's bus ids are modelled: an Xid's bus id names no GPU of it */
  for (size_t g = 0; !t->rig && g < t->ngpus; g++) {
    const struct gr_pci *p = &t->pci[t->gpus[g]];
    if (p->domain == domain && p->bus == bus && p->dev == dev)
      return t->gpus[g];
  }
  return -1;
}

/* fail before warn before info; then the most recent (latest line) first */
static int sev_weight(enum gr_sev s)
{
  return s == GR_SEV_FAIL ? 3 : s == GR_SEV_WARN ? 2 : 1;
}

static int cmp_rank(const void *pa, const void *pb)
{
  const struct xid_rank *a = pa, *b = pb;
  if (sev_weight(a->sev) != sev_weight(b->sev))
    return sev_weight(b->sev) - sev_weight(a->sev);
  return a->line < b->line ? 1 : a->line > b->line ? -1 : 0;
}

static enum gr_sev xid_sev(const struct gr_xid_row *row)
{
  const char *sev = row ? row->severity : "warn";
  return strcmp(sev, "fail") == 0 ? GR_SEV_FAIL : strcmp(sev, "warn") == 0 ? GR_SEV_WARN : GR_SEV_INFO;
}

bool gr_xid_info(int xid, const char **name, enum gr_sev *sev, const char **action)
{
  const struct gr_xid_row *row = xid_row(xid);
  *sev = xid_sev(row);
  *name = row ? row->name : "not in data/xid.tsv";
  *action = row ? row->action : "";
  return row != NULL;
}

/* Every group's severity, sorted worst and most recent first; the caller
 * frees the array. */
static struct xid_rank *rank_groups(const struct gr_xid_groups *g)
{
  struct xid_rank *rk = xcalloc(g->n + 1, sizeof(*rk));
  for (size_t i = 0; i < g->n; i++) {
    const struct gr_xid_row *row = xid_row(g->v[i].xid);
    rk[i] = (struct xid_rank){i, g->v[i].line, xid_sev(row), row};
  }
  qsort(rk, g->n, sizeof(*rk), cmp_rank);
  return rk;
}

static void report_xid_group(struct gr_doctor_ctx *c, const struct xid_rank *rk,
                             const struct gr_xid_group *x, const struct klog *k)
{
  const char *name = rk->row ? rk->row->name : "not in data/xid.tsv";
  int node = gpu_by_bus(c->t, x->domain, x->bus, x->dev);
  char when[96] = "", where[4400];
  if (x->last_t >= 0)
    snprintf(when, sizeof(when), ", last at %.0f s after boot", x->last_t);
  struct gr_finding *r = dr_add(c, rk->sev, node, "Xid %d (%s) %zu time%s%s%s.", x->xid, name, x->count,
                                x->count == 1 ? "" : "s", when,
                                c->t->rig ? "; a rig's bus ids are modelled, so the GPU is not matched to one of it"
                                : node < 0 ? "; no GPU at that bus address now (it may have fallen off the bus)" : "");
  if (node < 0) {
    free(r->subject);
    r->subject = xasprintf("PCI %04x:%02x:%02x", x->domain, x->bus, x->dev);
  }
  gr_finding_evidence(r, log_place(k, x->line, where, sizeof(where)), "NVRM: Xid (PCI:%04x:%02x:%02x): %d, %s",
                      x->domain, x->bus, x->dev, x->xid, x->detail);
  note_skipped(r, k);
  if (rk->row)
    gr_finding_fix(r, rk->sev == GR_SEV_INFO ? "none" : "depends on the cause", "%s",
                   rk->row->action);
}

static int cmp_addr(const void *pa, const void *pb)
{
  const uint64_t *a = pa, *b = pb;
  return *a < *b ? -1 : *a > *b;
}

/* How many distinct bus addresses the unlisted groups name, and how many of
 * those are GPUs of this machine. */
static size_t count_addresses(const struct gr_doctor_ctx *c, const struct gr_xid_groups *g, const struct xid_rank *rest,
                              size_t n, size_t *gpus)
{
  uint64_t *addr = xcalloc(n + 1, sizeof(*addr));
  size_t distinct = 0;
  for (size_t i = 0; i < n; i++) {
    const struct gr_xid_group *x = &g->v[rest[i].group];
    addr[i] = (uint64_t)x->domain << 16 | x->bus << 8 | x->dev;
  }
  qsort(addr, n, sizeof(*addr), cmp_addr);
  *gpus = 0;
  for (size_t i = 0; i < n; i++) {
    if (i && addr[i] == addr[i - 1])
      continue;
    distinct++;
    *gpus += gpu_by_bus(c->t, (unsigned)(addr[i] >> 16), (unsigned)(addr[i] >> 8) & 0xff, (unsigned)addr[i] & 0xff) >= 0;
  }
  free(addr);
  return distinct;
}

/* The groups past XID_GROUPS_LISTED as one result, as bad as the worst of
 * them (the list is sorted), so the exit status is what listing all would
 * give. JSON gets the same bounded list: the log itself has every line. */
static void summarise_unlisted(struct gr_doctor_ctx *c, const struct gr_xid_groups *g, const struct xid_rank *rk,
                               const struct klog *k)
{
  const struct xid_rank *rest = rk + XID_GROUPS_LISTED;
  size_t n = g->n - XID_GROUPS_LISTED, by_sev[GR_SEV_COUNT] = {0}, events = 0, gpus;
  for (size_t i = 0; i < n; i++) {
    by_sev[rest[i].sev]++;
    events += g->v[rest[i].group].count;
  }
  size_t addrs = count_addresses(c, g, rest, n, &gpus);
  struct gr_finding *r = dr_add(c, rest[0].sev, -1,
                                "%zu more Xid groups (%zu fail, %zu warn, %zu info; %zu events) at %zu PCI address%s, %zu of them GPUs of this machine, are not listed: doctor lists the %d worst and most recent.",
                                n, by_sev[GR_SEV_FAIL], by_sev[GR_SEV_WARN], by_sev[GR_SEV_INFO], events, addrs,
                                addrs == 1 ? "" : "es", gpus, XID_GROUPS_LISTED);
  gr_finding_evidence(r, k->name, "%zu Xid groups (one per bus address and Xid number)", g->n);
  note_skipped(r, k);
  if (k->device)
    gr_finding_fix(r, "none", "`sudo dmesg | grep 'NVRM: Xid'` shows every Xid line.");
  else
    gr_finding_fix(r, "none", "`grep 'NVRM: Xid' %s` shows every Xid line.", k->name);
}

static void report_groups(struct gr_doctor_ctx *c, const struct gr_xid_groups *g, const struct klog *k)
{
  struct xid_rank *rk = rank_groups(g);
  size_t listed = g->n < XID_GROUPS_LISTED ? g->n : XID_GROUPS_LISTED;
  struct xid_rank **by_group = xcalloc(g->n + 1, sizeof(*by_group));
  for (size_t i = 0; i < listed; i++)
    by_group[rk[i].group] = &rk[i];
  /* listed in the log's order, as a reader of the log meets them */
  for (size_t i = 0; i < g->n; i++)
    if (by_group[i])
      report_xid_group(c, by_group[i], &g->v[i], k);
  if (g->n > listed)
    summarise_unlisted(c, g, rk, k);
  free(by_group);
  free(rk);
}

/* The inventory's Xid count per GPU: the events in the window at each GPU's
 * address (events at other addresses belong to no GPU of this machine). */
static void count_gpu_xids(struct gr_doctor_ctx *c, const struct gr_xid_groups *g)
{
  free(c->r->gpu_xids);
  c->r->gpu_xids = xcalloc(c->t->ngpus + 1, sizeof(size_t));
  for (size_t i = 0; i < g->n; i++) {
    int node = gpu_by_bus(c->t, g->v[i].domain, g->v[i].bus, g->v[i].dev);
    for (size_t k = 0; k < c->t->ngpus && node >= 0; k++)
      if (c->t->gpus[k] == node)
        c->r->gpu_xids[k] += g->v[i].count;
  }
}

static void report_xids(struct gr_doctor_ctx *c, const struct gr_xid_log *log, const struct klog *k, double now)
{
  double window_h = c->o->xid_window_h >= 0 ? c->o->xid_window_h : gr_health_consts()->xid_window_h;
  double since = window_h > 0 && now >= 0 ? now - window_h * 3600.0 : 0;
  struct gr_xid_groups g;
  char span[96], part[64] = "", a[32];
  gr_xid_group(log, since, &g);
  if (!c->t->rig) /* a rig's bus ids are modelled: no GPU is matched */
    count_gpu_xids(c, &g);
  report_groups(c, &g, k);
  if (since > 0)
    snprintf(span, sizeof(span), "in the last %g h", window_h);
  else
    snprintf(span, sizeof(span), "%s", now < 0 ? "(the log has no boot-relative times, so no window)" : "since boot");
  if (g.older)
    dr_add(c, GR_SEV_INFO, -1, "%zu older Xid event%s before the %g h window (--xid-window 0 shows all).", g.older,
           g.older == 1 ? "" : "s", window_h);
  if (k->f.skipped)
    snprintf(part, sizeof(part), " in its newest %s", gr_size_text(k->f.len, a, sizeof(a)));
  if (!g.n) {
    struct gr_finding *r = dr_add(c, GR_SEV_OK, -1, "No NVIDIA Xid error %s (%zu lines of kernel log read%s).", span, log->lines, part);
    gr_finding_evidence(r, k->name, "%zu lines", log->lines);
    note_skipped(r, k);
  }
  gr_xid_groups_free(&g);
}

static void report_bad_lines(struct gr_doctor_ctx *c, const struct gr_xid_log *log, const struct klog *k)
{
  char where[4400];
  if (!log->bad_lines)
    return;
  struct gr_finding *r = dr_add(c, GR_SEV_ERROR, -1,
                                "%s: binary data, not kernel log text (%zu such line%s skipped; the Xids on the other lines are reported).",
                                log_place(k, log->first_bad_line, where, sizeof(where)), log->bad_lines,
                                log->bad_lines == 1 ? "" : "s");
  gr_finding_evidence(r, k->name, "%zu lines, %zu not text", log->lines, log->bad_lines);
}

void check_xid_errors(struct gr_doctor_ctx *c)
{
  char shown[4400];
  struct klog k = {0};
  struct gr_xid_log log = {0};
  if (read_klog(c, &k, shown, sizeof(shown)) != 0)
    goto out;
  gr_kmsg_parse_xids(k.f.data, k.f.len, &log);
  report_bad_lines(c, &log, &k);
  report_xids(c, &log, &k, k.device ? c->uptime_s : log.last_t_sec);
out:
  gr_xid_log_free(&log);
  gr_file_free(&k.f);
}
