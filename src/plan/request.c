/* Planning requests from what the user typed; see request.h. */
#include "plan/request.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "facts/facts.h"

static int opt_long(const char *name, const char *s, long min, long max, long *out, struct gr_err *err)
{
  if (!parse_long(s, 10, out) || *out < min || *out > max)
    return gr_fail(err, GR_EXIT_FAIL, "%s %s: expected a whole number from %ld to %ld", name, s, min, max);
  return 0;
}

static int opt_double(const char *name, const char *s, double *out, struct gr_err *err)
{
  char *end;
  *out = strtod(s, &end);
  if (end == s || *end || !isfinite(*out) || *out < 0)
    return gr_fail(err, GR_EXIT_FAIL, "%s %s: expected a number, 0 or more", name, s);
  return 0;
}

bool gr_plan_args_given(const struct gr_plan_args *a)
{
  return a->model || a->params || a->quant || a->ctx || a->batch || a->gpus || a->zero || a->tp || a->pp;
}

static int parse_job(const char *s, enum gr_job *j, struct gr_err *err)
{
  static const char *const names[] = {"infer", "lora", "qlora", "full"};
  for (int i = 0; i < 4; i++)
    if (s && strcmp(s, names[i]) == 0) {
      *j = (enum gr_job)i;
      return 0;
    }
  if (s && strcmp(s, "inference") == 0) {
    *j = GR_JOB_INFER;
    return 0;
  }
  return gr_fail(err, GR_EXIT_FAIL, "--job %s: expected infer, lora, qlora or full", s ? s : "(missing)");
}

static int parse_targets(const char *s, unsigned *out, struct gr_err *err)
{
  static const char *const names[] = {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"};
  *out = 0;
  if (strcmp(s, "all-linear") == 0 || strcmp(s, "all") == 0) {
    *out = GR_LORA_ALL;
    return 0;
  }
  char buf[256];
  snprintf(buf, sizeof(buf), "%s", s);
  for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    unsigned bit = 0;
    for (unsigned i = 0; i < 7; i++)
      if (strcmp(tok, names[i]) == 0)
        bit = 1u << i;
    if (!bit)
      return gr_fail(err, GR_EXIT_FAIL, "--lora-targets: unknown module '%s' (q_proj, k_proj, v_proj, o_proj, "
                     "gate_proj, up_proj, down_proj, all-linear)", tok);
    *out |= bit;
  }
  return *out ? 0 : gr_fail(err, GR_EXIT_FAIL, "--lora-targets: no module named");
}

/* --model NAME|CONFIG.json or --params N. */
static int load_model(const struct gr_plan_args *a, struct gr_model *m, struct gr_err *err)
{
  struct stat st;
  if (!!a->model == !!a->params)
    return gr_fail(err, GR_EXIT_FAIL, "give one of --model NAME|CONFIG.json and --params N");
  if (a->params) {
    double n;
    if (!gr_parse_param_count(a->params, &n))
      return gr_fail(err, GR_EXIT_FAIL, "--params %s: expected a count such as 7B, 34B, 175B or 7e9", a->params);
    gr_model_from_params(n, m);
    return 0;
  }
  if (strchr(a->model, '/') || strstr(a->model, ".json") || stat(a->model, &st) == 0)
    return gr_model_load_config(a->model, m, err);
  return gr_model_builtin(a->model, m, err);
}

/* GPUs, parallelism, batch and LoRA rank, with their defaults. */
static int parse_counts(const struct gr_plan_args *a, int machine_gpus, struct gr_plan_req *r, struct gr_err *err)
{
  long v;
  r->gpus = machine_gpus;
  if (a->gpus) {
    if (opt_long("--gpus", a->gpus, 0, 64, &v, err) != 0)
      return -1;
    r->gpus = (int)v;
  }
  r->tp = 1;
  if (a->tp) {
    if (opt_long("--tp", a->tp, 1, 64, &v, err) != 0)
      return -1;
    r->tp = (int)v;
  }
  /* inference splits layers over every GPU by default, as llama.cpp and accelerate do */
  r->pp = r->job == GR_JOB_INFER && r->gpus > 0 ? r->gpus / r->tp : 1;
  if (r->pp < 1)
    r->pp = 1;
  if (a->pp) {
    if (opt_long("--pp", a->pp, 1, 64, &v, err) != 0)
      return -1;
    r->pp = (int)v;
  }
  if (a->zero) {
    if (opt_long("--zero", a->zero, 0, 3, &v, err) != 0)
      return -1;
    r->zero = (int)v;
  }
  r->batch = 1;
  if (a->batch && opt_long("--batch", a->batch, 1, 1L << 20, &r->batch, err) != 0)
    return -1;
  r->lora_rank = 8;
  if (a->lora_rank && opt_long("--lora-rank", a->lora_rank, 1, 1L << 16, &r->lora_rank, err) != 0)
    return -1;
  r->state_bytes = 18;
  if (a->state_bytes) {
    if (opt_long("--state-bytes", a->state_bytes, 16, 18, &v, err) != 0 || (v != 16 && v != 18))
      return gr_fail(err, GR_EXIT_FAIL, "--state-bytes %s: 16 (ZeRO paper) or 18 (DeepSpeed, HF)", a->state_bytes);
    r->state_bytes = (int)v;
  }
  return 0;
}

/* Weight and KV formats, context, LoRA targets and offload, with their defaults. */
static int parse_formats(const struct gr_plan_args *a, const struct gr_model *m, struct gr_plan_req *r,
                         struct gr_err *err)
{
  const char *q = a->quant ? a->quant : r->job == GR_JOB_QLORA ? "nf4-dq" : m->quant_hint ? m->quant_hint : "bf16";
  if (gr_quant_parse(q, &r->quant, err) != 0 || gr_quant_parse(a->kv_quant ? a->kv_quant : "fp16", &r->kv_quant, err) != 0)
    return -1;
  if (r->job == GR_JOB_QLORA && r->quant.kind != GR_Q_BNB)
    return gr_fail(err, GR_EXIT_FAIL, "--job qlora keeps the base in bitsandbytes 4-bit: --quant nf4 or nf4-dq");
  long dflt = r->job == GR_JOB_INFER ? 4096 : 2048;
  r->ctx = m->max_ctx > 0 && m->max_ctx < dflt ? m->max_ctx : dflt;
  if (a->ctx && opt_long("--ctx", a->ctx, 1, 1L << 30, &r->ctx, err) != 0)
    return -1;
  r->lora_targets = GR_LORA_Q | GR_LORA_V;
  if (a->lora_targets && parse_targets(a->lora_targets, &r->lora_targets, err) != 0)
    return -1;
  r->offload = GR_OFFLOAD_NONE;
  if (a->offload) {
    if (strcmp(a->offload, "optimizer") == 0)
      r->offload = GR_OFFLOAD_OPTIMIZER;
    else if (strcmp(a->offload, "params") == 0)
      r->offload = GR_OFFLOAD_PARAMS;
    else if (strcmp(a->offload, "none") != 0)
      return gr_fail(err, GR_EXIT_FAIL, "--offload %s: expected optimizer, params or none", a->offload);
  }
  return 0;
}

int gr_plan_request(const struct gr_plan_args *a, int machine_gpus, struct gr_plan_req *r, struct gr_model *m,
                    struct gr_err *err)
{
  memset(r, 0, sizeof(*r));
  memset(m, 0, sizeof(*m));
  if (parse_job(a->job, &r->job, err) != 0 || load_model(a, m, err) != 0)
    return -1;
  r->kwh_price = gr_planner_const("kwh_price_usd");
  r->rank0_load = a->rank0_load;
  r->checkpointing = a->checkpointing;
  if (parse_counts(a, machine_gpus, r, err) != 0 || parse_formats(a, m, r, err) != 0 ||
      (a->price && opt_double("--price", a->price, &r->price, err) != 0) ||
      (a->kwh && opt_double("--kwh", a->kwh, &r->kwh_price, err) != 0) ||
      (a->rent && opt_double("--rent", a->rent, &r->rent, err) != 0)) {
    gr_model_free(m);
    return -1;
  }
  return 0;
}

/* --cpu CHANNELSxMT/s: host memory bandwidth for CPU inference. */
static int parse_cpu(const char *s, struct gr_plan_hw *hw, struct gr_err *err)
{
  long ch, mts;
  char a[32], b[32];
  const char *x = strchr(s, 'x');
  if (!x || (size_t)(x - s) >= sizeof(a) || strlen(x + 1) >= sizeof(b))
    return gr_fail(err, GR_EXIT_FAIL, "--cpu %s: expected CHANNELSxMT/s, e.g. 8x3200", s);
  snprintf(a, sizeof(a), "%.*s", (int)(x - s), s);
  snprintf(b, sizeof(b), "%s", x + 1);
  if (!parse_long(a, 10, &ch) || ch < 1 || ch > 64 || !parse_long(b, 10, &mts) || mts < 100 || mts > 20000)
    return gr_fail(err, GR_EXIT_FAIL, "--cpu %s: expected CHANNELSxMT/s, e.g. 8x3200", s);
  hw->cpu_bw_gbps = (double)ch * 8.0 * (double)mts / 1000.0;
  snprintf(hw->cpu_desc, sizeof(hw->cpu_desc), "%ld channels x %ld MT/s = %.1f GB/s", ch, mts, hw->cpu_bw_gbps);
  return 0;
}

int gr_plan_hw_from(const struct gr_plan_args *a, const struct gr_machine *m, struct gr_plan_hw *hw, struct gr_err *err)
{
  memset(hw, 0, sizeof(*hw));
  if (m)
    gr_plan_hw_from_topo(&m->topo, &m->prediction, hw);
  else
    snprintf(hw->name, sizeof(hw->name), "CPU only");
  return a->cpu ? parse_cpu(a->cpu, hw, err) : 0;
}

int gr_plan_machine_open(const struct gr_plan_args *a, const struct gr_source *given, struct gr_machine *m,
                         bool *cpu_only, struct gr_plan_hw *hw, struct gr_err *err)
{
  long n = 1;
  memset(m, 0, sizeof(*m));
  if (a->gpus && (!parse_long(a->gpus, 10, &n) || n < 0 || n > 64))
    return gr_fail(err, GR_EXIT_FAIL, "--gpus %s: expected a whole number from 0 to 64", a->gpus);
  *cpu_only = (a->gpus && n == 0) || (a->cpu && !a->gpu && given->kind == GR_SRC_LIVE && !a->gpus);
  if (*cpu_only)
    return gr_plan_hw_from(a, NULL, hw, err);
  struct gr_source src = *given;
  if (a->gpu && given->kind != GR_SRC_RIG) /* with a rig, --gpu fills its slots instead */
    src = (struct gr_source){.kind = GR_SRC_GENERIC, .gpu_model = a->gpu, .gpus = (int)n};
  if (gr_machine_open(&src, GR_MACHINE_PREDICT | GR_MACHINE_GROUPS, m, err) != 0)
    return -1;
  return gr_plan_hw_from(a, m, hw, err);
}

int gr_plan_job(const struct gr_plan_args *a, const struct gr_plan_hw *hw, const char *label, struct gr_planned *pl,
                struct gr_err *err)
{
  memset(pl, 0, sizeof(*pl));
  pl->hw = *hw;
  if (gr_plan_request(a, hw->ngpus, &pl->req, &pl->model, err) != 0)
    return -1;
  if (gr_plan_check(&pl->req, &pl->model, &pl->hw, err) != 0) {
    if (label) {
      char msg[sizeof(err->msg)];
      snprintf(msg, sizeof(msg), "%s", err->msg);
      snprintf(err->msg, sizeof(err->msg), "%.200s: %.500s", label, msg);
    }
    gr_model_free(&pl->model);
    return -1;
  }
  gr_plan_run(&pl->req, &pl->model, &pl->hw, &pl->plan);
  return 0;
}

void gr_planned_free(struct gr_planned *pl)
{
  gr_model_free(&pl->model);
  memset(pl, 0, sizeof(*pl));
}

void gr_plan_findings(const struct gr_planned *pl, const char *machine, struct gr_findings *out)
{
  const struct gr_plan *p = &pl->plan;
  enum gr_sev sev = p->fit == GR_FIT_NO ? GR_SEV_FAIL : p->fit == GR_FIT_TIGHT ? GR_SEV_WARN : GR_SEV_OK;
  struct gr_finding *f = gr_finding_add(out, sev, "plan.fit", "%s%s%s", machine ? machine : "", machine ? ": " : "",
                                        p->verdict);
  gr_finding_evidence(f, "plan", "%.1f of %.1f GiB per GPU", p->gpu_need_gib, p->gpu_have_gib);
  if (p->fix[0])
    gr_finding_fix(f, "see the plan", "%s", p->fix);
}
