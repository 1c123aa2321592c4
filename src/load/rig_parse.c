/* The rig-file parser: text -> tokens -> statements -> named elements and
 * link statements, their parents resolved (load/rig_internal.h).
 * Grammar: docs/rig-format.md. Every error names FILE:LINE:COL. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/suggest.h"
#include "facts/pcilink.h"
#include "load/rig_internal.h"

int perr(struct parser *p, int col, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  int rc = gr_fail_at(p->err, p->name, (size_t)p->line, (size_t)col, fmt, ap);
  va_end(ap);
  return rc;
}
/* ---- tokens ---- */

void free_tokens(struct parser *p)
{
  for (int i = 0; i < p->ntok; i++)
    free(p->tok[i].text);
  p->ntok = 0;
}

int tokenize(struct parser *p, const char *s, size_t n)
{
  size_t i = 0;
  p->ntok = 0;
  while (i < n) {
    unsigned char c = (unsigned char)s[i];
    if (c == '#')
      break;
    if (c == ' ' || c == '\t' || c == '\r') {
      i++;
      continue;
    }
    if (p->ntok == MAX_TOKENS)
      return perr(p, (int)i + 1, "too many words on one line (at most %d)", MAX_TOKENS);
    struct token *t = &p->tok[p->ntok];
    t->col = (int)i + 1;
    t->quoted = c == '"';
    if (c == '"') {
      size_t j = i + 1;
      while (j < n && s[j] != '"')
        j++;
      if (j >= n)
        return perr(p, (int)i + 1, "unterminated string (expected a closing \")");
      t->text = xstrndup(s + i + 1, j - i - 1);
      p->ntok++;
      i = j + 1;
      continue;
    }
    if (c < 0x20 || c >= 0x7f)
      return perr(p, (int)i + 1, "unexpected byte 0x%02x (a rig file is plain text)", c);
    size_t j = i;
    while (j < n && s[j] != ' ' && s[j] != '\t' && s[j] != '\r' && s[j] != '#' && s[j] != '"')
      j++;
    t->text = xstrndup(s + i, j - i);
    p->ntok++;
    i = j;
  }
  return 0;
}

/* ---- names ---- */

/* FNV-1a: short names, no adversary beyond a long file, which the limits bound. */
static size_t name_hash(const char *s)
{
  uint64_t h = 14695981039346656037u;
  for (; *s; s++)
    h = (h ^ (unsigned char)*s) * 1099511628211u;
  return (size_t)h;
}

/* The slot holding name, or the empty slot where it would go. */
static size_t index_slot(const struct parser *p, const char *name)
{
  size_t mask = p->index_cap - 1, s = name_hash(name) & mask;
  while (p->index[s] >= 0 && strcmp(p->elems[p->index[s]].name, name) != 0)
    s = (s + 1) & mask;
  return s;
}

/* Indexes element i under its name unless the name is taken: a GPU's
 * automatic name may repeat a user's, and lookups find the first, as the
 * order of declaration says. */
static void index_put(struct parser *p, int i)
{
  size_t s = index_slot(p, p->elems[i].name);
  if (p->index[s] < 0) {
    p->index[s] = i;
    p->nindexed++;
  }
}

/* Keeps the table at most half full, so probes stay short. */
static void index_grow(struct parser *p)
{
  if (2 * (p->nindexed + 1) <= p->index_cap)
    return;
  p->index_cap = p->index_cap ? 2 * p->index_cap : 64;
  p->index = xrealloc(p->index, p->index_cap * sizeof(int));
  memset(p->index, 0xff, p->index_cap * sizeof(int)); /* every slot -1 */
  p->nindexed = 0;
  for (size_t i = 0; i < p->nelems; i++)
    index_put(p, (int)i);
}

int find_elem(const struct parser *p, const char *name)
{
  return p->index_cap ? p->index[index_slot(p, name)] : -1;
}

/* ---- elements ---- */

/* Bus numbers an element takes once built: a root complex its host bridge,
 * anything below one its port and itself, a cpu none. A `direct` device sits
 * on its root complex's bus and takes one (a direct switch: the bus below
 * it); each function of a NIC beyond its first one more. Direct devices and
 * functions take device numbers, not buses, but counting them keeps every
 * rig as small as the bus numbers alone kept it before (at most 255 devices
 * to analyse). A device below a direct switch is counted as two though it
 * sits on the switch's bus: its parent's line may come later, and the count
 * only has to bound the rig. */
static unsigned buses_of(enum kind kind, bool direct, int functions)
{
  if (kind == K_CPU)
    return 0;
  if (kind == K_RC || direct)
    return 1 + (unsigned)(functions - 1);
  return 2 + (unsigned)(functions - 1);
}

/* The limits, checked as each element is declared: the error names the line
 * that goes over. */
static int check_room(struct parser *p, enum kind kind, bool direct, int functions)
{
  if (p->nelems >= RIG_MAX_ELEMS)
    return perr(p, p->tok[0].col, "too many elements (at most %d cpus, root complexes, switches, GPUs, NICs "
                "and drives in one rig)", RIG_MAX_ELEMS);
  if (p->nbuses + buses_of(kind, direct, functions) > RIG_MAX_BUSES)
    return perr(p, p->tok[0].col, "too many devices for one PCI domain (at most %d bus numbers: a root complex "
                "takes one, a switch, GPU, NIC or drive two, its port's and its own)", RIG_MAX_BUSES);
  return 0;
}

/* A new element, or NULL after reporting a limit. */
static struct elem *new_elem(struct parser *p, enum kind kind, const char *name, int col, bool direct,
                             int functions)
{
  if (check_room(p, kind, direct, functions) != 0)
    return NULL;
  p->nbuses += buses_of(kind, direct, functions);
  index_grow(p);
  grow_array((void **)&p->elems, sizeof(*p->elems), &p->cap, p->nelems);
  struct elem *e = &p->elems[p->nelems++];
  memset(e, 0, sizeof(*e));
  e->kind = kind;
  e->name = xstrdup(name);
  e->line = p->line;
  e->col = col;
  e->parent_idx = -1;
  e->p2p = -1;
  e->rdma = -1;
  e->rc_p2p = -1;
  e->functions = 1;
  e->nodes = 1;
  e->cpu_index = kind == K_CPU ? (int)p->ncpus++ : -1;
  e->pci_index = -1;
  e->gpow.psu = -1;
  index_put(p, (int)(p->nelems - 1));
  return e;
}

static int check_new_name(struct parser *p, const struct token *t)
{
  if (t->quoted || !is_name(t->text))
    return perr(p, t->col, "expected a name (a letter, then letters, digits, '_' or '-'), got \"%s\"", t->text);
  int i = find_elem(p, t->text);
  if (i >= 0)
    return perr(p, t->col, "duplicate name '%s' (first defined at line %d, column %d)", t->text,
                p->elems[i].line, p->elems[i].col);
  return 0;
}

static void set_parent(struct parser *p, struct elem *e, const struct token *t)
{
  e->parent = xstrdup(t->text);
  e->pline = p->line;
  e->pcol = t->col;
}

/* Whether the line has the bare word w from token `from` on: `direct` changes
 * what an element counts against the limits, so it is known before the
 * element is made. */
static bool has_word(const struct parser *p, int from, const char *w)
{
  for (int i = from; i < p->ntok; i++)
    if (!p->tok[i].quoted && strcmp(p->tok[i].text, w) == 0)
      return true;
  return false;
}

/* The functions a nic line asks for (`ports N` or `functions N`), 1 when it
 * asks for none or a bad count (device_options reports that). */
static int functions_on_line(const struct parser *p, int from)
{
  long v;
  for (int i = from; i + 1 < p->ntok; i++)
    if (!p->tok[i].quoted && (strcmp(p->tok[i].text, "ports") == 0 || strcmp(p->tok[i].text, "functions") == 0))
      return parse_long(p->tok[i + 1].text, 10, &v) && v >= 1 && v <= RIG_MAX_FUNCTIONS ? (int)v : 1;
  return 1;
}

/* One `KEY VALUE` option of a cpu line; -1 after an error. */
static int cpu_option(struct parser *p, struct elem *e, const struct token *t, const struct token *v)
{
  long n;
  if (strcmp(t->text, "vendor") == 0) {
    if (strcmp(v->text, "amd") != 0 && strcmp(v->text, "intel") != 0)
      return perr(p, v->col, "expected intel or amd, got \"%s\"", v->text);
    e->vendor_amd = strcmp(v->text, "amd") == 0;
  } else if (strcmp(t->text, "channels") == 0) {
    if (want_count(p, v, 1, 24, &n) != 0)
      return -1;
    e->channels = (int)n;
  } else if (strcmp(t->text, "memory") == 0) {
    if (want_count(p, v, 100, 20000, &n) != 0)
      return -1;
    e->mts = (int)n;
  } else if (strcmp(t->text, "rc-p2p") == 0) {
    return want_onoff(p, v, &e->rc_p2p);
  } else if (strcmp(t->text, "numa") == 0) {
    if (want_count(p, v, 1, RIG_MAX_NODES, &n) != 0)
      return -1;
    e->nodes = (int)n;
  } else if (strcmp(t->text, "ram") == 0) {
    if (want_count(p, v, 1, RIG_MAX_RAM_GIB, &e->ram_gib) != 0)
      return -1;
  } else {
    return perr(p, t->col, "unexpected \"%s\" (expected vendor, channels, memory, rc-p2p, numa or ram)", t->text);
  }
  return 0;
}

static int stmt_cpu(struct parser *p)
{
  if (p->ntok < 3)
    return perr(p, p->tok[0].col, "expected: cpu NAME \"MODEL\" [vendor intel|amd] [channels N] [memory MT/s] "
                "[rc-p2p on|off] [numa N] [ram GiB]");
  if (check_new_name(p, &p->tok[1]) != 0)
    return -1;
  struct elem *e = new_elem(p, K_CPU, p->tok[1].text, p->tok[1].col, false, 1);
  if (!e)
    return -1;
  e->model = xstrdup(p->tok[2].text);
  e->vendor_amd = strcasestr(e->model, "epyc") || strcasestr(e->model, "ryzen") || strcasestr(e->model, "threadripper");
  for (int i = 3; i < p->ntok; i += 2) {
    if (i + 1 >= p->ntok)
      return perr(p, p->tok[i].col, "expected a value after \"%s\"", p->tok[i].text);
    if (cpu_option(p, e, &p->tok[i], &p->tok[i + 1]) != 0)
      return -1;
  }
  return 0;
}

/* `KEYWORD NAME PARENT ...`: a new named element below PARENT, or NULL
 * after reporting the error. */
static struct elem *named_child(struct parser *p, enum kind kind, const char *usage)
{
  if (p->ntok < 3) {
    perr(p, p->tok[0].col, "expected: %s", usage);
    return NULL;
  }
  if (check_new_name(p, &p->tok[1]) != 0)
    return NULL;
  struct elem *e = new_elem(p, kind, p->tok[1].text, p->tok[1].col, has_word(p, 3, "direct"), 1);
  if (e)
    set_parent(p, e, &p->tok[2]);
  return e;
}

/* An optional leading COUNT (`gpu 4 ...`, `nvme 2 ...`): returns the index of
 * the next word, or -1 after reporting the error. */
static int optional_count(struct parser *p, long *count)
{
  *count = 1;
  if (p->ntok > 1 && !p->tok[1].quoted && isdigit((unsigned char)p->tok[1].text[0]))
    return want_count(p, &p->tok[1], 1, 64, count) != 0 ? -1 : 2;
  return 1;
}

/* rootcomplex NAME CPU [genN] [numa N|unknown] */
/* `numa N|unknown` or `cpus LIST` of a rootcomplex line at token i. */
static int rc_option(struct parser *p, struct elem *e, int i)
{
  const struct token *t = &p->tok[i], *v = &p->tok[i + 1];
  long n;
  if (strcmp(t->text, "cpus") == 0) {
    if (want_cpulist(p, v) != 0)
      return -1;
    free(e->cpulist);
    e->cpulist = xstrdup(v->text);
    return 0;
  }
  e->node_col = v->col;
  if (!v->quoted && strcmp(v->text, "unknown") == 0)
    e->node = -1;
  else if (want_count(p, v, 0, RIG_MAX_NODES - 1, &n) == 0)
    e->node = (int)n;
  else
    return -1;
  return 0;
}

static int stmt_rootcomplex(struct parser *p)
{
  struct elem *e = named_child(p, K_RC, "rootcomplex NAME CPU [genN] [numa N|unknown] [cpus LIST]");
  if (!e)
    return -1;
  e->gen = 3;
  for (int i = 3; i < p->ntok; i++) {
    const struct token *t = &p->tok[i];
    bool keyed = !t->quoted && (strcmp(t->text, "numa") == 0 || strcmp(t->text, "cpus") == 0);
    if (!keyed) {
      if (want_gen(p, t, &e->gen) != 0)
        return -1;
      continue;
    }
    if (i + 1 >= p->ntok)
      return perr(p, t->col, "%s", t->text[0] == 'n' ? "expected a NUMA node (0, 1, ... within the socket) or unknown "
                  "after numa" : "expected a CPU list (0-23,48-71) after cpus");
    if (rc_option(p, e, i++) != 0)
      return -1;
  }
  return 0;
}

static int stmt_switch(struct parser *p)
{
  struct elem *e = named_child(p, K_SWITCH, "switch NAME PARENT [model \"PEX8796\"] [lanes N] [genN] [uplink genN xN] "
                               "[direct]");
  return e ? device_options(p, e, 3) : -1;
}

static int stmt_gpu(struct parser *p)
{
  long count;
  int i = optional_count(p, &count);
  if (i < 0)
    return -1;
  if (p->ntok < i + 2 || !p->tok[i].quoted)
    return perr(p, p->ntok > i ? p->tok[i].col : p->tok[0].col,
                "expected: gpu [COUNT] \"MODEL\" PARENT [genN] [xN] [slot genN xN] [p2p on|off] [direct] "
                "[power CONNECTORS] [riser-power KIND] [limit W]");
  const struct gr_gpu_model *m = gr_catalog_find(p->tok[i].text);
  const char *close = m ? NULL : gr_catalog_closest(p->tok[i].text);
  if (!m && close)
    return perr(p, p->tok[i].col, "unknown GPU model \"%s\"; did you mean \"%s\"?", p->tok[i].text, close);
  if (!m)
    return perr(p, p->tok[i].col, "unknown GPU model \"%s\" (models are listed in data/gpus.tsv, e.g. \"RTX 3090\")",
                p->tok[i].text);
  bool direct = has_word(p, i + 2, "direct");
  for (long k = 0; k < count; k++) {
    char name[32];
    /* GPUs are named gpu0, gpu1, ... in the order they are declared */
    snprintf(name, sizeof(name), "gpu%zu", p->ngpus);
    struct elem *e = new_elem(p, K_GPU, name, p->tok[0].col, direct, 1);
    if (!e)
      return -1;
    p->ngpus++;
    e->gpu = m;
    e->model = xstrdup(m->model);
    set_parent(p, e, &p->tok[i + 1]);
    if (device_options(p, e, i + 2) != 0)
      return -1;
  }
  return 0;
}

static int stmt_nic(struct parser *p)
{
  if (p->ntok < 4 || !p->tok[2].quoted)
    return perr(p, p->tok[0].col,
                "expected: nic NAME \"MODEL\" PARENT [genN] [xN] [rdma on|off|NAME] [ports N] [speed GBIT] [storage] [direct]");
  if (check_new_name(p, &p->tok[1]) != 0)
    return -1;
  struct elem *e = new_elem(p, K_NIC, p->tok[1].text, p->tok[1].col, has_word(p, 4, "direct"),
                             functions_on_line(p, 4));
  if (!e)
    return -1;
  e->model = xstrdup(p->tok[2].text);
  set_parent(p, e, &p->tok[3]);
  if (device_options(p, e, 4) != 0)
    return -1;
  if (e->rdma_name && e->rdma == 0)
    return perr(p, e->rdma_col, "an RDMA name on a NIC with rdma off");
  size_t n = e->rdma_name ? strlen(e->rdma_name) : 0, digits = 0;
  while (digits < n && isdigit((unsigned char)e->rdma_name[n - 1 - digits]))
    digits++;
  if (digits > 9)
    return perr(p, e->rdma_col, "'%s': a device number of at most 9 digits", e->rdma_name);
  if (e->functions > 1 && n && !digits)
    return perr(p, e->rdma_col, "'%s' names function 0 of %d: it must end in a number, which the next functions "
                "count on from (mlx5_0, mlx5_1)", e->rdma_name, e->functions);
  return 0;
}

static int stmt_nvme(struct parser *p)
{
  long count;
  int i = optional_count(p, &count);
  if (i < 0)
    return -1;
  if (p->ntok < i + 1)
    return perr(p, p->tok[0].col, "expected: nvme [COUNT] PARENT [genN] [xN] [direct]");
  bool direct = has_word(p, i + 1, "direct");
  for (long k = 0; k < count; k++) {
    char name[32];
    snprintf(name, sizeof(name), "nvme%zu", p->nnvmes);
    struct elem *e = new_elem(p, K_NVME, name, p->tok[0].col, direct, 1);
    if (!e)
      return -1;
    p->nnvmes++;
    set_parent(p, e, &p->tok[i]);
    e->gen = 4;
    e->width = 4;
    if (device_options(p, e, i + 1) != 0)
      return -1;
  }
  return 0;
}

/* ---- nvlink and nvswitch statements ---- */

/* A GPU range, gpuLO-gpuHI with LO < HI. */
static int want_range(struct parser *p, const struct token *t, const char *after, unsigned *lo, unsigned *hi)
{
  char tail;
  if (t->quoted || sscanf(t->text, "gpu%u-gpu%u%c", lo, hi, &tail) != 2 || *lo >= *hi || *hi >= RIG_MAX_ELEMS)
    return perr(p, t->col, "expected a GPU range such as gpu0-gpu3 after %s, got \"%s\"", after, t->text);
  return 0;
}

/* A new statement at the end of p->links, or NULL past the limit. */
static struct link_stmt *new_link(struct parser *p, enum link_kind kind)
{
  if (p->nlinks >= RIG_MAX_NVLINKS) {
    perr(p, p->tok[0].col, "too many nvlink statements (at most %d nvlink and nvswitch statements in one rig)",
         RIG_MAX_NVLINKS);
    return NULL;
  }
  grow_array((void **)&p->links, sizeof(*p->links), &p->links_cap, p->nlinks);
  struct link_stmt *s = &p->links[p->nlinks++];
  memset(s, 0, sizeof(*s));
  s->kind = kind;
  s->line = p->line;
  s->col = p->tok[0].col;
  return s;
}

/* nvlink|xgmi GPU GPU [links N]  |  nvlink|xgmi mesh GPUa-GPUb [links N] */
static int stmt_gpulink(struct parser *p, bool xgmi)
{
  long links = 0;
  const int nfixed = 3; /* nvlink A B, or nvlink mesh RANGE */
  if (!xgmi && p->ntok >= 2 && !p->tok[1].quoted && strcmp(p->tok[1].text, "none") == 0) {
    if (p->ntok > 2)
      return perr(p, p->tok[2].col, "unexpected \"%s\" (nvlink none stands alone)", p->tok[2].text);
    p->t->gpulink_none = true; /* only what the rig declares; see docs/rig-format.md */
    return 0;
  }
  if (p->ntok < nfixed && xgmi)
    return perr(p, p->tok[0].col, "expected: xgmi GPU GPU [links N] or xgmi mesh GPUa-GPUb [links N]");
  if (p->ntok < nfixed)
    return perr(p, p->tok[0].col, "expected: nvlink GPU GPU [links N], nvlink mesh GPUa-GPUb [links N] or nvlink none");
  if (p->ntok == nfixed + 2 && strcmp(p->tok[nfixed].text, "links") == 0) {
    if (want_count(p, &p->tok[nfixed + 1], 1, 18, &links) != 0)
      return -1;
  } else if (p->ntok != nfixed) {
    return perr(p, p->tok[nfixed].col, "unexpected \"%s\" (expected links N)", p->tok[nfixed].text);
  }
  bool mesh = !p->tok[1].quoted && strcmp(p->tok[1].text, "mesh") == 0;
  unsigned lo = 0, hi = 0;
  if (mesh && want_range(p, &p->tok[2], "mesh", &lo, &hi) != 0)
    return -1;
  struct link_stmt *s = new_link(p, mesh ? LK_MESH : LK_PAIR);
  if (!s)
    return -1;
  s->xgmi = xgmi;
  s->links = (int)links;
  s->lo = lo;
  s->hi = hi;
  s->acol = mesh ? p->tok[2].col : p->tok[1].col;
  s->bcol = p->tok[2].col;
  if (!mesh) {
    s->a = xstrdup(p->tok[1].text);
    s->b = xstrdup(p->tok[2].text);
  }
  return 0;
}

static int stmt_nvlink(struct parser *p)
{
  return stmt_gpulink(p, false);
}

/* AMD's Infinity Fabric links (xGMI): the same grammar as nvlink, but
 * none, checked against the catalog's xgmi links (docs/rig-format.md). */
static int stmt_xgmi(struct parser *p)
{
  return stmt_gpulink(p, true);
}

/* `links N` or `gen G` of an nvswitch line at token i. */
static int nvswitch_option(struct parser *p, struct link_stmt *s, int i)
{
  const struct token *k = &p->tok[i];
  long v;
  if (i + 1 >= p->ntok || k->quoted || (strcmp(k->text, "links") != 0 && strcmp(k->text, "gen") != 0))
    return perr(p, k->col, "unexpected \"%s\" (expected links N or gen G)", k->text);
  bool links = strcmp(k->text, "links") == 0;
  if (want_count(p, &p->tok[i + 1], 1, links ? 18 : 6, &v) != 0)
    return -1;
  if (links)
    s->links = (int)v;
  else
    s->gen = (int)v;
  return 0;
}

/* nvswitch [COUNT] GPUa-GPUb [links N] [gen G] */
static int stmt_nvswitch(struct parser *p)
{
  long count = 0;
  int i = 1;
  if (p->ntok > 1 && !p->tok[1].quoted && isdigit((unsigned char)p->tok[1].text[0])) {
    if (want_count(p, &p->tok[1], 1, 64, &count) != 0)
      return -1;
    i = 2;
  }
  if (p->ntok <= i)
    return perr(p, p->tok[0].col, "expected: nvswitch [COUNT] GPUa-GPUb [links N] [gen G]");
  unsigned lo, hi;
  if (want_range(p, &p->tok[i], "nvswitch", &lo, &hi) != 0)
    return -1;
  struct link_stmt *s = new_link(p, LK_FABRIC);
  if (!s)
    return -1;
  s->switches = (int)count;
  s->lo = lo;
  s->hi = hi;
  s->acol = s->bcol = p->tok[i].col;
  for (int k = i + 1; k < p->ntok; k += 2)
    if (nvswitch_option(p, s, k) != 0)
      return -1;
  return 0;
}
/* The names NCCL and the CPU table use (data/cpu-interconnect.tsv), so that a
 * rig and a live machine name the same link alike. */
static const char *socket_link_name(const char *kind)
{
  static const char *const names[][2] = {
      {"upi", "UPI"}, {"qpi", "QPI"}, {"xgmi", "Infinity Fabric"}, {"if", "Infinity Fabric"},
      {"infinity-fabric", "Infinity Fabric"}, {"zpi", "QPI"}};
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
    if (strcasecmp(kind, names[i][0]) == 0)
      return names[i][1];
  return kind;
}

/* Appends one `source` line to the notes: the buffer doubles, so a file of
 * many source lines costs time in proportion to its length. */
static void append_note(struct parser *p, const char *text)
{
  struct gr_rig_meta *m = p->t->rig;
  size_t n = strlen(text), need = p->notes_len + 1 + n + 1; /* newline, text, NUL */
  if (need > p->notes_cap) {
    size_t cap = p->notes_cap ? p->notes_cap : 256;
    while (cap < need)
      cap *= 2;
    m->notes = xrealloc(m->notes, cap);
    p->notes_cap = cap;
  }
  if (p->notes_len)
    m->notes[p->notes_len++] = '\n';
  memcpy(m->notes + p->notes_len, text, n + 1);
  p->notes_len += n;
}

static int stmt_meta(struct parser *p, const char *kw)
{
  struct gr_rig_meta *m = p->t->rig;
  if (strcmp(kw, "rig") == 0) {
    if (p->ntok != 2 || !p->tok[1].quoted)
      return perr(p, p->tok[0].col, "expected: rig \"NAME\"");
    if (p->have_rig)
      return perr(p, p->tok[0].col, "a second rig statement (one file describes one rig)");
    p->have_rig = true;
    m->name = xstrdup(p->tok[1].text);
    p->t->product = xstrdup(p->tok[1].text);
  } else if (strcmp(kw, "source") == 0) {
    if (p->ntok != 2 || !p->tok[1].quoted)
      return perr(p, p->tok[0].col, "expected: source \"TEXT\"");
    append_note(p, p->tok[1].text);
  } else if (strcmp(kw, "price") == 0) {
    if (p->ntok < 2 || p->ntok > 3)
      return perr(p, p->tok[0].col, "expected: price AMOUNT [CURRENCY]");
    if (want_number(p, &p->tok[1], &m->price) != 0)
      return -1;
    free(m->currency);
    m->currency = xstrdup(p->ntok == 3 ? p->tok[2].text : "USD");
  } else if (strcmp(kw, "intersocket") == 0) {
    if (p->ntok != 3)
      return perr(p, p->tok[0].col, "expected: intersocket KIND GB/s (e.g. intersocket upi 20.8)");
    free(p->t->socket_link);
    p->t->socket_link = xstrdup(socket_link_name(p->tok[1].text));
    if (want_number(p, &p->tok[2], &p->t->socket_gbps) != 0)
      return -1;
  } else if (strcmp(kw, "p2p") == 0) {
    if (p->ntok != 2)
      return perr(p, p->tok[0].col, "expected: p2p on|off");
    return want_onoff(p, &p->tok[1], &p->global_p2p);
  }
  return 0;
}

/* ---- the cluster: nodes, fabric, peermem, gdr-level ---- */

static struct gr_cluster *cluster_of(struct parser *p)
{
  if (!p->t->cluster) {
    p->t->cluster = xcalloc(1, sizeof(*p->t->cluster));
    *p->t->cluster = (struct gr_cluster){.nodes = 1, .fabric = GR_NET_SWITCH, .oversubscription = 1,
                                         .peermem = 1, .gdr_level = -1};
  }
  return p->t->cluster;
}

/* "2:1" (down:up, each 1 .. 64, down >= up) into the ratio. */
static int want_ratio(struct parser *p, const struct token *t, double *ratio)
{
  long down, up;
  char *colon = t->quoted ? NULL : strchr(t->text, ':');
  if (colon) {
    *colon = 0;
    bool ok = parse_long(t->text, 10, &down) && parse_long(colon + 1, 10, &up);
    *colon = ':';
    if (ok && down >= 1 && down <= 64 && up >= 1 && up <= 64 && down >= up) {
      *ratio = (double)down / (double)up;
      return 0;
    }
  }
  return perr(p, t->col, "expected an oversubscription DOWN:UP such as 2:1 (each 1 to 64, DOWN >= UP), got \"%s\"",
              t->text);
}

static int stmt_fabric(struct parser *p, struct gr_cluster *c)
{
  const char *k = p->ntok >= 2 && !p->tok[1].quoted ? p->tok[1].text : "";
  if (strcmp(k, "switch") == 0 && p->ntok == 2) {
    c->fabric = GR_NET_SWITCH;
    c->oversubscription = 1;
    return 0;
  }
  if (strcmp(k, "fat-tree") == 0 && p->ntok == 2) {
    c->fabric = GR_NET_FAT_TREE;
    c->oversubscription = 1;
    return 0;
  }
  if (strcmp(k, "fat-tree") == 0 && p->ntok == 4 && strcmp(p->tok[2].text, "oversubscription") == 0) {
    c->fabric = GR_NET_FAT_TREE;
    return want_ratio(p, &p->tok[3], &c->oversubscription);
  }
  return perr(p, p->ntok >= 2 ? p->tok[1].col : p->tok[0].col,
              "expected: fabric switch | fabric fat-tree [oversubscription DOWN:UP]");
}

static int want_level(struct parser *p, const struct token *t, int *level)
{
  static const char *names[] = {"PIX", "PXB", "PHB", "SYS"};
  static const int levels[] = {2, 3, 4, 6}; /* analysis.h's GR_LVL_PIX, _PXB, _PHB, _SYS */
  for (int i = 0; i < 4; i++)
    if (!t->quoted && strcasecmp(t->text, names[i]) == 0) {
      *level = levels[i];
      return 0;
    }
  return perr(p, t->col, "expected a GPUDirect RDMA level PIX, PXB, PHB or SYS (NCCL_NET_GDR_LEVEL), got \"%s\"",
              t->text);
}

static int stmt_cluster(struct parser *p, const char *kw)
{
  struct gr_cluster *c = cluster_of(p);
  long n;
  if (strcmp(kw, "nodes") == 0) {
    if (p->ntok != 2)
      return perr(p, p->tok[0].col, "expected: nodes N (machines like this one, joined by their NICs)");
    if (want_count(p, &p->tok[1], 1, 4096, &n) != 0)
      return -1;
    c->nodes = (int)n;
    return 0;
  }
  if (strcmp(kw, "fabric") == 0)
    return stmt_fabric(p, c);
  if (p->ntok != 2)
    return perr(p, p->tok[0].col, strcmp(kw, "peermem") == 0 ? "expected: peermem yes|no"
                                                              : "expected: gdr-level PIX|PXB|PHB|SYS");
  if (strcmp(kw, "peermem") == 0)
    return want_onoff(p, &p->tok[1], &c->peermem);
  return want_level(p, &p->tok[1], &c->gdr_level);
}

/* A statement that sets one value of the whole rig is given once: a second
 * one would silently replace the first (the last wins), so the file is
 * refused where the two disagree, as a duplicated name is. */
static int once_only(struct parser *p, const struct token *k)
{
  static const char *const once[] = {"nodes", "peermem", "fabric", "gdr-level", "price", "p2p", "intersocket"};
  _Static_assert(sizeof(once) / sizeof(once[0]) == sizeof(p->once_line) / sizeof(p->once_line[0]), "one slot each");
  for (size_t i = 0; i < sizeof(once) / sizeof(once[0]); i++) {
    if (strcmp(k->text, once[i]) != 0)
      continue;
    if (p->once_line[i])
      return perr(p, k->col, "a second %s statement (the first is at line %d, column %d); a rig gives it once",
                  once[i], p->once_line[i], p->once_col[i]);
    p->once_line[i] = p->line;
    p->once_col[i] = k->col;
  }
  return 0;
}

int parse_statement(struct parser *p)
{
  static const struct {
    const char *kw;
    int (*fn)(struct parser *);
  } stmts[] = {{"cpu", stmt_cpu},   {"rootcomplex", stmt_rootcomplex}, {"switch", stmt_switch},
               {"gpu", stmt_gpu},   {"nic", stmt_nic},                 {"nvme", stmt_nvme},
               {"nvlink", stmt_nvlink}, {"nvswitch", stmt_nvswitch}, {"xgmi", stmt_xgmi},
               {"psu", stmt_psu},   {"circuit", stmt_circuit}};
  static const char *meta[] = {"rig", "source", "price", "intersocket", "p2p"};
  static const char *net[] = {"nodes", "fabric", "peermem", "gdr-level"};
  const struct token *k = &p->tok[0];
  if (k->quoted)
    return perr(p, k->col, "expected a keyword, got a string");
  if (!p->have_rig && strcmp(k->text, "rig") != 0)
    return perr(p, k->col, "expected `rig \"NAME\"` as the first statement");
  if (once_only(p, k) != 0)
    return -1;
  for (size_t i = 0; i < sizeof(meta) / sizeof(meta[0]); i++)
    if (strcmp(k->text, meta[i]) == 0)
      return stmt_meta(p, k->text);
  for (size_t i = 0; i < sizeof(net) / sizeof(net[0]); i++)
    if (strcmp(k->text, net[i]) == 0)
      return stmt_cluster(p, k->text);
  for (size_t i = 0; i < sizeof(stmts) / sizeof(stmts[0]); i++)
    if (strcmp(k->text, stmts[i].kw) == 0)
      return stmts[i].fn(p);
  /* A misspelt keyword: the one it is closest to, else the whole list. */
  struct gr_suggest sg;
  char hint[GR_SUGGEST_MAX + 32];
  gr_suggest_init(&sg, k->text);
  for (size_t i = 0; i < sizeof(meta) / sizeof(meta[0]); i++)
    gr_suggest_offer(&sg, meta[i]);
  for (size_t i = 0; i < sizeof(net) / sizeof(net[0]); i++)
    gr_suggest_offer(&sg, net[i]);
  for (size_t i = 0; i < sizeof(stmts) / sizeof(stmts[0]); i++)
    gr_suggest_offer(&sg, stmts[i].kw);
  if (gr_suggest_best(&sg))
    return perr(p, k->col, "unknown statement \"%s\"%s", k->text, gr_suggest_text(&sg, hint, sizeof(hint)));
  return perr(p, k->col,
              "unknown statement \"%s\" (expected rig, source, price, cpu, intersocket, rootcomplex, switch, gpu, "
              "nic, nvme, nvlink, nvswitch, xgmi, psu, circuit, p2p, nodes, fabric, peermem or gdr-level)", k->text);
}

/* ---- resolution ---- */

static const char *kind_name(enum kind k)
{
  static const char *n[] = {"cpu", "rootcomplex", "switch", "gpu", "nic", "nvme"};
  return n[k];
}

/* What a resolved parent allows: a root complex's NUMA node within its
 * socket's, `direct` only on a root complex. */
static int check_placement(struct parser *p, const struct elem *e, const struct elem *par)
{
  if (e->kind == K_RC && e->node >= par->nodes)
    return perr(p, e->node_col, "numa %d: cpu '%s' has %d NUMA node%s (numa 0 .. %d; give the socket more with "
                "`cpu ... numa N`)", e->node, par->name, par->nodes, par->nodes == 1 ? "" : "s", par->nodes - 1);
  if (e->direct && par->kind != K_RC)
    return perr(p, e->direct_col, "direct puts a device on its root complex's bus; '%s' is a %s (drop direct: a "
                "device below a switch hangs from one of its ports)", par->name, kind_name(par->kind));
  return 0;
}

int resolve_parents(struct parser *p)
{
  for (size_t i = 0; i < p->nelems; i++) {
    struct elem *e = &p->elems[i];
    if (!e->parent)
      continue;
    p->line = e->pline;
    int pi = find_elem(p, e->parent);
    if (pi < 0)
      return perr(p, e->pcol, "undefined parent '%s'", e->parent);
    enum kind pk = p->elems[pi].kind;
    bool ok = e->kind == K_RC ? pk == K_CPU : (pk == K_RC || pk == K_SWITCH);
    if (!ok)
      return perr(p, e->pcol, "a %s's parent must be %s; '%s' is a %s", kind_name(e->kind),
                  e->kind == K_RC ? "a cpu" : "a rootcomplex or a switch", e->parent, kind_name(pk));
    if (check_placement(p, e, &p->elems[pi]) != 0)
      return -1;
    e->parent_idx = pi;
  }
  /* switches may name switches defined later: walk up to find cycles */
  for (size_t i = 0; i < p->nelems; i++) {
    size_t steps = 0;
    for (int j = (int)i; j >= 0; j = p->elems[j].parent_idx) {
      if (++steps > p->nelems + 1) {
        const struct elem *e = &p->elems[i];
        p->line = e->pline;
        return perr(p, e->pcol, "cycle: '%s' is its own ancestor through '%s'", e->name, e->parent);
      }
    }
  }
  return 0;
}

