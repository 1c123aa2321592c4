/* The rig-file parser: text -> statements -> the topology model.
 * Grammar: docs/rig-format.md. Every error names FILE:LINE:COL. */
#include "load/rig.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "base/file.h"
#include "base/suggest.h"
#include "facts/catalog.h"
#include "facts/data.h"
#include "facts/pcilink.h"

#define MAX_TOKENS 32

/* Limits far above any real machine (a 10-GPU server is about 40 elements and
 * a dozen nvlink lines), checked while parsing so that a runaway or hostile
 * file is refused at the first line over, with that line, not after the whole
 * file is read (docs/rig-format.md, "Limits"). */
#define RIG_MAX_ELEMS 4096          /* named elements of every kind, GPUs and drives included */
#define RIG_MAX_NVLINKS 4096        /* nvlink and nvswitch statements */
#define RIG_MAX_BUSES 255           /* bus numbers of one PCI domain (1 .. 0xff) */
#define RIG_MAX_LINES 100000        /* a real rig is under 100 lines; comments and notes included */
#define RIG_MAX_NODES 8             /* NUMA nodes per socket (NPS4, SNC4; 8 leaves room) */
#define RIG_MAX_FUNCTIONS 8         /* PCI functions of one device */
#define RIG_MAX_DEVS 32             /* device numbers on one PCI bus */
#define RIG_MAX_RAM_GIB 1048576     /* 1 PiB per socket */

struct token {
  char *text;
  int col;
  bool quoted;
};

enum kind { K_CPU, K_RC, K_SWITCH, K_GPU, K_NIC, K_NVME };

/* One named element of the block diagram. */
struct elem {
  enum kind kind;
  char *name;
  int line, col;          /* where it was defined */
  char *parent;           /* name, NULL for cpus */
  int pline, pcol;        /* where the parent was named */
  int parent_idx;         /* resolved element index */
  char *model;            /* GPU catalog model, NIC/switch/CPU model */
  const struct gr_gpu_model *gpu;
  int gen, width;         /* device link (nic, nvme, switch uplink) */
  int slot_gen, slot_width; /* slot or riser limit on the port above */
  int lanes;              /* switch lanes */
  int p2p;                /* gpu: -1 default, 0 off, 1 on */
  int rdma;               /* nic */
  int functions;          /* nic: PCI functions (ports), 1 by default */
  double port_gbit;       /* nic: `speed GBIT`, the port's line rate, 0 not said */
  bool storage;           /* nic: `storage`, not one NCCL uses */
  bool direct;            /* on its root complex's bus, no port above it */
  int direct_col;         /* where `direct` was written */
  int vendor_amd;         /* cpu */
  int channels, mts, rc_p2p;
  int nodes;              /* cpu: NUMA nodes (numa N), 1 by default */
  long ram_gib;           /* cpu: RAM on the socket, 0 unknown */
  int first_node;         /* cpu: os index of its first NUMA node (sockets in declaration order) */
  int node;               /* rootcomplex: NUMA node within its socket, 0-based; -1 unknown */
  int node_col;           /* rootcomplex: where that node was written, 0 if not */
  int cpu_index;          /* cpu: its package number, in declaration order */
  int pci_index;          /* node in the topology once built */
  unsigned sec_bus;       /* direct switch: the bus below it */
  unsigned next_dev;      /* root complex, direct switch: next device number on its bus */
};

/* nvlink A B | nvlink mesh RANGE | nvswitch RANGE: kept as written, resolved
 * in file order once the GPUs exist. */
enum link_kind { LK_PAIR, LK_MESH, LK_FABRIC };

struct link_stmt {
  enum link_kind kind;
  char *a, *b;            /* pair: the two GPU names */
  unsigned lo, hi;        /* mesh, fabric: gpuLO .. gpuHI */
  int line, col;          /* the statement */
  int acol, bcol;         /* its GPU words (the range's for mesh and fabric) */
  int links;              /* links per pair (per GPU for a fabric); 0: the catalog's default */
  int switches;           /* fabric: NVSwitch chips, 0 unknown */
  int gen;                /* fabric: NVLink generation, 0: the GPUs' catalog generation */
};

struct parser {
  const char *name;
  struct gr_err *err;
  int line;
  struct token tok[MAX_TOKENS];
  int ntok;
  struct elem *elems;
  size_t nelems, cap;
  int *index;             /* names -> element indices, open addressing; -1 empty */
  size_t index_cap, nindexed;
  size_t ncpus, ngpus, nnvmes; /* elements of those kinds so far: their names and numbers */
  unsigned nbuses;        /* bus numbers the elements so far will take once built */
  size_t notes_len, notes_cap; /* t->rig->notes, grown by doubling */
  struct gr_topo *t;
  bool have_rig;
  int global_p2p;         /* -1 none, 0 off, 1 on */
  struct link_stmt *links; /* nvlink and nvswitch statements */
  size_t nlinks, links_cap;
  int *gpu_elem;          /* while linking: pci index -> element index of that GPU, -1 */
  int *used;              /* while linking: NVLinks per pci index so far */
  unsigned next_bus;
};

static int perr(struct parser *p, int col, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int perr(struct parser *p, int col, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  int rc = gr_fail_at(p->err, p->name, (size_t)p->line, (size_t)col, fmt, ap);
  va_end(ap);
  return rc;
}
/* ---- tokens ---- */

static void free_tokens(struct parser *p)
{
  for (int i = 0; i < p->ntok; i++)
    free(p->tok[i].text);
  p->ntok = 0;
}

static int tokenize(struct parser *p, const char *s, size_t n)
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

/* ---- small value parsers ---- */

static bool is_name(const char *s)
{
  if (!isalpha((unsigned char)*s))
    return false;
  for (; *s; s++)
    if (!isalnum((unsigned char)*s) && *s != '_' && *s != '-')
      return false;
  return true;
}

static int want_count(struct parser *p, const struct token *t, long lo, long hi, long *out)
{
  if (t->quoted || !parse_long(t->text, 10, out) || *out < lo || *out > hi)
    return perr(p, t->col, "expected a whole number from %ld to %ld, got \"%s\"", lo, hi, t->text);
  return 0;
}

static int want_gen(struct parser *p, const struct token *t, int *gen)
{
  long g;
  if (t->quoted || strncasecmp(t->text, "gen", 3) != 0 || !parse_long(t->text + 3, 10, &g) || !gr_pcie_gen((int)g))
    return perr(p, t->col, "expected a PCIe generation gen1 .. gen6, got \"%s\"", t->text);
  *gen = (int)g;
  return 0;
}

static int want_width(struct parser *p, const struct token *t, int *width)
{
  long w;
  if (t->quoted || (t->text[0] != 'x' && t->text[0] != 'X') || !parse_long(t->text + 1, 10, &w))
    return perr(p, t->col, "expected a link width x1, x2, x4, x8 or x16, got \"%s\"", t->text);
  if (w != 1 && w != 2 && w != 4 && w != 8 && w != 16)
    return perr(p, t->col, "width %s: a PCIe link is x1, x2, x4, x8 or x16", t->text);
  *width = (int)w;
  return 0;
}

static int want_onoff(struct parser *p, const struct token *t, int *v)
{
  if (!t->quoted && (strcmp(t->text, "on") == 0 || strcmp(t->text, "yes") == 0))
    *v = 1;
  else if (!t->quoted && (strcmp(t->text, "off") == 0 || strcmp(t->text, "no") == 0))
    *v = 0;
  else
    return perr(p, t->col, "expected on or off, got \"%s\"", t->text);
  return 0;
}

static int want_number(struct parser *p, const struct token *t, double *v)
{
  char *end;
  errno = 0;
  *v = strtod(t->text, &end);
  if (t->quoted || end == t->text || *end || errno || !(*v >= 0) || *v > 1e12)
    return perr(p, t->col, "expected a number, got \"%s\"", t->text);
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

static int find_elem(const struct parser *p, const char *name)
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

/* `slot GEN WIDTH`, `riser GEN WIDTH`, `uplink GEN WIDTH` at token i. */
static int link_pair_option(struct parser *p, struct elem *e, int i)
{
  const char *k = p->tok[i].text;
  int *g = strcmp(k, "uplink") == 0 ? &e->gen : &e->slot_gen;
  int *w = strcmp(k, "uplink") == 0 ? &e->width : &e->slot_width;
  if (i + 2 >= p->ntok)
    return perr(p, p->tok[i].col + (int)strlen(k), "expected a generation and width after '%s' (e.g. %s gen3 x8)", k,
                k);
  if (want_gen(p, &p->tok[i + 1], g) != 0 || want_width(p, &p->tok[i + 2], w) != 0)
    return -1;
  return 0;
}

/* The options only some kinds take (p2p, rdma, ports); returns the tokens
 * used, 0 if k is not one of them, -1 after an error. */
static int kind_option(struct parser *p, struct elem *e, int i)
{
  const char *k = p->tok[i].text;
  bool has_next = i + 1 < p->ntok;
  long v;
  if (strcmp(k, "p2p") == 0 && has_next && e->kind == K_GPU)
    return want_onoff(p, &p->tok[i + 1], &e->p2p) != 0 ? -1 : 2;
  if (strcmp(k, "rdma") == 0 && has_next && e->kind == K_NIC)
    return want_onoff(p, &p->tok[i + 1], &e->rdma) != 0 ? -1 : 2;
  if (strcmp(k, "speed") == 0 && has_next && e->kind == K_NIC) {
    if (want_count(p, &p->tok[i + 1], 1, 3200, &v) != 0)
      return -1;
    e->port_gbit = (double)v;
    return 2;
  }
  if ((strcmp(k, "ports") == 0 || strcmp(k, "functions") == 0) && has_next && e->kind == K_NIC) {
    if (want_count(p, &p->tok[i + 1], 1, RIG_MAX_FUNCTIONS, &v) != 0)
      return -1;
    e->functions = (int)v;
    return 2;
  }
  return 0;
}

/* Options after the fixed words: `key value` pairs and link words. */
static int device_options(struct parser *p, struct elem *e, int from)
{
  for (int i = from; i < p->ntok; i++) {
    const struct token *t = &p->tok[i];
    const char *k = t->text;
    int used = t->quoted ? 0 : kind_option(p, e, i);
    if (used < 0)
      return -1;
    if (used > 0) {
      i += used - 1;
    } else if (!t->quoted && strncasecmp(k, "gen", 3) == 0) {
      if (want_gen(p, t, &e->gen) != 0)
        return -1;
    } else if (!t->quoted && (k[0] == 'x' || k[0] == 'X') && isdigit((unsigned char)k[1])) {
      if (want_width(p, t, &e->width) != 0)
        return -1;
    } else if (!t->quoted && (strcmp(k, "slot") == 0 || strcmp(k, "riser") == 0 || strcmp(k, "uplink") == 0)) {
      if (link_pair_option(p, e, i) != 0)
        return -1;
      i += 2;
    } else if (!t->quoted && strcmp(k, "model") == 0 && i + 1 < p->ntok) {
      free(e->model);
      e->model = xstrdup(p->tok[++i].text);
    } else if (!t->quoted && strcmp(k, "lanes") == 0 && i + 1 < p->ntok) {
      long v;
      if (want_count(p, &p->tok[++i], 1, 256, &v) != 0)
        return -1;
      e->lanes = (int)v;
    } else if (!t->quoted && strcmp(k, "storage") == 0 && e->kind == K_NIC) {
      e->storage = true;
    } else if (!t->quoted && strcmp(k, "direct") == 0) {
      e->direct = true;
      e->direct_col = t->col;
    } else {
      return perr(p, t->col, "unexpected \"%s\" (expected genN, xN, slot, riser, uplink, model, lanes, direct%s)", k,
                  e->kind == K_GPU ? ", p2p" : e->kind == K_NIC ? ", rdma, ports, speed, storage" : "");
    }
  }
  return 0;
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
static int stmt_rootcomplex(struct parser *p)
{
  struct elem *e = named_child(p, K_RC, "rootcomplex NAME CPU [genN] [numa N|unknown]");
  if (!e)
    return -1;
  e->gen = 3;
  for (int i = 3; i < p->ntok; i++) {
    const struct token *t = &p->tok[i];
    if (t->quoted || strcmp(t->text, "numa") != 0) {
      if (want_gen(p, t, &e->gen) != 0)
        return -1;
      continue;
    }
    if (i + 1 >= p->ntok)
      return perr(p, t->col, "expected a NUMA node (0, 1, ... within the socket) or unknown after numa");
    const struct token *v = &p->tok[++i];
    long n;
    e->node_col = v->col;
    if (!v->quoted && strcmp(v->text, "unknown") == 0)
      e->node = -1;
    else if (want_count(p, v, 0, RIG_MAX_NODES - 1, &n) == 0)
      e->node = (int)n;
    else
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
                "expected: gpu [COUNT] \"MODEL\" PARENT [slot genN xN] [p2p on|off] [direct]");
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
                "expected: nic NAME \"MODEL\" PARENT [genN] [xN] [rdma on|off] [ports N] [speed GBIT] [storage] [direct]");
  if (check_new_name(p, &p->tok[1]) != 0)
    return -1;
  struct elem *e = new_elem(p, K_NIC, p->tok[1].text, p->tok[1].col, has_word(p, 4, "direct"),
                             functions_on_line(p, 4));
  if (!e)
    return -1;
  e->model = xstrdup(p->tok[2].text);
  set_parent(p, e, &p->tok[3]);
  return device_options(p, e, 4);
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

/* nvlink GPU GPU [links N]  |  nvlink mesh GPUa-GPUb [links N] */
static int stmt_nvlink(struct parser *p)
{
  long links = 0;
  const int nfixed = 3; /* nvlink A B, or nvlink mesh RANGE */
  if (p->ntok < nfixed)
    return perr(p, p->tok[0].col, "expected: nvlink GPU GPU [links N] or nvlink mesh GPUa-GPUb [links N]");
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


static int parse_statement(struct parser *p)
{
  static const struct {
    const char *kw;
    int (*fn)(struct parser *);
  } stmts[] = {{"cpu", stmt_cpu},   {"rootcomplex", stmt_rootcomplex}, {"switch", stmt_switch},
               {"gpu", stmt_gpu},   {"nic", stmt_nic},                 {"nvme", stmt_nvme},
               {"nvlink", stmt_nvlink}, {"nvswitch", stmt_nvswitch}};
  static const char *meta[] = {"rig", "source", "price", "intersocket", "p2p"};
  static const char *net[] = {"nodes", "fabric", "peermem", "gdr-level"};
  const struct token *k = &p->tok[0];
  if (k->quoted)
    return perr(p, k->col, "expected a keyword, got a string");
  if (!p->have_rig && strcmp(k->text, "rig") != 0)
    return perr(p, k->col, "expected `rig \"NAME\"` as the first statement");
  for (size_t i = 0; i < sizeof(meta) / sizeof(meta[0]); i++)
    if (strcmp(k->text, meta[i]) == 0)
      return stmt_meta(p, k->text);
  for (size_t i = 0; i < sizeof(net) / sizeof(net[0]); i++)
    if (strcmp(k->text, net[i]) == 0)
      return stmt_cluster(p, k->text);
  for (size_t i = 0; i < sizeof(stmts) / sizeof(stmts[0]); i++)
    if (strcmp(k->text, stmts[i].kw) == 0)
      return stmts[i].fn(p);
  return perr(p, k->col,
              "unknown statement \"%s\" (expected rig, source, price, cpu, intersocket, rootcomplex, switch, gpu, "
              "nic, nvme, nvlink, nvswitch, p2p, nodes, fabric, peermem or gdr-level)", k->text);
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

static int resolve_parents(struct parser *p)
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

/* ---- building the topology ---- */

/* Where a node goes: its parent node, bus, device number, socket and NUMA node. */
struct place {
  int parent;
  unsigned bus, dev;
  int package, numa;
};

static void apply_link(struct gr_pci *n, int gen, int width, int port_gen, int port_width)
{
  n->link.max_gen = gen;
  n->link.max_width = width;
  n->link.port_max_gen = port_gen;
  n->link.port_max_width = port_width;
  n->link.cur_gen = gen < port_gen ? gen : port_gen;
  n->link.cur_width = width < port_width ? width : port_width;
}

/* A bus number, or -1 after reporting that the domain has none left.
 * check_room counted every element's buses while parsing; this guards the
 * range should the two ever disagree. */
static int new_bus(struct parser *p)
{
  if (p->next_bus > RIG_MAX_BUSES)
    return perr(p, 1, "too many devices for one PCI domain (at most %d)", RIG_MAX_BUSES);
  return (int)p->next_bus++;
}

static int add_node(struct parser *p, enum gr_role role, const struct place *at, unsigned func, unsigned class_id,
                    unsigned vendor, unsigned device)
{
  int i = gr_topo_add_pci(p->t);
  struct gr_pci *n = &p->t->pci[i];
  n->role = role;
  n->parent = at->parent;
  n->bus = at->bus;
  n->dev = at->dev;
  n->func = func;
  n->sec_bus = n->sub_bus = at->bus;
  n->class_id = class_id;
  n->vendor = vendor;
  n->device = device;
  n->numa = at->numa;
  n->package = at->package;
  return i;
}

/* The socket and NUMA node of element e, a root complex or below one: its
 * root complex's node (-1 when the rig says unknown). */
static void locality(const struct parser *p, int e, int *package, int *numa)
{
  while (p->elems[e].kind != K_RC)
    e = p->elems[e].parent_idx;
  const struct elem *rc = &p->elems[e], *cpu = &p->elems[rc->parent_idx];
  *package = cpu->cpu_index;
  *numa = rc->node < 0 ? -1 : cpu->first_node + rc->node;
}

/* The next device number on the bus of `host` (a root complex, or the bus
 * below a direct switch), or -1 after reporting that the bus is full. */
static int next_dev(struct parser *p, struct elem *host, const struct elem *e)
{
  if (host->next_dev >= RIG_MAX_DEVS) {
    p->line = e->line;
    return perr(p, e->col, "no device number left on the bus of '%s' (a PCI bus has %d: devices with direct, or "
                "below a direct switch, share it)", host->name, RIG_MAX_DEVS);
  }
  return (int)host->next_dev++;
}

/* Where element e's node goes, and the limits of the port above it: below a
 * new port (a root port of its root complex, a downstream port of its switch),
 * or on its parent's own bus (direct, or below a direct switch, whose
 * downstream ports gpurig folds into the switch: the same levels and links). */
static int attach(struct parser *p, struct elem *e, struct place *at, int *port_gen, int *port_width)
{
  struct elem *par = &p->elems[e->parent_idx];
  locality(p, e->parent_idx, &at->package, &at->numa);
  *port_gen = e->slot_gen ? e->slot_gen : par->gen ? par->gen : 3;
  *port_width = e->slot_width ? e->slot_width : 16;
  if (e->direct || (par->kind == K_SWITCH && par->direct)) {
    int dev = next_dev(p, par, e);
    if (dev < 0)
      return -1;
    at->parent = par->pci_index;
    at->bus = par->kind == K_RC ? p->t->pci[par->pci_index].bus : par->sec_bus;
    at->dev = (unsigned)dev;
    return 0;
  }
  int bus = new_bus(p);
  if (bus < 0)
    return -1;
  /* described, not read: no vendor or device id of its own */
  struct place port_at = {par->pci_index, (unsigned)bus, 0, at->package, at->numa};
  int port = add_node(p, GR_ROLE_BRIDGE, &port_at, 0, 0x060400, 0, 0);
  p->t->pci[port].link.max_gen = *port_gen;
  p->t->pci[port].link.max_width = *port_width;
  if ((bus = new_bus(p)) < 0)
    return -1;
  at->parent = port;
  at->bus = (unsigned)bus;
  at->dev = 0;
  return 0;
}

static unsigned first_pci_id(const char *ids, unsigned *vendor)
{
  unsigned v = 0, d = 0;
  if (sscanf(ids, "%x:%x", &v, &d) != 2)
    v = d = 0;
  *vendor = v;
  return d;
}

static int build_rc(struct parser *p, size_t i)
{
  struct elem *e = &p->elems[i];
  struct place at = {.parent = -1};
  int bus = new_bus(p);
  if (bus < 0)
    return -1;
  at.bus = (unsigned)bus;
  locality(p, (int)i, &at.package, &at.numa);
  e->pci_index = add_node(p, GR_ROLE_HOSTBRIDGE, &at, 0, 0, 0, 0);
  return 0;
}

static int build_switch(struct parser *p, struct elem *e)
{
  struct place at;
  int pg, pw;
  if (attach(p, e, &at, &pg, &pw) != 0)
    return -1;
  /* PEX87xx/PEX97xx (Gen3) carry PLX's vendor id; the Gen4/Gen5 PEX88xxx/PEX89xxx Broadcom's */
  size_t digits = e->model && strncasecmp(e->model, "PEX", 3) == 0 ? strspn(e->model + 3, "0123456789") : 0;
  bool plx = !e->model || (digits == 4 && (e->model[3] == '8' || e->model[3] == '9'));
  int n = add_node(p, GR_ROLE_BRIDGE, &at, 0, 0x060400, plx ? 0x10b5 : 0x1000, 0);
  if (!e->gen)
    e->gen = pg;
  apply_link(&p->t->pci[n], e->gen, e->width ? e->width : 16, pg, pw);
  p->t->pci[n].model = e->model ? xstrdup(e->model) : NULL;
  p->t->pci[n].lanes = e->lanes;
  e->pci_index = n;
  if (e->direct) {
    int bus = new_bus(p);
    if (bus < 0)
      return -1;
    e->sec_bus = (unsigned)bus;
    p->t->pci[n].sec_bus = p->t->pci[n].sub_bus = e->sec_bus;
  }
  return 0;
}

static int build_gpu(struct parser *p, struct elem *e)
{
  struct place at;
  int pg, pw;
  if (attach(p, e, &at, &pg, &pw) != 0)
    return -1;
  unsigned vendor, device = first_pci_id(e->gpu->pci_ids, &vendor);
  int n = add_node(p, GR_ROLE_ENDPOINT, &at, 0, strcmp(e->gpu->vendor, "amd") == 0 ? 0x030000 : 0x030200,
                   vendor ? vendor : 0x10de, device);
  struct gr_pci *g = &p->t->pci[n];
  apply_link(g, e->gpu->pcie_gen, 16, pg, pw);
  g->model = xstrdup(e->gpu->model);
  g->p2p = e->p2p >= 0 ? e->p2p : p->global_p2p >= 0 ? p->global_p2p : e->gpu->p2p == GR_P2P_YES ? 1
                                                                     : e->gpu->p2p == GR_P2P_NO ? 0 : -1;
  e->pci_index = n;
  return 0;
}

/* A NIC (one node per PCI function, all on one device number: a dual-port
 * card is PIX to itself) or an NVMe drive. Function 0 is named as the rig
 * names it, function k NAME.k. */
static int build_endpoint(struct parser *p, struct elem *e)
{
  struct place at;
  int pg, pw;
  if (attach(p, e, &at, &pg, &pw) != 0)
    return -1;
  unsigned class_id = e->kind == K_NVME ? 0x010802 : e->rdma == 0 ? 0x020000 : 0x020700;
  for (int f = 0; f < e->functions; f++) {
    int n = add_node(p, GR_ROLE_ENDPOINT, &at, (unsigned)f, class_id, 0, 0);
    struct gr_pci *d = &p->t->pci[n];
    apply_link(d, e->gen ? e->gen : pg, e->width ? e->width : e->kind == K_NVME ? 4 : 16, pg, pw);
    d->model = e->model ? xstrdup(e->model) : xstrdup("NVMe drive");
    d->osdevs = f ? xasprintf("%s.%d", e->name, f) : xstrdup(e->name);
    d->port_gbit = e->port_gbit;
    d->storage_nic = e->storage;
    if (f == 0)
      e->pci_index = n;
  }
  return 0;
}

static int build_element(struct parser *p, size_t i)
{
  struct elem *e = &p->elems[i];
  switch (e->kind) {
  case K_CPU:
    return 0;
  case K_RC:
    return build_rc(p, i);
  case K_SWITCH:
    return build_switch(p, e);
  case K_GPU:
    return build_gpu(p, e);
  case K_NIC:
  case K_NVME:
    return build_endpoint(p, e);
  }
  return 0;
}

/* Builds elements parents-first (a switch may be declared before its parent). */
static int build_tree(struct parser *p)
{
  bool progress = true;
  while (progress) {
    progress = false;
    for (size_t i = 0; i < p->nelems; i++) {
      struct elem *e = &p->elems[i];
      bool done = e->pci_index >= 0 || (e->kind == K_CPU && e->pci_index == -2);
      if (done)
        continue;
      if (e->kind != K_CPU && e->kind != K_RC && p->elems[e->parent_idx].pci_index < 0)
        continue;
      if (build_element(p, i) != 0)
        return -1;
      if (e->kind == K_CPU)
        e->pci_index = -2;
      progress = true;
    }
  }
  return 0;
}

/* Sockets in declaration order, each with its NUMA nodes (os indices numbered
 * across the machine in socket order) and its RAM split evenly over them. */
static void build_cpus(struct parser *p)
{
  struct gr_topo *t = p->t;
  size_t nodes = 0;
  for (size_t i = 0; i < p->nelems; i++)
    nodes += p->elems[i].kind == K_CPU ? (size_t)p->elems[i].nodes : 0;
  t->packages = xcalloc(p->ncpus + 1, sizeof(*t->packages));
  t->numas = xcalloc(nodes + 1, sizeof(*t->numas));
  for (size_t i = 0; i < p->nelems; i++) {
    struct elem *e = &p->elems[i];
    if (e->kind != K_CPU)
      continue;
    struct gr_package *g = &t->packages[t->npackages];
    g->os_index = (int)t->npackages;
    g->cpu_model = xstrdup(e->model);
    g->cpu_vendor = xstrdup(e->vendor_amd ? "AuthenticAMD" : "GenuineIntel");
    g->cpu_family = g->cpu_model_number = -1;
    g->mem_channels = e->channels;
    g->mem_mts = e->mts;
    g->rc_p2p = e->rc_p2p;
    g->mem_bytes = (uint64_t)e->ram_gib << 30;
    e->first_node = (int)t->nnumas;
    for (int k = 0; k < e->nodes; k++) {
      uint64_t share = g->mem_bytes / (uint64_t)e->nodes;
      if (k == e->nodes - 1)
        share = g->mem_bytes - share * (uint64_t)(e->nodes - 1); /* the remainder on the last */
      t->numas[t->nnumas] = (struct gr_numa){(int)t->nnumas, (int)t->npackages, share};
      t->nnumas++;
    }
    t->npackages++;
  }
}

/* ---- NVLink: pairs, meshes and the NVSwitch fabric ---- */

static bool has_nvlink(const struct gr_gpu_model *m)
{
  return m && m->links > 0 && strcmp(m->link, "nvlink") == 0;
}

/* GB/s per direction of one NVLink of a model: the catalog's links share its figure. */
static double link_rate(const struct gr_gpu_model *m)
{
  return m->link_gbps / m->links;
}

static const char *article(const char *model)
{
  /* model names read as letters: "an A100", "an RTX 3090", "a V100" */
  return strchr("AEFHILMNORSX", toupper((unsigned char)model[0])) ? "an" : "a";
}

/* The pci index and catalog row of the NVLink GPU named `name`, or -1 after
 * an error at column col. */
static int nvlink_gpu(struct parser *p, const char *name, int col, const char *what,
                      const struct gr_gpu_model **m)
{
  int i = find_elem(p, name);
  if (i < 0 || p->elems[i].kind != K_GPU)
    return perr(p, col, "undefined GPU '%s' in %s (GPUs are gpu0, gpu1, ... in declaration order)", name, what);
  *m = p->elems[i].gpu;
  if (!has_nvlink(*m))
    return perr(p, col, "%s (%s) has no NVLink", name, (*m)->model);
  return p->elems[i].pci_index;
}

/* The GPUs of a range: pci indices and catalog rows, the caller frees both. */
static int range_gpus(struct parser *p, const struct link_stmt *s, const char *what, int **pci,
                      const struct gr_gpu_model ***m)
{
  size_t n = s->hi - s->lo + 1;
  *pci = xcalloc(n, sizeof(int));
  *m = xcalloc(n, sizeof(**m));
  for (size_t k = 0; k < n; k++) {
    char name[32];
    snprintf(name, sizeof(name), "gpu%zu", s->lo + k);
    if (((*pci)[k] = nvlink_gpu(p, name, s->acol, what, &(*m)[k])) < 0)
      return -1;
  }
  return 0;
}

/* How to write an NVSwitch board the catalog knows, for the error below. */
static void board_hint(const struct parser *p, const struct link_stmt *s, const struct gr_gpu_model *m, char *buf,
                       size_t cap)
{
  buf[0] = '\0';
  if (strcmp(m->board, "nvswitch") == 0 && s->kind != LK_FABRIC)
    snprintf(buf, cap, " (an HGX board joins GPUs through NVSwitches: write nvswitch gpu%u-gpu%u)",
             s->kind == LK_MESH ? s->lo : 0, s->kind == LK_MESH ? s->hi : (unsigned)(p->ngpus - 1));
  else if (strcmp(m->board, "bridge") == 0)
    snprintf(buf, cap, " (an NVLink bridge joins two cards with all of them)");
}

/* Counts `links` more NVLinks on GPU `gpu`; more than its catalog has is an
 * error naming the statement that goes over. */
static int charge(struct parser *p, const struct link_stmt *s, int gpu, const struct gr_gpu_model *m, int links)
{
  p->used[gpu] += links;
  if (p->used[gpu] <= m->links)
    return 0;
  char hint[160];
  board_hint(p, s, m, hint, sizeof(hint));
  return perr(p, s->col, "%s would have %d NVLinks; %s %s has %d%s", p->elems[p->gpu_elem[gpu]].name, p->used[gpu],
              article(m->model), m->model, m->links, hint);
}

/* Adds one GPU pair. No cap of its own: charge() bounds every GPU by its
 * catalog links (18 at most) and the bus numbers bound a rig to 255 GPUs, so
 * a rig's pairs stay under 2300. */
static void add_pair(struct parser *p, int x, int y, int links, double rate)
{
  gr_topo_add_nvlink(p->t, x, y, -1, links, links * rate);
}

/* A pair's links by default: all of a bridge card's (an RTX 3090's bridge
 * carries its 4), else one. */
static int pair_default(const struct gr_gpu_model *m)
{
  return strcmp(m->board, "bridge") == 0 ? m->links : 1;
}

static int link_pair(struct parser *p, const struct link_stmt *s)
{
  const struct gr_gpu_model *mx = NULL, *my = NULL;
  int x = nvlink_gpu(p, s->a, s->acol, "nvlink", &mx), y = x < 0 ? -1 : nvlink_gpu(p, s->b, s->bcol, "nvlink", &my);
  if (x < 0 || y < 0)
    return -1;
  if (x == y)
    return perr(p, s->acol, "an NVLink joins two different GPUs");
  int dx = pair_default(mx), dy = pair_default(my);
  int links = s->links ? s->links : dx < dy ? dx : dy;
  double rate = link_rate(mx) < link_rate(my) ? link_rate(mx) : link_rate(my);
  if (charge(p, s, x, mx, links) != 0 || charge(p, s, y, my, links) != 0)
    return -1;
  add_pair(p, x, y, links, rate);
  return 0;
}

/* Every pair of a range; without `links`, each GPU's links shared evenly
 * among its peers (4x V100 SXM2: 6 / 3 = 2 per pair). */
static int link_mesh(struct parser *p, const struct link_stmt *s, const int *pci, const struct gr_gpu_model **m)
{
  int n = (int)(s->hi - s->lo + 1), links = s->links, least = 0;
  double rate = link_rate(m[0]);
  for (int k = 0; k < n; k++) {
    least = m[k]->links < m[least]->links ? k : least;
    rate = link_rate(m[k]) < rate ? link_rate(m[k]) : rate;
  }
  if (!links)
    links = m[least]->links / (n - 1);
  if (links == 0) {
    char hint[160];
    board_hint(p, s, m[least], hint, sizeof(hint));
    return perr(p, s->col, "a mesh of %d GPUs needs %d NVLinks per GPU at least; %s %s has %d%s", n, n - 1,
                article(m[least]->model), m[least]->model, m[least]->links, hint);
  }
  for (int k = 0; k < n; k++)
    if (charge(p, s, pci[k], m[k], links * (n - 1)) != 0)
      return -1;
  for (int a = 0; a < n; a++)
    for (int b = a + 1; b < n; b++)
      add_pair(p, pci[a], pci[b], links, rate);
  return 0;
}

/* The rig's one NVSwitch fabric (model/topo.h: every NVSwitch of a machine is
 * one), made by the first nvswitch statement; later ones add to it. */
static int link_fabric(struct parser *p, const struct link_stmt *s, const int *pci, const struct gr_gpu_model **m)
{
  struct gr_topo *t = p->t;
  int gen = s->gen ? s->gen : m[0]->link_gen;
  if (!t->nfabrics)
    gr_topo_add_fabric(t, GR_FABRIC_RIG, gen, 0, NULL);
  struct gr_fabric *f = &t->fabrics[0];
  if (f->nvlink_gen != gen)
    return perr(p, s->col, "NVLink generation %d: the rig's NVSwitch fabric is generation %d (one fabric, one "
                "generation)", gen, f->nvlink_gen);
  f->nswitches += s->switches;
  for (unsigned k = 0; k <= s->hi - s->lo; k++) {
    int links = s->links ? s->links : m[k]->links;
    if (charge(p, s, pci[k], m[k], links) != 0)
      return -1;
    gr_fabric_add_links(f, pci[k], links, links * link_rate(m[k]));
  }
  return 0;
}

static int link_statement(struct parser *p, const struct link_stmt *s)
{
  if (s->kind == LK_PAIR)
    return link_pair(p, s);
  int *pci = NULL;
  const struct gr_gpu_model **m = NULL;
  int rc = range_gpus(p, s, s->kind == LK_MESH ? "nvlink mesh" : "nvswitch", &pci, &m);
  if (rc == 0)
    rc = s->kind == LK_MESH ? link_mesh(p, s, pci, m) : link_fabric(p, s, pci, m);
  free(pci);
  free(m);
  return rc;
}

/* The nvlink and nvswitch statements in file order, each GPU's links counted
 * against its catalog's as they come. */
static int build_links(struct parser *p)
{
  int rc = 0;
  p->used = xcalloc(p->t->npci + 1, sizeof(int));
  p->gpu_elem = xcalloc(p->t->npci + 1, sizeof(int));
  for (size_t i = 0; i < p->nelems; i++)
    if (p->elems[i].kind == K_GPU)
      p->gpu_elem[p->elems[i].pci_index] = (int)i;
  for (size_t k = 0; k < p->nlinks && rc == 0; k++) {
    p->line = p->links[k].line;
    rc = link_statement(p, &p->links[k]);
  }
  free(p->used);
  free(p->gpu_elem);
  p->used = p->gpu_elem = NULL;
  return rc;
}

static int finish(struct parser *p, int lines)
{
  p->line = lines;
  if (!p->have_rig)
    return perr(p, 1, "empty rig file: expected `rig \"NAME\"`");
  if (!p->ncpus)
    return perr(p, 1, "no cpu statement: a rig needs at least one CPU");
  if (!p->ngpus)
    return perr(p, 1, "no gpu statement: a rig needs at least one GPU");
  if (resolve_parents(p) != 0)
    return -1;
  build_cpus(p);
  if (build_tree(p) != 0 || build_links(p) != 0)
    return -1;
  p->t->link_details = true;
  gr_topo_finish(p->t);
  return 0;
}

static void free_parser(struct parser *p)
{
  free_tokens(p);
  for (size_t i = 0; i < p->nelems; i++) {
    free(p->elems[i].name);
    free(p->elems[i].parent);
    free(p->elems[i].model);
  }
  free(p->elems);
  free(p->index);
  for (size_t i = 0; i < p->nlinks; i++) {
    free(p->links[i].a);
    free(p->links[i].b);
  }
  free(p->links);
}
int gr_rig_parse(const char *name, const char *text, size_t len, struct gr_topo *t, struct gr_err *err)
{
  struct parser p = {.name = name, .err = err, .t = t, .global_p2p = -1, .next_bus = 1};
  int rc = -1;
  size_t pos = 0;
  gr_topo_init(t);
  t->rig = xcalloc(1, sizeof(*t->rig));
  t->rig->file = xstrdup(name);
  t->source_kind = xstrdup("rig");
  t->source_path = xstrdup(name);
  const char *line;
  size_t n;
  while ((line = next_line(text, len, &pos, &n))) {
    if (++p.line > RIG_MAX_LINES) {
      perr(&p, 1, "more than %d lines: not a rig file (a real one has under a hundred)", RIG_MAX_LINES);
      goto out;
    }
    const char *nul = memchr(line, '\0', n);
    if (nul) {
      perr(&p, (int)(nul - line) + 1, "binary data (NUL byte): not a rig file");
      goto out;
    }
    if (tokenize(&p, line, n) != 0)
      goto out;
    if (p.ntok && parse_statement(&p) != 0)
      goto out;
    free_tokens(&p);
  }
  rc = finish(&p, p.line ? p.line : 1);
out:
  free_parser(&p);
  if (rc != 0)
    gr_topo_free(t);
  return rc;
}

/* Real rigs are a few KB; the parser is linear, so the cap only bounds memory. */
#define RIG_MAX_BYTES (64u << 20)

static bool str_ends_with(const char *s, const char *suffix)
{
  size_t n = strlen(s), m = strlen(suffix);
  return n > m && strcmp(s + n - m, suffix) == 0;
}

/* A name that is not a bundled rig as typed: the one that differs only in
 * case, spaces, hyphens and underscores (WOPR is wopr) into name, 0; else
 * -1 with err naming the closest one. */
static int find_bundled(const char *option, const char *typed, char *name, size_t cap, struct gr_err *err)
{
  char **names = NULL;
  size_t n = 0;
  struct gr_suggest s;
  char hint[GR_SUGGEST_MAX + 32];
  int rc = -1;
  gr_suggest_init(&s, name);
  if (gr_data_list("rigs", ".rig", &names, &n, err) != 0)
    return -1;
  for (size_t i = 0; i < n && rc != 0; i++) {
    if (gr_name_loose_eq(name, names[i])) {
      str_copy(name, cap, names[i]);
      rc = 0;
    }
    gr_suggest_offer(&s, names[i]);
  }
  bool dot_rig = str_ends_with(typed, ".rig");
  if (rc != 0)
    gr_fail(err, GR_EXIT_FAIL, "%s%s%s: %s%s", option ? option : "", option ? " " : "", typed,
            dot_rig ? "no such file, and no rig of that name" : "no rig of that name",
            gr_suggest_best(&s) ? gr_suggest_text(&s, hint, sizeof(hint))
            : dot_rig           ? " (gpurig compare --list shows them)"
                                : " (gpurig compare --list shows them; a file needs a / or .rig)");
  for (size_t i = 0; i < n; i++)
    free(names[i]);
  free(names);
  return rc;
}

/* Where a rig the user named is: a path (with a '/', standard input, or a
 * FILE.rig that exists here) into path and shown as given; else a bundled
 * rig's name (a trailing .rig dropped, case ignored), shown as rigs/NAME.rig
 * wherever the data directory is. */
static int locate_rig(const char *option, const char *path_or_name, char *path, char *shown, size_t cap,
                      struct gr_err *err)
{
  size_t len = strlen(path_or_name);
  bool dot_rig = str_ends_with(path_or_name, ".rig");
  if (strchr(path_or_name, '/') || gr_file_is_stdin(path_or_name) || (dot_rig && access(path_or_name, F_OK) == 0) ||
      (strstr(path_or_name, ".rig") && !dot_rig)) {
    snprintf(path, cap, "%s", path_or_name);
    snprintf(shown, cap, "%s", path_or_name);
    return 0;
  }
  char name[256];
  if (len - (dot_rig ? 4 : 0) >= sizeof(name) || !gr_data_path("rigs/", path, cap) || strlen(path) + len + 5 >= cap)
    return gr_fail(err, GR_EXIT_FAIL, "%s: name too long", path_or_name);
  str_copy(name, len - (dot_rig ? 4 : 0) + 1, path_or_name);
  size_t dir = strlen(path);
  snprintf(path + dir, cap - dir, "%s.rig", name);
  if (access(path, F_OK) != 0) {
    if (find_bundled(option, path_or_name, name, sizeof(name), err) != 0)
      return -1;
    snprintf(path + dir, cap - dir, "%s.rig", name);
  }
  snprintf(shown, cap, "rigs/%s.rig", name);
  return 0;
}

int gr_load_rig_as(const char *option, const char *path_or_name, struct gr_topo *t, struct gr_err *err)
{
  char path[PATH_MAX], shown[PATH_MAX];
  struct gr_file file = {0};
  int rc = -1;
  gr_topo_init(t);
  if (locate_rig(option, path_or_name, path, shown, sizeof(path), err) == 0 &&
      gr_file_read(path, RIG_MAX_BYTES, GR_FILE_STDIN, &file, err) == 0)
    rc = gr_rig_parse(file.from_stdin ? "standard input" : shown, file.data, file.len, t, err);
  gr_file_free(&file);
  return rc;
}

int gr_load_rig(const char *path_or_name, struct gr_topo *t, struct gr_err *err)
{
  return gr_load_rig_as(NULL, path_or_name, t, err);
}

/* After --gpu: every NVLink counted at the new model's rate, every fabric
 * member given all its links (an NVSwitch board takes them all); direct links
 * the new model cannot carry are dropped with a warning. */
static void relink(struct gr_topo *t, const struct gr_gpu_model *m)
{
  int *used = xcalloc(t->npci + 1, sizeof(int)), most = 0;
  for (size_t f = 0; f < t->nfabrics; f++) {
    t->fabrics[f].nvlink_gen = m->link_gen;
    for (size_t i = 0; i < t->fabrics[f].nmembers; i++) {
      struct gr_fabric_member *fm = &t->fabrics[f].members[i];
      fm->links = m->links;
      fm->gbps = m->link_gbps;
      used[fm->gpu] += fm->links;
    }
  }
  for (size_t k = 0; k < t->nnvlinks; k++) {
    struct gr_nvlink *l = &t->nvlinks[k];
    l->bw_gbps = l->count * link_rate(m);
    used[l->a] += l->count;
    if (l->b >= 0)
      used[l->b] += l->count;
  }
  for (size_t i = 0; i < t->npci; i++)
    most = used[i] > most ? used[i] : most;
  if (most > m->links) {
    gr_topo_add_warning(t, "--gpu %s: the rig's NVLinks give a GPU %d links and %s %s has %d: its direct NVLinks "
                        "are dropped", m->model, most, article(m->model), m->model, m->links);
    t->nnvlinks = 0;
  }
  free(used);
}

/* --gpu MODEL that is not in the catalog, with the closest that is. */
static int unknown_gpu(const char *model, struct gr_err *err)
{
  const char *close = model ? gr_catalog_closest(model) : NULL;
  if (close)
    return gr_fail(err, GR_EXIT_FAIL, "--gpu %s: not in the GPU catalog; did you mean '%s'?", model, close);
  return gr_fail(err, GR_EXIT_FAIL, "--gpu %s: not in the GPU catalog (gpurig plan --list names them)",
                 model ? model : "(none)");
}

int gr_rig_replace_gpus(struct gr_topo *t, const char *model, struct gr_err *err)
{
  const struct gr_gpu_model *m = gr_catalog_find(model);
  if (!m)
    return unknown_gpu(model, err);
  bool other = false;
  for (size_t g = 0; g < t->ngpus; g++)
    other |= gr_pci_catalog(&t->pci[t->gpus[g]]) != m;
  /* the price a rig states bought its own cards (the T181-G20's 2000 USD came with
   * 16 GB V100s): held against other cards' VRAM it gives a price per GiB nobody quoted */
  if (other && t->rig && t->rig->price > 0) {
    t->rig->own_price = t->rig->price;
    t->rig->price = 0;
    gr_topo_add_warning(t, "--gpu %s: the rig's price (%.0f %s) is for its own cards and is left out (plan --price "
                        "gives one)", m->model, t->rig->own_price, t->rig->currency ? t->rig->currency : "");
  }
  for (size_t g = 0; g < t->ngpus; g++) {
    struct gr_pci *p = &t->pci[t->gpus[g]];
    free(p->model);
    p->model = xstrdup(m->model);
    p->link.max_gen = m->pcie_gen;
    int eg = p->link.port_max_gen && p->link.port_max_gen < m->pcie_gen ? p->link.port_max_gen : m->pcie_gen;
    p->link.cur_gen = eg;
    p->p2p = m->p2p == GR_P2P_YES ? 1 : m->p2p == GR_P2P_NO ? 0 : -1;
  }
  if (!has_nvlink(m)) {
    t->nnvlinks = 0;
    gr_topo_free_fabrics(t);
  } else {
    relink(t, m);
  }
  return 0;
}

/* The NVLink of the baseboard an SXM GPU is sold on, as rig lines: HGX
 * boards join every GPU through NVSwitches; V100 SXM2 boards wire a hybrid
 * cube mesh (4-GPU boards such as the T181-G20 join each pair with 2 links;
 * 8-GPU boards the DGX-1 mesh, its first n GPUs when fewer). An SXM GPU is
 * never on PCIe alone, so --gpu "H100 SXM5" --gpus 4 plans on NVLink. */
static size_t generic_baseboard(const struct gr_gpu_model *g, int n, char *out, size_t cap)
{
  static const int hcm8[][3] = {{0, 1, 1}, {0, 2, 1}, {0, 3, 2}, {0, 4, 2}, {1, 2, 2}, {1, 3, 1}, {1, 5, 2},
                                {2, 3, 2}, {2, 6, 1}, {3, 7, 1}, {4, 5, 1}, {4, 6, 1}, {4, 7, 2}, {5, 6, 2},
                                {5, 7, 1}, {6, 7, 2}};
  size_t off = 0;
  if (n < 2)
    return 0;
  if (strcmp(g->board, "nvswitch") == 0)
    return (size_t)snprintf(out, cap, "source \"an SXM GPU on its baseboard: every GPU on the NVSwitches\"\n"
                                      "nvswitch gpu0-gpu%d\n", n - 1);
  if (strcmp(g->board, "hcm") != 0) /* mesh too: MI300X's xGMI has no rig statement yet, so PCIe alone */
    return 0;
  if (n <= 4)
    return (size_t)snprintf(out, cap, "source \"an SXM2 GPU on a 4-GPU baseboard: each pair by 2 NVLinks\"\n"
                                      "nvlink mesh gpu0-gpu%d links 2\n", n - 1);
  off += (size_t)snprintf(out + off, cap - off, "source \"an SXM2 GPU on an 8-GPU baseboard: the DGX-1 hybrid cube "
                                                "mesh%s\"\n", n > 8 ? "; GPUs past the eighth on PCIe only" : "");
  for (size_t e = 0; e < sizeof(hcm8) / sizeof(hcm8[0]) && off < cap; e++)
    if (hcm8[e][1] < n)
      off += (size_t)snprintf(out + off, cap - off, "nvlink gpu%d gpu%d links %d\n", hcm8[e][0], hcm8[e][1],
                              hcm8[e][2]);
  return off < cap ? off : cap - 1;
}

int gr_rig_generic(const char *model, int n, struct gr_topo *t, struct gr_err *err)
{
  const struct gr_gpu_model *g = model ? gr_catalog_find(model) : NULL;
  gr_topo_init(t);
  if (!g)
    return unknown_gpu(model, err);
  if (n < 1 || n > 64)
    return gr_fail(err, GR_EXIT_FAIL, "%d GPUs: a generic board holds 1 to 64", n);
  size_t cap = 2048 + 96 * (size_t)n, off = 0;
  char *text = xmalloc(cap);
  off += (size_t)snprintf(text + off, cap - off,
                          "rig \"%d x %s on a generic board\"\nsource \"gpurig plan --gpu: one x16 Gen%d root port "
                          "per GPU, one socket\"\ncpu cpu0 \"generic\" vendor amd\n",
                          n, g->model, g->pcie_gen);
  for (int i = 0; i < n; i++)
    off += (size_t)snprintf(text + off, cap - off, "rootcomplex rc%d cpu0 gen%d\ngpu 1 \"%s\" rc%d\n", i, g->pcie_gen,
                            g->model, i);
  off += generic_baseboard(g, n, text + off, cap - off);
  int rc = gr_rig_parse("(--gpu)", text, off, t, err);
  free(text);
  return rc;
}
