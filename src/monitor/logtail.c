/* A kernel log followed as tail -F follows it; see logtail.h. */
#include "monitor/logtail.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"

enum { TAIL_BUF = 65536 };

void gr_tail_start(struct gr_tail *t, int fd, const char *follow)
{
  struct stat st;
  memset(t, 0, sizeof(*t));
  t->fd = fd;
  if (fd < 0 || fstat(fd, &st) != 0)
    return;
  t->records = S_ISCHR(st.st_mode);
  if (follow && S_ISREG(st.st_mode)) {
    t->path = xstrdup(follow);
    t->dev = st.st_dev;
    t->ino = st.st_ino;
  }
  lseek(fd, 0, SEEK_END); /* /dev/kmsg: past the records already there */
  t->buf = xmalloc(TAIL_BUF);
}

/* What the descriptor has now, as whole lines. */
static void drain(struct gr_tail *t, const struct gr_tail_sink *k)
{
  for (int guard = 0; t->fd >= 0 && guard < 4096; guard++) {
    ssize_t r = read(t->fd, t->buf + t->have, TAIL_BUF - 1 - t->have);
    if (r < 0 && errno == EPIPE)
      continue; /* /dev/kmsg: records were overwritten before we read them */
    if (r <= 0)
      break;
    t->have += (size_t)r;
    if (t->records) { /* a whole record per read */
      k->lines(k->ctx, t->buf, t->have);
      t->have = 0;
      continue;
    }
    char *nl = memrchr(t->buf, '\n', t->have);
    if (!nl && t->have < TAIL_BUF - 1)
      continue;
    size_t whole = nl ? (size_t)(nl - t->buf) + 1 : t->have;
    k->lines(k->ctx, t->buf, whole);
    memmove(t->buf, t->buf + whole, t->have - whole);
    t->have -= whole;
  }
}

/* Another regular file at the name: the old one read to its end, its last
 * line too when it has no newline, then the new one from its start. A name
 * that is missing or not a regular file is tried again at the next read. */
static void reopen(struct gr_tail *t, const struct gr_tail_sink *k)
{
  struct stat named, st;
  if (stat(t->path, &named) != 0 || !S_ISREG(named.st_mode) || (named.st_dev == t->dev && named.st_ino == t->ino))
    return;
  int fd = open(t->path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))) {
    close(fd);
    fd = -1;
  }
  if (fd < 0)
    return;
  drain(t, k);
  if (t->have)
    k->lines(k->ctx, t->buf, t->have);
  t->have = 0;
  close(t->fd);
  t->fd = fd;
  t->dev = st.st_dev;
  t->ino = st.st_ino;
  k->rotated(k->ctx, "is a new file (rotated): the old one read to its end, the new one from its start");
  drain(t, k);
}

void gr_tail_read(struct gr_tail *t, const struct gr_tail_sink *k)
{
  drain(t, k);
  struct stat st;
  if (!t->path || t->fd < 0 || fstat(t->fd, &st) != 0)
    return;
  off_t at = lseek(t->fd, 0, SEEK_CUR);
  if (at > st.st_size) {
    char what[160];
    lseek(t->fd, 0, SEEK_SET);
    t->have = 0; /* a partial line of the text that is gone */
    snprintf(what, sizeof(what),
             "shrank from %lld to %lld bytes (truncated, as logrotate's copytruncate does): read again from its start",
             (long long)at, (long long)st.st_size);
    k->rotated(k->ctx, what);
    drain(t, k);
  }
  reopen(t, k);
}

void gr_tail_stop(struct gr_tail *t)
{
  if (t->fd >= 0)
    close(t->fd);
  free(t->buf);
  free(t->path);
  memset(t, 0, sizeof(*t));
  t->fd = -1;
}
