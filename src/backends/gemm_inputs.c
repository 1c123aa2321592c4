/* burn-in's GEMM inputs and expected result (see gemm_inputs.h). */
#include "backends/gemm_inputs.h"

#include <stddef.h>

static int gemm_value(unsigned tag, int i, int k)
{
  return (int)(((unsigned)i * 31u + (unsigned)k * 17u + tag * 7u) % 3u) - 1;
}

/* -1, 0, 1 as fp16: 0xBC00, 0, 0x3C00 */
static void gemm_fill(uint16_t *h, int n, unsigned tag)
{
  static const uint16_t half[3] = {0xBC00, 0x0000, 0x3C00};
  for (int k = 0; k < n; k++) /* column-major */
    for (int i = 0; i < n; i++)
      h[(size_t)k * n + i] = half[gemm_value(tag, i, k) + 1];
}

void gr_gemm_inputs(int n, uint16_t *a, uint16_t *b, float *expect)
{
  gemm_fill(a, n, 1);
  gemm_fill(b, n, 2);
  for (int i = 0; i < n; i++) { /* C[i][0] = sum over k of A[i][k] B[k][0] */
    long sum = 0;
    for (int k = 0; k < n; k++)
      sum += gemm_value(1, i, k) * gemm_value(2, k, 0);
    expect[i] = (float)sum;
  }
}
