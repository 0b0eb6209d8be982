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

/* Draws a laid-out scene, decorations included. */
void ps_draw_scene (const ps_scene *s, const ps_frame *f, ps_canvas *c);

/* A picture drawn by a callback, written as SVG or PNG. */
typedef void (*ps_draw_fn) (ps_canvas *c, void *ctx);
int ps_picture_write_svg (double w, double h, ps_draw_fn draw, void *ctx, FILE *out);
int ps_picture_write_png (double w, double h, ps_draw_fn draw, void *ctx, FILE *out);
/* The pixels per point a PNG of w x h points gets. */
double ps_picture_png_scale (double w, double h);

int ps_scene_write_svg (const ps_scene *s, FILE *out);
int ps_scene_write_png (const ps_scene *s, FILE *out);

/* Colours shared by the views. */
uint32_t ps_color_stream (int32_t stream);
uint32_t ps_color_kind (ps_op op);
/* A sequential scale from light (t = 0) to dark red (t = 1). */
uint32_t ps_color_heat (double t);
/* A darker shade for outlines. */
uint32_t ps_color_darker (uint32_t rgb);
/* Black or white, whichever reads better on rgb. */
uint32_t ps_color_text_on (uint32_t rgb);

#define PS_COLOR_CRITICAL 0xd62728u
#define PS_COLOR_CROSS 0xe6850eu
#define PS_COLOR_EVENT 0x9c27b0u

#endif
