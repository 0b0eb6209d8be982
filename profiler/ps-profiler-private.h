/* ps-profiler-private.h: helpers shared by the files of profiler/.  Not
 * installed. */
#ifndef PS_PROFILER_PRIVATE_H
#define PS_PROFILER_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ps-file.h"
#include "ps-profiler.h"

/* A growing string; `oom` is set (and further output dropped) when memory
 * runs out. */
typedef struct ps__ksrc_buf {
  char *s;
  size_t len;
  uint32_t cap;
  bool oom;
} ps__ksrc_buf;

void ps__ksrc_printf (ps__ksrc_buf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__ ((format (printf, 2, 3)))
#endif
    ;


/* The CUDA toolkit's include folder (for cuda_fp16.h and cuda_bf16.h):
 * $CUDA_HOME, $CUDA_PATH, the toolkit_root of the build, /usr/local/cuda,
 * the first that has include/cuda_fp16.h.  Returns false when none has. */
bool ps__toolkit_include (char *buf, size_t cap);

/* The folder of the toolkit root for finding libraries (lib64, lib). */
bool ps__toolkit_root (char *buf, size_t cap);


/* NVRTC: compiles `code` for `arch` ("compute_90" gives PTX, "sm_90" also a
 * cubin when want_cubin).  name_expr, when not NULL, is registered with
 * nvrtcAddNameExpression and its lowered name copied into lowered (cap
 * bytes).  The output (PTX, or the cubin) is malloc'd into *out.  On
 * failure err says why; *log (may be NULL) receives NVRTC's log. */
int ps__nvrtc_compile (const char *code, const char *name, const char *arch,
                       const char *include_dir, bool want_cubin, const char *name_expr,
                       char *lowered, size_t lowered_cap, char **out, size_t *out_len,
                       char **log, ps_gpu_error *err);

/* Loads NVRTC (once per process); 0 or PS_ENOGPU with err set. */
int ps__nvrtc_load (ps_gpu_error *err);
/* NVRTC's version, after a successful load. */
void ps__nvrtc_version (int *major, int *minor);
/* The oldest and newest compute capability (e.g. 75, 120) NVRTC targets. */
void ps__nvrtc_arch_range (int *lo, int *hi);

/* Environment variables that name the libraries to load instead of the
 * usual sonames (for tests and unusual installs). */
#define PS_ENV_LIBCUDA "PLANSCOPE_LIBCUDA"
#define PS_ENV_LIBNVRTC "PLANSCOPE_LIBNVRTC"
#define PS_ENV_LIBCUPTI "PLANSCOPE_LIBCUPTI"

#endif
