/* ps-measure.c: measured step times -> a measured timeline (see
 * ps-measure.h). */
#include "ps-measure.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ps-array.h"
#include "ps-profiler.h"

int
ps_step_times_init (ps_step_times *t, uint32_t n_steps, uint32_t n_iterations)
{
  memset (t, 0, sizeof *t);
  uint64_t n = (uint64_t) n_steps * n_iterations;
  if (n > ((uint64_t) 1 << 31))
    return PS_ELIMIT;
  size_t cnt = n ? (size_t) n : 1;
  t->start = malloc (cnt * sizeof *t->start);
  t->end = malloc (cnt * sizeof *t->end);
  if (!t->start || !t->end) {
    ps_step_times_free (t);
    return PS_ENOMEM;
  }
  for (size_t i = 0; i < cnt; i++)
    t->start[i] = t->end[i] = NAN;
  t->n_steps = n_steps;
  t->n_iterations = n_iterations;
  return 0;
}

void
ps_step_times_free (ps_step_times *t)
{
  free (t->start);
  free (t->end);
  memset (t, 0, sizeof *t);
}

void
ps_step_times_add (ps_step_times *t, uint32_t iteration, uint32_t step, double start, double end)
{
  if (iteration >= t->n_iterations || step >= t->n_steps || !(end >= start))
    return;
  size_t i = (size_t) iteration * t->n_steps + step;
  if (isnan (t->start[i]) || start < t->start[i])
    t->start[i] = start;
  if (isnan (t->end[i]) || end > t->end[i])
    t->end[i] = end;
}

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

double
ps_median (double *v, uint32_t n)
{
  if (n == 0)
    return NAN;
  ps_array_sort (v, n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int
ps_measured_timeline (const ps_plan *p, const ps_step_times *t, const char *gpu_name,
                      ps_timeline *tl, double *step_ns)
{
  ps_timeline_init (tl, PS_TL_MEASURED);
  tl->graph = p->graph;
  tl->plan = p;
  tl->iterations = t->n_iterations;
  snprintf (tl->device, sizeof tl->device, "%s", gpu_name ? gpu_name : "");
  if (t->n_steps != p->n_steps)
    return PS_EINVAL;

  uint32_t ns = p->streams_used ? p->streams_used : 1;
  if (ns > PS_MAX_STREAMS)
    return PS_EINVAL;
  uint32_t n_ev = p->n_events;
  size_t it = t->n_iterations ? t->n_iterations : 1;
  double *sv = malloc (it * sizeof *sv);
  double *dv = malloc (it * sizeof *dv);
  double *cursor = calloc (ns, sizeof *cursor);
  uint32_t *last_span = malloc (ns * sizeof *last_span);
  uint32_t *last_record = malloc ((n_ev ? n_ev : 1) * sizeof *last_record);
  double *rec_time = malloc ((p->n_steps ? p->n_steps : 1) * sizeof *rec_time);
  uint32_t *rec_span = malloc ((p->n_steps ? p->n_steps : 1) * sizeof *rec_span);
  int rc = 0;
  if (!sv || !dv || !cursor || !last_span || !last_record || !rec_time || !rec_span) {
    rc = PS_ENOMEM;
    goto out;
  }
  for (uint32_t q = 0; q < ns; q++) {
    last_span[q] = PS_NONE;
    if ((rc = ps_timeline_add_stream (tl, q, -1, NULL)) != 0)
      goto out;
  }
  for (uint32_t e = 0; e < n_ev; e++)
    last_record[e] = PS_NONE;

  for (uint32_t s = 0; s < p->n_steps; s++) {
    const ps_step *st = &p->steps[s];
    uint32_t q = st->stream < ns ? st->stream : ns - 1;
    if (step_ns)
      step_ns[s] = -1;
    if (st->op == PS_OP_EVENT_RECORD) {
      rec_time[s] = cursor[q];
      rec_span[s] = last_span[q];
      if (st->event < n_ev)
        last_record[st->event] = s;
      continue;
    }
    if (st->op == PS_OP_EVENT_WAIT) {
      uint32_t rs = st->event < n_ev ? last_record[st->event] : PS_NONE;
      if (rs == PS_NONE)
        continue;
      double at = rec_time[rs];
      uint32_t from_q = p->steps[rs].stream < ns ? p->steps[rs].stream : ns - 1;
      uint32_t stall = PS_NONE;
      if (from_q != q && at > cursor[q]) {
        ps_stall sl = { .start_ns = cursor[q], .end_ns = at, .stream = q, .step = s,
                        .on_stream = from_q, .waiting_for = rec_span[rs],
                        .event = (int64_t) st->event };
        if ((rc = ps_timeline_add_stall (tl, &sl, &stall)) != 0)
          goto out;
        cursor[q] = at;
      }
      if (from_q != q) {
        ps_flow f = { .from_ns = at, .to_ns = cursor[q], .from_stream = from_q, .to_stream = q,
                      .from_span = rec_span[rs], .to_span = PS_NONE, .stall = stall,
                      .event = (int64_t) st->event };
        if ((rc = ps_timeline_add_flow (tl, &f, NULL)) != 0)
          goto out;
      }
      continue;
    }

    uint32_t n = 0;
    for (uint32_t i = 0; i < t->n_iterations; i++) {
      double a = t->start[(size_t) i * t->n_steps + s], b = t->end[(size_t) i * t->n_steps + s];
      if (isnan (a) || isnan (b))
        continue;
      sv[n] = a;
      dv[n] = b - a;
      n++;
    }
    ps_span sp = { .launch_ns = -1, .ready_ns = -1, .stream = q, .step = s, .name = PS_NONE,
                   .pred = PS_NONE,
                   .kind = (uint8_t) ps_span_kind_of_op ((ps_op) st->op),
                   .bound = PS_BOUND_UNKNOWN };
    if (n) {
      double start = ps_median (sv, n), dur = ps_median (dv, n);
      sp.start_ns = start > cursor[q] ? start : cursor[q];
      sp.end_ns = sp.start_ns + dur;
      if (step_ns)
        step_ns[s] = dur;
    } else {
      sp.start_ns = sp.end_ns = cursor[q];
      if (st->op == PS_OP_KERNEL || st->op == PS_OP_MEMCPY || st->op == PS_OP_MEMSET)
        sp.kind = PS_SPAN_OTHER;
    }
    uint32_t idx;
    if ((rc = ps_timeline_add_span (tl, &sp, p->step_nodes + st->nodes_begin, st->nodes_count,
                                    &idx)) != 0)
      goto out;
    cursor[q] = sp.end_ns;
    last_span[q] = idx;
  }
  rc = ps_timeline_finish (tl);

out:
  free (sv);
  free (dv);
  free (cursor);
  free (last_span);
  free (last_record);
  free (rec_time);
  free (rec_span);
  return rc;
}

void
ps_profile_result_free (ps_profile_result *r)
{
  ps_timeline_free (&r->timeline);
  free (r->step_ns);
  memset (r, 0, sizeof *r);
}
