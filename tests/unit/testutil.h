/* Shared helpers for the cmocka unit tests. */
#ifndef GPURIG_TESTUTIL_H
#define GPURIG_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "analysis/analysis.h"
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

static inline const char *tu_level(const struct gr_analysis *a, int g1, int g2, char *buf)
{
  return gr_level_str(&a->gpu_gpu[g1 * (int)a->ngpus + g2], buf, 16);
}

#endif
