/* gpurig report --html FILE and --markdown FILE: the build report people post
 * or attach to a bug report. One page with the machine line, the summary
 * verdicts, the block diagram, the GPUs, the matrices as heat maps, the
 * hives, the predictions beside the link limits, the verdicts, the findings
 * (the topology's and doctor's, with their fixes, costs and evidence) and,
 * when given, the results of `gpurig bench --json` and `gpurig burn --json`
 * drawn as charts. docs/report.md describes it.
 *
 * The HTML page is one self-contained file: inline CSS and inline SVG, no
 * script, nothing fetched (its Content-Security-Policy forbids it), every
 * value from an input escaped. Neither output carries the date or time, so
 * the same inputs give the same bytes. Markdown has the same content as
 * GitHub-flavoured tables; its charts become tables.
 *
 * Ownership: the printers keep no pointer into the document; the document
 * points at what the caller owns (the machine, doctor's report, the JSON). */
#ifndef GPURIG_PRINT_REPORT_HTML_H
#define GPURIG_PRINT_REPORT_HTML_H

#include <stdbool.h>
#include <stdio.h>

#include <jansson.h>

#include "analysis/machine.h"
#include "doctor/doctor.h"

struct gr_report_doc {
  const struct gr_machine *m;            /* opened with GR_MACHINE_PREDICT */
  const char *diagram_svg;               /* an inline SVG block diagram; NULL: not in this build */
  const struct gr_doctor_report *doctor; /* doctor's findings on m; NULL: not run */
  const json_t *bench;                   /* `gpurig bench --json` output; NULL: none given */
  const json_t *burn;                    /* `gpurig burn --json` output; NULL: none given */
  const char *bench_name, *burn_name;    /* the files they came from, as shown; may be NULL */
};

/* Whether j has the shape of `gpurig bench --json` (an object with a
 * "results" array and a "backend") or `gpurig burn --json` (an object with
 * "gpus" and "verdicts" arrays). false with *why, one static phrase
 * ("is gpurig burn output, not bench's") for the error line. */
bool gr_report_bench_ok(const json_t *j, const char **why);
bool gr_report_burn_ok(const json_t *j, const char **why);

/* The page. 0, or -1 when writing to out failed. */
int gr_print_report_html(FILE *out, const struct gr_report_doc *doc);
/* The Markdown. svg_name: the file name the caller writes doc->diagram_svg
 * to beside it, linked as an image; NULL with a diagram: it is not written
 * (standard output), said so. 0, or -1 when writing to out failed. */
int gr_print_report_markdown(FILE *out, const struct gr_report_doc *doc, const char *svg_name);

#endif
