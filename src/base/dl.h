/* Run-time loading of vendor libraries (libnvidia-ml.so.1, libcuda.so.1,
 * libnccl.so.2): gpurig builds without them and says what is missing where
 * they are absent. $GPURIG_DRIVER_DIR, when set, is searched instead of the
 * system's library path (the tests point it at the stand-in libraries). */
#ifndef GPURIG_DL_H
#define GPURIG_DL_H

#include <stdbool.h>
#include <stddef.h>

/* One symbol to resolve: the names to try, newest version first (up to 3,
 * unused ones NULL), and where to store the address. */
struct gr_dl_sym {
  void **slot;
  const char *names[3];
  bool required;
};

/* Opens soname; returns the handle (close with gr_dl_close) or NULL with
 * why filled ("libcuda.so.1: cannot open shared object file ..."). */
void *gr_dl_open(const char *soname, char *why, size_t cap);
/* The same for a system library that is no vendor's (ncurses, for watch's
 * view alone): $GPURIG_DRIVER_DIR is not searched. */
void *gr_dl_open_system(const char *soname, char *why, size_t cap);
void gr_dl_close(void *handle);

/* Resolves each symbol; optional ones that are absent are set to NULL.
 * Returns 0, or -1 with why naming the first required symbol missing. */
int gr_dl_bind(void *handle, const char *soname, const struct gr_dl_sym *syms, size_t n, char *why, size_t cap);

/* A library opened at run time as a fact about a machine (doctor's
 * inventory: the CUDA driver's and NCCL's versions, HIP's and RCCL's). Zeroed it is unknown:
 * nobody asked (a description of a machine has no libraries to ask), which
 * is not the same as absent, and no version is ever 0. */
enum gr_lib_state { GR_LIB_UNKNOWN, GR_LIB_ABSENT, GR_LIB_PRESENT };
struct gr_lib_version {
  enum gr_lib_state state;
  char version[32]; /* "12.4", "2.21.5"; "" unless present, and "" when present but it gave none */
  char driver[32];  /* the driver's version where the library answers for one apart from its own
                       (HIP's hipDriverGetVersion: "6.0.32830"); "" otherwise or unknown */
};

#endif
