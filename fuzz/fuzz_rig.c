/* libFuzzer target: rig files through the parser, the analysis and the
 * predictions. */
#include <stdint.h>
#include <stdlib.h>

#include "analysis/analysis.h"
#include "analysis/predict.h"
#include "load/rig.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  struct gr_topo t;
  struct gr_analysis a;
  struct gr_prediction p;
  struct gr_err err = {0};
  if (size > 4096) /* rigs are short; long inputs only slow the ring search down */
    return 0;
  if (gr_rig_parse("fuzz.rig", (const char *)data, size, &t, &err) != 0)
    return 0;
  if (t.ngpus <= 8) {
    gr_analyze(&t, &a);
    gr_predict(&t, &a, &p);
    gr_prediction_free(&p);
    gr_analysis_free(&a);
  }
  gr_topo_free(&t);
  return 0;
}
