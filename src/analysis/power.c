/* A rig's power budget; see power.h. The one place that adds up what a rig
 * draws: every figure comes from data/power-*.tsv (or the GPU catalog's
 * TDP, the same figure as power-gpus.tsv's board power), and one it lacks
 * stays unknown rather than guessed. */
#include "analysis/power.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "facts/catalog.h"
#include "facts/tables.h"

/* A rule's value from power-parts.tsv (kind rule), -1 when the table lacks it. */
static double rule_value(const char *name)
{
  const struct gr_power_parts_rows *r = gr_power_parts_rows();
  for (size_t i = 0; i < r->n; i++)
    if (strcmp(r->v[i].kind, "rule") == 0 && strcmp(r->v[i].name, name) == 0)
      return (double)r->v[i].watts;
  return -1;
}

/* A GPU's board power, its highest published peak and the window that
 * peak was measured over (-1 unknown). */
static void gpu_power(const struct gr_gpu_model *m, double *board, double *peak, double *window_us)
{
  const struct gr_power_gpus_rows *g = gr_power_gpus_rows();
  *board = m && m->tdp_w > 0 ? m->tdp_w : -1;
  *peak = *window_us = -1;
  for (size_t i = 0; m && i < g->n; i++)
    if (strcmp(g->v[i].model, m->model) == 0 && g->v[i].peak_w > *peak) {
      *peak = (double)g->v[i].peak_w;
      *window_us = (double)g->v[i].window_us;
    }
}

/* A CPU package's TDP from power-parts.tsv (kind cpu, the model string
 * contains the row's name), -1 unknown. */
static double cpu_power(const char *model)
{
  const struct gr_power_parts_rows *r = gr_power_parts_rows();
  for (size_t i = 0; model && i < r->n; i++)
    if (strcmp(r->v[i].kind, "cpu") == 0 && strstr(model, r->v[i].name))
      return (double)r->v[i].watts;
  return -1;
}

/* Sum of a when every part is known, else -1. */
static double add_known(double sum, double a)
{
  return sum < 0 || a < 0 ? -1 : sum + a;
}

/* The larger of two figures where both are known, else -1. */
static double max_known(double a, double b)
{
  return a < 0 || b < 0 ? -1 : a > b ? a : b;
}

/* The loads of every GPU and CPU into b: each GPU at its board power, or at
 * the rig's `limit` for it, or at b->gpu_limit_w when the plan sets one. */
static void rig_loads(const struct gr_topo *t, struct gr_power_budget *b)
{
  const struct gr_rig_meta *m = t->rig;
  b->gpu_w = b->gpu_peak_w = b->cpu_w = b->gpu_max_w = b->gpu_max_peak_w = 0;
  b->peak_window_us = t->ngpus ? 0 : -1;
  b->gpus = xcalloc(t->ngpus + 1, sizeof(*b->gpus));
  b->ngpus = t->ngpus;
  for (size_t i = 0; i < t->ngpus; i++) {
    struct gr_power_gpu *g = &b->gpus[i];
    gpu_power(gr_pci_catalog(&t->pci[t->gpus[i]]), &g->draw_w, &g->peak_w, &g->window_us);
    double rig_limit = m && i < m->ngpu_power ? m->gpu_power[i].limit_w : 0;
    if (b->gpu_limit_w > 0 && g->draw_w > b->gpu_limit_w)
      g->draw_w = b->gpu_limit_w;
    else if (b->gpu_limit_w <= 0 && rig_limit > 0) /* the limit the rig sets: what the card may hold */
      g->draw_w = rig_limit;
    g->psu = m && i < m->ngpu_power ? m->gpu_power[i].psu : -1;
    if (m && m->npsus == 1)
      g->psu = 0;
    b->gpu_w = add_known(b->gpu_w, g->draw_w);
    b->gpu_peak_w = add_known(b->gpu_peak_w, g->peak_w);
    b->gpu_max_w = max_known(b->gpu_max_w, g->draw_w);
    b->gpu_max_peak_w = max_known(b->gpu_max_peak_w, g->peak_w);
    b->peak_window_us = max_known(b->peak_window_us, g->window_us);
  }
  for (size_t i = 0; i < t->npackages; i++)
    b->cpu_w = add_known(b->cpu_w, cpu_power(t->packages[i].cpu_model));
  b->sustained_w = add_known(b->gpu_w, b->cpu_w);
}

/* What one PSU carries: its GPUs and, when it feeds them, the CPUs. */
struct share {
  int psu;               /* its index, -1: every GPU (the rig's total) */
  size_t ngpus;
  double gpu_w, gpu_peak_w, cpu_w;
};

/* The sum of the k largest sustained draws (peak: published peaks) of
 * the share's GPUs, -1 when one of theirs is unknown: the busiest rail when
 * the GPUs are spread evenly and the largest share one. */
static double top_sum(const struct gr_power_budget *b, const struct share *sh, size_t k, bool peak)
{
  double sum = 0, last = INFINITY;
  size_t taken = 0, at_last = 0;
  while (taken < k) { /* a GPU count is small: one pass per distinct figure */
    double best = -INFINITY;
    size_t n = 0;
    for (size_t i = 0; i < b->ngpus; i++) {
      double w = peak ? b->gpus[i].peak_w : b->gpus[i].draw_w;
      if (sh->psu >= 0 && b->gpus[i].psu != sh->psu)
        continue;
      if (w < 0)
        return -1;
      if (w < last && w > best) {
        best = w;
        n = 0;
      }
      n += w == best;
    }
    if (n == 0)
      break;
    at_last = n < k - taken ? n : k - taken;
    sum += best * (double)at_last;
    taken += at_last;
    last = best;
  }
  return sum;
}

/* The share of PSU k: with `feeds`, what they name; the rig's only PSU
 * carries everything. */
static void share_of(const struct gr_power_budget *b, const struct gr_rig_meta *m, size_t k, struct share *sh)
{
  memset(sh, 0, sizeof(*sh));
  sh->psu = (int)k;
  for (size_t i = 0; i < b->ngpus; i++) {
    if (b->gpus[i].psu != (int)k)
      continue;
    sh->ngpus++;
    sh->gpu_w = add_known(sh->gpu_w, b->gpus[i].draw_w);
    sh->gpu_peak_w = add_known(sh->gpu_peak_w, b->gpus[i].peak_w);
  }
  sh->cpu_w = m->npsus == 1 || m->cpus_psu == (int)k ? b->cpu_w : 0;
}

/* The PSU's efficiency in percent at a load fraction, from its stated
 * figure or its 80 PLUS level at its input voltage (interpolated between
 * the 20/50/100% points); -1 unknown. */
static double efficiency_at(const struct gr_psu *s, double frac)
{
  if (s->efficiency_pct > 0)
    return s->efficiency_pct;
  if (!s->level || !s->input_v)
    return -1;
  const struct gr_power_psu_rows *r = gr_power_psu_rows();
  int input = s->input_v == 120 ? 115 : 230;
  for (size_t i = 0; i < r->n; i++) {
    if (strcmp(r->v[i].level, s->level) != 0 || r->v[i].input != input)
      continue;
    double e20 = (double)r->v[i].eff20, e50 = (double)r->v[i].eff50, e100 = (double)r->v[i].eff100;
    if (frac <= 0.2)
      return e20;
    if (frac <= 0.5)
      return e20 + (e50 - e20) * (frac - 0.2) / 0.3;
    return frac >= 1 ? e100 : e50 + (e100 - e50) * (frac - 0.5) / 0.5;
  }
  return -1;
}

/* The power limit per GPU that brings a share's load within 90% of watts
 * (the 10% headroom the PSU findings ask), and the fix finding's text. */
static void limit_fix(struct gr_finding *f, const struct share *sh, double watts)
{
  if (sh->ngpus == 0 || sh->cpu_w < 0 || sh->gpu_w < 0)
    return;
  double per = floor((0.9 * watts - sh->cpu_w) / (double)sh->ngpus);
  double board = sh->gpu_w / (double)sh->ngpus;
  if (per > 0 && per < board)
    gr_finding_fix(f, NULL, "another PSU for part of the GPUs, or nvidia-smi -pl %.0f on each GPU (saves %.0f W)",
                   per, (board - per) * (double)sh->ngpus);
}

/* One 12 V rail for four or more GPUs: one over-current protection sees
 * them all. A warning although the total may be within the rating: the GPUs
 * of a data-parallel job compute and synchronise in lockstep, so their
 * spikes coincide on that one trip point (seed 004's builder lost a PSU so
 * and moved to ten rails). */
static void single_rail(struct gr_power_budget *b, const struct gr_psu *s, const struct gr_power_psu *l,
                        const struct share *sh)
{
  char peak[96];
  struct gr_finding *f = gr_finding_add(
      &b->findings, GR_SEV_WARN, "power.single-rail",
      "PSU %s (%.0f W) has one 12 V rail: its over-current protection carries all %zu GPUs at once, %.0f W "
      "sustained and %s when they peak together (data-parallel jobs step the GPUs in lockstep)", s->name, s->watts,
      sh->ngpus, l->sustained_w, gr_power_peak_text(l->transient_w, b->peak_window_us, peak, sizeof(peak)));
  gr_finding_evidence(f, "rig", "psu %s %.0f W rails 1; GPUs %.0f W at board power; CPUs %s", s->name, s->watts,
                      sh->gpu_w, sh->cpu_w < 0 ? "unknown" : sh->cpu_w == 0 ? "on another PSU" : "at TDP");
  gr_finding_fix(f, NULL, "a multi-rail PSU with each GPU's cables on a rail of its own, or a second PSU for half "
                 "of the GPUs; a power limit (nvidia-smi -pl) lowers the sustained load but much less the "
                 "millisecond peaks");
}

/* The busiest rail of a multi-rail PSU with the GPUs spread evenly over
 * its rails, against the smallest rail's limit when rail-amps gives it. */
static void rail_loads(struct gr_power_psu *l, const struct gr_psu *s, const struct gr_power_budget *b,
                       const struct share *sh)
{
  l->rails = s->rails;
  l->rail_w = l->rail_peak_w = l->rail_limit_w = -1;
  if (s->rails <= 0 || sh->ngpus == 0)
    return;
  l->gpus_per_rail = (sh->ngpus + (size_t)s->rails - 1) / (size_t)s->rails;
  l->rail_w = top_sum(b, sh, l->gpus_per_rail, false);
  l->rail_peak_w = top_sum(b, sh, l->gpus_per_rail, true);
  for (int i = 0; i < s->nrail_amps; i++)
    if (l->rail_limit_w < 0 || s->rail_amps[i] * 12 < l->rail_limit_w)
      l->rail_limit_w = s->rail_amps[i] * 12;
}

/* A rail whose GPUs draw more than its over-current limit. */
static void rail_findings(struct gr_power_budget *b, const struct gr_psu *s, const struct gr_power_psu *l)
{
  if (l->rail_limit_w < 0 || l->rails < 2)
    return;
  struct gr_finding *f = NULL;
  if (l->rail_w > l->rail_limit_w)
    f = gr_finding_add(&b->findings, GR_SEV_FAIL, "power.rail-overload",
                       "PSU %s: its busiest 12 V rail carries %zu GPU%s, %.0f W sustained, over the rail's %.0f W "
                       "(%.0f A at 12 V)", s->name, l->gpus_per_rail, l->gpus_per_rail == 1 ? "" : "s", l->rail_w,
                       l->rail_limit_w, l->rail_limit_w / 12);
  else if (l->rail_peak_w > l->rail_limit_w)
    f = gr_finding_add(&b->findings, GR_SEV_WARN, "power.rail-transient",
                       "PSU %s: its busiest 12 V rail carries %zu GPU%s, %.0f W sustained but %.0f W at their "
                       "published peaks, over the rail's %.0f W (%.0f A at 12 V)", s->name, l->gpus_per_rail,
                       l->gpus_per_rail == 1 ? "" : "s", l->rail_w, l->rail_peak_w, l->rail_limit_w,
                       l->rail_limit_w / 12);
  if (f)
    gr_finding_fix(f, NULL, "each GPU's cables on rails of their own (a rail's limit is on the PSU's label), or "
                   "a PSU with stronger rails");
}

/* The findings of one PSU that carries the whole rig. */
static void psu_findings(struct gr_power_budget *b, const struct gr_psu *s, const struct gr_power_psu *l,
                         const struct share *sh)
{
  struct gr_finding *f = NULL;
  if (l->sustained_w > s->watts)
    f = gr_finding_add(&b->findings, GR_SEV_FAIL, "power.psu-overload",
                       "PSU %s (%.0f W) carries %.0f W sustained: %zu GPU%s at %s%s", s->name, s->watts,
                       l->sustained_w, sh->ngpus, sh->ngpus == 1 ? "" : "s",
                       b->gpu_limit_w > 0 ? "the power limit" : "board power (or the rig's limit)",
                       sh->cpu_w > 0 ? ", the CPUs at TDP" : "");
  else if (l->transient_w > s->watts)
    f = gr_finding_add(&b->findings, GR_SEV_WARN, "power.psu-transient",
                       "PSU %s (%.0f W): %.0f W sustained, %.0f W when the GPUs peak (published transients)",
                       s->name, s->watts, l->sustained_w, l->transient_w);
  else if (l->sustained_w >= 0 && l->headroom_w < 0.1 * s->watts)
    f = gr_finding_add(&b->findings, GR_SEV_WARN, "power.psu-headroom",
                       "PSU %s (%.0f W) carries %.0f W sustained: %.0f W headroom, under 10%%", s->name, s->watts,
                       l->sustained_w, l->headroom_w);
  if (f) {
    gr_finding_evidence(f, "rig", "psu %s %.0f W, GPUs %.0f W at board power, GPUs at published peaks %s, CPUs %s",
                        s->name, s->watts, sh->gpu_w, sh->gpu_peak_w < 0 ? "unknown" : "known",
                        sh->cpu_w < 0 ? "unknown" : sh->cpu_w == 0 ? "on another PSU" : "at TDP");
    limit_fix(f, sh, s->watts);
  }
  if (s->rails == 1 && sh->ngpus >= 4)
    single_rail(b, s, l, sh);
  rail_findings(b, s, l);
}

/* Each circuit's wall draw against 80% of its breaker. */
static void circuits(const struct gr_topo *t, struct gr_power_budget *b)
{
  const struct gr_rig_meta *m = t->rig;
  double share = rule_value("continuous-load-pct") / 100.0;
  b->circuits = xcalloc(m->ncircuits ? m->ncircuits : 1, sizeof(*b->circuits));
  b->ncircuits = m->ncircuits;
  for (size_t i = 0; i < m->ncircuits; i++) {
    const struct gr_circuit *c = &m->circuits[i];
    struct gr_power_circuit *o = &b->circuits[i];
    o->name = c->name;
    o->limit_w = share > 0 ? c->volts * c->amps * share : -1;
    o->wall_w = 0;
    for (size_t k = 0; k < b->npsus; k++) {
      bool on = !c->psus;
      for (const char *q = c->psus; q && *q; q += strcspn(q, ",") + (q[strcspn(q, ",")] == ',')) {
        size_t n = strcspn(q, ",");
        on |= n == strlen(b->psus[k].name) && strncmp(q, b->psus[k].name, n) == 0;
      }
      if (on)
        o->wall_w = add_known(o->wall_w, b->psus[k].wall_w);
    }
    if (o->wall_w < 0 || o->limit_w < 0 || o->wall_w <= o->limit_w)
      continue;
    struct gr_finding *f = gr_finding_add(&b->findings, GR_SEV_FAIL, "power.circuit",
                                          "circuit %s (%.0f V, %.0f A) draws %.0f W from the wall; a continuous load "
                                          "may use %.0f W (80%% of the breaker)", c->name, c->volts, c->amps,
                                          o->wall_w, o->limit_w);
    gr_finding_fix(f, NULL, "a 230 V circuit, or a second circuit for part of the PSUs");
  }
}

/* PSU k's load, wall draw and rails, and its findings. Which PSU feeds
 * what is known for the rig's only PSU or from `feeds`; with several PSUs
 * and no feeds, each one's share stays unknown and only their total is
 * checked (the caller). */
static void psu_load(struct gr_power_budget *b, const struct gr_rig_meta *m, size_t k)
{
  const struct gr_psu *s = &m->psus[k];
  struct gr_power_psu *l = &b->psus[k];
  struct share sh;
  l->name = s->name;
  l->watts = s->watts;
  l->rails = s->rails;
  l->fed = m->npsus == 1 || b->feeds;
  l->sustained_w = l->transient_w = l->headroom_w = l->wall_w = -1;
  l->rail_w = l->rail_peak_w = l->rail_limit_w = -1;
  if (!l->fed)
    return;
  share_of(b, m, k, &sh);
  l->ngpus = sh.ngpus;
  l->cpus = m->npsus == 1 || m->cpus_psu == (int)k;
  l->board = m->npsus == 1 || m->board_psu == (int)k;
  l->sustained_w = add_known(sh.gpu_w, sh.cpu_w);
  l->transient_w = add_known(sh.gpu_peak_w, sh.cpu_w);
  l->headroom_w = l->sustained_w < 0 ? -1 : s->watts - l->sustained_w;
  double eff = l->sustained_w < 0 ? -1 : efficiency_at(s, l->sustained_w / s->watts);
  l->wall_w = eff > 0 ? l->sustained_w * 100.0 / eff : -1;
  rail_loads(l, s, b, &sh);
  psu_findings(b, s, l, &sh);
}

int gr_power_budget(const struct gr_topo *t, struct gr_power_budget *b)
{
  return gr_power_budget_at(t, 0, b);
}

int gr_power_budget_at(const struct gr_topo *t, double limit_w, struct gr_power_budget *b)
{
  memset(b, 0, sizeof(*b));
  b->gpu_limit_w = limit_w > 0 ? limit_w : 0;
  rig_loads(t, b);
  gr_power_paths(t, b);
  if (!t->rig || t->rig->npsus == 0) {
    struct gr_finding *f = gr_finding_add(&b->findings, GR_SEV_INFO, "power.unknown",
                                          "The rig has no psu line: PSU watts, rails, efficiency and the wall circuit are "
                                          "unknown, so the power budget is not checked");
    gr_finding_fix(f, NULL, "add `psu NAME WATTS ...` (docs/rig-format.md)");
    return 0;
  }
  const struct gr_rig_meta *m = t->rig;
  b->psus = xcalloc(m->npsus, sizeof(*b->psus));
  b->npsus = m->npsus;
  b->feeds = m->psus[0].has_feeds; /* the parser has every psu say it, or none */
  double rated = 0;
  for (size_t i = 0; i < m->npsus; i++)
    rated += m->psus[i].watts;
  for (size_t i = 0; i < m->npsus; i++)
    psu_load(b, m, i);
  if (!b->feeds && m->npsus > 1 && b->sustained_w > rated) {
    struct gr_finding *f = gr_finding_add(&b->findings, GR_SEV_FAIL, "power.psu-overload",
                                          "the PSUs together (%.0f W) are short of the %.0f W sustained load", rated,
                                          b->sustained_w);
    struct share all = {.psu = -1, .ngpus = b->ngpus, .gpu_w = b->gpu_w, .cpu_w = b->cpu_w};
    limit_fix(f, &all, rated);
  }
  circuits(t, b);
  return 0;
}

double gr_power_limit_within(const struct gr_power_budget *b, size_t ngpus, double watts)
{
  if (ngpus == 0)
    return -1;
  return floor((0.9 * watts - (b->cpu_w > 0 ? b->cpu_w : 0)) / (double)ngpus);
}

const char *gr_power_peak_text(double w, double window_us, char *buf, size_t cap)
{
  if (w < 0)
    snprintf(buf, cap, "unknown (no published transient for a GPU)");
  else if (window_us >= 1000)
    snprintf(buf, cap, "%.0f W over %.0f ms", w, window_us / 1000);
  else if (window_us > 0)
    snprintf(buf, cap, "%.0f W over %.0f us", w, window_us);
  else
    snprintf(buf, cap, "%.0f W", w);
  return buf;
}

void gr_power_free(struct gr_power_budget *b)
{
  free(b->gpus);
  free(b->psus);
  free(b->circuits);
  gr_findings_free(&b->findings);
  memset(b, 0, sizeof(*b));
}
