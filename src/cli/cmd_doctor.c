#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "gpu/bench.h"
#include "gpu/gpu.h"
#include "cli/options.h"
#include "doctor/doctor.h"
#include "doctor/expect.h"
#include "print/text.h"
#include "print/doctor.h"

/* doctor: the source, the output (or --nhc), what to expect and where the
 * kernel log is. The values stay text: parse_doctor_opts checks them. */
struct doctor_opts {
  struct gr_source_opts src;
  struct gr_output_opts out;
  const char *expect_gpus, *expect, *kmsg, *xid_window, *psu;
  bool loaded, nhc, list;
};

static const struct gr_option doctor_rows[] = {
    GR_OPT_STRING_ROW("expect-gpus", "N", struct doctor_opts, expect_gpus, NULL,
                      "fail unless N GPUs are on the bus"),
    GR_OPT_STRING_ROW("expect", "FILE", struct doctor_opts, expect,
                      "option '--expect' needs a manifest file, not an empty value",
                      "check against a manifest: gpus N, model \"NAME\", link genG xW,\n"
                      "driver MIN MAX (docs/doctor.md)"),
    GR_OPT_STRING_ROW("kmsg", "FILE", struct doctor_opts, kmsg,
                      "option '--kmsg' needs a kernel log file (an empty value would mean /dev/kmsg; omit --kmsg for that)",
                      "read Xid errors from this kernel log (dmesg, journalctl -k or\n"
                      "/dev/kmsg format) instead of /dev/kmsg"),
    GR_OPT_STRING_ROW("xid-window", "HOURS", struct doctor_opts, xid_window, NULL,
                      "report Xids this recent (default from data/health.tsv; 0 = all)"),
    GR_OPT_STRING_ROW("psu", "WATTS", struct doctor_opts, psu, NULL,
                      "the power supply's watts: the GPUs' power limits must fit it (90% of\n"
                      "it, the CPUs at TDP counted; gpu.power-limit)"),
    GR_OPT_FLAG_ROW("loaded", 0, struct doctor_opts, loaded,
                    "the GPUs are busy now: a link below its generation is a finding\n"
                    "even at 2.5 GT/s (idle GPUs drop to it)"),
    GR_OPT_FLAG_ROW("nhc", 0, struct doctor_opts, nhc,
                    "print nothing on success, one `ERROR: gpurig: ID: message` line\n"
                    "per failure (Slurm HealthCheckProgram, NHC)"),
    GR_OPT_FLAG_ROW("list", 0, struct doctor_opts, list, "list the checks and exit"),
};

static const struct gr_option_group doctor_groups[] = {
    GR_OPTION_GROUP(gr_rows_source, struct doctor_opts, src, gr_check_source),
    GR_OPTION_GROUP(gr_rows_rig, struct doctor_opts, src, NULL),
    GR_OPTION_GROUP(gr_rows_json, struct doctor_opts, out, NULL),
    GR_OPTION_GROUP(gr_rows_verbose, struct doctor_opts, out, NULL),
    GR_OPTION_OWN(doctor_rows, NULL),
};
static const struct gr_command_options doctor_spec = {
    doctor_groups, sizeof(doctor_groups) / sizeof(doctor_groups[0]), GR_POSITIONAL_NONE};

/* --help's option lines, in this order, some in doctor's own words */
static const char *const doctor_help[] = {
    "root=check a gathered tree (hwloc-gather-topology) instead of this machine",
    "input=check what an hwloc XML or NCCL topology file records (the host\n"
    "checks are skipped)",
    "rig=check a rig file's wiring (the host checks are skipped)",
    "expect-gpus",
    "expect",
    "kmsg",
    "xid-window",
    "loaded",
    "psu",
    "json=print the report as JSON (docs/json.md)",
    "verbose=every finding whole with its evidence, cost and source, and the checks\n"
    "skipped or passed (by default: one line per finding, those that say\n"
    "the same of several GPUs once, with the fix)",
    "nhc",
    "list",
    NULL,
};

static void doctor_usage(void)
{
  printf("usage: gpurig doctor [--root DIR | --input FILE.xml | --rig RIG] [--expect-gpus N] [--expect FILE]\n"
         "                     [--kmsg FILE] [--xid-window HOURS] [--loaded] [--json | --nhc] [--list] [--verbose]\n"
         "\n"
         "Checks whether this machine is set up right for multi-GPU work: GPU count, PCIe link\n"
         "width and generation on every link from a GPU to its root complex, AER error counters,\n"
         "ACS and IOMMU (peer-to-peer redirection), BAR1, NVIDIA driver against known issues,\n"
         "NUMA locality, host memory and its channels, locked-memory limit, CPU governor, kernel\n"
         "settings, and Xid errors in the kernel log. Each finding names the evidence (file and\n"
         "value), the exact fix and its cost. gpurig only reads: it changes nothing.\n"
         "\n");
  gr_print_option_help(stdout, &doctor_spec, doctor_help, 20);
  printf("\n"
         "Exit status: 0 ok, 1 warnings, 2 failures or bad input, 3 could not run (a check's\n"
         "input was unreadable, or the live machine could not be read). Skipped checks never\n"
         "change it.\n");
}

static int parse_doctor_opts(const struct doctor_opts *o, struct gr_doctor_opts *d, struct gr_expect *e, struct gr_err *err)
{
  long n;
  char *end;
  memset(d, 0, sizeof(*d));
  d->expect_gpus = -1;
  d->xid_window_h = -1;
  d->kmsg_path = o->kmsg;
  d->loaded = o->loaded;
  if (o->expect_gpus && (!parse_long(o->expect_gpus, 10, &n) || n < 0 || n > 4096))
    return gr_fail(err, GR_EXIT_FAIL, "--expect-gpus %s: expected a count from 0 to 4096", o->expect_gpus);
  if (o->expect_gpus)
    d->expect_gpus = (int)n;
  if (o->xid_window) {
    d->xid_window_h = strtod(o->xid_window, &end);
    /* isfinite: strtod reads "nan", which fails both range tests */
    if (end == o->xid_window || *end || !isfinite(d->xid_window_h) || d->xid_window_h < 0 || d->xid_window_h > 1e6)
      return gr_fail(err, GR_EXIT_FAIL, "--xid-window %s: expected hours, a number from 0 to 1000000 (0 = the whole "
                     "log)", o->xid_window);
  }
  if (o->psu) {
    d->psu_w = strtod(o->psu, &end);
    if (end == o->psu || *end || !(d->psu_w >= 50 && d->psu_w <= 100000))
      return gr_fail(err, GR_EXIT_FAIL, "--psu %s: a power supply's watts, from 50 to 100000", o->psu);
  }
  if (o->expect) {
    if (gr_expect_load(o->expect, e, err) != 0)
      return -1;
    d->expect = e;
  }
  return 0;
}

static void print_report(const struct doctor_opts *o, const struct gr_machine *m, const struct gr_doctor_report *r)
{
  const struct gr_topo *t = &m->topo;
  if (o->out.json)
    cli_print_json(gr_doctor_to_json(m, r));
  else if (o->nhc)
    gr_print_doctor_nhc(stdout, r);
  else {
    struct gr_text_style st;
    FILE *out = cli_text_begin(o->out.verbose, &st);
    gr_print_doctor(out, t, r, &st);
    cli_text_end(out);
  }
}

void cli_doctor_xgmi(const struct gr_gpu_dynamic *d, bool fresh, struct gr_doctor_gpu_power *row)
{
  row->xgmi_corrected = fresh && d->gpulink_corrected.ok ? d->gpulink_corrected.v : -1;
  row->xgmi_uncorrected = fresh && d->gpulink_uncorrected.ok ? d->gpulink_uncorrected.v : -1;
  row->xgmi_state = fresh && d->gpulink_error_state.ok ? (int)d->gpulink_error_state.v : -1;
}

/* The GPUs' enforced and default power limits from the driver, for the
 * gpu.power-limit check (doctor reads no driver library itself): only of a
 * machine (live, or a gathered tree the stand-in driver answers for), never
 * of a description. The caller frees *rows; why (static or err's) says why
 * there are none. */
static void read_power_limits(const struct gr_source *src, struct gr_doctor_opts *d, struct gr_err *err)
{
  if (!gr_source_reads_machine(src)) {
    d->why_no_power = "this input describes a machine (a rig file or XML) that no driver can be asked";
    return;
  }
  struct gr_gpus g;
  if (gr_gpus_open(&g, err) != 0) {
    d->why_no_power = err->msg;
    return;
  }
  struct gr_gpus_report rep;
  gr_gpus_collect(&g, NULL, &rep);
  struct gr_doctor_gpu_power *rows = xcalloc(rep.count ? rep.count : 1, sizeof(*rows));
  for (unsigned i = 0; i < rep.count; i++) {
    const struct gr_gpu_row *r = &rep.rows[i];
    snprintf(rows[i].busid, sizeof(rows[i].busid), "%s", r->st.busid);
    snprintf(rows[i].name, sizeof(rows[i].name), "%s", r->st.name);
    rows[i].limit_w = r->dy.power_limit_w.ok && !r->lost ? r->dy.power_limit_w.v : -1;
    rows[i].default_w = r->st.power_default_w.ok ? r->st.power_default_w.v : -1;
    cli_doctor_xgmi(&r->dy, !r->lost, &rows[i]);
  }
  d->gpu_power = rows;
  d->ngpu_power = rep.count;
  if (!rep.count)
    d->why_no_power = "the driver lists no GPU";
  gr_gpus_report_free(&rep);
  gr_gpus_close(&g);
}

/* Whether the libraries gpurig can load are the machine's: this machine, or
 * a tree gathered on it (it names this host, as hwloc-gather-topology
 * records it). A tree from elsewhere has its own CUDA and NCCL (HIP and
 * RCCL), which no library here can tell: unknown, never this machine's
 * versions. */
static bool libraries_are_its(const struct gr_source *src, const struct gr_machine *m)
{
  char host[256] = "";
  if (src->kind == GR_SRC_LIVE)
    return true;
  return src->kind == GR_SRC_ROOT && m->topo.hostname && gethostname(host, sizeof(host) - 1) == 0 &&
         strcmp(host, m->topo.hostname) == 0;
}

void cli_doctor_driver_facts(const struct gr_source *src, const struct gr_machine *m, struct gr_doctor_opts *d,
                             struct gr_err *err)
{
  read_power_limits(src, d, err);
  if (!libraries_are_its(src, m))
    return;
  gr_bench_versions("nvidia", &d->cuda, &d->nccl);
  /* HIP's version calls start its runtime, which lists the GPUs: asked only
   * where there are AMD GPUs, and on a machine without them a HIP installed
   * for nothing is no fact worth comparing across a fleet (unknown) */
  if (gr_topo_amd_gpus(&m->topo))
    gr_bench_versions("amd", &d->hip, &d->rccl);
}

int cmd_doctor(int argc, char **argv)
{
  struct doctor_opts o;
  struct gr_parsed p;
  struct gr_machine m;
  struct gr_doctor_opts d;
  struct gr_doctor_report r;
  struct gr_expect e = {0};
  struct gr_err err = {0}, nvml_err = {0};
  int rc;
  if (gr_parse_options(argc, argv, &doctor_spec, &o, sizeof(o), &p) != 0)
    return GR_EXIT_FAIL;
  if (p.help || o.list) {
    p.help ? doctor_usage() : gr_print_doctor_checks(stdout);
    return GR_EXIT_OK;
  }
  if (o.out.json && o.nhc) {
    gr_diag("gpurig: doctor: --json and --nhc exclude each other\n");
    return GR_EXIT_FAIL;
  }
  if (parse_doctor_opts(&o, &d, &e, &err) != 0)
    return gr_report_error(&err);
  struct gr_source src = cli_source_of(&o.src, false);
  if (cli_open(&src, 0, &m, &err) != 0) {
    rc = gr_report_error(&err); /* bad input 2, gpurig could not read the machine 3 */
    goto out;
  }
  cli_doctor_driver_facts(&src, &m, &d, &nvml_err);
  gr_doctor_run(&m, &d, &r);
  free((void *)d.gpu_power);
  print_report(&o, &m, &r);
  rc = gr_findings_exit(&r.findings);
  gr_doctor_report_free(&r);
out:
  gr_machine_close(&m);
  gr_expect_free(&e);
  return rc;
}
