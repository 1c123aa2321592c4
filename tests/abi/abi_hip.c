/* ABI check for AMD's HIP runtime: gpurig declares the functions it calls
 * itself (src/backends/amd/hip_api.h). Compiled against the real header
 * (Debian's libamdhip64-dev: /usr/include/hip/hip_runtime_api.h, HIP 5.2),
 * this file assigns every HIP function gpurig resolves to gpurig's pointer
 * type and compares every constant, with -Werror: a prototype that does not
 * match fails, without any GPU. rocBLAS and RCCL have no header in Debian
 * 12: their declarations are held to the stand-ins' _Static_asserts only.
 *
 * GR_ABI_SELFTEST adds one deliberately wrong prototype; tests/abi/selftest.sh
 * compiles it that way too and expects the compiler to refuse it, so this
 * check cannot pass vacuously. */
#include <stddef.h>
#include <stdint.h>

#ifndef __HIP_PLATFORM_AMD__
#define __HIP_PLATFORM_AMD__ /* the header's AMD half, as hipcc sets it */
#endif
#include <hip/hip_runtime_api.h>

#include "backends/amd/hip_api.h"

#define SAME_VALUE(ours, theirs) _Static_assert((long)(ours) == (long)(theirs), #theirs)
SAME_VALUE(GR_HIP_SUCCESS, hipSuccess);
SAME_VALUE(GR_HIP_ERROR_NO_DEVICE, hipErrorNoDevice);
SAME_VALUE(GR_HIP_ERROR_PEER_ACCESS_ALREADY_ENABLED, hipErrorPeerAccessAlreadyEnabled);
SAME_VALUE(GR_HIP_MEMCPY_DEFAULT, hipMemcpyDefault);
SAME_VALUE(GR_HIP_STREAM_NON_BLOCKING, hipStreamNonBlocking);
SAME_VALUE(GR_HIP_HOST_MALLOC_PORTABLE, hipHostMallocPortable);
SAME_VALUE(GR_HIP_HOST_MALLOC_NUMA_USER, hipHostMallocNumaUser);
_Static_assert(sizeof(gr_hip_error) == sizeof(hipError_t), "hipError_t");
_Static_assert(sizeof(gr_hip_memcpy_kind) == sizeof(hipMemcpyKind), "hipMemcpyKind");
_Static_assert(_Generic((hipStream_t)0, gr_hip_stream: 1, default: 0), "hipStream_t is struct ihipStream_t *");
_Static_assert(_Generic((hipEvent_t)0, gr_hip_event: 1, default: 0), "hipEvent_t is struct ihipEvent_t *");

void gr_abi_hip(void);
void gr_abi_hip(void)
{
  gr_pfn_hipInit f01 = hipInit;
  gr_pfn_hipGetErrorString f02 = hipGetErrorString;
  gr_pfn_hipGetDeviceCount f03 = hipGetDeviceCount;
  gr_pfn_hipSetDevice f04 = hipSetDevice;
  gr_pfn_hipDeviceGetPCIBusId f05 = hipDeviceGetPCIBusId;
  gr_pfn_hipDeviceCanAccessPeer f06 = hipDeviceCanAccessPeer;
  gr_pfn_hipDeviceEnablePeerAccess f07 = hipDeviceEnablePeerAccess;
  gr_pfn_hipMemGetInfo f08 = hipMemGetInfo;
  gr_pfn_hipMalloc f09 = hipMalloc;
  gr_pfn_hipFree f10 = hipFree;
  gr_pfn_hipHostMalloc f11 = hipHostMalloc;
  gr_pfn_hipHostFree f12 = hipHostFree;
  gr_pfn_hipMemcpyAsync f13 = hipMemcpyAsync;
  gr_pfn_hipMemcpyPeerAsync f14 = hipMemcpyPeerAsync;
  gr_pfn_hipMemsetD32Async f15 = hipMemsetD32Async;
  gr_pfn_hipStreamCreateWithFlags f16 = hipStreamCreateWithFlags;
  gr_pfn_hipStreamDestroy f17 = hipStreamDestroy;
  gr_pfn_hipStreamSynchronize f18 = hipStreamSynchronize;
  gr_pfn_hipStreamWaitEvent f19 = hipStreamWaitEvent;
  gr_pfn_hipEventCreate f20 = hipEventCreate;
  gr_pfn_hipEventDestroy f21 = hipEventDestroy;
  gr_pfn_hipEventRecord f22 = hipEventRecord;
  gr_pfn_hipEventSynchronize f23 = hipEventSynchronize;
  gr_pfn_hipEventElapsedTime f24 = hipEventElapsedTime;
  gr_pfn_hipRuntimeGetVersion f25 = hipRuntimeGetVersion;
  gr_pfn_hipDriverGetVersion f26 = hipDriverGetVersion;
#ifdef GR_ABI_SELFTEST
  /* deliberately wrong: the size as a 32-bit unsigned, not size_t */
  typedef gr_hip_error (*wrong_copy)(void *, const void *, unsigned int, gr_hip_memcpy_kind, gr_hip_stream);
  wrong_copy bad = hipMemcpyAsync;
  (void)bad;
#endif
  void *all[] = {f01, f02, f03, f04, f05, f06, f07, f08, f09, f10, f11, f12,
                 f13, f14, f15, f16, f17, f18, f19, f20, f21, f22, f23, f24, f25, f26};
  (void)all;
}
