/* The two health-input parsers: SMBIOS memory devices and system slots (tables built here,
 * byte by byte, so each case shows the layout it exercises) and NVIDIA Xid
 * events from kernel logs (inline text and tests/data/kmsg). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "base/file.h"
#include "doctor/dmi.h"
#include "doctor/kmsg.h"

/* ---- DMI table builder ---- */

struct tb {
  unsigned char b[2048];
  size_t n;
};

/* A type-17 structure's fields; flen cuts it short like an older firmware. */
struct tb_dev {
  unsigned flen, array, size, loc, bank, type, speed, conf;
  uint32_t ext;
};

/* String sets are written as literals with explicit NULs: S("A\0B\0"). */
#define S(lit) lit, sizeof(lit) - 1

static void put16(unsigned char *p, unsigned v)
{
  p[0] = (unsigned char)v;
  p[1] = (unsigned char)(v >> 8);
}

static void put32(unsigned char *p, uint32_t v)
{
  put16(p, v & 0xFFFF);
  put16(p + 2, v >> 16);
}

/* Appends one structure and returns its offset: the first flen bytes of fmt
 * (header filled in here), then the strings and the set's final NUL (two
 * NULs when there are none). */
static size_t tb_add(struct tb *t, unsigned type, unsigned handle, unsigned char *fmt, unsigned flen,
                     const char *strs, size_t slen)
{
  size_t off = t->n;
  fmt[0] = (unsigned char)type;
  fmt[1] = (unsigned char)flen;
  put16(fmt + 2, handle);
  assert_true(t->n + flen + slen + 2 <= sizeof(t->b));
  memcpy(t->b + t->n, fmt, flen);
  t->n += flen;
  memcpy(t->b + t->n, strs, slen);
  t->n += slen;
  if (slen == 0)
    t->b[t->n++] = 0;
  t->b[t->n++] = 0;
  return off;
}

static size_t tb_array(struct tb *t, unsigned handle)
{
  unsigned char f[0x17] = {0};
  f[0x05] = 0x03; /* location: system board */
  f[0x06] = 0x03; /* use: system memory */
  return tb_add(t, 16, handle, f, sizeof(f), "", 0);
}

static size_t tb_dimm(struct tb *t, unsigned handle, const struct tb_dev *d, const char *strs, size_t slen)
{
  unsigned char f[0x28] = {0};
  put16(f + 0x04, d->array);
  put16(f + 0x0C, d->size);
  f[0x10] = (unsigned char)d->loc;
  f[0x11] = (unsigned char)d->bank;
  f[0x12] = (unsigned char)d->type;
  put16(f + 0x15, d->speed);
  put32(f + 0x1C, d->ext);
  put16(f + 0x20, d->conf);
  return tb_add(t, 17, handle, f, d->flen, strs, slen);
}

static size_t tb_end(struct tb *t)
{
  unsigned char f[4];
  return tb_add(t, 127, 0xFEFF, f, sizeof(f), "", 0);
}

/* Offsets of the structures in the server table below. */
struct server_offsets {
  size_t bios, arr0, arr1, dimm[4], end;
};

/* Two sockets' worth, shortened: two arrays, four slots, three modules. */
static void server_table(struct tb *t, struct server_offsets *o)
{
  unsigned char bios[0x12] = {0};
  bios[0x04] = 1; /* vendor: string 1 */
  memset(t, 0, sizeof(*t));
  o->bios = tb_add(t, 0, 0x0000, bios, sizeof(bios), S("American Megatrends International, LLC.\0"));
  o->arr0 = tb_array(t, 0x1000);
  o->arr1 = tb_array(t, 0x1001);
  const struct tb_dev ddr4 = {.flen = 0x28, .array = 0x1000, .size = 0x7FFF, .ext = 32768, .loc = 1, .bank = 2,
                              .type = 0x1A, .speed = 3600, .conf = 3200};
  const struct tb_dev ddr5 = {.flen = 0x28, .array = 0x1000, .size = 0x7FFF, .ext = 65536, .loc = 1, .bank = 2,
                              .type = 0x22, .speed = 4800, .conf = 0};
  const struct tb_dev empty = {.flen = 0x28, .array = 0x1001, .size = 0, .loc = 1, .bank = 2, .type = 0x02};
  const struct tb_dev unknown = {.flen = 0x28, .array = 0x1001, .size = 0xFFFF, .loc = 1, .bank = 0, .type = 0x1A,
                                 .speed = 0, .conf = 0};
  o->dimm[0] = tb_dimm(t, 0x1100, &ddr4, S("P0_DIMM_A1\0P0_Node0_Channel0_Dimm0\0"));
  o->dimm[1] = tb_dimm(t, 0x1101, &ddr5, S("P0_DIMM_B1\0P0_Node0_Channel1_Dimm0\0"));
  o->dimm[2] = tb_dimm(t, 0x1102, &empty, S("P1_DIMM_A1\0P1_Node1_Channel0_Dimm0\0"));
  o->dimm[3] = tb_dimm(t, 0x1103, &unknown, S("P1_DIMM_B1\0"));
  o->end = tb_end(t);
}

static void parse_ok(const struct tb *t, size_t len, struct gr_dmi_memory *m)
{
  struct gr_err err = {0};
  if (gr_dmi_parse_memory("t.bin", t->b, len, m, &err) != 0)
    fail_msg("unexpected error: %s", err.msg);
}

/* Parses and expects an error whose message contains want. */
static void expect_error(const unsigned char *buf, size_t len, const char *want)
{
  struct gr_dmi_memory m;
  struct gr_err err = {0};
  assert_int_equal(gr_dmi_parse_memory("t.bin", buf, len, &m, &err), -1);
  if (!strstr(err.msg, want))
    fail_msg("error \"%s\" does not contain \"%s\"", err.msg, want);
  assert_int_equal(err.code, GR_EXIT_FAIL);
  assert_int_equal(m.ndimms, 0);
  assert_int_equal(m.narrays, 0);
  assert_null(m.dimms);
}

/* ---- DMI tests ---- */

static void dmi_server_table(void **state)
{
  struct tb t;
  struct server_offsets o;
  struct gr_dmi_memory m;
  (void)state;
  server_table(&t, &o);
  parse_ok(&t, t.n, &m);
  assert_int_equal(m.narrays, 2);
  assert_int_equal(m.ndimms, 4);
  const struct gr_dimm *d = m.dimms;
  assert_string_equal(d[0].locator, "P0_DIMM_A1");
  assert_string_equal(d[0].bank, "P0_Node0_Channel0_Dimm0");
  assert_int_equal(d[0].array, 0);
  assert_true(d[0].populated && d[0].size_known);
  assert_int_equal(d[0].size_mib, 32768);
  assert_int_equal(d[0].speed_mts, 3200); /* configured, not the module's 3600 */
  assert_string_equal(gr_dmi_mem_type_name(d[0].mem_type), "DDR4");
  assert_int_equal(d[1].size_mib, 65536);
  assert_int_equal(d[1].speed_mts, 4800); /* configured speed 0: the module's speed */
  assert_string_equal(gr_dmi_mem_type_name(d[1].mem_type), "DDR5");
  assert_string_equal(d[2].locator, "P1_DIMM_A1");
  assert_int_equal(d[2].array, 1);
  assert_false(d[2].populated);
  assert_true(d[3].populated);
  assert_false(d[3].size_known);
  assert_int_equal(d[3].speed_mts, 0);
  assert_string_equal(d[3].bank, ""); /* string number 0: none */
  assert_null(gr_dmi_mem_type_name(d[2].mem_type)); /* 0x02 "Unknown" */
  size_t populated = 0;
  for (size_t i = 0; i < m.ndimms; i++)
    populated += m.dimms[i].populated;
  assert_int_equal(populated, 3);
  gr_dmi_memory_free(&m);
  assert_null(m.dimms);
  assert_int_equal(m.ndimms, 0);
}

static void dmi_table_end(void **state)
{
  struct tb t;
  struct server_offsets o;
  struct gr_dmi_memory m;
  (void)state;
  server_table(&t, &o);
  /* without type 127, ending on a structure boundary */
  parse_ok(&t, o.end, &m);
  assert_int_equal(m.ndimms, 4);
  gr_dmi_memory_free(&m);
  /* after type 127 the rest is padding, even if it looks broken */
  memset(t.b + t.n, 0xAB, 7);
  parse_ok(&t, t.n + 7, &m);
  assert_int_equal(m.ndimms, 4);
  gr_dmi_memory_free(&m);
}

/* Fields past the formatted length are absent; the bytes that follow are the
 * string set, so reading them would give nonsense values the test would see. */
static void dmi_short_structures(void **state)
{
  struct tb t = {0};
  struct gr_dmi_memory m;
  (void)state;
  const struct tb_dev v21 = {.flen = 0x15, .array = 0x2000, .size = 8192, .loc = 1, .bank = 2, .type = 0x18,
                             .speed = 1600};
  const struct tb_dev v23 = {.flen = 0x1C, .array = 0x2000, .size = 0x7FFF, .ext = 99, .loc = 1, .type = 0x18,
                             .speed = 1600};
  const struct tb_dev v26 = {.flen = 0x20, .array = 0x2000, .size = 0x8000 | 4096, .loc = 1, .speed = 2133,
                             .conf = 1866};
  const struct tb_dev v27 = {.flen = 0x22, .array = 0x2000, .size = 0x7FFF, .ext = 0x80000000u | 131072,
                             .speed = 2666, .conf = 2400};
  const struct tb_dev tiny = {.flen = 0x05, .size = 1};
  /* an array that comes after its devices, and one device naming no array */
  tb_dimm(&t, 0x2100, &v21, S("ZZZZ\0YYYY\0"));
  tb_dimm(&t, 0x2101, &v23, S("\xff\xff\xff\xff\0"));
  tb_dimm(&t, 0x2102, &v26, S("DIMM 2\0"));
  tb_dimm(&t, 0x2103, &v27, "", 0);
  tb_dimm(&t, 0x2104, &tiny, "", 0);
  tb_array(&t, 0x2000);
  parse_ok(&t, t.n, &m);
  assert_int_equal(m.ndimms, 5);
  const struct gr_dimm *d = m.dimms;
  /* SMBIOS 2.1 length: size and strings, no speed ("ZZ" would be 23130) */
  assert_int_equal(d[0].size_mib, 8192);
  assert_int_equal(d[0].speed_mts, 0);
  assert_string_equal(d[0].locator, "ZZZZ");
  assert_string_equal(d[0].bank, "YYYY");
  assert_int_equal(d[0].array, 0);
  /* 0x7FFF without room for Extended Size: a plain 32767 MiB */
  assert_int_equal(d[1].size_mib, 32767);
  assert_int_equal(d[1].speed_mts, 1600);
  assert_string_equal(d[1].locator, "????");
  /* KiB sizes; no room for the configured speed */
  assert_int_equal(d[2].size_mib, 4);
  assert_int_equal(d[2].speed_mts, 2133);
  assert_string_equal(d[2].locator, "DIMM 2");
  /* Extended Size's bit 31 is reserved */
  assert_int_equal(d[3].size_mib, 131072);
  assert_int_equal(d[3].speed_mts, 2400);
  assert_string_equal(d[3].locator, "");
  /* header plus one byte: nothing is known, not even the array */
  assert_int_equal(d[4].array, -1);
  assert_true(d[4].populated);
  assert_false(d[4].size_known);
  assert_int_equal(d[4].mem_type, 0);
  gr_dmi_memory_free(&m);
}

static void dmi_strings(void **state)
{
  struct tb t = {0};
  struct gr_dmi_memory m;
  char longname[100];
  (void)state;
  memset(longname, 'L', sizeof(longname) - 1);
  longname[sizeof(longname) - 1] = '\0';
  const struct tb_dev past = {.flen = 0x28, .array = 0x1234, .size = 1024, .loc = 3, .bank = 200};
  const struct tb_dev ctl = {.flen = 0x28, .size = 1024, .loc = 1, .bank = 2};
  const struct tb_dev lng = {.flen = 0x28, .size = 1024, .loc = 1};
  tb_dimm(&t, 1, &past, S("A\0B\0"));
  tb_dimm(&t, 2, &ctl, S("tab\there\0caf\xc3\xa9\0"));
  tb_dimm(&t, 3, &lng, longname, sizeof(longname));
  tb_dimm(&t, 4, &past, "", 0); /* string 3 of a set that has none */
  parse_ok(&t, t.n, &m);
  assert_int_equal(m.ndimms, 4);
  assert_string_equal(m.dimms[0].locator, "");
  assert_string_equal(m.dimms[0].bank, "");
  assert_int_equal(m.dimms[0].array, -1); /* handle names no array */
  assert_string_equal(m.dimms[1].locator, "tab?here");
  assert_string_equal(m.dimms[1].bank, "caf??");
  assert_int_equal(strlen(m.dimms[2].locator), sizeof(m.dimms[2].locator) - 1);
  assert_string_equal(m.dimms[3].locator, "");
  gr_dmi_memory_free(&m);
}

static void dmi_broken_tables(void **state)
{
  struct tb t;
  struct server_offsets o;
  char want[96];
  (void)state;
  server_table(&t, &o);
  expect_error(t.b, 0, "t.bin: empty table");
  /* cut inside dimm 1's formatted area */
  snprintf(want, sizeof(want), "t.bin: offset %zu: truncated structure", o.dimm[1]);
  expect_error(t.b, o.dimm[1] + 10, want);
  /* cut inside its string set */
  snprintf(want, sizeof(want), "t.bin: offset %zu: string set not terminated", o.dimm[1]);
  expect_error(t.b, o.dimm[1] + 0x28 + 5, want);
  expect_error(t.b, o.dimm[2] - 1, want); /* only the set's final NUL missing */
  /* cut inside the next header */
  snprintf(want, sizeof(want), "t.bin: offset %zu: truncated structure header", o.dimm[2]);
  expect_error(t.b, o.dimm[2] + 3, want);
  /* formatted length below the header's own size */
  t.b[o.arr1 + 1] = 3;
  snprintf(want, sizeof(want), "t.bin: offset %zu: formatted length 3 < 4", o.arr1);
  expect_error(t.b, t.n, want);
  const unsigned char zeros[16] = {0};
  expect_error(zeros, sizeof(zeros), "t.bin: offset 0: formatted length 0 < 4");
  const unsigned char one[] = {17};
  expect_error(one, sizeof(one), "offset 0: truncated structure header");
}

static void dmi_type_names(void **state)
{
  (void)state;
  assert_string_equal(gr_dmi_mem_type_name(0x18), "DDR3");
  assert_string_equal(gr_dmi_mem_type_name(0x1A), "DDR4");
  assert_string_equal(gr_dmi_mem_type_name(0x22), "DDR5");
  assert_null(gr_dmi_mem_type_name(0));
  assert_null(gr_dmi_mem_type_name(0x02));
  assert_null(gr_dmi_mem_type_name(0xFF));
  assert_null(gr_dmi_mem_type_name(1000));
}

/* ---- DMI system slot (type 9) tests ---- */

/* A type-9 structure's fields; flen cuts it short like an older firmware. */
struct tb_slot {
  unsigned flen, desig, type, width, usage, seg, bus, devfn;
};

static size_t tb_slot(struct tb *t, unsigned handle, const struct tb_slot *d, const char *strs, size_t slen)
{
  unsigned char f[0x13] = {0};
  f[0x04] = (unsigned char)d->desig;
  f[0x05] = (unsigned char)d->type;
  f[0x06] = (unsigned char)d->width;
  f[0x07] = (unsigned char)d->usage;
  f[0x08] = 0x03; /* slot length: long */
  put16(f + 0x09, handle & 0xFF); /* slot ID */
  f[0x0B] = 0x04; /* characteristics 1: 3.3 V */
  f[0x0C] = 0x01; /* characteristics 2: PME */
  put16(f + 0x0D, d->seg);
  f[0x0F] = (unsigned char)d->bus;
  f[0x10] = (unsigned char)d->devfn;
  return tb_add(t, 9, handle, f, d->flen, strs, slen);
}

struct slot_offsets {
  size_t slot5, slot7, old, na, dimm, end;
};

/* Two GPU slots with bus addresses (SMBIOS 2.6 length), a 2.1-length slot,
 * a slot whose address is "not applicable", a memory device between them and
 * the end marker. */
static void slot_table(struct tb *t, struct slot_offsets *o)
{
  memset(t, 0, sizeof(*t));
  /* 0xB6: PCI Express Gen 3 x16; width 0x0D: 16x */
  const struct tb_slot slot5 = {.flen = 0x11, .desig = 1, .type = 0xB6, .width = 0x0D, .usage = 4,
                                .seg = 0, .bus = 0x02, .devfn = 0x00};
  const struct tb_slot slot7 = {.flen = 0x11, .desig = 1, .type = 0xB6, .width = 0x0D, .usage = 3,
                                .seg = 0, .bus = 0x42, .devfn = (3 << 3) | 1};
  /* 0xA5: PCI Express, width 0x0B: 8x; the address fields are cut off */
  const struct tb_slot old = {.flen = 0x0D, .desig = 2, .type = 0xA5, .width = 0x0B, .usage = 4,
                              .seg = 0, .bus = 0x02, .devfn = 0x00};
  /* 0x06: PCI, width 0x05: 32 bit, usage 2: unknown */
  const struct tb_slot na = {.flen = 0x13, .desig = 1, .type = 0x06, .width = 0x05, .usage = 2,
                             .seg = 0xFFFF, .bus = 0xFF, .devfn = 0xFF};
  const struct tb_dev ddr4 = {.flen = 0x28, .size = 16384, .loc = 1, .type = 0x1A, .speed = 3200};
  o->slot5 = tb_slot(t, 0x0900, &slot5, S("SLOT5\0"));
  o->dimm = tb_dimm(t, 0x1100, &ddr4, S("DIMM_A1\0"));
  o->slot7 = tb_slot(t, 0x0901, &slot7, S("SLOT7\0"));
  o->old = tb_slot(t, 0x0902, &old, S("unused\0OLD1\0"));
  o->na = tb_slot(t, 0x0903, &na, S("PCI\x01" "1\0"));
  o->end = tb_end(t);
}

static void parse_slots_ok(const struct tb *t, size_t len, struct gr_dmi_slots *s)
{
  struct gr_err err = {0};
  if (gr_dmi_parse_slots("t.bin", t->b, len, s, &err) != 0)
    fail_msg("unexpected error: %s", err.msg);
}

/* Parses for slots and expects an error whose message contains want. */
static void expect_slots_error(const unsigned char *buf, size_t len, const char *want)
{
  struct gr_dmi_slots s;
  struct gr_err err = {0};
  assert_int_equal(gr_dmi_parse_slots("t.bin", buf, len, &s, &err), -1);
  if (!strstr(err.msg, want))
    fail_msg("error \"%s\" does not contain \"%s\"", err.msg, want);
  assert_int_equal(err.code, GR_EXIT_FAIL);
  assert_null(s.v);
  assert_int_equal(s.n, 0);
}

static void dmi_slots_fields(void **state)
{
  struct tb t;
  struct slot_offsets o;
  struct gr_dmi_slots s;
  (void)state;
  slot_table(&t, &o);
  parse_slots_ok(&t, t.n, &s);
  assert_int_equal(s.n, 4); /* the memory device and the end marker are not slots */
  const struct gr_dmi_slot *v = s.v;

  assert_string_equal(v[0].designation, "SLOT5");
  assert_int_equal(v[0].segment, 0);
  assert_int_equal(v[0].bus, 0x02);
  assert_int_equal(v[0].dev, 0);
  assert_int_equal(v[0].func, 0);
  assert_int_equal(v[0].type, 0xB6);
  assert_int_equal(v[0].data_width, 0x0D);
  assert_int_equal(v[0].current_usage, 4);

  assert_string_equal(v[1].designation, "SLOT7");
  assert_int_equal(v[1].segment, 0);
  assert_int_equal(v[1].bus, 0x42);
  assert_int_equal(v[1].dev, 3);
  assert_int_equal(v[1].func, 1);
  assert_int_equal(v[1].type, 0xB6);
  assert_int_equal(v[1].data_width, 0x0D);
  assert_int_equal(v[1].current_usage, 3);

  /* SMBIOS 2.1 length: no address, although the bytes after the formatted
   * area (the string set, "un...") would give segment 0x6E75 */
  assert_string_equal(v[2].designation, "OLD1"); /* string 2 */
  assert_int_equal(v[2].segment, -1);
  assert_int_equal(v[2].bus, -1);
  assert_int_equal(v[2].dev, -1);
  assert_int_equal(v[2].func, -1);
  assert_int_equal(v[2].type, 0xA5);
  assert_int_equal(v[2].data_width, 0x0B);
  assert_int_equal(v[2].current_usage, 4);

  /* 0xFFFF / 0xFF: not applicable; a control byte in the designation */
  assert_string_equal(v[3].designation, "PCI?1");
  assert_int_equal(v[3].segment, -1);
  assert_int_equal(v[3].bus, -1);
  assert_int_equal(v[3].dev, -1);
  assert_int_equal(v[3].func, -1);
  assert_int_equal(v[3].type, 0x06);
  assert_int_equal(v[3].data_width, 0x05);
  assert_int_equal(v[3].current_usage, 2);

  /* the memory parser still sees its device in the same table */
  struct gr_dmi_memory m;
  parse_ok(&t, t.n, &m);
  assert_int_equal(m.ndimms, 1);
  assert_string_equal(m.dimms[0].locator, "DIMM_A1");
  gr_dmi_memory_free(&m);

  gr_dmi_slots_free(&s);
  assert_null(s.v);
  assert_int_equal(s.n, 0);
  gr_dmi_slots_free(&s); /* twice is fine */
  gr_dmi_slots_free(NULL);
}

static void dmi_slot_of(void **state)
{
  struct tb t;
  struct slot_offsets o;
  struct gr_dmi_slots s;
  (void)state;
  slot_table(&t, &o);
  parse_slots_ok(&t, t.n, &s);
  const char *d = gr_dmi_slot_of(&s, 0, 0x02, 0);
  assert_non_null(d);
  assert_string_equal(d, "SLOT5");
  assert_ptr_equal(d, s.v[0].designation); /* a pointer into s */
  assert_string_equal(gr_dmi_slot_of(&s, 0, 0x42, 3), "SLOT7"); /* any function of device 3 */
  assert_null(gr_dmi_slot_of(&s, 0, 0x42, 0));
  assert_null(gr_dmi_slot_of(&s, 1, 0x42, 3)); /* other segment */
  assert_null(gr_dmi_slot_of(&s, 0, 0x03, 0));
  /* the unknown and not-applicable addresses (-1) match nothing */
  assert_null(gr_dmi_slot_of(&s, -1, -1, -1));
  assert_null(gr_dmi_slot_of(&s, 0xFFFF, 0xFF, 31));
  assert_null(gr_dmi_slot_of(NULL, 0, 0x02, 0));
  gr_dmi_slots_free(&s);
  assert_null(gr_dmi_slot_of(&s, 0, 0x02, 0));

  /* two slots claiming one device: the first in table order wins */
  struct tb t2 = {0};
  const struct tb_slot a = {.flen = 0x11, .desig = 1, .usage = 4, .seg = 2, .bus = 0x81, .devfn = 0x08};
  tb_slot(&t2, 1, &a, S("FIRST\0"));
  tb_slot(&t2, 2, &a, S("SECOND\0"));
  parse_slots_ok(&t2, t2.n, &s);
  assert_int_equal(s.n, 2);
  assert_int_equal(s.v[1].segment, 2);
  assert_int_equal(s.v[1].dev, 1);
  assert_string_equal(gr_dmi_slot_of(&s, 2, 0x81, 1), "FIRST");
  gr_dmi_slots_free(&s);

  /* a table with no slots at all */
  struct server_offsets so;
  server_table(&t2, &so);
  parse_slots_ok(&t2, t2.n, &s);
  assert_int_equal(s.n, 0);
  assert_null(gr_dmi_slot_of(&s, 0, 0x02, 0));
  gr_dmi_slots_free(&s);
}

static void dmi_slots_short(void **state)
{
  struct tb t = {0};
  struct gr_dmi_slots s;
  (void)state;
  /* 0x10: segment and bus present, device/function cut off: still no address */
  const struct tb_slot cut = {.flen = 0x10, .desig = 1, .type = 0xA5, .seg = 0, .bus = 0x02};
  /* the header and the designation number only */
  const struct tb_slot tiny = {.flen = 0x05, .desig = 1, .type = 0xA5, .width = 0x0D, .usage = 4};
  const struct tb_slot nostr = {.flen = 0x11, .desig = 3, .seg = 0, .bus = 1, .devfn = 0};
  tb_slot(&t, 1, &cut, S("CUT\0"));
  tb_slot(&t, 2, &tiny, S("TINY\0"));
  tb_slot(&t, 3, &nostr, S("only one\0")); /* string 3 of 1 */
  parse_slots_ok(&t, t.n, &s);
  assert_int_equal(s.n, 3);
  assert_string_equal(s.v[0].designation, "CUT");
  assert_int_equal(s.v[0].segment, -1);
  assert_int_equal(s.v[0].bus, -1);
  assert_int_equal(s.v[0].dev, -1);
  assert_int_equal(s.v[0].func, -1);
  assert_int_equal(s.v[0].type, 0xA5);
  assert_string_equal(s.v[1].designation, "TINY");
  assert_int_equal(s.v[1].type, 0);
  assert_int_equal(s.v[1].data_width, 0);
  assert_int_equal(s.v[1].current_usage, 0);
  assert_int_equal(s.v[1].bus, -1);
  assert_string_equal(s.v[2].designation, "");
  assert_int_equal(s.v[2].bus, 1);
  gr_dmi_slots_free(&s);
}

static void dmi_slots_broken(void **state)
{
  struct tb t;
  struct slot_offsets o;
  char want[96];
  (void)state;
  slot_table(&t, &o);
  expect_slots_error(t.b, 0, "t.bin: empty table");
  /* cut inside SLOT7's formatted area */
  snprintf(want, sizeof(want), "t.bin: offset %zu: truncated structure (type 9, formatted length 17", o.slot7);
  expect_slots_error(t.b, o.slot7 + 0x0F, want);
  /* cut inside its string set, and just before the set's final NUL */
  snprintf(want, sizeof(want), "t.bin: offset %zu: string set not terminated (type 9)", o.slot7);
  expect_slots_error(t.b, o.slot7 + 0x11 + 3, want);
  expect_slots_error(t.b, o.old - 1, want);
  /* a string set that never ends: the final NUL pair overwritten */
  t.b[o.old - 1] = 'X';
  t.b[o.old - 2] = 'X';
  expect_slots_error(t.b, o.old, want);
  slot_table(&t, &o);
  /* cut inside the next header */
  snprintf(want, sizeof(want), "t.bin: offset %zu: truncated structure header", o.old);
  expect_slots_error(t.b, o.old + 2, want);
  /* formatted length below the header's own size */
  t.b[o.old + 1] = 2;
  snprintf(want, sizeof(want), "t.bin: offset %zu: formatted length 2 < 4 (type 9)", o.old);
  expect_slots_error(t.b, t.n, want);
  /* without type 127, ending on a structure boundary, is fine; after it the
   * rest is padding */
  struct gr_dmi_slots s;
  slot_table(&t, &o);
  parse_slots_ok(&t, o.end, &s);
  assert_int_equal(s.n, 4);
  gr_dmi_slots_free(&s);
  memset(t.b + t.n, 0xAB, 5);
  parse_slots_ok(&t, t.n + 5, &s);
  assert_int_equal(s.n, 4);
  gr_dmi_slots_free(&s);
}

/* ---- kernel log tests ---- */

static void parse_text(const char *text, struct gr_xid_log *l)
{
  assert_int_equal(gr_kmsg_parse_xids(text, strlen(text), l), 0);
}

static void parse_file(const char *rel, struct gr_xid_log *l)
{
  char *path = xasprintf("%s/kmsg/%s", getenv("GPURIG_TEST_DATA"), rel);
  struct gr_err err = {0};
  struct gr_file f;
  if (gr_file_read(path, 1 << 20, 0, &f, &err) != 0)
    fail_msg("%s", err.msg);
  free(path);
  assert_int_equal(gr_kmsg_parse_xids(f.data, f.len, l), 0);
  gr_file_free(&f);
}

static void expect_event(const struct gr_xid_event *e, unsigned domain, unsigned bus, unsigned dev, int xid,
                         double t, size_t line)
{
  assert_int_equal(e->domain, domain);
  assert_int_equal(e->bus, bus);
  assert_int_equal(e->dev, dev);
  assert_int_equal(e->xid, xid);
  if (fabs(e->t_sec - t) > 1e-6)
    fail_msg("line %zu: time %f, expected %f", e->line, e->t_sec, t);
  assert_int_equal(e->line, line);
}

static void kmsg_three_formats(void **state)
{
  struct gr_xid_log l;
  (void)state;
  const char *text =
      "6,1001,12345678,-;NVRM: loading NVIDIA UNIX x86_64 Kernel Module  535.129.03\n"
      " SUBSYSTEM=pci\n"
      " NVRM: Xid (PCI:0000:99:00): 48, continuation lines are not records\n"
      "4,1002,85000123456,-,caller=T4242;NVRM: Xid (PCI:0000:01:00): 13, pid=7, name=x, Graphics Exception\n"
      "[ 5678.901234] NVRM: Xid (0000:3b:00): 13, Graphics SM Warp Exception on (GPC 0, TPC 0): Out Of Range Address\n"
      "Nov 21 10:00:00 gpu07 kernel: NVRM: Xid (PCI:0000:41:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.\n"
      "Nov 21 10:00:01 gpu07 kernel: [   12.34] NVRM: Xid (PCI:86:00): 31, pid=1, name=a, Ch 00000008\n"
      "2023-11-21T10:00:02+0000 gpu07 kernel: NVRM: Xid (PCI:0001:c1:1f.0): 94, Contained ECC error\n"
      "[86010.5] usb 1-1: new device\n"
      "\n";
  parse_text(text, &l);
  assert_int_equal(l.lines, 10);
  assert_int_equal(l.bad_lines, 0);
  assert_int_equal(l.first_bad_line, 0);
  assert_int_equal(l.nev, 5);
  expect_event(&l.ev[0], 0, 0x01, 0x00, 13, 85000.123456, 4);
  assert_string_equal(l.ev[0].detail, "pid=7, name=x, Graphics Exception");
  expect_event(&l.ev[1], 0, 0x3b, 0x00, 13, 5678.901234, 5);
  assert_string_equal(l.ev[1].detail, "Graphics SM Warp Exception on (GPC 0, TPC 0): Out Of Range Address");
  expect_event(&l.ev[2], 0, 0x41, 0x00, 79, -1, 6);
  assert_string_equal(l.ev[2].detail, "pid='<unknown>', name=<unknown>, GPU has fallen off the bus.");
  expect_event(&l.ev[3], 0, 0x86, 0x00, 31, 12.34, 7);
  expect_event(&l.ev[4], 1, 0xc1, 0x1f, 94, -1, 8);
  assert_true(fabs(l.last_t_sec - 86010.5) < 1e-9);
  gr_xid_log_free(&l);
  assert_null(l.ev);
  assert_int_equal(l.nev, 0);
}

static void kmsg_not_events(void **state)
{
  struct gr_xid_log l;
  char big[400];
  (void)state;
  parse_text("NVRM: Xid (PCI:0000:01:00): 100001, too big\n"
             "NVRM: Xid (PCI:0000:01:00): 100000, the largest\n"
             "NVRM: Xid (PCI:0000:01:00): 99999999999999999999999, overflow\n"
             "NVRM: Xid (PCI:0000:01:00): , no number\n"
             "NVRM: Xid (PCI:0000:01:00):\n"
             "NVRM: Xid (PCI:0000:01): 13, one field\n"
             "NVRM: Xid (PCI:0000:01:00:00:00): 13, four fields\n"
             "NVRM: Xid (PCI:0000:100:00): 13, bus too large\n"
             "NVRM: Xid (PCI:zz:00): 13, not hex\n"
             "NVRM: Xid PCI:0000:01:00: 13, no parentheses\n"
             "NVRM: GPU at PCI:0000:41:00: GPU-3f1c9a52-6b0e-4d7a-a2c8-91e5f0b7d463\n"
             "[ 1.5 NVRM: Xid (PCI:0000:02:00): 45, unclosed time: a line without time\n"
             "NVRM: Xid (PCI:0000:03:00): 8\r\n",
             &l);
  assert_int_equal(l.lines, 13);
  assert_int_equal(l.bad_lines, 0);
  assert_int_equal(l.nev, 3);
  assert_int_equal(l.ev[0].xid, 100000);
  assert_int_equal(l.ev[0].line, 2);
  expect_event(&l.ev[1], 0, 2, 0, 45, -1, 12);
  expect_event(&l.ev[2], 0, 3, 0, 8, -1, 13);
  assert_string_equal(l.ev[2].detail, "");
  assert_true(l.last_t_sec == -1);
  gr_xid_log_free(&l);
  /* detail is cut to fit, and made printable */
  static const char head[] = "[1.0] NVRM: Xid (PCI:0000:01:00): 62, caf\xc3\xa9\t";
  memset(big, 'x', sizeof(big));
  memcpy(big, head, sizeof(head) - 1);
  assert_int_equal(gr_kmsg_parse_xids(big, sizeof(big), &l), 0);
  assert_int_equal(l.nev, 1);
  assert_int_equal(strlen(l.ev[0].detail), sizeof(l.ev[0].detail) - 1);
  assert_memory_equal(l.ev[0].detail, "caf???xx", 8);
  gr_xid_log_free(&l);
  parse_text("", &l);
  assert_int_equal(l.lines, 0);
  assert_int_equal(l.nev, 0);
  assert_true(l.last_t_sec == -1);
  gr_xid_log_free(&l);
}

static void kmsg_binary_lines(void **state)
{
  struct gr_xid_log l;
  (void)state;
  const char text[] = "[1.0] a\n\0\0\0\n[2.0] NVRM: Xid (PCI:0000:01:00): 13, x\nbell\x07\nab\x01" "cd\n"
                      "tab\tis text\ndel\x7f\n[3.5] NVRM: Xid (PCI:0000:01:00): 43, y";
  assert_int_equal(gr_kmsg_parse_xids(text, sizeof(text) - 1, &l), 0);
  assert_int_equal(l.lines, 8);
  assert_int_equal(l.bad_lines, 4);
  assert_int_equal(l.first_bad_line, 2);
  assert_int_equal(l.nev, 2);
  expect_event(&l.ev[1], 0, 1, 0, 43, 3.5, 8);
  assert_true(fabs(l.last_t_sec - 3.5) < 1e-9);
  gr_xid_log_free(&l);
  /* the committed sample: a UTF-8-like high byte line is text, the rest not */
  parse_file("binary.log", &l);
  assert_int_equal(l.lines, 9);
  assert_int_equal(l.bad_lines, 4);
  assert_int_equal(l.first_bad_line, 2);
  assert_int_equal(l.nev, 2);
  expect_event(&l.ev[0], 0, 1, 0, 31, 20.5, 3);
  expect_event(&l.ev[1], 0, 1, 0, 43, 30.25, 7);
  assert_true(fabs(l.last_t_sec - 40.0) < 1e-9);
  gr_xid_log_free(&l);
}

/* The same night, as /dev/kmsg saw it and as dmesg printed it. */
static void kmsg_sample_files(void **state)
{
  struct gr_xid_log k, d;
  (void)state;
  parse_file("xid-79-13.log", &k);
  parse_file("xid-dmesg.txt", &d);
  assert_int_equal(k.lines, 14);
  assert_int_equal(d.lines, 12);
  assert_int_equal(k.bad_lines + d.bad_lines, 0);
  assert_int_equal(k.nev, 4);
  assert_int_equal(d.nev, 4);
  for (int i = 0; i < 3; i++)
    expect_event(&k.ev[i], 0, 0x01, 0x00, 13, 85000.123456 + (i == 0 ? 0 : i == 1 ? 45e-6 : 77e-6), 4 + i);
  assert_string_equal(k.ev[0].detail,
                      "pid=48211, name=python3, Graphics SM Warp Exception on (GPC 0, TPC 0, SM 0): Out Of Range Address");
  expect_event(&k.ev[3], 0, 0x41, 0x00, 79, 86001.559175, 13);
  assert_string_equal(k.ev[3].detail, "pid='<unknown>', name=<unknown>, GPU has fallen off the bus.");
  assert_true(fabs(k.last_t_sec - 86001.559190) < 1e-6);
  for (size_t i = 0; i < 4; i++) {
    assert_int_equal(d.ev[i].bus, k.ev[i].bus);
    assert_int_equal(d.ev[i].xid, k.ev[i].xid);
    assert_true(fabs(d.ev[i].t_sec - k.ev[i].t_sec) < 1e-6);
    assert_string_equal(d.ev[i].detail, k.ev[i].detail);
  }
  assert_true(fabs(d.last_t_sec - k.last_t_sec) < 1e-6);
  gr_xid_log_free(&k);
  gr_xid_log_free(&d);
}

/* ---- grouping Xid events ---- */

/* The text of n dmesg lines, line i at i seconds. Line i names bus address
 * (i % period) / 256 : (i % period) % 256 with Xid `xid` and detail "ev I". */
static char *xid_lines(size_t n, size_t period, int xid, size_t *len)
{
  char *buf = NULL;
  FILE *f = open_memstream(&buf, len);
  assert_non_null(f);
  for (size_t i = 0; i < n; i++) {
    size_t k = i % period;
    fprintf(f, "[%zu.000000] NVRM: Xid (PCI:%04zx:%02zx:00): %d, ev %zu\n", i, k / 256, k % 256, xid, i);
  }
  assert_int_equal(fclose(f), 0);
  return buf;
}

/* One GPU and one Xid a thousand times: one group that counts them all and
 * keeps the first and last time and the last line. */
static void xid_group_repeated(void **state)
{
  struct gr_xid_log l;
  struct gr_xid_groups g;
  size_t len;
  (void)state;
  char *text = xid_lines(1000, 1, 79, &len);
  assert_int_equal(gr_kmsg_parse_xids(text, len, &l), 0);
  gr_xid_group(&l, 0, &g);
  assert_int_equal(g.n, 1);
  assert_int_equal(g.older, 0);
  assert_int_equal(g.v[0].count, 1000);
  assert_int_equal(g.v[0].xid, 79);
  assert_true(g.v[0].first_t == 0 && g.v[0].last_t == 999);
  assert_int_equal(g.v[0].line, 1000);
  assert_string_equal(g.v[0].detail, "ev 999");
  gr_xid_groups_free(&g);
  /* a window from 900 s: the 900 events before it are counted, not grouped */
  gr_xid_group(&l, 900, &g);
  assert_int_equal(g.n, 1);
  assert_int_equal(g.older, 900);
  assert_int_equal(g.v[0].count, 100);
  assert_true(g.v[0].first_t == 900);
  gr_xid_groups_free(&g);
  gr_xid_log_free(&l);
  free(text);
}

/* 100,000 distinct addresses (domains 0 to 390, so addresses that differ
 * only in the domain must not share a group), each seen twice: as many
 * groups, in the order of their first event, each with its last line. */
static void xid_group_many_distinct(void **state)
{
  enum { N = 100000 };
  struct gr_xid_log l;
  struct gr_xid_groups g;
  size_t len;
  char want[32];
  (void)state;
  char *text = xid_lines(2 * N, N, 13, &len);
  assert_int_equal(gr_kmsg_parse_xids(text, len, &l), 0);
  assert_int_equal(l.nev, 2 * N);
  gr_xid_group(&l, 0, &g);
  assert_int_equal(g.n, N);
  for (size_t k = 0; k < N; k++) {
    const struct gr_xid_group *x = &g.v[k];
    if (x->domain != k / 256 || x->bus != k % 256 || x->count != 2 || x->line != N + k + 1)
      fail_msg("group %zu: %04x:%02x count %zu line %zu", k, x->domain, x->bus, x->count, x->line);
    snprintf(want, sizeof(want), "ev %zu", N + k);
    assert_string_equal(x->detail, want);
  }
  gr_xid_groups_free(&g);
  gr_xid_log_free(&l);
  free(text);
}

/* The same address with different Xids is different groups; no events, no groups. */
static void xid_group_by_xid(void **state)
{
  struct gr_xid_log l;
  struct gr_xid_groups g;
  const char *text = "NVRM: Xid (PCI:0000:41:00): 13, a\nNVRM: Xid (PCI:0000:41:00): 79, b\n"
                     "NVRM: Xid (PCI:0001:41:00): 13, c\nNVRM: Xid (PCI:0000:41:00): 13, d\n";
  (void)state;
  parse_text(text, &l);
  gr_xid_group(&l, 1e9, &g); /* lines without a time are always kept */
  assert_int_equal(g.n, 3);
  assert_int_equal(g.v[0].count, 2);
  assert_string_equal(g.v[0].detail, "d");
  assert_int_equal(g.v[1].xid, 79);
  assert_int_equal(g.v[2].domain, 1);
  gr_xid_groups_free(&g);
  gr_xid_log_free(&l);
  parse_text("no Xid here\n", &l);
  gr_xid_group(&l, 0, &g);
  assert_int_equal(g.n, 0);
  gr_xid_groups_free(&g);
  gr_xid_log_free(&l);
}

int main(void)
{
  if (!getenv("GPURIG_TEST_DATA")) {
    fprintf(stderr, "set GPURIG_TEST_DATA (ctest does)\n");
    return 1;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(dmi_server_table),
      cmocka_unit_test(dmi_table_end),
      cmocka_unit_test(dmi_short_structures),
      cmocka_unit_test(dmi_strings),
      cmocka_unit_test(dmi_broken_tables),
      cmocka_unit_test(dmi_type_names),
      cmocka_unit_test(dmi_slots_fields),
      cmocka_unit_test(dmi_slot_of),
      cmocka_unit_test(dmi_slots_short),
      cmocka_unit_test(dmi_slots_broken),
      cmocka_unit_test(kmsg_three_formats),
      cmocka_unit_test(kmsg_not_events),
      cmocka_unit_test(kmsg_binary_lines),
      cmocka_unit_test(kmsg_sample_files),
      cmocka_unit_test(xid_group_repeated),
      cmocka_unit_test(xid_group_many_distinct),
      cmocka_unit_test(xid_group_by_xid),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
