/* Choosing the loader for a source; see source.h. */
#include "load/source.h"

#include <string.h>

#include "base/file.h"
#include "load/loaders.h"
#include "load/rig.h"

/* hwloc XML of the largest real machines is a few MB, an NCCL topology file
 * a few KB; the cap keeps a runaway input (or /dev/zero through standard
 * input) from eating memory. The same as the hwloc loader's own. */
#define INPUT_MAX_BYTES (64u << 20)

struct gr_source gr_source_from(const char *root, const char *input, const char *rig, const char *gpu, bool pcie_only)
{
  struct gr_source s = {.kind = GR_SRC_LIVE, .pcie_only = pcie_only};
  if (input) {
    s.kind = GR_SRC_XML;
    s.path = input;
  } else if (rig) {
    s.kind = GR_SRC_RIG;
    s.path = rig;
    s.gpu_model = gpu;
    s.option = "--rig";
  } else if (root) {
    s.kind = GR_SRC_ROOT;
    s.path = root;
  }
  return s;
}

bool gr_source_reads_machine(const struct gr_source *src)
{
  return src->kind == GR_SRC_LIVE || src->kind == GR_SRC_ROOT;
}

int gr_source_fs(const struct gr_source *src, struct gr_fs *fs, struct gr_err *err)
{
  const char *root = src->kind == GR_SRC_ROOT ? src->path : NULL;
  if (gr_fs_init(fs, root) != 0)
    return gr_fail(err, GR_EXIT_FAIL, "%s: path too long", root);
  return 0;
}

static int load_rig(const struct gr_source *src, struct gr_topo *t, struct gr_err *err)
{
  if (gr_load_rig_as(src->option, src->path, t, err) != 0)
    return -1;
  if (src->gpu_model && gr_rig_replace_gpus(t, src->gpu_model, err) != 0) {
    gr_topo_free(t);
    return -1;
  }
  return 0;
}

/* --input FILE: read once, then handed to the loader of its format. */
static int load_input(const char *path, struct gr_topo *t, struct gr_err *err)
{
  struct gr_file f;
  int rc;
  if (gr_file_read(path, INPUT_MAX_BYTES, GR_FILE_STDIN, &f, err) != 0) {
    if (err && strstr(err->msg, ": a directory, not a file"))
      gr_fail(err, GR_EXIT_FAIL, "%s: a directory, not an XML file (for a gathered /sys tree use --root DIR)", path);
    return -1;
  }
  const char *name = f.from_stdin ? "standard input" : path;
  int smi = gr_smi_topo_sniff(f.data, f.len);
  if (smi == 1)
    rc = gr_load_nvsmi_topo_buffer(name, f.data, f.len, t, err);
  else if (smi == 2)
    rc = gr_load_rocmsmi_topo_buffer(name, f.data, f.len, t, err);
  else if (smi == 3)
    rc = gr_load_amdsmi_topo_buffer(name, f.data, f.len, t, err);
  else if (gr_nccl_topo_sniff(f.data, f.len))
    rc = gr_load_nccl_topo_buffer(name, f.data, f.len, t, err);
  else if (f.regular && !f.from_stdin)
    rc = gr_load_xml(path, t, err); /* by name: libxml2 can then name the line of a syntax error */
  else
    rc = gr_load_xml_buffer(name, f.data, f.len, t, err);
  gr_file_free(&f);
  return rc;
}

int gr_source_load(const struct gr_source *src, struct gr_topo *t, struct gr_err *err)
{
  struct gr_fs fs;
  int rc = -1;
  gr_topo_init(t);
  switch (src->kind) {
  case GR_SRC_XML:
    rc = load_input(src->path, t, err);
    break;
  case GR_SRC_RIG:
    rc = load_rig(src, t, err);
    break;
  case GR_SRC_GENERIC:
    rc = gr_rig_generic(src->gpu_model, src->gpus, t, err);
    break;
  case GR_SRC_LIVE:
  case GR_SRC_ROOT:
    if (gr_source_fs(src, &fs, err) != 0)
      rc = -1;
    else
      rc = src->gpu_paths ? gr_load_live_gpus(&fs, t, err) : gr_load_live(&fs, t, err);
    break;
  }
  if (rc != 0)
    return rc;
  if (t->ngpus > GR_SOURCE_GPUS_MAX) {
    size_t n = t->ngpus;
    gr_topo_free(t);
    return gr_fail(err, GR_EXIT_FAIL, "%s: %zu GPUs; gpurig reads at most %d GPUs in one machine (hwloc XML and NCCL "
                   "topology files alike)", src->path ? src->path : "this machine", n, GR_SOURCE_GPUS_MAX);
  }
  if (src->gpulink_reader && !src->pcie_only && gr_source_reads_machine(src))
    src->gpulink_reader(t);
  gr_topo_fabric_from_gpulinks(t, GR_FABRIC_HWLOC);
  if (src->pcie_only)
    gr_topo_forget_gpulinks(t);
  /* a rig's `nvlink none`: the GPUs' NVLink does not work (fabric manager
   * down, a VM without NVSwitch passthrough), so none is inferred */
  if (!t->gpulink_none)
    gr_topo_infer_fabric(t);
  return rc;
}
