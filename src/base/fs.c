#include "base/fs.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"

int gr_fs_init(struct gr_fs *fs, const char *root)
{
  fs->root[0] = '\0';
  if (!root || !*root || strcmp(root, "/") == 0)
    return 0;
  size_t n = strlen(root);
  while (n > 1 && root[n - 1] == '/')
    n--;
  if (n >= sizeof(fs->root))
    return -1;
  if (n == 1 && root[0] == '/')
    return 0; /* "///" is "/" too: this machine */
  memcpy(fs->root, root, n);
  fs->root[n] = '\0';
  return 0;
}

bool gr_fs_is_live(const struct gr_fs *fs)
{
  return fs->root[0] == '\0';
}

char *gr_fs_path(const struct gr_fs *fs, const char *abspath, char *buf, size_t cap)
{
  int n = snprintf(buf, cap, "%s%s", fs->root, abspath);
  if (n < 0 || (size_t)n >= cap)
    return NULL;
  return buf;
}

const char *gr_fs_strerror(int e)
{
  switch (e < 0 ? -e : e) {
  case GR_ENOTREG:
    return "not a regular file (a FIFO, device or socket)";
  case GR_EBINARY:
    return "binary data, not text";
  case GR_ETOOBIG:
    return "larger than expected for this file";
  case GR_EOUTSIDE:
    return "a symbolic link that leads out of the --root tree";
  default:
    return strerror(e < 0 ? -e : e);
  }
}

/* O_NONBLOCK: a FIFO opens at once instead of waiting for a writer (and is
 * then refused by fstat); a regular file ignores the flag. */
static int open_checked(const struct gr_fs *fs, const char *abspath, int flags, bool device_ok)
{
  char path[8192];
  struct stat st;
  if (!gr_fs_path(fs, abspath, path, sizeof(path)))
    return -ENAMETOOLONG;
  int fd = open(path, flags | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0)
    return -errno;
  if (fstat(fd, &st) != 0 || !(S_ISREG(st.st_mode) || (device_ok && S_ISCHR(st.st_mode)))) {
    int e = S_ISDIR(st.st_mode) ? EISDIR : GR_ENOTREG;
    close(fd);
    return -e;
  }
  return fd;
}

int gr_fs_open(const struct gr_fs *fs, const char *abspath, int flags)
{
  return open_checked(fs, abspath, flags, false);
}

int gr_fs_open_device(const struct gr_fs *fs, const char *abspath, int flags)
{
  return open_checked(fs, abspath, flags, gr_fs_is_live(fs));
}

DIR *gr_fs_opendir(const struct gr_fs *fs, const char *abspath)
{
  char path[8192];
  if (!gr_fs_path(fs, abspath, path, sizeof(path))) {
    errno = ENAMETOOLONG;
    return NULL;
  }
  return opendir(path);
}

/* Reads up to cap-1 bytes from fd and closes it; *more tells whether the
 * file goes on. */
static ssize_t read_fd_prefix(int fd, char *buf, size_t cap, bool *more)
{
  ssize_t total = 0;
  while ((size_t)total < cap - 1) {
    ssize_t r = read(fd, buf + total, cap - 1 - (size_t)total);
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0) {
      total = -errno;
      goto out;
    }
    if (r == 0)
      break;
    total += r;
  }
  buf[total] = '\0';
  if (more) {
    char extra;
    ssize_t r;
    do
      r = read(fd, &extra, 1);
    while (r < 0 && errno == EINTR);
    *more = r > 0;
  }
out:
  close(fd);
  return total;
}

/* Reads up to cap-1 bytes; *more tells whether the file goes on. */
static ssize_t read_prefix(const struct gr_fs *fs, const char *abspath, char *buf, size_t cap, bool *more)
{
  if (cap == 0)
    return -EINVAL;
  buf[0] = '\0';
  int fd = gr_fs_open(fs, abspath, O_RDONLY);
  if (fd < 0)
    return fd;
  return read_fd_prefix(fd, buf, cap, more);
}

ssize_t gr_fs_read(const struct gr_fs *fs, const char *abspath, char *buf, size_t cap)
{
  return read_prefix(fs, abspath, buf, cap, NULL);
}

/* A sysfs value read into buf (r bytes, *more if the file went on): text
 * without a trailing newline, or why not. */
static int finish_str(char *buf, ssize_t r, bool more)
{
  if (r < 0)
    return (int)r;
  /* sysfs text never contains NUL; a NUL means a binary or corrupted file */
  if (memchr(buf, '\0', (size_t)r))
    return -GR_EBINARY;
  if (more) /* a cut value would be read as a different one */
    return -GR_ETOOBIG;
  str_rtrim(buf);
  return 0;
}

int gr_fs_read_str(const struct gr_fs *fs, const char *abspath, char *buf, size_t cap)
{
  bool more = false;
  ssize_t r = read_prefix(fs, abspath, buf, cap, &more); /* before finish_str reads more */
  return finish_str(buf, r, more);
}

int gr_fs_open_dir(const struct gr_fs *fs, const char *abspath)
{
  char path[8192];
  if (!gr_fs_path(fs, abspath, path, sizeof(path)))
    return -ENAMETOOLONG;
  int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  return fd < 0 ? -errno : fd;
}

int gr_fs_read_str_at(int dirfd, const char *name, char *buf, size_t cap)
{
  struct stat st;
  bool more = false;
  if (cap == 0)
    return -EINVAL;
  buf[0] = '\0';
  /* O_NOFOLLOW: a link planted in the directory after it was opened is not followed */
  int fd = openat(dirfd, name, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0)
    return errno == ELOOP ? -GR_ENOTREG : -errno;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return -GR_ENOTREG;
  }
  ssize_t r = read_fd_prefix(fd, buf, cap, &more);
  return finish_str(buf, r, more);
}

/* readlink of a path under the root, NUL-terminated; 0 or -errno */
static int read_link(const struct gr_fs *fs, const char *abspath, char *target, size_t cap)
{
  char path[8192];
  if (!gr_fs_path(fs, abspath, path, sizeof(path)))
    return -ENAMETOOLONG;
  ssize_t n = readlink(path, target, cap - 1);
  if (n < 0)
    return -errno;
  target[n] = '\0';
  return 0;
}

int gr_fs_link_basename(const struct gr_fs *fs, const char *abspath, char *buf, size_t cap)
{
  char target[4096];
  int r = read_link(fs, abspath, target, sizeof(target));
  if (r != 0)
    return r;
  const char *base = strrchr(target, '/');
  base = base ? base + 1 : target;
  if (strlen(base) >= cap)
    return -ENAMETOOLONG;
  strcpy(buf, base);
  return 0;
}

/* Lexically normalises an absolute path: removes "." and resolves "..". */
static void normalise_path(char *p)
{
  char out[4096];
  size_t olen = 0;
  const char *s = p;
  out[0] = '\0';
  while (*s) {
    while (*s == '/')
      s++;
    if (!*s)
      break;
    const char *e = strchr(s, '/');
    size_t len = e ? (size_t)(e - s) : strlen(s);
    if (len == 1 && s[0] == '.') {
      /* skip */
    } else if (len == 2 && s[0] == '.' && s[1] == '.') {
      while (olen > 0 && out[olen - 1] != '/')
        olen--;
      if (olen > 0)
        olen--;
      out[olen] = '\0';
    } else if (olen + 1 + len < sizeof(out)) {
      out[olen++] = '/';
      memcpy(out + olen, s, len);
      olen += len;
      out[olen] = '\0';
    }
    s += len;
  }
  if (olen == 0)
    strcpy(out, "/");
  strcpy(p, out);
}

int gr_fs_resolve(const struct gr_fs *fs, const char *abspath, char *out, size_t cap)
{
  char target[4096], joined[8192];
  int r = read_link(fs, abspath, target, sizeof(target));
  if (r != 0)
    return r;
  if (target[0] == '/') {
    snprintf(joined, sizeof(joined), "%s", target);
  } else {
    const char *slash = strrchr(abspath, '/');
    int dirlen = slash ? (int)(slash - abspath) : 0;
    snprintf(joined, sizeof(joined), "%.*s/%s", dirlen, abspath, target);
  }
  if (strlen(joined) >= 4096)
    return -ENAMETOOLONG;
  normalise_path(joined);
  if (strlen(joined) >= cap)
    return -ENAMETOOLONG;
  strcpy(out, joined);
  return 0;
}

/* ---- checking a gathered tree before it is read ---- */

#define TREE_MAX_ENTRIES 2000000u
#define TREE_MAX_DEPTH 128
#define TREE_MAX_FILE (64u << 20)

struct tree_walk {
  const struct gr_fs *fs;
  char real_root[PATH_MAX];
  size_t real_len;
  size_t entries;
  struct gr_err *err;
};

/* A symlink must stay inside the tree (or lead nowhere: gathered trees keep
 * links whose targets were not copied, and reading them just finds nothing). */
static int check_link(struct tree_walk *w, const char *path)
{
  char real[PATH_MAX];
  if (!realpath(path, real)) {
    if (errno == ELOOP)
      return gr_fail(w->err, GR_EXIT_FAIL, "%s: a loop of symbolic links", path);
    return 0;
  }
  if (strncmp(real, w->real_root, w->real_len) == 0 && (real[w->real_len] == '/' || real[w->real_len] == '\0'))
    return 0;
  return gr_fail(w->err, GR_EXIT_FAIL, "%s: a symbolic link that leads out of the --root tree (to %s); "
                 "gpurig reads only what is inside the tree", path, real);
}

static int check_entry(struct tree_walk *w, const char *path, const struct stat *st)
{
  if (++w->entries > TREE_MAX_ENTRIES)
    return gr_fail(w->err, GR_EXIT_FAIL, "%s: more than %u entries: not a gathered /sys and /proc tree",
                   w->fs->root, TREE_MAX_ENTRIES);
  if (S_ISLNK(st->st_mode))
    return check_link(w, path);
  if (S_ISREG(st->st_mode) && st->st_size > (off_t)TREE_MAX_FILE)
    return gr_fail(w->err, GR_EXIT_FAIL, "%s: larger than %u MiB: not a gathered sysfs or procfs file", path,
                   TREE_MAX_FILE >> 20);
  if (S_ISREG(st->st_mode) || S_ISDIR(st->st_mode))
    return 0;
  return gr_fail(w->err, GR_EXIT_FAIL, "%s: %s in a gathered tree; gpurig reads only regular files there", path,
                 S_ISFIFO(st->st_mode) ? "a FIFO (named pipe)"
                 : S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode) ? "a device node"
                 : "a socket");
}

/* Walks one directory without following links (they are checked, not
 * entered); path holds the directory and has room to grow. */
static int walk_dir(struct tree_walk *w, char *path, size_t len, int depth)
{
  if (depth > TREE_MAX_DEPTH)
    return gr_fail(w->err, GR_EXIT_FAIL, "%s: more than %d directory levels: not a gathered tree", path,
                   TREE_MAX_DEPTH);
  DIR *d = opendir(path);
  if (!d)
    return 0; /* unreadable: the reads that need it say so */
  int rc = 0;
  struct dirent *e;
  while (rc == 0 && (e = readdir(d))) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
      continue;
    size_t n = strlen(e->d_name);
    if (len + 1 + n >= PATH_MAX)
      continue; /* too long to open by name anyway */
    path[len] = '/';
    memcpy(path + len + 1, e->d_name, n + 1);
    struct stat st;
    if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
      rc = check_entry(w, path, &st);
      if (rc == 0 && S_ISDIR(st.st_mode))
        rc = walk_dir(w, path, len + 1 + n, depth + 1);
    }
    path[len] = '\0';
  }
  closedir(d);
  return rc;
}

int gr_fs_check_tree(const struct gr_fs *fs, struct gr_err *err)
{
  if (gr_fs_is_live(fs))
    return 0;
  struct tree_walk *w = xcalloc(1, sizeof(*w));
  char *path = xmalloc(PATH_MAX);
  int rc = 0;
  w->fs = fs;
  w->err = err;
  if (!realpath(fs->root, w->real_root)) {
    rc = gr_fail(err, GR_EXIT_FAIL, "%s: %s", fs->root, strerror(errno));
    goto out;
  }
  w->real_len = strlen(w->real_root);
  if (w->real_len == 1) /* the tree is "/": every link stays inside */
    w->real_len = 0;
  snprintf(path, PATH_MAX, "%s", fs->root);
  rc = walk_dir(w, path, strlen(path), 0);
out:
  free(path);
  free(w);
  return rc;
}
