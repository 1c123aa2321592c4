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

/* The vendor's line: its name, and where its section of device lines starts. */
static const char *vendor_section(const struct db *db, unsigned vendor, const char **vname, size_t *vlen)
{
  const char *dbend = db->p + db->len;
  const char *p = find_vendor_line(db, vendor);
  if (!p)
    return NULL;
  *vname = p + 6;
  const char *nl = memchr(p, '\n', (size_t)(dbend - p));
  *vlen = nl ? (size_t)(nl - *vname) : (size_t)(dbend - *vname);
  return nl ? nl + 1 : dbend;
}

/* Where a section ends: at the first line that is neither a device or
 * subsystem line, a comment, nor blank (the next vendor). Walking it costs
 * a line at a time, so only device lookups ask. */
static const char *section_end(const struct db *db, const char *start)
{
  const char *dbend = db->p + db->len, *q = start;
  while (q < dbend && (*q == '\t' || *q == '#' || *q == '\n')) {
    const char *n2 = memchr(q, '\n', (size_t)(dbend - q));
    q = n2 ? n2 + 1 : dbend;
  }
  return q;
}

/* A vendor's place in the database, found once per session. */
struct gr_pciids_section {
  unsigned vendor;
  const char *start, *end, *name; /* start NULL: the vendor is absent; end NULL: not yet needed */
  size_t nlen;
};

static struct gr_pciids_section *section_of(struct gr_pciids_session *ss, unsigned vendor)
{
  struct db db;
  db.p = gr_pciids_db(&db.len);
  for (size_t i = 0; i < ss->n; i++)
    if (ss->v[i].vendor == vendor)
      return &ss->v[i];
  grow_array((void **)&ss->v, sizeof(*ss->v), &ss->cap, ss->n);
  struct gr_pciids_section *s = &ss->v[ss->n++];
  memset(s, 0, sizeof(*s));
  s->vendor = vendor;
  s->start = db.p ? vendor_section(&db, vendor, &s->name, &s->nlen) : NULL;
  return s;
}

char *gr_pciids_vendor_name(struct gr_pciids_session *ss, unsigned vendor)
{
  const struct gr_pciids_section *s = section_of(ss, vendor);
  return s->start ? xstrndup(s->name, s->nlen) : NULL;
}

char *gr_pciids_device_name(struct gr_pciids_session *ss, unsigned vendor, unsigned device)
{
  struct gr_pciids_section *s = section_of(ss, vendor);
  if (!s->start)
    return NULL;
  if (!s->end) {
    struct db db;
    db.p = gr_pciids_db(&db.len);
    s->end = section_end(&db, s->start);
  }
  /* device lines are "\tdddd  name"; subsystem lines have two tabs */
  char key[9];
  snprintf(key, sizeof(key), "\n\t%04x  ", device & 0xffff);
  const char *from = s->start - 1; /* the newline before the section */
  const char *hit = memmem(from, (size_t)(s->end - from), key, 8);
  if (!hit)
    return NULL;
  const char *dn = hit + 8;
  const char *nl = memchr(dn, '\n', (size_t)(s->end - dn));
  return xstrndup(dn, nl ? (size_t)(nl - dn) : (size_t)(s->end - dn));
}

void gr_pciids_session_free(struct gr_pciids_session *ss)
{
  free(ss->v);
  memset(ss, 0, sizeof(*ss));
}
