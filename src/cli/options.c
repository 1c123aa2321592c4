#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/suggest.h"
#include "cli/cli.h"
#include "print/text.h"
#include "gpu/gpu.h"
#include "print/common.h"

/* An empty value is almost always an unset shell variable (`--root $DIR`):
 * for --root and --kmsg it would quietly mean "this machine", for the other
 * files a confusing open error. One line saying what an empty value means. */
static int refuse_empty(const char *cmd, int c)
{
  static const struct {
    int c;
    const char *line;
  } paths[] = {
      {'r', "option '--root' needs a directory (an empty value would mean this machine; omit --root for that)"},
      {'i', "option '--input' needs a file (hwloc XML or an NCCL topology file), not an empty value"},
      {'g', "option '--rig' needs a rig file or a name from data/rigs/, not an empty value"},
      {'k', "option '--kmsg' needs a kernel log file (an empty value would mean /dev/kmsg; omit --kmsg for that)"},
      {'e', "option '--expect' needs a manifest file, not an empty value"},
      {293, "option '--svg' needs a file to write, not an empty value"},
      {303, "option '--dot' needs a file to write, not an empty value"},
      {297, "option '--log' needs a file to write, not an empty value"},
      {299, "option '--html' needs a file to write (- for standard output), not an empty value"},
      {300, "option '--markdown' needs a file to write (- for standard output), not an empty value"},
      {301, "option '--bench' needs a file of gpurig bench --json output, not an empty value"},
      {302, "option '--burn' needs a file of gpurig burn --json output, not an empty value"},
      {256, "option '--model' needs a model name or a config.json, not an empty value"},
  };
  for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
    if (paths[i].c == c) {
      fprintf(stderr, "gpurig: %s: %s\n", cmd, paths[i].line);
      return -1;
    }
  return 0; /* other values are checked, empty or not, by their own parsers */
}

/* topo and report take --gpu only to fill the slots of a --rig: with a
 * gathered tree, an XML file or this machine it would be ignored. */
static int check_gpu_has_rig(const char *cmd, unsigned accepted, const struct gr_opts *o)
{
  if (!o->gpu || o->rig || (accepted & GR_OPT_GPU))
    return 0;
  fprintf(stderr, "gpurig: %s: --gpu MODEL fills the GPU slots of a --rig; without one there is nothing to apply it "
                  "to (give --rig RIG, or drop --gpu)\n", cmd);
  return -1;
}

/* --nccl-version X.Y[.Z]: a release data/nccl-p2p.tsv covers (its oldest
 * era on); a newer one than it was checked against takes the newest rule. */
static int parse_nccl_version(const char *cmd, const char *text, struct gr_nccl_version *v)
{
  struct gr_nccl_version oldest = gr_nccl_oldest();
  char buf[32];
  if (!gr_nccl_version_parse(text, v)) {
    fprintf(stderr, "gpurig: %s: --nccl-version %s: expected a version like 2.21 or 2.21.5\n", cmd, text);
    return -1;
  }
  if (!gr_nccl_p2p_rule(v, "*", 2)) {
    fprintf(stderr, "gpurig: %s: --nccl-version %s: gpurig knows NCCL's P2P defaults from %s on (data/nccl-p2p.tsv)\n",
            cmd, text, gr_nccl_version_text(&oldest, buf, sizeof(buf)));
    return -1;
  }
  return 0;
}

/* Which commands take an option (its getopt value): the sets of enum
 * gr_opt_set whose commands accept it. 0 for --help (every command). */
static unsigned option_set(int c)
{
  static const struct {
    int c;
    unsigned set;
  } sets[] = {
      {'r', GR_OPT_SOURCE},
      {'i', GR_OPT_SOURCE},
      {'g', GR_OPT_RIG},
      {'G', GR_OPT_GPU | GR_OPT_GPU_RIG},
      {'l', GR_OPT_LIST},
      {'j', GR_OPT_JSON},
      {'v', GR_OPT_VERBOSE},
      {299, GR_OPT_REPORT},
      {300, GR_OPT_REPORT},
      {301, GR_OPT_REPORT},
      {302, GR_OPT_REPORT},
      {'a', GR_OPT_ALL},
      {'p', GR_OPT_PCIE_ONLY},
      {'E', GR_OPT_DOCTOR},
      {'e', GR_OPT_DOCTOR},
      {'k', GR_OPT_DOCTOR | GR_OPT_MONITOR},
      {'w', GR_OPT_DOCTOR},
      {'L', GR_OPT_DOCTOR},
      {'n', GR_OPT_DOCTOR},
      {'Q', GR_OPT_BENCH | GR_OPT_BURN},
      {'S', GR_OPT_BENCH | GR_OPT_BURN},
      {'A', GR_OPT_BENCH},
      {'P', GR_OPT_BENCH},
      {'M', GR_OPT_BENCH},
      {304, GR_OPT_BENCH},
      {305, GR_OPT_BENCH},
      {320, GR_OPT_BENCH},
      {321, GR_OPT_BENCH},
      {256, GR_OPT_PLAN},
      {310, GR_OPT_PLAN},
      {257, GR_OPT_PLAN},
      {258, GR_OPT_PLAN},
      {259, GR_OPT_PLAN},
      {260, GR_OPT_PLAN},
      {261, GR_OPT_PLAN},
      {262, GR_OPT_PLAN},
      {263, GR_OPT_PLAN | GR_OPT_BURN},
      {264, GR_OPT_PLAN},
      {265, GR_OPT_PLAN},
      {266, GR_OPT_PLAN},
      {267, GR_OPT_PLAN},
      {268, GR_OPT_PLAN},
      {269, GR_OPT_PLAN},
      {270, GR_OPT_PLAN},
      {271, GR_OPT_PLAN},
      {272, GR_OPT_PLAN},
      {273, GR_OPT_PLAN},
      {274, GR_OPT_PLAN},
      {275, GR_OPT_PLAN},
      {276, GR_OPT_PLAN},
      {277, GR_OPT_PLAN},
      {279, GR_OPT_PLAN},
      {280, GR_OPT_MONITOR},
      {281, GR_OPT_MONITOR},
      {282, GR_OPT_MONITOR | GR_OPT_BURN},
      {283, GR_OPT_MONITOR},
      {284, GR_OPT_MONITOR},
      {286, GR_OPT_PLAN},
      {287, GR_OPT_PLAN},
      {288, GR_OPT_PLAN},
      {289, GR_OPT_PLAN},
      {290, GR_OPT_PLAN},
      {291, GR_OPT_PLAN},
      {292, GR_OPT_PLAN},
      {293, GR_OPT_MONITOR | GR_OPT_BURN | GR_OPT_DIAGRAM},
      {303, GR_OPT_DIAGRAM},
      {294, GR_OPT_BURN},
      {295, GR_OPT_BURN},
      {296, GR_OPT_BURN},
      {297, GR_OPT_BURN},
      {298, GR_OPT_BURN},
      {278, GR_OPT_NCCL},
  };
  for (size_t i = 0; i < sizeof(sets) / sizeof(sets[0]); i++)
    if (sets[i].c == c)
      return sets[i].set;
  return 0;
}

/* An option getopt refused: a known one without its value, or an unknown
 * one, with the closest option this command takes ("--jsno": "--json"). */
static int bad_option(const char *cmd, const char *given, unsigned accepted, const struct option *longopts)
{
  size_t len = strcspn(given, "=");
  struct gr_suggest s;
  gr_suggest_init(&s, given + (str_starts_with(given, "--") ? 2 : 0));
  for (const struct option *l = longopts; l->name; l++) {
    if (str_starts_with(given, "--") && strlen(l->name) == len - 2 && strncmp(given + 2, l->name, len - 2) == 0) {
      fprintf(stderr, "gpurig: %s: option '--%s' needs a value (see gpurig %s --help)\n", cmd, l->name, cmd);
      return -1;
    }
    unsigned set = option_set(l->val);
    if (!set || (accepted & set))
      gr_suggest_offer(&s, l->name);
  }
  if (gr_suggest_best(&s))
    fprintf(stderr, "gpurig: %s: unknown option '%s'; did you mean '--%s'?\n", cmd, given, gr_suggest_best(&s));
  else
    fprintf(stderr, "gpurig: %s: unknown option '%s' (see gpurig %s --help)\n", cmd, given, cmd);
  return -1;
}

int gr_parse_opts(int argc, char **argv, unsigned accepted, struct gr_opts *o)
{
  static const struct option longopts[] = {
      {"root", required_argument, NULL, 'r'},  {"input", required_argument, NULL, 'i'},
      {"json", no_argument, NULL, 'j'},        {"all", no_argument, NULL, 'a'},
      {"pcie-only", no_argument, NULL, 'p'},   {"help", no_argument, NULL, 'h'},
      {"rig", required_argument, NULL, 'g'},   {"gpu", required_argument, NULL, 'G'},
      {"list", no_argument, NULL, 'l'},
      {"expect-gpus", required_argument, NULL, 'E'}, {"expect", required_argument, NULL, 'e'},
      {"kmsg", required_argument, NULL, 'k'},  {"xid-window", required_argument, NULL, 'w'},
      {"loaded", no_argument, NULL, 'L'},      {"nhc", no_argument, NULL, 'n'},
      {"quick", no_argument, NULL, 'Q'},       {"size", required_argument, NULL, 'S'},
      {"allreduce-max", required_argument, NULL, 'A'}, {"no-progress", no_argument, NULL, 'P'},
      {"no-sm", no_argument, NULL, 'M'},
      {"model", required_argument, NULL, 256},  {"params", required_argument, NULL, 257},
      {"job", required_argument, NULL, 258},    {"quant", required_argument, NULL, 259},
      {"kv-quant", required_argument, NULL, 260}, {"ctx", required_argument, NULL, 261},
      {"batch", required_argument, NULL, 262},  {"gpus", required_argument, NULL, 263},
      {"zero", required_argument, NULL, 264},   {"offload", required_argument, NULL, 265},
      {"tp", required_argument, NULL, 266},     {"pp", required_argument, NULL, 267},
      {"estimator", required_argument, NULL, 268}, {"lora-rank", required_argument, NULL, 269},
      {"lora-targets", required_argument, NULL, 270}, {"state-bytes", required_argument, NULL, 271},
      {"price", required_argument, NULL, 272},  {"kwh", required_argument, NULL, 273},
      {"rent", required_argument, NULL, 274},   {"cpu", required_argument, NULL, 275},
      {"checkpointing", no_argument, NULL, 276}, {"rank0-load", no_argument, NULL, 277},
      {"nccl-version", required_argument, NULL, 278}, {"engine", required_argument, NULL, 279},
      {"once", no_argument, NULL, 280},         {"count", required_argument, NULL, 281},
      {"interval", required_argument, NULL, 282}, {"listen", required_argument, NULL, 283},
      {"textfile", required_argument, NULL, 284},
      {"optimizer", required_argument, NULL, 286}, {"resolution", required_argument, NULL, 287},
      {"dataset-images", required_argument, NULL, 288}, {"workers", required_argument, NULL, 289},
      {"cache-latents", no_argument, NULL, 290}, {"cache-text-embeddings", no_argument, NULL, 291},
      {"full-bf16", no_argument, NULL, 292},    {"svg", required_argument, NULL, 293},
      {"load", required_argument, NULL, 294},   {"pattern", required_argument, NULL, 295},
      {"duration", required_argument, NULL, 296}, {"log", required_argument, NULL, 297},
      {"force", no_argument, NULL, 298},        {"verbose", no_argument, NULL, 'v'},
      {"html", required_argument, NULL, 299},   {"markdown", required_argument, NULL, 300},
      {"bench", required_argument, NULL, 301},  {"burn", required_argument, NULL, 302},
      {"dot", required_argument, NULL, 303},
      {"nodes", required_argument, NULL, 310},
      {"mpi", no_argument, NULL, 304},          {"per", required_argument, NULL, 305},
      {"like", required_argument, NULL, 320},
      {"allreduce-iters", required_argument, NULL, 321},
      {NULL, 0, NULL, 0},
  };
  memset(o, 0, sizeof(*o));
  optind = 0; /* 0, not 1: glibc then also resets its permutation state */
  opterr = 0;
  for (;;) {
    /* No leading '+': options may follow the positional arguments (`compare
     * wopr --json`), as with most GNU tools; `--` ends the options. */
    int li = -1;
    int c = getopt_long(argc, argv, "hjv", longopts, &li);
    if (c == -1)
      break;
    switch (c) {
    case 'r': o->root = optarg; break;
    case 'i': o->input = optarg; break;
    case 'g': o->rig = optarg; break;
    case 'G': o->gpu = optarg; break;
    case 'l': o->list = true; break;
    case 'j': o->json = true; break;
    case 'v': o->verbose = true; break;
    case 'a': o->all = true; break;
    case 'p': o->pcie_only = true; break;
    case 'E': o->expect_gpus = optarg; break;
    case 'e': o->expect = optarg; break;
    case 'k': o->kmsg = optarg; break;
    case 'w': o->xid_window = optarg; break;
    case 'L': o->loaded = true; break;
    case 'n': o->nhc = true; break;
    case 'Q': o->quick = true; break;
    case 'S': o->size = optarg; break;
    case 'A': o->allreduce_max = optarg; break;
    case 'P': o->no_progress = true; break;
    case 'M': o->no_sm = true; break;
    case 256: o->model = optarg; break;
    case 257: o->params = optarg; break;
    case 258: o->job = optarg; break;
    case 259: o->quant = optarg; break;
    case 260: o->kv_quant = optarg; break;
    case 261: o->ctx = optarg; break;
    case 262: o->batch = optarg; break;
    case 263: o->gpus = optarg; break;
    case 264: o->zero = optarg; break;
    case 265: o->offload = optarg; break;
    case 266: o->tp = optarg; break;
    case 267: o->pp = optarg; break;
    case 268: o->estimator = optarg; break;
    case 269: o->lora_rank = optarg; break;
    case 270: o->lora_targets = optarg; break;
    case 271: o->state_bytes = optarg; break;
    case 272: o->price = optarg; break;
    case 273: o->kwh = optarg; break;
    case 274: o->rent = optarg; break;
    case 275: o->cpu = optarg; break;
    case 276: o->checkpointing = true; break;
    case 277: o->rank0_load = true; break;
    case 279: o->engine = optarg; break;
    case 280: o->once = true; break;
    case 281: o->count = optarg; break;
    case 282: o->interval = optarg; break;
    case 283: o->listen = optarg; break;
    case 284: o->textfile = optarg; break;
    case 286: o->optimizer = optarg; break;
    case 287: o->resolution = optarg; break;
    case 288: o->dataset_images = optarg; break;
    case 289: o->workers = optarg; break;
    case 290: o->cache_latents = true; break;
    case 291: o->cache_text = true; break;
    case 292: o->full_bf16 = true; break;
    case 293: o->svg = optarg; break;
    case 294: o->load = optarg; break;
    case 295: o->pattern = optarg; break;
    case 296: o->duration = optarg; break;
    case 297: o->log = optarg; break;
    case 298: o->force = true; break;
    case 299: o->html = optarg; break;
    case 300: o->markdown = optarg; break;
    case 301: o->bench_json = optarg; break;
    case 304: o->mpi = true; break;
    case 305: o->per = optarg; break;
    case 320: o->like = optarg; break;
    case 321: o->allreduce_iters = optarg; break;
    case 302: o->burn_json = optarg; break;
    case 303: o->dot = optarg; break;
    case 310: o->nodes = optarg; break;
    case 278:
      if (parse_nccl_version(argv[0], optarg, &o->nccl) != 0)
        return -1;
      break;
    case 'h': o->help = true; return 0;
    default:
      return bad_option(argv[0], argv[optind - 1], accepted, longopts);
    }
    unsigned need = option_set(c);
    if (!(accepted & need)) { /* named as given: argv[optind - 1] may be the option's value */
      fprintf(stderr, "gpurig: %s: option '%s%s' does not apply here (see gpurig %s --help)\n", argv[0],
              li >= 0 ? "--" : "", li >= 0 ? longopts[li].name : argv[optind - 1], argv[0]);
      return -1;
    }
    if (optarg && !*optarg && refuse_empty(argv[0], c) != 0)
      return -1;
  }
  if (accepted & GR_OPT_MANY) {
    o->args = argv + optind;
    o->nargs = argc - optind;
  } else if (optind < argc) {
    if (!(accepted & GR_OPT_POSITIONAL) || optind + 1 < argc) {
      fprintf(stderr, "gpurig: %s: unexpected argument '%s'\n", argv[0], argv[optind + ((accepted & GR_OPT_POSITIONAL) ? 1 : 0)]);
      return -1;
    }
    o->positional = argv[optind];
  }
  if (!!o->root + !!o->input + !!o->rig > 1) {
    fprintf(stderr, "gpurig: %s: --root, --input and --rig select different inputs; give one\n", argv[0]);
    return -1;
  }
  return check_gpu_has_rig(argv[0], accepted, o);
}

struct gr_source cli_source(const struct gr_opts *o)
{
  struct gr_source s = gr_source_from(o->root, o->input, o->rig, o->gpu, o->pcie_only);
  /* this machine and a gathered tree get the driver's NVLink (a tree only
   * when it is this machine's: gpu/gpu.h) */
  if (gr_source_reads_machine(&s))
    s.nvlink_reader = gr_gpus_read_nvlink;
  return s;
}

struct gr_plan_args cli_plan_args(const struct gr_opts *o)
{
  return (struct gr_plan_args){
      .model = o->model, .params = o->params, .job = o->job, .quant = o->quant, .kv_quant = o->kv_quant,
      .ctx = o->ctx, .batch = o->batch, .gpus = o->gpus, .zero = o->zero, .offload = o->offload, .tp = o->tp,
      .pp = o->pp, .nodes = o->nodes, .lora_rank = o->lora_rank, .lora_targets = o->lora_targets, .state_bytes = o->state_bytes,
      .price = o->price, .kwh = o->kwh, .rent = o->rent, .cpu = o->cpu, .estimator = o->estimator, .engine = o->engine, .gpu = o->gpu,
      .checkpointing = o->checkpointing, .rank0_load = o->rank0_load, .optimizer = o->optimizer,
      .resolution = o->resolution, .dataset_images = o->dataset_images, .workers = o->workers,
      .cache_latents = o->cache_latents, .cache_text = o->cache_text, .full_bf16 = o->full_bf16};
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
  fprintf(stderr, "gpurig: warning: the PCI topology of this machine could not be read (%s); GPUs are shown "
                  "without it\n", err->msg);
  err->msg[0] = '\0';
  err->code = 0;
  return 0;
}

int gr_report_error(const struct gr_err *err)
{
  fprintf(stderr, "gpurig: %s\n", err->msg);
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
