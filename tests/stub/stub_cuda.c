/* Stand-in for NVIDIA's CUDA driver library (built as libcuda.so.1) so
 * gpurig's CUDA code can be tested without a GPU; see README.md. Not NVIDIA
 * code: names and types follow src/backends/nvidia/nv_api.h.
 *
 * Every operation runs at once on the calling thread: "device memory" is
 * ordinary heap memory, copies really copy, and each stream keeps a virtual
 * clock that its operations advance by a duration simulated from the rates
 * in stub.h. Events read and order those clocks. One mutex serialises all
 * calls; the current context is per thread, as in CUDA. */
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backends/nvidia/nv_api.h"
#include "stub.h"

enum {
  CU_OK = 0,
  CU_INVALID_VALUE = 1,
  CU_OUT_OF_MEMORY = 2,
  CU_NOT_INITIALIZED = 3,
  CU_NO_DEVICE = 100,
  CU_INVALID_DEVICE = 101,
  CU_INVALID_IMAGE = 200,
  CU_INVALID_CONTEXT = 201,
  CU_INVALID_HANDLE = 400,
  CU_NOT_FOUND = 500,
  CU_NOT_READY = 600,
  CU_ILLEGAL_ADDRESS = 700,
  CU_PEER_ACCESS_ALREADY_ENABLED = 704,
  CU_UNKNOWN = 999,
};

enum { EVENT_DISABLE_TIMING = 0x2, EVENT_FLAGS = 0x7, HOSTALLOC_FLAGS = 0x7, HOSTREGISTER_FLAGS = 0xf };

struct CUctx_st {
  int dev;
  int refs;
};

struct CUevent_st {
  int dev; /* the GPU whose context made it (records need a stream of that GPU) */
  unsigned flags;
  int recorded;
  double time; /* the recording stream's clock at the record */
  struct CUevent_st *next;
  const struct CUstream_st *stream; /* the stream of the last record (compared, never followed: "a100-uplink") */
};

enum func_kind { FUNC_SPIN, FUNC_COPY, FUNC_COMPARE, FUNC_CHASE };
struct CUfunc_st {
  enum func_kind kind;
  struct CUmod_st *mod;
};
struct CUmod_st {
  int dev;
  struct CUfunc_st spin, copy, compare, chase; /* the kernels of src/backends/nvidia/bench_kernels.ptx */
  struct CUmod_st *next;
};

enum alloc_kind { ALLOC_DEVICE, ALLOC_HOST, ALLOC_REGISTERED };
struct alloc {
  uintptr_t base;
  size_t size;
  enum alloc_kind kind;
  int dev; /* ALLOC_DEVICE only */
  struct alloc *next;
};

/* Exported functions (prototypes for -Wmissing-prototypes). */
gr_cu_result cuInit(unsigned int flags);
gr_cu_result cuDriverGetVersion(int *version);
gr_cu_result cuGetErrorString(gr_cu_result error, const char **str);
gr_cu_result cuDeviceGetCount(int *count);
gr_cu_result cuDeviceGet(gr_cu_device *device, int ordinal);
gr_cu_result cuDeviceGetName(char *name, int len, gr_cu_device dev);
gr_cu_result cuDeviceGetPCIBusId(char *busid, int len, gr_cu_device dev);
gr_cu_result cuDeviceGetAttribute(int *value, unsigned int attrib, gr_cu_device dev);
gr_cu_result cuDeviceCanAccessPeer(int *can, gr_cu_device dev, gr_cu_device peer);
gr_cu_result cuDevicePrimaryCtxRetain(gr_cu_context *ctx, gr_cu_device dev);
gr_cu_result cuDevicePrimaryCtxRelease_v2(gr_cu_device dev);
gr_cu_result cuCtxSetCurrent(gr_cu_context ctx);
gr_cu_result cuCtxEnablePeerAccess(gr_cu_context peer, unsigned int flags);
gr_cu_result cuMemGetInfo_v2(size_t *free_bytes, size_t *total_bytes);
gr_cu_result cuMemAlloc_v2(gr_cu_deviceptr *dptr, size_t size);
gr_cu_result cuMemFree_v2(gr_cu_deviceptr dptr);
gr_cu_result cuMemHostAlloc(void **pp, size_t size, unsigned int flags);
gr_cu_result cuMemFreeHost(void *p);
gr_cu_result cuMemHostRegister_v2(void *p, size_t size, unsigned int flags);
gr_cu_result cuMemHostUnregister(void *p);
gr_cu_result cuMemHostGetDevicePointer_v2(gr_cu_deviceptr *dptr, void *p, unsigned int flags);
gr_cu_result cuMemcpyAsync(gr_cu_deviceptr dst, gr_cu_deviceptr src, size_t bytes, gr_cu_stream stream);
gr_cu_result cuMemcpyPeerAsync(gr_cu_deviceptr dst, gr_cu_context dst_ctx, gr_cu_deviceptr src,
                               gr_cu_context src_ctx, size_t bytes, gr_cu_stream stream);
gr_cu_result cuMemsetD32Async(gr_cu_deviceptr dst, unsigned int value, size_t n, gr_cu_stream stream);
gr_cu_result cuStreamCreate(gr_cu_stream *stream, unsigned int flags);
gr_cu_result cuStreamDestroy_v2(gr_cu_stream stream);
gr_cu_result cuStreamSynchronize(gr_cu_stream stream);
gr_cu_result cuStreamWaitEvent(gr_cu_stream stream, gr_cu_event event, unsigned int flags);
gr_cu_result cuEventCreate(gr_cu_event *event, unsigned int flags);
gr_cu_result cuEventDestroy_v2(gr_cu_event event);
gr_cu_result cuEventRecord(gr_cu_event event, gr_cu_stream stream);
gr_cu_result cuEventSynchronize(gr_cu_event event);
gr_cu_result cuEventElapsedTime(float *ms, gr_cu_event start, gr_cu_event end);
gr_cu_result cuModuleLoadData(gr_cu_module *module, const void *image);
gr_cu_result cuModuleUnload(gr_cu_module module);
gr_cu_result cuModuleGetFunction(gr_cu_function *func, gr_cu_module module, const char *name);
gr_cu_result cuLaunchKernel(gr_cu_function f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
                            unsigned int by, unsigned int bz, unsigned int shmem, gr_cu_stream stream,
                            void **params, void **extra);

/* Each export must match the pointer type gpurig stores it in. */
#define STUB_CHECK(fn, pfn) _Static_assert(_Generic(&fn, pfn: 1, default: 0), #fn " does not match " #pfn)
STUB_CHECK(cuInit, gr_pfn_cuInit);
STUB_CHECK(cuDriverGetVersion, gr_pfn_cuDriverGetVersion);
STUB_CHECK(cuGetErrorString, gr_pfn_cuGetErrorString);
STUB_CHECK(cuDeviceGetCount, gr_pfn_cuDeviceGetCount);
STUB_CHECK(cuDeviceGet, gr_pfn_cuDeviceGet);
STUB_CHECK(cuDeviceGetName, gr_pfn_cuDeviceGetName);
STUB_CHECK(cuDeviceGetPCIBusId, gr_pfn_cuDeviceGetPCIBusId);
STUB_CHECK(cuDeviceGetAttribute, gr_pfn_cuDeviceGetAttribute);
STUB_CHECK(cuDeviceCanAccessPeer, gr_pfn_cuDeviceCanAccessPeer);
STUB_CHECK(cuDevicePrimaryCtxRetain, gr_pfn_cuDevicePrimaryCtxRetain);
STUB_CHECK(cuDevicePrimaryCtxRelease_v2, gr_pfn_cuDevicePrimaryCtxRelease);
STUB_CHECK(cuCtxSetCurrent, gr_pfn_cuCtxSetCurrent);
STUB_CHECK(cuCtxEnablePeerAccess, gr_pfn_cuCtxEnablePeerAccess);
STUB_CHECK(cuMemGetInfo_v2, gr_pfn_cuMemGetInfo);
STUB_CHECK(cuMemAlloc_v2, gr_pfn_cuMemAlloc);
STUB_CHECK(cuMemFree_v2, gr_pfn_cuMemFree);
STUB_CHECK(cuMemHostAlloc, gr_pfn_cuMemHostAlloc);
STUB_CHECK(cuMemFreeHost, gr_pfn_cuMemFreeHost);
STUB_CHECK(cuMemHostRegister_v2, gr_pfn_cuMemHostRegister);
STUB_CHECK(cuMemHostUnregister, gr_pfn_cuMemHostUnregister);
STUB_CHECK(cuMemHostGetDevicePointer_v2, gr_pfn_cuMemHostGetDevicePointer);
STUB_CHECK(cuMemcpyAsync, gr_pfn_cuMemcpyAsync);
STUB_CHECK(cuMemcpyPeerAsync, gr_pfn_cuMemcpyPeerAsync);
STUB_CHECK(cuMemsetD32Async, gr_pfn_cuMemsetD32Async);
STUB_CHECK(cuStreamCreate, gr_pfn_cuStreamCreate);
STUB_CHECK(cuStreamDestroy_v2, gr_pfn_cuStreamDestroy);
STUB_CHECK(cuStreamSynchronize, gr_pfn_cuStreamSynchronize);
STUB_CHECK(cuStreamWaitEvent, gr_pfn_cuStreamWaitEvent);
STUB_CHECK(cuEventCreate, gr_pfn_cuEventCreate);
STUB_CHECK(cuEventDestroy_v2, gr_pfn_cuEventDestroy);
STUB_CHECK(cuEventRecord, gr_pfn_cuEventRecord);
STUB_CHECK(cuEventSynchronize, gr_pfn_cuEventSynchronize);
STUB_CHECK(cuEventElapsedTime, gr_pfn_cuEventElapsedTime);
STUB_CHECK(cuModuleLoadData, gr_pfn_cuModuleLoadData);
STUB_CHECK(cuModuleUnload, gr_pfn_cuModuleUnload);
STUB_CHECK(cuModuleGetFunction, gr_pfn_cuModuleGetFunction);
STUB_CHECK(cuLaunchKernel, gr_pfn_cuLaunchKernel);

/* ------------------------------------------------------------- state */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int initialized;
static struct CUctx_st contexts[STUB_MAX_GPUS] = {{0, 0}, {1, 0}, {2, 0}, {3, 0}, {4, 0}, {5, 0}, {6, 0}, {7, 0}};
_Static_assert(STUB_MAX_GPUS == 8, "one context per GPU above");
static STUB_TLS struct CUctx_st *current;
static int peer[STUB_MAX_GPUS][STUB_MAX_GPUS]; /* [current ctx's GPU][peer ctx's GPU] enabled */
static size_t dev_used[STUB_MAX_GPUS];         /* bytes cuMemAlloc'd per GPU */
static struct CUstream_st default_streams[STUB_MAX_GPUS];
static struct alloc *allocs;
static struct CUstream_st *streams;
static struct CUevent_st *events;
static struct CUmod_st *modules;
static int vanish_calls; /* memcpy/memset/launch calls that involved GPU2 */
static int vanish_lost;  /* GPU2 has gone */
static atomic_uint aer_copies;  /* "burn-aer": host<->GPU1 cuMemcpyAsync calls that copied */
static atomic_uint aer_rewrites; /* "burn-aer": rewrites of the AER file so far */
static unsigned spin_gpu2;       /* "spin-timeout": gr_spin launches on GPU2's streams so far */

#define DEVBIT(d) ((d) >= 0 ? 1u << (d) : 0u)

/* ------------------------------------------------------------ helpers */

/* The current context of this thread, or NULL (unset or released). */
static struct CUctx_st *cur_ctx(void)
{
  return current && current->refs > 0 ? current : NULL;
}

static int valid_dev(int dev)
{
  return stub_gpu(dev) != NULL;
}

/* One of our primary contexts, retained; else NULL. */
static struct CUctx_st *ctx_of(gr_cu_context c)
{
  for (int i = 0; i < stub_gpu_count(); i++)
    if (c == &contexts[i])
      return contexts[i].refs > 0 ? c : NULL;
  return NULL;
}

/* Whether GPU2 falls off the bus after STUB_VANISH_CALL calls: "vanish",
 * and "burn-xid79" (whose NVML side differs, see stub_nvml.c). */
static int vanish_scenario(void)
{
  const char *sc = stub_scenario();
  return strcmp(sc, "vanish") == 0 || strcmp(sc, "burn-xid79") == 0;
}

/* GPU dev is gone under vanish_scenario(): every call touching it answers 999. */
static int is_lost(int dev)
{
  return dev == STUB_LOST_GPU && vanish_lost && vanish_scenario();
}

static int any_lost(unsigned devmask)
{
  return (devmask & DEVBIT(STUB_LOST_GPU)) && is_lost(STUB_LOST_GPU);
}

/* Counts a memcpy/memset/launch that involves GPU2 under "vanish"; the
 * STUB_VANISH_CALL-th such call is the one that loses it. 999 when lost. */
static gr_cu_result vanish_work(unsigned devmask)
{
  if (!(devmask & DEVBIT(STUB_LOST_GPU)) || !vanish_scenario())
    return CU_OK;
  if (vanish_lost)
    return CU_UNKNOWN;
  if (++vanish_calls >= STUB_VANISH_CALL) {
    vanish_lost = 1;
    return CU_UNKNOWN;
  }
  return CU_OK;
}

/* Resolves a stream handle: our live streams, or the current context's
 * default stream for the NULL/legacy/per-thread handles. */
static gr_cu_result stream_of(gr_cu_stream s, struct CUstream_st **out)
{
  if (stub_stream_is_default(s)) {
    struct CUctx_st *c = cur_ctx();
    if (!c)
      return CU_INVALID_CONTEXT;
    *out = &default_streams[c->dev];
    return CU_OK;
  }
  for (struct CUstream_st *p = streams; p; p = p->next)
    if (p == s) {
      *out = p;
      return CU_OK;
    }
  return CU_INVALID_HANDLE;
}

static struct CUevent_st *event_of(gr_cu_event e)
{
  for (struct CUevent_st *p = events; p; p = p->next)
    if (p == e)
      return p;
  return NULL;
}

static struct CUmod_st *module_of(gr_cu_module m)
{
  for (struct CUmod_st *p = modules; p; p = p->next)
    if (p == m)
      return p;
  return NULL;
}

static struct CUfunc_st *func_of(gr_cu_function f)
{
  for (struct CUmod_st *p = modules; p; p = p->next)
    if (f == &p->spin || f == &p->copy || f == &p->compare || f == &p->chase)
      return f;
  return NULL;
}

/* The registered allocation holding addr, or NULL (plain host memory). */
static struct alloc *alloc_at(uintptr_t addr)
{
  for (struct alloc *a = allocs; a; a = a->next)
    if (addr >= a->base && addr - a->base < a->size)
      return a;
  return NULL;
}

/* The allocation that starts exactly at addr with the given kind. */
static struct alloc **alloc_slot(uintptr_t addr, enum alloc_kind kind)
{
  for (struct alloc **pp = &allocs; *pp; pp = &(*pp)->next)
    if ((*pp)->base == addr && (*pp)->kind == kind)
      return pp;
  return NULL;
}

static int overlaps_any(uintptr_t base, size_t size)
{
  for (struct alloc *a = allocs; a; a = a->next)
    if (base < a->base + a->size && a->base < base + size)
      return 1;
  return 0;
}

static gr_cu_result add_alloc(uintptr_t base, size_t size, enum alloc_kind kind, int dev)
{
  struct alloc *a = malloc(sizeof(*a));
  if (!a)
    return CU_OUT_OF_MEMORY;
  *a = (struct alloc){base, size, kind, dev, allocs};
  allocs = a;
  return CU_OK;
}

/* Unlinks *pp and frees the entry, and the memory when the stub owns it. */
static void drop_alloc(struct alloc **pp)
{
  struct alloc *a = *pp;
  *pp = a->next;
  if (a->kind == ALLOC_DEVICE)
    dev_used[a->dev] -= a->size;
  if (a->kind != ALLOC_REGISTERED)
    free((void *)a->base);
  free(a);
}

/* Where [addr, addr+bytes) lives. *dev: the GPU for device memory, -1 for
 * host memory; *mapped: whether a kernel may touch it from any GPU (pinned
 * or registered host memory). A range that starts in a device allocation
 * must end inside it; NULL is never valid. */
struct place {
  int dev;
  int mapped;
};
static gr_cu_result place_of(uintptr_t addr, size_t bytes, struct place *p)
{
  if (!addr)
    return CU_INVALID_VALUE;
  struct alloc *a = alloc_at(addr);
  p->dev = a && a->kind == ALLOC_DEVICE ? a->dev : -1;
  p->mapped = a != NULL;
  if (a && a->kind == ALLOC_DEVICE && bytes > a->size - (addr - a->base))
    return CU_INVALID_VALUE;
  return CU_OK;
}

/* Copy-engine rate in GB/s from src to dst. */
static double copy_rate(int src, int dst)
{
  const struct stub_gpu *gs = stub_gpu(src), *gd = stub_gpu(dst);
  if (!gs && !gd)
    return STUB_RATE_H2H;
  if (!gs)
    return gd->h2d_gbs;
  if (!gd)
    return gs->d2h_gbs;
  if (src == dst)
    return stub_machine()->local_gbs > 0 ? stub_machine()->local_gbs : STUB_RATE_D2D_SAME;
  return peer[src][dst] || peer[dst][src] ? STUB_RATE_PEER : STUB_RATE_STAGED;
}

/* ---------------------------------------- "amd-pull" and "a100-uplink" */

/* "amd-pull": a copy between two GPUs with peer access that the destination
 * issues (a peer read: cuMemcpyPeerAsync on the destination's stream, or
 * gr_copy running there) runs at this fraction of the rate a push gets, as
 * on AMD root complexes where non-posted peer reads are slower than posted
 * writes. */
#define STUB_PULL_FACTOR 0.6
static double pull_factor(const struct CUstream_st *stream, struct place s, struct place d)
{
  if (s.dev < 0 || d.dev < 0 || s.dev == d.dev || stream->dev != d.dev || !stub_scenario_is("amd-pull"))
    return 1.0;
  return peer[s.dev][d.dev] || peer[d.dev][s.dev] ? STUB_PULL_FACTOR : 1.0;
}

/* "a100-uplink": GPUs 2k and 2k+1 sit below one PCIe switch whose uplink
 * carries STUB_UPLINK_GBS per direction. Host<->GPU copies queued on
 * several streams between a gr_spin launch and the next time a timing is
 * read run at the same time on the real machine; here each (stream,
 * direction) books its bytes and its own duration, and a timing read
 * shares each uplink among its bookings fairly (max-min, as PCIe arbitration
 * roughly does): a stream's elapsed time grows by its finish time under
 * sharing over its own. */
#define STUB_UPLINK_GBS 26.0
#define STUB_UPLINK_MAX 64
struct uplink_use {
  const struct CUstream_st *stream;
  int dir, link; /* dir 0 host -> GPU, 1 GPU -> host; link: the switch */
  double bytes, own_s;
  int timed; /* its stream's elapsed time was read: later event pairs of that stream (an all-reduce's, a
                chase's, outside any spin window) are not slowed by it, though it still shares the link */
};
static struct uplink_use uplink_uses[STUB_UPLINK_MAX];
static int uplink_nuses;
static int uplink_closed; /* a timing was read: the next gr_spin starts a new set of concurrent copies */

static void uplink_note(const struct CUstream_st *stream, struct place d, struct place s, size_t bytes, double own_s)
{
  /* only copies queued inside a spin window (gr_spin to the next timing read) run at once; a set-up copy
   * outside one (a chain or pattern written before a test) is not booked */
  if ((d.dev >= 0) == (s.dev >= 0) || uplink_closed || !stub_scenario_is("a100-uplink"))
    return;
  int gpu = d.dev >= 0 ? d.dev : s.dev, dir = d.dev >= 0 ? 0 : 1;
  for (int i = 0; i < uplink_nuses; i++)
    if (uplink_uses[i].stream == stream && uplink_uses[i].dir == dir) {
      uplink_uses[i].bytes += (double)bytes;
      uplink_uses[i].own_s += own_s;
      return;
    }
  if (uplink_nuses < STUB_UPLINK_MAX)
    uplink_uses[uplink_nuses++] = (struct uplink_use){stream, dir, gpu / 2, (double)bytes, own_s, 0};
}

static void uplink_spin(void)
{
  if (uplink_closed)
    uplink_nuses = 0;
  uplink_closed = 0;
}

/* Max-min fair rates of the live bookings n[0..k-1] (bytes/s) into x. */
static void uplink_shares(const double *own_rate, const int *live, int k, double *x)
{
  int done[STUB_UPLINK_MAX] = {0}, left = 0;
  double cap = STUB_UPLINK_GBS * 1e9;
  for (int i = 0; i < k; i++)
    left += live[i];
  while (left > 0) {
    int lo = -1;
    for (int i = 0; i < k; i++)
      if (live[i] && !done[i] && (lo < 0 || own_rate[i] < own_rate[lo]))
        lo = i;
    if (own_rate[lo] * left <= cap) { /* the slowest wants less than its share: it gets its own rate */
      x[lo] = own_rate[lo];
      cap -= own_rate[lo];
      done[lo] = 1;
      left--;
      continue;
    }
    for (int i = 0; i < k; i++)
      if (live[i] && !done[i])
        x[i] = cap / left;
    break;
  }
}

/* When booking u finishes with its uplink shared, in seconds from the start. */
static double uplink_finish(int u)
{
  double rem[STUB_UPLINK_MAX], rate[STUB_UPLINK_MAX], x[STUB_UPLINK_MAX], t = 0;
  int live[STUB_UPLINK_MAX], k = 0, me = 0;
  for (int i = 0; i < uplink_nuses; i++) {
    const struct uplink_use *b = &uplink_uses[i];
    if (b->link != uplink_uses[u].link || b->dir != uplink_uses[u].dir || b->own_s <= 0)
      continue;
    me = i == u ? k : me;
    rem[k] = b->bytes;
    rate[k] = b->bytes / b->own_s;
    live[k++] = 1;
  }
  for (int round = 0; round <= k; round++) {
    uplink_shares(rate, live, k, x);
    double dt = -1;
    for (int i = 0; i < k; i++)
      if (live[i] && (dt < 0 || rem[i] / x[i] < dt))
        dt = rem[i] / x[i];
    t += dt;
    for (int i = 0; i < k; i++) {
      if (!live[i])
        continue;
      rem[i] -= x[i] * dt;
      if (rem[i] <= 1e-6 * uplink_uses[u].bytes) {
        live[i] = 0;
        if (i == me)
          return t;
      }
    }
  }
  return t;
}

/* How much longer the stream's copies took with its uplink shared (1: no
 * sharing, or not "a100-uplink"). */
static double uplink_slowdown(const struct CUstream_st *stream)
{
  double f = 1.0;
  uplink_closed = 1;
  for (int i = 0; i < uplink_nuses; i++)
    if (uplink_uses[i].stream == stream && uplink_uses[i].own_s > 0 && !uplink_uses[i].timed) {
      double g = uplink_finish(i) / uplink_uses[i].own_s;
      f = g > f ? g : f;
    }
  for (int i = 0; i < uplink_nuses; i++)
    if (uplink_uses[i].stream == stream)
      uplink_uses[i].timed = 1;
  return f;
}

/* The host's virtual "now": the latest clock it has waited for
 * (cuStreamSynchronize, cuEventSynchronize). Work queued after a wait cannot
 * start before it on any stream, as on a real machine where every stream the
 * host has waited for is idle; without this, streams with less work behind
 * them would start an all-reduce early and the first size would wait for the
 * others inside its timed window. */
static double host_now;

static void catch_up(struct CUstream_st *s)
{
  if (s->clock < host_now)
    s->clock = host_now;
}

static void host_waited(double t)
{
  if (t > host_now)
    host_now = t;
}

/* Calls into this library so far (ENTER counts them; cuEventRecord, which
 * touches no memory, takes its own back), and the last copy: a copy that
 * repeats it with no call in between (the next in a run of copies, or the
 * next loop of one gr_copy launch) leaves memory as it is, so its bytes are
 * not moved again; only its time is counted. gpurig's own writes to host
 * memory come after a synchronising call, which breaks the run. This keeps
 * the stand-in's CPU cost at one copy per run instead of warm-up + timed. */
static unsigned long api_calls;
static struct {
  uintptr_t dst, src;
  size_t bytes;
  unsigned long call;
} last_copy;

static bool copy_repeats(uintptr_t dst, uintptr_t src, size_t bytes)
{
  bool apart = dst + bytes <= src || src + bytes <= dst;
  return bytes && apart && last_copy.dst == dst && last_copy.src == src && last_copy.bytes == bytes &&
         (last_copy.call == api_calls || last_copy.call + 1 == api_calls);
}

/* The data movement shared by memcpy, peer memcpy and gr_copy, with the
 * scenario rules; the caller has checked the places and counted the call. */
static gr_cu_result do_copy(uintptr_t dst, struct place d, uintptr_t src, struct place s, size_t bytes,
                            struct CUstream_st *stream, double factor, double latency)
{
  if (s.dev == 0 && d.dev == 3 && stub_scenario_is("copyerr"))
    return CU_INVALID_VALUE;
  if (!copy_repeats(dst, src, bytes)) {
    if (bytes)
      memmove((void *)dst, (const void *)src, bytes);
    if (s.dev == 1 && d.dev == 3 && bytes > 4097 && stub_scenario_is("corrupt"))
      ((unsigned char *)dst)[4097] ^= 1u;
  }
  last_copy.dst = dst;
  last_copy.src = src;
  last_copy.bytes = bytes;
  last_copy.call = api_calls;
  double own = (double)bytes / (copy_rate(s.dev, d.dev) * factor * pull_factor(stream, s, d) * 1e9);
  uplink_note(stream, d, s, bytes, own);
  catch_up(stream);
  stream->clock += own + latency;
  return CU_OK;
}

/* "burn-aer": writes "RxErr N / BadTLP 0 / TOTAL_ERR_COR N" to
 * $GPURIG_STUB_TREE/STUB_AER_FILE through a temporary file in the same
 * directory and rename(), so a reader sees the old or the new text, never
 * a part. Failures are ignored (the stubs never print). */
static void write_aer(unsigned n)
{
  const char *tree = getenv("GPURIG_STUB_TREE");
  if (!tree || !*tree)
    return;
  char path[4096], tmp[4096 + 16], text[96];
  if (snprintf(path, sizeof(path), "%s/%s", tree, STUB_AER_FILE) >= (int)sizeof(path))
    return;
  snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path);
  int len = snprintf(text, sizeof(text), "RxErr %u\nBadTLP 0\nTOTAL_ERR_COR %u\n", n, n);
  int fd = mkstemp(tmp);
  if (fd < 0)
    return;
  int ok = fchmod(fd, 0644) == 0 && write(fd, text, (size_t)len) == len;
  ok = close(fd) == 0 && ok;
  if (!ok || rename(tmp, path) != 0)
    unlink(tmp);
}

/* "burn-aer": counts a cuMemcpyAsync between host memory and GPU1's (either
 * way) and rewrites the AER file on every STUB_AER_EVERY-th, at most
 * STUB_AER_MAX_REWRITES times. Runs under the lock, so the rewrites land in
 * order. */
static void aer_copy(struct place d, struct place s)
{
  if (!((d.dev == STUB_AER_GPU && s.dev < 0) || (s.dev == STUB_AER_GPU && d.dev < 0)) ||
      !stub_scenario_is("burn-aer") || !stub_default_machine())
    return;
  if ((atomic_fetch_add(&aer_copies, 1u) + 1) % STUB_AER_EVERY != 0)
    return;
  unsigned done = atomic_load(&aer_rewrites);
  while (done < STUB_AER_MAX_REWRITES && !atomic_compare_exchange_weak(&aer_rewrites, &done, done + 1))
    ;
  if (done < STUB_AER_MAX_REWRITES)
    write_aer(STUB_AER_START + (done + 1) * STUB_AER_STEP);
}

/* Frees what a primary context owned when its last reference goes, as the
 * driver does: device memory, streams, events, modules, peer mappings. */
static void destroy_context_state(int dev)
{
  for (struct alloc **pp = &allocs; *pp;)
    if ((*pp)->kind == ALLOC_DEVICE && (*pp)->dev == dev)
      drop_alloc(pp);
    else
      pp = &(*pp)->next;
  for (struct CUstream_st **pp = &streams; *pp;)
    if ((*pp)->dev == dev) {
      struct CUstream_st *s = *pp;
      *pp = s->next;
      free(s);
    } else
      pp = &(*pp)->next;
  for (struct CUevent_st **pp = &events; *pp;)
    if ((*pp)->dev == dev) {
      struct CUevent_st *e = *pp;
      *pp = e->next;
      free(e);
    } else
      pp = &(*pp)->next;
  for (struct CUmod_st **pp = &modules; *pp;)
    if ((*pp)->dev == dev) {
      struct CUmod_st *m = *pp;
      *pp = m->next;
      free(m);
    } else
      pp = &(*pp)->next;
  for (int i = 0; i < STUB_MAX_GPUS; i++)
    peer[dev][i] = peer[i][dev] = 0;
  default_streams[dev].clock = 0;
}

/* Every export but cuGetErrorString and cuDriverGetVersion runs its body
 * under the lock, after the not-initialised check. */
#define ENTER                                                                                                          \
  gr_cu_result r_ = CU_OK;                                                                                             \
  pthread_mutex_lock(&lock);                                                                                           \
  api_calls++;                                                                                                         \
  if (!initialized) {                                                                                                  \
    r_ = CU_NOT_INITIALIZED;                                                                                           \
    goto out_;                                                                                                         \
  }
#define FAIL(code)                                                                                                     \
  do {                                                                                                                 \
    r_ = (code);                                                                                                       \
    goto out_;                                                                                                         \
  } while (0)
#define LEAVE                                                                                                          \
  out_:                                                                                                                \
  pthread_mutex_unlock(&lock);                                                                                         \
  return r_

/* ------------------------------------------------------ init, devices */

gr_cu_result cuInit(unsigned int flags)
{
  if (flags != 0)
    return CU_INVALID_VALUE;
  if (stub_scenario_is("initfail"))
    return CU_NO_DEVICE;
  const char *visible = getenv("CUDA_VISIBLE_DEVICES");
  if (visible && !*visible) /* as the driver: an empty list hides every GPU */
    return CU_NO_DEVICE;
  pthread_mutex_lock(&lock);
  if (!initialized)
    for (int i = 0; i < STUB_MAX_GPUS; i++)
      default_streams[i] = (struct CUstream_st){.dev = i, .magic = STUB_STREAM_MAGIC};
  initialized = 1;
  pthread_mutex_unlock(&lock);
  return CU_OK;
}

gr_cu_result cuDriverGetVersion(int *version)
{
  if (!version)
    return CU_INVALID_VALUE;
  *version = 12040;
  return CU_OK;
}

gr_cu_result cuGetErrorString(gr_cu_result error, const char **str)
{
  static const struct {
    gr_cu_result code;
    const char *text;
  } texts[] = {
      {CU_OK, "no error"},
      {CU_INVALID_VALUE, "invalid argument"},
      {CU_OUT_OF_MEMORY, "out of memory"},
      {CU_NOT_INITIALIZED, "initialization error"},
      {CU_NO_DEVICE, "no CUDA-capable device is detected"},
      {CU_INVALID_DEVICE, "invalid device ordinal"},
      {CU_INVALID_IMAGE, "device kernel image is invalid"},
      {CU_INVALID_CONTEXT, "invalid device context"},
      {CU_INVALID_HANDLE, "invalid resource handle"},
      {CU_NOT_FOUND, "named symbol not found"},
      {CU_NOT_READY, "device not ready"},
      {CU_ILLEGAL_ADDRESS, "an illegal memory access was encountered"},
      {CU_PEER_ACCESS_ALREADY_ENABLED, "peer access is already enabled"},
      {CU_UNKNOWN, "unknown error"},
  };
  if (!str)
    return CU_INVALID_VALUE;
  for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
    if (texts[i].code == error) {
      *str = texts[i].text;
      return CU_OK;
    }
  *str = NULL;
  return CU_INVALID_VALUE;
}

gr_cu_result cuDeviceGetCount(int *count)
{
  ENTER;
  if (!count)
    FAIL(CU_INVALID_VALUE);
  *count = stub_gpu_count();
  LEAVE;
}

gr_cu_result cuDeviceGet(gr_cu_device *device, int ordinal)
{
  ENTER;
  if (!device)
    FAIL(CU_INVALID_VALUE);
  if (!valid_dev(ordinal))
    FAIL(CU_INVALID_DEVICE);
  *device = ordinal;
  LEAVE;
}

/* CUDA's string answers truncate to the buffer instead of failing. */
static void put_truncated(char *buf, int len, const char *text)
{
  size_t n = strlen(text);
  if (n > (size_t)len - 1)
    n = (size_t)len - 1;
  memcpy(buf, text, n);
  buf[n] = '\0';
}

gr_cu_result cuDeviceGetName(char *name, int len, gr_cu_device dev)
{
  ENTER;
  if (!name || len <= 0)
    FAIL(CU_INVALID_VALUE);
  if (!valid_dev(dev))
    FAIL(CU_INVALID_DEVICE);
  put_truncated(name, len, stub_machine()->name);
  LEAVE;
}

gr_cu_result cuDeviceGetPCIBusId(char *busid, int len, gr_cu_device dev)
{
  ENTER;
  if (!busid || len <= 0)
    FAIL(CU_INVALID_VALUE);
  if (!valid_dev(dev))
    FAIL(CU_INVALID_DEVICE);
  put_truncated(busid, len, stub_gpu(dev)->busid);
  LEAVE;
}

gr_cu_result cuDeviceGetAttribute(int *value, unsigned int attrib, gr_cu_device dev)
{
  ENTER;
  if (!value)
    FAIL(CU_INVALID_VALUE);
  if (!valid_dev(dev))
    FAIL(CU_INVALID_DEVICE);
  *value = attrib == GR_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT ? 82
           : attrib == GR_CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING ? 1
                                                                  : 0;
  LEAVE;
}

gr_cu_result cuDeviceCanAccessPeer(int *can, gr_cu_device dev, gr_cu_device peer_dev)
{
  ENTER;
  if (!can)
    FAIL(CU_INVALID_VALUE);
  if (!valid_dev(dev) || !valid_dev(peer_dev))
    FAIL(CU_INVALID_DEVICE);
  *can = dev != peer_dev && stub_same_bridge(dev, peer_dev);
  LEAVE;
}

/* ----------------------------------------------------------- contexts */

gr_cu_result cuDevicePrimaryCtxRetain(gr_cu_context *ctx, gr_cu_device dev)
{
  ENTER;
  if (!ctx)
    FAIL(CU_INVALID_VALUE);
  if (!valid_dev(dev))
    FAIL(CU_INVALID_DEVICE);
  contexts[dev].refs++;
  *ctx = &contexts[dev];
  LEAVE;
}

gr_cu_result cuDevicePrimaryCtxRelease_v2(gr_cu_device dev)
{
  ENTER;
  if (!valid_dev(dev))
    FAIL(CU_INVALID_DEVICE);
  if (contexts[dev].refs <= 0)
    FAIL(CU_INVALID_CONTEXT);
  if (--contexts[dev].refs == 0)
    destroy_context_state(dev);
  LEAVE;
}

gr_cu_result cuCtxSetCurrent(gr_cu_context ctx)
{
  ENTER;
  if (ctx && !ctx_of(ctx))
    FAIL(CU_INVALID_CONTEXT);
  current = ctx;
  LEAVE;
}

gr_cu_result cuCtxEnablePeerAccess(gr_cu_context peer_ctx, unsigned int flags)
{
  ENTER;
  struct CUctx_st *c = cur_ctx(), *p = ctx_of(peer_ctx);
  if (!c)
    FAIL(CU_INVALID_CONTEXT);
  if (!p || flags != 0 || p == c)
    FAIL(CU_INVALID_VALUE);
  if (any_lost(DEVBIT(c->dev) | DEVBIT(p->dev)))
    FAIL(CU_UNKNOWN);
  if (!stub_same_bridge(c->dev, p->dev))
    FAIL(CU_INVALID_VALUE);
  if (peer[c->dev][p->dev])
    FAIL(CU_PEER_ACCESS_ALREADY_ENABLED);
  peer[c->dev][p->dev] = 1;
  LEAVE;
}

/* ------------------------------------------------------------- memory */

gr_cu_result cuMemGetInfo_v2(size_t *free_bytes, size_t *total_bytes)
{
  ENTER;
  struct CUctx_st *c = cur_ctx();
  if (!c)
    FAIL(CU_INVALID_CONTEXT);
  if (!free_bytes || !total_bytes)
    FAIL(CU_INVALID_VALUE);
  if (is_lost(c->dev))
    FAIL(CU_UNKNOWN);
  *free_bytes = STUB_DEVICE_MEM - dev_used[c->dev];
  *total_bytes = stub_machine()->mem;
  LEAVE;
}

gr_cu_result cuMemAlloc_v2(gr_cu_deviceptr *dptr, size_t size)
{
  ENTER;
  struct CUctx_st *c = cur_ctx();
  void *p = NULL;
  if (!c)
    FAIL(CU_INVALID_CONTEXT);
  if (!dptr || size == 0)
    FAIL(CU_INVALID_VALUE);
  if (is_lost(c->dev))
    FAIL(CU_UNKNOWN);
  if (size > STUB_DEVICE_MEM - dev_used[c->dev] || posix_memalign(&p, 256, size) != 0)
    FAIL(CU_OUT_OF_MEMORY);
  memset(p, 0, size);
  if (add_alloc((uintptr_t)p, size, ALLOC_DEVICE, c->dev) != CU_OK) {
    free(p);
    FAIL(CU_OUT_OF_MEMORY);
  }
  dev_used[c->dev] += size;
  *dptr = (uintptr_t)p;
  LEAVE;
}

gr_cu_result cuMemFree_v2(gr_cu_deviceptr dptr)
{
  ENTER;
  if (!dptr)
    FAIL(CU_OK);
  struct alloc **pp = alloc_slot((uintptr_t)dptr, ALLOC_DEVICE);
  if (!pp)
    FAIL(CU_INVALID_VALUE);
  int lost = is_lost((*pp)->dev);
  drop_alloc(pp); /* freed even on a lost GPU, so nothing leaks */
  if (lost)
    FAIL(CU_UNKNOWN);
  LEAVE;
}

gr_cu_result cuMemHostAlloc(void **pp, size_t size, unsigned int flags)
{
  ENTER;
  void *p = NULL;
  if (!cur_ctx())
    FAIL(CU_INVALID_CONTEXT);
  if (!pp || size == 0 || (flags & ~(unsigned)HOSTALLOC_FLAGS))
    FAIL(CU_INVALID_VALUE);
  if (posix_memalign(&p, 4096, size) != 0)
    FAIL(CU_OUT_OF_MEMORY);
  memset(p, 0, size);
  if (add_alloc((uintptr_t)p, size, ALLOC_HOST, -1) != CU_OK) {
    free(p);
    FAIL(CU_OUT_OF_MEMORY);
  }
  *pp = p;
  LEAVE;
}

gr_cu_result cuMemFreeHost(void *p)
{
  ENTER;
  struct alloc **pp = alloc_slot((uintptr_t)p, ALLOC_HOST);
  if (!p || !pp)
    FAIL(CU_INVALID_VALUE);
  drop_alloc(pp);
  LEAVE;
}

gr_cu_result cuMemHostRegister_v2(void *p, size_t size, unsigned int flags)
{
  ENTER;
  if (!cur_ctx())
    FAIL(CU_INVALID_CONTEXT);
  if (!p || size == 0 || (flags & ~(unsigned)HOSTREGISTER_FLAGS) || overlaps_any((uintptr_t)p, size))
    FAIL(CU_INVALID_VALUE);
  r_ = add_alloc((uintptr_t)p, size, ALLOC_REGISTERED, -1);
  LEAVE;
}

gr_cu_result cuMemHostUnregister(void *p)
{
  ENTER;
  struct alloc **pp = alloc_slot((uintptr_t)p, ALLOC_REGISTERED);
  if (!p || !pp)
    FAIL(CU_INVALID_VALUE);
  drop_alloc(pp);
  LEAVE;
}

gr_cu_result cuMemHostGetDevicePointer_v2(gr_cu_deviceptr *dptr, void *p, unsigned int flags)
{
  ENTER;
  struct alloc *a = p ? alloc_at((uintptr_t)p) : NULL;
  if (!cur_ctx())
    FAIL(CU_INVALID_CONTEXT);
  if (!dptr || flags != 0 || !a || a->kind == ALLOC_DEVICE)
    FAIL(CU_INVALID_VALUE);
  *dptr = (uintptr_t)p;
  LEAVE;
}

/* ------------------------------------------------------- copies, memset */

gr_cu_result cuMemcpyAsync(gr_cu_deviceptr dst, gr_cu_deviceptr src, size_t bytes, gr_cu_stream stream)
{
  ENTER;
  struct CUstream_st *s;
  struct place d, from;
  if ((r_ = stream_of(stream, &s)) != CU_OK)
    goto out_;
  if (place_of(dst, bytes, &d) != CU_OK || place_of(src, bytes, &from) != CU_OK)
    FAIL(CU_INVALID_VALUE);
  if ((r_ = vanish_work(DEVBIT(s->dev) | DEVBIT(d.dev) | DEVBIT(from.dev))) != CU_OK)
    goto out_;
  r_ = do_copy(dst, d, src, from, bytes, s, 1.0, STUB_COPY_LATENCY);
  if (r_ == CU_OK)
    aer_copy(d, from);
  LEAVE;
}

gr_cu_result cuMemcpyPeerAsync(gr_cu_deviceptr dst, gr_cu_context dst_ctx, gr_cu_deviceptr src,
                               gr_cu_context src_ctx, size_t bytes, gr_cu_stream stream)
{
  ENTER;
  struct CUstream_st *s;
  struct CUctx_st *dc = ctx_of(dst_ctx), *sc = ctx_of(src_ctx);
  struct place d, from;
  if (!dc || !sc)
    FAIL(CU_INVALID_CONTEXT);
  if ((r_ = stream_of(stream, &s)) != CU_OK)
    goto out_;
  if (place_of(dst, bytes, &d) != CU_OK || place_of(src, bytes, &from) != CU_OK)
    FAIL(CU_INVALID_VALUE);
  if ((d.dev >= 0 && d.dev != dc->dev) || (from.dev >= 0 && from.dev != sc->dev))
    FAIL(CU_INVALID_VALUE);
  if ((r_ = vanish_work(DEVBIT(s->dev) | DEVBIT(d.dev) | DEVBIT(from.dev) | DEVBIT(dc->dev) | DEVBIT(sc->dev))) !=
      CU_OK)
    goto out_;
  r_ = do_copy(dst, d, src, from, bytes, s, 1.0, STUB_COPY_LATENCY);
  LEAVE;
}

gr_cu_result cuMemsetD32Async(gr_cu_deviceptr dst, unsigned int value, size_t n, gr_cu_stream stream)
{
  ENTER;
  struct CUstream_st *s;
  struct place d;
  if ((r_ = stream_of(stream, &s)) != CU_OK)
    goto out_;
  if (dst % 4 != 0 || n > SIZE_MAX / 4 || place_of(dst, n * 4, &d) != CU_OK)
    FAIL(CU_INVALID_VALUE);
  if ((r_ = vanish_work(DEVBIT(s->dev) | DEVBIT(d.dev))) != CU_OK)
    goto out_;
  unsigned char *out = (unsigned char *)(uintptr_t)dst;
  size_t done = n ? 4 : 0;
  if (n)
    memcpy(out, &value, 4);
  while (done < n * 4) { /* doubling fill */
    size_t chunk = done < n * 4 - done ? done : n * 4 - done;
    memcpy(out + done, out, chunk);
    done += chunk;
  }
  catch_up(s);
  s->clock += (double)n * 4 / (STUB_RATE_MEMSET * 1e9) + STUB_COPY_LATENCY;
  LEAVE;
}

/* ------------------------------------------------------------ streams */

gr_cu_result cuStreamCreate(gr_cu_stream *stream, unsigned int flags)
{
  ENTER;
  struct CUctx_st *c = cur_ctx();
  if (!c)
    FAIL(CU_INVALID_CONTEXT);
  if (!stream || (flags & ~(unsigned)GR_CU_STREAM_NON_BLOCKING))
    FAIL(CU_INVALID_VALUE);
  if (is_lost(c->dev))
    FAIL(CU_UNKNOWN);
  struct CUstream_st *s = malloc(sizeof(*s));
  if (!s)
    FAIL(CU_OUT_OF_MEMORY);
  *s = (struct CUstream_st){.dev = c->dev, .clock = 0, .magic = STUB_STREAM_MAGIC, .flags = flags, .next = streams};
  streams = s;
  *stream = s;
  LEAVE;
}

gr_cu_result cuStreamDestroy_v2(gr_cu_stream stream)
{
  ENTER;
  struct CUstream_st **pp = &streams;
  while (*pp && *pp != stream)
    pp = &(*pp)->next;
  if (!stream || !*pp)
    FAIL(CU_INVALID_HANDLE);
  struct CUstream_st *s = *pp;
  int lost = is_lost(s->dev);
  *pp = s->next;
  s->magic = 0;
  free(s); /* freed even on a lost GPU */
  if (lost)
    FAIL(CU_UNKNOWN);
  LEAVE;
}

gr_cu_result cuStreamSynchronize(gr_cu_stream stream)
{
  ENTER;
  struct CUstream_st *s;
  if ((r_ = stream_of(stream, &s)) != CU_OK)
    goto out_;
  if (is_lost(s->dev))
    FAIL(CU_UNKNOWN);
  uplink_closed = 1;
  host_waited(s->clock);
  LEAVE;
}

gr_cu_result cuStreamWaitEvent(gr_cu_stream stream, gr_cu_event event, unsigned int flags)
{
  ENTER;
  struct CUstream_st *s;
  struct CUevent_st *e = event_of(event);
  if ((r_ = stream_of(stream, &s)) != CU_OK)
    goto out_;
  if (!e)
    FAIL(CU_INVALID_HANDLE);
  if (flags != 0)
    FAIL(CU_INVALID_VALUE);
  if (is_lost(s->dev) || is_lost(e->dev))
    FAIL(CU_UNKNOWN);
  if (e->recorded && e->time > s->clock)
    s->clock = e->time;
  LEAVE;
}

/* ------------------------------------------------------------- events */

gr_cu_result cuEventCreate(gr_cu_event *event, unsigned int flags)
{
  ENTER;
  struct CUctx_st *c = cur_ctx();
  if (!c)
    FAIL(CU_INVALID_CONTEXT);
  if (!event || (flags & ~(unsigned)EVENT_FLAGS))
    FAIL(CU_INVALID_VALUE);
  if (is_lost(c->dev))
    FAIL(CU_UNKNOWN);
  struct CUevent_st *e = malloc(sizeof(*e));
  if (!e)
    FAIL(CU_OUT_OF_MEMORY);
  *e = (struct CUevent_st){.dev = c->dev, .flags = flags, .next = events};
  events = e;
  *event = e;
  LEAVE;
}

gr_cu_result cuEventDestroy_v2(gr_cu_event event)
{
  ENTER;
  struct CUevent_st **pp = &events;
  while (*pp && *pp != event)
    pp = &(*pp)->next;
  if (!event || !*pp)
    FAIL(CU_INVALID_HANDLE);
  struct CUevent_st *e = *pp;
  int lost = is_lost(e->dev);
  *pp = e->next;
  free(e); /* freed even on a lost GPU */
  if (lost)
    FAIL(CU_UNKNOWN);
  LEAVE;
}

gr_cu_result cuEventRecord(gr_cu_event event, gr_cu_stream stream)
{
  ENTER;
  api_calls--; /* touches no memory: the copies on either side of it may still repeat (last_copy) */
  struct CUstream_st *s;
  struct CUevent_st *e = event_of(event);
  if (!e)
    FAIL(CU_INVALID_HANDLE);
  if ((r_ = stream_of(stream, &s)) != CU_OK)
    goto out_;
  if (s->dev != e->dev) /* event and stream must share a context */
    FAIL(CU_INVALID_HANDLE);
  if (is_lost(s->dev))
    FAIL(CU_UNKNOWN);
  e->recorded = 1;
  catch_up(s);
  e->time = s->clock;
  e->stream = s;
  LEAVE;
}

gr_cu_result cuEventSynchronize(gr_cu_event event)
{
  ENTER;
  struct CUevent_st *e = event_of(event);
  if (!e)
    FAIL(CU_INVALID_HANDLE);
  if (is_lost(e->dev))
    FAIL(CU_UNKNOWN);
  uplink_closed = 1;
  if (e->recorded)
    host_waited(e->time);
  LEAVE;
}

gr_cu_result cuEventElapsedTime(float *ms, gr_cu_event start, gr_cu_event end)
{
  ENTER;
  struct CUevent_st *a = event_of(start), *b = event_of(end);
  if (!ms)
    FAIL(CU_INVALID_VALUE);
  if (!a || !b)
    FAIL(CU_INVALID_HANDLE);
  if (is_lost(a->dev) || is_lost(b->dev))
    FAIL(CU_UNKNOWN);
  if (!a->recorded || !b->recorded || ((a->flags | b->flags) & EVENT_DISABLE_TIMING))
    FAIL(CU_INVALID_HANDLE);
  *ms = (float)((b->time - a->time) * 1000.0 * (a->stream == b->stream ? uplink_slowdown(b->stream) : 1.0));
  LEAVE;
}

/* ---------------------------------------------------- modules, kernels */

gr_cu_result cuModuleLoadData(gr_cu_module *module, const void *image)
{
  ENTER;
  struct CUctx_st *c = cur_ctx();
  if (!c)
    FAIL(CU_INVALID_CONTEXT);
  if (!module || !image)
    FAIL(CU_INVALID_VALUE);
  if (is_lost(c->dev))
    FAIL(CU_UNKNOWN);
  if (!strstr(image, ".entry gr_spin") || !strstr(image, ".entry gr_copy") || !strstr(image, ".entry gr_compare") ||
      !strstr(image, ".entry gr_chase"))
    FAIL(CU_INVALID_IMAGE);
  struct CUmod_st *m = malloc(sizeof(*m));
  if (!m)
    FAIL(CU_OUT_OF_MEMORY);
  *m = (struct CUmod_st){.dev = c->dev, .next = modules};
  m->spin = (struct CUfunc_st){FUNC_SPIN, m};
  m->copy = (struct CUfunc_st){FUNC_COPY, m};
  m->compare = (struct CUfunc_st){FUNC_COMPARE, m};
  m->chase = (struct CUfunc_st){FUNC_CHASE, m};
  modules = m;
  *module = m;
  LEAVE;
}

gr_cu_result cuModuleUnload(gr_cu_module module)
{
  ENTER;
  struct CUmod_st **pp = &modules;
  while (*pp && *pp != module)
    pp = &(*pp)->next;
  if (!module || !*pp)
    FAIL(CU_INVALID_HANDLE);
  struct CUmod_st *m = *pp;
  *pp = m->next;
  free(m);
  LEAVE;
}

gr_cu_result cuModuleGetFunction(gr_cu_function *func, gr_cu_module module, const char *name)
{
  ENTER;
  struct CUmod_st *m = module_of(module);
  if (!func || !name)
    FAIL(CU_INVALID_VALUE);
  if (!m)
    FAIL(CU_INVALID_HANDLE);
  if (strcmp(name, "gr_spin") == 0)
    *func = &m->spin;
  else if (strcmp(name, "gr_copy") == 0)
    *func = &m->copy;
  else if (strcmp(name, "gr_compare") == 0)
    *func = &m->compare;
  else if (strcmp(name, "gr_chase") == 0)
    *func = &m->chase;
  else
    FAIL(CU_NOT_FOUND);
  LEAVE;
}

static unsigned long long param_u64(void **params, int i)
{
  unsigned long long v;
  memcpy(&v, params[i], sizeof(v));
  return v;
}

static unsigned param_u32(void **params, int i)
{
  unsigned v;
  memcpy(&v, params[i], sizeof(v));
  return v;
}

/* Whether a kernel on GPU dev may touch memory at place p: its own memory,
 * a peer's after cuCtxEnablePeerAccess from dev's context, mapped host. */
static int kernel_can_touch(int dev, struct place p)
{
  return p.dev < 0 ? p.mapped : p.dev == dev || peer[dev][p.dev];
}

/* gr_spin(flag, timeout_ns, timed_out): the real kernel waits for the host
 * to set *flag; here everything has already run, so it takes no time. Under
 * "spin-timeout" the 2nd gr_spin on GPU2's streams gives up instead: it
 * writes 1 to *timed_out, as the kernel does after timeout_ns. */
static gr_cu_result run_spin(struct CUstream_st *s, void **params)
{
  struct place flag, out;
  unsigned long long flag_addr = param_u64(params, 0), out_addr = param_u64(params, 2);
  gr_cu_result r;
  (void)param_u64(params, 1);
  if (place_of(flag_addr, sizeof(int), &flag) != CU_OK || place_of(out_addr, sizeof(int), &out) != CU_OK)
    return CU_INVALID_VALUE;
  if ((r = vanish_work(DEVBIT(s->dev) | DEVBIT(flag.dev) | DEVBIT(out.dev))) != CU_OK)
    return r;
  if (!kernel_can_touch(s->dev, flag) || !kernel_can_touch(s->dev, out))
    return CU_ILLEGAL_ADDRESS;
  if (s->dev == 2 && stub_scenario_is("spin-timeout") && ++spin_gpu2 == 2)
    *(int *)(uintptr_t)out_addr = 1;
  uplink_spin();
  return CU_OK;
}

/* gr_copy(dst, src, n, loops): n 16-byte units, loops times; the launch's
 * latency is paid once. */
static gr_cu_result run_copy(struct CUstream_st *s, void **params)
{
  unsigned long long dst = param_u64(params, 0), src = param_u64(params, 1), n = param_u64(params, 2);
  unsigned long long loops = param_u64(params, 3);
  struct place d, from;
  gr_cu_result r = CU_OK;
  if (n > SIZE_MAX / 16)
    return CU_INVALID_VALUE;
  if (place_of(dst, n * 16, &d) != CU_OK || place_of(src, n * 16, &from) != CU_OK)
    return CU_INVALID_VALUE;
  if ((r = vanish_work(DEVBIT(s->dev) | DEVBIT(d.dev) | DEVBIT(from.dev))) != CU_OK)
    return r;
  if (!kernel_can_touch(s->dev, d) || !kernel_can_touch(s->dev, from))
    return CU_ILLEGAL_ADDRESS;
  for (unsigned long long i = 0; i < loops && r == CU_OK; i++)
    r = do_copy(dst, d, src, from, n * 16, s, STUB_KERNEL_FACTOR, i == 0 ? STUB_KERNEL_LATENCY : 0);
  return r;
}

/* gr_compare(buf, nwords, tag, mismatches, first_bad): counts the words of
 * buf that are not the pattern (the host's pattern_word in cuda_bench.c),
 * adds the count to *mismatches (u32) and lowers *first_bad (u64) to the
 * first wrong index; reads at the within-GPU rate. */
static gr_cu_result run_compare(struct CUstream_st *s, void **params)
{
  unsigned long long buf = param_u64(params, 0), nwords = param_u64(params, 1);
  unsigned tag = param_u32(params, 2);
  unsigned long long cnt_addr = param_u64(params, 3), first_addr = param_u64(params, 4);
  struct place b, cnt, first;
  gr_cu_result r;
  if (nwords > SIZE_MAX / 4 || cnt_addr % 4 || first_addr % 8)
    return CU_INVALID_VALUE;
  if (place_of(buf, nwords * 4, &b) != CU_OK || place_of(cnt_addr, 4, &cnt) != CU_OK ||
      place_of(first_addr, 8, &first) != CU_OK)
    return CU_INVALID_VALUE;
  if ((r = vanish_work(DEVBIT(s->dev) | DEVBIT(b.dev) | DEVBIT(cnt.dev) | DEVBIT(first.dev))) != CU_OK)
    return r;
  if (!kernel_can_touch(s->dev, b) || !kernel_can_touch(s->dev, cnt) || !kernel_can_touch(s->dev, first))
    return CU_ILLEGAL_ADDRESS;
  const uint32_t *w = (const uint32_t *)(uintptr_t)buf;
  uint32_t *count = (uint32_t *)(uintptr_t)cnt_addr;
  uint64_t *low = (uint64_t *)(uintptr_t)first_addr;
  uint32_t mix = 0x5a5a0000u | (tag & 0xffffu);
  for (unsigned long long i = 0; i < nwords; i++)
    if (w[i] != ((uint32_t)i * 2654435761u ^ mix)) {
      (*count)++;
      if (i < *low)
        *low = i;
    }
  catch_up(s);
  s->clock += (double)nwords * 4 / (STUB_RATE_D2D_SAME * 1e9) + STUB_KERNEL_LATENCY;
  return CU_OK;
}

/* The time one dependent load of gr_chase takes on GPU dev, by where the
 * word is: its own memory, a peer's, or mapped host memory. */
static double chase_latency_ns(int dev, struct place p)
{
  return p.dev < 0 ? STUB_CHASE_HOST_NS : p.dev == dev ? STUB_CHASE_LOCAL_NS : STUB_CHASE_PEER_NS;
}

/* gr_chase(chain, steps, out): follows steps addresses, each load checked
 * as a kernel's would be; out[0] = the summed latency in ns (the kernel's
 * %globaltimer difference), out[1] = the last address. */
static gr_cu_result run_chase(struct CUstream_st *s, void **params)
{
  unsigned long long p = param_u64(params, 0), steps = param_u64(params, 1), out_addr = param_u64(params, 2);
  struct place at, out;
  double ns = 0;
  gr_cu_result r;
  if (place_of(out_addr, 16, &out) != CU_OK || out_addr % 8)
    return CU_INVALID_VALUE;
  if ((r = vanish_work(DEVBIT(s->dev) | DEVBIT(out.dev))) != CU_OK)
    return r;
  if (!kernel_can_touch(s->dev, out))
    return CU_ILLEGAL_ADDRESS;
  for (unsigned long long i = 0; i < steps; i++) {
    if (p % 8 || place_of(p, 8, &at) != CU_OK || !alloc_at(p) || !kernel_can_touch(s->dev, at))
      return CU_ILLEGAL_ADDRESS;
    if (any_lost(DEVBIT(at.dev)))
      return CU_UNKNOWN;
    ns += chase_latency_ns(s->dev, at);
    memcpy(&p, (const void *)(uintptr_t)p, sizeof(p));
  }
  uint64_t res[2] = {(uint64_t)ns, p};
  memcpy((void *)(uintptr_t)out_addr, res, sizeof(res));
  catch_up(s);
  s->clock += ns / 1e9 + STUB_KERNEL_LATENCY;
  return CU_OK;
}

gr_cu_result cuLaunchKernel(gr_cu_function f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
                            unsigned int by, unsigned int bz, unsigned int shmem, gr_cu_stream stream,
                            void **params, void **extra)
{
  ENTER;
  struct CUfunc_st *fn = func_of(f);
  struct CUstream_st *s;
  (void)shmem;
  if (!fn)
    FAIL(CU_INVALID_HANDLE);
  if ((r_ = stream_of(stream, &s)) != CU_OK)
    goto out_;
  if (s->dev != fn->mod->dev) /* the module belongs to another GPU's context */
    FAIL(CU_INVALID_HANDLE);
  if (!params || extra || !gx || !gy || !gz || !bx || !by || !bz || (unsigned long long)bx * by * bz > 1024)
    FAIL(CU_INVALID_VALUE);
  switch (fn->kind) {
  case FUNC_SPIN:
    r_ = run_spin(s, params);
    break;
  case FUNC_COPY:
    r_ = run_copy(s, params);
    break;
  case FUNC_COMPARE:
    r_ = run_compare(s, params);
    break;
  case FUNC_CHASE:
    r_ = run_chase(s, params);
    break;
  }
  LEAVE;
}
