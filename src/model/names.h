/* What a device is called when gpurig shows it: the GPU model, the name the
 * input recorded, pci.ids' name, or its class. Shared by every printer, so
 * text, JSON and HTML name a device alike. */
#ifndef GPURIG_NAMES_H
#define GPURIG_NAMES_H

#include <stddef.h>

#include "model/topo.h"

/* The display name of node idx: a string of the topology's, a static one,
 * or buf (cap bytes) filled from pci.ids. Valid while t and buf live. */
const char *gr_pci_display_name(const struct gr_topo *t, int idx, char *buf, size_t cap);
/* A vendor's name from pci.ids, copied into buf; NULL when unknown. */
const char *gr_vendor_name(unsigned vendor_id, char *buf, size_t cap);

/* How findings name a device: "GPU1 0000:02:00.0", "root port 0000:00:01.1". */
const char *gr_pci_subject(const struct gr_topo *t, int idx, char *buf, size_t cap);

#endif
