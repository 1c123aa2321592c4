/* libFuzzer target: NCCL's INFO log, read for the transport of each
 * connection (bench's "NCCL connected" lines). The parser reads a FILE, so
 * the input goes through fmemopen, once into a roomy buffer and once into a
 * small one that must be refused, never overrun. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "backends/ccl/nccl_log.h"

static int links(const uint8_t *data, size_t size, char *out, size_t cap)
{
  FILE *f = fmemopen((void *)data, size, "r");
  if (!f)
    return 0;
  memset(out, 'x', cap);
  int n = gr_nccl_log_links(f, out, cap);
  fclose(f);
  /* out is always a string inside its buffer; a count matches its lines */
  size_t len = strnlen(out, cap);
  if (len >= cap)
    abort();
  if (n > 0) {
    int lines = 0;
    for (size_t i = 0; i < len; i++)
      lines += out[i] == '\n';
    if (lines != n)
      abort();
  }
  return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  char big[16384], small[24];
  if (size == 0)
    return 0;
  int n = links(data, size, big, sizeof(big));
  int m = links(data, size, small, sizeof(small));
  if (n < -1 || m < -1 || (n == 0 && m != 0))
    abort();
  return 0;
}
