/* The block diagram's insides, shared by its files (diagram_model.c,
 * diagram_layout.c, diagram.c, diagram_text.c) and its unit test:
 *  - the model says what is drawn: a tree of sockets, root complexes,
 *    switches and endpoints (bridges folded into the edges, like devices
 *    grouped), with the NVLinks, NVSwitch fabrics and hives beside it;
 *  - the scene says where, in pixels: boxes, lines and texts, each text with
 *    the box it covers (monospace, so its width follows from its length).
 * The SVG writer only serialises a scene, so the test checks what is drawn.
 *
 * Ownership: dg_model_build and dg_layout fill structs that own every
 * string and array in them; free with dg_model_free and dg_scene_free. A
 * model points at its machine, which must outlive it. */
#ifndef GPURIG_PRINT_DIAGRAM_INTERNAL_H
#define GPURIG_PRINT_DIAGRAM_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "analysis/machine.h"

enum dg_kind { DG_CPU, DG_RC, DG_SWITCH, DG_GPU, DG_NIC, DG_NVME, DG_NVSWITCH };

enum { DG_MAX_LINES = 4, DG_MAX_EDGE_LINES = 2 };

struct dg_node {
  enum dg_kind kind;
  int parent;                /* index in the model's nodes, -1 for a CPU */
  int depth;                 /* CPU 0, root complex 1, ... */
  int *members;              /* pci indices it draws (a group of like devices: several); none for a CPU */
  size_t nmembers;
  int gpu;                   /* GPU index (topo->gpus) or -1 */
  int hive;                  /* the GPU's P2P hive or -1 */
  char *line[DG_MAX_LINES];  /* the box's text; line[0] is the title */
  size_t nlines;
  char *edge[DG_MAX_EDGE_LINES]; /* the label of the link from the parent */
  size_t nedge;
  bool edge_bad;             /* a bottleneck, or running below what both ends can do */
  int up_width;              /* switch: its uplink's width, 0 unknown */
  double oversub;            /* switch: downstream lanes over uplink lanes, 0 unknown */
  bool unplaced;             /* CPU: not a socket, the host bridges whose socket is unknown */
  size_t quiet;              /* CPU: root complexes without anything shown; RC: other devices below */
};

/* NVLinks between two GPUs (no NVSwitch between). */
struct dg_nvlink {
  int a, b; /* node indices */
  bool xgmi; /* AMD's GPU links (xGMI), not NVLink */
  char *label;
};

/* One NVSwitch fabric: a box joined to each member GPU. */
struct dg_fabric {
  char *text;    /* the same in one line, for the text diagram */
  char *line[3];
  size_t nlines;
  int *gpus; /* node indices */
  size_t ngpus;
};

struct dg_model {
  const struct gr_machine *m;
  struct dg_node *nodes;
  size_t n, cap;
  struct dg_nvlink *links;
  size_t nlinks;
  struct dg_fabric *fabrics;
  size_t nfabrics;
  char *title;
  char *socket_label;   /* the link between sockets ("UPI · 10 GB/s (NCCL)"), NULL with one socket */
  bool socket_bad;      /* it holds GPU pairs below the best pair */
  char *ring_note;      /* the predicted all-reduce and what bounds it, NULL without predictions */
};

void dg_model_build(const struct gr_machine *m, struct dg_model *d);
void dg_model_free(struct dg_model *d);
/* The hive's GPUs as ranges ("GPU0-3,6") into buf. */
const char *dg_hive_gpus(const struct dg_model *d, int hive, char *buf, size_t cap);
/* What joins a hive's GPUs: "NVLink", "PCIe switch" or "PCIe switches" (static). */
const char *dg_hive_kind(const struct dg_model *d, int hive);

/* Display columns of UTF-8 text (code points; gpurig's labels have no wide
 * characters), and a copy cut to at most cols columns, ending in "…" when cut. */
size_t dg_cols(const char *s);
char *dg_cut(const char *s, size_t cols);

/* ---- the scene ---- */

struct dg_box {
  double x, y, w, h;
};

enum dg_shape { DG_SHAPE_NODE, DG_SHAPE_HIVE, DG_SHAPE_SWATCH, DG_SHAPE_LABEL_BG };

struct dg_rect {
  struct dg_box box;
  enum dg_shape shape;
  int node;          /* DG_SHAPE_NODE: model node index, or -1 - fabric index for a fabric box */
  int hive;          /* DG_SHAPE_HIVE / a hive swatch: the hive; -1 otherwise */
  const char *fill, *stroke; /* static */
};

enum dg_line_kind { DG_LINE_PCIE, DG_LINE_BAD, DG_LINE_NVLINK, DG_LINE_FABRIC, DG_LINE_SOCKET, DG_LINE_SOCKET_BAD };

struct dg_path {
  char *d;           /* SVG path data */
  enum dg_line_kind kind;
};

struct dg_text {
  struct dg_box box; /* what it covers */
  double x, y;       /* anchor point: x at the start or middle, y the baseline */
  bool middle, bold, edge;
  double size;       /* font size, px */
  int node;          /* model node it belongs to, -1 - fabric index in a fabric box, or DG_NO_NODE */
  const char *fill;  /* static */
  char *s;
};
#define DG_NO_NODE (-1000000)

struct dg_scene {
  double w, h;
  struct dg_rect *rects;
  size_t nrects, caprects;
  struct dg_path *paths;
  size_t npaths, cappaths;
  struct dg_text *texts;
  size_t ntexts, captexts;
};

/* Font metrics the layout assumes: DejaVu Sans Mono at DG_FONT px has an
 * advance of 0.6 em for every character, bold or not. */
#define DG_FONT 12.0
#define DG_CHAR_W (0.6 * DG_FONT)
#define DG_LINE_H 15.0

/* Colours (static strings): a node kind's fill and outline, a hive's shade. */
const char *dg_kind_fill(enum dg_kind k);
const char *dg_kind_stroke(enum dg_kind k);
const char *dg_hive_fill(int hive);

void dg_layout(const struct dg_model *d, struct dg_scene *s);
void dg_scene_free(struct dg_scene *s);

/* What the test asks of a scene: texts that overlap each other, node boxes
 * that overlap each other, texts that stray out of their own node's box or
 * into another node's. Counts each; describes the first in why (cap bytes). */
struct dg_overlaps {
  size_t text_text, node_node, text_node;
};
void dg_scene_overlaps(const struct dg_scene *s, struct dg_overlaps *o, char *why, size_t cap);

#endif
