/* ps-timeline-draw.c: the timeline picture and its pinned DOT form (see
 * ps-timeline-draw.h). */
#include "ps-timeline-draw.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ps-view.h"
#include "ps-draw.h"
#include "ps-format.h"

#define LANE_H 30.0
#define LANE_GAP 4.0
#define AXIS_H 24.0
#define TINY 1.0 /* spans narrower than this (points) are merged */
#define MAX_FLOWS 4000

uint32_t
ps_color_span_kind (ps_span_kind k)
{
  switch (k) {
  case PS_SPAN_KERNEL:
    return ps_color_kind (PS_OP_KERNEL);
  case PS_SPAN_MEMCPY:
    return ps_color_kind (PS_OP_MEMCPY);
  case PS_SPAN_MEMSET:
    return ps_color_kind (PS_OP_MEMSET);
  case PS_SPAN_HOST:
    return ps_color_kind (PS_OP_HOST);
  default:
    return 0xd9d9d9;
  }
}

double
ps_nice_step (double t_max, int target)
{
  if (!(t_max > 0) || !isfinite (t_max))
    return 1;
  double raw = t_max / (target > 0 ? target : 8);
  double p = pow (10, floor (log10 (raw)));
  double m = raw / p;
  return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
}

void
ps_draw_time_axis (ps_canvas *c, double x0, double y, double width, double t_max,
                   double grid_bottom)
{
  ps_font f = { 8.5, false, false };
  double step = ps_nice_step (t_max, (int) (width / 110) > 2 ? (int) (width / 110) : 2);
  /* One unit for the whole axis, chosen by its largest value. */
  double div = t_max >= 1e9 ? 1e9 : t_max >= 1e6 ? 1e6 : t_max >= 1e3 ? 1e3 : 1;
  const char *unit = div == 1e9 ? "s" : div == 1e6 ? "ms" : div == 1e3 ? "\xc2\xb5s" : "ns";
  double rel = step / div;
  int decimals = rel >= 1 ? 0 : rel >= 0.1 ? 1 : rel >= 0.01 ? 2 : 3;
  ps_paint axis = ps_paint_stroke (0x555555, 0.8);
  ps_paint grid = ps_paint_stroke (0xdddddd, 0.6);
  ps_canvas_line (c, x0, y, x0 + width, y, &axis);
  for (int i = 0; i < 1000; i++) {
    double t = i * step;
    if (t > t_max * 1.0000001)
      break;
    double x = x0 + (t_max > 0 ? t / t_max * width : 0);
    ps_canvas_line (c, x, y, x, y - 4, &axis);
    if (grid_bottom > y)
      ps_canvas_line (c, x, y, x, grid_bottom, &grid);
    char buf[48];
    if (i == 0)
      snprintf (buf, sizeof buf, "0");
    else
      snprintf (buf, sizeof buf, "%.*f %s", decimals, t / div, unit);
    ps_canvas_text (c, x, y - 7, buf, &f, i == 0 ? PS_ALIGN_LEFT : PS_ALIGN_CENTER, 0x333333, 0);
  }
}

typedef struct tl_pic {
  const ps_timeline *tl;
  const ps_diagnosis *dg;
  ps_scene deco; /* title, note and legend */
  ps_frame frame;
  double gutter, plot_w, t_max;
  uint8_t *critical; /* per span */
} tl_pic;

static double
tx (const tl_pic *p, double t)
{
  double x = p->t_max > 0 ? t / p->t_max * p->plot_w : 0;
  return p->frame.diagram_x + p->gutter + fmax (0, fmin (p->plot_w, x));
}

static double
lane_y (const tl_pic *p, uint32_t stream)
{
  return p->frame.diagram_y + AXIS_H + stream * (LANE_H + LANE_GAP);
}

static void
draw_span (const tl_pic *p, ps_canvas *c, uint32_t i)
{
  const ps_timeline *tl = p->tl;
  const ps_span *s = &tl->spans[i];
  double x0 = tx (p, s->start_ns), x1 = tx (p, s->end_ns);
  double y = lane_y (p, s->stream) + 3;
  uint32_t fill = ps_color_span_kind ((ps_span_kind) s->kind);
  ps_paint pt = ps_paint_both (fill, ps_color_darker (fill), 0.6);
  if (p->critical[i]) {
    pt.stroke_rgb = PS_COLOR_CRITICAL;
    pt.width = 1.6;
  }
  char label[256], title[400], a[32], b[32], d[32];
  ps_timeline_span_label (tl, i, label, sizeof label);
  snprintf (title, sizeof title, "%s: %s \xe2\x80\x93 %s (%s)%s", label,
            ps_format_duration (s->start_ns, a, sizeof a),
            ps_format_duration (s->end_ns, b, sizeof b),
            ps_format_duration (s->end_ns - s->start_ns, d, sizeof d),
            p->critical[i] ? ", critical path" : "");
  ps_canvas_begin_group (c, "span", title);
  ps_canvas_rect (c, x0, y, fmax (x1 - x0, TINY), LANE_H - 6, 1.5, &pt);
  if (x1 - x0 > 24) {
    ps_font f = { 8.5, p->critical[i] != 0, false };
    ps_canvas_text (c, x0 + 3, y + (LANE_H - 6) / 2 + 3, label, &f, PS_ALIGN_LEFT,
                    ps_color_text_on (fill), x1 - x0 - 6);
  }
  ps_canvas_end_group (c);
}

/* Spans by_stream[j0 .. j0 + n) of a lane, too short to draw apart. */
static void
draw_merged (const tl_pic *p, ps_canvas *c, uint32_t stream, double x0, double x1, uint32_t j0,
             uint32_t n, bool critical)
{
  double y = lane_y (p, stream) + 3;
  ps_paint pt = ps_paint_both (0x9fb7cc, 0x5f7f9c, 0.4);
  if (critical) {
    pt.stroke_rgb = PS_COLOR_CRITICAL;
    pt.width = 1.2;
  }
  char title[1024], label[256];
  size_t k = (size_t) snprintf (title, sizeof title, "%u short span%s:", n, n == 1 ? "" : "s");
  for (uint32_t i = 0; i < n && i < 12 && k < sizeof title; i++) {
    ps_timeline_span_label (p->tl, p->tl->by_stream[j0 + i], label, sizeof label);
    k += (size_t) snprintf (title + k, sizeof title - k, "%s %s", i ? "," : "", label);
  }
  if (n > 12 && k < sizeof title)
    snprintf (title + k, sizeof title - k, " and %u more", n - 12);
  ps_canvas_begin_group (c, "spans", title);
  ps_canvas_rect (c, x0, y, fmax (x1 - x0, TINY), LANE_H - 6, 0, &pt);
  ps_canvas_end_group (c);
}

static void
draw_timeline (ps_canvas *c, void *ctx)
{
  tl_pic *p = ctx;
  const ps_timeline *tl = p->tl;
  ps_paint bg = ps_paint_fill (0xffffff);
  ps_canvas_rect (c, 0, 0, p->frame.width, p->frame.height, 0, &bg);
  ps_draw_decorations (&p->deco, &p->frame, c);
  double px0 = p->frame.diagram_x + p->gutter;
  double bottom = lane_y (p, tl->n_streams);

  /* Lanes and their labels. */
  ps_font lf = { 9.5, true, false }, sf = { 7.5, false, false };
  for (uint32_t k = 0; k < tl->n_streams; k++) {
    double y = lane_y (p, k);
    ps_paint lane = ps_paint_fill (k % 2 ? 0xf4f4f4 : 0xfafafa);
    ps_canvas_rect (c, px0, y, p->plot_w, LANE_H, 0, &lane);
    char name[64], stats[96], pc[16];
    ps_timeline_stream_label (tl, k, name, sizeof name);
    ps_canvas_text (c, p->frame.diagram_x, y + 13, name, &lf, PS_ALIGN_LEFT, 0x222222,
                    p->gutter - 6);
    if (p->dg && k < p->dg->n_streams && p->t_max > 0) {
      snprintf (pc, sizeof pc, "%.0f%%", 100 * p->dg->streams[k].busy_ns / p->t_max);
      snprintf (stats, sizeof stats, "busy %s", pc);
      if (p->dg->streams[k].stalled_ns > 0)
        snprintf (stats + strlen (stats), sizeof stats - strlen (stats), ", stalled %.0f%%",
                  100 * p->dg->streams[k].stalled_ns / p->t_max);
      ps_canvas_text (c, p->frame.diagram_x, y + 24, stats, &sf, PS_ALIGN_LEFT, 0x555555,
                      p->gutter - 6);
    }
  }
  ps_draw_time_axis (c, px0, p->frame.diagram_y + AXIS_H - 4, p->plot_w, p->t_max, bottom);

  /* Stalls under the spans. */
  ps_canvas_begin_group (c, "stalls", NULL);
  for (uint32_t i = 0; i < tl->n_stalls; i++) {
    const ps_stall *st = &tl->stalls[i];
    if (st->stream >= tl->n_streams)
      continue;
    double x0 = tx (p, st->start_ns), x1 = tx (p, st->end_ns);
    double y = lane_y (p, st->stream) + 3, h = LANE_H - 6;
    char title[300], d[32];
    const char *what = st->waiting_for < tl->n_spans
                         ? ps_timeline_span_name (tl, st->waiting_for) : "an event";
    snprintf (title, sizeof title, "stalled %s waiting for %s",
              ps_format_duration (st->end_ns - st->start_ns, d, sizeof d), what);
    ps_canvas_begin_group (c, "stall", title);
    ps_paint fill = ps_paint_both (0xfde0dd, PS_COLOR_CRITICAL, 0.6);
    fill.stroke_alpha = 0.6;
    ps_canvas_rect (c, x0, y, fmax (x1 - x0, 0.5), h, 0, &fill);
    ps_canvas_hatch (c, x0, y, x1 - x0, h, 5, PS_COLOR_CRITICAL, 0.7);
    if (x1 - x0 > 60) {
      ps_font f = { 8, false, false };
      char label[300];
      snprintf (label, sizeof label, "waits for %s", what);
      ps_canvas_text (c, x0 + 3, y + h / 2 + 3, label, &f, PS_ALIGN_LEFT, 0x8b1a1a, x1 - x0 - 6);
    }
    ps_canvas_end_group (c);
  }
  ps_canvas_end_group (c);

  /* Spans, lane by lane in start order, merging those narrower than a
   * point with their neighbours. */
  ps_canvas_begin_group (c, "spans", NULL);
  for (uint32_t k = 0; k < tl->n_streams; k++) {
    double m0 = 0, m1 = -1;
    uint32_t mn = 0, mj = 0;
    bool mcrit = false;
    for (uint32_t j = tl->stream_off[k]; j < tl->stream_off[k + 1]; j++) {
      uint32_t i = tl->by_stream[j];
      const ps_span *s = &tl->spans[i];
      double x0 = tx (p, s->start_ns), x1 = tx (p, s->end_ns);
      bool tiny = x1 - x0 < TINY;
      if (mn > 0 && (!tiny || x0 > m1 + TINY)) {
        draw_merged (p, c, k, m0, m1, mj, mn, mcrit);
        mn = 0;
        mcrit = false;
      }
      if (!tiny) {
        draw_span (p, c, i);
        continue;
      }
      if (mn == 0) {
        m0 = x0;
        mj = j;
      }
      m1 = fmax (mn ? m1 : x1, x1);
      mn++;
      mcrit = mcrit || p->critical[i];
    }
    if (mn > 0)
      draw_merged (p, c, k, m0, m1, mj, mn, mcrit);
  }
  ps_canvas_end_group (c);

  /* Event arrows: record -> wait. */
  ps_canvas_begin_group (c, "events", NULL);
  uint32_t drawn = 0;
  for (uint32_t i = 0; i < tl->n_flows && drawn < MAX_FLOWS; i++) {
    const ps_flow *f = &tl->flows[i];
    if (f->from_stream >= tl->n_streams || f->to_stream >= tl->n_streams
        || f->from_stream == f->to_stream)
      continue;
    if (tl->n_flows > MAX_FLOWS && f->stall == PS_NONE)
      continue; /* too many to draw: keep those that stalled */
    double x0 = tx (p, f->from_ns), x1 = tx (p, f->to_ns);
    double y0 = lane_y (p, f->from_stream) + LANE_H / 2;
    double y1 = lane_y (p, f->to_stream) + (f->to_stream > f->from_stream ? 3 : LANE_H - 3);
    ps_paint pt = ps_paint_stroke (PS_COLOR_EVENT, 1.0);
    pt.stroke_alpha = 0.85;
    ps_canvas_line (c, x0, y0, x1, y1, &pt);
    double dx = x1 - x0, dy = y1 - y0, len = hypot (dx, dy);
    if (len > 1) {
      dx /= len;
      dy /= len;
      ps_pt tri[3] = { { x1, y1 },
                       { x1 - dx * 6 - dy * 2.6, y1 - dy * 6 + dx * 2.6 },
                       { x1 - dx * 6 + dy * 2.6, y1 - dy * 6 - dx * 2.6 } };
      ps_paint ap = ps_paint_fill (PS_COLOR_EVENT);
      ps_canvas_path (c, tri, 3, true, false, &ap);
    }
    drawn++;
  }
  ps_canvas_end_group (c);
}

static int
tl_pic_init (tl_pic *p, const ps_timeline *tl, const ps_diagnosis *dg,
             const ps_timeline_picture_options *o)
{
  memset (p, 0, sizeof *p);
  p->tl = tl;
  p->dg = dg;
  ps_scene_init (&p->deco);
  p->critical = calloc ((size_t) tl->n_spans + 1, 1);
  if (!p->critical)
    return PS_ENOMEM;
  if (dg)
    for (uint32_t i = 0; i < dg->n_critical; i++)
      if (dg->critical[i] < tl->n_spans)
        p->critical[dg->critical[i]] = 1;
  p->t_max = tl->makespan_ns > 0 ? tl->makespan_ns : 1;
  p->plot_w = o && o->width > 0 ? o->width : 1100;
  ps_font lf = { 9.5, true, false }, sf = { 7.5, false, false };
  p->gutter = 70;
  if (dg)
    p->gutter = ps_text_width ("busy 100%, stalled 100%", &sf) + 10;
  for (uint32_t k = 0; k < tl->n_streams; k++) {
    char name[64];
    ps_timeline_stream_label (tl, k, name, sizeof name);
    p->gutter = fmax (p->gutter, ps_text_width (name, &lf) + 14);
  }
  p->gutter = fmin (p->gutter, 220);
  ps_scene *s = &p->deco;
  char t[32], title[512];
  const char *gname = tl->graph && tl->graph->name && *tl->graph->name ? tl->graph->name
                                                                        : "trace";
  if (o && o->title)
    snprintf (title, sizeof title, "%s", o->title);
  else
    snprintf (title, sizeof title, "%s \xe2\x80\x94 timeline (%s%s%s)", gname,
              ps_timeline_source_name (tl->source), tl->device[0] ? " on " : "", tl->device);
  int ret = ps_scene_str (s, title, &s->title);
  if (ret == 0)
    ret = ps_scene_strf (s, &s->subtitle,
                         "makespan %s; %u span%s on %u stream%s, %u stall%s, %u event arrow%s%s",
                         ps_format_duration (tl->makespan_ns, t, sizeof t), tl->n_spans,
                         tl->n_spans == 1 ? "" : "s", tl->n_streams, tl->n_streams == 1 ? "" : "s",
                         tl->n_stalls, tl->n_stalls == 1 ? "" : "s", tl->n_flows,
                         tl->n_flows == 1 ? "" : "s",
                         dg && dg->n_critical ? "; critical path outlined in red" : "");
  static const ps_span_kind kinds[] = { PS_SPAN_KERNEL, PS_SPAN_MEMCPY, PS_SPAN_MEMSET,
                                        PS_SPAN_HOST, PS_SPAN_OTHER };
  bool present[PS_SPAN__COUNT] = { false };
  for (uint32_t i = 0; i < tl->n_spans; i++)
    if (tl->spans[i].kind < PS_SPAN__COUNT)
      present[tl->spans[i].kind] = true;
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0] && ret == 0; i++)
    if (present[kinds[i]]) {
      uint32_t col = ps_color_span_kind (kinds[i]);
      ret = ps_scene_add_legend (s, PS_LEGEND_SWATCH, ps_span_kind_name (kinds[i]), col,
                                 ps_color_darker (col), 0);
    }
  bool merged = false;
  for (uint32_t i = 0; i < tl->n_spans && !merged; i++)
    merged = (tl->spans[i].end_ns - tl->spans[i].start_ns) / p->t_max * p->plot_w < TINY;
  if (ret == 0 && merged)
    ret = ps_scene_add_legend (s, PS_LEGEND_SWATCH, "merged short spans", 0x9fb7cc, 0x5f7f9c, 0);
  if (ret == 0 && tl->n_stalls) {
    ret = ps_scene_add_legend (s, PS_LEGEND_SWATCH, "stall at an event wait", 0xfde0dd,
                               PS_COLOR_CRITICAL, 0);
    if (ret == 0)
      s->legend[s->n_legend - 1].flags = PS_SCENE_DASHED; /* drawn hatched */
  }
  if (ret == 0 && tl->n_flows)
    ret = ps_scene_add_legend (s, PS_LEGEND_LINE, "event record \xe2\x86\x92 wait", 0,
                               PS_COLOR_EVENT, 0);
  if (ret == 0 && dg && dg->n_critical)
    ret = ps_scene_add_legend (s, PS_LEGEND_LINE, "critical path", 0, PS_COLOR_CRITICAL,
                               PS_SCENE_CRITICAL);
  double h = AXIS_H + tl->n_streams * (LANE_H + LANE_GAP) + 4;
  ps_frame_compute (s, p->gutter + p->plot_w + 8, h, &p->frame);
  return ret;
}

static void
tl_pic_free (tl_pic *p)
{
  ps_scene_free (&p->deco);
  free (p->critical);
}

static int
check (const ps_timeline *tl)
{
  return tl->stream_off && tl->by_stream ? 0 : PS_EINVAL; /* needs ps_timeline_finish */
}

int
ps_timeline_write_svg (const ps_timeline *tl, const ps_diagnosis *dg,
                       const ps_timeline_picture_options *o, FILE *out)
{
  tl_pic p;
  int ret = check (tl);
  if (ret < 0)
    return ret;
  ret = tl_pic_init (&p, tl, dg, o);
  if (ret == 0)
    ret = ps_picture_write_svg (p.frame.width, p.frame.height, draw_timeline, &p, out);
  tl_pic_free (&p);
  return ret;
}

int
ps_timeline_write_png (const ps_timeline *tl, const ps_diagnosis *dg,
                       const ps_timeline_picture_options *o, FILE *out)
{
  tl_pic p;
  int ret = check (tl);
  if (ret < 0)
    return ret;
  ret = tl_pic_init (&p, tl, dg, o);
  if (ret == 0)
    ret = ps_picture_write_png (p.frame.width, p.frame.height, draw_timeline, &p, out);
  tl_pic_free (&p);
  return ret;
}

/* DOT text: quotes and backslashes escaped, control characters dropped. */
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
ps_timeline_write_dot (const ps_timeline *tl, const ps_diagnosis *dg, FILE *out)
{
  tl_pic p;
  int ret = check (tl);
  if (ret == 0)
    ret = tl_pic_init (&p, tl, dg, NULL);
  if (ret < 0)
    return ret;
  /* Graphviz's y axis points up: flip against the picture's height. */
  double H = p.frame.height;
  fputs ("// planscope timeline: positions are pinned; draw it as laid out with\n"
         "//   neato -n2 -Tsvg timeline.dot > timeline.svg\n"
         "digraph timeline {\n  graph [label=",
         out);
  dot_str (out, p.deco.strings + p.deco.title);
  fputs (", labelloc=t, fontname=\"DejaVu Sans\", splines=line, outputorder=edgesfirst];\n"
         "  node [shape=box, style=filled, fixedsize=true, fontname=\"DejaVu Sans\", "
         "fontsize=8, penwidth=0.6];\n  edge [color=\"#9c27b0\", arrowsize=0.5];\n",
         out);
  for (uint32_t k = 0; k < tl->n_streams; k++) {
    char name[64];
    ps_timeline_stream_label (tl, k, name, sizeof name);
    fprintf (out, "  lane%u [shape=plaintext, style=\"\", fixedsize=false, label=", k);
    dot_str (out, name);
    fprintf (out, ", pos=\"%.2f,%.2f!\"];\n", p.frame.diagram_x + p.gutter / 2,
             H - (lane_y (&p, k) + LANE_H / 2));
  }
  for (uint32_t i = 0; i < tl->n_spans; i++) {
    const ps_span *s = &tl->spans[i];
    if (s->stream >= tl->n_streams)
      continue;
    double x0 = tx (&p, s->start_ns), x1 = tx (&p, s->end_ns);
    double w = fmax (x1 - x0, 0.5);
    char label[256];
    ps_timeline_span_label (tl, i, label, sizeof label);
    uint32_t fill = ps_color_span_kind ((ps_span_kind) s->kind);
    /* Labels cut to the box, as in the pictures (8 pt in the DOT too). */
    ps_font f8 = { 8, false, false };
    char fit[300];
    fprintf (out, "  s%u [label=", i);
    dot_str (out, w > 24 ? ps_text_fit (label, &f8, w - 8, fit, sizeof fit) : "");
    fputs (", tooltip=", out);
    dot_str (out, label);
    fprintf (out, ", pos=\"%.2f,%.2f!\", width=%.4f, height=%.4f, fillcolor=\"#%06x\"%s];\n",
             x0 + w / 2, H - (lane_y (&p, s->stream) + LANE_H / 2), w / 72, (LANE_H - 6) / 72,
             fill, p.critical[i] ? ", color=\"#d62728\", penwidth=1.6" : "");
  }
  for (uint32_t i = 0; i < tl->n_stalls; i++) {
    const ps_stall *st = &tl->stalls[i];
    if (st->stream >= tl->n_streams)
      continue;
    double x0 = tx (&p, st->start_ns), x1 = tx (&p, st->end_ns);
    double w = fmax (x1 - x0, 0.5);
    fprintf (out, "  stall%u [label=\"\", tooltip=\"stall\", style=\"filled,dashed\", "
                  "fillcolor=\"#fde0dd\", color=\"#d62728\", pos=\"%.2f,%.2f!\", width=%.4f, "
                  "height=%.4f];\n",
             i, x0 + w / 2, H - (lane_y (&p, st->stream) + LANE_H / 2), w / 72,
             (LANE_H - 6) / 72);
  }
  for (uint32_t i = 0; i < tl->n_flows; i++) {
    const ps_flow *f = &tl->flows[i];
    if (f->from_span < tl->n_spans && f->to_span < tl->n_spans && f->from_span != f->to_span)
      fprintf (out, "  s%u -> s%u [constraint=false];\n", f->from_span, f->to_span);
  }
  fputs ("}\n", out);
  tl_pic_free (&p);
  return ferror (out) ? PS_EIO : 0;
}
