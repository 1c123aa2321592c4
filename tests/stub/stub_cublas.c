/* Stand-in for libcublas (see README.md): cublasCreate_v2, cublasDestroy_v2,
 * cublasSetStream_v2 and cublasGemmEx as gpurig burn calls them (fp16 A and
 * B, fp32 C, column-major, no transpose). NOT NVIDIA code.
 *
 * "Device memory" is the CUDA stand-in's heap memory, so the product is
 * really computed, but only its first column (what gpurig checks): the rest
 * of C is left as it was. The stream's virtual clock moves by
 * 2 n m k / 71 TFLOPS + 5 us, an RTX 3090's dense fp16 rate with fp32
 * accumulation (data/gpus.tsv, the GA102 whitepaper). Under
 * "burn-gemm-wrong", GPU2's C[7][0] comes out 1 too high; under "burn-slow",
 * GPU1 runs at a third of the rate (its power capped: see the NVML
 * stand-in).
 *
 * When each GPU last ran a product is kept for the NVML stand-in
 * (gpurig_stub_gemm_last_ns, found with dlopen RTLD_NOLOAD), which then
 * reports that GPU loaded, as a real one is under matrix products. */
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "stub.h"

#define CUBLAS_OK 0u
#define CUBLAS_NOT_INITIALIZED 1u
#define CUBLAS_INVALID_VALUE 7u
#define CUBLAS_NOT_SUPPORTED 15u
#define STUB_GEMM_FLOPS 71e12
#define STUB_SLOW_GPU 1
#define STUB_GPUS_MAX 64
#define STUB_WRONG_GPU 2
#define STUB_WRONG_ROW 7

struct cublasContext {
  struct CUstream_st *stream;
};

gr_cublas_status cublasCreate_v2(gr_cublas_handle *h);
gr_cublas_status cublasDestroy_v2(gr_cublas_handle h);
gr_cublas_status cublasSetStream_v2(gr_cublas_handle h, gr_cu_stream s);
gr_cublas_status cublasGemmEx(gr_cublas_handle h, unsigned int transa, unsigned int transb, int m, int n, int k,
                              const void *alpha, const void *A, unsigned int Atype, int lda, const void *B,
                              unsigned int Btype, int ldb, const void *beta, void *C, unsigned int Ctype, int ldc,
                              unsigned int computeType, int algo);
long long gpurig_stub_gemm_last_ns(int dev);

static atomic_llong gemm_last_ns[STUB_GPUS_MAX]; /* CLOCK_MONOTONIC of each GPU's last product, 0 none */

long long gpurig_stub_gemm_last_ns(int dev)
{
  return dev >= 0 && dev < STUB_GPUS_MAX ? atomic_load(&gemm_last_ns[dev]) : 0;
}

#define STUB_CHECK(fn, pfn) _Static_assert(_Generic(&fn, pfn: 1, default: 0), #fn " does not match " #pfn)
STUB_CHECK(cublasCreate_v2, gr_pfn_cublasCreate);
STUB_CHECK(cublasDestroy_v2, gr_pfn_cublasDestroy);
STUB_CHECK(cublasSetStream_v2, gr_pfn_cublasSetStream);
STUB_CHECK(cublasGemmEx, gr_pfn_cublasGemmEx);

gr_cublas_status cublasCreate_v2(gr_cublas_handle *h)
{
  if (!h)
    return CUBLAS_INVALID_VALUE;
  *h = calloc(1, sizeof(**h));
  return *h ? CUBLAS_OK : CUBLAS_NOT_INITIALIZED;
}

gr_cublas_status cublasDestroy_v2(gr_cublas_handle h)
{
  free(h);
  return CUBLAS_OK;
}

gr_cublas_status cublasSetStream_v2(gr_cublas_handle h, gr_cu_stream s)
{
  if (!h)
    return CUBLAS_NOT_INITIALIZED;
  h->stream = s;
  return CUBLAS_OK;
}

static float half_to_float(uint16_t h)
{
  int e = (h >> 10) & 0x1f, f = h & 0x3ff;
  float v = e == 0 ? ldexpf((float)f, -24) : ldexpf((float)(f | 0x400), e - 25);
  return h & 0x8000 ? -v : v;
}

gr_cublas_status cublasGemmEx(gr_cublas_handle h, unsigned int transa, unsigned int transb, int m, int n, int k,
                              const void *alpha, const void *A, unsigned int Atype, int lda, const void *B,
                              unsigned int Btype, int ldb, const void *beta, void *C, unsigned int Ctype, int ldc,
                              unsigned int computeType, int algo)
{
  (void)algo;
  if (!h)
    return CUBLAS_NOT_INITIALIZED;
  if (!A || !B || !C || !alpha || !beta || m <= 0 || n <= 0 || k <= 0 || lda < m || ldb < k || ldc < m)
    return CUBLAS_INVALID_VALUE;
  if (transa != GR_CUBLAS_OP_N || transb != GR_CUBLAS_OP_N || Atype != GR_CUDA_R_16F || Btype != GR_CUDA_R_16F ||
      Ctype != GR_CUDA_R_32F || computeType != GR_CUBLAS_COMPUTE_32F)
    return CUBLAS_NOT_SUPPORTED;
  const uint16_t *a = A, *b = B;
  float *c = C, al = *(const float *)alpha, be = *(const float *)beta;
  for (int i = 0; i < m; i++) { /* column 0 only: C[i][0] = alpha sum A[i][p] B[p][0] + beta C[i][0] */
    float sum = 0;
    for (int p = 0; p < k; p++)
      sum += half_to_float(a[(size_t)p * lda + i]) * half_to_float(b[p]);
    c[i] = al * sum + be * c[i];
  }
  struct CUstream_st *st = h->stream;
  if (st && !stub_stream_is_default(st)) {
    if (stub_scenario_is("burn-gemm-wrong") && st->dev == STUB_WRONG_GPU)
      c[STUB_WRONG_ROW] += 1.0f;
    double slow = stub_scenario_is("burn-slow") && st->dev == STUB_SLOW_GPU ? 3 : 1;
    double rate = stub_machine()->gemm_flops > 0 ? stub_machine()->gemm_flops : STUB_GEMM_FLOPS;
    st->clock += slow * 2.0 * m * n * k / rate + 5e-6;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    if (st->dev >= 0 && st->dev < STUB_GPUS_MAX)
      atomic_store(&gemm_last_ns[st->dev], (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec);
  }
  return CUBLAS_OK;
}
