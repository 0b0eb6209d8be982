/* ps-search.c: the streams pass's search (ps-planner-private.h): which
 * schedule of the groups becomes the plan.
 *
 * Candidates come from generators, each run on every stream count k from
 * what the pins need up to the streams allowed: list schedules
 * (ps-schedule.c) that rank groups by their upward rank alone or blend it
 * with program order, HEFT and round-robin (ps-baseline.c).  Each
 * candidate goes through the sync pass and is simulated with the costs the
 * fusion pass computed (ps_sim_init_groups); the fastest is kept, and a
 * schedule simulated once is not simulated again.  Graphs of at most
 * LOCAL_GROUPS groups are then improved move by move after each k (local
 * search: a group to another stream, two neighbours in issue order
 * swapped, and on graphs of at most TINY_GROUPS a group to any other
 * place in issue order and stream, with a few restarts from the best plan
 * shaken by two such moves), each move simulated and kept when it is
 * faster.
 *
 * What count k tries depends only on k, never on the counts above it: a
 * generator's candidate for k is a function of k alone (and of nothing
 * but the graph), one that depends on the count only through the streams
 * it can use gives the same schedule for every k once a count left a
 * stream unused (unused streams are all alike), so it is not run again,
 * and the local search starts from the best plan of the counts up to k.
 * So the plan for S streams has every plan for fewer streams to choose
 * from, and more streams never simulate slower.
 *
 * Where candidates may stop (not --streams auto) and past the local
 * search, the first generator's schedule on the most streams tried is
 * simulated first (the probe, taken in its turn): the plan is no slower,
 * so the others stop past it and counts whose least makespan (least_on)
 * is above it are not tried; a plan without fusion made beside is told
 * (ps__planner.probed).
 *
 * Cost: per candidate, one list schedule, one sync pass and one
 * simulation, each O((V + E) log V) or so, two candidates at a time on
 * graphs of 2,048 groups or more that the local search leaves alone
 * (ps__search_pair_groups: the second on a second thread, unless the
 * plan without fusion is being made beside; the results are taken in
 * order, so the plan does not change); the generators are fewer on
 * larger graphs (FEW_GROUPS), some stop at a count (kcap),
 * and a count above the groups is the same as their number.  Graphs of
 * more than PS__SEARCH_MAX_GROUPS groups get three generators (the blend,
 * HEFT, round-robin), still on every count and simulated, so the
 * promises hold (more streams never slower, never slower than HEFT or
 * round-robin); above ps__sim_max_groups only the blend, from the most
 * streams down, stopping at the first count whose least makespan (any
 * schedule's: least_on) cannot beat the fastest found (search_down): more
 * streams are still never slower, but HEFT and round-robin are not
 * tried.  There, a last count left alone (two at a time, the other core
 * would idle) is left running on the second thread while the caller makes
 * the sync and memory passes of the fastest plan found before it, and
 * settled after them (ps__planner_search_settle): when it wins, which a
 * count that cannot use as many streams as that plan seldom does, they
 * are made again, so the plan is the one trying it in line gives.  1M-node
 * layered `plan` 3.23 -> 2.95 s (median of 5; the streams pass 0.83 ->
 * 0.50 s, the memory pass beside it 0.45 -> 0.58 s). */
#include "ps-planner-private.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ps-array.h"
#include "ps-sim.h"
#include "util/ps-job.h"

/* Graphs of at most FEW_GROUPS groups get every generator, larger ones
 * the first N_FEW (the blend, the rank, HEFT and round-robin), and above
 * PS__SEARCH_MAX_GROUPS generators_large; at most LOCAL_GROUPS, the local
 * search too, for at most LOCAL_EVALS simulations per group and count. */
#define FEW_GROUPS 1024u
#define N_FEW 4u
#define LOCAL_GROUPS 64u
#define LOCAL_EVALS 8u
/* At most this many groups, the local search also moves a group to any
 * other place in issue order, on any stream (at most TINY_EVALS
 * simulations per group and count). */
#define TINY_GROUPS 16u
#define TINY_EVALS 512u
#define TINY_KICKS 64u

enum { GEN_LIST, GEN_HEFT, GEN_RR };

typedef struct generator {
  uint8_t kind;
  ps__planner_variant var;
  /* The highest count it runs on, and whether its schedule depends on the
   * count only through the streams it may use. */
  uint16_t kcap;
  bool count_free;
} generator;

/* In order of use: ties keep the earlier, so the blend, which keeps
 * buffers short-lived, comes first.  (Variants that won too seldom on
 * random and generated graphs to pay for their time are not here: the
 * upward rank untimed, and both blends ranked against a first pass.) */
static const generator generators[] = {
  { GEN_LIST, { PS__KEY_BLEND, PS__ORDER_SHORTER, PS__RANK_BOUND, 0, 0 }, 16, false },
  { GEN_LIST, { PS__KEY_RANK, PS__ORDER_SHORTER, PS__RANK_BOUND, 0, 0 }, PS_MAX_STREAMS, true },
  { GEN_HEFT, { 0, 0, 0, 0, 0 }, PS_MAX_STREAMS, true },
  { GEN_RR, { 0, 0, 0, 0, 0 }, PS_MAX_STREAMS, false },
  { GEN_LIST, { PS__KEY_RANK, PS__ORDER_NONE, PS__RANK_BOUND, 0, 0 }, PS_MAX_STREAMS, true },
  { GEN_LIST, { PS__KEY_BLEND, PS__ORDER_NONE, PS__RANK_BOUND, 1, 0 }, 16, false },
};
#define N_GEN (sizeof generators / sizeof generators[0])

/* The generators of graphs past the full search, on every count: the
 * blend's list schedule (the only one above ps__sim_max_groups, and when
 * nothing could be simulated the one schedule, on all streams), HEFT,
 * round-robin. */
static const generator generators_large[] = {
  { GEN_LIST, { PS__KEY_BLEND, PS__ORDER_SHORTER, PS__RANK_BOUND, 0, 0 }, PS_MAX_STREAMS, false },
  { GEN_HEFT, { 0, 0, 0, 0, 0 }, PS_MAX_STREAMS, true },
  { GEN_RR, { 0, 0, 0, 0, 0 }, PS_MAX_STREAMS, false },
};

typedef struct search {
  ps__planner *pl;
  /* The schedules simulated: hashes (open addressing, 0 is empty) and
   * their makespans. */
  uint64_t *seen;
  double *seen_ms;
  uint32_t n_seen, seen_cap;
  /* The best schedule so far and its makespan. */
  uint32_t *b_order, *b_after;
  uint16_t *b_stream;
  double best;
  uint32_t best_sc; /* the streams it uses */
  bool best_synced; /* it is the one in pl, its sync pass kept (search_down) */
  uint64_t synced_hash; /* the schedule_hash of the one synced in pl, while pl->synced */
  /* Scratch for the local search: gafter before a move. */
  uint32_t *after_was;
  /* A candidate's simulation may stop once it cannot beat what the search
   * must (stop_of). */
  bool may_stop;
  /* The makespan of a candidate the search will take (`probe`), or
   * INFINITY: candidates may stop once past it too.  Its schedule, kept
   * (p_order, p_stream, p_after: NULL when none), is that candidate's
   * when the search comes to it: generator probe_gen on probe_k. */
  double probe;
  const struct generator *probe_gen;
  uint32_t probe_k;
  uint32_t *p_order, *p_after;
  uint16_t *p_stream;
} search;

/* The makespan of the plan the search is weighed against (pl->cutoff,
 * once set), 0 when none. */
static double
cutoff_of (const ps__planner *pl)
{
  return pl->cutoff ? atomic_load_explicit (pl->cutoff, memory_order_relaxed) : 0;
}

/* The makespan a candidate must beat to matter: the fastest found, or the
 * plan the search is weighed against when that is faster. */
static double
beat_of (const search *se)
{
  double cut = cutoff_of (se->pl), best = se->best < se->probe ? se->best : se->probe;
  return cut > 0 && cut < best ? cut : best;
}

/* Whether a candidate of makespan ms, slower than the plan the search is
 * weighed against, changes nothing: once one is found, such a candidate
 * does not take its place (a simulation stopped above that plan gives a
 * bound, stop_of, which may be below the makespan of one that ran to its
 * end). */
static bool
past_cutoff (const search *se, double ms)
{
  double cut = cutoff_of (se->pl);
  return cut > 0 && ms > cut && isfinite (se->best);
}

/* Where a candidate's simulation may stop (ps_sim.stop_above): at
 * beat_of, so that one stopped (past it by more than a billionth) can
 * neither beat nor tie it (ties go to the fewer streams), and the makespan
 * it gives, a bound above that, loses as its own would; 0: never. */
static double
stop_of (const search *se)
{
  double beat = beat_of (se);
  return se->may_stop && isfinite (beat) ? beat : 0;
}

/* A fingerprint of the schedule in pl: issue order, streams and
 * resource-order waits (FNV-1a over their values), never 0. */
static uint64_t
schedule_hash (const ps__planner *pl)
{
  uint64_t h = 1469598103934665603ull;
  for (uint32_t i = 0; i < pl->ng; i++) {
    uint32_t gi = pl->order[i];
    uint64_t x = ((uint64_t) gi << 32) ^ ((uint64_t) pl->gstream[gi] << 16) ^ pl->gafter[gi];
    h = (h ^ x) * 1099511628211ull;
  }
  return h ? h : 1;
}

/* Where h is among the schedules seen, or the empty slot it would take
 * (the table has one). */
static uint32_t
seen_slot (const search *se, uint64_t h)
{
  uint32_t j = (uint32_t) (h & (se->seen_cap - 1));
  while (se->seen[j] && se->seen[j] != h)
    j = (j + 1) & (se->seen_cap - 1);
  return j;
}

/* Finds h among the schedules seen, adding it when missing: *slot is its
 * place, *added whether it is new. */
static int
seen_find (search *se, uint64_t h, uint32_t *slot, bool *added)
{
  if (2 * ((uint64_t) se->n_seen + 1) > se->seen_cap) {
    uint32_t cap = se->seen_cap ? 2 * se->seen_cap : 64;
    uint64_t *t = calloc (cap, sizeof *t);
    double *v = malloc (cap * sizeof *v);
    if (!t || !v) {
      free (t);
      free (v);
      return PS_ENOMEM;
    }
    for (uint32_t i = 0; i < se->seen_cap; i++)
      if (se->seen[i]) {
        uint32_t j = (uint32_t) (se->seen[i] & (cap - 1));
        while (t[j])
          j = (j + 1) & (cap - 1);
        t[j] = se->seen[i];
        v[j] = se->seen_ms[i];
      }
    free (se->seen);
    free (se->seen_ms);
    se->seen = t;
    se->seen_ms = v;
    se->seen_cap = cap;
  }
  uint32_t j = seen_slot (se, h);
  *added = !se->seen[j];
  if (*added) {
    se->seen[j] = h;
    se->seen_ms[j] = INFINITY;
    se->n_seen++;
  }
  *slot = j;
  return 0;
}

int
ps__planner_simulate (const ps_plan *p, const ps_device *d, const ps_cost *gsim,
                      const uint32_t *node_group, ps_timeline *tl, double stop_above, double *ms)
{
  ps_sim s;
  *ms = INFINITY;
  int rc = gsim ? ps_sim_init_groups (&s, p, d, gsim, node_group) : ps_sim_init (&s, p, d);
  if (rc == PS_ENOMEM)
    return rc;
  if (rc < 0)
    return 0;
  s.stop_above = stop_above;
  rc = ps_sim_run (&s, tl, ms);
  if (rc == 0 && s.stopped)
    ps__search_stopped++;
  ps_sim_free (&s);
  if (rc != 0)
    *ms = INFINITY;
  return rc == PS_ENOMEM ? PS_ENOMEM : 0;
}

/* Whether schedule h was simulated, and its makespan.  Reads only. */
static bool
seen_lookup (const search *se, uint64_t h, double *ms)
{
  if (!se->seen_cap)
    return false;
  uint32_t j = seen_slot (se, h);
  if (!se->seen[j])
    return false;
  *ms = se->seen_ms[j];
  return true;
}

/* The schedule in pl emitted by the sync pass, simulated with the fusion
 * pass's costs and taken back unless `keep` (and it could be simulated):
 * *ms, INFINITY when it cannot be simulated, a bound above `stop_above`
 * when it cannot end below that (stop_of).  Kept, its run is kept too
 * where pl->want_run asks (pl->run). */
static int
simulate_schedule (ps__planner *pl, bool keep, double stop_above, double *ms)
{
  ps__search_simulated++;
  int rc = ps__planner_sync (pl);
  if (rc < 0)
    return rc;
  ps_timeline *tl = keep && pl->want_run ? malloc (sizeof *tl) : NULL;
  if (tl)
    ps_timeline_init (tl, PS_TL_SIMULATED);
  rc = ps__planner_simulate (pl->p, &pl->dev, pl->gsim, pl->node_group, tl, stop_above, ms);
  if (tl && (rc != 0 || !isfinite (*ms))) {
    ps_timeline_free (tl);
    free (tl);
    tl = NULL;
  }
  pl->run = tl; /* NULL before: the sync pass frees it when undone, and is made once */
  if (keep && rc == 0)
    return 0;
  ps__planner_sync_undo (pl);
  return rc == PS_ENOMEM ? ps__planner_nomem (pl) : 0;
}

/* Simulates the schedule in pl (its positions set): *ms, INFINITY when it
 * cannot be simulated; a schedule simulated before is not simulated
 * again. */
static int
evaluate (search *se, double *ms)
{
  ps__planner *pl = se->pl;
  bool added;
  uint32_t slot;
  if (seen_find (se, schedule_hash (pl), &slot, &added) < 0)
    return ps__planner_nomem (pl);
  *ms = se->seen_ms[slot];
  if (!added)
    return 0;
  int rc = simulate_schedule (pl, false, stop_of (se), ms);
  if (rc < 0)
    return rc;
  se->seen_ms[slot] = *ms;
  return 0;
}

/* Keeps the schedule in pl (se->pl, or a candidate's clone of it) as the
 * best, of makespan ms. */
/* The schedule in pl (order, stream, after) into the arrays given
 * (load_schedule puts it back). */
static void
copy_schedule (const ps__planner *pl, uint32_t *order, uint16_t *stream, uint32_t *after)
{
  memcpy (order, pl->order, pl->ng * sizeof *pl->order);
  memcpy (stream, pl->gstream, pl->ng * sizeof *pl->gstream);
  memcpy (after, pl->gafter, pl->ng * sizeof *pl->gafter);
}

static void
save_best_of (search *se, const ps__planner *pl, double ms)
{
  se->best = ms;
  se->best_sc = pl->SC;
  copy_schedule (pl, se->b_order, se->b_stream, se->b_after);
}

static void
save_best (search *se, double ms)
{
  save_best_of (se, se->pl, ms);
}

/* Generator i's candidate, simulated in pl (se->pl or a clone) at
 * makespan ms: the streams it used, and kept when it is faster than the
 * best (ties to the earlier). */
static void
take (search *se, const ps__planner *pl, uint32_t i, uint32_t *used, double ms)
{
  used[i] = pl->SC;
  if (ms < se->best * (1 - 1e-12) && !past_cutoff (se, ms))
    save_best_of (se, pl, ms);
}

/* Schedule (order, stream, after) into pl, positions and all. */
static void
load_schedule (ps__planner *pl, const uint32_t *order, const uint16_t *stream,
               const uint32_t *after)
{
  memcpy (pl->order, order, pl->ng * sizeof *pl->order);
  memcpy (pl->gstream, stream, pl->ng * sizeof *pl->gstream);
  memcpy (pl->gafter, after, pl->ng * sizeof *pl->gafter);
  ps__planner_positions (pl);
}

static void
load_best (search *se)
{
  load_schedule (se->pl, se->b_order, se->b_stream, se->b_after);
}

/* Whether generator gen is not run on k streams: past its cap, or, when
 * its schedule depends on the count only through the streams it may use,
 * above a count whose schedule left a stream unused (`used` streams:
 * that schedule again). */
static bool
skipped (const generator *gen, uint32_t used, uint32_t k)
{
  return k > gen->kcap || (gen->count_free && used < k - 1);
}

/* Generator `gen`'s schedule on k streams, into pl. */
static int
schedule_by (ps__planner *pl, const generator *gen, uint32_t k)
{
  if (gen->kind == GEN_LIST) {
    pl->var = gen->var;
    pl->var.streams = (uint16_t) k;
    return ps__planner_schedule (pl);
  }
  if (gen->kind == GEN_HEFT)
    return ps__planner_heft (pl, k);
  return ps__planner_round_robin (pl, k);
}

/* Generator `gen`'s schedule on k streams into pl (se->pl or a clone):
 * the probe's, kept, when it is that one. */
static int
schedule_of (ps__planner *pl, const search *se, const generator *gen, uint32_t k)
{
  if (se->p_order && gen == se->probe_gen && k == se->probe_k) {
    load_schedule (pl, se->p_order, se->p_stream, se->p_after);
    return 0;
  }
  return schedule_by (pl, gen, k);
}

/* Runs generator `gen` on k streams and simulates its schedule. */
static int
generate (search *se, const generator *gen, uint32_t k, double *ms)
{
  int rc = schedule_of (se->pl, se, gen, k);
  return rc < 0 ? rc : evaluate (se, ms);
}

/* ---- two candidates at once ---- */

/* Graphs of at least ps__search_pair_groups groups without the local
 * search try their candidates two at a time, unless the plan is made
 * beside another (pl->one_thread): the second on a second thread in a
 * clone of the planner, which shares what the fusion pass made (read
 * only) and has its own schedule, sync arrays and plan.  The results are
 * taken in the candidates' order, so the plan is the one the candidates
 * tried one after the other give. */
uint32_t ps__search_pair_groups = 2048u;
uint32_t ps__sim_max_groups = 262144u;
atomic_size_t ps__search_pairs_taken;
atomic_size_t ps__search_simulated;
atomic_size_t ps__search_tails_left, ps__search_tails_won;
atomic_size_t ps__search_runs_kept;
atomic_size_t ps__search_stopped;
bool ps__search_never_stop;
atomic_size_t ps__search_probes;
bool ps__search_no_probe;
bool ps__search_leave_always;
double *ps__search_least_out;

struct least;
static bool may_beat (const search *se, const struct least *b, uint32_t k);

/* The schedule hash of the count the caller tries beside the second (0
 * when its list schedule failed), handed over once it is known. */
typedef struct post {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  bool ready, posted;
  uint64_t hash;
} post;

typedef struct second {
  ps__planner w;
  ps_plan p;
  const search *se; /* its schedules seen (read only while it runs) */
  const generator *gen;
  uint32_t k;
  /* search_down: when count k's list schedule leaves a stream unused and
   * is the one the caller's count gives (`first`), it is not synced and
   * simulated again, and the second goes on to the counts below while
   * that holds, down to `floor` (0: it does not), those that may beat
   * the fastest found (least_on `b`).  k_last: the last count it tried,
   * whose schedule is in w (the ones above it are the caller's). */
  uint32_t floor, k_last;
  const struct least *b;
  post first;
  bool same; /* count k_last's schedule is the caller's count's */
  uint64_t hash;
  bool known; /* simulated before, or the caller's: ms is the one seen */
  double ms;
  int rc;
  /* After its count: the memory pass's lists of pooled buffers for this
   * planner (ps__planner_pool_accesses), or NULL. */
  ps__planner *accesses;
  /* After its count, the planner whose `paired` it tells, or NULL. */
  ps__planner *paired;
  ps__job job;
} second;

/* Hands the caller's schedule hash h to the second (0: none). */
static void
post_hash (post *f, uint64_t h)
{
  if (!f->ready)
    return;
  pthread_mutex_lock (&f->mu);
  f->hash = h;
  f->posted = true;
  pthread_cond_signal (&f->cv);
  pthread_mutex_unlock (&f->mu);
}

/* The caller's schedule hash, once it is posted. */
static uint64_t
posted_hash (post *f)
{
  pthread_mutex_lock (&f->mu);
  while (!f->posted)
    pthread_cond_wait (&f->cv, &f->mu);
  uint64_t h = f->hash;
  pthread_mutex_unlock (&f->mu);
  return h;
}

static int
second_init (second *c, const search *se)
{
  const ps__planner *pl = se->pl;
  memset (c, 0, sizeof *c);
  if (pthread_mutex_init (&c->first.mu, NULL) != 0)
    return PS_ENOMEM;
  if (pthread_cond_init (&c->first.cv, NULL) != 0) {
    pthread_mutex_destroy (&c->first.mu);
    return PS_ENOMEM;
  }
  c->first.ready = true;
  c->se = se;
  c->w = *pl;
  c->w.diag = NULL; /* a failure is tried again in line, where it is said */
  c->w.at_most = NULL;
  c->w.want_run = false;
  c->w.run = NULL;
  c->w.p = &c->p;
  c->w.gevent = c->w.snap_of = c->w.wait_off = c->w.waits = c->w.wait_dep = c->w.snaps = NULL;
  /* The schedule arrays: the baselines fill them, the list scheduler
   * makes its own. */
  uint32_t n1 = pl->ng ? pl->ng : 1;
  c->w.order = malloc (n1 * sizeof *c->w.order);
  c->w.gissue = malloc (n1 * sizeof *c->w.gissue);
  c->w.gstream = malloc (n1 * sizeof *c->w.gstream);
  c->w.gpos = malloc (n1 * sizeof *c->w.gpos);
  c->w.gstart = malloc (n1 * sizeof *c->w.gstart);
  c->w.gfinish = malloc (n1 * sizeof *c->w.gfinish);
  c->w.gafter = malloc (n1 * sizeof *c->w.gafter);
  const ps_plan *p = pl->p;
  if (!c->w.order || !c->w.gissue || !c->w.gstream || !c->w.gpos || !c->w.gstart
      || !c->w.gfinish || !c->w.gafter || ps__plan_begin (&c->p, pl->g, &p->options) < 0
      || ps__array_reserve (&c->p.strings, &c->p.strings_cap, (uint64_t) p->strings_len + 1, 1,
                            PS_ARRAY_MAX) < 0)
    return PS_ENOMEM;
  c->p.device = p->device;
  if (p->strings_len)
    memcpy (c->p.strings, p->strings, p->strings_len);
  c->p.strings_len = p->strings_len;
  return 0;
}

static void
second_free (second *c)
{
  ps__planner *w = &c->w;
  free (w->order);
  free (w->gissue);
  free (w->gstream);
  free (w->gpos);
  free (w->gstart);
  free (w->gfinish);
  free (w->gafter);
  free (w->gevent);
  free (w->snap_of);
  free (w->wait_off);
  free (w->waits);
  free (w->wait_dep);
  free (w->snaps);
  ps_plan_free (&c->p);
  if (c->first.ready) {
    pthread_cond_destroy (&c->first.cv);
    pthread_mutex_destroy (&c->first.mu);
    c->first.ready = false;
  }
}

/* The makespan of the schedule in pl, of hash h: the one seen (*known),
 * else simulated (see simulate_schedule for `keep`).  Reads se only. */
static int
makespan_of (ps__planner *pl, const search *se, uint64_t h, bool keep, bool *known, double *ms)
{
  if ((*known = seen_lookup (se, h, ms)))
    return 0;
  if (pl->synced) /* an earlier schedule's, kept (search_down) */
    ps__planner_sync_undo (pl);
  return simulate_schedule (pl, keep, stop_of (se), ms);
}

/* Generator gen's schedule on k streams into pl (se->pl or a clone),
 * its hash, and its makespan: the one seen (*known), else simulated.
 * Reads se only. */
static int
try_candidate (ps__planner *pl, const search *se, const generator *gen, uint32_t k, bool keep,
               uint64_t *hash, bool *known, double *ms, post *to)
{
  *known = false;
  *ms = INFINITY;
  int rc = schedule_of (pl, se, gen, k);
  if (rc < 0) {
    if (to)
      post_hash (to, 0);
    return rc;
  }
  *hash = schedule_hash (pl);
  if (to)
    post_hash (to, *hash);
  return makespan_of (pl, se, *hash, keep, known, ms);
}

/* The second's counts from c->k down (see `second`). */
static int
second_counts (second *c)
{
  ps__planner *w = &c->w;
  for (uint32_t k = c->k;; k--) {
    c->k_last = k;
    c->same = c->known = false;
    c->ms = INFINITY;
    int rc = schedule_of (w, c->se, c->gen, k);
    if (rc < 0)
      return rc;
    c->hash = schedule_hash (w);
    /* A schedule that leaves streams of the second's first count unused
     * is likely the same on the counts around it (the 1M-node
     * transformer's four counts all give one); others are not waited
     * for. */
    if (c->floor && w->SC < c->k && posted_hash (&c->first) == c->hash) {
      c->same = c->known = true;
      if (k > c->floor && may_beat (c->se, c->b, k - 1))
        continue;
      return 0;
    }
    return makespan_of (w, c->se, c->hash, false, &c->known, &c->ms);
  }
}

static void
second_main (void *arg)
{
  second *c = arg;
  c->rc = second_counts (c);
  if (c->accesses) {
    /* Left unmade when it fails: the memory pass makes them and says so. */
    (void) ps__planner_pool_accesses (c->accesses);
    c->accesses = NULL;
  }
  if (c->paired) {
    if (c->rc == 0 && isfinite (c->ms))
      c->paired->paired (c->paired, c->ms);
    c->paired = NULL;
  }
}

/* True when group b depends on group a directly or follows it in a
 * user event's chain: they may not swap places in issue order. */
static bool
bound_to (const ps__planner *pl, uint32_t a, uint32_t b)
{
  if (pl->chain_next[a] == b)
    return true;
  for (uint32_t e = pl->gsucc_off[a]; e < pl->gsucc_off[a + 1]; e++)
    if (pl->gsucc[e] == b)
      return true;
  return false;
}

/* After a move: positions again, and resource-order waits that no longer
 * point at earlier work on another stream dropped (gafter as it was is
 * in se->after_was). */
static void
settle (search *se)
{
  ps__planner *pl = se->pl;
  memcpy (se->after_was, pl->gafter, pl->ng * sizeof *pl->gafter);
  ps__planner_positions (pl);
  for (uint32_t gi = 0; gi < pl->ng; gi++) {
    uint32_t x = pl->gafter[gi];
    if (x != PS_NONE && (pl->gstream[x] == pl->gstream[gi] || pl->gissue[x] > pl->gissue[gi]))
      pl->gafter[gi] = PS_NONE;
  }
}

static void
unsettle (search *se)
{
  ps__planner *pl = se->pl;
  memcpy (pl->gafter, se->after_was, pl->ng * sizeof *pl->gafter);
  ps__planner_positions (pl);
}

/* Tries the schedule in pl: *better when faster than *cur, which it then
 * becomes (and the best plan, when faster than that); else the caller
 * undoes the move. */
static int
try_move (search *se, double *cur, bool *better)
{
  double ms;
  settle (se);
  int rc = evaluate (se, &ms);
  *better = rc == 0 && ms < *cur * (1 - 1e-9);
  if (*better) {
    *cur = ms;
    if (ms < se->best * (1 - 1e-9))
      save_best (se, ms);
  }
  return rc;
}

/* Moves the group at issue index i to index j (shifting those between). */
static void
relocate (ps__planner *pl, uint32_t i, uint32_t j)
{
  uint32_t gi = pl->order[i];
  if (i < j)
    memmove (pl->order + i, pl->order + i + 1, (j - i) * sizeof *pl->order);
  else
    memmove (pl->order + j + 1, pl->order + j, (i - j) * sizeof *pl->order);
  pl->order[j] = gi;
}

/* The issue indexes group order[i] may move to: after its last
 * predecessor (or chain neighbour) and before its first successor. */
static void
room (const ps__planner *pl, uint32_t i, uint32_t *lo, uint32_t *hi)
{
  uint32_t gi = pl->order[i];
  *lo = 0;
  *hi = pl->ng - 1;
  for (uint32_t j = 0; j < pl->ng; j++) {
    uint32_t x = pl->order[j];
    if (j < i && bound_to (pl, x, gi))
      *lo = j + 1;
    if (j > i && bound_to (pl, gi, x) && j - 1 < *hi)
      *hi = j - 1;
  }
}

/* Hill climbing from the schedule in pl, of makespan *cur, on at most k
 * streams: each move is simulated and kept at once when faster, until no
 * move helps or *evals reaches budget.  Moves: a group to every other
 * stream (those used and the lowest unused), and, on graphs of at most
 * TINY_GROUPS groups, to every other place in issue order its
 * dependencies allow, on every stream; on larger ones two neighbours in
 * issue order swapped. */
static int
descend (search *se, uint32_t k, double *cur, uint32_t *evals, uint32_t budget)
{
  ps__planner *pl = se->pl;
  uint32_t ng = pl->ng;
  bool tiny = ng <= TINY_GROUPS, improved = true, better;
  int rc;
  while (improved && *evals < budget) {
    improved = false;
    for (uint32_t i = 0; i < ng && *evals < budget; i++) {
      uint32_t gi = pl->order[i], used = pl->SC, was = pl->gstream[gi];
      if (pl->gpin[gi] >= 0)
        continue;
      uint32_t top = used < k ? used + 1 : k;
      for (uint32_t s = 0; s < top && *evals < budget; s++) {
        if (s == was)
          continue;
        pl->gstream[gi] = (uint16_t) s;
        if ((rc = try_move (se, cur, &better)) < 0)
          return rc;
        ++*evals;
        if (better) {
          was = s;
          improved = true;
        } else {
          pl->gstream[gi] = (uint16_t) was;
          unsettle (se);
        }
      }
    }
    if (tiny) {
      for (uint32_t i = 0; i < ng && *evals < budget; i++) {
        uint32_t gi = pl->order[i], lo, hi;
        room (pl, i, &lo, &hi);
        uint32_t used = pl->SC, top = used < k ? used + 1 : k, was = pl->gstream[gi];
        bool moved = false;
        for (uint32_t j = lo; j <= hi && !moved && *evals < budget; j++) {
          if (j == i)
            continue;
          for (uint32_t s = 0; s < top && !moved && *evals < budget; s++) {
            if (pl->gpin[gi] >= 0 && (int32_t) s != pl->gpin[gi])
              continue;
            relocate (pl, i, j);
            pl->gstream[gi] = (uint16_t) s;
            if ((rc = try_move (se, cur, &better)) < 0)
              return rc;
            ++*evals;
            if (better) {
              moved = improved = true;
            } else {
              relocate (pl, j, i);
              pl->gstream[gi] = (uint16_t) was;
              unsettle (se);
            }
          }
        }
      }
      continue;
    }
    for (uint32_t i = 0; i + 1 < ng && *evals < budget; i++) {
      uint32_t a = pl->order[i], b = pl->order[i + 1];
      if (bound_to (pl, a, b))
        continue;
      pl->order[i] = b;
      pl->order[i + 1] = a;
      if ((rc = try_move (se, cur, &better)) < 0)
        return rc;
      ++*evals;
      if (better) {
        improved = true;
      } else {
        pl->order[i] = a;
        pl->order[i + 1] = b;
        unsettle (se);
      }
    }
  }
  return 0;
}

/* Improves the best plan on at most k streams: hill climbing from it,
 * and on graphs of at most TINY_GROUPS groups TINY_KICKS more climbs,
 * each from the best plan with two groups moved to places and streams a
 * fixed sequence of numbers picks (so the search stays deterministic). */
static int
local_search (search *se, uint32_t k)
{
  ps__planner *pl = se->pl;
  uint32_t ng = pl->ng, evals = 0;
  bool tiny = ng <= TINY_GROUPS;
  uint32_t budget = (tiny ? TINY_EVALS : LOCAL_EVALS) * ng;
  double cur = se->best;
  load_best (se);
  int rc = descend (se, k, &cur, &evals, budget);
  uint64_t x = 0x9e3779b97f4a7c15ull ^ ng;
  for (uint32_t kick = 0; tiny && rc == 0 && kick < TINY_KICKS && evals < budget; kick++) {
    load_best (se);
    for (int m = 0; m < 2; m++) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      uint32_t i = (uint32_t) (x % ng), lo, hi;
      room (pl, i, &lo, &hi);
      uint32_t gi = pl->order[i], used = pl->SC, top = used < k ? used + 1 : k;
      uint32_t j = lo + (uint32_t) ((x >> 20) % (hi - lo + 1));
      relocate (pl, i, j);
      if (pl->gpin[gi] < 0)
        pl->gstream[gi] = (uint16_t) ((x >> 40) % top);
      ps__planner_positions (pl);
    }
    settle (se);
    if ((rc = evaluate (se, &cur)) < 0)
      break;
    if (cur < se->best * (1 - 1e-9))
      save_best (se, cur);
    rc = descend (se, k, &cur, &evals, budget);
  }
  load_best (se);
  return rc;
}

static void
search_free (search *se)
{
  free (se->seen);
  free (se->seen_ms);
  free (se->b_order);
  free (se->b_after);
  free (se->b_stream);
  free (se->after_was);
  free (se->p_order);
  free (se->p_after);
  free (se->p_stream);
}

/* The next candidate from (*k, *i) on (count, generator) that is not
 * skipped.  False past count hi, or on reaching generator `stop` (whose
 * skip the candidate being tried may change; N_GEN: none). */
static bool
next_candidate (const generator *gens, uint32_t n_gen, const uint32_t *used, uint32_t hi,
                uint32_t stop, uint32_t *k, uint32_t *i)
{
  for (;; (*i)++) {
    if (*i >= n_gen) {
      *i = 0;
      (*k)++;
    }
    if (*k > hi || *i == stop)
      return false;
    if (!skipped (&gens[*i], used[*i], *k))
      return true;
  }
}

/* Records schedule h as simulated, of makespan ms. */
static int
seen_put (search *se, uint64_t h, double ms)
{
  bool added;
  uint32_t slot;
  if (seen_find (se, h, &slot, &added) < 0)
    return ps__planner_nomem (se->pl);
  if (added)
    se->seen_ms[slot] = ms;
  return 0;
}

/* The fastest on at most k streams, the best so far, for the counts from
 * *filled up to (not including) upto. */
static void
fill_at_most (search *se, uint32_t *filled, uint32_t upto)
{
  for (; se->pl->at_most && *filled < upto; (*filled)++)
    se->pl->at_most[*filled] = se->best;
}

/* The candidates of counts lo..hi, generators gens (no local search),
 * two at a time (ps__search_pair_groups): the second on a second thread
 * when it comes before the first's generator comes again (its skip is
 * then decided already), the results taken in order.  The fastest on at
 * most k streams into pl->at_most as the search one at a time gives
 * it. */
static int
search_pairs (search *se, const generator *gens, uint32_t n_gen, uint32_t lo, uint32_t hi,
              uint32_t *used)
{
  ps__planner *pl = se->pl;
  second c;
  bool two = second_init (&c, se) == 0;
  int rc = 0;
  uint32_t k = lo, i = 0, filled = lo; /* at_most set below count `filled` */
  while (next_candidate (gens, n_gen, used, hi, N_GEN, &k, &i)) {
    if (ps__planner_cancelled (pl)) {
      rc = PS_ECANCELED;
      break;
    }
    /* The second: the next candidate before generator i1 comes again
     * (what it skips may depend on the first's result). */
    uint32_t k1 = k, i1 = i++, k2 = k, i2 = i;
    bool pair = two && next_candidate (gens, n_gen, used, hi, i1, &k2, &i2);
    if (pair) {
      c.gen = &gens[i2];
      c.k = k2;
      ps__job_start (&c.job, second_main, &c, true);
      ps__search_pairs_taken++;
    }
    double ms1;
    uint64_t h1 = 0;
    bool known1;
    rc = try_candidate (pl, se, &gens[i1], k1, false, &h1, &known1, &ms1, NULL);
    if (pair && !ps__job_finish (&c.job))
      second_main (&c);
    if (rc < 0)
      break;
    fill_at_most (se, &filled, k1);
    if (!known1 && (rc = seen_put (se, h1, ms1)) < 0)
      break;
    take (se, pl, i1, used, ms1);
    if (!pair)
      continue;
    if (c.rc < 0) {
      /* Tried again in line, where its failure is said. */
      two = false;
      k = k2;
      i = i2;
      continue;
    }
    fill_at_most (se, &filled, k2);
    if (!c.known && (rc = seen_put (se, c.hash, c.ms)) < 0)
      break;
    take (se, &c.w, i2, used, c.ms);
    k = k2;
    i = i2 + 1;
  }
  if (rc == 0) /* counts above the groups are the same as the last */
    fill_at_most (se, &filled, pl->S + 1);
  second_free (&c);
  return rc;
}

/* What bounds any schedule's makespan from below, whatever its count. */
typedef struct least {
  double total;                 /* the groups' solo times */
  double gap;                   /* the device's dispatch gap (0 on measured graphs) */
  uint32_t n_work;              /* groups that are work (not a user event's call) */
  double cp;                    /* the critical path of solo times: the largest upward rank */
  double busy[PS_RES__COUNT];   /* share x solo time on each resource */
  double widest[PS_RES__COUNT]; /* the largest share asked for on it */
  bool measured;                /* measured durations, which already hold their sharing */
} least;

/* The least makespan of any schedule on k streams: each stream runs its
 * groups one at a time, and the simulator never runs a group faster than
 * its solo time (it slows work down when it shares the device), so
 * total / k and the critical path; work on a stream starts no earlier
 * than the dispatch gap after the end of the work before it there, so
 * the k' <= k streams used are busy at least total plus (n_work - k') gaps
 * among them, and some stream at least that over k' (no less than over k);
 * and a resource gives out at most its whole, and no more than k groups'
 * shares at once (on a graph of estimated costs). */
static double
least_on (const least *b, uint32_t k)
{
  double m = b->total / k > b->cp ? b->total / k : b->cp;
  double busy = (b->total + (b->n_work > k ? b->n_work - k : 0) * b->gap) / k;
  if (busy > m)
    m = busy;
  for (int r = 0; r < PS_RES__COUNT && !b->measured; r++) {
    double width = k * b->widest[r] < 1 ? k * b->widest[r] : 1;
    if (width > 0 && b->busy[r] / width > m)
      m = b->busy[r] / width;
  }
  return m;
}

static void
least_find (const ps__planner *pl, least *b)
{
  memset (b, 0, sizeof *b);
  b->measured = pl->g->measured;
  b->gap = b->measured ? 0 : pl->dev.dispatch_gap_ns;
  b->cp = pl->grank_max;
  for (uint32_t gi = 0; gi < pl->ng; gi++) {
    b->total += pl->gcost[gi];
    b->n_work += !ps__planner_event_op (pl, gi);
    const ps_cost *c = &pl->gsim[gi];
    ps_cost_share_time (c, b->busy);
    if (c->resource < PS_RES__COUNT && c->ns > 0 && ps_cost_share (c) > b->widest[c->resource])
      b->widest[c->resource] = ps_cost_share (c);
  }
}

/* Whether a count of makespan ms, tried after the fastest found
 * (se->best), takes its place: ties go to it, the fewer streams; not past
 * the cutoff (past_cutoff: the count found keeps its sync pass). */
static bool
takes_over (const search *se, double ms)
{
  return ms <= se->best * (1 + 1e-12) && isfinite (ms) && !past_cutoff (se, ms);
}

/* Keeps the candidate in pl (se->pl or a clone), of makespan ms, tried
 * after those of more streams, when it takes over (takes_over). */
static bool
take_lower (search *se, const ps__planner *pl, double ms)
{
  if (!takes_over (se, ms))
    return false;
  save_best_of (se, pl, ms);
  return true;
}

/* Whether a schedule on k streams may beat what the search must: the
 * fastest found, or the plan it is weighed against (pl->cutoff) when
 * that is faster. */
static bool
may_beat (const search *se, const least *b, uint32_t k)
{
  return least_on (b, k) <= beat_of (se) * (1 + 1e-12);
}

/* search_down keeps the sync pass of the candidate last tried in se->pl
 * (ps__planner.synced), so that when it is the plan, that pass is not
 * made again.  Forgets it (the plan's steps emptied) when `always`, or
 * when it is not the fastest found. */
static void
forget_sync (search *se, bool always)
{
  ps__planner *pl = se->pl;
  if (!pl->synced || (!always && se->best_synced))
    return;
  ps__planner_sync_undo (pl);
  se->best_synced = false;
}

/* The fastest on at most j streams, for the counts from `low` (the lowest
 * tried) up: the fastest of those tried up to j, when no count below
 * `low` could beat it. */
static void
fill_at_most_down (ps__planner *pl, const least *b, const double *tried, uint32_t low, uint32_t lo,
                   uint32_t hi)
{
  double below = low > lo ? least_on (b, low - 1) : INFINITY, run = INFINITY;
  for (uint32_t j = low; j <= pl->S; j++) {
    if (j <= hi && tried[j] < run)
      run = tried[j];
    pl->at_most[j] = run <= below ? run : INFINITY;
  }
}

/* The last count of search_down, left running on the second thread while
 * the caller goes on with the fastest plan found before it (pl->tail):
 * the worker, the search state it reads, and what settling it needs. */
struct ps__search_tail {
  second c;
  search se; /* c's: its table of schedules seen, empty in search_down */
  least b;
  double tried[PS_MAX_STREAMS + 1];
  uint32_t lo, hi;
  double best; /* the fastest before it */
};

/* Whether search_down may leave count k, the last it will try, running
 * while its caller goes on (ps__planner.will_pool): a count that cannot
 * use more streams than the fastest plan found uses would likely tie it,
 * and win (ties go to fewer streams), so it is waited for. */
static bool
may_leave (const search *se, uint32_t k)
{
  return se->pl->will_pool && isfinite (se->best) && (se->best_sc > k || ps__search_leave_always);
}

/* Graphs past ps__sim_max_groups: the blend's list schedule on counts hi,
 * hi - 1, ... down to lo, each simulated, the fastest kept (ties to fewer
 * streams), stopping at the first count whose least makespan (least_on)
 * is above the fastest found: so the plan is the fastest of the blend's
 * schedules on every count up to hi, as on smaller graphs, and more
 * streams are never slower.  Two counts at a time on two threads, the
 * lower one tried before its bound is known (when it turns out not
 * needed, its result, never below the bound, changes nothing); a count
 * whose schedule a count before it gave is not synced and simulated
 * again (the 1M-node transformer's counts all give one schedule: its
 * streams pass 0.52 -> 0.41 s), nor the second of a pair whose schedule
 * is the first's, which then goes on to the counts below it while that
 * holds (see `second`: the transformer's load + compile 1.17 -> 1.12 s,
 * medians of 11).  A last count left alone may be left
 * running on the second thread (ps__planner_search_settle).  pl->at_most
 * gets the fastest on at most k streams where the counts tried tell it. */
static int
search_down (search *se, uint32_t lo, uint32_t hi)
{
  ps__planner *pl = se->pl;
  const generator *gen = &generators_large[0];
  struct ps__search_tail *t = calloc (1, sizeof *t);
  if (!t)
    return ps__planner_nomem (pl);
  least *b = &t->b;
  double *tried = t->tried;
  int rc = 0;
  least_find (pl, b);
  for (uint32_t k = 0; k <= PS_MAX_STREAMS; k++)
    tried[k] = INFINITY;
  for (uint32_t k = 1; k <= PS_MAX_STREAMS && ps__search_least_out; k++)
    ps__search_least_out[k] = least_on (b, k);
  second *c = &t->c;
  bool two = pl->ng >= ps__search_pair_groups && !pl->one_thread && second_init (c, se) == 0;
  uint32_t k = hi;
  for (; rc == 0 && k >= lo; k--) {
    if (k < hi && !may_beat (se, b, k))
      break;
    if (ps__planner_cancelled (pl)) {
      rc = PS_ECANCELED;
      break;
    }
    bool pair = two && k > lo && may_beat (se, b, k - 1);
    if (two && !pair && may_leave (se, k)) {
      forget_sync (se, false);
      /* The last count (none below it can beat what is found): on the
       * second thread, while the caller goes on. */
      t->se = *se;
      t->se.seen = NULL;
      t->se.seen_ms = NULL;
      t->se.seen_cap = t->se.n_seen = 0;
      c->se = &t->se;
      c->gen = gen;
      c->k = k;
      c->floor = 0;
      t->lo = lo;
      t->hi = hi;
      t->best = se->best;
      ps__job_start (&c->job, second_main, c, true);
      ps__search_tails_left++;
      pl->tail = t;
      return 0;
    }
    if (pair) {
      c->gen = gen;
      c->k = k - 1;
      c->floor = lo;
      c->b = b;
      c->first.posted = false;
      /* The first pair's second count is done well before the first (which
       * uses more streams, and records its run): the thread then makes
       * the memory pass's lists of pooled buffers, which depend on the
       * groups alone (1M-node layered: 0.05 s off the memory pass). */
      c->accesses = pl->will_pool && !pl->acc ? pl : NULL;
      c->paired = pl->paired ? pl : NULL;
      ps__job_start (&c->job, second_main, c, true);
      ps__search_pairs_taken++;
    }
    uint64_t h = 0;
    bool known = false;
    /* The sync pass kept stays when the schedule is one seen (it may be
     * the one synced: the transformer's counts all give one). */
    rc = try_candidate (pl, se, gen, k, true, &h, &known, &tried[k], pair ? &c->first : NULL);
    if (!known) { /* synced, or (on a failure) undone */
      se->best_synced = false;
      se->synced_hash = h;
    }
    if (pair && !ps__job_finish (&c->job))
      second_main (c);
    /* The schedules simulated, so that a count giving one of them again
     * (as every count does once they leave streams unused: the 1M-node
     * transformer's four) is not synced and simulated again. */
    if (rc == 0 && !known)
      rc = seen_put (se, h, tried[k]);
    if (rc == 0 && pair && c->rc == 0 && !c->known)
      rc = seen_put (se, c->hash, c->ms);
    if (rc < 0)
      break;
    if (take_lower (se, pl, tried[k]))
      se->best_synced = pl->synced && h == se->synced_hash;
    if (!pair)
      continue;
    if (c->rc < 0) { /* tried again in line, where its failure is said */
      two = false;
      continue;
    }
    /* Its counts in order, as if tried one after the other: count k's
     * schedule down to its last, which is its own unless `same`; one that
     * turns out not needed as if never tried (the loop then ends). */
    for (uint32_t j = k - 1;; j--) {
      if (!may_beat (se, b, j)) {
        k = j + 1;
        break;
      }
      bool first = j > c->k_last || c->same;
      tried[j] = first ? tried[k] : c->ms;
      if (take_lower (se, first ? pl : &c->w, tried[j]))
        se->best_synced = pl->synced && (first ? h : c->hash) == se->synced_hash;
      if (j == c->k_last) {
        k = j;
        break;
      }
    }
  }
  forget_sync (se, rc < 0);
  if (rc == 0 && pl->at_most)
    fill_at_most_down (pl, b, tried, k + 1, lo, hi);
  second_free (c);
  free (t);
  return rc;
}

static void
tail_free (struct ps__search_tail *t)
{
  second_free (&t->c);
  free (t);
}

int
ps__planner_search_settle (ps__planner *pl, double *sim_ms, bool *changed)
{
  struct ps__search_tail *t = pl->tail;
  *changed = false;
  if (!t)
    return 0;
  pl->tail = NULL;
  second *c = &t->c;
  if (!ps__job_finish (&c->job))
    second_main (c);
  if (c->rc < 0) { /* again, where its failure is said */
    if (c->w.synced)
      ps__planner_sync_undo (&c->w);
    c->w.diag = pl->diag;
    second_main (c);
  }
  int rc = c->rc;
  if (rc == 0) {
    uint32_t k = c->k;
    t->tried[k] = c->ms;
    if (takes_over (&t->se, c->ms)) {
      load_schedule (pl, c->w.order, c->w.gstream, c->w.gafter);
      pl->makespan = *sim_ms = c->ms;
      *changed = true;
      ps__search_tails_won++;
    }
    if (pl->at_most)
      fill_at_most_down (pl, &t->b, t->tried, k, t->lo, t->hi);
  }
  tail_free (t);
  return rc;
}

void
ps__planner_search_drop (ps__planner *pl)
{
  if (!pl->tail)
    return;
  ps__job_drop (&pl->tail->c.job);
  tail_free (pl->tail);
  pl->tail = NULL;
}

/* Tells pl->probed, once, the makespan ms (ps__planner.probed). */
static void
announce (ps__planner *pl, double ms)
{
  void (*probed) (ps__planner *, double) = pl->probed;
  pl->probed = NULL;
  if (probed)
    probed (pl, ms);
}

int
ps__planner_search (ps__planner *pl, double *sim_ms)
{
  *sim_ms = -1;
  uint32_t ng = pl->ng, n1 = ng ? ng : 1;
  search se;
  memset (&se, 0, sizeof se);
  se.pl = pl;
  se.best = INFINITY;
  se.probe = INFINITY;
  se.b_order = malloc (n1 * sizeof *se.b_order);
  se.b_after = malloc (n1 * sizeof *se.b_after);
  se.b_stream = malloc (n1 * sizeof *se.b_stream);
  se.after_was = malloc (n1 * sizeof *se.after_was);
  int rc = 0;
  if (!se.b_order || !se.b_after || !se.b_stream || !se.after_was) {
    rc = ps__planner_nomem (pl);
    goto out;
  }
  /* Counts from what the pins need (a pinned group needs its stream) up
   * to the streams allowed, never more than there are groups. */
  uint32_t lo = 1, hi = pl->S < ng ? pl->S : ng;
  for (uint32_t gi = 0; gi < ng; gi++)
    if (pl->gpin[gi] >= 0 && (uint32_t) pl->gpin[gi] + 1 > lo)
      lo = (uint32_t) pl->gpin[gi] + 1;
  if (hi < lo)
    hi = lo;
  /* Not where every candidate's makespan is read: the local search's
   * moves are weighed against the plan they start from, and --streams
   * auto takes the fastest on each count (pl->exact_counts). */
  se.may_stop = !pl->exact_counts && ng > LOCAL_GROUPS && !ps__search_never_stop;
  if (ng > ps__sim_max_groups && !pl->only) {
    announce (pl, INFINITY);
    if ((rc = search_down (&se, lo, hi)) < 0)
      goto out;
    goto chosen;
  }
  /* The schedule arrays: the list scheduler allocates its own, the other
   * generators fill them; one run gives them their size. */
  pl->var = generators[0].var;
  pl->var.streams = 1;
  if ((rc = ps__planner_schedule (pl)) < 0)
    goto out;
  const generator *gens = generators;
  uint32_t n_gen = ng <= FEW_GROUPS ? N_GEN : N_FEW;
  if (ng > PS__SEARCH_MAX_GROUPS) {
    gens = generators_large;
    n_gen = sizeof generators_large / sizeof generators_large[0];
  }
  bool local = ng <= LOCAL_GROUPS;
  if (pl->only) {
    announce (pl, INFINITY);
    pl->var = *pl->only;
    pl->var.streams = 0;
    double ms;
    if ((rc = ps__planner_schedule (pl)) < 0 || (rc = evaluate (&se, &ms)) < 0)
      goto out;
    *sim_ms = isfinite (ms) ? ms : -1;
    goto out;
  }
  if (pl->quick_k) {
    /* A trial: one count, the first generators, no local search. */
    lo = hi = pl->quick_k < lo ? lo : pl->quick_k > hi ? hi : pl->quick_k;
    n_gen = n_gen < N_FEW ? n_gen : N_FEW;
    local = false;
  }
  /* The baselines' issue orders are the same on every count. */
  if (hi > lo && (rc = ps__planner_baseline_orders (pl)) < 0)
    goto out;
  uint32_t used[N_GEN], best_used = 0;
  double climbed = -1;
  for (uint32_t i = 0; i < N_GEN; i++)
    used[i] = PS_MAX_STREAMS + 1;
  /* Asked (pl->probed), or when candidates may stop, the first
   * generator's schedule on the most streams it tries, simulated first:
   * the search takes it in its turn (kept, not made again), its other
   * candidates may stop past it, and counts that cannot beat it are not
   * tried (100k-node fanout, whose plan waits for the plan without
   * fusion: 0.37 -> 0.29 s; with --no-fusion 0.33 -> 0.28 s). */
  uint32_t kp = hi < gens[0].kcap ? hi : gens[0].kcap;
  if ((pl->probed || se.may_stop) && !local && !pl->quick_k && kp >= lo && !ps__search_no_probe) {
    ps__search_probes++;
    double ms;
    if ((rc = generate (&se, &gens[0], kp, &ms)) < 0)
      goto out;
    /* Past the plan it is weighed against (known now, or since), its
     * simulation may have stopped: ms is then only a bound below its
     * makespan, and no probe. */
    double cut = cutoff_of (pl);
    if (!(cut > 0 && ms > cut))
      se.probe = ms;
    se.p_order = malloc (n1 * sizeof *se.p_order);
    se.p_after = malloc (n1 * sizeof *se.p_after);
    se.p_stream = malloc (n1 * sizeof *se.p_stream);
    if (!se.p_order || !se.p_after || !se.p_stream) {
      rc = ps__planner_nomem (pl);
      goto out;
    }
    copy_schedule (pl, se.p_order, se.p_stream, se.p_after);
    se.probe_gen = &gens[0];
    se.probe_k = kp;
    /* Counts whose least makespan (least_on, which grows as the count
     * falls) is above it cannot give the plan: not tried. */
    least b;
    least_find (pl, &b);
    while (lo < kp && least_on (&b, lo) > se.probe * (1 + 1e-9))
      lo++;
  }
  announce (pl, se.probe);
  bool pairs = !local && ng >= ps__search_pair_groups && !pl->one_thread;
  if (pairs && (rc = search_pairs (&se, gens, n_gen, lo, hi, used)) < 0)
    goto out;
  for (uint32_t k = lo; !pairs && k <= hi; k++) {
    for (uint32_t i = 0; i < n_gen; i++) {
      const generator *gen = &gens[i];
      if (ps__planner_cancelled (pl)) {
        rc = PS_ECANCELED;
        goto out;
      }
      if (skipped (gen, used[i], k))
        continue;
      double ms;
      if ((rc = generate (&se, gen, k, &ms)) < 0)
        goto out;
      take (&se, pl, i, used, ms);
    }
    /* After a climb that left the best plan unchanged and a stream to
     * spare, one more stream changes nothing the climb would try. */
    bool again = !(se.best == climbed && best_used + 2 <= k);
    if (local && again && isfinite (se.best) && (rc = local_search (&se, k)) < 0)
      goto out;
    if (local && again) {
      climbed = se.best;
      load_best (&se);
      best_used = pl->SC;
    }
    /* Counts above the groups are the same as the last. */
    for (uint32_t j = k; pl->at_most && j <= (k == hi ? pl->S : k); j++)
      pl->at_most[j] = se.best;
  }
chosen:
  if (!isfinite (se.best)) {
    /* Nothing could be simulated: the first list schedule, as planned. */
    pl->var = generators_large[0].var;
    rc = ps__planner_schedule (pl);
    goto out;
  }
  load_best (&se);
  pl->makespan = se.best;
  *sim_ms = se.best;
out:
  search_free (&se);
  return rc;
}
