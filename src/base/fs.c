#include "base/fs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
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

int gr_fs_open(const struct gr_fs *fs, const char *abspath, int flags)
{
  char path[8192];
  if (!gr_fs_path(fs, abspath, path, sizeof(path)))
    return -ENAMETOOLONG;
  int fd = open(path, flags | O_CLOEXEC);
  return fd >= 0 ? fd : -errno;
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

ssize_t gr_fs_read(const struct gr_fs *fs, const char *abspath, char *buf, size_t cap)
{
  ssize_t total = 0;
  if (cap == 0)
    return -EINVAL;
  buf[0] = '\0';
  int fd = gr_fs_open(fs, abspath, O_RDONLY);
  if (fd < 0)
    return fd;
  while ((size_t)total < cap - 1) {
    ssize_t r = read(fd, buf + total, cap - 1 - (size_t)total);
    if (r < 0) {
      if (errno == EINTR)
        continue;
      total = -errno;
      goto out;
    }
    if (r == 0)
      break;
    total += r;
  }
  buf[total] = '\0';
out:
  close(fd);
  return total;
}

int gr_fs_read_str(const struct gr_fs *fs, const char *abspath, char *buf, size_t cap)
{
  ssize_t r = gr_fs_read(fs, abspath, buf, cap);
  if (r < 0)
    return (int)r;
  /* sysfs text never contains NUL; a NUL means a binary or corrupted file */
  if (memchr(buf, '\0', (size_t)r))
    return -EILSEQ;
  str_rtrim(buf);
  return 0;
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
