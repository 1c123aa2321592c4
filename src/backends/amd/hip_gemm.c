/* burn-in's GEMM load on AMD GPUs: fp16 inputs, fp32 accumulate and
 * product, through rocBLAS (opened at run time; hip_api.h says why not
 * hipBLAS), the product's first column checked against the host's. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/amd/hip_api.h"
#include "backends/amd/hip_internal.h"
#include "backends/gemm_inputs.h"
#include "base/dl.h"
#include "base/util.h"

static int blas_load(struct hip *h, char *why, size_t cap)
{
  /* rocBLAS 5 (ROCm 7), 4 (ROCm 6), 3 (ROCm 5), 0 (Debian's librocblas0) */
  static const char *const names[] = {"librocblas.so.5", "librocblas.so.4", "librocblas.so.3", "librocblas.so.0"};
  char one[256] = "";
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]) && !h->blas_lib; i++)
    h->blas_lib = gr_dl_open(names[i], one, sizeof(one));
  if (!h->blas_lib) {
    snprintf(why, cap, "no rocBLAS (%s)", one);
    return -1;
  }
  const struct gr_dl_sym syms[] = {
      {(void **)&h->BlasCreate, {"rocblas_create_handle"}, true},
      {(void **)&h->BlasDestroy, {"rocblas_destroy_handle"}, true},
      {(void **)&h->BlasSetStream, {"rocblas_set_stream"}, true},
      {(void **)&h->GemmEx, {"rocblas_gemm_ex"}, true},
  };
  return gr_dl_bind(h->blas_lib, "librocblas", syms, sizeof(syms) / sizeof(syms[0]), why, cap);
}

/* One GPU's handle and buffers, the inputs copied in. */
static int gemm_device(struct hip *h, int dev, int n, const uint16_t *a, const uint16_t *b)
{
  struct hipdev *d = &h->d[dev];
  size_t in = (size_t)n * n * 2, out = (size_t)n * n * 4;
  int rc = 0;
  if (hip_use(h, dev) != 0)
    return -1;
  if (!d->blas && h->BlasCreate(&d->blas) != GR_ROCBLAS_STATUS_SUCCESS) {
    snprintf(h->err, sizeof(h->err), "GPU%d: rocblas_create_handle failed", dev);
    return -1;
  }
  HIP(h->f.Malloc(&d->ga, in), "hipMalloc", dev);
  HIP(h->f.Malloc(&d->gb, in), "hipMalloc", dev);
  HIP(h->f.Malloc(&d->gc, out), "hipMalloc", dev);
  HIP(h->f.MemcpyAsync(d->ga, a, in, GR_HIP_MEMCPY_DEFAULT, d->s[0]), "hipMemcpyAsync", dev);
  HIP(h->f.MemcpyAsync(d->gb, b, in, GR_HIP_MEMCPY_DEFAULT, d->s[0]), "hipMemcpyAsync", dev);
  HIP(h->f.StreamSynchronize(d->s[0]), "hipStreamSynchronize", dev);
out:
  return rc;
}

int hip_gemm_open(void *state, int n, char *why, size_t cap)
{
  struct hip *h = state;
  if (h->gemm_n)
    return 0;
  if (n < 64 || n > 16384 || n % 64) {
    snprintf(why, cap, "a GEMM of %d: 64 to 16384, a multiple of 64", n);
    return -1;
  }
  if (blas_load(h, why, cap) != 0)
    return -1;
  uint16_t *a = xcalloc((size_t)n * n, 2), *b = xcalloc((size_t)n * n, 2);
  h->gemm_expect = xcalloc((size_t)n, sizeof(float));
  gr_gemm_inputs(n, a, b, h->gemm_expect);
  int rc = 0;
  for (int dev = 0; dev < h->n && rc == 0; dev++)
    rc = gemm_device(h, dev, n, a, b);
  free(a);
  free(b);
  if (rc != 0) {
    snprintf(why, cap, "%s", h->err);
    return -1;
  }
  h->gemm_n = n;
  return 0;
}

/* Queues iters products on one GPU between its events 0 and 1. */
static int gemm_queue(struct hip *h, int dev, int iters)
{
  struct hipdev *d = &h->d[dev];
  const float one = 1.0f, zero = 0.0f;
  int n = h->gemm_n, rc = 0;
  if (hip_use(h, dev) != 0)
    return -1;
  if (h->BlasSetStream(d->blas, d->s[0]) != GR_ROCBLAS_STATUS_SUCCESS) {
    snprintf(h->err, sizeof(h->err), "GPU%d: rocblas_set_stream failed", dev);
    return -1;
  }
  HIP(h->f.EventRecord(d->ev[0], d->s[0]), "hipEventRecord", dev);
  for (int it = 0; it < iters; it++)
    if (h->GemmEx(d->blas, GR_ROCBLAS_OPERATION_NONE, GR_ROCBLAS_OPERATION_NONE, n, n, n, &one, d->ga,
                  GR_ROCBLAS_DATATYPE_F16_R, n, d->gb, GR_ROCBLAS_DATATYPE_F16_R, n, &zero, d->gc,
                  GR_ROCBLAS_DATATYPE_F32_R, n, d->gc, GR_ROCBLAS_DATATYPE_F32_R, n, GR_ROCBLAS_DATATYPE_F32_R,
                  GR_ROCBLAS_GEMM_ALGO_STANDARD, 0, 0) != GR_ROCBLAS_STATUS_SUCCESS) {
      snprintf(h->err, sizeof(h->err), "GPU%d: rocblas_gemm_ex failed", dev);
      return -1;
    }
  HIP(h->f.EventRecord(d->ev[1], d->s[0]), "hipEventRecord", dev);
out:
  return rc;
}

/* Waits for one GPU's products, times them and checks the first column. */
static int gemm_check(struct hip *h, int dev, struct gr_gemm_sample *out)
{
  struct hipdev *d = &h->d[dev];
  int n = h->gemm_n, rc = 0;
  float ms = 0;
  if (hip_ensure_check(h, (size_t)n * 4) != 0 || hip_use(h, dev) != 0)
    return -1;
  HIP(h->f.EventSynchronize(d->ev[1]), "hipEventSynchronize", dev);
  HIP(h->f.EventElapsedTime(&ms, d->ev[0], d->ev[1]), "hipEventElapsedTime", dev);
  out->seconds = ms / 1000.0;
  HIP(h->f.MemcpyAsync(h->check, d->gc, (size_t)n * 4, GR_HIP_MEMCPY_DEFAULT, d->s[0]), "hipMemcpyAsync", dev);
  HIP(h->f.StreamSynchronize(d->s[0]), "hipStreamSynchronize", dev);
  const float *col = (const float *)h->check;
  for (int i = 0; i < n; i++)
    if (col[i] != h->gemm_expect[i]) {
      out->wrong = true;
      snprintf(out->what, sizeof(out->what), "C[%d][0] = %.0f, must be %.0f", i, col[i], h->gemm_expect[i]);
      break;
    }
out:
  return rc;
}

/* Every GPU's products queued first, then each one timed and checked: the
 * GPUs work at the same time. */
int hip_gemm(void *state, const int *devs, int ndev, int iters, struct gr_gemm_sample *out)
{
  struct hip *h = state;
  int rc = 0;
  h->err[0] = '\0';
  for (int k = 0; k < ndev; k++)
    memset(&out[k], 0, sizeof(out[k]));
  for (int k = 0; k < ndev && rc == 0; k++)
    rc = gemm_queue(h, devs[k], iters);
  for (int k = 0; k < ndev && rc == 0; k++)
    rc = gemm_check(h, devs[k], &out[k]);
  for (int k = 0; rc != 0 && k < ndev; k++)
    hip_probe_lost(h, devs[k]);
  return rc;
}

void hip_gemm_close(struct hip *h)
{
  for (int i = 0; h->d && i < h->n; i++) {
    struct hipdev *d = &h->d[i];
    void *g[3] = {d->ga, d->gb, d->gc};
    if (h->f.SetDevice(i) != GR_HIP_SUCCESS)
      continue;
    if (d->blas)
      h->BlasDestroy(d->blas);
    for (int k = 0; k < 3; k++)
      if (g[k])
        h->f.Free(g[k]);
    d->blas = NULL;
    d->ga = d->gb = d->gc = NULL;
  }
  free(h->gemm_expect);
  h->gemm_expect = NULL;
  gr_dl_close(h->blas_lib);
  h->blas_lib = NULL;
}
