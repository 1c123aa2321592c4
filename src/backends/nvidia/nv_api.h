/* The parts of NVIDIA's NVML, CUDA driver and NCCL C APIs that gpurig uses,
 * declared here so that gpurig builds without any NVIDIA header or library:
 * the libraries are opened at run time (dl.h). Only what is called is
 * declared. Struct tags match NVIDIA's headers and result/enum types are the
 * unsigned int those enums are compatible with, so tests/abi/abi_check.c can
 * assign every real function to the pointer types below and let the compiler
 * (-Werror) catch a wrong prototype when the real headers are present.
 *
 * Sources: nvml.h (NVIDIA/go-nvml pkg/nvml/nvml.h), cuda.h and nccl.h of
 * CUDA 13 / NCCL 2.28. */
#ifndef GPURIG_NV_API_H
#define GPURIG_NV_API_H

#include <stddef.h>

#include "backends/ccl/ccl_api.h"

/* ---------------------------------------------------------------- NVML */
typedef unsigned int gr_nvml_return;       /* nvmlReturn_t */
typedef struct nvmlDevice_st *gr_nvml_device;
typedef unsigned int gr_nvml_enable_state; /* nvmlEnableState_t: 0 disabled, 1 enabled */
typedef unsigned int gr_nvml_nvlink_device_type; /* nvmlIntNvLinkDeviceType_t */
typedef unsigned int gr_nvml_compute_mode; /* nvmlComputeMode_t: 0 default, 1 exclusive thread, 2 prohibited, 3 exclusive process */
typedef struct nvmlEventSet_st *gr_nvml_event_set;

enum {
  GR_NVML_SUCCESS = 0,
  GR_NVML_ERROR_UNINITIALIZED = 1,
  GR_NVML_ERROR_NOT_SUPPORTED = 3,
  GR_NVML_ERROR_NO_PERMISSION = 4,
  GR_NVML_ERROR_INSUFFICIENT_SIZE = 7,
  GR_NVML_ERROR_NOT_FOUND = 6,
  GR_NVML_ERROR_DRIVER_NOT_LOADED = 9,
  GR_NVML_ERROR_TIMEOUT = 10,
  GR_NVML_ERROR_FUNCTION_NOT_FOUND = 13,
  GR_NVML_ERROR_GPU_IS_LOST = 15,
  GR_NVML_TEMPERATURE_GPU = 0,
  GR_NVML_TEMPERATURE_THRESHOLD_SHUTDOWN = 0,
  GR_NVML_TEMPERATURE_THRESHOLD_SLOWDOWN = 1,
  GR_NVML_P2P_CAPS_INDEX_READ = 0,
  GR_NVML_P2P_CAPS_INDEX_WRITE = 1,
  GR_NVML_NVLINK_MAX_LINKS = 36, /* NVML_NVLINK_MAX_LINKS since CUDA 13.3 (18 from 11.8 to 13.2, 12 before);
                                  * a driver answers INVALID_ARGUMENT past its own maximum */
  /* nvmlIntNvLinkDeviceType_t: what sits at the far end of a link */
  GR_NVML_NVLINK_DEVICE_TYPE_GPU = 0x00,
  GR_NVML_NVLINK_DEVICE_TYPE_IBMNPU = 0x01,
  GR_NVML_NVLINK_DEVICE_TYPE_SWITCH = 0x02,
  GR_NVML_NVLINK_DEVICE_TYPE_UNKNOWN = 0xFF,
  /* nvmlNvlinkVersion_t: nvmlDeviceGetNvLinkVersion answers one of these,
   * not the NVLink generation (an A100 answers 5, "3.1"); the enum is in
   * nvml.h since NVML 12.8, drivers answered the same values before */
  GR_NVML_NVLINK_VERSION_INVALID = 0,
  GR_NVML_NVLINK_VERSION_1_0 = 1,
  GR_NVML_NVLINK_VERSION_2_0 = 2,
  GR_NVML_NVLINK_VERSION_2_2 = 3,
  GR_NVML_NVLINK_VERSION_3_0 = 4,
  GR_NVML_NVLINK_VERSION_3_1 = 5,
  GR_NVML_NVLINK_VERSION_4_0 = 6,
  GR_NVML_NVLINK_VERSION_5_0 = 7,
  GR_NVML_NVLINK_VERSION_6_0 = 8,
  GR_NVML_CLOCK_SM = 1,
  GR_NVML_CLOCK_MEM = 2,
  GR_NVML_PCIE_UTIL_TX_BYTES = 0,
  GR_NVML_PCIE_UTIL_RX_BYTES = 1,
  GR_NVML_MEMORY_ERROR_TYPE_CORRECTED = 0,
  GR_NVML_MEMORY_ERROR_TYPE_UNCORRECTED = 1,
  GR_NVML_VOLATILE_ECC = 0,
  GR_NVML_FI_DEV_NVLINK_CRC_FLIT_TOTAL = 38,  /* NVML_FI_DEV_NVLINK_*_COUNT_TOTAL: over all links */
  GR_NVML_FI_DEV_NVLINK_CRC_DATA_TOTAL = 45,
  GR_NVML_FI_DEV_NVLINK_REPLAY_TOTAL = 52,
  GR_NVML_FI_DEV_NVLINK_RECOVERY_TOTAL = 59,
  GR_NVML_EVENT_XID = 0x8,             /* nvmlEventTypeXidCriticalError */
  GR_NVML_FI_DEV_MEMORY_TEMP = 82,      /* NVML_FI_DEV_MEMORY_TEMP: HBM/GDDR temperature, C */
  GR_NVML_VALUE_TYPE_DOUBLE = 0,        /* nvmlValueType_t */
  GR_NVML_VALUE_TYPE_UNSIGNED_INT = 1,
  GR_NVML_VALUE_TYPE_UNSIGNED_LONG = 2,
  GR_NVML_VALUE_TYPE_UNSIGNED_LONG_LONG = 3,
  GR_NVML_VALUE_TYPE_SIGNED_LONG_LONG = 4,
  GR_NVML_VALUE_TYPE_SIGNED_INT = 5,
  GR_NVML_BUFFER = 96, /* names, UUIDs, driver versions all fit (NVML_DEVICE_NAME_V2_BUFFER_SIZE) */
};

/* NVML's structs under NVIDIA's tags, their members written once: the ABI
 * check (tests/abi) includes nvml.h, which defines the same tags, so there
 * GR_NV_API_NVIDIA_STRUCTS leaves the definitions out and it compares a
 * copy of the members under its own tag with NVIDIA's layout. */
#define GR_NVML_PCI_INFO_MEMBERS                                                                                       \
  char busIdLegacy[16];                                                                                                \
  unsigned int domain, bus, device;                                                                                    \
  unsigned int pciDeviceId; /* device id << 16 | vendor id */                                                          \
  unsigned int pciSubSystemId;                                                                                         \
  char busId[32];
#define GR_NVML_MEMORY_MEMBERS unsigned long long total, free, used;
/* nvmlMemory_v2_t: the driver's reserve apart from what programs use (the
 * v1 call counts the reserve as used: 615 MiB "used" on an idle H200 whose
 * nvidia-smi says 0) */
#define GR_NVML_MEMORY_V2_MEMBERS                                                                                      \
  unsigned int version;                                                                                                \
  unsigned long long total, reserved, free, used;
#define GR_NVML_BAR1_MEMBERS unsigned long long bar1Total, bar1Free, bar1Used;
#define GR_NVML_UTILIZATION_MEMBERS unsigned int gpu, memory;
#define GR_NVML_VALUE_MEMBERS                                                                                          \
  double dVal;                                                                                                         \
  int siVal;                                                                                                           \
  unsigned int uiVal;                                                                                                  \
  unsigned long ulVal;                                                                                                 \
  unsigned long long ullVal;                                                                                           \
  signed long long sllVal;                                                                                             \
  unsigned short usVal;
#define GR_NVML_FIELD_VALUE_MEMBERS                                                                                    \
  unsigned int fieldId, scopeId;                                                                                       \
  long long timestamp, latencyUsec;                                                                                    \
  unsigned int valueType;  /* nvmlValueType_t */                                                                       \
  gr_nvml_return nvmlReturn;                                                                                           \
  union nvmlValue_st value;
#define GR_NVML_PROCESS_INFO_MEMBERS /* nvmlProcessInfo_v2_t: _v2 (NVML 11) and _v3 (12 on) fill it */         \
  unsigned int pid;                                                                                                    \
  unsigned long long usedGpuMemory;                                                                                    \
  unsigned int gpuInstanceId, computeInstanceId;
#define GR_NVML_EVENT_DATA_MEMBERS                                                                                     \
  gr_nvml_device device;                                                                                               \
  unsigned long long eventType, eventData; /* eventData: the Xid */                                                    \
  unsigned int gpuInstanceId, computeInstanceId;

struct nvmlPciInfo_st;
struct nvmlMemory_st;
struct nvmlMemory_v2_st;
struct nvmlBAR1Memory_st;
struct nvmlUtilization_st;
union nvmlValue_st;
struct nvmlFieldValue_st;
struct nvmlEventData_st;
struct nvmlProcessInfo_v2_st;
#ifndef GR_NV_API_NVIDIA_STRUCTS
struct nvmlPciInfo_st {
  GR_NVML_PCI_INFO_MEMBERS
};
struct nvmlMemory_st {
  GR_NVML_MEMORY_MEMBERS
};
struct nvmlMemory_v2_st {
  GR_NVML_MEMORY_V2_MEMBERS
};
struct nvmlBAR1Memory_st {
  GR_NVML_BAR1_MEMBERS
};
struct nvmlUtilization_st {
  GR_NVML_UTILIZATION_MEMBERS
};
union nvmlValue_st {
  GR_NVML_VALUE_MEMBERS
};
struct nvmlFieldValue_st {
  GR_NVML_FIELD_VALUE_MEMBERS
};
struct nvmlEventData_st {
  GR_NVML_EVENT_DATA_MEMBERS
};
struct nvmlProcessInfo_v2_st {
  GR_NVML_PROCESS_INFO_MEMBERS
};
#endif

typedef gr_nvml_return (*gr_pfn_nvmlInit)(void);
typedef gr_nvml_return (*gr_pfn_nvmlShutdown)(void);
typedef const char *(*gr_pfn_nvmlErrorString)(gr_nvml_return);
typedef gr_nvml_return (*gr_pfn_nvmlSystemGetDriverVersion)(char *, unsigned int);
typedef gr_nvml_return (*gr_pfn_nvmlSystemGetCudaDriverVersion)(int *);
typedef gr_nvml_return (*gr_pfn_nvmlDeviceGetCount)(unsigned int *);
typedef gr_nvml_return (*gr_pfn_nvmlDeviceGetHandleByIndex)(unsigned int, gr_nvml_device *);
typedef gr_nvml_return (*gr_pfn_nvmlDeviceGetString)(gr_nvml_device, char *, unsigned int); /* Name, UUID */
typedef gr_nvml_return (*gr_pfn_nvmlDeviceGetPciInfo)(gr_nvml_device, struct nvmlPciInfo_st *);
typedef gr_nvml_return (*gr_pfn_nvmlDeviceGetMemoryInfo)(gr_nvml_device, struct nvmlMemory_st *);
/* _v2: version must be NVML_STRUCT_VERSION(Memory, 2), the struct's size | 2 << 24 */
#define GR_NVML_MEMORY_V2_VERSION ((unsigned int)(sizeof(struct nvmlMemory_v2_st) | (2u << 24)))
typedef gr_nvml_return (*gr_pfn_nvmlDeviceGetMemoryInfoV2)(gr_nvml_device, struct nvmlMemory_v2_st *);
typedef gr_nvml_return (*gr_pfn_nvmlDeviceGetBAR1MemoryInfo)(gr_nvml_device, struct nvmlBAR1Memory_st *);
typedef gr_nvml_return (*gr_pfn_nvmlDeviceGetUtilizationRates)(gr_nvml_device, struct nvmlUtilization_st *);
/* PCIe link gen/width, power (mW), default limit, NUMA node: one unsigned out */
typedef gr_nvml_return (*gr_pfn_nvmlDeviceGetUint)(gr_nvml_device, unsigned int *);
typedef gr_nvml_return (*gr_pfn_nvmlDeviceGetPersistenceMode)(gr_nvml_device, gr_nvml_enable_state *);
typedef gr_nvml_return (*gr_pfn_nvmlDeviceGetEccMode)(gr_nvml_device, gr_nvml_enable_state *, gr_nvml_enable_state *);
typedef gr_nvml_return (*gr_pfn_nvmlDeviceGetTemperature)(gr_nvml_device, unsigned int, unsigned int *);
typedef gr_nvml_return (*gr_pfn_nvmlDeviceGetTemperatureThreshold)(gr_nvml_device, unsigned int, unsigned int *);
typedef gr_nvml_return (*gr_pfn_nvmlDeviceGetCudaComputeCapability)(gr_nvml_device, int *, int *);
typedef gr_nvml_return (*gr_pfn_nvmlDeviceGetNvLinkState)(gr_nvml_device, unsigned int, gr_nvml_enable_state *);
/* NVLink per link: version (nvmlNvlinkVersion_t), the far end's PCI
 * address (_v2: the 32-byte busId layout above; the unversioned call used
 * NVML 8's shorter struct and is never bound) and its kind */
typedef gr_nvml_return (*gr_pfn_nvmlDeviceGetNvLinkVersion)(gr_nvml_device, unsigned int, unsigned int *);
typedef gr_nvml_return (*gr_pfn_nvmlDeviceGetNvLinkRemotePciInfo)(gr_nvml_device, unsigned int,
                                                                  struct nvmlPciInfo_st *);
typedef gr_nvml_return (*gr_pfn_nvmlDeviceGetNvLinkRemoteDeviceType)(gr_nvml_device, unsigned int,
                                                                     gr_nvml_nvlink_device_type *);
typedef gr_nvml_return (*gr_pfn_nvmlDeviceGetP2PStatus)(gr_nvml_device, gr_nvml_device, unsigned int, unsigned int *);

/* The sampler's reads (gpurig watch/export). Clocks: nvmlClockType_t
 * (SM 1, memory 2), MHz. PCIe throughput: nvmlPcieUtilCounter_t (TX 0,
 * RX 1), KB/s over the driver's 20 ms window. ECC totals:
 * nvmlMemoryErrorType_t (corrected 0, uncorrected 1) x nvmlEccCounterType_t
 * (volatile 0). Clock-event (throttle) reasons: a bit set, the same bits
 * under both names (nvmlClocksEventReason* since 12.2, ...Throttle... before). */
typedef gr_nvml_return (*gr_pfn_nvmlDeviceGetClockInfo)(gr_nvml_device, unsigned int, unsigned int *); /* and MaxClockInfo */
typedef gr_nvml_return (*gr_pfn_nvmlDeviceGetComputeMode)(gr_nvml_device, gr_nvml_compute_mode *);
typedef gr_nvml_return (*gr_pfn_nvmlDeviceGetPcieThroughput)(gr_nvml_device, unsigned int, unsigned int *);
typedef gr_nvml_return (*gr_pfn_nvmlDeviceGetClocksEventReasons)(gr_nvml_device, unsigned long long *);
typedef gr_nvml_return (*gr_pfn_nvmlDeviceGetTotalEccErrors)(gr_nvml_device, unsigned int, unsigned int,
                                                            unsigned long long *);
typedef gr_nvml_return (*gr_pfn_nvmlDeviceGetRemappedRows)(gr_nvml_device, unsigned int *, unsigned int *,
                                                          unsigned int *, unsigned int *);
typedef gr_nvml_return (*gr_pfn_nvmlDeviceGetFieldValues)(gr_nvml_device, int, struct nvmlFieldValue_st *);
/* Xid events: an event set, registered per GPU for XidCriticalError (0x8),
 * waited on with a timeout (NVML_ERROR_TIMEOUT when nothing came). */
typedef gr_nvml_return (*gr_pfn_nvmlEventSetCreate)(gr_nvml_event_set *);
typedef gr_nvml_return (*gr_pfn_nvmlDeviceRegisterEvents)(gr_nvml_device, unsigned long long, gr_nvml_event_set);
typedef gr_nvml_return (*gr_pfn_nvmlEventSetWait)(gr_nvml_event_set, struct nvmlEventData_st *, unsigned int);
typedef gr_nvml_return (*gr_pfn_nvmlEventSetFree)(gr_nvml_event_set);
/* The compute processes on a GPU (burn refuses a GPU in use): count in/out;
 * NVML_ERROR_INSUFFICIENT_SIZE (7) when more than the array holds. */
typedef gr_nvml_return (*gr_pfn_nvmlDeviceGetComputeRunningProcesses)(gr_nvml_device, unsigned int *,
                                                                     struct nvmlProcessInfo_v2_st *);

/* ---------------------------------------------------------- CUDA driver */
typedef unsigned int gr_cu_result;                 /* CUresult */
typedef int gr_cu_device;                          /* CUdevice */
typedef unsigned long long gr_cu_deviceptr;        /* CUdeviceptr (v2) */
typedef struct CUctx_st *gr_cu_context;
typedef struct CUstream_st *gr_cu_stream;
typedef struct CUevent_st *gr_cu_event;
typedef struct CUmod_st *gr_cu_module;
typedef struct CUfunc_st *gr_cu_function;

enum {
  GR_CUDA_SUCCESS = 0,
  GR_CUDA_ERROR_NO_DEVICE = 100,
  GR_CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED = 704,
  GR_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
  GR_CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING = 41,
  GR_CU_MEMHOSTALLOC_PORTABLE = 0x01,
  GR_CU_MEMHOSTALLOC_DEVICEMAP = 0x02,
  GR_CU_MEMHOSTREGISTER_PORTABLE = 0x01,
  GR_CU_MEMHOSTREGISTER_DEVICEMAP = 0x02,
  GR_CU_STREAM_NON_BLOCKING = 0x1,
  GR_CU_EVENT_DEFAULT = 0x0,
};

typedef gr_cu_result (*gr_pfn_cuInit)(unsigned int);
typedef gr_cu_result (*gr_pfn_cuDriverGetVersion)(int *);
typedef gr_cu_result (*gr_pfn_cuGetErrorString)(gr_cu_result, const char **);
typedef gr_cu_result (*gr_pfn_cuDeviceGetCount)(int *);
typedef gr_cu_result (*gr_pfn_cuDeviceGet)(gr_cu_device *, int);
typedef gr_cu_result (*gr_pfn_cuDeviceGetName)(char *, int, gr_cu_device);
typedef gr_cu_result (*gr_pfn_cuDeviceGetPCIBusId)(char *, int, gr_cu_device);
typedef gr_cu_result (*gr_pfn_cuDeviceGetAttribute)(int *, unsigned int, gr_cu_device);
typedef gr_cu_result (*gr_pfn_cuDeviceCanAccessPeer)(int *, gr_cu_device, gr_cu_device);
typedef gr_cu_result (*gr_pfn_cuDevicePrimaryCtxRetain)(gr_cu_context *, gr_cu_device);
typedef gr_cu_result (*gr_pfn_cuDevicePrimaryCtxRelease)(gr_cu_device);
typedef gr_cu_result (*gr_pfn_cuCtxSetCurrent)(gr_cu_context);
typedef gr_cu_result (*gr_pfn_cuCtxEnablePeerAccess)(gr_cu_context, unsigned int);
typedef gr_cu_result (*gr_pfn_cuMemGetInfo)(size_t *, size_t *);
typedef gr_cu_result (*gr_pfn_cuMemAlloc)(gr_cu_deviceptr *, size_t);
typedef gr_cu_result (*gr_pfn_cuMemFree)(gr_cu_deviceptr);
typedef gr_cu_result (*gr_pfn_cuMemHostAlloc)(void **, size_t, unsigned int);
typedef gr_cu_result (*gr_pfn_cuMemFreeHost)(void *);
typedef gr_cu_result (*gr_pfn_cuMemHostRegister)(void *, size_t, unsigned int);
typedef gr_cu_result (*gr_pfn_cuMemHostUnregister)(void *);
typedef gr_cu_result (*gr_pfn_cuMemHostGetDevicePointer)(gr_cu_deviceptr *, void *, unsigned int);
typedef gr_cu_result (*gr_pfn_cuMemcpyAsync)(gr_cu_deviceptr, gr_cu_deviceptr, size_t, gr_cu_stream);
typedef gr_cu_result (*gr_pfn_cuMemcpyPeerAsync)(gr_cu_deviceptr, gr_cu_context, gr_cu_deviceptr, gr_cu_context,
                                                 size_t, gr_cu_stream);
typedef gr_cu_result (*gr_pfn_cuMemsetD32Async)(gr_cu_deviceptr, unsigned int, size_t, gr_cu_stream);
typedef gr_cu_result (*gr_pfn_cuStreamCreate)(gr_cu_stream *, unsigned int);
typedef gr_cu_result (*gr_pfn_cuStreamDestroy)(gr_cu_stream);
typedef gr_cu_result (*gr_pfn_cuStreamSynchronize)(gr_cu_stream);
typedef gr_cu_result (*gr_pfn_cuStreamWaitEvent)(gr_cu_stream, gr_cu_event, unsigned int);
typedef gr_cu_result (*gr_pfn_cuEventCreate)(gr_cu_event *, unsigned int);
typedef gr_cu_result (*gr_pfn_cuEventDestroy)(gr_cu_event);
typedef gr_cu_result (*gr_pfn_cuEventRecord)(gr_cu_event, gr_cu_stream);
typedef gr_cu_result (*gr_pfn_cuEventSynchronize)(gr_cu_event);
typedef gr_cu_result (*gr_pfn_cuEventElapsedTime)(float *, gr_cu_event, gr_cu_event);
typedef gr_cu_result (*gr_pfn_cuModuleLoadData)(gr_cu_module *, const void *);
typedef gr_cu_result (*gr_pfn_cuModuleUnload)(gr_cu_module);
typedef gr_cu_result (*gr_pfn_cuModuleGetFunction)(gr_cu_function *, gr_cu_module, const char *);
typedef gr_cu_result (*gr_pfn_cuLaunchKernel)(gr_cu_function, unsigned int, unsigned int, unsigned int, unsigned int,
                                              unsigned int, unsigned int, unsigned int, gr_cu_stream, void **, void **);

/* --------------------------------------------------------------- cuBLAS */
/* burn-in's GEMM load: a handle per GPU (made with that GPU's context
 * current), bound to a stream, and cublasGemmEx. The enums are C enums:
 * cublasStatus_t, cublasOperation_t, cudaDataType and cublasComputeType_t
 * have no negative values (unsigned int), cublasGemmAlgo_t has
 * CUBLAS_GEMM_DEFAULT = -1 (int). */
typedef struct cublasContext *gr_cublas_handle;
typedef unsigned int gr_cublas_status;
enum {
  GR_CUBLAS_STATUS_SUCCESS = 0,
  GR_CUBLAS_OP_N = 0,
  GR_CUDA_R_32F = 0,
  GR_CUDA_R_16F = 2,
  GR_CUBLAS_COMPUTE_32F = 68,
  GR_CUBLAS_GEMM_DEFAULT = -1,
};
typedef gr_cublas_status (*gr_pfn_cublasCreate)(gr_cublas_handle *);
typedef gr_cublas_status (*gr_pfn_cublasDestroy)(gr_cublas_handle);
typedef gr_cublas_status (*gr_pfn_cublasSetStream)(gr_cublas_handle, gr_cu_stream);
typedef gr_cublas_status (*gr_pfn_cublasGemmEx)(gr_cublas_handle, unsigned int transa, unsigned int transb, int m,
                                                int n, int k, const void *alpha, const void *A, unsigned int Atype,
                                                int lda, const void *B, unsigned int Btype, int ldb, const void *beta,
                                                void *C, unsigned int Ctype, int ldc, unsigned int computeType,
                                                int algo);

/* ----------------------------------------------------------------- NCCL */
/* Everything but ncclAllReduce, whose stream is CUDA's, is in ccl_api.h,
 * shared with RCCL. */
typedef gr_nccl_result (*gr_pfn_ncclAllReduce)(const void *, void *, size_t, unsigned int, unsigned int, gr_nccl_comm,
                                               gr_cu_stream);

#endif
