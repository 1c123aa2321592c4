/* One sample of a machine's dynamic part; see sample.h. */
#include "monitor/sample.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "load/loaders.h"

static double clock_s(clockid_t id)
{
  struct timespec ts;
  clock_gettime(id, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void read_gpus(const struct gr_gpus *g, struct gr_sample *s)
{
  s->ngpu = g->count;
  s->gpu = xcalloc(g->count + 1, sizeof(*s->gpu));
  s->gpu_ok = xcalloc(g->count + 1, sizeof(*s->gpu_ok));
  s->gpu_error = xcalloc(g->count + 1, sizeof(*s->gpu_error));
  for (unsigned i = 0; i < g->count; i++) {
    s->gpu_ok[i] = g->be->dynamic_info(g->state, i, &s->gpu[i]) == 0;
    if (!s->gpu_ok[i]) {
      memset(&s->gpu[i], 0, sizeof(s->gpu[i])); /* every value invalid, never a stale one */
      s->gpu_error[i] = xstrdup(g->be->last_error(g->state));
    }
  }
}

int gr_sample_read(const struct gr_machine *m, const struct gr_gpus *g, struct gr_sample *s, struct gr_err *err)
{
  memset(s, 0, sizeof(*s));
  s->mono_s = clock_s(CLOCK_MONOTONIC);
  s->real_s = clock_s(CLOCK_REALTIME);
  if (m->has_fs) {
    s->npci = m->topo.npci;
    s->pci = xcalloc(s->npci + 1, sizeof(*s->pci));
    if (gr_load_dynamic(&m->fs, &m->topo, s->pci, err) != 0) {
      gr_sample_free(s);
      return -1;
    }
  }
  if (g && g->be)
    read_gpus(g, s);
  return 0;
}

void gr_sample_free(struct gr_sample *s)
{
  for (unsigned i = 0; s->gpu_error && i < s->ngpu; i++)
    free(s->gpu_error[i]);
  free(s->gpu_error);
  free(s->gpu_ok);
  free(s->gpu);
  free(s->pci);
  memset(s, 0, sizeof(*s));
}
