/* Stand-in for AMD's ROCm SMI library (librocm_smi64): the symbols gpurig
 * resolves, with the types of src/backends/amd/rsmi_api.h, answering from the
 * tables below (README.md). Not AMD code. Every scenario without an AMD
 * machine of its own shows 0 GPUs, so the NVIDIA scenarios are unchanged. */
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "backends/amd/rsmi_api.h"
#include "stub.h"

#define EXPORT __attribute__((visibility("default")))

/* Exported functions (prototypes for -Wmissing-prototypes). */
EXPORT gr_rsmi_status rsmi_init(uint64_t flags);
EXPORT gr_rsmi_status rsmi_shut_down(void);
EXPORT gr_rsmi_status rsmi_status_string(gr_rsmi_status st, const char **out);
EXPORT gr_rsmi_status rsmi_version_get(struct gr_rsmi_version *v);
EXPORT gr_rsmi_status rsmi_version_str_get(gr_rsmi_enum comp, char *out, uint32_t len);
EXPORT gr_rsmi_status rsmi_num_monitor_devices(uint32_t *n);
EXPORT gr_rsmi_status rsmi_dev_pci_id_get(uint32_t dv, uint64_t *bdf);
EXPORT gr_rsmi_status rsmi_dev_id_get(uint32_t dv, uint16_t *id);
EXPORT gr_rsmi_status rsmi_dev_vendor_id_get(uint32_t dv, uint16_t *id);
EXPORT gr_rsmi_status rsmi_dev_name_get(uint32_t dv, char *name, size_t len);
EXPORT gr_rsmi_status rsmi_dev_vbios_version_get(uint32_t dv, char *out, uint32_t len);
EXPORT gr_rsmi_status rsmi_dev_unique_id_get(uint32_t dv, uint64_t *id);
EXPORT gr_rsmi_status rsmi_topo_get_numa_node_number(uint32_t dv, uint32_t *node);
EXPORT gr_rsmi_status rsmi_dev_memory_total_get(uint32_t dv, gr_rsmi_enum type, uint64_t *out);
EXPORT gr_rsmi_status rsmi_dev_memory_usage_get(uint32_t dv, gr_rsmi_enum type, uint64_t *out);
EXPORT gr_rsmi_status rsmi_dev_busy_percent_get(uint32_t dv, uint32_t *pct);
EXPORT gr_rsmi_status rsmi_dev_memory_busy_percent_get(uint32_t dv, uint32_t *pct);
EXPORT gr_rsmi_status rsmi_dev_gpu_clk_freq_get(uint32_t dv, gr_rsmi_enum clk, struct gr_rsmi_freq_v5 *out);
EXPORT gr_rsmi_status rsmi_dev_pci_bandwidth_get(uint32_t dv, struct gr_rsmi_pcie_bw_v5 *out);
EXPORT gr_rsmi_status rsmi_dev_pci_replay_counter_get(uint32_t dv, uint64_t *n);
EXPORT gr_rsmi_status rsmi_dev_power_ave_get(uint32_t dv, uint32_t sensor, uint64_t *uw);
EXPORT gr_rsmi_status rsmi_dev_power_cap_get(uint32_t dv, uint32_t sensor, uint64_t *uw);
EXPORT gr_rsmi_status rsmi_dev_power_cap_default_get(uint32_t dv, uint64_t *uw);
EXPORT gr_rsmi_status rsmi_dev_temp_metric_get(uint32_t dv, uint32_t sensor, gr_rsmi_enum metric, int64_t *milli);
EXPORT gr_rsmi_status rsmi_dev_fan_speed_get(uint32_t dv, uint32_t sensor, int64_t *speed);
EXPORT gr_rsmi_status rsmi_dev_fan_speed_max_get(uint32_t dv, uint32_t sensor, uint64_t *max);
EXPORT gr_rsmi_status rsmi_dev_ecc_enabled_get(uint32_t dv, uint64_t *blocks);
EXPORT gr_rsmi_status rsmi_dev_ecc_count_get(uint32_t dv, gr_rsmi_block block, struct gr_rsmi_error_count *ec);
EXPORT gr_rsmi_status rsmi_dev_gpu_metrics_info_get(uint32_t dv, struct gr_rsmi_gpu_metrics_head *m);
EXPORT gr_rsmi_status rsmi_dev_xgmi_error_status(uint32_t dv, gr_rsmi_enum *st);
EXPORT gr_rsmi_status rsmi_topo_get_link_type(uint32_t src, uint32_t dst, uint64_t *hops, gr_rsmi_enum *type);
EXPORT gr_rsmi_status rsmi_is_P2P_accessible(uint32_t src, uint32_t dst, bool *ok);
EXPORT gr_rsmi_status rsmi_minmax_bandwidth_get(uint32_t src, uint32_t dst, uint64_t *lo, uint64_t *hi);

/* One GPU of a machine: where it is and what differs from its siblings. */
struct rgpu {
  unsigned domain, bus;
  int numa;
};

/* An AMD machine a scenario shows. */
struct rmachine {
  const char *name, *vbios, *driver;
  unsigned device;             /* PCI device id, vendor 1002 */
  int ngpus;
  const struct rgpu *gpus;
  uint64_t vram, vis_vram;     /* bytes */
  unsigned lib_major;          /* rsmi_version_get: 7 writes ROCm 6's frequency layout, 5 the older one */
  unsigned cap_w;              /* default and current power cap */
  unsigned idle_w;             /* average power, + GPU index */
  int edge_c, junction_c, mem_c; /* current temperatures, + GPU index */
  int edge_crit_c, edge_emerg_c;
  int fan;                     /* 1: a fan (77 of 255); 0: passive, NOT_SUPPORTED */
  int ecc;                     /* 1: RAS blocks answer; 0: NOT_SUPPORTED (Radeon) */
  int unique_id;               /* 1: rsmi_dev_unique_id_get answers; 0: NOT_SUPPORTED */
  int xgmi_ring;               /* 1: the GPUs form an xGMI ring (a 4-card Infinity Fabric bridge) */
  unsigned nsclk, nmclk, npcie;
  const uint64_t *sclk, *mclk, *pcie;  /* Hz, Hz, T/s */
  uint32_t sclk_cur, mclk_cur, pcie_cur;
};

enum {
  RSTUB_LOST_GPU = 2,          /* "tinybox-red-vanish" loses it */
  RSTUB_ECC_GPU = 3,           /* mi50-bridge: its UMC block counted 2 corrected errors */
  RSTUB_ECC_COUNT = 2,
  RSTUB_XGMI_MBS = 46000,      /* xGMI bandwidth per direction the stand-in states, MB/s */
  RSTUB_XGMI_ERR_GPU = 1,      /* "mi50-xgmi-errors": its xGMI (WAFL) block counts corrected errors, */
  RSTUB_XGMI_ERR_START = 5,    /* 5 at its first answer, 1 more at each */
};

static const struct rmachine *rmachine(void)
{
  /* tests/data/trees/tinybox-red: one GPU per root port, each behind its card's own switch */
  static const struct rgpu red[] = {{0, 0x03, 0}, {0, 0x06, 0}, {0, 0x43, 0},
                                    {0, 0x83, 0}, {0, 0xc3, 0}, {0, 0xc6, 0}};
  /* tests/data/trees/mi50-bridge */
  static const struct rgpu mi50[] = {{0, 0x03, 0}, {0, 0x43, 0}, {0, 0x83, 0}, {0, 0xc3, 0}};
  /* tests/data/trees/mixed: beside two RTX 3090s */
  static const struct rgpu mixed[] = {{0, 0x0a, 0}, {0, 0x61, 0}};
  static const uint64_t red_sclk[] = {500000000ull, 2500000000ull};
  static const uint64_t red_mclk[] = {96000000ull, 456000000ull, 772000000ull, 1249000000ull};
  static const uint64_t red_pcie[] = {2500000000ull, 16000000000ull};
  static const uint64_t mi50_sclk[] = {930000000ull, 1725000000ull};
  static const uint64_t mi50_mclk[] = {350000000ull, 800000000ull, 1000000000ull};
  static const uint64_t mi50_pcie[] = {2500000000ull, 8000000000ull, 16000000000ull};
  static const struct rmachine machines[] = {
      {.name = "stand-in: none", .ngpus = 0},
      {.name = "AMD Radeon RX 7900 XTX", .vbios = "113-D7020100-102", .driver = "6.7.0", .device = 0x744c,
       .ngpus = 6, .gpus = red, .vram = 24 * STUB_GIB, .vis_vram = 24 * STUB_GIB, .lib_major = 7, .cap_w = 355,
       .idle_w = 18, .edge_c = 38, .junction_c = 45, .mem_c = 52, .edge_crit_c = 100, .edge_emerg_c = 105,
       .fan = 1, .nsclk = 2, .sclk = red_sclk, .nmclk = 4, .mclk = red_mclk, .npcie = 2, .pcie = red_pcie,
       .pcie_cur = 1},
#define RSTUB_RED_TAIL                                                                                                 \
  .vram = 24 * STUB_GIB, .vis_vram = 24 * STUB_GIB, .lib_major = 7, .cap_w = 355, .idle_w = 18, .edge_c = 38,       \
  .junction_c = 45, .mem_c = 52, .edge_crit_c = 100, .edge_emerg_c = 105, .fan = 1, .nsclk = 2, .sclk = red_sclk,   \
  .nmclk = 4, .mclk = red_mclk, .npcie = 2, .pcie = red_pcie, .pcie_cur = 1
      {.name = "AMD Radeon RX 7900 XTX", .vbios = "113-D7020100-102", .driver = "6.7.0", .device = 0x744c,
       .ngpus = 2, .gpus = mixed, RSTUB_RED_TAIL},
#undef RSTUB_RED_TAIL
      {.name = "AMD Radeon Instinct MI50 32GB", .vbios = "113-D1631700-111", .driver = "5.16.9.22.20",
       .device = 0x66a1, .ngpus = 4, .gpus = mi50, .vram = 32 * STUB_GIB, .vis_vram = 32 * STUB_GIB,
       .lib_major = 5, .cap_w = 300, .idle_w = 25, .edge_c = 30, .junction_c = 33, .mem_c = 31, .edge_crit_c = 100,
       .edge_emerg_c = 105, .ecc = 1, .unique_id = 1, .xgmi_ring = 1, .nsclk = 2, .sclk = mi50_sclk, .nmclk = 3,
       .mclk = mi50_mclk, .mclk_cur = 2, .npcie = 3, .pcie = mi50_pcie, .pcie_cur = 2},
  };
  const char *sc = stub_scenario();
  if (strncmp(sc, "tinybox-red", 11) == 0)
    return &machines[1];
  if (strcmp(sc, "mixed") == 0)
    return &machines[2];
  if (strcmp(sc, "mi50-bridge") == 0 || strcmp(sc, "mi50-xgmi-errors") == 0)
    return &machines[3];
  return &machines[0];
}

/* Whether GPU dv ran a matrix product in the last 60 s under the rocBLAS
 * stand-in (found with dlopen RTLD_NOLOAD, as the NVML stand-in finds
 * cuBLAS's): it then reads loaded, 97 % busy near its power cap at its top
 * clock, as a real one under burn's GEMM does. */
#define RSTUB_LOADED_S 60.0
static int loaded(uint32_t dv)
{
  static long long (*_Atomic last)(int);
  if (!atomic_load(&last)) {
    void *h = dlopen("librocblas.so.4", RTLD_NOLOAD | RTLD_LAZY);
    if (h) /* the handle stays open: the pointer must stay valid */
      atomic_store(&last, (long long (*)(int))dlsym(h, "gpurig_stub_gemm_last_ns"));
  }
  long long (*f)(int) = atomic_load(&last);
  long long t = f ? f((int)dv) : 0;
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return t > 0 && (double)((long long)ts.tv_sec * 1000000000LL + ts.tv_nsec - t) / 1e9 < RSTUB_LOADED_S;
}

/* A GPU index the machine has, answering: 0; FILE_ERROR for the lost GPU
 * (its sysfs files are gone); INVALID_ARGS past the last. */
static gr_rsmi_status dev_ok(uint32_t dv)
{
  if ((int)dv >= rmachine()->ngpus)
    return GR_RSMI_STATUS_INVALID_ARGS;
  if (dv == RSTUB_LOST_GPU && strcmp(stub_scenario(), "tinybox-red-vanish") == 0)
    return GR_RSMI_STATUS_FILE_ERROR;
  return GR_RSMI_STATUS_SUCCESS;
}

#define CHECK(dv)                                                                                                      \
  do {                                                                                                                 \
    gr_rsmi_status st_ = dev_ok(dv);                                                                                   \
    if (st_ != GR_RSMI_STATUS_SUCCESS)                                                                                 \
      return st_;                                                                                                      \
  } while (0)

static _Atomic int inits;

EXPORT gr_rsmi_status rsmi_init(uint64_t flags)
{
  (void)flags;
  if (strcmp(stub_scenario(), "initfail") == 0)
    return GR_RSMI_STATUS_INIT_ERROR;
  inits++;
  return GR_RSMI_STATUS_SUCCESS;
}

EXPORT gr_rsmi_status rsmi_shut_down(void)
{
  if (inits <= 0)
    return GR_RSMI_STATUS_INIT_ERROR;
  inits--;
  return GR_RSMI_STATUS_SUCCESS;
}

EXPORT gr_rsmi_status rsmi_status_string(gr_rsmi_status st, const char **out)
{
  static const char *const words[] = {"RSMI_STATUS_SUCCESS: The function has been executed successfully.",
                                      "RSMI_STATUS_INVALID_ARGS: Invalid arguments",
                                      "RSMI_STATUS_NOT_SUPPORTED: Feature not supported",
                                      "RSMI_STATUS_FILE_ERROR: Problem accessing a file.",
                                      "RSMI_STATUS_PERMISSION: Permission denied",
                                      "RSMI_STATUS_OUT_OF_RESOURCES: Out of resources",
                                      "RSMI_STATUS_INTERNAL_EXCEPTION: Internal exception",
                                      "RSMI_STATUS_INPUT_OUT_OF_BOUNDS: Input out of bounds",
                                      "RSMI_STATUS_INIT_ERROR: Initialization error"};
  if (!out)
    return GR_RSMI_STATUS_INVALID_ARGS;
  *out = st < sizeof(words) / sizeof(words[0]) ? words[st] : "An unknown error occurred";
  return GR_RSMI_STATUS_SUCCESS;
}

EXPORT gr_rsmi_status rsmi_version_get(struct gr_rsmi_version *v)
{
  v->major = rmachine()->lib_major ? rmachine()->lib_major : 5;
  v->minor = 0;
  v->patch = 0;
  v->build = "stand-in";
  return GR_RSMI_STATUS_SUCCESS;
}

EXPORT gr_rsmi_status rsmi_version_str_get(gr_rsmi_enum comp, char *out, uint32_t len)
{
  const struct rmachine *m = rmachine();
  if (comp != GR_RSMI_SW_COMP_DRIVER || !m->driver)
    return GR_RSMI_STATUS_NOT_SUPPORTED;
  snprintf(out, len, "%s", m->driver);
  return GR_RSMI_STATUS_SUCCESS;
}

EXPORT gr_rsmi_status rsmi_num_monitor_devices(uint32_t *n)
{
  *n = (uint32_t)rmachine()->ngpus;
  return GR_RSMI_STATUS_SUCCESS;
}

/* The bus id answers even for a lost GPU: the library keeps it from the start. */
EXPORT gr_rsmi_status rsmi_dev_pci_id_get(uint32_t dv, uint64_t *bdf)
{
  if ((int)dv >= rmachine()->ngpus)
    return GR_RSMI_STATUS_INVALID_ARGS;
  const struct rgpu *g = &rmachine()->gpus[dv];
  *bdf = (uint64_t)g->domain << 32 | (uint64_t)g->bus << 8;
  return GR_RSMI_STATUS_SUCCESS;
}

EXPORT gr_rsmi_status rsmi_dev_id_get(uint32_t dv, uint16_t *id)
{
  CHECK(dv);
  *id = (uint16_t)rmachine()->device;
  return GR_RSMI_STATUS_SUCCESS;
}

EXPORT gr_rsmi_status rsmi_dev_vendor_id_get(uint32_t dv, uint16_t *id)
{
  CHECK(dv);
  *id = 0x1002;
  return GR_RSMI_STATUS_SUCCESS;
}

EXPORT gr_rsmi_status rsmi_dev_name_get(uint32_t dv, char *name, size_t len)
{
  CHECK(dv);
  snprintf(name, len, "%s", rmachine()->name);
  return GR_RSMI_STATUS_SUCCESS;
}

EXPORT gr_rsmi_status rsmi_dev_vbios_version_get(uint32_t dv, char *out, uint32_t len)
{
  CHECK(dv);
  snprintf(out, len, "%s", rmachine()->vbios);
  return GR_RSMI_STATUS_SUCCESS;
}

EXPORT gr_rsmi_status rsmi_dev_unique_id_get(uint32_t dv, uint64_t *id)
{
  CHECK(dv);
  if (!rmachine()->unique_id)
    return GR_RSMI_STATUS_NOT_SUPPORTED;
  *id = 0x2f4c1a0e5d3b7000ull + dv;
  return GR_RSMI_STATUS_SUCCESS;
}

EXPORT gr_rsmi_status rsmi_topo_get_numa_node_number(uint32_t dv, uint32_t *node)
{
  CHECK(dv);
  *node = (uint32_t)rmachine()->gpus[dv].numa;
  return GR_RSMI_STATUS_SUCCESS;
}

EXPORT gr_rsmi_status rsmi_dev_memory_total_get(uint32_t dv, gr_rsmi_enum type, uint64_t *out)
{
  CHECK(dv);
  if (type == GR_RSMI_MEM_TYPE_VRAM)
    *out = rmachine()->vram;
  else if (type == GR_RSMI_MEM_TYPE_VIS_VRAM)
    *out = rmachine()->vis_vram;
  else
    return GR_RSMI_STATUS_NOT_SUPPORTED;
  return GR_RSMI_STATUS_SUCCESS;
}

/* Idle: the display and driver hold 300 MiB + 1 MiB per GPU index. */
EXPORT gr_rsmi_status rsmi_dev_memory_usage_get(uint32_t dv, gr_rsmi_enum type, uint64_t *out)
{
  CHECK(dv);
  if (type != GR_RSMI_MEM_TYPE_VRAM)
    return GR_RSMI_STATUS_NOT_SUPPORTED;
  *out = (300 + dv) * STUB_MIB;
  return GR_RSMI_STATUS_SUCCESS;
}

EXPORT gr_rsmi_status rsmi_dev_busy_percent_get(uint32_t dv, uint32_t *pct)
{
  CHECK(dv);
  *pct = loaded(dv) ? 97 : 0;
  return GR_RSMI_STATUS_SUCCESS;
}

EXPORT gr_rsmi_status rsmi_dev_memory_busy_percent_get(uint32_t dv, uint32_t *pct)
{
  CHECK(dv);
  *pct = loaded(dv) ? 60 : 0;
  return GR_RSMI_STATUS_SUCCESS;
}

/* A frequency table in the layout the machine's library version writes. */
static void fill_freq(void *out, unsigned n, const uint64_t *f, uint32_t cur)
{
  if (rmachine()->lib_major >= 6) {
    struct gr_rsmi_freq_v6 *v = out;
    memset(v, 0, sizeof(*v));
    v->num_supported = n;
    v->current = cur;
    memcpy(v->frequency, f, n * sizeof(*f));
  } else {
    struct gr_rsmi_freq_v5 *v = out;
    memset(v, 0, sizeof(*v));
    v->num_supported = n;
    v->current = cur;
    memcpy(v->frequency, f, n * sizeof(*f));
  }
}

EXPORT gr_rsmi_status rsmi_dev_gpu_clk_freq_get(uint32_t dv, gr_rsmi_enum clk, struct gr_rsmi_freq_v5 *out)
{
  const struct rmachine *m = rmachine();
  CHECK(dv);
  if (clk == GR_RSMI_CLK_TYPE_SYS)
    fill_freq(out, m->nsclk, m->sclk, loaded(dv) ? m->nsclk - 1 : m->sclk_cur);
  else if (clk == GR_RSMI_CLK_TYPE_MEM)
    fill_freq(out, m->nmclk, m->mclk, m->mclk_cur);
  else
    return GR_RSMI_STATUS_NOT_SUPPORTED;
  return GR_RSMI_STATUS_SUCCESS;
}

/* Every PCIe level at x16. */
EXPORT gr_rsmi_status rsmi_dev_pci_bandwidth_get(uint32_t dv, struct gr_rsmi_pcie_bw_v5 *out)
{
  const struct rmachine *m = rmachine();
  CHECK(dv);
  if (m->lib_major >= 6) {
    struct gr_rsmi_pcie_bw_v6 *v = (void *)out;
    fill_freq(&v->transfer_rate, m->npcie, m->pcie, m->pcie_cur);
    for (unsigned i = 0; i < GR_RSMI_MAX_NUM_FREQUENCIES_V6; i++)
      v->lanes[i] = i < m->npcie ? 16 : 0;
  } else {
    fill_freq(&out->transfer_rate, m->npcie, m->pcie, m->pcie_cur);
    for (unsigned i = 0; i < GR_RSMI_MAX_NUM_FREQUENCIES_V5; i++)
      out->lanes[i] = i < m->npcie ? 16 : 0;
  }
  return GR_RSMI_STATUS_SUCCESS;
}

/* "tinybox-red-replay": GPU2's link retries, its counter 40 higher at every
 * read (a riser that errs, as burn-replay's GPU2 on NVML) */
#define RSTUB_REPLAY_GPU 2
static atomic_uint replay_reads;

EXPORT gr_rsmi_status rsmi_dev_pci_replay_counter_get(uint32_t dv, uint64_t *n)
{
  CHECK(dv);
  *n = 0;
  if (dv == RSTUB_REPLAY_GPU && strcmp(stub_scenario(), "tinybox-red-replay") == 0)
    *n = 40ull * atomic_fetch_add(&replay_reads, 1);
  return GR_RSMI_STATUS_SUCCESS;
}

EXPORT gr_rsmi_status rsmi_dev_power_ave_get(uint32_t dv, uint32_t sensor, uint64_t *uw)
{
  CHECK(dv);
  if (sensor != 0)
    return GR_RSMI_STATUS_INVALID_ARGS;
  *uw = (uint64_t)((loaded(dv) ? rmachine()->cap_w - 25 : rmachine()->idle_w) + dv) * 1000000ull;
  return GR_RSMI_STATUS_SUCCESS;
}

EXPORT gr_rsmi_status rsmi_dev_power_cap_get(uint32_t dv, uint32_t sensor, uint64_t *uw)
{
  CHECK(dv);
  if (sensor != 0)
    return GR_RSMI_STATUS_INVALID_ARGS;
  *uw = (uint64_t)rmachine()->cap_w * 1000000ull;
  return GR_RSMI_STATUS_SUCCESS;
}

EXPORT gr_rsmi_status rsmi_dev_power_cap_default_get(uint32_t dv, uint64_t *uw)
{
  CHECK(dv);
  *uw = (uint64_t)rmachine()->cap_w * 1000000ull;
  return GR_RSMI_STATUS_SUCCESS;
}

EXPORT gr_rsmi_status rsmi_dev_temp_metric_get(uint32_t dv, uint32_t sensor, gr_rsmi_enum metric, int64_t *milli)
{
  const struct rmachine *m = rmachine();
  CHECK(dv);
  int c;
  if (metric == GR_RSMI_TEMP_CURRENT && sensor <= GR_RSMI_TEMP_TYPE_MEMORY)
    c = (sensor == GR_RSMI_TEMP_TYPE_EDGE ? m->edge_c : sensor == GR_RSMI_TEMP_TYPE_JUNCTION ? m->junction_c : m->mem_c) +
        (int)dv;
  else if (sensor == GR_RSMI_TEMP_TYPE_EDGE && metric == GR_RSMI_TEMP_CRITICAL)
    c = m->edge_crit_c;
  else if (sensor == GR_RSMI_TEMP_TYPE_EDGE && metric == GR_RSMI_TEMP_EMERGENCY)
    c = m->edge_emerg_c;
  else
    return GR_RSMI_STATUS_NOT_SUPPORTED;
  *milli = (int64_t)c * 1000;
  return GR_RSMI_STATUS_SUCCESS;
}

EXPORT gr_rsmi_status rsmi_dev_fan_speed_get(uint32_t dv, uint32_t sensor, int64_t *speed)
{
  CHECK(dv);
  if (!rmachine()->fan || sensor != 0)
    return GR_RSMI_STATUS_NOT_SUPPORTED;
  *speed = 77;
  return GR_RSMI_STATUS_SUCCESS;
}

EXPORT gr_rsmi_status rsmi_dev_fan_speed_max_get(uint32_t dv, uint32_t sensor, uint64_t *max)
{
  CHECK(dv);
  if (!rmachine()->fan || sensor != 0)
    return GR_RSMI_STATUS_NOT_SUPPORTED;
  *max = 255;
  return GR_RSMI_STATUS_SUCCESS;
}

EXPORT gr_rsmi_status rsmi_dev_ecc_enabled_get(uint32_t dv, uint64_t *blocks)
{
  CHECK(dv);
  if (!rmachine()->ecc)
    return GR_RSMI_STATUS_NOT_SUPPORTED;
  *blocks = 0x7f; /* UMC, SDMA, GFX, MMHUB, ATHUB, PCIE_BIF, HDP */
  return GR_RSMI_STATUS_SUCCESS;
}

/* "mi50-xgmi-errors": the xGMI block answers on every GPU, and one GPU's
 * corrected count grows with each call (a link going bad). */
static _Atomic unsigned xgmi_err_calls;

EXPORT gr_rsmi_status rsmi_dev_ecc_count_get(uint32_t dv, gr_rsmi_block block, struct gr_rsmi_error_count *ec)
{
  CHECK(dv);
  if (block == GR_RSMI_GPU_BLOCK_XGMI_WAFL && stub_scenario_is("mi50-xgmi-errors")) {
    ec->correctable_err = dv == RSTUB_XGMI_ERR_GPU ? RSTUB_XGMI_ERR_START + xgmi_err_calls++ : 0;
    ec->uncorrectable_err = 0;
    return GR_RSMI_STATUS_SUCCESS;
  }
  if (!rmachine()->ecc || !(block & 0x7f))
    return GR_RSMI_STATUS_NOT_SUPPORTED;
  ec->correctable_err = block == GR_RSMI_GPU_BLOCK_FIRST && dv == RSTUB_ECC_GPU ? RSTUB_ECC_COUNT : 0;
  ec->uncorrectable_err = 0;
  return GR_RSMI_STATUS_SUCCESS;
}

/* The metrics table: the head only, throttle status 0 (nothing holds the
 * clocks down); the rest of the caller's buffer stays as it was. */
EXPORT gr_rsmi_status rsmi_dev_gpu_metrics_info_get(uint32_t dv, struct gr_rsmi_gpu_metrics_head *m)
{
  const struct rmachine *r = rmachine();
  CHECK(dv);
  memset(m, 0, sizeof(*m));
  m->common_header.structure_size = sizeof(*m);
  m->common_header.format_revision = 1;
  m->common_header.content_revision = 3;
  m->temperature_edge = (uint16_t)(r->edge_c + (int)dv);
  m->throttle_status = 0;
  return GR_RSMI_STATUS_SUCCESS;
}

EXPORT gr_rsmi_status rsmi_dev_xgmi_error_status(uint32_t dv, gr_rsmi_enum *st)
{
  CHECK(dv);
  if (!rmachine()->xgmi_ring)
    return GR_RSMI_STATUS_NOT_SUPPORTED;
  *st = dv == RSTUB_XGMI_ERR_GPU && stub_scenario_is("mi50-xgmi-errors") ? GR_RSMI_XGMI_STATUS_MULTIPLE_ERRORS
                                                                         : GR_RSMI_XGMI_STATUS_NO_ERRORS;
  return GR_RSMI_STATUS_SUCCESS;
}

/* Hops between two GPUs of a ring of n: 1 to a neighbour, 2 across. */
static uint64_t ring_hops(uint32_t a, uint32_t b, int n)
{
  int d = (int)a - (int)b;
  d = d < 0 ? -d : d;
  return (uint64_t)(d < n - d ? d : n - d);
}

EXPORT gr_rsmi_status rsmi_topo_get_link_type(uint32_t src, uint32_t dst, uint64_t *hops, gr_rsmi_enum *type)
{
  const struct rmachine *m = rmachine();
  CHECK(src);
  CHECK(dst);
  if (src == dst)
    return GR_RSMI_STATUS_INVALID_ARGS;
  if (m->xgmi_ring) {
    *type = GR_RSMI_IOLINK_TYPE_XGMI;
    *hops = ring_hops(src, dst, m->ngpus);
  } else {
    *type = GR_RSMI_IOLINK_TYPE_PCIEXPRESS;
    *hops = (m->gpus[src].bus & 0xc0) == (m->gpus[dst].bus & 0xc0) ? 2 : 3; /* same host bridge: 2 */
  }
  return GR_RSMI_STATUS_SUCCESS;
}

/* Large BAR everywhere: every pair may reach the other's memory. */
EXPORT gr_rsmi_status rsmi_is_P2P_accessible(uint32_t src, uint32_t dst, bool *ok)
{
  CHECK(src);
  CHECK(dst);
  *ok = src != dst;
  return GR_RSMI_STATUS_SUCCESS;
}

/* Only pairs one xGMI hop apart have a bandwidth (rocm_smi.h says so). */
EXPORT gr_rsmi_status rsmi_minmax_bandwidth_get(uint32_t src, uint32_t dst, uint64_t *lo, uint64_t *hi)
{
  const struct rmachine *m = rmachine();
  CHECK(src);
  CHECK(dst);
  if (!m->xgmi_ring || src == dst || ring_hops(src, dst, m->ngpus) != 1)
    return GR_RSMI_STATUS_INVALID_ARGS;
  *lo = *hi = RSTUB_XGMI_MBS;
  return GR_RSMI_STATUS_SUCCESS;
}
