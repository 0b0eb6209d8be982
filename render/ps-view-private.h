/* ps-view-private.h: what the DAG and plan views share (ps-view.c):
 * boxes that stand for one or more nodes or steps, their styles, edges
 * merged between boxes, and the legend. */
#ifndef PS_VIEW_PRIVATE_H
#define PS_VIEW_PRIVATE_H

#include "ps-draw.h"
#include "ps-scene.h"
#include "ps-view.h"

/* A box of the view: the members it stands for and what they add up to. */
typedef struct ps__view_box {
  uint32_t first, last; /* first and last member, in order */
  uint32_t count;
  uint32_t n_crit, crit_first, crit_last; /* members on the critical path */
  uint32_t n_unknown, n_not_run, n_timed;  /* members by what is known of their duration */
  uint32_t n_estimated;                    /* of the timed, those estimated */
  int32_t stream;       /* -1: none; -2: several */
  int32_t stream_min, stream_max;
  uint32_t kinds[PS_OP__COUNT];
  double ns;            /* known durations added up */
} ps__view_box;

void ps__view_box_init (ps__view_box *b);
/* Adds a member: its op, stream, figure source (ps_figure_source) and
 * duration (counted when the source is measured or predicted). */
void ps__view_box_add (ps__view_box *b, uint32_t member, ps_op op, int32_t stream, uint8_t source,
                       double ns, bool critical);
/* "380 kernels, 32 copies" into buf. */
void ps__view_box_kinds (const ps__view_box *b, char *buf, size_t cap);
/* The op of all members, or PS_OP__COUNT when they differ. */
ps_op ps__view_box_kind (const ps__view_box *b);
/* "17.4 µs", "unknown", "not run", "12.1 µs + 3 unknown" or "" into buf:
 * what is known of the members' time. */
const char *ps__view_box_time (const ps__view_box *b, char *buf, size_t cap);
/* " · stream 2", " · streams 0–3" or "" into buf. */
const char *ps__view_box_streams (const ps__view_box *b, char *buf, size_t cap);

/* The shape a single node of op gets. */
ps_shape ps__view_op_shape (ps_op op);

/* Fills a scene node's colours, outline and flags: fill is the box's
 * colour under the style (the caller's: kind, stream, group, duration). */
void ps__view_style_node (ps_scene_node *n, const ps__view_box *b, const ps_style *st,
                          uint32_t fill);

/* An edge between boxes, before merging. */
typedef struct ps__view_edge {
  uint32_t from, to;
  uint8_t kind;  /* ps_scene_edge_kind */
  uint8_t flags; /* PS_SCENE_CRITICAL */
} ps__view_edge;

/* Sorts, merges edges between the same boxes (counts; flags or-ed; a
 * cross-stream or event kind wins over a plain one) and adds them to the
 * scene in (from, to) order, styled.  Edges from a box to itself are
 * dropped. */
int ps__view_add_edges (ps_scene *s, ps__view_edge *e, size_t n, const ps_style *st);
/* Colours and pens of an edge of kind and flags (count: edges it merges). */
void ps__view_style_edge (ps_scene_edge *se, uint8_t kind, uint8_t flags, const ps_style *st);

/* Streams used (bit i: stream i, up to 64), ops present (bit per op; bit
 * PS_OP__COUNT: several nodes in a box) and edge kinds present (bit per
 * kind; bit 7: critical). */
int ps__view_legend (ps_scene *s, const ps_style *st, uint64_t streams, uint32_t ops,
                     uint32_t edge_kinds, double max_ns, bool unknown, bool not_run);

#endif
