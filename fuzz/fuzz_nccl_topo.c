/* libFuzzer target: NCCL topology files through the sniffer, gpurig's own
 * XML reader and loader (load/nccl_topo.c), the NVSwitch inference that
 * --input adds, the analysis, the predictions and the JSON printer. */
#include <stdint.h>
#include <stdlib.h>

#include "analysis/analysis.h"
#include "analysis/predict.h"
#include "load/loaders.h"
#include "print/topo.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  struct gr_topo t;
  struct gr_analysis a;
  struct gr_prediction p;
  struct gr_err err = {0};
  /* The reader is linear and stops at its limits (16,384 elements, 64
   * levels, 255-byte values), which inputs of 1 MiB reach; larger ones only
   * repeat them more slowly. */
  if (size > (1u << 20))
    return 0;
  (void)gr_nccl_topo_sniff((const char *)data, size);
  if (gr_load_nccl_topo_buffer("fuzz.xml", (const char *)data, size, &t, &err) != 0)
    return 0;
  gr_topo_infer_fabric(&t); /* as gr_source_load does after the loader */
  /* The analysis costs n^2 and the predictions more in the GPU count, not
   * the file's size (see fuzz_rig.c): past 8 GPUs the fuzzer would report
   * slow units, not bugs. */
  if (t.ngpus <= 8) {
    gr_analyze(&t, &a);
    json_t *j = gr_topo_to_json(&t, &a);
    char *s = json_dumps(j, 0);
    free(s);
    json_decref(j);
    gr_predict(&t, &a, &p);
    gr_prediction_free(&p);
    gr_analysis_free(&a);
  }
  gr_topo_free(&t);
  return 0;
}
