#include "facts/catalog.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/suggest.h"
#include "facts/facts.h"

static bool one_of(const char *v, const char *const *words)
{
  for (; *words; words++)
    if (strcmp(v, *words) == 0)
      return true;
  return false;
}

/* The columns that take words: form, board, link (its links and rate agreeing) and mem_type. */
static int check_words(const struct gr_table *t, size_t r, const char *const *v, const struct gr_gpu_model *m,
                       struct gr_err *err)
{
  static const char *const forms[] = {"pcie", "sxm2", "sxm3", "sxm4", "sxm5", "sxm6", "oam", NULL};
  static const char *const boards[] = {"none", "bridge", "hcm", "mesh", "nvswitch", NULL};
  static const char *const links[] = {"none", "nvlink", "xgmi", NULL};
  if (!one_of(v[15], forms))
    return gr_fail(err, GR_EXIT_CANNOT_RUN, "%s:%zu: form must be pcie, sxm2 .. sxm6 or oam", t->name, t->lines[r]);
  if (!one_of(v[16], boards))
    return gr_fail(err, GR_EXIT_CANNOT_RUN, "%s:%zu: board must be none, bridge, hcm, mesh or nvswitch", t->name,
                   t->lines[r]);
  if (!one_of(v[9], links))
    return gr_fail(err, GR_EXIT_CANNOT_RUN, "%s:%zu: link must be none, nvlink or xgmi", t->name, t->lines[r]);
  /* A closed list, so that a typo ("hmb3") is an error at start rather than a
   * card whose memory no check recognises. */
  static const char *const mems[] = {"gddr5", "gddr5x", "gddr6", "gddr6x", "gddr7", "hbm2", "hbm2e", "hbm3", "hbm3e",
                                     NULL};
  if (!one_of(v[20], mems))
    return gr_fail(err, GR_EXIT_CANNOT_RUN, "%s:%zu: mem_type \"%s\" must be gddr5, gddr5x, gddr6, gddr6x, gddr7, "
                   "hbm2, hbm2e, hbm3 or hbm3e", t->name, t->lines[r], v[20]);
  bool none = strcmp(v[9], "none") == 0;
  if (none != (m->links == 0) || none != (m->link_gbps == 0) || m->link_gbps < 0)
    return gr_fail(err, GR_EXIT_CANNOT_RUN, "%s:%zu: link %s with %d links of %g GB/s: a link needs links and a "
                   "rate, none neither", t->name, t->lines[r], v[9], m->links, m->link_gbps);
  return 0;
}

/* The columns parse_row reads, in the order of its v[]. */
#define CATALOG_NCOLS 23
static const char *const cols[CATALOG_NCOLS] = {
    "model", "vendor", "arch", "mem_gib", "mem_bw_gbps", "fp16_tflops", "fp16_fp32acc_tflops", "tdp_w",
    "pcie_gen", "link", "links", "link_gbps", "p2p", "pci_ids", "source", "form", "board", "link_gen", "cc",
    "int8_tops", "mem_type", "boost_mhz", "sm_count"};

/* Row r into m; col holds each of cols' index in the file, found once. */
static int parse_row(const struct gr_table *t, const size_t *col, size_t r, struct gr_gpu_model *m,
                     struct gr_err *err)
{
  const char *v[CATALOG_NCOLS];
  for (size_t c = 0; c < CATALOG_NCOLS; c++)
    v[c] = gr_table_cell(t, r, col[c]);
  double *nums[] = {&m->mem_gib, &m->mem_bw_gbps, &m->fp16_tflops, &m->fp16_fp32acc_tflops, &m->tdp_w};
  for (size_t k = 0; k < 5; k++) {
    char *end;
    *nums[k] = gr_strtod(v[3 + k], &end);
    if (end == v[3 + k] || *end || *nums[k] < 0)
      return gr_fail(err, GR_EXIT_CANNOT_RUN, "%s:%zu: %s is not a number", t->name, t->lines[r], cols[3 + k]);
  }
  long gen, links;
  char *end;
  m->link_gbps = gr_strtod(v[11], &end);
  if (!parse_long(v[8], 10, &gen) || gen < 1 || gen > 6 || !parse_long(v[10], 10, &links) || links < 0 || *end)
    return gr_fail(err, GR_EXIT_CANNOT_RUN, "%s:%zu: bad pcie_gen, links or link_gbps", t->name, t->lines[r]);
  m->pcie_gen = (int)gen;
  m->links = (int)links;
  if (strcmp(v[12], "yes") == 0)
    m->p2p = GR_P2P_YES;
  else if (strcmp(v[12], "no") == 0)
    m->p2p = GR_P2P_NO;
  else if (strcmp(v[12], "driver") == 0)
    m->p2p = GR_P2P_DRIVER;
  else
    return gr_fail(err, GR_EXIT_CANNOT_RUN, "%s:%zu: p2p must be yes, no or driver", t->name, t->lines[r]);
  long lgen;
  if (!parse_long(v[17], 10, &lgen) || lgen < 0 || lgen > 9)
    return gr_fail(err, GR_EXIT_CANNOT_RUN, "%s:%zu: bad link_gen", t->name, t->lines[r]);
  m->link_gen = (int)lgen;
  if (strcmp(v[18], "-") != 0 && sscanf(v[18], "%d.%d", &m->cc_major, &m->cc_minor) != 2)
    return gr_fail(err, GR_EXIT_CANNOT_RUN, "%s:%zu: cc must be MAJOR.MINOR or -", t->name, t->lines[r]);
  if (strcmp(v[19], "-") == 0) /* int8 tensor cores run at twice the fp16 rate from Turing (7.5) on */
    m->int8_tops = strcmp(v[1], "nvidia") == 0 && m->cc_major * 10 + m->cc_minor >= 75 ? 2 * m->fp16_tflops : 0;
  else if ((m->int8_tops = gr_strtod(v[19], &end)) <= 0 || *end)
    return gr_fail(err, GR_EXIT_CANNOT_RUN, "%s:%zu: int8_tops must be a number or -", t->name, t->lines[r]);
  /* "-": the vendor publishes no figure (the H20's clock); 0 then, never a guess. */
  m->boost_mhz = strcmp(v[21], "-") == 0 ? 0 : gr_strtod(v[21], &end);
  if (strcmp(v[21], "-") != 0 && (end == v[21] || *end || !(m->boost_mhz > 0 && m->boost_mhz < 100000))) /* NaN too */
    return gr_fail(err, GR_EXIT_CANNOT_RUN, "%s:%zu: boost_mhz \"%s\" must be a number of MHz or -", t->name,
                   t->lines[r], v[21]);
  long sms = 0;
  if (strcmp(v[22], "-") != 0 && (!parse_long(v[22], 10, &sms) || sms < 1 || sms > 100000))
    return gr_fail(err, GR_EXIT_CANNOT_RUN, "%s:%zu: sm_count \"%s\" must be a whole number or -", t->name,
                   t->lines[r], v[22]);
  m->sm_count = (int)sms;
  if (check_words(t, r, v, m, err) != 0)
    return -1;
  m->mem_type = v[20];
  m->form = v[15];
  m->board = v[16];
  m->model = v[0];
  m->vendor = v[1];
  m->arch = v[2];
  m->link = v[9];
  m->pci_ids = v[13];
  m->source = v[14];
  return 0;
}

int gr_catalog_parse(const struct gr_table *table, struct gr_gpu_model **out, size_t *n, struct gr_err *err)
{
  size_t col[CATALOG_NCOLS];
  for (size_t c = 0; c < CATALOG_NCOLS; c++) {
    int i = gr_table_col(table, cols[c]);
    if (i < 0)
      return gr_fail(err, GR_EXIT_CANNOT_RUN, "%s: missing column %s", table->name, cols[c]);
    col[c] = (size_t)i;
  }
  struct gr_gpu_model *models = xcalloc(table->nrows + 1, sizeof(*models));
  for (size_t r = 0; r < table->nrows; r++) {
    if (parse_row(table, col, r, &models[r], err) != 0) {
      free(models);
      return -1;
    }
  }
  *out = models;
  *n = table->nrows;
  return 0;
}

const struct gr_gpu_model *gr_catalog_find(const char *model)
{
  size_t n;
  const struct gr_gpu_model *gpus = gr_catalog_models(&n);
  for (size_t i = 0; model && i < n; i++)
    if (strcasecmp(gpus[i].model, model) == 0)
      return &gpus[i];
  for (size_t i = 0; model && i < n; i++) /* then RTX3090, rtx-3090 */
    if (gr_name_loose_eq(gpus[i].model, model))
      return &gpus[i];
  return NULL;
}

const char *gr_catalog_closest(const char *model)
{
  size_t n;
  const struct gr_gpu_model *gpus = gr_catalog_models(&n);
  struct gr_suggest s;
  gr_suggest_init(&s, model);
  for (size_t i = 0; i < n; i++)
    gr_suggest_offer(&s, gpus[i].model);
  for (size_t i = 0; gr_suggest_best(&s) && i < n; i++) /* the catalog's string, not s's copy */
    if (strcmp(gpus[i].model, gr_suggest_best(&s)) == 0)
      return gpus[i].model;
  return NULL;
}

const struct gr_gpu_model *gr_catalog_find_pci(unsigned vendor, unsigned device)
{
  char id[16];
  snprintf(id, sizeof(id), "%04x:%04x", vendor, device);
  size_t n;
  const struct gr_gpu_model *gpus = gr_catalog_models(&n);
  for (size_t i = 0; i < n; i++)
    if (strstr(gpus[i].pci_ids, id))
      return &gpus[i];
  return NULL;
}

bool gr_gpu_mem_is_hbm(const struct gr_gpu_model *m)
{
  return m && m->mem_type && strncmp(m->mem_type, "hbm", 3) == 0;
}
