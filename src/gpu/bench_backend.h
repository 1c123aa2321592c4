/* The measurement half of a GPU vendor: a struct of function pointers that
 * times one copy or one all-reduce at a time, on libraries opened at run
 * time (backends/nvidia/cuda_bench.c: libcuda and libnccl; backends/amd/
 * hip_bench.c: libamdhip64 and librccl). It knows nothing
 * of the topology, the analysis or the predictions: the driver in
 * gpu/bench.c holds its figures against those.
 *
 * Ownership: init returns a state the backend owns until shutdown. */
#ifndef GPURIG_BENCH_BACKEND_H
#define GPURIG_BENCH_BACKEND_H

#include <stdbool.h>
#include <stddef.h>

#include "base/dl.h"

#define GR_BENCH_HOST (-1) /* an endpoint that is pinned host memory */
#define GR_BENCH_MAX_SAMPLES 16
#define GR_BENCH_GANG_MAX 16
#define GR_BENCH_UNIQUE_ID_BYTES 128 /* a collective's rendezvous id (NCCL's ncclUniqueId) */ /* copies one copy_many call runs at once */

enum gr_bench_kind {
  GR_BK_H2D,         /* host -> GPU */
  GR_BK_D2H,         /* GPU -> host */
  GR_BK_HOST_BIDIR,  /* both at once; the figure is host -> GPU, reverse_median the other */
  GR_BK_LOCAL,       /* within one GPU's memory (counts one side, as nvbandwidth) */
  GR_BK_P2P,         /* GPU -> GPU */
  GR_BK_P2P_BIDIR,   /* GPU -> GPU while the reverse copy runs */
  GR_BK_LATENCY,     /* small copies, microseconds per copy */
  GR_BK_P2P_READ,    /* GPU -> GPU issued by the destination (pull), nvbandwidth's _read_ tests */
  GR_BK_P2P_BIDIR_READ, /* both pulls at once */
  GR_BK_H2D_ALL,     /* host -> every GPU at once (copy_many); the figure is the sum */
  GR_BK_D2H_ALL,     /* every GPU -> host at once; the sum */
  GR_BK_CHASE,       /* pointer-chase latency (nvbandwidth's _latency_sm): ns per dependent load */
  GR_BK_COUNT
};
enum gr_engine { GR_ENGINE_CE, GR_ENGINE_SM };

/* One timed run asked of the backend. */
struct gr_copy_spec {
  enum gr_bench_kind kind;
  enum gr_engine engine;
  int src, dst;     /* GPU index or GR_BENCH_HOST */
  size_t bytes;     /* per copy */
  int loops;        /* copies per timed run */
  bool reverse;     /* also copy dst -> src at the same time (bidirectional) */
  bool read;        /* GPU -> GPU: issued by the destination GPU (pull), not the source (push) */
  int warmup;       /* untimed copies queued after the spin kernel, before the start event */
  unsigned seed;    /* pattern seed, different for each run */
};

/* What one timed run gave. */
struct gr_copy_sample {
  double seconds[2];   /* elapsed for the copies src->dst, and dst->src when reverse */
  bool via_host;       /* GPU->GPU without peer access: the driver staged it through host memory */
  bool corrupt;        /* the data check after the run failed */
  int corrupt_dir;     /* 0 src->dst, 1 dst->src */
  size_t bad_offset;   /* first wrong byte */
  unsigned char expected, got;
  long mismatches;     /* 32-bit words wrong in the destination(s), from the on-GPU compare; 0 when none */
  bool spin_timeout;   /* the spin kernel gave up before the host released it: the copies were not all
                          queued when the clock started, so this run's figure is not trustworthy */
};

/* One GPU's matrix products in one gemm call. */
struct gr_gemm_sample {
  double seconds;      /* for all the products asked */
  bool wrong;          /* a checked element of the product is not what it must be */
  char what[96];       /* which one: "C[7][0] = 12, must be 11" */
};

/* One all-reduce measurement asked of the backend (nccl-tests' method). */
struct gr_ar_spec {
  size_t bytes;        /* per GPU */
  int warmup;          /* untimed all-reduces first */
  int iters;           /* timed all-reduces (nccl-tests -n) */
  bool in_place;       /* send buffer = receive buffer */
  double *iter_seconds;/* NULL, or iters entries: each iteration's own time (soak mode) */
};

struct gr_ar_sample {
  double seconds;      /* per all-reduce, slowest GPU's events */
  double host_seconds; /* per all-reduce, host clock from a synchronised start to every stream done,
                          averaged over this process's ranks (nccl-tests' timing); 0 unknown */
  long wrong;          /* result elements not equal to the expected sum */
};

/* A measured pointer-chase (GR_BK_CHASE). */
struct gr_chase_sample {
  double ns_per_load;  /* one dependent 8-byte load, in ns */
  bool spin_timeout;
};

/* Whether a GPU is named by two of copy_many's specs (their streams, events
 * and buffers would be shared): the contract below refuses that, for every
 * vendor alike. */
static inline bool gr_gang_overlaps(const struct gr_copy_spec *specs, int n)
{
  for (int i = 0; i < n; i++)
    for (int j = 0; j < i; j++) {
      int a[2] = {specs[i].src, specs[i].dst}, b[2] = {specs[j].src, specs[j].dst};
      for (int x = 0; x < 2; x++)
        for (int y = 0; y < 2; y++)
          if (a[x] != GR_BENCH_HOST && a[x] == b[y])
            return true;
    }
  return false;
}

/* A measurement backend. Calls return 0, or -1 with last_error saying why;
 * device_lost tells whether a GPU stopped answering. */
struct gr_bench_backend {
  const char *name;
  /* Loads the libraries and opens every GPU; on -1 why says what is missing. */
  int (*init)(void **state, char *why, size_t cap);
  void (*shutdown)(void *state);
  const char *(*last_error)(void *state);
  int (*device_count)(void *state);
  int (*device_busid)(void *state, int dev, char *buf, size_t cap);
  /* The NUMA node for GPU dev's pinned host buffers (-1: leave it to the kernel). */
  void (*set_numa)(void *state, int dev, int node);
  bool (*can_peer)(void *state, int a, int b);
  size_t (*free_bytes)(void *state, int dev);  /* 0 unknown */
  int (*copy)(void *state, const struct gr_copy_spec *spec, struct gr_copy_sample *out);
  /* Optional: n timed runs at once (burn-in's load: every GPU's host link,
   * or disjoint GPU pairs, busy together), each started at the same moment
   * and each verified as copy does. No GPU may appear in two specs (-1 with
   * last_error); at most GR_BENCH_GANG_MAX. out[i] is specs[i]'s sample. */
  int (*copy_many)(void *state, const struct gr_copy_spec *specs, int n, struct gr_copy_sample *out);
  bool (*device_lost)(void *state, int dev);
  /* All-reduce over every GPU; allreduce_open returns -1 with why when the
   * collective library is absent or fails to start. */
  int (*allreduce_open)(void *state, size_t max_bytes, char *why, size_t cap);
  int (*allreduce)(void *state, const struct gr_ar_spec *spec, struct gr_ar_sample *out);
  const char *(*collective_name)(void *state); /* "NCCL 2.21.5" */
  /* Optional: how the collective library connects each pair or ring after
   * allreduce_open, one per line ("0 -> 1 P2P/IPC", "ring 0: 0 -> 1 -> 0 via SHM"),
   * as far as the library reveals it; 0 with buf filled, -1 when unknown. */
  int (*transports)(void *state, char *buf, size_t cap); /* on -1, buf says why (or is empty) */
  /* Optional: pointer-chase latency: GPU exec follows a chain of dependent
   * loads through `bytes` of the memory of `target` (a GPU, or GR_BENCH_HOST
   * for pinned host memory on exec's NUMA node). */
  int (*chase)(void *state, int exec, int target, size_t bytes, struct gr_chase_sample *out);
  /* Optional, for an all-reduce across processes (gpurig-mpi bench --mpi):
   * unique_id makes the collective's rendezvous id (GR_BENCH_UNIQUE_ID_BYTES,
   * on one rank, which sends it to the others); allreduce_open_ranks joins
   * this process's GPUs devs[0..ndev-1] to a communicator of nranks ranks as
   * ranks first_rank.. first_rank+ndev-1. Rank r's buffer holds r + 1, so the
   * sum allreduce checks is nranks(nranks+1)/2; allreduce then runs over these
   * GPUs and times the slowest of them. Both load the library themselves. */
  int (*unique_id)(void *state, void *id, char *why, size_t cap);
  int (*allreduce_open_ranks)(void *state, size_t max_bytes, const void *id, int nranks, int first_rank,
                              const int *devs, int ndev, char *why, size_t cap);
  /* Optional: n x n matrix products (fp16 in, fp32 accumulate and out) on
   * several GPUs at once, iters each, then the first column of every
   * product checked against the host's (the inputs are -1, 0 and 1, so the
   * product is exact). gemm_open loads the BLAS library and sizes the
   * buffers (-1 with why when it is absent). */
  int (*gemm_open)(void *state, int n, char *why, size_t cap);
  int (*gemm)(void *state, const int *devs, int ndev, int iters, struct gr_gemm_sample *out);
  /* The collective library's name and how to get it, for findings when it
   * is absent or cannot start. */
  const char *collective;          /* "NCCL" */
  const char *collective_install;  /* "Install NCCL (...)" */
  const char *collective_debug;    /* "NCCL_DEBUG=INFO" */
  /* NULL when the backend runs kernels of its own (the SM copy, the spin
   * kernel, the pointer chase); else why it has none ("HIP cannot load
   * PTX ..."): bench then measures copy-engine copies only and says so. */
  const char *no_kernels;
  const char *blas_install;        /* for a finding when the GEMM library is absent: "install cuBLAS" */
  const char *lost_hint;           /* where to look when a GPU stops answering; NULL: NVIDIA's Xid 79 */
  const char *hide_env;            /* the variable that hides the vendor's GPUs when empty: "CUDA_VISIBLE_DEVICES" */
  /* Optional: the runtime's and the collective library's versions, each
   * loaded only to ask it (no GPU memory, no context: doctor runs it on
   * nodes that may be busy; CUDA's call needs no cuInit, HIP's start its
   * runtime, which lists the GPUs), for doctor's inventory. A library that
   * cannot be opened is absent; one that opens and gives no version is
   * present with an empty version. No state: it needs no init. */
  void (*versions)(struct gr_lib_version *runtime, struct gr_lib_version *collective);
};

#endif
