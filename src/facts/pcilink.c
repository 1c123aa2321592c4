#include "facts/pcilink.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "facts/facts.h"

int gr_pcie_gens_parse(const struct gr_table *t, struct gr_pcie_gen *gens, size_t cap, size_t *ngens,
                       struct gr_err *err)
{
  int cg = gr_table_col(t, "gen"), cr = gr_table_col(t, "gts"), cn = gr_table_col(t, "enc_num");
  int cd = gr_table_col(t, "enc_den"), cc = gr_table_col(t, "nccl_code");
  if (cg < 0 || cr < 0 || cn < 0 || cd < 0 || cc < 0)
    return gr_fail(err, GR_EXIT_CANNOT_RUN, "%s: missing column (need gen, gts, enc_num, enc_den, nccl_code)", t->name);
  size_t n = 0;
  for (size_t r = 0; r < t->nrows; r++) {
    long g, num, den, code;
    char *end;
    double gts = gr_strtod(gr_table_cell(t, r, (size_t)cr), &end);
    if (!parse_long(gr_table_cell(t, r, (size_t)cg), 10, &g) || g < 1 || g > 9 || *end || gts <= 0 ||
        !parse_long(gr_table_cell(t, r, (size_t)cn), 10, &num) ||
        !parse_long(gr_table_cell(t, r, (size_t)cd), 10, &den) || den <= 0 || num <= 0 ||
        !parse_long(gr_table_cell(t, r, (size_t)cc), 10, &code) || code <= 0)
      return gr_fail(err, GR_EXIT_CANNOT_RUN, "%s:%zu: bad PCIe generation row", t->name, t->lines[r]);
    if (n == cap)
      return gr_fail(err, GR_EXIT_CANNOT_RUN, "%s:%zu: more than %zu generations", t->name, t->lines[r], cap);
    gens[n++] = (struct gr_pcie_gen){(int)g, gts, (int)num, (int)den, (int)code};
  }
  *ngens = n;
  return 0;
}

const struct gr_pcie_gen *gr_pcie_gen(int gen)
{
  size_t n;
  const struct gr_pcie_gen *gens = gr_pcie_gens(&n);
  for (size_t i = 0; i < n; i++)
    if (gens[i].gen == gen)
      return &gens[i];
  return NULL;
}

const struct gr_pcie_gen *gr_pcie_gen_by_gts(double gts)
{
  size_t n;
  const struct gr_pcie_gen *gens = gr_pcie_gens(&n);
  for (size_t i = 0; i < n; i++)
    if (fabs(gens[i].gts - gts) < 0.01)
      return &gens[i];
  return NULL;
}

enum gr_speed_parse gr_pcie_parse_speed(const char *s, int *gen)
{
  char *end;
  while (*s == ' ' || *s == '\t')
    s++;
  if (str_starts_with(s, "Unknown"))
    return GR_SPEED_UNKNOWN;
  double gts = gr_strtod(s, &end);
  if (end == s || !(gts > 0))
    return GR_SPEED_INVALID;
  while (*end == ' ')
    end++;
  if (!str_starts_with(end, "GT/s"))
    return GR_SPEED_INVALID;
  end += 4;
  while (*end == ' ')
    end++;
  if (*end && strcmp(end, "PCIe") != 0 && strcmp(end, "PCIe\n") != 0)
    return GR_SPEED_INVALID;
  const struct gr_pcie_gen *g = gr_pcie_gen_by_gts(gts);
  if (!g)
    return GR_SPEED_INVALID;
  *gen = g->gen;
  return GR_SPEED_OK;
}

bool gr_pcie_parse_width(const char *s, int *width)
{
  long w;
  if (!parse_long(s, 10, &w) || w < 0 || w > 32)
    return false;
  *width = (int)w;
  return true;
}

double gr_pcie_bw_gbps(int gen, int width)
{
  const struct gr_pcie_gen *g = gr_pcie_gen(gen);
  if (!g || width <= 0)
    return 0;
  return g->gts * width * g->enc_num / g->enc_den / 8.0;
}

double gr_pcie_nccl_gbps(int gen, int width)
{
  const struct gr_pcie_gen *g = gr_pcie_gen(gen);
  if (!g || width <= 0)
    return 0;
  return width * g->nccl_code / 80.0;
}

double gr_pcie_nccl_from_bw(double bw_gbps)
{
  if (!(bw_gbps > 0))
    return 0;
  /* Try each encoding family: the lane-rate product gts*width it implies must
   * be a whole multiple of 2.5 GT/s for the family to be the right one. */
  size_t n;
  const struct gr_pcie_gen *gens = gr_pcie_gens(&n);
  for (size_t i = 0; i < n; i++) {
    const struct gr_pcie_gen *g = &gens[i];
    double product = bw_gbps * 8.0 * g->enc_den / g->enc_num; /* GT/s x lanes */
    double lanes = product / g->gts;
    if (fabs(lanes - round(lanes)) < 0.01 && round(lanes) >= 1)
      return product * g->nccl_code / g->gts / 80.0;
  }
  return 0;
}

const char *gr_pcie_label(int gen, int width, char *buf, int cap)
{
  char g[16] = "Gen?", w[16] = "x?";
  if (gen > 0 && width > 0) { /* the one "GenN xW" formatter */
    snprintf(buf, (size_t)cap, "Gen%d x%d", gen, width);
    return buf;
  }
  if (gen > 0)
    snprintf(g, sizeof(g), "Gen%d", gen);
  if (width > 0)
    snprintf(w, sizeof(w), "x%d", width);
  snprintf(buf, (size_t)cap, "%s %s", g, w);
  return buf;
}

double gr_pcie_error_allowance(int gen, int width, double seconds)
{
  const struct gr_pcie_gen *pg = gr_pcie_gen(gen);
  if (!pg || width <= 0 || seconds < 0)
    return -1;
  return ceil(gr_health_consts()->aer_ber * pg->gts * 1e9 * width * seconds);
}
