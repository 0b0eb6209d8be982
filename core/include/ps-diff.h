/* ps-diff.h: what changed between two runs (two traces, two plans'
 * simulations, or one of each), as HTA's TraceDiff compares traces.
 *
 * Work is matched by name (a trace op's kernel name, a plan step's kernel
 * function, else its node's name): per name, how many ops and how much
 * time in A and in B; the makespans; each stream's busy time (streams by
 * their id in each run); and the names that joined or left the critical
 * path (ps_diagnose's).  Names are sorted by how much their total time
 * changed, most first. */
#ifndef PS_DIFF_H
#define PS_DIFF_H

#include "ps-diagnose.h"
#include "ps-timeline.h"

typedef struct ps_diff_name {
  char *name;
  uint32_t count[2];
  double total_ns[2];
  uint8_t critical[2]; /* on the critical path of A, of B */
} ps_diff_name;

typedef struct ps_diff_stream {
  int64_t id;
  double busy_ns[2]; /* < 0: the stream is not in that run */
} ps_diff_stream;

typedef struct ps_diff {
  double makespan_ns[2];
  uint32_t ops[2];
  uint32_t n_names;
  ps_diff_name *names;
  uint32_t n_streams;
  ps_diff_stream *streams;
  uint32_t joined, left; /* names that joined or left the critical path */
} ps_diff;

/* a and b must be finished; da and db their diagnoses. */
int ps_diff_runs (const ps_timeline *a, const ps_diagnosis *da, const ps_timeline *b,
                  const ps_diagnosis *db, ps_diff *out);
void ps_diff_free (ps_diff *d);

/* What a name did on the critical path from A to B: "on both", "joined",
 * "left" or "". */
const char *ps_diff_name_critical_text (const ps_diff_name *n);

#endif
