/* libFuzzer target: the parsers of single values (link speed, link width,
 * AER counter files, PCI bus ids as sysfs, NVML and CUDA spell them, and
 * the size arguments of gpurig bench), fed the same bytes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/gpu.h"
#include "load/loaders.h"
#include "model/topo.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  char *s = malloc(size + 1);
  memcpy(s, data, size);
  s[size] = '\0'; /* sysfs reads are NUL-terminated by gpurig's reader */
  int gen, width;
  uint64_t total;
  unsigned d, b, v, f;
  (void)gr_pcie_parse_speed(s, &gen);
  (void)gr_pcie_parse_width(s, &width);
  (void)gr_parse_aer_total(s, &total);
  (void)gr_parse_busid(s, &d, &b, &v, &f);
  char norm[32];
  size_t bytes;
  (void)gr_busid_normalize(s, norm, sizeof(norm));
  (void)gr_parse_size(s, &bytes);
  free(s);
  return 0;
}
