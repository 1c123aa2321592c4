/* What every printer shares; see common.h. */
#include "print/common.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "model/finding.h"

json_t *gr_json_text(const char *s)
{
  if (!s)
    return json_null();
  json_t *j = json_string(s);
  if (j)
    return j;
  /* not UTF-8 (bytes quoted from a broken file): keep the text readable */
  char *copy = xstrdup(s);
  for (char *p = copy; *p; p++)
    if ((unsigned char)*p >= 0x80 || (unsigned char)*p < 0x20)
      *p = '?';
  j = json_string(copy);
  free(copy);
  return j;
}

json_t *gr_json_rounded(double v, int decimals)
{
  double scale = pow(10, decimals);
  return json_real(round(v * scale) / scale);
}

json_t *gr_json_positive(double v, int decimals)
{
  return v > 0 ? gr_json_rounded(v, decimals) : json_null();
}

void gr_json_print(FILE *out, json_t *j)
{
  json_dumpf(j, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
  fputc('\n', out);
}

void gr_print_machine_line(FILE *out, const struct gr_topo *t)
{
  fprintf(out, "Machine: %s", t->product ? t->product : "(unnamed)");
  if (t->hostname)
    fprintf(out, " (%s)", t->hostname);
  if (t->source_path)
    fprintf(out, " [%s %s]", gr_topo_input_name(t), t->source_path);
  else
    fprintf(out, " [%s]", gr_topo_input_name(t));
}

void gr_print_warnings(FILE *err, const struct gr_topo *t)
{
  for (size_t i = 0; i < t->nwarnings; i++)
    fprintf(err, "gpurig: warning: %s\n", t->warnings[i]);
}

json_t *gr_finding_to_json(const struct gr_finding *r)
{
  json_t *o = json_object(), *ev = json_array();
  json_object_set_new(o, "id", json_string(r->id));
  json_object_set_new(o, "title", json_string(r->title));
  json_object_set_new(o, "severity", json_string(gr_sev_name(r->sev)));
  json_object_set_new(o, "subject", gr_json_text(r->subject));
  json_object_set_new(o, "pci_bus_id", gr_json_text(r->pci_bus_id));
  json_object_set_new(o, "message", gr_json_text(r->text));
  for (size_t e = 0; e < r->nev; e++) {
    json_t *x = json_object();
    json_object_set_new(x, "file", gr_json_text(r->ev[e].file));
    json_object_set_new(x, "value", gr_json_text(r->ev[e].value));
    json_array_append_new(ev, x);
  }
  json_object_set_new(o, "evidence", ev);
  json_object_set_new(o, "fix", gr_json_text(r->fix));
  json_object_set_new(o, "cost", gr_json_text(r->cost));
  json_object_set_new(o, "reference", gr_json_text(r->reference));
  json_object_set_new(o, "needs_root", json_boolean(r->needs_root));
  return o;
}
