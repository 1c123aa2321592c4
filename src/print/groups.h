/* GPU grids by class above 64 GPUs: the analysis's GPU classes
 * (gr_analysis.gpu_class) hang from the same attachment the same way, so
 * every pair between two classes has the same cells, and a grid of 512
 * GPUs prints as one of its 64 switches' groups, each row and column a
 * group ("GPU0-7"). No single node has more than 64 GPUs, so every machine
 * prints as before; a generated or fleet-sized input gets the grouped grid,
 * which says every pair's value (docs/json.md, "Grouped matrices").
 *
 * Ownership: gr_groups_make fills *g with labels it owns; free with
 * gr_groups_free. */
#ifndef GPURIG_PRINT_GROUPS_H
#define GPURIG_PRINT_GROUPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "analysis/analysis.h"

/* Grids of more GPUs than this are grouped. */
#define GR_GROUP_ABOVE 64

/* Whether a's GPU grids are printed by class: more GPUs than
 * GR_GROUP_ABOVE, and fewer classes than GPUs. */
bool gr_grids_grouped(const struct gr_analysis *a);

struct gr_groups {
  size_t n;      /* classes */
  char **label;  /* per class: its members, "GPU0-7" or "GPU0-3,8-11" */
  size_t width;  /* the widest label */
};
void gr_groups_make(const struct gr_analysis *a, struct gr_groups *g);
void gr_groups_free(struct gr_groups *g);

/* The GPU pair whose cell stands for classes r and c: the first member of
 * each; for a class with itself, its first two members (the same GPU twice
 * where it has one, whose cell is X). */
void gr_group_pair(const struct gr_analysis *a, size_t r, size_t c, size_t *i, size_t *j);

/* The line under a grouped grid's title that says how to read it. */
void gr_print_group_note(FILE *out, const struct gr_analysis *a);

/* A GPU grid by class: the note, then a row and a column per group, each
 * cell cell(ctx, i, j) of the GPU pair that stands for the two groups. */
typedef void (*gr_group_cell_fn)(const void *ctx, size_t i, size_t j, char *buf, size_t cap);
void gr_print_group_grid(FILE *out, const struct gr_analysis *a, gr_group_cell_fn cell, const void *ctx);

#endif
