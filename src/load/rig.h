/* Rig files: a machine described at block-diagram level (docs/rig-format.md),
 * loaded into the same topology model as a live machine. */
#ifndef GPURIG_RIG_H
#define GPURIG_RIG_H

#include <stddef.h>

#include "model/topo.h"
#include "base/util.h"

/* Parses text (len bytes, from file `name`) into *t. On error returns -1
 * with "NAME:LINE:COL: problem" in err (code GR_EXIT_FAIL) and *t empty.
 * The caller frees *t. */
int gr_rig_parse(const char *name, const char *text, size_t len, struct gr_topo *t, struct gr_err *err);

/* Loads a rig by path, or by name from data/rigs/ ("wopr" -> data/rigs/wopr.rig).
 * A path has a '/', is "-" (standard input), or is a FILE.rig that exists;
 * any other word is a name: "wopr.rig" is wopr, and a name that differs from
 * a bundled one only in case, spaces, hyphens or underscores ("WOPR") is that
 * one. A name that is none: -1 with "NAME: no rig of that name; did you mean
 * 'CLOSEST'?" in err. */
int gr_load_rig(const char *path_or_name, struct gr_topo *t, struct gr_err *err);
/* The same, with the option that named the rig ("--rig") before the name in
 * that error; option NULL: none. */
int gr_load_rig_as(const char *option, const char *path_or_name, struct gr_topo *t, struct gr_err *err);

/* Options that change a rig after loading (compare --gpu): replaces every
 * GPU's model with `model` (its PCIe generation and P2P default from the
 * catalog). NVLink stays consistent with the new model: a model without
 * NVLink drops every NVLink and fabric; otherwise each link is counted at
 * the new model's rate, every fabric member gets all its links, and direct
 * links it cannot carry (more than its catalog links on a GPU) are dropped
 * with a warning in t->warnings. When that changes any GPU's model, the
 * rig's price stops describing the machine: it moves to t->rig->own_price
 * and t->rig->price becomes 0 (unknown). Returns -1 if the model is unknown. */
int gr_rig_replace_gpus(struct gr_topo *t, const char *model, struct gr_err *err);

/* n GPUs of a catalog model on a generic single-socket board, one x16 root
 * port each (plan --gpu MODEL --gpus N), described as a rig so the same
 * loader, analysis and prediction apply. -1 with err for an unknown model
 * or a count outside 1..64. */
int gr_rig_generic(const char *model, int n, struct gr_topo *t, struct gr_err *err);

#endif
