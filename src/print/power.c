/* The power budget's text and JSON; see power.h. */
#include "print/power.h"

#include "print/common.h"

/* "%.0f W" of w into buf, or what stays unknown. */
static const char *watts(double w, const char *unknown, char *buf, size_t cap)
{
  if (w < 0)
    snprintf(buf, cap, "%s", unknown);
  else
    snprintf(buf, cap, "%.0f W", w);
  return buf;
}

/* A PSU's rails: the busiest one's load with the GPUs spread evenly, and
 * its limit when rail-amps gives one. */
static void print_rails(FILE *out, const struct gr_power_budget *b, const struct gr_power_psu *p)
{
  char s[48], pk[48];
  if (p->rails <= 0) {
    fprintf(out, "    rails: unknown (no rails or rail-amps)\n");
    return;
  }
  if (p->rail_w < 0 && p->rail_peak_w < 0) {
    fprintf(out, "    %d rail%s: which GPUs each feeds is unknown\n", p->rails, p->rails == 1 ? "" : "s");
    return;
  }
  fprintf(out, "    %d rail%s, %zu GPU%s on the busiest: %s sustained, peak %s\n", p->rails,
          p->rails == 1 ? "" : "s", p->gpus_per_rail, p->gpus_per_rail == 1 ? "" : "s",
          watts(p->rail_w, "unknown", s, sizeof(s)),
          gr_power_peak_text(p->rail_peak_w, b->peak_window_us, pk, sizeof(pk)));
  if (p->rail_limit_w >= 0)
    fprintf(out, "    rail limit %.0f W (%.0f A at 12 V, the smallest rail)\n", p->rail_limit_w, p->rail_limit_w / 12);
  else
    fprintf(out, "    rail limit unknown (no rail-amps)\n");
}

void gr_print_power(FILE *out, const struct gr_power_budget *b)
{
  char g[48], gp[48], c[64], s[48], pk[48], w[64], h[48];
  if (b->gpu_limit_w > 0)
    fprintf(out, "\nPower budget (GPUs at the %.0f W power limit, CPUs at TDP):\n", b->gpu_limit_w);
  else
    fprintf(out, "\nPower budget (full load: GPUs at board power, CPUs at TDP):\n");
  fprintf(out, "  GPUs %s sustained, peak %s; CPUs %s\n", watts(b->gpu_w, "unknown", g, sizeof(g)),
          gr_power_peak_text(b->gpu_peak_w, b->peak_window_us, gp, sizeof(gp)),
          watts(b->cpu_w, "unknown (no TDP in data/power-parts.tsv)", c, sizeof(c)));
  for (size_t i = 0; i < b->npsus; i++) {
    const struct gr_power_psu *p = &b->psus[i];
    fprintf(out, "  PSU %s %.0f W: %s sustained, %s headroom, peak %s\n", p->name, p->watts,
            watts(p->sustained_w, "unknown", s, sizeof(s)), watts(p->headroom_w, "unknown", h, sizeof(h)),
            gr_power_peak_text(p->transient_w, b->peak_window_us, pk, sizeof(pk)));
    fprintf(out, "    wall %s\n",
            watts(p->wall_w, p->sustained_w < 0 ? "unknown" : "unknown (no 80plus or efficiency, or no input)", w,
                  sizeof(w)));
    print_rails(out, b, p);
  }
  if (b->npsus > 1)
    fprintf(out, "  (which PSU feeds which GPUs is not stated: each PSU's share is unknown)\n");
  for (size_t i = 0; i < b->ncircuits; i++) {
    const struct gr_power_circuit *k = &b->circuits[i];
    fprintf(out, "  circuit %s: %s from the wall, %s allowed continuously (80%% of the breaker)\n", k->name,
            watts(k->wall_w, "unknown", w, sizeof(w)), watts(k->limit_w, "unknown", h, sizeof(h)));
  }
  if (!b->ncircuits)
    fprintf(out, "  circuit: unknown (no circuit line)\n");
}

/* A watts figure, null when unknown. */
static json_t *jw(double v)
{
  return v < 0 ? json_null() : gr_json_rounded(v, 1);
}

static json_t *psu_json(const struct gr_power_psu *p)
{
  json_t *o = json_object();
  json_object_set_new(o, "name", gr_json_text(p->name));
  json_object_set_new(o, "watts", gr_json_rounded(p->watts, 1));
  json_object_set_new(o, "sustained_w", jw(p->sustained_w));
  json_object_set_new(o, "transient_w", jw(p->transient_w));
  json_object_set_new(o, "wall_w", jw(p->wall_w));
  json_object_set_new(o, "headroom_w", jw(p->headroom_w));
  json_object_set_new(o, "rails", p->rails > 0 ? json_integer(p->rails) : json_null());
  json_object_set_new(o, "gpus_per_rail", p->gpus_per_rail ? json_integer((json_int_t)p->gpus_per_rail) : json_null());
  json_object_set_new(o, "rail_w", jw(p->rail_w));
  json_object_set_new(o, "rail_peak_w", jw(p->rail_peak_w));
  json_object_set_new(o, "rail_limit_w", jw(p->rail_limit_w));
  return o;
}

json_t *gr_power_to_json(const struct gr_power_budget *b)
{
  json_t *o = json_object(), *psus = json_array(), *circuits = json_array();
  json_object_set_new(o, "gpu_limit_w", b->gpu_limit_w > 0 ? gr_json_rounded(b->gpu_limit_w, 1) : json_null());
  json_object_set_new(o, "gpu_w", jw(b->gpu_w));
  json_object_set_new(o, "gpu_peak_w", jw(b->gpu_peak_w));
  json_object_set_new(o, "peak_window_us", jw(b->peak_window_us));
  json_object_set_new(o, "cpu_w", jw(b->cpu_w));
  json_object_set_new(o, "sustained_w", jw(b->sustained_w));
  for (size_t i = 0; i < b->npsus; i++)
    json_array_append_new(psus, psu_json(&b->psus[i]));
  for (size_t i = 0; i < b->ncircuits; i++) {
    json_t *c = json_object();
    json_object_set_new(c, "name", gr_json_text(b->circuits[i].name));
    json_object_set_new(c, "wall_w", jw(b->circuits[i].wall_w));
    json_object_set_new(c, "limit_w", jw(b->circuits[i].limit_w));
    json_array_append_new(circuits, c);
  }
  json_object_set_new(o, "psus", psus);
  json_object_set_new(o, "circuits", circuits);
  return o;
}
