/* gpurig-mpi bench --mpi: the all-reduce across ranks, each node's checks,
 * and the slowest node and link, as text and JSON. */
#include <string.h>

#include "base/util.h"
#include "facts/pcilink.h"
#include "print/bench.h"
#include "print/bench_mpi.h"

/* "GPU 0000:41:00.0 Gen4 x8 (trained below its x16)" */
static void link_text(const struct gr_mpi_rank *r, char *buf, size_t cap)
{
  int w = r->cur_width > 0 ? r->cur_width : r->width;
  char lab[32];
  if (r->gen <= 0 || w <= 0)
    snprintf(buf, cap, "GPU %s link unknown", r->gpu[0] ? r->gpu : "?");
  else if (r->cur_width > 0 && r->width > r->cur_width)
    snprintf(buf, cap, "GPU %s %s (trained below its x%d)", r->gpu, gr_pcie_label(r->gen, w, lab, sizeof(lab)), r->width);
  else
    snprintf(buf, cap, "GPU %s %s", r->gpu, gr_pcie_label(r->gen, w, lab, sizeof(lab)));
}

static const char *peermem_text(int p)
{
  return p > 0 ? "loaded" : p == 0 ? "not loaded" : "unknown (not this machine)";
}

static void print_node(FILE *f, const struct gr_mpi_report *rep, const struct gr_mpi_rank *n)
{
  int ranks = 0;
  double worst = 0;
  char link[128];
  for (int i = 0; i < rep->nranks; i++)
    if (strcmp(rep->ranks[i].host, n->host) == 0) {
      ranks++;
      worst = rep->ranks[i].largest_us > worst ? rep->ranks[i].largest_us : worst;
    }
  link_text(n, link, sizeof(link));
  if (rep->nrows > 0)
    fprintf(f, "  %-20s %d rank%s  largest all-reduce %.0f us  nvidia_peermem %s\n", n->host, ranks,
            ranks == 1 ? " " : "s", worst, peermem_text(n->peermem));
  else
    fprintf(f, "  %-20s %d rank%s  nvidia_peermem %s\n", n->host, ranks, ranks == 1 ? " " : "s",
            peermem_text(n->peermem));
  if (n->nics_known)
    fprintf(f, "  %-20s NICs %d (%d RDMA, %d of them within PIX/PXB of a GPU)\n", "", n->nics, n->nics_rdma,
            n->nics_near);
  else
    fprintf(f, "  %-20s NICs unknown (no topology of this machine)\n", "");
}

void gr_print_bench_mpi(FILE *f, const struct gr_mpi_report *rep)
{
  char a[32], link[128];
  fprintf(f, "gpurig bench --mpi: %d MPI rank%s on %d node%s, one rank per %s", rep->nranks,
          rep->nranks == 1 ? "" : "s", rep->nnodes, rep->nnodes == 1 ? "" : "s", rep->per_node ? "node" : "GPU");
  if (rep->nccl_ranks > 0)
    fprintf(f, ", %d %s rank%s", rep->nccl_ranks, rep->collective, rep->nccl_ranks == 1 ? "" : "s");
  fprintf(f, "\n");
  fprintf(f, "\nall-reduce across ranks (float32 sum; time averaged over ranks as nccl-tests, busbw = algbw x "
             "2(n-1)/n)\n");
  fprintf(f, "  %10s %12s %12s %11s %11s %7s\n", "size", "avg us", "max us", "algbw GB/s", "busbw GB/s", "wrong");
  for (int k = 0; k < rep->nrows; k++) {
    const struct gr_mpi_row *w = &rep->rows[k];
    fprintf(f, "  %10s %12.1f %12.1f %11.2f %11.2f %7ld\n", gr_size_text(w->bytes, a, sizeof(a)), w->avg_us,
            w->max_us, w->algbw_gbps, w->busbw_gbps, w->wrong);
  }
  fprintf(f, "\nnodes (each node's checks by its local rank 0)\n");
  for (int i = 0; i < rep->nranks; i++)
    if (rep->ranks[i].node_checked)
      print_node(f, rep, &rep->ranks[i]);
  fprintf(f, "\nranks\n");
  for (int i = 0; i < rep->nranks; i++) {
    const struct gr_mpi_rank *r = &rep->ranks[i];
    link_text(r, link, sizeof(link));
    if (r->error[0])
      fprintf(f, "  rank %d on %s: error: %s\n", r->rank, r->host, r->error);
    else if (rep->nrows == 0)
      fprintf(f, "  rank %d on %s (local %d): %s\n", r->rank, r->host, r->local_rank, link);
    else if (r->ndev == 1)
      fprintf(f, "  rank %d on %s (local %d, NCCL rank %d): %s, largest all-reduce %.0f us\n", r->rank, r->host,
              r->local_rank, r->nccl_first, link, r->largest_us);
    else
      fprintf(f, "  rank %d on %s (local %d, NCCL ranks %d-%d, slowest link shown): %s, largest all-reduce %.0f us\n",
              r->rank, r->host, r->local_rank, r->nccl_first, r->nccl_first + r->ndev - 1, link, r->largest_us);
  }
  if (rep->slowest_node >= 0)
    fprintf(f, "\nslowest node: %s (%.0f us for the largest all-reduce)\n", rep->ranks[rep->slowest_node].host,
            rep->ranks[rep->slowest_node].largest_us);
  if (rep->slowest_link >= 0) {
    const struct gr_mpi_rank *r = &rep->ranks[rep->slowest_link];
    link_text(r, link, sizeof(link));
    fprintf(f, "slowest link: %s, %s (%.1f GB/s per direction)\n", r->host, link, r->link_gbps);
  }
  fprintf(f, "\nFindings:\n");
  gr_print_bench_findings(f, &rep->findings);
  if (rep->findings.n == 0)
    fprintf(f, "  none: every sum was right, every rank joined and no node check warned\n");
}

static json_t *rank_json(const struct gr_mpi_rank *r)
{
  json_t *j = json_pack("{s:i, s:s, s:i, s:i, s:i, s:s, s:i, s:i, s:i, s:f, s:f}", "rank", r->rank, "host", r->host,
                        "local_rank", r->local_rank, "nccl_first_rank", r->nccl_first, "gpus", r->ndev, "gpu",
                        r->gpu, "link_gen", r->gen, "link_width", r->width, "link_cur_width", r->cur_width,
                        "link_gbps", r->link_gbps, "largest_time_us", r->largest_us);
  if (r->error[0])
    json_object_set_new(j, "error", json_string(r->error));
  if (r->node_checked) {
    json_object_set_new(j, "nvidia_peermem", r->peermem < 0 ? json_null() : json_boolean(r->peermem));
    if (r->nics_known)
      json_object_set_new(j, "nics", json_pack("{s:i, s:i, s:i, s:i, s:i}", "count", r->nics, "rdma", r->nics_rdma,
                                               "rdma_near_gpu", r->nics_near, "gpus", r->gpus,
                                               "gpus_with_rdma_near", r->gpus_near));
  }
  return j;
}

json_t *gr_bench_mpi_to_json(const struct gr_mpi_report *rep)
{
  json_t *rows = json_array(), *ranks = json_array();
  for (int k = 0; k < rep->nrows; k++) {
    const struct gr_mpi_row *w = &rep->rows[k];
    json_array_append_new(rows, json_pack("{s:I, s:f, s:f, s:f, s:f, s:I}", "size_bytes", (json_int_t)w->bytes,
                                          "time_avg_us", w->avg_us, "time_max_us", w->max_us, "algbw_gbps",
                                          w->algbw_gbps, "busbw_gbps", w->busbw_gbps, "wrong", (json_int_t)w->wrong));
  }
  for (int i = 0; i < rep->nranks; i++)
    json_array_append_new(ranks, rank_json(&rep->ranks[i]));
  json_t *j = json_pack("{s:i, s:i, s:i, s:s, s:s, s:o, s:o}", "mpi_ranks", rep->nranks, "nccl_ranks", rep->nccl_ranks,
                        "nodes", rep->nnodes, "per", rep->per_node ? "node" : "gpu", "collective", rep->collective,
                        "allreduce", rows, "ranks", ranks);
  if (rep->note[0])
    json_object_set_new(j, "note", json_string(rep->note));
  json_object_set_new(j, "slowest_node",
                      rep->slowest_node >= 0 ? json_string(rep->ranks[rep->slowest_node].host) : json_null());
  json_object_set_new(j, "slowest_link_rank",
                      rep->slowest_link >= 0 ? json_integer(rep->ranks[rep->slowest_link].rank) : json_null());
  json_object_set_new(j, "findings", gr_bench_findings_json(&rep->findings));
  return j;
}
