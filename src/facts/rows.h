/* Typed rows from a parsed table (facts/data.h): each column by its spec,
 * numbers parsed and range-checked once, at load. Only the facts loader
 * uses it (facts/tables.h declares the tables). */
#ifndef GPURIG_ROWS_H
#define GPURIG_ROWS_H

#include <stddef.h>

#include "base/util.h"
#include "facts/data.h"

enum gr_col_kind { GR_COL_STR, GR_COL_WORD, GR_COL_INT, GR_COL_NUM, GR_COL_BOOL };

/* One column: its name in the file's header, how its cells are read (see
 * facts/tables.h), and where the value goes in the row struct. */
struct gr_col_spec {
  const char *name;
  enum gr_col_kind kind;
  double lo, hi;
  const char *words;
  size_t offset;
};

/* The rows of t as an array of t->nrows structs of row_size bytes (*rows,
 * which the caller frees; its strings point into t's cells), each row's
 * file line at line_offset. Returns 0, or -1 with err (GR_EXIT_CANNOT_RUN):
 * "FILE: missing column NAME", or "FILE:LINE:COLUMN: NAME ...", COLUMN
 * counting the file's fields from 1. */
int gr_rows_parse(const struct gr_table *t, const struct gr_col_spec *spec, size_t nspec, size_t row_size,
                  size_t line_offset, void **rows, struct gr_err *err);

#endif
