/* The sampler (monitor/sampler.h) on a copy of tests/data/trees/epyc-riser
 * whose counter files the test rewrites between steps, with the stand-in
 * NVIDIA libraries (tests/stub): links and their slots, AER deltas by link
 * end, a width change, a GPU that hangs (stale), one that vanishes (lost),
 * Xids from driver events and from a kernel log. */
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"

#include "analysis/machine.h"
#include "gpu/gpu.h"
#include "monitor/logtail.h"
#include "monitor/sampler.h"

struct fixture {
  char *root;
  struct gr_machine m;
  struct gr_gpus g;
  bool have_gpus;
  struct gr_sampler *s;
};

static int setup(void **state)
{
  return tu_setup_data(state);
}

static double quiet_s; /* 0: the sampler's default */

static void open_fixture(struct fixture *f, bool gpus, const char *scenario, const char *kmsg, double timeout_s)
{
  struct gr_err err = {0};
  memset(f, 0, sizeof(*f));
  f->root = tu_tree_copy("epyc-riser");
  struct gr_source src = {.kind = GR_SRC_ROOT, .path = f->root};
  assert_int_equal(gr_machine_open(&src, 0, &f->m, &err), 0);
  setenv("GPURIG_DRIVER_DIR", getenv("GPURIG_TEST_STUB"), 1);
  if (scenario)
    setenv("GPURIG_STUB_SCENARIO", scenario, 1);
  else
    unsetenv("GPURIG_STUB_SCENARIO");
  if (gpus) {
    if (gr_gpus_open(&f->g, &err) != 0)
      fail_msg("%s", err.msg);
    f->have_gpus = true;
  }
  struct gr_sampler_opts o = {.history = 8, .gpu_timeout_s = timeout_s, .kmsg = kmsg, .quiet_s = quiet_s};
  assert_int_equal(gr_sampler_open(&f->m, gpus ? &f->g : NULL, &o, &f->s, &err), 0);
}

static void close_fixture(struct fixture *f)
{
  bool clean = gr_sampler_close(f->s);
  if (f->have_gpus && clean)
    gr_gpus_close(&f->g);
  gr_machine_close(&f->m);
  tu_tree_remove(f->root);
  unsetenv("GPURIG_STUB_SCENARIO");
}

static int link_named(const struct gr_sampler *s, const char *dev_name)
{
  for (size_t i = 0; i < gr_sampler_nlinks(s); i++)
    if (strcmp(gr_sampler_link(s, i)->dev_name, dev_name) == 0)
      return (int)i;
  return -1;
}

static bool has_event(const struct gr_sampler *s, enum gr_mon_event_kind kind, const char *needle)
{
  for (unsigned long k = 0; k < gr_sampler_nevents(s); k++) {
    const struct gr_mon_event *e = gr_sampler_event(s, k);
    if (e && e->kind == kind && strstr(e->f.text, needle))
      return true;
  }
  return false;
}

/* Every link from a GPU to its root port, each once, with its slot; the
 * switch's uplink is shared by GPU3, the NIC and the NVMe drive. */
static void test_links_and_slots(void **state)
{
  struct fixture f;
  (void)state;
  open_fixture(&f, false, NULL, NULL, 0.5);
  /* GPU0, GPU1, GPU2 below root ports; GPU3 below a switch: 3 + 3 links */
  assert_int_equal(gr_sampler_nlinks(f.s), 6);
  int l1 = link_named(f.s, "GPU1 0000:02:00.0");
  assert_true(l1 >= 0);
  assert_string_equal(gr_sampler_link(f.s, (size_t)l1)->port_name, "root port 0000:00:03.1");
  assert_string_equal(gr_sampler_link(f.s, (size_t)l1)->slot, "5");
  int up = link_named(f.s, "switch upstream port 0000:42:00.0");
  if (up < 0) { /* the subject's wording for a switch's upstream port */
    for (size_t i = 0; i < gr_sampler_nlinks(f.s); i++)
      if (strstr(gr_sampler_link(f.s, i)->dev_name, "0000:42:00.0"))
        up = (int)i;
  }
  assert_true(up >= 0);
  assert_string_equal(gr_sampler_link(f.s, (size_t)up)->slot, "7");
  close_fixture(&f);
}

/* Without the kernel's slot names, SMBIOS type 9 names the slot (what root
 * reads in /sys/firmware/dmi/tables/DMI): a record for the device in the
 * slot (bus 02) and one for a root port (00:01.1, as some boards write). */
static void test_smbios_slots(void **state)
{
  struct fixture f;
  (void)state;
  char *root = tu_tree_copy("epyc-riser");
  char path[1024];
  snprintf(path, sizeof(path), "rm -rf '%s/sys/bus/pci/slots' && mkdir -p '%s/sys/firmware/dmi/tables'", root, root);
  assert_int_equal(system(path), 0);
  static const unsigned char table[] = {
      9, 0x11, 0x00, 0x01, 1, 0xA5, 0x0D, 4, 0, 1, 0, 0, 0, 0x00, 0x00, 0x02, 0x00, 'P', 'C', 'I', 'E', '5', 0, 0,
      9, 0x11, 0x01, 0x01, 1, 0xA5, 0x0D, 4, 0, 2, 0, 0, 0, 0x00, 0x00, 0x00, 0x01 << 3 | 1, 'P', 'C', 'I', 'E', '1', 0, 0,
      127, 4, 0xff, 0xfe, 0, 0};
  snprintf(path, sizeof(path), "%s/sys/firmware/dmi/tables/DMI", root);
  FILE *fp = fopen(path, "wb");
  assert_non_null(fp);
  assert_int_equal(fwrite(table, 1, sizeof(table), fp), sizeof(table));
  fclose(fp);
  struct gr_err err = {0};
  struct gr_source src = {.kind = GR_SRC_ROOT, .path = root};
  memset(&f, 0, sizeof(f));
  f.root = root;
  assert_int_equal(gr_machine_open(&src, 0, &f.m, &err), 0);
  struct gr_sampler_opts o = {.history = 4};
  assert_int_equal(gr_sampler_open(&f.m, NULL, &o, &f.s, &err), 0);
  assert_string_equal(gr_sampler_link(f.s, (size_t)link_named(f.s, "GPU1 0000:02:00.0"))->slot, "PCIE5");
  assert_string_equal(gr_sampler_link(f.s, (size_t)link_named(f.s, "GPU0 0000:01:00.0"))->slot, "PCIE1");
  assert_string_equal(gr_sampler_link(f.s, (size_t)link_named(f.s, "GPU2 0000:41:00.0"))->slot, "");
  close_fixture(&f);
}

/* The root port's correctable count climbs: the delta goes to its link's
 * port end, per step, per minute and since start; a width change is an event. */
static void test_aer_climbs(void **state)
{
  struct fixture f;
  struct gr_err err = {0};
  (void)state;
  open_fixture(&f, false, NULL, NULL, 0.5);
  int l1 = link_named(f.s, "GPU1 0000:02:00.0");
  assert_int_equal(gr_sampler_step(f.s, &err), 0);
  struct gr_aer_window w = gr_sampler_link_aer(f.s, (size_t)l1, 1, 0);
  assert_true(w.last.valid);
  assert_int_equal(w.last.value, 7);
  assert_int_equal(w.since.value, 0);
  tu_tree_write_attr(f.root, "0000:00:03.1", "aer_dev_correctable", "RxErr 19\nBadTLP 0\nTOTAL_ERR_COR 19\n");
  tu_tree_write_attr(f.root, "0000:02:00.0", "current_link_width", "4\n");
  assert_int_equal(gr_sampler_step(f.s, &err), 0);
  w = gr_sampler_link_aer(f.s, (size_t)l1, 1, 0);
  assert_int_equal(w.last.value, 19);
  assert_int_equal(w.since.value, 12);
  assert_int_equal(w.minute.value, 12);
  /* the device end counted nothing */
  assert_int_equal(gr_sampler_link_aer(f.s, (size_t)l1, 0, 0).since.value, 0);
  assert_true(has_event(f.s, GR_EV_AER, "12 correctable AER errors at root port 0000:00:03.1"));
  assert_true(has_event(f.s, GR_EV_AER, "slot 5"));
  assert_true(has_event(f.s, GR_EV_WIDTH, "x8 -> x4"));
  /* a third step with nothing new: no new event, the totals stay */
  unsigned long n = gr_sampler_nevents(f.s);
  assert_int_equal(gr_sampler_step(f.s, &err), 0);
  assert_int_equal(gr_sampler_nevents(f.s), n);
  assert_int_equal(gr_sampler_link_aer(f.s, (size_t)l1, 1, 0).since.value, 12);
  assert_int_equal(gr_sampler_count(f.s), 3);
  close_fixture(&f);
}

static unsigned count_events(const struct gr_sampler *s, enum gr_mon_event_kind kind)
{
  unsigned n = 0;
  for (unsigned long k = 0; k < gr_sampler_nevents(s); k++)
    n += gr_sampler_event(s, k)->kind == kind;
  return n;
}

/* A count that rises again inside the quiet time is no new event then, but
 * is reported once the quiet time is over, even if it rose no more. */
static void test_quiet_rise_reported_later(void **state)
{
  struct fixture f;
  struct gr_err err = {0};
  (void)state;
  quiet_s = 0.3;
  open_fixture(&f, false, NULL, NULL, 0.5);
  assert_int_equal(gr_sampler_step(f.s, &err), 0);
  tu_tree_write_attr(f.root, "0000:00:03.1", "aer_dev_correctable", "TOTAL_ERR_COR 19\n");
  assert_int_equal(gr_sampler_step(f.s, &err), 0);
  assert_int_equal(count_events(f.s, GR_EV_AER), 1);
  tu_tree_write_attr(f.root, "0000:00:03.1", "aer_dev_correctable", "TOTAL_ERR_COR 25\n");
  assert_int_equal(gr_sampler_step(f.s, &err), 0);
  assert_int_equal(count_events(f.s, GR_EV_AER), 1); /* quiet */
  usleep(400 * 1000);
  assert_int_equal(gr_sampler_step(f.s, &err), 0); /* no new rise, but the quiet time is over */
  assert_int_equal(count_events(f.s, GR_EV_AER), 2);
  assert_true(has_event(f.s, GR_EV_AER, "6 correctable AER errors at root port 0000:00:03.1"));
  assert_int_equal(gr_sampler_worst(f.s), GR_SEV_WARN);
  /* the first event of each severity, as a finding: watch's exit */
  const struct gr_findings *fs = gr_sampler_findings(f.s);
  assert_int_equal(fs->n, 1);
  assert_string_equal(fs->v[0].id, "monitor.aer");
  assert_int_equal(gr_findings_exit(fs), GR_EXIT_WARN);
  quiet_s = 0;
  close_fixture(&f);
}

/* Under load (the stand-in's "busy": 97 %) a link that drops from Gen4 to
 * Gen3 is downtraining; at idle the same drop is no event. */
static void test_speed_drop_under_load(void **state)
{
  struct fixture f;
  struct gr_err err = {0};
  (void)state;
  open_fixture(&f, true, "busy", NULL, 0.5);
  tu_tree_write_attr(f.root, "0000:41:00.0", "current_link_speed", "16.0 GT/s PCIe\n");
  assert_int_equal(gr_sampler_step(f.s, &err), 0);
  tu_tree_write_attr(f.root, "0000:41:00.0", "current_link_speed", "8.0 GT/s PCIe\n");
  assert_int_equal(gr_sampler_step(f.s, &err), 0);
  assert_true(has_event(f.s, GR_EV_WIDTH, "GPU2 0000:41:00.0 <-> root port 0000:40:01.1, slot 3 changed speed under "
                                          "load: Gen4 -> Gen3 (Gen4 at most)"));
  close_fixture(&f);

  open_fixture(&f, true, NULL, NULL, 0.5); /* idle: 0 % */
  tu_tree_write_attr(f.root, "0000:41:00.0", "current_link_speed", "16.0 GT/s PCIe\n");
  assert_int_equal(gr_sampler_step(f.s, &err), 0);
  tu_tree_write_attr(f.root, "0000:41:00.0", "current_link_speed", "2.5 GT/s PCIe\n");
  assert_int_equal(gr_sampler_step(f.s, &err), 0);
  assert_int_equal(count_events(f.s, GR_EV_WIDTH), 0);
  close_fixture(&f);
}

/* Under load, a link below its maximum is a warning from the first sample
 * on, with no change seen (N14): the stand-in driver reports Gen1 of Gen4 at
 * 97 %, and GPU1 trained x8 of x16. One event per GPU, not one a sample;
 * none at idle, where a link slows down by design. */
static void test_below_max_under_load(void **state)
{
  struct fixture f;
  struct gr_err err = {0};
  char why[64];
  (void)state;
  open_fixture(&f, true, "busy", NULL, 0.5);
  assert_int_equal(gr_sampler_step(f.s, &err), 0);
  assert_int_equal(count_events(f.s, GR_EV_SLOW_LINK), 4);
  assert_true(has_event(f.s, GR_EV_SLOW_LINK, "GPU1 0000:02:00.0: its PCIe link runs Gen1 of Gen4, x8 of x16 at 97% "
                                              "utilisation: below its maximum under load"));
  assert_true(gr_sampler_gpu_below_max(f.s, 1, why, sizeof(why)));
  assert_string_equal(why, "Gen1 of Gen4, x8 of x16");
  assert_int_equal(gr_sampler_worst(f.s), GR_SEV_WARN);
  assert_int_equal(gr_sampler_step(f.s, &err), 0);
  assert_int_equal(count_events(f.s, GR_EV_SLOW_LINK), 4);
  close_fixture(&f);

  open_fixture(&f, true, NULL, NULL, 0.5); /* idle: the same Gen1 is by design */
  assert_int_equal(gr_sampler_step(f.s, &err), 0);
  assert_int_equal(gr_sampler_step(f.s, &err), 0);
  assert_int_equal(count_events(f.s, GR_EV_SLOW_LINK), 0);
  assert_false(gr_sampler_gpu_below_max(f.s, 1, why, sizeof(why)));
  close_fixture(&f);
}

/* What a followed log handed over: its lines, and its rotations in words. */
struct tail_seen {
  char text[512];
  char rotations[512];
  int nrot;
};

static void tail_lines(void *ctx, const char *buf, size_t len)
{
  struct tail_seen *t = ctx;
  strncat(t->text, buf, len < sizeof(t->text) - strlen(t->text) - 1 ? len : sizeof(t->text) - strlen(t->text) - 1);
}

static void tail_rotated(void *ctx, const char *what)
{
  struct tail_seen *t = ctx;
  t->nrot++;
  strncat(t->rotations, what, sizeof(t->rotations) - strlen(t->rotations) - 2);
  strcat(t->rotations, "|");
}

static void append_line(const char *path, const char *text)
{
  FILE *f = fopen(path, "a");
  assert_non_null(f);
  fputs(text, f);
  assert_int_equal(fclose(f), 0);
}

/* A kernel log file is followed by name as tail -F does (REL-18): after a
 * copytruncate the file is read from its start, after a rename the old one
 * to its end (also a line written after the rename), then the new one. */
static void test_log_followed_across_rotations(void **state)
{
  (void)state;
  char dir[] = "/tmp/gpurig-tail-XXXXXX", path[64], old[80];
  assert_non_null(mkdtemp(dir));
  snprintf(path, sizeof(path), "%s/kern.log", dir);
  snprintf(old, sizeof(old), "%s.1", path);
  append_line(path, "[ 1.0] before watching: not reported\n[ 2.0] padding that makes the file longer than later\n");
  struct gr_tail t;
  struct tail_seen seen = {0};
  const struct gr_tail_sink sink = {tail_lines, tail_rotated, &seen};
  gr_tail_start(&t, open(path, O_RDONLY | O_NONBLOCK), path);
  gr_tail_read(&t, &sink);
  assert_string_equal(seen.text, "");
  append_line(path, "A\npartial");
  gr_tail_read(&t, &sink);
  assert_string_equal(seen.text, "A\n"); /* a partial line waits for its end */
  /* copytruncate: shorter than what was read */
  assert_int_equal(truncate(path, 0), 0);
  append_line(path, "B\n");
  gr_tail_read(&t, &sink);
  assert_string_equal(seen.text, "A\nB\n");
  assert_int_equal(seen.nrot, 1);
  assert_non_null(strstr(seen.rotations, "shrank from "));
  assert_non_null(strstr(seen.rotations, " to 2 bytes (truncated, as logrotate's copytruncate does)"));
  /* rename: the old file's last lines, then the new file from its start */
  assert_int_equal(rename(path, old), 0);
  append_line(old, "C\n");
  gr_tail_read(&t, &sink); /* no file at the name yet: the old one is still read */
  assert_string_equal(seen.text, "A\nB\nC\n");
  append_line(old, "D\n");
  append_line(path, "E\n");
  gr_tail_read(&t, &sink);
  assert_string_equal(seen.text, "A\nB\nC\nD\nE\n");
  assert_int_equal(seen.nrot, 2);
  assert_non_null(strstr(seen.rotations, "|is a new file (rotated): the old one read to its end"));
  gr_tail_read(&t, &sink); /* nothing new: nothing more */
  assert_string_equal(seen.text, "A\nB\nC\nD\nE\n");
  assert_int_equal(seen.nrot, 2);
  gr_tail_stop(&t);
  assert_int_equal(unlink(path), 0);
  assert_int_equal(unlink(old), 0);
  assert_int_equal(rmdir(dir), 0);
}

/* More steps than the ring holds: the ring keeps the newest, the first
 * sample stays the baseline. */
static void test_ring_wraps(void **state)
{
  struct fixture f;
  struct gr_err err = {0};
  (void)state;
  open_fixture(&f, true, NULL, NULL, 0.5);
  for (int i = 0; i < 20; i++)
    assert_int_equal(gr_sampler_step(f.s, &err), 0);
  assert_int_equal(gr_sampler_count(f.s), 8);
  assert_int_equal(gr_sampler_steps(f.s), 20);
  assert_non_null(gr_sampler_sample(f.s, 7));
  assert_null(gr_sampler_sample(f.s, 8));
  assert_true(gr_sampler_first(f.s)->mono_s < gr_sampler_sample(f.s, 7)->mono_s);
  /* GPU1's replay counter climbs by one per read in the stand-in */
  const struct gr_sample *x = gr_sampler_sample(f.s, 0);
  assert_true(x->gpu[1].pcie_replay.ok);
  assert_true(x->gpu[1].pcie_replay.v >= 3 + 19);
  struct gr_metric r = gr_sampler_gpu_rate(f.s, 1, offsetof(struct gr_gpu_dynamic, pcie_replay), 1);
  assert_true(r.ok && r.v > 0);
  assert_true(has_event(f.s, GR_EV_REPLAY, "GPU1 0000:02:00.0"));
  /* a counter that keeps rising is one event a minute, not one a sample */
  assert_int_equal(count_events(f.s, GR_EV_REPLAY), 1);
  /* not supported on a GeForce card: invalid, never 0 */
  assert_false(x->gpu[0].ecc_corrected.ok);
  assert_false(x->gpu[0].mem_temp_c.ok);
  assert_int_equal(gr_sampler_gpu_link(f.s, 1), link_named(f.s, "GPU1 0000:02:00.0"));
  close_fixture(&f);
}

/* A GPU whose driver call hangs is stale after the time limit; the others
 * are read on time. */
static void test_hung_gpu_is_stale(void **state)
{
  struct fixture f;
  struct gr_err err = {0};
  (void)state;
  setenv("GPURIG_STUB_HANG_S", "1", 1);
  open_fixture(&f, true, "hang", NULL, 0.2);
  double t0 = gr_clock_s(CLOCK_MONOTONIC);
  assert_int_equal(gr_sampler_step(f.s, &err), 0);
  double took = gr_clock_s(CLOCK_MONOTONIC) - t0;
  assert_true(took < 0.9); /* the hang is 1 s: the step did not wait for it */
  const struct gr_sample *x = gr_sampler_sample(f.s, 0);
  assert_int_equal(x->gpu_read[1], GR_READ_STALE);
  assert_int_equal(x->gpu_read[0], GR_READ_FRESH);
  assert_int_equal(x->gpu_read[3], GR_READ_FRESH);
  assert_true(has_event(f.s, GR_EV_GPU_STALE, "GPU1"));
  usleep(1200 * 1000); /* the hang ends: the next step has its answer */
  assert_int_equal(gr_sampler_step(f.s, &err), 0);
  assert_int_equal(gr_sampler_sample(f.s, 0)->gpu_read[1], GR_READ_FRESH);
  assert_true(has_event(f.s, GR_EV_GPU_BACK, "GPU1"));
  unsetenv("GPURIG_STUB_HANG_S");
  close_fixture(&f);
}

/* GPU2 falls off the bus mid-watch: lost, its values invalid, an event. */
static void test_gpu_vanishes(void **state)
{
  struct fixture f;
  struct gr_err err = {0};
  (void)state;
  open_fixture(&f, true, NULL, NULL, 0.5);
  assert_int_equal(gr_sampler_step(f.s, &err), 0);
  assert_int_equal(gr_sampler_sample(f.s, 0)->gpu_read[2], GR_READ_FRESH);
  setenv("GPURIG_STUB_SCENARIO", "vanish", 1);
  assert_int_equal(gr_sampler_step(f.s, &err), 0);
  const struct gr_sample *x = gr_sampler_sample(f.s, 0);
  assert_int_equal(x->gpu_read[2], GR_READ_LOST);
  assert_false(x->gpu[2].power_w.ok);
  assert_true(has_event(f.s, GR_EV_GPU_LOST, "GPU2 0000:41:00.0 is lost"));
  close_fixture(&f);
}

/* Xids: the driver's event (the stand-in's 3rd wait gives Xid 79 on GPU2),
 * and without a driver, lines appended to a kernel log. */
static void test_xids(void **state)
{
  struct fixture f;
  struct gr_err err = {0};
  (void)state;
  open_fixture(&f, true, "xid", NULL, 0.5);
  for (int i = 0; i < 4; i++)
    assert_int_equal(gr_sampler_step(f.s, &err), 0);
  assert_true(has_event(f.s, GR_EV_XID, "GPU2 0000:41:00.0: Xid 79 (GPU has fallen off the bus)"));
  assert_non_null(strstr(gr_sampler_xid_source(f.s), "driver events"));
  assert_int_equal(gr_sampler_last_xid(f.s, 2), 79);
  assert_int_equal(gr_sampler_last_xid(f.s, 0), 0);
  assert_int_equal(gr_sampler_worst(f.s), GR_SEV_FAIL);
  assert_int_equal(gr_findings_exit(gr_sampler_findings(f.s)), GR_EXIT_FAIL);
  close_fixture(&f);

  char log[] = "/tmp/gpurig-kmsg-XXXXXX";
  int fd = mkstemp(log);
  assert_true(fd >= 0);
  assert_true(write(fd, "[ 1.0] NVRM: Xid (PCI:0000:02:00): 79, old line\n", 48) == 48);
  open_fixture(&f, false, NULL, log, 0.5);
  assert_int_equal(gr_sampler_step(f.s, &err), 0);
  assert_int_equal(gr_sampler_nevents(f.s), 0); /* what was there before the watch began is doctor's */
  const char *line = "[ 99.5] NVRM: Xid (PCI:0000:01:00): 13, Graphics SM Warp Exception\n";
  assert_true(write(fd, line, strlen(line)) == (ssize_t)strlen(line));
  assert_int_equal(gr_sampler_step(f.s, &err), 0);
  assert_true(has_event(f.s, GR_EV_XID, "GPU at 0000:01:00: Xid 13"));
  close(fd);
  unlink(log);
  close_fixture(&f);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      /* first: the stand-in counts its event waits per process */
      cmocka_unit_test(test_xids),
      cmocka_unit_test(test_links_and_slots),   cmocka_unit_test(test_smbios_slots),
      cmocka_unit_test(test_aer_climbs),
      cmocka_unit_test(test_ring_wraps),        cmocka_unit_test(test_hung_gpu_is_stale),
      cmocka_unit_test(test_gpu_vanishes),      cmocka_unit_test(test_quiet_rise_reported_later),
      cmocka_unit_test(test_speed_drop_under_load),
      cmocka_unit_test(test_log_followed_across_rotations),
      cmocka_unit_test(test_below_max_under_load),
  };
  return cmocka_run_group_tests(tests, setup, NULL);
}
