/* The NVIDIA vendor: both backends under one name. */
#include "backends/nvidia/nvidia.h"

const struct gr_vendor gr_vendor_nvidia = {"nvidia", &gr_gpu_backend_nvml, &gr_bench_cuda};
