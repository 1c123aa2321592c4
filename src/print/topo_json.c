#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "facts/pcilink.h"
#include "model/names.h"
#include "print/common.h"
#include "print/groups.h"
#include "print/json_stream.h"
#include "print/topo.h"
#include "base/util.h"

static json_t *int_or_null(int v, int unknown)
{
  return v == unknown ? json_null() : json_integer(v);
}

static json_t *gbps_or_null(double v)
{
  return gr_json_positive(v, 2);
}

static json_t *gib_json(uint64_t bytes)
{
  return gr_json_rounded((double)bytes / (1024.0 * 1024.0 * 1024.0), 2);
}

static json_t *count_json(const struct gr_count *c)
{
  return c->valid ? json_integer((json_int_t)c->value) : json_null();
}

static json_t *hex_json(unsigned v, int digits)
{
  char buf[16];
  snprintf(buf, sizeof(buf), "0x%0*x", digits, v);
  return json_string(buf);
}

static const char *const link_unknown_name[] = {
    [GR_LINK_ENDS_KNOWN] = NULL, [GR_LINK_DEVICE_UNKNOWN] = "device",
    [GR_LINK_PORT_UNKNOWN] = "port", [GR_LINK_BOTH_UNKNOWN] = "both"};

/* The analysis's facts of the link above a node (gr_link_facts). */
static json_t *link_json(const struct gr_link_facts *f)
{
  if (!f->present)
    return json_null();
  json_t *o = json_object();
  char label[96];
  json_object_set_new(o, "cur_gen", int_or_null(f->cur_gen, 0));
  json_object_set_new(o, "cur_width", int_or_null(f->cur_width, 0));
  json_object_set_new(o, "max_gen", int_or_null(f->max_gen, 0));
  json_object_set_new(o, "max_width", int_or_null(f->max_width, 0));
  json_object_set_new(o, "port_max_gen", int_or_null(f->port_gen, 0));
  json_object_set_new(o, "port_max_width", int_or_null(f->port_width, 0));
  json_object_set_new(o, "can_gen", int_or_null(f->can_gen, 0));
  json_object_set_new(o, "can_width", int_or_null(f->can_width, 0));
  json_object_set_new(o, "gen", int_or_null(f->gen, 0));
  json_object_set_new(o, "width", int_or_null(f->width, 0));
  json_object_set_new(o, "bw_gbps", gbps_or_null(f->gbps));
  json_object_set_new(o, "nccl_bw_gbps", gbps_or_null(f->nccl_gbps));
  json_object_set_new(o, "width_short", json_boolean(f->width_short));
  json_object_set_new(o, "gen_short", json_boolean(f->gen_short));
  json_object_set_new(o, "slot_width", json_boolean(f->slot_width));
  json_object_set_new(o, "slot_gen", json_boolean(f->slot_gen));
  const char *unknown = link_unknown_name[f->unknown];
  json_object_set_new(o, "unknown_end", unknown ? json_string(unknown) : json_null());
  json_object_set_new(o, "label", json_string(gr_link_label(f, GR_LABEL_NOW, label, sizeof(label))));
  return o;
}

static json_t *busid_json(const struct gr_topo *t, int idx)
{
  char bus[32];
  return idx >= 0 ? json_string(gr_pci_busid(&t->pci[idx], bus, sizeof(bus))) : json_null();
}

static json_t *pci_json(const struct gr_analysis *a, int idx, struct gr_names *names)
{
  const struct gr_topo *t = a->t;
  const struct gr_pci *p = &t->pci[idx];
  json_t *o = json_object();
  json_object_set_new(o, "pci_bus_id", busid_json(t, idx));
  json_object_set_new(o, "role", json_string(gr_role_name(p->role)));
  json_object_set_new(o, "kind", json_string(gr_kind_name(p->kind)));
  json_object_set_new(o, "parent", busid_json(t, p->parent));
  if (p->role != GR_ROLE_HOSTBRIDGE) {
    json_object_set_new(o, "class", hex_json(p->class_id, 6));
    json_object_set_new(o, "vendor_id", hex_json(p->vendor, 4));
    json_object_set_new(o, "device_id", hex_json(p->device, 4));
    json_object_set_new(o, "subsystem_vendor_id", hex_json(p->subvendor, 4));
    json_object_set_new(o, "subsystem_device_id", hex_json(p->subdevice, 4));
  }
  json_object_set_new(o, "name", json_string(gr_pci_display_name(t, idx, names)));
  json_object_set_new(o, "vendor_name", gr_json_text(gr_pci_vendor_name(p, names)));
  json_object_set_new(o, "numa_node", int_or_null(p->numa, -1));
  json_object_set_new(o, "package", int_or_null(p->package, -1));
  json_object_set_new(o, "driver", gr_json_text(p->driver));
  json_object_set_new(o, "iommu_group", int_or_null(p->iommu_group, -1));
  json_object_set_new(o, "os_devices", gr_json_text(p->osdevs));
  json_object_set_new(o, "rdma_name", gr_json_text(p->rdma_name));
  json_object_set_new(o, "switch", busid_json(t, p->switch_up));
  json_object_set_new(o, "link", link_json(&a->link[idx]));
  json_t *aer = json_object();
  json_object_set_new(aer, "correctable", count_json(&p->aer.correctable));
  json_object_set_new(aer, "nonfatal", count_json(&p->aer.nonfatal));
  json_object_set_new(aer, "fatal", count_json(&p->aer.fatal));
  json_object_set_new(o, "aer", aer);
  return o;
}

static json_t *machine_json(const struct gr_topo *t, const struct gr_analysis *a)
{
  json_t *m = json_object();
  json_object_set_new(m, "product", gr_json_text(t->product));
  json_object_set_new(m, "hostname", gr_json_text(t->hostname));
  json_object_set_new(m, "link_details", json_boolean(t->link_details));
  json_object_set_new(m, "nccl_p2p_level", json_string(gr_nccl_level_str(a->nccl_p2p_level)));
  json_object_set_new(m, "inter_socket_link", gr_json_text(a->socket_link));
  json_object_set_new(m, "inter_socket_nccl_bw_gbps", gbps_or_null(a->socket_nccl_gbps));
  json_t *pk = json_array();
  for (size_t i = 0; i < t->npackages; i++) {
    json_t *o = json_object();
    json_object_set_new(o, "os_index", json_integer(t->packages[i].os_index));
    json_object_set_new(o, "cpu_vendor", gr_json_text(t->packages[i].cpu_vendor));
    json_object_set_new(o, "cpu_model", gr_json_text(t->packages[i].cpu_model));
    json_object_set_new(o, "mem_gib", t->packages[i].mem_bytes ? gib_json(t->packages[i].mem_bytes) : json_null());
    json_array_append_new(pk, o);
  }
  json_object_set_new(m, "packages", pk);
  json_t *nn = json_array();
  for (size_t i = 0; i < t->nnumas; i++) {
    json_t *o = json_object();
    json_object_set_new(o, "os_index", json_integer(t->numas[i].os_index));
    json_object_set_new(o, "package", int_or_null(t->numas[i].package, -1));
    json_object_set_new(o, "mem_gib", gib_json(t->numas[i].mem_bytes));
    json_array_append_new(nn, o);
  }
  json_object_set_new(m, "numa_nodes", nn);
  /* whose defaults NCCL's view follows, beside the level */
  char v[32];
  json_object_set_new(m, "nccl_version", json_string(gr_nccl_version_text(&a->nccl_version, v, sizeof(v))));
  json_object_set_new(m, "nccl_version_assumed", json_boolean(a->nccl_assumed));
  json_object_set_new(m, "nccl_p2p_rule_source", a->nccl_rule ? json_string(a->nccl_rule->source) : json_null());
  return m;
}

static json_t *gpus_json(const struct gr_topo *t, const struct gr_analysis *a)
{
  struct gr_names names = {0};
  json_t *arr = json_array();
  for (size_t g = 0; g < t->ngpus; g++) {
    const struct gr_pci *p = &t->pci[t->gpus[g]];
    json_t *o = json_object();
    char name[32];
    snprintf(name, sizeof(name), "GPU%zu", g);
    json_object_set_new(o, "index", json_integer((json_int_t)g));
    json_object_set_new(o, "name", json_string(name));
    json_object_set_new(o, "pci_bus_id", busid_json(t, t->gpus[g]));
    json_object_set_new(o, "model", json_string(gr_pci_display_name(t, t->gpus[g], &names)));
    json_object_set_new(o, "uuid", gr_json_text(p->uuid));
    json_object_set_new(o, "numa_node", int_or_null(p->numa, -1));
    json_object_set_new(o, "gpu_numa_id", int_or_null(p->gpu_numa, -1));
    json_object_set_new(o, "cpu_affinity", gr_json_text(p->cpulist));
    json_object_set_new(o, "hive", json_integer(a->hive[g]));
    json_object_set_new(o, "link", link_json(&a->link[t->gpus[g]]));
    json_array_append_new(arr, o);
  }
  gr_names_free(&names);
  return arr;
}

static json_t *nics_json(const struct gr_topo *t)
{
  struct gr_names names = {0};
  json_t *arr = json_array();
  for (size_t n = 0; n < t->nnics; n++) {
    const struct gr_pci *p = &t->pci[t->nics[n]];
    json_t *o = json_object();
    char name[32];
    snprintf(name, sizeof(name), "NIC%zu", n);
    json_object_set_new(o, "index", json_integer((json_int_t)n));
    json_object_set_new(o, "name", json_string(name));
    json_object_set_new(o, "pci_bus_id", busid_json(t, t->nics[n]));
    json_object_set_new(o, "model", json_string(gr_pci_display_name(t, t->nics[n], &names)));
    json_object_set_new(o, "rdma_name", gr_json_text(p->rdma_name));
    json_object_set_new(o, "os_devices", gr_json_text(p->osdevs));
    json_object_set_new(o, "numa_node", int_or_null(p->numa, -1));
    json_object_set_new(o, "cpu_affinity", gr_json_text(p->cpulist));
    json_array_append_new(arr, o);
  }
  gr_names_free(&names);
  return arr;
}

/* nvidia-smi's NIC rows: per NIC the level to each GPU, then to each NIC. */
static json_t *nic_rows(const struct gr_topo *t, const struct gr_analysis *a)
{
  char cell[16];
  json_t *rows = json_array();
  for (size_t n = 0; n < t->nnics; n++) {
    json_t *r = json_array();
    for (size_t g = 0; g < t->ngpus; g++)
      json_array_append_new(r, json_string(gr_level_str(&a->gpu_nic[g * a->nnics + n], cell, sizeof(cell))));
    for (size_t m = 0; m < t->nnics; m++) {
      struct gr_path p = gr_path_between(a, t->nics[n], t->nics[m]);
      json_array_append_new(r, json_string(n == m ? "X" : gr_level_str(&p, cell, sizeof(cell))));
    }
    json_array_append_new(rows, r);
  }
  return rows;
}

/* NVSwitch fabrics: where the facts come from, and each member GPU's links. */
static json_t *fabrics_json(const struct gr_topo *t)
{
  json_t *arr = json_array();
  for (size_t i = 0; i < t->nfabrics; i++) {
    const struct gr_fabric *f = &t->fabrics[i];
    json_t *o = json_object(), *members = json_array();
    json_object_set_new(o, "from", json_string(gr_fabric_from_name(f->from)));
    json_object_set_new(o, "inferred", json_boolean(f->from == GR_FABRIC_INFERRED));
    json_object_set_new(o, "why", gr_json_text(f->why));
    json_object_set_new(o, "nvlink_gen", int_or_null(f->gpulink_gen, 0));
    json_object_set_new(o, "nswitches", int_or_null(f->nswitches, 0));
    for (size_t m = 0; m < f->nmembers; m++) {
      const struct gr_fabric_member *x = &f->members[m];
      json_t *e = json_object();
      json_object_set_new(e, "gpu", int_or_null(t->pci[x->gpu].gpu_index, -1));
      json_object_set_new(e, "pci_bus_id", busid_json(t, x->gpu));
      json_object_set_new(e, "links", json_integer(x->links));
      json_object_set_new(e, "bw_gbps", gbps_or_null(x->gbps));
      json_array_append_new(members, e);
    }
    json_object_set_new(o, "members", members);
    json_array_append_new(arr, o);
  }
  return arr;
}

/* The GPU matrices and the pair list: O(n^2) of the document, so each cell
 * is written as it is made, with no jansson value per cell (they were most
 * of topo --json's instructions at 512 GPUs). */
enum cell_kind { CELL_LEVEL, CELL_NCCL, CELL_BW, CELL_NCCL_BW };

static void put_cell(struct gr_jw *w, const struct gr_analysis *a, size_t i, size_t j, enum cell_kind kind)
{
  char cell[16];
  struct gr_path path = gr_gpu_path(a, i, j);
  const struct gr_path *p = &path;
  switch (kind) {
  case CELL_LEVEL: gr_jw_str(w, NULL, gr_level_str(p, cell, sizeof(cell))); break;
  case CELL_NCCL: gr_jw_str(w, NULL, i == j ? "X" : gr_nccl_path_str(p)); break;
  case CELL_BW:
    if (i == j)
      gr_jw_null(w, NULL);
    else
      gr_jw_positive(w, NULL, p->bw_gbps, 2);
    break;
  case CELL_NCCL_BW:
    if (i == j)
      gr_jw_null(w, NULL);
    else
      gr_jw_positive(w, NULL, p->nccl_bw_gbps, 2);
    break;
  }
}

/* The same by GPU group (print/groups.h): a row and a column per group. */
static void put_group_matrix(struct gr_jw *w, const char *key, const struct gr_analysis *a, enum cell_kind kind)
{
  gr_jw_array(w, key);
  for (size_t r = 0; r < a->nclasses; r++) {
    gr_jw_array(w, NULL);
    for (size_t c = 0; c < a->nclasses; c++) {
      size_t i, j;
      gr_group_pair(a, r, c, &i, &j);
      put_cell(w, a, i, j, kind);
    }
    gr_jw_close(w);
  }
  gr_jw_close(w);
}

/* An n x n matrix as a member, written cell by cell. */
static void put_matrix(struct gr_jw *w, const char *key, const struct gr_analysis *a, enum cell_kind kind)
{
  if (gr_grids_grouped(a)) {
    put_group_matrix(w, key, a, kind);
    return;
  }
  gr_jw_array(w, key);
  for (size_t i = 0; i < a->ngpus; i++) {
    gr_jw_array(w, NULL);
    for (size_t j = 0; j < a->ngpus; j++)
      put_cell(w, a, i, j, kind);
    gr_jw_close(w);
  }
  gr_jw_close(w);
}

/* One GPU pair (docs/json.md gpu_pairs). */
static void put_pair(struct gr_jw *w, const struct gr_topo *t, const struct gr_path *p, size_t ga, size_t gb)
{
  char cell[16], bus[32];
  static const char *via[] = {"none", "pcie", "nvlink", "inter_socket"};
  gr_jw_object(w, NULL);
  gr_jw_int(w, "a", (long long)ga);
  gr_jw_int(w, "b", (long long)gb);
  gr_jw_str(w, "level", gr_level_str(p, cell, sizeof(cell)));
  gr_jw_str(w, "nccl_level", gr_nccl_path_str(p));
  gr_jw_bool(w, "nccl_p2p", p->nccl_p2p);
  gr_jw_str(w, "bottleneck", via[p->via]);
  gr_jw_str(w, "bottleneck_pci_bus_id", p->bottleneck >= 0 ? gr_pci_busid(&t->pci[p->bottleneck], bus, sizeof(bus)) : NULL);
  gr_jw_positive(w, "bw_gbps", p->bw_gbps, 2);
  gr_jw_positive(w, "nccl_bw_gbps", p->nccl_bw_gbps, 2);
  gr_jw_bool(w, "nvlink_inferred", p->level == GR_LVL_GPULINK && p->nv_inferred);
  gr_jw_close(w);
}

/* One ordered pair of GPU groups (docs/json.md, "Grouped matrices"): the
 * path from every GPU of `from` to every other GPU of `to`, whose
 * bottleneck may be each GPU's own link (then listed per member). */
static void put_group_pair(struct gr_jw *w, const struct gr_analysis *a, size_t from, size_t to)
{
  char cell[16], bus[32];
  static const char *via[] = {"none", "pcie", "nvlink", "inter_socket"};
  const struct gr_topo *t = a->t;
  size_t i, j;
  gr_group_pair(a, from, to, &i, &j);
  struct gr_path path = gr_gpu_path(a, i, j);
  const struct gr_path *p = &path;
  int owner = gr_node_owner(a, p->bottleneck), side = owner < 0 ? -1 : owner == (int)i ? 0 : 1;
  gr_jw_object(w, NULL);
  gr_jw_int(w, "from_group", (long long)from);
  gr_jw_int(w, "to_group", (long long)to);
  gr_jw_str(w, "level", gr_level_str(p, cell, sizeof(cell)));
  gr_jw_str(w, "nccl_level", gr_nccl_level_str(p->nccl));
  gr_jw_bool(w, "nccl_p2p", p->nccl_p2p);
  gr_jw_str(w, "bottleneck", via[p->via]);
  gr_jw_str(w, "bottleneck_pci_bus_id",
            p->bottleneck >= 0 && side < 0 ? gr_pci_busid(&t->pci[p->bottleneck], bus, sizeof(bus)) : NULL);
  gr_jw_str(w, "bottleneck_own", side < 0 ? NULL : side == 0 ? "from" : "to");
  if (side < 0) {
    gr_jw_null(w, "bottleneck_pci_bus_ids");
  } else {
    size_t k = side == 0 ? from : to;
    gr_jw_array(w, "bottleneck_pci_bus_ids");
    for (size_t m = a->class_start[k]; m < a->class_start[k + 1]; m++) {
      size_t g = (size_t)a->class_gpus[m];
      int b = gr_class_rename(a, p->bottleneck, i, j, side == 0 ? g : i, side == 0 ? j : g);
      gr_jw_str(w, NULL, gr_pci_busid(&t->pci[b], bus, sizeof(bus)));
    }
    gr_jw_close(w);
  }
  gr_jw_positive(w, "bw_gbps", p->bw_gbps, 2);
  gr_jw_positive(w, "nccl_bw_gbps", p->nccl_bw_gbps, 2);
  gr_jw_bool(w, "nvlink_inferred", p->level == GR_LVL_GPULINK && p->nv_inferred);
  gr_jw_close(w);
}

/* The groups (members in GPU order) and every ordered pair of them, a group
 * with itself where it has two GPUs or more. */
static void put_groups(struct gr_jw *w, const struct gr_analysis *a)
{
  gr_jw_array(w, "gpu_groups");
  for (size_t k = 0; k < a->nclasses; k++) {
    gr_jw_object(w, NULL);
    gr_jw_array(w, "gpus");
    for (size_t m = a->class_start[k]; m < a->class_start[k + 1]; m++)
      gr_jw_int(w, NULL, a->class_gpus[m]);
    gr_jw_close(w);
    gr_jw_close(w);
  }
  gr_jw_close(w);
}

static void put_matrices(struct gr_jw *w, const struct gr_topo *t, const struct gr_analysis *a)
{
  char cell[16];
  bool grouped = gr_grids_grouped(a);
  if (grouped)
    put_groups(w, a);
  put_matrix(w, "gpu_matrix", a, CELL_LEVEL);
  gr_jw_array(w, "gpu_nic_matrix");
  for (size_t r = 0; r < (grouped ? a->nclasses : t->ngpus); r++) {
    size_t i = grouped ? (size_t)a->class_gpus[a->class_start[r]] : r;
    gr_jw_array(w, NULL);
    for (size_t n = 0; n < t->nnics; n++)
      gr_jw_str(w, NULL, gr_level_str(&a->gpu_nic[i * a->nnics + n], cell, sizeof(cell)));
    gr_jw_close(w);
  }
  gr_jw_close(w);
  gr_jw_put(w, "nic_matrix", nic_rows(t, a));
  put_matrix(w, "nccl_matrix", a, CELL_NCCL);
  put_matrix(w, "bw_matrix_gbps", a, CELL_BW);
  put_matrix(w, "nccl_bw_matrix_gbps", a, CELL_NCCL_BW);
  gr_jw_array(w, grouped ? "gpu_group_pairs" : "gpu_pairs");
  for (size_t i = 0; grouped && i < a->nclasses; i++)
    for (size_t j = 0; j < a->nclasses; j++)
      if (i != j || a->class_start[i + 1] - a->class_start[i] > 1)
        put_group_pair(w, a, i, j);
  for (size_t i = 0; !grouped && i < t->ngpus; i++)
    for (size_t j = i + 1; j < t->ngpus; j++) {
      struct gr_path p = gr_gpu_path(a, i, j);
      put_pair(w, t, &p, i, j);
    }
  gr_jw_close(w);
}

/* The analysis's hives, each with its GPUs and what joins them. */
static json_t *hives_json(const struct gr_analysis *a)
{
  json_t *hives = json_array();
  for (size_t h = 0; h < a->nhives; h++) {
    json_t *m = json_array();
    for (size_t g = 0; g < a->ngpus; g++)
      if (a->hive[g] == (int)h)
        json_array_append_new(m, json_integer((json_int_t)g));
    json_t *o = json_object();
    json_object_set_new(o, "gpus", m);
    json_object_set_new(o, "kind", json_string(gr_hive_kind_key(a->hives[h].kind)));
    json_object_set_new(o, "worst_level", json_string(gr_level_name(a->hives[h].worst)));
    json_array_append_new(hives, o);
  }
  return hives;
}

/* The analysis's bottlenecks: the links (and the inter-socket link) that
 * hold GPU pairs below the best pair. A link can hold n^2/4 pairs, so they
 * are written one by one. */
static void put_held_pairs(struct gr_jw *w, const struct gr_analysis *a, const struct gr_bottleneck *b)
{
  gr_jw_array(w, "pairs");
  int *pairs = xmalloc((2 * b->npairs + 1) * sizeof(int));
  size_t np = gr_bottleneck_pairs(a, b, pairs, b->npairs);
  for (size_t k = 0; k < np; k++) {
    gr_jw_array(w, NULL);
    gr_jw_int(w, NULL, pairs[2 * k]);
    gr_jw_int(w, NULL, pairs[2 * k + 1]);
    gr_jw_close(w);
  }
  free(pairs);
  gr_jw_close(w);
}

/* The pair groups one by one (docs/json.md): the form that says every
 * link's pairs, where the shorter ones below do not. */
static void put_ordered_groups(struct gr_jw *w, const struct gr_bottleneck *b)
{
  gr_jw_array(w, "pair_groups");
  for (size_t k = 0; k < b->ngroups; k++) {
    const struct gr_pair_group *g = &b->groups[k];
    gr_jw_object(w, NULL);
    gr_jw_int(w, "from_group", g->from_class);
    gr_jw_int(w, "to_group", g->to_class);
    if (g->gpu >= 0) {
      gr_jw_int(w, "gpu", g->gpu);
      gr_jw_str(w, "gpu_end", g->gpu_high ? "to" : "from");
    } else {
      gr_jw_null(w, "gpu");
      gr_jw_null(w, "gpu_end");
    }
    gr_jw_int(w, "npairs", (long long)g->npairs);
    gr_jw_close(w);
  }
  gr_jw_close(w);
}

static size_t class_size(const struct gr_analysis *a, int c)
{
  return a->class_start[c + 1] - a->class_start[c];
}

static int cmp_key2(const void *x, const void *y)
{
  const long long *p = x, *q = y;
  return (p[0] > q[0]) - (p[0] < q[0]);
}

/* A link's groups by unordered pair of groups (key: the pair, or for a
 * GPU's own link the other group), each with the pairs held; true when
 * each holds every pair of its two groups (or of the GPU with its group),
 * so that the short form says exactly the link's pairs. keys: 2 per group. */
static size_t merged_groups(const struct gr_analysis *a, const struct gr_bottleneck *b, int gpu, long long *keys,
                            bool *whole)
{
  size_t n = 0, nc = a->nclasses;
  for (size_t k = 0; k < b->ngroups; k++) {
    const struct gr_pair_group *g = &b->groups[k];
    int c = g->from_class, d = g->to_class;
    long long key = gpu >= 0 ? (g->gpu_high ? c : d) : (long long)(c < d ? c : d) * (long long)nc + (c < d ? d : c);
    keys[2 * n] = key;
    keys[2 * n + 1] = (long long)g->npairs;
    n++;
  }
  qsort(keys, n, 2 * sizeof(long long), cmp_key2);
  size_t m = 0;
  *whole = true;
  for (size_t k = 0; k < n; m++) {
    long long key = keys[2 * k], sum = 0;
    for (; k < n && keys[2 * k] == key; k++)
      sum += keys[2 * k + 1];
    int c = (int)(gpu >= 0 ? a->gpu_class[gpu] : key / (long long)nc), d = (int)(gpu >= 0 ? key : key % (long long)nc);
    size_t want = gpu >= 0 ? class_size(a, d) - (c == d) : c == d ? class_size(a, c) * (class_size(a, c) - 1) / 2
                                                                  : class_size(a, c) * class_size(a, d);
    *whole &= (size_t)sum == want;
    keys[2 * m] = key;
  }
  return m;
}

/* Above 64 GPUs, by group: a link can hold n^2/4 pairs (25.7 of topo
 * --json's 34 MB at 512 GPUs were these). A GPU's own link holds that
 * GPU's pairs with whole groups ("gpu", "with_groups"); another link holds
 * whole pairs of groups ("group_pairs"); where a link holds part of one,
 * its groups come one by one ("pair_groups"). docs/json.md, "Grouped
 * matrices". */
static void put_pair_groups(struct gr_jw *w, const struct gr_analysis *a, const struct gr_bottleneck *b)
{
  gr_jw_int(w, "npairs", (long long)b->npairs);
  int gpu = b->ngroups ? b->groups[0].gpu : -1;
  for (size_t k = 1; k < b->ngroups && gpu >= -1; k++)
    gpu = b->groups[k].gpu == gpu ? gpu : -2; /* -2: a shared link's groups and a GPU's mixed */
  long long *keys = xmalloc((2 * b->ngroups + 2) * sizeof(long long));
  bool whole = false;
  size_t m = gpu >= -1 ? merged_groups(a, b, gpu, keys, &whole) : 0;
  if (!whole)
    put_ordered_groups(w, b);
  else if (gpu >= 0) {
    gr_jw_int(w, "gpu", gpu);
    gr_jw_array(w, "with_groups");
    for (size_t k = 0; k < m; k++)
      gr_jw_int(w, NULL, keys[2 * k]);
    gr_jw_close(w);
  } else {
    gr_jw_array(w, "group_pairs");
    for (size_t k = 0; k < m; k++) {
      gr_jw_array(w, NULL);
      gr_jw_int(w, NULL, keys[2 * k] / (long long)a->nclasses);
      gr_jw_int(w, NULL, keys[2 * k] % (long long)a->nclasses);
      gr_jw_close(w);
    }
    gr_jw_close(w);
  }
  free(keys);
}

static void put_bottlenecks(struct gr_jw *w, const struct gr_analysis *a)
{
  bool grouped = gr_grids_grouped(a);
  char label[96];
  gr_jw_object(w, "bottlenecks");
  gr_jw_put(w, "best_pair_bw_gbps", gbps_or_null(a->best_pair_gbps));
  gr_jw_array(w, "links");
  for (size_t i = 0; i < a->nbottlenecks; i++) {
    const struct gr_bottleneck *b = &a->bottlenecks[i];
    gr_jw_object(w, NULL);
    gr_jw_put(w, "pci_bus_id", busid_json(a->t, b->node));
    gr_jw_put(w, "label", json_string(gr_link_label(&a->link[b->node], GR_LABEL_NOW, label, sizeof(label))));
    gr_jw_put(w, "bw_gbps", gbps_or_null(b->gbps));
    gr_jw_put(w, "nccl_bw_gbps", gbps_or_null(b->nccl_gbps));
    if (grouped)
      put_pair_groups(w, a, b);
    else
      put_held_pairs(w, a, b);
    gr_jw_close(w);
  }
  gr_jw_close(w);
  gr_jw_put(w, "inter_socket", json_boolean(a->socket_bottleneck));
  gr_jw_close(w);
}

static json_t *pci_array(const struct gr_analysis *a)
{
  const struct gr_topo *t = a->t;
  struct gr_names names = {0};
  json_t *pci = json_array();
  for (size_t i = 0; i < t->npci; i++)
    json_array_append_new(pci, pci_json(a, (int)i, &names));
  gr_names_free(&names);
  return pci;
}

static json_t *findings_json(const struct gr_topo *t, const struct gr_analysis *a)
{
  json_t *fs = json_array();
  for (size_t i = 0; i < a->findings.n; i++) {
    json_t *o = json_object();
    const struct gr_finding *f = &a->findings.v[i];
    json_object_set_new(o, "id", json_string(f->id));
    json_object_set_new(o, "severity", json_string(gr_sev_name(f->sev)));
    json_object_set_new(o, "pci_bus_id", busid_json(t, f->node));
    json_object_set_new(o, "text", json_string(f->text));
    json_array_append_new(fs, o);
  }
  return fs;
}

static json_t *nvlinks_json(const struct gr_topo *t)
{
  json_t *nv = json_array();
  for (size_t k = 0; k < t->ngpulinks; k++) {
    const struct gr_gpulink *l = &t->gpulinks[k];
    json_t *o = json_object();
    json_object_set_new(o, "a", busid_json(t, l->a));
    json_object_set_new(o, "b", busid_json(t, l->b));
    json_object_set_new(o, "b_cpu_package", l->b < 0 ? int_or_null(l->peer_package, -1) : json_null());
    json_object_set_new(o, "count", json_integer(l->count));
    json_object_set_new(o, "bw_gbps", gbps_or_null(l->bw_gbps));
    json_array_append_new(nv, o);
  }
  return nv;
}

void gr_topo_json_members(struct gr_jw *w, const struct gr_topo *t, const struct gr_analysis *a)
{
  gr_jw_put(w, "gpurig_version", json_string(GPURIG_VERSION));
  json_t *src = json_object();
  json_object_set_new(src, "kind", json_string(t->source_kind));
  json_object_set_new(src, "path", gr_json_text(t->source_path));
  /* a rig's bus ids, and those drawn for a vendor tool's matrix, are made up
   * (amd-smi states its GPUs' own; the bridges above them are still drawn) */
  bool drawn = t->source_kind && (strcmp(t->source_kind, "nvidia-smi") == 0 || strcmp(t->source_kind, "rocm-smi") == 0 ||
                                  strcmp(t->source_kind, "amd-smi") == 0);
  json_object_set_new(src, "bus_ids_modelled", json_boolean(t->rig != NULL || drawn));
  gr_jw_put(w, "source", src);
  gr_jw_put(w, "machine", machine_json(t, a));
  gr_jw_put(w, "gpus", gpus_json(t, a));
  gr_jw_put(w, "nics", nics_json(t));
  put_matrices(w, t, a);
  gr_jw_put(w, "hives", hives_json(a));
  put_bottlenecks(w, a);
  gr_jw_put(w, "nvlinks", nvlinks_json(t));
  gr_jw_put(w, "fabrics", fabrics_json(t));
  gr_jw_put(w, "pci", pci_array(a));
  gr_jw_put(w, "findings", findings_json(t, a));
  json_t *warn = json_array();
  for (size_t i = 0; i < t->nwarnings; i++)
    json_array_append_new(warn, json_string(t->warnings[i]));
  gr_jw_put(w, "input_warnings", warn);
}

json_t *gr_json_from_stream(void (*write)(struct gr_jw *w, const void *ctx), const void *ctx)
{
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f)
    return NULL;
  struct gr_jw w;
  gr_jw_begin(&w, f);
  write(&w, ctx);
  gr_jw_end(&w);
  json_t *j = fclose(f) == 0 ? json_loadb(buf, len, 0, NULL) : NULL;
  free(buf);
  return j;
}

struct topo_pair {
  const struct gr_topo *t;
  const struct gr_analysis *a;
};

static void write_topo(struct gr_jw *w, const void *ctx)
{
  const struct topo_pair *p = ctx;
  gr_topo_json_members(w, p->t, p->a);
}

json_t *gr_topo_to_json(const struct gr_topo *t, const struct gr_analysis *a)
{
  struct topo_pair p = {t, a};
  return gr_json_from_stream(write_topo, &p);
}
