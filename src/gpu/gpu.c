/* The vendor-neutral side of the GPU backends (see gpu.h). */
#include "gpu/gpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/topo.h"

int gr_gpus_open(struct gr_gpus *g, struct gr_err *err)
{
  char why[1024] = "", one[512];
  size_t off = 0;
  memset(g, 0, sizeof(*g));
  for (size_t i = 0; gr_vendors[i]; i++) {
    const struct gr_gpu_backend *be = gr_vendors[i]->gpu;
    if (!be)
      continue;
    one[0] = '\0';
    if (be->init(&g->state, one, sizeof(one)) == 0) {
      if (be->enumerate(g->state, &g->count) != 0) {
        snprintf(one, sizeof(one), "%s", be->last_error(g->state));
        be->shutdown(g->state);
        g->state = NULL;
      } else {
        g->be = be;
        if (be->versions)
          be->versions(g->state, g->driver, sizeof(g->driver), g->runtime, sizeof(g->runtime));
        return 0;
      }
    }
    off += (size_t)snprintf(why + off, off < sizeof(why) ? sizeof(why) - off : 0, "%s%s", off ? "; " : "", one);
    if (off >= sizeof(why))
      off = sizeof(why) - 1;
  }
  return gr_fail(err, GR_EXIT_CANNOT_RUN, "%s", why);
}

void gr_gpus_close(struct gr_gpus *g)
{
  if (g->be)
    g->be->shutdown(g->state);
  memset(g, 0, sizeof(*g));
}

static const char *const p2p_names[] = {"OK", "CNS", "GNS", "TNS", "DR", "NS", "U"};
static const char *const p2p_texts[] = {
    "OK", "chipset not supported", "GPU not supported", "topology not supported",
    "disabled by regkey", "not supported", "unknown"};

const char *gr_p2p_status_name(enum gr_p2p_status s)
{
  return (unsigned)s <= GR_P2PS_U ? p2p_names[s] : "U";
}

const char *gr_p2p_status_text(enum gr_p2p_status s)
{
  return (unsigned)s <= GR_P2PS_U ? p2p_texts[s] : "unknown";
}

bool gr_busid_normalize(const char *in, char *out, size_t cap)
{
  unsigned d, b, v, f;
  if (!in || !gr_parse_busid(in, &d, &b, &v, &f) || d > 0xffff)
    return false;
  snprintf(out, cap, "%04x:%02x:%02x.%x", d, b, v, f);
  return true;
}

static void collect_row(struct gr_gpus *g, unsigned i, const struct gr_topo *t, struct gr_gpu_row *row)
{
  row->topo_gpu = -1;
  if (g->be->static_info(g->state, i, &row->st) != 0) {
    snprintf(row->error, sizeof(row->error), "%s", g->be->last_error(g->state));
    row->lost = true;
    return;
  }
  if (g->be->dynamic_info(g->state, i, &row->dy) != 0) {
    snprintf(row->error, sizeof(row->error), "%s", g->be->last_error(g->state));
    row->lost = true;
  }
  row->topo_gpu = gr_topo_gpu_by_busid(t, row->st.busid);
}

/* A GPU that stops answering is broken hardware (or a driver that lost it). */
static void lost_findings(struct gr_gpus_report *r)
{
  for (unsigned i = 0; i < r->count; i++)
    if (r->rows[i].lost) {
      struct gr_finding *f = gr_finding_add(&r->findings, GR_SEV_FAIL, "gpu.lost", "%s", r->rows[i].error);
      gr_finding_subject(f, -1, NULL, r->rows[i].st.busid[0] ? r->rows[i].st.busid : NULL);
    }
}

static void collect_p2p(struct gr_gpus *g, struct gr_gpus_report *r)
{
  size_t n = r->count;
  if (!g->be->p2p_status || n == 0)
    return;
  r->p2p_read = xcalloc(n * n, sizeof(*r->p2p_read));
  r->p2p_write = xcalloc(n * n, sizeof(*r->p2p_write));
  for (unsigned a = 0; a < n; a++)
    for (unsigned b = 0; b < n; b++) {
      r->p2p_read[a * n + b] = r->p2p_write[a * n + b] = GR_P2PS_U;
      if (a == b || r->rows[a].lost || r->rows[b].lost)
        continue;
      g->be->p2p_status(g->state, a, b, GR_P2P_READ, &r->p2p_read[a * n + b]);
      g->be->p2p_status(g->state, a, b, GR_P2P_WRITE, &r->p2p_write[a * n + b]);
    }
}

void gr_gpus_collect(struct gr_gpus *g, const struct gr_topo *t, struct gr_gpus_report *r)
{
  memset(r, 0, sizeof(*r));
  snprintf(r->vendor, sizeof(r->vendor), "%s", g->be->name);
  snprintf(r->library, sizeof(r->library), "%s", g->be->library);
  snprintf(r->driver, sizeof(r->driver), "%s", g->driver);
  snprintf(r->runtime, sizeof(r->runtime), "%s", g->runtime);
  r->driver_name = g->be->driver_name;
  r->runtime_name = g->be->runtime_name;
  r->p2p_tool = g->be->p2p_tool;
  r->count = g->count;
  r->rows = xcalloc(g->count ? g->count : 1, sizeof(*r->rows));
  for (unsigned i = 0; i < g->count; i++)
    collect_row(g, i, t, &r->rows[i]);
  collect_p2p(g, r);
  lost_findings(r);
}

void gr_gpus_report_free(struct gr_gpus_report *r)
{
  free(r->rows);
  free(r->p2p_read);
  free(r->p2p_write);
  gr_findings_free(&r->findings);
  memset(r, 0, sizeof(*r));
}
