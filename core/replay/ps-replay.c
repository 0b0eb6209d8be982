/* ps-replay.c: a trace replayed on planscope's model and held against
 * what was measured (see ps-replay.h). */
#include "ps-replay.h"

#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ps-array.h"
#include "ps-import.h"
#include "ps-plan.h"
#include "ps-sim.h"

void
ps_replay_free (ps_replay *r)
{
  free (r->streams);
  memset (r, 0, sizeof *r);
}

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

/* The makespan of a simulated run: first op's start to the last end;
 * *end (may be NULL) receives the last end. */
static double
span_of (const ps_timeline *tl, double *end)
{
  double s0 = INFINITY, s1 = -INFINITY;
  for (uint32_t i = 0; i < tl->n_spans; i++)
    if (tl->spans[i].nodes_count) {
      s0 = fmin (s0, tl->spans[i].start_ns);
      s1 = fmax (s1, tl->spans[i].end_ns);
    }
  if (end)
    *end = s1 > s0 ? s1 : 0;
  return s1 > s0 ? s1 - s0 : 0;
}

/* The measured and the simulated run, op by op. */
static int
compare (const ps_graph *g, const ps_timeline *measured, const ps_trace_graph_info *in,
         const ps_timeline *sim, ps_replay *r)
{
  uint32_t n = g->n_nodes;
  double *start = malloc (((size_t) n + 1) * sizeof *start);
  double *end = malloc (((size_t) n + 1) * sizeof *end);
  double *err = malloc (((size_t) n + 1) * sizeof *err);
  r->streams = calloc ((size_t) in->streams + 1, sizeof *r->streams);
  if (!start || !end || !err || !r->streams) {
    free (start);
    free (end);
    free (err);
    return PS_ENOMEM;
  }
  for (uint32_t v = 0; v < n; v++)
    start[v] = end[v] = NAN;
  for (uint32_t i = 0; i < sim->n_spans; i++) {
    const ps_span *s = &sim->spans[i];
    for (uint32_t k = 0; k < s->nodes_count; k++) {
      uint32_t v = sim->span_nodes[s->nodes_begin + k];
      if (v < n) {
        start[v] = s->start_ns;
        end[v] = s->end_ns;
      }
    }
  }
  r->n_streams = in->streams;
  for (uint32_t p = 0; p < in->streams; p++)
    r->streams[p].id = in->stream_of_pin[p];
  double m0 = INFINITY, m1 = -INFINITY;
  uint32_t ne = 0;
  for (uint32_t v = 0; v < n; v++) {
    const ps_span *ms = &measured->spans[in->span_of_node[v]];
    m0 = fmin (m0, ms->start_ns);
    m1 = fmax (m1, ms->end_ns);
    int32_t pin = g->nodes[v].stream;
    uint32_t p = 0;
    while (pin < 0 && p < in->streams && in->tl_stream_of_pin[p] != ms->stream)
      p++;
    p = pin >= 0 ? (uint32_t) pin : p;
    if (p < in->streams)
      r->streams[p].measured_ns += ms->end_ns - ms->start_ns;
    if (!isfinite (start[v]))
      continue;
    if (p < in->streams)
      r->streams[p].replayed_ns += end[v] - start[v];
    err[ne++] = fabs (start[v] - (ms->start_ns - in->t0_ns));
  }
  r->measured_makespan_ns = m1 > m0 ? m1 - m0 : 0;
  r->measured_end_ns = m1 > m0 ? m1 - in->t0_ns : 0;
  r->replayed_makespan_ns = span_of (sim, &r->replayed_end_ns);
  r->makespan_error = r->measured_makespan_ns > 0
                        ? (r->replayed_makespan_ns - r->measured_makespan_ns)
                            / r->measured_makespan_ns
                        : 0;
  if (ne) {
    ps_array_sort (err, ne, sizeof *err, cmp_double);
    r->median_start_error_ns = ne % 2 ? err[ne / 2] : 0.5 * (err[ne / 2 - 1] + err[ne / 2]);
  }
  free (start);
  free (end);
  free (err);
  return ne == n ? 0 : PS_EINVAL;
}

/* The makespan with the delays of the causes in `drop` (a bit per cause)
 * taken out. */
static int
without_delays (ps_graph *g, const ps_plan *p, const ps_device *d,
                const ps_trace_graph_info *in, unsigned drop, double *makespan)
{
  double *kept = g->delay_ns;
  double *masked = malloc (((size_t) g->n_nodes + 1) * sizeof *masked);
  if (!masked)
    return PS_ENOMEM;
  for (uint32_t v = 0; v < g->n_nodes; v++)
    masked[v] = (drop >> in->cause_of_node[v]) & 1 ? 0 : kept[v];
  g->delay_ns = masked;
  ps_timeline tl;
  ps_timeline_init (&tl, PS_TL_SIMULATED);
  int rc = ps_simulate (p, d, &tl);
  *makespan = span_of (&tl, NULL);
  ps_timeline_free (&tl);
  g->delay_ns = kept;
  free (masked);
  return rc;
}

/* How much of the replayed makespan each cause of delay makes up: what
 * the makespan loses when that cause's delays go. */
static int
attribute_delays (ps_graph *g, const ps_plan *p, const ps_device *d,
                  const ps_trace_graph_info *in, ps_replay *r)
{
  double full = r->replayed_makespan_ns, m;
  unsigned unexplained = 0;
  int rc = 0;
  for (int c = 0; c < PS_IDLE__COUNT && rc == 0; c++) {
    if (!(in->delay_by[c] > 0))
      continue;
    if ((rc = without_delays (g, p, d, in, 1u << c, &m)) == 0)
      r->unexplained_by[c] = fmax (0, full - m);
    if (c != PS_IDLE_LAUNCH_LATENCY)
      unexplained |= 1u << c;
  }
  r->launch_latency_ns = r->unexplained_by[PS_IDLE_LAUNCH_LATENCY];
  r->unexplained_by[PS_IDLE_LAUNCH_LATENCY] = 0;
  if (rc == 0 && unexplained && (rc = without_delays (g, p, d, in, unexplained, &m)) == 0)
    r->unexplained_ns = fmax (0, full - m);
  return rc;
}

void
ps_replay_options_init (ps_replay_options *o)
{
  memset (o, 0, sizeof *o);
  ps_trace_graph_options_init (&o->trace);
}

/* The what-if changes of o, applied to the measured graph. */
static void
what_if (ps_graph *g, const ps_trace_graph_info *in, const ps_replay_options *o, ps_replay *r)
{
  r->what_if = o->n_scales > 0 || o->no_launch_overhead || o->streams > 0;
  for (uint32_t v = 0; v < g->n_nodes; v++) {
    ps_node *nd = &g->nodes[v];
    if (nd->op == PS_OP_KERNEL && nd->aux < g->n_kernels) {
      const char *fn = ps_graph_str (g, g->kernels[nd->aux].function);
      for (uint32_t k = 0; k < o->n_scales; k++)
        if (fnmatch (o->scale[k].glob, fn, 0) == 0) {
          nd->cost_ns *= o->scale[k].factor;
          r->scaled++;
          break;
        }
    }
    if (o->no_launch_overhead) {
      g->host_ns[v] = NAN;
      if (in->cause_of_node[v] == PS_IDLE_LAUNCH_LATENCY)
        g->delay_ns[v] = 0;
    }
  }
}

int
ps_replay_trace (const char *data, size_t len, const char *path, const ps_replay_options *o,
                 const ps_device *d, ps_replay *r, ps_diag *diag)
{
  memset (r, 0, sizeof *r);
  ps_graph g;
  ps_timeline measured;
  ps_trace_graph_info in;
  ps_trace_graph_options to;
  ps_trace_graph_options_init (&to);
  if (o)
    to = o->trace;
  if (o && o->streams)
    to.free_streams = true;
  int rc = ps_import_trace_graph (&g, data, len, path, &to, &measured, &in, diag);
  if (rc < 0)
    return rc;
  if (o)
    what_if (&g, &in, o, r);
  ps_plan_options po;
  ps_plan_options_init (&po);
  po.streams = o && o->streams ? o->streams : in.streams ? in.streams : 1;
  po.fusion = false;
  ps_plan p;
  memset (&p, 0, sizeof p);
  ps_timeline sim;
  ps_timeline_init (&sim, PS_TL_SIMULATED);
  rc = ps_plan_build (&p, &g, &po, diag);
  if (rc == 0)
    rc = ps_simulate (&p, d, &sim);
  if (rc == 0)
    rc = compare (&g, &measured, &in, &sim, r);
  if (rc == 0)
    rc = attribute_delays (&g, &p, d, &in, r);
  if (rc == 0) {
    r->device = in.device;
    r->n_devices = in.n_devices;
    r->gpu_ops = in.gpu_ops;
    r->waits = in.waits;
    r->inferred = in.inferred;
    r->dropped = in.dropped;
    r->launches = in.launches;
    r->streams_used = p.streams_used;
    r->et = in.et;
  } else {
    ps_replay_free (r);
    if (rc == PS_EINVAL)
      ps_diag_error (diag, 0, 0, "the replay lost some of the trace's ops");
  }
  ps_timeline_free (&sim);
  ps_plan_free (&p);
  ps_timeline_free (&measured);
  ps_trace_graph_info_free (&in);
  ps_graph_free (&g);
  return rc;
}

int
ps_trace_measured_timeline (const ps_graph *g, const ps_timeline *trace,
                            const ps_trace_graph_info *in, const ps_plan *p, ps_timeline *out)
{
  ps_timeline_init (out, PS_TL_MEASURED);
  out->graph = g;
  out->plan = p;
  out->iterations = 1;
  snprintf (out->device, sizeof out->device, "trace (device %d)", in->device);
  uint32_t ns = p->streams_used ? p->streams_used : 1;
  int rc = 0;
  for (uint32_t q = 0; q < ns && rc == 0; q++)
    rc = ps_timeline_add_stream (out, q, -1, NULL);
  for (uint32_t v = 0; v < g->n_nodes && rc == 0; v++) {
    uint32_t step = p->node_step ? p->node_step[v] : PS_NONE;
    if (step >= p->n_steps || in->span_of_node[v] >= trace->n_spans)
      continue;
    const ps_span *m = &trace->spans[in->span_of_node[v]];
    ps_span s = *m;
    s.start_ns = m->start_ns - in->t0_ns;
    s.end_ns = m->end_ns - in->t0_ns;
    s.launch_ns = m->launch_ns >= 0 ? m->launch_ns - in->t0_ns : -1;
    s.ready_ns = -1;
    s.stream = p->steps[step].stream < ns ? p->steps[step].stream : 0;
    s.step = step;
    s.name = PS_NONE;
    s.pred = PS_NONE;
    s.flags = 0;
    rc = ps_timeline_add_span (out, &s, &v, 1, NULL);
  }
  if (rc == 0)
    rc = ps_timeline_finish (out);
  if (rc != 0)
    ps_timeline_free (out);
  return rc;
}
