/* Pinned host memory on one NUMA node, for every vendor's measurement
 * backend: the vendor's allocator (cuMemHostAlloc, hipHostMalloc) called
 * from a thread running on the node's CPUs, then first-touched there, so
 * that the pages land on the node the copies' GPU hangs off (nvbandwidth's
 * way). The thread's affinity is put back afterwards. */
#ifndef GPURIG_BACKENDS_PINNED_H
#define GPURIG_BACKENDS_PINNED_H

#include <stddef.h>

/* Calls alloc(ctx, &p, bytes) on node's CPUs (anywhere when node is -1 or
 * its CPUs cannot be read) and zeroes what it returns. Returns alloc's
 * result (0 success); *p is the allocator's, freed by its own free call. */
int gr_pinned_alloc(int node, int (*alloc)(void *ctx, void **p, size_t bytes), void *ctx, void **p, size_t bytes);

#endif
