/* Shared by the stand-in NVIDIA libraries (stub_nvml.c, stub_cuda.c,
 * stub_nccl.c; see README.md). Each .so is linked on its own, so everything
 * here is a type, a constant or a static inline function: no object code is
 * shared between the libraries, only the layout of struct CUstream_st (the
 * NCCL stub reads streams made by the CUDA stub) and the scenario table. */
#ifndef GPURIG_STUB_H
#define GPURIG_STUB_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vendor/nvidia/nv_api.h"

/* A CUDA stream. Both stubs rely on dev and clock coming first. */
#define STUB_STREAM_MAGIC 0x5354524du /* "STRM" */
struct CUstream_st {
  int dev;                  /* the GPU whose context made it */
  double clock;             /* virtual time in seconds: when its last operation ends */
  unsigned magic;           /* STUB_STREAM_MAGIC while alive */
  unsigned flags;           /* as given to cuStreamCreate */
  struct CUstream_st *next; /* the CUDA stub's list of live streams */
};

/* The legacy default stream and the per-thread one (CU_STREAM_LEGACY 0x1,
 * CU_STREAM_PER_THREAD 0x2) are passed as these small handle values. */
static inline int stub_stream_is_default(const struct CUstream_st *s)
{
  return (uintptr_t)s <= 2;
}

/* Thread-local state in the static TLS block: the default model would make
 * glibc malloc a block per thread on first use, which it never frees for a
 * dlopened library and valgrind then lists as still reachable. Keep such
 * variables to a few bytes (glibc's spare static TLS is small). */
#define STUB_TLS _Thread_local __attribute__((tls_model("initial-exec")))

/* ------------------------------------------------------------ scenario */
enum { STUB_MAX_GPUS = 4, STUB_LOST_GPU = 2, STUB_VANISH_CALL = 6 };

/* GPURIG_STUB_SCENARIO, normalised: an unset, empty or unknown value reads
 * as the default "4gpu" (silently: the stubs never print). */
static inline const char *stub_scenario(void)
{
  static const char *const known[] = {"4gpu", "nogpu", "initfail", "vanish", "copyerr", "corrupt", "ncclfail"};
  const char *s = getenv("GPURIG_STUB_SCENARIO");
  if (s)
    for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
      if (strcmp(s, known[i]) == 0)
        return known[i];
  return "4gpu";
}

static inline int stub_scenario_is(const char *name)
{
  return strcmp(stub_scenario(), name) == 0;
}

/* ------------------------------------------------------ per-GPU table */
#define STUB_GPU_NAME "NVIDIA GeForce RTX 3090"
#define STUB_PCI_VENDOR 0x10deu
#define STUB_PCI_DEVICE 0x2204u
#define STUB_PCI_SUBSYSTEM 0x14031043u

struct stub_gpu {
  const char *busid;    /* CUDA's form, "0000:01:00.0" */
  unsigned domain, bus, device;
  int bridge;           /* host bridge: P2P works only between GPUs on the same one */
  unsigned link_width;  /* current PCIe width (the maximum is 16 on all) */
  double h2d_gbs;       /* copy-engine rates in GB/s (1e9 bytes/s) */
  double d2h_gbs;
};

/* Number of GPUs the scenario shows (NVML and CUDA alike). */
static inline int stub_gpu_count(void)
{
  return stub_scenario_is("nogpu") ? 0 : STUB_MAX_GPUS;
}

/* GPU i of the table, or NULL when the scenario has no GPU i. */
static inline const struct stub_gpu *stub_gpu(int i)
{
  static const struct stub_gpu table[STUB_MAX_GPUS] = {
      {"0000:01:00.0", 0, 0x01, 0, 0, 16, 24.0, 25.0},
      {"0000:02:00.0", 0, 0x02, 0, 0, 8, 12.0, 12.5}, /* its link runs at x8 */
      {"0000:41:00.0", 0, 0x41, 0, 1, 16, 24.0, 25.0},
      {"0000:44:00.0", 0, 0x44, 0, 1, 16, 24.0, 25.0},
  };
  return i >= 0 && i < stub_gpu_count() ? &table[i] : NULL;
}

/* Whether GPUs a and b both exist and hang off the same host bridge. */
static inline int stub_same_bridge(int a, int b)
{
  const struct stub_gpu *ga = stub_gpu(a), *gb = stub_gpu(b);
  return ga && gb && ga->bridge == gb->bridge;
}

/* ------------------------------------------------------------- rates */
#define STUB_RATE_D2D_SAME 400.0 /* GB/s, same GPU */
#define STUB_RATE_PEER 22.0      /* GPU to GPU with peer access enabled */
#define STUB_RATE_STAGED 20.0    /* GPU to GPU through host memory (6x RTX 4090 measure 20-22, NVIDIA/nccl#814) */
#define STUB_RATE_H2H 10.0
#define STUB_RATE_MEMSET 400.0
#define STUB_COPY_LATENCY 2e-6   /* seconds per copy or memset */
#define STUB_KERNEL_FACTOR 0.9   /* gr_copy runs at 0.9 x the copy-engine rate */
#define STUB_KERNEL_LATENCY 4e-6
#define STUB_MIB (1024ull * 1024ull)
#define STUB_GIB (1024ull * STUB_MIB)
#define STUB_DEVICE_MEM (256ull * STUB_MIB) /* what cuMemAlloc may take per GPU */
#define STUB_TOTAL_MEM (24ull * STUB_GIB)   /* what the GPUs report */

#endif
