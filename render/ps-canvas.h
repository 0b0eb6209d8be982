/* ps-canvas.h: the few drawing operations planscope's diagrams need, on
 * two back ends: cairo (PNG files, and the app's widgets) and SVG text
 * written directly, so that labels stay <text> that people can search and
 * tools can read (cairo's SVG surface turns text into glyph outlines).
 *
 * Text is measured once, with Pango (ps-text.h), for both back ends;
 * labels that do not fit their width are cut with an ellipsis by
 * ps_text_fit, so both back ends show the same characters. */
#ifndef PS_CANVAS_H
#define PS_CANVAS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cairo.h>

#include "ps-text.h"

/* A point of a drawing, in points. */
typedef struct ps_pt {
  double x, y;
} ps_pt;

typedef enum ps_align { PS_ALIGN_LEFT = 0, PS_ALIGN_CENTER, PS_ALIGN_RIGHT } ps_align;

/* How a shape is painted.  Colours are 0xRRGGBB; alpha in [0, 1]. */
typedef struct ps_paint {
  bool fill, stroke;
  uint32_t fill_rgb, stroke_rgb;
  double fill_alpha, stroke_alpha;
  double width;
  uint8_t dash; /* 0 solid, 1 dashed, 2 dotted */
} ps_paint;

ps_paint ps_paint_fill (uint32_t rgb);
ps_paint ps_paint_stroke (uint32_t rgb, double width);
ps_paint ps_paint_both (uint32_t fill, uint32_t stroke, double width);

typedef struct ps_canvas ps_canvas;

/* An SVG document of w x h points written to out; ps_canvas_finish ends it. */
ps_canvas *ps_canvas_new_svg (FILE *out, double w, double h);
/* Draws with cr (the caller owns it and its transformation). */
ps_canvas *ps_canvas_new_cairo (cairo_t *cr);
/* Ends the document; returns 0 or PS_EIO (a write failed) and frees. */
int ps_canvas_finish (ps_canvas *c);

/* A path: with `curve`, pts holds a cubic Bezier spline (1 + 3k points). */
void ps_canvas_path (ps_canvas *c, const ps_pt *pts, uint32_t n, bool closed, bool curve,
                     const ps_paint *p);
void ps_canvas_rect (ps_canvas *c, double x, double y, double w, double h, double radius,
                     const ps_paint *p);
void ps_canvas_ellipse (ps_canvas *c, double cx, double cy, double rx, double ry,
                        const ps_paint *p);
void ps_canvas_line (ps_canvas *c, double x0, double y0, double x1, double y1,
                     const ps_paint *p);
/* Diagonal lines across a rectangle (stalls), clipped to it. */
void ps_canvas_hatch (ps_canvas *c, double x, double y, double w, double h, double spacing,
                      uint32_t rgb, double width);
/* One line of text with its baseline at y; cut to max_width (<= 0: no
 * limit). */
void ps_canvas_text (ps_canvas *c, double x, double y, const char *text, const ps_font *f,
                     ps_align align, uint32_t rgb, double max_width);
/* Clips what follows to a rectangle, until the matching pop. */
void ps_canvas_clip_push (ps_canvas *c, double x, double y, double w, double h);
void ps_canvas_clip_pop (ps_canvas *c);
/* Whether groups keep their titles (SVG tooltips): drawings may skip
 * making them otherwise. */
bool ps_canvas_has_titles (const ps_canvas *c);
/* Groups what follows (SVG: <g> with an id class and a <title> tooltip). */
void ps_canvas_begin_group (ps_canvas *c, const char *cls, const char *title);
void ps_canvas_end_group (ps_canvas *c);

#endif
