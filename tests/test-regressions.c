/* test-regressions.c: hostile inputs.
 *
 * /core/regressions replays every file of tests/fuzz/regressions/HARNESS/
 * (each one crashed planscope, leaked, hung or broke an invariant once)
 * through the fuzz harness that found it, built here from the same sources
 * (tests/fuzz/fuzz-*.c with PS_FUZZ_NO_MAIN), so that they run in the
 * normal and the ASan+UBSan test builds; graph and DOT inputs also go
 * through the pipeline harness (plan, verify, simulate).  A harness aborts
 * on a broken invariant, which fails the test.
 *
 * /core/limits checks that the documented limits of ps-graph.h and
 * ps-json.h (file size, nesting, name length, numbers, expanded DOT graphs)
 * are enforced with clear, located errors rather than crashes. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz/fuzz-harness.h"
#include "ps-file.h"
#include "ps-graph.h"
#include "ps-import.h"
#include "ps-timeline.h"
#include "ps-trace-import.h"

#ifndef PS_TEST_SOURCE_ROOT
#define PS_TEST_SOURCE_ROOT "."
#endif

static const char *
source_root (void)
{
  const char *s = getenv ("PS_SOURCE_ROOT");
  return s && *s ? s : PS_TEST_SOURCE_ROOT;
}

typedef int (*harness_fn) (const uint8_t *data, size_t size);

/* Feeds every file of regressions/NAME to fn (and to the pipeline when
 * asked); returns how many there were. */
static unsigned
replay (const char *name, harness_fn fn, int also_pipeline)
{
  char dir[4096];
  snprintf (dir, sizeof dir, "%s/tests/fuzz/regressions/%s", source_root (), name);
  DIR *d = opendir (dir);
  if (!d)
    fail_msg ("cannot open %s", dir);
  unsigned n = 0;
  struct dirent *e;
  while ((e = readdir (d)) != NULL) {
    if (e->d_name[0] == '.')
      continue;
    char path[8192];
    snprintf (path, sizeof path, "%s/%s", dir, e->d_name);
    struct stat st;
    if (stat (path, &st) != 0 || !S_ISREG (st.st_mode))
      continue;
    char *data;
    size_t len;
    ps_diag diag;
    ps_diag_init (&diag, path);
    assert_int_equal (ps_file_read_all (path, 64u << 20, &data, &len, &diag), 0);
    ps_diag_free (&diag);
    fprintf (stderr, "# %s/%s\n", name, e->d_name);
    /* In a block of exactly its size, as libFuzzer hands it over: the whole
     * file reader leaves room after the bytes, where a read one past the
     * end goes unnoticed. */
    uint8_t *exact = malloc (len ? len : 1);
    assert_non_null (exact);
    memcpy (exact, data, len);
    free (data);
    assert_int_equal (fn (exact, len), 0);
    if (also_pipeline)
      assert_int_equal (ps_fuzz_pipeline (exact, len), 0);
    free (exact);
    n++;
  }
  closedir (d);
  return n;
}

static void
core_regressions_graph_json (void **state)
{
  (void) state;
  assert_true (replay ("graph-json", ps_fuzz_graph_json, 1) > 0);
}

static void
core_regressions_dot (void **state)
{
  (void) state;
  assert_true (replay ("dot", ps_fuzz_dot, 1) > 0);
}

static void
core_regressions_trace (void **state)
{
  (void) state;
  assert_true (replay ("trace", ps_fuzz_trace, 0) > 0);
}

static void
core_regressions_pipeline (void **state)
{
  (void) state;
  assert_true (replay ("pipeline", ps_fuzz_pipeline, 0) > 0);
}

static void
core_regressions_device (void **state)
{
  (void) state;
  assert_true (replay ("device", ps_fuzz_device, 0) > 0);
}

/* ---- limits ---- */

/* Loads text (JSON or DOT) and expects it to fail with an error whose
 * message contains `what`, with a position when `located`. */
static void
expect_error (const char *text, size_t len, const char *what, int located)
{
  ps_graph g;
  ps_diag d;
  ps_diag_init (&d, "limits.json");
  int rc = ps_import_graph_mem (&g, text, len, "limits.json", &d);
  if (rc == 0)
    ps_graph_free (&g);
  assert_true (rc < 0);
  assert_int_equal (g.n_nodes, 0);
  int found = 0;
  for (size_t i = 0; i < d.count; i++)
    if (d.entries[i].severity == PS_SEV_ERROR && strstr (d.entries[i].message, what)
        && (!located || d.entries[i].line > 0))
      found = 1;
  if (!found) {
    ps_diag_print (&d, stderr);
    fail_msg ("no error mentioning \"%s\"", what);
  }
  ps_diag_free (&d);
}

static void
expect_loads (const char *text)
{
  ps_graph g;
  ps_diag d;
  ps_diag_init (&d, "limits.json");
  int rc = ps_import_graph_mem (&g, text, strlen (text), "limits.json", &d);
  if (rc != 0)
    ps_diag_print (&d, stderr);
  assert_int_equal (rc, 0);
  ps_graph_free (&g);
  ps_diag_free (&d);
}

/* A graph with one node whose object ends with `extra` (a JSON member). */
static char *
graph_with (const char *node_extra, const char *buffers)
{
#define GRAPH_WITH_FMT                                                                      \
  "{\"format\": \"planscope-graph\", \"version\": 1, \"buffers\": [%s],\n"                    \
  " \"nodes\": [{\"name\": \"k\", \"op\": \"kernel\", \"function\": \"f\", \"grid\": 1, "      \
  "\"block\": 1%s}]}"
  size_t n = strlen (GRAPH_WITH_FMT) + strlen (node_extra) + strlen (buffers) + 1;
  char *s = malloc (n);
  assert_non_null (s);
  snprintf (s, n, GRAPH_WITH_FMT, buffers, node_extra);
  return s;
}

static void
expect_graph_error (const char *node_extra, const char *buffers, const char *what)
{
  char *s = graph_with (node_extra, buffers);
  expect_error (s, strlen (s), what, 1);
  free (s);
}

static void
core_limits_file_size (void **state)
{
  (void) state;
  /* A sparse file one byte over the limit: refused before it is read. */
  char path[] = "/tmp/ps-limits-XXXXXX";
  int fd = mkstemp (path);
  assert_true (fd >= 0);
  assert_int_equal (ftruncate (fd, (off_t) PS_MAX_FILE_BYTES + 1), 0);
  close (fd);
  ps_graph g;
  ps_diag d;
  ps_diag_init (&d, path);
  assert_int_equal (ps_import_graph_file (&g, path, NULL, &d), PS_ELIMIT);
  assert_int_equal (g.n_nodes, 0);
  assert_true (d.errors > 0);
  assert_non_null (strstr (d.entries[0].message, "too large"));
  ps_diag_free (&d);
  unlink (path);
}

static void
core_limits_nesting (void **state)
{
  (void) state;
  /* PS_JSON_MAX_DEPTH (256) levels of arrays inside a node's params. */
  size_t depth = 300;
  char *deep = malloc (2 * depth + 32);
  assert_non_null (deep);
  strcpy (deep, ", \"params\": {\"alpha\": ");
  size_t o = strlen (deep);
  for (size_t i = 0; i < depth; i++)
    deep[o++] = '[';
  for (size_t i = 0; i < depth; i++)
    deep[o++] = ']';
  strcpy (deep + o, "}");
  expect_graph_error (deep, "", "nesting deeper than 256");
  free (deep);

  /* DOT subgraphs nested deeper than 256 levels. */
  size_t cap = depth * 16 + 64;
  char *dot = malloc (cap);
  assert_non_null (dot);
  o = (size_t) snprintf (dot, cap, "digraph dot {\n");
  for (size_t i = 0; i < depth; i++)
    o += (size_t) snprintf (dot + o, cap - o, "subgraph {");
  o += (size_t) snprintf (dot + o, cap - o, "a;");
  for (size_t i = 0; i < depth; i++)
    dot[o++] = '}';
  o += (size_t) snprintf (dot + o, cap - o, "\n}\n");
  expect_error (dot, o, "nested more than 256", 1);
  free (dot);

  /* The same depth in a trace. */
  char *trace = malloc (2 * depth + 64);
  assert_non_null (trace);
  o = (size_t) sprintf (trace, "{\"traceEvents\": [{\"args\": ");
  for (size_t i = 0; i < depth; i++)
    trace[o++] = '[';
  for (size_t i = 0; i < depth; i++)
    trace[o++] = ']';
  o += (size_t) sprintf (trace + o, "}]}");
  ps_timeline tl;
  ps_timeline_init (&tl, PS_TL_IMPORTED);
  ps_diag d;
  ps_diag_init (&d, "trace.json");
  assert_true (ps_trace_import_mem (&tl, trace, o, NULL, &d) < 0);
  assert_true (d.errors > 0 && d.entries[0].line == 1);
  assert_non_null (strstr (d.entries[0].message, "nesting deeper than 256"));
  ps_diag_free (&d);
  ps_timeline_free (&tl);
  free (trace);
}

static void
core_limits_name_length (void **state)
{
  (void) state;
  char *name = malloc (PS_MAX_NAME + 2);
  assert_non_null (name);
  memset (name, 'n', PS_MAX_NAME + 1);
  name[PS_MAX_NAME + 1] = '\0';
  char *buf = malloc (PS_MAX_NAME + 128);
  assert_non_null (buf);

  /* PS_MAX_NAME bytes are fine, one more is an error. */
  snprintf (buf, PS_MAX_NAME + 128, "{\"name\": \"%.*s\", \"bytes\": 4}", PS_MAX_NAME, name);
  char *s = graph_with ("", buf);
  expect_loads (s);
  free (s);
  snprintf (buf, PS_MAX_NAME + 128, "{\"name\": \"%s\", \"bytes\": 4}", name);
  expect_graph_error ("", buf, "4096");

  /* DOT identifiers too. */
  snprintf (buf, PS_MAX_NAME + 128, "digraph dot { \"%s\"; }", name);
  expect_error (buf, strlen (buf), "longer than 4096", 1);
  free (buf);
  free (name);
}

static void
core_limits_numbers (void **state)
{
  (void) state;
  /* Buffer sizes: at most 2^48. */
  char *s = graph_with ("", "{\"name\": \"b\", \"bytes\": 281474976710656}");
  expect_loads (s);
  free (s);
  expect_graph_error ("", "{\"name\": \"b\", \"bytes\": 281474976710657}", "bytes");
  expect_graph_error ("", "{\"name\": \"b\", \"bytes\": 18446744073709551617}", "bytes");
  expect_graph_error ("", "{\"name\": \"b\", \"bytes\": 1e300}", "bytes");
  expect_graph_error ("", "{\"name\": \"b\", \"bytes\": 0}", "bytes");
  /* Launch dimensions: CUDA's largest (grid 2^31 - 1 x 65535 x 65535,
   * block 1024 x 1024 x 64) load, one more does not; the product of the
   * largest saturates. */
  const char *big = "{\"format\": \"planscope-graph\", \"version\": 1, \"nodes\": [{\"name\": "
                    "\"k\", \"op\": \"kernel\", \"function\": \"f\", "
                    "\"grid\": [2147483647, 65535, 65535], "
                    "\"block\": [1024, 1024, 64], \"smem\": 4294967295}]}";
  ps_graph g;
  ps_diag d;
  ps_diag_init (&d, "limits.json");
  assert_int_equal (ps_import_graph_mem (&g, big, strlen (big), "limits.json", &d), 0);
  assert_true (ps_kernel_threads (&g.kernels[0]) == UINT64_MAX);
  ps_graph_free (&g);
  ps_diag_free (&d);
  /* ... and the whole pipeline copes with it (the harness checks that the
   * times stay finite). */
  assert_int_equal (ps_fuzz_pipeline ((const uint8_t *) big, strlen (big)), 0);

  const char *grid = "{\"format\": \"planscope-graph\", \"version\": 1, \"nodes\": [{\"name\": "
                     "\"k\", \"op\": \"kernel\", \"function\": \"f\", \"grid\": 2147483648, "
                     "\"block\": 1}]}";
  expect_error (grid, strlen (grid), "grid", 1);
  const char *zero = "{\"format\": \"planscope-graph\", \"version\": 1, \"nodes\": [{\"name\": "
                     "\"k\", \"op\": \"kernel\", \"function\": \"f\", \"grid\": [1, 0], "
                     "\"block\": 1}]}";
  expect_error (zero, strlen (zero), "grid", 1);
  /* Numbers a double cannot hold, and negative or huge durations. */
  expect_graph_error (", \"cost_ns\": 1e400", "", "number out of range");
  expect_graph_error (", \"cost_ns\": -1", "", "cost_ns");
  expect_graph_error (", \"stream\": 4294967296", "", "stream");
  /* A duration of 1e300 is a valid number; the simulator clamps it (the
   * pipeline harness checks the timeline stays finite). */
  const char *slow = "{\"format\": \"planscope-graph\", \"version\": 1, \"nodes\": ["
                     "{\"name\": \"a\", \"op\": \"host\", \"cost_ns\": 1.7e308},"
                     "{\"name\": \"b\", \"op\": \"host\", \"cost_ns\": 1.7e308, \"after\": [\"a\"]}]}";
  assert_int_equal (ps_fuzz_pipeline ((const uint8_t *) slow, strlen (slow)), 0);
}

/* A DOT dump of `levels` CUDA graphs, each launching the next one twice
 * (2^(levels - 1) nodes once expanded), with node ids of at least `idlen`
 * bytes. */
static char *
doubling_dump (int levels, int idlen, size_t *len)
{
  size_t cap = (size_t) levels * (3 * (size_t) idlen + 256) + 64;
  char *dot = malloc (cap);
  assert_non_null (dot);
  size_t o = (size_t) snprintf (dot, cap, "digraph dot {\n");
  for (int i = 1; i <= levels; i++) {
    o += (size_t) snprintf (dot + o, cap - o, "subgraph cluster_%d { label=\"graph_%d\";\n", i, i);
    for (int k = 0; k < (i < levels ? 2 : 1); k++) {
      o += (size_t) snprintf (dot + o, cap - o, "\"graph_%d_node_%d_%0*d\"", i, k, idlen, 0);
      if (i < levels)
        o += (size_t) snprintf (dot + o, cap - o, "[shape=\"rectangle\" label=\"%d\ngraph_%d\"];\n",
                                k, i + 1);
      else
        o += (size_t) snprintf (dot + o, cap - o, "[shape=\"octagon\" label=\"0\nk\"];\n");
    }
    o += (size_t) snprintf (dot + o, cap - o, "}\n");
  }
  o += (size_t) snprintf (dot + o, cap - o, "}\n");
  *len = o;
  return dot;
}

static void
core_limits_dot_expansion (void **state)
{
  (void) state;
  /* One graph launching another 4100 times, which has 4100 nodes: 16.8
   * million nodes once expanded, over PS_MAX_NODES.  Refused before
   * anything is expanded. */
  size_t cap = 2 * 4100 * 80 + 256, o;
  char *dot = malloc (cap);
  assert_non_null (dot);
  o = (size_t) snprintf (dot, cap, "digraph dot {\nsubgraph cluster_1 { label=\"graph_1\";\n");
  for (int k = 0; k < 4100; k++)
    o += (size_t) snprintf (dot + o, cap - o,
                            "\"graph_1_node_%d\"[shape=\"rectangle\" label=\"%d\ngraph_2\"];\n", k, k);
  o += (size_t) snprintf (dot + o, cap - o, "}\nsubgraph cluster_2 { label=\"graph_2\";\n");
  for (int k = 0; k < 4100; k++)
    o += (size_t) snprintf (dot + o, cap - o,
                            "\"graph_2_node_%d\"[shape=\"octagon\" label=\"%d\nk\"];\n", k, k);
  o += (size_t) snprintf (dot + o, cap - o, "}\n}\n");
  expect_error (dot, o, "more nodes than the limit", 0);
  free (dot);

  /* 2^21 nodes is within the node limit, but their names (each with the
   * ids of 21 nested instances) would need over 4 GiB, over the 1 GiB that
   * the importer allows for them: refused at once too, with a clear
   * message, rather than after filling memory. */
  size_t len;
  dot = doubling_dump (22, 100, &len);
  expect_error (dot, len, "names of the expanded nodes exceed 1 GiB", 0);
  free (dot);

  /* 2^10 nodes: fine. */
  dot = doubling_dump (11, 1, &len);
  ps_graph g;
  ps_diag d;
  ps_diag_init (&d, "limits.dot");
  assert_int_equal (ps_import_graph_mem (&g, dot, len, "limits.dot", &d), 0);
  assert_int_equal (g.n_nodes, 1024);
  ps_graph_free (&g);
  ps_diag_free (&d);
  free (dot);
}

int
main (void)
{
  const struct CMUnitTest regressions[] = {
    cmocka_unit_test (core_regressions_graph_json),
    cmocka_unit_test (core_regressions_dot),
    cmocka_unit_test (core_regressions_trace),
    cmocka_unit_test (core_regressions_pipeline),
    cmocka_unit_test (core_regressions_device),
  };
  const struct CMUnitTest limits[] = {
    cmocka_unit_test (core_limits_file_size),
    cmocka_unit_test (core_limits_nesting),
    cmocka_unit_test (core_limits_name_length),
    cmocka_unit_test (core_limits_numbers),
    cmocka_unit_test (core_limits_dot_expansion),
  };
  int failed = cmocka_run_group_tests_name ("/core/regressions", regressions, NULL, NULL);
  failed += cmocka_run_group_tests_name ("/core/limits", limits, NULL, NULL);
  return failed;
}
