/* ps-export.c: `export` (see ps-export.h): prepares what the view needs
 * (costs, a simulated timeline, a laid-out scene), then writes the file
 * through ps_file_write_atomic, so that a failure leaves no partial file. */
#include "ps-export.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ps-dag-view.h"
#include "ps-diagnose.h"
#include "ps-draw.h"
#include "ps-file.h"
#include "ps-layout.h"
#include "ps-memory-draw.h"
#include "ps-plan-output.h"
#include "ps-plan-view.h"
#include "ps-scene.h"
#include "ps-sim.h"
#include "ps-timeline-draw.h"
#include "ps-timeline-output.h"
#include "ps-trace-export.h"

static const char *const view_names[PS_EXPORT_VIEW__COUNT] = { "dag", "plan", "timeline",
                                                               "memory" };
static const char *const format_names[PS_EXPORT_FORMAT__COUNT] = { "dot", "svg", "png", "json",
                                                                   "trace" };

void
ps_export_options_init (ps_export_options *o)
{
  memset (o, 0, sizeof *o);
  ps_view_options_init (&o->view_options);
}

int
ps_export_view_parse (const char *name, ps_export_view *out)
{
  for (int i = 0; i < PS_EXPORT_VIEW__COUNT; i++)
    if (strcmp (name, view_names[i]) == 0) {
      *out = (ps_export_view) i;
      return 0;
    }
  return PS_EINVAL;
}

int
ps_export_format_parse (const char *name, ps_export_format *out)
{
  for (int i = 0; i < PS_EXPORT_FORMAT__COUNT; i++)
    if (strcmp (name, format_names[i]) == 0) {
      *out = (ps_export_format) i;
      return 0;
    }
  return PS_EINVAL;
}

const char *
ps_export_view_name (ps_export_view v)
{
  return (unsigned) v < PS_EXPORT_VIEW__COUNT ? view_names[v] : "?";
}

const char *
ps_export_format_name (ps_export_format f)
{
  return (unsigned) f < PS_EXPORT_FORMAT__COUNT ? format_names[f] : "?";
}

static bool
ends_with (const char *s, const char *suffix)
{
  size_t n = strlen (s), k = strlen (suffix);
  if (n < k)
    return false;
  for (size_t i = 0; i < k; i++) {
    char c = s[n - k + i];
    if (c >= 'A' && c <= 'Z')
      c = (char) (c - 'A' + 'a');
    if (c != suffix[i])
      return false;
  }
  return true;
}

int
ps_export_format_from_path (const char *path, ps_export_format *out)
{
  static const struct {
    const char *ext;
    ps_export_format f;
  } map[] = {
    { ".trace.json", PS_EXPORT_TRACE }, { ".trace", PS_EXPORT_TRACE }, { ".dot", PS_EXPORT_DOT },
    { ".gv", PS_EXPORT_DOT },           { ".svg", PS_EXPORT_SVG },     { ".png", PS_EXPORT_PNG },
    { ".json", PS_EXPORT_JSON },
  };
  for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
    if (ends_with (path, map[i].ext)) {
      *out = map[i].f;
      return 0;
    }
  return PS_EINVAL;
}

static double
now (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

/* Everything a writer may need. */
typedef struct job {
  const ps_plan *p;
  const ps_export_options *o;
  ps_device dev;
  ps_scene scene;
  bool has_scene;
  ps_timeline tl;   /* the simulated run */
  bool has_tl;
  const ps_timeline *run; /* the run shown: tl, or the caller's */
  ps_diagnosis dg;
  bool has_dg;
  ps_figures fig;
  bool has_fig;
  ps_memory_map mem;
  bool has_mem;
} job;

static int
write_job (FILE *out, void *ctx)
{
  job *j = ctx;
  ps_export_view v = j->o->view;
  ps_timeline_layers layers = { j->run, &j->dg, NULL, NULL, &j->fig, j->p };
  ps_timeline_picture_options po;
  ps_timeline_picture_options_init (&po);
  po.theme = j->o->view_options.theme;
  po.color = j->o->view_options.color;
  ps_theme theme = j->o->view_options.theme;
  switch (j->o->format) {
  case PS_EXPORT_TRACE:
    return ps_trace_write (j->run, &j->dg, out);
  case PS_EXPORT_DOT:
    if (v == PS_EXPORT_TIMELINE)
      return ps_timeline_write_dot (&layers, out);
    if (v == PS_EXPORT_MEMORY)
      return ps_memory_write_dot (&j->mem, out);
    return ps_scene_write_dot (&j->scene, out);
  case PS_EXPORT_SVG:
    if (v == PS_EXPORT_TIMELINE)
      return ps_timeline_write_svg (&layers, &po, out);
    if (v == PS_EXPORT_MEMORY)
      return ps_memory_write_svg (&j->mem, theme, out);
    return ps_scene_write_svg (&j->scene, out);
  case PS_EXPORT_PNG:
    if (v == PS_EXPORT_TIMELINE)
      return ps_timeline_write_png (&layers, &po, out);
    if (v == PS_EXPORT_MEMORY)
      return ps_memory_write_png (&j->mem, theme, out);
    return ps_scene_write_png (&j->scene, out);
  case PS_EXPORT_JSON:
    if (v == PS_EXPORT_PLAN)
      return ps_plan_write_json (j->p, out);
    if (v == PS_EXPORT_TIMELINE)
      return ps_timeline_write_json (j->run, &j->dg, out);
    if (v == PS_EXPORT_MEMORY)
      return ps_memory_write_json (&j->mem, out);
    return ps_scene_write_json (&j->scene, "dag", j->p->graph->name, out);
  default:
    return PS_EINVAL;
  }
}

int
ps_export_write (const ps_plan *p, const ps_export_options *o, const char *path,
                 ps_export_stats *st, char *err, size_t errlen)
{
  ps_export_stats dummy;
  if (!st)
    st = &dummy;
  memset (st, 0, sizeof *st);
  if (errlen)
    err[0] = '\0';
  if ((unsigned) o->view >= PS_EXPORT_VIEW__COUNT
      || (unsigned) o->format >= PS_EXPORT_FORMAT__COUNT || !p || !p->graph) {
    snprintf (err, errlen, "invalid export options");
    return PS_EINVAL;
  }
  job j;
  memset (&j, 0, sizeof j);
  j.p = p;
  j.o = o;
  ps_scene_init (&j.scene);
  int ret = 0;

  if (o->device) {
    j.dev = *o->device;
  } else {
    ps_diag diag;
    ps_diag_init (&diag, "device");
    const char *name = p->graph->device && *p->graph->device ? p->graph->device : NULL;
    if (ps_device_find (&j.dev, name, &diag) < 0 && ps_device_find (&j.dev, NULL, &diag) < 0
        && ps_device_builtin_count () > 0)
      j.dev = *ps_device_builtin (0);
    ps_diag_free (&diag);
  }

  bool needs_timeline = !(o->view == PS_EXPORT_PLAN && o->format == PS_EXPORT_JSON);
  bool needs_scene = (o->view == PS_EXPORT_DAG || o->view == PS_EXPORT_PLAN)
                     && o->format != PS_EXPORT_TRACE && o->format != PS_EXPORT_JSON;
  needs_scene |= o->view == PS_EXPORT_DAG && o->format == PS_EXPORT_JSON;
  bool needs_layout = needs_scene && o->format != PS_EXPORT_DOT;

  /* One simulated run: every view shows its figures. */
  double t0 = now ();
  if (needs_timeline) {
    ps_timeline_init (&j.tl, PS_TL_SIMULATED);
    j.has_tl = true;
    j.run = o->timeline ? o->timeline : &j.tl;
    ret = o->timeline ? 0 : ps_simulate (p, &j.dev, &j.tl);
    if (ret == 0) {
      ret = ps_diagnose (&j.dg, j.run);
      j.has_dg = ret == 0;
    }
    if (ret == 0) {
      ret = ps_figures_build (&j.fig, p, j.run, &j.dg);
      j.has_fig = ret == 0;
    }
    if (ret == 0 && o->view == PS_EXPORT_MEMORY && o->format != PS_EXPORT_TRACE) {
      ret = ps_memory_map_build (&j.mem, p, &j.fig);
      j.has_mem = ret == 0;
    }
    if (ret < 0)
      snprintf (err, errlen, "cannot simulate the plan: %s", ps_strerror (ret));
    st->simulate_s = now () - t0;
  }
  if (ret == 0 && needs_scene) {
    double t2 = now ();
    ps_view_options vo = o->view_options;
    vo.figures = &j.fig;
    if (ret == 0)
      ret = o->view == PS_EXPORT_DAG ? ps_dag_view_build (&j.scene, p->graph, p, &vo)
                                     : ps_plan_view_build (&j.scene, p, &vo);
    j.has_scene = true;
    st->build_s = now () - t2;
    st->boxes = j.scene.n_nodes;
    if (ret < 0)
      snprintf (err, errlen, "cannot build the %s view: %s", ps_export_view_name (o->view),
                ps_strerror (ret));
  }
  if (ret == 0 && needs_layout) {
    ret = ps_layout_scene (&j.scene, err, errlen);
    st->layout_s = j.scene.layout_seconds;
  }
  if (ret == 0) {
    double t3 = now ();
    char why[256] = "";
    if (strcmp (path, "-") == 0)
      ret = ps_file_write_stdout (write_job, &j, why, sizeof why);
    else
      ret = ps_file_write_atomic (path, write_job, &j, why, sizeof why);
    if (ret < 0 && why[0])
      snprintf (err, errlen, "%s", why);
    else if (ret < 0)
      snprintf (err, errlen, "cannot write %s: %s", path, ps_strerror (ret));
    st->write_s = now () - t3;
  }

  ps_scene_free (&j.scene);
  if (j.has_fig)
    ps_figures_free (&j.fig);
  if (j.has_mem)
    ps_memory_map_free (&j.mem);
  if (j.has_dg)
    ps_diagnosis_free (&j.dg);
  if (j.has_tl)
    ps_timeline_free (&j.tl);
  return ret;
}
