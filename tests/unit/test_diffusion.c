/* Diffusion models in the planner: exact parameter counts against the
 * published totals, LoRA adapter counts, the memory model's items and how
 * they move with the options, host RAM, and the options refused. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "testutil.h"

#include "facts/catalog.h"
#include "plan/diffusion.h"
#include "plan/plan.h"
#include "plan/request.h"

#define GIB 1073741824.0

static void load(const char *name, struct gr_diffusion *d)
{
  struct gr_err err = {0};
  int rc = gr_diffusion_builtin(name, d, &err);
  if (rc != 1)
    fail_msg("%s: rc %d: %s", name, rc, err.msg);
}

/* The totals torch's sum(p.numel()) gives for each part, to the digit. */
static void exact_counts(void **state)
{
  struct gr_diffusion xl, sd;
  (void)state;
  load("sdxl", &xl);
  load("sd15", &sd);
  assert_int_equal(gr_unet_params(&xl.unet), 2567463684ULL);
  assert_int_equal(gr_unet_params(&sd.unet), 859520964ULL);
  assert_int_equal(xl.ntext, 2);
  assert_int_equal(gr_clip_params(&xl.text[0]), 123060480ULL); /* CLIP ViT-L/14 text tower */
  assert_int_equal(gr_clip_params(&xl.text[1]), 694659840ULL); /* OpenCLIP ViT-bigG/14 text tower + projection */
  assert_int_equal(sd.ntext, 1);
  assert_int_equal(gr_clip_params(&sd.text[0]), 123060480ULL);
  assert_int_equal(gr_vae_params(&xl.vae), 83653863ULL);
  assert_int_equal(gr_vae_params(&sd.vae), 83653863ULL);
}

/* LoRA on to_q, to_k, to_v, to_out.0: rank 4 on SDXL is the 5,806,080 a
 * diffusers-based DreamBooth LoRA run logs ("training lora parameters"), and
 * on SD 1.5 the 797,184 of diffusers' train_text_to_image_lora.py (a 3.2 MB
 * fp32 file). */
static void lora_counts(void **state)
{
  struct gr_diffusion xl, sd;
  (void)state;
  load("sdxl-base-1.0", &xl);
  load("SD-1.5", &sd);
  assert_int_equal(gr_unet_lora_params(&xl.unet, 4), 5806080ULL);
  assert_int_equal(gr_unet_lora_params(&sd.unet, 4), 797184ULL);
  assert_int_equal(gr_unet_lora_params(&xl.unet, 32), 8 * 5806080ULL); /* linear in the rank */
}

static void names_and_aliases(void **state)
{
  struct gr_diffusion d;
  struct gr_err err = {0};
  char names[512];
  (void)state;
  load("stable-diffusion-xl-base-1.0", &d);
  assert_string_equal(d.name, "sdxl-base-1.0");
  assert_int_equal(gr_diffusion_native_px(&d), 1024);
  assert_int_equal(gr_diffusion_px_step(&d), 32);
  load("sd-v1-5", &d);
  assert_int_equal(gr_diffusion_native_px(&d), 512);
  assert_int_equal(gr_diffusion_px_step(&d), 64);
  assert_int_equal(gr_diffusion_builtin("sd3", &d, &err), 0);
  assert_int_equal(gr_diffusion_builtin("llama-2-7b", &d, &err), 0);
  gr_diffusion_names(names, sizeof(names));
  assert_non_null(strstr(names, "sdxl-base-1.0 (sdxl)"));
  assert_non_null(strstr(names, "sd-1.5 (sd15)"));
}

/* Activations: quadratic in the side (the latent's area), linear in the
 * batch, checkpointing keeps a small part. */
static void activations_scale(void **state)
{
  struct gr_diffusion d;
  (void)state;
  load("sdxl", &d);
  double a1024 = gr_unet_activation_bytes(&d.unet, 1024, 1, false, 2);
  double a512 = gr_unet_activation_bytes(&d.unet, 512, 1, false, 2);
  double b2 = gr_unet_activation_bytes(&d.unet, 1024, 2, false, 2);
  double ck = gr_unet_activation_bytes(&d.unet, 1024, 1, true, 2);
  assert_true(fabs(a1024 / a512 - 4.0) < 1e-9);
  assert_true(fabs(b2 / a1024 - 2.0) < 1e-9);
  assert_true(ck < a1024 / 5);
  assert_true(ck > 0);
  /* fp32 norm outputs under autocast add to the resnets' share only */
  double a32 = gr_unet_activation_bytes(&d.unet, 1024, 1, false, 4);
  assert_true(a32 > a1024 && a32 < 1.5 * a1024);
  /* SDXL at 1024 px, batch 1, bf16: 4-10 GiB kept without checkpointing (SDPA) */
  assert_true(a1024 / GIB > 4 && a1024 / GIB < 10);
}

/* A plan on n RTX 3090s of a generic board with the given RAM. */
static void plan(const struct gr_plan_args *a, int n, double ram_gib, struct gr_planned *pl)
{
  struct gr_plan_hw hw = {0};
  struct gr_err err = {0};
  hw.gpu = gr_catalog_find("RTX 3090");
  assert_non_null(hw.gpu);
  hw.ngpus = n;
  hw.host_ram_gib = ram_gib;
  snprintf(hw.name, sizeof(hw.name), "test");
  if (gr_plan_job(a, &hw, NULL, pl, &err) != 0)
    fail_msg("%s", err.msg);
}

static double item_gib(const struct gr_plan_item *it, size_t n, const char *what)
{
  for (size_t i = 0; i < n; i++)
    if (strcmp(it[i].what, what) == 0)
      return it[i].gib;
  return -1;
}

/* Full fine-tune with fp32 master weights and AdamW: 4 + 4 + 8 bytes per
 * UNet parameter on one GPU; 8-bit Adam and --full-bf16 cut them. */
static void full_states(void **state)
{
  struct gr_planned pl;
  double P = 2567463684.0;
  (void)state;
  plan(&(struct gr_plan_args){.model = "sdxl", .job = "full", .gpus = "1"}, 1, 0, &pl);
  const struct gr_plan *p = &pl.plan;
  assert_true(fabs(item_gib(p->gpu, p->ngpu_items, "UNet weights") - 4 * P / GIB) < 1e-6);
  assert_true(fabs(item_gib(p->gpu, p->ngpu_items, "optimizer states") - 8 * P / GIB) < 1e-6);
  assert_true(item_gib(p->gpu, p->ngpu_items, "DDP gradient buckets") < 0); /* one GPU: no DDP */
  assert_int_equal(p->fit, GR_FIT_NO);
  assert_string_equal(p->fix, "--cache-text-embeddings --checkpointing --full-bf16"); /* 8-bit Adam over fp32 masters is not enough */
  gr_planned_free(&pl);
  plan(&(struct gr_plan_args){.model = "sdxl", .job = "full", .gpus = "1", .optimizer = "adam8bit", .full_bf16 = true,
                              .checkpointing = true, .cache_latents = true, .cache_text = true},
       1, 0, &pl);
  p = &pl.plan;
  assert_true(fabs(item_gib(p->gpu, p->ngpu_items, "UNet weights") - 2 * P / GIB) < 1e-6);
  assert_true(fabs(item_gib(p->gpu, p->ngpu_items, "optimizer states") - 2.004 * P / GIB) < 1e-6);
  assert_true(item_gib(p->gpu, p->ngpu_items, "VAE") < 0);
  assert_true(item_gib(p->gpu, p->ngpu_items, "text encoders") < 0);
  assert_true(p->fit != GR_FIT_NO);
  assert_true(p->max_batch >= 1);
  gr_planned_free(&pl);
}

/* LoRA keeps the frozen UNet in bf16 and 16 B per adapter parameter. */
static void lora_plan(void **state)
{
  struct gr_planned pl;
  (void)state;
  plan(&(struct gr_plan_args){.model = "sdxl", .job = "lora", .gpus = "1", .checkpointing = true}, 1, 0, &pl);
  const struct gr_plan *p = &pl.plan;
  assert_int_equal(p->trainable, 5806080ULL);
  assert_int_equal(pl.req.lora_rank, 4);
  assert_true(fabs(item_gib(p->gpu, p->ngpu_items, "UNet weights") - 2 * 2567463684.0 / GIB) < 1e-6);
  assert_true(fabs(item_gib(p->gpu, p->ngpu_items, "LoRA states") - 16 * 5806080.0 / GIB) < 1e-6);
  assert_int_equal(p->fit, GR_FIT_HEADROOM); /* SDXL LoRA with checkpointing runs on 24 GB cards */
  assert_int_equal(p->resolution, 1024);
  gr_planned_free(&pl);
}

/* Host RAM: every rank loads the fp32 pipeline; the caches and workers
 * scale with the images, the ranks and the workers. */
static void host_ram(void **state)
{
  struct gr_planned pl;
  double all = 2567463684.0 + 123060480.0 + 694659840.0 + 83653863.0;
  (void)state;
  plan(&(struct gr_plan_args){.model = "sdxl", .job = "full", .gpus = "4"}, 4, 512, &pl);
  const struct gr_plan *p = &pl.plan;
  assert_true(fabs(item_gib(p->host, p->nhost_items, "checkpoint while loading") - 16 * all / GIB) < 1e-6);
  assert_true(fabs(p->host_need_gib - 16 * all / GIB) < 1e-6);
  assert_true(item_gib(p->gpu, p->ngpu_items, "DDP gradient buckets") > 0);
  gr_planned_free(&pl);
  plan(&(struct gr_plan_args){.model = "sdxl", .job = "full", .gpus = "4", .rank0_load = true, .cache_latents = true,
                              .cache_text = true, .dataset_images = "100000", .workers = "4"},
       4, 128, &pl);
  p = &pl.plan;
  double lat = 4 * 100000.0 * 4 * 128 * 128 * 4; /* 4 ranks x images x 4x128x128 fp32 */
  double txt = 4 * 100000.0 * (77 * 768 + 77 * 1280 + 1280) * 2;
  assert_true(fabs(item_gib(p->host, p->nhost_items, "latent cache") - lat / GIB) < 1e-6);
  assert_true(fabs(item_gib(p->host, p->nhost_items, "text-embedding cache") - txt / GIB) < 1e-6);
  /* 16 workers, each 1 GiB of its own; the cached tensors stay shared */
  double workers = 16 * GIB;
  assert_true(fabs(item_gib(p->host, p->nhost_items, "data-loader workers") - workers / GIB) < 1e-6);
  assert_true(fabs(p->host_need_gib - (lat + txt + workers) / GIB) < 1e-6);
  assert_true(p->host_short); /* 100,000 images cached in each of 4 ranks: 232 GiB */
  assert_int_equal(p->fit, GR_FIT_NO);
  gr_planned_free(&pl);
}

static void options_refused(void **state)
{
  static const struct {
    struct gr_plan_args a;
    const char *want;
  } cases[] = {
      {{.model = "llama-2-7b", .job = "lora", .resolution = "1024"}, "--resolution applies to diffusion models"},
      {{.model = "sdxl", .job = "lora", .ctx = "77"}, "--ctx applies to language models"},
      {{.model = "sdxl", .job = "infer"}, "its inference is not modelled"},
      {{.model = "sdxl", .job = "qlora"}, "QLoRA is not modelled"},
      {{.model = "sdxl", .job = "full", .zero = "2"}, "not modelled for diffusion models"},
      {{.model = "sdxl", .job = "full", .resolution = "1000"}, "needs a multiple of 32"},
      {{.model = "sd15", .job = "full", .resolution = "544"}, "needs a multiple of 64"},
      {{.model = "sdxl", .job = "full", .optimizer = "lion"}, "--optimizer lion: adamw or adam8bit"},
      {{.model = "sdxl", .job = "full", .workers = "-1"}, "--workers -1"},
      {{.model = "sd3", .job = "full"}, "not a diffusion model gpurig plans"},
  };
  (void)state;
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    struct gr_plan_hw hw = {.gpu = gr_catalog_find("RTX 3090"), .ngpus = 1};
    struct gr_planned pl;
    struct gr_err err = {0};
    struct gr_plan_args a = cases[i].a;
    a.gpus = a.gpus ? a.gpus : "1";
    if (gr_plan_job(&a, &hw, NULL, &pl, &err) == 0) {
      gr_planned_free(&pl);
      fail_msg("case %zu: planned, want '%s'", i, cases[i].want);
    }
    if (!strstr(err.msg, cases[i].want))
      fail_msg("case %zu: got '%s', want '%s'", i, err.msg, cases[i].want);
  }
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(exact_counts),      cmocka_unit_test(lora_counts),  cmocka_unit_test(names_and_aliases),
      cmocka_unit_test(activations_scale), cmocka_unit_test(full_states),  cmocka_unit_test(lora_plan),
      cmocka_unit_test(host_ram),          cmocka_unit_test(options_refused),
  };
  return cmocka_run_group_tests(tests, tu_setup_data, NULL);
}
