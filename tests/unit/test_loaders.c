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
  gr_topo_forget_gpulinks(&t);
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
  (void)state;
  char *root = path_of(trees_dir(), "32intel64-2p8co2t+8ve");
  load_root_ok(root, &t, &a);
  free(root);
  /* NEC SX-Aurora (class 0b40): accelerators, not GPUs (issue 31) */
  assert_int_equal(t.ngpus, 0);
  assert_int_equal(t.naccels, 8);
  assert_int_equal(t.nnics, 2);
  /* four under each PLX switch, beside one ConnectX-4 */
  size_t n = 0;
  for (size_t i = 0; i < t.npci; i++) {
    const struct gr_pci *v = &t.pci[i];
    if (v->kind != GR_KIND_ACCEL)
      continue;
    assert_int_equal(v->gpu_index, -1);
    assert_int_equal(v->link.cur_gen, 3);
    assert_int_equal(v->link.max_width, 16);
    assert_int_equal(v->link.port_max_width, 16);
    assert_string_equal(v->driver, "ve_drv");
    int up = t.pci[v->parent].switch_up;
    assert_true(up >= 0);
    assert_int_equal(t.pci[up].vendor, 0x10b5);
    int nic = t.nics[n < 4 ? 0 : 1];
    assert_int_equal(gr_topo_common_ancestor(&t, (int)i, nic), up);
    n++;
  }
  assert_int_equal(n, 8);
  assert_null(tu_find(&a, "pcie.link-width", -2));
  assert_non_null(strstr(tu_find(&a, "topo.no-gpu", -1)->text, "8 accelerators"));
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
  /* the POWER9 AC922 tree was gathered without the PCI hierarchy (plain
   * directories, `class` alone): it loads as lstopo loads it, each GPU on a
   * host bridge of its own, NVIDIA's by the driver's list, its memory node
   * (numa_status) its GPU NUMA ID, never a host NUMA node (issue 31) */
  struct gr_topo t;
  struct gr_analysis a;
  char *root = path_of(trees_dir(), "nvidiagpunumanodes");
  load_root_ok(root, &t, &a);
  free(root);
  assert_int_equal(t.ngpus, 6);
  assert_int_equal(t.nnumas, 2); /* nodes 0 and 8; 250-255 are the GPUs' */
  for (size_t n = 0; n < t.nnumas; n++)
    assert_true(t.numas[n].os_index < 250);
  static const int gpu_numa[] = {255, 254, 253, 252, 251, 250};
  for (size_t g = 0; g < t.ngpus; g++) {
    const struct gr_pci *p = &t.pci[t.gpus[g]];
    assert_int_equal(p->vendor, 0x10de);
    assert_int_equal(t.pci[p->parent].role, GR_ROLE_HOSTBRIDGE);
    assert_int_equal(p->gpu_numa, gpu_numa[g]);
    assert_int_equal(p->numa, g < 3 ? 0 : 8);
  }
  assert_int_equal(t.nwarnings, 1);
  assert_non_null(strstr(t.warnings[0], "6 device(s) are plain directories"));
  gr_analysis_free(&a);
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
  assert_int_equal(gr_load_dynamic(&fs, &t, NULL, NULL, dy, &err), 0);
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
  assert_int_equal(gr_load_dynamic(&fs, &t, NULL, NULL, dy, &err), 0);
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
  assert_int_equal(gr_load_dynamic(&fs, &t, NULL, NULL, dy, &err), -1);
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
  if (gr_snapshot_write(&fs, xml, NULL, &err) != 0)
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
  assert_int_equal(gr_snapshot_write(&fs, bad, NULL, &err), -1);
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

  /* numbered as nvidia-smi numbers them: by RDMA name in natural order
   * (mlx5_2 before mlx5_10), not by bus (04 < 42 < 43) */
  char *from = xasprintf("%s/sys/devices/pci0000:00/0000:00:01.1/0000:01:00.0/0000:02:01.0/0000:04:00.0/infiniband/mlx5_0", dir);
  char *to = xasprintf("%.*s/mlx5_10", (int)(strrchr(from, '/') - from), from);
  assert_int_equal(rename(from, to), 0);
  load_root_ok(dir, &t, &a);
  assert_string_equal(t.pci[t.nics[0]].rdma_name, "mlx5_1");
  assert_string_equal(t.pci[t.nics[1]].rdma_name, "mlx5_2");
  assert_string_equal(t.pci[t.nics[2]].rdma_name, "mlx5_10");
  assert_string_equal(gr_pci_busid(&t.pci[t.nics[2]], bus, sizeof(bus)), "0000:04:00.0");
  assert_int_equal(t.pci[t.nics[2]].nic_index, 2);
  gr_analysis_free(&a);
  gr_topo_free(&t);
  free(from);
  free(to);
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

/* ---- NCCL topology files (load/nccl_topo.c) ---- */

#include "load/source.h" /* here, not above: these tests are appended as a block */

static bool near(double x, double want)
{
  return x > want - 0.01 && x < want + 0.01;
}

/* Loads tests/data/REL as --input does (sniffing the format), with the
 * NVSwitch inference gr_source_load adds. */
static void load_input_ok(const char *rel, bool pcie_only, struct gr_topo *t, struct gr_analysis *a)
{
  struct gr_err err = {0};
  char *p = path_of(data_dir(), rel);
  struct gr_source src = gr_source_from(NULL, p, NULL, NULL, pcie_only);
  if (gr_source_load(&src, t, &err) != 0)
    fail_msg("%s: %s", rel, err.msg);
  free(p);
  gr_analyze(t, a);
}

static const char *nic_level(const struct gr_analysis *a, int g, int n, char *buf)
{
  return gr_level_str(&a->gpu_nic[g * (int)a->t->nnics + n], buf, 16);
}

static const char *nccl_level(const struct gr_analysis *a, int g1, int g2)
{
  return gr_nccl_level_str(gr_gpu_path(a, (size_t)g1, (size_t)g2).nccl);
}

static void nccl_p4d_as_nccl_sees_it(void **state)
{
  struct gr_topo t;
  struct gr_analysis a;
  char l[16];
  (void)state;
  load_input_ok("nccl-topo/aws-ofi-nccl_p4d-24xl-topo.xml", false, &t, &a);
  assert_string_equal(t.source_kind, "nccl");
  assert_int_equal(t.ngpus, 8);
  assert_int_equal(t.nnics, 4);
  assert_int_equal(t.npackages, 2);
  assert_int_equal(t.nnumas, 2);
  assert_false(t.link_details);
  assert_string_equal(t.packages[0].cpu_vendor, "GenuineIntel");
  assert_int_equal(t.packages[1].cpu_model_number, 85);
  assert_string_equal(t.pci[t.gpus[0]].cpulist, "0-23,48-71");
  assert_string_equal(t.pci[t.gpus[7]].cpulist, "24-47,72-95");
  const struct gr_pci *g0 = &t.pci[t.gpus[0]];
  assert_int_equal(g0->link.cur_gen, 3);
  assert_int_equal(g0->link.max_width, 16);
  assert_int_equal(t.pci[g0->switch_up >= 0 ? g0->switch_up : t.pci[g0->parent].switch_up].domain, 0xffff);
  /* no NVLink in the file: the A100 SXM4's NVSwitch fabric, inferred */
  assert_int_equal(t.nfabrics, 1);
  assert_int_equal(t.fabrics[0].from, GR_FABRIC_INFERRED);
  assert_string_equal(tu_level(&a, 0, 7, l), "NV12");
  for (int g = 0; g < 8; g++)
    for (int n = 0; n < 4; n++)
      assert_string_equal(nic_level(&a, g, n, l), g / 2 == n ? "PIX" : g / 4 == n / 2 ? "NODE" : "SYS");
  gr_analysis_free(&a);
  gr_topo_free(&t);
  load_input_ok("nccl-topo/aws-ofi-nccl_p4d-24xl-topo.xml", true, &t, &a);
  for (int i = 0; i < 8; i++)
    for (int j = 0; j < 8; j++) {
      const char *want = i == j ? "X" : i / 2 == j / 2 ? "PIX" : i / 4 == j / 4 ? "NODE" : "SYS";
      assert_string_equal(tu_level(&a, i, j, l), want);
      if (i != j) /* NCCL reaches each top-level element through the CPU: PHB */
        assert_string_equal(nccl_level(&a, i, j), strcmp(want, "NODE") == 0 ? "PHB" : want);
    }
  assert_int_equal(a.nhives, 4);
  gr_analysis_free(&a);
  gr_topo_free(&t);
}

static void nccl_g5_has_no_ids(void **state)
{
  struct gr_topo t;
  struct gr_analysis a;
  (void)state;
  load_input_ok("nccl-topo/aws-ofi-nccl_g5.48xl-topo.xml", false, &t, &a);
  assert_int_equal(t.ngpus, 0);
  assert_int_equal(t.nnics, 0);
  assert_int_equal(t.npackages, 2);
  assert_int_equal(t.nwarnings, 1);
  assert_non_null(strstr(t.warnings[0], "9 <pci> elements carry no class"));
  gr_analysis_free(&a);
  gr_topo_free(&t);
  /* the loader on its own, by path: the same, and a hwloc file is not its format */
  struct gr_err err = {0};
  char *p = path_of(data_dir(), "nccl-topo/aws-ofi-nccl_g5.48xl-topo.xml");
  assert_int_equal(gr_load_nccl_topo(p, &t, &err), 0);
  assert_int_equal(t.npci, 9 * 3); /* each: host bridge, root port, device */
  gr_topo_free(&t);
  free(p);
  p = path_of(data_dir(), "hwloc/nvidiaDGX2.xml");
  assert_int_equal(gr_load_nccl_topo(p, &t, &err), -1);
  assert_non_null(strstr(err.msg, "nvidiaDGX2.xml:2:1: document type declarations are not part of an NCCL topology file"));
  free(p);
}

static void nccl_nvswitch_fabric_and_nics(void **state)
{
  struct gr_topo t;
  struct gr_analysis a;
  char l[16];
  (void)state;
  load_input_ok("nccl-topo/gpurig_h100-nvswitch.xml", false, &t, &a);
  assert_int_equal(t.ngpus, 4);
  assert_int_equal(t.nnics, 2);
  assert_int_equal(t.nwarnings, 0);
  assert_string_equal(t.pci[t.nics[0]].osdevs, "mlx5_0");
  assert_string_equal(t.pci[t.nics[1]].osdevs, "mlx5_1");
  assert_string_equal(t.pci[t.nics[0]].rdma_name, "mlx5_0");
  assert_int_equal(t.ngpulinks, 0);
  assert_int_equal(t.nfabrics, 1);
  const struct gr_fabric *f = &t.fabrics[0];
  assert_int_equal(f->from, GR_FABRIC_NCCL);
  assert_int_equal(f->nswitches, 4);
  assert_int_equal(f->gpulink_gen, 4);
  assert_int_equal(f->nmembers, 4);
  for (size_t m = 0; m < f->nmembers; m++) {
    assert_int_equal(f->members[m].links, 18);
    assert_true(near(f->members[m].gbps, 450.0)); /* the catalog's 25 GB/s per link */
  }
  assert_string_equal(tu_level(&a, 0, 3, l), "NV18");
  gr_analysis_free(&a);
  gr_topo_free(&t);
  load_input_ok("nccl-topo/gpurig_h100-nvswitch.xml", true, &t, &a);
  assert_string_equal(tu_level(&a, 0, 1, l), "PXB"); /* GPU1 sits one switch further down */
  assert_string_equal(tu_level(&a, 2, 3, l), "PIX");
  assert_string_equal(tu_level(&a, 1, 2, l), "SYS");
  assert_string_equal(nic_level(&a, 0, 0, l), "PXB");
  assert_string_equal(nic_level(&a, 1, 0, l), "PIX");
  assert_string_equal(nic_level(&a, 3, 1, l), "PIX");
  gr_analysis_free(&a);
  gr_topo_free(&t);
}

static void nccl_gpu_nvlinks_counted_once(void **state)
{
  struct gr_topo t;
  struct gr_analysis a;
  char l[16];
  (void)state;
  load_input_ok("nccl-topo/gpurig_v100-mesh.xml", false, &t, &a);
  assert_int_equal(t.ngpus, 4);
  assert_int_equal(t.ngpulinks, 4); /* both ends list each of the 4 pairs */
  for (size_t k = 0; k < t.ngpulinks; k++) {
    const struct gr_gpulink *v = &t.gpulinks[k];
    int pair = t.pci[v->a].gpu_index * 4 + t.pci[v->b].gpu_index;
    assert_int_equal(v->count, pair == 1 || pair == 11 ? 2 : 1);
    assert_true(near(v->bw_gbps, v->count * 25.0));
  }
  assert_string_equal(tu_level(&a, 0, 1, l), "NV2");
  assert_string_equal(tu_level(&a, 0, 2, l), "NV1");
  assert_string_equal(tu_level(&a, 0, 3, l), "NODE");
  assert_string_equal(nccl_level(&a, 0, 3), "PHB");
  assert_string_equal(tu_level(&a, 2, 3, l), "NV2");
  gr_analysis_free(&a);
  gr_topo_free(&t);
}

static void nccl_cpu_links_and_pci_less_nic(void **state)
{
  struct gr_topo t;
  struct gr_analysis a;
  char l[16], bus[32];
  (void)state;
  load_input_ok("nccl-topo/gpurig_power9-gh200.xml", false, &t, &a);
  assert_string_equal(t.product, "two CPUs with NVLink");
  assert_int_equal(t.ngpus, 3);
  assert_int_equal(t.nnics, 1);
  int cpu_links = 0;
  for (size_t k = 0; k < t.ngpulinks; k++) {
    const struct gr_gpulink *v = &t.gpulinks[k];
    if (v->b >= 0)
      continue;
    cpu_links++;
    bool gh200 = t.pci[v->a].gpu_index == 2;
    assert_int_equal(v->peer_package, gh200 ? 1 : 0);
    assert_int_equal(v->count, gh200 ? 10 : 3);
    /* c2c: 45000 MB/s x 10 links; V100: 3 links x the catalog's 25 GB/s */
    assert_true(near(v->bw_gbps, gh200 ? 450.0 : 75.0));
  }
  assert_int_equal(cpu_links, 3);
  assert_string_equal(tu_level(&a, 0, 1, l), "NV3");
  assert_string_equal(tu_level(&a, 0, 2, l), "SYS");
  const struct gr_pci *nic = &t.pci[t.nics[0]];
  assert_string_equal(nic->osdevs, "vnic0");
  assert_int_equal(t.pci[nic->parent].role, GR_ROLE_HOSTBRIDGE);
  assert_string_equal(gr_pci_busid(nic, bus, sizeof(bus)), "ffffffff:00:00.3");
  assert_string_equal(nic_level(&a, 2, 0, l), "NODE");
  assert_string_equal(t.pci[t.gpus[2]].cpulist, "32-63");
  gr_analysis_free(&a);
  gr_topo_free(&t);
}

/* A minimal file around body (a <cpu> with one GPU at 0000:01:00.0 first),
 * loaded from memory as "t.xml"; returns the load's status. */
static int nccl_text(const char *body, struct gr_topo *t, struct gr_err *err)
{
  char *text = xasprintf("<system version=\"1\">\n<cpu numaid=\"0\" affinity=\"ff\">\n%s\n</cpu>\n</system>\n", body);
  int rc = gr_load_nccl_topo_buffer("t.xml", text, strlen(text), t, err);
  free(text);
  return rc;
}

static void expect_nccl_error(const char *text, const char *want)
{
  struct gr_topo t;
  struct gr_err err = {0};
  if (gr_load_nccl_topo_buffer("t.xml", text, strlen(text), &t, &err) != -1)
    fail_msg("accepted: %s", text);
  assert_int_equal(err.code, GR_EXIT_FAIL);
  if (strncmp(err.msg, want, strlen(want)) != 0)
    fail_msg("got '%s', want '%s...'", err.msg, want);
  assert_null(strchr(err.msg, '\n'));
  assert_int_equal(t.npci, 0);
  assert_null(t.source_kind);
}

#define GPU_PCI "<pci busid=\"0000:01:00.0\" class=\"0x030200\" vendor=\"0x10de\" device=\"0x1db1\">"

static void nccl_malformed_files(void **state)
{
  (void)state;
  const struct {
    const char *text, *want;
  } cases[] = {
      {"", "t.xml:1:1: no <system> element"},
      {"<system version=\"1\">\n  <cpu numaid=\"0\">\n    <pci busid=\"0000:01:00.0\"\n",
       "t.xml:3:5: unterminated tag <pci>"},
      {"<system version=\"1\">\n<cpu numaid=\"0\">\n</system>", "t.xml:3:1: closing tag </system> does not match <cpu>"},
      {"<system version=\"1\"><cpu numaid=\"0\">", "t.xml:1:21: <cpu> is never closed"},
      {"<system version=\"2\"/>", "t.xml:1:18: version=\"2\": gpurig reads version 1"},
      {"<system/>", "t.xml:1:1: <system>: no version attribute"},
      {"<topology version=\"2.0\"/>", "t.xml:1:1: expected <system version=\"1\">"},
      {"<system version=\"1\"/>\n<system version=\"1\"/>", "t.xml:2:1: a second top-level element"},
      {"<system version=\"1\">x</system>", "t.xml:1:21: text outside a tag"},
      {"<!DOCTYPE system [<!ENTITY a \"b\">]><system version=\"1\"/>", "t.xml:1:1: document type declarations"},
      {"<system version=\"1\"><!-- open", "t.xml:1:21: comment never closed"},
      {"<system version=\"1\" version=\"1\"/>", "t.xml:1:21: attribute version given twice"},
      {"<system version=1/>", "t.xml:1:17: expected a quoted value"},
      {"<system version=\"1/>", "t.xml:1:17: unterminated attribute value"},
      {"<system version=\"1\"\x01/>", "t.xml:1:20: expected a space"},
      {"<system version=\"1\">\n\n  <cpu\0 numaid=\"0\"/></system>", "t.xml:3:7: binary data (NUL byte)"},
      {"<system version=\"1\"><cpu numaid=\"\xff\"/></system>", "t.xml:1:34: byte 0xff inside an attribute value"},
      {"<system version=\"1\"><cpu/></system>", "t.xml:1:21: <cpu>: no numaid attribute"},
      {"<system version=\"1\"><cpu numaid=\"0\"/><cpu numaid=\"0\"/></system>", "t.xml:1:38: <cpu>: numaid 0 given twice"},
      {"<system version=\"1\"><cpu numaid=\"0\" affinity=\"xyz\"/></system>", "t.xml:1:47: affinity=\"xyz\": expected a CPU mask"},
      {"<system version=\"1\"><cpu numaid=\"0\"><pci busid=\"1:2\"/></cpu></system>", "t.xml:1:49: busid=\"1:2\": expected a PCI bus id"},
      {"<system version=\"1\"><cpu numaid=\"0\"><pci class=\"0x0302\"/></cpu></system>", "t.xml:1:37: <pci>: no busid attribute"},
      {"<system version=\"1\"><cpu numaid=\"0\"><pci busid=\"0000:01:00.0\" vendor=\"0x10000\"/></cpu></system>",
       "t.xml:1:71: vendor=\"0x10000\": expected a hex number up to 0xffff"},
      {"<system version=\"1\"><cpu numaid=\"0\"><pci busid=\"0000:01:00.0\"/><pci busid=\"0:1:0.0\"/></cpu></system>",
       "t.xml:1:76: busid=\"0:1:0.0\": bus id given twice (first at line 1, column 37)"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    /* the NUL case is one string with an embedded NUL: measure it by hand */
    if (strstr(cases[i].want, "NUL byte")) {
      static const char nul[] = "<system version=\"1\">\n\n  <cpu\0 numaid=\"0\"/></system>";
      struct gr_topo t;
      struct gr_err err = {0};
      assert_int_equal(gr_load_nccl_topo_buffer("t.xml", nul, sizeof(nul) - 1, &t, &err), -1);
      assert_string_equal(err.msg, "t.xml:3:7: binary data (NUL byte): not an NCCL topology file");
      continue;
    }
    expect_nccl_error(cases[i].text, cases[i].want);
  }
}

static void nccl_limits(void **state)
{
  (void)state;
  struct gr_topo t;
  struct gr_err err = {0};
  /* 70 nested <pci> under <system><cpu>: refused at the 63rd (line 64), the first past 64 levels */
  char *deep = xstrdup("<system version=\"1\"><cpu numaid=\"0\">");
  for (int i = 0; i < 70; i++) {
    char *n = xasprintf("%s\n<pci busid=\"0000:%02x:00.0\">", deep, i);
    free(deep);
    deep = n;
  }
  assert_int_equal(gr_load_nccl_topo_buffer("t.xml", deep, strlen(deep), &t, &err), -1);
  assert_string_equal(err.msg, "t.xml:64:1: elements nested more than 64 levels deep (a real file has under 10)");
  free(deep);
  /* a count past any NVLink, and one that does not fit a long */
  assert_int_equal(nccl_text(GPU_PCI "<gpu sm=\"70\"><nvlink target=\"0000:02:00.0\" tclass=\"0x030200\" "
                             "count=\"99999999999999999999\"/></gpu></pci>", &t, &err), -1);
  assert_non_null(strstr(err.msg, "t.xml:3:"));
  assert_non_null(strstr(err.msg, "count=\"99999999999999999999\": expected a whole number from 1 to 64"));
  assert_int_equal(nccl_text(GPU_PCI "<gpu sm=\"70\"><nvlink target=\"0000:02:00.0\" tclass=\"0x068000\" "
                             "count=\"65\"/></gpu></pci>", &t, &err), -1);
  assert_non_null(strstr(err.msg, "expected a whole number from 1 to 64"));
  /* a value past NCCL's 255 bytes */
  char *longname = xasprintf("<nic><net name=\"%0300d\"/></nic>", 0);
  assert_int_equal(nccl_text(longname, &t, &err), -1);
  assert_non_null(strstr(err.msg, "t.xml:3:17: attribute value longer than 255 bytes"));
  free(longname);
  /* more children than NCCL's 640 in one element */
  size_t cap = 700 * 40 + 200, off = 0;
  char *wide = xmalloc(cap);
  off += (size_t)snprintf(wide + off, cap - off, "<system version=\"1\"><cpu numaid=\"0\">");
  for (int i = 0; i < 700; i++)
    off += (size_t)snprintf(wide + off, cap - off, "<x/>");
  off += (size_t)snprintf(wide + off, cap - off, "</cpu></system>");
  assert_int_equal(gr_load_nccl_topo_buffer("t.xml", wide, off, &t, &err), -1);
  assert_non_null(strstr(err.msg, "more than 640 elements inside one <cpu>"));
  free(wide);
}

static void nccl_survivable_problems_are_warnings(void **state)
{
  (void)state;
  struct gr_topo t;
  struct gr_err err = {0};
  /* ends that disagree: the lower count; a target that is no GPU; an
   * element out of place; a device without class; an unknown speed */
  int rc = nccl_text(GPU_PCI "<gpu sm=\"70\"><nvlink target=\"0000:02:00.0\" count=\"2\" tclass=\"0x030200\"/>"
                     "<nvlink target=\"0000:09:00.0\" count=\"1\" tclass=\"0x030200\"/></gpu></pci>\n"
                     "<pci busid=\"0000:02:00.0\" class=\"0x030200\" vendor=\"0x10de\" device=\"0x1db1\" link_speed=\"9 GT/s\">"
                     "<gpu sm=\"70\"><nvlink target=\"0000:01:00.0\" count=\"1\" tclass=\"0x030200\"/></gpu></pci>\n"
                     "<gpu/>\n<pci busid=\"0000:03:00.0\"/>",
                     &t, &err);
  if (rc != 0)
    fail_msg("%s", err.msg);
  assert_int_equal(t.ngpus, 2);
  assert_int_equal(t.ngpulinks, 1);
  assert_int_equal(t.gpulinks[0].count, 1);
  const char *want[] = {"t.xml:4:88: link_speed \"9 GT/s\" is not a PCIe rate", "t.xml:3:164: NVLink target 0000:09:00.0 is not a GPU",
                        "t.xml: GPU 0000:01:00.0 lists 2 NVLinks to 0000:02:00.0, which lists 1 back: counted 1",
                        "t.xml:5:1: <gpu> inside <cpu> is not where NCCL reads it: ignored",
                        "t.xml: 1 <pci> element carries no class"};
  assert_int_equal(t.nwarnings, 5);
  for (size_t i = 0; i < 5; i++) {
    bool found = false;
    for (size_t w = 0; w < t.nwarnings; w++)
      found |= strstr(t.warnings[w], want[i]) != NULL;
    if (!found)
      fail_msg("no warning '%s' (first: %s)", want[i], t.warnings[0]);
  }
  gr_topo_free(&t);
  /* many bad targets: ten warnings one by one, the rest counted */
  char *many = xstrdup(GPU_PCI "<gpu sm=\"70\">");
  for (int i = 0; i < 30; i++) {
    char *n = xasprintf("%s<nvlink target=\"0000:%02x:00.0\" count=\"1\" tclass=\"0x030200\"/>", many, 0x40 + i);
    free(many);
    many = n;
  }
  char *all = xasprintf("%s</gpu></pci>", many);
  assert_int_equal(nccl_text(all, &t, &err), 0);
  assert_int_equal(t.nwarnings, 11);
  assert_non_null(strstr(t.warnings[10], "20 more problems like those above"));
  gr_topo_free(&t);
  free(many);
  free(all);
  /* the class NCCL writes when it could not read /sys ("0x03"): a prefix */
  assert_int_equal(nccl_text("<pci busid=\"0000:01:00.0\" class=\"0x03\"><gpu/></pci>"
                             "<pci busid=\"0000:02:00.0\" class=\"0x0207\"/>", &t, &err), 0);
  assert_int_equal(t.nwarnings, 0);
  assert_int_equal(t.ngpus, 1);
  assert_int_equal(t.pci[t.gpus[0]].class_id, 0x030200); /* 0x0300 counts only from GPU makers */
  assert_int_equal(t.nnics, 1);
  assert_int_equal(t.pci[t.nics[0]].class_id, 0x020700);
  gr_topo_free(&t);
  /* a class of another kind holding a <gpu>: a GPU, as NCCL counts it, said once */
  assert_int_equal(nccl_text("<pci busid=\"0000:01:00.0\" class=\"0x010802\"><gpu/></pci>", &t, &err), 0);
  assert_int_equal(t.ngpus, 1);
  assert_int_equal(t.nwarnings, 1);
  assert_string_equal(t.warnings[0], "t.xml:3:1: a <pci> of class 0x010802 holds a <gpu>: counted as a GPU, as NCCL counts it");
  gr_topo_free(&t);
  assert_int_equal(nccl_text("<pci busid=\"0000:01:00.0\" class=\"0x030\"/>", &t, &err), -1);
  assert_string_equal(err.msg, "t.xml:3:34: class=\"0x030\": expected a PCI class such as 0x030200");
}

static void nccl_sniff_and_affinity(void **state)
{
  (void)state;
  const char *yes[] = {"<system version=\"1\">", "\xef\xbb\xbf<?xml version=\"1.0\"?>\n<!-- c -> -->\n<system>",
                       "  <system/>"};
  const char *no[] = {"", "<topology version=\"2.0\">", "<systemx>", "<!-- <system> -->", "<?xml?><foo/><system/>",
                      "<!-- open <system>"};
  for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
    assert_true(gr_nccl_topo_sniff(yes[i], strlen(yes[i])));
  for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
    assert_false(gr_nccl_topo_sniff(no[i], strlen(no[i])));
  const struct {
    const char *mask, *list;
  } masks[] = {{"ffffffff,00000001", "0,32-63"}, {"0", NULL}, {"80000000,00000000,00000005", "0,2,95"},
               {"FF", "0-7"}};
  for (size_t i = 0; i < sizeof(masks) / sizeof(masks[0]); i++) {
    struct gr_topo t;
    struct gr_err err = {0};
    char *text = xasprintf("<system version=\"1\"><cpu numaid=\"3\" affinity=\"%s\">" GPU_PCI "<gpu/></pci></cpu></system>",
                           masks[i].mask);
    if (gr_load_nccl_topo_buffer("t.xml", text, strlen(text), &t, &err) != 0)
      fail_msg("%s", err.msg);
    const struct gr_pci *g = &t.pci[t.gpus[0]];
    if (masks[i].list)
      assert_string_equal(g->cpulist, masks[i].list);
    else
      assert_null(g->cpulist);
    assert_int_equal(g->numa, 3);
    gr_topo_free(&t);
    free(text);
  }
}

/* Writes an NCCL topology file of n GPUs (two <cpu>, one bus each) and loads
 * it as --input does; the return and err of gr_source_load. */
static int nccl_gpus_load(int n, struct gr_topo *t, struct gr_err *err)
{
  char path[] = "/tmp/gpurig-nccl-XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  FILE *f = fdopen(fd, "w");
  assert_non_null(f);
  fprintf(f, "<system version=\"1\">\n");
  for (int c = 0; c < 2; c++) {
    fprintf(f, "<cpu numaid=\"%d\" affinity=\"%d\">\n", c, c + 1);
    for (int i = c; i < n; i += 2)
      fprintf(f, "<pci busid=\"%04x:%02x:00.0\" class=\"0x030200\" vendor=\"0x10de\" device=\"0x1db1\"><gpu/></pci>\n",
              i / 200, i % 200 + 1);
    fprintf(f, "</cpu>\n");
  }
  fprintf(f, "</system>\n");
  assert_int_equal(fclose(f), 0);
  struct gr_source src = gr_source_from(NULL, path, NULL, NULL, false);
  int rc = gr_source_load(&src, t, err);
  unlink(path);
  return rc;
}

/* NCCL topology files get hwloc XML's GPU cap: 512 load, 513 are refused
 * in one line (2,048 used to take 101 s and 907 MB in topo). */
static void nccl_gpu_cap(void **state)
{
  struct gr_topo t;
  struct gr_err err = {0};
  (void)state;
  if (nccl_gpus_load(GR_SOURCE_GPUS_MAX, &t, &err) != 0)
    fail_msg("%s", err.msg);
  assert_int_equal(t.ngpus, GR_SOURCE_GPUS_MAX);
  gr_topo_free(&t);
  assert_int_equal(nccl_gpus_load(GR_SOURCE_GPUS_MAX + 1, &t, &err), -1);
  assert_int_equal(err.code, GR_EXIT_FAIL);
  assert_non_null(strstr(err.msg, ": 513 GPUs; gpurig reads at most 512 GPUs in one machine"));
  gr_topo_free(&t);
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
      cmocka_unit_test(nccl_p4d_as_nccl_sees_it),
      cmocka_unit_test(nccl_g5_has_no_ids),
      cmocka_unit_test(nccl_nvswitch_fabric_and_nics),
      cmocka_unit_test(nccl_gpu_nvlinks_counted_once),
      cmocka_unit_test(nccl_cpu_links_and_pci_less_nic),
      cmocka_unit_test(nccl_malformed_files),
      cmocka_unit_test(nccl_limits),
      cmocka_unit_test(nccl_gpu_cap),
      cmocka_unit_test(nccl_survivable_problems_are_warnings),
      cmocka_unit_test(nccl_sniff_and_affinity),
  };
  return cmocka_run_group_tests(tests, tu_setup_data, NULL);
}
