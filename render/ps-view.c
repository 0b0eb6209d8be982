/* ps-view.c: what the DAG and plan views share (ps-view.h and
 * ps-view-private.h): options, boxes, styles, merged edges, legends and
 * readable kernel names. */
#include "ps-view.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ps-array.h"
#include "ps-format.h"
#include "ps-view-private.h"

void
ps_view_options_init (ps_view_options *o)
{
  memset (o, 0, sizeof *o);
  o->color = PS_COLOR_BY_KIND;
  o->theme = PS_THEME_LIGHT;
  o->detail_boxes = 1000;
  o->max_boxes = 800;
  o->fast_boxes = 600;
  o->max_edges = 1600;
}

void
ps_view_options_style (const ps_view_options *o, ps_style *out)
{
  ps_style_init (out, o->theme, o->color);
  out->show_critical = !o->hide_critical;
}

void
ps__view_box_init (ps__view_box *b)
{
  memset (b, 0, sizeof *b);
  b->first = b->last = b->crit_first = b->crit_last = PS_NONE;
  b->stream = -1;
  b->stream_min = INT32_MAX;
  b->stream_max = -1;
}

void
ps__view_box_add (ps__view_box *b, uint32_t member, ps_op op, int32_t stream, uint8_t source,
                  double ns, bool critical)
{
  if (b->count == 0) {
    b->first = member;
    b->stream = stream;
  } else if (b->stream != stream) {
    b->stream = -2;
  }
  if (stream >= 0) {
    b->stream_min = stream < b->stream_min ? stream : b->stream_min;
    b->stream_max = stream > b->stream_max ? stream : b->stream_max;
  }
  b->last = member;
  b->count++;
  if ((unsigned) op < PS_OP__COUNT)
    b->kinds[op]++;
  switch ((ps_figure_source) source) {
  case PS_FIGURE_ESTIMATED:
    b->n_estimated++;
    /* fall through */
  case PS_FIGURE_MEASURED:
  case PS_FIGURE_PREDICTED:
    b->n_timed++;
    if (isfinite (ns) && ns > 0)
      b->ns += ns;
    break;
  case PS_FIGURE_UNKNOWN:
    b->n_unknown++;
    break;
  case PS_FIGURE_NOT_RUN:
    b->n_not_run++;
    break;
  default:
    break;
  }
  if (critical) {
    if (b->n_crit++ == 0)
      b->crit_first = member;
    b->crit_last = member;
  }
}

ps_op
ps__view_box_kind (const ps__view_box *b)
{
  for (int k = 0; k < PS_OP__COUNT; k++)
    if (b->kinds[k] == b->count && b->count > 0)
      return (ps_op) k;
  return PS_OP__COUNT;
}

const char *
ps__view_box_time (const ps__view_box *b, char *buf, size_t cap)
{
  char t[PS_FORMAT_MAX];
  buf[0] = '\0';
  bool est = b->n_estimated > 0;
  if (b->n_timed > 0 && b->n_unknown > 0)
    snprintf (buf, cap, "%s + %u unknown", ps_format_duration_marked (b->ns, est, t, sizeof t),
              b->n_unknown);
  else if (b->n_timed > 0)
    ps_format_duration_marked (b->ns, est, buf, cap);
  else if (b->n_unknown > 0)
    snprintf (buf, cap, "unknown");
  else if (b->n_not_run > 0)
    snprintf (buf, cap, "not run");
  return buf;
}

const char *
ps__view_box_streams (const ps__view_box *b, char *buf, size_t cap)
{
  buf[0] = '\0';
  if (b->stream >= 0)
    snprintf (buf, cap, "stream %d", b->stream);
  else if (b->stream_max >= 0 && b->stream_min < b->stream_max)
    snprintf (buf, cap, "streams %d\xe2\x80\x93%d", b->stream_min, b->stream_max);
  return buf;
}

static const char *const op_plural[PS_OP__COUNT] = {
  "kernels", "copies", "memsets", "host callbacks", "event records",
  "event waits", "barriers", "conditionals", "empty", "opaque",
};
static const char *const op_singular[PS_OP__COUNT] = {
  "kernel", "copy", "memset", "host callback", "event record",
  "event wait", "barrier", "conditional", "empty", "opaque",
};

void
ps__view_box_kinds (const ps__view_box *b, char *buf, size_t cap)
{
  size_t n = 0;
  buf[0] = '\0';
  /* Most frequent first, at most three kinds named. */
  bool used[PS_OP__COUNT] = { false };
  for (int shown = 0; shown < 3; shown++) {
    int best = -1;
    for (int k = 0; k < PS_OP__COUNT; k++)
      if (!used[k] && b->kinds[k] && (best < 0 || b->kinds[k] > b->kinds[best]))
        best = k;
    if (best < 0)
      break;
    used[best] = true;
    int w = snprintf (buf + n, cap - n, "%s%u %s", n ? ", " : "", b->kinds[best],
                      b->kinds[best] == 1 ? op_singular[best] : op_plural[best]);
    if (w < 0 || (size_t) w >= cap - n)
      break;
    n += (size_t) w;
  }
}

ps_shape
ps__view_op_shape (ps_op op)
{
  switch (op) {
  case PS_OP_KERNEL:
    return PS_SHAPE_ROUNDED;
  case PS_OP_MEMCPY:
    return PS_SHAPE_PARALLELOGRAM;
  case PS_OP_MEMSET:
    return PS_SHAPE_HEXAGON;
  case PS_OP_HOST:
    return PS_SHAPE_HOUSE;
  case PS_OP_EVENT_RECORD:
    return PS_SHAPE_ELLIPSE;
  case PS_OP_EVENT_WAIT:
  case PS_OP_CONDITIONAL:
    return PS_SHAPE_DIAMOND;
  case PS_OP_BARRIER:
    return PS_SHAPE_BAR;
  case PS_OP_EMPTY:
    return PS_SHAPE_CIRCLE;
  case PS_OP_OPAQUE:
    return PS_SHAPE_OCTAGON;
  default:
    return PS_SHAPE_BOX;
  }
}

void
ps__view_style_node (ps_scene_node *n, const ps__view_box *b, const ps_style *st, uint32_t fill)
{
  ps_op kind = ps__view_box_kind (b);
  n->kind = (uint8_t) kind;
  n->count = b->count;
  n->stream = b->stream >= 0 ? b->stream : -1;
  n->shape = (uint8_t) (b->count > 1 ? PS_SHAPE_STACK : ps__view_op_shape (kind));
  n->fill = fill;
  n->text = ps_color_text_on (fill);
  n->stroke = ps_style_outline (st, fill);
  n->pen = 1;
  n->flags &= (uint8_t) ~(PS_SCENE_CRITICAL | PS_SCENE_BOLD | PS_SCENE_DASHED);
  /* Work that does not run this time: a dashed outline. */
  if (b->n_not_run > 0 && b->n_not_run == b->count)
    n->flags |= PS_SCENE_DASHED;
  if (b->n_crit > 0 && st->show_critical) {
    n->flags |= PS_SCENE_CRITICAL;
    n->stroke = st->pal->critical;
    n->pen = 2.5f;
  }
}

static int
cmp_vedge (const void *a, const void *b)
{
  const ps__view_edge *x = a, *y = b;
  if (x->from != y->from)
    return x->from < y->from ? -1 : 1;
  if (x->to != y->to)
    return x->to < y->to ? -1 : 1;
  return 0;
}

void
ps__view_style_edge (ps_scene_edge *se, uint8_t kind, uint8_t flags, const ps_style *st)
{
  const ps_palette *pal = st->pal;
  se->kind = kind;
  se->flags &= PS_SCENE_DETACHED | PS_SCENE_NO_CONSTRAINT; /* the layout's */
  se->pen = 1;
  switch ((ps_scene_edge_kind) kind) {
  case PS_EDGE_VIEW_CROSS:
    se->color = pal->cross;
    se->flags |= PS_SCENE_DASHED;
    se->pen = 1.3f;
    break;
  case PS_EDGE_VIEW_EVENT:
    se->color = pal->event;
    se->flags |= PS_SCENE_DASHED;
    se->pen = 1.4f;
    break;
  case PS_EDGE_VIEW_ORDER:
    se->color = pal->edge_order;
    break;
  default:
    se->color = pal->edge;
    break;
  }
  if (se->count > 1)
    se->pen += (float) fmin (3.0, log10 ((double) se->count));
  if ((flags & PS_SCENE_CRITICAL) && st->show_critical) {
    se->flags |= PS_SCENE_CRITICAL;
    se->color = pal->critical;
    se->pen = fmaxf (se->pen, 2.5f);
  }
}

int
ps__view_add_edges (ps_scene *s, ps__view_edge *e, size_t n, const ps_style *st)
{
  ps_array_sort (e, n, sizeof *e, cmp_vedge);
  for (size_t i = 0; i < n;) {
    size_t j = i;
    uint32_t count = 0;
    uint8_t kind = e[i].kind, flags = 0;
    for (; j < n && e[j].from == e[i].from && e[j].to == e[i].to; j++) {
      count++;
      flags |= e[j].flags;
      if (e[j].kind == PS_EDGE_VIEW_CROSS || e[j].kind == PS_EDGE_VIEW_EVENT)
        kind = e[j].kind;
    }
    if (e[i].from != e[i].to) {
      uint32_t idx;
      int ret = ps_scene_add_edge (s, e[i].from, e[i].to, &idx);
      if (ret < 0)
        return ret;
      ps_scene_edge *se = &s->edges[idx];
      se->count = count;
      ps__view_style_edge (se, kind, flags, st);
      if (count > 1) {
        int r = ps_scene_strf (s, &se->label, "\xc3\x97%u", count);
        if (r < 0)
          return r;
      }
    }
    i = j;
  }
  return 0;
}

int
ps__view_legend (ps_scene *s, const ps_style *st, uint64_t streams, uint32_t ops,
                 uint32_t edge_kinds, double max_ns, bool unknown, bool not_run)
{
  const ps_palette *pal = st->pal;
  int ret = 0;
  char buf[64];
  s->n_legend = 0;
  s->theme = (uint8_t) st->theme;
  if (st->color == PS_COLOR_BY_STREAM) {
    int shown = 0;
    for (int i = 0; i < 64 && ret == 0; i++)
      if (streams >> i & 1) {
        if (shown++ == 12) {
          ret = ps_scene_add_legend (s, PS_LEGEND_SWATCH, "more streams", pal->unknown,
                                     ps_style_outline (st, pal->unknown), 0);
          break;
        }
        snprintf (buf, sizeof buf, "stream %d", i);
        uint32_t c = ps_style_stream_color (st, i);
        ret = ps_scene_add_legend (s, PS_LEGEND_SWATCH, buf, c, ps_style_outline (st, c), 0);
      }
  } else if (st->color == PS_COLOR_BY_DURATION) {
    ret = ps_style_add_duration_legend (s, st, max_ns, unknown);
  } else if (st->color == PS_COLOR_BY_GROUP) {
    uint32_t c = ps_style_group_color (st, 0);
    ret = ps_scene_add_legend (s, PS_LEGEND_SWATCH, "fused group (one colour each)", c,
                               ps_style_outline (st, c), 0);
    if (ret == 0)
      ret = ps_scene_add_legend (s, PS_LEGEND_SWATCH, "not fused", pal->unknown,
                                 ps_style_outline (st, pal->unknown), 0);
  }
  /* Shapes: one per op present (coloured when colouring by kind). */
  for (int k = 0; k < PS_OP__COUNT && ret == 0; k++)
    if (ops >> k & 1) {
      uint32_t c = st->color == PS_COLOR_BY_KIND ? ps_style_kind_color (st, (ps_op) k)
                                                 : pal->background;
      ret = ps_scene_add_legend (s, PS_LEGEND_SHAPE, op_singular[k], c, ps_style_outline (st, c),
                                 (uint8_t) ps__view_op_shape ((ps_op) k));
    }
  if (ret == 0 && (ops >> PS_OP__COUNT & 1))
    ret = ps_scene_add_legend (s, PS_LEGEND_SHAPE, "several nodes (fused group, chain)",
                               pal->surface, ps_style_outline (st, pal->surface), PS_SHAPE_STACK);
  if (ret == 0 && not_run)
    ret = ps_scene_add_legend (s, PS_LEGEND_SWATCH, "not run (a branch `assume` leaves out)",
                               pal->not_run, ps_style_outline (st, pal->not_run), 0);
  static const char *const edge_names[PS_EDGE_VIEW__COUNT] = {
    "dependency", "dependency across streams (event)", "stream order",
    "event record \xe2\x86\x92 wait"
  };
  for (int k = 0; k < PS_EDGE_VIEW__COUNT && ret == 0; k++)
    if (edge_kinds >> k & 1) {
      ps_scene_edge e;
      memset (&e, 0, sizeof e);
      ps__view_style_edge (&e, (uint8_t) k, 0, st);
      ret = ps_scene_add_legend (s, PS_LEGEND_LINE, edge_names[k], 0, e.color,
                                 e.flags & PS_SCENE_DASHED);
    }
  if (ret == 0 && (edge_kinds >> 7 & 1) && st->show_critical)
    ret = ps_scene_add_legend (s, PS_LEGEND_LINE, PS_CRITICAL_LEGEND, 0, pal->critical,
                               PS_SCENE_CRITICAL);
  return ret;
}
