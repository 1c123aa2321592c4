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

#include <jansson.h>

#include "analysis/analysis.h"
#include "analysis/predict.h"
#include "facts/facts.h"
#include "print/topo.h"

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
  if (gr_facts_load_all(&err) != 0) /* every table now: no input pays for a first load */
    abort();
  return 0;
}

/* What every command does with a loaded topology: the analysis, the JSON
 * printer and (predict) the predictions; then frees t. The predictions cost
 * grows with the GPU count (ring searches over every group), not with the
 * input: past 8 GPUs the fuzzer would report slow units, not bugs, so they
 * are left out there. Large machines are covered by
 * tests/unit/test_analysis.c (8 to 256 GPUs under ASan). */
static inline void fuzz_judge(struct gr_topo *t, bool predict)
{
  struct gr_analysis a;
  struct gr_prediction p;
  gr_analyze(t, &a);
  json_t *j = gr_topo_to_json(t, &a);
  free(json_dumps(j, 0));
  json_decref(j);
  if (predict && t->ngpus <= 8) {
    gr_predict(t, &a, &p);
    gr_prediction_free(&p);
  }
  gr_analysis_free(&a);
  gr_topo_free(t);
}

#endif
