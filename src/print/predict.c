/* Printers of predictions (predict.h): a section for topo/report, and the
 * side-by-side table of `gpurig compare`. */
#include <math.h>
#include <string.h>

#include "print/common.h"
#include "print/groups.h"
#include "print/json_stream.h"
#include "print/predict.h"
#include "print/topo.h"
#include "print/text.h"
#include "base/util.h"

/* A copy matrix cell: the route's letter and the rate, X on the diagonal. */
static void copy_cell(const struct gr_prediction *p, size_t i, size_t j, char *cell, size_t cap)
{
  const struct gr_pair_predict *pp = gr_pair_at(p, i, j);
  memset(cell, 0, cap);
  cell[0] = pp->best == GR_XFER_GPULINK ? 'N' : pp->best == GR_XFER_P2P ? 'P' : 'H';
  cell[1] = ' ';
  if (i == j)
    gr_set_text(cell, cap, "X");
  else if (pp->gbps > 0)
    gr_fmt_1f(pp->gbps, cell + 2, cap - 2);
  else
    gr_set_text(cell + 2, cap - 2, "?");
}

/* copy_cell for the grouped grid (print/groups.h). */
static void group_copy_cell(const void *ctx, size_t i, size_t j, char *buf, size_t cap)
{
  copy_cell(ctx, i, j, buf, cap);
}

/* The one-way copy rate of every GPU pair, as a matrix. */
static void print_copy_matrix(FILE *out, const struct gr_prediction *p)
{
  size_t n = p->ngpus;
  fprintf(out, "GPU-to-GPU copies, one way, GB/s (N = NVLink, P = PCIe peer-to-peer, H = staged through host memory):\n");
  /* every pair's predicted copy is its class pair's by construction (the
   * prediction keeps one per class pair: gr_pair_at), so a grouped grid
   * stands for every pair it covers */
  if (gr_grids_grouped(p->a)) {
    gr_print_group_grid(out, p->a, group_copy_cell, p);
    return;
  }
  fprintf(out, "%-7s", "");
  for (size_t g = 0; g < n; g++)
    fprintf(out, " GPU%-4zu", g);
  fputc('\n', out);
  char *row = xmalloc(16 * n + 1); /* a cell: a space and at most 15 bytes */
  for (size_t i = 0; i < n; i++) {
    size_t len = 0;
    fprintf(out, "GPU%-4zu", i);
    for (size_t j = 0; j < n; j++) {
      char cell[16];
      copy_cell(p, i, j, cell, sizeof(cell));
      len += gr_put_cell(row + len, cell, 7);
    }
    row[len++] = '\n';
    fwrite(row, 1, len, out);
  }
  free(row);
}

/* The all-reduce bus bandwidth with NCCL's defaults, what bounds it, and
 * the rate with NCCL_P2P_LEVEL raised where that helps. */
static void print_allreduce(FILE *out, const struct gr_prediction *p)
{
  char dflt[160], bound[256];
  if (p->a->gpulink_unrecorded && p->nccl_default.busbw_gbps > 0) {
    fprintf(out, "All-reduce bus bandwidth: not predicted (NVLink not recorded, see below); over PCIe alone it would be %.1f GB/s with %s.\n",
            p->nccl_default.busbw_gbps, gr_nccl_defaults_text(p->a, dflt, sizeof(dflt)));
  } else if (p->nccl_default.busbw_gbps > 0) {
    fprintf(out, "All-reduce bus bandwidth (nccl-tests busbw, large messages): %.1f GB/s with %s.\n",
            p->nccl_default.busbw_gbps, gr_nccl_defaults_text(p->a, dflt, sizeof(dflt)));
    fprintf(out, "  Bounded by %s.\n", gr_ring_bound_text(p, &p->nccl_default, bound, sizeof(bound)));
    if (p->best_needs_p2p_level)
      fprintf(out, "  With NCCL_P2P_LEVEL=%s: %.1f GB/s, bounded by %s.\n", p->best_p2p_level, p->best.busbw_gbps,
              gr_ring_bound_text(p, &p->best, bound, sizeof(bound)));
  } else {
    fprintf(out, "All-reduce bus bandwidth: not known (this input records no link rates).\n");
  }
}

/* The P2P hives and the P2P groups they join into. */
static void print_p2p_groups(FILE *out, const struct gr_topo *t, const struct gr_prediction *p)
{
  size_t n = p->ngpus;
  /* one line for both groupings: hives nest inside P2P groups */
  size_t largest_hive = 0;
  for (size_t h = 0; h < p->a->nhives; h++) {
    size_t size = 0;
    for (size_t g = 0; g < n; g++)
      size += p->a->hive[g] == (int)h;
    largest_hive = size > largest_hive ? size : largest_hive;
  }
  bool any_p2p = gr_any_p2p_pair(p->a); /* some pair can do P2P, if only across sockets */
  if (p->largest_p2p_domain < 2 && any_p2p)
    fprintf(out, "Peer-to-peer: only across %s: %zu P2P hives of one GPU each, no P2P group within one.\n",
            t->npackages > 1 ? "sockets" : "NUMA nodes", p->a->nhives);
  else if (p->largest_p2p_domain < 2)
    fprintf(out, "Peer-to-peer: none (no GPU pair can do P2P): %zu P2P hives of one GPU each.\n", p->a->nhives);
  else if (p->ndomains == p->a->nhives)
    fprintf(out, "Peer-to-peer: %zu P2P hive%s (NVLink or a PCIe switch, without crossing the CPU), the largest with %zu of %zu GPUs.\n",
            p->a->nhives, p->a->nhives == 1 ? "" : "s", largest_hive, n);
  else
    fprintf(out, "Peer-to-peer: %zu P2P hive%s (NVLink or a PCIe switch, without crossing the CPU); through the CPU's root complex%s they join into %zu P2P group%s, the largest with %d of %zu GPUs.\n",
            p->a->nhives, p->a->nhives == 1 ? "" : "s", t->npackages > 1 ? ", without crossing a socket," : "",
            p->ndomains, p->ndomains == 1 ? "" : "s", p->largest_p2p_domain, n);
}

/* The prediction's notes, each cut to the terminal's width unless verbose. */
static void print_notes(FILE *out, const struct gr_prediction *p, const struct gr_text_style *st)
{
  char cut[1024];
  size_t room = (size_t)st->width > 40 ? (size_t)st->width - 4 : 36;
  for (size_t i = 0; i < p->notes.n; i++) {
    const char *text = p->notes.v[i].text;
    fprintf(out, "  - %s\n", st->verbose ? text : gr_text_point(text, room * 2, cut, sizeof(cut)));
  }
}

/* The verdicts per workload, each cut to the terminal's width unless verbose. */
static void print_verdicts(FILE *out, const struct gr_prediction *p, const struct gr_text_style *st)
{
  char cut[1024];
  fprintf(out, "\nVerdicts:%s\n", p->nverdicts ? "" : " none (see the note above)");
  for (size_t i = 0; i < p->nverdicts; i++) {
    const struct gr_verdict *v = &p->verdicts[i];
    char head[96];
    snprintf(head, sizeof(head), "%s across %d GPU%s: ", v->workload, v->gpus, v->gpus == 1 ? "" : "s");
    size_t used = 8 + gr_text_columns(head);
    size_t room = (size_t)st->width > used + 20 ? ((size_t)st->width - used) * 2 : 40;
    fprintf(out, "  %-4s  %s%s\n", gr_rating_name(v->rating), head,
            st->verbose ? v->reasons : gr_text_point(v->reasons, room, cut, sizeof(cut)));
  }
}

void gr_print_prediction(FILE *out, const struct gr_topo *t, const struct gr_prediction *p, const struct gr_text_style *st)
{
  size_t n = p->ngpus;
  if (!n)
    return;
  fprintf(out, "\nPredicted from the wiring (before measuring; constants in data/calibration.tsv):\n");
  if (n > 1) {
    print_copy_matrix(out, p);
    print_allreduce(out, p);
    print_p2p_groups(out, t, p);
  }
  print_notes(out, p, st);
  print_verdicts(out, p, st);
}

static json_t *num2(double v)
{
  return gr_json_positive(v, 2);
}

/* What bounds ring r as data (docs/json.md); null for nothing known. */
static json_t *ring_bound_json(const struct gr_prediction *p, const struct gr_ring *r)
{
  const struct gr_ring_bound *b = &r->bound;
  if (b->kind == GR_BOUND_NONE)
    return json_null();
  json_t *o = json_object();
  char bus[32];
  json_object_set_new(o, "kind", json_string(gr_bound_kind_key(b->kind)));
  json_object_set_new(o, "pci_bus_id", b->kind == GR_BOUND_LINK ? json_string(gr_pci_busid(&p->t->pci[b->node], bus, sizeof(bus)))
                                                                : json_null());
  json_object_set_new(o, "gbps", num2(b->gbps));
  json_object_set_new(o, "hops", b->kind == GR_BOUND_GPULINK_RINGS || b->kind == GR_BOUND_NVLS ? json_null()
                                                                                                : json_integer(b->hops));
  json_object_set_new(o, "direction", b->kind == GR_BOUND_LINK ? json_string(b->down ? "down" : "up") : json_null());
  json_object_set_new(o, "xfer", b->kind == GR_BOUND_LINK ? json_string(gr_xfer_name(b->xfer)) : json_null());
  return o;
}

/* The two n x n matrices, cell by cell: at 512 GPUs they were 15 MB of
 * jansson values (and 11 MB of allocator overhead) at once, the peak of
 * topo --json. */
static void matrices_json(struct gr_jw *w, const struct gr_prediction *p)
{
  size_t n = p->ngpus;
  /* above 64 GPUs a row and a column per GPU group where every pair is its
   * group pair's (docs/json.md, "Grouped matrices") */
  bool grouped = gr_grids_grouped(p->a); /* every pair is its class pair's (gr_pair_at) */
  size_t rows = grouped ? p->a->nclasses : n;
  if (gr_grids_grouped(p->a))
    gr_jw_bool(w, "matrices_by_group", grouped);
  for (int m = 0; m < 2; m++) {
    gr_jw_array(w, m ? "copy_matrix_gbps" : "p2p_matrix");
    for (size_t r = 0; r < rows; r++) {
      gr_jw_array(w, NULL);
      for (size_t c = 0; c < rows; c++) {
        size_t i = r, j = c;
        if (grouped)
          gr_group_pair(p->a, r, c, &i, &j);
        if (!m)
          gr_jw_str(w, NULL, i == j ? "X" : gr_xfer_name(gr_pair_at(p, i, j)->best));
        else if (i == j)
          gr_jw_null(w, NULL);
        else
          gr_jw_positive(w, NULL, gr_pair_at(p, i, j)->gbps, 2);
      }
      gr_jw_close(w);
    }
    gr_jw_close(w);
  }
}

static void rings_json(struct gr_jw *w, const struct gr_prediction *p)
{
  size_t n = p->ngpus;
  for (int k = 0; k < 2; k++) {
    const struct gr_ring *r = k ? &p->best : &p->nccl_default;
    json_t *ro = json_object(), *ord = json_array();
    for (size_t i = 0; i < n && n > 1; i++)
      json_array_append_new(ord, json_integer(r->order[i]));
    json_object_set_new(ro, "busbw_gbps", num2(r->busbw_gbps));
    /* NVLink-only sets: NCCL's algorithm for large all-reduces and both figures */
    json_object_set_new(ro, "algo", json_string(r->nvls_busbw_gbps > r->ring_busbw_gbps ? "nvls" : "ring"));
    json_object_set_new(ro, "ring_busbw_gbps", r->ring_busbw_gbps > 0 ? num2(r->ring_busbw_gbps) : json_null());
    json_object_set_new(ro, "nvls_busbw_gbps", r->nvls_busbw_gbps > 0 ? num2(r->nvls_busbw_gbps) : json_null());
    json_object_set_new(ro, "ring", ord);
    json_object_set_new(ro, "hops_nvlink", json_integer((json_int_t)r->nhops_gpulink));
    json_object_set_new(ro, "hops_p2p", json_integer((json_int_t)r->nhops_p2p));
    json_object_set_new(ro, "hops_host", json_integer((json_int_t)r->nhops_host));
    char bound[256];
    json_object_set_new(ro, "bottleneck", json_string(gr_ring_bound_text(p, r, bound, sizeof(bound))));
    json_object_set_new(ro, "bound", ring_bound_json(p, r));
    gr_jw_put(w, k ? "allreduce_best" : "allreduce_nccl_default", ro);
  }
}

void gr_prediction_json_members(struct gr_jw *w, const struct gr_topo *t, const struct gr_prediction *p)
{
  matrices_json(w, p);
  rings_json(w, p);
  /* true: the all-reduce figures are PCIe only on a machine with unrecorded NVLink, and no verdicts are given */
  gr_jw_put(w, "nvlink_unrecorded", json_boolean(p->a->gpulink_unrecorded));
  gr_jw_put(w, "best_needs_nccl_p2p_level", p->best_needs_p2p_level ? json_string(p->best_p2p_level) : json_null());
  gr_jw_put(w, "p2p_groups", json_integer((json_int_t)p->ndomains));
  gr_jw_put(w, "largest_p2p_group", json_integer(p->largest_p2p_domain));
  json_t *sw = json_array();
  for (size_t i = 0; i < p->nswitches; i++) {
    const struct gr_switch_budget *b = &p->switches[i];
    char bus[32];
    json_t *so = json_object();
    json_object_set_new(so, "pci_bus_id", json_string(gr_pci_busid(&t->pci[b->node], bus, sizeof(bus))));
    json_object_set_new(so, "lanes", b->lanes ? json_integer(b->lanes) : json_null());
    json_object_set_new(so, "uplink_lanes", json_integer(b->up_lanes));
    json_object_set_new(so, "downstream_lanes", json_integer(b->down_lanes));
    json_object_set_new(so, "oversubscription", num2(b->oversubscription));
    json_object_set_new(so, "gpus", json_integer(b->gpus));
    json_object_set_new(so, "nvme", json_integer(b->nvme));
    json_object_set_new(so, "nics", json_integer(b->nics));
    json_array_append_new(sw, so);
  }
  gr_jw_put(w, "switches", sw);
  json_t *notes = json_array();
  for (size_t i = 0; i < p->notes.n; i++)
    json_array_append_new(notes, gr_finding_to_json(&p->notes.v[i]));
  gr_jw_put(w, "notes", notes);
  json_t *vs = json_array();
  for (size_t i = 0; i < p->nverdicts; i++) {
    json_t *v = json_object();
    json_object_set_new(v, "workload", json_string(p->verdicts[i].workload));
    json_object_set_new(v, "gpus", json_integer(p->verdicts[i].gpus));
    json_object_set_new(v, "rating", json_string(gr_rating_name(p->verdicts[i].rating)));
    json_object_set_new(v, "reasons", json_string(p->verdicts[i].reasons));
    json_array_append_new(vs, v);
  }
  gr_jw_put(w, "verdicts", vs);
}

struct pred_pair {
  const struct gr_topo *t;
  const struct gr_prediction *p;
};

static void write_prediction(struct gr_jw *w, const void *ctx)
{
  const struct pred_pair *pp = ctx;
  gr_prediction_json_members(w, pp->t, pp->p);
}

json_t *gr_prediction_to_json(const struct gr_topo *t, const struct gr_prediction *p)
{
  struct pred_pair pp = {t, p};
  return gr_json_from_stream(write_prediction, &pp);
}
