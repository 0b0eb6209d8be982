/* ps-planner.c: ps_plan_build, the compile pipeline (see
 * ps-planner-private.h): runs the passes in order, times them, owns the
 * shared context and resolves the device of the cost model; the analyse
 * pass lives here (a topological order).
 *
 * It also makes the choices that take whole plans to weigh, each judged
 * by the simulator, each made the same way whatever the stream count so
 * that more streams never make a slower plan:
 *
 *   fusion auto (the default): the plan with every legal fused group, the
 *   plan without fusion, and the plan with the groups kept back that the
 *   simulator finds faster unfused, one group after the other (judged on
 *   TRIAL_STREAMS streams, a short search each); the fastest wins, the
 *   first of equals, and the plan says how many groups it kept back.
 *   On every graph (a plan the search does not simulate is simulated once
 *   when it is final); trials only up to TRIAL_MAX nodes; --fusion all
 *   keeps every group.
 *
 *   --streams auto: the fewest streams, up to options.streams, whose plan
 *   is within AUTO_SLACK of the fastest plan on any of those counts.
 *
 *   --memory-budget: a plan whose pool is over the budget moves to the
 *   fastest plan on fewer streams whose pool fits (fit_budget). */
#include "ps-planner-private.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "model/ps-graph-private.h"
#include "ps-format.h"
#include "ps-pool-peak.h"
#include "ps-sim.h"
#include "util/ps-job.h"
#include "util/ps-topo.h"

/* Groups kept back one at a time when a plan has at most TRIAL_GROUPS
 * fused groups among at most TRIAL_MAX groups, each trial judged on
 * TRIAL_STREAMS streams (or what the pins need). */
#define TRIAL_GROUPS 8u
#define TRIAL_MAX 1024u
#define TRIAL_STREAMS 4u
/* --streams auto: within 1% of the fastest. */
#define AUTO_SLACK 0.01
/* Fusion auto on graphs of AHEAD_MIN nodes or more with a fusible pair
 * makes the plan without fusion on a second thread while it makes the
 * fused one (the two take about as long: 100k-node layered 1.3 s in turn,
 * 0.9 s side by side).  Smaller graphs plan in a few hundredths of a
 * second.  On graphs of more than ps__sim_max_groups nodes it is the
 * largest piece of work of the plan, and seldom needed: it starts once
 * the fused plan's streams are chosen, unless the least time the nodes
 * need unfused (ps_cost_unfused_bound) is no less than that plan's
 * simulated makespan, and its search tries no stream count that cannot
 * beat that makespan (ps__planner.cutoff). */
#define AHEAD_MIN 4096u

static void
planner_free (ps__planner *pl)
{
  ps__planner_search_drop (pl);
  if (pl->run) {
    ps_timeline_free (pl->run);
    free (pl->run);
  }
  free (pl->acc_off);
  free (pl->acc);
  free (pl->topo);
  free (pl->tpos);
  free (pl->node_group);
  free (pl->gm_off);
  free (pl->gm);
  free (pl->gcost);
  free (pl->gsim);
  free (pl->gres);
  free (pl->gfrac);
  free (pl->gpin);
  free (pl->gfunc);
  free (pl->gop);
  free (pl->gsucc_off);
  free (pl->gsucc);
  free (pl->gpred_off);
  free (pl->gpred);
  free (pl->grank);
  free (pl->chain_next);
  free (pl->chain_in);
  free (pl->order);
  free (pl->gissue);
  free (pl->gstream);
  free (pl->gpos);
  free (pl->gstart);
  free (pl->gfinish);
  free (pl->gafter);
  free (pl->program_order);
  free (pl->rank_order);
  free (pl->gevent);
  free (pl->uwait_of);
  free (pl->wait_off);
  free (pl->waits);
  free (pl->wait_dep);
  free (pl->snap_of);
  free (pl->snaps);
  memset (pl, 0, sizeof *pl);
}

/* The CSR arrays must be consistent before anything indexes with them. */
static bool
csr_ok (const ps_graph *g)
{
  uint32_t n = g->n_nodes;
  if (n > 0 && (!g->nodes || !g->succ_off || !g->pred_off))
    return false;
  if (n == 0)
    return true;
  if (g->succ_off[0] != 0 || g->pred_off[0] != 0 || g->succ_off[n] != g->pred_off[n])
    return false;
  for (uint32_t v = 0; v < n; v++)
    if (g->succ_off[v] > g->succ_off[v + 1] || g->pred_off[v] > g->pred_off[v + 1])
      return false;
  for (uint32_t e = 0; e < g->succ_off[n]; e++)
    if (g->succ[e] >= n || g->pred[e] >= n)
      return false;
  return true;
}

/* A topological order: the node ids themselves when every edge points
 * forward, as in loaded graphs, else Kahn's algorithm.  (Durations come
 * with the groups, in ps-fuse.c.) */
static int
analyse (ps__planner *pl)
{
  const ps_graph *g = pl->g;
  uint32_t n = pl->n, nn = n ? n : 1;
  pl->topo = malloc (nn * sizeof *pl->topo);
  pl->tpos = malloc (nn * sizeof *pl->tpos);
  if (!pl->topo || !pl->tpos)
    return ps__planner_nomem (pl);

  pl->n_kernel_nodes = ps__graph_kernel_nodes (g);
  bool forward = true;
  for (uint32_t v = 0; v < n && forward; v++)
    for (uint32_t e = g->succ_off[v]; e < g->succ_off[v + 1]; e++)
      if (g->succ[e] <= v) {
        forward = false;
        break;
      }
  if (forward) {
    for (uint32_t v = 0; v < n; v++)
      pl->topo[v] = pl->tpos[v] = v;
  } else {
    /* tpos doubles as the in-degree counter until a node is placed. */
    if (ps__topo_order (n, g->pred_off, g->succ_off, g->succ, pl->topo, pl->tpos) != n) {
      if (pl->diag)
        ps_diag_error (pl->diag, 0, 0, "cannot plan: the graph has a cycle");
      return PS_ECYCLE;
    }
    for (uint32_t i = 0; i < n; i++)
      pl->tpos[pl->topo[i]] = i;
  }
  return 0;
}

/* The device of the cost model: the one given, else the graph's, else
 * the default.  A graph's device that cannot be found is a warning: the
 * default profile is used instead. */
static void
resolve_device (ps__planner *pl, const ps_plan_options *o)
{
  if (o->device) {
    pl->dev = *o->device;
    return;
  }
  const char *name = pl->g->device && *pl->g->device ? pl->g->device : NULL;
  ps_diag d;
  ps_diag_init (&d, name ? name : PS_DEVICE_DEFAULT);
  int rc = ps_device_find (&pl->dev, name, &d);
  ps_diag_free (&d);
  if (rc == 0)
    return;
  if (pl->diag && name)
    ps_diag_warn (pl->diag, 0, 0, "cannot find the graph's device \"%s\"; planning for %s",
                  name, ps_device_builtin (0)->name);
  pl->dev = *ps_device_builtin (0);
}

/* The makespan of the plan the sync pass has emitted, simulated with the
 * fusion pass's costs; each group's simulated start and end become its
 * gstart and gfinish, for the memory pass, and with `keep` the run is
 * kept as the plan's (ps_plan.run: the memory pass changes no step).
 * INFINITY when it cannot be simulated. */
static int
simulate_final (ps__planner *pl, bool keep, double *ms)
{
  ps_plan *p = pl->p;
  ps_timeline tl;
  ps_timeline_init (&tl, PS_TL_SIMULATED);
  int rc = ps__planner_simulate (p, &pl->dev, pl->gsim, pl->node_group, &tl, 0, ms);
  if (rc == 0 && isfinite (*ms)) {
    /* Groups without a span (user events) take the end of the work
     * before them on their stream. */
    double last[PS_MAX_STREAMS] = { 0 };
    uint32_t *span_of = malloc (((size_t) p->n_steps + 1) * sizeof *span_of);
    if (!span_of) {
      rc = PS_ENOMEM;
    } else {
      for (uint32_t i = 0; i < p->n_steps; i++)
        span_of[i] = PS_NONE;
      for (uint32_t k = 0; k < tl.n_spans; k++)
        if (tl.spans[k].step < p->n_steps)
          span_of[tl.spans[k].step] = k;
      for (uint32_t i = 0; i < p->n_steps; i++) {
        const ps_step *st = &p->steps[i];
        if (st->nodes_count == 0)
          continue;
        uint32_t gi = pl->node_group[p->step_nodes[st->nodes_begin]];
        if (span_of[i] != PS_NONE) {
          pl->gstart[gi] = tl.spans[span_of[i]].start_ns;
          pl->gfinish[gi] = last[st->stream] = tl.spans[span_of[i]].end_ns;
        } else {
          pl->gstart[gi] = pl->gfinish[gi] = last[st->stream];
        }
      }
      free (span_of);
    }
  }
  if (rc == 0 && keep && isfinite (*ms))
    ps__plan_keep_run (p, &tl);
  ps_timeline_free (&tl);
  return rc == PS_ENOMEM ? ps__planner_nomem (pl) : 0;
}

/* The simulation of a finished schedule, on a second thread: its
 * makespan, and the run, which the plan keeps once the thread is done. */
typedef struct final_sim {
  const ps_plan *p;
  const ps_device *dev;
  const ps_cost *gsim; /* the fusion pass's costs, by group (node_group) */
  const uint32_t *node_group;
  bool keep; /* the run is wanted (in tl), not only its makespan */
  double ms;
  int rc;
  ps_timeline tl;
  ps__job job;
} final_sim;

static void
final_sim_main (void *arg)
{
  final_sim *f = arg;
  ps_timeline_init (&f->tl, PS_TL_SIMULATED);
  f->rc = ps__planner_simulate (f->p, f->dev, f->gsim, f->node_group, f->keep ? &f->tl : NULL, 0,
                                &f->ms);
}

/* One run of the pipeline: how it groups and searches. */
struct ahead;

typedef struct run_opts {
  bool fusion;
  const uint8_t *nofuse; /* per node: may not join a group; may be NULL */
  uint32_t quick_k;      /* a trial: only this stream count, a short search, no later pass */
  const ps__planner_variant *only; /* one list schedule instead of the search, or NULL */
  struct ahead *un; /* the plan without fusion when it may be skipped (ahead_start), or NULL */
  atomic_bool *cancel; /* set: stop between passes (PS_ECANCELED); may be NULL */
  /* The plan is the one ps_plan_build returns unless the plan without
   * fusion (`un`, when it is being made then) is faster: keep its run and
   * seek its pool's peak from when its steps are final. */
  bool final;
  /* Made on a second thread beside another plan (the plan without
   * fusion): the search starts no thread of its own. */
  bool beside;
  /* Only weighed (--streams auto's other counts): its makespan is all
   * that is read, so no memory pass (which changes no step). */
  bool weigh;
  /* Only a plan faster than this matters (ps__planner.cutoff); may be NULL. */
  _Atomic double *cutoff;
} run_opts;

static void ahead_after_streams (struct ahead *a, double bound, double estimate, bool exact);
static bool ahead_running (struct ahead *a);
static bool ahead_needs (struct ahead *a, double bound, double estimate);
static void ahead_probed (ps__planner *pl, double ms);
static void ahead_paired (ps__planner *pl, double ms);

/* Whether the plan without fusion is being made beside this one (and
 * may replace it). */
static bool
unfused_running (const run_opts *ro)
{
  return ro->un && ahead_running (ro->un);
}

/* What a run found. */
typedef struct run_result {
  double ms;      /* the plan's makespan: simulated when `simulated`, else the estimate */
  bool simulated;
  uint32_t n_fused;
  double at_most[PS_MAX_STREAMS + 1]; /* searched: fastest on at most k streams */
} run_result;

/* The planner's context for graph g into plan p under o, the device
 * resolved and the plan begun (its steps' arrays). */
static int
planner_start (ps__planner *pl, ps_plan *p, const ps_graph *g, const ps_plan_options *o,
               ps_diag *diag)
{
  pl->g = g;
  pl->p = p;
  pl->diag = diag;
  pl->n = g->n_nodes;
  pl->S = o->streams;
  resolve_device (pl, o);
  if (ps__plan_begin (p, g, o) < 0)
    return ps__planner_nomem (pl);
  p->device = pl->dev;
  return 0;
}

/* Runs the passes into p as ro says. */
static int
run (ps_plan *p, const ps_graph *g, const ps_plan_options *o, const run_opts *ro, ps_diag *diag,
     ps_timing *timing, run_result *res)
{
  double t = ps_clock_now ();
  ps__planner pl;
  memset (&pl, 0, sizeof pl);
  memset (p, 0, sizeof *p);
  res->ms = INFINITY;
  res->simulated = false;
  res->n_fused = 0;
  for (uint32_t k = 0; k <= PS_MAX_STREAMS; k++)
    res->at_most[k] = INFINITY;
  int rc = ps__plan_check_options (g, o, diag);
  if (rc < 0)
    goto out;
  pl.fusion = ro->fusion;
  pl.nofuse = ro->nofuse;
  pl.quick_k = ro->quick_k;
  pl.only = ro->only;
  pl.cancel = ro->cancel;
  pl.cutoff = ro->cutoff;
  pl.exact_counts = o->streams_auto;
  /* The search's second thread only where no plan is made beside it
   * (three threads on two cores: 100k-node fanout 0.91 s against 1.02 s). */
  pl.one_thread = ro->beside || unfused_running (ro);
  if (unfused_running (ro)) { /* ro->un: one that may be skipped (build) */
    pl.probed = ahead_probed;
    pl.probed_ctx = ro->un;
  }
  if (ro->un) { /* for a deferred one (ahead_paired) */
    pl.paired = ahead_paired;
    pl.paired_ctx = ro->un;
  }
  pl.at_most = res->at_most;
  if ((rc = planner_start (&pl, p, g, o, diag)) < 0)
    goto out;
  p->options.fusion = o->fusion;
  if ((rc = analyse (&pl)) < 0)
    goto out;
  ps_timing_mark (timing, "analyse", &t);
  if ((rc = ps__planner_fuse (&pl)) < 0)
    goto out;
  res->n_fused = pl.n_fused;
  ps_timing_mark (timing, "fuse", &t);
  if (ps__planner_cancelled (&pl)) {
    rc = PS_ECANCELED;
    goto out;
  }
  /* A last stream count left running while the sync and memory passes
   * are made for the fastest plan found before it (ps__planner_search
   * settles it after them; they are made again when it wins, which a
   * count using fewer streams than the fastest plan seldom does): not for
   * plans only weighed or trials (no memory pass to go beside), and not
   * when the plan without fusion might be started from the search's
   * result, which must then be final.  The search's second thread may
   * also make the memory pass's lists of pooled buffers. */
  pl.will_pool = !ro->quick_k && !ro->weigh;
  /* A plan past ps__sim_max_groups that will be final (as far as can be
   * told now: below) keeps the run the search simulated; the final
   * simulation it spares is 0.09-0.11 s of a 1M-node plan, recording the
   * run in the search about 0.06 s (1M-node fanout: the plan without
   * fusion is started after the search, so the run is recorded for
   * nothing). */
  pl.want_run = ro->final && !unfused_running (ro) && !ro->quick_k && !ro->weigh
                && pl.ng > ps__sim_max_groups;
  double sim_ms;
  if ((rc = ps__planner_search (&pl, &sim_ms)) < 0)
    goto out;
  bool changed = false;
  if (pl.tail && ro->un && ahead_needs (ro->un, pl.unfused_bound, sim_ms)
      && (rc = ps__planner_search_settle (&pl, &sim_ms, &changed)) < 0)
    goto out;
  if (changed && pl.synced) /* the sync pass the search kept was the plan it replaced */
    ps__planner_sync_undo (&pl);
  bool held = pl.tail != NULL;
  if (ro->un && !held)
    ahead_after_streams (ro->un, pl.unfused_bound, sim_ms >= 0 ? sim_ms : pl.makespan,
                         sim_ms >= 0);
  ps_timing_mark (timing, "streams", &t);
  if (ps__planner_cancelled (&pl)) {
    rc = PS_ECANCELED;
    goto out;
  }
  if (ro->quick_k) {
    res->ms = sim_ms >= 0 ? sim_ms : INFINITY;
    res->simulated = sim_ms >= 0;
    goto out;
  }
  if (!pl.synced && (rc = ps__planner_sync (&pl)) < 0)
    goto out;
  /* The steps are final.  A plan that will be kept (unless the plan
   * without fusion, still being made, replaces it) keeps the run it is
   * simulated in (ps_plan.run), and a large one has its pool's peak sought
   * from now on a second thread, beside the memory pass and what its
   * caller does next (writing the plan).  Other plans keep neither: two
   * 1M-node runs kept at once cost 120 MiB more at the peak (keeping the
   * run while the plan without fusion is made beside took the 1M-node
   * transformer's `plan` from 2.15 to 2.05 s and from 713 to 834-923 MiB,
   * 982 MiB with --streams auto).  With a count held, they are final
   * unless it wins: the peak is sought all the same (three threads on two
   * cores for a while: 1M-node layered `plan`, 3.22 s against 3.32 s when
   * it is sought once the count is settled), and sought again then. */
  bool final = ro->final && !unfused_running (ro);
  /* A plan past ps__sim_max_groups was simulated by the search, but its
   * final run (kept, and for `simulate`) is made beside the memory pass,
   * which then places buffers by the list schedule's times. */
  bool late = sim_ms >= 0 && pl.ng > ps__sim_max_groups;
  if (sim_ms >= 0 && !late && !ro->weigh && (rc = simulate_final (&pl, final, &sim_ms)) < 0)
    goto out;
  ps_timing_mark (timing, "sync", &t);
  if (ps__planner_cancelled (&pl)) {
    rc = PS_ECANCELED;
    goto out;
  }
  bool peak = final && o->find_peak && ps__plan_peak_start (p, ps__peak_early_min);
  /* A plan the search did not simulate (too many groups) is simulated
   * now, so that its makespan is the one `simulate` shows: on a second
   * thread while the memory pass runs (which neither reads nor changes
   * what the simulation does), or after it when that thread seeks the
   * peak (three threads on two cores: 1M-node layered, 3.29 s against
   * 2.92 s) or a count is held. */
  final_sim fs = { .p = pl.p, .dev = &pl.dev, .gsim = pl.gsim, .node_group = pl.node_group,
                   .keep = final, .ms = INFINITY };
  /* A plan the search simulated needs its final run only to keep it:
   * none when it is not final, nor when the search kept the run (unless
   * a held count replaces the plan, below). */
  bool wants_run = late && final && !ro->weigh;
  bool sim_now = sim_ms < 0 || (wants_run && !pl.run);
  ps__job_start (&fs.job, final_sim_main, &fs, sim_now && !peak && !held && !ro->weigh);
  rc = ro->weigh ? 0 : ps__planner_pool (&pl);
  ps_timing_mark (timing, "memory", &t);
  if (held && rc == 0) {
    rc = ps__planner_search_settle (&pl, &sim_ms, &changed);
    ps_timing_mark (timing, "streams", &t);
    if (rc == 0 && changed) {
      if (peak)
        ps__plan_peak_drop (p);
      ps__planner_sync_undo (&pl);
      rc = ps__planner_sync (&pl);
      ps_timing_mark (timing, "sync", &t);
      if (rc == 0) {
        p->pool_peak_known = false; /* the memory pass may have found the old steps' */
        peak = final && o->find_peak && ps__plan_peak_start (p, ps__peak_early_min);
        rc = ps__planner_pool (&pl);
      }
      ps_timing_mark (timing, "memory", &t);
    }
    if (ro->un)
      ahead_after_streams (ro->un, pl.unfused_bound, sim_ms, true);
    sim_now = sim_now || (wants_run && !pl.run);
  }
  if (rc == 0 && wants_run && pl.run) {
    ps__search_runs_kept++;
    ps__plan_keep_run (p, pl.run);
    free (pl.run);
    pl.run = NULL;
  }
  if (sim_now) {
    if (!ps__job_finish (&fs.job) && rc == 0)
      final_sim_main (&fs);
    ps_timing_mark (timing, "simulate", &t); /* its wait, or itself */
    if (rc == 0 && fs.rc == 0 && final && isfinite (fs.ms))
      ps__plan_keep_run (p, &fs.tl);
    ps_timeline_free (&fs.tl);
    if (rc == 0 && fs.rc < 0)
      rc = ps__planner_nomem (&pl);
  }
  if (rc < 0)
    goto out;
  res->simulated = sim_ms >= 0;
  if (sim_ms < 0 && isfinite (fs.ms))
    sim_ms = fs.ms;
  p->est_makespan_ns = res->ms = sim_ms >= 0 ? sim_ms : pl.makespan;
  p->est_simulated = sim_ms >= 0;
out:
  planner_free (&pl);
  if (rc < 0 || ro->quick_k)
    ps_plan_free (p);
  return rc;
}

/* The simulated makespan of a finished plan into *ms (ps_plan_makespan;
 * INFINITY when it cannot be simulated); PS_ENOMEM when the simulation
 * ran out of memory. */
static int
plan_makespan (const ps_plan *p, double *ms)
{
  int rc = ps_plan_makespan (p, ms);
  if (rc < 0)
    *ms = INFINITY;
  return rc == PS_ENOMEM ? PS_ENOMEM : 0;
}

/* Folds the fastest plans of r into at_most. */
static void
merge_at_most (double *at_most, const run_result *r)
{
  for (uint32_t k = 0; k <= PS_MAX_STREAMS; k++)
    if (r->at_most[k] < at_most[k])
      at_most[k] = r->at_most[k];
}

/* Keeps in *best the faster of *best (makespan *best_ms) and alt; *kept
 * says whether alt was.  PS_ENOMEM when alt could not be simulated for
 * want of memory (alt is freed). */
static int
keep_faster (ps_plan *best, double *best_ms, ps_plan *alt, bool *kept)
{
  double ms;
  int rc = plan_makespan (alt, &ms);
  *kept = rc == 0 && ms < *best_ms * (1 - 1e-9);
  if (*kept) {
    ps_plan_free (best);
    *best = *alt;
    *best_ms = ms;
    return 0;
  }
  ps_plan_free (alt);
  return rc;
}

/* The plan without fusion, made on a second thread (AHEAD_MIN) and only
 * weighed (run_opts.weigh: no pool), since the fused plan is seldom
 * slower; fusion_auto makes it whole when it is kept (1M-node fanout,
 * where the fused plan waits for it: 2.47 -> 2.33 s). */
typedef struct ahead {
  const ps_graph *g;
  const ps_plan_options *o;
  ps_plan plan;
  run_result res;
  ps_timing timing; /* its own: the passes of the thread that asked are timed */
  int rc;
  /* The least time its nodes need (`bound`) is found once the fused
   * plan's streams are chosen, when the plan may be skipped (`may_skip`:
   * nothing asks for the fastest plan on fewer streams, or the graph is
   * too large for the search).  A large graph's (`deferred`) starts then,
   * unless that least time is well above the fused plan's estimate; a
   * smaller one's, made beside from the start, is stopped then when that
   * least time is no less than the fused plan's simulated makespan. */
  bool may_skip, deferred, bounded, made;
  /* A deferred one started as the fused plan's search paired its counts
   * (ahead_paired), before that search was done. */
  bool early;
  double bound;
  /* The fused plan's simulated makespan (run_opts.cutoff): a deferred
   * one's search starts with it, and one made beside tries to beat it
   * from the candidate it is on when it is set. */
  _Atomic double cutoff;
  atomic_bool cancel;
  ps__job job;
} ahead;

static const run_opts UNFUSED = { false, NULL, 0, NULL, NULL, NULL };
/* The plan without fusion while it is only weighed (see ahead). */
static const run_opts UNFUSED_WEIGHED = { false, NULL, 0, NULL, NULL, NULL, .weigh = true };

/* Whether a plan built with o is the one ps_plan_build returns as it is
 * (run_opts.final): not one only weighed, nor one --streams auto or a
 * memory budget may replace with a plan on another count. */
static bool
returned (const ps_plan_options *o, bool weigh)
{
  return !weigh && !o->streams_auto && !o->memory_budget;
}

static void
ahead_main (void *arg)
{
  ahead *a = arg;
  run_opts ro = UNFUSED_WEIGHED;
  ro.cancel = &a->cancel;
  /* A deferred one starts once the fused plan's search is done, which
   * then has only its sync and memory passes left before it waits for
   * this one: its search may take a second thread. */
  ro.beside = !a->deferred;
  ro.cutoff = &a->cutoff;
  a->rc = run (&a->plan, a->g, a->o, &ro, NULL, &a->timing, &a->res);
  a->made = true;
}

/* Whether some edge joins two kernels that may fuse: without one, the
 * fused plan is the plan without fusion. */
static bool
any_fusible_pair (const ps_graph *g)
{
  for (uint32_t v = 0; v < g->n_nodes; v++) {
    uint64_t ev, sv, eu, su;
    if (!ps__fuse_key (g, v, &ev, &sv))
      continue;
    for (uint32_t e = g->pred_off[v]; e < g->pred_off[v + 1]; e++)
      if (ps__fuse_key (g, g->pred[e], &eu, &su) && eu == ev && su == sv)
        return true;
  }
  return false;
}

static void
ahead_start (ahead *a, const ps_graph *g, const ps_plan_options *o, bool need_at_most)
{
  memset (a, 0, sizeof *a);
  a->g = g;
  a->o = o;
  atomic_init (&a->cancel, false);
  atomic_init (&a->cutoff, 0.0);
  ps_timing_reset (&a->timing);
  bool wanted = o->fusion && !o->fusion_all && g->n_nodes >= AHEAD_MIN && any_fusible_pair (g);
  a->deferred = wanted && g->n_nodes > ps__sim_max_groups;
  a->may_skip = wanted && (a->deferred || !need_at_most);
  ps__job_start (&a->job, ahead_main, a, wanted && !a->deferred);
}

/* The plan without fusion, once the fused plan's makespan is estimated
 * (`exact`: simulated): a deferred one started unless its least time is
 * no less than the simulated makespan, which its search is then told to
 * beat (run_opts.cutoff), or, when the fused plan could not be simulated,
 * well above the list schedule's estimate (which the simulation may
 * exceed by a few percent: 1M-node fanout, 3.38 s estimated, 3.70 s
 * simulated, 3.46 s at least unfused); one made beside stopped when its
 * least time is no less than the simulated makespan (100k-node layered:
 * 1.49 s fused, 1.54 s at least unfused). */
#define AHEAD_SLACK 0.03
static void
ahead_after_streams (ahead *a, double bound, double estimate, bool exact)
{
  if (!a->may_skip || a->bounded)
    return;
  a->bound = bound;
  a->bounded = true;
  atomic_store (&a->cutoff, exact ? estimate : 0);
  if (!a->deferred) {
    if (exact && a->bound >= estimate)
      atomic_store (&a->cancel, true);
    return;
  }
  bool wanted = a->bound < estimate * (1 + (exact ? 0 : AHEAD_SLACK));
  if (!a->early) {
    ps__job_start (&a->job, ahead_main, a, wanted);
  } else if (!wanted) {
    atomic_store (&a->cancel, true);
    ps__ahead_paired_stops++;
  }
}

atomic_size_t ps__ahead_paired_starts, ps__ahead_paired_stops;
bool ps__ahead_no_paired;

/* The fused plan's search has a count simulated (ps__planner.paired, on
 * its second thread, whose pair is done while the caller still simulates
 * its own count): a deferred plan without fusion is started there when
 * its least time is below that count's makespan, so that the core left
 * idle makes its first passes, and stopped in ahead_after_streams when
 * the fused plan turns out faster than that least time.  (1M-node fanout:
 * the second count is done some 0.07 s before the first, and the plan
 * without fusion is needed; 1M-node layered: its least time is above the
 * second count's makespan, and it is not started.) */
static void
ahead_paired (ps__planner *pl, double ms)
{
  ahead *a = pl->paired_ctx;
  if (!a->deferred || a->bounded || a->early || !(pl->unfused_bound < ms) || ps__ahead_no_paired)
    return;
  a->early = true;
  ps__ahead_paired_starts++;
  ps__job_start (&a->job, ahead_main, a, true);
}

atomic_size_t ps__ahead_probe_stops;

/* The fused plan's search will be no slower than ms (ps__planner.probed):
 * a plan without fusion made beside it is stopped when its least time is
 * no less, and the search then tries its candidates two at a time
 * instead of one (100k-node layered and transformer graphs: the plan
 * 0.37 -> 0.34 s, 0.28 -> 0.26 s).  Until then it has taken the core the
 * fused plan's fusion pass left idle. */
static void
ahead_probed (ps__planner *pl, double ms)
{
  ahead *a = pl->probed_ctx;
  if (!(pl->unfused_bound >= ms))
    return;
  atomic_store (&a->cancel, true);
  ps__ahead_probe_stops++;
  pl->one_thread = false;
}

/* Whether ahead_after_streams may start or stop the plan without fusion
 * on this makespan of the fused plan (a lower one can only make it do
 * so): the makespan must then be the search's last word. */
static bool
ahead_needs (ahead *a, double bound, double estimate)
{
  return a->may_skip && !a->bounded && bound < estimate;
}

/* Whether the plan without fusion is being made and not told to stop. */
static bool
ahead_running (ahead *a)
{
  return ps__job_pending (&a->job) && !atomic_load (&a->cancel);
}

/* The job done, its wait timed as "unfused". */
static void
ahead_wait (ahead *a, ps_timing *timing)
{
  if (!ps__job_pending (&a->job))
    return;
  double t = ps_clock_now ();
  ps__job_finish (&a->job);
  ps_timing_mark (timing, "unfused", &t);
}

/* The plan without fusion into *p, *r: the thread's, once it is done,
 * or made now. */
static int
ahead_take (ahead *a, ps_plan *p, run_result *r, ps_timing *timing)
{
  ahead_wait (a, timing);
  if (a->made && a->rc == PS_ECANCELED) /* stopped, yet needed (run let it go) */
    a->made = false;
  if (!a->made) {
    run_opts ro = UNFUSED_WEIGHED;
    ro.cutoff = &a->cutoff;
    return run (p, a->g, a->o, &ro, NULL, timing, r);
  }
  a->made = false;
  *p = a->plan;
  *r = a->res;
  return a->rc;
}

/* A plan without fusion the caller did not take is let go. */
static void
ahead_drop (ahead *a)
{
  atomic_store (&a->cancel, true);
  ps__job_drop (&a->job);
  if (a->made && a->rc == 0)
    ps_plan_free (&a->plan);
  a->made = false;
}

/* Whether the plan without fusion, when it may be skipped, cannot be
 * faster than best: its least time is no less (the plan, if it is being
 * made, is let go). */
static bool
ahead_hopeless (ahead *a, double best)
{
  if (!a->may_skip || !a->bounded || a->bound < best)
    return false;
  ahead_drop (a);
  return true;
}

/* Fusion auto (see the top): keeps in p the fastest of the plan with
 * every group (already in p, res), the plan without fusion (from `un`)
 * and the plan with groups kept back; at_most gets the fastest plan of
 * any of them on at most k streams.  `weigh`: p is only weighed
 * (run_opts.weigh), and so are these. */
static int
fusion_auto (ps_plan *p, const ps_graph *g, const ps_plan_options *o, ps_timing *timing,
             const run_result *res, ahead *un, double *at_most, bool weigh)
{
  uint32_t n = g->n_nodes;
  double best = res->ms;
  ps_plan alt;
  run_result r;
  int rc = 0;
  memcpy (at_most, res->at_most, sizeof res->at_most);

  /* The fused groups of p, by first node: the trials' order, which the
   * stream count does not change. */
  uint32_t n_groups = 0, *group = NULL, *members = NULL, n_members = 0;
  bool trials = res->n_fused <= TRIAL_GROUPS && n <= TRIAL_MAX;
  if (trials) {
    group = malloc ((res->n_fused + 1) * sizeof *group);
    members = malloc ((p->n_step_nodes + 1) * sizeof *members);
    if (!group || !members) {
      rc = PS_ENOMEM;
      goto out;
    }
    for (uint32_t i = 0; i < p->n_steps && n_groups < res->n_fused; i++)
      if (p->steps[i].nodes_count > 1)
        group[n_groups++] = i;
    for (uint32_t a = 1; a < n_groups; a++)
      for (uint32_t b = a; b > 0; b--) {
        uint32_t x = p->step_nodes[p->steps[group[b]].nodes_begin];
        uint32_t y = p->step_nodes[p->steps[group[b - 1]].nodes_begin];
        if (x > y)
          break;
        uint32_t t = group[b];
        group[b] = group[b - 1];
        group[b - 1] = t;
      }
    /* Members, group after group; group[k] becomes its start. */
    uint32_t *start = malloc ((n_groups + 1) * sizeof *start);
    if (!start) {
      rc = PS_ENOMEM;
      goto out;
    }
    for (uint32_t k = 0; k < n_groups; k++) {
      const ps_step *st = &p->steps[group[k]];
      start[k] = n_members;
      memcpy (members + n_members, p->step_nodes + st->nodes_begin,
              st->nodes_count * sizeof *members);
      n_members += st->nodes_count;
    }
    start[n_groups] = n_members;
    free (group);
    group = start;
  }

  /* Without fusion, unless it cannot be faster: a graph too large for the
   * search (see AHEAD_MIN) whose fused plan takes no longer than the least
   * time its nodes need unfused (1M-node layered: 15.0 s fused, 15.6 s at
   * least unfused). */
  uint32_t kept_back = 0;
  bool kept = false;
  if (!ahead_hopeless (un, best)) {
    if ((rc = ahead_take (un, &alt, &r, timing)) < 0)
      goto out;
    merge_at_most (at_most, &r);
    if ((rc = keep_faster (p, &best, &alt, &kept)) < 0)
      goto out;
    if (kept)
      kept_back = res->n_fused;
    if (kept && !weigh) {
      /* It was only weighed: made whole (the same steps, with its pool),
       * as a final plan is. */
      run_opts ro = UNFUSED;
      ro.final = returned (o, false);
      ps_plan whole;
      if ((rc = run (&whole, g, o, &ro, NULL, timing, &r)) < 0)
        goto out;
      ps_plan_free (p);
      *p = whole;
    }
  }

  /* One group after the other, kept back when the trial is faster, with
   * trials on each count from one up to TRIAL_STREAMS (no more than the
   * streams allowed; the pins may raise a count): each set of groups kept
   * back is planned whole and weighed, so that the plans weighed on S
   * streams include the sets chosen on fewer, and more streams are never
   * slower (a 50-node layered graph: 1.21 ms on 3 streams, whose trials
   * kept back two groups, 1.29 ms on 4, whose trials kept back two
   * others). */
  uint8_t *nofuse = trials && n_groups ? calloc (n ? n : 1, 1) : NULL;
  if (trials && n_groups && !nofuse)
    rc = PS_ENOMEM;
  uint32_t tmax = o->streams < TRIAL_STREAMS ? o->streams : TRIAL_STREAMS;
  uint32_t masks[TRIAL_STREAMS], n_masks = 0;
  for (uint32_t tk = 1; nofuse && rc == 0 && tk <= tmax; tk++) {
    memset (nofuse, 0, n);
    rc = run (&alt, g, o, &(run_opts) { true, nofuse, tk, NULL, NULL, NULL }, NULL, timing, &r);
    double base = r.ms;
    uint32_t mask = 0;
    for (uint32_t k = 0; rc == 0 && k < n_groups; k++) {
      for (uint32_t j = group[k]; j < group[k + 1]; j++)
        nofuse[members[j]] = 1;
      rc = run (&alt, g, o, &(run_opts) { true, nofuse, tk, NULL, NULL, NULL }, NULL, timing, &r);
      if (rc == 0 && r.ms < base * (1 - 1e-9)) {
        base = r.ms;
        mask |= 1u << k;
      } else {
        for (uint32_t j = group[k]; j < group[k + 1]; j++)
          nofuse[members[j]] = 0;
      }
    }
    bool known = false;
    for (uint32_t i = 0; i < n_masks; i++)
      known |= masks[i] == mask;
    if (rc < 0 || mask == 0 || known)
      continue;
    masks[n_masks++] = mask;
    /* Kept if it is faster, so made as a final plan is. */
    run_opts ro = { true, nofuse, 0, NULL, NULL, NULL, returned (o, weigh), .weigh = weigh };
    rc = run (&alt, g, o, &ro, NULL, timing, &r);
    if (rc == 0) {
      merge_at_most (at_most, &r);
      rc = keep_faster (p, &best, &alt, &kept);
      if (rc == 0 && kept)
        for (kept_back = 0; mask; mask &= mask - 1) /* the groups in it */
          kept_back++;
    }
  }
  free (nofuse);
out:
  free (group);
  free (members);
  if (rc == 0)
    p->fusion_kept_back = kept_back;
  return rc;
}

/* A plan for o->streams streams, fusion as o says; *at_most (may be NULL)
 * the fastest plan found on at most k streams, where searched.  A plan
 * only weighed (`weigh`: --streams auto's other counts, of which only the
 * makespan is read) has no pool and keeps neither its run nor its pool's
 * peak. */
static int
build (ps_plan *p, const ps_graph *g, const ps_plan_options *o, ps_diag *diag, ps_timing *timing,
       double *at_most, bool weigh)
{
  run_result res;
  ahead un;
  ahead_start (&un, g, o, at_most != NULL);
  /* Fusion auto's plan without fusion, when it is made beside from the
   * start (may_skip false), may replace this one; so may --streams auto's
   * and a memory budget's plans on other counts. */
  bool beside = ps__job_pending (&un.job) && !un.may_skip;
  run_opts ro = { o->fusion, NULL, 0, NULL, un.may_skip ? &un : NULL, NULL,
                  !beside && returned (o, weigh), .weigh = weigh };
  int rc = run (p, g, o, &ro, diag, timing, &res);
  double all[PS_MAX_STREAMS + 1];
  if (rc == 0 && o->fusion && !o->fusion_all && res.n_fused > 0) {
    rc = fusion_auto (p, g, o, timing, &res, &un, all, weigh);
    if (rc == PS_ENOMEM && diag)
      ps_diag_error (diag, 0, 0, "out of memory while planning");
    if (rc < 0)
      ps_plan_free (p);
  } else {
    for (uint32_t k = 0; k <= PS_MAX_STREAMS; k++)
      all[k] = res.at_most[k];
  }
  ahead_drop (&un);
  if (at_most)
    memcpy (at_most, all, sizeof all);
  return rc;
}

/* Plan p's pool is over the memory budget: p becomes the fastest plan on
 * fewer streams whose pool fits (ties to more streams), with what it gave
 * up recorded; or, when no count down to one fits, PS_ELIMIT saying the
 * smallest pool found. */
static int
fit_budget (ps_plan *p, const ps_graph *g, const ps_plan_options *o, ps_diag *diag,
            ps_timing *timing)
{
  double from_ns;
  int rc = plan_makespan (p, &from_ns);
  if (rc < 0)
    return rc;
  uint32_t from = p->options.streams, least_k = from;
  uint64_t least = p->pool_bytes;
  ps_plan best;
  double best_ns = INFINITY;
  bool have = false;
  for (uint32_t k = from; k-- > 1 && rc == 0;) {
    ps_plan_options ok = *o;
    ok.streams = k;
    ok.streams_auto = false;
    ok.memory_budget = 0;
    ps_plan q;
    rc = build (&q, g, &ok, NULL, timing, NULL, false);
    if (rc == PS_EPIN || rc == PS_EUSAGE) { /* fewer streams than the pins need */
      rc = 0;
      break;
    }
    if (rc < 0)
      break;
    if (q.pool_bytes < least) {
      least = q.pool_bytes;
      least_k = k;
    }
    double ms = INFINITY;
    if (q.pool_bytes <= o->memory_budget)
      rc = plan_makespan (&q, &ms);
    if (rc == 0 && ms < best_ns) {
      if (have)
        ps_plan_free (&best);
      best = q;
      best_ns = ms;
      have = true;
    } else {
      ps_plan_free (&q);
    }
  }
  if (rc == 0 && !have) {
    if (diag) {
      char b[PS_FORMAT_MAX], x[PS_FORMAT_MAX], y[PS_FORMAT_MAX];
      ps_diag_error (diag, 0, 0,
                     "cannot plan within the memory budget of %s: the pool takes %s on %u "
                     "stream%s, and no less than %s on any count down to %u",
                     ps_format_bytes ((double) o->memory_budget, b, sizeof b),
                     ps_format_bytes ((double) p->pool_bytes, x, sizeof x), from,
                     from == 1 ? "" : "s", ps_format_bytes ((double) least, y, sizeof y),
                     least_k);
    }
    rc = PS_ELIMIT;
  }
  if (rc < 0) {
    if (have)
      ps_plan_free (&best);
    return rc;
  }
  uint64_t from_pool = p->pool_bytes;
  ps_plan_free (p);
  *p = best;
  p->options.memory_budget = o->memory_budget;
  p->budget_streams_from = from;
  p->budget_pool_from = from_pool;
  p->budget_makespan_from_ns = from_ns;
  return 0;
}

int
ps_plan_build (ps_plan *p, const ps_graph *g, const ps_plan_options *o, ps_diag *diag)
{
  ps_plan_options defaults;
  if (!o) {
    ps_plan_options_init (&defaults);
    o = &defaults;
  }
  memset (p, 0, sizeof *p);
  if (!g)
    return PS_EINVAL;
  if (!csr_ok (g)) {
    if (diag)
      ps_diag_error (diag, 0, 0, "cannot plan: the graph's edge arrays are inconsistent");
    return PS_EINVAL;
  }
  ps_timing timing;
  ps_timing_reset (&timing);
  double at_most[PS_MAX_STREAMS + 1];
  ps_plan_options raised;
  if (o->streams_auto && ps_graph_pinned_streams (g) > o->streams && !ps__plan_unpinned (g, o->streams)) {
    /* Auto weighs at least the counts the pins need. */
    raised = *o;
    raised.streams = ps_graph_pinned_streams (g);
    o = &raised;
  }
  int rc = build (p, g, o, diag, &timing, o->streams_auto ? at_most : NULL, false);
  if (rc == 0 && o->streams_auto) {
    /* The fastest on any count up to the most, then the fewest streams
     * within AUTO_SLACK of it; counts the search did not reach (graphs
     * too large for it) are planned and simulated one by one. */
    uint32_t max = o->streams;
    double ms[PS_MAX_STREAMS + 1], best = INFINITY;
    for (uint32_t k = 1; k <= max && rc == 0; k++) {
      ms[k] = at_most[k];
      if (k == max)
        rc = plan_makespan (p, &ms[k]);
      if (!isfinite (ms[k]) && k < max) {
        ps_plan_options ok = *o;
        ok.streams = k;
        ok.streams_auto = false;
        ps_plan q;
        rc = build (&q, g, &ok, NULL, &timing, NULL, true);
        if (rc == PS_EPIN || rc == PS_EUSAGE) { /* fewer streams than the pins need */
          rc = 0;
          continue;
        }
        if (rc == 0)
          rc = plan_makespan (&q, &ms[k]);
        ps_plan_free (&q);
      }
      if (ms[k] < best)
        best = ms[k];
    }
    uint32_t pick = max;
    for (uint32_t k = 1; k <= max; k++)
      if (isfinite (ms[k]) && ms[k] <= best * (1 + AUTO_SLACK)) {
        pick = k;
        break;
      }
    if (rc == 0 && pick < max) {
      ps_plan_options ok = *o;
      ok.streams = pick;
      ok.streams_auto = false;
      ps_plan_free (p);
      rc = build (p, g, &ok, diag, &timing, NULL, false);
    }
    if (rc == 0) {
      p->options.streams_auto = true;
      p->auto_streams_max = max;
      p->auto_best_ns = best;
    }
  }
  if (rc == 0 && o->memory_budget && p->pool_bytes > o->memory_budget)
    rc = fit_budget (p, g, o, diag, &timing);
  if (rc < 0)
    ps_plan_free (p);
  else
    p->timing = timing;
  return rc;
}

int
ps__plan_build_variant (ps_plan *p, const ps_graph *g, const ps_plan_options *o,
                        const ps__planner_variant *v, ps_diag *diag)
{
  memset (p, 0, sizeof *p);
  if (!g || !csr_ok (g))
    return PS_EINVAL;
  ps_timing timing;
  ps_timing_reset (&timing);
  run_result res;
  run_opts ro = { o->fusion, NULL, 0, v, NULL, NULL };
  int rc = run (p, g, o, &ro, diag, &timing, &res);
  if (rc == 0)
    p->timing = timing;
  return rc;
}

int
ps__plan_build_schedule (ps_plan *p, const ps_graph *g, const ps_plan_options *o,
                         const uint32_t *order, const uint16_t *stream, ps_diag *diag)
{
  ps_timing timing;
  ps_timing_reset (&timing);
  double t = ps_clock_now ();
  ps__planner pl;
  memset (&pl, 0, sizeof pl);
  memset (p, 0, sizeof *p);
  int rc = o->fusion || !csr_ok (g) ? PS_EINVAL : ps__plan_check_options (g, o, diag);
  if (rc < 0)
    goto out;
  if ((rc = planner_start (&pl, p, g, o, diag)) < 0 || (rc = analyse (&pl)) < 0
      || (rc = ps__planner_fuse (&pl)) < 0)
    goto out;
  /* Without fusion every node is its own group. */
  uint32_t ng = pl.ng, n1 = ng ? ng : 1;
  pl.order = malloc (n1 * sizeof *pl.order);
  pl.gissue = malloc (n1 * sizeof *pl.gissue);
  pl.gstream = malloc (n1 * sizeof *pl.gstream);
  pl.gpos = malloc (n1 * sizeof *pl.gpos);
  pl.gstart = calloc (n1, sizeof *pl.gstart);
  pl.gfinish = calloc (n1, sizeof *pl.gfinish);
  pl.gafter = malloc (n1 * sizeof *pl.gafter);
  if (!pl.order || !pl.gissue || !pl.gstream || !pl.gpos || !pl.gstart || !pl.gfinish
      || !pl.gafter) {
    rc = ps__planner_nomem (&pl);
    goto out;
  }
  for (uint32_t gi = 0; gi < ng; gi++)
    pl.gissue[gi] = PS_NONE;
  for (uint32_t i = 0; i < ng && rc == 0; i++) {
    uint32_t v = order[i], gi = v < pl.n ? pl.node_group[v] : PS_NONE;
    if (gi == PS_NONE || pl.gissue[gi] != PS_NONE || stream[v] >= o->streams
        || (pl.gpin[gi] >= 0 && (uint32_t) pl.gpin[gi] != stream[v])) {
      rc = PS_EINVAL;
      break;
    }
    for (uint32_t e = pl.gpred_off[gi]; e < pl.gpred_off[gi + 1]; e++)
      if (pl.gissue[pl.gpred[e]] == PS_NONE)
        rc = PS_EINVAL; /* not a topological order */
    pl.order[i] = gi;
    pl.gissue[gi] = i;
    pl.gstream[gi] = stream[v];
    pl.gafter[gi] = PS_NONE;
  }
  if (rc < 0) {
    if (diag)
      ps_diag_error (diag, 0, 0, "the schedule is not a topological order of the graph on its "
                     "streams");
    goto out;
  }
  ps__planner_positions (&pl);
  ps_timing_mark (&timing, "streams", &t);
  double ms;
  if ((rc = ps__planner_sync (&pl)) < 0 || (rc = simulate_final (&pl, true, &ms)) < 0
      || (rc = ps__planner_pool (&pl)) < 0)
    goto out;
  p->est_makespan_ns = ms;
  p->est_simulated = isfinite (ms);
  ps_timing_mark (&timing, "memory", &t);
out:
  planner_free (&pl);
  if (rc < 0)
    ps_plan_free (p);
  else
    p->timing = timing;
  return rc;
}
