/* The files a user names (--input, --rig, --expect, --kmsg, plan --model,
 * compare RIG) are read here, and every file gpurig writes is written here.
 * gpurig runs as root on servers and as a Slurm health check on every node,
 * so a read never blocks or runs away and a write never lands anywhere but
 * the path asked:
 *  - only regular files are read, except standard input where a command
 *    accepts it ("-", /dev/stdin) and a character device where one is meant
 *    (/dev/kmsg); files are opened with O_NONBLOCK, and the size cap is
 *    checked while reading, so /dev/zero or an endless pipe stops at the cap;
 *  - a FIFO, a device, a socket, a directory or a symlink loop is refused
 *    with one line naming the path and what it is;
 *  - a write goes to a new temporary file beside the target, created with
 *    O_EXCL|O_NOFOLLOW (a planted symlink is never followed), then renamed
 *    over the target; a target that exists and is not a regular file (a
 *    device node, a FIFO, a symlink) is refused; SIGINT, SIGTERM and SIGHUP
 *    remove the temporary file before the process ends. */
#ifndef GPURIG_FILE_H
#define GPURIG_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "base/util.h"

enum gr_file_flags {
  GR_FILE_STDIN = 1u << 0,  /* "-" and /dev/stdin read standard input */
  GR_FILE_DEVICE = 1u << 1, /* a character device is meant (/dev/kmsg): read until it has no more */
  GR_FILE_TAIL = 1u << 2,   /* over the cap, keep the newest max bytes (logs) instead of refusing */
};

/* What was read. data is NUL-terminated (binary data may hold more NULs),
 * owned by the struct and freed by gr_file_free. */
struct gr_file {
  char *data;
  size_t len;
  size_t skipped;  /* GR_FILE_TAIL: bytes dropped from the start (a partial first line included) */
  bool from_stdin; /* read from standard input: no path to hand to another reader */
  bool regular;    /* a regular file (its path may be opened again by a library) */
};

/* Reads path whole, at most max bytes. 0, or -1 with err set to one line,
 * "PATH: problem", with code GR_EXIT_FAIL (bad input). */
int gr_file_read(const char *path, size_t max, unsigned flags, struct gr_file *f, struct gr_err *err);
void gr_file_free(struct gr_file *f);

/* "-", /dev/stdin and the other names of file descriptor 0. */
bool gr_file_is_stdin(const char *path);
/* "-", /dev/stdout and the other names of file descriptor 1, which the
 * writer below writes to standard output. */
bool gr_file_is_stdout(const char *path);

/* "-", /dev/stdout and the other names of file descriptor 1: where a
 * write goes to standard output. */
bool gr_file_is_stdout(const char *path);

/* What kind of file st_mode is, in words ("a FIFO (named pipe)"). */
const char *gr_file_kind(mode_t mode);

/* ---- writing ---- */

/* One file being written: open, write, then commit (or abort). While it is
 * open, a signal that ends the process removes the temporary file. */
struct gr_out {
  char *path;   /* the target */
  char *tmp;    /* the temporary file beside it; NULL when writing to stdout */
  int fd;
  bool failed;  /* a write failed: commit refuses */
  int saved_errno;
};

/* Starts writing path ("-" and /dev/stdout mean standard output). 0, or -1
 * with err ("PATH: a FIFO (named pipe): ...", "PATH: cannot write: ..."). */
int gr_out_open(const char *path, struct gr_out *w, struct gr_err *err);
/* Appends len bytes; a failure is kept and reported by gr_out_commit. */
void gr_out_write(struct gr_out *w, const void *data, size_t len);
/* Syncs and renames the temporary file over the target. 0, or -1 with err;
 * either way w is finished (nothing to abort). */
int gr_out_commit(struct gr_out *w, struct gr_err *err);
/* Removes the temporary file and finishes w. Safe after a failed open. */
void gr_out_abort(struct gr_out *w);

/* Whether path could be written now, without writing it: the checks of
 * gr_out_open, with its temporary file created and removed again (so a
 * missing or read-only directory is found too). A command that writes
 * several files checks them all first, so that a refusal leaves none half
 * written. 0, or -1 with err as gr_out_open sets it. */
int gr_out_check(const char *path, struct gr_err *err);

/* A log written while it grows (burn's --log), so that a run killed or a
 * host that hangs leaves what came before: path itself is opened for
 * writing (truncated, created 0666 less the umask, O_NOFOLLOW: a symlink
 * is refused, as is anything but a regular file). Returns the descriptor
 * (the caller closes it), or -1 with err. */
int gr_log_open(const char *path, struct gr_err *err);

/* Writes a whole file through the calls above. 0 or -1 with err. */
int gr_file_write(const char *path, const void *data, size_t len, struct gr_err *err);

/* How many names gr_out_open tries for its temporary file beside the target
 * ("TARGET.tmp.PID.K", K from 0): each is created with O_EXCL, so a name
 * someone else made (a planted symlink) is skipped, never followed. */
#define GR_OUT_TMP_TRIES 64

#endif
