/* The GPU catalog (data/gpus.tsv): what each GPU model brings, with sources. */
#ifndef GPURIG_CATALOG_H
#define GPURIG_CATALOG_H

#include <stdbool.h>
#include <stddef.h>

#include "base/util.h"

enum gr_p2p_default { GR_P2P_NO, GR_P2P_YES, GR_P2P_DRIVER };

struct gr_gpu_model {
  const char *model;        /* "RTX 3090" */
  const char *vendor;       /* "nvidia", "amd" */
  const char *arch;         /* "sm86", "gfx1100" */
  double mem_gib;
  double mem_bw_gbps;
  double fp16_tflops;       /* dense, FP16 accumulate */
  double fp16_fp32acc_tflops;
  double tdp_w;
  int pcie_gen;
  const char *link;         /* "nvlink", "xgmi", "none" */
  int links;
  double link_gbps;         /* all links, per direction */
  enum gr_p2p_default p2p;
  const char *form;         /* "pcie", "sxm4", "oam" */
  const char *board;        /* "none", "bridge", "hcm", "mesh", "nvswitch" (data/gpus.tsv) */
  int link_gen;             /* NVLink generation, 0 none */
  int cc_major, cc_minor;   /* CUDA compute capability, 0 unknown (AMD) */
  double int8_tops;         /* dense INT8 TOPS of its int8 path (tensor cores, else dp4a); 0 none known */
  const char *pci_ids;      /* "10de:2204 ..." */
  const char *mem_type;     /* "gddr6x", "hbm3e": one of the words gpus.tsv's header lists */
  double boost_mhz;         /* the boost clock the vendor's spec sheet states; 0 not published */
  int sm_count;             /* streaming multiprocessors (NVIDIA) or compute units (AMD); 0 unknown */
  const char *source;
};

struct gr_table;
/* Reads the rows of data/gpus.tsv into a new array (*out, n entries, the
 * caller frees it; its strings point into table). The facts loader calls it
 * once (facts/facts.h). -1 with err naming the line of a bad row. */
int gr_catalog_parse(const struct gr_table *table, struct gr_gpu_model **out, size_t *n, struct gr_err *err);
/* Looks a model up by name, case-insensitively, then ignoring spaces, hyphens
 * and underscores too ("RTX3090" is "RTX 3090"); NULL if absent or NULL. The
 * entry lives as long as the facts. */
const struct gr_gpu_model *gr_catalog_find(const char *model);
/* The catalog name closest to one that is not in it ("RTX 309": "RTX 3090"),
 * or NULL when none is close (base/suggest.h). Lives as long as the facts. */
const char *gr_catalog_closest(const char *model);
/* The entry whose pci_ids list vendor:device, or NULL. */
const struct gr_gpu_model *gr_catalog_find_pci(unsigned vendor, unsigned device);
/* Whether the model's memory is stacked HBM (hbm2 .. hbm3e) rather than GDDR
 * on the board: what tells a data-centre part's memory system from a card's. */
bool gr_gpu_mem_is_hbm(const struct gr_gpu_model *m);

#endif
