/* Stand-in for NVIDIA's NCCL (built as libnccl.so.2) so gpurig's all-reduce
 * benchmark can be tested without a GPU; see README.md. Not NVIDIA code:
 * names and types follow src/vendor/nvidia/nv_api.h.
 *
 * Only float32 sum all-reduce. Inside a group (per thread, as in NCCL) the
 * calls are queued, up to 64 in all (one queue, each entry marked with its
 * thread); the outermost ncclGroupEnd runs that thread's: the data is summed
 * on the calling thread and the streams' virtual clocks (struct CUstream_st
 * of stub.h, made by the CUDA stub) move to the common end time. This
 * library never calls the CUDA stub. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vendor/nvidia/nv_api.h"
#include "stub.h"

enum {
  NCCL_OK = 0,
  NCCL_CUDA_ERROR = 1,
  NCCL_SYSTEM_ERROR = 2,
  NCCL_INTERNAL_ERROR = 3,
  NCCL_INVALID_ARGUMENT = 4,
  NCCL_INVALID_USAGE = 5,
  NCCL_MAX_QUEUED = 64,
};

#define NCCL_BASE_LATENCY 10e-6 /* seconds per all-reduce */
#define NCCL_BUS_GBS 18.0       /* ring bus bandwidth, GB/s */

struct ncclComm {
  int rank, nranks, dev;
  unsigned long long clique; /* shared by the comms of one ncclCommInitAll */
};

struct queued {
  const void *send;
  void *recv;
  size_t count;
  struct ncclComm *comm;
  struct CUstream_st *stream;
  pthread_t owner;
  int done;
  int stall; /* "burn-stall": the STUB_STALL_CALL-th call of the process */
};

/* Exported functions (prototypes for -Wmissing-prototypes). */
gr_nccl_result ncclGetVersion(int *version);
const char *ncclGetErrorString(gr_nccl_result result);
gr_nccl_result ncclCommInitAll(gr_nccl_comm *comms, int ndev, const int *devlist);
gr_nccl_result ncclCommDestroy(gr_nccl_comm comm);
gr_nccl_result ncclGroupStart(void);
gr_nccl_result ncclGroupEnd(void);
gr_nccl_result ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count, unsigned int datatype,
                             unsigned int op, gr_nccl_comm comm, gr_cu_stream stream);

/* Each export must match the pointer type gpurig stores it in. */
#define STUB_CHECK(fn, pfn) _Static_assert(_Generic(&fn, pfn: 1, default: 0), #fn " does not match " #pfn)
STUB_CHECK(ncclGetVersion, gr_pfn_ncclGetVersion);
STUB_CHECK(ncclGetErrorString, gr_pfn_ncclGetErrorString);
STUB_CHECK(ncclCommInitAll, gr_pfn_ncclCommInitAll);
STUB_CHECK(ncclCommDestroy, gr_pfn_ncclCommDestroy);
STUB_CHECK(ncclGroupStart, gr_pfn_ncclGroupStart);
STUB_CHECK(ncclGroupEnd, gr_pfn_ncclGroupEnd);
STUB_CHECK(ncclAllReduce, gr_pfn_ncclAllReduce);

static atomic_ullong next_clique = 1;
static STUB_TLS int group_depth;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER; /* guards the queue */
static int nqueued;
static struct queued queue[NCCL_MAX_QUEUED];
static atomic_uint allreduce_calls; /* accepted ncclAllReduce calls of the process */

gr_nccl_result ncclGetVersion(int *version)
{
  if (!version)
    return NCCL_INVALID_ARGUMENT;
  *version = 22105; /* 2.21.5 */
  return NCCL_OK;
}

const char *ncclGetErrorString(gr_nccl_result result)
{
  switch (result) {
  case NCCL_OK:
    return "no error";
  case NCCL_CUDA_ERROR:
    return "unhandled cuda error";
  case NCCL_SYSTEM_ERROR:
    return "unhandled system error";
  case NCCL_INTERNAL_ERROR:
    return "internal error";
  case NCCL_INVALID_ARGUMENT:
    return "invalid argument";
  case NCCL_INVALID_USAGE:
    return "invalid usage";
  default:
    return "unknown result code";
  }
}

gr_nccl_result ncclCommInitAll(gr_nccl_comm *comms, int ndev, const int *devlist)
{
  if (stub_scenario_is("ncclfail"))
    return NCCL_SYSTEM_ERROR;
  if (!comms || ndev < 1)
    return NCCL_INVALID_ARGUMENT;
  for (int i = 0; i < ndev; i++) {
    int dev = devlist ? devlist[i] : i;
    if (!stub_gpu(dev)) /* no such GPU: NCCL's device check, or cudaSetDevice failing */
      return devlist ? NCCL_INVALID_ARGUMENT : NCCL_CUDA_ERROR;
    for (int j = 0; j < i; j++)
      if (devlist && devlist[j] == dev)
        return NCCL_INVALID_USAGE; /* one GPU twice in a communicator */
  }
  unsigned long long clique = atomic_fetch_add(&next_clique, 1);
  for (int i = 0; i < ndev; i++) {
    struct ncclComm *c = malloc(sizeof(*c));
    if (!c) {
      while (i-- > 0) {
        free(comms[i]);
        comms[i] = NULL;
      }
      return NCCL_SYSTEM_ERROR;
    }
    *c = (struct ncclComm){i, ndev, devlist ? devlist[i] : i, clique};
    comms[i] = c;
  }
  return NCCL_OK;
}

gr_nccl_result ncclCommDestroy(gr_nccl_comm comm)
{
  free(comm);
  return NCCL_OK;
}

gr_nccl_result ncclGroupStart(void)
{
  group_depth++;
  return NCCL_OK;
}

/* Runs the all-reduces at ops[idx[0..n-1]], ranks 0..n-1 of one
 * communicator with one count: sums into a temporary first, so send may be
 * recv, then moves every stream to the common end time. */
static gr_nccl_result run_allreduce(const struct queued *ops, const int *idx, int n)
{
  size_t count = ops[idx[0]].count;
  float *sum = NULL;
  if (count) {
    sum = malloc(count * sizeof(float));
    if (!sum)
      return NCCL_SYSTEM_ERROR;
    memcpy(sum, ops[idx[0]].send, count * sizeof(float));
    for (int r = 1; r < n; r++) {
      const unsigned char *src = ops[idx[r]].send;
      for (size_t i = 0; i < count; i++) {
        float v;
        memcpy(&v, src + i * sizeof(float), sizeof(v));
        sum[i] += v;
      }
    }
    for (int r = 0; r < n; r++)
      memcpy(ops[idx[r]].recv, sum, count * sizeof(float));
    free(sum);
  }
  double end = 0;
  int stall = 0;
  for (int r = 0; r < n; r++) {
    struct CUstream_st *s = ops[idx[r]].stream;
    if (!stub_stream_is_default(s) && s->clock > end)
      end = s->clock;
    stall |= ops[idx[r]].stall;
  }
  double took = NCCL_BASE_LATENCY + 2.0 * (n - 1) / n * (double)count * sizeof(float) / (NCCL_BUS_GBS * 1e9);
  end += stall ? STUB_STALL_FACTOR * took : took; /* the stalled one: 49 x its time again */
  for (int r = 0; r < n; r++) {
    struct CUstream_st *s = ops[idx[r]].stream;
    if (!stub_stream_is_default(s))
      s->clock = end;
  }
  return NCCL_OK;
}

/* Matches ops[0..nops-1] into collectives: the k-th call of each rank of
 * a communicator belong together. Every rank must be there with the same
 * count, else nothing runs (invalid usage). */
static gr_nccl_result run_ops(struct queued *ops, int nops)
{
  int sets[NCCL_MAX_QUEUED][NCCL_MAX_QUEUED];
  int nsets = 0;
  for (int i = 0; i < nops; i++)
    ops[i].done = 0;
  for (int i = 0; i < nops; i++) {
    if (ops[i].done)
      continue;
    const struct ncclComm *c = ops[i].comm;
    int *set = sets[nsets++];
    if (c->nranks > NCCL_MAX_QUEUED)
      return NCCL_INVALID_USAGE;
    for (int r = 0; r < c->nranks; r++)
      set[r] = -1;
    for (int j = i; j < nops; j++) {
      const struct ncclComm *o = ops[j].comm;
      if (ops[j].done || o->clique != c->clique || set[o->rank] >= 0)
        continue;
      set[o->rank] = j;
      ops[j].done = 1;
    }
    for (int r = 0; r < c->nranks; r++)
      if (set[r] < 0 || ops[set[r]].count != ops[i].count)
        return NCCL_INVALID_USAGE;
  }
  for (int k = 0; k < nsets; k++) {
    gr_nccl_result r = run_allreduce(ops, sets[k], ops[sets[k][0]].comm->nranks);
    if (r != NCCL_OK)
      return r;
  }
  return NCCL_OK;
}

gr_nccl_result ncclGroupEnd(void)
{
  struct queued mine[NCCL_MAX_QUEUED];
  int nmine = 0, kept = 0;
  if (group_depth <= 0)
    return NCCL_INVALID_USAGE;
  if (--group_depth > 0)
    return NCCL_OK;
  pthread_mutex_lock(&lock);
  for (int i = 0; i < nqueued; i++)
    if (pthread_equal(queue[i].owner, pthread_self()))
      mine[nmine++] = queue[i];
    else
      queue[kept++] = queue[i];
  nqueued = kept;
  gr_nccl_result r = run_ops(mine, nmine);
  pthread_mutex_unlock(&lock);
  return r;
}

/* Counts an accepted ncclAllReduce call (run, or queued in a group); whether
 * it is the STUB_STALL_CALL-th of the process under "burn-stall", which
 * makes the all-reduce holding it stall. */
static int stall_call(void)
{
  unsigned call = atomic_fetch_add(&allreduce_calls, 1u) + 1;
  return call == STUB_STALL_CALL && stub_scenario_is("burn-stall");
}

gr_nccl_result ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count, unsigned int datatype,
                             unsigned int op, gr_nccl_comm comm, gr_cu_stream stream)
{
  if (!comm || datatype != GR_NCCL_FLOAT32 || op != GR_NCCL_SUM || count > SIZE_MAX / sizeof(float))
    return NCCL_INVALID_ARGUMENT;
  if (count && (!sendbuff || !recvbuff))
    return NCCL_INVALID_ARGUMENT;
  if (!stub_stream_is_default(stream) && (stream->magic != STUB_STREAM_MAGIC || stream->dev != comm->dev))
    return NCCL_INVALID_ARGUMENT; /* not a live stream of the communicator's GPU */
  struct queued q = {sendbuff, recvbuff, count, comm, stream, pthread_self(), 0, 0};
  gr_nccl_result r = NCCL_OK;
  if (group_depth == 0) {
    int only = 0;
    if (comm->nranks > 1)
      return NCCL_INVALID_USAGE; /* would wait for the other ranks forever */
    q.stall = stall_call();
    pthread_mutex_lock(&lock);
    r = run_allreduce(&q, &only, 1);
    pthread_mutex_unlock(&lock);
    return r;
  }
  pthread_mutex_lock(&lock);
  if (nqueued < NCCL_MAX_QUEUED) {
    q.stall = stall_call();
    queue[nqueued++] = q;
  }
  else
    r = NCCL_INVALID_USAGE;
  pthread_mutex_unlock(&lock);
  return r;
}
