/* ps-timeline-draw.h: the timeline chart: one lane per stream against a
 * time axis, spans coloured by the style and labelled where they fit,
 * every wait hatched (at an event, for the SMs or a copy engine, for the
 * host) with its cause, event record -> wait arrows, the critical path
 * outlined, a measured run over the prediction and a baseline as a ghost
 * under it.
 *
 * The app's timeline and the exports draw the same chart: the app through
 * a viewport (ps_timeline_view) on a cairo canvas, the exports with the
 * whole run in view.  A chart indexes each lane once (spans and waits by
 * start, with the running maximum of their ends), so that a frame costs
 * what is visible: runs of spans narrower than a point are merged into
 * one bar per point, found by binary search, and a million spans draw in
 * a few milliseconds.  The timeline as DOT has pinned positions
 * (`neato -n2` draws it as laid out). */
#ifndef PS_TIMELINE_DRAW_H
#define PS_TIMELINE_DRAW_H

#include <stdio.h>

#include "ps-canvas.h"
#include "ps-diagnose.h"
#include "ps-figures.h"
#include "ps-style.h"
#include "ps-timeline.h"

#define PS_TL_AXIS_H 24.0
#define PS_TL_LANE_H 30.0
#define PS_TL_LANE_GAP 4.0

/* What a chart shows; the timelines must stay alive while it does. */
typedef struct ps_timeline_layers {
  const ps_timeline *tl;       /* the lanes: the predicted (or the only) timeline */
  const ps_diagnosis *dg;      /* tl's diagnosis: waits and stream figures (may be NULL) */
  const ps_timeline *measured; /* a run of the same plan drawn over tl (may be NULL) */
  const ps_timeline *ghost;    /* a baseline drawn under tl (may be NULL) */
  const ps_figures *fig;       /* the figures shown: of measured when given, else of tl */
  const ps_plan *plan;         /* the plan (fused groups for colouring), or NULL */
} ps_timeline_layers;

typedef struct ps_timeline_chart ps_timeline_chart;

int ps_timeline_chart_new (ps_timeline_chart **out, const ps_timeline_layers *layers);
void ps_timeline_chart_free (ps_timeline_chart *ch);
const ps_timeline_layers *ps_timeline_chart_layers (const ps_timeline_chart *ch);
/* The width the lane names and their figures need, and the height of the
 * axis and every lane. */
double ps_timeline_chart_gutter (const ps_timeline_chart *ch);
double ps_timeline_chart_height (const ps_timeline_chart *ch);
/* The time the chart covers: the longest of its timelines. */
double ps_timeline_chart_length (const ps_timeline_chart *ch);

/* Where and how to draw. */
typedef struct ps_timeline_view {
  double x, y, width, height; /* the chart's area on the canvas */
  double gutter;              /* width of the lane names (ps_timeline_chart_gutter) */
  double t0, ns_per_pt;       /* the time at the plot's left edge, and the scale */
  double y_offset;            /* lanes scrolled up by this many points */
  const ps_style *style;
  const uint8_t *node_marks;  /* per graph node: PS_MARK_* (ps-draw.h), or NULL */
} ps_timeline_view;

/* A view of the whole run in a plot of plot_w points. */
void ps_timeline_view_fit (ps_timeline_view *v, const ps_timeline_chart *ch, double plot_w);

void ps_timeline_chart_draw (const ps_timeline_chart *ch, const ps_timeline_view *v,
                             ps_canvas *c);

/* What is under a point of the canvas. */
typedef enum ps_tl_layer { PS_TL_LAYER_TL = 0, PS_TL_LAYER_MEASURED, PS_TL_LAYER_GHOST } ps_tl_layer;
typedef struct ps_timeline_hit {
  bool span;      /* a span (else a wait, when index != PS_NONE) */
  uint8_t layer;  /* ps_tl_layer of the span */
  uint32_t index; /* span of that layer's timeline, or wait of dg; PS_NONE: nothing */
} ps_timeline_hit;

ps_timeline_hit ps_timeline_chart_hit (const ps_timeline_chart *ch, const ps_timeline_view *v,
                                       double x, double y);
/* The tooltip of a hit: a span's label, source, times and whether it is
 * critical; a wait's cause (ps_diagnose_wait_text).  Returns buf. */
const char *ps_timeline_chart_hit_text (const ps_timeline_chart *ch, ps_timeline_hit h,
                                        char *buf, size_t cap);

/* Pictures of a whole timeline (the export). */
typedef struct ps_timeline_picture_options {
  const char *title; /* NULL: "<graph> — timeline" */
  double width;      /* plot width in points; 0: 1100 */
  ps_theme theme;
  ps_color_by color; /* default: kind */
} ps_timeline_picture_options;

void ps_timeline_picture_options_init (ps_timeline_picture_options *o);
int ps_timeline_write_svg (const ps_timeline_layers *l, const ps_timeline_picture_options *o,
                           FILE *out);
int ps_timeline_write_png (const ps_timeline_layers *l, const ps_timeline_picture_options *o,
                           FILE *out);
int ps_timeline_write_dot (const ps_timeline_layers *l, FILE *out);

/* A tick step of 1, 2 or 5 times a power of ten for about `target` ticks
 * over a range of `span`. */
double ps_nice_step (double span, int target);
/* Draws a time axis over `width` points at x0 for [t0, t1], labels above
 * y in one unit, with grid lines from y to grid_bottom. */
void ps_draw_time_axis (ps_canvas *c, const ps_palette *pal, double x0, double y, double width,
                        double t0, double t1, double grid_bottom);

#endif
