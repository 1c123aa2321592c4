/* The sampler: a ring of samples, one reader thread per GPU, deltas and
 * events; see sampler.h. */
#include "monitor/sampler.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "base/fs.h"
#include "base/file.h"
#include "doctor/dmi.h"
#include "doctor/doctor.h"
#include "doctor/kmsg.h"
#include "load/loaders.h"
#include "model/names.h"
#include "monitor/logtail.h"

enum { EVENT_RING = 256 };

/* One GPU's reader thread. Its fields are guarded by the crew's mutex. */
struct worker {
  struct crew *crew;
  unsigned gpu;
  pthread_t th;
  bool started;
  pthread_cond_t go;
  bool request; /* a read is asked for */
  bool busy;    /* a read is asked for or under way */
  bool done;    /* a read finished and was not yet taken */
  int rc;
  struct gr_gpu_dynamic out;
  char err[160];
  double answered_mono; /* when its last answer came, 0 never */
};

/* The reader threads and what they share. Heap-allocated on its own: when a
 * thread is stuck in a driver call at close, the crew is left to it. */
struct crew {
  pthread_mutex_t m;
  pthread_cond_t done;
  bool quit;
  const struct gr_gpus *g;
  unsigned n;
  struct worker *w;
};


struct gr_sampler {
  const struct gr_machine *m;
  const struct gr_gpus *g;
  pthread_mutex_t lock;
  double timeout_s;
  double quiet_s;            /* a rising counter's events: one per this many seconds */
  bool *watch_node;          /* npci: the nodes whose files are read */
  int *node_dir;             /* npci: their sysfs directories, opened once (-1 none) */
  struct gr_mon_link *links;
  size_t nlinks;
  int *gpu_topo;             /* backend GPU -> topology GPU, -1 */
  int *gpu_link;             /* backend GPU -> link right above it, -1 */
  char (*gpu_name)[64];      /* "GPU2 0000:41:00.0" */
  struct gr_gpu_static *gpu_static;
  unsigned ngpu;
  struct crew *crew;
  struct gr_sample *ring, first, scratch;
  unsigned cap, count, head; /* head: the newest */
  unsigned long steps;
  struct gr_mon_event *ev;   /* EVENT_RING */
  unsigned long nev;
  struct gr_gpu_event gev[64];
  bool driver_events;
  struct gr_tail kmsg;       /* the kernel log followed for Xids (when the driver gives no events) */
  char xid_source[160];
  /* A counter that keeps rising is one event a minute, not one a sample:
   * when its last event was, and the count then. */
  struct quiet { bool seen; double mono, value; } *replay_quiet, *aer_quiet; /* ngpu; nlinks x 2 ends x 3 */
  struct gr_findings firsts; /* the first event of each severity */
  int *last_xid;             /* ngpu: the last Xid each GPU reported, 0 none */
  bool *below_max;           /* ngpu: its link was found below its maximum under load (the event made) */
};


/* Whether a counter's count now deserves an event: it rose past what the
 * last event reported (or the first sample) and no event for it came in
 * the last minute. A rise inside the quiet minute is reported when the
 * minute is over, whether or not it rose again. *from is where the event's
 * count starts. A counter that went down was reset: it starts again. */
static bool loud(struct quiet *q, double quiet_s, double mono, double now_value, double *from)
{
  if (!q->seen || now_value < q->value) {
    q->seen = true;
    q->value = now_value;
    return false;
  }
  if (now_value <= q->value || (q->mono > 0 && mono - q->mono < quiet_s))
    return false;
  *from = q->value;
  q->mono = mono;
  q->value = now_value;
  return true;
}

/* ------------------------------------------------------------ the links */

/* The physical slot holding the device at (domain, bus, dev), from
 * /sys/bus/pci/slots/<name>/address ("0000:02:00"); "" unknown. */
static void slot_of(const struct gr_fs *fs, const struct gr_pci *p, char *out, size_t cap)
{
  out[0] = '\0';
  DIR *d = gr_fs_opendir(fs, "/sys/bus/pci/slots");
  if (!d)
    return;
  char want[32];
  snprintf(want, sizeof(want), "%04x:%02x:%02x", p->domain, p->bus, p->dev);
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    char path[512], addr[64];
    if (e->d_name[0] == '.')
      continue;
    snprintf(path, sizeof(path), "/sys/bus/pci/slots/%s/address", e->d_name);
    if (gr_fs_read_str(fs, path, addr, sizeof(addr)) == 0 && strcasecmp(addr, want) == 0) {
      str_copy(out, cap, e->d_name);
      break;
    }
  }
  closedir(d);
}

/* The board's slot names from SMBIOS (type 9, System Slots), read once:
 * /sys/firmware/dmi/tables/DMI is readable by root only, so without root
 * only the kernel's /sys/bus/pci/slots names are known. */
static void smbios_slots(const struct gr_fs *fs, struct gr_dmi_slots *out)
{
  char path[8192];
  struct gr_file f;
  struct gr_err err = {0};
  memset(out, 0, sizeof(*out));
  if (!gr_fs_path(fs, "/sys/firmware/dmi/tables/DMI", path, sizeof(path)) ||
      access(path, R_OK) != 0 || gr_file_read(path, 16u << 20, 0, &f, &err) != 0)
    return;
  if (gr_dmi_parse_slots(path, (const unsigned char *)f.data, f.len, out, &err) != 0)
    memset(out, 0, sizeof(*out)); /* a broken table names no slot; doctor reports it */
  gr_file_free(&f);
}

/* The slot a link's lower end sits in: the kernel's name, else the SMBIOS
 * designation of the device in the slot, or of the port above it (boards
 * differ in which of the two their type-9 records name). */
static void slot_name(const struct gr_sampler *s, const struct gr_dmi_slots *dmi, struct gr_mon_link *l)
{
  const struct gr_pci *dev = &s->m->topo.pci[l->dev], *port = &s->m->topo.pci[l->port];
  slot_of(&s->m->fs, dev, l->slot, sizeof(l->slot));
  const char *d = l->slot[0] ? NULL : gr_dmi_slot_of(dmi, (int)dev->domain, (int)dev->bus, (int)dev->dev);
  if (!d && !l->slot[0] && port->role == GR_ROLE_ROOTPORT)
    d = gr_dmi_slot_of(dmi, (int)port->domain, (int)port->bus, (int)port->dev);
  if (d)
    str_copy(l->slot, sizeof(l->slot), d);
}

static int link_of_dev(const struct gr_sampler *s, int dev)
{
  for (size_t i = 0; i < s->nlinks; i++)
    if (s->links[i].dev == dev)
      return (int)i;
  return -1;
}

/* Every link from each GPU up to its root port, each once. */
static void find_links(struct gr_sampler *s)
{
  const struct gr_topo *t = &s->m->topo;
  struct gr_dmi_slots dmi = {0};
  s->watch_node = xcalloc(t->npci + 1, sizeof(*s->watch_node));
  s->links = xcalloc(t->npci + 1, sizeof(*s->links));
  if (s->m->has_fs)
    smbios_slots(&s->m->fs, &dmi);
  for (size_t k = 0; k < t->ngpus; k++) {
    int dev = t->gpus[k];
    while (dev >= 0 && t->pci[dev].parent >= 0 && t->pci[t->pci[dev].parent].role != GR_ROLE_HOSTBRIDGE) {
      int port = t->pci[dev].parent;
      if (link_of_dev(s, dev) < 0) {
        struct gr_mon_link *l = &s->links[s->nlinks++];
        l->dev = dev;
        l->port = port;
        l->gpu = (int)k;
        gr_pci_subject(t, dev, l->dev_name, sizeof(l->dev_name));
        gr_pci_subject(t, port, l->port_name, sizeof(l->port_name));
        if (s->m->has_fs)
          slot_name(s, &dmi, l);
        s->watch_node[dev] = s->watch_node[port] = true;
      }
      dev = port;
    }
  }
  gr_dmi_slots_free(&dmi);
}

/* ------------------------------------------------------------ the GPUs */

static void *worker_main(void *arg)
{
  struct worker *w = arg;
  struct crew *c = w->crew;
  pthread_mutex_lock(&c->m);
  for (;;) {
    while (!w->request && !c->quit)
      pthread_cond_wait(&w->go, &c->m);
    if (c->quit)
      break;
    w->request = false;
    pthread_mutex_unlock(&c->m);
    struct gr_gpu_dynamic dy;
    char err[160] = "";
    int rc = c->g->be->dynamic_info(c->g->state, w->gpu, &dy);
    if (rc != 0)
      snprintf(err, sizeof(err), "%s", c->g->be->last_error(c->g->state));
    pthread_mutex_lock(&c->m);
    w->out = dy;
    w->rc = rc;
    memcpy(w->err, err, sizeof(err));
    w->busy = false;
    w->done = true;
    w->answered_mono = gr_clock_s(CLOCK_MONOTONIC);
    pthread_cond_broadcast(&c->done);
  }
  pthread_mutex_unlock(&c->m);
  return NULL;
}

static int crew_start(struct gr_sampler *s, struct gr_err *err)
{
  struct crew *c = xcalloc(1, sizeof(*c));
  pthread_condattr_t ca;
  s->crew = c;
  c->g = s->g;
  c->n = s->ngpu;
  c->w = xcalloc(s->ngpu + 1, sizeof(*c->w));
  pthread_mutex_init(&c->m, NULL);
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* a deadline that wall-clock changes cannot move */
  pthread_cond_init(&c->done, &ca);
  for (unsigned i = 0; i < c->n; i++) {
    struct worker *w = &c->w[i];
    w->crew = c;
    w->gpu = i;
    pthread_cond_init(&w->go, NULL);
    int e = pthread_create(&w->th, NULL, worker_main, w);
    if (e != 0) {
      pthread_condattr_destroy(&ca);
      return gr_fail(err, GR_EXIT_CANNOT_RUN, "cannot start a reader thread for GPU%u: %s", i, strerror(e));
    }
    w->started = true;
  }
  pthread_condattr_destroy(&ca);
  return 0;
}

/* Stops the threads; false when one is stuck in the driver (then the crew
 * is left to it, never freed). */
static bool crew_stop(struct crew *c)
{
  if (!c)
    return true;
  bool stuck = false;
  pthread_mutex_lock(&c->m);
  c->quit = true;
  for (unsigned i = 0; i < c->n; i++) {
    pthread_cond_signal(&c->w[i].go);
    stuck |= c->w[i].started && c->w[i].busy && !c->w[i].request;
  }
  pthread_mutex_unlock(&c->m);
  if (stuck) {
    for (unsigned i = 0; i < c->n; i++)
      if (c->w[i].started)
        pthread_detach(c->w[i].th);
    return false;
  }
  for (unsigned i = 0; i < c->n; i++)
    if (c->w[i].started)
      pthread_join(c->w[i].th, NULL);
  for (unsigned i = 0; i < c->n; i++)
    pthread_cond_destroy(&c->w[i].go);
  pthread_cond_destroy(&c->done);
  pthread_mutex_destroy(&c->m);
  free(c->w);
  free(c);
  return true;
}

static struct timespec deadline_after(double s)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  double ns = (double)ts.tv_nsec + s * 1e9;
  ts.tv_sec += (time_t)(ns / 1e9);
  ts.tv_nsec = (long)(ns - (double)(time_t)(ns / 1e9) * 1e9);
  return ts;
}

static bool any_busy(const struct crew *c)
{
  for (unsigned i = 0; i < c->n; i++)
    if (c->w[i].busy)
      return true;
  return false;
}

/* Asks every idle GPU for its values, waits up to the time limit, and
 * fills s->scratch: fresh, lost, or stale (the newest values kept). */
static void read_gpus(struct gr_sampler *s)
{
  struct crew *c = s->crew;
  const struct gr_sample *prev = s->count ? &s->ring[s->head] : NULL;
  pthread_mutex_lock(&c->m);
  /* a GPU whose late answer came in since the last step gives that answer
   * now; the others are asked again */
  for (unsigned i = 0; i < c->n; i++)
    if (!c->w[i].busy && !c->w[i].done) {
      c->w[i].busy = c->w[i].request = true;
      pthread_cond_signal(&c->w[i].go);
    }
  struct timespec until = deadline_after(s->timeout_s);
  while (any_busy(c) && pthread_cond_timedwait(&c->done, &c->m, &until) != ETIMEDOUT)
    ;
  double now = gr_clock_s(CLOCK_MONOTONIC);
  for (unsigned i = 0; i < c->n; i++) {
    struct worker *w = &c->w[i];
    struct gr_sample *x = &s->scratch;
    x->gpu_error[i][0] = '\0';
    if (w->done) {
      w->done = false;
      x->gpu[i] = w->out;
      x->gpu_read[i] = w->rc == 0 ? GR_READ_FRESH : GR_READ_LOST;
      x->gpu_age_s[i] = now - w->answered_mono;
      if (w->rc != 0) {
        memset(&x->gpu[i], 0, sizeof(x->gpu[i])); /* a lost GPU's values are unknown, never 0 */
        snprintf(x->gpu_error[i], sizeof(x->gpu_error[i]), "%s", w->err);
      }
      continue;
    }
    /* no answer in time: keep what it last said, marked stale */
    if (prev && prev->gpu_read[i] != GR_READ_LOST)
      x->gpu[i] = prev->gpu[i];
    else
      memset(&x->gpu[i], 0, sizeof(x->gpu[i]));
    x->gpu_read[i] = GR_READ_STALE;
    x->gpu_age_s[i] = w->answered_mono > 0 ? now - w->answered_mono : now - s->scratch.mono_s;
    snprintf(x->gpu_error[i], sizeof(x->gpu_error[i]), "no answer from the driver in %.0f ms", s->timeout_s * 1e3);
  }
  pthread_mutex_unlock(&c->m);
}

/* ------------------------------------------------------------ events */

static struct gr_mon_event *add_event(struct gr_sampler *s, enum gr_mon_event_kind kind, enum gr_sev sev, int gpu,
                                      int link, const char *fmt, ...) __attribute__((format(printf, 6, 7)));
static struct gr_mon_event *add_event(struct gr_sampler *s, enum gr_mon_event_kind kind, enum gr_sev sev, int gpu,
                                      int link, const char *fmt, ...)
{
  static const char *const ids[] = {
      [GR_EV_AER] = "monitor.aer",         [GR_EV_WIDTH] = "monitor.link-change", [GR_EV_GPU_LOST] = "monitor.gpu-lost",
      [GR_EV_GPU_STALE] = "monitor.gpu-stale", [GR_EV_GPU_BACK] = "monitor.gpu-back", [GR_EV_XID] = "monitor.xid",
      [GR_EV_REPLAY] = "monitor.pcie-replay", [GR_EV_ECC] = "monitor.ecc",      [GR_EV_GPULINK] = "monitor.nvlink",
      [GR_EV_LOG] = "monitor.kmsg-rotated", [GR_EV_SLOW_LINK] = "monitor.link-below-max"};
  struct gr_mon_event *e = &s->ev[s->nev++ % EVENT_RING];
  gr_finding_release(&e->f); /* the event the ring drops */
  memset(e, 0, sizeof(*e));
  e->real_s = s->ring[s->head].real_s;
  e->mono_s = s->ring[s->head].mono_s;
  e->kind = kind;
  e->gpu = gpu;
  e->link = link;
  char text[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof(text), fmt, ap);
  va_end(ap);
  const char *who = gpu >= 0 ? s->gpu_name[gpu] : link >= 0 ? s->links[link].dev_name : NULL;
  e->f.sev = sev;
  snprintf(e->f.id, sizeof(e->f.id), "%s", ids[kind]);
  e->f.node = link >= 0 ? s->links[link].dev : -1;
  e->f.subject = who ? xstrdup(who) : NULL;
  e->f.text = xstrdup(text);
  if (!s->firsts.count[sev]) /* the first of its severity, kept when the ring drops it */
    gr_finding_subject(gr_finding_add(&s->firsts, sev, ids[kind], "%s", text), e->f.node, who, NULL);
  return e;
}

static const struct gr_count *aer_of(const struct gr_pci_dynamic *d, int sev)
{
  return sev == 0 ? &d->aer.correctable : sev == 1 ? &d->aer.nonfatal : &d->aer.fatal;
}

/* Whether the GPU below link i is busy in sample x (half its time or more):
 * a busy GPU's link should run at its top speed, an idle one lowers it. */
static bool busy_below(const struct gr_sampler *s, size_t i, const struct gr_sample *x)
{
  for (unsigned g = 0; g < s->ngpu; g++)
    if (s->gpu_topo[g] == s->links[i].gpu)
      return x->gpu_read[g] == GR_READ_FRESH && x->gpu[g].util_gpu_pct.ok && x->gpu[g].util_gpu_pct.v >= 50;
  return false;
}

/* A link's generation changes at idle by design (ASPM, the GPU's power
 * states); it is an event when it changes while the GPU below is busy:
 * below its top speed under load is downtraining. */
static void gen_event(struct gr_sampler *s, size_t i, const struct gr_sample *prev, const struct gr_sample *cur,
                      const char *slot)
{
  const struct gr_mon_link *l = &s->links[i];
  int g0 = prev ? prev->pci[l->dev].cur_gen : 0, g1 = cur->pci[l->dev].cur_gen, max_gen, max_width;
  if (g0 <= 0 || g1 <= 0 || g0 == g1 || !busy_below(s, i, cur))
    return;
  gr_mon_link_max(s, i, &max_gen, &max_width);
  struct gr_mon_event *e =
      add_event(s, GR_EV_WIDTH, g1 < max_gen ? GR_SEV_WARN : GR_SEV_INFO, -1, (int)i,
                "the link %s <-> %s%s changed speed under load: Gen%d -> Gen%d (Gen%d at most)", l->dev_name,
                l->port_name, slot, g0, g1, max_gen);
  e->code = g1;
}

static void link_events(struct gr_sampler *s, const struct gr_sample *prev, const struct gr_sample *cur)
{
  static const char *const sev_word[] = {"correctable", "non-fatal", "fatal"};
  for (size_t i = 0; i < s->nlinks; i++) {
    const struct gr_mon_link *l = &s->links[i];
    char slot[48] = "";
    if (l->slot[0])
      snprintf(slot, sizeof(slot), ", slot %s", l->slot);
    for (int end = 0; end < 2; end++) {
      int node = end == 0 ? l->dev : l->port;
      for (int k = 0; k < 3; k++) {
        const struct gr_count *b = aer_of(&cur->pci[node], k);
        double from;
        if (!b->valid || !loud(&s->aer_quiet[(i * 2 + (size_t)end) * 3 + (size_t)k], s->quiet_s, cur->mono_s,
                               (double)b->value, &from))
          continue;
        unsigned long long n = b->value - (unsigned long long)from;
        add_event(s, GR_EV_AER, k == 0 ? GR_SEV_WARN : GR_SEV_FAIL, -1, (int)i,
                  "%llu %s AER error%s at %s, on the link %s <-> %s%s", n, sev_word[k], n == 1 ? "" : "s",
                  end == 0 ? l->dev_name : l->port_name, l->dev_name, l->port_name, slot);
      }
    }
    int w0 = prev ? prev->pci[l->dev].cur_width : 0, w1 = cur->pci[l->dev].cur_width;
    if (w0 > 0 && w1 > 0 && w0 != w1) {
      int max_gen, max;
      gr_mon_link_max(s, i, &max_gen, &max);
      struct gr_mon_event *e =
          add_event(s, GR_EV_WIDTH, w1 < max ? GR_SEV_WARN : GR_SEV_INFO, -1, (int)i,
                    "the link %s <-> %s%s changed width: x%d -> x%d (x%d at most)", l->dev_name, l->port_name, slot,
                    w0, w1, max);
      e->code = w1;
    }
    gen_event(s, i, prev, cur, slot);
  }
}

static bool rose(struct gr_metric a, struct gr_metric b)
{
  return a.ok && b.ok && b.v > a.v;
}

/* What GPU i's link can train to: the lower of the GPU's maxima and those
 * of the link above it (a Gen3 slot or an x8 riser is a design limit, not
 * a fault); its generation and width now, from the driver, else from the
 * link's files. 0 where unknown. */
static void gpu_link_now(const struct gr_sampler *s, unsigned i, const struct gr_sample *x, int now[2], int max[2])
{
  const struct gr_gpu_dynamic *d = &x->gpu[i];
  const struct gr_gpu_static *st = &s->gpu_static[i];
  now[0] = d->link_gen.ok ? (int)d->link_gen.v : 0;
  now[1] = d->link_width.ok ? (int)d->link_width.v : 0;
  max[0] = st->max_link_gen.ok ? (int)st->max_link_gen.v : 0;
  max[1] = st->max_link_width.ok ? (int)st->max_link_width.v : 0;
  int l = s->gpu_link[i], lmax[2];
  if (l < 0)
    return;
  gr_mon_link_max(s, (size_t)l, &lmax[0], &lmax[1]);
  const struct gr_pci_dynamic *p = &x->pci[s->links[l].dev];
  int files[2] = {p->cur_gen, p->cur_width};
  for (int k = 0; k < 2; k++) {
    if (lmax[k] > 0 && (max[k] <= 0 || lmax[k] < max[k]))
      max[k] = lmax[k];
    if (now[k] <= 0)
      now[k] = files[k];
  }
}

bool gr_sampler_gpu_below_max(const struct gr_sampler *s, unsigned i, char *why, size_t cap)
{
  const struct gr_sample *x = gr_sampler_sample(s, 0);
  if (!x || i >= s->ngpu || x->gpu_read[i] != GR_READ_FRESH || !x->gpu[i].util_gpu_pct.ok ||
      x->gpu[i].util_gpu_pct.v < 50)
    return false;
  int now[2], max[2];
  gpu_link_now(s, i, x, now, max);
  bool gen = now[0] > 0 && max[0] > 0 && now[0] < max[0], width = now[1] > 0 && max[1] > 0 && now[1] < max[1];
  if ((gen || width) && why)
    snprintf(why, cap, "Gen%d of Gen%d, x%d of x%d", now[0], max[0], now[1], max[1]);
  return gen || width;
}

/* Under load, a link below its maximum is a warning whatever it was
 * before: a GPU that started watched at Gen1 has no change to report, yet
 * runs at a fraction of its bandwidth. One event when a GPU enters that
 * state; info when its busy link is back at its maximum. */
static void below_max_event(struct gr_sampler *s, unsigned i, const struct gr_sample *cur)
{
  char why[64];
  bool below = gr_sampler_gpu_below_max(s, i, why, sizeof(why));
  int link = s->gpu_link[i];
  if (below && !s->below_max[i])
    add_event(s, GR_EV_SLOW_LINK, GR_SEV_WARN, (int)i, link,
              "%s: its PCIe link runs %s at %.0f%% utilisation: below its maximum under load (a riser, cable or slot "
              "that does not hold the speed, or a BIOS setting)",
              s->gpu_name[i], why, cur->gpu[i].util_gpu_pct.v);
  else if (!below && s->below_max[i] && cur->gpu_read[i] == GR_READ_FRESH && cur->gpu[i].util_gpu_pct.ok &&
           cur->gpu[i].util_gpu_pct.v >= 50)
    add_event(s, GR_EV_SLOW_LINK, GR_SEV_INFO, (int)i, link, "%s: its PCIe link is back at its maximum under load",
              s->gpu_name[i]);
  else
    return;
  s->below_max[i] = below;
}

/* GPU-to-GPU link errors that rose between two fresh samples: NVLink's
 * counters, or xGMI's (its links' RAS block and the driver's error state;
 * an uncorrected one is a link that lost data). */
static void gpulink_events(struct gr_sampler *s, unsigned i, const char *name, const struct gr_gpu_dynamic *a,
                           const struct gr_gpu_dynamic *b)
{
  static const char *const state[] = {"no errors", "an error", "several errors"};
  if (rose(a->gpulink_crc, b->gpulink_crc) || rose(a->gpulink_crc_data, b->gpulink_crc_data) ||
      rose(a->gpulink_replay, b->gpulink_replay) || rose(a->gpulink_recovery, b->gpulink_recovery))
    add_event(s, GR_EV_GPULINK, GR_SEV_WARN, (int)i, -1,
              "%s: NVLink errors rose (CRC flit %.0f, CRC data %.0f, replay %.0f, recovery %.0f in all)", name,
              b->gpulink_crc.ok ? b->gpulink_crc.v : 0, b->gpulink_crc_data.ok ? b->gpulink_crc_data.v : 0,
              b->gpulink_replay.ok ? b->gpulink_replay.v : 0, b->gpulink_recovery.ok ? b->gpulink_recovery.v : 0);
  bool lost = rose(a->gpulink_uncorrected, b->gpulink_uncorrected);
  if (lost || rose(a->gpulink_corrected, b->gpulink_corrected) || rose(a->gpulink_error_state, b->gpulink_error_state))
    add_event(s, GR_EV_GPULINK, lost ? GR_SEV_FAIL : GR_SEV_WARN, (int)i, -1,
              "%s: xGMI errors rose (corrected %.0f, uncorrected %.0f in all; the driver's error state: %s)", name,
              b->gpulink_corrected.ok ? b->gpulink_corrected.v : 0,
              b->gpulink_uncorrected.ok ? b->gpulink_uncorrected.v : 0,
              b->gpulink_error_state.ok && b->gpulink_error_state.v >= 0 && b->gpulink_error_state.v <= 2
                  ? state[(int)b->gpulink_error_state.v]
                  : "not reported");
}

static void gpu_events(struct gr_sampler *s, const struct gr_sample *prev, const struct gr_sample *cur)
{
  for (unsigned i = 0; i < s->ngpu; i++) {
    const char *name = s->gpu_name[i];
    enum gr_gpu_read was = prev ? prev->gpu_read[i] : GR_READ_FRESH, now = cur->gpu_read[i];
    if (now != was && now == GR_READ_LOST)
      add_event(s, GR_EV_GPU_LOST, GR_SEV_FAIL, (int)i, gr_sampler_gpu_link(s, i), "%s is lost: %s", name,
                cur->gpu_error[i]);
    else if (now != was && now == GR_READ_STALE)
      add_event(s, GR_EV_GPU_STALE, GR_SEV_WARN, (int)i, -1, "%s did not answer: %s", name, cur->gpu_error[i]);
    else if (now != was && now == GR_READ_FRESH)
      add_event(s, GR_EV_GPU_BACK, GR_SEV_INFO, (int)i, -1, "%s answers again", name);
    const struct gr_gpu_dynamic *b = &cur->gpu[i];
    double from;
    if (now == GR_READ_FRESH && b->pcie_replay.ok && loud(&s->replay_quiet[i], s->quiet_s, cur->mono_s, b->pcie_replay.v, &from))
      add_event(s, GR_EV_REPLAY, GR_SEV_WARN, (int)i, gr_sampler_gpu_link(s, i),
                "%s: %.0f PCIe replay%s (the link retried packets; the next report in a minute at most)", name,
                b->pcie_replay.v - from, b->pcie_replay.v - from == 1 ? "" : "s");
    below_max_event(s, i, cur);
    if (!prev || now != GR_READ_FRESH || was != GR_READ_FRESH)
      continue;
    const struct gr_gpu_dynamic *a = &prev->gpu[i];
    if (rose(a->ecc_uncorrected, b->ecc_uncorrected) || rose(a->remap_failed, b->remap_failed))
      add_event(s, GR_EV_ECC, GR_SEV_FAIL, (int)i, -1, "%s: uncorrectable memory errors (ECC %.0f, row remap %s)",
                name, b->ecc_uncorrected.ok ? b->ecc_uncorrected.v : 0, b->remap_failed.v > 0 ? "failed" : "ok");
    gpulink_events(s, i, name, a, b);
  }
}

static void xid_event(struct gr_sampler *s, int gpu, const char *who, int xid)
{
  const char *meaning, *action;
  enum gr_sev sev;
  gr_xid_info(xid, &meaning, &sev, &action);
  struct gr_mon_event *e = add_event(s, GR_EV_XID, sev, gpu, gpu >= 0 ? gr_sampler_gpu_link(s, (unsigned)gpu) : -1,
                                     "%s: Xid %d (%s)", who, xid, meaning);
  e->code = xid;
  if (gpu >= 0)
    s->last_xid[gpu] = xid;
}

/* The backend GPU at a kernel log's (domain, bus, dev), -1 none. */
static int gpu_at(const struct gr_sampler *s, unsigned domain, unsigned bus, unsigned dev)
{
  for (unsigned i = 0; i < s->ngpu; i++) {
    int k = s->gpu_topo[i];
    const struct gr_pci *p = k >= 0 ? &s->m->topo.pci[s->m->topo.gpus[k]] : NULL;
    if (p && p->domain == domain && p->bus == bus && p->dev == dev)
      return (int)i;
  }
  return -1;
}

static void kmsg_lines(struct gr_sampler *s, const char *buf, size_t len)
{
  struct gr_xid_log log;
  gr_kmsg_parse_xids(buf, len, &log);
  for (size_t k = 0; k < log.nev; k++) {
    const struct gr_xid_event *x = &log.ev[k];
    char who[64];
    int gpu = gpu_at(s, x->domain, x->bus, x->dev);
    if (gpu >= 0)
      snprintf(who, sizeof(who), "%s", s->gpu_name[gpu]);
    else
      snprintf(who, sizeof(who), "GPU at %04x:%02x:%02x", x->domain, x->bus, x->dev);
    xid_event(s, gpu, who, x->xid);
  }
  gr_xid_log_free(&log);
}

static void kmsg_chunk(void *ctx, const char *buf, size_t len)
{
  kmsg_lines(ctx, buf, len);
}

/* A rotation of the --kmsg file is an info event: the log goes on. */
static void kmsg_rotated(void *ctx, const char *what)
{
  struct gr_sampler *s = ctx;
  char shown[256];
  add_event(s, GR_EV_LOG, GR_SEV_INFO, -1, -1, "the kernel log %s %s", gr_shown(s->kmsg.path, shown, sizeof(shown)),
            what);
}

/* New lines of the kernel log since the last step (monitor/logtail.h: a
 * --kmsg file is followed by name, as tail -F does). */
static void read_kmsg(struct gr_sampler *s)
{
  const struct gr_tail_sink sink = {kmsg_chunk, kmsg_rotated, s};
  gr_tail_read(&s->kmsg, &sink);
}

static void xid_events(struct gr_sampler *s)
{
  if (s->driver_events) {
    unsigned n = 0;
    if (s->g->be->events(s->g->state, 0, s->gev, sizeof(s->gev) / sizeof(s->gev[0]), &n) != 0)
      return;
    for (unsigned k = 0; k < n; k++)
      if (s->gev[k].gpu < s->ngpu)
        xid_event(s, (int)s->gev[k].gpu, s->gpu_name[s->gev[k].gpu], s->gev[k].code);
    return;
  }
  read_kmsg(s);
}

/* Where Xids come from: a kernel log the user named, else the driver's
 * events when it has them, else the kernel log (the tree's dev/kmsg, or
 * /dev/kmsg), read from its end: only what happens while gpurig watches. */
static int open_xid_source(struct gr_sampler *s, const char *kmsg, struct gr_err *err)
{
  unsigned n = 0;
  s->kmsg.fd = -1;
  if (!kmsg && s->ngpu && s->g->be->events && s->g->be->events(s->g->state, 0, s->gev, 0, &n) == 0) {
    s->driver_events = true;
    snprintf(s->xid_source, sizeof(s->xid_source), "driver events (%s)", s->g->be->library);
    return 0;
  }
  const char *what = kmsg ? kmsg : "/dev/kmsg";
  if (kmsg)
    s->kmsg.fd = open(kmsg, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  else if (s->m->has_fs && gr_fs_is_live(&s->m->fs))
    s->kmsg.fd = gr_fs_open_device(&s->m->fs, "/dev/kmsg", O_RDONLY | O_NONBLOCK);
  else if (s->m->has_fs)
    s->kmsg.fd = gr_fs_open(&s->m->fs, "/dev/kmsg", O_RDONLY | O_NONBLOCK);
  struct stat st;
  /* a regular file, or the kernel's log device itself (char 1:11), nothing else */
  if (s->kmsg.fd >= 0 && (fstat(s->kmsg.fd, &st) != 0 ||
                          !(S_ISREG(st.st_mode) || (S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 11))))) {
    close(s->kmsg.fd);
    s->kmsg.fd = -1;
    errno = EINVAL;
  }
  if (s->kmsg.fd < 0) {
    int e = errno;
    bool in_tree = !kmsg && s->m->has_fs && !gr_fs_is_live(&s->m->fs);
    char *why = xasprintf("none (%s%s: %s)", in_tree ? s->m->fs.root : "", what,
                          e == EACCES || e == EPERM ? "not readable, root or kernel.dmesg_restrict=0 would add it"
                          : e == EINVAL            ? "not a regular file or the kernel log device"
                                                   : strerror(e));
    str_copy(s->xid_source, sizeof(s->xid_source), why);
    free(why);
    /* a log the user named must be readable; the default one may be missing */
    return kmsg ? gr_fail(err, GR_EXIT_FAIL, "--kmsg %s: %s", kmsg,
                          e == EINVAL ? "not a regular file or the kernel log device" : strerror(e))
                : 0;
  }
  gr_tail_start(&s->kmsg, s->kmsg.fd, kmsg);
  char *where = xasprintf("kernel log %s%s", s->m->has_fs && !kmsg ? s->m->fs.root : "", what);
  str_copy(s->xid_source, sizeof(s->xid_source), where);
  free(where);
  return 0;
}

/* ------------------------------------------------------------ open, step, close */

static void join_gpus(struct gr_sampler *s)
{
  s->gpu_topo = xcalloc(s->ngpu + 1, sizeof(*s->gpu_topo));
  s->gpu_link = xcalloc(s->ngpu + 1, sizeof(*s->gpu_link));
  s->gpu_name = xcalloc(s->ngpu + 1, sizeof(*s->gpu_name));
  s->gpu_static = xcalloc(s->ngpu + 1, sizeof(*s->gpu_static));
  for (unsigned i = 0; i < s->ngpu; i++) {
    struct gr_gpu_static st;
    memset(&st, 0, sizeof(st));
    if (s->g->be->static_info(s->g->state, i, &st) != 0)
      memset(&st, 0, sizeof(st)); /* a GPU lost before we started: only its index is known */
    s->gpu_static[i] = st;
    s->gpu_topo[i] = st.busid[0] ? gr_topo_gpu_by_busid(&s->m->topo, st.busid) : -1;
    int node = s->gpu_topo[i] >= 0 ? s->m->topo.gpus[s->gpu_topo[i]] : -1;
    s->gpu_link[i] = node >= 0 ? link_of_dev(s, node) : -1;
    snprintf(s->gpu_name[i], sizeof(s->gpu_name[i]), "GPU%u%s%s", i, st.busid[0] ? " " : "", st.busid);
  }
}

int gr_sampler_open(const struct gr_machine *m, const struct gr_gpus *g, const struct gr_sampler_opts *o,
                    struct gr_sampler **out, struct gr_err *err)
{
  struct gr_sampler *s = xcalloc(1, sizeof(*s));
  *out = NULL;
  s->m = m;
  s->g = g;
  s->ngpu = g && g->be ? g->count : 0;
  s->timeout_s = o->gpu_timeout_s > 0 ? o->gpu_timeout_s : 0.5;
  s->quiet_s = o->quiet_s > 0 ? o->quiet_s : 60;
  s->cap = o->history < 3 ? 3 : o->history;
  pthread_mutex_init(&s->lock, NULL);
  find_links(s);
  join_gpus(s);
  s->node_dir = xcalloc(m->topo.npci + 1, sizeof(*s->node_dir));
  for (size_t i = 0; i < m->topo.npci; i++)
    s->node_dir[i] = -1;
  if (m->has_fs)
    gr_load_dynamic_dirs(&m->fs, &m->topo, s->watch_node, s->node_dir);
  size_t npci = m->has_fs ? m->topo.npci : 0;
  s->ring = xcalloc(s->cap, sizeof(*s->ring));
  for (unsigned i = 0; i < s->cap; i++)
    gr_sample_alloc(&s->ring[i], npci, s->ngpu);
  gr_sample_alloc(&s->first, npci, s->ngpu);
  gr_sample_alloc(&s->scratch, npci, s->ngpu);
  s->ev = xcalloc(EVENT_RING, sizeof(*s->ev));
  s->replay_quiet = xcalloc(s->ngpu + 1, sizeof(*s->replay_quiet));
  s->last_xid = xcalloc(s->ngpu + 1, sizeof(*s->last_xid));
  s->below_max = xcalloc(s->ngpu + 1, sizeof(*s->below_max));
  s->aer_quiet = xcalloc(s->nlinks * 6 + 1, sizeof(*s->aer_quiet));
  if (open_xid_source(s, o->kmsg, err) != 0 || (s->ngpu && crew_start(s, err) != 0)) {
    gr_sampler_close(s);
    return -1;
  }
  *out = s;
  return 0;
}

int gr_sampler_step(struct gr_sampler *s, struct gr_err *err)
{
  struct gr_sample *x = &s->scratch;
  x->mono_s = gr_clock_s(CLOCK_MONOTONIC);
  x->real_s = gr_clock_s(CLOCK_REALTIME);
  if (s->m->has_fs && gr_load_dynamic(&s->m->fs, &s->m->topo, s->watch_node, s->node_dir, x->pci, err) != 0)
    return -1;
  if (s->ngpu)
    read_gpus(s);
  pthread_mutex_lock(&s->lock);
  const struct gr_sample *prev = NULL;
  if (s->count) {
    /* the newest moves on; the one before stays in the ring for the deltas */
    prev = &s->ring[s->head];
    s->head = (s->head + 1) % s->cap;
  }
  gr_sample_copy(&s->ring[s->head], x);
  if (s->count < s->cap)
    s->count++;
  if (!s->steps)
    gr_sample_copy(&s->first, x);
  s->steps++;
  if (s->ring[s->head].pci)
    link_events(s, prev, &s->ring[s->head]);
  gpu_events(s, prev, &s->ring[s->head]);
  if (s->ngpu || s->kmsg.fd >= 0)
    xid_events(s);
  pthread_mutex_unlock(&s->lock);
  return 0;
}

bool gr_sampler_close(struct gr_sampler *s)
{
  if (!s)
    return true;
  bool clean = crew_stop(s->crew);
  for (unsigned i = 0; s->ring && i < s->cap; i++)
    gr_sample_free(&s->ring[i]);
  free(s->ring);
  gr_sample_free(&s->first);
  gr_sample_free(&s->scratch);
  gr_tail_stop(&s->kmsg);
  for (size_t i = 0; i < EVENT_RING; i++)
    gr_finding_release(&s->ev[i].f);
  free(s->ev);
  gr_findings_free(&s->firsts);
  free(s->replay_quiet);
  free(s->below_max);
  free(s->last_xid);
  free(s->aer_quiet);
  free(s->gpu_topo);
  free(s->gpu_link);
  free(s->gpu_name);
  free(s->gpu_static);
  free(s->links);
  free(s->watch_node);
  for (size_t i = 0; s->node_dir && i < s->m->topo.npci; i++)
    if (s->node_dir[i] >= 0)
      close(s->node_dir[i]);
  free(s->node_dir);
  pthread_mutex_destroy(&s->lock);
  free(s);
  return clean;
}

/* ------------------------------------------------------------ readers */

void gr_sampler_lock(struct gr_sampler *s)
{
  pthread_mutex_lock(&s->lock);
}

void gr_sampler_unlock(struct gr_sampler *s)
{
  pthread_mutex_unlock(&s->lock);
}

unsigned gr_sampler_count(const struct gr_sampler *s)
{
  return s->count;
}

unsigned long gr_sampler_steps(const struct gr_sampler *s)
{
  return s->steps;
}

const struct gr_sample *gr_sampler_sample(const struct gr_sampler *s, unsigned ago)
{
  if (ago >= s->count)
    return NULL;
  return &s->ring[(s->head + s->cap - ago) % s->cap];
}

const struct gr_sample *gr_sampler_first(const struct gr_sampler *s)
{
  return s->steps ? &s->first : NULL;
}

size_t gr_sampler_nlinks(const struct gr_sampler *s)
{
  return s->nlinks;
}

const struct gr_mon_link *gr_sampler_link(const struct gr_sampler *s, size_t i)
{
  return i < s->nlinks ? &s->links[i] : NULL;
}

int gr_sampler_topo_gpu(const struct gr_sampler *s, unsigned i)
{
  return i < s->ngpu ? s->gpu_topo[i] : -1;
}

const struct gr_gpu_static *gr_sampler_gpu_static(const struct gr_sampler *s, unsigned i)
{
  return i < s->ngpu ? &s->gpu_static[i] : NULL;
}

const char *gr_sampler_gpu_name(const struct gr_sampler *s, unsigned i)
{
  return i < s->ngpu ? s->gpu_name[i] : "";
}

unsigned gr_sampler_ngpu(const struct gr_sampler *s)
{
  return s->ngpu;
}

const struct gr_machine *gr_sampler_machine(const struct gr_sampler *s)
{
  return s->m;
}

int gr_sampler_gpu_link(const struct gr_sampler *s, unsigned i)
{
  return i < s->ngpu ? s->gpu_link[i] : -1;
}

static struct gr_count count_diff(struct gr_count newer, struct gr_count older)
{
  struct gr_count d = {.valid = newer.valid && older.valid};
  /* a counter that went down was reset (driver reload, device reset): count from 0 */
  d.value = d.valid ? (newer.value >= older.value ? newer.value - older.value : newer.value) : 0;
  return d;
}

struct gr_aer_window gr_sampler_link_aer(const struct gr_sampler *s, size_t i, int end, int sev)
{
  struct gr_aer_window w;
  memset(&w, 0, sizeof(w));
  const struct gr_sample *now = gr_sampler_sample(s, 0);
  if (i >= s->nlinks || !now || !now->pci)
    return w;
  int node = end == 0 ? s->links[i].dev : s->links[i].port;
  w.last = *aer_of(&now->pci[node], sev);
  w.since = count_diff(w.last, *aer_of(&s->first.pci[node], sev));
  const struct gr_sample *old = now;
  for (unsigned ago = 1; ago < s->count; ago++) {
    const struct gr_sample *x = gr_sampler_sample(s, ago);
    if (now->mono_s - x->mono_s > 60.0 + 1e-6)
      break;
    old = x;
  }
  w.minute = count_diff(w.last, *aer_of(&old->pci[node], sev));
  return w;
}

unsigned long gr_sampler_nevents(const struct gr_sampler *s)
{
  return s->nev;
}

const struct gr_mon_event *gr_sampler_event(const struct gr_sampler *s, unsigned long k)
{
  if (k >= s->nev || s->nev - k > EVENT_RING)
    return NULL;
  return &s->ev[k % EVENT_RING];
}

const char *gr_sampler_xid_source(const struct gr_sampler *s)
{
  return s->xid_source;
}

struct gr_metric gr_sampler_gpu_rate(const struct gr_sampler *s, unsigned gpu, size_t field_offset, unsigned ago)
{
  struct gr_metric r = {0, false};
  const struct gr_sample *a = gr_sampler_sample(s, ago), *b = gr_sampler_sample(s, 0);
  if (!a || !b || ago == 0 || gpu >= s->ngpu || b->mono_s <= a->mono_s)
    return r;
  const struct gr_metric *ma = (const struct gr_metric *)((const char *)&a->gpu[gpu] + field_offset);
  const struct gr_metric *mb = (const struct gr_metric *)((const char *)&b->gpu[gpu] + field_offset);
  if (ma->ok && mb->ok && a->gpu_read[gpu] == GR_READ_FRESH && b->gpu_read[gpu] == GR_READ_FRESH) {
    r.v = (mb->v >= ma->v ? mb->v - ma->v : mb->v) / (b->mono_s - a->mono_s);
    r.ok = true;
  }
  return r;
}

enum gr_sev gr_sampler_worst(const struct gr_sampler *s)
{
  const size_t *n = s->firsts.count;
  return n[GR_SEV_FAIL] ? GR_SEV_FAIL : n[GR_SEV_WARN] ? GR_SEV_WARN : n[GR_SEV_INFO] ? GR_SEV_INFO : GR_SEV_OK;
}

const struct gr_findings *gr_sampler_findings(const struct gr_sampler *s)
{
  return &s->firsts;
}

int gr_sampler_last_xid(const struct gr_sampler *s, unsigned gpu)
{
  return gpu < s->ngpu ? s->last_xid[gpu] : 0;
}

void gr_mon_link_max(const struct gr_sampler *s, size_t i, int *gen, int *width)
{
  /* what both ends support, as the analysis found it (gr_link_facts) */
  const struct gr_link_facts *f = &s->m->analysis.link[s->links[i].dev];
  *gen = f->can_gen;
  *width = f->can_width;
}
