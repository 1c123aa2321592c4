/* gpurig burn's report; see burn.h. */
#include "print/burn.h"

#include <string.h>

#include "print/common.h"
#include "print/monitor.h"

const char *gr_burn_loads_text(unsigned loads, char *buf, size_t cap)
{
  static const char *const names[] = {"pcie", "p2p", "allreduce", "gemm"};
  size_t used = 0;
  buf[0] = '\0';
  for (unsigned b = 0; b < 4; b++)
    if (loads & (1u << b)) {
      int n = snprintf(buf + used, cap - used, "%s%s", used ? "," : "", names[b]);
      if (n > 0 && (size_t)n < cap - used)
        used += (size_t)n;
    }
  return used ? buf : "none";
}

const char *gr_burn_pattern_name(enum gr_burn_pattern p)
{
  return p == GR_PAT_STAGGERED ? "staggered" : p == GR_PAT_PER_GPU ? "per-gpu" : p == GR_PAT_PAIRS ? "pairs" : "all";
}

static double rate(double bytes, double secs)
{
  return secs > 0 ? bytes / secs / 1e9 : 0;
}

/* A figure in a column of width w, "-" when it was not measured (a load
 * that did not run, a value the driver does not give). */
static void col(FILE *out, int w, int prec, bool ok, double v, const char *unit)
{
  char b[32];
  if (ok)
    snprintf(b, sizeof(b), "%.*f%s", prec, v, unit);
  else
    snprintf(b, sizeof(b), "-%s", unit[0] ? "  " : "");
  fprintf(out, " %*s", w, b);
}

static void gpu_line(FILE *out, const struct gr_sampler *s, const struct gr_burn_report *r, unsigned i)
{
  const struct gr_burn_gpu *g = &r->gpu[i];
  char thr[64] = "-";
  size_t used = 0;
  for (unsigned b = 2; b < GR_THR_NBITS; b++)
    if (g->throttle_s[b] > 0) {
      int n = snprintf(thr + used, sizeof(thr) - used, "%s%s %.0fs", used ? "," : "", gr_throttle_word(b),
                       g->throttle_s[b]);
      if (n > 0 && (size_t)n < sizeof(thr) - used)
        used += (size_t)n;
    }
  fprintf(out, "  %-20s", gr_sampler_gpu_name(s, i));
  col(out, 7, 1, g->gemm_seconds > 0, g->gemm_seconds > 0 ? g->gemm_flops / g->gemm_seconds / 1e12 : 0, "");
  col(out, 6, 1, g->host_seconds > 0, rate(g->host_bytes, g->host_seconds), "");
  col(out, 8, 1, g->p2p_seconds > 0, rate(g->p2p_bytes, g->p2p_seconds), "");
  col(out, 8, 0, g->temp_max.ok, g->temp_max.v, " C");
  col(out, 8, 0, g->power_max.ok, g->power_max.v, " W");
  col(out, 10, 0, g->sm_clock_min.ok, g->sm_clock_min.v, " MHz");
  char rep[24] = "-";
  if (g->replay_ok)
    snprintf(rep, sizeof(rep), "%.0f", g->replay_end - g->replay_start);
  fprintf(out, "  %-8s %s%s\n", rep, thr, g->lost ? "  LOST" : "");
}

void gr_print_burn(FILE *out, const struct gr_sampler *s, const struct gr_burn_opts *o, const struct gr_burn_report *r)
{
  char loads[64];
  fprintf(out, "gpurig burn: loads %s, pattern %s, %.0f s%s (ran %.1f s)\n",
          gr_burn_loads_text(r->loads_run, loads, sizeof(loads)), gr_burn_pattern_name(o->pattern), o->duration_s,
          r->interrupted ? ", interrupted" : "", r->run_s);
  if (r->note[0])
    fprintf(out, "  %s\n", r->note);
  fprintf(out, "\n  %-20s %7s %6s %8s %8s %8s %10s  %-8s %s\n", "GPU", "GEMM", "host", "p2p", "hottest", "max",
          "lowest SM", "replays", "slowed by");
  fprintf(out, "  %-20s %7s %6s %8s %8s %8s %10s\n", "", "TFLOPS", "GB/s", "GB/s", "", "power", "clock");
  for (unsigned i = 0; i < r->ngpu; i++)
    if (r->gpu[i].selected)
      gpu_line(out, s, r, i);
  if (r->gemm_n)
    fprintf(out, "\n  GEMM: %d x %d fp16 products, fp32 accumulate, every product's first column checked\n", r->gemm_n,
            r->gemm_n);
  if (r->nar)
    fprintf(out, "\n  all-reduce: %zu iterations, p50 %.3f ms, p99 %.3f ms, max %.3f ms, %zu stall%s\n", r->nar,
            r->ar_p50 * 1e3, r->ar_p99 * 1e3, r->ar_max * 1e3, r->nstall, r->nstall == 1 ? "" : "s");
  fputs("\nVerdicts:\n", out);
  for (size_t k = 0; k < r->verdicts.n; k++) {
    const struct gr_finding *f = &r->verdicts.v[k];
    fprintf(out, "  %-4s  %s\n", f->sev == GR_SEV_OK ? "pass" : gr_sev_name(f->sev), f->text);
  }
}

/* Every GPU's draw summed (its peak and mean over the samples where every
 * GPU reported) and the budget it was held against. */
static json_t *power_json(const struct gr_burn_opts *o, const struct gr_burn_report *r)
{
  json_t *p = json_object();
  unsigned n = r->power_total_n;
  json_object_set_new(p, "total_max_w", n ? gr_json_rounded(r->power_total_max, 1) : json_null());
  json_object_set_new(p, "total_mean_w", n ? gr_json_rounded(r->power_total_sum / n, 1) : json_null());
  json_object_set_new(p, "samples", json_integer(n));
  json_object_set_new(p, "budget_w", o->psu_w > 0 ? gr_json_rounded(o->psu_w, 1) : json_null());
  json_object_set_new(p, "budget", o->psu_w > 0 ? gr_json_text(o->psu_what) : json_null());
  json_object_set_new(p, "other_w", o->psu_other_w > 0 ? gr_json_rounded(o->psu_other_w, 1) : json_null());
  return p;
}

json_t *gr_burn_to_json(const struct gr_sampler *s, const struct gr_burn_opts *o, const struct gr_burn_report *r)
{
  char loads[64];
  json_t *j = json_object(), *gpus = json_array(), *v = json_array(), *ar = json_object(), *stalls = json_array();
  json_object_set_new(j, "loads", json_string(gr_burn_loads_text(r->loads_run, loads, sizeof(loads))));
  json_object_set_new(j, "pattern", json_string(gr_burn_pattern_name(o->pattern)));
  json_object_set_new(j, "duration_s", gr_json_rounded(o->duration_s, 1));
  json_object_set_new(j, "ran_s", gr_json_rounded(r->run_s, 2));
  json_object_set_new(j, "interrupted", json_boolean(r->interrupted));
  json_object_set_new(j, "stop_signal", r->stop_signal ? json_integer(r->stop_signal) : json_null());
  for (unsigned i = 0; i < r->ngpu; i++) {
    const struct gr_burn_gpu *g = &r->gpu[i];
    if (!g->selected)
      continue;
    json_t *x = json_object(), *thr = json_object();
    json_object_set_new(x, "index", json_integer(i));
    json_object_set_new(x, "bus_id", gr_json_text(gr_sampler_gpu_static(s, i)->busid));
    json_object_set_new(x, "lost", json_boolean(g->lost));
    json_object_set_new(x, "lost_at_s", g->lost ? gr_json_rounded(g->lost_s, 1) : json_null());
    json_object_set_new(x, "host_gbps", g->host_seconds > 0 ? gr_json_rounded(rate(g->host_bytes, g->host_seconds), 2)
                                                            : json_null());
    json_object_set_new(x, "p2p_gbps", g->p2p_seconds > 0 ? gr_json_rounded(rate(g->p2p_bytes, g->p2p_seconds), 2)
                                                          : json_null());
    json_object_set_new(x, "corrupt_copies", json_integer(g->corrupt));
    json_object_set_new(x, "gemm_tflops", g->gemm_seconds > 0 ? gr_json_rounded(g->gemm_flops / g->gemm_seconds / 1e12, 2)
                                                             : json_null());
    json_object_set_new(x, "gemm_wrong", json_integer(g->gemm_wrong));
    json_object_set_new(x, "temp_max_c", g->temp_max.ok ? gr_json_rounded(g->temp_max.v, 0) : json_null());
    json_object_set_new(x, "power_max_w", g->power_max.ok ? gr_json_rounded(g->power_max.v, 1) : json_null());
    json_object_set_new(x, "power_mean_w", g->power_n ? gr_json_rounded(g->power_sum / g->power_n, 1) : json_null());
    json_object_set_new(x, "sm_clock_min_mhz", g->sm_clock_min.ok ? gr_json_rounded(g->sm_clock_min.v, 0) : json_null());
    json_object_set_new(x, "pcie_replays", g->replay_ok ? json_integer((json_int_t)(g->replay_end - g->replay_start))
                                                        : json_null());
    for (unsigned b = 0; b < GR_THR_NBITS; b++)
      if (g->throttle_s[b] > 0)
        json_object_set_new(thr, gr_throttle_word(b), gr_json_rounded(g->throttle_s[b], 1));
    json_object_set_new(x, "throttle_s", thr);
    json_array_append_new(gpus, x);
  }
  json_object_set_new(j, "gpus", gpus);
  json_object_set_new(j, "power", power_json(o, r));
  json_object_set_new(ar, "iterations", json_integer((json_int_t)r->nar));
  json_object_set_new(ar, "p50_ms", r->nar ? gr_json_rounded(r->ar_p50 * 1e3, 4) : json_null());
  json_object_set_new(ar, "p99_ms", r->nar ? gr_json_rounded(r->ar_p99 * 1e3, 4) : json_null());
  json_object_set_new(ar, "max_ms", r->nar ? gr_json_rounded(r->ar_max * 1e3, 4) : json_null());
  for (size_t k = 0; k < r->nstall; k++) {
    json_t *x = json_object();
    json_object_set_new(x, "at_s", gr_json_rounded(r->stall[k].at_s, 2));
    json_object_set_new(x, "ms", gr_json_rounded(r->stall[k].seconds * 1e3, 4));
    json_object_set_new(x, "median_ms", gr_json_rounded(r->stall[k].median_s * 1e3, 4));
    json_object_set_new(x, "seen", gr_json_text(r->stall[k].seen));
    json_array_append_new(stalls, x);
  }
  json_object_set_new(ar, "stalls", stalls);
  json_object_set_new(j, "allreduce", ar);
  json_object_set_new(j, "gemm_n", r->gemm_n ? json_integer(r->gemm_n) : json_null());
  for (size_t k = 0; k < r->verdicts.n; k++)
    json_array_append_new(v, gr_finding_to_json(&r->verdicts.v[k]));
  json_object_set_new(j, "verdicts", v);
  json_object_set_new(j, "exit", json_integer(gr_findings_exit(&r->verdicts)));
  return j;
}
