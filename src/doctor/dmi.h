/* SMBIOS memory devices, read from the raw structure table that Linux exposes
 * as /sys/firmware/dmi/tables/DMI (the table alone, no entry point). Only the
 * two structure types that describe installed memory are decoded: type 16
 * (Physical Memory Array) and type 17 (Memory Device).
 *
 * Ownership: the parser copies everything it keeps (strings included) into
 * struct gr_dmi_memory; nothing points into the input buffer, which the
 * caller may free right after the call. The caller owns *out and frees it
 * with gr_dmi_memory_free. */
#ifndef GPURIG_DMI_H
#define GPURIG_DMI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/util.h"

/* One type-17 structure. A field that lies beyond the structure's formatted
 * length (older SMBIOS versions have shorter structures) counts as unknown. */
struct gr_dimm {
  char locator[64];       /* device locator string, "" if none; non-printable bytes replaced by '?' */
  char bank[64];          /* bank locator string, "" if none */
  int array;              /* index (0-based, in table order) of the type-16 array it belongs to, -1 unknown */
  bool populated;         /* a module is installed (size != 0); also true when the size is unknown */
  bool size_known;        /* false when Size is 0xFFFF or absent */
  uint64_t size_mib;      /* when populated and size_known (sizes given in KiB are rounded down) */
  unsigned speed_mts;     /* configured speed if given, else speed; 0 unknown */
  unsigned mem_type;      /* SMBIOS memory type byte, 0 unknown */
};

struct gr_dmi_memory {
  size_t narrays;          /* type-16 structures seen */
  struct gr_dimm *dimms;   /* every type-17 structure, in table order; owned */
  size_t ndimms;
};

/* Parses the raw table (len bytes at buf). name is used in error messages.
 * Returns 0, or -1 with err->msg = "NAME: offset N: problem" (N is the
 * decimal byte offset of the structure at fault: truncated structure,
 * formatted length < 4, string set not terminated), or "NAME: empty table"
 * for zero bytes, and err->code GR_EXIT_FAIL; on failure *out is left empty.
 * The walk stops at type 127 (end of table); a table that ends exactly at a
 * structure boundary without one is fine. Never reads outside buf.
 * The caller frees *out with gr_dmi_memory_free. */
int gr_dmi_parse_memory(const char *name, const unsigned char *buf, size_t len, struct gr_dmi_memory *out,
                        struct gr_err *err);
void gr_dmi_memory_free(struct gr_dmi_memory *m);

/* "DDR4", "DDR5", "DDR3", ... or NULL for values with no DRAM generation
 * name (0, "Other", "Unknown", unassigned). Returns a static string. */
const char *gr_dmi_mem_type_name(unsigned t);

#endif
