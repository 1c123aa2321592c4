/* GPU grids by class (print/groups.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "print/groups.h"
#include "print/common.h"
#include "base/util.h"

bool gr_grids_grouped(const struct gr_analysis *a)
{
  return a->ngpus > GR_GROUP_ABOVE && a->gpu_class && a->nclasses < a->ngpus;
}

/* "GPU0-7" or "GPU0-3,8-11,16": a class's members as runs (they are in GPU
 * order); the caller frees it. */
static char *label_of(const struct gr_analysis *a, size_t k)
{
  size_t from = a->class_start[k], to = a->class_start[k + 1];
  char *s = xmalloc(3 + (to - from) * 24 + 1);
  size_t len = 0;
  memcpy(s, "GPU", 3);
  len = 3;
  for (size_t m = from; m < to;) {
    size_t end = m;
    while (end + 1 < to && a->class_gpus[end + 1] == a->class_gpus[end] + 1)
      end++;
    len += (size_t)sprintf(s + len, m > from ? ",%d" : "%d", a->class_gpus[m]);
    if (end > m)
      len += (size_t)sprintf(s + len, "-%d", a->class_gpus[end]);
    m = end + 1;
  }
  return s;
}

void gr_groups_make(const struct gr_analysis *a, struct gr_groups *g)
{
  memset(g, 0, sizeof(*g));
  g->n = a->nclasses;
  g->label = xcalloc(g->n + 1, sizeof(char *));
  for (size_t k = 0; k < g->n; k++) {
    g->label[k] = label_of(a, k);
    size_t w = strlen(g->label[k]);
    g->width = w > g->width ? w : g->width;
  }
}

void gr_groups_free(struct gr_groups *g)
{
  for (size_t k = 0; k < g->n; k++)
    free(g->label[k]);
  free(g->label);
  memset(g, 0, sizeof(*g));
}

void gr_group_pair(const struct gr_analysis *a, size_t r, size_t c, size_t *i, size_t *j)
{
  if (!gr_class_pair_rep(a, r, c, i, j)) /* a group of one GPU with itself: that GPU twice, its cell X */
    *i = *j = (size_t)a->class_gpus[a->class_start[r]];
}

void gr_print_group_note(FILE *out, const struct gr_analysis *a)
{
  fprintf(out, "(%zu GPUs in %zu groups that hang from the same attachment the same way: every GPU of a group has the "
               "group's row, a cell is every pair between its two groups, and a GPU with itself is X.)\n",
          a->ngpus, a->nclasses);
}

void gr_print_group_grid(FILE *out, const struct gr_analysis *a, gr_group_cell_fn cell, const void *ctx)
{
  struct gr_groups g;
  gr_groups_make(a, &g);
  size_t w = g.width > 7 ? g.width : 7;
  char *row = xmalloc((w + 16) * (g.n + 1) + 1);
  gr_print_group_note(out, a);
  size_t len = (size_t)sprintf(row, "%-*s", (int)w, "");
  for (size_t c = 0; c < g.n; c++)
    len += gr_put_cell(row + len, g.label[c], w);
  row[len++] = '\n';
  fwrite(row, 1, len, out);
  for (size_t r = 0; r < g.n; r++) {
    len = (size_t)sprintf(row, "%-*s", (int)w, g.label[r]);
    for (size_t c = 0; c < g.n; c++) {
      char buf[16];
      size_t i, j;
      gr_group_pair(a, r, c, &i, &j);
      cell(ctx, i, j, buf, sizeof(buf));
      len += gr_put_cell(row + len, buf, w);
    }
    row[len++] = '\n';
    fwrite(row, 1, len, out);
  }
  free(row);
  gr_groups_free(&g);
}
