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

/* gpurig's own error numbers beside errno's (returned negated like them),
 * for what the kernel has no word for. gr_fs_strerror names both kinds. */
enum {
  GR_ENOTREG = 4096, /* not a regular file: a FIFO, device or socket (never opened for reading) */
  GR_EBINARY,        /* binary data (a NUL byte) where text is expected */
  GR_ETOOBIG,        /* more data than the reader's cap */
  GR_EOUTSIDE,       /* a symlink that leads out of the --root tree */
};
const char *gr_fs_strerror(int e); /* e > 0 or < 0 */

/* Opens root+abspath for reading: only a regular file, without blocking
 * (O_NONBLOCK, O_NOCTTY and O_CLOEXEC are added), checked with fstat after
 * the open. Returns an fd the caller closes, or -errno / -GR_ENOTREG. */
int gr_fs_open(const struct gr_fs *fs, const char *abspath, int flags);
/* The same for a character device that is meant (the live /dev/kmsg); in a
 * --root tree the file stands for the device and must be regular. */
int gr_fs_open_device(const struct gr_fs *fs, const char *abspath, int flags);

/* Opens the directory root+abspath. Returns a DIR* the caller closes with
 * closedir, or NULL with errno set. */
DIR *gr_fs_opendir(const struct gr_fs *fs, const char *abspath);

/* Reads a small file's first cap-1 bytes (NUL-terminated, trailing
 * whitespace kept; config space is read this way). Returns bytes read, or
 * -errno. */
ssize_t gr_fs_read(const struct gr_fs *fs, const char *abspath, char *buf, size_t cap);

/* Reads a small text attribute whole and trims trailing whitespace; 0, or
 * -errno, -GR_EBINARY (a NUL byte), -GR_ETOOBIG (cap-1 bytes or more). */
int gr_fs_read_str(const struct gr_fs *fs, const char *abspath, char *buf, size_t cap);
/* A directory under the root opened once (a file descriptor the caller
 * closes), for repeated reads of the files in it with gr_fs_read_str_at:
 * a sampler walks the path once, not at every read. -errno on failure. */
int gr_fs_open_dir(const struct gr_fs *fs, const char *abspath);
/* As gr_fs_read_str, for the file name in the directory dirfd: regular
 * files only, never blocking, and a symbolic link is not followed. */
int gr_fs_read_str_at(int dirfd, const char *name, char *buf, size_t cap);

/* Reads a symlink's last path component (e.g. a driver name); 0 or -errno. */
int gr_fs_link_basename(const struct gr_fs *fs, const char *abspath, char *buf, size_t cap);

/* Resolves a symlink target inside the root (relative targets are resolved
 * against the link's directory, then normalised lexically). Returns the
 * absolute path *inside* the root ("/sys/devices/pci0000:17/..."). 0 or -errno. */
int gr_fs_resolve(const struct gr_fs *fs, const char *abspath, char *out, size_t cap);

/* Checks a gathered tree before anything reads it, libhwloc included (it
 * reads proc/cpuinfo, proc/hwloc-nofile-info and much of sys/ with fgets,
 * without looking first): every entry must be a directory, a regular file
 * or a symlink that stays inside the tree (or leads nowhere). A FIFO, a
 * device node, a socket, a symlink loop, a link out of the tree or a file
 * hwloc reads whole that is over 64 MiB is refused with err naming it.
 * Links that stay inside (sysfs is full of them) are fine. 0 or -1. */
struct gr_err;
int gr_fs_check_tree(const struct gr_fs *fs, struct gr_err *err);

#endif
