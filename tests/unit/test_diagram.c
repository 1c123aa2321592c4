/* The block diagram (print/diagram/diagram.h): on the captures and every bundled
 * rig no two texts overlap, no two boxes overlap, every text stays in its
 * own box, and every GPU is drawn exactly once; the checker itself finds
 * an overlap planted in a real scene; bottleneck links are marked; names
 * from inputs are escaped; the text diagram keeps to 10 lines of the
 * width asked. */
#include "testutil.h"

#include <dirent.h>

#include "analysis/machine.h"
#include "load/source.h"
#include "print/diagram/diagram.h"
#include "print/diagram/diagram_internal.h"

static int open_source(const struct gr_source *src, struct gr_machine *m)
{
  struct gr_err err = {0};
  if (gr_machine_open(src, GR_MACHINE_PREDICT, m, &err) != 0) {
    print_error("%s\n", err.msg);
    return -1;
  }
  return 0;
}

static int open_input(const char *rel, struct gr_machine *m)
{
  char *path = xasprintf("%s/%s", getenv("GPURIG_TEST_DATA"), rel);
  struct gr_source src = gr_source_from(NULL, path, NULL, NULL, false);
  int rc = open_source(&src, m);
  free(path);
  return rc;
}

static size_t count_of(const char *hay, const char *needle)
{
  size_t n = 0;
  for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
    n++;
  return n;
}

/* Every check on one machine: the scene's geometry, each GPU once in the
 * model and once in the SVG, the SVG's root, the text diagram's size. */
static void check_machine(const char *name, const struct gr_machine *m)
{
  struct dg_model d;
  struct dg_scene s;
  struct dg_overlaps o;
  char why[512];
  dg_model_build(m, &d);
  dg_layout(&d, &s);
  dg_scene_overlaps(&s, &o, why, sizeof(why));
  if (o.text_text || o.node_node || o.text_node)
    print_error("%s: %zu text/text, %zu box/box, %zu text/box overlaps; first: %s\n", name, o.text_text, o.node_node,
                o.text_node, why);
  assert_int_equal(o.text_text + o.node_node + o.text_node, 0);
  char *svg = gr_diagram_svg(m);
  assert_true(str_starts_with(svg, "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"gr-diagram\" viewBox="));
  assert_int_equal(count_of(svg, "<script"), 0);
  assert_int_equal(count_of(svg, " id="), 0);
  for (size_t g = 0; g < m->topo.ngpus; g++) {
    size_t drawn = 0;
    for (size_t i = 0; i < d.n; i++)
      drawn += d.nodes[i].kind == DG_GPU && d.nodes[i].gpu == (int)g;
    char attr[48];
    snprintf(attr, sizeof(attr), "data-gpu=\"GPU%zu\"", g);
    if (drawn != 1 || count_of(svg, attr) != 1)
      print_error("%s: GPU%zu drawn %zu times, %zu in the SVG\n", name, g, drawn, count_of(svg, attr));
    assert_int_equal(drawn, 1);
    assert_int_equal(count_of(svg, attr), 1);
  }
  free(svg);
  for (int width = 60; width <= 100; width += 40) {
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    gr_diagram_text(f, m, width);
    fclose(f);
    if (getenv("GPURIG_DIAGRAM_SHOW")) /* to look at them: GPURIG_DIAGRAM_SHOW=1 test_diagram */
      print_message("%s at width %d:\n%s\n", name, width, text);
    size_t lines = 0;
    for (char *line = text, *nl; *line; line = nl + 1) {
      nl = strchr(line, '\n');
      assert_non_null(nl);
      *nl = '\0';
      if (dg_cols(line) > (size_t)width)
        print_error("%s: line wider than %d: %s\n", name, width, line);
      assert_true(dg_cols(line) <= (size_t)width);
      lines++;
    }
    if (lines > 10 || lines == 0)
      print_error("%s: %zu lines of text diagram at width %d\n", name, lines, width);
    assert_true(lines >= 1 && lines <= 10);
    free(text);
  }
  dg_scene_free(&s);
  dg_model_free(&d);
}

static void test_captures(void **state)
{
  (void)state;
  static const char *inputs[] = {"hwloc/nvidiaDGX2.xml", "hwloc-aws/p5en.xml", "hwloc-aws/p4d.xml",
                                 "hwloc-aws/p6-b200.xml", "hwloc/power8gpudistances.xml",
                                 "hwloc/32em64t-2n8c2t-pci-wholeio.xml"};
  for (size_t i = 0; i < sizeof(inputs) / sizeof(inputs[0]); i++) {
    struct gr_machine m;
    assert_int_equal(open_input(inputs[i], &m), 0);
    check_machine(inputs[i], &m);
    gr_machine_close(&m);
  }
}

static void test_gathered_tree(void **state)
{
  (void)state;
  char *root = xasprintf("%s/32intel64-2p8co2t+8ve", getenv("GPURIG_TEST_TREES"));
  struct gr_source src = {.kind = GR_SRC_ROOT, .path = root};
  struct gr_machine m;
  assert_int_equal(open_source(&src, &m), 0);
  assert_int_equal(m.topo.ngpus, 0); /* 8 NEC Vector Engines: accelerators, not GPUs */
  assert_int_equal(m.topo.naccels, 8);
  check_machine(root, &m);
  gr_machine_close(&m);
  free(root);
}

/* Every file of a folder whose name ends in ext, as --rig or --input;
 * returns how many. */
static size_t check_folder(const char *dir, const char *ext, bool rig)
{
  DIR *dp = opendir(dir);
  assert_non_null(dp);
  size_t done = 0;
  for (struct dirent *e; (e = readdir(dp));) {
    size_t n = strlen(e->d_name);
    if (n <= strlen(ext) || strcmp(e->d_name + n - strlen(ext), ext) != 0 || strstr(e->d_name, "_bad-"))
      continue;
    char *path = xasprintf("%s/%s", dir, e->d_name);
    struct gr_source src = gr_source_from(NULL, rig ? NULL : path, rig ? path : NULL, NULL, false);
    struct gr_machine m;
    assert_int_equal(open_source(&src, &m), 0);
    check_machine(path, &m);
    gr_machine_close(&m);
    free(path);
    done++;
  }
  closedir(dp);
  return done;
}

static void test_every_rig(void **state)
{
  (void)state;
  char *bundled = xasprintf("%s/rigs", getenv("GPURIG_DATA"));
  char *tests = xasprintf("%s/rigs", getenv("GPURIG_TEST_DATA"));
  char *nccl = xasprintf("%s/nccl-topo", getenv("GPURIG_TEST_DATA"));
  assert_true(check_folder(bundled, ".rig", true) >= 10);
  assert_true(check_folder(tests, ".rig", true) >= 8);
  assert_true(check_folder(nccl, ".xml", false) >= 6);
  free(bundled);
  free(tests);
  free(nccl);
}

/* Sixty GPUs on one board: one wide row, still nothing overlapping. */
static void test_many_gpus(void **state)
{
  (void)state;
  struct gr_source src = {.kind = GR_SRC_GENERIC, .gpu_model = "RTX 3090", .gpus = 60};
  struct gr_machine m;
  assert_int_equal(open_source(&src, &m), 0);
  check_machine("60x RTX 3090", &m);
  gr_machine_close(&m);
}

/* The checker finds what it is for: a label moved onto a neighbour's, a
 * box moved onto another, a box's text moved out of it. */
static void test_checker_fails(void **state)
{
  (void)state;
  struct gr_machine m;
  struct dg_model d;
  struct dg_scene s;
  struct dg_overlaps o;
  char why[256];
  assert_int_equal(open_input("hwloc/nvidiaDGX2.xml", &m), 0);
  dg_model_build(&m, &d);
  dg_layout(&d, &s);
  dg_scene_overlaps(&s, &o, why, sizeof(why));
  assert_int_equal(o.text_text + o.node_node + o.text_node, 0);
  /* the first two edge labels: the second put over the first */
  struct dg_text *a = NULL, *b = NULL;
  for (size_t k = 0; k < s.ntexts && !b; k++)
    if (s.texts[k].edge && s.texts[k].node == DG_NO_NODE)
      *(a ? &b : &a) = &s.texts[k];
  assert_non_null(b);
  struct dg_box keep = b->box;
  b->box.x = a->box.x + 3;
  b->box.y = a->box.y;
  dg_scene_overlaps(&s, &o, why, sizeof(why));
  assert_true(o.text_text >= 1);
  assert_non_null(strstr(why, "meets text"));
  b->box = keep;
  /* a GPU's box over its neighbour's */
  struct dg_rect *g0 = NULL, *g1 = NULL;
  for (size_t k = 0; k < s.nrects && !g1; k++)
    if (s.rects[k].shape == DG_SHAPE_NODE && s.rects[k].node >= 0 && d.nodes[s.rects[k].node].kind == DG_GPU)
      *(g0 ? &g1 : &g0) = &s.rects[k];
  assert_non_null(g1);
  struct dg_box kept = g1->box;
  g1->box.x = g0->box.x + g0->box.w / 2;
  dg_scene_overlaps(&s, &o, why, sizeof(why));
  assert_true(o.node_node >= 1);
  g1->box = kept;
  /* a GPU's title out of its box */
  for (size_t k = 0; k < s.ntexts; k++)
    if (s.texts[k].node == g0->node) {
      s.texts[k].box.y -= 40;
      break;
    }
  dg_scene_overlaps(&s, &o, why, sizeof(why));
  assert_true(o.text_node >= 1);
  dg_scene_free(&s);
  dg_model_free(&d);
  gr_machine_close(&m);
}

static char *write_rig(const char *text)
{
  char *path = xstrdup("/tmp/gpurig-diagram-XXXXXX.rig");
  int fd = mkstemps(path, 4);
  assert_true(fd >= 0);
  FILE *f = fdopen(fd, "w");
  fputs(text, f);
  fclose(f);
  return path;
}

/* A GPU in an x8 slot holds its pairs below the others: its link is
 * marked, drawn red, and the rest are not. A name with markup and a byte
 * that is not UTF-8 comes out escaped. */
static void test_bottleneck_and_escape(void **state)
{
  (void)state;
  char *path = write_rig("rig \"x8 <test> & 'q' \xff\"\n"
                         "cpu cpu0 \"EPYC 7763\" vendor amd\n"
                         "rootcomplex rc0 cpu0 gen4\n"
                         "switch sw0 rc0 model \"PEX88096\" lanes 96 gen4 uplink gen4 x16\n"
                         "gpu 2 \"RTX 4090\" sw0 p2p on\n"
                         "gpu 1 \"RTX 4090\" sw0 slot gen4 x8 p2p on\n");
  struct gr_source src = gr_source_from(NULL, NULL, path, NULL, false);
  struct gr_machine m;
  assert_int_equal(open_source(&src, &m), 0);
  struct dg_model d;
  dg_model_build(&m, &d);
  size_t bad = 0;
  for (size_t i = 0; i < d.n; i++) {
    if (d.nodes[i].kind != DG_GPU)
      continue;
    assert_int_equal(d.nodes[i].edge_bad, d.nodes[i].gpu == 2);
    bad += d.nodes[i].edge_bad;
    if (d.nodes[i].gpu == 2)
      assert_string_equal(d.nodes[i].edge[0], "Gen4 x8 · 15.8 GB/s");
  }
  assert_int_equal(bad, 1);
  dg_model_free(&d);
  char *svg = gr_diagram_svg(&m);
  assert_int_equal(count_of(svg, "class=\"edge pcie bottleneck\""), 2); /* the link and the legend's sample */
  assert_non_null(strstr(svg, "x8 &lt;test&gt; &amp; 'q' ?"));
  assert_null(strstr(svg, "\xff"));
  free(svg);
  char *dot = gr_diagram_dot(&m);
  assert_non_null(strstr(dot, "label=\"x8 <test> & 'q' ?\""));
  assert_non_null(strstr(dot, "penwidth=3"));
  free(dot);
  gr_machine_close(&m);
  remove(path);
  free(path);
}

/* The text diagram at width 100 of a rig (a name or a path), after every
 * check on its drawing. */
static char *text_of_rig(const char *rig)
{
  struct gr_source src = gr_source_from(NULL, NULL, rig, NULL, false);
  struct gr_machine m;
  assert_int_equal(open_source(&src, &m), 0);
  check_machine(rig, &m);
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  gr_diagram_text(f, &m, 100);
  fclose(f);
  gr_machine_close(&m);
  return text;
}

static char *text_of(const char *rig_text)
{
  char *path = write_rig(rig_text);
  char *text = text_of_rig(path);
  remove(path);
  free(path);
  return text;
}

/* The text diagram of the SYS-4029GP rig: the socket's two root
 * complexes, each switch with its GPUs, the UPI between the sockets, the
 * hives. */
static void test_text_rig(void **state)
{
  (void)state;
  char *text = text_of_rig("sys-4029gp-trt2");
  assert_non_null(strstr(text, "CPU0 Xeon Platinum 8160 ┬─ RC 0000:01 ── PEX9797 x16 up (5.0:1) ── GPU0-4 Gen3 x16\n"));
  assert_non_null(strstr(text, "└─ RC 0000:02 ── PEX9797 x16 up (5.0:1) ── GPU5-9 Gen3 x16\n"));
  assert_non_null(strstr(text, "  ║ UPI · 10 GB/s (NCCL)\n"));
  assert_non_null(strstr(text, "P2P hives: GPU0-4 (PCIe switch) | GPU5-9 (PCIe switch)\n"));
  free(text);
}

/* Twelve root complexes do not fit in ten lines: like ones of a socket
 * fold into one line and a "+N more like this" naming their GPUs; unlike
 * ones past the socket's share are counted. */
static void test_text_folds(void **state)
{
  (void)state;
  char *rig = xstrdup("rig \"folds\"\ncpu cpu0 \"EPYC 7763\"\ncpu cpu1 \"EPYC 7763\"\nintersocket xgmi 32\n");
  for (int c = 0; c < 2; c++)
    for (int r = 0; r < 6; r++) {
      char *more = xasprintf("%srootcomplex rc%d%d cpu%d gen4\ngpu \"RTX 4090\" rc%d%d\n", rig, c, r, c, c, r);
      free(rig);
      rig = more;
    }
  char *text = text_of(rig);
  assert_non_null(strstr(text, "CPU0 EPYC 7763 ┬─ RC 0000:01 ── GPU0 Gen4 x16\n"));
  assert_non_null(strstr(text, "               └─ +5 more like this: GPU1-5\n"));
  assert_non_null(strstr(text, "  ║ Infinity Fabric · 32 GB/s (NCCL)\n"));
  assert_non_null(strstr(text, "               └─ +5 more like this: GPU7-11\n"));
  free(text);
  free(rig);
  /* every root complex unlike the one before: cut at the socket's share */
  rig = xstrdup("rig \"unlike\"\ncpu cpu0 \"EPYC 7763\"\n");
  for (int r = 0; r < 12; r++) {
    char *more = xasprintf("%srootcomplex rc%d cpu0 gen4\ngpu %d \"RTX 4090\" rc%d\n", rig, r, 1 + r % 2, r);
    free(rig);
    rig = more;
  }
  text = text_of(rig);
  assert_non_null(strstr(text, "               ├─ RC 0000:1c ── GPU10-11 Gen4 x16\n"
                               "               └─ +4 more root complexes: GPU12-17\n"));
  free(text);
  free(rig);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_captures),       cmocka_unit_test(test_gathered_tree),
      cmocka_unit_test(test_every_rig),      cmocka_unit_test(test_many_gpus),
      cmocka_unit_test(test_checker_fails),  cmocka_unit_test(test_bottleneck_and_escape),
      cmocka_unit_test(test_text_rig),       cmocka_unit_test(test_text_folds),
  };
  return cmocka_run_group_tests(tests, tu_setup_data, NULL);
}
