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

/* A run of lookups (naming every device of one machine): it remembers
 * where each vendor's section lies, so each is found once. A session is its
 * caller's alone; sessions share nothing, so threads may each run one. Start
 * with a zeroed struct, end with gr_pciids_session_free. */
struct gr_pciids_section;
struct gr_pciids_session {
  struct gr_pciids_section *v;
  size_t n, cap;
};
void gr_pciids_session_free(struct gr_pciids_session *s);

/* A vendor's or device's name as a new string the caller frees, or NULL
 * when the id or the database is absent. */
char *gr_pciids_vendor_name(struct gr_pciids_session *s, unsigned vendor);
char *gr_pciids_device_name(struct gr_pciids_session *s, unsigned vendor, unsigned device);

#endif
