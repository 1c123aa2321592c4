/* gpurig-mpi bench --mpi: the only file that calls MPI. Every rank runs
 * the same collectives in the same order whatever failed on it (a failure
 * travels as a flag), so no rank waits for one that gave up. What a rank
 * measures and checks, and the report, are MPI-free (gpu/bench_mpi.h,
 * print/bench_mpi.h). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "gpu/bench_mpi.h"
#include "print/bench_mpi.h"

struct mpi_run {
  const struct cli_bench_opts *o;
  const struct gr_bench_config *cfg;
  int rank, size, local_rank, local_size;
  struct gr_machine m;
  bool have_topo;
  const struct gr_bench_backend *be;
  void *st;
  struct gr_bench_facts facts;
  int devs[64], ndev;
  struct gr_mpi_rank me;
  struct gr_mpi_report rep;
};

/* true on every rank when every rank's ok is true */
static bool all_ok(bool ok)
{
  int mine = ok, all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all != 0;
}

static void fail(struct mpi_run *r, const char *what)
{
  if (!r->me.error[0]) { /* cut to the record's fixed size */
    size_t n = strnlen(what, sizeof(r->me.error) - 1);
    memcpy(r->me.error, what, n);
    r->me.error[n] = '\0';
  }
}

/* This rank's GPUs: its local rank's one, or all of the node's. */
static void pick_devs(struct mpi_run *r, bool per_node)
{
  char why[160];
  int n = r->be->device_count(r->st);
  if (per_node && r->local_size > 1) {
    snprintf(why, sizeof(why), "--per node wants one rank per node, this node has %d (mpirun --map-by ppr:1:node)",
             r->local_size);
    return fail(r, why);
  }
  if (!per_node && r->local_rank >= n) {
    snprintf(why, sizeof(why), "local rank %d, but this node has %d GPU%s: start at most one rank per GPU",
             r->local_rank, n, n == 1 ? "" : "s");
    return fail(r, why);
  }
  for (int i = 0; i < (per_node ? n : 1) && r->ndev < 64; i++)
    r->devs[r->ndev++] = per_node ? i : r->local_rank;
  if (!r->be->unique_id || !r->be->allreduce_open_ranks)
    fail(r, "this GPU vendor's backend cannot all-reduce across processes");
}

static void open_local(struct mpi_run *r, bool per_node)
{
  struct gr_err err = {0};
  struct gr_source src = cli_source_of(&r->o->src, false);
  if (cli_open_for_gpus(&src, &r->m, &r->have_topo, &err) != 0 || gr_bench_open(&r->be, &r->st, &err) != 0) {
    fail(r, err.msg);
    return;
  }
  gr_bench_facts_read(r->be, r->st, &r->facts);
  pick_devs(r, per_node);
  r->me.ndev = r->ndev;
  /* the node's checks even when this rank cannot join: they may say why */
  gr_mpi_rank_fill(&r->me, &r->m, r->have_topo, &r->facts, r->devs, r->ndev, r->local_rank == 0);
  if (r->ndev > 0)
    r->be->device_busid(r->st, r->devs[0], r->me.gpu, sizeof(r->me.gpu));
}

/* The largest size: --allreduce-max (or 64 MiB with --quick, 1 GiB else),
 * capped on every rank by a quarter of its GPUs' free memory. */
static size_t largest(struct mpi_run *r)
{
  unsigned long long want = r->cfg->ar_max_bytes, all = 0;
  if (r->cfg->quick && !r->o->allreduce_max && want > GR_MPI_QUICK_MAX)
    want = GR_MPI_QUICK_MAX;
  for (int k = 0; k < r->ndev && r->be->free_bytes; k++) {
    size_t fr = r->be->free_bytes(r->st, r->devs[k]);
    if (fr > 0 && fr / 4 < want)
      want = fr / 4;
  }
  MPI_Allreduce(&want, &all, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
  size_t p = 1;
  while (p * 2 <= all)
    p *= 2;
  return p;
}

/* Rank 0's NCCL unique id to every rank, then every rank's communicator. */
static bool join(struct mpi_run *r, size_t max)
{
  char id[1 + GR_BENCH_UNIQUE_ID_BYTES] = {0}, why[512] = "";
  int first = 0, total = 0;
  MPI_Exscan(&r->ndev, &first, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (r->rank == 0)
    first = 0; /* MPI_Exscan leaves rank 0's undefined */
  MPI_Allreduce(&r->ndev, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  r->me.nccl_first = first;
  r->rep.nccl_ranks = total;
  if (r->rank == 0) {
    id[0] = r->be->unique_id(r->st, id + 1, why, sizeof(why)) == 0;
    if (!id[0])
      fail(r, why);
  }
  MPI_Bcast(id, (int)sizeof(id), MPI_CHAR, 0, MPI_COMM_WORLD);
  if (!id[0]) {
    snprintf(r->rep.note, sizeof(r->rep.note), "not run: rank 0 could not make NCCL's unique id");
    return false;
  }
  if (r->be->allreduce_open_ranks(r->st, max, id + 1, total, first, r->devs, r->ndev, why, sizeof(why)) != 0)
    fail(r, why);
  if (!all_ok(!r->me.error[0])) {
    snprintf(r->rep.note, sizeof(r->rep.note), "not run: a rank could not join the communicator (its line says why)");
    return false;
  }
  const char *cn = r->be->collective_name(r->st);
  snprintf(r->rep.collective, sizeof(r->rep.collective), "%s", cn && *cn ? cn : r->be->collective);
  return true;
}

static void sweep(struct mpi_run *r, size_t max)
{
  size_t sizes[GR_MPI_MAX_SIZES];
  int n = gr_mpi_sizes(max, r->cfg->quick, sizes);
  for (int k = 0; k < n; k++) {
    struct gr_ar_sample s = {0};
    MPI_Barrier(MPI_COMM_WORLD); /* all ranks start each size together, so no rank times another's lateness */
    struct gr_ar_spec spec = {.bytes = sizes[k], .warmup = r->cfg->quick ? 1 : 2,
                              .iters = gr_mpi_iters(sizes[k], r->cfg->quick)};
    int bad = r->be->allreduce(r->st, &spec, &s);
    double t = bad ? 0 : s.seconds, sum = 0, worst = 0;
    long wrong = 0;
    if (bad)
      fail(r, r->be->last_error(r->st));
    if (!all_ok(!bad)) {
      snprintf(r->rep.note, sizeof(r->rep.note), "the all-reduce failed at %zu bytes (the rank's line says why)",
               sizes[k]);
      return;
    }
    MPI_Allreduce(&t, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&t, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(&s.wrong, &wrong, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    struct gr_mpi_row *w = &r->rep.rows[r->rep.nrows++];
    double avg = sum / r->size;
    w->bytes = sizes[k];
    w->avg_us = avg * 1e6;
    w->max_us = worst * 1e6;
    w->algbw_gbps = avg > 0 ? (double)sizes[k] / avg / 1e9 : 0;
    w->busbw_gbps = w->algbw_gbps * gr_allreduce_busbw_factor(r->rep.nccl_ranks);
    w->wrong = wrong;
    r->me.largest_us = t * 1e6;
  }
}

/* Rank 0 gathers every rank's record and prints; every rank returns its exit status. */
static int gather_report(struct mpi_run *r)
{
  struct gr_mpi_rank *all = r->rank == 0 ? xcalloc((size_t)r->size, sizeof(*all)) : NULL;
  int rc = GR_EXIT_OK;
  MPI_Gather(&r->me, (int)sizeof(r->me), MPI_BYTE, all, (int)sizeof(r->me), MPI_BYTE, 0, MPI_COMM_WORLD);
  if (r->rank == 0) {
    r->rep.ranks = all;
    gr_mpi_report_finish(&r->rep);
    if (r->o->out.json)
      cli_print_json(gr_bench_mpi_to_json(&r->rep));
    else
      gr_print_bench_mpi(stdout, &r->rep);
    fflush(stdout);
    rc = gr_findings_exit(&r->rep.findings);
    gr_mpi_report_free(&r->rep);
  }
  MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
  free(all);
  return rc;
}

int cmd_bench_mpi(const struct cli_bench_opts *o, const struct gr_bench_config *cfg)
{
  struct mpi_run *r;
  MPI_Comm local;
  bool per_node = o->per && strcmp(o->per, "node") == 0;
  if (o->per && !per_node && strcmp(o->per, "gpu") != 0) {
    gr_diag("gpurig: bench: --per '%s': expected gpu or node\n", o->per);
    return GR_EXIT_FAIL;
  }
  if (MPI_Init(NULL, NULL) != MPI_SUCCESS) {
    gr_diag("gpurig: bench --mpi: MPI_Init failed: start it with mpirun or srun\n");
    return GR_EXIT_CANNOT_RUN;
  }
  r = xcalloc(1, sizeof(*r));
  r->o = o;
  r->cfg = cfg;
  r->rep.per_node = per_node;
  MPI_Comm_rank(MPI_COMM_WORLD, &r->rank);
  MPI_Comm_size(MPI_COMM_WORLD, &r->size);
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, r->rank, MPI_INFO_NULL, &local);
  MPI_Comm_rank(local, &r->local_rank);
  MPI_Comm_size(local, &r->local_size);
  MPI_Comm_free(&local);
  r->me.rank = r->rank;
  r->me.local_rank = r->local_rank;
  gethostname(r->me.host, sizeof(r->me.host) - 1);
  r->rep.nranks = r->size;
  snprintf(r->rep.collective, sizeof(r->rep.collective), "NCCL");
  open_local(r, per_node);
  if (all_ok(!r->me.error[0])) {
    size_t max = largest(r);
    if (max < GR_BENCH_AR_MIN_BYTES)
      snprintf(r->rep.note, sizeof(r->rep.note), "not run: too little free GPU memory on a rank");
    else if (join(r, max))
      sweep(r, max);
  } else
    snprintf(r->rep.note, sizeof(r->rep.note), "not run: a rank could not start (its line says why)");
  int rc = gather_report(r);
  if (r->st)
    r->be->shutdown(r->st); /* before MPI_Finalize: NCCL's communicators go first */
  gr_bench_facts_free(&r->facts);
  gr_machine_close(&r->m);
  free(r);
  MPI_Finalize();
  return rc;
}
