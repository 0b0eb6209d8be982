/* ps-cupti-map.h: CUPTI activity records -> measured times of plan steps.
 *
 * Streams mode: the host pushes an external correlation id around every
 * step it issues, (iteration + 1) << 32 | (step + 1); CUPTI reports
 * CUpti_ActivityExternalCorrelation records that tie each API call's
 * correlation id to it, and the kernel, memcpy and memset records carry
 * that correlation id.  Graph mode: the id pushed around each graph launch
 * is (iteration + 1) << 32, and the step comes from the record's graph node
 * id, which the resource callbacks tied to the step being captured (and to
 * the clones made when the graph was instantiated).  Iterations at or past
 * n_iterations (traced warm-up runs) are ignored.  Times become relative
 * to the iteration's origin (the CUPTI timestamp taken just before the host
 * began issuing it).  Records arrive in any order; everything is resolved
 * by ps_cupti_map_finish with sorted arrays.  Only the GPU backend has
 * this (it needs the CUPTI headers), but it needs no GPU. */
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

typedef struct ps_cupti_map {
  ps_profile_mode mode;
  uint32_t n_steps, n_iterations;
  uint64_t *origin; /* per iteration */
  ps__cupti_rec *recs;
  uint32_t n_recs, recs_cap;
  ps__cupti_ext *exts;
  uint32_t n_exts, exts_cap;
  ps__cupti_node *nodes, *clones;
  uint32_t n_nodes, nodes_cap, n_clones, clones_cap;
  ps__cupti_host *hosts;
  uint32_t n_hosts, hosts_cap;
  uint64_t matched, unmatched, sync_records, other_records;
} ps_cupti_map;

int ps_cupti_map_init (ps_cupti_map *m, ps_profile_mode mode, uint32_t n_steps,
                       uint32_t n_iterations);
void ps_cupti_map_free (ps_cupti_map *m);

uint64_t ps_cupti_external_id (uint32_t iteration, uint32_t step);
uint64_t ps_cupti_external_graph_id (uint32_t iteration);

void ps_cupti_map_origin (ps_cupti_map *m, uint32_t iteration, uint64_t timestamp);
int ps_cupti_map_node (ps_cupti_map *m, uint64_t node_id, uint32_t step);
int ps_cupti_map_clone (ps_cupti_map *m, uint64_t original_id, uint64_t clone_id);
int ps_cupti_map_host (ps_cupti_map *m, uint32_t iteration, uint32_t step, uint64_t start,
                       uint64_t end);
/* One activity record of any kind (others are counted and ignored). */
int ps_cupti_map_record (ps_cupti_map *m, const CUpti_Activity *r);

/* Resolves everything into t (ps_step_times_init with the map's sizes). */
int ps_cupti_map_finish (ps_cupti_map *m, ps_step_times *t);

#endif
