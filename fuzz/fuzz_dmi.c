/* libFuzzer target: the SMBIOS table walker, the memory-device decoder and
 * the system-slot decoder, all on the same input. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "doctor/dmi.h"
#include "fuzz_common.h"

static void check_slots(const uint8_t *data, size_t size)
{
  struct gr_dmi_slots s;
  struct gr_err err = {0};
  if (gr_dmi_parse_slots("fuzz.dmi", data, size, &s, &err) != 0) {
    if (s.v || s.n)
      abort();
    return;
  }
  for (size_t i = 0; i < s.n; i++) {
    const struct gr_dmi_slot *sl = &s.v[i];
    if (strlen(sl->designation) >= sizeof(sl->designation) || sl->segment < -1 || sl->segment > 0xFFFE ||
        sl->bus < -1 || sl->bus > 0xFE || sl->dev < -1 || sl->dev > 31 || sl->func < -1 || sl->func > 7 ||
        sl->type > 0xFF || sl->data_width > 0xFF || sl->current_usage > 0xFF)
      abort();
    /* every slot with a full address is found (the first one with it wins) */
    if (sl->segment >= 0 && sl->bus >= 0 && sl->dev >= 0) {
      const char *d = gr_dmi_slot_of(&s, sl->segment, sl->bus, sl->dev);
      if (!d || d < s.v[0].designation || d > sl->designation)
        abort();
    }
  }
  if (gr_dmi_slot_of(&s, -1, 0, 0) || gr_dmi_slot_of(NULL, 0, 0, 0))
    abort();
  (void)gr_dmi_slot_of(&s, 0, 0, 0);
  gr_dmi_slots_free(&s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  struct gr_dmi_memory m;
  struct gr_err err = {0};
  check_slots(data, size);
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
