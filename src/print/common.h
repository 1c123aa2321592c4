/* What every printer shares: JSON numbers, strings and output, the line that
 * names the machine, and the loader's warnings. Printers include this and
 * their own report's header, never another printer.
 *
 * Ownership: a json_t returned here is the caller's (json_decref). */
#ifndef GPURIG_PRINT_COMMON_H
#define GPURIG_PRINT_COMMON_H

#include <stdio.h>

#include <jansson.h>

#include "model/topo.h"

/* A JSON number rounded to `decimals` places (half away from zero). */
json_t *gr_json_rounded(double v, int decimals);
/* The same, or null when v <= 0 (a rate or price that is not known). */
json_t *gr_json_positive(double v, int decimals);
/* A JSON string, null for NULL; text that is not UTF-8 has its non-ASCII
 * bytes replaced by '?' (never a missing key). */
json_t *gr_json_text(const char *s);

/* Cells of the n x n grids (topo's matrices, the predicted copies), which
 * are most of a large machine's text: written without printf's parsing, a
 * row gathered in one buffer and written with one call. gr_set_text copies
 * s into buf (cap > 0), cut to fit; gr_put_cell writes " %-Ns" (a space, s,
 * padded to width) at dst, which has room for 1 + the larger of strlen(s)
 * and width bytes, and returns the bytes written (no terminating NUL);
 * gr_fmt_1f is "%.1f" of v into buf, keeping the last figure formatted on
 * this thread, since a row repeats a few. */
void gr_set_text(char *buf, size_t cap, const char *s);
size_t gr_put_cell(char *dst, const char *s, size_t width);
void gr_fmt_1f(double v, char *buf, size_t cap);
/* Writes j indented, keys in insertion order, with a trailing newline. */
void gr_json_print(FILE *out, json_t *j);
/* One finding as doctor's JSON prints it (id, severity, subject, message,
 * evidence, fix, ...); the caller owns the value. */
struct gr_finding;
json_t *gr_finding_to_json(const struct gr_finding *f);

/* A copy of s (the caller frees it) fit for XML and Graphviz: control
 * characters dropped, and bytes that are not well-formed UTF-8 (or not XML
 * characters) written as '?', so that any input name keeps a document
 * well-formed. */
char *gr_text_clean(const char *s);
/* Text for an XML (SVG) text node or attribute value: cleaned as above,
 * &, <, > and " escaped. */
void gr_xml_text(FILE *out, const char *s);

/* "Machine: PRODUCT (HOST) [SOURCE]" without a newline. */
void gr_print_machine_line(FILE *out, const struct gr_topo *t);
/* A CPU's model as a short label: "Intel(R) Xeon(R) Platinum 8175M CPU @
 * 2.50GHz" -> "Xeon Platinum 8175M" (trademarks, "CPU", the clock and the
 * vendor's name dropped). The caller frees it. */
char *gr_cpu_short_name(const char *model);
/* What a NIC is called in a legend: its RDMA device as nvidia-smi and
 * NCCL_IB_HCA name it; where none is known its first OS device (the
 * netdev), else its bus id. Written into buf. */
const char *gr_nic_legend_name(const struct gr_pci *p, char *buf, size_t cap);
/* The loader's warnings, one "gpurig: warning: ..." line each. */
void gr_print_warnings(FILE *err, const struct gr_topo *t);

#endif
