#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/file.h"
#include "cli/cli.h"
#include "cli/options.h"
#include "doctor/doctor.h"
#include "facts/data.h"
#include "print/json_stream.h"
#include "print/machine.h"
#include "print/text.h"
#include "print/diagram/diagram.h"
#include "print/report/report_html.h"

/* report: the source, the output, NCCL, and the files of --html/--markdown
 * with the saved results they add. */
struct report_opts {
  struct gr_source_opts src;
  struct gr_output_opts out;
  struct gr_nccl_version nccl; /* major 0: not given */
  const char *html, *markdown;        /* "-": standard output */
  const char *bench_json, *burn_json; /* saved `bench --json`, `burn --json` */
};

static const struct gr_option report_rows[] = {
    GR_OPT_STRING_ROW("html", "FILE", struct report_opts, html,
                      "option '--html' needs a file to write (- for standard output), not an empty value",
                      "write the report as one self-contained HTML page (no scripts, nothing\n"
                      "fetched): summary, diagram, GPUs, heat maps, hives, predictions beside\n"
                      "the link limits, verdicts, the topology's and doctor's findings with\n"
                      "their fixes, and the --bench and --burn results as charts; - writes\n"
                      "it to standard output. Nothing else is printed (docs/report.md)"),
    GR_OPT_STRING_ROW("markdown", "FILE", struct report_opts, markdown,
                      "option '--markdown' needs a file to write (- for standard output), not an empty value",
                      "the same as GitHub-flavoured Markdown tables (for an issue or a forum)"),
    GR_OPT_STRING_ROW("bench", "FILE", struct report_opts, bench_json,
                      "option '--bench' needs a file of gpurig bench --json output, not an empty value",
                      "add the results `gpurig bench --json` saved in FILE"),
    GR_OPT_STRING_ROW("burn", "FILE", struct report_opts, burn_json,
                      "option '--burn' needs a file of gpurig burn --json output, not an empty value",
                      "add the results `gpurig burn --json` saved in FILE"),
};

static const struct gr_option_group report_groups[] = {
    GR_OPTION_GROUP(gr_rows_source, struct report_opts, src, gr_check_source),
    GR_OPTION_GROUP(gr_rows_rig, struct report_opts, src, NULL),
    GR_OPTION_GROUP(gr_rows_gpu, struct report_opts, src, gr_check_gpu_has_rig),
    GR_OPTION_GROUP(gr_rows_json, struct report_opts, out, NULL),
    GR_OPTION_GROUP(gr_rows_verbose, struct report_opts, out, NULL),
    GR_OPTION_GROUP(gr_rows_nccl, struct report_opts, nccl, NULL),
    GR_OPTION_OWN(report_rows, NULL),
};
static const struct gr_command_options report_spec = {
    report_groups, sizeof(report_groups) / sizeof(report_groups[0]), GR_POSITIONAL_NONE};

/* --help's option lines, in this order, some in report's own words */
static const char *const report_help[] = {
    "root=replay a gathered tree instead of this machine",
    "input=read an hwloc XML or NCCL topology file, or a saved nvidia-smi or rocm-smi\n"
    "matrix (- reads standard input)",
    "rig",
    "gpu",
    "verbose=everything: the GPU table, the matrices, every verdict and finding whole",
    "json={\"machine_report\": {...}, \"example\": {...} or null} (docs/json.md)",
    "nccl-version=the NCCL whose P2P defaults the predictions and advice follow (2.21,\n"
    "2.21.5; default: the newest in data/nccl-p2p.tsv, stated as assumed)",
    "html",
    "markdown",
    "bench",
    "burn",
    NULL,
};

static void report_usage(void)
{
  printf("usage: gpurig report [--root DIR | --input FILE.xml | --rig RIG [--gpu MODEL]] [--json]\n"
         "                     [--nccl-version X.Y[.Z]] [--verbose]\n"
         "       gpurig report [SOURCE] [--html FILE] [--markdown FILE] [--bench FILE] [--burn FILE]\n"
         "\n"
         "An overview of the machine on one screen (40 lines of 100 columns): the machine, its\n"
         "GPUs grouped, the wiring, the P2P hives, the predicted all-reduce against what bounds\n"
         "it, one line per verdict and the top findings. Lines wrap to the terminal; colour only\n"
         "on a terminal and never with NO_COLOR set. This is what a bare `gpurig` runs. On a\n"
         "machine without GPUs it says so, then shows a bundled real topology (an NVIDIA DGX-2H\n"
         "from hwloc's test suite), labelled as an example.\n"
         "\n");
  gr_print_option_help(stdout, &report_spec, report_help, 18);
  printf("\n"
         "Exit status: 0 ok, 1 a finding is a warning, 2 bad input (also an unreadable or wrong\n"
         "--bench or --burn file), 3 could not run. With --html or --markdown the status is still\n"
         "that of the topology's findings; doctor's, bench's and burn's are in the page.\n");
}

/* No GPU on this machine: a bundled real one stands in, labelled as an example. */
static int open_example(const struct gr_machine *m, struct gr_machine *ex, bool *have, struct gr_err *err)
{
  *have = false;
  if (m->topo.ngpus > 0 || m->src.kind != GR_SRC_LIVE)
    return 0; /* the example only stands in for this machine, never for a given input */
  if (gr_machine_open_example(ex, err) != 0)
    return -1;
  *have = true;
  return 0;
}

/* One machine as text: the one-screen overview, or everything with --verbose. */
static void print_machine(FILE *out, const struct gr_machine *m, const struct gr_text_style *st)
{
  if (st->verbose)
    gr_print_report_text(out, m, st);
  else
    gr_print_report_brief(out, m, st);
}

static void print_report(const struct report_opts *o, const struct gr_machine *m, const struct gr_machine *ex)
{
  if (o->out.json) {
    struct gr_jw w; /* streamed: the matrices of a large machine are never in memory */
    gr_jw_begin(&w, stdout);
    gr_jw_object(&w, "machine_report");
    gr_machine_json_members(&w, m);
    gr_jw_close(&w);
    if (ex) {
      gr_jw_object(&w, "example");
      gr_machine_json_members(&w, ex);
      gr_jw_close(&w);
    } else {
      gr_jw_put(&w, "example", json_null());
    }
    gr_jw_end(&w);
    return;
  }
  struct gr_text_style st;
  FILE *out = cli_text_begin(o->out.verbose, &st);
  if (ex)
    fprintf(out, "No GPU found on this machine: gpurig describes it below, then shows a bundled example.\n");
  print_machine(out, m, &st);
  if (ex) {
    fprintf(out, "\n==== EXAMPLE, NOT THIS MACHINE: a real NVIDIA DGX-2H from hwloc's test suite ====\n");
    print_machine(out, ex, &st);
  }
  cli_text_end(out);
}

/* ---- --html and --markdown ---- */

enum { REPORT_JSON_MAX = 64 << 20 }; /* a bench of 64 GPUs writes a few MiB */

static int files_conflict(const struct report_opts *o)
{
  const char *why = NULL;
  if (!o->html && !o->markdown)
    why = "--bench and --burn add results to the --html or --markdown report: give one of those";
  else if (o->out.json)
    why = "--json and --html/--markdown exclude each other (both are reports)";
  else if (o->html && o->markdown && gr_file_is_stdout(o->html) && gr_file_is_stdout(o->markdown))
    why = "--html and --markdown cannot both go to standard output";
  else if (o->html && o->markdown && strcmp(o->html, o->markdown) == 0)
    why = "--html and --markdown name the same file";
  if (why)
    gr_diag("gpurig: report: %s\n", why);
  return why ? -1 : 0;
}

/* A saved --json output of bench or burn: read, parsed, its shape checked.
 * 0 (also when path is NULL: *out NULL), or -1 after one line naming the
 * file and what is wrong with it. */
static int load_json(const char *opt, const char *path, bool (*shape_ok)(const json_t *, const char **), json_t **out)
{
  struct gr_file f = {0};
  struct gr_err err = {0};
  json_error_t je;
  const char *why = NULL;
  *out = NULL;
  if (!path)
    return 0;
  if (gr_file_read(path, REPORT_JSON_MAX, 0, &f, &err) != 0) {
    gr_diag("gpurig: %s %s\n", opt, err.msg);
    return -1;
  }
  *out = json_loadb(f.data, f.len, JSON_REJECT_DUPLICATES, &je);
  gr_file_free(&f);
  if (!*out) {
    gr_diag("gpurig: %s %s: not JSON (line %d: %s)\n", opt, path, je.line, je.text);
    return -1;
  }
  if (!shape_ok(*out, &why)) {
    gr_diag("gpurig: %s %s: %s\n", opt, path, why);
    json_decref(*out);
    *out = NULL;
    return -1;
  }
  return 0;
}

/* Runs a printer into memory and writes its bytes through the one writer. */
static int write_report(const char *path, const struct gr_report_doc *doc, const char *svg_name, bool html)
{
  char *buf = NULL;
  size_t len = 0;
  struct gr_err err = {0};
  FILE *f = open_memstream(&buf, &len);
  if (!f) {
    gr_diag("gpurig: %s: out of memory\n", path);
    return GR_EXIT_CANNOT_RUN;
  }
  int printed = html ? gr_print_report_html(f, doc) : gr_print_report_markdown(f, doc, svg_name);
  int closed = fclose(f);
  int rc = printed == 0 && closed == 0 ? gr_file_write(path, buf, len, &err) : gr_fail(&err, GR_EXIT_CANNOT_RUN,
                                                                                 "%s: the report could not be made", path);
  free(buf);
  return rc == 0 ? 0 : gr_report_error(&err);
}

/* --markdown FILE.md: the diagram goes beside it, FILE-wiring.svg; NULL
 * for standard output. The caller frees it. */
static char *wiring_path(const char *md)
{
  if (gr_file_is_stdout(md))
    return NULL;
  size_t n = strlen(md);
  if (n > 3 && strcmp(md + n - 3, ".md") == 0)
    n -= 3;
  return xasprintf("%.*s-wiring.svg", (int)n, md);
}

/* Every file the report will write (--html, --markdown and its diagram) is
 * checked before any is written: a refused one must not leave the others
 * half done, such as a Markdown file linking a diagram that was refused. */
static int check_targets(const struct report_opts *o)
{
  struct gr_err err = {0};
  char *svg = o->markdown ? wiring_path(o->markdown) : NULL;
  int rc = (o->html && gr_out_check(o->html, &err) != 0) || (o->markdown && gr_out_check(o->markdown, &err) != 0) ||
                   (svg && gr_out_check(svg, &err) != 0)
               ? gr_report_error(&err)
               : 0;
  free(svg);
  return rc;
}

/* --markdown FILE.md, with the diagram beside it (wiring_path) linked by
 * its name alone. */
static int write_markdown(const char *path, const struct gr_report_doc *doc)
{
  char *svg_path = doc->diagram_svg ? wiring_path(path) : NULL;
  const char *svg_name = NULL;
  struct gr_err err = {0};
  if (svg_path)
    svg_name = strrchr(svg_path, '/') ? strrchr(svg_path, '/') + 1 : svg_path;
  /* the diagram first: a Markdown file never links one that failed */
  int rc = svg_path && gr_file_write(svg_path, doc->diagram_svg, strlen(doc->diagram_svg), &err) != 0
               ? gr_report_error(&err)
               : write_report(path, doc, svg_name, false);
  free(svg_path);
  return rc;
}

/* The files of --html and --markdown: the machine with its predictions,
 * doctor's findings on it (the same checks `gpurig doctor` runs, with its
 * defaults) and the saved results. Nothing goes to standard output but a
 * report written to "-". */
static int report_files(const struct report_opts *o)
{
  struct gr_machine m = {0};
  struct gr_doctor_report dr = {0};
  struct gr_err err = {0};
  json_t *bench = NULL, *burn = NULL;
  char *diagram = NULL;
  int rc = GR_EXIT_FAIL;
  if (files_conflict(o) != 0 || check_targets(o) != 0 || load_json("--bench", o->bench_json, gr_report_bench_ok, &bench) != 0 ||
      load_json("--burn", o->burn_json, gr_report_burn_ok, &burn) != 0)
    goto out;
  struct gr_source src = cli_source_of(&o->src, false);
  src.nccl = o->nccl;
  if (cli_open(&src, GR_MACHINE_PREDICT, &m, &err) != 0) {
    rc = gr_report_error(&err);
    goto out;
  }
  struct gr_doctor_opts dopt = {.expect_gpus = -1, .xid_window_h = -1};
  gr_doctor_run(&m, &dopt, &dr);
  diagram = gr_diagram_svg(&m);
  struct gr_report_doc doc = {.m = &m, .diagram_svg = diagram, .doctor = &dr, .bench = bench, .burn = burn,
                              .bench_name = o->bench_json, .burn_name = o->burn_json};
  rc = o->html ? write_report(o->html, &doc, NULL, true) : 0;
  if (rc == 0 && o->markdown)
    rc = write_markdown(o->markdown, &doc);
  if (rc == 0)
    rc = gr_findings_exit(&m.analysis.findings);
out:
  free(diagram);
  gr_doctor_report_free(&dr);
  gr_machine_close(&m);
  json_decref(bench);
  json_decref(burn);
  return rc;
}

int cmd_report(int argc, char **argv)
{
  struct report_opts o;
  struct gr_parsed p;
  struct gr_machine m, ex = {0};
  struct gr_err err = {0};
  bool have_example = false;
  int rc;
  if (gr_parse_options(argc, argv, &report_spec, &o, sizeof(o), &p) != 0)
    return GR_EXIT_FAIL;
  if (p.help) {
    report_usage();
    return GR_EXIT_OK;
  }
  if (o.html || o.markdown || o.bench_json || o.burn_json)
    return report_files(&o);
  struct gr_source src = cli_source_of(&o.src, false);
  src.nccl = o.nccl;
  /* the overview shows the GPUs, NICs and drives and the paths to them; the
   * --html page runs doctor, whose checks want every device (report_files) */
  src.gpu_paths = true;
  if (cli_open(&src, GR_MACHINE_PREDICT, &m, &err) != 0)
    return gr_report_error(&err);
  if (open_example(&m, &ex, &have_example, &err) != 0) {
    rc = gr_report_error(&err);
    goto out;
  }
  print_report(&o, &m, have_example ? &ex : NULL);
  rc = gr_findings_exit(&m.analysis.findings);
out:
  gr_machine_close(&ex);
  gr_machine_close(&m);
  return rc;
}
