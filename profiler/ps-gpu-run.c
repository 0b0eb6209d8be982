/* ps-gpu-run.c: one plan prepared on the GPU: the pool and external
 * buffers, pinned host memory for host copies, streams and events, every
 * kernel step's module, function and arguments; and the submission of one
 * iteration, directly (streams mode) or captured into a CUDA graph. */
#include "ps-gpu-private.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ps-array.h"
#include "ps-inputs.h"
#include "ps-timing.h"

#define CU(call) ((r = (call)) == CUDA_SUCCESS)

static const char *
step_label (const ps__gpu_run *run, uint32_t s, char *buf, size_t cap)
{
  const ps_step *st = &run->p->steps[s];
  if (st->nodes_count == 0)
    snprintf (buf, cap, "step %u", s);
  else
    snprintf (buf, cap, "step %u (\"%.100s\"%s)", s,
              ps_node_name (run->g, run->p->step_nodes[st->nodes_begin]),
              st->nodes_count > 1 ? " and its group" : "");
  return buf;
}

/* Whether a node belongs to a conditional branch the graph's `assume`
 * excludes: the model skips it, and so does the run. */
static bool
node_skipped (const ps_graph *g, uint32_t v)
{
  const ps_node *nd = &g->nodes[v];
  if (nd->cond == PS_NONE || nd->cond >= g->n_nodes)
    return false;
  const ps_node *c = &g->nodes[nd->cond];
  if (c->op != PS_OP_CONDITIONAL || c->aux >= g->n_conds)
    return false;
  uint8_t a = g->conds[c->aux].assume;
  return ((nd->flags & PS_NODE_IN_THEN) && a == PS_ASSUME_ELSE) ||
         ((nd->flags & PS_NODE_IN_ELSE) && a == PS_ASSUME_THEN);
}

/* ---- parameters --------------------------------------------------------- */

typedef struct args_builder {
  uint64_t *vals;
  uint32_t n, cap;
  ps__gpu_launch *launches;
  uint32_t n_launches, launches_cap;
} args_builder;

static int
push_val (args_builder *ab, const void *v, size_t size)
{
  if (PS_ARRAY_RESERVE (ab->vals, ab->cap, (uint64_t) ab->n + 1) != 0)
    return PS_ENOMEM;
  ab->vals[ab->n] = 0;
  memcpy (&ab->vals[ab->n], v, size);
  ab->n++;
  return 0;
}

/* ---- kernel steps ------------------------------------------------------- */

/* x * y * z, saturated: each dimension may be up to 2^31 - 1, so a plain
 * 64-bit product can wrap to a small count and pass the limits below. */
static uint64_t
dim_product (const uint32_t d[3])
{
  uint64_t t = 1;
  for (int i = 0; i < 3; i++)
    t = d[i] && t > UINT64_MAX / d[i] ? UINT64_MAX : t * d[i];
  return t;
}

static int
setup_launch (ps__gpu_run *run, ps__gpu_launch *l, CUfunction fn, const ps_ksrc_part *pt,
              const char *what, ps_gpu_error *err)
{
  ps_gpu *gpu = run->gpu;
  const ps__cuda *cu = gpu->cu;
  const ps_kernel *kr = &run->g->kernels[run->g->nodes[pt->node].aux];
  CUresult r;
  l->fn = fn;
  memcpy (l->grid, kr->grid, sizeof l->grid);
  memcpy (l->block, kr->block, sizeof l->block);
  l->smem = kr->smem;
  uint64_t threads = dim_product (l->block);
  int max_threads = 0;
  if (CU (cu->cuFuncGetAttribute (&max_threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, fn)) &&
      threads > (uint64_t) max_threads)
    return ps_gpu_error_set (err, PS_GPU_CUDA_FAILED, 0,
                             "%s: a block of %llu threads is more than this kernel can have "
                             "on %s (%d)",
                             what, (unsigned long long) threads, gpu->info.name, max_threads);
  if (l->smem > 48 * 1024) {
    if ((int64_t) l->smem > gpu->max_smem_optin ||
        !CU (cu->cuFuncSetAttribute (fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                     (int) l->smem)))
      return ps_gpu_error_set (err, PS_GPU_CUDA_FAILED, 0,
                               "%s: %u bytes of dynamic shared memory; %s allows %d", what,
                               l->smem, gpu->info.name, gpu->max_smem_optin);
  }
  if (pt->one_wave) {
    /* A busy-waiting launch lasts its time once per wave: keep one. */
    int per_sm = 0;
    if (!CU (cu->cuOccupancyMaxActiveBlocksPerMultiprocessor (&per_sm, fn, (int) threads,
                                                             l->smem)) ||
        per_sm < 1)
      per_sm = 1;
    uint64_t cap = (uint64_t) per_sm * (gpu->info.sm_count ? gpu->info.sm_count : 1);
    uint64_t blocks = dim_product (l->grid);
    if (blocks > cap) {
      l->grid[0] = (uint32_t) cap;
      l->grid[1] = l->grid[2] = 1;
    }
  }
  return 0;
}

static int
user_args (ps__gpu_run *run, args_builder *ab, uint32_t v, CUfunction fn, const char *what,
           ps_gpu_error *err)
{
  const ps_graph *g = run->g;
  const ps_kernel *kr = &g->kernels[g->nodes[v].aux];
  const ps__cuda *cu = run->gpu->cu;
  /* Drivers from CUDA 12.4 say how many parameters a kernel has and how
   * large each is: check the graph's args against them when they can. */
  size_t off = 0, psize = 0;
  bool info = cu->cuFuncGetParamInfo != NULL;
  if (info) {
    CUresult r = cu->cuFuncGetParamInfo (fn, 0, &off, &psize);
    info = r == CUDA_SUCCESS || r == CUDA_ERROR_INVALID_VALUE;
  }
  for (uint32_t a = 0; a < kr->args_count; a++) {
    const ps_karg *ka = &g->kargs[kr->args_begin + a];
    size_t size = 8;
    int rc;
    switch ((ps_karg_kind) ka->kind) {
    case PS_KARG_BUFFER: {
      CUdeviceptr p = ka->v.buffer < g->n_buffers ? run->buf[ka->v.buffer] : 0;
      rc = push_val (ab, &p, sizeof p);
      break;
    }
    case PS_KARG_I32: {
      int32_t x = (int32_t) ka->v.i;
      size = 4;
      rc = push_val (ab, &x, sizeof x);
      break;
    }
    case PS_KARG_I64:
      rc = push_val (ab, &ka->v.i, sizeof ka->v.i);
      break;
    case PS_KARG_F32: {
      float x = (float) ka->v.f;
      size = 4;
      rc = push_val (ab, &x, sizeof x);
      break;
    }
    case PS_KARG_F64:
    default:
      rc = push_val (ab, &ka->v.f, sizeof ka->v.f);
      break;
    }
    if (rc != 0)
      return ps_gpu_error_set (err, PS_GPU_NO_MEMORY, 0, "out of memory");
    if (!info)
      continue;
    if (cu->cuFuncGetParamInfo (fn, a, &off, &psize) != CUDA_SUCCESS)
      return ps_gpu_error_set (err, PS_GPU_BAD_MODULE, 0,
                               "%s: the kernel has %u parameters but %u args are given", what,
                               a, kr->args_count);
    if (psize != size)
      return ps_gpu_error_set (err, PS_GPU_BAD_MODULE, 0,
                               "%s: args[%u] is %zu bytes but the kernel's parameter %u is %zu",
                               what, a, size, a, psize);
  }
  if (info && cu->cuFuncGetParamInfo (fn, kr->args_count, &off, &psize) == CUDA_SUCCESS)
    return ps_gpu_error_set (err, PS_GPU_BAD_MODULE, 0,
                             "%s: the kernel has more parameters than the %u args given", what,
                             kr->args_count);
  return 0;
}

static int
setup_kernel_step (ps__gpu_run *run, const ps_ksrc_ctx *kc, args_builder *ab, uint32_t s,
                   ps_gpu_error *err)
{
  const ps_graph *g = run->g;
  ps__gpu_exec *x = &run->exec[s];
  char what[160];
  step_label (run, s, what, sizeof what);
  ps_ksrc k;
  int rc = ps_ksrc_build_step (&k, kc, run->p, s, err);
  if (rc != 0)
    return rc;
  if (k.kind == PS_KSRC_NONE)
    return 0;
  CUmodule mod;
  const char *lowered;
  rc = ps__gpu_module (run->gpu, &k, &mod, &lowered, err);
  if (rc != 0) {
    ps_ksrc_free (&k);
    return rc;
  }
  char lname[256];
  snprintf (lname, sizeof lname, "%s", lowered && lowered[0] ? lowered : k.function);

  x->what = PS__X_KERNEL;
  x->launch_begin = ab->n_launches;
  for (uint32_t pi = 0; pi < k.n_parts && rc == 0; pi++) {
    char fname[300];
    if (k.n_parts > 1)
      snprintf (fname, sizeof fname, "%s_p%u", k.function, pi);
    else
      snprintf (fname, sizeof fname, "%s", k.kind == PS_KSRC_GENERATED ? k.function : lname);
    CUfunction fn;
    CUresult r = run->gpu->cu->cuModuleGetFunction (&fn, mod, fname);
    if (r != CUDA_SUCCESS) {
      rc = k.kind == PS_KSRC_GENERATED
             ? ps__cu_fail (err, PS_GPU_CUDA_FAILED, r, "%s: no function %s", what, fname)
             : ps__cu_fail (err, PS_GPU_BAD_MODULE, r, "%s: module %s has no kernel \"%s\"",
                            what, k.module_path, fname);
      break;
    }
    if (PS_ARRAY_RESERVE (ab->launches, ab->launches_cap, (uint64_t) ab->n_launches + 1) != 0) {
      rc = ps_gpu_error_set (err, PS_GPU_NO_MEMORY, 0, "out of memory");
      break;
    }
    uint32_t li = ab->n_launches++;
    ps__gpu_launch *l = &ab->launches[li];
    memset (l, 0, sizeof *l);
    /* Parameters are kept as an index until every value is in place
     * (the value array moves while it grows). */
    l->params = (void **) (uintptr_t) ab->n;
    const ps_ksrc_part *pt = &k.parts[pi];
    if ((rc = setup_launch (run, l, fn, pt, what, err)) != 0)
      break;
    if (k.kind == PS_KSRC_GENERATED) {
      for (uint32_t j = 0; j < pt->bufs_count && rc == 0; j++) {
        uint32_t b = k.bufs[pt->bufs_begin + j];
        CUdeviceptr p = run->buf[b];
        uint64_t n = ps_buffer_elements (g, b);
        if (push_val (ab, &p, sizeof p) || push_val (ab, &n, sizeof n))
          rc = PS_ENOMEM;
      }
      int sink = 0;
      if (rc || push_val (ab, &pt->n, sizeof pt->n) ||
          push_val (ab, &pt->pad_ns, sizeof pt->pad_ns) || push_val (ab, &sink, sizeof sink))
        rc = ps_gpu_error_set (err, PS_GPU_NO_MEMORY, 0, "out of memory");
    } else {
      rc = user_args (run, ab, pt->node, fn, what, err);
    }
  }
  x->launch_count = ab->n_launches - x->launch_begin;
  ps_ksrc_free (&k);
  return rc;
}

/* ---- copies, memsets and the rest --------------------------------------- */

static uint64_t
min_u64 (uint64_t a, uint64_t b)
{
  return a < b ? a : b;
}

static int
setup_step (ps__gpu_run *run, const ps_ksrc_ctx *kc, args_builder *ab, uint32_t s,
            ps_gpu_error *err)
{
  const ps_graph *g = run->g;
  const ps_step *st = &run->p->steps[s];
  ps__gpu_exec *x = &run->exec[s];
  memset (x, 0, sizeof *x);
  if (st->op == PS_OP_EVENT_RECORD || st->op == PS_OP_EVENT_WAIT) {
    if (st->event < run->p->n_events) {
      x->what = st->op == PS_OP_EVENT_RECORD ? PS__X_RECORD : PS__X_WAIT;
      x->value = 0;
      x->bytes = st->event;
    }
    return 0;
  }
  bool all_skipped = st->nodes_count > 0;
  for (uint32_t i = 0; i < st->nodes_count; i++)
    all_skipped &= node_skipped (g, run->p->step_nodes[st->nodes_begin + i]);
  if (st->nodes_count == 0 || all_skipped)
    return 0;
  uint32_t v = run->p->step_nodes[st->nodes_begin];
  const ps_node *nd = &g->nodes[v];
  char what[160];
  CUresult r;

  switch ((ps_op) st->op) {
  case PS_OP_KERNEL:
    return setup_kernel_step (run, kc, ab, s, err);
  case PS_OP_MEMCPY: {
    uint32_t src = nd->reads_count ? g->access[nd->reads_begin] : PS_NONE;
    uint32_t dst = nd->writes_count ? g->access[nd->writes_begin] : PS_NONE;
    uint64_t bytes = nd->bytes;
    if (nd->dir == PS_COPY_H2D && dst != PS_NONE) {
      x->what = PS__X_H2D;
      bytes = min_u64 (bytes, g->buffers[dst].bytes);
    } else if (nd->dir == PS_COPY_D2H && src != PS_NONE) {
      x->what = PS__X_D2H;
      bytes = min_u64 (bytes, g->buffers[src].bytes);
    } else if ((nd->dir == PS_COPY_D2D || nd->dir == PS_COPY_P2P) && src != PS_NONE &&
               dst != PS_NONE) {
      /* One GPU: a peer copy runs as a device-to-device copy. */
      x->what = PS__X_D2D;
      bytes = min_u64 (bytes, min_u64 (g->buffers[src].bytes, g->buffers[dst].bytes));
    } else {
      return 0; /* an imported copy without buffers */
    }
    if (bytes == 0) {
      x->what = PS__X_NOTHING;
      return 0;
    }
    x->bytes = (size_t) bytes;
    x->src = src != PS_NONE ? run->buf[src] : 0;
    x->dst = dst != PS_NONE ? run->buf[dst] : 0;
    if (x->what == PS__X_H2D || x->what == PS__X_D2H) {
      if (!CU (run->gpu->cu->cuMemAllocHost (&run->host[v], x->bytes)))
        return ps__cu_fail (err, PS_GPU_NO_MEMORY, r, "%s: cannot allocate %zu bytes of pinned "
                            "host memory", step_label (run, s, what, sizeof what), x->bytes);
      x->host = run->host[v];
    }
    return 0;
  }
  case PS_OP_MEMSET: {
    uint32_t dst = nd->writes_count ? g->access[nd->writes_begin] : PS_NONE;
    if (dst == PS_NONE)
      return 0;
    x->what = PS__X_MEMSET;
    x->dst = run->buf[dst];
    x->bytes = (size_t) min_u64 (nd->bytes, g->buffers[dst].bytes);
    x->value = nd->value;
    if (x->bytes == 0)
      x->what = PS__X_NOTHING;
    return 0;
  }
  case PS_OP_HOST:
    x->what = PS__X_HOST;
    run->slots[s] = (ps__gpu_host_slot){ run, s, (nd->flags & PS_NODE_HAS_COST) ? nd->cost_ns : 0 };
    return 0;
  default:
    /* Barriers and conditionals: the plan's events already order the work
     * around them, and they run nothing themselves. */
    return 0;
  }
}

/* ---- set-up and tear-down ----------------------------------------------- */

int
ps__gpu_run_init (ps__gpu_run *run, ps_gpu *gpu, const ps_plan *p, ps_gpu_error *err)
{
  memset (run, 0, sizeof *run);
  pthread_mutex_init (&run->lock, NULL);
  run->gpu = gpu;
  run->p = p;
  run->g = p->graph;
  run->capture_step = PS_NONE;
  const ps_graph *g = p->graph;
  const ps__cuda *cu = gpu->cu;
  CUresult r;
  if (!CU (cu->cuCtxSetCurrent (gpu->ctx)))
    return ps__cu_fail (err, PS_GPU_CUDA_FAILED, r, "cuCtxSetCurrent");

  size_t nb = g->n_buffers ? g->n_buffers : 1, nn = g->n_nodes ? g->n_nodes : 1;
  size_t nsteps = p->n_steps ? p->n_steps : 1;
  run->n_streams = p->streams_used ? p->streams_used : 1;
  if (run->n_streams > PS_MAX_STREAMS)
    return ps_gpu_error_set (err, PS_GPU_CUDA_FAILED, 0, "the plan uses %u streams",
                             run->n_streams);
  run->ext = calloc (nb, sizeof *run->ext);
  run->buf = calloc (nb, sizeof *run->buf);
  run->host = calloc (nn, sizeof *run->host);
  run->exec = calloc (nsteps, sizeof *run->exec);
  run->slots = calloc (nsteps, sizeof *run->slots);
  run->streams = calloc (run->n_streams, sizeof *run->streams);
  run->join = calloc (run->n_streams, sizeof *run->join);
  run->events = calloc (p->n_events ? p->n_events : 1, sizeof *run->events);
  run->recorded = calloc (p->n_events ? p->n_events : 1, 1);
  if (!run->ext || !run->buf || !run->host || !run->exec || !run->slots || !run->streams ||
      !run->join || !run->events || !run->recorded)
    return ps_gpu_error_set (err, PS_GPU_NO_MEMORY, 0, "out of memory");

  /* Memory: one pool, external buffers on their own. */
  if (p->pool_bytes && !CU (cu->cuMemAlloc (&run->pool, (size_t) p->pool_bytes)))
    return ps__cu_fail (err, PS_GPU_NO_MEMORY, r, "cannot allocate the pool of %llu bytes",
                        (unsigned long long) p->pool_bytes);
  for (uint32_t b = 0; b < g->n_buffers; b++) {
    uint64_t off = p->offsets ? p->offsets[b] : UINT64_MAX;
    if (off == UINT64_MAX) {
      if (!CU (cu->cuMemAlloc (&run->ext[b], (size_t) g->buffers[b].bytes)))
        return ps__cu_fail (err, PS_GPU_NO_MEMORY, r, "cannot allocate buffer \"%s\" (%llu bytes)",
                            ps_buffer_name (g, b), (unsigned long long) g->buffers[b].bytes);
      run->buf[b] = run->ext[b];
    } else {
      if (off > p->pool_bytes || g->buffers[b].bytes > p->pool_bytes - off)
        return ps_gpu_error_set (err, PS_GPU_CUDA_FAILED, 0,
                                 "buffer \"%s\" lies outside the plan's pool",
                                 ps_buffer_name (g, b));
      run->buf[b] = run->pool + off;
    }
  }

  for (uint32_t q = 0; q < run->n_streams; q++)
    if (!CU (cu->cuStreamCreate (&run->streams[q], CU_STREAM_NON_BLOCKING)) ||
        !CU (cu->cuEventCreate (&run->join[q], CU_EVENT_DISABLE_TIMING)))
      return ps__cu_fail (err, PS_GPU_CUDA_FAILED, r, "cannot create stream %u", q);
  for (uint32_t e = 0; e < p->n_events; e++)
    if (!CU (cu->cuEventCreate (&run->events[e], CU_EVENT_DISABLE_TIMING)))
      return ps__cu_fail (err, PS_GPU_CUDA_FAILED, r, "cannot create event %u", e);
  if (!CU (cu->cuEventCreate (&run->fork, CU_EVENT_DISABLE_TIMING)))
    return ps__cu_fail (err, PS_GPU_CUDA_FAILED, r, "cannot create an event");

  ps_ksrc_ctx kc;
  if (ps_ksrc_ctx_init (&kc, g) != 0)
    return ps_gpu_error_set (err, PS_GPU_NO_MEMORY, 0, "out of memory");
  args_builder ab = { 0 };
  int rc = 0;
  for (uint32_t s = 0; s < p->n_steps && rc == 0; s++)
    rc = setup_step (run, &kc, &ab, s, err);
  ps_ksrc_ctx_free (&kc);
  run->launches = ab.launches;
  run->n_launches = ab.n_launches;
  run->argvals = ab.vals;
  if (rc == 0 && ab.n) {
    run->argptrs = malloc ((size_t) ab.n * sizeof *run->argptrs);
    if (!run->argptrs)
      rc = ps_gpu_error_set (err, PS_GPU_NO_MEMORY, 0, "out of memory");
    for (uint32_t i = 0; run->argptrs && i < ab.n; i++)
      run->argptrs[i] = &run->argvals[i];
  }
  for (uint32_t i = 0; i < run->n_launches; i++)
    run->launches[i].params = rc == 0 && run->argptrs
                                ? run->argptrs + (uintptr_t) run->launches[i].params
                                : NULL;
  return rc;
}

void
ps__gpu_run_free (ps__gpu_run *run)
{
  ps_gpu *gpu = run->gpu;
  if (!gpu)
    return;
  const ps__cuda *cu = gpu->cu;
  cu->cuCtxSetCurrent (gpu->ctx);
  cu->cuCtxSynchronize ();
  if (run->graph_exec)
    cu->cuGraphExecDestroy (run->graph_exec);
  if (run->graph)
    cu->cuGraphDestroy (run->graph);
  for (uint32_t e = 0; run->events && e < run->p->n_events; e++)
    if (run->events[e])
      cu->cuEventDestroy (run->events[e]);
  for (uint32_t q = 0; run->streams && q < run->n_streams; q++) {
    if (run->streams[q])
      cu->cuStreamDestroy (run->streams[q]);
    if (run->join && run->join[q])
      cu->cuEventDestroy (run->join[q]);
  }
  if (run->fork)
    cu->cuEventDestroy (run->fork);
  for (uint32_t v = 0; run->host && v < run->g->n_nodes; v++)
    if (run->host[v])
      cu->cuMemFreeHost (run->host[v]);
  for (uint32_t b = 0; run->ext && b < run->g->n_buffers; b++)
    if (run->ext[b])
      cu->cuMemFree (run->ext[b]);
  if (run->pool)
    cu->cuMemFree (run->pool);
  free (run->ext);
  free (run->buf);
  free (run->host);
  free (run->exec);
  free (run->slots);
  free (run->streams);
  free (run->join);
  free (run->events);
  free (run->recorded);
  free (run->launches);
  free (run->argvals);
  free (run->argptrs);
  pthread_mutex_destroy (&run->lock);
  memset (run, 0, sizeof *run);
}

/* ---- inputs ------------------------------------------------------------- */

static int
fill_device (ps__gpu_run *run, CUdeviceptr p, ps_dtype dt, uint64_t n, uint64_t seed,
             ps_gpu_error *err)
{
  if (n == 0)
    return 0;
  uint64_t blocks = (n + 255) / 256;
  unsigned grid = blocks > 8192 ? 8192 : (unsigned) blocks;
  void *params[] = { &p, &n, &seed };
  CUresult r = run->gpu->cu->cuLaunchKernel (run->gpu->init_fn[dt], grid, 1, 1, 256, 1, 1, 0,
                                             NULL, params, NULL);
  if (r != CUDA_SUCCESS)
    return ps__cu_fail (err, PS_GPU_CUDA_FAILED, r, "filling inputs");
  return 0;
}

static ps_dtype
dtype_of (const ps_graph *g, uint32_t b)
{
  return g->buffers[b].dtype < PS_DT__COUNT ? (ps_dtype) g->buffers[b].dtype : PS_DT_F32;
}

int
ps__gpu_run_fill (ps__gpu_run *run, ps_gpu_error *err)
{
  const ps_graph *g = run->g;
  const ps__cuda *cu = run->gpu->cu;
  CUresult r;
  int rc;
  if (run->pool && !CU (cu->cuMemsetD8 (run->pool, 0, (size_t) run->p->pool_bytes)))
    return ps__cu_fail (err, PS_GPU_CUDA_FAILED, r, "clearing the pool");
  for (uint32_t b = 0; b < g->n_buffers; b++)
    if (run->ext[b] && !CU (cu->cuMemsetD8 (run->ext[b], 0, (size_t) g->buffers[b].bytes)))
      return ps__cu_fail (err, PS_GPU_CUDA_FAILED, r, "clearing buffer \"%s\"",
                          ps_buffer_name (g, b));
  /* Host sources of uploads: made on the device in the destination
   * buffer, then copied out (the buffers are filled after this). */
  for (uint32_t s = 0; s < run->p->n_steps; s++) {
    ps__gpu_exec *x = &run->exec[s];
    if (x->what != PS__X_H2D && x->what != PS__X_D2H)
      continue;
    memset (x->host, 0, x->bytes);
    if (x->what == PS__X_D2H)
      continue;
    uint32_t v = run->p->step_nodes[run->p->steps[s].nodes_begin];
    uint32_t dst = g->access[g->nodes[v].writes_begin];
    ps_dtype dt = dtype_of (g, dst);
    if ((rc = fill_device (run, x->dst, dt, x->bytes / ps_dtype_size (dt),
                           ps_fill_seed (ps_node_name (g, v)), err)) != 0)
      return rc;
    if (!CU (cu->cuCtxSynchronize ()) || !CU (cu->cuMemcpyDtoH (x->host, x->dst, x->bytes)))
      return ps__cu_fail (err, PS_GPU_CUDA_FAILED, r, "filling the host side of \"%s\"",
                          ps_node_name (g, v));
  }
  /* Only inputs: a pooled buffer written first may share its offset with
   * an input (ps-inputs.h). */
  uint8_t *input = malloc (g->n_buffers ? g->n_buffers : 1);
  if (!input)
    return ps_gpu_error_set (err, PS_GPU_NO_MEMORY, 0, "out of memory");
  ps_plan_inputs (run->p, input);
  rc = 0;
  for (uint32_t b = 0; b < g->n_buffers && rc == 0; b++)
    if (input[b])
      rc = fill_device (run, run->buf[b], dtype_of (g, b), ps_buffer_elements (g, b),
                        ps_fill_seed (ps_buffer_name (g, b)), err);
  free (input);
  if (rc != 0)
    return rc;
  if (!CU (cu->cuCtxSynchronize ()))
    return ps__cu_fail (err, PS_GPU_CUDA_FAILED, r, "filling inputs");
  return 0;
}

/* ---- submission --------------------------------------------------------- */

static void CUDA_CB
host_fn (void *ud)
{
  ps__gpu_host_slot *slot = ud;
  ps__gpu_run *run = slot->run;
  const ps__cupti *cp = run->gpu->cp;
  ps_cupti_map *map = run->map;
  uint64_t a = 0, b = 0;
  if (map)
    cp->cuptiGetTimestamp (&a);
  if (slot->cost_ns > 0) {
    /* The callback's stated cost, spent on the host (at most a second). */
    double until = ps_clock_now () * 1e9 + (slot->cost_ns < 1e9 ? slot->cost_ns : 1e9);
    while (ps_clock_now () * 1e9 < until) {
    }
  }
  if (map) {
    cp->cuptiGetTimestamp (&b);
    pthread_mutex_lock (&run->lock);
    ps_cupti_map_host (map, run->iteration, slot->step, a, b);
    pthread_mutex_unlock (&run->lock);
  }
}

static int
issue_step (ps__gpu_run *run, uint32_t s, ps_gpu_error *err)
{
  const ps__cuda *cu = run->gpu->cu;
  const ps__gpu_exec *x = &run->exec[s];
  CUstream q = run->streams[run->p->steps[s].stream < run->n_streams ? run->p->steps[s].stream : 0];
  CUresult r = CUDA_SUCCESS;
  const char *call = "";
  switch (x->what) {
  case PS__X_KERNEL:
    call = "cuLaunchKernel";
    for (uint32_t i = 0; i < x->launch_count && r == CUDA_SUCCESS; i++) {
      const ps__gpu_launch *l = &run->launches[x->launch_begin + i];
      r = cu->cuLaunchKernel (l->fn, l->grid[0], l->grid[1], l->grid[2], l->block[0],
                              l->block[1], l->block[2], l->smem, q, l->params, NULL);
    }
    break;
  case PS__X_H2D:
    call = "cuMemcpyHtoDAsync";
    r = cu->cuMemcpyHtoDAsync (x->dst, x->host, x->bytes, q);
    break;
  case PS__X_D2H:
    call = "cuMemcpyDtoHAsync";
    r = cu->cuMemcpyDtoHAsync (x->host, x->src, x->bytes, q);
    break;
  case PS__X_D2D:
    call = "cuMemcpyDtoDAsync";
    r = cu->cuMemcpyDtoDAsync (x->dst, x->src, x->bytes, q);
    break;
  case PS__X_MEMSET:
    call = "cuMemsetD8Async";
    r = cu->cuMemsetD8Async (x->dst, x->value, x->bytes, q);
    break;
  case PS__X_HOST:
    call = "cuLaunchHostFunc";
    r = cu->cuLaunchHostFunc (q, host_fn, &run->slots[s]);
    break;
  case PS__X_RECORD:
    call = "cuEventRecord";
    r = cu->cuEventRecord (run->events[x->bytes], q);
    run->recorded[x->bytes] = 1;
    break;
  case PS__X_WAIT:
    /* A wait for an event not recorded yet in this run passes (and inside
     * a capture, waiting for an event from outside it is an error). */
    call = "cuStreamWaitEvent";
    if (run->recorded[x->bytes])
      r = cu->cuStreamWaitEvent (q, run->events[x->bytes], 0);
    break;
  default:
    break;
  }
  if (r != CUDA_SUCCESS) {
    char what[160];
    return ps__cu_fail (err, PS_GPU_CUDA_FAILED, r, "%s: %s",
                        step_label (run, s, what, sizeof what), call);
  }
  return 0;
}

static int
issue (ps__gpu_run *run, bool tracing, bool capturing, ps_gpu_error *err)
{
  const ps__cuda *cu = run->gpu->cu;
  const ps__cupti *cp = run->gpu->cp;
  CUresult r;
  memset (run->recorded, 0, run->p->n_events ? run->p->n_events : 1);
  /* Every stream starts after stream 0 and ends before it (a capture
   * needs both; direct submission gets the same shape). */
  if (!CU (cu->cuEventRecord (run->fork, run->streams[0])))
    return ps__cu_fail (err, PS_GPU_CUDA_FAILED, r, "cuEventRecord (start)");
  for (uint32_t q = 1; q < run->n_streams; q++)
    if (!CU (cu->cuStreamWaitEvent (run->streams[q], run->fork, 0)))
      return ps__cu_fail (err, PS_GPU_CUDA_FAILED, r, "cuStreamWaitEvent (start)");
  for (uint32_t s = 0; s < run->p->n_steps; s++) {
    if (capturing)
      run->capture_step = s;
    if (tracing)
      cp->cuptiActivityPushExternalCorrelationId (CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0,
                                                  ps_cupti_external_id (run->iteration, s));
    int rc = issue_step (run, s, err);
    if (tracing) {
      uint64_t last;
      cp->cuptiActivityPopExternalCorrelationId (CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last);
    }
    if (rc != 0) {
      run->capture_step = PS_NONE;
      return rc;
    }
  }
  run->capture_step = PS_NONE;
  for (uint32_t q = 1; q < run->n_streams; q++)
    if (!CU (cu->cuEventRecord (run->join[q], run->streams[q])) ||
        !CU (cu->cuStreamWaitEvent (run->streams[0], run->join[q], 0)))
      return ps__cu_fail (err, PS_GPU_CUDA_FAILED, r, "joining stream %u", q);
  return 0;
}

int
ps__gpu_run_capture (ps__gpu_run *run, ps_gpu_error *err)
{
  const ps__cuda *cu = run->gpu->cu;
  CUresult r;
  ps__gpu_set_capture_run (run);
  if (!CU (cu->cuStreamBeginCapture (run->streams[0], CU_STREAM_CAPTURE_MODE_THREAD_LOCAL))) {
    ps__gpu_set_capture_run (NULL);
    return ps__cu_fail (err, PS_GPU_CUDA_FAILED, r, "cuStreamBeginCapture");
  }
  int rc = issue (run, false, true, err);
  CUgraph graph = NULL;
  r = cu->cuStreamEndCapture (run->streams[0], &graph);
  if (rc == 0 && r != CUDA_SUCCESS)
    rc = ps__cu_fail (err, PS_GPU_CUDA_FAILED, r, "cuStreamEndCapture");
  run->graph = graph;
  if (rc == 0 && !CU (cu->cuGraphInstantiateWithFlags (&run->graph_exec, graph, 0)))
    rc = ps__cu_fail (err, PS_GPU_CUDA_FAILED, r, "cuGraphInstantiateWithFlags");
  ps__gpu_set_capture_run (NULL);
  return rc;
}

int
ps__gpu_run_reinstantiate (ps__gpu_run *run, ps_gpu_error *err)
{
  const ps__cuda *cu = run->gpu->cu;
  CUresult r;
  if (run->graph_exec)
    cu->cuGraphExecDestroy (run->graph_exec);
  run->graph_exec = NULL;
  ps__gpu_set_capture_run (run);
  r = cu->cuGraphInstantiateWithFlags (&run->graph_exec, run->graph, 0);
  ps__gpu_set_capture_run (NULL);
  if (r != CUDA_SUCCESS) {
    run->graph_exec = NULL;
    return ps__cu_fail (err, PS_GPU_CUDA_FAILED, r, "cuGraphInstantiateWithFlags");
  }
  return 0;
}

int
ps__gpu_run_once (ps__gpu_run *run, ps_profile_mode mode, bool tracing, uint32_t iteration,
                  double *wall_ns, ps_gpu_error *err)
{
  const ps__cuda *cu = run->gpu->cu;
  const ps__cupti *cp = run->gpu->cp;
  CUresult r;
  int rc = 0;
  run->iteration = iteration;
  double t0 = ps_clock_now () * 1e9;
  if (tracing && run->map) {
    uint64_t ts = 0;
    cp->cuptiGetTimestamp (&ts);
    ps_cupti_map_origin (run->map, iteration, ts);
  }
  if (mode == PS_PROFILE_GRAPH) {
    if (tracing)
      cp->cuptiActivityPushExternalCorrelationId (CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0,
                                                  ps_cupti_external_graph_id (iteration));
    r = cu->cuGraphLaunch (run->graph_exec, run->streams[0]);
    if (tracing) {
      uint64_t last;
      cp->cuptiActivityPopExternalCorrelationId (CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last);
    }
    if (r != CUDA_SUCCESS)
      rc = ps__cu_fail (err, PS_GPU_CUDA_FAILED, r, "cuGraphLaunch");
  } else {
    rc = issue (run, tracing, false, err);
  }
  r = cu->cuCtxSynchronize ();
  if (rc == 0 && r != CUDA_SUCCESS)
    rc = ps__cu_fail (err, PS_GPU_CUDA_FAILED, r, "the run failed (cuCtxSynchronize)");
  if (tracing && run->map) {
    uint64_t ts = 0;
    cp->cuptiGetTimestamp (&ts);
    ps_cupti_map_until (run->map, iteration, ts);
  }
  if (wall_ns)
    *wall_ns = ps_clock_now () * 1e9 - t0;
  return rc;
}
