/* What report_doc.c (the building blocks, the JSON readers, the whole),
 * report_doc_machine.c and report_doc_runs.c share: the block builders and
 * the sections, doc_-prefixed. Only those three files and report_doc_fleet.c
 * include it. */
#ifndef GR_PRINT_REPORT_DOC_INTERNAL_H
#define GR_PRINT_REPORT_DOC_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#include "print/report/report_doc.h"

#define para(d, ...) doc_text_block(d, RD_PARA, __VA_ARGS__)
#define note(d, ...) doc_text_block(d, RD_NOTE, __VA_ARGS__)

/* report_doc_machine.c */
void doc_header(struct rd_doc *d, const struct gr_report_doc *doc);
const char *doc_plural(size_t n);
void doc_summary(struct rd_doc *d, const struct gr_report_doc *doc);
void doc_diagram(struct rd_doc *d, const struct gr_report_doc *doc);
void doc_gpus(struct rd_doc *d, const struct gr_machine *m);
struct rd_table *doc_matrix(struct rd_doc *d, const char *title, size_t ngpus, size_t nnics);
void doc_matrices(struct rd_doc *d, const struct gr_machine *m);
void doc_hives(struct rd_doc *d, const struct gr_machine *m);
void doc_power(struct rd_doc *d, const struct gr_machine *m);
void doc_predictions(struct rd_doc *d, const struct gr_report_doc *doc);
void doc_verdicts(struct rd_doc *d, const struct gr_machine *m);
void doc_findings(struct rd_doc *d, const struct gr_report_doc *doc);
void doc_findings_table(struct rd_doc *d, const struct gr_findings *fs); /* worst first, with fixes */
void doc_json_findings(struct rd_doc *d, const json_t *list);

/* report_doc_runs.c */
void doc_bench(struct rd_doc *d, const struct gr_report_doc *doc);
void doc_burn(struct rd_doc *d, const struct gr_report_doc *doc);

/* report_doc_fleet.c: rd_build_fleet (report_doc.h) */

/* report_doc.c */
struct rd_block *doc_add(struct rd_doc *d, enum rd_kind kind);
void doc_heading(struct rd_doc *d, int level, const char *id, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void doc_text_block(struct rd_doc *d, enum rd_kind kind, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
struct rd_table *doc_table_raw(struct rd_doc *d, const char *title, size_t nrows, size_t ncols);
struct rd_table *doc_table(struct rd_doc *d, const char *title, size_t nrows, size_t ncols, ...);
void doc_cell(struct rd_table *t, const char *cls, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void doc_cell_str(struct rd_table *t, const char *cls, const char *s);
void doc_row_gpu(struct rd_table *t, size_t row, size_t gpu);
void doc_row_node(struct rd_table *t, size_t row, const char *name);
struct rd_bar *doc_bars(struct rd_doc *d, const char *title, const char *unit, size_t n);
const char *doc_heat(double v, double hi);
const char *doc_sev_cls(enum gr_sev s);
const char *doc_level_cls(enum gr_level l);
double doc_jnum(const json_t *o, const char *key);
const char *doc_jstr(const json_t *o, const char *key);
long doc_jidx(const json_t *o, const char *key);
enum gr_sev doc_sev_of(const char *s);
void doc_cell_num(struct rd_table *t, const char *cls, double v, int decimals);

#endif
