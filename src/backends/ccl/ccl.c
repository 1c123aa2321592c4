/* The all-reduce benchmark over NCCL's C API (see ccl.h): NCCL or RCCL,
 * opened at run time, on the vendor's GPU runtime (struct gr_ccl_ops); and
 * the transports the library chose, read from its INFO log. */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backends/ccl/ccl.h"
#include "backends/ccl/nccl_log.h"
#include "base/dl.h"
#include "base/util.h"

#define VERIFY_WINDOW ((size_t)16 << 20) /* bytes checked at each end of a result */

#define NSYM(field, ...) {(void **)&c->f.field, {__VA_ARGS__}, true}

static int ccl_load(struct gr_ccl *c, char *why, size_t cap)
{
  const struct gr_dl_sym syms[] = {
      NSYM(GetVersion, "ncclGetVersion"),     NSYM(GetErrorString, "ncclGetErrorString"),
      NSYM(CommInitAll, "ncclCommInitAll"),   NSYM(CommDestroy, "ncclCommDestroy"),
      NSYM(GroupStart, "ncclGroupStart"),     NSYM(GroupEnd, "ncclGroupEnd"),
      NSYM(AllReduce, "ncclAllReduce"),       NSYM(GetUniqueId, "ncclGetUniqueId"),
      NSYM(CommInitRank, "ncclCommInitRank"),
  };
  char one[256] = "";
  int v = 0;
  if (c->dl)
    return 0; /* unique_id loaded it already */
  for (size_t i = 0; c->sonames[i] && !c->dl; i++)
    c->dl = gr_dl_open(c->sonames[i], one, sizeof(one));
  if (!c->dl) {
    snprintf(why, cap, "%s", one);
    return -1;
  }
  if (gr_dl_bind(c->dl, c->sonames[0], syms, sizeof(syms) / sizeof(syms[0]), why, cap) != 0)
    return -1;
  if (c->f.GetVersion(&v) == GR_NCCL_SUCCESS && v > 0) {
    /* NCCL_VERSION_CODE (RCCL's too): major*10000 + minor*100 + patch since 2.9, major*1000 + ... before */
    if (v >= 10000)
      snprintf(c->version, sizeof(c->version), "%d.%d.%d", v / 10000, v % 10000 / 100, v % 100);
    else
      snprintf(c->version, sizeof(c->version), "%d.%d.%d", v / 1000, v % 1000 / 100, v % 100);
    snprintf(c->name, sizeof(c->name), "%s %s", c->lib, c->version);
  }
  return 0;
}
#undef NSYM

void gr_ccl_version(struct gr_ccl *c, struct gr_lib_version *out)
{
  char why[512];
  memset(out, 0, sizeof(*out));
  if (ccl_load(c, why, sizeof(why)) == 0)
    snprintf(out->version, sizeof(out->version), "%s", c->version);
  out->state = c->dl ? GR_LIB_PRESENT : GR_LIB_ABSENT;
}

static int ccl_fail(struct gr_ccl *c, gr_nccl_result r, const char *what, char *why, size_t cap)
{
  const char *s = c->f.GetErrorString ? c->f.GetErrorString(r) : NULL;
  snprintf(why ? why : c->err, why ? cap : c->err_cap, "%s: %s error %u (%s)", what, c->lib, r, s ? s : "?");
  return -1;
}

/* Rank r's send buffer holds r + 1 (every word), so every result word must
 * be 1 + 2 + ... + nranks. */
static int ar_buffers(struct gr_ccl *c, size_t bytes)
{
  c->send = xcalloc((size_t)c->ar_ndev, sizeof(void *));
  c->recv = xcalloc((size_t)c->ar_ndev, sizeof(void *));
  for (int k = 0; k < c->ar_ndev; k++) {
    int i = c->ar_dev[k];
    float one = (float)(c->ar_first + k + 1);
    uint32_t bits;
    memcpy(&bits, &one, sizeof(bits));
    if (c->ops->use(c->be, i) != 0 || c->ops->alloc(c->be, i, bytes, &c->send[k]) != 0 ||
        c->ops->alloc(c->be, i, bytes, &c->recv[k]) != 0 ||
        c->ops->fill32(c->be, i, c->send[k], bits, bytes / 4) != 0 || c->ops->sync(c->be, i) != 0)
      return -1;
  }
  c->ar_bytes = bytes;
  return 0;
}

/* The all-reduce's GPUs and ranks, checked: each a GPU of this process, none twice. */
static int ar_set_devs(struct gr_ccl *c, const int *devs, int ndev, int first, int nranks, char *why, size_t cap)
{
  if (ndev < 1 || first < 0 || nranks < first + ndev) {
    snprintf(why, cap, "ranks %d..%d do not fit in %d ranks", first, first + ndev - 1, nranks);
    return -1;
  }
  for (int k = 0; k < ndev; k++) {
    bool twice = false;
    for (int j = 0; j < k; j++)
      twice |= devs[j] == devs[k];
    if (devs[k] < 0 || devs[k] >= c->ngpus || twice) {
      snprintf(why, cap, "GPU%d is not a GPU of this process (it sees %d) or is named twice", devs[k], c->ngpus);
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

static int ar_finish_open(struct gr_ccl *c, size_t max_bytes, char *why, size_t cap)
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

static bool ar_log_start(struct gr_ccl *c, char *dir, size_t cap)
{
  const char *tmp = getenv("TMPDIR");
  char file[300];
  c->links_known = false;
  if (getenv("NCCL_DEBUG") || getenv("NCCL_DEBUG_FILE")) {
    snprintf(c->links, sizeof(c->links), "NCCL_DEBUG or NCCL_DEBUG_FILE is set in the environment, so "
             "%s's log is yours: gpurig did not read it", c->lib);
    return false;
  }
  if ((size_t)snprintf(dir, cap, "%s/gpurig-nccl-log-XXXXXX", tmp && *tmp == '/' ? tmp : "/tmp") >= cap) {
    snprintf(c->links, sizeof(c->links), "TMPDIR is too long for %s's log's directory", c->lib);
    return false;
  }
  if (!mkdtemp(dir)) {
    snprintf(c->links, sizeof(c->links), "no private directory for %s's log under %s: %s", c->lib,
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
static void ar_links_read(struct gr_ccl *c, const char *file)
{
  FILE *f = fopen(file, "r");
  if (!f) {
    snprintf(c->links, sizeof(c->links), "%s wrote no log", c->lib);
    return;
  }
  int n = gr_nccl_log_links(f, c->links, sizeof(c->links));
  fclose(f);
  c->links_known = n > 0;
  if (n == 0)
    snprintf(c->links, sizeof(c->links), "%s's log has no \"Channel ... via\" line", c->lib);
  else if (n < 0)
    snprintf(c->links, sizeof(c->links), "too many connections in %s's log", c->lib);
}

/* Reads the log and removes it with its directory. */
static void ar_log_read(struct gr_ccl *c)
{
  char file[300];
  if (!c->log_dir[0])
    return;
  snprintf(file, sizeof(file), "%s/nccl.log", c->log_dir);
  ar_links_read(c, file);
  unlink(file);
  rmdir(c->log_dir);
  c->log_dir[0] = '\0';
  unguard_log();
}

static void ar_log_remove(struct gr_ccl *c)
{
  char file[300];
  if (!c->log_dir[0])
    return;
  snprintf(file, sizeof(file), "%s/nccl.log", c->log_dir);
  unlink(file);
  rmdir(c->log_dir);
  c->log_dir[0] = '\0';
  unguard_log();
}

/* Puts the environment back as it was: NCCL read it, and opened its log,
 * while the communicator started. The log is read later, after the
 * all-reduces: NCCL 2.22 and later connect the GPUs at the collectives
 * that need them (NCCL_RUNTIME_CONNECT), not in ncclCommInitAll. */
static void ar_log_end(struct gr_ccl *c, const char *dir, bool ok)
{
  unsetenv("NCCL_DEBUG");
  unsetenv("NCCL_DEBUG_FILE");
  snprintf(c->log_dir, sizeof(c->log_dir), "%s", dir);
  if (!ok) {
    ar_log_read(c);
    snprintf(c->links, sizeof(c->links), "%s did not start", c->lib);
  }
}

int gr_ccl_transports(struct gr_ccl *c, char *buf, size_t cap)
{
  ar_log_read(c);
  snprintf(buf, cap, "%s", c->links);
  return c->links_known ? 0 : -1;
}

int gr_ccl_open(struct gr_ccl *c, size_t max_bytes, char *why, size_t cap)
{
  gr_nccl_result r;
  int *all = xcalloc((size_t)c->ngpus, sizeof(int));
  for (int i = 0; i < c->ngpus; i++)
    all[i] = i;
  char dir[sizeof(c->log_dir)] = "";
  /* before the library is loaded: it reads its environment once, at its start */
  bool logging = ar_log_start(c, dir, sizeof(dir));
  int rc = ccl_load(c, why, cap) != 0 || ar_set_devs(c, all, c->ngpus, 0, c->ngpus, why, cap) != 0 ? -1 : 0;
  free(all);
  r = rc == 0 ? c->f.CommInitAll(c->comms, c->ngpus, NULL) : GR_NCCL_SUCCESS;
  if (logging)
    ar_log_end(c, dir, rc == 0 && r == GR_NCCL_SUCCESS);
  if (rc != 0)
    return -1;
  if (r != GR_NCCL_SUCCESS) {
    memset(c->comms, 0, (size_t)c->ngpus * sizeof(*c->comms));
    return ccl_fail(c, r, "ncclCommInitAll", why, cap);
  }
  if (ar_finish_open(c, max_bytes, why, cap) != 0) {
    ar_log_read(c); /* no all-reduce will run */
    return -1;
  }
  return 0;
}

int gr_ccl_unique_id(struct gr_ccl *c, void *id, char *why, size_t cap)
{
  gr_nccl_unique_id u;
  _Static_assert(sizeof(u) == GR_BENCH_UNIQUE_ID_BYTES, "ncclUniqueId size");
  if (ccl_load(c, why, cap) != 0)
    return -1;
  gr_nccl_result r = c->f.GetUniqueId(&u);
  if (r != GR_NCCL_SUCCESS)
    return ccl_fail(c, r, "ncclGetUniqueId", why, cap);
  memcpy(id, &u, sizeof(u));
  return 0;
}

/* Several GPUs of one process join inside one group, as NCCL requires
 * (each ncclCommInitRank would otherwise wait for the others). */
int gr_ccl_open_ranks(struct gr_ccl *c, size_t max_bytes, const void *id, int nranks, int first_rank, const int *devs,
                      int ndev, char *why, size_t cap)
{
  gr_nccl_unique_id u;
  gr_nccl_result r = GR_NCCL_SUCCESS;
  if (ccl_load(c, why, cap) != 0 || ar_set_devs(c, devs, ndev, first_rank, nranks, why, cap) != 0)
    return -1;
  memcpy(&u, id, sizeof(u));
  if (ndev > 1)
    r = c->f.GroupStart();
  for (int k = 0; k < ndev && r == GR_NCCL_SUCCESS; k++) {
    if (c->ops->use(c->be, devs[k]) != 0) {
      snprintf(why, cap, "%s", c->err);
      return -1;
    }
    r = c->f.CommInitRank(&c->comms[k], nranks, u, first_rank + k);
  }
  gr_nccl_result r2 = ndev > 1 ? c->f.GroupEnd() : GR_NCCL_SUCCESS;
  if (r != GR_NCCL_SUCCESS || r2 != GR_NCCL_SUCCESS) {
    for (int k = 0; k < ndev; k++)
      if (c->comms[k])
        c->f.CommDestroy(c->comms[k]);
    memset(c->comms, 0, (size_t)ndev * sizeof(*c->comms));
    return ccl_fail(c, r != GR_NCCL_SUCCESS ? r : r2, "ncclCommInitRank", why, cap);
  }
  return ar_finish_open(c, max_bytes, why, cap);
}

/* One all-reduce on every GPU of this process; in place, the receive
 * buffer is also the send buffer (nccl-tests' in-place column). */
static int ar_launch(struct gr_ccl *c, size_t count, bool in_place)
{
  gr_nccl_result r = c->f.GroupStart();
  if (r != GR_NCCL_SUCCESS)
    return ccl_fail(c, r, "ncclGroupStart", NULL, 0);
  for (int k = 0; k < c->ar_ndev && r == GR_NCCL_SUCCESS; k++)
    r = c->ops->allreduce(c->be, c->f.AllReduce, c->ar_dev[k], in_place ? c->recv[k] : c->send[k], c->recv[k], count,
                          c->comms[k]);
  gr_nccl_result r2 = c->f.GroupEnd();
  if (r != GR_NCCL_SUCCESS)
    return ccl_fail(c, r, "ncclAllReduce", NULL, 0);
  return r2 == GR_NCCL_SUCCESS ? 0 : ccl_fail(c, r2, "ncclGroupEnd", NULL, 0);
}

/* Counts result words that are not the sum 1 + 2 + ... + nranks, in a
 * window at each end of every GPU's result (a whole 1 GiB read-back per
 * size would take longer than the all-reduce). */
static int ar_verify(struct gr_ccl *c, size_t bytes, long *wrong)
{
  size_t win = bytes < VERIFY_WINDOW ? bytes : VERIFY_WINDOW;
  float want = (float)c->ar_nranks * (float)(c->ar_nranks + 1) / 2.0f;
  if (c->check_bytes < win) {
    free(c->check);
    c->check = xmalloc(win);
    c->check_bytes = win;
  }
  *wrong = 0;
  for (int k = 0; k < c->ar_ndev; k++) {
    int i = c->ar_dev[k];
    size_t offs[2] = {0, bytes - win};
    for (int h = 0; h < (bytes > win ? 2 : 1); h++) {
      if (c->ops->use(c->be, i) != 0 ||
          c->ops->read(c->be, i, c->check, (const char *)c->recv[k] + offs[h], win) != 0)
        return -1;
      for (size_t j = 0; j < win / 4; j++)
        if (c->check[j] != want)
          (*wrong)++;
    }
  }
  return 0;
}

static int ar_record(struct gr_ccl *c, int ev)
{
  for (int k = 0; k < c->ar_ndev; k++)
    if (c->ops->use(c->be, c->ar_dev[k]) != 0 || c->ops->record(c->be, c->ar_dev[k], ev) != 0)
      return -1;
  return 0;
}

/* Waits until every all-reduce stream is idle. */
static int ar_sync(struct gr_ccl *c)
{
  for (int k = 0; k < c->ar_ndev; k++)
    if (c->ops->use(c->be, c->ar_dev[k]) != 0 || c->ops->sync(c->be, c->ar_dev[k]) != 0)
      return -1;
  return 0;
}

/* The receive buffers: zeros (out of place, and in place while timed: a sum
 * of zeros stays zero however many iterations run, where rank values would
 * grow to infinity), or this rank's value r + 1 (the in-place check run). */
static int ar_fill(struct gr_ccl *c, size_t count, bool rank_values)
{
  for (int k = 0; k < c->ar_ndev; k++) {
    int i = c->ar_dev[k];
    float v = rank_values ? (float)(c->ar_first + k + 1) : 0.0f;
    uint32_t bits;
    memcpy(&bits, &v, sizeof(bits));
    if (c->ops->use(c->be, i) != 0 || c->ops->fill32(c->be, i, c->recv[k], bits, count) != 0)
      return -1;
  }
  return 0;
}

/* The slowest GPU's time between its events 0 and 1 (after both are done). */
static int ar_elapsed(struct gr_ccl *c, double *seconds)
{
  *seconds = 0;
  for (int k = 0; k < c->ar_ndev; k++) {
    double s = 0;
    if (c->ops->use(c->be, c->ar_dev[k]) != 0 || c->ops->elapsed(c->be, c->ar_dev[k], &s) != 0)
      return -1;
    if (s > *seconds)
      *seconds = s;
  }
  return 0;
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
static int ar_timed(struct gr_ccl *c, const struct gr_ar_spec *spec, size_t count, struct gr_ar_sample *out)
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

int gr_ccl_allreduce(struct gr_ccl *c, const struct gr_ar_spec *spec, struct gr_ar_sample *out)
{
  size_t count = spec->bytes / 4;
  int rc = 0;
  c->err[0] = '\0';
  memset(out, 0, sizeof(*out));
  if (c->ar_ndev < 1 || spec->iters < 1 || spec->warmup < 0 || spec->bytes < 4 || spec->bytes > c->ar_bytes) {
    snprintf(c->err, c->err_cap, "all-reduce of %zu bytes, %d iterations: outside what was opened", spec->bytes,
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
  if (rc == 0 && spec->in_place && (rc = ar_fill(c, count, true)) == 0 && (rc = ar_launch(c, count, true)) == 0)
    rc = ar_sync(c);
  if (rc == 0)
    rc = ar_verify(c, spec->bytes, &out->wrong);
  /* NCCL 2.22+ connects at run time what each size needs: read the log at
   * the largest size (the sweep's last, burn's only), or when asked */
  if (spec->bytes == c->ar_bytes)
    ar_log_read(c);
  if (rc != 0)
    for (int i = 0; i < c->ngpus; i++)
      c->ops->probe_lost(c->be, i);
  return rc;
}

const char *gr_ccl_name(const struct gr_ccl *c)
{
  return c->name;
}

void gr_ccl_close(struct gr_ccl *c)
{
  ar_log_remove(c);
  for (int k = 0; c->comms && c->f.CommDestroy && k < c->ar_ndev; k++)
    if (c->comms[k])
      c->f.CommDestroy(c->comms[k]);
  for (int k = 0; k < c->ar_ndev; k++) {
    void *p[2] = {c->send ? c->send[k] : NULL, c->recv ? c->recv[k] : NULL};
    if ((p[0] || p[1]) && c->ops->use(c->be, c->ar_dev[k]) == 0)
      for (int j = 0; j < 2; j++)
        if (p[j])
          c->ops->free(c->be, c->ar_dev[k], p[j]);
  }
  free(c->comms);
  free(c->ar_dev);
  free(c->send);
  free(c->recv);
  free(c->check);
  gr_dl_close(c->dl);
  c->comms = NULL;
  c->ar_dev = NULL;
  c->send = c->recv = NULL;
  c->check = NULL;
  c->dl = NULL;
  c->ar_ndev = 0;
}
