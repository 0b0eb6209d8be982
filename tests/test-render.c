/* test-render.c: the rendering layer: every view exports to every format
 * for every example and real CUDA-graph dump (SVG that parses as XML and
 * names the nodes, PNG that decodes, DOT that Graphviz reads and lays out,
 * JSON documents of the right kind); the DAG view's structure (fused groups
 * framed, cross-stream edges dashed, the critical path marked, no boxes on
 * top of each other); large graphs collapse within their limits and fast;
 * text fitting, symbol names and escaping of hostile names. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cairo.h>

#include "ps-canvas.h"
#include "ps-dag-view.h"
#include "ps-draw.h"
#include "ps-export.h"
#include "ps-file.h"
#include "ps-format.h"
#include "ps-gen.h"
#include "ps-import.h"
#include "ps-json.h"
#include "ps-layout.h"
#include "ps-plan-view.h"
#include "ps-scene.h"
#include "ps-sim.h"
#include "ps-style.h"
#include "ps-demangle.h"
#include "ps-test-cli.h"
#include "ps-test-data.h"

#ifndef PS_TEST_SOURCE_ROOT
#define PS_TEST_SOURCE_ROOT "."
#endif

#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#else
#define SANITIZED 0
#endif

static double
now (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

static char tmp_dir[256];

static int
setup_tmp (void **state)
{
  (void) state;
  snprintf (tmp_dir, sizeof tmp_dir, "/tmp/planscope-render-XXXXXX");
  return mkdtemp (tmp_dir) ? 0 : -1;
}

static int
teardown_tmp (void **state)
{
  (void) state;
  DIR *d = opendir (tmp_dir);
  if (d) {
    struct dirent *e;
    char path[600];
    while ((e = readdir (d)))
      if (e->d_name[0] != '.') {
        snprintf (path, sizeof path, "%s/%s", tmp_dir, e->d_name);
        unlink (path);
      }
    closedir (d);
  }
  rmdir (tmp_dir);
  return 0;
}

static char *
read_file (const char *path, size_t *len)
{
  /* With stdio, not ps_file_read_all: what a test reads back of an output
   * must not become an input of the run, which later writes to that path
   * would be refused for. */
  FILE *f = fopen (path, "rb");
  assert_non_null (f);
  assert_int_equal (fseek (f, 0, SEEK_END), 0);
  long n = ftell (f);
  assert_true (n >= 0);
  rewind (f);
  char *data = malloc ((size_t) n + 1);
  assert_non_null (data);
  assert_int_equal (fread (data, 1, (size_t) n, f), (size_t) n);
  fclose (f);
  data[n] = '\0';
  *len = (size_t) n;
  return data;
}


/* ---- format checks ---------------------------------------------------- */

static bool
valid_utf8 (const unsigned char *s, size_t n)
{
  for (size_t i = 0; i < n;) {
    unsigned c = s[i];
    size_t k = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3
                            : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    if (k == 0 || i + k > n)
      return false;
    for (size_t j = 1; j < k; j++)
      if ((s[i + j] & 0xc0) != 0x80)
        return false;
    i += k;
  }
  return true;
}

/* A small well-formedness check: one root element, every tag closed in
 * order, attribute values quoted, entities known, no stray '<' or '&'. */
static void
check_xml (const char *s, size_t n, const char *what)
{
  if (!valid_utf8 ((const unsigned char *) s, n))
    fail_msg ("%s: not UTF-8", what);
  size_t stack[256];
  int depth = 0, roots = 0;
  for (size_t i = 0; i < n;) {
    if (s[i] == '&') {
      static const char *const ent[] = { "&amp;", "&lt;", "&gt;", "&quot;", "&apos;" };
      bool ok = false;
      for (int k = 0; k < 5 && !ok; k++)
        ok = strncmp (s + i, ent[k], strlen (ent[k])) == 0;
      if (!ok)
        fail_msg ("%s: bad entity at %zu", what, i);
      i++;
      continue;
    }
    if (s[i] == '>')
      fail_msg ("%s: stray '>' at %zu", what, i);
    if (s[i] != '<') {
      if (depth == 0 && s[i] != ' ' && s[i] != '\n' && s[i] != '\r' && s[i] != '\t')
        fail_msg ("%s: text outside the root at %zu", what, i);
      i++;
      continue;
    }
    if (strncmp (s + i, "<?", 2) == 0) {
      const char *e = strstr (s + i, "?>");
      assert_non_null (e);
      i = (size_t) (e - s) + 2;
      continue;
    }
    if (strncmp (s + i, "<!--", 4) == 0) {
      const char *e = strstr (s + i, "-->");
      assert_non_null (e);
      i = (size_t) (e - s) + 3;
      continue;
    }
    bool closing = s[i + 1] == '/';
    size_t name = i + 1 + closing, j = name;
    while (j < n && s[j] != ' ' && s[j] != '>' && s[j] != '/' && s[j] != '\n')
      j++;
    size_t name_len = j - name;
    if (name_len == 0)
      fail_msg ("%s: empty tag name at %zu", what, i);
    bool self = false;
    while (j < n && s[j] != '>') {
      if (s[j] == '"') {
        const char *q = memchr (s + j + 1, '"', n - j - 1);
        if (!q)
          fail_msg ("%s: unterminated attribute at %zu", what, j);
        for (const char *c = s + j + 1; c < q; c++)
          if (*c == '<')
            fail_msg ("%s: '<' in an attribute at %zu", what, (size_t) (c - s));
        j = (size_t) (q - s) + 1;
        continue;
      }
      if (s[j] == '=' && s[j + 1] != '"')
        fail_msg ("%s: unquoted attribute at %zu", what, j);
      if (s[j] == '/' && s[j + 1] == '>')
        self = true;
      j++;
    }
    if (j >= n)
      fail_msg ("%s: unterminated tag at %zu", what, i);
    if (closing) {
      if (depth == 0)
        fail_msg ("%s: close without open at %zu", what, i);
      size_t open = stack[--depth];
      size_t open_len = strcspn (s + open, " >/\n");
      if (open_len != name_len || strncmp (s + open, s + name, name_len) != 0)
        fail_msg ("%s: </%.*s> closes <%.*s>", what, (int) name_len, s + name, (int) open_len,
                  s + open);
    } else if (!self) {
      if (depth == 0)
        roots++;
      if (depth == 256)
        fail_msg ("%s: nested too deep", what);
      stack[depth++] = name;
    } else if (depth == 0) {
      roots++;
    }
    i = j + 1;
  }
  if (depth != 0 || roots != 1)
    fail_msg ("%s: %d unclosed elements, %d roots", what, depth, roots);
}

/* The XML form of a name, as the SVG writer escapes it. */
static void
xml_escape (const char *in, char *out, size_t cap)
{
  size_t n = 0;
  for (; *in && n + 8 < cap; in++) {
    const char *r = *in == '&' ? "&amp;" : *in == '<' ? "&lt;" : *in == '>' ? "&gt;"
                    : *in == '"' ? "&quot;" : NULL;
    if (r) {
      memcpy (out + n, r, strlen (r));
      n += strlen (r);
    } else {
      out[n++] = *in;
    }
  }
  out[n] = '\0';
}

static void
check_png (const char *path)
{
  size_t len;
  char *data = read_file (path, &len);
  assert_true (len > 8 && memcmp (data, "\x89PNG\r\n\x1a\n", 8) == 0);
  free (data);
  cairo_surface_t *s = cairo_image_surface_create_from_png (path);
  if (cairo_surface_status (s) != CAIRO_STATUS_SUCCESS)
    fail_msg ("%s: %s", path, cairo_status_to_string (cairo_surface_status (s)));
  int w = cairo_image_surface_get_width (s), h = cairo_image_surface_get_height (s);
  assert_true (w >= 100 && w <= 16384);
  assert_true (h >= 50 && h <= 16384);
  /* Something was drawn: not every pixel is the white background. */
  cairo_surface_flush (s);
  const unsigned char *px = cairo_image_surface_get_data (s);
  int stride = cairo_image_surface_get_stride (s);
  size_t dark = 0;
  for (int y = 0; y < h; y += 2)
    for (int x = 0; x < w; x += 2) {
      uint32_t v = *(const uint32_t *) (const void *) (px + (size_t) y * stride + 4 * (size_t) x);
      if ((v & 0xffffff) != 0xffffff)
        dark++;
    }
  assert_true (dark > 100);
  cairo_surface_destroy (s);
}

static void
check_dot (const char *path)
{
  size_t len;
  char *data = read_file (path, &len);
  double w = 0, h = 0;
  char err[512];
  int rc = ps_layout_dot_text (data, "dot", &w, &h, err, sizeof err);
  if (rc != 0)
    fail_msg ("%s: %s", path, err);
  assert_true (w > 0 && h > 0);
  free (data);
}

/* Reads a JSON document through, and returns the value of its top-level
 * "format" key (or "trace" when it has "traceEvents"). */
static void
check_json (const char *path, const char *format)
{
  size_t len;
  char *data = read_file (path, &len);
  ps_json_reader r;
  assert_int_equal (ps_json_init_mem (&r, data, len), 0);
  int depth = 0;
  bool want_format = false, found = false;
  for (;;) {
    ps_json_token t = ps_json_next (&r);
    if (t == PS_JSON_ERROR)
      fail_msg ("%s: %s", path, r.error);
    if (t == PS_JSON_EOF)
      break;
    if (t == PS_JSON_OBJECT_BEGIN || t == PS_JSON_ARRAY_BEGIN)
      depth++;
    else if (t == PS_JSON_OBJECT_END || t == PS_JSON_ARRAY_END)
      depth--;
    else if (t == PS_JSON_KEY && depth == 1) {
      want_format = strcmp (r.str, "format") == 0;
      if (strcmp (format, "trace") == 0 && strcmp (r.str, "traceEvents") == 0)
        found = true;
    } else if (t == PS_JSON_STRING && want_format && depth == 1) {
      if (strcmp (r.str, format) == 0)
        found = true;
      want_format = false;
    }
  }
  ps_json_close (&r);
  if (!found)
    fail_msg ("%s: not a %s document", path, format);
  free (data);
}

/* Every node name (dag, plan, timeline) or used buffer name (memory)
 * appears in the SVG, in a label or a tooltip. */
static void
check_svg (const char *path, const ps_plan *p, ps_export_view v)
{
  size_t len;
  char *data = read_file (path, &len);
  check_xml (data, len, path);
  const ps_graph *g = p->graph;
  char esc[2048];
  if (v == PS_EXPORT_MEMORY) {
    for (uint32_t b = 0; b < g->n_buffers; b++) {
      bool used = false;
      for (uint32_t i = 0; i < g->n_access && !used; i++)
        used = g->access[i] == b;
      xml_escape (ps_buffer_name (g, b), esc, sizeof esc);
      if (used && !strstr (data, esc))
        fail_msg ("%s: no buffer \"%s\"", path, esc);
    }
  } else if (g->n_nodes <= 1000) {
    for (uint32_t u = 0; u < g->n_nodes; u++) {
      xml_escape (ps_node_name (g, u), esc, sizeof esc);
      /* Event nodes the plan turned into event steps have no span. */
      ps_op op = (ps_op) g->nodes[u].op;
      if (v == PS_EXPORT_TIMELINE
          && (op == PS_OP_EVENT_RECORD || op == PS_OP_EVENT_WAIT || op == PS_OP_EMPTY))
        continue;
      /* A node titled by its kernel may show by its title alone (a run of
       * spans too thin to draw one by one lists titles). */
      char title[PS_MAX_NAME], esc_title[4096];
      xml_escape (ps_node_title (g, u, title, sizeof title), esc_title, sizeof esc_title);
      if (!strstr (data, esc) && !(ps_node_titled_by_kernel (g, u) && strstr (data, esc_title)))
        fail_msg ("%s: no node \"%s\"", path, esc);
    }
  }
  free (data);
}

static void
export_all (const char *input)
{
  ps_graph g;
  ps_plan p;
  test_load_file (input, &g, &p);
  const char *base = strrchr (input, '/') + 1;
  static const char *const json_format[PS_EXPORT_VIEW__COUNT] = {
    "planscope-layout", "planscope-plan", "planscope-timeline", "planscope-memory"
  };
  for (int v = 0; v < PS_EXPORT_VIEW__COUNT; v++)
    for (int f = 0; f < PS_EXPORT_FORMAT__COUNT; f++) {
      ps_export_options o;
      ps_export_options_init (&o);
      o.view = (ps_export_view) v;
      o.format = (ps_export_format) f;
      char path[600], err[512];
      snprintf (path, sizeof path, "%s/%s-%s.%s", tmp_dir, base, ps_export_view_name (o.view),
                ps_export_format_name (o.format));
      int rc = ps_export_write (&p, &o, path, NULL, err, sizeof err);
      if (rc != 0)
        fail_msg ("%s: %s", path, err);
      switch (o.format) {
      case PS_EXPORT_DOT:
        check_dot (path);
        break;
      case PS_EXPORT_SVG:
        check_svg (path, &p, o.view);
        break;
      case PS_EXPORT_PNG:
        check_png (path);
        break;
      case PS_EXPORT_JSON:
        check_json (path, json_format[v]);
        break;
      default:
        check_json (path, "trace");
        break;
      }
      unlink (path);
    }
  ps_plan_free (&p);
  ps_graph_free (&g);
}

static void
render_export_examples (void **state)
{
  (void) state;
  char dir[600], path[900];
  snprintf (dir, sizeof dir, "%s/data/examples", source_root ());
  DIR *d = opendir (dir);
  assert_non_null (d);
  int n = 0;
  struct dirent *e;
  while ((e = readdir (d))) {
    size_t len = strlen (e->d_name);
    if (len < 6 || strcmp (e->d_name + len - 5, ".json") != 0)
      continue;
    snprintf (path, sizeof path, "%s/%s", dir, e->d_name);
    export_all (path);
    n++;
  }
  closedir (d);
  assert_true (n >= 5);
}

/* A graph without edges (one node): every view in every format, with no
 * sort handed an empty array (UBSan reports qsort (NULL, 0, ...)). */
static void
render_export_one_node (void **state)
{
  (void) state;
  char path[600];
  snprintf (path, sizeof path, "%s/tests/hostile/one-node.json", source_root ());
  export_all (path);
}

static void
render_export_real_dumps (void **state)
{
  (void) state;
  static const char *const dumps[] = { "einsummable_cuda_graph.dot",
                                       "einsummable_cuda_graph_km.dot",
                                       "gputrace_mlx_nested_graph.dot" };
  for (size_t i = 0; i < 3; i++) {
    char path[900];
    snprintf (path, sizeof path, "%s", ps_test_data_dump (dumps[i]));
    export_all (path);
  }
}

/* ---- the DAG view ------------------------------------------------------ */

static const char two_streams[] =
  "{\"format\": \"planscope-graph\", \"version\": 1, \"name\": \"two\",\n"
  " \"buffers\": [{\"name\": \"x\", \"bytes\": 1048576, \"external\": true},\n"
  "   {\"name\": \"a\", \"bytes\": 1048576}, {\"name\": \"b\", \"bytes\": 1048576},\n"
  "   {\"name\": \"c\", \"bytes\": 1048576},\n"
  "   {\"name\": \"y\", \"bytes\": 1048576, \"external\": true}],\n"
  " \"nodes\": [\n"
  "  {\"name\": \"load\", \"op\": \"memcpy\", \"dir\": \"h2d\", \"writes\": [\"x\"],\n"
  "   \"stream\": 0},\n"
  "  {\"name\": \"left\", \"op\": \"kernel\", \"function\": \"gemm\", \"grid\": 64,\n"
  "   \"block\": 256, \"reads\": [\"x\"], \"writes\": [\"a\"], \"stream\": 0,\n"
  "   \"cost_ns\": 50000},\n"
  "  {\"name\": \"right\", \"op\": \"kernel\", \"function\": \"conv\", \"grid\": 64,\n"
  "   \"block\": 256, \"reads\": [\"x\"], \"writes\": [\"b\"], \"stream\": 1,\n"
  "   \"cost_ns\": 5000},\n"
  "  {\"name\": \"act\", \"op\": \"kernel\", \"function\": \"relu\", \"impl\": \"relu\",\n"
  "   \"fusible\": true, \"grid\": 64, \"block\": 256, \"reads\": [\"a\"],\n"
  "   \"writes\": [\"a\"], \"stream\": 0},\n"
  "  {\"name\": \"scale\", \"op\": \"kernel\", \"function\": \"scale\", \"impl\": \"scale\",\n"
  "   \"fusible\": true, \"grid\": 64, \"block\": 256, \"reads\": [\"a\"],\n"
  "   \"writes\": [\"c\"], \"stream\": 0},\n"
  "  {\"name\": \"join\", \"op\": \"kernel\", \"function\": \"add\", \"impl\": \"add\",\n"
  "   \"grid\": 64, \"block\": 256, \"reads\": [\"c\", \"b\"], \"writes\": [\"y\"],\n"
  "   \"stream\": 0},\n"
  "  {\"name\": \"store\", \"op\": \"memcpy\", \"dir\": \"d2h\", \"reads\": [\"y\"],\n"
  "   \"stream\": 0}\n"
  " ]}\n";

static uint32_t
scene_node (const ps_scene *s, const char *label)
{
  for (uint32_t i = 0; i < s->n_nodes; i++)
    if (s->nodes[i].label != PS_NONE && strcmp (s->strings + s->nodes[i].label, label) == 0)
      return i;
  fail_msg ("no box \"%s\"", label);
  return PS_NONE;
}

static const ps_scene_edge *
scene_edge (const ps_scene *s, uint32_t a, uint32_t b)
{
  for (uint32_t e = 0; e < s->n_edges; e++)
    if (s->edges[e].from == a && s->edges[e].to == b)
      return &s->edges[e];
  return NULL;
}

static void
check_no_overlap (const ps_scene *s)
{
  for (uint32_t i = 0; i < s->n_nodes; i++) {
    const ps_scene_node *a = &s->nodes[i];
    assert_true (a->x - a->w / 2 >= -0.5 && a->x + a->w / 2 <= s->width + 0.5);
    assert_true (a->y - a->h / 2 >= -0.5 && a->y + a->h / 2 <= s->height + 0.5);
    for (uint32_t j = i + 1; j < s->n_nodes; j++) {
      const ps_scene_node *b = &s->nodes[j];
      bool apart = fabs (a->x - b->x) >= (a->w + b->w) / 2 - 0.5
                   || fabs (a->y - b->y) >= (a->h + b->h) / 2 - 0.5;
      if (!apart)
        fail_msg ("boxes %u and %u overlap", i, j);
    }
  }
}

/* A simulated run of p on the default device, with its figures. */
typedef struct run {
  ps_device dev;
  ps_timeline tl;
  ps_diagnosis dg;
  ps_figures fig;
} run;

static void
run_plan (run *r, const ps_plan *p)
{
  ps_diag d;
  ps_diag_init (&d, "device");
  assert_int_equal (ps_device_find (&r->dev, NULL, &d), 0);
  ps_diag_free (&d);
  ps_timeline_init (&r->tl, PS_TL_SIMULATED);
  assert_int_equal (ps_simulate (p, &r->dev, &r->tl), 0);
  assert_int_equal (ps_diagnose (&r->dg, &r->tl), 0);
  assert_int_equal (ps_figures_build (&r->fig, p, &r->tl, &r->dg), 0);
}

static void
run_free (run *r)
{
  ps_figures_free (&r->fig);
  ps_diagnosis_free (&r->dg);
  ps_timeline_free (&r->tl);
}

static void
render_dag_structure (void **state)
{
  (void) state;
  ps_graph g;
  ps_plan p;
  test_load ("test.json", two_streams, &g, &p);
  run r;
  run_plan (&r, &p);
  ps_scene s;
  ps_scene_init (&s);
  ps_view_options o;
  ps_view_options_init (&o);
  o.color = PS_COLOR_BY_STREAM;
  o.figures = &r.fig;
  ps_style st;
  ps_view_options_style (&o, &st);
  assert_int_equal (ps_dag_view_build (&s, &g, &p, &o), 0);
  assert_int_equal (s.n_nodes, g.n_nodes);
  char err[256];
  assert_int_equal (ps_layout_scene (&s, err, sizeof err), 0);
  check_no_overlap (&s);

  uint32_t load = scene_node (&s, "load"), left = scene_node (&s, "left");
  uint32_t right = scene_node (&s, "right"), act = scene_node (&s, "act");
  uint32_t scale = scene_node (&s, "scale"), join = scene_node (&s, "join");
  /* Shapes by kind; colours by stream. */
  assert_int_equal (s.nodes[load].shape, PS_SHAPE_PARALLELOGRAM);
  assert_int_equal (s.nodes[left].shape, PS_SHAPE_ROUNDED);
  assert_int_equal (s.nodes[left].fill, ps_style_stream_color (&st, 0));
  assert_int_equal (s.nodes[right].fill, ps_style_stream_color (&st, 1));
  /* The fused pair shares a cluster no other box is in. */
  assert_int_not_equal (s.nodes[act].cluster, PS_NONE);
  assert_int_equal (s.nodes[act].cluster, s.nodes[scale].cluster);
  assert_int_equal (s.nodes[left].cluster, PS_NONE);
  const ps_scene_cluster *cl = &s.clusters[s.nodes[act].cluster];
  assert_true (cl->x0 <= s.nodes[act].x - s.nodes[act].w / 2);
  assert_true (cl->y1 >= s.nodes[scale].y + s.nodes[scale].h / 2);
  /* Dependencies across streams are dashed; the critical path (load,
   * left, act, scale, join, store: left is the long kernel) is red. */
  const ps_scene_edge *cross = scene_edge (&s, load, right);
  assert_non_null (cross);
  assert_int_equal (cross->kind, PS_EDGE_VIEW_CROSS);
  assert_true (cross->flags & PS_SCENE_DASHED);
  assert_false (cross->flags & PS_SCENE_CRITICAL);
  const ps_scene_edge *crit = scene_edge (&s, load, left);
  assert_non_null (crit);
  assert_true (crit->flags & PS_SCENE_CRITICAL);
  assert_true (s.nodes[left].flags & PS_SCENE_CRITICAL);
  assert_false (s.nodes[right].flags & PS_SCENE_CRITICAL);
  assert_int_equal (s.nodes[left].stroke, st.pal->critical);
  /* Splines start at their tail box and end near their head box. */
  for (uint32_t e = 0; e < s.n_edges; e++) {
    const ps_scene_edge *ed = &s.edges[e];
    assert_true (ed->pts_count >= 4 && (ed->pts_count - 1) % 3 == 0);
    const ps_pt *p0 = &s.pts[ed->pts_begin];
    const ps_scene_node *a = &s.nodes[ed->from], *b = &s.nodes[ed->to];
    ps_pt end = ed->has_tip ? ed->tip : s.pts[ed->pts_begin + ed->pts_count - 1];
    assert_true (fabs (p0->x - a->x) <= a->w / 2 + 2 && fabs (p0->y - a->y) <= a->h / 2 + 2);
    assert_true (fabs (end.x - b->x) <= b->w / 2 + 2 && fabs (end.y - b->y) <= b->h / 2 + 2);
  }
  /* Downward: every edge goes from a higher box to a lower one. */
  assert_true (s.nodes[load].y < s.nodes[join].y);
  ps_scene_free (&s);

  /* The plan view: one cluster per stream, stream order and event edges. */
  ps_scene_init (&s);
  assert_int_equal (ps_plan_view_build (&s, &p, NULL), 0);
  assert_int_equal (s.n_clusters, p.streams_used);
  uint32_t events = 0, order = 0;
  for (uint32_t e = 0; e < s.n_edges; e++) {
    events += s.edges[e].kind == PS_EDGE_VIEW_EVENT;
    order += s.edges[e].kind == PS_EDGE_VIEW_ORDER;
    if (s.edges[e].kind == PS_EDGE_VIEW_ORDER)
      assert_int_equal (s.nodes[s.edges[e].from].cluster, s.nodes[s.edges[e].to].cluster);
  }
  assert_true (events >= 2); /* load -> right on stream 1, and back for join */
  assert_int_equal (order, p.n_steps - p.streams_used);
  assert_int_equal (ps_layout_scene (&s, err, sizeof err), 0);
  check_no_overlap (&s);
  ps_scene_free (&s);
  run_free (&r);
  ps_plan_free (&p);
  ps_graph_free (&g);
}

/* ---- large graphs -------------------------------------------------------- */

static void
gen_plan (ps_gen_shape shape, uint32_t nodes, bool extras, ps_graph *g, ps_plan *p)
{
  ps_gen_options go;
  ps_gen_options_init (&go);
  go.shape = shape;
  go.nodes = nodes;
  if (!extras)
    go.events = go.barriers = go.conditionals = go.pins = false;
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream (&text, &len);
  assert_non_null (f);
  assert_int_equal (ps_gen_write (&go, f), 0);
  fclose (f);
  test_load ("gen.json", text, g, p);
  free (text);
}

/* Boxes account for every node exactly once. */
static void
check_counts (const ps_scene *s, uint32_t total)
{
  uint64_t sum = 0;
  for (uint32_t i = 0; i < s->n_nodes; i++) {
    assert_true (s->nodes[i].count >= 1);
    sum += s->nodes[i].count;
  }
  assert_int_equal (sum, total);
}

static void
render_large_graphs (void **state)
{
  (void) state;
  /* collapsed: the DAG view is laid out by Graphviz with fused groups and
   * chains as boxes (else it is the overview grid). */
  static const struct {
    ps_gen_shape shape;
    uint32_t nodes;
    bool extras, collapsed;
  } cases[] = { { PS_GEN_LAYERED, 10000, true, false },
                { PS_GEN_CHAIN, 3000, true, false },
                { PS_GEN_CHAIN, 3000, false, true },
                { PS_GEN_TRANSFORMER, 10000, true, false },
                { PS_GEN_LAYERED, 100000, true, false } };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    if (SANITIZED && cases[c].nodes > 10000)
      continue; /* the same code as 10k; only slower under ASan */
    ps_graph g;
    ps_plan p;
    gen_plan (cases[c].shape, cases[c].nodes, cases[c].extras, &g, &p);
    ps_view_options o;
    ps_view_options_init (&o);
    for (int view = 0; view < 2; view++) {
      ps_scene s;
      ps_scene_init (&s);
      double t0 = now ();
      int rc = view == 0 ? ps_dag_view_build (&s, &g, &p, &o) : ps_plan_view_build (&s, &p, &o);
      assert_int_equal (rc, 0);
      char err[256], path[600];
      assert_int_equal (ps_layout_scene (&s, err, sizeof err), 0);
      snprintf (path, sizeof path, "%s/large.svg", tmp_dir);
      FILE *f = fopen (path, "w");
      assert_non_null (f);
      assert_int_equal (ps_scene_write_svg (&s, f), 0);
      fclose (f);
      double t = now () - t0;
      fprintf (stderr, "  %s %s %u nodes: %u boxes, %u edges, %.3f s (layout %.3f s)\n",
               ps_gen_shape_name (cases[c].shape), view ? "plan" : "dag", g.n_nodes, s.n_nodes,
               s.n_edges, t, s.layout_seconds);
      assert_true (s.n_nodes <= o.max_boxes);
      assert_true (s.n_nodes < (view == 0 ? g.n_nodes : p.n_steps));
      if (view == 0)
        assert_int_equal (s.pinned, !cases[c].collapsed);
      check_counts (&s, view == 0 ? g.n_nodes : p.n_steps);
      size_t len;
      char *svg = read_file (path, &len);
      check_xml (svg, len, "large.svg");
      free (svg);
      unlink (path);
      ps_scene_free (&s);
    }
    ps_plan_free (&p);
    ps_graph_free (&g);
  }
}

/* The SVG export of plan p's `view` coloured by `color`, checked as XML
 * (the file, tmp_dir/name, removed again). */
static char *
export_svg (const ps_plan *p, ps_export_view view, ps_color_by color, const char *name)
{
  char path[600], err[256];
  snprintf (path, sizeof path, "%s/%s", tmp_dir, name);
  ps_export_options eo;
  ps_export_options_init (&eo);
  eo.view = view;
  eo.format = PS_EXPORT_SVG;
  eo.view_options.color = color;
  assert_int_equal (ps_export_write (p, &eo, path, NULL, err, sizeof err), 0);
  size_t len;
  char *svg = read_file (path, &len);
  check_xml (svg, len, name);
  unlink (path);
  return svg;
}

/* A memory map of thousands of buffers draws those under two points as
 * merged runs: far fewer shapes than buffers, a legend that says so, and
 * still every buffer large enough to see on its own. */
static void
render_memory_merges_small_buffers (void **state)
{
  (void) state;
  ps_graph g;
  ps_plan p;
  gen_plan (PS_GEN_LAYERED, 10000, true, &g, &p);
  ps_view_options vo;
  ps_view_options_init (&vo);
  char *svg = export_svg (&p, PS_EXPORT_MEMORY, vo.color, "memory.svg");
  size_t rects = 0, groups = 0;
  for (const char *q = svg; (q = strstr (q, "<rect")); q++)
    rects++;
  for (const char *q = svg; (q = strstr (q, "<title>")); q++)
    groups++;
  fprintf (stderr, "  memory map of %u buffers: %zu rects, %zu titled shapes\n", g.n_buffers,
           rects, groups);
  assert_true (g.n_buffers > 5000);
  /* How many merge depends on where the pool puts the small buffers
   * (packed largest first they sit between large ones, in more cells). */
  assert_true (rects < g.n_buffers * 3 / 5);
  assert_non_null (strstr (svg, "small buffers, merged"));
  assert_non_null (strstr (svg, "drawn merged"));
  free (svg);
  ps_plan_free (&p);
  ps_graph_free (&g);
}

/* Spans too short to draw alone are merged into runs, one row's each.
 * Coloured by stream, a run has its stream's colour (each row's runs one
 * colour, no two rows alike), never a colour of its own that reads as
 * another stream's; coloured by kind, where a run's spans may differ, the
 * runs have the merged colour, which the legend names. */
static void
render_timeline_merged_runs (void **state)
{
  (void) state;
  ps_graph g;
  ps_plan p;
  gen_plan (PS_GEN_LAYERED, 10000, true, &g, &p);
  ps_style light;
  ps_style_init (&light, PS_THEME_LIGHT, PS_COLOR_BY_STREAM);
  for (int mode = 0; mode < 2; mode++) {
    char *svg = export_svg (&p, PS_EXPORT_TIMELINE,
                            mode == 0 ? PS_COLOR_BY_STREAM : PS_COLOR_BY_KIND, "timeline.svg");
    /* Each run: its row (the rect's y) and fill. */
    struct {
      int y;
      unsigned fill;
    } rows[64];
    uint32_t n_rows = 0, runs = 0;
    for (const char *q = svg; (q = strstr (q, "<title>")); q++) {
      unsigned n;
      int used = 0;
      if (sscanf (q, "<title>%u short span%n", &n, &used) != 1 || used == 0)
        continue;
      const char *r = strstr (q, "<rect");
      assert_non_null (r);
      int y;
      unsigned fill;
      const char *ys = strstr (r, " y=\""), *fs = strstr (r, " fill=\"#");
      assert_non_null (ys);
      assert_non_null (fs);
      assert_int_equal (sscanf (ys, " y=\"%d", &y), 1);
      assert_int_equal (sscanf (fs, " fill=\"#%x", &fill), 1);
      runs++;
      uint32_t k = 0;
      while (k < n_rows && rows[k].y != y)
        k++;
      if (k == n_rows) {
        assert_true (n_rows < 64);
        rows[n_rows].y = y;
        rows[n_rows++].fill = fill;
      }
      if (mode == 0)
        assert_int_equal (rows[k].fill, fill); /* one colour a row */
      else
        assert_int_equal (fill, light.pal->merged_fill);
    }
    fprintf (stderr, "  timeline by %s: %u merged runs on %u rows\n", mode ? "kind" : "stream",
             runs, n_rows);
    assert_true (runs > 10 && n_rows >= 2);
    for (uint32_t a = 0; mode == 0 && a < n_rows; a++) {
      bool a_stream = false;
      for (int32_t k = 0; k < (int32_t) p.streams_used; k++)
        a_stream |= rows[a].fill == ps_style_stream_color (&light, k);
      assert_true (a_stream);
      for (uint32_t b = a + 1; b < n_rows; b++)
        assert_true (rows[a].fill != rows[b].fill);
    }
    assert_true ((strstr (svg, "merged short spans") != NULL) == (mode == 1));
    free (svg);
  }
  ps_plan_free (&p);
  ps_graph_free (&g);
}

/* ---- text, names and escaping ---------------------------------------------- */

static void
render_text_and_names (void **state)
{
  (void) state;
  ps_font f = { 10, false, false };
  char buf[256];
  const char *long_name = "a_really_long_kernel_name_that_does_not_fit_in_a_box";
  double full = ps_text_width (long_name, &f);
  assert_true (full > 100);
  const char *cut = ps_text_fit (long_name, &f, 100, buf, sizeof buf);
  assert_true (ps_text_width (cut, &f) <= 100);
  assert_true (strlen (cut) > 10);
  assert_string_equal (cut + strlen (cut) - 3, "\xe2\x80\xa6");
  assert_true (strncmp (cut, long_name, strlen (cut) - 3) == 0);
  assert_string_equal (ps_text_fit ("short", &f, 100, buf, sizeof buf), "short");
  /* Never cut inside a UTF-8 character. */
  cut = ps_text_fit ("\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", &f, 25,
                     buf, sizeof buf);
  assert_true (valid_utf8 ((const unsigned char *) cut, strlen (cut)));

  /* Kernel names for people: libiberty's demangler, when built with it. */
  char sym[512];
  if (ps_demangle_available ()) {
    assert_string_equal (ps_demangle ("_Z10exp_kernelPKfPfi", false, sym, sizeof sym),
                         "exp_kernel");
    assert_string_equal (ps_demangle ("_Z10exp_kernelPKfPfi", true, sym, sizeof sym),
                         "exp_kernel(float const*, float*, int)");
    assert_string_equal (ps_demangle ("_ZN3mlx4core2cu6copy_sIiijLi4EEEvPKT_PT0_T1_", false, sym,
                                      sizeof sym),
                         "mlx::core::cu::copy_s<int, int, unsigned int, 4>");
  }
  assert_string_equal (ps_demangle ("cudnn_generated_fort", false, sym, sizeof sym),
                       "cudnn_generated_fort");
  assert_string_equal (ps_demangle ("_Z999bad", false, sym, sizeof sym), "_Z999bad");
  assert_string_equal (ps_format_duration (850, buf, sizeof buf), "850 ns");
  assert_string_equal (ps_format_duration (12345, buf, sizeof buf), "12.3 \xc2\xb5s");
  assert_string_equal (ps_format_duration (1.2e6, buf, sizeof buf), "1.20 ms");
  assert_string_equal (ps_format_bytes (4194304, buf, sizeof buf), "4 MiB");
  assert_string_equal (ps_format_bytes (1536, buf, sizeof buf), "1.50 KiB");

  /* Graphviz rejects what is not DOT, so the DOT checks above can fail. */
  double w, h;
  char err[256];
  assert_int_not_equal (ps_layout_dot_text ("digraph { a -> ", "dot", &w, &h, err, sizeof err), 0);
  assert_true (strlen (err) > 0);
}

static void
render_hostile_names (void **state)
{
  (void) state;
  /* Quotes, backslashes, markup, line breaks and UTF-8 in names; a DOT
   * import adds bytes that are not UTF-8 at all. */
  static const char json[] =
    "{\"format\": \"planscope-graph\", \"version\": 1, \"name\": \"q\\\"<&>\",\n"
    " \"buffers\": [{\"name\": \"b<&>\\\"\", \"bytes\": 4096}],\n"
    " \"nodes\": [\n"
    "  {\"name\": \"k\\\"1\\\\\", \"op\": \"kernel\", \"function\": \"f<T>&\", \"grid\": 1, "
    "\"block\": 1, \"writes\": [\"b<&>\\\"\"]},\n"
    "  {\"name\": \"caf\\u00e9\\nline\", \"op\": \"memset\", \"writes\": [\"b<&>\\\"\"]},\n"
    "  {\"name\": \"]]></svg><x a='\", \"op\": \"host\", \"reads\": [\"b<&>\\\"\"]}\n"
    " ]}\n";
  static const char dot[] =
    "digraph dot { \"n\xff\xfe\" [shape=octagon label=\"0\n_Z1k\xc3\"]; \"m\\\"x\" [shape=octagon "
    "label=\"1\nk<2>\"]; \"n\xff\xfe\" -> \"m\\\"x\"; }";
  for (int k = 0; k < 2; k++) {
    ps_graph g;
    ps_plan p;
    test_load ("test.json", k == 0 ? json : dot, &g, &p);
    for (int v = 0; v < PS_EXPORT_VIEW__COUNT; v++)
      for (int f = 0; f < 3; f++) { /* dot, svg, png */
        ps_export_options o;
        ps_export_options_init (&o);
        o.view = (ps_export_view) v;
        o.format = (ps_export_format) f;
        char path[600], err[512];
        snprintf (path, sizeof path, "%s/hostile.%s", tmp_dir, ps_export_format_name (o.format));
        int rc = ps_export_write (&p, &o, path, NULL, err, sizeof err);
        if (rc != 0)
          fail_msg ("%s: %s", path, err);
        if (o.format == PS_EXPORT_DOT) {
          check_dot (path);
        } else if (o.format == PS_EXPORT_SVG) {
          size_t len;
          char *svg = read_file (path, &len);
          check_xml (svg, len, path);
          if (k == 0 && v == PS_EXPORT_DAG)
            assert_non_null (strstr (svg, "k&quot;1\\"));
          free (svg);
        } else {
          check_png (path);
        }
        unlink (path);
      }
    ps_plan_free (&p);
    ps_graph_free (&g);
  }
}

static void
render_write_failures (void **state)
{
  (void) state;
  ps_graph g;
  ps_plan p;
  test_load ("test.json", two_streams, &g, &p);
  ps_export_options o;
  ps_export_options_init (&o);
  o.format = PS_EXPORT_SVG;
  char path[700], err[512];
  /* A folder that does not exist: an error that says why, and no file. */
  snprintf (path, sizeof path, "%s/missing/out.svg", tmp_dir);
  assert_int_not_equal (ps_export_write (&p, &o, path, NULL, err, sizeof err), 0);
  assert_non_null (strstr (err, path));
  struct stat st;
  assert_int_not_equal (stat (path, &st), 0);
  /* A file that exists is replaced whole, and no temporary file remains. */
  char dir[600];
  snprintf (dir, sizeof dir, "%s/atomic", tmp_dir);
  assert_int_equal (mkdir (dir, 0700), 0);
  snprintf (path, sizeof path, "%s/out.svg", dir);
  FILE *f = fopen (path, "w");
  assert_non_null (f);
  fputs ("old", f);
  fclose (f);
  assert_int_equal (ps_export_write (&p, &o, path, NULL, err, sizeof err), 0);
  size_t len;
  char *svg = read_file (path, &len);
  check_xml (svg, len, path);
  free (svg);
  DIR *d = opendir (dir);
  assert_non_null (d);
  struct dirent *e;
  int files = 0;
  while ((e = readdir (d)))
    files += strcmp (e->d_name, ".") != 0 && strcmp (e->d_name, "..") != 0;
  closedir (d);
  assert_int_equal (files, 1);
  unlink (path);
  rmdir (dir);
  unlink (path);
  ps_plan_free (&p);
  ps_graph_free (&g);
}

int
main (int argc, char **argv)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (render_export_examples),
    cmocka_unit_test (render_export_one_node),
    cmocka_unit_test (render_dag_structure),
    cmocka_unit_test (render_large_graphs),
    cmocka_unit_test (render_memory_merges_small_buffers),
    cmocka_unit_test (render_timeline_merged_runs),
    cmocka_unit_test (render_text_and_names),
    cmocka_unit_test (render_hostile_names),
    cmocka_unit_test (render_write_failures),
  };
  /* Every export of the real dumps of ../shared/data/real/cudagraph_dot. */
  const struct CMUnitTest data_tests[] = {
    cmocka_unit_test (render_export_real_dumps),
  };
  PS_TEST_MAIN_WITH_DATA (argc, argv, "/render", tests, data_tests, setup_tmp, teardown_tmp);
}
