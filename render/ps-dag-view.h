/* ps-dag-view.h: the DAG view and the plan view as scenes (ps-scene.h).
 *
 * DAG view: one box per graph node, shaped and coloured by kind (or
 * coloured by stream or duration), fused groups framed together, the
 * critical path in red, and dependencies across streams (which need an
 * event) dashed.  Plan view: the plan's steps clustered per stream in
 * issue order, with event record -> wait edges.
 *
 * Large graphs stay readable and fast.  DAG view: past `detail_boxes`
 * nodes, fused groups and straight chains (on one stream) become single
 * boxes; past `max_boxes` boxes or `max_edges` edges (what Graphviz lays
 * out in about a second), an overview with one box per stream and band of
 * levels, placed on a grid without Graphviz.  Plan view: at most 240
 * boxes, runs of steps between events merged, else one box per stream and
 * chunk of consecutive steps; past 200 boxes it is laid out in lanes by
 * issue order without Graphviz.  Every box says how many nodes or steps
 * it stands for, merged edges how many they stand for. */
#ifndef PS_DAG_VIEW_H
#define PS_DAG_VIEW_H

#include "ps-graph.h"
#include "ps-plan.h"
#include "ps-scene.h"

typedef enum ps_color_by {
  PS_COLOR_BY_KIND = 0,
  PS_COLOR_BY_STREAM,
  PS_COLOR_BY_DURATION,
} ps_color_by;

typedef struct ps_view_options {
  ps_color_by color;
  uint32_t detail_boxes; /* more units than this: collapse chains (default 1000) */
  uint32_t max_boxes;    /* more boxes than this after collapsing: overview (default 800) */
  uint32_t fast_boxes;   /* more boxes than this: cheaper layout (default 600) */
  uint32_t max_edges;    /* more edges than this: collapse further (default 1600) */
  const double *node_ns; /* duration per graph node; NULL: the default cost model */
  const double *step_ns; /* duration per plan step; NULL: sum of its nodes */
  double gap_ns;         /* added to each work node for the critical path: the time it
                            holds its stream beyond its own duration (dispatch gap) */
} ps_view_options;

void ps_view_options_init (ps_view_options *o);
int ps_color_by_parse (const char *name, ps_color_by *out);

/* Builds the DAG view of g; p (may be NULL) gives streams and fused
 * groups.  The scene is sized but not laid out. */
int ps_dag_view_build (ps_scene *s, const ps_graph *g, const ps_plan *p,
                       const ps_view_options *o);

/* Builds the plan view of p. */
int ps_plan_view_build (ps_scene *s, const ps_plan *p, const ps_view_options *o);

/* A readable name for a kernel symbol: the qualified name of an Itanium
 * mangled symbol ("_ZN3mlx4core2cu6copy_s..." -> "mlx::core::cu::copy_s"),
 * anything else unchanged. */
const char *ps_short_symbol (const char *sym, char *buf, size_t cap);

#endif
