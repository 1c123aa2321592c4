/* Shared by doctor.c and the files of checks (doctor_*.c); not part of the
 * library's interface. */
#ifndef GPURIG_DOCTOR_INTERNAL_H
#define GPURIG_DOCTOR_INTERNAL_H

#include <sys/types.h>

#include "base/file.h"
#include "facts/facts.h"
#include "doctor/doctor.h"
#include "model/names.h"

struct gr_doctor_ctx {
  const struct gr_fs *fs;      /* NULL for hwloc XML and rig inputs */
  const struct gr_topo *t;
  const struct gr_analysis *a;
  const struct gr_doctor_opts *o;
  struct gr_doctor_report *r;
  const struct gr_check_def *def; /* the check running now */
  double uptime_s;                /* -1 unknown */
  bool is_root;
  bool root_skipped;              /* the running check skipped something for want of root */
  size_t added;                   /* results the running check has added */
  size_t dropped[GR_SEV_COUNT];   /* its results over DR_MAX_RESULTS, counted, not kept */
  struct gr_findings overflow;    /* the last result over the cap, until the next dr_add */
};

/* The most results one check lists: a check with one result per device or
 * per log line would otherwise print without bound on a large or hostile
 * input. The rest are counted in one result at the end of the check. */
#define DR_MAX_RESULTS 50

/* Adds a result for the running check about pci node `node` (-1: the
 * machine). The pointer is valid until the next dr_add. Past DR_MAX_RESULTS
 * the result is only counted (the pointer is still usable). */
struct gr_finding *dr_add(struct gr_doctor_ctx *c, enum gr_sev sev, int node, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void gr_finding_evidence(struct gr_finding *r, const char *file, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void gr_finding_fix(struct gr_finding *r, const char *cost, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A skip because only root may read something. */
struct gr_finding *dr_skip_root(struct gr_doctor_ctx *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Reads a small file under the root, trimmed; 0, -errno, or gpurig's own
 * -GR_EBINARY / -GR_ETOOBIG (gr_fs_strerror names them all). */
int dr_read(const struct gr_doctor_ctx *c, const char *path, char *buf, size_t cap);
/* The same for a file a check depends on: absent (-ENOENT) is for the check
 * to judge, but a file that is there and cannot be read (binary, too long,
 * no permission) is an error result naming the file and the cause. */
int dr_read_input(struct gr_doctor_ctx *c, const char *path, char *buf, size_t cap);
/* Reads a whole file under the root through the shared reader (base/file.h)
 * with gr_file_read's max and flags. 0, or the -errno of opening it (so a
 * check can tell "absent" and "needs root" apart), or -EIO for any other
 * problem; on failure err holds one line naming the file. */
int dr_read_file(const struct gr_doctor_ctx *c, const char *path, size_t max, unsigned flags, struct gr_file *f,
                 struct gr_err *err);
/* The path as shown in errors: with the root prefix, so the user can open it. */
const char *dr_shown(const struct gr_doctor_ctx *c, const char *path, char *buf, size_t cap);

/* The GPU's catalog model (by PCI id), or NULL. */
const struct gr_gpu_model *dr_gpu_model(const struct gr_pci *p);

/* The checks, one function each, grouped by file. */
void check_gpu_count(struct gr_doctor_ctx *c);
void check_gpu_link_uniform(struct gr_doctor_ctx *c);
void check_pcie_link_width(struct gr_doctor_ctx *c);
void check_pcie_link_gen(struct gr_doctor_ctx *c);
void check_pcie_aer(struct gr_doctor_ctx *c);
void check_pcie_acs(struct gr_doctor_ctx *c);
void check_gpu_bar1(struct gr_doctor_ctx *c);
void check_iommu_mode(struct gr_doctor_ctx *c);
void check_numa_locality(struct gr_doctor_ctx *c);
void check_mem_host(struct gr_doctor_ctx *c);
void check_mem_channels(struct gr_doctor_ctx *c);
void check_mem_memlock(struct gr_doctor_ctx *c);
void check_cpu_governor(struct gr_doctor_ctx *c);
void check_kernel_mitigations(struct gr_doctor_ctx *c);
void check_kernel_thp(struct gr_doctor_ctx *c);
void check_driver_version(struct gr_doctor_ctx *c);
void check_driver_p2p(struct gr_doctor_ctx *c);
void check_rdma_peermem(struct gr_doctor_ctx *c);
void check_xid_errors(struct gr_doctor_ctx *c);
void check_gpu_power_limits(struct gr_doctor_ctx *c);
void check_gpu_xgmi(struct gr_doctor_ctx *c);

/* Reads the NVIDIA driver's version and flavour: 1 found; 0 not loaded
 * (no version file); -1 a version file that cannot be read (an error result
 * names it); -2 one with no version in it. version gets "535.129.03",
 * flavour "open" or "proprietary", from_file the file read (NULL for 0). */
int dr_nvidia_driver(struct gr_doctor_ctx *c, char *version, size_t vcap, const char **flavour, const char **from_file);

#endif
