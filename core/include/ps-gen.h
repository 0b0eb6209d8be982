/* ps-gen.h: seeded synthetic graphs for benchmarks and property tests.
 *
 * Every generated graph loads without errors or warnings (no reads of
 * unwritten temporaries), has exactly the requested number of nodes, and is
 * a pure function of the options: the same options give the same bytes
 * (xoshiro256** seeded through splitmix64; see ps-gen.c).  Shapes:
 *   chain        one long dependent chain of mostly fusible element-wise
 *                kernels, a non-fusible kernel every few steps;
 *   fanout       an upload and a producer, many independent branches, a
 *                join tree of fan-in 16, a download;
 *   layered      uploads, then layers of width ~sqrt(N) whose kernels
 *                (gemms with flops, unary and binary element-wise built-ins)
 *                read buffers of the previous 1-3 layers, then downloads;
 *   transformer  an embedding, then 16-node blocks: layernorm, parallel
 *                Q/K/V gemms, attention, output projection + bias, residual
 *                add, layernorm, MLP with fusible bias/gelu/scale epilogues,
 *                residual add; a download.
 * Extras: user event record/wait pairs (names "ev0".."ev7" reused; the
 * record is `after` the preceding node and the next node is `after` the
 * wait), barriers, conditionals on external flag buffers with then/else
 * branches of the following nodes, and stream pins below pin_streams on
 * about one node in twelve.  Graphs under 16 nodes get no extras. */
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
  uint32_t nodes;   /* node count, 1..PS_MAX_NODES (met exactly) */
  uint64_t seed;
  /* Extras sprinkled in: all on after ps_gen_options_init (for property
   * tests); planscope-cli gen turns them off unless asked. */
  bool events, barriers, conditionals, pins;
  uint32_t pin_streams; /* pins use streams below this (default 2; 0: no pins) */
} ps_gen_options;

/* Defaults: layered, 1000 nodes, seed 1, every extra on, pin_streams 2. */
void ps_gen_options_init (ps_gen_options *o);
/* "chain", "fanout", "layered", "transformer"; PS_EINVAL for anything else. */
int ps_gen_shape_parse (const char *name, ps_gen_shape *out);
const char *ps_gen_shape_name (ps_gen_shape s);
/* Writes a graph in the planscope JSON format (one node per line).  Returns
 * PS_EINVAL for bad options (nodes outside 1..PS_MAX_NODES, unknown shape),
 * PS_ENOMEM, or PS_EIO when writing to `out` fails. */
int ps_gen_write (const ps_gen_options *o, FILE *out);

#endif
