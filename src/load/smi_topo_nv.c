/* A saved `nvidia-smi topo -m` (loaders.h): its matrix, CPU and NUMA
 * Affinity columns and NIC Legend, in the layouts nvidia-smi has printed
 * (NIC0.. with a legend; older: the RDMA devices as column labels and no
 * GPU NUMA ID), tabs or spaces. */
#include "load/loaders.h"

#include <stdlib.h>
#include <string.h>

#include "load/smi_topo_internal.h"

/* A row's words: the label, one cell per column, three affinity columns. */
#define NV_MAX_WORDS (MX_MAX_DEVICES + 4)

struct nv {
  struct mx m;
  const char *buf, *end;
  unsigned line;       /* of the header */
  bool has_numa;       /* a NUMA Affinity column */
  size_t extras;       /* affinity columns after the cells */
  const char **w;      /* NV_MAX_WORDS */
  size_t *wl;
  unsigned char *raw;  /* n x n as read; 0 not read */
  int *rawlinks;
  bool *seen;          /* rows read */
  struct gr_err *err;
};

static bool gpu_label(const char *w, size_t n)
{
  int v;
  return n > 3 && memcmp(w, "GPU", 3) == 0 && mx_uint(w + 3, n - 3, &v);
}

/* The header: the first line whose first word is GPU0. The matrix columns
 * are the words before "CPU Affinity" (or "NUMA Affinity", "GPU NUMA ID"). */
static const char *find_header(struct nv *v, size_t *nw)
{
  unsigned line = 1;
  for (const char *p = v->buf; p < v->end; p = mx_next_line(p, v->end), line++) {
    size_t k = mx_words(p, v->end, v->w, v->wl, NV_MAX_WORDS);
    if (k >= 1 && k <= NV_MAX_WORDS && mx_is(v->w[0], v->wl[0], "GPU0")) {
      v->line = line;
      *nw = k;
      return p;
    }
  }
  return NULL;
}

static int header_columns(struct nv *v, size_t nw)
{
  size_t n = 0;
  while (n < nw && !mx_is(v->w[n], v->wl[n], "CPU") && !mx_is(v->w[n], v->wl[n], "NUMA") &&
         !mx_is(v->w[n], v->wl[n], "GPU"))
    n++;
  if (n > MX_MAX_DEVICES)
    return gr_fail(v->err, GR_EXIT_FAIL, "%s:%u: %zu columns; gpurig reads at most %d", v->m.name, v->line, n,
                   MX_MAX_DEVICES);
  for (size_t i = n; i < nw; i++) {
    v->extras += mx_is(v->w[i], v->wl[i], "Affinity") || mx_is(v->w[i], v->wl[i], "ID");
    v->has_numa |= i + 1 < nw && mx_is(v->w[i], v->wl[i], "NUMA") && mx_is(v->w[i + 1], v->wl[i + 1], "Affinity");
  }
  mx_alloc(&v->m, n);
  for (size_t i = 0; i < n; i++) {
    struct mx_dev *d = &v->m.dev[i];
    d->nic = !gpu_label(v->w[i], v->wl[i]);
    d->label = xstrndup(v->w[i], v->wl[i]);
    d->rdma = d->nic && strncmp(d->label, "NIC", 3) != 0 ? xstrdup(d->label) : NULL;
    for (size_t j = 0; j < i; j++)
      if (strcmp(v->m.dev[j].label, d->label) == 0)
        return gr_fail(v->err, GR_EXIT_FAIL, "%s:%u: column %s given twice", v->m.name, v->line, d->label);
    if (i > 0 && !d->nic && v->m.dev[i - 1].nic)
      return gr_fail(v->err, GR_EXIT_FAIL, "%s:%u: column %s after a NIC column: nvidia-smi prints GPUs first",
                     v->m.name, v->line, d->label);
  }
  return 0;
}

static int column_of(const struct nv *v, const char *w, size_t n)
{
  for (size_t i = 0; i < v->m.n; i++)
    if (mx_is(w, n, v->m.dev[i].label))
      return (int)i;
  return -1;
}

/* One cell: X, NV#, PIX, PXB, PHB, NODE, SYS (SOC: nvidia-smi's older SYS). */
static bool parse_cell(const char *w, size_t n, enum mx_level *l, int *links)
{
  static const struct { const char *s; enum mx_level l; } names[] = {
    {"X", MX_SELF}, {"PIX", MX_PIX}, {"PXB", MX_PXB}, {"PHB", MX_PHB},
    {"NODE", MX_NODE}, {"SYS", MX_SYS}, {"SOC", MX_SYS},
  };
  *links = 0;
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
    if (mx_is(w, n, names[i].s)) {
      *l = names[i].l;
      return true;
    }
  *l = MX_GPULINK;
  return n > 2 && memcmp(w, "NV", 2) == 0 && n <= 5 && mx_uint(w + 2, n - 2, links) && *links > 0;
}

static bool cpulist_word(const char *w, size_t n)
{
  return n > 0 && n < 4096 && strspn(w, "0123456789,-") >= n;
}

/* CPU Affinity, NUMA Affinity, GPU NUMA ID of a GPU row; "N/A" is unknown. */
static void row_affinity(struct nv *v, struct mx_dev *d, size_t k)
{
  size_t c = v->m.n + 1;
  int x;
  if (v->extras >= 1 && c < k && cpulist_word(v->w[c], v->wl[c]))
    d->cpulist = xstrndup(v->w[c], v->wl[c]);
  if (v->has_numa && c + 1 < k && mx_uint(v->w[c + 1], v->wl[c + 1], &x) && x < 65536)
    d->numa = x;
  if (v->extras >= 3 && c + 2 < k && mx_uint(v->w[c + 2], v->wl[c + 2], &x) && x < 65536)
    d->gpu_numa = x;
}

static int read_row(struct nv *v, int r, size_t k, unsigned line)
{
  struct mx_dev *d = &v->m.dev[r];
  if (v->seen[r])
    return gr_fail(v->err, GR_EXIT_FAIL, "%s:%u: row %s given twice", v->m.name, line, d->label);
  v->seen[r] = true;
  if (k < v->m.n + 1)
    return gr_fail(v->err, GR_EXIT_FAIL, "%s:%u: row %s has %zu cells, the header %zu columns", v->m.name, line,
                   d->label, k - 1, v->m.n);
  for (size_t c = 0; c < v->m.n; c++) {
    enum mx_level l;
    int links;
    if (!parse_cell(v->w[c + 1], v->wl[c + 1], &l, &links))
      return gr_fail(v->err, GR_EXIT_FAIL, "%s:%u: row %s, column %s: \"%.*s\" is not a level nvidia-smi prints "
                     "(X, NV#, PIX, PXB, PHB, NODE, SYS)", v->m.name, line, d->label, v->m.dev[c].label,
                     (int)(v->wl[c + 1] > 40 ? 40 : v->wl[c + 1]), v->w[c + 1]);
    if ((l == MX_SELF) != (c == (size_t)r))
      return gr_fail(v->err, GR_EXIT_FAIL, "%s:%u: row %s, column %s: %s", v->m.name, line, d->label,
                     v->m.dev[c].label, l == MX_SELF ? "X off the diagonal" : "the diagonal is not X");
    if (l == MX_GPULINK && (d->nic || v->m.dev[c].nic))
      return gr_fail(v->err, GR_EXIT_FAIL, "%s:%u: row %s, column %s: NV# between a NIC and another device",
                     v->m.name, line, d->label, v->m.dev[c].label);
    v->raw[(size_t)r * v->m.n + c] = (unsigned char)l;
    v->rawlinks[(size_t)r * v->m.n + c] = links;
  }
  if (!d->nic)
    row_affinity(v, d, k);
  return 0;
}

/* The rows after the header, up to the first line that is not one; then
 * the NIC Legend's "NIC0: mlx5_0" lines anywhere below. */
static int read_rows(struct nv *v, const char *hdr)
{
  unsigned line = v->line + 1;
  const char *p = mx_next_line(hdr, v->end);
  for (; p < v->end; p = mx_next_line(p, v->end), line++) {
    size_t k = mx_words(p, v->end, v->w, v->wl, NV_MAX_WORDS);
    int r = k >= 1 && k <= NV_MAX_WORDS ? column_of(v, v->w[0], v->wl[0]) : -1;
    if (r < 0)
      break;
    if (read_row(v, r, k, line) != 0)
      return -1;
  }
  for (; p < v->end; p = mx_next_line(p, v->end)) {
    size_t k = mx_words(p, v->end, v->w, v->wl, 2);
    if (k != 2 || v->wl[0] < 2 || v->w[0][v->wl[0] - 1] != ':')
      continue;
    int c = column_of(v, v->w[0], v->wl[0] - 1);
    if (c >= 0 && v->m.dev[c].nic && !v->m.dev[c].rdma && v->wl[1] < 64)
      v->m.dev[c].rdma = xstrndup(v->w[1], v->wl[1]);
  }
  for (size_t i = 0; i < v->m.n; i++)
    if (!v->seen[i])
      return gr_fail(v->err, GR_EXIT_FAIL, "%s:%u: the matrix has no row for column %s", v->m.name, v->line,
                     v->m.dev[i].label);
  return 0;
}

/* Both halves into the matrix; where they disagree the upper one is kept
 * and the caller warns. Counts the GPU pairs whose PCIe level NV# hides. */
static size_t symmetrize(struct nv *v)
{
  size_t n = v->m.n, odd = 0;
  for (size_t a = 0; a < n; a++)
    for (size_t b = a + 1; b < n; b++) {
      odd += v->raw[a * n + b] != v->raw[b * n + a] || v->rawlinks[a * n + b] != v->rawlinks[b * n + a];
      mx_set(&v->m, a, b, (enum mx_level)v->raw[a * n + b], v->rawlinks[a * n + b]);
      v->m.hidden += v->raw[a * n + b] == MX_GPULINK;
    }
  return odd;
}

static void nv_gaps(struct nv *v, struct gr_topo *t)
{
  gr_topo_add_gap(t, "nvidia-smi topo -m states each pair's level, not the PCIe tree: gpurig drew the smallest tree "
                  "with the same levels, on made-up bus ids (domain ffffffff). It states no bus ids, GPU models, link "
                  "generations or widths, so no PCIe bandwidth figure comes from it; `gpurig snapshot FILE.xml` on the "
                  "machine records them.");
  if (v->m.hidden)
    gr_topo_add_gap(t, "%zu GPU pair%s NV# where nvidia-smi would otherwise print their PCIe level: gpurig placed "
                    "those GPUs by their other cells and the NUMA column, and NV# counts the links between the pair, "
                    "not whether they pass through NVSwitches.", v->m.hidden, v->m.hidden == 1 ? " shows" : "s show");
  if (!v->has_numa)
    gr_topo_add_gap(t, "This layout has no NUMA Affinity column: the NUMA nodes are gpurig's, one per group of "
                    "devices the SYS cells part.");
  gr_topo_add_gap(t, "The matrix names NUMA nodes, not CPU sockets or their maker: each NUMA node is drawn as a CPU "
                  "of its own, so NCCL's rules that depend on the CPU are not applied.");
}

static int nv_parse(struct nv *v, struct gr_topo *t)
{
  size_t nw;
  const char *hdr = find_header(v, &nw);
  if (!hdr)
    return gr_fail(v->err, GR_EXIT_FAIL, "%s: no nvidia-smi topo -m matrix (no line starting with GPU0)", v->m.name);
  if (header_columns(v, nw) != 0)
    return -1;
  size_t n = v->m.n;
  v->raw = xcalloc(n * n + 1, 1);
  v->rawlinks = xcalloc(n * n + 1, sizeof(int));
  v->seen = xcalloc(n + 1, sizeof(bool));
  if (read_rows(v, hdr) != 0)
    return -1;
  size_t odd = symmetrize(v);
  mx_build(&v->m, "nvidia-smi", t);
  if (odd)
    gr_topo_add_warning(t, "%s: %zu pair%s of cells disagree across the diagonal: the row of the lower-numbered "
                        "device is kept", v->m.name, odd, odd == 1 ? "" : "s");
  nv_gaps(v, t);
  return 0;
}

int gr_load_nvsmi_topo_buffer(const char *name, const char *buf, size_t len, struct gr_topo *t, struct gr_err *err)
{
  struct nv v = {.m = {.name = name, .vendor = 0x10de}, .buf = buf, .end = buf + len, .err = err};
  gr_topo_init(t);
  v.w = xcalloc(NV_MAX_WORDS + 1, sizeof(*v.w));
  v.wl = xcalloc(NV_MAX_WORDS + 1, sizeof(*v.wl));
  int rc = nv_parse(&v, t);
  if (rc == 0)
    t->source_path = xstrdup(name);
  else
    gr_topo_free(t);
  free(v.w);
  free(v.wl);
  free(v.raw);
  free(v.rawlinks);
  free(v.seen);
  mx_free(&v.m);
  return rc;
}
