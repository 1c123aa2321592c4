/* The NVIDIA measurement backend of gpurig bench: the CUDA driver API
 * (libcuda.so.1) for copies and NCCL (libnccl.so.2) for the all-reduce, both
 * opened at run time. Method as nvbandwidth: pinned host memory allocated by
 * the driver from a thread on the GPU's NUMA node, a spin kernel holding each
 * stream until all its copies are queued, warm-up copies before the start
 * event, CUDA events around the copies, an unrolled SM copy kernel looping
 * inside one launch, the data checked on the GPU after every timed run, and
 * pointer-chase latency. The kernels are PTX (bench_kernels.ptx) the driver
 * compiles. */
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backends/nvidia/nvidia.h"
#include "base/dl.h"
#include "base/fs.h"
#include "backends/nvidia/nv_api.h"

#define CUDA_SONAME "libcuda.so.1"
#define NCCL_SONAME "libnccl.so.2"
#define SPIN_TIMEOUT_NS 10000000000ULL /* a spin kernel gives up after 10 s */
#define COPY_THREADS 512   /* per block, one block per SM (nvbandwidth's stridingMemcpyKernel) */
#define COMPARE_THREADS 256
#define COMPARE_BLOCKS_PER_SM 4
#define SPIN_SLOTS (2 * GR_BENCH_GANG_MAX) /* a timeout word per leg of a gang */
#define CHASE_STEPS 5000ULL /* dependent loads per chase run: ~5 ms at 1 us each */
#define CHASE_NODE_BYTES 128 /* one chain node per 128-byte L2 line: no two hops share a line */
#define CHASE_STRIDE_NODES 33 /* 4224 bytes between hops: past a 4 KiB page, not a power of two */
#define VERIFY_WINDOW ((size_t)16 << 20) /* all-reduce: bytes checked at each end */

extern const char gr_bench_ptx[]; /* generated from bench_kernels.ptx */

struct cu_fns {
  gr_pfn_cuInit Init;
  gr_pfn_cuDriverGetVersion DriverGetVersion;
  gr_pfn_cuGetErrorString GetErrorString;
  gr_pfn_cuDeviceGetCount DeviceGetCount;
  gr_pfn_cuDeviceGet DeviceGet;
  gr_pfn_cuDeviceGetPCIBusId DeviceGetPCIBusId;
  gr_pfn_cuDeviceGetAttribute DeviceGetAttribute;
  gr_pfn_cuDeviceCanAccessPeer DeviceCanAccessPeer;
  gr_pfn_cuDevicePrimaryCtxRetain PrimaryCtxRetain;
  gr_pfn_cuDevicePrimaryCtxRelease PrimaryCtxRelease;
  gr_pfn_cuCtxSetCurrent CtxSetCurrent;
  gr_pfn_cuCtxEnablePeerAccess CtxEnablePeerAccess;
  gr_pfn_cuMemGetInfo MemGetInfo;
  gr_pfn_cuMemAlloc MemAlloc;
  gr_pfn_cuMemFree MemFree;
  gr_pfn_cuMemHostAlloc MemHostAlloc;
  gr_pfn_cuMemFreeHost MemFreeHost;
  gr_pfn_cuMemHostGetDevicePointer MemHostGetDevicePointer;
  gr_pfn_cuMemcpyAsync MemcpyAsync;
  gr_pfn_cuMemcpyPeerAsync MemcpyPeerAsync;
  gr_pfn_cuMemsetD32Async MemsetD32Async;
  gr_pfn_cuStreamCreate StreamCreate;
  gr_pfn_cuStreamDestroy StreamDestroy;
  gr_pfn_cuStreamSynchronize StreamSynchronize;
  gr_pfn_cuStreamWaitEvent StreamWaitEvent;
  gr_pfn_cuEventCreate EventCreate;
  gr_pfn_cuEventDestroy EventDestroy;
  gr_pfn_cuEventRecord EventRecord;
  gr_pfn_cuEventSynchronize EventSynchronize;
  gr_pfn_cuEventElapsedTime EventElapsedTime;
  gr_pfn_cuModuleLoadData ModuleLoadData;
  gr_pfn_cuModuleUnload ModuleUnload;
  gr_pfn_cuModuleGetFunction ModuleGetFunction;
  gr_pfn_cuLaunchKernel LaunchKernel;
};

struct nccl_fns {
  gr_pfn_ncclGetVersion GetVersion;
  gr_pfn_ncclGetErrorString GetErrorString;
  gr_pfn_ncclCommInitAll CommInitAll;
  gr_pfn_ncclCommDestroy CommDestroy;
  gr_pfn_ncclGroupStart GroupStart;
  gr_pfn_ncclGroupEnd GroupEnd;
  gr_pfn_ncclAllReduce AllReduce;
  gr_pfn_ncclGetUniqueId GetUniqueId;
  gr_pfn_ncclCommInitRank CommInitRank;
};

/* Pinned host memory placed on one NUMA node. */
struct host_buf {
  void *p;
  size_t bytes;
  gr_cu_deviceptr dptr; /* what a kernel uses to reach it */
  size_t chain_nodes;   /* gr_chase's chain is laid out in it over this many 8-byte nodes; 0 none */
};

struct cudev {
  gr_cu_device dev;
  gr_cu_context ctx;
  bool ctx_held, lost;
  gr_cu_stream s[2];
  gr_cu_event ev[4];        /* start/end of direction 0, start/end of direction 1 */
  gr_cu_module mod;
  gr_cu_function spin, copyk, comparek, chasek;
  int sms, numa;
  gr_cu_deviceptr buf[2];   /* copy source (pattern) and destination */
  size_t buf_bytes;
  size_t chain_nodes;       /* gr_chase's chain is laid out in buf[1] over this many nodes; 0 none */
  gr_cu_deviceptr scratch;  /* 32 bytes: gr_compare's count and first index, gr_chase's result */
  struct host_buf host[2];  /* the same on the host, on this GPU's NUMA node */
  bool *peer_on;            /* peer access to GPU j enabled from this context */
  gr_cu_deviceptr ar_send, ar_recv;
  size_t ar_bytes;
  gr_cublas_handle blas;      /* the GEMM load's, made with this context current */
  gr_cu_deviceptr ga, gb, gc; /* its n x n inputs (fp16) and product (fp32) */
};

struct cuda {
  void *lib, *nccl_lib;
  struct cu_fns f;
  struct nccl_fns nc;
  char err[512];
  int n;
  struct cudev *d;
  int *flag;                /* the spin kernels' release flag, then a timeout word per leg; pinned, mapped */
  gr_cu_deviceptr flag_dptr;
  uint64_t *res;            /* 4 words, pinned: what the compare and chase kernels send back */
  unsigned long long chase_calls; /* where the next chase run starts along its chain */
  uint32_t *check;          /* host scratch to read device buffers back */
  size_t check_bytes;
  struct ncclComm **comms;  /* one per all-reduce GPU, ar_dev[k]'s */
  int ar_ndev, *ar_dev;     /* the GPUs in the all-reduce: all, or this rank's (bench --mpi) */
  int ar_first, ar_nranks;  /* ar_dev[k] is rank ar_first + k of ar_nranks */
  char nccl_name[48];
  void *blas_lib;
  gr_pfn_cublasCreate BlasCreate;
  gr_pfn_cublasDestroy BlasDestroy;
  gr_pfn_cublasSetStream BlasSetStream;
  gr_pfn_cublasGemmEx GemmEx;
  int gemm_n;
  float *gemm_expect;         /* the product's first column, computed on the host */
  char nccl_links[2048];      /* NCCL's connections, "0 -> 1 P2P/IPC" a line; or why they are unknown */
  bool nccl_links_known;
  char nccl_log_dir[256];     /* NCCL's INFO log's private directory until the first all-reduce has run, else "" */
};

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
static int cu_fail(struct cuda *c, gr_cu_result r, const char *what, int dev)
{
  if (!c->err[0]) {
    if (dev >= 0)
      snprintf(c->err, sizeof(c->err), "%s on GPU%d: CUDA error %u (%s)", what, dev, r, cu_str(c, r));
    else
      snprintf(c->err, sizeof(c->err), "%s: CUDA error %u (%s)", what, r, cu_str(c, r));
  }
  return -1;
}

#define CU(call, what, dev)                                                                                   \
  do {                                                                                                        \
    gr_cu_result r_ = (call);                                                                                 \
    if (r_ != GR_CUDA_SUCCESS) {                                                                              \
      rc = cu_fail(c, r_, what, dev);                                                                         \
      goto out;                                                                                               \
    }                                                                                                         \
  } while (0)

static int use(struct cuda *c, int dev)
{
  gr_cu_result r = c->f.CtxSetCurrent(c->d[dev].ctx);
  return r == GR_CUDA_SUCCESS ? 0 : cu_fail(c, r, "cuCtxSetCurrent", dev);
}

/* ------------------------------------------------------------ host memory */

/* The CPUs of NUMA node `node` from the live sysfs cpulist ("0-15,64-79");
 * false when it cannot be read or names none. */
static bool node_cpus(int node, cpu_set_t *set)
{
  struct gr_fs fs;
  char path[96], list[4096];
  snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/cpulist", node);
  if (node < 0 || gr_fs_init(&fs, NULL) != 0 || gr_fs_read_str(&fs, path, list, sizeof(list)) != 0)
    return false;
  CPU_ZERO(set);
  for (char *p = list; *p;) {
    char *end;
    long lo = strtol(p, &end, 10), hi = lo;
    if (end == p)
      return false;
    if (*end == '-')
      hi = strtol(end + 1, &end, 10);
    for (long cpu = lo; cpu >= 0 && cpu <= hi && cpu < CPU_SETSIZE; cpu++)
      CPU_SET((int)cpu, set);
    p = *end == ',' ? end + 1 : end;
    if (*end && *end != ',')
      return false;
  }
  return CPU_COUNT(set) > 0;
}

static void host_free(struct cuda *c, struct host_buf *h)
{
  if (!h->p)
    return;
  c->f.MemFreeHost(h->p);
  memset(h, 0, sizeof(*h));
}

/* Pinned host memory as nvbandwidth makes it (perf review, item 5): the
 * driver's own cuMemHostAlloc (PORTABLE | DEVICEMAP), called from a thread
 * running on the CPUs of the GPU's NUMA node, so that the pages the driver
 * pins land on that node, then first-touched there. Registering mmap'ed
 * 4 KiB pages (cuMemHostRegister) gives another page layout, which with a
 * translating IOMMU can read lower than driver-allocated memory. The
 * thread's affinity is restored afterwards; without a node it is left. */
static int host_alloc(struct cuda *c, struct host_buf *h, size_t bytes, int node, int dev)
{
  cpu_set_t old, want;
  bool moved = node_cpus(node, &want) && sched_getaffinity(0, sizeof(old), &old) == 0 &&
               sched_setaffinity(0, sizeof(want), &want) == 0;
  void *p = NULL;
  gr_cu_result r = c->f.MemHostAlloc(&p, bytes, GR_CU_MEMHOSTALLOC_PORTABLE | GR_CU_MEMHOSTALLOC_DEVICEMAP);
  if (r == GR_CUDA_SUCCESS)
    memset(p, 0, bytes); /* first touch, on the node's CPUs */
  if (moved)
    (void)sched_setaffinity(0, sizeof(old), &old);
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
static uint32_t pattern_word(unsigned tag, size_t i)
{
  return (uint32_t)(i * 2654435761u) ^ (0x5a5a0000u | (tag & 0xffff));
}

static void pattern_fill(uint32_t *w, size_t words, unsigned tag)
{
  for (size_t i = 0; i < words; i++)
    w[i] = pattern_word(tag, i);
}

static unsigned buf_tag(int dev, bool host)
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
static int ensure_buffers(struct cuda *c, int dev, size_t bytes)
{
  struct cudev *d = &c->d[dev];
  int rc = 0;
  if (d->buf_bytes >= bytes)
    return 0;
  if (use(c, dev) != 0)
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

static void ensure_check(struct cuda *c, size_t bytes)
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
  if (use(c, i) != 0)
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
    if (d->ar_send)
      c->f.MemFree(d->ar_send);
    if (d->ar_recv)
      c->f.MemFree(d->ar_recv);
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
  if (c->comms && c->nc.CommDestroy)
    for (int k = 0; k < c->ar_ndev; k++)
      if (c->comms[k])
        c->nc.CommDestroy(c->comms[k]);
  free(c->comms);
  free(c->ar_dev);
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
  gr_dl_close(c->nccl_lib);
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
  for (int i = 0; i < c->n && rc == 0; i++)
    rc = dev_open(c, i);
  if (rc != 0 || (rc = use(c, 0)) != 0)
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

static bool cuda_can_peer(void *state, int a, int b)
{
  struct cuda *c = state;
  int ok = 0;
  return c->f.DeviceCanAccessPeer(&ok, c->d[a].dev, c->d[b].dev) == GR_CUDA_SUCCESS && ok;
}

static size_t cuda_free_bytes(void *state, int dev)
{
  struct cuda *c = state;
  size_t fr = 0, total = 0;
  if (use(c, dev) != 0 || c->f.MemGetInfo(&fr, &total) != GR_CUDA_SUCCESS)
    return 0;
  return fr;
}

static bool cuda_device_lost(void *state, int dev)
{
  return ((struct cuda *)state)->d[dev].lost;
}

/* After a failed call: a GPU whose context no longer answers is lost. */
static void probe_lost(struct cuda *c, int dev)
{
  size_t fr, total;
  if (dev < 0 || c->d[dev].lost)
    return;
  if (c->f.CtxSetCurrent(c->d[dev].ctx) != GR_CUDA_SUCCESS || c->f.MemGetInfo(&fr, &total) != GR_CUDA_SUCCESS)
    c->d[dev].lost = true;
}

/* ---------------------------------------------------------------- copies */

struct leg {               /* one direction of a timed run */
  int from, to;            /* endpoints (GPU or host) */
  int exec;                /* GPU whose stream issues it */
  gr_cu_deviceptr src, dst;
  size_t dst_bytes;
  uint32_t *dst_host;      /* destination in host memory, else NULL */
  unsigned src_tag;
  bool peer;               /* GPU -> other GPU */
};

static int enable_peer(struct cuda *c, int a, int b)
{
  if (c->d[a].peer_on[b])
    return 0;
  if (use(c, a) != 0)
    return -1;
  gr_cu_result r = c->f.CtxEnablePeerAccess(c->d[b].ctx, 0);
  if (r != GR_CUDA_SUCCESS && r != GR_CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED)
    return cu_fail(c, r, "cuCtxEnablePeerAccess", a);
  c->d[a].peer_on[b] = true;
  return 0;
}

/* Source and destination of one direction. Host endpoints use the pinned
 * buffers of the GPU at the other end (on that GPU's NUMA node). A copy
 * between two GPUs is issued by the source (push, a posted write) unless
 * read: then the destination issues it and pulls (nvbandwidth's _read_
 * tests: cuMemcpyPeerAsync on the destination's stream, or the SM kernel
 * on the destination loading the peer's memory). */
static void plan_leg(struct cuda *c, int from, int to, enum gr_engine eng, bool read, struct leg *l)
{
  int gpu_of_host = from == GR_BENCH_HOST ? to : from;
  memset(l, 0, sizeof(*l));
  l->from = from;
  l->to = to;
  l->exec = from == GR_BENCH_HOST || (read && to != GR_BENCH_HOST) ? to : from;
  if (from == GR_BENCH_HOST) {
    struct host_buf *h = &c->d[gpu_of_host].host[0];
    l->src = eng == GR_ENGINE_SM ? h->dptr : (gr_cu_deviceptr)(uintptr_t)h->p;
    l->src_tag = buf_tag(gpu_of_host, true);
  } else {
    l->src = c->d[from].buf[0];
    l->src_tag = buf_tag(from, false);
  }
  if (to == GR_BENCH_HOST) {
    struct host_buf *h = &c->d[gpu_of_host].host[1];
    l->dst = eng == GR_ENGINE_SM ? h->dptr : (gr_cu_deviceptr)(uintptr_t)h->p;
    l->dst_host = h->p;
  } else {
    l->dst = c->d[to].buf[1];
  }
  l->peer = from != GR_BENCH_HOST && to != GR_BENCH_HOST && from != to;
}

/* Queues `count` copies of one direction on stream st: `count` copy-engine
 * copies, or one launch of the SM kernel that copies `count` times inside it
 * (no launch gap between copies, as nvbandwidth's loopCount). */
static int issue_copies(struct cuda *c, const struct leg *l, const struct gr_copy_spec *s, gr_cu_stream st, int count)
{
  struct cudev *x = &c->d[l->exec];
  gr_cu_result r = GR_CUDA_SUCCESS;
  if (count <= 0)
    return 0;
  if (s->engine == GR_ENGINE_SM) {
    gr_cu_deviceptr dst = l->dst, src = l->src;
    unsigned long long n16 = s->bytes / 16, loops = (unsigned long long)count;
    void *params[] = {&dst, &src, &n16, &loops};
    unsigned grid = (unsigned)(x->sms > 0 ? x->sms : 1); /* one block of COPY_THREADS per SM */
    r = c->f.LaunchKernel(x->copyk, grid, 1, 1, COPY_THREADS, 1, 1, 0, st, params, NULL);
    return r == GR_CUDA_SUCCESS ? 0 : cu_fail(c, r, "cuLaunchKernel gr_copy", l->exec);
  }
  for (int i = 0; i < count && r == GR_CUDA_SUCCESS; i++) {
    if (l->peer)
      r = c->f.MemcpyPeerAsync(l->dst, c->d[l->to].ctx, l->src, c->d[l->from].ctx, s->bytes, st);
    else
      r = c->f.MemcpyAsync(l->dst, l->src, s->bytes, st);
  }
  return r == GR_CUDA_SUCCESS ? 0 : cu_fail(c, r, l->peer ? "cuMemcpyPeerAsync" : "cuMemcpyAsync", l->exec);
}

/* Queues one direction behind a spin kernel: spin, the untimed warm-up
 * copies (nvbandwidth's WARMUP_COUNT: the link, TLBs and engine are busy
 * when the clock starts), start event, copies, end event. The spin kernel
 * writes its timeout word, flag[1 + slot], if it gives up. */
static int queue_leg(struct cuda *c, const struct leg *l, int dir, int slot, const struct gr_copy_spec *s,
                     gr_cu_event align)
{
  struct cudev *x = &c->d[l->exec];
  gr_cu_stream st = x->s[dir];
  unsigned long long timeout = SPIN_TIMEOUT_NS;
  gr_cu_deviceptr flag = c->flag_dptr, timed_out = c->flag_dptr + (gr_cu_deviceptr)(1 + slot) * sizeof(int);
  void *params[] = {&flag, &timeout, &timed_out};
  int rc = 0;
  if (use(c, l->exec) != 0)
    return -1;
  CU(c->f.LaunchKernel(x->spin, 1, 1, 1, 1, 1, 1, 0, st, params, NULL), "cuLaunchKernel gr_spin", l->exec);
  if (issue_copies(c, l, s, st, s->warmup) != 0)
    return -1;
  if (align)
    CU(c->f.StreamWaitEvent(st, align, 0), "cuStreamWaitEvent", l->exec);
  CU(c->f.EventRecord(x->ev[dir * 2], st), "cuEventRecord", l->exec);
  if (issue_copies(c, l, s, st, s->loops) != 0)
    return -1;
  CU(c->f.EventRecord(x->ev[dir * 2 + 1], st), "cuEventRecord", l->exec);
out:
  return rc;
}

/* Clears the release flag and every timeout word before a run. */
static void arm_spinners(struct cuda *c)
{
  for (int i = 1; i <= SPIN_SLOTS; i++)
    __atomic_store_n(&c->flag[i], 0, __ATOMIC_SEQ_CST);
  __atomic_store_n(c->flag, 0, __ATOMIC_SEQ_CST);
}

static bool spin_timed_out(struct cuda *c, int slot)
{
  return __atomic_load_n(&c->flag[1 + slot], __ATOMIC_SEQ_CST) != 0;
}

static void release_spinners(struct cuda *c)
{
  __atomic_store_n(c->flag, 1, __ATOMIC_SEQ_CST);
}

static int leg_elapsed(struct cuda *c, const struct leg *l, int dir, double *seconds)
{
  struct cudev *x = &c->d[l->exec];
  float ms = 0;
  int rc = 0;
  if (use(c, l->exec) != 0)
    return -1;
  CU(c->f.EventSynchronize(x->ev[dir * 2 + 1]), "cuEventSynchronize", l->exec);
  CU(c->f.EventElapsedTime(&ms, x->ev[dir * 2], x->ev[dir * 2 + 1]), "cuEventElapsedTime", l->exec);
  *seconds = ms / 1000.0;
out:
  return rc;
}

/* Clears a destination so that a copy that did not happen cannot pass; a
 * pointer chain laid out there is gone after it. */
static int clear_dst(struct cuda *c, const struct leg *l, size_t bytes)
{
  int rc = 0;
  for (int g = 0; g < c->n; g++)
    if (l->dst_host && l->dst_host == c->d[g].host[1].p)
      c->d[g].host[1].chain_nodes = 0;
  if (l->dst_host) {
    memset(l->dst_host, 0, bytes);
    return 0;
  }
  c->d[l->to].chain_nodes = 0;
  if (use(c, l->to) != 0)
    return -1;
  CU(c->f.MemsetD32Async(l->dst, 0, bytes / 4, c->d[l->to].s[0]), "cuMemsetD32Async", l->to);
  CU(c->f.StreamSynchronize(c->d[l->to].s[0]), "cuStreamSynchronize", l->to);
out:
  return rc;
}

/* Runs gr_compare over a destination in GPU dev's memory: the count of
 * wrong words, the first wrong index and the word there come back, not the
 * buffer (perf review, item 14). */
static int gpu_compare(struct cuda *c, int dev, gr_cu_deviceptr buf, size_t bytes, unsigned tag, long *count,
                       size_t *first, uint32_t *word)
{
  struct cudev *d = &c->d[dev];
  gr_cu_stream st = d->s[0];
  gr_cu_deviceptr cnt = d->scratch, first_bad = d->scratch + 8;
  unsigned long long nwords = bytes / 4;
  unsigned tag32 = tag;
  void *params[] = {&buf, &nwords, &tag32, &cnt, &first_bad};
  unsigned grid = (unsigned)(d->sms > 0 ? d->sms : 1) * COMPARE_BLOCKS_PER_SM;
  gr_cu_deviceptr res = (gr_cu_deviceptr)(uintptr_t)c->res;
  int rc = 0;
  if (use(c, dev) != 0)
    return -1;
  CU(c->f.MemsetD32Async(cnt, 0, 2, st), "cuMemsetD32Async", dev);
  CU(c->f.MemsetD32Async(first_bad, 0xffffffffu, 2, st), "cuMemsetD32Async", dev);
  CU(c->f.LaunchKernel(d->comparek, grid, 1, 1, COMPARE_THREADS, 1, 1, 0, st, params, NULL),
     "cuLaunchKernel gr_compare", dev);
  CU(c->f.MemcpyAsync(res, d->scratch, 16, st), "cuMemcpyAsync", dev);
  CU(c->f.StreamSynchronize(st), "cuStreamSynchronize", dev);
  *count = (long)(uint32_t)c->res[0];
  *first = (size_t)c->res[1];
  if (*count > 0 && *first < nwords) {
    CU(c->f.MemcpyAsync(res + 16, buf + *first * 4, 4, st), "cuMemcpyAsync", dev);
    CU(c->f.StreamSynchronize(st), "cuStreamSynchronize", dev);
    memcpy(word, &c->res[2], 4);
  }
out:
  return rc;
}

/* A host destination is in host memory already: compared here. */
static void host_compare(const uint32_t *w, size_t bytes, unsigned tag, long *count, size_t *first, uint32_t *word)
{
  *count = 0;
  for (size_t i = 0; i < bytes / 4; i++)
    if (w[i] != pattern_word(tag, i) && (*count)++ == 0) {
      *first = i;
      *word = w[i];
    }
}

/* Compares a destination with its source's pattern: counts the wrong words
 * and fills the sample on the first wrong byte. */
static int verify_leg(struct cuda *c, const struct leg *l, int dir, size_t bytes, struct gr_copy_sample *out)
{
  long count = 0;
  size_t i = 0;
  uint32_t got = 0;
  if (l->dst_host)
    host_compare(l->dst_host, bytes, l->src_tag, &count, &i, &got);
  else if (gpu_compare(c, l->to, l->dst, bytes, l->src_tag, &count, &i, &got) != 0)
    return -1;
  if (count == 0)
    return 0;
  out->mismatches += count;
  if (!out->corrupt) {
    uint32_t want = pattern_word(l->src_tag, i);
    const unsigned char *g = (const unsigned char *)&got, *e = (const unsigned char *)&want;
    size_t b = 0;
    while (b < 3 && g[b] == e[b])
      b++;
    out->corrupt = true;
    out->corrupt_dir = dir;
    out->bad_offset = i * 4 + b;
    out->expected = e[b];
    out->got = g[b];
  }
  return 0;
}

static int prepare_legs(struct cuda *c, const struct gr_copy_spec *s, struct leg *legs, int *nlegs)
{
  int gpus[2] = {s->src, s->dst};
  for (int k = 0; k < 2; k++)
    if (gpus[k] != GR_BENCH_HOST && ensure_buffers(c, gpus[k], s->bytes) != 0)
      return -1;
  *nlegs = s->reverse ? 2 : 1;
  plan_leg(c, s->src, s->dst, s->engine, s->read, &legs[0]);
  if (s->reverse)
    plan_leg(c, s->dst, s->src, s->engine, s->read, &legs[1]);
  for (int i = 0; i < *nlegs; i++) {
    bool direct = legs[i].peer && cuda_can_peer(c, legs[i].from, legs[i].to);
    if (direct && (enable_peer(c, legs[i].from, legs[i].to) != 0 || enable_peer(c, legs[i].to, legs[i].from) != 0))
      return -1;
    if (legs[i].peer && !direct && s->engine == GR_ENGINE_SM) {
      snprintf(c->err, sizeof(c->err), "the SM copy kernel needs peer access between GPU%d and GPU%d",
               legs[i].from, legs[i].to);
      return -1;
    }
    if (clear_dst(c, &legs[i], s->bytes) != 0)
      return -1;
  }
  return 0;
}

static int timed_run(struct cuda *c, const struct gr_copy_spec *s, struct leg *legs, int nlegs,
                     struct gr_copy_sample *out)
{
  int rc = 0;
  arm_spinners(c);
  for (int i = 0; i < nlegs && rc == 0; i++)
    rc = queue_leg(c, &legs[i], i, i, s, i > 0 ? c->d[legs[0].exec].ev[0] : NULL);
  release_spinners(c); /* always: a queued spin kernel must never be left waiting */
  for (int i = 0; i < nlegs && rc == 0; i++)
    rc = leg_elapsed(c, &legs[i], i, &out->seconds[i]);
  for (int i = 0; i < nlegs && rc == 0; i++)
    out->spin_timeout |= spin_timed_out(c, i);
  for (int i = 0; i < nlegs && rc == 0; i++)
    rc = verify_leg(c, &legs[i], i, s->bytes, out);
  return rc;
}

static int cuda_copy(void *state, const struct gr_copy_spec *s, struct gr_copy_sample *out)
{
  struct cuda *c = state;
  struct leg legs[2];
  int nlegs = 0;
  c->err[0] = '\0';
  memset(out, 0, sizeof(*out));
  int rc = prepare_legs(c, s, legs, &nlegs);
  if (rc == 0) {
    out->via_host = legs[0].peer && !c->d[legs[0].from].peer_on[legs[0].to];
    rc = timed_run(c, s, legs, nlegs, out);
  }
  if (rc != 0) {
    probe_lost(c, s->src);
    probe_lost(c, s->dst);
  }
  return rc;
}

/* Whether any GPU is named by two of the specs (their streams, events and
 * buffers would be shared). */
static bool gang_overlaps(const struct gr_copy_spec *specs, int n)
{
  for (int i = 0; i < n; i++)
    for (int j = 0; j < i; j++) {
      int a[2] = {specs[i].src, specs[i].dst}, b[2] = {specs[j].src, specs[j].dst};
      for (int x = 0; x < 2; x++)
        for (int y = 0; y < 2; y++)
          if (a[x] != GR_BENCH_HOST && a[x] == b[y])
            return true;
    }
  return false;
}

/* The legs of every spec queued behind the spinners, released together,
 * then timed and verified: the copies run at the same time. */
static int gang_run(struct cuda *c, const struct gr_copy_spec *specs, int n, struct leg (*legs)[2],
                    const int *nlegs, struct gr_copy_sample *out)
{
  int rc = 0;
  arm_spinners(c);
  for (int i = 0; i < n && rc == 0; i++)
    for (int j = 0; j < nlegs[i] && rc == 0; j++)
      rc = queue_leg(c, &legs[i][j], j, i * 2 + j, &specs[i], j > 0 ? c->d[legs[i][0].exec].ev[0] : NULL);
  release_spinners(c); /* always: a queued spin kernel must never be left waiting */
  for (int i = 0; i < n && rc == 0; i++)
    for (int j = 0; j < nlegs[i] && rc == 0; j++)
      rc = leg_elapsed(c, &legs[i][j], j, &out[i].seconds[j]);
  for (int i = 0; i < n && rc == 0; i++)
    for (int j = 0; j < nlegs[i]; j++)
      out[i].spin_timeout |= spin_timed_out(c, i * 2 + j);
  for (int i = 0; i < n && rc == 0; i++)
    for (int j = 0; j < nlegs[i] && rc == 0; j++)
      rc = verify_leg(c, &legs[i][j], j, specs[i].bytes, &out[i]);
  return rc;
}

static int cuda_copy_many(void *state, const struct gr_copy_spec *specs, int n, struct gr_copy_sample *out)
{
  struct cuda *c = state;
  struct leg legs[GR_BENCH_GANG_MAX][2];
  int nlegs[GR_BENCH_GANG_MAX] = {0}, rc = 0;
  c->err[0] = '\0';
  if (n < 1 || n > GR_BENCH_GANG_MAX || gang_overlaps(specs, n)) {
    snprintf(c->err, sizeof(c->err), "copies at once: 1 to %d, each GPU in one of them", GR_BENCH_GANG_MAX);
    return -1;
  }
  for (int i = 0; i < n && rc == 0; i++) {
    memset(&out[i], 0, sizeof(out[i]));
    rc = prepare_legs(c, &specs[i], legs[i], &nlegs[i]);
    if (rc == 0)
      out[i].via_host = legs[i][0].peer && !c->d[legs[i][0].from].peer_on[legs[i][0].to];
  }
  if (rc == 0)
    rc = gang_run(c, specs, n, legs, nlegs, out);
  for (int i = 0; rc != 0 && i < n; i++) {
    probe_lost(c, specs[i].src);
    probe_lost(c, specs[i].dst);
  }
  return rc;
}

/* ---------------------------------------------------------- pointer chase */

static size_t gcd_size(size_t a, size_t b)
{
  while (b) {
    size_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

/* The nodes of a chain over `bytes`, one at the start of each 128-byte
 * line: node i holds the address of node (i + CHASE_STRIDE_NODES) mod n, a
 * single cycle through every line when n and the stride share no factor (n
 * is lowered until they do not), so a line is read again only after all n.
 * Each hop lands 4224 bytes on, in another 4 KiB page, where no prefetcher
 * follows. */
static size_t chain_length(size_t bytes)
{
  size_t n = bytes / CHASE_NODE_BYTES;
  while (n > CHASE_STRIDE_NODES && gcd_size(n, CHASE_STRIDE_NODES) != 1)
    n--;
  return n > CHASE_STRIDE_NODES ? n : 0;
}

static void chain_fill(uint64_t *w, size_t n, gr_cu_deviceptr base)
{
  for (size_t i = 0; i < n; i++)
    w[i * (CHASE_NODE_BYTES / 8)] = base + ((i + CHASE_STRIDE_NODES) % n) * CHASE_NODE_BYTES;
}

/* Lays the chain out in GPU target's buf[1] (through its pinned staging
 * buffer), or in exec's pinned host[1]; kept until a copy lands there. */
static int chain_ready(struct cuda *c, int exec, int target, size_t n, gr_cu_deviceptr *base)
{
  int rc = 0;
  if (target == GR_BENCH_HOST) {
    struct host_buf *h = &c->d[exec].host[1];
    *base = h->dptr;
    if (h->chain_nodes != n) {
      chain_fill(h->p, n, h->dptr);
      h->chain_nodes = n;
    }
    return 0;
  }
  struct cudev *t = &c->d[target];
  *base = t->buf[1];
  if (t->chain_nodes == n)
    return 0;
  if (use(c, target) != 0)
    return -1;
  chain_fill(t->host[1].p, n, t->buf[1]);
  t->host[1].chain_nodes = 0; /* its own chain, if any, is overwritten */
  CU(c->f.MemcpyAsync(t->buf[1], (gr_cu_deviceptr)(uintptr_t)t->host[1].p, n * CHASE_NODE_BYTES, t->s[0]),
     "cuMemcpyAsync", target);
  CU(c->f.StreamSynchronize(t->s[0]), "cuStreamSynchronize", target);
  t->chain_nodes = n;
out:
  return rc;
}

/* One run of gr_chase: GPU exec follows CHASE_STEPS dependent loads through
 * the chain, starting where the run before it ended, so that no run reads
 * the lines of the one before from a cache. */
static int chase_run(struct cuda *c, int exec, gr_cu_deviceptr base, size_t n, struct gr_chase_sample *out)
{
  struct cudev *x = &c->d[exec];
  unsigned long long steps = CHASE_STEPS;
  size_t at = (size_t)(c->chase_calls++ * CHASE_STEPS % n) * CHASE_STRIDE_NODES % n;
  gr_cu_deviceptr start = base + at * CHASE_NODE_BYTES, result = x->scratch + 16;
  void *params[] = {&start, &steps, &result};
  int rc = 0;
  if (use(c, exec) != 0)
    return -1;
  CU(c->f.LaunchKernel(x->chasek, 1, 1, 1, 1, 1, 1, 0, x->s[0], params, NULL), "cuLaunchKernel gr_chase", exec);
  CU(c->f.MemcpyAsync((gr_cu_deviceptr)(uintptr_t)c->res, result, 16, x->s[0]), "cuMemcpyAsync", exec);
  CU(c->f.StreamSynchronize(x->s[0]), "cuStreamSynchronize", exec);
  out->ns_per_load = (double)c->res[0] / (double)steps;
  if (c->res[0] == 0) {
    snprintf(c->err, sizeof(c->err), "gr_chase on GPU%d: the GPU's timer did not advance", exec);
    rc = -1;
  }
out:
  return rc;
}

static int cuda_chase(void *state, int exec, int target, size_t bytes, struct gr_chase_sample *out)
{
  struct cuda *c = state;
  gr_cu_deviceptr base = 0;
  size_t n = chain_length(bytes);
  int rc = -1;
  c->err[0] = '\0';
  memset(out, 0, sizeof(*out));
  if (n == 0) {
    snprintf(c->err, sizeof(c->err), "a pointer chase needs more than %d x %d bytes", CHASE_STRIDE_NODES,
             CHASE_NODE_BYTES);
    return -1;
  }
  if (target != GR_BENCH_HOST && target != exec && !cuda_can_peer(c, exec, target)) {
    snprintf(c->err, sizeof(c->err), "GPU%d has no peer access to GPU%d's memory", exec, target);
    return -1;
  }
  if (ensure_buffers(c, exec, bytes) == 0 && (target == GR_BENCH_HOST || ensure_buffers(c, target, bytes) == 0) &&
      (target == GR_BENCH_HOST || target == exec || enable_peer(c, exec, target) == 0) &&
      chain_ready(c, exec, target, n, &base) == 0)
    rc = chase_run(c, exec, base, n, out);
  if (rc != 0) {
    probe_lost(c, exec);
    probe_lost(c, target);
  }
  return rc;
}

/* ------------------------------------------------------------ GEMM */

/* The inputs: -1, 0 or 1 by position (fp16 0xBC00, 0, 0x3C00), so every
 * product is an exact integer in fp32 and the same on every GPU. */
static int gemm_value(unsigned tag, int i, int k)
{
  return (int)(((unsigned)i * 31u + (unsigned)k * 17u + tag * 7u) % 3u) - 1;
}

static void gemm_fill(uint16_t *h, int n, unsigned tag)
{
  static const uint16_t half[3] = {0xBC00, 0x0000, 0x3C00};
  for (int k = 0; k < n; k++) /* column-major, as cuBLAS */
    for (int i = 0; i < n; i++)
      h[(size_t)k * n + i] = half[gemm_value(tag, i, k) + 1];
}

static int blas_load(struct cuda *c, char *why, size_t cap)
{
  static const char *const names[] = {"libcublas.so.13", "libcublas.so.12", "libcublas.so.11"};
  char one[256] = "";
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]) && !c->blas_lib; i++)
    c->blas_lib = gr_dl_open(names[i], one, sizeof(one));
  if (!c->blas_lib) {
    snprintf(why, cap, "no cuBLAS (%s)", one);
    return -1;
  }
  const struct gr_dl_sym syms[] = {
      {(void **)&c->BlasCreate, {"cublasCreate_v2"}, true},
      {(void **)&c->BlasDestroy, {"cublasDestroy_v2"}, true},
      {(void **)&c->BlasSetStream, {"cublasSetStream_v2"}, true},
      {(void **)&c->GemmEx, {"cublasGemmEx"}, true},
  };
  return gr_dl_bind(c->blas_lib, "libcublas", syms, sizeof(syms) / sizeof(syms[0]), why, cap);
}

/* One GPU's handle and buffers, the inputs copied in. */
static int gemm_device(struct cuda *c, int dev, int n, const uint16_t *a, const uint16_t *b)
{
  struct cudev *d = &c->d[dev];
  size_t in = (size_t)n * n * 2, out = (size_t)n * n * 4;
  int rc = 0;
  if (use(c, dev) != 0)
    return -1;
  if (!d->blas && c->BlasCreate(&d->blas) != GR_CUBLAS_STATUS_SUCCESS) {
    snprintf(c->err, sizeof(c->err), "GPU%d: cublasCreate failed", dev);
    return -1;
  }
  CU(c->f.MemAlloc(&d->ga, in), "cuMemAlloc", dev);
  CU(c->f.MemAlloc(&d->gb, in), "cuMemAlloc", dev);
  CU(c->f.MemAlloc(&d->gc, out), "cuMemAlloc", dev);
  CU(c->f.MemcpyAsync(d->ga, (gr_cu_deviceptr)(uintptr_t)a, in, d->s[0]), "cuMemcpyAsync", dev);
  CU(c->f.MemcpyAsync(d->gb, (gr_cu_deviceptr)(uintptr_t)b, in, d->s[0]), "cuMemcpyAsync", dev);
  CU(c->f.StreamSynchronize(d->s[0]), "cuStreamSynchronize", dev);
out:
  return rc;
}

static int cuda_gemm_open(void *state, int n, char *why, size_t cap)
{
  struct cuda *c = state;
  if (c->gemm_n)
    return 0;
  if (n < 64 || n > 16384 || n % 64 || blas_load(c, why, cap) != 0) {
    if (n < 64 || n > 16384 || n % 64)
      snprintf(why, cap, "a GEMM of %d: 64 to 16384, a multiple of 64", n);
    return -1;
  }
  uint16_t *a = xcalloc((size_t)n * n, 2), *b = xcalloc((size_t)n * n, 2);
  gemm_fill(a, n, 1);
  gemm_fill(b, n, 2);
  c->gemm_expect = xcalloc((size_t)n, sizeof(float));
  for (int i = 0; i < n; i++) { /* C[i][0] = sum over k of A[i][k] B[k][0] */
    long sum = 0;
    for (int k = 0; k < n; k++)
      sum += gemm_value(1, i, k) * gemm_value(2, k, 0);
    c->gemm_expect[i] = (float)sum;
  }
  int rc = 0;
  for (int dev = 0; dev < c->n && rc == 0; dev++)
    rc = gemm_device(c, dev, n, a, b);
  free(a);
  free(b);
  if (rc != 0) {
    snprintf(why, cap, "%s", c->err);
    return -1;
  }
  c->gemm_n = n;
  return 0;
}

/* Every GPU's products queued first, then each one timed and checked: the
 * GPUs work at the same time. */
static int cuda_gemm(void *state, const int *devs, int ndev, int iters, struct gr_gemm_sample *out)
{
  struct cuda *c = state;
  const float one = 1.0f, zero = 0.0f;
  int n = c->gemm_n, rc = 0;
  c->err[0] = '\0';
  for (int k = 0; k < ndev && rc == 0; k++) {
    struct cudev *d = &c->d[devs[k]];
    memset(&out[k], 0, sizeof(out[k]));
    if (use(c, devs[k]) != 0 || c->BlasSetStream(d->blas, d->s[0]) != GR_CUBLAS_STATUS_SUCCESS)
      return -1;
    CU(c->f.EventRecord(d->ev[0], d->s[0]), "cuEventRecord", devs[k]);
    for (int it = 0; it < iters; it++)
      if (c->GemmEx(d->blas, GR_CUBLAS_OP_N, GR_CUBLAS_OP_N, n, n, n, &one, (const void *)(uintptr_t)d->ga,
                    GR_CUDA_R_16F, n, (const void *)(uintptr_t)d->gb, GR_CUDA_R_16F, n, &zero,
                    (void *)(uintptr_t)d->gc, GR_CUDA_R_32F, n, GR_CUBLAS_COMPUTE_32F,
                    GR_CUBLAS_GEMM_DEFAULT) != GR_CUBLAS_STATUS_SUCCESS) {
        snprintf(c->err, sizeof(c->err), "GPU%d: cublasGemmEx failed", devs[k]);
        rc = -1;
        break;
      }
    if (rc == 0)
      CU(c->f.EventRecord(d->ev[1], d->s[0]), "cuEventRecord", devs[k]);
  }
  for (int k = 0; k < ndev && rc == 0; k++) {
    struct cudev *d = &c->d[devs[k]];
    float ms = 0;
    ensure_check(c, (size_t)n * 4);
    if (use(c, devs[k]) != 0)
      return -1;
    CU(c->f.EventSynchronize(d->ev[1]), "cuEventSynchronize", devs[k]);
    CU(c->f.EventElapsedTime(&ms, d->ev[0], d->ev[1]), "cuEventElapsedTime", devs[k]);
    out[k].seconds = ms / 1000.0;
    CU(c->f.MemcpyAsync((gr_cu_deviceptr)(uintptr_t)c->check, d->gc, (size_t)n * 4, d->s[0]), "cuMemcpyAsync",
       devs[k]);
    CU(c->f.StreamSynchronize(d->s[0]), "cuStreamSynchronize", devs[k]);
    const float *col = (const float *)c->check;
    for (int i = 0; i < n; i++)
      if (col[i] != c->gemm_expect[i]) {
        out[k].wrong = true;
        snprintf(out[k].what, sizeof(out[k].what), "C[%d][0] = %.0f, must be %.0f", i, col[i], c->gemm_expect[i]);
        break;
      }
  }
out:
  for (int k = 0; rc != 0 && k < ndev; k++)
    probe_lost(c, devs[k]);
  return rc;
}

/* ------------------------------------------------------------ all-reduce */

#include "backends/nvidia/nccl_log.h"

#define NSYM(field, ...) {(void **)&c->nc.field, {__VA_ARGS__}, true}

static int nccl_load(struct cuda *c, char *why, size_t cap)
{
  const struct gr_dl_sym syms[] = {
      NSYM(GetVersion, "ncclGetVersion"),     NSYM(GetErrorString, "ncclGetErrorString"),
      NSYM(CommInitAll, "ncclCommInitAll"),   NSYM(CommDestroy, "ncclCommDestroy"),
      NSYM(GroupStart, "ncclGroupStart"),     NSYM(GroupEnd, "ncclGroupEnd"),
      NSYM(AllReduce, "ncclAllReduce"),       NSYM(GetUniqueId, "ncclGetUniqueId"),
      NSYM(CommInitRank, "ncclCommInitRank"),
  };
  int v = 0;
  if (c->nccl_lib)
    return 0; /* unique_id loaded it already */
  c->nccl_lib = gr_dl_open(NCCL_SONAME, why, cap);
  if (!c->nccl_lib || gr_dl_bind(c->nccl_lib, NCCL_SONAME, syms, sizeof(syms) / sizeof(syms[0]), why, cap) != 0)
    return -1;
  if (c->nc.GetVersion(&v) == GR_NCCL_SUCCESS) {
    /* NCCL_VERSION_CODE: major*10000 + minor*100 + patch since 2.9, major*1000 + ... before */
    if (v >= 10000)
      snprintf(c->nccl_name, sizeof(c->nccl_name), "NCCL %d.%d.%d", v / 10000, v % 10000 / 100, v % 100);
    else
      snprintf(c->nccl_name, sizeof(c->nccl_name), "NCCL %d.%d.%d", v / 1000, v % 1000 / 100, v % 100);
  }
  return 0;
}
#undef NSYM

static int nccl_fail(struct cuda *c, gr_nccl_result r, const char *what, char *why, size_t cap)
{
  const char *s = c->nc.GetErrorString ? c->nc.GetErrorString(r) : NULL;
  snprintf(why ? why : c->err, why ? cap : sizeof(c->err), "%s: NCCL error %u (%s)", what, r, s ? s : "?");
  return -1;
}

/* Rank r's send buffer holds r + 1 (every word), so every result word must
 * be 1 + 2 + ... + nranks. */
static int ar_buffers(struct cuda *c, size_t bytes)
{
  int rc = 0;
  for (int k = 0; k < c->ar_ndev; k++) {
    int i = c->ar_dev[k];
    struct cudev *d = &c->d[i];
    float one = (float)(c->ar_first + k + 1);
    uint32_t bits;
    memcpy(&bits, &one, sizeof(bits));
    if (use(c, i) != 0)
      return -1;
    CU(c->f.MemAlloc(&d->ar_send, bytes), "cuMemAlloc", i);
    CU(c->f.MemAlloc(&d->ar_recv, bytes), "cuMemAlloc", i);
    d->ar_bytes = bytes;
    CU(c->f.MemsetD32Async(d->ar_send, bits, bytes / 4, d->s[0]), "cuMemsetD32Async", i);
    CU(c->f.StreamSynchronize(d->s[0]), "cuStreamSynchronize", i);
  }
out:
  return rc;
}

/* The all-reduce's GPUs and ranks, checked: each a GPU of this process, none twice. */
static int ar_set_devs(struct cuda *c, const int *devs, int ndev, int first, int nranks, char *why, size_t cap)
{
  if (ndev < 1 || first < 0 || nranks < first + ndev) {
    snprintf(why, cap, "ranks %d..%d do not fit in %d ranks", first, first + ndev - 1, nranks);
    return -1;
  }
  for (int k = 0; k < ndev; k++) {
    bool twice = false;
    for (int j = 0; j < k; j++)
      twice |= devs[j] == devs[k];
    if (devs[k] < 0 || devs[k] >= c->n || twice) {
      snprintf(why, cap, "GPU%d is not a GPU of this process (it sees %d) or is named twice", devs[k], c->n);
      return -1;
    }
  }
  c->ar_dev = xcalloc((size_t)ndev, sizeof(int));
  memcpy(c->ar_dev, devs, (size_t)ndev * sizeof(int));
  c->ar_ndev = ndev;
  c->ar_first = first;
  c->ar_nranks = nranks;
  c->comms = xcalloc((size_t)ndev, sizeof(*c->comms));
  return 0;
}

static int ar_finish_open(struct cuda *c, size_t max_bytes, char *why, size_t cap)
{
  c->err[0] = '\0';
  if (ar_buffers(c, max_bytes) != 0) {
    snprintf(why, cap, "%s", c->err);
    return -1;
  }
  return 0;
}

/* ---------------------------------------------------- NCCL's transports */

/* How NCCL connects the GPUs is in its INFO log only ("Channel 00/0 : 0[0] ->
 * 1[1] via P2P/IPC"). So, unless the user set NCCL_DEBUG or NCCL_DEBUG_FILE
 * (theirs win, and then the transports are unknown), gpurig sets both in its
 * own process's environment around the communicator's creation, with the
 * file in a private directory (0700) it removes right after. That changes
 * nothing on the system: only this process's environment, for one call. */
static bool ar_log_start(struct cuda *c, char *dir, size_t cap)
{
  const char *tmp = getenv("TMPDIR");
  char file[300];
  c->nccl_links_known = false;
  if (getenv("NCCL_DEBUG") || getenv("NCCL_DEBUG_FILE")) {
    snprintf(c->nccl_links, sizeof(c->nccl_links), "NCCL_DEBUG or NCCL_DEBUG_FILE is set in the environment, so "
             "NCCL's log is yours: gpurig did not read it");
    return false;
  }
  if ((size_t)snprintf(dir, cap, "%s/gpurig-nccl-log-XXXXXX", tmp && *tmp == '/' ? tmp : "/tmp") >= cap) {
    snprintf(c->nccl_links, sizeof(c->nccl_links), "TMPDIR is too long for NCCL's log's directory");
    return false;
  }
  if (!mkdtemp(dir)) {
    snprintf(c->nccl_links, sizeof(c->nccl_links), "no private directory for NCCL's log under %s: %s",
             tmp && *tmp == '/' ? tmp : "/tmp", strerror(errno));
    return false;
  }
  snprintf(file, sizeof(file), "%s/nccl.log", dir);
  setenv("NCCL_DEBUG", "INFO", 1);
  setenv("NCCL_DEBUG_FILE", file, 1);
  return true;
}

/* Reads the log's channel lines into nccl_links. */
static void ar_links_read(struct cuda *c, const char *file)
{
  FILE *f = fopen(file, "r");
  if (!f) {
    snprintf(c->nccl_links, sizeof(c->nccl_links), "NCCL wrote no log");
    return;
  }
  int n = gr_nccl_log_links(f, c->nccl_links, sizeof(c->nccl_links));
  fclose(f);
  c->nccl_links_known = n > 0;
  if (n == 0)
    snprintf(c->nccl_links, sizeof(c->nccl_links), "NCCL's log has no \"Channel ... via\" line");
  else if (n < 0)
    snprintf(c->nccl_links, sizeof(c->nccl_links), "too many connections in NCCL's log");
}

/* Reads the log and removes it with its directory. */
static void ar_log_read(struct cuda *c)
{
  char file[300];
  if (!c->nccl_log_dir[0])
    return;
  snprintf(file, sizeof(file), "%s/nccl.log", c->nccl_log_dir);
  ar_links_read(c, file);
  unlink(file);
  rmdir(c->nccl_log_dir);
  c->nccl_log_dir[0] = '\0';
}

/* Puts the environment back as it was: NCCL read it, and opened its log,
 * while the communicator started. The log is read later, after the
 * all-reduces: NCCL 2.22 and later connect the GPUs at the collectives
 * that need them (NCCL_RUNTIME_CONNECT), not in ncclCommInitAll. */
static void ar_log_end(struct cuda *c, const char *dir, bool ok)
{
  unsetenv("NCCL_DEBUG");
  unsetenv("NCCL_DEBUG_FILE");
  snprintf(c->nccl_log_dir, sizeof(c->nccl_log_dir), "%s", dir);
  if (!ok) {
    ar_log_read(c);
    snprintf(c->nccl_links, sizeof(c->nccl_links), "NCCL did not start");
  }
}

static int cuda_transports(void *state, char *buf, size_t cap)
{
  struct cuda *c = state;
  ar_log_read(c);
  snprintf(buf, cap, "%s", c->nccl_links);
  return c->nccl_links_known ? 0 : -1;
}

static int cuda_allreduce_open(void *state, size_t max_bytes, char *why, size_t cap)
{
  struct cuda *c = state;
  gr_nccl_result r;
  int *all = xcalloc((size_t)c->n, sizeof(int));
  for (int i = 0; i < c->n; i++)
    all[i] = i;
  char dir[sizeof(c->nccl_log_dir)] = "";
  /* before NCCL is loaded: it reads its environment once, at its start */
  bool logging = ar_log_start(c, dir, sizeof(dir));
  int rc = nccl_load(c, why, cap) != 0 || ar_set_devs(c, all, c->n, 0, c->n, why, cap) != 0 ? -1 : 0;
  free(all);
  r = rc == 0 ? c->nc.CommInitAll(c->comms, c->n, NULL) : GR_NCCL_SUCCESS;
  if (logging)
    ar_log_end(c, dir, rc == 0 && r == GR_NCCL_SUCCESS);
  if (rc != 0)
    return -1;
  if (r != GR_NCCL_SUCCESS) {
    memset(c->comms, 0, (size_t)c->n * sizeof(*c->comms));
    return nccl_fail(c, r, "ncclCommInitAll", why, cap);
  }
  if (ar_finish_open(c, max_bytes, why, cap) != 0) {
    ar_log_read(c); /* no all-reduce will run */
    return -1;
  }
  return 0;
}

static int cuda_unique_id(void *state, void *id, char *why, size_t cap)
{
  struct cuda *c = state;
  gr_nccl_unique_id u;
  _Static_assert(sizeof(u) == GR_BENCH_UNIQUE_ID_BYTES, "ncclUniqueId size");
  if (nccl_load(c, why, cap) != 0)
    return -1;
  gr_nccl_result r = c->nc.GetUniqueId(&u);
  if (r != GR_NCCL_SUCCESS)
    return nccl_fail(c, r, "ncclGetUniqueId", why, cap);
  memcpy(id, &u, sizeof(u));
  return 0;
}

/* Several GPUs of one process join inside one group, as NCCL requires
 * (each ncclCommInitRank would otherwise wait for the others). */
static int cuda_allreduce_open_ranks(void *state, size_t max_bytes, const void *id, int nranks, int first_rank,
                                     const int *devs, int ndev, char *why, size_t cap)
{
  struct cuda *c = state;
  gr_nccl_unique_id u;
  gr_nccl_result r = GR_NCCL_SUCCESS;
  if (nccl_load(c, why, cap) != 0 || ar_set_devs(c, devs, ndev, first_rank, nranks, why, cap) != 0)
    return -1;
  memcpy(&u, id, sizeof(u));
  if (ndev > 1)
    r = c->nc.GroupStart();
  for (int k = 0; k < ndev && r == GR_NCCL_SUCCESS; k++) {
    if (use(c, devs[k]) != 0) {
      snprintf(why, cap, "%s", c->err);
      return -1;
    }
    r = c->nc.CommInitRank(&c->comms[k], nranks, u, first_rank + k);
  }
  gr_nccl_result r2 = ndev > 1 ? c->nc.GroupEnd() : GR_NCCL_SUCCESS;
  if (r != GR_NCCL_SUCCESS || r2 != GR_NCCL_SUCCESS) {
    for (int k = 0; k < ndev; k++)
      if (c->comms[k])
        c->nc.CommDestroy(c->comms[k]);
    memset(c->comms, 0, (size_t)ndev * sizeof(*c->comms));
    return nccl_fail(c, r != GR_NCCL_SUCCESS ? r : r2, "ncclCommInitRank", why, cap);
  }
  return ar_finish_open(c, max_bytes, why, cap);
}

/* One all-reduce on every GPU of this process; in place, the receive
 * buffer is also the send buffer (nccl-tests' in-place column). */
static int ar_launch(struct cuda *c, size_t count, bool in_place)
{
  gr_nccl_result r = c->nc.GroupStart();
  if (r != GR_NCCL_SUCCESS)
    return nccl_fail(c, r, "ncclGroupStart", NULL, 0);
  for (int k = 0; k < c->ar_ndev && r == GR_NCCL_SUCCESS; k++) {
    const struct cudev *d = &c->d[c->ar_dev[k]];
    const void *send = (const void *)(uintptr_t)(in_place ? d->ar_recv : d->ar_send);
    r = c->nc.AllReduce(send, (void *)(uintptr_t)d->ar_recv, count, GR_NCCL_FLOAT32, GR_NCCL_SUM, c->comms[k],
                        d->s[0]);
  }
  gr_nccl_result r2 = c->nc.GroupEnd();
  if (r != GR_NCCL_SUCCESS)
    return nccl_fail(c, r, "ncclAllReduce", NULL, 0);
  return r2 == GR_NCCL_SUCCESS ? 0 : nccl_fail(c, r2, "ncclGroupEnd", NULL, 0);
}

/* Counts result words that are not the sum 1 + 2 + ... + nranks, in a
 * window at each end of every GPU's result (a whole 1 GiB read-back per
 * size would take longer than the all-reduce). */
static int ar_verify(struct cuda *c, size_t bytes, long *wrong)
{
  size_t win = bytes < VERIFY_WINDOW ? bytes : VERIFY_WINDOW;
  float want = (float)c->ar_nranks * (float)(c->ar_nranks + 1) / 2.0f;
  int rc = 0;
  ensure_check(c, win);
  *wrong = 0;
  for (int k = 0; k < c->ar_ndev; k++) {
    int i = c->ar_dev[k];
    size_t offs[2] = {0, bytes - win};
    for (int h = 0; h < (bytes > win ? 2 : 1); h++) {
      if (use(c, i) != 0)
        return -1;
      CU(c->f.MemcpyAsync((gr_cu_deviceptr)(uintptr_t)c->check, c->d[i].ar_recv + offs[h], win, c->d[i].s[0]),
         "cuMemcpyAsync", i);
      CU(c->f.StreamSynchronize(c->d[i].s[0]), "cuStreamSynchronize", i);
      const float *v = (const float *)c->check;
      for (size_t j = 0; j < win / 4; j++)
        if (v[j] != want)
          (*wrong)++;
    }
  }
out:
  return rc;
}

static int ar_record(struct cuda *c, int ev)
{
  int rc = 0;
  for (int k = 0; k < c->ar_ndev && rc == 0; k++) {
    int i = c->ar_dev[k];
    if ((rc = use(c, i)) != 0)
      break;
    CU(c->f.EventRecord(c->d[i].ev[ev], c->d[i].s[0]), "cuEventRecord", i);
  }
out:
  return rc;
}

/* Waits until every all-reduce stream is idle. */
static int ar_sync(struct cuda *c)
{
  int rc = 0;
  for (int k = 0; k < c->ar_ndev && rc == 0; k++) {
    int i = c->ar_dev[k];
    if ((rc = use(c, i)) != 0)
      break;
    CU(c->f.StreamSynchronize(c->d[i].s[0]), "cuStreamSynchronize", i);
  }
out:
  return rc;
}

/* The receive buffers: zeros (out of place, and in place while timed: a sum
 * of zeros stays zero however many iterations run, where rank values would
 * grow to infinity), or this rank's value r + 1 (the in-place check run). */
static int ar_fill(struct cuda *c, size_t count, bool rank_values)
{
  int rc = 0;
  for (int k = 0; k < c->ar_ndev && rc == 0; k++) {
    int i = c->ar_dev[k];
    float v = rank_values ? (float)(c->ar_first + k + 1) : 0.0f;
    uint32_t bits;
    memcpy(&bits, &v, sizeof(bits));
    if ((rc = use(c, i)) != 0)
      break;
    CU(c->f.MemsetD32Async(c->d[i].ar_recv, bits, count, c->d[i].s[0]), "cuMemsetD32Async", i);
  }
out:
  return rc;
}

/* The slowest GPU's time between its events 0 and 1 (after both are done). */
static int ar_elapsed(struct cuda *c, double *seconds)
{
  int rc = 0;
  *seconds = 0;
  for (int k = 0; k < c->ar_ndev && rc == 0; k++) {
    int i = c->ar_dev[k];
    float ms = 0;
    if ((rc = use(c, i)) != 0)
      break;
    CU(c->f.EventSynchronize(c->d[i].ev[1]), "cuEventSynchronize", i);
    CU(c->f.EventElapsedTime(&ms, c->d[i].ev[0], c->d[i].ev[1]), "cuEventElapsedTime", i);
    if (ms / 1000.0 > *seconds)
      *seconds = ms / 1000.0;
  }
out:
  return rc;
}

static double host_clock(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The timed iterations, nccl-tests' way on the host clock: from a
 * synchronised start (every stream idle) to every stream synchronised,
 * averaged per iteration; and on each GPU's events. With iter_seconds each
 * iteration is timed alone (events around it, waited for before the next
 * starts), which is slower per iteration but shows a stall. */
static int ar_timed(struct cuda *c, const struct gr_ar_spec *spec, size_t count, struct gr_ar_sample *out)
{
  double t0, total = 0, one = 0;
  int rc = ar_sync(c);
  if (rc != 0)
    return rc;
  t0 = host_clock();
  if (!spec->iter_seconds) {
    rc = ar_record(c, 0);
    for (int k = 0; k < spec->iters && rc == 0; k++)
      rc = ar_launch(c, count, spec->in_place);
    if (rc == 0 && (rc = ar_record(c, 1)) == 0)
      rc = ar_elapsed(c, &total);
  }
  for (int k = 0; spec->iter_seconds && k < spec->iters && rc == 0; k++) {
    if ((rc = ar_record(c, 0)) != 0 || (rc = ar_launch(c, count, spec->in_place)) != 0 ||
        (rc = ar_record(c, 1)) != 0 || (rc = ar_elapsed(c, &one)) != 0)
      break;
    spec->iter_seconds[k] = one;
    total += one;
  }
  if (rc == 0 && (rc = ar_sync(c)) == 0) {
    out->host_seconds = (host_clock() - t0) / spec->iters;
    out->seconds = total / spec->iters;
  }
  return rc;
}

static int cuda_allreduce(void *state, const struct gr_ar_spec *spec, struct gr_ar_sample *out)
{
  struct cuda *c = state;
  size_t count = spec->bytes / 4;
  int rc = 0;
  c->err[0] = '\0';
  memset(out, 0, sizeof(*out));
  if (c->ar_ndev < 1 || spec->iters < 1 || spec->warmup < 0 || spec->bytes < 4 ||
      spec->bytes > c->d[c->ar_dev[0]].ar_bytes) {
    snprintf(c->err, sizeof(c->err), "all-reduce of %zu bytes, %d iterations: outside what was opened", spec->bytes,
             spec->iters);
    return -1;
  }
  rc = ar_fill(c, count, false);
  for (int w = 0; w < spec->warmup && rc == 0; w++)
    rc = ar_launch(c, count, spec->in_place);
  if (rc == 0)
    rc = ar_timed(c, spec, count, out);
  /* in place, the timed buffers summed zeros: one more run on the ranks'
   * values, untimed, gives the result to check */
  if (rc == 0 && spec->in_place && (rc = ar_fill(c, count, true)) == 0 &&
      (rc = ar_launch(c, count, true)) == 0)
    rc = ar_sync(c);
  if (rc == 0)
    rc = ar_verify(c, spec->bytes, &out->wrong);
  /* NCCL 2.22+ connects at run time what each size needs: read the log at
   * the largest size (the sweep's last, burn's only), or when asked */
  if (spec->bytes == c->d[c->ar_dev[0]].ar_bytes)
    ar_log_read(c);
  if (rc != 0)
    for (int i = 0; i < c->n; i++)
      probe_lost(c, i);
  return rc;
}

static const char *cuda_collective_name(void *state)
{
  return ((struct cuda *)state)->nccl_name;
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
};
