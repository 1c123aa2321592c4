/* Reading the files a user names and writing gpurig's output files; see
 * file.h for the rules and why. */
#include "base/file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

bool gr_file_is_stdin(const char *path)
{
  return strcmp(path, "-") == 0 || strcmp(path, "/dev/stdin") == 0 || strcmp(path, "/dev/fd/0") == 0 ||
         strcmp(path, "/proc/self/fd/0") == 0;
}

bool gr_file_is_stdout(const char *path)
{
  return strcmp(path, "-") == 0 || strcmp(path, "/dev/stdout") == 0 || strcmp(path, "/dev/fd/1") == 0 ||
         strcmp(path, "/proc/self/fd/1") == 0;
}

const char *gr_file_kind(mode_t mode)
{
  if (S_ISREG(mode))
    return "a regular file";
  if (S_ISDIR(mode))
    return "a directory";
  if (S_ISFIFO(mode))
    return "a FIFO (named pipe)";
  if (S_ISCHR(mode))
    return "a character device";
  if (S_ISBLK(mode))
    return "a block device";
  if (S_ISSOCK(mode))
    return "a socket";
  if (S_ISLNK(mode))
    return "a symbolic link";
  return "not a regular file";
}

static int too_big(const char *path, size_t max, struct gr_err *err)
{
  char words[32];
  return gr_fail(err, GR_EXIT_FAIL, "%s: larger than %s, the most gpurig reads from this input", path,
                 gr_size_text(max, words, sizeof(words)));
}

void gr_file_free(struct gr_file *f)
{
  free(f->data);
  memset(f, 0, sizeof(*f));
}

/* Whether a file of this mode may be read under flags; else err names it. */
static int check_mode(const char *path, mode_t mode, unsigned flags, struct gr_err *err)
{
  if (S_ISREG(mode) || (S_ISCHR(mode) && (flags & GR_FILE_DEVICE)))
    return 0;
  if (S_ISDIR(mode))
    return gr_fail(err, GR_EXIT_FAIL, "%s: a directory, not a file", path);
  return gr_fail(err, GR_EXIT_FAIL, "%s: %s, not a regular file: gpurig reads only regular files%s", path,
                 gr_file_kind(mode), (flags & GR_FILE_STDIN) ? " (give - to read standard input)" : "");
}

/* The path before anything is opened: opening a FIFO for reading waits for
 * a writer, and opening a device can have effects of its own. */
static int check_path(const char *path, unsigned flags, struct gr_err *err)
{
  struct stat st;
  if (stat(path, &st) != 0) {
    if (errno == ELOOP)
      return gr_fail(err, GR_EXIT_FAIL, "%s: a loop of symbolic links", path);
    return gr_fail(err, GR_EXIT_FAIL, "%s: cannot open: %s", path, strerror(errno));
  }
  return check_mode(path, st.st_mode, flags, err);
}

/* Reading state: the buffer grows to at most max (+ max again in tail mode,
 * where the older half is dropped whenever it fills). */
struct reader {
  const char *path;
  size_t max;
  unsigned flags;
  struct gr_file *f;
  size_t cap;
  size_t total; /* bytes read in all */
};

/* A stream (standard input, a device) read in tail mode is read through to
 * its end; past this many times the cap it is taken for an endless one. */
#define TAIL_STREAM_FACTOR 16u

/* Tail mode: drops all but the newest max bytes read so far. */
static void keep_newest(struct reader *r)
{
  struct gr_file *f = r->f;
  size_t drop = f->len - r->max;
  memmove(f->data, f->data + drop, r->max);
  f->len = r->max;
  f->skipped += drop;
}

static void make_room(struct reader *r)
{
  struct gr_file *f = r->f;
  if ((r->flags & GR_FILE_TAIL) && f->len >= 2 * r->max)
    keep_newest(r);
  if (f->len + 65536 > r->cap) {
    size_t limit = (r->flags & GR_FILE_TAIL) ? 2 * r->max : r->max + 1;
    size_t want = r->cap ? r->cap * 2 : 65536;
    r->cap = want < limit ? want : limit;
    if (r->cap < f->len + 1)
      r->cap = f->len + 1;
    f->data = xrealloc(f->data, r->cap + 1);
  }
}

/* Reads fd until its end (or, for a device, until it has nothing more). */
static int read_all(struct reader *r, int fd, bool device, struct gr_err *err)
{
  struct gr_file *f = r->f;
  for (;;) {
    make_room(r);
    size_t room = r->cap - f->len;
    if (room == 0)
      room = 1; /* one more byte tells whether the cap is exceeded */
    ssize_t n = read(fd, f->data + f->len, room);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 && device && errno == EPIPE)
      continue; /* /dev/kmsg: records were overwritten while reading; go on */
    if (n < 0 && errno == EAGAIN && !device)
      return gr_fail(err, GR_EXIT_FAIL, "%s: no data to read (an empty pipe?)", r->path);
    if (n < 0 && errno == EAGAIN)
      break;
    if (n < 0)
      return gr_fail(err, GR_EXIT_FAIL, "%s: read error: %s", r->path, strerror(errno));
    if (n == 0)
      break;
    f->len += (size_t)n;
    r->total += (size_t)n;
    if (!(r->flags & GR_FILE_TAIL) && f->len > r->max)
      return too_big(r->path, r->max, err);
    if (r->total / TAIL_STREAM_FACTOR > r->max) /* an endless stream: stop, do not keep its tail forever */
      return too_big(r->path, r->max * TAIL_STREAM_FACTOR, err);
  }
  if ((r->flags & GR_FILE_TAIL) && f->len > r->max)
    keep_newest(r);
  return 0;
}

/* A regular file over the cap in tail mode: seek to its last max bytes. */
static void seek_tail(struct reader *r, int fd, off_t size)
{
  if (!(r->flags & GR_FILE_TAIL) || size <= (off_t)r->max)
    return;
  off_t start = size - (off_t)r->max;
  if (lseek(fd, start, SEEK_SET) == start)
    r->f->skipped = (size_t)start;
}

/* After a tail read that skipped something, the first line is partial. */
static void drop_partial_line(struct gr_file *f)
{
  if (!f->skipped || !f->len)
    return;
  char *nl = memchr(f->data, '\n', f->len);
  size_t cut = nl ? (size_t)(nl - f->data) + 1 : f->len;
  memmove(f->data, f->data + cut, f->len - cut);
  f->len -= cut;
  f->skipped += cut;
}

static int read_fd(struct reader *r, int fd, struct gr_err *err)
{
  struct stat st;
  if (fstat(fd, &st) != 0)
    return gr_fail(err, GR_EXIT_FAIL, "%s: cannot read: %s", r->path, strerror(errno));
  bool device = S_ISCHR(st.st_mode);
  if (!r->f->from_stdin && check_mode(r->path, st.st_mode, r->flags, err) != 0)
    return -1;
  r->f->regular = S_ISREG(st.st_mode);
  if (r->f->regular && !(r->flags & GR_FILE_TAIL) && st.st_size > (off_t)r->max)
    return too_big(r->path, r->max, err);
  if (r->f->regular)
    seek_tail(r, fd, st.st_size);
  if (read_all(r, fd, device && !r->f->from_stdin, err) != 0)
    return -1;
  drop_partial_line(r->f);
  r->f->data[r->f->len] = '\0';
  return 0;
}

/* Standard input is the user's own stream: it may block until its writer
 * ends, as `cat x | gpurig` expects; the cap still holds. */
static int read_stdin(struct reader *r, struct gr_err *err)
{
  r->f->from_stdin = true;
  int flags = fcntl(STDIN_FILENO, F_GETFL);
  if (flags < 0)
    return gr_fail(err, GR_EXIT_FAIL, "%s: standard input is closed", r->path);
  if ((flags & O_NONBLOCK) && fcntl(STDIN_FILENO, F_SETFL, flags & ~O_NONBLOCK) != 0)
    return gr_fail(err, GR_EXIT_FAIL, "%s: cannot read standard input: %s", r->path, strerror(errno));
  return read_fd(r, STDIN_FILENO, err);
}

int gr_file_read(const char *path, size_t max, unsigned flags, struct gr_file *f, struct gr_err *err)
{
  struct reader r = {.path = path, .max = max, .flags = flags, .f = f};
  int rc = -1, fd = -1;
  memset(f, 0, sizeof(*f));
  if (!path || !*path)
    return gr_fail(err, GR_EXIT_FAIL, "an empty file name");
  if (gr_file_is_stdin(path)) {
    if (!(flags & GR_FILE_STDIN))
      return gr_fail(err, GR_EXIT_FAIL, "%s: standard input is not read here; give a file", path);
    rc = read_stdin(&r, err);
    goto out;
  }
  if (check_path(path, flags, err) != 0)
    goto out;
  fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    gr_fail(err, GR_EXIT_FAIL, "%s: cannot open: %s", path, strerror(errno));
    goto out;
  }
  rc = read_fd(&r, fd, err);
out:
  if (fd >= 0)
    close(fd);
  if (rc != 0)
    gr_file_free(f);
  return rc;
}

/* ---- writing ---- */

/* The one temporary file being written, for the signal handler: a process
 * writes one output file at a time. The handler may only unlink and re-raise. */
static char pending_tmp[PATH_MAX];
static volatile sig_atomic_t pending;
static const int cleanup_sigs[] = {SIGINT, SIGTERM, SIGHUP};
#define NCLEANUP_SIGS (sizeof(cleanup_sigs) / sizeof(cleanup_sigs[0]))
static struct sigaction saved_actions[NCLEANUP_SIGS];

static void on_fatal_signal(int sig)
{
  if (pending)
    unlink(pending_tmp);
  signal(sig, SIG_DFL);
  raise(sig);
}

static void guard_tmp(const char *tmp)
{
  snprintf(pending_tmp, sizeof(pending_tmp), "%s", tmp);
  pending = 1;
  for (size_t i = 0; i < NCLEANUP_SIGS; i++) {
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_fatal_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(cleanup_sigs[i], &sa, &saved_actions[i]);
    /* nohup: the signal stays ignored; a command's own stop handler (export,
     * watch) stays too: it sets a flag, the write finishes and the command
     * exits as its docs say, rather than dying by the signal mid-write */
    if (saved_actions[i].sa_handler != SIG_DFL)
      sigaction(cleanup_sigs[i], &saved_actions[i], NULL);
  }
}

static void unguard_tmp(void)
{
  for (size_t i = 0; i < NCLEANUP_SIGS; i++)
    sigaction(cleanup_sigs[i], &saved_actions[i], NULL);
  pending = 0;
}

/* A target that exists must be a regular file (lstat: a symlink is refused
 * too, whatever it points at, so that /dev/stdout or a planted link is never
 * replaced or written through). */
static int check_target_as(const char *path, bool stdout_ok, struct gr_err *err)
{
  struct stat st;
  if (lstat(path, &st) != 0)
    return errno == ENOENT ? 0 : gr_fail(err, GR_EXIT_FAIL, "%s: cannot write: %s", path, strerror(errno));
  if (S_ISREG(st.st_mode))
    return 0;
  return gr_fail(err, GR_EXIT_FAIL, "%s: %s; gpurig writes only a new file or over a regular file%s", path,
                 gr_file_kind(st.st_mode), stdout_ok ? " (give - for standard output)" : "");
}

static int check_target(const char *path, struct gr_err *err)
{
  return check_target_as(path, true, err);
}

/* Creates the temporary file beside path with O_EXCL|O_NOFOLLOW. */
static int create_tmp(struct gr_out *w, struct gr_err *err)
{
  for (int k = 0; k < GR_OUT_TMP_TRIES; k++) {
    free(w->tmp);
    w->tmp = xasprintf("%s.tmp.%ld.%d", w->path, (long)getpid(), k);
    if (strlen(w->tmp) >= sizeof(pending_tmp))
      return gr_fail(err, GR_EXIT_FAIL, "%s: cannot write: %s", w->path, strerror(ENAMETOOLONG));
    w->fd = open(w->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (w->fd >= 0) {
      guard_tmp(w->tmp);
      return 0;
    }
    if (errno != EEXIST)
      return gr_fail(err, GR_EXIT_FAIL, "%s: cannot write: %s", w->path, strerror(errno));
  }
  return gr_fail(err, GR_EXIT_FAIL, "%s: cannot write: all %d names for a temporary file beside it exist (%s.tmp.%ld.*)",
                 w->path, GR_OUT_TMP_TRIES, w->path, (long)getpid());
}

static void out_finish(struct gr_out *w)
{
  if (w->tmp && w->fd >= 0)
    close(w->fd);
  if (w->tmp)
    unguard_tmp();
  free(w->path);
  free(w->tmp);
  memset(w, 0, sizeof(*w));
  w->fd = -1;
}

int gr_out_open(const char *path, struct gr_out *w, struct gr_err *err)
{
  memset(w, 0, sizeof(*w));
  w->fd = -1;
  if (!path || !*path)
    return gr_fail(err, GR_EXIT_FAIL, "an empty output file name (give - for standard output)");
  w->path = xstrdup(path);
  if (gr_file_is_stdout(path)) {
    fflush(stdout);
    w->fd = STDOUT_FILENO;
    return 0;
  }
  if (check_target(path, err) != 0 || create_tmp(w, err) != 0) {
    out_finish(w);
    return -1;
  }
  return 0;
}

/* Its directory is there and writable, and path is a regular file or none. */
static int check_place(const char *path, bool stdout_ok, struct gr_err *err)
{
  char *dir = xstrdup(path), *slash = strrchr(dir, '/');
  const char *parent = slash ? (slash == dir ? "/" : (*slash = '\0', dir)) : ".";
  struct stat st;
  int rc = 0;
  if (stat(parent, &st) != 0 || !S_ISDIR(st.st_mode))
    rc = gr_fail(err, GR_EXIT_FAIL, "%s: %s: no such directory", path, parent);
  else if (access(parent, W_OK) != 0)
    rc = gr_fail(err, GR_EXIT_FAIL, "%s: cannot write: %s: %s", path, parent, strerror(errno));
  else
    rc = check_target_as(path, stdout_ok, err);
  free(dir);
  return rc;
}

int gr_log_open(const char *path, struct gr_err *err)
{
  if (gr_file_is_stdout(path))
    return gr_fail(err, GR_EXIT_FAIL, "%s: a log is written while it grows: name a file", path);
  if (check_place(path, false, err) != 0)
    return -1;
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0666);
  struct stat st;
  if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))) { /* replaced between the check and the open */
    close(fd);
    fd = -1;
    errno = EINVAL;
  }
  if (fd < 0)
    return gr_fail(err, GR_EXIT_FAIL, "%s: cannot write: %s", path, strerror(errno));
  return fd;
}

void gr_out_write(struct gr_out *w, const void *data, size_t len)
{
  const char *p = data;
  while (len > 0 && !w->failed) {
    ssize_t n = write(w->fd, p, len);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      w->failed = true;
      w->saved_errno = n < 0 ? errno : EIO;
      break;
    }
    p += n;
    len -= (size_t)n;
  }
}

int gr_out_commit(struct gr_out *w, struct gr_err *err)
{
  int rc = -1;
  if (!w->tmp) { /* standard output: its errors are checked when the command ends */
    rc = w->failed ? gr_fail(err, GR_EXIT_CANNOT_RUN, "write error on standard output: %s", strerror(w->saved_errno)) : 0;
    out_finish(w);
    return rc;
  }
  if (!w->failed && fsync(w->fd) != 0) {
    w->failed = true;
    w->saved_errno = errno;
  }
  if (!w->failed && close(w->fd) != 0) {
    w->failed = true;
    w->saved_errno = errno;
  }
  w->fd = -1;
  if (!w->failed && rename(w->tmp, w->path) == 0) {
    rc = 0;
  } else {
    gr_fail(err, GR_EXIT_FAIL, "%s: cannot write: %s", w->path, strerror(w->failed ? w->saved_errno : errno));
    unlink(w->tmp);
  }
  out_finish(w);
  return rc;
}

void gr_out_abort(struct gr_out *w)
{
  if (w->tmp) {
    if (w->fd >= 0)
      close(w->fd);
    w->fd = -1;
    unlink(w->tmp);
  }
  out_finish(w);
}

int gr_out_check(const char *path, struct gr_err *err)
{
  struct gr_out w;
  if (gr_out_open(path, &w, err) != 0)
    return -1;
  gr_out_abort(&w); /* standard output: nothing was written to abort */
  return 0;
}

int gr_file_write(const char *path, const void *data, size_t len, struct gr_err *err)
{
  struct gr_out w;
  if (gr_out_open(path, &w, err) != 0)
    return -1;
  gr_out_write(&w, data, len);
  return gr_out_commit(&w, err);
}
