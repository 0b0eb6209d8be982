/* ps-sim.c: the discrete-event plan simulator (see ps-sim.h).
 *
 * Time advances from event to event.  Timed events sit in one heap (a step
 * whose start was delayed begins; a stream wakes up because its next step
 * has now been issued or a wait is now satisfied; work that needs no part
 * of the device ends).  Work on the device is a job with its remaining solo
 * time and a rate, the share of its resource it gets over the share it
 * asked for.  Each stream runs at most one job at a time, so there are at
 * most PS_MAX_STREAMS jobs, kept in the order they started; rates are
 * handed out again in that order whenever a job starts or ends.  The whole
 * run is O(steps x (log steps + streams)). */
#include "ps-sim.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ps-array.h"

typedef struct {
  double key;
  uint64_t seq;
  uint32_t a;
  int kind;
} hitem;

typedef struct {
  hitem *v;
  uint32_t n, cap;
} heap;

enum { EV_START, EV_WAKE, EV_DONE };

/* Work running (or queued) on a part of the device. */
typedef struct {
  uint32_t step;
  uint8_t res;      /* ps_resource */
  bool running;     /* has had a share of its resource */
  double remaining; /* solo time left, ns */
  double want;      /* share of the resource it asks for, (0, 1] */
  double rate;      /* progress per ns of time, [0, 1] */
} job;

enum { S_FREE, S_BLOCKED, S_BUSY, S_DONE };

typedef struct {
  uint32_t head;        /* current step */
  uint8_t state;
  double free_at;       /* when the stream became free for its head */
  uint8_t free_bound;   /* what made it free then */
  uint32_t free_pred;
  double last_end;      /* end of the last work, < 0 before any */
  uint32_t last_span;
  uint32_t blocked_on;  /* record step while S_BLOCKED */
  double stall_start;
} stream_state;

typedef struct {
  heap events; /* key: time; a = step or stream */
  job jobs[PS_MAX_STREAMS];
  uint32_t n_jobs;
  uint32_t freed_span;  /* the span whose end last freed a resource */
  stream_state st[PS_MAX_STREAMS];
  uint64_t seq;
  double now;
  double makespan;
  ps_timeline *tl;
  int err;
  /* With a stop (ps_sim.stop_above): per part of the device, the
   * share-time its work has still to run, which jobs use up as they
   * progress. */
  bool bounded;
  double left[PS_RES__COUNT];
} run_state;

static bool
hless (const hitem *x, const hitem *y)
{
  return x->key < y->key || (x->key == y->key && x->seq < y->seq);
}

static int
hpush (heap *h, hitem it)
{
  if (PS_ARRAY_RESERVE (h->v, h->cap, (uint64_t) h->n + 1) < 0)
    return PS_ENOMEM;
  size_t i = h->n++;
  while (i > 0) {
    size_t p = (i - 1) / 2;
    if (!hless (&it, &h->v[p]))
      break;
    h->v[i] = h->v[p];
    i = p;
  }
  h->v[i] = it;
  return 0;
}

static hitem
hpop (heap *h)
{
  hitem top = h->v[0];
  hitem last = h->v[--h->n];
  size_t i = 0;
  for (;;) {
    size_t l = 2 * i + 1, r = l + 1, m = i;
    const hitem *best = &last;
    if (l < h->n && hless (&h->v[l], best)) {
      m = l;
      best = &h->v[l];
    }
    if (r < h->n && hless (&h->v[r], best))
      m = r;
    if (m == i)
      break;
    h->v[i] = h->v[m];
    i = m;
  }
  if (h->n)
    h->v[i] = last;
  return top;
}

/* ps_sim_init, with the steps' costs given by group (by_group,
 * node_group) or computed (NULL). */
static int
sim_init (ps_sim *s, const ps_plan *p, const ps_device *d, const ps_cost *by_group,
          const uint32_t *node_group)
{
  memset (s, 0, sizeof *s);
  s->plan = p;
  s->dev = *d;
  const ps_graph *g = p->graph;
  if (g->measured) {
    /* Measured durations and host times hold the run's own overheads. */
    s->dev.launch_latency_ns = s->dev.host_launch_ns = s->dev.dispatch_gap_ns = 0;
    s->dev.event_record_ns = s->dev.event_wait_ns = 0;
  }
  d = &s->dev;
  size_t n = (size_t) p->n_steps + 1;
  s->cost = calloc (n, sizeof *s->cost);
  s->wait_record = malloc (n * sizeof *s->wait_record);
  s->next_on_stream = malloc (n * sizeof *s->next_on_stream);
  s->submit = malloc (n * sizeof *s->submit);
  s->record_time = malloc (n * sizeof *s->record_time);
  s->rec_span = malloc (n * sizeof *s->rec_span);
  s->start = malloc (n * sizeof *s->start);
  s->ready = malloc (n * sizeof *s->ready);
  s->bound = malloc (n);
  s->pred = malloc (n * sizeof *s->pred);
  uint32_t *last_rec = malloc (((size_t) p->n_events + 1) * sizeof *last_rec);
  if (!s->cost || !s->wait_record || !s->next_on_stream || !s->submit || !s->record_time
      || !s->rec_span || !s->start || !s->ready || !s->bound || !s->pred || !last_rec) {
    free (last_rec);
    ps_sim_free (s);
    return PS_ENOMEM;
  }
  int rc = 0;
  if (by_group) {
    /* Steps without nodes stay as calloc left them: PS_RES_NONE, no time. */
    for (uint32_t i = 0; i < p->n_steps; i++) {
      const ps_step *st = &p->steps[i];
      if (!st->synthetic && st->nodes_count > 0)
        s->cost[i] = by_group[node_group[p->step_nodes[st->nodes_begin]]];
    }
  } else {
    rc = ps_cost_plan (d, p, s->cost);
  }
  if (rc < 0) {
    free (last_rec);
    ps_sim_free (s);
    return rc;
  }
  for (uint32_t e = 0; e <= p->n_events; e++)
    last_rec[e] = PS_NONE;
  uint32_t last_on[PS_MAX_STREAMS];
  for (uint32_t q = 0; q < PS_MAX_STREAMS; q++)
    last_on[q] = PS_NONE;
  double host = 0;
  for (uint32_t i = 0; i < p->n_steps; i++) {
    const ps_step *st = &p->steps[i];
    if (st->stream >= PS_MAX_STREAMS) {
      free (last_rec);
      ps_sim_free (s);
      return PS_EINVAL;
    }
    if (st->stream + 1u > s->n_streams)
      s->n_streams = st->stream + 1u;
    s->next_on_stream[i] = PS_NONE;
    if (last_on[st->stream] != PS_NONE)
      s->next_on_stream[last_on[st->stream]] = i;
    last_on[st->stream] = i;
    s->wait_record[i] = PS_NONE;
    bool ev = st->op == PS_OP_EVENT_RECORD || st->op == PS_OP_EVENT_WAIT;
    if (ev && st->event < p->n_events) {
      if (st->op == PS_OP_EVENT_RECORD)
        last_rec[st->event] = i;
      else
        s->wait_record[i] = last_rec[st->event];
    }
    host += ev ? d->event_record_ns : d->host_launch_ns;
    s->submit[i] = host;
    if (g->cuda_graph)
      s->submit[i] = d->host_launch_ns; /* one cudaGraphLaunch issues it all */
    if (g->measured) {
      /* When the run's host issued it: the first node of the step. */
      uint32_t v = st->nodes_count ? p->step_nodes[st->nodes_begin] : PS_NONE;
      double h = v != PS_NONE && g->host_ns ? g->host_ns[v] : NAN;
      s->submit[i] = isfinite (h) ? h : 0;
    }
  }
  free (last_rec);
  return 0;
}

int
ps_sim_init (ps_sim *s, const ps_plan *p, const ps_device *d)
{
  return sim_init (s, p, d, NULL, NULL);
}

int
ps_sim_init_groups (ps_sim *s, const ps_plan *p, const ps_device *d, const ps_cost *by_group,
                    const uint32_t *node_group)
{
  return sim_init (s, p, d, by_group, node_group);
}

void
ps_sim_free (ps_sim *s)
{
  free (s->cost);
  free (s->wait_record);
  free (s->next_on_stream);
  free (s->submit);
  free (s->record_time);
  free (s->rec_span);
  free (s->start);
  free (s->ready);
  free (s->bound);
  free (s->pred);
  memset (s, 0, sizeof *s);
}

static void
schedule (run_state *r, double t, int kind, uint32_t a)
{
  if (hpush (&r->events, (hitem) { t, r->seq++, a, kind }) < 0)
    r->err = PS_ENOMEM;
}

/* Hands out every resource again, in the order the jobs started.  A job
 * that runs for the first time now, after it had to wait, is bound by the
 * work that freed its resource. */
static void
share (ps_sim *s, run_state *r)
{
  double left[PS_RES__COUNT];
  for (int k = 0; k < PS_RES__COUNT; k++)
    left[k] = 1;
  for (uint32_t j = 0; j < r->n_jobs; j++) {
    job *jb = &r->jobs[j];
    double got = jb->want < left[jb->res] ? jb->want : left[jb->res];
    if (got < 1e-9)
      got = 0;
    left[jb->res] -= got;
    jb->rate = got / jb->want;
    if (got > 0 && !jb->running) {
      jb->running = true;
      if (r->now > s->start[jb->step]) {
        s->start[jb->step] = r->now;
        s->bound[jb->step] = PS_BOUND_RESOURCE;
        s->pred[jb->step] = r->freed_span;
      }
    }
  }
}

static void advance (ps_sim *s, run_state *r, uint32_t q);

/* Step i begins its work now (or queues for its resource). */
static void
begin_work (ps_sim *s, run_state *r, uint32_t i)
{
  const ps_cost *c = &s->cost[i];
  /* A measured duration already holds the sharing it ran under. */
  if (c->resource == PS_RES_NONE || c->resource >= PS_RES__COUNT || !(c->ns > 0)
      || r->n_jobs >= PS_MAX_STREAMS || s->plan->graph->measured) {
    if (r->bounded) { /* its share-time, if any, is never taken */
      double none[PS_RES__COUNT] = { 0 };
      ps_cost_share_time (c, none);
      for (int k = 0; k < PS_RES__COUNT; k++)
        r->left[k] -= none[k];
    }
    schedule (r, r->now + (c->ns > 0 ? c->ns : 0), EV_DONE, i);
    return;
  }
  r->jobs[r->n_jobs++] = (job) { i, c->resource, false, c->ns, ps_cost_share (c), 0 };
}

/* Step i has finished now. */
static void
end_work (ps_sim *s, run_state *r, uint32_t i)
{
  const ps_step *st = &s->plan->steps[i];
  stream_state *q = &r->st[st->stream];
  uint32_t span = PS_NONE;
  if (r->tl) {
    ps_span sp = { 0 };
    sp.start_ns = s->start[i];
    sp.end_ns = r->now;
    sp.launch_ns = s->submit[i];
    sp.ready_ns = s->ready[i];
    sp.stream = st->stream;
    sp.step = i;
    sp.name = PS_NONE;
    sp.pred = s->pred[i];
    sp.kind = (uint8_t) ps_span_kind_of_op ((ps_op) st->op);
    sp.bound = s->bound[i];
    sp.flags = (s->cost[i].unknown ? PS_SPAN_F_UNKNOWN : 0)
               | (s->cost[i].estimated ? PS_SPAN_F_ESTIMATED : 0)
               | (s->cost[i].skipped ? PS_SPAN_F_NOT_RUN : 0);
    const uint32_t *nodes = s->plan->step_nodes + st->nodes_begin;
    int rc = ps_timeline_add_span (r->tl, &sp, nodes, st->nodes_count, &span);
    if (rc < 0)
      r->err = rc;
  }
  if (r->now > r->makespan)
    r->makespan = r->now;
  q->last_end = r->now;
  q->last_span = span;
  q->free_at = r->now;
  q->free_bound = PS_BOUND_STREAM;
  q->free_pred = span;
  q->head = s->next_on_stream[i];
  q->state = S_FREE;
  r->freed_span = span;
  advance (s, r, st->stream);
}

/* The wait at the head of stream qi is satisfied now. */
static void
pass_wait (ps_sim *s, run_state *r, uint32_t qi, uint32_t w, double reach, double sat)
{
  stream_state *q = &r->st[qi];
  uint32_t rec = s->wait_record[w];
  uint32_t rs = s->plan->steps[rec].stream;
  uint32_t stall = PS_NONE;
  double end = fmax (reach, sat);
  if (end > reach) {
    if (r->tl) {
      ps_stall sl = { reach, end, qi, w, rs, s->rec_span[rec], (int64_t) s->plan->steps[w].event };
      int rc = ps_timeline_add_stall (r->tl, &sl, &stall);
      if (rc < 0)
        r->err = rc;
    }
    q->free_bound = PS_BOUND_EVENT;
    q->free_pred = s->rec_span[rec];
  }
  if (r->tl) {
    r->tl->event_waits++;
    ps_flow f = { s->record_time[rec], end, rs, qi, s->rec_span[rec], PS_NONE, stall,
                  (int64_t) s->plan->steps[w].event };
    int rc = ps_timeline_add_flow (r->tl, &f, NULL);
    if (rc < 0)
      r->err = rc;
  }
  if (end > r->makespan)
    r->makespan = end;
  q->free_at = end;
  q->head = s->next_on_stream[w];
  q->state = S_FREE;
}

/* Moves stream qi forward from its free time as far as it can go now. */
static void
advance (ps_sim *s, run_state *r, uint32_t qi)
{
  stream_state *q = &r->st[qi];
  const ps_device *d = &s->dev;
  while (q->state == S_FREE) {
    uint32_t i = q->head;
    if (i == PS_NONE) {
      q->state = S_DONE;
      return;
    }
    const ps_step *st = &s->plan->steps[i];
    double reach = fmax (q->free_at, s->submit[i]);
    if (reach > r->now) {
      /* Not issued yet: the host is behind. */
      schedule (r, reach, EV_WAKE, qi);
      return;
    }
    if (s->submit[i] > q->free_at) {
      q->free_bound = PS_BOUND_HOST;
      q->free_pred = PS_NONE;
    }
    if (st->op == PS_OP_EVENT_RECORD) {
      s->record_time[i] = reach;
      s->rec_span[i] = q->last_span;
      q->free_at = reach;
      q->head = s->next_on_stream[i];
      for (uint32_t o = 0; o < s->n_streams; o++)
        if (r->st[o].state == S_BLOCKED && r->st[o].blocked_on == i)
          schedule (r, reach + d->event_wait_ns, EV_WAKE, o);
      continue;
    }
    if (st->op == PS_OP_EVENT_WAIT) {
      uint32_t rec = s->wait_record[i];
      if (rec == PS_NONE || s->plan->steps[rec].stream == qi) {
        q->free_at = reach;
        q->head = s->next_on_stream[i];
        continue;
      }
      double rt = s->record_time[rec];
      if (rt >= 0 && rt + d->event_wait_ns <= r->now) {
        pass_wait (s, r, qi, i, reach, rt + d->event_wait_ns);
        continue;
      }
      q->state = S_BLOCKED;
      q->blocked_on = rec;
      q->stall_start = reach;
      if (rt >= 0)
        schedule (r, rt + d->event_wait_ns, EV_WAKE, qi);
      return;
    }
    /* Work: the latest of its constraints decides when it starts. */
    double t = reach;
    uint8_t b = q->free_bound;
    uint32_t p = q->free_pred;
    if (q->last_end >= 0 && q->last_end + d->dispatch_gap_ns > t) {
      t = q->last_end + d->dispatch_gap_ns;
      b = PS_BOUND_STREAM;
      p = q->last_span;
    }
    if (s->submit[i] + d->launch_latency_ns > t) {
      t = s->submit[i] + d->launch_latency_ns;
      b = PS_BOUND_HOST;
      p = PS_NONE;
    }
    const ps_graph *g = s->plan->graph;
    if (g->measured && g->delay_ns && s->plan->steps[i].nodes_count)
      t += g->delay_ns[s->plan->step_nodes[s->plan->steps[i].nodes_begin]];
    s->start[i] = s->ready[i] = t;
    s->bound[i] = b;
    s->pred[i] = p;
    q->state = S_BUSY;
    if (t > r->now)
      schedule (r, t, EV_START, i);
    else
      begin_work (s, r, i);
    return;
  }
}

int
ps_sim_run (ps_sim *s, ps_timeline *tl, double *makespan_ns)
{
  run_state *r = calloc (1, sizeof *r);
  if (!r)
    return PS_ENOMEM;
  r->tl = tl;
  r->freed_span = PS_NONE;
  const ps_plan *p = s->plan;
  if (tl) {
    tl->graph = p->graph;
    tl->plan = p;
    snprintf (tl->device, sizeof tl->device, "%s", s->dev.name);
    for (uint32_t q = 0; q < s->n_streams && !r->err; q++)
      r->err = ps_timeline_add_stream (tl, q, -1, NULL);
    /* Room for what the run can record at most, at once: a span per step
     * (with its nodes), a stall and a flow per wait.  Grown by doubling,
     * the arrays were copied along the way, into pages that had to be
     * faulted in again (1M-node layered plan, the simulation that records
     * the run: its loop 0.088-0.124 -> 0.077-0.085 s). */
    uint32_t waits = 0;
    for (uint32_t i = 0; i < p->n_steps; i++)
      waits += p->steps[i].op == PS_OP_EVENT_WAIT;
    if (!r->err)
      r->err = PS_ARRAY_RESERVE (tl->spans, tl->spans_cap, (uint64_t) tl->n_spans + p->n_steps);
    if (!r->err)
      r->err = PS_ARRAY_RESERVE (tl->span_nodes, tl->span_nodes_cap,
                                 (uint64_t) tl->n_span_nodes + p->n_step_nodes);
    if (!r->err)
      r->err = PS_ARRAY_RESERVE (tl->stalls, tl->stalls_cap, (uint64_t) tl->n_stalls + waits);
    if (!r->err)
      r->err = PS_ARRAY_RESERVE (tl->flows, tl->flows_cap, (uint64_t) tl->n_flows + waits);
  }
  for (uint32_t i = 0; i < p->n_steps; i++) {
    s->record_time[i] = -1;
    s->rec_span[i] = PS_NONE;
  }
  for (uint32_t q = 0; q < s->n_streams; q++) {
    stream_state *st = &r->st[q];
    st->head = PS_NONE;
    st->state = S_FREE;
    st->free_bound = PS_BOUND_START;
    st->free_pred = PS_NONE;
    st->last_end = -1;
    st->last_span = PS_NONE;
    st->blocked_on = PS_NONE;
  }
  /* Heads: the first step of each stream. */
  for (uint32_t i = p->n_steps; i-- > 0;)
    r->st[p->steps[i].stream].head = i;
  s->stopped = false;
  r->bounded = s->stop_above > 0 && !tl && !p->graph->measured;
  for (uint32_t i = 0; i < p->n_steps && r->bounded; i++)
    ps_cost_share_time (&s->cost[i], r->left);
  for (uint32_t q = 0; q < s->n_streams; q++)
    advance (s, r, q);

  while (!r->err) {
    share (s, r);
    double t_ev = r->events.n ? r->events.v[0].key : INFINITY;
    double t_job = INFINITY;
    uint32_t best = PS_NONE;
    for (uint32_t j = 0; j < r->n_jobs; j++) {
      const job *jb = &r->jobs[j];
      if (jb->rate <= 0)
        continue;
      double t = r->now + jb->remaining / jb->rate;
      if (t < t_job) {
        t_job = t;
        best = j;
      }
    }
    if (best == PS_NONE && r->events.n == 0)
      break;
    bool job_first = best != PS_NONE && t_job <= t_ev;
    double t_next = job_first ? t_job : t_ev;
    if (t_next < r->now)
      t_next = r->now;
    for (uint32_t j = 0; j < r->n_jobs; j++) {
      job *jb = &r->jobs[j];
      double was = jb->remaining;
      jb->remaining = fmax (0, jb->remaining - (t_next - r->now) * jb->rate);
      if (r->bounded)
        r->left[jb->res] -= (was - jb->remaining) * jb->want;
    }
    r->now = t_next;
    if (r->bounded) {
      /* Past stop_above by more than the rounding of the sums (which
       * reach the makespan's last bits). */
      double most = ps_cost_busiest (r->left);
      if (r->now + most > s->stop_above * (1 + 1e-9)) {
        s->stopped = true;
        r->makespan = r->now + most;
        break;
      }
    }
    if (job_first) {
      uint32_t step = r->jobs[best].step;
      if (r->bounded) /* what rounding left of it */
        r->left[r->jobs[best].res] -= r->jobs[best].remaining * r->jobs[best].want;
      memmove (&r->jobs[best], &r->jobs[best + 1], (r->n_jobs - best - 1) * sizeof (job));
      r->n_jobs--;
      end_work (s, r, step);
      continue;
    }
    hitem ev = hpop (&r->events);
    switch (ev.kind) {
    case EV_START:
      begin_work (s, r, ev.a);
      break;
    case EV_DONE:
      end_work (s, r, ev.a);
      break;
    case EV_WAKE: {
      stream_state *q = &r->st[ev.a];
      if (q->state == S_BLOCKED) {
        uint32_t rec = q->blocked_on;
        double rt = s->record_time[rec];
        if (rt < 0 || rt + s->dev.event_wait_ns > r->now)
          break;
        pass_wait (s, r, ev.a, q->head, q->stall_start, r->now);
      }
      advance (s, r, ev.a);
      break;
    }
    default:
      break;
    }
  }
  int rc = r->err;
  for (uint32_t q = 0; q < s->n_streams && rc == 0 && !s->stopped; q++)
    if (r->st[q].state != S_DONE)
      rc = PS_EINVAL; /* a wait that can never be satisfied */
  double makespan = r->makespan;
  free (r->events.v);
  free (r);
  if (rc == 0 && tl)
    rc = ps_timeline_finish (tl);
  if (makespan_ns)
    *makespan_ns = makespan;
  return rc;
}

int
ps_simulate (const ps_plan *p, const ps_device *d, ps_timeline *tl)
{
  ps_sim s;
  int rc = ps_sim_init (&s, p, d);
  if (rc < 0)
    return rc;
  rc = ps_sim_run (&s, tl, NULL);
  ps_sim_free (&s);
  return rc;
}

int
ps_plan_take_run (ps_plan *p, ps_timeline *tl)
{
  if (!p->run)
    return ps_simulate (p, &p->device, tl);
  *tl = *p->run;
  tl->plan = p; /* the plan may have moved since it was kept */
  free (p->run);
  p->run = NULL;
  return 0;
}

int
ps_plan_makespan (const ps_plan *p, double *ms)
{
  if (p->est_simulated) {
    *ms = p->est_makespan_ns;
    return 0;
  }
  ps_sim s;
  int rc = ps_sim_init (&s, p, &p->device);
  if (rc == 0)
    rc = ps_sim_run (&s, NULL, ms);
  ps_sim_free (&s);
  return rc;
}

int
ps_sim_gain (ps_sim *s, const uint32_t *steps, uint32_t n, double factor, double base_ns,
             double *saved_ns)
{
  if (!(factor >= 0))
    return PS_EINVAL;
  for (uint32_t i = 0; i < n; i++)
    if (steps[i] >= s->plan->n_steps)
      return PS_EINVAL;
  double *old = malloc (((size_t) n + 1) * sizeof *old);
  if (!old)
    return PS_ENOMEM;
  /* Saved first and restored in reverse, so repeated steps come back. */
  for (uint32_t i = 0; i < n; i++) {
    old[i] = s->cost[steps[i]].ns;
    s->cost[steps[i]].ns = old[i] * factor;
  }
  double changed;
  int rc = ps_sim_run (s, NULL, &changed);
  for (uint32_t i = n; i-- > 0;)
    s->cost[steps[i]].ns = old[i];
  free (old);
  if (rc < 0)
    return rc;
  *saved_ns = base_ns - changed;
  return 0;
}
