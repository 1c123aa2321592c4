/* The copy benchmarks: timed copy legs (copy engine or SM kernel, one or a
 * gang at a time), their verification, and pointer-chase latency. */
#include <errno.h>
#include <sched.h>
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

/* ---------------------------------------------------------------- copies */

struct leg {               /* one direction of a timed run */
  int from, to;            /* endpoints (GPU or host) */
  int exec;                /* GPU whose stream issues it */
  gr_cu_deviceptr src, dst;
  size_t dst_bytes;
  uint32_t *dst_host;      /* destination in host memory, else NULL */
  unsigned src_tag;
  bool peer;               /* GPU -> other GPU */
};

static int enable_peer(struct cuda *c, int a, int b)
{
  if (c->d[a].peer_on[b])
    return 0;
  if (cuda_use(c, a) != 0)
    return -1;
  gr_cu_result r = c->f.CtxEnablePeerAccess(c->d[b].ctx, 0);
  if (r != GR_CUDA_SUCCESS && r != GR_CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED)
    return cu_fail(c, r, "cuCtxEnablePeerAccess", a);
  c->d[a].peer_on[b] = true;
  return 0;
}

/* Source and destination of one direction. Host endpoints use the pinned
 * buffers of the GPU at the other end (on that GPU's NUMA node). A copy
 * between two GPUs is issued by the source (push, a posted write) unless
 * read: then the destination issues it and pulls (nvbandwidth's _read_
 * tests: cuMemcpyPeerAsync on the destination's stream, or the SM kernel
 * on the destination loading the peer's memory). */
static void plan_leg(struct cuda *c, int from, int to, enum gr_engine eng, bool read, struct leg *l)
{
  int gpu_of_host = from == GR_BENCH_HOST ? to : from;
  memset(l, 0, sizeof(*l));
  l->from = from;
  l->to = to;
  l->exec = from == GR_BENCH_HOST || (read && to != GR_BENCH_HOST) ? to : from;
  if (from == GR_BENCH_HOST) {
    struct host_buf *h = &c->d[gpu_of_host].host[0];
    l->src = eng == GR_ENGINE_SM ? h->dptr : (gr_cu_deviceptr)(uintptr_t)h->p;
    l->src_tag = buf_tag(gpu_of_host, true);
  } else {
    l->src = c->d[from].buf[0];
    l->src_tag = buf_tag(from, false);
  }
  if (to == GR_BENCH_HOST) {
    struct host_buf *h = &c->d[gpu_of_host].host[1];
    l->dst = eng == GR_ENGINE_SM ? h->dptr : (gr_cu_deviceptr)(uintptr_t)h->p;
    l->dst_host = h->p;
  } else {
    l->dst = c->d[to].buf[1];
  }
  l->peer = from != GR_BENCH_HOST && to != GR_BENCH_HOST && from != to;
}

/* Queues `count` copies of one direction on stream st: `count` copy-engine
 * copies, or one launch of the SM kernel that copies `count` times inside it
 * (no launch gap between copies, as nvbandwidth's loopCount). */
static int issue_copies(struct cuda *c, const struct leg *l, const struct gr_copy_spec *s, gr_cu_stream st, int count)
{
  struct cudev *x = &c->d[l->exec];
  gr_cu_result r = GR_CUDA_SUCCESS;
  if (count <= 0)
    return 0;
  if (s->engine == GR_ENGINE_SM) {
    gr_cu_deviceptr dst = l->dst, src = l->src;
    unsigned long long n16 = s->bytes / 16, loops = (unsigned long long)count;
    void *params[] = {&dst, &src, &n16, &loops};
    unsigned grid = (unsigned)(x->sms > 0 ? x->sms : 1); /* one block of COPY_THREADS per SM */
    r = c->f.LaunchKernel(x->copyk, grid, 1, 1, COPY_THREADS, 1, 1, 0, st, params, NULL);
    return r == GR_CUDA_SUCCESS ? 0 : cu_fail(c, r, "cuLaunchKernel gr_copy", l->exec);
  }
  for (int i = 0; i < count && r == GR_CUDA_SUCCESS; i++) {
    if (l->peer)
      r = c->f.MemcpyPeerAsync(l->dst, c->d[l->to].ctx, l->src, c->d[l->from].ctx, s->bytes, st);
    else
      r = c->f.MemcpyAsync(l->dst, l->src, s->bytes, st);
  }
  return r == GR_CUDA_SUCCESS ? 0 : cu_fail(c, r, l->peer ? "cuMemcpyPeerAsync" : "cuMemcpyAsync", l->exec);
}

/* Queues one direction behind a spin kernel: spin, the untimed warm-up
 * copies (nvbandwidth's WARMUP_COUNT: the link, TLBs and engine are busy
 * when the clock starts), start event, copies, end event. The spin kernel
 * writes its timeout word, flag[1 + slot], if it gives up. */
static int queue_leg(struct cuda *c, const struct leg *l, int dir, int slot, const struct gr_copy_spec *s,
                     gr_cu_event align)
{
  struct cudev *x = &c->d[l->exec];
  gr_cu_stream st = x->s[dir];
  unsigned long long timeout = SPIN_TIMEOUT_NS;
  gr_cu_deviceptr flag = c->flag_dptr, timed_out = c->flag_dptr + (gr_cu_deviceptr)(1 + slot) * sizeof(int);
  void *params[] = {&flag, &timeout, &timed_out};
  int rc = 0;
  if (cuda_use(c, l->exec) != 0)
    return -1;
  CU(c->f.LaunchKernel(x->spin, 1, 1, 1, 1, 1, 1, 0, st, params, NULL), "cuLaunchKernel gr_spin", l->exec);
  if (issue_copies(c, l, s, st, s->warmup) != 0)
    return -1;
  if (align)
    CU(c->f.StreamWaitEvent(st, align, 0), "cuStreamWaitEvent", l->exec);
  CU(c->f.EventRecord(x->ev[dir * 2], st), "cuEventRecord", l->exec);
  if (issue_copies(c, l, s, st, s->loops) != 0)
    return -1;
  CU(c->f.EventRecord(x->ev[dir * 2 + 1], st), "cuEventRecord", l->exec);
out:
  return rc;
}

/* Clears the release flag and every timeout word before a run. */
static void arm_spinners(struct cuda *c)
{
  for (int i = 1; i <= SPIN_SLOTS; i++)
    __atomic_store_n(&c->flag[i], 0, __ATOMIC_SEQ_CST);
  __atomic_store_n(c->flag, 0, __ATOMIC_SEQ_CST);
}

static bool spin_timed_out(struct cuda *c, int slot)
{
  return __atomic_load_n(&c->flag[1 + slot], __ATOMIC_SEQ_CST) != 0;
}

static void release_spinners(struct cuda *c)
{
  __atomic_store_n(c->flag, 1, __ATOMIC_SEQ_CST);
}

static int leg_elapsed(struct cuda *c, const struct leg *l, int dir, double *seconds)
{
  struct cudev *x = &c->d[l->exec];
  float ms = 0;
  int rc = 0;
  if (cuda_use(c, l->exec) != 0)
    return -1;
  CU(c->f.EventSynchronize(x->ev[dir * 2 + 1]), "cuEventSynchronize", l->exec);
  CU(c->f.EventElapsedTime(&ms, x->ev[dir * 2], x->ev[dir * 2 + 1]), "cuEventElapsedTime", l->exec);
  *seconds = ms / 1000.0;
out:
  return rc;
}

/* Clears a destination so that a copy that did not happen cannot pass; a
 * pointer chain laid out there is gone after it. */
static int clear_dst(struct cuda *c, const struct leg *l, size_t bytes)
{
  int rc = 0;
  for (int g = 0; g < c->n; g++)
    if (l->dst_host && l->dst_host == c->d[g].host[1].p)
      c->d[g].host[1].chain_nodes = 0;
  if (l->dst_host) {
    memset(l->dst_host, 0, bytes);
    return 0;
  }
  c->d[l->to].chain_nodes = 0;
  if (cuda_use(c, l->to) != 0)
    return -1;
  CU(c->f.MemsetD32Async(l->dst, 0, bytes / 4, c->d[l->to].s[0]), "cuMemsetD32Async", l->to);
  CU(c->f.StreamSynchronize(c->d[l->to].s[0]), "cuStreamSynchronize", l->to);
out:
  return rc;
}

/* Runs gr_compare over a destination in GPU dev's memory: the count of
 * wrong words, the first wrong index and the word there come back, not the
 * buffer (perf review, item 14). */
static int gpu_compare(struct cuda *c, int dev, gr_cu_deviceptr buf, size_t bytes, unsigned tag, long *count,
                       size_t *first, uint32_t *word)
{
  struct cudev *d = &c->d[dev];
  gr_cu_stream st = d->s[0];
  gr_cu_deviceptr cnt = d->scratch, first_bad = d->scratch + 8;
  unsigned long long nwords = bytes / 4;
  unsigned tag32 = tag;
  void *params[] = {&buf, &nwords, &tag32, &cnt, &first_bad};
  unsigned grid = (unsigned)(d->sms > 0 ? d->sms : 1) * COMPARE_BLOCKS_PER_SM;
  gr_cu_deviceptr res = (gr_cu_deviceptr)(uintptr_t)c->res;
  int rc = 0;
  if (cuda_use(c, dev) != 0)
    return -1;
  CU(c->f.MemsetD32Async(cnt, 0, 2, st), "cuMemsetD32Async", dev);
  CU(c->f.MemsetD32Async(first_bad, 0xffffffffu, 2, st), "cuMemsetD32Async", dev);
  CU(c->f.LaunchKernel(d->comparek, grid, 1, 1, COMPARE_THREADS, 1, 1, 0, st, params, NULL),
     "cuLaunchKernel gr_compare", dev);
  CU(c->f.MemcpyAsync(res, d->scratch, 16, st), "cuMemcpyAsync", dev);
  CU(c->f.StreamSynchronize(st), "cuStreamSynchronize", dev);
  *count = (long)(uint32_t)c->res[0];
  *first = (size_t)c->res[1];
  if (*count > 0 && *first < nwords) {
    CU(c->f.MemcpyAsync(res + 16, buf + *first * 4, 4, st), "cuMemcpyAsync", dev);
    CU(c->f.StreamSynchronize(st), "cuStreamSynchronize", dev);
    memcpy(word, &c->res[2], 4);
  }
out:
  return rc;
}

/* A host destination is in host memory already: compared here. */
static void host_compare(const uint32_t *w, size_t bytes, unsigned tag, long *count, size_t *first, uint32_t *word)
{
  *count = 0;
  for (size_t i = 0; i < bytes / 4; i++)
    if (w[i] != pattern_word(tag, i) && (*count)++ == 0) {
      *first = i;
      *word = w[i];
    }
}

/* Compares a destination with its source's pattern: counts the wrong words
 * and fills the sample on the first wrong byte. */
static int verify_leg(struct cuda *c, const struct leg *l, int dir, size_t bytes, struct gr_copy_sample *out)
{
  long count = 0;
  size_t i = 0;
  uint32_t got = 0;
  if (l->dst_host)
    host_compare(l->dst_host, bytes, l->src_tag, &count, &i, &got);
  else if (gpu_compare(c, l->to, l->dst, bytes, l->src_tag, &count, &i, &got) != 0)
    return -1;
  if (count == 0)
    return 0;
  out->mismatches += count;
  if (!out->corrupt) {
    uint32_t want = pattern_word(l->src_tag, i);
    const unsigned char *g = (const unsigned char *)&got, *e = (const unsigned char *)&want;
    size_t b = 0;
    while (b < 3 && g[b] == e[b])
      b++;
    out->corrupt = true;
    out->corrupt_dir = dir;
    out->bad_offset = i * 4 + b;
    out->expected = e[b];
    out->got = g[b];
  }
  return 0;
}

static int prepare_legs(struct cuda *c, const struct gr_copy_spec *s, struct leg *legs, int *nlegs)
{
  int gpus[2] = {s->src, s->dst};
  for (int k = 0; k < 2; k++)
    if (gpus[k] != GR_BENCH_HOST && ensure_buffers(c, gpus[k], s->bytes) != 0)
      return -1;
  *nlegs = s->reverse ? 2 : 1;
  plan_leg(c, s->src, s->dst, s->engine, s->read, &legs[0]);
  if (s->reverse)
    plan_leg(c, s->dst, s->src, s->engine, s->read, &legs[1]);
  for (int i = 0; i < *nlegs; i++) {
    bool direct = legs[i].peer && cuda_can_peer(c, legs[i].from, legs[i].to);
    if (direct && (enable_peer(c, legs[i].from, legs[i].to) != 0 || enable_peer(c, legs[i].to, legs[i].from) != 0))
      return -1;
    if (legs[i].peer && !direct && s->engine == GR_ENGINE_SM) {
      snprintf(c->err, sizeof(c->err), "the SM copy kernel needs peer access between GPU%d and GPU%d",
               legs[i].from, legs[i].to);
      return -1;
    }
    if (clear_dst(c, &legs[i], s->bytes) != 0)
      return -1;
  }
  return 0;
}

static int timed_run(struct cuda *c, const struct gr_copy_spec *s, struct leg *legs, int nlegs,
                     struct gr_copy_sample *out)
{
  int rc = 0;
  arm_spinners(c);
  for (int i = 0; i < nlegs && rc == 0; i++)
    rc = queue_leg(c, &legs[i], i, i, s, i > 0 ? c->d[legs[0].exec].ev[0] : NULL);
  release_spinners(c); /* always: a queued spin kernel must never be left waiting */
  for (int i = 0; i < nlegs && rc == 0; i++)
    rc = leg_elapsed(c, &legs[i], i, &out->seconds[i]);
  for (int i = 0; i < nlegs && rc == 0; i++)
    out->spin_timeout |= spin_timed_out(c, i);
  for (int i = 0; i < nlegs && rc == 0; i++)
    rc = verify_leg(c, &legs[i], i, s->bytes, out);
  return rc;
}

int cuda_copy(void *state, const struct gr_copy_spec *s, struct gr_copy_sample *out)
{
  struct cuda *c = state;
  struct leg legs[2];
  int nlegs = 0;
  c->err[0] = '\0';
  memset(out, 0, sizeof(*out));
  int rc = prepare_legs(c, s, legs, &nlegs);
  if (rc == 0) {
    out->via_host = legs[0].peer && !c->d[legs[0].from].peer_on[legs[0].to];
    rc = timed_run(c, s, legs, nlegs, out);
  }
  if (rc != 0) {
    probe_lost(c, s->src);
    probe_lost(c, s->dst);
  }
  return rc;
}

/* The legs of every spec queued behind the spinners, released together,
 * then timed and verified: the copies run at the same time. */
static int gang_run(struct cuda *c, const struct gr_copy_spec *specs, int n, struct leg (*legs)[2],
                    const int *nlegs, struct gr_copy_sample *out)
{
  int rc = 0;
  arm_spinners(c);
  for (int i = 0; i < n && rc == 0; i++)
    for (int j = 0; j < nlegs[i] && rc == 0; j++)
      rc = queue_leg(c, &legs[i][j], j, i * 2 + j, &specs[i], j > 0 ? c->d[legs[i][0].exec].ev[0] : NULL);
  release_spinners(c); /* always: a queued spin kernel must never be left waiting */
  for (int i = 0; i < n && rc == 0; i++)
    for (int j = 0; j < nlegs[i] && rc == 0; j++)
      rc = leg_elapsed(c, &legs[i][j], j, &out[i].seconds[j]);
  for (int i = 0; i < n && rc == 0; i++)
    for (int j = 0; j < nlegs[i]; j++)
      out[i].spin_timeout |= spin_timed_out(c, i * 2 + j);
  for (int i = 0; i < n && rc == 0; i++)
    for (int j = 0; j < nlegs[i] && rc == 0; j++)
      rc = verify_leg(c, &legs[i][j], j, specs[i].bytes, &out[i]);
  return rc;
}

int cuda_copy_many(void *state, const struct gr_copy_spec *specs, int n, struct gr_copy_sample *out)
{
  struct cuda *c = state;
  struct leg legs[GR_BENCH_GANG_MAX][2];
  int nlegs[GR_BENCH_GANG_MAX] = {0}, rc = 0;
  c->err[0] = '\0';
  if (n < 1 || n > GR_BENCH_GANG_MAX || gr_gang_overlaps(specs, n)) {
    snprintf(c->err, sizeof(c->err), "copies at once: 1 to %d, each GPU in one of them", GR_BENCH_GANG_MAX);
    return -1;
  }
  for (int i = 0; i < n && rc == 0; i++) {
    memset(&out[i], 0, sizeof(out[i]));
    rc = prepare_legs(c, &specs[i], legs[i], &nlegs[i]);
    if (rc == 0)
      out[i].via_host = legs[i][0].peer && !c->d[legs[i][0].from].peer_on[legs[i][0].to];
  }
  if (rc == 0)
    rc = gang_run(c, specs, n, legs, nlegs, out);
  for (int i = 0; rc != 0 && i < n; i++) {
    probe_lost(c, specs[i].src);
    probe_lost(c, specs[i].dst);
  }
  return rc;
}

/* ---------------------------------------------------------- pointer chase */

static size_t gcd_size(size_t a, size_t b)
{
  while (b) {
    size_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

/* The nodes of a chain over `bytes`, one at the start of each 128-byte
 * line: node i holds the address of node (i + CHASE_STRIDE_NODES) mod n, a
 * single cycle through every line when n and the stride share no factor (n
 * is lowered until they do not), so a line is read again only after all n.
 * Each hop lands 4224 bytes on, in another 4 KiB page, where no prefetcher
 * follows. */
static size_t chain_length(size_t bytes)
{
  size_t n = bytes / CHASE_NODE_BYTES;
  while (n > CHASE_STRIDE_NODES && gcd_size(n, CHASE_STRIDE_NODES) != 1)
    n--;
  return n > CHASE_STRIDE_NODES ? n : 0;
}

static void chain_fill(uint64_t *w, size_t n, gr_cu_deviceptr base)
{
  for (size_t i = 0; i < n; i++)
    w[i * (CHASE_NODE_BYTES / 8)] = base + ((i + CHASE_STRIDE_NODES) % n) * CHASE_NODE_BYTES;
}

/* Lays the chain out in GPU target's buf[1] (through its pinned staging
 * buffer), or in exec's pinned host[1]; kept until a copy lands there. */
static int chain_ready(struct cuda *c, int exec, int target, size_t n, gr_cu_deviceptr *base)
{
  int rc = 0;
  if (target == GR_BENCH_HOST) {
    struct host_buf *h = &c->d[exec].host[1];
    *base = h->dptr;
    if (h->chain_nodes != n) {
      chain_fill(h->p, n, h->dptr);
      h->chain_nodes = n;
    }
    return 0;
  }
  struct cudev *t = &c->d[target];
  *base = t->buf[1];
  if (t->chain_nodes == n)
    return 0;
  if (cuda_use(c, target) != 0)
    return -1;
  chain_fill(t->host[1].p, n, t->buf[1]);
  t->host[1].chain_nodes = 0; /* its own chain, if any, is overwritten */
  CU(c->f.MemcpyAsync(t->buf[1], (gr_cu_deviceptr)(uintptr_t)t->host[1].p, n * CHASE_NODE_BYTES, t->s[0]),
     "cuMemcpyAsync", target);
  CU(c->f.StreamSynchronize(t->s[0]), "cuStreamSynchronize", target);
  t->chain_nodes = n;
out:
  return rc;
}

/* One run of gr_chase: GPU exec follows CHASE_STEPS dependent loads through
 * the chain, starting where the run before it ended, so that no run reads
 * the lines of the one before from a cache. */
static int chase_run(struct cuda *c, int exec, gr_cu_deviceptr base, size_t n, struct gr_chase_sample *out)
{
  struct cudev *x = &c->d[exec];
  unsigned long long steps = CHASE_STEPS;
  size_t at = (size_t)(c->chase_calls++ * CHASE_STEPS % n) * CHASE_STRIDE_NODES % n;
  gr_cu_deviceptr start = base + at * CHASE_NODE_BYTES, result = x->scratch + 16;
  void *params[] = {&start, &steps, &result};
  int rc = 0;
  if (cuda_use(c, exec) != 0)
    return -1;
  CU(c->f.LaunchKernel(x->chasek, 1, 1, 1, 1, 1, 1, 0, x->s[0], params, NULL), "cuLaunchKernel gr_chase", exec);
  CU(c->f.MemcpyAsync((gr_cu_deviceptr)(uintptr_t)c->res, result, 16, x->s[0]), "cuMemcpyAsync", exec);
  CU(c->f.StreamSynchronize(x->s[0]), "cuStreamSynchronize", exec);
  out->ns_per_load = (double)c->res[0] / (double)steps;
  if (c->res[0] == 0) {
    snprintf(c->err, sizeof(c->err), "gr_chase on GPU%d: the GPU's timer did not advance", exec);
    rc = -1;
  }
out:
  return rc;
}

int cuda_chase(void *state, int exec, int target, size_t bytes, struct gr_chase_sample *out)
{
  struct cuda *c = state;
  gr_cu_deviceptr base = 0;
  size_t n = chain_length(bytes);
  int rc = -1;
  c->err[0] = '\0';
  memset(out, 0, sizeof(*out));
  if (n == 0) {
    snprintf(c->err, sizeof(c->err), "a pointer chase needs more than %d x %d bytes", CHASE_STRIDE_NODES,
             CHASE_NODE_BYTES);
    return -1;
  }
  if (target != GR_BENCH_HOST && target != exec && !cuda_can_peer(c, exec, target)) {
    snprintf(c->err, sizeof(c->err), "GPU%d has no peer access to GPU%d's memory", exec, target);
    return -1;
  }
  if (ensure_buffers(c, exec, bytes) == 0 && (target == GR_BENCH_HOST || ensure_buffers(c, target, bytes) == 0) &&
      (target == GR_BENCH_HOST || target == exec || enable_peer(c, exec, target) == 0) &&
      chain_ready(c, exec, target, n, &base) == 0)
    rc = chase_run(c, exec, base, n, out);
  if (rc != 0) {
    probe_lost(c, exec);
    probe_lost(c, target);
  }
  return rc;
}
