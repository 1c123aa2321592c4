/* Reference data files (data/NAME.tsv): facts that change live there, each row
 * with its source, not in C arrays. Format: UTF-8 text, '#' starts a comment
 * line, the first other line names the tab-separated columns, every row has
 * exactly that many fields. */
#ifndef GPURIG_DATA_H
#define GPURIG_DATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "base/util.h"

struct gr_table {
  char *name;     /* file name used in error messages */
  char *text;     /* the file's text, cut in place: every column name and cell points into it */
  size_t ncols;
  char **cols;    /* column names */
  size_t nrows;
  char **cells;   /* nrows * ncols strings */
  size_t *lines;  /* source line of each row, for error messages */
};

/* Parses buf (len bytes, need not be NUL-terminated). On success fills *t
 * (caller frees with gr_table_free) and returns 0; on error returns -1 with
 * "NAME:LINE: problem" in err and *t left empty. */
int gr_table_parse(const char *name, const char *buf, size_t len, struct gr_table *t,
                   struct gr_err *err);

/* Loads `rel` (e.g. "pcie-links.tsv") from the data directory dir. Only
 * the facts loader reads data tables (facts/facts.h). */
int gr_table_load(const char *dir, const char *rel, struct gr_table *t, struct gr_err *err);


/* Column index by name, or -1. */
int gr_table_col(const struct gr_table *t, const char *name);
/* Cell text (never NULL for valid indices). */
const char *gr_table_cell(const struct gr_table *t, size_t row, size_t col);
void gr_table_free(struct gr_table *t);

/* Finds the data directory: $GPURIG_DATA, else next to the executable
 * (../share/gpurig, ../data), else the source tree, else the install prefix.
 * The facts loader calls it once and keeps the answer. */
void gr_data_dir_find(char *dir, size_t cap);
/* The data directory the facts were loaded from (facts/facts.h). */
const char *gr_data_dir(void);
/* Writes "<data dir>/<rel>" into buf; returns buf or NULL if too long. */
char *gr_data_path(const char *rel, char *buf, size_t cap);

/* The names under data/subdir ending in suffix, the suffix cut ("rigs",
 * ".rig" -> "wopr", ...), sorted. The caller frees each and the array. 0,
 * or -1 with err (GR_EXIT_CANNOT_RUN) when the folder cannot be read. */
int gr_data_list(const char *subdir, const char *suffix, char ***names, size_t *n, struct gr_err *err);

#endif
