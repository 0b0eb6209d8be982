/* cli-diff.c: `planscope-cli diff A B`: what changed between two runs,
 * each a trace (as measured) or a graph (as its plan simulates): per
 * kernel name, count and total time; makespans; each stream's busy time;
 * the names that joined or left the critical path. */
#include "cli-commands.h"
#include "cli.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ps-diff.h"
#include "ps-file.h"
#include "ps-format.h"
#include "ps-import.h"
#include "ps-jsonw.h"
#include "ps-sim.h"
#include "ps-trace-import.h"

static const char usage[] =
  "Usage: planscope-cli diff A B [--json] [PLAN-OPTIONS]\n"
  "\n"
  "Compares two runs, each a Chrome/Kineto trace (the run as measured) or a graph\n"
  "file (its plan, simulated; PLAN-OPTIONS apply): per kernel name, the count and\n"
  "total time in each and the change, most changed first; the makespans; each\n"
  "stream's busy time; the kernels that joined or left the critical path; and for\n"
  "traces, their synchronisation records (stream waits, and how many of them name\n"
  "the stream or event they wait on; host synchronisations).\n"
  "\n"
  "  --json   print the diff document (planscope-diff)\n";

typedef struct run {
  ps_graph g;
  ps_plan p;
  ps_timeline tl;
  ps_diagnosis dg;
  ps_trace_stats st; /* a trace's synchronisation records */
  bool trace;
} run;

/* A run from a file: a trace as measured, a graph as simulated. */
static int
load_run (const char *file, cli_plan_args *a, run *r)
{
  memset (r, 0, sizeof *r);
  ps_graph_init (&r->g);
  ps_diag diag;
  ps_diag_init (&diag, file);
  ps_file_whole w;
  int rc = ps_file_read_whole (file, (size_t) 4 << 30, &w, &diag);
  r->trace = rc == 0 && ps_import_detect (w.data, w.len) == PS_GRAPH_FORMAT_TRACE;
  ps_timeline_init (&r->tl, r->trace ? PS_TL_IMPORTED : PS_TL_SIMULATED);
  if (rc == 0 && r->trace)
    rc = ps_trace_import_mem (&r->tl, w.data, w.len, &r->st, &diag);
  else if (rc == 0)
    rc = ps_import_graph_mem (&r->g, w.data, w.len, file, &diag);
  rc = ps_file_whole_end (&w, rc);
  if (rc == 0 && !r->trace) {
    a->file = file;
    rc = cli_plan_device (a, &r->g) == CLI_OK ? 0 : PS_EINVAL;
    if (rc == 0)
      rc = ps_plan_build (&r->p, &r->g, &a->options, &diag);
    if (rc == 0) /* the planner's own run, on the plan's device */
      rc = ps_plan_take_run (&r->p, &r->tl);
  }
  if (rc == 0)
    rc = ps_diagnose (&r->dg, &r->tl);
  ps_diag_print (&diag, stderr);
  if (rc != 0 && diag.errors == 0)
    fprintf (stderr, "%s: error: %s\n", file, ps_strerror (rc));
  ps_diag_free (&diag);
  return rc;
}

static void
free_run (run *r)
{
  ps_diagnosis_free (&r->dg);
  ps_timeline_free (&r->tl);
  ps_plan_free (&r->p);
  ps_graph_free (&r->g);
}

static double
change (double a, double b)
{
  return a > 0 ? (b - a) / a : NAN;
}

/* The synchronisation records of two runs, as counts; a graph's run
 * (simulated, no records) is -1. */
typedef struct sync_counts {
  int64_t waits[2], named[2], host[2];
} sync_counts;

static sync_counts
sync_counts_of (const run *ra, const run *rb)
{
  sync_counts c;
  const run *r[2] = { ra, rb };
  for (int i = 0; i < 2; i++) {
    c.waits[i] = r[i]->trace ? (int64_t) r[i]->st.stream_waits : -1;
    c.named[i] = r[i]->trace ? (int64_t) r[i]->st.stream_waits_named : -1;
    c.host[i] = r[i]->trace ? (int64_t) r[i]->st.host_syncs : -1;
  }
  return c;
}

static void
write_sync_row (FILE *out, const char *what, const int64_t v[2])
{
  fprintf (out, "  %-42s", what);
  for (int i = 0; i < 2; i++) {
    if (v[i] >= 0)
      fprintf (out, " %8lld", (long long) v[i]);
    else
      fprintf (out, " %8s", "-");
  }
  fputc ('\n', out);
}

static void
write_text (const char *fa, const char *fb, const ps_diff *d, const sync_counts *sc, FILE *out)
{
  char x[PS_FORMAT_MAX], y[PS_FORMAT_MAX], z[PS_FORMAT_MAX];
  fprintf (out, "diff of %s (A) and %s (B)\n", fa, fb);
  fprintf (out, "  makespan   A %s   B %s   %+.1f%%\n",
           ps_format_duration (d->makespan_ns[0], x, sizeof x),
           ps_format_duration (d->makespan_ns[1], y, sizeof y),
           100 * change (d->makespan_ns[0], d->makespan_ns[1]));
  fprintf (out, "  GPU ops    A %u   B %u\n\n", d->ops[0], d->ops[1]);
  fprintf (out, "  %-12s %12s %12s %12s\n", "stream", "busy A", "busy B", "change");
  for (uint32_t i = 0; i < d->n_streams; i++) {
    const ps_diff_stream *s = &d->streams[i];
    snprintf (z, sizeof z, "%lld", (long long) s->id);
    fprintf (out, "  %-12s %12s %12s ", z,
             s->busy_ns[0] >= 0 ? ps_format_duration (s->busy_ns[0], x, sizeof x) : "-",
             s->busy_ns[1] >= 0 ? ps_format_duration (s->busy_ns[1], y, sizeof y) : "-");
    if (s->busy_ns[0] >= 0 && s->busy_ns[1] >= 0)
      fprintf (out, "%+11.1f%%\n", 100 * change (s->busy_ns[0], s->busy_ns[1]));
    else
      fprintf (out, "%12s\n", s->busy_ns[0] >= 0 ? "left" : "new");
  }
  fprintf (out, "\n  %-48s %9s %12s %12s %12s  %s\n", "kernel (most changed first)", "count",
           "total A", "total B", "change", "critical path");
  for (uint32_t i = 0; i < d->n_names; i++) {
    const ps_diff_name *n = &d->names[i];
    char cnt[32], dt[PS_FORMAT_MAX];
    snprintf (cnt, sizeof cnt, "%u→%u", n->count[0], n->count[1]);
    double delta = n->total_ns[1] - n->total_ns[0];
    ps_format_duration (fabs (delta), dt, sizeof dt);
    const char *cp = ps_diff_name_critical_text (n);
    char sdt[PS_FORMAT_MAX + 2];
    snprintf (sdt, sizeof sdt, "%s%s", delta < 0 ? "-" : "+", dt);
    fprintf (out, "  %-48.48s ", n->name);
    ps_format_column (out, cnt, 9);
    fputc (' ', out);
    ps_format_column (out, ps_format_duration (n->total_ns[0], x, sizeof x), 12);
    fputc (' ', out);
    ps_format_column (out, ps_format_duration (n->total_ns[1], y, sizeof y), 12);
    fputc (' ', out);
    ps_format_column (out, sdt, 12);
    fprintf (out, "  %s\n", cp);
  }
  fprintf (out, "\n  critical path: %u kernels joined it, %u left it\n", d->joined, d->left);
  if (sc->waits[0] < 0 && sc->waits[1] < 0)
    return;
  fprintf (out, "\n  %-42s %8s %8s\n", "synchronisation records", "A", "B");
  write_sync_row (out, "stream waits", sc->waits);
  write_sync_row (out, "  naming the stream or event they wait on", sc->named);
  write_sync_row (out, "host synchronisations", sc->host);
}

static void
write_json_pair (FILE *out, const char *key, const int64_t v[2])
{
  fprintf (out, "\"%s\": [", key);
  for (int i = 0; i < 2; i++) {
    if (i)
      fputs (", ", out);
    if (v[i] >= 0)
      fprintf (out, "%lld", (long long) v[i]);
    else
      fputs ("null", out);
  }
  fputc (']', out);
}

static void
write_json (const char *fa, const char *fb, const ps_diff *d, const sync_counts *sc, FILE *out)
{
  fputs ("{\n  \"format\": \"planscope-diff\", \"version\": 1, \"a\": ", out);
  ps_jsonw_string (out, fa);
  fputs (", \"b\": ", out);
  ps_jsonw_string (out, fb);
  fputs (",\n  \"makespan_ns\": [", out);
  ps_jsonw_number (out, round (d->makespan_ns[0]));
  fputs (", ", out);
  ps_jsonw_number (out, round (d->makespan_ns[1]));
  fprintf (out, "], \"gpu_ops\": [%u, %u],\n  \"streams\": [", d->ops[0], d->ops[1]);
  for (uint32_t i = 0; i < d->n_streams; i++) {
    fprintf (out, "%s{\"stream\": %lld, \"busy_ns\": [", i ? ", " : "",
             (long long) d->streams[i].id);
    for (int r = 0; r < 2; r++) {
      if (r)
        fputs (", ", out);
      if (d->streams[i].busy_ns[r] >= 0)
        ps_jsonw_number (out, round (d->streams[i].busy_ns[r]));
      else
        fputs ("null", out);
    }
    fputs ("]}", out);
  }
  fputs ("],\n  \"kernels\": [", out);
  for (uint32_t i = 0; i < d->n_names; i++) {
    const ps_diff_name *n = &d->names[i];
    fputs (i ? ",\n    {\"name\": " : "\n    {\"name\": ", out);
    ps_jsonw_string (out, n->name);
    fprintf (out, ", \"count\": [%u, %u], \"total_ns\": [", n->count[0], n->count[1]);
    ps_jsonw_number (out, round (n->total_ns[0]));
    fputs (", ", out);
    ps_jsonw_number (out, round (n->total_ns[1]));
    fprintf (out, "], \"critical\": [%s, %s]}", n->critical[0] ? "true" : "false",
             n->critical[1] ? "true" : "false");
  }
  fprintf (out, "\n  ],\n  \"critical_joined\": %u, \"critical_left\": %u,\n  \"sync\": {",
           d->joined, d->left);
  write_json_pair (out, "stream_waits", sc->waits);
  fputs (", ", out);
  write_json_pair (out, "stream_waits_named", sc->named);
  fputs (", ", out);
  write_json_pair (out, "host_syncs", sc->host);
  fputs ("}\n}\n", out);
}

int
cli_diff_main (int argc, char **argv)
{
  const char *cmd = "diff";
  cli_plan_args a;
  cli_plan_args_init (&a);
  const char *files[2] = { NULL, NULL };
  bool json = false;
  const cli_opt opts[] = { { "--json", NULL, NULL, &json } };
  int parsed = cli_parse_two_files (cmd, usage, argc, argv, &a, &files[1], opts, 1);
  if (parsed >= 0)
    return parsed;
  files[0] = a.file;
  run ra, rb;
  int rc = load_run (files[0], &a, &ra);
  if (rc == 0)
    rc = load_run (files[1], &a, &rb);
  else
    memset (&rb, 0, sizeof rb);
  ps_diff d;
  memset (&d, 0, sizeof d);
  if (rc == 0)
    rc = ps_diff_runs (&ra.tl, &ra.dg, &rb.tl, &rb.dg, &d);
  int ret = CLI_FAILED;
  if (rc == 0) {
    sync_counts sc = sync_counts_of (&ra, &rb);
    if (json)
      write_json (files[0], files[1], &d, &sc, stdout);
    else
      write_text (files[0], files[1], &d, &sc, stdout);
    ret = cli_finish_stdout ();
  }
  ps_diff_free (&d);
  free_run (&ra);
  free_run (&rb);
  return ret;
}
