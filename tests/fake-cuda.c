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
 * (CUDA 13 layouts) are written into the buffers the client hands out.
 *
 * It is strict where the real driver and CUPTI are, so that what passes
 * here has a chance on a GPU:
 * - cuGetProcAddress honours cudaVersion (cuda.h, cuGetProcAddress): the
 *   newest variant of a symbol not newer than asked; a symbol that exists
 *   only in newer variants gives CUDA_SUCCESS with a NULL pointer and
 *   CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT; a cudaVersion above the
 *   driver's is CUDA_ERROR_INVALID_VALUE.  cuCtxSynchronize has the CUDA
 *   13 variant of another signature (it takes a context), and
 *   cuFuncGetParamInfo exists from 12.4.
 * - External correlation records are written only ahead of an activity
 *   API record, so only while DRIVER (or RUNTIME) activity is enabled
 *   (cupti_activity.h, the comment on CUpti_ActivityExternalCorrelation).
 * - Kernels, copies and memsets of graph launches carry a wrong
 *   correlation id in every activity session after the process's first
 *   (a session starts when DRIVER activity is enabled): the CUPTI 13.1
 *   Update 1 release notes list this as fixed for cudaGraphLaunch, so
 *   CUPTI before it behaves so.
 * - Now and then a record has start = end = 0 ("timestamp could not be
 *   collected", cupti_activity.h): every PS_FAKE_ZERO_TS-th kernel, memcpy
 *   or memset record, 61 by default, 0 for never.
 * - Instantiating a graph again clones the clones of the previous
 *   instantiation, as a graph cloned with cuGraphClone and instantiated
 *   would: CUPTI reports clones of clones.
 * - Launches check the limits every GPU since compute capability 3.0 has
 *   (grid y and z at most 65535, block x and y at most 1024, z at most 64,
 *   1024 threads a block): CUDA_ERROR_INVALID_VALUE beyond them.
 * - A module image that is neither an ELF file nor PTX text is
 *   CUDA_ERROR_INVALID_IMAGE; cuFuncGetParamInfo reads a PTX kernel's
 *   parameters (for a cubin it says CUDA_ERROR_NOT_SUPPORTED, and the
 *   check is left out, as with a driver older than 12.4). */
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
static uint32_t sessions;     /* times DRIVER activity was turned on */
static uint64_t work_records; /* kernel, memcpy and memset records written */

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
  case CUPTI_ACTIVITY_KIND_DRIVER:
  case CUPTI_ACTIVITY_KIND_RUNTIME:
    return sizeof (CUpti_ActivityAPI);
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

static bool
api_traced (void)
{
  return enabled[CUPTI_ACTIVITY_KIND_DRIVER] || enabled[CUPTI_ACTIVITY_KIND_RUNTIME];
}

/* A driver call: its correlation id, its external correlation record (only
 * ahead of an API record, so only while API activity is traced) and its
 * API record. */
static uint32_t
new_correlation (CUpti_driver_api_trace_cbid cbid)
{
  uint32_t c = ++corr_counter;
  if (!api_traced ())
    return c;
  if (ext_depth > 0) {
    CUpti_ActivityExternalCorrelation e;
    memset (&e, 0, sizeof e);
    e.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
    e.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;
    e.externalId = ext_stack[ext_depth - 1];
    e.correlationId = c;
    emit (&e);
  }
  CUpti_ActivityAPI a;
  memset (&a, 0, sizeof a);
  a.kind = CUPTI_ACTIVITY_KIND_DRIVER;
  a.cbid = cbid;
  a.start = now_ns;
  a.end = now_ns + 400;
  a.correlationId = c;
  emit (&a);
  return c;
}

static long
env_long (const char *name, long fallback)
{
  const char *v = getenv (name);
  return v && *v ? strtol (v, NULL, 10) : fallback;
}

/* Every PS_FAKE_ZERO_TS-th work record is untimed; every PS_FAKE_DROP-th
 * is lost (as when CUPTI's buffers overflow): false then. */
static bool
maybe_untimed (uint64_t *start, uint64_t *end)
{
  static long every = -1, drop = -1;
  if (every < 0) {
    every = env_long ("PS_FAKE_ZERO_TS", 61);
    drop = env_long ("PS_FAKE_DROP", 0);
  }
  if (!enabled[CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL])
    return true;
  work_records++;
  if (drop > 0 && work_records % drop == 0)
    return false;
  if (every > 0 && work_records % every == 0)
    *start = *end = 0;
  return true;
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
  uint64_t *current; /* per op: the node id the last instantiation made */
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
  uint64_t rec_start = start, rec_end = end;
  bool keep = maybe_untimed (&rec_start, &rec_end);
  if (o->kind == OP_H2D || o->kind == OP_D2H || o->kind == OP_D2D) {
    memmove (o->dst, o->src, o->bytes);
    CUpti_ActivityMemcpy6 m;
    memset (&m, 0, sizeof m);
    m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    m.copyKind = o->kind == OP_H2D ? CUPTI_ACTIVITY_MEMCPY_KIND_HTOD
                 : o->kind == OP_D2H ? CUPTI_ACTIVITY_MEMCPY_KIND_DTOH
                                     : CUPTI_ACTIVITY_MEMCPY_KIND_DTOD;
    m.bytes = o->bytes;
    m.start = rec_start;
    m.end = rec_end;
    m.streamId = o->stream;
    m.correlationId = corr;
    m.graphNodeId = graph_node;
    if (keep)
      emit (&m);
  } else if (o->kind == OP_MEMSET) {
    memset (o->dst, o->value, o->bytes);
    CUpti_ActivityMemset4 m;
    memset (&m, 0, sizeof m);
    m.kind = CUPTI_ACTIVITY_KIND_MEMSET;
    m.value = o->value;
    m.bytes = o->bytes;
    m.start = rec_start;
    m.end = rec_end;
    m.streamId = o->stream;
    m.correlationId = corr;
    m.graphNodeId = graph_node;
    if (keep)
      emit (&m);
  } else {
    CUpti_ActivityKernel10 k;
    memset (&k, 0, sizeof k);
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.start = rec_start;
    k.end = rec_end;
    k.streamId = o->stream;
    k.correlationId = corr;
    k.graphNodeId = graph_node;
    k.name = "fake";
    if (keep)
      emit (&k);
  }
}

static CUpti_driver_api_trace_cbid
cbid_of (int kind)
{
  switch (kind) {
  case OP_H2D:
    return CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2;
  case OP_D2H:
    return CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoHAsync_v2;
  case OP_D2D:
    return CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoDAsync_v2;
  case OP_MEMSET:
    return CUPTI_DRIVER_TRACE_CBID_cuMemsetD8Async;
  case OP_HOST:
    return CUPTI_DRIVER_TRACE_CBID_cuLaunchHostFunc;
  default:
    return CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel;
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
  uint32_t corr = o.kind == OP_RECORD || o.kind == OP_WAIT ? 0 : new_correlation (cbid_of (o.kind));
  run_op (&o, corr, 0);
  return CUDA_SUCCESS;
}

/* ---- the driver --------------------------------------------------------- */

static int
driver_version (void)
{
  return is ("olddriver") ? 11080 : 13000;
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
  *v = driver_version ();
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

/* cuCtxSynchronize_v2 of CUDA 13: the context to wait for.  A caller that
 * took this variant for the CUDA 2.0 one passes whatever is in the
 * register: anything but the one context is an error. */
static CUresult CUDAAPI
f_ctx_sync_v2 (CUcontext c)
{
  if (c != (CUcontext) (uintptr_t) 0x1000)
    return CUDA_ERROR_INVALID_CONTEXT;
  return f_ctx_sync ();
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
    if (!strstr (image, ".version") || !strstr (image, ".entry"))
      return CUDA_ERROR_INVALID_IMAGE;
  }
  fake_module *fm = malloc (sizeof *fm);
  if (!fm || !(fm->image = malloc (len + 1)))
    return CUDA_ERROR_OUT_OF_MEMORY;
  memcpy (fm->image, image, len);
  fm->image[len] = 0;
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

/* The parameters of a PTX kernel: ".entry NAME(" then ".param .TYPE p"
 * or ".param .align A .b8 p[N]" separated by commas.  f points at the
 * kernel's name in the module (f_module_get_function), which is
 * NUL-terminated. */
static CUresult CUDAAPI
f_func_param_info (CUfunction f, size_t index, size_t *offset, size_t *size)
{
  const char *p = (const char *) f;
  const char *entry = strstr (p, ".entry");
  if (!entry)
    return CUDA_ERROR_NOT_SUPPORTED; /* a cubin: see the head of this file */
  const char *open = strchr (entry, '('), *close = open ? strchr (open, ')') : NULL;
  if (!open || !close)
    return CUDA_ERROR_INVALID_IMAGE;
  size_t off = 0, i = 0;
  for (const char *q = open; q && q < close; i++) {
    q = strstr (q, ".param");
    if (!q || q > close)
      break;
    q += 6;
    size_t sz = 8, align = 0;
    const char *comma = strchr (q, ',');
    const char *end = comma && comma < close ? comma : close;
    const char *al = strstr (q, ".align");
    if (al && al < end)
      align = strtoul (al + 6, NULL, 10);
    const char *br = memchr (q, '[', (size_t) (end - q));
    if (br)
      sz = strtoul (br + 1, NULL, 10);
    else if (strstr (q, "32") && strstr (q, "32") < end)
      sz = 4;
    else if (strstr (q, "16") && strstr (q, "16") < end)
      sz = 2;
    else if (strstr (q, ".u8") && strstr (q, ".u8") < end)
      sz = 1;
    if (!align)
      align = sz;
    off = (off + align - 1) / align * align;
    if (i == index) {
      *offset = off;
      *size = sz;
      return CUDA_SUCCESS;
    }
    off += sz;
    q = end;
  }
  return CUDA_ERROR_INVALID_VALUE; /* no parameter of that index */
}

static CUresult CUDAAPI
f_get_error_name (CUresult r, const char **s)
{
  *s = r == 999 ? "CUDA_ERROR_UNKNOWN" : r == 719 ? "CUDA_ERROR_LAUNCH_FAILED" : NULL;
  if (r == 222)
    *s = "CUDA_ERROR_UNSUPPORTED_PTX_VERSION";
  if (r == 912)
    *s = "CUDA_ERROR_FAKE_FROM_THE_DRIVER";
  return *s ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

static CUresult CUDAAPI
f_get_error_string (CUresult r, const char **s)
{
  *s = r == 912 ? "an error only the driver can name" : NULL;
  return *s ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
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
  if (gx == 0 || gy == 0 || gz == 0 || bx == 0 || by == 0 || bz == 0 || gx > 2147483647u ||
      gy > 65535 || gz > 65535 || bx > 1024 || by > 1024 || bz > 64 ||
      (uint64_t) bx * by * bz > 1024)
    return CUDA_ERROR_INVALID_VALUE;
  const char *code = getenv ("PS_FAKE_LAUNCH_ERROR");
  if (code && *code)
    return (CUresult) strtol (code, NULL, 10);
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
  /* Instantiation clones every node, as the driver does; a second one
   * clones the first one's clones (see the head of this file). */
  if (!fg->current) {
    fg->current = calloc (fg->n + 1, sizeof *fg->current);
    if (!fg->current)
      return CUDA_ERROR_OUT_OF_MEMORY;
    for (size_t i = 0; i < fg->n; i++)
      fg->current[i] = fg->ops[i].node;
  }
  for (size_t i = 0; i < fg->n; i++) {
    uint64_t clone = node_counter++;
    if (fg->ops[i].kind != OP_RECORD && fg->ops[i].kind != OP_WAIT)
      node_callback (CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED, clone, fg->current[i]);
    fg->current[i] = clone;
  }
  *x = (CUgraphExec) g;
  return CUDA_SUCCESS;
}

static CUresult CUDAAPI
f_graph_launch (CUgraphExec x, CUstream s)
{
  (void) s;
  fake_graph *fg = (fake_graph *) x;
  if (!fg->current)
    return CUDA_ERROR_INVALID_HANDLE;
  now_ns += 500;
  uint32_t corr = new_correlation (CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch);
  /* After the first session, the work of a graph launch carries another
   * call's correlation id (see the head of this file). */
  uint32_t work_corr = sessions > 1 ? corr + 1000003 : corr;
  for (size_t i = 0; i < fg->n; i++)
    run_op (&fg->ops[i], work_corr, fg->current[i]);
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
  free (fg->current);
  free (fg);
  return CUDA_SUCCESS;
}

/* Every entry point by the CUDA version of its variant (the NNNNN of
 * cudaTypedefs.h's PFN_<name>_vNNNNN); a symbol may have several. */
static const struct {
  const char *name;
  int version;
  void *fn;
} driver[] = {
  { "cuInit", 2000, (void *) f_init },
  { "cuDriverGetVersion", 2020, (void *) f_driver_version },
  { "cuDeviceGetCount", 2000, (void *) f_device_count },
  { "cuDeviceGet", 2000, (void *) f_device_get },
  { "cuDeviceGetName", 2000, (void *) f_device_name },
  { "cuDeviceGetAttribute", 2000, (void *) f_device_attr },
  { "cuDeviceTotalMem", 3020, (void *) f_total_mem },
  { "cuDevicePrimaryCtxRetain", 7000, (void *) f_ctx_retain },
  { "cuDevicePrimaryCtxRelease", 11000, (void *) f_ok_dev },
  { "cuCtxSetCurrent", 4000, (void *) f_ctx_set },
  { "cuCtxSynchronize", 2000, (void *) f_ctx_sync },
  { "cuModuleLoadDataEx", 2010, (void *) f_module_load },
  { "cuModuleGetFunction", 2000, (void *) f_module_get_function },
  { "cuModuleUnload", 2000, (void *) f_module_unload },
  { "cuFuncSetAttribute", 9000, (void *) f_func_set_attr },
  { "cuFuncGetAttribute", 2020, (void *) f_func_get_attr },
  { "cuOccupancyMaxActiveBlocksPerMultiprocessor", 6050, (void *) f_occupancy },
  { "cuLaunchKernel", 4000, (void *) f_launch },
  { "cuLaunchHostFunc", 10000, (void *) f_host_func },
  { "cuMemAlloc", 3020, (void *) f_mem_alloc },
  { "cuMemFree", 3020, (void *) f_mem_free },
  { "cuMemAllocHost", 3020, (void *) f_host_alloc },
  { "cuMemFreeHost", 2000, (void *) f_host_free },
  { "cuMemcpyHtoD", 3020, (void *) f_htod },
  { "cuMemcpyDtoH", 3020, (void *) f_dtoh },
  { "cuMemcpyHtoDAsync", 3020, (void *) f_htod_async },
  { "cuMemcpyDtoHAsync", 3020, (void *) f_dtoh_async },
  { "cuMemcpyDtoDAsync", 3020, (void *) f_dtod_async },
  { "cuMemsetD8Async", 3020, (void *) f_memset_async },
  { "cuMemsetD8", 3020, (void *) f_memset },
  { "cuStreamCreate", 2000, (void *) f_stream_create },
  { "cuStreamDestroy", 4000, (void *) f_stream_destroy },
  { "cuStreamSynchronize", 2000, (void *) f_stream_sync },
  { "cuStreamWaitEvent", 3020, (void *) f_wait_event },
  { "cuEventCreate", 2000, (void *) f_event_create },
  { "cuEventRecord", 2000, (void *) f_event_record },
  { "cuEventDestroy", 4000, (void *) f_event_destroy },
  { "cuStreamBeginCapture", 10010, (void *) f_begin_capture },
  { "cuStreamEndCapture", 10000, (void *) f_end_capture },
  { "cuGraphInstantiateWithFlags", 11040, (void *) f_instantiate },
  { "cuGraphLaunch", 10000, (void *) f_graph_launch },
  { "cuGraphExecDestroy", 10000, (void *) f_exec_destroy },
  { "cuGraphDestroy", 10000, (void *) f_graph_destroy },
  { "cuCtxSynchronize", 13000, (void *) f_ctx_sync_v2 },
  { "cuFuncGetParamInfo", 12040, (void *) f_func_param_info },
  { "cuGetErrorName", 6000, (void *) f_get_error_name },
  { "cuGetErrorString", 6000, (void *) f_get_error_string },
};

EXPORT CUresult CUDAAPI
cuGetProcAddress_v2 (const char *symbol, void **pfn, int version, cuuint64_t flags,
                     CUdriverProcAddressQueryResult *status)
{
  (void) flags;
  *pfn = NULL;
  if (version > driver_version ()) {
    if (status)
      *status = CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
    return CUDA_ERROR_INVALID_VALUE;
  }
  int best = -1;
  bool known = false;
  for (size_t i = 0; i < sizeof driver / sizeof driver[0]; i++) {
    if (strcmp (symbol, driver[i].name) != 0)
      continue;
    known = true;
    if (driver[i].version <= version && (best < 0 || driver[i].version > driver[best].version))
      best = (int) i;
  }
  if (best >= 0)
    *pfn = driver[best].fn;
  if (status)
    *status = best >= 0 ? CU_GET_PROC_ADDRESS_SUCCESS
              : known   ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
                        : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
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
  if (k == CUPTI_ACTIVITY_KIND_DRIVER && !enabled[k])
    sessions++;
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

EXPORT CUptiResult CUPTIAPI
cuptiGetVersion (uint32_t *version)
{
  *version = CUPTI_API_VERSION;
  return CUPTI_SUCCESS;
}
