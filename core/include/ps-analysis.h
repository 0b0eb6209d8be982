/* ps-analysis.h: linear-time analyses of a graph: topological order,
 * levels, earliest/latest start (ASAP/ALAP), slack and the critical path. */
#ifndef PS_ANALYSIS_H
#define PS_ANALYSIS_H

#include "ps-graph.h"

typedef struct ps_analysis {
  uint32_t n;
  uint32_t *topo;   /* node ids in a topological order */
  uint32_t *level;  /* edges on the longest path from a source */
  double *cost;     /* duration used per node, ns */
  double *asap;     /* earliest start, ns */
  double *alap;     /* latest start that keeps the critical path length, ns */
  double *slack;    /* alap - asap */
  double length_ns; /* critical path length */
  uint32_t *critical; /* node ids on one critical path, source to sink */
  uint32_t n_critical;
  uint32_t n_levels;
} ps_analysis;

/* A crude default duration of a node when the graph gives no cost_ns: a
 * simple bandwidth/throughput model with no device.  The planner and the
 * simulator use the device model of ps-cost.h instead (ps_cost_nodes gives
 * a `cost` array for ps_analysis_run); this one serves callers that have
 * no device at hand.
 *   kernel:  max(flops / 50 TFLOP/s, traffic / 3 TB/s) + 2 us launch, where
 *            traffic is traffic_bytes or else the bytes of every read and
 *            written buffer;
 *   memcpy:  bytes / (50 GB/s h2d and d2h, 1.5 TB/s d2d, 400 GB/s p2p) + 2 us;
 *   memset:  bytes / 3 TB/s + 2 us;
 *   host:    5 us;  opaque: 2 us;
 *   event record/wait, barrier, conditional, empty: 0.5 us. */
double ps_node_cost_default (const ps_graph *g, uint32_t v);

/* Runs every analysis.  `cost` gives the duration of each node in ns; NULL
 * uses cost_ns where given and ps_node_cost_default elsewhere.  Durations
 * are clamped to [0, 1e15] ns (NaN counts as 0).  Returns PS_ECYCLE when the
 * edges have a cycle, PS_EINVAL when the CSR arrays are inconsistent,
 * PS_ENOMEM; on failure *a is left empty.  The critical path starts at the
 * source with the smallest latest start and, at every node, continues with
 * the successor of smallest latest start, ties to the lowest node id. */
int ps_analysis_run (ps_analysis *a, const ps_graph *g, const double *cost);
void ps_analysis_free (ps_analysis *a);

#endif
