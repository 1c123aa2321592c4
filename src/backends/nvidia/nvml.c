/* NVIDIA backend over NVML (libnvidia-ml.so.1), opened with dlopen.
 * Versioned symbols are tried newest first; a missing optional symbol or a
 * NOT_SUPPORTED answer leaves the value invalid, never 0. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/dl.h"
#include "backends/nvidia/nvidia.h"
#include "backends/nvidia/nv_api.h"

#define NVML_SONAME "libnvidia-ml.so.1"

/* Why the last call failed, per thread: the sampler reads each GPU from its
 * own thread (gpu.h). */
static _Thread_local char tl_err[256];

struct nvml {
  void *lib;
  bool started;
  gr_nvml_event_set events; /* Xid events, subscribed on the first nvml_events call */
  bool events_tried, events_ok;
  unsigned count;
  gr_nvml_device *dev;
  char (*busid)[32]; /* each GPU's normalized bus id ("" unknown): tells a GPU from an NVSwitch at a link's far end */
  gr_pfn_nvmlInit Init;
  gr_pfn_nvmlShutdown Shutdown;
  gr_pfn_nvmlErrorString ErrorString;
  gr_pfn_nvmlSystemGetDriverVersion SystemGetDriverVersion;
  gr_pfn_nvmlSystemGetCudaDriverVersion SystemGetCudaDriverVersion;
  gr_pfn_nvmlDeviceGetCount DeviceGetCount;
  gr_pfn_nvmlDeviceGetHandleByIndex DeviceGetHandleByIndex;
  gr_pfn_nvmlDeviceGetString DeviceGetName, DeviceGetUUID;
  gr_pfn_nvmlDeviceGetPciInfo DeviceGetPciInfo;
  gr_pfn_nvmlDeviceGetMemoryInfo DeviceGetMemoryInfo;
  gr_pfn_nvmlDeviceGetMemoryInfoV2 DeviceGetMemoryInfoV2;
  gr_pfn_nvmlDeviceGetComputeMode DeviceGetComputeMode;
  gr_pfn_nvmlDeviceGetString DeviceGetVbiosVersion;
  gr_pfn_nvmlDeviceGetBAR1MemoryInfo DeviceGetBAR1MemoryInfo;
  gr_pfn_nvmlDeviceGetUtilizationRates DeviceGetUtilizationRates;
  gr_pfn_nvmlDeviceGetUint CurrLinkGen, CurrLinkWidth, MaxLinkGen, MaxLinkWidth;
  gr_pfn_nvmlDeviceGetUint PowerUsage, EnforcedPowerLimit, PowerDefaultLimit, NumaNodeId;
  gr_pfn_nvmlDeviceGetPersistenceMode DeviceGetPersistenceMode;
  gr_pfn_nvmlDeviceGetEccMode DeviceGetEccMode;
  gr_pfn_nvmlDeviceGetTemperature DeviceGetTemperature;
  gr_pfn_nvmlDeviceGetTemperatureThreshold DeviceGetTemperatureThreshold;
  gr_pfn_nvmlDeviceGetCudaComputeCapability DeviceGetCudaComputeCapability;
  gr_pfn_nvmlDeviceGetNvLinkState DeviceGetNvLinkState;
  gr_pfn_nvmlDeviceGetNvLinkVersion DeviceGetNvLinkVersion;
  gr_pfn_nvmlDeviceGetNvLinkRemotePciInfo DeviceGetNvLinkRemotePciInfo;
  gr_pfn_nvmlDeviceGetNvLinkRemoteDeviceType DeviceGetNvLinkRemoteDeviceType;
  gr_pfn_nvmlDeviceGetP2PStatus DeviceGetP2PStatus;
  gr_pfn_nvmlDeviceGetClockInfo DeviceGetClockInfo, DeviceGetMaxClockInfo;
  gr_pfn_nvmlDeviceGetUint FanSpeed, PcieReplayCounter;
  gr_pfn_nvmlDeviceGetPcieThroughput DeviceGetPcieThroughput;
  gr_pfn_nvmlDeviceGetClocksEventReasons DeviceGetClocksEventReasons;
  gr_pfn_nvmlDeviceGetTotalEccErrors DeviceGetTotalEccErrors;
  gr_pfn_nvmlDeviceGetRemappedRows DeviceGetRemappedRows;
  gr_pfn_nvmlDeviceGetFieldValues DeviceGetFieldValues;
  gr_pfn_nvmlEventSetCreate EventSetCreate;
  gr_pfn_nvmlDeviceRegisterEvents DeviceRegisterEvents;
  gr_pfn_nvmlEventSetWait EventSetWait;
  gr_pfn_nvmlEventSetFree EventSetFree;
  gr_pfn_nvmlDeviceGetComputeRunningProcesses DeviceGetComputeRunningProcesses;
};

#define SYM(field, req, ...) {(void **)&n->field, {__VA_ARGS__}, req}

static int bind_symbols(struct nvml *n, char *why, size_t cap)
{
  const struct gr_dl_sym syms[] = {
      SYM(Init, true, "nvmlInit_v2", "nvmlInit"),
      SYM(Shutdown, true, "nvmlShutdown"),
      SYM(ErrorString, true, "nvmlErrorString"),
      SYM(DeviceGetCount, true, "nvmlDeviceGetCount_v2", "nvmlDeviceGetCount"),
      SYM(DeviceGetHandleByIndex, true, "nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex"),
      SYM(DeviceGetPciInfo, true, "nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetPciInfo_v2"),
      SYM(SystemGetDriverVersion, false, "nvmlSystemGetDriverVersion"),
      SYM(SystemGetCudaDriverVersion, false, "nvmlSystemGetCudaDriverVersion_v2", "nvmlSystemGetCudaDriverVersion"),
      SYM(DeviceGetName, false, "nvmlDeviceGetName"),
      SYM(DeviceGetUUID, false, "nvmlDeviceGetUUID"),
      SYM(DeviceGetMemoryInfo, false, "nvmlDeviceGetMemoryInfo"),
      /* R510 and later: the reserve apart; the v1 answer counts it as used */
      SYM(DeviceGetMemoryInfoV2, false, "nvmlDeviceGetMemoryInfo_v2"),
      SYM(DeviceGetComputeMode, false, "nvmlDeviceGetComputeMode"),
      SYM(DeviceGetVbiosVersion, false, "nvmlDeviceGetVbiosVersion"),
      SYM(DeviceGetMaxClockInfo, false, "nvmlDeviceGetMaxClockInfo"),
      SYM(DeviceGetBAR1MemoryInfo, false, "nvmlDeviceGetBAR1MemoryInfo"),
      SYM(DeviceGetUtilizationRates, false, "nvmlDeviceGetUtilizationRates"),
      SYM(CurrLinkGen, false, "nvmlDeviceGetCurrPcieLinkGeneration"),
      SYM(CurrLinkWidth, false, "nvmlDeviceGetCurrPcieLinkWidth"),
      SYM(MaxLinkGen, false, "nvmlDeviceGetMaxPcieLinkGeneration"),
      SYM(MaxLinkWidth, false, "nvmlDeviceGetMaxPcieLinkWidth"),
      SYM(PowerUsage, false, "nvmlDeviceGetPowerUsage"),
      SYM(EnforcedPowerLimit, false, "nvmlDeviceGetEnforcedPowerLimit"),
      SYM(PowerDefaultLimit, false, "nvmlDeviceGetPowerManagementDefaultLimit"),
      SYM(NumaNodeId, false, "nvmlDeviceGetNumaNodeId"),
      SYM(DeviceGetPersistenceMode, false, "nvmlDeviceGetPersistenceMode"),
      SYM(DeviceGetEccMode, false, "nvmlDeviceGetEccMode"),
      SYM(DeviceGetTemperature, false, "nvmlDeviceGetTemperature"),
      SYM(DeviceGetTemperatureThreshold, false, "nvmlDeviceGetTemperatureThreshold"),
      SYM(DeviceGetCudaComputeCapability, false, "nvmlDeviceGetCudaComputeCapability"),
      SYM(DeviceGetNvLinkState, false, "nvmlDeviceGetNvLinkState"),
      SYM(DeviceGetNvLinkVersion, false, "nvmlDeviceGetNvLinkVersion"),
      /* _v2 only: the unversioned call fills NVML 8's shorter nvmlPciInfo_t */
      SYM(DeviceGetNvLinkRemotePciInfo, false, "nvmlDeviceGetNvLinkRemotePciInfo_v2"),
      /* NVML 11.4 and later; older drivers: decided from the far end's bus id */
      SYM(DeviceGetNvLinkRemoteDeviceType, false, "nvmlDeviceGetNvLinkRemoteDeviceType"),
      SYM(DeviceGetP2PStatus, false, "nvmlDeviceGetP2PStatus"),
      SYM(DeviceGetClockInfo, false, "nvmlDeviceGetClockInfo"),
      SYM(FanSpeed, false, "nvmlDeviceGetFanSpeed"),
      SYM(PcieReplayCounter, false, "nvmlDeviceGetPcieReplayCounter"),
      SYM(DeviceGetPcieThroughput, false, "nvmlDeviceGetPcieThroughput"),
      /* renamed in NVML 12.2; the old name is deprecated in 13 */
      SYM(DeviceGetClocksEventReasons, false, "nvmlDeviceGetCurrentClocksEventReasons",
          "nvmlDeviceGetCurrentClocksThrottleReasons"),
      SYM(DeviceGetTotalEccErrors, false, "nvmlDeviceGetTotalEccErrors"),
      SYM(DeviceGetRemappedRows, false, "nvmlDeviceGetRemappedRows"),
      SYM(DeviceGetFieldValues, false, "nvmlDeviceGetFieldValues"),
      SYM(EventSetCreate, false, "nvmlEventSetCreate"),
      SYM(DeviceRegisterEvents, false, "nvmlDeviceRegisterEvents"),
      /* _v2: the older call's data struct lacks the MIG instance ids */
      SYM(EventSetWait, false, "nvmlEventSetWait_v2"),
      SYM(EventSetFree, false, "nvmlEventSetFree"),
      /* _v3 and _v2 fill the same nvmlProcessInfo_v2_t; the unversioned call a shorter one */
      SYM(DeviceGetComputeRunningProcesses, false, "nvmlDeviceGetComputeRunningProcesses_v3",
          "nvmlDeviceGetComputeRunningProcesses_v2"),
  };
  return gr_dl_bind(n->lib, NVML_SONAME, syms, sizeof(syms) / sizeof(syms[0]), why, cap);
}

static const char *errstr(struct nvml *n, gr_nvml_return r)
{
  const char *s = n->ErrorString ? n->ErrorString(r) : NULL;
  return s ? s : "unknown NVML error";
}

static void nvml_shutdown(void *state)
{
  struct nvml *n = state;
  if (!n)
    return;
  if (n->events && n->EventSetFree)
    n->EventSetFree(n->events);
  if (n->started)
    n->Shutdown();
  gr_dl_close(n->lib);
  free(n->dev);
  free(n->busid);
  free(n);
}

static int nvml_init(void **state, char *why, size_t cap)
{
  struct nvml *n = xcalloc(1, sizeof(*n));
  gr_nvml_return r;
  char detail[512];
  n->lib = gr_dl_open(NVML_SONAME, detail, sizeof(detail));
  if (!n->lib) {
    snprintf(why, cap, "no NVIDIA driver found (%s)", detail);
    goto fail;
  }
  if (bind_symbols(n, why, cap) != 0)
    goto fail;
  r = n->Init();
  if (r != GR_NVML_SUCCESS) {
    snprintf(why, cap, "the NVIDIA driver did not start: %s: nvmlInit: %s%s", NVML_SONAME, errstr(n, r),
             r == GR_NVML_ERROR_DRIVER_NOT_LOADED ? " (is the nvidia kernel module loaded?)" : "");
    goto fail;
  }
  n->started = true;
  *state = n;
  return 0;
fail:
  nvml_shutdown(n);
  *state = NULL;
  return -1;
}

static const char *nvml_last_error(void *state)
{
  (void)state;
  return tl_err;
}

static int nvml_enumerate(void *state, unsigned *count)
{
  struct nvml *n = state;
  gr_nvml_return r = n->DeviceGetCount(&n->count);
  if (r != GR_NVML_SUCCESS) {
    snprintf(tl_err, sizeof(tl_err), "nvmlDeviceGetCount: %s", errstr(n, r));
    return -1;
  }
  free(n->dev);
  free(n->busid);
  n->dev = xcalloc(n->count ? n->count : 1, sizeof(*n->dev));
  n->busid = xcalloc(n->count ? n->count : 1, sizeof(*n->busid));
  for (unsigned i = 0; i < n->count; i++) {
    r = n->DeviceGetHandleByIndex(i, &n->dev[i]);
    if (r != GR_NVML_SUCCESS) {
      snprintf(tl_err, sizeof(tl_err), "GPU%u: nvmlDeviceGetHandleByIndex: %s", i, errstr(n, r));
      return -1;
    }
    struct nvmlPciInfo_st pci;
    memset(&pci, 0, sizeof(pci));
    if (n->DeviceGetPciInfo(n->dev[i], &pci) == GR_NVML_SUCCESS) {
      pci.busId[sizeof(pci.busId) - 1] = '\0';
      if (!gr_busid_normalize(pci.busId, n->busid[i], sizeof(n->busid[i])))
        n->busid[i][0] = '\0';
    }
  }
  *count = n->count;
  return 0;
}

/* Stores an NVML unsigned answer scaled into m; anything but success leaves
 * m invalid. Returns the NVML result so callers can spot a lost GPU. */
static gr_nvml_return get_uint(gr_pfn_nvmlDeviceGetUint fn, gr_nvml_device d, double scale, struct gr_metric *m)
{
  unsigned v = 0;
  if (!fn)
    return GR_NVML_ERROR_FUNCTION_NOT_FOUND;
  gr_nvml_return r = fn(d, &v);
  if (r == GR_NVML_SUCCESS) {
    m->v = v * scale;
    m->ok = true;
  }
  return r;
}

static void set(struct gr_metric *m, double v)
{
  m->v = v;
  m->ok = true;
}

static int device_of(struct nvml *n, unsigned gpu, gr_nvml_device *d)
{
  if (gpu >= n->count) {
    snprintf(tl_err, sizeof(tl_err), "GPU%u: no such GPU (%u found)", gpu, n->count);
    return -1;
  }
  *d = n->dev[gpu];
  return 0;
}

static void static_temps_nvlinks(struct nvml *n, gr_nvml_device d, struct gr_gpu_static *s)
{
  unsigned v;
  if (n->DeviceGetTemperatureThreshold) {
    if (n->DeviceGetTemperatureThreshold(d, GR_NVML_TEMPERATURE_THRESHOLD_SLOWDOWN, &v) == GR_NVML_SUCCESS)
      set(&s->temp_slowdown_c, v);
    if (n->DeviceGetTemperatureThreshold(d, GR_NVML_TEMPERATURE_THRESHOLD_SHUTDOWN, &v) == GR_NVML_SUCCESS)
      set(&s->temp_shutdown_c, v);
  }
  if (n->DeviceGetNvLinkState) {
    int active = 0;
    gr_nvml_return r = GR_NVML_SUCCESS;
    for (unsigned l = 0; l < GR_NVML_NVLINK_MAX_LINKS && r == GR_NVML_SUCCESS; l++) {
      gr_nvml_enable_state st = 0;
      r = n->DeviceGetNvLinkState(d, l, &st);
      if (r == GR_NVML_SUCCESS && st)
        active++;
      /* link 0 NOT_SUPPORTED: the GPU has no NVLink at all (invalid, not 0) */
      if (l == 0 && r != GR_NVML_SUCCESS)
        active = -1;
    }
    if (active >= 0)
      set(&s->gpulinks_active, active);
  }
}

static int nvml_static_info(void *state, unsigned gpu, struct gr_gpu_static *s)
{
  struct nvml *n = state;
  gr_nvml_device d;
  struct nvmlPciInfo_st pci;
  memset(s, 0, sizeof(*s));
  if (device_of(n, gpu, &d) != 0)
    return -1;
  memset(&pci, 0, sizeof(pci));
  gr_nvml_return r = n->DeviceGetPciInfo(d, &pci);
  if (r != GR_NVML_SUCCESS) {
    snprintf(tl_err, sizeof(tl_err), "GPU%u: nvmlDeviceGetPciInfo: %s", gpu, errstr(n, r));
    return -1;
  }
  pci.busId[sizeof(pci.busId) - 1] = '\0';
  if (!gr_busid_normalize(pci.busId, s->busid, sizeof(s->busid)))
    snprintf(s->busid, sizeof(s->busid), "%04x:%02x:%02x.0", pci.domain & 0xffff, pci.bus & 0xff, pci.device & 0x1f);
  s->vendor = pci.pciDeviceId & 0xffff;
  s->device = pci.pciDeviceId >> 16;
  if (n->DeviceGetName)
    n->DeviceGetName(d, s->name, sizeof(s->name));
  if (n->DeviceGetUUID)
    n->DeviceGetUUID(d, s->uuid, sizeof(s->uuid));
  s->name[sizeof(s->name) - 1] = s->uuid[sizeof(s->uuid) - 1] = '\0';
  struct nvmlMemory_st mem;
  if (n->DeviceGetMemoryInfo && n->DeviceGetMemoryInfo(d, &mem) == GR_NVML_SUCCESS)
    set(&s->mem_gib, (double)mem.total / (1024.0 * 1024 * 1024));
  struct nvmlBAR1Memory_st bar;
  if (n->DeviceGetBAR1MemoryInfo && n->DeviceGetBAR1MemoryInfo(d, &bar) == GR_NVML_SUCCESS)
    set(&s->bar1_gib, (double)bar.bar1Total / (1024.0 * 1024 * 1024));
  get_uint(n->MaxLinkGen, d, 1, &s->max_link_gen);
  get_uint(n->MaxLinkWidth, d, 1, &s->max_link_width);
  get_uint(n->PowerDefaultLimit, d, 0.001, &s->power_default_w);
  get_uint(n->NumaNodeId, d, 1, &s->numa_node);
  int major, minor;
  if (n->DeviceGetCudaComputeCapability && n->DeviceGetCudaComputeCapability(d, &major, &minor) == GR_NVML_SUCCESS) {
    set(&s->cc_major, major);
    set(&s->cc_minor, minor);
  }
  gr_nvml_enable_state cur, pending;
  if (n->DeviceGetEccMode && n->DeviceGetEccMode(d, &cur, &pending) == GR_NVML_SUCCESS)
    set(&s->ecc_enabled, cur ? 1 : 0);
  unsigned mhz;
  if (n->DeviceGetMaxClockInfo && n->DeviceGetMaxClockInfo(d, GR_NVML_CLOCK_SM, &mhz) == GR_NVML_SUCCESS)
    set(&s->max_sm_clock_mhz, mhz);
  if (n->DeviceGetMaxClockInfo && n->DeviceGetMaxClockInfo(d, GR_NVML_CLOCK_MEM, &mhz) == GR_NVML_SUCCESS)
    set(&s->max_mem_clock_mhz, mhz);
  if (n->DeviceGetVbiosVersion && n->DeviceGetVbiosVersion(d, s->vbios, sizeof(s->vbios)) != GR_NVML_SUCCESS)
    s->vbios[0] = '\0';
  s->vbios[sizeof(s->vbios) - 1] = '\0';
  static_temps_nvlinks(n, d, s);
  return 0;
}

static void read_clocks_and_throttle(struct nvml *n, gr_nvml_device d, struct gr_gpu_dynamic *dy);
static void read_memory(struct nvml *n, gr_nvml_device d, struct gr_gpu_dynamic *dy);
static void read_pcie(struct nvml *n, gr_nvml_device d, struct gr_gpu_dynamic *dy);
static void read_fields(struct nvml *n, gr_nvml_device d, struct gr_gpu_dynamic *dy);
static void read_memory_errors(struct nvml *n, gr_nvml_device d, struct gr_gpu_dynamic *dy);

static int nvml_dynamic_info(void *state, unsigned gpu, struct gr_gpu_dynamic *dy)
{
  struct nvml *n = state;
  gr_nvml_device d;
  memset(dy, 0, sizeof(*dy));
  if (device_of(n, gpu, &d) != 0)
    return -1;
  /* The power reading answers even on GPUs without most sensors, so a lost
   * GPU shows here first. */
  gr_nvml_return r = get_uint(n->PowerUsage, d, 0.001, &dy->power_w);
  if (r == GR_NVML_ERROR_GPU_IS_LOST) {
    snprintf(tl_err, sizeof(tl_err), "GPU%u: %s", gpu, errstr(n, r));
    return -1;
  }
  /* The kernel driver died under this process (a crash, a module unloaded
   * for an update): no value of this GPU can be read again, which is lost,
   * not a GPU without sensors. */
  if (r == GR_NVML_ERROR_DRIVER_NOT_LOADED || r == GR_NVML_ERROR_UNINITIALIZED) {
    snprintf(tl_err, sizeof(tl_err), "GPU%u: the driver is gone: %s", gpu, errstr(n, r));
    return -1;
  }
  get_uint(n->CurrLinkGen, d, 1, &dy->link_gen);
  get_uint(n->CurrLinkWidth, d, 1, &dy->link_width);
  get_uint(n->EnforcedPowerLimit, d, 0.001, &dy->power_limit_w);
  unsigned t;
  if (n->DeviceGetTemperature && n->DeviceGetTemperature(d, GR_NVML_TEMPERATURE_GPU, &t) == GR_NVML_SUCCESS)
    set(&dy->temp_c, t);
  struct nvmlUtilization_st u;
  if (n->DeviceGetUtilizationRates && n->DeviceGetUtilizationRates(d, &u) == GR_NVML_SUCCESS) {
    set(&dy->util_gpu_pct, u.gpu);
    set(&dy->util_mem_pct, u.memory);
  }
  read_memory(n, d, dy);
  gr_nvml_enable_state pm;
  if (n->DeviceGetPersistenceMode && n->DeviceGetPersistenceMode(d, &pm) == GR_NVML_SUCCESS)
    set(&dy->persistence, pm ? 1 : 0);
  gr_nvml_compute_mode cm;
  if (n->DeviceGetComputeMode && n->DeviceGetComputeMode(d, &cm) == GR_NVML_SUCCESS)
    set(&dy->compute_mode, cm);
  read_clocks_and_throttle(n, d, dy);
  read_pcie(n, d, dy);
  read_memory_errors(n, d, dy);
  return 0;
}

/* Memory used and free, as nvidia-smi counts them: the _v2 call keeps the
 * driver's reserve apart (used + reserved + free = total); the v1 call,
 * for drivers before R510, counts the reserve as used. */
static void read_memory(struct nvml *n, gr_nvml_device d, struct gr_gpu_dynamic *dy)
{
  const double gib = 1024.0 * 1024 * 1024;
  struct nvmlMemory_v2_st m2 = {.version = GR_NVML_MEMORY_V2_VERSION};
  if (n->DeviceGetMemoryInfoV2 && n->DeviceGetMemoryInfoV2(d, &m2) == GR_NVML_SUCCESS) {
    set(&dy->mem_used_gib, (double)m2.used / gib);
    set(&dy->mem_free_gib, (double)m2.free / gib);
    set(&dy->mem_reserved_gib, (double)m2.reserved / gib);
    return;
  }
  struct nvmlMemory_st mem;
  if (n->DeviceGetMemoryInfo && n->DeviceGetMemoryInfo(d, &mem) == GR_NVML_SUCCESS) {
    set(&dy->mem_used_gib, (double)mem.used / gib);
    set(&dy->mem_free_gib, (double)mem.free / gib);
  }
}

/* Clocks, fan, memory temperature and why the clocks are held down. */
static void read_clocks_and_throttle(struct nvml *n, gr_nvml_device d, struct gr_gpu_dynamic *dy)
{
  unsigned v;
  if (n->DeviceGetClockInfo && n->DeviceGetClockInfo(d, GR_NVML_CLOCK_SM, &v) == GR_NVML_SUCCESS)
    set(&dy->sm_clock_mhz, v);
  if (n->DeviceGetClockInfo && n->DeviceGetClockInfo(d, GR_NVML_CLOCK_MEM, &v) == GR_NVML_SUCCESS)
    set(&dy->mem_clock_mhz, v);
  get_uint(n->FanSpeed, d, 1, &dy->fan_pct);
  unsigned long long reasons;
  if (n->DeviceGetClocksEventReasons && n->DeviceGetClocksEventReasons(d, &reasons) == GR_NVML_SUCCESS)
    set(&dy->throttle, (double)(reasons & ((1u << GR_THR_NBITS) - 1))); /* NVML's bits are gpurig's */
  read_fields(n, d, dy);
}

static double field_value(const struct nvmlFieldValue_st *fv)
{
  switch (fv->valueType) {
  case GR_NVML_VALUE_TYPE_DOUBLE: return fv->value.dVal;
  case GR_NVML_VALUE_TYPE_UNSIGNED_LONG: return (double)fv->value.ulVal;
  case GR_NVML_VALUE_TYPE_UNSIGNED_LONG_LONG: return (double)fv->value.ullVal;
  case GR_NVML_VALUE_TYPE_SIGNED_LONG_LONG: return (double)fv->value.sllVal;
  case GR_NVML_VALUE_TYPE_SIGNED_INT: return fv->value.siVal;
  default: return fv->value.uiVal;
  }
}

/* One field-value call for what NVML has no single call for: the memory
 * temperature and the NVLink error totals over all links (the way
 * dcgm-exporter reads them; a GPU without NVLink answers NOT_SUPPORTED). */
static void read_fields(struct nvml *n, gr_nvml_device d, struct gr_gpu_dynamic *dy)
{
  static const unsigned ids[] = {GR_NVML_FI_DEV_MEMORY_TEMP, GR_NVML_FI_DEV_NVLINK_CRC_FLIT_TOTAL,
                                 GR_NVML_FI_DEV_NVLINK_CRC_DATA_TOTAL, GR_NVML_FI_DEV_NVLINK_REPLAY_TOTAL,
                                 GR_NVML_FI_DEV_NVLINK_RECOVERY_TOTAL};
  enum { NFIELDS = sizeof(ids) / sizeof(ids[0]) };
  struct nvmlFieldValue_st fv[NFIELDS];
  memset(fv, 0, sizeof(fv));
  for (unsigned i = 0; i < NFIELDS; i++)
    fv[i].fieldId = ids[i];
  if (!n->DeviceGetFieldValues || n->DeviceGetFieldValues(d, NFIELDS, fv) != GR_NVML_SUCCESS)
    return;
  double t = field_value(&fv[0]);
  if (fv[0].nvmlReturn == GR_NVML_SUCCESS && t > 0 && t < 200) /* some boards answer 0 for "no sensor" */
    set(&dy->mem_temp_c, t);
  struct gr_metric *into[NFIELDS] = {NULL, &dy->gpulink_crc, &dy->gpulink_crc_data, &dy->gpulink_replay,
                                     &dy->gpulink_recovery};
  for (unsigned i = 1; i < NFIELDS; i++)
    if (fv[i].nvmlReturn == GR_NVML_SUCCESS)
      set(into[i], field_value(&fv[i]));
}

/* PCIe traffic (KB/s over the driver's 20 ms window) and replays. */
static void read_pcie(struct nvml *n, gr_nvml_device d, struct gr_gpu_dynamic *dy)
{
  unsigned kbs;
  if (n->DeviceGetPcieThroughput && n->DeviceGetPcieThroughput(d, GR_NVML_PCIE_UTIL_TX_BYTES, &kbs) == GR_NVML_SUCCESS)
    set(&dy->pcie_tx_gbps, kbs * 1024.0 / 1e9);
  if (n->DeviceGetPcieThroughput && n->DeviceGetPcieThroughput(d, GR_NVML_PCIE_UTIL_RX_BYTES, &kbs) == GR_NVML_SUCCESS)
    set(&dy->pcie_rx_gbps, kbs * 1024.0 / 1e9);
  get_uint(n->PcieReplayCounter, d, 1, &dy->pcie_replay);
}

/* ECC totals since the driver loaded and row remapping; GeForce answers
 * NOT_SUPPORTED to both, which leaves them invalid. */
static void read_memory_errors(struct nvml *n, gr_nvml_device d, struct gr_gpu_dynamic *dy)
{
  unsigned long long c;
  if (n->DeviceGetTotalEccErrors &&
      n->DeviceGetTotalEccErrors(d, GR_NVML_MEMORY_ERROR_TYPE_CORRECTED, GR_NVML_VOLATILE_ECC, &c) == GR_NVML_SUCCESS)
    set(&dy->ecc_corrected, (double)c);
  if (n->DeviceGetTotalEccErrors &&
      n->DeviceGetTotalEccErrors(d, GR_NVML_MEMORY_ERROR_TYPE_UNCORRECTED, GR_NVML_VOLATILE_ECC, &c) == GR_NVML_SUCCESS)
    set(&dy->ecc_uncorrected, (double)c);
  unsigned corr, unc, pending, failed;
  if (n->DeviceGetRemappedRows && n->DeviceGetRemappedRows(d, &corr, &unc, &pending, &failed) == GR_NVML_SUCCESS) {
    set(&dy->remap_corr, corr);
    set(&dy->remap_unc, unc);
    set(&dy->remap_pending, pending ? 1 : 0);
    set(&dy->remap_failed, failed ? 1 : 0);
  }
}

/* Xid events: one event set for every GPU, made on the first call. */
static int nvml_events(void *state, unsigned timeout_ms, struct gr_gpu_event *out, unsigned cap, unsigned *nout)
{
  struct nvml *n = state;
  *nout = 0;
  if (!n->events_tried) {
    n->events_tried = true;
    if (n->EventSetCreate && n->DeviceRegisterEvents && n->EventSetWait &&
        n->EventSetCreate(&n->events) == GR_NVML_SUCCESS) {
      for (unsigned i = 0; i < n->count; i++) /* a GPU that cannot report stays silent; others still do */
        if (n->DeviceRegisterEvents(n->dev[i], GR_NVML_EVENT_XID, n->events) == GR_NVML_SUCCESS)
          n->events_ok = true;
    }
  }
  if (!n->events_ok) {
    snprintf(tl_err, sizeof(tl_err), "the driver reports no Xid events here");
    return -1;
  }
  while (*nout < cap) {
    struct nvmlEventData_st e;
    memset(&e, 0, sizeof(e));
    gr_nvml_return r = n->EventSetWait(n->events, &e, *nout == 0 ? timeout_ms : 0);
    if (r != GR_NVML_SUCCESS)
      break; /* TIMEOUT: nothing more now */
    for (unsigned i = 0; i < n->count; i++)
      if (n->dev[i] == e.device && (e.eventType & GR_NVML_EVENT_XID)) {
        out[*nout].gpu = i;
        out[*nout].code = (int)e.eventData;
        (*nout)++;
      }
  }
  return 0;
}

static int nvml_processes(void *state, unsigned gpu, struct gr_gpu_process *out, unsigned cap, unsigned *nout)
{
  struct nvml *n = state;
  gr_nvml_device d;
  struct nvmlProcessInfo_v2_st info[64];
  unsigned count = sizeof(info) / sizeof(info[0]);
  *nout = 0;
  if (device_of(n, gpu, &d) != 0)
    return -1;
  if (!n->DeviceGetComputeRunningProcesses) {
    snprintf(tl_err, sizeof(tl_err), "the driver cannot list a GPU's processes");
    return -1;
  }
  gr_nvml_return r = n->DeviceGetComputeRunningProcesses(d, &count, info);
  if (r == GR_NVML_ERROR_INSUFFICIENT_SIZE)
    count = sizeof(info) / sizeof(info[0]); /* more than 64: the first ones are enough to refuse */
  else if (r != GR_NVML_SUCCESS) {
    snprintf(tl_err, sizeof(tl_err), "GPU%u: nvmlDeviceGetComputeRunningProcesses: %s", gpu, errstr(n, r));
    return -1;
  }
  for (unsigned i = 0; i < count && *nout < cap; i++) {
    out[*nout].pid = info[i].pid;
    out[*nout].mem_gib.ok = info[i].usedGpuMemory != ~0ull; /* NVML_VALUE_NOT_AVAILABLE */
    out[*nout].mem_gib.v = (double)info[i].usedGpuMemory / (1024.0 * 1024 * 1024);
    (*nout)++;
  }
  return 0;
}

static int nvml_p2p_status(void *state, unsigned a, unsigned b, enum gr_p2p_cap cap, enum gr_p2p_status *out)
{
  struct nvml *n = state;
  gr_nvml_device da, db;
  unsigned st = 0;
  *out = GR_P2PS_U;
  if (device_of(n, a, &da) != 0 || device_of(n, b, &db) != 0)
    return -1;
  if (!n->DeviceGetP2PStatus)
    return 0;
  gr_nvml_return r = n->DeviceGetP2PStatus(
      da, db, cap == GR_P2P_READ ? GR_NVML_P2P_CAPS_INDEX_READ : GR_NVML_P2P_CAPS_INDEX_WRITE, &st);
  if (r != GR_NVML_SUCCESS)
    return 0; /* unknown, not an error: older drivers answer NOT_SUPPORTED */
  /* NVML's order: OK, CHIPSET, GPU, IOH_TOPOLOGY, DISABLED_BY_REGKEY, NOT_SUPPORTED, UNKNOWN */
  static const enum gr_p2p_status map[] = {GR_P2PS_OK, GR_P2PS_CNS, GR_P2PS_GNS, GR_P2PS_TNS,
                                           GR_P2PS_DR, GR_P2PS_NS, GR_P2PS_U};
  *out = st < sizeof(map) / sizeof(map[0]) ? map[st] : GR_P2PS_U;
  return 0;
}

/* NVML's version numbers (nvmlNvlinkVersion_t) as NVLink generations:
 * 2.2 is a second-generation link (Turing), 3.1 a third (A100, GA102). */
static int nvlink_generation(unsigned v)
{
  switch (v) {
  case GR_NVML_NVLINK_VERSION_1_0: return 1;
  case GR_NVML_NVLINK_VERSION_2_0: case GR_NVML_NVLINK_VERSION_2_2: return 2;
  case GR_NVML_NVLINK_VERSION_3_0: case GR_NVML_NVLINK_VERSION_3_1: return 3;
  case GR_NVML_NVLINK_VERSION_4_0: return 4;
  case GR_NVML_NVLINK_VERSION_5_0: return 5;
  case GR_NVML_NVLINK_VERSION_6_0: return 6;
  default: return 0;
  }
}

static bool is_driver_gpu(const struct nvml *n, const char *busid)
{
  for (unsigned i = 0; i < n->count; i++)
    if (n->busid[i][0] && strcmp(n->busid[i], busid) == 0)
      return true;
  return false;
}

/* The far end's kind: the driver's answer where it has the call (NVML 11.4
 * on), else from the bus id: one of this driver's GPUs, an IBM NPU (a
 * POWER9), or another NVIDIA function, which on an NVLink is an NVSwitch. */
static enum gr_gpulink_peer remote_kind(const struct nvml *n, gr_nvml_device d, unsigned l,
                                       const struct gr_gpu_link *k)
{
  gr_nvml_nvlink_device_type type = GR_NVML_NVLINK_DEVICE_TYPE_UNKNOWN;
  if (n->DeviceGetNvLinkRemoteDeviceType && n->DeviceGetNvLinkRemoteDeviceType(d, l, &type) == GR_NVML_SUCCESS) {
    switch (type) {
    case GR_NVML_NVLINK_DEVICE_TYPE_GPU: return GR_NVPEER_GPU;
    case GR_NVML_NVLINK_DEVICE_TYPE_IBMNPU: return GR_NVPEER_CPU;
    case GR_NVML_NVLINK_DEVICE_TYPE_SWITCH: return GR_NVPEER_NVSWITCH;
    default: break; /* unknown: try the bus id */
    }
  }
  if (!k->remote_busid[0])
    return GR_NVPEER_UNKNOWN;
  if (is_driver_gpu(n, k->remote_busid))
    return GR_NVPEER_GPU;
  if (k->remote_vendor == 0x1014)
    return GR_NVPEER_CPU;
  return k->remote_vendor == 0x10de ? GR_NVPEER_NVSWITCH : GR_NVPEER_UNKNOWN;
}

/* The far end of link l, which is up. */
static void nvlink_remote(const struct nvml *n, gr_nvml_device d, unsigned l, struct gr_gpu_link *k)
{
  struct nvmlPciInfo_st pci;
  memset(&pci, 0, sizeof(pci));
  if (n->DeviceGetNvLinkRemotePciInfo && n->DeviceGetNvLinkRemotePciInfo(d, l, &pci) == GR_NVML_SUCCESS) {
    pci.busId[sizeof(pci.busId) - 1] = '\0';
    /* 0000:00:00.0 is a host bridge, never a link's far end: a zeroed record means "not known" */
    if (!gr_busid_normalize(pci.busId, k->remote_busid, sizeof(k->remote_busid)) ||
        strcmp(k->remote_busid, "0000:00:00.0") == 0)
      k->remote_busid[0] = '\0';
    k->remote_vendor = pci.pciDeviceId & 0xffff;
  }
  k->remote = remote_kind(n, d, l, k);
}

static int nvml_nvlinks(void *state, unsigned gpu, struct gr_gpu_link *out, unsigned cap, unsigned *count)
{
  struct nvml *n = state;
  gr_nvml_device d;
  *count = 0;
  if (device_of(n, gpu, &d) != 0)
    return -1;
  if (!n->DeviceGetNvLinkState)
    return 0;
  for (unsigned l = 0; l < GR_NVML_NVLINK_MAX_LINKS && *count < cap; l++) {
    gr_nvml_enable_state st = 0;
    gr_nvml_return r = n->DeviceGetNvLinkState(d, l, &st);
    if (r == GR_NVML_ERROR_GPU_IS_LOST) {
      snprintf(tl_err, sizeof(tl_err), "GPU%u: nvmlDeviceGetNvLinkState: %s", gpu, errstr(n, r));
      return -1;
    }
    if (r != GR_NVML_SUCCESS)
      continue; /* not one of this GPU's links (INVALID_ARGUMENT past its last, NOT_SUPPORTED without NVLink) */
    struct gr_gpu_link *k = &out[(*count)++];
    memset(k, 0, sizeof(*k));
    k->index = l;
    set(&k->active, st ? 1 : 0);
    unsigned v = 0;
    if (n->DeviceGetNvLinkVersion && n->DeviceGetNvLinkVersion(d, l, &v) == GR_NVML_SUCCESS && nvlink_generation(v))
      set(&k->gen, nvlink_generation(v));
    if (st)
      nvlink_remote(n, d, l, k);
  }
  return 0;
}

static int nvml_versions(void *state, char *driver, size_t dcap, char *runtime, size_t rcap)
{
  struct nvml *n = state;
  int cuda = 0;
  driver[0] = runtime[0] = '\0';
  if (n->SystemGetDriverVersion && n->SystemGetDriverVersion(driver, (unsigned)dcap) != GR_NVML_SUCCESS)
    driver[0] = '\0';
  if (n->SystemGetCudaDriverVersion && n->SystemGetCudaDriverVersion(&cuda) == GR_NVML_SUCCESS && cuda > 0)
    snprintf(runtime, rcap, "%d.%d", cuda / 1000, cuda % 1000 / 10);
  return 0;
}

const struct gr_gpu_backend gr_gpu_backend_nvml = {
    .name = "nvidia",
    .library = NVML_SONAME,
    .driver_name = "NVIDIA driver",
    .runtime_name = "CUDA",
    .p2p_tool = "nvidia-smi topo -p2p",
    .gpulink_name = "NVLink",
    .pci_vendor = 0x10de,
    .init = nvml_init,
    .shutdown = nvml_shutdown,
    .last_error = nvml_last_error,
    .enumerate = nvml_enumerate,
    .static_info = nvml_static_info,
    .dynamic_info = nvml_dynamic_info,
    .p2p_status = nvml_p2p_status,
    .gpulinks = nvml_nvlinks,
    .versions = nvml_versions,
    .events = nvml_events,
    .processes = nvml_processes,
};
