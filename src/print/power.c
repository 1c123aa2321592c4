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

/* "gpu0-gpu2,gpu5" of the GPUs PSU k feeds into buf (ranges of
 * consecutive numbers, as a rig's feeds writes them). */
static const char *fed_gpus(const struct gr_power_budget *b, size_t k, char *buf, size_t cap)
{
  size_t len = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < b->ngpus && len < cap; i++) {
    if (b->gpus[i].psu != (int)k)
      continue;
    size_t j = i;
    while (j + 1 < b->ngpus && b->gpus[j + 1].psu == (int)k)
      j++;
    int w = j > i ? snprintf(buf + len, cap - len, "%sgpu%zu-gpu%zu", len ? "," : "", i, j)
                  : snprintf(buf + len, cap - len, "%sgpu%zu", len ? "," : "", i);
    len += w > 0 ? (size_t)w : 0;
    i = j;
  }
  return buf;
}

/* What a PSU feeds, when the rig's feeds say. */
static void print_feeds(FILE *out, const struct gr_power_budget *b, size_t k)
{
  const struct gr_power_psu *p = &b->psus[k];
  char g[256];
  if (!b->feeds)
    return;
  fed_gpus(b, k, g, sizeof(g));
  fprintf(out, "    feeds %s%s%s\n", g[0] ? g : "no GPU", p->cpus ? ", the CPUs" : "",
          p->board ? ", the board (its own draw is not in the data)" : "");
}

/* A PSU's headroom: what is left, or how far it is short. */
static const char *headroom(const struct gr_power_psu *p, char *buf, size_t cap)
{
  if (p->sustained_w < 0)
    snprintf(buf, cap, "unknown headroom");
  else if (p->headroom_w < 0)
    snprintf(buf, cap, "%.0f W short", -p->headroom_w);
  else
    snprintf(buf, cap, "%.0f W headroom", p->headroom_w);
  return buf;
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
    fprintf(out, "  PSU %s %.0f W: %s sustained, %s, peak %s\n", p->name, p->watts,
            watts(p->sustained_w, "unknown", s, sizeof(s)), headroom(p, h, sizeof(h)),
            gr_power_peak_text(p->transient_w, b->peak_window_us, pk, sizeof(pk)));
    print_feeds(out, b, i);
    fprintf(out, "    wall %s\n",
            watts(p->wall_w, p->sustained_w < 0 ? "unknown" : "unknown (no 80plus or efficiency, or no input)", w,
                  sizeof(w)));
    print_rails(out, b, p);
  }
  if (b->npsus > 1 && !b->feeds)
    fprintf(out, "  (which PSU feeds which GPUs is not stated: each PSU's share is unknown; psu ... feeds says it)\n");
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

/* What PSU k feeds ({"gpus": [0, 1], "cpus": true, "board": false}), null
 * when the rig does not say. */
static json_t *feeds_json(const struct gr_power_budget *b, size_t k)
{
  if (!b->feeds)
    return json_null();
  json_t *o = json_object(), *g = json_array();
  for (size_t i = 0; i < b->ngpus; i++)
    if (b->gpus[i].psu == (int)k)
      json_array_append_new(g, json_integer((json_int_t)i));
  json_object_set_new(o, "gpus", g);
  json_object_set_new(o, "cpus", json_boolean(b->psus[k].cpus));
  json_object_set_new(o, "board", json_boolean(b->psus[k].board));
  return o;
}

static json_t *psu_json(const struct gr_power_budget *b, size_t k)
{
  const struct gr_power_psu *p = &b->psus[k];
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
  json_object_set_new(o, "feeds", feeds_json(b, k));
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
    json_array_append_new(psus, psu_json(b, i));
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
