/* Pinned host memory on a NUMA node (see pinned.h). */
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/pinned.h"
#include "base/fs.h"

/* The CPUs of NUMA node `node` from the live sysfs cpulist ("0-15,64-79");
 * false when it cannot be read or names none. */
static bool node_cpus(int node, cpu_set_t *set)
{
  struct gr_fs fs;
  char path[96], list[4096];
  snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/cpulist", node);
  if (node < 0 || gr_fs_init(&fs, NULL) != 0 || gr_fs_read_str(&fs, path, list, sizeof(list)) != 0)
    return false;
  CPU_ZERO(set);
  for (char *p = list; *p;) {
    char *end;
    long lo = strtol(p, &end, 10), hi = lo;
    if (end == p)
      return false;
    if (*end == '-')
      hi = strtol(end + 1, &end, 10);
    for (long cpu = lo; cpu >= 0 && cpu <= hi && cpu < CPU_SETSIZE; cpu++)
      CPU_SET((int)cpu, set);
    p = *end == ',' ? end + 1 : end;
    if (*end && *end != ',')
      return false;
  }
  return CPU_COUNT(set) > 0;
}

int gr_pinned_alloc(int node, int (*alloc)(void *ctx, void **p, size_t bytes), void *ctx, void **p, size_t bytes)
{
  cpu_set_t old, want;
  bool moved = node_cpus(node, &want) && sched_getaffinity(0, sizeof(old), &old) == 0 &&
               sched_setaffinity(0, sizeof(want), &want) == 0;
  *p = NULL;
  int rc = alloc(ctx, p, bytes);
  if (rc == 0)
    memset(*p, 0, bytes); /* first touch, on the node's CPUs */
  if (moved)
    (void)sched_setaffinity(0, sizeof(old), &old);
  return rc;
}
