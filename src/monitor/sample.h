/* The dynamic part of a machine: what changes while it runs, read again by
 * one call without reloading the topology. From the machine's files (the
 * same root prefix it was loaded from): each PCIe link's current generation
 * and width and its AER error totals. From the GPU backend: each GPU's
 * dynamic values (link, power, temperature, utilisation, memory). The
 * static part (wiring, maxima, NUMA, drivers) stays in the machine.
 *
 * This is the step a sampler repeats (watch, export, burn-in): it reads
 * only, allocates its own result, and shares nothing with other samples, so
 * any number may be read at once from different threads.
 *
 * Ownership: gr_sample_read fills a struct gr_sample that owns its arrays;
 * free it with gr_sample_free. */
#ifndef GPURIG_SAMPLE_H
#define GPURIG_SAMPLE_H

#include <stdbool.h>
#include <stddef.h>

#include "analysis/machine.h"
#include "base/util.h"
#include "gpu/gpu.h"
#include "model/topo.h"

struct gr_sample {
  double mono_s;               /* CLOCK_MONOTONIC when the read began: for rates between samples */
  double real_s;               /* CLOCK_REALTIME, for timestamps shown or exported */
  struct gr_pci_dynamic *pci;  /* one per topology node (npci), NULL when the machine has no files
                                  (hwloc XML, rig): nothing there changes */
  size_t npci;
  struct gr_gpu_dynamic *gpu;  /* one per GPU as the backend numbers them, NULL without a backend */
  bool *gpu_ok;                /* false: that GPU did not answer (its values are all invalid) */
  char **gpu_error;            /* why, when !gpu_ok; NULL otherwise */
  unsigned ngpu;
};

/* Reads the dynamic part of machine m and, when g is non-NULL, of its GPUs.
 * A GPU that does not answer is recorded, not an error. Returns 0, or -1
 * with err when the machine's files are gone (the tree was removed). */
int gr_sample_read(const struct gr_machine *m, const struct gr_gpus *g, struct gr_sample *s, struct gr_err *err);
void gr_sample_free(struct gr_sample *s);

#endif
