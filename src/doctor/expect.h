/* Expectation files for `gpurig doctor --expect FILE`: what a fleet's
 * manifest says one machine must have, so that each node is checked against
 * its own rig rather than against thresholds hard-coded per GPU model.
 *
 *   # rack 3, 8x RTX 3090 nodes
 *   gpus 8
 *   model "RTX 3090"
 *   link gen4 x16
 *   driver 535.104 545.0      # inclusive range; '*' leaves an end open
 *
 * Every key is optional and may appear once. docs/cli.md has the grammar.
 *
 * Ownership: a struct gr_expect owns its strings; free with gr_expect_free. */
#ifndef GPURIG_EXPECT_H
#define GPURIG_EXPECT_H

#include <stddef.h>

#include "base/util.h"

struct gr_expect {
  char *file;                 /* the file it came from */
  int gpus;                   /* -1 unset */
  char *model;                /* catalog model name, NULL unset */
  int link_gen, link_width;   /* 0 unset */
  char *driver_min, *driver_max; /* dotted versions, NULL = open end */
  size_t line_gpus, line_model, line_link, line_driver; /* 0 unset */
};

/* Parses buf (len bytes). Returns 0, or -1 with "NAME:LINE:COL: problem" in
 * err (code GR_EXIT_FAIL) and *e left empty. */
int gr_expect_parse(const char *name, const char *buf, size_t len, struct gr_expect *e, struct gr_err *err);
/* Reads a file through the shared reader (base/file.h: a regular file
 * only, at most 1 MiB) and parses it; errors as above, naming the file. */
int gr_expect_load(const char *path, struct gr_expect *e, struct gr_err *err);
void gr_expect_free(struct gr_expect *e);

#endif
