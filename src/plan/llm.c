#include "plan/llm.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "base/suggest.h"
#include "facts/facts.h"
#include "plan/diffusion.h"

/* Architectures whose layers are Llama-shaped (RMSNorm, gated MLP, q/k/v/o
 * projections): the count below is exact for them. */
static const char *const llama_like_types[] = {"llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3",
                                               "gemma", "gemma2", "internlm2", "yi", "deepseek", "olmo2",
                                               "granite", "cohere", "phi3", "deepseek_v2", "deepseek_v3", NULL};

void gr_model_type_traits(struct gr_model *m)
{
  const char *t = m->model_type ? m->model_type : "";
  if (strcmp(t, "gemma2") == 0) {
    /* Gemma-2: input, post-attention, pre- and post-feedforward norms; local
     * (sliding-window) and global layers alternate, the first local
     * (transformers Gemma2DecoderLayer, config layer_types) */
    m->norms_per_layer = 4;
    m->swa_pattern = 2;
  }
  if (strcmp(t, "phi3") == 0)
    m->sliding_window = 0; /* Phi-3's 2047-token window is used by none of the engines gpurig plans */
}

bool gr_model_type_llama_like(const char *type)
{
  for (size_t i = 0; type && llama_like_types[i]; i++)
    if (strcmp(type, llama_like_types[i]) == 0)
      return true;
  return false;
}

static void emit(gr_tensor_fn fn, void *ctx, enum gr_tensor_class cls, long layer, uint64_t rows, uint64_t cols,
                 uint64_t count, bool expert)
{
  struct gr_tensor t = {.cls = cls, .layer = layer, .rows = rows, .cols = cols, .count = count, .expert = expert};
  fn(&t, ctx);
}

/* Multi-head latent attention: q (through a low-rank q_a/q_b pair when
 * q_lora_rank is set), the joint compressed KV projection with the shared
 * rope key, its norm, the KV up-projection, and o (DeepSeek-V2 paper §2.1;
 * transformers DeepseekV3Attention). */
static void mla_tensors(const struct gr_model *m, long l, gr_tensor_fn fn, void *ctx)
{
  uint64_t h = (uint64_t)m->hidden, H = (uint64_t)m->heads, qk = (uint64_t)(m->qk_nope_dim + m->qk_rope_dim);
  if (m->q_lora_rank > 0) {
    emit(fn, ctx, GR_T_ATTN_Q, l, (uint64_t)m->q_lora_rank, h, 1, false);
    emit(fn, ctx, GR_T_NORM, l, 1, (uint64_t)m->q_lora_rank, 1, false);
    emit(fn, ctx, GR_T_ATTN_Q, l, H * qk, (uint64_t)m->q_lora_rank, 1, false);
  } else {
    emit(fn, ctx, GR_T_ATTN_Q, l, H * qk, h, 1, false);
  }
  emit(fn, ctx, GR_T_ATTN_K, l, (uint64_t)(m->kv_lora_rank + m->qk_rope_dim), h, 1, false);
  emit(fn, ctx, GR_T_NORM, l, 1, (uint64_t)m->kv_lora_rank, 1, false);
  emit(fn, ctx, GR_T_ATTN_V, l, H * (uint64_t)(m->qk_nope_dim + m->v_head_dim), (uint64_t)m->kv_lora_rank, 1, false);
  emit(fn, ctx, GR_T_ATTN_O, l, h, H * (uint64_t)m->v_head_dim, 1, false);
}

static void attention_tensors(const struct gr_model *m, long l, gr_tensor_fn fn, void *ctx)
{
  uint64_t h = (uint64_t)m->hidden, q = (uint64_t)(m->heads * m->head_dim), kv = (uint64_t)(m->kv_heads * m->head_dim);
  if (m->kv_lora_rank > 0) {
    mla_tensors(m, l, fn, ctx);
    return;
  }
  emit(fn, ctx, GR_T_ATTN_Q, l, q, h, 1, false);
  emit(fn, ctx, GR_T_ATTN_K, l, kv, h, 1, false);
  emit(fn, ctx, GR_T_ATTN_V, l, kv, h, 1, false);
  if (m->qkv_bias) {
    emit(fn, ctx, GR_T_BIAS, l, 1, q, 1, false);
    emit(fn, ctx, GR_T_BIAS, l, 1, kv, 1, false);
    emit(fn, ctx, GR_T_BIAS, l, 1, kv, 1, false);
  }
  emit(fn, ctx, GR_T_ATTN_O, l, h, q, 1, false);
}

/* The MLP: dense in the first first_dense layers and in dense models; else
 * the router (with DeepSeek-V3's correction bias), the routed experts, and
 * the shared experts every token reads (with Qwen-MoE's gate). */
static void mlp_tensors(const struct gr_model *m, long l, gr_tensor_fn fn, void *ctx)
{
  uint64_t h = (uint64_t)m->hidden;
  bool moe = m->experts > 0 && l >= m->first_dense;
  uint64_t inter = (uint64_t)(moe ? m->moe_intermediate : m->intermediate), n = moe ? (uint64_t)m->experts : 1;
  if (moe) {
    emit(fn, ctx, GR_T_ROUTER, l, (uint64_t)m->experts, h, 1, false);
    if (m->router_bias)
      emit(fn, ctx, GR_T_BIAS, l, 1, (uint64_t)m->experts, 1, false);
  }
  emit(fn, ctx, GR_T_FFN_GATE, l, inter, h, n, moe);
  emit(fn, ctx, GR_T_FFN_UP, l, inter, h, n, moe);
  emit(fn, ctx, GR_T_FFN_DOWN, l, h, inter, n, moe);
  if (moe && m->shared_intermediate > 0) {
    uint64_t si = (uint64_t)m->shared_intermediate;
    emit(fn, ctx, GR_T_FFN_GATE, l, si, h, 1, false);
    emit(fn, ctx, GR_T_FFN_UP, l, si, h, 1, false);
    emit(fn, ctx, GR_T_FFN_DOWN, l, h, si, 1, false);
    if (m->shared_gate)
      emit(fn, ctx, GR_T_ROUTER, l, 1, h, 1, false);
  }
}

static void layer_tensors(const struct gr_model *m, long l, gr_tensor_fn fn, void *ctx)
{
  uint64_t h = (uint64_t)m->hidden;
  /* Gemma-2 adds norms after attention and around the MLP: 4 per layer */
  emit(fn, ctx, GR_T_NORM, l, 1, h, (uint64_t)(m->norms_per_layer > 2 ? m->norms_per_layer - 1 : 1), false);
  attention_tensors(m, l, fn, ctx);
  emit(fn, ctx, GR_T_NORM, l, 1, h, 1, false);
  mlp_tensors(m, l, fn, ctx);
}

void gr_model_tensors(const struct gr_model *m, gr_tensor_fn fn, void *ctx)
{
  if (!m->shape_known) {
    emit(fn, ctx, GR_T_ALL, -1, 1, (uint64_t)llround(m->params_given), 1, false);
    return;
  }
  uint64_t h = (uint64_t)m->hidden, v = (uint64_t)m->vocab;
  emit(fn, ctx, GR_T_EMBED, -1, v, h, 1, false);
  for (long l = 0; l < m->layers; l++)
    layer_tensors(m, l, fn, ctx);
  emit(fn, ctx, GR_T_NORM, -1, 1, h, 1, false);
  if (!m->tied)
    emit(fn, ctx, GR_T_OUTPUT, -1, v, h, 1, false);
}

struct count_ctx {
  const struct gr_model *m;
  struct gr_param_count *c;
};

static void count_one(const struct gr_tensor *t, void *vctx)
{
  struct count_ctx *x = vctx;
  uint64_t one = t->rows * t->cols, all = one * t->count;
  x->c->total += all;
  x->c->active += t->expert ? one * (uint64_t)x->m->experts_per_tok : all;
  if (t->cls == GR_T_EMBED)
    x->c->embedding += all;
  if (t->layer == 0)
    x->c->per_layer += all;
  /* DeepSpeed counts modules: a Linear with its bias, one expert at a time */
  uint64_t module = one;
  if (t->cls == GR_T_ATTN_Q || t->cls == GR_T_ATTN_K || t->cls == GR_T_ATTN_V)
    module += x->m->qkv_bias ? t->rows : 0;
  if (t->cls != GR_T_BIAS && t->cls != GR_T_NORM && module > x->c->largest_module)
    x->c->largest_module = module;
}

void gr_model_count(const struct gr_model *m, struct gr_param_count *c)
{
  memset(c, 0, sizeof(*c));
  struct count_ctx x = {m, c};
  gr_model_tensors(m, count_one, &x);
}

double gr_model_kv_bytes_per_token(const struct gr_model *m, double elem_bytes)
{
  if (!m->shape_known)
    return 0;
  if (m->kv_lora_rank > 0) /* MLA caches the compressed latent and the shared rope key (vLLM, llama.cpp) */
    return (double)m->layers * (double)(m->kv_lora_rank + m->qk_rope_dim) * elem_bytes;
  return 2.0 * (double)m->layers * (double)m->kv_heads * (double)m->head_dim * elem_bytes;
}

long gr_model_windowed_layers(const struct gr_model *m, enum gr_swa swa)
{
  if (m->sliding_window <= 0 || swa == GR_SWA_NONE || (swa == GR_SWA_INTERLEAVED && m->swa_pattern == 0))
    return 0;
  return m->swa_pattern > 0 ? m->layers - m->layers / m->swa_pattern : m->layers;
}

double gr_model_kv_bytes(const struct gr_model *m, double elem_bytes, long ctx, enum gr_swa swa)
{
  if (!m->shape_known || m->layers <= 0)
    return 0;
  long local = gr_model_windowed_layers(m, swa), window = m->sliding_window < ctx ? m->sliding_window : ctx;
  double per_layer_token = gr_model_kv_bytes_per_token(m, elem_bytes) / (double)m->layers;
  return per_layer_token * ((double)local * (double)window + (double)(m->layers - local) * (double)ctx);
}

/* ---- built-in models ---- */

/* A model of data/models.tsv: its shape was parsed and checked at load. */
static void builtin_row(const struct gr_models_row *row, struct gr_model *m)
{
  m->norms_per_layer = 2;
  m->layers = row->layers;
  m->hidden = row->hidden;
  m->intermediate = row->intermediate;
  m->heads = row->heads;
  m->kv_heads = row->kv_heads;
  m->head_dim = row->head_dim;
  m->vocab = row->vocab;
  m->experts = row->experts;
  m->experts_per_tok = row->experts_per_tok;
  m->max_ctx = row->max_ctx;
  m->sliding_window = row->sliding_window;
  m->tied = row->tied;
  m->qkv_bias = row->qkv_bias;
  m->moe_intermediate = m->intermediate;
  m->shape_known = true;
  m->name = xstrdup(row->name);
  m->model_type = xstrdup(row->model_type);
  gr_model_type_traits(m);
  m->source = xasprintf("data/models.tsv: %s", row->source);
}

/* A diffusion pipeline of data/diffusion.tsv: 1 found, 0 not one, -1 err. */
static int diffusion_builtin(const char *name, struct gr_model *m, struct gr_err *err)
{
  struct gr_diffusion d;
  int rc = gr_diffusion_builtin(name, &d, err);
  if (rc <= 0)
    return rc;
  m->kind = GR_MODEL_DIFFUSION;
  m->diffusion = xmalloc(sizeof(d));
  *m->diffusion = d;
  m->name = xstrdup(d.name);
  m->source = xstrdup(d.source);
  return 1;
}

void gr_model_each_builtin(void (*fn)(void *ctx, const char *name), void *ctx)
{
  const struct gr_models_rows *t = gr_models_rows();
  for (size_t r = 0; r < t->n; r++)
    fn(ctx, t->v[r].name);
  gr_diffusion_each(fn, ctx);
}

static void offer(void *suggest, const char *name)
{
  gr_suggest_offer(suggest, name);
}

int gr_model_builtin(const char *name, struct gr_model *m, struct gr_err *err)
{
  memset(m, 0, sizeof(*m));
  int dm = diffusion_builtin(name, m, err);
  if (dm != 0)
    return dm < 0 ? -1 : 0;
  const struct gr_models_rows *t = gr_models_rows();
  for (size_t r = 0; r < t->n; r++)
    if (gr_name_loose_eq(t->v[r].name, name)) { /* llama_2_7b, Llama-2-7B */
      builtin_row(&t->v[r], m);
      return 0;
    }
  /* other diffusion models are asked for by name: say which ones gpurig
   * plans rather than that the name is unknown */
  static const char *const diffusion[] = {"sd", "stable-diffusion", "flux", "unet"};
  char names[1024];
  gr_diffusion_names(names, sizeof(names));
  for (size_t i = 0; i < sizeof(diffusion) / sizeof(diffusion[0]); i++)
    if (strncasecmp(name, diffusion[i], strlen(diffusion[i])) == 0)
      return gr_fail(err, GR_EXIT_FAIL, "%s: not a diffusion model gpurig plans (built-in: %s)", name, names);
  struct gr_suggest s;
  gr_suggest_init(&s, name);
  gr_model_each_builtin(offer, &s);
  if (gr_suggest_best(&s))
    return gr_fail(err, GR_EXIT_FAIL, "--model %s: not a built-in model; did you mean '%s'? (or give a config.json path)",
                   name, gr_suggest_best(&s));
  gr_model_builtin_names(names, sizeof(names));
  return gr_fail(err, GR_EXIT_FAIL, "--model %s: not a built-in model (built-in: %s; or give a config.json path)", name,
                 names);
}

void gr_model_builtin_names(char *buf, size_t cap)
{
  size_t off = 0;
  buf[0] = '\0';
  const struct gr_models_rows *t = gr_models_rows();
  for (size_t r = 0; r < t->n && off < cap; r++)
    off += (size_t)snprintf(buf + off, cap - off, "%s%s", r ? ", " : "", t->v[r].name);
  if (off + 2 < cap) { /* then the diffusion pipelines */
    buf[off++] = ',';
    buf[off++] = ' ';
    gr_diffusion_names(buf + off, cap - off);
  }
}

/* ---- --params ---- */

bool gr_parse_param_count(const char *s, double *out)
{
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (end == s || errno || !isfinite(v) || v <= 0)
    return false;
  double mult = 1;
  switch (toupper((unsigned char)*end)) {
  case 'K': mult = 1e3; end++; break;
  case 'M': mult = 1e6; end++; break;
  case 'B': case 'G': mult = 1e9; end++; break;
  case 'T': mult = 1e12; end++; break;
  default: break;
  }
  if (*end)
    return false;
  v *= mult;
  if (v < 1 || v > 1e15)
    return false;
  *out = v;
  return true;
}

void gr_model_from_params(double params, struct gr_model *m)
{
  memset(m, 0, sizeof(*m));
  m->params_given = params;
  if (params >= 1e9)
    m->name = xasprintf("%gB parameters", params / 1e9);
  else
    m->name = xasprintf("%.0f parameters", params);
  m->source = xstrdup("--params (no architecture: weights and model states only)");
}

void gr_model_free(struct gr_model *m)
{
  if (!m)
    return;
  free(m->name);
  free(m->source);
  free(m->model_type);
  free(m->quant_hint);
  free(m->diffusion);
  memset(m, 0, sizeof(*m));
}
