/* test-loader.c: the JSON graph loader: examples load, bad input gives
 * located errors, hazard edges follow spec/graph-format.md exactly
 * (hand-made cases and a property test against a literal reference), and
 * the whole-file helpers of ps-file.h. */
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
#include <time.h>
#include <unistd.h>

#include "ps-file.h"
#include "ps-gen.h"
#include "ps-graph.h"
#include "ps-import.h"
#include "import/json/ps-json-load.h"
#include "model/ps-graph-private.h"
#include "util/ps-file-private.h"

#ifndef PS_TEST_SOURCE_ROOT
#define PS_TEST_SOURCE_ROOT "."
#endif

static const char *
source_root (void)
{
  const char *s = getenv ("PS_SOURCE_ROOT");
  return s && *s ? s : PS_TEST_SOURCE_ROOT;
}

static int
load (ps_graph *g, ps_diag *d, const char *text)
{
  ps_diag_init (d, "test.json");
  return ps_import_graph_mem (g, text, strlen (text), "test.json", d);
}

static void
print_diag (const ps_diag *d)
{
  ps_diag_print (d, stderr);
}

/* What d says, as printed, into *out (free it). */
static void
diag_text (const ps_diag *d, char **out)
{
  size_t size;
  FILE *f = open_memstream (out, &size);
  assert_non_null (f);
  ps_diag_print (d, f);
  fclose (f);
}

static uint32_t
node_id (const ps_graph *g, const char *name)
{
  for (uint32_t v = 0; v < g->n_nodes; v++)
    if (strcmp (ps_node_name (g, v), name) == 0)
      return v;
  fail_msg ("no node \"%s\"", name);
  return PS_NONE;
}

/* The kind bits of edge u -> v, or 0 when there is none. */
static uint8_t
edge_kind (const ps_graph *g, uint32_t u, uint32_t v)
{
  for (uint32_t i = g->succ_off[u]; i < g->succ_off[u + 1]; i++)
    if (g->succ[i] == v)
      return g->succ_kind[i];
  return 0;
}

static uint8_t
edge (const ps_graph *g, const char *from, const char *to)
{
  return edge_kind (g, node_id (g, from), node_id (g, to));
}

/* Both CSR directions hold the same edges, sorted, without duplicates or
 * self edges, each pointing forward in program order. */
static void
check_csr (const ps_graph *g)
{
  uint32_t n = g->n_nodes;
  assert_int_equal (g->succ_off[0], 0);
  assert_int_equal (g->pred_off[0], 0);
  assert_int_equal (g->succ_off[n], g->n_edges);
  assert_int_equal (g->pred_off[n], g->n_edges);
  for (uint32_t u = 0; u < n; u++) {
    for (uint32_t i = g->succ_off[u]; i < g->succ_off[u + 1]; i++) {
      uint32_t v = g->succ[i];
      assert_true (v > u);
      assert_true (i == g->succ_off[u] || g->succ[i - 1] < v);
      assert_true (g->succ_kind[i] != 0);
      bool found = false;
      for (uint32_t j = g->pred_off[v]; j < g->pred_off[v + 1]; j++)
        if (g->pred[j] == u) {
          assert_int_equal (g->pred_kind[j], g->succ_kind[i]);
          found = true;
        }
      assert_true (found);
    }
    for (uint32_t j = g->pred_off[u]; j < g->pred_off[u + 1]; j++)
      assert_true (j == g->pred_off[u] || g->pred[j - 1] < g->pred[j]);
  }
}

/* Line and column (1-based, ASCII) of the first occurrence of marker. */
static void
position_of (const char *text, const char *marker, uint32_t *line, uint32_t *col)
{
  const char *p = strstr (text, marker);
  if (!p)
    fail_msg ("marker %s not in the input", marker);
  *line = 1;
  *col = 1;
  for (const char *q = text; q < p; q++) {
    if (*q == '\n') {
      (*line)++;
      *col = 1;
    } else {
      (*col)++;
    }
  }
}

/* Loading `text` fails, leaves the graph empty, and one error contains
 * `message` at line:col. */
static void
expect_error_at (const char *text, size_t len, uint32_t line, uint32_t col, const char *message)
{
  ps_graph g;
  memset (&g, 0xab, sizeof g);
  ps_diag d;
  ps_diag_init (&d, "test.json");
  int ret = ps_import_graph_mem (&g, text, len, "test.json", &d);
  bool found = false;
  for (size_t i = 0; i < d.count; i++)
    if (d.entries[i].severity == PS_SEV_ERROR && strstr (d.entries[i].message, message) &&
        d.entries[i].line == line && d.entries[i].col == col)
      found = true;
  if (ret >= 0 || !found) {
    print_diag (&d);
    fail_msg ("expected error at %u:%u containing: %s (ret %d)", line, col, message, ret);
  }
  /* Nothing half-loaded. */
  ps_graph empty;
  ps_graph_init (&empty);
  assert_memory_equal (&g, &empty, sizeof g);
  ps_graph_free (&g);
  ps_diag_free (&d);
}

static void
expect_error (const char *text, const char *marker, const char *message)
{
  uint32_t line, col;
  position_of (text, marker, &line, &col);
  expect_error_at (text, strlen (text), line, col, message);
}

#define HEAD "{\"format\": \"planscope-graph\", \"version\": 1,\n"
#define BUFS                                                                                  \
  "\"buffers\": [{\"name\": \"a\", \"bytes\": 1024}, {\"name\": \"b\", \"bytes\": 1024},\n" \
  "  {\"name\": \"x\", \"bytes\": 64, \"external\": true}],\n"
#define NODES HEAD BUFS "\"nodes\": [\n"
#define KF "{\"name\": \"k\", \"op\": \"kernel\", \"function\": \"f\", "
#define K(name, extra)                                                                       \
  "{\"name\": \"" name "\", \"op\": \"kernel\", \"function\": \"f\", \"grid\": 1, \"block\": 1" \
  extra "}"

/* The example of spec/graph-format.md. */
static const char spec_example[] =
  "{\n"
  "  \"format\": \"planscope-graph\", \"version\": 1, \"name\": \"mlp\",\n"
  "  \"buffers\": [\n"
  "    {\"name\": \"x\", \"bytes\": 4194304, \"external\": true},\n"
  "    {\"name\": \"h\", \"bytes\": 4194304},\n"
  "    {\"name\": \"y\", \"bytes\": 4194304, \"external\": true}\n"
  "  ],\n"
  "  \"nodes\": [\n"
  "    {\"name\": \"upload\", \"op\": \"memcpy\", \"dir\": \"h2d\", \"writes\": [\"x\"]},\n"
  "    {\"name\": \"fc1\", \"op\": \"kernel\", \"function\": \"gemm\", \"grid\": [64,16], "
  "\"block\": 256,\n"
  "     \"reads\": [\"x\"], \"writes\": [\"h\"], \"flops\": 2.1e9},\n"
  "    {\"name\": \"act\", \"op\": \"kernel\", \"function\": \"gelu\", \"impl\": \"gelu\", "
  "\"fusible\": true,\n"
  "     \"grid\": 4096, \"block\": 256, \"reads\": [\"h\"], \"writes\": [\"h\"]},\n"
  "    {\"name\": \"scale\", \"op\": \"kernel\", \"function\": \"scale\", \"impl\": \"scale\", "
  "\"fusible\": true,\n"
  "     \"params\": {\"alpha\": 0.5}, \"grid\": 4096, \"block\": 256, \"reads\": [\"h\"], "
  "\"writes\": [\"y\"]},\n"
  "    {\"name\": \"download\", \"op\": \"memcpy\", \"dir\": \"d2h\", \"reads\": [\"y\"]}\n"
  "  ]\n"
  "}\n";

/* Examples */

static void
core_loader_spec_example (void **state)
{
  ps_graph g;
  ps_diag d;
  int ret = load (&g, &d, spec_example);
  if (ret != 0)
    print_diag (&d);
  assert_int_equal (ret, 0);
  assert_int_equal (d.count, 0);
  assert_string_equal (g.name, "mlp");
  assert_null (g.device);
  assert_string_equal (g.path, "test.json");
  assert_int_equal (g.n_nodes, 5);
  assert_int_equal (g.n_buffers, 3);
  assert_int_equal (g.n_kernels, 3);
  check_csr (&g);

  const ps_node *up = &g.nodes[node_id (&g, "upload")];
  assert_int_equal (up->op, PS_OP_MEMCPY);
  assert_int_equal (up->dir, PS_COPY_H2D);
  assert_int_equal (up->bytes, 4194304); /* defaults to the buffer's size */
  assert_int_equal (up->line, 9);
  assert_int_equal (up->col, 5);
  const ps_node *fc1 = &g.nodes[node_id (&g, "fc1")];
  const ps_kernel *k = &g.kernels[fc1->aux];
  assert_string_equal (ps_graph_str (&g, k->function), "gemm");
  assert_int_equal (k->grid[0], 64);
  assert_int_equal (k->grid[1], 16);
  assert_int_equal (k->grid[2], 1);
  assert_int_equal (k->block[0], 256);
  assert_true (k->flops == 2.1e9);
  assert_true (k->traffic_bytes < 0);
  assert_int_equal (ps_kernel_threads (k), 64 * 16 * 256);
  assert_int_equal (fc1->flags & PS_NODE_FUSIBLE, 0);
  const ps_node *act = &g.nodes[node_id (&g, "act")];
  assert_int_equal (act->impl, PS_IMPL_GELU);
  assert_true (act->flags & PS_NODE_FUSIBLE);
  const ps_node *sc = &g.nodes[node_id (&g, "scale")];
  assert_true (g.kernels[sc->aux].alpha == 0.5);
  assert_true (g.kernels[sc->aux].beta == 0);
  assert_true (g.buffers[0].flags & PS_BUF_EXTERNAL);
  assert_int_equal (g.buffers[1].flags & PS_BUF_EXTERNAL, 0);
  assert_int_equal (g.buffers[1].dtype, PS_DT_F32);

  assert_int_equal (g.n_edges, 4);
  assert_int_equal (edge (&g, "upload", "fc1"), PS_EDGE_RAW);
  assert_int_equal (edge (&g, "fc1", "act"), PS_EDGE_RAW | PS_EDGE_WAW);
  assert_int_equal (edge (&g, "act", "scale"), PS_EDGE_RAW);
  assert_int_equal (edge (&g, "scale", "download"), PS_EDGE_RAW);
  ps_graph_free (&g);
  ps_diag_free (&d);
}

static void
core_loader_examples (void **state)
{
  char dir[4096];
  snprintf (dir, sizeof dir, "%s/data/examples", source_root ());
  DIR *dp = opendir (dir);
  assert_non_null (dp);
  struct dirent *de;
  int n = 0;
  while ((de = readdir (dp))) {
    size_t len = strlen (de->d_name);
    if (len < 6 || strcmp (de->d_name + len - 5, ".json") != 0)
      continue;
    char path[8192];
    snprintf (path, sizeof path, "%s/%s", dir, de->d_name);
    ps_graph g;
    ps_diag d;
    ps_diag_init (&d, path);
    int ret = ps_import_graph_file (&g, path, NULL, &d);
    if (ret != 0 || d.errors)
      print_diag (&d);
    assert_int_equal (ret, 0);
    assert_int_equal (d.errors, 0);
    assert_true (g.n_nodes > 0);
    check_csr (&g);
    ps_graph_free (&g);
    ps_diag_free (&d);
    n++;
  }
  closedir (dp);
  /* The folder may still be filling up; the spec's example is tested on
   * its own above. */
  (void) n;
}

/* Syntax and document errors */

static void
core_loader_syntax_errors (void **state)
{
  expect_error_at ("", 0, 1, 1, "empty");
  const char *trunc = "{\"format\": \"planscope-graph\", \"version\": 1, \"nodes\": [";
  expect_error_at (trunc, strlen (trunc), 1, 55, "end of input");
  const char *bad_utf8 = "{\"format\": \"planscope-graph\",\n \"name\": \"ab\xff\"}";
  expect_error_at (bad_utf8, strlen (bad_utf8), 2, 13, "UTF-8");
  expect_error_at ("[1, 2]", 6, 1, 1, "must be a JSON object");
  expect_error_at ("  \"text\"", 8, 1, 3, "must be a JSON object");
  const char *trailing = HEAD "\"nodes\": [" K ("k", "") "]} @";
  expect_error (trailing, "@", "");
}

static void
core_loader_deep_nesting (void **state)
{
  size_t depth = 100000;
  const char *head = HEAD "\"nodes\": [{\"name\": \"k\", \"op\": \"kernel\", \"params\": ";
  size_t hl = strlen (head);
  char *text = malloc (hl + depth + 1);
  assert_non_null (text);
  memcpy (text, head, hl);
  memset (text + hl, '[', depth);
  text[hl + depth] = '\0';
  clock_t t0 = clock ();
  /* The object, "nodes" and the node are three levels: the 254th bracket
   * of the run opens level 257, one too many. */
  uint32_t line, col;
  position_of (text, "[[[", &line, &col);
  expect_error_at (text, hl + depth, line, col + 253, "nesting");
  assert_true ((double) (clock () - t0) / CLOCKS_PER_SEC < 0.5);
  free (text);
}

static void
core_loader_document_errors (void **state)
{
  expect_error ("{\"format\": \"planscope-plan\", \"version\": 1}", "\"planscope-plan\"",
                "format: expected \"planscope-graph\", got \"planscope-plan\"");
  expect_error ("{\"format\": \"planscope-graph\", \"version\": 2, \"nodes\": []}", "2,",
                "version: unsupported version 2");
  expect_error ("{\"format\": \"planscope-graph\", \"version\": 1.5}", "1.5",
                "unsupported version 1.5");
  expect_error ("{\"version\": 1, \"nodes\": [" K ("k", "") "]}", "{",
                "missing required key \"format\"");
  expect_error (HEAD "\"nodes\": []}", "[]", "nodes: a graph needs at least one node");
  expect_error (HEAD "\"buffer\": [], \"nodes\": [" K ("k", "") "]}", "\"buffer\"",
                "unknown key \"buffer\"; did you mean \"buffers\"?");
  expect_error (HEAD "\"name\": \"a\", \"name\": \"b\", \"nodes\": [" K ("k", "") "]}",
                "\"name\": \"b\"", "duplicate key \"name\"");
  expect_error (HEAD "\"nodes\": {}}", "{}", "nodes: expected an array, got an object");
}

static void
core_loader_buffer_errors (void **state)
{
  expect_error (HEAD "\"buffers\": [{\"name\": \"a\", \"bytes\": 1000000000000000000}],\n"
                     "\"nodes\": [" K ("k", "") "]}",
                "1000000000000000000",
                "buffers[0].bytes: 1000000000000000000 is out of range (1 to 281474976710656)");
  expect_error (HEAD "\"buffers\": [{\"name\": \"a\", \"bytes\": 1e300}],\n"
                     "\"nodes\": [" K ("k", "") "]}",
                "1e300", "is out of range (1 to 281474976710656)");
  expect_error (HEAD "\"buffers\": [{\"name\": \"a\", \"bytes\": 0}],\n"
                     "\"nodes\": [" K ("k", "") "]}",
                "0}", "buffers[0].bytes: 0 is out of range");
  expect_error (HEAD "\"buffers\": [{\"name\": \"a\", \"bytes\": 16.5}],\n"
                     "\"nodes\": [" K ("k", "") "]}",
                "16.5", "buffers[0].bytes: 16.5 is not an integer");
  expect_error (HEAD "\"buffers\": [{\"name\": \"a\"}], \"nodes\": [" K ("k", "") "]}",
                "{\"name\": \"a\"}", "buffers[0]: missing required key \"bytes\"");
  expect_error (HEAD "\"buffers\": [{\"name\": \"a\", \"bytes\": 4},\n"
                     " {\"name\": \"a\", \"bytes\": 8}],"
                     " \"nodes\": [" K ("k", "") "]}",
                "{\"name\": \"a\", \"bytes\": 8}",
                "buffers[1].name: duplicate buffer name \"a\" (first at buffers[0], line 2)");
  expect_error (HEAD "\"buffers\": [{\"name\": \"a\", \"bytes\": 4, \"dtype\": \"f61\"}], "
                     "\"nodes\": [" K ("k", "") "]}",
                "\"f61\"", "buffers[0].dtype: unknown dtype \"f61\"; did you mean");
  expect_error (HEAD "\"buffers\": [{\"name\": \"\", \"bytes\": 4}], \"nodes\": [" K ("k", "") "]}",
                "\"\"", "buffers[0].name: a buffer name must not be empty");
  expect_error (HEAD "\"buffers\": [{\"name\": \"a\\u0000b\", \"bytes\": 4}], \"nodes\": ["
                     K ("k", "") "]}",
                "\"a\\u", "NUL");
  expect_error (HEAD "\"buffers\": [{\"name\": \"a\", \"bytes\": 4, \"external\": 1}], "
                     "\"nodes\": [" K ("k", "") "]}",
                "1}", "buffers[0].external: expected true or false, got a number");

  /* A name one byte over the limit. */
  char *text = malloc (PS_MAX_NAME + 256);
  assert_non_null (text);
  int n = snprintf (text, 256, HEAD "\"buffers\": [{\"name\": \"");
  memset (text + n, 'q', PS_MAX_NAME + 1);
  strcpy (text + n + PS_MAX_NAME + 1, "\", \"bytes\": 4}], \"nodes\": [" K ("k", "") "]}");
  expect_error (text, "\"qqq", "a buffer name is longer than 4096 bytes");
  free (text);
}

/* A node's error names the node, not only its index: a memcpy without its
 * target in a file of many nodes is found by name (the hostile input is a
 * copy with no "writes"), and so are errors found only once the document
 * is read (an unknown buffer). */
static void
core_loader_errors_name_the_node (void **state)
{
  (void) state;
  char path[4096];
  snprintf (path, sizeof path, "%s/tests/hostile/memcpy-no-target.json", source_root ());
  ps_graph g;
  ps_diag d;
  ps_diag_init (&d, path);
  assert_int_equal (ps_import_graph_file (&g, path, NULL, &d), PS_EINVAL);
  assert_int_equal (d.errors, 1);
  assert_string_equal (d.entries[0].message,
                       "nodes[1]: memcpy \"h2d\" needs 1 write, got 0 (node \"upload_x\")");
  assert_int_equal (d.entries[0].line, 7);
  ps_diag_free (&d);
  expect_error (NODES K ("late", ", \"reads\": [\"nope\"]") "]}", "\"nope\"",
                "nodes[0].reads[0]: unknown buffer \"nope\" (node \"late\")");
  /* Where the message is about the name, it is not repeated. */
  const char *dup = NODES K ("k", "") ",\n" K ("k", "") "]}";
  ps_diag_init (&d, "dup.json");
  assert_int_equal (ps_import_graph_mem (&g, dup, strlen (dup), "dup.json", &d), PS_EINVAL);
  assert_string_equal (d.entries[0].message,
                       "nodes[1].name: duplicate node name \"k\" (first at nodes[0], line 5)");
  ps_diag_free (&d);
}

/* An unknown buffer name is located where it stands in the file, whatever
 * came before it: escapes, characters of several bytes, a byte order mark,
 * CRLF line ends (the loader keeps the name's offset, not its position). */
static void
core_loader_unknown_buffer_positions (void **state)
{
  (void) state;
  /* A name with an escape is decoded in the message. */
  expect_error (NODES K ("k", ", \"reads\": [\"a\", \"n\\u00f6pe\"]") "]}", "\"n\\u00f6",
                "nodes[0].reads[1]: unknown buffer \"n\xc3\xb6pe\"");
  /* Two characters of two bytes before it on its line: two columns less
   * than its byte. */
  static const char utf8[] = NODES "{\"name\": \"k\xc3\xa9\xc3\xa9\", \"op\": \"kernel\", "
                             "\"function\": \"f\", \"grid\": 1, \"block\": 1, "
                             "\"writes\": [\"nope\"]}]}";
  uint32_t line, col;
  position_of (utf8, "\"nope\"", &line, &col);
  expect_error_at (utf8, strlen (utf8), line, col - 2, "nodes[0].writes[0]: unknown buffer \"nope\"");
  /* A byte order mark is not counted; CRLF ends a line. */
  static const char bom[] = "\xef\xbb\xbf{\"format\": \"planscope-graph\", \"version\": 1,\r\n"
                            "\"nodes\": [{\"name\": \"k\", \"op\": \"memset\", \"writes\": "
                            "[\"gone\"]}]}";
  position_of (bom + 3, "\"gone\"", &line, &col);
  assert_int_equal (line, 2);
  expect_error_at (bom, strlen (bom), line, col, "nodes[0].writes[0]: unknown buffer \"gone\"");
  static const char bom1[] = "\xef\xbb\xbf{\"format\": \"planscope-graph\", \"version\": 1, "
                             "\"nodes\": [{\"name\": \"k\", \"op\": \"memset\", \"writes\": "
                             "[\"gone\"]}]}";
  position_of (bom1 + 3, "\"gone\"", &line, &col);
  expect_error_at (bom1, strlen (bom1), 1, col, "nodes[0].writes[0]: unknown buffer \"gone\"");
  /* A condition buffer, and errors in file order on several lines. */
  expect_error (NODES "{\"name\": \"c\", \"op\": \"conditional\", \"condition\": \"nocond\"},\n"
                K ("k", ", \"reads\": [\"a\", \"tmp\"]") "]}",
                "\"nocond\"", "nodes[0].condition: unknown buffer \"nocond\"");
  expect_error (NODES "{\"name\": \"c\", \"op\": \"conditional\", \"condition\": \"nocond\"},\n"
                K ("k", ", \"reads\": [\"a\", \"tmp\"]") "]}",
                "\"tmp\"", "nodes[1].reads[1]: unknown buffer \"tmp\"");
}

static void
core_loader_node_errors (void **state)
{
  expect_error (NODES KF "\"grd\": 1, \"block\": 1}]}",
                "\"grd\"", "nodes[0]: unknown key \"grd\"; did you mean \"grid\"?");
  /* The suggestion comes from the keys of the node's op, even when op
   * comes last. */
  expect_error (NODES "{\"name\": \"c\", \"writes\": [\"a\"], \"dri\": \"h2d\", \"op\": \"memcpy\"}]}",
                "\"dri\"", "unknown key \"dri\"; did you mean \"dir\"?");
  expect_error (NODES K ("k", "") ",\n" K ("k", "") "]}",
                KF "\"grid\": 1, \"block\": 1}]",
                "nodes[1].name: duplicate node name \"k\" (first at nodes[0], line 5)");
  expect_error (NODES K ("k", ", \"reads\": [\"a\", \"tmp\"]") "]}",
                "\"tmp\"", "nodes[0].reads[1]: unknown buffer \"tmp\"");
  expect_error (NODES K ("k", ", \"after\": [\"later\"]") ",\n"
                K ("later", "") "]}",
                "\"later\"]", "nodes[0].after[0]: \"later\" is a later node");
  expect_error (NODES K ("k", ", \"after\": [\"nope\"]") "]}", "\"nope\"",
                "nodes[0].after[0]: unknown node \"nope\"");
  expect_error (NODES K ("m", "") ",\n"
                "{\"name\": \"c\", \"op\": \"conditional\", \"condition\": \"a\", "
                "\"then\": [\"m\"]}]}",
                "\"m\"]", "nodes[1].then[0]: branch member \"m\" is listed before its conditional");
  expect_error (NODES "{\"name\": \"c\", \"op\": \"conditional\", \"condition\": \"a\", "
                "\"else\": [\"z\"]}]}",
                "\"z\"", "nodes[0].else[0]: unknown node \"z\"");
  expect_error (NODES K ("s", ", \"impl\": \"add\", \"reads\": [\"a\"], \"writes\": [\"b\"]") "]}",
                "\"reads\"", "nodes[0]: impl \"add\" needs 2 reads, got 1");
  expect_error (NODES K ("s", ", \"impl\": \"relu\", \"reads\": [\"a\"]") "]}",
                "{\"name\": \"s\"", "nodes[0]: impl \"relu\" needs 1 write, got 0");
  expect_error (NODES "{\"name\": \"k\", \"op\": \"kernal\"}]}", "\"kernal\"",
                "nodes[0].op: unknown op \"kernal\"; did you mean \"kernel\"?");
  expect_error (NODES K ("k", ", \"impl\": \"gelo\"") "]}", "\"gelo\"",
                "nodes[0].impl: unknown impl \"gelo\"; did you mean \"gelu\"?");
  expect_error (NODES "{\"name\": \"w\", \"op\": \"event_wait\", \"event\": \"e\"}]}",
                "\"e\"}", "nodes[0].event: waits for event \"e\", which no earlier node records");
  expect_error (NODES "{\"name\": \"w\", \"op\": \"event_wait\"}]}", "{\"name\": \"w\"",
                "nodes[0]: missing required key \"event\"");
  expect_error (NODES "{\"op\": \"barrier\"}]}", "{\"op\"",
                "nodes[0]: missing required key \"name\"");
  expect_error (NODES KF
                "\"block\": 1}]}",
                "{\"name\": \"k\"", "nodes[0]: missing required key \"grid\"");
}

static void
core_loader_value_errors (void **state)
{
  expect_error (NODES KF
                "\"grid\": 2.5, \"block\": 1}]}",
                "2.5", "nodes[0].grid: 2.5 is not an integer");
  expect_error (NODES KF
                "\"grid\": [4, 0], \"block\": 1}]}",
                "0]", "nodes[0].grid[1]: 0 is out of range (1 to 65535)");
  expect_error (NODES KF
                "\"grid\": [1, 2, 3, 4], \"block\": 1}]}",
                "4]", "nodes[0].grid: has more than 3 components");
  expect_error (NODES KF
                "\"grid\": [], \"block\": 1}]}",
                "[]", "nodes[0].grid: must have 1 to 3 components");
  expect_error (NODES KF
                "\"grid\": 1, \"block\": \"256\"}]}",
                "\"256\"", "nodes[0].block: expected an integer or an array of 1 to 3 integers");
  expect_error (NODES K ("k", ", \"smem\": 4294967296") "]}", "4294967296",
                "nodes[0].smem: 4294967296 is out of range (0 to 4294967295)");
  expect_error (NODES K ("k", ", \"stream\": 64") "]}", "64}",
                "nodes[0].stream: 64 is out of range (0 to 63)");
  expect_error (NODES K ("k", ", \"cost_ns\": -1") "]}", "-1",
                "nodes[0].cost_ns: -1 is negative");
  expect_error (NODES K ("k", ", \"flops\": \"many\"") "]}", "\"many\"",
                "nodes[0].flops: expected a number, got a string");
  expect_error (NODES "{\"name\": \"m\", \"op\": \"memset\", \"value\": 300, "
                "\"writes\": [\"a\"]}]}",
                "300", "nodes[0].value: 300 is out of range (0 to 255)");
  expect_error (NODES "{\"name\": \"m\", \"op\": \"memset\", \"bytes\": 2048, "
                "\"writes\": [\"a\"]}]}",
                "{\"name\": \"m\"", "nodes[0].bytes: 2048 is more than the 1024 bytes of \"a\"");
  expect_error (NODES "{\"name\": \"m\", \"op\": \"memcpy\", \"dir\": \"d2d\", "
                "\"reads\": [\"a\"], \"writes\": [\"x\"]}]}",
                "{\"name\": \"m\"", "copies all 1024 bytes of \"a\" into \"x\" of 64 bytes");
  expect_error (NODES "{\"name\": \"m\", \"op\": \"memcpy\", \"dir\": \"p2p\", "
                "\"src_device\": 0, \"reads\": [\"a\"], \"writes\": [\"b\"]}]}",
                "{\"name\": \"m\"", "nodes[0]: missing required key \"dst_device\"");
  expect_error (NODES "{\"name\": \"m\", \"op\": \"memcpy\", \"dir\": \"d2h\", "
                "\"reads\": [\"a\"], \"writes\": [\"b\"]}]}",
                "\"writes\"", "nodes[0]: memcpy \"d2h\" needs 0 writes, got 1");
  expect_error (NODES "{\"name\": \"m\", \"op\": \"memcpy\", \"dir\": \"h2d\", "
                "\"writes\": [\"a\"], \"src_device\": 1}]}",
                "\"src_device\"", "\"src_device\" is only for \"p2p\" copies");
  expect_error (NODES "{\"name\": \"m\", \"op\": \"memcpy\", \"dir\": \"up\", "
                "\"writes\": [\"a\"]}]}",
                "\"up\"", "nodes[0].dir: unknown dir \"up\"");
  expect_error (NODES "{\"name\": \"h\", \"op\": \"host\", \"fusible\": true}]}",
                "\"fusible\"", "key \"fusible\" does not apply to a host node");
  expect_error (NODES "{\"name\": \"b\", \"op\": \"barrier\", \"reads\": [\"a\"]}]}",
                "\"reads\"", "barrier needs 0 reads, got 1");
  expect_error (NODES K ("k", ", \"impl\": \"relu\", \"reads\": [\"a\"], "
                "\"writes\": [\"b\"], \"params\": {\"alpha\": 2}") "]}",
                "\"alpha\"", "nodes[0].params.alpha: impl \"relu\" has no parameter \"alpha\"");
  expect_error (NODES K ("k", ", \"impl\": \"scale\", \"reads\": [\"a\"], "
                "\"writes\": [\"b\"], \"params\": {\"alpah\": 2}") "]}",
                "\"alpah\"", "unknown parameter \"alpah\"; did you mean \"alpha\"?");
  expect_error (NODES K ("k", ", \"module\": \"k.so\"") "]}", "\"k.so\"",
                "nodes[0].module: a module is a .ptx, .cubin or .cu file");
  expect_error (NODES K ("k", ", \"args\": [{\"i32\": 1}]") "]}", "\"args\"",
                "\"args\" are the arguments of a \"module\" kernel");
  expect_error (NODES K ("k", ", \"module\": \"k.ptx\", \"args\": "
                "[{\"buffer\": \"a\"}, {\"i32\": 3000000000}]") "]}",
                "3000000000", "nodes[0].args[1].i32: 3000000000 is out of range");
  expect_error (NODES K ("k", ", \"module\": \"k.ptx\", \"args\": "
                "[{\"buffer\": \"zz\"}]") "]}",
                "\"zz\"", "nodes[0].args[0].buffer: unknown buffer \"zz\"");
  expect_error (NODES K ("k", ", \"module\": \"k.ptx\", \"args\": "
                "[{\"i32\": 1, \"f32\": 2}]") "]}",
                "\"f32\"", "nodes[0].args[0]: an argument has exactly one key");
  expect_error (NODES K ("k", ", \"impl\": \"spin\"") "]}", "{\"name\": \"k\"",
                "impl \"spin\" needs \"cost_ns\"");
  expect_error (NODES K ("k", ", \"impl\": \"copy\", \"module\": \"m.cu\", "
                "\"reads\": [\"a\"], \"writes\": [\"b\"]") "]}",
                "\"module\"", "either \"impl\" or \"module\"");
  expect_error (NODES K ("k", ", \"grid\": 2") "]}", "\"grid\": 2",
                "duplicate key \"grid\"");
  expect_error (NODES K ("k", "") ",\n"
                "{\"name\": \"c\", \"op\": \"conditional\", \"condition\": \"a\", "
                "\"then\": [\"d\"], \"else\": [\"d\"]},\n" K ("d", "") "]}",
                "{\"name\": \"c\"", "nodes[1].else: \"d\" is in both the then and the else branch");
  expect_error (NODES "{\"name\": \"c\", \"op\": \"conditional\", "
                "\"then\": []}]}",
                "{\"name\": \"c\"", "missing required key \"condition\"");
  expect_error (NODES "{\"name\": \"c\", \"op\": \"conditional\", "
                "\"condition\": \"a\", \"assume\": \"maybe\"}]}",
                "\"maybe\"", "nodes[0].assume: unknown assume \"maybe\"");
}

/* Nodes before buffers: the names resolve at the end, errors keep their
 * positions. */
static void
core_loader_nodes_before_buffers (void **state)
{
  const char *ok = HEAD "\"nodes\": [\n"
                   K ("w", ", \"writes\": [\"a\"]") ",\n"
                   "{\"name\": \"c\", \"op\": \"conditional\", \"condition\": \"a\", "
                   "\"then\": [\"r\"]},\n"
                   K ("r", ", \"reads\": [\"a\"], \"module\": \"m.ptx\", \"args\": [{\"buffer\": "
                      "\"a\"}, {\"f32\": 1.5}]") "],\n"
                   "\"buffers\": [{\"name\": \"a\", \"bytes\": 64}]}";
  ps_graph g;
  ps_diag d;
  int ret = load (&g, &d, ok);
  if (ret)
    print_diag (&d);
  assert_int_equal (ret, 0);
  check_csr (&g);
  assert_int_equal (edge (&g, "w", "c"), PS_EDGE_RAW);
  assert_int_equal (edge (&g, "w", "r"), PS_EDGE_RAW);
  assert_int_equal (edge (&g, "c", "r"), PS_EDGE_BRANCH);
  const ps_node *c = &g.nodes[1];
  assert_int_equal (g.conds[c->aux].condition, 0);
  const ps_kernel *k = &g.kernels[g.nodes[2].aux];
  assert_int_equal (k->args_count, 2);
  assert_int_equal (g.kargs[k->args_begin].kind, PS_KARG_BUFFER);
  assert_int_equal (g.kargs[k->args_begin].v.buffer, 0);
  assert_true (g.kargs[k->args_begin + 1].v.f == 1.5);
  assert_string_equal (ps_graph_str (&g, k->module), "m.ptx");
  ps_graph_free (&g);
  ps_diag_free (&d);

  expect_error (HEAD "\"nodes\": [\n" K ("w", ", \"writes\": [\"a\", \"q\"]") "],\n"
                "\"buffers\": [{\"name\": \"a\", \"bytes\": 64}]}",
                "\"q\"", "nodes[0].writes[1]: unknown buffer \"q\"");
}

/* Warnings */

static void
core_loader_warnings (void **state)
{
  const char *text = NODES      K ("r", ", \"reads\": [\"a\", \"x\"], \"writes\": [\"b\"]") ",\n"
                     K ("r2", ", \"reads\": [\"a\"], \"writes\": [\"b\"]") ",\n"
                     K ("m", ", \"module\": \"m.cubin\", \"fusible\": true") ",\n"
                     K ("s", ", \"impl\": \"spin\", \"cost_ns\": 1000, \"fusible\": true") ",\n"
                     K ("f", ", \"impl\": \"fill\", \"params\": {\"value\": 3}, "
                        "\"writes\": [\"a\"], \"fusible\": true") ",\n"
                     K ("syn", ", \"fusible\": true") "]}";
  ps_graph g;
  ps_diag d;
  int ret = load (&g, &d, text);
  assert_int_equal (ret, 0);
  /* One warning per uninitialised buffer (not for the external x), one per
   * ignored fusible. */
  assert_int_equal (d.errors, 0);
  assert_int_equal (d.warnings, 3);
  bool uninit = false, module = false, spin = false;
  for (size_t i = 0; i < d.count; i++) {
    const ps_diag_entry *e = &d.entries[i];
    assert_int_equal (e->severity, PS_SEV_WARNING);
    if (strstr (e->message, "\"r\" reads buffer \"a\"") && strstr (e->message, "uninitialised")) {
      uninit = true;
      assert_int_equal (e->line, 5);
      assert_int_equal (e->col, 1);
    }
    if (strstr (e->message, "nodes[2].fusible: ignored: kernel \"m\" runs a module"))
      module = true;
    if (strstr (e->message, "nodes[3].fusible: ignored: kernel \"s\" is a spin kernel"))
      spin = true;
  }
  assert_true (uninit && module && spin);
  assert_true (g.nodes[2].flags & PS_NODE_FUSIBLE_IGNORED);
  assert_false (g.nodes[2].flags & PS_NODE_FUSIBLE);
  assert_true (g.nodes[3].flags & PS_NODE_FUSIBLE_IGNORED);
  assert_true (g.nodes[3].flags & PS_NODE_HAS_COST);
  assert_true (g.nodes[3].cost_ns == 1000);
  assert_true (g.nodes[4].flags & PS_NODE_FUSIBLE);
  assert_true (g.kernels[g.nodes[4].aux].value == 3);
  assert_true (g.nodes[5].flags & PS_NODE_FUSIBLE);
  ps_graph_free (&g);
  ps_diag_free (&d);
}

/* Hazard edges on hand-made cases */

static ps_graph
load_ok (const char *text)
{
  ps_graph g;
  ps_diag d;
  int ret = load (&g, &d, text);
  if (ret != 0)
    print_diag (&d);
  assert_int_equal (ret, 0);
  ps_diag_free (&d);
  check_csr (&g);
  return g;
}

static void
core_loader_edges_in_place (void **state)
{
  ps_graph g = load_ok (NODES         K ("w", ", \"writes\": [\"a\"]") ",\n"
                        K ("k", ", \"reads\": [\"a\"], \"writes\": [\"a\"]") ",\n"
                        K ("r", ", \"reads\": [\"a\"]") "]}");
  assert_int_equal (g.n_edges, 2);
  assert_int_equal (edge (&g, "w", "k"), PS_EDGE_RAW | PS_EDGE_WAW);
  assert_int_equal (edge (&g, "k", "r"), PS_EDGE_RAW);
  assert_int_equal (edge (&g, "k", "k"), 0);
  ps_graph_free (&g);
}

static void
core_loader_edges_ping_pong (void **state)
{
  ps_graph g = load_ok (NODES         K ("n0", ", \"writes\": [\"a\"]") ",\n"
                        K ("n1", ", \"reads\": [\"a\"], \"writes\": [\"b\"]") ",\n"
                        K ("n2", ", \"reads\": [\"b\"], \"writes\": [\"a\"]") ",\n"
                        K ("n3", ", \"reads\": [\"a\"], \"writes\": [\"b\"]") "]}");
  assert_int_equal (edge (&g, "n0", "n1"), PS_EDGE_RAW);
  assert_int_equal (edge (&g, "n0", "n2"), PS_EDGE_WAW);
  assert_int_equal (edge (&g, "n1", "n2"), PS_EDGE_RAW | PS_EDGE_WAR);
  assert_int_equal (edge (&g, "n1", "n3"), PS_EDGE_WAW);
  assert_int_equal (edge (&g, "n2", "n3"), PS_EDGE_RAW | PS_EDGE_WAR);
  assert_int_equal (edge (&g, "n0", "n3"), 0);
  assert_int_equal (g.n_edges, 5);
  ps_graph_free (&g);
}

static void
core_loader_edges_war (void **state)
{
  ps_graph g = load_ok (NODES         K ("w", ", \"writes\": [\"a\"]") ",\n"
                        K ("r1", ", \"reads\": [\"a\"]") ",\n"
                        K ("r2", ", \"reads\": [\"a\", \"a\"]") ",\n"
                        K ("r3", ", \"reads\": [\"a\"]") ",\n"
                        K ("w2", ", \"writes\": [\"a\"]") ",\n"
                        K ("r4", ", \"reads\": [\"a\"]") ",\n"
                        K ("w3", ", \"writes\": [\"a\"]") "]}");
  const char *readers[] = { "r1", "r2", "r3" };
  for (int i = 0; i < 3; i++) {
    assert_int_equal (edge (&g, "w", readers[i]), PS_EDGE_RAW);
    assert_int_equal (edge (&g, readers[i], "w2"), PS_EDGE_WAR);
    /* The readers list was cleared by w2's write. */
    assert_int_equal (edge (&g, readers[i], "w3"), 0);
  }
  assert_int_equal (edge (&g, "w", "w2"), PS_EDGE_WAW);
  assert_int_equal (edge (&g, "w2", "r4"), PS_EDGE_RAW);
  assert_int_equal (edge (&g, "r4", "w3"), PS_EDGE_WAR);
  assert_int_equal (edge (&g, "w2", "w3"), PS_EDGE_WAW);
  assert_int_equal (g.n_edges, 3 + 3 + 1 + 1 + 1 + 1);
  ps_graph_free (&g);
}

static void
core_loader_edges_events (void **state)
{
  ps_graph g = load_ok (HEAD "\"nodes\": [\n"
                        "{\"name\": \"rec1\", \"op\": \"event_record\", \"event\": \"e\"},\n"
                        "{\"name\": \"wait1\", \"op\": \"event_wait\", \"event\": \"e\"},\n"
                        "{\"name\": \"recf\", \"op\": \"event_record\", \"event\": \"f\"},\n"
                        "{\"name\": \"rec2\", \"op\": \"event_record\", \"event\": \"e\"},\n"
                        "{\"name\": \"wait2\", \"op\": \"event_wait\", \"event\": \"e\"},\n"
                        "{\"name\": \"waitf\", \"op\": \"event_wait\", \"event\": \"f\"}]}");
  assert_int_equal (g.n_events, 2);
  assert_string_equal (ps_graph_str (&g, g.event_names[0]), "e");
  assert_int_equal (g.nodes[0].aux, 0);
  assert_int_equal (g.nodes[4].aux, 0);
  assert_int_equal (g.nodes[5].aux, 1);
  assert_int_equal (edge (&g, "rec1", "wait1"), PS_EDGE_EVENT);
  assert_int_equal (edge (&g, "rec2", "wait2"), PS_EDGE_EVENT);
  assert_int_equal (edge (&g, "recf", "waitf"), PS_EDGE_EVENT);
  assert_int_equal (edge (&g, "rec1", "wait2"), 0);
  assert_int_equal (g.n_edges, 3);
  ps_graph_free (&g);
}

static void
core_loader_edges_barrier (void **state)
{
  ps_graph g = load_ok (NODES         K ("a", "") ",\n" K ("b", "") ",\n"
                        "{\"name\": \"B1\", \"op\": \"barrier\"},\n"
                        K ("c", "") ",\n" K ("d", "") ",\n"
                        "{\"name\": \"B2\", \"op\": \"barrier\"},\n"
                        K ("e", "") "]}");
  /* The reduced form of ps-graph.h. */
  const char *pairs[][2] = { { "a", "B1" }, { "b", "B1" }, { "B1", "c" }, { "B1", "d" },
                             { "B1", "B2" }, { "c", "B2" }, { "d", "B2" }, { "B2", "e" } };
  for (size_t i = 0; i < sizeof pairs / sizeof *pairs; i++)
    assert_int_equal (edge (&g, pairs[i][0], pairs[i][1]), PS_EDGE_BARRIER);
  assert_int_equal (g.n_edges, 8);
  ps_graph_free (&g);
}

static void
core_loader_edges_conditional (void **state)
{
  ps_graph g = load_ok (NODES         K ("flag", ", \"writes\": [\"a\"]") ",\n"
                        "{\"name\": \"c\", \"op\": \"conditional\", \"condition\": \"a\", "
                        "\"then\": [\"t\"], \"else\": [\"e1\", \"e2\"], \"assume\": \"then\"},\n"
                        K ("t", "") ",\n" K ("e1", "") ",\n" K ("other", "") ",\n"
                        K ("e2", "") "]}");
  uint32_t c = node_id (&g, "c");
  assert_int_equal (edge (&g, "flag", "c"), PS_EDGE_RAW);
  assert_int_equal (edge (&g, "c", "t"), PS_EDGE_BRANCH);
  assert_int_equal (edge (&g, "c", "e1"), PS_EDGE_BRANCH);
  assert_int_equal (edge (&g, "c", "e2"), PS_EDGE_BRANCH);
  assert_int_equal (edge (&g, "c", "other"), 0);
  assert_int_equal (g.n_edges, 4);
  const ps_cond *cd = &g.conds[g.nodes[c].aux];
  assert_int_equal (cd->assume, PS_ASSUME_THEN);
  assert_int_equal (cd->then_count, 1);
  assert_int_equal (cd->else_count, 2);
  assert_int_equal (g.cond_members[cd->else_begin + 1], node_id (&g, "e2"));
  /* The conditional reads its condition. */
  assert_int_equal (g.nodes[c].reads_count, 1);
  assert_int_equal (g.access[g.nodes[c].reads_begin], 0);
  assert_true (g.nodes[node_id (&g, "t")].flags & PS_NODE_IN_THEN);
  assert_true (g.nodes[node_id (&g, "e2")].flags & PS_NODE_IN_ELSE);
  assert_int_equal (g.nodes[node_id (&g, "e1")].cond, c);
  assert_int_equal (g.nodes[node_id (&g, "other")].cond, PS_NONE);
  assert_int_equal (g.nodes[node_id (&g, "other")].flags & (PS_NODE_IN_THEN | PS_NODE_IN_ELSE), 0);
  ps_graph_free (&g);
}

static void
core_loader_edges_after (void **state)
{
  ps_graph g = load_ok (NODES         K ("a", ", \"writes\": [\"a\"]") ",\n" K ("b", "") ",\n"
                        K ("c", ", \"reads\": [\"a\"], \"after\": [\"a\", \"b\", \"a\"]") "]}");
  assert_int_equal (edge (&g, "a", "c"), PS_EDGE_RAW | PS_EDGE_AFTER);
  assert_int_equal (edge (&g, "b", "c"), PS_EDGE_AFTER);
  assert_int_equal (g.n_edges, 2);
  ps_graph_free (&g);
}

/* Property test: random graphs against a literal reading of the rules */

#define PN 40
#define PB 6

typedef struct pgraph {
  int n, nb;
  int op[PN]; /* 0 kernel, 1 host, 2 record, 3 wait, 4 barrier, 5 conditional */
  int nr[PN], r[PN][4], nw[PN], w[PN][3], na[PN], a[PN][3];
  int event[PN], cond_buf[PN];
  int nthen[PN], then_[PN][3], nelse[PN], else_[PN][3];
  bool external[PB];
} pgraph;

static uint64_t rng_state;

static uint32_t
rnd (uint32_t n)
{
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (uint32_t) ((rng_state >> 11) % n);
}

static bool
pg_listed (const pgraph *p, int m)
{
  for (int c = 0; c < m; c++) {
    if (p->op[c] != 5)
      continue;
    for (int i = 0; i < p->nthen[c]; i++)
      if (p->then_[c][i] == m)
        return true;
    for (int i = 0; i < p->nelse[c]; i++)
      if (p->else_[c][i] == m)
        return true;
  }
  return false;
}

static void
pg_random (pgraph *p)
{
  memset (p, 0, sizeof *p);
  p->n = 1 + (int) rnd (PN);
  p->nb = 1 + (int) rnd (PB);
  for (int b = 0; b < p->nb; b++)
    p->external[b] = rnd (4) == 0;
  bool recorded[2] = { false, false };
  for (int v = 0; v < p->n; v++) {
    uint32_t x = rnd (100);
    int op = x < 55 ? 0 : x < 65 ? 1 : x < 75 ? 2 : x < 85 ? 3 : x < 91 ? 4 : 5;
    p->event[v] = (int) rnd (2);
    if (op == 3 && !recorded[p->event[v]])
      op = 2;
    if (op == 2)
      recorded[p->event[v]] = true;
    p->op[v] = op;
    if (op <= 1) {
      p->nr[v] = (int) rnd (5);
      for (int i = 0; i < p->nr[v]; i++)
        p->r[v][i] = (int) rnd ((uint32_t) p->nb); /* duplicates allowed */
      p->nw[v] = (int) rnd (3);
      for (int i = 0; i < p->nw[v]; i++)
        p->w[v][i] = (int) rnd ((uint32_t) p->nb);
    }
    if (op == 5)
      p->cond_buf[v] = (int) rnd ((uint32_t) p->nb);
    if (v > 0) {
      p->na[v] = (int) rnd (4);
      for (int i = 0; i < p->na[v]; i++)
        p->a[v][i] = (int) rnd ((uint32_t) v);
    }
  }
  /* Branch members: later nodes, each listed at most once overall. */
  for (int c = 0; c < p->n; c++) {
    if (p->op[c] != 5)
      continue;
    for (int m = c + 1; m < p->n; m++) {
      if (rnd (3) != 0 || pg_listed (p, m))
        continue;
      if (rnd (2) && p->nthen[c] < 3)
        p->then_[c][p->nthen[c]++] = m;
      else if (p->nelse[c] < 3)
        p->else_[c][p->nelse[c]++] = m;
    }
  }
}

typedef struct sbuf {
  char *s;
  size_t n, cap;
} sbuf;

static void sb_printf (sbuf *b, const char *fmt, ...)
#if defined(__GNUC__)
  __attribute__ ((format (printf, 2, 3)))
#endif
  ;

static void
sb_printf (sbuf *b, const char *fmt, ...)
{
  va_list ap;
  for (;;) {
    va_start (ap, fmt);
    int k = vsnprintf (b->s + b->n, b->cap - b->n, fmt, ap);
    va_end (ap);
    if ((size_t) k < b->cap - b->n) {
      b->n += (size_t) k;
      return;
    }
    b->cap = b->cap * 2 + (size_t) k + 64;
    b->s = realloc (b->s, b->cap);
    assert_non_null (b->s);
  }
}

static void
sb_list (sbuf *b, const char *key, const char *prefix, const int *v, int n)
{
  sb_printf (b, ", \"%s\": [", key);
  for (int i = 0; i < n; i++)
    sb_printf (b, "%s\"%s%d\"", i ? ", " : "", prefix, v[i]);
  sb_printf (b, "]");
}

static void
pg_json (const pgraph *p, sbuf *b, bool nodes_first)
{
  static const char *const ops[] = { "host", "host", "event_record", "event_wait", "barrier",
                                     "conditional" };
  b->n = 0;
  sb_printf (b, "{\"format\": \"planscope-graph\", \"version\": 1");
  for (int part = 0; part < 2; part++) {
    if ((part == 0) == nodes_first) {
      sb_printf (b, ", \"nodes\": [");
      for (int v = 0; v < p->n; v++) {
        sb_printf (b, "%s\n{\"name\": \"n%d\"", v ? "," : "", v);
        if (p->op[v] == 0)
          sb_printf (b, ", \"function\": \"f\", \"grid\": [2, 2], \"block\": 64");
        if (p->nr[v] || rnd (2))
          sb_list (b, "reads", "b", p->r[v], p->nr[v]);
        if (p->nw[v])
          sb_list (b, "writes", "b", p->w[v], p->nw[v]);
        if (p->na[v])
          sb_list (b, "after", "n", p->a[v], p->na[v]);
        if (p->op[v] == 2 || p->op[v] == 3)
          sb_printf (b, ", \"event\": \"e%d\"", p->event[v]);
        if (p->op[v] == 5) {
          sb_printf (b, ", \"condition\": \"b%d\"", p->cond_buf[v]);
          sb_list (b, "then", "n", p->then_[v], p->nthen[v]);
          if (p->nelse[v] || rnd (2))
            sb_list (b, "else", "n", p->else_[v], p->nelse[v]);
        }
        /* op last: the loader must not depend on key order. */
        sb_printf (b, ", \"op\": \"%s\"}", p->op[v] == 0 ? "kernel" : ops[p->op[v]]);
      }
      sb_printf (b, "]");
    } else {
      sb_printf (b, ", \"buffers\": [");
      for (int i = 0; i < p->nb; i++)
        sb_printf (b, "%s{\"name\": \"b%d\", \"bytes\": %d%s}", i ? ", " : "", i, 64 * (i + 1),
                   p->external[i] ? ", \"external\": true" : "");
      sb_printf (b, "]");
    }
  }
  sb_printf (b, "}\n");
}

static bool
pg_reads (const pgraph *p, int u, int b)
{
  for (int i = 0; i < p->nr[u]; i++)
    if (p->r[u][i] == b)
      return true;
  return p->op[u] == 5 && p->cond_buf[u] == b;
}

static bool
pg_writes (const pgraph *p, int u, int b)
{
  for (int i = 0; i < p->nw[u]; i++)
    if (p->w[u][i] == b)
      return true;
  return false;
}

static int
pg_last_writer (const pgraph *p, int v, int b)
{
  for (int u = v - 1; u >= 0; u--)
    if (pg_writes (p, u, b))
      return u;
  return -1;
}

/* The edges exactly as graph-format.md states them; barriers literal. */
static void
pg_reference (const pgraph *p, uint8_t kind[PN][PN], bool barrier[PN][PN])
{
  memset (kind, 0, sizeof (uint8_t[PN][PN]));
  memset (barrier, 0, sizeof (bool[PN][PN]));
  for (int v = 0; v < p->n; v++) {
    for (int b = 0; b < p->nb; b++) {
      int w = pg_last_writer (p, v, b);
      if (pg_reads (p, v, b) && w >= 0)
        kind[w][v] |= PS_EDGE_RAW;
      if (pg_writes (p, v, b)) {
        if (w >= 0)
          kind[w][v] |= PS_EDGE_WAW;
        for (int u = w + 1; u < v; u++)
          if (pg_reads (p, u, b))
            kind[u][v] |= PS_EDGE_WAR;
      }
    }
    for (int i = 0; i < p->na[v]; i++)
      kind[p->a[v][i]][v] |= PS_EDGE_AFTER;
    if (p->op[v] == 3)
      for (int u = v - 1; u >= 0; u--)
        if (p->op[u] == 2 && p->event[u] == p->event[v]) {
          kind[u][v] |= PS_EDGE_EVENT;
          break;
        }
    if (p->op[v] == 5) {
      for (int i = 0; i < p->nthen[v]; i++)
        kind[v][p->then_[v][i]] |= PS_EDGE_BRANCH;
      for (int i = 0; i < p->nelse[v]; i++)
        kind[v][p->else_[v][i]] |= PS_EDGE_BRANCH;
    }
    if (p->op[v] == 4)
      for (int u = 0; u < p->n; u++)
        if (u != v)
          barrier[u < v ? u : v][u < v ? v : u] = true;
  }
}

/* reach[u]: bit v set when a path u -> ... -> v exists. */
static void
closure (int n, bool adj[PN][PN], uint64_t reach[PN])
{
  for (int u = n - 1; u >= 0; u--) {
    reach[u] = 0;
    for (int v = u + 1; v < n; v++)
      if (adj[u][v])
        reach[u] |= (1ull << v) | reach[v];
  }
}

static void
core_loader_random_graphs (void **state)
{
  sbuf b = { 0 };
  static uint8_t kind[PN][PN];
  static bool bar[PN][PN], adj_ref[PN][PN], adj_got[PN][PN];
  for (int iter = 0; iter < 400; iter++) {
    rng_state = 0x9e3779b97f4a7c15ull * (uint64_t) (iter + 1);
    pgraph p;
    pg_random (&p);
    pg_json (&p, &b, iter % 3 == 0);
    ps_graph g;
    ps_diag d;
    int ret = load (&g, &d, b.s);
    if (ret != 0) {
      print_diag (&d);
      fprintf (stderr, "%s", b.s);
    }
    assert_int_equal (ret, 0);
    assert_int_equal (d.errors, 0);
    assert_int_equal (g.n_nodes, (uint32_t) p.n);
    check_csr (&g);

    pg_reference (&p, kind, bar);
    memset (adj_got, 0, sizeof adj_got);
    for (int u = 0; u < p.n; u++)
      for (int v = 0; v < p.n; v++)
        adj_ref[u][v] = kind[u][v] || bar[u][v];
    for (uint32_t u = 0; u < g.n_nodes; u++)
      for (uint32_t i = g.succ_off[u]; i < g.succ_off[u + 1]; i++) {
        uint32_t v = g.succ[i];
        adj_got[u][v] = true;
        /* Barrier edges are a subset of the literal ones. */
        if (g.succ_kind[i] & PS_EDGE_BARRIER)
          assert_true (bar[u][v]);
      }
    /* Every non-barrier edge exactly, with its kinds. */
    for (int u = 0; u < p.n; u++)
      for (int v = 0; v < p.n; v++) {
        uint8_t got = edge_kind (&g, (uint32_t) u, (uint32_t) v) & (uint8_t) ~PS_EDGE_BARRIER;
        if (got != kind[u][v]) {
          fprintf (stderr, "%s", b.s);
          fail_msg ("iteration %d: edge n%d -> n%d has kinds %#x, expected %#x", iter, u, v, got,
                    kind[u][v]);
        }
      }
    /* The same reachability. */
    uint64_t reach_ref[PN], reach_got[PN];
    closure (p.n, adj_ref, reach_ref);
    closure (p.n, adj_got, reach_got);
    for (int u = 0; u < p.n; u++)
      if (reach_ref[u] != reach_got[u]) {
        fprintf (stderr, "%s", b.s);
        fail_msg ("iteration %d: reachability from n%d differs", iter, u);
      }
    ps_graph_free (&g);
    ps_diag_free (&d);
  }
  free (b.s);
}

/* Files and names */

static int
write_hello (FILE *out, void *ctx)
{
  fputs ((const char *) ctx, out);
  return 0;
}

static int
write_fail (FILE *out, void *ctx)
{
  fputs ("partial", out);
  return PS_EIO;
}

static int
count_files (const char *dir)
{
  DIR *dp = opendir (dir);
  assert_non_null (dp);
  int n = 0;
  struct dirent *de;
  while ((de = readdir (dp)))
    if (strcmp (de->d_name, ".") && strcmp (de->d_name, ".."))
      n++;
  closedir (dp);
  return n;
}

static void
core_loader_files (void **state)
{
  char dir[] = "/tmp/ps-test-loader-XXXXXX";
  assert_non_null (mkdtemp (dir));
  char path[256];
  snprintf (path, sizeof path, "%s/out.json", dir);
  char err[256];
  assert_int_equal (ps_file_write_atomic (path, write_hello, (void *) spec_example, err,
                                          sizeof err), 0);
  /* A failing writer leaves the old file and no temporary behind. */
  assert_int_equal (ps_file_write_atomic (path, write_fail, NULL, err, sizeof err), PS_EIO);
  assert_true (err[0] != '\0');
  assert_int_equal (count_files (dir), 1);
  char *data;
  size_t len;
  ps_diag d;
  ps_diag_init (&d, path);
  assert_int_equal (ps_file_read_all (path, 1 << 20, &data, &len, &d), 0);
  assert_int_equal (len, strlen (spec_example));
  assert_string_equal (data, spec_example);
  free (data);

  /* Once read, the file is an input: no write may replace it, under any
   * of its names, while a new file beside it is written as usual. */
  assert_true (ps_file_is_input (path));
  assert_int_equal (ps_file_write_bytes (path, "x", 1, err, sizeof err), PS_EINVAL);
  assert_non_null (strstr (err, "refusing to write"));
  char link_path[300];
  snprintf (link_path, sizeof link_path, "%s/link.json", dir);
  assert_int_equal (link (path, link_path), 0);
  assert_int_equal (ps_file_write_bytes (link_path, "x", 1, err, sizeof err), PS_EINVAL);
  assert_int_equal (unlink (link_path), 0);
  assert_int_equal (ps_file_read_all (path, 1 << 20, &data, &len, &d), 0);
  assert_string_equal (data, spec_example);
  free (data);
  assert_int_equal (count_files (dir), 1);
  snprintf (link_path, sizeof link_path, "%s/other.json", dir);
  assert_false (ps_file_is_input (link_path));
  assert_int_equal (ps_file_write_bytes (link_path, "xy", 2, err, sizeof err), 0);
  assert_int_equal (ps_file_read_all (link_path, 1 << 20, &data, &len, &d), 0);
  assert_int_equal (len, 2);
  free (data);
  assert_int_equal (unlink (link_path), 0);

  /* A symbolic link stays a link: the file it names is replaced. */
  char target[300], link_to[300];
  snprintf (target, sizeof target, "%s/target.json", dir);
  snprintf (link_to, sizeof link_to, "%s/link-to.json", dir);
  assert_int_equal (symlink ("target.json", link_to), 0);
  assert_int_equal (ps_file_write_bytes (link_to, "abc", 3, err, sizeof err), 0);
  struct stat lst;
  assert_int_equal (lstat (link_to, &lst), 0);
  assert_true (S_ISLNK (lst.st_mode));
  assert_int_equal (ps_file_read_all (target, 1 << 20, &data, &len, &d), 0);
  assert_string_equal (data, "abc");
  free (data);
  assert_int_equal (unlink (link_to), 0);
  assert_int_equal (unlink (target), 0);

  /* A pipe (like /dev/null, a device) is written in place, not replaced
   * by a regular file; a folder is refused. */
  char fifo[300];
  snprintf (fifo, sizeof fifo, "%s/pipe", dir);
  assert_int_equal (mkfifo (fifo, 0600), 0);
  int rfd = open (fifo, O_RDONLY | O_NONBLOCK);
  assert_true (rfd >= 0);
  assert_int_equal (ps_file_write_bytes (fifo, "through", 7, err, sizeof err), 0);
  char got[16] = "";
  assert_int_equal (read (rfd, got, sizeof got - 1), 7);
  assert_string_equal (got, "through");
  close (rfd);
  assert_int_equal (lstat (fifo, &lst), 0);
  assert_true (S_ISFIFO (lst.st_mode));
  assert_int_equal (unlink (fifo), 0);
  assert_int_equal (ps_file_write_bytes (dir, "x", 1, err, sizeof err), PS_EIO);
  assert_non_null (strstr (err, "it is a folder"));

  /* The size limit, and loading through the file. */
  assert_int_equal (ps_file_read_all (path, 10, &data, &len, &d), PS_ELIMIT);
  assert_null (data);
  ps_graph g;
  assert_int_equal (ps_import_graph_file (&g, path, NULL, &d), 0);
  assert_int_equal (g.n_nodes, 5);
  assert_string_equal (g.path, path);
  ps_graph_free (&g);
  ps_diag_free (&d);

  snprintf (path, sizeof path, "%s/missing.json", dir);
  ps_diag_init (&d, path);
  assert_true (ps_import_graph_file (&g, path, NULL, &d) < 0);
  assert_int_equal (d.errors, 1);
  assert_int_equal (d.entries[0].line, 0);
  assert_non_null (strstr (d.entries[0].message, "cannot open"));
  assert_int_equal (g.n_nodes, 0);
  assert_null (g.nodes);
  ps_diag_free (&d);

  snprintf (path, sizeof path, "%s/out.json", dir);
  unlink (path);
  rmdir (dir);
}

static void
write_file (const char *path, const char *text, size_t len)
{
  FILE *f = fopen (path, "wb");
  assert_non_null (f);
  assert_int_equal (fwrite (text, 1, len, f), len);
  assert_int_equal (fclose (f), 0);
}

/* The same text gives the same graph, or the same errors, from a file (read
 * ahead, then streamed) and from memory. */
static void
same_from_file_and_memory (const char *path, const char *text)
{
  write_file (path, text, strlen (text));
  ps_graph a, b;
  ps_diag da, db;
  ps_diag_init (&da, "test.json");
  ps_diag_init (&db, "test.json");
  int ra = ps_import_graph_file (&a, path, NULL, &da);
  int rb = ps_import_graph_mem (&b, text, strlen (text), path, &db);
  assert_int_equal (ra, rb);
  assert_int_equal (da.count, db.count);
  for (size_t i = 0; i < da.count; i++) {
    assert_string_equal (da.entries[i].message, db.entries[i].message);
    assert_int_equal (da.entries[i].line, db.entries[i].line);
    assert_int_equal (da.entries[i].col, db.entries[i].col);
  }
  assert_int_equal (a.n_nodes, b.n_nodes);
  assert_int_equal (a.n_edges, b.n_edges);
  if (ra == 0) {
    assert_memory_equal (a.succ_off, b.succ_off, ((size_t) a.n_nodes + 1) * sizeof *a.succ_off);
    assert_memory_equal (a.succ, b.succ, (size_t) a.n_edges * sizeof *a.succ);
  }
  ps_graph_free (&a);
  ps_graph_free (&b);
  ps_diag_free (&da);
  ps_diag_free (&db);
}

static void
core_loader_file_streaming (void **state)
{
  char dir[] = "/tmp/ps-test-loader-XXXXXX";
  assert_non_null (mkdtemp (dir));
  char path[256];
  snprintf (path, sizeof path, "%s/g.json", dir);

  /* Well past the read-ahead, so that tokens straddle reads. */
  sbuf b = { 0 };
  sb_printf (&b, "\xef\xbb\xbf  {\"format\": \"planscope-graph\", \"version\": 1, \"nodes\": [\n");
  for (int i = 0; i < 3000; i++)
    sb_printf (&b, "%s{\"name\": \"k%d\", \"op\": \"kernel\", \"function\": \"f\", "
               "\"grid\": 1, \"block\": 1, \"reads\": [\"b%d\"], \"writes\": [\"b%d\"]}",
               i ? ",\n" : "", i, i % 2, (i + 1) % 2);
  size_t body = b.n;
  sb_printf (&b, "],\n\"buffers\": [{\"name\": \"b0\", \"bytes\": 64}, "
             "{\"name\": \"b1\", \"bytes\": 64}]}\n");
  assert_true (b.n > 200000);
  same_from_file_and_memory (path, b.s);

  /* An error at the end of it keeps its position. */
  b.n = body;
  sb_printf (&b, ",\n{\"name\": \"last\", \"op\": \"barrier\", \"afterr\": []}]}");
  same_from_file_and_memory (path, b.s);
  ps_diag d;
  ps_graph g;
  ps_diag_init (&d, path);
  assert_int_equal (ps_import_graph_file (&g, path, NULL, &d), PS_EINVAL);
  assert_int_equal (d.entries[0].line, 3002);
  assert_int_equal (d.entries[0].col, 35);
  assert_non_null (
    strstr (d.entries[0].message, "unknown key \"afterr\"; did you mean \"after\"?"));
  ps_diag_free (&d);

  /* Read a piece at a time, names are copied: an escaped one resolves and
   * unknown ones are located as from memory. */
  b.n = body;
  sb_printf (&b, ",\n{\"name\": \"\u00e9\", \"op\": \"kernel\", \"function\": \"f\", "
             "\"grid\": 1, \"block\": 1, \"reads\": [\"b\\u0030\", \"\u00e9b\\u0031\"], "
             "\"writes\": [\"nob\"]}],\n\"buffers\": [{\"name\": \"b0\", \"bytes\": 64}, "
             "{\"name\": \"b1\", \"bytes\": 64}]}\n");
  same_from_file_and_memory (path, b.s);
  ps_diag_init (&d, path);
  assert_int_equal (ps_import_graph_file (&g, path, NULL, &d), PS_EINVAL);
  assert_int_equal (d.count, 2);
  assert_int_equal (d.entries[0].line, 3002);
  assert_int_equal (d.entries[0].col, 92);
  assert_non_null (strstr (d.entries[0].message, "reads[1]: unknown buffer \"\u00e9b1\""));
  assert_int_equal (d.entries[1].col, 116);
  assert_non_null (strstr (d.entries[1].message, "writes[0]: unknown buffer \"nob\""));
  ps_diag_free (&d);

  /* Not an object: read whole, then the same message as from memory. */
  same_from_file_and_memory (path, "\n  [1, 2]\n");
  /* Truncated, and empty. */
  same_from_file_and_memory (path, "{\"format\": \"planscope-graph\", \"nodes\": [");
  same_from_file_and_memory (path, "");
  same_from_file_and_memory (path, "  \n");

  free (b.s);
  unlink (path);
  rmdir (dir);
}

static void
core_loader_names (void **state)
{
  assert_string_equal (ps_op_name (PS_OP_EVENT_RECORD), "event_record");
  assert_string_equal (ps_op_name (PS_OP_CONDITIONAL), "conditional");
  assert_string_equal (ps_impl_name (PS_IMPL_ADD_SCALAR), "add_scalar");
  assert_string_equal (ps_dtype_name (PS_DT_BF16), "bf16");
  assert_string_equal (ps_copy_dir_name (PS_COPY_P2P), "p2p");
  assert_int_equal (ps_dtype_size (PS_DT_F32), 4);
  assert_int_equal (ps_dtype_size (PS_DT_BF16), 2);
  assert_int_equal (ps_dtype_size (PS_DT_U8), 1);
  assert_int_equal (ps_impl_reads (PS_IMPL_GELU), 1);
  assert_int_equal (ps_impl_reads (PS_IMPL_SUB), 2);
  assert_int_equal (ps_impl_reads (PS_IMPL_FILL), 0);
  assert_true (ps_impl_elementwise (PS_IMPL_FILL));
  assert_false (ps_impl_elementwise (PS_IMPL_SPIN));
  assert_false (ps_impl_elementwise (PS_IMPL_NONE));
  ps_kernel k = { .grid = { PS_MAX_GRID_DIM, PS_MAX_GRID_DIM, PS_MAX_GRID_DIM },
                  .block = { 1024, 1, 1 } };
  assert_true (ps_kernel_threads (&k) == UINT64_MAX);
}

/* ---- the nodes array read in two halves (ps-json-split.c) ---- */

/* A document of n nodes with every kind of value the second half of a
 * split nodes array carries: kernels with and without functions, user
 * kernels with buffer and scalar arguments, fusible built-ins, copies,
 * sets, host callbacks with labels, barriers, `after` references, names
 * with escapes (kept decoded, with their positions) and multibyte names
 * (columns count characters).  style 0: one node per line; 1: the whole
 * array on one line; 2: CRLF line ends and ragged whitespace.  With
 * `late_event`, a wait in the second half for an event recorded in the
 * first (the second half cannot read that alone).  `bad`: one node
 * (0: none) near the end names an unknown buffer, an unknown `after`
 * node, or (3) lacks its name. */
static char *
split_doc (uint32_t n, int style, bool late_event, int bad, size_t *len)
{
  char *buf = NULL;
  size_t size = 0;
  FILE *f = open_memstream (&buf, &size);
  assert_non_null (f);
  const char *nl = style == 1 ? " " : style == 2 ? "\r\n" : "\n";
  uint32_t nb = n / 2 + 3;
  fprintf (f, "{\"format\": \"planscope-graph\", \"version\": 1,%s\"buffers\": [%s", nl, nl);
  for (uint32_t j = 0; j < nb; j++)
    fprintf (f, "  {\"name\": \"b%u\", \"bytes\": 4096%s}%s%s", j,
             j < 4 ? ", \"external\": true" : "", j + 1 < nb ? "," : "", nl);
  fprintf (f, "],%s\"nodes\": [%s", nl, nl);
  uint32_t wait_at = late_event ? n - 3 : 2;
  for (uint32_t i = 0; i < n; i++) {
    uint32_t w = i % nb, rd = (i * 7 + 3) % nb;
    const char *ind = style == 2 ? (i % 3 ? "\t " : "") : "  ";
    fprintf (f, "%s{\"name\": \"%s%u\", ", ind, style == 1 ? "n\xc3\xb1" : "n", i);
    if (bad == 3 && i == n - 5)
      fprintf (f, "\"nameless\": 1, ");
    if (bad == 1 && i == n - 4) {
      fprintf (f, "\"op\": \"host\", \"reads\": [\"\\u0062_missing\"]");
    } else if (bad == 2 && i == n - 4) {
      fprintf (f, "\"op\": \"host\", \"after\": [\"no_such_node\"]");
    } else if (i == 1) {
      fprintf (f, "\"op\": \"event_record\", \"event\": \"e\xc3\xa9\"");
    } else if (i == wait_at) {
      fprintf (f, "\"op\": \"event_wait\", \"event\": \"e\xc3\xa9\"");
    } else {
      switch (i % 7) {
      case 0:
        fprintf (f, "\"op\": \"kernel\", \"function\": \"user_k%u\", \"grid\": [4, 2], "
                    "\"block\": 128, \"module\": \"k%u.ptx\", \"args\": [{\"buffer\": \"b%u\"}, "
                    "{\"i32\": %d}, {\"f64\": 0.25}], \"writes\": [\"b%u\"]",
                 i % 3, i % 2, rd, -(int) i, w);
        break;
      case 1:
        fprintf (f, "\"op\": \"kernel\", \"function\": \"relu\", \"impl\": \"relu\", "
                    "\"fusible\": true, \"grid\": 8, \"block\": 256, \"reads\": [\"b%u\"], "
                    "\"writes\": [\"b%u\"]", rd, w);
        break;
      case 2:
        fprintf (f, "\"op\": \"memcpy\", \"dir\": \"d2d\", \"reads\": [\"b%u\"], \"writes\": "
                    "[\"b%u\"], \"cost_ns\": %u.5", rd, w, i);
        break;
      case 3:
        fprintf (f, "\"op\": \"memset\", \"value\": %u, \"writes\": [\"b%u\"]", i % 256, w);
        break;
      case 4:
        fprintf (f, "\"op\": \"host\", \"label\": \"step \xe2\x9c\x93 %u\", \"after\": [\"%s%u\"]",
                 i, style == 1 ? "n\xc3\xb1" : "n", i - 3);
        break;
      case 5:
        fprintf (f, "\"op\": \"kernel\", \"function\": \"\\u0067emm\", \"grid\": 64, "
                    "\"block\": 256, \"flops\": 1e9, \"reads\": [\"\\u0062%u\", \"b%u\"], "
                    "\"writes\": [\"b%u\"], \"stream\": %u", rd, (rd + 1) % nb, w, i % 2);
        break;
      default:
        fprintf (f, "\"op\": \"barrier\"");
        break;
      }
    }
    fprintf (f, "}%s%s", i + 1 < n ? "," : "", i % 5 == 4 || style != 1 ? nl : "");
  }
  fprintf (f, "]}%s", nl);
  assert_int_equal (fclose (f), 0);
  *len = size;
  return buf;
}

static void
assert_same_str (const ps_graph *a, uint32_t x, const ps_graph *b, uint32_t y)
{
  assert_true ((x == PS_NONE) == (y == PS_NONE));
  if (x != PS_NONE)
    assert_string_equal (a->strings + x, b->strings + y);
}

/* Graphs a and b are the same but for the layout of their string pools. */
static void
assert_same_graph (const ps_graph *a, const ps_graph *b)
{
  assert_int_equal (a->n_nodes, b->n_nodes);
  assert_int_equal (a->n_buffers, b->n_buffers);
  assert_int_equal (a->n_events, b->n_events);
  assert_int_equal (a->n_kernels, b->n_kernels);
  assert_int_equal (a->n_conds, b->n_conds);
  assert_int_equal (a->n_access, b->n_access);
  assert_int_equal (a->n_kargs, b->n_kargs);
  assert_int_equal (a->n_edges, b->n_edges);
  for (uint32_t i = 0; i < a->n_buffers; i++) {
    assert_same_str (a, a->buffers[i].name, b, b->buffers[i].name);
    assert_int_equal (a->buffers[i].bytes, b->buffers[i].bytes);
    assert_int_equal (a->buffers[i].line, b->buffers[i].line);
    assert_int_equal (a->buffers[i].col, b->buffers[i].col);
  }
  for (uint32_t v = 0; v < a->n_nodes; v++) {
    const ps_node *x = &a->nodes[v], *y = &b->nodes[v];
    assert_same_str (a, x->name, b, y->name);
    assert_int_equal (x->op, y->op);
    assert_int_equal (x->flags, y->flags);
    assert_int_equal (x->impl, y->impl);
    assert_int_equal (x->dir, y->dir);
    assert_int_equal (x->stream, y->stream);
    assert_int_equal (x->line, y->line);
    assert_int_equal (x->col, y->col);
    assert_int_equal (x->reads_begin, y->reads_begin);
    assert_int_equal (x->reads_count, y->reads_count);
    assert_int_equal (x->writes_begin, y->writes_begin);
    assert_int_equal (x->writes_count, y->writes_count);
    assert_int_equal (x->cond, y->cond);
    assert_int_equal (x->value, y->value);
    assert_int_equal (x->bytes, y->bytes);
    assert_memory_equal (&x->cost_ns, &y->cost_ns, sizeof x->cost_ns);
    if (x->op == PS_OP_HOST)
      assert_same_str (a, x->aux, b, y->aux);
    else
      assert_int_equal (x->aux, y->aux);
  }
  for (uint32_t i = 0; i < a->n_kernels; i++) {
    const ps_kernel *x = &a->kernels[i], *y = &b->kernels[i];
    assert_same_str (a, x->function, b, y->function);
    assert_same_str (a, x->module, b, y->module);
    assert_memory_equal (x->grid, y->grid, sizeof x->grid);
    assert_memory_equal (x->block, y->block, sizeof x->block);
    assert_int_equal (x->args_begin, y->args_begin);
    assert_int_equal (x->args_count, y->args_count);
    assert_memory_equal (&x->flops, &y->flops, sizeof x->flops);
  }
  for (uint32_t i = 0; i < a->n_kargs; i++) {
    assert_int_equal (a->kargs[i].kind, b->kargs[i].kind);
    assert_memory_equal (&a->kargs[i].v, &b->kargs[i].v, sizeof a->kargs[i].v);
  }
  for (uint32_t e = 0; e < a->n_events; e++)
    assert_same_str (a, a->event_names[e], b, b->event_names[e]);
  if (a->n_access)
    assert_memory_equal (a->access, b->access, a->n_access * sizeof *a->access);
  assert_memory_equal (a->succ_off, b->succ_off, (a->n_nodes + 1) * sizeof *a->succ_off);
  assert_memory_equal (a->pred_off, b->pred_off, (a->n_nodes + 1) * sizeof *a->pred_off);
  if (a->n_edges) {
    assert_memory_equal (a->succ, b->succ, a->n_edges * sizeof *a->succ);
    assert_memory_equal (a->succ_kind, b->succ_kind, a->n_edges * sizeof *a->succ_kind);
    assert_memory_equal (a->pred, b->pred, a->n_edges * sizeof *a->pred);
    assert_memory_equal (a->pred_kind, b->pred_kind, a->n_edges * sizeof *a->pred_kind);
  }
}

/* Loads text twice, the loader tuned by tune (false) for the first load
 * and tune (true) for the second, and checks that both give the same
 * result, messages and graph, and that the messages hold `once` (unless
 * NULL) exactly once.  The caller restores what tune changes. */
static void
load_twice (const char *text, size_t len, void (*tune) (bool second), const char *once)
{
  ps_graph one, two;
  ps_diag d1, d2;
  ps_diag_init (&d1, "twice.json");
  ps_diag_init (&d2, "twice.json");
  tune (false);
  int rc1 = ps_import_graph_mem (&one, text, len, "twice.json", &d1);
  tune (true);
  int rc2 = ps_import_graph_mem (&two, text, len, "twice.json", &d2);
  assert_int_equal (rc1, rc2);
  char *m1 = NULL, *m2 = NULL;
  diag_text (&d1, &m1);
  diag_text (&d2, &m2);
  assert_string_equal (m1, m2);
  if (once) {
    size_t said = 0;
    for (const char *at = strstr (m1, once); at; at = strstr (at + 1, once))
      said++;
    assert_int_equal (said, 1);
  }
  if (rc1 == 0)
    assert_same_graph (&one, &two);
  free (m1);
  free (m2);
  ps_diag_free (&d1);
  ps_diag_free (&d2);
  ps_graph_free (&one);
  ps_graph_free (&two);
}

/* Without the split, then with it (its second half appended on one
 * thread, or on two when split_threaded). */
static bool split_threaded;
static size_t splits_before;

static void
tune_split (bool second)
{
  if (second)
    assert_int_equal (ps__json_splits_taken, splits_before);
  ps__json_split_min = second ? 0 : SIZE_MAX;
  ps__json_land_thread_min = split_threaded ? 0 : UINT32_MAX;
}

/* Loads text with and without the split; returns whether the split was
 * taken, after checking that the graphs, or the messages, are the
 * same. */
static bool
load_one_way (const char *text, size_t len, bool threaded)
{
  size_t saved = ps__json_split_min;
  uint32_t land_min = ps__json_land_thread_min;
  split_threaded = threaded;
  splits_before = ps__json_splits_taken;
  load_twice (text, len, tune_split, NULL);
  ps__json_split_min = saved;
  ps__json_land_thread_min = land_min;
  return ps__json_splits_taken > splits_before;
}

static bool
load_both_ways (const char *text, size_t len)
{
  bool taken = load_one_way (text, len, false);
  assert_true (load_one_way (text, len, true) == taken);
  return taken;
}

static void
core_loader_split_halves (void **state)
{
  size_t len;
  for (int style = 0; style < 3; style++) {
    for (uint32_t n = 40; n <= 2000; n *= 7) {
      char *text = split_doc (n, style, false, 0, &len);
      /* The second half is taken, and the graph is the one a single
       * reader makes, positions and all. */
      assert_true (load_both_ways (text, len));
      free (text);
      /* A wait in the second half for an event of the first: read by
       * one loader alone, the same graph. */
      text = split_doc (n, style, true, 0, &len);
      assert_false (load_both_ways (text, len));
      free (text);
    }
    /* Errors found after the halves are joined (unknown names) are
     * located where a single reader locates them; an error inside the
     * second half leaves it to the first loader, with the same
     * messages. */
    for (int bad = 1; bad <= 3; bad++) {
      char *text = split_doc (300, style, false, bad, &len);
      bool taken = load_both_ways (text, len);
      assert_true (taken == (bad != 3));
      free (text);
    }
  }
  /* A guessed boundary that is no boundary (inside an argument list)
   * is dropped; one past a syntax error too; a document cut short. */
  const char *odd[] = {
    "{\"format\": \"planscope-graph\", \"version\": 1, \"buffers\": [{\"name\": \"a\", \"bytes\": 4}],"
    " \"nodes\": [{\"name\": \"k\", \"op\": \"kernel\", \"function\": \"f\", \"grid\": 1, \"block\": 1,"
    " \"module\": \"m.ptx\", \"args\": [{\"i32\": 1}, {\"i32\": 2}, {\"i32\": 3}, {\"i32\": 4}]}]}",
    "{\"format\": \"planscope-graph\", \"version\": 1, \"buffers\": [{\"name\": \"a\", \"bytes\": 4}],"
    " \"nodes\": [{\"name\": \"x\", \"op\": \"barrier\"}, {\"name\": \"y\", \"op\": \"barrier\"},,"
    " {\"name\": \"z\", \"op\": \"barrier\"}, {\"name\": \"w\", \"op\": \"barrier\"}]}",
    "{\"format\": \"planscope-graph\", \"version\": 1, \"nodes\": [{\"name\": \"x\", \"op\": "
    "\"barrier\"}, {\"name\": \"y\", \"op\": \"barrier\"}, {\"name\": \"z\", \"op\": \"barrier\"",
  };
  for (size_t i = 0; i < sizeof odd / sizeof *odd; i++)
    assert_false (load_both_ways (odd[i], strlen (odd[i])));

  /* A graph large enough that its node names are mapped on a second
   * thread: duplicates are still said buffers first, then nodes in file
   * order, then unknown names. */
  char *text = NULL;
  FILE *f = open_memstream (&text, &len);
  fputs ("{\"format\": \"planscope-graph\", \"version\": 1, \"buffers\": [\n"
         "{\"name\": \"b0\", \"bytes\": 64}, {\"name\": \"b1\", \"bytes\": 64},\n"
         "{\"name\": \"b0\", \"bytes\": 64}],\n\"nodes\": [\n", f);
  for (int i = 0; i < 70000; i++)
    fprintf (f, "{\"name\": \"n%d\", \"op\": \"memset\", \"writes\": [\"%s\"]}%s\n",
             i == 40000 ? 7 : i == 60000 ? 5 : i, i == 65000 ? "b9" : i % 2 ? "b1" : "b0",
             i + 1 < 70000 ? "," : "");
  fputs ("]}\n", f);
  fclose (f);
  ps_graph g;
  ps_diag d;
  ps_diag_init (&d, "dups.json");
  assert_int_equal (ps_import_graph_mem (&g, text, len, "dups.json", &d), PS_EINVAL);
  char *msgs = NULL;
  diag_text (&d, &msgs);
  const char *want[] = {
    "dups.json:3:1: error: buffers[2].name: duplicate buffer name \"b0\"",
    "dups.json:40005:1: error: nodes[40000].name: duplicate node name \"n7\" (first at nodes[7], line 12)",
    "dups.json:60005:1: error: nodes[60000].name: duplicate node name \"n5\" (first at nodes[5], line 10)",
    "dups.json:65005:",
  };
  const char *at = msgs;
  for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
    const char *hit = strstr (at, want[i]);
    if (!hit)
      fail_msg ("expected after \"%.60s\": %s\nall:\n%s", at, want[i], msgs);
    at = hit + strlen (want[i]);
  }
  free (msgs);
  free (text);
  ps_diag_free (&d);
  ps_graph_free (&g);
}

/* A document whose first `lead` buffers and nodes are long (long names,
 * labels and reads) and the rest short, or the other way round
 * (`long_last`): a loader that sizes its arrays after the first objects
 * (ps__json_presize) guesses too few objects for the rest, or too many. */
static char *
presize_doc (uint32_t lead, uint32_t n, bool long_last, size_t *len)
{
  char *buf = NULL;
  FILE *f = open_memstream (&buf, len);
  assert_non_null (f);
  char pad[201];
  memset (pad, 'x', 200);
  pad[200] = '\0';
#define PAD(j) (((j) < lead) != long_last ? pad : "")
  fputs ("{\"format\": \"planscope-graph\", \"version\": 1, \"buffers\": [\n", f);
  for (uint32_t j = 0; j < n; j++)
    fprintf (f, "{\"name\": \"b%u%s\", \"bytes\": %u}%s\n", j, PAD (j), 64 + j,
             j + 1 < n ? "," : "");
  fputs ("],\n\"nodes\": [\n", f);
  for (uint32_t i = 0; i < n; i++) {
    uint32_t r = i ? i - 1 : 0, x = n - 1 - i % 3;
    if (i % 3 == 0)
      fprintf (f, "{\"name\": \"h%u%s\", \"op\": \"host\", \"label\": \"l%s\"}", i, PAD (i),
               PAD (i));
    else if (*PAD (i))
      fprintf (f, "{\"name\": \"k%u%s\", \"op\": \"kernel\", \"function\": \"f%u\", "
                  "\"grid\": 1, \"block\": 32, \"reads\": [\"b%u%s\", \"b%u%s\"], "
                  "\"writes\": [\"b%u%s\"]}",
               i, PAD (i), i % 5, r, PAD (r), x, PAD (x), i, PAD (i));
    else
      fprintf (f, "{\"name\": \"k%u\", \"op\": \"kernel\", \"function\": \"f%u\", "
                  "\"grid\": 1, \"block\": 32, \"reads\": [\"b%u%s\"], \"writes\": "
                  "[\"b%u\"]}",
               i, i % 5, r, PAD (r), i);
    fputs (i + 1 < n ? ",\n" : "\n", f);
  }
#undef PAD
  fputs ("]}\n", f);
  fclose (f);
  return buf;
}

/* Loading from memory sizes the arrays after the first objects; a file
 * read a piece at a time does not: the graphs are the same whether the
 * guess was too small or too large, in one loader or two. */
static void
core_loader_presized_arrays (void **state)
{
  for (int long_last = 0; long_last < 2; long_last++) {
    size_t len;
    char *text = presize_doc (1500, 6000, long_last, &len);
    char path[] = "/tmp/planscope-presize-XXXXXX";
    int fd = mkstemp (path);
    assert_true (fd >= 0);
    assert_int_equal (write (fd, text, len), (ssize_t) len);
    close (fd);
    ps_graph one, two;
    ps_diag d1, d2;
    ps_diag_init (&d1, path);
    ps_diag_init (&d2, path);
    assert_int_equal (ps_import_graph_file (&one, path, NULL, &d1), 0);
    assert_int_equal (ps_import_graph_mem (&two, text, len, path, &d2), 0);
    assert_int_equal (one.n_nodes, 6000);
    assert_int_equal (one.n_buffers, 6000);
    assert_same_graph (&one, &two);
    ps_graph_free (&one);
    ps_graph_free (&two);
    ps_diag_free (&d1);
    ps_diag_free (&d2);
    unlink (path);
    assert_true (load_both_ways (text, len));
    free (text);
  }
}

/* ---- edges collected in two halves (ps-graph-edges.c) ---- */

/* n nodes of every kind of dependency, from a seed: kernels reading and
 * writing random buffers among 40 (b0-b4 external; b37 read before its
 * only write at 3n/4 and b38 never written, both read in either half:
 * uninitialised reads said once, in program order), memsets, host
 * callbacks `after` an earlier node anywhere, and conditionals on a
 * buffer with later branch members.  `extra` 1: a barrier in the first
 * half; 2: one in the second; 3: an event recorded in the first half
 * and waited for in the second; 4: both in the first. */
static char *
hazard_doc (uint32_t n, uint32_t seed, int extra, size_t *len)
{
  char *buf = NULL;
  FILE *f = open_memstream (&buf, len);
  assert_non_null (f);
  uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
#define RND(m) ((x = x * 6364136223846793005ull + 1442695040888963407ull), (uint32_t) ((x >> 33) % (m)))
  fputs ("{\"format\": \"planscope-graph\", \"version\": 1, \"buffers\": [\n", f);
  for (uint32_t j = 0; j < 40; j++)
    fprintf (f, "{\"name\": \"b%u\", \"bytes\": 256%s}%s\n", j, j < 5 ? ", \"external\": true" : "",
             j + 1 < 40 ? "," : "");
  fputs ("],\n\"nodes\": [\n", f);
  uint8_t *member = calloc (n, 1);
  assert_non_null (member);
  for (uint32_t i = 0; i < n; i++) {
    fprintf (f, "{\"name\": \"n%u\", ", i);
    if ((extra == 1 && i == n / 4) || (extra == 2 && i == 3 * n / 4)) {
      fputs ("\"op\": \"barrier\"", f);
    } else if ((extra == 3 || extra == 4) && i == n / 8) {
      fputs ("\"op\": \"event_record\", \"event\": \"e\"", f);
    } else if ((extra == 3 && i == 5 * n / 8) || (extra == 4 && i == n / 4)) {
      fputs ("\"op\": \"event_wait\", \"event\": \"e\"", f);
    } else if (i == n / 4 || i == n / 2 + 3 || i == 7 * n / 8) {
      fputs ("\"op\": \"kernel\", \"function\": \"u\", \"grid\": 1, \"block\": 32, "
             "\"reads\": [\"b37\", \"b38\"], \"writes\": [\"b6\"]", f);
    } else if (i == 3 * n / 4) {
      fputs ("\"op\": \"memset\", \"writes\": [\"b37\"]", f);
    } else {
      uint32_t kind = RND (10);
      if (kind < 6) {
        fputs ("\"op\": \"kernel\", \"function\": \"k\", \"grid\": 1, \"block\": 32, "
               "\"reads\": [", f);
        for (uint32_t k = 0, nr = RND (4); k < nr; k++)
          fprintf (f, "%s\"b%u\"", k ? ", " : "", RND (37));
        fputs ("], \"writes\": [", f);
        for (uint32_t k = 0, nw = 1 + RND (2); k < nw; k++)
          fprintf (f, "%s\"b%u\"", k ? ", " : "", 5 + RND (32));
        fputs ("]", f);
      } else if (kind < 7) {
        fprintf (f, "\"op\": \"memset\", \"writes\": [\"b%u\"]", 5 + RND (32));
      } else if (kind < 9 && i > 0) {
        fprintf (f, "\"op\": \"host\", \"after\": [\"n%u\", \"n%u\"]", RND (i), i - 1);
      } else {
        fprintf (f, "\"op\": \"conditional\", \"condition\": \"b%u\", \"then\": [", RND (37));
        uint32_t listed = 0;
        for (uint32_t k = 0; k < 2; k++) {
          uint32_t m = i + 1 + RND (n / 2);
          /* Members of one conditional only, never the extra nodes. */
          if (m >= n || member[m] || m == n / 4 || m == 3 * n / 4 || m == n / 8
              || m == 5 * n / 8)
            continue;
          member[m] = 1;
          fprintf (f, "%s\"n%u\"", listed++ ? ", " : "", m);
        }
        fputs ("]", f);
      }
    }
    fputs (i + 1 < n ? "},\n" : "}\n", f);
  }
#undef RND
  fputs ("]}\n", f);
  fclose (f);
  free (member);
  return buf;
}

/* The second half of the nodes visited for edges in line, then on a
 * second thread. */
static void
tune_halves (bool second)
{
  ps__graph_edges_halves_min = second ? 0 : UINT32_MAX;
}

/* The edges and the warnings are those of one visit in order whether the
 * second half is visited on a second thread or not; a barrier or an
 * event wait across the halves makes it visit in line. */
static void
core_loader_edges_in_halves (void **state)
{
  uint32_t saved = ps__graph_edges_halves_min;
  for (int extra = 0; extra <= 4; extra++)
    for (uint32_t seed = 1; seed <= 6; seed++) {
      size_t len;
      uint32_t n = 150 + 97 * seed;
      char *text = hazard_doc (n, seed, extra, &len);
      size_t taken = ps__graph_edges_halves_taken;
      /* b38 is never written: its first read warns, once. */
      load_twice (text, len, tune_halves, "reads buffer \"b38\", which no earlier node writes");
      ps__graph_edges_halves_min = saved;
      assert_true ((ps__graph_edges_halves_taken > taken) == (extra == 0 || extra == 4));
      ps_graph g;
      ps_diag d;
      assert_int_equal (load (&g, &d, text), 0);
      assert_true (g.n_edges > n / 2);
      ps_graph_free (&g);
      ps_diag_free (&d);
      free (text);
    }
}

/* The record of inputs tells a deleted input from a new file that got its
 * inode, covers standard input and follows an input replaced by rename. */
static void
core_loader_input_identity (void **state)
{
  /* The rule itself, on identities made by hand: a file born later is
   * another file, whatever its device and inode. */
  ps__file_id a = { .dev = 8, .ino = 42, .birth_s = 1000, .birth_ns = 5, .regular = true };
  ps__file_id b = a;
  assert_true (ps__file_id_same (&a, &b));
  b.birth_ns = 6;
  assert_false (ps__file_id_same (&a, &b));
  b = a;
  b.ino = 43;
  assert_false (ps__file_id_same (&a, &b));

  char dir[] = "/tmp/ps-test-inputs-XXXXXX";
  assert_non_null (mkdtemp (dir));
  char in[300], out[300], err[256];
  char *data;
  size_t len;
  ps_diag d;
  ps_diag_init (&d, "inputs");
  /* Read an input, delete it, write a new file beside it: on ext4 the new
   * file gets the freed inode at once.  It is never taken for the input. */
  uint32_t reused = 0;
  for (int round = 0; round < 50; round++) {
    snprintf (in, sizeof in, "%s/in%d.json", dir, round);
    snprintf (out, sizeof out, "%s/out%d.json", dir, round);
    assert_int_equal (ps_file_write_bytes (in, "{}", 2, err, sizeof err), 0);
    assert_int_equal (ps_file_read_all (in, 1 << 20, &data, &len, &d), 0);
    free (data);
    struct stat st_in, st_out;
    assert_int_equal (stat (in, &st_in), 0);
    assert_true (ps_file_is_input (in));
    assert_int_equal (unlink (in), 0);
    assert_int_equal (ps_file_write_bytes (out, "[]", 2, err, sizeof err), 0);
    assert_int_equal (stat (out, &st_out), 0);
    reused += st_out.st_ino == st_in.st_ino;
    assert_false (ps_file_is_input (out));
    /* And it can be written again. */
    assert_int_equal (ps_file_write_bytes (out, "[1]", 3, err, sizeof err), 0);
    assert_int_equal (unlink (out), 0);
  }
  print_message ("inode reused in %u of 50 rounds\n", reused);

  /* An input an editor saves by writing a new file and renaming it over
   * the old one is still the input: its path is. */
  snprintf (in, sizeof in, "%s/edited.json", dir);
  snprintf (out, sizeof out, "%s/.edited.json.new", dir);
  assert_int_equal (ps_file_write_bytes (in, "{}", 2, err, sizeof err), 0);
  assert_int_equal (ps_file_read_all (in, 1 << 20, &data, &len, &d), 0);
  free (data);
  int fd = open (out, O_WRONLY | O_CREAT | O_EXCL, 0644);
  assert_true (fd >= 0);
  assert_int_equal (write (fd, "{\"v\": 2}", 8), 8);
  close (fd);
  assert_int_equal (rename (out, in), 0);
  assert_true (ps_file_is_input (in));
  assert_int_equal (ps_file_write_bytes (in, "x", 1, err, sizeof err), PS_EINVAL);
  assert_int_equal (ps_file_read_all (in, 1 << 20, &data, &len, &d), 0);
  assert_string_equal (data, "{\"v\": 2}");
  free (data);
  assert_int_equal (unlink (in), 0);

  /* A file read as standard input is an input too. */
  snprintf (in, sizeof in, "%s/stdin.json", dir);
  assert_int_equal (ps_file_write_bytes (in, "{}", 2, err, sizeof err), 0);
  int saved = dup (STDIN_FILENO);
  fd = open (in, O_RDONLY);
  assert_true (saved >= 0 && fd >= 0);
  assert_int_equal (dup2 (fd, STDIN_FILENO), STDIN_FILENO);
  close (fd);
  assert_int_equal (ps_file_read_all ("-", 1 << 20, &data, &len, &d), 0);
  assert_int_equal (dup2 (saved, STDIN_FILENO), STDIN_FILENO);
  close (saved);
  assert_int_equal (len, 2);
  free (data);
  assert_true (ps_file_is_input (in));
  assert_int_equal (ps_file_write_bytes (in, "x", 1, err, sizeof err), PS_EINVAL);
  assert_int_equal (unlink (in), 0);

  assert_int_equal (d.errors, 0);
  ps_diag_free (&d);
  assert_int_equal (rmdir (dir), 0);
}

/* A load asks its caller now and then whether to go on, inside its parse
 * and not only between stages: stopped a quarter of the way through a
 * large file (a JSON graph, a CUDA-graph dump, a trace), it ends there
 * with PS_ECANCELED and nothing half-built. */
typedef struct {
  double last;
  unsigned parse_calls;
} stopper;

static bool
stop_at_quarter (void *ctx, const char *stage, double fraction)
{
  stopper *st = ctx;
  if (strcmp (stage, "parse") != 0)
    return true;
  st->parse_calls++;
  st->last = fraction;
  return fraction < 0.25;
}

static void
expect_stopped_early (const char *what, const char *text, size_t len)
{
  ps_graph g;
  ps_diag d;
  ps_diag_init (&d, what);
  stopper st = { 0, 0 };
  d.progress = stop_at_quarter;
  d.progress_ctx = &st;
  int rc = ps_import_graph_mem (&g, text, len, what, &d);
  if (rc != PS_ECANCELED)
    ps_diag_print (&d, stderr);
  assert_int_equal (rc, PS_ECANCELED);
  assert_true (st.parse_calls >= 2);
  assert_true (st.last >= 0.25 && st.last < 0.5);
  assert_int_equal (g.n_nodes, 0);
  assert_null (g.nodes);
  assert_true (d.errors >= 1);
  ps_diag_free (&d);
}

static void
core_loader_cancelled_early (void **state)
{
  (void) state;
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream (&text, &len);
  ps_gen_options o;
  ps_gen_options_init (&o);
  o.nodes = 100000;
  assert_int_equal (ps_gen_write (&o, f), 0);
  fclose (f);
  expect_stopped_early ("big.json", text, len);
  free (text);

  /* A dump: 60,000 nodes in a chain. */
  f = open_memstream (&text, &len);
  fputs ("digraph dot {\nsubgraph cluster_1 {\nlabel=\"graph_1\" graph[style=\"dashed\"];\n", f);
  for (int i = 0; i < 60000; i++)
    fprintf (f, "\"graph_1_node_%d\"[style=\"solid\" shape=\"rectangle\" label=\"%d\nEMPTY\"];\n", i, i);
  for (int i = 1; i < 60000; i++)
    fprintf (f, "\"graph_1_node_%d\" -> \"graph_1_node_%d\";\n", i - 1, i);
  fputs ("}\n}\n", f);
  fclose (f);
  expect_stopped_early ("big.dot", text, len);
  free (text);

  /* A trace of 60,000 kernels. */
  f = open_memstream (&text, &len);
  fputs ("{\"traceEvents\": [\n", f);
  for (int i = 0; i < 60000; i++)
    fprintf (f, "%s{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k%d\", \"pid\": 0, "
                "\"tid\": 7, \"ts\": %d.0, \"dur\": 1.0, \"args\": {\"device\": 0, "
                "\"stream\": 7, \"correlation\": %d}}\n",
             i ? "," : "", i, 2 * i, i + 1);
  fputs ("]}\n", f);
  fclose (f);
  expect_stopped_early ("big-trace.json", text, len);
  free (text);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (core_loader_spec_example),
    cmocka_unit_test (core_loader_examples),
    cmocka_unit_test (core_loader_syntax_errors),
    cmocka_unit_test (core_loader_deep_nesting),
    cmocka_unit_test (core_loader_document_errors),
    cmocka_unit_test (core_loader_buffer_errors),
    cmocka_unit_test (core_loader_unknown_buffer_positions),
    cmocka_unit_test (core_loader_node_errors),
    cmocka_unit_test (core_loader_errors_name_the_node),
    cmocka_unit_test (core_loader_cancelled_early),
    cmocka_unit_test (core_loader_value_errors),
    cmocka_unit_test (core_loader_nodes_before_buffers),
    cmocka_unit_test (core_loader_warnings),
    cmocka_unit_test (core_loader_edges_in_place),
    cmocka_unit_test (core_loader_edges_ping_pong),
    cmocka_unit_test (core_loader_edges_war),
    cmocka_unit_test (core_loader_edges_events),
    cmocka_unit_test (core_loader_edges_barrier),
    cmocka_unit_test (core_loader_edges_conditional),
    cmocka_unit_test (core_loader_edges_after),
    cmocka_unit_test (core_loader_random_graphs),
    cmocka_unit_test (core_loader_files),
    cmocka_unit_test (core_loader_input_identity),
    cmocka_unit_test (core_loader_file_streaming),
    cmocka_unit_test (core_loader_names),
    cmocka_unit_test (core_loader_split_halves),
    cmocka_unit_test (core_loader_presized_arrays),
    cmocka_unit_test (core_loader_edges_in_halves),
  };
  return cmocka_run_group_tests_name ("/core/loader", tests, NULL, NULL);
}
