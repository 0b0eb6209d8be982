/* ps-trace-resolve.c: the second pass of the trace importer: streams,
 * spans, stalls, flows and host waits from the records the reading pass
 * kept (see ps-trace-import.h for what they mean). */
#include "ps-trace-private.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ps-array.h"

/* Clock skew between host and device timestamps: launches this close
 * count as before. */
#define TOL_NS 1.0

typedef struct {
  int64_t device, stream;
} stream_key;

static int
cmp_stream_key (const void *a, const void *b)
{
  const stream_key *x = a, *y = b;
  if (x->device != y->device)
    return x->device < y->device ? -1 : 1;
  return x->stream < y->stream ? -1 : x->stream > y->stream;
}

static int
cmp_rt (const void *a, const void *b)
{
  const ps__trace_call *x = a, *y = b;
  return x->corr < y->corr ? -1 : x->corr > y->corr;
}

static const ps__trace_call *
find_rt (const ps__trace_call *rts, size_t n, int64_t corr)
{
  if (corr <= 0)
    return NULL;
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (rts[mid].corr < (uint64_t) corr)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < n && rts[lo].corr == (uint64_t) corr ? &rts[lo] : NULL;
}

static uint32_t
find_stream (const stream_key *keys, uint32_t n, int64_t device, int64_t stream)
{
  stream_key k = { device, stream };
  uint32_t lo = 0, hi = n;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (cmp_stream_key (&keys[mid], &k) < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < n && cmp_stream_key (&keys[lo], &k) == 0 ? lo : PS_NONE;
}

/* Position in by_stream of the last span of stream q issued by time t
 * (its launch, or its start when the launch is unknown), or PS_NONE.
 * Work on a stream runs in issue order, so these keys ascend. */
static uint32_t
last_issued (const ps_timeline *tl, uint32_t q, double t)
{
  if (q >= tl->n_streams)
    return PS_NONE;
  uint32_t b = tl->stream_off[q], lo = b, hi = tl->stream_off[q + 1];
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    const ps_span *s = &tl->spans[tl->by_stream[mid]];
    double key = s->launch_ns >= 0 ? s->launch_ns : s->start_ns;
    if (key <= t + TOL_NS)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo == b ? PS_NONE : lo - 1;
}

/* A span in issue order over a whole device, with the span that ends
 * last among it and those issued before it on that device. */
typedef struct {
  int32_t device;
  double key;
  uint32_t span;
  uint32_t last_ending;
} issued;

typedef struct {
  ps_timeline *tl;
  const ps__trace_call *rts;
  size_t n_rts;
  stream_key *keys;
  uint32_t n_keys;
  double t0;
  issued *order; /* by device, then issue time */
} resolver;

static double
issue_key (const ps_span *s)
{
  return s->launch_ns >= 0 ? s->launch_ns : s->start_ns;
}

static int
cmp_issued (const void *a, const void *b)
{
  const issued *x = a, *y = b;
  if (x->device != y->device)
    return x->device < y->device ? -1 : 1;
  if (x->key != y->key)
    return x->key < y->key ? -1 : 1;
  return x->span < y->span ? -1 : x->span > y->span;
}

static int
build_issue_order (resolver *rv)
{
  ps_timeline *tl = rv->tl;
  rv->order = malloc (((size_t) tl->n_spans + 1) * sizeof *rv->order);
  if (!rv->order)
    return PS_ENOMEM;
  for (uint32_t i = 0; i < tl->n_spans; i++)
    rv->order[i] = (issued) { tl->streams[tl->spans[i].stream].device,
                              issue_key (&tl->spans[i]), i, i };
  ps_array_sort (rv->order, tl->n_spans, sizeof *rv->order, cmp_issued);
  for (uint32_t i = 1; i < tl->n_spans; i++) {
    issued *o = &rv->order[i];
    const issued *p = &rv->order[i - 1];
    if (p->device == o->device
        && tl->spans[p->last_ending].end_ns > tl->spans[o->span].end_ns)
      o->last_ending = p->last_ending;
  }
  return 0;
}

static double
ns (const resolver *rv, double us)
{
  return (us - rv->t0) * 1000.0;
}

static int
stream_wait (resolver *rv, const ps__trace_sync *s)
{
  ps_timeline *tl = rv->tl;
  uint32_t q = find_stream (rv->keys, rv->n_keys, s->device, s->stream);
  uint32_t r = ps__trace_valid_stream (s->other_stream)
                   ? find_stream (rv->keys, rv->n_keys, s->device, s->other_stream)
                   : PS_NONE;
  if (q == PS_NONE || r == PS_NONE || r == q)
    return 0;
  double t_wait = ns (rv, s->ts);
  uint32_t pos = last_issued (tl, q, t_wait);
  double reach = t_wait;
  if (pos != PS_NONE)
    reach = fmax (reach, tl->spans[tl->by_stream[pos]].end_ns);
  uint32_t next_pos = pos == PS_NONE ? tl->stream_off[q] : pos + 1;
  uint32_t next = next_pos < tl->stream_off[q + 1] ? tl->by_stream[next_pos] : PS_NONE;

  const ps__trace_call *rec = find_rt (rv->rts, rv->n_rts, s->rec_corr);
  double t_rec = rec ? ns (rv, rec->ts) : t_wait;
  uint32_t wpos = last_issued (tl, r, t_rec);
  if (wpos == PS_NONE)
    return 0;
  uint32_t w = tl->by_stream[wpos];
  double end = tl->spans[w].end_ns;
  if (next != PS_NONE && tl->spans[next].start_ns < end)
    end = tl->spans[next].start_ns;
  uint32_t stall = PS_NONE;
  if (end > reach) {
    ps_stall sl = { reach, end, q, PS_NONE, r, w, s->event != PS__TRACE_NO_ID ? s->event : -1 };
    int rc = ps_timeline_add_stall (tl, &sl, &stall);
    if (rc < 0)
      return rc;
  }
  ps_flow f = { tl->spans[w].end_ns, fmax (reach, end), r, q, w, PS_NONE, stall,
                s->event != PS__TRACE_NO_ID ? s->event : -1 };
  return ps_timeline_add_flow (tl, &f, NULL);
}

/* The span a host synchronisation waited for: the last work issued before
 * it on `stream`, or on any stream of the device when stream is PS_NONE
 * (then the one that ends last). */
static uint32_t
waited_span (const resolver *rv, uint32_t stream, int32_t device, double t)
{
  const ps_timeline *tl = rv->tl;
  if (stream != PS_NONE) {
    uint32_t pos = last_issued (tl, stream, t);
    return pos == PS_NONE ? PS_NONE : tl->by_stream[pos];
  }
  /* The work that ends last among all issued on the device by t. */
  uint32_t lo = 0, hi = tl->n_spans;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    const issued *o = &rv->order[mid];
    if (o->device < device || (o->device == device && o->key <= t + TOL_NS))
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo == 0 || rv->order[lo - 1].device != device)
    return PS_NONE;
  return rv->order[lo - 1].last_ending;
}

static int
host_sync (resolver *rv, const ps__trace_sync *s)
{
  uint32_t stream = PS_NONE;
  double t = ns (rv, s->ts);
  if (s->kind == PS__TRACE_SY_STREAM && ps__trace_valid_stream (s->stream))
    stream = find_stream (rv->keys, rv->n_keys, s->device, s->stream);
  if (s->kind == PS__TRACE_SY_EVENT && ps__trace_valid_stream (s->other_stream)) {
    stream = find_stream (rv->keys, rv->n_keys, s->device, s->other_stream);
    const ps__trace_call *rec = find_rt (rv->rts, rv->n_rts, s->rec_corr);
    if (rec)
      t = ns (rv, rec->ts);
  }
  int32_t dev = s->device >= 0 && s->device <= INT32_MAX ? (int32_t) s->device : -1;
  uint32_t x = waited_span (rv, stream, dev, t);
  if (x == PS_NONE)
    return 0;
  ps_host_wait w = { ns (rv, s->ts), ns (rv, s->ts + s->dur), x };
  return ps_timeline_add_host_wait (rv->tl, &w);
}

static int
own_stall (resolver *rv, const ps__trace_sync *s)
{
  ps_timeline *tl = rv->tl;
  if (!ps__trace_valid_stream (s->stream))
    return 0;
  uint32_t q = find_stream (rv->keys, rv->n_keys, s->device, s->stream);
  uint32_t r = ps__trace_valid_stream (s->other_stream)
                   ? find_stream (rv->keys, rv->n_keys, s->device, s->other_stream)
                   : PS_NONE;
  if (q == PS_NONE)
    return 0;
  double a = ns (rv, s->ts), b = ns (rv, s->ts + s->dur);
  uint32_t w = r == PS_NONE ? PS_NONE : ps_timeline_span_before (tl, r, b + TOL_NS);
  uint32_t idx;
  ps_stall sl = { a, b, q, PS_NONE, r, w, s->event != PS__TRACE_NO_ID ? s->event : -1 };
  int rc = ps_timeline_add_stall (tl, &sl, &idx);
  if (rc < 0 || w == PS_NONE)
    return rc;
  ps_flow f = { tl->spans[w].end_ns, b, r, q, w, PS_NONE, idx, sl.event };
  return ps_timeline_add_flow (tl, &f, NULL);
}

/* Host events in (pid, tid, start) order; an enclosing op before the ops
 * and calls it holds (longer first at one start). */
typedef struct {
  int64_t pid, tid;
  double ts, end;
  uint32_t index;
  bool call;
} host_ev;

static int
cmp_host_ev (const void *a, const void *b)
{
  const host_ev *x = a, *y = b;
  if (x->pid != y->pid)
    return x->pid < y->pid ? -1 : 1;
  if (x->tid != y->tid)
    return x->tid < y->tid ? -1 : 1;
  if (x->ts != y->ts)
    return x->ts < y->ts ? -1 : 1;
  if (x->call != y->call)
    return x->call ? 1 : -1;
  if (x->end != y->end)
    return x->end > y->end ? -1 : 1;
  return x->index < y->index ? -1 : x->index > y->index;
}

/* Each runtime call's CPU op: the innermost cpu_op around it on its
 * thread, by one sort and a sweep with a stack of the open ops.  cpu_of
 * (per call) receives the op's index in cpus, or PS_NONE. */
static int
calls_cpu_ops (const ps__trace_call *rts, size_t n_rts, const ps__trace_cpu *cpus, size_t n_cpus,
               uint32_t *cpu_of)
{
  for (size_t i = 0; i < n_rts; i++)
    cpu_of[i] = PS_NONE;
  if (n_cpus == 0)
    return 0;
  size_t n = n_rts + n_cpus;
  host_ev *ev = malloc ((n + 1) * sizeof *ev);
  uint32_t *stack = malloc ((n_cpus + 1) * sizeof *stack);
  if (!ev || !stack) {
    free (ev);
    free (stack);
    return PS_ENOMEM;
  }
  for (size_t i = 0; i < n_cpus; i++)
    ev[i] = (host_ev) { cpus[i].pid, cpus[i].tid, cpus[i].ts, cpus[i].ts + cpus[i].dur,
                        (uint32_t) i, false };
  for (size_t i = 0; i < n_rts; i++)
    ev[n_cpus + i] = (host_ev) { rts[i].pid, rts[i].tid, rts[i].ts, rts[i].ts + rts[i].dur,
                                 (uint32_t) i, true };
  ps_array_sort (ev, n, sizeof *ev, cmp_host_ev);
  uint32_t depth = 0;
  for (size_t k = 0; k < n; k++) {
    const host_ev *e = &ev[k];
    if (k > 0 && (ev[k - 1].pid != e->pid || ev[k - 1].tid != e->tid))
      depth = 0;
    while (depth > 0 && ev[stack[depth - 1]].end < e->ts)
      depth--;
    if (e->call)
      cpu_of[e->index] = depth > 0 ? ev[stack[depth - 1]].index : PS_NONE;
    else
      stack[depth++] = (uint32_t) k;
  }
  free (ev);
  free (stack);
  return 0;
}

/* The CPU op that launched each span (span i is ops[i]), added to the
 * timeline's cpu_ops once each. */
static int
link_cpu_ops (resolver *rv, const ps__trace_op *ops, size_t n_ops, const ps__trace_cpu *cpus,
              size_t n_cpus)
{
  if (n_cpus == 0 || rv->n_rts == 0)
    return 0;
  ps_timeline *tl = rv->tl;
  uint32_t *cpu_of = malloc ((rv->n_rts + 1) * sizeof *cpu_of);
  uint32_t *kept = malloc ((n_cpus + 1) * sizeof *kept);
  int rc = cpu_of && kept ? calls_cpu_ops (rv->rts, rv->n_rts, cpus, n_cpus, cpu_of) : PS_ENOMEM;
  for (size_t i = 0; rc == 0 && i < n_cpus; i++)
    kept[i] = PS_NONE;
  for (size_t i = 0; i < n_ops && rc == 0; i++) {
    const ps__trace_call *c = find_rt (rv->rts, rv->n_rts, (int64_t) ops[i].corr);
    uint32_t k = c ? cpu_of[c - rv->rts] : PS_NONE;
    if (k == PS_NONE)
      continue;
    if (kept[k] == PS_NONE) {
      const ps__trace_cpu *op = &cpus[k];
      ps_tl_cpu_op t = { ns (rv, op->ts), ns (rv, op->ts + op->dur), op->name, op->rf_id };
      rc = ps_timeline_add_cpu_op (tl, &t, &kept[k]);
    }
    tl->spans[i].cpu_op = kept[k] + 1;
  }
  free (cpu_of);
  free (kept);
  return rc;
}

int
ps__trace_resolve (ps_timeline *tl, const ps__trace_op *ops, size_t n_ops,
                   const ps__trace_sync *syncs, size_t n_syncs, ps__trace_call *rts, size_t n_rts,
                   ps__trace_cpu *cpus, size_t n_cpus)
{
  if (n_ops > UINT32_MAX - 2 || n_syncs > UINT32_MAX / 2)
    return PS_ELIMIT;
  resolver rv = { tl, rts, n_rts, NULL, 0, 0, NULL };
  if (n_rts > 1)
    ps_array_sort (rts, n_rts, sizeof *rts, cmp_rt);

  rv.keys = malloc ((n_ops + 2 * n_syncs + 1) * sizeof *rv.keys);
  if (!rv.keys)
    return PS_ENOMEM;
  size_t nk = 0;
  for (size_t i = 0; i < n_ops; i++)
    rv.keys[nk++] = (stream_key) { ops[i].device, ops[i].stream };
  for (size_t i = 0; i < n_syncs; i++) {
    const ps__trace_sync *s = &syncs[i];
    if (s->kind != PS__TRACE_SY_WAIT_EVENT && s->kind != PS__TRACE_SY_OWN_STALL)
      continue;
    if (ps__trace_valid_stream (s->stream))
      rv.keys[nk++] = (stream_key) { s->device, s->stream };
    if (ps__trace_valid_stream (s->other_stream))
      rv.keys[nk++] = (stream_key) { s->device, s->other_stream };
  }
  ps_array_sort (rv.keys, nk, sizeof *rv.keys, cmp_stream_key);
  size_t u = 0;
  for (size_t i = 0; i < nk; i++)
    if (u == 0 || cmp_stream_key (&rv.keys[u - 1], &rv.keys[i]) != 0)
      rv.keys[u++] = rv.keys[i];
  rv.n_keys = (uint32_t) u;

  /* Time zero: the earliest GPU work, its launch, or synchronisation. */
  double t0 = INFINITY;
  for (size_t i = 0; i < n_ops; i++) {
    t0 = fmin (t0, ops[i].ts);
    const ps__trace_call *c = find_rt (rts, n_rts, (int64_t) ops[i].corr);
    if (c)
      t0 = fmin (t0, c->ts);
  }
  for (size_t i = 0; i < n_syncs; i++)
    t0 = fmin (t0, syncs[i].ts);
  rv.t0 = isfinite (t0) ? t0 : 0;

  int rc = 0;
  for (uint32_t i = 0; i < rv.n_keys && rc == 0; i++) {
    int64_t dev = rv.keys[i].device;
    rc = ps_timeline_add_stream (tl, rv.keys[i].stream, dev >= 0 && dev <= INT32_MAX ? (int32_t) dev : -1,
                                 NULL);
  }
  for (size_t i = 0; i < n_ops && rc == 0; i++) {
    const ps__trace_op *op = &ops[i];
    const ps__trace_call *c = find_rt (rts, n_rts, (int64_t) op->corr);
    ps_span s = { 0 };
    s.start_ns = ns (&rv, op->ts);
    s.end_ns = s.start_ns + op->dur * 1000.0;
    s.launch_ns = c ? ns (&rv, c->ts) : -1;
    s.ready_ns = -1;
    s.stream = find_stream (rv.keys, rv.n_keys, op->device, op->stream);
    s.step = PS_NONE;
    s.name = op->name;
    s.pred = PS_NONE;
    s.correlation = op->corr;
    s.kind = op->kind;
    s.bound = PS_BOUND_UNKNOWN;
    rc = ps_timeline_add_span (tl, &s, NULL, 0, NULL);
  }
  if (rc == 0)
    rc = link_cpu_ops (&rv, ops, n_ops, cpus, n_cpus);
  /* Launch configurations, when the trace gives any (span i is ops[i]). */
  bool dims = false;
  for (size_t i = 0; i < n_ops && !dims; i++)
    dims = ops[i].grid[0] != 0;
  if (rc == 0 && dims && !(tl->launches = calloc (n_ops + 1, sizeof *tl->launches)))
    rc = PS_ENOMEM;
  for (size_t i = 0; rc == 0 && dims && i < n_ops; i++)
    for (int k = 0; k < 3; k++) {
      tl->launches[i].grid[k] = ops[i].grid[k];
      tl->launches[i].block[k] = ops[i].block[k];
    }
  if (rc == 0)
    rc = ps_timeline_finish (tl);
  if (rc == 0)
    rc = build_issue_order (&rv);

  for (size_t i = 0; i < n_syncs && rc == 0; i++) {
    const ps__trace_sync *s = &syncs[i];
    switch (s->kind) {
    case PS__TRACE_SY_WAIT_EVENT:
      tl->event_waits++;
      rc = stream_wait (&rv, s);
      break;
    case PS__TRACE_SY_OWN_STALL:
      tl->event_waits++;
      rc = own_stall (&rv, s);
      break;
    default:
      rc = host_sync (&rv, s);
      break;
    }
  }
  /* Copies and memsets whose call returns only when they are done
   * (synchronous or pageable copies) are host waits too.  Kernel launches
   * are asynchronous: one that returns late was busy with something else
   * (module loading, autotuning). */
  for (size_t i = 0; i < n_ops && rc == 0; i++) {
    if (ops[i].kind != PS_SPAN_MEMCPY && ops[i].kind != PS_SPAN_MEMSET)
      continue;
    const ps__trace_call *c = find_rt (rts, n_rts, (int64_t) ops[i].corr);
    if (c && c->dur > 0 && c->ts + c->dur >= ops[i].ts + ops[i].dur) {
      ps_host_wait w = { ns (&rv, c->ts), ns (&rv, c->ts + c->dur), (uint32_t) i };
      rc = ps_timeline_add_host_wait (tl, &w);
    }
  }
  if (rc == 0)
    rc = ps_timeline_finish (tl);
  free (rv.keys);
  free (rv.order);
  return rc;
}
