/* ps-cupti-map.c: CUPTI activity records -> step times (see
 * ps-cupti-map.h).  Record layouts are CUDA 13's: CUpti_ActivityKernel10,
 * CUpti_ActivityMemcpy6, CUpti_ActivityMemset4,
 * CUpti_ActivitySynchronization2 and CUpti_ActivityExternalCorrelation. */
#include "ps-cupti-map.h"

#include <stdlib.h>
#include <string.h>

#include "ps-array.h"

int
ps_cupti_map_init (ps_cupti_map *m, ps_profile_mode mode, uint32_t n_steps, uint32_t n_iterations)
{
  memset (m, 0, sizeof *m);
  m->mode = mode;
  m->n_steps = n_steps;
  m->n_iterations = n_iterations;
  m->origin = calloc (n_iterations ? n_iterations : 1, sizeof *m->origin);
  return m->origin ? 0 : PS_ENOMEM;
}

void
ps_cupti_map_free (ps_cupti_map *m)
{
  free (m->origin);
  free (m->recs);
  free (m->exts);
  free (m->nodes);
  free (m->clones);
  free (m->hosts);
  memset (m, 0, sizeof *m);
}

uint64_t
ps_cupti_external_id (uint32_t iteration, uint32_t step)
{
  return ((uint64_t) iteration + 1) << 32 | ((uint64_t) step + 1);
}

uint64_t
ps_cupti_external_graph_id (uint32_t iteration)
{
  return ((uint64_t) iteration + 1) << 32;
}

void
ps_cupti_map_origin (ps_cupti_map *m, uint32_t iteration, uint64_t timestamp)
{
  if (iteration < m->n_iterations)
    m->origin[iteration] = timestamp;
}

int
ps_cupti_map_node (ps_cupti_map *m, uint64_t node_id, uint32_t step)
{
  int r = PS_ARRAY_RESERVE (m->nodes, m->nodes_cap, (uint64_t) m->n_nodes + 1);
  if (r == 0)
    m->nodes[m->n_nodes++] = (ps__cupti_node){ node_id, step };
  return r;
}

int
ps_cupti_map_clone (ps_cupti_map *m, uint64_t original_id, uint64_t clone_id)
{
  int r = PS_ARRAY_RESERVE (m->clones, m->clones_cap, (uint64_t) m->n_clones + 1);
  if (r == 0)
    m->clones[m->n_clones++] = (ps__cupti_node){ clone_id, original_id };
  return r;
}

int
ps_cupti_map_host (ps_cupti_map *m, uint32_t iteration, uint32_t step, uint64_t start,
                   uint64_t end)
{
  int r = PS_ARRAY_RESERVE (m->hosts, m->hosts_cap, (uint64_t) m->n_hosts + 1);
  if (r == 0)
    m->hosts[m->n_hosts++] = (ps__cupti_host){ iteration, step, start, end };
  return r;
}

static int
add_rec (ps_cupti_map *m, uint8_t kind, uint64_t start, uint64_t end, uint32_t corr,
         uint64_t node_id)
{
  int r = PS_ARRAY_RESERVE (m->recs, m->recs_cap, (uint64_t) m->n_recs + 1);
  if (r == 0)
    m->recs[m->n_recs++] = (ps__cupti_rec){ start, end, node_id, corr, kind };
  return r;
}

int
ps_cupti_map_record (ps_cupti_map *m, const CUpti_Activity *r)
{
  switch (r->kind) {
  case CUPTI_ACTIVITY_KIND_KERNEL:
  case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
    const CUpti_ActivityKernel10 *k = (const CUpti_ActivityKernel10 *) r;
    return add_rec (m, (uint8_t) r->kind, k->start, k->end, k->correlationId, k->graphNodeId);
  }
  case CUPTI_ACTIVITY_KIND_MEMCPY: {
    const CUpti_ActivityMemcpy6 *c = (const CUpti_ActivityMemcpy6 *) r;
    return add_rec (m, (uint8_t) r->kind, c->start, c->end, c->correlationId, c->graphNodeId);
  }
  case CUPTI_ACTIVITY_KIND_MEMSET: {
    const CUpti_ActivityMemset4 *s = (const CUpti_ActivityMemset4 *) r;
    return add_rec (m, (uint8_t) r->kind, s->start, s->end, s->correlationId, s->graphNodeId);
  }
  case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
    /* Host-side waits (stream and context synchronisation, event waits as
     * API calls): they say when the host blocked, not when the GPU ran, so
     * stalls come from the plan and the work's times instead. */
    m->sync_records++;
    return 0;
  case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
    const CUpti_ActivityExternalCorrelation *e = (const CUpti_ActivityExternalCorrelation *) r;
    if (e->externalKind != CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0)
      return 0;
    int rc = PS_ARRAY_RESERVE (m->exts, m->exts_cap, (uint64_t) m->n_exts + 1);
    if (rc == 0)
      m->exts[m->n_exts++] = (ps__cupti_ext){ e->correlationId, e->externalId };
    return rc;
  }
  default:
    m->other_records++;
    return 0;
  }
}

static int
cmp_ext (const void *a, const void *b)
{
  uint32_t x = ((const ps__cupti_ext *) a)->corr, y = ((const ps__cupti_ext *) b)->corr;
  return x < y ? -1 : x > y;
}

static int
cmp_node (const void *a, const void *b)
{
  uint64_t x = ((const ps__cupti_node *) a)->id, y = ((const ps__cupti_node *) b)->id;
  return x < y ? -1 : x > y;
}

static const ps__cupti_ext *
find_ext (const ps_cupti_map *m, uint32_t corr)
{
  uint32_t lo = 0, hi = m->n_exts;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (m->exts[mid].corr < corr)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < m->n_exts && m->exts[lo].corr == corr ? &m->exts[lo] : NULL;
}

static const ps__cupti_node *
find_node (const ps__cupti_node *a, uint32_t n, uint64_t id)
{
  uint32_t lo = 0, hi = n;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (a[mid].id < id)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < n && a[lo].id == id ? &a[lo] : NULL;
}

int
ps_cupti_map_finish (ps_cupti_map *m, ps_step_times *t)
{
  if (t->n_steps != m->n_steps || t->n_iterations != m->n_iterations)
    return PS_EINVAL;
  if (m->n_exts)
    qsort (m->exts, m->n_exts, sizeof *m->exts, cmp_ext);

  /* Graph node ids: the nodes made during capture, then their clones. */
  if (m->n_nodes)
    qsort (m->nodes, m->n_nodes, sizeof *m->nodes, cmp_node);
  uint32_t n_orig = m->n_nodes;
  for (uint32_t i = 0; i < m->n_clones; i++) {
    const ps__cupti_node *o = find_node (m->nodes, n_orig, m->clones[i].step);
    if (!o)
      continue;
    int r = ps_cupti_map_node (m, m->clones[i].id, (uint32_t) o->step);
    if (r != 0)
      return r;
  }
  if (m->n_nodes)
    qsort (m->nodes, m->n_nodes, sizeof *m->nodes, cmp_node);

  for (uint32_t i = 0; i < m->n_recs; i++) {
    const ps__cupti_rec *rc = &m->recs[i];
    const ps__cupti_ext *e = find_ext (m, rc->corr);
    if (!e || (e->ext >> 32) == 0) {
      m->unmatched++;
      continue;
    }
    uint64_t iter = (e->ext >> 32) - 1;
    if (iter >= m->n_iterations)
      continue; /* a traced warm-up run */
    uint64_t step;
    if (m->mode == PS_PROFILE_GRAPH) {
      const ps__cupti_node *nd = rc->node_id ? find_node (m->nodes, m->n_nodes, rc->node_id) : NULL;
      if (!nd) {
        m->unmatched++;
        continue;
      }
      step = nd->step;
    } else {
      step = (e->ext & 0xffffffffu);
      if (step == 0) {
        m->unmatched++;
        continue;
      }
      step--;
    }
    if (step >= m->n_steps) {
      m->unmatched++;
      continue;
    }
    uint64_t o = m->origin[iter];
    ps_step_times_add (t, (uint32_t) iter, (uint32_t) step, (double) rc->start - (double) o,
                       (double) rc->end - (double) o);
    m->matched++;
  }
  for (uint32_t i = 0; i < m->n_hosts; i++) {
    const ps__cupti_host *h = &m->hosts[i];
    if (h->iteration >= m->n_iterations || h->step >= m->n_steps)
      continue;
    uint64_t o = m->origin[h->iteration];
    ps_step_times_add (t, h->iteration, h->step, (double) h->start - (double) o,
                       (double) h->end - (double) o);
  }
  return 0;
}
