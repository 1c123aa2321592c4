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
#include "facts/catalog.h"
#include "facts/data.h"
#include "facts/pcilink.h"

#define MAX_TOKENS 32

/* Limits far above any real machine (a 10-GPU server is about 40 elements and
 * a dozen nvlink lines), checked while parsing so that a runaway or hostile
 * file is refused at the first line over, with that line, not after the whole
 * file is read (docs/rig-format.md, "Limits"). */
#define RIG_MAX_ELEMS 4096          /* named elements of every kind, GPUs and drives included */
#define RIG_MAX_NVLINKS 4096        /* nvlink statements */
#define RIG_MAX_NVLINK_PAIRS 16384  /* GPU pairs they join, meshes expanded */
#define RIG_MAX_BUSES 255           /* bus numbers of one PCI domain (1 .. 0xff) */
#define RIG_MAX_LINES 100000        /* a real rig is under 100 lines; comments and notes included */

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
  int vendor_amd;         /* cpu */
  int channels, mts, rc_p2p;
  int cpu_index;          /* cpu: its package number, in declaration order */
  int pci_index;          /* node in the topology once built */
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
  char **nvlinks;         /* raw nvlink statements, resolved after the GPUs exist */
  int (*nvlink_pos)[3];   /* line, col of each, and the link count */
  size_t nnvlinks;
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
 * anything below one its port and itself, a cpu none. */
static unsigned buses_of(enum kind kind)
{
  return kind == K_CPU ? 0 : kind == K_RC ? 1 : 2;
}

/* The limits, checked as each element is declared: the error names the line
 * that goes over. */
static int check_room(struct parser *p, enum kind kind)
{
  if (p->nelems >= RIG_MAX_ELEMS)
    return perr(p, p->tok[0].col, "too many elements (at most %d cpus, root complexes, switches, GPUs, NICs "
                "and drives in one rig)", RIG_MAX_ELEMS);
  if (p->nbuses + buses_of(kind) > RIG_MAX_BUSES)
    return perr(p, p->tok[0].col, "too many devices for one PCI domain (at most %d bus numbers: a root complex "
                "takes one, a switch, GPU, NIC or drive two, its port's and its own)", RIG_MAX_BUSES);
  return 0;
}

/* A new element, or NULL after reporting a limit. */
static struct elem *new_elem(struct parser *p, enum kind kind, const char *name, int col)
{
  if (check_room(p, kind) != 0)
    return NULL;
  p->nbuses += buses_of(kind);
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

/* Options after the fixed words: `key value` pairs and link words. */
static int device_options(struct parser *p, struct elem *e, int from)
{
  for (int i = from; i < p->ntok; i++) {
    const struct token *t = &p->tok[i];
    const char *k = t->text;
    bool has_next = i + 1 < p->ntok;
    if (!t->quoted && strncasecmp(k, "gen", 3) == 0) {
      if (want_gen(p, t, &e->gen) != 0)
        return -1;
    } else if (!t->quoted && (k[0] == 'x' || k[0] == 'X') && isdigit((unsigned char)k[1])) {
      if (want_width(p, t, &e->width) != 0)
        return -1;
    } else if (!t->quoted && (strcmp(k, "slot") == 0 || strcmp(k, "riser") == 0 || strcmp(k, "uplink") == 0)) {
      int *g = strcmp(k, "uplink") == 0 ? &e->gen : &e->slot_gen;
      int *w = strcmp(k, "uplink") == 0 ? &e->width : &e->slot_width;
      if (i + 2 >= p->ntok)
        return perr(p, t->col + (int)strlen(k), "expected a generation and width after '%s' (e.g. %s gen3 x8)", k, k);
      if (want_gen(p, &p->tok[i + 1], g) != 0 || want_width(p, &p->tok[i + 2], w) != 0)
        return -1;
      i += 2;
    } else if (!t->quoted && strcmp(k, "model") == 0 && has_next) {
      free(e->model);
      e->model = xstrdup(p->tok[++i].text);
    } else if (!t->quoted && strcmp(k, "lanes") == 0 && has_next) {
      long v;
      if (want_count(p, &p->tok[++i], 1, 256, &v) != 0)
        return -1;
      e->lanes = (int)v;
    } else if (!t->quoted && strcmp(k, "p2p") == 0 && has_next && e->kind == K_GPU) {
      if (want_onoff(p, &p->tok[++i], &e->p2p) != 0)
        return -1;
    } else if (!t->quoted && strcmp(k, "rdma") == 0 && has_next && e->kind == K_NIC) {
      if (want_onoff(p, &p->tok[++i], &e->rdma) != 0)
        return -1;
    } else {
      return perr(p, t->col, "unexpected \"%s\" (expected genN, xN, slot, riser, uplink, model, lanes%s)", k,
                  e->kind == K_GPU ? ", p2p" : e->kind == K_NIC ? ", rdma" : "");
    }
  }
  return 0;
}

static int stmt_cpu(struct parser *p)
{
  if (p->ntok < 3)
    return perr(p, p->tok[0].col, "expected: cpu NAME \"MODEL\" [vendor intel|amd] [channels N] [memory MT/s] [rc-p2p on|off]");
  if (check_new_name(p, &p->tok[1]) != 0)
    return -1;
  struct elem *e = new_elem(p, K_CPU, p->tok[1].text, p->tok[1].col);
  if (!e)
    return -1;
  e->model = xstrdup(p->tok[2].text);
  e->vendor_amd = strcasestr(e->model, "epyc") || strcasestr(e->model, "ryzen") || strcasestr(e->model, "threadripper");
  for (int i = 3; i < p->ntok; i++) {
    const struct token *t = &p->tok[i];
    if (i + 1 >= p->ntok)
      return perr(p, t->col, "expected a value after \"%s\"", t->text);
    const struct token *v = &p->tok[++i];
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
      if (want_onoff(p, v, &e->rc_p2p) != 0)
        return -1;
    } else {
      return perr(p, t->col, "unexpected \"%s\" (expected vendor, channels, memory or rc-p2p)", t->text);
    }
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
  struct elem *e = new_elem(p, kind, p->tok[1].text, p->tok[1].col);
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

static int stmt_rootcomplex(struct parser *p)
{
  struct elem *e = named_child(p, K_RC, "rootcomplex NAME CPU [genN]");
  if (!e)
    return -1;
  e->gen = 3;
  for (int i = 3; i < p->ntok; i++)
    if (want_gen(p, &p->tok[i], &e->gen) != 0)
      return -1;
  return 0;
}

static int stmt_switch(struct parser *p)
{
  struct elem *e = named_child(p, K_SWITCH, "switch NAME PARENT [model \"PEX8796\"] [lanes N] [genN] [uplink genN xN]");
  return e ? device_options(p, e, 3) : -1;
}

static int stmt_gpu(struct parser *p)
{
  long count;
  int i = optional_count(p, &count);
  if (i < 0)
    return -1;
  if (p->ntok < i + 2 || !p->tok[i].quoted)
    return perr(p, p->ntok > i ? p->tok[i].col : p->tok[0].col, "expected: gpu [COUNT] \"MODEL\" PARENT [slot genN xN] [p2p on|off]");
  const struct gr_gpu_model *m = gr_catalog_find(p->tok[i].text);
  if (!m)
    return perr(p, p->tok[i].col, "unknown GPU model \"%s\" (models are listed in data/gpus.tsv, e.g. \"RTX 3090\")",
                p->tok[i].text);
  for (long k = 0; k < count; k++) {
    char name[32];
    /* GPUs are named gpu0, gpu1, ... in the order they are declared */
    snprintf(name, sizeof(name), "gpu%zu", p->ngpus);
    struct elem *e = new_elem(p, K_GPU, name, p->tok[0].col);
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
    return perr(p, p->tok[0].col, "expected: nic NAME \"MODEL\" PARENT [genN] [xN] [rdma on|off]");
  if (check_new_name(p, &p->tok[1]) != 0)
    return -1;
  struct elem *e = new_elem(p, K_NIC, p->tok[1].text, p->tok[1].col);
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
    return perr(p, p->tok[0].col, "expected: nvme [COUNT] PARENT [genN] [xN]");
  for (long k = 0; k < count; k++) {
    char name[32];
    snprintf(name, sizeof(name), "nvme%zu", p->nnvmes);
    struct elem *e = new_elem(p, K_NVME, name, p->tok[0].col);
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

/* nvlink GPU GPU [links N]  |  nvlink mesh GPUa-GPUb [links N] */
static int stmt_nvlink(struct parser *p)
{
  long links = 1;
  const int nfixed = 3; /* nvlink A B, or nvlink mesh RANGE */
  if (p->ntok < nfixed)
    return perr(p, p->tok[0].col, "expected: nvlink GPU GPU [links N] or nvlink mesh GPUa-GPUb [links N]");
  if (p->ntok == nfixed + 2 && strcmp(p->tok[nfixed].text, "links") == 0) {
    if (want_count(p, &p->tok[nfixed + 1], 1, 18, &links) != 0)
      return -1;
  } else if (p->ntok != nfixed) {
    return perr(p, p->tok[nfixed].col, "unexpected \"%s\" (expected links N)", p->tok[nfixed].text);
  }
  if (p->nnvlinks >= RIG_MAX_NVLINKS)
    return perr(p, p->tok[0].col, "too many nvlink statements (at most %d in one rig)", RIG_MAX_NVLINKS);
  p->nvlinks = xrealloc(p->nvlinks, (p->nnvlinks + 1) * sizeof(char *));
  p->nvlink_pos = xrealloc(p->nvlink_pos, (p->nnvlinks + 1) * sizeof(*p->nvlink_pos));
  p->nvlinks[p->nnvlinks] = xasprintf("%s %s", p->tok[1].text, p->tok[2].text);
  p->nvlink_pos[p->nnvlinks][0] = p->line;
  p->nvlink_pos[p->nnvlinks][1] = p->tok[1].col;
  p->nvlink_pos[p->nnvlinks][2] = (int)links;
  p->nnvlinks++;
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

static int parse_statement(struct parser *p)
{
  const struct token *k = &p->tok[0];
  if (k->quoted)
    return perr(p, k->col, "expected a keyword, got a string");
  if (!p->have_rig && strcmp(k->text, "rig") != 0)
    return perr(p, k->col, "expected `rig \"NAME\"` as the first statement");
  static const char *meta[] = {"rig", "source", "price", "intersocket", "p2p"};
  for (size_t i = 0; i < sizeof(meta) / sizeof(meta[0]); i++)
    if (strcmp(k->text, meta[i]) == 0)
      return stmt_meta(p, k->text);
  if (strcmp(k->text, "cpu") == 0)
    return stmt_cpu(p);
  if (strcmp(k->text, "rootcomplex") == 0)
    return stmt_rootcomplex(p);
  if (strcmp(k->text, "switch") == 0)
    return stmt_switch(p);
  if (strcmp(k->text, "gpu") == 0)
    return stmt_gpu(p);
  if (strcmp(k->text, "nic") == 0)
    return stmt_nic(p);
  if (strcmp(k->text, "nvme") == 0)
    return stmt_nvme(p);
  if (strcmp(k->text, "nvlink") == 0)
    return stmt_nvlink(p);
  return perr(p, k->col,
              "unknown statement \"%s\" (expected rig, source, price, cpu, intersocket, rootcomplex, switch, gpu, "
              "nic, nvme, nvlink or p2p)", k->text);
}

/* ---- resolution ---- */

static const char *kind_name(enum kind k)
{
  static const char *n[] = {"cpu", "rootcomplex", "switch", "gpu", "nic", "nvme"};
  return n[k];
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

static void apply_link(struct gr_pci *n, int gen, int width, int port_gen, int port_width)
{
  n->link.max_gen = gen;
  n->link.max_width = width;
  n->link.port_max_gen = port_gen;
  n->link.port_max_width = port_width;
  n->link.cur_gen = gen < port_gen ? gen : port_gen;
  n->link.cur_width = width < port_width ? width : port_width;
}

static int add_node(struct parser *p, enum gr_role role, int parent, unsigned class_id, unsigned vendor,
                    unsigned device, int numa)
{
  /* check_room counted every element's buses while parsing; this guards the
   * bus numbers' range should the two ever disagree */
  if (p->next_bus > RIG_MAX_BUSES)
    return perr(p, 1, "too many devices for one PCI domain (at most %d)", RIG_MAX_BUSES);
  int i = gr_topo_add_pci(p->t);
  struct gr_pci *n = &p->t->pci[i];
  n->role = role;
  n->parent = parent;
  n->bus = p->next_bus++;
  n->sec_bus = n->sub_bus = n->bus;
  n->class_id = class_id;
  n->vendor = vendor;
  n->device = device;
  n->numa = n->package = numa;
  return i;
}

static int cpu_of(const struct parser *p, int e)
{
  while (p->elems[e].kind != K_CPU)
    e = p->elems[e].parent_idx;
  return p->elems[e].cpu_index;
}

/* The port a device or switch hangs from, created on demand: a root port of
 * its root complex, or a downstream port of its switch. */
static int make_port(struct parser *p, const struct elem *e, int *gen, int *width)
{
  const struct elem *par = &p->elems[e->parent_idx];
  int numa = cpu_of(p, e->parent_idx);
  int port_gen = par->gen ? par->gen : 3, port_width = 16;
  /* described, not read: no vendor or device id of its own */
  int port = add_node(p, GR_ROLE_BRIDGE, par->pci_index, 0x060400, 0, 0, numa);
  if (port < 0)
    return -1;
  if (e->slot_gen)
    port_gen = e->slot_gen;
  if (e->slot_width)
    port_width = e->slot_width;
  p->t->pci[port].link.max_gen = port_gen;
  p->t->pci[port].link.max_width = port_width;
  *gen = port_gen;
  *width = port_width;
  return port;
}

static unsigned first_pci_id(const char *ids, unsigned *vendor)
{
  unsigned v = 0, d = 0;
  if (sscanf(ids, "%x:%x", &v, &d) != 2)
    v = d = 0;
  *vendor = v;
  return d;
}

static int build_element(struct parser *p, size_t i)
{
  struct elem *e = &p->elems[i];
  struct gr_topo *t = p->t;
  int numa = e->kind == K_CPU ? 0 : cpu_of(p, (int)i);
  int pg, pw, port, n;
  switch (e->kind) {
  case K_CPU:
    return 0;
  case K_RC:
    e->pci_index = add_node(p, GR_ROLE_HOSTBRIDGE, -1, 0, 0, 0, numa);
    return e->pci_index < 0 ? -1 : 0;
  case K_SWITCH:
    if ((port = make_port(p, e, &pg, &pw)) < 0)
      return -1;
    n = add_node(p, GR_ROLE_BRIDGE, port, 0x060400,
                 e->model && strncasecmp(e->model, "PEX8", 4) != 0 && strncasecmp(e->model, "PEX9", 4) != 0 ? 0x1000
                                                                                                           : 0x10b5,
                 0, numa);
    if (n < 0)
      return -1;
    if (!e->gen)
      e->gen = pg;
    apply_link(&t->pci[n], e->gen, e->width ? e->width : 16, pg, pw);
    t->pci[n].model = e->model ? xstrdup(e->model) : NULL;
    t->pci[n].lanes = e->lanes;
    e->pci_index = n;
    return 0;
  case K_GPU: {
    if ((port = make_port(p, e, &pg, &pw)) < 0)
      return -1;
    unsigned vendor, device = first_pci_id(e->gpu->pci_ids, &vendor);
    n = add_node(p, GR_ROLE_ENDPOINT, port, strcmp(e->gpu->vendor, "amd") == 0 ? 0x030000 : 0x030200,
                 vendor ? vendor : 0x10de, device, numa);
    if (n < 0)
      return -1;
    apply_link(&t->pci[n], e->gpu->pcie_gen, 16, pg, pw);
    t->pci[n].model = xstrdup(e->gpu->model);
    int p2p = e->p2p >= 0 ? e->p2p : p->global_p2p >= 0 ? p->global_p2p : e->gpu->p2p == GR_P2P_YES ? 1
                                                                        : e->gpu->p2p == GR_P2P_NO ? 0 : -1;
    t->pci[n].p2p = p2p;
    e->pci_index = n;
    return 0;
  }
  case K_NIC:
  case K_NVME:
    if ((port = make_port(p, e, &pg, &pw)) < 0)
      return -1;
    n = add_node(p, GR_ROLE_ENDPOINT, port,
                 e->kind == K_NVME ? 0x010802 : e->rdma == 0 ? 0x020000 : 0x020700,
                 0, 0, numa);
    if (n < 0)
      return -1;
    apply_link(&t->pci[n], e->gen ? e->gen : pg, e->width ? e->width : e->kind == K_NVME ? 4 : 16, pg, pw);
    t->pci[n].model = e->model ? xstrdup(e->model) : xstrdup("NVMe drive");
    t->pci[n].osdevs = xstrdup(e->name);
    e->pci_index = n;
    return 0;
  }
  return 0;
}

/* Builds elements parents-first (a switch may be declared before its parent). */
static int build_tree(struct parser *p)
{
  bool progress = true;
  size_t built = 0;
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
      built++;
      progress = true;
    }
  }
  return 0;
}

static void build_cpus(struct parser *p)
{
  struct gr_topo *t = p->t;
  t->packages = xcalloc(p->ncpus + 1, sizeof(*t->packages));
  t->numas = xcalloc(p->ncpus + 1, sizeof(*t->numas));
  for (size_t i = 0; i < p->nelems; i++) {
    const struct elem *e = &p->elems[i];
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
    t->numas[t->nnumas] = (struct gr_numa){(int)t->nnumas, (int)t->npackages, 0};
    t->npackages++;
    t->nnumas++;
  }
}

static int gpu_pci(const struct parser *p, const char *name)
{
  int i = find_elem(p, name);
  return i >= 0 && p->elems[i].kind == K_GPU ? p->elems[i].pci_index : -1;
}

static int add_nvlink_pair(struct parser *p, int col, const char *a, const char *b, int links)
{
  if (p->t->nnvlinks >= RIG_MAX_NVLINK_PAIRS)
    return perr(p, col, "too many NVLinks (at most %d GPU pairs in one rig, meshes expanded)", RIG_MAX_NVLINK_PAIRS);
  int x = gpu_pci(p, a), y = gpu_pci(p, b);
  if (x < 0 || y < 0)
    return perr(p, col, "undefined GPU '%s' in nvlink (GPUs are gpu0, gpu1, ... in declaration order)", x < 0 ? a : b);
  if (x == y)
    return perr(p, col, "an NVLink joins two different GPUs");
  const struct gr_gpu_model *m = gr_catalog_find(p->t->pci[x].model);
  if (!m || m->links == 0 || strcmp(m->link, "nvlink") != 0)
    return perr(p, col, "%s (%s) has no NVLink", a, p->t->pci[x].model);
  gr_topo_add_nvlink(p->t, x, y, -1, links, links * m->link_gbps / m->links);
  return 0;
}

static int build_nvlinks(struct parser *p)
{
  for (size_t k = 0; k < p->nnvlinks; k++) {
    char a[128], b[128];
    p->line = p->nvlink_pos[k][0];
    int col = p->nvlink_pos[k][1], links = p->nvlink_pos[k][2];
    if (sscanf(p->nvlinks[k], "%127s %127s", a, b) != 2)
      return perr(p, col, "expected two GPU names");
    if (strcmp(a, "mesh") != 0) {
      if (add_nvlink_pair(p, col, a, b, links) != 0)
        return -1;
      continue;
    }
    unsigned lo, hi;
    char tail;
    if (sscanf(b, "gpu%u-gpu%u%c", &lo, &hi, &tail) != 2 || lo >= hi || hi > 63)
      return perr(p, col, "expected a GPU range such as gpu0-gpu3 after mesh, got \"%s\"", b);
    for (unsigned g1 = lo; g1 <= hi; g1++)
      for (unsigned g2 = g1 + 1; g2 <= hi; g2++) {
        char n1[16], n2[16];
        snprintf(n1, sizeof(n1), "gpu%u", g1);
        snprintf(n2, sizeof(n2), "gpu%u", g2);
        if (add_nvlink_pair(p, col, n1, n2, links) != 0)
          return -1;
      }
  }
  return 0;
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
  if (build_tree(p) != 0 || build_nvlinks(p) != 0)
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
  for (size_t i = 0; i < p->nnvlinks; i++)
    free(p->nvlinks[i]);
  free(p->nvlinks);
  free(p->nvlink_pos);
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

int gr_load_rig(const char *path_or_name, struct gr_topo *t, struct gr_err *err)
{
  char path[PATH_MAX], shown[PATH_MAX];
  struct gr_file file = {0};
  int rc = -1;
  bool by_name = !strchr(path_or_name, '/') && !strstr(path_or_name, ".rig") && !gr_file_is_stdin(path_or_name);
  gr_topo_init(t);
  /* a bundled rig is shown as rigs/NAME.rig, wherever the data directory is */
  if (by_name && (!gr_data_path("rigs/", path, sizeof(path)) ||
                  strlen(path) + strlen(path_or_name) + 5 >= sizeof(path) || strlen(path_or_name) > 200))
    return gr_fail(err, GR_EXIT_FAIL, "%s: name too long", path_or_name);
  if (by_name) {
    snprintf(path + strlen(path), sizeof(path) - strlen(path), "%s.rig", path_or_name);
    snprintf(shown, sizeof(shown), "rigs/%s.rig", path_or_name);
  } else {
    snprintf(path, sizeof(path), "%s", path_or_name);
    snprintf(shown, sizeof(shown), "%s", path_or_name);
  }
  if (by_name && access(path, F_OK) != 0) {
    gr_fail(err, GR_EXIT_FAIL, "%s: no rig of that name in gpurig's data directory (gpurig compare --list shows them)",
            path_or_name);
    goto out;
  }
  if (gr_file_read(path, RIG_MAX_BYTES, GR_FILE_STDIN, &file, err) == 0)
    rc = gr_rig_parse(file.from_stdin ? "standard input" : shown, file.data, file.len, t, err);
out:
  gr_file_free(&file);
  return rc;
}

int gr_rig_replace_gpus(struct gr_topo *t, const char *model, struct gr_err *err)
{
  const struct gr_gpu_model *m = gr_catalog_find(model);
  if (!m)
    return gr_fail(err, GR_EXIT_FAIL, "unknown GPU model \"%s\" (models are listed in data/gpus.tsv)", model);
  for (size_t g = 0; g < t->ngpus; g++) {
    struct gr_pci *p = &t->pci[t->gpus[g]];
    free(p->model);
    p->model = xstrdup(m->model);
    p->link.max_gen = m->pcie_gen;
    int eg = p->link.port_max_gen && p->link.port_max_gen < m->pcie_gen ? p->link.port_max_gen : m->pcie_gen;
    p->link.cur_gen = eg;
    p->p2p = m->p2p == GR_P2P_YES ? 1 : m->p2p == GR_P2P_NO ? 0 : -1;
  }
  if (m->links == 0) {
    t->nnvlinks = 0;
    gr_topo_free_fabrics(t);
  }
  return 0;
}

int gr_rig_generic(const char *model, int n, struct gr_topo *t, struct gr_err *err)
{
  const struct gr_gpu_model *g = model ? gr_catalog_find(model) : NULL;
  gr_topo_init(t);
  if (!g)
    return gr_fail(err, GR_EXIT_FAIL, "--gpu %s: not in the GPU catalog (data/gpus.tsv)", model ? model : "(none)");
  if (n < 1 || n > 64)
    return gr_fail(err, GR_EXIT_FAIL, "%d GPUs: a generic board holds 1 to 64", n);
  size_t cap = 512 + 96 * (size_t)n, off = 0;
  char *text = xmalloc(cap);
  off += (size_t)snprintf(text + off, cap - off,
                          "rig \"%d x %s on a generic board\"\nsource \"gpurig plan --gpu: one x16 Gen%d root port "
                          "per GPU, one socket\"\ncpu cpu0 \"generic\" vendor amd\n",
                          n, g->model, g->pcie_gen);
  for (int i = 0; i < n; i++)
    off += (size_t)snprintf(text + off, cap - off, "rootcomplex rc%d cpu0 gen%d\ngpu 1 \"%s\" rc%d\n", i, g->pcie_gen,
                            g->model, i);
  int rc = gr_rig_parse("(--gpu)", text, off, t, err);
  free(text);
  return rc;
}
