/* `gpurig plan`: will this model and job fit on this machine, how fast, and
 * at what cost. A loader (rig, catalog GPU, live machine), the analysis and
 * prediction, the planner, and a printer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/options.h"
#include "facts/facts.h"
#include "plan/request.h"
#include "print/common.h"
#include "print/plan.h"
#include "print/power.h"

/* plan: the source (or --gpu alone: a generic board), the output, NCCL and
 * the planner's arguments, kept as text for plan/request.c to judge. */
struct plan_opts {
  struct gr_source_opts src;
  struct gr_output_opts out;
  struct gr_nccl_version nccl; /* major 0: not given */
  struct gr_plan_args plan;    /* all but gpu, which is src.gpu */
  bool list;
};

static const struct gr_option plan_rows[] = {
    GR_OPT_FLAG_ROW("list", 0, struct plan_opts, list,
                    "the built-in models and the catalog's GPUs (data/gpus.tsv), one a line:\n"
                    "\"model NAME\" or \"gpu NAME\" (a GPU's name may have spaces)"),
};

static const struct gr_option_group plan_groups[] = {
    GR_OPTION_GROUP(gr_rows_source, struct plan_opts, src, gr_check_source),
    GR_OPTION_GROUP(gr_rows_rig, struct plan_opts, src, NULL),
    GR_OPTION_GROUP(gr_rows_gpu, struct plan_opts, src, NULL), /* without --rig: a generic board */
    GR_OPTION_GROUP(gr_rows_json, struct plan_opts, out, NULL),
    GR_OPTION_GROUP(gr_rows_nccl, struct plan_opts, nccl, NULL),
    GR_OPTION_GROUP(gr_rows_plan, struct plan_opts, plan, NULL),
    GR_OPTION_OWN(plan_rows, NULL),
};
static const struct gr_command_options plan_spec = {plan_groups, sizeof(plan_groups) / sizeof(plan_groups[0]),
                                                    GR_POSITIONAL_NONE};

/* --help's option lines from the rows, in plan's order and words; --tp and
 * --pp share lines of their own (one sentence for both, and --tp auto). */
static void plan_option_help(const char *model_names)
{
  char model[1400];
  snprintf(model, sizeof(model), "model=a built-in model (%s)\nor a Hugging Face config.json", model_names);
  const char *const llm[] = {model, "params", "job", "quant", "kv-quant", "engine", "ctx", "batch", "gpus",
                             "gpu=N of this catalog GPU on a generic board, one x16 root port each\n"
                             "(with --rig: in the rig's GPU slots; not with --root or --input)",
                             "rig=a rig file or a name from data/rigs/ (gpurig compare --list)", NULL};
  const char *const rest[] = {"nodes", "zero", "offload", "checkpointing", "lora-rank", "lora-targets",
                              "state-bytes", "rank0-load", "cpu", "price", "kwh", "rent", "power-limit", "estimator",
                              "nccl-version=the NCCL whose P2P defaults the all-reduce figures follow (2.21,\n"
                              "2.21.5; default: the newest in data/nccl-p2p.tsv)",
                              "json=the same as JSON (docs/json.md)", "list", NULL};
  const char *const diffusion[] = {
      "job=full (the UNet) or lora (rank --lora-rank, default 4, on the UNet's\n"
      "attention to_q, to_k, to_v, to_out as diffusers' SDXL LoRA script does)",
      "resolution", "batch=images per GPU (default 1)", "optimizer", "full-bf16", "cache-latents",
      "cache-text-embeddings", "dataset-images", "workers", NULL};
  gr_print_option_help(stdout, &plan_spec, llm, 19);
  printf("  --tp N, --pp N     tensor parallel and layer split (pipeline) degrees; inference defaults\n"
         "                     to a layer split over all GPUs, as llama.cpp and accelerate do\n"
         "  --tp auto          inference: plan each TP of 1, 2, 4, 8 dividing the GPUs and the model's\n"
         "                     heads (layer split over the rest) and keep the fastest decode that fits\n"
         "                     (none fits: the least memory per GPU); not with --pp\n");
  gr_print_option_help(stdout, &plan_spec, rest, 19);
  printf("\n"
         "Diffusion models (--model sdxl or sd15: UNet, CLIP text encoders and VAE counted from their\n"
         "configs; the UNet trains with DDP, every GPU holding the whole model; no speed is printed):\n");
  gr_print_option_help(stdout, &plan_spec, diffusion, 19);
}

static void plan_usage(void)
{
  char names[1024];
  gr_model_builtin_names(names, sizeof(names));
  printf("usage: gpurig plan (--model NAME|CONFIG.json | --params N) --job infer|lora|qlora|full\n"
         "                   [--quant Q] [--kv-quant Q] [--engine E] [--ctx TOKENS] [--batch N]\n"
         "                   [--gpus N] [--gpu MODEL | --rig RIG | --root DIR | --input FILE.xml]\n"
         "                   [--tp N|auto] [--pp N] [--nodes N] [--zero 0|1|2|3] [--offload optimizer|params]\n"
         "                   [--checkpointing] [--lora-rank R] [--lora-targets LIST] [--state-bytes 16|18]\n"
         "                   [--rank0-load] [--cpu CHANNELSxMT/s] [--price P] [--kwh P] [--rent P]\n"
         "                   [--power-limit W]\n"
         "                   [--estimator gpurig|deepspeed] [--nccl-version X.Y[.Z]] [--json]\n"
         "       gpurig plan --model sdxl|sd15 --job full|lora [--resolution PX] [--batch N]\n"
         "                   [--optimizer adamw|adam8bit] [--full-bf16] [--checkpointing] [--lora-rank R]\n"
         "                   [--cache-latents] [--cache-text-embeddings] [--dataset-images N] [--workers N]\n"
         "                   [--gpus N] [--gpu MODEL | --rig RIG | --root DIR | --input FILE.xml] [--rank0-load] [--json]\n"
         "\n"
         "Will this model and job fit, how fast will it run, and what will it cost: memory per GPU\n"
         "and for the host item by item (GiB), a verdict with the change that makes it fit, the\n"
         "largest batch and context that fit, decode/prefill tokens/s or training step time with\n"
         "their ranges, and price, power and rent. Method and sources: docs/plan.md.\n"
         "\n");
  plan_option_help(names);
  printf("\n"
         "With no GPU here and none named (no --gpu, --rig, --root or --input with GPUs), plan\n"
         "before buying: the memory per GPU for 1, 2, 4 and 8 GPUs, the model states (the 18\n"
         "bytes/parameter figure) and which catalog GPUs, and how many, hold the job.\n"
         "\n"
         "Exit status: 0 fits (or a plan before buying), 1 fits but tight, 2 bad input, 3 could not\n"
         "run, 4 does not fit (the verdict names the cheapest change that fits, if any).\n");
}

/* --estimator deepspeed: DeepSpeed's model-states printout for the request
 * (gr_plan_args_check made sure it is --job full --zero 2 or 3). */
static int run_deepspeed(const struct gr_planned *pl, bool json)
{
  const struct gr_plan_req *r = &pl->req;
  struct gr_param_count c;
  char buf[2048];
  gr_model_count(&pl->model, &c);
  gr_plan_deepspeed(r->zero, c.total, c.largest_module, r->gpus, 1, buf, sizeof(buf));
  if (json)
    cli_print_json(gr_deepspeed_to_json(pl, buf));
  else
    fputs(buf, stdout);
  return 0;
}

/* Plan before buying: no GPU here and none named. */
static int run_shop(const struct plan_opts *o, const struct gr_plan_args *args)
{
  struct gr_err err = {0};
  struct gr_shop s;
  int rc = GR_EXIT_OK;
  if (gr_plan_shop(args, &s, &err) != 0)
    rc = gr_report_error(&err);
  else if (o->plan.estimator && strcmp(o->plan.estimator, "deepspeed") == 0) {
    long n = 1;
    if (o->plan.gpus)
      parse_long(o->plan.gpus, 10, &n); /* checked by gr_plan_args_check */
    s.base.req.gpus = (int)n;
    rc = run_deepspeed(&s.base, o->out.json);
  } else if (o->out.json)
    cli_print_json(gr_shop_to_json(&s));
  else
    gr_print_shop(stdout, &s);
  gr_shop_free(&s);
  return rc;
}

/* With --power-limit on a rig with psu lines: the rig's power budget with
 * every GPU at the limit (the one budget, analysis/power.c), after the
 * plan; in JSON its "power_budget". */
static int print_plan(const struct plan_opts *o, const struct gr_machine *m, const struct gr_planned *pl)
{
  struct gr_findings fs = {0};
  struct gr_power_budget b = {0};
  bool budget = m->has_power && pl->req.power_limit_w > 0;
  if (budget)
    gr_power_budget_at(&m->topo, pl->req.power_limit_w, &b);
  if (o->out.json) {
    json_t *j = gr_plan_to_json(pl);
    if (budget)
      json_object_set_new(j, "power_budget", gr_power_to_json(&b));
    cli_print_json(j);
  } else {
    gr_print_plan(stdout, pl);
    if (budget)
      gr_print_power(stdout, &b);
  }
  gr_power_free(&b);
  gr_plan_findings(pl, NULL, &fs);
  int rc = gr_findings_exit(&fs);
  gr_findings_free(&fs);
  /* "does not fit" is the answer to a valid question, not bad input */
  return pl->plan.fit == GR_FIT_NO ? GR_EXIT_NOFIT : rc;
}

static void list_one_model(void *out, const char *name)
{
  fprintf(out, "model %s\n", name);
}

/* --list: what --model and --gpu take, for people and for completion
 * (contrib/gpurig.bash, contrib/_gpurig). */
static int list_names(void)
{
  size_t n;
  const struct gr_gpu_model *gpus = gr_catalog_models(&n);
  gr_model_each_builtin(list_one_model, stdout);
  for (size_t i = 0; i < n; i++)
    printf("gpu %s\n", gpus[i].model);
  return GR_EXIT_OK;
}

int cmd_plan(int argc, char **argv)
{
  struct plan_opts o;
  struct gr_parsed p;
  struct gr_err err = {0};
  struct gr_machine m = {0};
  struct gr_plan_hw hw;
  struct gr_planned *pl = xcalloc(1, sizeof(*pl));
  bool cpu_only;
  int rc;
  if (gr_parse_options(argc, argv, &plan_spec, &o, sizeof(o), &p) != 0) {
    free(pl);
    return GR_EXIT_FAIL;
  }
  if (p.help) {
    plan_usage();
    free(pl);
    return GR_EXIT_OK;
  }
  if (o.list) {
    free(pl);
    return list_names();
  }
  struct gr_plan_args args = o.plan;
  args.gpu = o.src.gpu;
  struct gr_source src = cli_source_of(&o.src, false);
  src.nccl = o.nccl;
  src.gpu_paths = true; /* a plan needs the GPUs and the paths between them, not every device */
  /* checks every argument before anything is loaded; m is closed below on every path */
  if (gr_plan_machine_open(&args, &src, &m, &cpu_only, &hw, &err) != 0) {
    rc = gr_report_error(&err);
    goto out;
  }
  gr_print_warnings(stderr, &m.topo);
  if (!cpu_only && hw.ngpus == 0 && !args.gpu && !(args.gpus && strcmp(args.gpus, "0") == 0)) {
    rc = run_shop(&o, &args);
    goto out;
  }
  if (gr_plan_job(&args, &hw, NULL, pl, &err) != 0) {
    rc = gr_report_error(&err);
    goto out;
  }
  if (o.plan.estimator && strcmp(o.plan.estimator, "deepspeed") == 0)
    rc = run_deepspeed(pl, o.out.json);
  else
    rc = print_plan(&o, &m, pl);
out:
  gr_planned_free(pl);
  free(pl);
  gr_machine_close(&m);
  return rc;
}
