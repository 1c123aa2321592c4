/* libFuzzer target: Hugging Face config.json through the reader, the exact
 * parameter count, llama.cpp's per-tensor quantization rules and LoRA. */
#include <stdint.h>
#include <stdlib.h>

#include "plan/llm.h"
#include "plan/plan.h"
#include "plan/quant.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  struct gr_model m;
  struct gr_err err = {0};
  struct gr_param_count c;
  struct gr_quant q;
  struct gr_weight_bytes w;
  if (size > 65536)
    return 0;
  if (gr_model_parse_config("fuzz.json", (const char *)data, size, &m, &err) != 0)
    return 0;
  if (m.layers <= 512) { /* the tensor walk is linear in layers; keep runs fast */
    gr_model_count(&m, &c);
    if (gr_quant_parse("q4_k_m", &q, &err) == 0)
      gr_quant_model_bytes(&q, &m, &w);
    if (gr_quant_parse("gptq-g32", &q, &err) == 0)
      gr_quant_model_bytes(&q, &m, &w);
    (void)gr_lora_trainable(&m, 64, GR_LORA_ALL);
    (void)gr_model_kv_bytes_per_token(&m, 2);
  }
  gr_model_free(&m);
  return 0;
}
