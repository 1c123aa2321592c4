/* Comparing rigs; see compare.h. */
#include "analysis/compare.h"

#include <stdlib.h>
#include <string.h>

#include "facts/catalog.h"
#include "facts/data.h"
#include "load/rig.h"

/* "rigs/wopr.rig", "./my/wopr-p2p.rig" -> "wopr", "wopr-p2p": what tells two
 * rigs apart where their titles may be equal. */
static void short_name(const char *file, char *out, size_t cap)
{
  const char *base = file ? strrchr(file, '/') : NULL;
  base = base ? base + 1 : file ? file : "-";
  size_t n = strlen(base);
  if (n > 4 && strcmp(base + n - 4, ".rig") == 0)
    n -= 4;
  str_copy(out, n + 1 < cap ? n + 1 : cap, base);
}

static int judge(const char *rig, const char *gpu, const struct gr_nccl_version *nccl, unsigned flags,
                 struct gr_judged *j, struct gr_err *err)
{
  struct gr_source src = {.kind = GR_SRC_RIG, .path = rig, .gpu_model = gpu};
  if (nccl)
    src.nccl = *nccl;
  memset(j, 0, sizeof(*j));
  if (gr_machine_open(&src, flags | GR_MACHINE_PREDICT, &j->m, err) != 0)
    return -1;
  const struct gr_topo *t = &j->m.topo;
  for (size_t g = 0; g < t->ngpus; g++) {
    const struct gr_gpu_model *m = gr_pci_catalog(&t->pci[t->gpus[g]]);
    j->vram_gib += m ? m->mem_gib : 0;
  }
  short_name(t->rig->file, j->name, sizeof(j->name));
  for (size_t k = 0; k < t->npackages; k++)
    j->ram_gib += (double)t->packages[k].mem_bytes / (double)(1ULL << 30);
  for (size_t k = 0; k < t->npackages; k++)
    if (t->packages[k].mem_bytes == 0)
      j->ram_gib = 0; /* a part of the RAM is not the RAM */
  return 0;
}

static double p2p_share(const struct gr_judged *j)
{
  size_t n = j->m.topo.ngpus;
  return n ? (double)j->m.prediction.largest_p2p_domain / (double)n : 0;
}

/* Training rank: the share of GPUs that reach each other by P2P without
 * crossing a socket, then the best all-reduce bandwidth, then the default one. */
static int cmp_training(const void *x, const void *y)
{
  const struct gr_judged *a = *(const struct gr_judged *const *)x, *b = *(const struct gr_judged *const *)y;
  const struct gr_prediction *pa = &a->m.prediction, *pb = &b->m.prediction;
  if (p2p_share(a) != p2p_share(b))
    return p2p_share(a) > p2p_share(b) ? -1 : 1;
  if (pa->best.busbw_gbps != pb->best.busbw_gbps)
    return pa->best.busbw_gbps > pb->best.busbw_gbps ? -1 : 1;
  if (pa->nccl_default.busbw_gbps != pb->nccl_default.busbw_gbps)
    return pa->nccl_default.busbw_gbps > pb->nccl_default.busbw_gbps ? -1 : 1;
  return 0;
}

bool gr_compare_job_tied(const struct gr_judged *a, const struct gr_judged *b)
{
  if (a->job_fits != b->job_fits)
    return false;
  double hi = a->job_tps > b->job_tps ? a->job_tps : b->job_tps;
  double lo = a->job_tps > b->job_tps ? b->job_tps : a->job_tps;
  return hi <= 0 || (hi - lo) / hi < GR_COMPARE_TIE;
}

/* Job order: fit first, then speed; the training criterion orders rigs of
 * equal speed, so that a tie lists the better wired rig first. */
static int cmp_job(const void *x, const void *y)
{
  const struct gr_judged *a = *(const struct gr_judged *const *)x, *b = *(const struct gr_judged *const *)y;
  if (a->job_fits != b->job_fits)
    return a->job_fits ? -1 : 1;
  if (a->job_tps != b->job_tps)
    return a->job_tps > b->job_tps ? -1 : 1;
  return cmp_training(x, y);
}

/* The order shown: by the ranks already given (job rank, then training). */
static int cmp_shown(const void *x, const void *y)
{
  const struct gr_judged *a = *(const struct gr_judged *const *)x, *b = *(const struct gr_judged *const *)y;
  if (a->job && b->job && a->job_rank != b->job_rank)
    return a->job_rank < b->job_rank ? -1 : 1;
  return a->job && b->job ? cmp_job(x, y) : cmp_training(x, y);
}

static const struct gr_judged **sorted(const struct gr_judged *js, size_t n, int (*cmp)(const void *, const void *))
{
  const struct gr_judged **order = xcalloc(n + 1, sizeof(*order));
  for (size_t i = 0; i < n; i++)
    order[i] = &js[i];
  if (n > 1)
    qsort(order, n, sizeof(*order), cmp);
  return order;
}

const struct gr_judged **gr_compare_order(const struct gr_judged *js, size_t n)
{
  return sorted(js, n, cmp_shown);
}

const struct gr_judged **gr_compare_training_order(const struct gr_judged *js, size_t n)
{
  return sorted(js, n, cmp_training);
}

void gr_compare_rank_job(struct gr_judged *js, size_t n)
{
  const struct gr_judged **order = sorted(js, n, cmp_job);
  for (size_t i = 0; i < n; i++) {
    struct gr_judged *j = &js[order[i] - js];
    j->job_rank = i > 0 && gr_compare_job_tied(order[i - 1], order[i]) ? order[i - 1]->job_rank : (int)i + 1;
  }
  free(order);
}

static void rank(struct gr_judged *js, size_t n)
{
  const struct gr_judged **order = gr_compare_training_order(js, n);
  for (size_t i = 0; i < n; i++) {
    struct gr_judged *j = &js[order[i] - js];
    j->rank = i > 0 && cmp_training(&order[i - 1], &order[i]) == 0 ? order[i - 1]->rank : (int)i + 1;
  }
  free(order);
}

int gr_compare_open(char *const *rigs, size_t n, const char *gpu_model, const struct gr_nccl_version *nccl,
                    unsigned flags, struct gr_judged **out, struct gr_err *err)
{
  struct gr_judged *js = xcalloc(n + 1, sizeof(*js));
  for (size_t i = 0; i < n; i++)
    if (judge(rigs[i], gpu_model, nccl, flags, &js[i], err) != 0) {
      gr_compare_close(js, i);
      return -1;
    }
  rank(js, n);
  *out = js;
  return 0;
}

void gr_compare_close(struct gr_judged *js, size_t n)
{
  for (size_t i = 0; js && i < n; i++)
    gr_machine_close(&js[i].m);
  free(js);
}

const struct gr_verdict *gr_compare_verdict(const struct gr_judged *j, const char *workload, int gpus)
{
  const struct gr_prediction *p = &j->m.prediction;
  for (size_t i = 0; i < p->nverdicts; i++)
    if (strcmp(p->verdicts[i].workload, workload) == 0 && (gpus < 0 || p->verdicts[i].gpus == gpus))
      return &p->verdicts[i];
  return NULL;
}

double gr_compare_price_per_gib(const struct gr_judged *j)
{
  const struct gr_rig_meta *r = j->m.topo.rig;
  return r && r->price > 0 && j->vram_gib > 0 ? r->price / j->vram_gib : 0;
}

int gr_rig_list(struct gr_rig_entry **out, size_t *n, struct gr_err *err)
{
  char **names;
  if (gr_data_list("rigs", ".rig", &names, n, err) != 0)
    return -1;
  struct gr_rig_entry *rigs = xcalloc(*n + 1, sizeof(*rigs));
  for (size_t i = 0; i < *n; i++) {
    struct gr_topo t;
    struct gr_err e = {0};
    rigs[i].name = names[i];
    if (gr_load_rig(names[i], &t, &e) == 0)
      rigs[i].title = xstrdup(t.rig->name);
    else
      rigs[i].problem = xstrdup(e.msg);
    gr_topo_free(&t);
  }
  free(names);
  *out = rigs;
  return 0;
}

void gr_rig_list_free(struct gr_rig_entry *rigs, size_t n)
{
  for (size_t i = 0; rigs && i < n; i++) {
    free(rigs[i].name);
    free(rigs[i].title);
    free(rigs[i].problem);
  }
  free(rigs);
}
