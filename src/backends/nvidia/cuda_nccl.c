/* The all-reduce benchmark over NCCL (libnccl.so.2, opened at run time),
 * and the transports NCCL chose, read from its INFO log. */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backends/nvidia/nvidia.h"
#include "base/dl.h"
#include "base/fs.h"
#include "backends/nvidia/nv_api.h"
#include "backends/nvidia/cuda_internal.h"

/* ------------------------------------------------------------ all-reduce */

#include "backends/nvidia/nccl_log.h"

#define NSYM(field, ...) {(void **)&c->nc.field, {__VA_ARGS__}, true}

static int nccl_load(struct cuda *c, char *why, size_t cap)
{
  const struct gr_dl_sym syms[] = {
      NSYM(GetVersion, "ncclGetVersion"),     NSYM(GetErrorString, "ncclGetErrorString"),
      NSYM(CommInitAll, "ncclCommInitAll"),   NSYM(CommDestroy, "ncclCommDestroy"),
      NSYM(GroupStart, "ncclGroupStart"),     NSYM(GroupEnd, "ncclGroupEnd"),
      NSYM(AllReduce, "ncclAllReduce"),       NSYM(GetUniqueId, "ncclGetUniqueId"),
      NSYM(CommInitRank, "ncclCommInitRank"),
  };
  int v = 0;
  if (c->nccl_lib)
    return 0; /* unique_id loaded it already */
  c->nccl_lib = gr_dl_open(NCCL_SONAME, why, cap);
  if (!c->nccl_lib || gr_dl_bind(c->nccl_lib, NCCL_SONAME, syms, sizeof(syms) / sizeof(syms[0]), why, cap) != 0)
    return -1;
  if (c->nc.GetVersion(&v) == GR_NCCL_SUCCESS && v > 0) {
    /* NCCL_VERSION_CODE: major*10000 + minor*100 + patch since 2.9, major*1000 + ... before */
    if (v >= 10000)
      snprintf(c->nccl_version, sizeof(c->nccl_version), "%d.%d.%d", v / 10000, v % 10000 / 100, v % 100);
    else
      snprintf(c->nccl_version, sizeof(c->nccl_version), "%d.%d.%d", v / 1000, v % 1000 / 100, v % 100);
    snprintf(c->nccl_name, sizeof(c->nccl_name), "NCCL %s", c->nccl_version);
  }
  return 0;
}
#undef NSYM

/* The same loader as the all-reduce's, asked only for the version: absent
 * when libnccl cannot be opened; present without a version when it opens
 * but lacks what gpurig binds. c holds no GPU; the caller closes the
 * library (c->nccl_lib). */
void cuda_nccl_version(struct cuda *c, struct gr_lib_version *out)
{
  char why[512];
  memset(out, 0, sizeof(*out));
  if (nccl_load(c, why, sizeof(why)) == 0)
    snprintf(out->version, sizeof(out->version), "%s", c->nccl_version);
  out->state = c->nccl_lib ? GR_LIB_PRESENT : GR_LIB_ABSENT;
}

static int nccl_fail(struct cuda *c, gr_nccl_result r, const char *what, char *why, size_t cap)
{
  const char *s = c->nc.GetErrorString ? c->nc.GetErrorString(r) : NULL;
  snprintf(why ? why : c->err, why ? cap : sizeof(c->err), "%s: NCCL error %u (%s)", what, r, s ? s : "?");
  return -1;
}

/* Rank r's send buffer holds r + 1 (every word), so every result word must
 * be 1 + 2 + ... + nranks. */
static int ar_buffers(struct cuda *c, size_t bytes)
{
  int rc = 0;
  for (int k = 0; k < c->ar_ndev; k++) {
    int i = c->ar_dev[k];
    struct cudev *d = &c->d[i];
    float one = (float)(c->ar_first + k + 1);
    uint32_t bits;
    memcpy(&bits, &one, sizeof(bits));
    if (cuda_use(c, i) != 0)
      return -1;
    CU(c->f.MemAlloc(&d->ar_send, bytes), "cuMemAlloc", i);
    CU(c->f.MemAlloc(&d->ar_recv, bytes), "cuMemAlloc", i);
    d->ar_bytes = bytes;
    CU(c->f.MemsetD32Async(d->ar_send, bits, bytes / 4, d->s[0]), "cuMemsetD32Async", i);
    CU(c->f.StreamSynchronize(d->s[0]), "cuStreamSynchronize", i);
  }
out:
  return rc;
}

/* The all-reduce's GPUs and ranks, checked: each a GPU of this process, none twice. */
static int ar_set_devs(struct cuda *c, const int *devs, int ndev, int first, int nranks, char *why, size_t cap)
{
  if (ndev < 1 || first < 0 || nranks < first + ndev) {
    snprintf(why, cap, "ranks %d..%d do not fit in %d ranks", first, first + ndev - 1, nranks);
    return -1;
  }
  for (int k = 0; k < ndev; k++) {
    bool twice = false;
    for (int j = 0; j < k; j++)
      twice |= devs[j] == devs[k];
    if (devs[k] < 0 || devs[k] >= c->n || twice) {
      snprintf(why, cap, "GPU%d is not a GPU of this process (it sees %d) or is named twice", devs[k], c->n);
      return -1;
    }
  }
  c->ar_dev = xcalloc((size_t)ndev, sizeof(int));
  memcpy(c->ar_dev, devs, (size_t)ndev * sizeof(int));
  c->ar_ndev = ndev;
  c->ar_first = first;
  c->ar_nranks = nranks;
  c->comms = xcalloc((size_t)ndev, sizeof(*c->comms));
  return 0;
}

static int ar_finish_open(struct cuda *c, size_t max_bytes, char *why, size_t cap)
{
  c->err[0] = '\0';
  if (ar_buffers(c, max_bytes) != 0) {
    snprintf(why, cap, "%s", c->err);
    return -1;
  }
  return 0;
}

/* ---------------------------------------------------- NCCL's transports */

/* How NCCL connects the GPUs is in its INFO log only ("Channel 00/0 : 0[0] ->
 * 1[1] via P2P/IPC"). So, unless the user set NCCL_DEBUG or NCCL_DEBUG_FILE
 * (theirs win, and then the transports are unknown), gpurig sets both in its
 * own process's environment around the communicator's creation, with the
 * file in a private directory (0700) it removes right after. That changes
 * nothing on the system: only this process's environment, for one call. */
/* While the log's directory exists, SIGINT, SIGTERM and SIGHUP remove it
 * (and the log) before they take their course: a bench stopped by Ctrl-C
 * mid-collective leaves nothing in TMPDIR (REL-09). The paths are copied
 * here because a handler may only read what is fixed; unlink and rmdir are
 * async-signal-safe. The handler then does what was there before: a
 * command's stop flag (burn, watch) is set and the run ends cleanly; the
 * default ends the process by the same signal. */
static const int log_sigs[] = {SIGINT, SIGTERM, SIGHUP};
enum { NLOG_SIGS = sizeof(log_sigs) / sizeof(log_sigs[0]) };
static char guard_dir[256], guard_file[300];
static volatile sig_atomic_t guard_on; /* the directory may still exist */
static bool guard_installed;            /* the handlers below are ours */
static struct sigaction guard_saved[NLOG_SIGS];

static void guard_clean(void)
{
  if (guard_on) {
    guard_on = 0;
    unlink(guard_file);
    rmdir(guard_dir);
  }
}

static void on_log_signal(int sig, siginfo_t *info, void *uctx)
{
  guard_clean();
  for (int i = 0; i < NLOG_SIGS; i++) {
    if (log_sigs[i] != sig)
      continue;
    const struct sigaction *old = &guard_saved[i];
    if ((old->sa_flags & SA_SIGINFO) && old->sa_sigaction)
      old->sa_sigaction(sig, info, uctx);
    else if (old->sa_handler != SIG_DFL && old->sa_handler != SIG_IGN)
      old->sa_handler(sig);
    else if (old->sa_handler == SIG_DFL) {
      sigaction(sig, old, NULL); /* the process ends by its signal, as it would have */
      raise(sig);
    }
  }
}

static void guard_log(const char *dir)
{
  if (guard_installed)
    return;
  snprintf(guard_dir, sizeof(guard_dir), "%s", dir);
  snprintf(guard_file, sizeof(guard_file), "%s/nccl.log", dir);
  guard_on = 1;
  guard_installed = true;
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_sigaction = on_log_signal;
  sa.sa_flags = SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  for (int i = 0; i < NLOG_SIGS; i++)
    sigaction(log_sigs[i], &sa, &guard_saved[i]);
}

/* The directory is gone: the handlers that were there come back. */
static void unguard_log(void)
{
  guard_on = 0;
  if (!guard_installed)
    return;
  guard_installed = false;
  for (int i = 0; i < NLOG_SIGS; i++)
    sigaction(log_sigs[i], &guard_saved[i], NULL);
}

static bool ar_log_start(struct cuda *c, char *dir, size_t cap)
{
  const char *tmp = getenv("TMPDIR");
  char file[300];
  c->nccl_links_known = false;
  if (getenv("NCCL_DEBUG") || getenv("NCCL_DEBUG_FILE")) {
    snprintf(c->nccl_links, sizeof(c->nccl_links), "NCCL_DEBUG or NCCL_DEBUG_FILE is set in the environment, so "
             "NCCL's log is yours: gpurig did not read it");
    return false;
  }
  if ((size_t)snprintf(dir, cap, "%s/gpurig-nccl-log-XXXXXX", tmp && *tmp == '/' ? tmp : "/tmp") >= cap) {
    snprintf(c->nccl_links, sizeof(c->nccl_links), "TMPDIR is too long for NCCL's log's directory");
    return false;
  }
  if (!mkdtemp(dir)) {
    snprintf(c->nccl_links, sizeof(c->nccl_links), "no private directory for NCCL's log under %s: %s",
             tmp && *tmp == '/' ? tmp : "/tmp", strerror(errno));
    return false;
  }
  snprintf(file, sizeof(file), "%s/nccl.log", dir);
  guard_log(dir);
  setenv("NCCL_DEBUG", "INFO", 1);
  setenv("NCCL_DEBUG_FILE", file, 1);
  return true;
}

/* Reads the log's channel lines into nccl_links. */
static void ar_links_read(struct cuda *c, const char *file)
{
  FILE *f = fopen(file, "r");
  if (!f) {
    snprintf(c->nccl_links, sizeof(c->nccl_links), "NCCL wrote no log");
    return;
  }
  int n = gr_nccl_log_links(f, c->nccl_links, sizeof(c->nccl_links));
  fclose(f);
  c->nccl_links_known = n > 0;
  if (n == 0)
    snprintf(c->nccl_links, sizeof(c->nccl_links), "NCCL's log has no \"Channel ... via\" line");
  else if (n < 0)
    snprintf(c->nccl_links, sizeof(c->nccl_links), "too many connections in NCCL's log");
}

/* Reads the log and removes it with its directory. */
static void ar_log_read(struct cuda *c)
{
  char file[300];
  if (!c->nccl_log_dir[0])
    return;
  snprintf(file, sizeof(file), "%s/nccl.log", c->nccl_log_dir);
  ar_links_read(c, file);
  unlink(file);
  rmdir(c->nccl_log_dir);
  c->nccl_log_dir[0] = '\0';
  unguard_log();
}

void cuda_nccl_log_remove(struct cuda *c)
{
  char file[300];
  if (!c->nccl_log_dir[0])
    return;
  snprintf(file, sizeof(file), "%s/nccl.log", c->nccl_log_dir);
  unlink(file);
  rmdir(c->nccl_log_dir);
  c->nccl_log_dir[0] = '\0';
  unguard_log();
}

/* Puts the environment back as it was: NCCL read it, and opened its log,
 * while the communicator started. The log is read later, after the
 * all-reduces: NCCL 2.22 and later connect the GPUs at the collectives
 * that need them (NCCL_RUNTIME_CONNECT), not in ncclCommInitAll. */
static void ar_log_end(struct cuda *c, const char *dir, bool ok)
{
  unsetenv("NCCL_DEBUG");
  unsetenv("NCCL_DEBUG_FILE");
  snprintf(c->nccl_log_dir, sizeof(c->nccl_log_dir), "%s", dir);
  if (!ok) {
    ar_log_read(c);
    snprintf(c->nccl_links, sizeof(c->nccl_links), "NCCL did not start");
  }
}

int cuda_transports(void *state, char *buf, size_t cap)
{
  struct cuda *c = state;
  ar_log_read(c);
  snprintf(buf, cap, "%s", c->nccl_links);
  return c->nccl_links_known ? 0 : -1;
}

int cuda_allreduce_open(void *state, size_t max_bytes, char *why, size_t cap)
{
  struct cuda *c = state;
  gr_nccl_result r;
  int *all = xcalloc((size_t)c->n, sizeof(int));
  for (int i = 0; i < c->n; i++)
    all[i] = i;
  char dir[sizeof(c->nccl_log_dir)] = "";
  /* before NCCL is loaded: it reads its environment once, at its start */
  bool logging = ar_log_start(c, dir, sizeof(dir));
  int rc = nccl_load(c, why, cap) != 0 || ar_set_devs(c, all, c->n, 0, c->n, why, cap) != 0 ? -1 : 0;
  free(all);
  r = rc == 0 ? c->nc.CommInitAll(c->comms, c->n, NULL) : GR_NCCL_SUCCESS;
  if (logging)
    ar_log_end(c, dir, rc == 0 && r == GR_NCCL_SUCCESS);
  if (rc != 0)
    return -1;
  if (r != GR_NCCL_SUCCESS) {
    memset(c->comms, 0, (size_t)c->n * sizeof(*c->comms));
    return nccl_fail(c, r, "ncclCommInitAll", why, cap);
  }
  if (ar_finish_open(c, max_bytes, why, cap) != 0) {
    ar_log_read(c); /* no all-reduce will run */
    return -1;
  }
  return 0;
}

int cuda_unique_id(void *state, void *id, char *why, size_t cap)
{
  struct cuda *c = state;
  gr_nccl_unique_id u;
  _Static_assert(sizeof(u) == GR_BENCH_UNIQUE_ID_BYTES, "ncclUniqueId size");
  if (nccl_load(c, why, cap) != 0)
    return -1;
  gr_nccl_result r = c->nc.GetUniqueId(&u);
  if (r != GR_NCCL_SUCCESS)
    return nccl_fail(c, r, "ncclGetUniqueId", why, cap);
  memcpy(id, &u, sizeof(u));
  return 0;
}

/* Several GPUs of one process join inside one group, as NCCL requires
 * (each ncclCommInitRank would otherwise wait for the others). */
int cuda_allreduce_open_ranks(void *state, size_t max_bytes, const void *id, int nranks, int first_rank,
                              const int *devs, int ndev, char *why, size_t cap)
{
  struct cuda *c = state;
  gr_nccl_unique_id u;
  gr_nccl_result r = GR_NCCL_SUCCESS;
  if (nccl_load(c, why, cap) != 0 || ar_set_devs(c, devs, ndev, first_rank, nranks, why, cap) != 0)
    return -1;
  memcpy(&u, id, sizeof(u));
  if (ndev > 1)
    r = c->nc.GroupStart();
  for (int k = 0; k < ndev && r == GR_NCCL_SUCCESS; k++) {
    if (cuda_use(c, devs[k]) != 0) {
      snprintf(why, cap, "%s", c->err);
      return -1;
    }
    r = c->nc.CommInitRank(&c->comms[k], nranks, u, first_rank + k);
  }
  gr_nccl_result r2 = ndev > 1 ? c->nc.GroupEnd() : GR_NCCL_SUCCESS;
  if (r != GR_NCCL_SUCCESS || r2 != GR_NCCL_SUCCESS) {
    for (int k = 0; k < ndev; k++)
      if (c->comms[k])
        c->nc.CommDestroy(c->comms[k]);
    memset(c->comms, 0, (size_t)ndev * sizeof(*c->comms));
    return nccl_fail(c, r != GR_NCCL_SUCCESS ? r : r2, "ncclCommInitRank", why, cap);
  }
  return ar_finish_open(c, max_bytes, why, cap);
}

/* One all-reduce on every GPU of this process; in place, the receive
 * buffer is also the send buffer (nccl-tests' in-place column). */
static int ar_launch(struct cuda *c, size_t count, bool in_place)
{
  gr_nccl_result r = c->nc.GroupStart();
  if (r != GR_NCCL_SUCCESS)
    return nccl_fail(c, r, "ncclGroupStart", NULL, 0);
  for (int k = 0; k < c->ar_ndev && r == GR_NCCL_SUCCESS; k++) {
    const struct cudev *d = &c->d[c->ar_dev[k]];
    const void *send = (const void *)(uintptr_t)(in_place ? d->ar_recv : d->ar_send);
    r = c->nc.AllReduce(send, (void *)(uintptr_t)d->ar_recv, count, GR_NCCL_FLOAT32, GR_NCCL_SUM, c->comms[k],
                        d->s[0]);
  }
  gr_nccl_result r2 = c->nc.GroupEnd();
  if (r != GR_NCCL_SUCCESS)
    return nccl_fail(c, r, "ncclAllReduce", NULL, 0);
  return r2 == GR_NCCL_SUCCESS ? 0 : nccl_fail(c, r2, "ncclGroupEnd", NULL, 0);
}

/* Counts result words that are not the sum 1 + 2 + ... + nranks, in a
 * window at each end of every GPU's result (a whole 1 GiB read-back per
 * size would take longer than the all-reduce). */
static int ar_verify(struct cuda *c, size_t bytes, long *wrong)
{
  size_t win = bytes < VERIFY_WINDOW ? bytes : VERIFY_WINDOW;
  float want = (float)c->ar_nranks * (float)(c->ar_nranks + 1) / 2.0f;
  int rc = 0;
  ensure_check(c, win);
  *wrong = 0;
  for (int k = 0; k < c->ar_ndev; k++) {
    int i = c->ar_dev[k];
    size_t offs[2] = {0, bytes - win};
    for (int h = 0; h < (bytes > win ? 2 : 1); h++) {
      if (cuda_use(c, i) != 0)
        return -1;
      CU(c->f.MemcpyAsync((gr_cu_deviceptr)(uintptr_t)c->check, c->d[i].ar_recv + offs[h], win, c->d[i].s[0]),
         "cuMemcpyAsync", i);
      CU(c->f.StreamSynchronize(c->d[i].s[0]), "cuStreamSynchronize", i);
      const float *v = (const float *)c->check;
      for (size_t j = 0; j < win / 4; j++)
        if (v[j] != want)
          (*wrong)++;
    }
  }
out:
  return rc;
}

static int ar_record(struct cuda *c, int ev)
{
  int rc = 0;
  for (int k = 0; k < c->ar_ndev && rc == 0; k++) {
    int i = c->ar_dev[k];
    if ((rc = cuda_use(c, i)) != 0)
      break;
    CU(c->f.EventRecord(c->d[i].ev[ev], c->d[i].s[0]), "cuEventRecord", i);
  }
out:
  return rc;
}

/* Waits until every all-reduce stream is idle. */
static int ar_sync(struct cuda *c)
{
  int rc = 0;
  for (int k = 0; k < c->ar_ndev && rc == 0; k++) {
    int i = c->ar_dev[k];
    if ((rc = cuda_use(c, i)) != 0)
      break;
    CU(c->f.StreamSynchronize(c->d[i].s[0]), "cuStreamSynchronize", i);
  }
out:
  return rc;
}

/* The receive buffers: zeros (out of place, and in place while timed: a sum
 * of zeros stays zero however many iterations run, where rank values would
 * grow to infinity), or this rank's value r + 1 (the in-place check run). */
static int ar_fill(struct cuda *c, size_t count, bool rank_values)
{
  int rc = 0;
  for (int k = 0; k < c->ar_ndev && rc == 0; k++) {
    int i = c->ar_dev[k];
    float v = rank_values ? (float)(c->ar_first + k + 1) : 0.0f;
    uint32_t bits;
    memcpy(&bits, &v, sizeof(bits));
    if ((rc = cuda_use(c, i)) != 0)
      break;
    CU(c->f.MemsetD32Async(c->d[i].ar_recv, bits, count, c->d[i].s[0]), "cuMemsetD32Async", i);
  }
out:
  return rc;
}

/* The slowest GPU's time between its events 0 and 1 (after both are done). */
static int ar_elapsed(struct cuda *c, double *seconds)
{
  int rc = 0;
  *seconds = 0;
  for (int k = 0; k < c->ar_ndev && rc == 0; k++) {
    int i = c->ar_dev[k];
    float ms = 0;
    if ((rc = cuda_use(c, i)) != 0)
      break;
    CU(c->f.EventSynchronize(c->d[i].ev[1]), "cuEventSynchronize", i);
    CU(c->f.EventElapsedTime(&ms, c->d[i].ev[0], c->d[i].ev[1]), "cuEventElapsedTime", i);
    if (ms / 1000.0 > *seconds)
      *seconds = ms / 1000.0;
  }
out:
  return rc;
}

static double host_clock(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The timed iterations, nccl-tests' way on the host clock: from a
 * synchronised start (every stream idle) to every stream synchronised,
 * averaged per iteration; and on each GPU's events. With iter_seconds each
 * iteration is timed alone (events around it, waited for before the next
 * starts), which is slower per iteration but shows a stall. */
static int ar_timed(struct cuda *c, const struct gr_ar_spec *spec, size_t count, struct gr_ar_sample *out)
{
  double t0, total = 0, one = 0;
  int rc = ar_sync(c);
  if (rc != 0)
    return rc;
  t0 = host_clock();
  if (!spec->iter_seconds) {
    rc = ar_record(c, 0);
    for (int k = 0; k < spec->iters && rc == 0; k++)
      rc = ar_launch(c, count, spec->in_place);
    if (rc == 0 && (rc = ar_record(c, 1)) == 0)
      rc = ar_elapsed(c, &total);
  }
  for (int k = 0; spec->iter_seconds && k < spec->iters && rc == 0; k++) {
    if ((rc = ar_record(c, 0)) != 0 || (rc = ar_launch(c, count, spec->in_place)) != 0 ||
        (rc = ar_record(c, 1)) != 0 || (rc = ar_elapsed(c, &one)) != 0)
      break;
    spec->iter_seconds[k] = one;
    total += one;
  }
  if (rc == 0 && (rc = ar_sync(c)) == 0) {
    out->host_seconds = (host_clock() - t0) / spec->iters;
    out->seconds = total / spec->iters;
  }
  return rc;
}

int cuda_allreduce(void *state, const struct gr_ar_spec *spec, struct gr_ar_sample *out)
{
  struct cuda *c = state;
  size_t count = spec->bytes / 4;
  int rc = 0;
  c->err[0] = '\0';
  memset(out, 0, sizeof(*out));
  if (c->ar_ndev < 1 || spec->iters < 1 || spec->warmup < 0 || spec->bytes < 4 ||
      spec->bytes > c->d[c->ar_dev[0]].ar_bytes) {
    snprintf(c->err, sizeof(c->err), "all-reduce of %zu bytes, %d iterations: outside what was opened", spec->bytes,
             spec->iters);
    return -1;
  }
  rc = ar_fill(c, count, false);
  for (int w = 0; w < spec->warmup && rc == 0; w++)
    rc = ar_launch(c, count, spec->in_place);
  if (rc == 0)
    rc = ar_timed(c, spec, count, out);
  /* in place, the timed buffers summed zeros: one more run on the ranks'
   * values, untimed, gives the result to check */
  if (rc == 0 && spec->in_place && (rc = ar_fill(c, count, true)) == 0 &&
      (rc = ar_launch(c, count, true)) == 0)
    rc = ar_sync(c);
  if (rc == 0)
    rc = ar_verify(c, spec->bytes, &out->wrong);
  /* NCCL 2.22+ connects at run time what each size needs: read the log at
   * the largest size (the sweep's last, burn's only), or when asked */
  if (spec->bytes == c->d[c->ar_dev[0]].ar_bytes)
    ar_log_read(c);
  if (rc != 0)
    for (int i = 0; i < c->n; i++)
      probe_lost(c, i);
  return rc;
}

const char *cuda_collective_name(void *state)
{
  return ((struct cuda *)state)->nccl_name;
}
