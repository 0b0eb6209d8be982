/* ps-gpu.c: opening the GPU (driver, device, NVRTC, CUPTI, in that order,
 * each failure classified) and the cache of compiled, loaded modules. */
#include "ps-gpu-private.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static pthread_mutex_t open_lock = PTHREAD_MUTEX_INITIALIZER;
static ps_gpu *open_gpu;

const ps_gpu_info *
ps_gpu_get_info (const ps_gpu *gpu)
{
  return gpu ? &gpu->info : NULL;
}

static int
attr (ps_gpu *gpu, CUdevice_attribute a, int *v, ps_gpu_error *err)
{
  CUresult r = gpu->cu->cuDeviceGetAttribute (v, a, gpu->dev);
  if (r != CUDA_SUCCESS)
    return ps__cu_fail (err, PS_GPU_DRIVER_FAILED, r, "cuDeviceGetAttribute(%d)", (int) a);
  return 0;
}

static int
open_device (ps_gpu *gpu, ps_gpu_error *err)
{
  const ps__cuda *cu = gpu->cu;
  int count = 0;
  CUresult r = cu->cuDeviceGetCount (&count);
  if (r == CUDA_ERROR_NO_DEVICE || (r == CUDA_SUCCESS && count == 0))
    return ps_gpu_error_set (err, PS_GPU_NO_DEVICE, (int) r,
                             "the NVIDIA driver (CUDA %d.%d) sees no GPU%s",
                             cu->driver_version / 1000, cu->driver_version % 1000 / 10,
                             getenv ("CUDA_VISIBLE_DEVICES") ? " (CUDA_VISIBLE_DEVICES is set)"
                                                             : "");
  if (r != CUDA_SUCCESS)
    return ps__cu_fail (err, PS_GPU_DRIVER_FAILED, r, "cuDeviceGetCount failed");
  if ((r = cu->cuDeviceGet (&gpu->dev, 0)) != CUDA_SUCCESS)
    return ps__cu_fail (err, PS_GPU_NO_DEVICE, r, "cuDeviceGet(0) failed");
  ps_gpu_info *in = &gpu->info;
  if (cu->cuDeviceGetName (in->name, sizeof in->name - 1, gpu->dev) != CUDA_SUCCESS)
    snprintf (in->name, sizeof in->name, "GPU 0");
  in->driver_version = cu->driver_version;
  int sm = 0, v = 0;
  int rc;
  if ((rc = attr (gpu, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &in->cc_major, err)) ||
      (rc = attr (gpu, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &in->cc_minor, err)) ||
      (rc = attr (gpu, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &sm, err)) ||
      (rc = attr (gpu, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, &v, err)))
    return rc;
  in->sm_count = (uint32_t) sm;
  gpu->max_smem_optin = v;
  size_t mem = 0;
  if (cu->cuDeviceTotalMem (&mem, gpu->dev) == CUDA_SUCCESS)
    in->total_mem = mem;
  return 0;
}

static int
check_arch (ps_gpu *gpu, ps_gpu_error *err)
{
  int lo, hi;
  ps__nvrtc_arch_range (&lo, &hi);
  ps__nvrtc_version (&gpu->info.nvrtc_major, &gpu->info.nvrtc_minor);
  int cc = gpu->info.cc_major * 10 + gpu->info.cc_minor;
  if (cc < lo)
    return ps_gpu_error_set (err, PS_GPU_UNSUPPORTED_DEVICE, 0,
                             "%s has compute capability %d.%d; NVRTC %d.%d targets %d.%d and newer",
                             gpu->info.name, gpu->info.cc_major, gpu->info.cc_minor,
                             gpu->info.nvrtc_major, gpu->info.nvrtc_minor, lo / 10, lo % 10);
  /* A GPU newer than NVRTC knows gets PTX for the newest architecture it
   * knows, compiled by the driver. */
  gpu->cubin = cc <= hi;
  int a = gpu->cubin ? cc : hi;
  snprintf (gpu->arch_bin, sizeof gpu->arch_bin, "sm_%d", a);
  snprintf (gpu->arch_ptx, sizeof gpu->arch_ptx, "compute_%d", a);
  return 0;
}

static int
load_support (ps_gpu *gpu, ps_gpu_error *err)
{
  ps_ksrc k = { 0 };
  k.kind = PS_KSRC_GENERATED;
  k.code = (char *) ps_ksrc_support_code ();
  k.code_len = strlen (k.code);
  snprintf (k.function, sizeof k.function, "ps_support");
  CUmodule mod;
  const char *lowered;
  int rc = ps__gpu_module (gpu, &k, &mod, &lowered, err);
  if (rc != 0)
    return rc;
  for (int dt = 0; dt < PS_DT__COUNT; dt++) {
    char name[32];
    snprintf (name, sizeof name, "ps_init_%s", ps_dtype_name ((ps_dtype) dt));
    CUresult r = gpu->cu->cuModuleGetFunction (&gpu->init_fn[dt], mod, name);
    if (r != CUDA_SUCCESS)
      return ps__cu_fail (err, PS_GPU_CUDA_FAILED, r, "cuModuleGetFunction(%s)", name);
  }
  return 0;
}

int
ps_gpu_open (ps_gpu **out, ps_gpu_error *err)
{
  *out = NULL;
  ps_gpu_error_clear (err);
  pthread_mutex_lock (&open_lock);
  if (open_gpu) {
    pthread_mutex_unlock (&open_lock);
    return ps_gpu_error_set (err, PS_GPU_CUDA_FAILED, 0,
                             "the GPU is already open in this process (one run at a time)");
  }
  ps_gpu *gpu = calloc (1, sizeof *gpu);
  if (!gpu) {
    pthread_mutex_unlock (&open_lock);
    return ps_gpu_error_set (err, PS_GPU_NO_MEMORY, 0, "out of memory");
  }
  open_gpu = gpu;
  pthread_mutex_unlock (&open_lock);

  int rc = ps__cuda_load (&gpu->cu, err);
  if (rc == 0)
    rc = open_device (gpu, err);
  if (rc == 0)
    rc = ps__nvrtc_load (err);
  if (rc == 0)
    rc = check_arch (gpu, err);
  if (rc == 0)
    rc = ps__cupti_load (&gpu->cp, err);
  if (rc == 0) {
    CUresult r = gpu->cu->cuDevicePrimaryCtxRetain (&gpu->ctx, gpu->dev);
    if (r != CUDA_SUCCESS) {
      gpu->ctx = NULL;
      rc = ps__cu_fail (err, r == CUDA_ERROR_DEVICE_UNAVAILABLE ? PS_GPU_NO_DEVICE
                                                                : PS_GPU_DRIVER_FAILED,
                        r, "cannot create a context on %s", gpu->info.name);
    } else if ((r = gpu->cu->cuCtxSetCurrent (gpu->ctx)) != CUDA_SUCCESS) {
      rc = ps__cu_fail (err, PS_GPU_DRIVER_FAILED, r, "cuCtxSetCurrent failed");
    }
  }
  if (rc == 0)
    rc = ps__cupti_open (gpu, err);
  if (rc == 0)
    rc = load_support (gpu, err);
  if (rc != 0) {
    ps_gpu_close (gpu);
    return rc;
  }
  *out = gpu;
  return 0;
}

void
ps_gpu_close (ps_gpu *gpu)
{
  if (!gpu)
    return;
  if (gpu->ctx) {
    gpu->cu->cuCtxSetCurrent (gpu->ctx);
    gpu->cu->cuCtxSynchronize ();
    for (uint32_t i = 0; i < gpu->mods_cap; i++)
      if (gpu->mods[i].key)
        gpu->cu->cuModuleUnload (gpu->mods[i].mod);
  }
  ps__cupti_close (gpu);
  if (gpu->ctx)
    gpu->cu->cuDevicePrimaryCtxRelease (gpu->dev);
  free (gpu->mods);
  pthread_mutex_lock (&open_lock);
  if (open_gpu == gpu)
    open_gpu = NULL;
  pthread_mutex_unlock (&open_lock);
  free (gpu);
}

int
ps_gpu_probe (ps_gpu_info *info, ps_gpu_error *err)
{
  ps_gpu *gpu;
  int rc = ps_gpu_open (&gpu, err);
  if (info) {
    if (rc == 0)
      *info = gpu->info;
    else
      memset (info, 0, sizeof *info);
  }
  ps_gpu_close (gpu);
  return rc;
}

/* ---- modules ------------------------------------------------------------ */

static ps__gpu_module_entry *
slot_for (ps__gpu_module_entry *tab, uint32_t cap, uint64_t key)
{
  uint32_t i = (uint32_t) (key ^ (key >> 32)) & (cap - 1);
  while (tab[i].key && tab[i].key != key)
    i = (i + 1) & (cap - 1);
  return &tab[i];
}

static int
insert_module (ps_gpu *gpu, uint64_t key, CUmodule mod, const char *lowered)
{
  if ((gpu->n_mods + 1) * 2 > gpu->mods_cap) {
    uint32_t cap = gpu->mods_cap ? gpu->mods_cap * 2 : 64;
    ps__gpu_module_entry *tab = calloc (cap, sizeof *tab);
    if (!tab)
      return PS_ENOMEM;
    for (uint32_t i = 0; i < gpu->mods_cap; i++)
      if (gpu->mods[i].key)
        *slot_for (tab, cap, gpu->mods[i].key) = gpu->mods[i];
    free (gpu->mods);
    gpu->mods = tab;
    gpu->mods_cap = cap;
  }
  ps__gpu_module_entry *e = slot_for (gpu->mods, gpu->mods_cap, key);
  e->key = key;
  e->mod = mod;
  snprintf (e->lowered, sizeof e->lowered, "%s", lowered ? lowered : "");
  gpu->n_mods++;
  return 0;
}

/* $XDG_CACHE_HOME/planscope, created when missing; false when there is no
 * usable folder (then nothing is cached on disk). */
static bool
cache_dir (char *buf, size_t cap)
{
  const char *x = getenv ("XDG_CACHE_HOME"), *h = getenv ("HOME");
  int n;
  if (x && x[0] == '/')
    n = snprintf (buf, cap, "%s/planscope", x);
  else if (h && h[0] == '/')
    n = snprintf (buf, cap, "%s/.cache/planscope", h);
  else
    return false;
  if (n < 0 || (size_t) n >= cap)
    return false;
  if (mkdir (buf, 0777) == 0 || errno == EEXIST)
    return true;
  /* ~/.cache itself may be missing. */
  char *sl = strrchr (buf, '/');
  *sl = '\0';
  bool ok = mkdir (buf, 0777) == 0 || errno == EEXIST;
  *sl = '/';
  return ok && (mkdir (buf, 0777) == 0 || errno == EEXIST);
}

/* The image of generated CUDA C or a user .cu: from the disk cache when
 * use_cache and it is there (*cached then), else compiled by NVRTC and
 * written to the cache.  *blob is malloc'd. */
static int
module_image (ps_gpu *gpu, const ps_ksrc *k, uint64_t key, const char *arch, bool use_cache,
              char *path, size_t path_cap, char *low, size_t low_cap, char **blob,
              size_t *blob_len, bool *cached, ps_gpu_error *err)
{
  bool user = k->kind != PS_KSRC_GENERATED;
  char dir[4096];
  *blob = NULL;
  *cached = false;
  path[0] = '\0';
  if (k->kind == PS_KSRC_GENERATED && cache_dir (dir, sizeof dir)) {
    snprintf (path, path_cap, "%s/%016llx-%s.%s", dir, (unsigned long long) key, arch,
              gpu->cubin ? "cubin" : "ptx");
    if (use_cache) {
      ps_diag quiet; /* a missing or unreadable cache entry is compiled again */
      ps_diag_init (&quiet, path);
      if (ps_file_read_own (path, (size_t) 64 << 20, blob, blob_len, &quiet) != 0 ||
          *blob_len == 0) {
        free (*blob);
        *blob = NULL;
      }
      ps_diag_free (&quiet);
      if (*blob) {
        *cached = true;
        return 0;
      }
    }
  }
  char *inc = NULL;
  if (k->kind == PS_KSRC_USER_CU && k->module_path) {
    inc = strdup (k->module_path);
    char *sl = inc ? strrchr (inc, '/') : NULL;
    if (sl)
      *sl = '\0';
    else if (inc)
      strcpy (inc, ".");
  }
  ps_gpu_error e;
  int rc = ps__nvrtc_compile (k->code, k->function, arch, inc, gpu->cubin,
                              k->kind == PS_KSRC_USER_CU ? k->function : NULL, low, low_cap, blob,
                              blob_len, NULL, &e);
  free (inc);
  if (rc != 0) {
    if (err) {
      *err = e;
      if (user && e.status == PS_GPU_COMPILE_FAILED) {
        char msg[sizeof e.message];
        snprintf (msg, sizeof msg, "%s", e.message);
        ps_gpu_error_set (err, PS_GPU_BAD_MODULE, e.code, "%s: %s", k->module_path, msg);
      }
    }
    return user ? ps_gpu_status_code (err ? err->status : PS_GPU_BAD_MODULE) : rc;
  }
  if (path[0]) {
    /* All or nothing, so that a reader never sees half a file; the cache
     * is only a cache, so a failure to write it is no error. */
    char why[256];
    ps_file_write_bytes (path, *blob, *blob_len, why, sizeof why);
  }
  return 0;
}

int
ps__gpu_module (ps_gpu *gpu, const ps_ksrc *k, CUmodule *mod, const char **lowered,
                ps_gpu_error *err)
{
  const char *arch = gpu->cubin ? gpu->arch_bin : gpu->arch_ptx;
  uint64_t key = ps_hash64 (&k->kind, 1, PS_HASH64_INIT);
  key = ps_hash64 (arch, strlen (arch), key);
  key = ps_hash64 (&gpu->info.nvrtc_major, sizeof (int), key);
  key = ps_hash64 (&gpu->info.nvrtc_minor, sizeof (int), key);
  if (k->kind == PS_KSRC_USER_CU)
    key = ps_hash64 (k->function, strlen (k->function), key);
  key = ps_hash64 (k->code, k->code_len, key);
  key = key ? key : 1;
  if (gpu->mods_cap) {
    ps__gpu_module_entry *e = slot_for (gpu->mods, gpu->mods_cap, key);
    if (e->key == key) {
      *mod = e->mod;
      *lowered = e->lowered;
      return 0;
    }
  }

  const char *image = k->code;
  char *blob = NULL;
  size_t blob_len = 0;
  char low[256] = "";
  char path[4300] = "";
  bool user = k->kind != PS_KSRC_GENERATED;
  bool cached = false;
  CUresult r;
  /* A cached image the driver refuses (cut short, from another driver, or
   * not an image at all) is compiled again, once. */
  for (int attempt = 0;; attempt++) {
    if (k->kind == PS_KSRC_GENERATED || k->kind == PS_KSRC_USER_CU) {
      int rc = module_image (gpu, k, key, arch, attempt == 0, path, sizeof path, low, sizeof low,
                             &blob, &blob_len, &cached, err);
      if (rc != 0)
        return rc;
      image = blob;
    }
    r = gpu->cu->cuModuleLoadDataEx (mod, image, 0, NULL, NULL);
    free (blob);
    blob = NULL;
    if (r == CUDA_SUCCESS || !cached || attempt > 0)
      break;
  }
  if (r == CUDA_ERROR_UNSUPPORTED_PTX_VERSION)
    return ps__cu_fail (err, PS_GPU_DRIVER_FAILED, r,
                        "the driver (CUDA %d.%d) is older than NVRTC %d.%d and cannot load its "
                        "code; update the driver",
                        gpu->info.driver_version / 1000, gpu->info.driver_version % 1000 / 10,
                        gpu->info.nvrtc_major, gpu->info.nvrtc_minor);
  if (r != CUDA_SUCCESS)
    return ps__cu_fail (err, user ? PS_GPU_BAD_MODULE : PS_GPU_CUDA_FAILED, r,
                        "cannot load %s%s%s for %s", user ? "module " : "kernel ",
                        user ? k->module_path : k->function, "", gpu->info.name);
  if (insert_module (gpu, key, *mod, low) != 0) {
    gpu->cu->cuModuleUnload (*mod);
    return ps_gpu_error_set (err, PS_GPU_NO_MEMORY, 0, "out of memory");
  }
  *lowered = slot_for (gpu->mods, gpu->mods_cap, key)->lowered;
  return 0;
}
