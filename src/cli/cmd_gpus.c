/* gpurig gpus: what the driver reports per GPU, joined to the topology. */
#include <stdio.h>

#include "cli/cli.h"
#include "cli/options.h"
#include "gpu/gpu.h"
#include "print/gpus.h"

/* gpus reads the source (to place the GPUs) and writes text or JSON. */
struct gpus_opts {
  struct gr_source_opts src;
  struct gr_output_opts out;
};

static const struct gr_option_group gpus_groups[] = {
    GR_OPTION_GROUP(gr_rows_source, struct gpus_opts, src, gr_check_source),
    GR_OPTION_GROUP(gr_rows_json, struct gpus_opts, out, NULL),
};
static const struct gr_command_options gpus_spec = {gpus_groups, sizeof(gpus_groups) / sizeof(gpus_groups[0]),
                                                    GR_POSITIONAL_NONE};

static const char *const gpus_help[] = {
    "json",
    "root=join against a gathered tree instead of this machine's topology",
    "input=join against an hwloc XML or NCCL topology file",
    NULL,
};

static void gpus_usage(void)
{
  printf("usage: gpurig gpus [--json] [--root DIR | --input FILE.xml]\n"
         "\n"
         "Lists the GPUs as the driver sees them (NVIDIA: NVML, libnvidia-ml.so.1; AMD: ROCm SMI,\n"
         "librocm_smi64; loaded at run time; every vendor whose library sees GPUs, numbered in turn):\n"
         "name, UUID, PCI bus id and its place in the topology, memory and BAR1 in GiB, compute\n"
         "capability, driver and CUDA versions, current and maximum PCIe link, power draw, limit\n"
         "and default limit, persistence mode, temperature and its slowdown/shutdown thresholds\n"
         "(AMD: VBIOS, edge, junction and memory temperatures), ECC, NVLink (AMD: xGMI) links up\n"
         "and the peers they reach (as the topology has them, read from the\n"
         "driver: \"NV2 to GPU1, GPU2\", \"12 links to the NVSwitch fabric\"), utilisation, and the\n"
         "driver's P2P read and write status for every pair (OK, CNS, GNS, TNS, DR, NS, U as\n"
         "nvidia-smi topo -p2p). A value the GPU does not report is shown as n/a (null in JSON),\n"
         "never as 0.\n"
         "\n");
  gr_print_option_help(stdout, &gpus_spec, gpus_help, 18);
  printf("\n"
         "GPURIG_DRIVER_DIR=DIR loads the driver libraries from DIR (the tests use stand-ins).\n"
         "Exit status: 0 ok, 1 a PCIe link below what its GPU can train to (narrower, or slower while\n"
         "the GPU is busy: doctor's pcie.link-width and pcie.link-gen), 2 a GPU stopped answering or\n"
         "bad input, 3 no GPU driver found or the driver sees no GPU.\n");
}

/* A driver that sees no GPU leaves nothing to show: "could not run", as
 * bench says for the same state, in text and JSON alike. */
static int no_gpu(const struct gr_gpus_report *rep)
{
  gr_diag("gpurig: nothing to show: the %s sees no GPU (%s%s%s: 0 GPUs)\n", rep->driver_name,
          rep->driver[0] ? rep->driver : "", rep->driver[0] ? ", " : "", rep->library);
  return GR_EXIT_CANNOT_RUN;
}

static int print_gpus(const struct gpus_opts *o, const struct gr_topo *t, struct gr_gpus_report *rep)
{
  if (rep->count == 0)
    return no_gpu(rep);
  if (o->out.json)
    cli_print_json(gr_gpus_to_json(rep));
  else
    gr_print_gpus(stdout, t, rep);
  for (size_t i = 0; i < rep->findings.n; i++)
    gr_diag("gpurig: %s\n", rep->findings.v[i].text);
  return gr_findings_exit(&rep->findings);
}

int cmd_gpus(int argc, char **argv)
{
  struct gpus_opts o;
  struct gr_parsed p;
  struct gr_machine m = {0};
  struct gr_gpus g;
  struct gr_gpus_report rep;
  struct gr_err err = {0};
  bool have_topo = false;
  if (gr_parse_options(argc, argv, &gpus_spec, &o, sizeof(o), &p) != 0)
    return GR_EXIT_FAIL;
  if (p.help) {
    gpus_usage();
    return GR_EXIT_OK;
  }
  if (gr_gpus_open(&g, &err) != 0)
    return gr_report_error(&err);
  struct gr_source src = cli_source_of(&o.src, false);
  if (cli_open_for_gpus(&src, &m, &have_topo, &err) != 0) {
    gr_gpus_close(&g);
    return gr_report_error(&err);
  }
  gr_gpus_collect(&g, have_topo ? &m.topo : NULL, &rep);
  int rc = print_gpus(&o, have_topo ? &m.topo : NULL, &rep);
  gr_gpus_report_free(&rep);
  gr_gpus_close(&g);
  gr_machine_close(&m);
  return rc;
}
