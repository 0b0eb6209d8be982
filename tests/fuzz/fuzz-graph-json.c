/* fuzz-graph-json.c: libFuzzer harness for the graph loader
 * (ps_graph_load_json, which also hands DOT dumps to the DOT importer).
 *
 * Besides "no crash, no leak, no hang" it checks what the loader promises:
 * an accepted graph satisfies every invariant of ps-graph.h, a rejected
 * one leaves the graph empty with at least one error, and the streaming
 * path (ps_graph_load_file's, fed in small chunks) reaches the same
 * verdict as the in-memory one. */
#include "fuzz-harness.h"

#include <string.h>

#include "fuzz-check.h"
#include "import/dot/ps-dot-import.h"
#include "import/json/ps-json-load.h"
#include "ps-graph.h"

typedef struct {
  const uint8_t *p;
  size_t left, chunk;
} chunks;

static long
chunk_read (void *ctx, char *buf, size_t cap)
{
  chunks *c = ctx;
  size_t n = c->left < c->chunk ? c->left : c->chunk;
  if (n > cap)
    n = cap;
  memcpy (buf, c->p, n);
  c->p += n;
  c->left -= n;
  return (long) n;
}

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
  int rc = ps_graph_load_json (&g, (const char *) data, size, "fuzz.json", &d);
  if (rc == 0) {
    FUZZ_CHECK (d.errors == 0, "loaded with %zu errors", d.errors);
    fuzz_check_graph (&g);
  } else {
    FUZZ_CHECK (rc < 0 && d.errors > 0, "failed (%d) without an error message", rc);
    check_empty (&g);
  }
  fuzz_check_diag (&d);
  ps_diag_print (&d, ps_fuzz_devnull ());

  /* The streaming path, in chunks of 1 to 64 bytes. */
  if (!ps__graph_is_dot ((const char *) data, size)) {
    ps_graph gs;
    ps_diag ds;
    ps_diag_init (&ds, "fuzz.json");
    chunks c = { data, size, size ? 1 + data[size / 2] % 64 : 1 };
    int rs = ps__graph_load_stream (&gs, chunk_read, &c, NULL, "fuzz.json", &ds);
    FUZZ_CHECK ((rs == 0) == (rc == 0), "memory load %d, streamed load %d", rc, rs);
    if (rs == 0) {
      FUZZ_CHECK (gs.n_nodes == g.n_nodes && gs.n_buffers == g.n_buffers
                      && gs.n_edges == g.n_edges,
                  "streamed graph differs");
      ps_graph_free (&gs);
    } else {
      check_empty (&gs);
    }
    FUZZ_CHECK (ds.errors == d.errors && ds.count == d.count, "streamed load: %zu errors, %zu "
                "messages; from memory: %zu errors, %zu messages", ds.errors, ds.count, d.errors,
                d.count);
    for (size_t i = 0; i < d.count; i++) {
      const ps_diag_entry *a = &d.entries[i], *b = &ds.entries[i];
      FUZZ_CHECK (a->line == b->line && a->col == b->col && strcmp (a->message, b->message) == 0,
                  "message %zu: from memory %u:%u: %s; streamed %u:%u: %s", i, a->line, a->col,
                  a->message, b->line, b->col, b->message);
    }
    ps_diag_free (&ds);
  }
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
