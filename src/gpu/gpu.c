/* The vendor-neutral side of the GPU backends (see gpu.h). */
#include "gpu/gpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "facts/catalog.h"
#include "facts/facts.h"
#include "model/topo.h"

/* Starts backend be into *state and counts its GPUs; -1 with why. */
static int start_backend(const struct gr_gpu_backend *be, void **state, unsigned *count, char *why, size_t cap)
{
  why[0] = '\0';
  if (be->init(state, why, cap) != 0)
    return -1;
  if (be->enumerate(*state, count) != 0) {
    snprintf(why, cap, "%s", be->last_error(*state));
    be->shutdown(*state);
    *state = NULL;
    return -1;
  }
  return 0;
}

static void take_backend(struct gr_gpus *g, const struct gr_gpu_backend *be, void *state, unsigned count)
{
  g->be = be;
  g->state = state;
  g->count = count;
  if (be->versions)
    be->versions(g->state, g->driver, sizeof(g->driver), g->runtime, sizeof(g->runtime));
}

/* ------------------------------------------------ several vendors at once */

/* A machine with GPUs of several vendors: one backend over the started
 * ones, GPUs numbered vendor by vendor in gr_vendors[]'s order. */
enum { MULTI_MAX = 4 };
struct multi {
  unsigned n;
  const struct gr_gpu_backend *be[MULTI_MAX];
  void *st[MULTI_MAX];
  unsigned first[MULTI_MAX], count[MULTI_MAX];
};

/* Which part answered the calling thread's last failed call. */
static _Thread_local const struct gr_gpu_backend *tl_multi_be;
static _Thread_local void *tl_multi_st;
static _Thread_local char tl_multi_err[96];

/* The part holding GPU gpu and its own index there; -1 when none does. */
static int multi_at(const struct multi *m, unsigned gpu, unsigned *local)
{
  for (unsigned k = 0; k < m->n; k++)
    if (gpu >= m->first[k] && gpu < m->first[k] + m->count[k]) {
      *local = gpu - m->first[k];
      tl_multi_be = m->be[k];
      tl_multi_st = m->st[k];
      return (int)k;
    }
  tl_multi_be = NULL;
  snprintf(tl_multi_err, sizeof(tl_multi_err), "GPU%u: no such GPU", gpu);
  return -1;
}

static void multi_shutdown(void *state)
{
  struct multi *m = state;
  for (unsigned k = 0; m && k < m->n; k++)
    m->be[k]->shutdown(m->st[k]);
  free(m);
}

static const char *multi_last_error(void *state)
{
  (void)state;
  return tl_multi_be ? tl_multi_be->last_error(tl_multi_st) : tl_multi_err;
}

static int multi_enumerate(void *state, unsigned *count)
{
  struct multi *m = state;
  unsigned total = 0;
  for (unsigned k = 0; k < m->n; k++) {
    tl_multi_be = m->be[k];
    tl_multi_st = m->st[k];
    if (m->be[k]->enumerate(m->st[k], &m->count[k]) != 0)
      return -1;
    m->first[k] = total;
    total += m->count[k];
  }
  *count = total;
  return 0;
}

static int multi_static(void *state, unsigned gpu, struct gr_gpu_static *out)
{
  unsigned l;
  int k = multi_at(state, gpu, &l);
  const struct multi *m = state;
  if (k < 0) {
    memset(out, 0, sizeof(*out));
    return -1;
  }
  return m->be[k]->static_info(m->st[k], l, out);
}

static int multi_dynamic(void *state, unsigned gpu, struct gr_gpu_dynamic *out)
{
  unsigned l;
  int k = multi_at(state, gpu, &l);
  const struct multi *m = state;
  if (k < 0) {
    memset(out, 0, sizeof(*out));
    return -1;
  }
  return m->be[k]->dynamic_info(m->st[k], l, out);
}

/* Peer access between two vendors' GPUs is not supported by either driver. */
static int multi_p2p(void *state, unsigned a, unsigned b, enum gr_p2p_cap cap, enum gr_p2p_status *out)
{
  const struct multi *m = state;
  unsigned la, lb;
  int ka = multi_at(m, a, &la), kb = multi_at(m, b, &lb);
  *out = GR_P2PS_U;
  if (ka < 0 || kb < 0)
    return -1;
  if (ka != kb) {
    *out = GR_P2PS_NS;
    return 0;
  }
  return m->be[ka]->p2p_status ? m->be[ka]->p2p_status(m->st[ka], la, lb, cap, out) : 0;
}

static int multi_gpulinks(void *state, unsigned gpu, struct gr_gpu_link *out, unsigned cap, unsigned *n)
{
  const struct multi *m = state;
  unsigned l;
  int k = multi_at(m, gpu, &l);
  *n = 0;
  if (k < 0)
    return -1;
  return m->be[k]->gpulinks ? m->be[k]->gpulinks(m->st[k], l, out, cap, n) : 0;
}

/* "550.54.14 (nvidia), 6.7.0 (amd)": each part's, named. */
static int multi_versions(void *state, char *driver, size_t dcap, char *runtime, size_t rcap)
{
  const struct multi *m = state;
  size_t dn = 0, rn = 0;
  driver[0] = runtime[0] = '\0';
  for (unsigned k = 0; k < m->n; k++) {
    char d[96] = "", r[32] = "";
    if (m->be[k]->versions)
      m->be[k]->versions(m->st[k], d, sizeof(d), r, sizeof(r));
    if (d[0] && dn < dcap)
      dn += (size_t)snprintf(driver + dn, dcap - dn, "%s%s (%s)", dn ? ", " : "", d, m->be[k]->name);
    if (r[0] && rn < rcap)
      rn += (size_t)snprintf(runtime + rn, rcap - rn, "%s%s %s", rn ? ", " : "", m->be[k]->runtime_name, r);
  }
  return 0;
}

/* Events of the parts that report them, with this backend's GPU numbers. */
static int multi_events(void *state, unsigned timeout_ms, struct gr_gpu_event *out, unsigned cap, unsigned *n)
{
  const struct multi *m = state;
  int any = -1;
  *n = 0;
  for (unsigned k = 0; k < m->n; k++) {
    unsigned got = 0;
    if (!m->be[k]->events || m->be[k]->events(m->st[k], timeout_ms, out + *n, cap - *n, &got) != 0)
      continue;
    any = 0;
    for (unsigned i = 0; i < got; i++)
      out[*n + i].gpu += m->first[k];
    *n += got;
  }
  if (any != 0)
    snprintf(tl_multi_err, sizeof(tl_multi_err), "no driver here reports error events");
  tl_multi_be = NULL;
  return any;
}

static int multi_processes(void *state, unsigned gpu, struct gr_gpu_process *out, unsigned cap, unsigned *n)
{
  const struct multi *m = state;
  unsigned l;
  int k = multi_at(m, gpu, &l);
  *n = 0;
  if (k < 0)
    return -1;
  if (!m->be[k]->processes) {
    tl_multi_be = NULL;
    snprintf(tl_multi_err, sizeof(tl_multi_err), "the %s cannot list a GPU's processes", m->be[k]->driver_name);
    return -1;
  }
  return m->be[k]->processes(m->st[k], l, out, cap, n);
}

static const struct gr_gpu_backend multi_backend = {
    .name = "mixed",
    .library = "each vendor's library",
    .driver_name = "GPU drivers",
    .runtime_name = "runtimes",
    .gpulink_name = "GPU links",
    .shutdown = multi_shutdown,
    .last_error = multi_last_error,
    .enumerate = multi_enumerate,
    .static_info = multi_static,
    .dynamic_info = multi_dynamic,
    .p2p_status = multi_p2p,
    .gpulinks = multi_gpulinks,
    .versions = multi_versions,
    .events = multi_events,
    .processes = multi_processes,
};

/* Every backend that sees GPUs; one alone is taken as it is, several are
 * joined (multi_backend). Without GPUs anywhere, the first vendor's
 * answer: "0 GPUs" where it started, else why the ones before the first
 * that started failed. */
/* Joins the parts of m that see GPUs into g (multi_backend); m is g's. */
static void take_multi(struct gr_gpus *g, struct multi *m)
{
  unsigned count = 0;
  if (multi_enumerate(m, &count) != 0)
    count = 0; /* a part that enumerated a moment ago: its GPUs read as lost below */
  take_backend(g, &multi_backend, m, count);
}

int gr_gpus_open(struct gr_gpus *g, struct gr_err *err)
{
  char why[1024] = "", one[512];
  size_t off = 0;
  const struct gr_gpu_backend *empty = NULL;
  void *empty_state = NULL;
  bool failed_first = false; /* a backend failed before any started */
  struct multi *m = xcalloc(1, sizeof(*m)); /* the backends that see GPUs */
  memset(g, 0, sizeof(*g));
  for (size_t i = 0; gr_vendors[i]; i++) {
    const struct gr_gpu_backend *be = gr_vendors[i]->gpu;
    void *state = NULL;
    unsigned count = 0;
    if (!be)
      continue;
    if (start_backend(be, &state, &count, one, sizeof(one)) == 0) {
      if (count > 0 && m->n < MULTI_MAX) {
        m->be[m->n] = be;
        m->st[m->n] = state;
        m->count[m->n++] = count;
      } else if (count == 0 && !empty && !failed_first) {
        empty = be;
        empty_state = state;
      } else
        be->shutdown(state);
      continue;
    }
    failed_first |= !empty && m->n == 0;
    off += (size_t)snprintf(why + off, off < sizeof(why) ? sizeof(why) - off : 0, "%s%s", off ? "; " : "", one);
    if (off >= sizeof(why))
      off = sizeof(why) - 1;
  }
  if (m->n > 0 && empty)
    empty->shutdown(empty_state);
  if (m->n > 1) {
    take_multi(g, m); /* g owns m now */
    return 0;
  }
  if (m->n == 1)
    take_backend(g, m->be[0], m->st[0], m->count[0]);
  else if (empty)
    take_backend(g, empty, empty_state, 0);
  free(m);
  return g->be ? 0 : gr_fail(err, GR_EXIT_CANNOT_RUN, "%s", why);
}

void gr_gpus_close(struct gr_gpus *g)
{
  if (g->be)
    g->be->shutdown(g->state);
  memset(g, 0, sizeof(*g));
}

static const char *const p2p_names[] = {"OK", "CNS", "GNS", "TNS", "DR", "NS", "U"};
static const char *const p2p_texts[] = {
    "OK", "chipset not supported", "GPU not supported", "topology not supported",
    "disabled by regkey", "not supported", "unknown"};

const char *gr_p2p_status_name(enum gr_p2p_status s)
{
  return (unsigned)s <= GR_P2PS_U ? p2p_names[s] : "U";
}

const char *gr_p2p_status_text(enum gr_p2p_status s)
{
  return (unsigned)s <= GR_P2PS_U ? p2p_texts[s] : "unknown";
}

bool gr_busid_normalize(const char *in, char *out, size_t cap)
{
  unsigned d, b, v, f;
  if (!in || !gr_parse_busid(in, &d, &b, &v, &f) || d > 0xffff)
    return false;
  snprintf(out, cap, "%04x:%02x:%02x.%x", d, b, v, f);
  return true;
}

static void collect_row(struct gr_gpus *g, unsigned i, const struct gr_topo *t, struct gr_gpu_row *row)
{
  row->topo_gpu = -1;
  row->nv_switch_links = -1;
  if (g->be->static_info(g->state, i, &row->st) != 0) {
    snprintf(row->error, sizeof(row->error), "%s", g->be->last_error(g->state));
    row->lost = true;
    return;
  }
  if (g->be->dynamic_info(g->state, i, &row->dy) != 0) {
    snprintf(row->error, sizeof(row->error), "%s", g->be->last_error(g->state));
    row->lost = true;
  }
  row->topo_gpu = gr_topo_gpu_by_busid(t, row->st.busid);
}

/* A GPU that stops answering is broken hardware (or a driver that lost it). */
static void lost_findings(struct gr_gpus_report *r)
{
  for (unsigned i = 0; i < r->count; i++)
    if (r->rows[i].lost) {
      struct gr_finding *f = gr_finding_add(&r->findings, GR_SEV_FAIL, "gpu.lost", "%s", r->rows[i].error);
      gr_finding_subject(f, -1, NULL, r->rows[i].st.busid[0] ? r->rows[i].st.busid : NULL);
    }
}

/* A GPU busy enough to run its top power state, whose PCIe link runs at
 * its fastest: below that an idle GPU lowers its link speed on purpose. */
#define LINK_LOAD_PCT 50

/* The links below what the GPU can train to, as doctor judges them (the same
 * ids and severity, ux-3 M13): a narrower link at any time, since the width
 * never drops to save power; a slower one only while the GPU is busy. */
static void link_findings(struct gr_gpus_report *r)
{
  for (unsigned i = 0; i < r->count; i++) {
    const struct gr_gpu_row *w = &r->rows[i];
    const struct gr_metric *cg = &w->dy.link_gen, *cw = &w->dy.link_width, *mg = &w->st.max_link_gen,
                           *mw = &w->st.max_link_width, *u = &w->dy.util_gpu_pct;
    struct gr_finding *f = NULL;
    char name[16];
    snprintf(name, sizeof(name), "GPU%u", i);
    if (w->lost)
      continue;
    if (cw->ok && mw->ok && cw->v < mw->v)
      f = gr_finding_add(&r->findings, GR_SEV_WARN, "pcie.link-width",
                         "GPU%u (%s) runs its PCIe link at x%.0f of the x%.0f it can train to: %s the bandwidth (a "
                         "riser, slot or seating problem; the width does not drop when idle).", i, w->st.busid, cw->v,
                         mw->v, cw->v * 2 == mw->v ? "half" : "part of");
    if (f)
      gr_finding_subject(f, -1, name, w->st.busid);
    f = NULL;
    if (cg->ok && mg->ok && cg->v < mg->v && u->ok && u->v >= LINK_LOAD_PCT)
      f = gr_finding_add(&r->findings, GR_SEV_WARN, "pcie.link-gen",
                         "GPU%u (%s) runs its PCIe link at Gen%.0f while %.0f%% busy, below the Gen%.0f it can train "
                         "to (a riser, cable or slot that cannot hold the speed, or a BIOS setting).", i, w->st.busid,
                         cg->v, u->v, mg->v);
    if (f)
      gr_finding_subject(f, -1, name, w->st.busid);
  }
}

static int row_of_topo_gpu(const struct gr_gpus_report *r, int topo_gpu)
{
  for (unsigned i = 0; i < r->count; i++)
    if (r->rows[i].topo_gpu == topo_gpu)
      return (int)i;
  return -1;
}

static void add_peer(struct gr_gpu_row *row, struct gr_gpu_peer p)
{
  for (size_t i = 0; i < row->nnv_peers; i++)
    if (row->nv_peers[i].topo_gpu == p.topo_gpu && row->nv_peers[i].package == p.package) {
      row->nv_peers[i].links += p.links; /* a rig may list a pair twice: the analysis adds them too */
      return;
    }
  row->nv_peers = xrealloc(row->nv_peers, (row->nnv_peers + 1) * sizeof(*row->nv_peers));
  row->nv_peers[row->nnv_peers++] = p;
}

/* A GPU's NVLink as t has it: what topo shows, not a second reading. */
static void collect_peers(const struct gr_topo *t, struct gr_gpus_report *r, struct gr_gpu_row *row)
{
  if (!t || row->topo_gpu < 0)
    return;
  int self = t->gpus[row->topo_gpu];
  for (size_t k = 0; k < t->ngpulinks; k++) {
    const struct gr_gpulink *l = &t->gpulinks[k];
    int other = l->a == self ? l->b : l->b == self ? l->a : -2;
    if (other == -1)
      add_peer(row, (struct gr_gpu_peer){.topo_gpu = -1, .row = -1, .package = l->peer_package, .links = l->count});
    else if (other >= 0 && t->pci[other].gpu_index >= 0) /* GPU-NVSwitch entries are in the fabric */
      add_peer(row, (struct gr_gpu_peer){.topo_gpu = t->pci[other].gpu_index,
                                         .row = row_of_topo_gpu(r, t->pci[other].gpu_index),
                                         .package = -1, .links = l->count});
  }
  for (size_t f = 0; f < t->nfabrics; f++) {
    const struct gr_fabric_member *m = gr_fabric_member_of(&t->fabrics[f], self);
    if (m)
      row->nv_switch_links = (row->nv_switch_links > 0 ? row->nv_switch_links : 0) + m->links;
  }
}

static void collect_p2p(struct gr_gpus *g, struct gr_gpus_report *r)
{
  size_t n = r->count;
  if (!g->be->p2p_status || n == 0)
    return;
  r->p2p_read = xcalloc(n * n, sizeof(*r->p2p_read));
  r->p2p_write = xcalloc(n * n, sizeof(*r->p2p_write));
  for (unsigned a = 0; a < n; a++)
    for (unsigned b = 0; b < n; b++) {
      r->p2p_read[a * n + b] = r->p2p_write[a * n + b] = GR_P2PS_U;
      if (a == b || r->rows[a].lost || r->rows[b].lost)
        continue;
      g->be->p2p_status(g->state, a, b, GR_P2P_READ, &r->p2p_read[a * n + b]);
      g->be->p2p_status(g->state, a, b, GR_P2P_WRITE, &r->p2p_write[a * n + b]);
    }
}

void gr_gpus_collect(struct gr_gpus *g, const struct gr_topo *t, struct gr_gpus_report *r)
{
  memset(r, 0, sizeof(*r));
  snprintf(r->vendor, sizeof(r->vendor), "%s", g->be->name);
  snprintf(r->library, sizeof(r->library), "%s", g->be->library);
  snprintf(r->driver, sizeof(r->driver), "%s", g->driver);
  snprintf(r->runtime, sizeof(r->runtime), "%s", g->runtime);
  r->driver_name = g->be->driver_name;
  r->runtime_name = g->be->runtime_name;
  r->p2p_tool = g->be->p2p_tool;
  r->gpulink_name = g->be->gpulink_name;
  r->count = g->count;
  r->rows = xcalloc(g->count ? g->count : 1, sizeof(*r->rows));
  for (unsigned i = 0; i < g->count; i++)
    collect_row(g, i, t, &r->rows[i]);
  for (unsigned i = 0; i < g->count; i++)
    collect_peers(t, r, &r->rows[i]);
  collect_p2p(g, r);
  lost_findings(r);
  link_findings(r);
}

void gr_gpus_report_free(struct gr_gpus_report *r)
{
  for (unsigned i = 0; r->rows && i < r->count; i++)
    free(r->rows[i].nv_peers);
  free(r->rows);
  free(r->p2p_read);
  free(r->p2p_write);
  gr_findings_free(&r->findings);
  memset(r, 0, sizeof(*r));
}

/* ------------------------------------------------ NVLink from the driver */

/* GB/s per link and direction of an NVLink generation, for a GPU the catalog
 * does not know: data/calibration.tsv nvlinkN_link_gbps (NVIDIA's figure per
 * GPU divided by its links, each row with its source). 0 for a generation
 * without a published figure. */
static double nvlink_gen_gbps(int gen)
{
  const struct gr_calibration_consts *c = gr_calib();
  switch (gen) {
  case 1: return c->nvlink1_link_gbps;
  case 2: return c->nvlink2_link_gbps;
  case 3: return c->nvlink3_link_gbps;
  case 4: return c->nvlink4_link_gbps;
  case 5: return c->nvlink5_link_gbps;
  default: return 0;
  }
}

/* One driver GPU as the reader sees it. */
struct nv_gpu {
  struct gr_gpu_static st;
  int pci;      /* its node in the topology, -1 not there */
  bool read;    /* its links were read */
  unsigned nlinks;
  struct gr_gpu_link links[GR_GPU_LINK_MAX];
};

struct nv_read {
  struct gr_gpus g;
  struct nv_gpu *gpus;
  unsigned nlost;  /* GPUs that did not answer */
  char lost[256];  /* the first one's error */
};

/* Whether t has a GPU of a vendor gpurig has a backend for. */
static bool topo_has_vendor_gpu(const struct gr_topo *t)
{
  for (size_t k = 0; k < t->ngpus; k++)
    for (size_t i = 0; gr_vendors[i]; i++)
      if (gr_vendors[i]->gpu && t->pci[t->gpus[k]].vendor == gr_vendors[i]->gpu->pci_vendor)
        return true;
  return false;
}

/* The node at bus id "0000:c4:00.0" (any function, not a host bridge), -1. */
static int pci_by_busid(const struct gr_topo *t, const char *busid)
{
  char b[32];
  for (size_t i = 0; i < t->npci; i++)
    if (t->pci[i].role != GR_ROLE_HOSTBRIDGE && strcmp(gr_pci_busid(&t->pci[i], b, sizeof(b)), busid) == 0)
      return (int)i;
  return -1;
}

static void note_lost(struct nv_read *r, const char *why)
{
  if (r->nlost++ == 0)
    snprintf(r->lost, sizeof(r->lost), "%s", why);
}

/* Each GPU's identity and links, joined to t by bus id. */
static void read_driver(struct nv_read *r, const struct gr_topo *t)
{
  const struct gr_gpu_backend *be = r->g.be;
  r->gpus = xcalloc(r->g.count ? r->g.count : 1, sizeof(*r->gpus));
  for (unsigned i = 0; i < r->g.count; i++) {
    struct nv_gpu *d = &r->gpus[i];
    d->pci = -1;
    if (be->static_info(r->g.state, i, &d->st) != 0) {
      note_lost(r, be->last_error(r->g.state));
      continue;
    }
    int k = gr_topo_gpu_by_busid(t, d->st.busid);
    d->pci = k >= 0 ? t->gpus[k] : -1;
    if (be->gpulinks(r->g.state, i, d->links, GR_GPU_LINK_MAX, &d->nlinks) == 0)
      d->read = true;
    else
      note_lost(r, be->last_error(r->g.state));
  }
}

/* A gathered tree is this machine when the driver's GPUs are the tree's:
 * the same count, each at its bus id with the same PCI ids. */
static bool tree_is_this_machine(const struct gr_topo *t, const struct nv_read *r, char *why, size_t cap)
{
  if (r->g.count != t->ngpus) {
    snprintf(why, cap, "the driver sees %u GPU%s, the tree has %zu", r->g.count, r->g.count == 1 ? "" : "s",
             t->ngpus);
    return false;
  }
  for (unsigned i = 0; i < r->g.count; i++) {
    const struct nv_gpu *d = &r->gpus[i];
    if (d->pci < 0) {
      snprintf(why, cap, "the driver's GPU%u (%s) is not in the tree", i, d->st.busid[0] ? d->st.busid : "no bus id");
      return false;
    }
    const struct gr_pci *p = &t->pci[d->pci];
    /* ids the driver no longer reads (a GPU off the bus) contradict nothing */
    if ((d->st.vendor && p->vendor != d->st.vendor) || (d->st.device && p->device != d->st.device)) {
      snprintf(why, cap, "%s is %04x:%04x to the driver and %04x:%04x in the tree", d->st.busid, d->st.vendor,
               d->st.device, p->vendor, p->device);
      return false;
    }
  }
  return true;
}

/* What the links of the topology's GPUs add up to, per GPU (index among
 * t's GPUs) and per pair. */
struct nv_join {
  size_t n;
  int *pair;      /* n x n: links from GPU a that end at GPU b */
  int *nvswitch;  /* links into NVSwitches */
  int *cpu;       /* links to a CPU */
  int *cpu_pkg;   /* its package */
  int *gen;       /* highest NVLink generation of its links, 0 unknown */
  double *gbps;   /* highest GB/s per link and direction the driver states (ROCm SMI), 0 unknown */
  char (*switches)[32];
  size_t nswitches; /* distinct switch bus ids */
  unsigned unplaced; /* active links whose far end is unknown or not in t */
};

static void note_switch(struct nv_join *j, const char *busid)
{
  if (!busid[0])
    return;
  for (size_t i = 0; i < j->nswitches; i++)
    if (strcmp(j->switches[i], busid) == 0)
      return;
  j->switches = xrealloc(j->switches, (j->nswitches + 1) * sizeof(*j->switches));
  snprintf(j->switches[j->nswitches++], sizeof(*j->switches), "%s", busid);
}

/* Counts one active link of GPU ga (pci node self). The topology's node at
 * the far end settles a kind the driver left unknown. */
static void join_link(const struct gr_topo *t, int self, const struct gr_gpu_link *k, struct nv_join *j)
{
  int ga = t->pci[self].gpu_index;
  int far = k->remote_busid[0] ? pci_by_busid(t, k->remote_busid) : -1;
  enum gr_gpulink_peer kind = k->remote;
  if (kind == GR_NVPEER_UNKNOWN && far >= 0)
    kind = t->pci[far].gpu_index >= 0 ? GR_NVPEER_GPU
           : t->pci[far].kind == GR_KIND_NVSWITCH ? GR_NVPEER_NVSWITCH : GR_NVPEER_UNKNOWN;
  if (k->gen.ok && (int)k->gen.v > j->gen[ga])
    j->gen[ga] = (int)k->gen.v;
  if (k->gbps.ok && k->gbps.v > j->gbps[ga])
    j->gbps[ga] = k->gbps.v;
  switch (kind) {
  case GR_NVPEER_GPU:
    if (far >= 0 && far != self && t->pci[far].gpu_index >= 0)
      j->pair[(size_t)ga * j->n + (size_t)t->pci[far].gpu_index]++;
    else
      j->unplaced++; /* a GPU this topology does not show */
    break;
  case GR_NVPEER_NVSWITCH:
    j->nvswitch[ga]++;
    note_switch(j, k->remote_busid);
    break;
  case GR_NVPEER_CPU:
    j->cpu[ga]++;
    j->cpu_pkg[ga] = far >= 0 && t->pci[far].package >= 0 ? t->pci[far].package : t->pci[self].package;
    break;
  case GR_NVPEER_UNKNOWN:
    j->unplaced++;
    break;
  }
}

/* GB/s per link per direction for topology GPU g: its catalog row, else
 * what the driver states for its links (ROCm SMI's xGMI bandwidth), else
 * its links' NVLink generation; 0 unknown. */
static double gpu_link_gbps(const struct gr_topo *t, const struct nv_join *j, size_t g)
{
  const struct gr_gpu_model *m = gr_pci_catalog(&t->pci[t->gpus[g]]);
  if (m && (strcmp(m->link, "nvlink") == 0 || strcmp(m->link, "xgmi") == 0) && m->links > 0 && m->link_gbps > 0)
    return m->link_gbps / m->links;
  if (j->gbps[g] > 0)
    return j->gbps[g];
  return nvlink_gen_gbps(j->gen[g]);
}

/* Links whose rate is unknown are left out, with a warning naming a GPU. */
static bool rate_known(struct gr_topo *t, size_t g, double gbps, int *warned)
{
  if (gbps > 0)
    return true;
  if ((*warned)++ == 0)
    gr_topo_add_warning(t, "NVLink of GPU%zu left out: its rate is unknown (the GPU is not in data/gpus.tsv and "
                           "the driver reports no NVLink generation gpurig has a figure for)", g);
  return false;
}

static void add_direct(struct gr_topo *t, const struct nv_join *j, int *warned)
{
  for (size_t a = 0; a < j->n; a++) {
    for (size_t b = a + 1; b < j->n; b++) {
      /* each link is seen from both ends: count it once (the larger count, in case one end did not answer) */
      int ab = j->pair[a * j->n + b], ba = j->pair[b * j->n + a], c = ab > ba ? ab : ba;
      double ra = gpu_link_gbps(t, j, a), rb = gpu_link_gbps(t, j, b), r = ra < rb ? ra : rb;
      if (c > 0 && rate_known(t, a, r, warned))
        gr_topo_add_gpulink(t, t->gpus[a], t->gpus[b], -1, c, c * r);
    }
    double r = gpu_link_gbps(t, j, a);
    if (j->cpu[a] > 0 && rate_known(t, a, r, warned))
      gr_topo_add_gpulink(t, t->gpus[a], -1, j->cpu_pkg[a], j->cpu[a], j->cpu[a] * r);
  }
}

static void add_fabric(struct gr_topo *t, const struct nv_join *j, int *warned)
{
  struct gr_fabric *f = NULL;
  int gen = 0;
  for (size_t g = 0; g < j->n; g++)
    if (j->nvswitch[g] > 0 && j->gen[g] > gen)
      gen = j->gen[g];
  for (size_t g = 0; g < j->n; g++) {
    double r = gpu_link_gbps(t, j, g);
    if (j->nvswitch[g] == 0 || !rate_known(t, g, r, warned))
      continue;
    if (!f) {
      const struct gr_gpu_model *m = gr_pci_catalog(&t->pci[t->gpus[g]]);
      f = gr_topo_add_fabric(t, GR_FABRIC_NVML, gen ? gen : m ? m->link_gen : 0, (int)j->nswitches, NULL);
    }
    gr_fabric_add_links(f, t->gpus[g], j->nvswitch[g], j->nvswitch[g] * r);
  }
}

static void join_links(struct gr_topo *t, const struct nv_read *r)
{
  struct nv_join j = {.n = t->ngpus};
  int warned = 0;
  size_t n = j.n ? j.n : 1;
  j.pair = xcalloc(n * n, sizeof(*j.pair));
  j.nvswitch = xcalloc(n, sizeof(int));
  j.cpu = xcalloc(n, sizeof(int));
  j.cpu_pkg = xcalloc(n, sizeof(int));
  j.gen = xcalloc(n, sizeof(int));
  j.gbps = xcalloc(n, sizeof(double));
  for (unsigned i = 0; i < r->g.count; i++) {
    const struct nv_gpu *d = &r->gpus[i];
    for (unsigned l = 0; d->read && d->pci >= 0 && l < d->nlinks; l++)
      if (d->links[l].active.ok && d->links[l].active.v)
        join_link(t, d->pci, &d->links[l], &j);
  }
  add_direct(t, &j, &warned);
  add_fabric(t, &j, &warned);
  if (j.unplaced)
    gr_topo_add_warning(t, "%u active NVLink%s left out: the %s does not say where %s, or it is no device of this "
                           "topology", j.unplaced, j.unplaced == 1 ? "" : "s", r->g.be->driver_name,
                        j.unplaced == 1 ? "it leads" : "they lead");
  free(j.pair);
  free(j.nvswitch);
  free(j.cpu);
  free(j.cpu_pkg);
  free(j.gen);
  free(j.gbps);
  free(j.switches);
}

void gr_gpus_read_gpulinks(struct gr_topo *t)
{
  struct nv_read r = {0};
  struct gr_err err = {0};
  char why[256];
  bool tree = t->source_kind && strcmp(t->source_kind, "root") == 0;
  if (t->ngpulinks || t->nfabrics)
    return; /* the loader recorded NVLink already (an hwloc built with its NVML component) */
  if (gr_gpus_open(&r.g, &err) != 0) {
    /* a tree examined elsewhere needs no driver; this machine with GPUs does */
    if (!tree && topo_has_vendor_gpu(t))
      gr_topo_add_warning(t, "NVLink not read from the GPU driver, so GPU pairs show PCIe paths only: %s", err.msg);
    return;
  }
  if (!r.g.be->gpulinks)
    goto out;
  read_driver(&r, t);
  if (tree && !tree_is_this_machine(t, &r, why, sizeof(why))) {
    if (r.g.count)
      gr_topo_add_warning(t, "%s not read from the %s: its GPUs are another machine's, not this tree's (%s)",
                          r.g.be->gpulink_name, r.g.be->driver_name, why);
    goto out;
  }
  if (!tree && r.g.count == 0 && topo_has_vendor_gpu(t))
    gr_topo_add_warning(t, "%s not read: the %s (%s) sees no GPU", r.g.be->gpulink_name, r.g.be->driver_name,
                        r.g.be->library);
  if (r.nlost)
    gr_topo_add_warning(t, "%s of %u GPU%s not read from the %s: %s", r.g.be->gpulink_name, r.nlost,
                        r.nlost == 1 ? "" : "s", r.g.be->driver_name, r.lost);
  join_links(t, &r);
out:
  free(r.gpus);
  gr_gpus_close(&r.g);
}

const char *gr_throttle_word(unsigned bit)
{
  static const char *const words[GR_THR_NBITS] = {
      "idle", "app clocks", "power cap", "hw slowdown", "sync boost",
      "thermal (driver)", "thermal (hw)", "power brake", "display clock",
  };
  return bit < GR_THR_NBITS ? words[bit] : NULL;
}

const char *gr_compute_mode_name(unsigned mode)
{
  static const char *const names[] = {"Default", "Exclusive_Thread", "Prohibited", "Exclusive_Process"};
  return mode < sizeof(names) / sizeof(names[0]) ? names[mode] : NULL;
}
