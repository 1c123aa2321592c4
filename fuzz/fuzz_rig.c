/* libFuzzer target: rig files through the parser, the analysis and the
 * predictions. */
#include <stdint.h>
#include <stdlib.h>

#include "analysis.h"
#include "catalog.h"
#include "pcilink.h"
#include "predict.h"
#include "rig.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
  struct gr_err err = {0};
  (void)argc;
  (void)argv;
  if (gr_pcie_init(&err) != 0 || gr_catalog_init(&err) != 0)
    abort(); /* GPURIG_DATA must point at data/ */
  return 0;
}

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
  if (t.ngpus <= 8 && gr_analyze(&t, &a, &err) == 0) {
    if (gr_predict(&t, &a, &p, &err) == 0)
      gr_prediction_free(&p);
    gr_analysis_free(&a);
  }
  gr_topo_free(&t);
  return 0;
}
