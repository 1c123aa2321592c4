/* What the CUDA backend's files share (cuda_bench.c: loading, devices,
 * lifecycle; cuda_copy.c, cuda_gemm.c, cuda_nccl.c): the state, the CU()
 * error macro and the helpers one file calls in another. Only they include
 * it. */
#ifndef GR_BACKENDS_NVIDIA_CUDA_INTERNAL_H
#define GR_BACKENDS_NVIDIA_CUDA_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backends/ccl/ccl.h"
#include "backends/nvidia/nvidia.h"
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
  gr_cublas_handle blas;      /* the GEMM load's, made with this context current */
  gr_cu_deviceptr ga, gb, gc; /* its n x n inputs (fp16) and product (fp32) */
};

struct cuda {
  void *lib;
  struct cu_fns f;
  char err[512];
  int n;
  struct cudev *d;
  int *flag;                /* the spin kernels' release flag, then a timeout word per leg; pinned, mapped */
  gr_cu_deviceptr flag_dptr;
  uint64_t *res;            /* 4 words, pinned: what the compare and chase kernels send back */
  unsigned long long chase_calls; /* where the next chase run starts along its chain */
  uint32_t *check;          /* host scratch to read device buffers back */
  size_t check_bytes;
  struct gr_ccl ccl;        /* the all-reduce over NCCL (cuda_nccl.c) */
  void *blas_lib;
  gr_pfn_cublasCreate BlasCreate;
  gr_pfn_cublasDestroy BlasDestroy;
  gr_pfn_cublasSetStream BlasSetStream;
  gr_pfn_cublasGemmEx GemmEx;
  int gemm_n;
  float *gemm_expect;         /* the product's first column, computed on the host */
};

#define CU(call, what, dev)                                                                                   \
  do {                                                                                                        \
    gr_cu_result r_ = (call);                                                                                 \
    if (r_ != GR_CUDA_SUCCESS) {                                                                              \
      rc = cu_fail(c, r_, what, dev);                                                                         \
      goto out;                                                                                               \
    }                                                                                                         \
  } while (0)

/* cuda_copy.c */
int cuda_copy(void *state, const struct gr_copy_spec *s, struct gr_copy_sample *out);
int cuda_copy_many(void *state, const struct gr_copy_spec *specs, int n, struct gr_copy_sample *out);
int cuda_chase(void *state, int exec, int target, size_t bytes, struct gr_chase_sample *out);

/* cuda_gemm.c */
int cuda_gemm_open(void *state, int n, char *why, size_t cap);
int cuda_gemm(void *state, const int *devs, int ndev, int iters, struct gr_gemm_sample *out);

/* cuda_nccl.c: the all-reduce, backends/ccl/ccl.c on CUDA */
void cuda_ccl_init(struct cuda *c); /* once c->n is known */
int cuda_transports(void *state, char *buf, size_t cap);
int cuda_allreduce_open(void *state, size_t max_bytes, char *why, size_t cap);
int cuda_unique_id(void *state, void *id, char *why, size_t cap);
int cuda_allreduce_open_ranks(void *state, size_t max_bytes, const void *id, int nranks, int first_rank,
                              const int *devs, int ndev, char *why, size_t cap);
int cuda_allreduce(void *state, const struct gr_ar_spec *spec, struct gr_ar_sample *out);
const char *cuda_collective_name(void *state);
/* NCCL's version for doctor's inventory, through the all-reduce's loader;
 * c->ccl must be set up (cuda_ccl_init); the caller closes it (gr_ccl_close). */
void cuda_nccl_version(struct cuda *c, struct gr_lib_version *out);

/* cuda_bench.c */
int cu_fail(struct cuda *c, gr_cu_result r, const char *what, int dev);
int cuda_use(struct cuda *c, int dev);
uint32_t pattern_word(unsigned tag, size_t i);
unsigned buf_tag(int dev, bool host);
int ensure_buffers(struct cuda *c, int dev, size_t bytes);
void ensure_check(struct cuda *c, size_t bytes);
bool cuda_can_peer(void *state, int a, int b);
void probe_lost(struct cuda *c, int dev);

#endif
