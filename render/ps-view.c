/* ps-view.c: what the DAG and plan views share (ps-view.h and
 * ps-view-private.h): options, boxes, styles, merged edges, legends and
 * readable kernel names. */
#include "ps-view.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ps-format.h"
#include "ps-view-private.h"

void
ps_view_options_init (ps_view_options *o)
{
  memset (o, 0, sizeof *o);
  o->color = PS_COLOR_BY_KIND;
  o->detail_boxes = 1000;
  o->max_boxes = 800;
  o->fast_boxes = 600;
  o->max_edges = 1600;
}

int
ps_color_by_parse (const char *name, ps_color_by *out)
{
  static const char *const names[] = { "kind", "stream", "duration" };
  for (int i = 0; i < 3; i++)
    if (strcmp (name, names[i]) == 0) {
      *out = (ps_color_by) i;
      return 0;
    }
  return PS_EINVAL;
}

/* Reads a <source-name>: a decimal length and that many bytes. */
static const char *
source_name (const char *p, const char **name, size_t *len)
{
  size_t n = 0;
  if (*p < '0' || *p > '9')
    return NULL;
  while (*p >= '0' && *p <= '9' && n < 100000)
    n = n * 10 + (size_t) (*p++ - '0');
  if (strnlen (p, n) < n)
    return NULL;
  *name = p;
  *len = n;
  return p + n;
}

const char *
ps_short_symbol (const char *sym, char *buf, size_t cap)
{
  if (cap == 0)
    return "";
  buf[0] = '\0';
  if (strncmp (sym, "_Z", 2) != 0)
    return sym;
  const char *p = sym + 2;
  size_t out = 0;
  bool nested = *p == 'N';
  if (nested) {
    p++;
    while (*p == 'K' || *p == 'V' || *p == 'r')
      p++; /* cv-qualifiers of a member function */
  }
  for (int parts = 0; p && *p; parts++) {
    if (*p == 'S' && p[1] == 't') { /* std:: */
      p += 2;
      if (out + 6 < cap) {
        memcpy (buf + out, "std::", 5);
        out += 5;
      }
      continue;
    }
    const char *name;
    size_t len;
    const char *next = source_name (p, &name, &len);
    if (!next)
      break;
    if (parts > 0 && out + 2 < cap && out > 0 && buf[out - 1] != ':') {
      memcpy (buf + out, "::", 2);
      out += 2;
    }
    if (out + len + 1 >= cap)
      len = cap - out - 1;
    memcpy (buf + out, name, len);
    out += len;
    p = next;
    if (!nested)
      break;
    if (*p == 'I' || *p == 'E' || *p == 'C' || *p == 'D')
      break; /* template arguments, end, constructor, destructor */
  }
  buf[out] = '\0';
  return out ? buf : sym;
}

void
ps__view_box_init (ps__view_box *b)
{
  memset (b, 0, sizeof *b);
  b->first = b->last = b->crit_first = b->crit_last = PS_NONE;
  b->stream = -1;
}

void
ps__view_box_add (ps__view_box *b, uint32_t member, ps_op op, int32_t stream, double ns,
                  bool critical)
{
  if (b->count == 0) {
    b->first = member;
    b->stream = stream;
  } else if (b->stream != stream) {
    b->stream = -2;
  }
  b->last = member;
  b->count++;
  if ((unsigned) op < PS_OP__COUNT)
    b->kinds[op]++;
  if (ns > 0 && isfinite (ns))
    b->ns += ns;
  if (critical) {
    if (b->n_crit++ == 0)
      b->crit_first = member;
    b->crit_last = member;
  }
}

/* The op of all members, or PS_OP__COUNT when they differ. */
static ps_op
vbox_kind (const ps__view_box *b)
{
  for (int k = 0; k < PS_OP__COUNT; k++)
    if (b->kinds[k] == b->count && b->count > 0)
      return (ps_op) k;
  return PS_OP__COUNT;
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

/* The shape a single node of op gets. */
static ps_shape
op_shape (ps_op op)
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
ps__view_style_node (ps_scene_node *n, const ps__view_box *b, ps_color_by color, double max_ns)
{
  ps_op kind = vbox_kind (b);
  n->kind = (uint8_t) kind;
  n->count = b->count;
  n->stream = b->stream >= 0 ? b->stream : -1;
  n->shape = (uint8_t) (b->count > 1 ? PS_SHAPE_STACK : op_shape (kind));
  uint32_t fill;
  switch (color) {
  case PS_COLOR_BY_STREAM:
    fill = ps_color_stream (b->stream >= 0 ? b->stream : -1);
    break;
  case PS_COLOR_BY_DURATION: {
    /* A log scale over three decades below the longest box. */
    double t = max_ns > 0 && b->ns > 0 ? 1 + log10 (b->ns / max_ns) / 3 : 0;
    fill = ps_color_heat (t);
    break;
  }
  default:
    fill = ps_color_kind (kind);
    break;
  }
  n->fill = fill;
  n->stroke = ps_color_darker (fill);
  n->pen = 1;
  if (b->n_crit > 0) {
    n->flags |= PS_SCENE_CRITICAL | PS_SCENE_BOLD;
    n->stroke = PS_COLOR_CRITICAL;
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

int
ps__view_add_edges (ps_scene *s, ps__view_edge *e, size_t n)
{
  qsort (e, n, sizeof *e, cmp_vedge);
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
      se->kind = kind;
      se->count = count;
      switch ((ps_scene_edge_kind) kind) {
      case PS_EDGE_VIEW_CROSS:
        se->color = PS_COLOR_CROSS;
        se->flags |= PS_SCENE_DASHED;
        se->pen = 1.3f;
        break;
      case PS_EDGE_VIEW_EVENT:
        se->color = PS_COLOR_EVENT;
        se->flags |= PS_SCENE_DASHED;
        se->pen = 1.4f;
        break;
      case PS_EDGE_VIEW_ORDER:
        se->color = 0x8c8c8c;
        break;
      default:
        se->color = 0x5a5a5a;
        break;
      }
      if (count > 1) {
        se->pen += (float) fmin (3.0, log10 ((double) count));
        int r = ps_scene_strf (s, &se->label, "\xc3\x97%u", count);
        if (r < 0)
          return r;
      }
      if (flags & PS_SCENE_CRITICAL) {
        se->flags |= PS_SCENE_CRITICAL;
        se->color = PS_COLOR_CRITICAL;
        se->pen = fmaxf (se->pen, 2.5f);
      }
    }
    i = j;
  }
  return 0;
}

int
ps__view_legend (ps_scene *s, ps_color_by color, uint64_t streams, uint32_t ops,
                 uint32_t edge_kinds, double max_ns)
{
  int ret = 0;
  char buf[64], a[32];
  if (color == PS_COLOR_BY_STREAM) {
    int shown = 0;
    for (int i = 0; i < 64 && ret == 0; i++)
      if (streams >> i & 1) {
        if (shown++ == 12) {
          ret = ps_scene_add_legend (s, PS_LEGEND_SWATCH, "more streams", 0xe8e8e8, 0x888888,
                                     0);
          break;
        }
        snprintf (buf, sizeof buf, "stream %d", i);
        uint32_t c = ps_color_stream (i);
        ret = ps_scene_add_legend (s, PS_LEGEND_SWATCH, buf, c, ps_color_darker (c), 0);
      }
  } else if (color == PS_COLOR_BY_DURATION) {
    static const double frac[4] = { 0.001, 0.01, 0.1, 1.0 };
    for (int i = 0; i < 4 && ret == 0; i++) {
      snprintf (buf, sizeof buf, "%s%s", i == 0 ? "\xe2\x89\xa4 " : "",
                ps_format_duration (max_ns * frac[i], a, sizeof a));
      uint32_t c = ps_color_heat (i / 3.0);
      ret = ps_scene_add_legend (s, PS_LEGEND_SWATCH, buf, c, ps_color_darker (c), 0);
    }
  }
  /* Shapes: one per op present (coloured when colouring by kind). */
  for (int k = 0; k < PS_OP__COUNT && ret == 0; k++)
    if (ops >> k & 1) {
      uint32_t c = color == PS_COLOR_BY_KIND ? ps_color_kind ((ps_op) k) : 0xffffff;
      ret = ps_scene_add_legend (s, PS_LEGEND_SHAPE, op_singular[k], c, ps_color_darker (c),
                                 (uint8_t) op_shape ((ps_op) k));
    }
  if (ret == 0 && (ops >> PS_OP__COUNT & 1))
    ret = ps_scene_add_legend (s, PS_LEGEND_SHAPE, "several nodes (fused group, chain)",
                               0xeeeeee, 0x777777, PS_SHAPE_STACK);
  static const char *const edge_names[PS_EDGE_VIEW__COUNT] = {
    "dependency", "dependency across streams (event)", "stream order",
    "event record \xe2\x86\x92 wait"
  };
  static const uint32_t edge_color[PS_EDGE_VIEW__COUNT] = { 0x5a5a5a, PS_COLOR_CROSS, 0x8c8c8c,
                                                            PS_COLOR_EVENT };
  for (int k = 0; k < PS_EDGE_VIEW__COUNT && ret == 0; k++)
    if (edge_kinds >> k & 1)
      ret = ps_scene_add_legend (s, PS_LEGEND_LINE, edge_names[k], 0, edge_color[k],
                                 k == PS_EDGE_VIEW_CROSS || k == PS_EDGE_VIEW_EVENT
                                   ? PS_SCENE_DASHED : 0);
  if (ret == 0 && (edge_kinds >> 7 & 1))
    ret = ps_scene_add_legend (s, PS_LEGEND_LINE, "critical path", 0, PS_COLOR_CRITICAL,
                               PS_SCENE_CRITICAL);
  return ret;
}
