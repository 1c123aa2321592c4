/* What predict.c, predict_ring.c and predict_verdict.c share: the ring
 * search's context and hops, and the helpers one file calls in another.
 * Only those three files include it. */
#ifndef GR_ANALYSIS_PREDICT_INTERNAL_H
#define GR_ANALYSIS_PREDICT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/predict.h"

/* A hop's resources live in its ctx's pool (one resource id per use), so a
 * hop takes 16 bytes plus 4 per use, not room for the most uses any hop may
 * have: the n x n table stays small at 512 GPUs. A resource's capacity is
 * the same in every hop that uses it (a PCIe link direction, the socket
 * link, a socket's memory), so it is kept once per resource (ctx res_cap,
 * res_given); only an NVLink hop's two uses carry the pair's own GB/s, kept
 * in the hop. Per use that was 13 bytes (id, GB/s, flag): 31 MB of pools at
 * 512 GPUs, the peak of topo --json. */
struct hop {
  double cap;            /* NVLink hops: the pair's GB/s, each of its two uses' capacity; else 0 */
  uint32_t off;          /* its first use in the ctx's pool (HOP_RES) */
  uint8_t nres;          /* its uses: at most HOP_MAX_RES */
  bool nvlink;
  uint8_t x;             /* enum gr_xfer: how the bytes go: NVLink, PCIe P2P, through host memory */
};
/* A hop's resource ids in ctx c's pool. An offset, not a pointer: 2 x n^2
 * hops of 16 bytes (8 MB at 512 GPUs). */
#define HOP_RES(c, h) ((c)->pool_res + (h)->off)
/* The GB/s of hop h's use r, and whether that is already an effective figure
 * (socket link, host memory) rather than a line rate the hop's efficiency
 * scales. */
#define HOP_CAP(c, h, r) ((h)->nvlink ? (h)->cap : (c)->res_cap[HOP_RES(c, h)[r]])
#define HOP_GIVEN(c, h, r) (!(h)->nvlink && (c)->res_given[HOP_RES(c, h)[r]])
/* The ring efficiency of hop h's kind (calibration's ring_{nvlink,p2p,host}_eff). */
#define HOP_EFF(c, h) ((c)->ring_eff[(h)->x])

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
  double *res_cap;       /* [resource]: its GB/s (NVLink resources: unused, the hop has it) */
  bool *res_given;       /* [resource]: res_cap is already effective (socket link, host memory) */
  double ring_eff[GR_XFER_HOST + 1]; /* [enum gr_xfer]: a hop's ring efficiency, from the calibration */
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
