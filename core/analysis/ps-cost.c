/* ps-cost.c: the cost model (see ps-cost.h). */
#include "ps-cost.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void
ps_cost_occupancy (const ps_device *d, uint64_t blocks, uint64_t threads, double *sm_fraction,
                   double *efficiency)
{
  double sms = d->sm_count ? d->sm_count : 1;
  if (blocks == 0)
    blocks = 1;
  uint64_t per_sm = threads ? d->max_threads_per_sm / threads : d->max_blocks_per_sm;
  if (per_sm > d->max_blocks_per_sm)
    per_sm = d->max_blocks_per_sm;
  if (per_sm == 0)
    per_sm = 1;
  double capacity = sms * (double) per_sm;
  double b = (double) blocks;
  double frac = b >= sms ? 1.0 : b / sms;
  double eff;
  if (b <= capacity) {
    eff = frac;
  } else {
    double waves = ceil (b / capacity);
    eff = b / (waves * capacity);
  }
  *sm_fraction = frac;
  *efficiency = eff > 0 ? eff : 1.0 / sms;
}

double
ps_cost_mem_gbs (const ps_device *d)
{
  double e = d->mem_efficiency;
  return d->mem_bandwidth_gbs * (e > 0 && e <= 1 ? e : 1);
}

double
ps_cost_gemm_efficiency (const ps_device *d, double flops)
{
  uint32_t n = d->gemm_points < PS_DEVICE_GEMM_POINTS ? d->gemm_points : PS_DEVICE_GEMM_POINTS;
  if (n == 0)
    return 1;
  if (n == 1 || !(flops > d->gemm_flops[0]))
    return d->gemm_efficiency[0];
  if (flops >= d->gemm_flops[n - 1])
    return d->gemm_efficiency[n - 1];
  uint32_t i = 0;
  while (flops >= d->gemm_flops[i + 1])
    i++;
  /* GEMM sizes span orders of magnitude, so points are joined on a log
   * scale of the flops. */
  double t = log (flops / d->gemm_flops[i]) / log (d->gemm_flops[i + 1] / d->gemm_flops[i]);
  return d->gemm_efficiency[i] + t * (d->gemm_efficiency[i + 1] - d->gemm_efficiency[i]);
}

static double
buffer_bytes (const ps_graph *g, uint32_t b)
{
  return b < g->n_buffers ? (double) g->buffers[b].bytes : 0;
}

static bool
writes_half (const ps_graph *g, const ps_node *n)
{
  for (uint32_t i = 0; i < n->writes_count; i++) {
    uint32_t b = g->access[n->writes_begin + i];
    if (b < g->n_buffers
        && (g->buffers[b].dtype == PS_DT_F16 || g->buffers[b].dtype == PS_DT_BF16))
      return true;
  }
  return false;
}

/* The parts of a kernel's roofline: compute and memory time at full
 * occupancy, and the launch's occupancy. */
static void
kernel_parts (const ps_device *d, const ps_graph *g, const ps_node *n, double *compute_ns,
              double *mem_ns, double *flops_out, double *bytes_out, double *frac, double *eff)
{
  const ps_kernel *k = n->aux < g->n_kernels ? &g->kernels[n->aux] : NULL;
  double traffic = k ? k->traffic_bytes : -1;
  double flops = k ? k->flops : -1;
  if (!(traffic >= 0)) {
    traffic = 0;
    for (uint32_t i = 0; i < n->reads_count; i++)
      traffic += buffer_bytes (g, g->access[n->reads_begin + i]);
    for (uint32_t i = 0; i < n->writes_count; i++)
      traffic += buffer_bytes (g, g->access[n->writes_begin + i]);
  }
  if (!(flops >= 0)) {
    /* Element-wise work: about one operation per output element. */
    flops = 0;
    for (uint32_t i = 0; i < n->writes_count; i++) {
      uint32_t b = g->access[n->writes_begin + i];
      if (b < g->n_buffers)
        flops += (double) g->buffers[b].bytes / ps_dtype_size ((ps_dtype) g->buffers[b].dtype);
    }
  }
  if (n->impl == PS_IMPL_SPIN)
    traffic = flops = 0;
  bool tensor = writes_half (g, n) && !ps_impl_elementwise ((ps_impl) n->impl)
                && n->impl != PS_IMPL_SPIN;
  /* Flop per ns: tensor-core work at the share of the peak a GEMM of its
   * size reaches. */
  double rate = tensor ? d->tensor_tflops * 1e3 * ps_cost_gemm_efficiency (d, flops)
                       : d->fp32_tflops * 1e3;
  *compute_ns = flops / rate;
  *mem_ns = traffic / ps_cost_mem_gbs (d); /* GB/s is bytes per ns */
  *flops_out = flops;
  *bytes_out = traffic;
  uint64_t blocks = 1, threads = 1;
  if (k) {
    blocks = (uint64_t) k->grid[0] * k->grid[1];
    blocks = blocks > UINT64_MAX / k->grid[2] ? UINT64_MAX : blocks * k->grid[2];
    threads = (uint64_t) k->block[0] * k->block[1];
    threads = threads > UINT64_MAX / k->block[2] ? UINT64_MAX : threads * k->block[2];
  }
  ps_cost_occupancy (d, blocks, threads, frac, eff);
}

/* The cost of node v; for a kernel also its roofline's compute time and
 * its launch's efficiency (kernel_parts), which fused groups need. */
static void
node_cost (const ps_device *d, const ps_graph *g, uint32_t v, ps_cost *out, double *compute_ns,
           double *efficiency)
{
  memset (out, 0, sizeof *out);
  *compute_ns = 0;
  *efficiency = 1;
  if (v >= g->n_nodes)
    return;
  const ps_node *n = &g->nodes[v];
  bool given = n->flags & PS_NODE_HAS_COST;
  double given_ns = given && n->cost_ns >= 0 && isfinite (n->cost_ns) ? n->cost_ns : 0;

  switch ((ps_op) n->op) {
  case PS_OP_KERNEL: {
    double c, m, frac, eff;
    kernel_parts (d, g, n, &c, &m, &out->flops, &out->bytes, &frac, &eff);
    out->resource = PS_RES_SM;
    out->sm_fraction = frac;
    out->ns = given ? given_ns : fmax (c, m) / eff;
    const ps_kernel *k = n->aux < g->n_kernels ? &g->kernels[n->aux] : NULL;
    out->unknown = !given && n->impl != PS_IMPL_SPIN && !(k && k->flops >= 0)
                   && !(k && k->traffic_bytes >= 0) && n->reads_count == 0
                   && n->writes_count == 0;
    if (out->unknown && k && !k->launch_unknown) {
      /* Known only by its launch (a CUDA-graph dump's kernel, say): taken
       * as element-wise work, one operation and 8 bytes (a 4-byte read
       * and write) per thread, and marked estimated wherever it shows. */
      double threads = (double) ps_kernel_threads (k);
      c = threads / (d->fp32_tflops * 1e3);
      m = 8 * threads / ps_cost_mem_gbs (d);
      out->flops = threads;
      out->bytes = 8 * threads;
      out->ns = fmax (c, m) / eff;
      out->unknown = 0;
      out->estimated = 1;
    }
    *compute_ns = c;
    *efficiency = eff;
    break;
  }
  case PS_OP_MEMCPY: {
    double bytes = (double) n->bytes, bw;
    switch ((ps_copy_dir) n->dir) {
    case PS_COPY_H2D:
      bw = d->h2d_gbs;
      /* With one copy engine both directions queue on the same engine. */
      out->resource = d->copy_engines > 1 ? PS_RES_H2D : PS_RES_D2H;
      break;
    case PS_COPY_D2H:
      bw = d->d2h_gbs;
      out->resource = PS_RES_D2H;
      break;
    case PS_COPY_P2P:
      bw = d->p2p_gbs;
      out->resource = PS_RES_P2P;
      break;
    case PS_COPY_D2D:
    default:
      /* Read and write of device memory, done by the SMs. */
      bw = ps_cost_mem_gbs (d) / 2;
      out->resource = PS_RES_SM;
      out->sm_fraction = 1;
      break;
    }
    out->bytes = bytes;
    out->ns = given ? given_ns : bytes / bw + d->copy_latency_ns;
    break;
  }
  case PS_OP_MEMSET:
    out->resource = PS_RES_SM;
    out->sm_fraction = 1;
    out->bytes = (double) n->bytes;
    out->ns = given ? given_ns : out->bytes / ps_cost_mem_gbs (d) + d->copy_latency_ns;
    break;
  case PS_OP_HOST:
    out->resource = PS_RES_HOST;
    out->ns = given ? given_ns : d->host_callback_ns;
    break;
  case PS_OP_OPAQUE:
    out->resource = PS_RES_SM;
    out->sm_fraction = 1;
    out->ns = given_ns;
    out->unknown = !given;
    break;
  case PS_OP_EVENT_RECORD:
  case PS_OP_EVENT_WAIT:
  case PS_OP_BARRIER:
  case PS_OP_CONDITIONAL:
  case PS_OP_EMPTY:
  default:
    out->resource = PS_RES_NONE;
    out->ns = given_ns;
    break;
  }
  if (!(out->ns >= 0) || !isfinite (out->ns))
    out->ns = 0;
  /* As in ps_analysis_run: a duration of 1e300 is a valid number, but the
   * sum of two is not, and the simulator adds them up. */
  if (out->ns > PS_COST_MAX_NS)
    out->ns = PS_COST_MAX_NS;
  if (n->cond != PS_NONE && ps_node_not_run (g, v, NULL)) {
    out->ns = 0;
    out->skipped = 1;
    out->unknown = 0;
  }
}

void
ps_cost_node (const ps_device *d, const ps_graph *g, uint32_t v, ps_cost *out)
{
  double c, e;
  node_cost (d, g, v, out, &c, &e);
}

void
ps_cost_node_part (const ps_device *d, const ps_graph *g, uint32_t v, ps_cost_part *out)
{
  node_cost (d, g, v, &out->c, &out->compute_ns, &out->efficiency);
}

double
ps_cost_share (const ps_cost *c)
{
  double want = c->resource == PS_RES_SM ? c->sm_fraction : 1;
  if (!(want > 1e-6))
    want = 1e-6;
  if (want > 1)
    want = 1;
  return want;
}

void
ps_cost_share_time (const ps_cost *c, double busy[PS_RES__COUNT])
{
  if (c->resource == PS_RES_NONE || c->resource >= PS_RES__COUNT || !(c->ns > 0))
    return;
  busy[c->resource] += c->ns * ps_cost_share (c);
}

double
ps_cost_busiest (const double busy[PS_RES__COUNT])
{
  double most = 0;
  for (int r = 0; r < PS_RES__COUNT; r++)
    if (busy[r] > most)
      most = busy[r];
  return most;
}

double
ps_cost_unfused_bound (const ps_device *d, const ps_graph *g)
{
  if (g->measured)
    return 0;
  double busy[PS_RES__COUNT] = { 0 };
  for (uint32_t v = 0; v < g->n_nodes; v++) {
    ps_cost c;
    ps_cost_node (d, g, v, &c);
    ps_cost_share_time (&c, busy);
  }
  return ps_cost_busiest (busy);
}

void
ps_cost_nodes (const ps_device *d, const ps_graph *g, double *ns)
{
  for (uint32_t v = 0; v < g->n_nodes; v++) {
    ps_cost c;
    ps_cost_node (d, g, v, &c);
    ns[v] = c.ns;
  }
}

/* The cost of a fused group: the nodes of one step. */
static void
group_cost (const ps_device *d, const ps_graph *g, const uint32_t *nodes, uint32_t count,
            const uint32_t *readers, uint32_t *local, uint8_t *written, double *busy,
            const ps_cost_part *parts, ps_cost *out)
{
  double sum = 0, compute = 0, flops = 0, bytes = 0, saved = 0, frac = 0, eff = 1;
  bool any_eff = false, unknown = false, estimated = false, all_skipped = count > 0;
  for (uint32_t i = 0; i < count; i++) {
    uint32_t v = nodes[i];
    if (v >= g->n_nodes)
      continue;
    const ps_node *n = &g->nodes[v];
    ps_cost c;
    double cc, e;
    if (parts) {
      c = parts[v].c;
      cc = parts[v].compute_ns;
      e = parts[v].efficiency;
    } else {
      node_cost (d, g, v, &c, &cc, &e);
    }
    ps_cost_share_time (&c, busy);
    if (c.skipped)
      continue;
    all_skipped = false;
    unknown |= c.unknown;
    estimated |= c.estimated;
    sum += c.ns;
    flops += c.flops;
    bytes += c.bytes;
    if (n->op == PS_OP_KERNEL) {
      compute += (n->flags & PS_NODE_HAS_COST) ? 0 : cc / e;
      if (c.sm_fraction > frac)
        frac = c.sm_fraction;
      if (!any_eff || e > eff)
        eff = e;
      any_eff = true;
    } else if (c.sm_fraction > frac) {
      frac = c.sm_fraction;
    }
    for (uint32_t j = 0; j < n->reads_count; j++) {
      uint32_t b = g->access[n->reads_begin + j];
      if (b >= g->n_buffers)
        continue;
      if (written[b])
        saved += (double) g->buffers[b].bytes;
      local[b]++;
    }
    for (uint32_t j = 0; j < n->writes_count; j++) {
      uint32_t b = g->access[n->writes_begin + j];
      if (b < g->n_buffers)
        written[b] = 1;
    }
  }
  /* A written intermediate that no node outside the group reads, and that
   * the caller does not own, is never stored. */
  for (uint32_t i = 0; i < count; i++) {
    uint32_t v = nodes[i];
    if (v >= g->n_nodes)
      continue;
    const ps_node *n = &g->nodes[v];
    for (uint32_t j = 0; j < n->writes_count; j++) {
      uint32_t b = g->access[n->writes_begin + j];
      if (b >= g->n_buffers || !written[b])
        continue;
      if (!(g->buffers[b].flags & PS_BUF_EXTERNAL) && local[b] > 0 && local[b] == readers[b])
        saved += (double) g->buffers[b].bytes;
      written[b] = 0; /* counted once */
    }
  }
  for (uint32_t i = 0; i < count; i++) {
    uint32_t v = nodes[i];
    if (v >= g->n_nodes)
      continue;
    const ps_node *n = &g->nodes[v];
    for (uint32_t j = 0; j < n->reads_count; j++) {
      uint32_t b = g->access[n->reads_begin + j];
      if (b < g->n_buffers)
        local[b] = 0;
    }
    for (uint32_t j = 0; j < n->writes_count; j++) {
      uint32_t b = g->access[n->writes_begin + j];
      if (b < g->n_buffers)
        written[b] = 0;
    }
  }
  if (saved > bytes)
    saved = bytes;
  double ns = sum - saved / ps_cost_mem_gbs (d) / eff;
  out->ns = fmax (fmax (ns, compute), 0);
  out->flops = flops;
  out->bytes = bytes - saved;
  out->sm_fraction = frac > 0 ? frac : 1;
  out->resource = PS_RES_SM;
  out->skipped = all_skipped;
  out->unknown = unknown;
  out->estimated = estimated && !unknown;
}

/* A scratch's own per-buffer marks, the rest of it cleared. */
static int
scratch_begin (ps_cost_scratch *s, const ps_graph *g)
{
  memset (s, 0, sizeof *s);
  s->local = calloc ((size_t) g->n_buffers + 1, sizeof *s->local);
  s->written = calloc ((size_t) g->n_buffers + 1, 1);
  return s->local && s->written ? 0 : PS_ENOMEM;
}

int
ps_cost_scratch_init (ps_cost_scratch *s, const ps_graph *g)
{
  uint32_t nb = g->n_buffers;
  int rc = scratch_begin (s, g);
  if (rc == 0 && !(s->readers = calloc ((size_t) nb + 1, sizeof *s->readers)))
    rc = PS_ENOMEM;
  if (rc < 0) {
    ps_cost_scratch_free (s);
    return rc;
  }
  for (uint32_t v = 0; v < g->n_nodes; v++) {
    const ps_node *n = &g->nodes[v];
    for (uint32_t j = 0; j < n->reads_count; j++) {
      uint32_t b = g->access[n->reads_begin + j];
      if (b < nb && s->readers[b] < UINT32_MAX)
        s->readers[b]++;
    }
  }
  return 0;
}

int
ps_cost_scratch_init_shared (ps_cost_scratch *s, const ps_graph *g, const ps_cost_scratch *from)
{
  int rc = scratch_begin (s, g);
  if (rc < 0) {
    ps_cost_scratch_free (s);
    return rc;
  }
  s->readers = from->readers;
  s->shared = true;
  return 0;
}

void
ps_cost_scratch_free (ps_cost_scratch *s)
{
  if (!s->shared)
    free (s->readers);
  free (s->local);
  free (s->written);
  memset (s, 0, sizeof *s);
}

void
ps_cost_group (const ps_device *d, const ps_graph *g, const uint32_t *nodes, uint32_t count,
               ps_cost_scratch *s, ps_cost *out)
{
  group_cost (d, g, nodes, count, s->readers, s->local, s->written, s->busy, s->parts, out);
}

int
ps_cost_plan (const ps_device *d, const ps_plan *p, ps_cost *out)
{
  const ps_graph *g = p->graph;
  ps_cost_scratch sc;
  if (ps_cost_scratch_init (&sc, g) < 0)
    return PS_ENOMEM;
  for (uint32_t s = 0; s < p->n_steps; s++) {
    const ps_step *st = &p->steps[s];
    const uint32_t *nodes = p->step_nodes + st->nodes_begin;
    if (st->synthetic || st->nodes_count == 0) {
      memset (&out[s], 0, sizeof out[s]);
      out[s].resource = PS_RES_NONE;
    } else if (st->nodes_count == 1) {
      ps_cost_node (d, g, nodes[0], &out[s]);
    } else {
      ps_cost_group (d, g, nodes, st->nodes_count, &sc, &out[s]);
    }
  }
  ps_cost_scratch_free (&sc);
  return 0;
}
