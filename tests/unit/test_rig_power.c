/* A rig's power paths (issue 34): which loads each PSU feeds, each GPU's
 * connectors, the riser under it, and the budget's findings on them. The
 * figures come from data/power-*.tsv: a slot gives at most 75 W (66 W of it
 * at 12 V), a PCIe 8-pin 150 W, a 12VHPWR 600 W, a SATA plug 54 W at 12 V;
 * an RTX 4090 draws 450 W (its reference board fills 3x8pin), an RTX 3090
 * 350 W (2x8pin), an EPYC 7282 120 W. */
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "analysis/power.h"
#include "load/rig.h"
#include "model/conns.h"

#define HEAD "rig \"t\"\ncpu c0 \"EPYC 7282\"\nrootcomplex rc0 c0 gen4\n"

static int setup(void **state)
{
  return tu_setup_data(state);
}

static void expect_error(const char *text, const char *where, const char *what)
{
  struct gr_topo t;
  struct gr_err err = {0};
  if (gr_rig_parse("bad.rig", text, strlen(text), &t, &err) == 0) {
    gr_topo_free(&t);
    fail_msg("no error for:\n%s", text);
  }
  assert_int_equal(err.code, GR_EXIT_FAIL);
  if (!str_starts_with(err.msg, where) || !strstr(err.msg, what))
    fail_msg("'%s' is not '%s ... %s'", err.msg, where, what);
}

static void parse_ok(const char *text, struct gr_topo *t)
{
  struct gr_err err = {0};
  if (gr_rig_parse("ok.rig", text, strlen(text), t, &err) != 0)
    fail_msg("%s", err.msg);
}

/* The finding with id in b, NULL if none. */
static const struct gr_finding *find(const struct gr_power_budget *b, const char *id)
{
  for (size_t i = 0; i < b->findings.n; i++)
    if (strcmp(b->findings.v[i].id, id) == 0)
      return &b->findings.v[i];
  return NULL;
}

static void connector_words(void **state)
{
  (void)state;
  struct gr_conns c;
  char bad[32], text[64];
  assert_int_equal(gr_conns_parse("3x8pin", &c, bad, sizeof(bad)), 0);
  assert_int_equal(c.n, 1);
  assert_int_equal(c.count[0], 3);
  assert_string_equal(c.kind[0], "8pin");
  assert_int_equal(gr_conns_parse("8pin+8pin+6pin", &c, bad, sizeof(bad)), 0);
  assert_string_equal(gr_conns_text(&c, text, sizeof(text)), "2x8pin+6pin");
  assert_int_equal(gr_conns_pcie_plugs(&c), 3);
  assert_int_equal(gr_conns_parse("12v-2x6", &c, bad, sizeof(bad)), 0); /* a word of its own, not 2 x "6" */
  assert_string_equal(c.kind[0], "12v-2x6");
  assert_int_equal(c.count[0], 1);
  assert_int_equal(gr_conns_parse("2x12v-2x6", &c, bad, sizeof(bad)), 0);
  assert_int_equal(c.count[0], 2);
  assert_int_equal(gr_conns_parse("8pni", &c, bad, sizeof(bad)), -1);
  assert_string_equal(bad, "8pni");
  assert_int_equal(gr_conns_parse("8pin+", &c, bad, sizeof(bad)), -1);
  assert_int_equal(gr_conns_parse("9x8pin", &c, bad, sizeof(bad)), -1);
  assert_int_equal(gr_conns_parse("0x8pin", &c, bad, sizeof(bad)), -1);
  assert_int_equal(c.n, 0);
}

/* Good lines keep what they state; the GPUs' numbers follow declaration. */
static void power_lines(void **state)
{
  (void)state;
  struct gr_topo t;
  parse_ok(HEAD "psu a 1600 feeds gpu0-gpu1,cpus,board\npsu b 1600 feeds rest\n"
                "gpu 2 \"RTX 4090\" rc0 riser gen4 x16 riser-power 6pin\n"
                "gpu \"RTX 4090\" rc0 power 12vhpwr from 3x8pin limit 600\n"
                "gpu \"RTX 3090\" rc0 power 2x8pin cables 1\n",
           &t);
  const struct gr_rig_meta *m = t.rig;
  assert_int_equal(m->ngpu_power, 4);
  assert_int_equal(m->gpu_power[0].psu, 0);
  assert_int_equal(m->gpu_power[1].psu, 0);
  assert_int_equal(m->gpu_power[2].psu, 1); /* the rest */
  assert_int_equal(m->gpu_power[3].psu, 1);
  assert_int_equal(m->cpus_psu, 0);
  assert_int_equal(m->board_psu, 0);
  assert_true(m->gpu_power[0].riser);
  assert_string_equal(m->gpu_power[1].riser_power, "6pin");
  assert_string_equal(m->gpu_power[2].conns.kind[0], "12vhpwr");
  assert_int_equal(m->gpu_power[2].from.count[0], 3);
  assert_float_equal(m->gpu_power[2].limit_w, 600, 0);
  assert_int_equal(m->gpu_power[3].cables, 1);
  assert_int_equal(m->gpu_power[3].conns.n, 1);
  gr_topo_free(&t);
  /* without feeds nothing is said of who feeds what */
  parse_ok(HEAD "psu a 1600\ngpu \"RTX 3090\" rc0\n", &t);
  assert_int_equal(t.rig->gpu_power[0].psu, -1);
  assert_int_equal(t.rig->cpus_psu, -1);
  gr_topo_free(&t);
}

static void bad_power_lines(void **state)
{
  (void)state;
  const char *g2 = "gpu 2 \"RTX 3090\" rc0\n";
  char text[512];
  snprintf(text, sizeof(text), HEAD "psu a 1600 feeds gpu0,cpus\npsu b 1600 feeds gpu1,gpu0\n%s", g2);
  expect_error(text, "bad.rig:5:23:", "gpu0 is fed by psu a already (line 4, column 18)");
  snprintf(text, sizeof(text), HEAD "psu a 1600 feeds gpu0,cpus\npsu b 1600 feeds gpu1,cpus\n%s", g2);
  expect_error(text, "bad.rig:5:23:", "the CPUs is fed by psu a already");
  snprintf(text, sizeof(text), HEAD "psu a 1600 feeds gpu0,cpus\n%s", g2);
  expect_error(text, "bad.rig:5:1:", "gpu1 is fed by no psu");
  snprintf(text, sizeof(text), HEAD "psu a 1600 feeds gpu0-gpu1\n%s", g2);
  expect_error(text, "bad.rig:2:5:", "cpu c0 is fed by no psu");
  snprintf(text, sizeof(text), HEAD "psu a 1600 feeds gpu0,cpsu\n%s", g2);
  expect_error(text, "bad.rig:4:23:", "did you mean 'cpus'?");
  snprintf(text, sizeof(text), HEAD "psu a 1600 feeds gpu0-gpu7\n%s", g2);
  expect_error(text, "bad.rig:4:18:", "no gpu7: the rig has gpu0 to gpu1");
  snprintf(text, sizeof(text), HEAD "psu a 1600 feeds rest\npsu b 1000\n%s", g2);
  expect_error(text, "bad.rig:5:1:", "psu b says nothing of what it feeds while psu a does");
  snprintf(text, sizeof(text), HEAD "psu a 1600 feeds rest\npsu b 1000 feeds gpu1,rest\n%s", g2);
  expect_error(text, "bad.rig:5:23:", "psu a feeds the rest already");
  expect_error(HEAD "psu a 1600 feds rest\n", "bad.rig:4:12:", "did you mean 'feeds'?");
  expect_error(HEAD "gpu \"RTX 3090\" rc0 power 8pni\n", "bad.rig:4:26:", "did you mean '8pin'?");
  expect_error(HEAD "gpu \"RTX 3090\" rc0 power 12vhpwr from 3x8pni\n", "bad.rig:4:39:", "did you mean '8pin'?");
  expect_error(HEAD "gpu \"RTX 3090\" rc0 power 2x8pin cables 9\n", "bad.rig:4:40:", "");
  expect_error(HEAD "gpu \"RTX 3090\" rc0 power\n", "bad.rig:4:25:", "expected a value after 'power'");
  expect_error(HEAD "gpu \"RTX 3090\" rc0 riser gen4 x16 riser-power sat\n", "bad.rig:4:47:",
               "did you mean 'sata'?");
  expect_error(HEAD "gpu \"RTX 3090\" rc0 riser-power sata\n", "bad.rig:4:32:", "gpu0 has no riser");
  /* data/power-gpus.tsv: an RTX 3090's nvidia-smi -pl takes 100 to 350 W */
  expect_error(HEAD "gpu \"RTX 3090\" rc0 limit 400\n", "bad.rig:4:26:", "accepts 100 to 350 W");
  expect_error(HEAD "gpu \"RTX 3090\" rc0 powr 2x8pin\n", "bad.rig:4:20:", "a gpu line takes");
}

/* Each PSU carries what it feeds: gpu0-gpu1 and the CPUs on a (2 x 450 +
 * 120 = 1020 W), the 3090s on b (2 x 350 = 700 W) with 378 W peaks each. */
static void feeds_load_each_psu(void **state)
{
  (void)state;
  struct gr_topo t;
  struct gr_power_budget b;
  parse_ok(HEAD "psu a 1000 feeds gpu0-gpu1,cpus\npsu b 1000 feeds gpu2-gpu3 rails 1\n"
                "gpu 2 \"RTX 4090\" rc0\ngpu 2 \"RTX 3090\" rc0\n",
           &t);
  assert_int_equal(gr_power_budget(&t, &b), 0);
  assert_true(b.feeds);
  assert_float_equal(b.psus[0].sustained_w, 1020, 1e-9);
  assert_float_equal(b.psus[1].sustained_w, 700, 1e-9);
  assert_float_equal(b.psus[1].transient_w, 756, 1e-9);
  assert_int_equal(b.psus[1].gpus_per_rail, 2);
  assert_true(b.psus[0].cpus);
  assert_false(b.psus[1].cpus);
  const struct gr_finding *f = find(&b, "power.psu-overload");
  assert_non_null(f); /* 1020 W on 1000 W: the limit fix counts a's two GPUs and the CPUs only */
  assert_non_null(strstr(f->text, "PSU a (1000 W) carries 1020 W sustained: 2 GPUs"));
  assert_non_null(strstr(f->fix, "nvidia-smi -pl 390 on each GPU (saves 120 W)"));
  assert_null(find(&b, "power.connector-overload")); /* reference layouts carry board power */
  gr_power_free(&b);
  gr_topo_free(&t);
}

/* The brief's cases: a 4090 held at 600 W through an adapter with three of
 * its four 8-pins (450 W) carries at least 525 W; a 3090's two 8-pins on one
 * daisy-chained cable carry 275 W through one plug's 150 W of wire; a riser
 * with no power, and one on SATA (54 W < 66 W). */
static void connectors_and_risers(void **state)
{
  (void)state;
  struct gr_topo t;
  struct gr_power_budget b;
  parse_ok(HEAD "psu a 2000 feeds rest\n"
                "gpu \"RTX 4090\" rc0 power 12vhpwr from 3x8pin limit 600\n"
                "gpu \"RTX 3090\" rc0 power 2x8pin cables 1\n"
                "gpu \"RTX 3090\" rc0 riser gen4 x16 riser-power none\n"
                "gpu \"RTX 3090\" rc0 riser gen4 x16 riser-power sata\n"
                "gpu \"RTX 3090\" rc0 riser gen4 x16 riser-power 6pin\n",
           &t);
  assert_int_equal(gr_power_budget(&t, &b), 0);
  assert_float_equal(b.gpus[0].draw_w, 600, 1e-9);
  const struct gr_finding *f = find(&b, "power.connector-overload");
  assert_non_null(f);
  assert_int_equal(f->sev, GR_SEV_FAIL);
  assert_non_null(strstr(f->text, "gpu0 (RTX 4090): its 12vhpwr from an adapter of 3x8pin carries at least 525 W"));
  assert_non_null(strstr(f->text, "over the 450 W those plugs are rated for"));
  assert_non_null(strstr(f->fix, "nvidia-smi -pl 525 on gpu0"));
  f = find(&b, "power.cable-shared");
  assert_non_null(f);
  assert_int_equal(f->sev, GR_SEV_WARN);
  assert_non_null(strstr(f->text, "gpu1 (RTX 3090): 2 PCIe plugs on 1 PSU cable"));
  assert_non_null(strstr(f->text, "at least 275 W through wires specified for 150 W"));
  f = find(&b, "power.riser-unpowered");
  assert_non_null(f);
  assert_int_equal(f->sev, GR_SEV_FAIL);
  assert_non_null(strstr(f->text, "gpu2 (RTX 3090)"));
  assert_non_null(strstr(f->fix, "from psu a"));
  f = find(&b, "power.riser-short");
  assert_non_null(f);
  assert_int_equal(f->sev, GR_SEV_WARN);
  assert_non_null(strstr(f->text, "gpu3 (RTX 3090) sits on a riser powered through sata (54 W at 12 V)"));
  size_t risers = 0; /* gpu4's 6-pin (75 W) carries the slot's 66 W: no finding */
  for (size_t i = 0; i < b.findings.n; i++)
    risers += strncmp(b.findings.v[i].id, "power.riser", 11) == 0;
  assert_int_equal(risers, 2);
  gr_power_free(&b);
  gr_topo_free(&t);
  /* --gpu: a replaced card loses the old one's connectors and limit, a kept one keeps them */
  parse_ok(HEAD "gpu \"RTX 4090\" rc0 power 12vhpwr from 3x8pin limit 600\n"
                "gpu \"RTX 3090\" rc0 power 2x8pin cables 1\n",
           &t);
  struct gr_err err = {0};
  assert_int_equal(gr_rig_replace_gpus(&t, "RTX 3090", &err), 0);
  assert_int_equal(t.rig->gpu_power[0].conns.n, 0);
  assert_float_equal(t.rig->gpu_power[0].limit_w, 0, 0);
  assert_int_equal(t.rig->gpu_power[1].cables, 1);
  gr_topo_free(&t);
  /* a plan's power limit overrides the rig's: at 450 W the adapter carries 375 W */
  parse_ok(HEAD "gpu \"RTX 4090\" rc0 power 12vhpwr from 3x8pin limit 600\n", &t);
  assert_int_equal(gr_power_budget_at(&t, 450, &b), 0);
  assert_null(find(&b, "power.connector-overload"));
  assert_non_null(find(&b, "power.unknown")); /* no psu line: the paths are checked all the same */
  gr_power_free(&b);
  gr_topo_free(&t);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(connector_words),
      cmocka_unit_test(power_lines),
      cmocka_unit_test(bad_power_lines),
      cmocka_unit_test(feeds_load_each_psu),
      cmocka_unit_test(connectors_and_risers),
  };
  return cmocka_run_group_tests(tests, setup, NULL);
}
