/* ps-style.c: palettes, colour-by modes, the duration scale and its
 * legend (see ps-style.h). */
#include "ps-style.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ps-format.h"
#include "ps-scene.h"

static const ps_palette palettes[PS_THEME__COUNT] = {
  [PS_THEME_LIGHT] = {
    .background = 0xffffff, .surface = 0xf5f5f6, .lane = { 0xfafafa, 0xf2f2f3 },
    .text = 0x1a1a1a, .text_dim = 0x555555, .grid = 0xdddddd, .axis = 0x555555,
    .edge = 0x5a5a5a, .edge_order = 0x8c8c8c, .cross = 0xe6850e, .event = 0x9c27b0,
    .critical = 0xd62728, .selection = 0x1a1a1a, .hover = 0x3584e4, .match = 0xf5c211,
    .changed = 0xe6850e, .cluster_fill = 0xfbfbf0, .cluster_stroke = 0x8a8a5c,
    .unknown = 0xe4e4e4, .not_run = 0xf6f6f6, .merged_fill = 0x9fb7cc, .merged_stroke = 0x5f7f9c,
    .external = 0xd0d0d0, .ghost = 0x9a9a9a,
    .wait_fill = { 0xfde0dd, 0xfff0d0, 0xdde8f6 },
    .wait_stroke = { 0xd62728, 0xc77c02, 0x3465a4 },
    .peak = 0x1f78b4,
  },
  [PS_THEME_DARK] = {
    .background = 0x1e1e1e, .surface = 0x262626, .lane = { 0x222222, 0x2a2a2a },
    .text = 0xeeeeee, .text_dim = 0xaaaaaa, .grid = 0x3c3c3c, .axis = 0x9a9a9a,
    .edge = 0xa8a8a8, .edge_order = 0x6e6e6e, .cross = 0xf5a623, .event = 0xd08ee0,
    .critical = 0xff6060, .selection = 0xffffff, .hover = 0x78aeed, .match = 0xf8e45c,
    .changed = 0xf5a623, .cluster_fill = 0x2b2b24, .cluster_stroke = 0x9a9a6c,
    .unknown = 0x3a3a3a, .not_run = 0x2a2a2a, .merged_fill = 0x4d647a, .merged_stroke = 0x8aa6c0,
    .external = 0x4a4a4a, .ghost = 0x8a8a8a,
    .wait_fill = { 0x4a2224, 0x4a3a16, 0x1f3350 },
    .wait_stroke = { 0xff6060, 0xf0a830, 0x78aeed },
    .peak = 0x62a0ea,
  },
};

const ps_palette *
ps_palette_get (ps_theme theme)
{
  return &palettes[(unsigned) theme < PS_THEME__COUNT ? theme : PS_THEME_LIGHT];
}

#define PS__COLOR_BY_NAME(e, name, label) name,
#define PS__COLOR_BY_LABEL(e, name, label) label,
static const char *const color_by_names[] = { PS_COLOR_BY_MAP (PS__COLOR_BY_NAME) };
static const char *const color_by_labels[] = { PS_COLOR_BY_MAP (PS__COLOR_BY_LABEL) };
#undef PS__COLOR_BY_NAME
#undef PS__COLOR_BY_LABEL

int
ps_color_by_parse (const char *name, ps_color_by *out)
{
  for (int i = 0; i < PS_COLOR_BY__COUNT; i++)
    if (strcmp (name, color_by_names[i]) == 0) {
      *out = (ps_color_by) i;
      return 0;
    }
  return PS_EINVAL;
}

const char *
ps_color_by_name (ps_color_by c)
{
  return (unsigned) c < PS_COLOR_BY__COUNT ? color_by_names[c] : "?";
}

const char *
ps_color_by_label (ps_color_by c)
{
  return (unsigned) c < PS_COLOR_BY__COUNT ? color_by_labels[c] : "?";
}

void
ps_style_init (ps_style *s, ps_theme theme, ps_color_by color)
{
  memset (s, 0, sizeof *s);
  s->theme = (unsigned) theme < PS_THEME__COUNT ? theme : PS_THEME_LIGHT;
  s->pal = ps_palette_get (s->theme);
  s->color = color;
  s->show_critical = true;
}

/* ---- colour arithmetic ----------------------------------------------------- */

uint32_t
ps_color_mix (uint32_t a, uint32_t b, double t)
{
  uint32_t r = 0;
  for (int sh = 16; sh >= 0; sh -= 8) {
    double ca = (a >> sh) & 0xff, cb = (b >> sh) & 0xff;
    r |= (uint32_t) lround (ca + (cb - ca) * t) << sh;
  }
  return r;
}

uint32_t
ps_style_outline (const ps_style *s, uint32_t fill)
{
  return s->theme == PS_THEME_DARK ? ps_color_mix (fill, 0xffffff, 0.45)
                                   : ps_color_mix (fill, 0x000000, 0.45);
}

uint32_t
ps_color_text_on (uint32_t rgb)
{
  double l = 0.299 * ((rgb >> 16) & 0xff) + 0.587 * ((rgb >> 8) & 0xff) + 0.114 * (rgb & 0xff);
  return l < 120 ? 0xf2f2f2 : 0x1a1a1a;
}

/* Fills are pastel on white; on a dark canvas they are toned down towards
 * it, so that boxes do not glare and light text stays readable. */
static uint32_t
themed (const ps_style *s, uint32_t light)
{
  return s->theme == PS_THEME_DARK ? ps_color_mix (light, s->pal->background, 0.42) : light;
}

/* ---- base colours ------------------------------------------------------------ */

uint32_t
ps_style_kind_color (const ps_style *s, ps_op op)
{
  static const uint32_t light[PS_OP__COUNT] = {
    [PS_OP_KERNEL] = 0xa6cee3,       [PS_OP_MEMCPY] = 0xb2df8a,  [PS_OP_MEMSET] = 0xfdbf6f,
    [PS_OP_HOST] = 0xcab2d6,         [PS_OP_EVENT_RECORD] = 0xffff99,
    [PS_OP_EVENT_WAIT] = 0xfb9a99,   [PS_OP_BARRIER] = 0x404040, [PS_OP_CONDITIONAL] = 0xe0e0e0,
    [PS_OP_EMPTY] = 0xffffff,        [PS_OP_OPAQUE] = 0xd9d9d9,
  };
  uint32_t c = (unsigned) op < PS_OP__COUNT ? light[op] : 0xeeeeee;
  if (s->theme == PS_THEME_DARK && (op == PS_OP_EMPTY || op == PS_OP_BARRIER))
    return op == PS_OP_EMPTY ? 0x333333 : 0x909090;
  return themed (s, c);
}

uint32_t
ps_style_span_kind_color (const ps_style *s, ps_span_kind k)
{
  switch (k) {
  case PS_SPAN_KERNEL:
    return ps_style_kind_color (s, PS_OP_KERNEL);
  case PS_SPAN_MEMCPY:
    return ps_style_kind_color (s, PS_OP_MEMCPY);
  case PS_SPAN_MEMSET:
    return ps_style_kind_color (s, PS_OP_MEMSET);
  case PS_SPAN_HOST:
    return ps_style_kind_color (s, PS_OP_HOST);
  default:
    return themed (s, 0xd9d9d9);
  }
}

uint32_t
ps_style_stream_color (const ps_style *s, int32_t stream)
{
  static const uint32_t base[10] = { 0x4e79a7, 0xf28e2b, 0x59a14f, 0xe15759, 0x76b7b2,
                                     0xedc948, 0xb07aa1, 0xff9da7, 0x9c755f, 0xbab0ac };
  if (stream < 0)
    return s->pal->unknown;
  uint32_t c = ps_color_mix (base[stream % 10], 0xffffff, 0.5);
  /* Further cycles of the palette get darker so that they stay apart. */
  if (stream >= 10)
    c = ps_color_mix (c, 0x000000, 0.2 * ((stream / 10) % 3));
  return themed (s, c);
}

uint32_t
ps_style_group_color (const ps_style *s, uint32_t group)
{
  if (group == PS_NONE)
    return s->pal->unknown;
  return ps_style_stream_color (s, (int32_t) ((group * 7u + 3u) % 30u));
}

/* ---- durations ----------------------------------------------------------------- */

double
ps_duration_scale (double ns, double max_ns)
{
  if (!isfinite (ns))
    return NAN;
  if (!(max_ns > 0) || !(ns > 0))
    return 0;
  double t = 1 + log10 (ns / max_ns) / PS_DURATION_DECADES;
  return t < 0 ? 0 : t > 1 ? 1 : t;
}

uint32_t
ps_style_duration_color (const ps_style *s, double ns, double max_ns)
{
  static const uint32_t light[5] = { 0xfff5eb, 0xfdd0a2, 0xfd8d3c, 0xd94801, 0x7f2704 };
  static const uint32_t dark[5] = { 0x3a302a, 0x7f3b08, 0xd94801, 0xfd8d3c, 0xfdd0a2 };
  double t = ps_duration_scale (ns, max_ns);
  if (isnan (t))
    return s->pal->unknown;
  const uint32_t *stops = s->theme == PS_THEME_DARK ? dark : light;
  if (t >= 1)
    return stops[4];
  double x = t * 4;
  int i = (int) x;
  return ps_color_mix (stops[i], stops[i + 1], x - i);
}

int
ps_style_add_duration_legend (ps_scene *sc, const ps_style *s, double max_ns, bool unknown)
{
  char buf[64], a[PS_FORMAT_MAX];
  int ret = 0;
  for (int i = 0; i <= PS_DURATION_DECADES && ret == 0 && max_ns > 0; i++) {
    double ns = max_ns * pow (10, i - PS_DURATION_DECADES);
    snprintf (buf, sizeof buf, "%s%s", i == 0 ? "\xe2\x89\xa4 " : "",
              ps_format_duration (ns, a, sizeof a));
    uint32_t c = ps_style_duration_color (s, ns, max_ns);
    ret = ps_scene_add_legend (sc, PS_LEGEND_SWATCH, buf, c, ps_style_outline (s, c), 0);
  }
  if (ret == 0 && unknown)
    ret = ps_scene_add_legend (sc, PS_LEGEND_SWATCH, "duration unknown", s->pal->unknown,
                               ps_style_outline (s, s->pal->unknown), 0);
  return ret;
}

/* ---- nodes and spans ------------------------------------------------------------- */

uint32_t
ps_style_node_fill (const ps_style *s, const ps_graph *g, const ps_plan *p, const ps_figures *f,
                    uint32_t v)
{
  if (!g || v >= g->n_nodes)
    return s->pal->unknown;
  if (f && f->node_source && v < f->n_nodes && f->node_source[v] == PS_FIGURE_NOT_RUN)
    return s->pal->not_run;
  switch (s->color) {
  case PS_COLOR_BY_STREAM: {
    int32_t st = f && f->node_stream && v < f->n_nodes ? f->node_stream[v] : -1;
    if (st < 0 && p && p->graph == g && p->node_step && p->node_step[v] < p->n_steps)
      st = p->steps[p->node_step[v]].stream;
    return ps_style_stream_color (s, st);
  }
  case PS_COLOR_BY_GROUP:
    if (p && p->graph == g && p->node_step && p->node_step[v] < p->n_steps
        && p->steps[p->node_step[v]].nodes_count > 1)
      return ps_style_group_color (s, p->steps[p->node_step[v]].group);
    return s->pal->unknown;
  case PS_COLOR_BY_DURATION:
    if (!f || !f->node_ns || v >= f->n_nodes)
      return s->pal->unknown;
    return ps_style_duration_color (s, f->node_ns[v], f->max_node_ns);
  case PS_COLOR_BY_KIND:
  default:
    return ps_style_kind_color (s, (ps_op) g->nodes[v].op);
  }
}

uint32_t
ps_style_span_fill (const ps_style *s, const ps_timeline *tl, const ps_plan *p,
                    const ps_figures *f, uint32_t i)
{
  const ps_span *sp = &tl->spans[i];
  if (sp->flags & PS_SPAN_F_NOT_RUN)
    return s->pal->not_run;
  if (sp->nodes_count > 0 && tl->graph) {
    uint32_t v = tl->span_nodes[sp->nodes_begin];
    if (s->color == PS_COLOR_BY_DURATION)
      return (sp->flags & PS_SPAN_F_UNKNOWN) || !f
               ? s->pal->unknown
               : ps_style_duration_color (s, sp->end_ns - sp->start_ns, f->max_node_ns);
    return ps_style_node_fill (s, tl->graph, p, f, v);
  }
  switch (s->color) {
  case PS_COLOR_BY_STREAM:
    return ps_style_stream_color (s, (int32_t) sp->stream);
  case PS_COLOR_BY_DURATION:
    return (sp->flags & PS_SPAN_F_UNKNOWN) || !f
             ? s->pal->unknown
             : ps_style_duration_color (s, sp->end_ns - sp->start_ns, f->max_node_ns);
  case PS_COLOR_BY_GROUP:
    return s->pal->unknown;
  default:
    return ps_style_span_kind_color (s, (ps_span_kind) sp->kind);
  }
}
