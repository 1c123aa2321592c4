/* The planner against published figures: exact parameter counts, LoRA
 * adapters, KV cache, llama.cpp file sizes, DeepSpeed's printout, the seed's
 * 18 bytes/parameter, and the seed claims' predicted ranges. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

#include "facts/catalog.h"
#include "plan/llm.h"
#include "plan/plan.h"
#include "plan/quant.h"
#include "analysis/machine.h"
#include "load/rig.h"
#include "plan/request.h"
#include "plan/engine.h"
#include "plan/power.h"

static int setup(void **state)
{
  struct gr_err err = {0};
  (void)state;
  if (gr_facts_load(&err) != 0) {
    print_error("%s\n", err.msg);
    return -1;
  }
  return 0;
}

static void builtin(const char *name, struct gr_model *m)
{
  struct gr_err err = {0};
  if (gr_model_builtin(name, m, &err) != 0)
    fail_msg("%s", err.msg);
}

static void quant(const char *name, struct gr_quant *q)
{
  struct gr_err err = {0};
  if (gr_quant_parse(name, q, &err) != 0)
    fail_msg("%s", err.msg);
}

static void exact_parameter_counts(void **state)
{
  static const struct {
    const char *name;
    uint64_t total, active;
  } want[] = {
      {"llama-2-7b", 6738415616ULL, 6738415616ULL},
      {"llama-3-8b", 8030261248ULL, 8030261248ULL},
      {"mixtral-8x7b", 46702792704ULL, 12879925248ULL},
      {"llama-2-70b", 68976648192ULL, 68976648192ULL},
      {"qwen2.5-72b", 72706203648ULL, 72706203648ULL}, /* model card: 72.7B */
  };
  (void)state;
  for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
    struct gr_model m;
    struct gr_param_count c;
    builtin(want[i].name, &m);
    gr_model_count(&m, &c);
    assert_int_equal(c.total, want[i].total);
    assert_int_equal(c.active, want[i].active);
    gr_model_free(&m);
  }
}

static void config_json_matches_builtin(void **state)
{
  const char *dir = getenv("GPURIG_TEST_DATA");
  char path[512];
  struct gr_model m;
  struct gr_param_count c;
  struct gr_err err = {0};
  (void)state;
  assert_non_null(dir);
  snprintf(path, sizeof(path), "%s/configs/mixtral-8x7b.json", dir);
  if (gr_model_load_config(path, &m, &err) != 0)
    fail_msg("%s", err.msg);
  gr_model_count(&m, &c);
  assert_int_equal(c.total, 46702792704ULL);
  assert_int_equal(c.active, 12879925248ULL);
  gr_model_free(&m);
}

static void bad_configs_name_file_line_key(void **state)
{
  static const struct {
    const char *text, *want;
  } bad[] = {
      {"{\n \"num_hidden_layers\": 2,\n \"hidden_size\": -8\n}", "cfg.json:3: key \"hidden_size\": -8 is out of range"},
      {"{\"hidden_size\": 8}", "cfg.json:1: key \"num_hidden_layers\": missing"},
      {"{\"num_hidden_layers\": 2.5}", "cfg.json:1: key \"num_hidden_layers\": must be an integer, not a fraction"},
      {"[1, 2]", "cfg.json:1: a config.json is one JSON object"},
      {"{\"a\": }", "cfg.json:1:7: not valid JSON"},
      {"{\"num_hidden_layers\": 2, \"hidden_size\": 8, \"intermediate_size\": 8, \"num_attention_heads\": 3, "
       "\"vocab_size\": 8}", "key \"num_attention_heads\": 3 does not divide hidden_size 8"},
      {"{\"num_hidden_layers\": 2, \"hidden_size\": 8, \"intermediate_size\": 8, \"num_attention_heads\": 2, "
       "\"vocab_size\": 8, \"num_local_experts\": 4}", "key \"num_experts_per_tok\": missing"},
  };
  (void)state;
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    struct gr_model m;
    struct gr_err err = {0};
    assert_int_equal(gr_model_parse_config("cfg.json", bad[i].text, strlen(bad[i].text), &m, &err), -1);
    assert_int_equal(err.code, GR_EXIT_FAIL);
    if (!strstr(err.msg, bad[i].want))
      fail_msg("case %zu: got '%s', want '%s'", i, err.msg, bad[i].want);
  }
}

/* quantization_config: the checkpoint's format becomes the default --quant;
 * a malformed one is an error naming the key, one gpurig does not plan is a
 * hint that no --quant name matches (refused by the request). */
static void quant_config_hints(void **state)
{
  static const char base[] = "{\"num_hidden_layers\": 2, \"hidden_size\": 8, \"intermediate_size\": 8, "
                             "\"num_attention_heads\": 2, \"vocab_size\": 8,\n \"quantization_config\": %s}";
  static const struct {
    const char *q, *hint, *error;
  } cases[] = {
      {"{\"quant_method\": \"gptq\", \"bits\": 4, \"group_size\": 32}", "gptq-g32", NULL},
      {"{\"quant_method\": \"awq\", \"bits\": 4}", "awq-g128", NULL},
      {"{\"quant_method\": \"gptq\", \"bits\": 4, \"group_size\": -1}", "gptq-g4096", NULL},
      {"{\"quant_method\": \"gptq\", \"bits\": 8}", "gptq8-g128", NULL}, /* 8-bit GPTQ is not 4-bit */
      {"{\"quant_method\": \"awq\", \"bits\": 8}", "awq with 8 bits (AutoAWQ kernels are 4-bit only)", NULL},
      {"{\"quant_method\": \"fp8\", \"weight_block_size\": [128, 128]}", "fp8-b128", NULL},
      {"{\"quant_method\": \"fbgemm_fp8\"}", "fp8", NULL},
      {"{\"quant_method\": \"compressed-tensors\", \"config_groups\": {\"group_0\": {\"weights\": "
       "{\"num_bits\": 4, \"type\": \"int\", \"group_size\": 128}}}}", "gptq-g128", NULL},
      {"{\"quant_method\": \"compressed-tensors\", \"config_groups\": {\"group_0\": {\"weights\": "
       "{\"num_bits\": 8, \"type\": \"float\"}}}}", "fp8", NULL},
      {"{\"quant_method\": \"hqq\"}", "quant_method \"hqq\"", NULL},
      {"{\"quant_method\": \"bitsandbytes\", \"load_in_4bit\": true}", "nf4", NULL},
      {"null", NULL, NULL},
      {"{\"quant_method\": \"gptq\", \"bits\": -4}", NULL, "cfg.json:2: key \"bits\": -4: gptq checkpoints have"},
      {"{\"quant_method\": \"gptq\", \"bits\": 1000}", NULL, "key \"bits\": 1000: gptq checkpoints have 2, 3, 4"},
      {"{\"quant_method\": \"awq\", \"bits\": \"4\"}", NULL, "key \"bits\": must be an integer (2, 3, 4 or 8), not a string"},
      {"{\"quant_method\": \"gptq\", \"group_size\": 0}", NULL, "key \"group_size\": 0: expected -1"},
      {"{\"bits\": 4}", NULL, "key \"quantization_config\": has no \"quant_method\""},
      {"\"gptq\"", NULL, "key \"quantization_config\": must be an object, not a string"},
      {"{\"quant_method\": \"bitsandbytes\", \"load_in_4bit\": 1}", NULL, "key \"load_in_4bit\": must be true"},
  };
  (void)state;
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    char text[1024];
    struct gr_model m;
    struct gr_err err = {0};
    snprintf(text, sizeof(text), base, cases[i].q);
    int rc = gr_model_parse_config("cfg.json", text, strlen(text), &m, &err);
    if (cases[i].error && (rc == 0 || !strstr(err.msg, cases[i].error)))
      fail_msg("case %zu: got '%s', want '%s'", i, rc ? err.msg : "no error", cases[i].error);
    if (cases[i].error)
      continue;
    if (rc != 0)
      fail_msg("case %zu: %s", i, err.msg);
    if (cases[i].hint ? !m.quant_hint || strcmp(m.quant_hint, cases[i].hint) != 0 : m.quant_hint != NULL)
      fail_msg("case %zu: hint '%s', want '%s'", i, m.quant_hint ? m.quant_hint : "(none)",
               cases[i].hint ? cases[i].hint : "(none)");
    gr_model_free(&m);
  }
}

static void lora_and_kv(void **state)
{
  struct gr_model m;
  (void)state;
  builtin("llama-2-7b", &m);
  assert_int_equal(gr_lora_trainable(&m, 8, GR_LORA_Q | GR_LORA_V), 4194304);
  assert_int_equal(gr_lora_trainable(&m, 16, GR_LORA_ALL), 39976960); /* all-linear r=16 printouts */
  gr_model_free(&m);
  builtin("llama-3-8b", &m);
  /* llama.cpp #9881: KV self size = 1024.00 MiB at n_ctx 8192, f16 */
  assert_true(fabs(gr_model_kv_bytes_per_token(&m, 2) * 8192 - 1024.0 * 1048576) < 1);
  gr_model_free(&m);
  builtin("mistral-7b", &m);
  /* vLLM keeps a rolling window on every windowed layer; llama.cpp and
   * transformers keep Mistral v0.1's whole context (no interleaved layers) */
  assert_true(fabs(gr_model_kv_bytes(&m, 2, 32768, GR_SWA_ALL) - gr_model_kv_bytes_per_token(&m, 2) * 4096) < 1);
  assert_true(fabs(gr_model_kv_bytes(&m, 2, 32768, GR_SWA_INTERLEAVED) - gr_model_kv_bytes_per_token(&m, 2) * 32768) < 1);
  assert_int_equal(gr_model_windowed_layers(&m, GR_SWA_INTERLEAVED), 0);
  gr_model_free(&m);
  /* Gemma-2: four norms per layer (9,241,705,984 and 27,227,128,320 parameters,
   * the safetensors totals), local and global layers alternating: at 8192
   * tokens 21 of 42 layers keep 4096 under every engine here */
  struct gr_param_count c;
  builtin("gemma-2-9b", &m);
  gr_model_count(&m, &c);
  assert_int_equal(c.total, 9241705984ULL);
  assert_int_equal(gr_model_windowed_layers(&m, GR_SWA_INTERLEAVED), 21);
  assert_true(fabs(gr_model_kv_bytes(&m, 2, 8192, GR_SWA_INTERLEAVED) -
                   gr_model_kv_bytes_per_token(&m, 2) / 42 * (21.0 * 4096 + 21.0 * 8192)) < 1);
  gr_model_free(&m);
  builtin("gemma-2-27b", &m);
  gr_model_count(&m, &c);
  assert_int_equal(c.total, 27227128320ULL);
  gr_model_free(&m);
  /* shared experts, dense first layers, latent attention: DeepSeek-V2-Lite
   * 15.7B (2.4B active without the embedding), DeepSeek-V3 671B without
   * its MTP module (37B active), Qwen1.5-MoE-A2.7B 14.3B (2.7B active) */
  static const struct {
    const char *file;
    uint64_t total, active;
    double kv_per_token;
  } moe[] = {{"deepseek-v2-lite.json", 15706484224ULL, 2661150208ULL, 27 * 576 * 2},
             {"deepseek-v3.json", 671026419200ULL, 37552297472ULL, 61 * 576 * 2},
             {"qwen1.5-moe-a2.7b.json", 14315784192ULL, 2689173504ULL, 2.0 * 24 * 16 * 128 * 2}};
  for (size_t i = 0; i < sizeof(moe) / sizeof(moe[0]); i++) {
    char path[4096];
    struct gr_err err = {0};
    snprintf(path, sizeof(path), "%s/configs/%s", getenv("GPURIG_TEST_DATA"), moe[i].file);
    if (gr_model_load_config(path, &m, &err) != 0)
      fail_msg("%s", err.msg);
    gr_model_count(&m, &c);
    assert_int_equal(c.total, moe[i].total);
    assert_int_equal(c.active, moe[i].active);
    assert_true(fabs(gr_model_kv_bytes_per_token(&m, 2) - moe[i].kv_per_token) < 1e-6);
    gr_model_free(&m);
  }
}

/* llama.cpp tools/quantize sizes for Llama-3-8B (GiB) and TheBloke's
 * llama-2-70b.Q4_K_M.gguf (41.42 GB): the per-tensor rules must land there. */
static void gguf_file_sizes(void **state)
{
  static const struct {
    const char *model, *quant;
    double gib;
  } want[] = {
      {"llama-3-8b", "q4_0", 4.34},   {"llama-3-8b", "q4_k_s", 4.37}, {"llama-3-8b", "q4_k_m", 4.58},
      {"llama-3-8b", "q5_k_m", 5.33}, {"llama-3-8b", "q6_k", 6.14},   {"llama-3-8b", "q8_0", 7.96},
      {"llama-2-7b", "q4_0", 3.56},   {"llama-2-70b", "q4_k_m", 41.42e9 / 1073741824.0},
  };
  (void)state;
  size_t n = sizeof(want) / sizeof(want[0]);
  /* twice, the second time backwards: the remembered answers (the last four)
   * and the recomputed ones must both be each pair's own */
  for (size_t k = 0; k < 2 * n; k++) {
    size_t i = k < n ? k : 2 * n - 1 - k;
    struct gr_model m;
    struct gr_quant q;
    struct gr_weight_bytes w;
    builtin(want[i].model, &m);
    quant(want[i].quant, &q);
    gr_quant_model_bytes(&q, &m, &w);
    double gib = w.total / 1073741824.0;
    if (fabs(gib - want[i].gib) > 0.015)
      fail_msg("%s %s: %.3f GiB, published %.2f", want[i].model, want[i].quant, gib, want[i].gib);
    if (i == n - 1) { /* the same format on a model of half the layers: not the remembered answer */
      struct gr_weight_bytes half;
      m.layers /= 2;
      gr_quant_model_bytes(&q, &m, &half);
      assert_true(half.layers > 0.49 * w.layers && half.layers < 0.51 * w.layers);
    }
    gr_model_free(&m);
  }
}

static void deepspeed_printout(void **state)
{
  struct gr_model m;
  struct gr_param_count c;
  char buf[2048];
  (void)state;
  builtin("llama-2-7b", &m);
  gr_model_count(&m, &c);
  gr_plan_deepspeed(3, c.total, c.largest_module, 4, 1, buf, sizeof(buf));
  assert_non_null(strstr(buf, "SW: Model with 6738M total params, 131M largest layer params."));
  assert_non_null(strstr(buf, "   2.93GB |  28.73GB | offload_param=none, offload_optimizer=none, zero_init=1"));
  assert_non_null(strstr(buf, "  150.62GB |   3.63GB | offload_param=none, offload_optimizer=OffloadDeviceEnum.cpu, zero_init=1"));
  gr_model_free(&m);
}

static void range_inside(const struct gr_range *r)
{
  if (r->ok) {
    assert_true(r->low <= r->mid + 1e-9);
    assert_true(r->mid <= r->high + 1e-9);
  }
}

/* Every speed range holds its middle figure, also where the all-reduce
 * dominates the step (perf.md §8: "step 15.63 s (range 16.16 to 25.22)"),
 * over bus bandwidths from 0.1 to 1000 GB/s, 2 to 64 GPUs, every job. */
static void ranges_hold_their_middle(void **state)
{
  static const double busbw[] = {0.1, 1, 10, 100, 1000};
  static const int gpus[] = {2, 8, 64};
  static const enum gr_job jobs[] = {GR_JOB_FULL, GR_JOB_LORA, GR_JOB_INFER};
  struct gr_model m;
  struct gr_plan *p = calloc(1, sizeof(*p));
  (void)state;
  builtin("llama-2-70b", &m);
  for (size_t b = 0; b < 5; b++)
    for (size_t g = 0; g < 3; g++)
      for (size_t j = 0; j < 3; j++) {
        struct gr_plan_hw hw = {.gpu = gr_catalog_find("RTX 3090"), .ngpus = gpus[g], .host_link_gbps = 31.5};
        for (int k = 2; k <= 64; k++)
          hw.busbw_gbps[k] = busbw[b];
        struct gr_plan_req r = {.job = jobs[j], .tp = 1, .pp = jobs[j] == GR_JOB_INFER ? gpus[g] : 1, .batch = 4,
                                .ctx = 2048, .state_bytes = 18, .zero = jobs[j] == GR_JOB_INFER ? 0 : 3,
                                .gpus = gpus[g], .lora_rank = 8, .lora_targets = GR_LORA_Q | GR_LORA_V,
                                .engine = jobs[j] == GR_JOB_INFER ? "llama.cpp" : "transformers"};
        quant(jobs[j] == GR_JOB_INFER ? "q4_k_m" : "bf16", &r.quant);
        quant("fp16", &r.kv_quant);
        gr_plan_run(&r, &m, &hw, p);
        range_inside(&p->step_s);
        range_inside(&p->train_tps);
        range_inside(&p->decode_tps);
        range_inside(&p->decode_full_tps);
        range_inside(&p->prefill_tps);
      }
  free(p);
  gr_model_free(&m);
}

static void plan_on(const char *rig_or_gpu, bool is_rig, int gpus, struct gr_plan_req *r, const struct gr_model *m,
                    struct gr_plan *p)
{
  struct gr_machine mc = {0};
  struct gr_plan_hw hw;
  struct gr_err err = {0};
  memset(&hw, 0, sizeof(hw));
  if (is_rig) {
    struct gr_source src = {.kind = GR_SRC_RIG, .path = rig_or_gpu};
    if (gr_machine_open(&src, GR_MACHINE_PREDICT | GR_MACHINE_GROUPS, &mc, &err) != 0)
      fail_msg("%s", err.msg);
    gr_plan_hw_from_topo(&mc.topo, &mc.prediction, &hw);
  }
  r->gpus = gpus;
  if (gr_plan_check(r, m, &hw, &err) != 0)
    fail_msg("%s", err.msg);
  gr_plan_run(r, m, &hw, p);
  gr_machine_close(&mc);
}

static void seed_figures_18_bytes(void **state)
{
  static const double params[] = {7e9, 34e9, 175e9}, gb[] = {126, 612, 3150};
  (void)state;
  for (int i = 0; i < 3; i++) {
    struct gr_model m;
    struct gr_plan_req r = {.job = GR_JOB_FULL, .tp = 1, .pp = 1, .batch = 1, .ctx = 2048, .state_bytes = 18};
    struct gr_plan *p = calloc(1, sizeof(*p));
    quant("bf16", &r.quant);
    quant("fp16", &r.kv_quant);
    gr_model_from_params(params[i], &m);
    plan_on("tyan-s8030", true, 4, &r, &m, p);
    assert_true(fabs(p->model_states_gb - gb[i]) < 1e-6);
    assert_int_equal(p->fit, GR_FIT_NO);
    free(p);
    gr_model_free(&m);
  }
}

/* Seed 000: ~16 tok/s for Mixtral Q4_K_M on an EPYC 7763, 8-channel DDR4,
 * "theoretical 170GB/s" (DDR4-2666). */
static void seed_mixtral_on_cpu(void **state)
{
  struct gr_model m;
  struct gr_plan_req r = {.job = GR_JOB_INFER, .tp = 1, .pp = 1, .batch = 1, .ctx = 512};
  struct gr_plan_hw hw;
  struct gr_err err = {0};
  struct gr_plan *p = calloc(1, sizeof(*p));
  (void)state;
  memset(&hw, 0, sizeof(hw));
  hw.cpu_bw_gbps = 8 * 8 * 2666 / 1000.0;
  builtin("mixtral-8x7b", &m);
  quant("q4_k_m", &r.quant);
  quant("fp16", &r.kv_quant);
  if (gr_plan_check(&r, &m, &hw, &err) != 0)
    fail_msg("%s", err.msg);
  gr_plan_run(&r, &m, &hw, p);
  assert_true(p->decode_tps.low <= 16 && 16 <= p->decode_tps.high);
  free(p);
  gr_model_free(&m);
}

/* Seed 002: 4x A5000, two Llama-2-70B instances at 20 tok/s each: two GPUs
 * per instance. Plausible with tensor parallel, not with a layer split. */
static void seed_a5000_two_instances(void **state)
{
  struct gr_model m;
  struct gr_plan *p = calloc(1, sizeof(*p));
  (void)state;
  builtin("llama-2-70b", &m);
  struct gr_plan_req r = {.job = GR_JOB_INFER, .tp = 2, .pp = 1, .batch = 1, .ctx = 512};
  quant("q4_k_m", &r.quant);
  quant("fp16", &r.kv_quant);
  plan_on("asus-esc4000", true, 2, &r, &m, p);
  assert_true(p->fit != GR_FIT_NO);
  assert_true(p->decode_tps.low <= 20 && 20 <= p->decode_tps.high);
  r.tp = 1;
  r.pp = 2;
  plan_on("asus-esc4000", true, 2, &r, &m, p);
  assert_true(p->decode_tps.high < 20);
  free(p);
  gr_model_free(&m);
}

static void deepspeed_zero3_fits_as_planned(void **state)
{
  struct gr_model m;
  struct gr_plan *p = calloc(1, sizeof(*p));
  (void)state;
  builtin("llama-2-7b", &m);
  struct gr_plan_req r = {.job = GR_JOB_FULL, .tp = 1, .pp = 1, .batch = 1, .ctx = 2048, .state_bytes = 18, .zero = 3};
  quant("bf16", &r.quant);
  quant("fp16", &r.kv_quant);
  plan_on("tyan-s8030", true, 4, &r, &m, p);
  /* 18 B/param over 4 GPUs = 28.24 GiB of model states: a 3090 cannot hold it */
  assert_int_equal(p->fit, GR_FIT_NO);
  assert_non_null(strstr(p->fix, "--offload optimizer"));
  free(p);
  gr_model_free(&m);
}

/* Tensor- and data-parallel groups are smaller than the machine: the machine
 * a plan opens carries the best ring of the group sizes that plan uses (its
 * TP group and its data-parallel ranks), with NCCL's defaults and raised,
 * and no other (perf.md §3: every size cost more than the whole prediction).
 * X9DRG: four GPUs per socket talk P2P with NCCL_P2P_LEVEL=PHB (host-staged
 * between the two switches by default), five or more cross QPI. */
static void plan_machine_opens_its_group_sizes(void **state)
{
  struct gr_plan_args tp4 = {.model = "llama-2-7b", .job = "infer", .gpus = "4", .tp = "4"};
  struct gr_plan_args dp5 = {.model = "llama-2-7b", .job = "full", .gpus = "5"};
  struct gr_source src = {.kind = GR_SRC_RIG, .path = "sys-4028gr-tr-x9drg"};
  struct gr_machine m;
  struct gr_plan_hw hw, hw5;
  struct gr_err err = {0};
  bool cpu_only;
  (void)state;
  if (gr_plan_machine_open(&tp4, &src, &m, &cpu_only, &hw, &err) != 0)
    fail_msg("%s", err.msg);
  assert_false(cpu_only);
  assert_true(hw.busbw_gbps[4] > 0);
  assert_true(hw.busbw_gbps[3] == 0 && hw.busbw_gbps[5] == 0); /* not asked for */
  assert_true(hw.busbw_raised_gbps[4] > hw.busbw_gbps[4]);
  assert_string_equal(hw.p2p_level[4], "PHB");
  assert_true(hw.busbw_gbps[8] == m.prediction.nccl_default.busbw_gbps); /* the plan heads with NCCL's defaults */
  gr_machine_close(&m);
  if (gr_plan_machine_open(&dp5, &src, &m, &cpu_only, &hw5, &err) != 0)
    fail_msg("%s", err.msg);
  assert_true(hw5.busbw_gbps[5] > 0);
  assert_true(hw.busbw_gbps[4] > 1.5 * hw5.busbw_gbps[5]);
  assert_true(hw.busbw_raised_gbps[4] > 2 * hw5.busbw_gbps[5]);
  gr_machine_close(&m);
}

static int open_plan(const struct gr_plan_args *a, struct gr_source src, struct gr_err *err)
{
  struct gr_machine m;
  struct gr_plan_hw hw;
  bool cpu_only;
  int rc = gr_plan_machine_open(a, &src, &m, &cpu_only, &hw, err);
  gr_machine_close(&m);
  return rc;
}

/* Every argument is judged before the machine is loaded (a bad --cpu with a
 * missing rig names the --cpu), --gpus 0 still opens a rig it names (its
 * CPU), and contradictions are refused. */
static void plan_args_checked_first(void **state)
{
  static const struct {
    struct gr_plan_args a;
    enum gr_source_kind kind;
    const char *path, *want;
  } cases[] = {
      {{.model = "llama-2-7b", .job = "infer", .cpu = "8x"}, GR_SRC_RIG, "/nonexistent.rig", "--cpu 8x: expected"},
      {{.model = "llama-2-7b", .job = "infer", .cpu = "8x3200", .gpus = "0"}, GR_SRC_RIG, "/nonexistent.rig",
       "/nonexistent.rig"},
      {{.model = "llama-2-7b", .job = "infer", .gpus = "0", .gpu = "RTX 3090"}, GR_SRC_LIVE, NULL,
       "--gpus 0 plans on the CPU, --gpu RTX 3090 on GPUs"},
      {{.model = "llama-2-7b", .job = "infer", .gpus = "0", .tp = "2"}, GR_SRC_LIVE, NULL, "--tp and --pp split"},
      {{.model = "llama-2-7b", .job = "infer", .gpu = "RTX 3090"}, GR_SRC_ROOT, "/nonexistent",
       "would be ignored"},
      {{.model = "no-such-model", .job = "infer"}, GR_SRC_RIG, "/nonexistent.rig", "no-such-model"},
      {{.model = "llama-2-7b", .job = "full", .estimator = "deepspeed"}, GR_SRC_RIG, "/nonexistent.rig",
       "give --job full --zero 2 or 3"},
  };
  (void)state;
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    struct gr_err err = {0};
    struct gr_source src = {.kind = cases[i].kind, .path = cases[i].path};
    if (open_plan(&cases[i].a, src, &err) == 0 || !strstr(err.msg, cases[i].want))
      fail_msg("case %zu: got '%s', want '%s'", i, err.msg, cases[i].want);
  }
}

/* Inference splits layers over every GPU unless --pp is given: more GPUs
 * than layers is said in terms of the GPUs asked for, not a --pp not given. */
static void default_split_names_the_gpus(void **state)
{
  struct gr_plan_args a = {.model = "llama-2-7b", .job = "infer", .gpus = "64"};
  struct gr_plan_req r;
  struct gr_model m;
  struct gr_err err = {0};
  (void)state;
  assert_int_equal(gr_plan_request(&a, 64, &r, &m, &err), -1);
  assert_non_null(strstr(err.msg, "--gpus 64: with --tp 1 the planner would split llama-2-7b's 32 layers over 64"));
  a.gpus = NULL;
  assert_int_equal(gr_plan_request(&a, 64, &r, &m, &err), -1);
  assert_non_null(strstr(err.msg, "the machine's 64 GPUs: with --tp 1"));
  a.tp = "2";
  assert_int_equal(gr_plan_request(&a, 64, &r, &m, &err), 0);
  assert_int_equal(r.pp, 32);
  gr_model_free(&m);
}

/* A checkpoint format gpurig does not plan is refused, naming the file,
 * unless --quant says how to plan it. */
static void unplanned_checkpoint_needs_quant(void **state)
{
  char path[] = "/tmp/gpurig-test-plan-XXXXXX";
  const char text[] = "{\"num_hidden_layers\": 2, \"hidden_size\": 8, \"intermediate_size\": 8, "
                      "\"num_attention_heads\": 2, \"vocab_size\": 8, \"quantization_config\": "
                      "{\"quant_method\": \"awq\", \"bits\": 8}}";
  struct gr_plan_args a = {.model = path, .job = "infer"};
  struct gr_plan_req r;
  struct gr_model m;
  struct gr_err err = {0};
  (void)state;
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  assert_int_equal(write(fd, text, sizeof(text) - 1), (ssize_t)(sizeof(text) - 1));
  close(fd);
  assert_int_equal(gr_plan_request(&a, 1, &r, &m, &err), -1);
  assert_non_null(strstr(err.msg, ": quantization_config awq with 8 bits (AutoAWQ kernels are 4-bit only) is not a "
                                  "weight format gpurig plans"));
  assert_non_null(strstr(err.msg, path));
  a.quant = "int8";
  assert_int_equal(gr_plan_request(&a, 1, &r, &m, &err), 0);
  assert_string_equal(r.quant.name, "int8");
  gr_model_free(&m);
  unlink(path);
}


/* --engine NAME@YYYY-MM: the month of the build; build numbers are refused
 * with the form to use, and a bad month names the expected form. */
static void engine_versions(void **state)
{
  const char *name = NULL;
  int month = -1;
  struct gr_err err = {0};
  (void)state;
  assert_int_equal(gr_engine_parse_versioned("llama.cpp@2024-06", &name, &month, &err), 0);
  assert_string_equal(name, "llama.cpp");
  assert_int_equal(month, 2024 * 12 + 5);
  assert_int_equal(gr_engine_parse_versioned("vLLM", &name, &month, &err), 0);
  assert_string_equal(name, "vllm");
  assert_int_equal(month, 0);
  assert_int_equal(gr_engine_parse_versioned("llama.cpp@b3000", &name, &month, &err), -1);
  assert_non_null(strstr(err.msg, "@YYYY-MM"));
  assert_int_equal(gr_engine_parse_versioned("llama.cpp@2024-13", &name, &month, &err), -1);
  assert_int_equal(gr_engine_parse_versioned("llama.cpp@", &name, &month, &err), -1);
  assert_int_equal(gr_engine_parse_versioned("nosuch@2024-01", &name, &month, &err), -1);
}

/* A profile key holds from its month on; an architecture's row wins over
 * the row for every GPU; the current release reads the newest rows. */
static void engine_profiles_by_release(void **state)
{
  (void)state;
  assert_true(gr_engine_speed("llama.cpp", 2024 * 12 + 0, NULL, "pp_int8") < 0.5);  /* before PR #7676 */
  assert_true(gr_engine_speed("llama.cpp", 2024 * 12 + 6, NULL, "pp_int8") > 0.5);  /* after */
  assert_true(gr_engine_speed("llama.cpp", 0, NULL, "pp_int8") > 0.5);
  double any = gr_engine_speed("transformers", 0, "sm75", "train_mfu"), a100 = gr_engine_speed("transformers", 0, "sm80", "train_mfu");
  assert_true(any > 0 && a100 > 0 && any != a100);
  assert_true(isnan(gr_engine_speed("llama.cpp", 0, NULL, "no_such_key")));
  assert_int_equal(gr_engine_profile_month("llama.cpp", 2024 * 12 + 0), 2023 * 12 + 5);
}

/* Issue 28's planner cases: offload's CPU Adam makes a step slower than
 * checkpointing; FSDP QLoRA gathers the frozen base; llama.cpp's own layer
 * assignment fits Llama-3-70B F16 on six RTX 3090; one more GPU of a layer
 * split costs a hand-off. */
static void planner_mechanisms(void **state)
{
  struct gr_model m;
  struct gr_plan *p = calloc(1, sizeof(*p));
  (void)state;
  builtin("mistral-7b", &m);
  struct gr_plan_req r = {.job = GR_JOB_FULL, .tp = 1, .pp = 1, .batch = 1, .ctx = 2048, .zero = 3, .state_bytes = 18,
                          .engine = "transformers"};
  quant("bf16", &r.quant);
  quant("fp16", &r.kv_quant);
  r.offload = GR_OFFLOAD_OPTIMIZER;
  plan_on("wopr", true, 7, &r, &m, p);
  double offload = p->step_s.mid;
  assert_non_null(strstr(p->speed_basis, "CPU Adam"));
  r.offload = GR_OFFLOAD_NONE;
  r.checkpointing = true;
  plan_on("wopr", true, 7, &r, &m, p);
  assert_true(p->step_s.mid < offload);
  gr_model_free(&m);

  builtin("llama-2-70b", &m);
  struct gr_plan_req q = {.job = GR_JOB_QLORA, .tp = 1, .pp = 1, .batch = 1, .ctx = 2048, .zero = 3,
                          .checkpointing = true, .lora_rank = 16, .lora_targets = GR_LORA_ALL, .engine = "transformers"};
  quant("nf4-dq", &q.quant);
  quant("fp16", &q.kv_quant);
  plan_on("tyan-s8030", true, 4, &q, &m, p);
  assert_non_null(strstr(p->speed_basis, "all-gathers of the frozen sharded base"));
  gr_model_free(&m);

  builtin("llama-3-70b", &m);
  struct gr_plan_req i = {.job = GR_JOB_INFER, .tp = 1, .pp = 6, .gpus = 6, .batch = 1, .ctx = 512, .engine = "llama.cpp"};
  quant("fp16", &i.quant);
  quant("fp16", &i.kv_quant);
  struct gr_plan_hw hw = {.gpu = gr_catalog_find("RTX 3090"), .ngpus = 6};
  assert_int_equal(gr_plan_check(&i, &m, &hw, NULL), 0);
  gr_plan_run(&i, &m, &hw, p);
  assert_true(p->fit != GR_FIT_NO);
  gr_model_free(&m);

  builtin("llama-3-8b", &m);
  struct gr_plan_req d = {.job = GR_JOB_INFER, .tp = 1, .pp = 1, .batch = 1, .ctx = 512, .engine = "llama.cpp", .gpus = 1};
  quant("q4_k_m", &d.quant);
  quant("fp16", &d.kv_quant);
  gr_plan_run(&d, &m, &hw, p);
  double one = p->decode_tps.mid;
  d.pp = d.gpus = 2;
  gr_plan_run(&d, &m, &hw, p);
  assert_true(p->decode_tps.mid < one && p->decode_tps.mid > 0.9 * one);
  gr_model_free(&m);
  free(p);
}

/* Opens rig with the arguments and plans them: 0, or -1 with err. */
static int plan_on_rig(const struct gr_plan_args *a, const char *rig, struct gr_planned *pl, struct gr_err *err)
{
  struct gr_source src = {.kind = GR_SRC_RIG, .path = rig};
  struct gr_machine m;
  struct gr_plan_hw hw;
  bool cpu_only;
  int rc = gr_plan_machine_open(a, &src, &m, &cpu_only, &hw, err);
  if (rc == 0)
    rc = gr_plan_job(a, &hw, NULL, pl, err);
  gr_machine_close(&m);
  return rc;
}

/* --tp auto (ux-3 M7): each degree of 1, 2, 4, 8 that divides the GPUs and
 * the heads is planned and the fastest decode that fits is kept, the same
 * as the best --tp N typed by hand; training and --pp refuse it. */
static void tp_auto_takes_the_fastest_fit(void **state)
{
  struct gr_plan_args a = {.model = "llama-2-70b", .job = "infer", .quant = "q4_k_m", .tp = "auto"};
  struct gr_planned pl, by_hand;
  struct gr_err err = {0};
  (void)state;
  if (plan_on_rig(&a, "gigabyte-t181-g20", &pl, &err) != 0)
    fail_msg("%s", err.msg);
  assert_int_equal(pl.ntp_tried, 3); /* 4 GPUs: 1, 2, 4 */
  assert_int_equal(pl.req.tp, 4);    /* NVLink: TP 4 beats a layer split */
  assert_int_equal(pl.req.pp, 1);
  for (size_t i = 0; i < pl.ntp_tried; i++) {
    struct gr_plan_args b = a;
    char tp[8];
    snprintf(tp, sizeof(tp), "%d", pl.tp_tried[i].tp);
    b.tp = tp;
    if (plan_on_rig(&b, "gigabyte-t181-g20", &by_hand, &err) != 0)
      fail_msg("%s", err.msg);
    assert_float_equal(pl.tp_tried[i].decode_tps, by_hand.plan.decode_tps.mid, 1e-9);
    assert_true(pl.plan.decode_tps.mid >= by_hand.plan.decode_tps.mid);
    gr_planned_free(&by_hand);
  }
  gr_planned_free(&pl);
  /* 8 GPUs of 16 GiB: TP 8 is fastest on the X10DRG's one PCIe tree */
  if (plan_on_rig(&a, "sys-4028gr-tr-x10drg", &pl, &err) != 0)
    fail_msg("%s", err.msg);
  assert_int_equal(pl.ntp_tried, 4);
  assert_int_equal(pl.req.tp, 8);
  gr_planned_free(&pl);
  struct gr_plan_args full = {.model = "llama-2-7b", .job = "full", .tp = "auto"};
  assert_int_equal(gr_plan_args_check(&full, NULL, &err), -1);
  assert_non_null(strstr(err.msg, "--tp auto picks the degree with the fastest decode, for --job infer"));
  struct gr_plan_args pp = a;
  pp.pp = "2";
  assert_int_equal(gr_plan_args_check(&pp, NULL, &err), -1);
  assert_non_null(strstr(err.msg, "drop --pp 2"));
  struct gr_plan_args bad = a;
  bad.tp = "automatic";
  assert_int_equal(gr_plan_args_check(&bad, NULL, &err), -1);
  assert_non_null(strstr(err.msg, "or auto"));
}

/* Power counts the GPUs planned (ux-3 L4): --gpus 2 of the ESC4000's four
 * A5000s draws two GPUs' share and the whole host. */
static void power_counts_the_gpus_planned(void **state)
{
  struct gr_plan_args two = {.model = "llama-2-70b", .job = "infer", .quant = "q4_k_m", .gpus = "2", .tp = "2"};
  struct gr_plan_args four = two;
  struct gr_planned p2, p4;
  struct gr_err err = {0};
  (void)state;
  four.gpus = "4";
  if (plan_on_rig(&two, "asus-esc4000", &p2, &err) != 0 || plan_on_rig(&four, "asus-esc4000", &p4, &err) != 0)
    fail_msg("%s", err.msg);
  double one = p2.hw.gpu->tdp_w * gr_plan_consts()->gpu_power_share, host = gr_plan_consts()->host_power_w;
  assert_float_equal(p2.plan.power_w, 2 * one + host, 1e-9);
  assert_float_equal(p4.plan.power_w, 4 * one + host, 1e-9);
  assert_float_equal(p2.plan.energy_kwh_day, p2.plan.power_w * 24 / 1000, 1e-9);
  gr_planned_free(&p2);
  gr_planned_free(&p4);
}

/* --power-limit: the clock share inverts the power model (the board power
 * at that clock is the limit, on either side of the voltage floor), and
 * it slows compute-bound prefill and training with the clock while
 * memory-bound decode barely moves; the watts saved are the board power
 * less the limit per planned GPU, and limits outside the model refuse. */
static void power_limit_follows_the_clock(void **state)
{
  (void)state;
  const struct gr_gpu_model *g = gr_catalog_find("RTX 3090");
  const struct gr_power_clock_row *row = gr_power_clock_row(g);
  assert_non_null(row);
  assert_string_equal(row->arch, "sm86");
  double s = row->static_share, fl = row->floor_clock_share;
  assert_float_equal(gr_power_clock_share(g, 0), 1.0, 0);
  assert_float_equal(gr_power_clock_share(g, g->tdp_w), 1.0, 0);
  double prev = 1.0;
  for (double w = 330; w > gr_power_limit_floor_w(g) + 5; w -= 20) {
    double x = gr_power_clock_share(g, w);
    double d = x >= fl ? x * x * x : fl * fl * x;
    assert_float_equal((s + (1 - s) * d) * g->tdp_w, w, 1e-6); /* the board power at that clock is the limit */
    assert_true(x < prev);
    prev = x;
  }
  struct gr_plan *p = calloc(1, sizeof(*p));
  struct gr_model m;
  builtin("llama-3-8b", &m);
  struct gr_plan_hw hw = {.gpu = g, .ngpus = 2};
  struct gr_plan_req d = {.job = GR_JOB_INFER, .tp = 1, .pp = 2, .batch = 1, .ctx = 512, .engine = "llama.cpp", .gpus = 2};
  quant("q4_k_m", &d.quant);
  quant("fp16", &d.kv_quant);
  gr_plan_run(&d, &m, &hw, p);
  double dec = p->decode_tps.mid, pre = p->prefill_tps.mid;
  assert_float_equal(p->clock_share, 1.0, 0);
  assert_float_equal(p->watts_saved_w, 0, 0);
  d.power_limit_w = 250;
  assert_int_equal(gr_plan_check(&d, &m, &hw, NULL), 0);
  gr_plan_run(&d, &m, &hw, p);
  double x = gr_power_clock_share(g, 250);
  assert_float_equal(p->clock_share, x, 1e-12);
  assert_float_equal(p->free_decode_tps, dec, 1e-9);
  assert_float_equal(p->free_prefill_tps, pre, 1e-9);
  /* decode loses only its clock-bound per-layer part: under half of what compute-bound prefill loses */
  assert_true(p->decode_tps.mid < dec && 1 - p->decode_tps.mid / dec < 0.5 * (1 - p->prefill_tps.mid / pre));
  assert_true(p->prefill_tps.mid / pre < x + 0.02 && p->prefill_tps.mid / pre > x - 0.02);
  assert_float_equal(p->watts_saved_gpu_w, 100, 1e-9);
  assert_float_equal(p->watts_saved_w, 200, 1e-9);
  assert_non_null(strstr(p->speed_basis, "Power limit 250 W of 350 W"));
  struct gr_err err = {0};
  d.power_limit_w = 400;
  assert_int_equal(gr_plan_check(&d, &m, &hw, &err), -1);
  assert_non_null(strstr(err.msg, "above the RTX 3090's board power"));
  d.power_limit_w = gr_power_limit_floor_w(g);
  assert_int_equal(gr_plan_check(&d, &m, &hw, &err), -1);
  gr_model_free(&m);

  builtin("llama-2-7b", &m);
  struct gr_plan_req t = {.job = GR_JOB_LORA, .tp = 1, .pp = 1, .batch = 1, .ctx = 2048, .gpus = 2, .lora_rank = 16,
                          .lora_targets = GR_LORA_ALL, .engine = "transformers", .power_limit_w = 280};
  quant("fp16", &t.quant);
  quant("fp16", &t.kv_quant);
  gr_plan_run(&t, &m, &hw, p);
  double share = p->train_tps.mid / p->free_train_tps;
  assert_true(share <= p->clock_share + 1e-9 && share > p->clock_share - 0.02); /* compute-bound: the clock */
  gr_model_free(&m);
  free(p);
}

/* AMD GPUs run an engine's ROCm build: data/engines.tsv's rocm column, with
 * the architectures a format's kernels need (vLLM's FP8: MI300's gfx942). */
static void rocm_formats_follow_the_rocm_column(void **state)
{
  (void)state;
  struct gr_quant fp8, awq, q4, fp16;
  struct gr_err err = {0};
  char why[192];
  assert_int_equal(gr_quant_parse("fp8", &fp8, &err), 0);
  assert_int_equal(gr_quant_parse("awq", &awq, &err), 0);
  assert_int_equal(gr_quant_parse("q4_k_m", &q4, &err), 0);
  assert_int_equal(gr_quant_parse("fp16", &fp16, &err), 0);
  const struct gr_gpu_model *xtx = gr_catalog_find("RX 7900 XTX"), *mi300 = gr_catalog_find("MI300X");
  const struct gr_gpu_model *a100 = gr_catalog_find("A100 SXM4 80GB");
  assert_non_null(xtx);
  assert_non_null(mi300);
  assert_non_null(a100);
  assert_false(gr_engine_format_runs("vllm", &fp8, xtx, why, sizeof(why)));
  assert_string_equal(why, "vllm's fp8 kernels on ROCm need gfx942|gfx950; RX 7900 XTX is gfx1100");
  assert_true(gr_engine_format_runs("vllm", &fp8, mi300, why, sizeof(why)));
  assert_false(gr_engine_format_runs("vllm", &awq, mi300, why, sizeof(why)));
  assert_non_null(strstr(why, "vllm on ROCm does not offer awq weights"));
  assert_true(gr_engine_format_runs("vllm", &awq, a100, why, sizeof(why))); /* CUDA: the formats column */
  assert_true(gr_engine_format_runs("transformers", &awq, mi300, why, sizeof(why)));
  assert_true(gr_engine_format_runs("llama.cpp", &q4, xtx, why, sizeof(why)));
  assert_true(gr_engine_format_runs("vllm", &fp16, xtx, why, sizeof(why)));
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(rocm_formats_follow_the_rocm_column),
      cmocka_unit_test(exact_parameter_counts),   cmocka_unit_test(config_json_matches_builtin),
      cmocka_unit_test(bad_configs_name_file_line_key), cmocka_unit_test(lora_and_kv),
      cmocka_unit_test(gguf_file_sizes),          cmocka_unit_test(deepspeed_printout),
      cmocka_unit_test(seed_figures_18_bytes),    cmocka_unit_test(seed_mixtral_on_cpu),
      cmocka_unit_test(seed_a5000_two_instances), cmocka_unit_test(deepspeed_zero3_fits_as_planned),
      cmocka_unit_test(plan_machine_opens_its_group_sizes), cmocka_unit_test(quant_config_hints),
      cmocka_unit_test(plan_args_checked_first),  cmocka_unit_test(default_split_names_the_gpus),
      cmocka_unit_test(unplanned_checkpoint_needs_quant), cmocka_unit_test(engine_versions),
      cmocka_unit_test(engine_profiles_by_release), cmocka_unit_test(planner_mechanisms),
      cmocka_unit_test(ranges_hold_their_middle), cmocka_unit_test(tp_auto_takes_the_fastest_fit),
      cmocka_unit_test(power_counts_the_gpus_planned), cmocka_unit_test(power_limit_follows_the_clock),
  };
  return cmocka_run_group_tests(tests, setup, NULL);
}
