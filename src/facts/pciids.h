/* Names for PCI vendor and device ids from the system's pci.ids database
 * (the file lspci uses: /usr/share/misc/pci.ids from Debian's pci.ids
 * package, or $GPURIG_PCI_IDS). The names describe ids, so gpurig's own
 * machine's copy serves any inspected machine. */
#ifndef GPURIG_PCIIDS_H
#define GPURIG_PCIIDS_H

/* Returned strings live until the process exits (the database is loaded
 * once and never freed); NULL when the id or the database is absent. */
const char *gr_pciids_vendor(unsigned vendor);
const char *gr_pciids_device(unsigned vendor, unsigned device);

#endif
