/* Printers of the sampler's samples (monitor/sampler.h): plain lines for
 * logs and pipes (`gpurig watch --once`, `--count N`), JSON lines (`--json`)
 * and the Prometheus text exposition (`gpurig export`).
 *
 * Each reads the sampler's newest sample, its links and the events from
 * event index `since`; the caller holds gr_sampler_lock when another thread
 * steps the sampler. Ownership: gr_prom_render returns a string the caller
 * frees; JSON values returned are the caller's (json_decref). */
#ifndef GPURIG_PRINT_MONITOR_H
#define GPURIG_PRINT_MONITOR_H

#include <stdio.h>

#include <jansson.h>

#include "model/finding.h"
#include "model/topo.h"
#include "monitor/sampler.h"

/* The throttle reasons of a bit set in words, "none" when none, "-" unknown
 * (as every unknown value in text). */
const char *gr_throttle_text(struct gr_metric bits, char *buf, size_t cap);

/* GPU i's state in words for text and the screen: "ok", "STALE", "LOST",
 * or "SLOW" for a GPU that answers with its link below its maximum under
 * load (gr_sampler_gpu_below_max); a constant string. x is the newest
 * sample. */
const char *gr_gpu_state_text(const struct gr_sampler *s, const struct gr_sample *x, unsigned i);

/* One sample as text: a header line with the time (when header), one line
 * per GPU, one per link that has counted AER errors, one per event from
 * index since. */
void gr_print_sample_text(FILE *out, const struct gr_sampler *s, unsigned long since, bool header);
/* The sample ago steps back as one compact JSON object and a newline (a
 * JSON line, docs/monitor.md), with the events from index *since up to its
 * time (moved past them); links only for the newest. Written straight to
 * out with no heap allocation (watch --json: none per sample). */
void gr_sample_json_line(FILE *out, const struct gr_sampler *s, unsigned ago, unsigned long *since, double psu_w);
/* The same line as a tree (the caller's, json_decref; NULL when out of
 * memory), for what embeds samples in a larger document. */
json_t *gr_sample_at_to_json(const struct gr_sampler *s, unsigned ago, unsigned long *since, double psu_w);

/* What a Prometheus text besides the sampler's sample shows. */
struct gr_prom_in {
  const struct gr_findings *findings; /* doctor's, or NULL */
  const char *hostname;
  bool driver_up;             /* the GPU driver loaded */
  const struct gr_topo *bus;  /* the machine's topology (its GPUs are gpurig_gpu_up 0 when the driver is not up), or NULL */
  double psu_w;               /* --psu: the power supply's watts (gpurig_power_budget_ratio), 0 none */
};

/* The Prometheus text exposition of the newest sample: dcgm-exporter's
 * series for what gpurig has, and gpurig's own (docs/monitor.md). The
 * sample's age is left out: a body is rendered once per sample and served
 * many times, gr_prom_age is written after it at each scrape. */
char *gr_prom_render(const struct gr_sampler *s, const struct gr_prom_in *in);
/* The gpurig_sample_age_seconds family (HELP, TYPE and value, labelled
 * with the host as every family is) into buf; returns its length (at most
 * cap - 1). 512 bytes hold it for any host name Linux allows. */
size_t gr_prom_age(char *buf, size_t cap, double age_s, const char *hostname);
/* The gpurig_textfile_ok family (export --textfile: 1 in every file written,
 * 0 alone after a minute of failed writes), labelled with the host as the
 * other families are, so that a query or an alert names the node. As
 * gr_prom_age: its length, 512 bytes hold it. */
size_t gr_prom_textfile_ok(char *buf, size_t cap, bool ok, const char *hostname);

#endif
