/* ps-cuda-load.c: loads the CUDA driver, NVRTC and CUPTI at run time and
 * classifies why one cannot be used.  Result names and texts come from our
 * own tables: the stub driver that ships with the toolkit has none. */
#include "ps-cuda.h"

#include <dlfcn.h>
#include <glob.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- result tables ------------------------------------------------------ */

#define PS__CU_RESULTS(X)                                                              \
  X (CUDA_SUCCESS, "no error")                                                         \
  X (CUDA_ERROR_INVALID_VALUE, "invalid argument")                                     \
  X (CUDA_ERROR_OUT_OF_MEMORY, "out of memory")                                        \
  X (CUDA_ERROR_NOT_INITIALIZED, "driver not initialised")                             \
  X (CUDA_ERROR_DEINITIALIZED, "driver shutting down")                                 \
  X (CUDA_ERROR_PROFILER_DISABLED, "profiler disabled")                                \
  X (CUDA_ERROR_STUB_LIBRARY, "the CUDA stub library was loaded instead of the driver") \
  X (CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER, "the call needs a newer driver")           \
  X (CUDA_ERROR_DEVICE_UNAVAILABLE, "the GPU is busy or unavailable")                  \
  X (CUDA_ERROR_NO_DEVICE, "no CUDA-capable GPU is detected")                          \
  X (CUDA_ERROR_INVALID_DEVICE, "invalid device ordinal")                              \
  X (CUDA_ERROR_DEVICE_NOT_LICENSED, "the GPU is not licensed for compute")            \
  X (CUDA_ERROR_INVALID_IMAGE, "invalid kernel image")                                 \
  X (CUDA_ERROR_INVALID_CONTEXT, "invalid context")                                    \
  X (CUDA_ERROR_NO_BINARY_FOR_GPU, "no kernel image for this GPU")                     \
  X (CUDA_ERROR_ECC_UNCORRECTABLE, "uncorrectable ECC error")                          \
  X (CUDA_ERROR_INVALID_PTX, "invalid PTX")                                            \
  X (CUDA_ERROR_JIT_COMPILER_NOT_FOUND, "PTX JIT compiler not found")                  \
  X (CUDA_ERROR_UNSUPPORTED_PTX_VERSION, "PTX version newer than the driver supports") \
  X (CUDA_ERROR_JIT_COMPILATION_DISABLED, "PTX JIT compilation disabled")              \
  X (CUDA_ERROR_INVALID_SOURCE, "invalid source")                                      \
  X (CUDA_ERROR_FILE_NOT_FOUND, "file not found")                                      \
  X (CUDA_ERROR_SHARED_OBJECT_INIT_FAILED, "shared object initialisation failed")      \
  X (CUDA_ERROR_OPERATING_SYSTEM, "operating system call failed")                      \
  X (CUDA_ERROR_INVALID_HANDLE, "invalid resource handle")                             \
  X (CUDA_ERROR_ILLEGAL_STATE, "illegal state")                                        \
  X (CUDA_ERROR_NOT_FOUND, "named symbol not found")                                   \
  X (CUDA_ERROR_NOT_READY, "not ready")                                                \
  X (CUDA_ERROR_ILLEGAL_ADDRESS, "illegal memory access")                              \
  X (CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, "too many resources requested for launch")    \
  X (CUDA_ERROR_LAUNCH_TIMEOUT, "the launch timed out")                                \
  X (CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE, "primary context already active")              \
  X (CUDA_ERROR_CONTEXT_IS_DESTROYED, "context destroyed")                             \
  X (CUDA_ERROR_ASSERT, "device-side assertion")                                       \
  X (CUDA_ERROR_HARDWARE_STACK_ERROR, "hardware stack error")                          \
  X (CUDA_ERROR_ILLEGAL_INSTRUCTION, "illegal instruction")                            \
  X (CUDA_ERROR_MISALIGNED_ADDRESS, "misaligned address")                              \
  X (CUDA_ERROR_INVALID_ADDRESS_SPACE, "invalid address space")                        \
  X (CUDA_ERROR_INVALID_PC, "invalid program counter")                                 \
  X (CUDA_ERROR_LAUNCH_FAILED, "unspecified launch failure")                           \
  X (CUDA_ERROR_NOT_PERMITTED, "operation not permitted")                              \
  X (CUDA_ERROR_NOT_SUPPORTED, "operation not supported")                              \
  X (CUDA_ERROR_SYSTEM_NOT_READY, "the system is not ready (fabric manager?)")         \
  X (CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, "driver and kernel module versions differ")    \
  X (CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE, "forward compatibility not supported on this GPU") \
  X (CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, "operation not allowed during stream capture") \
  X (CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, "stream capture invalidated")              \
  X (CUDA_ERROR_STREAM_CAPTURE_MERGE, "stream capture merge not allowed")              \
  X (CUDA_ERROR_STREAM_CAPTURE_UNMATCHED, "stream capture not started")                \
  X (CUDA_ERROR_STREAM_CAPTURE_UNJOINED, "a captured stream did not rejoin")           \
  X (CUDA_ERROR_STREAM_CAPTURE_ISOLATION, "dependency outside the capture")            \
  X (CUDA_ERROR_STREAM_CAPTURE_IMPLICIT, "implicit dependency on the legacy stream")   \
  X (CUDA_ERROR_CAPTURED_EVENT, "operation not allowed on a captured event")           \
  X (CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD, "capture ended on another thread")         \
  X (CUDA_ERROR_TIMEOUT, "timed out")                                                  \
  X (CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE, "graph update not performed")               \
  X (CUDA_ERROR_UNKNOWN, "unknown error")

static ps__cuda cuda_tab;

/* "CUDA_ERROR_OUT_OF_MEMORY" from planscope's own table (the stub driver
 * has no texts), else from the driver's cuGetErrorName once it is loaded,
 * else the number; never NULL.  buf holds the last case. */
static const char *
cu_result_name (CUresult r, char *buf, size_t cap)
{
  switch (r) {
#define PS__NAME_CASE(sym, text) \
  case sym:                      \
    return #sym;
    PS__CU_RESULTS (PS__NAME_CASE)
#undef PS__NAME_CASE
  default:
    break;
  }
  const char *name = NULL;
  if (cuda_tab.cuGetErrorName && cuda_tab.cuGetErrorName (r, &name) == CUDA_SUCCESS && name)
    return name;
  snprintf (buf, cap, "CUresult %d", (int) r);
  return buf;
}

static const char *
cu_result_text (CUresult r)
{
  switch (r) {
#define PS__TEXT_CASE(sym, text) \
  case sym:                      \
    return text;
    PS__CU_RESULTS (PS__TEXT_CASE)
#undef PS__TEXT_CASE
  default:
    break;
  }
  const char *text = NULL;
  if (cuda_tab.cuGetErrorString && cuda_tab.cuGetErrorString (r, &text) == CUDA_SUCCESS && text)
    return text;
  return "an error this planscope does not know";
}

#define PS__CUPTI_RESULTS(X)                                                        \
  X (CUPTI_SUCCESS) X (CUPTI_ERROR_INVALID_PARAMETER) X (CUPTI_ERROR_INVALID_DEVICE) \
  X (CUPTI_ERROR_INVALID_CONTEXT) X (CUPTI_ERROR_INVALID_OPERATION)                 \
  X (CUPTI_ERROR_OUT_OF_MEMORY) X (CUPTI_ERROR_HARDWARE) X (CUPTI_ERROR_NOT_READY)  \
  X (CUPTI_ERROR_NOT_COMPATIBLE) X (CUPTI_ERROR_NOT_INITIALIZED)                    \
  X (CUPTI_ERROR_INVALID_KIND) X (CUPTI_ERROR_NOT_SUPPORTED)                        \
  X (CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) X (CUPTI_ERROR_INSUFFICIENT_PRIVILEGES) \
  X (CUPTI_ERROR_CUDA_COMPILER_NOT_COMPATIBLE) X (CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED) \
  X (CUPTI_ERROR_MAX_LIMIT_REACHED) X (CUPTI_ERROR_DISABLED)                         \
  X (CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED)                                          \
  X (CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED) X (CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED) \
  X (CUPTI_ERROR_UNKNOWN)

static const char *
cupti_result_name (CUptiResult r)
{
  switch (r) {
#define PS__CUPTI_CASE(sym) \
  case sym:                 \
    return #sym;
    PS__CUPTI_RESULTS (PS__CUPTI_CASE)
#undef PS__CUPTI_CASE
  default:
    return "CUPTI_ERROR_?";
  }
}

int
ps__cu_fail (ps_gpu_error *err, ps_gpu_status status, CUresult r, const char *fmt, ...)
{
  char what[600];
  va_list ap;
  va_start (ap, fmt);
  vsnprintf (what, sizeof what, fmt, ap);
  va_end (ap);
  if (r == CUDA_ERROR_OUT_OF_MEMORY && status == PS_GPU_CUDA_FAILED)
    status = PS_GPU_NO_MEMORY;
  char nb[32];
  return ps_gpu_error_set (err, status, (int) r, "%s: %s (%s)", what,
                           cu_result_name (r, nb, sizeof nb), cu_result_text (r));
}

int
ps__cupti_fail (ps_gpu_error *err, const ps__cupti *cp, CUptiResult r, const char *what)
{
  const char *text = NULL;
  if (cp && cp->cuptiGetResultString && cp->cuptiGetResultString (r, &text) != CUPTI_SUCCESS)
    text = NULL;
  return ps_gpu_error_set (err, PS_GPU_CUPTI_FAILED, (int) r, "%s failed: %s%s%s%s", what,
                           cupti_result_name (r), text ? " (" : "", text ? text : "",
                           text ? ")" : "");
}

/* ---- loading ------------------------------------------------------------ */

static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;

/* Tries the candidates in order; on failure writes what was tried and the
 * first dlerror() into why. */
static void *
open_first (const char *const *cands, size_t n, char *why, size_t cap)
{
  size_t len = 0;
  char first[512] = "";
  why[0] = '\0';
  for (size_t i = 0; i < n; i++) {
    if (!cands[i])
      continue;
    void *h = dlopen (cands[i], RTLD_NOW | RTLD_LOCAL);
    if (h)
      return h;
    const char *e = dlerror ();
    if (!first[0])
      snprintf (first, sizeof first, "%s", e ? e : "unknown error");
    if (len < cap)
      len += (size_t) snprintf (why + len, cap - len, "%s%s", len ? ", " : "tried ", cands[i]);
  }
  if (len < cap)
    snprintf (why + len, cap - len, ": %s", first);
  return NULL;
}

/* Where a CUDA library may be: the names the loader finds by itself, the
 * toolkit's folders, and the copies PyTorch's wheels install (a package
 * nvidia/<wheel>/lib/ in the site-packages of each python3 on PATH: a
 * virtual environment, conda, or the system's).  At most 24 candidates. */
#define PS__MAX_CANDS 24

typedef struct lib_cands {
  const char *c[PS__MAX_CANDS];
  char store[PS__MAX_CANDS][1100];
  size_t n;
} lib_cands;

static void
cands_add (lib_cands *l, const char *fmt, ...)
{
  if (l->n >= PS__MAX_CANDS)
    return;
  va_list ap;
  va_start (ap, fmt);
  int k = vsnprintf (l->store[l->n], sizeof l->store[l->n], fmt, ap);
  va_end (ap);
  if (k <= 0 || (size_t) k >= sizeof l->store[l->n])
    return;
  for (size_t i = 0; i < l->n; i++)
    if (strcmp (l->c[i], l->store[l->n]) == 0)
      return;
  l->c[l->n] = l->store[l->n];
  l->n++;
}

/* Adds what matches pattern (glob), newest name last sorted first. */
static void
cands_glob (lib_cands *l, const char *pattern)
{
  glob_t gl;
  if (glob (pattern, 0, NULL, &gl) != 0)
    return;
  for (size_t i = gl.gl_pathc; i-- > 0;)
    cands_add (l, "%s", gl.gl_pathv[i]);
  globfree (&gl);
}

/* wheels: the folders under site-packages/nvidia/ that hold the library
 * (CUDA 12 wheels: cuda_cupti/lib, cuda_nvrtc/lib; CUDA 13: cu13/lib). */
static void
cands_python (lib_cands *l, const char *const *wheels, size_t n_wheels, const char *lib)
{
  const char *path = getenv ("PATH");
  char dirs[4096];
  snprintf (dirs, sizeof dirs, "%s", path ? path : "");
  char *save = NULL;
  for (char *d = strtok_r (dirs, ":", &save); d; d = strtok_r (NULL, ":", &save)) {
    char py[1100];
    if (d[0] != '/' || snprintf (py, sizeof py, "%s/python3", d) >= (int) sizeof py ||
        access (py, X_OK) != 0)
      continue;
    for (size_t w = 0; w < n_wheels; w++) {
      char pat[1100];
      for (int kind = 0; kind < 2; kind++) {
        if (snprintf (pat, sizeof pat, "%s/../lib/python3*/%s/nvidia/%s/%s", d,
                      kind ? "dist-packages" : "site-packages", wheels[w], lib) <
            (int) sizeof pat)
          cands_glob (l, pat);
      }
    }
  }
}

/* Where NVRTC and CUPTI are looked for, in order: by name (the loader's
 * path), in the toolkit, in PyTorch's wheels; $PLANSCOPE_LIBNVRTC or
 * $PLANSCOPE_LIBCUPTI alone when set. */
static const struct {
  const char *env, *pattern;
  const char *names[3];
  const char *in_root[5];
  const char *wheels[2];
} lib_places[] = {
  [PS__LIB_NVRTC] = { PS_ENV_LIBNVRTC, "libnvrtc.so.1[0-9]",
                      { "libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so" },
                      { "lib64/libnvrtc.so.13", "lib64/libnvrtc.so", "lib/libnvrtc.so" },
                      { "cu13/lib", "cuda_nvrtc/lib" } },
  [PS__LIB_CUPTI] = { PS_ENV_LIBCUPTI, "libcupti.so.1[0-9]",
                      { "libcupti.so.13", "libcupti.so.12", "libcupti.so" },
                      { "extras/CUPTI/lib64/libcupti.so.13", "extras/CUPTI/lib64/libcupti.so.12",
                        "extras/CUPTI/lib64/libcupti.so", "lib64/libcupti.so.13",
                        "lib64/libcupti.so" },
                      { "cu13/lib", "cuda_cupti/lib" } },
};

static void
lib_candidates (int which, lib_cands *l)
{
  memset (l, 0, sizeof *l);
  const char *env = getenv (lib_places[which].env);
  if (env && env[0]) {
    cands_add (l, "%s", env);
    return;
  }
  for (size_t i = 0; i < 3; i++)
    cands_add (l, "%s", lib_places[which].names[i]);
  char root[3000] = "";
  for (size_t i = 0; i < 5 && ps__toolkit_root (root, sizeof root); i++)
    if (lib_places[which].in_root[i])
      cands_add (l, "%s/%s", root, lib_places[which].in_root[i]);
  cands_python (l, lib_places[which].wheels, 2, lib_places[which].pattern);
}

size_t
ps__lib_candidates (int which, char *buf, size_t cap)
{
  lib_cands l;
  lib_candidates (which, &l);
  size_t len = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < l.n && len < cap; i++)
    len += (size_t) snprintf (buf + len, cap - len, "%s%s", i ? "\n" : "", l.c[i]);
  return l.n;
}

/* The driver. */
static ps_gpu_error cuda_err;
static int cuda_rc = 1; /* 1: not tried yet */

/* Why cuGetProcAddress gave no pointer: its result, else the symbol's status. */
static const char *
lookup_text (CUresult r, CUdriverProcAddressQueryResult qs, char *buf, size_t cap)
{
  if (r != CUDA_SUCCESS)
    return cu_result_name (r, buf, cap);
  switch (qs) {
  case CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND:
    return "CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND";
  case CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT:
    return "CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT";
  default:
    return "a NULL pointer";
  }
}

/* cuInit and the driver's version, with the table t resolved. */
static int
cuda_init (ps__cuda *t, const char *name, ps_gpu_error *err)
{
  CUresult r = t->cuInit (0);
  if (r == CUDA_ERROR_STUB_LIBRARY)
    return ps_gpu_error_set (err, PS_GPU_NO_DRIVER, (int) r,
                             "%s is the CUDA toolkit's stub library, not a driver "
                             "(CUDA_ERROR_STUB_LIBRARY)",
                             name);
  if (r == CUDA_ERROR_NO_DEVICE)
    return ps__cu_fail (err, PS_GPU_NO_DEVICE, r, "the driver found no GPU (cuInit)");
  if (r != CUDA_SUCCESS)
    return ps__cu_fail (err, PS_GPU_DRIVER_FAILED, r, "cuInit failed");
  int ver = 0;
  r = t->cuDriverGetVersion (&ver);
  if (r != CUDA_SUCCESS || ver < 12000)
    return ps_gpu_error_set (err, PS_GPU_DRIVER_FAILED, (int) r,
                             "the driver supports CUDA %d.%d; planscope needs 12.0 or newer",
                             ver / 1000, ver % 1000 / 10);
  t->driver_version = ver;
  return 0;
}

static int
cuda_load_locked (ps_gpu_error *err)
{
  const char *env = getenv (PS_ENV_LIBCUDA);
  const char *name = env && env[0] ? env : "libcuda.so.1";
  void *h = dlopen (name, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char *e = dlerror ();
    return ps_gpu_error_set (err, PS_GPU_NO_DRIVER, 0, "%s could not be loaded (%s)", name,
                             e ? e : "unknown error");
  }
  __typeof__ (&cuGetProcAddress) gpa;
  *(void **) &gpa = dlsym (h, "cuGetProcAddress_v2");
  if (!gpa) {
    dlclose (h);
    return ps_gpu_error_set (err, PS_GPU_DRIVER_FAILED, 0,
                             "%s has no cuGetProcAddress_v2: the driver is older than CUDA 12, "
                             "and planscope needs CUDA 12 or newer",
                             name);
  }
  ps__cuda *t = &cuda_tab;
  memset (t, 0, sizeof *t);
  CUresult r;
  CUdriverProcAddressQueryResult qs;
  char nb[32];
  /* Each at the version of the variant its pointer's type is (ps-cuda.h). */
#define PS__RESOLVE(fn, version)                                                           \
  r = gpa (#fn, (void **) &t->fn, version, CU_GET_PROC_ADDRESS_DEFAULT, &qs);             \
  if (r == CUDA_ERROR_STUB_LIBRARY) {                                                     \
    dlclose (h);                                                                          \
    memset (t, 0, sizeof *t);                                                             \
    return ps_gpu_error_set (err, PS_GPU_NO_DRIVER, (int) r,                               \
                             "%s is the CUDA toolkit's stub library, not a driver "        \
                             "(CUDA_ERROR_STUB_LIBRARY)", name);                           \
  }                                                                                       \
  if (r != CUDA_SUCCESS || !t->fn || qs != CU_GET_PROC_ADDRESS_SUCCESS) {                 \
    dlclose (h);                                                                          \
    memset (t, 0, sizeof *t);                                                             \
    return ps_gpu_error_set (err, PS_GPU_DRIVER_FAILED, (int) r,                           \
                             "%s has no %s of CUDA %d.%d (%s): the driver is too old",     \
                             name, #fn, version / 1000, version % 1000 / 10,               \
                             lookup_text (r, qs, nb, sizeof nb));                          \
  }
  PS__CU_FUNCS (PS__RESOLVE)
#undef PS__RESOLVE
#define PS__RESOLVE_OPT(fn, version)                                                    \
  if (gpa (#fn, (void **) &t->fn, version, CU_GET_PROC_ADDRESS_DEFAULT, &qs) != 0 ||   \
      qs != CU_GET_PROC_ADDRESS_SUCCESS)                                              \
    t->fn = NULL;
  PS__CU_OPTIONAL (PS__RESOLVE_OPT)
#undef PS__RESOLVE_OPT

  int rc = cuda_init (t, name, err);
  if (rc != 0) {
    memset (t, 0, sizeof *t); /* before the library goes: no pointer into it stays */
    dlclose (h);
    return rc;
  }
  t->lib = h;
  return 0;
}

int
ps__cuda_load (const ps__cuda **out, ps_gpu_error *err)
{
  pthread_mutex_lock (&load_lock);
  if (cuda_rc == 1)
    cuda_rc = cuda_load_locked (&cuda_err);
  int rc = cuda_rc;
  pthread_mutex_unlock (&load_lock);
  if (rc != 0) {
    if (err)
      *err = cuda_err;
    return rc;
  }
  *out = &cuda_tab;
  return 0;
}

/* NVRTC. */
static ps__nvrtc nvrtc_tab;
static ps_gpu_error nvrtc_err;
static int nvrtc_rc = 1;

static int
nvrtc_load_locked (ps_gpu_error *err)
{
  lib_cands l;
  lib_candidates (PS__LIB_NVRTC, &l);
  char why[900];
  void *h = open_first (l.c, l.n, why, sizeof why);
  if (!h)
    return ps_gpu_error_set (err, PS_GPU_NO_NVRTC, 0, "libnvrtc could not be loaded (%s)", why);
  ps__nvrtc *t = &nvrtc_tab;
  memset (t, 0, sizeof *t);
#define PS__SYM(fn)                                                                        \
  *(void **) &t->fn = dlsym (h, #fn);                                                      \
  if (!t->fn) {                                                                            \
    dlclose (h);                                                                           \
    return ps_gpu_error_set (err, PS_GPU_NO_NVRTC, 0, "the loaded libnvrtc has no %s", #fn); \
  }
  PS__NVRTC_FUNCS (PS__SYM)
#undef PS__SYM
#define PS__SYM_OPT(fn) *(void **) &t->fn = dlsym (h, #fn);
  PS__NVRTC_OPTIONAL (PS__SYM_OPT)
#undef PS__SYM_OPT
  if (t->nvrtcVersion (&t->major, &t->minor) != NVRTC_SUCCESS) {
    dlclose (h);
    return ps_gpu_error_set (err, PS_GPU_NO_NVRTC, 0, "nvrtcVersion failed");
  }
  /* CUDA 13's NVRTC targets compute capability 7.5 and newer. */
  t->arch_lo = t->major >= 13 ? 75 : 50;
  t->arch_hi = t->major >= 13 ? 121 : 90;
  int n = 0;
  if (t->nvrtcGetNumSupportedArchs && t->nvrtcGetSupportedArchs &&
      t->nvrtcGetNumSupportedArchs (&n) == NVRTC_SUCCESS && n > 0 && n < 1024) {
    int *a = malloc ((size_t) n * sizeof *a);
    if (a && t->nvrtcGetSupportedArchs (a) == NVRTC_SUCCESS) {
      t->arch_lo = a[0];
      t->arch_hi = a[n - 1];
    }
    free (a);
  }
  t->lib = h;
  return 0;
}

int
ps__nvrtc_get (const ps__nvrtc **out, ps_gpu_error *err)
{
  pthread_mutex_lock (&load_lock);
  if (nvrtc_rc == 1)
    nvrtc_rc = nvrtc_load_locked (&nvrtc_err);
  int rc = nvrtc_rc;
  pthread_mutex_unlock (&load_lock);
  if (rc != 0) {
    if (err)
      *err = nvrtc_err;
    return rc;
  }
  *out = &nvrtc_tab;
  return 0;
}

int
ps__nvrtc_load (ps_gpu_error *err)
{
  const ps__nvrtc *t;
  return ps__nvrtc_get (&t, err);
}

void
ps__nvrtc_version (int *major, int *minor)
{
  *major = nvrtc_tab.major;
  *minor = nvrtc_tab.minor;
}

void
ps__nvrtc_arch_range (int *lo, int *hi)
{
  *lo = nvrtc_tab.arch_lo;
  *hi = nvrtc_tab.arch_hi;
}

/* CUPTI. */
static ps__cupti cupti_tab;
static ps_gpu_error cupti_err;
static int cupti_rc = 1;

static int
cupti_load_locked (ps_gpu_error *err)
{
  lib_cands l;
  lib_candidates (PS__LIB_CUPTI, &l);
  char why[900];
  void *h = open_first (l.c, l.n, why, sizeof why);
  if (!h)
    return ps_gpu_error_set (err, PS_GPU_NO_CUPTI, 0, "libcupti could not be loaded (%s)", why);
  ps__cupti *t = &cupti_tab;
  memset (t, 0, sizeof *t);
#define PS__SYM(fn)                                                                        \
  *(void **) &t->fn = dlsym (h, #fn);                                                      \
  if (!t->fn) {                                                                            \
    dlclose (h);                                                                           \
    return ps_gpu_error_set (err, PS_GPU_NO_CUPTI, 0,                                       \
                             "the loaded libcupti has no %s (CUPTI from CUDA 12 or newer is " \
                             "needed)", #fn);                                               \
  }
  PS__CUPTI_FUNCS (PS__SYM)
#undef PS__SYM
  t->lib = h;
  return 0;
}

int
ps__cupti_load (const ps__cupti **out, ps_gpu_error *err)
{
  pthread_mutex_lock (&load_lock);
  if (cupti_rc == 1)
    cupti_rc = cupti_load_locked (&cupti_err);
  int rc = cupti_rc;
  pthread_mutex_unlock (&load_lock);
  if (rc != 0) {
    if (err)
      *err = cupti_err;
    return rc;
  }
  *out = &cupti_tab;
  return 0;
}

bool
ps_gpu_backend_built (void)
{
  return true;
}
