/* The GPU vendors gpurig knows: one row per folder under src/backends/. A new
 * vendor is its folder (a facts backend, a measurement backend, the struct
 * gr_vendor that names both) and one row here. */
#include "gpu/gpu.h"
#include "backends/amd/amd.h"
#include "backends/nvidia/nvidia.h"

const struct gr_vendor *const gr_vendors[] = {&gr_vendor_nvidia, &gr_vendor_amd, NULL};
