#include <stdio.h>

#include "base/fs.h"
#include "cli/cli.h"
#include "cli/options.h"
#include "load/loaders.h"

/* snapshot takes the source options only to refuse --input and --rig in
 * words that say why (below); its one argument is the file to write. */
struct snapshot_opts {
  struct gr_source_opts src;
};

static const struct gr_option_group snapshot_groups[] = {
    GR_OPTION_GROUP(gr_rows_source, struct snapshot_opts, src, gr_check_source),
    GR_OPTION_GROUP(gr_rows_rig, struct snapshot_opts, src, NULL),
};
static const struct gr_command_options snapshot_spec = {
    snapshot_groups, sizeof(snapshot_groups) / sizeof(snapshot_groups[0]), GR_POSITIONAL_ONE};

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
  struct snapshot_opts o;
  struct gr_parsed p;
  struct gr_fs fs;
  struct gr_err err = {0};
  if (gr_parse_options(argc, argv, &snapshot_spec, &o, sizeof(o), &p) != 0)
    return GR_EXIT_FAIL;
  if (p.help) {
    snapshot_usage();
    return GR_EXIT_OK;
  }
  /* accepted by the parser only to be refused here, in words that say why */
  if (o.src.input || o.src.rig) {
    gr_diag("gpurig: snapshot: %s does not apply: snapshot records this machine or a --root tree; %s\n",
            o.src.input ? "--input" : "--rig",
            o.src.input ? "an XML file is already a snapshot (gpurig topo --input reads it)"
            : "a rig is already a description (gpurig topo --rig shows it)");
    return GR_EXIT_FAIL;
  }
  if (!p.positional) {
    gr_diag("gpurig: snapshot: missing output file (usage: gpurig snapshot FILE.xml)\n");
    return GR_EXIT_FAIL;
  }
  struct gr_source src = cli_source_of(&o.src, false);
  if (gr_source_fs(&src, &fs, &err) != 0)
    return gr_report_error(&err);
  if (gr_snapshot_write(&fs, p.positional, src.gpulink_reader, &err) != 0)
    return gr_report_error(&err);
  gr_diag("gpurig: wrote %s\n", p.positional);
  return GR_EXIT_OK;
}
