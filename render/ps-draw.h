/* ps-draw.h: drawing laid-out scenes (ps-scene.h) with a ps_canvas, and
 * writing pictures as SVG or PNG.
 *
 * A picture is a title, an optional note, a legend and the diagram, with
 * margins.  PNGs are drawn at 2 pixels per point when that fits, less for
 * large pictures (at most 16384 pixels a side and 48 million pixels). */
#ifndef PS_DRAW_H
#define PS_DRAW_H

#include <stdio.h>

#include "ps-canvas.h"
#include "ps-scene.h"
#include "ps-style.h"

/* Where the parts of a picture go. */
typedef struct ps_frame {
  double width, height;      /* the whole picture, points */
  double diagram_x, diagram_y; /* top left of the diagram */
  double legend_y;           /* top of the legend row(s) */
} ps_frame;

/* Frames a diagram of w x h points with s's title, note and legend. */
void ps_frame_compute (const ps_scene *s, double w, double h, ps_frame *f);
/* Draws the title, note and legend of s (the diagram is drawn by the caller). */
void ps_draw_decorations (const ps_scene *s, const ps_frame *f, ps_canvas *c);
/* Paints the whole picture in s's theme's background, then draws the
 * decorations. */
void ps_draw_frame (const ps_scene *s, const ps_frame *f, ps_canvas *c);

/* Draws a laid-out scene, background and decorations included. */
void ps_draw_scene (const ps_scene *s, const ps_frame *f, ps_canvas *c);

/* Marks the app lays over boxes (per box, or-ed). */
enum {
  PS_MARK_SELECTED = 1u << 0,
  PS_MARK_HOVER = 1u << 1,
  PS_MARK_MATCH = 1u << 2,   /* a search hit */
  PS_MARK_CHANGED = 1u << 3, /* changed since the baseline */
};

/* What part of a laid-out diagram to draw, and how. */
typedef struct ps_diagram_view {
  double ox, oy;         /* where the diagram's (0, 0) goes on the canvas */
  double x0, y0, x1, y1; /* the visible part in diagram points; x1 <= x0: all of it */
  double scale;          /* device pixels per point, for the level of detail; 0: full */
  const uint8_t *marks;  /* per box (PS_MARK_*), or NULL */
} ps_diagram_view;

/* Draws the clusters, edges and boxes of s that meet the visible part:
 * text only where boxes are large enough on screen to read it, edges
 * merged into one path per style when there are many. */
void ps_draw_diagram (const ps_scene *s, const ps_diagram_view *v, ps_canvas *c);

/* The height s's legend takes in rows at most width wide. */
double ps_legend_height (const ps_scene *s, double width);
/* Draws s's legend in rows at most width wide from (x, y); returns the
 * height it takes. */
double ps_draw_legend (const ps_scene *s, double x, double y, double width, ps_canvas *c);

/* A picture drawn by a callback, written as SVG or PNG. */
typedef void (*ps_draw_fn) (ps_canvas *c, void *ctx);
int ps_picture_write_svg (double w, double h, ps_draw_fn draw, void *ctx, FILE *out);
int ps_picture_write_png (double w, double h, ps_draw_fn draw, void *ctx, FILE *out);
/* The pixels per point a PNG of w x h points gets. */
double ps_picture_png_scale (double w, double h);

int ps_scene_write_svg (const ps_scene *s, FILE *out);
int ps_scene_write_png (const ps_scene *s, FILE *out);

#endif
