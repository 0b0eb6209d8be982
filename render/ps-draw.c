/* ps-draw.c: drawing scenes and writing pictures as SVG and PNG. */
#include "ps-draw.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#define MARGIN 16.0
#define TITLE_SIZE 14.0
#define NOTE_SIZE 9.0
#define LEGEND_SIZE 9.0
#define LEGEND_ROW 16.0

/* ---- frame and decorations ---------------------------------------------------- */

static const ps_font title_font = { TITLE_SIZE, true, false };
static const ps_font note_font = { NOTE_SIZE, false, false };
static const ps_font legend_font = { LEGEND_SIZE, false, false };

/* Lays the legend out in rows no wider than `width`; returns the rows. */
static int
legend_rows (const ps_scene *s, double width, double *x_out)
{
  int rows = s->n_legend ? 1 : 0;
  double x = 0;
  for (uint32_t i = 0; i < s->n_legend; i++) {
    double w = 26 + ps_text_width (s->strings + s->legend[i].label, &legend_font) + 14;
    if (x > 0 && x + w > width) {
      rows++;
      x = 0;
    }
    if (x_out)
      x_out[i] = x;
    x += w;
  }
  return rows;
}

void
ps_frame_compute (const ps_scene *s, double w, double h, ps_frame *f)
{
  double y = MARGIN;
  double min_w = 0;
  if (s->title != PS_NONE) {
    min_w = fmax (min_w, ps_text_width (s->strings + s->title, &title_font));
    y += TITLE_SIZE + 6;
  }
  if (s->subtitle != PS_NONE) {
    min_w = fmax (min_w, ps_text_width (s->strings + s->subtitle, &note_font));
    y += NOTE_SIZE + 6;
  }
  double width = fmax (fmax (w, min_w), s->n_legend ? 420.0 : 0.0);
  f->legend_y = y;
  int rows = legend_rows (s, width, NULL);
  if (rows)
    y += rows * LEGEND_ROW + 8;
  f->diagram_x = MARGIN;
  f->diagram_y = y;
  f->width = width + 2 * MARGIN;
  f->height = y + h + MARGIN;
}

static void
legend_swatch (ps_canvas *c, const ps_scene *s, const ps_legend_item *it, double x, double y)
{
  const ps_palette *pal = ps_palette_get ((ps_theme) s->theme);
  ps_paint p = ps_paint_both (it->fill, it->stroke, it->pen);
  switch ((ps_legend_kind) it->kind) {
  case PS_LEGEND_LINE:
    p = ps_paint_stroke (it->stroke, it->flags & PS_SCENE_CRITICAL ? 2.5 : 1.4);
    p.dash = it->flags & PS_SCENE_DASHED ? 1 : it->flags & PS_SCENE_DOTTED ? 2 : 0;
    ps_canvas_line (c, x, y, x + 20, y, &p);
    break;
  case PS_LEGEND_SHAPE:
    if (it->shape == PS_SHAPE_ELLIPSE || it->shape == PS_SHAPE_CIRCLE)
      ps_canvas_ellipse (c, x + 10, y, 9, 5.5, &p);
    else if (it->shape == PS_SHAPE_DIAMOND) {
      ps_pt d[4] = { { x + 10, y - 6 }, { x + 20, y }, { x + 10, y + 6 }, { x, y } };
      ps_canvas_path (c, d, 4, true, false, &p);
    } else if (it->shape == PS_SHAPE_PARALLELOGRAM) {
      ps_pt d[4] = { { x + 4, y - 5.5 }, { x + 20, y - 5.5 }, { x + 16, y + 5.5 },
                     { x, y + 5.5 } };
      ps_canvas_path (c, d, 4, true, false, &p);
    } else {
      ps_canvas_rect (c, x, y - 5.5, 20, 11, it->shape == PS_SHAPE_ROUNDED ? 3 : 0, &p);
    }
    break;
  default:
    ps_canvas_rect (c, x, y - 5.5, 20, 11, 2, &p);
    if (it->flags & PS_SCENE_DASHED)
      ps_canvas_hatch (c, x, y - 5.5, 20, 11, 4, it->stroke, 0.8);
    break;
  }
  (void) pal;
}

double
ps_legend_height (const ps_scene *s, double width)
{
  return legend_rows (s, width, NULL) * LEGEND_ROW;
}

double
ps_draw_legend (const ps_scene *s, double x, double y, double width, ps_canvas *c)
{
  if (!s->n_legend)
    return 0;
  const ps_palette *pal = ps_palette_get ((ps_theme) s->theme);
  double *xs = malloc (s->n_legend * sizeof *xs);
  if (!xs)
    return 0;
  int rows = legend_rows (s, width, xs);
  ps_canvas_begin_group (c, "legend", NULL);
  double row_y = y + LEGEND_ROW / 2;
  for (uint32_t i = 0; i < s->n_legend; i++) {
    if (i > 0 && xs[i] == 0)
      row_y += LEGEND_ROW;
    double lx = x + xs[i];
    legend_swatch (c, s, &s->legend[i], lx, row_y);
    ps_canvas_text (c, lx + 26, row_y + 3.2, s->strings + s->legend[i].label, &legend_font,
                    PS_ALIGN_LEFT, pal->text, 0);
  }
  ps_canvas_end_group (c);
  free (xs);
  return rows * LEGEND_ROW;
}

void
ps_draw_decorations (const ps_scene *s, const ps_frame *f, ps_canvas *c)
{
  const ps_palette *pal = ps_palette_get ((ps_theme) s->theme);
  double y = MARGIN;
  if (s->title != PS_NONE) {
    y += TITLE_SIZE;
    ps_canvas_text (c, MARGIN, y, s->strings + s->title, &title_font, PS_ALIGN_LEFT, pal->text,
                    f->width - 2 * MARGIN);
    y += 6;
  }
  if (s->subtitle != PS_NONE) {
    y += NOTE_SIZE;
    ps_canvas_text (c, MARGIN, y, s->strings + s->subtitle, &note_font, PS_ALIGN_LEFT,
                    pal->text_dim, f->width - 2 * MARGIN);
  }
  ps_draw_legend (s, MARGIN, f->legend_y, f->width - 2 * MARGIN, c);
}

/* ---- scenes -------------------------------------------------------------------- */

static void
draw_arrow (ps_canvas *c, ps_pt from, ps_pt tip, uint32_t rgb, double pen)
{
  double dx = tip.x - from.x, dy = tip.y - from.y;
  double len = hypot (dx, dy);
  if (len < 1e-6)
    return;
  dx /= len;
  dy /= len;
  double l = 7 + pen, w = 3.2 + pen * 0.6;
  ps_pt tri[3] = { tip,
                   { tip.x - dx * l - dy * w, tip.y - dy * l + dx * w },
                   { tip.x - dx * l + dy * w, tip.y - dy * l - dx * w } };
  ps_paint p = ps_paint_fill (rgb);
  ps_canvas_path (c, tri, 3, true, false, &p);
}

static void
draw_edge (const ps_scene *s, const ps_scene_edge *e, double ox, double oy, bool labels,
           ps_canvas *c)
{
  if (e->pts_count < 2 || e->pts_begin + e->pts_count > s->n_pts)
    return;
  uint32_t n = e->pts_count;
  ps_pt stack[64];
  ps_pt *pts = n <= 64 ? stack : malloc (n * sizeof *pts);
  if (!pts)
    return;
  for (uint32_t k = 0; k < n; k++) {
    pts[k].x = s->pts[e->pts_begin + k].x + ox;
    pts[k].y = s->pts[e->pts_begin + k].y + oy;
  }
  ps_paint p = ps_paint_stroke (e->color, e->pen);
  p.dash = e->flags & PS_SCENE_DASHED ? 1 : e->flags & PS_SCENE_DOTTED ? 2 : 0;
  bool curve = (n - 1) % 3 == 0;
  ps_canvas_path (c, pts, n, false, curve, &p);
  ps_pt tip = { e->tip.x + ox, e->tip.y + oy };
  if (e->has_tip)
    draw_arrow (c, pts[n - 1], tip, e->color, e->pen);
  else
    draw_arrow (c, pts[n - 2], pts[n - 1], e->color, e->pen);
  if (labels && e->label != PS_NONE) {
    ps_font f = { 7.5, false, false };
    ps_canvas_text (c, e->label_pos.x + ox + 4, e->label_pos.y + oy + 3, s->strings + e->label,
                    &f, PS_ALIGN_LEFT, e->color, 0);
  }
  if (pts != stack)
    free (pts);
}

/* The outline of a box as a path (for shapes with corners). */
static void
box_outline (const ps_scene *s, const ps_scene_node *n, double ox, double oy, double grow,
             const ps_paint *p, ps_canvas *c)
{
  double x0 = n->x + ox - n->w / 2 - grow, y0 = n->y + oy - n->h / 2 - grow;
  double w = n->w + 2 * grow, h = n->h + 2 * grow;
  switch ((ps_shape) n->shape) {
  case PS_SHAPE_ELLIPSE:
  case PS_SHAPE_CIRCLE:
    ps_canvas_ellipse (c, n->x + ox, n->y + oy, w / 2, h / 2, p);
    break;
  case PS_SHAPE_ROUNDED:
  case PS_SHAPE_STACK:
    ps_canvas_rect (c, x0, y0, w, h, 6, p);
    break;
  default:
    if (n->poly_count >= 3 && grow == 0 && n->poly_begin + n->poly_count <= s->n_pts) {
      ps_pt pts[64];
      uint32_t k = n->poly_count < 64 ? n->poly_count : 64;
      for (uint32_t i = 0; i < k; i++) {
        pts[i].x = s->pts[n->poly_begin + i].x + ox;
        pts[i].y = s->pts[n->poly_begin + i].y + oy;
      }
      ps_canvas_path (c, pts, k, true, false, p);
    } else {
      ps_canvas_rect (c, x0, y0, w, h, 0, p);
    }
    break;
  }
}

static void
draw_node (const ps_scene *s, const ps_scene_node *n, double ox, double oy, bool text,
           uint8_t mark, ps_canvas *c)
{
  const ps_palette *pal = ps_palette_get ((ps_theme) s->theme);
  double x = n->x + ox, y = n->y + oy, w = n->w, h = n->h;
  double x0 = x - w / 2, y0 = y - h / 2;
  ps_paint p = ps_paint_both (n->fill, n->stroke, n->pen);
  p.dash = n->flags & PS_SCENE_DASHED ? 1 : 0;
  ps_canvas_begin_group (c, "node", n->tooltip != PS_NONE ? s->strings + n->tooltip
                                   : n->label != PS_NONE ? s->strings + n->label : NULL);
  if (mark & PS_MARK_MATCH) {
    ps_paint m = ps_paint_stroke (pal->match, 4);
    ps_canvas_rect (c, x0 - 5, y0 - 5, w + 10, h + 10, 4, &m);
  }
  if (n->shape == PS_SHAPE_STACK) {
    ps_paint back = p;
    back.fill_rgb = ps_color_mix (n->fill, n->stroke, 0.25);
    ps_canvas_rect (c, x0 + 5, y0, w - 5, h - 5, 3, &back);
    ps_canvas_rect (c, x0, y0 + 5, w - 5, h - 5, 3, &p);
    x -= 2.5;
    y += 2.5;
    w -= 5;
  } else {
    box_outline (s, n, ox, oy, 0, &p, c);
  }
  if (mark & PS_MARK_CHANGED) {
    ps_paint m = ps_paint_stroke (pal->changed, 2.5);
    m.dash = 1;
    box_outline (s, n, ox, oy, 3, &m, c);
  }
  if (mark & (PS_MARK_SELECTED | PS_MARK_HOVER)) {
    ps_paint m = ps_paint_stroke (mark & PS_MARK_SELECTED ? pal->selection : pal->hover,
                                  mark & PS_MARK_SELECTED ? 2.5 : 1.8);
    box_outline (s, n, ox, oy, mark & PS_MARK_CHANGED ? 6 : 3, &m, c);
  }
  if (text) {
    /* Text, centred: the label in bold, then the details. */
    uint32_t tc = n->text ? n->text : ps_color_text_on (n->fill);
    uint32_t dc = ps_color_mix (tc, n->fill, 0.28);
    ps_font lf = { 10, true, false };
    ps_font df = { 8.5, false, false };
    uint32_t lines[3] = { n->label, n->detail, n->detail2 };
    double heights[3] = { 13, 11, 11 };
    double total = 0;
    for (int k = 0; k < 3; k++)
      if (lines[k] != PS_NONE)
        total += heights[k];
    double inner = w - 10;
    if (n->shape == PS_SHAPE_DIAMOND)
      inner = w * 0.6;
    else if (n->shape == PS_SHAPE_ELLIPSE || n->shape == PS_SHAPE_CIRCLE)
      inner = w * 0.78;
    else if (n->shape == PS_SHAPE_PARALLELOGRAM)
      inner = w - h * 0.9 - 4;
    else if (n->shape == PS_SHAPE_HEXAGON || n->shape == PS_SHAPE_OCTAGON)
      inner = w - h * 0.6 - 4;
    double ty = y - total / 2;
    if (n->shape == PS_SHAPE_HOUSE)
      ty += h * 0.12;
    for (int k = 0; k < 3; k++) {
      if (lines[k] == PS_NONE)
        continue;
      ty += heights[k];
      ps_canvas_text (c, x, ty - 3, s->strings + lines[k], k ? &df : &lf, PS_ALIGN_CENTER,
                      k ? dc : tc, inner);
    }
  }
  ps_canvas_end_group (c);
}

static bool
meets (const ps_diagram_view *v, double x0, double y0, double x1, double y1)
{
  return v->x1 <= v->x0 || (x1 >= v->x0 && x0 <= v->x1 && y1 >= v->y0 && y0 <= v->y1);
}

static bool
edge_meets (const ps_scene *s, const ps_scene_edge *e, const ps_diagram_view *v)
{
  if (v->x1 <= v->x0)
    return true;
  if (e->pts_count == 0 || e->pts_begin + e->pts_count > s->n_pts)
    return false;
  const ps_pt *pt = &s->pts[e->pts_begin];
  double bx0 = pt[0].x, by0 = pt[0].y, bx1 = bx0, by1 = by0;
  for (uint32_t k = 1; k < e->pts_count; k++) {
    bx0 = fmin (bx0, pt[k].x);
    bx1 = fmax (bx1, pt[k].x);
    by0 = fmin (by0, pt[k].y);
    by1 = fmax (by1, pt[k].y);
  }
  if (e->has_tip) {
    bx0 = fmin (bx0, e->tip.x), bx1 = fmax (bx1, e->tip.x);
    by0 = fmin (by0, e->tip.y), by1 = fmax (by1, e->tip.y);
  }
  return meets (v, bx0, by0, bx1, by1);
}

void
ps_draw_diagram (const ps_scene *s, const ps_diagram_view *v, ps_canvas *c)
{
  double ox = v->ox, oy = v->oy;
  /* Labels below about 4.5 device pixels are unreadable; edge labels
   * need more. */
  bool text = v->scale <= 0 || v->scale * 10 >= 4.5;
  bool labels = v->scale <= 0 || v->scale * 7.5 >= 6;
  ps_font cf = { 9.5, true, false };
  ps_canvas_begin_group (c, "clusters", NULL);
  for (uint32_t i = 0; i < s->n_clusters; i++) {
    const ps_scene_cluster *cl = &s->clusters[i];
    if (!meets (v, cl->x0, cl->y0, cl->x1, cl->y1))
      continue;
    ps_paint p = ps_paint_both (cl->fill, cl->stroke, 1);
    p.dash = cl->flags & PS_SCENE_DASHED ? 1 : 0;
    ps_canvas_rect (c, cl->x0 + ox, cl->y0 + oy, cl->x1 - cl->x0, cl->y1 - cl->y0, 6, &p);
    if (cl->label != PS_NONE && text)
      ps_canvas_text (c, cl->label_pos.x + ox, cl->label_pos.y + oy + 10,
                      s->strings + cl->label, &cf, PS_ALIGN_LEFT, cl->stroke,
                      cl->x1 - cl->x0 - 10);
  }
  ps_canvas_end_group (c);
  ps_canvas_begin_group (c, "edges", NULL);
  /* Critical edges last, so that they stay on top. */
  for (int pass = 0; pass < 2; pass++)
    for (uint32_t i = 0; i < s->n_edges; i++)
      if (((s->edges[i].flags & PS_SCENE_CRITICAL) != 0) == (pass == 1)
          && edge_meets (s, &s->edges[i], v))
        draw_edge (s, &s->edges[i], ox, oy, labels, c);
  ps_canvas_end_group (c);
  ps_canvas_begin_group (c, "nodes", NULL);
  for (uint32_t i = 0; i < s->n_nodes; i++) {
    const ps_scene_node *n = &s->nodes[i];
    if (meets (v, n->x - n->w / 2 - 8, n->y - n->h / 2 - 8, n->x + n->w / 2 + 8,
               n->y + n->h / 2 + 8))
      draw_node (s, n, ox, oy, text, v->marks ? v->marks[i] : 0, c);
  }
  ps_canvas_end_group (c);
}

void
ps_draw_frame (const ps_scene *s, const ps_frame *f, ps_canvas *c)
{
  ps_paint bg = ps_paint_fill (ps_palette_get ((ps_theme) s->theme)->background);
  ps_canvas_rect (c, 0, 0, f->width, f->height, 0, &bg);
  ps_draw_decorations (s, f, c);
}

void
ps_draw_scene (const ps_scene *s, const ps_frame *f, ps_canvas *c)
{
  ps_draw_frame (s, f, c);
  ps_diagram_view v = { f->diagram_x, f->diagram_y, 0, 0, 0, 0, 0, NULL };
  ps_draw_diagram (s, &v, c);
}

/* ---- pictures -------------------------------------------------------------------- */

#define PNG_MAX_SIDE 16384.0
#define PNG_SHARP_PIXELS 6e6 /* up to this, 2 pixels per point */
#define PNG_MAX_PIXELS 16e6  /* at most this many */

/* Two pixels a point keeps small pictures sharp; large ones get fewer
 * (not below one a point while under PNG_MAX_PIXELS), since encoding
 * time and file size grow with the pixels. */
double
ps_picture_png_scale (double w, double h)
{
  if (!(w > 0) || !(h > 0))
    return 1;
  double scale = 2.0;
  if (w * h * scale * scale > PNG_SHARP_PIXELS)
    scale = fmax (1.0, sqrt (PNG_SHARP_PIXELS / (w * h)));
  if (w * h * scale * scale > PNG_MAX_PIXELS)
    scale = sqrt (PNG_MAX_PIXELS / (w * h));
  if (w * scale > PNG_MAX_SIDE)
    scale = PNG_MAX_SIDE / w;
  if (h * scale > PNG_MAX_SIDE)
    scale = PNG_MAX_SIDE / h;
  return scale;
}

int
ps_picture_write_svg (double w, double h, ps_draw_fn draw, void *ctx, FILE *out)
{
  ps_canvas *c = ps_canvas_new_svg (out, w, h);
  if (!c)
    return PS_ENOMEM;
  draw (c, ctx);
  return ps_canvas_finish (c);
}

static void
be32 (unsigned char *p, uint32_t v)
{
  p[0] = (unsigned char) (v >> 24);
  p[1] = (unsigned char) (v >> 16);
  p[2] = (unsigned char) (v >> 8);
  p[3] = (unsigned char) v;
}

static int
png_chunk (FILE *out, const char *type, const unsigned char *data, uint32_t n)
{
  unsigned char head[8], tail[4];
  be32 (head, n);
  memcpy (head + 4, type, 4);
  /* zlib's crc32 restarts on a NULL buffer: pass a real one. */
  uLong crc = crc32 (0, head + 4, 4);
  crc = crc32 (crc, data ? data : head, n);
  be32 (tail, (uint32_t) crc);
  if (fwrite (head, 1, 8, out) != 8 || (n && fwrite (data, 1, n, out) != n)
      || fwrite (tail, 1, 4, out) != 4)
    return PS_EIO;
  return 0;
}

/* Writes an RGB24 surface as PNG.  cairo's own writer compresses with
 * libpng's default effort, which takes seconds for large diagrams; these
 * pictures are mostly flat colour, so the Sub filter and zlib's fastest
 * level give files about as small in a fraction of the time. */
static int
png_encode (cairo_surface_t *surf, FILE *out)
{
  int w = cairo_image_surface_get_width (surf), h = cairo_image_surface_get_height (surf);
  int stride = cairo_image_surface_get_stride (surf);
  const unsigned char *data = cairo_image_surface_get_data (surf);
  if (!data || w <= 0 || h <= 0)
    return PS_EINVAL;
  size_t row_len = 1 + (size_t) w * 3, out_cap = (size_t) 1 << 18;
  unsigned char *row = malloc (row_len), *obuf = malloc (out_cap);
  z_stream z;
  memset (&z, 0, sizeof z);
  int ret = row && obuf ? 0 : PS_ENOMEM;
  if (ret == 0 && deflateInit2 (&z, 1, Z_DEFLATED, 15, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    ret = PS_ENOMEM;
  bool z_open = ret == 0;
  unsigned char ihdr[13];
  be32 (ihdr, (uint32_t) w);
  be32 (ihdr + 4, (uint32_t) h);
  ihdr[8] = 8;  /* bits per channel */
  ihdr[9] = 2;  /* truecolour */
  ihdr[10] = ihdr[11] = ihdr[12] = 0;
  if (ret == 0 && fwrite ("\x89PNG\r\n\x1a\n", 1, 8, out) != 8)
    ret = PS_EIO;
  if (ret == 0)
    ret = png_chunk (out, "IHDR", ihdr, 13);
  z.next_out = obuf;
  z.avail_out = (uInt) out_cap;
  for (int y = 0; y < h && ret == 0; y++) {
    const uint32_t *px = (const uint32_t *) (const void *) (data + (size_t) y * stride);
    unsigned char pr = 0, pg = 0, pb = 0;
    row[0] = 1; /* the Sub filter: each byte minus the one a pixel left */
    for (int x = 0; x < w; x++) {
      uint32_t v = px[x];
      unsigned char r = (unsigned char) (v >> 16), g = (unsigned char) (v >> 8),
                    b = (unsigned char) v;
      row[1 + 3 * x] = (unsigned char) (r - pr);
      row[2 + 3 * x] = (unsigned char) (g - pg);
      row[3 + 3 * x] = (unsigned char) (b - pb);
      pr = r;
      pg = g;
      pb = b;
    }
    z.next_in = row;
    z.avail_in = (uInt) row_len;
    while (z.avail_in > 0 && ret == 0) {
      if (deflate (&z, Z_NO_FLUSH) == Z_STREAM_ERROR)
        ret = PS_ENOMEM;
      if (z.avail_out == 0 && ret == 0) {
        ret = png_chunk (out, "IDAT", obuf, (uint32_t) out_cap);
        z.next_out = obuf;
        z.avail_out = (uInt) out_cap;
      }
    }
  }
  for (int done = 0; !done && ret == 0;) {
    int r = deflate (&z, Z_FINISH);
    if (r == Z_STREAM_ERROR) {
      ret = PS_ENOMEM;
      break;
    }
    done = r == Z_STREAM_END;
    if (z.avail_out == 0 || done) {
      ret = png_chunk (out, "IDAT", obuf, (uint32_t) (out_cap - z.avail_out));
      z.next_out = obuf;
      z.avail_out = (uInt) out_cap;
    }
  }
  if (ret == 0)
    ret = png_chunk (out, "IEND", NULL, 0);
  if (z_open)
    deflateEnd (&z);
  free (row);
  free (obuf);
  return ret;
}

int
ps_picture_write_png (double w, double h, ps_draw_fn draw, void *ctx, FILE *out)
{
  double scale = ps_picture_png_scale (w, h);
  int pw = (int) ceil (w * scale), ph = (int) ceil (h * scale);
  if (pw < 1)
    pw = 1;
  if (ph < 1)
    ph = 1;
  cairo_surface_t *surf = cairo_image_surface_create (CAIRO_FORMAT_RGB24, pw, ph);
  if (cairo_surface_status (surf) != CAIRO_STATUS_SUCCESS) {
    cairo_surface_destroy (surf);
    return PS_ENOMEM;
  }
  cairo_t *cr = cairo_create (surf);
  cairo_set_source_rgb (cr, 1, 1, 1);
  cairo_paint (cr);
  cairo_scale (cr, scale, scale);
  ps_canvas *c = ps_canvas_new_cairo (cr);
  int ret = c ? 0 : PS_ENOMEM;
  if (c) {
    draw (c, ctx);
    ret = ps_canvas_finish (c);
  }
  cairo_destroy (cr);
  if (ret == 0) {
    cairo_surface_flush (surf);
    ret = png_encode (surf, out);
  }
  cairo_surface_destroy (surf);
  return ret;
}

typedef struct scene_ctx {
  const ps_scene *s;
  ps_frame f;
} scene_ctx;

static void
draw_scene_cb (ps_canvas *c, void *ctx)
{
  scene_ctx *sc = ctx;
  ps_draw_scene (sc->s, &sc->f, c);
}

int
ps_scene_write_svg (const ps_scene *s, FILE *out)
{
  scene_ctx sc = { s, { 0 } };
  ps_frame_compute (s, s->width, s->height, &sc.f);
  return ps_picture_write_svg (sc.f.width, sc.f.height, draw_scene_cb, &sc, out);
}

int
ps_scene_write_png (const ps_scene *s, FILE *out)
{
  scene_ctx sc = { s, { 0 } };
  ps_frame_compute (s, s->width, s->height, &sc.f);
  return ps_picture_write_png (sc.f.width, sc.f.height, draw_scene_cb, &sc, out);
}
