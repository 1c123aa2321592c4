/* libFuzzer target: the data-file (TSV) parser. */
#include <stdint.h>
#include <stdlib.h>

#include "facts/data.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  struct gr_table t;
  struct gr_err err = {0};
  if (gr_table_parse("fuzz.tsv", (const char *)data, size, &t, &err) == 0) {
    for (size_t r = 0; r < t.nrows; r++)
      for (size_t c = 0; c < t.ncols; c++)
        (void)gr_table_cell(&t, r, c);
    gr_table_free(&t);
  }
  return 0;
}
