/* Stand-in for NVIDIA's NVML (built as libnvidia-ml.so.1) so gpurig's NVML
 * backend can be tested without a GPU; see README.md. Not NVIDIA code: the
 * names and types follow src/backends/nvidia/nv_api.h, the answers the scenario table
 * in stub.h. */
#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "backends/nvidia/nv_api.h"
#include "stub.h"

enum {
  NVML_OK = 0,
  NVML_UNINITIALIZED = 1,
  NVML_INVALID_ARGUMENT = 2,
  NVML_NOT_SUPPORTED = 3,
  NVML_INSUFFICIENT_SIZE = 7,
  NVML_DRIVER_NOT_LOADED = 9,
  NVML_TIMEOUT = 10,
  NVML_FUNCTION_NOT_FOUND = 13,
  NVML_ARGUMENT_VERSION_MISMATCH = 25,
  NVML_GPU_IS_LOST = 15,
  NVML_P2P_STATUS_OK = 0,
  NVML_P2P_STATUS_IOH_TOPOLOGY_NOT_SUPPORTED = 3,
  NVML_P2P_STATUS_NOT_SUPPORTED = 5,
};

struct nvmlDevice_st {
  int index;
};

/* Exported functions (prototypes for -Wmissing-prototypes). */
gr_nvml_return nvmlInit_v2(void);
gr_nvml_return nvmlShutdown(void);
const char *nvmlErrorString(gr_nvml_return result);
gr_nvml_return nvmlSystemGetDriverVersion(char *version, unsigned int length);
gr_nvml_return nvmlSystemGetCudaDriverVersion_v2(int *version);
gr_nvml_return nvmlDeviceGetCount(unsigned int *count);
gr_nvml_return nvmlDeviceGetHandleByIndex_v2(unsigned int index, gr_nvml_device *device);
gr_nvml_return nvmlDeviceGetPciInfo_v3(gr_nvml_device device, struct nvmlPciInfo_st *pci);
gr_nvml_return nvmlDeviceGetName(gr_nvml_device device, char *name, unsigned int length);
gr_nvml_return nvmlDeviceGetUUID(gr_nvml_device device, char *uuid, unsigned int length);
gr_nvml_return nvmlDeviceGetMemoryInfo(gr_nvml_device device, struct nvmlMemory_st *memory);
gr_nvml_return nvmlDeviceGetMemoryInfo_v2(gr_nvml_device device, struct nvmlMemory_v2_st *memory);
gr_nvml_return nvmlDeviceGetMaxClockInfo(gr_nvml_device device, unsigned int type, unsigned int *mhz);
gr_nvml_return nvmlDeviceGetComputeMode(gr_nvml_device device, gr_nvml_compute_mode *mode);
gr_nvml_return nvmlDeviceGetVbiosVersion(gr_nvml_device device, char *version, unsigned int length);
gr_nvml_return nvmlDeviceGetBAR1MemoryInfo(gr_nvml_device device, struct nvmlBAR1Memory_st *bar1);
gr_nvml_return nvmlDeviceGetUtilizationRates(gr_nvml_device device, struct nvmlUtilization_st *util);
gr_nvml_return nvmlDeviceGetCurrPcieLinkGeneration(gr_nvml_device device, unsigned int *gen);
gr_nvml_return nvmlDeviceGetCurrPcieLinkWidth(gr_nvml_device device, unsigned int *width);
gr_nvml_return nvmlDeviceGetMaxPcieLinkGeneration(gr_nvml_device device, unsigned int *gen);
gr_nvml_return nvmlDeviceGetMaxPcieLinkWidth(gr_nvml_device device, unsigned int *width);
gr_nvml_return nvmlDeviceGetPowerUsage(gr_nvml_device device, unsigned int *mw);
gr_nvml_return nvmlDeviceGetEnforcedPowerLimit(gr_nvml_device device, unsigned int *mw);
gr_nvml_return nvmlDeviceGetPowerManagementDefaultLimit(gr_nvml_device device, unsigned int *mw);
gr_nvml_return nvmlDeviceGetNumaNodeId(gr_nvml_device device, unsigned int *node);
gr_nvml_return nvmlDeviceGetPersistenceMode(gr_nvml_device device, gr_nvml_enable_state *mode);
gr_nvml_return nvmlDeviceGetEccMode(gr_nvml_device device, gr_nvml_enable_state *current,
                                    gr_nvml_enable_state *pending);
gr_nvml_return nvmlDeviceGetTemperature(gr_nvml_device device, unsigned int sensor, unsigned int *temp);
gr_nvml_return nvmlDeviceGetTemperatureThreshold(gr_nvml_device device, unsigned int type, unsigned int *temp);
gr_nvml_return nvmlDeviceGetCudaComputeCapability(gr_nvml_device device, int *major, int *minor);
gr_nvml_return nvmlDeviceGetNvLinkState(gr_nvml_device device, unsigned int link, gr_nvml_enable_state *active);
gr_nvml_return nvmlDeviceGetP2PStatus(gr_nvml_device device1, gr_nvml_device device2, unsigned int caps,
                                      unsigned int *status);
gr_nvml_return nvmlDeviceGetNvLinkVersion(gr_nvml_device device, unsigned int link, unsigned int *version);
gr_nvml_return nvmlDeviceGetNvLinkRemotePciInfo_v2(gr_nvml_device device, unsigned int link,
                                                   struct nvmlPciInfo_st *pci);
gr_nvml_return nvmlDeviceGetNvLinkRemoteDeviceType(gr_nvml_device device, unsigned int link,
                                                   gr_nvml_nvlink_device_type *type);
gr_nvml_return nvmlDeviceGetClockInfo(gr_nvml_device device, unsigned int type, unsigned int *mhz);
gr_nvml_return nvmlDeviceGetFanSpeed(gr_nvml_device device, unsigned int *pct);
gr_nvml_return nvmlDeviceGetPcieReplayCounter(gr_nvml_device device, unsigned int *count);
gr_nvml_return nvmlDeviceGetPcieThroughput(gr_nvml_device device, unsigned int counter, unsigned int *kbs);
gr_nvml_return nvmlDeviceGetCurrentClocksEventReasons(gr_nvml_device device, unsigned long long *reasons);
gr_nvml_return nvmlDeviceGetTotalEccErrors(gr_nvml_device device, unsigned int error_type, unsigned int counter_type,
                                           unsigned long long *count);
gr_nvml_return nvmlDeviceGetRemappedRows(gr_nvml_device device, unsigned int *corr, unsigned int *unc,
                                         unsigned int *pending, unsigned int *failed);
gr_nvml_return nvmlDeviceGetFieldValues(gr_nvml_device device, int count, struct nvmlFieldValue_st *values);
gr_nvml_return nvmlDeviceGetComputeRunningProcesses_v3(gr_nvml_device device, unsigned int *count,
                                                       struct nvmlProcessInfo_v2_st *infos);
gr_nvml_return nvmlEventSetCreate(gr_nvml_event_set *set);
gr_nvml_return nvmlDeviceRegisterEvents(gr_nvml_device device, unsigned long long types, gr_nvml_event_set set);
gr_nvml_return nvmlEventSetWait_v2(gr_nvml_event_set set, struct nvmlEventData_st *data, unsigned int timeoutms);
gr_nvml_return nvmlEventSetFree(gr_nvml_event_set set);

/* Each export must match the pointer type gpurig stores it in. */
#define STUB_CHECK(fn, pfn) _Static_assert(_Generic(&fn, pfn: 1, default: 0), #fn " does not match " #pfn)
STUB_CHECK(nvmlInit_v2, gr_pfn_nvmlInit);
STUB_CHECK(nvmlShutdown, gr_pfn_nvmlShutdown);
STUB_CHECK(nvmlErrorString, gr_pfn_nvmlErrorString);
STUB_CHECK(nvmlSystemGetDriverVersion, gr_pfn_nvmlSystemGetDriverVersion);
STUB_CHECK(nvmlSystemGetCudaDriverVersion_v2, gr_pfn_nvmlSystemGetCudaDriverVersion);
STUB_CHECK(nvmlDeviceGetCount, gr_pfn_nvmlDeviceGetCount);
STUB_CHECK(nvmlDeviceGetHandleByIndex_v2, gr_pfn_nvmlDeviceGetHandleByIndex);
STUB_CHECK(nvmlDeviceGetPciInfo_v3, gr_pfn_nvmlDeviceGetPciInfo);
STUB_CHECK(nvmlDeviceGetName, gr_pfn_nvmlDeviceGetString);
STUB_CHECK(nvmlDeviceGetUUID, gr_pfn_nvmlDeviceGetString);
STUB_CHECK(nvmlDeviceGetMemoryInfo, gr_pfn_nvmlDeviceGetMemoryInfo);
STUB_CHECK(nvmlDeviceGetMemoryInfo_v2, gr_pfn_nvmlDeviceGetMemoryInfoV2);
STUB_CHECK(nvmlDeviceGetMaxClockInfo, gr_pfn_nvmlDeviceGetClockInfo);
STUB_CHECK(nvmlDeviceGetComputeMode, gr_pfn_nvmlDeviceGetComputeMode);
STUB_CHECK(nvmlDeviceGetVbiosVersion, gr_pfn_nvmlDeviceGetString);
STUB_CHECK(nvmlDeviceGetBAR1MemoryInfo, gr_pfn_nvmlDeviceGetBAR1MemoryInfo);
STUB_CHECK(nvmlDeviceGetUtilizationRates, gr_pfn_nvmlDeviceGetUtilizationRates);
STUB_CHECK(nvmlDeviceGetCurrPcieLinkGeneration, gr_pfn_nvmlDeviceGetUint);
STUB_CHECK(nvmlDeviceGetCurrPcieLinkWidth, gr_pfn_nvmlDeviceGetUint);
STUB_CHECK(nvmlDeviceGetMaxPcieLinkGeneration, gr_pfn_nvmlDeviceGetUint);
STUB_CHECK(nvmlDeviceGetMaxPcieLinkWidth, gr_pfn_nvmlDeviceGetUint);
STUB_CHECK(nvmlDeviceGetPowerUsage, gr_pfn_nvmlDeviceGetUint);
STUB_CHECK(nvmlDeviceGetEnforcedPowerLimit, gr_pfn_nvmlDeviceGetUint);
STUB_CHECK(nvmlDeviceGetPowerManagementDefaultLimit, gr_pfn_nvmlDeviceGetUint);
STUB_CHECK(nvmlDeviceGetNumaNodeId, gr_pfn_nvmlDeviceGetUint);
STUB_CHECK(nvmlDeviceGetPersistenceMode, gr_pfn_nvmlDeviceGetPersistenceMode);
STUB_CHECK(nvmlDeviceGetEccMode, gr_pfn_nvmlDeviceGetEccMode);
STUB_CHECK(nvmlDeviceGetTemperature, gr_pfn_nvmlDeviceGetTemperature);
STUB_CHECK(nvmlDeviceGetTemperatureThreshold, gr_pfn_nvmlDeviceGetTemperatureThreshold);
STUB_CHECK(nvmlDeviceGetCudaComputeCapability, gr_pfn_nvmlDeviceGetCudaComputeCapability);
STUB_CHECK(nvmlDeviceGetNvLinkState, gr_pfn_nvmlDeviceGetNvLinkState);
STUB_CHECK(nvmlDeviceGetP2PStatus, gr_pfn_nvmlDeviceGetP2PStatus);
STUB_CHECK(nvmlDeviceGetNvLinkVersion, gr_pfn_nvmlDeviceGetNvLinkVersion);
STUB_CHECK(nvmlDeviceGetNvLinkRemotePciInfo_v2, gr_pfn_nvmlDeviceGetNvLinkRemotePciInfo);
STUB_CHECK(nvmlDeviceGetNvLinkRemoteDeviceType, gr_pfn_nvmlDeviceGetNvLinkRemoteDeviceType);
STUB_CHECK(nvmlDeviceGetClockInfo, gr_pfn_nvmlDeviceGetClockInfo);
STUB_CHECK(nvmlDeviceGetFanSpeed, gr_pfn_nvmlDeviceGetUint);
STUB_CHECK(nvmlDeviceGetComputeRunningProcesses_v3, gr_pfn_nvmlDeviceGetComputeRunningProcesses);
STUB_CHECK(nvmlDeviceGetPcieReplayCounter, gr_pfn_nvmlDeviceGetUint);
STUB_CHECK(nvmlDeviceGetPcieThroughput, gr_pfn_nvmlDeviceGetPcieThroughput);
STUB_CHECK(nvmlDeviceGetCurrentClocksEventReasons, gr_pfn_nvmlDeviceGetClocksEventReasons);
STUB_CHECK(nvmlDeviceGetTotalEccErrors, gr_pfn_nvmlDeviceGetTotalEccErrors);
STUB_CHECK(nvmlDeviceGetRemappedRows, gr_pfn_nvmlDeviceGetRemappedRows);
STUB_CHECK(nvmlDeviceGetFieldValues, gr_pfn_nvmlDeviceGetFieldValues);
STUB_CHECK(nvmlEventSetCreate, gr_pfn_nvmlEventSetCreate);
STUB_CHECK(nvmlDeviceRegisterEvents, gr_pfn_nvmlDeviceRegisterEvents);
STUB_CHECK(nvmlEventSetWait_v2, gr_pfn_nvmlEventSetWait);
STUB_CHECK(nvmlEventSetFree, gr_pfn_nvmlEventSetFree);

static struct nvmlDevice_st devices[STUB_MAX_GPUS] = {{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}};
/* The only mutable state; gpurig calls from several threads at once (one
 * per GPU), so all of it is atomic. devices[] is never written. */
static atomic_int init_count;        /* nvmlInit_v2 calls not yet matched by nvmlShutdown */
static atomic_uint replay_calls;     /* nvmlDeviceGetPcieReplayCounter calls for STUB_REPLAY_GPU */
static atomic_uint event_wait_calls; /* nvmlEventSetWait_v2 calls (with valid arguments) */
static atomic_uint burn_replay_calls; /* "burn-replay": nvmlDeviceGetPcieReplayCounter calls for GPU2 */
static atomic_uint xid79_power_calls; /* "burn-xid79": nvmlDeviceGetPowerUsage calls for GPU2, up to the lost one */
static atomic_int xid79_delivered;    /* "burn-xid79": the Xid 79 event has been handed out */

/* ------------------------------------------------------------ helpers */

static int initialized(void)
{
  return atomic_load(&init_count) > 0;
}

/* The index behind a handle, or -1 for anything that is not one of ours
 * (compared one by one: no pointer arithmetic on foreign pointers). */
static int index_of(gr_nvml_device d)
{
  for (int i = 0; i < stub_gpu_count(); i++)
    if (d == &devices[i])
      return i;
  return -1;
}

/* Adds 1 to *n unless it has reached cap; the value before the call. */
static unsigned count_capped(atomic_uint *n, unsigned cap)
{
  unsigned v = atomic_load(n);
  while (v < cap && !atomic_compare_exchange_weak(n, &v, v + 1))
    ;
  return v;
}

/* Whether GPU idx answers GPU_IS_LOST: GPU2 under "vanish" from the start;
 * under "burn-xid79" from its (STUB_XID79_POWER_CALLS + 1)-th power reading
 * on, the first one lost (gpurig's sampler reads the power first, so its
 * first STUB_XID79_POWER_CALLS samples of GPU2 are whole and every later one
 * is lost). */
static int gpu_lost(int idx)
{
  if (idx != STUB_LOST_GPU)
    return 0;
  const char *sc = stub_scenario();
  if (strcmp(sc, "vanish") == 0)
    return 1;
  return strcmp(sc, "burn-xid79") == 0 && atomic_load(&xid79_power_calls) > STUB_XID79_POWER_CALLS;
}

/* Common start of every per-device query: UNINITIALIZED, INVALID_ARGUMENT
 * (bad handle or NULL out pointer), GPU_IS_LOST (gpu_lost();
 * may_be_lost false for the queries that still answer), else success. */
static gr_nvml_return check_device(gr_nvml_device d, const void *out, int may_be_lost, int *index)
{
  if (!initialized())
    return NVML_UNINITIALIZED;
  *index = index_of(d);
  if (*index < 0 || !out)
    return NVML_INVALID_ARGUMENT;
  if (may_be_lost && gpu_lost(*index))
    return NVML_GPU_IS_LOST;
  return NVML_OK;
}

/* "busy" and "burn-throttle": the default machine under load (every other
 * scenario's GPUs idle). "burn-throttle" changes a few of the busy values:
 * see throttled(). */
static int busy_machine(void)
{
  const char *sc = stub_scenario();
  return strcmp(sc, "busy") == 0 || strcmp(sc, "burn-throttle") == 0;
}

static int throttled(void)
{
  return stub_scenario_is("burn-throttle");
}

/* Whether GPU idx ran a matrix product in the last STUB_LOADED_S seconds
 * (the cuBLAS stand-in keeps the time, when it is loaded): a GPU under
 * gpurig burn's GEMM load then reads as loaded (busy, full clock, power
 * drawn, full link speed), as a real one does, except under "burn-slow",
 * where GPU1's power is capped and its clock held low. */
#define STUB_LOADED_S 60.0
#define STUB_SLOW_GPU 1
static int loaded(int idx)
{
  static long long (*_Atomic last)(int);
  if (!atomic_load(&last)) {
    void *h = dlopen("libcublas.so.13", RTLD_NOLOAD | RTLD_LAZY);
    if (h) /* the handle stays open: the pointer must stay valid */
      atomic_store(&last, (long long (*)(int))dlsym(h, "gpurig_stub_gemm_last_ns"));
  }
  long long (*f)(int) = atomic_load(&last);
  long long t = f ? f(idx) : 0;
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return t > 0 && (double)((long long)ts.tv_sec * 1000000000LL + ts.tv_nsec - t) / 1e9 < STUB_LOADED_S;
}

static int slow_gpu(int idx)
{
  return idx == STUB_SLOW_GPU && stub_scenario_is("burn-slow");
}

/* "hang": block the caller GPURIG_STUB_HANG_S seconds (default 30). */
static void hang(void)
{
  const char *e = getenv("GPURIG_STUB_HANG_S");
  char *end;
  long sec = STUB_HANG_DEFAULT_S;
  if (e && *e) {
    errno = 0;
    long v = strtol(e, &end, 10);
    if (errno == 0 && *end == '\0' && v >= 0 && v <= 86400)
      sec = v;
  }
  struct timespec ts = {.tv_sec = sec, .tv_nsec = 0};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
    ;
}

#define CHECK_DEVICE(d, out, lost)                                                                                     \
  int idx;                                                                                                             \
  gr_nvml_return check_ = check_device((d), (out), (lost), &idx);                                                      \
  if (check_ != NVML_OK)                                                                                               \
  return check_

/* NVML's string contract: INSUFFICIENT_SIZE when the text and its NUL do
 * not fit; a NULL buffer is INVALID_ARGUMENT. */
static gr_nvml_return put_string(char *buf, unsigned int length, const char *text)
{
  size_t n = strlen(text);
  if (!buf)
    return NVML_INVALID_ARGUMENT;
  if (n + 1 > length)
    return NVML_INSUFFICIENT_SIZE;
  memcpy(buf, text, n + 1);
  return NVML_OK;
}

static gr_nvml_return put_uint(unsigned int *out, unsigned int v)
{
  *out = v;
  return NVML_OK;
}

/* ------------------------------------------------------------- system */

gr_nvml_return nvmlInit_v2(void)
{
  if (stub_scenario_is("initfail"))
    return NVML_DRIVER_NOT_LOADED;
  atomic_fetch_add(&init_count, 1);
  return NVML_OK;
}

gr_nvml_return nvmlShutdown(void)
{
  int n = atomic_load(&init_count);
  while (n > 0 && !atomic_compare_exchange_weak(&init_count, &n, n - 1))
    ;
  return n > 0 ? NVML_OK : NVML_UNINITIALIZED;
}

const char *nvmlErrorString(gr_nvml_return result)
{
  switch (result) {
  case NVML_OK:
    return "Success";
  case NVML_UNINITIALIZED:
    return "Uninitialized";
  case NVML_INVALID_ARGUMENT:
    return "Invalid Argument";
  case NVML_NOT_SUPPORTED:
    return "Not Supported";
  case NVML_INSUFFICIENT_SIZE:
    return "Insufficient Size";
  case NVML_DRIVER_NOT_LOADED:
    return "Driver Not Loaded";
  case NVML_GPU_IS_LOST:
    return "GPU is lost";
  default:
    return "Unknown Error";
  }
}

gr_nvml_return nvmlSystemGetDriverVersion(char *version, unsigned int length)
{
  if (!initialized())
    return NVML_UNINITIALIZED;
  return put_string(version, length, "550.54.14");
}

gr_nvml_return nvmlSystemGetCudaDriverVersion_v2(int *version)
{
  if (!initialized())
    return NVML_UNINITIALIZED;
  if (!version)
    return NVML_INVALID_ARGUMENT;
  *version = 12040;
  return NVML_OK;
}

gr_nvml_return nvmlDeviceGetCount(unsigned int *count)
{
  if (!initialized())
    return NVML_UNINITIALIZED;
  if (!count)
    return NVML_INVALID_ARGUMENT;
  *count = (unsigned)stub_gpu_count();
  return NVML_OK;
}

gr_nvml_return nvmlDeviceGetHandleByIndex_v2(unsigned int index, gr_nvml_device *device)
{
  if (!initialized())
    return NVML_UNINITIALIZED;
  if (!device || index >= (unsigned)stub_gpu_count())
    return NVML_INVALID_ARGUMENT;
  *device = &devices[index];
  return NVML_OK;
}

/* ------------------------------------------------------- static facts */

/* NVML's PCI record of function 0 at domain:bus:device with ids device_id. */
static void put_pci(struct nvmlPciInfo_st *pci, unsigned domain, unsigned bus, unsigned device, unsigned device_id)
{
  memset(pci, 0, sizeof(*pci));
  snprintf(pci->busIdLegacy, sizeof(pci->busIdLegacy), "%04x:%02x:%02x.0", domain, bus, device);
  snprintf(pci->busId, sizeof(pci->busId), "%08x:%02x:%02x.0", domain, bus, device);
  pci->domain = domain;
  pci->bus = bus;
  pci->device = device;
  pci->pciDeviceId = device_id << 16 | STUB_PCI_VENDOR;
}

gr_nvml_return nvmlDeviceGetPciInfo_v3(gr_nvml_device device, struct nvmlPciInfo_st *pci)
{
  CHECK_DEVICE(device, pci, 0);
  const struct stub_gpu *g = stub_gpu(idx);
  put_pci(pci, g->domain, g->bus, g->device, stub_machine()->pci_device);
  pci->pciSubSystemId = STUB_PCI_SUBSYSTEM;
  return NVML_OK;
}

gr_nvml_return nvmlDeviceGetName(gr_nvml_device device, char *name, unsigned int length)
{
  CHECK_DEVICE(device, name, 1);
  return put_string(name, length, stub_machine()->name);
}

gr_nvml_return nvmlDeviceGetUUID(gr_nvml_device device, char *uuid, unsigned int length)
{
  CHECK_DEVICE(device, uuid, 1);
  char text[48];
  snprintf(text, sizeof(text), "GPU-5f6a0c3e-0000-4000-8000-%012d", idx);
  return put_string(uuid, length, text);
}

gr_nvml_return nvmlDeviceGetMemoryInfo(gr_nvml_device device, struct nvmlMemory_st *memory)
{
  CHECK_DEVICE(device, memory, 1);
  const struct stub_machine *m = stub_machine();
  memory->total = m->mem;
  memory->used = m->reserved ? m->reserved : (300ull + (unsigned)idx) * STUB_MIB; /* v1 counts the reserve */
  memory->free = memory->total - memory->used;
  return NVML_OK;
}

/* Machines with a reserve (h200-vm) answer as drivers since R510 do: the
 * reserve apart, nothing used on an idle GPU; the others as drivers before
 * it, which have no _v2 (gpurig falls back to the v1 call). */
gr_nvml_return nvmlDeviceGetMemoryInfo_v2(gr_nvml_device device, struct nvmlMemory_v2_st *memory)
{
  CHECK_DEVICE(device, memory, 1);
  const struct stub_machine *m = stub_machine();
  if (!m->reserved)
    return NVML_FUNCTION_NOT_FOUND;
  if (memory->version != GR_NVML_MEMORY_V2_VERSION)
    return NVML_ARGUMENT_VERSION_MISMATCH;
  memory->total = m->mem;
  memory->reserved = m->reserved;
  memory->used = 0;
  memory->free = m->mem - m->reserved;
  return NVML_OK;
}

gr_nvml_return nvmlDeviceGetMaxClockInfo(gr_nvml_device device, unsigned int type, unsigned int *mhz)
{
  CHECK_DEVICE(device, mhz, 1);
  if (type == GR_NVML_CLOCK_SM)
    return put_uint(mhz, stub_machine()->max_sm_mhz);
  if (type == GR_NVML_CLOCK_MEM)
    return put_uint(mhz, stub_machine()->max_mem_mhz);
  return NVML_INVALID_ARGUMENT;
}

gr_nvml_return nvmlDeviceGetComputeMode(gr_nvml_device device, gr_nvml_compute_mode *mode)
{
  CHECK_DEVICE(device, mode, 1);
  *mode = 0; /* Default */
  return NVML_OK;
}

gr_nvml_return nvmlDeviceGetVbiosVersion(gr_nvml_device device, char *version, unsigned int length)
{
  CHECK_DEVICE(device, version, 1);
  return put_string(version, length, stub_machine()->vbios);
}

gr_nvml_return nvmlDeviceGetBAR1MemoryInfo(gr_nvml_device device, struct nvmlBAR1Memory_st *bar1)
{
  CHECK_DEVICE(device, bar1, 1);
  bar1->bar1Total = 256ull * STUB_MIB;
  bar1->bar1Used = 0;
  bar1->bar1Free = bar1->bar1Total;
  return NVML_OK;
}

gr_nvml_return nvmlDeviceGetMaxPcieLinkGeneration(gr_nvml_device device, unsigned int *gen)
{
  CHECK_DEVICE(device, gen, 1);
  return put_uint(gen, stub_machine()->pcie_gen);
}

gr_nvml_return nvmlDeviceGetMaxPcieLinkWidth(gr_nvml_device device, unsigned int *width)
{
  CHECK_DEVICE(device, width, 1);
  return put_uint(width, 16);
}

gr_nvml_return nvmlDeviceGetPowerManagementDefaultLimit(gr_nvml_device device, unsigned int *mw)
{
  CHECK_DEVICE(device, mw, 1);
  return put_uint(mw, stub_machine()->power_mw);
}

gr_nvml_return nvmlDeviceGetNumaNodeId(gr_nvml_device device, unsigned int *node)
{
  CHECK_DEVICE(device, node, 1);
  return NVML_NOT_SUPPORTED;
}

gr_nvml_return nvmlDeviceGetEccMode(gr_nvml_device device, gr_nvml_enable_state *current,
                                    gr_nvml_enable_state *pending)
{
  CHECK_DEVICE(device, current && pending ? current : NULL, 1);
  if (!stub_machine()->ecc)
    return NVML_NOT_SUPPORTED; /* GeForce */
  *current = *pending = 1;
  return NVML_OK;
}

gr_nvml_return nvmlDeviceGetTemperatureThreshold(gr_nvml_device device, unsigned int type, unsigned int *temp)
{
  CHECK_DEVICE(device, temp, 1);
  if (type == GR_NVML_TEMPERATURE_THRESHOLD_SLOWDOWN)
    return put_uint(temp, stub_machine()->slowdown_c);
  if (type == GR_NVML_TEMPERATURE_THRESHOLD_SHUTDOWN)
    return put_uint(temp, stub_machine()->shutdown_c);
  return NVML_NOT_SUPPORTED;
}

gr_nvml_return nvmlDeviceGetCudaComputeCapability(gr_nvml_device device, int *major, int *minor)
{
  CHECK_DEVICE(device, major && minor ? major : NULL, 1);
  *major = stub_machine()->cc_major;
  *minor = stub_machine()->cc_minor;
  return NVML_OK;
}

/* The NVLink calls' common start: INVALID_ARGUMENT past the driver's
 * maximum or the GPU's last link, NOT_SUPPORTED on a GPU without NVLink
 * (the default 3090s have no bridge). */
static gr_nvml_return check_link(int idx, unsigned int link)
{
  if (link >= GR_NVML_NVLINK_MAX_LINKS)
    return NVML_INVALID_ARGUMENT;
  if (stub_machine()->links == 0)
    return NVML_NOT_SUPPORTED;
  int peer;
  unsigned sw;
  return stub_nvlink_peer(idx, link, &peer, &sw) == 0 ? NVML_OK : NVML_INVALID_ARGUMENT;
}

gr_nvml_return nvmlDeviceGetNvLinkState(gr_nvml_device device, unsigned int link, gr_nvml_enable_state *active)
{
  CHECK_DEVICE(device, active, 1);
  gr_nvml_return r = check_link(idx, link);
  if (r == NVML_OK)
    *active = 1;
  return r;
}

gr_nvml_return nvmlDeviceGetNvLinkVersion(gr_nvml_device device, unsigned int link, unsigned int *version)
{
  CHECK_DEVICE(device, version, 1);
  gr_nvml_return r = check_link(idx, link);
  if (r == NVML_OK)
    *version = stub_machine()->nvlink_version;
  return r;
}

gr_nvml_return nvmlDeviceGetNvLinkRemotePciInfo_v2(gr_nvml_device device, unsigned int link,
                                                   struct nvmlPciInfo_st *pci)
{
  CHECK_DEVICE(device, pci, 1);
  gr_nvml_return r = check_link(idx, link);
  int peer;
  unsigned sw;
  if (r != NVML_OK || stub_nvlink_peer(idx, link, &peer, &sw) != 0)
    return r;
  if (peer >= 0)
    put_pci(pci, stub_gpu(peer)->domain, stub_gpu(peer)->bus, stub_gpu(peer)->device, stub_machine()->pci_device);
  else
    put_pci(pci, 0, sw, 0, STUB_NVSWITCH_DEVICE);
  return NVML_OK;
}

gr_nvml_return nvmlDeviceGetNvLinkRemoteDeviceType(gr_nvml_device device, unsigned int link,
                                                   gr_nvml_nvlink_device_type *type)
{
  CHECK_DEVICE(device, type, 1);
  gr_nvml_return r = check_link(idx, link);
  int peer;
  unsigned sw;
  if (r != NVML_OK || stub_nvlink_peer(idx, link, &peer, &sw) != 0)
    return r;
  if (!stub_machine()->remote_type)
    return NVML_NOT_SUPPORTED; /* a driver before the call worked */
  *type = peer >= 0 ? GR_NVML_NVLINK_DEVICE_TYPE_GPU : GR_NVML_NVLINK_DEVICE_TYPE_SWITCH;
  return NVML_OK;
}

gr_nvml_return nvmlDeviceGetP2PStatus(gr_nvml_device device1, gr_nvml_device device2, unsigned int caps,
                                      unsigned int *status)
{
  int other;
  CHECK_DEVICE(device1, status, 1);
  gr_nvml_return r = check_device(device2, status, 1, &other);
  if (r != NVML_OK)
    return r;
  if (caps != GR_NVML_P2P_CAPS_INDEX_READ && caps != GR_NVML_P2P_CAPS_INDEX_WRITE)
    *status = NVML_P2P_STATUS_NOT_SUPPORTED;
  else if (idx == other || stub_same_bridge(idx, other))
    *status = NVML_P2P_STATUS_OK;
  else
    *status = NVML_P2P_STATUS_IOH_TOPOLOGY_NOT_SUPPORTED;
  return NVML_OK;
}

/* ------------------------------------------------------ dynamic state */

gr_nvml_return nvmlDeviceGetUtilizationRates(gr_nvml_device device, struct nvmlUtilization_st *util)
{
  CHECK_DEVICE(device, util, 1);
  int busy = busy_machine() || loaded(idx);
  util->gpu = busy ? 97 : 0;
  util->memory = busy ? 60 : 0;
  return NVML_OK;
}

gr_nvml_return nvmlDeviceGetCurrPcieLinkGeneration(gr_nvml_device device, unsigned int *gen)
{
  CHECK_DEVICE(device, gen, 1);
  return put_uint(gen, loaded(idx) ? (unsigned)stub_machine()->pcie_gen : 1u); /* idle GPUs drop to gen 1 */
}

gr_nvml_return nvmlDeviceGetCurrPcieLinkWidth(gr_nvml_device device, unsigned int *width)
{
  CHECK_DEVICE(device, width, 1);
  return put_uint(width, stub_gpu(idx)->link_width);
}

gr_nvml_return nvmlDeviceGetPowerUsage(gr_nvml_device device, unsigned int *mw)
{
  CHECK_DEVICE(device, mw, 0);
  if (idx == STUB_LOST_GPU && stub_scenario_is("burn-xid79")) {
    /* GPU2's first STUB_XID79_POWER_CALLS reads answer; the next one loses it */
    if (count_capped(&xid79_power_calls, STUB_XID79_POWER_CALLS + 1) >= STUB_XID79_POWER_CALLS)
      return NVML_GPU_IS_LOST;
  } else if (gpu_lost(idx)) {
    return NVML_GPU_IS_LOST;
  }
  if (idx == STUB_HANG_GPU && stub_scenario_is("hang"))
    hang();
  if (busy_machine())
    return put_uint(mw, throttled() ? 340000u : 345000u);
  if (loaded(idx))
    return put_uint(mw, slow_gpu(idx) ? 174000u : 330000u + 1000u * (unsigned)idx);
  return put_uint(mw, 28500u + 1000u * (unsigned)idx);
}

gr_nvml_return nvmlDeviceGetEnforcedPowerLimit(gr_nvml_device device, unsigned int *mw)
{
  CHECK_DEVICE(device, mw, 1);
  if (slow_gpu(idx))
    return put_uint(mw, 175000u); /* someone ran nvidia-smi -pl 175 */
  return put_uint(mw, stub_machine()->power_mw);
}

gr_nvml_return nvmlDeviceGetPersistenceMode(gr_nvml_device device, gr_nvml_enable_state *mode)
{
  CHECK_DEVICE(device, mode, 1);
  *mode = 1;
  return NVML_OK;
}

gr_nvml_return nvmlDeviceGetTemperature(gr_nvml_device device, unsigned int sensor, unsigned int *temp)
{
  CHECK_DEVICE(device, temp, 1);
  if (sensor != GR_NVML_TEMPERATURE_GPU)
    return NVML_INVALID_ARGUMENT;
  if (throttled())
    return put_uint(temp, idx == STUB_HOT_GPU ? 92u : 76u);
  if (busy_machine())
    return put_uint(temp, idx == STUB_HOT_GPU ? 88u : 78u);
  if (loaded(idx))
    return put_uint(temp, 66u + (unsigned)idx);
  return put_uint(temp, 35u + (unsigned)idx);
}

/* ---------------------------------------------- the sampler's reads */

gr_nvml_return nvmlDeviceGetClockInfo(gr_nvml_device device, unsigned int type, unsigned int *mhz)
{
  CHECK_DEVICE(device, mhz, 1);
  const struct stub_machine *m = stub_machine();
  int busy = busy_machine() || loaded(idx);
  if (type == 0 || type == GR_NVML_CLOCK_SM) /* graphics and SM run together */
    return put_uint(mhz, !busy ? m->sm_mhz : slow_gpu(idx) ? 840u : throttled() && idx == STUB_HOT_GPU ? 1200u : 1695u);
  if (type == GR_NVML_CLOCK_MEM)
    return put_uint(mhz, busy ? 9751u : m->mem_mhz);
  return NVML_INVALID_ARGUMENT;
}

/* No process uses a GPU, except under "in-use": GPU0 runs pid 4242 with
 * 20 GiB (gpurig burn must refuse it). */
gr_nvml_return nvmlDeviceGetComputeRunningProcesses_v3(gr_nvml_device device, unsigned int *count,
                                                       struct nvmlProcessInfo_v2_st *infos)
{
  CHECK_DEVICE(device, count, 1);
  unsigned n = stub_scenario_is("in-use") && idx == 0 ? 1 : 0;
  if (*count < n) {
    *count = n;
    return 7; /* NVML_ERROR_INSUFFICIENT_SIZE */
  }
  *count = n;
  if (n) {
    infos[0].pid = 4242;
    infos[0].usedGpuMemory = 20ull << 30;
    infos[0].gpuInstanceId = infos[0].computeInstanceId = 0xFFFFFFFFu;
  }
  return NVML_OK;
}

gr_nvml_return nvmlDeviceGetFanSpeed(gr_nvml_device device, unsigned int *pct)
{
  CHECK_DEVICE(device, pct, 1);
  if (!stub_machine()->fan)
    return NVML_NOT_SUPPORTED; /* SXM: no fan on the board */
  return put_uint(pct, busy_machine() ? 75u : 30u + (unsigned)idx);
}

gr_nvml_return nvmlDeviceGetPcieReplayCounter(gr_nvml_device device, unsigned int *count)
{
  CHECK_DEVICE(device, count, 1);
  /* "healthy" and the burn-in scenarios: the riser's replays stay where they
   * were, so that each burn-in scenario shows its own fault alone */
  int quiet = stub_scenario_is("healthy") || stub_scenario_is("in-use") || strncmp(stub_scenario(), "burn-", 5) == 0;
  if (idx == STUB_REPLAY_GPU && stub_default_machine())
    return put_uint(count, STUB_REPLAY_START + (quiet ? 0 : atomic_fetch_add(&replay_calls, 1u)));
  if (idx == STUB_BURN_REPLAY_GPU && stub_scenario_is("burn-replay"))
    return put_uint(count, STUB_BURN_REPLAY_STEP * atomic_fetch_add(&burn_replay_calls, 1u));
  return put_uint(count, 0);
}

gr_nvml_return nvmlDeviceGetPcieThroughput(gr_nvml_device device, unsigned int counter, unsigned int *kbs)
{
  CHECK_DEVICE(device, kbs, 1);
  int busy = busy_machine();
  if (counter == GR_NVML_PCIE_UTIL_TX_BYTES)
    return put_uint(kbs, busy ? 1200000u : 0);
  if (counter == GR_NVML_PCIE_UTIL_RX_BYTES)
    return put_uint(kbs, busy ? 12000000u : 0);
  return NVML_INVALID_ARGUMENT;
}

/* nvmlClocksEventReason* bits: 0x1 GPU idle, 0x4 SW power cap, 0x40 HW thermal slowdown */
gr_nvml_return nvmlDeviceGetCurrentClocksEventReasons(gr_nvml_device device, unsigned long long *reasons)
{
  CHECK_DEVICE(device, reasons, 1);
  if (throttled())
    *reasons = idx == STUB_HOT_GPU ? 0x40ull : 0x4ull;
  else if (busy_machine())
    *reasons = idx == STUB_HOT_GPU ? 0x44ull : 0x4ull;
  else if (loaded(idx))
    *reasons = slow_gpu(idx) ? 0x4ull : 0;
  else
    *reasons = 0x1ull;
  return NVML_OK;
}

gr_nvml_return nvmlDeviceGetTotalEccErrors(gr_nvml_device device, unsigned int error_type, unsigned int counter_type,
                                           unsigned long long *count)
{
  CHECK_DEVICE(device, count, 1);
  if (!stub_machine()->ecc)
    return NVML_NOT_SUPPORTED; /* GeForce */
  if (error_type > GR_NVML_MEMORY_ERROR_TYPE_UNCORRECTED || counter_type > 1) /* volatile 0, aggregate 1 */
    return NVML_INVALID_ARGUMENT;
  *count = 0;
  return NVML_OK;
}

gr_nvml_return nvmlDeviceGetRemappedRows(gr_nvml_device device, unsigned int *corr, unsigned int *unc,
                                         unsigned int *pending, unsigned int *failed)
{
  CHECK_DEVICE(device, corr && unc && pending && failed ? corr : NULL, 1);
  if (!stub_machine()->remap)
    return NVML_NOT_SUPPORTED; /* GeForce, and before Ampere */
  *corr = *unc = *pending = *failed = 0;
  return NVML_OK;
}

static int nvlink_total_field(unsigned id)
{
  return id == GR_NVML_FI_DEV_NVLINK_CRC_FLIT_TOTAL || id == GR_NVML_FI_DEV_NVLINK_CRC_DATA_TOTAL ||
         id == GR_NVML_FI_DEV_NVLINK_REPLAY_TOTAL || id == GR_NVML_FI_DEV_NVLINK_RECOVERY_TOTAL;
}

/* Only NVML_FI_DEV_MEMORY_TEMP and the NVLink error totals are known; every other field answers
 * NOT_SUPPORTED in its own nvmlReturn, and the call itself succeeds. */
gr_nvml_return nvmlDeviceGetFieldValues(gr_nvml_device device, int count, struct nvmlFieldValue_st *values)
{
  CHECK_DEVICE(device, values, 1);
  if (count <= 0)
    return NVML_INVALID_ARGUMENT;
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  unsigned mem_temp = stub_machine()->mem_temp_c;
  for (int i = 0; i < count; i++) {
    struct nvmlFieldValue_st *v = &values[i];
    v->timestamp = (long long)now.tv_sec * 1000000 + now.tv_nsec / 1000;
    v->latencyUsec = 0;
    memset(&v->value, 0, sizeof(v->value));
    if (v->fieldId == GR_NVML_FI_DEV_MEMORY_TEMP && mem_temp) {
      v->valueType = GR_NVML_VALUE_TYPE_UNSIGNED_INT;
      v->value.uiVal = mem_temp;
      v->nvmlReturn = NVML_OK;
    } else if (nvlink_total_field(v->fieldId) && stub_machine()->wiring != STUB_NVL_NONE) {
      /* the totals over all links: CRC flit errors on one GPU of the A100 machines */
      v->valueType = GR_NVML_VALUE_TYPE_UNSIGNED_LONG_LONG;
      v->value.ullVal = stub_machine()->wiring == STUB_NVL_SWITCH && idx == STUB_CRC_GPU &&
                                v->fieldId == GR_NVML_FI_DEV_NVLINK_CRC_FLIT_TOTAL
                            ? STUB_CRC_COUNT
                            : 0;
      v->nvmlReturn = NVML_OK;
    } else {
      v->nvmlReturn = NVML_NOT_SUPPORTED;
    }
  }
  return NVML_OK;
}

/* ------------------------------------------------------------- events */

/* An event set: which event types each GPU registered. Atomic, so that
 * registering from several threads needs no lock. */
#define STUB_EVENT_SET_MAGIC 0x45564e54u /* "EVNT" */
struct nvmlEventSet_st {
  unsigned magic; /* STUB_EVENT_SET_MAGIC while alive */
  atomic_ullong types[STUB_MAX_GPUS];
};

static int valid_set(gr_nvml_event_set set)
{
  return set && set->magic == STUB_EVENT_SET_MAGIC;
}

gr_nvml_return nvmlEventSetCreate(gr_nvml_event_set *set)
{
  if (!initialized())
    return NVML_UNINITIALIZED;
  if (!set)
    return NVML_INVALID_ARGUMENT;
  struct nvmlEventSet_st *s = calloc(1, sizeof(*s));
  if (!s)
    return 999; /* NVML_ERROR_UNKNOWN */
  s->magic = STUB_EVENT_SET_MAGIC;
  for (int i = 0; i < STUB_MAX_GPUS; i++)
    atomic_init(&s->types[i], 0);
  *set = s;
  return NVML_OK;
}

gr_nvml_return nvmlDeviceRegisterEvents(gr_nvml_device device, unsigned long long types, gr_nvml_event_set set)
{
  CHECK_DEVICE(device, set, 1);
  if (!valid_set(set))
    return NVML_INVALID_ARGUMENT;
  atomic_fetch_or(&set->types[idx], types); /* any types are accepted; only Xid (0x8) ever comes */
  return NVML_OK;
}

/* Whether the set has GPU2 registered for Xid events. */
static int xid_registered(gr_nvml_event_set set)
{
  return stub_gpu(STUB_XID_GPU) && (atomic_load(&set->types[STUB_XID_GPU]) & GR_NVML_EVENT_XID);
}

/* Never sleeps, whatever timeoutms says: TIMEOUT at once, except under
 * "xid", where the STUB_XID_CALL-th call of the process delivers Xid 79 on
 * GPU2, and under "burn-xid79", where the first call after GPU2 is lost
 * does, once (both only if the set has GPU2 registered for Xid events). */
gr_nvml_return nvmlEventSetWait_v2(gr_nvml_event_set set, struct nvmlEventData_st *data, unsigned int timeoutms)
{
  (void)timeoutms;
  if (!initialized())
    return NVML_UNINITIALIZED;
  if (!valid_set(set) || !data)
    return NVML_INVALID_ARGUMENT;
  unsigned call = atomic_fetch_add(&event_wait_calls, 1u) + 1;
  int deliver;
  if (stub_scenario_is("burn-xid79")) {
    int no = 0;
    deliver = gpu_lost(STUB_XID_GPU) && xid_registered(set) && atomic_compare_exchange_strong(&xid79_delivered, &no, 1);
  } else {
    deliver = call == STUB_XID_CALL && stub_scenario_is("xid") && xid_registered(set);
  }
  if (!deliver)
    return NVML_TIMEOUT;
  memset(data, 0, sizeof(*data));
  data->device = &devices[STUB_XID_GPU];
  data->eventType = GR_NVML_EVENT_XID;
  data->eventData = STUB_XID_CODE;
  data->gpuInstanceId = 0xFFFFFFFFu;
  data->computeInstanceId = 0xFFFFFFFFu;
  return NVML_OK;
}

/* Frees even after nvmlShutdown, so that no order of calls leaks a set. */
gr_nvml_return nvmlEventSetFree(gr_nvml_event_set set)
{
  if (!valid_set(set))
    return NVML_INVALID_ARGUMENT;
  set->magic = 0;
  free(set);
  return NVML_OK;
}
