/* Stand-in for AMD's rocBLAS (built as librocblas.so.4; see README.md):
 * rocblas_create_handle, rocblas_destroy_handle, rocblas_set_stream and
 * rocblas_gemm_ex as gpurig burn calls them (fp16 A and B, fp32 C and D,
 * fp32 compute, column-major, no transpose). NOT AMD code.
 *
 * "Device memory" is the HIP stand-in's heap memory, so the product is
 * really computed, but only its first column (what gpurig checks). The
 * stream's virtual clock moves by 2 n m k / rate + 5 us, the rate being the
 * machine's in stub_amd.h. When each GPU last ran a product is kept for the
 * ROCm SMI stand-in (gpurig_stub_gemm_last_ns, found with dlopen
 * RTLD_NOLOAD), which then reports that GPU loaded. */
#define CUstream_st ihipStream_t /* the stand-ins' stream layout under HIP's tag */
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backends/amd/hip_api.h"
#include "stub.h"
#include "stub_amd.h"

#define EXPORT __attribute__((visibility("default")))
#define ROCBLAS_OK 0u
#define ROCBLAS_INVALID_HANDLE 1u
#define ROCBLAS_NOT_IMPLEMENTED 2u
#define ROCBLAS_INVALID_POINTER 3u
#define ROCBLAS_INVALID_SIZE 4u
#define STUB_GPUS_MAX 64

struct _rocblas_handle {
  struct ihipStream_t *stream;
};

EXPORT gr_rocblas_status rocblas_create_handle(gr_rocblas_handle *h);
EXPORT gr_rocblas_status rocblas_destroy_handle(gr_rocblas_handle h);
EXPORT gr_rocblas_status rocblas_set_stream(gr_rocblas_handle h, gr_hip_stream s);
EXPORT gr_rocblas_status rocblas_gemm_ex(gr_rocblas_handle h, unsigned int trans_a, unsigned int trans_b, int32_t m,
                                         int32_t n, int32_t k, const void *alpha, const void *a, unsigned int a_type,
                                         int32_t lda, const void *b, unsigned int b_type, int32_t ldb,
                                         const void *beta, const void *c, unsigned int c_type, int32_t ldc, void *d,
                                         unsigned int d_type, int32_t ldd, unsigned int compute_type,
                                         unsigned int algo, int32_t solution_index, uint32_t flags);
EXPORT long long gpurig_stub_gemm_last_ns(int dev);

#define STUB_CHECK(fn, pfn) _Static_assert(_Generic(&fn, pfn: 1, default: 0), #fn " does not match " #pfn)
STUB_CHECK(rocblas_create_handle, gr_pfn_rocblas_create_handle);
STUB_CHECK(rocblas_destroy_handle, gr_pfn_rocblas_destroy_handle);
STUB_CHECK(rocblas_set_stream, gr_pfn_rocblas_set_stream);
STUB_CHECK(rocblas_gemm_ex, gr_pfn_rocblas_gemm_ex);

static atomic_llong gemm_last_ns[STUB_GPUS_MAX]; /* CLOCK_MONOTONIC of each GPU's last product, 0 none */

EXPORT long long gpurig_stub_gemm_last_ns(int dev)
{
  return dev >= 0 && dev < STUB_GPUS_MAX ? atomic_load(&gemm_last_ns[dev]) : 0;
}

EXPORT gr_rocblas_status rocblas_create_handle(gr_rocblas_handle *h)
{
  if (!h)
    return ROCBLAS_INVALID_POINTER;
  *h = calloc(1, sizeof(**h));
  return *h ? ROCBLAS_OK : ROCBLAS_INVALID_HANDLE;
}

EXPORT gr_rocblas_status rocblas_destroy_handle(gr_rocblas_handle h)
{
  if (!h)
    return ROCBLAS_INVALID_HANDLE;
  free(h);
  return ROCBLAS_OK;
}

EXPORT gr_rocblas_status rocblas_set_stream(gr_rocblas_handle h, gr_hip_stream s)
{
  if (!h)
    return ROCBLAS_INVALID_HANDLE;
  h->stream = s;
  return ROCBLAS_OK;
}

static float half_to_float(uint16_t x)
{
  int e = (x >> 10) & 0x1f, f = x & 0x3ff;
  float v = e == 0 ? ldexpf((float)f, -24) : ldexpf((float)(f | 0x400), e - 25);
  return x & 0x8000 ? -v : v;
}

static void note_load(const struct ihipStream_t *st, int32_t m, int32_t n, int32_t k)
{
  struct timespec ts;
  ((struct ihipStream_t *)st)->clock += 2.0 * m * n * k / stub_amd_machine()->gemm_flops + 5e-6;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  if (st->dev >= 0 && st->dev < STUB_GPUS_MAX)
    atomic_store(&gemm_last_ns[st->dev], (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec);
}

EXPORT gr_rocblas_status rocblas_gemm_ex(gr_rocblas_handle h, unsigned int trans_a, unsigned int trans_b, int32_t m,
                                         int32_t n, int32_t k, const void *alpha, const void *a, unsigned int a_type,
                                         int32_t lda, const void *b, unsigned int b_type, int32_t ldb,
                                         const void *beta, const void *c, unsigned int c_type, int32_t ldc, void *d,
                                         unsigned int d_type, int32_t ldd, unsigned int compute_type,
                                         unsigned int algo, int32_t solution_index, uint32_t flags)
{
  if (!h || !h->stream)
    return ROCBLAS_INVALID_HANDLE;
  if (!a || !b || !c || !d || !alpha || !beta)
    return ROCBLAS_INVALID_POINTER;
  if (m <= 0 || n <= 0 || k <= 0 || lda < m || ldb < k || ldc < m || ldd < m)
    return ROCBLAS_INVALID_SIZE;
  if (trans_a != GR_ROCBLAS_OPERATION_NONE || trans_b != GR_ROCBLAS_OPERATION_NONE ||
      a_type != GR_ROCBLAS_DATATYPE_F16_R || b_type != GR_ROCBLAS_DATATYPE_F16_R ||
      c_type != GR_ROCBLAS_DATATYPE_F32_R || d_type != GR_ROCBLAS_DATATYPE_F32_R ||
      compute_type != GR_ROCBLAS_DATATYPE_F32_R || algo != GR_ROCBLAS_GEMM_ALGO_STANDARD || solution_index ||
      flags)
    return ROCBLAS_NOT_IMPLEMENTED;
  const uint16_t *x = a, *y = b;
  const float *cin = c;
  float *out = d, al = *(const float *)alpha, be = *(const float *)beta;
  for (int32_t i = 0; i < m; i++) { /* column 0 only: D[i][0] = alpha sum A[i][p] B[p][0] + beta C[i][0] */
    float sum = 0;
    for (int32_t p = 0; p < k; p++)
      sum += half_to_float(x[(size_t)p * lda + i]) * half_to_float(y[p]);
    out[i] = al * sum + (be != 0 ? be * cin[i] : 0);
  }
  note_load(h->stream, m, n, k);
  return ROCBLAS_OK;
}
