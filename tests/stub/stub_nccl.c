/* Stand-in for NVIDIA's NCCL (built as libnccl.so.2) so gpurig's all-reduce
 * benchmark can be tested without a GPU; see README.md. Not NVIDIA code:
 * names and types follow src/backends/nvidia/nv_api.h.
 *
 * Only float32 sum all-reduce. Inside a group (per thread, as in NCCL) the
 * calls are queued, up to 64 in all (one queue, each entry marked with its
 * thread); the outermost ncclGroupEnd runs that thread's: the data is summed
 * on the calling thread and the streams' virtual clocks (struct CUstream_st
 * of stub.h, made by the CUDA stub) move to the common end time. This
 * library never calls the CUDA stub.
 *
 * Across processes (ncclGetUniqueId + ncclCommInitRank, as gpurig-mpi bench
 * --mpi uses): the unique id names a fresh directory under $TMPDIR (or /tmp);
 * the k-th all-reduce of rank r writes its send buffer, count and stream
 * clock to a file there (written whole, then renamed into place), reads
 * every rank's file of that call (waiting up to NET_WAIT_S, else a system
 * error), sums in rank order and moves its stream to the latest clock plus
 * the time the ring takes at NCCL_NET_GBS. A rank deletes its file of call k
 * once every rank has written call k + 1 (so all have read k); rank 0's
 * ncclCommDestroy waits for every rank's "fin" file and removes the
 * directory. Nothing leaves the machine. */
/* Built twice: as libnccl.so.2 on the CUDA stand-in's streams, and with
 * STUB_RCCL as librccl.so.1 (RCCL: NCCL's API, AMD's library) on the HIP
 * stand-in's, which have the same layout under HIP's tag; the GPUs are then
 * stub_amd.h's, every pair with peer access. */
#ifdef STUB_RCCL
#define CUstream_st ihipStream_t
#endif
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "backends/nvidia/nv_api.h"
#include "stub.h"
#ifdef STUB_RCCL
#include "stub_amd.h"
#define STUB_CCL_VERSION 21803 /* RCCL 2.18.3 (ROCm 6.0) */
#define STUB_CCL_VERSION_LINE "NCCL version 2.18.3+hip6.0"
#define NCCL_BUS_GBS (stub_amd_machine()->xgmi_ring ? 60.0 : 18.0) /* ring bus bandwidth, GB/s: the bridge's rings, or PCIe */
static int ccl_gpu(int dev) /* the GPUs of the HIP stand-in's machine */
{
  return dev >= 0 && dev < stub_amd_count();
}
static int ccl_peer(int a, int b)
{
  return a != b && ccl_gpu(a) && ccl_gpu(b);
}
#else
#define STUB_CCL_VERSION 22105 /* 2.21.5 */
#define STUB_CCL_VERSION_LINE "NCCL version 2.21.5+cuda12.4"
#define NCCL_BUS_GBS 18.0 /* ring bus bandwidth, GB/s */
static int ccl_gpu(int dev)
{
  return stub_gpu(dev) != NULL;
}
static int ccl_peer(int a, int b)
{
  return a != b && stub_same_bridge(a, b);
}
#endif

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
#define NCCL_NET_GBS 11.0       /* across processes: a 100 Gb/s NIC's bus bandwidth, GB/s */
#define NET_WAIT_S 60           /* a rank waits this long for the others' files */
#define NET_ID_PREFIX "gpurig-stub-nccl:"
#define NET_MAGIC 0x6e63636cu

struct ncclComm {
  int rank, nranks, dev;      /* dev -1: set by the first stream given (ncclCommInitRank) */
  unsigned long long clique; /* shared by the comms of one ncclCommInitAll */
  char dir[96];               /* across processes: the rendezvous directory, "" otherwise */
  unsigned long seq;          /* across processes: all-reduces called so far */
};

struct net_header {
  unsigned magic;
  int rank;
  size_t count;
  double clock;
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
gr_nccl_result ncclGetUniqueId(gr_nccl_unique_id *id);
gr_nccl_result ncclCommInitRank(gr_nccl_comm *comm, int nranks, gr_nccl_unique_id id, int rank);
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
STUB_CHECK(ncclGetUniqueId, gr_pfn_ncclGetUniqueId);
STUB_CHECK(ncclCommInitRank, gr_pfn_ncclCommInitRank);
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
  /* nccl-2.18: a node whose NCCL is older than its fleet's (gpurig fleet);
   * tinybox-red-rccl-2.20: one whose RCCL is newer (2.20.5, ROCm 6.2's) */
  *version = STUB_CCL_VERSION;
#ifdef STUB_RCCL
  if (strcmp(stub_scenario(), "tinybox-red-rccl-2.20") == 0)
    *version = 22005;
#else
  if (strcmp(stub_scenario(), "nccl-2.18") == 0)
    *version = 21805; /* 2.18.5 */
#endif
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

/* NCCL_DEBUG=INFO with NCCL_DEBUG_FILE: the log real NCCL 2.2x writes at
 * ncclCommInitAll, reduced to a few lines of noise and the ring's channel
 * lines, two channels, rank r -> r + 1: "P2P/direct pointer" (one process)
 * where the CUDA stand-in gives peer access, "SHM/direct/direct" where it
 * does not. The file name is taken as is (real NCCL expands %h and %p). */
static void debug_log(const struct ncclComm *const *comms, int ndev)
{
  const char *level = getenv("NCCL_DEBUG"), *file = getenv("NCCL_DEBUG_FILE");
  if (!level || strcasecmp(level, "INFO") != 0 || !file || !*file)
    return;
  FILE *f = fopen(file, "w");
  if (!f)
    return;
  int pid = (int)getpid();
  fprintf(f, "stubhost:%d:%d [0] NCCL INFO Bootstrap : Using lo:127.0.0.1<0>\n", pid, pid);
  fprintf(f, "stubhost:%d:%d [0] NCCL INFO " STUB_CCL_VERSION_LINE "\n", pid, pid);
  for (int i = 0; i < ndev; i++)
    fprintf(f, "stubhost:%d:%d [%d] NCCL INFO comm %p rank %d nRanks %d nNodes 1 localRanks %d localRank %d\n", pid,
            pid, comms[i]->dev, (const void *)comms[i], i, ndev, ndev, i);
  for (int ch = 0; ch < 2; ch++) {
    fprintf(f, "stubhost:%d:%d [0] NCCL INFO Channel %02d/02 :", pid, pid, ch);
    for (int i = 0; i < ndev; i++)
      fprintf(f, " %d", i);
    fprintf(f, "\n");
  }
  for (int ch = 0; ch < 2 && ndev > 1; ch++)
    for (int i = 0; i < ndev; i++) {
      int j = (i + 1) % ndev, a = comms[i]->dev, b = comms[j]->dev;
      int peer = ccl_peer(a, b);
      fprintf(f, "stubhost:%d:%d [%d] NCCL INFO Channel %02d/0 : %d[%d] -> %d[%d] via %s\n", pid, pid, a, ch, i, a, j,
              b, peer ? "P2P/direct pointer" : "SHM/direct/direct");
    }
  fprintf(f, "stubhost:%d:%d [0] NCCL INFO Connected all rings\n", pid, pid);
  fprintf(f, "stubhost:%d:%d [0] NCCL INFO ncclCommInitAll comm %p nranks %d - Init COMPLETE\n", pid, pid,
          (const void *)comms[0], ndev);
  fclose(f);
}

/* GPURIG_STUB_NCCL_INIT_S=N (whole seconds, at most 60): ncclCommInitAll
 * takes that long before it answers, so that a test can signal gpurig while
 * NCCL starts (tests/robust, REL-09); a signal that has a handler ends the
 * wait early, as it ends a real one's system call. */
static void init_delay(void)
{
  const char *e = getenv("GPURIG_STUB_NCCL_INIT_S");
  long sec = e && *e ? strtol(e, NULL, 10) : 0;
  struct timespec ts = {sec > 0 && sec <= 60 ? sec : 0, 0};
  if (ts.tv_sec)
    nanosleep(&ts, NULL);
}

gr_nccl_result ncclCommInitAll(gr_nccl_comm *comms, int ndev, const int *devlist)
{
  init_delay();
  if (stub_scenario_is("ncclfail"))
    return NCCL_SYSTEM_ERROR;
  if (!comms || ndev < 1)
    return NCCL_INVALID_ARGUMENT;
  for (int i = 0; i < ndev; i++) {
    int dev = devlist ? devlist[i] : i;
    if (!ccl_gpu(dev)) /* no such GPU: NCCL's device check, or cudaSetDevice failing */
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
    *c = (struct ncclComm){.rank = i, .nranks = ndev, .dev = devlist ? devlist[i] : i, .clique = clique};
    comms[i] = c;
  }
  debug_log((const struct ncclComm *const *)comms, ndev);
  return NCCL_OK;
}

/* ------------------------------------------------ across processes */

gr_nccl_result ncclGetUniqueId(gr_nccl_unique_id *id)
{
  const char *tmp = getenv("TMPDIR");
  char dir[96];
  if (!id)
    return NCCL_INVALID_ARGUMENT;
  if (snprintf(dir, sizeof(dir), "%s/gpurig-nccl-XXXXXX", tmp && *tmp ? tmp : "/tmp") >= (int)sizeof(dir) ||
      !mkdtemp(dir))
    return NCCL_SYSTEM_ERROR;
  memset(id, 0, sizeof(*id));
  snprintf(id->internal, sizeof(id->internal), "%s%s", NET_ID_PREFIX, dir);
  return NCCL_OK;
}

gr_nccl_result ncclCommInitRank(gr_nccl_comm *comm, int nranks, gr_nccl_unique_id id, int rank)
{
  struct stat st;
  const char *dir = id.internal + strlen(NET_ID_PREFIX);
  if (stub_scenario_is("ncclfail")) {
    if (rank == 0 && strncmp(id.internal, NET_ID_PREFIX, strlen(NET_ID_PREFIX)) == 0)
      rmdir(dir); /* empty yet: no rank will destroy a communicator */
    return NCCL_SYSTEM_ERROR;
  }
  if (!comm || nranks < 1 || rank < 0 || rank >= nranks || id.internal[sizeof(id.internal) - 1] != '\0' ||
      strncmp(id.internal, NET_ID_PREFIX, strlen(NET_ID_PREFIX)) != 0 || strlen(dir) >= sizeof((*comm)->dir))
    return NCCL_INVALID_ARGUMENT;
  if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
    return NCCL_SYSTEM_ERROR; /* another machine's id: this stand-in meets on one machine only */
  struct ncclComm *c = calloc(1, sizeof(*c));
  if (!c)
    return NCCL_SYSTEM_ERROR;
  c->rank = rank;
  c->nranks = nranks;
  c->dev = -1;
  c->clique = atomic_fetch_add(&next_clique, 1);
  snprintf(c->dir, sizeof(c->dir), "%s", dir);
  *comm = c;
  return NCCL_OK;
}

static void net_path(const struct ncclComm *c, unsigned long seq, int rank, char *buf, size_t cap)
{
  snprintf(buf, cap, "%s/s%lu.r%d", c->dir, seq, rank);
}

static int write_all(int fd, const void *p, size_t n)
{
  const char *b = p;
  while (n > 0) {
    ssize_t w = write(fd, b, n);
    if (w <= 0)
      return -1;
    b += w;
    n -= (size_t)w;
  }
  return 0;
}

static int read_all(int fd, void *p, size_t n)
{
  char *b = p;
  while (n > 0) {
    ssize_t r = read(fd, b, n);
    if (r <= 0)
      return -1;
    b += r;
    n -= (size_t)r;
  }
  return 0;
}

/* Publishes op's send buffer as the comm's next call. */
static gr_nccl_result net_publish(const struct queued *op)
{
  char path[160], tmp[176];
  double clock = stub_stream_is_default(op->stream) ? 0 : op->stream->clock;
  struct net_header h = {NET_MAGIC, op->comm->rank, op->count, clock};
  net_path(op->comm, op->comm->seq, op->comm->rank, path, sizeof(path));
  snprintf(tmp, sizeof(tmp), "%s.tmp", path);
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0)
    return NCCL_SYSTEM_ERROR;
  int bad = write_all(fd, &h, sizeof(h)) != 0 || write_all(fd, op->send, op->count * sizeof(float)) != 0;
  bad |= close(fd) != 0;
  if (bad || rename(tmp, path) != 0) {
    unlink(tmp);
    return NCCL_SYSTEM_ERROR;
  }
  return NCCL_OK;
}

static double now_s(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Opens rank r's file of call seq, waiting for it up to the deadline. */
static int net_open(const struct ncclComm *c, unsigned long seq, int r, double deadline)
{
  char path[160];
  net_path(c, seq, r, path, sizeof(path));
  for (;;) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0 || now_s() > deadline)
      return fd;
    struct timespec nap = {0, 200000}; /* 0.2 ms */
    nanosleep(&nap, NULL);
  }
}

/* Adds rank r's buffer of this call into sum (count floats; the first
 * rank's is copied). The latest clock goes to *clock. */
static gr_nccl_result net_add(const struct queued *op, int r, float *sum, float *chunk, double *clock, double deadline)
{
  struct net_header h;
  int fd = net_open(op->comm, op->comm->seq, r, deadline);
  gr_nccl_result rc = NCCL_OK;
  if (fd < 0)
    return NCCL_SYSTEM_ERROR; /* that rank never came */
  if (read_all(fd, &h, sizeof(h)) != 0 || h.magic != NET_MAGIC || h.rank != r)
    rc = NCCL_SYSTEM_ERROR;
  else if (h.count != op->count)
    rc = NCCL_INVALID_USAGE; /* ranks disagree on the size */
  for (size_t done = 0; rc == NCCL_OK && done < op->count;) {
    size_t n = op->count - done < 65536 ? op->count - done : 65536;
    if (read_all(fd, chunk, n * sizeof(float)) != 0)
      rc = NCCL_SYSTEM_ERROR;
    for (size_t i = 0; rc == NCCL_OK && i < n; i++)
      sum[done + i] = r == 0 ? chunk[i] : sum[done + i] + chunk[i];
    done += n;
  }
  close(fd);
  if (h.clock > *clock)
    *clock = h.clock;
  return rc;
}

/* Reads every rank's file of op's call, sums, and ends the call. */
static gr_nccl_result net_collect(const struct queued *op)
{
  struct ncclComm *c = op->comm;
  int n = c->nranks;
  double clock = 0, deadline = now_s() + NET_WAIT_S;
  float *sum = malloc(op->count ? op->count * sizeof(float) : 1), *chunk = malloc(65536 * sizeof(float));
  gr_nccl_result rc = sum && chunk ? NCCL_OK : NCCL_SYSTEM_ERROR;
  for (int r = 0; r < n && rc == NCCL_OK; r++)
    rc = net_add(op, r, sum, chunk, &clock, deadline);
  if (rc == NCCL_OK) {
    char old[160];
    memcpy(op->recv, sum, op->count * sizeof(float));
    if (op->count && c->rank == 1 && stub_scenario_is("net-corrupt"))
      ((float *)op->recv)[op->count - 1] += 1.0f; /* rank 1's last word of every result is off by one */
    double took = NCCL_BASE_LATENCY + 2.0 * (n - 1) / n * (double)op->count * sizeof(float) / (NCCL_NET_GBS * 1e9);
    if (!stub_stream_is_default(op->stream))
      op->stream->clock = clock + took;
    if (c->seq > 0) { /* every rank has written this call: all have read the one before */
      net_path(c, c->seq - 1, c->rank, old, sizeof(old));
      unlink(old);
    }
    c->seq++;
  }
  free(sum);
  free(chunk);
  return rc;
}

/* The calls of one process on cross-process comms: all published first, so
 * that a process holding several ranks does not wait for itself. */
static gr_nccl_result net_run(const struct queued *ops, int n)
{
  gr_nccl_result rc = NCCL_OK;
  for (int i = 0; i < n && rc == NCCL_OK; i++)
    rc = net_publish(&ops[i]);
  for (int i = 0; i < n && rc == NCCL_OK; i++)
    rc = net_collect(&ops[i]);
  return rc;
}

/* Rank 0 removes the directory once every rank has said it is done. */
static void net_destroy(const struct ncclComm *c)
{
  char path[96 + 264];
  snprintf(path, sizeof(path), "%s/fin.r%d", c->dir, c->rank);
  int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  if (fd >= 0)
    close(fd);
  if (c->rank != 0)
    return;
  double deadline = now_s() + 10;
  for (int r = 0; r < c->nranks; r++) {
    snprintf(path, sizeof(path), "%s/fin.r%d", c->dir, r);
    while (access(path, F_OK) != 0 && now_s() < deadline) {
      struct timespec nap = {0, 1000000};
      nanosleep(&nap, NULL);
    }
  }
  DIR *d = opendir(c->dir);
  for (struct dirent *e = d ? readdir(d) : NULL; e; e = readdir(d))
    if (e->d_name[0] != '.') {
      snprintf(path, sizeof(path), "%s/%s", c->dir, e->d_name);
      unlink(path);
    }
  if (d)
    closedir(d);
  rmdir(c->dir);
}

gr_nccl_result ncclCommDestroy(gr_nccl_comm comm)
{
  if (comm && comm->dir[0])
    net_destroy(comm);
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
  struct queued net[NCCL_MAX_QUEUED];
  int nnet = 0;
  for (int i = 0; i < nqueued; i++)
    if (!pthread_equal(queue[i].owner, pthread_self()))
      queue[kept++] = queue[i];
    else if (queue[i].comm->dir[0])
      net[nnet++] = queue[i];
    else
      mine[nmine++] = queue[i];
  nqueued = kept;
  gr_nccl_result r = run_ops(mine, nmine);
  pthread_mutex_unlock(&lock);
  return r == NCCL_OK ? net_run(net, nnet) : r;
}

/* Counts an accepted ncclAllReduce call (run, or queued in a group); whether
 * it is the STUB_STALL_CALL-th of the process under "burn-stall" (or the
 * GPURIG_STUB_STALL_CALL-th: a burn of a few seconds on a loaded machine
 * may not reach the 400th), which makes the all-reduce holding it stall. */
static int stall_call(void)
{
  unsigned call = atomic_fetch_add(&allreduce_calls, 1u) + 1;
  const char *env = getenv("GPURIG_STUB_STALL_CALL");
  unsigned at = env && atoi(env) > 0 ? (unsigned)atoi(env) : STUB_STALL_CALL;
  return call == at && (stub_scenario_is("burn-stall") || stub_scenario_is("tinybox-red-stall"));
}

gr_nccl_result ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count, unsigned int datatype,
                             unsigned int op, gr_nccl_comm comm, gr_cu_stream stream)
{
  if (!comm || datatype != GR_NCCL_FLOAT32 || op != GR_NCCL_SUM || count > SIZE_MAX / sizeof(float))
    return NCCL_INVALID_ARGUMENT;
  if (count && (!sendbuff || !recvbuff))
    return NCCL_INVALID_ARGUMENT;
  if (!stub_stream_is_default(stream) && comm->dev < 0 && stream->magic == STUB_STREAM_MAGIC)
    comm->dev = stream->dev; /* ncclCommInitRank's GPU: the current one, which this stub cannot ask */
  if (!stub_stream_is_default(stream) && (stream->magic != STUB_STREAM_MAGIC || stream->dev != comm->dev))
    return NCCL_INVALID_ARGUMENT; /* not a live stream of the communicator's GPU */
  struct queued q = {sendbuff, recvbuff, count, comm, stream, pthread_self(), 0, 0};
  gr_nccl_result r = NCCL_OK;
  if (group_depth == 0 && comm->dir[0])
    return net_run(&q, 1);
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
