/* Engines and what they load; see engine.h. */
#include "plan/engine.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "facts/facts.h"

/* Whether the comma-separated list holds word (case-insensitively). */
static bool list_has(const char *list, const char *word)
{
  size_t n = strlen(word);
  for (const char *p = list; p && *p;) {
    const char *end = strchr(p, ',');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    if (len == n && strncasecmp(p, word, n) == 0)
      return true;
    p = end ? end + 1 : NULL;
  }
  return false;
}

/* The row of data/engines.tsv an engine's name or alias names, or NULL. */
static const struct gr_engines_row *row_of(const char *name)
{
  const struct gr_engines_rows *t = gr_engines_rows();
  for (size_t r = 0; name && r < t->n; r++)
    if (strcasecmp(t->v[r].name, name) == 0 || list_has(t->v[r].aliases, name))
      return &t->v[r];
  return NULL;
}

void gr_engine_names(char *buf, size_t cap)
{
  size_t off = 0;
  buf[0] = '\0';
  const struct gr_engines_rows *t = gr_engines_rows();
  for (size_t r = 0; r < t->n && off < cap; r++)
    off += (size_t)snprintf(buf + off, cap - off, "%s%s", r ? ", " : "", t->v[r].name);
}

int gr_engine_parse(const char *s, const char **name, struct gr_err *err)
{
  const struct gr_engines_row *r = row_of(s);
  if (r) {
    *name = r->name;
    return 0;
  }
  char known[256];
  gr_engine_names(known, sizeof(known));
  return gr_fail(err, GR_EXIT_FAIL, "--engine %s: expected one of %s", s, known);
}

const char *gr_quant_family(const struct gr_quant *q)
{
  switch (q->kind) {
  case GR_Q_GGML: return "ggml";
  case GR_Q_GGUF: return "gguf";
  case GR_Q_GPTQ: return "gptq";
  case GR_Q_AWQ: return "awq";
  case GR_Q_BNB: return "bnb";
  case GR_Q_FLOAT: break;
  }
  return q->bits > 7.5 && q->bits < 9 ? "fp8" : "float"; /* fp8 and fp8-b128 (8 bits and its block scales) */
}

const char *gr_engine_default(bool training, const struct gr_quant *q, int gpus)
{
  const char *name = "vllm";
  if (training || (q->kind == GR_Q_BNB && gpus > 0))
    name = "transformers";
  else if (q->kind == GR_Q_GGUF || q->kind == GR_Q_GGML || gpus == 0)
    name = "llama.cpp"; /* CPU inference: llama.cpp is what runs it */
  const struct gr_engines_row *r = row_of(name);
  return r ? r->name : name;
}

bool gr_engine_has_format(const char *engine, const struct gr_quant *q)
{
  const struct gr_engines_row *r = row_of(engine);
  return r && list_has(r->formats, gr_quant_family(q));
}

bool gr_engine_has_kv_quant(const char *engine, const struct gr_quant *kv)
{
  const struct gr_engines_row *r = row_of(engine);
  return r && list_has(r->kv_quants, kv->name);
}

bool gr_engine_trains(const char *engine)
{
  const struct gr_engines_row *r = row_of(engine);
  return r && list_has(r->jobs, "train");
}

enum gr_swa gr_engine_swa(const char *engine)
{
  const struct gr_engines_row *r = row_of(engine);
  const char *v = r ? r->swa : "none";
  return strcmp(v, "all") == 0 ? GR_SWA_ALL : strcmp(v, "interleaved") == 0 ? GR_SWA_INTERLEAVED : GR_SWA_NONE;
}

bool gr_engine_is(const char *engine, const char *name)
{
  return engine && strcmp(engine, name) == 0;
}

/* The compute capability x 10 the engine's kernels need for a format
 * family (min_cc "awq:7.5,fp8:8.0"), 0 when none is stated. */
static int min_cc_of(const struct gr_engines_row *r, const char *family)
{
  const char *list = r->min_cc;
  size_t n = strlen(family);
  for (const char *p = list; p && *p;) {
    int major, minor;
    if (strncmp(p, family, n) == 0 && p[n] == ':' && sscanf(p + n + 1, "%d.%d", &major, &minor) == 2)
      return major * 10 + minor;
    p = strchr(p, ',');
    p = p ? p + 1 : NULL;
  }
  return 0;
}

/* The rocm column's entry for a family ("fp8:gfx942|gfx950"): NULL when the
 * engine does not offer it on ROCm; *archs the architectures after the colon
 * ("" any), up to the next comma. */
static const char *rocm_entry(const struct gr_engines_row *r, const char *family, size_t *archs_len,
                              const char **archs)
{
  size_t n = strlen(family);
  for (const char *p = r->rocm; p && *p;) {
    size_t len = strcspn(p, ",");
    if (len >= n && strncmp(p, family, n) == 0 && (len == n || p[n] == ':')) {
      *archs = len == n ? "" : p + n + 1;
      *archs_len = len == n ? 0 : len - n - 1;
      return p;
    }
    p = p[len] ? p + len + 1 : NULL;
  }
  return NULL;
}

/* Whether the engine's ROCm build runs family on gpu's architecture. */
static bool rocm_runs(const struct gr_engines_row *r, const char *family, const struct gr_gpu_model *gpu, char *why,
                      size_t cap)
{
  const char *archs;
  size_t alen;
  if (!rocm_entry(r, family, &alen, &archs)) {
    snprintf(why, cap, "%s on ROCm does not offer %s weights (data/engines.tsv rocm: %s)", r->name, family, r->rocm);
    return false;
  }
  size_t an = gpu->arch ? strlen(gpu->arch) : 0;
  for (const char *p = archs; alen > 0 && p < archs + alen;) {
    size_t len = strcspn(p, "|,");
    if (len == an && an > 0 && strncmp(p, gpu->arch, an) == 0)
      return true;
    p += len + 1;
  }
  if (alen == 0)
    return true;
  snprintf(why, cap, "%s's %s kernels on ROCm need %.*s; %s is %s", r->name, family, (int)alen, archs, gpu->model,
           gpu->arch ? gpu->arch : "of an unknown architecture");
  return false;
}

bool gr_engine_format_runs(const char *engine, const struct gr_quant *q, const struct gr_gpu_model *gpu, char *why,
                           size_t cap)
{
  const struct gr_engines_row *r = row_of(engine);
  const char *family = gr_quant_family(q);
  /* AMD GPUs run the engine's ROCm build, whose formats are its own */
  if (r && gpu && gpu->vendor && strcmp(gpu->vendor, "amd") == 0)
    return rocm_runs(r, family, gpu, why, cap);
  if (!r || !list_has(r->formats, family)) {
    snprintf(why, cap, "%s does not load %s weights (%s)", engine ? engine : "(no engine)", q->name, family);
    return false;
  }
  int need = min_cc_of(r, family), have = gpu ? gpu->cc_major * 10 + gpu->cc_minor : 0;
  if (need > 0 && have > 0 && have < need) {
    snprintf(why, cap, "%s's %s kernels need compute capability %d.%d; %s has %d.%d", r->name, family,
             need / 10, need % 10, gpu->model, gpu->cc_major, gpu->cc_minor);
    return false;
  }
  return true;
}

/* ---- versions and speed profiles ---- */

/* "YYYY-MM" as year * 12 + month - 1; 0 when it is not one. */
static int month_of(const char *s)
{
  int y, m, n = 0;
  if (sscanf(s, "%4d-%2d%n", &y, &m, &n) != 2 || s[n] != '\0' || y < 2000 || y > 2100 || m < 1 || m > 12)
    return 0;
  return y * 12 + m - 1;
}

int gr_engine_parse_versioned(const char *s, const char **name, int *month, struct gr_err *err)
{
  const char *at = strchr(s, '@');
  *month = 0;
  if (!at)
    return gr_engine_parse(s, name, err);
  char base[64];
  snprintf(base, sizeof(base), "%.*s", (int)(at - s < 63 ? at - s : 63), s);
  if (gr_engine_parse(base, name, err) != 0)
    return -1;
  if (at[1] == 'b' && at[2] >= '0' && at[2] <= '9')
    return gr_fail(err, GR_EXIT_FAIL, "--engine %s: gpurig keeps no table of build numbers; give the month of the "
                   "build instead (%s@YYYY-MM, e.g. %s@2024-06)", s, *name, *name);
  *month = month_of(at + 1);
  if (*month == 0)
    return gr_fail(err, GR_EXIT_FAIL, "--engine %s: expected NAME@YYYY-MM, the month of the build (e.g. %s@2024-06)",
                   s, *name);
  return 0;
}

/* The row that holds key for the build: the newest row at or before the
 * month (any month when month is 0), a row of the arch before a row for
 * every arch; NULL when none does. */
static const struct gr_engine_speed_row *speed_row(const char *engine, int month, const char *arch,
                                                   enum gr_engine_speed_key key)
{
  size_t n;
  const struct gr_engine_speed_row *rows = gr_engine_speed_rows(&n);
  const struct gr_engine_speed_row *best = NULL;
  for (size_t i = 0; engine && i < n; i++) {
    const struct gr_engine_speed_row *row = &rows[i];
    if (row->key != key || strcmp(row->engine, engine) != 0 || (month > 0 && row->since > month))
      continue;
    if (row->arch && (!arch || strcmp(row->arch, arch) != 0))
      continue;
    bool better = !best || (row->arch && !best->arch) || ((!row->arch == !best->arch) && row->since > best->since);
    if (better)
      best = row;
  }
  return best;
}

static long key_index(const char *key)
{
#define GR_KEY_WORD(k) #k,
  static const char *const keys[] = {GR_ENGINE_SPEED_KEYS(GR_KEY_WORD) NULL};
#undef GR_KEY_WORD
  for (long i = 0; keys[i]; i++)
    if (strcmp(keys[i], key) == 0)
      return i;
  return -1;
}

double gr_engine_speed(const char *engine, int month, const char *arch, const char *key)
{
  long k = key_index(key);
  const struct gr_engine_speed_row *row = k >= 0 ? speed_row(engine, month, arch, (enum gr_engine_speed_key)k) : NULL;
  return row ? row->value : NAN;
}

int gr_engine_profile_month(const char *engine, int month)
{
  size_t n;
  const struct gr_engine_speed_row *rows = gr_engine_speed_rows(&n);
  int newest = 0;
  for (size_t i = 0; engine && i < n; i++) {
    const struct gr_engine_speed_row *row = &rows[i];
    if (strcmp(row->engine, engine) == 0 && (month == 0 || row->since <= month) && row->since > newest)
      newest = row->since;
  }
  return newest;
}

void gr_engine_profile(const char *engine, int month, const char *arch, struct gr_engine_profile *p)
{
  const struct gr_engine_speed_row *row;
#define GR_PROFILE_GET(k) p->k = (row = speed_row(engine, month, arch, GR_ES_##k)) ? row->value : NAN;
  GR_ENGINE_SPEED_KEYS(GR_PROFILE_GET)
#undef GR_PROFILE_GET
}
