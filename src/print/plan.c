/* `gpurig plan`: the breakdown per GPU and for the host, the verdict, speed
 * with its range and basis, and cost; as text and as JSON (docs/json.md). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "print/common.h"
#include "print/plan.h"

#include "plan/engine.h"
#include "plan/power.h"
#include "plan/speed.h"

/* 6738415616 -> "6,738,415,616" */
static const char *grouped(uint64_t v, char *buf, size_t cap)
{
  char digits[32];
  int n = snprintf(digits, sizeof(digits), "%llu", (unsigned long long)v);
  size_t o = 0;
  for (int i = 0; i < n && o + 2 < cap; i++) {
    if (i > 0 && (n - i) % 3 == 0)
      buf[o++] = ',';
    buf[o++] = digits[i];
  }
  buf[o] = '\0';
  return buf;
}

static void print_model(FILE *out, const struct gr_model *m, const struct gr_plan *p)
{
  char a[32], b[32];
  if (!m->shape_known) {
    fprintf(out, "Model: %s parameters (shape unknown)\n", grouped(p->params.total, a, sizeof(a)));
    return;
  }
  fprintf(out, "Model: %s, %s parameters", m->name, grouped(p->params.total, a, sizeof(a)));
  if (m->experts > 0)
    fprintf(out, " (%s active per token: %ld of %ld experts)", grouped(p->params.active, b, sizeof(b)),
            m->experts_per_tok, m->experts);
  fprintf(out, "\n  %ld layers, hidden %ld, MLP %ld, %ld heads / %ld KV heads x %ld, vocab %ld%s%s\n", m->layers,
          m->hidden, m->moe_intermediate, m->heads, m->kv_heads, m->head_dim, m->vocab,
          m->tied ? ", tied embeddings" : "", m->sliding_window ? ", sliding window" : "");
}

static bool is_note(const struct gr_finding *f)
{
  return f->sev == GR_SEV_INFO && strcmp(f->id, "plan.note") == 0;
}

/* The plan's notes (its info findings "plan.note", gr_plan_findings) under
 * "Notes:". */
static void print_notes(FILE *out, const struct gr_planned *pl)
{
  struct gr_findings fs = {0};
  bool first = true;
  gr_plan_findings(pl, NULL, &fs);
  for (size_t i = 0; i < fs.n; i++) {
    if (!is_note(&fs.v[i]))
      continue;
    fprintf(out, "%s%s\n", first ? "\nNotes:\n" : "", fs.v[i].text);
    first = false;
  }
  gr_findings_free(&fs);
}

/* The same notes as texts (docs/json.md: the plan's "notes"). */
static json_t *notes_json(const struct gr_planned *pl)
{
  struct gr_findings fs = {0};
  json_t *a = json_array();
  gr_plan_findings(pl, NULL, &fs);
  for (size_t i = 0; i < fs.n; i++)
    if (is_note(&fs.v[i]))
      json_array_append_new(a, gr_json_text(fs.v[i].text));
  gr_findings_free(&fs);
  return a;
}

static void print_items(FILE *out, const struct gr_plan_item *it, size_t n)
{
  for (size_t i = 0; i < n; i++)
    fprintf(out, "  %-26s %9.2f  %s\n", it[i].what, it[i].gib, it[i].note);
}

static void print_range(FILE *out, const char *what, const struct gr_range *r, const char *unit, int prec)
{
  if (!r->ok)
    return;
  if (fabs(r->high - r->low) < 1e-9)
    fprintf(out, "  %-8s %.*f %s\n", what, prec, r->mid, unit);
  else
    fprintf(out, "  %-8s %.*f %s (range %.*f to %.*f)\n", what, prec, r->mid, unit, prec, r->low, prec, r->high);
}

static void print_memory(FILE *out, const struct gr_plan_req *r, const struct gr_plan_hw *hw, const struct gr_plan *p)
{
  char title[128];
  if (r->gpus == 0)
    snprintf(title, sizeof(title), "Host RAM (CPU inference)");
  else if (r->gpus > 1)
    snprintf(title, sizeof(title), "Per GPU (the busiest of %d)", r->gpus);
  else
    snprintf(title, sizeof(title), "Per GPU");
  fprintf(out, "\n%-28s %8s\n", title, "GiB");
  print_items(out, p->gpu, p->ngpu_items);
  if (r->gpus > 0)
    fprintf(out, "  %-26s %9.2f  of %.0f GiB on each %s\n", "total", p->gpu_need_gib, p->gpu_have_gib, hw->gpu->model);
  else
    fprintf(out, "  %-26s %9.2f\n", "total", p->gpu_need_gib);
  if (p->nhost_items) {
    fprintf(out, "\n%-28s %8s\n", "Host RAM", "GiB");
    print_items(out, p->host, p->nhost_items);
    fprintf(out, "  %-26s %9.2f  the larger of loading and running\n", "peak", p->host_need_gib);
  }
  if (r->job == GR_JOB_FULL)
    fprintf(out, "\nModel states: %d bytes/parameter x %.3g parameters = %.1f GB (%.2f GiB) before sharding\n",
            r->state_bytes, (double)p->params.total, p->model_states_gb, p->model_states_gb * 1e9 / 1073741824.0);
}

/* ---- diffusion models: images, resolution and steps, no context or tokens ---- */

static void print_diffusion_cost(FILE *out, const struct gr_plan_req *r, const struct gr_plan *p)
{
  fprintf(out, "\nCost:\n");
  if (p->price > 0)
    fprintf(out, "  price %.0f %s (%.1f %s per GiB of VRAM)\n", p->price, p->currency, p->price_per_vram_gib,
            p->currency);
  else
    fprintf(out, "  price not known (--price)\n");
  fprintf(out, "  power about %.0f W under load: %.1f kWh/day = %.2f %s/day at %.2f/kWh\n", p->power_w,
          p->energy_kwh_day, p->energy_cost_day, p->currency, r->kwh_price);
  if (p->rent_year > 0)
    fprintf(out, "  renting %d GPUs at %.2f/GPU-hour: %.0f %s per year\n", r->gpus, r->rent, p->rent_year, p->currency);
}

static void print_diffusion(FILE *out, const struct gr_planned *pl)
{
  const struct gr_plan_req *r = &pl->req;
  const struct gr_plan_hw *hw = &pl->hw;
  const struct gr_plan *p = &pl->plan;
  char a[32], b[32], c[32], d[32];
  fprintf(out, "Plan: %s, %s, %ldx%ld px, batch %ld per GPU, %d x %s\n", pl->model.name,
          r->job == GR_JOB_FULL ? "full fine-tune of the UNet" : "LoRA on the UNet", p->resolution, p->resolution,
          r->batch, r->gpus, hw->gpu->model);
  fprintf(out, "Machine: %s\n", hw->name);
  fprintf(out, "Model: %s parameters: UNet %s, text encoders %s, VAE %s\n", grouped(p->params.total, a, sizeof(a)),
          grouped(p->unet_params, b, sizeof(b)), grouped(p->text_params, c, sizeof(c)),
          grouped(p->vae_params, d, sizeof(d)));
  fprintf(out, "  from %s\n", pl->model.source);
  if (r->job == GR_JOB_LORA)
    fprintf(out, "Trainable: %s LoRA parameters (rank %ld on the attention projections)\n",
            grouped(p->trainable, a, sizeof(a)), r->lora_rank);
  fprintf(out, "Training: %s, %s, checkpointing %s; latents %s, text embeddings %s\n",
          r->adam8bit ? "8-bit AdamW" : "AdamW", r->job == GR_JOB_LORA ? "bf16 base" : r->full_bf16 ? "pure bf16" : "fp32 master weights",
          r->checkpointing ? "on" : "off", r->cache_latents ? "cached" : "encoded on the GPU",
          r->cache_text ? "cached" : "encoded on the GPU");
  char title[64];
  snprintf(title, sizeof(title), r->gpus > 1 ? "Per GPU (each of %d)" : "Per GPU", r->gpus);
  fprintf(out, "\n%-28s %8s\n", title, "GiB");
  print_items(out, p->gpu, p->ngpu_items);
  fprintf(out, "  %-26s %9.2f  of %.0f GiB on each %s\n", "total", p->gpu_need_gib, p->gpu_have_gib, hw->gpu->model);
  fprintf(out, "\n%-28s %8s\n", "Host RAM", "GiB");
  print_items(out, p->host, p->nhost_items);
  fprintf(out, "  %-26s %9.2f  the larger of loading and training%s\n", "peak", p->host_need_gib,
          hw->host_ram_gib > 0 ? "" : " (the machine's RAM is not known)");
  fprintf(out, "\nVerdict: %s\n", p->verdict);
  fprintf(out, "  largest batch per GPU that fits: %ld (at %ldx%ld px)\n", p->max_batch, p->resolution, p->resolution);
  fprintf(out, "\nSpeed: not estimated (no published step time to hold it to; see the notes)\n");
  print_diffusion_cost(out, r, p);
  print_notes(out, pl);
}

/* --nodes: the pipeline over the nodes, what crosses the network, and each node's host RAM. */
static void print_cluster(FILE *out, const struct gr_plan_req *r, const struct gr_plan_hw *hw, const struct gr_plan *p)
{
  if (hw->nodes <= 1)
    return;
  fprintf(out, "\nAcross %d nodes (%d GPUs each, %s):\n", hw->nodes, hw->gpus_per_node, hw->nic_desc);
  fprintf(out, "  layout: tensor parallel %d inside a node, %d pipeline stage%s per node\n", r->tp, r->pp / hw->nodes,
          r->pp / hw->nodes == 1 ? "" : "s");
  if (hw->node_nic_gbps > 0)
    fprintf(out, "  network: %.1f GB/s per node and direction; %.0f KiB of activations per token cross each of %d node "
            "boundar%s: %.1f us per decode step, %.1f ms per %ld-token prompt\n", hw->node_nic_gbps,
            p->act_bytes / 1024, hw->nodes - 1, hw->nodes == 2 ? "y" : "ies", p->pipe_comm_s * 1e6,
            p->pipe_prefill_s * 1e3, r->ctx);
  else
    fprintf(out, "  network: the NICs' rate is unknown (a rig's nic ... speed GBIT): no transfer time counted\n");
  if (hw->net_busbw_gbps > 0)
    fprintf(out, "  all-reduce over every node: %.1f GB/s busbw (the node alone: %.1f GB/s)\n", hw->net_busbw_gbps,
            hw->busbw_gbps[hw->gpus_per_node < 65 ? hw->gpus_per_node : 64]);
  if (hw->host_ram_gib > 0)
    fprintf(out, "  host RAM per node: %.1f of %.0f GiB (%s)\n", p->host_node_gib, hw->host_ram_gib,
            p->host_node_gib > hw->host_ram_gib ? "short" : "fits");
  else
    fprintf(out, "  host RAM per node: %.1f GiB (the machine's RAM is not stated)\n", p->host_node_gib);
}

/* --tp auto: the degree chosen and what each one tried gave. */
static void print_tp_auto(FILE *out, const struct gr_planned *pl)
{
  bool fits = false;
  if (!pl->ntp_tried)
    return;
  for (size_t i = 0; i < pl->ntp_tried; i++)
    fits |= pl->tp_tried[i].fit != GR_FIT_NO;
  fprintf(out, "TP: --tp auto chose %d (%s); decode:", pl->req.tp,
          fits ? "the fastest that fits" : "none fits: the least memory per GPU");
  for (size_t i = 0; i < pl->ntp_tried; i++) /* "no fit" only where some fit: else it says nothing */
    fprintf(out, "%s TP %d %.1f%s", i ? "," : "", pl->tp_tried[i].tp, pl->tp_tried[i].decode_tps,
            fits && pl->tp_tried[i].fit == GR_FIT_NO ? " (no fit)" : "");
  fprintf(out, " tokens/s\n");
}

/* "Plan: ...", "Machine: ..." and "Engine: ..." lines. */
static void print_head(FILE *out, const struct gr_planned *pl)
{
  const struct gr_plan_req *r = &pl->req;
  const struct gr_plan_hw *hw = &pl->hw;
  fprintf(out, "Plan: %s, %s", pl->model.name, gr_job_name(r->job));
  if (r->job != GR_JOB_FULL)
    fprintf(out, ", %s", r->quant.name);
  fprintf(out, ", context %ld, batch %ld", r->ctx, r->batch);
  if (r->gpus > 0)
    fprintf(out, ", %d x %s", r->gpus, hw->gpu->model);
  else
    fprintf(out, ", CPU (%s)", hw->cpu_desc[0] ? hw->cpu_desc : "host memory");
  if (r->tp > 1 || r->pp > 1)
    fprintf(out, ", TP %d x layer split %d", r->tp, r->pp);
  if (r->zero || r->offload)
    fprintf(out, ", ZeRO-%d%s", r->zero,
            r->offload == GR_OFFLOAD_OPTIMIZER ? " + optimizer offload" : r->offload == GR_OFFLOAD_PARAMS ? " + param offload" : "");
  fprintf(out, "\nMachine: %s\n", hw->name);
  print_tp_auto(out, pl);
  if (r->engine_given && r->engine_month > 0)
    fprintf(out, "Engine: %s, a build of %04d-%02d\n", r->engine, r->engine_month / 12, r->engine_month % 12 + 1);
  else if (r->engine_given)
    fprintf(out, "Engine: %s (the current release; NAME@YYYY-MM plans an older build)\n", r->engine);
  else if (r->job != GR_JOB_INFER || r->gpus == 0)
    fprintf(out, "Engine: %s (the default for %s; --engine to change)\n", r->engine,
            r->job != GR_JOB_INFER ? "training" : "CPU inference");
  else
    fprintf(out, "Engine: %s (the default for %s weights; --engine to change)\n", r->engine, gr_quant_family(&r->quant));
}

/* The speed section: each range, the basis, NCCL's raised level (RCCL
 * reads the same NCCL_P2P_LEVEL). */
static void print_speed(FILE *out, const struct gr_plan_req *r, const struct gr_plan_hw *hw, const struct gr_plan *p)
{
  fprintf(out, "\nSpeed (estimates; docs/plan.md gives the method):\n");
  print_range(out, "decode", &p->decode_tps, "tokens/s at the start of a reply", 1);
  char full[64];
  snprintf(full, sizeof(full), "tokens/s with %ld tokens in context", r->ctx);
  print_range(out, "", &p->decode_full_tps, full, 1);
  print_range(out, "prefill", &p->prefill_tps, "tokens/s", 0);
  print_range(out, "step", &p->step_s, "s", 2);
  print_range(out, "training", &p->train_tps, "tokens/s", 0);
  if (p->speed_basis[0])
    fprintf(out, "  basis: %s\n", p->speed_basis);
  if (p->allreduce_raised_gbps > 0 && p->allreduce_raised_level && r->gpus > 1)
    fprintf(out, "  the all-reduce runs at %.1f GB/s with %s's defaults; with NCCL_P2P_LEVEL=%s it would reach %.1f GB/s (gpurig topo explains)\n",
            p->allreduce_gbps, hw->collective ? hw->collective : "NCCL", p->allreduce_raised_level,
            p->allreduce_raised_gbps);
}

/* The nvidia-smi line that sets the limit on the planned GPUs (0 to
 * gpus-1: the plan does not say which of the machine's GPUs it runs on). */
static void limit_command(const struct gr_plan_req *r, char *buf, size_t cap)
{
  if (r->gpus == 1) {
    snprintf(buf, cap, "nvidia-smi -i 0 -pl %.0f", r->power_limit_w);
    return;
  }
  size_t off = (size_t)snprintf(buf, cap, "for i in");
  for (int i = 0; i < r->gpus && off + 24 < cap; i++)
    off += (size_t)snprintf(buf + off, cap - off, " %d", i);
  snprintf(buf + off, cap - off, "; do nvidia-smi -i $i -pl %.0f; done", r->power_limit_w);
}

/* "a -> b tokens/s (-x%)" of a speed with and without the power limit. */
static void print_change(FILE *out, const char *what, double free_tps, const struct gr_range *limited, const char *why)
{
  if (!limited->ok || free_tps <= 0)
    return;
  fprintf(out, "  %s %.1f -> %.1f tokens/s (%+.1f%%; %s)\n", what, free_tps, limited->mid,
          (limited->mid / free_tps - 1) * 100, why);
}

/* --power-limit: the clock it leaves, what it costs, the watts it saves and
 * the command that sets it (gpurig never does). */
static void print_power_limit(FILE *out, const struct gr_plan_req *r, const struct gr_plan_hw *hw,
                              const struct gr_plan *p)
{
  if (r->power_limit_w <= 0 || !hw->gpu)
    return;
  const struct gr_power_clock_row *row = gr_power_clock_row(hw->gpu);
  fprintf(out, "\nPower limit %.0f W per GPU (board power %.0f W%s):\n", r->power_limit_w, p->board_power_w,
          r->power_limit_rig ? "; the rig's `limit`, --power-limit to change" : "");
  fprintf(out, "  SM clock sustained under load: %.3f of boost (%.0f of %.0f MHz); memory clock unchanged\n",
          p->clock_share, gr_speed_clock_ghz(hw->gpu) * p->clock_share * 1000, gr_speed_clock_ghz(hw->gpu) * 1000);
  print_change(out, "decode", p->free_decode_tps, &p->decode_tps, "memory-bound: barely moves");
  print_change(out, "prefill", p->free_prefill_tps, &p->prefill_tps, "compute-bound: follows the clock");
  print_change(out, "training", p->free_train_tps, &p->train_tps, "compute-bound: follows the clock");
  fprintf(out, "  saves up to %.0f W per GPU, %.0f W for the %d GPUs (the draw a sustained compute-bound load reaches)\n",
          p->watts_saved_gpu_w, p->watts_saved_w, r->gpus);
  if (row)
    fprintf(out, "  clock model: data/power-clock.tsv (%s): %s\n", row->arch, row->source);
  char cmd[600];
  limit_command(r, cmd, sizeof(cmd));
  fprintf(out, "  to set it (as root; gpurig never does; it lasts until reboot): %s\n", cmd);
}

/* The cost section: price, power and energy, renting against buying. */
static void print_cost(FILE *out, const struct gr_plan_req *r, const struct gr_plan *p)
{
  fprintf(out, "\nCost:\n");
  if (p->price > 0)
    fprintf(out, "  price %.0f %s (%.1f %s per GiB of VRAM)\n", p->price, p->currency, p->price_per_vram_gib,
            p->currency);
  else
    fprintf(out, "  price not known (--price)\n");
  fprintf(out, "  power about %.0f W under load: %.1f kWh/day = %.2f %s/day at %.2f/kWh\n", p->power_w,
          p->energy_kwh_day, p->energy_cost_day, p->currency, r->kwh_price);
  if (p->rent_year > 0) {
    fprintf(out, "  renting %d GPUs at %.2f/GPU-hour: %.0f %s per year", r->gpus, r->rent, p->rent_year, p->currency);
    if (p->breakeven_days > 0)
      fprintf(out, "; buying pays back after %.0f days of use", p->breakeven_days);
    fprintf(out, "\n");
  }
}

void gr_print_plan(FILE *out, const struct gr_planned *pl)
{
  const struct gr_plan_req *r = &pl->req;
  const struct gr_model *m = &pl->model;
  const struct gr_plan_hw *hw = &pl->hw;
  const struct gr_plan *p = &pl->plan;
  if (m->kind == GR_MODEL_DIFFUSION) {
    print_diffusion(out, pl);
    return;
  }
  print_head(out, pl);
  print_model(out, m, p);
  char a[32];
  if (r->job == GR_JOB_LORA || r->job == GR_JOB_QLORA)
    fprintf(out, "Trainable: %s adapter parameters (LoRA rank %ld)\n", grouped(p->trainable, a, sizeof(a)), r->lora_rank);
  if (r->job != GR_JOB_FULL)
    fprintf(out, "Weights: %.2f GiB in %s (%.2f bits/weight)\n", p->weights.total / 1073741824.0, r->quant.name,
            p->weights.total * 8 / (double)p->params.total);
  if (r->job == GR_JOB_INFER && m->shape_known)
    fprintf(out, "KV cache: %.2f GiB for %ld tokens x %ld sequences (%.0f KiB per token, %s%s)\n", p->kv_gib, r->ctx,
            r->batch, gr_model_kv_bytes_per_token(m, r->kv_quant.bits / 8) / 1024, r->kv_quant.name,
            gr_model_windowed_layers(m, gr_engine_swa(r->engine)) > 0 && m->sliding_window < r->ctx
                ? "; the sliding window caps the windowed layers"
                : "");
  print_memory(out, r, hw, p);
  fprintf(out, "\nVerdict: %s\n", p->verdict);
  if (p->max_batch > 0 || p->max_ctx > 0)
    fprintf(out, "  largest batch that fits: %ld (at context %ld); largest context: %ld tokens (at batch %ld)\n",
            p->max_batch, r->ctx, p->max_ctx, r->batch);
  print_speed(out, r, hw, p);
  print_power_limit(out, r, hw, p);
  print_cluster(out, r, hw, p);
  print_cost(out, r, p);
  print_notes(out, pl);
}

static json_t *items_json(const struct gr_plan_item *it, size_t n)
{
  json_t *arr = json_array();
  for (size_t i = 0; i < n; i++) {
    json_t *o = json_object();
    json_object_set_new(o, "what", json_string(it[i].what));
    json_object_set_new(o, "gib", gr_json_rounded(it[i].gib, 3));
    json_object_set_new(o, "note", gr_json_text(it[i].note));
    json_array_append_new(arr, o);
  }
  return arr;
}

static json_t *range_json(const struct gr_range *r)
{
  if (!r->ok)
    return json_null();
  json_t *o = json_object();
  json_object_set_new(o, "low", gr_json_rounded(r->low, 3));
  json_object_set_new(o, "mid", gr_json_rounded(r->mid, 3));
  json_object_set_new(o, "high", gr_json_rounded(r->high, 3));
  return o;
}

static json_t *model_json(const struct gr_model *m, const struct gr_plan *p)
{
  json_t *o = json_object();
  json_object_set_new(o, "name", gr_json_text(m->name));
  json_object_set_new(o, "source", gr_json_text(m->source));
  json_object_set_new(o, "params_total", json_integer((json_int_t)p->params.total));
  json_object_set_new(o, "params_active", json_integer((json_int_t)p->params.active));
  json_object_set_new(o, "largest_layer_params", json_integer((json_int_t)p->params.largest_module));
  json_object_set_new(o, "layers", m->shape_known ? json_integer(m->layers) : json_null());
  json_object_set_new(o, "kv_bytes_per_token_fp16",
                      m->shape_known ? json_integer((json_int_t)gr_model_kv_bytes_per_token(m, 2)) : json_null());
  json_object_set_new(o, "max_ctx", m->max_ctx ? json_integer(m->max_ctx) : json_null());
  return o;
}

static json_t *diffusion_cost_json(const struct gr_plan *p)
{
  json_t *cost = json_object();
  json_object_set_new(cost, "price", p->price > 0 ? json_real(p->price) : json_null());
  json_object_set_new(cost, "currency", json_string(p->currency));
  json_object_set_new(cost, "price_per_vram_gib", gr_json_positive(p->price_per_vram_gib, 2));
  json_object_set_new(cost, "power_w", gr_json_rounded(p->power_w, 0));
  json_object_set_new(cost, "energy_kwh_per_day", gr_json_rounded(p->energy_kwh_day, 2));
  json_object_set_new(cost, "energy_cost_per_day", gr_json_rounded(p->energy_cost_day, 2));
  json_object_set_new(cost, "rent_per_year", gr_json_positive(p->rent_year, 0));
  return cost;
}

/* A diffusion plan: the parts' counts, images and pixels, no context and no tokens. */
static json_t *diffusion_json(const struct gr_planned *pl)
{
  const struct gr_plan_req *r = &pl->req;
  const struct gr_plan_hw *hw = &pl->hw;
  const struct gr_plan *p = &pl->plan;
  json_t *root = json_object(), *model = json_object(), *req = json_object(), *mem = json_object();
  json_t *host = json_object(), *verdict = json_object(), *speed = json_object();
  json_object_set_new(model, "name", gr_json_text(pl->model.name));
  json_object_set_new(model, "kind", json_string("diffusion"));
  json_object_set_new(model, "source", gr_json_text(pl->model.source));
  json_object_set_new(model, "params_total", json_integer((json_int_t)p->params.total));
  json_object_set_new(model, "unet_params", json_integer((json_int_t)p->unet_params));
  json_object_set_new(model, "text_encoder_params", json_integer((json_int_t)p->text_params));
  json_object_set_new(model, "vae_params", json_integer((json_int_t)p->vae_params));
  json_object_set_new(root, "model", model);
  json_object_set_new(req, "job", json_string(gr_job_name(r->job)));
  json_object_set_new(req, "resolution_px", json_integer(p->resolution));
  json_object_set_new(req, "batch_images", json_integer(r->batch));
  json_object_set_new(req, "gpus", json_integer(r->gpus));
  json_object_set_new(req, "gpu_model", json_string(hw->gpu->model));
  json_object_set_new(req, "optimizer", json_string(r->adam8bit ? "adam8bit" : "adamw"));
  json_object_set_new(req, "full_bf16", json_boolean(r->full_bf16));
  json_object_set_new(req, "checkpointing", json_boolean(r->checkpointing));
  json_object_set_new(req, "cache_latents", json_boolean(r->cache_latents));
  json_object_set_new(req, "cache_text_embeddings", json_boolean(r->cache_text));
  json_object_set_new(req, "lora_rank", r->job == GR_JOB_LORA ? json_integer(r->lora_rank) : json_null());
  json_object_set_new(req, "dataset_images", json_integer(r->dataset_images));
  json_object_set_new(req, "workers", json_integer(r->workers));
  json_object_set_new(req, "machine", gr_json_text(hw->name));
  json_object_set_new(root, "request", req);
  json_object_set_new(root, "trainable_params", json_integer((json_int_t)p->trainable));
  json_object_set_new(mem, "items", items_json(p->gpu, p->ngpu_items));
  json_object_set_new(mem, "total_gib", gr_json_rounded(p->gpu_need_gib, 3));
  json_object_set_new(mem, "capacity_gib", json_real(p->gpu_have_gib));
  json_object_set_new(root, "per_gpu", mem);
  json_object_set_new(host, "items", items_json(p->host, p->nhost_items));
  json_object_set_new(host, "peak_gib", gr_json_rounded(p->host_need_gib, 3));
  json_object_set_new(host, "ram_gib", gr_json_positive(hw->host_ram_gib, 1));
  json_object_set_new(root, "host", host);
  json_object_set_new(verdict, "fit", json_string(gr_fit_name(p->fit)));
  json_object_set_new(verdict, "text", json_string(p->verdict));
  json_object_set_new(verdict, "fix", p->fix[0] ? json_string(p->fix) : json_null());
  json_object_set_new(verdict, "fix_per_gpu_gib", p->fix[0] ? json_real(round(p->fix_need_gib * 1000) / 1000) : json_null());
  json_object_set_new(verdict, "max_batch_images", json_integer(p->max_batch));
  json_object_set_new(root, "verdict", verdict);
  json_object_set_new(speed, "step_s", json_null());
  json_object_set_new(speed, "images_per_s", json_null());
  json_object_set_new(speed, "basis", json_string("not estimated: no published step time with stated conditions"));
  json_object_set_new(root, "speed", speed);
  json_object_set_new(root, "cost", diffusion_cost_json(p));
  json_object_set_new(root, "notes", notes_json(pl));
  return root;
}

/* --nodes: the "cluster" object (docs/json.md). */
static json_t *cluster_json(const struct gr_plan_req *r, const struct gr_plan_hw *hw, const struct gr_plan *p)
{
  bool rate = hw->node_nic_gbps > 0;
  return json_pack("{s:i, s:i, s:s, s:i, s:i, s:o, s:o, s:f, s:o, s:o, s:f, s:o}", "nodes", hw->nodes, "gpus_per_node",
                   hw->gpus_per_node, "nics", hw->nic_desc, "tp", r->tp, "stages_per_node", r->pp / hw->nodes,
                   "nic_gbps", rate ? json_real(hw->node_nic_gbps) : json_null(), "busbw_gbps",
                   hw->net_busbw_gbps > 0 ? json_real(hw->net_busbw_gbps) : json_null(), "activation_bytes_per_token",
                   p->act_bytes, "pipeline_us_per_step", rate ? json_real(p->pipe_comm_s * 1e6) : json_null(),
                   "pipeline_ms_per_prompt", rate ? json_real(p->pipe_prefill_s * 1e3) : json_null(),
                   "host_need_gib_per_node", p->host_node_gib, "host_ram_gib_per_node",
                   hw->host_ram_gib > 0 ? json_real(hw->host_ram_gib) : json_null());
}

/* The request as planned (JSON "request"). */
static json_t *request_json(const struct gr_planned *pl)
{
  const struct gr_plan_req *r = &pl->req;
  const struct gr_plan_hw *hw = &pl->hw;
  json_t *req = json_object();
  json_object_set_new(req, "job", json_string(gr_job_name(r->job)));
  json_object_set_new(req, "quant", json_string(r->quant.name));
  json_object_set_new(req, "kv_quant", json_string(r->kv_quant.name));
  json_object_set_new(req, "engine", json_string(r->engine));
  json_object_set_new(req, "engine_given", json_boolean(r->engine_given));
  char month[16];
  snprintf(month, sizeof(month), "%04d-%02d", r->engine_month / 12, r->engine_month % 12 + 1);
  json_object_set_new(req, "engine_build_month", r->engine_month > 0 ? json_string(month) : json_null());
  json_object_set_new(req, "ctx", json_integer(r->ctx));
  json_object_set_new(req, "batch", json_integer(r->batch));
  json_object_set_new(req, "gpus", json_integer(r->gpus));
  json_object_set_new(req, "gpu_model", hw->gpu && r->gpus ? json_string(hw->gpu->model) : json_null());
  json_object_set_new(req, "tp", json_integer(r->tp));
  json_object_set_new(req, "pp", json_integer(r->pp));
  if (pl->ntp_tried) { /* --tp auto: every degree planned, the chosen one in tp */
    json_t *tried = json_array();
    for (size_t i = 0; i < pl->ntp_tried; i++)
      json_array_append_new(tried, json_pack("{s:i, s:s, s:o}", "tp", pl->tp_tried[i].tp, "fit",
                                             gr_fit_name(pl->tp_tried[i].fit), "decode_tokens_per_s",
                                             gr_json_positive(pl->tp_tried[i].decode_tps, 1)));
    json_object_set_new(req, "tp_auto", tried);
  }
  json_object_set_new(req, "zero", json_integer(r->zero));
  json_object_set_new(req, "offload", json_string(r->offload == GR_OFFLOAD_OPTIMIZER ? "optimizer"
                                                  : r->offload == GR_OFFLOAD_PARAMS  ? "params" : "none"));
  json_object_set_new(req, "machine", gr_json_text(hw->name));
  return req;
}

/* The fit verdict (JSON "verdict"). */
static json_t *verdict_json(const struct gr_planned *pl)
{
  const struct gr_plan *p = &pl->plan;
  bool sized = pl->model.shape_known && pl->req.gpus > 0;
  json_t *verdict = json_object();
  json_object_set_new(verdict, "fit", json_string(gr_fit_name(p->fit)));
  json_object_set_new(verdict, "text", json_string(p->verdict));
  json_object_set_new(verdict, "fix", p->fix[0] ? json_string(p->fix) : json_null());
  json_object_set_new(verdict, "fix_per_gpu_gib", p->fix[0] ? json_real(round(p->fix_need_gib * 1000) / 1000) : json_null());
  /* 0 is an answer (not even batch 1 fits); null only where no shape is known */
  json_object_set_new(verdict, "max_batch", sized ? json_integer(p->max_batch) : json_null());
  json_object_set_new(verdict, "max_ctx", sized ? json_integer(p->max_ctx) : json_null());
  return verdict;
}

/* The speeds with their ranges and basis (JSON "speed"). */
static json_t *speed_json(const struct gr_plan *p)
{
  json_t *speed = json_object();
  json_object_set_new(speed, "decode_tokens_per_s", range_json(&p->decode_tps));
  json_object_set_new(speed, "decode_full_ctx_tokens_per_s", range_json(&p->decode_full_tps));
  json_object_set_new(speed, "prefill_tokens_per_s", range_json(&p->prefill_tps));
  json_object_set_new(speed, "step_s", range_json(&p->step_s));
  json_object_set_new(speed, "train_tokens_per_s", range_json(&p->train_tps));
  json_object_set_new(speed, "allreduce_busbw_gbps", gr_json_positive(p->allreduce_gbps, 2));
  json_object_set_new(speed, "allreduce_busbw_raised_gbps", gr_json_positive(p->allreduce_raised_gbps, 2));
  json_object_set_new(speed, "allreduce_raised_nccl_p2p_level",
                      p->allreduce_raised_level ? json_string(p->allreduce_raised_level) : json_null());
  json_object_set_new(speed, "basis", json_string(p->speed_basis));
  return speed;
}

/* The limited speed as a share of the speed without the limit. */
static json_t *share_json(double free_tps, const struct gr_range *limited)
{
  return limited->ok && free_tps > 0 ? gr_json_rounded(limited->mid / free_tps, 4) : json_null();
}

/* --power-limit (JSON "power_limit", null without one). */
static json_t *power_limit_json(const struct gr_plan_req *r, const struct gr_plan_hw *hw, const struct gr_plan *p)
{
  if (r->power_limit_w <= 0 || !hw->gpu)
    return json_null();
  json_t *o = json_object();
  char cmd[600];
  limit_command(r, cmd, sizeof(cmd));
  json_object_set_new(o, "power_limit_w", json_real(r->power_limit_w));
  json_object_set_new(o, "power_limit_from", json_string(r->power_limit_rig ? "rig" : "option"));
  json_object_set_new(o, "board_power_w", json_real(p->board_power_w));
  json_object_set_new(o, "sm_clock_share", gr_json_rounded(p->clock_share, 4));
  json_object_set_new(o, "sm_clock_mhz", gr_json_rounded(gr_speed_clock_ghz(hw->gpu) * p->clock_share * 1000, 0));
  json_object_set_new(o, "decode_share", share_json(p->free_decode_tps, &p->decode_tps));
  json_object_set_new(o, "prefill_share", share_json(p->free_prefill_tps, &p->prefill_tps));
  json_object_set_new(o, "train_share", share_json(p->free_train_tps, &p->train_tps));
  json_object_set_new(o, "watts_saved_gpu_w", gr_json_rounded(p->watts_saved_gpu_w, 0));
  json_object_set_new(o, "watts_saved_w", gr_json_rounded(p->watts_saved_w, 0));
  json_object_set_new(o, "command", json_string(cmd));
  return o;
}

/* Price, power and energy (JSON "cost"). */
static json_t *cost_json(const struct gr_plan *p)
{
  json_t *cost = json_object();
  json_object_set_new(cost, "price", p->price > 0 ? json_real(p->price) : json_null());
  json_object_set_new(cost, "currency", json_string(p->currency));
  json_object_set_new(cost, "price_per_vram_gib", gr_json_positive(p->price_per_vram_gib, 2));
  json_object_set_new(cost, "power_w", gr_json_rounded(p->power_w, 0));
  json_object_set_new(cost, "energy_kwh_per_day", gr_json_rounded(p->energy_kwh_day, 2));
  json_object_set_new(cost, "energy_cost_per_day", gr_json_rounded(p->energy_cost_day, 2));
  json_object_set_new(cost, "rent_per_year", gr_json_positive(p->rent_year, 0));
  json_object_set_new(cost, "breakeven_days", gr_json_positive(p->breakeven_days, 0));
  return cost;
}

json_t *gr_plan_to_json(const struct gr_planned *pl)
{
  const struct gr_plan_req *r = &pl->req;
  const struct gr_model *m = &pl->model;
  const struct gr_plan_hw *hw = &pl->hw;
  const struct gr_plan *p = &pl->plan;
  if (m->kind == GR_MODEL_DIFFUSION)
    return diffusion_json(pl);
  json_t *root = json_object(), *mem = json_object(), *host = json_object();
  json_object_set_new(root, "model", model_json(m, p));
  json_object_set_new(root, "request", request_json(pl));
  json_object_set_new(root, "trainable_params", json_integer((json_int_t)p->trainable));
  json_object_set_new(root, "weights_gib", gr_json_rounded(p->weights.total / 1073741824.0, 3));
  json_object_set_new(root, "kv_cache_gib", gr_json_rounded(p->kv_gib, 3));
  json_object_set_new(root, "model_states_gb", r->job == GR_JOB_FULL ? gr_json_rounded(p->model_states_gb, 2) : json_null());
  json_object_set_new(mem, "items", items_json(p->gpu, p->ngpu_items));
  json_object_set_new(mem, "total_gib", gr_json_rounded(p->gpu_need_gib, 3));
  json_object_set_new(mem, "capacity_gib", r->gpus ? json_real(p->gpu_have_gib) : json_null());
  json_object_set_new(root, r->gpus ? "per_gpu" : "cpu", mem);
  json_object_set_new(host, "items", items_json(p->host, p->nhost_items));
  json_object_set_new(host, "peak_gib", gr_json_rounded(p->host_need_gib, 3));
  json_object_set_new(root, "host", host);
  json_object_set_new(root, "verdict", verdict_json(pl));
  if (hw->nodes > 1)
    json_object_set_new(root, "cluster", cluster_json(r, hw, p));
  json_object_set_new(root, "speed", speed_json(p));
  json_object_set_new(root, "power_limit", power_limit_json(r, hw, p));
  json_object_set_new(root, "cost", cost_json(p));
  json_object_set_new(root, "notes", notes_json(pl));
  return root;
}

json_t *gr_deepspeed_to_json(const struct gr_planned *pl, const char *printout)
{
  struct gr_param_count c;
  gr_model_count(&pl->model, &c);
  json_t *o = json_object();
  json_object_set_new(o, "estimator", json_string(pl->req.zero >= 3 ? "deepspeed.estimate_zero3_model_states_mem_needs_all_cold"
                                                                     : "deepspeed.estimate_zero2_model_states_mem_needs_all_cold"));
  json_object_set_new(o, "total_params", json_integer((json_int_t)c.total));
  json_object_set_new(o, "largest_layer_params", json_integer((json_int_t)c.largest_module));
  json_object_set_new(o, "printout", json_string(printout));
  return o;
}

/* ---- plan before buying ---- */

/* Shop rows by the GPUs they take (fewest first, none last), then by VRAM,
 * largest first. */
static int shop_order(const void *a, const void *b)
{
  const struct gr_shop_row *x = a, *y = b;
  /* offloading rows after the others: they fit, slowly */
  int nx = (x->gpus ? x->gpus : 1000) + (strstr(x->fix, "--offload") ? 100 : 0);
  int ny = (y->gpus ? y->gpus : 1000) + (strstr(y->fix, "--offload") ? 100 : 0);
  if (nx != ny)
    return nx - ny;
  if (x->gpu->mem_gib != y->gpu->mem_gib)
    return x->gpu->mem_gib < y->gpu->mem_gib ? 1 : -1;
  return strcmp(x->gpu->model, y->gpu->model);
}

static struct gr_shop_row *shop_sorted(const struct gr_shop *s)
{
  struct gr_shop_row *rows = xcalloc(s->nrows + 1, sizeof(*rows));
  memcpy(rows, s->rows, s->nrows * sizeof(*rows));
  qsort(rows, s->nrows, sizeof(*rows), shop_order);
  return rows;
}

void gr_print_shop(FILE *out, const struct gr_shop *s)
{
  const struct gr_planned *pl = &s->base;
  const struct gr_plan_req *r = &pl->req;
  const struct gr_plan *p = &pl->plan;
  fprintf(out, "Plan before buying: %s, %s", pl->model.name, gr_job_name(r->job));
  if (r->job != GR_JOB_FULL)
    fprintf(out, ", %s", r->quant.name);
  fprintf(out, "%s\n", pl->model.shape_known ? "" : " (shape unknown: model states and weights only)");
  fprintf(out, "Machine: none: no GPU here and none named (--gpu MODEL or --rig RIG plans on one)\n");
  fprintf(out, "Engine: %s\n", r->engine);
  print_model(out, &pl->model, p);
  if (r->job == GR_JOB_FULL)
    fprintf(out, "Model states: %.0f GB (%d bytes per parameter: fp16 weights 2, %s gradients %d, fp32 master "
            "weights, Adam m and v 12; GB = 10^9 bytes)\n", p->model_states_gb, r->state_bytes,
            r->state_bytes == 18 ? "fp32" : "fp16", r->state_bytes == 18 ? 4 : 2);
  else
    fprintf(out, "Weights: %.2f GiB in %s\n", p->weights.total / 1073741824.0, r->quant.name);
  fprintf(out, "\n%-26s", "Memory per GPU, GiB");
  for (int i = 0; i < GR_SHOP_COUNTS; i++)
    fprintf(out, " %4d GPU%s", s->counts[i], s->counts[i] > 1 ? "s" : " ");
  char asked[48];
  snprintf(asked, sizeof(asked), "as asked%s", r->job == GR_JOB_INFER ? " (layer split)" : r->zero ? "" : " (ZeRO-0)");
  fprintf(out, "\n  %-24s", asked);
  for (int i = 0; i < GR_SHOP_COUNTS; i++)
    fprintf(out, " %9.1f", s->need_gib[i]);
  if (r->job != GR_JOB_INFER && r->zero < 3) {
    fprintf(out, "\n  %-24s", "with ZeRO-3 / FSDP");
    for (int i = 0; i < GR_SHOP_COUNTS; i++)
      fprintf(out, " %9.1f", s->zero3_gib[i]);
  }
  fprintf(out, "\n");
  fprintf(out, "Host RAM: %.1f GiB with 1 GPU (checkpoint loading, offloaded states)\n", p->host_need_gib);
  struct gr_shop_row *rows = shop_sorted(s);
  fprintf(out, "\nCatalog GPUs that hold it (data/gpus.tsv): the fewest of 1, 2, 4 or 8 and the cheapest change it\n"
               "takes, offloading only where no count up to 8 holds it otherwise:\n");
  fprintf(out, "  %-24s %8s %5s %12s  %s\n", "GPU", "VRAM GiB", "GPUs", "GiB per GPU", "change");
  for (size_t i = 0; i < s->nrows; i++) {
    if (rows[i].gpus)
      fprintf(out, "  %-24s %8.0f %5d %12.1f  %s\n", rows[i].gpu->model, rows[i].gpu->mem_gib, rows[i].gpus,
              rows[i].need_gib, rows[i].fix[0] ? rows[i].fix : "as asked");
    else
      fprintf(out, "  %-24s %8.0f %5s %12s  %s\n", rows[i].gpu->model, rows[i].gpu->mem_gib, "-", "-",
              "8 do not hold it with any change gpurig tries");
  }
  free(rows);
}

json_t *gr_shop_to_json(const struct gr_shop *s)
{
  const struct gr_planned *pl = &s->base;
  json_t *root = json_object(), *req = json_object(), *need = json_array(), *gpus = json_array();
  json_object_set_new(root, "model", model_json(&pl->model, &pl->plan));
  json_object_set_new(req, "job", json_string(gr_job_name(pl->req.job)));
  json_object_set_new(req, "quant", json_string(pl->req.quant.name));
  json_object_set_new(req, "engine", json_string(pl->req.engine));
  json_object_set_new(req, "zero", json_integer(pl->req.zero));
  json_object_set_new(req, "machine", json_null());
  json_object_set_new(root, "request", req);
  json_object_set_new(root, "model_states_gb",
                      pl->req.job == GR_JOB_FULL ? json_real(pl->plan.model_states_gb) : json_null());
  json_object_set_new(root, "weights_gib", json_real(pl->plan.weights.total / 1073741824.0));
  for (int i = 0; i < GR_SHOP_COUNTS; i++) {
    json_t *o = json_object();
    json_object_set_new(o, "gpus", json_integer(s->counts[i]));
    json_object_set_new(o, "per_gpu_gib", json_real(round(s->need_gib[i] * 1000) / 1000));
    json_object_set_new(o, "per_gpu_zero3_gib",
                        pl->req.job != GR_JOB_INFER ? json_real(round(s->zero3_gib[i] * 1000) / 1000) : json_null());
    json_array_append_new(need, o);
  }
  json_object_set_new(root, "per_gpu_need", need);
  json_object_set_new(root, "host_need_gib", json_real(round(pl->plan.host_need_gib * 1000) / 1000));
  struct gr_shop_row *rows = shop_sorted(s);
  for (size_t i = 0; i < s->nrows; i++) {
    json_t *o = json_object();
    json_object_set_new(o, "gpu", json_string(rows[i].gpu->model));
    json_object_set_new(o, "mem_gib", json_real(rows[i].gpu->mem_gib));
    json_object_set_new(o, "gpus", rows[i].gpus ? json_integer(rows[i].gpus) : json_null());
    json_object_set_new(o, "per_gpu_gib", rows[i].gpus ? json_real(round(rows[i].need_gib * 1000) / 1000) : json_null());
    json_object_set_new(o, "change", rows[i].gpus && rows[i].fix[0] ? json_string(rows[i].fix) : json_null());
    json_array_append_new(gpus, o);
  }
  free(rows);
  json_object_set_new(root, "catalog_gpus", gpus);
  return root;
}
