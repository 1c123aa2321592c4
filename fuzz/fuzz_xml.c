/* libFuzzer target: hwloc XML in, the whole topology pipeline (loader,
 * analysis, JSON printer) must neither crash nor leak, with either of
 * hwloc's XML importers. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "analysis/analysis.h"
#include "load/hwloc_internal.h"
#include "load/loaders.h"
#include "print/topo.h"
#include "fuzz_common.h"

/* libhwloc itself crashes on some malformed XML (gpurig turns that into an
 * error exit, see gr_hwloc_load in load/hwloc.c). Those inputs test hwloc,
 * not gpurig: each input is parsed by hwloc alone in a child first, exactly
 * as gpurig hands it over (gr_hwloc_open_xml), and skipped if hwloc dies
 * there. Everything of gpurig's own (the conversion to the model, the
 * analysis, the printer) runs only in the fuzzer's process, where a crash
 * is a finding. */
static int hwloc_survives(const char *buf, size_t size)
{
  pid_t pid = fork();
  if (pid == 0) {
    hwloc_topology_t topo;
    struct gr_err err = {0};
    int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, STDERR_FILENO);
    if (gr_hwloc_open_xml("fuzz.xml", NULL, buf, size, &topo, &err) == 0)
      hwloc_topology_destroy(topo);
    _exit(0); /* the parent checks leaks; the child only checks hwloc's survival */
  }
  /* libFuzzer's timeout alarm (SIGALRM) interrupts waitpid: wait again, or
   * the parent would parse an input that crashes hwloc. Without a child
   * there is no telling: the input is skipped. */
  int status = 0;
  pid_t r;
  do
    r = waitpid(pid, &status, 0);
  while (pid > 0 && r < 0 && errno == EINTR);
  if (pid < 0 || r != pid)
    return 0;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* hwloc's libxml2 plugin, where installed, lies in <libdir>/hwloc beside
 * libhwloc itself. */
static bool libxml_plugin_installed(void)
{
  Dl_info info;
  char lib[4096], plugin[4200];
  if (!dladdr((void *)hwloc_get_api_version, &info) || !info.dli_fname)
    return false;
  snprintf(lib, sizeof(lib), "%s", info.dli_fname);
  snprintf(plugin, sizeof(plugin), "%s/hwloc/hwloc_xml_libxml.so", dirname(lib));
  return access(plugin, R_OK) == 0;
}

/* gpurig reads XML with hwloc's own importer and retries with libxml2's
 * only when that fails. To fuzz both on every kind of input, inputs of odd
 * length go to libxml2's first, through a user's HWLOC_PLUGINS_BLACKLIST
 * without it (gpurig obeys a user's list); without the plugin, hwloc's own
 * importer reads everything. Set before the fork: the child parses alike. */
static void choose_importer(size_t size)
{
  static int plugin = -1;
  if (plugin < 0)
    plugin = libxml_plugin_installed();
  if (plugin && size % 2)
    setenv("HWLOC_PLUGINS_BLACKLIST", "hwloc_pci,hwloc_gl,hwloc_opencl", 1);
  else
    unsetenv("HWLOC_PLUGINS_BLACKLIST");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  struct gr_topo t;
  struct gr_err err = {0};
  char *buf = malloc(size + 1); /* hwloc expects a terminated buffer */
  memcpy(buf, data, size);
  buf[size] = '\0';
  choose_importer(size);
  if (!hwloc_survives(buf, size)) {
    free(buf);
    return 0;
  }
  if (gr_load_xml_buffer("fuzz.xml", buf, size, &t, &err) == 0)
    fuzz_judge(&t, false);
  free(buf);
  return 0;
}
