/* Samples as text lines, JSON lines and Prometheus metrics; see monitor.h. */
#include "print/monitor.h"

#include <stddef.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "print/common.h"
#include "print/json_stream.h"

const char *gr_throttle_text(struct gr_metric bits, char *buf, size_t cap)
{
  if (!bits.ok)
    return "-";
  unsigned b = (unsigned)bits.v;
  size_t used = 0;
  buf[0] = '\0';
  for (unsigned i = 0; i < GR_THR_NBITS; i++)
    if (b & (1u << i)) {
      int n = snprintf(buf + used, cap - used, "%s%s", used ? "," : "", gr_throttle_word(i));
      if (n < 0 || (size_t)n >= cap - used)
        break;
      used += (size_t)n;
    }
  return used ? buf : "none";
}

static const char *num(struct gr_metric m, const char *fmt, char *buf, size_t cap)
{
  if (!m.ok)
    return "-";
  snprintf(buf, cap, fmt, m.v);
  return buf;
}

static const char *state_word(enum gr_gpu_read r)
{
  return r == GR_READ_FRESH ? "ok" : r == GR_READ_STALE ? "STALE" : "LOST";
}

/* The state a person reads: a GPU that answers but whose link runs below
 * its maximum under load is not "ok" (sampler.h). */
const char *gr_gpu_state_text(const struct gr_sampler *s, const struct gr_sample *x, unsigned i)
{
  if (x->gpu_read[i] == GR_READ_FRESH && gr_sampler_gpu_below_max(s, i, NULL, 0))
    return "SLOW";
  return state_word(x->gpu_read[i]);
}

static void time_text(double real_s, char *buf, size_t cap)
{
  time_t t = (time_t)real_s;
  struct tm tm;
  localtime_r(&t, &tm);
  strftime(buf, cap, "%H:%M:%S", &tm);
}

static void print_gpu_line(FILE *out, const struct gr_sampler *s, const struct gr_sample *x, unsigned i, const char *ts)
{
  const struct gr_gpu_dynamic *d = &x->gpu[i];
  const struct gr_gpu_static *st = gr_sampler_gpu_static(s, i);
  char b[18][24], thr[160];
  fprintf(out, "%s  %-20s %-5s util %s%%  mem %s/%s GiB  power %s/%s W  temp %s C  mem %s C  fan %s%%  "
               "sm %s MHz  mem %s MHz  pcie rx %s tx %s GB/s  link Gen%s/%s x%s/%s  replay %s  throttle %s",
          ts, gr_sampler_gpu_name(s, i), gr_gpu_state_text(s, x, i), num(d->util_gpu_pct, "%.0f", b[0], 24),
          num(d->mem_used_gib, "%.1f", b[1], 24), num(st->mem_gib, "%.1f", b[2], 24), num(d->power_w, "%.1f", b[3], 24),
          num(d->power_limit_w, "%.0f", b[4], 24), num(d->temp_c, "%.0f", b[5], 24),
          num(d->mem_temp_c, "%.0f", b[6], 24), num(d->fan_pct, "%.0f", b[7], 24),
          num(d->sm_clock_mhz, "%.0f", b[8], 24), num(d->mem_clock_mhz, "%.0f", b[9], 24),
          num(d->pcie_rx_gbps, "%.2f", b[10], 24), num(d->pcie_tx_gbps, "%.2f", b[11], 24),
          num(d->link_gen, "%.0f", b[12], 24), num(st->max_link_gen, "%.0f", b[13], 24),
          num(d->link_width, "%.0f", b[14], 24), num(st->max_link_width, "%.0f", b[15], 24),
          num(d->pcie_replay, "%.0f", b[16], 24), gr_throttle_text(d->throttle, thr, sizeof(thr)));
  if (x->gpu_read[i] != GR_READ_FRESH)
    fprintf(out, "  (%s)", x->gpu_error[i]);
  fputc('\n', out);
}

static const char *const sev_key[] = {"correctable", "nonfatal", "fatal"};

/* A link's line when either end has counted errors. */
static void print_link_line(FILE *out, const struct gr_sampler *s, size_t i, const char *ts)
{
  const struct gr_mon_link *l = gr_sampler_link(s, i);
  char parts[2][256];
  bool any = false;
  for (int end = 0; end < 2; end++) {
    size_t used = 0;
    parts[end][0] = '\0';
    for (int k = 0; k < 3; k++) {
      struct gr_aer_window w = gr_sampler_link_aer(s, i, end, k);
      if (!w.last.valid || w.last.value == 0)
        continue;
      any = true;
      int n = snprintf(parts[end] + used, sizeof(parts[end]) - used, "%s%llu %s (%llu in the last minute, %llu since start)",
                       used ? ", " : "", (unsigned long long)w.last.value, sev_key[k],
                       (unsigned long long)w.minute.value, (unsigned long long)w.since.value);
      if (n > 0 && (size_t)n < sizeof(parts[end]) - used)
        used += (size_t)n;
    }
  }
  if (!any)
    return;
  fprintf(out, "%s  link %s <-> %s%s%s:", ts, l->dev_name, l->port_name, l->slot[0] ? ", slot " : "", l->slot);
  if (parts[0][0])
    fprintf(out, "  AER at %s: %s", l->dev_name, parts[0]);
  if (parts[1][0])
    fprintf(out, "  AER at %s: %s", l->port_name, parts[1]);
  fputc('\n', out);
}

void gr_print_sample_text(FILE *out, const struct gr_sampler *s, unsigned long since, bool header)
{
  const struct gr_sample *x = gr_sampler_sample(s, 0);
  char ts[32];
  if (!x)
    return;
  time_text(x->real_s, ts, sizeof(ts));
  if (header)
    fprintf(out, "# gpurig watch: %u GPU(s), %zu PCIe link(s) watched, Xids from %s\n", gr_sampler_ngpu(s),
            gr_sampler_nlinks(s), gr_sampler_xid_source(s));
  for (unsigned i = 0; i < x->ngpu; i++)
    print_gpu_line(out, s, x, i, ts);
  for (size_t i = 0; i < gr_sampler_nlinks(s); i++)
    print_link_line(out, s, i, ts);
  for (unsigned long k = since; k < gr_sampler_nevents(s); k++) {
    const struct gr_mon_event *e = gr_sampler_event(s, k);
    if (e)
      fprintf(out, "%s  event %s: %s\n", ts, gr_sev_name(e->f.sev), e->f.text);
  }
}

/* ------------------------------------------------------------ JSON */

/* A value under its key, null when unknown; whole numbers (counts, MHz,
 * link widths: decimals 0) as JSON integers, others rounded to decimals. */
static void put_metric(struct gr_jl *l, const char *key, struct gr_metric m, int decimals)
{
  double scale = gr_pow10(decimals);
  if (!m.ok)
    gr_jl_null(l, key);
  else if (decimals == 0)
    gr_jl_int(l, key, llround(m.v));
  else
    gr_jl_real(l, key, round(m.v * scale) / scale);
}

static void put_gpu_metrics(struct gr_jl *l, const struct gr_gpu_dynamic *d, const struct gr_gpu_static *st)
{
  put_metric(l, "util_pct", d->util_gpu_pct, 0);
  put_metric(l, "mem_util_pct", d->util_mem_pct, 0);
  put_metric(l, "mem_used_gib", d->mem_used_gib, 3);
  put_metric(l, "mem_free_gib", d->mem_free_gib, 3);
  put_metric(l, "mem_reserved_gib", d->mem_reserved_gib, 3);
  put_metric(l, "mem_gib", st->mem_gib, 3);
  put_metric(l, "power_w", d->power_w, 1);
  put_metric(l, "power_limit_w", d->power_limit_w, 1);
  put_metric(l, "temp_c", d->temp_c, 0);
  put_metric(l, "mem_temp_c", d->mem_temp_c, 0);
  put_metric(l, "fan_pct", d->fan_pct, 0);
  put_metric(l, "sm_clock_mhz", d->sm_clock_mhz, 0);
  put_metric(l, "mem_clock_mhz", d->mem_clock_mhz, 0);
  put_metric(l, "pcie_rx_gbps", d->pcie_rx_gbps, 3);
  put_metric(l, "pcie_tx_gbps", d->pcie_tx_gbps, 3);
  put_metric(l, "link_gen", d->link_gen, 0);
  put_metric(l, "link_gen_max", st->max_link_gen, 0);
  put_metric(l, "link_width", d->link_width, 0);
  put_metric(l, "link_width_max", st->max_link_width, 0);
  put_metric(l, "pcie_replay_total", d->pcie_replay, 0);
  put_metric(l, "ecc_corrected_total", d->ecc_corrected, 0);
  put_metric(l, "ecc_uncorrected_total", d->ecc_uncorrected, 0);
  put_metric(l, "remapped_rows_correctable", d->remap_corr, 0);
  put_metric(l, "remapped_rows_uncorrectable", d->remap_unc, 0);
  put_metric(l, "remap_pending", d->remap_pending, 0);
  put_metric(l, "remap_failed", d->remap_failed, 0);
  put_metric(l, "nvlink_crc_flit_errors_total", d->gpulink_crc, 0);
  put_metric(l, "nvlink_crc_data_errors_total", d->gpulink_crc_data, 0);
  put_metric(l, "nvlink_replay_errors_total", d->gpulink_replay, 0);
  put_metric(l, "nvlink_recovery_errors_total", d->gpulink_recovery, 0);
  put_metric(l, "xgmi_corrected_errors_total", d->gpulink_corrected, 0);
  put_metric(l, "xgmi_uncorrected_errors_total", d->gpulink_uncorrected, 0);
  put_metric(l, "xgmi_error_state", d->gpulink_error_state, 0);
}

static void put_gpu(struct gr_jl *l, const struct gr_sampler *s, const struct gr_sample *x, unsigned i)
{
  const struct gr_gpu_dynamic *d = &x->gpu[i];
  const struct gr_gpu_static *st = gr_sampler_gpu_static(s, i);
  gr_jl_object(l, NULL);
  gr_jl_int(l, "index", i);
  gr_jl_text(l, "bus_id", st->busid);
  gr_jl_text(l, "name", st->name);
  gr_jl_text(l, "state", x->gpu_read[i] == GR_READ_FRESH ? "ok" : x->gpu_read[i] == GR_READ_STALE ? "stale" : "lost");
  if (x->gpu_read[i] != GR_READ_FRESH) {
    gr_jl_text(l, "error", x->gpu_error[i]);
    gr_jl_real(l, "age_s", round(x->gpu_age_s[i] * 1000) / 1000);
  }
  put_gpu_metrics(l, d, st);
  if (d->throttle.ok) {
    gr_jl_array(l, "throttle");
    for (unsigned b = 0; b < GR_THR_NBITS; b++)
      if ((unsigned)d->throttle.v & (1u << b))
        gr_jl_text(l, NULL, gr_throttle_word(b));
    gr_jl_close(l);
  } else {
    gr_jl_null(l, "throttle");
  }
  gr_jl_close(l);
}

static void put_count(struct gr_jl *l, const char *key, struct gr_count c)
{
  if (c.valid)
    gr_jl_int(l, key, (long long)c.value);
  else
    gr_jl_null(l, key);
}

static void put_int_or_null(struct gr_jl *l, const char *key, int v)
{
  if (v)
    gr_jl_int(l, key, v);
  else
    gr_jl_null(l, key);
}

static void put_link(struct gr_jl *l, const struct gr_sampler *s, const struct gr_sample *x, size_t i)
{
  const struct gr_mon_link *m = gr_sampler_link(s, i);
  gr_jl_object(l, NULL);
  gr_jl_text(l, "device", m->dev_name);
  gr_jl_text(l, "port", m->port_name);
  gr_jl_text(l, "slot", m->slot[0] ? m->slot : NULL);
  put_int_or_null(l, "gen", x->pci ? x->pci[m->dev].cur_gen : 0);
  put_int_or_null(l, "width", x->pci ? x->pci[m->dev].cur_width : 0);
  int gen_max, width_max;
  gr_mon_link_max(s, i, &gen_max, &width_max);
  put_int_or_null(l, "gen_max", gen_max);
  put_int_or_null(l, "width_max", width_max);
  for (int end = 0; end < 2; end++) {
    gr_jl_object(l, end == 0 ? "aer_device" : "aer_port");
    for (int k = 0; k < 3; k++) {
      struct gr_aer_window w = gr_sampler_link_aer(s, i, end, k);
      gr_jl_object(l, sev_key[k]);
      put_count(l, "total", w.last);
      put_count(l, "last_minute", w.minute);
      put_count(l, "since_start", w.since);
      gr_jl_close(l);
    }
    gr_jl_close(l);
  }
  gr_jl_close(l);
}

/* The events up to sample x from *since on; *since is moved past them. */
static void put_events(struct gr_jl *l, const struct gr_sampler *s, const struct gr_sample *x, unsigned long *since)
{
  unsigned long k = *since;
  gr_jl_array(l, "events");
  for (; k < gr_sampler_nevents(s); k++) {
    const struct gr_mon_event *e = gr_sampler_event(s, k);
    if (!e)
      continue;
    if (e->mono_s > x->mono_s + 1e-9)
      break; /* later than this sample: the next line's */
    gr_jl_object(l, NULL);
    gr_jl_text(l, "severity", gr_sev_name(e->f.sev));
    if (e->gpu >= 0)
      gr_jl_int(l, "gpu", e->gpu);
    else
      gr_jl_null(l, "gpu");
    if (e->kind == GR_EV_XID)
      gr_jl_int(l, "xid", e->code);
    else
      gr_jl_null(l, "xid");
    gr_jl_text(l, "text", e->f.text);
    gr_jl_close(l);
  }
  gr_jl_close(l);
  *since = k;
}

static struct gr_metric power_total(const struct gr_sample *x);

void gr_sample_json_line(FILE *out, const struct gr_sampler *s, unsigned ago, unsigned long *since, double psu_w)
{
  const struct gr_sample *x = gr_sampler_sample(s, ago);
  struct gr_jl l;
  gr_jl_begin(&l, out);
  if (x) {
    gr_jl_real(&l, "time_s", round(x->real_s * 1000) / 1000);
    gr_jl_int(&l, "sample", (long long)(gr_sampler_steps(s) - ago));
    gr_jl_array(&l, "gpus");
    for (unsigned i = 0; i < x->ngpu; i++)
      put_gpu(&l, s, x, i);
    gr_jl_close(&l);
    struct gr_metric total = power_total(x);
    put_metric(&l, "power_total_w", total, 1); /* null while a GPU does not report */
    if (psu_w > 0) /* the share of --psu the GPUs draw: only when a budget was given */
      put_metric(&l, "power_budget_ratio", (struct gr_metric){total.ok ? total.v / psu_w : 0, total.ok}, 4);
    gr_jl_array(&l, "links");
    for (size_t i = 0; i < gr_sampler_nlinks(s) && ago == 0; i++) /* a link's windows are the newest sample's */
      put_link(&l, s, x, i);
    gr_jl_close(&l);
    put_events(&l, s, x, since);
    gr_jl_text(&l, "xid_source", gr_sampler_xid_source(s));
  }
  gr_jl_end(&l);
}

json_t *gr_sample_at_to_json(const struct gr_sampler *s, unsigned ago, unsigned long *since, double psu_w)
{
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f)
    return NULL;
  gr_sample_json_line(f, s, ago, since, psu_w);
  json_t *j = fclose(f) == 0 ? json_loadb(buf, len, 0, NULL) : NULL;
  free(buf);
  return j;
}

/* ------------------------------------------------------------ Prometheus */

/* A label value with \, " and newline escaped, as the exposition format asks. */
static void label(FILE *f, const char *key, const char *v, bool comma)
{
  fprintf(f, "%s%s=\"", comma ? "," : "", key);
  for (const char *p = v ? v : ""; *p; p++) {
    if (*p == '\\' || *p == '"')
      fprintf(f, "\\%c", *p);
    else if (*p == '\n')
      fputs("\\n", f);
    else
      fputc(*p, f);
  }
  fputc('"', f);
}

struct prom {
  FILE *f;
  const struct gr_sampler *s;
  const struct gr_sample *x;
  const char *host;
  const struct gr_prom_in *in;
};

/* A GPU's labels: dcgm-exporter's names on its series (dashboards select
 * by them), the same values under snake_case names on gpurig's own. */
static void gpu_labels(const struct prom *p, unsigned i, bool dcgm)
{
  const struct gr_gpu_static *st = gr_sampler_gpu_static(p->s, i);
  char gpu[16], dev[32];
  snprintf(gpu, sizeof(gpu), "%u", i);
  snprintf(dev, sizeof(dev), "%s%u", st->vendor == 0x1002 ? "amd" : "nvidia", i);
  fputc('{', p->f);
  label(p->f, "gpu", gpu, false);
  label(p->f, dcgm ? "UUID" : "uuid", st->uuid, true);
  char nvml_bus[40];
  snprintf(nvml_bus, sizeof(nvml_bus), "%s%s", dcgm && st->busid[0] ? "0000" : "", st->busid);
  label(p->f, "pci_bus_id", nvml_bus, true); /* dcgm-exporter writes NVML's "00000000:01:00.0" */
  label(p->f, "device", dev, true);
  label(p->f, dcgm ? "modelName" : "model_name", st->name, true);
  label(p->f, "Hostname", p->host, true); /* dcgm-exporter's case on every family (one PromQL join) */
}

/* Whether GPU i is AMD's: its vendor series take AMD's exporter's names
 * instead of dcgm-exporter's (a machine may have both). */
static bool is_amd(const struct prom *p, unsigned i)
{
  return gr_sampler_gpu_static(p->s, i)->vendor == 0x1002;
}

/* One series per GPU whose value is known and fresh or stale (a lost GPU's
 * series are left out; gpurig_gpu_up says why). */
static void gpu_series(const struct prom *p, const char *name, const char *type, const char *help, size_t off,
                       double scale)
{
  bool dcgm = strncmp(name, "DCGM_", 5) == 0;
  fprintf(p->f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
  for (unsigned i = 0; i < p->x->ngpu; i++) {
    const struct gr_metric *m = (const struct gr_metric *)((const char *)&p->x->gpu[i] + off);
    if (!m->ok || p->x->gpu_read[i] == GR_READ_LOST || (dcgm && is_amd(p, i)))
      continue;
    fputs(name, p->f);
    gpu_labels(p, i, dcgm);
    fprintf(p->f, "} %.17g\n", m->v * scale);
  }
}

#define GPU_FIELD(f) offsetof(struct gr_gpu_dynamic, f)

/* dcgm-exporter's series for what gpurig reads: its names, types and help
 * texts, so that dashboards built on it keep working. */
static const struct dcgm_row {
  const char *name, *type, *help;
  size_t field;
  double scale;
} dcgm_rows[] = {
    {"DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C).", GPU_FIELD(temp_c), 1},
    {"DCGM_FI_DEV_MEMORY_TEMP", "gauge", "Memory temperature (in C).", GPU_FIELD(mem_temp_c), 1},
    {"DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W).", GPU_FIELD(power_w), 1},
    {"DCGM_FI_DEV_POWER_MGMT_LIMIT", "gauge", "Power limit (in W).", GPU_FIELD(power_limit_w), 1},
    {"DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %).", GPU_FIELD(util_gpu_pct), 1},
    {"DCGM_FI_DEV_MEM_COPY_UTIL", "gauge", "Memory utilization (in %).", GPU_FIELD(util_mem_pct), 1},
    {"DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (in MiB).", GPU_FIELD(mem_used_gib), 1024},
    {"DCGM_FI_DEV_FB_FREE", "gauge", "Framebuffer memory free (in MiB).", GPU_FIELD(mem_free_gib), 1024},
    {"DCGM_FI_DEV_FB_RESERVED", "gauge", "Framebuffer memory reserved (in MiB).", GPU_FIELD(mem_reserved_gib), 1024},
    {"DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock frequency (in MHz).", GPU_FIELD(sm_clock_mhz), 1},
    {"DCGM_FI_DEV_MEM_CLOCK", "gauge", "Memory clock frequency (in MHz).", GPU_FIELD(mem_clock_mhz), 1},
    {"DCGM_FI_DEV_FAN_SPEED", "gauge", "Fan speed (in %).", GPU_FIELD(fan_pct), 1},
    {"DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "counter", "Total number of PCIe retries.", GPU_FIELD(pcie_replay), 1},
    {"DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", "gauge", "Throttling reasons bit set (NVML clock-event reasons).",
     GPU_FIELD(throttle), 1},
    {"DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", "counter", "Total number of single-bit volatile ECC errors.",
     GPU_FIELD(ecc_corrected), 1},
    {"DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "counter", "Total number of double-bit volatile ECC errors.",
     GPU_FIELD(ecc_uncorrected), 1},
    {"DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", "counter", "Number of remapped rows for correctable errors.",
     GPU_FIELD(remap_corr), 1},
    {"DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "counter", "Number of remapped rows for uncorrectable errors.",
     GPU_FIELD(remap_unc), 1},
    {"DCGM_FI_DEV_ROW_REMAP_FAILURE", "gauge", "Whether remapping of rows has failed.", GPU_FIELD(remap_failed), 1},
    {"DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", "counter", "Total number of NVLink flow-control CRC errors.",
     GPU_FIELD(gpulink_crc), 1},
    {"DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL", "counter", "Total number of NVLink data CRC errors.",
     GPU_FIELD(gpulink_crc_data), 1},
    {"DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL", "counter", "Total number of NVLink retries.",
     GPU_FIELD(gpulink_replay), 1},
    {"DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL", "counter", "Total number of NVLink recovery errors.",
     GPU_FIELD(gpulink_recovery), 1},
};

static void dcgm_series(const struct prom *p)
{
  for (size_t i = 0; i < sizeof(dcgm_rows) / sizeof(dcgm_rows[0]); i++) {
    const struct dcgm_row *r = &dcgm_rows[i];
    gpu_series(p, r->name, r->type, r->help, r->field, r->scale);
  }
}

/* AMD's device-metrics-exporter's series for what ROCm SMI gives gpurig:
 * its names (lower case, as it serves them, all gauges), its gpu_id,
 * card_model, vbios_version and hostname labels, and gpurig's pci_bus_id. */
static const struct amd_row {
  const char *name, *help;
  size_t field;
  double scale;
} amd_rows[] = {
    {"gpu_edge_temperature", "Edge temperature value in Celsius.", GPU_FIELD(temp_c), 1},
    {"gpu_junction_temperature", "Hotspot (aka junction) temperature value in Celsius.", GPU_FIELD(hotspot_c), 1},
    {"gpu_memory_temperature", "Memory temperature value in Celsius.", GPU_FIELD(mem_temp_c), 1},
    {"gpu_power_usage", "GPU power usage in Watts.", GPU_FIELD(power_w), 1},
    {"gpu_gfx_activity", "Graphics engine usage percentage (0 - 100).", GPU_FIELD(util_gpu_pct), 1},
    {"gpu_umc_activity", "Memory engine usage percentage (0 - 100).", GPU_FIELD(util_mem_pct), 1},
    {"gpu_used_vram", "Total VRAM memory used in MB.", GPU_FIELD(mem_used_gib), 1024},
    {"gpu_free_vram", "Total VRAM memory free in MB.", GPU_FIELD(mem_free_gib), 1024},
    {"pcie_replay_count", "Total number of PCIe replays (NAKs).", GPU_FIELD(pcie_replay), 1},
    {"gpu_ecc_correct_total", "Total Correctable ECC error count.", GPU_FIELD(ecc_corrected), 1},
    {"gpu_ecc_uncorrect_total", "Total Uncorrectable ECC error count.", GPU_FIELD(ecc_uncorrected), 1},
    {"gpu_ecc_correct_xgmi_wafl", "Correctable error count in WAFL block.", GPU_FIELD(gpulink_corrected), 1},
    {"gpu_ecc_uncorrect_xgmi_wafl", "Uncorrectable error count in WAFL block.", GPU_FIELD(gpulink_uncorrected), 1},
};

static void amd_labels(const struct prom *p, unsigned i)
{
  const struct gr_gpu_static *st = gr_sampler_gpu_static(p->s, i);
  char gpu[16];
  snprintf(gpu, sizeof(gpu), "%u", i);
  fputc('{', p->f);
  label(p->f, "gpu_id", gpu, false);
  label(p->f, "card_model", st->name, true);
  label(p->f, "vbios_version", st->vbios, true);
  label(p->f, "pci_bus_id", st->busid, true);
  label(p->f, "hostname", p->host, true);
  label(p->f, "Hostname", p->host, true); /* gpurig's on every family: one PromQL join across vendors */
}

static void amd_one(const struct prom *p, const char *name, const char *help, size_t off, double scale,
                    const char *clock_type)
{
  if (!clock_type || strcmp(clock_type, "GPU_CLOCK_TYPE_SYSTEM") == 0)
    fprintf(p->f, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name);
  for (unsigned i = 0; i < p->x->ngpu; i++) {
    const struct gr_metric *m = (const struct gr_metric *)((const char *)&p->x->gpu[i] + off);
    if (!m->ok || p->x->gpu_read[i] == GR_READ_LOST || !is_amd(p, i))
      continue;
    fputs(name, p->f);
    amd_labels(p, i);
    if (clock_type)
      label(p->f, "clock_type", clock_type, true);
    fprintf(p->f, "} %.17g\n", m->v * scale);
  }
}

static void amd_series(const struct prom *p)
{
  for (size_t i = 0; i < sizeof(amd_rows) / sizeof(amd_rows[0]); i++)
    amd_one(p, amd_rows[i].name, amd_rows[i].help, amd_rows[i].field, amd_rows[i].scale, NULL);
  amd_one(p, "gpu_clock", "Clock measure of the GPU in Mhz.", GPU_FIELD(sm_clock_mhz), 1, "GPU_CLOCK_TYPE_SYSTEM");
  amd_one(p, "gpu_clock", NULL, GPU_FIELD(mem_clock_mhz), 1, "GPU_CLOCK_TYPE_MEMORY");
}

/* How many of the sample's GPUs are AMD's. */
static unsigned amd_gpus(const struct prom *p)
{
  unsigned n = 0;
  for (unsigned i = 0; i < p->x->ngpu; i++)
    n += is_amd(p, i);
  return n;
}

/* dcgm-exporter's XID gauge: the last Xid each GPU reported, 0 none. */
static void xid_series(const struct prom *p)
{
  fputs("# HELP DCGM_FI_DEV_XID_ERRORS Value of the last XID error encountered.\n"
        "# TYPE DCGM_FI_DEV_XID_ERRORS gauge\n", p->f);
  for (unsigned i = 0; i < p->x->ngpu; i++) {
    if (is_amd(p, i))
      continue; /* no Xids: AMD's GPUs report no such events */
    int last = gr_sampler_last_xid(p->s, i);
    fputs("DCGM_FI_DEV_XID_ERRORS", p->f);
    gpu_labels(p, i, true);
    fprintf(p->f, "} %d\n", last);
  }
}

static void link_labels(const struct prom *p, const struct gr_mon_link *l)
{
  char name[160];
  snprintf(name, sizeof(name), "%s <-> %s", l->dev_name, l->port_name);
  fputc('{', p->f);
  label(p->f, "link", name, false);
  label(p->f, "slot", l->slot, true);
  label(p->f, "Hostname", p->host, true);
}

static void link_series(const struct prom *p)
{
  fputs("# HELP gpurig_pcie_aer_errors_total AER errors counted by one end of a PCIe link on a GPU's path (since boot).\n"
        "# TYPE gpurig_pcie_aer_errors_total counter\n", p->f);
  for (size_t i = 0; i < gr_sampler_nlinks(p->s); i++)
    for (int end = 0; end < 2; end++)
      for (int k = 0; k < 3; k++) {
        struct gr_aer_window w = gr_sampler_link_aer(p->s, i, end, k);
        if (!w.last.valid)
          continue;
        const struct gr_mon_link *l = gr_sampler_link(p->s, i);
        fputs("gpurig_pcie_aer_errors_total", p->f);
        link_labels(p, l);
        label(p->f, "end", end == 0 ? l->dev_name : l->port_name, true);
        label(p->f, "severity", sev_key[k], true);
        fprintf(p->f, "} %llu\n", (unsigned long long)w.last.value);
      }
  static const char *const names[] = {"gpurig_pcie_link_gen", "gpurig_pcie_link_gen_max", "gpurig_pcie_link_width",
                                      "gpurig_pcie_link_width_max"};
  static const char *const helps[] = {"PCIe generation the link runs at now (an idle GPU lowers it).",
                                      "PCIe generation both ends of the link support.",
                                      "PCIe lanes the link runs at now (a drop is downtraining).",
                                      "PCIe lanes both ends of the link support."};
  for (int k = 0; k < 4; k++) {
    fprintf(p->f, "# HELP %s %s\n# TYPE %s gauge\n", names[k], helps[k], names[k]);
    for (size_t i = 0; i < gr_sampler_nlinks(p->s); i++) {
      const struct gr_mon_link *l = gr_sampler_link(p->s, i);
      int gen_max, width_max;
      gr_mon_link_max(p->s, i, &gen_max, &width_max);
      int v = k == 0 ? (p->x->pci ? p->x->pci[l->dev].cur_gen : 0) : k == 1 ? gen_max
              : k == 2 ? (p->x->pci ? p->x->pci[l->dev].cur_width : 0) : width_max;
      if (v <= 0)
        continue;
      fputs(names[k], p->f);
      link_labels(p, l);
      fprintf(p->f, "} %d\n", v);
    }
  }
}

static void bus_gpus_down(const struct prom *p);

static void gpurig_gpu_series(const struct prom *p)
{
  fputs("# HELP gpurig_gpu_up 1 when the GPU answered the last sample, 0 when it is lost or did not answer in time.\n"
        "# TYPE gpurig_gpu_up gauge\n", p->f);
  for (unsigned i = 0; i < p->x->ngpu; i++) {
    fputs("gpurig_gpu_up", p->f);
    gpu_labels(p, i, false);
    fprintf(p->f, "} %d\n", p->x->gpu_read[i] == GR_READ_FRESH ? 1 : 0);
  }
  if (!p->in->driver_up && !p->x->ngpu)
    bus_gpus_down(p);
  fputs("# HELP gpurig_gpu_throttle 1 for each reason the GPU's clocks are held down now.\n"
        "# TYPE gpurig_gpu_throttle gauge\n", p->f);
  for (unsigned i = 0; i < p->x->ngpu; i++) {
    struct gr_metric t = p->x->gpu[i].throttle;
    for (unsigned b = 0; t.ok && p->x->gpu_read[i] != GR_READ_LOST && b < GR_THR_NBITS; b++) {
      fputs("gpurig_gpu_throttle", p->f);
      gpu_labels(p, i, false);
      label(p->f, "reason", gr_throttle_word(b), true);
      fprintf(p->f, "} %d\n", ((unsigned)t.v >> b) & 1u);
    }
  }
  gpu_series(p, "gpurig_gpu_pcie_rx_bytes_per_second", "gauge", "PCIe bytes per second into the GPU.",
             GPU_FIELD(pcie_rx_gbps), 1e9);
  gpu_series(p, "gpurig_gpu_pcie_tx_bytes_per_second", "gauge", "PCIe bytes per second out of the GPU.",
             GPU_FIELD(pcie_tx_gbps), 1e9);
  gpu_series(p, "gpurig_gpulink_error_state", "gauge",
             "Error state of the GPU's GPU-to-GPU links as the driver reports it (xGMI: 0 none, 1 an error, 2 several).",
             GPU_FIELD(gpulink_error_state), 1);
  fputs("# HELP gpurig_samples_total Samples taken since gpurig export started.\n"
        "# TYPE gpurig_samples_total counter\n", p->f);
  fputs("gpurig_samples_total{", p->f);
  label(p->f, "Hostname", p->host, false); /* on every family, so a dashboard picks the host by it */
  fprintf(p->f, "} %lu\n", gr_sampler_steps(p->s));
}

/* The GPUs' summed draw, what a power supply must carry. Known only when
 * every GPU reports its power: a GPU lost or without a reading would count
 * as 0 W and make the sum look safe, so the total is unknown instead. */
static struct gr_metric power_total(const struct gr_sample *x)
{
  struct gr_metric t = {0};
  for (unsigned i = 0; i < x->ngpu; i++) {
    if (!x->gpu[i].power_w.ok || x->gpu_read[i] == GR_READ_LOST)
      return (struct gr_metric){0};
    t.v += x->gpu[i].power_w.v;
  }
  t.ok = x->ngpu > 0;
  return t;
}

static void power_total_series(const struct prom *p)
{
  struct gr_metric t = power_total(p->x);
  if (!t.ok)
    return;
  fputs("# HELP gpurig_power_total_watts Summed power draw of all GPUs (in W; absent when one does not report).\n"
        "# TYPE gpurig_power_total_watts gauge\n"
        "gpurig_power_total_watts{", p->f);
  label(p->f, "Hostname", p->host, false);
  fprintf(p->f, "} %.17g\n", t.v);
  if (p->in->psu_w <= 0)
    return;
  fputs("# HELP gpurig_power_budget_ratio Summed power draw of all GPUs over the power supply's watts (--psu).\n"
        "# TYPE gpurig_power_budget_ratio gauge\n"
        "gpurig_power_budget_ratio{", p->f);
  label(p->f, "Hostname", p->host, false);
  fprintf(p->f, "} %.6g\n", t.v / p->in->psu_w);
}

/* One series per (id, severity, subject): a check may say two things of
 * one device, and a repeated series would make the scrape invalid. */
static bool seen_before(const struct gr_findings *f, size_t i)
{
  const struct gr_finding *x = &f->v[i];
  for (size_t k = 0; k < i; k++) {
    const struct gr_finding *y = &f->v[k];
    if (y->sev == x->sev && strcmp(y->id, x->id) == 0 &&
        strcmp(y->subject ? y->subject : "", x->subject ? x->subject : "") == 0)
      return true;
  }
  return false;
}

static void finding_series(const struct prom *p, const struct gr_findings *f)
{
  fputs("# HELP gpurig_finding A finding of gpurig doctor on this machine (1 while it holds).\n"
        "# TYPE gpurig_finding gauge\n", p->f);
  for (size_t i = 0; f && i < f->n; i++) {
    const struct gr_finding *x = &f->v[i];
    if (x->sev == GR_SEV_OK || x->sev == GR_SEV_SKIPPED || seen_before(f, i))
      continue;
    fputs("gpurig_finding{", p->f);
    label(p->f, "id", x->id, false);
    label(p->f, "severity", gr_sev_name(x->sev), true);
    label(p->f, "subject", x->subject ? x->subject : "machine", true);
    label(p->f, "Hostname", p->host, true);
    fputs("} 1\n", p->f);
  }
}

/* Whether the GPU driver loaded: with gpurig_gpu_up, what an alert needs
 * when no GPU can answer at all. */
static void driver_series(const struct prom *p)
{
  fputs("# HELP gpurig_driver_up 1 when the GPU driver answered at start, 0 when it did not load.\n"
        "# TYPE gpurig_driver_up gauge\n", p->f);
  fprintf(p->f, "gpurig_driver_up{");
  label(p->f, "Hostname", p->host, false);
  fprintf(p->f, "} %d\n", p->in->driver_up ? 1 : 0);
}

/* With no driver, a gpurig_gpu_up 0 for each GPU the bus shows: an alert on
 * gpurig_gpu_up == 0 then fires when the whole driver is gone, as it does
 * for one lost GPU. */
static void bus_gpus_down(const struct prom *p)
{
  const struct gr_topo *t = p->in->bus;
  for (size_t k = 0; t && k < t->ngpus; k++) {
    const struct gr_pci *d = &t->pci[t->gpus[k]];
    char gpu[24], busid[40], dev[32];
    snprintf(gpu, sizeof(gpu), "%zu", k);
    snprintf(dev, sizeof(dev), "nvidia%zu", k);
    fputs("gpurig_gpu_up{", p->f);
    label(p->f, "gpu", gpu, false);
    label(p->f, "pci_bus_id", gr_pci_busid(d, busid, sizeof(busid)), true);
    label(p->f, "device", dev, true);
    label(p->f, "Hostname", p->host, true);
    fputs("} 0\n", p->f);
  }
}

char *gr_prom_render(const struct gr_sampler *s, const struct gr_prom_in *in)
{
  char *buf = NULL;
  size_t len = 0;
  FILE *mf = open_memstream(&buf, &len);
  if (!mf)
    return xstrdup("");
  struct prom p = {.f = mf, .s = s, .x = gr_sampler_sample(s, 0), .host = in->hostname, .in = in};
  driver_series(&p);
  if (p.x) {
    unsigned amd = amd_gpus(&p);
    if (amd < p.x->ngpu || p.x->ngpu == 0) {
      dcgm_series(&p);
      xid_series(&p);
    }
    if (amd)
      amd_series(&p);
    power_total_series(&p);
    gpurig_gpu_series(&p);
    link_series(&p);
  }
  finding_series(&p, in->findings);
  fclose(mf);
  return buf;
}

/* A label value escaped as label() does, into dst; false when it does not fit. */
static bool escape_into(char *dst, size_t cap, const char *v)
{
  size_t n = 0;
  for (const char *p = v ? v : ""; *p; p++) {
    const char *rep = *p == '\\' ? "\\\\" : *p == '"' ? "\\\"" : *p == '\n' ? "\\n" : NULL;
    size_t k = rep ? 2 : 1;
    if (n + k >= cap)
      return false;
    memcpy(dst + n, rep ? rep : p, k);
    n += k;
  }
  dst[n] = '\0';
  return true;
}

size_t gr_prom_age(char *buf, size_t cap, double age_s, const char *hostname)
{
  char host[160];
  if (!escape_into(host, sizeof(host), hostname))
    host[0] = '\0'; /* longer than any host name Linux allows (64): the series stays, unlabelled */
  int n = snprintf(buf, cap,
                   "# HELP gpurig_sample_age_seconds Age of the sample this scrape shows.\n"
                   "# TYPE gpurig_sample_age_seconds gauge\n"
                   "gpurig_sample_age_seconds{Hostname=\"%s\"} %.3f\n",
                   host, age_s);
  return n < 0 ? 0 : (size_t)n < cap ? (size_t)n : cap - 1;
}

size_t gr_prom_textfile_ok(char *buf, size_t cap, bool ok, const char *hostname)
{
  char host[160];
  if (!escape_into(host, sizeof(host), hostname))
    host[0] = '\0'; /* as gr_prom_age */
  int n = snprintf(buf, cap,
                   "# HELP gpurig_textfile_ok 1 when gpurig export wrote this file at its last sample.\n"
                   "# TYPE gpurig_textfile_ok gauge\n"
                   "gpurig_textfile_ok{Hostname=\"%s\"} %d\n",
                   host, ok ? 1 : 0);
  return n < 0 ? 0 : (size_t)n < cap ? (size_t)n : cap - 1;
}
