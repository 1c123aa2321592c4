/* Printers of `gpurig gpus`: what the driver reports per GPU, joined to the
 * topology, and the driver's P2P status matrices. Invalid values print as
 * "n/a" in text and null in JSON, never 0. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "gpu/gpu.h"
#include "print/common.h"
#include "print/gpus.h"

static const char *num(const struct gr_metric *m, const char *fmt, char *buf, size_t cap)
{
  if (!m->ok)
    snprintf(buf, cap, "n/a");
  else
    snprintf(buf, cap, fmt, m->v);
  return buf;
}

static void print_link(FILE *out, const struct gr_gpu_row *r)
{
  char cg[16], cw[16], mg[16], mw[16];
  fprintf(out, "  %-13s Gen%s x%s now, Gen%s x%s at most%s\n", "PCIe link", num(&r->dy.link_gen, "%.0f", cg, 16),
          num(&r->dy.link_width, "%.0f", cw, 16), num(&r->st.max_link_gen, "%.0f", mg, 16),
          num(&r->st.max_link_width, "%.0f", mw, 16),
          !(r->dy.link_gen.ok && r->st.max_link_gen.ok && r->dy.link_gen.v < r->st.max_link_gen.v) ? ""
          : r->dy.util_gpu_pct.ok && r->dy.util_gpu_pct.v >= 50 ? " (slow while busy: see the warning)"
                                                                 : " (an idle GPU lowers its link speed; width does not drop)");
}

static void print_power_temp(FILE *out, const struct gr_gpu_row *r)
{
  char a[16], b[16], c[16];
  fprintf(out, "  %-13s %s W drawn, limit %s W (default %s W)\n", "power", num(&r->dy.power_w, "%.1f", a, 16),
          num(&r->dy.power_limit_w, "%.0f", b, 16), num(&r->st.power_default_w, "%.0f", c, 16));
  fprintf(out, "  %-13s %s C (slows down at %s C, shuts down at %s C)\n", "temperature",
          num(&r->dy.temp_c, "%.0f", a, 16), num(&r->st.temp_slowdown_c, "%.0f", b, 16),
          num(&r->st.temp_shutdown_c, "%.0f", c, 16));
  /* AMD's three sensors; the first line's figure is the edge one */
  if (r->dy.hotspot_c.ok)
    fprintf(out, "  %-13s %s C junction (hotspot), %s C memory\n", "", num(&r->dy.hotspot_c, "%.0f", a, 16),
            num(&r->dy.mem_temp_c, "%.0f", b, 16));
}

/* Clocks now and at most, who may compute on it, and its firmware. */
static void print_clocks_mode(FILE *out, const struct gr_gpu_row *r)
{
  char a[16], b[16], c[16], d[16];
  const char *cm = r->dy.compute_mode.ok ? gr_compute_mode_name((unsigned)r->dy.compute_mode.v) : NULL;
  fprintf(out, "  %-13s SM %s MHz (at most %s), memory %s MHz (at most %s)\n", "clocks",
          num(&r->dy.sm_clock_mhz, "%.0f", a, 16), num(&r->st.max_sm_clock_mhz, "%.0f", b, 16),
          num(&r->dy.mem_clock_mhz, "%.0f", c, 16), num(&r->st.max_mem_clock_mhz, "%.0f", d, 16));
  fprintf(out, "  %-13s %s%s\n", "compute mode", cm ? cm : "n/a",
          cm && r->dy.compute_mode.v == GR_CM_PROHIBITED ? " (no process may compute on it)" : "");
  if (r->st.vbios[0])
    fprintf(out, "  %-13s %s\n", "VBIOS", r->st.vbios);
}

static const char *onoff(const struct gr_metric *m)
{
  return !m->ok ? "not supported" : m->v ? "on" : "off";
}

static void peer_name(const struct gr_gpu_peer *p, char *buf, size_t cap)
{
  if (p->topo_gpu < 0)
    snprintf(buf, cap, "CPU%d", p->package);
  else if (p->row >= 0)
    snprintf(buf, cap, "GPU%d", p->row);
  else
    snprintf(buf, cap, "topology GPU%d", p->topo_gpu);
}

/* "NV2 to GPU1, GPU2; NV1 to CPU0; 12 links to the NVSwitch fabric": the
 * topology's links of this GPU, peers grouped by link count. */
static void print_peers(FILE *out, const struct gr_gpu_row *r)
{
  const char *sep = "";
  for (size_t i = 0; i < r->nnv_peers; i++) {
    bool first = true;
    for (size_t k = 0; k < i && first; k++)
      first = r->nv_peers[k].links != r->nv_peers[i].links;
    if (!first)
      continue; /* printed with the first peer of its count */
    fprintf(out, "%sNV%d to", sep, r->nv_peers[i].links);
    for (size_t k = i; k < r->nnv_peers; k++) {
      char name[48];
      if (r->nv_peers[k].links != r->nv_peers[i].links)
        continue;
      peer_name(&r->nv_peers[k], name, sizeof(name));
      fprintf(out, "%s %s", k == i ? "" : ",", name);
    }
    sep = "; ";
  }
  if (r->nv_switch_links >= 0)
    fprintf(out, "%s%d link%s to the NVSwitch fabric", sep, r->nv_switch_links, r->nv_switch_links == 1 ? "" : "s");
}

static void print_nvlink(FILE *out, const struct gr_gpus_report *rep, const struct gr_gpu_row *r)
{
  bool joined = r->nnv_peers || r->nv_switch_links >= 0;
  fprintf(out, "  %-13s ", rep->gpulink_name ? rep->gpulink_name : "GPU links");
  if (r->st.gpulinks_active.ok)
    fprintf(out, "%.0f link%s up%s", r->st.gpulinks_active.v, r->st.gpulinks_active.v == 1 ? "" : "s", joined ? ": " : "");
  else
    fprintf(out, "%s", joined ? "links up not reported by the driver; the topology has " : "none");
  print_peers(out, r);
  fputc('\n', out);
}

static void print_row(FILE *out, const struct gr_topo *t, const struct gr_gpus_report *rep, unsigned i)
{
  const struct gr_gpu_row *r = &rep->rows[i];
  char a[32], b[32], c[32];
  fprintf(out, "GPU%u  %s  %s", i, r->st.name[0] ? r->st.name : "(no name)", r->st.busid[0] ? r->st.busid : "?");
  if (t && r->topo_gpu >= 0) {
    const struct gr_pci *p = &t->pci[t->gpus[r->topo_gpu]];
    fprintf(out, "  (topology GPU%d, NUMA %s)", r->topo_gpu, p->numa >= 0 ? (snprintf(a, sizeof(a), "%d", p->numa), a) : "unknown");
  } else if (t) {
    fprintf(out, "  (not in the topology)");
  }
  fputc('\n', out);
  if (r->lost && !r->st.busid[0]) {
    fprintf(out, "  %s\n\n", r->error);
    return;
  }
  fprintf(out, "  %-13s %s\n", "UUID", r->st.uuid[0] ? r->st.uuid : "n/a");
  fprintf(out, "  %-13s %s GiB (%s GiB used", "memory", num(&r->st.mem_gib, "%.1f", a, sizeof(a)),
          num(&r->dy.mem_used_gib, "%.1f", b, sizeof(b)));
  if (r->dy.mem_reserved_gib.ok)
    fprintf(out, ", %.1f GiB reserved by the driver", r->dy.mem_reserved_gib.v);
  fprintf(out, "), BAR1 %s GiB\n", num(&r->st.bar1_gib, "%.2f", c, sizeof(c)));
  if (r->st.cc_major.ok)
    fprintf(out, "  %-13s %.0f.%.0f\n", "compute cap.", r->st.cc_major.v, r->st.cc_minor.v);
  if (r->lost) {
    fprintf(out, "  %-13s %s\n\n", "LOST", r->error);
    return;
  }
  print_link(out, r);
  print_power_temp(out, r);
  print_clocks_mode(out, r);
  fprintf(out, "  %-13s %s\n", "persistence", onoff(&r->dy.persistence));
  fprintf(out, "  %-13s %s\n", "ECC", onoff(&r->st.ecc_enabled));
  print_nvlink(out, rep, r);
  fprintf(out, "  %-13s %s%% GPU, %s%% memory\n\n", "utilisation", num(&r->dy.util_gpu_pct, "%.0f", a, sizeof(a)),
          num(&r->dy.util_mem_pct, "%.0f", b, sizeof(b)));
}

static void print_p2p(FILE *out, const struct gr_gpus_report *rep, const enum gr_p2p_status *m, const char *what)
{
  unsigned n = rep->count;
  if (rep->p2p_tool)
    fprintf(out, "P2P %s status (the driver's answer, as %s %c):\n       ", what, rep->p2p_tool, what[0]);
  else
    fprintf(out, "P2P %s status (the driver's answer):\n       ", what);
  for (unsigned b = 0; b < n; b++)
    fprintf(out, " GPU%-3u", b);
  fputc('\n', out);
  for (unsigned a = 0; a < n; a++) {
    fprintf(out, "GPU%-3u ", a);
    for (unsigned b = 0; b < n; b++)
      fprintf(out, " %-6s", a == b ? "X" : gr_p2p_status_name(m[a * n + b]));
    fputc('\n', out);
  }
  fputc('\n', out);
}

void gr_print_gpus(FILE *out, const struct gr_topo *t, const struct gr_gpus_report *rep)
{
  fprintf(out, "%s %s%s%s%s%s (%s), %u GPU%s\n\n", rep->driver_name, rep->driver[0] ? rep->driver : "(version unknown)",
          rep->runtime[0] ? ", " : "", rep->runtime[0] ? rep->runtime_name : "", rep->runtime[0] ? " " : "", rep->runtime,
          rep->library, rep->count, rep->count == 1 ? "" : "s");
  for (unsigned i = 0; i < rep->count; i++)
    print_row(out, t, rep, i);
  if (rep->p2p_read && rep->count > 1) {
    print_p2p(out, rep, rep->p2p_read, "read");
    print_p2p(out, rep, rep->p2p_write, "write");
    fprintf(out, "Legend: OK; CNS = chipset not supported; GNS = GPU not supported; TNS = topology not supported;\n"
                 "        DR = disabled by regkey; NS = not supported; U = unknown\n");
  }
}

static json_t *jnum(const struct gr_metric *m)
{
  return m->ok ? json_real(m->v) : json_null();
}

static json_t *jint(const struct gr_metric *m)
{
  return m->ok ? json_integer((json_int_t)m->v) : json_null();
}

static json_t *jbool(const struct gr_metric *m)
{
  return m->ok ? json_boolean(m->v != 0) : json_null();
}

/* [{"gpu": 1, "topology_gpu": 1, "links": 2}, {"cpu_package": 0, "links": 3}];
 * null when the GPU is not in the topology. */
static json_t *peers_json(const struct gr_gpu_row *r)
{
  if (r->topo_gpu < 0)
    return json_null();
  json_t *a = json_array();
  for (size_t i = 0; i < r->nnv_peers; i++) {
    const struct gr_gpu_peer *p = &r->nv_peers[i];
    json_t *o = json_object();
    if (p->topo_gpu >= 0) {
      json_object_set_new(o, "gpu", p->row >= 0 ? json_integer(p->row) : json_null());
      json_object_set_new(o, "topology_gpu", json_integer(p->topo_gpu));
    } else {
      json_object_set_new(o, "cpu_package", json_integer(p->package));
    }
    json_object_set_new(o, "links", json_integer(p->links));
    json_array_append_new(a, o);
  }
  return a;
}

static json_t *row_json(const struct gr_gpu_row *r, unsigned i)
{
  json_t *o = json_object(), *link = json_object();
  json_object_set_new(o, "index", json_integer(i));
  json_object_set_new(o, "name", gr_json_text(r->st.name[0] ? r->st.name : NULL));
  json_object_set_new(o, "uuid", gr_json_text(r->st.uuid[0] ? r->st.uuid : NULL));
  json_object_set_new(o, "pci_bus_id", gr_json_text(r->st.busid[0] ? r->st.busid : NULL));
  json_object_set_new(o, "topology_gpu", r->topo_gpu >= 0 ? json_integer(r->topo_gpu) : json_null());
  json_object_set_new(o, "lost", json_boolean(r->lost));
  json_object_set_new(o, "error", gr_json_text(r->error[0] ? r->error : NULL));
  json_object_set_new(o, "mem_gib", jnum(&r->st.mem_gib));
  json_object_set_new(o, "mem_used_gib", jnum(&r->dy.mem_used_gib));
  json_object_set_new(o, "mem_reserved_gib", jnum(&r->dy.mem_reserved_gib));
  json_object_set_new(o, "bar1_gib", jnum(&r->st.bar1_gib));
  char cc[16];
  snprintf(cc, sizeof(cc), "%.0f.%.0f", r->st.cc_major.v, r->st.cc_minor.v);
  json_object_set_new(o, "compute_capability", r->st.cc_major.ok ? json_string(cc) : json_null());
  json_object_set_new(link, "gen", jint(&r->dy.link_gen));
  json_object_set_new(link, "width", jint(&r->dy.link_width));
  json_object_set_new(link, "max_gen", jint(&r->st.max_link_gen));
  json_object_set_new(link, "max_width", jint(&r->st.max_link_width));
  json_object_set_new(o, "link", link);
  json_object_set_new(o, "power_w", jnum(&r->dy.power_w));
  json_object_set_new(o, "power_limit_w", jnum(&r->dy.power_limit_w));
  json_object_set_new(o, "power_default_limit_w", jnum(&r->st.power_default_w));
  json_object_set_new(o, "persistence_mode", jbool(&r->dy.persistence));
  json_object_set_new(o, "temp_c", jnum(&r->dy.temp_c));
  json_object_set_new(o, "temp_slowdown_c", jnum(&r->st.temp_slowdown_c));
  json_object_set_new(o, "temp_shutdown_c", jnum(&r->st.temp_shutdown_c));
  json_object_set_new(o, "temp_hotspot_c", jnum(&r->dy.hotspot_c));
  json_object_set_new(o, "temp_mem_c", jnum(&r->dy.mem_temp_c));
  json_object_set_new(o, "ecc_enabled", jbool(&r->st.ecc_enabled));
  json_object_set_new(o, "nvlinks_active", jint(&r->st.gpulinks_active));
  json_object_set_new(o, "nvlink_peers", peers_json(r));
  json_object_set_new(o, "nvlink_switch_links", r->nv_switch_links >= 0 ? json_integer(r->nv_switch_links) : json_null());
  json_object_set_new(o, "numa_node", jint(&r->st.numa_node));
  json_object_set_new(o, "util_gpu_pct", jnum(&r->dy.util_gpu_pct));
  json_object_set_new(o, "util_mem_pct", jnum(&r->dy.util_mem_pct));
  json_object_set_new(o, "sm_clock_mhz", jnum(&r->dy.sm_clock_mhz));
  json_object_set_new(o, "mem_clock_mhz", jnum(&r->dy.mem_clock_mhz));
  json_object_set_new(o, "max_sm_clock_mhz", jnum(&r->st.max_sm_clock_mhz));
  json_object_set_new(o, "max_mem_clock_mhz", jnum(&r->st.max_mem_clock_mhz));
  const char *cm = r->dy.compute_mode.ok ? gr_compute_mode_name((unsigned)r->dy.compute_mode.v) : NULL;
  json_object_set_new(o, "compute_mode", gr_json_text(cm));
  json_object_set_new(o, "vbios", gr_json_text(r->st.vbios[0] ? r->st.vbios : NULL));
  return o;
}

static json_t *matrix_json(const struct gr_gpus_report *rep, const enum gr_p2p_status *m)
{
  json_t *rows = json_array();
  for (unsigned a = 0; a < rep->count; a++) {
    json_t *row = json_array();
    for (unsigned b = 0; b < rep->count; b++)
      json_array_append_new(row, json_string(a == b ? "X" : gr_p2p_status_name(m[a * rep->count + b])));
    json_array_append_new(rows, row);
  }
  return rows;
}

json_t *gr_gpus_to_json(const struct gr_gpus_report *rep)
{
  json_t *o = json_object(), *gpus = json_array();
  json_object_set_new(o, "vendor", json_string(rep->vendor));
  json_object_set_new(o, "library", json_string(rep->library));
  json_object_set_new(o, "driver_version", gr_json_text(rep->driver[0] ? rep->driver : NULL));
  /* "cuda_version": the key names the vendor's runtime */
  char key[48];
  size_t k = 0;
  for (const char *c = rep->runtime_name; c && *c && k + 9 < sizeof(key); c++)
    key[k++] = isalnum((unsigned char)*c) ? (char)tolower((unsigned char)*c) : '_'; /* "ROCm SMI": rocm_smi_version */
  snprintf(key + k, sizeof(key) - k, "_version");
  json_object_set_new(o, key, gr_json_text(rep->runtime[0] ? rep->runtime : NULL));
  for (unsigned i = 0; i < rep->count; i++)
    json_array_append_new(gpus, row_json(&rep->rows[i], i));
  json_object_set_new(o, "gpus", gpus);
  if (rep->p2p_read) {
    json_t *p2p = json_object();
    json_object_set_new(p2p, "read", matrix_json(rep, rep->p2p_read));
    json_object_set_new(p2p, "write", matrix_json(rep, rep->p2p_write));
    json_object_set_new(o, "p2p_status", p2p);
  } else {
    json_object_set_new(o, "p2p_status", json_null());
  }
  json_t *fs = json_array(); /* gpu.lost, pcie.link-width, pcie.link-gen: doctor's objects */
  for (size_t i = 0; i < rep->findings.n; i++)
    json_array_append_new(fs, gr_finding_to_json(&rep->findings.v[i]));
  json_object_set_new(o, "findings", fs);
  return o;
}
