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

/* The database stays mapped; looked-up names are copied into a small
 * cache so each is returned with a stable pointer. */
static const char *db;
static size_t dblen;
static int loaded;

struct cached {
  unsigned vendor, device; /* device 0x10000 for the vendor's own name */
  char *name;              /* NULL when absent */
};
static struct cached *cache;
static size_t ncache, capcache;

struct section {
  unsigned vendor;
  const char *start, *end, *name; /* start NULL: vendor absent */
  size_t nlen;
};
static struct section *sections;
static size_t nsections, capsections;

static void load_db(void)
{
  const char *paths[] = {getenv("GPURIG_PCI_IDS"), "/usr/share/misc/pci.ids", "/usr/share/hwdata/pci.ids"};
  loaded = 1;
  for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
    if (!paths[i] || !*paths[i])
      continue;
    int fd = open(paths[i], O_RDONLY | O_CLOEXEC);
    if (fd < 0)
      continue;
    struct stat st;
    if (fstat(fd, &st) == 0 && st.st_size > 0) {
      void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
      if (m != MAP_FAILED) {
        db = m;
        dblen = (size_t)st.st_size;
      }
    }
    close(fd);
    return; /* the first file that exists decides, even if empty */
  }
}

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
static const char *next_vendor_line(const char *p, const char *end)
{
  if (p != db) {
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
static const char *find_vendor_line(unsigned vendor)
{
  const char *end = db + dblen;
  size_t lo = 0, hi = dblen;
  while (hi - lo > 8192) {
    size_t mid = lo + (hi - lo) / 2;
    const char *v = next_vendor_line(db + mid, end);
    if (!v || vendor_id_at(v) > vendor)
      hi = mid;
    else /* v may lie far past mid (after a long section): never rescan that */
      lo = (size_t)(v - db) < hi ? (size_t)(v - db) : mid;
  }
  for (const char *v = next_vendor_line(db + lo, end); v; v = next_vendor_line(v, end)) {
    unsigned id = vendor_id_at(v);
    if (id == vendor)
      return v;
    if (id > vendor)
      break;
  }
  return NULL;
}

static const char *vendor_section(unsigned vendor, const char **end, const char **vname, size_t *vlen)
{
  const char *dbend = db + dblen;
  const char *p = find_vendor_line(vendor);
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

static const struct section *section_of(unsigned vendor)
{
  for (size_t i = 0; i < nsections; i++)
    if (sections[i].vendor == vendor)
      return &sections[i];
  grow_array((void **)&sections, sizeof(*sections), &capsections, nsections);
  struct section *s = &sections[nsections++];
  s->vendor = vendor;
  s->start = db ? vendor_section(vendor, &s->end, &s->name, &s->nlen) : NULL;
  return s;
}

static const char *lookup(unsigned vendor, unsigned device)
{
  for (size_t i = 0; i < ncache; i++)
    if (cache[i].vendor == vendor && cache[i].device == device)
      return cache[i].name;
  if (!loaded)
    load_db();
  char *name = NULL;
  size_t nlen;
  const struct section *s = section_of(vendor);
  const char *sec = s->start, *end = s->end, *vname = s->name;
  size_t vlen = s->nlen;
  if (sec && device == 0x10000) {
    name = xstrndup(vname, vlen);
  } else if (sec) {
    /* device lines are "\tdddd  name"; subsystem lines have two tabs */
    char key[8];
    snprintf(key, sizeof(key), "\t%04x  ", device);
    const char *from = sec - 1; /* the newline before the section */
    const char *hit = memmem(from, (size_t)(end - from), (char[9]){'\n', key[0], key[1], key[2], key[3], key[4], ' ', ' ', 0}, 8);
    if (hit) {
      const char *dn = hit + 8;
      const char *nl = memchr(dn, '\n', (size_t)(end - dn));
      nlen = nl ? (size_t)(nl - dn) : (size_t)(end - dn);
      name = xstrndup(dn, nlen);
    }
  }
  grow_array((void **)&cache, sizeof(*cache), &capcache, ncache);
  cache[ncache++] = (struct cached){vendor, device, name};
  return name;
}

const char *gr_pciids_vendor(unsigned vendor)
{
  return lookup(vendor, 0x10000);
}

const char *gr_pciids_device(unsigned vendor, unsigned device)
{
  return lookup(vendor, device);
}
