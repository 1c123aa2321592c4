/* What every printer shares; see common.h. */
#include "print/common.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

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
    fprintf(out, "  [%s %s]", gr_topo_input_name(t), t->source_path);
  else
    fprintf(out, "  [%s]", gr_topo_input_name(t));
}

void gr_print_warnings(FILE *err, const struct gr_topo *t)
{
  for (size_t i = 0; i < t->nwarnings; i++)
    fprintf(err, "gpurig: warning: %s\n", t->warnings[i]);
}
