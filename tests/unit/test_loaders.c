/* Loaders on the real inputs (tests/data, copied from shared/realdata with
 * their licences), on hand-made fixture trees, and on broken inputs. */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <ftw.h>
#include <libgen.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <unistd.h>

#include <hwloc.h>

#include "testutil.h"
#include "base/file.h"
#include "base/fs.h"
#include "load/loaders.h"

static const char *data_dir(void)
{
  return getenv("GPURIG_TEST_DATA"); /* tests/data in the source tree */
}

static const char *trees_dir(void)
{
  return getenv("GPURIG_TEST_TREES"); /* the real tarballs, unpacked by ctest */
}

static char *path_of(const char *dir, const char *name)
{
  return xasprintf("%s/%s", dir, name);
}

static void load_xml_ok(const char *rel, struct gr_topo *t, struct gr_analysis *a)
{
  struct gr_err err = {0};
  char *p = path_of(data_dir(), rel);
  if (gr_load_xml(p, t, &err) != 0)
    fail_msg("%s: %s", rel, err.msg);
  free(p);
  gr_analyze(t, a);
}

static void load_root_ok(const char *root, struct gr_topo *t, struct gr_analysis *a)
{
  struct gr_err err = {0};
  struct gr_fs fs;
  assert_int_equal(gr_fs_init(&fs, root), 0);
  if (gr_load_live(&fs, t, &err) != 0)
    fail_msg("%s: %s", root, err.msg);
  gr_analyze(t, a);
}

static void dgx2_nvlink_and_pcie_levels(void **state)
{
  struct gr_topo t;
  struct gr_analysis a;
  char l[16];
  (void)state;
  load_xml_ok("hwloc/nvidiaDGX2.xml", &t, &a);
  assert_int_equal(t.ngpus, 16);
  assert_int_equal(t.npackages, 2);
  for (int i = 0; i < 16; i++)
    for (int j = 0; j < 16; j++)
      assert_string_equal(tu_level(&a, i, j, l), i == j ? "X" : "NV6");
  assert_int_equal(a.nhives, 1);
  gr_analysis_free(&a);
  /* --pcie-only: the PLX trees underneath */
  gr_topo_forget_nvlink(&t);
  gr_analyze(&t, &a);
  assert_string_equal(tu_level(&a, 0, 1, l), "PIX");
  assert_string_equal(tu_level(&a, 0, 2, l), "PXB");
  assert_string_equal(tu_level(&a, 0, 4, l), "NODE");
  assert_string_equal(tu_level(&a, 0, 8, l), "SYS");
  assert_string_equal(tu_level(&a, 12, 15, l), "PXB");
  assert_string_equal(tu_level(&a, 8, 12, l), "NODE");
  assert_int_equal(a.nhives, 4);
  char bus[32];
  assert_string_equal(gr_pci_busid(&t.pci[t.gpus[0]], bus, sizeof(bus)), "0000:34:00.0");
  assert_string_equal(t.pci[t.gpus[0]].model, "Tesla V100-SXM3-32GB-H");
  gr_analysis_free(&a);
  gr_topo_free(&t);
}

static void minsky_nvlink_pairs(void **state)
{
  struct gr_topo t;
  struct gr_analysis a;
  char l[16];
  (void)state;
  load_xml_ok("hwloc/power8gpudistances.xml", &t, &a);
  assert_int_equal(t.ngpus, 4);
  assert_string_equal(tu_level(&a, 0, 1, l), "NV2");
  assert_string_equal(tu_level(&a, 2, 3, l), "NV2");
  assert_string_equal(tu_level(&a, 0, 2, l), "SYS");
  gr_analysis_free(&a);
  gr_topo_free(&t);
}

static void sys4029_two_hives_node_and_nics(void **state)
{
  struct gr_topo t;
  struct gr_analysis a;
  char l[16];
  (void)state;
  char *root = path_of(trees_dir(), "32intel64-2p8co2t+8ve");
  load_root_ok(root, &t, &a);
  free(root);
  assert_int_equal(t.ngpus, 8); /* NEC SX-Aurora, class 0b40 */
  assert_int_equal(a.nhives, 2);
  for (int i = 0; i < 8; i++)
    for (int j = 0; j < 8; j++)
      if (i != j)
        assert_string_equal(tu_level(&a, i, j, l), (i < 4) == (j < 4) ? "PIX" : "NODE");
  assert_int_equal(t.nnics, 2);
  /* each ConnectX-4 sits under one switch with four accelerators */
  for (int g = 0; g < 8; g++) {
    assert_string_equal(gr_level_str(&a.gpu_nic[g * 2 + (g < 4 ? 0 : 1)], l, 16), "PIX");
    assert_string_equal(gr_level_str(&a.gpu_nic[g * 2 + (g < 4 ? 1 : 0)], l, 16), "NODE");
  }
  const struct gr_pci *g0 = &t.pci[t.gpus[0]];
  assert_int_equal(g0->link.cur_gen, 3);
  assert_int_equal(g0->link.max_width, 16);
  assert_int_equal(g0->link.port_max_width, 16);
  assert_string_equal(g0->driver, "ve_drv");
  assert_int_equal(t.pci[g0->switch_up >= 0 ? g0->switch_up : t.pci[g0->parent].switch_up].vendor, 0x10b5);
  assert_null(tu_find(&a, "pcie.link-width", -2));
  gr_analysis_free(&a);
  gr_topo_free(&t);
}

static void fixture_epyc_riser(void **state)
{
  struct gr_topo t;
  struct gr_analysis a;
  (void)state;
  char *root = path_of(data_dir(), "trees/epyc-riser");
  load_root_ok(root, &t, &a);
  free(root);
  assert_int_equal(t.ngpus, 4);
  assert_true(a.cpu_amd);
  const struct gr_pci *g1 = &t.pci[t.gpus[1]];
  assert_int_equal(g1->link.cur_width, 8);
  assert_int_equal(g1->link.max_width, 16);
  assert_int_equal(g1->iommu_group, 11);
  assert_string_equal(g1->driver, "nvidia");
  const struct gr_pci *rp = &t.pci[g1->parent];
  assert_true(rp->aer.correctable.valid);
  assert_int_equal(rp->aer.correctable.value, 7);
  assert_false(g1->aer.correctable.valid); /* absent file: unknown, not zero */
  assert_non_null(tu_find(&a, "pcie.link-width", t.gpus[1]));
  assert_non_null(tu_find(&a, "pcie.link-gen-idle", t.gpus[2]));
  char l[16];
  assert_string_equal(gr_level_str(&a.gpu_nic[3], l, 16), "PIX");
  assert_string_equal(tu_level(&a, 0, 1, l), "PHB");
  assert_string_equal(tu_level(&a, 0, 2, l), "NODE");
  gr_analysis_free(&a);
  gr_topo_free(&t);
}

static void every_real_input_loads_or_is_refused(void **state)
{
  const char *xmls[] = {"hwloc/16intel64-manyVFs.xml", "hwloc/24em64t-2n6c2t-pci.xml",
                        "hwloc/32em64t-2n8c2t-pci-wholeio.xml", "hwloc/96em64t-4n4d3ca2co-pci.xml",
                        "hwloc/nvidiaDGX2.xml", "hwloc/power8gpudistances.xml", "hwloc-aws/p4d.xml",
                        "hwloc-aws/p5en.xml", "hwloc-aws/p6-b200.xml"};
  (void)state;
  for (size_t i = 0; i < sizeof(xmls) / sizeof(xmls[0]); i++) {
    struct gr_topo t;
    struct gr_analysis a;
    load_xml_ok(xmls[i], &t, &a);
    gr_analysis_free(&a);
    gr_topo_free(&t);
  }
  const char *ok_trees[] = {"32intel64-2p8co2t+8ve", "40intel64-2g2n4c+pci", "2pa-pcidomain32bits"};
  for (size_t i = 0; i < 3; i++) {
    struct gr_topo t;
    struct gr_analysis a;
    char *root = path_of(trees_dir(), ok_trees[i]);
    load_root_ok(root, &t, &a);
    if (i == 2) /* the KVM guest's 32-bit-domain devices are named, not lost silently */
      assert_true(t.nwarnings == 1 && strstr(t.warnings[0], "32-bit PCI domains"));
    free(root);
    gr_analysis_free(&a);
    gr_topo_free(&t);
  }
  /* the POWER9 tree was trimmed upstream: no PCI hierarchy, refused with the reason */
  struct gr_topo t;
  struct gr_err err = {0};
  struct gr_fs fs;
  char *root = path_of(trees_dir(), "nvidiagpunumanodes");
  gr_fs_init(&fs, root);
  assert_int_equal(gr_load_live(&fs, &t, &err), -1);
  assert_int_equal(err.code, GR_EXIT_FAIL);
  assert_non_null(strstr(err.msg, "not a link into /sys/devices"));
  free(root);
  gr_topo_free(&t);
}

/* Writes `len` bytes to a fresh temp file; returns its path (caller frees). */
static char *temp_file(const char *data, size_t len)
{
  char *p = xstrdup("/tmp/gpurig-test-XXXXXX");
  int fd = mkstemp(p);
  assert_true(fd >= 0);
  assert_int_equal(write(fd, data, len), (ssize_t)len);
  close(fd);
  return p;
}

static void expect_xml_error(const char *path, const char *needle)
{
  struct gr_topo t;
  struct gr_err err = {0};
  assert_int_equal(gr_load_xml(path, &t, &err), -1);
  assert_int_equal(err.code, GR_EXIT_FAIL);
  if (!strstr(err.msg, needle))
    fail_msg("'%s' lacks '%s'", err.msg, needle);
  if (!strstr(err.msg, path))
    fail_msg("'%s' does not name the file", err.msg);
  assert_null(strchr(err.msg, '\n'));
  assert_int_equal(t.npci, 0);
}

/* Is hwloc's libxml2 plugin installed (Debian: libhwloc-plugins, only
 * recommended by libhwloc15)? hwloc looks for it in <libdir>/hwloc, beside
 * libhwloc itself. */
static bool libxml_plugin_installed(void)
{
  Dl_info info;
  char lib[4096];
  if (!dladdr((void *)hwloc_get_api_version, &info) || !info.dli_fname)
    fail_msg("cannot locate libhwloc");
  snprintf(lib, sizeof(lib), "%s", info.dli_fname);
  char *plugin = xasprintf("%s/hwloc/hwloc_xml_libxml.so", dirname(lib));
  bool found = access(plugin, R_OK) == 0;
  free(plugin);
  return found;
}

/* A syntax error, as each parser words it: libxml2 names the line
 * ("FILE:LINE: not valid XML: ..."), hwloc's own parser does not. */
static void expect_syntax_error(const char *path, bool libxml)
{
  struct gr_topo t;
  struct gr_err err = {0};
  if (!libxml) {
    expect_xml_error(path, "not a valid hwloc XML topology: Failed to parse XML input with the minimalistic parser");
    return;
  }
  expect_xml_error(path, "not valid XML");
  gr_load_xml(path, &t, &err);
  char *line = xasprintf("%s:35: ", path); /* the truncated DGX-2 file ends in line 35 */
  if (!strstr(err.msg, line))
    fail_msg("'%s' lacks '%s'", err.msg, line);
  free(line);
}

static void bad_xml_inputs(void **state)
{
  (void)state;
  expect_xml_error("/nonexistent/topo.xml", "cannot open");
  char *p = temp_file("", 0);
  expect_xml_error(p, "empty file");
  unlink(p);
  free(p);
  p = temp_file("\x7f" "ELF\0\0\0", 7);
  expect_xml_error(p, "binary data");
  unlink(p);
  free(p);
  p = temp_file("hello, world\n", 13);
  expect_xml_error(p, "no <topology>");
  unlink(p);
  free(p);
  p = temp_file("<?xml version=\"1.0\"?>\n<topology version=\"3.0\">\n</topology>\n", 59);
  expect_xml_error(p, "format 3.x is newer");
  unlink(p);
  free(p);
  /* A truncated real file. hwloc's own parser reads XML; when it fails, the
   * load is retried with libxml2's plugin where it is installed, for the
   * line number. A user's own HWLOC_PLUGINS_BLACKLIST is obeyed as it is. */
  char *dgx = path_of(data_dir(), "hwloc/nvidiaDGX2.xml");
  FILE *f = fopen(dgx, "rb");
  char buf[3000];
  assert_int_equal(fread(buf, 1, sizeof(buf), f), sizeof(buf));
  fclose(f);
  free(dgx);
  p = temp_file(buf, sizeof(buf));
  bool libxml = libxml_plugin_installed();
  unsetenv("HWLOC_PLUGINS_BLACKLIST");
  expect_syntax_error(p, libxml);
  setenv("HWLOC_PLUGINS_BLACKLIST", "hwloc_pci,hwloc_gl,hwloc_opencl,hwloc_xml_libxml", 1);
  expect_syntax_error(p, false);
  setenv("HWLOC_PLUGINS_BLACKLIST", "hwloc_pci,hwloc_gl,hwloc_opencl", 1);
  expect_syntax_error(p, libxml);
  unsetenv("HWLOC_PLUGINS_BLACKLIST");
  unlink(p);
  free(p);
  char *nccl = path_of(data_dir(), "nccl-topo/aws-ofi-nccl_g5.48xl-topo.xml");
  expect_xml_error(nccl, "NCCL topology file");
  free(nccl);
  expect_xml_error("/tmp", "a directory, not an XML file");
}

/* getenv(name) equals want (NULL: unset) */
static void expect_env(const char *name, const char *want)
{
  const char *v = getenv(name);
  if (want ? !v || strcmp(v, want) != 0 : v != NULL)
    fail_msg("%s is '%s' after a load, expected '%s'", name, v ? v : "(unset)", want ? want : "(unset)");
}

/* Loads change the environment for hwloc only while they run: a user's own
 * settings are what the next load and any child process see. */
static void loads_put_the_environment_back(void **state)
{
  struct gr_topo t;
  struct gr_analysis a;
  struct gr_fs fs;
  struct gr_err err = {0};
  (void)state;
  unsetenv("HWLOC_PLUGINS_BLACKLIST");
  unsetenv("HWLOC_XML_VERBOSE");
  setenv("HWLOC_FSROOT", "/nonexistent-user-root", 1);
  char *root = path_of(data_dir(), "trees/epyc-riser");
  load_root_ok(root, &t, &a); /* the fs root, not the user's HWLOC_FSROOT */
  assert_int_equal(t.ngpus, 4);
  gr_analysis_free(&a);
  gr_topo_free(&t);
  free(root);
  expect_env("HWLOC_FSROOT", "/nonexistent-user-root");
  expect_env("HWLOC_PLUGINS_BLACKLIST", NULL);
  gr_fs_init(&fs, NULL);
  if (gr_load_live(&fs, &t, &err) != 0) /* the live machine is "/" whatever the user set */
    fail_msg("live: %s", err.msg);
  gr_topo_free(&t);
  expect_env("HWLOC_FSROOT", "/nonexistent-user-root");
  unsetenv("HWLOC_FSROOT");
  setenv("HWLOC_XML_VERBOSE", "0", 1);
  load_xml_ok("hwloc/power8gpudistances.xml", &t, &a);
  gr_analysis_free(&a);
  gr_topo_free(&t);
  expect_env("HWLOC_XML_VERBOSE", "0");
  expect_env("HWLOC_PLUGINS_BLACKLIST", NULL);
  expect_env("HWLOC_FSROOT", NULL);
  unsetenv("HWLOC_XML_VERBOSE");
}

static void expect_tree_error(const char *root, const char *needle)
{
  struct gr_topo t;
  struct gr_err err = {0};
  struct gr_fs fs;
  gr_fs_init(&fs, root);
  assert_int_equal(gr_load_live(&fs, &t, &err), -1);
  assert_int_equal(err.code, GR_EXIT_FAIL);
  if (!strstr(err.msg, needle))
    fail_msg("'%s' lacks '%s'", err.msg, needle);
}

static void bad_trees(void **state)
{
  (void)state;
  char *empty = xstrdup("/tmp/gpurig-empty-XXXXXX");
  assert_non_null(mkdtemp(empty));
  expect_tree_error(empty, "/sys/bus/pci/devices: No such file or directory");
  tu_tree_remove(empty);

  char *dir = tu_tree_copy("epyc-riser");
  char *f = xasprintf("%s/sys/devices/pci0000:00/0000:00:01.1/0000:01:00.0/class", dir);
  assert_int_equal(unlink(f), 0);
  expect_tree_error(dir, "0000:01:00.0/class: No such file or directory");
  assert_int_equal(mkdir(f, 0755), 0); /* a file that cannot be read as one */
  expect_tree_error(dir, "0000:01:00.0/class: Is a directory");
  rmdir(f);
  FILE *w = fopen(f, "w");
  fputs("0xZZ\n", w);
  fclose(w);
  expect_tree_error(dir, "not a hexadecimal PCI id");
  free(f);
  tu_tree_remove(dir);
}

static void malformed_values_are_warnings(void **state)
{
  (void)state;
  char *dir = tu_tree_copy("epyc-riser");
  char *base = xasprintf("%s/sys/devices/pci0000:00/0000:00:01.1/0000:01:00.0", dir);
  char *f1 = xasprintf("%s/current_link_speed", base), *f2 = xasprintf("%s/aer_dev_correctable", base);
  char *f3 = xasprintf("%s/max_link_width", base);
  FILE *w = fopen(f1, "w");
  fputs("9.9 GT/s\n", w);
  fclose(w);
  w = fopen(f2, "wb");
  fwrite("\x01\x02garbage\0\xff", 1, 11, w);
  fclose(w);
  w = fopen(f3, "w");
  fputs("sixteen\n", w);
  fclose(w);
  struct gr_topo t;
  struct gr_analysis a;
  load_root_ok(dir, &t, &a);
  assert_int_equal(t.nwarnings, 3);
  assert_non_null(strstr(t.warnings[0], "current_link_speed: unrecognised link speed \"9.9 GT/s\""));
  assert_non_null(strstr(t.warnings[1], "max_link_width: unrecognised link width"));
  assert_non_null(strstr(t.warnings[2], "aer_dev_correctable"));
  assert_false(t.pci[t.gpus[0]].aer.correctable.valid);
  assert_int_equal(t.pci[t.gpus[0]].link.cur_gen, 0);
  gr_analysis_free(&a);
  gr_topo_free(&t);
  free(f1);
  free(f2);
  free(f3);
  free(base);
  tu_tree_remove(dir);
}

/* What changes while a machine runs is re-read from sysfs alone, into the
 * caller's array; the loaded topology stays as it was loaded. */
static void dynamic_reread(void **state)
{
  struct gr_topo t;
  struct gr_fs fs;
  struct gr_err err = {0};
  char bus[32];
  (void)state;
  char *dir = tu_tree_copy("epyc-riser");
  gr_fs_init(&fs, dir);
  if (gr_load_live(&fs, &t, &err) != 0)
    fail_msg("%s", err.msg);
  int g1 = t.gpus[1], g2 = t.gpus[2], rp = t.pci[g1].parent, hb = t.pci[g1].hostbridge;
  assert_string_equal(gr_pci_busid(&t.pci[g1], bus, sizeof(bus)), "0000:02:00.0");
  assert_string_equal(gr_pci_busid(&t.pci[g2], bus, sizeof(bus)), "0000:41:00.0");
  struct gr_pci_dynamic *dy = xcalloc(t.npci, sizeof(*dy));
  assert_int_equal(gr_load_dynamic(&fs, &t, dy, &err), 0);
  /* the same values as the load read */
  for (size_t i = 0; i < t.npci; i++) {
    assert_int_equal(dy[i].cur_gen, t.pci[i].link.cur_gen);
    assert_int_equal(dy[i].cur_width, t.pci[i].link.cur_width);
    assert_int_equal(dy[i].aer.correctable.valid, t.pci[i].aer.correctable.valid);
    assert_int_equal(dy[i].aer.correctable.value, t.pci[i].aer.correctable.value);
  }
  assert_int_equal(dy[g1].cur_gen, 4);
  assert_int_equal(dy[g1].cur_width, 8);
  assert_false(dy[g1].aer.correctable.valid); /* no file: unknown */
  assert_true(dy[rp].aer.correctable.valid);
  assert_int_equal(dy[rp].aer.correctable.value, 7);

  /* the riser is reseated and the GPU idles at Gen1; AER starts counting */
  tu_tree_write_attr(dir, "0000:02:00.0", "current_link_width", "16\n");
  tu_tree_write_attr(dir, "0000:02:00.0", "current_link_speed", "2.5 GT/s PCIe\n");
  tu_tree_write_attr(dir, "0000:02:00.0", "aer_dev_correctable", "RxErr 3\nBadTLP 2\nTOTAL_ERR_COR 5\n");
  tu_tree_write_attr(dir, "0000:00:03.1", "aer_dev_correctable", "RxErr 9\nTOTAL_ERR_COR 9\n");
  tu_tree_write_attr(dir, "0000:41:00.0", "current_link_width", "sixteen\n"); /* malformed: unknown, no warning */
  size_t warnings = t.nwarnings;
  memset(dy, 0xff, t.npci * sizeof(*dy)); /* every field is written */
  assert_int_equal(gr_load_dynamic(&fs, &t, dy, &err), 0);
  assert_int_equal(dy[g1].cur_width, 16);
  assert_int_equal(dy[g1].cur_gen, 1);
  assert_true(dy[g1].aer.correctable.valid);
  assert_int_equal(dy[g1].aer.correctable.value, 5);
  assert_false(dy[g1].aer.nonfatal.valid);
  assert_int_equal(dy[rp].aer.correctable.value, 9);
  assert_int_equal(dy[g2].cur_width, 0);
  assert_int_equal(dy[g2].cur_gen, t.pci[g2].link.cur_gen);
  assert_int_equal(dy[hb].cur_gen, 0); /* host bridges: no sysfs directory */
  assert_int_equal(dy[hb].cur_width, 0);
  assert_false(dy[hb].aer.correctable.valid);
  /* the topology is the one loaded */
  assert_int_equal(t.pci[g1].link.cur_width, 8);
  assert_int_equal(t.pci[g1].link.cur_gen, 4);
  assert_false(t.pci[g1].aer.correctable.valid);
  assert_int_equal(t.pci[rp].aer.correctable.value, 7);
  assert_int_equal(t.pci[g2].link.cur_width, 16);
  assert_int_equal(t.nwarnings, warnings);
  assert_null(t.pci[g2].link_problem);

  /* the devices directory gone: an error, not a topology of unknowns */
  char *devices = xasprintf("%s/sys/bus/pci/devices", dir), *moved = xasprintf("%s.gone", devices);
  assert_int_equal(rename(devices, moved), 0);
  assert_int_equal(gr_load_dynamic(&fs, &t, dy, &err), -1);
  assert_int_equal(err.code, GR_EXIT_FAIL);
  assert_non_null(strstr(err.msg, "/sys/bus/pci/devices: No such file or directory"));
  free(devices);
  free(moved);
  free(dy);
  gr_topo_free(&t);
  tu_tree_remove(dir);
}

static void snapshot_round_trip(void **state)
{
  struct gr_fs fs;
  struct gr_err err = {0};
  struct gr_topo t;
  struct gr_analysis a;
  (void)state;
  char *root = path_of(data_dir(), "trees/epyc-riser");
  char *out = xstrdup("/tmp/gpurig-snap-XXXXXX");
  assert_non_null(mkdtemp(out));
  char *xml = xasprintf("%s/rig.xml", out);
  gr_fs_init(&fs, root);
  if (gr_snapshot_write(&fs, xml, &err) != 0)
    fail_msg("%s", err.msg);
  if (gr_load_xml(xml, &t, &err) != 0)
    fail_msg("%s", err.msg);
  gr_analyze(&t, &a);
  assert_true(t.link_details);
  assert_int_equal(t.ngpus, 4);
  const struct gr_pci *g1 = &t.pci[t.gpus[1]];
  assert_int_equal(g1->link.cur_width, 8);
  assert_int_equal(g1->link.max_width, 16);
  assert_int_equal(g1->link.max_gen, 4);
  assert_int_equal(g1->iommu_group, 11);
  assert_string_equal(g1->driver, "nvidia");
  assert_int_equal(t.pci[g1->parent].aer.correctable.value, 7);
  assert_non_null(tu_find(&a, "pcie.link-width", t.gpus[1]));
  assert_null(tu_find(&a, "topo.link-unrecorded", -1));
  gr_analysis_free(&a);
  gr_topo_free(&t);
  /* a failed write leaves nothing behind */
  char *bad = xasprintf("%s/missing-dir/rig.xml", out);
  assert_int_equal(gr_snapshot_write(&fs, bad, &err), -1);
  assert_non_null(strstr(err.msg, bad));
  DIR *d = opendir(out);
  int entries = 0;
  struct dirent *e;
  while ((e = readdir(d)))
    entries += e->d_name[0] != '.';
  closedir(d);
  assert_int_equal(entries, 1); /* only rig.xml */
  unlink(xml);
  rmdir(out);
  free(bad);
  free(xml);
  free(out);
  free(root);
}

/* n nested bridges: deep enough, under a small stack, to overflow inside
 * libhwloc's own recursive XML importer while staying within gpurig's
 * nesting limit (256). */
static char *nested_bridges(int n)
{
  const char *a = "cpuset=\"0x1\" complete_cpuset=\"0x1\" nodeset=\"0x1\" complete_nodeset=\"0x1\"";
  size_t cap = 4096 + (size_t)n * 256;
  char *buf = xmalloc(cap);
  size_t len = (size_t)snprintf(buf, cap,
                                "<?xml version=\"1.0\"?>\n<topology version=\"2.0\">\n<object type=\"Machine\" "
                                "os_index=\"0\" %s allowed_cpuset=\"0x1\" allowed_nodeset=\"0x1\" gp_index=\"1\">\n"
                                "<object type=\"PU\" os_index=\"0\" %s gp_index=\"2\"/>\n", a, a);
  for (int k = 0; k < n; k++)
    len += (size_t)snprintf(buf + len, cap - len,
                            "<object type=\"Bridge\" gp_index=\"%d\" bridge_type=\"1-1\" depth=\"%d\" "
                            "bridge_pci=\"0000:[00-ff]\" pci_busid=\"0000:01:00.0\" "
                            "pci_type=\"0604 [10b5:8796] [0000:0000] ca\">\n", k + 3, k);
  for (int k = 0; k < n; k++)
    len += (size_t)snprintf(buf + len, cap - len, "</object>\n");
  snprintf(buf + len, cap - len, "</object>\n</topology>\n");
  return buf;
}

/* A stack overflow inside libhwloc is reported by the crash guard (which
 * runs on its own signal stack) with one line and exit 2, not a bare
 * SIGSEGV. In a child, a thread with a small stack of its own (a fresh
 * mapping with a guard page below it, so the depth where it overflows does
 * not depend on what ran before) loads nested XML with hwloc's own
 * importer, which recurses once per level; gpurig's part before hwloc uses
 * a few KiB. */
/* 250 levels take 128 to 192 KiB in hwloc 2.9's importer; gpurig's part
 * before it fits in 32 KiB (both measured): 64 KiB overflows inside hwloc. */
#define SMALL_STACK (64u << 10)
struct deep_load {
  const char *xml;
  int rc;
};

static void *load_on_small_stack(void *arg)
{
  struct deep_load *d = arg;
  struct gr_topo t;
  struct gr_err err = {0};
  d->rc = gr_load_xml_buffer("deep.xml", d->xml, strlen(d->xml), &t, &err);
  if (d->rc == 0)
    gr_topo_free(&t);
  return NULL;
}

static void hwloc_stack_overflow_is_reported(void **state)
{
  (void)state;
  char *xml = nested_bridges(250);
  int pipefd[2];
  assert_int_equal(pipe(pipefd), 0);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    dup2(pipefd[1], STDERR_FILENO);
    setenv("HWLOC_LIBXML_IMPORT", "0", 1);
    struct deep_load d = {.xml = xml, .rc = -2};
    pthread_attr_t attr;
    pthread_t th;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, SMALL_STACK);
    if (pthread_create(&th, &attr, load_on_small_stack, &d) != 0)
      _exit(12);
    pthread_join(th, NULL);
    _exit(d.rc == 0 ? 10 : 11); /* no overflow at this depth: the test cannot show the guard */
  }
  close(pipefd[1]);
  char msg[2048] = "";
  ssize_t n = read(pipefd[0], msg, sizeof(msg) - 1);
  msg[n > 0 ? n : 0] = '\0';
  close(pipefd[0]);
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  if (!WIFEXITED(status))
    fail_msg("the child died of signal %d: the crash guard did not run", WTERMSIG(status));
  assert_int_equal(WEXITSTATUS(status), GR_EXIT_FAIL);
  assert_non_null(strstr(msg, "deep.xml: libhwloc"));
  assert_non_null(strstr(msg, "crashed parsing this XML"));
  free(xml);
}

/* ---- nvidia-smi parity: RDMA device names and GPU memory NUMA nodes ---- */

/* The NIC legend names each NIC by its RDMA device. A tree gathered without
 * /sys/class/infiniband gives hwloc none; the loader reads the function's
 * infiniband/ directory instead. */
static void rdma_names_from_sysfs(void **state)
{
  struct gr_topo t;
  struct gr_analysis a;
  char bus[32];
  (void)state;
  char *root = path_of(data_dir(), "trees/nic-rdma");
  load_root_ok(root, &t, &a);
  free(root);
  assert_int_equal(t.nnics, 3);
  assert_string_equal(gr_pci_busid(&t.pci[t.nics[0]], bus, sizeof(bus)), "0000:04:00.0");
  assert_string_equal(t.pci[t.nics[0]].rdma_name, "mlx5_0");
  assert_string_equal(t.pci[t.nics[1]].rdma_name, "mlx5_1"); /* RoCE on an Ethernet-class function */
  assert_null(t.pci[t.nics[2]].rdma_name);                   /* lists none */
  assert_null(t.pci[t.gpus[0]].rdma_name);
  gr_analysis_free(&a);
  gr_topo_free(&t);

  /* several names: the first in byte order; implausible ones passed over */
  char *dir = tu_tree_copy("nic-rdma");
  const char *names[] = {"mlx5_3", "mlx5_2", "bad name", "tab\tname"};
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
    char *d = xasprintf("%s/sys/devices/pci0000:40/0000:40:05.1/0000:43:00.0/infiniband/%s", dir, names[i]);
    char *cmd = xasprintf("mkdir -p '%s'", d);
    assert_int_equal(system(cmd), 0);
    free(cmd);
    free(d);
  }
  load_root_ok(dir, &t, &a);
  assert_string_equal(t.pci[t.nics[2]].rdma_name, "mlx5_2");
  gr_analysis_free(&a);
  gr_topo_free(&t);
  tu_tree_remove(dir);
}

/* hwloc's OpenFabrics OS device names the RDMA device of an XML input. */
static void rdma_names_from_hwloc(void **state)
{
  struct gr_topo t;
  struct gr_analysis a;
  (void)state;
  load_xml_ok("hwloc/32em64t-2n8c2t-pci-wholeio.xml", &t, &a);
  bool found = false;
  for (size_t n = 0; n < t.nnics; n++)
    if (t.pci[t.nics[n]].rdma_name) {
      assert_string_equal(t.pci[t.nics[n]].rdma_name, "mlx5_0"); /* beside the netdev ib0 */
      assert_non_null(strstr(t.pci[t.nics[n]].osdevs, "ib0"));
      found = true;
    }
  assert_true(found);
  gr_analysis_free(&a);
  gr_topo_free(&t);
}

static char *replace_once(const char *s, const char *from, const char *to)
{
  const char *at = strstr(s, from);
  assert_non_null(at);
  return xasprintf("%.*s%s%s", (int)(at - s), s, to, at + strlen(from));
}

/* GPU memory as NUMA nodes (hwloc's "GPUMemory" with the GPU's bus id):
 * each GPU's own node is nvidia-smi's GPU NUMA ID, and the GPU's NUMA
 * affinity stays its CPU's node although its socket's nodeset holds both. */
static void gpu_memory_numa_nodes(void **state)
{
  struct gr_topo t;
  struct gr_analysis a;
  struct gr_err err = {0};
  char bus[32];
  (void)state;
  load_xml_ok("hwloc/nvidiagpunumanodes-gpumem.xml", &t, &a);
  assert_int_equal(t.ngpus, 6);
  assert_string_equal(gr_pci_busid(&t.pci[t.gpus[0]], bus, sizeof(bus)), "0004:05:00.0");
  assert_int_equal(t.pci[t.gpus[0]].gpu_numa, 255);
  assert_int_equal(t.pci[t.gpus[0]].numa, 0);
  assert_int_equal(t.pci[t.gpus[5]].gpu_numa, 250);
  assert_int_equal(t.pci[t.gpus[5]].numa, 8);
  char l[16];
  assert_string_equal(tu_level(&a, 0, 1, l), "NODE");
  assert_string_equal(tu_level(&a, 0, 5, l), "SYS");
  gr_analysis_free(&a);
  gr_topo_free(&t);

  /* two nodes name 0035:05:00.0, the lower without memory: the one with
   * memory is its GPU NUMA ID; 0035:04:00.0 is left with none */
  char *path = path_of(data_dir(), "hwloc/nvidiagpunumanodes-gpumem.xml");
  struct gr_file f;
  assert_int_equal(gr_file_read(path, 1u << 20, 0, &f, &err), 0);
  char *x1 = replace_once(f.data, "\"0035:04:00.0\"", "\"0035:05:00.0\"");
  char *x2 = replace_once(x1, "os_index=\"250\" cpuset=\"0x000000ff,0xff000000,,0x0\" "
                              "complete_cpuset=\"0x000000ff,0xff000000,,0x0\" nodeset=\"0x04000000,,,,,,,0x0\" "
                              "complete_nodeset=\"0x04000000,,,,,,,0x0\" gp_index=\"70\" subtype=\"GPUMemory\" "
                              "local_memory=\"16106127360\"",
                          "os_index=\"250\" cpuset=\"0x000000ff,0xff000000,,0x0\" "
                          "complete_cpuset=\"0x000000ff,0xff000000,,0x0\" nodeset=\"0x04000000,,,,,,,0x0\" "
                          "complete_nodeset=\"0x04000000,,,,,,,0x0\" gp_index=\"70\" subtype=\"GPUMemory\" "
                          "local_memory=\"0\"");
  if (gr_load_xml_buffer("gpumem.xml", x2, strlen(x2), &t, &err) != 0)
    fail_msg("%s", err.msg);
  assert_int_equal(t.pci[t.gpus[5]].gpu_numa, 251);
  assert_int_equal(t.pci[t.gpus[4]].gpu_numa, -1);
  gr_topo_free(&t);
  free(x2);
  free(x1);
  gr_file_free(&f);
  free(path);
}

int main(void)
{
  if (!data_dir() || !trees_dir()) {
    fprintf(stderr, "set GPURIG_TEST_DATA and GPURIG_TEST_TREES (ctest does)\n");
    return 1;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(dgx2_nvlink_and_pcie_levels),
      cmocka_unit_test(minsky_nvlink_pairs),
      cmocka_unit_test(sys4029_two_hives_node_and_nics),
      cmocka_unit_test(fixture_epyc_riser),
      cmocka_unit_test(every_real_input_loads_or_is_refused),
      cmocka_unit_test(bad_xml_inputs),
      cmocka_unit_test(loads_put_the_environment_back),
      cmocka_unit_test(bad_trees),
      cmocka_unit_test(malformed_values_are_warnings),
      cmocka_unit_test(dynamic_reread),
      cmocka_unit_test(snapshot_round_trip),
      cmocka_unit_test(hwloc_stack_overflow_is_reported),
      cmocka_unit_test(rdma_names_from_sysfs),
      cmocka_unit_test(rdma_names_from_hwloc),
      cmocka_unit_test(gpu_memory_numa_nodes),
  };
  return cmocka_run_group_tests(tests, tu_setup_data, NULL);
}
