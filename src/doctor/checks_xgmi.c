/* xGMI link errors (issue 35): what AMD's driver counts on the GPUs'
 * Infinity Fabric links, as ROCm SMI gives it: the links' RAS block (XGMI
 * WAFL) corrected and uncorrected counts, and the driver's error state. The
 * caller reads them (cli/, with the power limits): doctor reads no driver
 * library. gpurig never clears them; the fix names rocm-smi's command. */
#include <stdio.h>

#include "doctor/doctor_internal.h"

static const char *state_words(int s)
{
  return s == 1 ? "an error" : s >= 2 ? "several errors" : "no errors";
}

/* One GPU whose links report errors: uncorrected ones lost data (fail),
 * corrected ones or an error state are a link retrying (warn). */
static void gpu_errors(struct gr_doctor_ctx *c, size_t i)
{
  const struct gr_doctor_gpu_power *g = &c->o->gpu_power[i];
  bool lost = g->xgmi_uncorrected > 0;
  struct gr_finding *f;
  if (lost)
    f = dr_add(c, GR_SEV_FAIL, -1, "GPU%zu %s: %.0f uncorrectable xGMI errors: its Infinity Fabric links lost "
               "data, and a job across them can fail or compute wrong results", i, g->busid, g->xgmi_uncorrected);
  else
    f = dr_add(c, GR_SEV_WARN, -1, "GPU%zu %s: xGMI errors (%.0f corrected; the driver's error state: %s): its links "
               "retry transfers, which costs bandwidth", i, g->busid,
               g->xgmi_corrected > 0 ? g->xgmi_corrected : 0, state_words(g->xgmi_state));
  gr_finding_evidence(f, "rocm-smi", "GPU%zu %s: XGMI WAFL corrected %.0f, uncorrected %.0f; error state %d", i,
                      g->busid, g->xgmi_corrected, g->xgmi_uncorrected, g->xgmi_state);
  gr_finding_fix(f, "a power-off to reseat it", "reseat the Infinity Fabric bridge (or the xGMI cables) on this "
                 "GPU; `rocm-smi --resetxgmierr` (as root) clears the state, then gpurig watch shows whether the "
                 "errors come back%s", lost ? "; errors that return on a seated bridge are the GPU's (RMA)" : "");
}

static bool amd_gpus(const struct gr_topo *t)
{
  for (size_t i = 0; i < t->ngpus; i++)
    if (t->pci[t->gpus[i]].vendor == 0x1002)
      return true;
  return false;
}

void check_gpu_xgmi(struct gr_doctor_ctx *c)
{
  const struct gr_doctor_opts *o = c->o;
  size_t reported = 0;
  if (!o->ngpu_power && !amd_gpus(c->t)) {
    dr_add(c, GR_SEV_OK, -1, "No AMD GPU here: no xGMI links to check.");
    return;
  }
  if (!o->ngpu_power) {
    dr_add(c, GR_SEV_SKIPPED, -1, "xGMI error counts come from the GPU driver (ROCm SMI): %s.",
           o->why_no_power ? o->why_no_power : "gpurig doctor reads them, this command does not");
    return;
  }
  for (size_t i = 0; i < o->ngpu_power; i++) {
    const struct gr_doctor_gpu_power *g = &o->gpu_power[i];
    if (g->xgmi_corrected < 0 && g->xgmi_uncorrected < 0 && g->xgmi_state < 0)
      continue;
    reported++;
    if (g->xgmi_uncorrected > 0 || g->xgmi_corrected > 0 || g->xgmi_state > 0)
      gpu_errors(c, i);
  }
  if (!reported)
    dr_add(c, GR_SEV_OK, -1, "No GPU reports xGMI error counts: no xGMI links here, or a driver without them "
           "(NVIDIA's; AMD's Radeons).");
  else if (!c->added)
    dr_add(c, GR_SEV_OK, -1, "%zu GPU%s report no xGMI errors (the links' RAS block and the driver's error state).",
           reported, reported == 1 ? "" : "s");
}
