/* Shared by every libFuzzer target (each is its own program): loads gpurig's
 * data files once. GPURIG_DATA must point at data/ (setup.sh sets it). */
#ifndef GPURIG_FUZZ_COMMON_H
#define GPURIG_FUZZ_COMMON_H

#include <stdint.h>
#include <stdlib.h>

#include "catalog.h"
#include "pcilink.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
  struct gr_err err = {0};
  (void)argc;
  (void)argv;
  if (gr_pcie_init(&err) != 0 || gr_catalog_init(&err) != 0)
    abort();
  return 0;
}

#endif
