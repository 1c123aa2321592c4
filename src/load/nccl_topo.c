/* NCCL topology files -> the topology model (model/topo.h).
 *
 * The format is what NCCL reads from NCCL_TOPO_FILE and writes to
 * NCCL_TOPO_DUMP_FILE (NVIDIA/nccl src/graph/xml.cc reads and writes it,
 * src/graph/topo.cc gives it meaning): <system version="1"> holds one <cpu>
 * per NUMA node; a <cpu> holds <pci> elements, and <nic> elements for
 * network devices without a PCI path; a <pci> holding <pci> elements is a
 * PCIe switch (NCCL records a switch's upstream port only, and no root
 * ports); a <pci> holding a <gpu> is a GPU, one holding a <nic> a NIC; a
 * <gpu> holds <nvlink> and <c2c> elements, a <nic> one <net> per port.
 * What gpurig makes of each is in docs/topology.md ("NCCL topology files").
 *
 * The file is read by a small reader of just this XML subset (below: one
 * linear pass, no recursion, with the depth, the element count, the
 * children of one element and the attribute length bounded) into a flat
 * list of elements, parents before children; each is classified as NCCL
 * would read it, and the model is built from that list. Every error is one
 * line, "FILE:LINE:COL: problem". */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/file.h"
#include "facts/pcilink.h"
#include "load/loaders.h"
#include "load/nccl_topo_internal.h"

/* ---- the document, classified ---- */

/* NCCL topology files to the reader. */
static const struct gr_xml_format nccl_format = {
    .what = "an NCCL topology file",
    .root = "system",
    .root_hint = "<system version=\"1\">",
    .max_depth = NT_MAX_DEPTH,
    .max_elems = NT_MAX_ELEMS,
    .max_children = NT_MAX_CHILDREN,
    .max_attrs = NT_MAX_ATTRS,
    .max_value = NT_MAX_VALUE,
    .max_name = NT_MAX_NAME,
    .elems_note = " (NCCL reads at most 256 per machine)",
    .depth_note = " (a real file has under 10)",
    .limit_note = " (NCCL's limit)",
};

static void doc_free(struct doc *d)
{
  gr_xml_free(&d->x);
  free(d->el);
  memset(d, 0, sizeof(*d));
}

/* What an element is, from its name and its parent's kind (-1 for the root);
 * a known element where NCCL does not look for it is ignored, as NCCL
 * ignores it (xml.cc reads each element only inside the ones listed here). */
static enum el_kind classify(const char *s, size_t n, int parent, bool *misplaced)
{
  static const struct {
    const char *name;
    enum el_kind kind;
    unsigned parents; /* bit k: a child of kind k; bit 31: the root */
  } rules[] = {
      {"system", EL_SYSTEM, 1u << 31},
      {"cpu", EL_CPU, 1u << EL_SYSTEM},
      {"pci", EL_PCI, 1u << EL_CPU | 1u << EL_PCI},
      {"nic", EL_NIC, 1u << EL_CPU | 1u << EL_PCI},
      {"gpu", EL_GPU, 1u << EL_PCI},
      {"net", EL_NET, 1u << EL_NIC},
      {"nvlink", EL_NVLINK, 1u << EL_GPU},
      {"c2c", EL_C2C, 1u << EL_GPU},
  };
  *misplaced = false;
  if (parent == EL_OTHER) /* inside an ignored element: ignored too */
    return EL_OTHER;
  unsigned bit = parent < 0 ? 1u << 31 : 1u << parent;
  for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++)
    if (gr_xml_name_is(s, n, rules[i].name)) {
      if (rules[i].parents & bit)
        return rules[i].kind;
      *misplaced = true;
      return EL_OTHER;
    }
  return EL_OTHER;
}

/* Each element the reader found, in order (parents first), classified. */
static void classify_doc(struct doc *d)
{
  d->nel = d->x.nel;
  d->el = xcalloc(d->nel + 1, sizeof(*d->el));
  for (size_t i = 0; i < d->nel; i++) {
    const struct gr_xml_elem *x = &d->x.el[i];
    int parent = x->parent;
    bool misplaced;
    enum el_kind kind = classify(x->name, x->nlen, parent < 0 ? -1 : (int)d->el[parent].kind, &misplaced);
    d->el[i] = (struct elem){.kind = kind, .name = x->name, .nlen = x->nlen, .line = x->line, .col = x->col,
                             .parent = parent, .attr0 = x->attr0, .nattrs = x->nattrs, .first_gpu = -1, .cpu = -1,
                             .node = -1, .hb = -1};
    if (misplaced && d->misplaced++ == 0)
      d->first_misplaced = (int)i;
    if (parent >= 0) {
      struct elem *p = &d->el[parent];
      p->npci += kind == EL_PCI;
      p->nnic += kind == EL_NIC;
      p->ngpu += kind == EL_GPU;
      if (kind == EL_GPU && p->first_gpu < 0)
        p->first_gpu = (int)i;
    }
  }
}

static int read_doc(const char *name, const char *buf, size_t len, struct doc *d, struct gr_err *err)
{
  if (gr_xml_read(name, buf, len, &nccl_format, &d->x, err) != 0)
    return -1;
  classify_doc(d);
  return 0;
}

/* ---- attributes ---- */

const struct gr_xml_attr *attr_of(const struct doc *d, const struct elem *e, const char *key)
{
  for (unsigned i = 0; i < e->nattrs; i++) {
    const struct gr_xml_attr *a = &d->x.at[e->attr0 + i];
    if (gr_xml_name_is(a->key, a->klen, key))
      return a;
  }
  return NULL;
}

/* The value as a C string in buf (values are at most NT_MAX_VALUE bytes). */
const char *value_str(const struct gr_xml_attr *a, char buf[NT_MAX_VALUE + 1])
{
  memcpy(buf, a->val, a->vlen);
  buf[a->vlen] = '\0';
  return buf;
}

int fail_attr(struct build *b, const struct gr_xml_attr *a, const char *fmt, ...)
{
  char msg[400];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  return gr_fail_place(b->err, b->name, a->line, a->col, "%.*s=\"%.*s\": %s", (int)a->klen, a->key, (int)a->vlen, a->val,
                 msg);
}

int fail_elem(struct build *b, const struct elem *e, const char *fmt, ...)
{
  char msg[400];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  return gr_fail_place(b->err, b->name, e->line, e->col, "<%.*s>: %s", (int)e->nlen, e->name, msg);
}

/* A problem gpurig can read past: a loader warning, the first few one by
 * one and the rest counted (a hostile file could hold thousands). */
void warn_at(struct build *b, unsigned line, unsigned col, const char *fmt, ...)
{
  char msg[400];
  if (b->nwarn++ >= NT_MAX_WARNINGS)
    return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  gr_topo_add_warning(b->t, "%s:%u:%u: %s", b->name, line, col, msg);
}

/* An integer attribute (decimal, or 0x hex as NCCL's strtol(.., 0) takes
 * it) in [lo, hi]: 0 with *out, 1 when absent (*out untouched), -1 error. */
int int_attr(struct build *b, const struct elem *e, const char *key, long lo, long hi, long *out)
{
  char buf[NT_MAX_VALUE + 1];
  long v;
  const struct gr_xml_attr *a = attr_of(b->d, e, key);
  if (!a)
    return 1;
  if (!parse_long(value_str(a, buf), 0, &v) || v < lo || v > hi)
    return fail_attr(b, a, "expected a whole number from %ld to %ld", lo, hi);
  *out = v;
  return 0;
}

/* A hex attribute ("0x10de") up to max: as int_attr. */
static int hex_attr(struct build *b, const struct elem *e, const char *key, unsigned long max, unsigned *out)
{
  char buf[NT_MAX_VALUE + 1];
  unsigned long v;
  const struct gr_xml_attr *a = attr_of(b->d, e, key);
  if (!a)
    return 1;
  if (!parse_ulong(value_str(a, buf), 16, &v) || v > max)
    return fail_attr(b, a, "expected a hex number up to 0x%lx", max);
  *out = (unsigned)v;
  return 0;
}

int required_int(struct build *b, const struct elem *e, const char *key, long lo, long hi, long *out)
{
  int rc = int_attr(b, e, key, lo, hi, out);
  if (rc == 1)
    return fail_elem(b, e, "no %s attribute (NCCL requires it)", key);
  return rc;
}

uint64_t busid_key(unsigned domain, unsigned bus, unsigned dev, unsigned func)
{
  return (uint64_t)domain << 16 | bus << 8 | dev << 3 | func;
}

/* A made-up bus id for a node the file implies but does not name (the ports
 * NCCL leaves out, a NIC without a PCI path): domain ffffffff, which no PCI
 * segment uses, numbered in order. */
static void synth_busid(struct build *b, struct gr_pci *p)
{
  unsigned n = b->synth++;
  p->domain = 0xffffffffu;
  p->bus = p->sec_bus = p->sub_bus = (n >> 8) & 0xff;
  p->dev = (n >> 3) & 0x1f;
  p->func = n & 7;
}

/* A node under parent (-1: a host bridge), local to cpu c. */
static int add_node(struct build *b, enum gr_role role, int parent, const struct cpu_info *c)
{
  int i = gr_topo_add_pci(b->t);
  struct gr_pci *p = &b->t->pci[i];
  p->role = role;
  p->parent = parent;
  p->numa = c->numa;
  p->package = c->package;
  p->cpulist = xstrdup(c->cpulist);
  return i;
}

/* "000000ff,ffff0000,00ffffff" (32-bit words, most significant first, as
 * Linux prints cpumasks) -> "0-23,48-71" in out; false if malformed. An
 * empty mask gives "". */
static bool affinity_list(const char *s, char *out, size_t cap)
{
  uint32_t words[NT_MAX_VALUE / 2 + 1];
  size_t nw = 0, o = 0;
  out[0] = '\0';
  for (const char *p = s;;) {
    size_t n = strspn(p, "0123456789abcdefABCDEF");
    if (n == 0 || n > 8 || (p[n] != ',' && p[n] != '\0'))
      return false;
    words[nw++] = (uint32_t)strtoul(p, NULL, 16);
    if (!p[n])
      break;
    p += n + 1;
  }
  long first = -1;
  size_t nbits = nw * 32;
  for (size_t bit = 0; bit <= nbits; bit++) {
    bool on = bit < nbits && (words[nw - 1 - bit / 32] >> (bit % 32) & 1);
    if (on && first < 0)
      first = (long)bit;
    if (on || first < 0)
      continue;
    int w = first == (long)bit - 1 ? snprintf(out + o, cap - o, "%s%ld", o ? "," : "", first)
                                   : snprintf(out + o, cap - o, "%s%ld-%zu", o ? "," : "", first, bit - 1);
    if (w < 0 || (size_t)w >= cap - o)
      return false;
    o += (size_t)w;
    first = -1;
  }
  return true;
}

static int cpu_numa(struct build *b, const struct elem *e, long *numa)
{
  if (required_int(b, e, "numaid", -1, 65535, numa) != 0)
    return -1;
  for (size_t i = 0; i < b->ncpus; i++)
    if (b->cpus[i].numa == *numa)
      return fail_elem(b, e, "numaid %ld given twice (first at line %u): one <cpu> per NUMA node of one machine",
                       *numa, b->cpus[i].line);
  return 0;
}

static int cpu_affinity(struct build *b, const struct elem *e, struct cpu_info *c)
{
  char buf[NT_MAX_VALUE + 1], list[12288]; /* 128 words of alternate bits: 2048 numbers */
  const struct gr_xml_attr *a = attr_of(b->d, e, "affinity");
  if (!a)
    return 0;
  if (!affinity_list(value_str(a, buf), list, sizeof(list)))
    return fail_attr(b, a, "expected a CPU mask of comma-separated hex words (\"0000ffff,ffff0000\")");
  c->cpulist = list[0] ? xstrdup(list) : NULL;
  return 0;
}

/* A <cpu>: a package and its NUMA node. */
static int build_cpu(struct build *b, struct elem *e)
{
  char buf[NT_MAX_VALUE + 1];
  long numa, family = -1, model = -1;
  if (b->ncpus == NT_MAX_CPUS)
    return fail_elem(b, e, "more than %d <cpu> elements", NT_MAX_CPUS);
  if (cpu_numa(b, e, &numa) != 0 || int_attr(b, e, "familyid", 0, 65535, &family) < 0 ||
      int_attr(b, e, "modelid", 0, 65535, &model) < 0)
    return -1;
  struct gr_topo *t = b->t;
  struct cpu_info *c = &b->cpus[b->ncpus];
  *c = (struct cpu_info){.numa = (int)numa, .package = (int)t->npackages, .vnic = -1, .line = e->line};
  b->ncpus++; /* counted now: its cpulist is freed with the others */
  if (cpu_affinity(b, e, c) != 0)
    return -1;
  struct gr_package *g = &t->packages[t->npackages++];
  const struct gr_xml_attr *vendor = attr_of(b->d, e, "vendor");
  *g = (struct gr_package){.os_index = c->package, .rc_p2p = -1, .cpu_family = (int)family,
                           .cpu_model_number = (int)model};
  g->cpu_vendor = vendor ? xstrdup(value_str(vendor, buf)) : NULL;
  if (numa >= 0)
    t->numas[t->nnumas++] = (struct gr_numa){.os_index = (int)numa, .package = c->package};
  e->cpu = (int)(c - b->cpus);
  return 0;
}

/* What a <pci> element's attributes say. */
struct pci_attrs {
  unsigned domain, bus, dev, func;
  bool has_class;
  unsigned class_id, vendor, device, subvendor, subdevice;
  int gen, width;
};

static int pci_busid(struct build *b, const struct elem *e, struct pci_attrs *pa)
{
  char buf[NT_MAX_VALUE + 1];
  const struct gr_xml_attr *a = attr_of(b->d, e, "busid");
  if (!a)
    return fail_elem(b, e, "no busid attribute (NCCL requires it)");
  if (!gr_parse_busid(value_str(a, buf), &pa->domain, &pa->bus, &pa->dev, &pa->func))
    return fail_attr(b, a, "expected a PCI bus id such as 0000:17:00.0");
  return 0;
}

/* 0xffff is PCI's "no device" value (and NCCL's mark of a made-up switch). */
static unsigned real_id(unsigned id)
{
  return id == 0xffff ? 0 : id;
}

/* The class: 6 hex digits, or fewer as a prefix, the way NCCL compares
 * classes (topo.cc kvDictPciClass) and writes one it had to guess ("0x03"
 * for a GPU whose /sys it could not read): "0x03" is 0x030000. */
static int class_attr(struct build *b, const struct elem *e, unsigned *class_id)
{
  char buf[NT_MAX_VALUE + 1];
  const struct gr_xml_attr *a = attr_of(b->d, e, "class");
  if (!a)
    return 1;
  const char *hex = value_str(a, buf);
  hex += hex[0] == '0' && (hex[1] == 'x' || hex[1] == 'X') ? 2 : 0;
  size_t n = strspn(hex, "0123456789abcdefABCDEF");
  if (n == 0 || n > 6 || n % 2 || hex[n])
    return fail_attr(b, a, "expected a PCI class such as 0x030200");
  *class_id = (unsigned)strtoul(hex, NULL, 16) << (4 * (6 - n));
  return 0;
}

static int pci_ids(struct build *b, const struct elem *e, struct pci_attrs *pa)
{
  int rc = class_attr(b, e, &pa->class_id);
  if (rc < 0 || hex_attr(b, e, "vendor", 0xffff, &pa->vendor) < 0 ||
      hex_attr(b, e, "device", 0xffff, &pa->device) < 0 || hex_attr(b, e, "subsystem_vendor", 0xffff, &pa->subvendor) < 0 ||
      hex_attr(b, e, "subsystem_device", 0xffff, &pa->subdevice) < 0)
    return -1;
  pa->has_class = rc == 0;
  pa->vendor = real_id(pa->vendor);
  pa->device = real_id(pa->device);
  pa->subvendor = real_id(pa->subvendor);
  pa->subdevice = real_id(pa->subdevice);
  return 0;
}

/* link_speed ("8 GT/s", "16.0 GT/s PCIe") and link_width: NCCL records the
 * lower of the device's and its port's maxima (or what NVML reports for a
 * GPU). Empty values are NCCL's "unknown"; other text is read past with a
 * warning, as NCCL reads it as Gen3. */
static void pci_link(struct build *b, const struct elem *e, struct pci_attrs *pa)
{
  char buf[NT_MAX_VALUE + 1];
  const struct gr_xml_attr *speed = attr_of(b->d, e, "link_speed"), *width = attr_of(b->d, e, "link_width");
  if (speed && speed->vlen && gr_pcie_parse_speed(value_str(speed, buf), &pa->gen) != GR_SPEED_OK) {
    pa->gen = 0;
    warn_at(b, speed->line, speed->col, "link_speed \"%s\" is not a PCIe rate gpurig knows: the link's generation is "
            "left unknown", buf);
  }
  if (width && width->vlen && !gr_pcie_parse_width(value_str(width, buf), &pa->width)) {
    pa->width = 0;
    warn_at(b, width->line, width->col, "link_width \"%s\" is not a PCIe width (1 to 32): left unknown", buf);
  }
}

/* A <pci> holding a <gpu> is a GPU, one holding a <nic> a NIC, whatever its
 * class says (NCCL, topo.cc ncclTopoAddPci): a class of the same base (0x03,
 * 0x02) that gpurig would not count, such as the "0x03" NCCL writes for a
 * GPU whose /sys it could not read, or a missing one, becomes want_class; a
 * class of another base too, with a warning. */
static void claim_kind(struct build *b, const struct elem *e, struct pci_attrs *pa, enum gr_kind want,
                       unsigned want_class)
{
  if (pa->has_class && gr_kind_from_ids(pa->class_id, pa->vendor, pa->device) == want)
    return;
  if (pa->has_class && pa->class_id >> 16 != want_class >> 16)
    warn_at(b, e->line, e->col, "a <pci> of class 0x%06x holds a <%s>: counted as a %s, as NCCL counts it",
            pa->class_id, want == GR_KIND_GPU ? "gpu" : "nic", want == GR_KIND_GPU ? "GPU" : "NIC");
  pa->class_id = want_class;
  pa->has_class = true;
}

static void fill_pci(struct gr_pci *p, const struct pci_attrs *pa)
{
  p->domain = pa->domain;
  p->bus = pa->bus;
  p->dev = pa->dev;
  p->func = pa->func;
  p->class_id = pa->class_id;
  p->vendor = pa->vendor;
  p->device = pa->device;
  p->subvendor = pa->subvendor;
  p->subdevice = pa->subdevice;
  /* one figure per link, already the lower of both ends */
  p->link = (struct gr_link){.cur_gen = pa->gen, .cur_width = pa->width, .max_gen = pa->gen,
                             .max_width = pa->width, .port_max_gen = pa->gen, .port_max_width = pa->width};
}

static bool is_virtual(const struct pci_attrs *pa)
{
  return pa->domain == 0xffff && pa->bus == 0xff; /* NCCL's made-up switches: ffff:ff:xx.x */
}

/* The host bridge's bus range: the real bus ids below it. */
static void widen_host_bridge(struct build *b, struct elem *top, const struct pci_attrs *pa)
{
  struct gr_pci *hb = &b->t->pci[top->hb];
  if (is_virtual(pa) || (top->hb_real && hb->domain != pa->domain))
    return;
  if (!top->hb_real) {
    hb->domain = pa->domain;
    hb->bus = hb->sec_bus = hb->sub_bus = pa->bus;
    top->hb_real = true;
    return;
  }
  hb->sec_bus = pa->bus < hb->sec_bus ? pa->bus : hb->sec_bus;
  hb->sub_bus = pa->bus > hb->sub_bus ? pa->bus : hb->sub_bus;
  hb->bus = hb->sec_bus;
}

/* The port a <pci> hangs from: a new host bridge and root port for one
 * directly under a <cpu> (NCCL reaches each through the CPU), a downstream
 * port of the switch above otherwise. */
static int port_for(struct build *b, struct elem *e, const struct cpu_info *c, const struct pci_attrs *pa)
{
  struct elem *par = &b->d->el[e->parent];
  int parent_node = par->node;
  if (par->kind == EL_CPU) {
    parent_node = add_node(b, GR_ROLE_HOSTBRIDGE, -1, c);
    struct gr_pci *hb = &b->t->pci[parent_node];
    hb->domain = pa->domain;
    hb->bus = hb->sec_bus = hb->sub_bus = pa->bus;
    e->hb = parent_node;
  } else {
    e->hb = par->hb;
  }
  int port = add_node(b, GR_ROLE_BRIDGE, parent_node, c);
  struct gr_pci *p = &b->t->pci[port];
  synth_busid(b, p);
  p->class_id = 0x060400;
  p->link.max_gen = pa->gen;
  p->link.max_width = pa->width;
  return port;
}

/* The <pci> element at the top of e's chain (under the <cpu>). */
static struct elem *top_pci(struct build *b, struct elem *e)
{
  while (b->d->el[e->parent].kind == EL_PCI)
    e = &b->d->el[e->parent];
  return e;
}

static int build_pci(struct build *b, struct elem *e)
{
  struct pci_attrs pa = {0};
  const struct elem *par = &b->d->el[e->parent];
  e->cpu = par->cpu;
  const struct cpu_info *c = &b->cpus[e->cpu];
  if (pci_busid(b, e, &pa) != 0 || pci_ids(b, e, &pa) != 0)
    return -1;
  pci_link(b, e, &pa);
  bool bridge = e->npci > 0 || (!e->ngpu && !e->nnic && pa.has_class && pa.class_id >> 8 == 0x0604);
  if (bridge && (e->ngpu || e->nnic))
    warn_at(b, e->line, e->col, "a <pci> holding other <pci> elements is a switch: its <gpu>/<nic> is ignored");
  else if (e->ngpu)
    claim_kind(b, e, &pa, GR_KIND_GPU, 0x030200);
  else if (e->nnic)
    claim_kind(b, e, &pa, GR_KIND_NIC, 0x020000);
  int port = port_for(b, e, c, &pa);
  int n = add_node(b, bridge ? GR_ROLE_BRIDGE : GR_ROLE_ENDPOINT, port, c);
  struct gr_pci *p = &b->t->pci[n];
  fill_pci(p, &pa);
  /* a NIC NCCL is given is one it uses for its network transport: counted
   * among the machine's RDMA NICs (the file does not say more) */
  p->rdma = !bridge && gr_kind_from_ids(pa.class_id, pa.vendor, pa.device) == GR_KIND_NIC;
  e->node = n;
  widen_host_bridge(b, top_pci(b, e), &pa);
  return 0;
}

/* A <nic> directly under a <cpu>: a network device NCCL found without a PCI
 * path. NCCL joins all of a CPU's into one NIC node; so does gpurig, on a
 * host bridge of its own with a made-up bus id. */
static int build_cpu_nic(struct build *b, struct elem *e)
{
  const struct elem *par = &b->d->el[e->parent];
  struct cpu_info *c = &b->cpus[par->cpu];
  e->cpu = par->cpu;
  if (c->vnic < 0) {
    int hb = add_node(b, GR_ROLE_HOSTBRIDGE, -1, c);
    c->vnic = add_node(b, GR_ROLE_ENDPOINT, hb, c);
    struct gr_pci *n = &b->t->pci[c->vnic];
    synth_busid(b, n);
    n->class_id = 0x020000;
    n->rdma = true;
    struct gr_pci *h = &b->t->pci[hb];
    h->domain = n->domain;
    h->bus = h->sec_bus = h->sub_bus = n->bus;
  }
  e->node = c->vnic;
  return 0;
}

/* A <net>: its name is the NIC's device name as NCCL's network transport
 * calls it: the verbs device (mlx5_0) for InfiniBand and RoCE, the plugin's
 * name otherwise. The first is the NIC's RDMA name (nvidia-smi's legend, as
 * NCCL_IB_HCA names it); all are its OS device names. */
static void build_net(struct build *b, const struct elem *e)
{
  char buf[NT_MAX_VALUE + 1];
  const struct elem *nic = &b->d->el[e->parent];
  const struct gr_xml_attr *a = attr_of(b->d, e, "name");
  if (nic->node < 0 || !a || !a->vlen)
    return;
  struct gr_pci *p = &b->t->pci[nic->node];
  size_t words = 0;
  for (const char *s = p->osdevs; s && *s; s++)
    words += *s == ' ';
  if (p->osdevs && words + 1 >= NT_MAX_NET_NAMES) {
    if (words + 1 == NT_MAX_NET_NAMES)
      warn_at(b, e->line, e->col, "more than %d <net> names for one NIC: the rest are left out", NT_MAX_NET_NAMES);
    return;
  }
  if (!p->rdma_name)
    p->rdma_name = xstrdup(value_str(a, buf));
  char *joined = p->osdevs ? xasprintf("%s %s", p->osdevs, value_str(a, buf)) : xstrdup(value_str(a, buf));
  free(p->osdevs);
  p->osdevs = joined;
}

static int build_system(struct build *b, const struct elem *e)
{
  char buf[NT_MAX_VALUE + 1];
  long version = 0; /* set by required_int; gcc -O3 cannot see that (-Wmaybe-uninitialized) */
  if (required_int(b, e, "version", 0, 1000000, &version) != 0)
    return -1;
  if (version != 1)
    return fail_attr(b, attr_of(b->d, e, "version"),
                     "gpurig reads version 1, the format NCCL reads and writes (RCCL writes 2)");
  const struct gr_xml_attr *name = attr_of(b->d, e, "name");
  if (name && name->vlen)
    b->t->product = xstrdup(value_str(name, buf)); /* NCCL logs it as the topology's name */
  return 0;
}

/* Nodes, packages and NUMA nodes, in document order (parents first). */
static int build_tree(struct build *b)
{
  struct doc *d = b->d;
  size_t ncpu = 0;
  for (size_t i = 0; i < d->nel; i++)
    ncpu += d->el[i].kind == EL_CPU;
  b->cpus = xcalloc(ncpu + 1, sizeof(*b->cpus));
  b->t->packages = xcalloc(ncpu + 1, sizeof(*b->t->packages));
  b->t->numas = xcalloc(ncpu + 1, sizeof(*b->t->numas));
  if (build_system(b, &d->el[0]) != 0)
    return -1;
  for (size_t i = 0; i < d->nel; i++) {
    struct elem *e = &d->el[i];
    int rc = 0;
    if (e->kind == EL_CPU)
      rc = build_cpu(b, e);
    else if (e->kind == EL_PCI)
      rc = build_pci(b, e);
    else if (e->kind == EL_NIC && d->el[e->parent].kind == EL_CPU)
      rc = build_cpu_nic(b, e);
    else if (e->kind == EL_NIC) /* a switch's or a GPU's <nic> is ignored */
      e->node = d->el[e->parent].npci || d->el[e->parent].ngpu ? -1 : d->el[e->parent].node;
    else if (e->kind == EL_NET)
      build_net(b, e);
    if (rc != 0)
      return -1;
  }
  return 0;
}

static int cmp_busid_ent(const void *x, const void *y)
{
  const struct busid_ent *a = x, *c = y;
  if (a->key != c->key)
    return a->key < c->key ? -1 : 1;
  return a->elem < c->elem ? -1 : a->elem > c->elem;
}

static uint64_t pci_key(const struct gr_pci *p)
{
  return busid_key(p->domain, p->bus, p->dev, p->func);
}

/* Sorts the <pci> elements by bus id for the NVLink targets, refusing a bus
 * id given twice (NCCL would make two devices of it). */
static int index_busids(struct build *b)
{
  struct doc *d = b->d;
  b->ids = xcalloc(d->nel + 1, sizeof(*b->ids));
  for (size_t i = 0; i < d->nel; i++)
    if (d->el[i].kind == EL_PCI)
      b->ids[b->nids++] = (struct busid_ent){pci_key(&b->t->pci[d->el[i].node]), (int)i};
  qsort(b->ids, b->nids, sizeof(*b->ids), cmp_busid_ent);
  for (size_t i = 1; i < b->nids; i++)
    if (b->ids[i].key == b->ids[i - 1].key) {
      const struct elem *first = &d->el[b->ids[i - 1].elem], *again = &d->el[b->ids[i].elem];
      const struct gr_xml_attr *a = attr_of(d, again, "busid");
      return fail_attr(b, a, "bus id given twice (first at line %u, column %u)", first->line, first->col);
    }
  return 0;
}

/* The node of the <pci> with this bus id, -1 if none. */
int node_by_busid(const struct build *b, uint64_t key)
{
  size_t lo = 0, hi = b->nids;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (b->ids[mid].key < key)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < b->nids && b->ids[lo].key == key ? b->d->el[b->ids[lo].elem].node : -1;
}

static void finish_warnings(struct build *b)
{
  const struct doc *d = b->d;
  if (d->misplaced) {
    const struct elem *e = &d->el[d->first_misplaced];
    const struct elem *p = &d->el[e->parent];
    gr_topo_add_warning(b->t, "%s:%u:%u: <%.*s> inside <%.*s> is not where NCCL reads it: ignored%s", b->name, e->line,
                        e->col, (int)e->nlen, e->name, (int)p->nlen, p->name,
                        d->misplaced > 1 ? " (and more elements like it)" : "");
  }
  if (b->nwarn > NT_MAX_WARNINGS)
    gr_topo_add_warning(b->t, "%s: %zu more problems like those above", b->name, b->nwarn - NT_MAX_WARNINGS);
}

static void unknown_devices_warning(struct build *b)
{
  size_t unknown = 0;
  for (size_t i = 0; i < b->d->nel; i++) {
    const struct elem *e = &b->d->el[i];
    unknown += e->kind == EL_PCI && !e->npci && !e->ngpu && !e->nnic && !attr_of(b->d, e, "class");
  }
  if (unknown)
    gr_topo_add_warning(b->t, "%s: %zu <pci> element%s no class (NCCL reads it from the machine's /sys when it "
                        "loads the file): gpurig cannot tell what %s", b->name, unknown,
                        unknown == 1 ? " carries" : "s carry", unknown == 1 ? "it is" : "they are");
}

static void free_build(struct build *b)
{
  for (size_t i = 0; i < b->ncpus; i++)
    free(b->cpus[i].cpulist);
  free(b->cpus);
  free(b->ids);
  free(b->pairs);
  free(b->nvs);
}

int gr_load_nccl_topo_buffer(const char *name, const char *buf, size_t len, struct gr_topo *t, struct gr_err *err)
{
  struct doc d = {0};
  struct build b = {.name = name, .d = &d, .t = t, .err = err, .fabric = -1};
  int rc = -1;
  gr_topo_init(t);
  t->source_kind = xstrdup("nccl");
  t->source_path = xstrdup(name);
  if (read_doc(name, buf, len, &d, err) != 0 || build_tree(&b) != 0 || index_busids(&b) != 0)
    goto out;
  /* kinds first: an NVLink's peer must be a GPU */
  gr_topo_finish(t);
  if (nt_build_links(&b) != 0)
    goto out;
  unknown_devices_warning(&b);
  finish_warnings(&b);
  rc = 0;
out:
  free_build(&b);
  doc_free(&d);
  if (rc != 0)
    gr_topo_free(t);
  return rc;
}

int gr_load_nccl_topo(const char *path, struct gr_topo *t, struct gr_err *err)
{
  struct gr_file f;
  gr_topo_init(t);
  if (gr_file_read(path, NT_MAX_BYTES, GR_FILE_STDIN, &f, err) != 0)
    return -1;
  int rc = gr_load_nccl_topo_buffer(f.from_stdin ? "standard input" : path, f.data, f.len, t, err);
  gr_file_free(&f);
  return rc;
}

bool gr_nccl_topo_sniff(const char *buf, size_t len)
{
  size_t i = len >= 3 && memcmp(buf, "\xef\xbb\xbf", 3) == 0 ? 3 : 0;
  for (;;) {
    while (i < len && gr_xml_is_space(buf[i]))
      i++;
    if (i >= len || buf[i] != '<')
      return false;
    const char *end = NULL;
    if (len - i >= 4 && memcmp(buf + i, "<!--", 4) == 0) {
      end = memmem(buf + i + 4, len - i - 4, "-->", 3);
      if (!end)
        return false;
      i = (size_t)(end - buf) + 3;
    } else if (len - i >= 2 && (buf[i + 1] == '?' || buf[i + 1] == '!')) {
      end = memchr(buf + i, '>', len - i);
      if (!end)
        return false;
      i = (size_t)(end - buf) + 1;
    } else {
      return len - i >= 7 && memcmp(buf + i, "<system", 7) == 0 &&
             (len - i == 7 || gr_xml_is_space(buf[i + 7]) || buf[i + 7] == '>' || buf[i + 7] == '/');
    }
  }
}
