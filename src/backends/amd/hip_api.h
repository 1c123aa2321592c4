/* The parts of AMD's HIP runtime, rocBLAS and RCCL C APIs that gpurig's
 * measurement backend uses (hip_bench.c), declared here so that gpurig
 * builds without any ROCm header or library: the libraries are opened at
 * run time (base/dl.h). Only what is called is declared. Struct tags match
 * AMD's headers and the result/enum types are the unsigned int those enums
 * are compatible with (none has a negative value), so tests/abi/abi_hip.c
 * can assign every real HIP function to the pointer types below and let the
 * compiler (-Werror) catch a wrong prototype where the real headers are
 * present (Debian's libamdhip64-dev).
 *
 * Sources: hip_runtime_api.h and driver_types.h of HIP 5.2 (Debian
 * bookworm) and 6.x (the same prototypes); rocblas-functions.h and
 * rocblas-types.h of rocBLAS 2.x to 4.x (rocblas_gemm_ex has kept its
 * prototype); rccl.h (NCCL's names and values, backends/ccl/ccl_api.h). */
#ifndef GPURIG_HIP_API_H
#define GPURIG_HIP_API_H

#include <stddef.h>
#include <stdint.h>

#include "backends/ccl/ccl_api.h"

/* ------------------------------------------------------------------ HIP */
typedef unsigned int gr_hip_error;  /* hipError_t */
typedef unsigned int gr_hip_memcpy_kind; /* hipMemcpyKind */
typedef struct ihipStream_t *gr_hip_stream;
typedef struct ihipEvent_t *gr_hip_event;

enum {
  GR_HIP_SUCCESS = 0,
  GR_HIP_ERROR_NO_DEVICE = 100,
  GR_HIP_ERROR_PEER_ACCESS_ALREADY_ENABLED = 704,
  GR_HIP_MEMCPY_DEFAULT = 4,          /* the runtime tells host from device by the address (unified) */
  GR_HIP_STREAM_NON_BLOCKING = 0x01,
  GR_HIP_HOST_MALLOC_PORTABLE = 0x1,
  GR_HIP_HOST_MALLOC_NUMA_USER = 0x20000000, /* placed by the calling thread's NUMA policy, not HIP's choice */
};

typedef gr_hip_error (*gr_pfn_hipInit)(unsigned int);
typedef const char *(*gr_pfn_hipGetErrorString)(gr_hip_error);
typedef gr_hip_error (*gr_pfn_hipGetDeviceCount)(int *);
typedef gr_hip_error (*gr_pfn_hipSetDevice)(int);
typedef gr_hip_error (*gr_pfn_hipDeviceGetPCIBusId)(char *, int, int);
typedef gr_hip_error (*gr_pfn_hipDeviceCanAccessPeer)(int *, int, int);
typedef gr_hip_error (*gr_pfn_hipDeviceEnablePeerAccess)(int, unsigned int);
typedef gr_hip_error (*gr_pfn_hipMemGetInfo)(size_t *, size_t *);
typedef gr_hip_error (*gr_pfn_hipMalloc)(void **, size_t);
typedef gr_hip_error (*gr_pfn_hipFree)(void *);
typedef gr_hip_error (*gr_pfn_hipHostMalloc)(void **, size_t, unsigned int);
typedef gr_hip_error (*gr_pfn_hipHostFree)(void *);
typedef gr_hip_error (*gr_pfn_hipMemcpyAsync)(void *, const void *, size_t, gr_hip_memcpy_kind, gr_hip_stream);
typedef gr_hip_error (*gr_pfn_hipMemcpyPeerAsync)(void *, int, const void *, int, size_t, gr_hip_stream);
typedef gr_hip_error (*gr_pfn_hipMemsetD32Async)(void *, int, size_t, gr_hip_stream); /* hipDeviceptr_t is void * */
typedef gr_hip_error (*gr_pfn_hipStreamCreateWithFlags)(gr_hip_stream *, unsigned int);
typedef gr_hip_error (*gr_pfn_hipStreamDestroy)(gr_hip_stream);
typedef gr_hip_error (*gr_pfn_hipStreamSynchronize)(gr_hip_stream);
typedef gr_hip_error (*gr_pfn_hipStreamWaitEvent)(gr_hip_stream, gr_hip_event, unsigned int);
typedef gr_hip_error (*gr_pfn_hipEventCreate)(gr_hip_event *);
typedef gr_hip_error (*gr_pfn_hipEventDestroy)(gr_hip_event);
typedef gr_hip_error (*gr_pfn_hipEventRecord)(gr_hip_event, gr_hip_stream);
typedef gr_hip_error (*gr_pfn_hipEventSynchronize)(gr_hip_event);
typedef gr_hip_error (*gr_pfn_hipEventElapsedTime)(float *, gr_hip_event, gr_hip_event);
/* doctor's inventory (hip_bench.c hip_versions). On AMD both give
 * HIP_VERSION, major * 10000000 + minor * 100000 + patch (hip_version.h;
 * AMD's clr hipamd/src/hip_context.cpp sets *driverVersion = HIP_VERSION),
 * and neither needs a GPU: Debian's HIP 5.2 answers 50221153 on a machine
 * without one. */
typedef gr_hip_error (*gr_pfn_hipRuntimeGetVersion)(int *);
typedef gr_hip_error (*gr_pfn_hipDriverGetVersion)(int *);

/* -------------------------------------------------------------- rocBLAS */
/* burn-in's GEMM load. rocBLAS, not hipBLAS: hipblasGemmEx changed its
 * type arguments (hipblasDatatype_t to hipDataType and
 * hipblasComputeType_t) between ROCm 6 and 7 under the same symbol, where
 * rocblas_gemm_ex kept its prototype; hipBLAS calls rocBLAS on AMD GPUs
 * anyway. The enums are C enums without negative values. */
typedef struct _rocblas_handle *gr_rocblas_handle;
typedef unsigned int gr_rocblas_status;
enum {
  GR_ROCBLAS_STATUS_SUCCESS = 0,
  GR_ROCBLAS_OPERATION_NONE = 111,
  GR_ROCBLAS_DATATYPE_F16_R = 150,
  GR_ROCBLAS_DATATYPE_F32_R = 151,
  GR_ROCBLAS_GEMM_ALGO_STANDARD = 0,
};
typedef gr_rocblas_status (*gr_pfn_rocblas_create_handle)(gr_rocblas_handle *);
typedef gr_rocblas_status (*gr_pfn_rocblas_destroy_handle)(gr_rocblas_handle);
typedef gr_rocblas_status (*gr_pfn_rocblas_set_stream)(gr_rocblas_handle, gr_hip_stream);
/* D = alpha A B + beta C; C and D may be the same buffer */
typedef gr_rocblas_status (*gr_pfn_rocblas_gemm_ex)(gr_rocblas_handle, unsigned int trans_a, unsigned int trans_b,
                                                    int32_t m, int32_t n, int32_t k, const void *alpha, const void *a,
                                                    unsigned int a_type, int32_t lda, const void *b,
                                                    unsigned int b_type, int32_t ldb, const void *beta, const void *c,
                                                    unsigned int c_type, int32_t ldc, void *d, unsigned int d_type,
                                                    int32_t ldd, unsigned int compute_type, unsigned int algo,
                                                    int32_t solution_index, uint32_t flags);

/* ----------------------------------------------------------------- RCCL */
/* NCCL's API under the same names (ccl_api.h); only ncclAllReduce's stream
 * is HIP's. */
typedef gr_nccl_result (*gr_pfn_rcclAllReduce)(const void *, void *, size_t, unsigned int, unsigned int, gr_nccl_comm,
                                               gr_hip_stream);

#endif
