/* `gpurig compare RIG...`: machines described in rig files, side by side,
 * judged before anyone buys them. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "analysis/compare.h"
#include "cli/cli.h"
#include "cli/options.h"
#include "facts/facts.h"
#include "plan/request.h"
#include "print/compare.h"
#include "print/text.h"

/* compare: the rigs (the arguments), --gpu for their slots, the output,
 * NCCL, and with --job the planner's arguments for every rig. */
struct compare_opts {
  struct gr_source_opts src; /* only gpu: the rigs are the arguments */
  struct gr_output_opts out;
  struct gr_nccl_version nccl; /* major 0: not given */
  struct gr_plan_args plan;
  bool list;
};

static const struct gr_option compare_rows[] = {
    GR_OPT_FLAG_ROW("list", 0, struct compare_opts, list, "the rigs in data/rigs/ with their titles"),
};

static const struct gr_option_group compare_groups[] = {
    GR_OPTION_GROUP(gr_rows_gpu, struct compare_opts, src, NULL), /* every rig's slots */
    GR_OPTION_GROUP(gr_rows_json, struct compare_opts, out, NULL),
    GR_OPTION_GROUP(gr_rows_verbose, struct compare_opts, out, NULL),
    GR_OPTION_GROUP(gr_rows_nccl, struct compare_opts, nccl, NULL),
    GR_OPTION_GROUP(gr_rows_plan, struct compare_opts, plan, NULL),
    GR_OPTION_OWN(compare_rows, NULL),
};
static const struct gr_command_options compare_spec = {
    compare_groups, sizeof(compare_groups) / sizeof(compare_groups[0]), GR_POSITIONAL_MANY};

/* --help's option lines, in compare's order and words */
static const char *const compare_help[] = {
    "gpu=put this catalog GPU (data/gpus.tsv) in every GPU slot of every rig,\n"
    "to compare the platforms with the same cards (a rig's price was for its\n"
    "own cards: other cards show price and /GiB as -)",
    "json={\"rigs\": [...]} (docs/json.md)",
    "nccl-version=the NCCL whose P2P defaults the verdicts follow (2.21, 2.21.5; default:\n"
    "the newest in data/nccl-p2p.tsv)",
    "list",
    "job=also plan this job on every rig (gpurig plan --help gives --model, --quant,\n"
    "--ctx, --batch, --zero, ...; --gpus defaults to all of each rig): adds the\n"
    "columns fits, GiB per GPU, tokens/s or step time, price and energy per day,\n"
    "and ranks the rigs by the job's speed; --tp auto picks each rig's TP degree\n"
    "(of 1, 2, 4, 8 dividing the GPUs and the model's heads) with the fastest\n"
    "decode that fits, shown in a TP column",
    "kwh=electricity price per kWh for each rig's energy per day: at full load (GPUs at\n"
    "board power, CPUs at TDP, through the PSU's efficiency where the rig states it),\n"
    "or with --job at the planned job's draw; default 0.15, data/planner.tsv",
    NULL,
};

static void compare_usage(void)
{
  printf("usage: gpurig compare [--gpu MODEL] [--json] [--nccl-version X.Y[.Z]]\n"
         "                      [--kwh P] [--job J (--model M | --params N) [plan options]] RIG...\n"
         "       gpurig compare --list\n"
         "\n"
         "Judges machines from their rig files (docs/rig-format.md), side by side: GPUs, VRAM,\n"
         "predicted all-reduce bus bandwidth, P2P groups, a verdict per workload (data-parallel\n"
         "training, tensor-parallel inference on 2/4/8 GPUs, independent jobs), price per GiB\n"
         "of VRAM, a training rank (1 = best) with its reasons, and each rig's power (at full load,\n"
         "or with --job under the planned job) with its energy per day (docs/power.md).\n"
         "\n"
         "  RIG          a rig file, or a name from data/rigs/ (see --list)\n");
  gr_print_option_help(stdout, &compare_spec, compare_help, 13);
  printf("\n"
         "Rank (#, 1 = best): without --job the training rank: first the share of GPUs that\n"
         "exchange gradients peer-to-peer without crossing a socket (the seed authors' criterion:\n"
         "hives under switches, one root complex), then the predicted all-reduce bandwidth\n"
         "(docs/predict.md). With --job: the plan's decode tokens/s (infer) or training tokens/s,\n"
         "middle figures; rigs where the job does not fit after those where it fits; speeds within\n"
         "1%% share a rank, and the rigs that share one are named.\n"
         "Exit status: 0 ok; with --job 1 when the job is tight on a rig and 4 when it does not fit\n"
         "on one; 2 bad input (a rig file's error names FILE:LINE:COL); 3 gpurig's data directory\n"
         "could not be read.\n");
}

static int list_rigs(void)
{
  struct gr_rig_entry *rigs;
  size_t n;
  struct gr_err err = {0};
  if (gr_rig_list(&rigs, &n, &err) != 0)
    return gr_report_error(&err);
  gr_print_rig_list(stdout, rigs, n);
  gr_rig_list_free(rigs, n);
  return GR_EXIT_OK;
}

/* --job: the same request planned on every rig. A request a rig cannot run
 * (too few GPUs, say) is an error for the whole comparison. */
static int plan_rigs(const struct gr_plan_args *a, struct gr_judged *js, size_t n, struct gr_planned *plans,
                     struct gr_findings *fs, struct gr_err *err)
{
  for (size_t i = 0; i < n; i++) {
    struct gr_plan_hw hw;
    const char *name = js[i].m.topo.rig->name;
    if (gr_plan_hw_from(a, &js[i].m, &hw, err) != 0 || gr_plan_job(a, &hw, name, &plans[i], err) != 0)
      return -1;
    gr_plan_findings(&plans[i], name, fs);
  }
  gr_compare_rank_plans(js, plans, n); /* the job's speed ranks the rigs, not the wiring alone */
  return 0;
}

static void print_comparison(const struct compare_opts *o, const struct gr_judged *js, const struct gr_planned *plans,
                             size_t n, double kwh_price)
{
  if (o->out.json) {
    cli_print_json(gr_compare_to_json(js, plans, n, kwh_price));
    return;
  }
  struct gr_text_style st;
  FILE *out = cli_text_begin(o->out.verbose, &st);
  gr_print_compare(out, js, plans, n, &st);
  gr_print_compare_power(out, js, plans, n, kwh_price);
  if (plans)
    gr_print_compare_plans(out, js, plans, n, o->plan.model ? o->plan.model : o->plan.params, o->plan.job);
  cli_text_end(out);
}

/* --kwh P, else data/planner.tsv's price; -1 after a message when P is
 * not a number of 0 or more. */
static int kwh_option(const char *s, double *price)
{
  *price = gr_plan_consts()->kwh_price_usd;
  if (!s)
    return 0;
  char *end;
  *price = strtod(s, &end);
  if (end == s || *end || !isfinite(*price) || *price < 0) {
    gr_diag("gpurig: compare: --kwh %s: expected a price per kWh, 0 or more\n", s);
    return -1;
  }
  return 0;
}

int cmd_compare(int argc, char **argv)
{
  struct compare_opts o;
  struct gr_parsed p;
  struct gr_err err = {0};
  struct gr_judged *js = NULL;
  struct gr_planned *plans = NULL;
  struct gr_findings fs = {0};
  int rc = GR_EXIT_OK;
  if (gr_parse_options(argc, argv, &compare_spec, &o, sizeof(o), &p) != 0)
    return GR_EXIT_FAIL;
  if (p.help) {
    compare_usage();
    return GR_EXIT_OK;
  }
  if (o.list)
    return list_rigs();
  struct gr_plan_args args = o.plan;
  args.gpu = NULL; /* compare's --gpu fills the rigs' slots, never a generic board */
  double kwh_price;
  if (kwh_option(o.plan.kwh, &kwh_price) != 0)
    return GR_EXIT_FAIL;
  args.kwh = NULL; /* --kwh prices every rig's power, with or without a job */
  bool plan_given = gr_plan_args_given(&args);
  args.kwh = o.plan.kwh;
  if (!o.plan.job && plan_given) {
    gr_diag("gpurig: compare: plan options need --job (gpurig plan --help)\n");
    return GR_EXIT_FAIL;
  }
  if (p.nargs < 1) {
    gr_diag("gpurig: compare: name at least one rig (gpurig compare --list shows them)\n");
    return GR_EXIT_FAIL;
  }
  if (o.plan.estimator) {
    gr_diag("gpurig: compare: --estimator applies to gpurig plan only\n");
    return GR_EXIT_FAIL;
  }
  /* the plan's arguments, --cpu included, are judged before any rig is read */
  if (o.plan.job && gr_plan_args_check(&args, NULL, &err) != 0)
    return gr_report_error(&err);
  size_t n = (size_t)p.nargs;
  if (gr_compare_open(p.args, n, o.src.gpu, &o.nccl, o.plan.job ? GR_MACHINE_GROUPS : 0, &js, &err) != 0)
    return gr_report_error(&err);
  if (o.plan.job) {
    plans = xcalloc(n, sizeof(*plans));
    if (plan_rigs(&args, js, n, plans, &fs, &err) != 0) {
      rc = gr_report_error(&err);
      goto out;
    }
  }
  print_comparison(&o, js, plans, n, kwh_price);
  rc = gr_findings_exit(&fs);
  for (size_t i = 0; plans && i < n; i++)
    if (plans[i].plan.fit == GR_FIT_NO) /* a verdict, as in plan: not bad input */
      rc = GR_EXIT_NOFIT;
out:
  for (size_t i = 0; plans && i < n; i++)
    gr_planned_free(&plans[i]);
  free(plans);
  gr_findings_free(&fs);
  gr_compare_close(js, n);
  return rc;
}
