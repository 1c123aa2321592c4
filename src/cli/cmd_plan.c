/* `gpurig plan`: will this model and job fit on this machine, how fast, and
 * at what cost. A loader (rig, catalog GPU, live machine), the analysis and
 * prediction, the planner, and a printer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "facts/facts.h"
#include "plan/request.h"
#include "print/common.h"
#include "print/plan.h"

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
         "\n"
         "  --model NAME|PATH  a built-in model (%s)\n"
         "                     or a Hugging Face config.json\n"
         "  --params N         only a parameter count: 7B, 34B, 175B, 7e9 (model states and weights only)\n"
         "  --job J            infer, lora, qlora (4-bit base + LoRA), full (mixed-precision AdamW)\n"
         "  --quant Q          weights: fp16, bf16, fp8, int8, nf4, nf4-dq, gptq[-gN], awq[-gN], llama.cpp\n"
         "                     files q4_0 q4_1 q5_0 q5_1 q8_0 q4_k_s q4_k_m q5_k_s q5_k_m q6_k, or ggml:TYPE\n"
         "                     (default: the checkpoint's own quantization_config, else bf16; qlora:\n"
         "                     nf4-dq; a checkpoint format gpurig does not plan needs --quant)\n"
         "  --kv-quant Q       KV cache elements: fp16 (default); q8_0, q4_0 (llama.cpp); fp8 (vLLM)\n"
         "  --engine E         llama.cpp, vllm or transformers (data/engines.tsv): what loads the\n"
         "                     weights; it decides the KV layout, buffers, formats and speed (default:\n"
         "                     llama.cpp for GGUF and CPU inference, transformers for training and\n"
         "                     bitsandbytes, vllm otherwise); E@YYYY-MM plans a build of that month\n"
         "                     (its speed profile, data/engine-speed.tsv); default the current one\n"
         "  --ctx TOKENS       context per sequence (default: the model's, at most 4096; training 2048)\n"
         "  --batch N          sequences per GPU (training: micro-batch per data-parallel rank; default 1)\n"
         "  --gpus N           GPUs to use (default: all of the machine; --gpu alone: 1; 0 = CPU only:\n"
         "                     the CPU of --rig, --root or --input, else --cpu)\n"
         "  --gpu MODEL        N of this catalog GPU on a generic board, one x16 root port each\n"
         "                     (with --rig: in the rig's GPU slots; not with --root or --input)\n"
         "  --rig RIG          a rig file or a name from data/rigs/ (gpurig compare --list)\n"
         "  --tp N, --pp N     tensor parallel and layer split (pipeline) degrees; inference defaults\n"
         "                     to a layer split over all GPUs, as llama.cpp and accelerate do\n"
         "  --tp auto          inference: plan each TP of 1, 2, 4, 8 dividing the GPUs and the model's\n"
         "                     heads (layer split over the rest) and keep the fastest decode that fits\n"
         "                     (none fits: the least memory per GPU); not with --pp\n"
         "  --nodes N          inference on N machines like the one given (its rig's NICs; the cluster\n"
         "                     rigs t181-g20-cluster-100g/-40g name the NIC): pipeline stages over the\n"
         "                     nodes, --tp at most a node's GPUs; the activations crossing the NICs\n"
         "                     per step, and host RAM per node (docs/cluster.md)\n"
         "  --zero S           ZeRO stage (FSDP FULL_SHARD = 3, SHARD_GRAD_OP = 2)\n"
         "  --offload WHAT     ZeRO-Offload of the optimizer states, or of the parameters too (ZeRO-3)\n"
         "  --checkpointing    gradient checkpointing\n"
         "  --lora-rank R      LoRA rank (default 8)\n"
         "  --lora-targets L   q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj or all-linear\n"
         "                     (default q_proj,v_proj as PEFT does for Llama)\n"
         "  --state-bytes B    full fine-tune model states per parameter: 18 (DeepSpeed, HF; default)\n"
         "                     or 16 (the ZeRO paper)\n"
         "  --rank0-load       only rank 0 reads the checkpoint (FSDP sync_module_states)\n"
         "  --cpu CHxMTS       host memory for CPU inference, e.g. 8x3200 (8 channels of DDR4-3200)\n"
         "  --price P          the machine's price (default: the rig file's)\n"
         "  --kwh P            electricity per kWh (default 0.15)\n"
         "  --rent P           cloud price per GPU-hour to compare with (a year of renting)\n"
         "  --estimator E      gpurig (default) or deepspeed: DeepSpeed's estimate_zero2/zero3\n"
         "                     model-states printout, digit for digit (--job full, --zero 2 or 3)\n"
         "  --nccl-version V   the NCCL whose P2P defaults the all-reduce figures follow (2.21,\n"
         "                     2.21.5; default: the newest in data/nccl-p2p.tsv)\n"
         "  --json             the same as JSON (docs/json.md)\n"
         "  --list             the built-in models and the catalog's GPUs (data/gpus.tsv), one a line:\n"
         "                     \"model NAME\" or \"gpu NAME\" (a GPU's name may have spaces)\n"
         "\n"
         "Diffusion models (--model sdxl or sd15: UNet, CLIP text encoders and VAE counted from their\n"
         "configs; the UNet trains with DDP, every GPU holding the whole model; no speed is printed):\n"
         "  --job J            full (the UNet) or lora (rank --lora-rank, default 4, on the UNet's\n"
         "                     attention to_q, to_k, to_v, to_out as diffusers' SDXL LoRA script does)\n"
         "  --resolution PX    image side in pixels (default: the model's, 1024 for SDXL, 512 for SD 1.5)\n"
         "  --batch N          images per GPU (default 1)\n"
         "  --optimizer O      adamw (default) or adam8bit (bitsandbytes 8-bit AdamW)\n"
         "  --full-bf16        weights, gradients and Adam states in bf16 (no fp32 master weights)\n"
         "  --cache-latents    latents cached in host RAM: the VAE leaves the GPU\n"
         "  --cache-text-embeddings  text-encoder outputs cached in host RAM: the encoders leave the GPU\n"
         "  --dataset-images N images whose cached latents and embeddings live in host RAM\n"
         "  --workers N        data-loader worker processes per GPU (host RAM)\n"
         "\n"
         "With no GPU here and none named (no --gpu, --rig, --root or --input with GPUs), plan\n"
         "before buying: the memory per GPU for 1, 2, 4 and 8 GPUs, the model states (the 18\n"
         "bytes/parameter figure) and which catalog GPUs, and how many, hold the job.\n"
         "\n"
         "Exit status: 0 fits (or a plan before buying), 1 fits but tight, 2 bad input, 3 could not\n"
         "run, 4 does not fit (the verdict names the cheapest change that fits, if any).\n",
         names);
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
static int run_shop(const struct gr_opts *o, const struct gr_plan_args *args)
{
  struct gr_err err = {0};
  struct gr_shop s;
  int rc = GR_EXIT_OK;
  if (gr_plan_shop(args, &s, &err) != 0)
    rc = gr_report_error(&err);
  else if (o->estimator && strcmp(o->estimator, "deepspeed") == 0) {
    long n = 1;
    if (o->gpus)
      parse_long(o->gpus, 10, &n); /* checked by gr_plan_args_check */
    s.base.req.gpus = (int)n;
    rc = run_deepspeed(&s.base, o->json);
  } else if (o->json)
    cli_print_json(gr_shop_to_json(&s));
  else
    gr_print_shop(stdout, &s);
  gr_shop_free(&s);
  return rc;
}

static int print_plan(const struct gr_opts *o, const struct gr_planned *pl)
{
  struct gr_findings fs = {0};
  if (o->json)
    cli_print_json(gr_plan_to_json(pl));
  else
    gr_print_plan(stdout, pl);
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
  const struct gr_facts *f = gr_facts();
  gr_model_each_builtin(list_one_model, stdout);
  for (size_t i = 0; i < f->ngpus; i++)
    printf("gpu %s\n", f->gpus[i].model);
  return GR_EXIT_OK;
}

int cmd_plan(int argc, char **argv)
{
  struct gr_opts o;
  struct gr_err err = {0};
  struct gr_machine m = {0};
  struct gr_plan_hw hw;
  struct gr_planned *pl = xcalloc(1, sizeof(*pl));
  bool cpu_only;
  int rc;
  if (gr_parse_opts(argc, argv, GR_OPT_PLAN | GR_OPT_JSON | GR_OPT_RIG | GR_OPT_GPU | GR_OPT_SOURCE | GR_OPT_NCCL | GR_OPT_LIST,
                    &o) != 0) {
    free(pl);
    return GR_EXIT_FAIL;
  }
  if (o.help) {
    plan_usage();
    free(pl);
    return GR_EXIT_OK;
  }
  if (o.list) {
    free(pl);
    return list_names();
  }
  struct gr_plan_args args = cli_plan_args(&o);
  struct gr_source src = cli_source(&o);
  src.nccl = o.nccl;
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
  if (o.estimator && strcmp(o.estimator, "deepspeed") == 0)
    rc = run_deepspeed(pl, o.json);
  else
    rc = print_plan(&o, pl);
out:
  gr_planned_free(pl);
  free(pl);
  gr_machine_close(&m);
  return rc;
}
