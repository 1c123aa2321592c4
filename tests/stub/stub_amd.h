/* The AMD machines the stand-in HIP runtime (stub_hip.c), rocBLAS
 * (stub_rocblas.c) and RCCL (stub_nccl.c built as librccl.so.1) show, one
 * per AMD scenario, as static inline functions (each .so is linked on its
 * own). The bus ids are stub_rsmi.c's, so gpurig matches the GPUs of the
 * two libraries by bus id as on a real machine. The rates are stand-in
 * figures (README.md), not measurements. */
#ifndef GPURIG_STUB_AMD_H
#define GPURIG_STUB_AMD_H

#include <string.h>

#include "stub.h"

struct stub_amd_machine {
  int ngpus;
  const unsigned *bus;   /* domain 0, device 0, function 0 */
  double h2d_gbs, d2h_gbs; /* host <-> GPU, each GPU on its own PCIe 4.0 x16 root port */
  double local_gbs;      /* a copy within one GPU (bytes copied a second: half the memory's traffic) */
  double pcie_peer_gbs;  /* GPU -> GPU over PCIe (peer access through the root complex) */
  int xgmi_ring;         /* 1: an Infinity Fabric bridge joins the GPUs in a ring */
  double xgmi_gbs;       /* ... a neighbour's copy over it; across the ring (2 hops) half that */
  double gemm_flops;     /* rocblas_gemm_ex, fp16 in, fp32 accumulate */
  const char *name;
};

enum {
  STUB_AMD_LOST_GPU = 2,     /* "tinybox-red-vanish" loses it */
  STUB_AMD_VANISH_CALL = 6,  /* ... at the 6th copy or memset touching it */
};

static inline const struct stub_amd_machine *stub_amd_machine(void)
{
  static const unsigned red[] = {0x03, 0x06, 0x43, 0x83, 0xc3, 0xc6};
  static const unsigned mi50[] = {0x03, 0x43, 0x83, 0xc3};
  static const unsigned mixed[] = {0x0a, 0x61};
  /* tinybox red: 6 x RX 7900 XTX, PCIe 4.0 x16 each; peer access over
   * PCIe (large BAR, a kernel with HSA_AMD_P2P), through the root complex */
#define STUB_RED .h2d_gbs = 24.8, .d2h_gbs = 25.6, .local_gbs = 420.0, .pcie_peer_gbs = 21.0, .gemm_flops = 80e12, \
                 .name = "AMD Radeon RX 7900 XTX"
  static const struct stub_amd_machine machines[] = {
      {.ngpus = 0, .bus = red, STUB_RED},
      {.ngpus = 6, .bus = red, STUB_RED},
      {.ngpus = 4, .bus = mi50, .h2d_gbs = 24.2, .d2h_gbs = 25.1, .local_gbs = 440.0, .pcie_peer_gbs = 20.0,
       .xgmi_ring = 1, .xgmi_gbs = 40.0, .gemm_flops = 21e12, .name = "AMD Radeon Instinct MI50 32GB"},
      {.ngpus = 2, .bus = mixed, STUB_RED},
  };
#undef STUB_RED
  const char *sc = stub_scenario();
  if (strncmp(sc, "tinybox-red", 11) == 0)
    return &machines[1];
  if (strcmp(sc, "mi50-bridge") == 0)
    return &machines[2];
  if (strcmp(sc, "mixed") == 0)
    return &machines[3];
  return &machines[0];
}

static inline int stub_amd_count(void)
{
  return stub_amd_machine()->ngpus;
}

/* GPU -> GPU rate with peer access: the bridge's for xGMI neighbours (half
 * across the ring), else PCIe's. Every pair of these machines has it. */
static inline double stub_amd_peer_gbs(int a, int b)
{
  const struct stub_amd_machine *m = stub_amd_machine();
  if (!m->xgmi_ring)
    return m->pcie_peer_gbs;
  int d = (a - b + m->ngpus) % m->ngpus;
  return d == 1 || d == m->ngpus - 1 ? m->xgmi_gbs : m->xgmi_gbs / 2;
}

#endif
