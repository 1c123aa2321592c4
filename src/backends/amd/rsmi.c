/* AMD backend over ROCm SMI (librocm_smi64), opened with dlopen. A call the
 * library lacks or a NOT_SUPPORTED answer (ECC on a Radeon, a fan on a
 * passive Instinct card) leaves the value invalid, never 0. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/dl.h"
#include "base/util.h"
#include "backends/amd/amd.h"
#include "backends/amd/rsmi_api.h"

/* The names ROCm releases ship it under, newest first: ROCm 6.1 and later
 * .so.7, 6.0 .so.6, 5.x .so.5, Debian's packaged 5.2.3 .so.1; then the
 * development link. */
static const char *const sonames[] = {"librocm_smi64.so.7", "librocm_smi64.so.6", "librocm_smi64.so.5",
                                      "librocm_smi64.so.1", "librocm_smi64.so"};

/* Why the last call failed, per thread (gpu.h). */
static _Thread_local char tl_err[256];

struct rsmi {
  void *lib;
  const char *soname;
  bool started;
  bool v6;          /* the library writes ROCm 6's frequency layout */
  unsigned count;
  char (*busid)[32];
  gr_pfn_rsmi_init Init;
  gr_pfn_rsmi_shut_down ShutDown;
  gr_pfn_rsmi_status_string StatusString;
  gr_pfn_rsmi_version_get VersionGet;
  gr_pfn_rsmi_version_str_get VersionStrGet;
  gr_pfn_rsmi_num_monitor_devices NumMonitorDevices;
  gr_pfn_rsmi_dev_u16 DevId, DevVendorId;
  gr_pfn_rsmi_dev_u32 BusyPercent, MemBusyPercent, NumaNode;
  gr_pfn_rsmi_dev_u64 PciId, UniqueId, ReplayCounter, PowerCapDefault, EccEnabled;
  gr_pfn_rsmi_dev_name_get DevName;
  gr_pfn_rsmi_dev_vbios_version_get Vbios;
  gr_pfn_rsmi_dev_memory_get MemTotal, MemUsage;
  gr_pfn_rsmi_dev_pci_bandwidth_get PciBandwidth;
  gr_pfn_rsmi_dev_gpu_clk_freq_get ClkFreq;
  gr_pfn_rsmi_dev_sensor_u64 PowerAve, PowerCap, FanMax;
  gr_pfn_rsmi_dev_fan_speed_get FanSpeed;
  gr_pfn_rsmi_dev_temp_metric_get Temp;
  gr_pfn_rsmi_dev_ecc_count_get EccCount;
  gr_pfn_rsmi_dev_gpu_metrics_info_get GpuMetrics;
  gr_pfn_rsmi_dev_xgmi_error_status XgmiError;
  gr_pfn_rsmi_topo_get_link_type LinkType;
  gr_pfn_rsmi_is_P2P_accessible P2P;
  gr_pfn_rsmi_minmax_bandwidth_get MinMaxBandwidth;
};

#define SYM(field, req, ...) {(void **)&r->field, {__VA_ARGS__}, req}

static int bind_symbols(struct rsmi *r, char *why, size_t cap)
{
  const struct gr_dl_sym syms[] = {
      SYM(Init, true, "rsmi_init"),
      SYM(ShutDown, true, "rsmi_shut_down"),
      SYM(NumMonitorDevices, true, "rsmi_num_monitor_devices"),
      SYM(PciId, true, "rsmi_dev_pci_id_get"),
      SYM(StatusString, false, "rsmi_status_string"),
      SYM(VersionGet, false, "rsmi_version_get"),
      SYM(VersionStrGet, false, "rsmi_version_str_get"),
      SYM(DevId, false, "rsmi_dev_id_get"),
      SYM(DevVendorId, false, "rsmi_dev_vendor_id_get"),
      SYM(BusyPercent, false, "rsmi_dev_busy_percent_get"),
      SYM(MemBusyPercent, false, "rsmi_dev_memory_busy_percent_get"),
      SYM(NumaNode, false, "rsmi_topo_get_numa_node_number"),
      SYM(UniqueId, false, "rsmi_dev_unique_id_get"),
      SYM(ReplayCounter, false, "rsmi_dev_pci_replay_counter_get"),
      SYM(PowerCapDefault, false, "rsmi_dev_power_cap_default_get"),
      SYM(EccEnabled, false, "rsmi_dev_ecc_enabled_get"),
      SYM(DevName, false, "rsmi_dev_name_get"),
      SYM(Vbios, false, "rsmi_dev_vbios_version_get"),
      SYM(MemTotal, false, "rsmi_dev_memory_total_get"),
      SYM(MemUsage, false, "rsmi_dev_memory_usage_get"),
      SYM(PciBandwidth, false, "rsmi_dev_pci_bandwidth_get"),
      SYM(ClkFreq, false, "rsmi_dev_gpu_clk_freq_get"),
      SYM(PowerAve, false, "rsmi_dev_power_ave_get"),
      SYM(PowerCap, false, "rsmi_dev_power_cap_get"),
      SYM(FanMax, false, "rsmi_dev_fan_speed_max_get"),
      SYM(FanSpeed, false, "rsmi_dev_fan_speed_get"),
      SYM(Temp, false, "rsmi_dev_temp_metric_get"),
      SYM(EccCount, false, "rsmi_dev_ecc_count_get"),
      SYM(GpuMetrics, false, "rsmi_dev_gpu_metrics_info_get"),
      SYM(XgmiError, false, "rsmi_dev_xgmi_error_status"),
      SYM(LinkType, false, "rsmi_topo_get_link_type"),
      SYM(P2P, false, "rsmi_is_P2P_accessible"),
      SYM(MinMaxBandwidth, false, "rsmi_minmax_bandwidth_get"),
  };
  return gr_dl_bind(r->lib, r->soname, syms, sizeof(syms) / sizeof(syms[0]), why, cap);
}

static const char *errstr(const struct rsmi *r, gr_rsmi_status st)
{
  const char *s = NULL;
  if (!r->StatusString || r->StatusString(st, &s) != GR_RSMI_STATUS_SUCCESS || !s)
    return "unknown ROCm SMI error";
  return s;
}

static void rsmi_shutdown(void *state)
{
  struct rsmi *r = state;
  if (!r)
    return;
  if (r->started)
    r->ShutDown();
  gr_dl_close(r->lib);
  free(r->busid);
  free(r);
}

/* The first of the library's names that opens; why lists the last failure. */
static void *open_library(struct rsmi *r, char *why, size_t cap)
{
  for (size_t i = 0; i < sizeof(sonames) / sizeof(sonames[0]); i++) {
    void *h = gr_dl_open(sonames[i], why, cap);
    if (h) {
      r->soname = sonames[i];
      return h;
    }
  }
  return NULL;
}

/* rsmi_init with the library's own complaints kept off stderr: on a
 * machine without amdgpu it prints its failure there ("Failed to open drm
 * root directory ..."), which gpurig reports itself, in its own words, with
 * the library's first line in said (empty when it printed nothing). */
static gr_rsmi_status init_quietly(struct rsmi *r, char *said, size_t cap)
{
  said[0] = '\0';
  fflush(stderr);
  FILE *tf = tmpfile();
  int saved = tf ? dup(STDERR_FILENO) : -1;
  if (saved < 0 || dup2(fileno(tf), STDERR_FILENO) < 0) {
    if (saved >= 0)
      close(saved);
    if (tf)
      fclose(tf);
    return r->Init(0); /* no way to hold its words back: let them through */
  }
  gr_rsmi_status st = r->Init(0);
  dup2(saved, STDERR_FILENO);
  close(saved);
  rewind(tf);
  if (fgets(said, (int)cap, tf))
    said[strcspn(said, "\n")] = '\0';
  fclose(tf);
  return st;
}

static int rsmi_init(void **state, char *why, size_t cap)
{
  struct rsmi *r = xcalloc(1, sizeof(*r));
  char detail[512];
  r->lib = open_library(r, detail, sizeof(detail));
  if (!r->lib) {
    snprintf(why, cap, "no ROCm SMI library found (%s)", detail);
    goto fail;
  }
  if (bind_symbols(r, why, cap) != 0)
    goto fail;
  char said[160];
  gr_rsmi_status st = init_quietly(r, said, sizeof(said));
  if (st != GR_RSMI_STATUS_SUCCESS) {
    snprintf(why, cap, "ROCm SMI did not start: %s: rsmi_init: %s%s%s%s", r->soname, errstr(r, st),
             said[0] ? " (it said: " : "", said, said[0] ? ")" : "");
    if (st == GR_RSMI_STATUS_INIT_ERROR && strlen(why) + 40 < cap)
      strcat(why, "; is the amdgpu kernel module loaded?");
    goto fail;
  }
  r->started = true;
  struct gr_rsmi_version v = {0};
  /* ROCm 6 (library 6 and 7) changed rsmi_frequencies_t; without the call it is a 5.x library */
  r->v6 = r->VersionGet && r->VersionGet(&v) == GR_RSMI_STATUS_SUCCESS && v.major >= 6;
  *state = r;
  return 0;
fail:
  rsmi_shutdown(r);
  *state = NULL;
  return -1;
}

static const char *rsmi_last_error(void *state)
{
  (void)state;
  return tl_err;
}

static bool busid_of(const struct rsmi *r, unsigned gpu, char *out, size_t cap)
{
  uint64_t bdf = 0;
  if (r->PciId(gpu, &bdf) != GR_RSMI_STATUS_SUCCESS)
    return false;
  /* BDFID: domain << 32 | bus << 8 | device << 3 | function */
  snprintf(out, cap, "%04x:%02x:%02x.%x", (unsigned)(bdf >> 32) & 0xffff, (unsigned)(bdf >> 8) & 0xff,
           (unsigned)(bdf >> 3) & 0x1f, (unsigned)bdf & 0x7);
  return true;
}

static int rsmi_enumerate(void *state, unsigned *count)
{
  struct rsmi *r = state;
  uint32_t n = 0;
  gr_rsmi_status st = r->NumMonitorDevices(&n);
  if (st != GR_RSMI_STATUS_SUCCESS) {
    snprintf(tl_err, sizeof(tl_err), "rsmi_num_monitor_devices: %s", errstr(r, st));
    return -1;
  }
  free(r->busid);
  r->count = n;
  r->busid = xcalloc(n ? n : 1, sizeof(*r->busid));
  for (unsigned i = 0; i < n; i++)
    if (!busid_of(r, i, r->busid[i], sizeof(r->busid[i])))
      r->busid[i][0] = '\0';
  *count = n;
  return 0;
}

static void set(struct gr_metric *m, double v)
{
  m->v = v;
  m->ok = true;
}

static int check_gpu(const struct rsmi *r, unsigned gpu)
{
  if (gpu < r->count)
    return 0;
  snprintf(tl_err, sizeof(tl_err), "GPU%u: no such GPU (%u found)", gpu, r->count);
  return -1;
}

/* A temperature in °C, or invalid. */
static void get_temp(const struct rsmi *r, unsigned gpu, unsigned sensor, unsigned metric, struct gr_metric *m)
{
  int64_t milli = 0;
  if (r->Temp && r->Temp(gpu, sensor, metric, &milli) == GR_RSMI_STATUS_SUCCESS)
    set(m, (double)milli / 1000.0);
}

static void get_u64(gr_pfn_rsmi_dev_u64 fn, unsigned gpu, double scale, struct gr_metric *m)
{
  uint64_t v = 0;
  if (fn && fn(gpu, &v) == GR_RSMI_STATUS_SUCCESS)
    set(m, (double)v * scale);
}

/* PCIe generation from a transfer rate in T/s (2.5e9 Gen1 ... 64e9 Gen6). */
static int pcie_gen_of(uint64_t ts)
{
  static const uint64_t rates[] = {2500000000ull, 5000000000ull, 8000000000ull, 16000000000ull, 32000000000ull,
                                   64000000000ull};
  for (int g = 0; g < 6; g++)
    if (ts == rates[g])
      return g + 1;
  return 0;
}

/* The link's current and highest generation and width, in whichever layout
 * the library writes. The highest are the top of what the driver's power
 * states allow, which is what the GPU can train to. */
static void read_pcie_link(const struct rsmi *r, unsigned gpu, struct gr_metric *cg, struct gr_metric *cw,
                           struct gr_metric *mg, struct gr_metric *mw)
{
  union gr_rsmi_pcie_bw_any bw;
  memset(&bw, 0, sizeof(bw));
  if (!r->PciBandwidth || r->PciBandwidth(gpu, &bw.v5) != GR_RSMI_STATUS_SUCCESS)
    return;
  uint32_t n = r->v6 ? bw.v6.transfer_rate.num_supported : bw.v5.transfer_rate.num_supported;
  uint32_t cur = r->v6 ? bw.v6.transfer_rate.current : bw.v5.transfer_rate.current;
  unsigned maxn = r->v6 ? GR_RSMI_MAX_NUM_FREQUENCIES_V6 : GR_RSMI_MAX_NUM_FREQUENCIES_V5;
  if (n == 0 || n > maxn || cur >= n)
    return;
  int gmax = 0;
  uint32_t wmax = 0;
  for (uint32_t i = 0; i < n; i++) {
    uint64_t f = r->v6 ? bw.v6.transfer_rate.frequency[i] : bw.v5.transfer_rate.frequency[i];
    uint32_t w = r->v6 ? bw.v6.lanes[i] : bw.v5.lanes[i];
    if (pcie_gen_of(f) > gmax)
      gmax = pcie_gen_of(f);
    if (w > wmax)
      wmax = w;
    if (i == cur && pcie_gen_of(f) && cg)
      set(cg, pcie_gen_of(f));
    if (i == cur && w && cw)
      set(cw, w);
  }
  if (gmax && mg)
    set(mg, gmax);
  if (wmax && mw)
    set(mw, wmax);
}

/* Links whose far end is one hop away over xGMI: the GPU's direct peers. */
static unsigned xgmi_peers(const struct rsmi *r, unsigned gpu, unsigned *peers, unsigned cap)
{
  unsigned n = 0;
  for (unsigned j = 0; r->LinkType && j < r->count && n < cap; j++) {
    uint64_t hops = 0;
    gr_rsmi_enum type = GR_RSMI_IOLINK_TYPE_UNDEFINED;
    if (j != gpu && r->LinkType(gpu, j, &hops, &type) == GR_RSMI_STATUS_SUCCESS && type == GR_RSMI_IOLINK_TYPE_XGMI &&
        hops == 1)
      peers[n++] = j;
  }
  return n;
}

static void read_clocks(const struct rsmi *r, unsigned gpu, unsigned clk, struct gr_metric *m, struct gr_metric *top);

static int rsmi_static_info(void *state, unsigned gpu, struct gr_gpu_static *s)
{
  struct rsmi *r = state;
  memset(s, 0, sizeof(*s));
  if (check_gpu(r, gpu) != 0)
    return -1;
  if (!busid_of(r, gpu, s->busid, sizeof(s->busid))) {
    snprintf(tl_err, sizeof(tl_err), "GPU%u: rsmi_dev_pci_id_get failed", gpu);
    return -1;
  }
  uint16_t id = 0;
  if (r->DevVendorId && r->DevVendorId(gpu, &id) == GR_RSMI_STATUS_SUCCESS)
    s->vendor = id;
  if (r->DevId && r->DevId(gpu, &id) == GR_RSMI_STATUS_SUCCESS)
    s->device = id;
  if (r->DevName && r->DevName(gpu, s->name, sizeof(s->name)) != GR_RSMI_STATUS_SUCCESS)
    s->name[0] = '\0';
  if (r->Vbios && r->Vbios(gpu, s->vbios, sizeof(s->vbios)) != GR_RSMI_STATUS_SUCCESS)
    s->vbios[0] = '\0';
  s->name[sizeof(s->name) - 1] = s->vbios[sizeof(s->vbios) - 1] = '\0';
  uint64_t v = 0;
  if (r->UniqueId && r->UniqueId(gpu, &v) == GR_RSMI_STATUS_SUCCESS)
    snprintf(s->uuid, sizeof(s->uuid), "0x%016llx", (unsigned long long)v);
  if (r->MemTotal && r->MemTotal(gpu, GR_RSMI_MEM_TYPE_VRAM, &v) == GR_RSMI_STATUS_SUCCESS)
    set(&s->mem_gib, (double)v / (1024.0 * 1024 * 1024));
  if (r->MemTotal && r->MemTotal(gpu, GR_RSMI_MEM_TYPE_VIS_VRAM, &v) == GR_RSMI_STATUS_SUCCESS)
    set(&s->bar1_gib, (double)v / (1024.0 * 1024 * 1024));
  read_pcie_link(r, gpu, NULL, NULL, &s->max_link_gen, &s->max_link_width);
  read_clocks(r, gpu, GR_RSMI_CLK_TYPE_SYS, NULL, &s->max_sm_clock_mhz);
  read_clocks(r, gpu, GR_RSMI_CLK_TYPE_MEM, NULL, &s->max_mem_clock_mhz);
  get_u64(r->PowerCapDefault, gpu, 1e-6, &s->power_default_w);
  uint32_t node = 0;
  if (r->NumaNode && r->NumaNode(gpu, &node) == GR_RSMI_STATUS_SUCCESS && node != 0xffffffffu)
    set(&s->numa_node, node);
  get_temp(r, gpu, GR_RSMI_TEMP_TYPE_EDGE, GR_RSMI_TEMP_CRITICAL, &s->temp_slowdown_c);
  get_temp(r, gpu, GR_RSMI_TEMP_TYPE_EDGE, GR_RSMI_TEMP_EMERGENCY, &s->temp_shutdown_c);
  if (r->EccEnabled && r->EccEnabled(gpu, &v) == GR_RSMI_STATUS_SUCCESS)
    set(&s->ecc_enabled, v ? 1 : 0);
  if (r->LinkType) {
    unsigned peers[64];
    set(&s->gpulinks_active, xgmi_peers(r, gpu, peers, 64));
  }
  return 0;
}

/* A clock now (m) or its highest level (top), in MHz, from the driver's
 * table of levels (Hz) in whichever layout the library writes. */
static void read_clocks(const struct rsmi *r, unsigned gpu, unsigned clk, struct gr_metric *m, struct gr_metric *top)
{
  union gr_rsmi_freq_any f;
  memset(&f, 0, sizeof(f));
  if (!r->ClkFreq || r->ClkFreq(gpu, clk, &f.v5) != GR_RSMI_STATUS_SUCCESS)
    return;
  uint32_t n = r->v6 ? f.v6.num_supported : f.v5.num_supported, cur = r->v6 ? f.v6.current : f.v5.current;
  if (!n || n > (r->v6 ? GR_RSMI_MAX_NUM_FREQUENCIES_V6 : GR_RSMI_MAX_NUM_FREQUENCIES_V5))
    return;
  const uint64_t *hz = r->v6 ? f.v6.frequency : f.v5.frequency;
  if (m && cur < n)
    set(m, (double)hz[cur] / 1e6);
  uint64_t hi = 0;
  for (uint32_t i = 0; i < n; i++)
    hi = hz[i] > hi ? hz[i] : hi;
  if (top && hi)
    set(top, (double)hi / 1e6);
}

/* The SMU's throttler bits in the kernel's chip-independent layout
 * (amdgpu_smu.h SMU_THROTTLER_*; the low 32 bits are the power and current
 * limits): PPT0-3, SPL, FPPT, SPPT, SPPT_APU are power caps, TDC and EDC
 * current limits are the board's hardware brake. gpurig keeps a reading
 * only when it knows every bit set: other bits differ between chips. */
#define SMU_POWER_BITS 0x000000ffu
#define SMU_CURRENT_BITS 0x00ff0000u

static void read_throttle(const struct rsmi *r, unsigned gpu, struct gr_gpu_dynamic *dy)
{
  union gr_rsmi_gpu_metrics_buf m;
  memset(&m, 0, sizeof(m));
  if (!r->GpuMetrics || r->GpuMetrics(gpu, &m.head) != GR_RSMI_STATUS_SUCCESS)
    return;
  uint32_t t = m.head.throttle_status;
  if (t & ~(SMU_POWER_BITS | SMU_CURRENT_BITS))
    return; /* a bit whose meaning depends on the chip: unknown, not "no reason" */
  unsigned bits = 0;
  if (t & SMU_POWER_BITS)
    bits |= GR_THR_SW_POWER;
  if (t & SMU_CURRENT_BITS)
    bits |= GR_THR_HW_SLOWDOWN;
  if (!t && dy->util_gpu_pct.ok && dy->util_gpu_pct.v == 0)
    bits |= GR_THR_IDLE; /* nothing held the clocks down and nothing ran */
  set(&dy->throttle, bits);
}

/* ECC totals over the RAS blocks (UMC, SDMA, GFX, ...); a Radeon answers
 * NOT_SUPPORTED for each, which leaves both invalid. */
static void read_ecc(const struct rsmi *r, unsigned gpu, struct gr_gpu_dynamic *dy)
{
  double corr = 0, unc = 0;
  bool any = false;
  for (gr_rsmi_block b = GR_RSMI_GPU_BLOCK_FIRST; r->EccCount && b <= GR_RSMI_GPU_BLOCK_LAST; b <<= 1) {
    struct gr_rsmi_error_count ec = {0};
    if (r->EccCount(gpu, b, &ec) != GR_RSMI_STATUS_SUCCESS)
      continue;
    corr += (double)ec.correctable_err;
    unc += (double)ec.uncorrectable_err;
    any = true;
  }
  if (any) {
    set(&dy->ecc_corrected, corr);
    set(&dy->ecc_uncorrected, unc);
  }
}

/* xGMI errors: the counts of the links' RAS block and the driver's error
 * state. A GPU without xGMI (a Radeon) answers NOT_SUPPORTED: both invalid.
 * The block's counts are in the ECC totals too, as in amd-smi's. */
static void read_xgmi(const struct rsmi *r, unsigned gpu, struct gr_gpu_dynamic *dy)
{
  struct gr_rsmi_error_count ec = {0};
  gr_rsmi_enum st = GR_RSMI_XGMI_STATUS_NO_ERRORS;
  if (r->EccCount && r->EccCount(gpu, GR_RSMI_GPU_BLOCK_XGMI_WAFL, &ec) == GR_RSMI_STATUS_SUCCESS) {
    set(&dy->gpulink_corrected, (double)ec.correctable_err);
    set(&dy->gpulink_uncorrected, (double)ec.uncorrectable_err);
  }
  if (r->XgmiError && r->XgmiError(gpu, &st) == GR_RSMI_STATUS_SUCCESS && st <= GR_RSMI_XGMI_STATUS_MULTIPLE_ERRORS)
    set(&dy->gpulink_error_state, st);
}

static int rsmi_dynamic_info(void *state, unsigned gpu, struct gr_gpu_dynamic *dy)
{
  struct rsmi *r = state;
  memset(dy, 0, sizeof(*dy));
  if (check_gpu(r, gpu) != 0)
    return -1;
  /* Every amdgpu GPU reports how busy it is; a GPU that left the bus takes
   * its sysfs files along, and the library answers FILE_ERROR. */
  uint32_t pct = 0;
  gr_rsmi_status st = r->BusyPercent ? r->BusyPercent(gpu, &pct) : GR_RSMI_STATUS_NOT_SUPPORTED;
  if (st == GR_RSMI_STATUS_FILE_ERROR) {
    snprintf(tl_err, sizeof(tl_err), "GPU%u (%s): %s: the GPU no longer answers", gpu, r->busid[gpu], errstr(r, st));
    return -1;
  }
  if (st == GR_RSMI_STATUS_SUCCESS)
    set(&dy->util_gpu_pct, pct);
  if (r->MemBusyPercent && r->MemBusyPercent(gpu, &pct) == GR_RSMI_STATUS_SUCCESS)
    set(&dy->util_mem_pct, pct);
  read_pcie_link(r, gpu, &dy->link_gen, &dy->link_width, NULL, NULL);
  uint64_t v = 0;
  if (r->PowerAve && r->PowerAve(gpu, 0, &v) == GR_RSMI_STATUS_SUCCESS)
    set(&dy->power_w, (double)v * 1e-6); /* µW */
  if (r->PowerCap && r->PowerCap(gpu, 0, &v) == GR_RSMI_STATUS_SUCCESS)
    set(&dy->power_limit_w, (double)v * 1e-6);
  get_temp(r, gpu, GR_RSMI_TEMP_TYPE_EDGE, GR_RSMI_TEMP_CURRENT, &dy->temp_c);
  get_temp(r, gpu, GR_RSMI_TEMP_TYPE_JUNCTION, GR_RSMI_TEMP_CURRENT, &dy->hotspot_c);
  get_temp(r, gpu, GR_RSMI_TEMP_TYPE_MEMORY, GR_RSMI_TEMP_CURRENT, &dy->mem_temp_c);
  uint64_t total = 0;
  if (r->MemUsage && r->MemUsage(gpu, GR_RSMI_MEM_TYPE_VRAM, &v) == GR_RSMI_STATUS_SUCCESS) {
    set(&dy->mem_used_gib, (double)v / (1024.0 * 1024 * 1024));
    if (r->MemTotal && r->MemTotal(gpu, GR_RSMI_MEM_TYPE_VRAM, &total) == GR_RSMI_STATUS_SUCCESS && total >= v)
      set(&dy->mem_free_gib, (double)(total - v) / (1024.0 * 1024 * 1024));
  }
  read_clocks(r, gpu, GR_RSMI_CLK_TYPE_SYS, &dy->sm_clock_mhz, NULL);
  read_clocks(r, gpu, GR_RSMI_CLK_TYPE_MEM, &dy->mem_clock_mhz, NULL);
  int64_t fan = 0;
  uint64_t fan_max = 0;
  if (r->FanSpeed && r->FanMax && r->FanSpeed(gpu, 0, &fan) == GR_RSMI_STATUS_SUCCESS &&
      r->FanMax(gpu, 0, &fan_max) == GR_RSMI_STATUS_SUCCESS && fan_max > 0 && fan >= 0)
    set(&dy->fan_pct, 100.0 * (double)fan / (double)fan_max);
  get_u64(r->ReplayCounter, gpu, 1, &dy->pcie_replay);
  read_throttle(r, gpu, dy);
  read_ecc(r, gpu, dy);
  read_xgmi(r, gpu, dy);
  return 0;
}

static int rsmi_p2p_status(void *state, unsigned a, unsigned b, enum gr_p2p_cap cap, enum gr_p2p_status *out)
{
  struct rsmi *r = state;
  bool ok = false;
  (void)cap; /* ROCm SMI answers one yes or no for both directions of use */
  *out = GR_P2PS_U;
  if (check_gpu(r, a) != 0 || check_gpu(r, b) != 0)
    return -1;
  if (r->P2P && r->P2P(a, b, &ok) == GR_RSMI_STATUS_SUCCESS)
    *out = ok ? GR_P2PS_OK : GR_P2PS_NS;
  return 0;
}

/* One link per direct xGMI peer (ROCm SMI reports a pair, not its lanes),
 * with the bandwidth the driver states for it (MB/s, KFD's io_link). */
static int rsmi_gpulinks(void *state, unsigned gpu, struct gr_gpu_link *out, unsigned cap, unsigned *count)
{
  struct rsmi *r = state;
  unsigned peers[GR_GPU_LINK_MAX];
  *count = 0;
  if (check_gpu(r, gpu) != 0)
    return -1;
  unsigned n = xgmi_peers(r, gpu, peers, cap < GR_GPU_LINK_MAX ? cap : GR_GPU_LINK_MAX);
  for (unsigned k = 0; k < n; k++) {
    struct gr_gpu_link *l = &out[(*count)++];
    memset(l, 0, sizeof(*l));
    l->index = k;
    set(&l->active, 1);
    snprintf(l->remote_busid, sizeof(l->remote_busid), "%s", r->busid[peers[k]]);
    l->remote_vendor = 0x1002;
    l->remote = GR_NVPEER_GPU;
    uint64_t lo = 0, hi = 0;
    if (r->MinMaxBandwidth && r->MinMaxBandwidth(gpu, peers[k], &lo, &hi) == GR_RSMI_STATUS_SUCCESS && hi > 0)
      set(&l->gbps, (double)hi / 1000.0);
  }
  return 0;
}

static int rsmi_versions(void *state, char *driver, size_t dcap, char *runtime, size_t rcap)
{
  struct rsmi *r = state;
  driver[0] = runtime[0] = '\0';
  if (r->VersionStrGet && r->VersionStrGet(GR_RSMI_SW_COMP_DRIVER, driver, (uint32_t)dcap) != GR_RSMI_STATUS_SUCCESS)
    driver[0] = '\0';
  struct gr_rsmi_version v = {0};
  if (r->VersionGet && r->VersionGet(&v) == GR_RSMI_STATUS_SUCCESS)
    snprintf(runtime, rcap, "%u.%u.%u", v.major, v.minor, v.patch);
  return 0;
}

const struct gr_gpu_backend gr_gpu_backend_rsmi = {
    .name = "amd",
    .library = "librocm_smi64",
    .driver_name = "amdgpu driver",
    .runtime_name = "ROCm SMI",
    .p2p_tool = "rocm-smi --showtopoaccess",
    .gpulink_name = "xGMI",
    .pci_vendor = 0x1002,
    .init = rsmi_init,
    .shutdown = rsmi_shutdown,
    .last_error = rsmi_last_error,
    .enumerate = rsmi_enumerate,
    .static_info = rsmi_static_info,
    .dynamic_info = rsmi_dynamic_info,
    .p2p_status = rsmi_p2p_status,
    .gpulinks = rsmi_gpulinks,
    .versions = rsmi_versions,
};
