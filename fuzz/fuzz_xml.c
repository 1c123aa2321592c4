/* libFuzzer target: hwloc XML in, the whole topology pipeline (loader,
 * analysis, JSON printer) must neither crash nor leak. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "analysis/analysis.h"
#include "load/loaders.h"
#include "print/print.h"
#include "fuzz_common.h"

/* libhwloc itself crashes on some malformed XML (gpurig turns that into an
 * error exit, see load_hwloc.c). Those inputs test hwloc, not gpurig: parse
 * each input in a child first and fuzz gpurig's code on the rest. */
static int hwloc_survives(const char *buf, size_t size)
{
  pid_t pid = fork();
  if (pid == 0) {
    struct gr_topo t;
    struct gr_err err = {0};
    int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, STDERR_FILENO);
    (void)gr_load_xml_buffer("fuzz.xml", buf, size, &t, &err);
    _exit(0); /* the parent checks leaks; the child only checks survival */
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid)
    return 1;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  struct gr_topo t;
  struct gr_analysis a;
  struct gr_err err = {0};
  char *buf = malloc(size + 1); /* hwloc expects a terminated buffer */
  memcpy(buf, data, size);
  buf[size] = '\0';
  if (!hwloc_survives(buf, size)) {
    free(buf);
    return 0;
  }
  if (gr_load_xml_buffer("fuzz.xml", buf, size, &t, &err) == 0) {
    if (gr_analyze(&t, &a, &err) == 0) {
      json_t *j = gr_topo_to_json(&t, &a);
      char *s = json_dumps(j, 0);
      free(s);
      json_decref(j);
      gr_analysis_free(&a);
    }
    gr_topo_free(&t);
  }
  free(buf);
  return 0;
}
