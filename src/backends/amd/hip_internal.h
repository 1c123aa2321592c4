/* What the HIP backend's files share (hip_bench.c: loading, devices,
 * lifecycle; hip_copy.c, hip_gemm.c, hip_rccl.c): the state, the HIP()
 * error macro and the helpers one file calls in another. Only they include
 * it. */
#ifndef GR_BACKENDS_AMD_HIP_INTERNAL_H
#define GR_BACKENDS_AMD_HIP_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backends/amd/amd.h"
#include "backends/amd/hip_api.h"
#include "backends/ccl/ccl.h"

struct hip_fns {
  gr_pfn_hipInit Init;
  gr_pfn_hipGetErrorString GetErrorString;
  gr_pfn_hipGetDeviceCount GetDeviceCount;
  gr_pfn_hipSetDevice SetDevice;
  gr_pfn_hipDeviceGetPCIBusId DeviceGetPCIBusId;
  gr_pfn_hipDeviceCanAccessPeer DeviceCanAccessPeer;
  gr_pfn_hipDeviceEnablePeerAccess DeviceEnablePeerAccess;
  gr_pfn_hipMemGetInfo MemGetInfo;
  gr_pfn_hipMalloc Malloc;
  gr_pfn_hipFree Free;
  gr_pfn_hipHostMalloc HostMalloc;
  gr_pfn_hipHostFree HostFree;
  gr_pfn_hipMemcpyAsync MemcpyAsync;
  gr_pfn_hipMemcpyPeerAsync MemcpyPeerAsync;
  gr_pfn_hipMemsetD32Async MemsetD32Async;
  gr_pfn_hipStreamCreateWithFlags StreamCreateWithFlags;
  gr_pfn_hipStreamDestroy StreamDestroy;
  gr_pfn_hipStreamSynchronize StreamSynchronize;
  gr_pfn_hipStreamWaitEvent StreamWaitEvent;
  gr_pfn_hipEventCreate EventCreate;
  gr_pfn_hipEventDestroy EventDestroy;
  gr_pfn_hipEventRecord EventRecord;
  gr_pfn_hipEventSynchronize EventSynchronize;
  gr_pfn_hipEventElapsedTime EventElapsedTime;
};

struct hipdev {
  bool lost;
  int numa;                 /* its pinned buffers' NUMA node, -1 the kernel's choice */
  gr_hip_stream s[2];
  gr_hip_event ev[4];       /* start/end of direction 0, start/end of direction 1 */
  void *buf[2];             /* copy source (pattern) and destination, in the GPU's memory */
  void *host[2];            /* the same pinned on the host, on the GPU's NUMA node */
  size_t buf_bytes;
  bool *peer_on;            /* peer access to GPU j enabled from this GPU */
  gr_rocblas_handle blas;   /* the GEMM load's */
  void *ga, *gb, *gc;       /* its n x n inputs (fp16) and product (fp32) */
};

struct hip {
  void *lib;
  struct hip_fns f;
  char err[512];
  int n;
  struct hipdev *d;
  uint32_t *check;          /* pinned host memory: a GPU destination is read back here and compared */
  size_t check_bytes;
  struct gr_ccl ccl;        /* the all-reduce over RCCL (hip_rccl.c) */
  void *blas_lib;
  gr_pfn_rocblas_create_handle BlasCreate;
  gr_pfn_rocblas_destroy_handle BlasDestroy;
  gr_pfn_rocblas_set_stream BlasSetStream;
  gr_pfn_rocblas_gemm_ex GemmEx;
  int gemm_n;
  float *gemm_expect;       /* the product's first column, computed on the host */
};

#define HIP(call, what, dev)                                                                                          \
  do {                                                                                                                \
    gr_hip_error r_ = (call);                                                                                         \
    if (r_ != GR_HIP_SUCCESS) {                                                                                       \
      rc = hip_fail(h, r_, what, dev);                                                                                \
      goto out;                                                                                                       \
    }                                                                                                                 \
  } while (0)

/* hip_bench.c */
int hip_fail(struct hip *h, gr_hip_error r, const char *what, int dev);
int hip_use(struct hip *h, int dev);
uint32_t hip_pattern_word(unsigned tag, size_t i);
unsigned hip_buf_tag(int dev, bool host);
int hip_ensure_buffers(struct hip *h, int dev, size_t bytes);
int hip_ensure_check(struct hip *h, size_t bytes);
bool hip_can_peer(void *state, int a, int b);
void hip_probe_lost(struct hip *h, int dev);

/* hip_copy.c */
int hip_copy(void *state, const struct gr_copy_spec *s, struct gr_copy_sample *out);
int hip_copy_many(void *state, const struct gr_copy_spec *specs, int n, struct gr_copy_sample *out);

/* hip_gemm.c */
int hip_gemm_open(void *state, int n, char *why, size_t cap);
int hip_gemm(void *state, const int *devs, int ndev, int iters, struct gr_gemm_sample *out);
void hip_gemm_close(struct hip *h);

/* hip_rccl.c: the all-reduce, backends/ccl/ccl.c on HIP */
void hip_ccl_init(struct hip *h); /* once h->n is known */
int hip_transports(void *state, char *buf, size_t cap);
int hip_allreduce_open(void *state, size_t max_bytes, char *why, size_t cap);
int hip_unique_id(void *state, void *id, char *why, size_t cap);
int hip_allreduce_open_ranks(void *state, size_t max_bytes, const void *id, int nranks, int first_rank,
                             const int *devs, int ndev, char *why, size_t cap);
int hip_allreduce(void *state, const struct gr_ar_spec *spec, struct gr_ar_sample *out);
const char *hip_collective_name(void *state);

#endif
