/* ps-plan-output.h: a plan written out: the plan document of spec/cli.md
 * (`plan --json`, `export --view plan --format json`) and the text plan
 * for people. */
#ifndef PS_PLAN_OUTPUT_H
#define PS_PLAN_OUTPUT_H

#include <stdio.h>

#include "ps-plan.h"

/* The plan document of spec/cli.md. */
int ps_plan_write_json (const ps_plan *p, FILE *out);
/* The text plan: steps per stream, events, fused groups, summary. */
int ps_plan_write_text (const ps_plan *p, FILE *out);

#endif
