/* ps-timeline-output.h: a timeline and its diagnosis written out: the
 * timeline document of spec/cli.md (`simulate --json`, `analyze --json`,
 * `profile --json`) and the report for people. */
#ifndef PS_TIMELINE_OUTPUT_H
#define PS_TIMELINE_OUTPUT_H

#include <stdio.h>

#include "ps-diagnose.h"
#include "ps-timeline.h"

/* The document of spec/cli.md ("format": "planscope-timeline"), with the
 * diagnosis: per-stream busy, stalled and idle time, stalls with what they
 * waited for and their causes, the critical path, and "help".  dg may be
 * NULL (then no critical path and no causes). */
int ps_timeline_write_json (const ps_timeline *tl, const ps_diagnosis *dg, FILE *out);
/* The same for people. */
int ps_timeline_write_text (const ps_timeline *tl, const ps_diagnosis *dg, FILE *out);

#endif
