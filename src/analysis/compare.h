/* `gpurig compare`: machines described in rig files judged side by side
 * before anyone buys them: VRAM, price per GiB, the P2P share and the
 * training rank, and with --job the rank by the job's predicted speed.
 *
 * Ownership: gr_compare_open fills an array of struct gr_judged the caller
 * frees with gr_compare_close; each holds its machine. */
#ifndef GPURIG_COMPARE_H
#define GPURIG_COMPARE_H

#include <stdbool.h>
#include <stddef.h>

#include "analysis/machine.h"
#include "analysis/predict.h"

struct gr_judged {
  struct gr_machine m;
  char name[48];      /* the rig file's name without .rig ("sys-4028gr-tr-x10drg"), cut to fit */
  double vram_gib;    /* catalog memory of every GPU together */
  double ram_gib;     /* host RAM the rig states (cpu ... ram), 0 unless every socket states it */
  int rank;           /* training rank, 1 = best; equal machines share a rank */
  /* --job: the plan's outcome on this rig (the caller fills them; gr_compare_rank_job ranks by them) */
  bool job;           /* a job was planned on it: job_rank orders the rigs, not rank */
  bool job_fits;      /* fits, or fits but tight */
  double job_tps;     /* its predicted tokens/s: decode (inference) or training, middle figure; 0 none */
  int job_rank;       /* 1 = fastest; 0 without a job */
};

/* Two speeds closer than this share a job rank: the predictions carry
 * ranges far wider than 1%, so a smaller gap would rank noise. */
#define GR_COMPARE_TIE 0.01

/* Opens each rig (with gpu_model in every slot when non-NULL), analyses it
 * with the defaults of NCCL version nccl (NULL or major 0: gpurig's
 * default), predicts it, and ranks them. flags are gr_machine_open's
 * (GR_MACHINE_PREDICT is added; GR_MACHINE_GROUPS when the rigs will be
 * planned on). 0, or -1 with err naming the rig that failed (nothing is
 * left to free then). */
int gr_compare_open(char *const *rigs, size_t n, const char *gpu_model, const struct gr_nccl_version *nccl,
                    unsigned flags, struct gr_judged **out, struct gr_err *err);
void gr_compare_close(struct gr_judged *j, size_t n);

/* The machines in the order shown (best first): job rank when a job was
 * planned (training rank between rigs that share it), else training rank.
 * An array of pointers into js the caller frees with free(). */
const struct gr_judged **gr_compare_order(const struct gr_judged *js, size_t n);
/* The same in training-rank order, whether or not a job was planned. */
const struct gr_judged **gr_compare_training_order(const struct gr_judged *js, size_t n);

/* Sets job_rank from job_fits and job_tps (filled on every rig, job set):
 * rigs where the job fits before those where it does not, each by speed,
 * fastest first; speeds within GR_COMPARE_TIE of the rig before share its
 * rank, and so do rigs with no speed (0) in the same fit class. */
void gr_compare_rank_job(struct gr_judged *js, size_t n);
/* True when a and b share a job rank. */
bool gr_compare_job_tied(const struct gr_judged *a, const struct gr_judged *b);

/* The verdict for a workload ("training", "tensor-parallel inference",
 * "independent jobs") over `gpus` GPUs (-1: any), or NULL. */
const struct gr_verdict *gr_compare_verdict(const struct gr_judged *j, const char *workload, int gpus);

/* Price per GiB of VRAM in the rig's currency, 0 when the price is unknown. */
double gr_compare_price_per_gib(const struct gr_judged *j);

/* The rigs bundled in data/rigs/: each name with its title, or why it does
 * not load. The caller frees the array with gr_rig_list_free. 0, or -1 with
 * err (GR_EXIT_CANNOT_RUN) when the folder cannot be read. */
struct gr_rig_entry {
  char *name;     /* "wopr" */
  char *title;    /* the rig's own title, NULL when it does not load */
  char *problem;  /* why it does not load, NULL when it does */
};
int gr_rig_list(struct gr_rig_entry **out, size_t *n, struct gr_err *err);
void gr_rig_list_free(struct gr_rig_entry *rigs, size_t n);

#endif
