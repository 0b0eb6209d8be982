/* ps-figures.h: the figures every view, export and CLI line shows of a
 * plan and its timeline, derived once.
 *
 * A node's duration and start come from the span that ran it in the
 * timeline shown (measured when there is one, else predicted on the plan's
 * device) and say which they are; a node in a conditional branch the
 * graph's `assume` leaves out is "not run"; a node no model can time (an
 * imported kernel without sizes) is "unknown", never 0 ns.  The critical
 * path is the timeline's (ps-diagnose.h): the nodes of its spans, in
 * order.  A buffer lives from the first to the last span that touches it.
 * The DAG, timeline and memory views, the inspector, the status line and
 * every export read these arrays; none recomputes them. */
#ifndef PS_FIGURES_H
#define PS_FIGURES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ps-diagnose.h"
#include "ps-plan.h"
#include "ps-timeline.h"

/* Where a node's duration comes from: ENUM and the word views show. */
#define PS_FIGURE_SOURCE_MAP(X)    \
  X (NONE, "no work")              \
  X (MEASURED, "measured")         \
  X (PREDICTED, "predicted")       \
  X (UNKNOWN, "unknown")           \
  X (ESTIMATED, "estimated")       \
  X (NOT_RUN, "not run")

typedef enum ps_figure_source {
#define PS__FIGURE_SOURCE_ENUM(e, name) PS_FIGURE_##e,
  PS_FIGURE_SOURCE_MAP (PS__FIGURE_SOURCE_ENUM)
#undef PS__FIGURE_SOURCE_ENUM
  PS_FIGURE__COUNT
} ps_figure_source;

const char *ps_figure_source_name (ps_figure_source s);

typedef struct ps_figures {
  const ps_plan *plan;
  const ps_timeline *tl;
  const ps_diagnosis *dg; /* may be NULL: then no critical path */
  uint32_t n_nodes, n_buffers;

  /* Per node. */
  uint32_t *node_span;  /* the span of tl that ran it, or PS_NONE */
  double *node_start;   /* ns from the start of the run; NaN without a span */
  double *node_ns;      /* its span's duration (a fused group's whole span); NaN when unknown */
  uint8_t *node_source; /* ps_figure_source */
  int32_t *node_stream; /* its plan stream, or -1 */
  uint8_t *node_critical;

  /* Per span of tl: on the critical path. */
  uint8_t *span_critical;

  /* The critical path: its nodes in order, and its spans' work. */
  uint32_t *critical;
  uint32_t n_critical;
  double critical_work_ns;

  /* Per buffer: first and last use in tl, and the spans of those uses;
   * NaN and PS_NONE when no span touches it. */
  double *buf_first, *buf_last;
  uint32_t *buf_first_span, *buf_last_span;

  double makespan_ns;
  double max_node_ns; /* the longest known node duration, for colour scales */
} ps_figures;

/* Derives the figures of plan p (may be NULL: then streams are -1) and
 * timeline tl with its diagnosis dg (may be NULL).  tl's spans name graph
 * nodes (tl->graph).  Returns 0 or PS_ENOMEM; *f is then safe to free. */
int ps_figures_build (ps_figures *f, const ps_plan *p, const ps_timeline *tl,
                      const ps_diagnosis *dg);
void ps_figures_free (ps_figures *f);

/* What every view says of node v's duration: "17.4 µs", "unknown",
 * "not run (assume: then)", or "" for a node without work.  Returns buf. */
const char *ps_figures_node_text (const ps_figures *f, const ps_graph *g, uint32_t v, char *buf,
                                  size_t cap);

/* What changed for one node between two runs of the same graph: [0] is
 * before, [1] after; NaN where a run has no figure. */
typedef struct ps_figures_delta {
  uint32_t node;
  int32_t stream[2];
  double start[2], ns[2];
  uint8_t source[2]; /* ps_figure_source */
  bool critical[2];
} ps_figures_delta;

/* The nodes whose stream, start, duration or critical-path membership
 * differ between figures a and b of graphs with the same nodes, the
 * largest change of finish time first (then node order).  *out (free)
 * gets them, *n their count. */
int ps_figures_diff (const ps_figures *a, const ps_figures *b, ps_figures_delta **out,
                     uint32_t *n);

/* The critical path in words, as every view says it: "9 nodes, 24.1 µs of
 * work in the 112 µs predicted run" ("" without one).  Returns buf. */
const char *ps_figures_critical_text (const ps_figures *f, char *buf, size_t cap);

#endif
