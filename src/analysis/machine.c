/* The machine pipeline; see machine.h. */
#include "analysis/machine.h"
#include "analysis/power.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "facts/data.h"

int gr_machine_open(const struct gr_source *src, unsigned flags, struct gr_machine *m, struct gr_err *err)
{
  memset(m, 0, sizeof(*m));
  m->src = *src;
  m->src.path = m->src_path = xstrdup(src->path);
  m->src.gpu_model = m->src_gpu_model = xstrdup(src->gpu_model);
  m->has_fs = gr_source_reads_machine(src);
  if ((m->has_fs && gr_source_fs(src, &m->fs, err) != 0) || gr_source_load(src, &m->topo, err) != 0) {
    gr_machine_close(m);
    return -1;
  }
  struct gr_analysis_opts ao = {.nccl = src->nccl};
  gr_analyze_with(&m->topo, &ao, &m->analysis);
  if (m->topo.rig) { /* a rig's PSUs and circuits: its power budget joins the wiring's findings */
    gr_power_budget(&m->topo, &m->power);
    gr_findings_take(&m->analysis.findings, &m->power.findings);
    m->has_power = m->topo.rig->npsus > 0;
  }
  if (flags & (GR_MACHINE_PREDICT | GR_MACHINE_GROUPS)) { /* the groups are part of the predictions */
    gr_predict(&m->topo, &m->analysis, &m->prediction);
    m->predicted = true;
    if (m->topo.cluster) {
      gr_cluster_predict(&m->topo, &m->analysis, &m->prediction, m->topo.cluster, 0, &m->cluster);
      m->clustered = true;
    }
  }
  if (flags & GR_MACHINE_GROUPS)
    gr_predict_groups(&m->prediction, NULL, 0);
  return 0;
}

int gr_machine_open_example(struct gr_machine *m, struct gr_err *err)
{
  char path[PATH_MAX];
  memset(m, 0, sizeof(*m));
  if (!gr_data_path(GR_EXAMPLE_XML, path, sizeof(path)))
    return gr_fail(err, GR_EXIT_CANNOT_RUN, "data path too long");
  struct gr_source src = {.kind = GR_SRC_XML, .path = path};
  if (gr_machine_open(&src, GR_MACHINE_PREDICT, m, err) != 0) {
    err->code = GR_EXIT_CANNOT_RUN; /* gpurig's own file: not the user's input */
    return -1;
  }
  return 0;
}

/* Every part is safe to free zeroed, so one path serves a machine that
 * opened, one whose open failed half-way, and a zeroed one. */
void gr_machine_close(struct gr_machine *m)
{
  if (!m)
    return;
  gr_prediction_free(&m->prediction);
  gr_power_free(&m->power);
  gr_analysis_free(&m->analysis);
  gr_topo_free(&m->topo);
  free(m->src_path);
  free(m->src_gpu_model);
  memset(m, 0, sizeof(*m));
}
