/* Diffusion models for the planner: Stable Diffusion pipelines (a UNet, one
 * or two CLIP text encoders, a VAE) read from data/diffusion.tsv, their
 * parameters counted exactly from the architecture, and the memory of
 * training them (full fine-tune or LoRA) per GPU and on the host.
 * Method and sources: docs/plan.md "Diffusion models".
 *
 * Ownership: struct gr_diffusion holds fixed arrays only; the loader fills
 * the caller's struct. gr_diffusion_plan fills the caller's struct gr_plan
 * (plan/plan.h) and keeps no pointer into its arguments. */
#ifndef GPURIG_PLAN_DIFFUSION_H
#define GPURIG_PLAN_DIFFUSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/util.h"
#include "plan/plan.h"

#define GR_DM_LEVELS 6

/* diffusers' UNet2DConditionModel. */
struct gr_unet_shape {
  long in_ch, out_ch;
  int levels;                   /* len(block_out_channels) */
  long ch[GR_DM_LEVELS];        /* block_out_channels */
  bool cross[GR_DM_LEVELS];     /* CrossAttnDownBlock2D at this level (the up path mirrors the down path) */
  long tlayers[GR_DM_LEVELS];   /* BasicTransformerBlocks per Transformer2DModel; the mid block takes the last */
  long layers_per_block;
  long cross_dim;               /* cross_attention_dim: the text encoders' hidden states */
  long add_time_dim, add_proj_dim; /* SDXL's "text_time" added embedding; 0: none */
  long sample_size;             /* latent pixels per side the model was trained at */
};

/* transformers' CLIPTextModel (proj 0) or CLIPTextModelWithProjection. */
struct gr_clip_shape {
  long hidden, inter, layers, vocab, positions, proj;
};

/* diffusers' AutoencoderKL. */
struct gr_vae_shape {
  long in_ch, latent;
  int levels;
  long ch[GR_DM_LEVELS];
  long layers_per_block;
};

struct gr_diffusion {
  char name[48];                /* the row's name: "sdxl-base-1.0" */
  char source[200];             /* the UNet row's source */
  struct gr_unet_shape unet;
  struct gr_clip_shape text[2];
  int ntext;
  struct gr_vae_shape vae;
};

/* Finds `name` (a name or an alias, case-insensitively) in diffusion.tsv.
 * 1 and *d filled when found, 0 when no row has that name, -1 with
 * "diffusion.tsv:LINE: key K: problem" in err (GR_EXIT_CANNOT_RUN) when a
 * row of it is broken. */
int gr_diffusion_builtin(const char *name, struct gr_diffusion *d, struct gr_err *err);
/* The built-in names, comma-separated, into buf. */
void gr_diffusion_names(char *buf, size_t cap);
/* Calls fn with each built-in name and then its aliases (the strings live
 * only for the call: fn copies what it keeps). */
void gr_diffusion_each(void (*fn)(void *ctx, const char *name), void *ctx);

/* Exact parameter counts of each part, as torch counts them (every weight
 * and bias once). */
uint64_t gr_unet_params(const struct gr_unet_shape *u);
uint64_t gr_clip_params(const struct gr_clip_shape *c);
uint64_t gr_vae_params(const struct gr_vae_shape *v);
/* LoRA of rank r on every attention's to_q, to_k, to_v and to_out.0 in the
 * UNet (diffusers' train_text_to_image_lora_sdxl.py target_modules). */
uint64_t gr_unet_lora_params(const struct gr_unet_shape *u, long rank);

/* Bytes the UNet keeps for backward at batch b and px x px images: bf16
 * activations with SDPA (no attention matrix), norm outputs at norm_bytes,
 * every ResnetBlock2D and BasicTransformerBlock checkpointed when ckpt
 * (their inputs kept, the largest recomputed once). */
double gr_unet_activation_bytes(const struct gr_unet_shape *u, long px, long b, bool ckpt, double norm_bytes);
/* The largest resolution step: px must be a multiple of it (VAE 8 x the
 * UNet's downsamplings). */
long gr_diffusion_px_step(const struct gr_diffusion *d);
/* The model's native resolution in pixels (sample_size x 8). */
long gr_diffusion_native_px(const struct gr_diffusion *d);

/* The plan of a diffusion training job (r->job full or lora, checked by
 * gr_plan_check): counts, memory per GPU and on the host, the verdict with
 * the cheapest change that fits, the largest batch. No speed: docs/plan.md
 * says why. Cost is left to the caller. */
/* The diffusion plan's notes (what it leaves out, how host RAM compares
 * with the published figure) as info findings "plan.note" (gr_plan_notes). */
void gr_diffusion_notes(const struct gr_plan_req *r, const struct gr_diffusion *d, const struct gr_plan *o,
                        struct gr_findings *out);
void gr_diffusion_plan(const struct gr_plan_req *r, const struct gr_diffusion *d, const struct gr_plan_hw *hw,
                       struct gr_plan *o);

#endif
