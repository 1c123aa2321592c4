#include "plan/quant.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "facts/facts.h"

/* The row of data/quant.tsv with this name, or NULL. */
static const struct gr_quant_row *row_of(const char *name)
{
  const struct gr_quant_rows *t = gr_quant_rows();
  for (size_t r = 0; r < t->n; r++)
    if (strcmp(t->v[r].name, name) == 0)
      return &t->v[r];
  return NULL;
}

double gr_quant_bits(const char *name)
{
  const struct gr_quant_row *r = row_of(name);
  if (!r)
    return 0;
  if (strcmp(r->kind, "gguf") == 0)
    return gr_quant_bits(r->base);
  if (r->block_weights <= 0 || r->block_bytes <= 0) /* "-": no block layout */
    return 0;
  return 8.0 * (double)r->block_bytes / (double)r->block_weights;
}

static void known_names(char *buf, size_t cap)
{
  size_t off = 0;
  buf[0] = '\0';
  const struct gr_quant_rows *t = gr_quant_rows();
  for (size_t r = 0; r < t->n && off < cap; r++)
    if (strncmp(t->v[r].name, "ggml:", 5) != 0)
      off += (size_t)snprintf(buf + off, cap - off, "%s%s", off ? ", " : "", t->v[r].name);
  if (off < cap)
    snprintf(buf + off, cap - off, ", gptq-gN, gptq8[-gN] (also 2 and 3 bits), awq-gN, ggml:TYPE");
}

static enum gr_quant_kind kind_of(const char *k)
{
  return strcmp(k, "float") == 0 ? GR_Q_FLOAT : strcmp(k, "ggml") == 0 ? GR_Q_GGML : strcmp(k, "gguf") == 0 ? GR_Q_GGUF
         : strcmp(k, "gptq") == 0 ? GR_Q_GPTQ : strcmp(k, "awq") == 0 ? GR_Q_AWQ : GR_Q_BNB;
}

int gr_quant_parse(const char *s, struct gr_quant *q, struct gr_err *err)
{
  memset(q, 0, sizeof(*q));
  size_t n = strlen(s);
  if (n == 0 || n >= sizeof(q->name))
    goto unknown;
  for (size_t i = 0; i <= n; i++)
    q->name[i] = (char)tolower((unsigned char)s[i]);
  char lookup[40];
  snprintf(lookup, sizeof(lookup), "%s", q->name);
  long group = 0, gptq_bits = 4;
  /* gptqB[-gN]: GPTQ at 2, 3, 4 or 8 bits (its quantization_config bits) */
  if (strncmp(lookup, "gptq", 4) == 0 && lookup[4] >= '2' && lookup[4] <= '8') {
    gptq_bits = lookup[4] - '0';
    if (gptq_bits != 2 && gptq_bits != 3 && gptq_bits != 4 && gptq_bits != 8)
      goto unknown;
    memmove(lookup + 4, lookup + 5, strlen(lookup + 5) + 1);
  }
  char *g = strstr(lookup, "-g");
  if (g && (strncmp(lookup, "gptq", 4) == 0 || strncmp(lookup, "awq", 3) == 0)) {
    if (!parse_long(g + 2, 10, &group) || group < 8 || group > 4096)
      goto unknown;
    *g = '\0';
  }
  const struct gr_quant_row *r = row_of(lookup);
  if (!r)
    goto unknown;
  q->kind = kind_of(r->kind);
  q->bits = gr_quant_bits(lookup);
  snprintf(q->base, sizeof(q->base), "%s", r->base);
  if (q->kind == GR_Q_GPTQ || q->kind == GR_Q_AWQ) {
    q->group = group ? (int)group : 128;
    /* an fp16 scale and a zero point of the weights' width per group */
    q->bits = (double)gptq_bits + (16.0 + (double)gptq_bits) / q->group;
  }
  if (q->bits <= 0)
    goto unknown;
  return 0;
unknown:;
  char names[1024];
  known_names(names, sizeof(names));
  return gr_fail(err, GR_EXIT_FAIL, "unknown quantization '%s' (known: %s)", s, names);
}

/* llama.cpp's use_more_bits(): the first and last eighth of the layers and
 * every third one between them get the larger type. */
static bool use_more_bits(long i, long n)
{
  return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2;
}

/* K-quants need rows that are a multiple of 256; llama.cpp falls back. */
static const char *row_fallback(const char *type, uint64_t cols)
{
  if (cols % 256 == 0 || strstr(type, "_k") == NULL)
    return type;
  if (strcmp(type, "ggml:q4_k") == 0)
    return "ggml:q5_0";
  if (strcmp(type, "ggml:q5_k") == 0)
    return "ggml:q5_1";
  if (strcmp(type, "ggml:q6_k") == 0)
    return "ggml:q8_0";
  return "ggml:iq4_nl";
}

static const char *gguf_rule(const char *ft, const char *base, const struct gr_model *m, const struct gr_tensor *t)
{
  bool moe8 = m->experts == 8, k_m = strcmp(ft, "q4_k_m") == 0 || strcmp(ft, "q5_k_m") == 0;
  const char *type = base;
  switch (t->cls) {
  case GR_T_OUTPUT:
    return strcmp(base, "ggml:q8_0") == 0 ? base : "ggml:q6_k";
  case GR_T_EMBED:
    return m->tied && strcmp(base, "ggml:q8_0") != 0 ? "ggml:q6_k" : base;
  case GR_T_ATTN_V:
    if (k_m && use_more_bits(t->layer, m->layers))
      type = "ggml:q6_k";
    else if (strcmp(ft, "q4_k_s") == 0 && t->layer < 4)
      type = "ggml:q5_k";
    if (m->layers == 80 && strcmp(type, "ggml:q4_k") == 0) /* llama.cpp's LLM_TYPE_70B */
      type = "ggml:q5_k";
    return moe8 ? "ggml:q8_0" : type;
  case GR_T_ATTN_K:
    return moe8 ? "ggml:q8_0" : type;
  case GR_T_ATTN_O:
    return moe8 && (strcmp(ft, "q4_k_s") == 0 || strcmp(ft, "q4_k_m") == 0) ? "ggml:q5_k" : type;
  case GR_T_FFN_DOWN:
    if (k_m && use_more_bits(t->layer, m->layers))
      return "ggml:q6_k";
    if (strcmp(ft, "q4_k_s") == 0 && t->layer < m->layers / 8)
      return "ggml:q5_k";
    return type;
  default:
    return type;
  }
}

const char *gr_quant_gguf_type(const struct gr_quant *q, const struct gr_model *m, const struct gr_tensor *t)
{
  if (t->cls == GR_T_NORM || t->cls == GR_T_BIAS || t->cls == GR_T_ROUTER)
    return "ggml:f32"; /* 1-D tensors and the router stay f32 in llama.cpp files */
  const char *type = q->kind == GR_Q_GGUF ? gguf_rule(q->name, q->base, m, t) : q->name;
  return row_fallback(type, t->cols);
}

static bool is_linear_in_layer(const struct gr_tensor *t)
{
  return t->cls >= GR_T_ATTN_Q && t->cls <= GR_T_FFN_DOWN;
}

double gr_quant_tensor_bytes(const struct gr_quant *q, const struct gr_model *m, const struct gr_tensor *t)
{
  double n = (double)t->rows * (double)t->cols * (double)t->count, bits;
  switch (q->kind) {
  case GR_Q_GGML:
  case GR_Q_GGUF:
    bits = gr_quant_bits(gr_quant_gguf_type(q, m, t));
    break;
  case GR_Q_GPTQ:
  case GR_Q_AWQ:
  case GR_Q_BNB:
    /* only the decoder's linear layers are quantized; the rest stays 16-bit */
    bits = is_linear_in_layer(t) || t->cls == GR_T_ALL ? q->bits : 16;
    break;
  default:
    /* FP8 checkpoints quantize the decoder's linear layers only: the
     * embeddings, the head, the norms and the router stay bf16 */
    bits = q->bits < 9 && (!is_linear_in_layer(t) && t->cls != GR_T_ALL) ? 16 : q->bits;
  }
  return n * bits / 8.0;
}

struct bytes_ctx {
  const struct gr_quant *q;
  const struct gr_model *m;
  struct gr_weight_bytes *w;
};

static void add_bytes(const struct gr_tensor *t, void *vctx)
{
  struct bytes_ctx *x = vctx;
  double b = gr_quant_tensor_bytes(x->q, x->m, t);
  x->w->total += b;
  if (t->layer >= 0)
    x->w->layers += b;
  if (t->cls == GR_T_EMBED) {
    x->w->embed += b;
    x->w->per_token += b / (double)t->rows; /* one row per token */
  } else if (t->cls == GR_T_OUTPUT) {
    x->w->output += b;
    x->w->per_token += b;
  } else {
    x->w->per_token += t->expert ? b * (double)x->m->experts_per_tok / (double)t->count : b;
  }
  if (t->expert)
    x->w->experts += b;
}

static void model_bytes(const struct gr_quant *q, const struct gr_model *m, struct gr_weight_bytes *w)
{
  memset(w, 0, sizeof(*w));
  struct bytes_ctx x = {q, m, w};
  gr_model_tensors(m, add_bytes, &x);
  if (m->shape_known && m->tied)
    w->per_token += w->embed - w->embed / (double)m->vocab; /* the tied head reads the whole matrix */
}

/* The bytes depend on the format and the model's numbers only, and compare
 * asks for the same ones for every rig (36 walks of llama-2-70b's tensors,
 * 69% of `compare --job infer`). The last few answers are kept, keyed by the
 * bytes of the quant and of the model with its pointers (names, the
 * diffusion pipeline, none of which the walk reads) cleared: equal bytes are
 * equal inputs; unequal padding only costs a recomputation. */
#define BYTES_MEMO 4
static struct {
  bool used;
  struct gr_quant q;
  struct gr_model m;
  struct gr_weight_bytes w;
} memo[BYTES_MEMO];
static size_t memo_next;

static void memo_key(const struct gr_model *m, struct gr_model *k)
{
  memcpy(k, m, sizeof(*k));
  k->diffusion = NULL;
  k->name = k->source = k->model_type = k->quant_hint = NULL;
}

void gr_quant_model_bytes(const struct gr_quant *q, const struct gr_model *m, struct gr_weight_bytes *w)
{
  struct gr_model k;
  memo_key(m, &k);
  for (size_t i = 0; i < BYTES_MEMO; i++)
    if (memo[i].used && memcmp(&memo[i].q, q, sizeof(*q)) == 0 && memcmp(&memo[i].m, &k, sizeof(k)) == 0) {
      *w = memo[i].w;
      return;
    }
  model_bytes(q, m, w);
  size_t i = memo_next++ % BYTES_MEMO;
  memo[i].used = true;
  memcpy(&memo[i].q, q, sizeof(*q));
  memcpy(&memo[i].m, &k, sizeof(k));
  memo[i].w = *w;
}
