/* sched-bench.c: how good planscope's schedules are, in tables.
 *
 *   sched-bench optimum [GRAPHS]   random graphs of 8-14 nodes (default
 *                                  120) on 1-4 streams: the planner's
 *                                  makespan, HEFT's and round-robin's
 *                                  against the exact optimum
 *                                  (tests/ps-test-sched.h), and how often
 *                                  the planner loses to either baseline
 *   sched-bench streams [MAX]      generated graphs of every shape, sizes
 *                                  100 to MAX nodes (default 30000), 3
 *                                  seeds, fused and not, on 1-8 streams:
 *                                  adjacent stream counts where more
 *                                  streams simulate slower
 *   sched-bench fusion [MAX]       the same graphs: points where the fused
 *                                  plan simulates slower than the unfused
 *                                  one
 *   sched-bench merges [MAX]       the same graphs on 4 streams: legal
 *                                  merges the fusion pass left undone
 *   sched-bench baselines [MAX]    generated graphs of every shape, 1,000
 *                                  to MAX nodes (default 100000),
 *                                  unfused on 2, 4 and 8 streams: the
 *                                  planner against HEFT and round-robin
 *
 * Every makespan is the simulator's, on h200.  SCHED_BENCH_CLI=PATH takes
 * the planner's makespans from another build's planscope-cli (figures
 * before a change), SCHED_BENCH_FROM=N leaves out sweep sizes below N,
 * SCHED_BENCH_STREAMS=S runs the optimum table on S streams only,
 * SCHED_BENCH_VERBOSE=1 prints each graph's figures.  The tests assert the same
 * figures on fewer graphs (test-schedule.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ps-gen.h"
#include "ps-test-gen.h"
#include "ps-test-optimum.h"
#include "ps-timing.h"

/* The search's budget per graph and stream count, in partial schedules
 * (SCHED_BENCH_BUDGET overrides it): past it the optimum is known to lie
 * between what the search proved and the best plan it found. */
#define BUDGET 3000000

/* The makespan of another build's plan of random graph `seed` on S
 * streams: `CLI simulate FILE --streams S --json`, for figures before a
 * change (SCHED_BENCH_CLI=PATH). */
static int
cli_makespan (const char *cli, uint32_t n, uint64_t seed, uint32_t S, double *ms)
{
  size_t len;
  char *json = sq_random_json (n, seed, &len), path[64], cmd[4096];
  snprintf (path, sizeof path, "/tmp/sched-bench-%d.json", (int) getpid ());
  FILE *f = json ? fopen (path, "w") : NULL;
  if (!f) {
    free (json);
    return PS_EIO;
  }
  fwrite (json, 1, len, f);
  fclose (f);
  free (json);
  snprintf (cmd, sizeof cmd, "%s simulate %s --streams %u --json", cli, path, S);
  FILE *p = popen (cmd, "r");
  char line[4096];
  int rc = PS_EIO;
  while (p && fgets (line, sizeof line, p))
    if (rc < 0 && strstr (line, "\"makespan_ns\": ")) {
      *ms = strtod (strstr (line, "\"makespan_ns\": ") + 15, NULL);
      rc = 0;
    }
  if (p)
    pclose (p);
  remove (path);
  return rc;
}

static int
optimum (uint32_t graphs)
{
  enum { PLAN, HEFT, RR, N_KIND };
  static const char *const names[N_KIND] = { "planscope", "HEFT", "round-robin" };
  printf ("%u random graphs of 8-14 nodes (tests/ps-test-sched.h): makespan against the "
          "optimum\n\n", graphs);
  printf ("%-8s %-12s %10s %10s %9s\n", "streams", "schedule", "mean", "max", "optimal");
  double t0 = ps_clock_now ();
  uint64_t expanded = 0;
  const char *b = getenv ("SCHED_BENCH_BUDGET");
  uint64_t budget = b ? strtoull (b, NULL, 10) : BUDGET;
  const char *only = getenv ("SCHED_BENCH_STREAMS");
  uint32_t s_lo = only ? (uint32_t) strtoul (only, NULL, 10) : 1, s_hi = only ? s_lo : 4;
  for (uint32_t S = s_lo; S <= s_hi; S++) {
    double sum[N_KIND] = { 0 }, worst[N_KIND] = { 0 }, loss[2] = { 0 }, gap = 0;
    uint32_t at_opt[N_KIND] = { 0 }, losses[2] = { 0 }, proven = 0;
    for (uint32_t k = 0; k < graphs; k++) {
      ps_graph g;
      uint32_t n = 8 + k % 7, order[SQ_MAX_NODES];
      uint16_t stream[SQ_MAX_NODES];
      if (sq_random_graph (&g, n, k + 1) < 0)
        return 1;
      double ms[N_KIND], opt = 0, lower = 0;
      uint64_t e = 0;
      const char *cli = getenv ("SCHED_BENCH_CLI");
      int rc = cli ? cli_makespan (cli, n, k + 1, S, &ms[PLAN])
                   : sq_planner_makespan (&g, S, true, &ms[PLAN]);
      if (rc == 0 && (rc = sq_heft (&g, S, order, stream)) == 0)
        rc = sq_schedule_makespan (&g, S, order, stream, &ms[HEFT]);
      sq_round_robin (&g, S, order, stream);
      if (rc == 0)
        rc = sq_schedule_makespan (&g, S, order, stream, &ms[RR]);
      double known = ms[PLAN];
      for (int i = 1; i < N_KIND; i++)
        if (ms[i] < known)
          known = ms[i];
      double tg = ps_clock_now ();
      if (rc == 0)
        rc = sq_optimum (&g, S, known, budget, &opt, &lower, NULL, NULL, &e);
      ps_graph_free (&g);
      if (rc < 0) {
        fprintf (stderr, "sched-bench: graph %u: %s\n", k + 1, ps_strerror (rc));
        return 1;
      }
      if (getenv ("SCHED_BENCH_VERBOSE"))
        fprintf (stderr, "graph %u: %u nodes, %u streams: %llu expanded, %.2f s, optimum %.0f "
                 "(proved %.0f), planscope %.0f, HEFT %.0f, round-robin %.0f\n", k + 1, n, S,
                 (unsigned long long) e, ps_clock_now () - tg, opt, lower, ms[PLAN], ms[HEFT],
                 ms[RR]);
      expanded += e;
      proven += lower >= opt;
      if (opt / lower - 1 > gap)
        gap = opt / lower - 1;
      for (int i = 0; i < N_KIND; i++) {
        double r = ms[i] / opt;
        sum[i] += r;
        if (r > worst[i])
          worst[i] = r;
        at_opt[i] += r <= 1 + 1e-6;
      }
      for (int i = 0; i < 2; i++)
        if (ms[PLAN] > ms[1 + i] * (1 + 1e-6)) {
          losses[i]++;
          if (ms[PLAN] / ms[1 + i] - 1 > loss[i])
            loss[i] = ms[PLAN] / ms[1 + i] - 1;
        }
    }
    for (int i = 0; i < N_KIND; i++)
      printf ("%-8u %-12s %9.4fx %9.4fx %5u/%u\n", S, names[i], sum[i] / graphs, worst[i],
              at_opt[i], graphs);
    printf ("%-8u planscope worse than HEFT on %u (up to +%.1f%%), than round-robin on %u "
            "(up to +%.1f%%)\n", S, losses[0], 100 * loss[0], losses[1], 100 * loss[1]);
    printf ("%-8u optimum proved on %u/%u graphs", S, proven, graphs);
    if (proven < graphs)
      printf ("; on the others it is at most %.2f%% below the best plan found", 100 * gap);
    printf ("\n\n");
    fflush (stdout);
  }
  printf ("search: %llu partial schedules, %.1f s\n", (unsigned long long) expanded,
          ps_clock_now () - t0);
  return 0;
}

/* The graphs of the streams and fusion sweeps. */
static const uint32_t sizes[] = { 100, 300, 1000, 3000, 10000, 30000, 100000, 300000, 1000000 };

static int
gen_graph (ps_graph *g, ps_gen_shape shape, uint32_t n, uint64_t seed)
{
  ps_gen_options go;
  pt_gen_options (&go, shape, n, seed, false);
  return pt_gen_graph (g, &go);
}

/* The sweep of another build: `CLI gen` and `CLI simulate
 * --sweep-streams 1..8 --json` (SCHED_BENCH_CLI=PATH). */
static int
cli_sweep (const char *cli, ps_gen_shape shape, uint32_t n, uint64_t seed, double ms[2][9])
{
  char path[64], cmd[4096], line[4096];
  snprintf (path, sizeof path, "/tmp/sched-bench-%d.json", (int) getpid ());
  snprintf (cmd, sizeof cmd, "%s gen %s --nodes %u --seed %llu -o %s && %s simulate %s "
            "--sweep-streams 1..8 --json", cli, ps_gen_shape_name (shape), n,
            (unsigned long long) seed, path, cli, path);
  FILE *p = popen (cmd, "r");
  uint32_t rows = 0;
  while (p && fgets (line, sizeof line, p)) {
    unsigned k;
    double f, u;
    if (sscanf (line, " {\"streams\": %u, \"fused_ns\": %lf, \"unfused_ns\": %lf", &k, &f, &u)
          == 3
        && k >= 1 && k <= 8) {
      ms[1][k] = f;
      ms[0][k] = u;
      rows++;
    }
  }
  if (p)
    pclose (p);
  remove (path);
  return rows == 8 ? 0 : PS_EIO;
}

/* streams 1..8, without and with fusion: ms[fusion][streams] */
static int
sweep_graph (const ps_graph *g, double ms[2][9])
{
  for (int f = 0; f < 2; f++)
    for (uint32_t S = 1; S <= 8; S++) {
      int rc = sq_planner_makespan (g, S, f == 1, &ms[f][S]);
      if (rc < 0)
        return rc;
    }
  return 0;
}

static int
sweeps (uint32_t max, bool streams)
{
  if (streams)
    printf ("%-12s %7s %6s %7s %10s  %s\n", "shape", "nodes", "graphs", "pairs", "worse",
            "worst (streams a->b, fusion)");
  else
    printf ("%-12s %7s %6s %7s %10s  %s\n", "shape", "nodes", "graphs", "points", "worse",
            "worst (streams)");
  uint32_t all_pairs = 0, all_bad = 0, all_graphs = 0;
  double all_worst = 0;
  double t0 = ps_clock_now ();
  const char *from = getenv ("SCHED_BENCH_FROM");
  uint32_t min = from ? (uint32_t) strtoul (from, NULL, 10) : 0;
  for (int shape = 0; shape < PS_GEN__COUNT; shape++)
    for (size_t z = 0; z < sizeof sizes / sizeof sizes[0] && sizes[z] <= max; z++) {
      if (sizes[z] < min)
        continue;
      uint32_t pairs = 0, bad = 0, wa = 0, wf = 0;
      double worst = 0;
      for (uint64_t seed = 1; seed <= 3; seed++) {
        ps_graph g;
        double ms[2][9];
        const char *cli = getenv ("SCHED_BENCH_CLI");
        int rc = 0;
        if (cli) {
          rc = cli_sweep (cli, (ps_gen_shape) shape, sizes[z], seed, ms);
        } else {
          if ((rc = gen_graph (&g, (ps_gen_shape) shape, sizes[z], seed)) == 0)
            rc = sweep_graph (&g, ms);
          ps_graph_free (&g);
        }
        if (rc < 0) {
          fprintf (stderr, "sched-bench: %s %u: %s\n", ps_gen_shape_name (shape), sizes[z],
                   ps_strerror (rc));
          return 1;
        }
        for (int f = 0; f < 2; f++)
          for (uint32_t S = streams ? 2 : 1; S <= 8; S++) {
            if (!streams && f == 1)
              continue;
            /* a: the plan b must not be slower than */
            double a = streams ? ms[f][S - 1] : ms[0][S], b = streams ? ms[f][S] : ms[1][S];
            pairs++;
            if (b > a * (1 + 1e-6)) {
              bad++;
              if (b / a - 1 > worst) {
                worst = b / a - 1;
                wa = S;
                wf = (uint32_t) f; /* 1: fused */
              }
            }
          }
      }
      all_graphs += 3;
      all_pairs += pairs;
      all_bad += bad;
      if (worst > all_worst)
        all_worst = worst;
      printf ("%-12s %7u %6u %7u %10u", ps_gen_shape_name (shape), sizes[z], 3, pairs, bad);
      if (bad && streams)
        printf ("  +%.2f%% (%u->%u, %s)", 100 * worst, wa - 1, wa, wf ? "fused" : "unfused");
      else if (bad)
        printf ("  +%.2f%% (%u)", 100 * worst, wa);
      printf ("\n");
      fflush (stdout);
    }
  printf ("\nall: %u graphs, %u %s, %u worse (up to +%.2f%%), %.1f s\n", all_graphs, all_pairs,
          streams ? "adjacent pairs" : "points", all_bad, 100 * all_worst, ps_clock_now () - t0);
  return 0;
}

/* Legal merges the fusion pass left undone in plan p: pairs of groups
 * (steps) joined by an edge between two kernels that may share a group
 * (ps__fuse_key), at most PS__FUSE_MAX_GROUP kernels together, whose
 * merge keeps the graph of groups acyclic: no path from one to the other
 * through a third group.  Issue order is a topological order of the
 * groups, so the search for such a path stops at the later group. */
static uint32_t
undone_merges (const ps_plan *p)
{
  const ps_graph *g = p->graph;
  uint32_t n = g->n_nodes, N = p->n_steps, found = 0;
  uint64_t *elems = malloc ((n + 1) * sizeof *elems), *sig = malloc ((n + 1) * sizeof *sig);
  uint32_t *seen = calloc (N + 1, sizeof *seen), *stack = malloc ((N + 1) * sizeof *stack);
  uint32_t *pair = calloc (N + 1, sizeof *pair), stamp = 0;
  if (!elems || !sig || !seen || !stack || !pair)
    abort ();
  for (uint32_t v = 0; v < n; v++)
    ps__fuse_key (g, v, &elems[v], &sig[v]);
  for (uint32_t a = 0; a < N; a++) {
    const ps_step *sa = &p->steps[a];
    for (uint32_t k = 0; k < sa->nodes_count; k++) {
      uint32_t u = p->step_nodes[sa->nodes_begin + k];
      if (!elems[u])
        continue;
      for (uint32_t e = g->succ_off[u]; e < g->succ_off[u + 1]; e++) {
        uint32_t v = g->succ[e], b = p->node_step[v];
        if (b == a || pair[b] == a + 1 || elems[v] != elems[u] || sig[v] != sig[u]
            || sa->nodes_count + p->steps[b].nodes_count > PS__FUSE_MAX_GROUP)
          continue;
        pair[b] = a + 1;
        /* A path a -> x -> ... -> b with x != b? */
        uint32_t top = 0, mark = ++stamp;
        bool cycle = false;
        stack[top++] = a;
        seen[a] = mark;
        while (top > 0 && !cycle) {
          uint32_t x = stack[--top];
          const ps_step *sx = &p->steps[x];
          for (uint32_t j = 0; j < sx->nodes_count && !cycle; j++) {
            uint32_t w = p->step_nodes[sx->nodes_begin + j];
            for (uint32_t f = g->succ_off[w]; f < g->succ_off[w + 1] && !cycle; f++) {
              uint32_t y = p->node_step[g->succ[f]];
              if (y == b)
                cycle = x != a;
              else if (y != x && y < b && seen[y] != mark) {
                seen[y] = mark;
                stack[top++] = y;
              }
            }
          }
        }
        found += !cycle;
      }
    }
  }
  free (elems);
  free (sig);
  free (seen);
  free (stack);
  free (pair);
  return found;
}

static int
merges (uint32_t max)
{
  printf ("%-12s %7s %6s %9s %9s %7s\n", "shape", "nodes", "graphs", "kernels", "fused", "undone");
  uint32_t all_k = 0, all_u = 0;
  for (int shape = 0; shape < PS_GEN__COUNT; shape++)
    for (size_t z = 0; z < sizeof sizes / sizeof sizes[0] && sizes[z] <= max; z++) {
      uint32_t kernels = 0, fused = 0, undone = 0;
      for (uint64_t seed = 1; seed <= 3; seed++) {
        ps_graph g;
        ps_plan p;
        ps_plan_options o;
        sq_options (&o, 4);
        o.fusion = o.fusion_all = true; /* the fusion pass's groups, none kept back */
        if (gen_graph (&g, (ps_gen_shape) shape, sizes[z], seed) < 0
            || ps_plan_build (&p, &g, &o, NULL) < 0)
          return 1;
        kernels += p.kernels_before;
        fused += p.kernels_before - p.kernels_after;
        undone += undone_merges (&p);
        ps_plan_free (&p);
        ps_graph_free (&g);
      }
      all_k += kernels;
      all_u += undone;
      printf ("%-12s %7u %6u %9u %9u %7u\n", ps_gen_shape_name (shape), sizes[z], 3, kernels,
              fused, undone);
      fflush (stdout);
    }
  printf ("\nall: %u kernels, %u legal merges undone\n", all_k, all_u);
  return 0;
}

/* Generated graphs of every shape, sizes 1,000 to MAX nodes, seed 1,
 * unfused on 2, 4 and 8 streams: planscope's makespan against HEFT's and
 * round-robin's (tests/ps-test-sched.h), where the sweep's graphs grow
 * past those the search runs HEFT and round-robin on (8,192 groups). */
static int
baselines (uint32_t max)
{
  static const uint32_t bsizes[] = { 1000, 10000, 30000, 100000, 200000 };
  static const uint32_t counts[] = { 2, 4, 8 };
  printf ("%-12s %7s %7s %10s %14s\n", "shape", "nodes", "streams", "vs HEFT",
          "vs round-robin");
  double t0 = ps_clock_now (), worst[2] = { 0 };
  uint32_t rows = 0, losses[2] = { 0 };
  for (int shape = 0; shape < PS_GEN__COUNT; shape++)
    for (size_t z = 0; z < sizeof bsizes / sizeof bsizes[0] && bsizes[z] <= max; z++) {
      ps_graph g;
      uint32_t n = bsizes[z];
      if (gen_graph (&g, (ps_gen_shape) shape, n, 1) < 0)
        return 1;
      uint32_t *order = malloc ((g.n_nodes + 1) * sizeof *order);
      uint16_t *stream = malloc ((g.n_nodes + 1) * sizeof *stream);
      if (!order || !stream)
        abort ();
      for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
        uint32_t S = counts[c];
        double plan = NAN, heft = NAN, rr = NAN;
        int rc = sq_planner_makespan (&g, S, false, &plan);
        if (rc == 0 && (rc = sq_heft (&g, S, order, stream)) == 0)
          rc = sq_schedule_makespan (&g, S, order, stream, &heft);
        sq_round_robin (&g, S, order, stream);
        if (rc == 0)
          rc = sq_schedule_makespan (&g, S, order, stream, &rr);
        if (rc < 0) {
          fprintf (stderr, "sched-bench: %s %u: %s\n", ps_gen_shape_name (shape), n,
                   ps_strerror (rc));
          return 1;
        }
        double r[2] = { plan / heft, plan / rr };
        for (int i = 0; i < 2; i++) {
          losses[i] += r[i] > 1 + 1e-6;
          if (r[i] > worst[i])
            worst[i] = r[i];
        }
        printf ("%-12s %7u %7u %9.4fx %13.4fx\n", ps_gen_shape_name (shape), n, S, r[0], r[1]);
        fflush (stdout);
        rows++;
      }
      free (order);
      free (stream);
      ps_graph_free (&g);
    }
  printf ("\n%u points: planscope slower than HEFT on %u (at most %.4fx), than round-robin on "
          "%u (at most %.4fx); %.1f s\n", rows, losses[0], worst[0], losses[1], worst[1],
          ps_clock_now () - t0);
  return 0;
}

int
main (int argc, char **argv)
{
  const char *mode = argc > 1 ? argv[1] : "optimum";
  uint32_t arg = argc > 2 ? (uint32_t) strtoul (argv[2], NULL, 10) : 0;
  if (strcmp (mode, "optimum") == 0)
    return optimum (arg ? arg : 120);
  if (strcmp (mode, "one") == 0 && argc > 3) {
    /* one SEED STREAMS: the optimum of one random graph, with the search's
     * figures (SQ_DEBUG=1 for more). */
    ps_graph g;
    uint32_t S = (uint32_t) strtoul (argv[3], NULL, 10), n = 8 + (arg - 1) % 7;
    if (sq_random_graph (&g, n, arg) < 0)
      return 1;
    double plan, opt;
    uint64_t e;
    double t = ps_clock_now ();
    if (sq_planner_makespan (&g, S, true, &plan) < 0
        || sq_optimum (&g, S, plan, 0, &opt, &opt, NULL, NULL, &e) < 0)
      return 1;
    printf ("graph %u: %u nodes, %u streams: planscope %.0f ns, optimum %.0f ns (%.4fx); "
            "%llu partial schedules, %.2f s\n", arg, n, S, plan, opt, plan / opt,
            (unsigned long long) e, ps_clock_now () - t);
    ps_graph_free (&g);
    return 0;
  }
  if (strcmp (mode, "streams") == 0)
    return sweeps (arg ? arg : 30000, true);
  if (strcmp (mode, "fusion") == 0)
    return sweeps (arg ? arg : 30000, false);
  if (strcmp (mode, "baselines") == 0)
    return baselines (arg ? arg : 100000);
  if (strcmp (mode, "merges") == 0)
    return merges (arg ? arg : 100000);
  fprintf (stderr, "usage: sched-bench optimum|streams|fusion|merges|baselines [N]\n");
  return 2;
}
