/* cli-profile.c: `planscope-cli profile`: runs the plan on the GPU under
 * CUPTI and reports the measured timeline next to the model's prediction,
 * with the error per step and for the makespan, and CUPTI's own overhead;
 * `--check` also runs the fused and the unfused plan from the same inputs
 * and compares their outputs. */
#include "cli-commands.h"
#include "cli.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ps-diagnose.h"
#include "ps-file.h"
#include "ps-format.h"
#include "ps-jsonw.h"
#include "ps-profiler.h"
#include "ps-sim.h"
#include "ps-timeline-output.h"
#include "ps-trace-export.h"

static const char usage[] =
  "Usage: planscope-cli profile FILE [PLAN-OPTIONS] [--mode streams|graph] [--iterations N]\n"
  "                             [--warmup N] [--json] [--trace OUT] [--check]\n"
  "                             [--device NAME]\n"
  "\n"
  "Runs the plan of FILE on the GPU and reports CUPTI-measured times (medians of the\n"
  "measured runs) next to the model's prediction, with the prediction error per step\n"
  "and for the makespan, and the overhead of tracing (runs with and without CUPTI).\n"
  "\n"
  "  --streams N      use at most N streams (1-64, default 4); auto: the fewest,\n"
  "                   up to 8, within 1% of the fastest plan\n"
  "  --fusion F       auto (default): fuse element-wise kernels, keeping back groups\n"
  "                   the plan simulates faster without; all: every legal group;\n"
  "                   off: none\n"
  "  --no-fusion      do not fuse element-wise kernels (--fusion off)\n"
  "  --timing         per-pass wall time on stderr\n"
  "  --mode M         streams: submit the steps on the plan's streams with events\n"
  "                   (default); graph: capture that submission into a CUDA graph\n"
  "                   once and launch it per run\n"
  "  --iterations N   measured runs (default 10)\n"
  "  --warmup N       runs before them, discarded (default 2)\n"
  "  --json           print the timeline document (source \"measured\") with the\n"
  "                   prediction and the overhead\n"
  "  --trace OUT      also write the measured timeline as a Chrome trace\n"
  "  --check          also run the fused and the unfused plan once each from the same\n"
  "                   inputs and compare their outputs (exit 1 when they differ)\n"
  "  --device NAME    device profile to plan for and predict with (default: the\n"
  "                   graph's, else h200)\n"
  "  --assume N=B     model branch B (then, else or both) of conditional N\n"
  "\n"
  "Exit status: 0 success, 1 bad input or a failed check, 2 usage error, 3 no usable\n"
  "GPU (no driver, no device, NVRTC or CUPTI missing, ...; the reason is printed).\n";

/* The model's view of the same plan, on the device it was planned for:
 * predicted step durations and makespan.  Returns false (after a
 * warning) when it cannot be had. */
static bool
predict (ps_plan *p, double *step_ns, double *makespan)
{
  ps_timeline tl;
  ps_timeline_init (&tl, PS_TL_SIMULATED);
  int rc = ps_plan_take_run (p, &tl);
  if (rc == 0) {
    for (uint32_t s = 0; s < p->n_steps; s++)
      step_ns[s] = -1;
    for (uint32_t i = 0; i < tl.n_spans; i++)
      if (tl.spans[i].step < p->n_steps)
        step_ns[tl.spans[i].step] = tl.spans[i].end_ns - tl.spans[i].start_ns;
    *makespan = tl.makespan_ns;
  } else {
    fprintf (stderr, "planscope-cli profile: warning: no prediction: %s\n", ps_strerror (rc));
  }
  ps_timeline_free (&tl);
  return rc == 0;
}

/* A duration for people (ps-format.h); a negative one was not measured. */
static const char *
dur (char *buf, size_t cap, double ns)
{
  return ps_format_duration (ns < 0 ? NAN : ns, buf, cap);
}

/* Relative error of the prediction against the measurement. */
static double
rel_error (double predicted, double measured)
{
  return measured > 0 && predicted >= 0 ? (predicted - measured) / measured : NAN;
}

typedef struct report {
  const ps_plan *p;
  const ps_profile_result *r;
  const ps_gpu_info *info;
  const char *mode;
  uint32_t warmup;
  bool have_pred;
  const double *pred_step;
  double pred_makespan;
  const ps_check_result *check; /* NULL without --check */
} report;

static void
write_text (const report *rp, const ps_diagnosis *dg)
{
  const ps_profile_result *r = rp->r;
  const ps_plan *p = rp->p;
  const ps_graph *g = p->graph;
  char a[PS_FORMAT_MAX], b[PS_FORMAT_MAX];
  printf ("profile of \"%s\" on %s (%s mode, median of %u runs, %u warm-up runs discarded)\n",
          g->name ? g->name : "", rp->info->name, rp->mode, r->iterations, rp->warmup);
  printf ("  makespan      measured %s", dur (a, sizeof a, r->timeline.makespan_ns));
  if (rp->have_pred)
    printf ("   predicted %s (%s model)   error %+.1f%%", dur (b, sizeof b, rp->pred_makespan),
            rp->p->device.name, 100 * rel_error (rp->pred_makespan, r->timeline.makespan_ns));
  printf ("\n");
  if (r->wall_untraced_ns >= 0 && r->wall_traced_ns >= 0)
    printf ("  CUPTI         a run takes %s traced, %s untraced (overhead %+.1f%%)\n",
            dur (a, sizeof a, r->wall_traced_ns), dur (b, sizeof b, r->wall_untraced_ns),
            100 * rel_error (r->wall_traced_ns, r->wall_untraced_ns));
  printf ("  records       %llu of %llu expected mapped to steps, %llu unmatched, %llu "
          "untimed, %llu dropped\n",
          (unsigned long long) r->records, (unsigned long long) r->expected,
          (unsigned long long) r->unmatched, (unsigned long long) r->untimed,
          (unsigned long long) r->dropped);
  const ps_gpu_info *in = rp->info;
  printf ("  versions      CUDA driver %d.%d, CUPTI API %u, NVRTC %d.%d\n",
          in->driver_version / 1000, in->driver_version % 1000 / 10, in->cupti_api,
          in->nvrtc_major, in->nvrtc_minor);
  printf ("\nsteps (measured vs predicted)\n  %-5s %-6s %-32s %12s %12s %8s\n", "step", "stream",
          "nodes", "measured", "predicted", "error");
  for (uint32_t s = 0; s < p->n_steps; s++) {
    const ps_step *st = &p->steps[s];
    if (st->op == PS_OP_EVENT_RECORD || st->op == PS_OP_EVENT_WAIT || st->nodes_count == 0)
      continue;
    char label[64];
    snprintf (label, sizeof label, "%s%s", ps_node_name (g, p->step_nodes[st->nodes_begin]),
              st->nodes_count > 1 ? " +" : "");
    if (st->nodes_count > 1)
      snprintf (label + strlen (label), sizeof label - strlen (label), "%u", st->nodes_count - 1);
    double m = r->step_ns[s], pr = rp->have_pred ? rp->pred_step[s] : -1;
    double e = rel_error (pr, m);
    printf ("  %-5u %-6u %-32.32s ", s, st->stream, label);
    ps_format_column (stdout, dur (a, sizeof a, m), 12);
    putchar (' ');
    ps_format_column (stdout, dur (b, sizeof b, pr), 12);
    putchar (' ');
    if (isfinite (e))
      printf ("%+7.1f%%\n", 100 * e);
    else
      printf ("%8s\n", "-");
  }
  if (rp->check) {
    const ps_check_result *c = rp->check;
    if (c->equal)
      printf ("\ncheck: fused and unfused runs agree on %u outputs (%llu elements, max |diff| "
              "%.3g)\n",
              c->outputs, (unsigned long long) c->elements, c->max_abs_diff);
    else
      printf ("\ncheck: fused and unfused runs DIFFER in %llu of %llu elements; first: %s\n",
              (unsigned long long) c->mismatches, (unsigned long long) c->elements,
              c->first_mismatch);
  }
  printf ("\n");
  ps_timeline_write_text (&r->timeline, dg, stdout);
}

static void
num (FILE *out, double v)
{
  ps_jsonw_number (out, isfinite (v) ? v : 0);
}

/* The timeline document of spec/cli.md with the prediction, the overhead
 * and the check appended as extra keys. */
static int
write_json (const report *rp, const ps_diagnosis *dg)
{
  const ps_profile_result *r = rp->r;
  char *buf = NULL;
  size_t len = 0;
  FILE *mem = open_memstream (&buf, &len);
  if (!mem)
    return PS_ENOMEM;
  int rc = ps_timeline_write_json (&r->timeline, dg, mem);
  if (fclose (mem) != 0 && rc == 0)
    rc = PS_EIO;
  while (rc == 0 && len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == ' '))
    len--;
  if (rc != 0 || len == 0 || buf[len - 1] != '}') {
    free (buf);
    return rc ? rc : PS_EINVAL;
  }
  fwrite (buf, 1, len - 1, stdout);
  free (buf);
  FILE *out = stdout;
  fprintf (out, ",\n  \"gpu\": ");
  ps_jsonw_string (out, rp->info->name);
  fprintf (out, ", \"mode\": \"%s\", \"warmup\": %u,\n  \"prediction\": ", rp->mode, rp->warmup);
  if (rp->have_pred) {
    fprintf (out, "{\"device\": ");
    ps_jsonw_string (out, rp->p->device.name);
    fprintf (out, ", \"makespan_ns\": ");
    num (out, round (rp->pred_makespan));
    double e = rel_error (rp->pred_makespan, r->timeline.makespan_ns);
    fprintf (out, ", \"makespan_error\": ");
    if (isfinite (e))
      num (out, round (e * 1e4) / 1e4);
    else
      fputs ("null", out);
    fprintf (out, "}");
  } else {
    fputs ("null", out);
  }
  fprintf (out, ",\n  \"overhead\": {\"traced_ns\": ");
  num (out, round (r->wall_traced_ns));
  fprintf (out, ", \"untraced_ns\": ");
  if (r->wall_untraced_ns >= 0)
    num (out, round (r->wall_untraced_ns));
  else
    fputs ("null", out);
  fprintf (out, ", \"records\": %llu, \"expected\": %llu, \"unmatched\": %llu, "
                "\"untimed\": %llu, \"missing\": %llu, \"dropped\": %llu}",
           (unsigned long long) r->records, (unsigned long long) r->expected,
           (unsigned long long) r->unmatched, (unsigned long long) r->untimed,
           (unsigned long long) r->missing, (unsigned long long) r->dropped);
  const ps_gpu_info *in = rp->info;
  fprintf (out, ",\n  \"versions\": {\"driver\": \"%d.%d\", \"cupti_api\": %u, \"nvrtc\": \"%d.%d\"}",
           in->driver_version / 1000, in->driver_version % 1000 / 10, in->cupti_api,
           in->nvrtc_major, in->nvrtc_minor);
  fprintf (out, ",\n  \"step_times\": [");
  bool first = true;
  for (uint32_t s = 0; s < rp->p->n_steps; s++) {
    if (r->step_ns[s] < 0)
      continue;
    fprintf (out, "%s\n    {\"step\": %u, \"measured_ns\": ", first ? "" : ",", s);
    first = false;
    num (out, round (r->step_ns[s]));
    double pr = rp->have_pred ? rp->pred_step[s] : -1;
    if (pr >= 0) {
      fprintf (out, ", \"predicted_ns\": ");
      num (out, round (pr));
      double e = rel_error (pr, r->step_ns[s]);
      if (isfinite (e)) {
        fprintf (out, ", \"error\": ");
        num (out, round (e * 1e4) / 1e4);
      }
    }
    fputs ("}", out);
  }
  fputs ("\n  ]", out);
  if (rp->check) {
    const ps_check_result *c = rp->check;
    fprintf (out, ",\n  \"check\": {\"equal\": %s, \"outputs\": %u, \"elements\": %llu, "
                  "\"mismatches\": %llu, \"max_abs_diff\": ",
             c->equal ? "true" : "false", c->outputs, (unsigned long long) c->elements,
             (unsigned long long) c->mismatches);
    num (out, c->max_abs_diff);
    if (!c->equal) {
      fputs (", \"first_mismatch\": ", out);
      ps_jsonw_string (out, c->first_mismatch);
    }
    fputs ("}", out);
  }
  fputs ("\n}\n", out);
  return ferror (out) ? PS_EIO : 0;
}

static int
gpu_failed (const ps_gpu_error *err, const ps_gpu *gpu)
{
  fprintf (stderr, "planscope-cli profile: %s\n", err->message);
  const ps_gpu_info *in = ps_gpu_get_info (gpu);
  if (in)
    fprintf (stderr, "planscope-cli profile: (on %s: CUDA driver %d.%d, CUPTI API %u, NVRTC %d.%d)\n",
             in->name, in->driver_version / 1000, in->driver_version % 1000 / 10, in->cupti_api,
             in->nvrtc_major, in->nvrtc_minor);
  return ps_gpu_status_unavailable (err->status) ? CLI_NO_GPU : CLI_FAILED;
}

/* Builds the plan of g with fusion on or off (for --check). */
static int
plan_with_fusion (const ps_graph *g, const cli_plan_args *a, bool fusion, ps_plan *p)
{
  ps_plan_options o = a->options;
  o.fusion = fusion;
  ps_diag diag;
  ps_diag_init (&diag, a->file);
  int rc = ps_plan_build (p, g, &o, &diag);
  if (rc != 0)
    ps_diag_print (&diag, stderr);
  ps_diag_free (&diag);
  return rc;
}

int
cli_profile_main (int argc, char **argv)
{
  const char *cmd = "profile";
  cli_plan_args a;
  cli_plan_args_init (&a);
  ps_profile_options po;
  ps_profile_options_init (&po);
  const char *trace = NULL;
  const char *mode = NULL, *iterations = NULL, *warmup = NULL;
  bool json = false, check = false;
  const cli_opt opts[] = { { "--mode", NULL, &mode, NULL },
                           { "--iterations", NULL, &iterations, NULL },
                           { "--warmup", NULL, &warmup, NULL },
                           { "--trace", NULL, &trace, NULL },
                           { "--json", NULL, NULL, &json },
                           { "--check", NULL, NULL, &check } };
  int parsed = cli_parse_command (cmd, usage, argc, argv, &a, opts, sizeof opts / sizeof opts[0]);
  if (parsed >= 0)
    return parsed;
  if (mode && strcmp (mode, "streams") == 0)
    po.mode = PS_PROFILE_STREAMS;
  else if (mode && strcmp (mode, "graph") == 0)
    po.mode = PS_PROFILE_GRAPH;
  else if (mode)
    return cli_usage_error (cmd, "--mode is streams or graph, not '%s'", mode);
  if (iterations && cli_parse_u32 (iterations, 1, 100000, &po.iterations) != 0)
    return cli_usage_error (cmd, "--iterations needs a whole number from 1 to 100000, not '%s'",
                            iterations);
  if (warmup && cli_parse_u32 (warmup, 0, 10000, &po.warmup) != 0)
    return cli_usage_error (cmd, "--warmup needs a whole number from 0 to 10000, not '%s'",
                            warmup);

  ps_graph g;
  ps_plan p, pf, pu;
  ps_graph_init (&g);
  memset (&p, 0, sizeof p);
  memset (&pf, 0, sizeof pf);
  memset (&pu, 0, sizeof pu);
  ps_profile_result r;
  memset (&r, 0, sizeof r);
  ps_diagnosis dg;
  memset (&dg, 0, sizeof dg);
  double *pred = NULL;
  ps_gpu *gpu = NULL;
  ps_gpu_error err;
  ps_gpu_error_clear (&err);
  int rc = cli_load_and_plan (&g, &p, &a);
  if (rc != CLI_OK)
    goto out;

  double t0 = ps_clock_now ();
  if (ps_gpu_open (&gpu, &err) != 0) {
    rc = gpu_failed (&err, gpu);
    goto out;
  }
  if (a.timing)
    cli_timing ("open GPU", ps_clock_now () - t0);

  ps_check_result cr;
  if (check) {
    if (plan_with_fusion (&g, &a, true, &pf) != 0 || plan_with_fusion (&g, &a, false, &pu) != 0) {
      rc = CLI_FAILED;
      goto out;
    }
    t0 = ps_clock_now ();
    if (ps_gpu_check (gpu, &pf, &pu, po.mode, &cr, &err) != 0) {
      rc = gpu_failed (&err, gpu);
      goto out;
    }
    if (a.timing)
      cli_timing ("check", ps_clock_now () - t0);
  }

  t0 = ps_clock_now ();
  if (ps_gpu_profile (gpu, &p, &po, &r, &err) != 0) {
    rc = gpu_failed (&err, gpu);
    goto out;
  }
  if (a.timing)
    cli_timing ("profile", ps_clock_now () - t0);

  pred = malloc ((p.n_steps ? p.n_steps : 1) * sizeof *pred);
  double pred_makespan = 0;
  bool have_pred = pred && predict (&p, pred, &pred_makespan);
  int d = ps_diagnose (&dg, &r.timeline);
  report rp = { &p, &r, ps_gpu_get_info (gpu), ps_profile_mode_name (po.mode), po.warmup,
                have_pred, pred, pred_makespan, check ? &cr : NULL };
  if (d != 0) {
    fprintf (stderr, "planscope-cli profile: cannot diagnose the timeline: %s\n", ps_strerror (d));
    rc = CLI_FAILED;
    goto out;
  }
  if (trace && cli_write_trace ("profile", trace, &r.timeline, &dg) != CLI_OK) {
    rc = CLI_FAILED;
    goto out;
  }
  if (json) {
    int w = write_json (&rp, &dg);
    if (w != 0)
      fprintf (stderr, "planscope-cli profile: cannot write the document: %s\n", ps_strerror (w));
  } else {
    write_text (&rp, &dg);
  }
  rc = cli_finish_stdout ();
  if (rc == CLI_OK && check && !cr.equal) {
    fprintf (stderr, "planscope-cli profile: check failed: fused and unfused outputs differ "
                     "(%s)\n", cr.first_mismatch);
    rc = CLI_FAILED;
  }
out:
  ps_diagnosis_free (&dg);
  ps_profile_result_free (&r);
  ps_gpu_close (gpu);
  free (pred);
  ps_plan_free (&p);
  ps_plan_free (&pf);
  ps_plan_free (&pu);
  ps_graph_free (&g);
  return rc;
}
