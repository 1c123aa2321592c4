/* A fleet's nodes as their `gpurig doctor --json` documents describe them
 * (docs/fleet.md): what `gpurig fleet` puts side by side. Each document
 * becomes a node with its facts (the GPUs and NICs by PCI address, their
 * links and models, each GPU's AER and Xid counts; the driver, CUDA, NCCL,
 * IOMMU and ACS), each "unknown" where the report does not know it (an
 * older report has none of the later ones), HIP and RCCL only where the
 * report knows them (doctor asks them on machines with AMD GPUs), and the
 * problems doctor found there.
 *
 * Ownership: gr_fleet_read fills a struct gr_fleet_nodes that owns every
 * node, fact and string in it; free it with gr_fleet_nodes_free. */
#ifndef GPURIG_LOAD_FLEET_H
#define GPURIG_LOAD_FLEET_H

#include <stdbool.h>
#include <stddef.h>

#include "base/util.h"
#include "model/finding.h"

/* One fact of a node: `what` of the device at `where` ("0000:42:00.0",
 * "" for the node itself), with its value as text ("Gen4 x16"). `shown`
 * names the device as the node numbers it ("GPU3 0000:42:00.0"), NULL for
 * the node. */
struct gr_fleet_fact {
  char *where, *what, *value, *shown;
};

struct gr_fleet_node {
  char *name;      /* the hostname, or the file's base name where hostnames repeat or are missing */
  char *file;      /* the document it came from */
  char *hostname;  /* as the document says, NULL if none */
  bool answered;   /* the document was read and is a doctor report */
  char *problem;   /* why not ("node03.json:1:1: not JSON: ..."), NULL when answered */
  struct gr_fleet_fact *facts;
  size_t nfacts;
  struct gr_findings findings; /* doctor's warn, fail and error results on this node */
  size_t ngpus;
  size_t count[GR_SEV_COUNT];  /* doctor's results by severity */
};

struct gr_fleet_nodes {
  struct gr_fleet_node *v;
  size_t n;
};

/* Reads every path: a file is one node's document, a directory gives its
 * *.json files in name order. A document that cannot be read or is not a
 * doctor report is still a node, marked not answered with the problem:
 * one silent node must not hide the others. Returns 0, or -1 with err
 * (GR_EXIT_FAIL) for a path that is neither a file nor a directory, or no
 * node at all. */
int gr_fleet_read(char *const *paths, size_t npaths, struct gr_fleet_nodes *out, struct gr_err *err);

/* Parses one document (text, len bytes; name for messages) into *node,
 * which the caller zeroed. 0, or -1 with node->problem set. Used by
 * gr_fleet_read and the fuzz target. */
int gr_fleet_parse(const char *name, const char *text, size_t len, struct gr_fleet_node *node);

/* Names every node not named yet: its hostname where that is unique among
 * the nodes, else its file's base name without ".json". */
void gr_fleet_name_nodes(struct gr_fleet_nodes *f);

void gr_fleet_node_free(struct gr_fleet_node *node);
void gr_fleet_nodes_free(struct gr_fleet_nodes *f);

#endif
