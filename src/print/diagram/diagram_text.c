/* The block diagram as a few lines of text for the one-screen report:
 *
 *   CPU0 Xeon Gold 6148 ┬─ RC 0000:17 ── PEX9797 x16 up (5.0:1) ── GPU0-4 Gen3 x16, NIC0
 *                       └─ RC 0000:3a ── PEX9797 x16 up (5.0:1) ── GPU5-9 Gen3 x16
 *     ║ UPI · 10 GB/s (NCCL)
 *   CPU1 Xeon Gold 6148 ── no GPUs, NICs or NVMe
 *   P2P hives: GPU0-4 (PCIe switch) | GPU5-9 (PCIe switch)
 *
 * One line per root complex; where they do not fit in the lines left, like
 * root complexes of a socket fold into "+3 more like this", and what is
 * still too much into "+N more root complexes". Every line is cut to the
 * width. */
#include <stdlib.h>
#include <string.h>

#include "print/diagram/diagram.h"
#include "print/diagram/diagram_internal.h"
#include "print/text.h"
#include "base/util.h"

enum { MAX_LINES = 10, MODEL_COLS = 24 };

/* What one root complex line says, and its shape without the numbers that
 * differ between like root complexes (bus, GPU and NIC indices). */
struct rc_line {
  int cpu;         /* model node of its socket */
  char *text;      /* from "RC" on */
  char *compact;   /* the same with less detail, for a narrow screen */
  char *shape;
  int *gpus, *nics;
  size_t ngpus, nnics;
};

struct text_ctx {
  const struct dg_model *d;
  struct rc_line *rc;
  size_t nrc;
};

/* A link label's short form: "Gen3 x16", "31.5 GB/s", "?". */
static char *link_short(const struct dg_node *n)
{
  if (!n->nedge || strcmp(n->edge[0], "link rate unknown") == 0 || strcmp(n->edge[0], "on the root bus") == 0)
    return xstrdup("");
  const char *dot = strstr(n->edge[0], " · ");
  return str_starts_with(n->edge[0], "Gen") && dot ? xstrndup(n->edge[0], (size_t)(dot - n->edge[0]))
                                                  : xstrdup(n->edge[0]);
}

/* Endpoints below node i, summed by kind: GPUs by their link, NICs, NVMe
 * drives, NVSwitches. */
struct below {
  int *gpus, *nics;
  size_t ngpus, nnics, other_nics, nvme, nvswitch;
  char *gpu_link;   /* the first GPU's link; "" once they differ */
  int switches[8];  /* switches per level below the root complex */
  const struct dg_node *top_switch;
};

static void gather(const struct dg_model *d, size_t i, int level, struct below *b)
{
  for (size_t k = i + 1; k < d->n; k++) {
    const struct dg_node *n = &d->nodes[k];
    if (n->parent != (int)i)
      continue;
    if (n->kind == DG_SWITCH) {
      if (level < 8)
        b->switches[level]++;
      if (!b->top_switch)
        b->top_switch = n;
      gather(d, k, level + 1, b);
    } else if (n->kind == DG_GPU) {
      b->gpus[b->ngpus++] = n->gpu;
      char *l = link_short(n);
      if (!b->gpu_link)
        b->gpu_link = l;
      else {
        if (strcmp(b->gpu_link, l) != 0)
          b->gpu_link[0] = '\0';
        free(l);
      }
    } else if (n->kind == DG_NIC) {
      for (size_t m = 0; m < n->nmembers; m++) {
        int idx = d->m->topo.pci[n->members[m]].nic_index;
        if (idx >= 0)
          b->nics[b->nnics++] = idx;
        else
          b->other_nics++;
      }
    } else {
      *(n->kind == DG_NVME ? &b->nvme : &b->nvswitch) += n->nmembers;
    }
  }
}

static void sort_ints(int *v, size_t n)
{
  for (size_t i = 1; i < n; i++)
    for (size_t j = i; j > 0 && v[j - 1] > v[j]; j--) {
      int x = v[j];
      v[j] = v[j - 1];
      v[j - 1] = x;
    }
}

/* "GPU0-3 Gen3 x16, NIC0-1, 4 NICs, 2 NVMe, 6 NVSwitch" into buf;
 * compact: without the GPUs' link. */
static void devices_text(const struct below *b, bool compact, char *buf, size_t cap)
{
  char list[160];
  size_t off = 0;
  buf[0] = '\0';
  const char *link = b->gpu_link && !compact ? b->gpu_link : "";
  if (b->ngpus)
    off += (size_t)snprintf(buf + off, cap - off, "%s%s%s", gr_index_ranges("GPU", b->gpus, b->ngpus, list, sizeof(list)),
                            link[0] ? " " : "", link);
  if (b->nnics && off < cap)
    off += (size_t)snprintf(buf + off, cap - off, "%s%s", off ? ", " : "", gr_index_ranges("NIC", b->nics, b->nnics, list, sizeof(list)));
  if (b->other_nics && off < cap)
    off += (size_t)snprintf(buf + off, cap - off, "%s%zu NIC%s", off ? ", " : "", b->other_nics, b->other_nics == 1 ? "" : "s");
  if (b->nvme && off < cap)
    off += (size_t)snprintf(buf + off, cap - off, "%s%zu NVMe", off ? ", " : "", b->nvme);
  if (b->nvswitch && off < cap)
    snprintf(buf + off, cap - off, "%s%zu NVSwitch", off ? ", " : "", b->nvswitch);
}

/* "PEX9797 x16 up (5.0:1)", then "2 switches" per further level; compact:
 * the name alone. */
static void switches_text(const struct below *b, bool compact, char *buf, size_t cap)
{
  size_t off = 0;
  buf[0] = '\0';
  if (!b->top_switch)
    return;
  const struct dg_node *s = b->top_switch;
  if (b->switches[0] > 1)
    off += (size_t)snprintf(buf, cap, "%d× ", b->switches[0]);
  off += (size_t)snprintf(buf + off, cap - off, "%s", s->nlines ? s->line[0] : "switch");
  if (compact)
    return;
  if (s->up_width > 0 && off < cap)
    off += (size_t)snprintf(buf + off, cap - off, " x%d up", s->up_width);
  if (s->oversub > 1.0 + 1e-9 && off < cap)
    off += (size_t)snprintf(buf + off, cap - off, " (%.1f:1)", s->oversub);
  for (int l = 1; l < 8 && b->switches[l] && off < cap; l++)
    off += (size_t)snprintf(buf + off, cap - off, " ── %d switch%s", b->switches[l], b->switches[l] == 1 ? "" : "es");
}

static void add_rc(struct text_ctx *c, size_t rc)
{
  const struct dg_model *d = c->d;
  const struct dg_node *n = &d->nodes[rc];
  struct below b = {.gpus = xcalloc(d->n + 1, sizeof(int)), .nics = xcalloc(d->m->topo.npci + 1, sizeof(int))};
  gather(d, rc, 0, &b);
  sort_ints(b.gpus, b.ngpus);
  sort_ints(b.nics, b.nnics);
  char sw[160], dev[320];
  struct rc_line *l = &c->rc[c->nrc++];
  for (int compact = 1; compact >= 0; compact--) {
    switches_text(&b, compact, sw, sizeof(sw));
    devices_text(&b, compact, dev, sizeof(dev));
    *(compact ? &l->compact : &l->text) =
        xasprintf("%s%s%s ── %s", n->line[0], sw[0] ? " ── " : "", sw, dev[0] ? dev : "other devices");
  }
  l->cpu = n->parent;
  l->shape = xasprintf("%s|%zu %s|%zu|%zu|%zu|%zu", sw, b.ngpus, b.gpu_link ? b.gpu_link : "", b.nnics, b.other_nics,
                       b.nvme, b.nvswitch);
  l->gpus = b.gpus;
  l->ngpus = b.ngpus;
  l->nics = b.nics;
  l->nnics = b.nnics;
  free(b.gpu_link);
}

static void emit(FILE *out, const char *line, int width, int *lines)
{
  char *cut = dg_cut(line, width > 8 ? (size_t)width : 8);
  fprintf(out, "%s\n", cut);
  free(cut);
  (*lines)++;
}

/* ": GPU4-15", the GPUs of root complex lines from .. to-1 that take
 * marks; "" when they have none. */
static const char *gpus_of(const struct text_ctx *c, const bool *take, size_t from, size_t to, char *buf, size_t cap)
{
  size_t n = 0;
  for (size_t r = from; r < to; r++)
    n += take[r] ? c->rc[r].ngpus : 0;
  int *g = xcalloc(n + 1, sizeof(int));
  n = 0;
  for (size_t r = from; r < to; r++)
    for (size_t q = 0; take[r] && q < c->rc[r].ngpus; q++)
      g[n++] = c->rc[r].gpus[q];
  sort_ints(g, n);
  char list[200];
  snprintf(buf, cap, "%s%s", n ? ": " : "", gr_index_ranges("GPU", g, n, list, sizeof(list)));
  free(g);
  return buf;
}

/* The lines under one CPU: its root complexes, like ones folded when
 * fold is set, at most budget lines. */
static void print_socket(FILE *out, const struct text_ctx *c, size_t cpu, bool fold, int budget, int width, int *lines)
{
  const struct dg_model *d = c->d;
  char head[64], pad[64], list[224], more[320];
  /* the CPU's model gets what the widest of its lines leaves, up to MODEL_COLS */
  size_t widest = 0;
  for (size_t r = 0; r < c->nrc; r++)
    if (c->rc[r].cpu == (int)cpu && dg_cols(c->rc[r].text) > widest)
      widest = dg_cols(c->rc[r].text);
  long room = (long)width - (long)widest - (long)dg_cols(d->nodes[cpu].line[0]) - 5;
  room = room > MODEL_COLS ? MODEL_COLS : room;
  char *model = d->nodes[cpu].nlines > 1 && room >= 8 && !d->nodes[cpu].unplaced ? dg_cut(d->nodes[cpu].line[1], (size_t)room) : xstrdup("");
  snprintf(head, sizeof(head), "%s%s%s", d->nodes[cpu].line[0], model[0] ? " " : "", model);
  free(model);
  size_t hw = dg_cols(head);
  memset(pad, ' ', hw < sizeof(pad) ? hw : sizeof(pad) - 1);
  pad[hw < sizeof(pad) ? hw : sizeof(pad) - 1] = '\0';
  /* the lines to print: index of the first RC of each run, and the run's length */
  size_t *first = xcalloc(c->nrc + 1, sizeof(size_t)), *run = xcalloc(c->nrc + 1, sizeof(size_t)), nl = 0;
  for (size_t r = 0; r < c->nrc; r++) {
    if (c->rc[r].cpu != (int)cpu)
      continue;
    if (fold && nl && strcmp(c->rc[first[nl - 1]].shape, c->rc[r].shape) == 0 && c->rc[r - 1].cpu == (int)cpu) {
      run[nl - 1]++;
      continue;
    }
    first[nl] = r;
    run[nl++] = 1;
  }
  if (nl == 0)
    fprintf(out, "%s ── no GPUs, NICs or NVMe\n", head), (*lines)++;
  /* rows the runs need; past the budget the last row counts the rest */
  size_t need = 0, total = 0;
  for (size_t k = 0; k < nl; k++) {
    need += 1 + (run[k] > 1);
    total += run[k];
  }
  bool cut = need > (size_t)(budget > 0 ? budget : 0);
  int limit = cut ? budget - 1 : budget, rows = 0;
  bool *told = xcalloc(c->nrc + 1, sizeof(bool));
  size_t shown = 0;
  for (size_t k = 0; k < nl && rows < limit; k++) {
    bool folded = fold && run[k] > 1 && rows + 1 < limit, last = !cut && k + 1 == nl;
    const char *joint = nl == 1 && run[k] == 1 && !cut ? " ── " : k == 0 ? " ┬─ " : last && !folded ? " └─ " : " ├─ ";
    char *line = xasprintf("%s%s%s", k == 0 ? head : pad, joint, c->rc[first[k]].text);
    if (dg_cols(line) > (size_t)width) {
      free(line);
      line = xasprintf("%s%s%s", k == 0 ? head : pad, joint, c->rc[first[k]].compact);
    }
    emit(out, line, width, lines);
    free(line);
    rows++;
    told[first[k]] = true;
    shown++;
    if (!folded)
      continue;
    for (size_t r = first[k] + 1; r < first[k] + run[k]; r++)
      told[r] = true;
    snprintf(more, sizeof(more), "%s%s+%zu more like this%s", pad, last ? " └─ " : " ├─ ", run[k] - 1,
             gpus_of(c, told, first[k] + 1, first[k] + run[k], list, sizeof(list)));
    emit(out, more, width, lines);
    rows++;
    shown += run[k] - 1;
  }
  if (shown < total) {
    for (size_t r = 0; r < c->nrc; r++)
      told[r] = c->rc[r].cpu == (int)cpu && !told[r];
    snprintf(more, sizeof(more), "%s └─ +%zu more root complex%s%s", rows ? pad : head, total - shown,
             total - shown == 1 ? "" : "es", gpus_of(c, told, 0, c->nrc, list, sizeof(list)));
    emit(out, more, width, lines);
  }
  free(told);
  free(first);
  free(run);
}

/* Lines the sockets need with a line per root complex. */
static int socket_rows(const struct text_ctx *c)
{
  int rows = 0;
  for (size_t i = 0; i < c->d->n; i++) {
    if (c->d->nodes[i].kind != DG_CPU)
      continue;
    int n = 0;
    for (size_t r = 0; r < c->nrc; r++)
      n += c->rc[r].cpu == (int)i;
    rows += n ? n : 1;
  }
  return rows;
}

/* NVLinks without an NVSwitch: their GPUs and labels ("GPU0-3: 6 links
 * NV2 · 50 GB/s"). */
static void nvlink_line(FILE *out, const struct dg_model *d, int width, int *lines)
{
  if (!d->nlinks)
    return;
  int *g = xcalloc(d->n + 1, sizeof(int));
  size_t ng = 0;
  bool same = true;
  for (size_t k = 0; k < d->nlinks; k++) {
    same &= strcmp(d->links[k].label, d->links[0].label) == 0;
    for (int e = 0; e < 2; e++) {
      int gpu = d->nodes[e ? d->links[k].b : d->links[k].a].gpu;
      bool have = false;
      for (size_t q = 0; q < ng; q++)
        have |= g[q] == gpu;
      if (!have)
        g[ng++] = gpu;
    }
  }
  sort_ints(g, ng);
  char list[200];
  char *line = xasprintf("%s: %s, %zu pair%s%s%s", d->links[0].xgmi ? "xGMI" : "NVLink", gr_index_ranges("GPU", g, ng, list, sizeof(list)), d->nlinks,
                         d->nlinks == 1 ? "" : "s", same ? ", " : "", same ? d->links[0].label : "");
  emit(out, line, width, lines);
  free(line);
  free(g);
}

static void hives_line(FILE *out, const struct dg_model *d, int width, int *lines)
{
  const struct gr_analysis *a = &d->m->analysis;
  if (!a->ngpus)
    return;
  char *buf = NULL, list[200];
  size_t len = 0, shaded = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f)
    return;
  int *lone = xcalloc(a->ngpus + 1, sizeof(int));
  size_t nlone = 0;
  for (size_t h = 0; h < a->nhives; h++) {
    size_t n = 0;
    for (size_t g = 0; g < a->ngpus; g++)
      n += a->hive[g] == (int)h;
    if (n == 1)
      for (size_t g = 0; g < a->ngpus; g++)
        if (a->hive[g] == (int)h)
          lone[nlone++] = (int)g;
    if (n < 2)
      continue;
    fprintf(f, "%s%s (%s)", shaded++ ? " | " : "", dg_hive_gpus(d, (int)h, list, sizeof(list)), dg_hive_kind(d, (int)h));
  }
  sort_ints(lone, nlone);
  if (nlone && shaded)
    fprintf(f, "; alone: %s", gr_index_ranges("GPU", lone, nlone, list, sizeof(list)));
  else if (nlone)
    fprintf(f, "none (%s reach each other through the CPU)", gr_index_ranges("GPU", lone, nlone, list, sizeof(list)));
  fclose(f);
  char *line = xasprintf("P2P hive%s: %s", shaded == 1 ? "" : "s", buf);
  emit(out, line, width, lines);
  free(line);
  free(buf);
  free(lone);
}

void gr_diagram_text(FILE *out, const struct gr_machine *m, int width)
{
  struct dg_model d;
  dg_model_build(m, &d);
  struct text_ctx c = {.d = &d, .rc = xcalloc(d.n + 1, sizeof(struct rc_line))};
  size_t ncpu = 0;
  for (size_t i = 0; i < d.n; i++) {
    ncpu += d.nodes[i].kind == DG_CPU;
    if (d.nodes[i].kind == DG_RC)
      add_rc(&c, i);
  }
  int fixed = (ncpu > 1 ? (int)ncpu - 1 : 0) + (d.nlinks ? 1 : 0) + (int)(d.nfabrics < 2 ? d.nfabrics : 2) +
              (m->analysis.ngpus ? 1 : 0);
  int budget = MAX_LINES - fixed, lines = 0;
  bool fold = socket_rows(&c) > budget;
  int per_socket = ncpu ? (budget > (int)ncpu ? budget / (int)ncpu : 1) : budget;
  size_t seen = 0;
  for (size_t i = 0; i < d.n; i++) {
    if (d.nodes[i].kind != DG_CPU)
      continue;
    if (seen++ && d.socket_label && !d.nodes[i].unplaced) {
      char *line = xasprintf("  ║ %s", d.socket_label);
      emit(out, line, width, &lines);
      free(line);
    }
    print_socket(out, &c, i, fold, fold ? per_socket : budget, width, &lines);
  }
  nvlink_line(out, &d, width, &lines);
  for (size_t f = 0; f < d.nfabrics && f < 2; f++)
    emit(out, d.fabrics[f].text, width, &lines);
  hives_line(out, &d, width, &lines);
  for (size_t r = 0; r < c.nrc; r++) {
    free(c.rc[r].text);
    free(c.rc[r].compact);
    free(c.rc[r].shape);
    free(c.rc[r].gpus);
    free(c.rc[r].nics);
  }
  free(c.rc);
  dg_model_free(&d);
}
