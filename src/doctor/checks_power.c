/* The GPUs' power limits (issue 34): GPUs of one model that enforce
 * different limits, and limits above what a PSU the user names (--psu)
 * can carry. The limits come from the caller (NVML, read by cli/): doctor
 * reads no driver library. gpurig never sets a limit; the fix prints the
 * nvidia-smi line for the user. */
#include <stdio.h>
#include <string.h>

#include "analysis/power.h"
#include "doctor/doctor_internal.h"

#define PL_ROOT "as root; gpurig never sets it, and it lasts until reboot"

/* The limit most GPUs named `name` enforce (the higher on a tie), -1 none. */
static double usual_limit(const struct gr_doctor_opts *o, const char *name)
{
  double best = -1;
  size_t best_n = 0;
  for (size_t i = 0; i < o->ngpu_power; i++) {
    const struct gr_doctor_gpu_power *g = &o->gpu_power[i];
    if (strcmp(g->name, name) != 0 || g->limit_w < 0)
      continue;
    size_t n = 0;
    for (size_t k = 0; k < o->ngpu_power; k++)
      n += strcmp(o->gpu_power[k].name, name) == 0 && o->gpu_power[k].limit_w == g->limit_w;
    if (n > best_n || (n == best_n && g->limit_w > best)) {
      best = g->limit_w;
      best_n = n;
    }
  }
  return best;
}

/* GPUs of one model whose enforced limits differ: a data-parallel step
 * waits for the slowest, so the odd one sets the pace. One result per
 * model, the odd GPUs and the usual limit named. */
static void differing(struct gr_doctor_ctx *c)
{
  const struct gr_doctor_opts *o = c->o;
  for (size_t i = 0; i < o->ngpu_power; i++) {
    const char *name = o->gpu_power[i].name;
    bool first = true, odd = false;
    for (size_t k = 0; k < i; k++)
      first &= strcmp(o->gpu_power[k].name, name) != 0;
    double usual = usual_limit(o, name);
    for (size_t k = 0; first && k < o->ngpu_power; k++)
      odd |= strcmp(o->gpu_power[k].name, name) == 0 && o->gpu_power[k].limit_w >= 0 &&
             o->gpu_power[k].limit_w != usual;
    if (!odd)
      continue;
    char cmd[512] = "";
    size_t off = 0;
    struct gr_finding *f = dr_add(c, GR_SEV_WARN, -1, "%s GPUs enforce different power limits (most: %.0f W): "
                                  "a data-parallel step waits for the slowest GPU, so the lowest limit sets the "
                                  "pace of all", name, usual);
    for (size_t k = 0; k < o->ngpu_power; k++) {
      const struct gr_doctor_gpu_power *g = &o->gpu_power[k];
      if (strcmp(g->name, name) != 0 || g->limit_w < 0)
        continue;
      char dflt[32] = "unknown";
      if (g->default_w >= 0)
        snprintf(dflt, sizeof(dflt), "%.0f W", g->default_w);
      gr_finding_evidence(f, "nvml", "GPU%zu %s: limit %.0f W (default %s)", k, g->busid, g->limit_w, dflt);
      if (g->limit_w != usual && off < sizeof(cmd))
        off += (size_t)snprintf(cmd + off, sizeof(cmd) - off, "%snvidia-smi -i %s -pl %.0f", off ? "; " : "",
                                g->busid, usual);
    }
    gr_finding_fix(f, "the odd GPUs draw more (or less) power", "%s (%s), or the same lower limit on every GPU",
                   cmd, PL_ROOT);
  }
}

/* Limits above what --psu WATTS carries with 10% headroom and the CPUs at
 * TDP (the rig budget's rule, analysis/power.c). */
static void over_budget(struct gr_doctor_ctx *c, const struct gr_power_budget *b)
{
  const struct gr_doctor_opts *o = c->o;
  double allowed = gr_power_limit_within(b, o->ngpu_power, o->psu_w), top = -1;
  size_t over = 0;
  for (size_t i = 0; i < o->ngpu_power; i++)
    if (o->gpu_power[i].limit_w > allowed) {
      over++;
      top = o->gpu_power[i].limit_w > top ? o->gpu_power[i].limit_w : top;
    }
  if (!over)
    return;
  char cpus[96];
  if (b->cpu_w > 0)
    snprintf(cpus, sizeof(cpus), "less the CPUs' %.0f W at TDP", b->cpu_w);
  else
    snprintf(cpus, sizeof(cpus), "the CPUs not counted: no TDP for them in data/power-parts.tsv");
  struct gr_finding *f = dr_add(c, GR_SEV_WARN, -1, "%zu of %zu GPUs enforce power limits up to %.0f W; a %.0f W "
                                "PSU (--psu) carries %.0f W per GPU (90%% of it, %s)", over, o->ngpu_power, top,
                                o->psu_w, allowed, cpus);
  if (allowed > 0)
    gr_finding_fix(f, "the GPUs' clocks under full load", "nvidia-smi -pl %.0f (every GPU, %s), or a PSU with more "
                   "watts, or a second PSU for part of the GPUs", allowed, PL_ROOT);
  else
    gr_finding_fix(f, NULL, "a PSU with more watts: this one does not carry the CPUs with 10%% headroom");
}

void check_gpu_power_limits(struct gr_doctor_ctx *c)
{
  const struct gr_doctor_opts *o = c->o;
  if (!o->ngpu_power) {
    dr_add(c, GR_SEV_SKIPPED, -1, "The GPUs' power limits come from the GPU driver (NVML, ROCm SMI): %s.",
           o->why_no_power ? o->why_no_power : "gpurig doctor reads them, this command does not");
    return;
  }
  struct gr_power_budget b;
  gr_power_budget(c->t, &b);
  differing(c);
  if (o->psu_w > 0)
    over_budget(c, &b);
  if (!c->added) {
    double lim = o->gpu_power[0].limit_w;
    if (o->psu_w > 0)
      dr_add(c, GR_SEV_OK, -1, "%zu GPUs' power limits (%.0f W on GPU0) agree and fit a %.0f W PSU's %.0f W per "
             "GPU.", o->ngpu_power, lim, o->psu_w, gr_power_limit_within(&b, o->ngpu_power, o->psu_w));
    else
      dr_add(c, GR_SEV_OK, -1, "%zu GPUs' power limits agree model by model (%.0f W on GPU0); give --psu WATTS to "
             "hold them against a power supply.", o->ngpu_power, lim);
  }
  gr_power_free(&b);
}
