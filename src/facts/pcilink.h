/* PCIe link arithmetic: generations, sysfs speed strings, bandwidths.
 * The per-generation facts come from data/pcie-links.tsv. */
#ifndef GPURIG_PCILINK_H
#define GPURIG_PCILINK_H

#include <stdbool.h>
#include <stddef.h>

#include "base/util.h"

struct gr_pcie_gen {
  int gen;        /* 1..6 */
  double gts;     /* GT/s per lane */
  int enc_num, enc_den;
  int nccl_code;  /* NCCL: bw_gbps = width * code / 80 */
};

struct gr_table;
/* Reads the rows of data/pcie-links.tsv into gens (at most cap); the facts
 * loader calls it once (facts/facts.h). -1 with err on a bad row. */
int gr_pcie_gens_parse(const struct gr_table *t, struct gr_pcie_gen *gens, size_t cap, size_t *ngens,
                       struct gr_err *err);

/* Generation entry for a gen number or a rate; NULL when unknown. */
const struct gr_pcie_gen *gr_pcie_gen(int gen);
const struct gr_pcie_gen *gr_pcie_gen_by_gts(double gts);
/* DCGM's rule (data/health.tsv aer_ber): the errors a healthy link of this
 * generation and width may count in seconds, one bit error in 1e12 bits;
 * -1 when the generation or width is unknown. */
double gr_pcie_error_allowance(int gen, int width, double seconds);

enum gr_speed_parse { GR_SPEED_OK, GR_SPEED_UNKNOWN, GR_SPEED_INVALID };
/* Parses a sysfs link speed ("8 GT/s", "16.0 GT/s PCIe", "Unknown speed").
 * On OK sets *gen to the generation number. UNKNOWN is the kernel saying it
 * does not know; INVALID is text gpurig has never seen. */
enum gr_speed_parse gr_pcie_parse_speed(const char *s, int *gen);
/* Parses a sysfs link width ("16"); widths 1..32 are valid, 0 means unknown.
 * Returns false for anything else. */
bool gr_pcie_parse_width(const char *s, int *width);

/* Theoretical data rate per direction in GB/s (after line encoding), 0 if unknown. */
double gr_pcie_bw_gbps(int gen, int width);
/* NCCL's effective figure for the same link (width * code / 80), 0 if unknown. */
double gr_pcie_nccl_gbps(int gen, int width);
/* NCCL's figure for a link known only by its theoretical rate (hwloc XML
 * stores only GB/s): NCCL's figure is proportional to GT/s x width, so it
 * follows from the rate once the encoding family is identified. 0 if unknown. */
double gr_pcie_nccl_from_bw(double bw_gbps);

/* Writes "Gen4 x16" (or "Gen? x16") into buf: the one "GenN xW" formatter;
 * a link's label (analysis.h gr_link_label) is built on it. */
const char *gr_pcie_label(int gen, int width, char *buf, int cap);

#endif
