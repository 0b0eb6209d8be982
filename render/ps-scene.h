/* ps-scene.h: a diagram as plain data: boxes, edges, clusters and a
 * legend, with their styles and, once laid out (ps-layout.h), their
 * positions.
 *
 * The DAG and plan views (ps-dag-view.h) build scenes; ps-layout.h places
 * them with Graphviz; ps-draw.h draws them with cairo or as SVG; the app
 * draws and hit-tests them natively from the same numbers.  Coordinates
 * are points (1/72 inch), origin at the top left, y down.  Strings live in
 * the scene's pool, referred to by offset (PS_NONE: none); edge splines
 * and node outlines live in one array of points. */
#ifndef PS_SCENE_H
#define PS_SCENE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ps-canvas.h"
#include "ps-error.h"
#include "ps-graph.h"

typedef enum ps_shape {
  PS_SHAPE_BOX = 0,
  PS_SHAPE_ROUNDED,       /* kernels */
  PS_SHAPE_PARALLELOGRAM, /* copies */
  PS_SHAPE_HEXAGON,       /* memsets */
  PS_SHAPE_HOUSE,         /* host callbacks */
  PS_SHAPE_ELLIPSE,       /* event records */
  PS_SHAPE_DIAMOND,       /* event waits, conditionals */
  PS_SHAPE_OCTAGON,       /* opaque imported nodes */
  PS_SHAPE_BAR,           /* barriers */
  PS_SHAPE_CIRCLE,        /* empty nodes */
  PS_SHAPE_STACK,         /* several nodes shown as one box */
  PS_SHAPE__COUNT
} ps_shape;

enum {
  PS_SCENE_DASHED = 1u << 0,   /* dashed outline or line */
  PS_SCENE_CRITICAL = 1u << 1, /* on the critical path */
  PS_SCENE_DOTTED = 1u << 2,
  PS_SCENE_BOLD = 1u << 3,     /* label in bold */
  PS_SCENE_NO_CONSTRAINT = 1u << 4, /* an edge that does not rank its ends */
  PS_SCENE_DETACHED = 1u << 5, /* an edge left out of the Graphviz layout (it spans too
                                  many ranks) and drawn straight between its boxes */
};

typedef struct ps_scene_node {
  uint32_t label;   /* first line */
  uint32_t detail;  /* second line, or PS_NONE */
  uint32_t detail2; /* third line, or PS_NONE */
  uint32_t tooltip; /* longer description (SVG <title>), or PS_NONE */
  uint32_t ref;     /* what it stands for: graph node, plan step or group; PS_NONE */
  uint32_t count;   /* graph nodes it stands for */
  uint32_t cluster; /* PS_NONE or a cluster index */
  int32_t stream;   /* -1 when not one stream */
  uint32_t rank_group; /* nodes with the same value share a rank; PS_NONE */
  uint32_t fill, stroke, text; /* 0xRRGGBB */
  float pen;        /* outline width */
  uint8_t shape;    /* ps_shape */
  uint8_t flags;    /* PS_SCENE_* */
  uint8_t kind;     /* ps_op of what it stands for (PS_OP__COUNT: mixed) */
  /* Layout: centre and size; outline polygon (polygonal shapes). */
  double x, y, w, h;
  uint32_t poly_begin, poly_count;
} ps_scene_node;

typedef struct ps_scene_edge {
  uint32_t from, to; /* node indexes */
  uint32_t label;    /* PS_NONE or a short label */
  uint32_t color;
  float pen;
  uint8_t flags;     /* PS_SCENE_* */
  uint8_t kind;      /* ps_scene_edge_kind */
  uint32_t count;    /* graph edges it stands for */
  /* Layout: a cubic Bezier spline (1 + 3k points) and the arrow tip. */
  uint32_t pts_begin, pts_count;
  bool has_tip;
  ps_pt tip;
  ps_pt label_pos;
} ps_scene_edge;

typedef enum ps_scene_edge_kind {
  PS_EDGE_VIEW_DEP = 0,   /* a dependency on the same stream */
  PS_EDGE_VIEW_CROSS,     /* a dependency across streams (needs an event) */
  PS_EDGE_VIEW_ORDER,     /* stream order in the plan view */
  PS_EDGE_VIEW_EVENT,     /* event record -> wait */
  PS_EDGE_VIEW__COUNT
} ps_scene_edge_kind;

typedef struct ps_scene_cluster {
  uint32_t label;
  uint32_t parent; /* PS_NONE: top level */
  uint32_t fill, stroke;
  uint8_t flags;
  double x0, y0, x1, y1; /* layout */
  ps_pt label_pos;       /* layout: top left of the label */
} ps_scene_cluster;

typedef enum ps_legend_kind {
  PS_LEGEND_SWATCH = 0,
  PS_LEGEND_LINE,
  PS_LEGEND_SHAPE
} ps_legend_kind;

typedef struct ps_legend_item {
  uint32_t label;
  uint32_t fill, stroke;
  float pen;
  uint8_t kind;  /* ps_legend_kind */
  uint8_t shape; /* PS_LEGEND_SHAPE */
  uint8_t flags; /* PS_LEGEND_LINE: dashed, ... */
} ps_legend_item;

typedef struct ps_scene {
  uint32_t title, subtitle; /* string offsets or PS_NONE */
  bool left_to_right;       /* rankdir LR instead of TB */
  bool fast;                /* large diagram: cheaper layout settings */
  bool pinned;              /* nodes are placed already (overviews): ps_layout_scene only
                               draws straight edges between them, without Graphviz */

  uint32_t n_nodes, cap_nodes;
  ps_scene_node *nodes;
  uint32_t n_edges, cap_edges;
  ps_scene_edge *edges;
  uint32_t n_clusters, cap_clusters;
  ps_scene_cluster *clusters;
  uint32_t n_legend, cap_legend;
  ps_legend_item *legend;
  uint32_t n_pts, cap_pts;
  ps_pt *pts;
  char *strings;
  uint32_t strings_len, strings_cap;

  bool laid_out;
  double width, height; /* the laid-out diagram, without title and legend */
  double layout_seconds;

  /* What the boxes show (DAG views): per graph node its box (PS_NONE:
   * none), and per box its graph nodes in node order,
   * box_nodes[box_off[b] .. box_off[b + 1]). */
  uint32_t n_graph_nodes;
  uint32_t *node_box, *box_off, *box_nodes;

  /* What an annotation (ps_dag_view_annotate) replaces: strings from
   * strings_mark on, clusters from clusters_mark on, edges from edges_mark
   * on (links of the critical path that are no edge of the graph), points
   * from pts_mark on (set by the layout), and the legend. */
  uint32_t strings_mark, clusters_mark, edges_mark, pts_mark;
  uint8_t theme; /* ps_theme of the colours, for the decorations */
  /* DAG views: how the boxes were chosen (see ps-dag-view.c), the levels
   * per overview band, and whether a plan's fused groups are clusters. */
  uint8_t dag_mode;
  uint32_t dag_band;
  bool dag_planned;
} ps_scene;

void ps_scene_init (ps_scene *s);
void ps_scene_free (ps_scene *s);

/* Copies a string into the pool as valid UTF-8 on one line (see
 * ps_utf8_sanitize; text that is not plain ASCII is cut at 4 KiB). */
int ps_scene_str (ps_scene *s, const char *text, uint32_t *off);
int ps_scene_strf (ps_scene *s, uint32_t *off, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__ ((format (printf, 3, 4)))
#endif
    ;
static inline const char *
ps_scene_text (const ps_scene *s, uint32_t off)
{
  return off == PS_NONE ? NULL : s->strings + off;
}

/* Appends an element with defaults (black on white, pen 1, no cluster);
 * *index receives its index. */
int ps_scene_add_node (ps_scene *s, uint32_t *index);
int ps_scene_add_edge (ps_scene *s, uint32_t from, uint32_t to, uint32_t *index);
int ps_scene_add_cluster (ps_scene *s, uint32_t *index);
int ps_scene_add_legend (ps_scene *s, ps_legend_kind kind, const char *label, uint32_t fill,
                         uint32_t stroke, uint8_t shape_or_flags);
int ps_scene_add_points (ps_scene *s, const ps_pt *pts, uint32_t n, uint32_t *begin);

/* The graph nodes box b shows; *n gets their count. */
const uint32_t *ps_scene_box_members (const ps_scene *s, uint32_t b, uint32_t *n);

/* The box under (x, y) of a laid-out scene (its coordinates), within slop
 * points of its bounds; PS_NONE when none. */
uint32_t ps_scene_box_at (const ps_scene *s, double x, double y, double slop);

/* Sizes every node to fit its text lines (ps-draw.h measures text). */
void ps_scene_size_nodes (ps_scene *s);

/* A DOT quoted string: quotes and backslashes escaped, line breaks as
 * \n, other control characters dropped. */
void ps_dot_write_string (FILE *out, const char *s);

/* Writes the scene as Graphviz DOT text that `dot` lays out like
 * ps_layout_scene does (shapes, colours, clusters, labels). */
int ps_scene_write_dot (const ps_scene *s, FILE *out);

/* Writes the laid-out scene as JSON ("format": "planscope-layout"):
 * nodes with their boxes, edges with their splines, clusters. */
int ps_scene_write_json (const ps_scene *s, const char *view, const char *graph_name,
                         FILE *out);

/* Names used in files. */
const char *ps_shape_dot_name (ps_shape shape);
const char *ps_scene_edge_kind_name (ps_scene_edge_kind k);

#endif
