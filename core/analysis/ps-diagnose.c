/* ps-diagnose.c: stream statistics, critical path, stall causes and
 * suggestions for a timeline (see ps-diagnose.h). */
#include "ps-diagnose.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ps-array.h"
#include "ps-format.h"
#include "ps-plan.h"
#include "util/ps-rankset.h"
#include "util/ps-strmap.h"

/* Clock skew between host and device timestamps in real traces is a few
 * microseconds at most; a start this close to a constraint counts as bound
 * by it. */
#define TOL_NS 1.0
/* A host synchronisation that began this soon after its work ended still
 * counts as blocking: the host's and the GPU's clocks in a trace disagree
 * by about a microsecond, and the call itself takes longer than that. */
#define SYNC_SKEW_NS 2000.0
/* A gap on a stream longer than this, with no launch time to explain it,
 * means the host issued the work late. */
#define IDLE_GAP_NS 10000.0

typedef struct {
  double key;
  uint32_t idx;
} keyed;

static int
cmp_keyed (const void *a, const void *b)
{
  const keyed *x = a, *y = b;
  if (x->key != y->key)
    return x->key < y->key ? -1 : 1;
  return x->idx < y->idx ? -1 : x->idx > y->idx;
}

const char *
ps_cause_name (ps_cause c)
{
#define PS__CAUSE_NAME(e, name) name,
  static const char *const names[] = { PS_CAUSE_MAP (PS__CAUSE_NAME) };
#undef PS__CAUSE_NAME
  return (unsigned) c < PS_CAUSE__COUNT ? names[c] : "?";
}

void
ps_diagnosis_free (ps_diagnosis *dg)
{
  free (dg->waits);
  free (dg->streams);
  free (dg->bound);
  free (dg->pred);
  free (dg->critical);
  free (dg->chain_off);
  free (dg->chain);
  memset (dg, 0, sizeof *dg);
}

/* Busy and stalled time of one stream: the union of its spans, and the
 * union of its stalls outside its spans. */
static int
stream_stats (const ps_timeline *tl, uint32_t q, const keyed *stalls, uint32_t s_begin,
              uint32_t s_end, ps_stream_stats *out)
{
  uint32_t b = tl->stream_off[q], e = tl->stream_off[q + 1];
  out->spans = e - b;
  out->stalls = s_end - s_begin;
  size_t cap = (size_t) (e - b) + 1;
  double *bs = malloc (cap * sizeof *bs), *be = malloc (cap * sizeof *be);
  if (!bs || !be) {
    free (bs);
    free (be);
    return PS_ENOMEM;
  }
  /* Merged busy intervals (spans are sorted by start). */
  size_t nb = 0;
  double busy = 0;
  for (uint32_t k = b; k < e; k++) {
    const ps_span *s = &tl->spans[tl->by_stream[k]];
    double st = s->start_ns, en = fmax (s->end_ns, s->start_ns);
    if (nb && st <= be[nb - 1]) {
      if (en > be[nb - 1])
        be[nb - 1] = en;
    } else {
      bs[nb] = st;
      be[nb] = en;
      nb++;
    }
  }
  for (size_t k = 0; k < nb; k++)
    busy += be[k] - bs[k];
  /* Stalls, merged, minus their overlap with busy intervals. */
  double stalled = 0, cs = 0, ce = -INFINITY;
  size_t bi = 0;
  for (uint32_t k = s_begin; k <= s_end; k++) {
    bool flush = k == s_end;
    const ps_stall *sl = flush ? NULL : &tl->stalls[stalls[k].idx];
    if (!flush && sl->start_ns <= ce) {
      ce = fmax (ce, sl->end_ns);
      continue;
    }
    if (ce > cs) {
      double len = ce - cs;
      while (bi < nb && be[bi] <= cs)
        bi++;
      for (size_t j = bi; j < nb && bs[j] < ce; j++)
        len -= fmin (be[j], ce) - fmax (bs[j], cs);
      stalled += fmax (len, 0);
    }
    if (!flush) {
      cs = sl->start_ns;
      ce = fmax (sl->end_ns, sl->start_ns);
    }
  }
  free (bs);
  free (be);
  out->busy_ns = busy;
  out->stalled_ns = stalled;
  return 0;
}

/* Infers what bound the start of imported span x (see ps-diagnose.h). */
static void
infer (const ps_timeline *tl, uint32_t x, uint32_t prev, const keyed *st_by_end, uint32_t sb,
       uint32_t se, const keyed *hw_by_end, const uint32_t *hw_last_blocking, uint32_t n_hw,
       uint8_t *bound, uint32_t *pred)
{
  const ps_span *s = &tl->spans[x];
  double best = -INFINITY;
  uint8_t b = PS_BOUND_START;
  uint32_t p = PS_NONE;
  if (prev != PS_NONE) {
    best = tl->spans[prev].end_ns;
    b = PS_BOUND_STREAM;
    p = prev;
  }
  /* The latest stall on this stream that ended by our start. */
  uint32_t lo = sb, hi = se;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (st_by_end[mid].key <= s->start_ns + TOL_NS)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo > sb) {
    const ps_stall *sl = &tl->stalls[st_by_end[lo - 1].idx];
    if (sl->end_ns > best && sl->waiting_for != PS_NONE && sl->waiting_for != x) {
      best = sl->end_ns;
      b = PS_BOUND_EVENT;
      p = sl->waiting_for;
    }
  }
  if (s->launch_ns < 0 && prev != PS_NONE && s->start_ns > best + IDLE_GAP_NS) {
    /* No launch time, but the stream sat idle before it: the host issued
     * it late.  The chain goes on through the work before, which the host
     * most likely waited for. */
    b = PS_BOUND_HOST;
  }
  if (s->launch_ns >= 0 && s->launch_ns > best + TOL_NS) {
    best = s->launch_ns;
    b = PS_BOUND_HOST;
    p = PS_NONE;
    /* The last blocking host synchronisation that ended before the launch. */
    lo = 0;
    hi = n_hw;
    while (lo < hi) {
      uint32_t mid = lo + (hi - lo) / 2;
      if (hw_by_end[mid].key <= s->launch_ns + TOL_NS)
        lo = mid + 1;
      else
        hi = mid;
    }
    if (lo > 0 && hw_last_blocking[lo - 1] != PS_NONE) {
      const ps_host_wait *w = &tl->host_waits[hw_by_end[hw_last_blocking[lo - 1]].idx];
      if (w->span != x && w->span < tl->n_spans) {
        b = PS_BOUND_HOST_WAIT;
        p = w->span;
      }
    }
  }
  bound[x] = b;
  pred[x] = p;
}

/* ---- waits and their causes ---- */

/* A gap before work on a stream this long, the host having issued it
 * late, counts as a wait for the host. */
#define HOST_WAIT_NS 1000.0

/* The first span on `stream` that starts at or after t (less TOL_NS), or
 * PS_NONE. */
static uint32_t
span_from (const ps_timeline *tl, uint32_t stream, double t)
{
  uint32_t lo = tl->stream_off[stream], hi = tl->stream_off[stream + 1], end = hi;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (tl->spans[tl->by_stream[mid]].start_ns < t - TOL_NS)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < end ? tl->by_stream[lo] : PS_NONE;
}

/* The span that ran step s of the timeline's plan, or PS_NONE. */
static uint32_t
span_of_step (const uint32_t *step_span, const ps_plan *p, uint32_t step)
{
  return step_span && p && step < p->n_steps ? step_span[step] : PS_NONE;
}

/* Pooled buffers of span a's nodes whose bytes overlap those of a pooled
 * buffer of span b's nodes: the pool reuses bytes across the two. */
static bool
pool_overlap (const ps_timeline *tl, uint32_t a, uint32_t b, uint32_t *ba, uint32_t *bb)
{
  const ps_plan *p = tl->plan;
  const ps_graph *g = tl->graph;
  if (!p || !g || !p->offsets || a >= tl->n_spans || b >= tl->n_spans)
    return false;
  const ps_span *sa = &tl->spans[a], *sb = &tl->spans[b];
  for (uint32_t i = 0; i < sa->nodes_count; i++) {
    uint32_t v = tl->span_nodes[sa->nodes_begin + i];
    if (v >= g->n_nodes)
      continue;
    const ps_node *nv = &g->nodes[v];
    for (uint32_t x = nv->reads_begin; x < nv->writes_begin + nv->writes_count; x++) {
      uint32_t b1 = g->access[x];
      if (b1 >= g->n_buffers || p->offsets[b1] == UINT64_MAX)
        continue;
      uint64_t o1 = p->offsets[b1], e1 = o1 + g->buffers[b1].bytes;
      for (uint32_t j = 0; j < sb->nodes_count; j++) {
        uint32_t w = tl->span_nodes[sb->nodes_begin + j];
        if (w >= g->n_nodes)
          continue;
        const ps_node *nw = &g->nodes[w];
        for (uint32_t y = nw->reads_begin; y < nw->writes_begin + nw->writes_count; y++) {
          uint32_t b2 = g->access[y];
          if (b2 == b1 || b2 >= g->n_buffers || p->offsets[b2] == UINT64_MAX)
            continue;
          uint64_t o2 = p->offsets[b2], e2 = o2 + g->buffers[b2].bytes;
          if (o1 < e2 && o2 < e1) {
            *ba = b1;
            *bb = b2;
            return true;
          }
        }
      }
    }
  }
  return false;
}

static int
cmp_u32_by_key (const void *a, const void *b)
{
  return cmp_keyed (a, b);
}

/* The causes of the stalls, then the resource and host waits. */
static int
find_waits (ps_diagnosis *dg, const ps_timeline *tl)
{
  uint32_t nst = tl->n_stalls, nsp = tl->n_spans;
  const ps_plan *p = tl->plan;
  /* Resource and host waits, counted first to size the array. */
  uint32_t n_other = 0;
  for (uint32_t x = 0; x < nsp; x++) {
    const ps_span *s = &tl->spans[x];
    if (dg->bound[x] == PS_BOUND_RESOURCE && s->ready_ns >= 0 && s->start_ns - s->ready_ns > TOL_NS)
      n_other++;
  }
  for (uint32_t q = 0; q < tl->n_streams; q++)
    for (uint32_t k = tl->stream_off[q] + 1; k < tl->stream_off[q + 1]; k++) {
      uint32_t x = tl->by_stream[k], prev = tl->by_stream[k - 1];
      if ((dg->bound[x] == PS_BOUND_HOST || dg->bound[x] == PS_BOUND_HOST_WAIT)
          && tl->spans[x].start_ns - tl->spans[prev].end_ns > HOST_WAIT_NS)
        n_other++;
    }
  dg->waits = calloc ((size_t) nst + n_other + 1, sizeof *dg->waits);
  uint32_t *step_span = NULL;
  keyed *by_end = malloc (((size_t) nst + 1) * sizeof *by_end);
  uint32_t *span_wait = malloc (((size_t) nsp + 1) * sizeof *span_wait);
  if (p)
    step_span = malloc (((size_t) p->n_steps + 1) * sizeof *step_span);
  if (!dg->waits || !by_end || !span_wait || (p && !step_span)) {
    free (by_end);
    free (span_wait);
    free (step_span);
    return PS_ENOMEM;
  }
  if (step_span) {
    for (uint32_t i = 0; i < p->n_steps; i++)
      step_span[i] = PS_NONE;
    for (uint32_t x = 0; x < nsp; x++)
      if (tl->spans[x].step < p->n_steps)
        step_span[tl->spans[x].step] = x;
  }
  for (uint32_t x = 0; x < nsp; x++)
    span_wait[x] = PS_NONE;

  /* Stalls in the order they end, so that a producer that itself waited
   * (an event chain across streams) has its cause known already. */
  for (uint32_t i = 0; i < nst; i++)
    by_end[i] = (keyed) { tl->stalls[i].end_ns, i };
  ps_array_sort (by_end, nst, sizeof *by_end, cmp_u32_by_key);
  for (uint32_t k = 0; k < nst; k++) {
    uint32_t i = by_end[k].idx;
    const ps_stall *sl = &tl->stalls[i];
    ps_wait *w = &dg->waits[i];
    *w = (ps_wait){ sl->start_ns, sl->end_ns, sl->stream, PS_WAIT_KIND_EVENT, PS_CAUSE_UNKNOWN,
                    i, PS_NONE, sl->waiting_for, PS_NONE, PS_NONE, PS_NONE,
                    sl->end_ns - sl->start_ns, sl->waiting_for, PS_NONE };
    if (sl->stream < tl->n_streams)
      w->span = span_from (tl, sl->stream, sl->end_ns);
    if (w->span != PS_NONE && span_wait[w->span] == PS_NONE)
      span_wait[w->span] = i;
    uint32_t x = sl->waiting_for;
    if (x >= nsp)
      continue;
    const ps_step *ws = p && sl->step < p->n_steps ? &p->steps[sl->step] : NULL;
    if (ws && ws->wait == PS_WAIT_ORDER) {
      /* The plan added this wait without a dependency behind it. */
      uint32_t dep = PS_NONE;
      if (ws->dep_node < p->graph->n_nodes)
        dep = span_of_step (step_span, p, p->node_step[ws->dep_node]);
      w->cause = dep != PS_NONE ? PS_CAUSE_LATE_RECORD : PS_CAUSE_ORDER;
      w->dep = dep;
      if (dep != PS_NONE)
        w->cost_ns = fmin (w->cost_ns, fmax (0, tl->spans[x].end_ns - tl->spans[dep].end_ns));
      pool_overlap (tl, w->span, x, &w->buffer, &w->shared_with);
      continue;
    }
    /* A dependency: back from the producer along stream order while the
     * work still ran inside the stall, to the first other cause. */
    uint32_t r = x, longest = x;
    double best = -1;
    for (int guard = 0; guard < 1 << 20; guard++) {
      const ps_span *rs = &tl->spans[r];
      double overlap = fmin (rs->end_ns, sl->end_ns) - fmax (rs->start_ns, sl->start_ns);
      if (overlap > best) {
        best = overlap;
        longest = r;
      }
      uint32_t pr = dg->pred[r];
      if (dg->bound[r] != PS_BOUND_STREAM || pr >= nsp
          || tl->spans[pr].end_ns <= sl->start_ns + TOL_NS)
        break;
      r = pr;
    }
    const ps_span *rs = &tl->spans[r];
    bool inside = rs->start_ns > sl->start_ns + TOL_NS;
    if (inside && dg->bound[r] == PS_BOUND_RESOURCE) {
      w->cause = PS_CAUSE_RESOURCE;
      w->culprit = dg->pred[r] < nsp ? dg->pred[r] : r;
      w->via = r;
    } else if (inside && (dg->bound[r] == PS_BOUND_HOST || dg->bound[r] == PS_BOUND_HOST_WAIT)) {
      w->cause = PS_CAUSE_HOST;
      w->culprit = r;
      w->via = r;
    } else if (inside && dg->bound[r] == PS_BOUND_EVENT && span_wait[r] != PS_NONE
               && dg->waits[span_wait[r]].cause != PS_CAUSE_UNKNOWN) {
      /* The producer waited on another stream: that wait's cause. */
      const ps_wait *up = &dg->waits[span_wait[r]];
      w->cause = up->cause;
      w->culprit = up->culprit;
      w->dep = up->dep;
      w->buffer = up->buffer;
      w->shared_with = up->shared_with;
      w->via = up->via != PS_NONE ? up->via : up->producer;
    } else {
      w->cause = PS_CAUSE_PRODUCER;
      w->culprit = longest;
    }
  }

  /* Resource and host waits. */
  uint32_t n = nst;
  for (uint32_t q = 0; q < tl->n_streams; q++)
    for (uint32_t k = tl->stream_off[q]; k < tl->stream_off[q + 1]; k++) {
      uint32_t x = tl->by_stream[k];
      const ps_span *s = &tl->spans[x];
      if (dg->bound[x] == PS_BOUND_RESOURCE && s->ready_ns >= 0
          && s->start_ns - s->ready_ns > TOL_NS) {
        dg->waits[n++] = (ps_wait){ s->ready_ns, s->start_ns, q, PS_WAIT_KIND_RESOURCE,
                                    PS_CAUSE_RESOURCE, PS_NONE, x,
                                    dg->pred[x] < nsp ? dg->pred[x] : PS_NONE, PS_NONE, PS_NONE,
                                    PS_NONE, s->start_ns - s->ready_ns, PS_NONE, PS_NONE };
        continue;
      }
      if (k == tl->stream_off[q])
        continue;
      const ps_span *prev = &tl->spans[tl->by_stream[k - 1]];
      if ((dg->bound[x] == PS_BOUND_HOST || dg->bound[x] == PS_BOUND_HOST_WAIT)
          && s->start_ns - prev->end_ns > HOST_WAIT_NS)
        dg->waits[n++] = (ps_wait){ prev->end_ns, s->start_ns, q, PS_WAIT_KIND_HOST,
                                    PS_CAUSE_HOST, PS_NONE, x,
                                    dg->bound[x] == PS_BOUND_HOST_WAIT && dg->pred[x] < nsp
                                      ? dg->pred[x] : x,
                                    PS_NONE, PS_NONE, PS_NONE, s->start_ns - prev->end_ns,
                                    PS_NONE, PS_NONE };
    }
  dg->n_waits = n;
  free (by_end);
  free (span_wait);
  free (step_span);
  return 0;
}

/* "a + b" of span x, into buf. */
static const char *
label_of (const ps_timeline *tl, uint32_t x, char *buf, size_t cap)
{
  if (x >= tl->n_spans) {
    snprintf (buf, cap, "?");
    return buf;
  }
  ps_timeline_span_label (tl, x, buf, cap);
  return buf;
}

const char *
ps_diagnose_wait_text (const ps_timeline *tl, const ps_diagnosis *dg, uint32_t i, char *buf,
                       size_t cap)
{
  if (cap == 0)
    return buf;
  buf[0] = '\0';
  if (!dg || i >= dg->n_waits)
    return buf;
  const ps_wait *w = &dg->waits[i];
  char who[256], what[256], dep[256], len[PS_FORMAT_MAX], dur[PS_FORMAT_MAX],
    cost[PS_FORMAT_MAX], on[64] = "";
  const ps_graph *g = tl->graph;
  if (w->span < tl->n_spans)
    label_of (tl, w->span, who, sizeof who);
  else
    ps_timeline_stream_label (tl, w->stream, who, sizeof who);
  ps_format_duration (w->end_ns - w->start_ns, len, sizeof len);
  ps_format_duration (w->cost_ns, cost, sizeof cost);
  label_of (tl, w->culprit, what, sizeof what);
  if (w->culprit < tl->n_spans) {
    const ps_span *c = &tl->spans[w->culprit];
    ps_format_duration (c->end_ns - c->start_ns, dur, sizeof dur);
    if (c->flags & PS_SPAN_F_UNKNOWN)
      snprintf (dur, sizeof dur, "unknown duration");
    ps_timeline_stream_label (tl, c->stream, on, sizeof on);
  } else {
    snprintf (dur, sizeof dur, "?");
  }
  char pool[600] = "";
  if (w->buffer != PS_NONE && g && w->buffer < g->n_buffers && w->shared_with < g->n_buffers)
    snprintf (pool, sizeof pool, "; the pool gives %s the bytes of %s, which relies on this wait",
              ps_buffer_name (g, w->buffer), ps_buffer_name (g, w->shared_with));
  size_t n = 0;
  switch ((ps_wait_kind) w->kind) {
  case PS_WAIT_KIND_RESOURCE:
    n = (size_t) snprintf (buf, cap, "%s waits %s for the %s held by %s (%s)", who, len,
                           w->culprit < tl->n_spans
                                 && tl->spans[w->culprit].kind == PS_SPAN_MEMCPY
                             ? "copy engine" : "SMs",
                           what, dur);
    break;
  case PS_WAIT_KIND_HOST:
    n = (size_t) snprintf (buf, cap, "%s waits %s for the host to issue it: launch-bound", who,
                           len);
    break;
  case PS_WAIT_KIND_EVENT:
  default: {
    /* What the event covered, then the first cause that is not stream
     * order. */
    char prod[256], pon[64] = "", via[256];
    label_of (tl, w->producer, prod, sizeof prod);
    if (w->producer < tl->n_spans)
      ps_timeline_stream_label (tl, tl->spans[w->producer].stream, pon, sizeof pon);
    label_of (tl, w->via, via, sizeof via);
    n = (size_t) snprintf (buf, cap, "%s waits %s for %s on %s", who, len, prod, pon);
    if (n >= cap)
      break;
    const char *engine = w->culprit < tl->n_spans && tl->spans[w->culprit].kind == PS_SPAN_MEMCPY
                           ? "copy engine" : "SMs";
    switch ((ps_cause) w->cause) {
    case PS_CAUSE_PRODUCER:
      if (w->culprit == w->producer)
        snprintf (buf + n, cap - n, ", the work it depends on, which runs %s", dur);
      else
        snprintf (buf + n, cap - n, ", the work it depends on, which ran after %s (%s) there",
                  what, dur);
      break;
    case PS_CAUSE_RESOURCE:
      snprintf (buf + n, cap - n, ": %s%s waited for the %s held by %s (%s)",
                w->via == w->producer ? "" : "the work before it there, ",
                w->via == w->producer ? prod : via, engine, what, dur);
      break;
    case PS_CAUSE_HOST:
      snprintf (buf + n, cap - n, ": the host issued %s late, after its inputs were ready", via);
      break;
    case PS_CAUSE_ORDER:
      snprintf (buf + n, cap - n,
                ", which it does not depend on: the plan keeps it from taking the %s first "
                "(resource order), costing %s%s",
                engine, cost, pool);
      break;
    case PS_CAUSE_LATE_RECORD:
      snprintf (buf + n, cap - n,
                ": the event is recorded after %s, but it depends only on %s, which ends %s "
                "earlier (resource order)%s",
                what, label_of (tl, w->dep, dep, sizeof dep), cost, pool);
      break;
    default:
      break;
    }
    break;
  }
  }
  return buf;
}

static void
add_help (ps_diagnosis *dg, const ps_help *h)
{
  if (dg->n_help < PS_DIAG_MAX_HELP)
    dg->help[dg->n_help++] = *h;
}

uint64_t
ps_diagnose_work_key (const ps_timeline *tl, uint32_t span)
{
  const ps_span *s = &tl->spans[span];
  if (s->name != PS_NONE)
    return (1ull << 40) | s->name;
  /* By the function's name: the loader keeps one copy per node. */
  const char *f = ps_timeline_span_function (tl, span);
  if (f)
    return (2ull << 40) | ps__strmap_hash (f, strlen (f));
  return (3ull << 40) | span;
}

static int
find_helps (ps_diagnosis *dg, const ps_timeline *tl, const keyed *stalls_by_stream,
            const uint32_t *stall_off)
{
  /* Work with the most time on the critical path, grouped by what it runs
   * (the same kernel launched many times). */
  uint32_t n = dg->n_critical;
  ps__kv *k = malloc (((size_t) n + 1) * sizeof *k);
  if (!k)
    return PS_ENOMEM;
  /* In (key, span) order: by span, then by key keeping that order (two
   * radix sorts; qsort took 0.1 s of the 1M-node transformer's output,
   * whose critical path is every span). */
  for (uint32_t i = 0; i < n; i++)
    k[i] = (ps__kv) { dg->critical[i], dg->critical[i], 0 };
  if (ps__radix_sort_kv (k, n) < 0) {
    free (k);
    return PS_ENOMEM;
  }
  for (uint32_t i = 0; i < n; i++)
    k[i].key = ps_diagnose_work_key (tl, k[i].a);
  if (ps__radix_sort_kv (k, n) < 0) {
    free (k);
    return PS_ENOMEM;
  }
  ps_help top[5];
  uint32_t n_top = 0;
  for (uint32_t i = 0; i < n;) {
    uint32_t j = i;
    double t = 0;
    while (j < n && k[j].key == k[i].key) {
      const ps_span *s = &tl->spans[k[j].a];
      t += s->end_ns - s->start_ns;
      j++;
    }
    ps_help h = { PS_HELP_SHORTEN, k[i].a, PS_NONE, PS_NONE, j - i, t, -1 };
    if (t > 0) {
      /* Insertion into the top five by time. */
      uint32_t pos = n_top < 5 ? n_top++ : 5;
      while (pos > 0 && top[pos - 1].ns < t) {
        if (pos < 5)
          top[pos] = top[pos - 1];
        pos--;
      }
      if (pos < 5)
        top[pos] = h;
    }
    i = j;
  }
  free (k);
  for (uint32_t i = 0; i < n_top; i++)
    add_help (dg, &top[i]);

  double ms = dg->makespan_ns;
  if (ms > 0 && dg->host_bound_ns > 0.1 * ms) {
    ps_help h = { PS_HELP_LAUNCH_BOUND, PS_NONE, PS_NONE, PS_NONE, 0, dg->host_bound_ns, -1 };
    add_help (dg, &h);
  }
  for (uint32_t q = 0; q < dg->n_streams && ms > 0; q++) {
    const ps_stream_stats *st = &dg->streams[q];
    if (st->stalled_ns > 0.1 * ms) {
      /* The stream it waited for longest. */
      double best = 0;
      uint32_t on = PS_NONE;
      double per[64] = { 0 };
      for (uint32_t i = stall_off[q]; i < stall_off[q + 1]; i++) {
        const ps_stall *sl = &tl->stalls[stalls_by_stream[i].idx];
        if (sl->on_stream < 64)
          per[sl->on_stream] += sl->end_ns - sl->start_ns;
      }
      for (uint32_t o = 0; o < 64 && o < tl->n_streams; o++)
        if (per[o] > best) {
          best = per[o];
          on = o;
        }
      ps_help h = { PS_HELP_STALLS, PS_NONE, q, on, st->stalls, st->stalled_ns, -1 };
      add_help (dg, &h);
    }
  }
  /* Idle streams matter when others are busy: then work could move. */
  double busiest = 0;
  for (uint32_t q = 0; q < dg->n_streams; q++)
    busiest = fmax (busiest, dg->streams[q].busy_ns);
  if (dg->n_streams > 1 && busiest > 0.5 * ms)
    for (uint32_t q = 0; q < dg->n_streams && ms > 0; q++)
      if (dg->streams[q].spans > 0 && dg->streams[q].idle_ns > 0.5 * ms) {
        ps_help h = { PS_HELP_IDLE_STREAM, PS_NONE, q, PS_NONE, 0, dg->streams[q].idle_ns, -1 };
        add_help (dg, &h);
      }
  return 0;
}

/* The whole diagnosis, or (full false) the critical path alone: bound,
 * pred, critical, critical_work_ns and host_bound_ns, the streams' slots
 * zero and no chains, waits or help. */
static int
diagnose (ps_diagnosis *dg, const ps_timeline *tl, bool full)
{
  memset (dg, 0, sizeof *dg);
  if (!tl->stream_off)
    return PS_EINVAL;
  int rc = PS_ENOMEM;
  uint32_t ns = tl->n_streams, nsp = tl->n_spans, nst = tl->n_stalls, nhw = tl->n_host_waits;
  dg->n_streams = ns;
  dg->makespan_ns = tl->makespan_ns;
  dg->streams = calloc ((size_t) ns + 1, sizeof *dg->streams);
  dg->bound = malloc ((size_t) nsp + 1);
  dg->pred = malloc (((size_t) nsp + 1) * sizeof *dg->pred);
  dg->chain_off = calloc ((size_t) nst + 1, sizeof *dg->chain_off);
  keyed *st_start = malloc (((size_t) nst + 1) * sizeof *st_start);
  keyed *st_end = malloc (((size_t) nst + 1) * sizeof *st_end);
  uint32_t *st_off = calloc ((size_t) ns + 2, sizeof *st_off);
  keyed *hw = malloc (((size_t) nhw + 1) * sizeof *hw);
  uint32_t *hw_last = malloc (((size_t) nhw + 1) * sizeof *hw_last);
  uint8_t *seen = calloc ((size_t) nsp + 1, 1);
  if (!dg->streams || !dg->bound || !dg->pred || !dg->chain_off || !st_start || !st_end
      || !st_off || !hw || !hw_last || !seen)
    goto out;

  /* Stalls grouped by stream: by start for the statistics, by end for the
   * inference.  Keys sort by stream first. */
  for (uint32_t i = 0; i < nst; i++) {
    uint32_t q = tl->stalls[i].stream < ns ? tl->stalls[i].stream : ns;
    st_off[q + 1]++;
  }
  for (uint32_t q = 0; q <= ns; q++)
    st_off[q + 1] += st_off[q];
  {
    uint32_t *fill = calloc ((size_t) ns + 1, sizeof *fill);
    if (!fill)
      goto out;
    for (uint32_t i = 0; i < nst; i++) {
      uint32_t q = tl->stalls[i].stream < ns ? tl->stalls[i].stream : ns;
      uint32_t at = st_off[q] + fill[q]++;
      st_start[at] = (keyed) { tl->stalls[i].start_ns, i };
      st_end[at] = (keyed) { tl->stalls[i].end_ns, i };
    }
    free (fill);
  }
  for (uint32_t q = 0; q <= ns; q++) {
    if (full)
      ps_array_sort (st_start + st_off[q], st_off[q + 1] - st_off[q], sizeof *st_start,
                     cmp_keyed);
    ps_array_sort (st_end + st_off[q], st_off[q + 1] - st_off[q], sizeof *st_end, cmp_keyed);
  }

  for (uint32_t q = 0; q < ns && full; q++) {
    rc = stream_stats (tl, q, st_start, st_off[q], st_off[q + 1], &dg->streams[q]);
    if (rc < 0)
      goto out;
    ps_stream_stats *s = &dg->streams[q];
    s->idle_ns = fmax (0, tl->makespan_ns - s->busy_ns - s->stalled_ns);
  }
  rc = PS_ENOMEM;

  /* Host waits by end, with the last blocking one up to each position: a
   * wait blocked when the work it waited for was still running as it began. */
  for (uint32_t i = 0; i < nhw; i++)
    hw[i] = (keyed) { tl->host_waits[i].end_ns, i };
  ps_array_sort (hw, nhw, sizeof *hw, cmp_keyed);
  for (uint32_t i = 0; i < nhw; i++) {
    const ps_host_wait *w = &tl->host_waits[hw[i].idx];
    bool blocking = w->span < nsp && tl->spans[w->span].end_ns >= w->start_ns - SYNC_SKEW_NS;
    hw_last[i] = blocking ? i : (i ? hw_last[i - 1] : PS_NONE);
  }

  for (uint32_t q = 0; q < ns; q++) {
    uint32_t prev = PS_NONE;
    for (uint32_t k = tl->stream_off[q]; k < tl->stream_off[q + 1]; k++) {
      uint32_t x = tl->by_stream[k];
      const ps_span *s = &tl->spans[x];
      if (s->bound != PS_BOUND_UNKNOWN) {
        dg->bound[x] = s->bound;
        dg->pred[x] = s->pred < nsp ? s->pred : PS_NONE;
      } else {
        infer (tl, x, prev, st_end, st_off[q], st_off[q + 1], hw, hw_last, nhw, dg->bound,
               dg->pred);
      }
      prev = x;
    }
  }

  /* The critical path, walked back from the work that ends last. */
  uint32_t last = PS_NONE;
  for (uint32_t i = 0; i < nsp; i++)
    if (last == PS_NONE || tl->spans[i].end_ns > tl->spans[last].end_ns)
      last = i;
  uint32_t len = 0;
  for (uint32_t x = last; x != PS_NONE && !seen[x]; x = dg->pred[x]) {
    seen[x] = 1;
    len++;
  }
  dg->critical = malloc (((size_t) len + 1) * sizeof *dg->critical);
  if (!dg->critical)
    goto out;
  dg->n_critical = len;
  {
    uint32_t i = len;
    for (uint32_t x = last; i > 0; x = dg->pred[x])
      dg->critical[--i] = x;
  }
  for (uint32_t i = 0; i < len; i++) {
    uint32_t x = dg->critical[i];
    const ps_span *s = &tl->spans[x];
    dg->critical_work_ns += s->end_ns - s->start_ns;
    if (dg->bound[x] == PS_BOUND_HOST || dg->bound[x] == PS_BOUND_HOST_WAIT) {
      double before = i ? tl->spans[dg->critical[i - 1]].end_ns : 0;
      dg->host_bound_ns += fmax (0, s->start_ns - before);
    }
  }

  if (!full) {
    rc = 0;
    goto out;
  }

  /* Stall chains: from the waited-for span back along stream order while
   * the work ran inside the stall, to the first span bound otherwise. */
  uint32_t total = 0;
  for (int pass = 0; pass < 2; pass++) {
    total = 0;
    for (uint32_t i = 0; i < nst; i++) {
      const ps_stall *sl = &tl->stalls[i];
      uint32_t c = 0;
      for (uint32_t x = sl->waiting_for; x < nsp && c < PS_DIAG_CHAIN_MAX; x = dg->pred[x]) {
        if (pass)
          dg->chain[total + c] = x;
        c++;
        if (dg->bound[x] != PS_BOUND_STREAM || dg->pred[x] >= nsp
            || tl->spans[dg->pred[x]].end_ns <= sl->start_ns + TOL_NS)
          break;
      }
      total += c;
      dg->chain_off[i + 1] = total;
    }
    if (!pass) {
      dg->chain = malloc (((size_t) total + 1) * sizeof *dg->chain);
      if (!dg->chain)
        goto out;
    }
  }
  rc = find_waits (dg, tl);
  if (rc < 0)
    goto out;

  rc = find_helps (dg, tl, st_start, st_off);
out:
  free (st_start);
  free (st_end);
  free (st_off);
  free (hw);
  free (hw_last);
  free (seen);
  if (rc < 0)
    ps_diagnosis_free (dg);
  return rc;
}

int
ps_diagnose (ps_diagnosis *dg, const ps_timeline *tl)
{
  return diagnose (dg, tl, true);
}

int
ps_diagnose_path (ps_diagnosis *dg, const ps_timeline *tl)
{
  return diagnose (dg, tl, false);
}
