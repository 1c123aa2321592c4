/* The rig parser's value words and device-line options (load/rig_internal.h):
 * the small value parsers every statement uses, and what each kind of device
 * line (switch, gpu, nic, nvme) takes after its fixed words, refusing the
 * rest with the line and column. Grammar: docs/rig-format.md. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "facts/pcilink.h"
#include "load/rig_internal.h"

bool is_name(const char *s)
{
  if (!isalpha((unsigned char)*s))
    return false;
  for (; *s; s++)
    if (!isalnum((unsigned char)*s) && *s != '_' && *s != '-')
      return false;
  return true;
}

int want_count(struct parser *p, const struct token *t, long lo, long hi, long *out)
{
  if (t->quoted || !parse_long(t->text, 10, out) || *out < lo || *out > hi)
    return perr(p, t->col, "expected a whole number from %ld to %ld, got \"%s\"", lo, hi, t->text);
  return 0;
}

int want_gen(struct parser *p, const struct token *t, int *gen)
{
  long g;
  if (t->quoted || strncasecmp(t->text, "gen", 3) != 0 || !parse_long(t->text + 3, 10, &g) || !gr_pcie_gen((int)g))
    return perr(p, t->col, "expected a PCIe generation gen1 .. gen6, got \"%s\"", t->text);
  *gen = (int)g;
  return 0;
}

int want_width(struct parser *p, const struct token *t, int *width)
{
  long w;
  if (t->quoted || (t->text[0] != 'x' && t->text[0] != 'X') || !parse_long(t->text + 1, 10, &w))
    return perr(p, t->col, "expected a link width x1, x2, x4, x8 or x16, got \"%s\"", t->text);
  if (w != 1 && w != 2 && w != 4 && w != 8 && w != 16)
    return perr(p, t->col, "width %s: a PCIe link is x1, x2, x4, x8 or x16", t->text);
  *width = (int)w;
  return 0;
}

int want_onoff(struct parser *p, const struct token *t, int *v)
{
  if (!t->quoted && (strcmp(t->text, "on") == 0 || strcmp(t->text, "yes") == 0))
    *v = 1;
  else if (!t->quoted && (strcmp(t->text, "off") == 0 || strcmp(t->text, "no") == 0))
    *v = 0;
  else
    return perr(p, t->col, "expected on or off, got \"%s\"", t->text);
  return 0;
}

int want_number(struct parser *p, const struct token *t, double *v)
{
  char *end;
  errno = 0;
  *v = strtod(t->text, &end);
  if (t->quoted || end == t->text || *end || errno || !(*v >= 0) || *v > 1e12)
    return perr(p, t->col, "expected a number, got \"%s\"", t->text);
  return 0;
}

/* `slot GEN WIDTH`, `riser GEN WIDTH`, `uplink GEN WIDTH` at token i. */
static int link_pair_option(struct parser *p, struct elem *e, int i)
{
  const char *k = p->tok[i].text;
  if (strcmp(k, "riser") == 0)
    e->gpow.riser = true; /* the slot's power then comes through the riser (riser-power) */
  int *g = strcmp(k, "uplink") == 0 ? &e->gen : &e->slot_gen;
  int *w = strcmp(k, "uplink") == 0 ? &e->width : &e->slot_width;
  if (i + 2 >= p->ntok)
    return perr(p, p->tok[i].col + (int)strlen(k), "expected a generation and width after '%s' (e.g. %s gen3 x8)", k,
                k);
  if (want_gen(p, &p->tok[i + 1], g) != 0 || want_width(p, &p->tok[i + 2], w) != 0)
    return -1;
  return 0;
}

/* `rdma on|off`, or `rdma NAME`: RDMA-capable, with the verbs device the
 * machine gives function 0 (mlx5_3), which numbers the NIC as nvidia-smi
 * does; function k takes the name's number plus k, so the name must end in a
 * number (checked once the line's `ports` is known, in stmt_nic). */
static int nic_rdma_option(struct parser *p, struct elem *e, const struct token *v)
{
  if (!v->quoted && (strcmp(v->text, "on") == 0 || strcmp(v->text, "off") == 0))
    return want_onoff(p, v, &e->rdma);
  if (v->quoted || !is_name(v->text))
    return perr(p, v->col, "expected on, off or an RDMA device name (mlx5_0), got \"%s\"", v->text);
  free(e->rdma_name);
  e->rdma_name = xstrdup(v->text);
  e->rdma_col = v->col;
  e->rdma = 1;
  return 0;
}

/* The options only some kinds take (p2p, rdma, speed, ports); returns the
 * tokens used, 0 if k is not one of them, -1 after an error. The caller has
 * checked that e's kind takes k. */
static int kind_option(struct parser *p, struct elem *e, int i)
{
  const char *k = p->tok[i].text;
  bool valued = strcmp(k, "p2p") == 0 || strcmp(k, "rdma") == 0 || strcmp(k, "speed") == 0 ||
                strcmp(k, "ports") == 0 || strcmp(k, "functions") == 0;
  long v;
  if (!valued)
    return 0;
  if (i + 1 >= p->ntok)
    return perr(p, p->tok[i].col + (int)strlen(k), "expected a value after '%s'", k);
  const struct token *val = &p->tok[i + 1];
  if (k[0] == 'p' && k[1] == '2')
    return want_onoff(p, val, &e->p2p) != 0 ? -1 : 2;
  if (k[0] == 'r')
    return nic_rdma_option(p, e, val) != 0 ? -1 : 2;
  if (k[0] == 's') {
    if (want_count(p, val, 1, 3200, &v) != 0)
      return -1;
    e->port_gbit = (double)v;
    return 2;
  }
  if (want_count(p, val, 1, RIG_MAX_FUNCTIONS, &v) != 0)
    return -1;
  e->functions = (int)v;
  return 2;
}

/* The options each kind of device line takes, as its error message lists
 * them; anything else on the line is refused, naming it (a `gpu ... lanes 16`
 * or `nvme ... uplink` would otherwise mean nothing without a word). */
static const char *kind_options(enum kind k)
{
  switch (k) {
  case K_SWITCH: return "genN, xN, slot, riser, uplink, model, lanes, direct";
  case K_GPU: return "genN, xN, slot, riser, p2p, direct, power, riser-power, limit";
  case K_NIC: return "genN, xN, slot, riser, rdma, ports, functions, speed, storage, model, direct";
  case K_NVME: return "genN, xN, slot, riser, direct";
  default: return "";
  }
}

/* The option word t stands for ("genN", "xN" or itself), if kind k takes it. */
static bool kind_takes(enum kind k, const struct token *t)
{
  const char *w = t->text;
  if (t->quoted)
    return false;
  if (strncasecmp(w, "gen", 3) == 0)
    w = "genN";
  else if ((w[0] == 'x' || w[0] == 'X') && isdigit((unsigned char)w[1]))
    w = "xN";
  size_t n = strlen(w);
  for (const char *s = kind_options(k); *s;) {
    size_t len = strcspn(s, ",");
    if (len == n && strncmp(s, w, n) == 0)
      return true;
    s += len;
    s += strspn(s, ", ");
  }
  return false;
}

static const char *kind_noun(enum kind k)
{
  return k == K_SWITCH ? "switch" : k == K_GPU ? "gpu" : k == K_NIC ? "nic" : k == K_NVME ? "nvme" : "device";
}

/* One option that is not kind-specific at token i: link words, slot/riser/
 * uplink, model, lanes, storage, direct. Returns the tokens used. */
static int common_option(struct parser *p, struct elem *e, int i)
{
  const struct token *t = &p->tok[i];
  const char *k = t->text;
  long v;
  if (strncasecmp(k, "gen", 3) == 0)
    return want_gen(p, t, &e->gen) != 0 ? -1 : 1;
  if (k[0] == 'x' || k[0] == 'X')
    return want_width(p, t, &e->width) != 0 ? -1 : 1;
  if (strcmp(k, "slot") == 0 || strcmp(k, "riser") == 0 || strcmp(k, "uplink") == 0)
    return link_pair_option(p, e, i) != 0 ? -1 : 3;
  if (strcmp(k, "model") == 0 || strcmp(k, "lanes") == 0) {
    if (i + 1 >= p->ntok)
      return perr(p, t->col + (int)strlen(k), "expected a value after '%s'", k);
    if (k[0] == 'm') {
      free(e->model);
      e->model = xstrdup(p->tok[i + 1].text);
    } else if (want_count(p, &p->tok[i + 1], 1, 256, &v) != 0) {
      return -1;
    } else {
      e->lanes = (int)v;
    }
    return 2;
  }
  if (strcmp(k, "storage") == 0) {
    e->storage = true;
  } else {
    e->direct = true;
    e->direct_col = t->col;
  }
  return 1;
}

/* Options after the fixed words: `key value` pairs and link words. */
int device_options(struct parser *p, struct elem *e, int from)
{
  for (int i = from; i < p->ntok; i++) {
    const struct token *t = &p->tok[i];
    if (!kind_takes(e->kind, t))
      return perr(p, t->col, "unexpected \"%s\" (a %s line takes %s)", t->text, kind_noun(e->kind),
                  kind_options(e->kind));
    int used = e->kind == K_GPU ? gpu_power_option(p, e, i) : 0;
    if (used == 0)
      used = kind_option(p, e, i);
    if (used == 0)
      used = common_option(p, e, i);
    if (used < 0)
      return -1;
    i += used - 1;
  }
  return 0;
}

/* A CPU list as sysfs writes one (local_cpulist): ascending numbers and
 * ranges, "0-23,48-71". */
int want_cpulist(struct parser *p, const struct token *t)
{
  const char *s = t->text;
  long last = -1;
  while (!t->quoted && isdigit((unsigned char)*s)) {
    char *end;
    long lo = strtol(s, &end, 10), hi = lo;
    if (*end == '-' && isdigit((unsigned char)end[1]))
      hi = strtol(end + 1, &end, 10);
    if (lo <= last || hi < lo || hi > 65535)
      break;
    last = hi;
    s = end;
    if (*s == '\0')
      return 0;
    if (*s != ',')
      break;
    s++;
  }
  return perr(p, t->col, "expected a CPU list of ascending numbers and ranges (0-23,48-71), got \"%s\"", t->text);
}

