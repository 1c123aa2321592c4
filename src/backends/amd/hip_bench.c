/* The AMD measurement backend of gpurig bench and burn: the HIP runtime
 * (libamdhip64) for copies, rocBLAS for burn's matrix products and RCCL
 * for the all-reduce, all opened at run time. The method follows the CUDA
 * backend's where HIP allows it: pinned host memory allocated by the
 * runtime from a thread on the GPU's NUMA node, warm-up copies before the
 * start event, HIP events around the copies, peer access enabled both ways,
 * and the data checked after every timed run.
 *
 * What it cannot do: HIP cannot load the PTX kernels the CUDA backend
 * compiles at run time (bench_kernels.ptx), and a HIP kernel would have to
 * be built for each GPU's ISA (gfx906, gfx90a, gfx1100, ...) with a ROCm
 * compiler at build time. So there is no SM (shader) copy, no pointer chase
 * and no spin kernel. The spin kernel holds a stream until every copy of a
 * run is queued, so the start event is taken with the queue full; here the
 * copies start as they are queued, behind the warm-up copies, and a run
 * whose copies are shorter than the host's time to queue the next one
 * reads low. At the sizes bench uses (4 MiB and up, 100 us and more per
 * copy at 25 GB/s) queuing stays ahead. A destination in GPU memory is
 * checked by copying it back to pinned host memory and comparing there
 * (the CUDA backend compares on the GPU): one more device-to-host copy of
 * the buffer per run, outside the timed copies (about 10 ms for 256 MiB at
 * 25 GB/s) and a host pass over it.
 *
 * This file loads the runtime and holds the devices and the backend table;
 * the copies are in hip_copy.c, GEMM in hip_gemm.c, the all-reduce in
 * hip_rccl.c (backends/amd/hip_internal.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/amd/amd.h"
#include "backends/amd/hip_api.h"
#include "backends/amd/hip_internal.h"
#include "backends/pinned.h"
#include "base/dl.h"
#include "base/util.h"

/* ROCm 7, 6 and 5 (Debian bookworm ships 5.2), then the development link */
static const char *const hip_sonames[] = {"libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5",
                                          "libamdhip64.so", NULL};

#define SYM(field, ...) {(void **)&h->f.field, {__VA_ARGS__}, true}

static int bind_hip(struct hip *h, const char *soname, char *why, size_t cap)
{
  const struct gr_dl_sym syms[] = {
      SYM(Init, "hipInit"),
      SYM(GetErrorString, "hipGetErrorString"),
      SYM(GetDeviceCount, "hipGetDeviceCount"),
      SYM(SetDevice, "hipSetDevice"),
      SYM(DeviceGetPCIBusId, "hipDeviceGetPCIBusId"),
      SYM(DeviceCanAccessPeer, "hipDeviceCanAccessPeer"),
      SYM(DeviceEnablePeerAccess, "hipDeviceEnablePeerAccess"),
      SYM(MemGetInfo, "hipMemGetInfo"),
      SYM(Malloc, "hipMalloc"),
      SYM(Free, "hipFree"),
      SYM(HostMalloc, "hipHostMalloc"),
      SYM(HostFree, "hipHostFree"),
      SYM(MemcpyAsync, "hipMemcpyAsync"),
      SYM(MemcpyPeerAsync, "hipMemcpyPeerAsync"),
      SYM(MemsetD32Async, "hipMemsetD32Async"),
      SYM(StreamCreateWithFlags, "hipStreamCreateWithFlags"),
      SYM(StreamDestroy, "hipStreamDestroy"),
      SYM(StreamSynchronize, "hipStreamSynchronize"),
      SYM(StreamWaitEvent, "hipStreamWaitEvent"),
      SYM(EventCreate, "hipEventCreate"),
      SYM(EventDestroy, "hipEventDestroy"),
      SYM(EventRecord, "hipEventRecord"),
      SYM(EventSynchronize, "hipEventSynchronize"),
      SYM(EventElapsedTime, "hipEventElapsedTime"),
  };
  return gr_dl_bind(h->lib, soname, syms, sizeof(syms) / sizeof(syms[0]), why, cap);
}
#undef SYM

/* Records the first failure of a run; returns -1. */
int hip_fail(struct hip *h, gr_hip_error r, const char *what, int dev)
{
  const char *s = h->f.GetErrorString ? h->f.GetErrorString(r) : NULL;
  if (!h->err[0]) {
    if (dev >= 0)
      snprintf(h->err, sizeof(h->err), "%s on GPU%d: HIP error %u (%s)", what, dev, r, s ? s : "?");
    else
      snprintf(h->err, sizeof(h->err), "%s: HIP error %u (%s)", what, r, s ? s : "?");
  }
  return -1;
}

int hip_use(struct hip *h, int dev)
{
  gr_hip_error r = h->f.SetDevice(dev);
  return r == GR_HIP_SUCCESS ? 0 : hip_fail(h, r, "hipSetDevice", dev);
}

/* ---------------------------------------------------------------- pattern */

/* The pattern a buffer holds, as the CUDA backend's: different per buffer
 * and per word, so a copy from the wrong place or a stale word shows. */
uint32_t hip_pattern_word(unsigned tag, size_t i)
{
  return (uint32_t)(i * 2654435761u) ^ (0x5a5a0000u | (tag & 0xffff));
}

unsigned hip_buf_tag(int dev, bool host)
{
  return (unsigned)(dev + 1) << 4 | (host ? 0x8u : 0u);
}

static void pattern_fill(uint32_t *w, size_t words, unsigned tag)
{
  for (size_t i = 0; i < words; i++)
    w[i] = hip_pattern_word(tag, i);
}

/* ------------------------------------------------------------ host memory */

/* hipHostMalloc for gr_pinned_alloc, with the GPU current. NumaUser: the
 * pages follow the calling thread's NUMA placement (the node's CPUs it
 * runs on), not the node HIP would pick for the current GPU, so the node
 * is the one gpurig's topology names, as on the CUDA path. */
static int hip_host_alloc(void *ctx, void **p, size_t bytes)
{
  struct hip *h = ctx;
  return (int)h->f.HostMalloc(p, bytes, GR_HIP_HOST_MALLOC_PORTABLE | GR_HIP_HOST_MALLOC_NUMA_USER);
}

static int host_alloc(struct hip *h, void **p, size_t bytes, int node, int dev)
{
  gr_hip_error r = (gr_hip_error)gr_pinned_alloc(node, hip_host_alloc, h, p, bytes);
  return r == GR_HIP_SUCCESS ? 0 : hip_fail(h, r, "hipHostMalloc", dev);
}

int hip_ensure_check(struct hip *h, size_t bytes)
{
  if (h->check_bytes >= bytes)
    return 0;
  if (h->check)
    h->f.HostFree(h->check);
  h->check = NULL;
  h->check_bytes = 0;
  gr_hip_error r = h->f.HostMalloc((void **)&h->check, bytes, GR_HIP_HOST_MALLOC_PORTABLE);
  if (r != GR_HIP_SUCCESS)
    return hip_fail(h, r, "hipHostMalloc", -1);
  h->check_bytes = bytes;
  return 0;
}

/* ------------------------------------------------------- device resources */

static void dev_free_buffers(struct hip *h, struct hipdev *d)
{
  for (int i = 0; i < 2; i++) {
    if (d->buf[i])
      h->f.Free(d->buf[i]);
    if (d->host[i])
      h->f.HostFree(d->host[i]);
    d->buf[i] = d->host[i] = NULL;
  }
  d->buf_bytes = 0;
}

/* Gives GPU dev source and destination buffers of `bytes`, on the GPU and
 * pinned on its NUMA node, with the sources holding their pattern. */
int hip_ensure_buffers(struct hip *h, int dev, size_t bytes)
{
  struct hipdev *d = &h->d[dev];
  int rc = 0;
  if (d->buf_bytes >= bytes)
    return 0;
  if (hip_use(h, dev) != 0)
    return -1;
  dev_free_buffers(h, d);
  for (int i = 0; i < 2; i++) {
    HIP(h->f.Malloc(&d->buf[i], bytes), "hipMalloc", dev);
    if ((rc = host_alloc(h, &d->host[i], bytes, d->numa, dev)) != 0)
      goto out;
  }
  d->buf_bytes = bytes;
  pattern_fill(d->host[0], bytes / 4, hip_buf_tag(dev, true));
  pattern_fill(d->host[1], bytes / 4, hip_buf_tag(dev, false)); /* staging for the device source */
  HIP(h->f.MemcpyAsync(d->buf[0], d->host[1], bytes, GR_HIP_MEMCPY_DEFAULT, d->s[0]), "hipMemcpyAsync", dev);
  HIP(h->f.StreamSynchronize(d->s[0]), "hipStreamSynchronize", dev);
out:
  if (rc != 0)
    dev_free_buffers(h, d);
  return rc;
}

static int dev_open(struct hip *h, int i)
{
  struct hipdev *d = &h->d[i];
  int rc = 0;
  d->numa = -1;
  d->peer_on = xcalloc((size_t)h->n, sizeof(bool));
  if (hip_use(h, i) != 0)
    return -1;
  for (int s = 0; s < 2; s++)
    HIP(h->f.StreamCreateWithFlags(&d->s[s], GR_HIP_STREAM_NON_BLOCKING), "hipStreamCreateWithFlags", i);
  for (int e = 0; e < 4; e++)
    HIP(h->f.EventCreate(&d->ev[e]), "hipEventCreate", i);
out:
  return rc;
}

static void dev_close(struct hip *h, int i)
{
  struct hipdev *d = &h->d[i];
  if (h->f.SetDevice(i) == GR_HIP_SUCCESS) {
    dev_free_buffers(h, d);
    for (int e = 0; e < 4; e++)
      if (d->ev[e])
        h->f.EventDestroy(d->ev[e]);
    for (int s = 0; s < 2; s++)
      if (d->s[s])
        h->f.StreamDestroy(d->s[s]);
  }
  free(d->peer_on);
  memset(d, 0, sizeof(*d));
}

/* ------------------------------------------------------------- lifecycle */

static void hip_shutdown(void *state)
{
  struct hip *h = state;
  if (!h)
    return;
  if (h->ccl.ops) /* first: its buffers are freed on their GPUs */
    gr_ccl_close(&h->ccl);
  hip_gemm_close(h);
  for (int i = 0; h->d && i < h->n; i++)
    dev_close(h, i);
  if (h->check)
    h->f.HostFree(h->check);
  free(h->d);
  gr_dl_close(h->lib);
  free(h);
}

static int open_devices(struct hip *h, const char *soname, char *why, size_t cap)
{
  int rc = 0;
  gr_hip_error r = h->f.Init(0);
  if (r == GR_HIP_SUCCESS)
    r = h->f.GetDeviceCount(&h->n);
  if (r != GR_HIP_SUCCESS || h->n <= 0) { /* HIP answers an error, not 0 GPUs, on a machine without AMD GPUs */
    const char *s = h->f.GetErrorString(r);
    snprintf(why, cap, "the AMD driver sees no GPU (%s: HIP error %u, %s)", soname, r, s ? s : "?");
    return -1;
  }
  h->d = xcalloc((size_t)h->n, sizeof(*h->d));
  hip_ccl_init(h);
  for (int i = 0; i < h->n && rc == 0; i++)
    rc = dev_open(h, i);
  if (rc != 0)
    snprintf(why, cap, "%s", h->err);
  return rc;
}

static int hip_init(void **state, char *why, size_t cap)
{
  struct hip *h = xcalloc(1, sizeof(*h));
  char detail[512] = "";
  const char *soname = NULL;
  for (size_t i = 0; hip_sonames[i] && !h->lib; i++)
    if ((h->lib = gr_dl_open(hip_sonames[i], detail, sizeof(detail))) != NULL)
      soname = hip_sonames[i];
  if (!h->lib)
    snprintf(why, cap, "no AMD HIP runtime found (%s)", detail);
  /* hipErrorNoDevice at hipInit is a machine without AMD GPUs */
  if (!h->lib || bind_hip(h, soname, why, cap) != 0 || open_devices(h, soname, why, cap) != 0) {
    hip_shutdown(h);
    *state = NULL;
    return -1;
  }
  *state = h;
  return 0;
}

static const char *hip_last_error(void *state)
{
  return ((struct hip *)state)->err;
}

static int hip_device_count(void *state)
{
  return ((struct hip *)state)->n;
}

static int hip_device_busid(void *state, int dev, char *buf, size_t cap)
{
  struct hip *h = state;
  gr_hip_error r = h->f.DeviceGetPCIBusId(buf, (int)cap, dev);
  return r == GR_HIP_SUCCESS ? 0 : hip_fail(h, r, "hipDeviceGetPCIBusId", dev);
}

static void hip_set_numa(void *state, int dev, int node)
{
  ((struct hip *)state)->d[dev].numa = node;
}

bool hip_can_peer(void *state, int a, int b)
{
  struct hip *h = state;
  int ok = 0;
  return h->f.DeviceCanAccessPeer(&ok, a, b) == GR_HIP_SUCCESS && ok;
}

static size_t hip_free_bytes(void *state, int dev)
{
  struct hip *h = state;
  size_t fr = 0, total = 0;
  if (hip_use(h, dev) != 0 || h->f.MemGetInfo(&fr, &total) != GR_HIP_SUCCESS)
    return 0;
  return fr;
}

static bool hip_device_lost(void *state, int dev)
{
  return ((struct hip *)state)->d[dev].lost;
}

/* After a failed call: a GPU that no longer answers is lost. */
void hip_probe_lost(struct hip *h, int dev)
{
  size_t fr, total;
  if (dev < 0 || dev >= h->n || h->d[dev].lost)
    return;
  if (h->f.SetDevice(dev) != GR_HIP_SUCCESS || h->f.MemGetInfo(&fr, &total) != GR_HIP_SUCCESS)
    h->d[dev].lost = true;
}

/* HIP_VERSION as text: "6.0.32830". Before HIP 3.x (HCC) hipDriverGetVersion
 * answered a fixed 4, which names no release: no version then. */
static void hip_version_text(int v, char *buf, size_t cap)
{
  if (v >= 10000000)
    snprintf(buf, cap, "%d.%d.%d", v / 10000000, v / 100000 % 100, v % 100000);
}

/* HIP's runtime and driver versions and RCCL's, for doctor's inventory: the
 * libraries are opened as for a measurement but no GPU is used. Unlike
 * cuDriverGetVersion, HIP's version calls start HIP's runtime (it lists the
 * GPUs through the kernel driver, as any HIP program does first), so the
 * caller asks only on a machine with AMD GPUs. */
static void hip_versions(struct gr_lib_version *runtime, struct gr_lib_version *collective)
{
  struct hip *h = xcalloc(1, sizeof(*h));
  char why[512] = "";
  gr_pfn_hipRuntimeGetVersion rt = NULL;
  gr_pfn_hipDriverGetVersion drv = NULL;
  int v = 0;
  memset(runtime, 0, sizeof(*runtime));
  for (size_t i = 0; hip_sonames[i] && !h->lib; i++)
    h->lib = gr_dl_open(hip_sonames[i], why, sizeof(why));
  runtime->state = h->lib ? GR_LIB_PRESENT : GR_LIB_ABSENT;
  /* only these two: a HIP too old for the measurements still says its version */
  const struct gr_dl_sym sym[] = {{(void **)&rt, {"hipRuntimeGetVersion"}, true},
                                  {(void **)&drv, {"hipDriverGetVersion"}, true}};
  if (h->lib && gr_dl_bind(h->lib, "libamdhip64", sym, 2, why, sizeof(why)) == 0) {
    if (rt(&v) == GR_HIP_SUCCESS)
      hip_version_text(v, runtime->version, sizeof(runtime->version));
    v = 0;
    if (drv(&v) == GR_HIP_SUCCESS)
      hip_version_text(v, runtime->driver, sizeof(runtime->driver));
  }
  hip_ccl_init(h);
  gr_ccl_version(&h->ccl, collective);
  gr_ccl_close(&h->ccl);
  gr_dl_close(h->lib);
  free(h);
}

const struct gr_bench_backend gr_bench_hip = {
    .name = "hip",
    .init = hip_init,
    .shutdown = hip_shutdown,
    .last_error = hip_last_error,
    .device_count = hip_device_count,
    .device_busid = hip_device_busid,
    .set_numa = hip_set_numa,
    .can_peer = hip_can_peer,
    .free_bytes = hip_free_bytes,
    .copy = hip_copy,
    .copy_many = hip_copy_many,
    .device_lost = hip_device_lost,
    .allreduce_open = hip_allreduce_open,
    .allreduce = hip_allreduce,
    .collective_name = hip_collective_name,
    .transports = hip_transports,
    .unique_id = hip_unique_id,
    .allreduce_open_ranks = hip_allreduce_open_ranks,
    .gemm_open = hip_gemm_open,
    .gemm = hip_gemm,
    .collective = "RCCL",
    .collective_install = "Install RCCL (ROCm's rccl package; Debian 13 and Ubuntu 24.04: librccl1) to measure it.",
    .collective_debug = "NCCL_DEBUG=INFO",
    .no_kernels = "HIP cannot load the PTX kernels and gpurig ships no HIP kernel (one per GPU ISA would have to be "
                  "built with a ROCm compiler)",
    .blas_install = "install rocBLAS (ROCm's rocblas package; Debian: librocblas0)",
    .hide_env = "HIP_VISIBLE_DEVICES",
    .lost_hint = "Look in the kernel log (dmesg) for amdgpu's GPU reset or ring timeout (gpurig doctor reads "
                 "NVIDIA's Xids, not amdgpu's messages)",
    .versions = hip_versions,
};
