/* Burn-in's verdicts: one per GPU, per link and for each load, from what
 * the loads counted and what the sampler saw (docs/burn.md); see burn.h. */
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "facts/catalog.h"
#include "facts/pcilink.h"
#include "model/topo.h"
#include "monitor/burn_run.h"

/* A GPU whose matrix products run under this share of its catalog rate
 * gets a warning: a healthy card under cuBLAS (or rocBLAS) reaches 70-90 % of it, one
 * held at half its clock (a power cap, heat, a low P-state) about half. */
#define SLOW_SHARE 0.6

static struct gr_finding *verdict(struct gr_burn_report *r, enum gr_sev sev, const char *id, const char *subject,
                                  const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static struct gr_finding *verdict(struct gr_burn_report *r, enum gr_sev sev, const char *id, const char *subject,
                                  const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  struct gr_finding *f = gr_finding_vadd(&r->verdicts, sev, id, fmt, ap);
  va_end(ap);
  gr_finding_subject(f, -1, subject, NULL);
  return f;
}

/* Whether the topology GPU under a link takes part in the run. */
static bool gpu_of_topo_selected(const struct run *x, int topo_gpu)
{
  for (unsigned i = 0; i < x->r->ngpu; i++)
    if (gr_sampler_topo_gpu(x->s, i) == topo_gpu)
      return x->r->gpu[i].selected;
  return false;
}

void burn_link_judged(const struct run *x, size_t i, int *gen, int *width)
{
  gr_mon_link_max(x->s, i, gen, width);
  if (i < x->r->nlink && x->r->link[i].width > 0 && (*width == 0 || x->r->link[i].width < *width))
    *width = x->r->link[i].width; /* an x16 slot that trained at x8 carries half the bits */
}

/* A link is failing when an end counted a non-fatal or fatal error, or more
 * correctable ones than a healthy link of its width allows in the time. */
static bool link_over(const struct run *x, size_t i, double run_s)
{
  int gen, width;
  burn_link_judged(x, i, &gen, &width);
  double allowed = gr_pcie_error_allowance(gen, width, run_s);
  for (int end = 0; end < 2; end++)
    for (int k = 0; k < 3; k++) {
      struct gr_aer_window w = gr_sampler_link_aer(x->s, i, end, k);
      if (w.since.valid && w.since.value > 0 && (k > 0 || (allowed >= 0 && (double)w.since.value > allowed)))
        return true;
    }
  return false;
}

/* The allowance of GPU i's link for run_s, -1 unknown. */
static double gpu_allowance(const struct run *x, unsigned i, double run_s)
{
  int link = gr_sampler_gpu_link(x->s, i), gen = 0, width = 0;
  if (link >= 0)
    burn_link_judged(x, (size_t)link, &gen, &width);
  return gr_pcie_error_allowance(gen, width, run_s);
}

void burn_judge_running(struct run *x, double run_s)
{
  struct gr_burn_report *r = x->r;
  for (size_t i = 0; i < r->nlink; i++)
    r->link[i].failing = link_over(x, i, run_s);
  for (unsigned i = 0; i < r->ngpu; i++) {
    struct gr_burn_gpu *g = &r->gpu[i];
    double allowed = gpu_allowance(x, i, run_s), replays = g->replay_end - g->replay_start;
    g->replay_failing = g->replay_ok && replays > 0 && allowed >= 0 && replays > allowed;
  }
}

enum gr_sev gr_burn_event_sev(const struct gr_burn_report *r, const struct gr_mon_event *e)
{
  if (e->kind == GR_EV_AER && e->link >= 0 && (size_t)e->link < r->nlink && r->link[e->link].failing)
    return GR_SEV_FAIL;
  if (e->kind == GR_EV_REPLAY && e->gpu >= 0 && (unsigned)e->gpu < r->ngpu && r->gpu[e->gpu].replay_failing)
    return GR_SEV_FAIL;
  return e->f.sev;
}

static void link_verdicts(struct run *x)
{
  static const char *const sev_word[] = {"correctable", "non-fatal", "fatal"};
  for (size_t i = 0; i < gr_sampler_nlinks(x->s); i++) {
    const struct gr_mon_link *l = gr_sampler_link(x->s, i);
    if (l->gpu >= 0 && !gpu_of_topo_selected(x, l->gpu))
      continue;
    char place[200], subj[160];
    snprintf(subj, sizeof(subj), "%s <-> %s", l->dev_name, l->port_name);
    snprintf(place, sizeof(place), "%s%s%s", l->slot[0] ? "slot " : "", l->slot, l->slot[0] ? ", " : "");
    int gen, width;
    burn_link_judged(x, i, &gen, &width);
    double allowed = gr_pcie_error_allowance(gen, width, x->r->run_s);
    enum gr_sev worst = GR_SEV_OK;
    for (int end = 0; end < 2; end++)
      for (int k = 0; k < 3; k++) {
        struct gr_aer_window w = gr_sampler_link_aer(x->s, i, end, k);
        if (!w.since.valid || w.since.value == 0)
          continue;
        bool over = k > 0 || (allowed >= 0 && (double)w.since.value > allowed);
        enum gr_sev sev = over ? GR_SEV_FAIL : GR_SEV_WARN;
        char allow[160] = "", lab[32];
        if (k == 0 && allowed >= 0)
          snprintf(allow, sizeof(allow), "; a healthy %s link allows %.0f in this time (DCGM's error-rate rule)",
                   gr_pcie_label(gen, width, lab, sizeof(lab)), allowed);
        struct gr_finding *f = verdict(
            x->r, sev, "burn.link", subj, "%s%s: %llu %s AER error%s in %.0f s under load, at %s%s: %s", place,
            l->dev_name, (unsigned long long)w.since.value, sev_word[k], w.since.value == 1 ? "" : "s", x->r->run_s,
            end == 0 ? l->dev_name : l->port_name, allow,
            over ? "reseat or replace the riser or cable, or lower this slot to Gen3 in the BIOS"
                 : "watch it: reseat the riser or cable if it grows");
        gr_finding_evidence(f, "AER", "%s %s since start %llu", end == 0 ? "device end" : "port end", sev_word[k],
                            (unsigned long long)w.since.value);
        if (sev > worst)
          worst = sev;
      }
    if (worst == GR_SEV_OK)
      verdict(x->r, GR_SEV_OK, "burn.link", subj, "%s%s <-> %s: no AER error in %.0f s under load", place,
              l->dev_name, l->port_name, x->r->run_s);
  }
}

/* The reasons a GPU slowed under load that point at cooling or power, with
 * the time each held (power cap and idle are normal under load). */
static int throttle_words(const struct gr_burn_gpu *g, double run_s, char *buf, size_t cap)
{
  static const unsigned bad[] = {3, 5, 6, 7}; /* hw slowdown, thermal (driver), thermal (hw), power brake */
  size_t used = 0;
  int n = 0;
  buf[0] = '\0';
  for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
    double t = g->throttle_s[bad[k]];
    if (t <= 0)
      continue;
    int w = snprintf(buf + used, cap - used, "%s%s for %.0f s of %.0f", n ? ", " : "", gr_throttle_word(bad[k]), t,
                     run_s);
    if (w > 0 && (size_t)w < cap - used)
      used += (size_t)w;
    n++;
  }
  return n;
}

/* A passing GPU's line: what it did under load, each figure only when its
 * load ran and the sampler read it. */
static void pass_verdict(struct run *x, unsigned i)
{
  const struct gr_burn_gpu *g = &x->r->gpu[i];
  const char *name = gr_sampler_gpu_name(x->s, i);
  char tf[48] = "", host[64] = "", temp[32] = "", power[32] = "";
  if (g->gemm_seconds > 0)
    snprintf(tf, sizeof(tf), "%.1f TFLOPS fp16, ", g->gemm_flops / g->gemm_seconds / 1e12);
  if (g->host_seconds > 0)
    snprintf(host, sizeof(host), "%.1f GB/s host<->GPU under load, ", g->host_bytes / g->host_seconds / 1e9);
  if (g->temp_max.ok)
    snprintf(temp, sizeof(temp), "hottest %.0f C, ", g->temp_max.v);
  if (g->power_max.ok)
    snprintf(power, sizeof(power), "up to %.0f W, ", g->power_max.v);
  verdict(x->r, GR_SEV_OK, "burn.gpu", name, "%s passed: %s%s%s%sno error", name, tf, host, temp, power);
}

/* Why a GPU ran below its rate, from what the sampler saw during its matrix
 * products: throttle reasons, the power cap, the PCIe link, the clock. */
static void slow_why(const struct run *x, unsigned i, const struct gr_gpu_model *m, char *buf, size_t cap)
{
  const struct gr_burn_gpu *g = &x->r->gpu[i];
  const struct gr_gpu_static *st = gr_sampler_gpu_static(x->s, i);
  size_t used = 0;
  buf[0] = '\0';
#define WHY(...) do { int n_ = snprintf(buf + used, cap - used, "%s", used ? "; " : ""); \
    if (n_ > 0 && (size_t)n_ < cap - used) used += (size_t)n_; \
    n_ = snprintf(buf + used, cap - used, __VA_ARGS__); \
    if (n_ > 0 && (size_t)n_ < cap - used) used += (size_t)n_; } while (0)
  if (g->gemm_thr_bits & (GR_THR_HW_THERMAL | GR_THR_SW_THERMAL))
    WHY("thermal slowdown (hottest %.0f C)", g->temp_max.ok ? g->temp_max.v : 0);
  if (g->gemm_thr_bits & (GR_THR_HW_SLOWDOWN | GR_THR_HW_POWER_BRAKE))
    WHY("hardware slowdown or power brake (the power supply or its cables)");
  if ((g->gemm_thr_bits & GR_THR_SW_POWER) && g->gemm_power_limit > 0 && m->tdp_w > 0 &&
      g->gemm_power_limit < 0.9 * m->tdp_w)
    WHY("power cap %.0f W, under the card's %.0f W", g->gemm_power_limit, m->tdp_w);
  if (g->gemm_thr_bits & GR_THR_APP_CLOCKS)
    WHY("application clocks set lower");
  if (g->gemm_clock_max > 0 && m->boost_mhz > 0 && g->gemm_clock_max < 0.6 * m->boost_mhz)
    WHY("SM clock at most %.0f MHz of %.0f boost%s", g->gemm_clock_max, m->boost_mhz,
        used ? "" : " with no throttle reason (a low P-state: check nvidia-smi -q -d PERFORMANCE)");
  if (g->gemm_link_gen_min > 0 && st->max_link_gen.ok && g->gemm_link_gen_min < (int)st->max_link_gen.v)
    WHY("PCIe at Gen%d of Gen%.0f", g->gemm_link_gen_min, st->max_link_gen.v);
#undef WHY
  if (!used)
    snprintf(buf, cap, "the sampler saw no reason (no throttle, clocks and power normal)");
}

/* A GPU's matrix-product rate against the catalog (data/gpus.tsv,
 * fp16 in, fp32 accumulate), and whether the sampler ever saw it loaded. */
static enum gr_sev gemm_rate_verdict(struct run *x, unsigned i)
{
  const struct gr_burn_gpu *g = &x->r->gpu[i];
  const char *name = gr_sampler_gpu_name(x->s, i);
  int topo = gr_sampler_topo_gpu(x->s, i);
  const struct gr_topo *t = &gr_sampler_machine(x->s)->topo;
  const struct gr_gpu_model *m = topo >= 0 && (size_t)topo < t->ngpus ? gr_pci_catalog(&t->pci[t->gpus[topo]]) : NULL;
  if (g->gemm_seconds <= 0 || g->lost)
    return GR_SEV_OK;
  double tflops = g->gemm_flops / g->gemm_seconds / 1e12;
  char why[320];
  if (g->gemm_samples > 0 && g->gemm_util_max < 50) {
    slow_why(x, i, m ? m : &(struct gr_gpu_model){0}, why, sizeof(why));
    verdict(x->r, GR_SEV_WARN, "burn.idle", name, "%s never reached load during the matrix products: at most %.0f %% "
            "busy, %.0f MHz, %.0f W in %u sample%s: %s", name, g->gemm_util_max, g->gemm_clock_max, g->gemm_power_max,
            g->gemm_samples, g->gemm_samples == 1 ? "" : "s", why);
    return GR_SEV_WARN;
  }
  if (!m || m->fp16_fp32acc_tflops <= 0 || tflops >= SLOW_SHARE * m->fp16_fp32acc_tflops)
    return GR_SEV_OK;
  slow_why(x, i, m, why, sizeof(why));
  verdict(x->r, GR_SEV_WARN, "burn.slow", name, "%s ran its matrix products at %.1f TFLOPS, %.0f %% of the %.1f "
          "data/gpus.tsv gives the %s (fp16 in, fp32 accumulate): %s", name, tflops,
          100 * tflops / m->fp16_fp32acc_tflops, m->fp16_fp32acc_tflops, m->model, why);
  return GR_SEV_WARN;
}

static void gpu_verdict(struct run *x, unsigned i)
{
  struct gr_burn_gpu *g = &x->r->gpu[i];
  const char *name = gr_sampler_gpu_name(x->s, i);
  enum gr_sev worst = GR_SEV_OK;
  if (g->lost) {
    verdict(x->r, GR_SEV_FAIL, "burn.gpu-lost", name,
            "%s fell off the bus at +%.1f s under load (the others went on): check the riser or cable, the slot and "
            "the GPU's power cables; if it recurs at full load only, the power supply", name, g->lost_s);
    worst = GR_SEV_FAIL;
  }
  if (g->gemm_wrong) {
    verdict(x->r, GR_SEV_FAIL, "burn.gemm", name, "%s: %ld matrix product%s came out wrong (%s): this GPU computes "
            "wrong results under load; check its cooling and power, then replace it", name, g->gemm_wrong,
            g->gemm_wrong == 1 ? "" : "s", g->gemm_wrong_text);
    worst = GR_SEV_FAIL;
  }
  if (g->corrupt) {
    verdict(x->r, GR_SEV_FAIL, "burn.corrupt", name, "%s: %ld cop%s arrived wrong (%s): data through this GPU's "
            "link cannot be trusted", name, g->corrupt, g->corrupt == 1 ? "y" : "ies", g->corrupt_text);
    worst = GR_SEV_FAIL;
  }
  if (g->xids) {
    char more[64] = "";
    if (g->xids > 1)
      snprintf(more, sizeof(more), " (%ld Xids in all)", g->xids);
    verdict(x->r, g->xid_sev, "burn.xid", name, "%s under load%s", g->xid_text, more);
    if (g->xid_sev > worst)
      worst = g->xid_sev;
  }
  double allowed = gpu_allowance(x, i, x->r->run_s), replays = g->replay_end - g->replay_start;
  if (g->replay_ok && replays > 0) {
    enum gr_sev sev = allowed >= 0 && replays > allowed ? GR_SEV_FAIL : GR_SEV_WARN;
    verdict(x->r, sev, "burn.replay", name, "%s: %.0f PCIe replays in %.0f s under load%s%.0f%s", name, replays,
            x->r->run_s, allowed >= 0 ? "; a healthy link of this GPU's generation and trained width allows " : "",
            allowed >= 0 ? allowed : 0, allowed >= 0 ? " (DCGM's error-rate rule)" : "");
    if (sev > worst)
      worst = sev;
  }
  enum gr_sev rate = gemm_rate_verdict(x, i);
  if (rate > worst)
    worst = rate;
  char thr[256];
  if (throttle_words(g, x->r->run_s, thr, sizeof(thr)) > 0) {
    verdict(x->r, GR_SEV_WARN, "burn.throttle", name, "%s slowed under load: %s (hottest %.0f C): clean the cooler, "
            "improve the case airflow or the spacing, or check the power cables", name, thr,
            g->temp_max.ok ? g->temp_max.v : 0);
    worst = worst > GR_SEV_WARN ? worst : GR_SEV_WARN;
  }
  if (worst == GR_SEV_OK)
    pass_verdict(x, i);
}

/* The time below which a share p of the iterations fall: the middle of
 * the histogram bin that holds it (within 2.5 %), never over the maximum. */
static double percentile(const struct run *x, double p)
{
  size_t want = (size_t)ceil(p * (double)x->r->nar), seen = 0;
  for (int b = 0; b < AR_BINS; b++) {
    seen += x->ar_hist[b];
    if (seen >= want && seen > 0)
      return fmin(AR_BIN0 * pow(AR_STEP, b + 0.5), x->r->ar_max);
  }
  return x->r->ar_max;
}

/* The all-reduce: not run (info: a pattern or subset it cannot run with),
 * could not start (warn: a set-up problem, NCCL's word), stopped mid-run
 * (fail), then its timing and its stalls. */
static void allreduce_verdict(struct run *x)
{
  struct gr_burn_report *r = x->r;
  if (x->ar_skipped[0])
    verdict(r, GR_SEV_INFO, "burn.allreduce", NULL, "all-reduce not run: %s", x->ar_skipped);
  if (x->ar_open_fail[0])
    verdict(r, GR_SEV_WARN, "burn.allreduce", NULL, "the all-reduce could not start: %s: the collective a training "
            "job runs is untested; check NCCL (NCCL_DEBUG=INFO gpurig bench --load allreduce)", x->ar_open_fail);
  if (x->allreduce.stopped)
    verdict(r, GR_SEV_FAIL, "burn.allreduce", NULL, "the all-reduce failed at +%.0f s under load after %zu "
            "iterations: %s", x->allreduce.at_s, r->nar, x->allreduce.why);
  if (!r->nar)
    return;
  r->ar_p50 = percentile(x, 0.5);
  r->ar_p99 = percentile(x, 0.99);
  if (!r->nstall && !x->allreduce.stopped) {
    verdict(r, GR_SEV_OK, "burn.allreduce", NULL, "all-reduce: %zu iterations, p50 %.3f ms, p99 %.3f ms, max %.3f ms, "
            "no stall (none over %.0fx the median)", r->nar, r->ar_p50 * 1e3, r->ar_p99 * 1e3, r->ar_max * 1e3,
            x->o->stall_factor);
    return;
  }
  size_t kept = r->nstall < GR_BURN_STALLS_KEPT ? r->nstall : GR_BURN_STALLS_KEPT;
  for (size_t k = 0; k < kept; k++) {
    const struct gr_burn_stall *st = &r->stall[k];
    verdict(r, GR_SEV_WARN, "burn.stall", NULL, "all-reduce stalled at +%.1f s: %.3f ms, %.0fx the median %.3f ms%s%s",
            st->at_s, st->seconds * 1e3, st->seconds / st->median_s, st->median_s * 1e3,
            st->seen[0] ? "; the sampler saw: " : "; the sampler saw nothing then", st->seen);
  }
  if (r->nstall > kept)
    verdict(r, GR_SEV_WARN, "burn.stall", NULL, "and %zu more all-reduce stalls after the first %zu",
            r->nstall - kept, kept);
}

/* The GEMM and copy loads: could not start (warn), stopped mid-run with no
 * lost GPU to explain it (fail). */
static void load_verdicts(struct run *x)
{
  struct gr_burn_report *r = x->r;
  if (x->gemm_open_fail[0])
    verdict(r, GR_SEV_WARN, "burn.gemm", NULL, "no matrix-product load: %s: the GPUs' compute was not tested "
            "(%s, or free GPU memory)", x->gemm_open_fail, x->be->blas_install ? x->be->blas_install : "install the vendor's BLAS");
  if (x->gemm.stopped)
    verdict(r, GR_SEV_FAIL, "burn.gemm", NULL, "the matrix products stopped at +%.0f s under load: %s", x->gemm.at_s,
            x->gemm.why);
  if (x->copies.stopped)
    verdict(r, GR_SEV_FAIL, "burn.copy", NULL, "the copies stopped at +%.0f s under load: %s", x->copies.at_s,
            x->copies.why);
}

/* A run a signal stopped: the verdicts cover what ran; it is not a pass. */
static void interrupted_verdict(struct run *x)
{
  struct gr_burn_report *r = x->r;
  if (!r->interrupted)
    return;
  int sig = r->stop_signal;
  verdict(r, GR_SEV_WARN, "burn.interrupted", NULL, "stopped by %s after %.1f s of %.0f: the verdicts cover what "
          "ran; a partial burn-in is not a pass", sig == SIGTERM ? "SIGTERM" : sig == SIGHUP ? "SIGHUP"
          : sig == SIGINT ? "SIGINT" : "a signal", r->run_s, x->o->duration_s);
}

/* Staggered: how many GPUs were loaded when the first warning or failure
 * came (the power-supply question: errors that start at the Nth GPU). */
static void staggered_step(struct run *x)
{
  if (x->o->pattern != GR_PAT_STAGGERED)
    return;
  if (x->r->first_problem_s >= 0) {
    double at = x->r->first_problem_s;
    unsigned loaded = 0;
    for (unsigned i = 0; i < x->r->ngpu; i++)
      loaded += x->r->gpu[i].joined_s >= 0 && x->r->gpu[i].joined_s <= at;
    verdict(x->r, GR_SEV_INFO, "burn.staggered", NULL,
            "staggered: the first problem came with %u of %u GPUs loaded (+%.0f s): %s%s", loaded, x->nsel, at,
            x->r->first_problem, loaded > 1 ? "; a problem that starts only with several GPUs loaded points at the power "
                                  "supply or its cabling" : "");
    return;
  }
  verdict(x->r, GR_SEV_INFO, "burn.staggered", NULL, "staggered: no problem up to all %u GPUs loaded", x->nsel);
}

/* The GPUs' measured draw against the power budget (--psu, a rig's PSUs):
 * over it fails, within 10% of it warns (the headroom the rig budget asks,
 * analysis/power.c), and NVML's readings are averages, so the millisecond
 * peaks a PSU's protection sees go higher still. */
static void power_verdict(struct run *x)
{
  const struct gr_burn_report *r = x->r;
  const struct gr_burn_opts *o = x->o;
  if (o->psu_w <= 0)
    return;
  if (!r->power_total_n) {
    verdict(x->r, GR_SEV_INFO, "burn.power", NULL, "power against the %.0f W budget (%s): not measured (a GPU "
            "reports no power draw)", o->psu_w, o->psu_what);
    return;
  }
  double peak = r->power_total_max + o->psu_other_w, share = peak / o->psu_w;
  enum gr_sev sev = peak > o->psu_w ? GR_SEV_FAIL : share > 0.9 ? GR_SEV_WARN : GR_SEV_OK;
  char other[96] = "";
  if (o->psu_other_w > 0)
    snprintf(other, sizeof(other), " plus %.0f W for the CPUs at TDP", o->psu_other_w);
  struct gr_finding *f =
      verdict(x->r, sev, "burn.power", NULL,
              "power: the %u GPUs drew %.0f W together at most, %.0f W on average (%u samples)%s: %.0f W is %.0f%% of "
              "the %.0f W budget (%s)%s", r->ngpu, r->power_total_max, r->power_total_sum / r->power_total_n,
              r->power_total_n, other, peak, share * 100, o->psu_w, o->psu_what,
              sev == GR_SEV_OK ? "" : sev == GR_SEV_WARN ? ", under 10% headroom" : ", over it");
  if (f)
    gr_finding_evidence(f, "nvml", "the sampler's power readings (NVML averages them, so millisecond peaks go higher: "
                        "data/power-gpus.tsv)");
  if (f && sev != GR_SEV_OK)
    gr_finding_fix(f, NULL, "a power limit on each GPU (nvidia-smi -pl, as root; gpurig never sets it), or another "
                   "PSU for part of the GPUs");
}

void burn_verdicts(struct run *x)
{
  struct gr_burn_report *r = x->r;
  burn_judge_running(x, r->run_s);
  for (unsigned i = 0; i < r->ngpu; i++)
    if (r->gpu[i].selected)
      gpu_verdict(x, i);
  link_verdicts(x);
  allreduce_verdict(x);
  load_verdicts(x);
  staggered_step(x);
  power_verdict(x);
  interrupted_verdict(x);
  gr_findings_sort(&r->verdicts);
}
