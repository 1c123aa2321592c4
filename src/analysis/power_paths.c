/* Each GPU's power path against what its parts are rated for; see
 * power.h. A card draws up to the slot's 75 W through the board (or the
 * riser under it) and the rest through its power connectors, so what the
 * connectors carry is at least the GPU's draw less the slot's 75 W: the
 * figure held against their rating, so that a finding never rests on a
 * card's own split between slot and plugs, which no data gives.
 *
 * Connectors are held against the sustained draw only: their ratings are
 * thermal (contacts and wires heat over seconds), so the millisecond peaks
 * that trip a PSU's over-current protection (power.c) do not count against
 * them. */
#include "analysis/power.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "facts/catalog.h"
#include "facts/tables.h"

double gr_power_connector_w(const char *name)
{
  const struct gr_power_parts_rows *r = gr_power_parts_rows();
  for (size_t i = 0; i < r->n; i++)
    if (strcmp(r->v[i].kind, "connector") == 0 && strcmp(r->v[i].name, name) == 0)
      return (double)r->v[i].watts;
  return -1;
}

/* What c may carry: each connector's rating times its count; -1 when one
 * has no rating (eps8) or c is empty. */
static double conns_w(const struct gr_conns *c)
{
  double sum = c->n ? 0 : -1;
  for (int i = 0; i < c->n && sum >= 0; i++) {
    double w = gr_power_connector_w(c->kind[i]);
    sum = w < 0 ? -1 : sum + w * c->count[i];
  }
  return sum;
}

/* The reference board's connectors (data/power-gpus.tsv), n 0 when no row
 * gives them. */
static void reference_conns(const struct gr_gpu_model *m, struct gr_conns *c)
{
  const struct gr_power_gpus_rows *g = gr_power_gpus_rows();
  char bad[32];
  memset(c, 0, sizeof(*c));
  for (size_t i = 0; m && i < g->n; i++)
    if (strcmp(g->v[i].model, m->model) == 0 && strcmp(g->v[i].connectors, "-") != 0) {
      gr_conns_parse(g->v[i].connectors, c, bad, sizeof(bad));
      return;
    }
}

/* What sets a GPU's sustained draw, for the messages. */
static const char *draw_basis(const struct gr_power_budget *b, const struct gr_gpu_power *gp)
{
  if (b->gpu_limit_w > 0)
    return "the planned power limit";
  return gp->limit_w > 0 ? "the rig's limit" : "board power";
}

/* The connectors over their rating: the card's own, or an adapter's plugs
 * when they are fewer. */
static void connector_finding(struct gr_power_budget *b, size_t g, const char *model, const struct gr_gpu_power *gp,
                              const struct gr_conns *c, bool stated, double slot)
{
  double draw = b->gpus[g].draw_w, load = draw - slot;
  double card = conns_w(c), in = gp->from.n ? conns_w(&gp->from) : -1;
  double rating = in >= 0 && (card < 0 || in < card) ? in : card;
  if (rating < 0 || load <= rating)
    return;
  char cs[64], fs[64];
  gr_conns_text(c, cs, sizeof(cs));
  gr_conns_text(&gp->from, fs, sizeof(fs));
  struct gr_finding *f = gr_finding_add(
      &b->findings, GR_SEV_FAIL, "power.connector-overload",
      "gpu%zu (%s): its %s%s%s carries at least %.0f W at %.0f W (%s), over the %.0f W %s rated for (the slot "
      "gives at most %.0f W)", g, model, cs, gp->from.n ? " from an adapter of " : "", gp->from.n ? fs : "", load, draw,
      draw_basis(b, gp), rating, gp->from.n && rating == in ? "those plugs are" : "they are", slot);
  gr_finding_evidence(f, "rig", "gpu%zu: connectors %s%s%s (%s), data/power-parts.tsv connector ratings", g, cs,
                      gp->from.n ? " from " : "", gp->from.n ? fs : "", stated ? "the rig's power" :
                      "the reference board's, data/power-gpus.tsv");
  double cap = floor(rating + slot);
  if (gp->from.n)
    gr_finding_fix(f, NULL, "an adapter with every plug filled, each on a PSU cable of its own, or a native cable "
                   "rated for the card (12V-2x6 600 W); or nvidia-smi -pl %.0f on gpu%zu", cap, g);
  else
    gr_finding_fix(f, NULL, "nvidia-smi -pl %.0f on gpu%zu, within what its connectors carry with the slot's share "
                   "(the limit is not raised above the board's rating)", cap, g);
}

/* Two or more PCIe plugs on fewer cables (a daisy chain): the busiest
 * cable's share of the connectors' load against one plug's wiring. */
static void cable_finding(struct gr_power_budget *b, size_t g, const char *model, const struct gr_gpu_power *gp,
                          const struct gr_conns *c, double slot)
{
  int plugs = gr_conns_pcie_plugs(gp->from.n ? &gp->from : c);
  double wire = gr_power_connector_w("cable-8pin"), load = b->gpus[g].draw_w - slot;
  if (gp->cables <= 0 || gp->cables >= plugs || wire < 0)
    return;
  int most = (plugs + gp->cables - 1) / gp->cables;
  double carried = load * most / plugs;
  if (carried <= wire)
    return;
  struct gr_finding *f = gr_finding_add(
      &b->findings, GR_SEV_WARN, "power.cable-shared",
      "gpu%zu (%s): %d PCIe plugs on %d PSU cable%s: one cable carries %d plug%s, at least %.0f W through wires "
      "specified for %.0f W (one 8-pin's)", g, model, plugs, gp->cables, gp->cables == 1 ? "" : "s", most,
      most == 1 ? "" : "s", carried, wire);
  gr_finding_evidence(f, "rig", "gpu%zu: power ... cables %d; data/power-parts.tsv cable-8pin", g, gp->cables);
  gr_finding_fix(f, NULL, "one PSU cable for each PCIe plug (%d cables), unless the PSU's label rates its cable for "
                 "two plugs", plugs);
}

/* A riser that cannot give the card the slot's 12 V (66 W). */
static void riser_finding(struct gr_power_budget *b, size_t g, const char *model, const struct gr_gpu_power *gp,
                          const char *psu)
{
  const char *k = gp->riser_power;
  double need = gr_power_connector_w("slot-12v");
  if (!gp->riser || !k[0] || strcmp(k, "slot") == 0 || need < 0)
    return;
  double have = strcmp(k, "none") == 0 ? 0 : gr_power_connector_w(k);
  struct gr_finding *f;
  if (have < 0)
    f = gr_finding_add(&b->findings, GR_SEV_INFO, "power.riser-unknown",
                       "gpu%zu (%s) sits on a riser powered through a %s plug: no published rating of it, so whether "
                       "it carries the slot's %.0f W at 12 V is unknown", g, model, k, need);
  else if (have >= need)
    return;
  else if (have == 0)
    f = gr_finding_add(&b->findings, GR_SEV_FAIL, "power.riser-unpowered",
                       "gpu%zu (%s) sits on a riser with no power of its own: the card may draw %.0f W from the slot's "
                       "12 V (5.5 A) and nothing feeds it", g, model, need);
  else
    f = gr_finding_add(&b->findings, GR_SEV_WARN, "power.riser-short",
                       "gpu%zu (%s) sits on a riser powered through %s (%.0f W at 12 V): the card may draw %.0f W from "
                       "the slot's 12 V (5.5 A)", g, model, k, have, need);
  gr_finding_evidence(f, "rig", "gpu%zu: riser-power %s; data/power-parts.tsv slot-12v, %s", g, k, k);
  gr_finding_fix(f, NULL, "a riser powered by a 6-pin PCIe cable (75 W) from %s%s, or a ribbon riser that passes the "
                 "board's slot power", psu ? "psu " : "the PSU that feeds the card's connectors", psu ? psu : "");
}

void gr_power_paths(const struct gr_topo *t, struct gr_power_budget *b)
{
  const struct gr_rig_meta *m = t->rig;
  double slot = gr_power_connector_w("slot");
  for (size_t g = 0; m && slot >= 0 && g < b->ngpus && g < m->ngpu_power; g++) {
    const struct gr_gpu_power *gp = &m->gpu_power[g];
    const struct gr_gpu_model *model = gr_pci_catalog(&t->pci[t->gpus[g]]);
    const char *name = model ? model->model : "unknown model";
    struct gr_conns c = gp->conns;
    bool stated = c.n > 0;
    if (!stated)
      reference_conns(model, &c);
    if (b->gpus[g].draw_w >= 0 && c.n) {
      connector_finding(b, g, name, gp, &c, stated, slot);
      cable_finding(b, g, name, gp, &c, slot);
    }
    int psu = b->gpus[g].psu;
    riser_finding(b, g, name, gp, psu >= 0 && (size_t)psu < m->npsus ? m->psus[psu].name : NULL);
  }
}
