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
 * report for at most max_reports of them, one message each (one line, no
 * newline), e.g.
 *
 *   node "k2" is in no step
 *   step #4: wait on event 2 that was never recorded before it
 *   dependency fc1 -> act (RAW on buffer h) is not ordered: stream 0 step #3 and stream 1 step #5
 *   pooled buffers "a" and "b" share bytes [0, 256) but their uses are not ordered: ...
 *
 * Steps are named by their issue index.  Where pooled buffers conflict,
 * one pair per conflict is reported, so the count is a lower bound on the
 * conflicting pairs.  Time and memory are linear in the plan, plus
 * O(K log K) for K pooled buffers and one clock row of streams entries
 * per wait that orders something new. */
size_t ps_plan_verify (const ps_plan *p, ps_verify_report_fn report, void *ctx, size_t max_reports);

#endif
