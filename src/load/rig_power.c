/* The rig parser's power statements (load/rig_internal.h): `psu` and
 * `circuit`, what a rig's power budget (analysis/power.c) reads. Each value
 * is checked where it is read and refused with the line and column, as the
 * other statements are; what a line leaves out stays unknown (0 or NULL),
 * never a default, so the budget says what it cannot know. Grammar:
 * docs/rig-format.md. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/suggest.h"
#include "base/util.h"
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
  } else if (strcmp(k->text, "input") == 0 && !s->input_v) {
    if (want_in(p, v, 100, 240, "input", &x) != 0)
      return -1;
    if (x != 120 && x != 230)
      return perr(p, v->col, "input must be 120 or 230 (volts), got %s", v->text);
    s->input_v = (int)x;
  } else {
    static const char *const words[] = {"rails", "rail-amps", "80plus", "efficiency", "input"};
    struct gr_suggest sg;
    char hint[GR_SUGGEST_MAX + 32];
    gr_suggest_init(&sg, k->text);
    for (size_t w = 0; w < sizeof(words) / sizeof(words[0]); w++) {
      if (strcmp(k->text, words[w]) == 0) /* a known word: given twice, or with the one it excludes */
        return perr(p, k->col, "a psu line takes rails N or rail-amps A,..., 80plus LEVEL or efficiency PCT, and "
                    "input 120|230, each once: \"%s\" repeats or contradicts an earlier option", k->text);
      gr_suggest_offer(&sg, words[w]);
    }
    if (gr_suggest_best(&sg))
      return perr(p, k->col, "a psu line does not take \"%s\"%s", k->text, gr_suggest_text(&sg, hint, sizeof(hint)));
    return perr(p, k->col, "a psu line takes rails N or rail-amps A,..., 80plus LEVEL or efficiency PCT, and "
                "input 120|230 (each once), not \"%s\"", k->text);
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
                "[80plus LEVEL | efficiency PCT] [input 120|230]");
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
