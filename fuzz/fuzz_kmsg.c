/* libFuzzer target: Xid events from kernel-log text in any of its forms,
 * and their grouping by bus address and Xid. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "doctor/kmsg.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  struct gr_xid_log l;
  gr_kmsg_parse_xids((const char *)data, size, &l);
  /* every detail must be a terminated string inside its array */
  for (size_t i = 0; i < l.nev; i++)
    if (strlen(l.ev[i].detail) >= sizeof(l.ev[i].detail) || l.ev[i].line == 0 || l.ev[i].line > l.lines)
      abort();
  if (l.bad_lines > l.lines || (l.bad_lines > 0) != (l.first_bad_line > 0))
    abort();
  /* every event is in exactly one group, or older than the window */
  struct gr_xid_groups g;
  gr_xid_group(&l, size & 1 ? 0 : 1e3, &g);
  size_t events = g.older;
  for (size_t i = 0; i < g.n; i++)
    events += g.v[i].count;
  if (events != l.nev || g.n > l.nev)
    abort();
  gr_xid_groups_free(&g);
  gr_xid_log_free(&l);
  return 0;
}
