/* The topo and report outputs, composed of the topology and prediction
 * sections; see machine.h. */
#include "print/machine.h"

#include "print/predict.h"
#include "print/topo.h"

void gr_print_topo_text(FILE *out, const struct gr_machine *m, unsigned flags)
{
  const struct gr_topo *t = &m->topo;
  const struct gr_analysis *a = &m->analysis;
  gr_print_summary(out, t, a);
  gr_print_tree(out, t, flags);
  gr_print_matrix(out, t, a);
  gr_print_nccl(out, t, a);
  gr_print_bandwidth(out, t, a);
  gr_print_hives(out, t, a);
  if (m->predicted)
    gr_print_prediction(out, t, &m->prediction);
  gr_print_findings(out, t, a);
}

void gr_print_report_text(FILE *out, const struct gr_machine *m)
{
  const struct gr_topo *t = &m->topo;
  const struct gr_analysis *a = &m->analysis;
  gr_print_summary(out, t, a);
  gr_print_gpu_table(out, t, a);
  gr_print_matrix(out, t, a);
  gr_print_hives(out, t, a);
  if (m->predicted)
    gr_print_prediction(out, t, &m->prediction);
  gr_print_findings(out, t, a);
}

/* Whose defaults NCCL's view follows, beside the level in "machine". */
static void nccl_json(json_t *j, const struct gr_analysis *a)
{
  json_t *mo = json_object_get(j, "machine");
  char v[32];
  if (!json_is_object(mo))
    return;
  json_object_set_new(mo, "nccl_version", json_string(gr_nccl_version_text(&a->nccl_version, v, sizeof(v))));
  json_object_set_new(mo, "nccl_version_assumed", json_boolean(a->nccl_assumed));
  json_object_set_new(mo, "nccl_p2p_rule_source", a->nccl_rule ? json_string(a->nccl_rule->source) : json_null());
}

json_t *gr_machine_to_json(const struct gr_machine *m)
{
  json_t *j = gr_topo_to_json(&m->topo, &m->analysis);
  nccl_json(j, &m->analysis);
  if (m->predicted)
    json_object_set_new(j, "prediction", gr_prediction_to_json(&m->topo, &m->prediction));
  return j;
}
