/* ps-plan-output.c: the plan as the JSON document of spec/cli.md and as
 * human text for a terminal.  Both are one pass over the steps, linear in
 * the size of the plan. */
#include "ps-plan-output.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/ps-plan-private.h"
#include "util/ps-job.h"
#include "util/ps-outbuf.h"
#include "ps-cost.h"
#include "ps-diagnose.h"
#include "ps-figures.h"
#include "ps-format.h"
#include "ps-jsonw.h"
#include "ps-pool-peak.h"
#include "ps-sim.h"

/* ---- JSON ---- */

static void
write_step_json (const ps_plan *p, uint32_t i, ps_outbuf *out)
{
  const ps_graph *g = p->graph;
  const ps_step *st = &p->steps[i];
  ps_outbuf_str (out, "    {\"op\": ");
  ps_jsonw_string_buf (out, ps_op_name ((ps_op) st->op));
  ps_outbuf_str (out, ", \"stream\": ");
  ps_outbuf_uint_left (out, st->stream, 0);
  if (st->nodes_count > 0) {
    ps_outbuf_str (out, ", \"nodes\": [");
    for (uint32_t k = 0; k < st->nodes_count; k++) {
      uint32_t v = p->step_nodes[st->nodes_begin + k];
      if (k)
        ps_outbuf_str (out, ", ");
      ps_jsonw_string_buf (out, v < g->n_nodes ? ps_node_name (g, v) : "");
    }
    ps_outbuf_char (out, ']');
  }
  const char *fn = ps__plan_str (p, st->function);
  if (fn) {
    ps_outbuf_str (out, ", \"function\": ");
    ps_jsonw_string_buf (out, fn);
  }
  if ((st->op == PS_OP_EVENT_RECORD || st->op == PS_OP_EVENT_WAIT) && st->event != PS_NONE) {
    ps_outbuf_str (out, ", \"event\": ");
    ps_outbuf_uint_left (out, st->event, 0);
  }
  if (st->op == PS_OP_EVENT_WAIT && st->wait != PS_WAIT_NONE) {
    ps_outbuf_str (out, ", \"why\": ");
    ps_jsonw_string_buf (out, ps_wait_reason_name ((ps_wait_reason) st->wait));
    if (st->dep_node < g->n_nodes) {
      ps_outbuf_str (out, ", \"depends_on\": ");
      ps_jsonw_string_buf (out, ps_node_name (g, st->dep_node));
    }
  }
  ps_outbuf_char (out, '}');
}

int
ps_plan_write_json (const ps_plan *p, FILE *file)
{
  if (!p || !p->graph || !file)
    return PS_EINVAL;
  ps_outbuf *out = malloc (sizeof *out);
  if (!out)
    return PS_ENOMEM;
  ps_outbuf_init (out, file);
  const ps_graph *g = p->graph;
  ps_outbuf_str (out, "{\n  \"format\": \"planscope-plan\", \"version\": 1, \"graph\": ");
  ps_jsonw_string_buf (out, g->name ? g->name : "");
  ps_outbuf_printf (out, ",\n  \"options\": {\"streams\": %u, \"fusion\": %s},\n",
                    p->options.streams, p->options.fusion ? "true" : "false");
  ps_pool_peak pk;
  int rc = ps_pool_peak_of (p, &pk);
  if (rc < 0) {
    free (out);
    return rc;
  }
  if (p->options.fusion)
    ps_outbuf_printf (out, "  \"fusion_mode\": \"%s\", \"fused_groups_kept_back\": %u,\n",
                      p->options.fusion_all ? "all" : "auto", p->fusion_kept_back);
  if (p->auto_streams_max) {
    /* --streams auto: the most streams weighed, the fastest plan on any of
     * those counts; options.streams is the count chosen. */
    ps_outbuf_printf (out,
                      "  \"streams_auto\": {\"max\": %u, \"fastest_ns\": ", p->auto_streams_max);
    ps_jsonw_number_buf (out, floor (p->auto_best_ns + 0.5));
    ps_outbuf_str (out, "},\n");
  }
  if (p->options.memory_budget) {
    /* --memory-budget: the budget, and when the plan had to move to fewer
     * streams to fit it, the count, pool and makespan it had before. */
    ps_outbuf_printf (out, "  \"memory_budget\": {\"bytes\": %" PRIu64, p->options.memory_budget);
    if (p->budget_streams_from) {
      ps_outbuf_printf (
          out, ", \"streams_from\": %u, \"pool_bytes_from\": %" PRIu64 ", \"makespan_from_ns\": ",
          p->budget_streams_from, p->budget_pool_from);
      ps_jsonw_number_buf (out, floor (p->budget_makespan_from_ns + 0.5));
    }
    ps_outbuf_str (out, "},\n");
  }
  ps_outbuf_printf (out,
                    "  \"streams\": %u, \"pool_bytes\": %" PRIu64 ", \"pool_peak\": %" PRIu64
                    ", \"pool_peak_exact\": %s, \"pool_ratio\": ",
                    p->streams_used, p->pool_bytes, pk.bytes, pk.exact ? "true" : "false");
  double ratio = ps_pool_ratio (p, &pk);
  ps_jsonw_number_buf (out, isfinite (ratio) ? floor (ratio * 10000 + 0.5) / 10000 : 0);
  ps_outbuf_str (out, ",\n  \"estimated_makespan_ns\": ");
  double ms = p->est_makespan_ns;
  ps_jsonw_number_buf (out, ms >= 0 && ms < 1e300 ? floor (ms + 0.5) : 0);
  ps_outbuf_printf (out, ",\n  \"kernels_before\": %u, \"kernels_after\": %u, \"events\": %u,\n",
                    p->kernels_before, p->kernels_after, p->n_events);

  ps_outbuf_str (out, "  \"buffers\": [");
  for (uint32_t b = 0; b < g->n_buffers; b++) {
    bool ext = g->buffers[b].flags & PS_BUF_EXTERNAL;
    ps_outbuf_str (out, b ? ",\n    {\"name\": " : "\n    {\"name\": ");
    ps_jsonw_string_buf (out, ps_buffer_name (g, b));
    ps_outbuf_str (out, ", \"bytes\": ");
    ps_outbuf_uint_left (out, g->buffers[b].bytes, 0);
    ps_outbuf_str (out, ext ? ", \"external\": true" : ", \"external\": false");
    if (!ext && p->offsets && p->offsets[b] != UINT64_MAX) {
      ps_outbuf_str (out, ", \"offset\": ");
      ps_outbuf_uint_left (out, p->offsets[b], 0);
    }
    ps_outbuf_char (out, '}');
  }
  ps_outbuf_str (out, g->n_buffers ? "\n  ],\n" : "],\n");

  ps_outbuf_str (out, "  \"steps\": [");
  for (uint32_t i = 0; i < p->n_steps; i++) {
    ps_outbuf_str (out, i ? ",\n" : "\n");
    write_step_json (p, i, out);
  }
  ps_outbuf_str (out, p->n_steps ? "\n  ]\n}\n" : "]\n}\n");
  ps_outbuf_flush (out);
  free (out);
  return ferror (file) ? PS_EIO : 0;
}

/* ---- text ---- */

static void
put_bytes (ps_outbuf *out, uint64_t bytes)
{
  char buf[PS_FORMAT_MAX];
  ps_outbuf_str (out, ps_format_bytes ((double) bytes, buf, sizeof buf));
}

static void
put_time (ps_outbuf *out, double ns)
{
  char buf[PS_FORMAT_MAX];
  ps_outbuf_str (out, ps_format_duration (ns, buf, sizeof buf));
}

/* Prints a list of names joined by sep, eliding the middle past `max`
 * names so that a line stays readable. */
static void
put_name_list (ps_outbuf *out, const ps_graph *g, const uint32_t *ids, uint32_t n, const char *sep,
               uint32_t max)
{
  uint32_t head = n > max ? max / 2 : n, tail = n > max ? max - head - 1 : 0;
  for (uint32_t k = 0; k < head; k++) {
    if (k)
      ps_outbuf_str (out, sep);
    ps_put_printable_buf (out, ids[k] < g->n_nodes ? ps_node_name (g, ids[k]) : "?");
  }
  if (n > max)
    ps_outbuf_printf (out, "%s... (%u more) ...", sep, n - head - tail);
  for (uint32_t k = n - tail; k < n; k++) {
    ps_outbuf_str (out, sep);
    ps_put_printable_buf (out, ids[k] < g->n_nodes ? ps_node_name (g, ids[k]) : "?");
  }
}

/* The critical path of the plan's run on dev, as every view shows it: the
 * simulated timeline's (ps-figures.h), from the run the planner kept when
 * dev is the plan's device, else simulated here.  Found before it is
 * printed, so that a large plan's peak (below) is sought meanwhile.  A
 * plan of CRITICAL_THREAD_MIN steps or more that kept no run (the planner
 * did not know it final: its peak is not sought yet either) is simulated
 * on a second thread while its steps are written, which reads the plan
 * only (1M-node fanout: `plan`'s output 0.30 -> 0.25 s); one that kept
 * its run leaves the second core to the search for its peak, begun with
 * the steps, which the summary waits for (1M-node layered: the output
 * 0.37 s, 0.55 s with the diagnosis on a thread of its own), unless the
 * peak is known already (the memory pass found its pool at the bound):
 * then its path is found on the second thread all the same. */
#define CRITICAL_THREAD_MIN 65536u

typedef struct critical {
  const ps_plan *p;
  const ps_device *dev;
  ps_timeline tl;
  bool borrowed; /* tl is the plan's kept run */
  ps_diagnosis dg;
  ps_figures f;
  bool ok;
  ps__job job;
} critical;

static void
critical_main (void *arg)
{
  critical *c = arg;
  const ps_plan *p = c->p;
  c->ok = (c->borrowed || ps_simulate (p, c->dev, &c->tl) == 0)
          && ps_diagnose_path (&c->dg, &c->tl) == 0 && ps_figures_build (&c->f, p, &c->tl, &c->dg) == 0;
}

/* Starts finding it; critical_wait gives it. */
static void
critical_start (critical *c, const ps_plan *p, const ps_device *dev)
{
  memset (c, 0, sizeof *c);
  c->p = p;
  c->dev = dev;
  ps_timeline_init (&c->tl, PS_TL_SIMULATED);
  c->borrowed = dev == &p->device && ps__plan_run_view (p, &c->tl);
  ps__job_start (&c->job, critical_main, c,
                 (!c->borrowed || p->pool_peak_known) && p->n_steps >= CRITICAL_THREAD_MIN);
}

static void
critical_wait (critical *c)
{
  if (!ps__job_finish (&c->job))
    critical_main (c);
}

static void
critical_free (critical *c)
{
  ps__job_drop (&c->job); /* not waited for when the summary was not reached */
  ps_figures_free (&c->f);
  ps_diagnosis_free (&c->dg);
  if (!c->borrowed)
    ps_timeline_free (&c->tl);
}

static void
put_critical (ps_outbuf *out, const ps_plan *p, const critical *c)
{
  const ps_figures *f = &c->f;
  if (c->ok && f->n_critical > 0) {
    ps_outbuf_str (out, "  critical path   ");
    put_name_list (out, p->graph, f->critical, f->n_critical, " -> ", 12);
    char text[160];
    ps_outbuf_printf (out, " (%s)\n", ps_figures_critical_text (f, text, sizeof text));
  }
  /* Durations the model guessed or cannot know are said once here. */
  uint32_t kernels = 0, by_source[PS_FIGURE__COUNT] = { 0 };
  for (uint32_t v = 0; v < f->n_nodes; v++)
    if (p->graph->nodes[v].op == PS_OP_KERNEL) {
      kernels++;
      by_source[f->node_source[v] < PS_FIGURE__COUNT ? f->node_source[v] : PS_FIGURE_NONE]++;
    }
  const char *hint = p->graph->cuda_graph ? "; `planscope-cli import DUMP --durations TRACE` "
                                            "measures them"
                                          : "";
  if (by_source[PS_FIGURE_ESTIMATED])
    ps_outbuf_printf (out,
                      "  durations       %u of %u kernels estimated from their launch alone%s\n",
                      by_source[PS_FIGURE_ESTIMATED], kernels, hint);
  if (by_source[PS_FIGURE_UNKNOWN])
    ps_outbuf_printf (out,
                      "  durations       %u of %u kernels unknown (nothing says how long they "
                      "take), counted as 0 ns%s\n",
                      by_source[PS_FIGURE_UNKNOWN], kernels, hint);
}

/* ---- the peak, meanwhile ---- */

/* Plans with at least PS__PEAK_THREAD_MIN buffers whose peak is neither
 * kept nor being sought already (ps-pool-peak.h) seek it on a second
 * thread while the steps are written; smaller ones, or when no thread can
 * start, seek it when the summary needs it. */
static bool
peak_start (struct ps__plan_peak *j, const ps_plan *p)
{
  return !p->pool_peak_known && !p->peak && p->graph->n_buffers >= PS__PEAK_THREAD_MIN
         && ps__peak_seek_start (j, p, false);
}

/* What a step is called in a "after X" note: its fused kernel name, or its
 * last node. */
static void
put_step_label (ps_outbuf *out, const ps_plan *p, uint32_t s)
{
  const ps_step *st = &p->steps[s];
  const char *fn = ps__plan_str (p, st->function);
  if (st->nodes_count > 1 && fn)
    ps_put_printable_buf (out, fn);
  else if (st->nodes_count > 0)
    put_name_list (out, p->graph, p->step_nodes + st->nodes_begin + st->nodes_count - 1, 1, "",
                   1);
}

static void
put_wait_source (ps_outbuf *out, const ps_plan *p, const uint32_t *link, uint32_t s)
{
  uint32_t r = link[s];
  if (r == PS_NONE) {
    ps_outbuf_str (out, "never recorded before");
    return;
  }
  ps_outbuf_printf (out, "from stream %u: ", p->steps[r].stream);
  if (link[r] == PS_NONE) {
    ps_outbuf_str (out, "at its start");
  } else {
    ps_outbuf_str (out, "after ");
    put_step_label (out, p, link[r]);
  }
}

static void
put_user_event (ps_outbuf *out, const ps_graph *g, uint32_t e)
{
  ps_outbuf_str (out, "event \"");
  if (e < g->n_events && g->event_names)
    ps_put_printable_buf (out, ps_graph_str (g, g->event_names[e]));
  ps_outbuf_printf (out, "\" e%u", e);
}

static void
write_step_text (ps_outbuf *out, const ps_plan *p, const uint32_t *link, uint32_t s, int width)
{
  const ps_graph *g = p->graph;
  const ps_step *st = &p->steps[s];
  const uint32_t *nodes = p->step_nodes + st->nodes_begin;
  uint32_t v = st->nodes_count ? nodes[0] : PS_NONE;
  const ps_node *n = v < g->n_nodes ? &g->nodes[v] : NULL;
  ps_outbuf_str (out, "  #");
  ps_outbuf_uint_left (out, s, width);
  ps_outbuf_str (out, "  ");
  ps_format_column_buf (out, ps_op_short_name ((ps_op) st->op), -7);
  ps_outbuf_char (out, ' ');
  const char *fn = ps__plan_str (p, st->function);

  if (st->op == PS_OP_EVENT_RECORD || st->op == PS_OP_EVENT_WAIT) {
    bool wait = st->op == PS_OP_EVENT_WAIT;
    if (!n) {
      ps_outbuf_printf (out, "e%u", st->event);
      if (wait) {
        ps_outbuf_str (out, " (");
        put_wait_source (out, p, link, s);
        if (st->wait == PS_WAIT_ORDER) {
          ps_outbuf_str (out, st->wait == PS_WAIT_ORDER ? "; resource order" : "; pool reuse");
          if (st->dep_node < g->n_nodes) {
            ps_outbuf_str (out, ", depends on ");
            ps_put_printable_buf (out, ps_node_name (g, st->dep_node));
          } else {
            ps_outbuf_str (out, ", no dependency");
          }
        }
        ps_outbuf_char (out, ')');
      }
    } else {
      ps_put_printable_buf (out, ps_node_name (g, v));
      ps_outbuf_str (out, " (");
      put_user_event (out, g, st->event);
      if (wait) {
        ps_outbuf_str (out, ", ");
        put_wait_source (out, p, link, s);
      }
      ps_outbuf_char (out, ')');
    }
  } else if (st->nodes_count > 1) {
    ps_put_printable_buf (out, fn ? fn : "fused");
    ps_outbuf_str (out, " = ");
    put_name_list (out, g, nodes, st->nodes_count, " + ", 12);
  } else if (n) {
    ps_put_printable_buf (out, ps_node_name (g, v));
    switch ((ps_op) st->op) {
    case PS_OP_KERNEL:
      if (fn) {
        ps_outbuf_str (out, " [");
        ps_put_printable_buf (out, fn);
        ps_outbuf_char (out, ']');
      }
      break;
    case PS_OP_MEMCPY:
      ps_outbuf_printf (out, " [%s",
                        n->dir < PS_COPY__COUNT ? ps_copy_dir_name ((ps_copy_dir) n->dir) : "?");
      if (n->bytes) {
        ps_outbuf_char (out, ' ');
        put_bytes (out, n->bytes);
      }
      ps_outbuf_char (out, ']');
      break;
    case PS_OP_MEMSET:
      if (n->bytes) {
        ps_outbuf_str (out, " [");
        put_bytes (out, n->bytes);
        ps_outbuf_char (out, ']');
      }
      break;
    case PS_OP_HOST:
      if (n->aux != PS_NONE && n->aux < g->strings_len) {
        ps_outbuf_str (out, " [");
        ps_put_printable_buf (out, ps_graph_str (g, n->aux));
        ps_outbuf_char (out, ']');
      }
      break;
    case PS_OP_CONDITIONAL: {
      char what[PS_MAX_NAME + 64];
      ps_outbuf_str (out, " [");
      ps_put_printable_buf (out, ps_cond_text (g, v, what, sizeof what));
      ps_outbuf_char (out, ']');
      break;
    }
    default:
      break;
    }
  }
  ps_outbuf_char (out, '\n');
}

int
ps_plan_write_text (const ps_plan *p, FILE *file)
{
  if (!p || !p->graph || !file)
    return PS_EINVAL;
  const ps_graph *g = p->graph;
  uint32_t N = p->n_steps, S = p->streams_used;
  for (uint32_t i = 0; i < N; i++)
    if (p->steps[i].stream + 1u > S)
      S = p->steps[i].stream + 1u;

  /* link[record] = the last step with nodes before it on its stream;
   * link[wait] = the most recent record of its event issued before it. */
  uint32_t *link = malloc ((N ? N : 1) * sizeof *link);
  uint32_t *order = malloc ((N ? N : 1) * sizeof *order);
  uint32_t *start = calloc ((size_t) S + 1, sizeof *start);
  uint32_t *last_work = malloc ((S ? S : 1) * sizeof *last_work);
  uint32_t *last_rec = malloc ((p->n_events ? p->n_events : 1) * sizeof *last_rec);
  ps_outbuf *out = malloc (sizeof *out);
  if (out)
    ps_outbuf_init (out, file);
  int rc = 0;
  struct ps__plan_peak peak;
  bool seeking = peak_start (&peak, p);
  critical crit;
  bool have_crit = false;
  if (!link || !order || !start || !last_work || !last_rec || !out) {
    rc = PS_ENOMEM;
    goto out;
  }
  /* Both from the device model the plan was scheduled for. */
  const ps_device *dev = p->device.sm_count ? &p->device : ps_device_builtin (0);
  critical_start (&crit, p, dev);
  have_crit = true;
  for (uint32_t t = 0; t < S; t++)
    last_work[t] = PS_NONE;
  for (uint32_t e = 0; e < p->n_events; e++)
    last_rec[e] = PS_NONE;
  for (uint32_t i = 0; i < N; i++) {
    const ps_step *st = &p->steps[i];
    bool ev = st->event < p->n_events;
    link[i] = PS_NONE;
    if (st->op == PS_OP_EVENT_RECORD) {
      link[i] = last_work[st->stream];
      if (ev)
        last_rec[st->event] = i;
    } else if (st->op == PS_OP_EVENT_WAIT && ev) {
      link[i] = last_rec[st->event];
    }
    if (st->nodes_count > 0)
      last_work[st->stream] = i;
    start[st->stream + 1]++;
  }
  for (uint32_t t = 0; t < S; t++)
    start[t + 1] += start[t];
  for (uint32_t i = 0; i < N; i++)
    order[start[p->steps[i].stream]++] = i;
  /* start[t] is now the end of stream t's run, i.e. the start of t + 1. */

  int width = 1;
  for (uint32_t x = N > 0 ? N - 1 : 0; x >= 10; x /= 10)
    width++;

  ps_outbuf_str (out, "plan");
  if (g->name && g->name[0]) {
    ps_outbuf_str (out, " for \"");
    ps_put_printable_buf (out, g->name);
    ps_outbuf_char (out, '"');
  }
  ps_outbuf_str (out, ": ");
  ps_outbuf_printf (out, "%u nodes, %u buffers, %u steps (--streams %s%u, fusion %s)\n", g->n_nodes,
                    g->n_buffers, N, p->auto_streams_max ? "auto: " : "", p->options.streams,
                    !p->options.fusion      ? "off"
                    : p->options.fusion_all ? "on, every group"
                                            : "on");

  for (uint32_t t = 0, i = 0; t < S; t++) {
    uint32_t end = start[t];
    if (i == end)
      continue;
    ps_outbuf_printf (out, "\nstream %u (%u step%s)\n", t, end - i, end - i == 1 ? "" : "s");
    for (; i < end; i++)
      write_step_text (out, p, link, order[i], width);
  }

  ps_outbuf_str (out, "\nsummary\n");
  ps_outbuf_printf (out, "  streams used    %u of %u", p->streams_used, p->options.streams);
  if (p->auto_streams_max) {
    /* How --streams auto chose: the fastest plan on any count it weighed. */
    ps_outbuf_printf (out,
                      " (auto: the fewest streams within 1%% of the fastest plan on up to %u, ",
                      p->auto_streams_max);
    put_time (out, p->auto_best_ns);
    ps_outbuf_char (out, ')');
  }
  ps_outbuf_printf (out, "\n  kernels         %u -> %u %s", p->kernels_before, p->kernels_after,
                    p->options.fusion ? "after fusion" : "(fusion off)");
  if (p->fusion_kept_back)
    ps_outbuf_printf (out, " (%u fused group%s kept back: the plan simulates faster without %s)",
                      p->fusion_kept_back, p->fusion_kept_back == 1 ? "" : "s",
                      p->fusion_kept_back == 1 ? "it" : "them");
  ps_outbuf_char (out, '\n');
  uint32_t user = g->n_events < p->n_events ? g->n_events : p->n_events;
  ps_outbuf_printf (out, "  events          %u (%u user, %u inserted; %u cross-stream wait%s)\n",
                    p->n_events, user, p->n_events - user, p->n_event_pairs,
                    p->n_event_pairs == 1 ? "" : "s");
  critical_wait (&crit);
  char pool[PS_POOL_TEXT_MAX];
  ps_pool_peak pk;
  rc = seeking ? ps__peak_seek_wait (&peak, &pk) : ps_pool_peak_of (p, &pk);
  seeking = false;
  if (rc < 0)
    goto out;
  ps_outbuf_printf (out, "  pool            %s\n", ps_pool_text (p, &pk, pool, sizeof pool));
  /* The memory pass adds no waits (ps-plan.h): say so; a memory budget
   * trades time for memory by streams instead, and says what it cost. */
  ps_outbuf_str (
      out, "  pool waits      none (bytes are shared only between buffers whose uses the plan "
           "already orders)\n");
  if (p->options.memory_budget) {
    char b[PS_FORMAT_MAX], x[PS_FORMAT_MAX];
    ps_outbuf_printf (out, "  memory budget   %s: ",
                      ps_format_bytes ((double) p->options.memory_budget, b, sizeof b));
    if (!p->budget_streams_from) {
      ps_outbuf_str (out, "the pool fits\n");
    } else {
      ps_outbuf_printf (
          out, "planned on %u stream%s instead of %u, pool %s instead of %s, makespan ",
          p->options.streams, p->options.streams == 1 ? "" : "s", p->budget_streams_from,
          ps_format_bytes ((double) p->pool_bytes, b, sizeof b),
          ps_format_bytes ((double) p->budget_pool_from, x, sizeof x));
      put_time (out, p->est_makespan_ns);
      ps_outbuf_str (out, " instead of ");
      put_time (out, p->budget_makespan_from_ns);
      double from = p->budget_makespan_from_ns;
      if (from > 0)
        ps_outbuf_printf (out, " (%+.1f%%)", 100 * (p->est_makespan_ns - from) / from);
      ps_outbuf_char (out, '\n');
    }
  }
  ps_outbuf_str (out, "  est. makespan   ");
  put_time (out, p->est_makespan_ns);
  ps_outbuf_printf (out, " on %s (%s)\n", dev->name,
                    p->est_simulated ? "simulated" : "list schedule; simulate refines it");

  put_critical (out, p, &crit);
out:
  if (seeking) /* the summary was not reached */
    ps__plan_peak_stop (&peak);
  if (have_crit)
    critical_free (&crit);
  free (link);
  free (order);
  free (start);
  free (last_work);
  free (last_rec);
  if (out)
    ps_outbuf_flush (out);
  free (out);
  if (rc == 0 && ferror (file))
    rc = PS_EIO;
  return rc;
}
