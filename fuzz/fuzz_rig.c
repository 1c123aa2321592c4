/* libFuzzer target: rig files through the parser, the analysis and the
 * predictions. */
#include <stdint.h>
#include <stdlib.h>

#include "load/rig.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  struct gr_topo t;
  struct gr_err err = {0};
  /* The parser is linear and refuses a file at the first line over its
   * limits (docs/rig-format.md), so inputs up to 1 MiB are cheap and reach
   * those limits; larger ones would only repeat them more slowly. */
  if (size > (1u << 20))
    return 0;
  if (gr_rig_parse("fuzz.rig", (const char *)data, size, &t, &err) != 0)
    return 0;
  fuzz_judge(&t, true);
  return 0;
}
