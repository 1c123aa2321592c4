/* A rig's power budget (issue 34): from the rig's psu and circuit lines
 * (model/topo.h) and data/power-*.tsv, what each PSU and circuit carries
 * with every GPU at its board power: sustained load, the published
 * transient peak, wall draw through the PSU's efficiency, and headroom;
 * and the findings (model/finding.h) a figure over a rating or a thin
 * headroom gives, each with its fix.
 *
 * A figure no source gives is -1 (unknown) and the budget says so; never
 * a guess. Ownership: the budget owns its findings and strings; free with
 * gr_power_free. */
#ifndef GPURIG_POWER_H
#define GPURIG_POWER_H

#include <stdbool.h>
#include <stddef.h>

#include "model/finding.h"
#include "model/topo.h"

/* One GPU's part of the budget, by GPU number (t->gpus order). */
struct gr_power_gpu {
  double draw_w;         /* sustained: board power, or the rig's `limit`, or the plan's limit; -1 unknown */
  double peak_w;         /* its highest published transient, -1 unknown */
  double window_us;      /* the window that peak was measured over, -1 unknown */
  int psu;               /* index in psus of the PSU that feeds it (`feeds`, or the lone PSU), -1 unknown */
};

struct gr_power_psu {
  const char *name;      /* the rig's psu name (owned by the topology) */
  double watts;          /* rated DC output */
  bool fed;              /* what it carries is known: the rig's only PSU, or its `feeds` say */
  size_t ngpus;          /* the GPUs it feeds when fed */
  bool cpus, board;      /* it feeds the CPUs, the board (`feeds`; a lone PSU feeds both) */
  double sustained_w;    /* what it carries with every GPU at board power, -1 unknown */
  double transient_w;    /* with every GPU at its published peak, -1 unknown */
  double wall_w;         /* sustained load through the efficiency curve, -1 unknown */
  double headroom_w;     /* watts - sustained_w, -1 unknown */
  int rails;             /* its 12 V rails, 0 unknown */
  size_t gpus_per_rail;  /* GPUs on its busiest rail with the GPUs spread evenly over the rails, 0 unknown */
  double rail_w;         /* what that rail carries: those GPUs' whole board power (the slot's share not
                            taken off, so an upper bound), -1 unknown */
  double rail_peak_w;    /* the same at their published peaks, -1 unknown */
  double rail_limit_w;   /* the smallest rail's over-current limit x 12 V (rail-amps), -1 unknown */
};

struct gr_power_circuit {
  const char *name;      /* owned by the topology */
  double limit_w;        /* volts x amps x the continuous-load share (80%) */
  double wall_w;         /* what its PSUs draw from the wall, -1 unknown */
};

struct gr_power_budget {
  double gpu_limit_w;    /* the power limit per GPU the budget assumes (plan --power-limit), 0 none */
  double gpu_w;          /* GPUs at board power (or the limit), -1 if a GPU's is unknown */
  double gpu_peak_w;     /* GPUs at their published peaks, -1 if one is unknown; a power limit
                            leaves them as they are (it caps the average over the limit's
                            window, not millisecond spikes) */
  double peak_window_us; /* the longest window those peaks were measured over, -1 unknown */
  double gpu_max_w, gpu_max_peak_w; /* the largest one GPU draws sustained and at its peak, -1 unknown */
  double cpu_w;          /* CPUs at TDP, -1 unknown */
  double sustained_w;    /* gpu_w + cpu_w, -1 unknown */
  struct gr_power_gpu *gpus; /* t->ngpus of them */
  size_t ngpus;
  bool feeds;            /* the rig says what each PSU feeds */
  struct gr_power_psu *psus;
  size_t npsus;
  struct gr_power_circuit *circuits;
  size_t ncircuits;
  struct gr_findings findings;
};

/* The budget of t (a rig's topology; t->rig NULL or without psu lines gives
 * one info finding saying what is unknown). Returns 0. */
int gr_power_budget(const struct gr_topo *t, struct gr_power_budget *b);
/* The same with every GPU's sustained draw capped at limit_w (a power limit
 * the plan proposes; 0 none). */
int gr_power_budget_at(const struct gr_topo *t, double limit_w, struct gr_power_budget *b);
void gr_power_free(struct gr_power_budget *b);
/* power_paths.c: each GPU's power path against its ratings (its connectors,
 * a daisy-chained cable, the riser under it), findings into b. Called by
 * gr_power_budget_at once b->gpus is filled; a rig without psu lines gets
 * them too. */
void gr_power_paths(const struct gr_topo *t, struct gr_power_budget *b);
/* A connector's rating in watts from data/power-parts.tsv (kind connector:
 * "8pin", "slot", "sata", ...), -1 when no source gives it. */
double gr_power_connector_w(const char *name);
/* The power limit per GPU (whole watts, rounded down) that keeps ngpus
 * GPUs and the budget's CPUs (cpu_w, counted as 0 when unknown) within 90%
 * of watts: the 10% headroom the PSU findings ask. -1 when there is no GPU. */
double gr_power_limit_within(const struct gr_power_budget *b, size_t ngpus, double watts);
/* "378 W over 100 ms" (a peak and the window it was measured over) into
 * buf; "unknown (...)" when w < 0. Returns buf. */
const char *gr_power_peak_text(double w, double window_us, char *buf, size_t cap);

#endif
