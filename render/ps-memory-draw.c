/* ps-memory-draw.c: the memory map (see ps-memory-draw.h). */
#include "ps-memory-draw.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ps-array.h"
#include "ps-draw.h"
#include "ps-format.h"
#include "ps-jsonw.h"
#include "ps-timeline-draw.h"

#define PLOT_W 1000.0 /* pictures */
#define POOL_H 380.0
#define ROW_H 16.0
#define ROWS_HEAD 34.0
#define AXIS_H 24.0
#define GUTTER 70.0
/* In maps of more than MERGE_ABOVE pooled buffers, those under SMALL
 * points in width or height are not drawn one by one: they are marked in a
 * grid of CELL-point cells and drawn as runs of marked cells, so that a map
 * of 100,000 buffers stays a few thousand shapes.  Smaller maps show every
 * buffer with its tooltip. */
#define MERGE_ABOVE 1000
#define SMALL 2.0
#define CELL 2.0

static bool
used (const ps_memory_map *m, uint32_t b)
{
  return m->fig && b < m->fig->n_buffers && !isnan (m->fig->buf_first[b]);
}

bool
ps_memory_map_external (const ps_memory_map *m, uint32_t b)
{
  return (m->plan->graph->buffers[b].flags & PS_BUF_EXTERNAL) || m->plan->offsets[b] == UINT64_MAX;
}

typedef struct ext_key {
  double start;
  uint32_t id;
} ext_key;

static int
cmp_ext (const void *a, const void *b)
{
  const ext_key *x = a, *y = b;
  if (x->start != y->start)
    return x->start < y->start ? -1 : 1;
  return x->id < y->id ? -1 : x->id > y->id;
}

int
ps_memory_map_build (ps_memory_map *m, const ps_plan *p, const ps_figures *f)
{
  memset (m, 0, sizeof *m);
  const ps_graph *g = p->graph;
  uint32_t nb = g->n_buffers;
  m->plan = p;
  m->fig = f && f->n_buffers == nb ? f : NULL;
  m->n_buffers = nb;
  m->makespan_ns = f ? f->makespan_ns : 0;
  int rc = ps_pool_peak_of (p, &m->peak);
  if (rc < 0)
    return rc;
  m->row = malloc (((size_t) nb + 1) * sizeof *m->row);
  ext_key *key = malloc (((size_t) nb + 1) * sizeof *key);
  if (!m->row || !key) {
    free (key);
    ps_memory_map_free (m);
    return PS_ENOMEM;
  }
  uint32_t ne = 0;
  for (uint32_t b = 0; b < nb; b++) {
    m->row[b] = PS_NONE;
    if (ps_memory_map_external (m, b))
      m->n_external++;
    else
      m->n_pooled++;
    if (!used (m, b))
      m->n_unused++;
    else if (ps_memory_map_external (m, b))
      key[ne++] = (ext_key){ m->fig->buf_first[b], b };
  }
  /* External buffers in rows: each goes to the first row free at its
   * start (in start order, so rows are packed greedily); a row is free a
   * thousandth of the run after its last buffer ends. */
  ps_array_sort (key, ne, sizeof *key, cmp_ext);
  double row_end[PS_MEMORY_MAX_ROWS], gap = m->makespan_ns / 500;
  for (uint32_t i = 0; i < ne; i++) {
    uint32_t b = key[i].id;
    double t0 = m->fig->buf_first[b], t1 = m->fig->buf_last[b];
    uint32_t r = 0;
    while (r < m->rows && row_end[r] > t0 - gap)
      r++;
    if (r == m->rows) {
      if (m->rows < PS_MEMORY_MAX_ROWS) {
        m->rows++;
      } else {
        /* Out of rows: overlap in the row that frees first. */
        r = 0;
        for (uint32_t k = 1; k < PS_MEMORY_MAX_ROWS; k++)
          if (row_end[k] < row_end[r])
            r = k;
        m->crowded[r] = 1;
      }
    }
    row_end[r] = fmax (t1, t0 + gap);
    m->row[b] = r;
  }
  free (key);
  return 0;
}

void
ps_memory_map_free (ps_memory_map *m)
{
  free (m->row);
  memset (m, 0, sizeof *m);
}

int
ps_memory_write_json (const ps_memory_map *m, FILE *out)
{
  const ps_plan *p = m->plan;
  const ps_graph *g = p->graph;
  fputs ("{\"format\": \"planscope-memory\", \"version\": 1, \"graph\": ", out);
  ps_jsonw_string (out, g->name ? g->name : "");
  fprintf (out, ",\n \"pool_bytes\": %llu, \"peak_bytes\": %llu, \"peak_exact\": %s, "
           "\"pool_ratio\": ",
           (unsigned long long) p->pool_bytes, (unsigned long long) m->peak.bytes,
           m->peak.exact ? "true" : "false");
  double ratio = ps_pool_ratio (p, &m->peak);
  ps_jsonw_number (out, isfinite (ratio) ? floor (ratio * 10000 + 0.5) / 10000 : 0);
  fputs (", \"makespan_ns\": ", out);
  ps_jsonw_number (out, m->makespan_ns);
  fputs (",\n \"buffers\": [", out);
  for (uint32_t b = 0; b < m->n_buffers; b++) {
    fputs (b ? ",\n  {\"name\": " : "\n  {\"name\": ", out);
    ps_jsonw_string (out, ps_buffer_name (g, b));
    fprintf (out, ", \"bytes\": %llu, \"external\": %s", (unsigned long long) g->buffers[b].bytes,
             ps_memory_map_external (m, b) ? "true" : "false");
    if (!ps_memory_map_external (m, b))
      fprintf (out, ", \"offset\": %llu", (unsigned long long) p->offsets[b]);
    if (used (m, b)) {
      const ps_figures *f = m->fig;
      fputs (", \"first_ns\": ", out);
      ps_jsonw_number (out, f->buf_first[b]);
      fputs (", \"last_ns\": ", out);
      ps_jsonw_number (out, f->buf_last[b]);
      uint32_t s0 = f->buf_first_span[b], s1 = f->buf_last_span[b];
      if (s0 < f->tl->n_spans && f->tl->spans[s0].step != PS_NONE)
        fprintf (out, ", \"first_step\": %u", f->tl->spans[s0].step);
      if (s1 < f->tl->n_spans && f->tl->spans[s1].step != PS_NONE)
        fprintf (out, ", \"last_step\": %u", f->tl->spans[s1].step);
    } else {
      fputs (", \"first_ns\": null, \"last_ns\": null", out);
    }
    fputc ('}', out);
  }
  fputs ("\n]}\n", out);
  return ferror (out) ? PS_EIO : 0;
}

static uint32_t
buffer_color (const ps_style *st, uint32_t b)
{
  static const uint32_t pal[12] = { 0x8dd3c7, 0xffffb3, 0xbebada, 0xfb8072, 0x80b1d3, 0xfdb462,
                                    0xb3de69, 0xfccde5, 0x9edae5, 0xbc80bd, 0xccebc5, 0xffed6f };
  uint32_t c = pal[(b * 7u) % 12];
  return st->theme == PS_THEME_DARK ? ps_color_mix (c, st->pal->background, 0.55) : c;
}

double
ps_memory_map_gutter (const ps_memory_map *m)
{
  (void) m;
  return GUTTER;
}

double
ps_memory_map_rows_height (const ps_memory_map *m)
{
  return m->rows ? ROWS_HEAD + m->rows * ROW_H : 0;
}

/* ---- geometry ---------------------------------------------------------------- */

static double
plot_x (const ps_memory_view *v)
{
  return v->x + v->gutter;
}

static double
tx (const ps_memory_view *v, double t)
{
  return plot_x (v) + (t - v->t0) / v->ns_per_pt;
}

static double
pool_top (const ps_memory_view *v)
{
  return v->y + AXIS_H;
}

static double
pool_h (const ps_memory_map *m, const ps_memory_view *v)
{
  if (m->n_pooled == 0 || m->plan->pool_bytes == 0)
    return 0;
  return fmax (v->height - AXIS_H - ps_memory_map_rows_height (m), 20);
}

static double
ext_top (const ps_memory_map *m, const ps_memory_view *v)
{
  double ph = pool_h (m, v);
  return pool_top (v) + ph + (ph > 0 ? ROWS_HEAD : 10);
}

/* The rectangle of buffer b; false when it is not drawn. */
static bool
buffer_rect (const ps_memory_map *m, const ps_memory_view *v, uint32_t b, double *x0, double *x1,
             double *y0, double *y1)
{
  if (!used (m, b))
    return false;
  *x0 = tx (v, m->fig->buf_first[b]);
  *x1 = fmax (tx (v, m->fig->buf_last[b]), *x0 + 1);
  if (m->row[b] != PS_NONE) {
    *y0 = ext_top (m, v) + m->row[b] * ROW_H + 1;
    *y1 = *y0 + ROW_H - 2;
    return true;
  }
  double ph = pool_h (m, v);
  if (ps_memory_map_external (m, b) || ph <= 0)
    return false;
  double pool = (double) m->plan->pool_bytes;
  const ps_graph *g = m->plan->graph;
  *y0 = pool_top (v) + (double) m->plan->offsets[b] / pool * ph;
  double end = (double) (m->plan->offsets[b] + g->buffers[b].bytes);
  *y1 = fmax (*y0 + 1, pool_top (v) + end / pool * ph);
  return true;
}

static bool
is_small (double x0, double x1, double y0, double y1)
{
  return x1 - x0 < SMALL || y1 - y0 < SMALL;
}

const char *
ps_memory_map_buffer_text (const ps_memory_map *m, uint32_t b, char *buf, size_t cap)
{
  const ps_plan *pl = m->plan;
  const ps_graph *g = pl->graph;
  char a[PS_FORMAT_MAX], off[PS_FORMAT_MAX], t0[PS_FORMAT_MAX], t1[PS_FORMAT_MAX];
  bool ext = ps_memory_map_external (m, b);
  if (!used (m, b)) {
    snprintf (buf, cap, "%s: %s%s, not used in this run", ps_buffer_name (g, b),
              ps_format_bytes ((double) g->buffers[b].bytes, a, sizeof a), ext ? ", external" : "");
    return buf;
  }
  snprintf (buf, cap, "%s: %s%s%s, in use %s \xe2\x80\x93 %s", ps_buffer_name (g, b),
            ps_format_bytes ((double) g->buffers[b].bytes, a, sizeof a),
            ext ? ", external" : " at offset ",
            ext ? "" : ps_format_bytes ((double) pl->offsets[b], off, sizeof off),
            ps_format_duration (m->fig->buf_first[b], t0, sizeof t0),
            ps_format_duration (m->fig->buf_last[b], t1, sizeof t1));
  return buf;
}

/* The small pooled buffers, as runs of grid cells they touch.  Without
 * memory for the grid they are left out, and the legend still counts them. */
static void
draw_small (const ps_memory_map *m, const ps_memory_view *v, ps_canvas *c, double left,
            double right)
{
  double top = pool_top (v), ph = pool_h (m, v), pw = right - left;
  size_t gw = (size_t) ceil (pw / CELL) + 1, gh = (size_t) ceil (ph / CELL) + 1;
  uint8_t *grid = calloc (gw * gh, 1);
  if (!grid)
    return;
  uint32_t n = 0;
  for (uint32_t b = 0; b < m->n_buffers; b++) {
    double x0, x1, y0, y1;
    if (m->row[b] != PS_NONE || !buffer_rect (m, v, b, &x0, &x1, &y0, &y1)
        || !is_small (x0, x1, y0, y1) || x1 < left || x0 > right)
      continue;
    n++;
    size_t c0 = (size_t) fmax (0, floor ((x0 - left) / CELL));
    size_t c1 = (size_t) fmin ((double) gw, ceil ((x1 - left) / CELL));
    size_t r0 = (size_t) fmax (0, floor ((y0 - top) / CELL));
    size_t r1 = (size_t) fmin ((double) gh, ceil ((y1 - top) / CELL));
    for (size_t r = r0; r < r1; r++)
      memset (grid + r * gw + c0, 1, c1 > c0 ? c1 - c0 : 0);
  }
  char title[160];
  snprintf (title, sizeof title,
            "%u buffers under %.0f points wide or high, drawn merged (the JSON export lists "
            "each)", n, SMALL);
  ps_canvas_begin_group (c, "small-buffers", title);
  ps_paint pt = ps_paint_fill (v->style->pal->merged_fill);
  for (size_t r = 0; r < gh; r++) {
    const uint8_t *row = grid + r * gw;
    for (size_t i = 0; i < gw;) {
      if (!row[i]) {
        i++;
        continue;
      }
      size_t j = i;
      while (j < gw && row[j])
        j++;
      double x = left + (double) i * CELL, y = top + (double) r * CELL;
      double w = fmin ((double) (j - i) * CELL, right - x);
      double h = fmin (CELL, top + ph - y);
      if (w > 0 && h > 0)
        ps_canvas_rect (c, x, y, w, h, 0, &pt);
      i = j;
    }
  }
  ps_canvas_end_group (c);
  free (grid);
}

void
ps_memory_map_draw (const ps_memory_map *m, const ps_memory_view *v, ps_canvas *c)
{
  const ps_style *st = v->style;
  const ps_palette *pal = st->pal;
  const ps_plan *pl = m->plan;
  const ps_graph *g = pl->graph;
  double x0 = plot_x (v), pw = v->x + v->width - x0, ph = pool_h (m, v);
  if (pw <= 0 || !(v->ns_per_pt > 0))
    return;
  double t1 = v->t0 + pw * v->ns_per_pt;
  ps_font lf = { 8.5, false, false }, hf = { 9.5, true, false };
  char a[PS_FORMAT_MAX], title[400];
  ps_paint surface = ps_paint_fill (pal->surface);
  ps_canvas_rect (c, v->x, v->y, v->width, AXIS_H, 0, &surface);
  double grid_bottom = ph > 0 ? pool_top (v) + ph : ext_top (m, v) + m->rows * ROW_H;
  if (ph > 0) {
    double top = pool_top (v);
    ps_paint frame = ps_paint_both (pal->lane[0], pal->grid, 0.8);
    ps_canvas_rect (c, x0, top, pw, ph, 0, &frame);
    /* Offset axis: ticks at a power of two, 4 to 8 of them. */
    double step = 1;
    while (step * 8 < (double) pl->pool_bytes)
      step *= 2;
    ps_paint tick = ps_paint_stroke (pal->axis, 0.8);
    for (int i = 0; i < 64; i++) {
      double off = i * step;
      if (off > (double) pl->pool_bytes * 1.0000001)
        break;
      double y = top + off / (double) pl->pool_bytes * ph;
      ps_canvas_line (c, x0 - 4, y, x0, y, &tick);
      ps_canvas_text (c, x0 - 6, y + 3, ps_format_bytes (off, a, sizeof a), &lf, PS_ALIGN_RIGHT,
                      pal->text_dim, v->gutter - 8);
    }
  }
  ps_draw_time_axis (c, pal, x0, v->y + AXIS_H - 4, pw, v->t0, t1, grid_bottom);
  ps_canvas_clip_push (c, x0, v->y + AXIS_H, pw, v->height - AXIS_H);
  bool merge = m->n_pooled > MERGE_ABOVE && ph > 0;
  if (merge)
    draw_small (m, v, c, x0, x0 + pw);
  bool titles = ps_canvas_has_titles (c);
  ps_canvas_begin_group (c, "buffers", NULL);
  for (uint32_t b = 0; b < m->n_buffers; b++) {
    double rx0, rx1, ry0, ry1;
    if (!buffer_rect (m, v, b, &rx0, &rx1, &ry0, &ry1) || rx1 < x0 || rx0 > x0 + pw)
      continue;
    bool ext = m->row[b] != PS_NONE;
    if (merge && !ext && is_small (rx0, rx1, ry0, ry1) && b != v->selected)
      continue;
    uint32_t fill = ext ? pal->external : buffer_color (st, b);
    if (titles)
      ps_memory_map_buffer_text (m, b, title, sizeof title);
    ps_canvas_begin_group (c, "buffer", titles ? title : NULL);
    ps_paint pt = ps_paint_both (fill, ps_style_outline (st, fill), 0.6);
    pt.fill_alpha = 0.9;
    if (b == v->selected) {
      pt.stroke_rgb = pal->selection;
      pt.width = 2.5;
    }
    ps_canvas_rect (c, rx0, ry0, rx1 - rx0, ry1 - ry0, 0, &pt);
    if (rx1 - rx0 > 30 && ry1 - ry0 > 10 && !(ext && m->crowded[m->row[b]])) {
      char label[300];
      snprintf (label, sizeof label, "%s %s", ps_buffer_name (g, b),
                ps_format_bytes ((double) g->buffers[b].bytes, a, sizeof a));
      double lx = fmax (rx0, x0) + 3;
      ps_canvas_text (c, lx, ry0 + fmin (ry1 - ry0, 14) / 2 + 4, label, &lf, PS_ALIGN_LEFT,
                      ps_color_text_on (fill), fmin (rx1, x0 + pw) - lx - 3);
    }
    ps_canvas_end_group (c);
  }
  ps_canvas_end_group (c);
  if (ph > 0 && m->peak.bytes > 0 && pl->pool_bytes > 0) {
    double y = pool_top (v) + (double) m->peak.bytes / (double) pl->pool_bytes * ph;
    ps_paint lb = ps_paint_stroke (pal->peak, 1.2);
    lb.dash = 1;
    ps_canvas_line (c, x0, y, x0 + pw, y, &lb);
    snprintf (title, sizeof title, "%s: %s live at once", m->peak.exact ? "peak" : "lower bound",
              ps_format_bytes ((double) m->peak.bytes, a, sizeof a));
    ps_canvas_text (c, x0 + pw - 4, y - 3, title, &lf, PS_ALIGN_RIGHT, pal->peak, 0);
  }
  ps_canvas_clip_pop (c);
  if (m->rows > 0) {
    double top = ext_top (m, v);
    ps_canvas_text (c, v->x, top - 8, "external buffers (owned by the caller, not in the pool)",
                    &hf, PS_ALIGN_LEFT, pal->text, 0);
    ps_paint frame = ps_paint_stroke (pal->grid, 0.8);
    ps_canvas_rect (c, x0, top, pw, m->rows * ROW_H, 0, &frame);
  }
}

uint32_t
ps_memory_map_hit (const ps_memory_map *m, const ps_memory_view *v, double x, double y)
{
  uint32_t best = PS_NONE;
  double best_area = INFINITY;
  for (uint32_t b = 0; b < m->n_buffers; b++) {
    double x0, x1, y0, y1;
    if (!buffer_rect (m, v, b, &x0, &x1, &y0, &y1))
      continue;
    /* Slivers get a point of slop; the smallest buffer under the pointer wins. */
    if (x >= x0 - 1 && x <= x1 + 1 && y >= y0 - 1 && y <= y1 + 1) {
      double area = (x1 - x0) * (y1 - y0);
      if (area < best_area) {
        best_area = area;
        best = b;
      }
    }
  }
  return best;
}

/* ---- pictures -------------------------------------------------------------- */

typedef struct mem_pic {
  const ps_memory_map *m;
  ps_style style;
  ps_scene deco;
  ps_frame frame;
  ps_memory_view view;
} mem_pic;

static void
draw_picture (ps_canvas *c, void *ctx)
{
  mem_pic *p = ctx;
  ps_draw_frame (&p->deco, &p->frame, c);
  ps_memory_map_draw (p->m, &p->view, c);
}

static int
mem_pic_init (mem_pic *p, const ps_memory_map *m, ps_theme theme)
{
  memset (p, 0, sizeof *p);
  p->m = m;
  ps_scene_init (&p->deco);
  ps_style_init (&p->style, theme, PS_COLOR_BY_KIND);
  const ps_palette *pal = p->style.pal;
  const ps_plan *pl = m->plan;
  const ps_graph *g = pl->graph;
  ps_memory_view *v = &p->view;
  v->gutter = GUTTER;
  v->t0 = 0;
  v->ns_per_pt = (m->makespan_ns > 0 ? m->makespan_ns : 1) / PLOT_W;
  v->width = GUTTER + PLOT_W;
  bool pooled = m->n_pooled > 0 && pl->pool_bytes > 0;
  v->height = AXIS_H + (pooled ? POOL_H : 0) + ps_memory_map_rows_height (m) + (pooled ? 0 : 20);
  v->style = &p->style;
  v->selected = PS_NONE;
  uint32_t n_small = 0;
  if (pooled && m->n_pooled > MERGE_ABOVE)
    for (uint32_t b = 0; b < m->n_buffers; b++) {
      double x0, x1, y0, y1;
      if (m->row[b] == PS_NONE && buffer_rect (m, v, b, &x0, &x1, &y0, &y1))
        n_small += is_small (x0, x1, y0, y1);
    }

  ps_scene *s = &p->deco;
  s->theme = (uint8_t) theme;
  char pool[PS_POOL_TEXT_MAX];
  int ret = ps_scene_strf (s, &s->title, "%s \xe2\x80\x94 memory: pool %s",
                           g->name && *g->name ? g->name : "graph",
                           ps_pool_text (pl, &m->peak, pool, sizeof pool));
  if (ret == 0)
    ret = ps_scene_strf (s, &s->subtitle,
                         "%u pooled and %u external buffers; offset against the time each is in "
                         "use (first to last work touching it)%s",
                         m->n_pooled, m->n_external,
                         m->n_unused ? "; unused buffers not shown" : "");
  uint32_t c0 = buffer_color (&p->style, 0);
  if (ret == 0 && m->n_pooled)
    ret = ps_scene_add_legend (s, PS_LEGEND_SWATCH, "pooled buffer (one colour each)", c0,
                               ps_style_outline (&p->style, c0), 0);
  if (ret == 0 && n_small)
    ret = ps_scene_add_legend (s, PS_LEGEND_SWATCH, "small buffers, merged", pal->merged_fill,
                               pal->merged_fill, 0);
  if (ret == 0 && m->n_external)
    ret = ps_scene_add_legend (s, PS_LEGEND_SWATCH, "external buffer", pal->external,
                               ps_style_outline (&p->style, pal->external), 0);
  if (ret == 0 && pooled)
    ret = ps_scene_add_legend (s, PS_LEGEND_LINE,
                               m->peak.exact
                                 ? "peak of bytes live at once (no pool can be smaller)"
                                 : "lower bound of bytes live at once",
                               0, pal->peak, PS_SCENE_DASHED);
  ps_frame_compute (s, v->width + 8, v->height, &p->frame);
  v->x = p->frame.diagram_x;
  v->y = p->frame.diagram_y;
  return ret;
}

static void
mem_pic_free (mem_pic *p)
{
  ps_scene_free (&p->deco);
}

int
ps_memory_write_svg (const ps_memory_map *m, ps_theme theme, FILE *out)
{
  mem_pic p;
  int ret = mem_pic_init (&p, m, theme);
  if (ret == 0)
    ret = ps_picture_write_svg (p.frame.width, p.frame.height, draw_picture, &p, out);
  mem_pic_free (&p);
  return ret;
}

int
ps_memory_write_png (const ps_memory_map *m, ps_theme theme, FILE *out)
{
  mem_pic p;
  int ret = mem_pic_init (&p, m, theme);
  if (ret == 0)
    ret = ps_picture_write_png (p.frame.width, p.frame.height, draw_picture, &p, out);
  mem_pic_free (&p);
  return ret;
}


int
ps_memory_write_dot (const ps_memory_map *m, FILE *out)
{
  mem_pic p;
  int ret = mem_pic_init (&p, m, PS_THEME_LIGHT);
  if (ret < 0) {
    mem_pic_free (&p);
    return ret;
  }
  const ps_graph *g = m->plan->graph;
  double H = p.frame.height;
  fputs ("// planscope memory map: positions are pinned; draw it as laid out with\n"
         "//   neato -n2 -Tsvg memory.dot > memory.svg\n"
         "digraph memory {\n  graph [label=",
         out);
  ps_dot_write_string (out, p.deco.strings + p.deco.title);
  fputs (", labelloc=t, fontname=\"DejaVu Sans\"];\n"
         "  node [shape=box, style=filled, fixedsize=true, fontname=\"DejaVu Sans\", "
         "fontsize=8, penwidth=0.6];\n",
         out);
  for (uint32_t b = 0; b < m->n_buffers; b++) {
    double x0, x1, y0, y1;
    if (!buffer_rect (m, &p.view, b, &x0, &x1, &y0, &y1))
      continue;
    char label[300], sz[32];
    snprintf (label, sizeof label, "%s %s", ps_buffer_name (g, b),
              ps_format_bytes ((double) g->buffers[b].bytes, sz, sizeof sz));
    ps_font f8 = { 8, false, false };
    char fit[300];
    fprintf (out, "  b%u [label=", b);
    ps_dot_write_string (out, x1 - x0 > 30 && y1 - y0 > 10 ? ps_text_fit (label, &f8, x1 - x0 - 8, fit,
                                                               sizeof fit)
                                               : "");
    fputs (", tooltip=", out);
    ps_dot_write_string (out, label);
    fprintf (out, ", pos=\"%.2f,%.2f!\", width=%.4f, height=%.4f, fillcolor=\"#%06x\"];\n",
             (x0 + x1) / 2, H - (y0 + y1) / 2, (x1 - x0) / 72, (y1 - y0) / 72,
             m->row[b] != PS_NONE ? p.style.pal->external : buffer_color (&p.style, b));
  }
  fputs ("}\n", out);
  mem_pic_free (&p);
  return ferror (out) ? PS_EIO : 0;
}
