/* fuzz-dot.c: libFuzzer harness for the cudaGraphDebugDotPrint importer
 * (ps-dot-import.h).  An accepted dump must give a graph that satisfies
 * every invariant of ps-graph.h (in particular nodes renumbered into a
 * topological order); a rejected one leaves the graph empty with at least
 * one error. */
#include "fuzz-harness.h"

#include "fuzz-check.h"
#include "import/dot/ps-dot-import.h"
#include "import/dot/ps-dot-private.h"

int
ps_fuzz_dot (const uint8_t *data, size_t size)
{
  ps_graph g;
  ps_diag d;
  ps_diag_init (&d, "fuzz.dot");
  (void) ps__dot_starts_graph ((const char *) data, size);
  int rc = ps__dot_load_graph (&g, (const char *) data, size, "fuzz.dot", &d);
  if (rc == 0) {
    FUZZ_CHECK (d.errors == 0, "loaded with %zu errors", d.errors);
    fuzz_check_graph (&g);
  } else {
    FUZZ_CHECK (rc < 0 && d.errors > 0, "failed (%d) without an error message", rc);
    FUZZ_CHECK (g.n_nodes == 0 && g.nodes == NULL && g.strings == NULL,
                "a failed import left a graph behind");
  }
  fuzz_check_diag (&d);
  ps_diag_print (&d, ps_fuzz_devnull ());
  ps_graph_free (&g);
  ps_diag_free (&d);
  return 0;
}

#ifndef PS_FUZZ_NO_MAIN
int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  return ps_fuzz_dot (data, size);
}
#endif
