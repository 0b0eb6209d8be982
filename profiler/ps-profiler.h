/* ps-profiler.h: runs a plan on a real GPU and measures it.
 *
 * Nothing here links against the CUDA driver, NVRTC or CUPTI: they are
 * loaded at run time (dlopen), so every program starts on a machine without
 * an NVIDIA driver and can say why GPU runs are unavailable.  Every failure
 * is classified (ps_gpu_status) and described in one line of text that
 * names what was tried, e.g. "no NVIDIA driver: libcuda.so.1 could not be
 * loaded (libcuda.so.1: cannot open shared object file: ...)".
 *
 * Kernels come from three places (ps-kernel-src.h): generated CUDA C for
 * built-in, synthetic and fused kernels, and user modules.  A run places
 * pooled buffers in one allocation at their planned offsets, submits the
 * plan's steps on its streams with its events (or captures that submission
 * into a CUDA graph and replays it), and maps CUPTI activity records back to
 * plan steps: the result is a timeline (ps-timeline.h) with source
 * "measured" whose spans carry the medians of the measured iterations.
 *
 * Built without the CUDA toolkit headers, the entry points that need a GPU
 * or NVRTC fail with PS_GPU_NOT_BUILT; kernel source generation works in
 * every build. */
#ifndef PS_PROFILER_H
#define PS_PROFILER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ps-plan.h"
#include "ps-timeline.h"

/* Why the GPU could not be used, or what failed while using it. */
typedef enum ps_gpu_status {
  PS_GPU_OK = 0,
  /* The GPU is unavailable on this machine (planscope-cli exits 3). */
  PS_GPU_NOT_BUILT,          /* built without the CUDA toolkit headers */
  PS_GPU_NO_DRIVER,          /* libcuda.so.1 missing, or the CUDA stub library */
  PS_GPU_DRIVER_FAILED,      /* the driver loaded but cannot be used (too old, cuInit failed) */
  PS_GPU_NO_DEVICE,          /* the driver sees no GPU */
  PS_GPU_UNSUPPORTED_DEVICE, /* a GPU older than NVRTC can target */
  PS_GPU_NO_NVRTC,           /* libnvrtc missing or unusable */
  PS_GPU_NO_CUPTI,           /* libcupti missing */
  PS_GPU_CUPTI_FAILED,       /* CUPTI loaded but refused to trace */
  /* The run itself failed (planscope-cli exits 1). */
  PS_GPU_BAD_MODULE,         /* a user module cannot be read, compiled or loaded */
  PS_GPU_COMPILE_FAILED,     /* NVRTC rejected generated source */
  PS_GPU_CUDA_FAILED,        /* a CUDA call failed during the run */
  PS_GPU_RECORDS,            /* CUPTI's records do not account for the run */
  PS_GPU_NO_MEMORY,          /* host or device memory ran out */
  PS_GPU_IO,                 /* a file could not be read or written */
  PS_GPU_CANCELLED,
  PS_GPU__COUNT
} ps_gpu_status;

typedef struct ps_gpu_error {
  ps_gpu_status status;
  int code;          /* the CUresult, nvrtcResult or CUptiResult behind it, or 0 */
  char message[1024]; /* one line, no newline */
} ps_gpu_error;

void ps_gpu_error_clear (ps_gpu_error *e);
/* Sets e (when not NULL) and returns the matching PS_E* code: PS_ENOGPU
 * for the unavailable classes, PS_EINVAL for bad modules, PS_ENOMEM,
 * PS_EIO, PS_ECANCELED, else PS_EINVAL.  The message is prefixed with the
 * class summary ("no NVIDIA driver: ..."). */
int ps_gpu_error_set (ps_gpu_error *e, ps_gpu_status status, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__ ((format (printf, 4, 5)))
#endif
    ;

/* "no NVIDIA driver", "unsupported GPU", ... (the start of messages). */
const char *ps_gpu_status_summary (ps_gpu_status s);
/* True for the classes that mean "this machine cannot run plans". */
bool ps_gpu_status_unavailable (ps_gpu_status s);
/* The PS_E* code for a status (see ps_gpu_error_set). */
int ps_gpu_status_code (ps_gpu_status s);
/* True when the real backend was compiled in. */
bool ps_gpu_backend_built (void);

/* ---- the GPU ------------------------------------------------------------ */

typedef struct ps_gpu_info {
  char name[256];         /* "NVIDIA H200" */
  int cc_major, cc_minor; /* compute capability */
  int driver_version;     /* e.g. 13000 */
  int nvrtc_major, nvrtc_minor;
  uint32_t cupti_api;     /* cuptiGetVersion: CUPTI's API version, e.g. 130001 */
  uint32_t sm_count;
  uint64_t total_mem;
} ps_gpu_info;

typedef struct ps_gpu ps_gpu;

/* Loads the driver, picks device 0, loads NVRTC and CUPTI, in that order,
 * and stops at the first that fails (CUPTI is only tried once the driver
 * initialised: without one it cannot work).  Returns 0 or a PS_E* code
 * with err set. */
int ps_gpu_open (ps_gpu **out, ps_gpu_error *err);
void ps_gpu_close (ps_gpu *gpu);
const ps_gpu_info *ps_gpu_get_info (const ps_gpu *gpu);
/* ps_gpu_open and ps_gpu_close: is a GPU usable here, and if not, why?
 * (The app shows the message as the GPU button's tooltip.) */
int ps_gpu_probe (ps_gpu_info *info, ps_gpu_error *err);

/* ---- profiling ---------------------------------------------------------- */

typedef enum ps_profile_mode {
  PS_PROFILE_STREAMS = 0, /* direct submission on the plan's streams with events */
  PS_PROFILE_GRAPH,       /* the same submission captured into a CUDA graph, replayed */
} ps_profile_mode;

const char *ps_profile_mode_name (ps_profile_mode m);

typedef struct ps_profile_options {
  ps_profile_mode mode;
  uint32_t iterations; /* measured runs, reported as medians; default 10 */
  uint32_t warmup;     /* runs before them, discarded; default 2 */
  bool overhead;       /* also time runs without CUPTI (default true) */
  /* Called between runs; may be NULL.  Return false to cancel. */
  bool (*progress) (void *ctx, const char *what, double fraction);
  void *progress_ctx;
} ps_profile_options;

void ps_profile_options_init (ps_profile_options *o);

typedef struct ps_profile_result {
  /* The measured timeline (source PS_TL_MEASURED, finished): one span per
   * non-event step at its median start and duration. */
  ps_timeline timeline;
  uint32_t iterations;
  double *step_ns;       /* per plan step: median measured duration, < 0 when none */
  double wall_untraced_ns; /* median host wall time of one run without CUPTI, < 0 if not run */
  double wall_traced_ns;   /* the same with CUPTI activity tracing */
  uint64_t records;        /* CUPTI records mapped to steps */
  uint64_t unmatched;      /* records that belonged to no step */
  uint64_t dropped;        /* records CUPTI dropped */
  uint64_t untimed;        /* records without timestamps (start = end = 0) */
  uint64_t expected;       /* kernel, memcpy and memset records the measured runs make */
  uint64_t missing;        /* of those, never seen */
} ps_profile_result;

/* Runs p on the GPU: warm-up runs, then o->iterations measured runs under
 * CUPTI (and as many untraced runs first when o->overhead).  r receives the
 * measured timeline; free it with ps_profile_result_free.  The plan's graph
 * must outlive r (the timeline refers to it).  Never a silent empty
 * result: when a CUPTI record belongs to no step, an expected record never
 * came, or a step with work has no timed run, it fails with
 * PS_GPU_RECORDS and says how many of which kind. */
int ps_gpu_profile (ps_gpu *gpu, const ps_plan *p, const ps_profile_options *o,
                    ps_profile_result *r, ps_gpu_error *err);
void ps_profile_result_free (ps_profile_result *r);

/* The outputs of a plan: external buffers written by some node, and the
 * host side of every device-to-host copy. */
typedef struct ps_check_result {
  bool equal;
  uint32_t outputs;        /* buffers and copies compared */
  uint64_t elements;       /* elements compared */
  uint64_t mismatches;     /* elements outside the tolerance */
  double max_abs_diff;
  char first_mismatch[256]; /* "y[17]: 0.25 vs 0.5" when not equal */
} ps_check_result;

/* Runs a and b (two plans of the same graph, e.g. fused and unfused) once
 * each from the same deterministic inputs, in the given mode, and compares
 * their outputs within the tolerance of each buffer's dtype. */
int ps_gpu_check (ps_gpu *gpu, const ps_plan *a, const ps_plan *b, ps_profile_mode mode,
                  ps_check_result *r, ps_gpu_error *err);

/* Runs p once from the deterministic inputs (ps_fill_value, as --check
 * does) and copies the first `bytes` of buffer `buffer` after the run into
 * out: what a test needs to compare a kernel with a reference. */
int ps_gpu_read_buffer (ps_gpu *gpu, const ps_plan *p, ps_profile_mode mode, uint32_t buffer,
                        void *out, size_t bytes, ps_gpu_error *err);

/* ---- kernels without a GPU ---------------------------------------------- */

/* Writes DIR/stepNNN-FUNCTION.cu (the CUDA C of every kernel step: built-in,
 * synthetic, fused or a user .cu) and, compiled by NVRTC for `arch` (e.g.
 * "compute_90"; NULL means that), DIR/stepNNN-FUNCTION.ptx; a user .ptx is
 * copied, a .cubin is listed but not copied.  DIR is created when missing.
 * One line per step goes to `listing` (may be NULL).  When NVRTC cannot be
 * loaded, the .cu files are still written and PS_ENOGPU is returned. */
int ps_kernels_write (const ps_plan *p, const char *dir, const char *arch, FILE *listing,
                      ps_gpu_error *err);

/* Compiles CUDA C to PTX with NVRTC (no GPU needed).  `include_dir` (may be
 * NULL) is added to the include path after the toolkit's.  *ptx is
 * malloc'd and NUL-terminated; on a compile error err holds the first lines
 * of NVRTC's log.  *log (may be NULL) receives the whole log (malloc'd). */
int ps_nvrtc_compile_ptx (const char *code, const char *name, const char *arch,
                          const char *include_dir, char **ptx, size_t *ptx_len, char **log,
                          ps_gpu_error *err);

#endif
