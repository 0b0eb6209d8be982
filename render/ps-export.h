/* ps-export.h: the `export` command's logic (spec/cli.md): every view
 * (dag, plan, timeline, memory) in every format (dot, svg, png, json,
 * trace), written all or nothing.
 *
 *            dot                svg / png        json                  trace
 *  dag       the DAG scene      drawn            layout document       Chrome trace
 *  plan      the plan scene     drawn            plan document         of the simulated
 *  timeline  pinned positions   drawn            timeline document     run, for every
 *  memory    pinned positions   drawn            memory document       view
 *
 * Timelines and memory maps come from simulating the plan on a device
 * profile (ps-sim.h); the DAG and plan views colour durations from the
 * same cost model. */
#ifndef PS_EXPORT_H
#define PS_EXPORT_H

#include <stddef.h>

#include "ps-view.h"
#include "ps-device.h"
#include "ps-plan.h"

typedef enum ps_export_view {
  PS_EXPORT_DAG = 0,
  PS_EXPORT_PLAN,
  PS_EXPORT_TIMELINE,
  PS_EXPORT_MEMORY,
  PS_EXPORT_VIEW__COUNT
} ps_export_view;

typedef enum ps_export_format {
  PS_EXPORT_DOT = 0,
  PS_EXPORT_SVG,
  PS_EXPORT_PNG,
  PS_EXPORT_JSON,
  PS_EXPORT_TRACE,
  PS_EXPORT_FORMAT__COUNT
} ps_export_format;

typedef struct ps_export_options {
  ps_export_view view;
  ps_export_format format;
  ps_view_options view_options; /* colours, theme and size thresholds (the figures are
                                   the export's simulated run) */
  const ps_device *device;      /* NULL: the graph's device, else the default */
  /* The run every view shows (a measured run of the plan); NULL: the plan
   * simulated on the device. */
  const ps_timeline *timeline;
} ps_export_options;

void ps_export_options_init (ps_export_options *o);

/* Where the time went, for --timing. */
typedef struct ps_export_stats {
  double simulate_s, build_s, layout_s, write_s;
  uint32_t boxes; /* boxes of a DAG or plan scene */
} ps_export_stats;

int ps_export_view_parse (const char *name, ps_export_view *out);
int ps_export_format_parse (const char *name, ps_export_format *out);
const char *ps_export_view_name (ps_export_view v);
const char *ps_export_format_name (ps_export_format f);
/* The format a file name suggests (.dot .gv .svg .png .json; .trace.json
 * and .trace are traces); PS_EINVAL when none. */
int ps_export_format_from_path (const char *path, ps_export_format *out);

/* Writes view o->view of p in o->format to path ("-": standard output),
 * all or nothing.  On failure returns a negative code and says why in err.
 * st (may be NULL) receives timings. */
int ps_export_write (const ps_plan *p, const ps_export_options *o, const char *path,
                     ps_export_stats *st, char *err, size_t errlen);

#endif
