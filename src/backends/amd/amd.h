/* AMD: ROCm SMI for the GPU facts (rsmi.c), the HIP runtime, rocBLAS and
 * RCCL for the measurements (hip_bench.c), all opened at run time;
 * rsmi_api.h and hip_api.h declare what gpurig calls. */
#ifndef GPURIG_BACKENDS_AMD_H
#define GPURIG_BACKENDS_AMD_H

#include "gpu/bench_backend.h"
#include "gpu/gpu.h"

extern const struct gr_gpu_backend gr_gpu_backend_rsmi;
extern const struct gr_bench_backend gr_bench_hip;
extern const struct gr_vendor gr_vendor_amd;

#endif
