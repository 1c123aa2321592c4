/* Shared by every libFuzzer target (each is its own program): loads gpurig's
 * data files once. GPURIG_DATA must point at data/ (setup.sh sets it). */
#ifndef GPURIG_FUZZ_COMMON_H
#define GPURIG_FUZZ_COMMON_H

#include <dlfcn.h>
#include <libgen.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hwloc.h>

#include "facts/facts.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* libhwloc dlopens its XML plugin (hwloc_xml_libxml.so, with libxml2) and
 * unloads it when the last topology goes; leaks inside it then show as
 * "<unknown module>" and no suppression can name them. Keeping the plugin
 * mapped lets LeakSanitizer attribute them (fuzz/lsan.supp). */
static void pin_hwloc_xml_plugin(void)
{
  Dl_info info;
  char dir[4096], path[4200];
  if (!dladdr((void *)hwloc_get_api_version, &info) || !info.dli_fname)
    return;
  snprintf(dir, sizeof(dir), "%s", info.dli_fname);
  snprintf(path, sizeof(path), "%s/hwloc/hwloc_xml_libxml.so", dirname(dir));
  (void)dlopen(path, RTLD_NOW | RTLD_GLOBAL | RTLD_NODELETE); /* absent plugin: nothing to pin */
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
  struct gr_err err = {0};
  (void)argc;
  (void)argv;
  pin_hwloc_xml_plugin();
  if (gr_facts_load(&err) != 0)
    abort();
  return 0;
}

#endif
