/* NVIDIA: NVML for the GPU facts (nvml.c), libcuda and libnccl for the
 * measurements (cuda_bench.c), all opened at run time; nv_api.h declares
 * what gpurig calls. */
#ifndef GPURIG_BACKENDS_NVIDIA_H
#define GPURIG_BACKENDS_NVIDIA_H

#include "gpu/bench_backend.h"
#include "gpu/gpu.h"

extern const struct gr_gpu_backend gr_gpu_backend_nvml;
extern const struct gr_bench_backend gr_bench_cuda;
extern const struct gr_vendor gr_vendor_nvidia;

#endif
