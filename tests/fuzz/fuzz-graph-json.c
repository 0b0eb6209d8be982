/* fuzz-graph-json.c: libFuzzer harness for the graph loader's front door
 * (ps_import_graph_mem, which hands DOT dumps to the DOT importer).
 *
 * Besides "no crash, no leak, no hang" it checks what the loader promises:
 * an accepted graph satisfies every invariant of ps-graph.h, a rejected
 * one leaves the graph empty with at least one error, and loading the
 * same bytes again gives the same verdict and the same messages. */
#include "fuzz-harness.h"

#include <string.h>

#include "fuzz-check.h"
#include "ps-graph.h"
#include "ps-import.h"

static void
check_empty (const ps_graph *g)
{
  FUZZ_CHECK (g->n_nodes == 0 && g->nodes == NULL && g->n_edges == 0 && g->strings == NULL
                  && g->name == NULL,
              "a failed load left a graph behind");
}

int
ps_fuzz_graph_json (const uint8_t *data, size_t size)
{
  ps_graph g;
  ps_diag d;
  ps_diag_init (&d, "fuzz.json");
  int rc = ps_import_graph_mem (&g, (const char *) data, size, "fuzz.json", &d);
  if (rc == 0) {
    FUZZ_CHECK (d.errors == 0, "loaded with %zu errors", d.errors);
    fuzz_check_graph (&g);
  } else {
    FUZZ_CHECK (rc < 0 && d.errors > 0, "failed (%d) without an error message", rc);
    check_empty (&g);
  }
  fuzz_check_diag (&d);
  ps_diag_print (&d, ps_fuzz_devnull ());

  /* A second load of the same bytes: the loader keeps no state. */
  ps_graph g2;
  ps_diag d2;
  ps_diag_init (&d2, "fuzz.json");
  int r2 = ps_import_graph_mem (&g2, (const char *) data, size, "fuzz.json", &d2);
  FUZZ_CHECK (r2 == rc, "first load %d, second load %d", rc, r2);
  if (r2 == 0) {
    FUZZ_CHECK (g2.n_nodes == g.n_nodes && g2.n_buffers == g.n_buffers
                    && g2.n_edges == g.n_edges,
                "the second load gave another graph");
    ps_graph_free (&g2);
  } else {
    check_empty (&g2);
  }
  FUZZ_CHECK (d2.errors == d.errors && d2.count == d.count,
              "second load: %zu errors, %zu messages; first: %zu errors, %zu messages",
              d2.errors, d2.count, d.errors, d.count);
  for (size_t i = 0; i < d.count; i++) {
    const ps_diag_entry *x = &d.entries[i], *y = &d2.entries[i];
    FUZZ_CHECK (x->line == y->line && x->col == y->col && strcmp (x->message, y->message) == 0,
                "message %zu: first %u:%u: %s; second %u:%u: %s", i, x->line, x->col,
                x->message, y->line, y->col, y->message);
  }
  ps_diag_free (&d2);
  ps_graph_free (&g);
  ps_diag_free (&d);
  return 0;
}

#ifndef PS_FUZZ_NO_MAIN
int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  return ps_fuzz_graph_json (data, size);
}
#endif
