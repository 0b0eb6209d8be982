/* ps-style.h: how every drawing of planscope looks, in one place: the
 * palettes (light and dark), what boxes and spans are coloured by, the
 * duration scale and its legend, and the critical-path rule.
 *
 * The exports and the app's canvases draw through render/ with a
 * ps_style; a colour, a scale step or a legend line exists only here. */
#ifndef PS_STYLE_H
#define PS_STYLE_H

#include <stdbool.h>
#include <stdint.h>

#include "ps-figures.h"
#include "ps-graph.h"
#include "ps-plan.h"
#include "ps-timeline.h"

typedef enum ps_theme { PS_THEME_LIGHT = 0, PS_THEME_DARK, PS_THEME__COUNT } ps_theme;

/* The colours of one theme, 0xRRGGBB. */
typedef struct ps_palette {
  uint32_t background; /* the canvas */
  uint32_t surface;    /* axis band, gutters */
  uint32_t lane[2];    /* alternating timeline lanes */
  uint32_t text, text_dim;
  uint32_t grid, axis;
  uint32_t edge, edge_order, cross, event;
  uint32_t critical;
  uint32_t selection, hover, match, changed;
  uint32_t cluster_fill, cluster_stroke;
  uint32_t unknown, not_run; /* fills of work without a known duration, and not run */
  uint32_t merged_fill, merged_stroke;
  uint32_t external;         /* external buffers in the memory map */
  uint32_t ghost;            /* the baseline under the current timeline */
  uint32_t wait_fill[3], wait_stroke[3]; /* per ps_wait_kind */
  uint32_t peak;             /* the memory pool's peak of live bytes */
} ps_palette;

const ps_palette *ps_palette_get (ps_theme theme);

/* What boxes and spans are coloured by: ENUM, the name the CLI takes
 * (`export --color NAME`) and the words of the app's menu. */
#define PS_COLOR_BY_MAP(X)                          \
  X (STREAM, "stream", "Stream")                    \
  X (GROUP, "group", "Fusion group")                \
  X (KIND, "kind", "Kind")                          \
  X (DURATION, "duration", "Duration")

typedef enum ps_color_by {
#define PS__COLOR_BY_ENUM(e, name, label) PS_COLOR_BY_##e,
  PS_COLOR_BY_MAP (PS__COLOR_BY_ENUM)
#undef PS__COLOR_BY_ENUM
  PS_COLOR_BY__COUNT
} ps_color_by;

int ps_color_by_parse (const char *name, ps_color_by *out);
const char *ps_color_by_name (ps_color_by c);
const char *ps_color_by_label (ps_color_by c);

typedef struct ps_style {
  ps_theme theme;
  const ps_palette *pal;
  ps_color_by color;
  bool show_critical;
} ps_style;

void ps_style_init (ps_style *s, ps_theme theme, ps_color_by color);

/* Base colours. */
uint32_t ps_style_kind_color (const ps_style *s, ps_op op);
uint32_t ps_style_span_kind_color (const ps_style *s, ps_span_kind k);
uint32_t ps_style_stream_color (const ps_style *s, int32_t stream);
uint32_t ps_style_group_color (const ps_style *s, uint32_t group);

/* The duration scale: log10 over three decades below the longest known
 * duration, t in [0, 1]; NaN for an unknown duration.  Every view and
 * legend uses this one. */
#define PS_DURATION_DECADES 3
double ps_duration_scale (double ns, double max_ns);
uint32_t ps_style_duration_color (const ps_style *s, double ns, double max_ns);

/* The fill of graph node v under s->color, with the figures (durations,
 * streams) of the timeline shown; p gives fused groups (may be NULL). */
uint32_t ps_style_node_fill (const ps_style *s, const ps_graph *g, const ps_plan *p,
                             const ps_figures *f, uint32_t v);
/* The fill of span i of tl: its first node's, else by its kind or stream. */
uint32_t ps_style_span_fill (const ps_style *s, const ps_timeline *tl, const ps_plan *p,
                             const ps_figures *f, uint32_t i);

/* The critical-path rule: a node is marked when it lies on the timeline's
 * critical path (ps_figures) and the style shows it. */
static inline bool
ps_style_node_critical (const ps_style *s, const ps_figures *f, uint32_t v)
{
  return s->show_critical && f && f->node_critical && v < f->n_nodes && f->node_critical[v];
}
/* What the legend says the red outline is. */
#define PS_CRITICAL_LEGEND "critical path of the timeline (what bound the makespan)"

/* Adds the duration legend to sc: four swatches, the longest known
 * duration and one, two and three decades below it, then "unknown" when
 * some durations are. */
struct ps_scene;
int ps_style_add_duration_legend (struct ps_scene *sc, const ps_style *s, double max_ns,
                                  bool unknown);

/* Colour arithmetic. */
uint32_t ps_color_mix (uint32_t a, uint32_t b, double t);
/* A darker (light theme) or lighter (dark theme) shade for outlines. */
uint32_t ps_style_outline (const ps_style *s, uint32_t fill);
/* Black or white, whichever reads better on rgb. */
uint32_t ps_color_text_on (uint32_t rgb);

#endif
