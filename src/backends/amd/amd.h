/* AMD: ROCm SMI for the GPU facts (rsmi.c), opened at run time; rsmi_api.h
 * declares what gpurig calls. No measurement backend yet (HIP, RCCL): bench
 * and burn say so on AMD GPUs. */
#ifndef GPURIG_BACKENDS_AMD_H
#define GPURIG_BACKENDS_AMD_H

#include "gpu/gpu.h"

extern const struct gr_gpu_backend gr_gpu_backend_rsmi;
extern const struct gr_vendor gr_vendor_amd;

#endif
