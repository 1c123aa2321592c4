/* The parts of AMD's ROCm SMI C API (librocm_smi64) that gpurig uses,
 * declared here so that gpurig builds without AMD's headers or library: the
 * library is opened at run time (base/dl.h). Only what is called is declared.
 * Result and enum types are the integer types those enums are compatible
 * with, so tests/abi/abi_rocm.c can assign every real function to the
 * pointer types below and let the compiler (-Werror) catch a wrong
 * prototype where rocm_smi/rocm_smi.h is installed (Debian's librocm-smi-dev).
 *
 * Source: rocm_smi/rocm_smi.h of rocm_smi_lib 5.2.3 (Debian bookworm) and
 * ROCm 6's rocm_smi.h for the one struct that changed (rsmi_frequencies_t,
 * below). */
#ifndef GPURIG_RSMI_API_H
#define GPURIG_RSMI_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef unsigned int gr_rsmi_status;   /* rsmi_status_t */
typedef unsigned int gr_rsmi_enum;     /* rsmi_memory_type_t, rsmi_clk_type_t, rsmi_temperature_metric_t,
                                          rsmi_sw_component_t, RSMI_IO_LINK_TYPE, rsmi_xgmi_status_t */
typedef unsigned long gr_rsmi_block;   /* rsmi_gpu_block_t: 64-bit values, so an unsigned long enum */

enum {
  GR_RSMI_STATUS_SUCCESS = 0,
  GR_RSMI_STATUS_INVALID_ARGS = 1,
  GR_RSMI_STATUS_NOT_SUPPORTED = 2,
  GR_RSMI_STATUS_FILE_ERROR = 3,       /* a sysfs file it reads is gone: a GPU off the bus */
  GR_RSMI_STATUS_PERMISSION = 4,
  GR_RSMI_STATUS_INIT_ERROR = 8,
  GR_RSMI_STATUS_NOT_FOUND = 10,
  GR_RSMI_INIT_FLAG_ALL_GPUS = 0x1,
  GR_RSMI_MEM_TYPE_VRAM = 0,
  GR_RSMI_MEM_TYPE_VIS_VRAM = 1,      /* the part the CPU reaches through the BAR */
  GR_RSMI_CLK_TYPE_SYS = 0,
  GR_RSMI_CLK_TYPE_MEM = 4,
  GR_RSMI_TEMP_CURRENT = 0,
  GR_RSMI_TEMP_CRITICAL = 5,           /* the driver's throttling point */
  GR_RSMI_TEMP_EMERGENCY = 7,          /* the point where the GPU shuts down */
  GR_RSMI_TEMP_TYPE_EDGE = 0,
  GR_RSMI_TEMP_TYPE_JUNCTION = 1,
  GR_RSMI_TEMP_TYPE_MEMORY = 2,
  GR_RSMI_SW_COMP_DRIVER = 0,
  GR_RSMI_IOLINK_TYPE_UNDEFINED = 0,
  GR_RSMI_IOLINK_TYPE_PCIEXPRESS = 1,
  GR_RSMI_IOLINK_TYPE_XGMI = 2,
  GR_RSMI_XGMI_STATUS_NO_ERRORS = 0,
  GR_RSMI_XGMI_STATUS_ERROR = 1,
  GR_RSMI_XGMI_STATUS_MULTIPLE_ERRORS = 2,
  GR_RSMI_MAX_NUM_FREQUENCIES_V5 = 32, /* RSMI_MAX_NUM_FREQUENCIES before ROCm 6 */
  GR_RSMI_MAX_NUM_FREQUENCIES_V6 = 33, /* ROCm 6 */
  GR_RSMI_GPU_METRICS_BYTES = 4096,    /* room for any rsmi_gpu_metrics_t (ROCm 6's is about 1 KiB) */
};
/* rsmi_gpu_block_t: the RAS blocks whose ECC counts gpurig adds up */
#define GR_RSMI_GPU_BLOCK_FIRST 0x1ul
#define GR_RSMI_GPU_BLOCK_LAST 0x2000ul /* RSMI_GPU_BLOCK_FUSE in 5.2.3 */
#define GR_RSMI_GPU_BLOCK_XGMI_WAFL 0x80ul /* the xGMI links' own block: their error counts */

/* rsmi_frequencies_t and rsmi_pcie_bandwidth_t changed in ROCm 6: a bool
 * has_deep_sleep comes first and the arrays hold 33 entries. gpurig asks
 * the library its version (rsmi_version_get) and reads the layout that
 * version writes; both are declared, the 5.x one under the header's tags. */
#define GR_RSMI_FREQ_MEMBERS_V5                                                                                        \
  uint32_t num_supported;                                                                                              \
  uint32_t current;                                                                                                    \
  uint64_t frequency[GR_RSMI_MAX_NUM_FREQUENCIES_V5];
struct gr_rsmi_freq_v5 {
  GR_RSMI_FREQ_MEMBERS_V5
};
struct gr_rsmi_freq_v6 {
  bool has_deep_sleep;
  uint32_t num_supported;
  uint32_t current;
  uint64_t frequency[GR_RSMI_MAX_NUM_FREQUENCIES_V6];
};
#define GR_RSMI_PCIE_BW_MEMBERS_V5                                                                                     \
  struct gr_rsmi_freq_v5 transfer_rate;                                                                                \
  uint32_t lanes[GR_RSMI_MAX_NUM_FREQUENCIES_V5];
struct gr_rsmi_pcie_bw_v5 {
  GR_RSMI_PCIE_BW_MEMBERS_V5
};
struct gr_rsmi_pcie_bw_v6 {
  struct gr_rsmi_freq_v6 transfer_rate;
  uint32_t lanes[GR_RSMI_MAX_NUM_FREQUENCIES_V6];
};
/* A buffer either layout fits in; the calls take it as the 5.x type. */
union gr_rsmi_freq_any {
  struct gr_rsmi_freq_v5 v5;
  struct gr_rsmi_freq_v6 v6;
};
union gr_rsmi_pcie_bw_any {
  struct gr_rsmi_pcie_bw_v5 v5;
  struct gr_rsmi_pcie_bw_v6 v6;
};

#define GR_RSMI_VERSION_MEMBERS                                                                                        \
  uint32_t major, minor, patch;                                                                                        \
  const char *build;
struct gr_rsmi_version {
  GR_RSMI_VERSION_MEMBERS
};
#define GR_RSMI_ERROR_COUNT_MEMBERS                                                                                    \
  uint64_t correctable_err;                                                                                            \
  uint64_t uncorrectable_err;
struct gr_rsmi_error_count {
  GR_RSMI_ERROR_COUNT_MEMBERS
};

/* The start of rsmi_gpu_metrics_t, up to the throttle status: the same in
 * every version (later versions add fields after it). The library writes its
 * whole struct, so the call gets GR_RSMI_GPU_METRICS_BYTES of room. */
#define GR_RSMI_GPU_METRICS_MEMBERS                                                                                    \
  struct {                                                                                                             \
    uint16_t structure_size;                                                                                           \
    uint8_t format_revision;                                                                                           \
    uint8_t content_revision;                                                                                          \
  } common_header;                                                                                                     \
  uint16_t temperature_edge, temperature_hotspot, temperature_mem, temperature_vrgfx, temperature_vrsoc,              \
      temperature_vrmem;                                                                                               \
  uint16_t average_gfx_activity, average_umc_activity, average_mm_activity;                                            \
  uint16_t average_socket_power;                                                                                       \
  uint64_t energy_accumulator;                                                                                         \
  uint64_t system_clock_counter;                                                                                       \
  uint16_t average_gfxclk_frequency, average_socclk_frequency, average_uclk_frequency, average_vclk0_frequency,      \
      average_dclk0_frequency, average_vclk1_frequency, average_dclk1_frequency;                                       \
  uint16_t current_gfxclk, current_socclk, current_uclk, current_vclk0, current_dclk0, current_vclk1, current_dclk1; \
  uint32_t throttle_status;
struct gr_rsmi_gpu_metrics_head {
  GR_RSMI_GPU_METRICS_MEMBERS
};
union gr_rsmi_gpu_metrics_buf {
  struct gr_rsmi_gpu_metrics_head head;
  unsigned char bytes[GR_RSMI_GPU_METRICS_BYTES];
  uint64_t align;
};

/* The struct types the calls take: gpurig's, or under tests/abi/abi_rocm.c
 * AMD's typedefs (their structs have no tags to share), whose layouts that
 * file compares with gpurig's member by member. */
#ifndef GR_RSMI_FREQ_T
#define GR_RSMI_FREQ_T struct gr_rsmi_freq_v5
#define GR_RSMI_PCIE_BW_T struct gr_rsmi_pcie_bw_v5
#define GR_RSMI_VERSION_T struct gr_rsmi_version
#define GR_RSMI_ERROR_COUNT_T struct gr_rsmi_error_count
#define GR_RSMI_GPU_METRICS_T struct gr_rsmi_gpu_metrics_head
#endif

typedef gr_rsmi_status (*gr_pfn_rsmi_init)(uint64_t flags);
typedef gr_rsmi_status (*gr_pfn_rsmi_shut_down)(void);
typedef gr_rsmi_status (*gr_pfn_rsmi_status_string)(gr_rsmi_status, const char **);
typedef gr_rsmi_status (*gr_pfn_rsmi_version_get)(GR_RSMI_VERSION_T *);
typedef gr_rsmi_status (*gr_pfn_rsmi_version_str_get)(gr_rsmi_enum component, char *, uint32_t len);
typedef gr_rsmi_status (*gr_pfn_rsmi_num_monitor_devices)(uint32_t *);
typedef gr_rsmi_status (*gr_pfn_rsmi_dev_u16)(uint32_t dv, uint16_t *); /* rsmi_dev_id_get, rsmi_dev_vendor_id_get */
typedef gr_rsmi_status (*gr_pfn_rsmi_dev_u32)(uint32_t dv, uint32_t *); /* busy percent, NUMA node */
typedef gr_rsmi_status (*gr_pfn_rsmi_dev_u64)(uint32_t dv, uint64_t *); /* pci id, unique id, replay
                                                                           counter, default power cap, ECC blocks */
typedef gr_rsmi_status (*gr_pfn_rsmi_dev_name_get)(uint32_t dv, char *, size_t len);
typedef gr_rsmi_status (*gr_pfn_rsmi_dev_vbios_version_get)(uint32_t dv, char *, uint32_t len);
typedef gr_rsmi_status (*gr_pfn_rsmi_dev_memory_get)(uint32_t dv, gr_rsmi_enum type, uint64_t *);
typedef gr_rsmi_status (*gr_pfn_rsmi_dev_pci_bandwidth_get)(uint32_t dv, GR_RSMI_PCIE_BW_T *);
typedef gr_rsmi_status (*gr_pfn_rsmi_dev_gpu_clk_freq_get)(uint32_t dv, gr_rsmi_enum clk, GR_RSMI_FREQ_T *);
typedef gr_rsmi_status (*gr_pfn_rsmi_dev_sensor_u64)(uint32_t dv, uint32_t sensor, uint64_t *); /* power, cap, fan max */
typedef gr_rsmi_status (*gr_pfn_rsmi_dev_fan_speed_get)(uint32_t dv, uint32_t sensor, int64_t *);
typedef gr_rsmi_status (*gr_pfn_rsmi_dev_temp_metric_get)(uint32_t dv, uint32_t sensor, gr_rsmi_enum metric,
                                                          int64_t *);
typedef gr_rsmi_status (*gr_pfn_rsmi_dev_ecc_count_get)(uint32_t dv, gr_rsmi_block block,
                                                        GR_RSMI_ERROR_COUNT_T *);
typedef gr_rsmi_status (*gr_pfn_rsmi_dev_gpu_metrics_info_get)(uint32_t dv, GR_RSMI_GPU_METRICS_T *);
typedef gr_rsmi_status (*gr_pfn_rsmi_dev_xgmi_error_status)(uint32_t dv, gr_rsmi_enum *);
typedef gr_rsmi_status (*gr_pfn_rsmi_topo_get_link_type)(uint32_t src, uint32_t dst, uint64_t *hops,
                                                         gr_rsmi_enum *type);
typedef gr_rsmi_status (*gr_pfn_rsmi_is_P2P_accessible)(uint32_t src, uint32_t dst, bool *);
typedef gr_rsmi_status (*gr_pfn_rsmi_minmax_bandwidth_get)(uint32_t src, uint32_t dst, uint64_t *min_mbs,
                                                           uint64_t *max_mbs);

#endif
