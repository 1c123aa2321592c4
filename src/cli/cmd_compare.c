/* `gpurig compare RIG...`: machines described in rig files, side by side,
 * judged before anyone buys them. */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "facts/catalog.h"
#include "cli/cli.h"
#include "facts/data.h"
#include "plan/llm.h"
#include "plan/plan.h"
#include "print/print.h"
#include "load/rig.h"

struct judged {
  struct gr_topo t;
  struct gr_analysis a;
  struct gr_prediction p;
  double vram_gib;
  int rank;
  bool planned;          /* --job given: the plan below is filled */
  struct gr_plan_req req;
  struct gr_model model; /* owned; freed with the rest */
  struct gr_plan_hw hw;
  struct gr_plan plan;
};

static void compare_usage(void)
{
  printf("usage: gpurig compare [--gpu MODEL] [--json] [--job J (--model M | --params N) [plan options]] RIG...\n"
         "       gpurig compare --list\n"
         "\n"
         "Judges machines from their rig files (docs/rig-format.md), side by side: GPUs, VRAM,\n"
         "predicted all-reduce bus bandwidth, P2P groups, a verdict per workload (data-parallel\n"
         "training, tensor-parallel inference on 2/4/8 GPUs, independent jobs), price per GiB\n"
         "of VRAM, and a training rank (1 = best) with its reasons.\n"
         "\n"
         "  RIG          a rig file, or a name from data/rigs/ (see --list)\n"
         "  --gpu MODEL  put this catalog GPU (data/gpus.tsv) in every GPU slot of every rig,\n"
         "               to compare the platforms with the same cards\n"
         "  --json       {\"rigs\": [...]} (docs/json.md)\n"
         "  --list       the rigs in data/rigs/ with their titles\n"
         "  --job J      also plan this job on every rig (gpurig plan --help gives --model, --quant,\n"
         "               --ctx, --batch, --zero, ...; --gpus defaults to all of each rig): adds the\n"
         "               columns fits, GiB per GPU, tokens/s or step time, price and energy per day\n"
         "\n"
         "Training rank: first the share of GPUs that exchange gradients peer-to-peer without\n"
         "crossing a socket (the seed authors' criterion: hives under switches, one root\n"
         "complex), then the predicted all-reduce bandwidth (docs/predict.md).\n"
         "Exit status: 0 ok, 2 bad input (a rig file's error names FILE:LINE:COL).\n");
}

static int list_rigs(void)
{
  char dir[PATH_MAX];
  if (!gr_data_path("rigs", dir, sizeof(dir)))
    return GR_EXIT_CANNOT_RUN;
  struct dirent **names;
  int n = scandir(dir, &names, NULL, alphasort);
  if (n < 0) {
    fprintf(stderr, "gpurig compare: %s: cannot list rigs\n", dir);
    return GR_EXIT_CANNOT_RUN;
  }
  for (int i = 0; i < n; i++) {
    char *dot = strstr(names[i]->d_name, ".rig");
    if (dot && dot[4] == '\0') {
      struct gr_topo t;
      struct gr_err err = {0};
      *dot = '\0';
      if (gr_load_rig(names[i]->d_name, &t, &err) == 0) {
        printf("%-26s %s\n", names[i]->d_name, t.rig->name);
        gr_topo_free(&t);
      } else {
        printf("%-26s (does not load: %s)\n", names[i]->d_name, err.msg);
      }
    }
    free(names[i]);
  }
  free(names);
  return GR_EXIT_OK;
}

static int judge(const char *rig, const char *gpu, struct judged *j, struct gr_err *err)
{
  struct gr_opts o = {.rig = rig, .gpu = gpu};
  memset(j, 0, sizeof(*j));
  if (gr_load_and_analyze(&o, &j->t, &j->a, &j->p, err) != 0)
    return -1;
  for (size_t g = 0; g < j->t.ngpus; g++) {
    const struct gr_gpu_model *m = gr_catalog_find(j->t.pci[j->t.gpus[g]].model);
    j->vram_gib += m ? m->mem_gib : 0;
  }
  return 0;
}

/* --job: the same request planned on this rig. A request the rig cannot run
 * (too few GPUs, say) is an error for the whole comparison. */
static int plan_on_rig(const struct gr_opts *o, struct judged *j, struct gr_err *err)
{
  gr_plan_hw_from_topo(&j->t, &j->p, &j->hw);
  if (gr_plan_from_opts(o, j->hw.ngpus, &j->req, &j->model, err) != 0)
    return -1;
  if (gr_plan_check(&j->req, &j->model, &j->hw, err) != 0) {
    char msg[sizeof(err->msg)];
    snprintf(msg, sizeof(msg), "%s", err->msg);
    snprintf(err->msg, sizeof(err->msg), "%.200s: %.500s", j->t.rig->name, msg);
    return -1;
  }
  gr_plan_run(&j->req, &j->model, &j->hw, &j->plan);
  j->planned = true;
  return 0;
}

static void print_plan_table(struct judged *js, size_t n, const struct gr_opts *o)
{
  printf("\nPlan: %s, --job %s (gpurig plan gives the breakdown)\n", o->model ? o->model : o->params, o->job);
  printf("%-34s %4s %12s %-13s %18s %10s %12s\n", "rig", "GPUs", "GiB per GPU", "fits", "tokens/s", "step s",
         "energy/day");
  for (size_t i = 0; i < n; i++) {
    const struct judged *j = &js[i];
    const struct gr_plan *p = &j->plan;
    char name[64], tps[32], step[16], need[24];
    snprintf(name, sizeof(name), "%.34s", j->t.rig->name);
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
    printf("%-34s %4d %12s %-13s %18s %10s %8.2f %s\n", name, j->req.gpus, need, gr_fit_name(p->fit), tps, step,
           p->energy_cost_day, p->currency);
  }
  for (size_t i = 0; i < n; i++)
    if (js[i].plan.fit == GR_FIT_NO)
      printf("  %s: %s\n", js[i].t.rig->name, js[i].plan.verdict);
}

static const struct gr_verdict *verdict(const struct judged *j, const char *workload, int gpus)
{
  for (size_t i = 0; i < j->p.nverdicts; i++)
    if (strcmp(j->p.verdicts[i].workload, workload) == 0 && (gpus < 0 || j->p.verdicts[i].gpus == gpus))
      return &j->p.verdicts[i];
  return NULL;
}

static double p2p_share(const struct judged *j)
{
  return j->t.ngpus ? (double)j->p.largest_p2p_domain / (double)j->t.ngpus : 0;
}

/* Training rank: P2P share, then best all-reduce bandwidth, then the default one. */
static int cmp_training(const void *x, const void *y)
{
  const struct judged *a = *(const struct judged *const *)x, *b = *(const struct judged *const *)y;
  if (p2p_share(a) != p2p_share(b))
    return p2p_share(a) > p2p_share(b) ? -1 : 1;
  if (a->p.best.busbw_gbps != b->p.best.busbw_gbps)
    return a->p.best.busbw_gbps > b->p.best.busbw_gbps ? -1 : 1;
  if (a->p.nccl_default.busbw_gbps != b->p.nccl_default.busbw_gbps)
    return a->p.nccl_default.busbw_gbps > b->p.nccl_default.busbw_gbps ? -1 : 1;
  return 0;
}

static void rate_cell(char *buf, size_t cap, const struct judged *j, const char *workload, int gpus)
{
  const struct gr_verdict *v = verdict(j, workload, gpus);
  snprintf(buf, cap, "%s", v ? gr_rating_name(v->rating) : "-");
}

static void print_table(struct judged *js, size_t n)
{
  char name[64], cell[4][16], bw[32], price[32];
  printf("%-4s %-34s %4s %9s %15s %9s %-6s %-6s %-6s %-6s %-6s %s\n", "rank", "rig", "GPUs", "VRAM GiB",
         "allreduce GB/s", "P2P group", "train", "TP-2", "TP-4", "TP-8", "jobs", "price/GiB VRAM");
  for (size_t i = 0; i < n; i++) {
    const struct judged *j = &js[i];
    snprintf(name, sizeof(name), "%.34s", j->t.rig->name);
    if (j->p.best_needs_p2p_level)
      snprintf(bw, sizeof(bw), "%.1f (%.1f*)", j->p.nccl_default.busbw_gbps, j->p.best.busbw_gbps);
    else
      snprintf(bw, sizeof(bw), "%.1f", j->p.best.busbw_gbps);
    rate_cell(cell[0], sizeof(cell[0]), j, "tensor-parallel inference", 2);
    rate_cell(cell[1], sizeof(cell[1]), j, "tensor-parallel inference", 4);
    rate_cell(cell[2], sizeof(cell[2]), j, "tensor-parallel inference", 8);
    rate_cell(cell[3], sizeof(cell[3]), j, "training", -1);
    if (j->t.rig->price > 0 && j->vram_gib > 0)
      snprintf(price, sizeof(price), "%.0f %s", j->t.rig->price / j->vram_gib, j->t.rig->currency);
    else
      snprintf(price, sizeof(price), "-");
    char group[16];
    snprintf(group, sizeof(group), "%d/%zu", j->p.largest_p2p_domain, j->t.ngpus);
    const struct gr_verdict *jobs = verdict(j, "independent jobs", -1);
    printf("%-4d %-34s %4zu %9.0f %15s %9s %-6s %-6s %-6s %-6s %-6s %s\n", j->rank, name, j->t.ngpus, j->vram_gib, bw,
           group, cell[3], cell[0], cell[1], cell[2], jobs ? gr_rating_name(jobs->rating) : "-", price);
  }
  bool star = false;
  for (size_t i = 0; i < n; i++)
    star |= js[i].p.best_needs_p2p_level;
  if (star)
    printf("* with NCCL_P2P_LEVEL raised as the rig's reasons say (NCCL's default keeps these paths off P2P)\n");
  printf("\nWhy, for data-parallel training (rank 1 = best):\n");
  for (size_t i = 0; i < n; i++) {
    const struct gr_verdict *v = verdict(&js[i], "training", -1);
    printf("%d. %s (%s): %s\n", js[i].rank, js[i].t.rig->name, v ? gr_rating_name(v->rating) : "-",
           v ? v->reasons : "");
  }
  printf("\nTensor-parallel inference:\n");
  for (size_t i = 0; i < n; i++)
    for (size_t k = 0; k < js[i].p.nverdicts; k++)
      if (strcmp(js[i].p.verdicts[k].workload, "tensor-parallel inference") == 0)
        printf("  %s, %d GPUs (%s): %s\n", js[i].t.rig->name, js[i].p.verdicts[k].gpus,
               gr_rating_name(js[i].p.verdicts[k].rating), js[i].p.verdicts[k].reasons);
}

static json_t *rig_json(const struct judged *j)
{
  json_t *o = json_object();
  json_object_set_new(o, "name", json_string(j->t.rig->name));
  json_object_set_new(o, "file", json_string(j->t.rig->file));
  json_object_set_new(o, "gpus", json_integer((json_int_t)j->t.ngpus));
  json_object_set_new(o, "gpu_model", j->t.ngpus ? json_string(j->t.pci[j->t.gpus[0]].model) : json_null());
  json_object_set_new(o, "vram_gib", json_real(j->vram_gib));
  json_object_set_new(o, "allreduce_busbw_gbps", gr_json_rounded(j->p.best.busbw_gbps, 2));
  json_object_set_new(o, "allreduce_busbw_nccl_default_gbps",
                      gr_json_rounded(j->p.nccl_default.busbw_gbps, 2));
  char env[64];
  snprintf(env, sizeof(env), "NCCL_P2P_LEVEL=%s", j->p.best_p2p_level ? j->p.best_p2p_level : "");
  json_object_set_new(o, "allreduce_needs", j->p.best_needs_p2p_level ? json_string(env) : json_null());
  json_object_set_new(o, "largest_p2p_group", json_integer(j->p.largest_p2p_domain));
  json_object_set_new(o, "training_rank", json_integer(j->rank));
  json_object_set_new(o, "price", j->t.rig->price > 0 ? json_real(j->t.rig->price) : json_null());
  json_object_set_new(o, "currency", j->t.rig->currency ? json_string(j->t.rig->currency) : json_null());
  json_object_set_new(o, "price_per_vram_gib",
                      j->t.rig->price > 0 && j->vram_gib > 0
                          ? gr_json_rounded(j->t.rig->price / j->vram_gib, 2)
                          : json_null());
  json_t *pred = gr_prediction_to_json(&j->t, &j->p);
  json_object_set(o, "verdicts", json_object_get(pred, "verdicts"));
  json_object_set_new(o, "prediction", pred);
  return o;
}

static json_t *rig_json_with_plan(const struct judged *j)
{
  json_t *o = rig_json(j);
  if (j->planned)
    json_object_set_new(o, "plan", gr_plan_to_json(&j->req, &j->model, &j->hw, &j->plan));
  return o;
}

int cmd_compare(int argc, char **argv)
{
  struct gr_opts o;
  struct gr_err err = {0};
  int rc = GR_EXIT_OK;
  if (gr_parse_opts(argc, argv, GR_OPT_JSON | GR_OPT_GPU | GR_OPT_MANY | GR_OPT_LIST | GR_OPT_PLAN, &o) != 0)
    return GR_EXIT_FAIL;
  if (o.help) {
    compare_usage();
    return GR_EXIT_OK;
  }
  if (o.list)
    return list_rigs();
  if (!o.job && (o.model || o.params || o.quant || o.ctx || o.batch || o.gpus || o.zero || o.tp || o.pp)) {
    fprintf(stderr, "gpurig compare: plan options need --job (gpurig plan --help)\n");
    return GR_EXIT_FAIL;
  }
  if (o.nargs < 1) {
    fprintf(stderr, "gpurig compare: name at least one rig (gpurig compare --list shows them)\n");
    return GR_EXIT_FAIL;
  }
  struct judged *js = xcalloc((size_t)o.nargs, sizeof(*js));
  struct judged **order = xcalloc((size_t)o.nargs, sizeof(*order));
  int loaded = 0;
  for (int i = 0; i < o.nargs; i++, loaded++)
    if (judge(o.args[i], o.gpu, &js[i], &err) != 0 || (o.job && plan_on_rig(&o, &js[i], &err) != 0)) {
      loaded += js[i].t.rig != NULL; /* judged but not planned: free it too */
      rc = gr_report_error(&err);
      goto out;
    }
  for (int i = 0; i < o.nargs; i++)
    order[i] = &js[i];
  qsort(order, (size_t)o.nargs, sizeof(*order), cmp_training);
  for (int i = 0; i < o.nargs; i++)
    order[i]->rank = i > 0 && cmp_training(&order[i - 1], &order[i]) == 0 ? order[i - 1]->rank : i + 1;
  if (o.json) {
    json_t *root = json_object(), *arr = json_array();
    for (int i = 0; i < o.nargs; i++)
      json_array_append_new(arr, rig_json_with_plan(&js[i]));
    json_object_set_new(root, "rigs", arr);
    gr_print_json_stdout(root);
    json_decref(root);
  } else {
    struct judged *sorted = xcalloc((size_t)o.nargs, sizeof(*sorted));
    for (int i = 0; i < o.nargs; i++)
      sorted[i] = *order[i];
    print_table(sorted, (size_t)o.nargs);
    if (o.job)
      print_plan_table(sorted, (size_t)o.nargs, &o);
    free(sorted); /* shallow copies: the originals are freed below */
  }
out:
  for (int i = 0; i < loaded; i++) {
    gr_model_free(&js[i].model);
    gr_prediction_free(&js[i].p);
    gr_analysis_free(&js[i].a);
    gr_topo_free(&js[i].t);
  }
  free(order);
  free(js);
  return rc;
}
