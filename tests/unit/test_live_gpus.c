/* The light live loader (gr_load_live_gpus, what plan and report load a
 * machine with): every device it keeps is the whole loader's, field for
 * field, on every gathered tree; and it opens no device's config space,
 * which inotify shows (a kernel event per open, no interposed library). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "testutil.h"
#include "analysis/machine.h"
#include "base/fs.h"
#include "load/loaders.h"
#include "load/source.h"

static void load(const char *root, bool light, struct gr_topo *t)
{
  struct gr_err err = {0};
  struct gr_fs fs;
  assert_int_equal(gr_fs_init(&fs, root), 0);
  if ((light ? gr_load_live_gpus(&fs, t, &err) : gr_load_live(&fs, t, &err)) != 0)
    fail_msg("%s (%s): %s", root, light ? "light" : "whole", err.msg);
}

static const struct gr_pci *same_busid(const struct gr_topo *t, const struct gr_pci *p)
{
  for (size_t i = 0; i < t->npci; i++) {
    const struct gr_pci *q = &t->pci[i];
    if (q->role == p->role && q->domain == p->domain && q->bus == p->bus && q->dev == p->dev && q->func == p->func)
      return q;
  }
  return NULL;
}

static bool str_eq(const char *a, const char *b)
{
  return a == b || (a && b && strcmp(a, b) == 0);
}

/* Every node the light loader keeps, against the whole loader's node of
 * the same bus id: its place, identity, locality, link and names. */
static void compare_tree(const char *root)
{
  struct gr_topo whole, light;
  load(root, false, &whole);
  load(root, true, &light);
  size_t endpoints = 0;
  for (size_t i = 0; i < whole.npci; i++)
    endpoints += whole.pci[i].role == GR_ROLE_ENDPOINT;
  assert_int_equal(light.ngpus, whole.ngpus);
  assert_int_equal(light.nnics, whole.nnics);
  assert_int_equal(light.naccels, whole.naccels);
  assert_int_equal(light.npackages, whole.npackages);
  assert_int_equal(light.nnumas, whole.nnumas);
  assert_int_equal(light.pci_devices_seen, endpoints);
  assert_true(light.npci <= whole.npci);
  for (size_t i = 0; i < light.npci; i++) {
    const struct gr_pci *l = &light.pci[i], *w = same_busid(&whole, l);
    if (!w)
      fail_msg("%s: node %zu (%04x:%02x:%02x.%x) is not the whole loader's", root, i, l->domain, l->bus, l->dev,
               l->func);
    const struct gr_pci *lp = l->parent >= 0 ? &light.pci[l->parent] : NULL;
    const struct gr_pci *wp = w->parent >= 0 ? &whole.pci[w->parent] : NULL;
    assert_true(!lp == !wp);
    if (lp)
      assert_ptr_equal(same_busid(&whole, lp), wp);
    assert_int_equal(l->kind, w->kind);
    assert_int_equal(l->class_id, w->class_id);
    assert_int_equal(l->vendor, w->vendor);
    assert_int_equal(l->device, w->device);
    if (l->role == GR_ROLE_HOSTBRIDGE) /* the range the bus id names ("0000:[40-46]") */
      assert_int_equal(l->sub_bus, w->sub_bus);
    assert_int_equal(l->numa, w->numa);
    assert_int_equal(l->gpu_numa, w->gpu_numa);
    assert_int_equal(l->package, w->package);
    assert_true(str_eq(l->cpulist, w->cpulist));
    assert_true(str_eq(l->osdevs, w->osdevs));
    assert_true(str_eq(l->rdma_name, w->rdma_name));
    assert_int_equal(l->rdma, w->rdma);
    assert_int_equal(l->gpu_index, w->gpu_index);
    assert_int_equal(l->link.cur_gen, w->link.cur_gen);
    assert_int_equal(l->link.cur_width, w->link.cur_width);
    assert_int_equal(l->link.max_gen, w->link.max_gen);
    assert_int_equal(l->link.max_width, w->link.max_width);
  }
  /* the kept nodes come in the whole loader's order */
  for (size_t i = 1; i < light.npci; i++)
    assert_true(same_busid(&whole, &light.pci[i - 1]) < same_busid(&whole, &light.pci[i]));
  gr_topo_free(&whole);
  gr_topo_free(&light);
}

static void compare_trees_in(const char *dir)
{
  DIR *d = opendir(dir);
  assert_non_null(d);
  struct dirent *e;
  size_t n = 0;
  while ((e = readdir(d))) {
    char *root = xasprintf("%s/%s", dir, e->d_name);
    struct stat st;
    char *pci = xasprintf("%s/sys/bus/pci/devices", root);
    if (e->d_name[0] != '.' && stat(pci, &st) == 0) {
      compare_tree(root);
      n++;
    }
    free(pci);
    free(root);
  }
  closedir(d);
  assert_true(n >= 4);
}

static void same_nodes_as_the_whole_loader(void **state)
{
  (void)state;
  char *fixtures = xasprintf("%s/trees", getenv("GPURIG_TEST_DATA"));
  compare_trees_in(fixtures);
  compare_trees_in(getenv("GPURIG_TEST_TREES")); /* hwloc's gathered trees: many devices that are no GPU */
  free(fixtures);
}

/* Watches every device directory of the tree at root for opens. */
static int watch_devices(const char *root)
{
  int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  assert_true(fd >= 0);
  char *dir = xasprintf("%s/sys/bus/pci/devices", root);
  DIR *d = opendir(dir);
  assert_non_null(d);
  struct dirent *e;
  while ((e = readdir(d))) {
    char *link = xasprintf("%s/%s", dir, e->d_name), real[PATH_MAX];
    if (e->d_name[0] != '.' && realpath(link, real))
      assert_true(inotify_add_watch(fd, real, IN_OPEN) >= 0);
    free(link);
  }
  closedir(d);
  free(dir);
  return fd;
}

/* How many opens of a file named `config` the watch saw since the last call. */
static int config_opens(int fd)
{
  char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
  int n = 0;
  ssize_t len;
  while ((len = read(fd, buf, sizeof(buf))) > 0)
    for (char *p = buf; p < buf + len;) {
      const struct inotify_event *ev = (const struct inotify_event *)p;
      n += ev->len && strcmp(ev->name, "config") == 0;
      p += sizeof(*ev) + ev->len;
    }
  assert_true(len < 0 && errno == EAGAIN);
  return n;
}

/* Makes every config file of a device that is no GPU unreadable (mode 000:
 * a user other than root cannot open it) or, with remove, takes it away. */
static void spoil_other_configs(const char *root, bool remove_them)
{
  const char *others[] = {"0000:00:00.0", "0000:00:01.0", "0000:00:02.0", "0000:00:04.0", "0000:00:05.0"};
  for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
    char *f = xasprintf("%s/sys/bus/pci/devices/%s/config", root, others[i]);
    assert_int_equal(remove_them ? unlink(f) : chmod(f, 0), 0);
    free(f);
  }
}

/* The machine pipeline as plan and report run it on a tree (--root). */
static void open_as_plan_does(const char *root, struct gr_machine *m)
{
  struct gr_source src = gr_source_from(root, NULL, NULL, NULL, false);
  struct gr_err err = {0};
  src.gpu_paths = true;
  if (gr_machine_open(&src, GR_MACHINE_PREDICT | GR_MACHINE_GROUPS, m, &err) != 0)
    fail_msg("%s: %s", root, err.msg);
}

/* h200-vm: one GPU and a NIC beside five devices that are neither. */
static void no_config_space_read(void **state)
{
  (void)state;
  for (int remove_them = 0; remove_them < 2; remove_them++) {
    char *root = tu_tree_copy("h200-vm");
    spoil_other_configs(root, remove_them);
    int fd = watch_devices(root);
    struct gr_machine m = {0};
    open_as_plan_does(root, &m);
    assert_int_equal(m.topo.ngpus, 1);
    assert_int_equal(m.topo.pci_devices_seen, 7);
    assert_true(m.predicted);
    assert_int_equal(config_opens(fd), 0); /* not the others', not even the GPU's */
    gr_machine_close(&m);
    /* the watch sees opens: the whole loader (hwloc's PCI discovery) opens
     * the GPU's config space, which is readable */
    struct gr_topo whole;
    load(root, false, &whole);
    assert_int_equal(whole.ngpus, 1);
    assert_true(config_opens(fd) >= 1);
    gr_topo_free(&whole);
    close(fd);
    tu_tree_remove(root);
  }
}

int main(void)
{
  if (!getenv("GPURIG_TEST_DATA") || !getenv("GPURIG_TEST_TREES")) {
    fprintf(stderr, "set GPURIG_TEST_DATA and GPURIG_TEST_TREES (ctest does)\n");
    return 1;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(same_nodes_as_the_whole_loader),
      cmocka_unit_test(no_config_space_read),
  };
  return cmocka_run_group_tests(tests, tu_setup_data, NULL);
}
