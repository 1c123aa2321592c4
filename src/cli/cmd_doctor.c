#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "doctor/doctor.h"
#include "doctor/expect.h"
#include "print/text.h"
#include "print/doctor.h"

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
         "\n"
         "  --root DIR          check a gathered tree (hwloc-gather-topology) instead of this machine\n"
         "  --input FILE.xml    check what an hwloc XML or NCCL topology file records (the host\n"
         "                      checks are skipped)\n"
         "  --rig RIG           check a rig file's wiring (the host checks are skipped)\n"
         "  --expect-gpus N     fail unless N GPUs are on the bus\n"
         "  --expect FILE       check against a manifest: gpus N, model \"NAME\", link genG xW,\n"
         "                      driver MIN MAX (docs/doctor.md)\n"
         "  --kmsg FILE         read Xid errors from this kernel log (dmesg, journalctl -k or\n"
         "                      /dev/kmsg format) instead of /dev/kmsg\n"
         "  --xid-window HOURS  report Xids this recent (default from data/health.tsv; 0 = all)\n"
         "  --loaded            the GPUs are busy now: a link below its generation is a finding\n"
         "                      even at 2.5 GT/s (idle GPUs drop to it)\n"
         "  --json              print the report as JSON (docs/json.md)\n"
         "  -v, --verbose       every finding whole with its evidence, cost and source, and the checks\n"
         "                      skipped or passed (by default: one line per finding, those that say\n"
         "                      the same of several GPUs once, with the fix)\n"
         "  --nhc               print nothing on success, one `ERROR: gpurig: ID: message` line\n"
         "                      per failure (Slurm HealthCheckProgram, NHC)\n"
         "  --list              list the checks and exit\n"
         "\n"
         "Exit status: 0 ok, 1 warnings, 2 failures or bad input, 3 could not run (a check's\n"
         "input was unreadable, or the live machine could not be read). Skipped checks never\n"
         "change it.\n");
}

static int parse_doctor_opts(const struct gr_opts *o, struct gr_doctor_opts *d, struct gr_expect *e, struct gr_err *err)
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
  if (o->expect) {
    if (gr_expect_load(o->expect, e, err) != 0)
      return -1;
    d->expect = e;
  }
  return 0;
}

static void print_report(const struct gr_opts *o, const struct gr_topo *t, const struct gr_doctor_report *r)
{
  if (o->json)
    cli_print_json(gr_doctor_to_json(t, r));
  else if (o->nhc)
    gr_print_doctor_nhc(stdout, r);
  else {
    struct gr_text_style st;
    FILE *out = cli_text_begin(o->verbose, &st);
    gr_print_doctor(out, t, r, &st);
    cli_text_end(out);
  }
}

int cmd_doctor(int argc, char **argv)
{
  struct gr_opts o;
  struct gr_machine m;
  struct gr_doctor_opts d;
  struct gr_doctor_report r;
  struct gr_expect e = {0};
  struct gr_err err = {0};
  int rc;
  if (gr_parse_opts(argc, argv, GR_OPT_SOURCE | GR_OPT_RIG | GR_OPT_JSON | GR_OPT_DOCTOR | GR_OPT_LIST | GR_OPT_VERBOSE, &o) != 0)
    return GR_EXIT_FAIL;
  if (o.help || o.list) {
    o.help ? doctor_usage() : gr_print_doctor_checks(stdout);
    return GR_EXIT_OK;
  }
  if (o.json && o.nhc) {
    fprintf(stderr, "gpurig: doctor: --json and --nhc exclude each other\n");
    return GR_EXIT_FAIL;
  }
  if (parse_doctor_opts(&o, &d, &e, &err) != 0)
    return gr_report_error(&err);
  struct gr_source src = cli_source(&o);
  if (cli_open(&src, 0, &m, &err) != 0) {
    rc = gr_report_error(&err); /* bad input 2, gpurig could not read the machine 3 */
    goto out;
  }
  gr_doctor_run(&m, &d, &r);
  print_report(&o, &m.topo, &r);
  rc = gr_findings_exit(&r.findings);
  gr_doctor_report_free(&r);
out:
  gr_machine_close(&m);
  gr_expect_free(&e);
  return rc;
}
