/* A planning request as a user gives it (text, as typed after --model,
 * --job, --ctx ...) turned into the planner's request with the defaults of
 * `gpurig plan --help`, and the machine it runs on. `gpurig plan` and
 * `gpurig compare --job` share it, so the same words mean the same plan.
 *
 * Ownership: struct gr_plan_args only points at the caller's strings.
 * gr_plan_job fills a struct gr_planned that owns its model; free it with
 * gr_planned_free. gr_plan_machine_open fills a machine the caller closes
 * with gr_machine_close (analysis/machine.h). */
#ifndef GPURIG_PLAN_REQUEST_H
#define GPURIG_PLAN_REQUEST_H

#include <stdbool.h>

#include "analysis/compare.h"
#include "analysis/machine.h"
#include "base/util.h"
#include "model/finding.h"
#include "plan/llm.h"
#include "plan/plan.h"

/* What the user typed; NULL where an option was not given. */
struct gr_plan_args {
  const char *model, *params, *job, *quant, *kv_quant, *ctx, *batch, *gpus, *zero, *offload, *tp, *pp;
  const char *nodes;    /* --nodes N: N machines like the one given, pipeline stages over them (docs/cluster.md) */
  const char *lora_rank, *lora_targets, *state_bytes, *price, *kwh, *rent, *power_limit, *cpu, *estimator, *engine;
  const char *gpu;      /* --gpu MODEL: a generic board of that GPU when no rig is named */
  bool checkpointing, rank0_load;
  /* diffusion models only */
  const char *optimizer, *resolution, *dataset_images, *workers;
  bool cache_latents, cache_text, full_bf16;
};

/* True when any option that only a plan reads was given (compare needs --job then). */
bool gr_plan_args_given(const struct gr_plan_args *a);

/* Checks everything the user typed that can be judged before a machine is
 * loaded or a config.json read: every number, name and format, --cpu, and
 * options that contradict each other or the source (given may be NULL when
 * the machines are rigs named elsewhere, as in compare). 0, or -1 with one
 * error line in err (GR_EXIT_FAIL). */
int gr_plan_args_check(const struct gr_plan_args *a, const struct gr_source *given, struct gr_err *err);

/* The machine a plan runs on, opened with predictions after
 * gr_plan_args_check: the given source (with --gpus 0, its CPU), or --gpus
 * N of --gpu MODEL on a generic board, or none for CPU-only inference
 * without a source (--gpus 0, or --cpu alone): then *cpu_only is set and m
 * stays closed. hw is filled from the machine and --cpu. 0, or -1 with err;
 * the caller closes m either way. */
int gr_plan_machine_open(const struct gr_plan_args *a, const struct gr_source *given, struct gr_machine *m,
                         bool *cpu_only, struct gr_plan_hw *hw, struct gr_err *err);
/* hw for an open machine (m NULL: CPU only) and --cpu. */
int gr_plan_hw_from(const struct gr_plan_args *a, const struct gr_machine *m, struct gr_plan_hw *hw, struct gr_err *err);

/* Reads the arguments into a request and a model with gpurig plan's
 * defaults; gpus_in_machine fills --gpus when it is not given. -1 with one
 * error line in err (GR_EXIT_FAIL); on success the caller frees *m with
 * gr_model_free. */
int gr_plan_request(const struct gr_plan_args *a, int gpus_in_machine, struct gr_plan_req *r, struct gr_model *m,
                    struct gr_err *err);

/* --tp auto: one tensor-parallel degree planned. */
struct gr_tp_try {
  int tp;
  enum gr_fit fit;
  double decode_tps;          /* middle figure, 0 when the plan predicts none */
};

/* A whole planned job: the request, the model, the machine as the planner
 * saw it, and the plan. */
struct gr_planned {
  struct gr_plan_req req;
  struct gr_model model;
  struct gr_plan_hw hw;
  struct gr_plan plan;
  struct gr_tp_try tp_tried[4]; /* --tp auto: the degrees planned (1, 2, 4, 8 that the GPUs and heads allow) */
  size_t ntp_tried;             /* 0 unless --tp auto; req.tp is the one chosen */
};

/* --tp auto was typed: gr_plan_job plans every tensor-parallel degree of 1,
 * 2, 4 and 8 that divides the GPUs asked and the model's attention heads
 * (a layer split over the rest of the GPUs) and keeps the fastest decode
 * that fits; when none fits, the one that needs the least memory per GPU.
 * Inference only (gr_plan_args_check refuses it for training and with --pp). */
bool gr_plan_tp_auto(const struct gr_plan_args *a);

/* Request, check and plan on hw. 0, or -1 with err (bad input, or a request
 * the machine cannot run: too few GPUs, a context longer than the model's;
 * label, when non-NULL, names the machine in the latter). */
int gr_plan_job(const struct gr_plan_args *a, const struct gr_plan_hw *hw, const char *label, struct gr_planned *pl,
                struct gr_err *err);
void gr_planned_free(struct gr_planned *pl);

/* compare --job: each rig's plan (plans[i] on js[i]) as the rig's job fit
 * and speed (decode tokens/s for inference, training tokens/s, the middle
 * figures), then the job rank over them (gr_compare_rank_job). */
void gr_compare_rank_plans(struct gr_judged *js, const struct gr_planned *plans, size_t n);

/* The plan's findings, appended to out: its verdict ("plan.fit": fits ok,
 * tight warn, does not fit fail, with the change that makes it fit as the
 * fix), then its notes (info "plan.note", gr_plan_notes), so a plan's exit
 * status and its notes come from one list. */
void gr_plan_findings(const struct gr_planned *pl, const char *machine, struct gr_findings *out);

/* Plan before buying: the job on no machine, against the GPU catalog. The
 * memory per GPU for 1, 2, 4 and 8 GPUs (as asked, and with the cheapest
 * with ZeRO-3 for training), and for every catalog GPU the fewest of them
 * (of 1, 2, 4, 8) that hold the job with the cheapest change that does not
 * offload, else the fewest with offload. */
#define GR_SHOP_COUNTS 4
struct gr_shop_row {
  const struct gr_gpu_model *gpu;
  int gpus;                   /* 0: not even 8 hold it */
  double need_gib;            /* per GPU */
  char fix[256];              /* the change it takes, empty when it fits as asked */
};
struct gr_shop {
  struct gr_planned base;     /* the job planned on one GPU of infinite memory: counts and states */
  int counts[GR_SHOP_COUNTS]; /* 1, 2, 4, 8 */
  double need_gib[GR_SHOP_COUNTS]; /* per GPU as asked */
  double zero3_gib[GR_SHOP_COUNTS]; /* per GPU with ZeRO-3/FSDP (training jobs; 0 otherwise) */
  struct gr_shop_row *rows;   /* one per catalog GPU, owned */
  size_t nrows;
};
/* Fills s for the arguments (no machine: --gpu and --rig absent). 0, or -1
 * with err for bad input; free with gr_shop_free either way. */
int gr_plan_shop(const struct gr_plan_args *a, struct gr_shop *s, struct gr_err *err);
void gr_shop_free(struct gr_shop *s);

#endif
