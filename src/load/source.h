/* Where a machine comes from: this machine, a gathered tree, an input file
 * (hwloc XML or an NCCL topology file), a rig file, or N catalog GPUs on a
 * generic board. One struct names the source; one call loads it with the
 * right loader. A new loader is one more kind (or, for another format of
 * --input, one more case of the sniffing in source.c) and one more case in
 * gr_source_load.
 *
 * The strings in a struct gr_source are the caller's: they must outlive
 * every use of the source. */
#ifndef GPURIG_SOURCE_H
#define GPURIG_SOURCE_H

#include <stdbool.h>

#include "base/fs.h"
#include "base/util.h"
#include "facts/facts.h"
#include "load/loaders.h"
#include "model/topo.h"

enum gr_source_kind {
  GR_SRC_LIVE,    /* this machine (/sys, /proc, /dev) */
  GR_SRC_ROOT,    /* a gathered /sys + /proc tree: path is its directory (--root) */
  GR_SRC_XML,     /* an --input file: path; hwloc XML, an NCCL topology file, or a saved
                     nvidia-smi topo -m or rocm-smi --showtopo, told apart by content when it is
                     loaded (text: the matrices; <system>: NCCL; else hwloc) */
  GR_SRC_RIG,     /* a rig file: path, or a name from data/rigs/ (--rig) */
  GR_SRC_GENERIC, /* `gpus` of catalog GPU gpu_model on a generic board, one x16 root port each */
};

struct gr_source {
  enum gr_source_kind kind;
  const char *path;      /* ROOT, XML, RIG; NULL for LIVE and GENERIC */
  const char *gpu_model; /* RIG: put this catalog GPU in every GPU slot (NULL: as described); GENERIC: the GPU */
  int gpus;              /* GENERIC: how many */
  const char *option;    /* RIG: the option that named path ("--rig"), said in its not-found error; NULL none */
  bool pcie_only;        /* forget NVLink: show the PCIe paths under it */
  bool gpu_paths;        /* LIVE, ROOT: load only the GPUs and the paths to them (gr_load_live_gpus: what
                            plan and report show), not every PCI device */
  gr_gpulink_reader gpulink_reader; /* LIVE, ROOT: the driver's NVLink; NULL none */
  struct gr_nccl_version nccl; /* the NCCL whose defaults the analysis follows (--nccl-version); the
                                  loaders ignore it; major 0: gpurig's default (analysis/analysis.h) */
};

/* The source of the options a command was given: --root DIR, --input FILE,
 * --rig RIG (with --gpu MODEL) or, with none of them, this machine. */
struct gr_source gr_source_from(const char *root, const char *input, const char *rig, const char *gpu, bool pcie_only);

/* Reads a machine's files (LIVE, ROOT), as opposed to a description of its
 * wiring (XML, RIG, GENERIC). */
bool gr_source_reads_machine(const struct gr_source *src);

/* The root prefix of a LIVE or ROOT source ("" for LIVE). -1 with err
 * (GR_EXIT_FAIL) when the path is too long; other kinds get the live root. */
int gr_source_fs(const struct gr_source *src, struct gr_fs *fs, struct gr_err *err);

/* The most GPUs one input may hold, whatever its format. The analysis and
 * the matrices are O(n^2) in GPUs (2,048 GPUs of an NCCL topology file took
 * 101 s and 907 MB before this cap); 512 is twice NCCL's own limit per node. */
#define GR_SOURCE_GPUS_MAX 512

/* Loads the source's topology with its loader, applying gpu_model and
 * pcie_only; then the driver's NVLink (gpulink_reader), the NVSwitch fabric
 * from the reported links, or one inferred where the input records no
 * NVLink (model/topo.h). 0, or -1 with err (GR_EXIT_FAIL for bad input, more
 * than GR_SOURCE_GPUS_MAX GPUs among it,
 * GR_EXIT_CANNOT_RUN when the machine cannot be read) and *t empty. The
 * caller frees *t with gr_topo_free either way. */
int gr_source_load(const struct gr_source *src, struct gr_topo *t, struct gr_err *err);

#endif
