#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/file.h"
#include "cli/cli.h"
#include "cli/options.h"
#include "print/text.h"
#include "print/diagram/diagram.h"
#include "print/machine.h"
#include "print/topo.h"

/* topo's options: the source, the output, NCCL and the diagram files. */
struct topo_opts {
  struct gr_source_opts src;
  struct gr_output_opts out;
  struct gr_nccl_version nccl; /* major 0: not given */
  bool all, pcie_only;
  const char *svg, *dot;
};

static const struct gr_option topo_rows[] = {
    GR_OPT_FLAG_ROW("all", 0, struct topo_opts, all, "show every PCI device in the tree, not only GPU/NIC/NVMe paths"),
    GR_OPT_FLAG_ROW("pcie-only", 0, struct topo_opts, pcie_only, "ignore NVLink: show the PCIe levels under it"),
    GR_OPT_STRING_ROW("svg", "FILE", struct topo_opts, svg, "option '--svg' needs a file to write, not an empty value",
                      "also write the block diagram as SVG: sockets and their link, root complexes,\n"
                      "PCIe switches, GPUs, NICs, NVMe, NVLink and NVSwitch fabrics, each link's\n"
                      "generation, width and GB/s, bottlenecks in red, P2P hives shaded; - writes\n"
                      "it to standard output instead of the text"),
    GR_OPT_STRING_ROW("dot", "FILE", struct topo_opts, dot, "option '--dot' needs a file to write, not an empty value",
                      "the same diagram as Graphviz DOT (dot -Tpng FILE); - as with --svg"),
};

static const struct gr_option_group topo_groups[] = {
    GR_OPTION_GROUP(gr_rows_source, struct topo_opts, src, gr_check_source),
    GR_OPTION_GROUP(gr_rows_rig, struct topo_opts, src, NULL),
    GR_OPTION_GROUP(gr_rows_gpu, struct topo_opts, src, gr_check_gpu_has_rig),
    GR_OPTION_GROUP(gr_rows_json, struct topo_opts, out, NULL),
    GR_OPTION_GROUP(gr_rows_verbose, struct topo_opts, out, NULL),
    GR_OPTION_GROUP(gr_rows_nccl, struct topo_opts, nccl, NULL),
    GR_OPTION_OWN(topo_rows, NULL),
};
static const struct gr_command_options topo_spec = {topo_groups, sizeof(topo_groups) / sizeof(topo_groups[0]),
                                                    GR_POSITIONAL_NONE};

/* --help's option lines, in this order, some in topo's own words */
static const char *const topo_help[] = {
    "root",
    "input",
    "rig=a machine described in a rig file (docs/rig-format.md): a path, or a\n"
    "name from data/rigs/ (gpurig compare --list shows them); a cluster rig\n"
    "(nodes, fabric: docs/cluster.md) adds the NICs, GPUDirect RDMA and\n"
    "the all-reduce across nodes",
    "gpu",
    "json",
    "verbose=every finding and verdict whole (by default findings that say the same\n"
    "of several GPUs are one line, and long sentences are cut to their point)",
    "all",
    "pcie-only",
    "nccl-version=the NCCL whose P2P defaults NCCL's view, the predictions and the advice\n"
    "follow (2.21, 2.21.5; default: the newest in data/nccl-p2p.tsv, stated\n"
    "as assumed; PyTorch 2.6 bundles 2.21.5, 2.7 and later 2.23 or newer)",
    "svg",
    "dot",
    NULL,
};

static void topo_usage(void)
{
  printf("usage: gpurig topo [--root DIR | --input FILE.xml | --rig RIG [--gpu MODEL]] [--json] [--all] [--pcie-only]\n"
         "                   [--nccl-version X.Y[.Z]] [--svg FILE] [--dot FILE] [--verbose]\n"
         "\n"
         "Shows how GPUs, CPUs, PCIe switches, NICs and NVMe drives are wired: the PCIe tree\n"
         "with each link's generation, width and bandwidth, the GPU matrix with nvidia-smi's\n"
         "levels (X, NV#, PIX, PXB, PHB, NODE, SYS), NCCL's view of each pair, the bottleneck\n"
         "bandwidth per pair, the P2P hives, what the wiring predicts (copy rates, all-reduce\n"
         "bus bandwidth, verdicts per workload), and findings.\n"
         "\n");
  gr_print_option_help(stdout, &topo_spec, topo_help, 18);
  printf("\n"
         "Exit status: 0 ok, 1 a finding is a warning, 2 bad input, 3 could not run.\n");
}

/* Writes and frees a diagram; 0, or -1 after the error line. */
static int write_diagram(const char *path, char *text)
{
  struct gr_err err = {0};
  fflush(stdout);
  int rc = gr_file_write(path, text, strlen(text), &err);
  free(text);
  if (rc != 0)
    gr_report_error(&err);
  return rc;
}

int cmd_topo(int argc, char **argv)
{
  struct topo_opts o;
  struct gr_parsed p;
  struct gr_machine m;
  struct gr_err err = {0};
  if (gr_parse_options(argc, argv, &topo_spec, &o, sizeof(o), &p) != 0)
    return GR_EXIT_FAIL;
  if (p.help) {
    topo_usage();
    return GR_EXIT_OK;
  }
  bool svg_out = o.svg && gr_file_is_stdout(o.svg);
  bool dot_out = o.dot && gr_file_is_stdout(o.dot);
  if (svg_out && dot_out) {
    gr_diag("gpurig: topo: --svg and --dot cannot both go to standard output; name a file for one\n");
    return GR_EXIT_FAIL;
  }
  struct gr_source src = cli_source_of(&o.src, o.pcie_only);
  src.nccl = o.nccl;
  if (cli_open(&src, GR_MACHINE_PREDICT, &m, &err) != 0)
    return gr_report_error(&err);
  int rc = gr_findings_exit(&m.analysis.findings);
  if ((o.svg && write_diagram(o.svg, gr_diagram_svg(&m)) != 0) ||
      (o.dot && write_diagram(o.dot, gr_diagram_dot(&m)) != 0))
    rc = GR_EXIT_FAIL; /* the error said it; no report after it */
  else if (svg_out || dot_out)
    ; /* the diagram is this run's standard output */
  else if (o.out.json)
    gr_machine_json_print(stdout, &m);
  else {
    struct gr_text_style st;
    FILE *out = cli_text_begin(o.out.verbose, &st);
    gr_print_topo_text(out, &m, o.all ? GR_PRINT_ALL_DEVICES : 0, &st);
    cli_text_end(out);
  }
  gr_machine_close(&m);
  return rc;
}
