/* How gpurig's text reads on a screen: lines wrapped to the terminal, a
 * severity or rating in colour only on a terminal, long sentences cut to
 * their point, and findings that say the same of several GPUs printed once
 * ("GPU0-9: each is a Gen4 device on a Gen3 port"). Every text printer of
 * report, topo, doctor and compare goes through it; --verbose shows the
 * whole sentences.
 *
 * Ownership: gr_text_open returns a stream the caller closes with
 * gr_text_close (which flushes it into the stream it wraps and leaves that
 * one open). Strings written into caller buffers are the caller's. */
#ifndef GPURIG_PRINT_TEXT_H
#define GPURIG_PRINT_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "model/finding.h"

struct gr_text_style {
  int width;     /* columns to wrap to (gr_term_width) */
  bool color;    /* severity and rating words in colour */
  bool verbose;  /* whole sentences, every finding, every detail */
};

/* The style for standard output: its width and whether it takes colour. */
struct gr_text_style gr_text_style_stdout(bool verbose);

/* A stream over out that wraps each line longer than st->width at spaces,
 * continuing under the text after its indentation and its leading
 * severity or rating word ("  warn  ..."). Lines whose text (after that
 * word) holds two spaces in a row or a tab are tables and stay as they are. NULL if
 * the stream cannot be made: write to out itself then. */
FILE *gr_text_open(FILE *out, const struct gr_text_style *st);
/* Flushes and frees the stream; 0, or -1 on a write error of out. */
int gr_text_close(FILE *wrapped);

/* The point of a sentence in at most max columns: its first sentence, then
 * without its parentheses, then cut after the last clause that fits, ending
 * "...". Writes into buf (cap bytes) and returns it. */
const char *gr_text_point(const char *s, size_t max, char *buf, size_t cap);

/* The same for a whole text (a fix, whose action may be its second
 * sentence): GPU lists shortened, then parentheses, then cut. */
const char *gr_text_fit(const char *s, size_t max, char *buf, size_t cap);

/* A verdict's reasons without what a brief line already shows beside them:
 * the lead-ins "Best group of 4: " and "Each GPU runs its own job; ", and
 * leading sentences that repeat the headline all-reduce ("Predicted
 * all-reduce bus bandwidth ...", "With NCCL_P2P_LEVEL=..."). A pointer into
 * reasons; reasons itself when nothing would remain. */
const char *gr_verdict_point(const char *reasons);

/* Display columns of UTF-8 text (one per character). */
size_t gr_text_columns(const char *s);

/* "GPU0-3,6" for the ascending indices v[0..n) after prefix ("GPU", "NIC"). */
const char *gr_index_ranges(const char *prefix, const int *v, size_t n, char *buf, size_t cap);
/* The same for the GPUs marked in in[0..n). */
const char *gr_gpu_ranges(const bool *in, size_t n, char *buf, size_t cap);

/* Findings that say the same thing (the same check, severity and sentence
 * but for the GPU or PCI address in it) form one group. */
struct gr_finding_group {
  size_t first;      /* index of its first finding in the list */
  size_t n;          /* how many say it */
  char who[96];      /* "GPU0-9", or "" when the findings name no GPU */
  char *text;        /* the sentence said once: the first one's, its GPU made "each"; caller frees */
};

/* The groups of fs, worst severity first (fail, warn, error, info, skipped,
 * ok), in list order within one. *out is the caller's
 * (gr_finding_groups_free). Returns the number of groups. */
size_t gr_finding_groups(const struct gr_findings *fs, struct gr_finding_group **out);
void gr_finding_groups_free(struct gr_finding_group *g, size_t n);

/* The groups as brief lines: "  warn  GPU0-9: text" cut to one line, and a
 * "        fix: ..." line for warnings and failures; at most max groups
 * (0: all), with a last line saying how many more and where to see them
 * (hint, e.g. "gpurig report --verbose"). Severities below min are counted,
 * not listed. Returns the lines printed. */
size_t gr_print_finding_groups(FILE *out, const struct gr_findings *fs, const struct gr_text_style *st, size_t max,
                               enum gr_sev min, const char *hint);

#endif
