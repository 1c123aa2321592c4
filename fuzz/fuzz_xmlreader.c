/* libFuzzer target: base/xml.c, the XML reader alone, under two formats:
 * NCCL topology files' (load/nccl_topo.c's limits) and a tiny one whose
 * limits (depth 3, 12 elements, 4 children, 2 attributes, 8-byte names and
 * values) every input reaches. A document read must hold what base/xml.h
 * promises: parents before children, attribute ranges inside the list,
 * names and values inside the input, within the format's limits. */
#include <stdint.h>
#include <stdlib.h>

#include "base/xml.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct gr_xml_format nccl = {
    .what = "an NCCL topology file", .root = "system", .root_hint = "<system version=\"1\">",
    .max_depth = 64, .max_elems = 16384, .max_children = 640, .max_attrs = 32, .max_value = 255, .max_name = 64,
    .elems_note = "", .depth_note = "", .limit_note = ""};

static const struct gr_xml_format tiny = {
    .what = "a tiny file", .root = "r", .root_hint = "<r>",
    .max_depth = 3, .max_elems = 12, .max_children = 4, .max_attrs = 2, .max_value = 8, .max_name = 8,
    .elems_note = " (tiny)", .depth_note = " (tiny)", .limit_note = " (tiny)"};

static int inside(const char *p, size_t n, const char *buf, size_t len)
{
  return p >= buf && n <= len && (size_t)(p - buf) <= len - n;
}

static void check(const struct gr_xml_doc *d, const struct gr_xml_format *f, const char *buf, size_t len)
{
  if (d->nel == 0 || d->nel > f->max_elems || d->el[0].parent != -1 || !gr_xml_name_is(d->el[0].name, d->el[0].nlen, f->root))
    abort();
  size_t nat = 0;
  for (size_t i = 0; i < d->nel; i++) {
    const struct gr_xml_elem *e = &d->el[i];
    if (e->parent >= (int)i || (i > 0 && e->parent < 0) || !inside(e->name, e->nlen, buf, len) || e->nlen == 0 ||
        e->nlen > f->max_name || e->nattrs > f->max_attrs || e->nchildren > f->max_children || e->attr0 != nat ||
        e->line == 0 || e->col == 0)
      abort();
    nat += e->nattrs;
    for (unsigned k = 0; k < e->nattrs; k++) {
      const struct gr_xml_attr *a = &d->at[e->attr0 + k];
      if (!inside(a->key, a->klen, buf, len) || !inside(a->val, a->vlen, buf, len) || a->vlen > f->max_value)
        abort();
    }
  }
  if (nat != d->nat)
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  const char *buf = (const char *)data;
  const struct gr_xml_format *f = size % 2 ? &tiny : &nccl;
  struct gr_xml_doc d;
  struct gr_err err = {0};
  if (size > (1u << 20)) /* linear: larger inputs only repeat the limits more slowly */
    return 0;
  if (gr_xml_read("fuzz.xml", buf, size, f, &d, &err) == 0)
    check(&d, f, buf, size);
  else if (d.nel || d.nat || !err.msg[0])
    abort(); /* an error leaves the document empty and says why */
  gr_xml_free(&d);
  return 0;
}
