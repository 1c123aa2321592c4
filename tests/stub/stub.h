/* Shared by the stand-in NVIDIA libraries (stub_nvml.c, stub_cuda.c,
 * stub_nccl.c; see README.md). Each .so is linked on its own, so everything
 * here is a type, a constant or a static inline function: no object code is
 * shared between the libraries, only the layout of struct CUstream_st (the
 * NCCL stub reads streams made by the CUDA stub) and the scenario table. */
#ifndef GPURIG_STUB_H
#define GPURIG_STUB_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/nvidia/nv_api.h"

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
enum {
  STUB_MAX_GPUS = 8,
  STUB_LOST_GPU = 2,     /* "vanish" loses it */
  STUB_VANISH_CALL = 6,
  STUB_REPLAY_GPU = 1,   /* the default machine's x8 riser: its PCIe replay counter grows */
  STUB_REPLAY_START = 3, /* its first answer; each call adds 1 */
  STUB_HOT_GPU = 3,      /* "busy": the one that also throttles for heat */
  STUB_HANG_GPU = 1,     /* "hang": its power reading blocks */
  STUB_HANG_DEFAULT_S = 30,
  STUB_XID_GPU = 2,      /* "xid": the GPU the event names */
  STUB_XID_CALL = 3,     /* ... on this nvmlEventSetWait_v2 call of the process */
  STUB_XID_CODE = 79,    /* "GPU has fallen off the bus" */
  STUB_CRC_GPU = 3,      /* A100 machines: link 0 of this GPU counts CRC flit errors */
  STUB_CRC_COUNT = 2,
  /* the burn-* scenarios (gpurig burn): the default machine, with one fault or load pattern each */
  STUB_AER_GPU = 1,              /* "burn-aer": copies to and from it raise its root port's AER counter */
  STUB_AER_EVERY = 4,            /* ... on every 4th host<->GPU1 copy of the process */
  STUB_AER_START = 7,            /* the tree's TOTAL_ERR_COR before the first rewrite */
  STUB_AER_MAX_REWRITES = 200,   /* stops at 7 + 200 x STUB_AER_STEP */
  STUB_AER_STEP = 8,             /* each rewrite adds this many: two rewrites (one round of copies) are
                                    over a Gen4 x8 link's allowance for any run under two minutes, so the
                                    verdict does not depend on how many rounds a loaded machine fits */
  STUB_BURN_REPLAY_GPU = 2,      /* "burn-replay": its replay counter grows by 40 per call, from 0 */
  STUB_BURN_REPLAY_STEP = 40,
  STUB_XID79_POWER_CALLS = 3,    /* "burn-xid79": GPU2 is lost after this many of its power reads */
  STUB_STALL_CALL = 400,          /* "burn-stall": the all-reduce holding this ncclAllReduce call ... */
  STUB_STALL_FACTOR = 50,        /* ... takes 50 x as long */
};

/* "burn-aer": the root port above GPU1 in tests/data/trees/epyc-riser, relative to GPURIG_STUB_TREE */
#define STUB_AER_FILE "sys/devices/pci0000:00/0000:00:03.1/aer_dev_correctable"

/* GPURIG_STUB_SCENARIO, normalised: an unset, empty or unknown value reads
 * as the default "4gpu" (silently: the stubs never print). */
static inline const char *stub_scenario(void)
{
  static const char *const known[] = {"4gpu",     "nogpu",       "initfail",      "vanish",
                                      "copyerr",  "corrupt",     "ncclfail",      "v100-hcm",
                                      "3090-bridge", "a100-nvswitch", "a100-nvswitch-old",
                                      "busy",     "hang",        "xid",
                                      "burn-aer", "burn-replay", "burn-xid79",    "burn-throttle",
                                      "burn-stall", "healthy", "in-use", "burn-gemm-wrong", "burn-slow", "net-corrupt",
                                      "amd-pull", "a100-uplink", "spin-timeout", "h200-vm", "driver-gone",
                                      "power-limits", "nccl-2.18",
                                      /* AMD machines (stub_rsmi.c): NVML and CUDA see no GPU there */
                                      "tinybox-red", "tinybox-red-vanish", "mi50-bridge", "mi50-xgmi-errors",
                                      "tinybox-red-stall", "tinybox-red-replay", "tinybox-red-rccl-2.20",
                                      /* both vendors: two RTX 3090s here, two RX 7900 XTX in stub_rsmi.c */
                                      "mixed"};
  const char *s = getenv("GPURIG_STUB_SCENARIO");
  /* GPURIG_STUB_SCENARIO_FILE: the scenario is the file's first word, read
   * on every call, so a test can change it while gpurig runs (a GPU that
   * vanishes mid-watch). */
  const char *path = getenv("GPURIG_STUB_SCENARIO_FILE");
  static _Thread_local char word[32];
  FILE *f = path ? fopen(path, "r") : NULL;
  if (f) {
    if (fscanf(f, "%31s", word) == 1)
      s = word;
    fclose(f);
  }
  /* gpurig's sampler calls the stand-in hundreds of times a second: the
   * last answer is kept per thread while the value stays the same */
  static _Thread_local char last_in[32];
  static _Thread_local const char *last_out;
  if (s && last_out && strcmp(s, last_in) == 0)
    return last_out;
  const char *out = "4gpu";
  if (s)
    for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
      if (strcmp(s, known[i]) == 0)
        out = known[i];
  if (s && strlen(s) < sizeof(last_in)) {
    strcpy(last_in, s);
    last_out = out;
  }
  return out;
}

static inline int stub_scenario_is(const char *name)
{
  return strcmp(stub_scenario(), name) == 0;
}

/* ------------------------------------------------------ per-GPU table */
#define STUB_PCI_VENDOR 0x10deu
#define STUB_PCI_SUBSYSTEM 0x14031043u
#define STUB_NVSWITCH_DEVICE 0x1af1u /* the A100 generation's NVSwitch, class 0680 */

struct stub_gpu {
  const char *busid;    /* CUDA's form, "0000:01:00.0" */
  unsigned domain, bus, device;
  int bridge;           /* host bridge: P2P works only between GPUs on the same one */
  unsigned link_width;  /* current PCIe width (the maximum is 16 on all) */
  double h2d_gbs;       /* copy-engine rates in GB/s (1e9 bytes/s) */
  double d2h_gbs;
};

/* How a machine's NVLinks run: none, a mesh (each GPU's links split evenly
 * among the other GPUs, in index order) or to NVSwitches (two links each,
 * link l to switch l / 2). */
enum stub_wiring { STUB_NVL_NONE, STUB_NVL_MESH, STUB_NVL_SWITCH };

/* The machine a scenario shows, the same to NVML and CUDA. */
struct stub_machine {
  const char *name;          /* device name */
  unsigned pci_device;       /* with vendor 10de */
  unsigned long long mem;    /* bytes */
  int cc_major, cc_minor;
  unsigned power_mw;         /* default and enforced limit */
  unsigned pcie_gen;         /* maximum PCIe generation */
  int ecc;                   /* 1 on; 0 not supported (GeForce) */
  int ngpus;
  const struct stub_gpu *gpus;
  int links;                 /* NVLinks per GPU, all up; 0: none (NOT_SUPPORTED) */
  unsigned nvlink_version;   /* nvmlNvlinkVersion_t: 2 "2.0" (V100), 5 "3.1" (A100, GA102) */
  enum stub_wiring wiring;
  const unsigned *switch_bus; /* STUB_NVL_SWITCH: the NVSwitches' buses (domain 0, device 0) */
  int nswitches;
  int remote_type;           /* nvmlDeviceGetNvLinkRemoteDeviceType answers; 0: NOT_SUPPORTED (old driver) */
  unsigned sm_mhz, mem_mhz;  /* current clocks (idle, or the SXM boards' fixed application clocks) */
  int fan;                   /* 1: a fan NVML reads (30 + i %); 0: NOT_SUPPORTED (SXM, cooled by the chassis) */
  unsigned mem_temp_c;       /* NVML_FI_DEV_MEMORY_TEMP; 0: NOT_SUPPORTED (GDDR6X boards) */
  int remap;                 /* 1: row remapping (A100 and later); 0: NOT_SUPPORTED */
  unsigned max_sm_mhz, max_mem_mhz; /* nvmlDeviceGetMaxClockInfo */
  const char *vbios;
  unsigned long long reserved; /* bytes the driver reserves: nvmlDeviceGetMemoryInfo_v2 answers only when set
                                  (older drivers: FUNCTION_NOT_FOUND), and its v1 "used" counts it */
  unsigned slowdown_c, shutdown_c; /* temperature thresholds */
  double local_gbs;          /* a copy within one GPU, GB/s; 0: STUB_RATE_D2D_SAME */
  double gemm_flops;         /* cublasGemmEx's rate, FLOP/s; 0: STUB_GEMM_FLOPS (an RTX 3090's) */
};

#define STUB_MIB (1024ull * 1024ull)
#define STUB_GIB (1024ull * STUB_MIB)

static inline const struct stub_machine *stub_machine(void)
{
  /* the default: four RTX 3090s, two per host bridge */
  static const struct stub_gpu rtx[] = {
      {"0000:01:00.0", 0, 0x01, 0, 0, 16, 24.0, 25.0},
      {"0000:02:00.0", 0, 0x02, 0, 0, 8, 12.0, 12.5}, /* its link runs at x8 */
      {"0000:41:00.0", 0, 0x41, 0, 1, 16, 24.0, 25.0},
      {"0000:44:00.0", 0, 0x44, 0, 1, 16, 24.0, 25.0},
  };
  /* tests/data/trees/t181-v100: two per socket; NVLink joins every pair, so P2P works everywhere */
  static const struct stub_gpu v100[] = {
      {"0000:18:00.0", 0, 0x18, 0, 0, 16, 12.0, 12.5}, {"0000:19:00.0", 0, 0x19, 0, 0, 16, 12.0, 12.5},
      {"0000:86:00.0", 0, 0x86, 0, 0, 16, 12.0, 12.5}, {"0000:87:00.0", 0, 0x87, 0, 0, 16, 12.0, 12.5},
  };
  /* tests/data/trees/pair-3090-bridge */
  static const struct stub_gpu pair[] = {
      {"0000:21:00.0", 0, 0x21, 0, 0, 16, 24.0, 25.0}, {"0000:4b:00.0", 0, 0x4b, 0, 0, 16, 24.0, 25.0},
  };
  /* tests/data/trees/hgx-a100: a DGX A100's bus ids */
  static const struct stub_gpu a100[] = {
      {"0000:07:00.0", 0, 0x07, 0, 0, 16, 24.0, 25.0}, {"0000:0f:00.0", 0, 0x0f, 0, 0, 16, 24.0, 25.0},
      {"0000:47:00.0", 0, 0x47, 0, 0, 16, 24.0, 25.0}, {"0000:4e:00.0", 0, 0x4e, 0, 0, 16, 24.0, 25.0},
      {"0000:87:00.0", 0, 0x87, 0, 0, 16, 24.0, 25.0}, {"0000:90:00.0", 0, 0x90, 0, 0, 16, 24.0, 25.0},
      {"0000:b7:00.0", 0, 0xb7, 0, 0, 16, 24.0, 25.0}, {"0000:bd:00.0", 0, 0xbd, 0, 0, 16, 24.0, 25.0},
  };
  static const unsigned a100_switches[] = {0xc4, 0xc5, 0xc6, 0xc7, 0xc8, 0xc9};
  /* the real machine of docs/measure.md "On a real GPU": one H200 in a
   * Firecracker VM, as its driver 580.159.04 answered (tests/data/trees/h200-vm), with the
   * copy and GEMM rates measured there */
  static const struct stub_gpu h200[] = {{"0000:00:06.0", 0, 0x00, 6, 0, 16, 55.5, 55.3}};
#define STUB_3090 .name = "NVIDIA GeForce RTX 3090", .pci_device = 0x2204, .mem = 24 * STUB_GIB, .cc_major = 8, \
                  .cc_minor = 6, .power_mw = 350000, .pcie_gen = 4, .sm_mhz = 210, .mem_mhz = 405, .fan = 1, \
                  .max_sm_mhz = 2100, .max_mem_mhz = 9751, .vbios = "94.02.42.00.A9", .slowdown_c = 93, .shutdown_c = 98
#define STUB_A100 .name = "NVIDIA A100-SXM4-40GB", .pci_device = 0x20b0, .mem = 40 * STUB_GIB, .cc_major = 8, \
                  .power_mw = 400000, .pcie_gen = 4, .ecc = 1, .ngpus = 8, .gpus = a100, .links = 12, \
                  .nvlink_version = 5, .wiring = STUB_NVL_SWITCH, .switch_bus = a100_switches, .nswitches = 6, \
                  .sm_mhz = 1410, .mem_mhz = 1215, .mem_temp_c = 45, .remap = 1, .max_sm_mhz = 1410, \
                  .max_mem_mhz = 1215, .vbios = "92.00.19.00.01", .slowdown_c = 90, .shutdown_c = 95
  static const struct stub_machine machines[] = {
      {STUB_3090, .ngpus = 4, .gpus = rtx},
      {STUB_3090, .ngpus = 0, .gpus = rtx},
      {.name = "Tesla V100-SXM2-16GB", .pci_device = 0x1db1, .mem = 16 * STUB_GIB, .cc_major = 7, .power_mw = 300000,
       .pcie_gen = 3, .ecc = 1, .ngpus = 4, .gpus = v100, .links = 6, .nvlink_version = 2, .wiring = STUB_NVL_MESH,
       .remote_type = 1, .sm_mhz = 1530, .mem_mhz = 877, .mem_temp_c = 45, .max_sm_mhz = 1530, .max_mem_mhz = 877,
       .vbios = "88.00.4F.00.09", .slowdown_c = 87, .shutdown_c = 90},
      {STUB_3090, .ngpus = 2, .gpus = pair, .links = 4, .nvlink_version = 5, .wiring = STUB_NVL_MESH, .remote_type = 1},
      {STUB_A100, .remote_type = 1},
      {STUB_A100, .remote_type = 0},
      {.name = "NVIDIA H200", .pci_device = 0x2335, .mem = 143771 * STUB_MIB, .cc_major = 9, .power_mw = 700000,
       .pcie_gen = 5, .ecc = 1, .ngpus = 1, .gpus = h200, .sm_mhz = 345, .mem_mhz = 3201, .mem_temp_c = 33,
       .remap = 1, .max_sm_mhz = 1980, .max_mem_mhz = 3201, .vbios = "96.00.A5.00.1A", .reserved = 615 * STUB_MIB,
       .slowdown_c = 89, .shutdown_c = 95, .local_gbs = 2079.0, .gemm_flops = 741.7e12},
      {STUB_3090, .ngpus = 2, .gpus = pair}, /* "mixed": tests/data/trees/mixed, no bridge */
  };
#undef STUB_3090
#undef STUB_A100
  const char *sc = stub_scenario();
  static const char *const names[] = {"nogpu", "v100-hcm", "3090-bridge", "a100-nvswitch", "a100-nvswitch-old",
                                      "h200-vm", "mixed"};
  /* the AMD machines of stub_rsmi.c have no NVIDIA GPU */
  if (strncmp(sc, "tinybox-red", 11) == 0 || strncmp(sc, "mi50-", 5) == 0)
    return &machines[1];
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
    if (sc == names[i] || strcmp(sc, names[i]) == 0)
      return &machines[i + 1];
  if (strcmp(sc, "a100-uplink") == 0) /* a100-nvswitch whose switch uplinks are shared (stub_cuda.c) */
    return &machines[4];
  return &machines[0];
}

/* Whether the scenario shows the default machine (four RTX 3090s), which
 * every scenario without a machine of its own does. */
static inline int stub_default_machine(void)
{
  return stub_machine()->gpus[0].bus == 0x01 && stub_machine()->ngpus == 4;
}

/* Number of GPUs the scenario shows (NVML and CUDA alike). */
static inline int stub_gpu_count(void)
{
  return stub_machine()->ngpus;
}

/* GPU i of the table, or NULL when the scenario has no GPU i. */
static inline const struct stub_gpu *stub_gpu(int i)
{
  return i >= 0 && i < stub_gpu_count() ? &stub_machine()->gpus[i] : NULL;
}

/* Whether GPUs a and b both exist and hang off the same host bridge. */
static inline int stub_same_bridge(int a, int b)
{
  const struct stub_gpu *ga = stub_gpu(a), *gb = stub_gpu(b);
  return ga && gb && ga->bridge == gb->bridge;
}

/* Where link l of GPU gpu ends: another GPU (*peer_gpu) or an NVSwitch
 * (*switch_bus); 0, or -1 when the GPU has no such link. */
static inline int stub_nvlink_peer(int gpu, unsigned l, int *peer_gpu, unsigned *switch_bus)
{
  const struct stub_machine *m = stub_machine();
  *peer_gpu = -1;
  *switch_bus = 0;
  if (!stub_gpu(gpu) || m->links == 0 || l >= (unsigned)m->links)
    return -1;
  if (m->wiring == STUB_NVL_SWITCH) {
    *switch_bus = m->switch_bus[l / 2];
    return 0;
  }
  int per = m->links / (m->ngpus - 1), k = (int)l / per; /* the k-th GPU other than gpu */
  *peer_gpu = k < gpu ? k : k + 1;
  return 0;
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
/* gr_chase: ns per dependent 8-byte load, by where the word is (plausible
 * PCIe Gen4 and peer round trips, and a GDDR6X miss) */
#define STUB_CHASE_HOST_NS 800.0
#define STUB_CHASE_PEER_NS 1000.0
#define STUB_CHASE_LOCAL_NS 500.0
#define STUB_DEVICE_MEM (256ull * STUB_MIB) /* what cuMemAlloc may take per GPU */

#endif
