/* One loader for every data file, each loaded on first use; see facts.h. */
#include "facts/facts.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "facts/pciids.h"
#include "facts/rows.h"

/* A row of a key/value table (calibration, planner, health): a constant
 * with its source. Kept sorted by key. */
struct gr_kv {
  const char *key;
  double value;
  const char *source;
};

struct gr_kv_table {
  const char *name; /* the file, for messages */
  struct gr_kv *rows;
  size_t n;
};

/* Every table, one slot each: loaded on first use, never changed after. */
#define GR_SLOT_ROW(id, file, COLS) SLOT_##id,
enum slot {
  SLOT_PCIE,
  SLOT_GPUS,
  SLOT_CALIBRATION,
  SLOT_PLANNER,
  SLOT_HEALTH,
  SLOT_DIFFUSION_MEMORY,
  SLOT_ENGINE_SPEED,
  SLOT_PCI_DEVICES,
  SLOT_NCCL_P2P,
  GR_ROW_TABLES(GR_SLOT_ROW)
  SLOT_PCIIDS, /* not a table: the mapped pci.ids */
  SLOT_COUNT
};
#undef GR_SLOT_ROW

/* What the slots hold. The strings of every row point into raw[], the
 * parsed text of each file. */
struct store {
  struct gr_pcie_gen gens[GR_FACTS_MAX_GENS]; /* pcie-links.tsv */
  size_t ngens;
  struct gr_gpu_model *gpus; /* gpus.tsv, the GPU catalog */
  size_t ngpus;
  struct gr_kv_table calibration, planner, health, diffusion_memory;
  struct gr_calibration_consts calib;
  struct gr_planner_consts plan;
  struct gr_health_consts health_c;
  struct gr_diffusion_consts diffusion_c;
  struct gr_engine_speed_row *speed_rows;
  size_t nspeed_rows;
  struct gr_pci_rule *pci_rules;
  size_t npci_rules;
  struct gr_nccl_rule *nccl_rules;
  size_t nnccl_rules;
#define GR_STORE_ROWS(id, file, COLS) struct gr_##id##_rows id;
  GR_ROW_TABLES(GR_STORE_ROWS)
#undef GR_STORE_ROWS
  const char *pciids;
  size_t pciids_len;
  struct gr_table raw[SLOT_COUNT];
};

/* The loaded facts. A slot's ready flag is set (release) after its fields
 * are filled, under lock; a reader that sees it set (acquire) reads them
 * without the lock. */
static struct store S;
static atomic_bool ready[SLOT_COUNT];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char data_dir[4096]; /* where data/ was found; empty until first needed */

/* The keys gpurig asks of each key/value table: a data file without one of
 * them is refused at load, not discovered later as a silent 0. */
#define GR_KEY_NAME(k) #k,
static const char *const calibration_keys[] = {GR_CALIBRATION_CONSTS(GR_KEY_NAME) NULL};
static const char *const planner_keys[] = {GR_PLANNER_CONSTS(GR_KEY_NAME) NULL};
static const char *const health_keys[] = {GR_HEALTH_CONSTS(GR_KEY_NAME) NULL};
static const char *const diffusion_memory_keys[] = {GR_DIFFUSION_CONSTS(GR_KEY_NAME) NULL};

#undef GR_KEY_NAME

static int need_columns(const struct gr_table *t, const char *const *cols, struct gr_err *err)
{
  for (size_t i = 0; cols[i]; i++)
    if (gr_table_col(t, cols[i]) < 0)
      return gr_fail(err, GR_EXIT_CANNOT_RUN, "%s: missing column %s", t->name, cols[i]);
  return 0;
}

/* engine-speed.tsv into typed rows: every key one gpurig reads, every
 * value a number, every month YYYY-MM; a bad row is refused at load with
 * its line. */
static int build_engine_speed(struct store *s, const struct gr_table *t, struct gr_err *err)
{
#define GR_KEY_WORD(k) #k,
  static const char *const known[] = {GR_ENGINE_SPEED_KEYS(GR_KEY_WORD) NULL};
#undef GR_KEY_WORD
  static const char *const cols[] = {"engine", "since", "arch", "key", "value", "prior", "fit", "source", NULL};
  if (need_columns(t, cols, err) != 0)
    return -1;
  int ce = gr_table_col(t, "engine"), ca = gr_table_col(t, "arch"), ck = gr_table_col(t, "key");
  int cv = gr_table_col(t, "value"), cs = gr_table_col(t, "since");
  s->speed_rows = xcalloc(t->nrows + 1, sizeof(*s->speed_rows));
  for (size_t r = 0; r < t->nrows; r++) {
    struct gr_engine_speed_row *row = &s->speed_rows[s->nspeed_rows++];
    const char *key = gr_table_cell(t, r, (size_t)ck), *v = gr_table_cell(t, r, (size_t)cv);
    const char *since = gr_table_cell(t, r, (size_t)cs), *arch = gr_table_cell(t, r, (size_t)ca);
    size_t i = 0;
    while (known[i] && strcmp(known[i], key) != 0)
      i++;
    char *end;
    int y, m, n = 0;
    row->value = gr_strtod(v, &end);
    if (!known[i])
      return gr_fail(err, GR_EXIT_CANNOT_RUN, "%s:%zu: unknown key %s", t->name, t->lines[r], key);
    if (end == v || *end || !(row->value >= 0 && row->value < 1e6))
      return gr_fail(err, GR_EXIT_CANNOT_RUN, "%s:%zu: value of %s is not a number from 0: \"%s\"", t->name,
                     t->lines[r], key, v);
    if (sscanf(since, "%4d-%2d%n", &y, &m, &n) != 2 || since[n] || m < 1 || m > 12)
      return gr_fail(err, GR_EXIT_CANNOT_RUN, "%s:%zu: since must be YYYY-MM, not \"%s\"", t->name, t->lines[r],
                     since);
    row->engine = gr_table_cell(t, r, (size_t)ce);
    row->arch = strcmp(arch, "-") == 0 ? NULL : arch;
    row->since = y * 12 + m - 1;
    row->key = (enum gr_engine_speed_key)i;
  }
  return 0;
}

/* The row tables (facts/tables.h): each one's column specs, from its list,
 * and its builder, which parses every row into its typed struct. */
#define GR_COL_SPEC(T, name, kind, lo, hi, words) \
  {#name, GR_COL_##kind, lo, hi, words, offsetof(struct gr_##T##_row, name)},
#define GR_ROWS_BUILDER(id, file, COLS) \
  static const struct gr_col_spec id##_spec[] = {COLS(GR_COL_SPEC, id)}; \
  static int build_##id(struct store *s, const struct gr_table *t, struct gr_err *err) \
  { \
    void *rows; \
    int rc = gr_rows_parse(t, id##_spec, sizeof(id##_spec) / sizeof(id##_spec[0]), sizeof(struct gr_##id##_row), \
                           offsetof(struct gr_##id##_row, line), &rows, err); \
    s->id = (struct gr_##id##_rows){rows, rc == 0 ? t->nrows : 0, t->name}; \
    return rc; \
  }
GR_ROW_TABLES(GR_ROWS_BUILDER)
#undef GR_ROWS_BUILDER
#undef GR_COL_SPEC

static int cmp_kv(const void *a, const void *b)
{
  return strcmp(((const struct gr_kv *)a)->key, ((const struct gr_kv *)b)->key);
}

/* A key/value table: every row a number, every needed key present. */
static int build_kv(const struct gr_table *t, const char *const *keys, struct gr_kv_table *kv, struct gr_err *err)
{
  static const char *const cols[] = {"key", "value", "source", NULL};
  if (need_columns(t, cols, err) != 0)
    return -1;
  size_t ck = (size_t)gr_table_col(t, "key"), cv = (size_t)gr_table_col(t, "value");
  size_t cs = (size_t)gr_table_col(t, "source");
  kv->name = t->name;
  kv->rows = xcalloc(t->nrows + 1, sizeof(*kv->rows));
  for (size_t r = 0; r < t->nrows; r++) {
    const char *v = gr_table_cell(t, r, cv);
    char *end;
    struct gr_kv *row = &kv->rows[kv->n++];
    row->key = gr_table_cell(t, r, ck);
    row->source = gr_table_cell(t, r, cs);
    row->value = gr_strtod(v, &end);
    if (end == v || *end)
      return gr_fail(err, GR_EXIT_CANNOT_RUN, "%s:%zu: value of %s is not a number: \"%s\"", t->name, t->lines[r],
                     row->key, v);
  }
  qsort(kv->rows, kv->n, sizeof(*kv->rows), cmp_kv);
  for (size_t i = 0; keys[i]; i++)
    if (!bsearch(&(struct gr_kv){.key = keys[i]}, kv->rows, kv->n, sizeof(*kv->rows), cmp_kv))
      return gr_fail(err, GR_EXIT_CANNOT_RUN, "%s: no row for %s", t->name, keys[i]);
  return 0;
}

/* A constant of a key/value table; every key asked for was checked by build_kv. */
static double kv_value(const struct gr_kv_table *t, const char *key)
{
  const struct gr_kv *row = bsearch(&(struct gr_kv){.key = key}, t->rows, t->n, sizeof(*t->rows), cmp_kv);
  return row->value;
}

/* The key/value tables into their constants as struct fields. */
#define GR_KV_GET(k) out->k = kv_value(kv, #k);
#define GR_KV_BUILDER(fn, keys, table, field, type, CONSTS) \
  static int fn(struct store *s, const struct gr_table *t, struct gr_err *err) \
  { \
    const struct gr_kv_table *kv = &s->table; \
    struct type *out = &s->field; \
    if (build_kv(t, keys, &s->table, err) != 0) \
      return -1; \
    CONSTS(GR_KV_GET) \
    return 0; \
  }
GR_KV_BUILDER(build_calibration, calibration_keys, calibration, calib, gr_calibration_consts, GR_CALIBRATION_CONSTS)
GR_KV_BUILDER(build_planner, planner_keys, planner, plan, gr_planner_consts, GR_PLANNER_CONSTS)
GR_KV_BUILDER(build_health, health_keys, health, health_c, gr_health_consts, GR_HEALTH_CONSTS)
GR_KV_BUILDER(build_diffusion_memory, diffusion_memory_keys, diffusion_memory, diffusion_c, gr_diffusion_consts, GR_DIFFUSION_CONSTS)
#undef GR_KV_BUILDER
#undef GR_KV_GET

/* A hex id of at most `digits` digits, or "*" (-1). */
static bool parse_id(const char *text, int digits, int *out)
{
  unsigned long v;
  if (strcmp(text, "*") == 0) {
    *out = -1;
    return true;
  }
  if (strlen(text) != (size_t)digits || !parse_ulong(text, 16, &v))
    return false;
  *out = (int)v;
  return true;
}

/* pci-devices.tsv into rules, every cell checked: a bad row is refused at
 * start with its line, not skipped at lookup. */
static int build_pci_devices(struct store *s, const struct gr_table *t, struct gr_err *err)
{
  static const char *const cols[] = {"vendor", "device", "class", "kind", "name", "source", NULL};
  if (need_columns(t, cols, err) != 0)
    return -1;
  int cv = gr_table_col(t, "vendor"), cd = gr_table_col(t, "device"), cc = gr_table_col(t, "class"),
      ck = gr_table_col(t, "kind");
  s->pci_rules = xcalloc(t->nrows, sizeof(*s->pci_rules));
  for (size_t r = 0; r < t->nrows; r++) {
    struct gr_pci_rule *rule = &s->pci_rules[r];
    const char *kind = gr_table_cell(t, r, (size_t)ck);
    int vendor;
    if (!parse_id(gr_table_cell(t, r, (size_t)cv), 4, &vendor) || vendor < 0 ||
        !parse_id(gr_table_cell(t, r, (size_t)cd), 4, &rule->device) ||
        !parse_id(gr_table_cell(t, r, (size_t)cc), 4, &rule->class_sub) ||
        (strcmp(kind, "display") != 0 && strcmp(kind, "accelerator") != 0))
      return gr_fail(err, GR_EXIT_CANNOT_RUN,
                     "%s:%zu: expected a 4-digit hex vendor, a device and class (4 hex digits or *) and a kind "
                     "(display or accelerator)", t->name, t->lines[r]);
    rule->vendor = (unsigned)vendor;
    rule->accelerator = strcmp(kind, "accelerator") == 0;
  }
  s->npci_rules = t->nrows;
  return 0;
}

/* ---- NCCL versions and nccl-p2p.tsv ---- */

/* One version component: 1 to 4 digits. */
static bool version_part(const char *s, size_t len, int *out)
{
  int v = 0;
  if (len < 1 || len > 4)
    return false;
  for (size_t i = 0; i < len; i++) {
    if (s[i] < '0' || s[i] > '9')
      return false;
    v = v * 10 + (s[i] - '0');
  }
  *out = v;
  return true;
}

bool gr_nccl_version_parse(const char *text, struct gr_nccl_version *v)
{
  int part[3] = {0, 0, -1};
  size_t n = 0;
  const char *s = text;
  if (!text)
    return false;
  for (;;) {
    size_t len = strcspn(s, ".");
    if (n == 3 || !version_part(s, len, &part[n]))
      return false;
    n++;
    if (!s[len])
      break;
    s += len + 1;
  }
  if (n < 2 || part[0] == 0)
    return false;
  *v = (struct gr_nccl_version){part[0], part[1], part[2]};
  return true;
}

int gr_nccl_version_cmp(const struct gr_nccl_version *a, const struct gr_nccl_version *b)
{
  if (a->major != b->major)
    return a->major < b->major ? -1 : 1;
  if (a->minor != b->minor)
    return a->minor < b->minor ? -1 : 1;
  int pa = a->patch < 0 ? 10000 : a->patch, pb = b->patch < 0 ? 10000 : b->patch; /* parts have 4 digits at most */
  return pa < pb ? -1 : pa > pb;
}

const char *gr_nccl_version_text(const struct gr_nccl_version *v, char *buf, size_t cap)
{
  if (v->patch < 0)
    snprintf(buf, cap, "%d.%d", v->major, v->minor);
  else
    snprintf(buf, cap, "%d.%d.%d", v->major, v->minor, v->patch);
  return buf;
}

static bool nccl_cpu_known(const char *cpu)
{
  static const char *const classes[] = {"amd", "intel", "intel-bdw", "zhaoxin", "arm", "*"};
  for (size_t i = 0; i < sizeof(classes) / sizeof(classes[0]); i++)
    if (strcmp(cpu, classes[i]) == 0)
      return true;
  return false;
}

/* "*" (0) or "<=N" with 1 <= N <= 9999. */
static bool nccl_gpus_parse(const char *text, int *max)
{
  long v;
  if (strcmp(text, "*") == 0) {
    *max = 0;
    return true;
  }
  if (strncmp(text, "<=", 2) != 0 || !parse_long(text + 2, 10, &v) || v < 1 || v > 9999)
    return false;
  *max = (int)v;
  return true;
}

static bool nccl_level_known(const char *level)
{
  return strcmp(level, "PIX") == 0 || strcmp(level, "PXB") == 0 || strcmp(level, "PHB") == 0 ||
         strcmp(level, "SYS") == 0;
}

/* nccl-p2p.tsv into rules, every cell checked: full versions (since <=
 * until), a CPU class, a GPU condition and a level. */
static int build_nccl_p2p(struct store *s, const struct gr_table *t, struct gr_err *err)
{
  static const char *const cols[] = {"since", "until", "cpu", "gpus", "level", "source", NULL};
  if (need_columns(t, cols, err) != 0)
    return -1;
  size_t cs = (size_t)gr_table_col(t, "since"), cu = (size_t)gr_table_col(t, "until"),
         cc = (size_t)gr_table_col(t, "cpu"), cg = (size_t)gr_table_col(t, "gpus"),
         cl = (size_t)gr_table_col(t, "level"), cr = (size_t)gr_table_col(t, "source");
  if (t->nrows == 0)
    return gr_fail(err, GR_EXIT_CANNOT_RUN, "%s: no rules", t->name);
  s->nccl_rules = xcalloc(t->nrows, sizeof(*s->nccl_rules));
  for (size_t r = 0; r < t->nrows; r++) {
    struct gr_nccl_rule *rule = &s->nccl_rules[r];
    rule->cpu = gr_table_cell(t, r, cc);
    rule->level = gr_table_cell(t, r, cl);
    rule->source = gr_table_cell(t, r, cr);
    if (!gr_nccl_version_parse(gr_table_cell(t, r, cs), &rule->since) || rule->since.patch < 0 ||
        !gr_nccl_version_parse(gr_table_cell(t, r, cu), &rule->until) || rule->until.patch < 0 ||
        gr_nccl_version_cmp(&rule->since, &rule->until) > 0 || !nccl_cpu_known(rule->cpu) ||
        !nccl_gpus_parse(gr_table_cell(t, r, cg), &rule->gpus_max) || !nccl_level_known(rule->level))
      return gr_fail(err, GR_EXIT_CANNOT_RUN,
                     "%s:%zu: expected since and until as X.Y.Z (since <= until), a cpu (amd, intel, intel-bdw, "
                     "zhaoxin, arm or *), gpus (* or <=N) and a level (PIX, PXB, PHB or SYS)", t->name, t->lines[r]);
  }
  s->nnccl_rules = t->nrows;
  /* every era ends in a rule for any CPU and any count, so a version the
   * table covers always finds one */
  for (size_t r = 0; r < t->nrows; r++) {
    bool closed = false;
    for (size_t q = 0; q < t->nrows && !closed; q++)
      closed = gr_nccl_version_cmp(&s->nccl_rules[q].since, &s->nccl_rules[r].since) == 0 &&
               strcmp(s->nccl_rules[q].cpu, "*") == 0 && s->nccl_rules[q].gpus_max == 0;
    if (!closed)
      return gr_fail(err, GR_EXIT_CANNOT_RUN, "%s:%zu: the era of this row has no rule with cpu * and gpus *",
                     t->name, t->lines[r]);
  }
  return 0;
}

static void need(enum slot id);

struct gr_nccl_version gr_nccl_newest(void)
{
  need(SLOT_NCCL_P2P);
  struct gr_nccl_version v = S.nccl_rules[0].until;
  for (size_t i = 1; i < S.nnccl_rules; i++)
    if (gr_nccl_version_cmp(&S.nccl_rules[i].until, &v) > 0)
      v = S.nccl_rules[i].until;
  return v;
}

struct gr_nccl_version gr_nccl_oldest(void)
{
  need(SLOT_NCCL_P2P);
  struct gr_nccl_version v = S.nccl_rules[0].since;
  for (size_t i = 1; i < S.nnccl_rules; i++)
    if (gr_nccl_version_cmp(&S.nccl_rules[i].since, &v) < 0)
      v = S.nccl_rules[i].since;
  return v;
}

static bool nccl_rule_matches(const struct gr_nccl_rule *r, const char *cpu, size_t ngpus)
{
  bool cpu_ok = strcmp(r->cpu, "*") == 0 || (cpu && strcmp(r->cpu, cpu) == 0) ||
                (cpu && strcmp(r->cpu, "intel") == 0 && strcmp(cpu, "intel-bdw") == 0);
  return cpu_ok && (r->gpus_max == 0 || ngpus <= (size_t)r->gpus_max);
}

const struct gr_nccl_rule *gr_nccl_p2p_rule(const struct gr_nccl_version *v, const char *cpu, size_t ngpus)
{
  need(SLOT_NCCL_P2P);
  const struct gr_nccl_version *era = NULL;
  for (size_t i = 0; i < S.nnccl_rules; i++) {
    const struct gr_nccl_version *since = &S.nccl_rules[i].since;
    if (gr_nccl_version_cmp(since, v) <= 0 && (!era || gr_nccl_version_cmp(since, era) > 0))
      era = since;
  }
  for (size_t i = 0; era && i < S.nnccl_rules; i++)
    if (gr_nccl_version_cmp(&S.nccl_rules[i].since, era) == 0 && nccl_rule_matches(&S.nccl_rules[i], cpu, ngpus))
      return &S.nccl_rules[i];
  return NULL;
}

/* ---- the slots: loading on first use ---- */

static int build_pcie(struct store *s, const struct gr_table *t, struct gr_err *err)
{
  return gr_pcie_gens_parse(t, s->gens, GR_FACTS_MAX_GENS, &s->ngens, err);
}

static int build_gpus(struct store *s, const struct gr_table *t, struct gr_err *err)
{
  return gr_catalog_parse(t, &s->gpus, &s->ngpus, err);
}

/* Each table's file and builder (a table's rows from its parsed text). */
#define GR_SLOT_FILE(id, file, COLS) [SLOT_##id] = {file, build_##id},
static const struct {
  const char *file;
  int (*build)(struct store *s, const struct gr_table *t, struct gr_err *err);
} slots[SLOT_COUNT] = {
    [SLOT_PCIE] = {"pcie-links.tsv", build_pcie},
    [SLOT_GPUS] = {"gpus.tsv", build_gpus},
    [SLOT_CALIBRATION] = {"calibration.tsv", build_calibration},
    [SLOT_PLANNER] = {"planner.tsv", build_planner},
    [SLOT_HEALTH] = {"health.tsv", build_health},
    [SLOT_DIFFUSION_MEMORY] = {"diffusion-memory.tsv", build_diffusion_memory},
    [SLOT_ENGINE_SPEED] = {"engine-speed.tsv", build_engine_speed},
    [SLOT_PCI_DEVICES] = {"pci-devices.tsv", build_pci_devices},
    [SLOT_NCCL_P2P] = {"nccl-p2p.tsv", build_nccl_p2p},
    GR_ROW_TABLES(GR_SLOT_FILE)
    [SLOT_PCIIDS] = {NULL, NULL},
};
#undef GR_SLOT_FILE

static void free_store(struct store *s)
{
  free(s->pci_rules);
  free(s->speed_rows);
  free(s->nccl_rules);
#define GR_FREE_ROWS(id, file, COLS) free((void *)s->id.v);
  GR_ROW_TABLES(GR_FREE_ROWS)
#undef GR_FREE_ROWS
  free(s->calibration.rows);
  free(s->planner.rows);
  free(s->health.rows);
  free(s->diffusion_memory.rows);
  free(s->gpus);
  for (size_t i = 0; i < SLOT_COUNT; i++)
    gr_table_free(&s->raw[i]);
  gr_pciids_unmap(s->pciids, s->pciids_len);
  memset(s, 0, sizeof(*s));
}

/* Loads one slot into s from the data directory. Called under lock. */
static int load_slot(struct store *s, enum slot id, struct gr_err *err)
{
  if (!data_dir[0])
    gr_data_dir_find(data_dir, sizeof(data_dir));
  if (id == SLOT_PCIIDS)
    return gr_pciids_map(&s->pciids, &s->pciids_len);
  if (gr_table_load(data_dir, slots[id].file, &s->raw[id], err) != 0 || slots[id].build(s, &s->raw[id], err) != 0) {
    if (err)
      err->code = GR_EXIT_CANNOT_RUN; /* gpurig's own data, not the user's input */
    return -1;
  }
  return 0;
}

/* A slot, loaded if it is not yet. Broken data is fatal here (facts.h):
 * every caller would have to stop anyway, and a test loads every table
 * through gr_facts_load_all, which returns the error. */
static void need(enum slot id)
{
  if (atomic_load_explicit(&ready[id], memory_order_acquire))
    return;
  pthread_mutex_lock(&lock);
  if (!atomic_load_explicit(&ready[id], memory_order_relaxed)) {
    struct gr_err err = {0};
    if (load_slot(&S, id, &err) != 0) {
      fprintf(stderr, "gpurig: %s\n", err.msg);
      exit(GR_EXIT_CANNOT_RUN);
    }
    atomic_store_explicit(&ready[id], true, memory_order_release);
  }
  pthread_mutex_unlock(&lock);
}

int gr_facts_load(struct gr_err *err)
{
  (void)err;
  pthread_mutex_lock(&lock);
  if (!data_dir[0])
    gr_data_dir_find(data_dir, sizeof(data_dir));
  pthread_mutex_unlock(&lock);
  return 0;
}

static void unload_locked(void)
{
  free_store(&S);
  for (size_t i = 0; i < SLOT_COUNT; i++)
    atomic_store_explicit(&ready[i], false, memory_order_relaxed);
  data_dir[0] = '\0';
}

int gr_facts_load_all(struct gr_err *err)
{
  int rc = 0;
  pthread_mutex_lock(&lock);
  for (size_t i = 0; i < SLOT_COUNT && rc == 0; i++) {
    if (atomic_load_explicit(&ready[i], memory_order_relaxed))
      continue;
    rc = load_slot(&S, (enum slot)i, err);
    if (rc == 0)
      atomic_store_explicit(&ready[i], true, memory_order_release);
  }
  if (rc != 0)
    unload_locked();
  pthread_mutex_unlock(&lock);
  return rc;
}

void gr_facts_unload(void)
{
  pthread_mutex_lock(&lock);
  unload_locked();
  pthread_mutex_unlock(&lock);
}

int gr_facts_check_table(const char *file, const struct gr_table *t, struct gr_err *err)
{
  size_t id = 0;
  while (id < SLOT_COUNT && !(slots[id].file && strcmp(slots[id].file, file) == 0))
    id++;
  if (id == SLOT_COUNT)
    return gr_fail(err, GR_EXIT_CANNOT_RUN, "%s: not a data file gpurig loads", file);
  struct store *s = xcalloc(1, sizeof(*s));
  int rc = slots[id].build(s, t, err);
  if (rc != 0 && err)
    err->code = GR_EXIT_CANNOT_RUN; /* as a load would say it */
  free_store(s);
  free(s);
  return rc;
}

int gr_facts_check_file(const char *file, const char *buf, size_t len, struct gr_err *err)
{
  struct gr_table t;
  if (gr_table_parse(file, buf, len, &t, err) != 0) {
    if (err)
      err->code = GR_EXIT_CANNOT_RUN;
    return -1;
  }
  int rc = gr_facts_check_table(file, &t, err);
  gr_table_free(&t);
  return rc;
}

bool gr_facts_is_loaded(const char *file)
{
  for (size_t id = 0; id < SLOT_COUNT; id++)
    if (slots[id].file && strcmp(slots[id].file, file) == 0)
      return atomic_load_explicit(&ready[id], memory_order_acquire);
  return false;
}

const char *gr_data_dir(void)
{
  pthread_mutex_lock(&lock);
  if (!data_dir[0])
    gr_data_dir_find(data_dir, sizeof(data_dir));
  pthread_mutex_unlock(&lock);
  return data_dir;
}

/* ---- the accessors ---- */

const struct gr_pcie_gen *gr_pcie_gens(size_t *n)
{
  need(SLOT_PCIE);
  *n = S.ngens;
  return S.gens;
}

const struct gr_gpu_model *gr_catalog_models(size_t *n)
{
  need(SLOT_GPUS);
  *n = S.ngpus;
  return S.gpus;
}

const struct gr_pci_rule *gr_pci_rules(size_t *n)
{
  need(SLOT_PCI_DEVICES);
  *n = S.npci_rules;
  return S.pci_rules;
}

const struct gr_engine_speed_row *gr_engine_speed_rows(size_t *n)
{
  need(SLOT_ENGINE_SPEED);
  *n = S.nspeed_rows;
  return S.speed_rows;
}

const char *gr_pciids_db(size_t *len)
{
  need(SLOT_PCIIDS);
  *len = S.pciids_len;
  return S.pciids;
}

#define GR_ROWS_ACCESSOR(id, file, COLS) \
  const struct gr_##id##_rows *gr_##id##_rows(void) \
  { \
    need(SLOT_##id); \
    return &S.id; \
  }
GR_ROW_TABLES(GR_ROWS_ACCESSOR)
#undef GR_ROWS_ACCESSOR

const struct gr_calibration_consts *gr_calib(void)
{
  need(SLOT_CALIBRATION);
  return &S.calib;
}

const struct gr_planner_consts *gr_plan_consts(void)
{
  need(SLOT_PLANNER);
  return &S.plan;
}

const struct gr_health_consts *gr_health_consts(void)
{
  need(SLOT_HEALTH);
  return &S.health_c;
}

const struct gr_diffusion_consts *gr_diffusion_consts(void)
{
  need(SLOT_DIFFUSION_MEMORY);
  return &S.diffusion_c;
}
