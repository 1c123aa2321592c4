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
 * topology, the analysis or the options. */
#ifndef GPURIG_DOCTOR_H
#define GPURIG_DOCTOR_H

#include <stdbool.h>
#include <stddef.h>

#include "analysis/analysis.h"
#include "doctor/expect.h"
#include "base/fs.h"
#include "model/topo.h"
#include "base/util.h"

/* In the order a report shows them. */
enum gr_check_sev {
  GR_CHECK_FAIL,
  GR_CHECK_WARN,
  GR_CHECK_ERROR,   /* the check could not read its input (malformed file) */
  GR_CHECK_INFO,
  GR_CHECK_SKIPPED, /* not applicable to this input, or needs what gpurig lacks (root) */
  GR_CHECK_OK,
  GR_CHECK_NSEV,
};

struct gr_evidence {
  char *file;   /* what was read: a path (under the root), a command-line option, "model" */
  char *value;  /* what it said */
};

struct gr_check_result {
  const char *id;         /* the check's stable id (static) */
  const char *title;      /* static */
  const char *reference;  /* static, may be NULL */
  enum gr_check_sev sev;
  char *subject;          /* "GPU1 0000:02:00.0", NULL for the whole machine */
  char *pci_bus_id;       /* of the subject, NULL if none */
  char *message;          /* one plain sentence (or two) */
  char *fix;              /* exact command or BIOS setting, NULL if none */
  char *cost;             /* what the fix costs, NULL if none */
  bool needs_root;        /* skipped because gpurig is not root */
  struct gr_evidence *ev;
  size_t nev;
};

struct gr_doctor_opts {
  int expect_gpus;                  /* --expect-gpus N, -1 none */
  const struct gr_expect *expect;   /* --expect FILE, NULL none */
  const char *kmsg_path;            /* --kmsg FILE, NULL: /dev/kmsg under the root */
  bool loaded;                      /* --loaded: the GPUs are busy now */
  double xid_window_h;              /* --xid-window HOURS; <0: the data file's default; 0: all */
};

struct gr_doctor_report {
  struct gr_check_result *res;
  size_t nres;
  size_t count[GR_CHECK_NSEV];
  bool is_root;          /* gpurig could read what only root can */
  char *root_would_add;  /* "pcie.acs mem.channels", NULL if nothing */
};

struct gr_check_def {
  const char *id;
  const char *title;
  const char *reference;
  bool needs_fs; /* reads /sys or /proc: skipped for hwloc XML and rig inputs */
};

/* Runs every check. fs is NULL when the topology came from hwloc XML or a rig
 * file (then the checks that read the machine are skipped, saying so). Returns
 * 0, or -1 with err set when a data file gpurig needs is missing or broken. */
int gr_doctor_run(const struct gr_fs *fs, const struct gr_topo *t, const struct gr_analysis *a,
                  const struct gr_doctor_opts *o, struct gr_doctor_report *r, struct gr_err *err);
void gr_doctor_report_free(struct gr_doctor_report *r);

/* Nagios convention: 2 if any fail, else 1 if any warn, else 3 if any error,
 * else 0. Skipped checks never change it. */
enum gr_exit gr_doctor_exit(const struct gr_doctor_report *r);

const char *gr_check_sev_name(enum gr_check_sev s); /* "fail", "warn", ... */

/* The registry, for --list and the docs; n set to its length. */
const struct gr_check_def *gr_doctor_checks(size_t *n);

#endif
