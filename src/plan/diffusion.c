/* Diffusion models: shapes from data/diffusion.tsv, exact counts, training
 * memory; see diffusion.h and docs/plan.md "Diffusion models". */
#include "plan/diffusion.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/suggest.h"
#include "facts/facts.h"

#define GIB 1073741824.0

/* ---- data/diffusion.tsv ---- */

static const struct gr_diffusion_rows *rows(void)
{
  return gr_diffusion_rows();
}

static const struct gr_diffusion_row *row(size_t r)
{
  return &gr_diffusion_rows()->v[r];
}

/* Whether `name` is row r's name or one of its aliases. */
static bool row_named(size_t r, const char *name)
{
  if (gr_name_loose_eq(row(r)->name, name))
    return true;
  char buf[256];
  snprintf(buf, sizeof(buf), "%s", row(r)->aliases);
  for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
    if (gr_name_loose_eq(tok, name))
      return true;
  return false;
}

/* The value of `key` in a config cell ("k=v k=v"), copied into val; false when absent. */
static bool config_value(const char *config, const char *key, char *val, size_t cap)
{
  size_t klen = strlen(key);
  for (const char *p = config; *p;) {
    while (*p == ' ')
      p++;
    const char *end = p + strcspn(p, " ");
    if ((size_t)(end - p) > klen && strncmp(p, key, klen) == 0 && p[klen] == '=') {
      snprintf(val, cap, "%.*s", (int)(end - p - (ptrdiff_t)klen - 1), p + klen + 1);
      return true;
    }
    p = end;
  }
  return false;
}

/* A config key as up to GR_DM_LEVELS whole numbers >= min ("320,640,1280" or
 * "2"); *n their count. Absent and optional: *n = 0. */
static int config_longs(size_t r, const char *key, bool optional, long min, long *out, int *n, struct gr_err *err)
{
  char val[256];
  *n = 0;
  if (!config_value(row(r)->config, key, val, sizeof(val))) {
    if (optional)
      return 0;
    return gr_fail(err, GR_EXIT_CANNOT_RUN, "%s:%zu: key %s: missing", rows()->file, row(r)->line, key);
  }
  for (char *save = NULL, *tok = strtok_r(val, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    if (*n >= GR_DM_LEVELS || !parse_long(tok, 10, &out[*n]) || out[*n] < min || out[*n] > 1000000)
      return gr_fail(err, GR_EXIT_CANNOT_RUN, "%s:%zu: key %s: expected at most %d whole numbers from %ld to 1000000",
                     rows()->file, row(r)->line, key, GR_DM_LEVELS, min);
    (*n)++;
  }
  if (*n == 0)
    return gr_fail(err, GR_EXIT_CANNOT_RUN, "%s:%zu: key %s: no value", rows()->file, row(r)->line, key);
  return 0;
}

/* One number. */
static int config_long(size_t r, const char *key, bool optional, long min, long *out, struct gr_err *err)
{
  long v[GR_DM_LEVELS];
  int n;
  *out = 0;
  if (config_longs(r, key, optional, min, v, &n, err) != 0)
    return -1;
  if (n > 1)
    return gr_fail(err, GR_EXIT_CANNOT_RUN, "%s:%zu: key %s: expected one number", rows()->file, row(r)->line, key);
  if (n == 1)
    *out = v[0];
  return 0;
}

/* down_block_types: which levels have cross-attention. */
static int unet_block_types(size_t r, struct gr_unet_shape *u, struct gr_err *err)
{
  char val[512];
  int n = 0;
  if (!config_value(row(r)->config, "down_block_types", val, sizeof(val)))
    return gr_fail(err, GR_EXIT_CANNOT_RUN, "%s:%zu: key down_block_types: missing", rows()->file, row(r)->line);
  for (char *save = NULL, *tok = strtok_r(val, ",", &save); tok; tok = strtok_r(NULL, ",", &save), n++) {
    bool cross = strcmp(tok, "CrossAttnDownBlock2D") == 0;
    if ((!cross && strcmp(tok, "DownBlock2D") != 0) || n >= GR_DM_LEVELS)
      return gr_fail(err, GR_EXIT_CANNOT_RUN, "%s:%zu: key down_block_types: '%.60s' is not CrossAttnDownBlock2D or "
                     "DownBlock2D", rows()->file, row(r)->line, tok);
    u->cross[n] = cross;
  }
  if (n != u->levels)
    return gr_fail(err, GR_EXIT_CANNOT_RUN, "%s:%zu: key down_block_types: %d types for %d block_out_channels",
                   rows()->file, row(r)->line, n, u->levels);
  return 0;
}

static int unet_row(size_t r, struct gr_unet_shape *u, struct gr_err *err)
{
  long tl[GR_DM_LEVELS];
  int nt;
  if (config_longs(r, "block_out_channels", false, 1, u->ch, &u->levels, err) != 0 ||
      config_long(r, "in_channels", false, 1, &u->in_ch, err) != 0 ||
      config_long(r, "out_channels", false, 1, &u->out_ch, err) != 0 ||
      config_long(r, "layers_per_block", false, 1, &u->layers_per_block, err) != 0 ||
      config_long(r, "cross_attention_dim", false, 1, &u->cross_dim, err) != 0 ||
      config_long(r, "sample_size", false, 8, &u->sample_size, err) != 0 ||
      config_long(r, "addition_time_embed_dim", true, 1, &u->add_time_dim, err) != 0 ||
      config_long(r, "projection_class_embeddings_input_dim", true, 1, &u->add_proj_dim, err) != 0 ||
      config_longs(r, "transformer_layers_per_block", false, 1, tl, &nt, err) != 0 || unet_block_types(r, u, err) != 0)
    return -1;
  if (nt != 1 && nt != u->levels)
    return gr_fail(err, GR_EXIT_CANNOT_RUN, "%s:%zu: key transformer_layers_per_block: one number or one per level",
                   rows()->file, row(r)->line);
  if (!u->add_time_dim != !u->add_proj_dim)
    return gr_fail(err, GR_EXIT_CANNOT_RUN, "%s:%zu: key addition_time_embed_dim: give it with "
                   "projection_class_embeddings_input_dim or neither", rows()->file, row(r)->line);
  for (int i = 0; i < u->levels; i++)
    u->tlayers[i] = nt == 1 ? tl[0] : tl[i];
  return 0;
}

static int clip_row(size_t r, bool projection, struct gr_clip_shape *c, struct gr_err *err)
{
  if (config_long(r, "hidden_size", false, 1, &c->hidden, err) != 0 ||
      config_long(r, "intermediate_size", false, 1, &c->inter, err) != 0 ||
      config_long(r, "num_hidden_layers", false, 1, &c->layers, err) != 0 ||
      config_long(r, "vocab_size", false, 1, &c->vocab, err) != 0 ||
      config_long(r, "max_position_embeddings", false, 1, &c->positions, err) != 0 ||
      config_long(r, "projection_dim", !projection, 1, &c->proj, err) != 0)
    return -1;
  return 0;
}

static int vae_row(size_t r, struct gr_vae_shape *v, struct gr_err *err)
{
  if (config_longs(r, "block_out_channels", false, 1, v->ch, &v->levels, err) != 0 ||
      config_long(r, "in_channels", false, 1, &v->in_ch, err) != 0 ||
      config_long(r, "latent_channels", false, 1, &v->latent, err) != 0 ||
      config_long(r, "layers_per_block", false, 1, &v->layers_per_block, err) != 0)
    return -1;
  return 0;
}

/* One row into its part of d. */
static int part_row(size_t r, struct gr_diffusion *d, bool *have_unet, bool *have_vae, struct gr_err *err)
{
  const char *part = row(r)->part, *cls = row(r)->class;
  if (strcmp(part, "unet") == 0 && strcmp(cls, "UNet2DConditionModel") == 0) {
    *have_unet = true;
    snprintf(d->source, sizeof(d->source), "data/diffusion.tsv: %s", row(r)->source);
    return unet_row(r, &d->unet, err);
  }
  if (strcmp(part, "vae") == 0 && strcmp(cls, "AutoencoderKL") == 0) {
    *have_vae = true;
    return vae_row(r, &d->vae, err);
  }
  bool proj = strcmp(cls, "CLIPTextModelWithProjection") == 0;
  if (strncmp(part, "text_encoder", 12) == 0 && (proj || strcmp(cls, "CLIPTextModel") == 0) && d->ntext < 2)
    return clip_row(r, proj, &d->text[d->ntext++], err);
  return gr_fail(err, GR_EXIT_CANNOT_RUN, "%s:%zu: part %.40s of class %.60s: gpurig counts unet "
                 "(UNet2DConditionModel), text_encoder[_2] (CLIPTextModel[WithProjection], two at most) and vae "
                 "(AutoencoderKL)", rows()->file, row(r)->line, part, cls);
}

int gr_diffusion_builtin(const char *name, struct gr_diffusion *d, struct gr_err *err)
{
  bool found = false, unet = false, vae = false;
  const char *canon = NULL;
  memset(d, 0, sizeof(*d));
  for (size_t r = 0; r < rows()->n; r++) {
    if (!(canon ? strcmp(row(r)->name, canon) == 0 : row_named(r, name)))
      continue;
    canon = row(r)->name;
    found = true;
    if (part_row(r, d, &unet, &vae, err) != 0)
      return -1;
  }
  if (!found)
    return 0;
  snprintf(d->name, sizeof(d->name), "%s", canon);
  if (!unet || !vae || d->ntext == 0)
    return gr_fail(err, GR_EXIT_CANNOT_RUN, "%s: %s needs a unet, a vae and a text_encoder row", rows()->file, canon);
  return 1;
}

void gr_diffusion_each(void (*fn)(void *ctx, const char *name), void *ctx)
{
  for (size_t r = 0; r < rows()->n; r++)
    if (r == 0 || strcmp(row(r)->name, row(r - 1)->name) != 0) {
      fn(ctx, row(r)->name);
      char buf[256];
      snprintf(buf, sizeof(buf), "%s", row(r)->aliases);
      for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
        fn(ctx, tok);
    }
}

void gr_diffusion_names(char *buf, size_t cap)
{
  size_t off = 0;
  buf[0] = '\0';
  for (size_t r = 0; r < rows()->n && off < cap; r++)
    if (r == 0 || strcmp(row(r)->name, row(r - 1)->name) != 0) {
      char alias[64];
      snprintf(alias, sizeof(alias), "%s", row(r)->aliases);
      alias[strcspn(alias, ",")] = '\0';
      off += (size_t)snprintf(buf + off, cap - off, "%s%s (%s)", off ? ", " : "", row(r)->name, alias);
    }
}

/* ---- parameter counts (the module tree of diffusers and transformers) ---- */

static uint64_t conv(uint64_t in, uint64_t out, uint64_t k)
{
  return in * out * k * k + out;
}

static uint64_t linear(uint64_t in, uint64_t out, bool bias)
{
  return in * out + (bias ? out : 0);
}

/* GroupNorm and LayerNorm: a weight and a bias per channel. */
static uint64_t norm(uint64_t c)
{
  return 2 * c;
}

/* ResnetBlock2D; temb 0 for the VAE's (no time embedding). */
static uint64_t resnet(uint64_t in, uint64_t out, uint64_t temb)
{
  return norm(in) + conv(in, out, 3) + (temb ? linear(temb, out, true) : 0) + norm(out) + conv(out, out, 3) +
         (in != out ? conv(in, out, 1) : 0);
}

/* BasicTransformerBlock: self-attention, cross-attention over the text
 * states (dim x), GEGLU feed-forward of 4 d; q/k/v without bias. */
static uint64_t tblock(uint64_t d, uint64_t x)
{
  uint64_t attn1 = 3 * d * d + linear(d, d, true), attn2 = d * d + 2 * x * d + linear(d, d, true);
  return 3 * norm(d) + attn1 + attn2 + linear(d, 8 * d, true) + linear(4 * d, d, true);
}

/* Transformer2DModel: GroupNorm, proj_in and proj_out (a 1x1 conv or a
 * linear: the same count), n blocks. */
static uint64_t transformer(uint64_t c, uint64_t n, uint64_t x)
{
  return norm(c) + linear(c, c, true) + n * tblock(c, x) + linear(c, c, true);
}

/* The down path, the mid block and the up path in diffusers' order. */
static uint64_t unet_blocks(const struct gr_unet_shape *u, uint64_t temb)
{
  uint64_t n = 0, x = (uint64_t)u->cross_dim, lpb = (uint64_t)u->layers_per_block;
  int L = u->levels;
  for (int i = 0; i < L; i++) {
    uint64_t in = (uint64_t)u->ch[i > 0 ? i - 1 : 0], out = (uint64_t)u->ch[i];
    for (uint64_t j = 0; j < lpb; j++)
      n += resnet(j ? out : in, out, temb) + (u->cross[i] ? transformer(out, (uint64_t)u->tlayers[i], x) : 0);
    n += i < L - 1 ? conv(out, out, 3) : 0; /* Downsample2D */
  }
  uint64_t c = (uint64_t)u->ch[L - 1];
  n += 2 * resnet(c, c, temb) + transformer(c, (uint64_t)u->tlayers[L - 1], x);
  for (int i = 0; i < L; i++) {
    int lvl = L - 1 - i; /* the up path mirrors the down path */
    uint64_t out = (uint64_t)u->ch[lvl], prev = (uint64_t)u->ch[i > 0 ? lvl + 1 : lvl];
    uint64_t skip_in = (uint64_t)u->ch[lvl > 0 ? lvl - 1 : 0];
    for (uint64_t j = 0; j <= lpb; j++) /* one more resnet than down: it takes the skip of the level's input */
      n += resnet((j ? out : prev) + (j == lpb ? skip_in : out), out, temb) +
           (u->cross[lvl] ? transformer(out, (uint64_t)u->tlayers[lvl], x) : 0);
    n += i < L - 1 ? conv(out, out, 3) : 0; /* Upsample2D */
  }
  return n;
}

uint64_t gr_unet_params(const struct gr_unet_shape *u)
{
  uint64_t c0 = (uint64_t)u->ch[0], temb = 4 * c0;
  uint64_t n = conv((uint64_t)u->in_ch, c0, 3) + linear(c0, temb, true) + linear(temb, temb, true);
  if (u->add_proj_dim) /* SDXL: pooled text + size/crop ids through a second TimestepEmbedding */
    n += linear((uint64_t)u->add_proj_dim, temb, true) + linear(temb, temb, true);
  return n + unet_blocks(u, temb) + norm(c0) + conv(c0, (uint64_t)u->out_ch, 3);
}

uint64_t gr_clip_params(const struct gr_clip_shape *c)
{
  uint64_t h = (uint64_t)c->hidden, i = (uint64_t)c->inter;
  uint64_t layer = 2 * norm(h) + 4 * linear(h, h, true) + linear(h, i, true) + linear(i, h, true);
  return (uint64_t)(c->vocab + c->positions) * h + (uint64_t)c->layers * layer + norm(h) +
         (uint64_t)c->proj * h; /* text_projection has no bias */
}

/* The VAE's mid block: resnet, single-head attention with biases, resnet. */
static uint64_t vae_mid(uint64_t c)
{
  return 2 * resnet(c, c, 0) + norm(c) + 4 * linear(c, c, true);
}

uint64_t gr_vae_params(const struct gr_vae_shape *v)
{
  int L = v->levels;
  uint64_t c0 = (uint64_t)v->ch[0], cl = (uint64_t)v->ch[L - 1], lat = (uint64_t)v->latent, lpb = (uint64_t)v->layers_per_block;
  uint64_t enc = conv((uint64_t)v->in_ch, c0, 3) + vae_mid(cl) + norm(cl) + conv(cl, 2 * lat, 3);
  for (int i = 0; i < L; i++) {
    uint64_t in = (uint64_t)v->ch[i > 0 ? i - 1 : 0], out = (uint64_t)v->ch[i];
    for (uint64_t j = 0; j < lpb; j++)
      enc += resnet(j ? out : in, out, 0);
    enc += i < L - 1 ? conv(out, out, 3) : 0;
  }
  uint64_t dec = conv(lat, cl, 3) + vae_mid(cl) + norm(c0) + conv(c0, (uint64_t)v->in_ch, 3);
  for (int i = 0; i < L; i++) {
    uint64_t out = (uint64_t)v->ch[L - 1 - i], prev = (uint64_t)v->ch[i > 0 ? L - i : L - 1];
    for (uint64_t j = 0; j <= lpb; j++)
      dec += resnet(j ? out : prev, out, 0);
    dec += i < L - 1 ? conv(out, out, 3) : 0;
  }
  /* quant_conv (2 latent -> 2 latent) and post_quant_conv (latent -> latent), 1x1 */
  return enc + dec + conv(2 * lat, 2 * lat, 1) + conv(lat, lat, 1);
}

uint64_t gr_unet_lora_params(const struct gr_unet_shape *u, long rank)
{
  uint64_t r = (uint64_t)rank, x = (uint64_t)u->cross_dim, n = 0;
  int L = u->levels;
  for (int i = 0; i < L; i++) {
    if (!u->cross[i])
      continue;
    uint64_t d = (uint64_t)u->ch[i];
    /* blocks at this level: layers_per_block transformers down, one more up */
    uint64_t blocks = (uint64_t)(2 * u->layers_per_block + 1) * (uint64_t)u->tlayers[i];
    /* A (r x in) and B (out x r): attn1 q,k,v,out d->d; attn2 q,out d->d, k,v x->d */
    n += blocks * r * (8 * d + 4 * d + 2 * (x + d));
  }
  uint64_t c = (uint64_t)u->ch[L - 1];
  n += (uint64_t)u->tlayers[L - 1] * r * (12 * c + 2 * (x + c)); /* the mid block */
  return n;
}

/* ---- activations ---- */

/* What one module keeps for backward, per sample, in bytes (e: a bf16
 * activation, nb: a norm's output, which autocast leaves in fp32). */
struct act {
  double e, nb;
  double total, inputs, largest; /* all kept; the checkpointed modules' inputs; the largest module */
};

static void act_add(struct act *a, double module, double input)
{
  a->total += module;
  a->inputs += input;
  if (module > a->largest)
    a->largest = module;
}

/* ResnetBlock2D: GroupNorm input, its output (SiLU's input), the conv's
 * bf16 input, for each of the two halves. */
static void act_resnet(struct act *a, double in, double out, double hw)
{
  act_add(a, (in + out) * hw * (2 * a->e + a->nb), in * hw * a->e);
}

/* Transformer2DModel of n BasicTransformerBlocks over hw tokens of width c:
 * per block 28 s d elements (norm inputs and outputs 6, q k v and the SDPA
 * output 4, the cross-attention's q and output 2, GEGLU's 8d projection,
 * its GELU and product 16); the wrapper's GroupNorm and projections 3. */
static void act_transformer(struct act *a, double c, double n, double hw)
{
  double block = 28.0 * hw * c * a->e;
  for (long i = 0; i < (long)n; i++)
    act_add(a, block, hw * c * a->e);
  a->total += 3.0 * hw * c * a->e;
  a->inputs += 3.0 * hw * c * a->e; /* outside the checkpointed blocks */
}

double gr_unet_activation_bytes(const struct gr_unet_shape *u, long px, long b, bool ckpt, double norm_bytes)
{
  struct act a = {.e = 2.0, .nb = norm_bytes};
  int L = u->levels;
  double side = (double)px / 8.0, lpb = (double)u->layers_per_block;
  for (int i = 0; i < L; i++) {
    double hw = (side / (double)(1L << i)) * (side / (double)(1L << i)), out = (double)u->ch[i];
    double in = (double)u->ch[i > 0 ? i - 1 : 0];
    for (int j = 0; j < (int)lpb; j++) {
      act_resnet(&a, j ? out : in, out, hw);
      if (u->cross[i])
        act_transformer(&a, out, (double)u->tlayers[i], hw);
    }
    if (i < L - 1)
      act_add(&a, out * hw * a.e, out * hw * a.e); /* the downsampler's input */
  }
  double hwl = (side / (double)(1L << (L - 1))) * (side / (double)(1L << (L - 1))), cl = (double)u->ch[L - 1];
  act_resnet(&a, cl, cl, hwl);
  act_transformer(&a, cl, (double)u->tlayers[L - 1], hwl);
  act_resnet(&a, cl, cl, hwl);
  for (int i = 0; i < L; i++) {
    int lvl = L - 1 - i;
    double hw = (side / (double)(1L << lvl)) * (side / (double)(1L << lvl)), out = (double)u->ch[lvl];
    double prev = (double)u->ch[i > 0 ? lvl + 1 : lvl], skip_in = (double)u->ch[lvl > 0 ? lvl - 1 : 0];
    for (int j = 0; j <= (int)lpb; j++) {
      act_resnet(&a, (j ? out : prev) + (j == (int)lpb ? skip_in : out), out, hw);
      if (u->cross[lvl])
        act_transformer(&a, out, (double)u->tlayers[lvl], hw);
    }
    if (i < L - 1) /* the upsampler's conv reads the doubled map */
      act_add(&a, out * hw * 4 * a.e, out * hw * 4 * a.e);
  }
  double c0 = (double)u->ch[0], hw0 = side * side;
  act_add(&a, c0 * hw0 * (2 * a.e + a.nb), c0 * hw0 * (2 * a.e + a.nb)); /* conv_norm_out, SiLU, conv_out */
  double per = ckpt ? a.inputs + a.largest : a.total;
  return per * (double)b;
}

long gr_diffusion_px_step(const struct gr_diffusion *d)
{
  return 8L << (d->unet.levels - 1);
}

long gr_diffusion_native_px(const struct gr_diffusion *d)
{
  return d->unet.sample_size * 8;
}

/* ---- the plan ---- */

static void item(struct gr_plan_item *items, size_t *n, size_t cap, double *sum, const char *what, double bytes,
                 const char *note)
{
  if (*n >= cap)
    return;
  struct gr_plan_item *it = &items[(*n)++];
  snprintf(it->what, sizeof(it->what), "%s", what);
  snprintf(it->note, sizeof(it->note), "%s", note);
  it->gib = bytes / GIB;
  *sum += it->gib;
}

static void gpu(struct gr_plan *o, const char *what, double bytes, const char *note)
{
  item(o->gpu, &o->ngpu_items, sizeof(o->gpu) / sizeof(o->gpu[0]), &o->gpu_need_gib, what, bytes, note);
}

static double host(struct gr_plan *o, const char *what, double bytes, const char *note)
{
  double unused = 0;
  item(o->host, &o->nhost_items, sizeof(o->host) / sizeof(o->host[0]), &unused, what, bytes, note);
  return bytes;
}

static long px_of(const struct gr_plan_req *r, const struct gr_diffusion *d)
{
  return r->resolution > 0 ? r->resolution : gr_diffusion_native_px(d);
}

/* Weights, gradients and optimizer states of the trained parameters. */
static void gpu_states(const struct gr_plan_req *r, struct gr_plan *o)
{
  double P = (double)o->unet_params, T = (double)o->trainable, st = gr_diffusion_consts()->adam8bit_state_bytes;
  const char *opt = r->adam8bit ? "8-bit AdamW (bitsandbytes): m and v at 1 B + block scales" : "AdamW: m and v";
  char note[160];
  if (r->job == GR_JOB_LORA) {
    snprintf(note, sizeof(note), "frozen, %.0f B/param (fp16/bf16)", gr_diffusion_consts()->frozen_bytes_per_param);
    gpu(o, "UNet weights", P * gr_diffusion_consts()->frozen_bytes_per_param, note);
    snprintf(note, sizeof(note), "%.0f LoRA params: fp32 weight and grad 8 B, %s %.0f B", T, opt, r->adam8bit ? st : 8);
    gpu(o, "LoRA states", T * (8 + (r->adam8bit ? st : 8)), note);
    return;
  }
  double w = r->full_bf16 ? 2 : 4;
  snprintf(note, sizeof(note), r->full_bf16 ? "bf16 (--full-bf16: no fp32 master copy)" : "fp32 master weights (mixed precision)");
  gpu(o, "UNet weights", P * w, note);
  snprintf(note, sizeof(note), "%s, as the weights", r->full_bf16 ? "bf16" : "fp32");
  gpu(o, "gradients", P * w, note);
  snprintf(note, sizeof(note), "%s in %s", opt, r->adam8bit ? "8 bits" : r->full_bf16 ? "bf16" : "fp32");
  gpu(o, "optimizer states", P * (r->adam8bit ? st : 2 * w), note);
  if (!r->full_bf16 && !r->checkpointing)
    gpu(o, "bf16 weight copies", P * 2, "autocast's bf16 casts of every layer, kept for backward");
  if (r->gpus > 1)
    gpu(o, "DDP gradient buckets", P * w, "PyTorch DDP's bucket copy of the gradients (gradient_as_bucket_view off)");
}

/* The frozen parts that stay on the GPU unless their outputs are cached. */
static void gpu_frozen(const struct gr_plan_req *r, const struct gr_diffusion *d, struct gr_plan *o)
{
  char note[160];
  if (!r->cache_text) {
    snprintf(note, sizeof(note), "%d CLIP encoder%s, frozen in fp16/bf16 (--cache-text-embeddings frees them)",
             d->ntext, d->ntext > 1 ? "s" : "");
    gpu(o, "text encoders", (double)o->text_params * gr_diffusion_consts()->frozen_bytes_per_param, note);
  }
  if (!r->cache_latents)
    gpu(o, "VAE", (double)o->vae_params * gr_diffusion_consts()->vae_bytes_per_param,
        "frozen, fp32 (SDXL's overflows in fp16); --cache-latents frees it");
}

static void gpu_memory(const struct gr_plan_req *r, const struct gr_diffusion *d, struct gr_plan *o)
{
  long px = px_of(r, d);
  char note[160];
  gpu_states(r, o);
  /* autocast leaves GroupNorm's output in fp32; without fp32 master weights (LoRA's frozen base, --full-bf16)
   * everything is bf16 */
  double nb = r->job == GR_JOB_FULL && !r->full_bf16 ? 4 : 2;
  double act = gr_unet_activation_bytes(&d->unet, px, r->batch, r->checkpointing, nb);
  snprintf(note, sizeof(note), "%ldx%ld px (latent %ldx%ld), batch %ld, SDPA, %s", px, px, px / 8, px / 8, r->batch,
           r->checkpointing ? "checkpointed: block inputs + one block recomputed" : "every block's tensors kept");
  gpu(o, "UNet activations", act, note);
  gpu_frozen(r, d, o);
  gpu(o, "CUDA context", gr_plan_consts()->cuda_context_gib * GIB, "per GPU (data/planner.tsv)");
}

/* Host RAM: loading the pipeline, the caches, the data-loader workers. */
static void host_memory(const struct gr_plan_req *r, const struct gr_diffusion *d, struct gr_plan *o)
{
  double all = (double)(o->unet_params + o->text_params + o->vae_params), ranks = r->gpus;
  double loaders = r->rank0_load ? 1 : ranks;
  char note[160];
  snprintf(note, sizeof(note), "the pipeline in fp32 on the CPU, %s", r->rank0_load ? "rank 0 only" : "every rank");
  double load = host(o, "checkpoint while loading", loaders * all * gr_diffusion_consts()->load_bytes_per_param, note);
  long side = px_of(r, d) / 8;
  double copies = gr_diffusion_consts()->cache_copies_per_rank * ranks, caches = 0, n = (double)r->dataset_images;
  if (r->cache_latents && n > 0) {
    snprintf(note, sizeof(note), "%.0f images x %ldx%ldx%ld fp32, in each of %.0f ranks [assumed]", n, d->vae.latent,
             side, side, ranks);
    caches += host(o, "latent cache", copies * n * (double)(d->vae.latent * side * side) *
                                          gr_diffusion_consts()->latent_cache_bytes, note);
  }
  if (r->cache_text && n > 0) {
    double per = 0;
    for (int i = 0; i < d->ntext; i++)
      per += (double)(d->text[i].positions * d->text[i].hidden + d->text[i].proj);
    snprintf(note, sizeof(note), "%.0f images x %.0f values (hidden states + pooled), in each of %.0f ranks", n, per,
             ranks);
    caches += host(o, "text-embedding cache", copies * n * per * gr_diffusion_consts()->text_cache_bytes, note);
  }
  double workers = 0;
  if (r->workers > 0) {
    double share = gr_diffusion_consts()->worker_cache_share;
    snprintf(note, sizeof(note), "%ld per rank x %.0f ranks: %.1f GiB each + %.0f%% of the caches [assumed]",
             r->workers, ranks, gr_diffusion_consts()->worker_base_gib, share * 100);
    workers = host(o, "data-loader workers", (double)r->workers * ranks *
                                                 (gr_diffusion_consts()->worker_base_gib * GIB + share * caches / ranks),
                   note);
  }
  o->host_need_gib = fmax(load, caches + workers) / GIB;
}

static enum gr_fit fit(const struct gr_plan *o)
{
  if (o->host_short)
    return GR_FIT_NO;
  if (o->gpu_need_gib <= 0.9 * o->gpu_have_gib)
    return GR_FIT_HEADROOM;
  return o->gpu_need_gib <= o->gpu_have_gib ? GR_FIT_TIGHT : GR_FIT_NO;
}

/* Counts and memory: what the verdict and the fit search start from. */
static void plan_base(const struct gr_plan_req *r, const struct gr_diffusion *d, const struct gr_plan_hw *hw,
                      struct gr_plan *o)
{
  memset(o, 0, sizeof(*o));
  o->unet_params = gr_unet_params(&d->unet);
  o->vae_params = gr_vae_params(&d->vae);
  for (int i = 0; i < d->ntext; i++)
    o->text_params += gr_clip_params(&d->text[i]);
  o->params.total = o->params.active = o->unet_params + o->text_params + o->vae_params;
  o->trainable = r->job == GR_JOB_LORA ? gr_unet_lora_params(&d->unet, r->lora_rank) : o->unet_params;
  o->resolution = px_of(r, d);
  o->dp = r->gpus;
  gpu_memory(r, d, o);
  host_memory(r, d, o);
  o->gpu_have_gib = hw->gpu->mem_gib;
  o->host_short = hw->host_ram_gib > 0 && o->host_need_gib > hw->host_ram_gib;
  o->fit = fit(o);
}

/* The changes the fit search tries, cheapest first: caching costs nothing
 * per step, checkpointing recomputes, 8-bit Adam and pure bf16 change the
 * numerics, a smaller batch changes the job. Bit i of a candidate applies
 * change i; a lower number is a cheaper combination. */
enum { CH_TEXT, CH_LATENTS, CH_CKPT, CH_ADAM8, CH_BF16, CH_BATCH1, CH_N };

static bool apply(const struct gr_plan_req *r0, unsigned bits, struct gr_plan_req *r)
{
  *r = *r0;
  bool *flag[CH_BATCH1] = {&r->cache_text, &r->cache_latents, &r->checkpointing, &r->adam8bit, &r->full_bf16};
  for (int i = 0; i < CH_BATCH1; i++)
    if (bits & (1u << i)) {
      if (*flag[i] || (i == CH_BF16 && r0->job != GR_JOB_FULL))
        return false; /* already so, or does not apply */
      *flag[i] = true;
    }
  if (bits & (1u << CH_BATCH1)) {
    if (r0->batch <= 1)
      return false;
    r->batch = 1;
  }
  return true;
}

static void change_text(const struct gr_plan_req *r0, const struct gr_plan_req *r, char *buf, size_t cap)
{
  size_t off = 0;
  buf[0] = '\0';
#define ADD(cond, s) (off += (cond) && off < cap ? (size_t)snprintf(buf + off, cap - off, "%s%s", off ? " " : "", s) : 0)
  ADD(r->cache_text != r0->cache_text, "--cache-text-embeddings");
  ADD(r->cache_latents != r0->cache_latents, "--cache-latents");
  ADD(r->checkpointing != r0->checkpointing, "--checkpointing");
  ADD(r->adam8bit != r0->adam8bit, "--optimizer adam8bit");
  ADD(r->full_bf16 != r0->full_bf16, "--full-bf16");
  ADD(r->batch != r0->batch, "--batch 1");
#undef ADD
}

/* The cheapest change with headroom, else the cheapest that fits tightly. */
static void find_fix(const struct gr_plan_req *r0, const struct gr_diffusion *d, const struct gr_plan_hw *hw,
                     struct gr_plan *o)
{
  struct gr_plan *tmp = xmalloc(sizeof(*tmp));
  o->fix[0] = '\0';
  for (int pass = 0; pass < 2 && !o->fix[0]; pass++)
    for (unsigned bits = 1; bits < (1u << CH_N) && !o->fix[0]; bits++) {
      struct gr_plan_req r;
      if (!apply(r0, bits, &r))
        continue;
      plan_base(&r, d, hw, tmp);
      if (tmp->fit == GR_FIT_HEADROOM || (pass == 1 && tmp->fit == GR_FIT_TIGHT)) {
        change_text(r0, &r, o->fix, sizeof(o->fix));
        o->fix_need_gib = tmp->gpu_need_gib;
      }
    }
  free(tmp);
}

/* The largest batch per GPU that fits with everything else as asked. */
static long largest_batch(struct gr_plan_req r, const struct gr_diffusion *d, const struct gr_plan_hw *hw)
{
  long lo = 0, hi = 4096;
  struct gr_plan *tmp = xmalloc(sizeof(*tmp));
  while (lo < hi) {
    long mid = lo + (hi - lo + 1) / 2;
    r.batch = mid;
    plan_base(&r, d, hw, tmp);
    if (tmp->fit != GR_FIT_NO)
      lo = mid;
    else
      hi = mid - 1;
  }
  free(tmp);
  return lo;
}

static void verdict(const struct gr_plan_req *r, const struct gr_diffusion *d, const struct gr_plan_hw *hw,
                    struct gr_plan *o)
{
  double need = o->gpu_need_gib, have = o->gpu_have_gib;
  if (o->fit != GR_FIT_NO) {
    snprintf(o->verdict, sizeof(o->verdict), "%s: %.1f GiB of %.0f GiB per GPU (%.0f%%)%s",
             o->fit == GR_FIT_HEADROOM ? "fits with headroom" : "fits, but tight", need, have, need / have * 100,
             o->fit == GR_FIT_TIGHT ? "; under 10% left for fragmentation and framework buffers" : "");
  } else {
    find_fix(r, d, hw, o);
    if (o->host_short && need <= have)
      snprintf(o->verdict, sizeof(o->verdict), "does not fit in host RAM: %.1f GiB needed, the machine has %.0f GiB "
               "(the GPUs would hold %.1f of %.0f GiB each)%s%s", o->host_need_gib, hw->host_ram_gib, need, have,
               o->fix[0] ? "; fits with " : "; fewer --workers, --rank0-load or fewer cached images", o->fix);
    else if (o->fix[0])
      snprintf(o->verdict, sizeof(o->verdict), "does not fit: %.1f GiB needed per GPU, %s has %.0f GiB; fits with %s "
               "(%.1f GiB per GPU)", need, hw->gpu->model, have, o->fix, o->fix_need_gib);
    else
      snprintf(o->verdict, sizeof(o->verdict), "does not fit: %.1f GiB needed per GPU, %s has %.0f GiB; no change "
               "gpurig tries (caching, checkpointing, 8-bit Adam, --full-bf16, batch 1) is enough: LoRA, or GPUs with "
               "more memory", need, hw->gpu->model, have);
  }
  o->max_batch = largest_batch(*r, d, hw);
}

void gr_diffusion_notes(const struct gr_plan_req *r, const struct gr_diffusion *d, const struct gr_plan *o,
                        struct gr_findings *out)
{
  double lo = gr_diffusion_consts()->reported_host_low_gb, hi = gr_diffusion_consts()->reported_host_high_gb;
  double gb = o->host_need_gib * GIB / 1e9;
  const char *id = "plan.note";
  gr_finding_add(out, GR_SEV_INFO, id, "No speed: gpurig has no published SDXL or SD 1.5 training step time with "
                 "stated conditions to hold a figure to, so it prints none (docs/plan.md).");
  gr_finding_add(out, GR_SEV_INFO, id, "Trained: the UNet only (text encoders frozen), DDP (every GPU holds the "
                 "whole model), PyTorch SDPA attention (no attention matrix kept).");
  if (strcmp(d->name, "sdxl-base-1.0") != 0) /* the published host figure is for an SDXL fine-tune */
    gr_finding_add(out, GR_SEV_INFO, id, "Host RAM: modelled %.0f GB; not modelled: leaks, allocator "
                   "fragmentation, swap, the page cache.", gb);
  else if (gb < lo)
    gr_finding_add(out, GR_SEV_INFO, id, "Host RAM: modelled %.0f GB, %.0f-%.0f%% of the %.0f-%.0f GB seed 004 "
                   "reports for an SDXL fine-tune on 4x RTX 3090; the rest is leaks, fragmentation and swap, which "
                   "gpurig does not model.", gb, gb / hi * 100, gb / lo * 100, lo, hi);
  else
    gr_finding_add(out, GR_SEV_INFO, id, "Host RAM: modelled %.0f GB, at least the %.0f-%.0f GB seed 004 reports "
                   "for an SDXL fine-tune on 4x RTX 3090; leaks, fragmentation and swap come on top and gpurig does "
                   "not model them.", gb, lo, hi);
  if (r->dataset_images == 0 && (r->cache_latents || r->cache_text))
    gr_finding_add(out, GR_SEV_INFO, id, "The caches in host RAM are counted only with --dataset-images N.");
}

void gr_diffusion_plan(const struct gr_plan_req *r, const struct gr_diffusion *d, const struct gr_plan_hw *hw,
                       struct gr_plan *o)
{
  plan_base(r, d, hw, o);
  verdict(r, d, hw, o);
}
