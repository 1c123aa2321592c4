/* ABI check: gpurig declares the NVIDIA functions it calls itself
 * (src/backends/nvidia/nv_api.h) so that it builds without NVIDIA's headers. Where the
 * real headers are present at build time, this file assigns every real
 * function gpurig resolves to gpurig's pointer type and compares every
 * constant and struct layout, compiled with -Werror: a prototype that does
 * not match fails the build, without any GPU.
 *
 * GR_ABI_SELFTEST adds one deliberately wrong prototype; the test suite
 * compiles it that way too and expects the compiler to refuse it, so this
 * check cannot pass vacuously. */
#include <stddef.h>

#if __has_include(<nvml.h>)
/* nvml.h defines NVML's structs under the tags nv_api.h uses: take NVIDIA's
 * and compare gpurig's members with them below */
#define GR_NV_API_NVIDIA_STRUCTS 1
#endif
#include "backends/nvidia/nv_api.h"

#if __has_include(<cuda.h>)
#include <cuda.h>

_Static_assert((long)(GR_CUDA_SUCCESS) == (long)(CUDA_SUCCESS), "CUDA_SUCCESS");
_Static_assert((long)(GR_CUDA_ERROR_NO_DEVICE) == (long)(CUDA_ERROR_NO_DEVICE), "CUDA_ERROR_NO_DEVICE");
_Static_assert((long)(GR_CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED) == (long)(CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED), "peer");
_Static_assert((long)(GR_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT) == (long)(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT), "SMs");
_Static_assert((long)(GR_CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING) == (long)(CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING), "UVA");
_Static_assert((long)(GR_CU_MEMHOSTALLOC_PORTABLE) == (long)(CU_MEMHOSTALLOC_PORTABLE), "portable");
_Static_assert((long)(GR_CU_MEMHOSTALLOC_DEVICEMAP) == (long)(CU_MEMHOSTALLOC_DEVICEMAP), "devicemap");
_Static_assert((long)(GR_CU_MEMHOSTREGISTER_PORTABLE) == (long)(CU_MEMHOSTREGISTER_PORTABLE), "reg portable");
_Static_assert((long)(GR_CU_MEMHOSTREGISTER_DEVICEMAP) == (long)(CU_MEMHOSTREGISTER_DEVICEMAP), "reg devicemap");
_Static_assert((long)(GR_CU_STREAM_NON_BLOCKING) == (long)(CU_STREAM_NON_BLOCKING), "non-blocking");
_Static_assert((long)(GR_CU_EVENT_DEFAULT) == (long)(CU_EVENT_DEFAULT), "event default");
_Static_assert(sizeof(gr_cu_deviceptr) == sizeof(CUdeviceptr), "CUdeviceptr");

void gr_abi_cuda(void);
void gr_abi_cuda(void)
{
  gr_pfn_cuInit f01 = cuInit;
  gr_pfn_cuDriverGetVersion f02 = cuDriverGetVersion;
  gr_pfn_cuGetErrorString f03 = cuGetErrorString;
  gr_pfn_cuDeviceGetCount f04 = cuDeviceGetCount;
  gr_pfn_cuDeviceGet f05 = cuDeviceGet;
  gr_pfn_cuDeviceGetName f06 = cuDeviceGetName;
  gr_pfn_cuDeviceGetPCIBusId f07 = cuDeviceGetPCIBusId;
  gr_pfn_cuDeviceGetAttribute f08 = cuDeviceGetAttribute;
  gr_pfn_cuDeviceCanAccessPeer f09 = cuDeviceCanAccessPeer;
  gr_pfn_cuDevicePrimaryCtxRetain f10 = cuDevicePrimaryCtxRetain;
  gr_pfn_cuDevicePrimaryCtxRelease f11 = cuDevicePrimaryCtxRelease_v2;
  gr_pfn_cuCtxSetCurrent f12 = cuCtxSetCurrent;
  gr_pfn_cuCtxEnablePeerAccess f13 = cuCtxEnablePeerAccess;
  gr_pfn_cuMemGetInfo f14 = cuMemGetInfo_v2;
  gr_pfn_cuMemAlloc f15 = cuMemAlloc_v2;
  gr_pfn_cuMemFree f16 = cuMemFree_v2;
  gr_pfn_cuMemHostAlloc f17 = cuMemHostAlloc;
  gr_pfn_cuMemFreeHost f18 = cuMemFreeHost;
  gr_pfn_cuMemHostRegister f19 = cuMemHostRegister_v2;
  gr_pfn_cuMemHostUnregister f20 = cuMemHostUnregister;
  gr_pfn_cuMemHostGetDevicePointer f21 = cuMemHostGetDevicePointer_v2;
  gr_pfn_cuMemcpyAsync f22 = cuMemcpyAsync;
  gr_pfn_cuMemcpyPeerAsync f23 = cuMemcpyPeerAsync;
  gr_pfn_cuMemsetD32Async f24 = cuMemsetD32Async;
  gr_pfn_cuStreamCreate f25 = cuStreamCreate;
  gr_pfn_cuStreamDestroy f26 = cuStreamDestroy_v2;
  gr_pfn_cuStreamSynchronize f27 = cuStreamSynchronize;
  gr_pfn_cuStreamWaitEvent f28 = cuStreamWaitEvent;
  gr_pfn_cuEventCreate f29 = cuEventCreate;
  gr_pfn_cuEventDestroy f30 = cuEventDestroy_v2;
  gr_pfn_cuEventRecord f31 = cuEventRecord;
  gr_pfn_cuEventSynchronize f32 = cuEventSynchronize;
  gr_pfn_cuEventElapsedTime f33 = cuEventElapsedTime_v2;
  gr_pfn_cuModuleLoadData f34 = cuModuleLoadData;
  gr_pfn_cuModuleUnload f35 = cuModuleUnload;
  gr_pfn_cuModuleGetFunction f36 = cuModuleGetFunction;
  gr_pfn_cuLaunchKernel f37 = cuLaunchKernel;
#ifdef GR_ABI_SELFTEST
  /* deliberately wrong: the byte count as a 32-bit unsigned, as the
   * unversioned cuMemcpyHtoDAsync of CUDA 3.x took it */
  typedef gr_cu_result (*wrong_memcpy)(gr_cu_deviceptr, gr_cu_deviceptr, unsigned int, gr_cu_stream);
  wrong_memcpy bad = cuMemcpyAsync;
  (void)bad;
#endif
  void *all[] = {f01, f02, f03, f04, f05, f06, f07, f08, f09, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19,
                 f20, f21, f22, f23, f24, f25, f26, f27, f28, f29, f30, f31, f32, f33, f34, f35, f36, f37};
  (void)all;
}
#endif

#if __has_include(<cublas_v2.h>)
#include <cublas_v2.h>

_Static_assert((long)(GR_CUBLAS_STATUS_SUCCESS) == (long)(CUBLAS_STATUS_SUCCESS), "CUBLAS_STATUS_SUCCESS");
_Static_assert((long)(GR_CUBLAS_OP_N) == (long)(CUBLAS_OP_N), "CUBLAS_OP_N");
_Static_assert((long)(GR_CUDA_R_16F) == (long)(CUDA_R_16F), "CUDA_R_16F");
_Static_assert((long)(GR_CUDA_R_32F) == (long)(CUDA_R_32F), "CUDA_R_32F");
_Static_assert((long)(GR_CUBLAS_COMPUTE_32F) == (long)(CUBLAS_COMPUTE_32F), "CUBLAS_COMPUTE_32F");
_Static_assert((long)(GR_CUBLAS_GEMM_DEFAULT) == (long)(CUBLAS_GEMM_DEFAULT), "CUBLAS_GEMM_DEFAULT");

void gr_abi_cublas(void);
void gr_abi_cublas(void)
{
  gr_pfn_cublasCreate b1 = cublasCreate_v2;
  gr_pfn_cublasDestroy b2 = cublasDestroy_v2;
  gr_pfn_cublasSetStream b3 = cublasSetStream_v2;
  gr_pfn_cublasGemmEx b4 = cublasGemmEx;
  void *all[] = {b1, b2, b3, b4};
  (void)all;
}
#endif

#if __has_include(<nccl.h>)
#include <nccl.h>

_Static_assert((long)(GR_NCCL_SUCCESS) == (long)(ncclSuccess), "ncclSuccess");
_Static_assert((long)(GR_NCCL_FLOAT32) == (long)(ncclFloat32), "ncclFloat32");
_Static_assert((long)(GR_NCCL_SUM) == (long)(ncclSum), "ncclSum");
/* gr_nccl_unique_id is passed by value to ncclCommInitRank: same size */
_Static_assert(sizeof(gr_nccl_unique_id) == sizeof(ncclUniqueId), "ncclUniqueId");
_Static_assert(GR_NCCL_UNIQUE_ID_BYTES == NCCL_UNIQUE_ID_BYTES, "NCCL_UNIQUE_ID_BYTES");

void gr_abi_nccl(void);
void gr_abi_nccl(void)
{
  gr_pfn_ncclGetVersion n1 = ncclGetVersion;
  gr_pfn_ncclGetErrorString n2 = ncclGetErrorString;
  gr_pfn_ncclCommInitAll n3 = ncclCommInitAll;
  gr_pfn_ncclCommDestroy n4 = ncclCommDestroy;
  gr_pfn_ncclGroupStart n5 = ncclGroupStart;
  gr_pfn_ncclGroupEnd n6 = ncclGroupEnd;
  gr_pfn_ncclAllReduce n7 = ncclAllReduce;
  void *all[] = {n1, n2, n3, n4, n5, n6, n7};
  (void)all;
}
#endif

#if __has_include(<nvml.h>)
/* nvmlDeviceGetTemperature is deprecated in NVML 13 but still exported and
 * still the call that works on every driver gpurig supports */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#include <nvml.h>

/* gpurig's members (nv_api.h) under tags of this file, against NVIDIA's */
struct gr_abi_pci { GR_NVML_PCI_INFO_MEMBERS };
struct gr_abi_memory { GR_NVML_MEMORY_MEMBERS };
struct gr_abi_bar1 { GR_NVML_BAR1_MEMBERS };
struct gr_abi_memory_v2 { GR_NVML_MEMORY_V2_MEMBERS };
struct gr_abi_util { GR_NVML_UTILIZATION_MEMBERS };
union gr_abi_value { GR_NVML_VALUE_MEMBERS };
#define nvmlValue_st gr_abi_value /* the field value's member: gpurig's union, itself compared below */
struct gr_abi_field_value { GR_NVML_FIELD_VALUE_MEMBERS };
#undef nvmlValue_st
struct gr_abi_event_data { GR_NVML_EVENT_DATA_MEMBERS };
struct gr_abi_process { GR_NVML_PROCESS_INFO_MEMBERS };
#define GR_ABI_SAME(ours, theirs, m) \
  _Static_assert(offsetof(ours, m) == offsetof(theirs, m) && sizeof(((ours *)0)->m) == sizeof(((theirs *)0)->m), #m)
_Static_assert(sizeof(struct gr_abi_pci) == sizeof(nvmlPciInfo_t), "nvmlPciInfo_t");
GR_ABI_SAME(struct gr_abi_pci, nvmlPciInfo_t, busIdLegacy);
GR_ABI_SAME(struct gr_abi_pci, nvmlPciInfo_t, domain);
GR_ABI_SAME(struct gr_abi_pci, nvmlPciInfo_t, bus);
GR_ABI_SAME(struct gr_abi_pci, nvmlPciInfo_t, device);
GR_ABI_SAME(struct gr_abi_pci, nvmlPciInfo_t, pciDeviceId);
GR_ABI_SAME(struct gr_abi_pci, nvmlPciInfo_t, pciSubSystemId);
GR_ABI_SAME(struct gr_abi_pci, nvmlPciInfo_t, busId);
_Static_assert(sizeof(struct gr_abi_memory) == sizeof(nvmlMemory_t), "nvmlMemory_t");
GR_ABI_SAME(struct gr_abi_memory, nvmlMemory_t, total);
GR_ABI_SAME(struct gr_abi_memory, nvmlMemory_t, used);
_Static_assert(sizeof(struct gr_abi_memory_v2) == sizeof(nvmlMemory_v2_t), "nvmlMemory_v2_t");
GR_ABI_SAME(struct gr_abi_memory_v2, nvmlMemory_v2_t, version);
GR_ABI_SAME(struct gr_abi_memory_v2, nvmlMemory_v2_t, total);
GR_ABI_SAME(struct gr_abi_memory_v2, nvmlMemory_v2_t, reserved);
GR_ABI_SAME(struct gr_abi_memory_v2, nvmlMemory_v2_t, free);
GR_ABI_SAME(struct gr_abi_memory_v2, nvmlMemory_v2_t, used);
_Static_assert((unsigned)(sizeof(struct gr_abi_memory_v2) | (2u << 24)) == (unsigned)nvmlMemory_v2, "nvmlMemory_v2");
_Static_assert(sizeof(struct gr_abi_bar1) == sizeof(nvmlBAR1Memory_t), "nvmlBAR1Memory_t");
GR_ABI_SAME(struct gr_abi_bar1, nvmlBAR1Memory_t, bar1Total);
_Static_assert(sizeof(struct gr_abi_util) == sizeof(nvmlUtilization_t), "nvmlUtilization_t");
GR_ABI_SAME(struct gr_abi_util, nvmlUtilization_t, gpu);
GR_ABI_SAME(struct gr_abi_util, nvmlUtilization_t, memory);
_Static_assert(sizeof(union gr_abi_value) == sizeof(nvmlValue_t), "nvmlValue_t");
GR_ABI_SAME(union gr_abi_value, nvmlValue_t, dVal);
GR_ABI_SAME(union gr_abi_value, nvmlValue_t, uiVal);
GR_ABI_SAME(union gr_abi_value, nvmlValue_t, ulVal);
GR_ABI_SAME(union gr_abi_value, nvmlValue_t, ullVal);
GR_ABI_SAME(union gr_abi_value, nvmlValue_t, sllVal);
/* siVal and usVal are later additions (NVML 11.4 has neither); every NVML 13 has both */
#if NVML_API_VERSION >= 13
GR_ABI_SAME(union gr_abi_value, nvmlValue_t, siVal);
GR_ABI_SAME(union gr_abi_value, nvmlValue_t, usVal);
#endif
_Static_assert(sizeof(struct gr_abi_field_value) == sizeof(nvmlFieldValue_t), "nvmlFieldValue_t");
GR_ABI_SAME(struct gr_abi_field_value, nvmlFieldValue_t, fieldId);
GR_ABI_SAME(struct gr_abi_field_value, nvmlFieldValue_t, scopeId);
GR_ABI_SAME(struct gr_abi_field_value, nvmlFieldValue_t, timestamp);
GR_ABI_SAME(struct gr_abi_field_value, nvmlFieldValue_t, latencyUsec);
GR_ABI_SAME(struct gr_abi_field_value, nvmlFieldValue_t, valueType);
GR_ABI_SAME(struct gr_abi_field_value, nvmlFieldValue_t, nvmlReturn);
GR_ABI_SAME(struct gr_abi_field_value, nvmlFieldValue_t, value);
_Static_assert(sizeof(struct gr_abi_event_data) == sizeof(nvmlEventData_t), "nvmlEventData_t");
GR_ABI_SAME(struct gr_abi_event_data, nvmlEventData_t, device);
GR_ABI_SAME(struct gr_abi_event_data, nvmlEventData_t, eventType);
GR_ABI_SAME(struct gr_abi_event_data, nvmlEventData_t, eventData);
GR_ABI_SAME(struct gr_abi_event_data, nvmlEventData_t, gpuInstanceId);
GR_ABI_SAME(struct gr_abi_event_data, nvmlEventData_t, computeInstanceId);
_Static_assert(sizeof(struct gr_abi_process) == sizeof(nvmlProcessInfo_v2_t), "nvmlProcessInfo_v2_t");
GR_ABI_SAME(struct gr_abi_process, nvmlProcessInfo_v2_t, pid);
GR_ABI_SAME(struct gr_abi_process, nvmlProcessInfo_v2_t, usedGpuMemory);
GR_ABI_SAME(struct gr_abi_process, nvmlProcessInfo_v2_t, gpuInstanceId);
GR_ABI_SAME(struct gr_abi_process, nvmlProcessInfo_v2_t, computeInstanceId);
_Static_assert((long)(GR_NVML_ERROR_NOT_SUPPORTED) == (long)(NVML_ERROR_NOT_SUPPORTED), "not supported");
_Static_assert((long)(GR_NVML_ERROR_DRIVER_NOT_LOADED) == (long)(NVML_ERROR_DRIVER_NOT_LOADED), "driver not loaded");
_Static_assert((long)(GR_NVML_ERROR_GPU_IS_LOST) == (long)(NVML_ERROR_GPU_IS_LOST), "gpu lost");
_Static_assert((long)(GR_NVML_TEMPERATURE_THRESHOLD_SLOWDOWN) == (long)(NVML_TEMPERATURE_THRESHOLD_SLOWDOWN), "slowdown");
_Static_assert((long)(GR_NVML_TEMPERATURE_THRESHOLD_SHUTDOWN) == (long)(NVML_TEMPERATURE_THRESHOLD_SHUTDOWN), "shutdown");
_Static_assert((long)(GR_NVML_P2P_CAPS_INDEX_READ) == (long)(NVML_P2P_CAPS_INDEX_READ), "p2p read");
_Static_assert((long)(GR_NVML_P2P_CAPS_INDEX_WRITE) == (long)(NVML_P2P_CAPS_INDEX_WRITE), "p2p write");
_Static_assert((long)(GR_NVML_NVLINK_MAX_LINKS) >= (long)(NVML_NVLINK_MAX_LINKS), "nvlink links");
_Static_assert((long)(GR_NVML_NVLINK_DEVICE_TYPE_GPU) == (long)(NVML_NVLINK_DEVICE_TYPE_GPU), "nvlink gpu");
_Static_assert((long)(GR_NVML_NVLINK_DEVICE_TYPE_IBMNPU) == (long)(NVML_NVLINK_DEVICE_TYPE_IBMNPU), "nvlink npu");
_Static_assert((long)(GR_NVML_NVLINK_DEVICE_TYPE_SWITCH) == (long)(NVML_NVLINK_DEVICE_TYPE_SWITCH), "nvlink switch");
_Static_assert((long)(GR_NVML_NVLINK_DEVICE_TYPE_UNKNOWN) == (long)(NVML_NVLINK_DEVICE_TYPE_UNKNOWN), "nvlink unknown");
_Static_assert(sizeof(gr_nvml_nvlink_device_type) == sizeof(nvmlIntNvLinkDeviceType_t), "nvlink device type");
_Static_assert((long)(GR_NVML_ERROR_TIMEOUT) == (long)(NVML_ERROR_TIMEOUT), "timeout");
_Static_assert((long)(GR_NVML_CLOCK_SM) == (long)(NVML_CLOCK_SM), "clock sm");
_Static_assert((long)(GR_NVML_CLOCK_MEM) == (long)(NVML_CLOCK_MEM), "clock mem");
_Static_assert((long)(GR_NVML_PCIE_UTIL_TX_BYTES) == (long)(NVML_PCIE_UTIL_TX_BYTES), "pcie tx");
_Static_assert((long)(GR_NVML_PCIE_UTIL_RX_BYTES) == (long)(NVML_PCIE_UTIL_RX_BYTES), "pcie rx");
_Static_assert((long)(GR_NVML_MEMORY_ERROR_TYPE_CORRECTED) == (long)(NVML_MEMORY_ERROR_TYPE_CORRECTED), "corrected");
_Static_assert((long)(GR_NVML_MEMORY_ERROR_TYPE_UNCORRECTED) == (long)(NVML_MEMORY_ERROR_TYPE_UNCORRECTED), "uncorr");
_Static_assert((long)(GR_NVML_VOLATILE_ECC) == (long)(NVML_VOLATILE_ECC), "volatile ecc");
_Static_assert((long)(GR_NVML_EVENT_XID) == (long)(nvmlEventTypeXidCriticalError), "xid event");
_Static_assert((long)(GR_NVML_FI_DEV_MEMORY_TEMP) == (long)(NVML_FI_DEV_MEMORY_TEMP), "memory temp field");
_Static_assert((long)(GR_NVML_FI_DEV_NVLINK_CRC_FLIT_TOTAL) == (long)(NVML_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL), "crc flit total");
_Static_assert((long)(GR_NVML_FI_DEV_NVLINK_CRC_DATA_TOTAL) == (long)(NVML_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL), "crc data total");
_Static_assert((long)(GR_NVML_FI_DEV_NVLINK_REPLAY_TOTAL) == (long)(NVML_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL), "replay total");
_Static_assert((long)(GR_NVML_FI_DEV_NVLINK_RECOVERY_TOTAL) == (long)(NVML_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL), "recovery total");
_Static_assert((long)(GR_NVML_VALUE_TYPE_DOUBLE) == (long)(NVML_VALUE_TYPE_DOUBLE), "double");
_Static_assert((long)(GR_NVML_VALUE_TYPE_UNSIGNED_INT) == (long)(NVML_VALUE_TYPE_UNSIGNED_INT), "unsigned int");
_Static_assert((long)(GR_NVML_VALUE_TYPE_UNSIGNED_LONG) == (long)(NVML_VALUE_TYPE_UNSIGNED_LONG), "unsigned long");
_Static_assert((long)(GR_NVML_VALUE_TYPE_UNSIGNED_LONG_LONG) == (long)(NVML_VALUE_TYPE_UNSIGNED_LONG_LONG), "ull");
_Static_assert((long)(GR_NVML_VALUE_TYPE_SIGNED_LONG_LONG) == (long)(NVML_VALUE_TYPE_SIGNED_LONG_LONG), "sll");
#if NVML_API_VERSION >= 13 /* NVML_VALUE_TYPE_SIGNED_INT: with siVal */
_Static_assert((long)(GR_NVML_VALUE_TYPE_SIGNED_INT) == (long)(NVML_VALUE_TYPE_SIGNED_INT), "signed int");
#endif
/* nvmlNvlinkVersion_t is in nvml.h since 12.8 (the values are older); 6.0
 * only since 13.3, so it is not compared */
#if NVML_API_VERSION >= 13
_Static_assert((long)(GR_NVML_NVLINK_VERSION_INVALID) == (long)(NVML_NVLINK_VERSION_INVALID), "version invalid");
_Static_assert((long)(GR_NVML_NVLINK_VERSION_1_0) == (long)(NVML_NVLINK_VERSION_1_0), "version 1.0");
_Static_assert((long)(GR_NVML_NVLINK_VERSION_2_0) == (long)(NVML_NVLINK_VERSION_2_0), "version 2.0");
_Static_assert((long)(GR_NVML_NVLINK_VERSION_2_2) == (long)(NVML_NVLINK_VERSION_2_2), "version 2.2");
_Static_assert((long)(GR_NVML_NVLINK_VERSION_3_0) == (long)(NVML_NVLINK_VERSION_3_0), "version 3.0");
_Static_assert((long)(GR_NVML_NVLINK_VERSION_3_1) == (long)(NVML_NVLINK_VERSION_3_1), "version 3.1");
_Static_assert((long)(GR_NVML_NVLINK_VERSION_4_0) == (long)(NVML_NVLINK_VERSION_4_0), "version 4.0");
_Static_assert((long)(GR_NVML_NVLINK_VERSION_5_0) == (long)(NVML_NVLINK_VERSION_5_0), "version 5.0");
#endif

void gr_abi_nvml(void);
void gr_abi_nvml(void)
{
  gr_pfn_nvmlInit m01 = nvmlInit_v2;
  gr_pfn_nvmlShutdown m02 = nvmlShutdown;
  gr_pfn_nvmlErrorString m03 = nvmlErrorString;
  gr_pfn_nvmlSystemGetDriverVersion m04 = nvmlSystemGetDriverVersion;
  gr_pfn_nvmlSystemGetCudaDriverVersion m05 = nvmlSystemGetCudaDriverVersion_v2;
  gr_pfn_nvmlDeviceGetCount m06 = nvmlDeviceGetCount_v2;
  gr_pfn_nvmlDeviceGetHandleByIndex m07 = nvmlDeviceGetHandleByIndex_v2;
  gr_pfn_nvmlDeviceGetString m08 = nvmlDeviceGetName, m09 = nvmlDeviceGetUUID;
  gr_pfn_nvmlDeviceGetPciInfo m10 = nvmlDeviceGetPciInfo_v3;
  gr_pfn_nvmlDeviceGetMemoryInfo m11 = nvmlDeviceGetMemoryInfo;
  gr_pfn_nvmlDeviceGetBAR1MemoryInfo m12 = nvmlDeviceGetBAR1MemoryInfo;
  gr_pfn_nvmlDeviceGetUtilizationRates m13 = nvmlDeviceGetUtilizationRates;
  gr_pfn_nvmlDeviceGetUint m14 = nvmlDeviceGetCurrPcieLinkGeneration, m15 = nvmlDeviceGetCurrPcieLinkWidth,
                           m16 = nvmlDeviceGetMaxPcieLinkGeneration, m17 = nvmlDeviceGetMaxPcieLinkWidth,
                           m18 = nvmlDeviceGetPowerUsage, m19 = nvmlDeviceGetEnforcedPowerLimit,
                           m20 = nvmlDeviceGetPowerManagementDefaultLimit, m21 = nvmlDeviceGetNumaNodeId;
  gr_pfn_nvmlDeviceGetPersistenceMode m22 = nvmlDeviceGetPersistenceMode;
  gr_pfn_nvmlDeviceGetEccMode m23 = nvmlDeviceGetEccMode;
  gr_pfn_nvmlDeviceGetTemperature m24 = nvmlDeviceGetTemperature;
  gr_pfn_nvmlDeviceGetTemperatureThreshold m25 = nvmlDeviceGetTemperatureThreshold;
  gr_pfn_nvmlDeviceGetCudaComputeCapability m26 = nvmlDeviceGetCudaComputeCapability;
  gr_pfn_nvmlDeviceGetNvLinkState m27 = nvmlDeviceGetNvLinkState;
  gr_pfn_nvmlDeviceGetP2PStatus m28 = nvmlDeviceGetP2PStatus;
  gr_pfn_nvmlDeviceGetNvLinkVersion m29 = nvmlDeviceGetNvLinkVersion;
  gr_pfn_nvmlDeviceGetNvLinkRemotePciInfo m30 = nvmlDeviceGetNvLinkRemotePciInfo_v2;
  gr_pfn_nvmlDeviceGetNvLinkRemoteDeviceType m31 = nvmlDeviceGetNvLinkRemoteDeviceType;
  gr_pfn_nvmlDeviceGetClockInfo m32 = nvmlDeviceGetClockInfo;
  gr_pfn_nvmlDeviceGetUint m33 = nvmlDeviceGetFanSpeed, m34 = nvmlDeviceGetPcieReplayCounter;
  gr_pfn_nvmlDeviceGetPcieThroughput m35 = nvmlDeviceGetPcieThroughput;
#ifdef nvmlClocksEventReasonGpuIdle
  gr_pfn_nvmlDeviceGetClocksEventReasons m36 = nvmlDeviceGetCurrentClocksEventReasons;
#else /* before NVML 12.2: the same call under its old name, which gpurig binds there */
  gr_pfn_nvmlDeviceGetClocksEventReasons m36 = nvmlDeviceGetCurrentClocksThrottleReasons;
#endif
  gr_pfn_nvmlDeviceGetTotalEccErrors m37 = nvmlDeviceGetTotalEccErrors;
  gr_pfn_nvmlDeviceGetRemappedRows m38 = nvmlDeviceGetRemappedRows;
  gr_pfn_nvmlDeviceGetComputeRunningProcesses m39 = nvmlDeviceGetComputeRunningProcesses_v3;
  gr_pfn_nvmlDeviceGetFieldValues m40 = nvmlDeviceGetFieldValues;
  gr_pfn_nvmlEventSetCreate m41 = nvmlEventSetCreate;
  gr_pfn_nvmlDeviceRegisterEvents m42 = nvmlDeviceRegisterEvents;
  gr_pfn_nvmlEventSetWait m43 = nvmlEventSetWait_v2;
  gr_pfn_nvmlEventSetFree m44 = nvmlEventSetFree;
  gr_pfn_nvmlDeviceGetMemoryInfoV2 m45 = nvmlDeviceGetMemoryInfo_v2;
  gr_pfn_nvmlDeviceGetClockInfo m46 = nvmlDeviceGetMaxClockInfo;
  gr_pfn_nvmlDeviceGetComputeMode m47 = nvmlDeviceGetComputeMode;
  gr_pfn_nvmlDeviceGetString m48 = nvmlDeviceGetVbiosVersion;
#ifdef GR_ABI_SELFTEST
  /* deliberately wrong: a 64-bit version out, which the real call does not write */
  typedef gr_nvml_return (*wrong_version)(gr_nvml_device, unsigned int, unsigned long long *);
  wrong_version bad_nvml = nvmlDeviceGetNvLinkVersion;
  (void)bad_nvml;
#endif
  void *all[] = {m01, m02, m03, m04, m05, m06, m07, m08, m09, m10, m11, m12, m13, m14, m15, m16,
                 m17, m18, m19, m20, m21, m22, m23, m24, m25, m26, m27, m28, m29, m30, m31, m32,
                 m33, m34, m35, m36, m37, m38, m39, m40, m41, m42, m43, m44, m45, m46, m47, m48};
  (void)all;
}
#endif
