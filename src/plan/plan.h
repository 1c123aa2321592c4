/* The planner: will a model and job fit on a machine, how fast will it run,
 * and what will it cost. Memory per GPU and for the host, item by item;
 * decode, prefill and training-step speed from the machine's bandwidths and
 * the topology's predicted all-reduce; cost from the rig's price and power.
 * Formulas and constants: docs/plan.md and data/planner.tsv.
 *
 * Ownership: gr_plan_run fills a struct gr_plan that owns nothing on the
 * heap (fixed arrays); the request and hardware it was given may be freed
 * after the call. */
#ifndef GPURIG_PLAN_H
#define GPURIG_PLAN_H

#include <stdbool.h>
#include <stddef.h>

#include "facts/catalog.h"
#include "plan/llm.h"
#include "analysis/predict.h"
#include "plan/quant.h"
#include "model/finding.h"
#include "model/topo.h"
#include "base/util.h"

enum gr_job { GR_JOB_INFER, GR_JOB_LORA, GR_JOB_QLORA, GR_JOB_FULL };
enum gr_offload { GR_OFFLOAD_NONE, GR_OFFLOAD_OPTIMIZER, GR_OFFLOAD_PARAMS };

/* LoRA target modules, one bit per projection. */
enum {
  GR_LORA_Q = 1 << 0, GR_LORA_K = 1 << 1, GR_LORA_V = 1 << 2, GR_LORA_O = 1 << 3,
  GR_LORA_GATE = 1 << 4, GR_LORA_UP = 1 << 5, GR_LORA_DOWN = 1 << 6,
  GR_LORA_ALL = 0x7f,
};

struct gr_plan_req {
  enum gr_job job;
  struct gr_quant quant;      /* weights' format (inference, LoRA base) */
  struct gr_quant kv_quant;   /* KV cache elements (fp16 unless --kv-quant) */
  const char *engine;         /* canonical name from data/engines.tsv (plan/engine.h) */
  bool engine_given;          /* --engine was typed; else it follows the format */
  int engine_month;           /* --engine NAME@YYYY-MM: the build's month (year * 12 + month - 1), 0 the current */
  long ctx;                   /* tokens per sequence */
  long batch;                 /* sequences per GPU (training: micro-batch per data-parallel rank) */
  int gpus;                   /* GPUs used; 0 = CPU-only inference */
  int zero;                   /* ZeRO stage 0-3 */
  enum gr_offload offload;
  int tp, pp;                 /* tensor-parallel and layer-split (pipeline) degrees */
  int state_bytes;            /* full fine-tune model states: 18 (DeepSpeed/HF) or 16 (ZeRO paper) */
  bool checkpointing;         /* gradient checkpointing (training) */
  long lora_rank;
  unsigned lora_targets;
  bool rank0_load;            /* only rank 0 reads the checkpoint (FSDP sync_module_states) */
  double price;               /* --price, overrides the rig's; 0 none */
  double kwh_price;           /* $ per kWh */
  double rent;                /* --rent $ per GPU-hour, 0 none */
  double power_limit_w;       /* --power-limit W per GPU (plan/power.h), else the rig's `limit`; 0 none */
  bool power_limit_rig;       /* power_limit_w is the rig's `limit`, not --power-limit */
  /* diffusion models (plan/diffusion.h) */
  long resolution;            /* --resolution: pixels per side, 0 the model's native */
  bool adam8bit;              /* --optimizer adam8bit (bitsandbytes), else AdamW */
  bool full_bf16;             /* --full-bf16: weights, grads and Adam states in bf16, no fp32 master */
  bool cache_latents;         /* --cache-latents: the VAE leaves the GPU, latents live in host RAM */
  bool cache_text;            /* --cache-text-embeddings: the text encoders leave the GPU */
  long dataset_images;        /* --dataset-images: images whose caches live in host RAM */
  long workers;               /* --workers: data-loader worker processes per rank */
};

/* The machine as the planner needs it, filled from a topology and its
 * prediction (gr_plan_hw_from_topo) or for CPU-only inference. */
struct gr_plan_hw {
  const struct gr_gpu_model *gpu; /* the smallest GPU of the machine, NULL CPU-only */
  bool mixed_gpus;
  int ngpus;                      /* GPUs in the machine */
  double busbw_gbps[65];          /* predicted all-reduce bus bandwidth for a group of k GPUs with NCCL's
                                     defaults, 0 unknown */
  double busbw_raised_gbps[65];   /* the same with NCCL_P2P_LEVEL raised, 0 where that buys nothing */
  const char *p2p_level[65];      /* the NCCL_P2P_LEVEL busbw_raised_gbps[k] needs, NULL where none */
  double host_link_gbps;          /* one GPU's host link, per direction, theoretical; 0 unknown */
  double cpu_bw_gbps;             /* host memory bandwidth, theoretical, all sockets; 0 unknown */
  double host_ram_gib;            /* host RAM installed (a rig's `ram`, else what the OS reports); 0 unknown */
  char cpu_desc[96];              /* "2x 6ch DDR4-2666" */
  double price;                   /* the rig's, 0 unknown */
  char currency[8];
  char name[160];
  /* --nodes N: N machines like this one (host_ram_gib, busbw_gbps and the rest stay per node) */
  int nodes;                      /* 0 or 1: one machine */
  int gpus_per_node;
  double node_nic_gbps;           /* a node's NICs together, per direction (analysis/cluster.h), 0 unknown */
  double net_busbw_gbps;          /* the all-reduce over every node, 0 unknown */
  char nic_desc[128];             /* "2 x ConnectX-4 100Gb (100 Gb/s)" */
  double rig_limit_w;             /* the power limit a rig's `limit` sets on every one of its GPUs (the
                                     owner runs them so); 0 none, or not the same on all */
  const char *collective;         /* the library the all-reduce runs on, for the words: "RCCL" where every
                                     GPU is AMD's, else "NCCL" (model/topo.h gr_topo_collective); static,
                                     NULL: NCCL */
};

enum gr_fit { GR_FIT_HEADROOM, GR_FIT_TIGHT, GR_FIT_NO };

struct gr_plan_item {
  char what[48];
  double gib;
  char note[160];
};

struct gr_range { double low, mid, high; bool ok; };

struct gr_plan {
  struct gr_param_count params;
  struct gr_weight_bytes weights;
  uint64_t trainable;           /* LoRA/QLoRA adapters, or all parameters for full */
  int dp;                       /* data-parallel ranks */
  struct gr_plan_item gpu[16];  /* per GPU, the busiest one */
  size_t ngpu_items;
  double gpu_need_gib, gpu_have_gib;
  struct gr_plan_item host[8];
  size_t nhost_items;
  double host_need_gib;
  bool host_short;              /* host RAM known and too small: the job does not fit for that */
  double model_states_gb;       /* full fine-tune: bytes/param x P, decimal GB (the seed's figure) */
  double kv_gib;                /* whole KV cache, all GPUs */
  enum gr_fit fit;
  char verdict[512];
  char fix[256];                /* the cheapest change that makes it fit, as flags; empty if it fits or none does */
  double fix_need_gib;          /* GiB per GPU with that change, 0 without one */
  long max_batch, max_ctx;      /* largest that fit with everything else as asked (0 none) */
  struct gr_range decode_tps;   /* tokens/s, all sequences of the batch together, short context */
  struct gr_range decode_full_tps; /* the same with the cache full (ctx tokens per sequence) */
  double tp_comm_s;             /* tensor-parallel all-reduce time per decode step */
  double pipe_comm_s;           /* --nodes: the activations crossing from node to node per decode step */
  double pipe_prefill_s;        /* --nodes: the same for a prompt of ctx tokens (every sequence of the batch) */
  double act_bytes;             /* --nodes: bytes crossing one node boundary per token (hidden x 2) */
  double host_node_gib;         /* --nodes: host RAM one node needs (its stages' checkpoint share) */
  struct gr_range prefill_tps;
  struct gr_range step_s;       /* training step */
  struct gr_range train_tps;    /* training tokens/s */
  double allreduce_gbps;        /* busbw used for the group: NCCL's defaults */
  double allreduce_raised_gbps; /* the group's busbw with NCCL_P2P_LEVEL raised, 0 where that buys nothing */
  const char *allreduce_raised_level; /* that NCCL_P2P_LEVEL ("PHB"), NULL where none */
  char speed_basis[1536];        /* how the speed was derived, in words */
  /* --power-limit: the SM clock sustained under it and what it costs (plan/power.h) */
  double clock_share;           /* share of the boost clock sustained; 1 without a limit */
  double board_power_w;         /* one GPU's board power (gpus.tsv tdp_w) */
  double watts_saved_gpu_w, watts_saved_w; /* the ceiling lowered, per GPU and for the planned GPUs */
  double free_decode_tps, free_prefill_tps, free_train_tps; /* the mid speeds without the limit */
  double power_w, energy_kwh_day, energy_cost_day, price, price_per_vram_gib, rent_year, breakeven_days;
  char currency[8];
  /* diffusion models: the parts' parameters and the resolution planned (0 for a language model) */
  uint64_t unet_params, text_params, vae_params;
  long resolution;
};

/* Constants: gr_planner_const (facts/facts.h, data/planner.tsv). */

/* Checks the request against the model and machine (0 GPUs for a GPU job,
 * context beyond the model's, TP not dividing heads, ...). -1 with one
 * error line, GR_EXIT_FAIL. */
int gr_plan_check(const struct gr_plan_req *r, const struct gr_model *m, const struct gr_plan_hw *hw,
                  struct gr_err *err);

/* Fills hw from a loaded topology and its prediction. */
void gr_plan_hw_from_topo(const struct gr_topo *t, const struct gr_prediction *p, struct gr_plan_hw *hw);

/* Memory, speed, cost, verdict, and the largest batch and context that fit. */
void gr_plan_run(const struct gr_plan_req *r, const struct gr_model *m, const struct gr_plan_hw *hw,
                 struct gr_plan *out);

/* The plan's notes: how it was made and what it leaves out (activations not
 * counted, vLLM's share of memory, mixed GPUs, a model counted as Llama-style,
 * host RAM with every rank loading), as info findings "plan.note" appended to
 * out in the order they are printed. A function of the plan's inputs, so the
 * plan stays plain data that the planner's searches reuse as scratch. */
void gr_plan_notes(const struct gr_plan_req *r, const struct gr_model *m, const struct gr_plan_hw *hw,
                   const struct gr_plan *p, struct gr_findings *out);

/* LoRA trainable parameters for rank r on the given targets. */
uint64_t gr_lora_trainable(const struct gr_model *m, long rank, unsigned targets);

/* DeepSpeed's estimate_zero2/zero3_model_states_mem_needs_all_cold printout,
 * digit for digit, into buf (docs/plan.md). */
void gr_plan_deepspeed(int zero, uint64_t total_params, uint64_t largest_layer, int gpus_per_node, int nodes,
                       char *buf, size_t cap);

const char *gr_job_name(enum gr_job j);
const char *gr_fit_name(enum gr_fit f);  /* "fits", "tight", "does not fit" */

#endif
