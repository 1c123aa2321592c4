/* The dynamic part of a machine: what changes while it runs, read again by
 * one call without reloading the topology. From the machine's files (the
 * same root prefix it was loaded from): each PCIe link's current generation
 * and width and its AER error totals. From the GPU backend: each GPU's
 * dynamic values (clocks, power, temperatures, throttle reasons, PCIe
 * traffic and replays, ECC, NVLink errors). The static part (wiring,
 * maxima, NUMA, drivers) stays in the machine.
 *
 * gr_sample_read is the one-shot read (every GPU in turn, no time limit).
 * The sampler (sampler.h) repeats the same reads into samples it allocated
 * once, each GPU on its own thread with a time limit.
 *
 * Ownership: gr_sample_alloc and gr_sample_read fill a struct gr_sample
 * that owns its arrays; free it with gr_sample_free. */
#ifndef GPURIG_SAMPLE_H
#define GPURIG_SAMPLE_H

#include <stdbool.h>
#include <stddef.h>

#include "analysis/machine.h"
#include "base/util.h"
#include "gpu/gpu.h"
#include "model/topo.h"

/* How a GPU's values in a sample came. */
enum gr_gpu_read {
  GR_READ_FRESH, /* read for this sample */
  GR_READ_STALE, /* the GPU did not answer in time: its last values, kept (gpu_age_s says how old) */
  GR_READ_LOST,  /* the GPU answered that it is gone, or never answered: every value invalid */
};

struct gr_sample {
  double mono_s;               /* CLOCK_MONOTONIC when the read began: for rates between samples */
  double real_s;               /* CLOCK_REALTIME, for timestamps shown or exported */
  struct gr_pci_dynamic *pci;  /* one per topology node (npci), NULL when the machine has no files
                                  (hwloc XML, rig): nothing there changes */
  size_t npci;
  struct gr_gpu_dynamic *gpu;  /* one per GPU as the backend numbers them, NULL without a backend */
  enum gr_gpu_read *gpu_read;
  double *gpu_age_s;           /* seconds since the values were read (0 fresh) */
  char (*gpu_error)[160];      /* why, when not fresh; "" otherwise */
  unsigned ngpu;
};

/* Arrays for npci nodes (0: none) and ngpu GPUs, all values invalid. */
void gr_sample_alloc(struct gr_sample *s, size_t npci, unsigned ngpu);
/* Copies src's values into dst, both allocated with the same counts. */
void gr_sample_copy(struct gr_sample *dst, const struct gr_sample *src);

/* Reads the dynamic part of machine m and, when g is non-NULL, of its GPUs.
 * A GPU that does not answer is recorded, not an error. Returns 0, or -1
 * with err when the machine's files are gone (the tree was removed). */
int gr_sample_read(const struct gr_machine *m, const struct gr_gpus *g, struct gr_sample *s, struct gr_err *err);
void gr_sample_free(struct gr_sample *s);

/* The current time of a clock in seconds (CLOCK_MONOTONIC, CLOCK_REALTIME). */
double gr_clock_s(int clock_id);

#endif
