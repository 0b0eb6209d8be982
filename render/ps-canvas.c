/* ps-canvas.c: the cairo and SVG back ends of ps-canvas.h.  Text is laid
 * out with the fonts and context settings of ps-text.c, so that what is
 * drawn has the width that was measured. */
#include "ps-canvas.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <pango/pangocairo.h>

#include "ps-status.h"
#include "ps-text-private.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

#define SANS "DejaVu Sans, Verdana, sans-serif"
#define MONO "DejaVu Sans Mono, monospace"

ps_paint
ps_paint_fill (uint32_t rgb)
{
  return (ps_paint){ true, false, rgb, 0, 1.0, 1.0, 1.0, 0 };
}

ps_paint
ps_paint_stroke (uint32_t rgb, double width)
{
  return (ps_paint){ false, true, 0, rgb, 1.0, 1.0, width, 0 };
}

ps_paint
ps_paint_both (uint32_t fill, uint32_t stroke, double width)
{
  return (ps_paint){ true, true, fill, stroke, 1.0, 1.0, width, 0 };
}

/* ---- the canvas ---------------------------------------------------------- */

struct ps_canvas {
  FILE *svg;        /* SVG back end */
  cairo_t *cr;      /* cairo back end */
  PangoContext *pctx;
  PangoLayout *layout;
  int depth;        /* open groups */
  int clips;        /* clip paths made (SVG ids) */
};

/* Numbers without the locale's decimal separator: at most two decimals. */
static void
num (FILE *out, double v)
{
  if (!isfinite (v))
    v = 0;
  /* Coordinates are far smaller; the clamp keeps llround defined. */
  v = fmax (-1e15, fmin (1e15, v));
  long long c = llround (v * 100.0);
  if (c < 0) {
    fputc ('-', out);
    c = -c;
  }
  fprintf (out, "%lld", c / 100);
  if (c % 100)
    fprintf (out, c % 10 ? ".%02lld" : ".%lld", c % 10 ? c % 100 : c % 100 / 10);
}

/* Text for XML: & < > " escaped, invalid UTF-8 replaced by U+FFFD, control
 * characters dropped, so that the document always parses. */
static void
xml_text (FILE *out, const char *s)
{
  const unsigned char *p = (const unsigned char *) s;
  while (*p) {
    unsigned c = *p;
    if (c < 0x80) {
      if (c == '&')
        fputs ("&amp;", out);
      else if (c == '<')
        fputs ("&lt;", out);
      else if (c == '>')
        fputs ("&gt;", out);
      else if (c == '"')
        fputs ("&quot;", out);
      else if (c >= 0x20 || c == '\t' || c == '\n')
        fputc ((int) c, out);
      p++;
      continue;
    }
    int n = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c <= 0xdf ? 2 : 0;
    int ok = n > 0;
    for (int i = 1; i < n && ok; i++)
      ok = (p[i] & 0xc0) == 0x80;
    if (ok && n == 3) {
      unsigned cp = ((c & 0x0f) << 12) | ((p[1] & 0x3fu) << 6) | (p[2] & 0x3fu);
      ok = cp >= 0x800 && (cp < 0xd800 || cp > 0xdfff) && cp != 0xfffe && cp != 0xffff;
    } else if (ok && n == 4) {
      unsigned cp = ((c & 0x07) << 18) | ((p[1] & 0x3fu) << 12) | ((p[2] & 0x3fu) << 6)
                    | (p[3] & 0x3fu);
      ok = cp >= 0x10000 && cp <= 0x10ffff;
    }
    if (ok) {
      fwrite (p, 1, (size_t) n, out);
      p += n;
    } else {
      fputs ("\xef\xbf\xbd", out);
      p++;
    }
  }
}

static void
svg_color (FILE *out, const char *attr, uint32_t rgb)
{
  fprintf (out, " %s=\"#%06x\"", attr, rgb & 0xffffffu);
}

static void
svg_paint (FILE *out, const ps_paint *p)
{
  if (p->fill) {
    svg_color (out, "fill", p->fill_rgb);
    if (p->fill_alpha < 1.0) {
      fputs (" fill-opacity=\"", out);
      num (out, p->fill_alpha);
      fputc ('"', out);
    }
  } else {
    fputs (" fill=\"none\"", out);
  }
  if (p->stroke) {
    svg_color (out, "stroke", p->stroke_rgb);
    fputs (" stroke-width=\"", out);
    num (out, p->width);
    fputc ('"', out);
    if (p->stroke_alpha < 1.0) {
      fputs (" stroke-opacity=\"", out);
      num (out, p->stroke_alpha);
      fputc ('"', out);
    }
    if (p->dash == 1)
      fputs (" stroke-dasharray=\"5,3\"", out);
    else if (p->dash == 2)
      fputs (" stroke-dasharray=\"1.5,2.5\"", out);
  }
}

static void
cr_rgb (cairo_t *cr, uint32_t rgb, double a)
{
  cairo_set_source_rgba (cr, ((rgb >> 16) & 0xff) / 255.0, ((rgb >> 8) & 0xff) / 255.0,
                         (rgb & 0xff) / 255.0, a);
}

static void
cr_paint (cairo_t *cr, const ps_paint *p)
{
  if (p->fill) {
    cr_rgb (cr, p->fill_rgb, p->fill_alpha);
    if (p->stroke)
      cairo_fill_preserve (cr);
    else
      cairo_fill (cr);
  }
  if (p->stroke) {
    cr_rgb (cr, p->stroke_rgb, p->stroke_alpha);
    cairo_set_line_width (cr, p->width);
    static const double dashed[] = { 5, 3 }, dotted[] = { 1.5, 2.5 };
    if (p->dash == 1)
      cairo_set_dash (cr, dashed, 2, 0);
    else if (p->dash == 2)
      cairo_set_dash (cr, dotted, 2, 0);
    cairo_stroke (cr);
    cairo_set_dash (cr, NULL, 0, 0);
  }
  cairo_new_path (cr);
}

ps_canvas *
ps_canvas_new_svg (FILE *out, double w, double h)
{
  ps_canvas *c = calloc (1, sizeof *c);
  if (!c)
    return NULL;
  c->svg = out;
  fputs ("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
         "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"",
         out);
  num (out, w);
  fputs ("pt\" height=\"", out);
  num (out, h);
  fputs ("pt\" viewBox=\"0 0 ", out);
  num (out, w);
  fputc (' ', out);
  num (out, h);
  fputs ("\" font-family=\"" SANS "\">\n", out);
  return c;
}

ps_canvas *
ps_canvas_new_cairo (cairo_t *cr)
{
  ps_canvas *c = calloc (1, sizeof *c);
  if (!c)
    return NULL;
  c->cr = cr;
  c->pctx = pango_cairo_create_context (cr);
  ps_text_setup_context (c->pctx);
  c->layout = pango_layout_new (c->pctx);
  cairo_set_line_join (cr, CAIRO_LINE_JOIN_ROUND);
  return c;
}

int
ps_canvas_finish (ps_canvas *c)
{
  int ret = 0;
  if (!c)
    return PS_ENOMEM;
  if (c->svg) {
    while (c->depth-- > 0)
      fputs ("</g>\n", c->svg);
    fputs ("</svg>\n", c->svg);
    if (ferror (c->svg))
      ret = PS_EIO;
  } else {
    g_object_unref (c->layout);
    g_object_unref (c->pctx);
    if (cairo_status (c->cr) != CAIRO_STATUS_SUCCESS)
      ret = cairo_status (c->cr) == CAIRO_STATUS_NO_MEMORY ? PS_ENOMEM : PS_EIO;
  }
  free (c);
  return ret;
}

void
ps_canvas_path (ps_canvas *c, const ps_pt *pts, uint32_t n, bool closed, bool curve,
                const ps_paint *p)
{
  if (n < 2)
    return;
  if (c->svg) {
    FILE *o = c->svg;
    fputs ("<path d=\"M", o);
    num (o, pts[0].x);
    fputc (' ', o);
    num (o, pts[0].y);
    if (curve) {
      for (uint32_t i = 1; i + 2 < n; i += 3) {
        fputs (" C", o);
        for (int k = 0; k < 3; k++) {
          fputc (k ? ' ' : ' ', o);
          num (o, pts[i + k].x);
          fputc (' ', o);
          num (o, pts[i + k].y);
        }
      }
    } else {
      for (uint32_t i = 1; i < n; i++) {
        fputs (" L", o);
        num (o, pts[i].x);
        fputc (' ', o);
        num (o, pts[i].y);
      }
    }
    fputs (closed ? "Z\"" : "\"", o);
    svg_paint (o, p);
    fputs ("/>\n", o);
    return;
  }
  cairo_t *cr = c->cr;
  cairo_move_to (cr, pts[0].x, pts[0].y);
  if (curve) {
    for (uint32_t i = 1; i + 2 < n; i += 3)
      cairo_curve_to (cr, pts[i].x, pts[i].y, pts[i + 1].x, pts[i + 1].y, pts[i + 2].x,
                      pts[i + 2].y);
  } else {
    for (uint32_t i = 1; i < n; i++)
      cairo_line_to (cr, pts[i].x, pts[i].y);
  }
  if (closed)
    cairo_close_path (cr);
  cr_paint (cr, p);
}

void
ps_canvas_rect (ps_canvas *c, double x, double y, double w, double h, double radius,
                const ps_paint *p)
{
  if (radius * 2 > w)
    radius = w / 2;
  if (radius * 2 > h)
    radius = h / 2;
  if (c->svg) {
    FILE *o = c->svg;
    fputs ("<rect x=\"", o);
    num (o, x);
    fputs ("\" y=\"", o);
    num (o, y);
    fputs ("\" width=\"", o);
    num (o, w);
    fputs ("\" height=\"", o);
    num (o, h);
    fputc ('"', o);
    if (radius > 0) {
      fputs (" rx=\"", o);
      num (o, radius);
      fputc ('"', o);
    }
    svg_paint (o, p);
    fputs ("/>\n", o);
    return;
  }
  cairo_t *cr = c->cr;
  if (radius > 0) {
    cairo_new_sub_path (cr);
    cairo_arc (cr, x + w - radius, y + radius, radius, -M_PI / 2, 0);
    cairo_arc (cr, x + w - radius, y + h - radius, radius, 0, M_PI / 2);
    cairo_arc (cr, x + radius, y + h - radius, radius, M_PI / 2, M_PI);
    cairo_arc (cr, x + radius, y + radius, radius, M_PI, 3 * M_PI / 2);
    cairo_close_path (cr);
    cr_paint (cr, p);
  } else {
    /* Square corners: mitred joins, which cairo strokes without arcs. */
    cairo_rectangle (cr, x, y, w, h);
    cairo_set_line_join (cr, CAIRO_LINE_JOIN_MITER);
    cr_paint (cr, p);
    cairo_set_line_join (cr, CAIRO_LINE_JOIN_ROUND);
  }
}

void
ps_canvas_ellipse (ps_canvas *c, double cx, double cy, double rx, double ry, const ps_paint *p)
{
  if (rx <= 0 || ry <= 0)
    return;
  if (c->svg) {
    FILE *o = c->svg;
    fputs ("<ellipse cx=\"", o);
    num (o, cx);
    fputs ("\" cy=\"", o);
    num (o, cy);
    fputs ("\" rx=\"", o);
    num (o, rx);
    fputs ("\" ry=\"", o);
    num (o, ry);
    fputc ('"', o);
    svg_paint (o, p);
    fputs ("/>\n", o);
    return;
  }
  cairo_t *cr = c->cr;
  cairo_save (cr);
  cairo_translate (cr, cx, cy);
  cairo_scale (cr, rx, ry);
  cairo_new_sub_path (cr);
  cairo_arc (cr, 0, 0, 1, 0, 2 * M_PI);
  cairo_restore (cr);
  cr_paint (cr, p);
}

void
ps_canvas_line (ps_canvas *c, double x0, double y0, double x1, double y1, const ps_paint *p)
{
  ps_pt pts[2] = { { x0, y0 }, { x1, y1 } };
  ps_canvas_path (c, pts, 2, false, false, p);
}

void
ps_canvas_hatch (ps_canvas *c, double x, double y, double w, double h, double spacing,
                 uint32_t rgb, double width)
{
  if (w <= 0 || h <= 0 || spacing <= 0)
    return;
  /* Lines x + y = k (down-left diagonals), clipped to the rectangle. */
  ps_paint p = ps_paint_stroke (rgb, width);
  if (c->svg) {
    FILE *o = c->svg;
    fputs ("<path d=\"", o);
    for (double k = spacing; k < w + h; k += spacing) {
      double ax = x + (k < w ? k : w), ay = y + (k < w ? 0 : k - w);
      double bx = x + (k < h ? 0 : k - h), by = y + (k < h ? k : h);
      fputc ('M', o);
      num (o, ax);
      fputc (' ', o);
      num (o, ay);
      fputc ('L', o);
      num (o, bx);
      fputc (' ', o);
      num (o, by);
    }
    fputc ('"', o);
    svg_paint (o, &p);
    fputs ("/>\n", o);
    return;
  }
  cairo_t *cr = c->cr;
  for (double k = spacing; k < w + h; k += spacing) {
    cairo_move_to (cr, x + (k < w ? k : w), y + (k < w ? 0 : k - w));
    cairo_line_to (cr, x + (k < h ? 0 : k - h), y + (k < h ? k : h));
  }
  cr_paint (cr, &p);
}

void
ps_canvas_text (ps_canvas *c, double x, double y, const char *text, const ps_font *f,
                ps_align align, uint32_t rgb, double max_width)
{
  if (!text || !*text)
    return;
  char buf[1024];
  const char *t = ps_text_fit (text, f, max_width, buf, sizeof buf);
  if (!*t)
    return;
  if (c->svg) {
    FILE *o = c->svg;
    fputs ("<text x=\"", o);
    num (o, x);
    fputs ("\" y=\"", o);
    num (o, y);
    fputs ("\" font-size=\"", o);
    num (o, f->size);
    fputc ('"', o);
    if (f->bold)
      fputs (" font-weight=\"bold\"", o);
    if (f->mono)
      fputs (" font-family=\"" MONO "\"", o);
    if (align == PS_ALIGN_CENTER)
      fputs (" text-anchor=\"middle\"", o);
    else if (align == PS_ALIGN_RIGHT)
      fputs (" text-anchor=\"end\"", o);
    if (rgb != 0)
      svg_color (o, "fill", rgb);
    fputc ('>', o);
    xml_text (o, t);
    fputs ("</text>\n", o);
    return;
  }
  PangoFontDescription *d = ps_text_font_description (f);
  pango_layout_set_font_description (c->layout, d);
  pango_font_description_free (d);
  pango_layout_set_text (c->layout, t, -1);
  PangoRectangle logical;
  pango_layout_get_extents (c->layout, NULL, &logical);
  double w = (double) logical.width / PANGO_SCALE;
  double base = (double) pango_layout_get_baseline (c->layout) / PANGO_SCALE;
  double left = align == PS_ALIGN_CENTER ? x - w / 2 : align == PS_ALIGN_RIGHT ? x - w : x;
  cr_rgb (c->cr, rgb, 1.0);
  cairo_move_to (c->cr, left, y - base);
  pango_cairo_show_layout (c->cr, c->layout);
  cairo_new_path (c->cr);
}

void
ps_canvas_clip_push (ps_canvas *c, double x, double y, double w, double h)
{
  if (!c->svg) {
    cairo_save (c->cr);
    cairo_rectangle (c->cr, x, y, w, h);
    cairo_clip (c->cr);
    return;
  }
  FILE *o = c->svg;
  int id = c->clips++;
  fprintf (o, "<clipPath id=\"clip%d\"><rect x=\"", id);
  num (o, x);
  fputs ("\" y=\"", o);
  num (o, y);
  fputs ("\" width=\"", o);
  num (o, w > 0 ? w : 0);
  fputs ("\" height=\"", o);
  num (o, h > 0 ? h : 0);
  fprintf (o, "\"/></clipPath>\n<g clip-path=\"url(#clip%d)\">\n", id);
  c->depth++;
}

void
ps_canvas_clip_pop (ps_canvas *c)
{
  if (!c->svg) {
    cairo_restore (c->cr);
    return;
  }
  ps_canvas_end_group (c);
}

bool
ps_canvas_has_titles (const ps_canvas *c)
{
  return c->svg != NULL;
}

void
ps_canvas_begin_group (ps_canvas *c, const char *cls, const char *title)
{
  if (!c->svg)
    return;
  c->depth++;
  fputs ("<g", c->svg);
  if (cls) {
    fputs (" class=\"", c->svg);
    xml_text (c->svg, cls);
    fputc ('"', c->svg);
  }
  fputs (">\n", c->svg);
  if (title) {
    fputs ("<title>", c->svg);
    xml_text (c->svg, title);
    fputs ("</title>\n", c->svg);
  }
}

void
ps_canvas_end_group (ps_canvas *c)
{
  if (!c->svg || c->depth == 0)
    return;
  c->depth--;
  fputs ("</g>\n", c->svg);
}
