/* Inference and training engines (data/engines.tsv): which weight and
 * KV-cache formats each loads. `gpurig plan --engine` names one; without it
 * the engine follows the weight format (GGUF and ggml types: llama.cpp,
 * bitsandbytes and training jobs: transformers, other formats: vLLM). The
 * engine decides the KV layout, the compute buffers, the formats a plan may
 * suggest and the speed constants (docs/plan.md).
 *
 * Ownership: the names returned point into the loaded facts and live as long
 * as they do (until gr_facts_unload); nothing is allocated. */
#ifndef GPURIG_ENGINE_H
#define GPURIG_ENGINE_H

#include <stdbool.h>
#include <stddef.h>

#include "base/util.h"
#include "facts/catalog.h"
#include "facts/facts.h"
#include "plan/quant.h"

/* The engine named s (its name or an alias, case-insensitively): its
 * canonical name in *name. -1 with "--engine X: expected ..." in err. */
int gr_engine_parse(const char *s, const char **name, struct gr_err *err);

/* "NAME" or "NAME@YYYY-MM": the engine and the month of its build as
 * year * 12 + month - 1 in *month (0: no month given, the current release).
 * -1 with the problem in err. */
int gr_engine_parse_versioned(const char *s, const char **name, int *month, struct gr_err *err);

/* A key of the engine's speed profile (data/engine-speed.tsv) for a build of
 * month (0: the current release) on a GPU of architecture arch (NULL: any):
 * the newest row at or before the month, a row of the arch before a row for
 * every arch. NAN when the engine has no such row. */
double gr_engine_speed(const char *engine, int month, const char *arch, const char *key);

/* A build's speed profile as fields (data/engine-speed.tsv, keys in
 * facts/facts.h GR_ENGINE_SPEED_KEYS): each the value gr_engine_speed gives,
 * NAN where the engine has no row for it (train_mfu of an inference-only
 * engine). */
#define GR_PROFILE_FIELD(k) double k;
struct gr_engine_profile {
  GR_ENGINE_SPEED_KEYS(GR_PROFILE_FIELD)
};
#undef GR_PROFILE_FIELD
void gr_engine_profile(const char *engine, int month, const char *arch, struct gr_engine_profile *p);

/* The month of the newest profile row the engine's build of month reads
 * (year * 12 + month - 1), 0 when the engine has no profile. */
int gr_engine_profile_month(const char *engine, int month);

/* The engine a job in format q runs on when --engine is not given. */
const char *gr_engine_default(bool training, const struct gr_quant *q, int gpus);

/* Whether the engine loads weights in format q, or offers KV elements kv. */
bool gr_engine_has_format(const char *engine, const struct gr_quant *q);
bool gr_engine_has_kv_quant(const char *engine, const struct gr_quant *kv);
/* How the engine caches a sliding-window model's layers (engines.tsv swa). */
enum gr_swa gr_engine_swa(const char *engine);
/* Whether the engine loads format q and its kernels run on gpu (NULL or a
 * GPU of unknown compute capability: no limit known). false with the reason
 * in why ("vllm's awq kernels need compute capability 7.5; V100 SXM2 16GB
 * has 7.0"). */
bool gr_engine_format_runs(const char *engine, const struct gr_quant *q, const struct gr_gpu_model *gpu, char *why,
                           size_t cap);
/* Whether the request names this engine (engine may be NULL). */
bool gr_engine_is(const char *engine, const char *name);
/* Whether the engine runs training jobs. */
bool gr_engine_trains(const char *engine);

/* The format family of q as engines.tsv names it (float, fp8, ggml, gguf,
 * gptq, awq, bnb); static string. */
const char *gr_quant_family(const struct gr_quant *q);

/* Writes the engine names, comma-separated, into buf. */
void gr_engine_names(char *buf, size_t cap);

#endif
