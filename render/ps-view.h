/* ps-view.h: what the DAG and plan views (ps-dag-view.h, ps-plan-view.h)
 * take: how boxes are coloured, when a large graph collapses, the
 * durations to show, and readable kernel names. */
#ifndef PS_VIEW_H
#define PS_VIEW_H

#include <stddef.h>
#include <stdint.h>

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

/* A readable name for a kernel symbol: the qualified name of an Itanium
 * mangled symbol ("_ZN3mlx4core2cu6copy_s..." -> "mlx::core::cu::copy_s"),
 * anything else unchanged. */
const char *ps_short_symbol (const char *sym, char *buf, size_t cap);

#endif
