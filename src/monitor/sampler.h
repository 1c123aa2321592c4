/* The sampler behind `gpurig watch`, `gpurig export` and burn-in: it repeats
 * the machine's dynamic read (sample.h) into a ring of samples allocated
 * once, and turns differences between samples into deltas, rates and
 * events: AER errors on a link (both ends, the slot named), a link that
 * changed width, a GPU that stopped answering or came back, an Xid.
 *
 * Each GPU is read on its own thread with a time limit: a GPU in a bad
 * state whose driver call hangs never holds up the others; its values are
 * kept from its last answer and marked stale. A steady-state step allocates
 * nothing (the kernel log is parsed only when it has new lines).
 *
 * Threads: one thread calls gr_sampler_step; readers on other threads (the
 * exporter's HTTP handler) hold gr_sampler_lock while they read the latest
 * sample, the first sample, the links and the events.
 *
 * Ownership: gr_sampler_open returns a sampler the caller frees with
 * gr_sampler_close; the machine and the GPUs it was given must outlive it.
 * Pointers it returns stay valid until the next step (or close). */
#ifndef GPURIG_SAMPLER_H
#define GPURIG_SAMPLER_H

#include <stdbool.h>
#include <stddef.h>

#include "analysis/machine.h"
#include "base/util.h"
#include "gpu/gpu.h"
#include "model/finding.h"
#include "monitor/sample.h"

struct gr_sampler_opts {
  unsigned history;     /* samples kept, at least 3 (e.g. 10 minutes at 1 s: 600) */
  double gpu_timeout_s; /* a GPU that has not answered by then is stale in this sample */
  double quiet_s;       /* a counter that keeps rising makes one event per this many seconds (0: 60) */
  const char *kmsg;     /* a kernel log to follow for Xids instead of the driver's events; NULL:
                           the driver's events, else /dev/kmsg under the machine's root */
};

/* One PCIe link on a GPU's path to its root port: a device (the lower end)
 * and the port above it. Both ends count AER errors. */
struct gr_mon_link {
  int dev, port;   /* topology pci indices: the lower end, the port above it */
  int gpu;         /* the topology GPU below it (the first, for a switch uplink), -1 none */
  char slot[32];   /* the physical slot the lower end sits in ("SLOT5", from /sys/bus/pci/slots), "" unknown */
  char dev_name[64], port_name[64]; /* "GPU1 0000:02:00.0", "root port 0000:00:03.1" */
};

enum gr_mon_event_kind {
  GR_EV_AER,        /* AER errors counted at an end of a link */
  GR_EV_WIDTH,      /* a link's width changed, or its speed while the GPU below is busy */
  GR_EV_GPU_LOST,   /* a GPU answered that it is gone */
  GR_EV_GPU_STALE,  /* a GPU did not answer in time */
  GR_EV_GPU_BACK,   /* a lost or stale GPU answers again */
  GR_EV_XID,        /* the driver reported an Xid */
  GR_EV_REPLAY,     /* the GPU's PCIe replay counter rose */
  GR_EV_ECC,        /* uncorrected ECC errors or a row remap failure */
  GR_EV_GPULINK,     /* NVLink CRC/replay/recovery errors, or xGMI errors, rose */
  GR_EV_LOG,         /* the --kmsg file was rotated (truncated, or a new file at its name): info */
  GR_EV_SLOW_LINK,   /* a busy GPU's link runs below its top generation or width */
};

/* An event is a finding (model/finding.h) with its time: f.sev, f.id
 * ("monitor.xid", "monitor.aer", ...), f.subject (the GPU or the link's
 * lower end) and f.text, one line: "GPU2 0000:41:00.0: Xid 79 (GPU has
 * fallen off the bus)". The sampler owns it. */
struct gr_mon_event {
  double real_s, mono_s;
  enum gr_mon_event_kind kind;
  int gpu;          /* the backend's GPU index, -1 none */
  int link;         /* index into the links, -1 none */
  int code;         /* the Xid; the new width */
  struct gr_finding f;
};

/* AER counts of one end of a link. Invalid: the end does not report AER. */
struct gr_aer_window {
  struct gr_count last;     /* the newest total */
  struct gr_count since;    /* since the sampler started */
  struct gr_count minute;   /* over the last 60 s held (less when the ring is shorter) */
};

struct gr_sampler;

/* Opens a sampler over machine m and GPUs g (g may be NULL, or have no
 * backend). Starts one thread per GPU. Returns 0, or -1 with err. */
int gr_sampler_open(const struct gr_machine *m, const struct gr_gpus *g, const struct gr_sampler_opts *o,
                    struct gr_sampler **out, struct gr_err *err);
/* Takes one sample into the ring and finds its events. -1 with err when the
 * machine's files are gone. */
int gr_sampler_step(struct gr_sampler *s, struct gr_err *err);
/* Stops the threads and frees. Returns false when a GPU thread was still
 * stuck in a driver call: the caller must then not close the GPU backend
 * (the process is about to exit; the thread is left to the kernel). */
bool gr_sampler_close(struct gr_sampler *s);

void gr_sampler_lock(struct gr_sampler *s);
void gr_sampler_unlock(struct gr_sampler *s);

/* Samples held (0 before the first step); ago 0 is the newest, NULL past the
 * oldest held. The first sample ever taken stays available as the baseline. */
unsigned gr_sampler_count(const struct gr_sampler *s);
const struct gr_sample *gr_sampler_sample(const struct gr_sampler *s, unsigned ago);
const struct gr_sample *gr_sampler_first(const struct gr_sampler *s);
unsigned long gr_sampler_steps(const struct gr_sampler *s);

/* The watched links. */
size_t gr_sampler_nlinks(const struct gr_sampler *s);
const struct gr_mon_link *gr_sampler_link(const struct gr_sampler *s, size_t i);
/* AER counts of one end (0 the device, 1 the port) of link i, severity
 * sev: 0 correctable, 1 non-fatal, 2 fatal. */
struct gr_aer_window gr_sampler_link_aer(const struct gr_sampler *s, size_t i, int end, int sev);
/* The machine's topology GPU for backend GPU i (joined by bus id), -1 none. */
int gr_sampler_topo_gpu(const struct gr_sampler *s, unsigned i);
/* What does not change of backend GPU i (its name, bus id, memory, link
 * maxima), read at open; all invalid for a GPU lost before. */
const struct gr_gpu_static *gr_sampler_gpu_static(const struct gr_sampler *s, unsigned i);
/* "GPU2 0000:41:00.0" */
const char *gr_sampler_gpu_name(const struct gr_sampler *s, unsigned i);
unsigned gr_sampler_ngpu(const struct gr_sampler *s);
const struct gr_machine *gr_sampler_machine(const struct gr_sampler *s);
/* The link right above backend GPU i, -1 none (no files, or not found). */
int gr_sampler_gpu_link(const struct gr_sampler *s, unsigned i);

/* Events: the total ever found, and event k (0 the first ever); events
 * older than the newest 256 are gone (NULL). */
unsigned long gr_sampler_nevents(const struct gr_sampler *s);
const struct gr_mon_event *gr_sampler_event(const struct gr_sampler *s, unsigned long k);
/* The worst severity of every event found so far (GR_SEV_OK: none), and
 * the last Xid backend GPU i reported (0 none): neither forgets what the
 * event ring dropped. */
enum gr_sev gr_sampler_worst(const struct gr_sampler *s);
/* The first event of each severity found so far, as findings (at most one
 * per severity, kept when the ring drops the event): gr_findings_exit of it
 * is the exit status of the worst event, watch's and burn's. */
const struct gr_findings *gr_sampler_findings(const struct gr_sampler *s);
int gr_sampler_last_xid(const struct gr_sampler *s, unsigned gpu);
/* The generation and width link i can train to: the lower of its two ends'
 * maxima (0 unknown). */
void gr_mon_link_max(const struct gr_sampler *s, size_t i, int *gen, int *width);
/* Whether backend GPU i, busy (half its time or more) in the newest sample,
 * has its PCIe link below what the link can train to (the lower of the
 * GPU's and the slot's maxima): Gen1 of Gen4, x8 of x16. At idle a link
 * slows down by design; under load it should not. When true and why is
 * given, why gets "Gen1 of Gen4, x16 of x16". The sampler makes a warning
 * event when a GPU enters this state (docs/monitor.md). */
bool gr_sampler_gpu_below_max(const struct gr_sampler *s, unsigned i, char *why, size_t cap);
/* Where Xids come from: "driver events", "kernel log /dev/kmsg", "none (...)". */
const char *gr_sampler_xid_source(const struct gr_sampler *s);

/* A rate per second of a counter between the newest sample and the one ago
 * samples before it; invalid when either is. */
struct gr_metric gr_sampler_gpu_rate(const struct gr_sampler *s, unsigned gpu, size_t field_offset, unsigned ago);

#endif
