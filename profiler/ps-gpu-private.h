/* ps-gpu-private.h: the open GPU, and one plan prepared to run on it.
 * GPU backend only. */
#ifndef PS_GPU_PRIVATE_H
#define PS_GPU_PRIVATE_H

#include <pthread.h>

#include "ps-cuda.h"
#include "ps-cupti-map.h"
#include "ps-kernel-src.h"

typedef struct ps__gpu_module_entry {
  uint64_t key; /* 0: empty slot */
  CUmodule mod;
  char lowered[256]; /* user .cu: the kernel's lowered name */
} ps__gpu_module_entry;

struct ps_gpu {
  const ps__cuda *cu;
  const ps__cupti *cp;
  CUdevice dev;
  CUcontext ctx;
  ps_gpu_info info;
  char arch_bin[24];  /* "sm_90": NVRTC compiles cubins for this */
  char arch_ptx[24];  /* "compute_90" */
  bool cubin;         /* NVRTC can target the GPU itself (else PTX, JIT by the driver) */
  int max_smem_optin;

  /* Modules by key (open addressing, power-of-two capacity). */
  ps__gpu_module_entry *mods;
  uint32_t n_mods, mods_cap;
  CUfunction init_fn[PS_DT__COUNT]; /* the support module's fill kernels */

  /* CUPTI: subscribed for graph-node callbacks while open. */
  CUpti_SubscriberHandle subscriber;
  bool subscribed;
};

/* One kernel launch. */
typedef struct ps__gpu_launch {
  CUfunction fn;
  uint32_t grid[3], block[3];
  uint32_t smem;
  void **params;
} ps__gpu_launch;

struct ps__gpu_run;

typedef struct ps__gpu_host_slot {
  struct ps__gpu_run *run;
  uint32_t step;
  double cost_ns;
} ps__gpu_host_slot;

/* What the host issues for one step. */
typedef struct ps__gpu_exec {
  uint8_t what; /* PS__X_* */
  uint32_t launch_begin, launch_count;
  CUdeviceptr src, dst;
  void *host;
  size_t bytes;
  uint8_t value;
} ps__gpu_exec;

enum {
  PS__X_NOTHING = 0,
  PS__X_KERNEL,
  PS__X_H2D,
  PS__X_D2H,
  PS__X_D2D,
  PS__X_MEMSET,
  PS__X_HOST,
  PS__X_RECORD,
  PS__X_WAIT,
};

typedef struct ps__gpu_run {
  ps_gpu *gpu;
  const ps_plan *p;
  const ps_graph *g;

  CUdeviceptr pool;
  CUdeviceptr *ext;     /* per buffer: its own allocation, or 0 when pooled */
  CUdeviceptr *buf;     /* per buffer: where it lives */
  void **host;          /* per node: pinned host memory of h2d/d2h copies, or NULL */

  uint32_t n_streams;
  CUstream *streams;
  CUevent *events;      /* plan events */
  uint8_t *recorded;    /* per plan event, during an issue */
  CUevent fork;
  CUevent *join;        /* per stream */

  ps__gpu_exec *exec;       /* per step */
  ps__gpu_launch *launches;
  uint32_t n_launches;
  uint64_t *argvals;    /* parameter values, 8 bytes each */
  void **argptrs;
  ps__gpu_host_slot *slots; /* per step */

  CUgraph graph;
  CUgraphExec graph_exec;

  /* Tracing state, read by callbacks. */
  pthread_mutex_t lock;
  ps_cupti_map *map;    /* when tracing */
  uint32_t iteration;   /* the iteration being run */
  uint32_t capture_step;/* the step being captured, or PS_NONE */
} ps__gpu_run;

/* ps-gpu.c */
/* The module for a kernel source (compiled and loaded once per GPU). */
int ps__gpu_module (ps_gpu *gpu, const ps_ksrc *k, CUmodule *mod, const char **lowered,
                    ps_gpu_error *err);
/* The run whose capture the CUPTI callback maps graph nodes for. */
void ps__gpu_set_capture_run (ps__gpu_run *run);

/* ps-gpu-run.c */
int ps__gpu_run_init (ps__gpu_run *run, ps_gpu *gpu, const ps_plan *p, ps_gpu_error *err);
void ps__gpu_run_free (ps__gpu_run *run);
/* Fills every buffer and host source with the deterministic inputs. */
int ps__gpu_run_fill (ps__gpu_run *run, ps_gpu_error *err);
/* Captures the submission into a CUDA graph and instantiates it. */
int ps__gpu_run_capture (ps__gpu_run *run, ps_gpu_error *err);
/* Instantiates the captured graph again (for the traced runs: the new
 * nodes are tied to steps through the clone callbacks while run->map is
 * set). */
int ps__gpu_run_reinstantiate (ps__gpu_run *run, ps_gpu_error *err);
/* One iteration in the given mode, waiting for it; *wall_ns the host time. */
int ps__gpu_run_once (ps__gpu_run *run, ps_profile_mode mode, bool tracing, uint32_t iteration,
                      double *wall_ns, ps_gpu_error *err);

/* ps-cupti.c */
int ps__cupti_open (ps_gpu *gpu, ps_gpu_error *err);
void ps__cupti_close (ps_gpu *gpu);
int ps__cupti_begin (ps_gpu *gpu, ps_gpu_error *err);
/* Flushes, stops tracing and feeds every record to map. */
int ps__cupti_end (ps_gpu *gpu, ps_cupti_map *map, uint64_t *dropped, ps_gpu_error *err);


#endif
