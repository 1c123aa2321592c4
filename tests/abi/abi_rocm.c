/* ABI check for AMD's ROCm SMI: gpurig declares the functions it calls
 * itself (src/backends/amd/rsmi_api.h). Compiled against the real header
 * (Debian's librocm-smi-dev: /usr/include/rocm_smi/rocm_smi.h), this file
 * assigns every function gpurig resolves to gpurig's pointer type and
 * compares every constant and struct layout, with -Werror: a prototype that
 * does not match fails, without any GPU. The ROCm 6 frequency layout has no
 * header here to compare with (Debian ships 5.2.3).
 *
 * GR_ABI_SELFTEST adds one deliberately wrong prototype; tests/abi/selftest.sh
 * compiles it that way too and expects the compiler to refuse it, so this
 * check cannot pass vacuously. */
#include <stddef.h>

#include <rocm_smi/rocm_smi.h>

/* the calls take AMD's typedefs here (theirs have no tags to share) */
#define GR_RSMI_FREQ_T rsmi_frequencies_t
#define GR_RSMI_PCIE_BW_T rsmi_pcie_bandwidth_t
#define GR_RSMI_VERSION_T rsmi_version_t
#define GR_RSMI_ERROR_COUNT_T rsmi_error_count_t
#define GR_RSMI_GPU_METRICS_T rsmi_gpu_metrics_t
#include "backends/amd/rsmi_api.h"

#define SAME_VALUE(ours, theirs) _Static_assert((long)(ours) == (long)(theirs), #theirs)
SAME_VALUE(GR_RSMI_STATUS_SUCCESS, RSMI_STATUS_SUCCESS);
SAME_VALUE(GR_RSMI_STATUS_INVALID_ARGS, RSMI_STATUS_INVALID_ARGS);
SAME_VALUE(GR_RSMI_STATUS_NOT_SUPPORTED, RSMI_STATUS_NOT_SUPPORTED);
SAME_VALUE(GR_RSMI_STATUS_FILE_ERROR, RSMI_STATUS_FILE_ERROR);
SAME_VALUE(GR_RSMI_STATUS_PERMISSION, RSMI_STATUS_PERMISSION);
SAME_VALUE(GR_RSMI_STATUS_INIT_ERROR, RSMI_STATUS_INIT_ERROR);
SAME_VALUE(GR_RSMI_STATUS_NOT_FOUND, RSMI_STATUS_NOT_FOUND);
SAME_VALUE(GR_RSMI_INIT_FLAG_ALL_GPUS, RSMI_INIT_FLAG_ALL_GPUS);
SAME_VALUE(GR_RSMI_MEM_TYPE_VRAM, RSMI_MEM_TYPE_VRAM);
SAME_VALUE(GR_RSMI_MEM_TYPE_VIS_VRAM, RSMI_MEM_TYPE_VIS_VRAM);
SAME_VALUE(GR_RSMI_CLK_TYPE_SYS, RSMI_CLK_TYPE_SYS);
SAME_VALUE(GR_RSMI_CLK_TYPE_MEM, RSMI_CLK_TYPE_MEM);
SAME_VALUE(GR_RSMI_TEMP_CURRENT, RSMI_TEMP_CURRENT);
SAME_VALUE(GR_RSMI_TEMP_CRITICAL, RSMI_TEMP_CRITICAL);
SAME_VALUE(GR_RSMI_TEMP_EMERGENCY, RSMI_TEMP_EMERGENCY);
SAME_VALUE(GR_RSMI_TEMP_TYPE_EDGE, RSMI_TEMP_TYPE_EDGE);
SAME_VALUE(GR_RSMI_TEMP_TYPE_JUNCTION, RSMI_TEMP_TYPE_JUNCTION);
SAME_VALUE(GR_RSMI_TEMP_TYPE_MEMORY, RSMI_TEMP_TYPE_MEMORY);
SAME_VALUE(GR_RSMI_SW_COMP_DRIVER, RSMI_SW_COMP_DRIVER);
SAME_VALUE(GR_RSMI_IOLINK_TYPE_UNDEFINED, RSMI_IOLINK_TYPE_UNDEFINED);
SAME_VALUE(GR_RSMI_IOLINK_TYPE_PCIEXPRESS, RSMI_IOLINK_TYPE_PCIEXPRESS);
SAME_VALUE(GR_RSMI_IOLINK_TYPE_XGMI, RSMI_IOLINK_TYPE_XGMI);
SAME_VALUE(GR_RSMI_XGMI_STATUS_NO_ERRORS, RSMI_XGMI_STATUS_NO_ERRORS);
SAME_VALUE(GR_RSMI_XGMI_STATUS_ERROR, RSMI_XGMI_STATUS_ERROR);
SAME_VALUE(GR_RSMI_XGMI_STATUS_MULTIPLE_ERRORS, RSMI_XGMI_STATUS_MULTIPLE_ERRORS);
SAME_VALUE(GR_RSMI_GPU_BLOCK_XGMI_WAFL, RSMI_GPU_BLOCK_XGMI_WAFL);
SAME_VALUE(GR_RSMI_MAX_NUM_FREQUENCIES_V5, RSMI_MAX_NUM_FREQUENCIES);
SAME_VALUE(GR_RSMI_GPU_BLOCK_FIRST, RSMI_GPU_BLOCK_FIRST);
SAME_VALUE(GR_RSMI_GPU_BLOCK_LAST, RSMI_GPU_BLOCK_LAST);
_Static_assert(sizeof(gr_rsmi_status) == sizeof(rsmi_status_t), "rsmi_status_t");
_Static_assert(sizeof(gr_rsmi_enum) == sizeof(RSMI_IO_LINK_TYPE), "RSMI_IO_LINK_TYPE");
_Static_assert(sizeof(gr_rsmi_block) == sizeof(rsmi_gpu_block_t), "rsmi_gpu_block_t");

/* gpurig's members under tags of this file, against AMD's */
struct gr_abi_freq { GR_RSMI_FREQ_MEMBERS_V5 };
struct gr_abi_pcie_bw { GR_RSMI_PCIE_BW_MEMBERS_V5 };
struct gr_abi_version { GR_RSMI_VERSION_MEMBERS };
struct gr_abi_error_count { GR_RSMI_ERROR_COUNT_MEMBERS };
struct gr_abi_metrics { GR_RSMI_GPU_METRICS_MEMBERS };
#define GR_ABI_SAME(ours, theirs, m) \
  _Static_assert(offsetof(ours, m) == offsetof(theirs, m) && sizeof(((ours *)0)->m) == sizeof(((theirs *)0)->m), #m)
_Static_assert(sizeof(struct gr_abi_freq) == sizeof(rsmi_frequencies_t), "rsmi_frequencies_t");
_Static_assert(sizeof(struct gr_rsmi_freq_v5) == sizeof(rsmi_frequencies_t), "gr_rsmi_freq_v5");
GR_ABI_SAME(struct gr_abi_freq, rsmi_frequencies_t, num_supported);
GR_ABI_SAME(struct gr_abi_freq, rsmi_frequencies_t, current);
GR_ABI_SAME(struct gr_abi_freq, rsmi_frequencies_t, frequency);
_Static_assert(sizeof(struct gr_abi_pcie_bw) == sizeof(rsmi_pcie_bandwidth_t), "rsmi_pcie_bandwidth_t");
GR_ABI_SAME(struct gr_abi_pcie_bw, rsmi_pcie_bandwidth_t, transfer_rate);
GR_ABI_SAME(struct gr_abi_pcie_bw, rsmi_pcie_bandwidth_t, lanes);
_Static_assert(sizeof(struct gr_abi_version) == sizeof(rsmi_version_t), "rsmi_version_t");
GR_ABI_SAME(struct gr_abi_version, rsmi_version_t, major);
GR_ABI_SAME(struct gr_abi_version, rsmi_version_t, minor);
GR_ABI_SAME(struct gr_abi_version, rsmi_version_t, patch);
GR_ABI_SAME(struct gr_abi_version, rsmi_version_t, build);
_Static_assert(sizeof(struct gr_abi_error_count) == sizeof(rsmi_error_count_t), "rsmi_error_count_t");
GR_ABI_SAME(struct gr_abi_error_count, rsmi_error_count_t, correctable_err);
GR_ABI_SAME(struct gr_abi_error_count, rsmi_error_count_t, uncorrectable_err);
/* the head of the metrics table gpurig reads, and room for all of it */
_Static_assert(sizeof(union gr_rsmi_gpu_metrics_buf) >= sizeof(rsmi_gpu_metrics_t), "metrics buffer");
GR_ABI_SAME(struct gr_abi_metrics, rsmi_gpu_metrics_t, common_header);
GR_ABI_SAME(struct gr_abi_metrics, rsmi_gpu_metrics_t, temperature_edge);
GR_ABI_SAME(struct gr_abi_metrics, rsmi_gpu_metrics_t, average_socket_power);
GR_ABI_SAME(struct gr_abi_metrics, rsmi_gpu_metrics_t, energy_accumulator);
GR_ABI_SAME(struct gr_abi_metrics, rsmi_gpu_metrics_t, system_clock_counter);
GR_ABI_SAME(struct gr_abi_metrics, rsmi_gpu_metrics_t, current_dclk1);
GR_ABI_SAME(struct gr_abi_metrics, rsmi_gpu_metrics_t, throttle_status);

void gr_abi_rocm_smi(void);
void gr_abi_rocm_smi(void)
{
  gr_pfn_rsmi_init f01 = rsmi_init;
  gr_pfn_rsmi_shut_down f02 = rsmi_shut_down;
  gr_pfn_rsmi_status_string f03 = rsmi_status_string;
  gr_pfn_rsmi_version_get f04 = rsmi_version_get;
  gr_pfn_rsmi_version_str_get f05 = rsmi_version_str_get;
  gr_pfn_rsmi_num_monitor_devices f06 = rsmi_num_monitor_devices;
  gr_pfn_rsmi_dev_u16 f07 = rsmi_dev_id_get, f08 = rsmi_dev_vendor_id_get;
  gr_pfn_rsmi_dev_u32 f09 = rsmi_dev_busy_percent_get, f10 = rsmi_dev_memory_busy_percent_get,
                      f11 = rsmi_topo_get_numa_node_number;
  gr_pfn_rsmi_dev_u64 f12 = rsmi_dev_pci_id_get, f13 = rsmi_dev_unique_id_get, f14 = rsmi_dev_pci_replay_counter_get,
                      f15 = rsmi_dev_power_cap_default_get, f16 = rsmi_dev_ecc_enabled_get;
  gr_pfn_rsmi_dev_name_get f17 = rsmi_dev_name_get;
  gr_pfn_rsmi_dev_vbios_version_get f18 = rsmi_dev_vbios_version_get;
  gr_pfn_rsmi_dev_memory_get f19 = rsmi_dev_memory_total_get, f20 = rsmi_dev_memory_usage_get;
  gr_pfn_rsmi_dev_pci_bandwidth_get f21 = rsmi_dev_pci_bandwidth_get;
  gr_pfn_rsmi_dev_gpu_clk_freq_get f22 = rsmi_dev_gpu_clk_freq_get;
  gr_pfn_rsmi_dev_sensor_u64 f23 = rsmi_dev_power_ave_get, f24 = rsmi_dev_power_cap_get,
                             f25 = rsmi_dev_fan_speed_max_get;
  gr_pfn_rsmi_dev_fan_speed_get f26 = rsmi_dev_fan_speed_get;
  gr_pfn_rsmi_dev_temp_metric_get f27 = rsmi_dev_temp_metric_get;
  gr_pfn_rsmi_dev_ecc_count_get f28 = rsmi_dev_ecc_count_get;
  gr_pfn_rsmi_dev_gpu_metrics_info_get f29 = rsmi_dev_gpu_metrics_info_get;
  gr_pfn_rsmi_dev_xgmi_error_status f30 = rsmi_dev_xgmi_error_status;
  gr_pfn_rsmi_topo_get_link_type f31 = rsmi_topo_get_link_type;
  gr_pfn_rsmi_is_P2P_accessible f32 = rsmi_is_P2P_accessible;
  gr_pfn_rsmi_minmax_bandwidth_get f33 = rsmi_minmax_bandwidth_get;
#ifdef GR_ABI_SELFTEST
  /* deliberately wrong: the temperature as a 32-bit int, not the int64_t millidegrees */
  typedef gr_rsmi_status (*wrong_temp)(uint32_t, uint32_t, gr_rsmi_enum, int *);
  wrong_temp bad = rsmi_dev_temp_metric_get;
  (void)bad;
#endif
  void *all[] = {f01, f02, f03, f04, f05, f06, f07, f08, f09, f10, f11, f12, f13, f14, f15, f16, f17,
                 f18, f19, f20, f21, f22, f23, f24, f25, f26, f27, f28, f29, f30, f31, f32, f33};
  (void)all;
}
