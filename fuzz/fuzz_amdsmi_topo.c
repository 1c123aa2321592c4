/* libFuzzer target: saved `amd-smi topology` output (its text tables and
 * both --json layouts) through the sniffer, the reader (load/smi_topo_amd.c),
 * the pair levels (load/smi_topo_pairs.c), the tree builder
 * (load/smi_topo.c), the analysis, the predictions and the JSON printer. */
#include <stdint.h>
#include <stdlib.h>

#include "load/loaders.h"
#include "print/topo.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  struct gr_topo t;
  struct gr_err err = {0};
  /* a matrix holds at most 1,024 devices (MX_MAX_DEVICES); 1 MiB reaches it */
  if (size > (1u << 20))
    return 0;
  (void)gr_smi_topo_sniff((const char *)data, size);
  if (gr_load_amdsmi_topo_buffer("fuzz.txt", (const char *)data, size, &t, &err) != 0)
    return 0;
  /* the analysis is O(n^2) and more in GPUs and has targets of its own; a
   * few hundred GPUs from one made-up line would only slow the reader's runs */
  if (t.ngpus > 64) {
    gr_topo_free(&t);
    return 0;
  }
  fuzz_judge(&t, true);
  return 0;
}
