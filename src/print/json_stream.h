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
/* Scalars written straight to the stream, byte for byte what gr_jw_put of
 * the jansson value writes, without making one: the n x n matrices and the
 * pair list are millions of them at 512 GPUs. A string that is not UTF-8 is
 * null, as json_string refuses it. */
void gr_jw_str(struct gr_jw *w, const char *key, const char *s);
void gr_jw_int(struct gr_jw *w, const char *key, long long v);
void gr_jw_bool(struct gr_jw *w, const char *key, bool v);
void gr_jw_null(struct gr_jw *w, const char *key);
/* gr_json_positive(v, decimals) (print/common.h): v rounded to decimals
 * places as a real, null unless v > 0. */
void gr_jw_positive(struct gr_jw *w, const char *key, double v, int decimals);

/* JSON lines (watch --json): one compact object per line, written straight
 * to the stream with no allocation at all, byte for byte what jansson's
 * json_dumpf(JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15))
 * writes for the same values. Keys are the caller's plain ASCII. */
struct gr_jl {
  FILE *out;
  int level;
  bool more[GR_JW_DEPTH + 1]; /* a member was written in this open container */
  bool array[GR_JW_DEPTH + 1];
};
void gr_jl_begin(struct gr_jl *l, FILE *out);   /* "{" */
void gr_jl_end(struct gr_jl *l);                /* "}" and the newline */
void gr_jl_object(struct gr_jl *l, const char *key); /* key NULL: an element of the open array */
void gr_jl_array(struct gr_jl *l, const char *key);
void gr_jl_close(struct gr_jl *l);
/* A string as gr_json_text makes it: NULL is null; text that is not UTF-8
 * has its bytes above 0x7f and below 0x20 written as '?'. */
void gr_jl_text(struct gr_jl *l, const char *key, const char *s);
void gr_jl_int(struct gr_jl *l, const char *key, long long v);
/* v as json_real prints it at 15 digits; null when not finite. */
void gr_jl_real(struct gr_jl *l, const char *key, double v);
void gr_jl_bool(struct gr_jl *l, const char *key, bool v);
void gr_jl_null(struct gr_jl *l, const char *key);

#endif
