/* ps-device.h: device profiles for the cost model and the simulator.
 *
 * A profile is a small JSON document ("format": "planscope-device", see
 * data/devices/NAME.json) with public spec-sheet figures: SM count, FLOP
 * rates, memory and link bandwidths, copy engines, and the latencies of
 * launches, events and host callbacks.  Next to those peaks it may give
 * the rates real work reaches (optional keys, so that older profiles still
 * load): `mem_efficiency`, the share of the memory bandwidth a streaming
 * copy reaches (default 1), and `gemm_efficiency`, the share of the
 * tensor-core peak a GEMM reaches by its size (default: the peak at every
 * size).  Each figure says where it comes from in the profile's
 * "sources".  The profiles shipped in data/devices are also compiled in,
 * so that simulation works from an installed binary that cannot find its
 * data folder; a test checks that both agree. */
#ifndef PS_DEVICE_H
#define PS_DEVICE_H

#include <stddef.h>
#include <stdint.h>

#include "ps-error.h"

#define PS_DEVICE_NAME_MAX 64
/* The most points a profile's gemm_efficiency may give. */
#define PS_DEVICE_GEMM_POINTS 16

typedef struct ps_device {
  char name[PS_DEVICE_NAME_MAX];         /* short name, e.g. "h200" */
  char display_name[PS_DEVICE_NAME_MAX]; /* e.g. "NVIDIA H200 SXM 141GB" */
  uint32_t sm_count;
  uint32_t max_threads_per_sm;
  uint32_t max_blocks_per_sm;
  double fp32_tflops;       /* non-tensor FP32 peak */
  double tensor_tflops;     /* dense FP16/BF16 tensor-core peak */
  double fp64_tflops;
  double mem_bandwidth_gbs; /* device memory, GB/s (1e9 bytes) */
  double h2d_gbs, d2h_gbs;  /* host link, per direction */
  double p2p_gbs;           /* peer link, per direction */
  uint32_t copy_engines;    /* 1: both copy directions share one engine */
  double launch_latency_ns; /* host submission to start on an idle stream */
  double host_launch_ns;    /* host time spent in one launch call */
  double dispatch_gap_ns;   /* gap between back-to-back work on one stream */
  double event_record_ns;
  double event_wait_ns;     /* a satisfied cross-stream wait to the next start */
  double host_callback_ns;  /* cost of a host callback with no cost_ns */
  double copy_latency_ns;   /* fixed cost of one copy or memset */
  /* Achievable rates (the cost model reads them; see ps-cost.h).  The
   * share of mem_bandwidth_gbs that streaming work reaches, in (0, 1]. */
  double mem_efficiency;
  /* The share of tensor_tflops a GEMM of gemm_flops[i] flops reaches is
   * gemm_efficiency[i]; flops increase with i.  No points: the peak. */
  uint32_t gemm_points;
  double gemm_flops[PS_DEVICE_GEMM_POINTS];
  double gemm_efficiency[PS_DEVICE_GEMM_POINTS];
} ps_device;

/* Parses a profile from memory; `path` is used in messages.  Errors are
 * located (`FILE:LINE:COL: error: ...`) and name the key. */
int ps_device_load_json (ps_device *d, const char *data, size_t len, const char *path,
                         ps_diag *diag);
int ps_device_load_file (ps_device *d, const char *path, ps_diag *diag);

/* Finds a profile by name (case-insensitive, e.g. "H200") or, when `name`
 * contains a '/' or ends in ".json", loads that file.  Named profiles are
 * looked up as NAME.json in the folders of $PS_DEVICE_PATH (':'-separated),
 * $PS_SOURCE_ROOT/data/devices, and data/devices or share/planscope/devices
 * next to the running executable, then among the built-in profiles.  NULL
 * or "" means the default, "h200".  When a profile file is read, its path
 * becomes diag->file, so that errors in it are located in that file. */
int ps_device_find (ps_device *d, const char *name, ps_diag *diag);

/* The compiled-in profiles, for listing and as the last fallback. */
size_t ps_device_builtin_count (void);
const ps_device *ps_device_builtin (size_t i);

#define PS_DEVICE_DEFAULT "h200"

#endif
