#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/suggest.h"
#include "cli/cli.h"
#include "cli/options.h"
#include "print/text.h"
#include "gpu/gpu.h"
#include "print/common.h"

/* --nccl-version X.Y[.Z]: a release data/nccl-p2p.tsv covers (its oldest
 * era on); a newer one than it was checked against takes the newest rule. */
static int parse_nccl_version(const char *cmd, const char *text, struct gr_nccl_version *v)
{
  struct gr_nccl_version oldest = gr_nccl_oldest();
  char buf[32];
  if (!gr_nccl_version_parse(text, v)) {
    gr_diag("gpurig: %s: --nccl-version %s: expected a version like 2.21 or 2.21.5\n", cmd, text);
    return -1;
  }
  if (!gr_nccl_p2p_rule(v, "*", 2)) {
    gr_diag("gpurig: %s: --nccl-version %s: gpurig knows NCCL's P2P defaults from %s on (data/nccl-p2p.tsv)\n",
            cmd, text, gr_nccl_version_text(&oldest, buf, sizeof(buf)));
    return -1;
  }
  return 0;
}

/* --nccl-version's text, for any command (see gr_parse_options). */
static int check_nccl_text(const char *cmd, const char *text)
{
  struct gr_nccl_version v;
  return parse_nccl_version(cmd, text, &v);
}

/* Every option's spelling, and whether it takes a value: the parser matches
 * argv against all of them, so that an option of another command "does not
 * apply here" (not "unknown"), abbreviations resolve as they always have
 * (`--pat`, and `--no` is ambiguous), and "did you mean" offers this
 * command's options in this order (of two equally close, the first wins).
 * A new spelling goes here as well as in its row; gr_parse_options stops
 * on a row whose spelling is missing, so every test of the command shows it. */
static const struct spelling {
  const char *name;
  bool value;
} spellings[] = {
    {"root", true}, {"input", true}, {"json", false}, {"all", false}, {"pcie-only", false}, {"help", false},
    {"rig", true}, {"gpu", true}, {"list", false}, {"expect-gpus", true}, {"expect", true}, {"kmsg", true},
    {"xid-window", true}, {"loaded", false}, {"nhc", false}, {"quick", false}, {"size", true},
    {"allreduce-max", true}, {"no-progress", false}, {"no-sm", false}, {"model", true}, {"params", true},
    {"job", true}, {"quant", true}, {"kv-quant", true}, {"ctx", true}, {"batch", true}, {"gpus", true},
    {"zero", true}, {"offload", true}, {"tp", true}, {"pp", true}, {"estimator", true}, {"lora-rank", true},
    {"lora-targets", true}, {"state-bytes", true}, {"price", true}, {"kwh", true}, {"rent", true}, {"power-limit", true}, {"cpu", true},
    {"checkpointing", false}, {"rank0-load", false}, {"nccl-version", true}, {"engine", true}, {"once", false},
    {"count", true}, {"interval", true}, {"listen", true}, {"textfile", true}, {"optimizer", true},
    {"resolution", true}, {"dataset-images", true}, {"workers", true}, {"cache-latents", false},
    {"cache-text-embeddings", false}, {"full-bf16", false}, {"svg", true}, {"load", true}, {"pattern", true},
    {"duration", true}, {"log", true}, {"force", false}, {"verbose", false}, {"html", true}, {"markdown", true},
    {"bench", true}, {"burn", true}, {"dot", true}, {"nodes", true}, {"mpi", false}, {"per", true}, {"like", true},
    {"allreduce-iters", true}, {"timeout", true}, {"psu", true},
};
enum { NSPELLINGS = sizeof(spellings) / sizeof(spellings[0]), SPELLING_VAL = 256 };

/* getopt_long's table: one row per spelling, told apart by val (getopt
 * calls two prefix matches ambiguous only when their vals differ). */
static const struct option *getopt_table(void)
{
  static struct option t[NSPELLINGS + 1];
  if (!t[0].name)
    for (int i = 0; i < NSPELLINGS; i++)
      t[i] = (struct option){spellings[i].name, spellings[i].value ? required_argument : no_argument, NULL,
                             SPELLING_VAL + i};
  return t;
}

/* ---- the option tables (cli/options.h) ---- */

/* The row for a long name, or (name NULL) a short letter, and its group. */
static const struct gr_option *find_row(const struct gr_command_options *spec, const char *name, int letter,
                                        const struct gr_option_group **group)
{
  for (size_t g = 0; g < spec->n; g++)
    for (size_t i = 0; i < spec->groups[g].n; i++) {
      const struct gr_option *r = &spec->groups[g].rows[i];
      if (name ? strcmp(r->name, name) == 0 : r->short_name == letter) {
        *group = &spec->groups[g];
        return r;
      }
    }
  return NULL;
}

/* An option getopt refused: a known one without its value, or an unknown
 * one, with the closest option this command takes ("--jsno": "--json"). */
static int bad_option(const char *cmd, const char *given, const struct gr_command_options *spec)
{
  size_t len = strcspn(given, "=");
  struct gr_suggest s;
  const struct gr_option_group *g;
  gr_suggest_init(&s, given + (str_starts_with(given, "--") ? 2 : 0));
  for (int i = 0; i < NSPELLINGS; i++) {
    const char *name = spellings[i].name;
    if (str_starts_with(given, "--") && strlen(name) == len - 2 && strncmp(given + 2, name, len - 2) == 0) {
      gr_diag("gpurig: %s: option '--%s' needs a value (see gpurig %s --help)\n", cmd, name, cmd);
      return -1;
    }
    if (strcmp(name, "help") == 0 || find_row(spec, name, 0, &g))
      gr_suggest_offer(&s, name);
  }
  if (gr_suggest_best(&s))
    gr_diag("gpurig: %s: unknown option '%s'; did you mean '--%s'?\n", cmd, given, gr_suggest_best(&s));
  else
    gr_diag("gpurig: %s: unknown option '%s' (see gpurig %s --help)\n", cmd, given, cmd);
  return -1;
}

/* An option of another command, named as given: argv[optind - 1] may be
 * the option's value. */
static int not_here(const char *cmd, const char *long_name, const char *given)
{
  gr_diag("gpurig: %s: option '%s%s' does not apply here (see gpurig %s --help)\n", cmd, long_name ? "--" : "",
          long_name ? long_name : given, cmd);
  return -1;
}

/* A row whose spelling is missing from spellings[] (or takes a value there
 * and not here) would never match, and an empty row (a shared array sized
 * larger than its rows) has no name: bugs in the tables, stopped at once. */
static void check_spellings(const char *cmd, const struct gr_command_options *spec)
{
  for (size_t g = 0; g < spec->n; g++)
    for (size_t i = 0; i < spec->groups[g].n; i++) {
      const struct gr_option *r = &spec->groups[g].rows[i];
      int k = 0;
      while (r->name && k < NSPELLINGS && strcmp(spellings[k].name, r->name) != 0)
        k++;
      if (!r->name || k == NSPELLINGS || spellings[k].value != (r->kind != GR_OPTION_FLAG)) {
        gr_diag("gpurig: %s: bug: option '--%s' is not in cli/options.c's spellings as its row is\n", cmd,
                r->name ? r->name : "(an empty row)");
        abort();
      }
    }
}

/* Stores one option's value in the command's struct; 0, or -1 after the line. */
static int store(const char *cmd, const struct gr_option *r, const struct gr_option_group *g, char *opts,
                 const char *value)
{
  void *field = opts + g->base + r->offset;
  switch (r->kind) {
  case GR_OPTION_FLAG: *(bool *)field = true; return 0;
  case GR_OPTION_STRING: *(const char **)field = value; break;
  case GR_OPTION_CALLBACK: return r->parse(cmd, value, field);
  }
  if (value && !*value && r->empty) {
    gr_diag("gpurig: %s: %s\n", cmd, r->empty);
    return -1;
  }
  return 0;
}

/* The arguments after the options, as spec takes them; 0 or -1. */
static int take_positional(int argc, char **argv, int first, const struct gr_command_options *spec,
                           struct gr_parsed *p)
{
  bool one = spec->positional == GR_POSITIONAL_ONE;
  if (spec->positional == GR_POSITIONAL_MANY) {
    p->args = argv + first;
    p->nargs = argc - first;
  } else if (first < argc) {
    if (!one || first + 1 < argc) {
      gr_diag("gpurig: %s: unexpected argument '%s'\n", argv[0], argv[first + (one ? 1 : 0)]);
      return -1;
    }
    p->positional = argv[first];
  }
  return 0;
}

int gr_parse_options(int argc, char **argv, const struct gr_command_options *spec, void *opts, size_t size,
                     struct gr_parsed *p)
{
  memset(opts, 0, size);
  memset(p, 0, sizeof(*p));
  optind = 0; /* 0, not 1: glibc then also resets its permutation state */
  opterr = 0;
  check_spellings(argv[0], spec);
  for (;;) {
    int li = -1; /* no leading '+': options may follow the positional arguments */
    int c = getopt_long(argc, argv, "hjv", getopt_table(), &li);
    if (c == -1)
      break;
    if (c == '?')
      return bad_option(argv[0], argv[optind - 1], spec);
    const char *name = c >= SPELLING_VAL ? spellings[c - SPELLING_VAL].name : NULL; /* NULL: -h, -j, -v */
    if (c == 'h' || (name && strcmp(name, "help") == 0)) {
      p->help = true;
      return 0;
    }
    if (name && strcmp(name, "nccl-version") == 0 && check_nccl_text(argv[0], optarg) != 0)
      return -1; /* checked before "does not apply here", as gpurig always has (`burn --nccl-version 2.x`) */
    const struct gr_option_group *g = NULL;
    const struct gr_option *r = find_row(spec, name, c, &g);
    if (!r)
      return not_here(argv[0], name, argv[optind - 1]);
    if (store(argv[0], r, g, opts, optarg) != 0)
      return -1;
  }
  if (take_positional(argc, argv, optind, spec, p) != 0)
    return -1;
  for (size_t i = 0; i < spec->n; i++)
    if (spec->groups[i].check && spec->groups[i].check(argv[0], (char *)opts + spec->groups[i].base) != 0)
      return -1;
  return 0;
}

/* "  -v, --verbose  text", continuation lines under the text. */
static void print_option_line(FILE *out, const struct gr_option *r, const char *text, int width)
{
  char left[64];
  bool letter = r->short_name && !(r->flags & GR_OPTION_SHORT_UNLISTED);
  int n = letter ? snprintf(left, sizeof(left), "-%c, ", r->short_name) : 0;
  snprintf(left + n, sizeof(left) - (size_t)n, "--%s%s%s", r->name, r->arg ? " " : "", r->arg ? r->arg : "");
  /* a name longer than the column keeps two spaces before its text */
  fprintf(out, "  %-*s%s", width, left, strlen(left) >= (size_t)width ? "  " : "");
  for (const char *line = text; *line;) {
    size_t len = strcspn(line, "\n");
    fprintf(out, "%.*s\n", (int)len, line);
    line += len;
    if (*line == '\n' && *++line)
      fprintf(out, "%*s", width + 2, "");
  }
}

void gr_print_option_help(FILE *out, const struct gr_command_options *spec, const char *const *names, int width)
{
  for (; *names; names++) {
    const char *eq = strchr(*names, '=');
    char name[32];
    snprintf(name, sizeof(name), "%.*s", eq ? (int)(eq - *names) : (int)strlen(*names), *names);
    const struct gr_option_group *g;
    const struct gr_option *r = find_row(spec, name, 0, &g);
    if (r) /* a name without a row is a bug the help tests show: the line is missing */
      print_option_line(out, r, eq ? eq + 1 : r->help, width);
  }
}

/* ---- the shared groups ---- */

static int parse_nccl_row(const char *cmd, const char *value, void *field)
{
  return parse_nccl_version(cmd, value, field);
}


const struct gr_option gr_rows_source[2] = {
    GR_OPT_STRING_ROW("root", "DIR", struct gr_source_opts, root,
                      "option '--root' needs a directory (an empty value would mean this machine; omit --root for that)",
                      "replay a gathered tree (hwloc-gather-topology) instead of this machine"),
    GR_OPT_STRING_ROW("input", "FILE.xml", struct gr_source_opts, input,
                      "option '--input' needs a file (hwloc XML, an NCCL topology file, or a saved nvidia-smi, "
                      "rocm-smi or amd-smi matrix), not an empty value",
                      "read an hwloc XML file (lstopo, gpurig snapshot), an NCCL topology file\n"
                      "(NCCL_TOPO_FILE, NCCL_TOPO_DUMP_FILE), or a saved `nvidia-smi topo -m`,\n"
                      "`rocm-smi --showtopo` or `amd-smi topology`; - reads standard input"),
};
const struct gr_option gr_rows_rig[1] = {
    GR_OPT_STRING_ROW("rig", "RIG", struct gr_source_opts, rig,
                      "option '--rig' needs a rig file or a name from data/rigs/, not an empty value",
                      "a machine described in a rig file (docs/rig-format.md)"),
};
const struct gr_option gr_rows_gpu[1] = {
    GR_OPT_STRING_ROW("gpu", "MODEL", struct gr_source_opts, gpu, NULL,
                      "with --rig: put this catalog GPU in every GPU slot"),
};
const struct gr_option gr_rows_json[1] = {
    {.name = "json", .short_name = 'j', .kind = GR_OPTION_FLAG, .offset = offsetof(struct gr_output_opts, json),
     .help = "print the same content as JSON (docs/json.md)", .flags = GR_OPTION_SHORT_UNLISTED},
};
const struct gr_option gr_rows_verbose[1] = {
    GR_OPT_FLAG_ROW("verbose", 'v', struct gr_output_opts, verbose, "every finding whole"),
};
const struct gr_option gr_rows_nccl[1] = {
    {.name = "nccl-version", .arg = "V", .kind = GR_OPTION_CALLBACK, .parse = parse_nccl_row,
     .help = "the NCCL whose P2P defaults the predictions and advice follow"},
};

#define MON_STRING(name, arg, field, empty, help) GR_OPT_STRING_ROW(name, arg, struct gr_monitor_opts, field, empty, help)
const struct gr_option gr_rows_monitor[8] = {
    GR_OPT_FLAG_ROW("once", 0, struct gr_monitor_opts, once, "one sample, then exit"),
    MON_STRING("count", "N", count, NULL, "N samples, then exit"),
    MON_STRING("interval", "S", interval, NULL, "seconds between samples, 0.1 to 3600; default 1"),
    MON_STRING("kmsg", "FILE", kmsg,
               "option '--kmsg' needs a kernel log file (an empty value would mean /dev/kmsg; omit --kmsg for that)",
               "follow this kernel log for Xids (instead of the driver's events) by name, as\n"
               "tail -F does: read again from its start after a copytruncate rotation, the\n"
               "new file after a rename rotation"),
    MON_STRING("listen", "ADDR:PORT", listen, NULL,
               "where to serve (default 127.0.0.1:9400, dcgm-exporter's port; \":9400\" is\n"
               "127.0.0.1 too, \"[::1]:9400\" IPv6); it binds all interfaces only when\n"
               "asked (0.0.0.0:9400); \"none\" serves nothing (with --textfile)"),
    MON_STRING("textfile", "DIR", textfile, NULL,
               "also write DIR/gpurig.prom after each sample (temporary file, rename)"),
    MON_STRING("svg", "FILE", svg, "option '--svg' needs a file to write, not an empty value",
               "at the end, draw the samples held as an SVG chart: per GPU temperature, power\n"
               "and SM clock over time, every event marked and listed"),
    MON_STRING("psu", "WATTS", psu, NULL,
               "the power supply's watts: the GPUs' summed draw is also shown as a share of\n"
               "it (power_budget_ratio, gpurig_power_budget_ratio)"),
};

/* The plan's options, into the planner's own arguments (plan/request.h):
 * plan reads them, and compare with --job. */
#define PLAN_STRING(name, arg, field, help) GR_OPT_STRING_ROW(name, arg, struct gr_plan_args, field, NULL, help)
#define PLAN_FLAG(name, field, help) GR_OPT_FLAG_ROW(name, 0, struct gr_plan_args, field, help)
const struct gr_option gr_rows_plan[32] = {
    GR_OPT_STRING_ROW("model", "NAME|PATH", struct gr_plan_args, model,
                      "option '--model' needs a model name or a config.json, not an empty value",
                      "a built-in model or a Hugging Face config.json"),
    PLAN_STRING("params", "N", params, "only a parameter count: 7B, 34B, 175B, 7e9 (model states and weights only)"),
    PLAN_STRING("job", "J", job, "infer, lora, qlora (4-bit base + LoRA), full (mixed-precision AdamW)"),
    PLAN_STRING("quant", "Q", quant,
                "weights: fp16, bf16, fp8, int8, nf4, nf4-dq, gptq[-gN], awq[-gN], llama.cpp\n"
                "files q4_0 q4_1 q5_0 q5_1 q8_0 q4_k_s q4_k_m q5_k_s q5_k_m q6_k, or ggml:TYPE\n"
                "(default: the checkpoint's own quantization_config, else bf16; qlora:\n"
                "nf4-dq; a checkpoint format gpurig does not plan needs --quant)"),
    PLAN_STRING("kv-quant", "Q", kv_quant, "KV cache elements: fp16 (default); q8_0, q4_0 (llama.cpp); fp8 (vLLM)"),
    PLAN_STRING("engine", "E", engine,
                "llama.cpp, vllm or transformers (data/engines.tsv): what loads the\n"
                "weights; it decides the KV layout, buffers, formats and speed (default:\n"
                "llama.cpp for GGUF and CPU inference, transformers for training and\n"
                "bitsandbytes, vllm otherwise); E@YYYY-MM plans a build of that month\n"
                "(its speed profile, data/engine-speed.tsv); default the current one"),
    PLAN_STRING("ctx", "TOKENS", ctx, "context per sequence (default: the model's, at most 4096; training 2048)"),
    PLAN_STRING("batch", "N", batch, "sequences per GPU (training: micro-batch per data-parallel rank; default 1)"),
    PLAN_STRING("gpus", "N", gpus,
                "GPUs to use (default: all of the machine; --gpu alone: 1; 0 = CPU only:\n"
                "the CPU of --rig, --root or --input, else --cpu)"),
    PLAN_STRING("tp", "N", tp, "tensor parallel degree, or auto"),
    PLAN_STRING("pp", "N", pp, "layer split (pipeline) degree"),
    PLAN_STRING("nodes", "N", nodes,
                "inference on N machines like the one given (its rig's NICs; the cluster\n"
                "rigs t181-g20-cluster-100g/-40g name the NIC): pipeline stages over the\n"
                "nodes, --tp at most a node's GPUs; the activations crossing the NICs\n"
                "per step, and host RAM per node (docs/cluster.md)"),
    PLAN_STRING("zero", "S", zero, "ZeRO stage (FSDP FULL_SHARD = 3, SHARD_GRAD_OP = 2)"),
    PLAN_STRING("offload", "WHAT", offload, "ZeRO-Offload of the optimizer states, or of the parameters too (ZeRO-3)"),
    PLAN_FLAG("checkpointing", checkpointing, "gradient checkpointing"),
    PLAN_STRING("lora-rank", "R", lora_rank, "LoRA rank (default 8)"),
    PLAN_STRING("lora-targets", "L", lora_targets,
                "q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj or all-linear\n"
                "(default q_proj,v_proj as PEFT does for Llama)"),
    PLAN_STRING("state-bytes", "B", state_bytes,
                "full fine-tune model states per parameter: 18 (DeepSpeed, HF; default)\n"
                "or 16 (the ZeRO paper)"),
    PLAN_FLAG("rank0-load", rank0_load, "only rank 0 reads the checkpoint (FSDP sync_module_states)"),
    PLAN_STRING("cpu", "CHxMTS", cpu, "host memory for CPU inference, e.g. 8x3200 (8 channels of DDR4-3200)"),
    PLAN_STRING("price", "P", price, "the machine's price (default: the rig file's)"),
    PLAN_STRING("kwh", "P", kwh, "electricity per kWh (default 0.15)"),
    PLAN_STRING("rent", "P", rent, "cloud price per GPU-hour to compare with (a year of renting)"),
    PLAN_STRING("power-limit", "W", power_limit,
                "plan each GPU under this power limit: the clock it sustains, the\n"
                "speed it costs, the watts saved and the nvidia-smi line (never set)"),
    PLAN_STRING("estimator", "E", estimator,
                "gpurig (default) or deepspeed: DeepSpeed's estimate_zero2/zero3\n"
                "model-states printout, digit for digit (--job full, --zero 2 or 3)"),
    PLAN_STRING("resolution", "PX", resolution,
                "image side in pixels (default: the model's, 1024 for SDXL, 512 for SD 1.5)"),
    PLAN_STRING("optimizer", "O", optimizer, "adamw (default) or adam8bit (bitsandbytes 8-bit AdamW)"),
    PLAN_FLAG("full-bf16", full_bf16, "weights, gradients and Adam states in bf16 (no fp32 master weights)"),
    PLAN_FLAG("cache-latents", cache_latents, "latents cached in host RAM: the VAE leaves the GPU"),
    PLAN_FLAG("cache-text-embeddings", cache_text, "text-encoder outputs cached in host RAM: the encoders leave the GPU"),
    PLAN_STRING("dataset-images", "N", dataset_images, "images whose cached latents and embeddings live in host RAM"),
    PLAN_STRING("workers", "N", workers, "data-loader worker processes per GPU (host RAM)"),
};

int gr_check_source(const char *cmd, const void *group)
{
  const struct gr_source_opts *s = group;
  if (!!s->root + !!s->input + !!s->rig > 1) {
    gr_diag("gpurig: %s: --root, --input and --rig select different inputs; give one\n", cmd);
    return -1;
  }
  return 0;
}

int gr_check_gpu_has_rig(const char *cmd, const void *group)
{
  const struct gr_source_opts *s = group;
  if (!s->gpu || s->rig)
    return 0;
  gr_diag("gpurig: %s: --gpu MODEL fills the GPU slots of a --rig; without one there is nothing to apply it "
          "to (give --rig RIG, or drop --gpu)\n", cmd);
  return -1;
}

struct gr_source cli_source_of(const struct gr_source_opts *o, bool pcie_only)
{
  struct gr_source s = gr_source_from(o->root, o->input, o->rig, o->gpu, pcie_only);
  /* this machine and a gathered tree get the driver's NVLink (a tree only
   * when it is this machine's: gpu/gpu.h) */
  if (gr_source_reads_machine(&s))
    s.gpulink_reader = gr_gpus_read_gpulinks;
  return s;
}

int cli_open(const struct gr_source *src, unsigned flags, struct gr_machine *m, struct gr_err *err)
{
  if (gr_machine_open(src, flags, m, err) != 0)
    return -1;
  gr_print_warnings(stderr, &m->topo);
  return 0;
}

int cli_open_for_gpus(const struct gr_source *src, struct gr_machine *m, bool *have, struct gr_err *err)
{
  *have = false;
  if (cli_open(src, GR_MACHINE_PREDICT, m, err) == 0) {
    *have = true;
    return 0;
  }
  if (src->kind != GR_SRC_LIVE)
    return -1;
  gr_diag("gpurig: warning: the PCI topology of this machine could not be read (%s); GPUs are shown "
          "without it\n", err->msg);
  err->msg[0] = '\0';
  err->code = 0;
  return 0;
}

int gr_report_error(const struct gr_err *err)
{
  gr_diag("gpurig: %s\n", err->msg);
  return err->code ? err->code : GR_EXIT_FAIL;
}

FILE *cli_text_begin(bool verbose, struct gr_text_style *st)
{
  *st = gr_text_style_stdout(verbose);
  FILE *wrapped = gr_text_open(stdout, st);
  return wrapped ? wrapped : stdout;
}

void cli_text_end(FILE *out)
{
  if (out != stdout)
    gr_text_close(out); /* a write error of stdout shows at exit */
}

void cli_print_json(json_t *j)
{
  gr_json_print(stdout, j);
  json_decref(j);
}
