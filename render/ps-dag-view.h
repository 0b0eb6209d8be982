/* ps-dag-view.h: the DAG view as a scene (ps-scene.h); the plan view is
 * in ps-plan-view.h, what both share in ps-view.h.
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
#include "ps-view.h"

/* Builds the DAG view of g; p (may be NULL) gives streams and fused
 * groups to lay out together.  The scene is sized but not laid out, and
 * annotated with o's figures. */
int ps_dag_view_build (ps_scene *s, const ps_graph *g, const ps_plan *p,
                       const ps_view_options *o);

/* Writes what follows the plan and its timeline into a DAG scene built
 * for g (or a graph with the same nodes): each box's time ("17.4 µs",
 * "unknown", "not run (assume: then)") and stream, its colour under o's
 * style, the critical path of o->figures on boxes and edges, dependencies
 * across p's streams, frames around p's fused groups (a laid-out scene
 * built without a plan), the title, note and legend.  p and o->figures may
 * be NULL.  Repeatable: each call replaces the last one's text. */
int ps_dag_view_annotate (ps_scene *s, const ps_graph *g, const ps_plan *p,
                          const ps_view_options *o);

#endif
