/* Names for PCI vendor and device ids from the system's pci.ids database
 * (the file lspci uses: /usr/share/misc/pci.ids from Debian's pci.ids
 * package, or $GPURIG_PCI_IDS). The names describe ids, so gpurig's own
 * machine's copy serves any inspected machine. */
#ifndef GPURIG_PCIIDS_H
#define GPURIG_PCIIDS_H

#include <stddef.h>

/* Maps the first pci.ids file that exists, read-only: *db and *len, or NULL
 * and 0 when there is none (names are then unknown, which is no error). The
 * facts loader calls it once and gr_pciids_unmap at exit. Always 0. */
int gr_pciids_map(const char **db, size_t *len);
void gr_pciids_unmap(const char *db, size_t len);

/* The name of a vendor or device, copied into buf (cut to cap); returns buf,
 * or NULL when the id or the database is absent. Pure lookups in the facts'
 * mapping: safe from any thread. */
const char *gr_pciids_vendor(unsigned vendor, char *buf, size_t cap);
const char *gr_pciids_device(unsigned vendor, unsigned device, char *buf, size_t cap);

#endif
