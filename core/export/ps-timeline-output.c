/* ps-timeline-output.c: the timeline document ("planscope-timeline", see
 * spec/cli.md) and the human report of a timeline and its diagnosis. */
#include "ps-timeline-output.h"

#include <math.h>
#include <string.h>

#include "ps-format.h"
#include "ps-jsonw.h"

static void
num (FILE *out, double ns)
{
  ps_jsonw_number (out, isfinite (ns) ? round (ns) : 0);
}

static int64_t
stream_id (const ps_timeline *tl, uint32_t s)
{
  return s < tl->n_streams ? tl->streams[s].id : -1;
}

/* The names of a span's work: its nodes, or its own name. */
static void
span_names (FILE *out, const ps_timeline *tl, uint32_t x, bool *first)
{
  const ps_span *s = &tl->spans[x];
  if (s->nodes_count && tl->graph) {
    for (uint32_t i = 0; i < s->nodes_count; i++) {
      uint32_t v = tl->span_nodes[s->nodes_begin + i];
      fputs (*first ? "" : ", ", out);
      ps_jsonw_string (out, v < tl->graph->n_nodes ? ps_node_name (tl->graph, v) : "?");
      *first = false;
    }
  } else {
    fputs (*first ? "" : ", ", out);
    ps_jsonw_string (out, ps_timeline_span_name (tl, x));
    *first = false;
  }
}

/* The cause of wait i: its kind of cause, the work to blame, what the
 * cause costs, and the sentence that says it. */
static void
write_wait_cause (FILE *out, const ps_timeline *tl, const ps_diagnosis *dg, uint32_t i)
{
  const ps_wait *w = &dg->waits[i];
  fputs (", \"cause\": ", out);
  ps_jsonw_string (out, ps_cause_name ((ps_cause) w->cause));
  if (w->culprit < tl->n_spans) {
    fputs (", \"culprit\": [", out);
    bool f = true;
    span_names (out, tl, w->culprit, &f);
    fputs ("]", out);
  }
  if (w->via < tl->n_spans && w->via != w->culprit) {
    fputs (", \"via\": [", out);
    bool f = true;
    span_names (out, tl, w->via, &f);
    fputs ("]", out);
  }
  if (w->dep < tl->n_spans) {
    fputs (", \"depends_on\": [", out);
    bool f = true;
    span_names (out, tl, w->dep, &f);
    fputs ("]", out);
  }
  if (tl->graph && w->buffer < tl->graph->n_buffers && w->shared_with < tl->graph->n_buffers) {
    fputs (", \"pool_shares\": [", out);
    ps_jsonw_string (out, ps_buffer_name (tl->graph, w->buffer));
    fputs (", ", out);
    ps_jsonw_string (out, ps_buffer_name (tl->graph, w->shared_with));
    fputs ("]", out);
  }
  fputs (", \"cost_ns\": ", out);
  num (out, w->cost_ns);
  char text[1024];
  fputs (", \"why\": ", out);
  ps_jsonw_string (out, ps_diagnose_wait_text (tl, dg, i, text, sizeof text));
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

int
ps_timeline_write_json (const ps_timeline *tl, const ps_diagnosis *dg, FILE *out)
{
  fprintf (out, "{\n  \"format\": \"planscope-timeline\", \"version\": 1, \"source\": \"%s\",",
           ps_timeline_source_name (tl->source));
  fputs (" \"device\": ", out);
  ps_jsonw_string (out, tl->device);
  if (tl->source == PS_TL_MEASURED)
    fprintf (out, ", \"iterations\": %u", tl->iterations);
  fputs (",\n  \"makespan_ns\": ", out);
  num (out, tl->makespan_ns);
  fprintf (out, ", \"event_waits\": %u", tl->event_waits);

  fputs (",\n  \"streams\": [", out);
  for (uint32_t q = 0; q < tl->n_streams; q++) {
    fprintf (out, "%s\n    {\"stream\": %lld", q ? "," : "", (long long) stream_id (tl, q));
    if (tl->streams[q].device >= 0)
      fprintf (out, ", \"device\": %d", tl->streams[q].device);
    if (dg && q < dg->n_streams) {
      const ps_stream_stats *s = &dg->streams[q];
      fputs (", \"busy_ns\": ", out);
      num (out, s->busy_ns);
      fputs (", \"stalled_ns\": ", out);
      num (out, s->stalled_ns);
      fputs (", \"idle_ns\": ", out);
      num (out, s->idle_ns);
      fprintf (out, ", \"spans\": %u, \"stalls\": %u", s->spans, s->stalls);
    }
    fputs ("}", out);
  }
  fputs ("\n  ],\n  \"spans\": [", out);
  /* Spans in stream order, each stream by start time. */
  bool first_span = true;
  for (uint32_t q = 0; q < tl->n_streams; q++)
    for (uint32_t k = tl->stream_off[q]; k < tl->stream_off[q + 1]; k++) {
      uint32_t x = tl->by_stream[k];
      const ps_span *s = &tl->spans[x];
      fprintf (out, "%s\n    {", first_span ? "" : ",");
      first_span = false;
      if (s->step != PS_NONE)
        fprintf (out, "\"step\": %u, ", s->step);
      fprintf (out, "\"stream\": %lld, \"kind\": \"%s\", ", (long long) stream_id (tl, q),
               ps_span_kind_name ((ps_span_kind) s->kind));
      if (s->nodes_count && tl->graph) {
        fputs ("\"nodes\": [", out);
        bool f = true;
        span_names (out, tl, x, &f);
        fputs ("]", out);
      } else {
        fputs ("\"name\": ", out);
        ps_jsonw_string (out, ps_timeline_span_name (tl, x));
      }
      fputs (", \"start_ns\": ", out);
      num (out, s->start_ns);
      fputs (", \"end_ns\": ", out);
      num (out, s->end_ns);
      if (s->correlation)
        fprintf (out, ", \"correlation\": %llu", (unsigned long long) s->correlation);
      fputs ("}", out);
    }

  fputs ("\n  ],\n  \"stalls\": [", out);
  for (uint32_t i = 0; i < tl->n_stalls; i++) {
    const ps_stall *sl = &tl->stalls[i];
    fprintf (out, "%s\n    {\"stream\": %lld", i ? "," : "", (long long) stream_id (tl, sl->stream));
    if (sl->step != PS_NONE)
      fprintf (out, ", \"step\": %u", sl->step);
    fputs (", \"start_ns\": ", out);
    num (out, sl->start_ns);
    fputs (", \"end_ns\": ", out);
    num (out, sl->end_ns);
    fputs (", \"waiting_for\": ", out);
    if (sl->waiting_for < tl->n_spans) {
      const ps_span *w = &tl->spans[sl->waiting_for];
      if (w->nodes_count && tl->graph) {
        uint32_t v = tl->span_nodes[w->nodes_begin + w->nodes_count - 1];
        ps_jsonw_string (out, v < tl->graph->n_nodes ? ps_node_name (tl->graph, v) : "?");
      } else {
        ps_jsonw_string (out, ps_timeline_span_name (tl, sl->waiting_for));
      }
    } else {
      fputs ("null", out);
    }
    if (sl->on_stream < tl->n_streams)
      fprintf (out, ", \"on_stream\": %lld", (long long) stream_id (tl, sl->on_stream));
    else
      fputs (", \"on_stream\": null", out);
    if (sl->event >= 0)
      fprintf (out, ", \"event\": %lld", (long long) sl->event);
    if (dg && dg->chain_off) {
      fputs (", \"causes\": [", out);
      bool f = true;
      for (uint32_t c = dg->chain_off[i]; c < dg->chain_off[i + 1]; c++)
        span_names (out, tl, dg->chain[c], &f);
      fputs ("]", out);
    }
    if (dg && i < dg->n_waits)
      write_wait_cause (out, tl, dg, i);
    fputs ("}", out);
  }
  fputs ("\n  ]", out);

  if (dg) {
    /* Every wait: the stalls again, then waits for resources and the host. */
    fputs (",\n  \"waits\": [", out);
    for (uint32_t i = 0; i < dg->n_waits; i++) {
      const ps_wait *w = &dg->waits[i];
      static const char *const kinds[] = { "event", "resource", "host" };
      fprintf (out, "%s\n    {\"kind\": \"%s\", \"stream\": %lld", i ? "," : "",
               w->kind < 3 ? kinds[w->kind] : "?", (long long) stream_id (tl, w->stream));
      fputs (", \"start_ns\": ", out);
      num (out, w->start_ns);
      fputs (", \"end_ns\": ", out);
      num (out, w->end_ns);
      if (w->span < tl->n_spans) {
        fputs (", \"work\": [", out);
        bool f = true;
        span_names (out, tl, w->span, &f);
        fputs ("]", out);
      }
      write_wait_cause (out, tl, dg, i);
      fputs ("}", out);
    }
    fputs ("\n  ]", out);
    fputs (",\n  \"critical_path\": [", out);
    bool f = true;
    for (uint32_t i = 0; i < dg->n_critical; i++)
      span_names (out, tl, dg->critical[i], &f);
    fputs ("],\n  \"critical_work_ns\": ", out);
    num (out, dg->critical_work_ns);
    fputs (", \"host_bound_ns\": ", out);
    num (out, dg->host_bound_ns);
    fputs (",\n  \"help\": [", out);
    for (uint32_t i = 0; i < dg->n_help; i++) {
      const ps_help *h = &dg->help[i];
      fprintf (out, "%s\n    {\"kind\": \"%s\"", i ? "," : "",
               help_kind_name ((ps_help_kind) h->kind));
      switch ((ps_help_kind) h->kind) {
      case PS_HELP_SHORTEN: {
        fputs (", \"work\": [", out);
        bool ff = true;
        span_names (out, tl, h->span, &ff);
        fputs ("]", out);
        const char *fn = ps_timeline_span_function (tl, h->span);
        if (fn) {
          fputs (", \"function\": ", out);
          ps_jsonw_string (out, fn);
        }
        fprintf (out, ", \"count\": %u, \"critical_ns\": ", h->count);
        num (out, h->ns);
        if (h->gain_ns >= 0) {
          fputs (", \"halving_saves_ns\": ", out);
          num (out, h->gain_ns);
        }
        break;
      }
      case PS_HELP_LAUNCH_BOUND:
        fputs (", \"host_bound_ns\": ", out);
        num (out, h->ns);
        break;
      case PS_HELP_IDLE_STREAM:
        fprintf (out, ", \"stream\": %lld, \"idle_ns\": ", (long long) stream_id (tl, h->stream));
        num (out, h->ns);
        break;
      case PS_HELP_STALLS:
      default:
        fprintf (out, ", \"stream\": %lld, \"stalled_ns\": ", (long long) stream_id (tl, h->stream));
        num (out, h->ns);
        if (h->on_stream < tl->n_streams)
          fprintf (out, ", \"on_stream\": %lld", (long long) stream_id (tl, h->on_stream));
        break;
      }
      fputs ("}", out);
    }
    fputs ("\n  ]", out);
  }
  fputs ("\n}\n", out);
  return ferror (out) ? PS_EIO : 0;
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
print_span (FILE *out, const ps_timeline *tl, uint32_t x)
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
  ps_put_printable (out, label);
}

int
ps_timeline_write_text (const ps_timeline *tl, const ps_diagnosis *dg, FILE *out)
{
  char a[PS_FORMAT_MAX], b[PS_FORMAT_MAX], c[PS_FORMAT_MAX], sl_[64], sl2[64];
  fprintf (out, "%s timeline on ", ps_timeline_source_name (tl->source));
  ps_put_printable (out, tl->device[0] ? tl->device : "?");
  fprintf (out, ": makespan %s, %u spans on %u streams, %u event waits, %u stalls\n",
           dur (a, sizeof a, tl->makespan_ns), tl->n_spans, tl->n_streams, tl->event_waits,
           tl->n_stalls);
  if (dg) {
    fprintf (out, "\n%-22s %12s %12s %12s %8s\n", "stream", "busy", "stalled", "idle", "spans");
    for (uint32_t q = 0; q < dg->n_streams; q++) {
      const ps_stream_stats *s = &dg->streams[q];
      ps_timeline_stream_label (tl, q, sl_, sizeof sl_);
      ps_format_column (out, sl_, -22);
      fputc (' ', out);
      ps_format_column (out, dur (a, sizeof a, s->busy_ns), 12);
      fputc (' ', out);
      ps_format_column (out, dur (b, sizeof b, s->stalled_ns), 12);
      fputc (' ', out);
      ps_format_column (out, dur (c, sizeof c, s->idle_ns), 12);
      fprintf (out, " %8u\n", s->spans);
    }
  }
  if (tl->n_stalls) {
    fprintf (out, "\nstalls:\n");
    uint32_t shown = 0;
    for (uint32_t i = 0; i < tl->n_stalls; i++) {
      const ps_stall *s = &tl->stalls[i];
      if (shown == 50) {
        fprintf (out, "  ... %u more (see --json)\n", tl->n_stalls - shown);
        break;
      }
      shown++;
      ps_timeline_stream_label (tl, s->stream, sl_, sizeof sl_);
      fprintf (out, "  %s at %s", sl_, dur (a, sizeof a, s->start_ns));
      if (s->step != PS_NONE)
        fprintf (out, " (step %u)", s->step);
      if (dg && i < dg->n_waits) {
        char text[1024];
        fputs (": ", out);
        ps_put_printable (out, ps_diagnose_wait_text (tl, dg, i, text, sizeof text));
      } else {
        fprintf (out, ": waits %s", dur (b, sizeof b, s->end_ns - s->start_ns));
        if (s->waiting_for < tl->n_spans) {
          fputs (" for ", out);
          print_span (out, tl, s->waiting_for);
        }
      }
      fputc ('\n', out);
      if (dg && dg->chain_off && dg->chain_off[i + 1] - dg->chain_off[i] > 1) {
        fputs ("    chain: ", out);
        for (uint32_t k = dg->chain_off[i]; k < dg->chain_off[i + 1]; k++) {
          uint32_t x = dg->chain[k];
          if (k > dg->chain_off[i])
            fputs (" <- ", out);
          print_span (out, tl, x);
          fprintf (out, " (%s)", bound_text ((ps_bound) dg->bound[x]));
        }
        fputc ('\n', out);
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
    fprintf (out, "\nwaits for the SMs, copy engines and the host: %u, %s in all\n",
             dg->n_waits - tl->n_stalls, dur (a, sizeof a, total));
    for (uint32_t k = 0; k < n_shown; k++) {
      const ps_wait *w = &dg->waits[shown[k]];
      char text[1024];
      ps_timeline_stream_label (tl, w->stream, sl_, sizeof sl_);
      fprintf (out, "  %s at %s: ", sl_, dur (a, sizeof a, w->start_ns));
      ps_put_printable (out, ps_diagnose_wait_text (tl, dg, shown[k], text, sizeof text));
      fputc ('\n', out);
    }
  }
  if (dg && dg->n_critical) {
    fprintf (out, "\ncritical path: %u spans, %s of work, %s waiting for the host\n",
             dg->n_critical, dur (a, sizeof a, dg->critical_work_ns),
             dur (b, sizeof b, dg->host_bound_ns));
    for (uint32_t i = 0; i < dg->n_critical; i++) {
      if (dg->n_critical > 24 && i == 10) {
        fprintf (out, "  ... %u more ...\n", dg->n_critical - 20);
        i = dg->n_critical - 10;
      }
      uint32_t x = dg->critical[i];
      const ps_span *s = &tl->spans[x];
      ps_timeline_stream_label (tl, s->stream, sl_, sizeof sl_);
      fputs ("  ", out);
      ps_format_column (out, dur (a, sizeof a, s->start_ns), 10);
      fputs ("  ", out);
      ps_format_column (out, sl_, -12);
      fputc (' ', out);
      print_span (out, tl, x);
      fprintf (out, "  [%s; %s]\n", ps_timeline_span_duration_text (tl, x, b, sizeof b),
               bound_text ((ps_bound) dg->bound[x]));
    }
  }
  if (dg && dg->n_help) {
    fprintf (out, "\nwhat would help:\n");
    for (uint32_t i = 0; i < dg->n_help; i++) {
      const ps_help *h = &dg->help[i];
      fputs ("  - ", out);
      switch ((ps_help_kind) h->kind) {
      case PS_HELP_SHORTEN: {
        const char *fn = ps_timeline_span_function (tl, h->span);
        if (h->count > 1 && fn) {
          fputs ("shorten kernel ", out);
          ps_put_printable (out, fn);
        } else {
          fputs ("shorten ", out);
          print_span (out, tl, h->span);
        }
        fprintf (out, ": %s on the critical path", dur (a, sizeof a, h->ns));
        if (h->count > 1)
          fprintf (out, " (%u launches)", h->count);
        if (h->gain_ns >= 0)
          fprintf (out, "; halving it saves %s", dur (b, sizeof b, h->gain_ns));
        break;
      }
      case PS_HELP_LAUNCH_BOUND:
        fprintf (out, "launch-bound: %s of the critical path waits for the host to issue work; "
                 "%s, larger kernels would help",
                 dur (a, sizeof a, h->ns),
                 tl->graph && tl->graph->cuda_graph ? "fusion or fewer"
                                                    : "a CUDA graph, fusion or fewer");
        break;
      case PS_HELP_IDLE_STREAM:
        ps_timeline_stream_label (tl, h->stream, sl_, sizeof sl_);
        fprintf (out, "%s sits idle %.0f%% of the run: it has little independent work", sl_,
                 100 * h->ns / (tl->makespan_ns > 0 ? tl->makespan_ns : 1));
        break;
      case PS_HELP_STALLS:
      default:
        ps_timeline_stream_label (tl, h->stream, sl_, sizeof sl_);
        fprintf (out, "%s stalls %s (%u waits)", sl_, dur (a, sizeof a, h->ns), h->count);
        if (h->on_stream < tl->n_streams) {
          ps_timeline_stream_label (tl, h->on_stream, sl2, sizeof sl2);
          fprintf (out, ", mostly on %s: shorten that stream's work before the event", sl2);
        }
        break;
      }
      fputc ('\n', out);
    }
  }
  return ferror (out) ? PS_EIO : 0;
}
