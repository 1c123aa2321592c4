/* libFuzzer target: the data-file (TSV) parser, the GPU catalog's row
 * parser on what it accepts (the columns of data/gpus.tsv are the richest:
 * words, numbers, "-" and MAJOR.MINOR; corpus/table/gpus.tsv seeds them),
 * and the input as each data file gpurig loads (its typed rows and checks,
 * facts/tables.h). */
#include <stdint.h>
#include <stdlib.h>

#include "facts/catalog.h"
#include "facts/data.h"
#include "facts/facts.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  struct gr_table t;
  struct gr_err err = {0};
  if (gr_table_parse("fuzz.tsv", (const char *)data, size, &t, &err) == 0) {
    for (size_t r = 0; r < t.nrows; r++)
      for (size_t c = 0; c < t.ncols; c++)
        (void)gr_table_cell(&t, r, c);
    struct gr_gpu_model *models;
    size_t n;
    if (gr_catalog_parse(&t, &models, &n, &err) == 0) {
      for (size_t i = 0; i < n; i++)
        (void)gr_gpu_mem_is_hbm(&models[i]);
      free(models);
    }
    static const char *const files[] = {"pcie-links.tsv", "calibration.tsv", "engine-speed.tsv", "pci-devices.tsv",
                                        "nccl-p2p.tsv", "cpu-interconnect.tsv", "cpu-memory.tsv", "driver-issues.tsv",
                                        "xid.tsv", "models.tsv", "quant.tsv", "engines.tsv", "diffusion.tsv", "nics.tsv",
                                        "power-clock.tsv", "power-gpus.tsv", "power-psu.tsv", "power-parts.tsv"};
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
      (void)gr_facts_check_table(files[i], &t, &err);
    gr_table_free(&t);
  }
  return 0;
}
