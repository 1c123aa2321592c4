/* The inputs of burn-in's GEMM load, for every vendor's backend: two n x n
 * fp16 matrices, column-major (cuBLAS's and rocBLAS's layout), of -1, 0 and
 * 1 by position, so that every product is an exact integer in fp32 and the
 * same on every GPU; and the first column of their product, computed here,
 * which the backends compare with the GPU's. */
#ifndef GPURIG_BACKENDS_GEMM_INPUTS_H
#define GPURIG_BACKENDS_GEMM_INPUTS_H

#include <stdint.h>

/* a and b: n * n halves each; expect: n floats. The caller owns all three. */
void gr_gemm_inputs(int n, uint16_t *a, uint16_t *b, float *expect);

#endif
