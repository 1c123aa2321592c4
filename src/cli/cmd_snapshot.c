#include <stdio.h>

#include "base/fs.h"
#include "cli/cli.h"
#include "load/loaders.h"

static void snapshot_usage(void)
{
  printf("usage: gpurig snapshot [--root DIR] FILE.xml\n"
         "\n"
         "Writes this machine (or a gathered tree) as hwloc XML, adding gpurig's per-device facts\n"
         "(PCIe link generation and width, current and maximum; NUMA node; driver; IOMMU group;\n"
         "AER error counters; the NVLink the driver reports where hwloc records none) as info\n"
         "attributes. The file loads in `gpurig topo --input FILE.xml`\n"
         "and in `lstopo --input FILE.xml`: share it to show your rig or reproduce a bug.\n"
         "The file is written whole or not at all: to a new temporary file beside it, renamed over it;\n"
         "a target that exists must be a regular file (not a device, FIFO or symlink). FILE.xml\n"
         "may be - (or /dev/stdout) for standard output. --input and --rig do not apply: a\n"
         "snapshot records a machine, and those are already descriptions of one.\n"
         "\n"
         "Exit status: 0 written, 2 bad input or the file could not be written (or a --root tree\n"
         "is not a gathered Linux tree), 3 this machine could not be read or exported.\n");
}

int cmd_snapshot(int argc, char **argv)
{
  struct gr_opts o;
  struct gr_fs fs;
  struct gr_err err = {0};
  if (gr_parse_opts(argc, argv, GR_OPT_SOURCE | GR_OPT_RIG | GR_OPT_POSITIONAL, &o) != 0)
    return GR_EXIT_FAIL;
  if (o.help) {
    snapshot_usage();
    return GR_EXIT_OK;
  }
  /* accepted by the parser only to be refused here, in words that say why */
  if (o.input || o.rig) {
    fprintf(stderr, "gpurig: snapshot: %s does not apply: snapshot records this machine or a --root tree; %s\n",
            o.input ? "--input" : "--rig",
            o.input ? "an XML file is already a snapshot (gpurig topo --input reads it)"
                    : "a rig is already a description (gpurig topo --rig shows it)");
    return GR_EXIT_FAIL;
  }
  if (!o.positional) {
    fprintf(stderr, "gpurig: snapshot: missing output file (usage: gpurig snapshot FILE.xml)\n");
    return GR_EXIT_FAIL;
  }
  struct gr_source src = cli_source(&o);
  if (gr_source_fs(&src, &fs, &err) != 0)
    return gr_report_error(&err);
  if (gr_snapshot_write(&fs, o.positional, src.nvlink_reader, &err) != 0)
    return gr_report_error(&err);
  fprintf(stderr, "gpurig: wrote %s\n", o.positional);
  return GR_EXIT_OK;
}
