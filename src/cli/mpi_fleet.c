/* gpurig-mpi fleet --mpi: every rank checks its node as `doctor --json`
 * does and sends the report to rank 0, which puts the nodes side by side as
 * `gpurig fleet FILES` does (docs/fleet.md). The report travels as the same
 * JSON document a file would hold, so both ways share one reader. Rank 0
 * waits for each report at most the timeout: a node that did not answer in
 * time is a finding, and the run ends with MPI_Abort instead of waiting in
 * MPI_Finalize for a rank that hangs. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "analysis/fleet.h"
#include "cli/cli.h"
#include "print/doctor.h"
#include "print/fleet.h"
#include "print/text.h"

enum { TAG_LEN = 1, TAG_DOC = 2 };

/* This node's doctor report as JSON text (the caller frees it), or a report
 * that says why there is none. */
static char *local_report(const struct gr_source_opts *so)
{
  struct gr_source src = cli_source_of(so, false);
  struct gr_machine m;
  struct gr_err err = {0}, nvml_err = {0};
  struct gr_doctor_opts d = {.expect_gpus = -1, .xid_window_h = -1};
  struct gr_doctor_report r;
  char *text;
  if (cli_open(&src, 0, &m, &err) != 0) {
    json_t *j = json_pack("{s:s}", "error", err.msg);
    text = json_dumps(j, JSON_COMPACT);
    json_decref(j);
    return text; /* cli_open closed m */
  }
  cli_doctor_driver_facts(&src, &m, &d, &nvml_err); /* as doctor --json would */
  gr_doctor_run(&m, &d, &r);
  free((void *)d.gpu_power);
  json_t *j = gr_doctor_to_json(&m, &r);
  char host[256] = "";
  if (!json_is_string(json_object_get(j, "hostname")) && gethostname(host, sizeof(host) - 1) == 0)
    json_object_set_new(j, "hostname", json_string(host)); /* a --root tree names no host: the rank's does */
  text = json_dumps(j, JSON_COMPACT);
  json_decref(j);
  gr_doctor_report_free(&r);
  gr_machine_close(&m);
  return text;
}

static double now_s(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Rank 0: every other rank's report, each within what is left of the
 * timeout. A rank that sent its length but not its report in time, or
 * nothing, stays empty (NULL). Returns how many did not answer. */
static int collect(int size, double timeout_s, char **docs)
{
  long long *len = calloc((size_t)size, sizeof(long long));
  MPI_Request *req = calloc((size_t)size, sizeof(MPI_Request));
  int missing = 0;
  double deadline = now_s() + timeout_s;
  for (int k = 1; k < size; k++)
    MPI_Irecv(&len[k], 1, MPI_LONG_LONG, k, TAG_LEN, MPI_COMM_WORLD, &req[k]);
  for (int k = 1; k < size; k++) {
    int done = 0;
    while (!done && now_s() < deadline) {
      MPI_Test(&req[k], &done, MPI_STATUS_IGNORE);
      if (!done)
        usleep(2000);
    }
    if (!done || len[k] <= 0 || len[k] > (64LL << 20)) {
      if (!done)
        MPI_Cancel(&req[k]);
      missing++;
      continue;
    }
    docs[k] = calloc((size_t)len[k] + 1, 1);
    MPI_Request r;
    MPI_Irecv(docs[k], (int)len[k], MPI_CHAR, k, TAG_DOC, MPI_COMM_WORLD, &r);
    done = 0;
    while (!done && now_s() < deadline) {
      MPI_Test(&r, &done, MPI_STATUS_IGNORE);
      if (!done)
        usleep(2000);
    }
    if (!done) {
      MPI_Cancel(&r);
      free(docs[k]);
      docs[k] = NULL;
      missing++;
    }
  }
  free(len);
  free(req);
  return missing;
}

/* The reports as nodes, named "rank K" until their hostname is read. */
static void as_nodes(int size, char **docs, double timeout_s, struct gr_fleet_nodes *nodes)
{
  nodes->n = (size_t)size;
  nodes->v = xcalloc((size_t)size, sizeof(*nodes->v));
  for (int k = 0; k < size; k++) {
    struct gr_fleet_node *n = &nodes->v[k];
    char name[32];
    snprintf(name, sizeof(name), "rank%d", k);
    n->file = xstrdup(name);
    if (!docs[k])
      n->problem = xasprintf("%s: no report within %.0f s (--timeout)", name, timeout_s);
    else
      gr_fleet_parse(name, docs[k], strlen(docs[k]), n);
  }
  gr_fleet_name_nodes(nodes);
}

int cmd_fleet_mpi(const struct gr_source_opts *so, const struct cli_fleet_out *out, double timeout_s)
{
  int rank, size, rc = GR_EXIT_OK;
  if (MPI_Init(NULL, NULL) != MPI_SUCCESS) {
    fprintf(stderr, "gpurig: fleet --mpi: MPI_Init failed: start it with mpirun or srun\n");
    return GR_EXIT_CANNOT_RUN;
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  char *mine = local_report(so);
  if (rank != 0) {
    long long len = (long long)strlen(mine);
    MPI_Send(&len, 1, MPI_LONG_LONG, 0, TAG_LEN, MPI_COMM_WORLD);
    MPI_Send(mine, (int)len, MPI_CHAR, 0, TAG_DOC, MPI_COMM_WORLD);
    free(mine);
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return rc;
  }
  char **docs = xcalloc((size_t)size, sizeof(char *));
  docs[0] = mine;
  int missing = collect(size, timeout_s, docs);
  struct gr_fleet_nodes nodes;
  struct gr_fleet f;
  as_nodes(size, docs, timeout_s, &nodes);
  gr_fleet_compare(&nodes, &f);
  rc = cli_fleet_print(&f, out);
  fflush(stdout);
  gr_fleet_free(&f);
  gr_fleet_nodes_free(&nodes);
  for (int k = 0; k < size; k++)
    free(docs[k]);
  free(docs);
  if (missing) /* a rank that hangs would keep MPI_Finalize waiting */
    MPI_Abort(MPI_COMM_WORLD, rc);
  MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return rc;
}
