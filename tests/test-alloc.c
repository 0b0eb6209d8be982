/* test-alloc.c: every allocation of a load or a plan made to fail, one at
 * a time, as a fuzzer varies bytes.
 *
 * The executable is linked with --wrap for malloc, calloc, realloc,
 * strdup, strndup and posix_memalign (tests/meson.build), so that every
 * allocation core/ makes goes through a counter here.  For each input
 * (the examples, the hostile inputs of tests/hostile/ and the saved fuzz
 * regressions, a trace, an execution trace, the device profiles) the
 * operation runs once to count its allocations, then once per allocation
 * with that one failing (every one of the first 2,000, then 2,000 spread
 * over the rest, 200 for planning: see SWEEP_EVERY).  Each run must end in one of two ways: the same
 * verdict as without failures (the same result, or for a rejected input
 * the same first error), or PS_ENOMEM with an error that says "out of
 * memory" and nothing half-built; never a crash, another error, or a
 * different result (the planner once took a simulation that ran out of
 * memory for an infinitely slow schedule and chose another plan).  Leaks
 * on these paths show in the ASan build. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ps-device.h"
#include "ps-diagnose.h"
#include "ps-exec-trace.h"
#include "ps-file.h"
#include "ps-import.h"
#include "ps-plan-output.h"
#include "ps-plan.h"
#include "ps-sim.h"
#include "ps-timeline-output.h"
#include "ps-trace-import.h"
#include "planner/ps-planner-private.h"

#ifndef PS_TEST_SOURCE_ROOT
#define PS_TEST_SOURCE_ROOT "."
#endif

/* ---- the counter ----------------------------------------------------------- */

static uint64_t n_allocs; /* since the last reset */
static uint64_t fail_at;  /* the allocation that fails (1-based), 0: none */
static bool failed;       /* it came */

void *__real_malloc (size_t n);
void *__real_calloc (size_t n, size_t m);
void *__real_realloc (void *p, size_t n);
char *__real_strdup (const char *s);
char *__real_strndup (const char *s, size_t n);
int __real_posix_memalign (void **p, size_t align, size_t n);
void *__wrap_malloc (size_t n);
void *__wrap_calloc (size_t n, size_t m);
void *__wrap_realloc (void *p, size_t n);
char *__wrap_strdup (const char *s);
char *__wrap_strndup (const char *s, size_t n);
int __wrap_posix_memalign (void **p, size_t align, size_t n);

static bool
fails (void)
{
  if (++n_allocs != fail_at)
    return false;
  failed = true;
  return true;
}

void *
__wrap_malloc (size_t n)
{
  return fails () ? NULL : __real_malloc (n);
}

void *
__wrap_calloc (size_t n, size_t m)
{
  return fails () ? NULL : __real_calloc (n, m);
}

void *
__wrap_realloc (void *p, size_t n)
{
  return fails () ? NULL : __real_realloc (p, n);
}

char *
__wrap_strdup (const char *s)
{
  return fails () ? NULL : __real_strdup (s);
}

char *
__wrap_strndup (const char *s, size_t n)
{
  return fails () ? NULL : __real_strndup (s, n);
}

int
__wrap_posix_memalign (void **p, size_t align, size_t n)
{
  return fails () ? 12 /* ENOMEM */ : __real_posix_memalign (p, align, n);
}

static void
arm (uint64_t k)
{
  n_allocs = 0;
  fail_at = k;
  failed = false;
}

static void
disarm (void)
{
  fail_at = 0;
}

/* ---- inputs ------------------------------------------------------------ */

static const char *
source_root (void)
{
  const char *s = getenv ("PS_SOURCE_ROOT");
  return s && *s ? s : PS_TEST_SOURCE_ROOT;
}

static char *
read_input (const char *path, size_t *len)
{
  char *data;
  ps_diag d;
  ps_diag_init (&d, path);
  int r = ps_file_read_own (path, 64u << 20, &data, len, &d);
  ps_diag_free (&d);
  if (r != 0)
    fail_msg ("cannot read %s", path);
  return data;
}

/* The files of a folder with a given ending, sorted by name (at most cap). */
static size_t
list_inputs (const char *dir, const char *ending, char paths[][512], size_t cap)
{
  DIR *d = opendir (dir);
  if (!d)
    fail_msg ("cannot open %s", dir);
  size_t n = 0, el = strlen (ending);
  struct dirent *e;
  while ((e = readdir (d)) && n < cap) {
    size_t l = strlen (e->d_name);
    if (l > el && strcmp (e->d_name + l - el, ending) == 0)
      snprintf (paths[n++], 512, "%s/%s", dir, e->d_name);
  }
  closedir (d);
  for (size_t i = 1; i < n; i++)
    for (size_t j = i; j > 0 && strcmp (paths[j - 1], paths[j]) > 0; j--) {
      char t[512];
      memcpy (t, paths[j], 512);
      memcpy (paths[j], paths[j - 1], 512);
      memcpy (paths[j - 1], t, 512);
    }
  return n;
}

static bool
says_out_of_memory (const ps_diag *d)
{
  for (size_t i = 0; i < d->count; i++)
    if (strstr (d->entries[i].message, "out of memory"))
      return true;
  /* An error whose text could not be stored for want of memory. */
  return d->errors > d->count;
}

/* What a run produced, to compare with the run without failures. */
typedef struct {
  int rc;
  char *text; /* a description of the result (malloc'd with failures off) */
} outcome;

/* Checks one failed run against the reference. */
static void
judge (const char *what, uint64_t k, const outcome *ref, const outcome *got, const ps_diag *d)
{
  /* The verdict without failures (success, or the input's own error),
   * unchanged... */
  if (got->rc == ref->rc && got->rc == 0 && strcmp (got->text, ref->text) == 0)
    return;
  if (got->rc == ref->rc && got->rc < 0 && d && d->count && strcmp (d->entries[0].message,
                                                                      ref->text) == 0)
    return;
  if (got->rc == ref->rc && got->rc < 0 && !d)
    return;
  /* (The same error, its text lost for want of memory: ps_diag_print
   * says so.) */
  if (got->rc == ref->rc && got->rc < 0 && d->errors > d->count)
    return;
  if (got->rc == 0 || got->rc == ref->rc)
    fail_msg ("%s, allocation %llu failing: another result:\n%s\n--- instead of ---\n%s",
              what, (unsigned long long) k,
              got->rc == 0 ? got->text : d && d->count ? d->entries[0].message : "?", ref->text);
  /* ... or out of memory, and said so. */
  if (got->rc != PS_ENOMEM) {
    if (d)
      ps_diag_print (d, stderr);
    fail_msg ("%s, allocation %llu failing: failed with %d (%s), not out of memory", what,
              (unsigned long long) k, got->rc, ps_strerror (got->rc));
  }
  if (d && !says_out_of_memory (d)) {
    ps_diag_print (d, stderr);
    fail_msg ("%s, allocation %llu failing: out of memory without saying so", what,
              (unsigned long long) k);
  }
}

/* ---- operations ---------------------------------------------------------- */

/* One operation a sweep repeats: it runs on ctx, reports into d, and
 * describes what it produced (with failures off: it calls disarm first
 * thing after the work). */
typedef outcome (*operation) (void *ctx, ps_diag *d);

/* Every allocation of an operation is made to fail up to this many;
 * beyond, as many more spread evenly over the rest (the last included).
 * Planning simulates dozens of candidate schedules that allocate at the
 * same places over and over (transformer-block: 39,096 allocations), and
 * failing each of them would make the sweep quadratic in the planner's
 * work: 96,345 runs and 15 minutes under ASan for the examples alone. */
#define SWEEP_EVERY 2000
/* Planning the examples spreads fewer: the planner's search on graphs of
 * at most 16 groups simulates thousands of candidates (a plan of
 * transformer-block takes about 1 s under ASan), and the spread runs, each
 * most of a plan, would take over half an hour; they fail the same places
 * the first SWEEP_EVERY runs reach, over and over. */
#define PLAN_SPREAD 200

static uint64_t n_made; /* allocations the operations made, without failures */

/* The k-th allocation to fail in run r (1-based) of a sweep over n that
 * spreads `spread` runs. */
static uint64_t
run_target (uint64_t r, uint64_t n, uint64_t spread)
{
  if (n <= SWEEP_EVERY + spread || r <= SWEEP_EVERY)
    return r;
  return SWEEP_EVERY + (r - SWEEP_EVERY) * (n - SWEEP_EVERY) / spread;
}

/* Runs op once to count its allocations, then once per allocation with
 * that one failing (up to SWEEP_EVERY, then `spread` runs spread over the
 * rest), and judges each run; returns the number of runs. */
static uint64_t
sweep_spread (const char *what, operation op, void *ctx, bool must_say, uint64_t spread)
{
  ps_diag d;
  ps_diag_init (&d, what);
  arm (0);
  outcome ref = op (ctx, &d);
  uint64_t n = n_allocs;
  /* A rejected input is judged by its first message. */
  if (ref.rc < 0)
    ref.text = strdup (d.count ? d.entries[0].message : "");
  ps_diag_free (&d);
  n_made += n;
  uint64_t runs = n <= SWEEP_EVERY + spread ? n : SWEEP_EVERY + spread;
  for (uint64_t r = 1; r <= runs; r++) {
    uint64_t k = run_target (r, n, spread);
    ps_diag_init (&d, what);
    arm (k);
    outcome got = op (ctx, &d);
    judge (what, k, &ref, &got, must_say ? &d : NULL);
    free (got.text);
    ps_diag_free (&d);
  }
  free (ref.text);
  return runs;
}

static uint64_t
sweep (const char *what, operation op, void *ctx, bool must_say)
{
  return sweep_spread (what, op, ctx, must_say, SWEEP_EVERY);
}

/* Describes a graph by what a user sees of it: its counts and its nodes'
 * names and ops in order. */
static char *
describe_graph (const ps_graph *g)
{
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream (&buf, &len);
  fprintf (f, "%u nodes, %u buffers, %u edges\n", g->n_nodes, g->n_buffers, g->n_edges);
  for (uint32_t v = 0; v < g->n_nodes; v++)
    fprintf (f, "%s %d\n", ps_node_name (g, v), g->nodes[v].op);
  fclose (f);
  return buf;
}

typedef struct {
  const char *path;
  char *data;
  size_t len;
} file_input;

static outcome
load_graph (void *ctx, ps_diag *d)
{
  const file_input *in = ctx;
  ps_graph g;
  outcome o = { ps_import_graph_mem (&g, in->data, in->len, in->path, d), NULL };
  disarm ();
  if (o.rc == 0)
    o.text = describe_graph (&g);
  else if (g.n_nodes || g.nodes || g.strings)
    fail_msg ("%s: a failed load left a graph behind", in->path);
  ps_graph_free (&g);
  return o;
}

static outcome
load_exec_trace (void *ctx, ps_diag *d)
{
  const file_input *in = ctx;
  ps_exec_trace et;
  outcome o = { ps_exec_trace_read (&et, in->data, in->len, d), NULL };
  disarm ();
  if (o.rc == 0) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream (&buf, &len);
    fprintf (f, "%s %u nodes, %u ops\n", et.schema, et.n_nodes, et.n_ops);
    fclose (f);
    o.text = buf;
  }
  ps_exec_trace_free (&et);
  return o;
}

static outcome
load_device (void *ctx, ps_diag *d)
{
  const file_input *in = ctx;
  ps_device dev;
  memset (&dev, 0, sizeof dev);
  outcome o = { ps_device_find (&dev, in->path, d), NULL };
  disarm ();
  if (o.rc == 0) {
    /* The figures, as the bytes of the struct (it has no pointers). */
    o.text = malloc (2 * sizeof dev + 1);
    const unsigned char *b = (const unsigned char *) &dev;
    for (size_t i = 0; i < sizeof dev; i++)
      snprintf (o.text + 2 * i, 3, "%02x", b[i]);
  }
  return o;
}

static uint64_t
sweep_file (const char *path, operation op)
{
  file_input in = { path, NULL, 0 };
  in.data = read_input (path, &in.len);
  uint64_t n = sweep (path, op, &in, true);
  free (in.data);
  return n;
}

static char *
describe_plan (const ps_plan *p)
{
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream (&buf, &len);
  ps_plan_write_json (p, f);
  fclose (f);
  return buf;
}

/* Plans a graph with the default options: four streams, fusion, and the
 * search over schedules that simulates each candidate. */
static outcome
plan_graph (void *ctx, ps_diag *d)
{
  const ps_graph *g = ctx;
  ps_plan p;
  ps_plan_options o;
  ps_plan_options_init (&o);
  outcome out = { ps_plan_build (&p, g, &o, d), NULL };
  disarm ();
  if (out.rc == 0)
    out.text = describe_plan (&p);
  ps_plan_free (&p);
  return out;
}

typedef struct {
  const ps_plan *plan;
  const ps_device *dev;
} sim_input;

/* Simulates a plan and diagnoses the run: the timeline document, waits
 * and their causes included. */
static outcome
simulate_plan (void *ctx, ps_diag *d)
{
  (void) d;
  const sim_input *in = ctx;
  ps_timeline tl;
  ps_timeline_init (&tl, PS_TL_SIMULATED);
  ps_diagnosis dg;
  memset (&dg, 0, sizeof dg);
  outcome out = { ps_simulate (in->plan, in->dev, &tl), NULL };
  bool have_dg = false;
  if (out.rc == 0) {
    out.rc = ps_diagnose (&dg, &tl);
    have_dg = out.rc == 0;
  }
  disarm ();
  if (out.rc == 0) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream (&buf, &len);
    ps_timeline_write_json (&tl, &dg, f);
    fclose (f);
    out.text = buf;
  }
  if (have_dg)
    ps_diagnosis_free (&dg);
  ps_timeline_free (&tl);
  return out;
}

static void
load_example (const char *path, ps_graph *g)
{
  ps_diag d;
  ps_diag_init (&d, path);
  disarm ();
  if (ps_import_graph_file (g, path, NULL, &d) != 0)
    fail_msg ("%s does not load", path);
  ps_diag_free (&d);
}

/* ---- tests ------------------------------------------------------------- */

static char paths[64][512];

static void
core_alloc_load_graphs (void **state)
{
  (void) state;
  char dir[600];
  uint64_t total = 0;
  snprintf (dir, sizeof dir, "%s/data/examples", source_root ());
  size_t n = list_inputs (dir, ".json", paths, 64);
  assert_true (n >= 5);
  for (size_t i = 0; i < n; i++)
    total += sweep_file (paths[i], load_graph);
  /* CUDA-graph dumps: child graphs, every node type, conditionals. */
  snprintf (dir, sizeof dir, "%s/tests/fuzz/seeds/dot", source_root ());
  n = list_inputs (dir, ".dot", paths, 64);
  assert_true (n >= 4);
  for (size_t i = 0; i < n; i++)
    total += sweep_file (paths[i], load_graph);
  /* Inputs that are refused: their errors must not change either. */
  static const char *const refused[] = { "tests/hostile", "tests/fuzz/regressions/graph-json",
                                         "tests/fuzz/regressions/pipeline" };
  for (size_t r = 0; r < sizeof refused / sizeof *refused; r++) {
    snprintf (dir, sizeof dir, "%s/%s", source_root (), refused[r]);
    n = list_inputs (dir, ".json", paths, 64);
    assert_true (n >= 1);
    for (size_t i = 0; i < n; i++)
      if (!strstr (paths[i], "/device-"))
        total += sweep_file (paths[i], load_graph);
  }
  print_message ("%llu allocations made to fail one at a time (of %llu made)\n",
                 (unsigned long long) total, (unsigned long long) n_made);
  n_made = 0;
}

static void
core_alloc_load_traces (void **state)
{
  (void) state;
  char path[600];
  uint64_t total = 0;
  /* A Kineto-style trace, gzip-compressed: the trace becomes a graph. */
  snprintf (path, sizeof path, "%s/tests/hostile/trace-intact.json.gz", source_root ());
  total += sweep_file (path, load_graph);
  snprintf (path, sizeof path, "%s/tests/fuzz/seeds/et", source_root ());
  size_t n = list_inputs (path, ".json", paths, 64);
  assert_true (n >= 1);
  for (size_t i = 0; i < n; i++)
    total += sweep_file (paths[i], load_exec_trace);
  print_message ("%llu allocations made to fail one at a time (of %llu made)\n",
                 (unsigned long long) total, (unsigned long long) n_made);
  n_made = 0;
}

static void
core_alloc_device_profiles (void **state)
{
  (void) state;
  char dir[600];
  snprintf (dir, sizeof dir, "%s/data/devices", source_root ());
  size_t n = list_inputs (dir, ".json", paths, 64);
  assert_true (n >= 3);
  uint64_t total = 0;
  for (size_t i = 0; i < n; i++)
    total += sweep_file (paths[i], load_device);
  static const char *const refused[] = { "tests/hostile/device-duplicate-key.json",
                                         "tests/hostile/device-nul-key.json" };
  for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
    snprintf (paths[0], sizeof paths[0], "%s/%s", source_root (), refused[i]);
    total += sweep_file (paths[0], load_device);
  }
  snprintf (dir, sizeof dir, "%s/tests/fuzz/regressions/device", source_root ());
  n = list_inputs (dir, ".json", paths, 64);
  for (size_t i = 0; i < n; i++)
    total += sweep_file (paths[i], load_device);
  print_message ("%llu allocations made to fail one at a time (of %llu made)\n",
                 (unsigned long long) total, (unsigned long long) n_made);
  n_made = 0;
}

/* Plans every example, each allocation made to fail in turn. */
static void
plan_examples (void)
{
  char dir[600];
  snprintf (dir, sizeof dir, "%s/data/examples", source_root ());
  size_t n = list_inputs (dir, ".json", paths, 64);
  uint64_t total = 0;
  for (size_t i = 0; i < n; i++) {
    ps_graph g;
    load_example (paths[i], &g);
    total += sweep_spread (paths[i], plan_graph, &g, false, PLAN_SPREAD);
    ps_graph_free (&g);
  }
  print_message ("%llu allocations made to fail one at a time (of %llu made)\n",
                 (unsigned long long) total, (unsigned long long) n_made);
  n_made = 0;
}

static void
core_alloc_plan (void **state)
{
  (void) state;
  plan_examples ();
}

/* The same past the groups the search simulates every generator on
 * (ps__sim_max_groups lowered to 1): the blend's schedule on each count
 * from the most down, the sync pass of the count tried last kept when it
 * is the plan (one thread: the examples are too small for the second). */
static void
core_alloc_plan_past_search (void **state)
{
  (void) state;
  uint32_t was = ps__sim_max_groups;
  ps__sim_max_groups = 1;
  plan_examples ();
  ps__sim_max_groups = was;
}

static void
core_alloc_simulate (void **state)
{
  (void) state;
  char dir[600];
  snprintf (dir, sizeof dir, "%s/data/examples", source_root ());
  size_t n = list_inputs (dir, ".json", paths, 64);
  uint64_t total = 0;
  ps_device dev = *ps_device_builtin (0);
  for (size_t i = 0; i < n; i++) {
    ps_graph g;
    load_example (paths[i], &g);
    ps_plan p;
    ps_plan_options o;
    ps_plan_options_init (&o);
    o.device = &dev;
    assert_int_equal (ps_plan_build (&p, &g, &o, NULL), 0);
    sim_input in = { &p, &dev };
    total += sweep (paths[i], simulate_plan, &in, false);
    ps_plan_free (&p);
    ps_graph_free (&g);
  }
  print_message ("%llu allocations made to fail one at a time (of %llu made)\n",
                 (unsigned long long) total, (unsigned long long) n_made);
  n_made = 0;
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (core_alloc_load_graphs),
    cmocka_unit_test (core_alloc_load_traces),
    cmocka_unit_test (core_alloc_device_profiles),
    cmocka_unit_test (core_alloc_plan),
    cmocka_unit_test (core_alloc_plan_past_search),
    cmocka_unit_test (core_alloc_simulate),
  };
  /* PS_ALLOC_TEST_FILTER=core_alloc_plan runs one test (cmocka's glob). */
  if (getenv ("PS_ALLOC_TEST_FILTER"))
    cmocka_set_test_filter (getenv ("PS_ALLOC_TEST_FILTER"));
  return cmocka_run_group_tests_name ("/core/alloc", tests, NULL, NULL);
}
