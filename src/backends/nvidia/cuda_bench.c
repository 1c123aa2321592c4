/* The NVIDIA measurement backend of gpurig bench: the CUDA driver API
 * (libcuda.so.1) for copies and NCCL (libnccl.so.2) for the all-reduce, both
 * opened at run time. Method as nvbandwidth: pinned host memory allocated by
 * the driver from a thread on the GPU's NUMA node, a spin kernel holding each
 * stream until all its copies are queued, warm-up copies before the start
 * event, CUDA events around the copies, an unrolled SM copy kernel looping
 * inside one launch, the data checked on the GPU after every timed run, and
 * pointer-chase latency. The kernels are PTX (bench_kernels.ptx) the driver
 * compiles.
 *
 * This file loads the driver and holds the devices and the backend table;
 * the copies and pointer chase are in cuda_copy.c, GEMM in cuda_gemm.c, the
 * all-reduce in cuda_nccl.c (backends/nvidia/cuda_internal.h). */
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backends/nvidia/nvidia.h"
#include "backends/pinned.h"
#include "base/dl.h"
#include "base/fs.h"
#include "backends/nvidia/nv_api.h"
#include "backends/nvidia/cuda_internal.h"

#define SYM(field, req, ...) {(void **)&c->f.field, {__VA_ARGS__}, req}

/* CUDA changed size_t-less signatures under _v2 names; only those are taken
 * (an unversioned cuMemAlloc would take a 32-bit size). */
static int bind_cuda(struct cuda *c, char *why, size_t cap)
{
  const struct gr_dl_sym syms[] = {
      SYM(Init, true, "cuInit"),
      SYM(DriverGetVersion, true, "cuDriverGetVersion"),
      SYM(GetErrorString, true, "cuGetErrorString"),
      SYM(DeviceGetCount, true, "cuDeviceGetCount"),
      SYM(DeviceGet, true, "cuDeviceGet"),
      SYM(DeviceGetPCIBusId, true, "cuDeviceGetPCIBusId"),
      SYM(DeviceGetAttribute, true, "cuDeviceGetAttribute"),
      SYM(DeviceCanAccessPeer, true, "cuDeviceCanAccessPeer"),
      SYM(PrimaryCtxRetain, true, "cuDevicePrimaryCtxRetain"),
      SYM(PrimaryCtxRelease, true, "cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease"),
      SYM(CtxSetCurrent, true, "cuCtxSetCurrent"),
      SYM(CtxEnablePeerAccess, true, "cuCtxEnablePeerAccess"),
      SYM(MemGetInfo, true, "cuMemGetInfo_v2"),
      SYM(MemAlloc, true, "cuMemAlloc_v2"),
      SYM(MemFree, true, "cuMemFree_v2"),
      SYM(MemHostAlloc, true, "cuMemHostAlloc"),
      SYM(MemFreeHost, true, "cuMemFreeHost"),
      SYM(MemHostGetDevicePointer, true, "cuMemHostGetDevicePointer_v2"),
      SYM(MemcpyAsync, true, "cuMemcpyAsync"),
      SYM(MemcpyPeerAsync, true, "cuMemcpyPeerAsync"),
      SYM(MemsetD32Async, true, "cuMemsetD32Async"),
      SYM(StreamCreate, true, "cuStreamCreate"),
      SYM(StreamDestroy, true, "cuStreamDestroy_v2", "cuStreamDestroy"),
      SYM(StreamSynchronize, true, "cuStreamSynchronize"),
      SYM(StreamWaitEvent, true, "cuStreamWaitEvent"),
      SYM(EventCreate, true, "cuEventCreate"),
      SYM(EventDestroy, true, "cuEventDestroy_v2", "cuEventDestroy"),
      SYM(EventRecord, true, "cuEventRecord"),
      SYM(EventSynchronize, true, "cuEventSynchronize"),
      SYM(EventElapsedTime, true, "cuEventElapsedTime_v2", "cuEventElapsedTime"),
      SYM(ModuleLoadData, true, "cuModuleLoadData"),
      SYM(ModuleUnload, true, "cuModuleUnload"),
      SYM(ModuleGetFunction, true, "cuModuleGetFunction"),
      SYM(LaunchKernel, true, "cuLaunchKernel"),
  };
  return gr_dl_bind(c->lib, CUDA_SONAME, syms, sizeof(syms) / sizeof(syms[0]), why, cap);
}
#undef SYM

static const char *cu_str(struct cuda *c, gr_cu_result r)
{
  const char *s = NULL;
  if (c->f.GetErrorString(r, &s) != GR_CUDA_SUCCESS || !s)
    s = "unrecognised error";
  return s;
}

/* Records the first failure of a run; returns -1 for `return cu_check(...)`. */
int cu_fail(struct cuda *c, gr_cu_result r, const char *what, int dev)
{
  if (!c->err[0]) {
    if (dev >= 0)
      snprintf(c->err, sizeof(c->err), "%s on GPU%d: CUDA error %u (%s)", what, dev, r, cu_str(c, r));
    else
      snprintf(c->err, sizeof(c->err), "%s: CUDA error %u (%s)", what, r, cu_str(c, r));
  }
  return -1;
}

int cuda_use(struct cuda *c, int dev)
{
  gr_cu_result r = c->f.CtxSetCurrent(c->d[dev].ctx);
  return r == GR_CUDA_SUCCESS ? 0 : cu_fail(c, r, "cuCtxSetCurrent", dev);
}

/* ------------------------------------------------------------ host memory */

static void host_free(struct cuda *c, struct host_buf *h)
{
  if (!h->p)
    return;
  c->f.MemFreeHost(h->p);
  memset(h, 0, sizeof(*h));
}

/* cuMemHostAlloc with nvbandwidth's flags, for gr_pinned_alloc. */
static int cu_host_alloc(void *ctx, void **p, size_t bytes)
{
  struct cuda *c = ctx;
  return (int)c->f.MemHostAlloc(p, bytes, GR_CU_MEMHOSTALLOC_PORTABLE | GR_CU_MEMHOSTALLOC_DEVICEMAP);
}

/* Pinned host memory as nvbandwidth makes it (perf review, item 5): the
 * driver's own cuMemHostAlloc (PORTABLE | DEVICEMAP), called from a thread
 * running on the CPUs of the GPU's NUMA node, so that the pages the driver
 * pins land on that node, then first-touched there (backends/pinned.c).
 * Registering mmap'ed 4 KiB pages (cuMemHostRegister) gives another page
 * layout, which with a translating IOMMU can read lower than
 * driver-allocated memory. */
static int host_alloc(struct cuda *c, struct host_buf *h, size_t bytes, int node, int dev)
{
  void *p = NULL;
  gr_cu_result r = (gr_cu_result)gr_pinned_alloc(node, cu_host_alloc, c, &p, bytes);
  if (r != GR_CUDA_SUCCESS)
    return cu_fail(c, r, "cuMemHostAlloc", dev);
  h->p = p;
  h->bytes = bytes;
  r = c->f.MemHostGetDevicePointer(&h->dptr, p, 0);
  if (r != GR_CUDA_SUCCESS) {
    host_free(c, h);
    return cu_fail(c, r, "cuMemHostGetDevicePointer", dev);
  }
  return 0;
}

/* ---------------------------------------------------------------- pattern */

/* The pattern a buffer holds: different per buffer and per word, so a copy
 * from the wrong place or a stale word shows. */
uint32_t pattern_word(unsigned tag, size_t i)
{
  return (uint32_t)(i * 2654435761u) ^ (0x5a5a0000u | (tag & 0xffff));
}

static void pattern_fill(uint32_t *w, size_t words, unsigned tag)
{
  for (size_t i = 0; i < words; i++)
    w[i] = pattern_word(tag, i);
}

unsigned buf_tag(int dev, bool host)
{
  return (unsigned)(dev + 1) << 4 | (host ? 0x8u : 0u);
}

/* ------------------------------------------------------- device resources */

static void dev_free_buffers(struct cuda *c, struct cudev *d)
{
  for (int i = 0; i < 2; i++) {
    if (d->buf[i])
      c->f.MemFree(d->buf[i]);
    d->buf[i] = 0;
    host_free(c, &d->host[i]);
  }
  d->buf_bytes = 0;
  d->chain_nodes = 0;
}

/* Gives GPU dev source and destination buffers of `bytes`, on the GPU and
 * pinned on its NUMA node, with the sources holding their pattern. */
int ensure_buffers(struct cuda *c, int dev, size_t bytes)
{
  struct cudev *d = &c->d[dev];
  int rc = 0;
  if (d->buf_bytes >= bytes)
    return 0;
  if (cuda_use(c, dev) != 0)
    return -1;
  dev_free_buffers(c, d);
  if (!d->scratch) /* here, not at open: an all-reduce-only run (bench --mpi) keeps all its memory */
    CU(c->f.MemAlloc(&d->scratch, 32), "cuMemAlloc", dev);
  for (int i = 0; i < 2; i++) {
    CU(c->f.MemAlloc(&d->buf[i], bytes), "cuMemAlloc", dev);
    if (host_alloc(c, &d->host[i], bytes, d->numa, dev) != 0) {
      rc = -1;
      goto out;
    }
  }
  d->buf_bytes = bytes;
  pattern_fill(d->host[0].p, bytes / 4, buf_tag(dev, true));
  pattern_fill(d->host[1].p, bytes / 4, buf_tag(dev, false)); /* staging for the device source */
  CU(c->f.MemcpyAsync(d->buf[0], (gr_cu_deviceptr)(uintptr_t)d->host[1].p, bytes, d->s[0]), "cuMemcpyAsync", dev);
  CU(c->f.StreamSynchronize(d->s[0]), "cuStreamSynchronize", dev);
out:
  if (rc != 0)
    dev_free_buffers(c, d);
  return rc;
}

void ensure_check(struct cuda *c, size_t bytes)
{
  if (c->check_bytes >= bytes)
    return;
  free(c->check);
  c->check = xmalloc(bytes);
  c->check_bytes = bytes;
}

static int dev_open(struct cuda *c, int i)
{
  struct cudev *d = &c->d[i];
  int rc = 0;
  d->numa = -1;
  d->peer_on = xcalloc((size_t)c->n, sizeof(bool));
  CU(c->f.DeviceGet(&d->dev, i), "cuDeviceGet", i);
  CU(c->f.PrimaryCtxRetain(&d->ctx, d->dev), "cuDevicePrimaryCtxRetain", i);
  d->ctx_held = true;
  if (cuda_use(c, i) != 0)
    return -1;
  CU(c->f.DeviceGetAttribute(&d->sms, GR_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, d->dev), "cuDeviceGetAttribute", i);
  for (int s = 0; s < 2; s++)
    CU(c->f.StreamCreate(&d->s[s], GR_CU_STREAM_NON_BLOCKING), "cuStreamCreate", i);
  for (int e = 0; e < 4; e++)
    CU(c->f.EventCreate(&d->ev[e], GR_CU_EVENT_DEFAULT), "cuEventCreate", i);
  CU(c->f.ModuleLoadData(&d->mod, gr_bench_ptx), "cuModuleLoadData (the PTX kernels)", i);
  CU(c->f.ModuleGetFunction(&d->spin, d->mod, "gr_spin"), "cuModuleGetFunction gr_spin", i);
  CU(c->f.ModuleGetFunction(&d->copyk, d->mod, "gr_copy"), "cuModuleGetFunction gr_copy", i);
  CU(c->f.ModuleGetFunction(&d->comparek, d->mod, "gr_compare"), "cuModuleGetFunction gr_compare", i);
  CU(c->f.ModuleGetFunction(&d->chasek, d->mod, "gr_chase"), "cuModuleGetFunction gr_chase", i);
out:
  return rc;
}

static void dev_close(struct cuda *c, int i)
{
  struct cudev *d = &c->d[i];
  if (d->ctx_held && c->f.CtxSetCurrent(d->ctx) == GR_CUDA_SUCCESS) {
    dev_free_buffers(c, d);
    if (d->scratch)
      c->f.MemFree(d->scratch);
    for (int e = 0; e < 4; e++)
      if (d->ev[e])
        c->f.EventDestroy(d->ev[e]);
    for (int s = 0; s < 2; s++)
      if (d->s[s])
        c->f.StreamDestroy(d->s[s]);
    if (d->mod)
      c->f.ModuleUnload(d->mod);
    if (d->blas)
      c->BlasDestroy(d->blas);
    gr_cu_deviceptr g[3] = {d->ga, d->gb, d->gc};
    for (int k = 0; k < 3; k++)
      if (g[k])
        c->f.MemFree(g[k]);
  }
  if (d->ctx_held)
    c->f.PrimaryCtxRelease(d->dev);
  free(d->peer_on);
  memset(d, 0, sizeof(*d));
}

/* ------------------------------------------------------------- lifecycle */

static void cuda_shutdown(void *state)
{
  struct cuda *c = state;
  if (!c)
    return;
  if (c->ccl.ops) /* first: its buffers are freed on their GPUs */
    gr_ccl_close(&c->ccl);
  for (int i = 0; c->d && i < c->n; i++)
    dev_close(c, i);
  if (c->flag)
    c->f.MemFreeHost(c->flag);
  if (c->res)
    c->f.MemFreeHost(c->res);
  free(c->d);
  free(c->check);
  free(c->gemm_expect);
  gr_dl_close(c->blas_lib);
  gr_dl_close(c->lib);
  free(c);
}

static int open_devices(struct cuda *c, char *why, size_t cap)
{
  int rc = 0;
  CU(c->f.Init(0), "cuInit", -1);
  CU(c->f.DeviceGetCount(&c->n), "cuDeviceGetCount", -1);
  if (c->n <= 0) {
    snprintf(why, cap, "the NVIDIA driver sees no GPU (%s: cuDeviceGetCount is 0)", CUDA_SONAME);
    return -1;
  }
  c->d = xcalloc((size_t)c->n, sizeof(*c->d));
  cuda_ccl_init(c);
  for (int i = 0; i < c->n && rc == 0; i++)
    rc = dev_open(c, i);
  if (rc != 0 || (rc = cuda_use(c, 0)) != 0)
    goto out;
  CU(c->f.MemHostAlloc((void **)&c->flag, (1 + SPIN_SLOTS) * sizeof(int),
                       GR_CU_MEMHOSTALLOC_PORTABLE | GR_CU_MEMHOSTALLOC_DEVICEMAP),
     "cuMemHostAlloc", 0);
  CU(c->f.MemHostGetDevicePointer(&c->flag_dptr, c->flag, 0), "cuMemHostGetDevicePointer", 0);
  CU(c->f.MemHostAlloc((void **)&c->res, 4 * sizeof(uint64_t), GR_CU_MEMHOSTALLOC_PORTABLE), "cuMemHostAlloc", 0);
out:
  if (rc != 0)
    snprintf(why, cap, "%s", c->err);
  return rc;
}

static int cuda_init(void **state, char *why, size_t cap)
{
  struct cuda *c = xcalloc(1, sizeof(*c));
  char detail[512];
  c->lib = gr_dl_open(CUDA_SONAME, detail, sizeof(detail));
  if (!c->lib)
    snprintf(why, cap, "no NVIDIA driver found (%s)", detail);
  if (!c->lib || bind_cuda(c, why, cap) != 0 || open_devices(c, why, cap) != 0) {
    cuda_shutdown(c);
    *state = NULL;
    return -1;
  }
  *state = c;
  return 0;
}

/* The CUDA driver's and NCCL's versions, for doctor's inventory: the
 * libraries are loaded as for a measurement, but no cuInit, no GPU and no
 * context (cuDriverGetVersion needs none), so it costs a busy node nothing.
 * A library that opens is present, with its version where it gives one. */
static void cuda_versions(struct gr_lib_version *runtime, struct gr_lib_version *collective)
{
  struct cuda *c = xcalloc(1, sizeof(*c));
  char why[512];
  int v = 0;
  memset(runtime, 0, sizeof(*runtime));
  /* only the one call: a driver too old for the measurements still says its version */
  const struct gr_dl_sym sym[] = {{(void **)&c->f.DriverGetVersion, {"cuDriverGetVersion"}, true}};
  c->lib = gr_dl_open(CUDA_SONAME, why, sizeof(why));
  runtime->state = c->lib ? GR_LIB_PRESENT : GR_LIB_ABSENT;
  /* CUDA_VERSION: major*1000 + minor*10 */
  if (c->lib && gr_dl_bind(c->lib, CUDA_SONAME, sym, 1, why, sizeof(why)) == 0 &&
      c->f.DriverGetVersion(&v) == GR_CUDA_SUCCESS && v > 0)
    snprintf(runtime->version, sizeof(runtime->version), "%d.%d", v / 1000, v % 1000 / 10);
  cuda_ccl_init(c);
  cuda_nccl_version(c, collective);
  gr_ccl_close(&c->ccl);
  gr_dl_close(c->lib);
  free(c);
}

static const char *cuda_last_error(void *state)
{
  return ((struct cuda *)state)->err;
}

static int cuda_device_count(void *state)
{
  return ((struct cuda *)state)->n;
}

static int cuda_device_busid(void *state, int dev, char *buf, size_t cap)
{
  struct cuda *c = state;
  gr_cu_result r = c->f.DeviceGetPCIBusId(buf, (int)cap, c->d[dev].dev);
  return r == GR_CUDA_SUCCESS ? 0 : cu_fail(c, r, "cuDeviceGetPCIBusId", dev);
}

static void cuda_set_numa(void *state, int dev, int node)
{
  ((struct cuda *)state)->d[dev].numa = node;
}

bool cuda_can_peer(void *state, int a, int b)
{
  struct cuda *c = state;
  int ok = 0;
  return c->f.DeviceCanAccessPeer(&ok, c->d[a].dev, c->d[b].dev) == GR_CUDA_SUCCESS && ok;
}

static size_t cuda_free_bytes(void *state, int dev)
{
  struct cuda *c = state;
  size_t fr = 0, total = 0;
  if (cuda_use(c, dev) != 0 || c->f.MemGetInfo(&fr, &total) != GR_CUDA_SUCCESS)
    return 0;
  return fr;
}

static bool cuda_device_lost(void *state, int dev)
{
  return ((struct cuda *)state)->d[dev].lost;
}

/* After a failed call: a GPU whose context no longer answers is lost. */
void probe_lost(struct cuda *c, int dev)
{
  size_t fr, total;
  if (dev < 0 || c->d[dev].lost)
    return;
  if (c->f.CtxSetCurrent(c->d[dev].ctx) != GR_CUDA_SUCCESS || c->f.MemGetInfo(&fr, &total) != GR_CUDA_SUCCESS)
    c->d[dev].lost = true;
}

const struct gr_bench_backend gr_bench_cuda = {
    .copy_many = cuda_copy_many,
    .chase = cuda_chase,
    .gemm_open = cuda_gemm_open,
    .gemm = cuda_gemm,
    .name = "cuda",
    .init = cuda_init,
    .shutdown = cuda_shutdown,
    .last_error = cuda_last_error,
    .device_count = cuda_device_count,
    .device_busid = cuda_device_busid,
    .set_numa = cuda_set_numa,
    .can_peer = cuda_can_peer,
    .free_bytes = cuda_free_bytes,
    .copy = cuda_copy,
    .device_lost = cuda_device_lost,
    .allreduce_open = cuda_allreduce_open,
    .allreduce = cuda_allreduce,
    .collective_name = cuda_collective_name,
    .transports = cuda_transports,
    .unique_id = cuda_unique_id,
    .allreduce_open_ranks = cuda_allreduce_open_ranks,
    .collective = "NCCL",
    .collective_install = "Install NCCL (Debian/Ubuntu: libnccl2 from NVIDIA's CUDA repository) to measure it.",
    .collective_debug = "NCCL_DEBUG=INFO",
    .blas_install = "install cuBLAS",
    .hide_env = "CUDA_VISIBLE_DEVICES",
    .versions = cuda_versions,
};
