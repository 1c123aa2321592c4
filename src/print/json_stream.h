/* A JSON document written as it is produced, byte for byte as jansson's
 * json_dumpf(JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10))
 * would write the same tree (gr_json_print), without the tree: the members
 * and elements are small jansson values dumped and freed one by one, so a
 * 512-GPU topology's 60 MB of matrices never sit in memory at once.
 *
 * Ownership: every json_t passed in is taken (freed here); the writer owns
 * nothing beyond its own struct, which lives on the caller's stack. */
#ifndef GPURIG_PRINT_JSON_STREAM_H
#define GPURIG_PRINT_JSON_STREAM_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#define GR_JW_DEPTH 16

struct gr_jw {
  FILE *out;
  int level;                       /* containers open */
  unsigned long n[GR_JW_DEPTH + 1]; /* members written in each open container */
  bool array[GR_JW_DEPTH + 1];      /* which open containers are arrays */
};

/* Starts the document's root object on out. */
void gr_jw_begin(struct gr_jw *w, FILE *out);
/* Closes the root object and ends the line (as gr_json_print). */
void gr_jw_end(struct gr_jw *w);
/* One member of the open object (key) or element of the open array (key
 * NULL): v, taken; a NULL v (jansson out of memory) is written as null. */
void gr_jw_put(struct gr_jw *w, const char *key, json_t *v);
/* Opens an object or array as a member (key) or element (NULL) of the open
 * container; gr_jw_close closes the innermost one. */
void gr_jw_object(struct gr_jw *w, const char *key);
void gr_jw_array(struct gr_jw *w, const char *key);
void gr_jw_close(struct gr_jw *w);

#endif
