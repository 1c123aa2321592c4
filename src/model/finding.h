/* One finding type and one severity scale for every command: topo's
 * analysis, doctor's checks, bench's results, plan's verdict and compare.
 *
 * The scale says what a fact means, the same in every command:
 *   ok       checked, nothing wrong
 *   info     a fact worth knowing, or a design limit of the machine (a Gen3
 *            board, x8/x8 slots on a consumer board, GPUs on two sockets)
 *   warn     a set-up problem with a fix (a riser that trains x8, ACS on, a
 *            driver with a known P2P bug)
 *   fail     broken or failing hardware (uncorrectable PCIe errors, a GPU
 *            off the bus, corrupt copies), or a job that cannot run as asked
 *   skipped  not applicable to this input, or needs what gpurig lacks (root)
 *   error    a check could not read its input
 * and one mapping turns the worst of them into the exit status (docs/cli.md).
 *
 * Ownership: a struct gr_findings owns every finding and string in it; free
 * it with gr_findings_free. A pointer returned by gr_finding_add stays
 * valid until the next add to the same list. */
#ifndef GPURIG_FINDING_H
#define GPURIG_FINDING_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/util.h"

enum gr_sev { GR_SEV_OK, GR_SEV_INFO, GR_SEV_WARN, GR_SEV_FAIL, GR_SEV_SKIPPED, GR_SEV_ERROR, GR_SEV_COUNT };

struct gr_evidence {
  char *file;   /* what was read: a path (under the root), an option, "model" */
  char *value;  /* what it said */
};

struct gr_finding {
  enum gr_sev sev;
  char id[48];            /* stable id: "pcie.link-width", "bench.verify" */
  const char *title;      /* the check's title (static), NULL if none */
  const char *reference;  /* where the rule comes from (static), NULL if none */
  int node;               /* topology pci index concerned, -1 the machine or none */
  char *subject;          /* "GPU1 0000:02:00.0", NULL for the machine */
  char *pci_bus_id;       /* of the subject, NULL if none */
  char *text;             /* one plain sentence (or two) */
  struct gr_evidence *ev;
  size_t nev;
  char *fix;              /* the exact command, setting or part, NULL if none */
  char *cost;             /* what the fix costs, NULL if none */
  bool needs_root;        /* skipped because only root may read it */
};

struct gr_findings {
  struct gr_finding *v;
  size_t n;
  size_t count[GR_SEV_COUNT];
};

/* Appends a finding (node -1, no subject) with its sentence. */
struct gr_finding *gr_finding_add(struct gr_findings *fs, enum gr_sev sev, const char *id, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
struct gr_finding *gr_finding_vadd(struct gr_findings *fs, enum gr_sev sev, const char *id, const char *fmt, va_list ap)
    __attribute__((format(printf, 4, 0)));
/* Names what the finding is about. subject and busid are copied; NULL ok. */
void gr_finding_subject(struct gr_finding *f, int node, const char *subject, const char *busid);
void gr_finding_evidence(struct gr_finding *f, const char *file, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Sets the fix and what it costs (replacing any earlier one). */
void gr_finding_fix(struct gr_finding *f, const char *cost, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Orders the list worst first (fail, warn, info, ...), keeping the order of
 * findings of one severity. */
void gr_findings_sort(struct gr_findings *fs);
void gr_findings_free(struct gr_findings *fs);
/* Moves every finding of src to the end of dst (their strings with them);
 * src is left empty. */
void gr_findings_take(struct gr_findings *dst, struct gr_findings *src);
/* Frees the strings of one finding not in a list (an event's, say) and
 * zeroes it. */
void gr_finding_release(struct gr_finding *f);

/* The one exit mapping: 2 if any fail, else 1 if any warn, else 3 if any
 * error, else 0. ok, info and skipped never change it. */
enum gr_exit gr_findings_exit(const struct gr_findings *fs);

const char *gr_sev_name(enum gr_sev s); /* "ok", "info", "warn", "fail", "skipped", "error" */

#endif
