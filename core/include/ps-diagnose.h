/* ps-diagnose.h: why a timeline took as long as it did.
 *
 * Per stream: busy, stalled and idle time (they add up to the makespan).
 * The critical path: starting from the work that ends last, each span's
 * predecessor is whatever bound its start: the previous work on its stream,
 * the work an event wait waited for, or, when the host issued it late, the
 * GPU work the host had blocked on (a synchronisation) before issuing it.
 * The simulator records these causes exactly; for imported traces they are
 * inferred from start times, stalls, launch times (CUPTI correlation) and
 * host synchronisations.  Every stall gets the chain of causes behind the
 * work it waited for.  "What would help": the work with the most time on
 * the critical path, idle streams, launch-bound stretches and heavy
 * stalls. */
#ifndef PS_DIAGNOSE_H
#define PS_DIAGNOSE_H

#include "ps-timeline.h"

typedef struct ps_stream_stats {
  double busy_ns, stalled_ns, idle_ns;
  uint32_t spans, stalls;
} ps_stream_stats;

typedef enum ps_help_kind {
  PS_HELP_SHORTEN = 0, /* work that dominates the critical path */
  PS_HELP_LAUNCH_BOUND,/* the critical path waits for the host */
  PS_HELP_IDLE_STREAM, /* a stream that does little */
  PS_HELP_STALLS,      /* a stream that spends much time stalled */
} ps_help_kind;

typedef struct ps_help {
  uint8_t kind;     /* ps_help_kind */
  uint32_t span;    /* SHORTEN: a span of that work (see ps_diagnose_work_key) */
  uint32_t stream;  /* IDLE_STREAM, STALLS: the stream; STALLS: also on_stream below */
  uint32_t on_stream; /* STALLS: the stream it mostly waits for, or PS_NONE */
  uint32_t count;   /* SHORTEN: spans of that work on the critical path */
  double ns;        /* SHORTEN: their time on the critical path; others: the time concerned */
  double gain_ns;   /* measured makespan saving (ps_sim_gain), or < 0 when not known */
} ps_help;

#define PS_DIAG_MAX_HELP 16
#define PS_DIAG_CHAIN_MAX 8

/* Every time work waited, and what for.  EVENT: a stream sat at an event
 * wait (a stall of the timeline).  RESOURCE: work was ready but the SMs or
 * a copy engine were held by other work.  HOST: the stream sat idle until
 * the host issued its next work. */
typedef enum ps_wait_kind {
  PS_WAIT_KIND_EVENT = 0,
  PS_WAIT_KIND_RESOURCE,
  PS_WAIT_KIND_HOST,
} ps_wait_kind;

/* The first cause of a wait that is not "stream order": ENUM and its name
 * in the timeline document.  PRODUCER: the work waited for ran long (the
 * culprit, with its duration).  RESOURCE: the SMs or a copy engine were
 * held by the culprit.  ORDER: the plan orders the waiting work after the
 * culprit, which it does not depend on (resource order).  LATE_RECORD:
 * the event was recorded after the culprit although the work depends only
 * on earlier work (dep).  HOST: the host issued the culprit after its
 * inputs were ready.  An ORDER or LATE_RECORD wait the memory pool relies
 * on (it gives the waiting work bytes the culprit still uses) names the
 * two buffers (ps_wait.buffer, shared_with). */
#define PS_CAUSE_MAP(X)            \
  X (UNKNOWN, "unknown")           \
  X (PRODUCER, "producer")         \
  X (RESOURCE, "resource")         \
  X (ORDER, "order")               \
  X (LATE_RECORD, "late_record")   \
  X (HOST, "host")

typedef enum ps_cause {
#define PS__CAUSE_ENUM(e, name) PS_CAUSE_##e,
  PS_CAUSE_MAP (PS__CAUSE_ENUM)
#undef PS__CAUSE_ENUM
  PS_CAUSE__COUNT
} ps_cause;

const char *ps_cause_name (ps_cause c);

typedef struct ps_wait {
  double start_ns, end_ns;
  uint32_t stream;
  uint8_t kind;  /* ps_wait_kind */
  uint8_t cause; /* ps_cause */
  uint32_t stall;   /* EVENT: the stall (index into tl->stalls); else PS_NONE */
  uint32_t span;    /* the work that waited, or PS_NONE */
  uint32_t culprit; /* the span to blame, or PS_NONE */
  uint32_t dep;     /* LATE_RECORD: the span the waiting work does depend on */
  /* ORDER, LATE_RECORD: pooled buffers of the waiting work that get
   * bytes of buffers the culprit uses (the pool relies on this wait), or
   * PS_NONE. */
  uint32_t buffer, shared_with;
  /* ORDER, LATE_RECORD: the time the wait takes beyond what the
   * waiting work's dependencies need; else the wait's length. */
  double cost_ns;
  /* EVENT waits: the work the event covered (what the waiting work waits
   * for), and, for RESOURCE and HOST causes, the work in its stream-order
   * chain that waited for the resource or the host; else PS_NONE. */
  uint32_t producer, via;
} ps_wait;

typedef struct ps_diagnosis {
  uint32_t n_streams;
  ps_stream_stats *streams;
  double makespan_ns;

  /* Per span: what bound its start (ps_bound) and the span behind it. */
  uint8_t *bound;
  uint32_t *pred;

  /* Span ids from the start of the run to the last work. */
  uint32_t n_critical;
  uint32_t *critical;
  double critical_work_ns; /* time the path spends in its spans */
  double host_bound_ns;    /* time the path waits for the host to issue work */

  /* Per stall: its chain of causes, the waited-for span first, then back
   * along what bound each start while it was "stream order" and still
   * within the stall, ending at the first span bound otherwise (at most
   * PS_DIAG_CHAIN_MAX).  Stall i has chain[chain_off[i] .. chain_off[i + 1]). */
  uint32_t *chain_off;
  uint32_t *chain;

  /* Every wait, stalls first in stall order (stall i is waits[i]), then
   * resource and host waits by stream and time. */
  uint32_t n_waits;
  ps_wait *waits;

  uint32_t n_help;
  ps_help help[PS_DIAG_MAX_HELP];
} ps_diagnosis;

/* Which work a span is, for grouping "what would help": spans with equal
 * keys run the same kernel function (or, imported, have the same name);
 * fused groups, copies and other work are each their own. */
uint64_t ps_diagnose_work_key (const ps_timeline *tl, uint32_t span);

/* Diagnoses a finished timeline (ps_timeline_finish). */
int ps_diagnose (ps_diagnosis *dg, const ps_timeline *tl);

/* The same diagnosis as far as the critical path (bound, pred, critical,
 * critical_work_ns, host_bound_ns): what a summary that shows only the
 * path needs, without the statistics, chains, waits and help, which are
 * left empty. */
int ps_diagnose_path (ps_diagnosis *dg, const ps_timeline *tl);

/* One sentence on why wait w happened: what waited, for how long, for
 * what, and the first cause that is not stream order ("filter1 waits
 * 166 µs for gain0 + clip0 on stream 1, which it does not depend on: ...").
 * Writes at most cap bytes; returns buf.  The CLI, the exports and the app
 * all say it this way. */
const char *ps_diagnose_wait_text (const ps_timeline *tl, const ps_diagnosis *dg, uint32_t w,
                                   char *buf, size_t cap);
void ps_diagnosis_free (ps_diagnosis *dg);

#endif
