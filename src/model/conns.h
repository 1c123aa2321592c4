/* A GPU's power connectors as a rig file writes them ("2x8pin",
 * "8pin+6pin", "12vhpwr") and as data/power-gpus.tsv gives a model's
 * reference layout: up to GR_CONNS_MAX kinds, each with a count. The
 * words are the grammar's (docs/rig-format.md, "Power"); their ratings
 * are data/power-parts.tsv's connector rows, read by analysis/power.c.
 *
 * Ownership: plain values, nothing allocated. */
#ifndef GPURIG_CONNS_H
#define GPURIG_CONNS_H

#include <stddef.h>

#define GR_CONNS_MAX 4

struct gr_conns {
  int n;                          /* kinds listed; 0: not stated */
  char kind[GR_CONNS_MAX][12];    /* "8pin", "12vhpwr", ... */
  int count[GR_CONNS_MAX];        /* 1 to 8 of each */
};

/* The connector words a GPU's power input may be ("6pin|8pin|..."). */
extern const char *const gr_gpu_conn_words;

/* Parses text ("3x8pin", "8pin+8pin+6pin", "12v-2x6") into c. Returns 0;
 * -1 when it is not one, with the offending term copied into bad (cap
 * bytes) so the caller can name it and suggest the word meant. */
int gr_conns_parse(const char *text, struct gr_conns *c, char *bad, size_t cap);
/* c written back the way gr_conns_parse reads it ("3x8pin"), into buf. */
const char *gr_conns_text(const struct gr_conns *c, char *buf, size_t cap);
/* How many plugs c has of kinds 6pin and 8pin: the ones a PSU cable's
 * PCIe plugs fill. */
int gr_conns_pcie_plugs(const struct gr_conns *c);

#endif
