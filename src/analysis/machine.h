/* The machine pipeline: one call takes a source (load/source.h) and returns
 * the machine: its topology, the analysis and, when asked, the
 * predictions. Every command that looks at a machine opens it here; none
 * loads, analyses or predicts on its own.
 *
 * Ownership: gr_machine_open fills a struct gr_machine that owns everything
 * in it, copies of the source's strings included. gr_machine_close frees it
 * all; it is safe on a machine whose open failed and on a zeroed one. A machine is read-only
 * once open: several threads may read it at once. */
#ifndef GPURIG_MACHINE_H
#define GPURIG_MACHINE_H

#include <stdbool.h>

#include "analysis/analysis.h"
#include "analysis/cluster.h"
#include "analysis/power.h"
#include "analysis/predict.h"
#include "base/fs.h"
#include "load/source.h"
#include "model/topo.h"

enum gr_machine_flags {
  GR_MACHINE_PREDICT = 1 << 0, /* also the predictions (copy rates, all-reduce, verdicts) */
  GR_MACHINE_GROUPS = 1 << 1,  /* also the best ring of every group size (what a plan needs) */
};

struct gr_machine {
  struct gr_source src;     /* its strings point at the two copies below */
  char *src_path, *src_gpu_model;
  struct gr_fs fs;          /* the root prefix every read of this machine goes through */
  bool has_fs;              /* a LIVE or ROOT source: fs reads the machine's files */
  struct gr_topo topo;
  struct gr_analysis analysis;
  struct gr_prediction prediction; /* zeroed unless GR_MACHINE_PREDICT */
  bool predicted;
  struct gr_cluster_prediction cluster; /* with GR_MACHINE_PREDICT on a topology with a cluster (topo.cluster) */
  bool clustered;
  struct gr_power_budget power; /* a rig's power budget (its findings moved to analysis.findings) */
  bool has_power;               /* a rig with psu lines: the budget is worth printing */
};

/* Loads, analyses and (with GR_MACHINE_PREDICT) predicts. Returns 0, or -1
 * with err (GR_EXIT_FAIL bad input, GR_EXIT_CANNOT_RUN the machine could not
 * be read) and *m closed. Loader warnings stay in m->topo.warnings for the
 * caller to show. */
int gr_machine_open(const struct gr_source *src, unsigned flags, struct gr_machine *m, struct gr_err *err);

/* The bundled example (a real NVIDIA DGX-2H, data/examples/nvidiaDGX2.xml)
 * with predictions; a failure is GR_EXIT_CANNOT_RUN (gpurig's own file). */
int gr_machine_open_example(struct gr_machine *m, struct gr_err *err);
/* The example's path under the data directory. */
#define GR_EXAMPLE_XML "examples/nvidiaDGX2.xml"

void gr_machine_close(struct gr_machine *m);

#endif
