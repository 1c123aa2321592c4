/* gpurig doctor: a registry of small checks over one machine. Each check has
 * a stable id, reads through the same root prefix as the topology loaders
 * (or only the model, for hwloc XML and rig inputs), and adds results: a
 * severity, the subject, one sentence, the evidence (file and value read),
 * the exact fix and what it costs, and a reference.
 *
 * "Could not run" (skipped, error) is never reported as bad hardware: those
 * results carry the reason and do not count as warnings or failures.
 *
 * Ownership: gr_doctor_run fills a struct gr_doctor_report that owns every
 * string in it; free it with gr_doctor_report_free. It keeps no pointer to the
 * machine or the options. */
#ifndef GPURIG_DOCTOR_H
#define GPURIG_DOCTOR_H

#include <stdbool.h>
#include <stddef.h>

#include "analysis/machine.h"
#include "base/dl.h"
#include "base/util.h"
#include "doctor/expect.h"
#include "model/finding.h"

/* One GPU's power limits (watts, -1 unknown) and its name; and its xGMI
 * errors as the driver counts them (ROCm SMI: the links' RAS block and the
 * error state 0 none, 1 one, 2 several; -1 not reported). */
struct gr_doctor_gpu_power {
  char busid[32], name[96];
  double limit_w, default_w;
  double xgmi_corrected, xgmi_uncorrected;
  int xgmi_state;
};

struct gr_doctor_opts {
  int expect_gpus;                  /* --expect-gpus N, -1 none */
  const struct gr_expect *expect;   /* --expect FILE, NULL none */
  const char *kmsg_path;            /* --kmsg FILE, NULL: /dev/kmsg under the root */
  bool loaded;                      /* --loaded: the GPUs are busy now */
  double xid_window_h;              /* --xid-window HOURS; <0: the data file's default; 0: all */
  /* The GPUs' power limits as the driver enforces them (the caller reads
   * NVML; doctor reads no driver library itself), NULL with why_no_power
   * saying why none were read; and --psu WATTS, the budget they must fit
   * (0 none). */
  const struct gr_doctor_gpu_power *gpu_power;
  size_t ngpu_power;
  const char *why_no_power;
  double psu_w;
  /* The CUDA driver's and NCCL's versions, HIP's (runtime, and its driver
   * version) and RCCL's, as the caller read them (doctor loads no library):
   * facts the JSON inventory carries. Zeroed: unknown. */
  struct gr_lib_version cuda, nccl, hip, rccl;
};

struct gr_doctor_report {
  struct gr_findings findings; /* one or more per check, in the registry's order */
  bool is_root;          /* gpurig could read what only root can */
  char *root_would_add;  /* "pcie.acs mem.channels", NULL if nothing */
  char *driver_version;  /* the NVIDIA driver's version as its version file says ("550.54.15"), NULL
                            unknown: a fact the JSON inventory carries for `gpurig fleet` */
  /* More facts for the inventory, each as its check found it: */
  struct gr_lib_version cuda, nccl, hip, rccl; /* the options', copied */
  const char *iommu_mode; /* static: "off", "passthrough", "translated"; NULL unknown */
  int acs_redirecting;    /* bridges between GPUs whose ACS redirects peer-to-peer traffic; -1 unknown
                             (the check could not read them all, or did not run) */
  size_t *gpu_xids;       /* per GPU of the topology, in its order: Xid events in the window; NULL when
                             no kernel log was read (unknown, not none) */
};

struct gr_check_def {
  const char *id;
  const char *title;
  const char *reference;
  bool needs_fs; /* reads /sys or /proc: skipped for hwloc XML and rig inputs */
};

/* Runs every check on an open machine. A machine described by hwloc XML or a
 * rig file has no files to read: the checks that read them are skipped,
 * saying so. The exit status is the findings' (gr_findings_exit: the Nagios
 * convention, 2 fail, 1 warn, 3 error, else 0; skipped never changes it). */
void gr_doctor_run(const struct gr_machine *m, const struct gr_doctor_opts *o, struct gr_doctor_report *r);
void gr_doctor_report_free(struct gr_doctor_report *r);

/* The registry, for --list and the docs: its length, and check i (NULL
 * past the end), static. */
size_t gr_doctor_ncheck(void);
/* An Xid's row in data/xid.tsv: its meaning, the severity a fresh one gets
 * and the action, all static (the facts'); false when the table has no such
 * Xid (then *name is "not in data/xid.tsv" and *sev warn). */
bool gr_xid_info(int xid, const char **name, enum gr_sev *sev, const char **action);
const struct gr_check_def *gr_doctor_check(size_t i);

#endif
