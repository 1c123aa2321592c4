/* The rig parser's power statements (load/rig_internal.h): `psu` and
 * `circuit`, what a rig's power budget (analysis/power.c) reads. Each value
 * is checked where it is read and refused with the line and column, as the
 * other statements are; what a line leaves out stays unknown (0 or NULL),
 * never a default, so the budget says what it cannot know. Grammar:
 * docs/rig-format.md. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/suggest.h"
#include "base/util.h"
#include "facts/tables.h"
#include "load/rig_internal.h"

static const char *const psu_levels = "standard|bronze|silver|gold|platinum|titanium";

/* Whether word is one of psu_levels. */
static bool is_level(const char *w)
{
  size_t n = strlen(w);
  for (const char *q = psu_levels; *q;) {
    size_t len = strcspn(q, "|");
    if (len == n && strncmp(q, w, n) == 0)
      return true;
    q += len + (q[len] == '|');
  }
  return false;
}

/* A positive number from lo to hi at token t into *v, else -1 after perr. */
static int want_in(struct parser *p, const struct token *t, double lo, double hi, const char *what, double *v)
{
  if (want_number(p, t, v) != 0)
    return -1;
  if (*v < lo || *v > hi)
    return perr(p, t->col, "%s must be from %g to %g, got %s", what, lo, hi, t->text);
  return 0;
}

/* `rail-amps A,B,...`: each rail's limit in amps, at most GR_PSU_MAX_RAILS. */
static int want_rail_amps(struct parser *p, const struct token *t, struct gr_psu *s)
{
  char *copy = xstrdup(t->text), *save = NULL;
  int rc = 0;
  for (char *a = strtok_r(copy, ",", &save); a && rc == 0; a = strtok_r(NULL, ",", &save)) {
    struct token one = *t;
    one.text = a;
    if (s->nrail_amps == GR_PSU_MAX_RAILS)
      rc = perr(p, t->col, "rail-amps lists more than %d rails", GR_PSU_MAX_RAILS);
    else
      rc = want_in(p, &one, 1, 1000, "a rail's amps", &s->rail_amps[s->nrail_amps++]);
  }
  free(copy);
  if (rc == 0 && s->nrail_amps == 0)
    rc = perr(p, t->col, "expected amps per rail, e.g. rail-amps 40,40,40");
  return rc;
}

/* `feeds LIST` of the psu being read (the next one): kept for
 * resolve_power, which runs once every GPU and CPU is declared. */
static void grow_feeds(struct parser *p, const struct token *v)
{
  p->feeds = xrealloc(p->feeds, (p->nfeeds + 1) * sizeof(*p->feeds));
  p->feeds[p->nfeeds++] = (struct feed_stmt){.psu = p->t->rig->npsus, .text = xstrdup(v->text), .line = p->line,
                                             .col = v->col};
}

/* One `KEY VALUE` option of a psu line at token i into s. */
static int psu_option(struct parser *p, struct gr_psu *s, int i)
{
  const struct token *k = &p->tok[i], *v = &p->tok[i + 1];
  double x;
  if (strcmp(k->text, "rails") == 0 && !s->nrail_amps) {
    if (want_in(p, v, 1, GR_PSU_MAX_RAILS, "rails", &x) != 0)
      return -1;
    s->rails = (int)x;
  } else if (strcmp(k->text, "rail-amps") == 0 && !s->rails) {
    if (want_rail_amps(p, v, s) != 0)
      return -1;
    s->rails = s->nrail_amps; /* the list gives the rail count */
  } else if (strcmp(k->text, "80plus") == 0 && !s->efficiency_pct) {
    if (v->quoted || !is_level(v->text))
      return perr(p, v->col, "80plus must be one of %s, got \"%s\"", psu_levels, v->text);
    s->level = xstrdup(v->text);
  } else if (strcmp(k->text, "efficiency") == 0 && !s->level) {
    if (want_in(p, v, 50, 100, "efficiency (percent)", &s->efficiency_pct) != 0)
      return -1;
  } else if (strcmp(k->text, "feeds") == 0 && !s->has_feeds) {
    if (v->quoted)
      return perr(p, v->col, "expected what the psu feeds (gpu0,gpu1, gpu0-gpu3, cpus, board, rest), got a string");
    s->has_feeds = true;
    grow_feeds(p, v);
  } else if (strcmp(k->text, "input") == 0 && !s->input_v) {
    if (want_in(p, v, 100, 240, "input", &x) != 0)
      return -1;
    if (x != 120 && x != 230)
      return perr(p, v->col, "input must be 120 or 230 (volts), got %s", v->text);
    s->input_v = (int)x;
  } else {
    static const char *const words[] = {"rails", "rail-amps", "80plus", "efficiency", "input", "feeds"};
    struct gr_suggest sg;
    char hint[GR_SUGGEST_MAX + 32];
    gr_suggest_init(&sg, k->text);
    for (size_t w = 0; w < sizeof(words) / sizeof(words[0]); w++) {
      if (strcmp(k->text, words[w]) == 0) /* a known word: given twice, or with the one it excludes */
        return perr(p, k->col, "a psu line takes rails N or rail-amps A,..., 80plus LEVEL or efficiency PCT, and "
                    "input 120|230 and feeds LOADS, each once: \"%s\" repeats or contradicts an earlier option",
                    k->text);
      gr_suggest_offer(&sg, words[w]);
    }
    if (gr_suggest_best(&sg))
      return perr(p, k->col, "a psu line does not take \"%s\"%s", k->text, gr_suggest_text(&sg, hint, sizeof(hint)));
    return perr(p, k->col, "a psu line takes rails N or rail-amps A,..., 80plus LEVEL or efficiency PCT, "
                "input 120|230 and feeds LOADS (each once), not \"%s\"", k->text);
  }
  return 0;
}

/* Whether a psu of that name is already stated. */
static bool have_psu(const struct gr_rig_meta *m, const char *name)
{
  for (size_t i = 0; i < m->npsus; i++)
    if (strcmp(m->psus[i].name, name) == 0)
      return true;
  return false;
}

int stmt_psu(struct parser *p)
{
  struct gr_rig_meta *m = p->t->rig;
  if (p->ntok < 3 || p->ntok % 2 == 0)
    return perr(p, p->tok[0].col, "expected: psu NAME WATTS [rails N | rail-amps A,...] "
                "[80plus LEVEL | efficiency PCT] [input 120|230] [feeds LOADS]");
  if (p->tok[1].quoted || !is_name(p->tok[1].text))
    return perr(p, p->tok[1].col, "expected a PSU name (a letter, then letters, digits, - or _)");
  if (have_psu(m, p->tok[1].text))
    return perr(p, p->tok[1].col, "a second psu named \"%s\"", p->tok[1].text);
  struct gr_psu s = {.line = p->line};
  if (want_in(p, &p->tok[2], 50, 100000, "a PSU's watts", &s.watts) != 0)
    return -1;
  for (int i = 3; i + 1 < p->ntok; i += 2)
    if (psu_option(p, &s, i) != 0) {
      free(s.level);
      return -1;
    }
  s.name = xstrdup(p->tok[1].text);
  m->psus = xrealloc(m->psus, (m->npsus + 1) * sizeof(*m->psus));
  m->psus[m->npsus++] = s;
  return 0;
}

/* `psus A,B`: every name a psu stated above. */
static int want_psu_list(struct parser *p, const struct token *t)
{
  char *copy = xstrdup(t->text), *save = NULL;
  int rc = 0;
  for (char *a = strtok_r(copy, ",", &save); a && rc == 0; a = strtok_r(NULL, ",", &save))
    if (!have_psu(p->t->rig, a))
      rc = perr(p, t->col, "no psu named \"%s\" above this line", a);
  free(copy);
  return rc;
}

int stmt_circuit(struct parser *p)
{
  struct gr_rig_meta *m = p->t->rig;
  if ((p->ntok != 4 && p->ntok != 6) || (p->ntok == 6 && strcmp(p->tok[4].text, "psus") != 0))
    return perr(p, p->tok[0].col, "expected: circuit NAME VOLTS AMPS [psus A,B]");
  if (p->tok[1].quoted || !is_name(p->tok[1].text))
    return perr(p, p->tok[1].col, "expected a circuit name (a letter, then letters, digits, - or _)");
  struct gr_circuit c = {.line = p->line};
  if (want_in(p, &p->tok[2], 100, 480, "a circuit's volts", &c.volts) != 0 ||
      want_in(p, &p->tok[3], 1, 400, "a circuit's breaker amps", &c.amps) != 0)
    return -1;
  if (p->ntok == 6 && want_psu_list(p, &p->tok[5]) != 0)
    return -1;
  c.name = xstrdup(p->tok[1].text);
  c.psus = p->ntok == 6 ? xstrdup(p->tok[5].text) : NULL;
  m->circuits = xrealloc(m->circuits, (m->ncircuits + 1) * sizeof(*m->circuits));
  m->circuits[m->ncircuits++] = c;
  return 0;
}

/* ---- a GPU's power path: gpu ... power, riser-power, limit ---- */

/* CONNECTORS at token t into c; an unknown term is named, with the word it
 * is closest to. */
static int want_conns(struct parser *p, const struct token *t, struct gr_conns *c)
{
  char bad[64];
  if (!t->quoted && gr_conns_parse(t->text, c, bad, sizeof(bad)) == 0)
    return 0;
  struct gr_suggest sg;
  char hint[GR_SUGGEST_MAX + 32], word[16];
  const char *term = bad + strspn(bad, "0123456789"); /* "3x8pni": the word meant is 8pin's */
  gr_suggest_init(&sg, term > bad && *term == 'x' ? term + 1 : bad);
  for (const char *q = gr_gpu_conn_words; *q;) {
    size_t len = strcspn(q, "|");
    snprintf(word, sizeof(word), "%.*s", (int)len, q);
    gr_suggest_offer(&sg, word);
    q += len + (q[len] == '|');
  }
  return perr(p, t->col, "power \"%s\": expected connectors as %s, each once or counted (3x8pin), joined by + "
              "(8pin+6pin)%s", t->text, gr_gpu_conn_words,
              gr_suggest_best(&sg) ? gr_suggest_text(&sg, hint, sizeof(hint)) : "");
}

/* `power CONNS [from CONNS] [cables N]` at token i; the tokens used. */
static int power_option(struct parser *p, struct elem *e, int i)
{
  int used = 2;
  long n;
  if (want_conns(p, &p->tok[i + 1], &e->gpow.conns) != 0)
    return -1;
  while (i + used + 1 < p->ntok) {
    const struct token *k = &p->tok[i + used], *v = &p->tok[i + used + 1];
    if (strcmp(k->text, "from") == 0 && !e->gpow.from.n) {
      if (want_conns(p, v, &e->gpow.from) != 0)
        return -1;
    } else if (strcmp(k->text, "cables") == 0 && !e->gpow.cables) {
      if (want_count(p, v, 1, 8, &n) != 0)
        return -1;
      e->gpow.cables = (int)n;
    } else {
      break;
    }
    used += 2;
  }
  return used;
}

/* `limit W`: within the range data/power-gpus.tsv gives the model, where it
 * gives one (nvidia-smi -pl refuses anything outside it). */
static int limit_option(struct parser *p, struct elem *e, const struct token *v)
{
  double w;
  if (want_in(p, v, 1, 5000, "a power limit (watts)", &w) != 0)
    return -1;
  const struct gr_power_gpus_rows *r = gr_power_gpus_rows();
  for (size_t i = 0; e->gpu && i < r->n; i++)
    if (strcmp(r->v[i].model, e->gpu->model) == 0 && r->v[i].limit_min_w > 0 && r->v[i].limit_max_w > 0 &&
        (w < (double)r->v[i].limit_min_w || w > (double)r->v[i].limit_max_w))
      return perr(p, v->col, "limit %s: %s %s accepts %ld to %ld W (data/power-gpus.tsv)", v->text,
                  article(e->gpu->model), e->gpu->model, r->v[i].limit_min_w, r->v[i].limit_max_w);
  e->gpow.limit_w = w;
  return 0;
}

/* `riser-power KIND`: where the riser under the GPU takes the slot's power. */
static int riser_power_option(struct parser *p, struct elem *e, const struct token *v)
{
  static const char *const kinds[] = {"sata", "molex", "6pin", "8pin", "slot", "none"};
  struct gr_suggest sg;
  char hint[GR_SUGGEST_MAX + 32];
  gr_suggest_init(&sg, v->text);
  for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
    if (!v->quoted && strcmp(v->text, kinds[k]) == 0) {
      snprintf(e->gpow.riser_power, sizeof(e->gpow.riser_power), "%s", kinds[k]);
      e->riser_power_col = v->col;
      return 0;
    }
    gr_suggest_offer(&sg, kinds[k]);
  }
  return perr(p, v->col, "riser-power must be one of sata|molex|6pin|8pin|slot|none, got \"%s\"%s", v->text,
              gr_suggest_best(&sg) ? gr_suggest_text(&sg, hint, sizeof(hint)) : "");
}

int gpu_power_option(struct parser *p, struct elem *e, int i)
{
  const char *k = p->tok[i].text;
  bool power = strcmp(k, "power") == 0, riser = strcmp(k, "riser-power") == 0, limit = strcmp(k, "limit") == 0;
  if (!power && !riser && !limit)
    return 0;
  if (i + 1 >= p->ntok)
    return perr(p, p->tok[i].col + (int)strlen(k), "expected a value after '%s'%s", k,
                power ? " (e.g. power 2x8pin, power 12vhpwr from 3x8pin)" : "");
  if (power)
    return power_option(p, e, i);
  if (riser)
    return riser_power_option(p, e, &p->tok[i + 1]) != 0 ? -1 : 2;
  return limit_option(p, e, &p->tok[i + 1]) != 0 ? -1 : 2;
}

/* ---- feeds ---- */

/* The place of one item of a feeds list: its line and column. */
struct feed_at {
  int line, col;
};

/* Marks load *who (a GPU's psu, cpus_psu, board_psu) as fed by psu, or
 * refuses a second feed naming the first. */
static int feed_one(struct parser *p, int *who, int *who_line, int *who_col, const struct feed_stmt *f, int col,
                    const char *what)
{
  const struct gr_rig_meta *m = p->t->rig;
  if (*who >= 0) {
    p->line = f->line;
    return perr(p, col, "%s is fed by psu %s already (line %d, column %d); one psu feeds each load (a GPU's slot "
                "power comes through the board or its riser: riser-power)", what, m->psus[*who].name, *who_line,
                *who_col);
  }
  *who = (int)f->psu;
  *who_line = f->line;
  *who_col = col;
  return 0;
}

/* gpuN or gpuA-gpuB (n bytes at s) into lo..hi; -1 when it is neither. */
static int gpu_items(const char *s, size_t n, unsigned *lo, unsigned *hi)
{
  char buf[48];
  if (n < 4 || n >= sizeof(buf) || !isdigit((unsigned char)s[3])) /* sscanf's %u would take "gpu-1" */
    return -1;
  memcpy(buf, s, n);
  buf[n] = '\0';
  int used = 0;
  if (sscanf(buf, "gpu%u-gpu%u%n", lo, hi, &used) == 2 && used == (int)n && *lo < *hi)
    return 0;
  used = 0;
  if (sscanf(buf, "gpu%u%n", lo, &used) == 1 && used == (int)n && isdigit((unsigned char)buf[n - 1])) {
    *hi = *lo;
    return 0;
  }
  return -1;
}

/* An item of a feeds list that is no load, with the word it is closest to. */
static int bad_item(struct parser *p, const struct feed_stmt *f, const char *s, size_t n, int col)
{
  static const char *const words[] = {"cpus", "board", "rest"};
  char item[48], hint[GR_SUGGEST_MAX + 32];
  snprintf(item, sizeof(item), "%.*s", (int)(n < 40 ? n : 40), s);
  struct gr_suggest sg;
  gr_suggest_init(&sg, item);
  for (size_t w = 0; w < sizeof(words) / sizeof(words[0]); w++)
    gr_suggest_offer(&sg, words[w]);
  p->line = f->line;
  return perr(p, col, "feeds \"%s\": expected gpuN, gpuA-gpuB, cpus, board or rest, joined by commas%s", item,
              gr_suggest_best(&sg) ? gr_suggest_text(&sg, hint, sizeof(hint)) : "");
}

/* Where each load was named, for the message about a second feed. */
struct fed_at {
  int *gpu_line, *gpu_col;
  int cpus_line, cpus_col, board_line, board_col;
  int rest;  /* the psu of `rest`, -1 none */
};

/* One item of a feeds list (n bytes at s, at column col). */
static int feed_item(struct parser *p, const struct feed_stmt *f, const char *s, size_t n, int col,
                     struct fed_at *at)
{
  struct gr_rig_meta *m = p->t->rig;
  unsigned lo, hi;
  char what[32];
  if (n == 4 && strncmp(s, "cpus", 4) == 0)
    return feed_one(p, &m->cpus_psu, &at->cpus_line, &at->cpus_col, f, col, "the CPUs");
  if (n == 5 && strncmp(s, "board", 5) == 0)
    return feed_one(p, &m->board_psu, &at->board_line, &at->board_col, f, col, "the board");
  if (n == 4 && strncmp(s, "rest", 4) == 0) {
    p->line = f->line;
    if (at->rest >= 0)
      return perr(p, col, "psu %s feeds the rest already; one psu takes what the others do not name",
                  m->psus[at->rest].name);
    at->rest = (int)f->psu;
    return 0;
  }
  if (gpu_items(s, n, &lo, &hi) != 0)
    return bad_item(p, f, s, n, col);
  if (hi >= m->ngpu_power) {
    p->line = f->line;
    return perr(p, col, "no gpu%u: the rig has gpu0 to gpu%zu", hi, m->ngpu_power - 1);
  }
  for (unsigned g = lo; g <= hi; g++) {
    snprintf(what, sizeof(what), "gpu%u", g);
    if (feed_one(p, &m->gpu_power[g].psu, &at->gpu_line[g], &at->gpu_col[g], f, col, what) != 0)
      return -1;
  }
  return 0;
}

/* What no feeds list names goes to the psu of `rest`; without one, a GPU or
 * the CPUs left unfed is an error at their line (the board may stay unsaid:
 * no figure of its own draw is in the data). */
static int feed_rest(struct parser *p, int rest)
{
  struct gr_rig_meta *m = p->t->rig;
  size_t g = 0;
  for (size_t i = 0; i < p->nelems; i++) {
    const struct elem *e = &p->elems[i];
    int *who = e->kind == K_GPU ? &m->gpu_power[g++].psu : e->kind == K_CPU ? &m->cpus_psu : NULL;
    if (!who || *who >= 0)
      continue;
    if (rest >= 0) {
      *who = rest;
      continue;
    }
    p->line = e->line;
    return perr(p, e->col, "%s%s is fed by no psu: name %s in a psu's feeds, or give one psu `feeds rest`",
                e->kind == K_GPU ? "" : "cpu ", e->name, e->kind == K_GPU ? e->name : "cpus");
  }
  if (m->board_psu < 0)
    m->board_psu = rest;
  return 0;
}

/* Every psu's feeds list resolved, or the first error. */
static int resolve_feeds(struct parser *p)
{
  struct gr_rig_meta *m = p->t->rig;
  struct fed_at at = {.gpu_line = xcalloc(m->ngpu_power + 1, sizeof(int)),
                      .gpu_col = xcalloc(m->ngpu_power + 1, sizeof(int)), .rest = -1};
  int rc = 0;
  for (size_t i = 0; rc == 0 && i < m->npsus; i++)
    if (!m->psus[i].has_feeds) {
      p->line = m->psus[i].line;
      rc = perr(p, 1, "psu %s says nothing of what it feeds while psu %s does (line %d): give every psu its "
                "feeds (one of them may feed the rest)", m->psus[i].name, m->psus[p->feeds[0].psu].name,
                p->feeds[0].line);
    }
  for (size_t k = 0; rc == 0 && k < p->nfeeds; k++) {
    const struct feed_stmt *f = &p->feeds[k];
    for (const char *s = f->text; rc == 0 && *s;) {
      size_t n = strcspn(s, ",");
      int col = f->col + (int)(s - f->text);
      rc = n == 0 ? bad_item(p, f, s, n, col) : feed_item(p, f, s, n, col, &at);
      s += n + (s[n] == ',');
    }
  }
  if (rc == 0)
    rc = feed_rest(p, at.rest);
  free(at.gpu_line);
  free(at.gpu_col);
  return rc;
}

int resolve_power(struct parser *p)
{
  struct gr_rig_meta *m = p->t->rig;
  int line = p->line;
  m->gpu_power = xcalloc(p->ngpus + 1, sizeof(*m->gpu_power));
  m->cpus_psu = m->board_psu = -1;
  for (size_t i = 0; i < p->nelems; i++) {
    const struct elem *e = &p->elems[i];
    if (e->kind != K_GPU)
      continue;
    if (e->riser_power_col && !e->gpow.riser) {
      p->line = e->line;
      return perr(p, e->riser_power_col, "riser-power: %s has no riser (write riser GEN WIDTH on its line)", e->name);
    }
    m->gpu_power[m->ngpu_power++] = e->gpow;
  }
  int rc = p->nfeeds ? resolve_feeds(p) : 0;
  if (rc == 0)
    p->line = line;
  return rc;
}
