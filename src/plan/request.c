/* Planning requests from what the user typed; see request.h. */
#include "plan/request.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "facts/facts.h"
#include "plan/diffusion.h"
#include "plan/engine.h"

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
  return a->model || a->params || a->quant || a->kv_quant || a->ctx || a->batch || a->gpus || a->zero || a->offload ||
         a->tp || a->pp || a->lora_rank || a->lora_targets || a->state_bytes || a->price || a->kwh || a->rent || a->power_limit ||
         a->cpu || a->estimator || a->engine || a->checkpointing || a->rank0_load || a->optimizer || a->resolution ||
         a->dataset_images || a->workers || a->cache_latents || a->cache_text || a->full_bf16;
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

/* --model names a config.json rather than a built-in model. */
static bool is_config_path(const char *model)
{
  struct stat st;
  return strchr(model, '/') || strstr(model, ".json") || stat(model, &st) == 0;
}

/* --model NAME|CONFIG.json or --params N. */
static int load_model(const struct gr_plan_args *a, struct gr_model *m, struct gr_err *err)
{
  if (!!a->model == !!a->params)
    return gr_fail(err, GR_EXIT_FAIL, "give one of --model NAME|CONFIG.json and --params N");
  if (a->params) {
    double n;
    if (!gr_parse_param_count(a->params, &n))
      return gr_fail(err, GR_EXIT_FAIL, "--params %s: expected a count such as 7B, 34B, 175B or 7e9", a->params);
    gr_model_from_params(n, m);
    return 0;
  }
  if (is_config_path(a->model))
    return gr_model_load_config(a->model, m, err);
  return gr_model_builtin(a->model, m, err);
}

bool gr_plan_tp_auto(const struct gr_plan_args *a)
{
  return a->tp && strcmp(a->tp, "auto") == 0;
}

/* GPUs, parallelism, batch and LoRA rank, with their defaults. --tp auto
 * leaves TP 1 here: gr_plan_job tries the degrees. */
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
  if (gr_plan_tp_auto(a)) {
    /* it ranks by decode speed, which only inference has; with --pp the
     * split would be fixed, leaving nothing to choose */
    if (r->job != GR_JOB_INFER)
      return gr_fail(err, GR_EXIT_FAIL, "--tp auto picks the degree with the fastest decode, for --job infer; "
                     "give --tp N for --job %s", gr_job_name(r->job));
    if (a->pp)
      return gr_fail(err, GR_EXIT_FAIL, "--tp auto chooses TP and the layer split over the GPUs together: drop --pp %s",
                     a->pp);
  } else if (a->tp) {
    if (!parse_long(a->tp, 10, &v) || v < 1 || v > 64)
      return gr_fail(err, GR_EXIT_FAIL, "--tp %s: expected a whole number from 1 to 64, or auto", a->tp);
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

/* The weights' format: --quant, else the checkpoint's own. A checkpoint
 * format gpurig does not plan (llm_config.c leaves its description as the
 * hint) is an error only here, so that --quant can still override it. */
static int parse_weights(const struct gr_plan_args *a, const struct gr_model *m, struct gr_plan_req *r,
                         struct gr_err *err)
{
  const char *hint = m ? m->quant_hint : NULL;
  if (!a->quant && r->job != GR_JOB_QLORA && hint && gr_quant_parse(hint, &r->quant, NULL) != 0)
    return gr_fail(err, GR_EXIT_FAIL, "%s: quantization_config %s is not a weight format gpurig plans; give --quant "
                   "to plan the checkpoint as one (gpurig plan --help lists them)", m->name, hint);
  const char *q = a->quant ? a->quant : r->job == GR_JOB_QLORA ? "nf4-dq" : hint ? hint : "bf16";
  if (gr_quant_parse(q, &r->quant, err) != 0)
    return -1;
  if (r->job == GR_JOB_QLORA && r->quant.kind != GR_Q_BNB)
    return gr_fail(err, GR_EXIT_FAIL, "--job qlora keeps the base in bitsandbytes 4-bit: --quant nf4 or nf4-dq");
  return 0;
}

/* Weight and KV formats, context, LoRA targets and offload, with their
 * defaults; m NULL checks what was typed before the model is read. */
static int parse_formats(const struct gr_plan_args *a, const struct gr_model *m, struct gr_plan_req *r,
                         struct gr_err *err)
{
  if (parse_weights(a, m, r, err) != 0 ||
      gr_quant_parse(a->kv_quant ? a->kv_quant : "fp16", &r->kv_quant, err) != 0)
    return -1;
  long dflt = r->job == GR_JOB_INFER ? 4096 : 2048;
  r->ctx = m && m->max_ctx > 0 && m->max_ctx < dflt ? m->max_ctx : dflt;
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

/* The engine: --engine, else the one the format and job run on; it must
 * load the weight and KV formats and run the job. */
static int parse_engine(const struct gr_plan_args *a, struct gr_plan_req *r, struct gr_err *err)
{
  bool training = r->job != GR_JOB_INFER;
  r->engine_given = a->engine != NULL;
  if (!a->engine)
    r->engine = gr_engine_default(training, &r->quant, r->gpus);
  else if (gr_engine_parse_versioned(a->engine, &r->engine, &r->engine_month, err) != 0)
    return -1;
  if (training && !gr_engine_trains(r->engine))
    return gr_fail(err, GR_EXIT_FAIL, "--engine %s runs inference only; --job %s trains with transformers "
                   "(PyTorch, PEFT, DeepSpeed or FSDP)", r->engine, gr_job_name(r->job));
  if (!gr_engine_has_format(r->engine, &r->quant))
    return gr_fail(err, GR_EXIT_FAIL, "%s does not load %s weights (%s); give another --quant or --engine",
                   r->engine, r->quant.name, gr_quant_family(&r->quant));
  if (!gr_engine_has_kv_quant(r->engine, &r->kv_quant))
    return gr_fail(err, GR_EXIT_FAIL, "--kv-quant %s: %s does not offer that KV-cache format; give another "
                   "--kv-quant or --engine", r->kv_quant.name, r->engine);
  return 0;
}

static int parse_money(const struct gr_plan_args *a, struct gr_plan_req *r, struct gr_err *err)
{
  r->kwh_price = gr_plan_consts()->kwh_price_usd;
  if ((a->price && opt_double("--price", a->price, &r->price, err) != 0) ||
      (a->kwh && opt_double("--kwh", a->kwh, &r->kwh_price, err) != 0) ||
      (a->rent && opt_double("--rent", a->rent, &r->rent, err) != 0) ||
      (a->power_limit && opt_double("--power-limit", a->power_limit, &r->power_limit_w, err) != 0))
    return -1;
  if (a->power_limit && r->power_limit_w <= 0)
    return gr_fail(err, GR_EXIT_FAIL, "--power-limit %s: expected watts per GPU, more than 0", a->power_limit);
  return 0;
}

/* Inference splits the layers over every GPU unless --pp is given: when
 * there are more GPUs than layers, say so in the user's terms (the GPUs they
 * asked for), not as a --pp they never typed. */
static int check_default_split(const struct gr_plan_args *a, const struct gr_model *m, const struct gr_plan_req *r,
                               struct gr_err *err)
{
  if (a->pp || r->job != GR_JOB_INFER || !m->shape_known || r->pp <= m->layers)
    return 0;
  char gpus[48];
  if (a->gpus)
    snprintf(gpus, sizeof(gpus), "--gpus %d", r->gpus);
  else
    snprintf(gpus, sizeof(gpus), "the machine's %d GPUs", r->gpus);
  return gr_fail(err, GR_EXIT_FAIL, "%s: with --tp %d the planner would split %s's %ld layers over %d pipeline "
                 "stages; give --tp or fewer --gpus", gpus, r->tp, m->name, m->layers, r->pp);
}

/* The options of a diffusion job, and none of a language model's; m NULL:
 * a language model (or --params). */
static int parse_diffusion(const struct gr_plan_args *a, const struct gr_model *m, struct gr_plan_req *r,
                           struct gr_err *err)
{
  const char *dm_only = a->optimizer ? "--optimizer" : a->resolution ? "--resolution" : a->dataset_images ? "--dataset-images"
                        : a->workers ? "--workers" : a->cache_latents ? "--cache-latents" : a->cache_text ? "--cache-text-embeddings"
                        : a->full_bf16 ? "--full-bf16" : NULL;
  if (!m || m->kind != GR_MODEL_DIFFUSION)
    return dm_only ? gr_fail(err, GR_EXIT_FAIL, "%s applies to diffusion models (--model sdxl, sd15)", dm_only) : 0;
  const char *llm_only = a->quant ? "--quant" : a->kv_quant ? "--kv-quant" : a->ctx ? "--ctx" : a->engine ? "--engine"
                         : a->lora_targets ? "--lora-targets" : a->state_bytes ? "--state-bytes" : a->cpu ? "--cpu"
                         : a->estimator ? "--estimator" : NULL;
  if (llm_only)
    return gr_fail(err, GR_EXIT_FAIL, "%s applies to language models; %s trains in bf16 mixed precision (--full-bf16 "
                   "for pure bf16) at --resolution, with LoRA on the UNet's attention", llm_only, m->name);
  if (a->optimizer && strcmp(a->optimizer, "adamw") != 0 && strcmp(a->optimizer, "adam8bit") != 0)
    return gr_fail(err, GR_EXIT_FAIL, "--optimizer %s: adamw or adam8bit (bitsandbytes AdamW8bit)", a->optimizer);
  r->adam8bit = a->optimizer && strcmp(a->optimizer, "adam8bit") == 0;
  r->full_bf16 = a->full_bf16;
  r->cache_latents = a->cache_latents;
  r->cache_text = a->cache_text;
  long step = gr_diffusion_px_step(m->diffusion);
  if (a->resolution && (opt_long("--resolution", a->resolution, step, 8192, &r->resolution, err) != 0))
    return -1;
  if (r->resolution % step != 0)
    return gr_fail(err, GR_EXIT_FAIL, "--resolution %ld: %s needs a multiple of %ld (the VAE's 8 x the UNet's "
                   "downsamplings)", r->resolution, m->name, step);
  if ((a->dataset_images && opt_long("--dataset-images", a->dataset_images, 0, 1000000000L, &r->dataset_images, err) != 0) ||
      (a->workers && opt_long("--workers", a->workers, 0, 256, &r->workers, err) != 0))
    return -1;
  if (!a->lora_rank)
    r->lora_rank = 4; /* diffusers' train_text_to_image_lora_sdxl.py --rank default */
  return 0;
}

int gr_plan_request(const struct gr_plan_args *a, int machine_gpus, struct gr_plan_req *r, struct gr_model *m,
                    struct gr_err *err)
{
  memset(r, 0, sizeof(*r));
  memset(m, 0, sizeof(*m));
  if (parse_job(a->job, &r->job, err) != 0 || load_model(a, m, err) != 0)
    return -1;
  r->rank0_load = a->rank0_load;
  r->checkpointing = a->checkpointing;
  if (parse_counts(a, machine_gpus, r, err) != 0 || check_default_split(a, m, r, err) != 0 ||
      parse_formats(a, m, r, err) != 0 || parse_engine(a, r, err) != 0 || parse_money(a, r, err) != 0 ||
      parse_diffusion(a, m, r, err) != 0) {
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

/* The model's name or count: that one of them is given, and that a
 * built-in name or a count reads (a config.json is read later, once). */
static int check_model_args(const struct gr_plan_args *a, struct gr_err *err)
{
  struct gr_model m;
  struct gr_plan_req r = {.lora_rank = 8};
  if (a->model && !a->params && is_config_path(a->model))
    return parse_diffusion(a, NULL, &r, err);
  if (load_model(a, &m, err) != 0)
    return -1;
  int rc = parse_diffusion(a, &m, &r, err);
  gr_model_free(&m);
  return rc;
}

/* Options that contradict each other or the machine they would run on. */
static int check_combination(const struct gr_plan_args *a, const struct gr_source *given, const struct gr_plan_req *r,
                             struct gr_err *err)
{
  if (a->gpu && given && (given->kind == GR_SRC_ROOT || given->kind == GR_SRC_XML))
    return gr_fail(err, GR_EXIT_FAIL, "--gpu MODEL plans on a generic board of that GPU, so the machine of --%s %s "
                   "would be ignored: give one of them", given->kind == GR_SRC_ROOT ? "root" : "input", given->path);
  if (r->gpus == 0 && a->gpu)
    return gr_fail(err, GR_EXIT_FAIL, "--gpus 0 plans on the CPU, --gpu %s on GPUs: give one of them", a->gpu);
  if (r->gpus == 0 && (a->tp || a->pp))
    return gr_fail(err, GR_EXIT_FAIL, "--gpus 0 plans on the CPU: --tp and --pp split a model over GPUs");
  if (a->estimator && strcmp(a->estimator, "gpurig") != 0 && strcmp(a->estimator, "deepspeed") != 0)
    return gr_fail(err, GR_EXIT_FAIL, "--estimator %s: gpurig or deepspeed", a->estimator);
  if (a->estimator && strcmp(a->estimator, "deepspeed") == 0 && (r->job != GR_JOB_FULL || r->zero < 2))
    return gr_fail(err, GR_EXIT_FAIL, "--estimator deepspeed prints DeepSpeed's ZeRO-2/ZeRO-3 model-states "
                   "estimate: give --job full --zero 2 or 3");
  return 0;
}

/* --nodes: 1 to 4096 machines like the one given, for inference on all of their GPUs. */
static int check_nodes(const struct gr_plan_args *a, const struct gr_plan_req *r, long *nodes, struct gr_err *err)
{
  *nodes = 1;
  if (!a->nodes)
    return 0;
  if (opt_long("--nodes", a->nodes, 1, 4096, nodes, err) != 0)
    return -1;
  if (*nodes > 1 && r->job != GR_JOB_INFER)
    return gr_fail(err, GR_EXIT_FAIL, "--nodes %ld plans inference with pipeline stages over the nodes; for "
                   "training across nodes see the cluster verdicts of gpurig topo --rig (docs/cluster.md)", *nodes);
  if (*nodes > 1 && (a->gpus || a->cpu))
    return gr_fail(err, GR_EXIT_FAIL, "--nodes %ld uses every GPU of every node: drop --%s", *nodes,
                   a->gpus ? "gpus" : "cpu");
  return 0;
}

int gr_plan_args_check(const struct gr_plan_args *a, const struct gr_source *given, struct gr_err *err)
{
  struct gr_plan_req r = {0};
  struct gr_plan_hw hw = {0};
  long nodes;
  if (parse_job(a->job, &r.job, err) != 0 || check_model_args(a, err) != 0 || parse_counts(a, 1, &r, err) != 0 ||
      parse_formats(a, NULL, &r, err) != 0 || parse_engine(a, &r, err) != 0 || parse_money(a, &r, err) != 0 ||
      (a->cpu && parse_cpu(a->cpu, &hw, err) != 0) || check_nodes(a, &r, &nodes, err) != 0)
    return -1;
  return check_combination(a, given, &r, err);
}

/* --nodes N: the machine becomes N like it, joined by its NICs (its rig's
 * cluster statements, else one switch and NCCL's defaults). The bus
 * bandwidths stay the node's: tensor parallel stays inside it. */
static void hw_nodes(const struct gr_plan_args *a, const struct gr_machine *m, struct gr_plan_hw *hw)
{
  long nodes = 1;
  if (!a->nodes || !parse_long(a->nodes, 10, &nodes) || nodes < 2)
    return;
  struct gr_cluster_prediction c;
  gr_cluster_predict(&m->topo, &m->analysis, &m->prediction, m->topo.cluster, (int)nodes, &c);
  hw->nodes = (int)nodes;
  hw->gpus_per_node = hw->ngpus;
  hw->ngpus *= (int)nodes;
  hw->node_nic_gbps = c.nic_gbps;
  /* a rig's price is its own nodes' (one, unless it says `nodes`): scaled to the nodes planned */
  int described = m->topo.cluster ? m->topo.cluster->nodes : 1;
  hw->price *= (double)nodes / described;
  if (nodes != described) {
    char name[sizeof(hw->name)];
    snprintf(name, sizeof(name), "%s", hw->name);
    snprintf(hw->name, sizeof(hw->name), "%ld nodes of %.140s", nodes, name);
  }
  hw->net_busbw_gbps = c.busbw_gbps;
  if (c.nics)
    snprintf(hw->nic_desc, sizeof(hw->nic_desc), "%zu x %.80s%s", c.nics, c.nic_model,
             c.nic_gbps > 0 ? "" : " (port rate unknown)");
  else
    snprintf(hw->nic_desc, sizeof(hw->nic_desc), "no NIC");
}

int gr_plan_machine_open(const struct gr_plan_args *a, const struct gr_source *given, struct gr_machine *m,
                         bool *cpu_only, struct gr_plan_hw *hw, struct gr_err *err)
{
  long n = 1;
  memset(m, 0, sizeof(*m));
  if (gr_plan_args_check(a, given, err) != 0)
    return -1;
  if (a->gpus)
    parse_long(a->gpus, 10, &n); /* checked above */
  /* --gpus 0 on a rig or a gathered tree plans on that machine's CPU */
  *cpu_only = given->kind == GR_SRC_LIVE && !a->gpu && (n == 0 || (a->cpu && !a->gpus));
  if (*cpu_only)
    return gr_plan_hw_from(a, NULL, hw, err);
  struct gr_source src = *given;
  if (a->gpu && given->kind != GR_SRC_RIG) /* with a rig, --gpu fills its slots instead */
    src = (struct gr_source){.kind = GR_SRC_GENERIC, .gpu_model = a->gpu, .gpus = (int)n, .nccl = given->nccl};
  if (gr_machine_open(&src, GR_MACHINE_PREDICT, m, err) != 0)
    return -1;
  /* the group bandwidths the plan reads: its tensor-parallel group and its
   * data-parallel ranks (the search over every size costs more than the
   * whole prediction on large machines) */
  struct gr_plan_req r = {0};
  if (parse_job(a->job, &r.job, err) != 0 || parse_counts(a, (int)m->topo.ngpus, &r, err) != 0)
    return -1;
  size_t sizes[3] = {(size_t)r.tp, (size_t)(r.gpus / (r.tp * r.pp > 0 ? r.tp * r.pp : 1)), 0};
  if (gr_plan_tp_auto(a)) /* every degree it may try; inference has one data-parallel rank */
    memcpy(sizes, (size_t[3]){2, 4, 8}, sizeof(sizes));
  gr_predict_groups(&m->prediction, sizes, 3);
  if (gr_plan_hw_from(a, m, hw, err) != 0)
    return -1;
  hw_nodes(a, m, hw);
  return 0;
}

static int plan_one(const struct gr_plan_args *a, const struct gr_plan_hw *hw, const char *label,
                    struct gr_planned *pl, struct gr_err *err)
{
  memset(pl, 0, sizeof(*pl));
  pl->hw = *hw;
  if (gr_plan_request(a, hw->ngpus, &pl->req, &pl->model, err) != 0)
    return -1;
  if (pl->req.power_limit_w <= 0 && hw->rig_limit_w > 0 && !hw->mixed_gpus) {
    pl->req.power_limit_w = hw->rig_limit_w; /* --power-limit, when given, wins */
    pl->req.power_limit_rig = true;
  }
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

/* --tp auto: c is a better choice than b (which may be absent). */
static bool better_tp(const struct gr_planned *c, const struct gr_planned *b, bool have)
{
  bool cf = c->plan.fit != GR_FIT_NO, bf = b->plan.fit != GR_FIT_NO;
  double cs = c->plan.decode_tps.ok ? c->plan.decode_tps.mid : 0, bs = b->plan.decode_tps.ok ? b->plan.decode_tps.mid : 0;
  if (!have || cf != bf)
    return !have || cf;
  /* equal speed keeps the smaller degree: fewer all-reduces per layer to go wrong */
  return cf ? cs > bs : c->plan.gpu_need_gib < b->plan.gpu_need_gib;
}

/* --tp auto: every degree the GPUs and heads allow, the best kept in pl. */
static int plan_tp_auto(const struct gr_plan_args *a, const struct gr_plan_hw *hw, const char *label,
                        struct gr_planned *pl, struct gr_err *err)
{
  static const int degrees[4] = {1, 2, 4, 8};
  struct gr_plan_args b = *a;
  struct gr_model m;
  struct gr_tp_try tried[4] = {{0}};
  struct gr_err first = {0};
  long gpus = hw->ngpus;
  size_t ntried = 0;
  bool have = false;
  memset(pl, 0, sizeof(*pl));
  if ((a->gpus && opt_long("--gpus", a->gpus, 0, 64, &gpus, err) != 0) || load_model(a, &m, err) != 0)
    return -1;
  long heads = m.shape_known ? m.heads : 0;
  gr_model_free(&m);
  struct gr_planned *c = xcalloc(1, sizeof(*c));
  for (int i = 0; i < 4; i++) {
    char tp[8];
    struct gr_err e = {0};
    if (gpus < degrees[i] || gpus % degrees[i] != 0 || (heads > 0 && heads % degrees[i] != 0))
      continue;
    snprintf(tp, sizeof(tp), "%d", degrees[i]);
    b.tp = tp;
    /* a degree the machine cannot run (more than a node's GPUs, more stages than layers) is skipped;
     * bad input fails every degree, and the first one's error is reported */
    if (plan_one(&b, hw, label, c, &e) != 0) {
      if (!first.msg[0])
        first = e;
      continue;
    }
    tried[ntried++] = (struct gr_tp_try){degrees[i], c->plan.fit, c->plan.decode_tps.ok ? c->plan.decode_tps.mid : 0};
    if (better_tp(c, pl, have)) {
      if (have)
        gr_planned_free(pl);
      *pl = *c; /* pl takes over c's model */
      have = true;
    } else {
      gr_planned_free(c);
    }
  }
  free(c);
  if (!have) {
    if (first.msg[0])
      *err = first;
    else
      gr_fail(err, GR_EXIT_FAIL, "--tp auto: none of TP 1, 2, 4, 8 divides both the %ld GPUs and the model's %ld "
              "attention heads", gpus, heads);
    return -1;
  }
  memcpy(pl->tp_tried, tried, sizeof(tried));
  pl->ntp_tried = ntried;
  return 0;
}

int gr_plan_job(const struct gr_plan_args *a, const struct gr_plan_hw *hw, const char *label, struct gr_planned *pl,
                struct gr_err *err)
{
  return gr_plan_tp_auto(a) ? plan_tp_auto(a, hw, label, pl, err) : plan_one(a, hw, label, pl, err);
}

void gr_compare_rank_plans(struct gr_judged *js, const struct gr_planned *plans, size_t n)
{
  for (size_t i = 0; i < n; i++) {
    const struct gr_plan *p = &plans[i].plan;
    js[i].job = true;
    js[i].job_fits = p->fit != GR_FIT_NO;
    js[i].job_tps = p->decode_tps.ok ? p->decode_tps.mid : p->train_tps.ok ? p->train_tps.mid : 0;
  }
  gr_compare_rank_job(js, n);
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
  gr_plan_notes(&pl->req, &pl->model, &pl->hw, p, out);
}

/* ---- plan before buying ---- */

/* hw for n GPUs of model g on no particular board: no bus bandwidth is
 * known, so speeds that need one are left out. */
static void shop_hw(const struct gr_gpu_model *g, int n, struct gr_plan_hw *hw)
{
  memset(hw, 0, sizeof(*hw));
  hw->gpu = g;
  hw->ngpus = n;
  hw->collective = g->vendor && strcmp(g->vendor, "amd") == 0 ? "RCCL" : "NCCL";
  snprintf(hw->name, sizeof(hw->name), "%d x %s (no machine: memory only)", n, g->model);
}

/* The job on n GPUs of model g: its plan in *pl (the caller frees it). */
static int shop_plan(const struct gr_plan_args *a, const struct gr_gpu_model *g, int n, struct gr_planned *pl,
                     struct gr_err *err)
{
  struct gr_plan_hw hw;
  char gpus[16];
  struct gr_plan_args b = *a;
  shop_hw(g, n, &hw);
  snprintf(gpus, sizeof(gpus), "%d", n);
  b.gpus = gpus;
  return gr_plan_job(&b, &hw, NULL, pl, err);
}

/* Plan before buying models language models' parallelism: a diffusion
 * pipeline, or a power limit, needs a machine to plan on. */
static int shop_refuses(const struct gr_plan_args *a, struct gr_err *err)
{
  if (a->power_limit) /* watts per GPU mean one GPU model: catalog GPUs have other board powers */
    return gr_fail(err, GR_EXIT_FAIL, "--power-limit %s: no GPU here and none named; give --gpu MODEL (and --gpus N) "
                   "or --rig RIG to plan a power limit on", a->power_limit);
  struct gr_model m;
  struct gr_err ignored = {0};
  if (!a->model || a->params || is_config_path(a->model) || gr_model_builtin(a->model, &m, &ignored) != 0)
    return 0;
  bool dm = m.kind == GR_MODEL_DIFFUSION;
  gr_model_free(&m);
  return dm ? gr_fail(err, GR_EXIT_FAIL, "%s: no GPU here and none named; give --gpu MODEL (and --gpus N) or --rig "
                      "RIG to plan a diffusion model on", a->model) : 0;
}

int gr_plan_shop(const struct gr_plan_args *a, struct gr_shop *s, struct gr_err *err)
{
  static const int counts[GR_SHOP_COUNTS] = {1, 2, 4, 8};
  size_t ngpus;
  const struct gr_gpu_model *gpus = gr_catalog_models(&ngpus);
  struct gr_gpu_model big = gpus[0];
  memset(s, 0, sizeof(*s));
  if (shop_refuses(a, err) != 0)
    return -1;
  struct gr_planned *pl = xcalloc(1, sizeof(*pl));
  int rc = -1;
  big.model = "a GPU of unbounded memory";
  big.mem_gib = 1e12;
  memcpy(s->counts, counts, sizeof(counts));
  for (int i = 0; i < GR_SHOP_COUNTS; i++) {
    if (shop_plan(a, &big, counts[i], pl, err) != 0)
      goto out;
    s->need_gib[i] = pl->plan.gpu_need_gib;
    if (i == 0)
      s->base = *pl; /* keeps its model; the others are freed */
    else
      gr_planned_free(pl);
  }
  if (s->base.req.job != GR_JOB_INFER) {
    struct gr_plan_args z3 = *a;
    z3.zero = "3";
    for (int i = 0; i < GR_SHOP_COUNTS; i++) {
      if (shop_plan(&z3, &big, counts[i], pl, err) != 0)
        goto out;
      s->zero3_gib[i] = pl->plan.gpu_need_gib;
      gr_planned_free(pl);
    }
  }
  s->rows = xcalloc(ngpus + 1, sizeof(*s->rows));
  for (size_t g = 0; g < ngpus; g++) {
    struct gr_shop_row *row = &s->rows[s->nrows++];
    row->gpu = &gpus[g];
    /* more GPUs before offload: offload is the slow way to fit */
    for (int pass = 0; pass < 2 && !row->gpus; pass++)
      for (int i = 0; i < GR_SHOP_COUNTS && !row->gpus; i++) {
        if (shop_plan(a, row->gpu, counts[i], pl, err) != 0)
          goto out;
        const struct gr_plan *p = &pl->plan;
        bool offload = strstr(p->fix, "--offload") != NULL;
        if (p->fit != GR_FIT_NO || (p->fix[0] && (pass == 1 || !offload))) {
          row->gpus = counts[i];
          row->need_gib = p->fit != GR_FIT_NO ? p->gpu_need_gib : p->fix_need_gib;
          snprintf(row->fix, sizeof(row->fix), "%s", p->fit != GR_FIT_NO ? "" : p->fix);
        }
        gr_planned_free(pl);
      }
  }
  rc = 0;
out:
  gr_planned_free(pl);
  free(pl);
  return rc;
}

void gr_shop_free(struct gr_shop *s)
{
  gr_planned_free(&s->base);
  free(s->rows);
  memset(s, 0, sizeof(*s));
}
