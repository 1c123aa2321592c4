/* Decode, prefill and training speed as rooflines over named costs; see
 * speed.h and docs/plan.md "Speed". */
#include "plan/speed.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "facts/facts.h"
#include "plan/engine.h"
#include "plan/power.h"

/* Appends to the plan's basis line. */
static void basis(struct gr_plan *o, const char *fmt, ...)
{
  size_t off = strlen(o->speed_basis);
  if (off + 1 >= sizeof(o->speed_basis))
    return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(o->speed_basis + off, sizeof(o->speed_basis) - off, fmt, ap);
  va_end(ap);
}

/* The plan's engine profile for its build and GPU. The profiles are
 * gpurig's own data: a missing inference key is a bug in
 * data/engine-speed.tsv, said and aborted on. */
static void profile_of(const struct gr_plan_req *r, const struct gr_plan_hw *hw, struct gr_engine_profile *pf)
{
  /* a request built in code may name no engine: the one its format and job run on */
  const char *engine = r->engine ? r->engine : gr_engine_default(r->job != GR_JOB_INFER, &r->quant, r->gpus);
  gr_engine_profile(engine, r->engine_month, hw->gpu ? hw->gpu->arch : NULL, pf);
  const char *missing = NULL;
  /* every key but train_mfu, which only training engines have (gr_speed_train checks it) */
#define GR_PROFILE_NEEDED(k) if (!missing && isnan(pf->k) && strcmp(#k, "train_mfu") != 0) missing = #k;
  GR_ENGINE_SPEED_KEYS(GR_PROFILE_NEEDED)
#undef GR_PROFILE_NEEDED
  if (missing) {
    fprintf(stderr, "gpurig: internal error: data/engine-speed.tsv has no %s for %s\n", missing, engine);
    abort();
  }
}

/* The SM clock the plan runs at: the boost clock, or the share of it a
 * power limit sustains (o->clock_share, plan/power.h). Memory clocks are
 * not scaled: the limit is taken to slow the SMs, not the memory. */
static double clock_share(const struct gr_plan *o)
{
  return o->clock_share > 0 ? o->clock_share : 1.0; /* a plan filled outside gr_plan_run: no limit */
}

static double sm_clock_ghz(const struct gr_gpu_model *g, const struct gr_plan *o)
{
  return gr_speed_clock_ghz(g) * clock_share(o);
}

/* The per-layer cost of a decode step or a ubatch, seconds: fixed work at
 * the GPU's clock that grows slowly with the layer's width. */
static double layer_cost_s(const struct gr_engine_profile *pf, const struct gr_gpu_model *g, const struct gr_plan *o,
                           double hidden)
{
  return pf->layer_us_ghz * 1e-6 / sm_clock_ghz(g, o) * pow(hidden / 4096.0, pf->layer_size_exp);
}

static double mem_eff_of(const struct gr_engine_profile *pf, const struct gr_gpu_model *g)
{
  return gr_gpu_mem_is_hbm(g) ? pf->mem_eff_hbm : pf->mem_eff_gddr;
}

double gr_speed_clock_ghz(const struct gr_gpu_model *gpu)
{
  return gpu && gpu->boost_mhz > 0 ? gpu->boost_mhz / 1000.0 : gr_plan_consts()->gpu_clock_ghz_default;
}

/* "llama.cpp (2024-06 profile, the current release)" into buf. */
static void engine_label(const struct gr_plan_req *r, char *buf, size_t cap)
{
  const char *engine = r->engine ? r->engine : gr_engine_default(r->job != GR_JOB_INFER, &r->quant, r->gpus);
  int since = gr_engine_profile_month(engine, r->engine_month);
  int newest = gr_engine_profile_month(engine, 0);
  bool eras = newest > 0 && gr_engine_profile_month(engine, newest - 1) > 0; /* profiles differ by release */
  if (!eras)
    snprintf(buf, cap, "%s (one profile for every release)", engine);
  else if (r->engine_month > 0)
    snprintf(buf, cap, "%s@%04d-%02d (the profile of builds from %04d-%02d)", engine, r->engine_month / 12,
             r->engine_month % 12 + 1, since / 12, since % 12 + 1);
  else
    snprintf(buf, cap, "%s (current release: the profile of builds from %04d-%02d)", engine, since / 12, since % 12 + 1);
}

/* The model's decoder layers and hidden size; a --params model has no
 * shape, so a Llama-shaped one of that size is taken (hidden = 128 x
 * layers, 12 x layers x hidden^2 parameters: Llama-2-7B's proportions). */
static void layer_shape(const struct gr_model *m, const struct gr_plan *o, double *layers, double *hidden)
{
  if (m->shape_known) {
    *layers = (double)m->layers;
    *hidden = (double)m->hidden;
    return;
  }
  *layers = fmax(1, round(cbrt((double)o->params.total / (12.0 * 128 * 128))));
  *hidden = 128.0 * *layers;
}

/* ---- decode ---- */

/* Bytes one decode step reads: the weights once (more experts are touched
 * when a batch routes to different ones) and every sequence's KV cache. */
static double decode_step_bytes(const struct gr_plan_req *r, const struct gr_model *m, const struct gr_plan *o,
                                long ctx)
{
  double bytes = o->weights.per_token;
  if (m->experts > 0 && r->batch > 1) {
    double k = (double)m->experts_per_tok / (double)m->experts;
    double touched = 1.0 - pow(1.0 - k, (double)r->batch); /* share of experts some sequence routes to */
    bytes += o->weights.experts * (touched - k);
  }
  double kv = gr_model_kv_bytes(m, r->kv_quant.bits / 8.0, ctx, gr_engine_swa(r->engine));
  return bytes + kv * (double)r->batch;
}

/* The named costs of one decode step on GPUs, in seconds. */
struct decode_terms {
  double bytes, mem_eff, mem_s, compute_s, layers, layer_s, token_s, handoff_s;
};

/* The tensor rate fp16 weights are multiplied at by the engine, TFLOPS. */
static double float_rate(const struct gr_engine_profile *pf, const struct gr_plan_hw *hw)
{
  return pf->pp_fp16_acc > 0.5 ? hw->gpu->fp16_tflops : hw->gpu->fp16_fp32acc_tflops;
}

static void decode_terms(const struct gr_plan_req *r, const struct gr_engine_profile *pf, const struct gr_model *m,
                         const struct gr_plan_hw *hw, const struct gr_plan *o, long ctx, struct decode_terms *t)
{
  const struct gr_gpu_model *g = hw->gpu;
  double layers, hidden;
  layer_shape(m, o, &layers, &hidden);
  t->bytes = decode_step_bytes(r, m, o, ctx);
  t->mem_eff = mem_eff_of(pf, g);
  if (r->quant.kind != GR_Q_FLOAT)
    t->mem_eff *= pf->quant_read_eff;
  /* tensor parallel splits every matrix: each GPU reads its share at once */
  t->mem_s = t->bytes / r->tp / (t->mem_eff * g->mem_bw_gbps * 1e9);
  double flops = 2.0 * (double)o->params.active * (double)r->batch / r->tp;
  /* quantized matrix-vector kernels multiply on the int8 path where the GPU has one (llama.cpp's MMVQ: dp4a) */
  double tops = r->quant.kind != GR_Q_FLOAT ? fmax(float_rate(pf, hw), g->int8_tops) : float_rate(pf, hw);
  double rate = tops * pf->decode_compute_eff * clock_share(o) * 1e12; /* tensor rates follow the SM clock */
  t->compute_s = rate > 0 ? flops / rate : 0;
  /* small kernels between the matrix reads: fixed work per layer that runs
   * at the GPU's clock and grows slowly with the layer's width */
  t->layers = layers;
  t->layer_s = layer_cost_s(pf, g, o, hidden);
  t->token_s = (pf->token_us + pf->seq_us * (double)r->batch) * 1e-6;
  t->handoff_s = r->pp > 1 ? (r->pp - 1) * pf->handoff_us * 1e-6 : 0;
}

static double decode_step_s(const struct decode_terms *t, const struct gr_plan *o)
{
  return fmax(t->mem_s, t->compute_s) + t->layers * t->layer_s + t->token_s + t->handoff_s + o->tp_comm_s +
         o->pipe_comm_s;
}

/* --nodes: pipeline stages on different nodes hand one token's hidden state
 * (fp16) across each node boundary per step, over the node's NICs. Bandwidth
 * only: no network latency is in the data. */
static void pipe_comm(const struct gr_plan_req *r, const struct gr_model *m, const struct gr_plan_hw *hw,
                      struct gr_plan *o)
{
  if (hw->nodes <= 1 || !m->shape_known)
    return;
  o->act_bytes = (double)m->hidden * 2.0;
  if (hw->node_nic_gbps <= 0)
    return;
  double boundaries = hw->nodes - 1, rate = hw->node_nic_gbps * 1e9;
  o->pipe_comm_s = boundaries * (double)r->batch * o->act_bytes / rate;
  o->pipe_prefill_s = boundaries * (double)r->batch * (double)r->ctx * o->act_bytes / rate;
}

/* Whether a tensor-parallel group of tp such GPUs all-reduces over NVLink:
 * the GPU as sold joins every peer by NVLink (an NVSwitch baseboard, an
 * SXM2 mesh), or a bridge joins the pair. A proxy from the catalog: the
 * topology's group rates (hw->busbw_gbps) already carry the bandwidth. */
static bool tp_over_nvlink(const struct gr_gpu_model *g, int tp)
{
  if (!g || !g->board || strcmp(g->link, "nvlink") != 0)
    return false;
  return strcmp(g->board, "nvswitch") == 0 || strcmp(g->board, "hcm") == 0 || strcmp(g->board, "mesh") == 0 ||
         (strcmp(g->board, "bridge") == 0 && tp == 2);
}

/* Two all-reduces of the hidden state per layer per step under TP, each a
 * small message: latency plus bytes over the group's bus bandwidth. */
static void tp_comm(const struct gr_plan_req *r, const struct gr_model *m, const struct gr_plan_hw *hw,
                    struct gr_plan *o)
{
  if (r->tp <= 1 || !m->shape_known)
    return;
  double busbw = hw->busbw_gbps[r->tp], msg = (double)r->batch * (double)m->hidden * 2.0;
  double lat = (tp_over_nvlink(hw->gpu, r->tp) ? gr_plan_consts()->allreduce_latency_nvlink_us
                                               : gr_plan_consts()->allreduce_latency_us) * 1e-6;
  o->tp_comm_s = 2.0 * (double)m->layers * (lat + (busbw > 0 ? msg * 2.0 * (r->tp - 1) / r->tp / (busbw * 1e9) : 0));
  o->allreduce_gbps = busbw;
  o->allreduce_raised_gbps = hw->busbw_raised_gbps[r->tp];
  o->allreduce_raised_level = hw->p2p_level[r->tp];
}

static void set_range(struct gr_range *x, double mid, double spread)
{
  *x = (struct gr_range){mid * (1 - spread), mid, mid * (1 + spread), true};
}

static void decode_cpu(const struct gr_plan_req *r, const struct gr_model *m, const struct gr_plan_hw *hw,
                       struct gr_plan *o)
{
  double lo = gr_plan_consts()->decode_eff_cpu_low, hi = gr_plan_consts()->decode_eff_cpu_high;
  double b = (double)r->batch, bytes = decode_step_bytes(r, m, o, 1), full = decode_step_bytes(r, m, o, r->ctx);
  double bw = hw->cpu_bw_gbps * 1e9;
  o->decode_tps = (struct gr_range){b / (bytes / (lo * bw)), b / (bytes / ((lo + hi) / 2 * bw)), b / (bytes / (hi * bw)),
                                    true};
  o->decode_full_tps = (struct gr_range){b / (full / (lo * bw)), b / (full / ((lo + hi) / 2 * bw)),
                                         b / (full / (hi * bw)), m->shape_known};
  basis(o, "CPU decode: %.2f GB read per token over %.1f GB/s of host memory (%s) at %.0f-%.0f%% efficiency",
        bytes / 1e9, hw->cpu_bw_gbps, hw->cpu_desc, lo * 100, hi * 100);
}

void gr_speed_decode(const struct gr_plan_req *r, const struct gr_model *m, const struct gr_plan_hw *hw,
                     struct gr_plan *o)
{
  if (r->gpus == 0) {
    decode_cpu(r, m, hw, o);
    return;
  }
  tp_comm(r, m, hw, o);
  pipe_comm(r, m, hw, o);
  struct gr_engine_profile pf;
  profile_of(r, hw, &pf);
  struct decode_terms t, tf;
  decode_terms(r, &pf, m, hw, o, 1, &t);
  decode_terms(r, &pf, m, hw, o, r->ctx, &tf);
  double spread = gr_plan_consts()->decode_spread, b = (double)r->batch, step = decode_step_s(&t, o);
  set_range(&o->decode_tps, b / step, spread);
  set_range(&o->decode_full_tps, b / decode_step_s(&tf, o), spread);
  o->decode_full_tps.ok = m->shape_known;
  char eng[96];
  engine_label(r, eng, sizeof(eng));
  basis(o, "decode on %s: %s %.2f GB per step over %.0f%% of %.0f GB/s (%s) = %.2f ms", eng,
        t.mem_s >= t.compute_s ? "reading" : "(compute-bound) reading", t.bytes / 1e9 / r->tp, t.mem_eff * 100,
        hw->gpu->mem_bw_gbps, gr_gpu_mem_is_hbm(hw->gpu) ? "HBM" : "GDDR", t.mem_s * 1e3);
  if (t.compute_s > t.mem_s)
    basis(o, ", below the batch's %.2f ms of compute", t.compute_s * 1e3);
  basis(o, "; + %.0f layers x %.0f us (at %.2f GHz) = %.2f ms; + %.0f us per step and sequence%s", t.layers,
        t.layer_s * 1e6, sm_clock_ghz(hw->gpu, o), t.layers * t.layer_s * 1e3, t.token_s * 1e6,
        r->batch > 1 ? "s (sampling, scheduling)" : " (sampling)");
  if (r->pp > 1)
    basis(o, "; layer split: %d GPUs run one after another, + %d hand-offs = %.2f ms", r->pp, r->pp - 1,
          t.handoff_s * 1e3);
  if (r->tp > 1)
    basis(o, "; tensor parallel over %d GPUs: 2 all-reduces per layer = %.2f ms%s", r->tp, o->tp_comm_s * 1e3,
          o->allreduce_gbps > 0 ? "" : " (latency only: no bus bandwidth predicted)");
  if (hw->nodes > 1)
    basis(o, "; %d node boundaries add %.1f us of activations over the NICs", hw->nodes - 1, o->pipe_comm_s * 1e6);
  basis(o, "; = %.2f ms per step", step * 1e3);
}

/* ---- prefill ---- */

/* Prompt processing of one ubatch: its FLOPs over the tensor rate of the
 * path the engine takes for the format, never faster than reading the
 * weights once, plus the per-layer cost. */
void gr_speed_prefill(const struct gr_plan_req *r, const struct gr_model *m, const struct gr_plan_hw *hw,
                      struct gr_plan *o)
{
  if (r->gpus == 0)
    return;
  const struct gr_gpu_model *g = hw->gpu;
  struct gr_engine_profile pf;
  profile_of(r, hw, &pf);
  bool quant = r->quant.kind != GR_Q_FLOAT, int8 = quant && pf.pp_int8 > 0.5 && g->int8_tops > 0 &&
                                                  (r->quant.kind == GR_Q_GGUF || r->quant.kind == GR_Q_GGML);
  const char *path;
  double rate;
  if (int8) {
    rate = g->int8_tops * pf.pp_eff_int8;
    path = "the int8 path (MMQ)";
  } else {
    rate = float_rate(&pf, hw) * pf.pp_eff_float * (quant ? pf.pp_dequant_eff : 1.0);
    path = quant ? "dequantize then fp16 GEMM" : pf.pp_fp16_acc > 0.5 ? "fp16 GEMM, FP16 accumulate"
                                                                                 : "fp16 GEMM, FP32 accumulate";
  }
  rate *= clock_share(o); /* tensor rates follow the SM clock */
  if (rate <= 0)
    return;
  double layers, hidden;
  layer_shape(m, o, &layers, &hidden);
  double chunk = fmin(gr_plan_consts()->inference_chunk_tokens, (double)r->ctx);
  /* attention: scores and values over half the chunk on average, 2 x 2 FLOPs per element */
  double attn = m->shape_known ? 2.0 * layers * (double)(m->heads * m->head_dim) * chunk : 0;
  double flops = (2.0 * (double)o->params.active + attn) * chunk;
  double compute_s = flops / r->tp / (rate * 1e12);
  double mem_eff = mem_eff_of(&pf, g);
  double read_s = o->weights.per_token / r->tp / (mem_eff * g->mem_bw_gbps * 1e9);
  double layer_s = layers * layer_cost_s(&pf, g, o, hidden);
  double handoff = r->pp > 1 ? (r->pp - 1) * pf.handoff_us * 1e-6 : 0;
  double t = fmax(compute_s, read_s) + layer_s + handoff;
  double v = chunk / t;
  if (o->pipe_prefill_s > 0) /* --nodes: the prompt's activations also cross the node boundaries */
    v = chunk / (t + o->pipe_prefill_s * chunk / fmax(1.0, (double)r->ctx * (double)r->batch));
  set_range(&o->prefill_tps, v, gr_plan_consts()->prefill_spread);
  basis(o, ". Prefill: %.0f-token ubatches, %.3g FLOPs each over %s at %.0f TOPS = %.2f ms%s, + %.2f ms of layers%s",
        chunk, flops, path, rate, compute_s * 1e3, read_s > compute_s ? " (reading the weights takes longer)" : "",
        layer_s * 1e3, r->pp > 1 ? "; the layer split's GPUs take a ubatch one after another" : "");
}

/* ---- training ---- */

/* Seconds of a DeepSpeed CPU Adam step on one node: a streaming update of
 * the node's optimizer states over host memory; 0 when its bandwidth is
 * unknown. */
static double cpu_adam_s(const struct gr_plan_req *r, const struct gr_plan_hw *hw, const struct gr_plan *o)
{
  if (r->offload == GR_OFFLOAD_NONE || hw->cpu_bw_gbps <= 0)
    return 0;
  double nodes = hw->nodes > 1 ? hw->nodes : 1, params = (double)o->params.total / nodes;
  return params * gr_plan_consts()->cpu_adam_bytes_per_param /
         (hw->cpu_bw_gbps * 1e9 * gr_plan_consts()->cpu_adam_mem_eff);
}

/* Seconds of PCIe traffic per step for offload: each rank sends its
 * gradient shard down and gets its fp16 parameters back; with the
 * parameters offloaded, forward and backward fetch them too. */
static double offload_pcie_s(const struct gr_plan_req *r, const struct gr_plan_hw *hw, const struct gr_plan *o)
{
  if (r->offload == GR_OFFLOAD_NONE || hw->host_link_gbps <= 0)
    return 0;
  double shard = (double)o->params.total / (r->tp * r->pp) / o->dp, moves = 2.0 + 2.0;
  if (r->offload == GR_OFFLOAD_PARAMS)
    moves += 2.0 * (r->checkpointing ? 3 : 2);
  return moves * shard / (hw->host_link_gbps * 1e9 * gr_plan_consts()->offload_pcie_eff);
}

/* Communication of one step, seconds: the gradient all-reduce (ZeRO-3
 * moves 1.5x its bytes: all-gathers of the sharded weights in forward and
 * backward), FSDP's all-gathers of a frozen sharded base (LoRA/QLoRA under
 * ZeRO-3), and tensor parallel's activation all-reduces. */
static double train_comm_s(const struct gr_plan_req *r, const struct gr_model *m, const struct gr_plan_hw *hw,
                           struct gr_plan *o, double *gather_s)
{
  double busbw = o->dp > 1 ? hw->busbw_gbps[o->dp < 65 ? o->dp : 64] : 0, comm = 0, dp = o->dp;
  *gather_s = 0;
  double grads = r->job == GR_JOB_FULL ? 2.0 * (double)o->params.total / (r->tp * r->pp) : 4.0 * (double)o->trainable;
  double factor = r->zero >= 3 && r->job == GR_JOB_FULL ? 1.5 : 1.0;
  if (dp > 1 && busbw > 0) {
    comm = factor * grads * 2.0 * (dp - 1) / dp / (busbw * 1e9);
    if (r->job != GR_JOB_FULL && r->zero >= 3) { /* the frozen base, gathered in forward, backward (and recompute) */
      double gathers = r->checkpointing ? 3.0 : 2.0, base = o->weights.total / (r->tp * r->pp);
      *gather_s = gathers * base * (dp - 1) / dp / (busbw * 1e9);
      comm += *gather_s;
    }
  }
  if (r->tp > 1 && m->shape_known && hw->busbw_gbps[r->tp] > 0) /* 4 activation all-reduces per layer */
    comm += 4.0 * (double)m->layers * (double)r->batch * (double)r->ctx * (double)m->hidden * 2.0 * 2.0 * (r->tp - 1) /
            r->tp / (hw->busbw_gbps[r->tp] * 1e9);
  o->allreduce_gbps = busbw;
  size_t k = dp > 1 ? (size_t)(o->dp < 65 ? o->dp : 64) : 0;
  o->allreduce_raised_gbps = k ? hw->busbw_raised_gbps[k] : 0;
  o->allreduce_raised_level = k ? hw->p2p_level[k] : NULL;
  return comm;
}

/* Per-step time of a training job: compute at the engine's MFU for the
 * architecture, the communication the overlap with compute cannot hide,
 * and offload's PCIe traffic and CPU Adam step, which wait for each other. */
void gr_speed_train(const struct gr_plan_req *r, const struct gr_model *m, const struct gr_plan_hw *hw,
                    struct gr_plan *o)
{
  double tokens = (double)r->batch * (double)r->ctx * o->dp;
  double per = r->job == GR_JOB_FULL ? 6.0 : 4.0; /* adapters: no weight gradients for the frozen base */
  per += r->checkpointing ? 2.0 : 0.0;            /* the forward again */
  /* attention scores and values: 12 L h s FLOPs per token for forward and
   * backward (Narayanan et al. 2021, the MFU convention of the PyTorch FSDP
   * runs), scaled like the weights' FLOPs with checkpointing */
  double attn = m->shape_known ? 12.0 * (double)m->layers * (double)m->hidden * (double)r->ctx * per / 6.0 : 0;
  double flops = (per * (double)o->params.active + attn) * tokens;
  struct gr_engine_profile pf;
  profile_of(r, hw, &pf);
  if (isnan(pf.train_mfu)) {
    fprintf(stderr, "gpurig: internal error: data/engine-speed.tsv has no train_mfu for %s\n", r->engine);
    abort();
  }
  double peak = r->gpus * hw->gpu->fp16_fp32acc_tflops * clock_share(o) * 1e12, mfu = pf.train_mfu;
  if (peak <= 0)
    return;
  double compute = flops / (peak * mfu), gather = 0, comm = train_comm_s(r, m, hw, o, &gather);
  double window = compute * gr_plan_consts()->allreduce_overlap, exposed = fmax(0, comm - window);
  double pcie = offload_pcie_s(r, hw, o), adam = cpu_adam_s(r, hw, o);
  double step = compute + exposed + pcie + adam, spread = gr_plan_consts()->train_spread;
  o->step_s = (struct gr_range){step * (1 - spread), step, step * (1 + spread), true};
  o->train_tps = (struct gr_range){tokens / o->step_s.high, tokens / step, tokens / o->step_s.low, true};
  char eng[96];
  engine_label(r, eng, sizeof(eng));
  basis(o, "training step on %s: %.3g FLOPs (%.0f x %.3g active params x %.0f tokens, attention included) on %d x "
        "%.0f TFLOPS at %.0f%% MFU = %.2f s", eng, flops, per, (double)o->params.active, tokens, r->gpus,
        hw->gpu->fp16_fp32acc_tflops * clock_share(o), mfu * 100, compute);
  basis(o, "; communication %.2f s over %.1f GB/s%s, %.2f s of it not hidden behind compute (%.0f%% of compute "
        "overlaps)", comm, o->allreduce_gbps, r->zero >= 3 && r->job == GR_JOB_FULL ? " (ZeRO-3 moves 1.5x DDP's data)" : "",
        exposed, gr_plan_consts()->allreduce_overlap * 100);
  if (gather > 0)
    basis(o, "; of it the all-gathers of the frozen sharded base in forward and backward%s: %.2f s",
          r->checkpointing ? " and the recompute" : "", gather);
  if (r->offload != GR_OFFLOAD_NONE) {
    basis(o, "; offload: %.2f s of PCIe per step", pcie);
    if (adam > 0)
      basis(o, " + CPU Adam %.2f s (%.0f B per parameter over %.0f%% of %.0f GB/s of host memory)", adam,
            gr_plan_consts()->cpu_adam_bytes_per_param, gr_plan_consts()->cpu_adam_mem_eff * 100, hw->cpu_bw_gbps);
    else
      basis(o, "; the CPU Adam step is not counted: the host's memory bandwidth is unknown (give a rig or --cpu)");
  }
  basis(o, "; = %.2f s per step", step);
}

/* ---- power limit ---- */

void gr_speed_power_basis(const struct gr_plan_req *r, const struct gr_plan_hw *hw, struct gr_plan *o)
{
  const struct gr_power_clock_row *row = gr_power_clock_row(hw->gpu);
  if (!row)
    return;
  bool own = strcmp(row->arch, "-") != 0;
  basis(o, ". Power limit %.0f W of %.0f W board power: the SM clock sustained is %.3f of boost (%.2f GHz), where "
        "%.0f%% of board power does not follow the clock and the rest goes as f^3 (C V^2 f, V rising with f) down to "
        "%.0f%% of boost, as f below (data/power-clock.tsv, %s); tensor rates and per-layer costs follow the clock, "
        "memory bandwidth does not", r->power_limit_w, hw->gpu->tdp_w, o->clock_share, sm_clock_ghz(hw->gpu, o),
        row->static_share * 100, row->floor_clock_share * 100,
        own ? "fitted to a published sweep of this architecture" : "no sweep of this architecture: GA102's values");
}
