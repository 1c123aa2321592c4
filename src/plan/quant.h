/* Weight formats for the planner (data/quant.tsv): how many bytes each
 * tensor of a model takes in a given dtype or quantization, following the
 * rules of the tool that writes the file (llama.cpp's per-tensor mixes,
 * GPTQ/AWQ groups, bitsandbytes blocks).
 *
 * Ownership: gr_quant_parse fills a value struct; nothing to free. */
#ifndef GPURIG_QUANT_H
#define GPURIG_QUANT_H

#include <stdbool.h>
#include <stddef.h>

#include "plan/llm.h"
#include "base/util.h"

enum gr_quant_kind { GR_Q_FLOAT, GR_Q_GGML, GR_Q_GGUF, GR_Q_GPTQ, GR_Q_AWQ, GR_Q_BNB };

struct gr_quant {
  char name[40];          /* as the user wrote it, lower-cased: "q4_k_m", "gptq-g32" */
  enum gr_quant_kind kind;
  double bits;            /* bits per weight of the main type */
  char base[24];          /* gguf: the ggml type of most tensors ("ggml:q4_k") */
  int group;              /* gptq/awq group size */
};

/* Parses a --quant name, case-insensitively ("Q4_K_M", "bf16", "gptq-g32",
 * "nf4-dq"). Error: "unknown quantization 'X' (known: ...)", GR_EXIT_FAIL. */
int gr_quant_parse(const char *s, struct gr_quant *q, struct gr_err *err);

/* Bytes the tensor (all its experts) takes in this format. */
double gr_quant_tensor_bytes(const struct gr_quant *q, const struct gr_model *m, const struct gr_tensor *t);

/* The ggml type llama.cpp gives this tensor in a gguf file type (kind
 * GR_Q_GGUF), e.g. "ggml:q6_k"; static string. */
const char *gr_quant_gguf_type(const struct gr_quant *q, const struct gr_model *m, const struct gr_tensor *t);

/* Bits per weight of a ggml type or any name of data/quant.tsv; 0 if unknown. */
double gr_quant_bits(const char *name);

struct gr_weight_bytes {
  double total;           /* the whole file / all weights */
  double per_token;       /* read for one decoded token: active experts, lm_head, one embedding row */
  double layers;          /* all decoder layers */
  double embed, output;   /* token embedding; lm_head (0 when tied) */
  double experts;         /* routed expert tensors, all experts (0 for dense models) */
};
/* Fills *w for model m in format q. The last few answers are remembered (a
 * command asks the same for every rig it plans on), so it is not
 * thread-safe, as the facts it reads are not. */
void gr_quant_model_bytes(const struct gr_quant *q, const struct gr_model *m, struct gr_weight_bytes *w);

#endif
