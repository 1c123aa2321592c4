/* What predict.c, predict_ring.c and predict_verdict.c share: the ring
 * search's context and hops, and the helpers one file calls in another.
 * Only those three files include it. */
#ifndef GR_ANALYSIS_PREDICT_INTERNAL_H
#define GR_ANALYSIS_PREDICT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/predict.h"

/* A hop's resources live in its ctx's pools (one entry per resource use),
 * so a hop takes a few dozen bytes plus its uses, not room for the most
 * uses any hop may have: the n x n table stays small at 256 GPUs. */
struct hop {
  double eff;
  uint32_t off;          /* its first use in the ctx's pools (HOP_RES, HOP_CAP, HOP_EFF) */
  uint8_t nres;          /* its uses: at most HOP_MAX_RES */
  bool nvlink;
  uint8_t x;             /* enum gr_xfer: how the bytes go: NVLink, PCIe P2P, through host memory */
};
/* A hop's uses in ctx c's pools: resource ids, GB/s of each, and whether the
 * capacity is already an effective figure (socket link, host memory). An
 * offset, not three pointers: 16 bytes a hop, 2 x n^2 hops (8 MB at 512 GPUs,
 * where pointers made it 25 MB). */
#define HOP_RES(c, h) ((c)->pool_res + (h)->off)
#define HOP_CAP(c, h) ((c)->pool_cap + (h)->off)
#define HOP_EFF(c, h) ((c)->pool_eff + (h)->off)

/* A hop while it is built, before its resources move to the pools. */
#define HOP_MAX_RES 48
struct hop_build {
  int nres;
  int res[HOP_MAX_RES];
  double cap[HOP_MAX_RES];
  bool effective[HOP_MAX_RES];
};

struct ctx {
  const struct gr_topo *t;
  const struct gr_analysis *a;
  size_t n, nres;
  struct hop *hops;      /* [mode][a][b]: mode 0 = NCCL default, 1 = best */
  int *pool_res;         /* every hop's resource uses, hop after hop */
  double *pool_cap;
  bool *pool_eff;
  size_t npool, pool_cap_n;
  int *count;            /* ring_busbw's scratch counts, all zero between calls */
  int *pcount;           /* the ring search's counts on its fixed stretch, */
  int *out_left, *in_left; /* and the uses certain for the GPUs still to send, to receive */
  double socket_gbps;
  enum gr_level level;   /* NCCL's default P2P level behind mode 0 (it depends on the communicator's size) */
  bool modes_differ;     /* some pair moves differently in mode 0 and mode 1 */
  const double *nv_direct; /* [g][h]: direct NVLink GB/s between two GPUs (the analysis's) */
  const double *nv_fabric; /* [g]: GPU's NVLink GB/s into NVSwitches (the analysis's) */
  int *nvls_fabric;      /* [g]: 1 + the NVLink-SHARP-capable fabric the GPU is on, 0 none */
  bool nvls_nccl;        /* the NCCL version has NVLS (2.17 and later) */
};

struct ctxs {
  const struct gr_prediction *p;
  struct ctx c[GR_LVL_SYS + 1];
  bool open[GR_LVL_SYS + 1];
};

/* predict_ring.c */
const struct hop *hop_of(const struct ctx *c, int mode, int from, int to);
void build_hop(const struct ctx *c, struct hop *hd, struct hop_build *h, size_t ga, size_t gb,
               enum gr_xfer mode);
void hop_store(struct ctx *c, const struct hop_build *b, struct hop *h);
void predict_nvlink_tables(struct ctx *c);
double best_ring(struct ctx *c, const int *set, size_t k, int mode, int *best);
void describe_ring(struct ctx *c, struct gr_ring *r, size_t k, int mode);
double best_group(struct ctx *c, size_t k, int mode, int *best_order);

/* predict_verdict.c */
void nic_notes(struct gr_prediction *p);
void count_hops(const struct ctx *c, struct gr_ring *r, size_t k, int mode);
void training_verdict(struct ctx *c, struct gr_prediction *p);
const char *level_needed(const struct ctx *c, const int *order, size_t k);
void tp_verdict(struct ctxs *cs, struct gr_prediction *p, size_t k);
void jobs_verdict(struct gr_prediction *p);

/* predict.c */
/* Adds a placement note: an info finding with a stable id, about PCI node
 * `node` of p->t (-1: the machine). */
void predict_note(struct gr_prediction *p, const char *id, int node, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void add_verdict(struct gr_prediction *p, const char *workload, int gpus, enum gr_rating r, const char *reasons);
struct ctx *ctx_for(struct ctxs *cs, size_t k);

#endif
