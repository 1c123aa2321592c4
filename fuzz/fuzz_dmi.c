/* libFuzzer target: the SMBIOS table walker and memory-device decoder. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "doctor/dmi.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  struct gr_dmi_memory m;
  struct gr_err err = {0};
  if (gr_dmi_parse_memory("fuzz.dmi", data, size, &m, &err) != 0)
    return 0;
  /* what callers rely on: terminated strings, an array index in range */
  for (size_t i = 0; i < m.ndimms; i++) {
    const struct gr_dimm *d = &m.dimms[i];
    if (strlen(d->locator) >= sizeof(d->locator) || strlen(d->bank) >= sizeof(d->bank) ||
        d->array < -1 || (d->array >= 0 && (size_t)d->array >= m.narrays))
      abort();
    (void)gr_dmi_mem_type_name(d->mem_type);
  }
  gr_dmi_memory_free(&m);
  return 0;
}
