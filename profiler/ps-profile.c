/* ps-profile.c: measuring a plan (warm-up, untraced and traced runs,
 * CUPTI records to a measured timeline) and checking that two plans of
 * one graph compute the same outputs. */
#include "ps-gpu-private.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static bool
keep_going (const ps_profile_options *o, const char *what, double frac)
{
  return !o->progress || o->progress (o->progress_ctx, what, frac);
}

static int
cancelled (ps_gpu_error *err)
{
  return ps_gpu_error_set (err, PS_GPU_CANCELLED, 0, "the run was cancelled");
}

/* What each step's submission makes CUPTI write per run. */
static void
expect_records (const ps__gpu_run *run, ps_cupti_map *map)
{
  for (uint32_t s = 0; s < run->p->n_steps; s++) {
    const ps__gpu_exec *x = &run->exec[s];
    switch (x->what) {
    case PS__X_KERNEL:
      ps_cupti_map_expect (map, s, x->launch_count, PS_CUPTI_KERNEL);
      break;
    case PS__X_H2D:
    case PS__X_D2H:
    case PS__X_D2D:
      ps_cupti_map_expect (map, s, 1, PS_CUPTI_MEMCPY);
      break;
    case PS__X_MEMSET:
      ps_cupti_map_expect (map, s, 1, PS_CUPTI_MEMSET);
      break;
    default:
      break;
    }
  }
}

/* " (2 kernel, 1 memcpy)" */
static void
by_work (char *buf, size_t cap, const uint64_t by[PS_CUPTI_WORK__COUNT])
{
  size_t len = 0;
  buf[0] = '\0';
  for (int w = 1; w < PS_CUPTI_WORK__COUNT + 1; w++) {
    int k = w % PS_CUPTI_WORK__COUNT; /* "other" last */
    if (!by[k] || len >= cap)
      continue;
    len += (size_t) snprintf (buf + len, cap - len, "%s%llu %s", len ? ", " : " (",
                              (unsigned long long) by[k], ps_cupti_work_name ((ps_cupti_work) k));
  }
  if (len && len < cap)
    snprintf (buf + len, cap - len, ")");
}

/* Never a silent empty result: every record tied to a step, every
 * expected record seen, every step with work timed at least once. */
static int
check_records (const ps_plan *p, const ps_cupti_map *m, uint64_t dropped, ps_gpu_error *err)
{
  if (m->unmatched == 0 && m->missing == 0 && m->unmeasured == 0)
    return 0;
  char um[160], mi[160], first[200] = "";
  by_work (um, sizeof um, m->unmatched_by);
  by_work (mi, sizeof mi, m->missing_by);
  if (m->unmeasured && m->first_unmeasured < p->n_steps) {
    const ps_step *st = &p->steps[m->first_unmeasured];
    snprintf (first, sizeof first, "; %u step%s with work never timed, the first step %u (\"%.80s\")",
              m->unmeasured, m->unmeasured == 1 ? "" : "s", m->first_unmeasured,
              st->nodes_count ? ps_node_name (p->graph, p->step_nodes[st->nodes_begin]) : "");
  }
  return ps_gpu_error_set (err, PS_GPU_RECORDS, 0,
                           "%llu of %llu expected records mapped; %llu unmatched%s, %llu "
                           "missing%s, %llu untimed, %llu dropped by CUPTI%s",
                           (unsigned long long) m->matched, (unsigned long long) m->expected,
                           (unsigned long long) m->unmatched, um,
                           (unsigned long long) m->missing, mi,
                           (unsigned long long) m->untimed, (unsigned long long) dropped, first);
}

int
ps_gpu_profile (ps_gpu *gpu, const ps_plan *p, const ps_profile_options *opts,
                ps_profile_result *res, ps_gpu_error *err)
{
  memset (res, 0, sizeof *res);
  ps_gpu_error_clear (err);
  ps_profile_options o;
  if (opts)
    o = *opts;
  else
    ps_profile_options_init (&o);
  uint32_t n = o.iterations ? o.iterations : 1;
  if (n > 100000)
    n = 100000;
  uint32_t total = o.warmup + (o.overhead ? n : 0) + 1 + n, done = 0;

  ps__gpu_run run;
  ps_cupti_map map;
  ps_step_times times;
  memset (&times, 0, sizeof times);
  double *walls = malloc ((size_t) n * sizeof *walls);
  int rc = ps_cupti_map_init (&map, o.mode, p->n_steps, n);
  if (!walls || rc != 0) {
    free (walls);
    ps_cupti_map_free (&map);
    return ps_gpu_error_set (err, PS_GPU_NO_MEMORY, 0, "out of memory");
  }
  bool tracing = false;
  res->wall_untraced_ns = res->wall_traced_ns = -1;

  rc = ps__gpu_run_init (&run, gpu, p, err);
  if (rc == 0) {
    expect_records (&run, &map);
    rc = ps__gpu_run_fill (&run, err);
  }
  if (rc == 0 && o.mode == PS_PROFILE_GRAPH) {
    run.map = &map; /* the capture ties graph nodes to steps */
    rc = ps__gpu_run_capture (&run, err);
    run.map = NULL;
  }
  for (uint32_t i = 0; rc == 0 && i < o.warmup; i++) {
    if (!keep_going (&o, "warm-up", (double) done++ / total))
      rc = cancelled (err);
    else
      rc = ps__gpu_run_once (&run, o.mode, false, 0, NULL, err);
  }
  if (rc == 0 && o.overhead) {
    for (uint32_t i = 0; rc == 0 && i < n; i++) {
      if (!keep_going (&o, "runs without tracing", (double) done++ / total))
        rc = cancelled (err);
      else
        rc = ps__gpu_run_once (&run, o.mode, false, i, &walls[i], err);
    }
    if (rc == 0)
      res->wall_untraced_ns = ps_median (walls, n);
  }
  if (rc == 0 && (rc = ps__cupti_begin (gpu, err)) == 0) {
    tracing = true;
    run.map = &map;
    /* A graph made while CUPTI traced: its launches are reported node by
     * node for certain. */
    if (o.mode == PS_PROFILE_GRAPH)
      rc = ps__gpu_run_reinstantiate (&run, err);
    /* One traced run first: CUPTI's first records carry set-up costs.  Its
     * iteration number is past the measured ones, so it is not mapped. */
    if (rc == 0 && !keep_going (&o, "traced warm-up", (double) done++ / total))
      rc = cancelled (err);
    else if (rc == 0)
      rc = ps__gpu_run_once (&run, o.mode, true, n, NULL, err);
    for (uint32_t i = 0; rc == 0 && i < n; i++) {
      if (!keep_going (&o, "traced runs", (double) done++ / total))
        rc = cancelled (err);
      else
        rc = ps__gpu_run_once (&run, o.mode, true, i, &walls[i], err);
    }
    if (rc == 0)
      res->wall_traced_ns = ps_median (walls, n);
  }
  run.map = NULL;
  if (tracing) {
    ps_gpu_error e2;
    int r2 = ps__cupti_end (gpu, &map, &res->dropped, &e2);
    if (rc == 0 && r2 != 0) {
      rc = r2;
      if (err)
        *err = e2;
    }
  }
  if (rc == 0 && ps_step_times_init (&times, p->n_steps, n) != 0)
    rc = ps_gpu_error_set (err, PS_GPU_NO_MEMORY, 0, "out of memory");
  if (rc == 0 && ps_cupti_map_finish (&map, &times) != 0)
    rc = ps_gpu_error_set (err, PS_GPU_NO_MEMORY, 0, "out of memory");
  if (rc == 0)
    rc = check_records (p, &map, res->dropped, err);
  if (rc == 0) {
    res->step_ns = malloc ((p->n_steps ? p->n_steps : 1) * sizeof *res->step_ns);
    int r = res->step_ns ? ps_measured_timeline (p, &times, gpu->info.name, &res->timeline,
                                                 res->step_ns)
                         : PS_ENOMEM;
    if (r != 0)
      rc = ps_gpu_error_set (err, PS_GPU_NO_MEMORY, 0, "cannot build the measured timeline: %s",
                             ps_strerror (r));
    res->iterations = n;
    res->records = map.matched;
    res->unmatched = map.unmatched;
    res->untimed = map.untimed;
    res->expected = map.expected;
    res->missing = map.missing;
  }
  ps__gpu_run_free (&run);
  ps_cupti_map_free (&map);
  ps_step_times_free (&times);
  free (walls);
  if (rc != 0) {
    ps_profile_result_free (res);
    res->wall_untraced_ns = res->wall_traced_ns = -1;
  }
  return rc;
}

/* ---- --check ------------------------------------------------------------ */

typedef struct output {
  char name[160];
  ps_dtype dt;
  size_t bytes;
  unsigned char *data;
} output;

static void
free_outputs (output *o, uint32_t n)
{
  for (uint32_t i = 0; o && i < n; i++)
    free (o[i].data);
  free (o);
}

/* Runs p once from the deterministic inputs and copies its outputs out:
 * external buffers some node writes, then every download's host side. */
static int
run_outputs (ps_gpu *gpu, const ps_plan *p, ps_profile_mode mode, output **out, uint32_t *n_out,
             ps_gpu_error *err)
{
  const ps_graph *g = p->graph;
  *out = NULL;
  *n_out = 0;
  uint8_t *written = calloc (g->n_buffers ? g->n_buffers : 1, 1);
  output *o = calloc ((size_t) g->n_buffers + g->n_nodes + 1, sizeof *o);
  if (!written || !o) {
    free (written);
    free (o);
    return ps_gpu_error_set (err, PS_GPU_NO_MEMORY, 0, "out of memory");
  }
  for (uint32_t v = 0; v < g->n_nodes; v++) {
    const ps_node *nd = &g->nodes[v];
    for (uint32_t w = 0; w < nd->writes_count; w++)
      written[g->access[nd->writes_begin + w]] = 1;
    if (nd->op == PS_OP_KERNEL && nd->aux < g->n_kernels) {
      const ps_kernel *k = &g->kernels[nd->aux];
      for (uint32_t a = 0; a < k->args_count; a++)
        if (g->kargs[k->args_begin + a].kind == PS_KARG_BUFFER)
          written[g->kargs[k->args_begin + a].v.buffer] = 1;
    }
  }

  ps__gpu_run run;
  uint32_t n = 0;
  int rc = ps__gpu_run_init (&run, gpu, p, err);
  if (rc == 0)
    rc = ps__gpu_run_fill (&run, err);
  if (rc == 0 && mode == PS_PROFILE_GRAPH)
    rc = ps__gpu_run_capture (&run, err);
  if (rc == 0)
    rc = ps__gpu_run_once (&run, mode, false, 0, NULL, err);
  for (uint32_t b = 0; rc == 0 && b < g->n_buffers; b++) {
    if (!(g->buffers[b].flags & PS_BUF_EXTERNAL) || !written[b])
      continue;
    output *x = &o[n++];
    snprintf (x->name, sizeof x->name, "buffer \"%.140s\"", ps_buffer_name (g, b));
    x->dt = g->buffers[b].dtype < PS_DT__COUNT ? (ps_dtype) g->buffers[b].dtype : PS_DT_F32;
    x->bytes = (size_t) g->buffers[b].bytes;
    x->data = malloc (x->bytes ? x->bytes : 1);
    CUresult r;
    if (!x->data)
      rc = ps_gpu_error_set (err, PS_GPU_NO_MEMORY, 0, "out of memory");
    else if ((r = gpu->cu->cuMemcpyDtoH (x->data, run.buf[b], x->bytes)) != CUDA_SUCCESS)
      rc = ps__cu_fail (err, PS_GPU_CUDA_FAILED, r, "reading %s", x->name);
  }
  for (uint32_t s = 0; rc == 0 && s < p->n_steps; s++) {
    const ps__gpu_exec *e = &run.exec[s];
    if (e->what != PS__X_D2H)
      continue;
    uint32_t v = p->step_nodes[p->steps[s].nodes_begin];
    uint32_t src = g->access[g->nodes[v].reads_begin];
    output *x = &o[n++];
    snprintf (x->name, sizeof x->name, "download \"%.140s\"", ps_node_name (g, v));
    x->dt = g->buffers[src].dtype < PS_DT__COUNT ? (ps_dtype) g->buffers[src].dtype : PS_DT_F32;
    x->bytes = e->bytes;
    x->data = malloc (x->bytes ? x->bytes : 1);
    if (!x->data)
      rc = ps_gpu_error_set (err, PS_GPU_NO_MEMORY, 0, "out of memory");
    else
      memcpy (x->data, e->host, x->bytes);
  }
  ps__gpu_run_free (&run);
  free (written);
  if (rc != 0) {
    free_outputs (o, n);
    return rc;
  }
  *out = o;
  *n_out = n;
  return 0;
}

int
ps_gpu_read_buffer (ps_gpu *gpu, const ps_plan *p, ps_profile_mode mode, uint32_t buffer,
                    void *out, size_t bytes, ps_gpu_error *err)
{
  ps_gpu_error_clear (err);
  const ps_graph *g = p->graph;
  if (buffer >= g->n_buffers || bytes > g->buffers[buffer].bytes)
    return ps_gpu_error_set (err, PS_GPU_CUDA_FAILED, 0, "no buffer %u of %zu bytes", buffer,
                             bytes);
  ps__gpu_run run;
  int rc = ps__gpu_run_init (&run, gpu, p, err);
  if (rc == 0)
    rc = ps__gpu_run_fill (&run, err);
  if (rc == 0 && mode == PS_PROFILE_GRAPH)
    rc = ps__gpu_run_capture (&run, err);
  if (rc == 0)
    rc = ps__gpu_run_once (&run, mode, false, 0, NULL, err);
  CUresult r;
  if (rc == 0 && (r = gpu->cu->cuMemcpyDtoH (out, run.buf[buffer], bytes)) != CUDA_SUCCESS)
    rc = ps__cu_fail (err, PS_GPU_CUDA_FAILED, r, "reading buffer \"%s\"",
                      ps_buffer_name (g, buffer));
  ps__gpu_run_free (&run);
  return rc;
}

static double
half_to_double (uint16_t h)
{
  int e = (h >> 10) & 31, m = h & 1023;
  double v = e == 0 ? ldexp (m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp (m + 1024, e - 25);
  return (h & 0x8000) ? -v : v;
}

static double
element (const output *x, size_t i)
{
  const unsigned char *d = x->data;
  switch (x->dt) {
  case PS_DT_F16: {
    uint16_t h;
    memcpy (&h, d + 2 * i, 2);
    return half_to_double (h);
  }
  case PS_DT_BF16: {
    uint16_t h;
    memcpy (&h, d + 2 * i, 2);
    uint32_t u = (uint32_t) h << 16;
    float f;
    memcpy (&f, &u, 4);
    return f;
  }
  case PS_DT_I32: {
    int32_t v;
    memcpy (&v, d + 4 * i, 4);
    return v;
  }
  case PS_DT_U8:
    return d[i];
  case PS_DT_F32:
  default: {
    float f;
    memcpy (&f, d + 4 * i, 4);
    return f;
  }
  }
}

/* Fused kernels round every intermediate to its dtype and NVRTC runs with
 * --fmad=false, so results normally agree to the bit; the tolerance is a
 * few units in the last place of the dtype. */
static bool
close_enough (ps_dtype dt, double a, double b)
{
  if (isnan (a) || isnan (b))
    return isnan (a) && isnan (b);
  if (isinf (a) || isinf (b))
    return a == b;
  double tol;
  switch (dt) {
  case PS_DT_F16:
    tol = 4e-3;
    break;
  case PS_DT_BF16:
    tol = 3e-2;
    break;
  case PS_DT_I32:
  case PS_DT_U8:
    tol = 0;
    break;
  default:
    tol = 1e-5;
    break;
  }
  return fabs (a - b) <= tol * (1 + fabs (b));
}

int
ps_gpu_check (ps_gpu *gpu, const ps_plan *a, const ps_plan *b, ps_profile_mode mode,
              ps_check_result *res, ps_gpu_error *err)
{
  memset (res, 0, sizeof *res);
  ps_gpu_error_clear (err);
  output *oa = NULL, *ob = NULL;
  uint32_t na = 0, nb = 0;
  int rc = run_outputs (gpu, a, mode, &oa, &na, err);
  if (rc == 0)
    rc = run_outputs (gpu, b, mode, &ob, &nb, err);
  if (rc == 0 && na != nb)
    rc = ps_gpu_error_set (err, PS_GPU_CUDA_FAILED, 0,
                           "the two plans have different outputs (%u and %u)", na, nb);
  if (rc == 0) {
    res->equal = true;
    for (uint32_t i = 0; i < na; i++) {
      const output *x = &oa[i], *y = &ob[i];
      uint32_t size = ps_dtype_size (x->dt);
      size_t n = (x->bytes < y->bytes ? x->bytes : y->bytes) / (size ? size : 1);
      res->outputs++;
      for (size_t e = 0; e < n; e++) {
        double u = element (x, e), v = element (y, e);
        res->elements++;
        double d = fabs (u - v);
        if (isfinite (d) && d > res->max_abs_diff)
          res->max_abs_diff = d;
        if (close_enough (x->dt, u, v))
          continue;
        if (res->mismatches++ == 0)
          snprintf (res->first_mismatch, sizeof res->first_mismatch, "%s[%zu]: %.9g vs %.9g",
                    x->name, e, u, v);
        res->equal = false;
      }
    }
  }
  free_outputs (oa, na);
  free_outputs (ob, nb);
  return rc;
}
