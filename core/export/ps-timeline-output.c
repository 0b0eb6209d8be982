/* ps-timeline-output.c: the timeline document ("planscope-timeline", see
 * spec/cli.md) and the human report of a timeline and its diagnosis. */
#include "ps-timeline-output.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ps-format.h"
#include "ps-jsonw.h"
#include "util/ps-outbuf.h"

static void
num (ps_outbuf *out, double ns)
{
  ps_jsonw_number_buf (out, isfinite (ns) ? round (ns) : 0);
}

static int64_t
stream_id (const ps_timeline *tl, uint32_t s)
{
  return s < tl->n_streams ? tl->streams[s].id : -1;
}

/* The names of a span's work: its nodes, or its own name. */
static void
span_names (ps_outbuf *out, const ps_timeline *tl, uint32_t x, bool *first)
{
  const ps_span *s = &tl->spans[x];
  if (s->nodes_count && tl->graph) {
    for (uint32_t i = 0; i < s->nodes_count; i++) {
      uint32_t v = tl->span_nodes[s->nodes_begin + i];
      ps_outbuf_str (out, *first ? "" : ", ");
      ps_jsonw_string_buf (out, v < tl->graph->n_nodes ? ps_node_name (tl->graph, v) : "?");
      *first = false;
    }
  } else {
    ps_outbuf_str (out, *first ? "" : ", ");
    ps_jsonw_string_buf (out, ps_timeline_span_name (tl, x));
    *first = false;
  }
}

/* The cause of wait i: its kind of cause, the work to blame, what the
 * cause costs, and the sentence that says it. */
static void
write_wait_cause (ps_outbuf *out, const ps_timeline *tl, const ps_diagnosis *dg, uint32_t i)
{
  const ps_wait *w = &dg->waits[i];
  ps_outbuf_str (out, ", \"cause\": ");
  ps_jsonw_string_buf (out, ps_cause_name ((ps_cause) w->cause));
  if (w->culprit < tl->n_spans) {
    ps_outbuf_str (out, ", \"culprit\": [");
    bool f = true;
    span_names (out, tl, w->culprit, &f);
    ps_outbuf_str (out, "]");
  }
  if (w->via < tl->n_spans && w->via != w->culprit) {
    ps_outbuf_str (out, ", \"via\": [");
    bool f = true;
    span_names (out, tl, w->via, &f);
    ps_outbuf_str (out, "]");
  }
  if (w->dep < tl->n_spans) {
    ps_outbuf_str (out, ", \"depends_on\": [");
    bool f = true;
    span_names (out, tl, w->dep, &f);
    ps_outbuf_str (out, "]");
  }
  if (tl->graph && w->buffer < tl->graph->n_buffers && w->shared_with < tl->graph->n_buffers) {
    ps_outbuf_str (out, ", \"pool_shares\": [");
    ps_jsonw_string_buf (out, ps_buffer_name (tl->graph, w->buffer));
    ps_outbuf_str (out, ", ");
    ps_jsonw_string_buf (out, ps_buffer_name (tl->graph, w->shared_with));
    ps_outbuf_str (out, "]");
  }
  ps_outbuf_str (out, ", \"cost_ns\": ");
  num (out, w->cost_ns);
  char text[1024];
  ps_outbuf_str (out, ", \"why\": ");
  ps_jsonw_string_buf (out, ps_diagnose_wait_text (tl, dg, i, text, sizeof text));
}

static const char *
help_kind_name (ps_help_kind k)
{
  switch (k) {
  case PS_HELP_SHORTEN:
    return "shorten";
  case PS_HELP_LAUNCH_BOUND:
    return "launch_bound";
  case PS_HELP_IDLE_STREAM:
    return "idle_stream";
  case PS_HELP_STALLS:
  default:
    return "stalls";
  }
}

static void
timeline_json (const ps_timeline *tl, const ps_diagnosis *dg, ps_outbuf *out)
{
  ps_outbuf_printf (out,
                    "{\n  \"format\": \"planscope-timeline\", \"version\": 1, \"source\": \"%s\",",
                    ps_timeline_source_name (tl->source));
  ps_outbuf_str (out, " \"device\": ");
  ps_jsonw_string_buf (out, tl->device);
  if (tl->source == PS_TL_MEASURED)
    ps_outbuf_printf (out, ", \"iterations\": %u", tl->iterations);
  ps_outbuf_str (out, ",\n  \"makespan_ns\": ");
  num (out, tl->makespan_ns);
  ps_outbuf_printf (out, ", \"event_waits\": %u", tl->event_waits);

  ps_outbuf_str (out, ",\n  \"streams\": [");
  for (uint32_t q = 0; q < tl->n_streams; q++) {
    ps_outbuf_printf (out, "%s\n    {\"stream\": %lld", q ? "," : "",
                      (long long) stream_id (tl, q));
    if (tl->streams[q].device >= 0)
      ps_outbuf_printf (out, ", \"device\": %d", tl->streams[q].device);
    if (dg && q < dg->n_streams) {
      const ps_stream_stats *s = &dg->streams[q];
      ps_outbuf_str (out, ", \"busy_ns\": ");
      num (out, s->busy_ns);
      ps_outbuf_str (out, ", \"stalled_ns\": ");
      num (out, s->stalled_ns);
      ps_outbuf_str (out, ", \"idle_ns\": ");
      num (out, s->idle_ns);
      ps_outbuf_printf (out, ", \"spans\": %u, \"stalls\": %u", s->spans, s->stalls);
    }
    ps_outbuf_str (out, "}");
  }
  ps_outbuf_str (out, "\n  ],\n  \"spans\": [");
  /* Spans in stream order, each stream by start time. */
  bool first_span = true;
  for (uint32_t q = 0; q < tl->n_streams; q++)
    for (uint32_t k = tl->stream_off[q]; k < tl->stream_off[q + 1]; k++) {
      uint32_t x = tl->by_stream[k];
      const ps_span *s = &tl->spans[x];
      ps_outbuf_printf (out, "%s\n    {", first_span ? "" : ",");
      first_span = false;
      if (s->step != PS_NONE)
        ps_outbuf_printf (out, "\"step\": %u, ", s->step);
      ps_outbuf_printf (out, "\"stream\": %lld, \"kind\": \"%s\", ", (long long) stream_id (tl, q),
                        ps_span_kind_name ((ps_span_kind) s->kind));
      if (s->nodes_count && tl->graph) {
        ps_outbuf_str (out, "\"nodes\": [");
        bool f = true;
        span_names (out, tl, x, &f);
        ps_outbuf_str (out, "]");
      } else {
        ps_outbuf_str (out, "\"name\": ");
        ps_jsonw_string_buf (out, ps_timeline_span_name (tl, x));
      }
      ps_outbuf_str (out, ", \"start_ns\": ");
      num (out, s->start_ns);
      ps_outbuf_str (out, ", \"end_ns\": ");
      num (out, s->end_ns);
      if (s->correlation)
        ps_outbuf_printf (out, ", \"correlation\": %llu", (unsigned long long) s->correlation);
      ps_outbuf_str (out, "}");
    }

  ps_outbuf_str (out, "\n  ],\n  \"stalls\": [");
  for (uint32_t i = 0; i < tl->n_stalls; i++) {
    const ps_stall *sl = &tl->stalls[i];
    ps_outbuf_printf (out, "%s\n    {\"stream\": %lld", i ? "," : "",
                      (long long) stream_id (tl, sl->stream));
    if (sl->step != PS_NONE)
      ps_outbuf_printf (out, ", \"step\": %u", sl->step);
    ps_outbuf_str (out, ", \"start_ns\": ");
    num (out, sl->start_ns);
    ps_outbuf_str (out, ", \"end_ns\": ");
    num (out, sl->end_ns);
    ps_outbuf_str (out, ", \"waiting_for\": ");
    if (sl->waiting_for < tl->n_spans) {
      const ps_span *w = &tl->spans[sl->waiting_for];
      if (w->nodes_count && tl->graph) {
        uint32_t v = tl->span_nodes[w->nodes_begin + w->nodes_count - 1];
        ps_jsonw_string_buf (out, v < tl->graph->n_nodes ? ps_node_name (tl->graph, v) : "?");
      } else {
        ps_jsonw_string_buf (out, ps_timeline_span_name (tl, sl->waiting_for));
      }
    } else {
      ps_outbuf_str (out, "null");
    }
    if (sl->on_stream < tl->n_streams)
      ps_outbuf_printf (out, ", \"on_stream\": %lld", (long long) stream_id (tl, sl->on_stream));
    else
      ps_outbuf_str (out, ", \"on_stream\": null");
    if (sl->event >= 0)
      ps_outbuf_printf (out, ", \"event\": %lld", (long long) sl->event);
    if (dg && dg->chain_off) {
      ps_outbuf_str (out, ", \"causes\": [");
      bool f = true;
      for (uint32_t c = dg->chain_off[i]; c < dg->chain_off[i + 1]; c++)
        span_names (out, tl, dg->chain[c], &f);
      ps_outbuf_str (out, "]");
    }
    if (dg && i < dg->n_waits)
      write_wait_cause (out, tl, dg, i);
    ps_outbuf_str (out, "}");
  }
  ps_outbuf_str (out, "\n  ]");

  if (dg) {
    /* Every wait: the stalls again, then waits for resources and the host. */
    ps_outbuf_str (out, ",\n  \"waits\": [");
    for (uint32_t i = 0; i < dg->n_waits; i++) {
      const ps_wait *w = &dg->waits[i];
      static const char *const kinds[] = { "event", "resource", "host" };
      ps_outbuf_printf (out, "%s\n    {\"kind\": \"%s\", \"stream\": %lld", i ? "," : "",
                        w->kind < 3 ? kinds[w->kind] : "?", (long long) stream_id (tl, w->stream));
      ps_outbuf_str (out, ", \"start_ns\": ");
      num (out, w->start_ns);
      ps_outbuf_str (out, ", \"end_ns\": ");
      num (out, w->end_ns);
      if (w->span < tl->n_spans) {
        ps_outbuf_str (out, ", \"work\": [");
        bool f = true;
        span_names (out, tl, w->span, &f);
        ps_outbuf_str (out, "]");
      }
      write_wait_cause (out, tl, dg, i);
      ps_outbuf_str (out, "}");
    }
    ps_outbuf_str (out, "\n  ]");
    ps_outbuf_str (out, ",\n  \"critical_path\": [");
    bool f = true;
    for (uint32_t i = 0; i < dg->n_critical; i++)
      span_names (out, tl, dg->critical[i], &f);
    ps_outbuf_str (out, "],\n  \"critical_work_ns\": ");
    num (out, dg->critical_work_ns);
    ps_outbuf_str (out, ", \"host_bound_ns\": ");
    num (out, dg->host_bound_ns);
    ps_outbuf_str (out, ",\n  \"help\": [");
    for (uint32_t i = 0; i < dg->n_help; i++) {
      const ps_help *h = &dg->help[i];
      ps_outbuf_printf (out, "%s\n    {\"kind\": \"%s\"", i ? "," : "",
                        help_kind_name ((ps_help_kind) h->kind));
      switch ((ps_help_kind) h->kind) {
      case PS_HELP_SHORTEN: {
        ps_outbuf_str (out, ", \"work\": [");
        bool ff = true;
        span_names (out, tl, h->span, &ff);
        ps_outbuf_str (out, "]");
        const char *fn = ps_timeline_span_function (tl, h->span);
        if (fn) {
          ps_outbuf_str (out, ", \"function\": ");
          ps_jsonw_string_buf (out, fn);
        }
        ps_outbuf_printf (out, ", \"count\": %u, \"critical_ns\": ", h->count);
        num (out, h->ns);
        if (h->gain_ns >= 0) {
          ps_outbuf_str (out, ", \"halving_saves_ns\": ");
          num (out, h->gain_ns);
        }
        break;
      }
      case PS_HELP_LAUNCH_BOUND:
        ps_outbuf_str (out, ", \"host_bound_ns\": ");
        num (out, h->ns);
        break;
      case PS_HELP_IDLE_STREAM:
        ps_outbuf_printf (
            out, ", \"stream\": %lld, \"idle_ns\": ", (long long) stream_id (tl, h->stream));
        num (out, h->ns);
        break;
      case PS_HELP_STALLS:
      default:
        ps_outbuf_printf (
            out, ", \"stream\": %lld, \"stalled_ns\": ", (long long) stream_id (tl, h->stream));
        num (out, h->ns);
        if (h->on_stream < tl->n_streams)
          ps_outbuf_printf (out, ", \"on_stream\": %lld", (long long) stream_id (tl, h->on_stream));
        break;
      }
      ps_outbuf_str (out, "}");
    }
    ps_outbuf_str (out, "\n  ]");
  }
  ps_outbuf_str (out, "\n}\n");
}

/* A duration for people (ps-format.h). */
static const char *
dur (char *buf, size_t cap, double ns)
{
  return ps_format_duration (ns, buf, cap);
}

static const char *
bound_text (ps_bound b)
{
  switch (b) {
  case PS_BOUND_STREAM:
    return "stream order";
  case PS_BOUND_EVENT:
    return "event wait";
  case PS_BOUND_HOST:
    return "issued late by the host";
  case PS_BOUND_HOST_WAIT:
    return "host synchronised on it";
  case PS_BOUND_START:
    return "start of run";
  case PS_BOUND_RESOURCE:
    return "waited for the GPU to free up";
  default:
    return "?";
  }
}

static void
print_span (ps_outbuf *out, const ps_timeline *tl, uint32_t x)
{
  char label[512];
  ps_timeline_span_label (tl, x, label, sizeof label);
  /* Mangled C++ kernel names run to thousands of characters. */
  if (strlen (label) > 100) {
    size_t cut = 97;
    while (cut > 0 && ((unsigned char) label[cut] & 0xc0) == 0x80)
      cut--;
    strcpy (label + cut, "...");
  }
  ps_put_printable_buf (out, label);
}

static void
timeline_text (const ps_timeline *tl, const ps_diagnosis *dg, ps_outbuf *out)
{
  char a[PS_FORMAT_MAX], b[PS_FORMAT_MAX], c[PS_FORMAT_MAX], sl_[64], sl2[64];
  ps_outbuf_printf (out, "%s timeline on ", ps_timeline_source_name (tl->source));
  ps_put_printable_buf (out, tl->device[0] ? tl->device : "?");
  ps_outbuf_printf (out, ": makespan %s, %u spans on %u streams, %u event waits, %u stalls\n",
                    dur (a, sizeof a, tl->makespan_ns), tl->n_spans, tl->n_streams, tl->event_waits,
                    tl->n_stalls);
  if (dg) {
    ps_outbuf_printf (out, "\n%-22s %12s %12s %12s %8s\n", "stream", "busy", "stalled", "idle",
                      "spans");
    for (uint32_t q = 0; q < dg->n_streams; q++) {
      const ps_stream_stats *s = &dg->streams[q];
      ps_timeline_stream_label (tl, q, sl_, sizeof sl_);
      ps_format_column_buf (out, sl_, -22);
      ps_outbuf_char (out, ' ');
      ps_format_column_buf (out, dur (a, sizeof a, s->busy_ns), 12);
      ps_outbuf_char (out, ' ');
      ps_format_column_buf (out, dur (b, sizeof b, s->stalled_ns), 12);
      ps_outbuf_char (out, ' ');
      ps_format_column_buf (out, dur (c, sizeof c, s->idle_ns), 12);
      ps_outbuf_printf (out, " %8u\n", s->spans);
    }
  }
  if (tl->n_stalls) {
    ps_outbuf_printf (out, "\nstalls:\n");
    uint32_t shown = 0;
    for (uint32_t i = 0; i < tl->n_stalls; i++) {
      const ps_stall *s = &tl->stalls[i];
      if (shown == 50) {
        ps_outbuf_printf (out, "  ... %u more (see --json)\n", tl->n_stalls - shown);
        break;
      }
      shown++;
      ps_timeline_stream_label (tl, s->stream, sl_, sizeof sl_);
      ps_outbuf_printf (out, "  %s at %s", sl_, dur (a, sizeof a, s->start_ns));
      if (s->step != PS_NONE)
        ps_outbuf_printf (out, " (step %u)", s->step);
      if (dg && i < dg->n_waits) {
        char text[1024];
        ps_outbuf_str (out, ": ");
        ps_put_printable_buf (out, ps_diagnose_wait_text (tl, dg, i, text, sizeof text));
      } else {
        ps_outbuf_printf (out, ": waits %s", dur (b, sizeof b, s->end_ns - s->start_ns));
        if (s->waiting_for < tl->n_spans) {
          ps_outbuf_str (out, " for ");
          print_span (out, tl, s->waiting_for);
        }
      }
      ps_outbuf_char (out, '\n');
      if (dg && dg->chain_off && dg->chain_off[i + 1] - dg->chain_off[i] > 1) {
        ps_outbuf_str (out, "    chain: ");
        for (uint32_t k = dg->chain_off[i]; k < dg->chain_off[i + 1]; k++) {
          uint32_t x = dg->chain[k];
          if (k > dg->chain_off[i])
            ps_outbuf_str (out, " <- ");
          print_span (out, tl, x);
          ps_outbuf_printf (out, " (%s)", bound_text ((ps_bound) dg->bound[x]));
        }
        ps_outbuf_char (out, '\n');
      }
    }
  }
  if (dg && dg->n_waits > tl->n_stalls) {
    /* The other waits, longest first (at most ten). */
    uint32_t shown[10], n_shown = 0;
    double total = 0;
    for (uint32_t i = tl->n_stalls; i < dg->n_waits; i++) {
      const ps_wait *w = &dg->waits[i];
      double len = w->end_ns - w->start_ns;
      total += len;
      uint32_t pos = n_shown < 10 ? n_shown++ : 10;
      while (pos > 0 && dg->waits[shown[pos - 1]].end_ns - dg->waits[shown[pos - 1]].start_ns
                          < len) {
        if (pos < 10)
          shown[pos] = shown[pos - 1];
        pos--;
      }
      if (pos < 10)
        shown[pos] = i;
    }
    ps_outbuf_printf (out, "\nwaits for the SMs, copy engines and the host: %u, %s in all\n",
                      dg->n_waits - tl->n_stalls, dur (a, sizeof a, total));
    for (uint32_t k = 0; k < n_shown; k++) {
      const ps_wait *w = &dg->waits[shown[k]];
      char text[1024];
      ps_timeline_stream_label (tl, w->stream, sl_, sizeof sl_);
      ps_outbuf_printf (out, "  %s at %s: ", sl_, dur (a, sizeof a, w->start_ns));
      ps_put_printable_buf (out, ps_diagnose_wait_text (tl, dg, shown[k], text, sizeof text));
      ps_outbuf_char (out, '\n');
    }
  }
  if (dg && dg->n_critical) {
    ps_outbuf_printf (out, "\ncritical path: %u spans, %s of work, %s waiting for the host\n",
                      dg->n_critical, dur (a, sizeof a, dg->critical_work_ns),
                      dur (b, sizeof b, dg->host_bound_ns));
    for (uint32_t i = 0; i < dg->n_critical; i++) {
      if (dg->n_critical > 24 && i == 10) {
        ps_outbuf_printf (out, "  ... %u more ...\n", dg->n_critical - 20);
        i = dg->n_critical - 10;
      }
      uint32_t x = dg->critical[i];
      const ps_span *s = &tl->spans[x];
      ps_timeline_stream_label (tl, s->stream, sl_, sizeof sl_);
      ps_outbuf_str (out, "  ");
      ps_format_column_buf (out, dur (a, sizeof a, s->start_ns), 10);
      ps_outbuf_str (out, "  ");
      ps_format_column_buf (out, sl_, -12);
      ps_outbuf_char (out, ' ');
      print_span (out, tl, x);
      ps_outbuf_printf (out, "  [%s; %s]\n", ps_timeline_span_duration_text (tl, x, b, sizeof b),
                        bound_text ((ps_bound) dg->bound[x]));
    }
  }
  if (dg && dg->n_help) {
    ps_outbuf_printf (out, "\nwhat would help:\n");
    for (uint32_t i = 0; i < dg->n_help; i++) {
      const ps_help *h = &dg->help[i];
      ps_outbuf_str (out, "  - ");
      switch ((ps_help_kind) h->kind) {
      case PS_HELP_SHORTEN: {
        const char *fn = ps_timeline_span_function (tl, h->span);
        if (h->count > 1 && fn) {
          ps_outbuf_str (out, "shorten kernel ");
          ps_put_printable_buf (out, fn);
        } else {
          ps_outbuf_str (out, "shorten ");
          print_span (out, tl, h->span);
        }
        ps_outbuf_printf (out, ": %s on the critical path", dur (a, sizeof a, h->ns));
        if (h->count > 1)
          ps_outbuf_printf (out, " (%u launches)", h->count);
        if (h->gain_ns >= 0)
          ps_outbuf_printf (out, "; halving it saves %s", dur (b, sizeof b, h->gain_ns));
        break;
      }
      case PS_HELP_LAUNCH_BOUND:
        ps_outbuf_printf (out,
                          "launch-bound: %s of the critical path waits for the host to issue work; "
                          "%s, larger kernels would help",
                          dur (a, sizeof a, h->ns),
                          tl->graph && tl->graph->cuda_graph ? "fusion or fewer"
                                                             : "a CUDA graph, fusion or fewer");
        break;
      case PS_HELP_IDLE_STREAM:
        ps_timeline_stream_label (tl, h->stream, sl_, sizeof sl_);
        ps_outbuf_printf (out, "%s sits idle %.0f%% of the run: it has little independent work",
                          sl_, 100 * h->ns / (tl->makespan_ns > 0 ? tl->makespan_ns : 1));
        break;
      case PS_HELP_STALLS:
      default:
        ps_timeline_stream_label (tl, h->stream, sl_, sizeof sl_);
        ps_outbuf_printf (out, "%s stalls %s (%u waits)", sl_, dur (a, sizeof a, h->ns), h->count);
        if (h->on_stream < tl->n_streams) {
          ps_timeline_stream_label (tl, h->on_stream, sl2, sizeof sl2);
          ps_outbuf_printf (out, ", mostly on %s: shorten that stream's work before the event",
                            sl2);
        }
        break;
      }
      ps_outbuf_char (out, '\n');
    }
  }
}

/* Both written through a buffer of their own (util/ps-outbuf.h): a 1M-node
 * timeline's spans are 117 MB of JSON. */
static int
through (FILE *file, const ps_timeline *tl, const ps_diagnosis *dg,
         void (*write) (const ps_timeline *, const ps_diagnosis *, ps_outbuf *))
{
  ps_outbuf *out = malloc (sizeof *out);
  if (!out)
    return PS_ENOMEM;
  ps_outbuf_init (out, file);
  write (tl, dg, out);
  ps_outbuf_flush (out);
  free (out);
  return ferror (file) ? PS_EIO : 0;
}

int
ps_timeline_write_json (const ps_timeline *tl, const ps_diagnosis *dg, FILE *out)
{
  return through (out, tl, dg, timeline_json);
}

int
ps_timeline_write_text (const ps_timeline *tl, const ps_diagnosis *dg, FILE *out)
{
  return through (out, tl, dg, timeline_text);
}
