/* What predict.c, predict_ring.c, predict_groups.c and predict_verdict.c
 * share: the ring search's context and hops, and the helpers one file calls
 * in another. Only those files (and unit tests of the ring search) include
 * it. */
#ifndef GR_ANALYSIS_PREDICT_INTERNAL_H
#define GR_ANALYSIS_PREDICT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/predict.h"

/* A hop's resources live in its ctx's pool (one resource id per use), so a
 * hop takes 16 bytes plus 4 per use, not room for the most uses any hop may
 * have. A resource's capacity is the same in every hop that uses it (a PCIe
 * link direction, the socket link, a socket's memory), so it is kept once
 * per resource (ctx res_cap, res_given); only an NVLink hop's two uses carry
 * the pair's own GB/s, kept in the hop.
 *
 * Hops are kept once per ordered pair of GPU classes (analysis/classes.c),
 * built for the class pair's stand-in GPUs: every pair of the same two
 * classes makes the same hop but for its GPUs' own bridges and NVLink ports.
 * Those uses are stored as "own" ids (negative: which end, link or port,
 * place in the GPU's chain, direction) and named for the pair when read
 * (hop_res): at 512 GPUs of 64 switches 2 x 4,096 hops, where 2 x n^2 built
 * and copied 524,288 (83 M instructions). A GPU's hop to itself is kept per
 * GPU (ctx diag). */
struct hop {
  double cap;            /* NVLink hops: the pair's GB/s, each of its two uses' capacity; else 0 */
  uint32_t off;          /* its first use in the ctx's pool (hop_res) */
  uint8_t nres;          /* its uses: at most HOP_MAX_RES */
  bool nvlink;
  uint8_t x;             /* enum gr_xfer: how the bytes go: NVLink, PCIe P2P, through host memory */
};
/* An own use: side 0 the sending GPU's, 1 the receiving GPU's; port 1 its
 * NVLink port, else the link above node pos of its chain; dir 0 up, 1 down. */
#define OWN_RES(side, port, pos, dir) (-1 - ((((pos) * 2 + (port)) * 2 + (dir)) * 2 + (side)))
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
  struct hop *hops;      /* [mode][class a][class b]: mode 0 = NCCL default, 1 = best */
  struct hop *diag;      /* [mode][g]: GPU g to itself (its ids as they are) */
  const int *cls;        /* the analysis's gpu_class */
  size_t nc;             /* its nclasses */
  const int *chain_off, *chain_nodes; /* the analysis's GPU chains (own uses' nodes) */
  int nv_base;           /* the first NVLink port resource: GPU g's are nv_base + 2g (+1 in) */
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
  struct gr_path *near;  /* [class][class]: the path between them (the nearest groups'), NULL until asked */
  int *rank;             /* [class]: the other classes nearest first, rank_want of them, then their
                            lowest GPUs (the nearest groups', predict_groups.c); NULL until asked */
  size_t *rank_n, rank_want;
};

struct ctxs {
  const struct gr_prediction *p;
  struct ctx c[GR_LVL_SYS + 1];
  bool open[GR_LVL_SYS + 1];
};

/* The hop from GPU `from` to GPU `to` in a mode (0 NCCL's default for the
 * ctx's communicator size, 1 with NCCL_P2P_LEVEL raised where P2P runs): its
 * class pair's. Its uses are named for the pair by hop_res. */
static inline const struct hop *hop_of(const struct ctx *c, int mode, int from, int to)
{
  if (from == to)
    return &c->diag[(size_t)mode * c->n + (size_t)from];
  return &c->hops[((size_t)mode * c->nc + (size_t)c->cls[from]) * c->nc + (size_t)c->cls[to]];
}

/* The resource id of use u of hop h as the hop from GPU from to GPU to. */
static inline int hop_res(const struct ctx *c, const struct hop *h, int u, int from, int to)
{
  int r = c->pool_res[h->off + (uint32_t)u];
  if (r >= 0)
    return r;
  unsigned code = (unsigned)(-1 - r);
  int g = code & 1 ? to : from, dir = (int)(code >> 1) & 1;
  if (code & 4)
    return c->nv_base + 2 * g + dir;
  return c->chain_nodes[c->chain_off[g] + (int)(code >> 3)] * 2 + dir;
}

/* The GB/s of a use of hop h on resource res (hop_res), and whether that is
 * already an effective figure (socket link, host memory) rather than a line
 * rate the hop's efficiency scales. */
#define HOP_CAP(c, h, res) ((h)->nvlink ? (h)->cap : (c)->res_cap[res])
#define HOP_GIVEN(c, h, res) (!(h)->nvlink && (c)->res_given[res])
/* The ring efficiency of hop h's kind (calibration's ring_{nvlink,p2p,host}_eff). */
#define HOP_EFF(c, h) ((c)->ring_eff[(h)->x])

/* predict_ring.c */
void build_hop(const struct ctx *c, struct hop *hd, struct hop_build *h, size_t ga, size_t gb,
               enum gr_xfer mode);
void hop_store(struct ctx *c, const struct hop_build *b, struct hop *h);
void predict_nvlink_tables(struct ctx *c);
double best_ring(struct ctx *c, const int *set, size_t k, int mode, int *best);
void describe_ring(struct ctx *c, struct gr_ring *r, size_t k, int mode);
/* The narrowest-hop 2-opt best_ring runs above 32 GPUs on ring (k GPUs,
 * improved in place); prune: skip the reversals an exact bound says cannot
 * win (unit tests compare it with prune false). Returns the ring's value. */
double ring_improve_narrowest(struct ctx *c, int *ring, size_t k, int mode, bool prune);

/* predict_groups.c */
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
/* The search tables for a communicator of k GPUs, opened when first asked
 * for; ctxs_close frees every one opened. */
struct ctx *ctx_for(struct ctxs *cs, size_t k);
void ctxs_close(struct ctxs *cs);

#endif
