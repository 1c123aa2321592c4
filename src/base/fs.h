/* Every read of /sys, /proc and /dev goes through a struct gr_fs, so that a
 * gathered tree (hwloc-gather-topology, `--root DIR`) replays a machine. */
#ifndef GPURIG_FS_H
#define GPURIG_FS_H

#include <dirent.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct gr_fs {
  char root[4096]; /* "" for the live system, else a directory without trailing '/' */
};

/* root may be NULL or "/" for the live machine. Returns -1 if the root is too long. */
int gr_fs_init(struct gr_fs *fs, const char *root);
bool gr_fs_is_live(const struct gr_fs *fs);

/* Joins root and an absolute path into buf; returns buf (truncation is reported as NULL). */
char *gr_fs_path(const struct gr_fs *fs, const char *abspath, char *buf, size_t cap);

/* Opens root+abspath with open(2) flags (O_CLOEXEC is added). Returns an fd
 * the caller closes, or -errno. */
int gr_fs_open(const struct gr_fs *fs, const char *abspath, int flags);

/* Opens the directory root+abspath. Returns a DIR* the caller closes with
 * closedir, or NULL with errno set. */
DIR *gr_fs_opendir(const struct gr_fs *fs, const char *abspath);

/* Reads a whole small file (at most cap-1 bytes, NUL-terminated, trailing
 * whitespace kept). Returns bytes read, or -errno. */
ssize_t gr_fs_read(const struct gr_fs *fs, const char *abspath, char *buf, size_t cap);

/* Like gr_fs_read but trims trailing whitespace; returns 0 or -errno. */
int gr_fs_read_str(const struct gr_fs *fs, const char *abspath, char *buf, size_t cap);

/* Reads a symlink's last path component (e.g. a driver name); 0 or -errno. */
int gr_fs_link_basename(const struct gr_fs *fs, const char *abspath, char *buf, size_t cap);

/* Resolves a symlink target inside the root (relative targets are resolved
 * against the link's directory, then normalised lexically). Returns the
 * absolute path *inside* the root ("/sys/devices/pci0000:17/..."). 0 or -errno. */
int gr_fs_resolve(const struct gr_fs *fs, const char *abspath, char *out, size_t cap);

#endif
