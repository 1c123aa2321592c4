#include "pciids.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

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

void gr_pciids_use_text(const char *text, unsigned long len)
{
  db = text;
  dblen = len;
  loaded = 1;
  ncache = 0;
  nsections = 0;
}

/* Finds "<prefix>xxxx  name" at the start of a line in [from, end); returns
 * the name's start and sets *nlen, or NULL. */
static const char *find_entry(const char *from, const char *end, const char *key, size_t *nlen)
{
  size_t klen = strlen(key);
  const char *p = from;
  while (p && p + klen + 2 <= end) {
    if (memcmp(p, key, klen) == 0 && p[klen] == ' ' && p[klen + 1] == ' ') {
      const char *name = p + klen + 2;
      const char *nl = memchr(name, '\n', (size_t)(end - name));
      *nlen = nl ? (size_t)(nl - name) : (size_t)(end - name);
      return name;
    }
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    p = nl ? nl + 1 : NULL;
  }
  return NULL;
}

/* The vendor's section: from its line to the next line that does not start
 * with a tab or '#'. */
static const char *vendor_section(unsigned vendor, const char **end, const char **vname, size_t *vlen)
{
  char key[8];
  snprintf(key, sizeof(key), "%04x", vendor);
  const char *dbend = db + dblen;
  const char *p = db;
  while (p < dbend) {
    /* vendor lines start in column 0 with four hex digits */
    if (dbend - p >= 6 && memcmp(p, key, 4) == 0 && p[4] == ' ' && p[5] == ' ') {
      *vname = p + 6;
      const char *nl = memchr(p, '\n', (size_t)(dbend - p));
      *vlen = nl ? (size_t)(nl - *vname) : (size_t)(dbend - *vname);
      const char *q = nl ? nl + 1 : dbend;
      while (q < dbend && (*q == '\t' || *q == '#' || *q == '\n')) {
        const char *n2 = memchr(q, '\n', (size_t)(dbend - q));
        q = n2 ? n2 + 1 : dbend;
      }
      *end = q;
      return nl ? nl + 1 : dbend;
    }
    const char *nl = memchr(p, '\n', (size_t)(dbend - p));
    if (!nl)
      break;
    p = nl + 1;
  }
  return NULL;
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
    char key[8];
    snprintf(key, sizeof(key), "\t%04x", device);
    const char *dn = find_entry(sec, end, key, &nlen);
    if (dn)
      name = xstrndup(dn, nlen);
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
