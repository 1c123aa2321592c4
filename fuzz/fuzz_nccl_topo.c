/* libFuzzer target: NCCL topology files through the sniffer, gpurig's own
 * XML reader and loader (load/nccl_topo.c), the NVSwitch inference that
 * --input adds, the analysis, the predictions and the JSON printer. */
#include <stdint.h>
#include <stdlib.h>

#include "load/loaders.h"
#include "print/topo.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  struct gr_topo t;
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
  fuzz_judge(&t, true);
  return 0;
}
