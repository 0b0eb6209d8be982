/* ps-view.h: what the DAG and plan views (ps-dag-view.h, ps-plan-view.h)
 * take: the style, the figures whose durations, streams and critical path
 * they show, when a large graph collapses, and readable kernel names. */
#ifndef PS_VIEW_H
#define PS_VIEW_H

#include <stddef.h>
#include <stdint.h>

#include "ps-figures.h"
#include "ps-style.h"

typedef struct ps_view_options {
  ps_color_by color;     /* default: kind */
  ps_theme theme;        /* default: light */
  bool hide_critical;    /* do not mark the critical path */
  uint32_t detail_boxes; /* more units than this: collapse chains (default 1000) */
  uint32_t max_boxes;    /* more boxes than this after collapsing: overview (default 800) */
  uint32_t fast_boxes;   /* more boxes than this: cheaper layout (default 600) */
  uint32_t max_edges;    /* more edges than this: collapse further (default 1600) */
  /* Durations, streams and the critical path to show (ps-figures.h); NULL:
   * none (the boxes still say what they stand for). */
  const ps_figures *figures;
} ps_view_options;

void ps_view_options_init (ps_view_options *o);
/* The style the options describe. */
void ps_view_options_style (const ps_view_options *o, ps_style *out);

#endif
