/* libFuzzer target: gpurig fleet's reader of doctor reports
 * (src/load/fleet.c), its comparison and its printers (text, JSON, the
 * HTML page). The input is one
 * node's report beside a fixed healthy one and a fixed node whose GPU1
 * trains at x8, both with CUDA, NCCL, IOMMU, ACS and zero AER and Xid
 * counts, so that every path of the comparison (the rules for versions and
 * counts included) sees the fuzzed facts; nothing may crash or leak. */
#include "fuzz_common.h"

#include <string.h>

#include "analysis/fleet.h"
#include "print/fleet.h"
#include "print/text.h"

static const char fixed[] =
    "{\"hostname\":\"h\",\"results\":[{\"id\":\"pcie.link-width\",\"severity\":\"warn\",\"subject\":\"GPU1 0000:02:00.0\","
    "\"pci_bus_id\":\"0000:02:00.0\",\"message\":\"x8\",\"fix\":null}],\"inventory\":{\"driver_version\":\"535.1\","
    "\"sockets\":1,\"numa_nodes\":1,\"cuda\":{\"present\":true,\"version\":\"12.4\"},"
    "\"nccl\":{\"present\":true,\"version\":\"2.21.5\"},\"iommu\":\"passthrough\",\"acs_redirecting\":0,"
    "\"gpus\":[{\"index\":0,\"pci_bus_id\":\"0000:01:00.0\",\"model\":\"A\",\"numa\":0,"
    "\"link\":{\"gen\":4,\"width\":16},\"aer\":{\"correctable\":0,\"nonfatal\":0,\"fatal\":0},\"xids\":0},"
    "{\"index\":1,\"pci_bus_id\":\"0000:02:00.0\",\"model\":\"A\",\"numa\":0,"
    "\"link\":{\"gen\":4,\"width\":8},\"aer\":{\"correctable\":0,\"nonfatal\":0,\"fatal\":0},\"xids\":0}],"
    "\"nics\":[]}}";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  struct gr_fleet_nodes nodes = {.v = calloc(3, sizeof(struct gr_fleet_node)), .n = 3};
  const char *names[3] = {"fuzz", "fixed-a", "fixed-b"};
  for (size_t i = 0; i < 3; i++) {
    nodes.v[i].file = strdup(names[i]);
    nodes.v[i].name = strdup(names[i]);
    if (i == 0)
      gr_fleet_parse(names[i], (const char *)data, size, &nodes.v[i]);
    else
      gr_fleet_parse(names[i], fixed, sizeof(fixed) - 1, &nodes.v[i]);
  }
  struct gr_fleet f;
  gr_fleet_compare(&nodes, &f);
  char *buf = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&buf, &len);
  if (!out)
    abort();
  struct gr_text_style st = {.width = 80};
  gr_print_fleet(out, &f, &st);
  gr_print_fleet_html(out, &f);
  json_t *j = gr_fleet_to_json(&f);
  char *s = json_dumps(j, 0);
  fclose(out);
  free(buf);
  free(s);
  json_decref(j);
  gr_fleet_free(&f);
  gr_fleet_nodes_free(&nodes);
  return 0;
}
