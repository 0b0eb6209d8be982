/* ps-test-sched.h: what schedule quality is measured against, for the
 * tests (test-schedule.c) and the bench that prints the tables
 * (bench/sched-bench.c): seeded random graphs of a few nodes, the two
 * textbook baselines (HEFT and round-robin) and the exact optimum.
 *
 * Every schedule here is an issue order of the nodes and a stream per
 * node; ps__plan_build_schedule turns it into a plan exactly as the
 * planner would (the minimal events of the sync pass, the pool) and
 * simulates it, so that every makespan compared is the simulator's.
 *
 * The optimum they are all held against is in ps-test-optimum.h.  No
 * cmocka here: functions return 0 or a negative status. */
#ifndef PS_TEST_SCHED_H
#define PS_TEST_SCHED_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/ps-planner-private.h"
#include "ps-cost.h"
#include "ps-import.h"
#include "ps-sim.h"

#define SQ_MAX_NODES 16
#define SQ_MAX_STREAMS 8

/* ---- random graphs ---- */

static inline uint64_t
sq_rand (uint64_t *s)
{
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static inline double
sq_uniform (uint64_t *s)
{
  return (double) (sq_rand (s) >> 11) / 9007199254740992.0;
}

/* A random graph of n nodes (at most SQ_MAX_NODES): kernels of 3 to 80 µs
 * that ask for 3% to all of the SMs, and about one node in seven a copy
 * to or from the host (its own buffer, 0.25 to 8 MiB); each node depends
 * on each earlier one with a probability that the seed also draws (0.12
 * to 0.4).  Named k0, k1, ... (copies c3, ...), in program order. */
static inline char *
sq_random_json (uint32_t n, uint64_t seed, size_t *len_out)
{
  static const uint32_t grids[] = { 4, 16, 40, 66, 100, 132, 132, 264 };
  uint64_t s = seed * 0x2545f4914f6cdd1dull + 7;
  if (n < 1 || n > SQ_MAX_NODES)
    return NULL;
  size_t cap = 4096 + (size_t) n * 512, len = 0;
  char *buf = malloc (cap);
  if (!buf)
    return NULL;
  char kind[SQ_MAX_NODES];
  uint64_t bytes[SQ_MAX_NODES];
  for (uint32_t v = 0; v < n; v++) {
    kind[v] = sq_uniform (&s) < 0.15 ? (sq_uniform (&s) < 0.5 ? 'u' : 'd') : 'k';
    bytes[v] = (uint64_t) (262144.0 * pow (32.0, sq_uniform (&s)));
  }
  double p = 0.25 + 0.25 * sq_uniform (&s);
  len += (size_t) snprintf (buf + len, cap - len,
                            "{\"format\": \"planscope-graph\", \"version\": 1, \"name\": "
                            "\"random-%u-%llu\", \"device\": \"h200\",\n\"buffers\": [",
                            n, (unsigned long long) seed);
  bool first = true;
  for (uint32_t v = 0; v < n; v++)
    if (kind[v] != 'k') {
      len += (size_t) snprintf (buf + len, cap - len,
                                "%s{\"name\": \"b%u\", \"bytes\": %llu, \"external\": true}",
                                first ? "" : ", ", v, (unsigned long long) bytes[v]);
      first = false;
    }
  len += (size_t) snprintf (buf + len, cap - len, "],\n\"nodes\": [\n");
  for (uint32_t v = 0; v < n; v++) {
    if (kind[v] == 'k')
      len += (size_t) snprintf (buf + len, cap - len,
                                "{\"name\": \"k%u\", \"op\": \"kernel\", \"function\": \"k\", "
                                "\"grid\": %u, \"block\": 256, \"cost_ns\": %.0f",
                                v, grids[sq_rand (&s) % 8],
                                3000.0 * pow (80.0 / 3.0, sq_uniform (&s)));
    else
      len += (size_t) snprintf (buf + len, cap - len,
                                "{\"name\": \"c%u\", \"op\": \"memcpy\", \"dir\": \"%s\", "
                                "\"%s\": [\"b%u\"]",
                                v, kind[v] == 'u' ? "h2d" : "d2h",
                                kind[v] == 'u' ? "writes" : "reads", v);
    uint32_t na = 0;
    for (uint32_t u = 0; u < v; u++)
      if (sq_uniform (&s) < p) {
        len += (size_t) snprintf (buf + len, cap - len, "%s\"%c%u\"",
                                  na ? ", " : ", \"after\": [", kind[u] == 'k' ? 'k' : 'c', u);
        na++;
      }
    len += (size_t) snprintf (buf + len, cap - len, "%s}%s\n", na ? "]" : "",
                              v + 1 < n ? "," : "");
  }
  len += (size_t) snprintf (buf + len, cap - len, "]}\n");
  if (len >= cap) {
    free (buf);
    return NULL;
  }
  *len_out = len;
  return buf;
}

static inline int
sq_random_graph (ps_graph *g, uint32_t n, uint64_t seed)
{
  size_t len;
  char *buf = sq_random_json (n, seed, &len);
  if (!buf)
    return PS_EINVAL;
  ps_diag d;
  ps_diag_init (&d, "random.json");
  ps_graph_init (g);
  int rc = ps_import_graph_mem (g, buf, len, "random.json", &d);
  if (rc < 0)
    ps_diag_print (&d, stderr);
  ps_diag_free (&d);
  free (buf);
  return rc;
}

/* ---- schedules and their plans ---- */

/* The device the helpers plan for: the first built-in one unless a test
 * sets another. */
static const ps_device *sq_device;

static inline void
sq_options (ps_plan_options *o, uint32_t streams)
{
  ps_plan_options_init (o);
  o->streams = streams;
  o->fusion = false;
  o->device = sq_device ? sq_device : ps_device_builtin (0);
}

/* The simulated makespan of the plan of a schedule (see the top). */
static inline int
sq_schedule_makespan (const ps_graph *g, uint32_t streams, const uint32_t *order,
                      const uint16_t *stream, double *ms)
{
  ps_plan_options o;
  sq_options (&o, streams);
  ps_plan p;
  int rc = ps__plan_build_schedule (&p, g, &o, order, stream, NULL);
  if (rc == 0)
    *ms = p.est_makespan_ns;
  ps_plan_free (&p);
  return rc;
}

/* The simulated makespan of planscope's own plan (the default options but
 * the stream count, on the same device). */
static inline int
sq_planner_makespan (const ps_graph *g, uint32_t streams, bool fusion, double *ms)
{
  ps_plan_options o;
  sq_options (&o, streams);
  o.fusion = fusion;
  ps_plan p;
  int rc = ps_plan_build (&p, g, &o, NULL);
  if (rc == 0) {
    ps_sim s;
    rc = ps_sim_init (&s, &p, &p.device);
    if (rc == 0)
      rc = ps_sim_run (&s, NULL, ms);
    ps_sim_free (&s);
  }
  ps_plan_free (&p);
  return rc;
}

/* Round-robin: nodes in program order, node i on stream i mod S. */
static inline void
sq_round_robin (const ps_graph *g, uint32_t streams, uint32_t *order, uint16_t *stream)
{
  for (uint32_t v = 0; v < g->n_nodes; v++) {
    order[v] = v;
    stream[v] = (uint16_t) (v % streams);
  }
}

/* HEFT (Topcuoglu, Hariri and Wu, 2002) with streams as the processors:
 * nodes by decreasing upward rank (the node's duration plus the largest
 * rank of its successors), each on the stream where it would finish
 * earliest (no insertion: a stream runs its work in issue order).  Its
 * timing is the device's without sharing: the host issues one launch
 * after another, work starts a launch latency after its issue, a dispatch
 * gap after the previous work of its stream and an event latency after a
 * predecessor on another stream.  Ties go to the lower stream. */
static inline int
sq_heft (const ps_graph *g, uint32_t streams, uint32_t *order, uint16_t *stream)
{
  const ps_device *d = ps_device_builtin (0);
  uint32_t n = g->n_nodes;
  double *w = malloc ((n + 1) * sizeof *w), *rank = malloc ((n + 1) * sizeof *rank);
  double *fin = malloc ((n + 1) * sizeof *fin);
  if (!w || !rank || !fin) {
    free (w);
    free (rank);
    free (fin);
    return PS_ENOMEM;
  }
  ps_cost_nodes (d, g, w);
  for (uint32_t v = n; v-- > 0;) { /* ids are a topological order */
    double best = 0;
    for (uint32_t e = g->succ_off[v]; e < g->succ_off[v + 1]; e++)
      if (rank[g->succ[e]] > best)
        best = rank[g->succ[e]];
    rank[v] = w[v] + best;
    order[v] = v;
  }
  /* Decreasing rank, then program order: a topological order, since a
   * node's rank is at least its successors'. */
  for (uint32_t i = 1; i < n; i++)
    for (uint32_t j = i; j > 0 && rank[order[j]] > rank[order[j - 1]]; j--) {
      uint32_t x = order[j];
      order[j] = order[j - 1];
      order[j - 1] = x;
    }
  double avail[PS_MAX_STREAMS], host = 0;
  for (uint32_t s = 0; s < streams; s++)
    avail[s] = -1;
  for (uint32_t i = 0; i < n; i++) {
    uint32_t v = order[i], best_s = 0;
    double best = INFINITY;
    host += d->host_launch_ns;
    for (uint32_t s = 0; s < streams; s++) {
      double est = host + d->launch_latency_ns;
      if (avail[s] >= 0 && avail[s] + d->dispatch_gap_ns > est)
        est = avail[s] + d->dispatch_gap_ns;
      for (uint32_t e = g->pred_off[v]; e < g->pred_off[v + 1]; e++) {
        uint32_t u = g->pred[e];
        double t = fin[u] + (stream[u] != s ? d->event_wait_ns : 0);
        if (t > est)
          est = t;
      }
      if (est + w[v] < best) {
        best = est + w[v];
        best_s = s;
      }
    }
    stream[v] = (uint16_t) best_s;
    fin[v] = best;
    avail[best_s] = best;
  }
  free (w);
  free (rank);
  free (fin);
  return 0;
}

#endif
