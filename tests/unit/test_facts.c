/* Facts loaded once and analyses that share nothing: the defects an outside
 * review found (a calibration constant that read 0 until gr_predict had run;
 * a static buffer that made one analysis change another's result). Results
 * "alone" come from forked children, so each is computed in a process that
 * did nothing else. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"

#include "analysis/machine.h"
#include "facts/catalog.h"
#include "facts/data.h"
#include "gpu/bench.h"
#include "model/conns.h"
#include "print/machine.h"

static int setup(void **state)
{
  return tu_setup_data(state);
}

/* The machine's JSON (topology, analysis, prediction), the caller frees it. */
static char *machine_json(const struct gr_source *src)
{
  struct gr_machine m;
  struct gr_err err = {0};
  if (gr_machine_open(src, GR_MACHINE_PREDICT, &m, &err) != 0)
    fail_msg("%s", err.msg);
  json_t *j = gr_machine_to_json(&m);
  char *s = json_dumps(j, JSON_PRESERVE_ORDER | JSON_INDENT(1));
  json_decref(j);
  gr_machine_close(&m);
  return s;
}

/* machine_json computed in a child process that opens nothing else. */
static char *machine_json_alone(const struct gr_source *src)
{
  int fd[2];
  assert_int_equal(pipe(fd), 0);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    close(fd[0]);
    char *s = machine_json(src);
    size_t n = strlen(s), off = 0;
    while (off < n) {
      ssize_t w = write(fd[1], s + off, n - off);
      if (w <= 0)
        _exit(1);
      off += (size_t)w;
    }
    _exit(0);
  }
  close(fd[1]);
  size_t len = 0, cap = 1 << 16;
  char *buf = malloc(cap);
  for (ssize_t r; (r = read(fd[0], buf + len, cap - len - 1)) > 0;) {
    len += (size_t)r;
    if (cap - len < 4096)
      buf = realloc(buf, cap *= 2);
  }
  buf[len] = '\0';
  close(fd[0]);
  int status;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  return buf;
}

/* What `gpurig bench` does on a machine whose wiring cannot be read: the
 * stand-in NVIDIA libraries (tests/stub), no topology, in a child process
 * that has predicted nothing. Exit 0 from the child: every host copy was
 * predicted as its limit times the calibrated efficiency, never 0. */
static int bench_without_topology(void)
{
  const struct gr_bench_backend *be;
  void *st;
  struct gr_bench_facts facts = {0};
  struct gr_bench_links links;
  struct gr_bench_config cfg;
  struct gr_bench_report rep;
  struct gr_err err = {0};
  int bad = 0;
  if (gr_bench_open(&be, &st, &err) != 0)
    return 10;
  gr_bench_facts_read(be, st, &facts);
  gr_bench_links_set(&links, NULL, &facts);
  gr_bench_config_defaults(&cfg, true);
  cfg.bytes = (size_t)1 << 20;
  cfg.progress = false;
  cfg.sm = false;
  cfg.ar_max_bytes = (size_t)1 << 20;
  if (gr_bench_run(be, st, &cfg, &links, &rep, &err) != 0) {
    bad = 11;
  } else {
    for (size_t i = 0; i < rep.nresults; i++) {
      const struct gr_bench_result *r = &rep.results[i];
      if (r->kind == GR_BK_H2D && (r->limit_gbps <= 0 || r->predicted_gbps <= 0 ||
                                   r->predicted_gbps != r->limit_gbps * gr_calib()->h2d_eff_gen4))
        bad = 12;
    }
    gr_bench_report_free(&rep);
  }
  be->shutdown(st);
  gr_bench_facts_free(&facts);
  return bad;
}

static void test_bench_fresh_without_topology(void **state)
{
  (void)state;
  setenv("GPURIG_DRIVER_DIR", getenv("GPURIG_TEST_STUB"), 1);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0)
    _exit(bench_without_topology());
  int status;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);
  unsetenv("GPURIG_DRIVER_DIR");
}

static void test_facts_once(void **state)
{
  struct gr_err err = {0};
  (void)state;
  size_t ngpus, ngens, n2;
  const struct gr_gpu_model *gpus = gr_catalog_models(&ngpus);
  assert_int_equal(gr_facts_load(&err), 0); /* a second call changes nothing */
  assert_ptr_equal(gr_catalog_models(&n2), gpus);
  assert_int_equal(n2, ngpus);
  gr_pcie_gens(&ngens);
  /* every constant is there before any prediction ran (bench without a
   * topology reads h2d_eff_* directly) */
  assert_float_equal(gr_calib()->h2d_eff_gen4, 0.81, 1e-9);
  assert_true(gr_plan_consts()->cuda_context_gib > 0);
  assert_true(gr_health_consts()->aer_ber > 0);
  assert_true(ngens >= 5 && ngpus > 10);
  assert_non_null(gr_catalog_find("RTX 3090"));
}

/* An AMD rig, then an Intel capture, in one process: the first analysis
 * keeps its own inter-socket link, and each equals what a process that
 * analysed it alone computes. */
static void test_analyses_independent(void **state)
{
  char xml[1024];
  (void)state;
  snprintf(xml, sizeof(xml), "%s/hwloc-aws/p5en.xml", getenv("GPURIG_TEST_DATA"));
  struct gr_source amd = {.kind = GR_SRC_RIG, .path = "gigabyte-g482"}, intel = {.kind = GR_SRC_XML, .path = xml};
  struct gr_machine first;
  struct gr_err err = {0};
  assert_int_equal(gr_machine_open(&amd, GR_MACHINE_PREDICT, &first, &err), 0);
  assert_string_equal(first.analysis.socket_link, "Infinity Fabric");
  char *intel_here = machine_json(&intel);
  assert_string_equal(first.analysis.socket_link, "Infinity Fabric"); /* not "UPI" */
  assert_non_null(strstr(intel_here, "\"inter_socket_link\": \"UPI\""));
  char *amd_here = machine_json(&amd), *amd_alone = machine_json_alone(&amd);
  char *intel_alone = machine_json_alone(&intel);
  assert_string_equal(amd_here, amd_alone);
  assert_string_equal(intel_here, intel_alone);
  gr_machine_close(&first);
  free(intel_here);
  free(amd_here);
  free(amd_alone);
  free(intel_alone);
}

/* A catalog of two rows read with the catalog's own parser; 0 or -1 with err. */
static int parse_catalog(const char *rows, struct gr_gpu_model **models, size_t *n, struct gr_table *t,
                         struct gr_err *err)
{
  char *text = xasprintf("model\tvendor\tarch\tmem_gib\tmem_bw_gbps\tfp16_tflops\tfp16_fp32acc_tflops\ttdp_w\t"
                         "pcie_gen\tlink\tlinks\tlink_gbps\tp2p\tpci_ids\tform\tboard\tlink_gen\tcc\tint8_tops\t"
                         "mem_type\tboost_mhz\tsm_count\tsource\n%s",
                         rows);
  int rc = gr_table_parse("gpus.tsv", text, strlen(text), t, err);
  free(text);
  if (rc != 0)
    return -1;
  rc = gr_catalog_parse(t, models, n, err);
  return rc;
}

#define ROW_H200 "H200 SXM\tnvidia\tsm90\t141\t4800\t989.4\t989.4\t700\t5\tnvlink\t18\t450\tyes\t10de:2335\t" \
                 "sxm5\tnvswitch\t4\t9.0\t-\thbm3e\t1980\t132\tdatasheet\n"
#define ROW_7900 "RX 7900 XTX\tamd\tgfx1100\t24\t960\t122.8\t122.8\t355\t4\tnone\t0\t0\tdriver\t1002:744c\t" \
                 "pcie\tnone\t0\t-\t-\tgddr6\t-\t-\tspec\n"

/* form, board, link_gen and cc parse; a bad word in them fails with its line. */
static void test_catalog_columns(void **state)
{
  struct gr_table t;
  struct gr_gpu_model *m;
  size_t n;
  struct gr_err err = {0};
  (void)state;
  if (parse_catalog(ROW_H200 ROW_7900, &m, &n, &t, &err) != 0)
    fail_msg("%s", err.msg);
  assert_int_equal(n, 2);
  assert_string_equal(m[0].form, "sxm5");
  assert_string_equal(m[0].board, "nvswitch");
  assert_int_equal(m[0].link_gen, 4);
  assert_int_equal(m[0].cc_major, 9);
  assert_int_equal(m[0].cc_minor, 0);
  assert_int_equal(m[0].links, 18);
  assert_int_equal(m[1].cc_major, 0); /* - for AMD */
  assert_string_equal(m[1].board, "none");
  assert_true(m[0].int8_tops == 2 * 989.4); /* "-": twice the fp16 tensor rate from Turing on */
  assert_true(m[1].int8_tops == 0);         /* no int8 path known */
  assert_string_equal(m[0].mem_type, "hbm3e");
  assert_true(gr_gpu_mem_is_hbm(&m[0]));
  assert_string_equal(m[1].mem_type, "gddr6");
  assert_false(gr_gpu_mem_is_hbm(&m[1]));
  assert_float_equal(m[0].boost_mhz, 1980, 1e-9);
  assert_int_equal(m[0].sm_count, 132);
  assert_true(m[1].boost_mhz == 0); /* "-": not published, never a guess */
  assert_int_equal(m[1].sm_count, 0);
  free(m);
  gr_table_free(&t);
  static const struct {
    const char *from, *to, *msg;
  } bad[] = {
      {"\tnvswitch\t", "\tswitchboard\t", "gpus.tsv:3: board must be none, bridge, hcm, mesh or nvswitch"},
      {"\tsxm5\t", "\tsxm9\t", "gpus.tsv:3: form must be pcie, sxm2 .. sxm6 or oam"},
      {"\t4\t9.0\t", "\tfour\t9.0\t", "gpus.tsv:3: bad link_gen"},
      {"\t9.0\t", "\tnine\t", "gpus.tsv:3: cc must be MAJOR.MINOR or -"},
      {"\tnvlink\t18\t450\t", "\tnvlink\t0\t0\t", "gpus.tsv:3: link nvlink with 0 links"},
      {"\tnvlink\t", "\tinfiniband\t", "gpus.tsv:3: link must be none, nvlink or xgmi"},
      {"\thbm3e\t", "\thbm4\t", "gpus.tsv:3: mem_type \"hbm4\" must be gddr5, gddr5x, gddr6, gddr6x, gddr7, hbm2, "
                                  "hbm2e, hbm3 or hbm3e"},
      {"\thbm3e\t", "\tHBM3e\t", "gpus.tsv:3: mem_type \"HBM3e\" must be"},
      {"\t1980\t", "\t1.98GHz\t", "gpus.tsv:3: boost_mhz \"1.98GHz\" must be a number of MHz or -"},
      {"\t1980\t", "\tfast\t", "gpus.tsv:3: boost_mhz \"fast\" must be a number of MHz or -"},
      {"\t1980\t", "\t0\t", "gpus.tsv:3: boost_mhz \"0\" must be a number of MHz or -"},
      {"\t1980\t", "\tnan\t", "gpus.tsv:3: boost_mhz \"nan\" must be a number of MHz or -"},
      {"\t132\t", "\t132.5\t", "gpus.tsv:3: sm_count \"132.5\" must be a whole number or -"},
  };
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    char row[512];
    const char *at = strstr(ROW_H200, bad[i].from);
    assert_non_null(at);
    snprintf(row, sizeof(row), ROW_7900 "%.*s%s%s", (int)(at - ROW_H200), ROW_H200, bad[i].to,
             at + strlen(bad[i].from));
    if (parse_catalog(row, &m, &n, &t, &err) == 0)
      fail_msg("no error for %s", bad[i].to);
    if (!str_starts_with(err.msg, bad[i].msg))
      fail_msg("'%s' is not '%s'", err.msg, bad[i].msg);
    if (strchr(err.msg, '\n')) /* one line: the file, the line and the problem */
      fail_msg("'%s' is more than one line", err.msg);
    gr_table_free(&t);
  }
}

/* The rows real machines need: the NVSwitch boards' GPUs found by their PCI ids. */
static void test_catalog_rows(void **state)
{
  (void)state;
  static const struct {
    unsigned device;
    const char *model, *board;
    int links, link_gen;
  } rows[] = {{0x2335, "H200 SXM", "nvswitch", 18, 4},   {0x2901, "B200", "nvswitch", 18, 5},
              {0x1db8, "V100 SXM3 32GB", "nvswitch", 6, 2}, {0x2324, "H800 SXM5", "nvswitch", 8, 4},
              {0x2235, "A40", "bridge", 4, 3},              {0x26b9, "L40S", "none", 0, 0},
              {0x27b8, "L4", "none", 0, 0},                 {0x2237, "A10G", "none", 0, 0}};
  for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
    const struct gr_gpu_model *m = gr_catalog_find_pci(0x10de, rows[i].device);
    assert_non_null(m);
    assert_string_equal(m->model, rows[i].model);
    assert_string_equal(m->board, rows[i].board);
    assert_int_equal(m->links, rows[i].links);
    assert_int_equal(m->link_gen, rows[i].link_gen);
  }
  assert_float_equal(gr_catalog_find("B200")->link_gbps, 900, 1e-9);
  assert_float_equal(gr_catalog_find("H200 SXM")->mem_bw_gbps, 4800, 1e-9);
}

/* The rows issue 28 added, by the names other data and code use, with the
 * figures that set their links and memory; and every row's new columns. */
static void test_catalog_added_rows(void **state)
{
  (void)state;
  static const char *const names[] = {"RTX 2080 Ti", "RTX 3060 12GB", "RTX 3070", "RTX 3080", "RTX 3080 Ti",
                                      "RTX 4060 Ti 16GB", "RTX 4070 Ti", "RTX 4080", "RTX 4000 Ada",
                                      "RTX 5000 Ada", "T4", "A800 SXM4 80GB", "H20", "A100 SXM4 64GB", "MI100",
                                      "MI210", "MI300X", "RX 7900 XT"};
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
    const struct gr_gpu_model *m = gr_catalog_find(names[i]);
    if (!m || strcmp(m->model, names[i]) != 0)
      fail_msg("%s is not in the catalog under that name", names[i]);
  }
  const struct gr_gpu_model *t = gr_catalog_find("RTX 2080 Ti"); /* Turing's 2-link NVLink 2 bridge */
  assert_int_equal(t->links, 2);
  assert_float_equal(t->link_gbps, 50, 1e-9);
  assert_string_equal(t->board, "bridge");
  assert_int_equal(t->link_gen, 2);
  assert_int_equal(t->p2p, GR_P2P_NO);
  assert_ptr_equal(gr_catalog_find_pci(0x10de, 0x1e07), t);
  const struct gr_gpu_model *x = gr_catalog_find("MI300X"); /* one xGMI link to each of 7 peers */
  assert_string_equal(x->link, "xgmi");
  assert_int_equal(x->links, 7);
  assert_float_equal(x->link_gbps, 448, 1e-9);
  assert_string_equal(x->form, "oam");
  assert_string_equal(x->board, "mesh");
  assert_true(gr_gpu_mem_is_hbm(x));
  assert_int_equal(x->sm_count, 304);
  assert_false(gr_gpu_mem_is_hbm(gr_catalog_find("RTX 4080")));
  assert_true(gr_catalog_find("RTX 3080")->link_gbps == 0); /* no NVLink on the 3080, 3070, 4000 series */
  assert_true(gr_catalog_find("H20")->boost_mhz == 0);      /* not published */
  size_t n;
  const struct gr_gpu_model *gpus = gr_catalog_models(&n);
  for (size_t i = 0; i < n; i++)
    if (!gpus[i].mem_type || !*gpus[i].mem_type)
      fail_msg("%s has no mem_type", gpus[i].model);
}

/* ---- the row tables (facts/tables.h) ---- */

/* Every data file gpurig ships loads and passes its checks: the test that
 * keeps broken data out of a build now that commands load only what they
 * read. */
static void test_every_data_file_loads(void **state)
{
  struct gr_err err = {0};
  (void)state;
  if (gr_facts_load_all(&err) != 0)
    fail_msg("%s", err.msg);
  static const char *const files[] = {"pcie-links.tsv", "gpus.tsv", "calibration.tsv", "planner.tsv", "health.tsv",
                                      "diffusion-memory.tsv", "engine-speed.tsv", "pci-devices.tsv", "nccl-p2p.tsv",
                                      "cpu-interconnect.tsv", "cpu-memory.tsv", "driver-issues.tsv", "xid.tsv",
                                      "models.tsv", "quant.tsv", "engines.tsv", "diffusion.tsv", "nics.tsv",
                                      "power-clock.tsv", "power-gpus.tsv", "power-psu.tsv", "power-parts.tsv"};
  for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
    if (!gr_facts_is_loaded(files[i]))
      fail_msg("%s is not loaded after gr_facts_load_all", files[i]);
}

/* Loaded on first use: after an unload nothing is loaded, a catalog
 * lookup loads the catalog alone, and what it finds is what it found
 * before. */
static void test_loaded_on_first_use(void **state)
{
  (void)state;
  double ram = gr_catalog_find("RTX 3090")->mem_gib;
  gr_facts_unload();
  assert_false(gr_facts_is_loaded("gpus.tsv"));
  assert_false(gr_facts_is_loaded("xid.tsv"));
  assert_float_equal(gr_catalog_find("RTX 3090")->mem_gib, ram, 1e-12);
  assert_true(gr_facts_is_loaded("gpus.tsv"));
  assert_false(gr_facts_is_loaded("xid.tsv"));
  assert_false(gr_facts_is_loaded("models.tsv"));
  assert_false(gr_facts_is_loaded("not-a-table.tsv"));
  assert_true(gr_xid_rows()->n > 0);
  assert_true(gr_facts_is_loaded("xid.tsv"));
}

/* What a thread reads first from freshly unloaded facts. */
struct first_reads {
  const struct gr_xid_rows *xid;
  const struct gr_gpu_model *gpu;
  double eff;
};

static void *read_facts(void *arg)
{
  struct first_reads *r = arg;
  r->gpu = gr_catalog_find("H100 SXM5");
  r->xid = gr_xid_rows();
  r->eff = gr_calib()->ring_p2p_eff;
  return NULL;
}

/* Threads that race to a table's first load all get the one loaded copy. */
static void test_first_use_from_threads(void **state)
{
  enum { N = 6 };
  pthread_t th[N];
  struct first_reads r[N];
  (void)state;
  gr_facts_unload();
  for (int i = 0; i < N; i++)
    assert_int_equal(pthread_create(&th[i], NULL, read_facts, &r[i]), 0);
  for (int i = 0; i < N; i++)
    assert_int_equal(pthread_join(th[i], NULL), 0);
  for (int i = 0; i < N; i++) {
    assert_non_null(r[i].gpu);
    assert_ptr_equal(r[i].gpu, r[0].gpu);
    assert_ptr_equal(r[i].xid, r[0].xid);
    assert_true(r[i].xid->n > 0);
    assert_float_equal(r[i].eff, r[0].eff, 0);
  }
}

/* A broken row of each row table is refused with FILE:LINE:COLUMN and the
 * column's name; the same file mended is accepted. */
static void test_broken_rows_refused(void **state)
{
  static const struct {
    const char *file, *text, *where;
  } cases[] = {
      {"cpu-interconnect.tsv", "vendor\tfamily\tmodel_min\tnccl_gbps\tlink\tsource\nGenuineIntel\t6\t0\tfast\tQPI\tx\n",
       "cpu-interconnect.tsv:2:4: nccl_gbps must be a number from 0.001 to 10000"},
      {"cpu-interconnect.tsv", "vendor\tfamily\tmodel_min\tnccl_gbps\tlink\tsource\nGenuineIntel\tsix\t0\t6\tQPI\tx\n",
       "cpu-interconnect.tsv:2:2: family must be a whole number from 0 to 4095, or *"},
      {"cpu-memory.tsv", "match\tchannels\tsource\n# a comment\nEPYC 7\t0\tx\n", "cpu-memory.tsv:3:2: channels"},
      {"driver-issues.tsv",
       "id\tgpu_match\tdriver_min\tdriver_max\tseverity\tproblem\tfix\tsource\na\tRTX 4090\t520.0\t525.9\tfatal\tp\tf\ts\n",
       "driver-issues.tsv:2:5: severity must be one of fail|warn, not \"fatal\""},
      {"xid.tsv", "xid\tname\tclass\tseverity\taction\tsource\n79\tfell off\thw\tfail\ta\ts\nx8\tn\tdriver\twarn\ta\ts\n",
       "xid.tsv:3:1: xid must be a whole number"},
      {"models.tsv",
       "name\tmodel_type\tlayers\thidden\tintermediate\theads\tkv_heads\thead_dim\tvocab\ttied\tqkv_bias\texperts\t"
       "experts_per_tok\tmax_ctx\tsliding_window\tsource\nm\tllama\t32\t4096\t11008\t32\t32\t128\t32000\tmaybe\tno\t0\t0\t"
       "4096\t0\ts\n",
       "models.tsv:2:10: tied must be yes or no"},
      {"models.tsv",
       "name\tmodel_type\tlayers\thidden\tintermediate\theads\tkv_heads\thead_dim\tvocab\ttied\tqkv_bias\texperts\t"
       "experts_per_tok\tmax_ctx\tsliding_window\tsource\nm\tllama\t0\t4096\t11008\t32\t32\t128\t32000\tno\tno\t0\t0\t"
       "4096\t0\ts\n",
       "models.tsv:2:3: layers must be a whole number from 1 to"},
      {"quant.tsv", "name\tkind\tbase\tblock_weights\tblock_bytes\tsource\nq\tggml\t-\t32\t-3\ts\n",
       "quant.tsv:2:5: block_bytes must be a whole number from 1 to 1e+06, or -"},
      {"engines.tsv", "name\taliases\tformats\tkv_quants\tjobs\tswa\tmin_cc\trocm\tsource\ne\te\tfloat\tfp16\tinfer\tsome\t-\t-\ts\n",
       "engines.tsv:2:6: swa must be one of all|interleaved|none"},
      {"diffusion.tsv", "name\taliases\tpart\tclass\tconfig\tsource\nsd\tsd\tunet\tUNet3D\tk=1\ts\n",
       "diffusion.tsv:2:4: class must be one of"},
      {"nics.tsv",
       "name\taliases\tkind\tport_gbit\tports\tpcie_gen\tpcie_width\trdma\tgdr\tsource\nn\t\tinfiniband\t200\t1\t4\t16\tyes\t"
       "maybe\ts\n",
       "nics.tsv:2:9: gdr must be one of yes|no|unknown"},
      {"nics.tsv", "source\tname\taliases\tkind\tports\tpcie_gen\tpcie_width\trdma\tgdr\n", "nics.tsv: missing column port_gbit"},
  };
  (void)state;
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    struct gr_err err = {0};
    if (gr_facts_check_file(cases[i].file, cases[i].text, strlen(cases[i].text), &err) == 0)
      fail_msg("%s case %zu was accepted", cases[i].file, i);
    if (strncmp(err.msg, cases[i].where, strlen(cases[i].where)) != 0)
      fail_msg("%s case %zu: got \"%s\", want \"%s...\"", cases[i].file, i, err.msg, cases[i].where);
    assert_int_equal(err.code, GR_EXIT_CANNOT_RUN);
  }
  static const char good[] = "xid\tname\tclass\tseverity\taction\tsource\n79\tfell off\thw\tfail\ta\ts\n";
  struct gr_err err = {0};
  assert_int_equal(gr_facts_check_file("xid.tsv", good, strlen(good), &err), 0);
  assert_int_equal(gr_facts_check_file("nope.tsv", good, strlen(good), &err), -1);
}

/* The file's text, as the generic reader sees it, for comparing fields. */
static void raw_table(const char *file, struct gr_table *t)
{
  struct gr_err err = {0};
  if (gr_table_load(gr_data_dir(), file, t, &err) != 0)
    fail_msg("%s", err.msg);
}

static const char *raw_cell(const struct gr_table *t, size_t r, const char *col)
{
  int c = gr_table_col(t, col);
  if (c < 0)
    fail_msg("%s has no column %s", t->name, col);
  return gr_table_cell(t, r, (size_t)c);
}

/* Each typed field holds what its file says, row for row, line for line. */
static void test_typed_fields_match_files(void **state)
{
  struct gr_table t;
  (void)state;
  const struct gr_xid_rows *x = gr_xid_rows();
  raw_table("xid.tsv", &t);
  assert_int_equal(x->n, t.nrows);
  for (size_t r = 0; r < t.nrows; r++) {
    assert_int_equal(x->v[r].xid, atol(raw_cell(&t, r, "xid")));
    assert_string_equal(x->v[r].severity, raw_cell(&t, r, "severity"));
    assert_string_equal(x->v[r].action, raw_cell(&t, r, "action"));
    assert_int_equal(x->v[r].line, t.lines[r]);
  }
  gr_table_free(&t);
  const struct gr_nics_rows *nics = gr_nics_rows();
  raw_table("nics.tsv", &t);
  assert_int_equal(nics->n, t.nrows);
  for (size_t r = 0; r < t.nrows; r++) {
    assert_string_equal(nics->v[r].name, raw_cell(&t, r, "name"));
    assert_float_equal(nics->v[r].port_gbit, strtod(raw_cell(&t, r, "port_gbit"), NULL), 0);
    assert_int_equal(nics->v[r].pcie_width, atol(raw_cell(&t, r, "pcie_width")));
    assert_string_equal(nics->v[r].gdr, raw_cell(&t, r, "gdr"));
  }
  gr_table_free(&t);
  const struct gr_models_rows *m = gr_models_rows();
  raw_table("models.tsv", &t);
  assert_int_equal(m->n, t.nrows);
  for (size_t r = 0; r < t.nrows; r++) {
    assert_int_equal(m->v[r].layers, atol(raw_cell(&t, r, "layers")));
    assert_int_equal(m->v[r].sliding_window, atol(raw_cell(&t, r, "sliding_window")));
    assert_int_equal(m->v[r].tied, strcmp(raw_cell(&t, r, "tied"), "yes") == 0);
  }
  gr_table_free(&t);
  const struct gr_quant_rows *q = gr_quant_rows();
  raw_table("quant.tsv", &t);
  assert_int_equal(q->n, t.nrows);
  for (size_t r = 0; r < t.nrows; r++) {
    const char *bb = raw_cell(&t, r, "block_bytes");
    assert_int_equal(q->v[r].block_bytes, strcmp(bb, "-") == 0 ? -1 : atol(bb));
  }
  gr_table_free(&t);
  const struct gr_cpu_interconnect_rows *ci = gr_cpu_interconnect_rows();
  raw_table("cpu-interconnect.tsv", &t);
  assert_int_equal(ci->n, t.nrows);
  for (size_t r = 0; r < t.nrows; r++) {
    const char *fam = raw_cell(&t, r, "family");
    assert_int_equal(ci->v[r].family, strcmp(fam, "*") == 0 ? -1 : atol(fam));
    assert_float_equal(ci->v[r].nccl_gbps, strtod(raw_cell(&t, r, "nccl_gbps"), NULL), 0);
  }
  gr_table_free(&t);
  raw_table("cpu-memory.tsv", &t);
  for (size_t r = 0; r < t.nrows; r++)
    assert_int_equal(gr_cpu_memory_rows()->v[r].channels, atol(raw_cell(&t, r, "channels")));
  gr_table_free(&t);
  raw_table("driver-issues.tsv", &t);
  for (size_t r = 0; r < t.nrows; r++)
    assert_string_equal(gr_driver_issues_rows()->v[r].driver_max, raw_cell(&t, r, "driver_max"));
  gr_table_free(&t);
  raw_table("engines.tsv", &t);
  for (size_t r = 0; r < t.nrows; r++)
    assert_string_equal(gr_engines_rows()->v[r].min_cc, raw_cell(&t, r, "min_cc"));
  gr_table_free(&t);
  raw_table("diffusion.tsv", &t);
  for (size_t r = 0; r < t.nrows; r++)
    assert_string_equal(gr_diffusion_rows()->v[r].config, raw_cell(&t, r, "config"));
  gr_table_free(&t);
}

/* The power tables agree with the rest of the facts: a GPU's board power is
 * the catalog's TDP (two files, one figure), a peak comes with the window it
 * was measured over and is above the board power, every 80 PLUS level is at
 * its best at half load, and every row names its source. */
static void test_power_tables(void **state)
{
  (void)state;
  const struct gr_power_gpus_rows *g = gr_power_gpus_rows();
  assert_true(g->n > 0);
  for (size_t i = 0; i < g->n; i++) {
    const struct gr_gpu_model *m = gr_catalog_find(g->v[i].model);
    if (!m)
      fail_msg("power-gpus.tsv:%zu: %s is not in gpus.tsv", g->v[i].line, g->v[i].model);
    assert_int_equal(g->v[i].board_w, (long)m->tdp_w);
    assert_int_equal(g->v[i].peak_w < 0, g->v[i].window_us < 0);
    if (g->v[i].peak_w >= 0)
      assert_true(g->v[i].peak_w > g->v[i].board_w);
    assert_true(strlen(g->v[i].source) > 10);
    /* nvidia-smi -pl's range holds the default limit, the board power */
    assert_int_equal(g->v[i].limit_min_w < 0, g->v[i].limit_max_w < 0);
    if (g->v[i].limit_min_w > 0)
      assert_true(g->v[i].limit_min_w < g->v[i].board_w && g->v[i].board_w <= g->v[i].limit_max_w);
    /* a reference layout is written as a rig's `power` is, each connector with a rating row (eps8: "-") */
    struct gr_conns c;
    char bad[32];
    if (strcmp(g->v[i].connectors, "-") != 0) {
      if (gr_conns_parse(g->v[i].connectors, &c, bad, sizeof(bad)) != 0)
        fail_msg("power-gpus.tsv:%zu: connectors \"%s\" (at \"%s\")", g->v[i].line, g->v[i].connectors, bad);
      for (int k = 0; k < c.n; k++) {
        bool rated = false;
        const struct gr_power_parts_rows *pr = gr_power_parts_rows();
        for (size_t j = 0; j < pr->n; j++)
          rated |= strcmp(pr->v[j].kind, "connector") == 0 && strcmp(pr->v[j].name, c.kind[k]) == 0;
        if (!rated)
          fail_msg("power-gpus.tsv:%zu: connector %s has no row in power-parts.tsv", g->v[i].line, c.kind[k]);
      }
    }
  }
  const struct gr_power_psu_rows *p = gr_power_psu_rows();
  assert_true(p->n >= 6);
  for (size_t i = 0; i < p->n; i++) {
    assert_true(p->v[i].eff50 >= p->v[i].eff20 && p->v[i].eff50 >= p->v[i].eff100);
    assert_true(p->v[i].input == 115 || p->v[i].input == 230);
  }
  const struct gr_power_parts_rows *r = gr_power_parts_rows();
  bool rule = false, eight = false;
  for (size_t i = 0; i < r->n; i++) {
    assert_true(strlen(r->v[i].source) > 10);
    if (strcmp(r->v[i].name, "continuous-load-pct") == 0)
      rule = r->v[i].watts == 80;
    if (strcmp(r->v[i].name, "8pin") == 0)
      eight = r->v[i].watts == 150;
  }
  assert_true(rule);
  assert_true(eight);
}

/* gr_strtod's fast path gives strtod's value to the bit and stops where
 * strtod stops, on the decimals tables hold and on what it hands on. */
static void test_strtod_fast_path(void **state)
{
  (void)state;
  static const char *fixed[] = {"0", "-0", "1", "1.", ".5", "-.5", "936.2", "0.1", "0.3", "1.05", "99.999",
                                "123456789012345", "1234567890123456", "12345678901234567", "0.000000000000001",
                                "3.14159265358979", "1e3", "2.5E-2", "+4", " 7", "inf", "nan", "0x1p3", "-", ".",
                                "", "12abc", "1.2.3", "450\t", "7 "};
  char buf[64];
  unsigned seed = 12345;
  for (size_t k = 0; k < sizeof(fixed) / sizeof(fixed[0]) + 20000; k++) {
    const char *s = buf;
    if (k < sizeof(fixed) / sizeof(fixed[0]))
      s = fixed[k];
    else { /* random decimals: up to 17 digits, a point anywhere, a sign now and then */
      size_t n = 0, digits = 1 + (seed = seed * 1103515245u + 12345u) % 17, point = (seed >> 8) % (digits + 2);
      if ((seed >> 4) % 5 == 0)
        buf[n++] = '-';
      for (size_t d = 0; d < digits; d++) {
        if (d == point)
          buf[n++] = '.';
        buf[n++] = (char)('0' + (seed = seed * 1103515245u + 12345u) % 10);
      }
      buf[n] = '\0';
    }
    char *e1 = NULL, *e2 = NULL;
    double a = strtod(s, &e1), b = gr_strtod(s, &e2);
    if (memcmp(&a, &b, sizeof(a)) != 0 && !(isnan(a) && isnan(b)))
      fail_msg("\"%s\": strtod %.17g, gr_strtod %.17g", s, a, b);
    assert_ptr_equal(e1, e2);
  }
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_bench_fresh_without_topology), /* first: nothing predicted yet */
      cmocka_unit_test(test_facts_once),
      cmocka_unit_test(test_analyses_independent),
      cmocka_unit_test(test_catalog_columns),
      cmocka_unit_test(test_catalog_rows),
      cmocka_unit_test(test_catalog_added_rows),
      cmocka_unit_test(test_loaded_on_first_use),
      cmocka_unit_test(test_first_use_from_threads),
      cmocka_unit_test(test_every_data_file_loads),
      cmocka_unit_test(test_broken_rows_refused),
      cmocka_unit_test(test_typed_fields_match_files),
      cmocka_unit_test(test_power_tables),
      cmocka_unit_test(test_strtod_fast_path),
  };
  return cmocka_run_group_tests(tests, setup, NULL);
}
