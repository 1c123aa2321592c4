/* A small reader of the XML subset NCCL topology files (and files like
 * them) are written in: elements, attributes (quoted with " or '), comments and
 * processing instructions, an optional UTF-8 byte order mark. Anything else
 * is refused with one line: text outside a tag, CDATA sections, document
 * type declarations (so no entity is ever declared, and none is expanded:
 * "&amp;" in a value is those five bytes), NUL bytes, and bytes outside
 * printable ASCII in a value.
 *
 * One linear pass, no recursion: the depth, the element count, the
 * children of one element, the attributes of one, and the length of names
 * and values are bounded by the format (struct gr_xml_format), so a hostile
 * file costs time in proportion to its length and memory in proportion to
 * those limits. The result is a flat list of elements, parents before
 * children. Used by load/nccl_topo.c. */
#ifndef GPURIG_XML_H
#define GPURIG_XML_H

#include <stdbool.h>
#include <stddef.h>

#include "base/util.h"

/* An attribute: its name and value point into the buffer read. */
struct gr_xml_attr {
  const char *key, *val; /* into the file's bytes, not NUL-terminated */
  size_t klen, vlen;
  unsigned line, col;    /* of the value */
};

/* An element: its name points into the buffer read. */
struct gr_xml_elem {
  const char *name;       /* into the file's bytes, not NUL-terminated */
  size_t nlen;
  unsigned line, col;     /* of its '<' */
  int parent;             /* index in doc.el, -1 for the root */
  size_t attr0;           /* its attributes: doc.at[attr0 .. attr0 + nattrs - 1] */
  unsigned nattrs;
  unsigned nchildren;
};

/* What gr_xml_read found: the elements in document order (parents before
 * children), and their attributes. */
struct gr_xml_doc {
  struct gr_xml_elem *el;
  size_t nel, cap_el;
  struct gr_xml_attr *at;
  size_t nat, cap_at;
};

/* One format written in this XML: its one top-level element, its limits,
 * and the words its errors use. */
struct gr_xml_format {
  const char *what;       /* the format as errors name it: "an NCCL topology file" */
  const char *root;       /* the name of its one top-level element (required) */
  const char *root_hint;  /* what an error says was expected there: "<system version=\"1\">" */
  unsigned max_depth, max_elems, max_children, max_attrs;
  unsigned max_value;     /* bytes of one attribute value */
  unsigned max_name;      /* bytes of an element or attribute name */
  const char *elems_note; /* after the element limit's error: " (NCCL reads at most 256 per machine)" */
  const char *depth_note; /* after the depth limit's: " (a real file has under 10)" */
  const char *limit_note; /* after the format's own limits (children, value bytes): " (NCCL's limit)" */
};

/* Reads len bytes of buf (from file `name`, as errors name it) into *d.
 * Returns 0, or -1 with "NAME:LINE:COL: problem" in err (code
 * GR_EXIT_FAIL) and *d empty. The caller owns *d and frees it with
 * gr_xml_free (harmless after an error); names and values in it point into
 * buf, which must outlive it. */
int gr_xml_read(const char *name, const char *buf, size_t len, const struct gr_xml_format *f, struct gr_xml_doc *d,
                struct gr_err *err);
void gr_xml_free(struct gr_xml_doc *d);

/* Whether [s, s+n) is the name want. */
bool gr_xml_name_is(const char *s, size_t n, const char *want);
/* XML's white space: space, tab, newline, carriage return. */
bool gr_xml_is_space(char c);

#endif
