/* ps-nvrtc.c: compiles CUDA C with NVRTC (loaded at run time), with a
 * cache of compiled modules: in memory for the life of the process, and on
 * disk under $XDG_CACHE_HOME/planscope (or ~/.cache/planscope), keyed by a
 * hash of the source, the options and NVRTC's version. */
#include "ps-cuda.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ps-kernel-src.h"

/* NVRTC's log is long; a message keeps its first lines. */
static void
log_excerpt (const char *log, char *buf, size_t cap)
{
  size_t n = 0;
  int lines = 0;
  buf[0] = '\0';
  for (const char *p = log; p && *p && n + 1 < cap && lines < 4; p++) {
    if (*p == '\n') {
      lines++;
      if (n && buf[n - 1] != ' ')
        buf[n++] = ' ';
      continue;
    }
    buf[n++] = *p;
  }
  buf[n] = '\0';
}

int
ps__nvrtc_compile (const char *code, const char *name, const char *arch, const char *include_dir,
                   bool want_cubin, const char *name_expr, char *lowered, size_t lowered_cap,
                   char **out, size_t *out_len, char **log, ps_gpu_error *err)
{
  *out = NULL;
  *out_len = 0;
  if (log)
    *log = NULL;
  const ps__nvrtc *nv;
  int rc = ps__nvrtc_get (&nv, err);
  if (rc != 0)
    return rc;

  char tk[4096], opt_arch[64], opt_tk[4200], opt_inc[4200];
  const char *opts[8];
  int n_opts = 0;
  snprintf (opt_arch, sizeof opt_arch, "--gpu-architecture=%s", arch);
  opts[n_opts++] = opt_arch;
  /* Fused and unfused kernels must round the same way. */
  opts[n_opts++] = "--fmad=false";
  bool have_tk = ps__toolkit_include (tk, sizeof tk);
  if (have_tk) {
    snprintf (opt_tk, sizeof opt_tk, "-I%s", tk);
    opts[n_opts++] = opt_tk;
  }
  if (include_dir && include_dir[0]) {
    snprintf (opt_inc, sizeof opt_inc, "-I%s", include_dir);
    opts[n_opts++] = opt_inc;
  }

  nvrtcProgram prog;
  nvrtcResult r = nv->nvrtcCreateProgram (&prog, code, name, 0, NULL, NULL);
  if (r != NVRTC_SUCCESS)
    return ps_gpu_error_set (err, r == NVRTC_ERROR_OUT_OF_MEMORY ? PS_GPU_NO_MEMORY
                                                                 : PS_GPU_COMPILE_FAILED,
                             (int) r, "nvrtcCreateProgram failed for %s: %s", name,
                             nv->nvrtcGetErrorString (r));
  if (name_expr)
    nv->nvrtcAddNameExpression (prog, name_expr);
  r = nv->nvrtcCompileProgram (prog, n_opts, opts);

  size_t log_size = 0;
  char *text = NULL;
  if (nv->nvrtcGetProgramLogSize (prog, &log_size) == NVRTC_SUCCESS && log_size > 0 &&
      (text = malloc (log_size + 1)) != NULL) {
    if (nv->nvrtcGetProgramLog (prog, text) != NVRTC_SUCCESS)
      text[0] = '\0';
    text[log_size] = '\0';
  }
  if (r != NVRTC_SUCCESS) {
    char ex[600];
    log_excerpt (text, ex, sizeof ex);
    ps_gpu_error_set (err, PS_GPU_COMPILE_FAILED, (int) r,
                      "NVRTC could not compile %s for %s: %s%s", name, arch,
                      ex[0] ? ex : nv->nvrtcGetErrorString (r),
                      have_tk ? "" : " (the CUDA toolkit headers were not found: set CUDA_HOME)");
    if (log)
      *log = text;
    else
      free (text);
    nv->nvrtcDestroyProgram (&prog);
    return PS_EINVAL;
  }

  size_t size = 0;
  bool cubin = want_cubin && nv->nvrtcGetCUBINSize && nv->nvrtcGetCUBIN;
  r = cubin ? nv->nvrtcGetCUBINSize (prog, &size) : nv->nvrtcGetPTXSize (prog, &size);
  char *blob = r == NVRTC_SUCCESS && size > 0 ? malloc (size + 1) : NULL;
  if (blob) {
    r = cubin ? nv->nvrtcGetCUBIN (prog, blob) : nv->nvrtcGetPTX (prog, blob);
    blob[size] = '\0';
  }
  if (!blob || r != NVRTC_SUCCESS) {
    free (blob);
    free (text);
    nv->nvrtcDestroyProgram (&prog);
    return ps_gpu_error_set (err, PS_GPU_COMPILE_FAILED, (int) r,
                             "NVRTC gave no %s for %s (%s)", cubin ? "cubin" : "PTX", name,
                             nv->nvrtcGetErrorString (r));
  }
  if (name_expr && lowered && lowered_cap) {
    const char *ln = NULL;
    if (nv->nvrtcGetLoweredName (prog, name_expr, &ln) == NVRTC_SUCCESS && ln)
      snprintf (lowered, lowered_cap, "%s", ln);
    else
      snprintf (lowered, lowered_cap, "%s", name_expr);
  }
  nv->nvrtcDestroyProgram (&prog);
  if (log)
    *log = text;
  else
    free (text);
  *out = blob;
  /* PTX is text: its length excludes the NUL NVRTC counts. */
  *out_len = !cubin && size > 0 && blob[size - 1] == '\0' ? size - 1 : size;
  return 0;
}

int
ps_nvrtc_compile_ptx (const char *code, const char *name, const char *arch,
                      const char *include_dir, char **ptx, size_t *ptx_len, char **log,
                      ps_gpu_error *err)
{
  return ps__nvrtc_compile (code, name, arch ? arch : "compute_90", include_dir, false, NULL, NULL,
                            0, ptx, ptx_len, log, err);
}
