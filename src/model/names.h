/* What a device is called when gpurig shows it: the GPU model, the name the
 * input recorded, pci.ids' name, or its class. Shared by every printer, so
 * text, JSON and HTML name a device alike. */
#ifndef GPURIG_NAMES_H
#define GPURIG_NAMES_H

#include <stddef.h>

#include "facts/pciids.h"
#include "model/topo.h"

/* A run of naming (one printer's output): the names it looked up in
 * pci.ids, each looked up once. It belongs to its caller, so printers on
 * different threads never share one. Start zeroed; gr_names_free frees the
 * names it handed out. */
struct gr_names {
  struct gr_pciids_session db;
  struct {
    unsigned vendor, device;
    char *name;
  } *v;
  size_t n, cap;
};
void gr_names_free(struct gr_names *n);

/* The display name of node idx: a string of the topology's, a static one,
 * or one of n's. Valid while t and n live. */
const char *gr_pci_display_name(const struct gr_topo *t, int idx, struct gr_names *n);
/* The vendor's name: the input's, else pci.ids'; NULL when unknown. */
const char *gr_pci_vendor_name(const struct gr_pci *p, struct gr_names *n);

/* How findings name a device: "GPU1 0000:02:00.0", "root port 0000:00:01.1". */
const char *gr_pci_subject(const struct gr_topo *t, int idx, char *buf, size_t cap);

#endif
