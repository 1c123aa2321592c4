/* gpurig bench: measures host<->GPU, GPU<->GPU, latency and all-reduce, and
 * holds each figure against the link's limit and the topology's prediction. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpu/bench.h"
#include "facts/catalog.h"
#include "cli/cli.h"
#include "gpu/gpu.h"
#include "print/print.h"

static void bench_usage(void)
{
  printf("usage: gpurig bench [--quick] [--json] [--size SIZE] [--allreduce-max SIZE] [--no-sm]\n"
         "                    [--no-progress] [--root DIR | --input FILE.xml]\n"
         "\n"
         "Measures what the wiring promises, with nvbandwidth's method: pinned host memory on\n"
         "each GPU's NUMA node, a spin kernel that holds each stream until its copies are queued,\n"
         "CUDA events, a warm-up run, the median and spread of several runs, and the data checked\n"
         "after every run. Tests: host -> GPU, GPU -> host, both at once, within each GPU; every\n"
         "GPU pair one way and both ways, by direct P2P where the driver allows it and through host\n"
         "memory where not (labelled, never skipped); copy-engine and SM-kernel copies; 16-byte\n"
         "copy latency; and an NCCL all-reduce over all GPUs from 4 KiB to 1 GiB with algbw, busbw\n"
         "and the plateau. Each figure is printed beside its link's theoretical limit, NCCL's\n"
         "figure for that link and the topology's prediction; a figure under its floor (a fraction\n"
         "of the link's rate, data/health.tsv) is a finding naming the GPU and the link.\n"
         "\n"
         "  --quick              a run under 10 s: 32 MiB copies, 3 runs, copy engine only\n"
         "  --size SIZE          copy size (default 256 MiB, 32 MiB with --quick; K, M, G = 2^10..2^30)\n"
         "  --allreduce-max SIZE largest all-reduce (default 1 GiB; capped by free GPU memory)\n"
         "  --no-sm              skip the SM copy kernel tests\n"
         "  --no-progress        no progress bar on stderr (it shows on a terminal after 1 s)\n"
         "  --json               print the results as JSON (docs/json.md)\n"
         "  --root DIR           take the topology from a gathered tree instead of this machine\n"
         "  --input FILE.xml     take the topology from an hwloc XML file\n"
         "\n"
         "Needs libcuda.so.1 (and libnccl.so.2 for the all-reduce), loaded at run time;\n"
         "GPURIG_DRIVER_DIR=DIR loads them from DIR. Never changes a GPU setting; needs no root.\n"
         "Exit status: 0 ok, 1 a figure under its floor, 2 a data check failed, a copy failed or\n"
         "a GPU stopped answering (or bad input), 3 no GPU driver found.\n");
}

static int bench_config(const struct gr_opts *o, struct gr_bench_config *cfg)
{
  gr_bench_config_defaults(cfg, o->quick);
  if (o->size && !gr_parse_size(o->size, &cfg->bytes)) {
    fprintf(stderr, "gpurig bench: --size '%s': expected a size such as 64M or 1G\n", o->size);
    return -1;
  }
  if (o->allreduce_max && !gr_parse_size(o->allreduce_max, &cfg->ar_max_bytes)) {
    fprintf(stderr, "gpurig bench: --allreduce-max '%s': expected a size such as 256M or 1G\n", o->allreduce_max);
    return -1;
  }
  if (o->no_sm)
    cfg->sm = false;
  cfg->progress = !o->no_progress && isatty(2);
  return 0;
}

/* Link and memory facts per benchmark GPU from NVML, used where the
 * topology lacks the GPU. NVML and CUDA may number GPUs differently
 * (CUDA_DEVICE_ORDER), so the two are joined by PCI bus id. */
struct gpu_facts {
  int *gen, *width, *cur_width;
  double *mem_bw;
};

static int cuda_index_of(void *st, int n, const char *busid)
{
  for (int d = 0; d < n; d++) {
    char raw[64] = "", norm[32];
    if (gr_bench_cuda.device_busid(st, d, raw, sizeof(raw)) == 0 && gr_busid_normalize(raw, norm, sizeof(norm)) &&
        strcmp(norm, busid) == 0)
      return d;
  }
  return -1;
}

static void gpu_facts_fill(void *st, int n, struct gr_bench_links *l, struct gpu_facts *f)
{
  struct gr_gpus g;
  struct gr_err err = {0};
  f->gen = xcalloc((size_t)n, sizeof(int));
  f->width = xcalloc((size_t)n, sizeof(int));
  f->cur_width = xcalloc((size_t)n, sizeof(int));
  f->mem_bw = xcalloc((size_t)n, sizeof(double));
  l->gpu_gen = f->gen;
  l->gpu_width = f->width;
  l->gpu_cur_width = f->cur_width;
  l->mem_bw_gbps = f->mem_bw;
  if (gr_gpus_open(&g, &err) != 0)
    return; /* the limits then come from the topology alone */
  for (unsigned i = 0; i < g.count; i++) {
    struct gr_gpu_static gs;
    struct gr_gpu_dynamic dy;
    if (g.be->static_info(g.state, i, &gs) != 0)
      continue;
    int d = cuda_index_of(st, n, gs.busid);
    if (d < 0)
      continue;
    f->gen[d] = gs.max_link_gen.ok ? (int)gs.max_link_gen.v : 0;
    f->width[d] = gs.max_link_width.ok ? (int)gs.max_link_width.v : 0;
    if (g.be->dynamic_info(g.state, i, &dy) == 0 && dy.link_width.ok)
      f->cur_width[d] = (int)dy.link_width.v;
    const struct gr_gpu_model *m = gr_catalog_find_pci(gs.vendor, gs.device);
    f->mem_bw[d] = m ? m->mem_bw_gbps : 0;
  }
  gr_gpus_close(&g);
}

static int bench_report(const struct gr_opts *o, const struct gr_bench_report *rep)
{
  if (o->json) {
    json_t *j = gr_bench_to_json(rep);
    gr_print_json_stdout(j);
    json_decref(j);
  } else {
    gr_print_bench(stdout, rep);
  }
  return gr_bench_exit(rep);
}

int cmd_bench(int argc, char **argv)
{
  struct gr_opts o;
  struct gr_topo t;
  struct gr_analysis a;
  struct gr_prediction p;
  struct gr_bench_config cfg;
  struct gr_bench_report rep;
  struct gr_bench_links links = {0};
  struct gpu_facts facts = {0};
  struct gr_err err = {0};
  bool have_topo = false;
  void *st = NULL;
  char why[768];
  int rc;
  if (gr_parse_opts(argc, argv, GR_OPT_SOURCE | GR_OPT_JSON | GR_OPT_BENCH, &o) != 0)
    return GR_EXIT_FAIL;
  if (o.help) {
    bench_usage();
    return GR_EXIT_OK;
  }
  if (bench_config(&o, &cfg) != 0)
    return GR_EXIT_FAIL;
  if (gr_load_for_gpus(&o, &t, &a, &p, &have_topo, &err) != 0)
    return gr_report_error(&err);
  if (gr_bench_cuda.init(&st, why, sizeof(why)) != 0) {
    gr_fail(&err, GR_EXIT_CANNOT_RUN, "nothing to measure: %s", why);
    rc = gr_report_error(&err);
    goto out;
  }
  if (have_topo) {
    links.t = &t;
    links.a = &a;
    links.p = &p;
  }
  gpu_facts_fill(st, gr_bench_cuda.device_count(st), &links, &facts);
  if (gr_bench_run(&gr_bench_cuda, st, &cfg, &links, &rep, &err) != 0) {
    rc = gr_report_error(&err);
    goto out;
  }
  rc = bench_report(&o, &rep);
  gr_bench_report_free(&rep);
out:
  if (st)
    gr_bench_cuda.shutdown(st);
  free(facts.gen);
  free(facts.width);
  free(facts.cur_width);
  free(facts.mem_bw);
  if (have_topo) {
    gr_prediction_free(&p);
    gr_analysis_free(&a);
    gr_topo_free(&t);
  }
  return rc;
}
