/* ps-test-gen.h: a generated graph (ps_gen_write), loaded as a file of it
 * would be, for the tests and the benches. */
#ifndef PS_TEST_GEN_H
#define PS_TEST_GEN_H

#include <stdio.h>
#include <stdlib.h>

#include "ps-gen.h"
#include "ps-graph.h"
#include "ps-import.h"
#include "ps-status.h"

/* Options for `shape`, `nodes` nodes and `seed`: events, barriers,
 * conditionals and pins when `extras`, else none. */
static inline void
pt_gen_options (ps_gen_options *go, ps_gen_shape shape, uint32_t nodes, uint64_t seed,
                bool extras)
{
  ps_gen_options_init (go);
  go->shape = shape;
  go->nodes = nodes;
  go->seed = seed;
  go->events = go->barriers = go->conditionals = go->pins = extras;
}

/* Generates the graph go describes into g; its errors go to standard
 * error. */
static inline int
pt_gen_graph (ps_graph *g, const ps_gen_options *go)
{
  char *buf = NULL;
  size_t len = 0;
  ps_graph_init (g);
  FILE *f = open_memstream (&buf, &len);
  if (!f)
    return PS_ENOMEM;
  int rc = ps_gen_write (go, f);
  if (fclose (f) != 0 && rc == 0)
    rc = PS_ENOMEM;
  if (rc == 0) {
    ps_diag diag;
    ps_diag_init (&diag, "gen.json");
    rc = ps_import_graph_mem (g, buf, len, "gen.json", &diag);
    if (rc < 0)
      ps_diag_print (&diag, stderr);
    ps_diag_free (&diag);
  }
  free (buf);
  return rc;
}

#endif
