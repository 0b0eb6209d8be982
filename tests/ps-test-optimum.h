/* ps-test-optimum.h: the exact optimum of a small graph, the oracle that
 * schedule quality is measured against (test-schedule.c,
 * bench/sched-bench.c).
 *
 * The optimum is over every plan the planner's sync pass can make of an
 * issue order and a stream per node (ps__plan_build_schedule), timed by
 * the simulator (ps-sim.h).  It is found by branch and bound: nodes are
 * appended to the issue order one by one, each on a stream already used
 * or on the lowest unused one (streams are interchangeable), and with or
 * without the event record the sync pass puts right after a node once a
 * later node on another stream waits for it (decided here when the node
 * is placed, so that a partial plan's steps never change; a decision that
 * a later wait contradicts, or a record no wait ends up using, ends the
 * branch).  Depth first, the child with the lowest bound first; a partial
 * schedule is dropped when its bound is no better than the best plan
 * known.
 *
 * The bound has to hold for every completion, and the simulator's sharing
 * is first come, first served, so that work added later can make other
 * work finish earlier.  It comes from the one part of the run nothing
 * added later can change: no later node can start work before T0 (its
 * issue, launch latency and predecessors, each timed without sharing, are
 * lower bounds), and later nodes only add steps after those already
 * issued.  So the partial plan is simulated exactly up to T0; after that
 * every piece of work is bounded without sharing (its earliest start and
 * its remaining time at full rate), each resource by its work left from
 * each release time on, the host by the launches it still has to issue
 * and the streams by the work they still have to run.  Ends known more
 * precisely move T0 later, and the run goes on, a few times.
 *
 * That simulation is a copy of ps-sim.c's rules for plans of work and
 * planner events (sq_run below), exact to the last bit so that complete
 * schedules are timed by it; every plan that becomes the best known, and
 * one in SQ_CHECK_EVERY of the others, is also built by
 * ps__plan_build_schedule and simulated by the simulator itself, and a
 * difference is an error.  Graphs of at most SQ_MAX_NODES nodes without
 * fusion, pins or user events.  A budget of partial schedules bounds the
 * search; past it, what it proved (a lower bound) is returned with the
 * best plan found. */
#ifndef PS_TEST_OPTIMUM_H
#define PS_TEST_OPTIMUM_H

#include "ps-test-sched.h"

#define SQ_MAX_STEPS (SQ_MAX_NODES * (SQ_MAX_STREAMS + 1))
#define SQ_MAX_EV 2048
#define SQ_NIL 0xffffu
/* One complete schedule in this many is also simulated by ps-sim.c. */
#define SQ_CHECK_EVERY 257

enum { SQ_WORK, SQ_REC, SQ_WAIT };

/* A partial schedule: the first k nodes of the issue order.  Clocks are
 * the sync pass's (ps-sync.c): per stream, the highest position on each
 * stream known to have completed.  end[]: each node's end without
 * sharing, a lower bound. */
typedef struct sq_state {
  /* Bit sets of nodes: issued; recorded (an event record right after it,
   * decided when it is issued); waited (recorded, and a later node's wait
   * uses the record). */
  uint32_t k, used, issued, recorded, waited;
  bool bad; /* contradicts a record decision */
  double host, max_end;
  double last_end[SQ_MAX_STREAMS], free_at[SQ_MAX_STREAMS];
  uint8_t cnt[SQ_MAX_STREAMS];
  uint8_t clk[SQ_MAX_STREAMS][SQ_MAX_STREAMS];
  uint8_t snap[SQ_MAX_NODES][SQ_MAX_STREAMS];
  uint8_t pos[SQ_MAX_NODES], str[SQ_MAX_NODES], iss[SQ_MAX_NODES], order[SQ_MAX_NODES];
  uint8_t n_waits[SQ_MAX_NODES], waits[SQ_MAX_NODES][SQ_MAX_STREAMS]; /* in issue order */
  double end[SQ_MAX_NODES];
} sq_state;

typedef struct sq_bb {
  const ps_graph *g;
  const ps_device *d;
  uint32_t n, S;
  double cost[SQ_MAX_NODES], want[SQ_MAX_NODES];
  uint8_t res[SQ_MAX_NODES];
  uint32_t pred[SQ_MAX_NODES], succ[SQ_MAX_NODES]; /* bit sets */
  double best;
  uint64_t expanded, timed, checked;
  int err;
} sq_bb;

/* Appends node v on stream s, with an event record right after it or
 * not: the waits the sync pass gives it, its clock and its time without
 * sharing.  st->bad when a wait needs a record decided against, or a
 * record no wait can use any more. */
static inline void
sq_apply (const sq_bb *b, sq_state *st, uint32_t v, uint32_t s, bool rec)
{
  const ps_device *d = b->d;
  uint32_t S = b->S, latest[SQ_MAX_STREAMS], nc = 0;
  for (uint32_t t = 0; t < S; t++)
    latest[t] = PS_NONE;
  for (uint32_t u = 0; u < b->n; u++)
    if (b->pred[v] >> u & 1) {
      uint32_t t = st->str[u];
      if (t == s)
        continue;
      if (latest[t] == PS_NONE)
        nc++;
      if (latest[t] == PS_NONE || st->pos[u] > st->pos[latest[t]])
        latest[t] = u;
    }
  st->n_waits[v] = 0;
  /* The latest predecessor per stream, in descending issue order. */
  while (nc-- > 0) {
    uint32_t u = PS_NONE;
    for (uint32_t t = 0; t < S; t++)
      if (latest[t] != PS_NONE && (u == PS_NONE || st->iss[latest[t]] > st->iss[u]))
        u = latest[t];
    latest[st->str[u]] = PS_NONE;
    if (st->clk[s][st->str[u]] >= st->pos[u])
      continue;
    if (!(st->recorded >> u & 1))
      st->bad = true;
    st->waited |= 1u << u;
    st->host += d->event_record_ns;
    st->waits[v][st->n_waits[v]++] = (uint8_t) u;
    double at = st->end[u] + d->event_wait_ns;
    if (st->host > at)
      at = st->host;
    if (at > st->free_at[s])
      st->free_at[s] = at;
    for (uint32_t t = 0; t < S; t++)
      if (st->snap[u][t] > st->clk[s][t])
        st->clk[s][t] = st->snap[u][t];
  }
  st->host += d->host_launch_ns;
  double submit = st->host;
  if (rec) {
    st->recorded |= 1u << v;
    st->host += d->event_record_ns;
  }
  double t0 = st->free_at[s] > submit ? st->free_at[s] : submit;
  if (st->cnt[s] > 0 && st->last_end[s] + d->dispatch_gap_ns > t0)
    t0 = st->last_end[s] + d->dispatch_gap_ns;
  if (submit + d->launch_latency_ns > t0)
    t0 = submit + d->launch_latency_ns;
  double e = t0 + b->cost[v];
  st->end[v] = e;
  st->last_end[s] = st->free_at[s] = e;
  if (e > st->max_end)
    st->max_end = e;
  st->pos[v] = ++st->cnt[s];
  st->clk[s][s] = st->pos[v];
  memcpy (st->snap[v], st->clk[s], sizeof st->snap[v]);
  st->str[v] = (uint8_t) s;
  st->iss[v] = (uint8_t) st->k;
  st->order[st->k++] = (uint8_t) v;
  st->issued |= 1u << v;
  if (s + 1 > st->used)
    st->used = s + 1;
  /* A record whose node's successors are all issued, none waiting on it. */
  uint32_t idle = st->recorded & ~st->waited;
  for (uint32_t u = 0; u < b->n && !st->bad; u++)
    if ((idle >> u & 1) && (b->succ[u] & ~st->issued) == 0)
      st->bad = true;
}

/* ---- the plan of a partial schedule, and its run ---- */

typedef struct sq_step {
  double submit;
  uint8_t kind, stream, node;
  uint16_t next;   /* next step of its stream, or SQ_NIL */
  uint16_t record; /* a wait: its record's step */
} sq_step;

typedef struct sq_ev {
  double t;
  uint32_t seq;
  uint8_t kind; /* SQ_EV_* */
  uint16_t a;   /* step or stream */
} sq_ev;

enum { SQ_EV_START, SQ_EV_WAKE, SQ_EV_DONE };
enum { SQ_FREE, SQ_BLOCKED, SQ_BUSY, SQ_DONE };

typedef struct sq_job {
  double rem, want, rate;
  uint16_t step;
  uint8_t res;
} sq_job;

typedef struct sq_queue {
  double free_at, last_end, stall_start;
  uint16_t head, blocked_on;
  uint8_t state;
} sq_queue;

typedef struct sq_run {
  const sq_bb *b;
  sq_step step[SQ_MAX_STEPS];
  uint32_t n_steps, n_streams;
  sq_ev ev[SQ_MAX_EV];
  uint32_t n_ev, seq;
  sq_job jobs[SQ_MAX_STREAMS];
  uint32_t n_jobs;
  sq_queue q[SQ_MAX_STREAMS];
  double rec_time[SQ_MAX_STEPS]; /* < 0 until recorded */
  double end[SQ_MAX_STEPS];      /* work: when it ended, < 0 until then */
  double begin[SQ_MAX_STEPS];    /* work: when it begins (START or DONE scheduled, or now) */
  double now, makespan, horizon;
  bool err;
} sq_run;

/* The steps of st's plan, as the sync pass emits them: per node its
 * waits, its launch, and its record when a later node waits for it. */
static inline void
sq_steps (sq_run *r, const sq_bb *b, const sq_state *st)
{
  const ps_device *d = b->d;
  uint16_t rec_of[SQ_MAX_NODES], last[SQ_MAX_STREAMS];
  uint32_t n = 0;
  double host = 0;
  r->n_streams = st->used;
  for (uint32_t q = 0; q < SQ_MAX_STREAMS; q++)
    last[q] = SQ_NIL;
  for (uint32_t i = 0; i < st->k; i++) {
    uint32_t v = st->order[i], s = st->str[v];
    for (uint32_t w = 0; w <= st->n_waits[v] + 1u; w++) {
      sq_step *x = &r->step[n];
      if (w < st->n_waits[v]) {
        x->kind = SQ_WAIT;
        x->node = st->waits[v][w];
        x->record = rec_of[x->node];
        host += d->event_record_ns;
      } else if (w == st->n_waits[v]) {
        x->kind = SQ_WORK;
        x->node = (uint8_t) v;
        host += d->host_launch_ns;
      } else if (st->recorded >> v & 1) {
        x->kind = SQ_REC;
        x->node = (uint8_t) v;
        rec_of[v] = (uint16_t) n;
        host += d->event_record_ns;
      } else {
        break;
      }
      x->stream = (uint8_t) s;
      x->submit = host;
      x->next = SQ_NIL;
      if (last[s] != SQ_NIL)
        r->step[last[s]].next = (uint16_t) n;
      else
        r->q[s].head = (uint16_t) n;
      last[s] = (uint16_t) n++;
    }
  }
  r->n_steps = n;
}

static inline void
sq_ev_push (sq_run *r, double t, uint8_t kind, uint16_t a)
{
  if (r->n_ev == SQ_MAX_EV) {
    r->err = true;
    return;
  }
  sq_ev x = { t, r->seq++, kind, a };
  uint32_t i = r->n_ev++;
  while (i > 0) {
    uint32_t p = (i - 1) / 2;
    if (!(x.t < r->ev[p].t || (x.t == r->ev[p].t && x.seq < r->ev[p].seq)))
      break;
    r->ev[i] = r->ev[p];
    i = p;
  }
  r->ev[i] = x;
}

static inline sq_ev
sq_ev_pop (sq_run *r)
{
  sq_ev top = r->ev[0], x = r->ev[--r->n_ev];
  uint32_t i = 0;
  for (;;) {
    uint32_t c = 2 * i + 1;
    if (c >= r->n_ev)
      break;
    if (c + 1 < r->n_ev
        && (r->ev[c + 1].t < r->ev[c].t
            || (r->ev[c + 1].t == r->ev[c].t && r->ev[c + 1].seq < r->ev[c].seq)))
      c++;
    if (!(r->ev[c].t < x.t || (r->ev[c].t == x.t && r->ev[c].seq < x.seq)))
      break;
    r->ev[i] = r->ev[c];
    i = c;
  }
  if (r->n_ev > 0)
    r->ev[i] = x;
  return top;
}

static inline void
sq_share (sq_run *r)
{
  double left[PS_RES__COUNT];
  for (int k = 0; k < PS_RES__COUNT; k++)
    left[k] = 1;
  for (uint32_t j = 0; j < r->n_jobs; j++) {
    sq_job *jb = &r->jobs[j];
    double got = jb->want < left[jb->res] ? jb->want : left[jb->res];
    if (got < 1e-9)
      got = 0;
    left[jb->res] -= got;
    jb->rate = got / jb->want;
  }
}

static inline void
sq_begin_work (sq_run *r, uint16_t i)
{
  const sq_bb *b = r->b;
  uint32_t v = r->step[i].node;
  r->begin[i] = r->now;
  if (b->res[v] == PS_RES_NONE || b->res[v] >= PS_RES__COUNT || !(b->cost[v] > 0)) {
    sq_ev_push (r, r->now + (b->cost[v] > 0 ? b->cost[v] : 0), SQ_EV_DONE, i);
    return;
  }
  r->jobs[r->n_jobs++] = (sq_job) { b->cost[v], b->want[v], 0, i, b->res[v] };
}

static inline void sq_advance (sq_run *r, uint32_t qi);

static inline void
sq_end_work (sq_run *r, uint16_t i)
{
  sq_queue *q = &r->q[r->step[i].stream];
  r->end[i] = r->now;
  if (r->now > r->makespan)
    r->makespan = r->now;
  q->last_end = r->now;
  q->free_at = r->now;
  q->head = r->step[i].next;
  q->state = SQ_FREE;
  sq_advance (r, r->step[i].stream);
}

static inline void
sq_pass_wait (sq_run *r, uint32_t qi, uint16_t w, double reach, double sat)
{
  sq_queue *q = &r->q[qi];
  double end = fmax (reach, sat);
  if (end > r->makespan)
    r->makespan = end;
  q->free_at = end;
  q->head = r->step[w].next;
  q->state = SQ_FREE;
}

/* ps-sim.c's advance(). */
static inline void
sq_advance (sq_run *r, uint32_t qi)
{
  sq_queue *q = &r->q[qi];
  const ps_device *d = r->b->d;
  while (q->state == SQ_FREE) {
    uint16_t i = q->head;
    if (i == SQ_NIL) {
      q->state = SQ_DONE;
      return;
    }
    const sq_step *x = &r->step[i];
    double reach = fmax (q->free_at, x->submit);
    if (reach > r->now) {
      sq_ev_push (r, reach, SQ_EV_WAKE, (uint16_t) qi);
      return;
    }
    if (x->kind == SQ_REC) {
      r->rec_time[i] = reach;
      q->free_at = reach;
      q->head = x->next;
      for (uint32_t o = 0; o < r->n_streams; o++)
        if (r->q[o].state == SQ_BLOCKED && r->q[o].blocked_on == i)
          sq_ev_push (r, reach + d->event_wait_ns, SQ_EV_WAKE, (uint16_t) o);
      continue;
    }
    if (x->kind == SQ_WAIT) {
      uint16_t rec = x->record;
      if (r->step[rec].stream == qi) {
        q->free_at = reach;
        q->head = x->next;
        continue;
      }
      double rt = r->rec_time[rec];
      if (rt >= 0 && rt + d->event_wait_ns <= r->now) {
        sq_pass_wait (r, qi, i, reach, rt + d->event_wait_ns);
        continue;
      }
      q->state = SQ_BLOCKED;
      q->blocked_on = rec;
      q->stall_start = reach;
      if (rt >= 0)
        sq_ev_push (r, rt + d->event_wait_ns, SQ_EV_WAKE, (uint16_t) qi);
      return;
    }
    double t = reach;
    if (q->last_end >= 0 && q->last_end + d->dispatch_gap_ns > t)
      t = q->last_end + d->dispatch_gap_ns;
    if (x->submit + d->launch_latency_ns > t)
      t = x->submit + d->launch_latency_ns;
    q->state = SQ_BUSY;
    r->begin[i] = t;
    if (t > r->now)
      sq_ev_push (r, t, SQ_EV_START, i);
    else
      sq_begin_work (r, i);
    return;
  }
}

static inline void
sq_run_init (sq_run *r, const sq_bb *b, const sq_state *st)
{
  r->b = b;
  r->n_ev = r->seq = r->n_jobs = 0;
  r->now = r->makespan = 0;
  r->horizon = INFINITY;
  r->err = false;
  for (uint32_t q = 0; q < SQ_MAX_STREAMS; q++)
    r->q[q] = (sq_queue) { 0, -1, 0, SQ_NIL, SQ_NIL, SQ_FREE };
  sq_steps (r, b, st);
  for (uint32_t i = 0; i < r->n_steps; i++)
    r->rec_time[i] = r->end[i] = r->begin[i] = -1;
  for (uint32_t q = 0; q < r->n_streams; q++)
    sq_advance (r, q);
}

/* ps-sim.c's main loop, up to the horizon (which advancing may lower):
 * true when the run is complete. */
static inline bool
sq_run_on (sq_run *r)
{
  const ps_device *d = r->b->d;
  while (!r->err) {
    sq_share (r);
    double t_ev = r->n_ev ? r->ev[0].t : INFINITY, t_job = INFINITY;
    uint32_t best = PS_NONE;
    for (uint32_t j = 0; j < r->n_jobs; j++) {
      const sq_job *jb = &r->jobs[j];
      if (jb->rate <= 0)
        continue;
      double t = r->now + jb->rem / jb->rate;
      if (t < t_job) {
        t_job = t;
        best = j;
      }
    }
    if (best == PS_NONE && r->n_ev == 0)
      return true;
    bool job_first = best != PS_NONE && t_job <= t_ev;
    double t_next = job_first ? t_job : t_ev;
    if (t_next < r->now)
      t_next = r->now;
    if (t_next >= r->horizon) {
      /* Nothing happens before the horizon: the jobs run on at their rates. */
      if (r->horizon > r->now) {
        for (uint32_t j = 0; j < r->n_jobs; j++)
          r->jobs[j].rem = fmax (0, r->jobs[j].rem - (r->horizon - r->now) * r->jobs[j].rate);
        r->now = r->horizon;
      }
      return false;
    }
    for (uint32_t j = 0; j < r->n_jobs; j++) {
      sq_job *jb = &r->jobs[j];
      jb->rem = fmax (0, jb->rem - (t_next - r->now) * jb->rate);
    }
    r->now = t_next;
    if (job_first) {
      uint16_t step = r->jobs[best].step;
      memmove (&r->jobs[best], &r->jobs[best + 1], (r->n_jobs - best - 1) * sizeof (sq_job));
      r->n_jobs--;
      sq_end_work (r, step);
      continue;
    }
    sq_ev e = sq_ev_pop (r);
    if (e.kind == SQ_EV_START) {
      sq_begin_work (r, e.a);
    } else if (e.kind == SQ_EV_DONE) {
      sq_end_work (r, e.a);
    } else {
      sq_queue *q = &r->q[e.a];
      if (q->state == SQ_BLOCKED) {
        double rt = r->rec_time[q->blocked_on];
        if (rt < 0 || rt + d->event_wait_ns > r->now)
          continue;
        sq_pass_wait (r, e.a, q->head, q->stall_start, r->now);
      }
      sq_advance (r, e.a);
    }
  }
  return false;
}

/* ---- the bound ---- */

/* A lower bound of the makespan of every completion of st (see the top);
 * the makespan itself when st is complete. */
static inline double
sq_bound (const sq_bb *b, const sq_state *st, sq_run *r)
{
  const ps_device *d = b->d;
  uint32_t n = b->n, S = b->S;
  double gap = d->dispatch_gap_ns, ew = d->event_wait_ns;
  double delta = gap < ew ? gap : ew;
  sq_run_init (r, b, st);
  if (st->k == n) {
    r->horizon = INFINITY;
    return sq_run_on (r) ? r->makespan : INFINITY;
  }
  double host = r->n_steps ? r->step[r->n_steps - 1].submit : 0;
  double end_lb[SQ_MAX_NODES], rel[SQ_MAX_NODES], eft[SQ_MAX_NODES], avail[SQ_MAX_STREAMS];
  double rec_lb[SQ_MAX_STEPS], lb = 0;
  for (uint32_t v = 0; v < n; v++)
    end_lb[v] = st->issued >> v & 1 ? st->end[v] : 0;
  for (uint32_t q = 0; q < S; q++)
    avail[q] = q < st->used ? st->last_end[q] + gap : 0;
  bool stop = false;
  double goal = -INFINITY;
  uint8_t pend[SQ_MAX_STEPS];
  for (int round = 0;; round++) {
    /* The earliest start of every node still to come, hence T0. */
    double fresh = INFINITY, t0 = INFINITY;
    for (uint32_t q = 0; q < S; q++)
      if (q >= st->used || avail[q] < fresh)
        fresh = q >= st->used ? 0 : avail[q];
    double base = host + d->host_launch_ns + d->launch_latency_ns;
    for (uint32_t u = 0; u < n; u++) {
      if (st->issued >> u & 1)
        continue;
      double est = base > fresh ? base : fresh;
      for (uint32_t p = 0; p < u; p++)
        if (b->pred[u] >> p & 1) {
          double t = (st->issued >> p & 1 ? end_lb[p] : eft[p]) + delta;
          if (t > est)
            est = t;
        }
      rel[u] = est;
      eft[u] = est + b->cost[u];
      if (est < t0)
        t0 = est;
    }
    if (stop || !(t0 > goal * (1 + 1e-12)) || round == 6)
      break;
    /* Run the partial plan on to T0. */
    goal = t0;
    r->horizon = t0;
    stop = sq_run_on (r);
    if (r->err)
      return 0; /* no bound */
    /* Bounds of what has not happened by now, in issue order: per stream
     * what is free (flb) and the end of its last work (llb). */
    double now = r->now, flb[SQ_MAX_STREAMS], llb[SQ_MAX_STREAMS];
    lb = r->makespan;
    memset (pend, 0, r->n_steps);
    for (uint32_t q = 0; q < st->used; q++) {
      sq_queue *qq = &r->q[q];
      flb[q] = qq->free_at;
      llb[q] = qq->last_end;
      uint16_t first = qq->state == SQ_DONE ? SQ_NIL : qq->head;
      if (qq->state == SQ_BUSY) {
        uint16_t h = qq->head;
        double e = -1;
        for (uint32_t j = 0; j < r->n_jobs; j++)
          if (r->jobs[j].step == h)
            e = now + r->jobs[j].rem;
        if (e < 0) { /* not begun, or without a resource: its begin is known */
          e = r->begin[h] + (b->cost[r->step[h].node] > 0 ? b->cost[r->step[h].node] : 0);
          pend[h] = 2; /* its work counts from its begin on */
        }
        flb[q] = llb[q] = e;
        if (e > end_lb[r->step[h].node])
          end_lb[r->step[h].node] = e;
        first = r->step[h].next;
      }
      for (uint16_t i = first; i != SQ_NIL; i = r->step[i].next)
        pend[i] = 1;
    }
    for (uint32_t i = 0; i < r->n_steps; i++) {
      const sq_step *x = &r->step[i];
      if (x->kind == SQ_WORK && r->end[i] >= 0)
        end_lb[x->node] = r->end[i];
      if (pend[i] != 1)
        continue;
      uint32_t q = x->stream;
      double t = flb[q] > now ? flb[q] : now;
      if (x->kind == SQ_WORK) {
        if (x->submit + d->launch_latency_ns > t)
          t = x->submit + d->launch_latency_ns;
        if (llb[q] >= 0 && llb[q] + gap > t)
          t = llb[q] + gap;
        double e = t + b->cost[x->node];
        if (e > end_lb[x->node])
          end_lb[x->node] = e;
        flb[q] = llb[q] = e;
      } else if (x->kind == SQ_REC) {
        rec_lb[i] = t > x->submit ? t : x->submit;
        flb[q] = rec_lb[i];
      } else {
        uint16_t j = x->record;
        double rt = r->rec_time[j] >= 0 ? r->rec_time[j] : rec_lb[j];
        if (x->submit > t)
          t = x->submit;
        if (r->step[j].stream != q && rt + ew > t)
          t = rt + ew;
        flb[q] = t;
      }
    }
    for (uint32_t q = 0; q < st->used; q++)
      avail[q] = llb[q] >= 0 && llb[q] + gap > flb[q] ? llb[q] + gap : flb[q];
  }
  /* The rest: every node's earliest end, the host, each resource and the
   * streams. */
  uint32_t m = 0;
  double total = 0, last_min = INFINITY, m0 = INFINITY;
  for (uint32_t v = 0; v < n; v++) {
    if (st->issued >> v & 1) {
      if (end_lb[v] > lb)
        lb = end_lb[v];
      continue;
    }
    if (eft[v] > lb)
      lb = eft[v];
    if (rel[v] < m0)
      m0 = rel[v];
    total += b->cost[v];
    host += d->host_launch_ns;
    m++;
    if ((b->succ[v] & ~st->issued) == 0 && b->cost[v] < last_min)
      last_min = b->cost[v];
  }
  if (host + d->launch_latency_ns + last_min > lb)
    lb = host + d->launch_latency_ns + last_min;
  /* Each resource does one unit of work per ns at most: the work released
   * at t or later ends no earlier than t plus that work.  Released: the
   * rest of running jobs now, work not begun at its earliest start. */
  double item_t[SQ_MAX_NODES + SQ_MAX_STREAMS], item_w[SQ_MAX_NODES + SQ_MAX_STREAMS];
  uint8_t item_r[SQ_MAX_NODES + SQ_MAX_STREAMS];
  uint32_t ni = 0;
  for (uint32_t j = 0; j < r->n_jobs; j++) {
    item_t[ni] = r->now;
    item_w[ni] = r->jobs[j].rem * r->jobs[j].want;
    item_r[ni++] = r->jobs[j].res;
  }
  for (uint32_t i = 0; i < r->n_steps; i++) {
    const sq_step *x = &r->step[i];
    if (x->kind != SQ_WORK || !pend[i] || b->res[x->node] == PS_RES_NONE)
      continue;
    item_t[ni] = pend[i] == 2 ? r->begin[i] : end_lb[x->node] - b->cost[x->node];
    item_w[ni] = b->cost[x->node] * b->want[x->node];
    item_r[ni++] = b->res[x->node];
  }
  for (uint32_t v = 0; v < n; v++)
    if (!(st->issued >> v & 1) && b->res[v] != PS_RES_NONE) {
      item_t[ni] = rel[v];
      item_w[ni] = b->cost[v] * b->want[v];
      item_r[ni++] = b->res[v];
    }
  uint32_t idx[SQ_MAX_NODES + SQ_MAX_STREAMS];
  for (uint32_t i = 0; i < ni; i++) {
    idx[i] = i;
    for (uint32_t j = i; j > 0 && item_t[idx[j]] > item_t[idx[j - 1]]; j--) {
      uint32_t x = idx[j];
      idx[j] = idx[j - 1];
      idx[j - 1] = x;
    }
  }
  double suffix[PS_RES__COUNT] = { 0 };
  for (uint32_t i = 0; i < ni; i++) {
    uint32_t k = idx[i];
    suffix[item_r[k]] += item_w[k];
    if (item_t[k] + suffix[item_r[k]] > lb)
      lb = item_t[k] + suffix[item_r[k]];
  }
  /* The streams: the rest spread over the k streams that can start it
   * first, each node after the first on a stream a dispatch gap after the
   * one before. */
  if (m == 0)
    return lb;
  double starts[SQ_MAX_STREAMS];
  for (uint32_t q = 0; q < S; q++)
    starts[q] = avail[q] > m0 ? avail[q] : m0;
  for (uint32_t i = 1; i < S; i++)
    for (uint32_t j = i; j > 0 && starts[j] < starts[j - 1]; j--) {
      double x = starts[j];
      starts[j] = starts[j - 1];
      starts[j - 1] = x;
    }
  double sum = 0, spread = INFINITY;
  for (uint32_t k = 1; k <= S; k++) {
    sum += starts[k - 1];
    double gaps = m > k ? (m - k) * gap : 0;
    if ((total + gaps + sum) / k < spread)
      spread = (total + gaps + sum) / k;
  }
  return spread > lb ? spread : lb;
}

/* ---- the search ---- */

typedef struct sq_child {
  sq_state st;
  double lb;
} sq_child;

static inline int
sq_child_cmp (const void *x, const void *y)
{
  const sq_child *a = x, *b = y;
  if (a->lb != b->lb)
    return a->lb < b->lb ? -1 : 1;
  return (int) a->st.order[a->st.k - 1] - (int) b->st.order[b->st.k - 1];
}

/* A complete schedule whose run says `ms`: simulated by ps-sim.c too when
 * it is the best so far, and now and then; a difference is an error. */
static inline int
sq_check (sq_bb *b, const sq_state *st, double ms, uint32_t *uorder, uint16_t *ustream)
{
  for (uint32_t i = 0; i < b->n; i++) {
    uorder[i] = st->order[i];
    ustream[st->order[i]] = st->str[st->order[i]];
  }
  b->timed++;
  if (!(ms < b->best) && b->timed % SQ_CHECK_EVERY != 0)
    return 0;
  double real = INFINITY;
  int rc = sq_schedule_makespan (b->g, b->S, uorder, ustream, &real);
  b->checked++;
  if (rc == 0 && !(fabs (real - ms) <= 1e-9 * (real > 1 ? real : 1))) {
    fprintf (stderr, "sq_optimum: the copy of the simulator says %.3f ns, ps-sim %.3f ns\n", ms,
             real);
    rc = PS_EINVAL;
  }
  return rc;
}

/* The optimum of g on at most `streams` streams (see the top): *ms
 * receives the smallest simulated makespan of any issue order and stream
 * assignment, or `known` when none beats it (the makespan of a plan the
 * caller already has, which bounds the search); order and stream (may be
 * NULL) receive the schedule when one beat `known`.  The search expands at
 * most `budget` partial schedules (0: no limit); *lower receives what it
 * proved: no plan is faster than *lower, which is *ms when the search
 * ended within its budget.  *expanded (may be NULL): partial schedules
 * expanded, for benches. */
static inline int
sq_optimum (const ps_graph *g, uint32_t streams, double known, uint64_t budget, double *ms,
            double *lower, uint32_t *order, uint16_t *stream, uint64_t *expanded)
{
  uint32_t n = g->n_nodes;
  if (n > SQ_MAX_NODES || streams > SQ_MAX_STREAMS || streams < 1 || n < 1)
    return PS_EINVAL;
  sq_bb *b = calloc (1, sizeof *b);
  sq_run *r = malloc (sizeof *r);
  sq_child *kids = malloc ((size_t) n * n * 2 * streams * sizeof *kids);
  uint32_t *next = calloc (n + 1, sizeof *next), *nkids = calloc (n + 1, sizeof *nkids);
  uint32_t *uorder = malloc ((n + 1) * sizeof *uorder);
  uint16_t *ustream = malloc ((n + 1) * sizeof *ustream);
  int rc = 0;
  if (!b || !r || !kids || !next || !nkids || !uorder || !ustream) {
    rc = PS_ENOMEM;
    goto out;
  }
  b->g = g;
  b->d = ps_device_builtin (0);
  b->n = n;
  b->S = streams;
  b->best = known;
  for (uint32_t v = 0; v < n; v++) {
    ps_cost c;
    ps_cost_node (b->d, g, v, &c);
    uint8_t op = g->nodes[v].op;
    if (op == PS_OP_EVENT_RECORD || op == PS_OP_EVENT_WAIT || g->nodes[v].stream >= 0) {
      rc = PS_EINVAL;
      goto out;
    }
    b->cost[v] = c.ns;
    b->res[v] = c.resource < PS_RES__COUNT ? c.resource : PS_RES_NONE;
    double want = c.resource == PS_RES_SM ? c.sm_fraction : 1;
    b->want[v] = !(want > 1e-6) ? 1e-6 : want > 1 ? 1 : want;
    for (uint32_t e = g->pred_off[v]; e < g->pred_off[v + 1]; e++) {
      b->pred[v] |= 1u << g->pred[e];
      b->succ[g->pred[e]] |= 1u << v;
    }
  }
  /* Level k holds the children of the partial schedule of k nodes, sorted
   * by bound; next[k] is the next one to descend into. */
  sq_state root;
  memset (&root, 0, sizeof root);
  uint32_t level = 0;
  const sq_state *parent = &root;
  for (;;) {
    sq_child *lv = kids + (size_t) level * n * 2 * streams;
    uint32_t nk = 0;
    if (budget && b->expanded == budget) {
      /* Out of budget: the bound of every subtree not searched yet. */
      double lo = b->best;
      for (uint32_t k = 0; k < level; k++) {
        sq_child *ck = kids + (size_t) k * n * 2 * streams;
        for (uint32_t i = next[k]; i < nkids[k]; i++)
          if (ck[i].lb < lo)
            lo = ck[i].lb;
      }
      double pl = sq_bound (b, parent, r);
      *lower = pl < lo ? pl : lo;
      *ms = b->best;
      if (expanded)
        *expanded = b->expanded;
      goto out;
    }
    b->expanded++;
    for (uint32_t v = 0; v < n; v++) {
      if ((parent->issued >> v & 1) || (b->pred[v] & ~parent->issued))
        continue;
      uint32_t top = parent->used < streams ? parent->used + 1 : streams;
      for (uint32_t x = 0; x < 2 * top; x++) {
        uint32_t s = x / 2;
        bool rec = x & 1;
        if (rec && (!b->succ[v] || streams == 1))
          continue;
        sq_child *c = &lv[nk];
        c->st = *parent;
        sq_apply (b, &c->st, v, s, rec);
        if (c->st.bad)
          continue;
        c->lb = sq_bound (b, &c->st, r);
        if (r->err) {
          rc = PS_ENOMEM;
          goto out;
        }
        if (c->st.k == n) {
          if ((rc = sq_check (b, &c->st, c->lb, uorder, ustream)) < 0)
            goto out;
          if (c->lb < b->best) {
            b->best = c->lb;
            if (order)
              memcpy (order, uorder, n * sizeof *uorder);
            if (stream)
              memcpy (stream, ustream, n * sizeof *ustream);
          }
          continue;
        }
        if (c->lb < b->best * (1 - 1e-12))
          nk++;
      }
    }
    qsort (lv, nk, sizeof *lv, sq_child_cmp);
    nkids[level] = nk;
    next[level] = 0;
    /* Descend into the next child that can still win; climb while a level
     * is exhausted. */
    for (;;) {
      lv = kids + (size_t) level * n * 2 * streams;
      if (next[level] < nkids[level] && lv[next[level]].lb < b->best * (1 - 1e-12)) {
        parent = &lv[next[level]++].st;
        level++;
        break;
      }
      if (level == 0)
        goto done;
      level--;
    }
  }
done:
  *ms = *lower = b->best;
  if (expanded)
    *expanded = b->expanded;
  if (getenv ("SQ_DEBUG"))
    fprintf (stderr, "sq_optimum: %llu expanded, %llu complete, %llu checked\n",
             (unsigned long long) b->expanded, (unsigned long long) b->timed,
             (unsigned long long) b->checked);
out:
  free (b);
  free (r);
  free (kids);
  free (next);
  free (nkids);
  free (uorder);
  free (ustream);
  return rc;
}

#endif
