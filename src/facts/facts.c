/* One loader for every data file; see facts.h. */
#include "facts/facts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "facts/pciids.h"

/* Set once by gr_facts_load, before any thread; read-only afterwards. */
static struct gr_facts *loaded;

/* The keys gpurig asks of each key/value table: a data file without one of
 * them is refused at load, not discovered later as a silent 0. */
#define GR_KEY_NAME(k) #k,
static const char *const calibration_keys[] = {GR_CALIBRATION_CONSTS(GR_KEY_NAME) NULL};
static const char *const planner_keys[] = {GR_PLANNER_CONSTS(GR_KEY_NAME) NULL};
static const char *const health_keys[] = {GR_HEALTH_CONSTS(GR_KEY_NAME) NULL};
static const char *const diffusion_memory_keys[] = {GR_DIFFUSION_CONSTS(GR_KEY_NAME) NULL};

#undef GR_KEY_NAME

/* The typed constants, filled once from their key/value tables (every key
 * is known to be present: build_kv checked it). */
static void fill_consts(struct gr_facts *f)
{
#define GR_CAL(k) f->calib.k = gr_kv(&f->calibration, #k);
#define GR_PLN(k) f->plan.k = gr_kv(&f->planner, #k);
#define GR_HLT(k) f->health_c.k = gr_kv(&f->health, #k);
#define GR_DIF(k) f->diffusion_c.k = gr_kv(&f->diffusion_memory, #k);
  GR_CALIBRATION_CONSTS(GR_CAL)
  GR_PLANNER_CONSTS(GR_PLN)
  GR_HEALTH_CONSTS(GR_HLT)
  GR_DIFFUSION_CONSTS(GR_DIF)
#undef GR_CAL
#undef GR_PLN
#undef GR_HLT
#undef GR_DIF
}

/* engine-speed.tsv into typed rows: every key one gpurig reads, every
 * value a number, every month YYYY-MM; a bad row is refused at load with
 * its line. */
static int parse_engine_speed(struct gr_facts *f, struct gr_err *err)
{
#define GR_KEY_WORD(k) #k,
  static const char *const known[] = {GR_ENGINE_SPEED_KEYS(GR_KEY_WORD) NULL};
#undef GR_KEY_WORD
  const struct gr_table *t = &f->engine_speed;
  int ce = gr_table_col(t, "engine"), ca = gr_table_col(t, "arch"), ck = gr_table_col(t, "key");
  int cv = gr_table_col(t, "value"), cs = gr_table_col(t, "since");
  f->speed_rows = xcalloc(t->nrows + 1, sizeof(*f->speed_rows));
  for (size_t r = 0; r < t->nrows; r++) {
    struct gr_engine_speed_row *row = &f->speed_rows[f->nspeed_rows++];
    const char *key = gr_table_cell(t, r, (size_t)ck), *v = gr_table_cell(t, r, (size_t)cv);
    const char *since = gr_table_cell(t, r, (size_t)cs), *arch = gr_table_cell(t, r, (size_t)ca);
    size_t i = 0;
    while (known[i] && strcmp(known[i], key) != 0)
      i++;
    char *end;
    int y, m, n = 0;
    row->value = strtod(v, &end);
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

/* The tables read row by row, with the columns their readers need. */
struct rows_schema {
  const char *file;
  size_t offset; /* of the struct gr_table in struct gr_facts */
  const char *const cols[16];
};
static const struct rows_schema row_tables[] = {
    {"cpu-interconnect.tsv", offsetof(struct gr_facts, cpu_interconnect),
     {"vendor", "family", "model_min", "nccl_gbps", "link", "source"}},
    {"cpu-memory.tsv", offsetof(struct gr_facts, cpu_memory), {"match", "channels", "source"}},
    {"driver-issues.tsv", offsetof(struct gr_facts, driver_issues),
     {"id", "gpu_match", "driver_min", "driver_max", "severity", "problem", "fix", "source"}},
    {"xid.tsv", offsetof(struct gr_facts, xid), {"xid", "name", "class", "severity", "action", "source"}},
    {"models.tsv", offsetof(struct gr_facts, models),
     {"name", "model_type", "layers", "hidden", "intermediate", "heads", "kv_heads", "head_dim", "vocab", "tied",
      "qkv_bias", "experts", "experts_per_tok", "max_ctx", "sliding_window", "source"}},
    {"quant.tsv", offsetof(struct gr_facts, quant), {"name", "kind", "base", "block_weights", "block_bytes", "source"}},
    {"pci-devices.tsv", offsetof(struct gr_facts, pci_devices), {"vendor", "device", "class", "kind", "name", "source"}},
    {"nccl-p2p.tsv", offsetof(struct gr_facts, nccl_p2p), {"since", "until", "cpu", "gpus", "level", "source"}},
    {"engines.tsv", offsetof(struct gr_facts, engines), {"name", "aliases", "formats", "kv_quants", "jobs", "swa", "min_cc", "source"}},
    {"engine-speed.tsv", offsetof(struct gr_facts, engine_speed), {"engine", "since", "arch", "key", "value", "prior", "fit", "source"}},
    {"diffusion.tsv", offsetof(struct gr_facts, diffusion), {"name", "aliases", "part", "class", "config", "source"}},
    {"nics.tsv", offsetof(struct gr_facts, nics),
     {"name", "aliases", "kind", "port_gbit", "ports", "pcie_gen", "pcie_width", "rdma", "gdr", "source"}},
};

static int need_columns(const struct gr_table *t, const char *const *cols, struct gr_err *err)
{
  for (size_t i = 0; i < 16 && cols[i]; i++)
    if (gr_table_col(t, cols[i]) < 0)
      return gr_fail(err, GR_EXIT_CANNOT_RUN, "%s: missing column %s", t->name, cols[i]);
  return 0;
}

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
    row->value = strtod(v, &end);
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

static int load_kv(struct gr_facts *f, const char *file, struct gr_table *raw, const char *const *keys,
                   struct gr_kv_table *kv, struct gr_err *err)
{
  if (gr_table_load(f->data_dir, file, raw, err) != 0)
    return -1;
  return build_kv(raw, keys, kv, err);
}

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
static int load_pci_rules(struct gr_facts *f, struct gr_err *err)
{
  const struct gr_table *t = &f->pci_devices;
  int cv = gr_table_col(t, "vendor"), cd = gr_table_col(t, "device"), cc = gr_table_col(t, "class"),
      ck = gr_table_col(t, "kind");
  f->pci_rules = xcalloc(t->nrows, sizeof(*f->pci_rules));
  for (size_t r = 0; r < t->nrows; r++) {
    struct gr_pci_rule *rule = &f->pci_rules[r];
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
  f->npci_rules = t->nrows;
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
static int load_nccl_rules(struct gr_facts *f, struct gr_err *err)
{
  const struct gr_table *t = &f->nccl_p2p;
  size_t cs = (size_t)gr_table_col(t, "since"), cu = (size_t)gr_table_col(t, "until"),
         cc = (size_t)gr_table_col(t, "cpu"), cg = (size_t)gr_table_col(t, "gpus"),
         cl = (size_t)gr_table_col(t, "level"), cr = (size_t)gr_table_col(t, "source");
  if (t->nrows == 0)
    return gr_fail(err, GR_EXIT_CANNOT_RUN, "%s: no rules", t->name);
  f->nccl_rules = xcalloc(t->nrows, sizeof(*f->nccl_rules));
  for (size_t r = 0; r < t->nrows; r++) {
    struct gr_nccl_rule *rule = &f->nccl_rules[r];
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
  f->nnccl_rules = t->nrows;
  /* every era ends in a rule for any CPU and any count, so a version the
   * table covers always finds one */
  for (size_t r = 0; r < t->nrows; r++) {
    bool closed = false;
    for (size_t q = 0; q < t->nrows && !closed; q++)
      closed = gr_nccl_version_cmp(&f->nccl_rules[q].since, &f->nccl_rules[r].since) == 0 &&
               strcmp(f->nccl_rules[q].cpu, "*") == 0 && f->nccl_rules[q].gpus_max == 0;
    if (!closed)
      return gr_fail(err, GR_EXIT_CANNOT_RUN, "%s:%zu: the era of this row has no rule with cpu * and gpus *",
                     t->name, t->lines[r]);
  }
  return 0;
}

struct gr_nccl_version gr_nccl_newest(void)
{
  const struct gr_facts *f = gr_facts();
  struct gr_nccl_version v = f->nccl_rules[0].until;
  for (size_t i = 1; i < f->nnccl_rules; i++)
    if (gr_nccl_version_cmp(&f->nccl_rules[i].until, &v) > 0)
      v = f->nccl_rules[i].until;
  return v;
}

struct gr_nccl_version gr_nccl_oldest(void)
{
  const struct gr_facts *f = gr_facts();
  struct gr_nccl_version v = f->nccl_rules[0].since;
  for (size_t i = 1; i < f->nnccl_rules; i++)
    if (gr_nccl_version_cmp(&f->nccl_rules[i].since, &v) < 0)
      v = f->nccl_rules[i].since;
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
  const struct gr_facts *f = gr_facts();
  const struct gr_nccl_version *era = NULL;
  for (size_t i = 0; i < f->nnccl_rules; i++) {
    const struct gr_nccl_version *s = &f->nccl_rules[i].since;
    if (gr_nccl_version_cmp(s, v) <= 0 && (!era || gr_nccl_version_cmp(s, era) > 0))
      era = s;
  }
  for (size_t i = 0; era && i < f->nnccl_rules; i++)
    if (gr_nccl_version_cmp(&f->nccl_rules[i].since, era) == 0 && nccl_rule_matches(&f->nccl_rules[i], cpu, ngpus))
      return &f->nccl_rules[i];
  return NULL;
}

static int load_tables(struct gr_facts *f, struct gr_err *err)
{
  if (gr_table_load(f->data_dir, "pcie-links.tsv", &f->raw_pcie, err) != 0 ||
      gr_pcie_gens_parse(&f->raw_pcie, f->gens, GR_FACTS_MAX_GENS, &f->ngens, err) != 0 ||
      gr_table_load(f->data_dir, "gpus.tsv", &f->raw_gpus, err) != 0 ||
      gr_catalog_parse(&f->raw_gpus, &f->gpus, &f->ngpus, err) != 0 ||
      load_kv(f, "calibration.tsv", &f->raw_calibration, calibration_keys, &f->calibration, err) != 0 ||
      load_kv(f, "planner.tsv", &f->raw_planner, planner_keys, &f->planner, err) != 0 ||
      load_kv(f, "health.tsv", &f->raw_health, health_keys, &f->health, err) != 0 ||
      load_kv(f, "diffusion-memory.tsv", &f->raw_diffusion_memory, diffusion_memory_keys, &f->diffusion_memory, err) != 0)
    return -1;
  for (size_t i = 0; i < sizeof(row_tables) / sizeof(row_tables[0]); i++) {
    struct gr_table *t = (struct gr_table *)((char *)f + row_tables[i].offset);
    if (gr_table_load(f->data_dir, row_tables[i].file, t, err) != 0 || need_columns(t, row_tables[i].cols, err) != 0)
      return -1;
  }
  fill_consts(f);
  if (parse_engine_speed(f, err) != 0)
    return -1;
  return load_pci_rules(f, err) != 0 ? -1 : load_nccl_rules(f, err);
}

static void free_facts(struct gr_facts *f)
{
  if (!f)
    return;
  free(f->pci_rules);
  free(f->speed_rows);
  free(f->nccl_rules);
  for (size_t i = 0; i < sizeof(row_tables) / sizeof(row_tables[0]); i++)
    gr_table_free((struct gr_table *)((char *)f + row_tables[i].offset));
  free(f->calibration.rows);
  free(f->planner.rows);
  free(f->health.rows);
  free(f->diffusion_memory.rows);
  free(f->gpus);
  gr_table_free(&f->raw_gpus);
  gr_table_free(&f->raw_pcie);
  gr_table_free(&f->raw_calibration);
  gr_table_free(&f->raw_planner);
  gr_table_free(&f->raw_health);
  gr_table_free(&f->raw_diffusion_memory);
  gr_pciids_unmap(f->pciids, f->pciids_len);
  free(f);
}

int gr_facts_load(struct gr_err *err)
{
  if (loaded)
    return 0;
  struct gr_facts *f = xcalloc(1, sizeof(*f));
  gr_data_dir_find(f->data_dir, sizeof(f->data_dir));
  if (load_tables(f, err) != 0) {
    if (err)
      err->code = GR_EXIT_CANNOT_RUN; /* gpurig's own data, not the user's input */
    free_facts(f);
    return -1;
  }
  gr_pciids_map(&f->pciids, &f->pciids_len);
  loaded = f;
  return 0;
}

void gr_facts_unload(void)
{
  free_facts(loaded);
  loaded = NULL;
}

const struct gr_facts *gr_facts(void)
{
  if (!loaded) {
    fprintf(stderr, "gpurig: internal error: facts read before gr_facts_load\n");
    abort();
  }
  return loaded;
}

double gr_kv(const struct gr_kv_table *t, const char *key)
{
  const struct gr_kv *row = bsearch(&(struct gr_kv){.key = key}, t->rows, t->n, sizeof(*t->rows), cmp_kv);
  if (!row) {
    fprintf(stderr, "gpurig: internal error: %s has no key %s (add it to facts.c's list)\n", t->name, key);
    abort();
  }
  return row->value;
}

const struct gr_calibration_consts *gr_calib(void)
{
  return &gr_facts()->calib;
}

const struct gr_planner_consts *gr_plan_consts(void)
{
  return &gr_facts()->plan;
}

const struct gr_health_consts *gr_health_consts(void)
{
  return &gr_facts()->health_c;
}

const struct gr_diffusion_consts *gr_diffusion_consts(void)
{
  return &gr_facts()->diffusion_c;
}
