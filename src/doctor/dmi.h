/* SMBIOS memory devices and system slots, read from the raw structure table
 * that Linux exposes as /sys/firmware/dmi/tables/DMI (the table alone, no
 * entry point). Only the structure types that describe installed memory,
 * type 16 (Physical Memory Array) and type 17 (Memory Device), and the
 * expansion slots, type 9 (System Slots), are decoded.
 *
 * Ownership: the parsers copy everything they keep (strings included) into
 * struct gr_dmi_memory / struct gr_dmi_slots; nothing points into the input
 * buffer, which the caller may free right after the call. The caller owns
 * *out and frees it with gr_dmi_memory_free / gr_dmi_slots_free. */
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

/* One type-9 structure (DMTF DSP0134 7.10). As for type 17, a field that lies
 * beyond the structure's formatted length counts as unknown. */
struct gr_dmi_slot {
  char designation[64];   /* string at 0x04, e.g. "SLOT5", "PCIE3"; "" if none; non-printable bytes -> '?' */
  int segment, bus, dev, func; /* PCI address of the slot as the firmware gives it: segment group (WORD at
                                * 0x0D), bus (0x0F), device (bits 7:3 of 0x10) and function (bits 2:0);
                                * all -1 when the structure is shorter than 0x11 bytes (SMBIOS < 2.6).
                                * Each is -1 on its own when its field holds the "not applicable" value:
                                * segment 0xFFFF, bus 0xFF, device/function byte 0xFF (dev and func) */
  unsigned type;          /* slot type byte at 0x05 (0xA5.. PCI Express variants), 0 if absent */
  unsigned data_width;    /* slot data bus width byte at 0x06, 0 if absent */
  unsigned current_usage; /* 0x07: 1 other, 2 unknown, 3 available, 4 in use, 5 unavailable; 0 if absent */
};

struct gr_dmi_slots {
  struct gr_dmi_slot *v;  /* every type-9 structure, in table order; owned */
  size_t n;
};

/* Parses the raw table for type-9 structures, with the same walk and the same
 * failure rules as gr_dmi_parse_memory: returns 0, or -1 with err->msg =
 * "NAME: offset N: problem" or "NAME: empty table" and err->code
 * GR_EXIT_FAIL, leaving *out empty. Never reads outside buf, which the
 * caller may free right after the call. The caller frees *out with
 * gr_dmi_slots_free (also safe on an emptied or zeroed *out). */
int gr_dmi_parse_slots(const char *name, const unsigned char *buf, size_t len, struct gr_dmi_slots *out,
                       struct gr_err *err);
void gr_dmi_slots_free(struct gr_dmi_slots *s);

/* The designation of the first slot (table order) whose segment, bus and
 * device equal the arguments (the function is not compared: a multi-function
 * device sits in one slot), or NULL if none, if s is NULL, or if any argument
 * is negative. The result points into s and lives until gr_dmi_slots_free. */
const char *gr_dmi_slot_of(const struct gr_dmi_slots *s, int segment, int bus, int dev);

#endif
