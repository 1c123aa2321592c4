/* Rig files: gr_rig_parse runs the parser (load/rig_parse.c) and the builder
 * (load/rig_build.c) over a text; loading a rig by path or name, and the
 * changes made to a rig after loading. Grammar: docs/rig-format.md. */
#include "load/rig.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/file.h"
#include "base/suggest.h"
#include "facts/data.h"
#include "load/rig_internal.h"

static int finish(struct parser *p, int lines)
{
  p->line = lines;
  if (!p->have_rig)
    return perr(p, 1, "empty rig file: expected `rig \"NAME\"`");
  if (!p->ncpus)
    return perr(p, 1, "no cpu statement: a rig needs at least one CPU");
  if (!p->ngpus)
    return perr(p, 1, "no gpu statement: a rig needs at least one GPU");
  if (resolve_parents(p) != 0 || resolve_power(p) != 0)
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
    free(p->elems[i].rdma_name);
    free(p->elems[i].cpulist);
  }
  free(p->elems);
  free(p->index);
  for (size_t i = 0; i < p->nlinks; i++) {
    free(p->links[i].a);
    free(p->links[i].b);
  }
  free(p->links);
  for (size_t i = 0; i < p->nfeeds; i++)
    free(p->feeds[i].text);
  free(p->feeds);
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
    t->fabrics[f].gpulink_gen = m->link_gen;
    for (size_t i = 0; i < t->fabrics[f].nmembers; i++) {
      struct gr_fabric_member *fm = &t->fabrics[f].members[i];
      fm->links = m->links;
      fm->gbps = m->link_gbps;
      used[fm->gpu] += fm->links;
    }
  }
  for (size_t k = 0; k < t->ngpulinks; k++) {
    struct gr_gpulink *l = &t->gpulinks[k];
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
    t->ngpulinks = 0;
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
    if (gr_pci_catalog(p) != m && t->rig && g < t->rig->ngpu_power) {
      /* its connectors and limit were the old card's: the new one gets its reference layout */
      struct gr_gpu_power *gp = &t->rig->gpu_power[g];
      memset(&gp->conns, 0, sizeof(gp->conns));
      memset(&gp->from, 0, sizeof(gp->from));
      gp->cables = 0;
      gp->limit_w = 0;
    }
    gr_pci_set_model(p, m->model);
    p->link.max_gen = m->pcie_gen;
    int eg = p->link.port_max_gen && p->link.port_max_gen < m->pcie_gen ? p->link.port_max_gen : m->pcie_gen;
    p->link.cur_gen = eg;
    p->p2p = m->p2p == GR_P2P_YES ? 1 : m->p2p == GR_P2P_NO ? 0 : -1;
  }
  /* NVLink or xGMI alike: the links the rig states, at the new model's rate */
  if (!has_link_kind(m, "nvlink") && !has_link_kind(m, "xgmi")) {
    t->ngpulinks = 0;
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
