/* Shared helpers for the cmocka unit tests. */
#ifndef GPURIG_TESTUTIL_H
#define GPURIG_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ftw.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "analysis/analysis.h"
#include "base/util.h"
#include "facts/facts.h"
#include "model/topo.h"

/* Loads gpurig's facts (GPURIG_DATA is set by ctest); fails the test otherwise. */
static inline int tu_setup_data(void **state)
{
  struct gr_err err = {0};
  (void)state;
  if (gr_facts_load(&err) != 0) {
    print_error("%s\n", err.msg);
    return -1;
  }
  return 0;
}

static inline const struct gr_finding *tu_find(const struct gr_analysis *a, const char *id, int node)
{
  for (size_t i = 0; i < a->findings.n; i++)
    if (strcmp(a->findings.v[i].id, id) == 0 && (node < -1 || a->findings.v[i].node == node))
      return &a->findings.v[i];
  return NULL;
}

/* The GPU pair matrix's entry k (row-major: k = i * ngpus + j). */
static inline struct gr_path tu_path(const struct gr_analysis *a, size_t k)
{
  return gr_gpu_path(a, k / a->ngpus, k % a->ngpus);
}

static inline const char *tu_level(const struct gr_analysis *a, int g1, int g2, char *buf)
{
  struct gr_path p = gr_gpu_path(a, (size_t)g1, (size_t)g2);
  return gr_level_str(&p, buf, 16);
}

/* A temporary copy of the fixture tree tests/data/trees/NAME (its links
 * resolve inside the copy); tu_tree_remove deletes it and frees the path. */
static inline char *tu_tree_copy(const char *name)
{
  char *dst = xstrdup("/tmp/gpurig-tree-XXXXXX");
  assert_non_null(mkdtemp(dst));
  char *cmd = xasprintf("cp -a '%s/trees/%s/.' '%s/'", getenv("GPURIG_TEST_DATA"), name, dst);
  assert_int_equal(system(cmd), 0);
  free(cmd);
  return dst;
}

static inline int tu_remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
  (void)st;
  (void)type;
  (void)ftw;
  return remove(path);
}

/* Deletes a temporary tree (depth first, links not followed) and frees dir. */
static inline void tu_tree_remove(char *dir)
{
  assert_int_equal(nftw(dir, tu_remove_entry, 16, FTW_DEPTH | FTW_PHYS), 0);
  free(dir);
}

/* Replaces the file `attr` of PCI device bdf in the tree at root. */
static inline void tu_tree_write_attr(const char *root, const char *bdf, const char *attr, const char *text)
{
  char *f = xasprintf("%s/sys/bus/pci/devices/%s/%s", root, bdf, attr);
  FILE *w = fopen(f, "w");
  assert_non_null(w);
  fputs(text, w);
  assert_int_equal(fclose(w), 0);
  free(f);
}

#endif
