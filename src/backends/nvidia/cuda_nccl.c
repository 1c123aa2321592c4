/* NCCL's all-reduce on CUDA: the GPU runtime calls backends/ccl/ccl.c makes
 * (memory, the stream and events of each GPU), and the backend's entries
 * that hand over to it. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "backends/ccl/ccl.h"
#include "backends/nvidia/cuda_internal.h"
#include "backends/nvidia/nv_api.h"

static gr_cu_deviceptr dptr(const void *p)
{
  return (gr_cu_deviceptr)(uintptr_t)p;
}

static int op_use(void *be, int dev)
{
  return cuda_use(be, dev);
}

static int op_alloc(void *be, int dev, size_t bytes, void **p)
{
  struct cuda *c = be;
  gr_cu_deviceptr d = 0;
  gr_cu_result r = c->f.MemAlloc(&d, bytes);
  *p = (void *)(uintptr_t)d;
  return r == GR_CUDA_SUCCESS ? 0 : cu_fail(c, r, "cuMemAlloc", dev);
}

static void op_free(void *be, int dev, void *p)
{
  (void)dev;
  ((struct cuda *)be)->f.MemFree(dptr(p));
}

static int op_fill32(void *be, int dev, void *p, uint32_t word, size_t words)
{
  struct cuda *c = be;
  gr_cu_result r = c->f.MemsetD32Async(dptr(p), word, words, c->d[dev].s[0]);
  return r == GR_CUDA_SUCCESS ? 0 : cu_fail(c, r, "cuMemsetD32Async", dev);
}

static int op_sync(void *be, int dev)
{
  struct cuda *c = be;
  gr_cu_result r = c->f.StreamSynchronize(c->d[dev].s[0]);
  return r == GR_CUDA_SUCCESS ? 0 : cu_fail(c, r, "cuStreamSynchronize", dev);
}

static int op_read(void *be, int dev, void *host, const void *p, size_t bytes)
{
  struct cuda *c = be;
  gr_cu_result r = c->f.MemcpyAsync(dptr(host), dptr(p), bytes, c->d[dev].s[0]);
  if (r != GR_CUDA_SUCCESS)
    return cu_fail(c, r, "cuMemcpyAsync", dev);
  return op_sync(be, dev);
}

static int op_record(void *be, int dev, int ev)
{
  struct cuda *c = be;
  gr_cu_result r = c->f.EventRecord(c->d[dev].ev[ev], c->d[dev].s[0]);
  return r == GR_CUDA_SUCCESS ? 0 : cu_fail(c, r, "cuEventRecord", dev);
}

static int op_elapsed(void *be, int dev, double *s)
{
  struct cuda *c = be;
  float ms = 0;
  gr_cu_result r = c->f.EventSynchronize(c->d[dev].ev[1]);
  if (r != GR_CUDA_SUCCESS)
    return cu_fail(c, r, "cuEventSynchronize", dev);
  r = c->f.EventElapsedTime(&ms, c->d[dev].ev[0], c->d[dev].ev[1]);
  if (r != GR_CUDA_SUCCESS)
    return cu_fail(c, r, "cuEventElapsedTime", dev);
  *s = ms / 1000.0;
  return 0;
}

static gr_nccl_result op_allreduce(void *be, void *fn, int dev, const void *send, void *recv, size_t count,
                                   gr_nccl_comm comm)
{
  struct cuda *c = be;
  gr_pfn_ncclAllReduce ar = (gr_pfn_ncclAllReduce)fn;
  return ar(send, recv, count, GR_NCCL_FLOAT32, GR_NCCL_SUM, comm, c->d[dev].s[0]);
}

static void op_probe_lost(void *be, int dev)
{
  probe_lost(be, dev);
}

static const struct gr_ccl_ops cuda_ccl_ops = {
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

void cuda_ccl_init(struct cuda *c)
{
  static const char *const sonames[] = {NCCL_SONAME, NULL};
  c->ccl = (struct gr_ccl){.lib = "NCCL", .sonames = sonames, .ops = &cuda_ccl_ops, .be = c, .err = c->err,
                           .err_cap = sizeof(c->err), .ngpus = c->n};
}

void cuda_nccl_version(struct cuda *c, struct gr_lib_version *out)
{
  gr_ccl_version(&c->ccl, out);
}

int cuda_transports(void *state, char *buf, size_t cap)
{
  return gr_ccl_transports(&((struct cuda *)state)->ccl, buf, cap);
}

int cuda_allreduce_open(void *state, size_t max_bytes, char *why, size_t cap)
{
  return gr_ccl_open(&((struct cuda *)state)->ccl, max_bytes, why, cap);
}

int cuda_unique_id(void *state, void *id, char *why, size_t cap)
{
  return gr_ccl_unique_id(&((struct cuda *)state)->ccl, id, why, cap);
}

int cuda_allreduce_open_ranks(void *state, size_t max_bytes, const void *id, int nranks, int first_rank,
                              const int *devs, int ndev, char *why, size_t cap)
{
  return gr_ccl_open_ranks(&((struct cuda *)state)->ccl, max_bytes, id, nranks, first_rank, devs, ndev, why, cap);
}

int cuda_allreduce(void *state, const struct gr_ar_spec *spec, struct gr_ar_sample *out)
{
  return gr_ccl_allreduce(&((struct cuda *)state)->ccl, spec, out);
}

const char *cuda_collective_name(void *state)
{
  return gr_ccl_name(&((struct cuda *)state)->ccl);
}
