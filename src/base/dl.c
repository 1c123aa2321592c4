/* dlopen wrapper shared by the NVIDIA backends (see dl.h). */
#include "base/dl.h"
#include "base/term.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

static void *open_path(const char *path, const char *soname, char *why, size_t cap);

void *gr_dl_open(const char *soname, char *why, size_t cap)
{
  char path[4096];
  const char *dir = getenv("GPURIG_DRIVER_DIR");
  if (dir && *dir)
    snprintf(path, sizeof(path), "%s/%s", dir, soname);
  else
    snprintf(path, sizeof(path), "%s", soname);
  return open_path(path, soname, why, cap);
}

void *gr_dl_open_system(const char *soname, char *why, size_t cap)
{
  return open_path(soname, soname, why, cap);
}

static void *open_path(const char *path, const char *soname, char *why, size_t cap)
{
  /* the C library's streams while it loads: see gr_term_std_original */
  struct gr_term_std saved = gr_term_std_original();
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  gr_term_std_restore(saved);
  if (!h) {
    const char *e = dlerror();
    snprintf(why, cap, "%s", e ? e : soname);
  }
  return h;
}

void gr_dl_close(void *handle)
{
  if (handle)
    dlclose(handle);
}

int gr_dl_bind(void *handle, const char *soname, const struct gr_dl_sym *syms, size_t n, char *why, size_t cap)
{
  for (size_t i = 0; i < n; i++) {
    void *addr = NULL;
    for (size_t k = 0; k < 3 && syms[i].names[k] && !addr; k++)
      addr = dlsym(handle, syms[i].names[k]);
    *syms[i].slot = addr;
    if (!addr && syms[i].required) {
      snprintf(why, cap, "%s has no %s (driver too old for gpurig?)", soname, syms[i].names[0]);
      return -1;
    }
  }
  return 0;
}
