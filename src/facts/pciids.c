#include "facts/pciids.h"

#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"
#include "facts/facts.h"

int gr_pciids_map(const char **out, size_t *len)
{
  const char *paths[] = {getenv("GPURIG_PCI_IDS"), "/usr/share/misc/pci.ids", "/usr/share/hwdata/pci.ids"};
  *out = NULL;
  *len = 0;
  for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
    if (!paths[i] || !*paths[i])
      continue;
    int fd = open(paths[i], O_RDONLY | O_CLOEXEC);
    if (fd < 0)
      continue;
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
      void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
      if (m != MAP_FAILED) {
        *out = m;
        *len = (size_t)st.st_size;
      }
    }
    close(fd);
    return 0; /* the first file that exists decides, even if empty */
  }
  return 0;
}

void gr_pciids_unmap(const char *db, size_t len)
{
  if (db)
    munmap((void *)db, len);
}

/* The mapped database: a span of bytes, not a C string. */
struct db {
  const char *p;
  size_t len;
};

static bool is_vendor_line(const char *p, const char *end)
{
  if (end - p < 6 || p[4] != ' ' || p[5] != ' ')
    return false;
  for (int i = 0; i < 4; i++)
    if (!((p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'f')))
      return false;
  return true;
}

/* The first vendor line starting after the line that contains p (or at p
 * when p is the start of the database). */
static const char *next_vendor_line(const struct db *db, const char *p, const char *end)
{
  if (p != db->p) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    if (!nl)
      return NULL;
    p = nl + 1;
  }
  while (p < end && !is_vendor_line(p, end)) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    if (!nl)
      return NULL;
    p = nl + 1;
  }
  return p < end ? p : NULL;
}

static unsigned vendor_id_at(const char *p)
{
  return (unsigned)strtoul((char[5]){p[0], p[1], p[2], p[3], '\0'}, NULL, 16);
}

/* pci.ids lists vendors in ascending order (the PCI ID Project keeps it so):
 * binary search on byte offsets, then a short forward scan. */
static const char *find_vendor_line(const struct db *db, unsigned vendor)
{
  const char *end = db->p + db->len;
  size_t lo = 0, hi = db->len;
  while (hi - lo > 8192) {
    size_t mid = lo + (hi - lo) / 2;
    const char *v = next_vendor_line(db, db->p + mid, end);
    if (!v || vendor_id_at(v) > vendor)
      hi = mid;
    else /* v may lie far past mid (after a long section): never rescan that */
      lo = (size_t)(v - db->p) < hi ? (size_t)(v - db->p) : mid;
  }
  for (const char *v = next_vendor_line(db, db->p + lo, end); v; v = next_vendor_line(db, v, end)) {
    unsigned id = vendor_id_at(v);
    if (id == vendor)
      return v;
    if (id > vendor)
      break;
  }
  return NULL;
}

static const char *vendor_section(const struct db *db, unsigned vendor, const char **end, const char **vname,
                                  size_t *vlen)
{
  const char *dbend = db->p + db->len;
  const char *p = find_vendor_line(db, vendor);
  if (!p)
    return NULL;
  *vname = p + 6;
  const char *nl = memchr(p, '\n', (size_t)(dbend - p));
  *vlen = nl ? (size_t)(nl - *vname) : (size_t)(dbend - *vname);
  const char *q = nl ? nl + 1 : dbend;
  const char *start = q;
  while (q < dbend && (*q == '\t' || *q == '#' || *q == '\n')) {
    const char *n2 = memchr(q, '\n', (size_t)(dbend - q));
    q = n2 ? n2 + 1 : dbend;
  }
  *end = q;
  return start;
}

static const char *copy_name(const char *name, size_t n, char *buf, size_t cap)
{
  snprintf(buf, cap, "%.*s", (int)(n < cap ? n : cap - 1), name);
  return buf;
}

/* Reads only the mapping the facts hold: any thread may call it. */
static const char *lookup(unsigned vendor, unsigned device, char *buf, size_t cap)
{
  const struct gr_facts *f = gr_facts();
  struct db db = {f->pciids, f->pciids_len};
  const char *end, *vname;
  size_t vlen;
  const char *sec = db.p ? vendor_section(&db, vendor, &end, &vname, &vlen) : NULL;
  if (!sec || cap == 0)
    return NULL;
  if (device == 0x10000)
    return copy_name(vname, vlen, buf, cap);
  /* device lines are "\tdddd  name"; subsystem lines have two tabs */
  char key[9];
  snprintf(key, sizeof(key), "\n\t%04x  ", device & 0xffff);
  const char *from = sec - 1; /* the newline before the section */
  const char *hit = memmem(from, (size_t)(end - from), key, 8);
  if (!hit)
    return NULL;
  const char *dn = hit + 8;
  const char *nl = memchr(dn, '\n', (size_t)(end - dn));
  return copy_name(dn, nl ? (size_t)(nl - dn) : (size_t)(end - dn), buf, cap);
}

const char *gr_pciids_vendor(unsigned vendor, char *buf, size_t cap)
{
  return lookup(vendor, 0x10000, buf, cap);
}

const char *gr_pciids_device(unsigned vendor, unsigned device, char *buf, size_t cap)
{
  return lookup(vendor, device & 0xffff, buf, cap);
}
