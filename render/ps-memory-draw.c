/* ps-memory-draw.c: the memory map (see ps-memory-draw.h). */
#include "ps-memory-draw.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ps-view.h"
#include "ps-draw.h"
#include "ps-format.h"
#include "ps-jsonw.h"
#include "ps-timeline-draw.h"

#define PLOT_W 1000.0
#define POOL_H 380.0
#define ROW_H 16.0
#define MAX_ROWS 64
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

int
ps_memory_map_build (ps_memory_map *m, const ps_plan *p, const ps_timeline *tl)
{
  memset (m, 0, sizeof *m);
  const ps_graph *g = p->graph;
  uint32_t nb = g->n_buffers;
  m->plan = p;
  m->n_buffers = nb;
  m->first_ns = malloc (((size_t) nb + 1) * sizeof *m->first_ns);
  m->last_ns = malloc (((size_t) nb + 1) * sizeof *m->last_ns);
  m->first_step = malloc (((size_t) nb + 1) * sizeof *m->first_step);
  m->last_step = malloc (((size_t) nb + 1) * sizeof *m->last_step);
  if (!m->first_ns || !m->last_ns || !m->first_step || !m->last_step) {
    ps_memory_map_free (m);
    return PS_ENOMEM;
  }
  for (uint32_t b = 0; b < nb; b++) {
    m->first_ns[b] = m->last_ns[b] = -1;
    m->first_step[b] = m->last_step[b] = PS_NONE;
  }
  m->makespan_ns = tl->makespan_ns;
  for (uint32_t i = 0; i < tl->n_spans; i++) {
    const ps_span *s = &tl->spans[i];
    for (uint32_t k = 0; k < s->nodes_count; k++) {
      uint32_t v = tl->span_nodes[s->nodes_begin + k];
      if (v >= g->n_nodes)
        continue;
      const ps_node *nd = &g->nodes[v];
      for (int w = 0; w < 2; w++) {
        uint32_t begin = w ? nd->writes_begin : nd->reads_begin;
        uint32_t count = w ? nd->writes_count : nd->reads_count;
        for (uint32_t a = 0; a < count; a++) {
          uint32_t b = g->access[begin + a];
          if (b >= nb)
            continue;
          if (m->first_ns[b] < 0 || s->start_ns < m->first_ns[b]) {
            m->first_ns[b] = s->start_ns;
            m->first_step[b] = s->step;
          }
          if (s->end_ns > m->last_ns[b]) {
            m->last_ns[b] = s->end_ns;
            m->last_step[b] = s->step;
          }
        }
      }
    }
  }
  for (uint32_t b = 0; b < nb; b++) {
    if (g->buffers[b].flags & PS_BUF_EXTERNAL)
      m->n_external++;
    else
      m->n_pooled++;
    if (m->first_ns[b] < 0)
      m->n_unused++;
  }
  return 0;
}

void
ps_memory_map_free (ps_memory_map *m)
{
  free (m->first_ns);
  free (m->last_ns);
  free (m->first_step);
  free (m->last_step);
  memset (m, 0, sizeof *m);
}

static bool
is_external (const ps_memory_map *m, uint32_t b)
{
  return (m->plan->graph->buffers[b].flags & PS_BUF_EXTERNAL)
         || m->plan->offsets[b] == UINT64_MAX;
}

int
ps_memory_write_json (const ps_memory_map *m, FILE *out)
{
  const ps_plan *p = m->plan;
  const ps_graph *g = p->graph;
  fputs ("{\"format\": \"planscope-memory\", \"version\": 1, \"graph\": ", out);
  ps_jsonw_string (out, g->name ? g->name : "");
  fprintf (out, ",\n \"pool_bytes\": %llu, \"lower_bound_bytes\": %llu, \"makespan_ns\": ",
           (unsigned long long) p->pool_bytes, (unsigned long long) p->pool_lower_bound);
  ps_jsonw_number (out, m->makespan_ns);
  fputs (",\n \"buffers\": [", out);
  for (uint32_t b = 0; b < m->n_buffers; b++) {
    fputs (b ? ",\n  {\"name\": " : "\n  {\"name\": ", out);
    ps_jsonw_string (out, ps_buffer_name (g, b));
    fprintf (out, ", \"bytes\": %llu, \"external\": %s", (unsigned long long) g->buffers[b].bytes,
             is_external (m, b) ? "true" : "false");
    if (!is_external (m, b))
      fprintf (out, ", \"offset\": %llu", (unsigned long long) p->offsets[b]);
    if (m->first_ns[b] >= 0) {
      fputs (", \"first_ns\": ", out);
      ps_jsonw_number (out, m->first_ns[b]);
      fputs (", \"last_ns\": ", out);
      ps_jsonw_number (out, m->last_ns[b]);
      if (m->first_step[b] != PS_NONE)
        fprintf (out, ", \"first_step\": %u", m->first_step[b]);
      if (m->last_step[b] != PS_NONE)
        fprintf (out, ", \"last_step\": %u", m->last_step[b]);
    } else {
      fputs (", \"first_ns\": null, \"last_ns\": null", out);
    }
    fputc ('}', out);
  }
  fputs ("\n]}\n", out);
  return ferror (out) ? PS_EIO : 0;
}

static uint32_t
buffer_color (uint32_t b)
{
  static const uint32_t pal[12] = { 0x8dd3c7, 0xffffb3, 0xbebada, 0xfb8072, 0x80b1d3, 0xfdb462,
                                    0xb3de69, 0xfccde5, 0x9edae5, 0xbc80bd, 0xccebc5, 0xffed6f };
  return pal[(b * 7u) % 12];
}

typedef struct mem_pic {
  const ps_memory_map *m;
  uint32_t n_small;  /* pooled buffers drawn merged (see SMALL) */
  ps_scene deco;
  ps_frame frame;
  double t_max;
  double pool_h;   /* 0 when nothing is pooled */
  uint32_t rows;   /* external rows */
  uint32_t *row;   /* per buffer: external row, or PS_NONE */
  uint8_t crowded[MAX_ROWS]; /* rows where buffers had to overlap: no labels */
} mem_pic;

static double
mx (const mem_pic *p, double t)
{
  return p->frame.diagram_x + GUTTER + fmax (0, fmin (1, t / p->t_max)) * PLOT_W;
}

static double
pool_top (const mem_pic *p)
{
  return p->frame.diagram_y + AXIS_H;
}

static double
ext_top (const mem_pic *p)
{
  return pool_top (p) + p->pool_h + (p->pool_h > 0 ? 34 : 0);
}

static void
buffer_rect (const mem_pic *p, uint32_t b, double *x0, double *x1, double *y0, double *y1)
{
  const ps_memory_map *m = p->m;
  *x0 = mx (p, m->first_ns[b]);
  *x1 = fmax (mx (p, m->last_ns[b]), *x0 + 1);
  if (p->row[b] != PS_NONE) {
    *y0 = ext_top (p) + p->row[b] * ROW_H + 1;
    *y1 = *y0 + ROW_H - 2;
  } else {
    double pool = (double) m->plan->pool_bytes;
    const ps_graph *g = m->plan->graph;
    *y0 = pool_top (p) + (double) m->plan->offsets[b] / pool * p->pool_h;
    double end = (double) (m->plan->offsets[b] + g->buffers[b].bytes);
    *y1 = fmax (*y0 + 1, pool_top (p) + end / pool * p->pool_h);
  }
}

static bool
is_small (double x0, double x1, double y0, double y1)
{
  return x1 - x0 < SMALL || y1 - y0 < SMALL;
}

/* The small pooled buffers, as runs of grid cells they touch.  Without
 * memory for the grid they are left out, and the legend still counts them. */
static void
draw_small (const mem_pic *p, ps_canvas *c)
{
  const ps_memory_map *m = p->m;
  size_t gw = (size_t) ceil (PLOT_W / CELL) + 1, gh = (size_t) ceil (p->pool_h / CELL) + 1;
  uint8_t *grid = calloc (gw * gh, 1);
  if (!grid)
    return;
  double left = mx (p, 0), top = pool_top (p);
  for (uint32_t b = 0; b < m->n_buffers; b++) {
    if (m->first_ns[b] < 0 || p->row[b] != PS_NONE)
      continue;
    double x0, x1, y0, y1;
    buffer_rect (p, b, &x0, &x1, &y0, &y1);
    if (!is_small (x0, x1, y0, y1))
      continue;
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
            "each)", p->n_small, SMALL);
  ps_canvas_begin_group (c, "small-buffers", title);
  ps_paint pt = ps_paint_fill (0x9fb7cc);
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
      double w = fmin ((double) (j - i) * CELL, left + PLOT_W - x);
      double h = fmin (CELL, top + p->pool_h - y);
      if (w > 0 && h > 0)
        ps_canvas_rect (c, x, y, w, h, 0, &pt);
      i = j;
    }
  }
  ps_canvas_end_group (c);
  free (grid);
}

static void
draw_memory (ps_canvas *c, void *ctx)
{
  mem_pic *p = ctx;
  const ps_memory_map *m = p->m;
  const ps_plan *pl = m->plan;
  const ps_graph *g = pl->graph;
  ps_paint bg = ps_paint_fill (0xffffff);
  ps_canvas_rect (c, 0, 0, p->frame.width, p->frame.height, 0, &bg);
  ps_draw_decorations (&p->deco, &p->frame, c);
  double x0 = p->frame.diagram_x + GUTTER;
  ps_font lf = { 8.5, false, false }, hf = { 9.5, true, false };
  char a[32], bb[32], title[400];

  if (p->pool_h > 0) {
    double top = pool_top (p);
    ps_paint frame = ps_paint_both (0xfafafa, 0xbbbbbb, 0.8);
    ps_canvas_rect (c, x0, top, PLOT_W, p->pool_h, 0, &frame);
    ps_draw_time_axis (c, x0, top - 4, PLOT_W, p->t_max, top + p->pool_h);
    /* Offset axis. */
    /* Ticks at a power of two, 4 to 8 of them. */
    double step = 1;
    while (step * 8 < (double) pl->pool_bytes)
      step *= 2;
    ps_paint tick = ps_paint_stroke (0x555555, 0.8);
    for (int i = 0; i < 64; i++) {
      double off = i * step;
      if (off > (double) pl->pool_bytes * 1.0000001)
        break;
      double y = top + off / (double) pl->pool_bytes * p->pool_h;
      ps_canvas_line (c, x0 - 4, y, x0, y, &tick);
      ps_canvas_text (c, x0 - 6, y + 3, ps_format_bytes (off, a, sizeof a), &lf, PS_ALIGN_RIGHT,
                      0x333333, GUTTER - 8);
    }
    ps_canvas_text (c, p->frame.diagram_x, top - 12, "offset", &lf, PS_ALIGN_LEFT, 0x555555, 0);
  }
  if (p->n_small > 0)
    draw_small (p, c);
  ps_canvas_begin_group (c, "buffers", NULL);
  for (uint32_t b = 0; b < m->n_buffers; b++) {
    if (m->first_ns[b] < 0 || (p->row[b] == PS_NONE && p->pool_h <= 0))
      continue;
    double rx0, rx1, ry0, ry1;
    buffer_rect (p, b, &rx0, &rx1, &ry0, &ry1);
    bool ext = p->row[b] != PS_NONE;
    if (p->n_small > 0 && !ext && is_small (rx0, rx1, ry0, ry1))
      continue;
    uint32_t fill = ext ? 0xd0d0d0 : buffer_color (b);
    {
      char t1[32], off[32];
      snprintf (title, sizeof title, "%s: %s%s%s, in use %s \xe2\x80\x93 %s",
                ps_buffer_name (g, b), ps_format_bytes ((double) g->buffers[b].bytes, a, sizeof a),
                ext ? ", external" : " at offset ",
                ext ? "" : ps_format_bytes ((double) pl->offsets[b], off, sizeof off),
                ps_format_duration (m->first_ns[b], bb, sizeof bb),
                ps_format_duration (m->last_ns[b], t1, sizeof t1));
    }
    ps_canvas_begin_group (c, "buffer", title);
    ps_paint pt = ps_paint_both (fill, ps_color_darker (fill), 0.6);
    pt.fill_alpha = 0.9;
    ps_canvas_rect (c, rx0, ry0, rx1 - rx0, ry1 - ry0, 0, &pt);
    if (rx1 - rx0 > 30 && ry1 - ry0 > 10 && !(ext && p->crowded[p->row[b]])) {
      char label[300];
      snprintf (label, sizeof label, "%s %s", ps_buffer_name (g, b),
                ps_format_bytes ((double) g->buffers[b].bytes, a, sizeof a));
      ps_canvas_text (c, rx0 + 3, ry0 + fmin (ry1 - ry0, 14) / 2 + 4, label, &lf, PS_ALIGN_LEFT,
                      0x1a1a1a, rx1 - rx0 - 6);
    }
    ps_canvas_end_group (c);
  }
  ps_canvas_end_group (c);
  if (p->pool_h > 0 && pl->pool_lower_bound > 0 && pl->pool_bytes > 0) {
    double y = pool_top (p) + (double) pl->pool_lower_bound / (double) pl->pool_bytes * p->pool_h;
    ps_paint lb = ps_paint_stroke (0x1f78b4, 1.2);
    lb.dash = 1;
    ps_canvas_line (c, x0, y, x0 + PLOT_W, y, &lb);
    snprintf (title, sizeof title, "lower bound: peak of live bytes, %s",
              ps_format_bytes ((double) pl->pool_lower_bound, a, sizeof a));
    ps_canvas_text (c, x0 + PLOT_W - 4, y - 3, title, &lf, PS_ALIGN_RIGHT, 0x1f78b4, 0);
  }
  if (p->rows > 0) {
    double top = ext_top (p);
    ps_canvas_text (c, p->frame.diagram_x, top - 8,
                    "external buffers (owned by the caller, not in the pool)", &hf,
                    PS_ALIGN_LEFT, 0x333333, 0);
    ps_paint frame = ps_paint_stroke (0xbbbbbb, 0.8);
    ps_canvas_rect (c, x0, top, PLOT_W, p->rows * ROW_H, 0, &frame);
    if (p->pool_h <= 0)
      ps_draw_time_axis (c, x0, top - 14, PLOT_W, p->t_max, top + p->rows * ROW_H);
  }
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

static int
mem_pic_init (mem_pic *p, const ps_memory_map *m)
{
  memset (p, 0, sizeof *p);
  p->m = m;
  ps_scene_init (&p->deco);
  const ps_plan *pl = m->plan;
  const ps_graph *g = pl->graph;
  p->t_max = m->makespan_ns > 0 ? m->makespan_ns : 1;
  p->row = malloc (((size_t) m->n_buffers + 1) * sizeof *p->row);
  uint32_t *order = malloc (((size_t) m->n_buffers + 1) * sizeof *order);
  double row_end[MAX_ROWS];
  if (!p->row || !order) {
    free (order);
    return PS_ENOMEM;
  }
  /* External buffers in rows: each goes to the first row free at its
   * start (in start order, so rows are packed greedily). */
  uint32_t ne = 0;
  for (uint32_t b = 0; b < m->n_buffers; b++) {
    p->row[b] = PS_NONE;
    if (is_external (m, b) && m->first_ns[b] >= 0)
      order[ne++] = b;
  }
  ext_key *key = malloc (((size_t) ne + 1) * sizeof *key);
  if (!key) {
    free (order);
    return PS_ENOMEM;
  }
  for (uint32_t i = 0; i < ne; i++)
    key[i] = (ext_key){ m->first_ns[order[i]], order[i] };
  qsort (key, ne, sizeof *key, cmp_ext);
  for (uint32_t i = 0; i < ne; i++)
    order[i] = key[i].id;
  for (uint32_t i = 0; i < ne; i++) {
    uint32_t b = order[i];
    double x0 = m->first_ns[b] / p->t_max * PLOT_W;
    double x1 = m->last_ns[b] / p->t_max * PLOT_W;
    uint32_t r = 0;
    while (r < p->rows && row_end[r] > x0 - 2)
      r++;
    if (r == p->rows) {
      if (p->rows < MAX_ROWS) {
        p->rows++;
      } else {
        /* Out of rows: overlap in the row that frees first. */
        r = 0;
        for (uint32_t k = 1; k < MAX_ROWS; k++)
          if (row_end[k] < row_end[r])
            r = k;
        p->crowded[r] = 1;
      }
    }
    row_end[r] = fmax (x1, x0 + 1);
    p->row[b] = r;
  }
  free (key);
  free (order);
  p->pool_h = m->n_pooled > 0 && pl->pool_bytes > 0 ? POOL_H : 0;
  /* Sizes do not depend on where the frame puts the plot. */
  for (uint32_t b = 0; b < m->n_buffers && p->pool_h > 0 && m->n_pooled > MERGE_ABOVE; b++) {
    double x0, x1, y0, y1;
    if (m->first_ns[b] < 0 || p->row[b] != PS_NONE)
      continue;
    buffer_rect (p, b, &x0, &x1, &y0, &y1);
    p->n_small += is_small (x0, x1, y0, y1);
  }

  ps_scene *s = &p->deco;
  char a[32], b2[32];
  int ret = ps_scene_strf (s, &s->title, "%s \xe2\x80\x94 memory: pool %s (lower bound %s)",
                           g->name && *g->name ? g->name : "graph",
                           ps_format_bytes ((double) pl->pool_bytes, a, sizeof a),
                           ps_format_bytes ((double) pl->pool_lower_bound, b2, sizeof b2));
  if (ret == 0)
    ret = ps_scene_strf (s, &s->subtitle,
                         "%u pooled and %u external buffers; offset against the time each is in "
                         "use (first to last work touching it)%s",
                         m->n_pooled, m->n_external,
                         m->n_unused ? "; unused buffers not shown" : "");
  if (ret == 0 && m->n_pooled)
    ret = ps_scene_add_legend (s, PS_LEGEND_SWATCH, "pooled buffer (one colour each)",
                               buffer_color (0), ps_color_darker (buffer_color (0)), 0);
  if (ret == 0 && p->n_small)
    ret = ps_scene_add_legend (s, PS_LEGEND_SWATCH, "small buffers, merged", 0x9fb7cc, 0x9fb7cc,
                               0);
  if (ret == 0 && m->n_external)
    ret = ps_scene_add_legend (s, PS_LEGEND_SWATCH, "external buffer", 0xd0d0d0,
                               ps_color_darker (0xd0d0d0), 0);
  if (ret == 0 && p->pool_h > 0)
    ret = ps_scene_add_legend (s, PS_LEGEND_LINE, "lower bound (peak live bytes)", 0, 0x1f78b4,
                               PS_SCENE_DASHED);
  double h = AXIS_H + p->pool_h + (p->pool_h > 0 ? 34 : 0) + p->rows * ROW_H + 8;
  if (p->pool_h <= 0 && p->rows == 0)
    h = AXIS_H + 20;
  ps_frame_compute (s, GUTTER + PLOT_W + 8, h, &p->frame);
  return ret;
}

static void
mem_pic_free (mem_pic *p)
{
  ps_scene_free (&p->deco);
  free (p->row);
}

int
ps_memory_write_svg (const ps_memory_map *m, FILE *out)
{
  mem_pic p;
  int ret = mem_pic_init (&p, m);
  if (ret == 0)
    ret = ps_picture_write_svg (p.frame.width, p.frame.height, draw_memory, &p, out);
  mem_pic_free (&p);
  return ret;
}

int
ps_memory_write_png (const ps_memory_map *m, FILE *out)
{
  mem_pic p;
  int ret = mem_pic_init (&p, m);
  if (ret == 0)
    ret = ps_picture_write_png (p.frame.width, p.frame.height, draw_memory, &p, out);
  mem_pic_free (&p);
  return ret;
}

static void
dot_str (FILE *out, const char *s)
{
  fputc ('"', out);
  for (; *s; s++) {
    unsigned char ch = (unsigned char) *s;
    if (ch == '"' || ch == '\\')
      fputc ('\\', out), fputc (ch, out);
    else if (ch >= 0x20)
      fputc (ch, out);
  }
  fputc ('"', out);
}

int
ps_memory_write_dot (const ps_memory_map *m, FILE *out)
{
  mem_pic p;
  int ret = mem_pic_init (&p, m);
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
  dot_str (out, p.deco.strings + p.deco.title);
  fputs (", labelloc=t, fontname=\"DejaVu Sans\"];\n"
         "  node [shape=box, style=filled, fixedsize=true, fontname=\"DejaVu Sans\", "
         "fontsize=8, penwidth=0.6];\n",
         out);
  for (uint32_t b = 0; b < m->n_buffers; b++) {
    if (m->first_ns[b] < 0 || (p.row[b] == PS_NONE && p.pool_h <= 0))
      continue;
    double x0, x1, y0, y1;
    buffer_rect (&p, b, &x0, &x1, &y0, &y1);
    char label[300], sz[32];
    snprintf (label, sizeof label, "%s %s", ps_buffer_name (g, b),
              ps_format_bytes ((double) g->buffers[b].bytes, sz, sizeof sz));
    ps_font f8 = { 8, false, false };
    char fit[300];
    fprintf (out, "  b%u [label=", b);
    dot_str (out, x1 - x0 > 30 && y1 - y0 > 10 ? ps_text_fit (label, &f8, x1 - x0 - 8, fit,
                                                               sizeof fit)
                                               : "");
    fputs (", tooltip=", out);
    dot_str (out, label);
    fprintf (out, ", pos=\"%.2f,%.2f!\", width=%.4f, height=%.4f, fillcolor=\"#%06x\"];\n",
             (x0 + x1) / 2, H - (y0 + y1) / 2, (x1 - x0) / 72, (y1 - y0) / 72,
             p.row[b] != PS_NONE ? 0xd0d0d0 : buffer_color (b));
  }
  fputs ("}\n", out);
  mem_pic_free (&p);
  return ferror (out) ? PS_EIO : 0;
}
