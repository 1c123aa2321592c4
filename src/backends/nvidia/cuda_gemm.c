/* The GEMM benchmark: fp16 inputs, cuBLAS (opened at run time), checked
 * results. */
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backends/gemm_inputs.h"
#include "backends/nvidia/nvidia.h"
#include "base/dl.h"
#include "base/fs.h"
#include "backends/nvidia/nv_api.h"
#include "backends/nvidia/cuda_internal.h"

/* ------------------------------------------------------------ GEMM */

static int blas_load(struct cuda *c, char *why, size_t cap)
{
  static const char *const names[] = {"libcublas.so.13", "libcublas.so.12", "libcublas.so.11"};
  char one[256] = "";
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]) && !c->blas_lib; i++)
    c->blas_lib = gr_dl_open(names[i], one, sizeof(one));
  if (!c->blas_lib) {
    snprintf(why, cap, "no cuBLAS (%s)", one);
    return -1;
  }
  const struct gr_dl_sym syms[] = {
      {(void **)&c->BlasCreate, {"cublasCreate_v2"}, true},
      {(void **)&c->BlasDestroy, {"cublasDestroy_v2"}, true},
      {(void **)&c->BlasSetStream, {"cublasSetStream_v2"}, true},
      {(void **)&c->GemmEx, {"cublasGemmEx"}, true},
  };
  return gr_dl_bind(c->blas_lib, "libcublas", syms, sizeof(syms) / sizeof(syms[0]), why, cap);
}

/* One GPU's handle and buffers, the inputs copied in. */
static int gemm_device(struct cuda *c, int dev, int n, const uint16_t *a, const uint16_t *b)
{
  struct cudev *d = &c->d[dev];
  size_t in = (size_t)n * n * 2, out = (size_t)n * n * 4;
  int rc = 0;
  if (cuda_use(c, dev) != 0)
    return -1;
  if (!d->blas && c->BlasCreate(&d->blas) != GR_CUBLAS_STATUS_SUCCESS) {
    snprintf(c->err, sizeof(c->err), "GPU%d: cublasCreate failed", dev);
    return -1;
  }
  CU(c->f.MemAlloc(&d->ga, in), "cuMemAlloc", dev);
  CU(c->f.MemAlloc(&d->gb, in), "cuMemAlloc", dev);
  CU(c->f.MemAlloc(&d->gc, out), "cuMemAlloc", dev);
  CU(c->f.MemcpyAsync(d->ga, (gr_cu_deviceptr)(uintptr_t)a, in, d->s[0]), "cuMemcpyAsync", dev);
  CU(c->f.MemcpyAsync(d->gb, (gr_cu_deviceptr)(uintptr_t)b, in, d->s[0]), "cuMemcpyAsync", dev);
  CU(c->f.StreamSynchronize(d->s[0]), "cuStreamSynchronize", dev);
out:
  return rc;
}

int cuda_gemm_open(void *state, int n, char *why, size_t cap)
{
  struct cuda *c = state;
  if (c->gemm_n)
    return 0;
  if (n < 64 || n > 16384 || n % 64 || blas_load(c, why, cap) != 0) {
    if (n < 64 || n > 16384 || n % 64)
      snprintf(why, cap, "a GEMM of %d: 64 to 16384, a multiple of 64", n);
    return -1;
  }
  uint16_t *a = xcalloc((size_t)n * n, 2), *b = xcalloc((size_t)n * n, 2);
  c->gemm_expect = xcalloc((size_t)n, sizeof(float));
  gr_gemm_inputs(n, a, b, c->gemm_expect);
  int rc = 0;
  for (int dev = 0; dev < c->n && rc == 0; dev++)
    rc = gemm_device(c, dev, n, a, b);
  free(a);
  free(b);
  if (rc != 0) {
    snprintf(why, cap, "%s", c->err);
    return -1;
  }
  c->gemm_n = n;
  return 0;
}

/* Every GPU's products queued first, then each one timed and checked: the
 * GPUs work at the same time. */
int cuda_gemm(void *state, const int *devs, int ndev, int iters, struct gr_gemm_sample *out)
{
  struct cuda *c = state;
  const float one = 1.0f, zero = 0.0f;
  int n = c->gemm_n, rc = 0;
  c->err[0] = '\0';
  for (int k = 0; k < ndev && rc == 0; k++) {
    struct cudev *d = &c->d[devs[k]];
    memset(&out[k], 0, sizeof(out[k]));
    if (cuda_use(c, devs[k]) != 0 || c->BlasSetStream(d->blas, d->s[0]) != GR_CUBLAS_STATUS_SUCCESS)
      return -1;
    CU(c->f.EventRecord(d->ev[0], d->s[0]), "cuEventRecord", devs[k]);
    for (int it = 0; it < iters; it++)
      if (c->GemmEx(d->blas, GR_CUBLAS_OP_N, GR_CUBLAS_OP_N, n, n, n, &one, (const void *)(uintptr_t)d->ga,
                    GR_CUDA_R_16F, n, (const void *)(uintptr_t)d->gb, GR_CUDA_R_16F, n, &zero,
                    (void *)(uintptr_t)d->gc, GR_CUDA_R_32F, n, GR_CUBLAS_COMPUTE_32F,
                    GR_CUBLAS_GEMM_DEFAULT) != GR_CUBLAS_STATUS_SUCCESS) {
        snprintf(c->err, sizeof(c->err), "GPU%d: cublasGemmEx failed", devs[k]);
        rc = -1;
        break;
      }
    if (rc == 0)
      CU(c->f.EventRecord(d->ev[1], d->s[0]), "cuEventRecord", devs[k]);
  }
  for (int k = 0; k < ndev && rc == 0; k++) {
    struct cudev *d = &c->d[devs[k]];
    float ms = 0;
    ensure_check(c, (size_t)n * 4);
    if (cuda_use(c, devs[k]) != 0)
      return -1;
    CU(c->f.EventSynchronize(d->ev[1]), "cuEventSynchronize", devs[k]);
    CU(c->f.EventElapsedTime(&ms, d->ev[0], d->ev[1]), "cuEventElapsedTime", devs[k]);
    out[k].seconds = ms / 1000.0;
    CU(c->f.MemcpyAsync((gr_cu_deviceptr)(uintptr_t)c->check, d->gc, (size_t)n * 4, d->s[0]), "cuMemcpyAsync",
       devs[k]);
    CU(c->f.StreamSynchronize(d->s[0]), "cuStreamSynchronize", devs[k]);
    const float *col = (const float *)c->check;
    for (int i = 0; i < n; i++)
      if (col[i] != c->gemm_expect[i]) {
        out[k].wrong = true;
        snprintf(out[k].what, sizeof(out[k].what), "C[%d][0] = %.0f, must be %.0f", i, col[i], c->gemm_expect[i]);
        break;
      }
  }
out:
  for (int k = 0; rc != 0 && k < ndev; k++)
    probe_lost(c, devs[k]);
  return rc;
}
