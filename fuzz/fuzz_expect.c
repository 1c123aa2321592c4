/* libFuzzer target: doctor's expectation-file parser (src/doctor/expect.c). */
#include "fuzz_common.h"

#include "doctor/expect.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  struct gr_expect e;
  struct gr_err err = {0};
  if (gr_expect_parse("fuzz.expect", (const char *)data, size, &e, &err) == 0)
    gr_expect_free(&e);
  return 0;
}
