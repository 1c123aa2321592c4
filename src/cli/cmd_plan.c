/* `gpurig plan`: will this model and job fit on this machine, how fast, and
 * at what cost. A loader (rig, catalog GPU, live machine), the analysis and
 * prediction, the planner, and a printer. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "facts/catalog.h"
#include "cli/cli.h"
#include "plan/llm.h"
#include "plan/plan.h"
#include "print/print.h"
#include "load/rig.h"

static void plan_usage(void)
{
  char names[1024];
  gr_model_builtin_names(names, sizeof(names));
  printf("usage: gpurig plan (--model NAME|CONFIG.json | --params N) --job infer|lora|qlora|full\n"
         "                   [--quant Q] [--kv-quant Q] [--ctx TOKENS] [--batch N]\n"
         "                   [--gpus N] [--gpu MODEL | --rig RIG | --root DIR | --input FILE.xml]\n"
         "                   [--tp N] [--pp N] [--zero 0|1|2|3] [--offload optimizer|params]\n"
         "                   [--checkpointing] [--lora-rank R] [--lora-targets LIST] [--state-bytes 16|18]\n"
         "                   [--rank0-load] [--cpu CHANNELSxMT/s] [--price P] [--kwh P] [--rent P]\n"
         "                   [--estimator gpurig|deepspeed] [--json]\n"
         "\n"
         "Will this model and job fit, how fast will it run, and what will it cost: memory per GPU\n"
         "and for the host item by item (GiB), a verdict with the change that makes it fit, the\n"
         "largest batch and context that fit, decode/prefill tokens/s or training step time with\n"
         "their ranges, and price, power and rent. Method and sources: docs/plan.md.\n"
         "\n"
         "  --model NAME|PATH  a built-in model (%s)\n"
         "                     or a Hugging Face config.json\n"
         "  --params N         only a parameter count: 7B, 34B, 175B, 7e9 (model states and weights only)\n"
         "  --job J            infer, lora, qlora (4-bit base + LoRA), full (mixed-precision AdamW)\n"
         "  --quant Q          weights: fp16, bf16, fp8, int8, nf4, nf4-dq, gptq[-gN], awq[-gN], llama.cpp\n"
         "                     files q4_0 q4_1 q5_0 q5_1 q8_0 q4_k_s q4_k_m q5_k_s q5_k_m q6_k, or ggml:TYPE\n"
         "                     (default: the checkpoint's own, else bf16; qlora: nf4-dq)\n"
         "  --kv-quant Q       KV cache elements: fp16 (default), q8_0, q4_0\n"
         "  --ctx TOKENS       context per sequence (default: the model's, at most 4096; training 2048)\n"
         "  --batch N          sequences per GPU (training: micro-batch per data-parallel rank; default 1)\n"
         "  --gpus N           GPUs to use (default: all of the machine; --gpu alone: 1; 0 = CPU only)\n"
         "  --gpu MODEL        N of this catalog GPU on a generic board, one x16 root port each\n"
         "  --rig RIG          a rig file or a name from data/rigs/ (gpurig compare --list)\n"
         "  --tp N, --pp N     tensor parallel and layer split (pipeline) degrees; inference defaults\n"
         "                     to a layer split over all GPUs, as llama.cpp and accelerate do\n"
         "  --zero S           ZeRO stage (FSDP FULL_SHARD = 3, SHARD_GRAD_OP = 2)\n"
         "  --offload WHAT     ZeRO-Offload of the optimizer states, or of the parameters too (ZeRO-3)\n"
         "  --checkpointing    gradient checkpointing\n"
         "  --lora-rank R      LoRA rank (default 8)\n"
         "  --lora-targets L   q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj or all-linear\n"
         "                     (default q_proj,v_proj as PEFT does for Llama)\n"
         "  --state-bytes B    full fine-tune model states per parameter: 18 (DeepSpeed, HF; default)\n"
         "                     or 16 (the ZeRO paper)\n"
         "  --rank0-load       only rank 0 reads the checkpoint (FSDP sync_module_states)\n"
         "  --cpu CHxMTS       host memory for CPU inference, e.g. 8x3200 (8 channels of DDR4-3200)\n"
         "  --price P          the machine's price (default: the rig file's)\n"
         "  --kwh P            electricity per kWh (default 0.15)\n"
         "  --rent P           cloud price per GPU-hour to compare with (a year of renting)\n"
         "  --estimator E      gpurig (default) or deepspeed: DeepSpeed's estimate_zero2/zero3\n"
         "                     model-states printout, digit for digit (--job full, --zero 2 or 3)\n"
         "  --json             the same as JSON (docs/json.md)\n"
         "\n"
         "Exit status: 0 fits, 1 fits but tight, 2 does not fit or bad input, 3 could not run.\n",
         names);
}

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

static int load_model(const struct gr_opts *o, struct gr_model *m, struct gr_err *err)
{
  struct stat st;
  if (!!o->model == !!o->params)
    return gr_fail(err, GR_EXIT_FAIL, "give one of --model NAME|CONFIG.json and --params N");
  if (o->params) {
    double n;
    if (!gr_parse_param_count(o->params, &n))
      return gr_fail(err, GR_EXIT_FAIL, "--params %s: expected a count such as 7B, 34B, 175B or 7e9", o->params);
    gr_model_from_params(n, m);
    return 0;
  }
  if (strchr(o->model, '/') || strstr(o->model, ".json") || stat(o->model, &st) == 0)
    return gr_model_load_config(o->model, m, err);
  return gr_model_builtin(o->model, m, err);
}

static int parse_counts(const struct gr_opts *o, int machine_gpus, struct gr_plan_req *r, struct gr_err *err)
{
  long v;
  r->gpus = machine_gpus;
  if (o->gpus) {
    if (opt_long("--gpus", o->gpus, 0, 64, &v, err) != 0)
      return -1;
    r->gpus = (int)v;
  }
  r->tp = 1;
  if (o->tp) {
    if (opt_long("--tp", o->tp, 1, 64, &v, err) != 0)
      return -1;
    r->tp = (int)v;
  }
  r->pp = r->job == GR_JOB_INFER && r->gpus > 0 ? r->gpus / r->tp : 1;
  if (r->pp < 1)
    r->pp = 1;
  if (o->pp) {
    if (opt_long("--pp", o->pp, 1, 64, &v, err) != 0)
      return -1;
    r->pp = (int)v;
  }
  if (o->zero) {
    if (opt_long("--zero", o->zero, 0, 3, &v, err) != 0)
      return -1;
    r->zero = (int)v;
  }
  r->batch = 1;
  if (o->batch && opt_long("--batch", o->batch, 1, 1L << 20, &r->batch, err) != 0)
    return -1;
  r->lora_rank = 8;
  if (o->lora_rank && opt_long("--lora-rank", o->lora_rank, 1, 1L << 16, &r->lora_rank, err) != 0)
    return -1;
  r->state_bytes = 18;
  if (o->state_bytes) {
    if (opt_long("--state-bytes", o->state_bytes, 16, 18, &v, err) != 0 || (v != 16 && v != 18))
      return gr_fail(err, GR_EXIT_FAIL, "--state-bytes %s: 16 (ZeRO paper) or 18 (DeepSpeed, HF)", o->state_bytes);
    r->state_bytes = (int)v;
  }
  return 0;
}

static int parse_formats(const struct gr_opts *o, const struct gr_model *m, struct gr_plan_req *r, struct gr_err *err)
{
  const char *q = o->quant ? o->quant : r->job == GR_JOB_QLORA ? "nf4-dq" : m->quant_hint ? m->quant_hint : "bf16";
  if (gr_quant_parse(q, &r->quant, err) != 0 || gr_quant_parse(o->kv_quant ? o->kv_quant : "fp16", &r->kv_quant, err) != 0)
    return -1;
  if (r->job == GR_JOB_QLORA && r->quant.kind != GR_Q_BNB)
    return gr_fail(err, GR_EXIT_FAIL, "--job qlora keeps the base in bitsandbytes 4-bit: --quant nf4 or nf4-dq");
  long dflt = r->job == GR_JOB_INFER ? 4096 : 2048;
  r->ctx = m->max_ctx > 0 && m->max_ctx < dflt ? m->max_ctx : dflt;
  if (o->ctx && opt_long("--ctx", o->ctx, 1, 1L << 30, &r->ctx, err) != 0)
    return -1;
  r->lora_targets = GR_LORA_Q | GR_LORA_V;
  if (o->lora_targets && parse_targets(o->lora_targets, &r->lora_targets, err) != 0)
    return -1;
  r->offload = GR_OFFLOAD_NONE;
  if (o->offload) {
    if (strcmp(o->offload, "optimizer") == 0)
      r->offload = GR_OFFLOAD_OPTIMIZER;
    else if (strcmp(o->offload, "params") == 0)
      r->offload = GR_OFFLOAD_PARAMS;
    else if (strcmp(o->offload, "none") != 0)
      return gr_fail(err, GR_EXIT_FAIL, "--offload %s: expected optimizer, params or none", o->offload);
  }
  return 0;
}

int gr_plan_from_opts(const struct gr_opts *o, int machine_gpus, struct gr_plan_req *r, struct gr_model *m,
                      struct gr_err *err)
{
  memset(r, 0, sizeof(*r));
  memset(m, 0, sizeof(*m));
  if (gr_planner_init(err) != 0 || parse_job(o->job, &r->job, err) != 0 || load_model(o, m, err) != 0)
    return -1;
  r->kwh_price = gr_planner_const("kwh_price_usd");
  r->rank0_load = o->rank0_load;
  r->checkpointing = o->checkpointing;
  if (parse_counts(o, machine_gpus, r, err) != 0 || parse_formats(o, m, r, err) != 0 ||
      (o->price && opt_double("--price", o->price, &r->price, err) != 0) ||
      (o->kwh && opt_double("--kwh", o->kwh, &r->kwh_price, err) != 0) ||
      (o->rent && opt_double("--rent", o->rent, &r->rent, err) != 0)) {
    gr_model_free(m);
    return -1;
  }
  return 0;
}

/* --gpu MODEL without a rig: N of them on a generic single-socket board, one
 * x16 root port each, described as a rig so the same loader and prediction
 * apply. */
static int generic_rig(const char *model, int n, struct gr_topo *t, struct gr_err *err)
{
  const struct gr_gpu_model *g = gr_catalog_find(model);
  if (!g)
    return gr_fail(err, GR_EXIT_FAIL, "--gpu %s: not in the GPU catalog (data/gpus.tsv)", model);
  size_t cap = 512 + 96 * (size_t)n, off = 0;
  char *text = xmalloc(cap);
  off += (size_t)snprintf(text + off, cap - off,
                          "rig \"%d x %s on a generic board\"\nsource \"gpurig plan --gpu: one x16 Gen%d root port "
                          "per GPU, one socket\"\ncpu cpu0 \"generic\" vendor amd\n",
                          n, g->model, g->pcie_gen);
  for (int i = 0; i < n; i++)
    off += (size_t)snprintf(text + off, cap - off, "rootcomplex rc%d cpu0 gen%d\ngpu 1 \"%s\" rc%d\n", i, g->pcie_gen,
                            g->model, i);
  int rc = gr_rig_parse("(--gpu)", text, off, t, err);
  free(text);
  return rc;
}

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

struct machine {
  struct gr_topo t;
  struct gr_analysis a;
  struct gr_prediction p;
  bool loaded;
};

static int load_machine(const struct gr_opts *o, struct machine *mc, struct gr_plan_hw *hw, struct gr_err *err)
{
  memset(mc, 0, sizeof(*mc));
  memset(hw, 0, sizeof(*hw));
  long n = 1;
  if (o->gpus && (!parse_long(o->gpus, 10, &n) || n < 0 || n > 64))
    return gr_fail(err, GR_EXIT_FAIL, "--gpus %s: expected a whole number from 0 to 64", o->gpus);
  bool cpu_only = (o->gpus && n == 0) || (o->cpu && !o->gpu && !o->rig && !o->root && !o->input && !o->gpus);
  if (cpu_only) {
    snprintf(hw->name, sizeof(hw->name), "CPU only");
  } else if (o->gpu && !o->rig) {
    if (generic_rig(o->gpu, (int)n, &mc->t, err) != 0 || gr_analyze_loaded(&mc->t, &mc->a, &mc->p, err) != 0)
      return -1;
    mc->loaded = true;
  } else {
    if (gr_load_and_analyze(o, &mc->t, &mc->a, &mc->p, err) != 0)
      return -1;
    mc->loaded = true;
  }
  if (mc->loaded)
    gr_plan_hw_from_topo(&mc->t, &mc->p, hw);
  if (cpu_only)
    hw->ngpus = 0;
  return o->cpu ? parse_cpu(o->cpu, hw, err) : 0;
}

static void free_machine(struct machine *mc)
{
  if (!mc->loaded)
    return;
  gr_prediction_free(&mc->p);
  gr_analysis_free(&mc->a);
  gr_topo_free(&mc->t);
}

static int run_deepspeed(const struct gr_plan_req *r, const struct gr_model *m, bool json, struct gr_err *err)
{
  if (r->job != GR_JOB_FULL || r->zero < 2)
    return gr_fail(err, GR_EXIT_FAIL, "--estimator deepspeed prints DeepSpeed's ZeRO-2/ZeRO-3 model-states "
                   "estimate: give --job full --zero 2 or 3");
  struct gr_param_count c;
  gr_model_count(m, &c);
  char buf[2048];
  gr_plan_deepspeed(r->zero, c.total, c.largest_module, r->gpus, 1, buf, sizeof(buf));
  if (json) {
    json_t *o = json_object();
    json_object_set_new(o, "estimator", json_string(r->zero >= 3 ? "deepspeed.estimate_zero3_model_states_mem_needs_all_cold"
                                                                   : "deepspeed.estimate_zero2_model_states_mem_needs_all_cold"));
    json_object_set_new(o, "total_params", json_integer((json_int_t)c.total));
    json_object_set_new(o, "largest_layer_params", json_integer((json_int_t)c.largest_module));
    json_object_set_new(o, "printout", json_string(buf));
    gr_print_json_stdout(o);
    json_decref(o);
  } else {
    fputs(buf, stdout);
  }
  return GR_EXIT_OK;
}

int cmd_plan(int argc, char **argv)
{
  struct gr_opts o;
  struct gr_err err = {0};
  struct machine mc;
  struct gr_plan_hw hw;
  struct gr_plan_req req;
  struct gr_model model = {0};
  struct gr_plan *plan = NULL;
  int rc;
  if (gr_parse_opts(argc, argv, GR_OPT_PLAN | GR_OPT_JSON | GR_OPT_RIG | GR_OPT_GPU | GR_OPT_SOURCE, &o) != 0)
    return GR_EXIT_FAIL;
  if (o.help) {
    plan_usage();
    return GR_EXIT_OK;
  }
  if (gr_planner_init(&err) != 0)
    return gr_report_error(&err);
  if (load_machine(&o, &mc, &hw, &err) != 0)
    return gr_report_error(&err);
  if (gr_plan_from_opts(&o, hw.ngpus, &req, &model, &err) != 0 || gr_plan_check(&req, &model, &hw, &err) != 0) {
    rc = gr_report_error(&err);
    goto out;
  }
  if (o.estimator && strcmp(o.estimator, "gpurig") != 0) {
    rc = strcmp(o.estimator, "deepspeed") == 0 ? run_deepspeed(&req, &model, o.json, &err)
                                               : gr_fail(&err, GR_EXIT_FAIL, "--estimator %s: gpurig or deepspeed", o.estimator);
    if (rc != GR_EXIT_OK)
      rc = gr_report_error(&err);
    goto out;
  }
  plan = xcalloc(1, sizeof(*plan));
  gr_plan_run(&req, &model, &hw, plan);
  if (o.json) {
    json_t *j = gr_plan_to_json(&req, &model, &hw, plan);
    gr_print_json_stdout(j);
    json_decref(j);
  } else {
    gr_print_plan(stdout, &req, &model, &hw, plan);
  }
  rc = plan->fit == GR_FIT_NO ? GR_EXIT_FAIL : plan->fit == GR_FIT_TIGHT ? GR_EXIT_WARN : GR_EXIT_OK;
out:
  free(plan);
  gr_model_free(&model);
  free_machine(&mc);
  return rc;
}
