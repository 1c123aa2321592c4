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
  /* The parser is linear and refuses a file at the first line over its
   * limits (docs/rig-format.md), so inputs up to 1 MiB are cheap and reach
   * those limits; larger ones would only repeat them more slowly. */
  if (size > (1u << 20))
    return 0;
  if (gr_rig_parse("fuzz.rig", (const char *)data, size, &t, &err) != 0)
    return 0;
  /* The analysis and predictions cost grows with the GPU count (n^2 hop
   * tables, ring searches over every group), not with the file: past 8 GPUs
   * one input takes tens of milliseconds to seconds and the fuzzer would
   * report slow units, not bugs. Large machines are covered by
   * tests/unit/test_analysis.c (8 to 256 GPUs under ASan). */
  if (t.ngpus <= 8) {
    gr_analyze(&t, &a);
    gr_predict(&t, &a, &p);
    gr_prediction_free(&p);
    gr_analysis_free(&a);
  }
  gr_topo_free(&t);
  return 0;
}
