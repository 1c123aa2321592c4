/* The AMD vendor: ROCm SMI for the facts, HIP (with rocBLAS and RCCL) for
 * the measurements. */
#include "backends/amd/amd.h"

const struct gr_vendor gr_vendor_amd = {"amd", &gr_gpu_backend_rsmi, &gr_bench_hip};
