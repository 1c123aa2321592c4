/* Language models for the planner: their shape (a Hugging Face config.json,
 * a built-in row of data/models.tsv, or only a parameter count) and the
 * tensors that shape implies, counted exactly.
 *
 * Ownership: the loaders fill a struct gr_model that owns its strings; free
 * with gr_model_free. Nothing returned points into the input text. */
#ifndef GPURIG_MODEL_H
#define GPURIG_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/util.h"

struct gr_diffusion; /* plan/diffusion.h */
enum gr_model_kind { GR_MODEL_LLM, GR_MODEL_DIFFUSION };

struct gr_model {
  enum gr_model_kind kind;  /* diffusion: `diffusion` holds the pipeline, the fields below stay empty */
  struct gr_diffusion *diffusion; /* owned; NULL for a language model */
  char *name;            /* "llama-2-7b", the config path, or "7B parameters" */
  char *source;          /* where the shape comes from */
  char *model_type;      /* "llama", "mixtral", ...; NULL for --params */
  bool shape_known;      /* false for --params: only the count is known */
  double params_given;   /* --params N (shape_known false) */
  long layers, hidden, intermediate, heads, kv_heads, head_dim, vocab;
  bool tied;             /* lm_head shares the embedding */
  bool qkv_bias;         /* Qwen2: q/k/v projections have biases */
  long experts, experts_per_tok; /* 0 for dense models */
  long moe_intermediate; /* expert MLP width (intermediate when 0 in the config) */
  long shared_intermediate; /* shared experts' total MLP width (DeepSeek n_shared_experts x moe width, Qwen-MoE
                               shared_expert_intermediate_size), 0 none; every token reads them */
  bool shared_gate;      /* Qwen-MoE: a sigmoid gate (hidden -> 1) on the shared expert */
  long first_dense;      /* DeepSeek first_k_dense_replace: the first layers have a dense MLP (intermediate) */
  bool router_bias;      /* DeepSeek-V3 (topk_method noaux_tc): the router's e_score_correction_bias */
  /* Multi-head latent attention (DeepSeek-V2/V3), kv_lora_rank 0 otherwise */
  long q_lora_rank, kv_lora_rank, qk_rope_dim, qk_nope_dim, v_head_dim;
  long max_ctx;          /* max_position_embeddings, 0 unknown */
  long sliding_window;   /* 0: full attention */
  long swa_pattern;      /* 0: every layer has the window (Mistral v0.1); P: every P-th layer is global,
                            the others local (Gemma-2: 2, alternating) */
  int norms_per_layer;   /* RMSNorms per decoder layer: 2 (Llama), 4 (Gemma-2: pre/post attention and MLP) */
  char *quant_hint;      /* quantization_config of the checkpoint ("gptq-g128", "awq", "nf4"), may be NULL */
};

/* Tensor classes as llama.cpp's quantizer sees them. */
enum gr_tensor_class {
  GR_T_EMBED, GR_T_OUTPUT, GR_T_ATTN_Q, GR_T_ATTN_K, GR_T_ATTN_V, GR_T_ATTN_O,
  GR_T_FFN_GATE, GR_T_FFN_UP, GR_T_FFN_DOWN, GR_T_ROUTER, GR_T_NORM, GR_T_BIAS,
  GR_T_ALL, /* --params: every weight, shape unknown */
  GR_T_NCLASS
};

/* One weight tensor (or `count` identical ones: the experts of a layer). */
struct gr_tensor {
  enum gr_tensor_class cls;
  long layer;            /* -1 outside the decoder layers */
  uint64_t rows, cols;   /* cols is the row length (ggml's ne0, the input dimension) */
  uint64_t count;        /* experts in this tensor, 1 otherwise */
  bool expert;           /* routed: only experts_per_tok of count are read per token */
};

typedef void (*gr_tensor_fn)(const struct gr_tensor *t, void *ctx);

/* Calls fn for every weight tensor of m, in layer order. */
void gr_model_tensors(const struct gr_model *m, gr_tensor_fn fn, void *ctx);

struct gr_param_count {
  uint64_t total;        /* tied weights once, as DeepSpeed and transformers count */
  uint64_t active;       /* read per token: experts_per_tok of the routed experts */
  uint64_t embedding;    /* the token embedding (one row read per token) */
  uint64_t largest_module; /* the largest single module (DeepSpeed's largest_layer_params) */
  uint64_t per_layer;    /* one decoder layer, all experts */
};
void gr_model_count(const struct gr_model *m, struct gr_param_count *c);

/* KV cache bytes per token at `elem_bytes` per element, all layers (GQA aware).
 * 0 when the shape is unknown. */
double gr_model_kv_bytes_per_token(const struct gr_model *m, double elem_bytes);
/* How an engine caches the layers of a sliding-window model: every token
 * (none), a rolling window on the local layers of interleaved models only
 * (Gemma-2), or on every windowed layer (all). */
enum gr_swa { GR_SWA_NONE, GR_SWA_INTERLEAVED, GR_SWA_ALL };
/* Layers whose cache the window caps under rule swa (0 when none is). */
long gr_model_windowed_layers(const struct gr_model *m, enum gr_swa swa);
/* KV cache bytes for a context of ctx tokens, all layers, one sequence. */
double gr_model_kv_bytes(const struct gr_model *m, double elem_bytes, long ctx, enum gr_swa swa);

/* Built-in models (data/models.tsv, and the diffusion pipelines of
 * data/diffusion.tsv by name or alias), by name, ignoring case, spaces,
 * hyphens and underscores (llama_2_7b). Returns -1 when absent, with the
 * closest name in err ("did you mean"), or the known names when none is close. */
int gr_model_builtin(const char *name, struct gr_model *m, struct gr_err *err);
/* Writes the built-in names, comma-separated, into buf. */
void gr_model_builtin_names(char *buf, size_t cap);
/* Calls fn with each built-in name, the LLMs then the diffusion pipelines
 * with their aliases (the strings live only for the call). */
void gr_model_each_builtin(void (*fn)(void *ctx, const char *name), void *ctx);

/* Parses a Hugging Face config.json held in text (len bytes) read from `name`.
 * Errors are one line, "NAME:LINE: key \"K\": problem" (GR_EXIT_FAIL). */
int gr_model_parse_config(const char *name, const char *text, size_t len, struct gr_model *m, struct gr_err *err);
/* Reads and parses a config.json file. */
int gr_model_load_config(const char *path, struct gr_model *m, struct gr_err *err);

/* --params: "7B", "34b", "175B", "7e9", "1.5T", "350M". false if not a positive count. */
bool gr_parse_param_count(const char *s, double *out);
void gr_model_from_params(double params, struct gr_model *m);

/* What a model_type changes in a Llama-shaped decoder: Gemma-2's four norms
 * per layer and alternating sliding-window layers; Phi-3's unused window. */
void gr_model_type_traits(struct gr_model *m);

/* model_type values whose layers gpurig counts exactly (Llama-shaped). */
bool gr_model_type_llama_like(const char *type);

void gr_model_free(struct gr_model *m);

#endif
