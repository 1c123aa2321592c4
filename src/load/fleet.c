/* A fleet's doctor documents read into nodes and facts (load/fleet.h). */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "base/file.h"
#include "load/fleet.h"

/* A doctor document is a few hundred kB even on a large machine. */
#define FLEET_DOC_MAX (16u << 20)
/* Devices a node may list: more is not a machine but a hostile input. */
#define FLEET_MAX_DEVICES 4096

static void add_fact(struct gr_fleet_node *n, const char *where, const char *what, const char *value, const char *shown)
{
  n->facts = xrealloc(n->facts, (n->nfacts + 1) * sizeof(*n->facts));
  n->facts[n->nfacts++] = (struct gr_fleet_fact){xstrdup(where), xstrdup(what), xstrdup(value),
                                                 shown ? xstrdup(shown) : NULL};
}

static int problem(struct gr_fleet_node *n, const char *name, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int problem(struct gr_fleet_node *n, const char *name, const char *fmt, ...)
{
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  free(n->problem);
  n->problem = xasprintf("%s: %s", name, buf);
  return -1;
}

/* A string member, "" when absent or null; NULL when it is something else. */
static const char *str_or_empty(const json_t *o, const char *key)
{
  const json_t *v = json_object_get(o, key);
  return !v || json_is_null(v) ? "" : json_is_string(v) ? json_string_value(v) : NULL;
}

/* "Gen4 x16" from a link object; "unknown" where either figure is. */
static const char *link_text(const json_t *link, char *buf, size_t cap)
{
  const json_t *g = json_object_get(link, "gen"), *w = json_object_get(link, "width");
  if (json_is_integer(g) && json_is_integer(w))
    snprintf(buf, cap, "Gen%lld x%lld", (long long)json_integer_value(g), (long long)json_integer_value(w));
  else
    snprintf(buf, cap, "unknown");
  return buf;
}

/* A count fact ("12"), "unknown" where the member is absent or null (an
 * older report, or a counter nobody could read: unknown is not 0). 0, or -1
 * when it is something else. */
static int count_fact(struct gr_fleet_node *n, const char *where, const char *what, const json_t *v,
                      const char *shown)
{
  char text[32];
  if (v && !json_is_null(v) && (!json_is_integer(v) || json_integer_value(v) < 0))
    return -1;
  snprintf(text, sizeof(text), "%lld", json_is_integer(v) ? (long long)json_integer_value(v) : 0LL);
  add_fact(n, where, what, json_is_integer(v) ? text : "unknown", shown);
  return 0;
}

/* A GPU's error counts: its path's AER counters and its Xid events. */
static int gpu_error_facts(struct gr_fleet_node *n, const char *name, size_t i, const json_t *d, const char *bus,
                           const char *shown)
{
  static const char *const aer[][2] = {{"correctable", "GPU AER correctable"},
                                       {"nonfatal", "GPU AER nonfatal"},
                                       {"fatal", "GPU AER fatal"}};
  const json_t *a = json_object_get(d, "aer");
  if (a && !json_is_null(a) && !json_is_object(a))
    return problem(n, name, "inventory: GPU %zu: aer is not an object", i);
  for (size_t k = 0; k < sizeof(aer) / sizeof(aer[0]); k++)
    if (count_fact(n, bus, aer[k][1], json_object_get(a, aer[k][0]), shown) != 0)
      return problem(n, name, "inventory: GPU %zu: aer.%s is not a count", i, aer[k][0]);
  if (count_fact(n, bus, "GPU Xids", json_object_get(d, "xids"), shown) != 0)
    return problem(n, name, "inventory: GPU %zu: xids is not a count", i);
  return 0;
}

/* One GPU or NIC: its model, link (and NUMA node, or RDMA device), keyed by
 * its PCI address. */
static int device_facts(struct gr_fleet_node *n, const char *name, const char *kind, size_t i, const json_t *d)
{
  const char *bus = str_or_empty(d, "pci_bus_id"), *model = str_or_empty(d, "model");
  const json_t *link = json_object_get(d, "link"), *idx = json_object_get(d, "index");
  if (!json_is_object(d) || !bus || !*bus || !model || !json_is_object(link) || !json_is_integer(idx))
    return problem(n, name, "inventory: %s %zu has no pci_bus_id, model, index or link", kind, i);
  char shown[96], what[32], text[48];
  snprintf(shown, sizeof(shown), "%s%lld %s", kind, (long long)json_integer_value(idx), bus);
  snprintf(what, sizeof(what), "%s model", kind);
  add_fact(n, bus, what, *model ? model : "unknown", shown);
  snprintf(what, sizeof(what), "%s link", kind);
  add_fact(n, bus, what, link_text(link, text, sizeof(text)), shown);
  const json_t *numa = json_object_get(d, "numa");
  snprintf(text, sizeof(text), "%lld", json_is_integer(numa) ? (long long)json_integer_value(numa) : -1LL);
  snprintf(what, sizeof(what), "%s NUMA node", kind);
  add_fact(n, bus, what, json_is_integer(numa) ? text : "unknown", shown);
  const char *rdma = str_or_empty(d, "rdma_name");
  if (strcmp(kind, "NIC") == 0 && rdma)
    add_fact(n, bus, "NIC RDMA device", *rdma ? rdma : "none", shown);
  return strcmp(kind, "GPU") == 0 ? gpu_error_facts(n, name, i, d, bus, shown) : 0;
}

static int devices(struct gr_fleet_node *n, const char *name, const json_t *inv, const char *key, const char *kind)
{
  const json_t *a = json_object_get(inv, key);
  char count[32], what[16];
  if (!json_is_array(a) || json_array_size(a) > FLEET_MAX_DEVICES)
    return problem(n, name, "inventory.%s: not a list of at most %d devices", key, FLEET_MAX_DEVICES);
  for (size_t i = 0; i < json_array_size(a); i++)
    if (device_facts(n, name, kind, i, json_array_get(a, i)) != 0)
      return -1;
  snprintf(count, sizeof(count), "%zu", json_array_size(a));
  snprintf(what, sizeof(what), "%ss", kind);
  add_fact(n, "", what, count, NULL);
  if (strcmp(kind, "GPU") == 0)
    n->ngpus = json_array_size(a);
  return 0;
}

/* "2.21.5"; "none" where the library is absent; "unknown" where nobody
 * asked (a description, an older report) or it gave no version. */
static int lib_fact(struct gr_fleet_node *n, const char *name, const json_t *inv, const char *key, const char *what)
{
  const json_t *o = json_object_get(inv, key), *present = json_object_get(o, "present");
  const char *version = str_or_empty(o, "version");
  if (o && !json_is_null(o) && (!json_is_object(o) || !version || (present && !json_is_null(present) && !json_is_boolean(present))))
    return problem(n, name, "inventory.%s: not {present, version}", key);
  add_fact(n, "", what, json_is_false(present) ? "none" : json_is_true(present) && version && *version ? version : "unknown",
           NULL);
  return 0;
}

/* HIP and RCCL as lib_fact, but only where the report knows them: doctor
 * asks them only on a machine with AMD GPUs, and a fleet of NVIDIA nodes
 * would otherwise carry two columns of "unknown". Unknown is no value to
 * differ by either way. */
static int amd_lib_fact(struct gr_fleet_node *n, const char *name, const json_t *inv, const char *key,
                        const char *what)
{
  const json_t *o = json_object_get(inv, key);
  if (!o || json_is_null(o) || (json_is_object(o) && json_is_null(json_object_get(o, "present"))))
    return 0; /* not asked: no fact */
  return lib_fact(n, name, inv, key, what);
}

/* The node's software and PCIe settings: CUDA, NCCL, HIP, RCCL, IOMMU
 * mode, ACS. */
static int settings(struct gr_fleet_node *n, const char *name, const json_t *inv)
{
  const char *iommu = str_or_empty(inv, "iommu");
  const json_t *acs = json_object_get(inv, "acs_redirecting");
  char text[48];
  if (lib_fact(n, name, inv, "cuda", "CUDA") != 0 || lib_fact(n, name, inv, "nccl", "NCCL") != 0 ||
      amd_lib_fact(n, name, inv, "hip", "HIP") != 0 || amd_lib_fact(n, name, inv, "rccl", "RCCL") != 0)
    return -1;
  if (!iommu || (acs && !json_is_null(acs) && (!json_is_integer(acs) || json_integer_value(acs) < 0)))
    return problem(n, name, "inventory: iommu is not text or acs_redirecting not a count");
  add_fact(n, "", "IOMMU", *iommu ? iommu : "unknown", NULL);
  long long k = json_is_integer(acs) ? (long long)json_integer_value(acs) : -1;
  snprintf(text, sizeof(text), "on at %lld bridge%s", k, k == 1 ? "" : "s");
  add_fact(n, "", "ACS redirect", k < 0 ? "unknown" : k == 0 ? "off" : text, NULL);
  return 0;
}

static int inventory(struct gr_fleet_node *n, const char *name, const json_t *inv)
{
  const char *driver = str_or_empty(inv, "driver_version");
  const json_t *sockets = json_object_get(inv, "sockets"), *numa = json_object_get(inv, "numa_nodes");
  if (!driver || !json_is_integer(sockets) || !json_is_integer(numa))
    return problem(n, name, "inventory: driver_version, sockets or numa_nodes missing or of the wrong type");
  char text[32];
  add_fact(n, "", "driver", *driver ? driver : "none", NULL);
  snprintf(text, sizeof(text), "%lld", (long long)json_integer_value(sockets));
  add_fact(n, "", "sockets", text, NULL);
  snprintf(text, sizeof(text), "%lld", (long long)json_integer_value(numa));
  add_fact(n, "", "NUMA nodes", text, NULL);
  if (settings(n, name, inv) != 0)
    return -1;
  return devices(n, name, inv, "gpus", "GPU") != 0 || devices(n, name, inv, "nics", "NIC") != 0 ? -1 : 0;
}

static enum gr_sev sev_of(const char *s)
{
  for (int k = 0; k < GR_SEV_COUNT; k++)
    if (s && strcmp(s, gr_sev_name((enum gr_sev)k)) == 0)
      return (enum gr_sev)k;
  return GR_SEV_COUNT;
}

/* doctor's results: counted by severity, and the warnings, failures and
 * errors kept as findings of the node. */
static int results(struct gr_fleet_node *n, const char *name, const json_t *res)
{
  if (!json_is_array(res))
    return problem(n, name, "results: not a list");
  for (size_t i = 0; i < json_array_size(res); i++) {
    const json_t *r = json_array_get(res, i);
    const char *id = str_or_empty(r, "id"), *msg = str_or_empty(r, "message"), *subject = str_or_empty(r, "subject"),
               *bus = str_or_empty(r, "pci_bus_id"), *fix = str_or_empty(r, "fix");
    enum gr_sev sev = sev_of(str_or_empty(r, "severity"));
    if (!json_is_object(r) || !id || !*id || !msg || !subject || !bus || !fix || sev == GR_SEV_COUNT)
      return problem(n, name, "results[%zu]: not a doctor result (id, severity, message)", i);
    n->count[sev]++;
    if (sev != GR_SEV_WARN && sev != GR_SEV_FAIL && sev != GR_SEV_ERROR)
      continue;
    struct gr_finding *f = gr_finding_add(&n->findings, sev, id, "%s", msg);
    gr_finding_subject(f, -1, *subject ? subject : NULL, *bus ? bus : NULL);
    if (*fix)
      gr_finding_fix(f, NULL, "%s", fix);
  }
  return 0;
}

int gr_fleet_parse(const char *name, const char *text, size_t len, struct gr_fleet_node *node)
{
  json_error_t je;
  json_t *doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
  int rc = -1;
  if (!doc)
    return problem(node, name, "line %d, column %d: not JSON (%s)", je.line, je.column, je.text);
  const char *host = str_or_empty(doc, "hostname"), *error = str_or_empty(doc, "error");
  const json_t *inv = json_object_get(doc, "inventory");
  if (json_is_object(doc) && error && *error) { /* a node that could not check itself says why (fleet --mpi) */
    problem(node, name, "%s", error);
    goto out;
  }
  if (!json_is_object(doc) || !host || !json_is_object(inv)) {
    problem(node, name, "not a doctor report with an inventory (write one with gpurig doctor --json)");
    goto out;
  }
  if (*host)
    node->hostname = xstrdup(host);
  if (inventory(node, name, inv) != 0 || results(node, name, json_object_get(doc, "results")) != 0)
    goto out;
  node->answered = true;
  rc = 0;
out:
  json_decref(doc);
  return rc;
}

static void read_node(const char *path, struct gr_fleet_node *node)
{
  struct gr_file f = {0};
  struct gr_err err = {0};
  node->file = xstrdup(path);
  if (gr_file_read(path, FLEET_DOC_MAX, 0, &f, &err) != 0) {
    node->problem = xstrdup(err.msg);
    return;
  }
  gr_fleet_parse(path, f.data, f.len, node);
  gr_file_free(&f);
}

static int json_name(const struct dirent *d)
{
  size_t n = strlen(d->d_name);
  return d->d_name[0] != '.' && n > 5 && strcmp(d->d_name + n - 5, ".json") == 0;
}

static void add_node(struct gr_fleet_nodes *out, const char *path)
{
  out->v = xrealloc(out->v, (out->n + 1) * sizeof(*out->v));
  memset(&out->v[out->n], 0, sizeof(out->v[0]));
  read_node(path, &out->v[out->n++]);
}

static int add_path(struct gr_fleet_nodes *out, const char *path, struct gr_err *err)
{
  struct stat st;
  if (stat(path, &st) != 0)
    return gr_fail(err, GR_EXIT_FAIL, "%s: %s", path, strerror(errno));
  if (!S_ISDIR(st.st_mode)) {
    add_node(out, path);
    return 0;
  }
  struct dirent **names = NULL;
  int k = scandir(path, &names, json_name, alphasort);
  if (k < 0)
    return gr_fail(err, GR_EXIT_FAIL, "%s: %s", path, strerror(errno));
  for (int i = 0; i < k; i++) {
    char *p = xasprintf("%s/%s", path, names[i]->d_name);
    add_node(out, p);
    free(p);
    free(names[i]);
  }
  free(names);
  return k ? 0 : gr_fail(err, GR_EXIT_FAIL, "%s: no *.json file in it", path);
}

/* The node's name: its hostname where that is unique in the fleet, else the
 * file's base name without .json (gathered fixtures all say "fixture"). A
 * name given already is kept. */
void gr_fleet_name_nodes(struct gr_fleet_nodes *f)
{
  for (size_t i = 0; i < f->n; i++) {
    struct gr_fleet_node *a = &f->v[i];
    if (a->name)
      continue;
    bool unique = a->hostname != NULL;
    for (size_t j = 0; j < f->n && unique; j++)
      unique = j == i || !f->v[j].hostname || strcmp(f->v[j].hostname, a->hostname) != 0;
    if (unique) {
      a->name = xstrdup(a->hostname);
      continue;
    }
    const char *base = strrchr(a->file, '/') ? strrchr(a->file, '/') + 1 : a->file;
    size_t n = strlen(base);
    a->name = xstrndup(base, n > 5 && strcmp(base + n - 5, ".json") == 0 ? n - 5 : n);
  }
}

int gr_fleet_read(char *const *paths, size_t npaths, struct gr_fleet_nodes *out, struct gr_err *err)
{
  memset(out, 0, sizeof(*out));
  for (size_t i = 0; i < npaths; i++)
    if (add_path(out, paths[i], err) != 0) {
      gr_fleet_nodes_free(out);
      return -1;
    }
  if (!out->n)
    return gr_fail(err, GR_EXIT_FAIL, "fleet: no node given (files or directories of gpurig doctor --json)");
  gr_fleet_name_nodes(out);
  return 0;
}

void gr_fleet_node_free(struct gr_fleet_node *n)
{
  for (size_t i = 0; i < n->nfacts; i++) {
    free(n->facts[i].where);
    free(n->facts[i].what);
    free(n->facts[i].value);
    free(n->facts[i].shown);
  }
  free(n->facts);
  free(n->name);
  free(n->file);
  free(n->hostname);
  free(n->problem);
  gr_findings_free(&n->findings);
  memset(n, 0, sizeof(*n));
}

void gr_fleet_nodes_free(struct gr_fleet_nodes *f)
{
  for (size_t i = 0; i < f->n; i++)
    gr_fleet_node_free(&f->v[i]);
  free(f->v);
  memset(f, 0, sizeof(*f));
}
