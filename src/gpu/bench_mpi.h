/* gpurig-mpi bench --mpi, its MPI-free half: what one rank measures and
 * checks, in a fixed-size record every rank sends to rank 0 (the MPI calls
 * live in cli/mpi_bench.c alone), and the report rank 0 makes of them.
 *
 * Ownership: a rank's record is plain data, no pointers to free, so it
 * travels as bytes; the report owns its findings (gr_mpi_report_free). */
#ifndef GPURIG_BENCH_MPI_H
#define GPURIG_BENCH_MPI_H

#include <stdbool.h>
#include <stddef.h>

#include "analysis/machine.h"
#include "gpu/bench.h"

#define GR_MPI_MAX_SIZES 24     /* all-reduce sizes in one sweep */
#define GR_MPI_QUICK_MAX ((size_t)64 << 20) /* --quick: the largest all-reduce */

/* One rank, as it sends it to rank 0. The node checks are filled on each
 * node's local rank 0 only (node_checked). */
struct gr_mpi_rank {
  char host[64];
  int rank, local_rank, nccl_first, ndev; /* its NCCL ranks: nccl_first .. + ndev - 1 */
  char gpu[32];                 /* its GPU with the slowest link, "0000:41:00.0" */
  int gen, width, cur_width;    /* that link: best generation and width, the width it trains to now; 0 unknown */
  double link_gbps;             /* per direction at the best generation and the current width, 0 unknown */
  double largest_us;            /* its own time for the largest all-reduce */
  char error[256];              /* why this rank could not join, "" if it did */
  bool node_checked;
  int peermem;                  /* /sys/module/nvidia_peermem: 1 loaded, 0 not, -1 not this machine */
  int nics, nics_rdma, nics_near; /* NICs; able to do RDMA; of those, within PIX/PXB of a GPU */
  int gpus, gpus_near;          /* the topology's GPUs; of those, with an RDMA NIC within PIX/PXB */
  int nics_known;               /* 1: the topology was read, else the NIC counts are unknown */
};

struct gr_mpi_row {
  size_t bytes;
  double avg_us, max_us;        /* per all-reduce, over the ranks */
  double algbw_gbps, busbw_gbps; /* from the average, as nccl-tests' default (-a 1) */
  long wrong;                   /* result words not equal to the sum, all ranks */
};

struct gr_mpi_report {
  int nranks, nccl_ranks, nnodes;
  bool per_node;                /* one rank per node, else per GPU */
  char collective[48];
  struct gr_mpi_row rows[GR_MPI_MAX_SIZES];
  int nrows;
  char note[256];               /* why the sweep stopped or did not run, "" if it ran */
  const struct gr_mpi_rank *ranks; /* nranks, borrowed */
  int slowest_node;             /* index in ranks of that node's local rank 0, -1 none */
  int slowest_link;             /* index in ranks, -1 none */
  struct gr_findings findings;  /* gr_mpi_report_finish's: wrong sums, ranks that failed, node warnings */
};

/* This rank's GPU link facts (the slowest of devs) and, when check_node,
 * the node's checks: NICs from the machine's topology (m may lack one:
 * have_topo false) and nvidia_peermem under its root prefix. */
void gr_mpi_rank_fill(struct gr_mpi_rank *r, const struct gr_machine *m, bool have_topo,
                      const struct gr_bench_facts *f, const int *devs, int ndev, bool check_node);

/* The sizes of a sweep up to max (bytes, at most GR_MPI_MAX_SIZES): 64 KiB
 * times 4 with quick, 4 KiB times 2 else; the largest always runs. Returns
 * how many. */
int gr_mpi_sizes(size_t max, bool quick, size_t *sizes);
/* Timed iterations for one size (as bench's sweep). */
int gr_mpi_iters(size_t bytes, bool quick);

/* Names the slowest node and link in rep from rep->ranks, and makes the
 * report's findings (replacing earlier ones): failures (wrong sums, a rank
 * that could not start or join), warnings (the sweep did not run, a link
 * below its width, peermem missing beside an RDMA NIC, no RDMA NIC near a
 * GPU). gr_findings_exit(&rep->findings) is the exit status. */
void gr_mpi_report_finish(struct gr_mpi_report *rep);
void gr_mpi_report_free(struct gr_mpi_report *rep);

#endif
