/* The copy benchmarks on HIP: timed copy legs (the copy engines, one run or
 * a gang at a time) and their verification (hip_bench.c says what differs
 * from the CUDA backend). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "backends/amd/hip_api.h"
#include "backends/amd/hip_internal.h"

struct leg {       /* one direction of a timed run */
  int from, to;    /* endpoints (GPU or host) */
  int exec;        /* GPU whose stream issues it */
  void *src, *dst;
  uint32_t *dst_host; /* destination in host memory, else NULL */
  unsigned src_tag;
  bool peer;       /* GPU -> other GPU */
};

static int enable_peer(struct hip *h, int a, int b)
{
  if (h->d[a].peer_on[b])
    return 0;
  if (hip_use(h, a) != 0)
    return -1;
  gr_hip_error r = h->f.DeviceEnablePeerAccess(b, 0);
  if (r != GR_HIP_SUCCESS && r != GR_HIP_ERROR_PEER_ACCESS_ALREADY_ENABLED)
    return hip_fail(h, r, "hipDeviceEnablePeerAccess", a);
  h->d[a].peer_on[b] = true;
  return 0;
}

/* Source and destination of one direction. Host endpoints use the pinned
 * buffers of the GPU at the other end (on that GPU's NUMA node). A copy
 * between two GPUs is issued by the source (push) unless read: then the
 * destination's stream issues it (pull). */
static void plan_leg(struct hip *h, int from, int to, bool read, struct leg *l)
{
  int gpu_of_host = from == GR_BENCH_HOST ? to : from;
  memset(l, 0, sizeof(*l));
  l->from = from;
  l->to = to;
  l->exec = from == GR_BENCH_HOST || (read && to != GR_BENCH_HOST) ? to : from;
  if (from == GR_BENCH_HOST) {
    l->src = h->d[gpu_of_host].host[0];
    l->src_tag = hip_buf_tag(gpu_of_host, true);
  } else {
    l->src = h->d[from].buf[0];
    l->src_tag = hip_buf_tag(from, false);
  }
  if (to == GR_BENCH_HOST) {
    l->dst = h->d[gpu_of_host].host[1];
    l->dst_host = l->dst;
  } else {
    l->dst = h->d[to].buf[1];
  }
  l->peer = from != GR_BENCH_HOST && to != GR_BENCH_HOST && from != to;
}

static int issue_copies(struct hip *h, const struct leg *l, size_t bytes, gr_hip_stream st, int count)
{
  gr_hip_error r = GR_HIP_SUCCESS;
  for (int i = 0; i < count && r == GR_HIP_SUCCESS; i++) {
    if (l->peer)
      r = h->f.MemcpyPeerAsync(l->dst, l->to, l->src, l->from, bytes, st);
    else
      r = h->f.MemcpyAsync(l->dst, l->src, bytes, GR_HIP_MEMCPY_DEFAULT, st);
  }
  return r == GR_HIP_SUCCESS ? 0 : hip_fail(h, r, l->peer ? "hipMemcpyPeerAsync" : "hipMemcpyAsync", l->exec);
}

/* Queues one direction: the untimed warm-up copies, start event, copies,
 * end event; align (the first leg's start event) makes a second leg start
 * with the first. */
static int queue_leg(struct hip *h, const struct leg *l, int dir, const struct gr_copy_spec *s, gr_hip_event align)
{
  struct hipdev *x = &h->d[l->exec];
  gr_hip_stream st = x->s[dir];
  int rc = 0;
  if (hip_use(h, l->exec) != 0 || issue_copies(h, l, s->bytes, st, s->warmup) != 0)
    return -1;
  if (align)
    HIP(h->f.StreamWaitEvent(st, align, 0), "hipStreamWaitEvent", l->exec);
  HIP(h->f.EventRecord(x->ev[dir * 2], st), "hipEventRecord", l->exec);
  if (issue_copies(h, l, s->bytes, st, s->loops) != 0)
    return -1;
  HIP(h->f.EventRecord(x->ev[dir * 2 + 1], st), "hipEventRecord", l->exec);
out:
  return rc;
}

static int leg_elapsed(struct hip *h, const struct leg *l, int dir, double *seconds)
{
  struct hipdev *x = &h->d[l->exec];
  float ms = 0;
  int rc = 0;
  if (hip_use(h, l->exec) != 0)
    return -1;
  HIP(h->f.EventSynchronize(x->ev[dir * 2 + 1]), "hipEventSynchronize", l->exec);
  HIP(h->f.EventElapsedTime(&ms, x->ev[dir * 2], x->ev[dir * 2 + 1]), "hipEventElapsedTime", l->exec);
  *seconds = ms / 1000.0;
out:
  return rc;
}

/* Clears a destination so that a copy that did not happen cannot pass. */
static int clear_dst(struct hip *h, const struct leg *l, size_t bytes)
{
  int rc = 0;
  if (l->dst_host) {
    memset(l->dst_host, 0, bytes);
    return 0;
  }
  if (hip_use(h, l->to) != 0)
    return -1;
  HIP(h->f.MemsetD32Async(l->dst, 0, bytes / 4, h->d[l->to].s[0]), "hipMemsetD32Async", l->to);
  HIP(h->f.StreamSynchronize(h->d[l->to].s[0]), "hipStreamSynchronize", l->to);
out:
  return rc;
}

static void compare(const uint32_t *w, size_t bytes, unsigned tag, long *count, size_t *first, uint32_t *word)
{
  *count = 0;
  for (size_t i = 0; i < bytes / 4; i++)
    if (w[i] != hip_pattern_word(tag, i) && (*count)++ == 0) {
      *first = i;
      *word = w[i];
    }
}

/* A destination in GPU memory, copied back to pinned host memory on the
 * destination GPU's stream (HIP has no PTX: no compare on the GPU). */
static int read_back(struct hip *h, const struct leg *l, size_t bytes)
{
  int rc = 0;
  if (hip_ensure_check(h, bytes) != 0 || hip_use(h, l->to) != 0)
    return -1;
  HIP(h->f.MemcpyAsync(h->check, l->dst, bytes, GR_HIP_MEMCPY_DEFAULT, h->d[l->to].s[0]), "hipMemcpyAsync", l->to);
  HIP(h->f.StreamSynchronize(h->d[l->to].s[0]), "hipStreamSynchronize", l->to);
out:
  return rc;
}

/* Compares a destination with its source's pattern: counts the wrong words
 * and fills the sample on the first wrong byte. */
static int verify_leg(struct hip *h, const struct leg *l, int dir, size_t bytes, struct gr_copy_sample *out)
{
  long count = 0;
  size_t i = 0;
  uint32_t got = 0;
  if (!l->dst_host && read_back(h, l, bytes) != 0)
    return -1;
  compare(l->dst_host ? l->dst_host : h->check, bytes, l->src_tag, &count, &i, &got);
  if (count == 0)
    return 0;
  out->mismatches += count;
  if (!out->corrupt) {
    uint32_t want = hip_pattern_word(l->src_tag, i);
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

static int prepare_legs(struct hip *h, const struct gr_copy_spec *s, struct leg *legs, int *nlegs)
{
  int gpus[2] = {s->src, s->dst};
  if (s->engine != GR_ENGINE_CE) {
    snprintf(h->err, sizeof(h->err), "the HIP backend has no SM copy kernel");
    return -1;
  }
  for (int k = 0; k < 2; k++)
    if (gpus[k] != GR_BENCH_HOST && hip_ensure_buffers(h, gpus[k], s->bytes) != 0)
      return -1;
  *nlegs = s->reverse ? 2 : 1;
  plan_leg(h, s->src, s->dst, s->read, &legs[0]);
  if (s->reverse)
    plan_leg(h, s->dst, s->src, s->read, &legs[1]);
  for (int i = 0; i < *nlegs; i++) {
    bool direct = legs[i].peer && hip_can_peer(h, legs[i].from, legs[i].to);
    if (direct && (enable_peer(h, legs[i].from, legs[i].to) != 0 || enable_peer(h, legs[i].to, legs[i].from) != 0))
      return -1;
    if (clear_dst(h, &legs[i], s->bytes) != 0)
      return -1;
  }
  return 0;
}

/* The legs of every spec queued, then timed and verified: the copies of a
 * gang run at the same time, each stream starting as its copies arrive. */
static int gang_run(struct hip *h, const struct gr_copy_spec *specs, int n, struct leg (*legs)[2], const int *nlegs,
                    struct gr_copy_sample *out)
{
  int rc = 0;
  for (int i = 0; i < n && rc == 0; i++)
    for (int j = 0; j < nlegs[i] && rc == 0; j++)
      rc = queue_leg(h, &legs[i][j], j, &specs[i], j > 0 ? h->d[legs[i][0].exec].ev[0] : NULL);
  for (int i = 0; i < n && rc == 0; i++)
    for (int j = 0; j < nlegs[i] && rc == 0; j++)
      rc = leg_elapsed(h, &legs[i][j], j, &out[i].seconds[j]);
  for (int i = 0; i < n && rc == 0; i++)
    for (int j = 0; j < nlegs[i] && rc == 0; j++)
      rc = verify_leg(h, &legs[i][j], j, specs[i].bytes, &out[i]);
  return rc;
}

int hip_copy(void *state, const struct gr_copy_spec *s, struct gr_copy_sample *out)
{
  return hip_copy_many(state, s, 1, out);
}

int hip_copy_many(void *state, const struct gr_copy_spec *specs, int n, struct gr_copy_sample *out)
{
  struct hip *h = state;
  struct leg legs[GR_BENCH_GANG_MAX][2];
  int nlegs[GR_BENCH_GANG_MAX] = {0}, rc = 0;
  h->err[0] = '\0';
  if (n < 1 || n > GR_BENCH_GANG_MAX || gr_gang_overlaps(specs, n)) {
    snprintf(h->err, sizeof(h->err), "copies at once: 1 to %d, each GPU in one of them", GR_BENCH_GANG_MAX);
    return -1;
  }
  for (int i = 0; i < n && rc == 0; i++) {
    memset(&out[i], 0, sizeof(out[i]));
    rc = prepare_legs(h, &specs[i], legs[i], &nlegs[i]);
    if (rc == 0)
      out[i].via_host = legs[i][0].peer && !h->d[legs[i][0].from].peer_on[legs[i][0].to];
  }
  if (rc == 0)
    rc = gang_run(h, specs, n, legs, nlegs, out);
  for (int i = 0; rc != 0 && i < n; i++) {
    hip_probe_lost(h, specs[i].src);
    hip_probe_lost(h, specs[i].dst);
  }
  return rc;
}
