/* The all-reduce benchmark over a library with NCCL's C API: NCCL itself
 * (backends/nvidia) or RCCL, AMD's port of it (backends/amd), opened at run
 * time. What is the same for both lives here: loading the library, the
 * communicators (one process, or ranks of several for bench --mpi), the
 * timed iterations (nccl-tests' method, with a per-iteration soak), the
 * check of the sums, and the transports read from the library's INFO log.
 * What differs is the GPU runtime under it (CUDA or HIP: memory, streams,
 * events), which the vendor's backend gives as struct gr_ccl_ops.
 *
 * Ownership: struct gr_ccl lives inside the vendor's state; gr_ccl_close
 * frees what the module made (communicators, buffers through ops->free, the
 * log, the library). */
#ifndef GPURIG_BACKENDS_CCL_CCL_H
#define GPURIG_BACKENDS_CCL_CCL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backends/ccl/ccl_api.h"
#include "gpu/bench_backend.h"

/* The GPU runtime under the collective, per GPU of the process. Each
 * returns 0, or -1 with the backend's error text set (gr_ccl.err). */
struct gr_ccl_ops {
  int (*use)(void *be, int dev); /* makes dev the calling thread's current GPU */
  int (*alloc)(void *be, int dev, size_t bytes, void **p);
  void (*free)(void *be, int dev, void *p);
  int (*fill32)(void *be, int dev, void *p, uint32_t word, size_t words); /* queued on dev's stream */
  int (*sync)(void *be, int dev);                                           /* dev's stream idle */
  int (*read)(void *be, int dev, void *host, const void *p, size_t bytes);  /* copies back, waits */
  int (*record)(void *be, int dev, int ev);      /* event ev (0 start, 1 end) on dev's stream */
  int (*elapsed)(void *be, int dev, double *s);  /* waits for event 1: seconds from event 0 */
  /* ncclAllReduce (float sum) on dev's stream, fn being the library's
   * symbol, typed by the vendor (the stream is CUDA's or HIP's) */
  gr_nccl_result (*allreduce)(void *be, void *fn, int dev, const void *send, void *recv, size_t count,
                              gr_nccl_comm comm);
  void (*probe_lost)(void *be, int dev); /* after a failure: marks a GPU that no longer answers */
};

struct gr_ccl_fns {
  gr_pfn_ncclGetVersion GetVersion;
  gr_pfn_ncclGetErrorString GetErrorString;
  gr_pfn_ncclCommInitAll CommInitAll;
  gr_pfn_ncclCommDestroy CommDestroy;
  gr_pfn_ncclGroupStart GroupStart;
  gr_pfn_ncclGroupEnd GroupEnd;
  gr_pfn_ncclGetUniqueId GetUniqueId;
  gr_pfn_ncclCommInitRank CommInitRank;
  void *AllReduce; /* passed to ops->allreduce */
};

struct gr_ccl {
  /* set by the vendor's backend before the first call */
  const char *lib;               /* "NCCL", "RCCL": in messages and the version */
  const char *const *sonames;    /* NULL-terminated, tried in turn */
  const struct gr_ccl_ops *ops;
  void *be;                      /* the backend's state, passed to ops */
  char *err;                     /* the backend's last_error buffer */
  size_t err_cap;
  int ngpus;                     /* GPUs of the process */
  /* the module's own */
  void *dl;
  struct gr_ccl_fns f;
  gr_nccl_comm *comms;           /* one per all-reduce GPU, ar_dev[k]'s */
  int ar_ndev, *ar_dev;          /* the GPUs in the all-reduce: all, or this rank's (bench --mpi) */
  int ar_first, ar_nranks;       /* ar_dev[k] is rank ar_first + k of ar_nranks */
  void **send, **recv;           /* per all-reduce GPU */
  size_t ar_bytes;
  float *check;                  /* host scratch to read results back */
  size_t check_bytes;
  char name[48];                 /* "NCCL 2.21.5" */
  char version[24];              /* "2.21.5"; "" if the library gave none */
  char links[2048];              /* the connections, "0 -> 1 P2P/IPC" a line; or why they are unknown */
  bool links_known;
  char log_dir[256];             /* the INFO log's private directory until the first all-reduce has run, else "" */
};

/* The gr_bench_backend entries of the same names, on the module. */
int gr_ccl_open(struct gr_ccl *c, size_t max_bytes, char *why, size_t cap);
int gr_ccl_unique_id(struct gr_ccl *c, void *id, char *why, size_t cap);
int gr_ccl_open_ranks(struct gr_ccl *c, size_t max_bytes, const void *id, int nranks, int first_rank, const int *devs,
                      int ndev, char *why, size_t cap);
int gr_ccl_allreduce(struct gr_ccl *c, const struct gr_ar_spec *spec, struct gr_ar_sample *out);
int gr_ccl_transports(struct gr_ccl *c, char *buf, size_t cap);
const char *gr_ccl_name(const struct gr_ccl *c);
/* The library's version, the library loaded only to ask it (c needs lib,
 * sonames and ops set, as cuda_ccl_init does; no GPU is used): absent when
 * no soname opens; present without a version when it opens but lacks what
 * gpurig binds or gives none. gr_ccl_close closes the library. */
void gr_ccl_version(struct gr_ccl *c, struct gr_lib_version *out);
/* Destroys the communicators, frees the buffers (each GPU made current
 * first), removes the log if it is still there, closes the library. */
void gr_ccl_close(struct gr_ccl *c);

#endif
