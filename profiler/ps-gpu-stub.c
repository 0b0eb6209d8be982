/* ps-gpu-stub.c: the GPU backend of a build without the CUDA toolkit
 * headers: every entry point that needs CUDA or NVRTC says so. */
#include "ps-profiler-private.h"

#include <string.h>

#ifndef PS_GPU_OFF_REASON
#define PS_GPU_OFF_REASON "CUDA toolkit headers not found at build time"
#endif

static int
not_built (ps_gpu_error *err)
{
  return ps_gpu_error_set (err, PS_GPU_NOT_BUILT, 0, "%s", PS_GPU_OFF_REASON);
}

bool
ps_gpu_backend_built (void)
{
  return false;
}

int
ps_gpu_open (ps_gpu **out, ps_gpu_error *err)
{
  *out = NULL;
  return not_built (err);
}

void
ps_gpu_close (ps_gpu *gpu)
{
  (void) gpu;
}

const ps_gpu_info *
ps_gpu_get_info (const ps_gpu *gpu)
{
  (void) gpu;
  return NULL;
}

int
ps_gpu_probe (ps_gpu_info *info, ps_gpu_error *err)
{
  if (info)
    memset (info, 0, sizeof *info);
  return not_built (err);
}

int
ps_gpu_profile (ps_gpu *gpu, const ps_plan *p, const ps_profile_options *o,
                ps_profile_result *r, ps_gpu_error *err)
{
  memset (r, 0, sizeof *r);
  return not_built (err);
}

int
ps_gpu_check (ps_gpu *gpu, const ps_plan *a, const ps_plan *b, ps_profile_mode mode,
              ps_check_result *r, ps_gpu_error *err)
{
  memset (r, 0, sizeof *r);
  return not_built (err);
}

int
ps_gpu_read_buffer (ps_gpu *gpu, const ps_plan *p, ps_profile_mode mode, uint32_t buffer,
                    void *out, size_t bytes, ps_gpu_error *err)
{
  return not_built (err);
}

int
ps__nvrtc_load (ps_gpu_error *err)
{
  return not_built (err);
}

void
ps__nvrtc_version (int *major, int *minor)
{
  *major = *minor = 0;
}

void
ps__nvrtc_arch_range (int *lo, int *hi)
{
  *lo = *hi = 0;
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
  return not_built (err);
}

int
ps_nvrtc_compile_ptx (const char *code, const char *name, const char *arch,
                      const char *include_dir, char **ptx, size_t *ptx_len, char **log,
                      ps_gpu_error *err)
{
  *ptx = NULL;
  *ptx_len = 0;
  if (log)
    *log = NULL;
  return not_built (err);
}
