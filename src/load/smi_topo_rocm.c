/* A saved `rocm-smi --showtopo` (loaders.h), or any of its parts as people
 * post them (--showtopoweight, --showtopohops, --showtopotype,
 * --showtoponuma): "Weight between two GPUs", "Hops between two GPUs" and
 * "Link Type between two GPUs" matrices and "GPU[i] : (Topology) Numa
 * Node: N" lines. What the numbers mean, and the tree they make:
 * smi_topo_pairs.c, shared with the amd-smi reader. */
#include "load/loaders.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "load/smi_topo_internal.h"

#define RS_MAX_WORDS (MX_MAX_DEVICES + 1)

enum rs_table { RS_NONE, RS_WEIGHT, RS_HOPS, RS_TYPE, RS_OTHER };

struct rs {
  const char *name;
  const char *buf, *end;
  struct gr_err *err;
  size_t n;              /* GPUs, from the first matrix or the NUMA lines */
  struct amd_pairs p;    /* allocated once n is known */
  int numa[MX_MAX_DEVICES];
  bool tables[RS_OTHER + 1];
  const char **w;
  size_t *wl;
};

static enum rs_table table_of(const char *p, const char *end)
{
  size_t len = (size_t)(mx_next_line(p, end) - p);
  if (len < 4 || !memmem(p, len, "==", 2))
    return RS_NONE;
  if (!memmem(p, len, "between two GPUs", 16))
    return RS_NONE;
  return memmem(p, len, "Weight", 6) ? RS_WEIGHT : memmem(p, len, "Hops", 4) ? RS_HOPS
         : memmem(p, len, "Link Type", 9)                                   ? RS_TYPE
                                                                             : RS_OTHER;
}

static bool gpu_word(const char *w, size_t n, int *i)
{
  return n > 3 && memcmp(w, "GPU", 3) == 0 && mx_uint(w + 3, n - 3, i);
}

static void alloc_tables(struct rs *r, size_t n)
{
  r->n = n;
  amd_pairs_alloc(&r->p, n);
}

/* The header of a matrix: GPU0 GPU1 ... in order. */
static int read_header(struct rs *r, const char *p, unsigned line)
{
  size_t k = mx_words(p, r->end, r->w, r->wl, RS_MAX_WORDS);
  int g;
  if (k == 0 || k > MX_MAX_DEVICES)
    return gr_fail(r->err, GR_EXIT_FAIL, "%s:%u: expected a header of GPU0 .. GPUn (at most %d) under the title",
                   r->name, line, MX_MAX_DEVICES);
  for (size_t i = 0; i < k; i++)
    if (!gpu_word(r->w[i], r->wl[i], &g) || (size_t)g != i)
      return gr_fail(r->err, GR_EXIT_FAIL, "%s:%u: header word %zu is \"%.*s\", expected GPU%zu", r->name, line,
                     i + 1, (int)(r->wl[i] > 40 ? 40 : r->wl[i]), r->w[i], i);
  if (r->n == 0)
    alloc_tables(r, k);
  else if (k != r->n)
    return gr_fail(r->err, GR_EXIT_FAIL, "%s:%u: %zu GPUs, the matrix above has %zu", r->name, line, k, r->n);
  return 0;
}

static int read_cell(struct rs *r, enum rs_table tb, size_t a, size_t b, size_t c, unsigned line)
{
  const char *w = r->w[c];
  size_t n = r->wl[c];
  int v;
  size_t at = a * r->n + b;
  if (a == b)
    return 0; /* rocm-smi prints 0 there (some versions 1): nothing to read */
  if (tb == RS_TYPE && (mx_is(w, n, "PCIE") || mx_is(w, n, "XGMI"))) {
    r->p.type[at] = mx_is(w, n, "XGMI") ? AMD_LINK_XGMI : AMD_LINK_PCIE;
    return 0;
  }
  if (mx_is(w, n, "N/A"))
    return 0; /* not reported for this pair: left unknown, as a missing table is */
  if ((tb == RS_WEIGHT || tb == RS_HOPS) && mx_uint(w, n, &v)) {
    (tb == RS_WEIGHT ? r->p.weight : r->p.hops)[at] = v;
    return 0;
  }
  if (tb != RS_WEIGHT && tb != RS_HOPS && tb != RS_TYPE)
    return 0; /* a table gpurig does not read (Access: True/False) */
  return gr_fail(r->err, GR_EXIT_FAIL, "%s:%u: GPU%zu, GPU%zu: \"%.*s\" is not a %s", r->name, line, a, b,
                 (int)(n > 40 ? 40 : n), w, tb == RS_TYPE ? "link type (PCIE, XGMI)" : "number");
}

/* A matrix's rows after its header; returns where it ends. */
static const char *read_matrix(struct rs *r, enum rs_table tb, const char *p, unsigned *line)
{
  for (; p < r->end; p = mx_next_line(p, r->end), (*line)++) {
    size_t k = mx_words(p, r->end, r->w, r->wl, RS_MAX_WORDS);
    int g;
    if (k == 0 || k > RS_MAX_WORDS || !gpu_word(r->w[0], r->wl[0], &g))
      return p;
    if ((size_t)g >= r->n || k != r->n + 1) {
      gr_fail(r->err, GR_EXIT_FAIL, "%s:%u: row %.*s: expected GPU0 .. GPU%zu and %zu cells", r->name, *line,
              (int)(r->wl[0] > 40 ? 40 : r->wl[0]), r->w[0], r->n - 1, r->n);
      return NULL;
    }
    for (size_t c = 0; c < r->n; c++)
      if (read_cell(r, tb, (size_t)g, c, c + 1, *line) != 0)
        return NULL;
  }
  return p;
}

/* "GPU[3]		: (Topology) Numa Node: 1" (Numa Affinity where no Node line). */
static int read_numa(struct rs *r, const char *p, unsigned line)
{
  const char *eol = mx_next_line(p, r->end);
  size_t len = (size_t)(eol - p);
  const char *node = memmem(p, len, "Numa Node:", 10), *aff = memmem(p, len, "Numa Affinity:", 14);
  const char *v = node ? node + 10 : aff ? aff + 14 : NULL;
  int g, x;
  while (p < eol && (*p == ' ' || *p == '\t'))
    p++;
  const char *close = memchr(p, ']', (size_t)(eol - p));
  if (!v || eol - p < 6 || memcmp(p, "GPU[", 4) != 0 || !close || !mx_uint(p + 4, (size_t)(close - p - 4), &g))
    return 0;
  if (g >= MX_MAX_DEVICES || (r->n && (size_t)g >= r->n))
    return gr_fail(r->err, GR_EXIT_FAIL, "%s:%u: GPU[%d] is not among the %zu GPUs of the matrices", r->name, line, g,
                   r->n);
  size_t k = mx_words(v, eol, r->w, r->wl, 1);
  if (k == 1 && mx_uint(r->w[0], r->wl[0], &x) && x < 65536 && (node || r->numa[g] < 0))
    r->numa[g] = x;
  return 0;
}

static int rs_read(struct rs *r)
{
  unsigned line = 1;
  for (const char *p = r->buf; p && p < r->end;) {
    enum rs_table tb = table_of(p, r->end);
    if (tb == RS_NONE) {
      if (read_numa(r, p, line) != 0)
        return -1;
      p = mx_next_line(p, r->end), line++;
      continue;
    }
    p = mx_next_line(p, r->end), line++;
    while (p < r->end && mx_words(p, r->end, r->w, r->wl, 1) == 0)
      p = mx_next_line(p, r->end), line++;
    if (read_header(r, p, line) != 0)
      return -1;
    r->tables[tb] = true;
    p = mx_next_line(p, r->end), line++;
    p = read_matrix(r, tb, p, &line);
    if (!p)
      return -1;
  }
  return 0;
}

static const struct amd_tool rocm_smi = {
    .kind = "rocm-smi",
    .states = "rocm-smi's topology states link types, hops, weights and NUMA nodes, not the PCIe tree: each GPU is "
              "drawn on a host bridge of its own, so PCIe pairs in one NUMA node show as NODE where a shared switch or "
              "root port would be nearer. It states no bus ids, GPU models, PCIe generations or widths, NICs, or xGMI "
              "links per pair and their rate.",
    .numa_gap = "Not every GPU has a Numa Node line: the NUMA nodes of those are gpurig's, parted by hops (3: another "
                "socket) or weights where the output has them, else one node.",
};

static void rs_build(struct rs *r, struct gr_topo *t)
{
  memcpy(r->p.numa, r->numa, r->n * sizeof(int));
  amd_pairs_build(&r->p, r->name, &rocm_smi, t);
  if (r->tables[RS_WEIGHT] && !r->tables[RS_TYPE])
    gr_topo_add_gap(t, "No Link Type matrix: gpurig took weights that are multiples of 15 and not of 20 as xGMI (15 "
                    "per hop), the others as PCIe (20 per segment).");
}

int gr_load_rocmsmi_topo_buffer(const char *name, const char *buf, size_t len, struct gr_topo *t, struct gr_err *err)
{
  struct rs r = {.name = name, .buf = buf, .end = buf + len, .err = err};
  int rc = -1;
  gr_topo_init(t);
  for (size_t i = 0; i < MX_MAX_DEVICES; i++)
    r.numa[i] = -1;
  r.w = xcalloc(RS_MAX_WORDS + 1, sizeof(*r.w));
  r.wl = xcalloc(RS_MAX_WORDS + 1, sizeof(*r.wl));
  if (rs_read(&r) != 0)
    goto out;
  if (r.n == 0)
    for (size_t i = 0; i < MX_MAX_DEVICES; i++)
      r.n = r.numa[i] >= 0 ? i + 1 : r.n;
  if (r.n == 0) {
    gr_fail(err, GR_EXIT_FAIL, "%s: no rocm-smi topology (no \"between two GPUs\" matrix, no Numa Node line)", name);
    goto out;
  }
  if (!r.p.weight)
    alloc_tables(&r, r.n);
  rs_build(&r, t);
  t->source_path = xstrdup(name);
  rc = 0;
out:
  amd_pairs_free(&r.p);
  free(r.w);
  free(r.wl);
  return rc;
}

/* Whether a line is one of amd-smi topology's titles ("LINK TYPE TABLE:"). */
static bool amdsmi_title(const char *p, const char *end)
{
  const char *w[4];
  size_t wl[4];
  size_t k = mx_words(p, end, w, wl, 3);
  return (k == 2 && mx_is(w[1], wl[1], "TABLE:") &&
          (mx_is(w[0], wl[0], "ACCESS") || mx_is(w[0], wl[0], "WEIGHT") || mx_is(w[0], wl[0], "HOPS"))) ||
         (k == 3 && mx_is(w[0], wl[0], "LINK") && mx_is(w[1], wl[1], "TYPE") && mx_is(w[2], wl[2], "TABLE:"));
}

/* 1 nvidia-smi topo -m, 2 rocm-smi, 3 amd-smi, 0 none: by content, as
 * --input tells its formats apart. Reads no further than it must. */
int gr_smi_topo_sniff(const char *buf, size_t len)
{
  const char *w[2];
  size_t wl[2];
  size_t i = 0;
  while (i < len && (buf[i] == ' ' || buf[i] == '\t' || buf[i] == '\r' || buf[i] == '\n'))
    i++;
  if (i == len || buf[i] == '<')
    return 0; /* XML */
  if (buf[i] == '[')
    return memmem(buf, len, "\"link_type\"", 11) ? 3 : 0; /* amd-smi topology --json */
  if (memmem(buf, len, "between two GPUs", 16) || memmem(buf, len, "(Topology) Numa", 15))
    return 2;
  for (const char *p = buf, *end = buf + len; p < end; p = mx_next_line(p, end))
    if (amdsmi_title(p, end))
      return 3;
  for (const char *p = buf, *end = buf + len; p < end; p = mx_next_line(p, end)) {
    size_t k = mx_words(p, end, w, wl, 2);
    if (k >= 1 && mx_is(w[0], wl[0], "GPU0"))
      return 1;
  }
  return 0;
}
