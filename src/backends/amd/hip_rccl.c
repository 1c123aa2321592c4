/* RCCL's all-reduce on HIP: the GPU runtime calls backends/ccl/ccl.c makes
 * (memory, the stream and events of each GPU), and the backend's entries
 * that hand over to it. RCCL reads NCCL's environment (NCCL_DEBUG,
 * NCCL_DEBUG_FILE) and writes NCCL's log lines, so the transports are read
 * as NCCL's. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "backends/amd/hip_api.h"
#include "backends/amd/hip_internal.h"
#include "backends/ccl/ccl.h"

static int op_use(void *be, int dev)
{
  return hip_use(be, dev);
}

static int op_alloc(void *be, int dev, size_t bytes, void **p)
{
  struct hip *h = be;
  gr_hip_error r = h->f.Malloc(p, bytes);
  return r == GR_HIP_SUCCESS ? 0 : hip_fail(h, r, "hipMalloc", dev);
}

static void op_free(void *be, int dev, void *p)
{
  (void)dev;
  ((struct hip *)be)->f.Free(p);
}

static int op_fill32(void *be, int dev, void *p, uint32_t word, size_t words)
{
  struct hip *h = be;
  int value;
  memcpy(&value, &word, sizeof(value)); /* hipMemsetD32Async takes the bits as an int */
  gr_hip_error r = h->f.MemsetD32Async(p, value, words, h->d[dev].s[0]);
  return r == GR_HIP_SUCCESS ? 0 : hip_fail(h, r, "hipMemsetD32Async", dev);
}

static int op_sync(void *be, int dev)
{
  struct hip *h = be;
  gr_hip_error r = h->f.StreamSynchronize(h->d[dev].s[0]);
  return r == GR_HIP_SUCCESS ? 0 : hip_fail(h, r, "hipStreamSynchronize", dev);
}

static int op_read(void *be, int dev, void *host, const void *p, size_t bytes)
{
  struct hip *h = be;
  gr_hip_error r = h->f.MemcpyAsync(host, p, bytes, GR_HIP_MEMCPY_DEFAULT, h->d[dev].s[0]);
  if (r != GR_HIP_SUCCESS)
    return hip_fail(h, r, "hipMemcpyAsync", dev);
  return op_sync(be, dev);
}

static int op_record(void *be, int dev, int ev)
{
  struct hip *h = be;
  gr_hip_error r = h->f.EventRecord(h->d[dev].ev[ev], h->d[dev].s[0]);
  return r == GR_HIP_SUCCESS ? 0 : hip_fail(h, r, "hipEventRecord", dev);
}

static int op_elapsed(void *be, int dev, double *s)
{
  struct hip *h = be;
  float ms = 0;
  gr_hip_error r = h->f.EventSynchronize(h->d[dev].ev[1]);
  if (r != GR_HIP_SUCCESS)
    return hip_fail(h, r, "hipEventSynchronize", dev);
  r = h->f.EventElapsedTime(&ms, h->d[dev].ev[0], h->d[dev].ev[1]);
  if (r != GR_HIP_SUCCESS)
    return hip_fail(h, r, "hipEventElapsedTime", dev);
  *s = ms / 1000.0;
  return 0;
}

static gr_nccl_result op_allreduce(void *be, void *fn, int dev, const void *send, void *recv, size_t count,
                                   gr_nccl_comm comm)
{
  struct hip *h = be;
  gr_pfn_rcclAllReduce ar = (gr_pfn_rcclAllReduce)fn;
  return ar(send, recv, count, GR_NCCL_FLOAT32, GR_NCCL_SUM, comm, h->d[dev].s[0]);
}

static void op_probe_lost(void *be, int dev)
{
  hip_probe_lost(be, dev);
}

static const struct gr_ccl_ops hip_ccl_ops = {
    .use = op_use,
    .alloc = op_alloc,
    .free = op_free,
    .fill32 = op_fill32,
    .sync = op_sync,
    .read = op_read,
    .record = op_record,
    .elapsed = op_elapsed,
    .allreduce = op_allreduce,
    .probe_lost = op_probe_lost,
};

void hip_ccl_init(struct hip *h)
{
  /* ROCm ships librccl.so.1; the development link last */
  static const char *const sonames[] = {"librccl.so.1", "librccl.so", NULL};
  h->ccl = (struct gr_ccl){.lib = "RCCL", .sonames = sonames, .ops = &hip_ccl_ops, .be = h, .err = h->err,
                           .err_cap = sizeof(h->err), .ngpus = h->n};
}

int hip_transports(void *state, char *buf, size_t cap)
{
  return gr_ccl_transports(&((struct hip *)state)->ccl, buf, cap);
}

int hip_allreduce_open(void *state, size_t max_bytes, char *why, size_t cap)
{
  return gr_ccl_open(&((struct hip *)state)->ccl, max_bytes, why, cap);
}

int hip_unique_id(void *state, void *id, char *why, size_t cap)
{
  return gr_ccl_unique_id(&((struct hip *)state)->ccl, id, why, cap);
}

int hip_allreduce_open_ranks(void *state, size_t max_bytes, const void *id, int nranks, int first_rank,
                             const int *devs, int ndev, char *why, size_t cap)
{
  return gr_ccl_open_ranks(&((struct hip *)state)->ccl, max_bytes, id, nranks, first_rank, devs, ndev, why, cap);
}

int hip_allreduce(void *state, const struct gr_ar_spec *spec, struct gr_ar_sample *out)
{
  return gr_ccl_allreduce(&((struct hip *)state)->ccl, spec, out);
}

const char *hip_collective_name(void *state)
{
  return gr_ccl_name(&((struct hip *)state)->ccl);
}
