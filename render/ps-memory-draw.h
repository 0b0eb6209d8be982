/* ps-memory-draw.h: the memory map of a plan: pooled buffers as
 * rectangles of pool offset against the time each is in use (from the
 * first to the last work that touches it, ps_figures), external buffers
 * apart in rows of their own; and the same as JSON ("format":
 * "planscope-memory") and as DOT with pinned positions.
 *
 * The app's memory page and the exports draw the same map: the app
 * through a viewport (ps_memory_view) whose time axis follows the
 * timeline's, the exports with the whole run in view. */
#ifndef PS_MEMORY_DRAW_H
#define PS_MEMORY_DRAW_H

#include <stdio.h>

#include "ps-canvas.h"
#include "ps-figures.h"
#include "ps-plan.h"
#include "ps-pool-peak.h"
#include "ps-style.h"

#define PS_MEMORY_MAX_ROWS 64

typedef struct ps_memory_map {
  const ps_plan *plan;
  const ps_figures *fig; /* lifetimes */
  uint32_t n_buffers;
  double makespan_ns;
  uint32_t n_pooled, n_external, n_unused;
  /* External buffers in rows: per buffer its row, or PS_NONE (pooled or
   * unused); rows where buffers had to overlap get no labels. */
  uint32_t *row;
  uint32_t rows;
  uint8_t crowded[PS_MEMORY_MAX_ROWS];
  ps_pool_peak peak; /* of the plan (ps_pool_peak_of) */
} ps_memory_map;

/* The map of p's buffers with the lifetimes of f (a timeline of p). */
int ps_memory_map_build (ps_memory_map *m, const ps_plan *p, const ps_figures *f);
void ps_memory_map_free (ps_memory_map *m);
/* Whether buffer b is outside the pool. */
bool ps_memory_map_external (const ps_memory_map *m, uint32_t b);

/* Where and how to draw. */
typedef struct ps_memory_view {
  double x, y, width, height; /* the map's area on the canvas */
  double gutter;              /* width of the offset labels */
  double t0, ns_per_pt;       /* the time at the plot's left edge, and the scale */
  const ps_style *style;
  uint32_t selected;          /* a buffer to outline, or PS_NONE */
} ps_memory_view;

/* The gutter the offset labels need, and the height of the external rows
 * and their heading (0 without external buffers). */
double ps_memory_map_gutter (const ps_memory_map *m);
double ps_memory_map_rows_height (const ps_memory_map *m);

void ps_memory_map_draw (const ps_memory_map *m, const ps_memory_view *v, ps_canvas *c);
/* The buffer under (x, y), or PS_NONE. */
uint32_t ps_memory_map_hit (const ps_memory_map *m, const ps_memory_view *v, double x, double y);
/* A buffer's tooltip: name, size, offset and lifetime.  Returns buf. */
const char *ps_memory_map_buffer_text (const ps_memory_map *m, uint32_t b, char *buf, size_t cap);

int ps_memory_write_json (const ps_memory_map *m, FILE *out);
int ps_memory_write_svg (const ps_memory_map *m, ps_theme theme, FILE *out);
int ps_memory_write_png (const ps_memory_map *m, ps_theme theme, FILE *out);
int ps_memory_write_dot (const ps_memory_map *m, FILE *out);

#endif
