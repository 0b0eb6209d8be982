/* ps-verify.h: an independent checker for plans.
 *
 * It trusts nothing the planner computed beyond the plan itself (steps in
 * issue order, their streams, nodes and events, and buffer offsets) and
 * re-derives happens-before by CUDA semantics: a stream runs its steps in
 * order; an event wait orders after the most recent record of that event
 * issued before it.  It checks that every node is in exactly one step, that
 * every dependency edge is ordered, that pins are honoured, that streams
 * stay below the option, and that pooled buffers sharing bytes are used in
 * disjoint phases. */
#ifndef PS_VERIFY_H
#define PS_VERIFY_H

#include "ps-plan.h"

typedef void (*ps_verify_report_fn) (void *ctx, const char *message);

/* Returns the number of violations found (0: the plan is valid); calls
 * report for at most max_reports of them, one message each. */
size_t ps_plan_verify (const ps_plan *p, ps_verify_report_fn report, void *ctx, size_t max_reports);

#endif
