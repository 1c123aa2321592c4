/* SMBIOS structure table walker and type-17 / type-9 decoders, written from the SMBIOS
 * specification's description of the structure layout. Every read is checked
 * against the structure's formatted length first, then against the buffer:
 * firmware tables are often shorter than the spec version they claim. */
#include "doctor/dmi.h"

#include <stdlib.h>
#include <string.h>

enum {
  DMI_HEADER_LEN = 4,
  DMI_TYPE_SLOT = 9,
  DMI_TYPE_MEM_ARRAY = 16,
  DMI_TYPE_MEM_DEVICE = 17,
  DMI_TYPE_END = 127,
  DMI_HANDLE_NONE = -1,
};

/* One structure as found in the table; points into the caller's buffer. */
struct dmi_struct {
  size_t off;                 /* offset of the header in the table */
  unsigned type, flen;        /* type byte, formatted length */
  unsigned handle;
  const unsigned char *fmt;   /* formatted area, flen bytes, header included */
  const unsigned char *strs;  /* string set, without its final extra NUL */
  size_t strs_len;            /* every string in [strs, strs + strs_len) ends with NUL */
};

/* What the walk collects before array handles can be resolved: a type 17
 * may name an array that comes later in the table. */
struct dmi_walk {
  struct gr_dmi_memory *m;
  size_t cap_dimms;
  unsigned *array_handles;    /* handle of each type 16, table order */
  size_t cap_arrays;
  int *dimm_array_handle;     /* per dimm: the array handle it names, or DMI_HANDLE_NONE */
  size_t cap_dimm_handles;
};

static unsigned get_word(const unsigned char *p)
{
  return (unsigned)p[0] | (unsigned)p[1] << 8;
}

static uint32_t get_dword(const unsigned char *p)
{
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Whether the n-byte field at off lies inside the formatted area. */
static bool has_field(const struct dmi_struct *s, unsigned off, unsigned n)
{
  return off + n <= s->flen;
}

/* Reads the structure at *pos into *s and advances *pos past its string set.
 * Returns 1 for a structure, 0 at the end of the buffer, -1 on error. */
static int next_struct(const char *name, const unsigned char *buf, size_t len, size_t *pos,
                       struct dmi_struct *s, struct gr_err *err)
{
  size_t off = *pos;
  if (off >= len)
    return 0;
  size_t left = len - off;
  if (left < DMI_HEADER_LEN)
    return gr_fail(err, GR_EXIT_FAIL, "%s: offset %zu: truncated structure header (%zu bytes left, need %d)",
                   name, off, left, DMI_HEADER_LEN);
  s->off = off;
  s->type = buf[off];
  s->flen = buf[off + 1];
  s->handle = get_word(buf + off + 2);
  if (s->flen < DMI_HEADER_LEN)
    return gr_fail(err, GR_EXIT_FAIL, "%s: offset %zu: formatted length %u < %d (type %u)", name, off,
                   s->flen, DMI_HEADER_LEN, s->type);
  if (s->flen > left)
    return gr_fail(err, GR_EXIT_FAIL,
                   "%s: offset %zu: truncated structure (type %u, formatted length %u, %zu bytes left)", name,
                   off, s->type, s->flen, left);
  s->fmt = buf + off;
  /* The string set ends at the first pair of NULs; with no strings it is
   * just that pair. */
  size_t start = off + s->flen;
  for (size_t i = start; i + 1 < len; i++) {
    if (buf[i] == 0 && buf[i + 1] == 0) {
      s->strs = buf + start;
      s->strs_len = i + 1 - start;
      *pos = i + 2;
      return 1;
    }
  }
  return gr_fail(err, GR_EXIT_FAIL, "%s: offset %zu: string set not terminated (type %u)", name, off, s->type);
}

/* Copies string number num (1-based; 0 means none) of the structure into
 * dst, replacing bytes outside printable ASCII with '?'. A number past the
 * end of the string set gives "". */
static void copy_string(const struct dmi_struct *s, unsigned num, char *dst, size_t cap)
{
  dst[0] = '\0';
  if (num == 0)
    return;
  const unsigned char *p = s->strs, *end = s->strs + s->strs_len;
  for (unsigned k = 1; p < end; k++) {
    const unsigned char *nul = memchr(p, 0, (size_t)(end - p));
    size_t n = (size_t)(nul - p);
    if (k == num) {
      if (n >= cap)
        n = cap - 1;
      for (size_t i = 0; i < n; i++)
        dst[i] = p[i] >= 0x20 && p[i] < 0x7f ? (char)p[i] : '?';
      dst[n] = '\0';
      return;
    }
    p = nul + 1;
  }
}

/* Size word at 0x0C (and Extended Size at 0x1C) into the dimm's size fields. */
static void decode_size(const struct dmi_struct *s, struct gr_dimm *d)
{
  d->populated = true; /* until the size says otherwise: an unknown size may be a module */
  if (!has_field(s, 0x0C, 2))
    return;
  unsigned v = get_word(s->fmt + 0x0C);
  if (v == 0) {
    d->populated = false;
  } else if (v == 0xFFFF) {
    /* unknown size: populated, size_known stays false */
  } else if (v == 0x7FFF && has_field(s, 0x1C, 4)) {
    d->size_known = true;
    d->size_mib = get_dword(s->fmt + 0x1C) & 0x7FFFFFFFu;
  } else if (v & 0x8000) {
    d->size_known = true;
    d->size_mib = (v & 0x7FFF) / 1024u; /* KiB granularity: only tiny modules use it */
  } else {
    /* includes 0x7FFF in a structure too short for Extended Size: before
     * SMBIOS 2.7 it was a plain size of 32767 MiB */
    d->size_known = true;
    d->size_mib = v;
  }
}

/* Speed at 0x15, replaced by Configured Memory Speed at 0x20 when that is set.
 * 0xFFFF means the speed lives in an extended field this parser does not
 * read, so it counts as unknown rather than as 65535 MT/s. */
static unsigned decode_speed(const struct dmi_struct *s)
{
  unsigned speed = 0;
  if (has_field(s, 0x15, 2))
    speed = get_word(s->fmt + 0x15);
  if (has_field(s, 0x20, 2)) {
    unsigned conf = get_word(s->fmt + 0x20);
    if (conf != 0)
      speed = conf;
  }
  return speed == 0xFFFF ? 0 : speed;
}

static void add_dimm(struct dmi_walk *w, const struct dmi_struct *s)
{
  struct gr_dmi_memory *m = w->m;
  grow_array((void **)&m->dimms, sizeof(*m->dimms), &w->cap_dimms, m->ndimms);
  grow_array((void **)&w->dimm_array_handle, sizeof(int), &w->cap_dimm_handles, m->ndimms);
  struct gr_dimm *d = &m->dimms[m->ndimms];
  memset(d, 0, sizeof(*d));
  d->array = -1;
  w->dimm_array_handle[m->ndimms] = has_field(s, 0x04, 2) ? (int)get_word(s->fmt + 0x04) : DMI_HANDLE_NONE;
  if (has_field(s, 0x10, 1))
    copy_string(s, s->fmt[0x10], d->locator, sizeof(d->locator));
  if (has_field(s, 0x11, 1))
    copy_string(s, s->fmt[0x11], d->bank, sizeof(d->bank));
  if (has_field(s, 0x12, 1))
    d->mem_type = s->fmt[0x12];
  decode_size(s, d);
  d->speed_mts = decode_speed(s);
  m->ndimms++;
}

static void add_array(struct dmi_walk *w, const struct dmi_struct *s)
{
  grow_array((void **)&w->array_handles, sizeof(unsigned), &w->cap_arrays, w->m->narrays);
  w->array_handles[w->m->narrays++] = s->handle;
}

/* Turns each dimm's array handle into the array's table index (first match). */
static void resolve_arrays(struct dmi_walk *w)
{
  for (size_t i = 0; i < w->m->ndimms; i++) {
    int h = w->dimm_array_handle[i];
    for (size_t a = 0; h != DMI_HANDLE_NONE && a < w->m->narrays; a++) {
      if (w->array_handles[a] == (unsigned)h) {
        w->m->dimms[i].array = (int)a;
        break;
      }
    }
  }
}

int gr_dmi_parse_memory(const char *name, const unsigned char *buf, size_t len, struct gr_dmi_memory *mem,
                        struct gr_err *err)
{
  struct dmi_walk w = {.m = mem};
  struct dmi_struct s = {0};
  size_t pos = 0;
  int rc = -1, r;
  memset(mem, 0, sizeof(*mem));
  if (len == 0) {
    gr_fail(err, GR_EXIT_FAIL, "%s: empty table", name);
    goto out;
  }
  while ((r = next_struct(name, buf, len, &pos, &s, err)) == 1) {
    if (s.type == DMI_TYPE_MEM_ARRAY)
      add_array(&w, &s);
    else if (s.type == DMI_TYPE_MEM_DEVICE)
      add_dimm(&w, &s);
    else if (s.type == DMI_TYPE_END)
      break; /* whatever follows is padding, not structures */
  }
  if (r < 0)
    goto out;
  resolve_arrays(&w);
  rc = 0;
out:
  free(w.array_handles);
  free(w.dimm_array_handle);
  if (rc != 0)
    gr_dmi_memory_free(mem);
  return rc;
}

void gr_dmi_memory_free(struct gr_dmi_memory *m)
{
  if (!m)
    return;
  free(m->dimms);
  memset(m, 0, sizeof(*m));
}

const char *gr_dmi_mem_type_name(unsigned t)
{
  /* SMBIOS Memory Device Type values for the DRAM generations a GPU server
   * may carry; the older ones (EDO, SDRAM, ...) are left unnamed. */
  switch (t) {
  case 0x12: return "DDR";
  case 0x13: return "DDR2";
  case 0x18: return "DDR3";
  case 0x1A: return "DDR4";
  case 0x1B: return "LPDDR";
  case 0x1C: return "LPDDR2";
  case 0x1D: return "LPDDR3";
  case 0x1E: return "LPDDR4";
  case 0x20: return "HBM";
  case 0x21: return "HBM2";
  case 0x22: return "DDR5";
  case 0x23: return "LPDDR5";
  case 0x24: return "HBM3";
  default: return NULL;
  }
}

/* ---- type 9, System Slots ---- */

/* Segment group, bus and device/function at 0x0D..0x10 (SMBIOS 2.6 and
 * later); each not-applicable value, or a structure too short to have the
 * fields at all, gives -1. */
static void decode_slot_address(const struct dmi_struct *s, struct gr_dmi_slot *sl)
{
  sl->segment = sl->bus = sl->dev = sl->func = -1;
  if (!has_field(s, 0x0D, 4))
    return;
  unsigned seg = get_word(s->fmt + 0x0D), bus = s->fmt[0x0F], devfn = s->fmt[0x10];
  if (seg != 0xFFFF)
    sl->segment = (int)seg;
  if (bus != 0xFF)
    sl->bus = (int)bus;
  if (devfn != 0xFF) {
    sl->dev = (int)(devfn >> 3);
    sl->func = (int)(devfn & 0x07);
  }
}

static void add_slot(struct gr_dmi_slots *out, size_t *cap, const struct dmi_struct *s)
{
  grow_array((void **)&out->v, sizeof(*out->v), cap, out->n);
  struct gr_dmi_slot *sl = &out->v[out->n];
  memset(sl, 0, sizeof(*sl));
  if (has_field(s, 0x04, 1))
    copy_string(s, s->fmt[0x04], sl->designation, sizeof(sl->designation));
  if (has_field(s, 0x05, 1))
    sl->type = s->fmt[0x05];
  if (has_field(s, 0x06, 1))
    sl->data_width = s->fmt[0x06];
  if (has_field(s, 0x07, 1))
    sl->current_usage = s->fmt[0x07];
  decode_slot_address(s, sl);
  out->n++;
}

int gr_dmi_parse_slots(const char *name, const unsigned char *buf, size_t len, struct gr_dmi_slots *out,
                       struct gr_err *err)
{
  struct dmi_struct s = {0};
  size_t pos = 0, cap = 0;
  int r;
  memset(out, 0, sizeof(*out));
  if (len == 0)
    return gr_fail(err, GR_EXIT_FAIL, "%s: empty table", name);
  while ((r = next_struct(name, buf, len, &pos, &s, err)) == 1) {
    if (s.type == DMI_TYPE_SLOT)
      add_slot(out, &cap, &s);
    else if (s.type == DMI_TYPE_END)
      break; /* whatever follows is padding, not structures */
  }
  if (r < 0) {
    gr_dmi_slots_free(out);
    return -1;
  }
  return 0;
}

void gr_dmi_slots_free(struct gr_dmi_slots *s)
{
  if (!s)
    return;
  free(s->v);
  memset(s, 0, sizeof(*s));
}

const char *gr_dmi_slot_of(const struct gr_dmi_slots *s, int segment, int bus, int dev)
{
  if (!s || segment < 0 || bus < 0 || dev < 0)
    return NULL;
  for (size_t i = 0; i < s->n; i++) {
    const struct gr_dmi_slot *sl = &s->v[i];
    if (sl->segment == segment && sl->bus == bus && sl->dev == dev)
      return sl->designation;
  }
  return NULL;
}
