/* ps-cupti-map.c: CUPTI activity records -> step times (see
 * ps-cupti-map.h).  Record layouts are CUDA 13's: CUpti_ActivityKernel10,
 * CUpti_ActivityMemcpy6, CUpti_ActivityMemset4, CUpti_ActivityAPI,
 * CUpti_ActivitySynchronization2 and CUpti_ActivityExternalCorrelation. */
#include "ps-cupti-map.h"

#include <math.h>
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
  m->first_unmeasured = PS_NONE;
  m->origin = calloc ((size_t) n_iterations + 1, sizeof *m->origin);
  m->until = calloc ((size_t) n_iterations + 1, sizeof *m->until);
  m->expect = calloc (n_steps ? n_steps : 1, sizeof *m->expect);
  m->expect_work = calloc (n_steps ? n_steps : 1, 1);
  if (!m->origin || !m->until || !m->expect || !m->expect_work) {
    ps_cupti_map_free (m);
    return PS_ENOMEM;
  }
  return 0;
}

const char *
ps_cupti_work_name (ps_cupti_work w)
{
  switch (w) {
  case PS_CUPTI_KERNEL:
    return "kernel";
  case PS_CUPTI_MEMCPY:
    return "memcpy";
  case PS_CUPTI_MEMSET:
    return "memset";
  default:
    return "other";
  }
}

void
ps_cupti_map_expect (ps_cupti_map *m, uint32_t step, uint32_t count, ps_cupti_work work)
{
  if (step < m->n_steps) {
    m->expect[step] = count;
    m->expect_work[step] = (uint8_t) work;
  }
}

void
ps_cupti_map_free (ps_cupti_map *m)
{
  free (m->origin);
  free (m->until);
  free (m->expect);
  free (m->expect_work);
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
  if (iteration <= m->n_iterations)
    m->origin[iteration] = timestamp;
}

void
ps_cupti_map_until (ps_cupti_map *m, uint32_t iteration, uint64_t timestamp)
{
  if (iteration <= m->n_iterations)
    m->until[iteration] = timestamp;
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
  case CUPTI_ACTIVITY_KIND_DRIVER:
  case CUPTI_ACTIVITY_KIND_RUNTIME:
    /* The API records the external correlation records stand before. */
    m->api_records++;
    return 0;
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

static ps_cupti_work
work_of (uint8_t kind)
{
  switch (kind) {
  case CUPTI_ACTIVITY_KIND_KERNEL:
  case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    return PS_CUPTI_KERNEL;
  case CUPTI_ACTIVITY_KIND_MEMCPY:
    return PS_CUPTI_MEMCPY;
  case CUPTI_ACTIVITY_KIND_MEMSET:
    return PS_CUPTI_MEMSET;
  default:
    return PS_CUPTI_NONE;
  }
}

/* A clone's step: its original may be a clone itself (a graph cloned, then
 * instantiated); the chain ends at a node made during capture.  Clones are
 * sorted by id; a chain longer than the clones is a cycle. */
static const ps__cupti_node *
resolve_clone (const ps_cupti_map *m, uint32_t n_orig, uint64_t original)
{
  for (uint32_t hops = 0; hops <= m->n_clones; hops++) {
    const ps__cupti_node *o = find_node (m->nodes, n_orig, original);
    if (o)
      return o;
    const ps__cupti_node *c = find_node (m->clones, m->n_clones, original);
    if (!c)
      return NULL;
    original = c->step;
  }
  return NULL;
}

/* The iteration whose window [origin, until] holds t: windows are
 * disjoint, and order[] sorts them by origin.  PS_NONE when none does. */
static uint32_t
window_of (const ps_cupti_map *m, const uint32_t *order, uint32_t n, uint64_t t)
{
  uint32_t lo = 0, hi = n;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (m->origin[order[mid]] <= t)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo == 0)
    return PS_NONE;
  uint32_t it = order[lo - 1];
  /* A window never closed (a run that did not happen) holds nothing. */
  return m->until[it] > m->origin[it] && t <= m->until[it] ? it : PS_NONE;
}

static const ps_cupti_map *sort_map;

static int
cmp_origin (const void *a, const void *b)
{
  uint64_t x = sort_map->origin[*(const uint32_t *) a];
  uint64_t y = sort_map->origin[*(const uint32_t *) b];
  return x < y ? -1 : x > y;
}

static void
unmatched (ps_cupti_map *m, const ps__cupti_rec *rc)
{
  m->unmatched++;
  m->unmatched_by[work_of (rc->kind)]++;
}

/* The (iteration, step) a record belongs to; false when it belongs to
 * none (then it was counted as unmatched or as the warm-up's). */
static bool
place (ps_cupti_map *m, const ps__cupti_rec *rc, const uint32_t *order, uint32_t n_windows,
       uint32_t *iteration, uint32_t *step)
{
  uint64_t it, st;
  if (m->mode == PS_PROFILE_GRAPH) {
    const ps__cupti_node *nd = rc->node_id ? find_node (m->nodes, m->n_nodes, rc->node_id) : NULL;
    bool timed = rc->start != 0 && rc->end != 0;
    uint32_t w = nd && timed ? window_of (m, order, n_windows, rc->start) : PS_NONE;
    if (!nd || (w == PS_NONE && timed)) {
      unmatched (m, rc);
      return false;
    }
    it = w; /* an untimed record: placed by its step alone, below */
    st = nd->step;
  } else {
    const ps__cupti_ext *e = find_ext (m, rc->corr);
    if (!e || (e->ext >> 32) == 0 || (e->ext & 0xffffffffu) == 0) {
      unmatched (m, rc);
      return false;
    }
    it = (e->ext >> 32) - 1;
    st = (e->ext & 0xffffffffu) - 1;
  }
  if (st >= m->n_steps || (it != PS_NONE && it > m->n_iterations)) {
    unmatched (m, rc);
    return false;
  }
  if (it == m->n_iterations) {
    m->warmup++;
    return false;
  }
  *iteration = (uint32_t) it;
  *step = (uint32_t) st;
  return true;
}

int
ps_cupti_map_finish (ps_cupti_map *m, ps_step_times *t)
{
  if (t->n_steps != m->n_steps || t->n_iterations != m->n_iterations)
    return PS_EINVAL;
  if (m->n_exts)
    ps_array_sort (m->exts, m->n_exts, sizeof *m->exts, cmp_ext);

  /* Graph node ids: the nodes made during capture, then their clones. */
  if (m->n_nodes)
    ps_array_sort (m->nodes, m->n_nodes, sizeof *m->nodes, cmp_node);
  if (m->n_clones)
    ps_array_sort (m->clones, m->n_clones, sizeof *m->clones, cmp_node);
  uint32_t n_orig = m->n_nodes;
  for (uint32_t i = 0; i < m->n_clones; i++) {
    const ps__cupti_node *o = resolve_clone (m, n_orig, m->clones[i].step);
    if (!o)
      continue;
    int r = ps_cupti_map_node (m, m->clones[i].id, (uint32_t) o->step);
    if (r != 0)
      return r;
  }
  if (m->n_nodes)
    ps_array_sort (m->nodes, m->n_nodes, sizeof *m->nodes, cmp_node);

  /* The windows by time, and per (iteration, step) the records seen. */
  uint32_t n_windows = m->n_iterations + 1;
  uint32_t *order = malloc ((size_t) n_windows * sizeof *order);
  size_t cells = (size_t) m->n_iterations * m->n_steps;
  uint32_t *seen = calloc (cells ? cells : 1, sizeof *seen);
  uint32_t *untimed = calloc (cells ? cells : 1, sizeof *untimed);
  uint32_t *untimed_steps = calloc (m->n_steps ? m->n_steps : 1, sizeof *untimed_steps);
  if (!order || !seen || !untimed || !untimed_steps) {
    free (order);
    free (seen);
    free (untimed);
    free (untimed_steps);
    return PS_ENOMEM;
  }
  for (uint32_t i = 0; i < n_windows; i++)
    order[i] = i;
  sort_map = m;
  ps_array_sort (order, n_windows, sizeof *order, cmp_origin);
  sort_map = NULL;

  for (uint32_t i = 0; i < m->n_recs; i++) {
    const ps__cupti_rec *rc = &m->recs[i];
    uint32_t it, st;
    if (!place (m, rc, order, n_windows, &it, &st))
      continue;
    bool timed = rc->start != 0 && rc->end != 0 && rc->end >= rc->start;
    if (!timed) {
      m->untimed++;
      if (it == PS_NONE)
        untimed_steps[st]++; /* graph mode: which run it came from is unknown */
      else
        untimed[(size_t) it * m->n_steps + st]++;
      continue;
    }
    seen[(size_t) it * m->n_steps + st]++;
    uint64_t o = m->origin[it];
    ps_step_times_add (t, it, st, (double) rc->start - (double) o, (double) rc->end - (double) o);
    m->matched++;
  }

  /* An (iteration, step) that lacks a record is not measured: a fused
   * group's parts, say, must all be there.  A graph-mode untimed record
   * cannot be placed in a run, so every run of its step that is one short
   * stands for it. */
  for (uint32_t st = 0; st < m->n_steps; st++) {
    uint32_t want = m->expect[st], measured = 0;
    if (want == 0)
      continue;
    uint64_t absent = 0;
    for (uint32_t it = 0; it < m->n_iterations; it++) {
      size_t c = (size_t) it * m->n_steps + st;
      uint32_t present = seen[c] + untimed[c];
      for (; untimed_steps[st] > 0 && present < want; present++) {
        untimed_steps[st]--;
        untimed[c]++;
      }
      if (seen[c] == want && untimed[c] == 0)
        measured++;
      else
        t->start[c] = t->end[c] = NAN;
      if (present < want)
        absent += want - present;
    }
    m->expected += (uint64_t) want * m->n_iterations;
    m->missing += absent;
    m->missing_by[m->expect_work[st] < PS_CUPTI_WORK__COUNT ? m->expect_work[st] : 0] += absent;
    if (measured == 0 && m->unmeasured++ == 0)
      m->first_unmeasured = st;
  }
  free (order);
  free (seen);
  free (untimed);
  free (untimed_steps);

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
