/* A kernel log followed for new lines while gpurig watches: /dev/kmsg (one
 * record per read), or a text file such as /var/log/kern.log followed by
 * name as `tail -F` follows it, so that a daily logrotate does not end it:
 *  - copytruncate (copied away, then truncated in place): a file shorter
 *    than what was read is read again from its start;
 *  - rename (moved away, a new file at the name): the old file is read to
 *    its end (the logger may still write to it until it reopens), then the
 *    new one from its start; until a new file stands at the name, the old
 *    one is still read.
 * Reading allocates nothing when there are no new lines.
 *
 * Ownership: gr_tail_start takes the descriptor (closed by gr_tail_stop)
 * and copies the path; gr_tail_stop frees what the tail holds. */
#ifndef GPURIG_LOGTAIL_H
#define GPURIG_LOGTAIL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct gr_tail {
  int fd;       /* -1 none */
  bool records; /* /dev/kmsg: one record per read */
  char *buf;    /* a partial line waits here */
  size_t have;
  char *path;   /* followed by name; NULL: the descriptor only */
  dev_t dev;    /* the file fd reads: another one at path is a rotation */
  ino_t ino;
};

/* Whole lines (or /dev/kmsg records) as they come; a rotation in words
 * ("shrank from 2538 to 83 bytes (...): read again from its start"). */
struct gr_tail_sink {
  void (*lines)(void *ctx, const char *buf, size_t len);
  void (*rotated)(void *ctx, const char *what);
  void *ctx;
};

/* Starts following fd from its end. follow: the path fd was opened from,
 * followed by name when fd is a regular file; NULL never reopens. */
void gr_tail_start(struct gr_tail *t, int fd, const char *follow);
/* Hands what is new since the last call to sink, following a rotation. */
void gr_tail_read(struct gr_tail *t, const struct gr_tail_sink *sink);
void gr_tail_stop(struct gr_tail *t);

#endif
