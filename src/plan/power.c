/* The SM clock under a power limit; see power.h. */
#include "plan/power.h"

#include <math.h>
#include <string.h>

const struct gr_power_clock_row *gr_power_clock_row(const struct gr_gpu_model *g)
{
  const struct gr_power_clock_rows *t = gr_power_clock_rows();
  const struct gr_power_clock_row *any = NULL;
  for (size_t i = 0; t && i < t->n; i++) {
    if (g && g->arch && strcmp(t->v[i].arch, g->arch) == 0)
      return &t->v[i];
    if (strcmp(t->v[i].arch, "-") == 0)
      any = &t->v[i];
  }
  return any;
}

double gr_power_limit_floor_w(const struct gr_gpu_model *g)
{
  const struct gr_power_clock_row *row = gr_power_clock_row(g);
  return g && row && g->tdp_w > 0 ? g->tdp_w * row->static_share : 0;
}

/* Inverts P(x): above the voltage floor the clock's part of the power goes
 * as x^3, below it as floor^2 x (power.h, data/power-clock.tsv). */
double gr_power_clock_share(const struct gr_gpu_model *g, double limit_w)
{
  const struct gr_power_clock_row *row = gr_power_clock_row(g);
  if (!g || !row || limit_w <= 0 || g->tdp_w <= 0 || limit_w >= g->tdp_w)
    return 1.0;
  double s = row->static_share, floor = row->floor_clock_share;
  double d = (limit_w / g->tdp_w - s) / (1.0 - s); /* the clock's part, as a share of its part at boost */
  if (d <= 0)
    return 0;
  if (d >= floor * floor * floor)
    return cbrt(d);
  return d / (floor * floor);
}
