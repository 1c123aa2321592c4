/* A saved `amd-smi topology` (loaders.h), as people post it: the text form's
 * "ACCESS TABLE:", "WEIGHT TABLE:", "HOPS TABLE:", "LINK TYPE TABLE:" and
 * "NUMA BW TABLE:" matrices with bus ids for rows and columns (ROCm 6.1 and
 * later), or `--json`, in both layouts amd-smi has printed: per GPU a
 * "links" array (ROCm 6.2 and later), or per GPU "link_accessibility",
 * "weight", "hops", "link_type" and "numa_bandwidth" objects keyed "gpu_N"
 * (before). What the numbers mean, and the tree they make, is shared with
 * the rocm-smi reader: smi_topo_pairs.c. */
#include "load/loaders.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "load/smi_topo_internal.h"

#define AS_MAX_WORDS (MX_MAX_DEVICES + 1)

enum as_table { AS_OTHER, AS_ACCESS, AS_WEIGHT, AS_HOPS, AS_TYPE, AS_BW };

struct as {
  const char *name;
  const char *buf, *end;
  struct gr_err *err;
  struct amd_pairs p;        /* allocated at the first header (text) or from the array (JSON) */
  bool tables[AS_BW + 1];
  size_t zero_weights;       /* pairs with weight 0, which no link has */
  long bw_min, bw_max;       /* NUMA BW over the pairs that state one, MB/s; -1 none */
  size_t bw_pairs;           /* cells of the NUMA BW table that state a range */
  const char **w;
  size_t *wl;
};

static int as_fail_cell(struct as *a, unsigned line, size_t i, size_t j, const char *w, size_t n, const char *what)
{
  int len = (int)(n > 40 ? 40 : n);
  if (line)
    return gr_fail(a->err, GR_EXIT_FAIL, "%s:%u: GPU%zu, GPU%zu: \"%.*s\" is not %s", a->name, line, i, j, len, w, what);
  return gr_fail(a->err, GR_EXIT_FAIL, "%s: GPU %zu, link to GPU %zu: \"%.*s\" is not %s", a->name, i, j, len, w, what);
}

static bool as_range(const char *w, size_t n, int *lo, int *hi)
{
  const char *dash = memchr(w, '-', n);
  return dash && mx_uint(w, (size_t)(dash - w), lo) && mx_uint(dash + 1, n - (size_t)(dash - w) - 1, hi);
}

/* One cell (GPU i, GPU j) of table tb, as the word w (line 0: from JSON). */
static int as_put(struct as *a, enum as_table tb, size_t i, size_t j, const char *w, size_t n, unsigned line)
{
  size_t at = i * a->p.n + j;
  int v, lo;
  if (i == j || tb == AS_OTHER || mx_is(w, n, "N/A"))
    return 0; /* SELF, 0 or ENABLED on the diagonal; tables gpurig does not read; not reported */
  if (tb == AS_ACCESS && (mx_is(w, n, "ENABLED") || mx_is(w, n, "DISABLED"))) {
    a->p.access[at] = mx_is(w, n, "ENABLED");
    return 0;
  }
  if (tb == AS_TYPE && (mx_is(w, n, "XGMI") || mx_is(w, n, "PCIE") || mx_is(w, n, "UNKNOWN"))) {
    a->p.type[at] = mx_is(w, n, "XGMI") ? AMD_LINK_XGMI : mx_is(w, n, "PCIE") ? AMD_LINK_PCIE : AMD_LINK_UNKNOWN;
    return 0;
  }
  if ((tb == AS_WEIGHT || tb == AS_HOPS) && mx_uint(w, n, &v)) {
    if (tb == AS_WEIGHT && v == 0)
      a->zero_weights += i < j; /* counted once a pair; the weight stays unknown */
    else
      (tb == AS_WEIGHT ? a->p.weight : a->p.hops)[at] = v;
    return 0;
  }
  if (tb == AS_BW && as_range(w, n, &lo, &v)) {
    if (v > 0 && i < j) {
      a->bw_pairs++;
      a->bw_min = a->bw_min < 0 || lo < a->bw_min ? lo : a->bw_min;
      a->bw_max = v > a->bw_max ? v : a->bw_max;
    }
    return 0;
  }
  return as_fail_cell(a, line, i, j, w, n,
                      tb == AS_ACCESS ? "ENABLED or DISABLED" : tb == AS_TYPE ? "a link type (XGMI, PCIE)"
                      : tb == AS_BW  ? "a bandwidth range (MIN-MAX)"
                                     : "a number");
}

/* Hex digits w[0 .. n) as x; false when empty, too long or not hex. */
static bool as_hex(const char *w, size_t n, unsigned *x)
{
  *x = 0;
  if (n == 0 || n > 4)
    return false;
  for (size_t i = 0; i < n; i++) {
    char c = w[i];
    int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
    if (d < 0)
      return false;
    *x = *x * 16 + (unsigned)d;
  }
  return true;
}

/* "0000:0c:00.0": domain, bus, device, function. */
static bool as_bdf(const char *w, size_t n, struct mx_dev *d)
{
  unsigned x[4];
  if (n < 9 || w[n - 2] != '.' || w[n - 5] != ':' || w[n - 8] != ':')
    return false;
  if (!as_hex(w, n - 8, &x[0]) || !as_hex(w + n - 7, 2, &x[1]) || !as_hex(w + n - 4, 2, &x[2]) ||
      !as_hex(w + n - 1, 1, &x[3]) || x[2] > 0x1f || x[3] > 7)
    return false;
  *d = (struct mx_dev){.has_bdf = true, .domain = x[0], .bus = x[1], .devno = x[2], .func = x[3]};
  return true;
}

static bool same_bus(const struct mx_dev *a, const struct mx_dev *b)
{
  return a->domain == b->domain && a->bus == b->bus && a->devno == b->devno && a->func == b->func;
}

/* ---- the text form ---- */

static enum as_table title_of(const char *p, const char *end, const char **w, size_t *wl, bool *is_title)
{
  size_t k = mx_words(p, end, w, wl, 4);
  *is_title = k >= 2 && k <= 4 && mx_is(w[k - 1], wl[k - 1], "TABLE:");
  if (!*is_title)
    return AS_OTHER;
  if (k == 2)
    return mx_is(w[0], wl[0], "ACCESS") ? AS_ACCESS : mx_is(w[0], wl[0], "WEIGHT") ? AS_WEIGHT
           : mx_is(w[0], wl[0], "HOPS")                                        ? AS_HOPS
                                                                                : AS_OTHER;
  if (k == 3 && mx_is(w[0], wl[0], "LINK") && mx_is(w[1], wl[1], "TYPE"))
    return AS_TYPE;
  return k == 3 && mx_is(w[0], wl[0], "NUMA") && mx_is(w[1], wl[1], "BW") ? AS_BW : AS_OTHER;
}

/* A table's header: the GPUs' bus ids, the same at every table. */
static int read_header(struct as *a, const char *p, unsigned line)
{
  size_t k = mx_words(p, a->end, a->w, a->wl, AS_MAX_WORDS);
  struct mx_dev d;
  if (k == 0 || k > MX_MAX_DEVICES)
    return gr_fail(a->err, GR_EXIT_FAIL, "%s:%u: expected the GPUs' bus ids (at most %d) under the title", a->name,
                   line, MX_MAX_DEVICES);
  if (!a->p.n)
    amd_pairs_alloc(&a->p, k);
  else if (k != a->p.n)
    return gr_fail(a->err, GR_EXIT_FAIL, "%s:%u: %zu GPUs, the table above has %zu", a->name, line, k, a->p.n);
  for (size_t i = 0; i < k; i++) {
    if (!as_bdf(a->w[i], a->wl[i], &d))
      return gr_fail(a->err, GR_EXIT_FAIL, "%s:%u: header word %zu is \"%.*s\", expected a bus id (0000:0c:00.0)",
                     a->name, line, i + 1, (int)(a->wl[i] > 40 ? 40 : a->wl[i]), a->w[i]);
    if (a->p.bus[i].has_bdf && !same_bus(&a->p.bus[i], &d))
      return gr_fail(a->err, GR_EXIT_FAIL, "%s:%u: column %zu is %.*s, the table above has another GPU there",
                     a->name, line, i + 1, (int)a->wl[i], a->w[i]);
    a->p.bus[i] = d;
  }
  return 0;
}

/* A table's rows after its header; returns where they end, NULL on an error. */
static const char *read_rows(struct as *a, enum as_table tb, const char *p, unsigned *line)
{
  for (; p < a->end; p = mx_next_line(p, a->end), (*line)++) {
    size_t k = mx_words(p, a->end, a->w, a->wl, AS_MAX_WORDS), i = 0;
    struct mx_dev d;
    if (k == 0 || k > AS_MAX_WORDS || !as_bdf(a->w[0], a->wl[0], &d))
      return p;
    while (i < a->p.n && !same_bus(&a->p.bus[i], &d))
      i++;
    if (i == a->p.n || k != a->p.n + 1) {
      gr_fail(a->err, GR_EXIT_FAIL, "%s:%u: row %.*s: expected one of the header's bus ids and %zu cells", a->name,
              *line, (int)a->wl[0], a->w[0], a->p.n);
      return NULL;
    }
    for (size_t c = 0; c < a->p.n; c++)
      if (as_put(a, tb, i, c, a->w[c + 1], a->wl[c + 1], *line) != 0)
        return NULL;
  }
  return p;
}

static int read_text(struct as *a)
{
  unsigned line = 1;
  for (const char *p = a->buf; p && p < a->end;) {
    bool title;
    enum as_table tb = title_of(p, a->end, a->w, a->wl, &title);
    p = mx_next_line(p, a->end), line++;
    if (!title)
      continue; /* the legend, a prompt, the post's own words */
    while (p < a->end && mx_words(p, a->end, a->w, a->wl, 1) == 0)
      p = mx_next_line(p, a->end), line++;
    if (read_header(a, p, line) != 0)
      return -1;
    a->tables[tb] = true;
    p = mx_next_line(p, a->end), line++;
    p = read_rows(a, tb, p, &line);
    if (!p)
      return -1;
  }
  return 0;
}

/* ---- --json ---- */

/* A JSON value as the word the text form prints: numbers and strings; NULL
 * for anything else. */
static const char *json_word(const json_t *v, char *buf, size_t cap)
{
  if (json_is_integer(v)) {
    snprintf(buf, cap, "%lld", (long long)json_integer_value(v));
    return buf;
  }
  return json_is_string(v) ? json_string_value(v) : NULL;
}

static int json_put(struct as *a, enum as_table tb, size_t i, size_t j, const json_t *v)
{
  char buf[32];
  const char *w = v ? json_word(v, buf, sizeof(buf)) : "N/A";
  if (!w)
    return as_fail_cell(a, 0, i, j, "(not a number or string)", 24, "a value amd-smi prints");
  a->tables[tb] |= v != NULL;
  return as_put(a, tb, i, j, w, strlen(w), 0);
}

/* The GPU index of an object's "gpu" member, or of a "gpu_N" key. */
static bool json_gpu(const struct as *a, const json_t *v, const char *key, size_t *out)
{
  int g;
  if (key) {
    if (strncmp(key, "gpu_", 4) != 0 || !mx_uint(key + 4, strlen(key + 4), &g) || (size_t)g >= a->p.n)
      return false;
    *out = (size_t)g;
    return true;
  }
  if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) >= (json_int_t)a->p.n)
    return false;
  *out = (size_t)json_integer_value(v);
  return true;
}

/* ROCm 6.2 and later: "links": [{"gpu", "weight", "link_status", "link_type", "num_hops", "bandwidth"}]. */
static int json_links(struct as *a, size_t i, const json_t *links)
{
  size_t k, j;
  const json_t *l;
  json_array_foreach(links, k, l) {
    if (!json_is_object(l) || !json_gpu(a, json_object_get(l, "gpu"), NULL, &j))
      return gr_fail(a->err, GR_EXIT_FAIL, "%s: GPU %zu: link %zu has no \"gpu\" among 0 .. %zu", a->name, i, k,
                     a->p.n - 1);
    if (json_put(a, AS_ACCESS, i, j, json_object_get(l, "link_status")) != 0 ||
        json_put(a, AS_WEIGHT, i, j, json_object_get(l, "weight")) != 0 ||
        json_put(a, AS_HOPS, i, j, json_object_get(l, "num_hops")) != 0 ||
        json_put(a, AS_TYPE, i, j, json_object_get(l, "link_type")) != 0 ||
        json_put(a, AS_BW, i, j, json_object_get(l, "bandwidth")) != 0)
      return -1;
  }
  return 0;
}

/* Before ROCm 6.2: per table an object keyed "gpu_N". */
static int json_tables(struct as *a, size_t i, const json_t *g)
{
  static const struct { const char *key; enum as_table tb; } keys[] = {
      {"link_accessibility", AS_ACCESS}, {"weight", AS_WEIGHT}, {"hops", AS_HOPS},
      {"link_type", AS_TYPE},            {"numa_bandwidth", AS_BW}};
  for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
    const json_t *o = json_object_get(g, keys[k].key), *v;
    const char *key;
    size_t j;
    if (!json_is_object(o))
      continue;
    json_object_foreach((json_t *)o, key, v) {
      if (!json_gpu(a, NULL, key, &j))
        return gr_fail(a->err, GR_EXIT_FAIL, "%s: GPU %zu: \"%s\" has a key \"%.40s\", expected gpu_0 .. gpu_%zu",
                       a->name, i, keys[k].key, key, a->p.n - 1);
      if (json_put(a, keys[k].tb, i, j, v) != 0)
        return -1;
    }
  }
  return 0;
}

static int json_gpu_entry(struct as *a, size_t k, const json_t *g, bool *seen)
{
  size_t i;
  const json_t *bdf = json_object_get(g, "bdf"), *links = json_object_get(g, "links");
  if (!json_is_object(g) || !json_gpu(a, json_object_get(g, "gpu"), NULL, &i) || seen[i])
    return gr_fail(a->err, GR_EXIT_FAIL, "%s: entry %zu has no \"gpu\" among 0 .. %zu, or one given twice", a->name, k,
                   a->p.n - 1);
  seen[i] = true;
  if (json_is_string(bdf) && !as_bdf(json_string_value(bdf), strlen(json_string_value(bdf)), &a->p.bus[i]))
    return gr_fail(a->err, GR_EXIT_FAIL, "%s: GPU %zu: \"bdf\" is \"%.40s\", expected a bus id (0000:0c:00.0)", a->name,
                   i, json_string_value(bdf));
  return json_is_array(links) ? json_links(a, i, links) : json_tables(a, i, g);
}

static int read_json(struct as *a)
{
  json_error_t je;
  json_t *root = json_loadb(a->buf, (size_t)(a->end - a->buf), JSON_REJECT_DUPLICATES, &je);
  size_t k;
  const json_t *g;
  int rc = 0;
  if (!root)
    return gr_fail(a->err, GR_EXIT_FAIL, "%s:%d: not JSON: %s", a->name, je.line, je.text);
  if (!json_is_array(root) || json_array_size(root) == 0 || json_array_size(root) > MX_MAX_DEVICES) {
    json_decref(root);
    return gr_fail(a->err, GR_EXIT_FAIL, "%s: expected amd-smi topology --json: an array of 1 .. %d GPUs", a->name,
                   MX_MAX_DEVICES);
  }
  amd_pairs_alloc(&a->p, json_array_size(root));
  bool *seen = xcalloc(a->p.n, sizeof(bool));
  json_array_foreach(root, k, g) {
    if ((rc = json_gpu_entry(a, k, g, seen)) != 0)
      break;
  }
  free(seen);
  json_decref(root);
  return rc;
}

/* ---- the tree ---- */

static const struct amd_tool amd_smi = {
    .kind = "amd-smi",
    .states = "amd-smi's topology states link types, hops, weights, P2P access and bus ids, not the PCIe tree: each "
              "GPU is drawn on a host bridge of its own, so PCIe pairs on one socket show as NODE where a shared switch "
              "or root port would be nearer. It states no NUMA nodes, GPU models, PCIe generations or widths, NICs, or "
              "xGMI links per pair.",
    .numa_gap = "amd-smi's topology names no NUMA node: gpurig's are parted by hops (3: another socket) or weights "
                "where the output has them, else one node.",
};

static void as_gaps(const struct as *a, struct gr_topo *t)
{
  if (a->zero_weights)
    gr_topo_add_gap(t, "%zu GPU pair%s weight 0, which no link has (15 per xGMI hop, 20 per PCIe segment): gpurig "
                    "went by %s link type and hops.", a->zero_weights, a->zero_weights == 1 ? " has" : "s have",
                    a->zero_weights == 1 ? "its" : "their");
  if (a->bw_pairs)
    gr_topo_add_gap(t, "The NUMA BW table states %ld-%ld MB/s for %zu GPU pair%s: KFD's io_link bandwidth range, "
                    "with no direction or link count stated, so gpurig leaves the links' rate unknown.", a->bw_min,
                    a->bw_max, a->bw_pairs, a->bw_pairs == 1 ? "" : "s");
  if (!a->tables[AS_TYPE] && a->tables[AS_WEIGHT])
    gr_topo_add_gap(t, "No LINK TYPE table: gpurig took weights that are multiples of 15 and not of 20 as xGMI (15 "
                    "per hop), the others as PCIe (20 per segment).");
  if (!a->tables[AS_WEIGHT] && !a->tables[AS_HOPS])
    gr_topo_add_gap(t, "No WEIGHT or HOPS table: PCIe pairs are drawn in one NUMA node, as nothing here tells sockets "
                    "apart.");
}

int gr_load_amdsmi_topo_buffer(const char *name, const char *buf, size_t len, struct gr_topo *t, struct gr_err *err)
{
  struct as a = {.name = name, .buf = buf, .end = buf + len, .err = err, .bw_min = -1, .bw_max = -1};
  size_t i = 0;
  int rc = -1;
  gr_topo_init(t);
  a.w = xcalloc(AS_MAX_WORDS + 1, sizeof(*a.w));
  a.wl = xcalloc(AS_MAX_WORDS + 1, sizeof(*a.wl));
  while (i < len && (buf[i] == ' ' || buf[i] == '\t' || buf[i] == '\r' || buf[i] == '\n'))
    i++;
  if ((i < len && buf[i] == '[' ? read_json(&a) : read_text(&a)) != 0)
    goto out;
  if (a.p.n == 0) {
    gr_fail(err, GR_EXIT_FAIL, "%s: no amd-smi topology (no \"TABLE:\" with the GPUs' bus ids)", name);
    goto out;
  }
  amd_pairs_build(&a.p, name, &amd_smi, t);
  as_gaps(&a, t);
  t->source_path = xstrdup(name);
  rc = 0;
out:
  amd_pairs_free(&a.p);
  free(a.w);
  free(a.wl);
  return rc;
}
