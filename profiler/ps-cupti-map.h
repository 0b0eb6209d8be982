/* ps-cupti-map.h: CUPTI activity records -> measured times of plan steps.
 *
 * Every iteration is bracketed by two CUPTI timestamps: the one taken just
 * before the host began issuing it (its origin) and the one taken after
 * the context synchronised.  Streams mode: the host pushes an external
 * correlation id around every step it issues, (iteration + 1) << 32 |
 * (step + 1); CUPTI writes a CUpti_ActivityExternalCorrelation record
 * ahead of the activity API record of each driver call made meanwhile (so
 * DRIVER activity must be enabled: without it there are none), and the
 * kernel, memcpy and memset records carry that call's correlation id.
 * Graph mode: the step comes from the record's graph node id, which the
 * resource callbacks tied to the step being captured (and clones, of
 * clones too, to their originals); the iteration comes from the window
 * its start falls in, not from correlation ids, which CUPTI before 13.1
 * Update 1 got wrong for graph launches after a process's first session.
 * Records of the traced warm-up run (iteration n_iterations) are counted
 * and ignored.  A record whose start and end are 0 was not timed (CUPTI's
 * "timestamp could not be collected"): its (iteration, step) is left out
 * of the step's median.  Times become relative to the iteration's origin.
 * Records arrive in any order; everything is resolved by
 * ps_cupti_map_finish with sorted arrays.  Only the GPU backend has this
 * (it needs the CUPTI headers), but it needs no GPU. */
#ifndef PS_CUPTI_MAP_H
#define PS_CUPTI_MAP_H

#include <cupti.h>

#include "ps-measure.h"
#include "ps-profiler.h"

typedef struct ps__cupti_rec {
  uint64_t start, end;
  uint64_t node_id; /* graph node id, or 0 */
  uint32_t corr;
  uint8_t kind;     /* CUpti_ActivityKind, narrowed */
} ps__cupti_rec;

typedef struct ps__cupti_ext {
  uint32_t corr;
  uint64_t ext;
} ps__cupti_ext;

typedef struct ps__cupti_node {
  uint64_t id;
  uint64_t step; /* a step, or for clones (before finish) the original's id */
} ps__cupti_node;

typedef struct ps__cupti_host {
  uint32_t iteration, step;
  uint64_t start, end;
} ps__cupti_host;

/* What a step's records are, for the counts by kind. */
typedef enum ps_cupti_work {
  PS_CUPTI_NONE = 0,
  PS_CUPTI_KERNEL,
  PS_CUPTI_MEMCPY,
  PS_CUPTI_MEMSET,
  PS_CUPTI_WORK__COUNT
} ps_cupti_work;

const char *ps_cupti_work_name (ps_cupti_work w);

typedef struct ps_cupti_map {
  ps_profile_mode mode;
  uint32_t n_steps, n_iterations;
  uint64_t *origin, *until; /* per iteration, the warm-up (n_iterations) last */
  uint32_t *expect;         /* per step: CUPTI records one iteration writes */
  uint8_t *expect_work;     /* per step: ps_cupti_work */
  ps__cupti_rec *recs;
  uint32_t n_recs, recs_cap;
  ps__cupti_ext *exts;
  uint32_t n_exts, exts_cap;
  ps__cupti_node *nodes, *clones;
  uint32_t n_nodes, nodes_cap, n_clones, clones_cap;
  ps__cupti_host *hosts;
  uint32_t n_hosts, hosts_cap;

  /* Counts, complete after ps_cupti_map_finish. */
  uint64_t matched;                             /* timed records tied to a measured step */
  uint64_t warmup;                              /* records of the traced warm-up run */
  uint64_t untimed;                             /* records with no timestamps */
  uint64_t unmatched, unmatched_by[PS_CUPTI_WORK__COUNT]; /* tied to no step */
  uint64_t expected;                            /* records the measured runs should write */
  uint64_t missing, missing_by[PS_CUPTI_WORK__COUNT];     /* expected, never seen */
  uint32_t unmeasured;                          /* steps with work but no timed iteration */
  uint32_t first_unmeasured;                    /* the first of them, or PS_NONE */
  uint64_t api_records, sync_records, other_records;
} ps_cupti_map;

int ps_cupti_map_init (ps_cupti_map *m, ps_profile_mode mode, uint32_t n_steps,
                       uint32_t n_iterations);
void ps_cupti_map_free (ps_cupti_map *m);

uint64_t ps_cupti_external_id (uint32_t iteration, uint32_t step);
uint64_t ps_cupti_external_graph_id (uint32_t iteration);

/* What step s writes per iteration: count records of one kind. */
void ps_cupti_map_expect (ps_cupti_map *m, uint32_t step, uint32_t count, ps_cupti_work work);
/* The window of an iteration (n_iterations: the traced warm-up run). */
void ps_cupti_map_origin (ps_cupti_map *m, uint32_t iteration, uint64_t timestamp);
void ps_cupti_map_until (ps_cupti_map *m, uint32_t iteration, uint64_t timestamp);
int ps_cupti_map_node (ps_cupti_map *m, uint64_t node_id, uint32_t step);
int ps_cupti_map_clone (ps_cupti_map *m, uint64_t original_id, uint64_t clone_id);
int ps_cupti_map_host (ps_cupti_map *m, uint32_t iteration, uint32_t step, uint64_t start,
                       uint64_t end);
/* One activity record of any kind (others are counted and ignored). */
int ps_cupti_map_record (ps_cupti_map *m, const CUpti_Activity *r);

/* Resolves everything into t (ps_step_times_init with the map's sizes)
 * and fills in the counts. */
int ps_cupti_map_finish (ps_cupti_map *m, ps_step_times *t);

#endif
