/* ps-analysis.c: topological order, levels, the default cost model,
 * earliest/latest start, slack and one critical path.  Every pass is a
 * single sweep over the CSR edges, O(V + E). */
#include "ps-analysis.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/ps-topo.h"

/* The default cost model.  It is deliberately crude: a roofline for
 * kernels and a bandwidth per copy direction, plus a fixed launch overhead.
 * The planner and the simulator use the device model (ps-cost.h); for
 * the critical path and slack only relative sizes matter. */
#define KERNEL_FLOPS_PER_NS 50e3     /* 50 TFLOP/s */
#define DEVICE_BYTES_PER_NS 3e3      /* 3 TB/s: kernel traffic, memset */
#define HOST_LINK_BYTES_PER_NS 50.0  /* 50 GB/s: h2d, d2h */
#define D2D_BYTES_PER_NS 1.5e3       /* 1.5 TB/s */
#define P2P_BYTES_PER_NS 400.0       /* 400 GB/s */
#define LAUNCH_NS 2000.0
#define HOST_CALLBACK_NS 5000.0
#define SYNC_NS 500.0                /* events, barriers, conditionals, empty nodes */

/* Durations are clamped to this (about 11.6 days) so that sums over a
 * million nodes stay finite and ALAP differences never become inf - inf. */
#define MAX_COST_NS 1e15

static double
access_bytes (const ps_graph *g, const ps_node *n)
{
  double sum = 0;
  uint64_t end = (uint64_t) n->reads_begin + n->reads_count;
  if (end <= g->n_access)
    for (uint32_t i = n->reads_begin; i < end; i++)
      if (g->access[i] < g->n_buffers)
        sum += (double) g->buffers[g->access[i]].bytes;
  end = (uint64_t) n->writes_begin + n->writes_count;
  if (end <= g->n_access)
    for (uint32_t i = n->writes_begin; i < end; i++)
      if (g->access[i] < g->n_buffers)
        sum += (double) g->buffers[g->access[i]].bytes;
  return sum;
}

/* Bytes a copy or memset moves: the node's own count, else the size of the
 * first buffer it touches. */
static double
moved_bytes (const ps_graph *g, const ps_node *n)
{
  if (n->bytes > 0)
    return (double) n->bytes;
  uint32_t b = PS_NONE;
  if (n->writes_count > 0 && n->writes_begin < g->n_access)
    b = g->access[n->writes_begin];
  else if (n->reads_count > 0 && n->reads_begin < g->n_access)
    b = g->access[n->reads_begin];
  return b < g->n_buffers ? (double) g->buffers[b].bytes : 0.0;
}

double
ps_node_cost_default (const ps_graph *g, uint32_t v)
{
  if (!g || v >= g->n_nodes)
    return 0;
  const ps_node *n = &g->nodes[v];
  switch ((ps_op) n->op) {
  case PS_OP_KERNEL: {
    double flops = 0, traffic = -1;
    if (n->aux < g->n_kernels) {
      flops = g->kernels[n->aux].flops;
      traffic = g->kernels[n->aux].traffic_bytes;
    }
    if (!(flops >= 0))
      flops = 0;
    if (!(traffic >= 0))
      traffic = access_bytes (g, n);
    return fmax (flops / KERNEL_FLOPS_PER_NS, traffic / DEVICE_BYTES_PER_NS) + LAUNCH_NS;
  }
  case PS_OP_MEMCPY: {
    double rate = D2D_BYTES_PER_NS;
    if (n->dir == PS_COPY_H2D || n->dir == PS_COPY_D2H)
      rate = HOST_LINK_BYTES_PER_NS;
    else if (n->dir == PS_COPY_P2P)
      rate = P2P_BYTES_PER_NS;
    return moved_bytes (g, n) / rate + LAUNCH_NS;
  }
  case PS_OP_MEMSET:
    return moved_bytes (g, n) / DEVICE_BYTES_PER_NS + LAUNCH_NS;
  case PS_OP_HOST:
    return HOST_CALLBACK_NS;
  case PS_OP_OPAQUE:
    return LAUNCH_NS;
  case PS_OP_EVENT_RECORD:
  case PS_OP_EVENT_WAIT:
  case PS_OP_BARRIER:
  case PS_OP_CONDITIONAL:
  case PS_OP_EMPTY:
  default:
    return SYNC_NS;
  }
}

void
ps_analysis_free (ps_analysis *a)
{
  if (!a)
    return;
  free (a->topo);
  free (a->level);
  free (a->cost);
  free (a->asap);
  free (a->alap);
  free (a->slack);
  free (a->critical);
  memset (a, 0, sizeof *a);
}

static double
clamp_cost (double c)
{
  if (!(c > 0)) /* also NaN */
    return 0;
  return c > MAX_COST_NS ? MAX_COST_NS : c;
}

/* Kahn's order (ps-topo.h); PS_ECYCLE if some node is never freed. */
static int
topo_sort (const ps_graph *g, uint32_t *topo, uint32_t *indeg)
{
  uint32_t n = g->n_nodes;
  return ps__topo_order (n, g->pred_off, g->succ_off, g->succ, topo, indeg) == n ? 0 : PS_ECYCLE;
}

/* Checks that the CSR arrays are consistent so that the passes below never
 * read out of bounds, whatever built the graph. */
static int
check_csr (const ps_graph *g)
{
  uint32_t n = g->n_nodes;
  if (n == 0)
    return 0;
  if (!g->succ_off || !g->pred_off || g->succ_off[0] != 0 || g->pred_off[0] != 0)
    return PS_EINVAL;
  for (uint32_t v = 0; v < n; v++)
    if (g->succ_off[v + 1] < g->succ_off[v] || g->pred_off[v + 1] < g->pred_off[v])
      return PS_EINVAL;
  if (g->succ_off[n] != g->n_edges || g->pred_off[n] != g->n_edges)
    return PS_EINVAL;
  for (uint32_t e = 0; e < g->n_edges; e++)
    if (g->succ[e] >= n || g->pred[e] >= n)
      return PS_EINVAL;
  return 0;
}

int
ps_analysis_run (ps_analysis *a, const ps_graph *g, const double *cost)
{
  memset (a, 0, sizeof *a);
  int rc = check_csr (g);
  if (rc < 0)
    return rc;
  uint32_t n = g->n_nodes;
  size_t cnt = n ? n : 1;
  a->n = n;
  a->topo = malloc (cnt * sizeof *a->topo);
  a->level = malloc (cnt * sizeof *a->level);
  a->cost = malloc (cnt * sizeof *a->cost);
  a->asap = malloc (cnt * sizeof *a->asap);
  a->alap = malloc (cnt * sizeof *a->alap);
  a->slack = malloc (cnt * sizeof *a->slack);
  a->critical = malloc (cnt * sizeof *a->critical);
  if (!a->topo || !a->level || !a->cost || !a->asap || !a->alap || !a->slack || !a->critical) {
    ps_analysis_free (a);
    return PS_ENOMEM;
  }

  /* The level array doubles as the in-degree scratch of Kahn's pass. */
  rc = topo_sort (g, a->topo, a->level);
  if (rc < 0) {
    ps_analysis_free (a);
    return rc;
  }

  for (uint32_t v = 0; v < n; v++) {
    double c;
    if (cost)
      c = cost[v];
    else if (g->nodes[v].flags & PS_NODE_HAS_COST)
      c = g->nodes[v].cost_ns;
    else
      c = ps_node_cost_default (g, v);
    a->cost[v] = clamp_cost (c);
  }

  /* Forward: levels and earliest starts. */
  double length = 0;
  uint32_t max_level = 0;
  for (uint32_t i = 0; i < n; i++) {
    uint32_t v = a->topo[i];
    uint32_t lv = 0;
    double start = 0;
    for (uint32_t e = g->pred_off[v]; e < g->pred_off[v + 1]; e++) {
      uint32_t u = g->pred[e];
      if (a->level[u] + 1 > lv)
        lv = a->level[u] + 1;
      double fin = a->asap[u] + a->cost[u];
      if (fin > start)
        start = fin;
    }
    a->level[v] = lv;
    a->asap[v] = start;
    if (lv > max_level)
      max_level = lv;
    if (start + a->cost[v] > length)
      length = start + a->cost[v];
  }
  a->length_ns = length;
  a->n_levels = n ? max_level + 1 : 0;

  /* Backward: latest starts and slack. */
  for (uint32_t i = n; i-- > 0;) {
    uint32_t v = a->topo[i];
    double latest_end = length;
    for (uint32_t e = g->succ_off[v]; e < g->succ_off[v + 1]; e++) {
      uint32_t w = g->succ[e];
      if (a->alap[w] < latest_end)
        latest_end = a->alap[w];
    }
    a->alap[v] = latest_end - a->cost[v];
    double s = a->alap[v] - a->asap[v];
    a->slack[v] = s > 0 ? s : 0;
  }

  /* One critical path.  It starts at the source with the smallest latest
   * start and follows, at each step, the successor with the smallest latest
   * start; with exact arithmetic every node on it has zero slack.  Floating
   * point ties (equal up to rounding) go to the lowest node id. */
  if (n > 0) {
    double eps = 1e-9 * (length > 1 ? length : 1);
    uint32_t best = PS_NONE;
    for (uint32_t v = 0; v < n; v++)
      if (g->pred_off[v + 1] == g->pred_off[v]
          && (best == PS_NONE || a->alap[v] < a->alap[best] - eps))
        best = v;
    uint32_t k = 0;
    while (best != PS_NONE && k < n) {
      a->critical[k++] = best;
      uint32_t v = best;
      best = PS_NONE;
      double min_alap = INFINITY;
      for (uint32_t e = g->succ_off[v]; e < g->succ_off[v + 1]; e++)
        if (a->alap[g->succ[e]] < min_alap)
          min_alap = a->alap[g->succ[e]];
      for (uint32_t e = g->succ_off[v]; e < g->succ_off[v + 1]; e++) {
        uint32_t w = g->succ[e];
        if (a->alap[w] <= min_alap + eps && (best == PS_NONE || w < best))
          best = w;
      }
    }
    a->n_critical = k;
  }
  return 0;
}
