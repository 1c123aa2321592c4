/* Stand-in for AMD's HIP runtime (built as libamdhip64.so.6) so gpurig's
 * AMD measurement backend (src/backends/amd/hip_bench.c) runs its tests on
 * machines without a GPU; see README.md. Not AMD code: names and types
 * follow src/backends/amd/hip_api.h, the machines stub_amd.h.
 *
 * Work runs at once on the calling thread, under one mutex. "Device memory"
 * is heap memory (at most STUB_DEVICE_MEM per GPU) and copies really copy.
 * Each stream keeps a virtual clock, which every copy or memset moves by
 * bytes / rate + 2 us; events read it. Streams share the layout of stub.h's
 * struct CUstream_st (dev and clock first) so that the RCCL stand-in
 * (stub_nccl.c built as librccl.so.1) moves their clocks as the NCCL one
 * moves CUDA's. */
#define CUstream_st ihipStream_t /* the stand-ins' stream layout under HIP's tag */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/amd/hip_api.h"
#include "stub.h"
#include "stub_amd.h"

#define EXPORT __attribute__((visibility("default")))

enum {
  HIP_OK = 0,
  HIP_INVALID_VALUE = 1,
  HIP_OUT_OF_MEMORY = 2,
  HIP_NOT_INITIALIZED = 3,
  HIP_NO_DEVICE = 100,
  HIP_INVALID_DEVICE = 101,
  HIP_INVALID_HANDLE = 400,
  HIP_PEER_ALREADY = 704,
  HIP_UNKNOWN = 999,
  HOSTMALLOC_FLAGS = 0x1 | 0x2 | 0x4 | 0x20000000 | 0x40000000 | 0x80000000u,
};

EXPORT gr_hip_error hipInit(unsigned int flags);
EXPORT const char *hipGetErrorString(gr_hip_error e);
EXPORT gr_hip_error hipGetDeviceCount(int *n);
EXPORT gr_hip_error hipSetDevice(int dev);
EXPORT gr_hip_error hipDeviceGetPCIBusId(char *buf, int len, int dev);
EXPORT gr_hip_error hipDeviceCanAccessPeer(int *can, int dev, int peer);
EXPORT gr_hip_error hipDeviceEnablePeerAccess(int peer, unsigned int flags);
EXPORT gr_hip_error hipMemGetInfo(size_t *fr, size_t *total);
EXPORT gr_hip_error hipMalloc(void **p, size_t bytes);
EXPORT gr_hip_error hipFree(void *p);
EXPORT gr_hip_error hipHostMalloc(void **p, size_t bytes, unsigned int flags);
EXPORT gr_hip_error hipHostFree(void *p);
EXPORT gr_hip_error hipMemcpyAsync(void *dst, const void *src, size_t bytes, gr_hip_memcpy_kind kind,
                                   gr_hip_stream s);
EXPORT gr_hip_error hipMemcpyPeerAsync(void *dst, int dst_dev, const void *src, int src_dev, size_t bytes,
                                       gr_hip_stream s);
EXPORT gr_hip_error hipMemsetD32Async(void *dst, int value, size_t count, gr_hip_stream s);
EXPORT gr_hip_error hipStreamCreateWithFlags(gr_hip_stream *s, unsigned int flags);
EXPORT gr_hip_error hipStreamDestroy(gr_hip_stream s);
EXPORT gr_hip_error hipStreamSynchronize(gr_hip_stream s);
EXPORT gr_hip_error hipStreamWaitEvent(gr_hip_stream s, gr_hip_event e, unsigned int flags);
EXPORT gr_hip_error hipEventCreate(gr_hip_event *e);
EXPORT gr_hip_error hipEventDestroy(gr_hip_event e);
EXPORT gr_hip_error hipEventRecord(gr_hip_event e, gr_hip_stream s);
EXPORT gr_hip_error hipEventSynchronize(gr_hip_event e);
EXPORT gr_hip_error hipEventElapsedTime(float *ms, gr_hip_event a, gr_hip_event b);

/* Each export must match the pointer type gpurig stores it in. */
#define STUB_CHECK(fn, pfn) _Static_assert(_Generic(&fn, pfn: 1, default: 0), #fn " does not match " #pfn)
STUB_CHECK(hipInit, gr_pfn_hipInit);
STUB_CHECK(hipGetErrorString, gr_pfn_hipGetErrorString);
STUB_CHECK(hipGetDeviceCount, gr_pfn_hipGetDeviceCount);
STUB_CHECK(hipSetDevice, gr_pfn_hipSetDevice);
STUB_CHECK(hipDeviceGetPCIBusId, gr_pfn_hipDeviceGetPCIBusId);
STUB_CHECK(hipDeviceCanAccessPeer, gr_pfn_hipDeviceCanAccessPeer);
STUB_CHECK(hipDeviceEnablePeerAccess, gr_pfn_hipDeviceEnablePeerAccess);
STUB_CHECK(hipMemGetInfo, gr_pfn_hipMemGetInfo);
STUB_CHECK(hipMalloc, gr_pfn_hipMalloc);
STUB_CHECK(hipFree, gr_pfn_hipFree);
STUB_CHECK(hipHostMalloc, gr_pfn_hipHostMalloc);
STUB_CHECK(hipHostFree, gr_pfn_hipHostFree);
STUB_CHECK(hipMemcpyAsync, gr_pfn_hipMemcpyAsync);
STUB_CHECK(hipMemcpyPeerAsync, gr_pfn_hipMemcpyPeerAsync);
STUB_CHECK(hipMemsetD32Async, gr_pfn_hipMemsetD32Async);
STUB_CHECK(hipStreamCreateWithFlags, gr_pfn_hipStreamCreateWithFlags);
STUB_CHECK(hipStreamDestroy, gr_pfn_hipStreamDestroy);
STUB_CHECK(hipStreamSynchronize, gr_pfn_hipStreamSynchronize);
STUB_CHECK(hipStreamWaitEvent, gr_pfn_hipStreamWaitEvent);
STUB_CHECK(hipEventCreate, gr_pfn_hipEventCreate);
STUB_CHECK(hipEventDestroy, gr_pfn_hipEventDestroy);
STUB_CHECK(hipEventRecord, gr_pfn_hipEventRecord);
STUB_CHECK(hipEventSynchronize, gr_pfn_hipEventSynchronize);
STUB_CHECK(hipEventElapsedTime, gr_pfn_hipEventElapsedTime);
EXPORT gr_hip_error hipRuntimeGetVersion(int *v);
EXPORT gr_hip_error hipDriverGetVersion(int *v);
STUB_CHECK(hipRuntimeGetVersion, gr_pfn_hipRuntimeGetVersion);
STUB_CHECK(hipDriverGetVersion, gr_pfn_hipDriverGetVersion);

struct ihipEvent_t {
  int recorded;
  double time; /* the recording stream's clock at the record */
  struct ihipEvent_t *next;
};

struct alloc {
  uintptr_t base;
  size_t size;
  int dev; /* -1: pinned host memory */
  struct alloc *next;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int initialized;
static STUB_TLS int current; /* hipSetDevice's, per thread; 0 until set, as HIP's */
static int peer[STUB_MAX_GPUS][STUB_MAX_GPUS];
static size_t dev_used[STUB_MAX_GPUS];
static struct alloc *allocs;
static struct ihipStream_t *streams;
static struct ihipEvent_t *events;
static double host_now; /* the latest clock the host waited for: later work starts no earlier */
static int vanish_calls, vanish_lost;
static unsigned long api_calls;
static struct {
  uintptr_t dst, src;
  size_t bytes;
  unsigned long call;
} last_copy;

#define ENTER()                                                                                                        \
  pthread_mutex_lock(&lock);                                                                                           \
  api_calls++
#define LEAVE(r)                                                                                                       \
  do {                                                                                                                 \
    gr_hip_error r_ = (r);                                                                                             \
    pthread_mutex_unlock(&lock);                                                                                       \
    return r_;                                                                                                         \
  } while (0)

static int valid_dev(int dev)
{
  return dev >= 0 && dev < stub_amd_count();
}

static int vanish_scenario(void)
{
  return stub_scenario_is("tinybox-red-vanish");
}

static int is_lost(int dev)
{
  return dev == STUB_AMD_LOST_GPU && vanish_lost && vanish_scenario();
}

/* Counts a copy or memset touching GPU2 under "tinybox-red-vanish": the
 * STUB_AMD_VANISH_CALL-th loses it; then every call touching it answers 999. */
static gr_hip_error vanish_work(int a, int b)
{
  if ((a != STUB_AMD_LOST_GPU && b != STUB_AMD_LOST_GPU) || !vanish_scenario())
    return HIP_OK;
  if (vanish_lost || ++vanish_calls >= STUB_AMD_VANISH_CALL) {
    vanish_lost = 1;
    return HIP_UNKNOWN;
  }
  return HIP_OK;
}

static struct alloc *alloc_at(uintptr_t addr)
{
  for (struct alloc *a = allocs; a; a = a->next)
    if (addr >= a->base && addr < a->base + a->size)
      return a;
  return NULL;
}

/* Where [addr, addr + bytes) is: a GPU's memory (its index), or host memory
 * (-1: pinned, or plain memory HIP would stage); -2 past an allocation's end. */
static int place_of(const void *p, size_t bytes)
{
  struct alloc *a = alloc_at((uintptr_t)p);
  if (!a)
    return -1;
  return (uintptr_t)p + bytes <= a->base + a->size ? a->dev : -2;
}

static struct ihipStream_t *stream_of(gr_hip_stream s)
{
  for (struct ihipStream_t *p = streams; p; p = p->next)
    if (p == s)
      return p;
  return NULL;
}

static struct ihipEvent_t *event_of(gr_hip_event e)
{
  for (struct ihipEvent_t *p = events; p; p = p->next)
    if (p == e)
      return p;
  return NULL;
}

static void catch_up(struct ihipStream_t *s)
{
  if (s->clock < host_now)
    s->clock = host_now;
}

static void host_waited(double t)
{
  if (t > host_now)
    host_now = t;
}

/* GB/s from one place to another (-1 host). */
static double copy_rate(int src, int dst)
{
  const struct stub_amd_machine *m = stub_amd_machine();
  if (src < 0 && dst < 0)
    return STUB_RATE_H2H;
  if (src < 0)
    return m->h2d_gbs;
  if (dst < 0)
    return m->d2h_gbs;
  if (src == dst)
    return m->local_gbs;
  return peer[src][dst] || peer[dst][src] ? stub_amd_peer_gbs(src, dst) : STUB_RATE_STAGED;
}

/* A copy that repeats the one before it with no other call between (the
 * next of a run's warm-up and timed copies) leaves memory as it is: only
 * its time counts, so the stand-in's CPU cost is one copy per run. */
static void do_copy(void *dst, int d, const void *src, int s, size_t bytes, struct ihipStream_t *st)
{
  bool apart = (uintptr_t)dst + bytes <= (uintptr_t)src || (uintptr_t)src + bytes <= (uintptr_t)dst;
  bool repeat = bytes && apart && last_copy.dst == (uintptr_t)dst && last_copy.src == (uintptr_t)src &&
                last_copy.bytes == bytes && (last_copy.call == api_calls || last_copy.call + 1 == api_calls);
  if (!repeat && bytes)
    memmove(dst, src, bytes);
  last_copy.dst = (uintptr_t)dst;
  last_copy.src = (uintptr_t)src;
  last_copy.bytes = bytes;
  last_copy.call = api_calls;
  catch_up(st);
  st->clock += (double)bytes / (copy_rate(s, d) * 1e9) + STUB_COPY_LATENCY;
}

/* ---------------------------------------------------------------- API */

EXPORT gr_hip_error hipInit(unsigned int flags)
{
  ENTER();
  if (flags != 0)
    LEAVE(HIP_INVALID_VALUE);
  const char *visible = getenv("HIP_VISIBLE_DEVICES");
  if (stub_amd_count() == 0 || (visible && !*visible)) /* as the runtime: an empty list hides every GPU */
    LEAVE(HIP_NO_DEVICE);
  initialized = 1;
  LEAVE(HIP_OK);
}

/* HIP_VERSION of ROCm 6.0.0 (6.0.32830), whose RCCL is the stand-in's
 * 2.18.3; on AMD both calls give HIP_VERSION, and as the runtime they need
 * no hipInit and no GPU (HIP starts itself) */
#define STUB_HIP_VERSION 60032830
EXPORT gr_hip_error hipRuntimeGetVersion(int *v)
{
  if (!v)
    return HIP_INVALID_VALUE;
  *v = STUB_HIP_VERSION;
  return HIP_OK;
}

EXPORT gr_hip_error hipDriverGetVersion(int *v)
{
  if (!v)
    return HIP_INVALID_VALUE;
  *v = STUB_HIP_VERSION;
  return HIP_OK;
}

EXPORT const char *hipGetErrorString(gr_hip_error e)
{
  switch (e) {
  case HIP_OK:
    return "no error";
  case HIP_INVALID_VALUE:
    return "invalid argument";
  case HIP_OUT_OF_MEMORY:
    return "out of memory";
  case HIP_NOT_INITIALIZED:
    return "initialization error";
  case HIP_NO_DEVICE:
    return "no ROCm-capable device is detected";
  case HIP_INVALID_DEVICE:
    return "invalid device ordinal";
  case HIP_INVALID_HANDLE:
    return "invalid resource handle";
  case HIP_PEER_ALREADY:
    return "peer access is already enabled";
  default:
    return "unknown error";
  }
}

EXPORT gr_hip_error hipGetDeviceCount(int *n)
{
  ENTER();
  if (!n)
    LEAVE(HIP_INVALID_VALUE);
  *n = initialized ? stub_amd_count() : 0;
  LEAVE(*n ? HIP_OK : HIP_NO_DEVICE);
}

EXPORT gr_hip_error hipSetDevice(int dev)
{
  ENTER();
  if (!initialized)
    LEAVE(HIP_NOT_INITIALIZED);
  if (!valid_dev(dev))
    LEAVE(HIP_INVALID_DEVICE);
  current = dev;
  LEAVE(HIP_OK);
}

EXPORT gr_hip_error hipDeviceGetPCIBusId(char *buf, int len, int dev)
{
  ENTER();
  if (!buf || len < 13 || !valid_dev(dev))
    LEAVE(!valid_dev(dev) ? HIP_INVALID_DEVICE : HIP_INVALID_VALUE);
  snprintf(buf, (size_t)len, "0000:%02x:00.0", stub_amd_machine()->bus[dev]);
  LEAVE(HIP_OK);
}

/* Every pair of the stand-in's machines has peer access (README.md). */
EXPORT gr_hip_error hipDeviceCanAccessPeer(int *can, int dev, int peer_dev)
{
  ENTER();
  if (!can || !valid_dev(dev) || !valid_dev(peer_dev))
    LEAVE(HIP_INVALID_DEVICE);
  *can = dev != peer_dev;
  LEAVE(HIP_OK);
}

EXPORT gr_hip_error hipDeviceEnablePeerAccess(int peer_dev, unsigned int flags)
{
  ENTER();
  if (flags || !valid_dev(peer_dev) || peer_dev == current)
    LEAVE(HIP_INVALID_DEVICE);
  if (is_lost(current) || is_lost(peer_dev))
    LEAVE(HIP_UNKNOWN);
  if (peer[current][peer_dev])
    LEAVE(HIP_PEER_ALREADY);
  peer[current][peer_dev] = 1;
  LEAVE(HIP_OK);
}

EXPORT gr_hip_error hipMemGetInfo(size_t *fr, size_t *total)
{
  ENTER();
  if (!fr || !total)
    LEAVE(HIP_INVALID_VALUE);
  if (is_lost(current))
    LEAVE(HIP_UNKNOWN);
  *total = 24 * STUB_GIB;
  *fr = STUB_DEVICE_MEM - dev_used[current];
  LEAVE(HIP_OK);
}

static gr_hip_error add_alloc(void *p, size_t bytes, int dev)
{
  struct alloc *a = malloc(sizeof(*a));
  if (!a)
    return HIP_OUT_OF_MEMORY;
  *a = (struct alloc){(uintptr_t)p, bytes, dev, allocs};
  allocs = a;
  return HIP_OK;
}

EXPORT gr_hip_error hipMalloc(void **p, size_t bytes)
{
  ENTER();
  if (!p || !bytes)
    LEAVE(HIP_INVALID_VALUE);
  if (is_lost(current))
    LEAVE(HIP_UNKNOWN);
  if (bytes > STUB_DEVICE_MEM - dev_used[current])
    LEAVE(HIP_OUT_OF_MEMORY);
  void *m = calloc(1, bytes);
  if (!m || add_alloc(m, bytes, current) != HIP_OK) {
    free(m);
    LEAVE(HIP_OUT_OF_MEMORY);
  }
  dev_used[current] += bytes;
  *p = m;
  LEAVE(HIP_OK);
}

/* Frees the allocation starting at p of the given kind (device: dev >= 0). */
static gr_hip_error drop_alloc(void *p, int host)
{
  for (struct alloc **pp = &allocs; *pp; pp = &(*pp)->next) {
    struct alloc *a = *pp;
    if (a->base != (uintptr_t)p || (a->dev < 0) != host)
      continue;
    if (a->dev >= 0)
      dev_used[a->dev] -= a->size;
    *pp = a->next;
    free(p);
    free(a);
    return HIP_OK;
  }
  return HIP_INVALID_VALUE;
}

EXPORT gr_hip_error hipFree(void *p)
{
  ENTER();
  LEAVE(p ? drop_alloc(p, 0) : HIP_OK);
}

EXPORT gr_hip_error hipHostMalloc(void **p, size_t bytes, unsigned int flags)
{
  ENTER();
  if (!p || !bytes || (flags & ~(unsigned)HOSTMALLOC_FLAGS))
    LEAVE(HIP_INVALID_VALUE);
  size_t rounded = (bytes + 4095) / 4096 * 4096;
  void *m = aligned_alloc(4096, rounded);
  if (!m || add_alloc(m, bytes, -1) != HIP_OK) {
    free(m);
    LEAVE(HIP_OUT_OF_MEMORY);
  }
  memset(m, 0, rounded);
  *p = m;
  LEAVE(HIP_OK);
}

EXPORT gr_hip_error hipHostFree(void *p)
{
  ENTER();
  LEAVE(p ? drop_alloc(p, 1) : HIP_OK);
}

/* A copy between places on stream st: checked (sizes within allocations,
 * GPUs there), counted for the vanish, then done. */
static gr_hip_error copy_on(void *dst, const void *src, size_t bytes, struct ihipStream_t *st)
{
  int d = place_of(dst, bytes), s = place_of(src, bytes);
  if (d == -2 || s == -2)
    return HIP_INVALID_VALUE;
  if (is_lost(st->dev) || is_lost(d) || is_lost(s))
    return HIP_UNKNOWN;
  gr_hip_error r = vanish_work(d, s);
  if (r == HIP_OK)
    do_copy(dst, d, src, s, bytes, st);
  return r;
}

EXPORT gr_hip_error hipMemcpyAsync(void *dst, const void *src, size_t bytes, gr_hip_memcpy_kind kind,
                                   gr_hip_stream s)
{
  ENTER();
  struct ihipStream_t *st = stream_of(s);
  if (!st || kind > 4 || (bytes && (!dst || !src)))
    LEAVE(!st ? HIP_INVALID_HANDLE : HIP_INVALID_VALUE);
  LEAVE(copy_on(dst, src, bytes, st));
}

EXPORT gr_hip_error hipMemcpyPeerAsync(void *dst, int dst_dev, const void *src, int src_dev, size_t bytes,
                                       gr_hip_stream s)
{
  ENTER();
  struct ihipStream_t *st = stream_of(s);
  if (!st || !dst || !src || place_of(dst, bytes) != dst_dev || place_of(src, bytes) != src_dev)
    LEAVE(!st ? HIP_INVALID_HANDLE : HIP_INVALID_VALUE);
  LEAVE(copy_on(dst, src, bytes, st));
}

EXPORT gr_hip_error hipMemsetD32Async(void *dst, int value, size_t count, gr_hip_stream s)
{
  ENTER();
  struct ihipStream_t *st = stream_of(s);
  int d = place_of(dst, count * 4);
  if (!st || !dst || d == -2)
    LEAVE(!st ? HIP_INVALID_HANDLE : HIP_INVALID_VALUE);
  if (is_lost(st->dev) || is_lost(d))
    LEAVE(HIP_UNKNOWN);
  gr_hip_error r = vanish_work(d, st->dev);
  if (r != HIP_OK)
    LEAVE(r);
  uint32_t w = (uint32_t)value, *p = dst;
  for (size_t i = 0; i < count; i++)
    p[i] = w;
  catch_up(st);
  st->clock += (double)count * 4 / (STUB_RATE_MEMSET * 1e9) + STUB_COPY_LATENCY;
  LEAVE(HIP_OK);
}

EXPORT gr_hip_error hipStreamCreateWithFlags(gr_hip_stream *s, unsigned int flags)
{
  ENTER();
  if (!s || flags > 1)
    LEAVE(HIP_INVALID_VALUE);
  struct ihipStream_t *st = calloc(1, sizeof(*st));
  if (!st)
    LEAVE(HIP_OUT_OF_MEMORY);
  *st = (struct ihipStream_t){.dev = current, .clock = host_now, .magic = STUB_STREAM_MAGIC, .flags = flags,
                              .next = streams};
  streams = st;
  *s = st;
  LEAVE(HIP_OK);
}

EXPORT gr_hip_error hipStreamDestroy(gr_hip_stream s)
{
  ENTER();
  for (struct ihipStream_t **pp = &streams; *pp; pp = &(*pp)->next)
    if (*pp == s) {
      *pp = s->next;
      s->magic = 0;
      free(s);
      LEAVE(HIP_OK);
    }
  LEAVE(HIP_INVALID_HANDLE);
}

EXPORT gr_hip_error hipStreamSynchronize(gr_hip_stream s)
{
  ENTER();
  struct ihipStream_t *st = stream_of(s);
  if (!st)
    LEAVE(HIP_INVALID_HANDLE);
  if (is_lost(st->dev))
    LEAVE(HIP_UNKNOWN);
  host_waited(st->clock);
  LEAVE(HIP_OK);
}

EXPORT gr_hip_error hipStreamWaitEvent(gr_hip_stream s, gr_hip_event e, unsigned int flags)
{
  ENTER();
  struct ihipStream_t *st = stream_of(s);
  struct ihipEvent_t *ev = event_of(e);
  if (!st || !ev || flags)
    LEAVE(HIP_INVALID_HANDLE);
  if (ev->recorded && ev->time > st->clock)
    st->clock = ev->time;
  LEAVE(HIP_OK);
}

EXPORT gr_hip_error hipEventCreate(gr_hip_event *e)
{
  ENTER();
  if (!e)
    LEAVE(HIP_INVALID_VALUE);
  struct ihipEvent_t *ev = calloc(1, sizeof(*ev));
  if (!ev)
    LEAVE(HIP_OUT_OF_MEMORY);
  ev->next = events;
  events = ev;
  *e = ev;
  LEAVE(HIP_OK);
}

EXPORT gr_hip_error hipEventDestroy(gr_hip_event e)
{
  ENTER();
  for (struct ihipEvent_t **pp = &events; *pp; pp = &(*pp)->next)
    if (*pp == e) {
      *pp = e->next;
      free(e);
      LEAVE(HIP_OK);
    }
  LEAVE(HIP_INVALID_HANDLE);
}

/* Touches no memory: a record between two copies keeps them one run. */
EXPORT gr_hip_error hipEventRecord(gr_hip_event e, gr_hip_stream s)
{
  ENTER();
  api_calls--;
  struct ihipStream_t *st = stream_of(s);
  struct ihipEvent_t *ev = event_of(e);
  if (!st || !ev)
    LEAVE(HIP_INVALID_HANDLE);
  if (is_lost(st->dev))
    LEAVE(HIP_UNKNOWN);
  catch_up(st);
  ev->time = st->clock;
  ev->recorded = 1;
  LEAVE(HIP_OK);
}

EXPORT gr_hip_error hipEventSynchronize(gr_hip_event e)
{
  ENTER();
  struct ihipEvent_t *ev = event_of(e);
  if (!ev)
    LEAVE(HIP_INVALID_HANDLE);
  if (ev->recorded)
    host_waited(ev->time);
  LEAVE(HIP_OK);
}

EXPORT gr_hip_error hipEventElapsedTime(float *ms, gr_hip_event a, gr_hip_event b)
{
  ENTER();
  struct ihipEvent_t *x = event_of(a), *y = event_of(b);
  if (!ms || !x || !y)
    LEAVE(HIP_INVALID_HANDLE);
  if (!x->recorded || !y->recorded)
    LEAVE(HIP_INVALID_HANDLE);
  *ms = (float)((y->time - x->time) * 1000.0);
  LEAVE(HIP_OK);
}
