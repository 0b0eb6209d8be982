/* ps-gpu-error.c: the classified GPU errors, file helpers and the toolkit
 * lookup shared by every build of the profiler. */
#include "ps-profiler-private.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef PS_TOOLKIT_ROOT
#define PS_TOOLKIT_ROOT "/usr/local/cuda"
#endif

static const struct {
  const char *name, *summary;
  int code;
} statuses[PS_GPU__COUNT] = {
  [PS_GPU_OK] = { "ok", "ok", 0 },
  [PS_GPU_NOT_BUILT] = { "not-built", "GPU backend not built", PS_ENOGPU },
  [PS_GPU_NO_DRIVER] = { "no-driver", "no NVIDIA driver", PS_ENOGPU },
  [PS_GPU_DRIVER_FAILED] = { "driver-failed", "the NVIDIA driver cannot be used", PS_ENOGPU },
  [PS_GPU_NO_DEVICE] = { "no-device", "no GPU", PS_ENOGPU },
  [PS_GPU_UNSUPPORTED_DEVICE] = { "unsupported-device", "unsupported GPU", PS_ENOGPU },
  [PS_GPU_NO_NVRTC] = { "no-nvrtc", "NVRTC missing", PS_ENOGPU },
  [PS_GPU_NO_CUPTI] = { "no-cupti", "CUPTI missing", PS_ENOGPU },
  [PS_GPU_CUPTI_FAILED] = { "cupti-failed", "CUPTI failed", PS_ENOGPU },
  [PS_GPU_BAD_MODULE] = { "bad-module", "bad kernel module", PS_EINVAL },
  [PS_GPU_COMPILE_FAILED] = { "compile-failed", "kernel compilation failed", PS_EINVAL },
  [PS_GPU_CUDA_FAILED] = { "cuda-failed", "CUDA error", PS_EINVAL },
  [PS_GPU_RECORDS] = { "records", "CUPTI records do not match the run", PS_EINVAL },
  [PS_GPU_NO_MEMORY] = { "no-memory", "out of memory", PS_ENOMEM },
  [PS_GPU_IO] = { "io", "input/output error", PS_EIO },
  [PS_GPU_CANCELLED] = { "cancelled", "cancelled", PS_ECANCELED },
};

const char *
ps_gpu_status_summary (ps_gpu_status s)
{
  return (unsigned) s < PS_GPU__COUNT ? statuses[s].summary : "unknown GPU error";
}

bool
ps_gpu_status_unavailable (ps_gpu_status s)
{
  return (unsigned) s < PS_GPU__COUNT && statuses[s].code == PS_ENOGPU;
}

int
ps_gpu_status_code (ps_gpu_status s)
{
  return (unsigned) s < PS_GPU__COUNT ? statuses[s].code : PS_EINVAL;
}

void
ps_gpu_error_clear (ps_gpu_error *e)
{
  if (e)
    memset (e, 0, sizeof *e);
}

int
ps_gpu_error_set (ps_gpu_error *e, ps_gpu_status status, int code, const char *fmt, ...)
{
  if (e) {
    e->status = status;
    e->code = code;
    int n = snprintf (e->message, sizeof e->message, "%s: ", ps_gpu_status_summary (status));
    va_list ap;
    va_start (ap, fmt);
    if (n > 0 && (size_t) n < sizeof e->message)
      vsnprintf (e->message + n, sizeof e->message - (size_t) n, fmt, ap);
    va_end (ap);
    /* One line: messages quote dlerror() and NVRTC logs. */
    for (char *p = e->message; *p; p++)
      if (*p == '\n' || *p == '\r')
        *p = ' ';
  }
  return status == PS_GPU_OK ? 0 : ps_gpu_status_code (status);
}

const char *
ps_profile_mode_name (ps_profile_mode m)
{
  return m == PS_PROFILE_GRAPH ? "graph" : "streams";
}

void
ps_profile_options_init (ps_profile_options *o)
{
  memset (o, 0, sizeof *o);
  o->mode = PS_PROFILE_STREAMS;
  o->iterations = 10;
  o->warmup = 2;
  o->overhead = true;
}

/* ---- the toolkit -------------------------------------------------------- */

static bool
has_file (const char *dir, const char *rel)
{
  char path[4096];
  if ((size_t) snprintf (path, sizeof path, "%s/%s", dir, rel) >= sizeof path)
    return false;
  struct stat st;
  return stat (path, &st) == 0;
}

static bool
find_root (const char *rel, char *buf, size_t cap)
{
  const char *cands[] = { getenv ("CUDA_HOME"), getenv ("CUDA_PATH"), PS_TOOLKIT_ROOT,
                          "/usr/local/cuda" };
  for (size_t i = 0; i < sizeof cands / sizeof cands[0]; i++) {
    if (!cands[i] || !cands[i][0] || !has_file (cands[i], rel))
      continue;
    if ((size_t) snprintf (buf, cap, "%s", cands[i]) >= cap)
      continue;
    return true;
  }
  return false;
}

bool
ps__toolkit_include (char *buf, size_t cap)
{
  char root[4000];
  if (!find_root ("include/cuda_fp16.h", root, sizeof root))
    return false;
  return (size_t) snprintf (buf, cap, "%s/include", root) < cap;
}

bool
ps__toolkit_root (char *buf, size_t cap)
{
  return find_root ("include", buf, cap) || find_root ("lib64", buf, cap);
}
