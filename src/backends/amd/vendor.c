/* The AMD vendor: ROCm SMI for the facts; no measurement backend yet. */
#include "backends/amd/amd.h"

const struct gr_vendor gr_vendor_amd = {"amd", &gr_gpu_backend_rsmi, NULL};
