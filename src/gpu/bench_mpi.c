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
}

int gr_mpi_report_exit(const struct gr_mpi_report *rep)
{
  int rc = rep->note[0] ? GR_EXIT_WARN : GR_EXIT_OK;
  for (int k = 0; k < rep->nrows; k++)
    if (rep->rows[k].wrong)
      return GR_EXIT_FAIL;
  for (int i = 0; i < rep->nranks; i++) {
    const struct gr_mpi_rank *r = &rep->ranks[i];
    if (r->error[0])
      return GR_EXIT_FAIL;
    if (r->cur_width > 0 && r->width > 0 && r->cur_width < r->width)
      rc = GR_EXIT_WARN;
    if (r->node_checked && r->nics_rdma > 0 && (r->peermem == 0 || r->gpus_near < r->gpus))
      rc = GR_EXIT_WARN;
  }
  return rc;
}
