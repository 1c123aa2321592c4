/* Hugging Face config.json: the fields that fix a decoder's shape. jansson
 * parses; this file finds the line of a key for the error message, since a
 * parsed JSON value no longer knows where it was. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "facts/data.h"
#include "base/file.h"
#include "plan/llm.h"

struct cfg {
  const char *name, *text;
  size_t len;
  size_t region;   /* where to look for keys: the start of text_config when the model nests its LM there */
  json_t *obj;
  struct gr_err *err;
};

/* The line of the first `"key"` followed by ':' at or after cfg->region; 1 if none. */
static size_t key_line(const struct cfg *c, const char *key)
{
  size_t klen = strlen(key), line = 1;
  for (size_t i = 0; i < c->region && i < c->len; i++)
    line += c->text[i] == '\n';
  for (size_t i = c->region; i + klen + 2 <= c->len; i++) {
    if (c->text[i] == '\n')
      line++;
    if (c->text[i] != '"' || memcmp(c->text + i + 1, key, klen) != 0 || c->text[i + 1 + klen] != '"')
      continue;
    size_t j = i + klen + 2;
    while (j < c->len && (c->text[j] == ' ' || c->text[j] == '\t' || c->text[j] == '\r' || c->text[j] == '\n'))
      j++;
    if (j < c->len && c->text[j] == ':')
      return line;
  }
  return 1;
}

static int key_fail(const struct cfg *c, const char *key, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int key_fail(const struct cfg *c, const char *key, const char *fmt, ...)
{
  char what[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof(what), fmt, ap);
  va_end(ap);
  return gr_fail(c->err, GR_EXIT_FAIL, "%s:%zu: key \"%s\": %s", c->name, key_line(c, key), key, what);
}

/* What a JSON value is, for "must be X, not Y" messages. */
static const char *json_kind(const json_t *v)
{
  return json_is_real(v) ? "a fraction" : json_is_string(v) ? "a string" : json_is_boolean(v) ? "true/false"
         : json_is_integer(v) ? "a number" : json_is_null(v) ? "null" : "a list or object";
}

/* An integer field: absent gives `dflt` (or an error when required); null
 * counts as absent (head_dim: null in some configs). */
static int get_long(const struct cfg *c, const char *key, bool required, long dflt, long min, long max, long *out)
{
  json_t *v = json_object_get(c->obj, key);
  if (!v || json_is_null(v)) {
    if (required)
      return gr_fail(c->err, GR_EXIT_FAIL, "%s:%zu: key \"%s\": missing (needed to count the model's parameters)",
                     c->name, c->region ? key_line(c, "text_config") : (size_t)1, key);
    *out = dflt;
    return 0;
  }
  if (!json_is_integer(v))
    return key_fail(c, key, "must be an integer, not %s", json_kind(v));
  json_int_t n = json_integer_value(v);
  if (n < min || n > max)
    return key_fail(c, key, "%lld is out of range (%ld to %ld)", (long long)n, min, max);
  *out = (long)n;
  return 0;
}

static int get_bool(const struct cfg *c, const char *key, bool dflt, bool *out)
{
  json_t *v = json_object_get(c->obj, key);
  if (!v || json_is_null(v)) {
    *out = dflt;
    return 0;
  }
  if (!json_is_boolean(v))
    return key_fail(c, key, "must be true or false");
  *out = json_is_true(v);
  return 0;
}

/* GPTQ and AWQ: bits (default 4) and group_size (default 128, -1 one group
 * per row). gpurig plans 4-bit only (quant.c); 2, 3 and 8 bits are valid
 * checkpoints that it cannot size, so they become a hint no --quant name
 * matches (refused in request.c unless --quant is given). A group of -1 is
 * planned as groups of 4096: the scale per row then costs 20 bits per row
 * instead of 20 per 4096 weights, within 0.1% of the weights' size. */
static int gptq_hint(const struct cfg *c, json_t *q, const char *method, struct gr_model *m)
{
  json_t *bits = json_object_get(q, "bits"), *group = json_object_get(q, "group_size");
  json_int_t b = 4, g = 128;
  if (bits && !json_is_integer(bits))
    return key_fail(c, "bits", "must be an integer (2, 3, 4 or 8), not %s", json_kind(bits));
  b = bits ? json_integer_value(bits) : b;
  if (b != 2 && b != 3 && b != 4 && b != 8)
    return key_fail(c, "bits", "%lld: %s checkpoints have 2, 3, 4 or 8 bits", (long long)b, method);
  if (group && !json_is_null(group) && !json_is_integer(group))
    return key_fail(c, "group_size", "must be an integer (-1, or 8 to 4096), not %s", json_kind(group));
  g = json_is_integer(group) ? json_integer_value(group) : g;
  if (g != -1 && (g < 8 || g > 4096))
    return key_fail(c, "group_size", "%lld: expected -1 (one group per row) or 8 to 4096", (long long)g);
  if (b != 4 && strcmp(method, "awq") == 0) /* AutoAWQ's kernels are 4-bit only */
    m->quant_hint = xasprintf("awq with %lld bits (AutoAWQ kernels are 4-bit only)", (long long)b);
  else if (b != 4)
    m->quant_hint = xasprintf("gptq%lld-g%lld", (long long)b, (long long)(g == -1 ? 4096 : g));
  else
    m->quant_hint = xasprintf("%s-g%lld", method, (long long)(g == -1 ? 4096 : g));
  return 0;
}

/* compressed-tensors (llm-compressor): the weights of its first config
 * group: 8-bit float (FP8 W8A8), 8-bit int (W8A8: int8 linear weights), or
 * 4-bit int in groups (W4A16: GPTQ-sized, a scale per group). */
static int compressed_hint(const struct cfg *c, json_t *q, struct gr_model *m)
{
  json_t *groups = json_object_get(q, "config_groups"), *w = NULL;
  const char *key;
  json_t *grp;
  if (json_is_object(groups))
    json_object_foreach(groups, key, grp) {
      w = json_object_get(grp, "weights");
      break;
    }
  json_t *nb = json_object_get(w, "num_bits"), *type = json_object_get(w, "type"), *gs = json_object_get(w, "group_size");
  if (!json_is_object(w) || !json_is_integer(nb) || !json_is_string(type))
    return key_fail(c, "config_groups", "compressed-tensors needs a group with weights num_bits and type");
  json_int_t bits = json_integer_value(nb), group = json_is_integer(gs) ? json_integer_value(gs) : 128;
  bool is_float = strcmp(json_string_value(type), "float") == 0;
  if (bits == 8)
    m->quant_hint = xstrdup(is_float ? "fp8" : "int8");
  else if (bits == 4 && !is_float && group >= 8 && group <= 4096)
    m->quant_hint = xasprintf("gptq-g%lld", (long long)group);
  else
    m->quant_hint = xasprintf("compressed-tensors %lld-bit %s", (long long)bits, is_float ? "float" : "int");
  return 0;
}

/* bitsandbytes: load_in_4bit (with double quantization or not), else 8-bit. */
static int bnb_hint(const struct cfg *c, json_t *q, struct gr_model *m)
{
  static const char *const flags[] = {"load_in_4bit", "load_in_8bit", "bnb_4bit_use_double_quant"};
  for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
    json_t *v = json_object_get(q, flags[i]);
    if (v && !json_is_boolean(v))
      return key_fail(c, flags[i], "must be true or false, not %s", json_kind(v));
  }
  m->quant_hint = xstrdup(json_is_true(json_object_get(q, "load_in_4bit"))
                              ? (json_is_true(json_object_get(q, "bnb_4bit_use_double_quant")) ? "nf4-dq" : "nf4")
                              : "int8");
  return 0;
}

/* The checkpoint's own quantization, as a --quant name: the default
 * --quant. A malformed quantization_config is an error naming the key; a
 * method gpurig does not plan is kept as its description, which no --quant
 * name matches, so that request.c refuses it unless --quant overrides it
 * (planning it as bf16 would be wrong by 2-4x). */
static int quant_hint(const struct cfg *c, struct gr_model *m)
{
  json_t *q = json_object_get(c->obj, "quantization_config");
  if (!q || json_is_null(q))
    return 0;
  if (!json_is_object(q))
    return key_fail(c, "quantization_config", "must be an object, not %s", json_kind(q));
  json_t *jm = json_object_get(q, "quant_method");
  if (!json_is_string(jm))
    return jm ? key_fail(c, "quant_method", "must be a string, not %s", json_kind(jm))
              : key_fail(c, "quantization_config", "has no \"quant_method\"");
  const char *method = json_string_value(jm);
  if (strcmp(method, "gptq") == 0 || strcmp(method, "awq") == 0)
    return gptq_hint(c, q, method, m);
  if (strcmp(method, "bitsandbytes") == 0)
    return bnb_hint(c, q, m);
  if (strcmp(method, "fp8") == 0) {
    /* DeepSeek-V3 style block scales: one fp32 per 128x128 block */
    json_t *blk = json_object_get(q, "weight_block_size");
    bool b128 = json_is_array(blk) && json_array_size(blk) == 2 && json_integer_value(json_array_get(blk, 0)) == 128 &&
                json_integer_value(json_array_get(blk, 1)) == 128;
    m->quant_hint = xstrdup(b128 ? "fp8-b128" : "fp8");
  } else if (strcmp(method, "fbgemm_fp8") == 0) {
    m->quant_hint = xstrdup("fp8"); /* per-channel fp8 weights: a scale per row, no block */
  } else if (strcmp(method, "compressed-tensors") == 0) {
    return compressed_hint(c, q, m);
  } else {
    m->quant_hint = xasprintf("quant_method \"%.40s\"", method);
  }
  return 0;
}

static int shape_fields(const struct cfg *c, struct gr_model *m)
{
  const long big = 10L * 1000 * 1000; /* keeps every product far from overflow */
  if (get_long(c, "num_hidden_layers", true, 0, 1, 10000, &m->layers) != 0 ||
      get_long(c, "hidden_size", true, 0, 1, big, &m->hidden) != 0 ||
      get_long(c, "intermediate_size", true, 0, 1, big, &m->intermediate) != 0 ||
      get_long(c, "num_attention_heads", true, 0, 1, 100000, &m->heads) != 0 ||
      get_long(c, "vocab_size", true, 0, 1, big, &m->vocab) != 0 ||
      get_long(c, "num_key_value_heads", false, m->heads, 1, m->heads, &m->kv_heads) != 0 ||
      get_long(c, "head_dim", false, 0, 1, 100000, &m->head_dim) != 0)
    return -1;
  if (m->heads > 4096 || m->head_dim > 8192)
    return key_fail(c, m->heads > 4096 ? "num_attention_heads" : "head_dim", "larger than any model gpurig plans for");
  if (m->heads % m->kv_heads != 0)
    return key_fail(c, "num_key_value_heads", "%ld does not divide num_attention_heads %ld", m->kv_heads, m->heads);
  if (m->head_dim == 0) {
    if (m->hidden % m->heads != 0)
      return key_fail(c, "num_attention_heads", "%ld does not divide hidden_size %ld (and head_dim is not given)",
                      m->heads, m->hidden);
    m->head_dim = m->hidden / m->heads;
  }
  return 0;
}

/* Shared experts, dense first layers and latent attention: DeepSeek-V2/V3
 * (n_shared_experts, first_k_dense_replace, moe_layer_freq, q_lora_rank,
 * kv_lora_rank, qk_rope_head_dim, qk_nope_head_dim, v_head_dim, topk_method)
 * and Qwen-MoE (shared_expert_intermediate_size, decoder_sparse_step). */
static int shared_fields(const struct cfg *c, struct gr_model *m)
{
  const long big = 10L * 1000 * 1000;
  long n_shared = 0, step = 1, freq = 1;
  if (get_long(c, "n_shared_experts", false, 0, 0, 1024, &n_shared) != 0 ||
      get_long(c, "shared_expert_intermediate_size", false, 0, 0, big, &m->shared_intermediate) != 0 ||
      get_long(c, "first_k_dense_replace", false, 0, 0, m->layers, &m->first_dense) != 0 ||
      get_long(c, "decoder_sparse_step", false, 1, 1, 1000, &step) != 0 ||
      get_long(c, "moe_layer_freq", false, 1, 1, 1000, &freq) != 0 ||
      get_long(c, "q_lora_rank", false, 0, 0, big, &m->q_lora_rank) != 0 ||
      get_long(c, "kv_lora_rank", false, 0, 0, big, &m->kv_lora_rank) != 0 ||
      get_long(c, "qk_rope_head_dim", false, 0, 0, 100000, &m->qk_rope_dim) != 0 ||
      get_long(c, "qk_nope_head_dim", false, 0, 0, 100000, &m->qk_nope_dim) != 0 ||
      get_long(c, "v_head_dim", false, 0, 0, 100000, &m->v_head_dim) != 0)
    return -1;
  if (step != 1 || freq != 1) /* every model here has a MoE MLP in every layer past the dense ones */
    return key_fail(c, step != 1 ? "decoder_sparse_step" : "moe_layer_freq", "MoE layers at a stride other than 1 are "
                    "not counted by gpurig; give --params instead");
  if (n_shared > 0)
    m->shared_intermediate = n_shared * m->moe_intermediate;
  m->shared_gate = json_object_get(c->obj, "shared_expert_intermediate_size") != NULL;
  json_t *topk = json_object_get(c->obj, "topk_method");
  m->router_bias = json_is_string(topk) && strcmp(json_string_value(topk), "noaux_tc") == 0;
  if (m->kv_lora_rank > 0 && (m->qk_rope_dim <= 0 || m->qk_nope_dim <= 0 || m->v_head_dim <= 0))
    return key_fail(c, "kv_lora_rank", "latent attention needs qk_rope_head_dim, qk_nope_head_dim and v_head_dim");
  return 0;
}

static int moe_fields(const struct cfg *c, struct gr_model *m)
{
  const char *key = json_object_get(c->obj, "num_local_experts") ? "num_local_experts"
                    : json_object_get(c->obj, "num_experts")      ? "num_experts"
                                                                  : "n_routed_experts";
  if (get_long(c, key, false, 0, 0, 100000, &m->experts) != 0 ||
      get_long(c, "num_experts_per_tok", m->experts > 0, 0, 0, m->experts, &m->experts_per_tok) != 0 ||
      get_long(c, "moe_intermediate_size", false, m->intermediate, 1, 10L * 1000 * 1000, &m->moe_intermediate) != 0)
    return -1;
  /* keeps every count below 2^64: no model comes near 1e15 parameters */
  double attn = (double)m->hidden * (double)m->head_dim * (double)(2 * m->heads + 2 * m->kv_heads);
  double mlp = 3.0 * (double)m->hidden * (double)m->moe_intermediate * (double)(m->experts > 0 ? m->experts : 1);
  if ((double)m->layers * (attn + mlp) + 2.0 * (double)m->vocab * (double)m->hidden > 1e15)
    return key_fail(c, "num_hidden_layers", "the shape adds up to more than 1e15 parameters");
  if (m->experts > 0 && m->experts_per_tok < 1)
    return key_fail(c, "num_experts_per_tok", "must be at least 1 for a mixture-of-experts model");
  return shared_fields(c, m);
}

static int context_fields(const struct cfg *c, struct gr_model *m)
{
  if (get_long(c, "max_position_embeddings", false, 0, 1, 1L << 30, &m->max_ctx) != 0)
    return -1;
  json_t *use = json_object_get(c->obj, "use_sliding_window");
  if (use && json_is_false(use))
    return 0; /* Qwen2 lists a window it does not use */
  return get_long(c, "sliding_window", false, 0, 1, 1L << 30, &m->sliding_window);
}

int gr_model_parse_config(const char *name, const char *text, size_t len, struct gr_model *m, struct gr_err *err)
{
  json_error_t je;
  int rc = -1;
  memset(m, 0, sizeof(*m));
  json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
  struct cfg c = {.name = name, .text = text, .len = len, .obj = root, .err = err};
  if (!root) {
    gr_fail(err, GR_EXIT_FAIL, "%s:%d:%d: not valid JSON: %s", name, je.line, je.column, je.text);
    goto out;
  }
  if (!json_is_object(root)) {
    gr_fail(err, GR_EXIT_FAIL, "%s:1: a config.json is one JSON object", name);
    goto out;
  }
  json_t *text_config = json_object_get(root, "text_config");
  if (json_is_object(text_config) && !json_object_get(root, "hidden_size")) {
    c.obj = text_config; /* multimodal models nest the language model */
    c.region = 0;
    const char *p = memmem(text, len, "\"text_config\"", 13);
    c.region = p && (size_t)(p - text) < len ? (size_t)(p - text) : 0;
  }
  json_t *type = json_object_get(c.obj, "model_type");
  if (type && !json_is_string(type)) {
    key_fail(&c, "model_type", "must be a string");
    goto out;
  }
  m->model_type = xstrdup(type ? json_string_value(type) : "unknown");
  /* transformers: PretrainedConfig ties by default, Llama-family configs do not */
  if (shape_fields(&c, m) != 0 || moe_fields(&c, m) != 0 || context_fields(&c, m) != 0 ||
      get_bool(&c, "tie_word_embeddings",
               !gr_model_type_llama_like(m->model_type) || strncmp(m->model_type, "gemma", 5) == 0, &m->tied) != 0)
    goto out;
  if (m->experts == 0)
    m->moe_intermediate = m->intermediate;
  m->norms_per_layer = 2;
  gr_model_type_traits(m);
  m->qkv_bias = strncmp(m->model_type, "qwen2", 5) == 0;
  json_t *bias = json_object_get(c.obj, "attention_bias");
  if (json_is_boolean(bias))
    m->qkv_bias = json_is_true(bias);
  if (quant_hint(&c, m) != 0)
    goto out;
  m->shape_known = true;
  m->name = xstrdup(name);
  m->source = xasprintf("%s (model_type %s)", name, m->model_type);
  rc = 0;
out:
  json_decref(root);
  if (rc != 0)
    gr_model_free(m);
  return rc;
}

/* A config.json is a few KB; safetensors indexes run to a few MB. */
#define CONFIG_MAX_BYTES (16u << 20)

int gr_model_load_config(const char *path, struct gr_model *m, struct gr_err *err)
{
  struct gr_file f;
  int rc = -1;
  memset(m, 0, sizeof(*m));
  if (gr_file_read(path, CONFIG_MAX_BYTES, GR_FILE_STDIN, &f, err) != 0)
    return -1;
  rc = gr_model_parse_config(f.from_stdin ? "standard input" : path, f.data, f.len, m, err);
  gr_file_free(&f);
  return rc;
}
