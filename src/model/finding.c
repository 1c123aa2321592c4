/* Findings; see finding.h. */
#include "model/finding.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *vformat(const char *fmt, va_list ap)
{
  char *s;
  if (vasprintf(&s, fmt, ap) < 0)
    abort(); /* out of memory, as xmalloc */
  return s;
}

struct gr_finding *gr_finding_vadd(struct gr_findings *fs, enum gr_sev sev, const char *id, const char *fmt, va_list ap)
{
  fs->v = xrealloc(fs->v, (fs->n + 1) * sizeof(*fs->v));
  struct gr_finding *f = &fs->v[fs->n++];
  memset(f, 0, sizeof(*f));
  f->sev = sev < GR_SEV_COUNT ? sev : GR_SEV_ERROR;
  f->node = -1;
  snprintf(f->id, sizeof(f->id), "%s", id);
  f->text = vformat(fmt, ap);
  fs->count[f->sev]++;
  return f;
}

struct gr_finding *gr_finding_add(struct gr_findings *fs, enum gr_sev sev, const char *id, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  struct gr_finding *f = gr_finding_vadd(fs, sev, id, fmt, ap);
  va_end(ap);
  return f;
}

void gr_finding_subject(struct gr_finding *f, int node, const char *subject, const char *busid)
{
  f->node = node;
  free(f->subject);
  free(f->pci_bus_id);
  f->subject = xstrdup(subject);
  f->pci_bus_id = xstrdup(busid);
}

void gr_finding_evidence(struct gr_finding *f, const char *file, const char *fmt, ...)
{
  va_list ap;
  f->ev = xrealloc(f->ev, (f->nev + 1) * sizeof(*f->ev));
  struct gr_evidence *e = &f->ev[f->nev++];
  e->file = xstrdup(file);
  va_start(ap, fmt);
  e->value = vformat(fmt, ap);
  va_end(ap);
}

void gr_finding_fix(struct gr_finding *f, const char *cost, const char *fmt, ...)
{
  va_list ap;
  free(f->fix);
  free(f->cost);
  va_start(ap, fmt);
  f->fix = vformat(fmt, ap);
  va_end(ap);
  f->cost = xstrdup(cost);
}

/* How bad a severity is, for sorting: fail, warn, error, info, skipped, ok. */
static int badness(enum gr_sev s)
{
  static const int rank[GR_SEV_COUNT] = {[GR_SEV_FAIL] = 5, [GR_SEV_WARN] = 4, [GR_SEV_ERROR] = 3,
                                         [GR_SEV_INFO] = 2, [GR_SEV_SKIPPED] = 1, [GR_SEV_OK] = 0};
  return rank[s];
}

void gr_findings_sort(struct gr_findings *fs)
{
  /* insertion sort: stable, and the lists are short */
  for (size_t i = 1; i < fs->n; i++) {
    struct gr_finding x = fs->v[i];
    size_t j = i;
    for (; j > 0 && badness(fs->v[j - 1].sev) < badness(x.sev); j--)
      fs->v[j] = fs->v[j - 1];
    fs->v[j] = x;
  }
}

void gr_finding_release(struct gr_finding *f)
{
  free(f->subject);
  free(f->pci_bus_id);
  free(f->text);
  free(f->fix);
  free(f->cost);
  for (size_t e = 0; e < f->nev; e++) {
    free(f->ev[e].file);
    free(f->ev[e].value);
  }
  free(f->ev);
  memset(f, 0, sizeof(*f));
}

void gr_findings_take(struct gr_findings *dst, struct gr_findings *src)
{
  for (size_t i = 0; i < src->n; i++) {
    dst->v = xrealloc(dst->v, (dst->n + 1) * sizeof(*dst->v));
    dst->v[dst->n++] = src->v[i];
    dst->count[src->v[i].sev]++;
  }
  free(src->v);
  memset(src, 0, sizeof(*src));
}

void gr_findings_free(struct gr_findings *fs)
{
  if (!fs)
    return;
  for (size_t i = 0; i < fs->n; i++)
    gr_finding_release(&fs->v[i]);
  free(fs->v);
  memset(fs, 0, sizeof(*fs));
}

enum gr_exit gr_findings_exit(const struct gr_findings *fs)
{
  if (fs->count[GR_SEV_FAIL])
    return GR_EXIT_FAIL;
  if (fs->count[GR_SEV_WARN])
    return GR_EXIT_WARN;
  if (fs->count[GR_SEV_ERROR])
    return GR_EXIT_CANNOT_RUN;
  return GR_EXIT_OK;
}

const char *gr_sev_name(enum gr_sev s)
{
  static const char *const names[GR_SEV_COUNT] = {"ok", "info", "warn", "fail", "skipped", "error"};
  return s < GR_SEV_COUNT ? names[s] : "?";
}
