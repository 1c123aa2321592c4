/* One sample of a machine's dynamic part; see sample.h. */
#include "monitor/sample.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "load/loaders.h"

double gr_clock_s(int clock_id)
{
  struct timespec ts;
  clock_gettime((clockid_t)clock_id, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void gr_sample_alloc(struct gr_sample *s, size_t npci, unsigned ngpu)
{
  memset(s, 0, sizeof(*s));
  s->npci = npci;
  s->pci = npci ? xcalloc(npci, sizeof(*s->pci)) : NULL;
  s->ngpu = ngpu;
  if (ngpu) {
    s->gpu = xcalloc(ngpu, sizeof(*s->gpu));
    s->gpu_read = xcalloc(ngpu, sizeof(*s->gpu_read));
    s->gpu_age_s = xcalloc(ngpu, sizeof(*s->gpu_age_s));
    s->gpu_error = xcalloc(ngpu, sizeof(*s->gpu_error));
  }
}

void gr_sample_copy(struct gr_sample *dst, const struct gr_sample *src)
{
  dst->mono_s = src->mono_s;
  dst->real_s = src->real_s;
  if (src->npci && dst->npci == src->npci)
    memcpy(dst->pci, src->pci, src->npci * sizeof(*src->pci));
  if (src->ngpu && dst->ngpu == src->ngpu) {
    memcpy(dst->gpu, src->gpu, src->ngpu * sizeof(*src->gpu));
    memcpy(dst->gpu_read, src->gpu_read, src->ngpu * sizeof(*src->gpu_read));
    memcpy(dst->gpu_age_s, src->gpu_age_s, src->ngpu * sizeof(*src->gpu_age_s));
    memcpy(dst->gpu_error, src->gpu_error, src->ngpu * sizeof(*src->gpu_error));
  }
}

static void read_gpus(const struct gr_gpus *g, struct gr_sample *s)
{
  for (unsigned i = 0; i < g->count; i++) {
    if (g->be->dynamic_info(g->state, i, &s->gpu[i]) == 0)
      continue;
    memset(&s->gpu[i], 0, sizeof(s->gpu[i])); /* every value invalid, never a stale one */
    s->gpu_read[i] = GR_READ_LOST;
    snprintf(s->gpu_error[i], sizeof(s->gpu_error[i]), "%s", g->be->last_error(g->state));
  }
}

int gr_sample_read(const struct gr_machine *m, const struct gr_gpus *g, struct gr_sample *s, struct gr_err *err)
{
  gr_sample_alloc(s, m->has_fs ? m->topo.npci : 0, g && g->be ? g->count : 0);
  s->mono_s = gr_clock_s(CLOCK_MONOTONIC);
  s->real_s = gr_clock_s(CLOCK_REALTIME);
  if (m->has_fs && gr_load_dynamic(&m->fs, &m->topo, NULL, NULL, s->pci, err) != 0) {
    gr_sample_free(s);
    return -1;
  }
  if (g && g->be)
    read_gpus(g, s);
  return 0;
}

void gr_sample_free(struct gr_sample *s)
{
  free(s->gpu_error);
  free(s->gpu_age_s);
  free(s->gpu_read);
  free(s->gpu);
  free(s->pci);
  memset(s, 0, sizeof(*s));
}
