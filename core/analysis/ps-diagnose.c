/* ps-diagnose.c: stream statistics, critical path, stall causes and
 * suggestions for a timeline (see ps-diagnose.h). */
#include "ps-diagnose.h"

#include "util/ps-strmap.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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

void
ps_diagnosis_free (ps_diagnosis *dg)
{
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
  keyed *k = malloc (((size_t) n + 1) * sizeof *k);
  if (!k)
    return PS_ENOMEM;
  for (uint32_t i = 0; i < n; i++)
    k[i] = (keyed) { (double) ps_diagnose_work_key (tl, dg->critical[i]), dg->critical[i] };
  qsort (k, n, sizeof *k, cmp_keyed);
  ps_help top[5];
  uint32_t n_top = 0;
  for (uint32_t i = 0; i < n;) {
    uint32_t j = i;
    double t = 0;
    while (j < n && k[j].key == k[i].key) {
      const ps_span *s = &tl->spans[k[j].idx];
      t += s->end_ns - s->start_ns;
      j++;
    }
    ps_help h = { PS_HELP_SHORTEN, k[i].idx, PS_NONE, PS_NONE, j - i, t, -1 };
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

int
ps_diagnose (ps_diagnosis *dg, const ps_timeline *tl)
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
    qsort (st_start + st_off[q], st_off[q + 1] - st_off[q], sizeof *st_start, cmp_keyed);
    qsort (st_end + st_off[q], st_off[q + 1] - st_off[q], sizeof *st_end, cmp_keyed);
  }

  for (uint32_t q = 0; q < ns; q++) {
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
  qsort (hw, nhw, sizeof *hw, cmp_keyed);
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

  /* Stall causes. */
  uint32_t total = 0;
  for (uint32_t i = 0; i < nst; i++) {
    uint32_t c = 0;
    for (uint32_t x = tl->stalls[i].waiting_for; x < nsp && c < PS_DIAG_CHAIN_MAX; x = dg->pred[x])
      c++;
    total += c;
    dg->chain_off[i + 1] = total;
  }
  dg->chain = malloc (((size_t) total + 1) * sizeof *dg->chain);
  if (!dg->chain)
    goto out;
  for (uint32_t i = 0; i < nst; i++) {
    uint32_t at = dg->chain_off[i];
    for (uint32_t x = tl->stalls[i].waiting_for; x < nsp && at < dg->chain_off[i + 1];
         x = dg->pred[x])
      dg->chain[at++] = x;
  }

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
