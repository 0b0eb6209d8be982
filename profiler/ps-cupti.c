/* ps-cupti.c: CUPTI activity tracing for a run: buffers handed to CUPTI,
 * the records it fills, and the resource callbacks that tie the graph
 * nodes made while capturing a step to that step.  CUPTI's callbacks have
 * no user data, so the state is process-wide (one open GPU at a time). */
#include "ps-gpu-private.h"

#include <stdlib.h>
#include <string.h>

#include "ps-array.h"

#define BUFFER_BYTES ((size_t) 8 << 20)

typedef struct done_buffer {
  uint8_t *data;
  size_t valid;
} done_buffer;

static pthread_mutex_t buf_lock = PTHREAD_MUTEX_INITIALIZER;
static done_buffer *done;
static uint32_t n_done, done_cap;
static uint64_t dropped_total;
static bool done_oom;
static const ps__cupti *cupti_fns;
static ps__gpu_run *capture_run;

/* DRIVER: CUPTI writes an external correlation record only ahead of an
 * activity API record (cupti_activity.h, CUpti_ActivityExternalCorrelation),
 * so without the driver API's records there would be none, and no kernel,
 * copy or memset could be tied to its step in streams mode. */
static const CUpti_ActivityKind traced_kinds[] = {
  CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
  CUPTI_ACTIVITY_KIND_MEMSET,            CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
  CUPTI_ACTIVITY_KIND_DRIVER,            CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
};
#define N_KINDS (sizeof traced_kinds / sizeof traced_kinds[0])

static void CUPTIAPI
buffer_requested (uint8_t **buffer, size_t *size, size_t *max_records)
{
  void *p = NULL;
  if (posix_memalign (&p, 8, BUFFER_BYTES) != 0)
    p = NULL;
  *buffer = p;
  *size = p ? BUFFER_BYTES : 0;
  *max_records = 0;
}

static void CUPTIAPI
buffer_completed (CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size, size_t valid)
{
  (void) size;
  size_t dropped = 0;
  if (cupti_fns && cupti_fns->cuptiActivityGetNumDroppedRecords (ctx, stream, &dropped) !=
                       CUPTI_SUCCESS)
    dropped = 0;
  pthread_mutex_lock (&buf_lock);
  dropped_total += dropped;
  if (PS_ARRAY_RESERVE (done, done_cap, (uint64_t) n_done + 1) < 0) {
    done_oom = true;
    pthread_mutex_unlock (&buf_lock);
    free (buffer);
    return;
  }
  done[n_done++] = (done_buffer){ buffer, valid };
  pthread_mutex_unlock (&buf_lock);
}

static void CUPTIAPI
on_callback (void *ud, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void *data)
{
  (void) ud;
  ps__gpu_run *run = capture_run;
  if (domain != CUPTI_CB_DOMAIN_RESOURCE || !run || !run->map || !cupti_fns)
    return;
  const CUpti_ResourceData *rd = data;
  const CUpti_GraphData *gd = rd ? rd->resourceDescriptor : NULL;
  if (!gd)
    return;
  uint64_t id = 0, orig = 0;
  if (cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED) {
    if (run->capture_step != PS_NONE &&
        cupti_fns->cuptiGetGraphNodeId (gd->node, &id) == CUPTI_SUCCESS)
      ps_cupti_map_node (run->map, id, run->capture_step);
  } else if (cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED) {
    if (cupti_fns->cuptiGetGraphNodeId (gd->node, &id) == CUPTI_SUCCESS &&
        cupti_fns->cuptiGetGraphNodeId (gd->originalNode, &orig) == CUPTI_SUCCESS)
      ps_cupti_map_clone (run->map, orig, id);
  }
}

void
ps__gpu_set_capture_run (ps__gpu_run *run)
{
  capture_run = run;
}

int
ps__cupti_open (ps_gpu *gpu, ps_gpu_error *err)
{
  const ps__cupti *cp = gpu->cp;
  cupti_fns = cp;
  uint32_t api = 0;
  if (cp->cuptiGetVersion (&api) == CUPTI_SUCCESS)
    gpu->info.cupti_api = api;
  CUptiResult r = cp->cuptiActivityRegisterCallbacks (buffer_requested, buffer_completed);
  if (r != CUPTI_SUCCESS)
    return ps__cupti_fail (err, cp, r, "cuptiActivityRegisterCallbacks");
  r = cp->cuptiSubscribe (&gpu->subscriber, on_callback, NULL);
  if (r != CUPTI_SUCCESS)
    return ps__cupti_fail (err, cp, r, "cuptiSubscribe (is another profiler attached?)");
  gpu->subscribed = true;
  r = cp->cuptiEnableCallback (1, gpu->subscriber, CUPTI_CB_DOMAIN_RESOURCE,
                               CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED);
  if (r == CUPTI_SUCCESS)
    r = cp->cuptiEnableCallback (1, gpu->subscriber, CUPTI_CB_DOMAIN_RESOURCE,
                                 CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED);
  if (r != CUPTI_SUCCESS)
    return ps__cupti_fail (err, cp, r, "cuptiEnableCallback (graph nodes)");
  /* Tracing must work before anything is measured: turn it on and off. */
  r = cp->cuptiActivityEnable (CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  if (r != CUPTI_SUCCESS)
    return ps__cupti_fail (err, cp, r, "cuptiActivityEnable (kernels)");
  cp->cuptiActivityDisable (CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  return 0;
}

static void
drop_buffers (void)
{
  pthread_mutex_lock (&buf_lock);
  for (size_t i = 0; i < n_done; i++)
    free (done[i].data);
  n_done = 0;
  pthread_mutex_unlock (&buf_lock);
}

void
ps__cupti_close (ps_gpu *gpu)
{
  const ps__cupti *cp = gpu->cp;
  if (!cp)
    return;
  for (size_t i = 0; i < N_KINDS; i++)
    cp->cuptiActivityDisable (traced_kinds[i]);
  cp->cuptiActivityFlushAll (CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  if (gpu->subscribed)
    cp->cuptiUnsubscribe (gpu->subscriber);
  gpu->subscribed = false;
  drop_buffers ();
  pthread_mutex_lock (&buf_lock);
  free (done);
  done = NULL;
  done_cap = 0;
  pthread_mutex_unlock (&buf_lock);
  capture_run = NULL;
}

int
ps__cupti_begin (ps_gpu *gpu, ps_gpu_error *err)
{
  const ps__cupti *cp = gpu->cp;
  /* Records of earlier runs (or of an interrupted one) are not ours. */
  cp->cuptiActivityFlushAll (CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  drop_buffers ();
  pthread_mutex_lock (&buf_lock);
  dropped_total = 0;
  done_oom = false;
  pthread_mutex_unlock (&buf_lock);
  for (size_t i = 0; i < N_KINDS; i++) {
    CUptiResult r = cp->cuptiActivityEnable (traced_kinds[i]);
    if (r != CUPTI_SUCCESS) {
      for (size_t j = 0; j < i; j++)
        cp->cuptiActivityDisable (traced_kinds[j]);
      return ps__cupti_fail (err, cp, r, "cuptiActivityEnable");
    }
  }
  return 0;
}

int
ps__cupti_end (ps_gpu *gpu, ps_cupti_map *map, uint64_t *dropped, ps_gpu_error *err)
{
  const ps__cupti *cp = gpu->cp;
  gpu->cu->cuCtxSynchronize ();
  CUptiResult fr = cp->cuptiActivityFlushAll (CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  for (size_t i = 0; i < N_KINDS; i++)
    cp->cuptiActivityDisable (traced_kinds[i]);
  if (fr != CUPTI_SUCCESS)
    return ps__cupti_fail (err, cp, fr, "cuptiActivityFlushAll");

  pthread_mutex_lock (&buf_lock);
  done_buffer *bufs = done;
  size_t n = n_done;
  bool oom = done_oom;
  *dropped = dropped_total;
  done = NULL;
  n_done = done_cap = 0;
  pthread_mutex_unlock (&buf_lock);

  int rc = 0;
  for (size_t i = 0; i < n; i++) {
    CUpti_Activity *rec = NULL;
    for (;;) {
      CUptiResult r = cp->cuptiActivityGetNextRecord (bufs[i].data, bufs[i].valid, &rec);
      if (r != CUPTI_SUCCESS)
        break; /* CUPTI_ERROR_MAX_LIMIT_REACHED: the end of the buffer */
      if (rc == 0)
        rc = ps_cupti_map_record (map, rec);
    }
    free (bufs[i].data);
  }
  free (bufs);
  if (rc != 0)
    return ps_gpu_error_set (err, PS_GPU_NO_MEMORY, 0, "out of memory while reading CUPTI records");
  if (oom)
    return ps_gpu_error_set (err, PS_GPU_NO_MEMORY, 0, "out of memory: CUPTI records were lost");
  return 0;
}
