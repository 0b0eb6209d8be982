/* ps-timeline-draw.h: the timeline picture: one lane per stream against a
 * time axis with units, spans coloured by kind and labelled where they
 * fit, stalls hatched, event record -> wait arrows, the critical path
 * outlined, and a legend.  Also the timeline as DOT with pinned positions
 * (`neato -n2` draws it as laid out; `dot` accepts it too).
 *
 * Spans narrower than a point are merged per lane into one bar, so that
 * the picture stays small and fast for traces of any length. */
#ifndef PS_TIMELINE_DRAW_H
#define PS_TIMELINE_DRAW_H

#include <stdio.h>

#include "ps-canvas.h"
#include "ps-diagnose.h"
#include "ps-timeline.h"

typedef struct ps_timeline_picture_options {
  const char *title; /* NULL: "<graph> — timeline" */
  double width;      /* plot width in points; 0: 1100 */
} ps_timeline_picture_options;

int ps_timeline_write_svg (const ps_timeline *tl, const ps_diagnosis *dg,
                           const ps_timeline_picture_options *o, FILE *out);
int ps_timeline_write_png (const ps_timeline *tl, const ps_diagnosis *dg,
                           const ps_timeline_picture_options *o, FILE *out);
int ps_timeline_write_dot (const ps_timeline *tl, const ps_diagnosis *dg, FILE *out);

/* A tick step of 1, 2 or 5 times a power of ten for about `target` ticks
 * over [0, t_max]. */
double ps_nice_step (double t_max, int target);
/* Draws a time axis of `width` points for [0, t_max] at x0, labels above
 * y, with grid lines from y to grid_bottom. */
void ps_draw_time_axis (ps_canvas *c, double x0, double y, double width, double t_max,
                        double grid_bottom);

uint32_t ps_color_span_kind (ps_span_kind k);

#endif
