/* ps-gen.h: seeded synthetic graphs for benchmarks and property tests. */
#ifndef PS_GEN_H
#define PS_GEN_H

#include <stdio.h>

#include "ps-graph.h"

typedef enum ps_gen_shape {
  PS_GEN_CHAIN = 0,
  PS_GEN_FANOUT,
  PS_GEN_LAYERED,
  PS_GEN_TRANSFORMER,
  PS_GEN__COUNT
} ps_gen_shape;

typedef struct ps_gen_options {
  ps_gen_shape shape;
  uint32_t nodes;   /* approximate node count, >= 1 */
  uint64_t seed;
  /* Extras sprinkled in (all on by default for property tests; the CLI
   * uses the defaults of ps_gen_options_init). */
  bool events, barriers, conditionals, pins;
  uint32_t pin_streams; /* pins use streams below this */
} ps_gen_options;

void ps_gen_options_init (ps_gen_options *o);
int ps_gen_shape_parse (const char *name, ps_gen_shape *out);
const char *ps_gen_shape_name (ps_gen_shape s);
/* Writes a graph in the planscope JSON format. */
int ps_gen_write (const ps_gen_options *o, FILE *out);

#endif
