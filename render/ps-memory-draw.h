/* ps-memory-draw.h: the memory map of a plan: pooled buffers as
 * rectangles of pool offset against the time each is in use (from the
 * first to the last work that touches it, in a simulated or measured
 * timeline), external buffers apart in rows of their own; and the same as
 * JSON ("format": "planscope-memory") and as DOT with pinned positions. */
#ifndef PS_MEMORY_DRAW_H
#define PS_MEMORY_DRAW_H

#include <stdio.h>

#include "ps-plan.h"
#include "ps-timeline.h"

typedef struct ps_memory_map {
  const ps_plan *plan;
  uint32_t n_buffers;
  double *first_ns, *last_ns;      /* per buffer; first_ns < 0: never used */
  uint32_t *first_step, *last_step; /* per buffer, or PS_NONE */
  double makespan_ns;
  uint32_t n_pooled, n_external, n_unused;
} ps_memory_map;

/* Lifetimes of p's buffers in tl (spans name their graph nodes). */
int ps_memory_map_build (ps_memory_map *m, const ps_plan *p, const ps_timeline *tl);
void ps_memory_map_free (ps_memory_map *m);

int ps_memory_write_json (const ps_memory_map *m, FILE *out);
int ps_memory_write_svg (const ps_memory_map *m, FILE *out);
int ps_memory_write_png (const ps_memory_map *m, FILE *out);
int ps_memory_write_dot (const ps_memory_map *m, FILE *out);

#endif
