/* gpurig doctor on the hand-written fixture trees (tests/data/trees/doctor-*,
 * written by make_tree.py): each tree has one fault and must yield exactly
 * the expected warnings, failures and errors, and the expected exit status. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

#include "facts/catalog.h"
#include "doctor/doctor.h"
#include "doctor/expect.h"
#include "load/loaders.h"

struct run {
  struct gr_machine m;
  struct gr_doctor_report r;
};

static int setup(void **state)
{
  return tu_setup_data(state);
}

static void run_tree(struct run *x, const char *tree, const struct gr_doctor_opts *o)
{
  char root[1024];
  struct gr_err err = {0};
  snprintf(root, sizeof(root), "%s/trees/%s", getenv("GPURIG_TEST_DATA"), tree);
  struct gr_source src = {.kind = GR_SRC_ROOT, .path = root};
  if (gr_machine_open(&src, 0, &x->m, &err) != 0)
    fail_msg("%s: %s", tree, err.msg);
  gr_doctor_run(&x->m, o, &x->r);
}

static void free_run(struct run *x)
{
  gr_doctor_report_free(&x->r);
  gr_machine_close(&x->m);
}

/* "id:sev id:sev ..." of every fail, warn and error, in report order. */
static void problems(const struct gr_doctor_report *r, char *buf, size_t cap)
{
  size_t off = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < r->findings.n && off < cap; i++) {
    enum gr_sev s = r->findings.v[i].sev;
    if (s == GR_SEV_FAIL || s == GR_SEV_WARN || s == GR_SEV_ERROR)
      off += (size_t)snprintf(buf + off, cap - off, "%s%s:%s", off ? " " : "", r->findings.v[i].id, gr_sev_name(s));
  }
}

static const struct gr_finding *find(const struct gr_doctor_report *r, const char *id, enum gr_sev sev)
{
  for (size_t i = 0; i < r->findings.n; i++)
    if (strcmp(r->findings.v[i].id, id) == 0 && r->findings.v[i].sev == sev)
      return &r->findings.v[i];
  return NULL;
}

static struct gr_doctor_opts defaults(void)
{
  return (struct gr_doctor_opts){.expect_gpus = -1, .xid_window_h = -1};
}

static void expect_tree(const char *tree, const struct gr_doctor_opts *o, const char *want, int exit_status)
{
  struct run x;
  char got[1024];
  run_tree(&x, tree, o);
  problems(&x.r, got, sizeof(got));
  if (strcmp(got, want) != 0)
    fail_msg("%s: got \"%s\", expected \"%s\"", tree, got, want);
  assert_int_equal(gr_findings_exit(&x.r.findings), exit_status);
  free_run(&x);
}

static void test_healthy(void **state)
{
  struct gr_doctor_opts o = defaults();
  struct run x;
  (void)state;
  expect_tree("doctor-healthy", &o, "", GR_EXIT_OK);
  /* idle GPUs: one note, not a finding; each GPU on a root port of its own:
   * no switch whose ACS could matter */
  run_tree(&x, "doctor-healthy", &o);
  const struct gr_finding *idle = find(&x.r, "pcie.link-gen", GR_SEV_INFO);
  assert_non_null(idle);
  assert_int_equal(idle->nev, 4);
  assert_non_null(find(&x.r, "pcie.acs", GR_SEV_OK));
  assert_non_null(find(&x.r, "iommu.mode", GR_SEV_OK));
  assert_non_null(find(&x.r, "mem.channels", GR_SEV_OK));
  free_run(&x);
  /* GPUs behind switches, gathered without root: ACS needs root and says so */
  run_tree(&x, "hgx-a100", &o);
  const struct gr_finding *acs = find(&x.r, "pcie.acs", GR_SEV_SKIPPED);
  assert_non_null(acs);
  assert_true(acs->needs_root);
  assert_non_null(strstr(x.r.root_would_add, "pcie.acs"));
  free_run(&x);
}

static void test_one_fault_each(void **state)
{
  struct gr_doctor_opts o = defaults();
  (void)state;
  expect_tree("doctor-riser-x8", &o, "pcie.link-width:warn", GR_EXIT_WARN);
  expect_tree("doctor-gen3-load", &o, "pcie.link-gen:warn", GR_EXIT_WARN);
  expect_tree("doctor-aer-rootport", &o, "pcie.aer:warn", GR_EXIT_WARN);
  expect_tree("doctor-iommu-translated", &o, "iommu.mode:warn", GR_EXIT_WARN);
  expect_tree("doctor-driver-545", &o, "driver.version:warn", GR_EXIT_WARN);
  expect_tree("doctor-numa-unknown", &o, "numa.locality:warn", GR_EXIT_WARN);
  /* a root gather: ACS read from extended config space, behind an AER capability */
  /* ACS on every port: judged on the switch's two downstream ports, not on
   * the root ports of one GPU each (issue 31, ux-3 L10) */
  expect_tree("doctor-acs-redirect", &o, "pcie.acs:warn pcie.acs:warn", GR_EXIT_WARN);
  expect_tree("doctor-acs-rootports", &o, "", GR_EXIT_OK);
  /* under load, 2.5 GT/s is no longer idle: every GPU link is a finding */
  o.loaded = true;
  expect_tree("doctor-healthy", &o, "pcie.link-gen:warn pcie.link-gen:warn pcie.link-gen:warn pcie.link-gen:warn",
              GR_EXIT_WARN);
}

static void test_fault_details(void **state)
{
  struct gr_doctor_opts o = defaults();
  struct run x;
  (void)state;
  run_tree(&x, "doctor-riser-x8", &o);
  const struct gr_finding *r = find(&x.r, "pcie.link-width", GR_SEV_WARN);
  assert_string_equal(r->pci_bus_id, "0000:02:00.0");
  assert_non_null(strstr(r->text, "x8 although both ends support x16"));
  assert_non_null(r->fix);
  assert_non_null(strstr(r->ev[0].file, "0000:02:00.0/current_link"));
  free_run(&x);
  /* AER: counted at the root port, both ends of the link named */
  run_tree(&x, "doctor-aer-rootport", &o);
  r = find(&x.r, "pcie.aer", GR_SEV_WARN);
  assert_string_equal(r->pci_bus_id, "0000:40:03.1");
  assert_non_null(strstr(r->text, "GPU3 0000:42:00.0"));
  assert_non_null(strstr(r->text, "above the 922")); /* ceil(0.96 x 16 x 60 min) */
  free_run(&x);
}

static void test_xid_log(void **state)
{
  struct gr_doctor_opts o = defaults();
  struct run x;
  char path[1024];
  (void)state;
  snprintf(path, sizeof(path), "%s/kmsg/xid-79-13.log", getenv("GPURIG_TEST_DATA"));
  o.kmsg_path = path;
  expect_tree("doctor-healthy", &o, "xid.errors:fail", GR_EXIT_FAIL);
  run_tree(&x, "doctor-healthy", &o);
  const struct gr_finding *f = find(&x.r, "xid.errors", GR_SEV_FAIL);
  assert_string_equal(f->pci_bus_id, "0000:41:00.0");
  assert_non_null(strstr(f->text, "Xid 79"));
  const struct gr_finding *i = find(&x.r, "xid.errors", GR_SEV_INFO);
  assert_non_null(strstr(i->text, "Xid 13"));
  assert_non_null(strstr(i->text, "3 times")); /* de-duplicated */
  free_run(&x);
  /* a 0.1 h window keeps the Xid 79 (86002 s) and drops the Xid 13s (85000 s) */
  o.xid_window_h = 0.1;
  run_tree(&x, "doctor-healthy", &o);
  assert_non_null(find(&x.r, "xid.errors", GR_SEV_FAIL));
  i = find(&x.r, "xid.errors", GR_SEV_INFO);
  assert_non_null(strstr(i->text, "3 older"));
  free_run(&x);
}

/* A temporary kernel log: the caller writes it, then unlinks and frees the path. */
static FILE *temp_log(char **path)
{
  *path = xstrdup("/tmp/gpurig-kmsg-XXXXXX");
  int fd = mkstemp(*path);
  assert_true(fd >= 0);
  FILE *f = fdopen(fd, "w");
  assert_non_null(f);
  return f;
}

static size_t count_results(const struct gr_doctor_report *r, const char *id, enum gr_sev sev, const char *text)
{
  size_t n = 0;
  for (size_t i = 0; i < r->findings.n; i++)
    n += strcmp(r->findings.v[i].id, id) == 0 && r->findings.v[i].sev == sev &&
         (!text || strstr(r->findings.v[i].text, text));
  return n;
}

/* 30 Xid groups: 3 fail (Xid 79, oldest), 27 info (Xid 13). 20 are listed,
 * the worst and most recent: the 3 fails and the 17 newest infos; the 10
 * oldest infos are one result. */
static void test_xid_bound(void **state)
{
  struct gr_doctor_opts o = defaults();
  struct run x;
  char *path;
  (void)state;
  FILE *f = temp_log(&path);
  for (int i = 0; i < 30; i++)
    fprintf(f, "[%d.0] NVRM: Xid (PCI:0000:%02x:00): %d, ev %d\n", 100 + i, 0x60 + i, i < 3 ? 79 : 13, i);
  assert_int_equal(fclose(f), 0);
  o.kmsg_path = path;
  run_tree(&x, "doctor-healthy", &o);
  assert_int_equal(count_results(&x.r, "xid.errors", GR_SEV_FAIL, "Xid 79"), 3);
  assert_int_equal(count_results(&x.r, "xid.errors", GR_SEV_INFO, "Xid 13"), 17);
  assert_int_equal(count_results(&x.r, "xid.errors", GR_SEV_INFO,
                                 "10 more Xid groups (0 fail, 0 warn, 10 info; 10 events) at 10 PCI addresses, 0 of them GPUs"),
                   1);
  for (size_t i = 0; i < x.r.findings.n; i++) {
    const char *subject = x.r.findings.v[i].subject;
    if (subject && (strcmp(subject, "PCI 0000:63:00") == 0 || strcmp(subject, "PCI 0000:6c:00") == 0))
      fail_msg("%s is one of the 10 oldest infos: summed up, not listed", subject);
  }
  assert_int_equal(gr_findings_exit(&x.r.findings), GR_EXIT_FAIL);
  free_run(&x);
  unlink(path);
  free(path);
}

/* A log over the 64 MiB cap is read from its end: the Xid 79 on its last
 * line is found, the Xid 13 on its first is not, and the results say how
 * much was left unread and where in the part read the line is. */
static void test_xid_tail(void **state)
{
  struct gr_doctor_opts o = defaults();
  struct run x;
  char *path;
  (void)state;
  FILE *f = temp_log(&path);
  fprintf(f, "[1.0] NVRM: Xid (PCI:0000:41:00): 13, the oldest\n");
  for (int i = 0; i < 750000; i++) /* 750,000 x 96 bytes: 68.7 MiB */
    fprintf(f, "[%7d.000000] usb 1-1: new high-speed USB device number 3 using xhci_hcd, filler filler fill\n", 2 + i);
  fprintf(f, "[800000.0] NVRM: Xid (PCI:0000:41:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.\n");
  assert_int_equal(fclose(f), 0);
  o.kmsg_path = path;
  o.xid_window_h = 0;
  run_tree(&x, "doctor-healthy", &o);
  const struct gr_finding *r = find(&x.r, "xid.errors", GR_SEV_FAIL);
  assert_non_null(r);
  assert_non_null(strstr(r->text, "Xid 79"));
  assert_null(find(&x.r, "xid.errors", GR_SEV_INFO));
  assert_int_equal(r->nev, 2);
  assert_non_null(strstr(r->ev[0].file, "of its newest 64 MiB)"));
  assert_string_equal(r->ev[1].file, path);
  assert_string_equal(r->ev[1].value, "the first 4.7 MiB were not read: the newest 64 MiB were (the most doctor reads)");
  free_run(&x);
  unlink(path);
  free(path);
}

/* A --kmsg path that cannot be read is an error naming it and the cause
 * (exit 3), never "needs root". */
static void test_kmsg_unreadable(void **state)
{
  struct gr_doctor_opts o = defaults();
  struct run x;
  char dir[] = "/tmp/gpurig-kmsg-dir-XXXXXX";
  (void)state;
  assert_non_null(mkdtemp(dir));
  o.kmsg_path = dir;
  run_tree(&x, "doctor-healthy", &o);
  const struct gr_finding *r = find(&x.r, "xid.errors", GR_SEV_ERROR);
  assert_non_null(r);
  assert_non_null(strstr(r->text, ": a directory, not a file (--kmsg); no Xid was checked."));
  assert_false(r->needs_root);
  assert_int_equal(gr_findings_exit(&x.r.findings), GR_EXIT_CANNOT_RUN);
  free_run(&x);
  rmdir(dir);
}

/* A check lists at most DR_MAX_RESULTS (50) results; the rest are one
 * result as bad as the worst of them. 60 GPUs that are not the manifest's
 * model: 1 count result, then 60 fails, of which 49 fit. */
static void test_results_bounded(void **state)
{
  struct gr_doctor_opts o = defaults();
  struct gr_machine m;
  struct gr_doctor_report r;
  struct gr_expect e;
  struct gr_err err = {0};
  const char *manifest = "model \"A100 80GB\"\n";
  struct gr_source src = {.kind = GR_SRC_GENERIC, .gpu_model = "RTX 3090", .gpus = 60};
  (void)state;
  assert_int_equal(gr_expect_parse("m.expect", manifest, strlen(manifest), &e, &err), 0);
  o.expect = &e;
  if (gr_machine_open(&src, 0, &m, &err) != 0)
    fail_msg("%s", err.msg);
  gr_doctor_run(&m, &o, &r);
  assert_int_equal(count_results(&r, "gpu.count", GR_SEV_FAIL, "not the A100 80GB"), 49);
  assert_int_equal(count_results(&r, "gpu.count", GR_SEV_FAIL,
                                 "11 more results of this check are not listed (11 fail): doctor lists at most 50 per check."),
                   1);
  assert_int_equal(gr_findings_exit(&r.findings), GR_EXIT_FAIL);
  gr_doctor_report_free(&r);
  gr_machine_close(&m);
  gr_expect_free(&e);
}

/* --expect through the shared reader: what the path is, in one line. */
static void test_expect_load_errors(void **state)
{
  struct gr_expect e;
  struct gr_err err = {0};
  char dir[] = "/tmp/gpurig-expect-dir-XXXXXX";
  (void)state;
  assert_non_null(mkdtemp(dir));
  assert_int_equal(gr_expect_load(dir, &e, &err), -1);
  assert_non_null(strstr(err.msg, ": a directory, not a file"));
  assert_int_equal(err.code, GR_EXIT_FAIL);
  gr_expect_free(&e);
  rmdir(dir);
  assert_int_equal(gr_expect_load("/nonexistent/x.expect", &e, &err), -1);
  assert_string_equal(err.msg, "/nonexistent/x.expect: cannot open: No such file or directory");
  gr_expect_free(&e);
}

static void test_expectations(void **state)
{
  struct gr_doctor_opts o = defaults();
  struct gr_expect e;
  struct gr_err err = {0};
  const char *manifest = "gpus 8\nmodel \"RTX 3090\"\nlink gen4 x16\ndriver 550.54 *\n";
  (void)state;
  assert_int_equal(gr_expect_parse("rack.expect", manifest, strlen(manifest), &e, &err), 0);
  o.expect = &e;
  expect_tree("doctor-riser-x8", &o, "gpu.count:fail gpu.link-uniform:fail pcie.link-width:warn driver.version:fail",
              GR_EXIT_FAIL);
  gr_expect_free(&e);
  o.expect = NULL;
  o.expect_gpus = 4;
  expect_tree("doctor-healthy", &o, "", GR_EXIT_OK);
}

static void test_malformed_inputs(void **state)
{
  struct gr_doctor_opts o = defaults();
  struct run x;
  (void)state;
  /* garbage AER counters, an unknown link speed, a truncated DMI table, binary kmsg lines */
  expect_tree("doctor-malformed", &o, "pcie.link-width:error pcie.aer:error mem.channels:error xid.errors:error",
              GR_EXIT_CANNOT_RUN);
  run_tree(&x, "doctor-malformed", &o);
  assert_non_null(strstr(find(&x.r, "pcie.aer", GR_SEV_ERROR)->text, "0000:01:00.0/aer_dev_correctable"));
  assert_non_null(strstr(find(&x.r, "pcie.link-width", GR_SEV_ERROR)->text, "current_link_speed"));
  assert_non_null(strstr(find(&x.r, "mem.channels", GR_SEV_ERROR)->text, "tables/DMI: offset"));
  assert_non_null(strstr(find(&x.r, "xid.errors", GR_SEV_ERROR)->text, "dev/kmsg:5"));
  free_run(&x);
}

static void test_expect_parser_errors(void **state)
{
  static const struct {
    const char *text, *msg;
  } cases[] = {
      {"gpus eight\n", "f:1:6: gpus takes one count"},
      {"link gen4 x12\n", "f:1:11: width \"x12\""},
      {"link gen9 x16\n", "f:1:6: generation \"gen9\""},
      {"driver 560 550\n", "f:1:8: driver range is empty"},
      {"driver 5.a *\n", "f:1:8: driver version \"5.a\""},
      {"gpus 4\ngpus 5\n", "f:2:1: duplicate key gpus (first given at line 1)"},
      {"model \"RTX 3090\n", "f:1:7: unterminated string"},
      {"colour blue\n", "f:1:1: unknown key \"colour\""},
      {"gpus 4\x01\n", "f:1:7: unexpected byte 0x01"},
      {"gpus\0 4\n", "f: binary data"},
  };
  (void)state;
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    struct gr_expect e;
    struct gr_err err = {0};
    size_t len = strlen(cases[i].text) + (i == 9 ? 4 : 0);
    assert_int_equal(gr_expect_parse("f", cases[i].text, len, &e, &err), -1);
    if (!strstr(err.msg, cases[i].msg))
      fail_msg("case %zu: \"%s\" lacks \"%s\"", i, err.msg, cases[i].msg);
    gr_expect_free(&e);
  }
}

/* The inventory's facts (docs/doctor.md), each as its check found it:
 * known values on the trees that have them, unknown (NULL, -1) where a
 * check could not tell, never 0 for unknown. */
static void test_inventory_facts(void **state)
{
  struct gr_doctor_opts o = defaults();
  struct run x;
  char path[1024];
  (void)state;
  o.nccl = (struct gr_lib_version){GR_LIB_PRESENT, "2.18.5", ""}; /* the caller's, carried over */
  o.cuda = (struct gr_lib_version){GR_LIB_ABSENT, "", ""};
  o.hip = (struct gr_lib_version){GR_LIB_PRESENT, "6.0.32830", "6.0.32830"};
  o.rccl = (struct gr_lib_version){GR_LIB_PRESENT, "2.18.3", ""};
  run_tree(&x, "doctor-healthy", &o);
  assert_string_equal(x.r.hip.version, "6.0.32830");
  assert_string_equal(x.r.hip.driver, "6.0.32830");
  assert_int_equal(x.r.rccl.state, GR_LIB_PRESENT);
  assert_string_equal(x.r.rccl.version, "2.18.3");
  assert_string_equal(x.r.iommu_mode, "passthrough");
  assert_int_equal(x.r.acs_redirecting, 0); /* no two GPUs share a switch */
  assert_int_equal(x.r.nccl.state, GR_LIB_PRESENT);
  assert_string_equal(x.r.nccl.version, "2.18.5");
  assert_int_equal(x.r.cuda.state, GR_LIB_ABSENT);
  assert_non_null(x.r.gpu_xids); /* the tree's kernel log has no Xid */
  for (size_t g = 0; g < x.m.topo.ngpus; g++)
    assert_int_equal(x.r.gpu_xids[g], 0);
  free_run(&x);
  run_tree(&x, "doctor-iommu-translated", &o);
  assert_string_equal(x.r.iommu_mode, "translated");
  free_run(&x);
  run_tree(&x, "doctor-acs-redirect", &o);
  assert_int_equal(x.r.acs_redirecting, 2);
  free_run(&x);
  /* three Xid 13 at GPU0 (0000:01:00) and one Xid 79 at GPU2 (0000:41:00) */
  snprintf(path, sizeof(path), "%s/kmsg/xid-79-13.log", getenv("GPURIG_TEST_DATA"));
  o.kmsg_path = path;
  run_tree(&x, "doctor-healthy", &o);
  assert_int_equal(x.m.topo.ngpus, 4);
  assert_int_equal(x.r.gpu_xids[0], 3);
  assert_int_equal(x.r.gpu_xids[1], 0);
  assert_int_equal(x.r.gpu_xids[2], 1);
  free_run(&x);
  /* an unreadable log: unknown, not none */
  o.kmsg_path = "/nonexistent/kmsg.log";
  run_tree(&x, "doctor-healthy", &o);
  assert_null(x.r.gpu_xids);
  free_run(&x);
  /* ACS on root ports of one GPU each is not judged: none redirecting */
  run_tree(&x, "doctor-acs-rootports", &o);
  assert_int_equal(x.r.acs_redirecting, 0);
  free_run(&x);
  /* the HGX's switches show 64 bytes of config space, as to a user: ACS
   * cannot be read, so unknown, not 0 */
  o.kmsg_path = NULL;
  run_tree(&x, "hgx-a100", &o);
  assert_int_equal(x.r.acs_redirecting, -1);
  assert_string_equal(x.r.iommu_mode, "off");
  free_run(&x);
}

static void test_versions(void **state)
{
  (void)state;
  assert_true(gr_version_cmp("535.104.05", "535.54.03") > 0);
  assert_true(gr_version_cmp("545.29.06", "545.999") < 0);
  assert_int_equal(gr_version_cmp("550.0", "550"), 0);
  assert_true(gr_version_valid("580.142"));
  assert_false(gr_version_valid("580..1"));
  assert_false(gr_version_valid(".5"));
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_healthy),        cmocka_unit_test(test_one_fault_each),
      cmocka_unit_test(test_fault_details),  cmocka_unit_test(test_xid_log),
      cmocka_unit_test(test_expectations),   cmocka_unit_test(test_malformed_inputs),
      cmocka_unit_test(test_expect_parser_errors), cmocka_unit_test(test_versions),
      cmocka_unit_test(test_xid_bound),      cmocka_unit_test(test_xid_tail),
      cmocka_unit_test(test_kmsg_unreadable), cmocka_unit_test(test_results_bounded),
      cmocka_unit_test(test_expect_load_errors), cmocka_unit_test(test_inventory_facts),
  };
  return cmocka_run_group_tests(tests, setup, NULL);
}
