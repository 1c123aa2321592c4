/* gpurig-mpi bench --mpi: one rank's facts and checks, and the report rank
 * 0 makes of every rank's (gpu/bench_mpi.h). No MPI here. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/fs.h"
#include "gpu/bench_mpi.h"

/* GB/s per lane and direction after line coding, PCIe generations 1..6. */
static double lane_gbps(int gen)
{
  static const double rate[] = {0, 0.25, 0.5, 0.985, 1.969, 3.938, 7.563};
  return gen >= 1 && gen <= 6 ? rate[gen] : 0;
}

static void rank_link(struct gr_mpi_rank *r, const struct gr_bench_facts *f, const int *devs, int ndev)
{
  r->link_gbps = -1;
  for (int k = 0; k < ndev; k++) {
    int d = devs[k];
    int width = f->cur_width && f->cur_width[d] > 0 ? f->cur_width[d] : f->width ? f->width[d] : 0;
    double gbps = f->gen ? lane_gbps(f->gen[d]) * width : 0;
    if (r->link_gbps >= 0 && gbps >= r->link_gbps)
      continue;
    r->link_gbps = gbps;
    r->gen = f->gen ? f->gen[d] : 0;
    r->width = f->width ? f->width[d] : 0;
    r->cur_width = f->cur_width ? f->cur_width[d] : 0;
  }
  if (r->link_gbps < 0)
    r->link_gbps = 0;
}

/* NICs able to do RDMA and whether one sits within PIX/PXB of a GPU: where
 * NCCL uses GPUDirect RDMA by default (NCCL_NET_GDR_LEVEL). */
static void node_nics(struct gr_mpi_rank *r, const struct gr_machine *m)
{
  const struct gr_topo *t = &m->topo;
  const struct gr_analysis *a = &m->analysis;
  r->nics_known = 1;
  r->nics = (int)t->nnics;
  for (size_t j = 0; j < t->nnics; j++) {
    bool near = false;
    if (!t->pci[t->nics[j]].rdma)
      continue;
    r->nics_rdma++;
    for (size_t i = 0; i < a->ngpus && a->gpu_nic; i++)
      near |= a->gpu_nic[i * a->nnics + j].level <= GR_LVL_PXB;
    r->nics_near += near;
  }
  r->gpus = (int)a->ngpus;
  for (size_t i = 0; i < a->ngpus && a->gpu_nic; i++) {
    bool near = false;
    for (size_t j = 0; j < t->nnics; j++)
      near |= t->pci[t->nics[j]].rdma && a->gpu_nic[i * a->nnics + j].level <= GR_LVL_PXB;
    r->gpus_near += near;
  }
}

void gr_mpi_rank_fill(struct gr_mpi_rank *r, const struct gr_machine *m, bool have_topo,
                      const struct gr_bench_facts *f, const int *devs, int ndev, bool check_node)
{
  rank_link(r, f, devs, ndev);
  if (!check_node)
    return;
  r->node_checked = true;
  r->peermem = -1;
  if (have_topo)
    node_nics(r, m);
  if (m->has_fs) {
    int fd = gr_fs_open_dir(&m->fs, "/sys/module/nvidia_peermem");
    r->peermem = fd >= 0;
    if (fd >= 0)
      close(fd);
  }
}

int gr_mpi_sizes(size_t max, bool quick, size_t *sizes)
{
  int n = 0;
  size_t step = quick ? 4 : 2;
  for (size_t b = quick ? 64 * 1024 : 4096; b <= max && n < GR_MPI_MAX_SIZES; b = b < max && b * step > max ? max : b * step)
    sizes[n++] = b;
  return n;
}

int gr_mpi_iters(size_t bytes, bool quick)
{
  size_t budget = (quick ? (size_t)256 : 2048) << 20, it = budget / bytes;
  int lo = quick ? 3 : 5, hi = quick ? 10 : 20;
  return it < (size_t)lo ? lo : it > (size_t)hi ? hi : (int)it;
}

/* A node's warnings, from its local rank 0's checks. */
static void node_findings(struct gr_findings *fs, const struct gr_mpi_rank *n)
{
  struct gr_finding *f;
  if (!n->node_checked || n->nics_rdma <= 0)
    return;
  if (n->peermem == 0) {
    f = gr_finding_add(fs, GR_SEV_WARN, "bench.mpi-peermem",
                       "an RDMA NIC but nvidia_peermem is not loaded: NCCL stages through host memory");
    gr_finding_subject(f, -1, n->host, NULL);
    gr_finding_fix(f, NULL, "modprobe nvidia_peermem");
  }
  if (n->gpus_near < n->gpus) {
    f = gr_finding_add(fs, GR_SEV_WARN, "bench.mpi-gdr",
                       "%d of %d GPUs have no RDMA NIC within PIX/PXB (under the same PCIe switch): NCCL's default "
                       "NCCL_NET_GDR_LEVEL gives them no GPUDirect RDMA", n->gpus - n->gpus_near, n->gpus);
    gr_finding_subject(f, -1, n->host, NULL);
  }
}

static void rank_findings(struct gr_findings *fs, const struct gr_mpi_rank *r)
{
  char who[96];
  snprintf(who, sizeof(who), "rank %d on %s", r->rank, r->host);
  if (r->error[0])
    gr_finding_subject(gr_finding_add(fs, GR_SEV_FAIL, "bench.mpi-rank-error", "%s", r->error), -1, who, NULL);
  if (r->cur_width > 0 && r->width > r->cur_width) {
    struct gr_finding *f = gr_finding_add(fs, GR_SEV_WARN, "bench.mpi-link-width",
                                          "its GPU's PCIe link trained at x%d of x%d: check the slot and riser "
                                          "(gpurig doctor)", r->cur_width, r->width);
    gr_finding_subject(f, -1, who, r->gpu[0] ? r->gpu : NULL);
  }
  node_findings(fs, r);
}

static void report_findings(struct gr_mpi_report *rep)
{
  char a[32];
  gr_findings_free(&rep->findings);
  for (int k = 0; k < rep->nrows; k++)
    if (rep->rows[k].wrong)
      gr_finding_add(&rep->findings, GR_SEV_FAIL, "bench.mpi-wrong",
                     "the all-reduce of %s gave %ld wrong values (of the checked windows, all ranks): a GPU, link, "
                     "NIC or NCCL transport corrupts data", gr_size_text(rep->rows[k].bytes, a, sizeof(a)),
                     rep->rows[k].wrong);
  if (rep->note[0])
    gr_finding_add(&rep->findings, GR_SEV_WARN, "bench.mpi-not-run", "%s", rep->note);
  for (int i = 0; i < rep->nranks; i++)
    rank_findings(&rep->findings, &rep->ranks[i]);
  gr_findings_sort(&rep->findings);
}

void gr_mpi_report_finish(struct gr_mpi_report *rep)
{
  double worst_us = -1, worst_gbps = -1;
  rep->slowest_node = rep->slowest_link = -1;
  rep->nnodes = 0;
  for (int i = 0; i < rep->nranks; i++) {
    const struct gr_mpi_rank *r = &rep->ranks[i];
    rep->nnodes += r->node_checked;
    /* a node's time: its slowest rank's */
    int node = -1;
    for (int j = 0; j < rep->nranks && node < 0; j++)
      if (rep->ranks[j].node_checked && strcmp(rep->ranks[j].host, r->host) == 0)
        node = j;
    if (node >= 0 && rep->nrows > 0 && r->largest_us > worst_us) {
      worst_us = r->largest_us;
      rep->slowest_node = node;
    }
    if (r->link_gbps > 0 && (worst_gbps < 0 || r->link_gbps < worst_gbps)) {
      worst_gbps = r->link_gbps;
      rep->slowest_link = i;
    }
  }
  report_findings(rep);
}

void gr_mpi_report_free(struct gr_mpi_report *rep)
{
  gr_findings_free(&rep->findings);
}
