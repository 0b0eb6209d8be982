/* fake-cuda.c: a stand-in for libcuda.so.1 and libcupti.so, so that CI
 * machines without a GPU can test what the profiler does with a driver.
 *
 * planscope loads it through PLANSCOPE_LIBCUDA and PLANSCOPE_LIBCUPTI.
 * PS_FAKE_CUDA picks the machine: "ok" (default; one GPU of compute
 * capability 9.0), "nodevice", "oldgpu" (6.1), "olddriver" (CUDA 11.8),
 * "initfail" (cuInit fails).  PS_FAKE_CUPTI=fail makes cuptiSubscribe fail
 * as when another profiler is attached.  PS_FAKE_CORRUPT=1 changes what
 * device-to-host copies read once memory has been freed (the second run of
 * a --check), so that a check has something to catch.
 *
 * "ok" emulates enough to run plans: device memory is host memory, copies
 * and memsets happen, kernels take a made-up time and touch nothing, each
 * stream has a clock, events order streams, stream capture records
 * operations into a graph (with CUPTI's node-created and node-cloned
 * callbacks) and graph launches replay them; CUPTI activity records
 * (CUDA 13 layouts) and external correlation records are written into the
 * buffers the client hands out. */
#include <cuda.h>
#include <cupti.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__ ((visibility ("default")))

static const char *
mode (void)
{
  const char *m = getenv ("PS_FAKE_CUDA");
  return m && *m ? m : "ok";
}

static bool
is (const char *m)
{
  return strcmp (mode (), m) == 0;
}

/* ---- clocks and streams ------------------------------------------------- */

#define MAX_STREAMS 128

static uint64_t now_ns = 1000000;
static uint64_t ready[MAX_STREAMS];
static uint32_t n_streams;
static uint32_t corr_counter;
static uint64_t frees;
static bool capturing;

typedef struct fake_event {
  uint64_t t;
} fake_event;

static uint32_t
sidx (CUstream s)
{
  uintptr_t i = (uintptr_t) s;
  return i < MAX_STREAMS ? (uint32_t) i : 0;
}

/* ---- CUPTI state -------------------------------------------------------- */

static CUpti_BuffersCallbackRequestFunc req_fn;
static CUpti_BuffersCallbackCompleteFunc done_fn;
static CUpti_CallbackFunc sub_fn;
static void *sub_data;
static bool enabled[64];
static uint8_t *cur_buf;
static size_t cur_size, cur_used;
static uint64_t ext_stack[64];
static int ext_depth;

static size_t
rec_size (CUpti_ActivityKind k)
{
  switch (k) {
  case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    return sizeof (CUpti_ActivityKernel10);
  case CUPTI_ACTIVITY_KIND_MEMCPY:
    return sizeof (CUpti_ActivityMemcpy6);
  case CUPTI_ACTIVITY_KIND_MEMSET:
    return sizeof (CUpti_ActivityMemset4);
  case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
    return sizeof (CUpti_ActivitySynchronization2);
  case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
    return sizeof (CUpti_ActivityExternalCorrelation);
  default:
    return 0;
  }
}

static void
flush_buffer (void)
{
  if (cur_buf && done_fn)
    done_fn (NULL, 0, cur_buf, cur_size, cur_used);
  cur_buf = NULL;
  cur_used = cur_size = 0;
}

static void
emit (const void *rec)
{
  CUpti_ActivityKind k = ((const CUpti_Activity *) rec)->kind;
  size_t size = (rec_size (k) + 7) & ~(size_t) 7;
  if ((unsigned) k >= 64 || !enabled[k] || !req_fn || size == 0)
    return;
  if (cur_buf && cur_used + size > cur_size)
    flush_buffer ();
  if (!cur_buf) {
    size_t max = 0;
    req_fn (&cur_buf, &cur_size, &max);
    cur_used = 0;
    if (!cur_buf || cur_size < size)
      return;
  }
  memcpy (cur_buf + cur_used, rec, rec_size (k));
  cur_used += size;
}

static uint32_t
new_correlation (void)
{
  uint32_t c = ++corr_counter;
  if (ext_depth > 0) {
    CUpti_ActivityExternalCorrelation e;
    memset (&e, 0, sizeof e);
    e.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
    e.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;
    e.externalId = ext_stack[ext_depth - 1];
    e.correlationId = c;
    emit (&e);
  }
  return c;
}

/* ---- operations, executed or captured ----------------------------------- */

enum { OP_KERNEL, OP_H2D, OP_D2H, OP_D2D, OP_MEMSET, OP_HOST, OP_RECORD, OP_WAIT };

typedef struct op {
  int kind;
  uint32_t stream;
  uint64_t dur;
  void *dst;
  const void *src;
  size_t bytes;
  unsigned char value;
  CUhostFn fn;
  void *ud;
  fake_event *ev;
  uint64_t node; /* graph node id when captured */
} op;

typedef struct fake_graph {
  op *ops;
  size_t n, cap;
  uint64_t clone_base;
} fake_graph;

static fake_graph *capture_graph;
static uint64_t node_counter = 100;

static void
node_callback (CUpti_CallbackId cbid, uint64_t node, uint64_t original)
{
  if (!sub_fn)
    return;
  CUpti_GraphData gd;
  memset (&gd, 0, sizeof gd);
  gd.node = (CUgraphNode) (uintptr_t) node;
  gd.originalNode = (CUgraphNode) (uintptr_t) original;
  CUpti_ResourceData rd;
  memset (&rd, 0, sizeof rd);
  rd.resourceDescriptor = &gd;
  sub_fn (sub_data, CUPTI_CB_DOMAIN_RESOURCE, cbid, &rd);
}

static void
run_op (const op *o, uint32_t corr, uint64_t graph_node)
{
  uint64_t *r = &ready[o->stream];
  uint64_t start = *r > now_ns ? *r : now_ns;
  switch (o->kind) {
  case OP_RECORD:
    o->ev->t = *r;
    return;
  case OP_WAIT:
    if (o->ev->t > *r)
      *r = o->ev->t;
    return;
  case OP_HOST:
    o->fn (o->ud);
    *r = start + 2000;
    return;
  default:
    break;
  }
  uint64_t end = start + o->dur;
  *r = end;
  if (o->kind == OP_H2D || o->kind == OP_D2H || o->kind == OP_D2D) {
    memmove (o->dst, o->src, o->bytes);
    CUpti_ActivityMemcpy6 m;
    memset (&m, 0, sizeof m);
    m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    m.copyKind = o->kind == OP_H2D ? CUPTI_ACTIVITY_MEMCPY_KIND_HTOD
                 : o->kind == OP_D2H ? CUPTI_ACTIVITY_MEMCPY_KIND_DTOH
                                     : CUPTI_ACTIVITY_MEMCPY_KIND_DTOD;
    m.bytes = o->bytes;
    m.start = start;
    m.end = end;
    m.streamId = o->stream;
    m.correlationId = corr;
    m.graphNodeId = graph_node;
    emit (&m);
  } else if (o->kind == OP_MEMSET) {
    memset (o->dst, o->value, o->bytes);
    CUpti_ActivityMemset4 m;
    memset (&m, 0, sizeof m);
    m.kind = CUPTI_ACTIVITY_KIND_MEMSET;
    m.value = o->value;
    m.bytes = o->bytes;
    m.start = start;
    m.end = end;
    m.streamId = o->stream;
    m.correlationId = corr;
    m.graphNodeId = graph_node;
    emit (&m);
  } else {
    CUpti_ActivityKernel10 k;
    memset (&k, 0, sizeof k);
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.start = start;
    k.end = end;
    k.streamId = o->stream;
    k.correlationId = corr;
    k.graphNodeId = graph_node;
    k.name = "fake";
    emit (&k);
  }
}

static CUresult
submit (op o)
{
  now_ns += 500; /* the host's cost of an API call */
  if (capturing && capture_graph) {
    fake_graph *g = capture_graph;
    if (g->n == g->cap) {
      g->cap = g->cap ? g->cap * 2 : 64;
      g->ops = realloc (g->ops, g->cap * sizeof *g->ops);
      if (!g->ops)
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    o.node = node_counter++;
    g->ops[g->n++] = o;
    if (o.kind != OP_RECORD && o.kind != OP_WAIT)
      node_callback (CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED, o.node, 0);
    return CUDA_SUCCESS;
  }
  uint32_t corr = o.kind == OP_RECORD || o.kind == OP_WAIT ? 0 : new_correlation ();
  run_op (&o, corr, 0);
  return CUDA_SUCCESS;
}

/* ---- the driver --------------------------------------------------------- */

static CUresult CUDAAPI
f_unsupported (void)
{
  return CUDA_ERROR_NOT_SUPPORTED;
}

static CUresult CUDAAPI
f_init (unsigned flags)
{
  (void) flags;
  return is ("initfail") ? CUDA_ERROR_SYSTEM_DRIVER_MISMATCH : CUDA_SUCCESS;
}

static CUresult CUDAAPI
f_driver_version (int *v)
{
  *v = is ("olddriver") ? 11080 : 13000;
  return CUDA_SUCCESS;
}

static CUresult CUDAAPI
f_device_count (int *n)
{
  *n = is ("nodevice") ? 0 : 1;
  return CUDA_SUCCESS;
}

static CUresult CUDAAPI
f_device_get (CUdevice *d, int ordinal)
{
  *d = ordinal;
  return ordinal == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

static CUresult CUDAAPI
f_device_name (char *name, int len, CUdevice d)
{
  (void) d;
  snprintf (name, (size_t) len, "%s", "Fake GPU");
  return CUDA_SUCCESS;
}

static CUresult CUDAAPI
f_device_attr (int *v, CUdevice_attribute a, CUdevice d)
{
  (void) d;
  switch (a) {
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
    *v = is ("oldgpu") ? 6 : 9;
    break;
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
    *v = is ("oldgpu") ? 1 : 0;
    break;
  case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
    *v = 132;
    break;
  case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN:
    *v = 232448;
    break;
  default:
    *v = 0;
    break;
  }
  return CUDA_SUCCESS;
}

static CUresult CUDAAPI
f_total_mem (size_t *b, CUdevice d)
{
  (void) d;
  *b = (size_t) 141 << 30;
  return CUDA_SUCCESS;
}

static CUresult CUDAAPI
f_ctx_retain (CUcontext *c, CUdevice d)
{
  (void) d;
  *c = (CUcontext) (uintptr_t) 0x1000;
  return CUDA_SUCCESS;
}

static CUresult CUDAAPI
f_ok_dev (CUdevice d)
{
  (void) d;
  return CUDA_SUCCESS;
}

static CUresult CUDAAPI
f_ctx_set (CUcontext c)
{
  (void) c;
  return CUDA_SUCCESS;
}

static CUresult CUDAAPI
f_ctx_sync (void)
{
  for (uint32_t i = 0; i < MAX_STREAMS; i++)
    if (ready[i] > now_ns)
      now_ns = ready[i];
  now_ns += 1000;
  return CUDA_SUCCESS;
}

typedef struct fake_module {
  unsigned char *image;
  size_t len;
} fake_module;

static CUresult CUDAAPI
f_module_load (CUmodule *m, const void *image, unsigned n, CUjit_option *o, void **v)
{
  (void) n, (void) o, (void) v;
  /* A cubin is an ELF file; PTX is text.  Either way the kernel names
   * appear in it, which is what cuModuleGetFunction checks. */
  const unsigned char *p = image;
  size_t len;
  if (p[0] == 0x7f && p[1] == 'E' && p[2] == 'L' && p[3] == 'F') {
    uint64_t shoff, size;
    uint16_t shentsize, shnum;
    memcpy (&shoff, p + 0x28, 8);
    memcpy (&shentsize, p + 0x3a, 2);
    memcpy (&shnum, p + 0x3c, 2);
    size = shoff + (uint64_t) shentsize * shnum;
    len = (size_t) size;
  } else {
    len = strlen (image);
  }
  fake_module *fm = malloc (sizeof *fm);
  if (!fm || !(fm->image = malloc (len)))
    return CUDA_ERROR_OUT_OF_MEMORY;
  memcpy (fm->image, image, len);
  fm->len = len;
  *m = (CUmodule) fm;
  return CUDA_SUCCESS;
}

static CUresult CUDAAPI
f_module_get_function (CUfunction *f, CUmodule m, const char *name)
{
  fake_module *fm = (fake_module *) m;
  size_t n = strlen (name);
  for (size_t i = 0; i + n <= fm->len; i++)
    if (memcmp (fm->image + i, name, n) == 0 && (i + n == fm->len || fm->image[i + n] == 0 ||
                                                 fm->image[i + n] == '(' ||
                                                 fm->image[i + n] == '\n' ||
                                                 fm->image[i + n] == ' ')) {
      *f = (CUfunction) (fm->image + i);
      return CUDA_SUCCESS;
    }
  return CUDA_ERROR_NOT_FOUND;
}

static CUresult CUDAAPI
f_module_unload (CUmodule m)
{
  fake_module *fm = (fake_module *) m;
  free (fm->image);
  free (fm);
  return CUDA_SUCCESS;
}

static CUresult CUDAAPI
f_func_set_attr (CUfunction f, CUfunction_attribute a, int v)
{
  (void) f, (void) a, (void) v;
  return CUDA_SUCCESS;
}

static CUresult CUDAAPI
f_func_get_attr (int *v, CUfunction_attribute a, CUfunction f)
{
  (void) f;
  *v = a == CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK ? 1024 : 0;
  return CUDA_SUCCESS;
}

static CUresult CUDAAPI
f_occupancy (int *n, CUfunction f, int threads, size_t smem)
{
  (void) f, (void) smem;
  *n = threads > 0 ? 2048 / threads : 1;
  return CUDA_SUCCESS;
}

static CUresult CUDAAPI
f_launch (CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
          unsigned bz, unsigned smem, CUstream s, void **params, void **extra)
{
  (void) f, (void) smem, (void) params, (void) extra;
  uint64_t threads = (uint64_t) gx * gy * gz * bx * by * bz;
  op o = { .kind = OP_KERNEL, .stream = sidx (s), .dur = 3000 + threads / 200 };
  return submit (o);
}

static CUresult CUDAAPI
f_host_func (CUstream s, CUhostFn fn, void *ud)
{
  op o = { .kind = OP_HOST, .stream = sidx (s), .fn = fn, .ud = ud };
  return submit (o);
}

static CUresult CUDAAPI
f_mem_alloc (CUdeviceptr *p, size_t bytes)
{
  void *m = calloc (1, bytes ? bytes : 1);
  if (!m)
    return CUDA_ERROR_OUT_OF_MEMORY;
  *p = (CUdeviceptr) (uintptr_t) m;
  return CUDA_SUCCESS;
}

static CUresult CUDAAPI
f_mem_free (CUdeviceptr p)
{
  frees++;
  free ((void *) (uintptr_t) p);
  return CUDA_SUCCESS;
}

static CUresult CUDAAPI
f_host_alloc (void **p, size_t bytes)
{
  *p = calloc (1, bytes ? bytes : 1);
  return *p ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

static CUresult CUDAAPI
f_host_free (void *p)
{
  free (p);
  return CUDA_SUCCESS;
}

static void
corrupt (void *dst, size_t bytes)
{
  const char *c = getenv ("PS_FAKE_CORRUPT");
  if (c && *c == '1' && frees > 0 && bytes >= 4)
    ((unsigned char *) dst)[3] ^= 0x40;
}

static CUresult CUDAAPI
f_htod (CUdeviceptr d, const void *h, size_t n)
{
  memcpy ((void *) (uintptr_t) d, h, n);
  return CUDA_SUCCESS;
}

static CUresult CUDAAPI
f_dtoh (void *h, CUdeviceptr d, size_t n)
{
  memcpy (h, (const void *) (uintptr_t) d, n);
  corrupt (h, n);
  return CUDA_SUCCESS;
}

static CUresult CUDAAPI
f_htod_async (CUdeviceptr d, const void *h, size_t n, CUstream s)
{
  op o = { .kind = OP_H2D, .stream = sidx (s), .dur = 2000 + n / 25, .dst = (void *) (uintptr_t) d,
           .src = h, .bytes = n };
  return submit (o);
}

static CUresult CUDAAPI
f_dtoh_async (void *h, CUdeviceptr d, size_t n, CUstream s)
{
  op o = { .kind = OP_D2H, .stream = sidx (s), .dur = 2000 + n / 25, .dst = h,
           .src = (const void *) (uintptr_t) d, .bytes = n };
  return submit (o);
}

static CUresult CUDAAPI
f_dtod_async (CUdeviceptr d, CUdeviceptr sr, size_t n, CUstream s)
{
  op o = { .kind = OP_D2D, .stream = sidx (s), .dur = 1000 + n / 1000,
           .dst = (void *) (uintptr_t) d, .src = (const void *) (uintptr_t) sr, .bytes = n };
  return submit (o);
}

static CUresult CUDAAPI
f_memset_async (CUdeviceptr d, unsigned char v, size_t n, CUstream s)
{
  op o = { .kind = OP_MEMSET, .stream = sidx (s), .dur = 1000 + n / 2000,
           .dst = (void *) (uintptr_t) d, .bytes = n, .value = v };
  return submit (o);
}

static CUresult CUDAAPI
f_memset (CUdeviceptr d, unsigned char v, size_t n)
{
  memset ((void *) (uintptr_t) d, v, n);
  return CUDA_SUCCESS;
}

static CUresult CUDAAPI
f_stream_create (CUstream *s, unsigned flags)
{
  (void) flags;
  if (n_streams + 1 >= MAX_STREAMS)
    return CUDA_ERROR_OUT_OF_MEMORY;
  *s = (CUstream) (uintptr_t) ++n_streams;
  return CUDA_SUCCESS;
}

static CUresult CUDAAPI
f_stream_destroy (CUstream s)
{
  (void) s;
  return CUDA_SUCCESS;
}

static CUresult CUDAAPI
f_stream_sync (CUstream s)
{
  if (ready[sidx (s)] > now_ns)
    now_ns = ready[sidx (s)];
  return CUDA_SUCCESS;
}

static CUresult CUDAAPI
f_event_create (CUevent *e, unsigned flags)
{
  (void) flags;
  *e = (CUevent) calloc (1, sizeof (fake_event));
  return *e ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

static CUresult CUDAAPI
f_event_destroy (CUevent e)
{
  free (e);
  return CUDA_SUCCESS;
}

static CUresult CUDAAPI
f_event_record (CUevent e, CUstream s)
{
  op o = { .kind = OP_RECORD, .stream = sidx (s), .ev = (fake_event *) e };
  return submit (o);
}

static CUresult CUDAAPI
f_wait_event (CUstream s, CUevent e, unsigned flags)
{
  (void) flags;
  op o = { .kind = OP_WAIT, .stream = sidx (s), .ev = (fake_event *) e };
  return submit (o);
}

static CUresult CUDAAPI
f_begin_capture (CUstream s, CUstreamCaptureMode m)
{
  (void) s, (void) m;
  if (capturing)
    return CUDA_ERROR_ILLEGAL_STATE;
  capture_graph = calloc (1, sizeof *capture_graph);
  capturing = capture_graph != NULL;
  return capturing ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

static CUresult CUDAAPI
f_end_capture (CUstream s, CUgraph *g)
{
  (void) s;
  if (!capturing)
    return CUDA_ERROR_STREAM_CAPTURE_UNMATCHED;
  capturing = false;
  *g = (CUgraph) capture_graph;
  capture_graph = NULL;
  return CUDA_SUCCESS;
}

static CUresult CUDAAPI
f_instantiate (CUgraphExec *x, CUgraph g, unsigned long long flags)
{
  (void) flags;
  fake_graph *fg = (fake_graph *) g;
  /* Instantiation clones every node, as the driver does. */
  fg->clone_base = node_counter;
  node_counter += fg->n + 1;
  for (size_t i = 0; i < fg->n; i++)
    if (fg->ops[i].kind != OP_RECORD && fg->ops[i].kind != OP_WAIT)
      node_callback (CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED, fg->clone_base + i, fg->ops[i].node);
  *x = (CUgraphExec) g;
  return CUDA_SUCCESS;
}

static CUresult CUDAAPI
f_graph_launch (CUgraphExec x, CUstream s)
{
  (void) s;
  fake_graph *fg = (fake_graph *) x;
  now_ns += 500;
  uint32_t corr = new_correlation ();
  for (size_t i = 0; i < fg->n; i++)
    run_op (&fg->ops[i], corr, fg->clone_base + i);
  return CUDA_SUCCESS;
}

static CUresult CUDAAPI
f_exec_destroy (CUgraphExec x)
{
  (void) x;
  return CUDA_SUCCESS;
}

static CUresult CUDAAPI
f_graph_destroy (CUgraph g)
{
  fake_graph *fg = (fake_graph *) g;
  free (fg->ops);
  free (fg);
  return CUDA_SUCCESS;
}

static const struct {
  const char *name;
  void *fn;
} driver[] = {
  { "cuInit", (void *) f_init },
  { "cuDriverGetVersion", (void *) f_driver_version },
  { "cuDeviceGetCount", (void *) f_device_count },
  { "cuDeviceGet", (void *) f_device_get },
  { "cuDeviceGetName", (void *) f_device_name },
  { "cuDeviceGetAttribute", (void *) f_device_attr },
  { "cuDeviceTotalMem", (void *) f_total_mem },
  { "cuDevicePrimaryCtxRetain", (void *) f_ctx_retain },
  { "cuDevicePrimaryCtxRelease", (void *) f_ok_dev },
  { "cuCtxSetCurrent", (void *) f_ctx_set },
  { "cuCtxSynchronize", (void *) f_ctx_sync },
  { "cuModuleLoadDataEx", (void *) f_module_load },
  { "cuModuleGetFunction", (void *) f_module_get_function },
  { "cuModuleUnload", (void *) f_module_unload },
  { "cuFuncSetAttribute", (void *) f_func_set_attr },
  { "cuFuncGetAttribute", (void *) f_func_get_attr },
  { "cuOccupancyMaxActiveBlocksPerMultiprocessor", (void *) f_occupancy },
  { "cuLaunchKernel", (void *) f_launch },
  { "cuLaunchHostFunc", (void *) f_host_func },
  { "cuMemAlloc", (void *) f_mem_alloc },
  { "cuMemFree", (void *) f_mem_free },
  { "cuMemAllocHost", (void *) f_host_alloc },
  { "cuMemFreeHost", (void *) f_host_free },
  { "cuMemcpyHtoD", (void *) f_htod },
  { "cuMemcpyDtoH", (void *) f_dtoh },
  { "cuMemcpyHtoDAsync", (void *) f_htod_async },
  { "cuMemcpyDtoHAsync", (void *) f_dtoh_async },
  { "cuMemcpyDtoDAsync", (void *) f_dtod_async },
  { "cuMemsetD8Async", (void *) f_memset_async },
  { "cuMemsetD8", (void *) f_memset },
  { "cuStreamCreate", (void *) f_stream_create },
  { "cuStreamDestroy", (void *) f_stream_destroy },
  { "cuStreamSynchronize", (void *) f_stream_sync },
  { "cuStreamWaitEvent", (void *) f_wait_event },
  { "cuEventCreate", (void *) f_event_create },
  { "cuEventRecord", (void *) f_event_record },
  { "cuEventDestroy", (void *) f_event_destroy },
  { "cuStreamBeginCapture", (void *) f_begin_capture },
  { "cuStreamEndCapture", (void *) f_end_capture },
  { "cuGraphInstantiateWithFlags", (void *) f_instantiate },
  { "cuGraphLaunch", (void *) f_graph_launch },
  { "cuGraphExecDestroy", (void *) f_exec_destroy },
  { "cuGraphDestroy", (void *) f_graph_destroy },
};

EXPORT CUresult CUDAAPI
cuGetProcAddress_v2 (const char *symbol, void **pfn, int version, cuuint64_t flags,
                     CUdriverProcAddressQueryResult *status)
{
  (void) version, (void) flags;
  *pfn = (void *) f_unsupported;
  for (size_t i = 0; i < sizeof driver / sizeof driver[0]; i++)
    if (strcmp (symbol, driver[i].name) == 0)
      *pfn = driver[i].fn;
  if (status)
    *status = CU_GET_PROC_ADDRESS_SUCCESS;
  return CUDA_SUCCESS;
}

/* ---- CUPTI -------------------------------------------------------------- */

EXPORT CUptiResult CUPTIAPI
cuptiGetResultString (CUptiResult r, const char **s)
{
  *s = r == CUPTI_SUCCESS ? "no error" : "fake CUPTI error";
  return CUPTI_SUCCESS;
}

EXPORT CUptiResult CUPTIAPI
cuptiActivityEnable (CUpti_ActivityKind k)
{
  if ((unsigned) k < 64)
    enabled[k] = true;
  return CUPTI_SUCCESS;
}

EXPORT CUptiResult CUPTIAPI
cuptiActivityDisable (CUpti_ActivityKind k)
{
  if ((unsigned) k < 64)
    enabled[k] = false;
  return CUPTI_SUCCESS;
}

EXPORT CUptiResult CUPTIAPI
cuptiActivityRegisterCallbacks (CUpti_BuffersCallbackRequestFunc req,
                                CUpti_BuffersCallbackCompleteFunc done)
{
  req_fn = req;
  done_fn = done;
  return CUPTI_SUCCESS;
}

EXPORT CUptiResult CUPTIAPI
cuptiActivityFlushAll (uint32_t flag)
{
  (void) flag;
  flush_buffer ();
  return CUPTI_SUCCESS;
}

EXPORT CUptiResult CUPTIAPI
cuptiActivityGetNextRecord (uint8_t *buffer, size_t valid, CUpti_Activity **record)
{
  size_t off = 0;
  if (*record) {
    size_t size = (rec_size ((*record)->kind) + 7) & ~(size_t) 7;
    off = (size_t) ((uint8_t *) *record - buffer) + size;
  }
  if (off >= valid)
    return CUPTI_ERROR_MAX_LIMIT_REACHED;
  *record = (CUpti_Activity *) (buffer + off);
  return CUPTI_SUCCESS;
}

EXPORT CUptiResult CUPTIAPI
cuptiActivityGetNumDroppedRecords (CUcontext ctx, uint32_t stream, size_t *dropped)
{
  (void) ctx, (void) stream;
  *dropped = 0;
  return CUPTI_SUCCESS;
}

EXPORT CUptiResult CUPTIAPI
cuptiActivityPushExternalCorrelationId (CUpti_ExternalCorrelationKind kind, uint64_t id)
{
  (void) kind;
  if (ext_depth >= 64)
    return CUPTI_ERROR_INVALID_OPERATION;
  ext_stack[ext_depth++] = id;
  return CUPTI_SUCCESS;
}

EXPORT CUptiResult CUPTIAPI
cuptiActivityPopExternalCorrelationId (CUpti_ExternalCorrelationKind kind, uint64_t *last)
{
  (void) kind;
  if (ext_depth == 0)
    return CUPTI_ERROR_QUEUE_EMPTY;
  *last = ext_stack[--ext_depth];
  return CUPTI_SUCCESS;
}

EXPORT CUptiResult CUPTIAPI
cuptiGetTimestamp (uint64_t *t)
{
  *t = now_ns;
  return CUPTI_SUCCESS;
}

EXPORT CUptiResult CUPTIAPI
cuptiSubscribe (CUpti_SubscriberHandle *s, CUpti_CallbackFunc fn, void *data)
{
  const char *m = getenv ("PS_FAKE_CUPTI");
  if (m && strcmp (m, "fail") == 0)
    return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  sub_fn = fn;
  sub_data = data;
  *s = (CUpti_SubscriberHandle) (uintptr_t) 0x2000;
  return CUPTI_SUCCESS;
}

EXPORT CUptiResult CUPTIAPI
cuptiUnsubscribe (CUpti_SubscriberHandle s)
{
  (void) s;
  sub_fn = NULL;
  return CUPTI_SUCCESS;
}

EXPORT CUptiResult CUPTIAPI
cuptiEnableCallback (uint32_t enable, CUpti_SubscriberHandle s, CUpti_CallbackDomain d,
                     CUpti_CallbackId cbid)
{
  (void) enable, (void) s, (void) d, (void) cbid;
  return CUPTI_SUCCESS;
}

EXPORT CUptiResult CUPTIAPI
cuptiGetGraphNodeId (CUgraphNode node, uint64_t *id)
{
  *id = (uint64_t) (uintptr_t) node;
  return CUPTI_SUCCESS;
}
