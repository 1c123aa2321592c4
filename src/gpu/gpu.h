/* GPU vendor backends: a struct of function pointers per vendor, one file
 * each (gpu_nvml.c for NVIDIA), loading the vendor's library at run time.
 * Every value carries a validity bit: what the GPU or driver does not report
 * ("not supported", e.g. ECC on GeForce) is invalid, never 0.
 *
 * Threads: a backend's calls for different GPUs may run at once from
 * different threads (the sampler reads each GPU on its own thread so that
 * one hung GPU blocks no other); last_error answers for the calling thread.
 *
 * Ownership: gr_gpus_open returns a struct gr_gpus the caller frees with
 * gr_gpus_close; the backend pointer inside is static. */
#ifndef GPURIG_GPU_H
#define GPURIG_GPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/util.h"
#include "model/finding.h"

/* A measured or reported number and whether it is known. */
struct gr_metric {
  double v;
  bool ok;
};

/* NVML's P2P status names, as nvidia-smi topo -p2p prints them. */
enum gr_p2p_status {
  GR_P2PS_OK,   /* OK */
  GR_P2PS_CNS,  /* chipset not supported */
  GR_P2PS_GNS,  /* GPU not supported */
  GR_P2PS_TNS,  /* topology not supported (IOH) */
  GR_P2PS_DR,   /* disabled by regkey */
  GR_P2PS_NS,   /* not supported */
  GR_P2PS_U,    /* unknown */
};
enum gr_p2p_cap { GR_P2P_READ, GR_P2P_WRITE };

/* What sits at the far end of a GPU's NVLink. */
enum gr_gpulink_peer {
  GR_NVPEER_UNKNOWN,
  GR_NVPEER_GPU,
  GR_NVPEER_NVSWITCH,
  GR_NVPEER_CPU, /* a POWER9's NVLink unit (IBM NPU) */
};

enum { GR_GPU_LINK_MAX = 36 }; /* links one GPU may have (NVML_NVLINK_MAX_LINKS) */

/* One NVLink of a GPU as the driver reports it. */
struct gr_gpu_link {
  unsigned index;          /* the link's number on the GPU */
  struct gr_metric active; /* 1 up, 0 down */
  struct gr_metric gen;    /* NVLink generation (1 P100 ... 5 B200), mapped by the backend from its own numbering */
  char remote_busid[32];   /* the far end, "0000:c4:00.0"; empty when unknown (or the link is down) */
  struct gr_metric gbps;   /* GB/s per direction as the driver states it (ROCm SMI's xGMI bandwidth); NVML: invalid */
  unsigned remote_vendor;  /* the far end's PCI vendor, 0 unknown */
  enum gr_gpulink_peer remote;
};

/* What does not change while gpurig runs. */
struct gr_gpu_static {
  char name[96];
  char uuid[96];
  char busid[32];            /* "0000:41:00.0", lower case, 4-digit domain */
  unsigned vendor, device;   /* PCI ids, 0 unknown */
  struct gr_metric mem_gib;  /* GiB (2^30) */
  struct gr_metric bar1_gib;
  struct gr_metric max_link_gen, max_link_width;
  struct gr_metric power_default_w;
  struct gr_metric cc_major, cc_minor; /* compute capability */
  struct gr_metric temp_slowdown_c, temp_shutdown_c;
  struct gr_metric numa_node;
  struct gr_metric gpulinks_active; /* links up, of those the GPU has */
  struct gr_metric ecc_enabled;    /* 1/0 */
  struct gr_metric max_sm_clock_mhz, max_mem_clock_mhz; /* the most the GPU may run at */
  char vbios[32];                  /* the board's firmware version, "" unknown */
};

/* Who may run compute work on a GPU (NVML's numbering). */
enum gr_compute_mode {
  GR_CM_DEFAULT = 0,           /* any number of processes */
  GR_CM_EXCLUSIVE_THREAD = 1,  /* one thread (deprecated by NVIDIA) */
  GR_CM_PROHIBITED = 2,        /* none: a job cannot start */
  GR_CM_EXCLUSIVE_PROCESS = 3, /* one process */
};
/* "Default", "Exclusive_Thread", "Prohibited", "Exclusive_Process" (as
 * nvidia-smi -q), NULL for an unknown value. */
const char *gr_compute_mode_name(unsigned mode);

/* Why a GPU runs below its top clock, vendor-neutral bits (a backend maps
 * its own; NVML's clock-event reasons have the same values). */
enum gr_throttle {
  GR_THR_IDLE = 1 << 0,          /* nothing to do: normal */
  GR_THR_APP_CLOCKS = 1 << 1,    /* application clocks set lower */
  GR_THR_SW_POWER = 1 << 2,      /* power cap: the board's limit */
  GR_THR_HW_SLOWDOWN = 1 << 3,   /* hardware slowdown: heat or the power brake (PSU, cabling) */
  GR_THR_SYNC_BOOST = 1 << 4,    /* held to the slowest GPU of a sync-boost group */
  GR_THR_SW_THERMAL = 1 << 5,    /* driver's thermal slowdown */
  GR_THR_HW_THERMAL = 1 << 6,    /* hardware thermal slowdown */
  GR_THR_HW_POWER_BRAKE = 1 << 7,/* external power brake asserted (PSU) */
  GR_THR_DISPLAY = 1 << 8,       /* display clock setting */
};
enum { GR_THR_NBITS = 9 };
/* Words for one bit ("power cap"), NULL for an unknown bit. */
const char *gr_throttle_word(unsigned bit);

/* What does change: read again for each report and each sample. Counters
 * are totals since the driver loaded (deltas are the sampler's). */
struct gr_gpu_dynamic {
  struct gr_metric link_gen, link_width;
  struct gr_metric power_w, power_limit_w;
  struct gr_metric temp_c;         /* the GPU's temperature (AMD: edge) */
  struct gr_metric hotspot_c;      /* AMD's junction (hotspot) temperature; NVML: invalid */
  struct gr_metric util_gpu_pct, util_mem_pct;
  struct gr_metric mem_used_gib;
  struct gr_metric persistence;    /* 1/0 */
  struct gr_metric mem_reserved_gib; /* the driver's reserve, not counted in mem_used_gib */
  struct gr_metric compute_mode;   /* enum gr_compute_mode */
  /* the sampler's */
  struct gr_metric mem_free_gib;
  struct gr_metric sm_clock_mhz, mem_clock_mhz;
  struct gr_metric mem_temp_c;     /* HBM/GDDR: most GeForce cards do not report it */
  struct gr_metric fan_pct;        /* SXM and passive cards have none */
  struct gr_metric throttle;       /* enum gr_throttle bits */
  struct gr_metric pcie_tx_gbps, pcie_rx_gbps; /* GB/s (10^9) from the GPU's side, the driver's short window */
  struct gr_metric pcie_replay;    /* PCIe replays: the GPU's link retrying bad packets */
  struct gr_metric ecc_corrected, ecc_uncorrected; /* volatile ECC totals */
  struct gr_metric remap_corr, remap_unc, remap_pending, remap_failed; /* row remapping (A100 and later) */
  struct gr_metric gpulink_crc, gpulink_crc_data, gpulink_replay, gpulink_recovery; /* totals over the GPU's NVLinks:
                                                                  flow-control (flit) CRC, data CRC, replays, recoveries */
  /* xGMI (ROCm SMI): the error counts of the links' RAS block (XGMI WAFL;
   * ROCm SMI has no count per link), totals; and the driver's error state,
   * 0 none, 1 an error, 2 several (rsmi_dev_xgmi_error_status). Invalid on
   * GPUs without xGMI, and on NVIDIA's. */
  struct gr_metric gpulink_corrected, gpulink_uncorrected, gpulink_error_state;
};

/* A process using a GPU for compute. */
struct gr_gpu_process {
  unsigned pid;
  struct gr_metric mem_gib; /* its GPU memory, GiB (2^30) */
};

/* An event a GPU driver reports as it happens (NVIDIA's Xid). */
struct gr_gpu_event {
  unsigned gpu;   /* the backend's index */
  int code;       /* the Xid */
};

/* One vendor. Each call returns 0, or -1 after which last_error says why;
 * a GPU that no longer answers gives -1 with lost set. */
struct gr_gpu_backend {
  const char *name;         /* "nvidia" */
  const char *library;      /* what it loads, for messages */
  const char *driver_name;  /* "NVIDIA driver" */
  const char *runtime_name; /* the compute runtime whose version `versions` gives: "CUDA" */
  const char *p2p_tool;     /* the vendor's tool that shows the same P2P matrix, NULL none */
  const char *gpulink_name; /* its GPU-to-GPU links: "NVLink", "xGMI" */
  unsigned pci_vendor;      /* the PCI vendor id of its GPUs (0x10de) */
  /* Loads the library and starts it; on -1 why says what is missing. */
  int (*init)(void **state, char *why, size_t cap);
  void (*shutdown)(void *state);
  const char *(*last_error)(void *state);
  int (*enumerate)(void *state, unsigned *count);
  int (*static_info)(void *state, unsigned gpu, struct gr_gpu_static *out);
  int (*dynamic_info)(void *state, unsigned gpu, struct gr_gpu_dynamic *out);
  /* Optional (NULL when the vendor has no such matrix). */
  int (*p2p_status)(void *state, unsigned a, unsigned b, enum gr_p2p_cap cap, enum gr_p2p_status *out);
  /* Optional: the GPU's NVLinks, every link the driver answers for (up or
   * down), at most cap, in *n. A GPU without NVLink gives 0 links; -1 only
   * when the GPU stopped answering (last_error says why). */
  int (*gpulinks)(void *state, unsigned gpu, struct gr_gpu_link *out, unsigned cap, unsigned *n);
  /* Driver-wide facts: the driver's and the runtime's version ("550.54.14",
   * "12.4"); strings empty when unknown. */
  int (*versions)(void *state, char *driver, size_t dcap, char *runtime, size_t rcap);
  /* Optional: the driver's error events (Xids) since the last call, waiting
   * at most timeout_ms for the first; at most cap in *n. The first call
   * subscribes every GPU. -1 when the driver cannot report events (the
   * sampler then reads the kernel log). */
  int (*events)(void *state, unsigned timeout_ms, struct gr_gpu_event *out, unsigned cap, unsigned *n);
  /* Optional: the compute processes on GPU gpu, at most cap in *n (more are
   * not listed); -1 when the driver cannot tell. */
  int (*processes)(void *state, unsigned gpu, struct gr_gpu_process *out, unsigned cap, unsigned *n);
};

struct gr_bench_backend;
/* A GPU vendor: its facts backend and its measurement backend
 * (gpu/bench_backend.h), either NULL when it has none. Each folder under
 * src/backends/ defines one; backends/backends.c lists them. */
struct gr_vendor {
  const char *name;
  const struct gr_gpu_backend *gpu;
  const struct gr_bench_backend *bench;
};
/* The vendors gpurig knows, NULL-terminated (backends/backends.c). */
extern const struct gr_vendor *const gr_vendors[];

/* An opened backend with its GPUs. */
struct gr_gpus {
  const struct gr_gpu_backend *be;
  void *state;
  unsigned count;
  char driver[96], runtime[32]; /* "550.54.14", "12.4" (the backend's runtime_name); empty when unknown */
};

/* Opens every backend whose library sees GPUs: one is used as it is,
 * several are joined into one backend numbering the GPUs vendor by vendor
 * (g->be then points to gpu.c's static joining backend, named "mixed").
 * With no GPUs anywhere, the first vendor's answer: 0 GPUs where it
 * started. Returns 0, or -1 with err (GR_EXIT_CANNOT_RUN) listing, per
 * backend, what is missing. */
int gr_gpus_open(struct gr_gpus *g, struct gr_err *err);
void gr_gpus_close(struct gr_gpus *g);

/* A GPU's direct NVLink peer in the topology: another GPU (topo_gpu, its
 * index among the topology's GPUs, and row, its index in the report, -1
 * when the driver does not list it) or a CPU (topo_gpu -1, package). */
struct gr_gpu_peer {
  int topo_gpu, row, package;
  int links;
};

/* Everything `gpurig gpus` shows, read once. Owns its arrays: free with
 * gr_gpus_report_free. */
struct gr_gpu_row {
  struct gr_gpu_static st;
  struct gr_gpu_dynamic dy;
  bool lost;               /* the GPU stopped answering (dynamic read failed) */
  char error[256];         /* why, when lost or static info failed */
  int topo_gpu;            /* its index among the topology's GPUs, -1 not found */
  /* Its NVLink as the topology has it (the same links topo shows): direct
   * peers, and links into an NVSwitch fabric (-1 in none). */
  struct gr_gpu_peer *nv_peers;
  size_t nnv_peers;
  int nv_switch_links;
};
struct gr_gpus_report {
  char vendor[16], library[32], driver[96], runtime[32];
  const char *driver_name, *runtime_name, *p2p_tool, *gpulink_name; /* the backend's (static) */
  struct gr_findings findings; /* a GPU that stopped answering: gpu.lost, fail */
  unsigned count;
  struct gr_gpu_row *rows;
  enum gr_p2p_status *p2p_read, *p2p_write; /* count x count, NULL without the call */
};
struct gr_topo;
/* Reads every GPU of g, joined by PCI bus id to t's GPUs (t may be NULL),
 * with each GPU's NVLink peers taken from t. */
void gr_gpus_collect(struct gr_gpus *g, const struct gr_topo *t, struct gr_gpus_report *r);
void gr_gpus_report_free(struct gr_gpus_report *r);

/* Reads NVLink from the GPU driver into t, a topology just loaded from this
 * machine or a gathered tree (a gr_gpulink_reader, load/source.h): direct
 * GPU-GPU links (one gr_topo_add_gpulink per pair, each link counted once
 * though both ends report it), GPU-CPU links (POWER9), and the links into
 * NVSwitches as one fabric (GR_FABRIC_NVML). GB/s per link and direction:
 * the GPU's catalog row, else its NVLink generation's figure. A tree
 * (t->source_kind "root") is read only when it is this machine: every GPU
 * the driver reports is in it at the same bus id with the same PCI ids, and
 * the counts match. Does nothing when t already records NVLink. Problems
 * become one loader warning each (no driver on a machine with the vendor's
 * GPUs, another machine's tree, GPUs that stopped answering), never a
 * failure. */
void gr_gpus_read_gpulinks(struct gr_topo *t);

const char *gr_p2p_status_name(enum gr_p2p_status s); /* "OK", "CNS", ... */
const char *gr_p2p_status_text(enum gr_p2p_status s); /* the legend */

/* Canonical bus id ("0000:41:00.0") from any of NVML's or CUDA's spellings
 * ("00000000:41:00.0", "0000:41:00.0", upper case). false if unparsable. */
bool gr_busid_normalize(const char *in, char *out, size_t cap);

#endif
