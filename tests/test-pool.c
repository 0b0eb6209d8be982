/* test-pool.c: the memory pool and its exact peak.  The peak is checked
 * against an oracle written from the definition (happens-before between
 * steps by full vector clocks, every pair of buffers compared, the heaviest
 * antichain as weighted Dilworth by a textbook maximum flow on the
 * comparability graph, and by brute force where that is small); the pool
 * against the peak on every shape and example. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/ps-planner-private.h"
#include "ps-gen.h"
#include "ps-import.h"
#include "ps-plan.h"
#include "ps-pool-peak.h"
#include "ps-test-gen.h"
#include "ps-verify.h"

/* Under ASan+UBSan the sweeps run a third of the seeds. */
#if defined(__SANITIZE_ADDRESS__)
#define SEEDS(n) ((n) / 3 ? (n) / 3 : 1)
#else
#define SEEDS(n) (n)
#endif

/* ---- helpers ---- */

static void
print_report (void *ctx, const char *message)
{
  (void) ctx;
  fprintf (stderr, "  verify: %s\n", message);
}

static void
load_string (ps_graph *g, const char *json)
{
  ps_diag d;
  ps_diag_init (&d, "test.json");
  int rc = ps_import_graph_mem (g, json, strlen (json), "test.json", &d);
  if (rc < 0)
    ps_diag_print (&d, stderr);
  ps_diag_free (&d);
  assert_int_equal (rc, 0);
}

static void
load_generated (ps_graph *g, ps_gen_shape shape, uint32_t nodes, uint64_t seed, bool extras)
{
  ps_gen_options go;
  pt_gen_options (&go, shape, nodes, seed, extras);
  assert_int_equal (pt_gen_graph (g, &go), 0);
}

static void
load_example (ps_graph *g, const char *name)
{
  const char *root = getenv ("PS_SOURCE_ROOT");
  if (!root)
    root = PS_TEST_SOURCE_ROOT;
  char path[4096];
  snprintf (path, sizeof path, "%s/data/examples/%s", root, name);
  ps_diag d;
  ps_diag_init (&d, path);
  int rc = ps_import_graph_file (g, path, NULL, &d);
  if (rc < 0)
    ps_diag_print (&d, stderr);
  ps_diag_free (&d);
  assert_int_equal (rc, 0);
}

/* Plans g; find_peak as ps_plan_options asks (the CLI's `plan` does). */
static int
plan_peak_with (ps_plan *p, const ps_graph *g, uint32_t streams, bool fusion, bool find_peak)
{
  ps_plan_options o;
  ps_plan_options_init (&o);
  o.streams = streams;
  o.fusion = fusion;
  o.find_peak = find_peak;
  ps_diag d;
  ps_diag_init (&d, "test.json");
  int rc = ps_plan_build (p, g, &o, &d);
  if (rc < 0 && rc != PS_EPIN)
    ps_diag_print (&d, stderr);
  ps_diag_free (&d);
  return rc;
}

static int
plan_with (ps_plan *p, const ps_graph *g, uint32_t streams, bool fusion)
{
  return plan_peak_with (p, g, streams, fusion, false);
}

/* ---- the oracle ---- */

typedef struct oracle {
  uint32_t n;          /* used pooled buffers */
  uint32_t *id;        /* their buffer ids */
  uint64_t *w;
  uint8_t *before;     /* n x n: every use of a happens-before every use of b */
} oracle;

static void
oracle_free (oracle *o)
{
  free (o->id);
  free (o->w);
  free (o->before);
}

/* Happens-before between steps by full vector clocks, then every pair of
 * used pooled buffers compared use by use. */
static void
oracle_init (oracle *o, const ps_plan *p)
{
  const ps_graph *g = p->graph;
  uint32_t S = PS_MAX_STREAMS, n = p->n_steps;
  uint32_t *clk = calloc ((size_t) (n ? n : 1) * S, sizeof *clk);
  uint32_t *cur = calloc ((size_t) S * S, sizeof *cur);
  uint32_t *rec = malloc ((p->n_events ? p->n_events : 1) * sizeof *rec);
  assert_true (clk && cur && rec);
  for (uint32_t e = 0; e < p->n_events; e++)
    rec[e] = PS_NONE;
  /* clk[i]: 1 + the last step of each stream known complete before step i
   * starts (its own stream: the steps before it). */
  for (uint32_t i = 0; i < n; i++) {
    const ps_step *st = &p->steps[i];
    uint32_t *c = cur + (size_t) st->stream * S;
    if (st->op == PS_OP_EVENT_WAIT && st->event < p->n_events && rec[st->event] != PS_NONE) {
      const uint32_t *r = clk + (size_t) rec[st->event] * S;
      for (uint32_t t = 0; t < S; t++)
        if (r[t] > c[t])
          c[t] = r[t];
    }
    memcpy (clk + (size_t) i * S, c, S * sizeof *c);
    c[st->stream] = i + 1;
    if (st->op == PS_OP_EVENT_RECORD && st->event < p->n_events) {
      /* The record's clock: everything on its stream up to it. */
      memcpy (clk + (size_t) i * S, c, S * sizeof *c);
      rec[st->event] = i;
    }
  }
  /* Uses: the steps of the nodes that read or write each buffer. */
  uint32_t B = g->n_buffers;
  uint32_t *nuse = calloc (B ? B : 1, sizeof *nuse), **uses = calloc (B ? B : 1, sizeof *uses);
  assert_true (nuse && uses);
  for (uint32_t i = 0; i < n; i++)
    for (uint32_t k = 0; k < p->steps[i].nodes_count; k++) {
      const ps_node *nd = &g->nodes[p->step_nodes[p->steps[i].nodes_begin + k]];
      for (int wr = 0; wr < 2; wr++) {
        uint32_t a0 = wr ? nd->writes_begin : nd->reads_begin;
        uint32_t a1 = a0 + (wr ? nd->writes_count : nd->reads_count);
        for (uint32_t a = a0; a < a1; a++) {
          uint32_t b = g->access[a];
          uses[b] = realloc (uses[b], (nuse[b] + 1) * sizeof **uses);
          uses[b][nuse[b]++] = i;
        }
      }
      if (nd->op == PS_OP_CONDITIONAL) {
        uint32_t b = g->conds[nd->aux].condition;
        uses[b] = realloc (uses[b], (nuse[b] + 1) * sizeof **uses);
        uses[b][nuse[b]++] = i;
      }
    }
  o->n = 0;
  o->id = malloc ((B ? B : 1) * sizeof *o->id);
  o->w = malloc ((B ? B : 1) * sizeof *o->w);
  for (uint32_t b = 0; b < B; b++)
    if (!(g->buffers[b].flags & PS_BUF_EXTERNAL) && nuse[b] > 0) {
      o->id[o->n] = b;
      o->w[o->n++] = g->buffers[b].bytes;
    }
  o->before = calloc ((size_t) o->n * o->n + 1, 1);
  assert_non_null (o->before);
  for (uint32_t x = 0; x < o->n; x++)
    for (uint32_t y = 0; y < o->n; y++) {
      if (x == y)
        continue;
      uint32_t a = o->id[x], b = o->id[y];
      bool all = true;
      for (uint32_t i = 0; i < nuse[a] && all; i++)
        for (uint32_t j = 0; j < nuse[b] && all; j++) {
          uint32_t u = uses[a][i], v = uses[b][j];
          all = u != v && clk[(size_t) v * S + p->steps[u].stream] >= u + 1;
        }
      o->before[(size_t) x * o->n + y] = all;
    }
  for (uint32_t b = 0; b < B; b++)
    free (uses[b]);
  free (uses);
  free (nuse);
  free (clk);
  free (cur);
  free (rec);
}

/* The heaviest antichain: the total minus a maximum flow from each buffer
 * (as much as its bytes) to each buffer it precedes (as much as that one's
 * bytes), by augmenting paths on a capacity matrix. */
static uint64_t
oracle_peak (const oracle *o)
{
  uint32_t n = o->n, N = 2 * n + 2, src = 2 * n, snk = 2 * n + 1;
  uint64_t *cap = calloc ((size_t) N * N, sizeof *cap), total = 0, flow = 0;
  uint32_t *prev = malloc (N * sizeof *prev), *q = malloc (N * sizeof *q);
  assert_true (cap && prev && q);
  for (uint32_t x = 0; x < n; x++) {
    total += o->w[x];
    cap[(size_t) src * N + x] = o->w[x];
    cap[(size_t) (n + x) * N + snk] = o->w[x];
    for (uint32_t y = 0; y < n; y++)
      if (o->before[(size_t) x * n + y])
        cap[(size_t) x * N + n + y] = UINT64_MAX / 4;
  }
  for (;;) {
    for (uint32_t v = 0; v < N; v++)
      prev[v] = PS_NONE;
    uint32_t h = 0, t = 0;
    q[t++] = src;
    prev[src] = src;
    while (h < t && prev[snk] == PS_NONE) {
      uint32_t u = q[h++];
      for (uint32_t v = 0; v < N; v++)
        if (prev[v] == PS_NONE && cap[(size_t) u * N + v] > 0) {
          prev[v] = u;
          q[t++] = v;
        }
    }
    if (prev[snk] == PS_NONE)
      break;
    uint64_t d = UINT64_MAX;
    for (uint32_t v = snk; v != src; v = prev[v])
      if (cap[(size_t) prev[v] * N + v] < d)
        d = cap[(size_t) prev[v] * N + v];
    for (uint32_t v = snk; v != src; v = prev[v]) {
      cap[(size_t) prev[v] * N + v] -= d;
      cap[(size_t) v * N + prev[v]] += d;
    }
    flow += d;
  }
  free (cap);
  free (prev);
  free (q);
  return total - flow;
}

/* The heaviest antichain by trying every subset (n <= 20). */
static uint64_t
oracle_brute (const oracle *o)
{
  uint32_t n = o->n;
  uint64_t best = 0;
  for (uint32_t m = 0; m < (1u << n); m++) {
    uint64_t sum = 0;
    bool ok = true;
    for (uint32_t x = 0; x < n && ok; x++) {
      if (!(m >> x & 1))
        continue;
      sum += o->w[x];
      for (uint32_t y = 0; y < n && ok; y++)
        ok = !(m >> y & 1) || !o->before[(size_t) x * n + y];
    }
    if (ok && sum > best)
      best = sum;
  }
  return best;
}

/* The peak of p agrees with the oracle, its buffers are an antichain of
 * that weight, and it does not depend on where the pool put the buffers. */
static void
check_peak (ps_plan *p)
{
  const ps_graph *g = p->graph;
  ps_pool_peak pk;
  uint8_t *live = malloc (g->n_buffers ? g->n_buffers : 1);
  assert_non_null (live);
  assert_int_equal (ps_pool_peak_compute (p, &pk, live), 0);
  assert_true (pk.exact);
  oracle o;
  oracle_init (&o, p);
  uint64_t antichain = oracle_peak (&o), want = antichain;
  if (o.n <= 16)
    assert_int_equal (oracle_brute (&o), antichain);
  for (uint32_t b = 0; b < g->n_buffers; b++)
    if (!(g->buffers[b].flags & PS_BUF_EXTERNAL) && g->buffers[b].bytes > want) {
      bool used = false;
      for (uint32_t x = 0; x < o.n && !used; x++)
        used = o.id[x] == b;
      if (!used)
        want = g->buffers[b].bytes; /* a buffer nobody uses needs its bytes */
    }
  if (pk.bytes != want)
    fail_msg ("%s: peak %llu, oracle %llu", g->name ? g->name : "?",
              (unsigned long long) pk.bytes, (unsigned long long) want);
  /* The buffers it names are pairwise unordered and weigh the peak. */
  if (want == antichain) {
    uint64_t sum = 0;
    uint32_t count = 0;
    for (uint32_t x = 0; x < o.n; x++) {
      if (!live[o.id[x]])
        continue;
      sum += o.w[x];
      count++;
      for (uint32_t y = 0; y < o.n; y++)
        if (live[o.id[y]])
          assert_false (o.before[(size_t) x * o.n + y]);
    }
    assert_int_equal (sum, pk.bytes);
    assert_int_equal (count, pk.n_buffers);
  }
  assert_true (p->pool_bytes >= pk.bytes);
  /* The same plan with its buffers laid end to end: the same peak. */
  uint64_t *keep = malloc (g->n_buffers * sizeof *keep + 1), keep_bytes = p->pool_bytes;
  memcpy (keep, p->offsets, g->n_buffers * sizeof *keep);
  assert_int_equal (ps__plan_pool_end_to_end (p, NULL), 0);
  ps_pool_peak again;
  assert_int_equal (ps_pool_peak_compute (p, &again, NULL), 0);
  assert_int_equal (again.bytes, pk.bytes);
  memcpy (p->offsets, keep, g->n_buffers * sizeof *keep);
  p->pool_bytes = keep_bytes;
  free (keep);
  free (live);
  oracle_free (&o);
}

/* ---- tests ---- */

/* The peak equals the oracle's on small generated graphs of every shape,
 * with and without extras (events, barriers, conditionals, pins), on 1 to
 * 4 streams, fused and not. */
static void
core_pool_peak_oracle (void **state)
{
  (void) state;
  for (int shape = 0; shape < PS_GEN__COUNT; shape++)
    for (uint64_t seed = 1; seed <= SEEDS (6); seed++)
      for (int extras = 0; extras < 2; extras++) {
        ps_graph g;
        ps_graph_init (&g);
        load_generated (&g, (ps_gen_shape) shape, 20 + 17 * (uint32_t) seed, seed, extras);
        for (uint32_t streams = 1; streams <= 4; streams++)
          for (int fusion = 0; fusion < 2; fusion++) {
            ps_plan p;
            int rc = plan_with (&p, &g, streams, fusion);
            if (rc == PS_EPIN)
              continue;
            assert_int_equal (rc, 0);
            check_peak (&p);
            ps_plan_free (&p);
          }
        ps_graph_free (&g);
      }
}

/* And on the examples, and on the simple planner's plans (buffers end to
 * end, one event per crossing). */
static void
core_pool_peak_examples (void **state)
{
  (void) state;
  static const char *const names[] = { "copy-compute-overlap.json",
                                       "events-barrier-conditional.json",
                                       "long-kernel-wait.json", "moe-experts.json",
                                       "transformer-block.json", "user-module.json" };
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    ps_graph g;
    ps_graph_init (&g);
    load_example (&g, names[i]);
    for (uint32_t streams = 1; streams <= 4; streams++) {
      ps_plan p;
      int rc = plan_with (&p, &g, streams, true);
      if (rc == PS_EPIN)
        continue;
      assert_int_equal (rc, 0);
      check_peak (&p);
      ps_plan_free (&p);
      ps_plan_options o;
      ps_plan_options_init (&o);
      o.streams = streams;
      assert_int_equal (ps__plan_build_simple (&p, &g, &o, NULL), 0);
      check_peak (&p);
      ps_plan_free (&p);
    }
    ps_graph_free (&g);
  }
}

/* The minimum flow's first level found from the network's shape (the
 * frontier of each stream) gives the same peak, and the same buffers, as
 * walking it (with the states' adjacency lists stored, or every node's),
 * on every generated shape from 2,500 to 19,000 nodes (large enough that
 * layered graphs need phases past the greedy start), with and without
 * extras, on 2 to 4 streams. */
static void
core_pool_peak_level_one (void **state)
{
  (void) state;
  uint64_t phases = ps__peak_phases;
  uint32_t plans = 0;
  for (int shape = 0; shape < PS_GEN__COUNT; shape++)
    for (uint64_t seed = 1; seed <= SEEDS (shape == PS_GEN_LAYERED ? 12 : 3); seed++)
      for (int extras = 0; extras < 2; extras++) {
        ps_graph g;
        ps_graph_init (&g);
        load_generated (&g, (ps_gen_shape) shape, 1000 + 1500 * (uint32_t) seed, seed, extras);
        for (uint32_t streams = 2; streams <= 4; streams++) {
          ps_plan p;
          int rc = plan_with (&p, &g, streams, seed % 2 == 1);
          if (rc == PS_EPIN)
            continue;
          assert_int_equal (rc, 0);
          /* Walked with the states' lists stored, walked with every
           * node's, found from the shape with the states' lists. */
          uint8_t *live[3];
          ps_pool_peak pk[3];
          for (int walk = 0; walk < 3; walk++) {
            live[walk] = malloc (g.n_buffers + 1);
            assert_non_null (live[walk]);
            ps__peak_level_one_implicit = walk == 0;
            ps__peak_adjacency_whole = walk == 2;
            assert_int_equal (ps_pool_peak_compute (&p, &pk[walk], live[walk]), 0);
          }
          ps__peak_level_one_implicit = true;
          ps__peak_adjacency_whole = false;
          for (int walk = 1; walk < 3; walk++) {
            assert_int_equal (pk[0].bytes, pk[walk].bytes);
            assert_int_equal (pk[0].exact, pk[walk].exact);
            assert_int_equal (pk[0].n_buffers, pk[walk].n_buffers);
            assert_memory_equal (live[0], live[walk], g.n_buffers);
          }
          for (int walk = 0; walk < 3; walk++)
            free (live[walk]);
          ps_plan_free (&p);
          plans++;
        }
        ps_graph_free (&g);
      }
  assert_true (plans >= 40);
  /* Phases past the greedy start were taken, both ways (layered graphs
   * need them: 88 in all, up to 5 a plan). */
  assert_true (ps__peak_phases - phases >= 10);
}

/* Past the search's simulations, a pair's second thread makes the memory
 * pass's lists of pooled buffers while the first count finishes: the
 * plan (steps and every buffer's offset) is the one the memory pass makes
 * with lists of its own, one count at a time, on every shape. */
static void
core_pool_accesses_beside_search (void **state)
{
  (void) state;
  uint32_t sim_max = ps__sim_max_groups, pair_groups = ps__search_pair_groups;
  size_t beside = ps__pool_accesses_beside;
  for (int shape = 0; shape < PS_GEN__COUNT; shape++)
    for (int extras = 0; extras < 2; extras++) {
      ps_graph g;
      ps_graph_init (&g);
      load_generated (&g, (ps_gen_shape) shape, 1500, 5, extras);
      for (uint32_t streams = 2; streams <= 4; streams += 2) {
        ps_plan a, b;
        ps__sim_max_groups = 100;
        ps__search_pair_groups = 0;
        int rc = plan_with (&a, &g, streams, true);
        ps__search_pair_groups = UINT32_MAX;
        int rc2 = plan_with (&b, &g, streams, true);
        ps__sim_max_groups = sim_max;
        ps__search_pair_groups = pair_groups;
        assert_int_equal (rc, rc2);
        if (rc == PS_EPIN)
          continue;
        assert_int_equal (rc, 0);
        assert_int_equal (a.n_steps, b.n_steps);
        for (uint32_t i = 0; i < a.n_steps; i++) {
          const ps_step *x = &a.steps[i], *y = &b.steps[i];
          assert_true (x->op == y->op && x->stream == y->stream && x->event == y->event
                       && x->nodes_count == y->nodes_count && x->nodes_begin == y->nodes_begin);
        }
        assert_int_equal (a.n_step_nodes, b.n_step_nodes);
        assert_memory_equal (a.step_nodes, b.step_nodes, a.n_step_nodes * sizeof *a.step_nodes);
        assert_int_equal (a.pool_bytes, b.pool_bytes);
        assert_memory_equal (a.offsets, b.offsets, g.n_buffers * sizeof *a.offsets);
        ps_plan_free (&a);
        ps_plan_free (&b);
      }
      ps_graph_free (&g);
    }
  assert_true (ps__pool_accesses_beside >= beside + 8);
}

/* Buffers read first by two unordered steps have no earliest use: the
 * peak still counts exactly which buffers can share bytes. */
static void
core_pool_peak_no_earliest_use (void **state)
{
  (void) state;
  /* s1 (stream 2) and s2 (stream 0) read u before wu writes it, each
   * after both last uses of v (qv on stream 1, rv on stream 3) and after
   * work of its own stream the other does not know of: u's uses have no
   * earliest state, v's no latest one, and no state lies between v's
   * uses and u's, yet every use of v happens-before every use of u. */
  static const char json[] =
    "{\"format\": \"planscope-graph\", \"version\": 1, \"name\": \"gap\",\n"
    " \"buffers\": [{\"name\": \"u\", \"bytes\": 4096}, {\"name\": \"v\", \"bytes\": 2048},\n"
    "  {\"name\": \"a\", \"bytes\": 1024}, {\"name\": \"c\", \"bytes\": 512}],\n"
    " \"nodes\": [\n"
    "  {\"name\": \"wv\", \"op\": \"kernel\", \"function\": \"f\", \"grid\": 1, \"block\": 32, \"writes\": [\"v\"], \"stream\": 1},\n"
    "  {\"name\": \"qv\", \"op\": \"kernel\", \"function\": \"f\", \"grid\": 1, \"block\": 32, \"reads\": [\"v\"], \"stream\": 1},\n"
    "  {\"name\": \"rv\", \"op\": \"kernel\", \"function\": \"f\", \"grid\": 1, \"block\": 32, \"reads\": [\"v\"], \"stream\": 3},\n"
    "  {\"name\": \"p0\", \"op\": \"kernel\", \"function\": \"f\", \"grid\": 1, \"block\": 32, \"writes\": [\"a\"], \"stream\": 0},\n"
    "  {\"name\": \"p2\", \"op\": \"kernel\", \"function\": \"f\", \"grid\": 1, \"block\": 32, \"writes\": [\"c\"], \"stream\": 2},\n"
    "  {\"name\": \"s2\", \"op\": \"kernel\", \"function\": \"f\", \"grid\": 1, \"block\": 32, \"reads\": [\"u\", \"a\"], \"after\": [\"qv\", \"rv\"], \"stream\": 0},\n"
    "  {\"name\": \"s1\", \"op\": \"kernel\", \"function\": \"f\", \"grid\": 1, \"block\": 32, \"reads\": [\"u\", \"c\"], \"after\": [\"qv\", \"rv\"], \"stream\": 2},\n"
    "  {\"name\": \"wu\", \"op\": \"kernel\", \"function\": \"f\", \"grid\": 1, \"block\": 32, \"writes\": [\"u\"], \"stream\": 0}\n"
    " ]}\n";
  ps_graph g;
  ps_graph_init (&g);
  load_string (&g, json);
  for (uint32_t streams = 4; streams <= 5; streams++)
    for (int fusion = 0; fusion < 2; fusion++) {
      ps_plan p;
      assert_int_equal (plan_with (&p, &g, streams, fusion), 0);
      assert_int_equal (ps_plan_verify (&p, print_report, NULL, 5), 0);
      check_peak (&p);
      ps_plan_free (&p);
    }
  ps_graph_free (&g);
}

/* The pool is within 10% of its exact peak on every generated shape, with
 * and without extras, at several sizes and seeds, and on the examples at
 * 1 to 8 streams with and without fusion (copy-compute-overlap without
 * fusion on 5-8 streams was at 1.17x: twelve 16 MiB buffers in 7 slots
 * where 6 suffice); every plan verifies. */
static void
check_within (ps_plan *p, const char *what)
{
  assert_int_equal (ps_plan_verify (p, print_report, NULL, 5), 0);
  assert_int_equal (ps_plan_find_peak (p), 0);
  assert_true (p->pool_peak_exact);
  if ((double) p->pool_bytes > 1.10 * (double) p->pool_peak)
    fail_msg ("%s: pool %llu is %.3fx the peak %llu", what, (unsigned long long) p->pool_bytes,
              (double) p->pool_bytes / (double) p->pool_peak, (unsigned long long) p->pool_peak);
}

static void
core_pool_within_peak (void **state)
{
  (void) state;
  static const uint32_t sizes[] = { 300, 3000 };
  char what[128];
  for (int shape = 0; shape < PS_GEN__COUNT; shape++)
    for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++)
      for (uint64_t seed = 1; seed <= SEEDS (3); seed++)
        for (int extras = 0; extras < 2; extras++) {
          ps_graph g;
          ps_graph_init (&g);
          load_generated (&g, (ps_gen_shape) shape, sizes[z], seed, extras);
          ps_plan p;
          int rc = plan_with (&p, &g, 4, true);
          assert_int_equal (rc, 0);
          snprintf (what, sizeof what, "%s %u nodes, seed %llu%s",
                    ps_gen_shape_name ((ps_gen_shape) shape), sizes[z],
                    (unsigned long long) seed, extras ? ", extras" : "");
          check_within (&p, what);
          ps_plan_free (&p);
          ps_graph_free (&g);
        }
  /* Packed by size in two orders, a 300-node layered graph on 8 streams
   * was at 1.105x; more orders while above 1.10x. */
  {
    ps_graph g;
    ps_graph_init (&g);
    load_generated (&g, PS_GEN_LAYERED, 300, 343, false);
    ps_plan p;
    assert_int_equal (plan_with (&p, &g, 8, true), 0);
    check_within (&p, "layered 300 nodes, seed 343, 8 streams");
    ps_plan_free (&p);
    ps_graph_free (&g);
  }
  /* After 64 shuffled orders a 600-node layered graph with pins on 3
   * streams without fusion was at 1.131x; local search over the order. */
  {
    ps_gen_options go;
    pt_gen_options (&go, PS_GEN_LAYERED, 600, 653, false);
    go.pins = true;
    ps_graph g;
    assert_int_equal (pt_gen_graph (&g, &go), 0);
    ps_plan p;
    assert_int_equal (plan_with (&p, &g, 3, false), 0);
    check_within (&p, "layered 600 nodes, seed 653, pins, 3 streams without fusion");
    ps_plan_free (&p);
    ps_graph_free (&g);
  }
  static const char *const names[] = { "copy-compute-overlap.json",
                                       "events-barrier-conditional.json",
                                       "long-kernel-wait.json", "moe-experts.json",
                                       "transformer-block.json", "user-module.json" };
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    ps_graph g;
    ps_graph_init (&g);
    load_example (&g, names[i]);
    for (uint32_t streams = 1; streams <= 8; streams++)
      for (int fusion = 0; fusion < 2; fusion++) {
        ps_plan p;
        int rc = plan_with (&p, &g, streams, fusion);
        if (rc == PS_EPIN)
          continue;
        assert_int_equal (rc, 0);
        snprintf (what, sizeof what, "%s on %u streams%s", names[i], streams,
                  fusion ? "" : " without fusion");
        check_within (&p, what);
        ps_plan_free (&p);
      }
    ps_graph_free (&g);
  }
}

/* Plans of at most 128 pooled buffers packed by size are searched until
 * their pool is the exact peak: three 50-node layered graphs (35-38
 * buffers) stayed at 1.13-1.17x after 64 shuffled orders, and reach it in
 * 500-6,700 moves of the local search over the placement order. */
static void
core_pool_small_at_peak (void **state)
{
  (void) state;
  static const struct {
    uint64_t seed;
    bool extras;
    uint32_t streams;
  } cases[] = { { 429, false, 2 }, { 859, true, 4 }, { 859, true, 5 } };
  char what[128];
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    ps_gen_options go;
    pt_gen_options (&go, PS_GEN_LAYERED, 50, cases[i].seed, false);
    go.conditionals = go.barriers = cases[i].extras;
    ps_graph g;
    assert_int_equal (pt_gen_graph (&g, &go), 0);
    ps_plan p;
    assert_int_equal (plan_with (&p, &g, cases[i].streams, true), 0);
    snprintf (what, sizeof what, "layered 50 nodes, seed %llu%s, %u streams",
              (unsigned long long) cases[i].seed,
              cases[i].extras ? ", conditionals and barriers" : "", cases[i].streams);
    check_within (&p, what);
    if (p.pool_bytes != p.pool_peak)
      fail_msg ("%s: pool %llu above the exact peak %llu (%.3fx)", what,
                (unsigned long long) p.pool_bytes, (unsigned long long) p.pool_peak,
                (double) p.pool_bytes / (double) p.pool_peak);
    ps_plan_free (&p);
    ps_graph_free (&g);
  }
}

/* Layered graphs past the by-size packing's budget (about 35k nodes) are
 * packed online, which on this one on 5 streams gives 1.14x the exact
 * peak; the pass then finds that peak (which the plan keeps for its
 * outputs) and packs largest first as well: within 10% (1.03x), and the
 * peak kept is the one found from scratch.  On 4 streams the online pool
 * is within 10% already (1.0999x). */
static void
core_pool_layered_online (void **state)
{
  (void) state;
  ps_graph g;
  ps_graph_init (&g);
  load_generated (&g, PS_GEN_LAYERED, 45000, 7, false);
  for (uint32_t streams = 5; streams >= 4; streams--) {
    ps_plan p;
    assert_int_equal (plan_with (&p, &g, streams, true), 0);
    ps_pool_peak pk;
    assert_int_equal (ps_pool_peak_compute (&p, &pk, NULL), 0);
    assert_true (pk.exact);
    if ((double) p.pool_bytes > 1.10 * (double) pk.bytes)
      fail_msg ("%u streams: pool %.3fx the peak", streams,
                (double) p.pool_bytes / (double) pk.bytes);
    assert_true (p.pool_peak_known);
    assert_int_equal (p.pool_peak, pk.bytes);
    check_within (&p, streams == 4 ? "layered 45000 nodes, seed 7, 4 streams"
                                    : "layered 45000 nodes, seed 7, 5 streams");
    ps_plan_free (&p);
  }
  ps_graph_free (&g);
}

/* A large plan's peak is sought from the moment its steps are final, on
 * a thread the plan owns: what every caller then gets is the peak found
 * from scratch, whether it waits for it, takes it with the plan moved, or
 * frees the plan before it is found. */
static void
core_pool_peak_sought_while_planning (void **state)
{
  (void) state;
  ps_graph g;
  ps_graph_init (&g);
  load_generated (&g, PS_GEN_LAYERED, 60000, 2, false);
  uint32_t early = ps__peak_early_min;
  ps__peak_early_min = PS__PEAK_THREAD_MIN; /* as large plans are */
  assert_true (g.n_buffers >= PS__PEAK_THREAD_MIN);
  ps_plan p;
  ps_plan_options o;
  ps_plan_options_init (&o);
  o.fusion = false;
  o.streams = 3;
  ps_diag d;
  ps_diag_init (&d, "test.json");
  /* Not asked for (a sweep, a replay): not sought. */
  assert_int_equal (ps_plan_build (&p, &g, &o, &d), 0);
  assert_null (p.peak);
  ps_plan_free (&p);
  /* Without fusion no other plan can replace it: the peak is sought. */
  o.find_peak = true;
  assert_int_equal (ps_plan_build (&p, &g, &o, &d), 0);
  assert_non_null (p.peak);
  assert_false (p.pool_peak_known);
  ps_pool_peak fresh, got;
  assert_int_equal (ps_pool_peak_compute (&p, &fresh, NULL), 0);
  assert_true (fresh.exact && fresh.bytes > 0);
  /* Moved, as the planner moves the faster of two plans. */
  ps_plan moved = p;
  memset (&p, 0, sizeof p);
  assert_int_equal (ps_pool_peak_of (&moved, &got), 0);
  assert_true (got.bytes == fresh.bytes && got.exact == fresh.exact);
  assert_int_equal (got.n_buffers, fresh.n_buffers);
  assert_int_equal (ps_pool_peak_of (&moved, &got), 0); /* asked again */
  assert_true (got.bytes == fresh.bytes);
  assert_int_equal (ps_plan_find_peak (&moved), 0);
  assert_null (moved.peak);
  assert_true (moved.pool_peak_known && moved.pool_peak == fresh.bytes && moved.pool_peak_exact);
  check_within (&moved, "layered 60000 nodes, seed 2, sought while planning");
  ps_plan_free (&moved);

  /* Freed while it is sought: stopped and waited for, nothing leaks. */
  for (o.streams = 1; o.streams <= 4; o.streams++) {
    assert_int_equal (ps_plan_build (&p, &g, &o, &d), 0);
    assert_non_null (p.peak);
    ps_plan_free (&p);
  }
  /* With fusion auto, --streams auto or a memory budget, another plan may
   * replace it: the peak is found where it is shown, and is the same. */
  ps_plan_options_init (&o);
  o.find_peak = true;
  o.streams_auto = true;
  assert_int_equal (ps_plan_build (&p, &g, &o, &d), 0);
  ps_diag_free (&d);
  assert_int_equal (ps_pool_peak_of (&p, &got), 0);
  assert_int_equal (ps_pool_peak_compute (&p, &fresh, NULL), 0);
  assert_true (got.bytes == fresh.bytes && got.exact == fresh.exact);
  ps_plan_free (&p);
  ps__peak_early_min = early;
  ps_graph_free (&g);
}

/* A pool the memory pass packs down to the issue-order bound is at the
 * exact peak, and the plan knows it without the peak's search: the figure
 * it keeps is the search's.  On every shape, with and without fusion,
 * whether the pass knew it or not, it is the search's figure. */
static void
core_pool_peak_known_at_the_bound (void **state)
{
  (void) state;
  size_t at_bound = ps__pool_peak_at_bound;
  uint32_t plans = 0;
  for (int shape = 0; shape < PS_GEN__COUNT; shape++)
    for (uint64_t seed = 1; seed <= 3; seed++)
      for (int fused = 0; fused <= 1; fused++) {
        ps_graph g;
        ps_graph_init (&g);
        load_generated (&g, (ps_gen_shape) shape, 8000, seed, seed == 3);
        ps_plan p;
        size_t before = ps__pool_peak_at_bound;
        assert_int_equal (plan_peak_with (&p, &g, 4, fused, true), 0);
        bool known = ps__pool_peak_at_bound > before && p.pool_peak_known;
        if (known) /* nothing sought: the pass knew it */
          assert_true (p.peak == NULL && p.pool_peak_exact && p.pool_peak == p.pool_bytes);
        ps_pool_peak fresh;
        assert_int_equal (ps_pool_peak_compute (&p, &fresh, NULL), 0);
        assert_true (fresh.exact);
        assert_int_equal (ps_plan_find_peak (&p), 0);
        if (p.pool_peak != fresh.bytes)
          fail_msg ("%s seed %llu fusion %d: kept peak %llu, search %llu (known by the pass: %d)",
                    ps_gen_shape_name ((ps_gen_shape) shape), (unsigned long long) seed, fused,
                    (unsigned long long) p.pool_peak, (unsigned long long) fresh.bytes, known);
        plans++;
        ps_plan_free (&p);
        ps_graph_free (&g);
      }
  /* Some of these plans are at the bound, not all of them. */
  size_t n = ps__pool_peak_at_bound - at_bound;
  assert_true (n > 0 && n < plans);
}

/* A serial chain whose buffers grow then shrink: 8, 16, 24, 16, 8 MiB,
 * each kernel reading the last and writing the next, so at most two
 * neighbours are live at once: the peak is 24 + 16 = 40 MiB.  Placed in
 * issue order, the 24 MiB buffer finds only the 8 MiB its predecessor's
 * predecessor left and goes above them; largest first, it takes the
 * bottom and the others fit around it. */
static void
core_pool_serial_chain (void **state)
{
  (void) state;
  static const char json[] =
    "{\"format\": \"planscope-graph\", \"version\": 1, \"name\": \"grow-shrink\",\n"
    " \"buffers\": [{\"name\": \"b1\", \"bytes\": 8388608}, {\"name\": \"b2\", \"bytes\": 16777216},\n"
    "  {\"name\": \"b3\", \"bytes\": 25165824}, {\"name\": \"b4\", \"bytes\": 16777216},\n"
    "  {\"name\": \"b5\", \"bytes\": 8388608}],\n"
    " \"nodes\": [\n"
    "  {\"name\": \"k1\", \"op\": \"kernel\", \"function\": \"f\", \"grid\": 1, \"block\": 32, \"writes\": [\"b1\"]},\n"
    "  {\"name\": \"k2\", \"op\": \"kernel\", \"function\": \"f\", \"grid\": 1, \"block\": 32, \"reads\": [\"b1\"], \"writes\": [\"b2\"]},\n"
    "  {\"name\": \"k3\", \"op\": \"kernel\", \"function\": \"f\", \"grid\": 1, \"block\": 32, \"reads\": [\"b2\"], \"writes\": [\"b3\"]},\n"
    "  {\"name\": \"k4\", \"op\": \"kernel\", \"function\": \"f\", \"grid\": 1, \"block\": 32, \"reads\": [\"b3\"], \"writes\": [\"b4\"]},\n"
    "  {\"name\": \"k5\", \"op\": \"kernel\", \"function\": \"f\", \"grid\": 1, \"block\": 32, \"reads\": [\"b4\"], \"writes\": [\"b5\"]},\n"
    "  {\"name\": \"k6\", \"op\": \"kernel\", \"function\": \"f\", \"grid\": 1, \"block\": 32, \"reads\": [\"b5\"]}\n"
    " ]}\n";
  ps_graph g;
  ps_graph_init (&g);
  load_string (&g, json);
  for (uint32_t streams = 1; streams <= 4; streams++) {
    ps_plan p;
    assert_int_equal (plan_with (&p, &g, streams, true), 0);
    check_peak (&p);
    assert_int_equal (ps_plan_find_peak (&p), 0);
    assert_int_equal (p.pool_peak, 40u << 20);
    assert_int_equal (p.pool_bytes, 40u << 20);
    ps_plan_free (&p);
  }
  ps_graph_free (&g);
}

/* A memory budget below the pool on 4 streams: the plan moves to the
 * fastest count whose pool fits, verifies, is no faster than the plan
 * without the budget and says what it gave up; a budget below every
 * count's pool fails with the smallest pool found; one above the pool
 * changes nothing. */
static void
core_pool_memory_budget (void **state)
{
  (void) state;
  static const char *const names[] = { "copy-compute-overlap.json", "moe-experts.json" };
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    ps_graph g;
    ps_graph_init (&g);
    load_example (&g, names[i]);
    ps_plan free_plan, one;
    assert_int_equal (plan_with (&free_plan, &g, 4, true), 0);
    assert_int_equal (plan_with (&one, &g, 1, true), 0);
    /* Both examples need less on one stream than on four. */
    assert_true (one.pool_bytes < free_plan.pool_bytes);

    ps_plan_options o;
    ps_plan_options_init (&o);
    o.streams = 4;
    o.memory_budget = free_plan.pool_bytes - 1;
    ps_diag d;
    ps_diag_init (&d, names[i]);
    ps_plan p;
    assert_int_equal (ps_plan_build (&p, &g, &o, &d), 0);
    assert_true (p.pool_bytes <= o.memory_budget);
    assert_true (p.options.streams < 4);
    assert_int_equal (p.budget_streams_from, 4);
    assert_int_equal (p.budget_pool_from, free_plan.pool_bytes);
    assert_true (p.est_makespan_ns >= free_plan.est_makespan_ns);
    assert_true (p.budget_makespan_from_ns == free_plan.est_makespan_ns);
    assert_int_equal (ps_plan_verify (&p, print_report, NULL, 5), 0);
    ps_plan_free (&p);

    o.memory_budget = one.pool_bytes - 1;
    assert_int_equal (ps_plan_build (&p, &g, &o, &d), PS_ELIMIT);
    assert_true (d.count > 0);
    assert_non_null (strstr (d.entries[d.count - 1].message, "cannot plan within the memory budget"));
    ps_diag_free (&d);

    ps_diag_init (&d, names[i]);
    o.memory_budget = free_plan.pool_bytes;
    assert_int_equal (ps_plan_build (&p, &g, &o, &d), 0);
    assert_int_equal (p.budget_streams_from, 0);
    assert_int_equal (p.pool_bytes, free_plan.pool_bytes);
    assert_int_equal (p.options.streams, 4);
    ps_plan_free (&p);
    ps_diag_free (&d);
    ps_plan_free (&one);
    ps_plan_free (&free_plan);
    ps_graph_free (&g);
  }
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (core_pool_peak_oracle),
    cmocka_unit_test (core_pool_peak_examples),
    cmocka_unit_test (core_pool_peak_level_one),
    cmocka_unit_test (core_pool_accesses_beside_search),
    cmocka_unit_test (core_pool_peak_no_earliest_use),
    cmocka_unit_test (core_pool_within_peak),
    cmocka_unit_test (core_pool_small_at_peak),
    cmocka_unit_test (core_pool_layered_online),
    cmocka_unit_test (core_pool_peak_sought_while_planning),
    cmocka_unit_test (core_pool_peak_known_at_the_bound),
    cmocka_unit_test (core_pool_serial_chain),
    cmocka_unit_test (core_pool_memory_budget),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
