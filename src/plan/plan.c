#include "plan/plan.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "facts/facts.h"
#include "facts/pcilink.h"
#include "plan/diffusion.h"
#include "plan/engine.h"
#include "plan/power.h"
#include "plan/speed.h"

#define GIB 1073741824.0

const char *gr_job_name(enum gr_job j)
{
  static const char *const names[] = {"infer", "lora", "qlora", "full"};
  return names[j];
}

const char *gr_fit_name(enum gr_fit f)
{
  return f == GR_FIT_HEADROOM ? "fits" : f == GR_FIT_TIGHT ? "tight" : "does not fit";
}

/* ---- LoRA ---- */

uint64_t gr_lora_trainable(const struct gr_model *m, long rank, unsigned targets)
{
  if (!m->shape_known)
    return 0;
  uint64_t h = (uint64_t)m->hidden, q = (uint64_t)(m->heads * m->head_dim), kv = (uint64_t)(m->kv_heads * m->head_dim);
  uint64_t inter = (uint64_t)m->moe_intermediate, n = m->experts > 0 ? (uint64_t)m->experts : 1, r = (uint64_t)rank;
  uint64_t per = 0;
  /* each adapted Linear(d_in, d_out) adds A (r x d_in) and B (d_out x r) */
  if (targets & GR_LORA_Q) per += r * (h + q);
  if (targets & GR_LORA_K) per += r * (h + kv);
  if (targets & GR_LORA_V) per += r * (h + kv);
  if (targets & GR_LORA_O) per += r * (q + h);
  if (targets & GR_LORA_GATE) per += n * r * (h + inter);
  if (targets & GR_LORA_UP) per += n * r * (h + inter);
  if (targets & GR_LORA_DOWN) per += n * r * (inter + h);
  return per * (uint64_t)m->layers;
}

/* ---- checks ---- */

/* A diffusion job: training on GPUs with data parallelism only (what
 * diffusers' and kohya's scripts run). */
static int check_diffusion(const struct gr_plan_req *r, const struct gr_model *m, struct gr_err *err)
{
  if (r->job != GR_JOB_FULL && r->job != GR_JOB_LORA)
    return gr_fail(err, GR_EXIT_FAIL, "--job %s: gpurig plans training of %s (--job full or lora); its %s is not "
                   "modelled", gr_job_name(r->job), m->name, r->job == GR_JOB_INFER ? "inference" : "QLoRA");
  if (r->gpus < 1)
    return gr_fail(err, GR_EXIT_FAIL, "--gpus %d: training needs at least one GPU", r->gpus);
  if (r->tp > 1 || r->pp > 1 || r->zero > 0 || r->offload != GR_OFFLOAD_NONE)
    return gr_fail(err, GR_EXIT_FAIL, "%s trains with data parallelism (every GPU holds the whole model): --tp, --pp, "
                   "--zero and --offload are not modelled for diffusion models", m->name);
  return 0;
}

/* --power-limit: a limit lowers the board power of the GPUs the plan runs
 * on; the model gives no clock at or below the part that does not follow
 * the clock (plan/power.h). */
static int check_power_limit(const struct gr_plan_req *r, const struct gr_model *m, const struct gr_plan_hw *hw,
                             struct gr_err *err)
{
  double w = r->power_limit_w;
  if (w <= 0)
    return 0;
  if (r->gpus == 0)
    return gr_fail(err, GR_EXIT_FAIL, "--power-limit: --gpus 0 runs on the CPU; a GPU power limit needs GPUs");
  if (m->kind == GR_MODEL_DIFFUSION)
    return gr_fail(err, GR_EXIT_FAIL, "--power-limit: gpurig gives no speed for diffusion models, so no cost of a limit");
  if (hw->gpu->tdp_w <= 0)
    return gr_fail(err, GR_EXIT_FAIL, "--power-limit: the %s's board power is not in the catalog (data/gpus.tsv)",
                   hw->gpu->model);
  if (w > hw->gpu->tdp_w)
    return gr_fail(err, GR_EXIT_FAIL, "--power-limit %.0f: above the %s's board power (%.0f W); a limit plans a lower "
                   "draw (the boost clock already runs at the board power)", w, hw->gpu->model, hw->gpu->tdp_w);
  double floor_w = gr_power_limit_floor_w(hw->gpu);
  if (w <= floor_w)
    return gr_fail(err, GR_EXIT_FAIL, "--power-limit %.0f: at or below the %.0f W of the %s's board power that does "
                   "not follow the clock (data/power-clock.tsv); no clock is modelled there", w, floor_w,
                   hw->gpu->model);
  return 0;
}

int gr_plan_check(const struct gr_plan_req *r, const struct gr_model *m, const struct gr_plan_hw *hw,
                  struct gr_err *err)
{
  if (r->gpus < 0 || (r->gpus == 0 && r->job != GR_JOB_INFER))
    return gr_fail(err, GR_EXIT_FAIL, "--gpus %d: training needs at least one GPU", r->gpus);
  if (r->gpus == 0 && hw->cpu_bw_gbps <= 0)
    return gr_fail(err, GR_EXIT_FAIL, "--gpus 0 runs on the CPU: say its memory with --cpu CHANNELSxMT/s (e.g. 8x3200)");
  if (r->gpus > 0 && !hw->gpu && hw->ngpus > 0)
    return gr_fail(err, GR_EXIT_FAIL, "the machine's %d GPU%s not in gpurig's catalog (data/gpus.tsv), so their memory "
                   "and speed are unknown: give --gpu MODEL", hw->ngpus, hw->ngpus == 1 ? " is" : "s are");
  if (r->gpus > 0 && !hw->gpu)
    return gr_fail(err, GR_EXIT_FAIL, "no GPU to plan for: give --gpu MODEL or --rig RIG");
  if (check_power_limit(r, m, hw, err) != 0)
    return -1;
  if (hw->nodes > 1 && r->tp > hw->gpus_per_node)
    return gr_fail(err, GR_EXIT_FAIL, "--tp %d: a node has %d GPUs, and tensor parallel stays inside a node (its "
                   "all-reduces per layer would cross the network)", r->tp, hw->gpus_per_node);
  if (hw->nodes > 1 && r->pp % hw->nodes != 0)
    return gr_fail(err, GR_EXIT_FAIL, "--pp %d over %d nodes: every node holds the same number of pipeline stages "
                   "(--pp a multiple of --nodes)", r->pp, hw->nodes);
  if (r->gpus > hw->ngpus)
    return gr_fail(err, GR_EXIT_FAIL, "--gpus %d: the machine has %d GPUs", r->gpus, hw->ngpus);
  if (m->kind == GR_MODEL_DIFFUSION)
    return check_diffusion(r, m, err);
  if (r->gpus > 0 && r->tp * r->pp > r->gpus)
    return gr_fail(err, GR_EXIT_FAIL, "--tp %d x --pp %d needs %d GPUs; %d are planned (--gpus)", r->tp, r->pp,
                   r->tp * r->pp, r->gpus);
  if (r->gpus > 0 && r->gpus % (r->tp * r->pp) != 0)
    return gr_fail(err, GR_EXIT_FAIL, "--gpus %d is not a multiple of --tp %d x --pp %d", r->gpus, r->tp, r->pp);
  if (r->job == GR_JOB_INFER && r->gpus > 0 && r->tp * r->pp != r->gpus)
    return gr_fail(err, GR_EXIT_FAIL, "inference on %d GPUs: --tp x --pp must use all of them (got %d x %d)", r->gpus,
                   r->tp, r->pp);
  if (!m->shape_known && r->job != GR_JOB_FULL && r->job != GR_JOB_INFER)
    return gr_fail(err, GR_EXIT_FAIL, "--job %s needs the model's shape: give --model NAME or config.json, not --params",
                   gr_job_name(r->job));
  char why[192];
  if (r->gpus > 0 && hw->gpu && r->engine && !gr_engine_format_runs(r->engine, &r->quant, hw->gpu, why, sizeof(why)))
    return gr_fail(err, GR_EXIT_FAIL, "--quant %s: %s; give another --quant or --engine", r->quant.name, why);
  if (m->shape_known && r->tp > 1 && m->heads % r->tp != 0)
    return gr_fail(err, GR_EXIT_FAIL, "--tp %d does not divide the model's %ld attention heads", r->tp, m->heads);
  if (m->shape_known && r->pp > m->layers)
    return gr_fail(err, GR_EXIT_FAIL, "--pp %d: the model has only %ld layers", r->pp, m->layers);
  if (m->max_ctx > 0 && r->ctx > m->max_ctx)
    return gr_fail(err, GR_EXIT_FAIL, "--ctx %ld is more than %s supports (max_position_embeddings %ld)", r->ctx,
                   m->name, m->max_ctx);
  if (r->zero > 0 && r->job == GR_JOB_INFER)
    return gr_fail(err, GR_EXIT_FAIL, "--zero applies to training jobs (lora, qlora, full)");
  if (r->offload != GR_OFFLOAD_NONE && r->zero < (r->offload == GR_OFFLOAD_PARAMS ? 3 : 1))
    return gr_fail(err, GR_EXIT_FAIL, "--offload %s needs --zero %d or more (DeepSpeed ZeRO-Offload)",
                   r->offload == GR_OFFLOAD_PARAMS ? "params" : "optimizer", r->offload == GR_OFFLOAD_PARAMS ? 3 : 1);
  return 0;
}

/* ---- hardware ---- */

/* A group of k GPUs' all-reduce with NCCL's defaults (what a job gets
 * without NCCL_P2P_LEVEL set), and with the level raised where that helps. */
static double group_busbw(const struct gr_prediction *p, size_t k)
{
  if (k == p->ngpus)
    return p->nccl_default.busbw_gbps;
  return p->group_busbw_gbps && k < p->ngpus ? p->group_busbw_gbps[k] : 0;
}

static double group_busbw_raised(const struct gr_prediction *p, size_t k, const char **level)
{
  *level = NULL;
  if (k == p->ngpus) {
    *level = p->best_needs_p2p_level ? p->best_p2p_level : NULL;
    return p->best_needs_p2p_level ? p->best.busbw_gbps : 0;
  }
  if (!p->group_busbw_raised_gbps || k >= p->ngpus)
    return 0;
  *level = p->group_p2p_level[k];
  return p->group_busbw_raised_gbps[k];
}

/* The power limit a rig's `limit` sets on all of its GPUs: the plan runs
 * them as their owner does. 0 when a GPU has none or two differ (a limit
 * per GPU is the budget's, not one the plan's speed model can take). */
static double rig_limit(const struct gr_topo *t)
{
  const struct gr_rig_meta *r = t->rig;
  if (!r || t->ngpus == 0 || r->ngpu_power < t->ngpus)
    return 0;
  double w = r->gpu_power[0].limit_w;
  for (size_t g = 1; g < t->ngpus && w > 0; g++)
    if (r->gpu_power[g].limit_w != w)
      w = 0;
  return w > 0 ? w : 0;
}

void gr_plan_hw_from_topo(const struct gr_topo *t, const struct gr_prediction *p, struct gr_plan_hw *hw)
{
  memset(hw, 0, sizeof(*hw));
  hw->ngpus = (int)t->ngpus;
  for (size_t g = 0; g < t->ngpus; g++) {
    const struct gr_pci *d = &t->pci[t->gpus[g]];
    const struct gr_gpu_model *gm = gr_pci_catalog(d);
    if (hw->gpu && gm && gm != hw->gpu)
      hw->mixed_gpus = true;
    if (gm && (!hw->gpu || gm->mem_gib < hw->gpu->mem_gib))
      hw->gpu = gm;
    double rate = gr_link_bw_gbps(d);
    if (rate > 0 && (hw->host_link_gbps == 0 || rate < hw->host_link_gbps))
      hw->host_link_gbps = rate;
  }
  hw->rig_limit_w = rig_limit(t);
  hw->collective = gr_topo_collective(t);
  for (size_t k = 2; k <= t->ngpus && k < 65; k++) {
    hw->busbw_gbps[k] = group_busbw(p, k);
    hw->busbw_raised_gbps[k] = group_busbw_raised(p, k, &hw->p2p_level[k]);
  }
  int sockets = 0, ch = 0, mts = 0;
  for (size_t i = 0; i < t->npackages; i++)
    if (t->packages[i].mem_channels > 0 && t->packages[i].mem_mts > 0) {
      sockets++;
      ch = t->packages[i].mem_channels;
      mts = t->packages[i].mem_mts;
      hw->cpu_bw_gbps += t->packages[i].mem_channels * 8.0 * t->packages[i].mem_mts / 1000.0;
    }
  if (sockets)
    snprintf(hw->cpu_desc, sizeof(hw->cpu_desc), "%dx %d channels x %d MT/s", sockets, ch, mts);
  /* RAM as the description states it (a rig's `ram`), else as the OS reports it per NUMA node */
  uint64_t ram = 0, os_ram = 0;
  for (size_t i = 0; i < t->npackages; i++)
    ram += t->packages[i].mem_bytes;
  for (size_t i = 0; i < t->nnumas; i++)
    os_ram += t->numas[i].mem_bytes;
  hw->host_ram_gib = (double)(ram ? ram : os_ram) / GIB;
  if (t->rig) {
    hw->price = t->rig->price;
    snprintf(hw->currency, sizeof(hw->currency), "%s", t->rig->currency ? t->rig->currency : "USD");
    snprintf(hw->name, sizeof(hw->name), "%s", t->rig->name);
  } else {
    /* a file's machine is named by the file, never "this machine" */
    const char *name = t->hostname                                ? t->hostname
                       : t->product                               ? t->product
                       : gr_topo_from_file(t) && t->source_path ? t->source_path
                                                                  : "this machine";
    snprintf(hw->name, sizeof(hw->name), "%s", name);
  }
}

/* ---- memory ---- */

/* Appends one line of a breakdown; returns its size in GiB. */
static double add_item(struct gr_plan_item *items, size_t *n, size_t cap, const char *what, double bytes,
                       const char *note)
{
  if (*n >= cap)
    return 0;
  struct gr_plan_item *it = &items[(*n)++];
  snprintf(it->what, sizeof(it->what), "%s", what);
  snprintf(it->note, sizeof(it->note), "%s", note ? note : "");
  it->gib = bytes / GIB;
  return it->gib;
}

static void gpu_item(struct gr_plan *o, const char *what, double bytes, const char *note)
{
  o->gpu_need_gib += add_item(o->gpu, &o->ngpu_items, sizeof(o->gpu) / sizeof(o->gpu[0]), what, bytes, note);
}

static void host_item(struct gr_plan *o, const char *what, double bytes, const char *note)
{
  add_item(o->host, &o->nhost_items, sizeof(o->host) / sizeof(o->host[0]), what, bytes, note);
}

static long ceil_div(long a, long b)
{
  return (a + b - 1) / b;
}

/* The busiest GPU's share of the weights under layer split and tensor parallel. */
static double weights_per_gpu(const struct gr_model *m, const struct gr_weight_bytes *w, int tp, int pp)
{
  if (!m->shape_known || pp <= 1)
    return w->total / tp;
  double layer = w->layers / (double)m->layers, per = (double)ceil_div(m->layers, pp) * layer;
  double first = per + w->embed, last = per + w->output;
  return (first > last ? first : last) / tp;
}

/* Layers llama.cpp puts on GPU k of n equal GPUs: it splits the layers and
 * the output layer as n_layer + 1 slots in proportion to each GPU's free
 * memory (equal here), layer i on the GPU whose share holds i / (n_layer + 1);
 * the output layer is the last slot, on the last GPU (llama.cpp
 * llama-model.cpp load_tensors: splits, act_gpu_layers, dev_output). */
static long llamacpp_layers_on(long layers, int n, int k)
{
  long count = 0;
  for (long i = 0; i < layers; i++) {
    double at = (double)i / (double)(layers + 1);
    int gpu = (int)floor(at * n + 1e-9);
    count += (gpu < n ? gpu : n - 1) == k;
  }
  return count;
}

/* llama.cpp's busiest GPU under its layer split: its layers, and on the last
 * GPU the output layer (the token embedding when tied: llama.cpp copies it
 * there); the input embedding stays in host memory (dev_input is the CPU). */
static double llamacpp_weights_busiest(const struct gr_model *m, const struct gr_weight_bytes *w, int pp)
{
  double layer = w->layers / (double)m->layers, most = 0;
  for (int k = 0; k < pp; k++) {
    double b = (double)llamacpp_layers_on(m->layers, pp, k) * layer;
    if (k == pp - 1)
      b += w->output > 0 ? w->output : w->embed;
    most = fmax(most, b);
  }
  return most;
}

/* Activations kept for backward by one decoder layer for one micro-batch
 * (bf16, FlashAttention so no s^2 term, no dropout): the norm inputs are
 * replicated under TP, the rest splits (Korthikanti et al. 2022 adapted to
 * Llama layers: docs/plan.md). */
static double layer_activation_bytes(const struct gr_model *m, double s, double b, int tp)
{
  double h = (double)m->hidden, kvr = (double)m->kv_heads / (double)m->heads;
  double inter = (double)m->moe_intermediate * (m->experts > 0 ? (double)m->experts_per_tok : 1.0);
  return s * b * h * (4.0 + (8.0 + 4.0 * kvr) / tp) + 6.0 * s * b * inter / tp;
}

static double kv_elem_bytes(const struct gr_plan_req *r)
{
  return r->kv_quant.bits / 8.0;
}

static void memory_infer(const struct gr_plan_req *r, const struct gr_model *m, const struct gr_plan_hw *hw,
                         struct gr_plan *o)
{
  int tp = r->gpus > 0 ? r->tp : 1, pp = r->gpus > 0 ? r->pp : 1;
  char note[160];
  bool llamacpp_split = pp > 1 && tp == 1 && m->shape_known && gr_engine_is(r->engine, "llama.cpp");
  snprintf(note, sizeof(note), "%s%s", r->quant.name,
           llamacpp_split ? ", layer split as llama.cpp assigns it: the busiest GPU"
           : pp > 1       ? ", layer split: the busiest GPU"
           : tp > 1       ? ", split by tensor parallel"
                          : "");
  gpu_item(o, "weights", llamacpp_split ? llamacpp_weights_busiest(m, &o->weights, pp) : weights_per_gpu(m, &o->weights, tp, pp),
           note);
  double kv_tok = gr_model_kv_bytes_per_token(m, kv_elem_bytes(r));
  enum gr_swa swa = gr_engine_swa(r->engine);
  double kv_seq = gr_model_kv_bytes(m, kv_elem_bytes(r), r->ctx, swa);
  long windowed = gr_model_windowed_layers(m, swa);
  o->kv_gib = kv_seq * (double)r->batch / GIB;
  if (m->shape_known) {
    double share = pp > 1 ? (double)ceil_div(m->layers, pp) / (double)m->layers : 1.0;
    double split = tp < m->kv_heads ? tp : (double)m->kv_heads; /* KV heads are replicated beyond that */
    char win[48] = "";
    if (windowed > 0 && m->sliding_window < r->ctx)
      snprintf(win, sizeof(win), ", window %ld on %ld/%ld layers", m->sliding_window % 10000000, windowed % 100000,
               m->layers % 100000);
    snprintf(note, sizeof(note), "%ld tokens x %ld seq, %.24s, %.0f KiB/token%s", r->ctx % 10000000000L,
             r->batch % 10000000L, r->kv_quant.name, fmin(kv_tok / 1024, 1e9), win);
    gpu_item(o, "KV cache", kv_seq * (double)r->batch * share / split, note);
    double chunk = fmin(gr_plan_consts()->inference_chunk_tokens, (double)r->ctx * (double)r->batch);
    double per_tok = 16.0 * (double)m->hidden + 8.0 * (double)m->moe_intermediate / tp + 4.0 * (double)m->vocab / tp;
    snprintf(note, sizeof(note), "%.0f-token chunks: activations and fp32 logits", chunk);
    gpu_item(o, "compute buffers", chunk * per_tok, note);
  }
  if (r->gpus > 0)
    gpu_item(o, "CUDA context", gr_plan_consts()->cuda_context_gib * GIB, "per GPU (data/planner.tsv)");
  double nodes = hw->nodes > 1 ? hw->nodes : 1; /* each node loads its own stages' layers */
  host_item(o, "checkpoint while loading", o->weights.total / nodes,
            nodes > 1 ? "per node: its pipeline stages' share, read once" : "read once; the page cache can drop it after loading");
  o->host_need_gib = o->weights.total / nodes / GIB;
  o->host_node_gib = nodes > 1 ? o->host_need_gib : 0;
  if (r->gpus == 0) {
    o->host_need_gib = o->gpu_need_gib; /* the "GPU" items are in host memory */
    o->nhost_items = 0;
  }
}

/* Model states of a full fine-tune per GPU and on the host. */
static void memory_states(const struct gr_plan_req *r, struct gr_plan *o, double *host)
{
  double P = (double)o->params.total, shard = P / (r->tp * r->pp), d = o->dp;
  double gbytes = r->state_bytes == 18 ? 4 : 2;
  char note[160];
  o->model_states_gb = P * r->state_bytes / 1e9;
  if (r->offload == GR_OFFLOAD_PARAMS) {
    *host += 2 * P;
    gpu_item(o, "fp16 params", 0, "offloaded to host");
  } else {
    snprintf(note, sizeof(note), "2 B/param%s", r->zero >= 3 ? ", sharded (ZeRO-3)" : "");
    gpu_item(o, "fp16 params", 2 * shard / (r->zero >= 3 ? d : 1), note);
  }
  if (r->offload == GR_OFFLOAD_PARAMS) {
    /* ZeRO-3 with offloaded parameters streams each gradient partition to
     * the host as backward produces it: a reduce bucket, not a shard */
    gpu_item(o, "gradients", fmin(gr_plan_consts()->zero_bucket_gib * GIB, 2 * shard / d),
             "streamed to the host as produced: one reduce bucket (5e8 x 2 B)");
    gpu_item(o, "optimizer states", 0, "offloaded to host");
    *host += P * (12 + (r->state_bytes == 18 ? 4 : 0));
  } else if (r->offload != GR_OFFLOAD_NONE) {
    snprintf(note, sizeof(note), "fp16 before the host copy%s", r->zero >= 2 ? ", sharded" : "");
    gpu_item(o, "gradients", 2 * shard / (r->zero >= 2 ? d : 1), note);
    gpu_item(o, "optimizer states", 0, "offloaded to host");
    *host += P * (12 + (r->state_bytes == 18 ? 4 : 0));
  } else {
    snprintf(note, sizeof(note), "%.0f B/param%s", gbytes, r->zero >= 2 ? ", sharded (ZeRO-2+)" : "");
    gpu_item(o, "gradients", gbytes * shard / (r->zero >= 2 ? d : 1), note);
    snprintf(note, sizeof(note), "fp32 master, Adam m and v: 12 B/param%s", r->zero >= 1 ? ", sharded (ZeRO-1+)" : "");
    gpu_item(o, "optimizer states", 12 * shard / (r->zero >= 1 ? d : 1), note);
  }
  if (r->zero >= 3)
    gpu_item(o, "ZeRO-3 live params", fmin(gr_plan_consts()->zero3_live_gib * GIB, 2 * shard),
             "stage3_max_live_parameters 1e9 x 2 B");
  if (r->zero >= 1 && d > 1)
    gpu_item(o, "ZeRO buckets", fmin(gr_plan_consts()->zero_bucket_gib * GIB, 2 * shard), "5e8 x 2 B");
}

static void memory_adapters(const struct gr_plan_req *r, const struct gr_model *m, struct gr_plan *o)
{
  double d = o->dp, T = (double)o->trainable;
  char note[160];
  snprintf(note, sizeof(note), "frozen, %s%s", r->quant.name, r->zero >= 3 ? ", sharded (ZeRO-3/FSDP)" : "");
  gpu_item(o, "base weights", weights_per_gpu(m, &o->weights, r->tp, r->pp) / (r->zero >= 3 ? d : 1), note);
  snprintf(note, sizeof(note), "%.0f adapters: fp32 weight, grad, Adam m and v = 16 B each", T);
  gpu_item(o, "adapter states", 16 * T / (r->tp * r->pp) / (r->zero >= 1 ? d : 1), note);
  if (r->job == GR_JOB_QLORA)
    gpu_item(o, "dequantize buffer", 2.0 * (double)o->params.largest_module, "the largest layer in bf16");
}

static void memory_activations(const struct gr_plan_req *r, const struct gr_model *m, struct gr_plan *o)
{
  if (!m->shape_known)
    return; /* not counted: a note says so (gr_plan_notes) */
  double s = (double)r->ctx, b = (double)r->batch, layer = layer_activation_bytes(m, s, b, r->tp);
  double layers = (double)ceil_div(m->layers, r->pp) * r->pp; /* 1F1B: stage 0 holds pp micro-batches */
  char note[160];
  if (r->checkpointing) {
    snprintf(note, sizeof(note), "checkpointed: 2sbh per layer + one layer recomputed (s=%ld, b=%ld)", r->ctx, r->batch);
    gpu_item(o, "activations", 2.0 * s * b * (double)m->hidden * layers + layer, note);
  } else {
    snprintf(note, sizeof(note), "bf16, FlashAttention, s=%ld, b=%ld, %.0f layers", r->ctx, r->batch, layers);
    gpu_item(o, "activations", layer * layers, note);
  }
  gpu_item(o, "logits and loss", s * b * (double)m->vocab * 6.0 / r->tp, "bf16 logits + the fp32 copy for the loss");
}

static void memory_train(const struct gr_plan_req *r, const struct gr_model *m, struct gr_plan *o)
{
  double host = 0, P = (double)o->params.total;
  if (r->job == GR_JOB_FULL)
    memory_states(r, o, &host);
  else
    memory_adapters(r, m, o);
  memory_activations(r, m, o);
  gpu_item(o, "CUDA context", gr_plan_consts()->cuda_context_gib * GIB, "per GPU (data/planner.tsv)");
  if (host > 0)
    host_item(o, "offloaded states", host, r->offload == GR_OFFLOAD_PARAMS ? "fp16 params + fp32 optimizer states"
                                                                           : "fp32 optimizer states (and grads)");
  double ranks = r->gpus, load = (r->rank0_load ? 1 : ranks) * P * 2;
  char note[160];
  snprintf(note, sizeof(note), r->rank0_load ? "rank 0 reads the bf16 checkpoint, the others get it by broadcast"
                                             : "every one of the %d ranks reads the bf16 checkpoint",
           r->gpus);
  host_item(o, "checkpoint while loading", load, note);
  o->host_need_gib = fmax(host, load) / GIB;
}

static void plan_memory(const struct gr_plan_req *r, const struct gr_model *m, const struct gr_plan_hw *hw,
                        struct gr_plan *o)
{
  o->dp = r->gpus > 0 ? r->gpus / (r->tp * r->pp) : 1;
  if (r->job == GR_JOB_INFER)
    memory_infer(r, m, hw, o);
  else
    memory_train(r, m, o);
  o->gpu_have_gib = hw->gpu && r->gpus > 0 ? hw->gpu->mem_gib : 0;
  o->host_short = hw->host_ram_gib > 0 && o->host_need_gib > hw->host_ram_gib;
}

static enum gr_fit fit_of(const struct gr_plan *o, const struct gr_plan_req *r)
{
  if (o->host_short)
    return GR_FIT_NO;
  if (r->gpus == 0)
    return GR_FIT_HEADROOM; /* the need is in host RAM, judged above where its size is known */
  if (gr_engine_is(r->engine, "vllm")) /* vLLM takes its share at start and fills it with KV blocks */
    return o->gpu_need_gib <= gr_plan_consts()->vllm_gpu_memory_utilization * o->gpu_have_gib ? GR_FIT_HEADROOM
                                                                                                 : GR_FIT_NO;
  if (o->gpu_need_gib <= 0.9 * o->gpu_have_gib)
    return GR_FIT_HEADROOM;
  return o->gpu_need_gib <= o->gpu_have_gib ? GR_FIT_TIGHT : GR_FIT_NO;
}

/* ---- cost ---- */

static void plan_cost(const struct gr_plan_req *r, const struct gr_plan_hw *hw, struct gr_plan *o)
{
  o->price = r->price > 0 ? r->price : hw->price;
  snprintf(o->currency, sizeof(o->currency), "%s", hw->currency[0] ? hw->currency : "USD");
  if (hw->gpu && hw->ngpus > 0 && o->price > 0)
    o->price_per_vram_gib = o->price / (hw->ngpus * hw->gpu->mem_gib);
  /* the GPUs the job runs on (--gpus 2 of a 4-GPU rig draws two GPUs' power); the idle ones
   * are left out with the rest of the idle draw, the host is counted whole */
  int planned = r->gpus > 0 ? r->gpus : hw->ngpus;
  double gpu_w = hw->gpu ? hw->gpu->tdp_w * gr_plan_consts()->gpu_power_share : 0;
  if (hw->gpu && r->power_limit_w > 0) { /* the limit caps each GPU's draw and lowers its ceiling */
    gpu_w = fmin(gpu_w, r->power_limit_w);
    o->board_power_w = hw->gpu->tdp_w;
    o->watts_saved_gpu_w = fmax(0, hw->gpu->tdp_w - r->power_limit_w);
    o->watts_saved_w = o->watts_saved_gpu_w * planned;
  }
  double gpus_w = planned * gpu_w;
  o->power_w = gpus_w + gr_plan_consts()->host_power_w;
  o->energy_kwh_day = o->power_w * 24 / 1000;
  o->energy_cost_day = o->energy_kwh_day * r->kwh_price;
  if (r->rent > 0 && r->gpus > 0) {
    o->rent_year = r->rent * r->gpus * 24 * 365;
    double saved = r->rent * r->gpus * 24 - o->energy_cost_day;
    o->breakeven_days = o->price > 0 && saved > 0 ? o->price / saved : 0;
  }
}

/* ---- verdict ---- */

/* Counts, weight bytes and the memory breakdown: what every plan starts from. */
/* Counts, weight bytes and the memory breakdown: what every plan starts
 * from. w: the weight bytes when the caller has them for r's format (they
 * depend on neither batch nor context), else NULL. */
static void plan_base_with(const struct gr_plan_req *r, const struct gr_model *m, const struct gr_plan_hw *hw,
                           struct gr_plan *o, const struct gr_weight_bytes *w)
{
  memset(o, 0, sizeof(*o));
  gr_model_count(m, &o->params);
  if (w)
    o->weights = *w;
  else
    gr_quant_model_bytes(&r->quant, m, &o->weights);
  o->trainable = r->job == GR_JOB_FULL ? o->params.total : gr_lora_trainable(m, r->lora_rank, r->lora_targets);
  plan_memory(r, m, hw, o);
}

static void plan_base(const struct gr_plan_req *r, const struct gr_model *m, const struct gr_plan_hw *hw,
                      struct gr_plan *o)
{
  plan_base_with(r, m, hw, o, NULL);
}

/* The largest value in [1, hi] for which set() still fits (0 if none).
 * The weight bytes are computed once: the bisection changes only batch or
 * context (perf.md §4: recomputing them was most of compare --job infer). */
static long largest_fitting(struct gr_plan_req r, const struct gr_model *m, const struct gr_plan_hw *hw, bool ctx,
                            long hi)
{
  long lo = 0;
  struct gr_weight_bytes w;
  struct gr_plan *tmp = xmalloc(sizeof(*tmp));
  gr_quant_model_bytes(&r.quant, m, &w);
  while (lo < hi) {
    long mid = lo + (hi - lo + 1) / 2;
    if (ctx)
      r.ctx = mid;
    else
      r.batch = mid;
    plan_base_with(&r, m, hw, tmp, &w);
    if (fit_of(tmp, &r) != GR_FIT_NO)
      lo = mid;
    else
      hi = mid - 1;
  }
  free(tmp);
  return lo;
}

/* ---- the fit search ---- */

/* One candidate change to a request: each field is either "as asked" (the
 * request's own value) or a change. Costs order the search: ZeRO stages
 * first (they only shard what is there), then checkpointing (recompute), then
 * offload (PCIe every step), then a smaller format, batch or context (a
 * different job). Each weight is larger than every cheaper combination, so
 * the cheapest fitting candidate is the one the order names. */
struct change {
  int zero;            /* ZeRO stage */
  bool ckpt;
  enum gr_offload offload;
  int gpus;            /* inference: GPUs in the layer split */
  const char *kv;      /* KV-cache format, NULL as asked */
  const char *quant;   /* weight format, NULL as asked */
  bool qlora;          /* a LoRA or full job as QLoRA */
  bool batch1;
  bool rank0;          /* only rank 0 reads the checkpoint */
  unsigned cost;
};

/* Whether the plan's engine loads weight format q and runs it on the plan's
 * GPU (data/engines.tsv formats and min_cc: a V100 gets GPTQ, not AWQ). */
static bool format_runs(const struct gr_plan_req *r, const struct gr_plan_hw *hw, const struct gr_quant *q)
{
  char why[192];
  return gr_engine_format_runs(r->engine, q, hw->gpu, why, sizeof(why));
}

/* The smaller weight format gpurig suggests on this engine and GPU, 8-bit
 * (wide) or 4-bit, or NULL: the first of the list the engine loads and the
 * GPU runs, smaller than the format asked. FP8 on vLLM needs compute
 * capability 8.0 (weight-only FP8 Marlin kernels on Ampere; docs.vllm.ai
 * "FP8 W8A8"). */
static const char *smaller_format(const struct gr_plan_req *r, const struct gr_model *m, const struct gr_plan_hw *hw,
                                  bool wide)
{
  static const char *const eight[] = {"q8_0", "fp8", "int8"}, *const four[] = {"q4_k_m", "awq", "gptq", "nf4"};
  const char *const *order = wide ? eight : four;
  size_t n = wide ? 3 : 4;
  for (size_t i = 0; i < n; i++) {
    struct gr_quant q;
    if (gr_quant_parse(order[i], &q, NULL) != 0 || q.bits >= r->quant.bits || !format_runs(r, hw, &q))
      continue;
    if (q.kind == GR_Q_AWQ && m->experts > 0) /* AWQ checkpoints of MoE models are rare; GPTQ exists */
      continue;
    return order[i];
  }
  return NULL;
}

/* The smaller KV-cache format the engine offers, or NULL. */
static const char *smaller_kv(const struct gr_plan_req *r)
{
  static const char *const order[] = {"q8_0", "fp8", "q4_0"};
  for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
    struct gr_quant q;
    if (gr_quant_parse(order[i], &q, NULL) == 0 && q.bits < r->kv_quant.bits && gr_engine_has_kv_quant(r->engine, &q))
      return order[i];
  }
  return NULL;
}

/* The request with change c applied; false when c does not apply. */
static bool apply_change(const struct gr_plan_req *r0, const struct gr_model *m, const struct change *c,
                         struct gr_plan_req *r)
{
  *r = *r0;
  r->zero = c->zero;
  r->checkpointing = c->ckpt;
  r->offload = c->offload;
  if (c->gpus != r0->gpus) {
    r->gpus = c->gpus;
    r->pp = c->gpus;
  }
  if (c->kv && gr_quant_parse(c->kv, &r->kv_quant, NULL) != 0)
    return false;
  if (c->quant && gr_quant_parse(c->quant, &r->quant, NULL) != 0)
    return false;
  if (c->qlora) {
    r->job = GR_JOB_QLORA;
    gr_quant_parse("nf4-dq", &r->quant, NULL);
  }
  if (c->batch1)
    r->batch = 1;
  r->rank0_load = r0->rank0_load || c->rank0;
  return m->shape_known || !c->ckpt || r0->checkpointing;
}

/* The flags that turn r0 into r, as a user would type them. */
static void change_text(const struct gr_plan_req *r0, const struct gr_plan_req *r, char *buf, size_t cap)
{
  size_t off = 0;
  buf[0] = '\0';
#define ADD(...) (off += off < cap ? (size_t)snprintf(buf + off, cap - off, __VA_ARGS__) : 0)
  if (r->gpus != r0->gpus)
    ADD("%s--gpus %d", off ? " " : "", r->gpus);
  if (r->job != r0->job)
    ADD("%s--job qlora", off ? " " : "");
  if (r->zero != r0->zero)
    ADD("%s--zero %d", off ? " " : "", r->zero);
  if (r->checkpointing != r0->checkpointing)
    ADD("%s--checkpointing", off ? " " : "");
  if (r->offload != r0->offload)
    ADD("%s--offload %s", off ? " " : "", r->offload == GR_OFFLOAD_PARAMS ? "params" : "optimizer");
  if (r->job == r0->job && strcmp(r->quant.name, r0->quant.name) != 0)
    ADD("%s--quant %s", off ? " " : "", r->quant.name);
  if (strcmp(r->kv_quant.name, r0->kv_quant.name) != 0)
    ADD("%s--kv-quant %s", off ? " " : "", r->kv_quant.name);
  if (r->batch != r0->batch)
    ADD("%s--batch %ld", off ? " " : "", r->batch);
  if (r->rank0_load != r0->rank0_load)
    ADD("%s--rank0-load", off ? " " : "");
#undef ADD
}

/* Every candidate for a training job: loading on rank 0 only (host RAM),
 * ZeRO stages from the one asked, with and without checkpointing, then
 * offload, then QLoRA and a smaller batch. */
static size_t training_changes(const struct gr_plan_req *r, const struct gr_model *m, struct change *out, size_t cap)
{
  size_t n = 0;
  int dp = r->gpus / (r->tp * r->pp);
  for (unsigned fallback = 0; fallback < 3; fallback++) {
    if (fallback == 1 && (r->job == GR_JOB_QLORA || !m->shape_known))
      continue;
    if (fallback == 2 && r->batch <= 1)
      continue;
    for (int off = 0; off < 3; off++) {
      enum gr_offload o = off == 0 ? r->offload : off == 1 ? GR_OFFLOAD_OPTIMIZER : GR_OFFLOAD_PARAMS;
      if (off > 0 && (r->job != GR_JOB_FULL || fallback == 1 || o <= r->offload))
        continue; /* gpurig models offload of a full fine-tune's states only */
      for (int ck = 0; ck < 2; ck++)
        for (int z = r->zero; z <= 3; z++)
          for (int r0 = 0; r0 < 2; r0++) {
            int zz = o == GR_OFFLOAD_PARAMS ? 3 : o == GR_OFFLOAD_OPTIMIZER && z < 1 ? 1 : z;
            /* ZeRO shards over data-parallel ranks: one rank has nothing to
             * shard, though it can still offload (ZeRO-Offload on one GPU) */
            bool shards = dp >= 2 || o != GR_OFFLOAD_NONE || z == r->zero;
            if (zz != z || !shards || (ck && (r->checkpointing || !m->shape_known)) || (r0 && r->rank0_load) ||
                (r0 && r->gpus < 2) || n >= cap)
              continue;
            unsigned zc = z > r->zero ? 2u << (z - 1) : 0; /* ZeRO-1 2, -2 4, -3 8 */
            out[n++] = (struct change){.zero = z, .ckpt = r->checkpointing || ck, .offload = o, .gpus = r->gpus,
                                       .qlora = fallback == 1, .batch1 = fallback == 2, .rank0 = r0,
                                       .cost = (unsigned)r0 + zc + 16u * (unsigned)ck + 32u * (unsigned)off +
                                               128u * fallback};
          }
    }
  }
  return n;
}

/* Every candidate for inference: all GPUs, a smaller KV format, an 8-bit
 * then a 4-bit weight format, batch 1, in that order of cost, and their
 * combinations. */
static size_t infer_changes(const struct gr_plan_req *r, const struct gr_model *m, const struct gr_plan_hw *hw,
                            struct change *out, size_t cap)
{
  size_t n = 0;
  const char *kv = smaller_kv(r), *q8 = smaller_format(r, m, hw, true), *q4 = smaller_format(r, m, hw, false);
  bool more = r->gpus > 0 && r->gpus < hw->ngpus && r->tp == 1;
  for (unsigned bits = 1; bits < 32 && n < cap; bits++) {
    if (((bits & 1) && !more) || ((bits & 2) && !kv) || ((bits & 4) && !q8) || ((bits & 8) && !q4) ||
        (bits & 12) == 12 || ((bits & 16) && r->batch <= 1))
      continue;
    out[n++] = (struct change){.zero = r->zero, .ckpt = r->checkpointing, .offload = r->offload,
                               .gpus = bits & 1 ? hw->ngpus : r->gpus, .kv = bits & 2 ? kv : NULL,
                               .quant = bits & 4 ? q8 : bits & 8 ? q4 : NULL, .batch1 = bits & 16, .cost = bits};
  }
  return n;
}

static int by_cost(const void *a, const void *b)
{
  unsigned x = ((const struct change *)a)->cost, y = ((const struct change *)b)->cost;
  return x < y ? -1 : x > y;
}

/* The cheapest change that makes the job fit: its flags in o->fix and the
 * GiB per GPU it needs in *need; o->fix empty when none does. */
static void find_fix(const struct gr_plan_req *r0, const struct gr_model *m, const struct gr_plan_hw *hw,
                     struct gr_plan *o, double *need)
{
  struct change c[160];
  size_t n = r0->job == GR_JOB_INFER ? infer_changes(r0, m, hw, c, 160) : training_changes(r0, m, c, 160);
  qsort(c, n, sizeof(c[0]), by_cost);
  o->fix[0] = '\0';
  struct gr_plan *tmp = xmalloc(sizeof(*tmp));
  /* the cheapest change with headroom, else the cheapest that fits tightly:
   * a plan at 97% of the card is not the advice to give first */
  for (int pass = 0; pass < 2 && !o->fix[0]; pass++)
    for (size_t i = 0; i < n && !o->fix[0]; i++) {
      struct gr_plan_req r;
      if (c[i].cost == 0 || !apply_change(r0, m, &c[i], &r))
        continue;
      if (c[i].batch1) { /* the largest batch that fits, not 1 */
        long b = largest_fitting(r, m, hw, false, r0->batch - 1);
        r.batch = b > 0 ? b : 1;
      }
      plan_base(&r, m, hw, tmp);
      enum gr_fit f = fit_of(tmp, &r);
      if (f == GR_FIT_HEADROOM || (pass == 1 && f == GR_FIT_TIGHT)) {
        change_text(r0, &r, o->fix, sizeof(o->fix));
        *need = tmp->gpu_need_gib;
      }
    }
  free(tmp);
}

static void plan_verdict(const struct gr_plan_req *r, const struct gr_model *m, const struct gr_plan_hw *hw,
                         struct gr_plan *o)
{
  o->fit = fit_of(o, r);
  if (r->gpus == 0) {
    if (hw->host_ram_gib > 0)
      snprintf(o->verdict, sizeof(o->verdict), "%s: %.1f GiB of host RAM for weights, KV cache and buffers; the "
               "machine has %.0f GiB", o->host_short ? "does not fit" : "fits", o->gpu_need_gib, hw->host_ram_gib);
    else
      snprintf(o->verdict, sizeof(o->verdict), "needs %.1f GiB of host RAM for weights, KV cache and buffers",
               o->gpu_need_gib);
    return;
  }
  double have = o->gpu_have_gib, need = o->gpu_need_gib, fixed = 0;
  if (o->fit == GR_FIT_NO && o->host_short && need <= have) {
    find_fix(r, m, hw, o, &fixed);
    o->fix_need_gib = o->fix[0] ? fixed : 0;
    snprintf(o->verdict, sizeof(o->verdict), "does not fit in host RAM: %.1f GiB needed, the machine has %.0f GiB "
             "(the GPUs would hold %.1f of %.0f GiB each)%s%s", o->host_need_gib, hw->host_ram_gib, need, have,
             o->fix[0] ? "; fits with " : "; no change gpurig tries is enough: more host RAM", o->fix);
  } else if (o->fit == GR_FIT_NO) {
    find_fix(r, m, hw, o, &fixed);
    o->fix_need_gib = o->fix[0] ? fixed : 0;
    char host[160] = "";
    if (o->host_short) /* both limits, so that a fix for one is not taken for the whole answer */
      snprintf(host, sizeof(host), "; host RAM too: %.1f GiB needed, the machine has %.0f GiB", o->host_need_gib,
               hw->host_ram_gib);
    if (o->fix[0])
      snprintf(o->verdict, sizeof(o->verdict),
               "does not fit: %.1f GiB needed per GPU, %s has %.0f GiB%s; fits with %s (%.1f GiB per GPU)", need,
               hw->gpu->model, have, host, o->fix, fixed);
    else
      snprintf(o->verdict, sizeof(o->verdict),
               "does not fit: %.1f GiB needed per GPU, %s has %.0f GiB%s; no change gpurig tries (ZeRO, checkpointing, "
               "offload, a smaller format, batch 1) is enough: it takes more GPUs or GPUs with more memory", need,
               hw->gpu->model, have, host);
  } else {
    snprintf(o->verdict, sizeof(o->verdict), "%s: %.1f GiB of %.0f GiB per GPU (%.0f%%)%s",
             o->fit == GR_FIT_HEADROOM ? "fits with headroom" : "fits, but tight", need, have, need / have * 100,
             o->fit == GR_FIT_TIGHT ? "; under 10% left for fragmentation and framework buffers" : "");
  }
  long ctx_cap = m->max_ctx > 0 ? m->max_ctx : 1L << 20;
  if (m->shape_known) {
    o->max_batch = largest_fitting(*r, m, hw, false, 4096);
    o->max_ctx = largest_fitting(*r, m, hw, true, ctx_cap);
  }
}

static void plan_speed(const struct gr_plan_req *r, const struct gr_model *m, const struct gr_plan_hw *hw,
                       struct gr_plan *o)
{
  if (r->job == GR_JOB_INFER) {
    gr_speed_decode(r, m, hw, o);
    gr_speed_prefill(r, m, hw, o);
  } else {
    gr_speed_train(r, m, hw, o);
  }
}

void gr_plan_run(const struct gr_plan_req *r, const struct gr_model *m, const struct gr_plan_hw *hw,
                 struct gr_plan *o)
{
  if (m->kind == GR_MODEL_DIFFUSION) { /* its own memory model, no speed (plan/diffusion.h) */
    gr_diffusion_plan(r, m->diffusion, hw, o);
    plan_cost(r, hw, o);
    return;
  }
  plan_base(r, m, hw, o);
  o->clock_share = 1.0;
  if (r->power_limit_w > 0 && r->gpus > 0) {
    /* the speeds without the limit first, to say what it costs; the plan's are the limited ones */
    plan_speed(r, m, hw, o);
    o->free_decode_tps = o->decode_tps.mid;
    o->free_prefill_tps = o->prefill_tps.mid;
    o->free_train_tps = o->train_tps.mid;
    o->speed_basis[0] = '\0';
    o->clock_share = gr_power_clock_share(hw->gpu, r->power_limit_w);
  }
  plan_speed(r, m, hw, o);
  if (o->clock_share < 1.0)
    gr_speed_power_basis(r, hw, o);
  plan_cost(r, hw, o);
  plan_verdict(r, m, hw, o);
}

void gr_plan_notes(const struct gr_plan_req *r, const struct gr_model *m, const struct gr_plan_hw *hw,
                   const struct gr_plan *p, struct gr_findings *out)
{
  const char *id = "plan.note";
  if (m->kind == GR_MODEL_DIFFUSION) {
    gr_diffusion_notes(r, m->diffusion, p, out);
    return;
  }
  if (r->job != GR_JOB_INFER && !m->shape_known)
    gr_finding_add(out, GR_SEV_INFO, id, "Activations are not counted: --params gives no shape (use --model for them).");
  if (r->job == GR_JOB_INFER && r->gpus > 0 && gr_engine_is(r->engine, "vllm"))
    gr_finding_add(out, GR_SEV_INFO, id,
                   "vLLM takes gpu_memory_utilization (%.2f) of each GPU at start and fills what the weights and "
                   "buffers leave with KV-cache blocks: the job fits when its need is under that share.",
                   gr_plan_consts()->vllm_gpu_memory_utilization);
  if (hw->mixed_gpus)
    gr_finding_add(out, GR_SEV_INFO, id, "The GPUs differ: the plan uses the smallest, %s, for every one.",
                   hw->gpu->model);
  if (m->shape_known && !gr_model_type_llama_like(m->model_type))
    gr_finding_add(out, GR_SEV_INFO, id,
                   "model_type %s is counted as a Llama-style decoder (RMSNorm, gated MLP); check the total against "
                   "the model card.", m->model_type);
  if (r->job != GR_JOB_INFER && !r->rank0_load && r->gpus > 1)
    gr_finding_add(out, GR_SEV_INFO, id,
                   "Host RAM: every rank loading the checkpoint needs %.0f GiB; load on rank 0 only (FSDP "
                   "sync_module_states=True, meta-device init) to need %.0f GiB (--rank0-load).",
                   r->gpus * 2.0 * (double)p->params.total / GIB, 2.0 * (double)p->params.total / GIB);
}

/* ---- DeepSpeed's estimators, digit for digit ---- */

static void ds_header(char *buf, size_t cap, size_t *off, int gpn, int nodes, uint64_t P, const char *largest)
{
  *off += (size_t)snprintf(buf + *off, cap - *off,
                           "Estimated memory needed for params, optim states and gradients for a:\n"
                           "HW: Setup with %d %s, %d %s per node.\n"
                           "SW: Model with %lluM total params%s.\n"
                           "  per CPU  |  per GPU |   Options\n",
                           nodes, nodes > 1 ? "nodes" : "node", gpn, gpn > 1 ? "GPUs" : "GPU",
                           (unsigned long long)(P / 1000000), largest);
}

static void ds_row(char *buf, size_t cap, size_t *off, double cpu, double gpu, const char *opts)
{
  if (*off < cap)
    *off += (size_t)snprintf(buf + *off, cap - *off, " %7.2fGB | %6.2fGB | %s\n", floor(cpu) / GIB, floor(gpu) / GIB,
                             opts);
}

void gr_plan_deepspeed(int zero, uint64_t total_params, uint64_t largest_layer, int gpn, int nodes, char *buf,
                       size_t cap)
{
  double P = (double)total_params, total_gpus = (double)gpn * nodes, f = 1.5, gf = 1.0 / nodes;
  size_t off = 0;
  buf[0] = '\0';
  if (zero >= 3) {
    char largest[64];
    snprintf(largest, sizeof(largest), ", %lluM largest layer params", (unsigned long long)(largest_layer / 1000000));
    ds_header(buf, cap, &off, gpn, nodes, total_params, largest);
    double llm = 4.0 * (double)largest_layer;
    const char *cpu = "OffloadDeviceEnum.cpu";
    char opts[160];
    for (int zi = 1; zi >= 0; zi--) {
      snprintf(opts, sizeof(opts), "offload_param=%s, offload_optimizer=%s, zero_init=%d", cpu, cpu, zi);
      ds_row(buf, cap, &off, zi ? P * 18 * gf * f : P * fmax(4.0 * gpn, 18 * gf) * f, llm, opts);
    }
    for (int zi = 1; zi >= 0; zi--) {
      snprintf(opts, sizeof(opts), "offload_param=none, offload_optimizer=%s, zero_init=%d", cpu, zi);
      ds_row(buf, cap, &off, zi ? P * 16 * gf * f : P * fmax(4.0 * gpn, 16 * gf) * f,
             llm + floor(2 * P / total_gpus), opts);
    }
    for (int zi = 1; zi >= 0; zi--) {
      snprintf(opts, sizeof(opts), "offload_param=none, offload_optimizer=none, zero_init=%d", zi);
      ds_row(buf, cap, &off, zi ? (double)largest_layer * 4 * gpn * f : P * 4 * gpn * f,
             llm + floor(18 * P / total_gpus), opts);
    }
  } else {
    ds_header(buf, cap, &off, gpn, nodes, total_params, "");
    /* the option text of DeepSpeed master (deepspeedai/DeepSpeed edaa722, 2026-08-22,
     * stage_1_and_2.py format_options); releases before it printed cpu_offload=1/0 */
    ds_row(buf, cap, &off, P * fmax(4 * total_gpus, 16) * f, 2 * P, "offload_optimizer=OffloadDeviceEnum.cpu");
    ds_row(buf, cap, &off, P * 4 * gpn * f, 2 * P + floor(18 * P / total_gpus), "offload_optimizer=none");
  }
}
