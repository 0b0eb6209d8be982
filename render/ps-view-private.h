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
  int32_t stream;       /* -1: none; -2: several */
  uint32_t kinds[PS_OP__COUNT];
  double ns;
} ps__view_box;

void ps__view_box_init (ps__view_box *b);
void ps__view_box_add (ps__view_box *b, uint32_t member, ps_op op, int32_t stream, double ns,
                       bool critical);
/* "380 kernels, 32 copies" into buf. */
void ps__view_box_kinds (const ps__view_box *b, char *buf, size_t cap);


/* Fills a scene node's colours, outline and flags. */
void ps__view_style_node (ps_scene_node *n, const ps__view_box *b, ps_color_by color,
                          double max_ns);

/* An edge between boxes, before merging. */
typedef struct ps__view_edge {
  uint32_t from, to;
  uint8_t kind;  /* ps_scene_edge_kind */
  uint8_t flags; /* PS_SCENE_CRITICAL */
} ps__view_edge;

/* Sorts, merges edges between the same boxes (counts; flags or-ed; a
 * cross-stream or event kind wins over a plain one) and adds them to the
 * scene, styled.  Edges from a box to itself are dropped. */
int ps__view_add_edges (ps_scene *s, ps__view_edge *e, size_t n);

/* Streams used (bit i: stream i, up to 64), ops present (bit per op) and
 * edge kinds present (bit per kind; bit 7: critical). */
int ps__view_legend (ps_scene *s, ps_color_by color, uint64_t streams, uint32_t ops,
                     uint32_t edge_kinds, double max_ns);


#endif
