/* `gpurig compare` printers; see compare.h. */
#include "print/compare.h"
#include "print/text.h"

#include <stdlib.h>
#include <string.h>

#include "print/common.h"
#include "print/plan.h"
#include "print/predict.h"

static const char *rig_name(const struct gr_judged *j)
{
  return j->m.topo.rig->name;
}

/* The name column: as wide as the longest name shown (at least "rig"). */
static int name_width(const struct gr_judged *js, size_t n)
{
  size_t w = 3;
  for (size_t i = 0; i < n; i++)
    w = strlen(js[i].name) > w ? strlen(js[i].name) : w;
  return (int)w;
}

static void plan_row(FILE *out, int w, const struct gr_judged *j, const struct gr_planned *pl, bool tp_col)
{
  const struct gr_plan *p = &pl->plan;
  char tps[32], step[16], need[24];
  snprintf(need, sizeof(need), "%.1f/%.0f", p->gpu_need_gib, p->gpu_have_gib);
  if (p->decode_tps.ok)
    snprintf(tps, sizeof(tps), "%.1f (%.0f-%.0f)", p->decode_tps.mid, p->decode_tps.low, p->decode_tps.high);
  else if (p->train_tps.ok)
    snprintf(tps, sizeof(tps), "%.0f", p->train_tps.mid);
  else
    snprintf(tps, sizeof(tps), "-");
  if (p->step_s.ok)
    snprintf(step, sizeof(step), "%.2f", p->step_s.mid);
  else
    snprintf(step, sizeof(step), "-");
  fprintf(out, "%-*s %4d ", w, j->name, pl->req.gpus);
  if (tp_col)
    fprintf(out, "%3d ", pl->req.tp);
  fprintf(out, "%12s %-13s %18s %10s %8.2f %s\n", need, gr_fit_name(p->fit), tps, step, p->energy_cost_day,
          p->currency);
}

/* The rigs that share a job rank, one line per shared rank: a tie is a
 * finding of its own (the wiring that sets them apart does not show in this
 * job's speed). */
static void ties(FILE *out, const struct gr_judged **order, const struct gr_planned *plans, const struct gr_judged *js,
                 size_t n, const char *unit)
{
  for (size_t i = 0; i < n;) {
    size_t k = i + 1;
    while (k < n && order[k]->job_rank == order[i]->job_rank)
      k++;
    if (k - i > 1) {
      fprintf(out, "Rank %d shared by", order[i]->job_rank);
      for (size_t x = i; x < k; x++)
        fprintf(out, "%s %s", x == i ? "" : x + 1 == k ? " and" : ",", order[x]->name);
      if (order[i]->job_tps > 0)
        fprintf(out, ": %.4g %s (within 1%%)\n", order[i]->job_tps, unit);
      else
        fprintf(out, ": no speed predicted%s\n", plans[order[i] - js].plan.fit == GR_FIT_NO ? ", and it does not fit" : "");
    }
    i = k;
  }
}

void gr_print_compare_plans(FILE *out, const struct gr_judged *js, const struct gr_planned *plans, size_t n,
                            const char *what, const char *job)
{
  const struct gr_judged **order = gr_compare_order(js, n);
  int w = name_width(js, n);
  bool tp_col = n && plans[0].ntp_tried > 0;
  fprintf(out, "\nPlan: %s, --job %s (gpurig plan gives the breakdown)\n", what, job);
  fprintf(out, "%-*s %4s ", w, "rig", "GPUs");
  if (tp_col)
    fprintf(out, "%3s ", "TP");
  fprintf(out, "%12s %-13s %18s %10s %12s\n", "GiB per GPU", "fits", "tokens/s", "step s", "energy/day");
  for (size_t i = 0; i < n; i++)
    plan_row(out, w, order[i], &plans[order[i] - js], tp_col);
  if (tp_col)
    fprintf(out, "TP: --tp auto's choice per rig, of 1, 2, 4, 8 dividing the GPUs and the model's heads: the\n"
                 "fastest decode that fits (none fits: the least memory per GPU); the rest split layers\n");
  for (size_t i = 0; i < n; i++)
    if (plans[order[i] - js].plan.fit == GR_FIT_NO)
      fprintf(out, "  %s: %s\n", order[i]->name, plans[order[i] - js].plan.verdict);
  ties(out, order, plans, js, n, n && plans[0].plan.train_tps.ok ? "training tokens/s" : "decode tokens/s");
  for (size_t i = 0; i < n; i++) {
    const struct gr_plan *p = &plans[order[i] - js].plan;
    if (p->allreduce_raised_gbps > 0 && p->allreduce_raised_level && plans[order[i] - js].req.gpus > 1)
      fprintf(out, "%s: ranked at %s's defaults (%.1f GB/s); NCCL_P2P_LEVEL=%s gives %.1f GB/s\n", order[i]->name,
              gr_topo_collective(&order[i]->m.topo), p->allreduce_gbps, p->allreduce_raised_level,
              p->allreduce_raised_gbps);
  }
  free(order);
}

static void rate_cell(char *buf, size_t cap, const struct gr_judged *j, const char *workload, int gpus)
{
  const struct gr_verdict *v = gr_compare_verdict(j, workload, gpus);
  snprintf(buf, cap, "%s", v ? gr_rating_name(v->rating) : "-");
}

/* One row: the columns of gr_print_compare's header, 100 columns at most
 * with the bundled rigs' names (titles go in the list below the table). */
static void table_row(FILE *out, int w, const struct gr_judged *j, int rank)
{
  const struct gr_prediction *p = &j->m.prediction;
  const struct gr_topo *t = &j->m.topo;
  char cell[4][16], bw[32], ram[16], price[32], per_gib[16], group[16];
  if (p->best_needs_p2p_level)
    snprintf(bw, sizeof(bw), "%.1f/%.1f*", p->nccl_default.busbw_gbps, p->best.busbw_gbps);
  else
    snprintf(bw, sizeof(bw), "%.1f", p->best.busbw_gbps);
  rate_cell(cell[0], sizeof(cell[0]), j, "tensor-parallel inference", 2);
  rate_cell(cell[1], sizeof(cell[1]), j, "tensor-parallel inference", 4);
  rate_cell(cell[2], sizeof(cell[2]), j, "tensor-parallel inference", 8);
  rate_cell(cell[3], sizeof(cell[3]), j, "training", -1);
  snprintf(ram, sizeof(ram), j->ram_gib > 0 ? "%.0f" : "-", j->ram_gib);
  double per = gr_compare_price_per_gib(j);
  snprintf(per_gib, sizeof(per_gib), per > 0 ? "%.0f" : "-", per);
  if (t->rig->price > 0) /* 0 also when --gpu replaced the cards the price bought (own_price) */
    snprintf(price, sizeof(price), "%.0f %s", t->rig->price, t->rig->currency ? t->rig->currency : "");
  else
    snprintf(price, sizeof(price), "-");
  snprintf(group, sizeof(group), "%d/%zu", p->largest_p2p_domain, t->ngpus);
  const struct gr_verdict *jobs = gr_compare_verdict(j, "independent jobs", -1);
  fprintf(out, "%-2d %-*s %4zu %4.0f %4s %10s %5s %-5s %-4s %-4s %-4s %-4s %9s %5s\n", rank, w, j->name, t->ngpus,
          j->vram_gib, ram, bw, group, cell[3], cell[0], cell[1], cell[2], jobs ? gr_rating_name(jobs->rating) : "-",
          price, per_gib);
}

/* A verdict's reasons: whole with --verbose, else what the table does not
 * already say, in two lines after head. */
static const char *reason_text(const struct gr_verdict *v, const char *head, const struct gr_text_style *st,
                               char *buf, size_t cap)
{
  if (st->verbose)
    return v->reasons;
  size_t used = gr_text_columns(head);
  size_t room = (size_t)st->width > used + 20 ? (size_t)st->width * 2 - used - 4 : 40;
  return gr_text_fit(gr_verdict_point(v->reasons), room, buf, cap);
}

static void reasons(FILE *out, const struct gr_judged **order, size_t n, const struct gr_text_style *st)
{
  char head[160], cut[1024];
  fprintf(out, "\nWhy, for data-parallel training (training rank, 1 = best):\n");
  for (size_t i = 0; i < n; i++) {
    const struct gr_verdict *v = gr_compare_verdict(order[i], "training", -1);
    snprintf(head, sizeof(head), "%d. %s (%s): ", order[i]->rank, order[i]->name, v ? gr_rating_name(v->rating) : "-");
    fprintf(out, "%s%s\n", head, v ? reason_text(v, head, st, cut, sizeof(cut)) : "");
  }
  fprintf(out, "\nTensor-parallel inference:\n");
  for (size_t i = 0; i < n; i++) {
    const struct gr_prediction *p = &order[i]->m.prediction;
    for (size_t k = 0; k < p->nverdicts; k++) {
      const struct gr_verdict *v = &p->verdicts[k];
      if (strcmp(v->workload, "tensor-parallel inference") != 0)
        continue;
      snprintf(head, sizeof(head), "  %s, TP-%d (%s): ", order[i]->name, v->gpus, gr_rating_name(v->rating));
      fprintf(out, "%s%s\n", head, reason_text(v, head, st, cut, sizeof(cut)));
    }
  }
}

/* What the # column ranks by, in one line. */
static void rank_line(FILE *out, const struct gr_judged *js, const struct gr_planned *plans, size_t n)
{
  if (!plans || !n) {
    fprintf(out, "#: training rank: share of GPUs in one P2P group, then all-reduce GB/s (--job: by speed)\n");
    return;
  }
  bool speed = false;
  for (size_t i = 0; i < n; i++)
    speed |= js[i].job_tps > 0;
  const struct gr_plan *p = &plans[0].plan;
  if (!speed)
    fprintf(out, "#: rank by whether the job fits (the plan predicts no speed for it)\n");
  else
    fprintf(out, "#: by the plan's %s tokens/s (middle figure); no fit ranks last; within 1%% is a tie\n",
            p->train_tps.ok ? "training" : "decode");
}

void gr_print_compare(FILE *out, const struct gr_judged *js, const struct gr_planned *plans, size_t n,
                      const struct gr_text_style *st)
{
  const struct gr_judged **order = gr_compare_order(js, n);
  int w = name_width(js, n);
  /* two header lines: the units under the names keep the columns narrow */
  fprintf(out, "%-2s %-*s %4s %4s %4s %10s %5s %-5s %-4s %-4s %-4s %-4s %9s %5s\n", "#", w, "rig", "GPUs", "VRAM",
          "RAM", "allreduce", "P2P", "train", "TP-2", "TP-4", "TP-8", "jobs", "price", "/GiB");
  fprintf(out, "%-2s %-*s %4s %4s %4s %10s %5s %-5s %-4s %-4s %-4s %-4s %9s %5s\n", "", w, "", "", "GiB", "GiB",
          "GB/s", "group", "", "", "", "", "", "", "VRAM");
  bool star = false, replaced = false, star_amd = false, star_nv = false;
  for (size_t i = 0; i < n; i++) {
    table_row(out, w, order[i], plans ? order[i]->job_rank : order[i]->rank);
    bool s = order[i]->m.prediction.best_needs_p2p_level;
    star |= s;
    /* the starred rigs' library: RCCL reads the same NCCL_P2P_LEVEL */
    star_amd |= s && strcmp(gr_topo_collective(&order[i]->m.topo), "RCCL") == 0;
    star_nv |= s && strcmp(gr_topo_collective(&order[i]->m.topo), "NCCL") == 0;
    replaced |= order[i]->m.topo.rig->own_price > 0;
  }
  rank_line(out, js, plans, n);
  if (replaced)
    fprintf(out, "price -: a rig's price is for the rig as described, with its own cards, which --gpu replaced\n");
  if (star) {
    if (star_amd && star_nv)
      fprintf(out, "A/B*: A with the library's defaults (NCCL's; RCCL's on the AMD rigs), B with NCCL_P2P_LEVEL\n"
                   "raised as the rig's reasons say (the default keeps these paths off P2P)\n");
    else
      fprintf(out, "A/B*: A with %s defaults, B with NCCL_P2P_LEVEL raised as the rig's reasons say (%s\n"
                   "default keeps these paths off P2P)\n", star_amd ? "RCCL's" : "NCCL's", star_amd ? "RCCL's" : "NCCL's");
  }
  if (n) {
    char dflt[160];
    fprintf(out, "Figures and verdicts follow %s.\n", gr_nccl_defaults_text(&js[0].m.analysis, dflt, sizeof(dflt)));
  }
  fprintf(out, "\nRigs (RAM as the rig states it; price of the rig as described):\n");
  for (size_t i = 0; i < n; i++)
    fprintf(out, "  %-*s %s\n", w, order[i]->name, rig_name(order[i]));
  free(order);
  /* the training verdicts keep their own rank, whatever orders the table */
  order = gr_compare_training_order(js, n);
  reasons(out, order, n, st);
  free(order);
}

/* A rig's draw for its energy: with a planned job, the plan's draw under it
 * (plan_cost: the same power model plan --power-limit caps, *job true);
 * else at the wall when its one PSU's efficiency gives it, or the DC load
 * (*wall false); -1 unknown. */
static double rig_draw(const struct gr_judged *j, const struct gr_planned *plan, bool *wall, bool *job)
{
  const struct gr_power_budget *b = &j->m.power;
  *job = plan != NULL;
  *wall = !plan && b->npsus == 1 && b->psus[0].wall_w >= 0;
  if (plan)
    return plan->plan.power_w;
  return *wall ? b->psus[0].wall_w : b->sustained_w;
}

void gr_print_compare_power(FILE *out, const struct gr_judged *js, const struct gr_planned *plans, size_t n,
                            double kwh_price)
{
  const struct gr_judged **order = gr_compare_order(js, n);
  int w = name_width(js, n);
  if (plans)
    fprintf(out, "\nPower under the planned job (the plan's draw: each GPU it runs on at %.0f%% of board power or the "
            "power limit, the host %.0f W; data/planner.tsv), energy at %.2f per kWh (--kwh):\n",
            gr_plan_consts()->gpu_power_share * 100, gr_plan_consts()->host_power_w, kwh_price);
  else
    fprintf(out, "\nPower at full load (GPUs at board power or the rig's limit, CPUs at TDP), energy at %.2f per kWh "
            "(--kwh):\n", kwh_price);
  for (size_t i = 0; i < n; i++) {
    bool wall, job;
    const struct gr_planned *plan = plans ? &plans[order[i] - js] : NULL;
    double d = rig_draw(order[i], plan, &wall, &job);
    if (d < 0) {
      const struct gr_power_budget *b = &order[i]->m.power;
      fprintf(out, "  %-*s unknown: %s\n", w, order[i]->name,
              b->gpu_w < 0   ? "a GPU's board power is not in data/gpus.tsv"
              : b->cpu_w < 0 ? "a CPU's TDP is not in data/power-parts.tsv"
                             : "no CPU stated");
      continue;
    }
    double kwh = d * 24 / 1000;
    fprintf(out, "  %-*s %5.0f W %s, %5.1f kWh/day = %6.2f/day\n", w, order[i]->name, d,
            job ? "under the job" : wall ? "at the wall" : "DC (no PSU efficiency)", kwh, kwh * kwh_price);
  }
  free(order);
}

/* The rig's power (under the planned job, else at full load) and its
 * energy per day (null unknown). */
static json_t *rig_power_json(const struct gr_judged *j, const struct gr_planned *plan, double kwh_price)
{
  bool wall, job;
  double d = rig_draw(j, plan, &wall, &job);
  json_t *o = json_object();
  json_object_set_new(o, "basis", json_string(job ? "job" : "full_load"));
  json_object_set_new(o, "sustained_w", job ? gr_json_rounded(d, 1)
                                        : j->m.power.sustained_w < 0 ? json_null()
                                                                     : gr_json_rounded(j->m.power.sustained_w, 1));
  json_object_set_new(o, "wall_w", d >= 0 && wall ? gr_json_rounded(d, 1) : json_null());
  json_object_set_new(o, "energy_kwh_day", d >= 0 ? gr_json_rounded(d * 24 / 1000, 2) : json_null());
  json_object_set_new(o, "kwh_price", gr_json_rounded(kwh_price, 4));
  json_object_set_new(o, "energy_cost_day", d >= 0 ? gr_json_rounded(d * 24 / 1000 * kwh_price, 2) : json_null());
  return o;
}

static json_t *rig_json(const struct gr_judged *j, const struct gr_planned *plan, double kwh_price)
{
  const struct gr_prediction *p = &j->m.prediction;
  const struct gr_topo *t = &j->m.topo;
  json_t *o = json_object();
  json_object_set_new(o, "name", json_string(t->rig->name));
  json_object_set_new(o, "short_name", json_string(j->name));
  json_object_set_new(o, "file", json_string(t->rig->file));
  json_object_set_new(o, "gpus", json_integer((json_int_t)t->ngpus));
  json_object_set_new(o, "gpu_model", t->ngpus ? json_string(t->pci[t->gpus[0]].model) : json_null());
  json_object_set_new(o, "vram_gib", json_real(j->vram_gib));
  json_object_set_new(o, "host_ram_gib", gr_json_positive(j->ram_gib, 0));
  json_object_set_new(o, "allreduce_busbw_gbps", gr_json_rounded(p->best.busbw_gbps, 2));
  json_object_set_new(o, "allreduce_busbw_nccl_default_gbps", gr_json_rounded(p->nccl_default.busbw_gbps, 2));
  char env[64];
  snprintf(env, sizeof(env), "NCCL_P2P_LEVEL=%s", p->best_p2p_level ? p->best_p2p_level : "");
  json_object_set_new(o, "allreduce_needs", p->best_needs_p2p_level ? json_string(env) : json_null());
  char v[32];
  json_object_set_new(o, "nccl_version", json_string(gr_nccl_version_text(&j->m.analysis.nccl_version, v, sizeof(v))));
  json_object_set_new(o, "nccl_version_assumed", json_boolean(j->m.analysis.nccl_assumed));
  json_object_set_new(o, "largest_p2p_group", json_integer(p->largest_p2p_domain));
  json_object_set_new(o, "training_rank", json_integer(j->rank));
  if (j->job)
    json_object_set_new(o, "job_rank", json_integer(j->job_rank));
  json_object_set_new(o, "price", t->rig->price > 0 ? json_real(t->rig->price) : json_null());
  /* --gpu replaced the cards: price and price_per_vram_gib are null, the rig's own price kept apart */
  json_object_set_new(o, "price_own_cards", gr_json_positive(t->rig->own_price, 2));
  json_object_set_new(o, "currency", t->rig->currency ? json_string(t->rig->currency) : json_null());
  json_object_set_new(o, "price_per_vram_gib", gr_json_positive(gr_compare_price_per_gib(j), 2));
  json_object_set_new(o, "power", rig_power_json(j, plan, kwh_price));
  json_t *pred = gr_prediction_to_json(t, p);
  json_object_set(o, "verdicts", json_object_get(pred, "verdicts"));
  json_object_set_new(o, "prediction", pred);
  return o;
}

json_t *gr_compare_to_json(const struct gr_judged *js, const struct gr_planned *plans, size_t n, double kwh_price)
{
  json_t *root = json_object(), *arr = json_array();
  for (size_t i = 0; i < n; i++) {
    json_t *o = rig_json(&js[i], plans ? &plans[i] : NULL, kwh_price);
    if (plans)
      json_object_set_new(o, "plan", gr_plan_to_json(&plans[i]));
    json_array_append_new(arr, o);
  }
  json_object_set_new(root, "rigs", arr);
  return root;
}

void gr_print_rig_list(FILE *out, const struct gr_rig_entry *rigs, size_t n)
{
  for (size_t i = 0; i < n; i++)
    if (rigs[i].title)
      fprintf(out, "%-26s %s\n", rigs[i].name, rigs[i].title);
    else
      fprintf(out, "%-26s (does not load: %s)\n", rigs[i].name, rigs[i].problem);
}
