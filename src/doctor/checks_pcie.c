/* Doctor checks on the PCIe side: GPU count and model, link width and
 * generation on every link between a GPU and its root complex, AER counters,
 * ACS between GPUs, BAR1 size. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "facts/catalog.h"
#include "doctor/doctor_internal.h"
#include "facts/pcilink.h"

/* Nodes on the way from any GPU or other accelerator (an SX-Aurora, a Gaudi:
 * no GPU, but its path and link are judged alike) up to its host bridge,
 * themselves included. */
static bool *gpu_path_nodes(const struct gr_topo *t)
{
  bool *on = xcalloc(t->npci + 1, sizeof(bool));
  for (size_t g = 0; g < t->ngpus; g++)
    for (int i = t->gpus[g]; i >= 0; i = t->pci[i].parent)
      on[i] = true;
  for (size_t k = 0; t->naccels && k < t->npci; k++)
    if (t->pci[k].kind == GR_KIND_ACCEL)
      for (int i = (int)k; i >= 0 && !on[i]; i = t->pci[i].parent)
        on[i] = true;
  return on;
}

/* What the paths of gpu_path_nodes lead to, for the sentences. Static. */
static const char *path_owners(const struct gr_topo *t)
{
  return !t->naccels ? "GPUs" : !t->ngpus ? "accelerators" : "GPUs and accelerators";
}

/* Evidence for a link: the values the model holds and where they came from. */
static void link_evidence(struct gr_doctor_ctx *c, struct gr_finding *r, int node)
{
  const struct gr_pci *p = &c->t->pci[node];
  const struct gr_link *l = &p->link;
  char path[160], g1[24], g2[24];
  const char *where = c->fs ? gr_pci_sysfs_path(p, "current_link_{speed,width}", path, sizeof(path))
                            : (c->t->source_path ? c->t->source_path : "input");
  gr_finding_evidence(r, where, "now %s", gr_pcie_label(l->cur_gen, l->cur_width, g1, sizeof(g1)));
  if (c->fs)
    gr_pci_sysfs_path(p, "max_link_{speed,width}", path, sizeof(path));
  gr_finding_evidence(r, c->fs ? path : where, "device supports %s", gr_pcie_label(l->max_gen, l->max_width, g1, sizeof(g1)));
  if (p->parent >= 0 && (l->port_max_gen || l->port_max_width)) {
    const struct gr_pci *port = &c->t->pci[p->parent];
    if (c->fs)
      gr_pci_sysfs_path(port, "max_link_{speed,width}", path, sizeof(path));
    gr_finding_evidence(r, c->fs ? path : where, "its port supports %s",
                gr_pcie_label(l->port_max_gen, l->port_max_width, g2, sizeof(g2)));
  }
}

static bool report_link_problem(struct gr_doctor_ctx *c, int node)
{
  const struct gr_pci *p = &c->t->pci[node];
  if (!p->link_problem)
    return false;
  struct gr_finding *r = dr_add(c, GR_SEV_ERROR, node, "Could not read this link: %s.", p->link_problem);
  gr_finding_evidence(r, p->link_problem, "malformed");
  return true;
}

void check_gpu_count(struct gr_doctor_ctx *c)
{
  const struct gr_expect *e = c->o->expect;
  int want = c->o->expect_gpus >= 0 ? c->o->expect_gpus : (e ? e->gpus : -1);
  const char *from = c->o->expect_gpus >= 0 ? "--expect-gpus" : (e ? e->file : NULL);
  int have = (int)c->t->ngpus;
  char buf[64];
  struct gr_finding *r;
  if (want < 0)
    r = dr_add(c, have ? GR_SEV_OK : GR_SEV_INFO, -1, "%d GPU%s found (give --expect-gpus N to check the count).",
               have, have == 1 ? "" : "s");
  else if (have == want)
    r = dr_add(c, GR_SEV_OK, -1, "%d GPUs found, as expected.", have);
  else if (have < want) {
    r = dr_add(c, GR_SEV_FAIL, -1, "%d of the %d expected GPUs are on the PCI bus: %d missing.", have, want, want - have);
    gr_finding_fix(r, "downtime to reseat; a replacement riser or power cable",
           "Look for Xid 79 (fallen off the bus) and AER errors in the kernel log (`gpurig doctor --kmsg` or `journalctl -k -b`); reseat the missing card, its riser and its power cables; `lspci -d 10de:` lists what the bus sees.");
  } else
    r = dr_add(c, GR_SEV_WARN, -1, "%d GPUs found where %d were expected: update the expectation or check for a wrong node.",
               have, want);
  if (want >= 0)
    gr_finding_evidence(r, from, "%d GPUs expected", want);
  for (size_t g = 0; g < c->t->ngpus; g++)
    gr_finding_evidence(r, "/sys/bus/pci/devices", "%s", gr_pci_subject(c->t, c->t->gpus[g], buf, sizeof(buf)));
  if (!e || !e->model)
    return;
  for (size_t g = 0; g < c->t->ngpus; g++) {
    const struct gr_gpu_model *m = dr_gpu_model(&c->t->pci[c->t->gpus[g]]);
    if (m && strcasecmp(m->model, e->model) == 0)
      continue;
    r = dr_add(c, GR_SEV_FAIL, c->t->gpus[g], "This GPU is %s, not the %s the expectation names.",
               m ? m->model : "a model missing from gpurig's catalog", e->model);
    gr_finding_evidence(r, e->file, "line %zu: model \"%s\"", e->line_model, e->model);
  }
}

/* What a link can train to: both ends' maxima, as the analysis found them. */
static void link_capability(const struct gr_doctor_ctx *c, int node, int *gen, int *width)
{
  *gen = c->a->link[node].can_gen;
  *width = c->a->link[node].can_width;
}

static void link_against_expectation(struct gr_doctor_ctx *c, int node)
{
  const struct gr_expect *e = c->o->expect;
  const struct gr_pci *p = &c->t->pci[node];
  int gen, width;
  char have[24], want[24];
  link_capability(c, node, &gen, &width);
  if (p->link.cur_width > 0 && p->link.cur_width < width)
    width = p->link.cur_width;
  if ((gen && gen < e->link_gen) || (width && width < e->link_width)) {
    struct gr_finding *r =
        dr_add(c, GR_SEV_FAIL, node, "This GPU's link can reach only %s; the expectation is %s.",
               gr_pcie_label(gen, width, have, sizeof(have)), gr_pcie_label(e->link_gen, e->link_width, want, sizeof(want)));
    link_evidence(c, r, node);
    gr_finding_evidence(r, e->file, "line %zu: link gen%d x%d", e->line_link, e->link_gen, e->link_width);
    gr_finding_fix(r, "downtime; possibly a riser rated for the generation",
           "Move the card to a slot wired for %s, or replace its riser; check the BIOS link-speed and bifurcation settings of the slot.", want);
  }
}

void check_gpu_link_uniform(struct gr_doctor_ctx *c)
{
  const struct gr_topo *t = c->t;
  size_t before = c->r->findings.n;
  char a[24], b[24], list[512];
  bool expect_link = c->o->expect && c->o->expect->link_gen;
  for (size_t g = 0; g < t->ngpus; g++) {
    const struct gr_pci *p = &t->pci[t->gpus[g]];
    if (expect_link)
      link_against_expectation(c, t->gpus[g]);
    /* compare with the first GPU of the same model; report each odd one once */
    size_t first = g;
    for (size_t h = 0; h < g; h++)
      if (t->pci[t->gpus[h]].vendor == p->vendor && t->pci[t->gpus[h]].device == p->device) {
        first = h;
        break;
      }
    int g1, w1, g2, w2;
    link_capability(c, t->gpus[first], &g1, &w1);
    link_capability(c, t->gpus[g], &g2, &w2);
    if (first == g || (g1 == g2 && w1 == w2) || !g1 || !g2 || !w1 || !w2)
      continue;
    snprintf(list, sizeof(list), "GPU%zu can reach %s, GPU%zu of the same model %s", g,
             gr_pcie_label(g2, w2, b, sizeof(b)), first, gr_pcie_label(g1, w1, a, sizeof(a)));
    struct gr_finding *r =
        dr_add(c, GR_SEV_WARN, t->gpus[g], "%s: the slower link holds every collective down to its rate.", list);
    link_evidence(c, r, t->gpus[g]);
    gr_finding_fix(r, "downtime to move the card",
           "Put GPU%zu in a slot wired like GPU%zu's (the board manual lists each slot's lanes and generation), or replace its riser.",
           g, first);
  }
  if (c->r->findings.n > before)
    return;
  if (!t->link_details || t->ngpus == 0) {
    dr_add(c, GR_SEV_SKIPPED, -1, t->ngpus ? "This input records no link widths or generations." : "No GPU to compare.");
    return;
  }
  dr_add(c, GR_SEV_OK, -1, "GPUs of the same model can reach the same link generation and width%s.",
         expect_link ? ", and every one meets the expectation" : "");
}

void check_pcie_link_width(struct gr_doctor_ctx *c)
{
  const struct gr_topo *t = c->t;
  bool *on = gpu_path_nodes(t);
  size_t links = 0, findings = 0;
  char a[24], b[24];
  for (size_t i = 0; i < t->npci; i++) {
    const struct gr_pci *p = &t->pci[i];
    struct gr_link_facts sf;
    if (!on[i] || !p->has_link)
      continue;
    links++;
    if (report_link_problem(c, (int)i)) {
      findings++;
      continue;
    }
    sf = c->a->link[i];
    if (sf.width_short) {
      struct gr_finding *r = dr_add(
          c, gr_link_width_sev(&sf), (int)i,
          "The link runs at x%d although both ends support x%d: %s of its bandwidth (%.1f instead of %.1f GB/s per direction).",
          p->link.cur_width, sf.can_width, p->link.cur_width * 2 == sf.can_width ? "half" : "part",
          gr_pcie_bw_gbps(sf.can_gen, p->link.cur_width), gr_pcie_bw_gbps(sf.can_gen, sf.can_width));
      link_evidence(c, r, (int)i);
      gr_finding_fix(r, "downtime to reseat; a riser or cable rated for the link",
             "Reseat the card and its riser; replace a riser or cable that is not rated for %s; check the slot's bifurcation setting in the BIOS (x16, not x8x8 or x4x4x4x4).",
             gr_pcie_label(sf.can_gen, sf.can_width, a, sizeof(a)));
      findings++;
    } else if (sf.slot_width) {
      struct gr_finding *r =
          dr_add(c, gr_link_width_sev(&sf), (int)i, "An x%d device in an x%d slot: the slot limits it to %s.", p->link.max_width,
                 p->link.port_max_width, gr_pcie_label(sf.can_gen, sf.can_width, b, sizeof(b)));
      link_evidence(c, r, (int)i);
      gr_finding_fix(r, "moving the card", "Move it to a slot wired x%d if the board has one (see its manual).", p->link.max_width);
      findings++;
    }
  }
  free(on);
  if (findings)
    return;
  if (!links || !t->link_details)
    dr_add(c, GR_SEV_SKIPPED, -1, links ? "This input records no link widths." : "No GPU, so no GPU link to check.");
  else
    dr_add(c, GR_SEV_OK, -1, "All %zu links between the %s and their root complexes run at the full width both ends support.",
           links, path_owners(t));
}

static void gen_finding(struct gr_doctor_ctx *c, int node, const struct gr_link_facts *sf)
{
  const struct gr_pci *p = &c->t->pci[node];
  char want[24];
  struct gr_finding *r = dr_add(
      c, gr_link_gen_sev(sf, c->o->loaded), node, "The link runs at Gen%d although both ends support Gen%d%s: %.1f instead of %.1f GB/s per direction.",
      p->link.cur_gen, sf->can_gen,
      sf->gen_idle ? " while the GPUs are busy (--loaded)" : " (idle GPUs drop to 2.5 GT/s, not to this)",
      gr_pcie_bw_gbps(p->link.cur_gen, sf->can_width), gr_pcie_bw_gbps(sf->can_gen, sf->can_width));
  gr_finding_fix(r, "the slower generation costs bandwidth; a new riser costs money",
         "Replace the riser or cable with one rated for %s and reseat the card; if errors persist, set this slot to Gen%d in the BIOS so the link is stable at a known speed.",
         gr_pcie_label(sf->can_gen, sf->can_width, want, sizeof(want)), p->link.cur_gen);
  link_evidence(c, r, node);
}

/* Idle GPUs park their links at 2.5 GT/s: one note for all of them, not a
 * finding per GPU. */
static void idle_note(struct gr_doctor_ctx *c, const int *nodes, size_t n)
{
  char who[64], a[24], b[24];
  struct gr_finding *r = dr_add(
      c, GR_SEV_INFO, -1,
      "%zu link%s at 2.5 GT/s now, below what both ends support: NVIDIA GPUs drop there when idle, so this says nothing until the GPUs are busy.",
      n, n == 1 ? " is" : "s are");
  for (size_t i = 0; i < n; i++) {
    const struct gr_pci *p = &c->t->pci[nodes[i]];
    struct gr_link_facts sf;
    sf = c->a->link[nodes[i]];
    gr_finding_evidence(r, gr_pci_subject(c->t, nodes[i], who, sizeof(who)), "now %s, can train to %s",
                gr_pcie_label(p->link.cur_gen, p->link.cur_width, a, sizeof(a)),
                gr_pcie_label(sf.can_gen, sf.can_width, b, sizeof(b)));
  }
  gr_finding_fix(r, "none", "Run `gpurig doctor --loaded` while the GPUs are busy (a training job, or `gpurig bench`) to check the generation under load.");
}

void check_pcie_link_gen(struct gr_doctor_ctx *c)
{
  const struct gr_topo *t = c->t;
  bool *on = gpu_path_nodes(t);
  int *idle = xmalloc((t->npci + 1) * sizeof(int));
  size_t links = 0, findings = 0, nidle = 0;
  char b[24];
  for (size_t i = 0; i < t->npci; i++) {
    const struct gr_pci *p = &t->pci[i];
    struct gr_link_facts sf;
    if (!on[i] || !p->has_link || p->link_problem)
      continue; /* a malformed link is reported once, by pcie.link-width */
    links++;
    sf = c->a->link[i];
    if (sf.gen_short && gr_link_gen_sev(&sf, c->o->loaded) == GR_SEV_INFO) {
      idle[nidle++] = (int)i;
    } else if (sf.gen_short) {
      gen_finding(c, (int)i, &sf);
      findings++;
    } else if (sf.slot_gen) {
      struct gr_finding *r = dr_add(c, gr_link_gen_sev(&sf, c->o->loaded), (int)i, "A Gen%d device on a Gen%d port: the port limits it to %s.",
                                         p->link.max_gen, p->link.port_max_gen,
                                         gr_pcie_label(sf.can_gen, sf.can_width, b, sizeof(b)));
      link_evidence(c, r, (int)i);
      findings++;
    }
  }
  if (nidle)
    idle_note(c, idle, nidle);
  free(idle);
  free(on);
  if (findings || nidle)
    return;
  if (!links || !t->link_details)
    dr_add(c, GR_SEV_SKIPPED, -1, links ? "This input records no link generations." : "No GPU, so no GPU link to check.");
  else
    dr_add(c, GR_SEV_OK, -1, "All %zu links between the %s and their root complexes run at the generation both ends support.",
           links, path_owners(t));
}

/* ---- AER ---- */

/* DCGM's rule: a healthy link sees at most one bit error in 1e12 bits, so
 * the allowance grows with lanes x rate x time. */
static double aer_allowance(const struct gr_doctor_ctx *c, int gen, int width)
{
  return c->uptime_s < 0 ? -1 : gr_pcie_error_allowance(gen, width, c->uptime_s);
}

/* The link a device's AER counters describe, and the other end of it:
 * ports count errors on the link below them, others on the link above. */
static int aer_link_node(const struct gr_topo *t, int node, int *partner)
{
  const struct gr_pci *p = &t->pci[node];
  *partner = -1;
  if (p->role == GR_ROLE_ROOTPORT || p->role == GR_ROLE_SWITCH_DOWN) {
    for (size_t i = 0; i < t->npci; i++)
      if (t->pci[i].parent == node && t->pci[i].has_link) {
        *partner = (int)i;
        return (int)i;
      }
    return -1;
  }
  if (p->has_link)
    *partner = p->parent;
  return p->has_link ? node : -1;
}

static void aer_one(struct gr_doctor_ctx *c, int node, size_t *with_counters)
{
  const struct gr_pci *p = &c->t->pci[node];
  char path[160], other[64];
  int partner, link = aer_link_node(c->t, node, &partner);
  if (p->aer_problem) {
    struct gr_finding *r = dr_add(c, GR_SEV_ERROR, node, "Could not read the AER counters: %s.", p->aer_problem);
    gr_finding_evidence(r, p->aer_problem, "malformed");
    return;
  }
  if (!p->aer.correctable.valid && !p->aer.nonfatal.valid && !p->aer.fatal.valid)
    return;
  (*with_counters)++;
  uint64_t bad = (p->aer.nonfatal.valid ? p->aer.nonfatal.value : 0) + (p->aer.fatal.valid ? p->aer.fatal.value : 0);
  uint64_t cor = p->aer.correctable.valid ? p->aer.correctable.value : 0;
  if (!bad && !cor)
    return;
  snprintf(other, sizeof(other), "%s", partner >= 0 ? gr_pci_subject(c->t, partner, path, sizeof(path)) : "its link partner");
  int gen = 0, width = 0;
  char lab[32];
  if (link >= 0)
    link_capability(c, link, &gen, &width);
  double allow = aer_allowance(c, gen, width);
  struct gr_finding *r;
  if (bad)
    r = dr_add(c, GR_SEV_FAIL, node,
               "%llu uncorrectable (non-fatal or fatal) PCIe error%s counted on the link to %s since boot: data was lost or a transaction failed.",
               (unsigned long long)bad, bad == 1 ? "" : "s", other);
  else if (allow < 0)
    r = dr_add(c, GR_SEV_WARN, node, "%llu correctable PCIe errors counted on the link to %s (uptime or link rate unknown, so no rate).",
               (unsigned long long)cor, other);
  else if ((double)cor > allow)
    r = dr_add(c, GR_SEV_WARN, node,
               "%llu correctable PCIe errors counted on the link to %s in %.1f h: above the %.0f a healthy %s link allows in that time (bit error rate 1e-12): a marginal link.",
               (unsigned long long)cor, other, c->uptime_s / 3600.0, allow, gr_pcie_label(gen, width, lab, sizeof(lab)));
  else
    r = dr_add(c, GR_SEV_INFO, node,
               "%llu correctable PCIe errors counted on the link to %s in %.1f h, within the %.0f a healthy %s link allows (bit error rate 1e-12).",
               (unsigned long long)cor, other, c->uptime_s / 3600.0, allow, gr_pcie_label(gen, width, lab, sizeof(lab)));
  if (p->aer.correctable.valid)
    gr_finding_evidence(r, gr_pci_sysfs_path(p, "aer_dev_correctable", path, sizeof(path)), "TOTAL_ERR_COR %llu",
                (unsigned long long)cor);
  if (bad)
    gr_finding_evidence(r, gr_pci_sysfs_path(p, "aer_dev_{nonfatal,fatal}", path, sizeof(path)), "%llu",
                (unsigned long long)bad);
  if (c->uptime_s >= 0)
    gr_finding_evidence(r, "/proc/uptime", "%.0f s", c->uptime_s);
  if (r->sev != GR_SEV_INFO)
    gr_finding_fix(r, "downtime; a riser or cable rated for the link; a slower link if forced down",
           "Errors are counted where they are detected, often at the other end of the faulty link: check both %s and this device. Reseat the card, replace the riser or cable, check the power cables; if errors continue, set the slot one generation lower in the BIOS.",
           other);
}

void check_pcie_aer(struct gr_doctor_ctx *c)
{
  const struct gr_topo *t = c->t;
  bool *on = gpu_path_nodes(t);
  size_t before = c->r->findings.n, with_counters = 0, devices = 0;
  for (size_t i = 0; i < t->npci; i++)
    if (on[i] && t->pci[i].role != GR_ROLE_HOSTBRIDGE) {
      devices++;
      aer_one(c, (int)i, &with_counters);
    }
  free(on);
  if (c->r->findings.n > before)
    return;
  if (!devices)
    dr_add(c, GR_SEV_SKIPPED, -1, "No GPU, so no GPU path to check.");
  else if (!with_counters)
    dr_add(c, GR_SEV_SKIPPED, -1,
           "The kernel exposes no AER counters for the %zu devices on %s paths (no aer_dev_* files: AER is off, or the firmware handles errors itself).",
           devices, t->ngpus || !t->naccels ? "GPU" : "accelerator");
  else
    dr_add(c, GR_SEV_OK, -1, "No PCIe errors counted by the %zu devices on %s paths that report AER counters (of %zu).",
           with_counters, t->ngpus || !t->naccels ? "GPU" : "accelerator", devices);
}

/* ---- ACS ---- */

enum { ACS_CAP_ID = 0x000d, ACS_CTRL_OFF = 6, ACS_SV = 1 << 0, ACS_RR = 1 << 2, ACS_CR = 1 << 3, ACS_UF = 1 << 4,
       ACS_EC = 1 << 5, ACS_DT = 1 << 6 };

/* Walks the extended capability list (PCIe config space from 0x100).
 * Returns the ACS control word, -1 if the bridge has no ACS capability, -2 if
 * config space beyond 256 bytes is not readable. */
static int acs_control(const unsigned char *cfg, size_t len)
{
  if (len < 0x104)
    return -2;
  size_t off = 0x100;
  for (int hops = 0; hops < 128 && off >= 0x100 && off + 8 <= len; hops++) {
    uint32_t h = (uint32_t)cfg[off] | (uint32_t)cfg[off + 1] << 8 | (uint32_t)cfg[off + 2] << 16 |
                 (uint32_t)cfg[off + 3] << 24;
    if (h == 0 || h == 0xffffffffu)
      return -1;
    if ((h & 0xffff) == ACS_CAP_ID)
      return cfg[off + ACS_CTRL_OFF] | cfg[off + ACS_CTRL_OFF + 1] << 8;
    off = (h >> 20) & 0xffc;
  }
  return -1;
}

static ssize_t read_config(const struct gr_doctor_ctx *c, const struct gr_pci *p, unsigned char *buf, size_t cap)
{
  char path[160];
  return gr_fs_read(c->fs, gr_pci_sysfs_path(p, "config", path, sizeof(path)), (char *)buf, cap);
}

/* Bridges that P2P traffic between two GPUs passes where it could turn
 * around below the root complex: the ports of a switch both GPUs sit under.
 * Two GPUs whose common ancestor is the host bridge (each on a root port of
 * its own) talk through the root complex whatever ACS says, so their root
 * ports are not judged. */
static bool *bridges_between_gpus(const struct gr_topo *t, size_t *n)
{
  bool *on = xcalloc(t->npci + 1, sizeof(bool));
  *n = 0;
  for (size_t x = 0; x < t->ngpus; x++)
    for (size_t y = x + 1; y < t->ngpus; y++) {
      int gx = t->gpus[x], gy = t->gpus[y];
      int lca = gr_topo_common_ancestor(t, gx, gy);
      if (lca < 0 || t->pci[lca].role == GR_ROLE_HOSTBRIDGE)
        continue;
      for (int side = 0; side < 2; side++)
        for (int i = t->pci[side ? gy : gx].parent; i >= 0 && i != lca; i = t->pci[i].parent)
          if (!on[i] && t->pci[i].role != GR_ROLE_HOSTBRIDGE) {
            on[i] = true;
            (*n)++;
          }
    }
  return on;
}

static void acs_redirects(struct gr_doctor_ctx *c, int node, int ctrl)
{
  char path[160], bus[32];
  struct gr_finding *r = dr_add(
      c, GR_SEV_WARN, node,
      "ACS on this bridge redirects peer-to-peer %s%s%s up to the root complex: GPU-to-GPU traffic below it takes the long way (slow, and NCCL may hang).",
      ctrl & ACS_RR ? "requests" : "", (ctrl & ACS_RR) && (ctrl & ACS_CR) ? " and " : "",
      ctrl & ACS_CR ? "completions" : "");
  gr_finding_evidence(r, gr_pci_sysfs_path(&c->t->pci[node], "config", path, sizeof(path)),
              "ACS control 0x%04x: SrcValid%c ReqRedir%c CmpltRedir%c UpstreamFwd%c EgressCtrl%c DirectTrans%c", ctrl,
              ctrl & ACS_SV ? '+' : '-', ctrl & ACS_RR ? '+' : '-', ctrl & ACS_CR ? '+' : '-',
              ctrl & ACS_UF ? '+' : '-', ctrl & ACS_EC ? '+' : '-', ctrl & ACS_DT ? '+' : '-');
  gr_finding_fix(r, "devices below the bridge lose ACS isolation: their IOMMU groups merge, which matters only for passing them to VMs",
         "Disable ACS in the BIOS (often \"ACS Control\" or \"PCIe ACS\"), or until reboot: `sudo setpci -s %s ECAP_ACS+0x6.w=0000`; then check P2P with `gpurig bench`.",
         gr_pci_busid(&c->t->pci[node], bus, sizeof(bus)));
}

/* Without root the kernel shows 64 bytes of config space; IOMMU groups still
 * betray ACS: GPUs behind one switch land in separate groups only when ACS
 * isolates them. */
static void acs_inferred(struct gr_doctor_ctx *c, size_t nbridges, ssize_t cfg_len)
{
  const struct gr_topo *t = c->t;
  char hint[512] = "";
  for (size_t x = 0; x < t->ngpus && !hint[0]; x++)
    for (size_t y = x + 1; y < t->ngpus && !hint[0]; y++) {
      const struct gr_pci *a = &t->pci[t->gpus[x]], *b = &t->pci[t->gpus[y]];
      if (a->switch_up < 0 || a->switch_up != b->switch_up || a->iommu_group < 0 || b->iommu_group < 0)
        continue;
      if (a->iommu_group != b->iommu_group)
        snprintf(hint, sizeof(hint),
                 " IOMMU groups suggest ACS is on: GPU%zu (group %d) and GPU%zu (group %d) share a switch yet sit in different groups, which the kernel does only when ACS isolates them.",
                 x, a->iommu_group, y, b->iommu_group);
      else
        snprintf(hint, sizeof(hint),
                 " IOMMU groups suggest ACS is off below the switch: GPU%zu and GPU%zu share group %d.", x, y,
                 a->iommu_group);
    }
  dr_skip_root(c, "Reading ACS control on the %zu bridges between GPUs needs PCIe extended config space, which only root can read (config is %zd bytes).%s",
               nbridges, cfg_len, hint);
}

void check_pcie_acs(struct gr_doctor_ctx *c)
{
  size_t nbridges = 0, checked = 0, redirecting = 0, before = c->r->findings.n;
  bool *on = bridges_between_gpus(c->t, &nbridges);
  unsigned char *cfg = xmalloc(4097);
  ssize_t short_len = -1;
  for (size_t i = 0; i < c->t->npci; i++) {
    if (!on[i])
      continue;
    ssize_t len = read_config(c, &c->t->pci[i], cfg, 4097);
    int ctrl = len > 0 ? acs_control(cfg, (size_t)len) : -2;
    if (ctrl == -2) {
      short_len = len;
      continue;
    }
    checked++;
    if (ctrl >= 0 && (ctrl & (ACS_RR | ACS_CR))) {
      acs_redirects(c, (int)i, ctrl);
      redirecting++;
    }
  }
  free(cfg);
  free(on);
  /* a count only when every bridge was read: some unread is unknown, not 0 */
  c->r->acs_redirecting = checked == nbridges ? (int)redirecting : -1;
  if (c->r->findings.n > before)
    return;
  if (!nbridges)
    dr_add(c, GR_SEV_OK, -1, "No two GPUs share a PCIe switch, so ACS cannot redirect traffic that would stay below one (between root ports it crosses the root complex anyway).");
  else if (checked < nbridges)
    acs_inferred(c, nbridges - checked, short_len);
  else
    dr_add(c, GR_SEV_OK, -1, "None of the %zu bridges between GPUs redirects peer-to-peer traffic (ACS ReqRedir and CmpltRedir off).",
           nbridges);
}

/* ---- BAR1 ---- */

/* The second line of sysfs `resource` is BAR1: "0xSTART 0xEND 0xFLAGS". */
static int bar1_bytes(const char *text, uint64_t *size)
{
  const char *line = strchr(text, '\n');
  unsigned long long start, end, flags;
  if (!line || sscanf(line + 1, "%llx %llx %llx", &start, &end, &flags) != 3)
    return -1;
  *size = end > start ? (uint64_t)(end - start + 1) : 0;
  return 0;
}

static void bar1_one(struct gr_doctor_ctx *c, int node, size_t *ok)
{
  const struct gr_pci *p = &c->t->pci[node];
  const struct gr_gpu_model *m = dr_gpu_model(p);
  char path[160], shown[4200], text[1024];
  uint64_t size;
  gr_pci_sysfs_path(p, "resource", path, sizeof(path));
  int rc = dr_read(c, path, text, sizeof(text));
  if (rc == -ENOENT)
    return;
  if (rc != 0 || bar1_bytes(text, &size) != 0) {
    struct gr_finding *r = dr_add(c, GR_SEV_ERROR, node, "Could not read the BAR sizes from %s: %s.",
                                       dr_shown(c, path, shown, sizeof(shown)), rc ? gr_fs_strerror(rc) : "malformed");
    gr_finding_evidence(r, path, "%s", rc ? "unreadable" : "no second line of three hex numbers");
    return;
  }
  double bar_gib = (double)size / (1024.0 * 1024 * 1024);
  if (!m || p->vendor != 0x10de || bar_gib >= m->mem_gib || m->p2p == GR_P2P_YES || c->t->ngpus < 2) {
    (*ok)++;
    return;
  }
  struct gr_finding *r = dr_add(
      c, GR_SEV_INFO, node,
      "BAR1 is %.0f MiB for %.0f GiB of memory: Resizable BAR is off. Stock drivers do not need it, but the P2P-enabled open kernel modules for %s cards do.",
      (double)size / (1024.0 * 1024), m->mem_gib, m->model);
  gr_finding_evidence(r, path, "BAR1 %llu bytes", (unsigned long long)size);
  gr_finding_fix(r, "none on most boards; Resizable BAR needs UEFI boot (CSM off)",
         "In the BIOS enable Above 4G Decoding and Re-Size BAR Support (CSM off); `nvidia-smi -q -d MEMORY` then shows BAR1 as large as the memory.");
}

void check_gpu_bar1(struct gr_doctor_ctx *c)
{
  size_t ok = 0, before = c->r->findings.n;
  for (size_t g = 0; g < c->t->ngpus; g++)
    bar1_one(c, c->t->gpus[g], &ok);
  if (c->r->findings.n > before)
    return;
  if (!ok)
    dr_add(c, GR_SEV_SKIPPED, -1, c->t->ngpus ? "No resource files for the GPUs in this input." : "No GPU.");
  else
    dr_add(c, GR_SEV_OK, -1, "BAR1 of the %zu GPUs read; none limits peer-to-peer use.", ok);
}
