/* ps-verify.c: the independent plan checker (see ps-verify.h).
 *
 * Happens-before is derived from the steps alone with vector clocks over
 * streams.  A step's clock says, per stream, the last step of that stream
 * it is known to follow.  Clocks change only at waits, so they are stored
 * per "epoch": each stream starts in an all-zero epoch and a wait that
 * learns something opens a new one; a step's clock is the epoch it was
 * issued in plus its own position.  Memory is (streams + waits) x streams
 * entries instead of steps x streams. */
#include "ps-verify.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ps-array.h"
#include "util/ps-rankset.h"

typedef struct vctx {
  const ps_plan *p;
  const ps_graph *g;
  ps_verify_report_fn report;
  void *ctx;
  size_t max_reports;
  size_t count;

  uint32_t S;           /* clock width: highest stream of any step + 1 */
  bool clocks;          /* false when ordering cannot be checked (see verify_steps) */
  uint32_t *node_step;  /* the step of each node, as found here */
  uint32_t *epoch_of;   /* per step */
  uint32_t *epochs;     /* n_epochs x S */
  uint32_t n_epochs;
  uint32_t epochs_cap;

  uint32_t *mark;       /* per buffer, for describing edges */
  uint32_t stamp;
} vctx;

static void
violation (vctx *c, const char *fmt, ...)
#if defined(__GNUC__)
  __attribute__ ((format (printf, 2, 3)))
#endif
  ;

static void
violation (vctx *c, const char *fmt, ...)
{
  c->count++;
  if (c->count > c->max_reports || !c->report)
    return;
  char buf[2048];
  va_list ap;
  va_start (ap, fmt);
  vsnprintf (buf, sizeof buf, fmt, ap);
  va_end (ap);
  c->report (c->ctx, buf);
}

static const char *
op_name (unsigned op)
{
  return op < PS_OP__COUNT ? ps_op_name ((ps_op) op) : "unknown op";
}

static inline uint32_t
clock_at (const vctx *c, uint32_t step, uint32_t t)
{
  if (t == c->p->steps[step].stream)
    return step + 1;
  return c->epochs[(size_t) c->epoch_of[step] * c->S + t];
}

/* a happens-before b (a != b). */
static inline bool
happens_before (const vctx *c, uint32_t a, uint32_t b)
{
  return a < b && clock_at (c, b, c->p->steps[a].stream) >= a + 1;
}

static int
new_epoch (vctx *c)
{
  uint64_t need = ((uint64_t) c->n_epochs + 1) * c->S;
  if (PS_ARRAY_RESERVE (c->epochs, c->epochs_cap, need) < 0)
    return PS_ENOMEM;
  c->n_epochs++;
  return 0;
}

/* (a) Steps: streams, ops, events, and which step holds each node.  Also
 * sizes the clocks. */
static void
verify_steps (vctx *c)
{
  const ps_plan *p = c->p;
  const ps_graph *g = c->g;
  uint32_t max_stream = 0;
  for (uint32_t i = 0; i < p->n_steps; i++) {
    const ps_step *st = &p->steps[i];
    if (st->stream >= p->options.streams)
      violation (c, "step #%u: stream %u is not below the stream count %u", i, st->stream,
                 p->options.streams);
    if (st->stream + 1u > max_stream)
      max_stream = st->stream + 1u;
    bool is_event = st->op == PS_OP_EVENT_RECORD || st->op == PS_OP_EVENT_WAIT;
    if (st->op >= PS_OP__COUNT) {
      violation (c, "step #%u: unknown op %u", i, st->op);
      continue;
    }
    if (is_event && (st->event == PS_NONE || st->event >= p->n_events))
      violation (c, "step #%u: %s of event %u, but the plan has %u events", i, op_name (st->op),
                 st->event, p->n_events);
    if ((uint64_t) st->nodes_begin + st->nodes_count > p->n_step_nodes) {
      violation (c, "step #%u: its nodes lie outside the plan's node list", i);
      continue;
    }
    if (st->nodes_count == 0 && !is_event)
      violation (c, "step #%u: a %s step with no nodes", i, op_name (st->op));
    if (st->nodes_count > 1 && st->op != PS_OP_KERNEL)
      violation (c, "step #%u: a %s step holds %u nodes; only kernels are fused", i,
                 op_name (st->op), st->nodes_count);
    for (uint32_t k = 0; k < st->nodes_count; k++) {
      uint32_t v = p->step_nodes[st->nodes_begin + k];
      if (v >= g->n_nodes) {
        violation (c, "step #%u: node id %u does not exist (the graph has %u nodes)", i, v,
                   g->n_nodes);
        continue;
      }
      if (c->node_step[v] != PS_NONE && c->node_step[v] != i) {
        violation (c, "node \"%s\" is in two steps: #%u and #%u", ps_node_name (g, v),
                   c->node_step[v], i);
        continue;
      }
      if (c->node_step[v] == i) {
        violation (c, "step #%u: node \"%s\" is listed twice", i, ps_node_name (g, v));
        continue;
      }
      c->node_step[v] = i;
      const ps_node *n = &g->nodes[v];
      if (n->op != st->op)
        violation (c, "step #%u: node \"%s\" is a%s %s but the step is a%s %s", i,
                   ps_node_name (g, v), n->op == PS_OP_EVENT_RECORD ? "n" : "", op_name (n->op),
                   st->op == PS_OP_EVENT_RECORD ? "n" : "", op_name (st->op));
      else if (is_event && n->aux != st->event)
        violation (c, "step #%u: node \"%s\" is a user %s of event %u but the step uses event %u",
                   i, ps_node_name (g, v), op_name (n->op), n->aux, st->event);
    }
  }
  for (uint32_t v = 0; v < g->n_nodes; v++)
    if (c->node_step[v] == PS_NONE)
      violation (c, "node \"%s\" is in no step", ps_node_name (g, v));
  for (uint32_t v = 0; v < g->n_nodes; v++) {
    int32_t pin = g->nodes[v].stream;
    uint32_t s = c->node_step[v];
    if (pin >= 0 && s != PS_NONE && p->steps[s].stream != (uint32_t) pin)
      violation (c, "node \"%s\" is pinned to stream %d but runs on stream %u (step #%u)",
                 ps_node_name (g, v), pin, p->steps[s].stream, s);
  }
  c->S = max_stream ? max_stream : 1;
  /* A stream far beyond the limit is already reported; a clock that wide
   * would cost more memory than the check is worth. */
  c->clocks = c->S <= PS_MAX_STREAMS;
}

/* (b) Vector clocks, and waits on events that were never recorded. */
static int
build_clocks (vctx *c)
{
  const ps_plan *p = c->p;
  uint32_t S = c->S, max_event = 0;
  for (uint32_t i = 0; i < p->n_steps; i++)
    if (p->steps[i].event != PS_NONE && p->steps[i].event < p->n_events
        && p->steps[i].event + 1 > max_event)
      max_event = p->steps[i].event + 1;
  uint32_t *last_record = malloc ((max_event ? max_event : 1) * sizeof *last_record);
  uint32_t cur[PS_MAX_STREAMS];
  c->epoch_of = malloc ((p->n_steps ? p->n_steps : 1) * sizeof *c->epoch_of);
  if (!last_record || !c->epoch_of) {
    free (last_record);
    return PS_ENOMEM;
  }
  for (uint32_t e = 0; e < max_event; e++)
    last_record[e] = PS_NONE;
  for (uint32_t t = 0; t < S; t++) {
    if (new_epoch (c) < 0) {
      free (last_record);
      return PS_ENOMEM;
    }
    memset (c->epochs + (size_t) t * S, 0, S * sizeof *c->epochs);
    cur[t] = t;
  }
  for (uint32_t i = 0; i < p->n_steps; i++) {
    const ps_step *st = &p->steps[i];
    uint32_t s = st->stream, e = st->event;
    bool valid_event = e != PS_NONE && e < max_event;
    if (st->op == PS_OP_EVENT_WAIT && valid_event) {
      uint32_t r = last_record[e];
      if (r == PS_NONE) {
        violation (c, "step #%u: wait on event %u that was never recorded before it", i, e);
      } else {
        const uint32_t *base = c->epochs + (size_t) cur[s] * S;
        bool learns = false;
        for (uint32_t t = 0; t < S && !learns; t++)
          learns = t != s && clock_at (c, r, t) > base[t];
        if (learns) {
          if (new_epoch (c) < 0) {
            free (last_record);
            return PS_ENOMEM;
          }
          uint32_t *ne = c->epochs + (size_t) (c->n_epochs - 1) * S;
          base = c->epochs + (size_t) cur[s] * S; /* epochs may have moved */
          for (uint32_t t = 0; t < S; t++) {
            uint32_t rt = clock_at (c, r, t);
            ne[t] = rt > base[t] ? rt : base[t];
          }
          cur[s] = c->n_epochs - 1;
        }
      }
    }
    c->epoch_of[i] = cur[s];
    if (st->op == PS_OP_EVENT_RECORD && valid_event)
      last_record[e] = i;
  }
  free (last_record);
  return 0;
}

static const char *
buf_name (const ps_graph *g, uint32_t b)
{
  return b < g->n_buffers ? ps_buffer_name (g, b) : "?";
}

/* The first buffer in list a (access range) that is also in list b. */
static uint32_t
common_buffer (vctx *c, uint32_t a_begin, uint32_t a_count, uint32_t b_begin, uint32_t b_count)
{
  const ps_graph *g = c->g;
  if (!c->mark) {
    c->mark = calloc (g->n_buffers ? g->n_buffers : 1, sizeof *c->mark);
    if (!c->mark)
      return PS_NONE;
  }
  if (++c->stamp == 0) {
    memset (c->mark, 0, g->n_buffers * sizeof *c->mark);
    c->stamp = 1;
  }
  for (uint64_t i = a_begin; i < (uint64_t) a_begin + a_count && i < g->n_access; i++)
    if (g->access[i] < g->n_buffers)
      c->mark[g->access[i]] = c->stamp;
  for (uint64_t i = b_begin; i < (uint64_t) b_begin + b_count && i < g->n_access; i++)
    if (g->access[i] < g->n_buffers && c->mark[g->access[i]] == c->stamp)
      return g->access[i];
  return PS_NONE;
}

/* Writes what made edge u -> v, e.g. "RAW on buffer h, after". */
static void
describe_edge (vctx *c, uint32_t u, uint32_t v, unsigned kind, char *out, size_t len)
{
  const ps_node *nu = &c->g->nodes[u], *nv = &c->g->nodes[v];
  static const char *const names[] = { "RAW", "WAW", "WAR", "after", "event", "barrier",
                                       "branch", "imported" };
  size_t at = 0;
  out[0] = 0;
  for (unsigned k = 0; k < 8; k++) {
    if (!(kind & (1u << k)))
      continue;
    uint32_t b = PS_NONE;
    if (k == 0)
      b = common_buffer (c, nu->writes_begin, nu->writes_count, nv->reads_begin, nv->reads_count);
    else if (k == 1)
      b = common_buffer (c, nu->writes_begin, nu->writes_count, nv->writes_begin,
                         nv->writes_count);
    else if (k == 2)
      b = common_buffer (c, nu->reads_begin, nu->reads_count, nv->writes_begin, nv->writes_count);
    int w;
    if (b != PS_NONE)
      w = snprintf (out + at, len - at, "%s%s on buffer %s", at ? ", " : "", names[k],
                    buf_name (c->g, b));
    else
      w = snprintf (out + at, len - at, "%s%s", at ? ", " : "", names[k]);
    if (w < 0 || (size_t) w >= len - at)
      return;
    at += (size_t) w;
  }
  if (at == 0)
    snprintf (out, len, "dependency");
}

/* (c) Every dependency edge is ordered. */
static void
verify_edges (vctx *c)
{
  const ps_plan *p = c->p;
  const ps_graph *g = c->g;
  char why[1024];
  for (uint32_t u = 0; u < g->n_nodes; u++) {
    uint32_t su = c->node_step[u];
    if (su == PS_NONE)
      continue;
    for (uint32_t e = g->succ_off[u]; e < g->succ_off[u + 1]; e++) {
      uint32_t v = g->succ[e], sv = c->node_step[v];
      if (sv == PS_NONE)
        continue;
      if (su == sv) {
        if (p->steps[su].op == PS_OP_KERNEL && p->steps[su].nodes_count > 1)
          continue; /* inside one fused kernel: ordered by construction */
        describe_edge (c, u, v, g->succ_kind ? g->succ_kind[e] : 0, why, sizeof why);
        violation (c, "dependency %s -> %s (%s) is inside step #%u, which is not a fused kernel",
                   ps_node_name (g, u), ps_node_name (g, v), why, su);
        continue;
      }
      if (happens_before (c, su, sv))
        continue;
      if (c->count >= c->max_reports) {
        c->count++;
        continue;
      }
      describe_edge (c, u, v, g->succ_kind ? g->succ_kind[e] : 0, why, sizeof why);
      violation (c, "dependency %s -> %s (%s) is not ordered: stream %u step #%u and stream %u "
                 "step #%u", ps_node_name (g, u), ps_node_name (g, v), why,
                 p->steps[su].stream, su, p->steps[sv].stream, sv);
    }
  }
}

/* ---- (e) pooled buffers that share bytes ----
 *
 * Every pair of pooled buffers whose byte ranges overlap must be used in
 * disjoint phases: every use of one happens-before every use of the other.
 * Write A < B when that holds with A first; it is transitive (through any
 * buffer with a use).  Sweeping the pool from low to high offsets keeps the
 * set of buffers covering the current offset, ordered by first use; it
 * suffices that neighbours in that order satisfy A < B.  A pair becomes
 * neighbours either when one of them enters the set (checked then) or when
 * the buffers between them leave it (then implied by transitivity), so
 * each insertion checks its two neighbours and nothing else: O(K log K)
 * for K pooled buffers plus the pair checks, each O(streams^2) at most. */

/* A use of a buffer with what the pair check needs of it at hand, so that
 * the check touches one clock row per use and nothing else. */
typedef struct use_sum {
  uint32_t step, stream, epoch;
} use_sum;

typedef struct pool_ctx {
  uint32_t *use_off, *uses; /* per buffer: its use steps in issue order (CSR) */
  /* Per buffer in rank order, in one CSR layout (sum_off): its first use
   * on each stream it uses, and its last use on each. */
  uint32_t *sum_off;
  use_sum *first, *last;
} pool_ctx;

/* Whether every use of buffer a happens-before every use of buffer b; if
 * not, reports the pair.  Clocks grow along a stream, so it is enough that
 * b's first use on each stream follows a's last use on each stream. */
static void
check_pair (vctx *c, const pool_ctx *pc, const ps__kv *byfirst, uint32_t ra, uint32_t rb)
{
  const ps_plan *p = c->p;
  for (uint32_t i = pc->sum_off[rb]; i < pc->sum_off[rb + 1]; i++) {
    uint32_t y = pc->first[i].step, sy = pc->first[i].stream;
    const uint32_t *row = c->epochs + (size_t) pc->first[i].epoch * c->S;
    for (uint32_t j = pc->sum_off[ra]; j < pc->sum_off[ra + 1]; j++) {
      uint32_t x = pc->last[j].step, t = pc->last[j].stream;
      /* On y's own stream, a use in the very same step is not ordered. */
      bool ok = t == sy ? y > x : row[t] >= x + 1;
      if (ok)
        continue;
      const ps_graph *g = c->g;
      uint32_t a = byfirst[ra].a, b = byfirst[rb].a;
      uint64_t oa = p->offsets[a], ob = p->offsets[b];
      uint64_t lo = oa > ob ? oa : ob;
      uint64_t ea = oa + g->buffers[a].bytes, eb = ob + g->buffers[b].bytes;
      uint64_t hi = ea < eb ? ea : eb;
      violation (c, "pooled buffers \"%s\" and \"%s\" share bytes [%llu, %llu) but their uses "
                 "are not ordered: \"%s\" at stream %u step #%u and \"%s\" at stream %u step #%u",
                 ps_buffer_name (g, a), ps_buffer_name (g, b), (unsigned long long) lo,
                 (unsigned long long) hi, ps_buffer_name (g, a), t, x, ps_buffer_name (g, b), sy,
                 y);
      return;
    }
  }
}

static void
count_use (pool_ctx *pc, uint32_t *last, const uint8_t *pooled, uint32_t B, uint32_t b,
           uint32_t s, int pass)
{
  if (b >= B || !pooled[b] || last[b] == s)
    return;
  last[b] = s;
  if (pass == 0)
    pc->use_off[b + 2]++;
  else
    pc->uses[pc->use_off[b + 1]++] = s;
}

/* Lists, per pooled buffer, the steps that use it, in issue order: CSR in
 * pc->use_off (B + 2 entries; b's uses are [use_off[b], use_off[b + 1]))
 * and pc->uses. */
static int
collect_uses (vctx *c, pool_ctx *pc, const uint8_t *pooled)
{
  const ps_plan *p = c->p;
  const ps_graph *g = c->g;
  uint32_t B = g->n_buffers;
  uint32_t *last = malloc ((B ? B : 1) * sizeof *last);
  pc->use_off = calloc ((size_t) B + 2, sizeof *pc->use_off);
  if (!last || !pc->use_off) {
    free (last);
    return PS_ENOMEM;
  }
  /* Two passes over the steps: count, then fill; `last` drops repeated
   * uses by one step (a node reading and writing a buffer, a fused group). */
  for (int pass = 0; pass < 2; pass++) {
    for (uint32_t b = 0; b < B; b++)
      last[b] = PS_NONE;
    for (uint32_t s = 0; s < p->n_steps; s++) {
      const ps_step *st = &p->steps[s];
      if ((uint64_t) st->nodes_begin + st->nodes_count > p->n_step_nodes)
        continue;
      for (uint32_t k = 0; k < st->nodes_count; k++) {
        uint32_t v = p->step_nodes[st->nodes_begin + k];
        if (v >= g->n_nodes)
          continue;
        const ps_node *n = &g->nodes[v];
        uint64_t end = (uint64_t) n->reads_begin + n->reads_count;
        for (uint64_t i = n->reads_begin; i < end && i < g->n_access; i++)
          count_use (pc, last, pooled, B, g->access[i], s, pass);
        end = (uint64_t) n->writes_begin + n->writes_count;
        for (uint64_t i = n->writes_begin; i < end && i < g->n_access; i++)
          count_use (pc, last, pooled, B, g->access[i], s, pass);
        if (n->op == PS_OP_CONDITIONAL && n->aux < g->n_conds)
          count_use (pc, last, pooled, B, g->conds[n->aux].condition, s, pass);
      }
    }
    if (pass == 0) {
      for (uint32_t b = 0; b < B; b++)
        pc->use_off[b + 2] += pc->use_off[b + 1];
      pc->uses = malloc ((pc->use_off[B + 1] ? pc->use_off[B + 1] : 1) * sizeof *pc->uses);
      if (!pc->uses) {
        free (last);
        return PS_ENOMEM;
      }
    }
  }
  free (last);

  return 0;
}

/* The per-stream first and last uses of every buffer that takes part, in
 * rank order (byfirst), so that the sweep reads them by rank. */
static int
summarise_uses (vctx *c, pool_ctx *pc, const ps__kv *byfirst, uint32_t n_used)
{
  const ps_plan *p = c->p;
  /* A buffer uses at most as many streams as it has uses. */
  size_t total = 1;
  for (uint32_t r = 0; r < n_used; r++)
    total += pc->use_off[byfirst[r].a + 1] - pc->use_off[byfirst[r].a];
  pc->sum_off = malloc (((size_t) n_used + 1) * sizeof *pc->sum_off);
  pc->first = malloc (total * sizeof *pc->first);
  pc->last = malloc (total * sizeof *pc->last);
  if (!pc->sum_off || !pc->first || !pc->last)
    return PS_ENOMEM;
  uint32_t first_on[PS_MAX_STREAMS], last_on[PS_MAX_STREAMS], at = 0;
  for (uint32_t r = 0; r < n_used; r++) {
    uint32_t b = byfirst[r].a;
    uint64_t seen = 0;
    for (uint32_t i = pc->use_off[b]; i < pc->use_off[b + 1]; i++) {
      uint32_t x = pc->uses[i], t = p->steps[x].stream;
      if (!(seen & (uint64_t) 1 << t))
        first_on[t] = x;
      seen |= (uint64_t) 1 << t;
      last_on[t] = x;
    }
    pc->sum_off[r] = at;
    for (uint32_t t = 0; seen; t++, seen >>= 1)
      if (seen & 1) {
        pc->first[at] = (use_sum){ first_on[t], t, c->epoch_of[first_on[t]] };
        pc->last[at++] = (use_sum){ last_on[t], t, c->epoch_of[last_on[t]] };
      }
  }
  pc->sum_off[n_used] = at;
  return 0;
}

static int
verify_pool (vctx *c)
{
  const ps_plan *p = c->p;
  const ps_graph *g = c->g;
  uint32_t B = g->n_buffers;
  if (B == 0)
    return 0;
  if (!p->offsets) {
    violation (c, "the plan has no buffer offsets");
    return 0;
  }
  uint8_t *pooled = calloc (B, 1);
  if (!pooled)
    return PS_ENOMEM;
  uint32_t n_pooled = 0;
  for (uint32_t b = 0; b < B; b++) {
    uint64_t off = p->offsets[b], bytes = g->buffers[b].bytes;
    if (g->buffers[b].flags & PS_BUF_EXTERNAL) {
      if (off != UINT64_MAX)
        violation (c, "external buffer \"%s\" was given pool offset %llu", ps_buffer_name (g, b),
                   (unsigned long long) off);
    } else if (off == UINT64_MAX) {
      violation (c, "buffer \"%s\" has no pool offset", ps_buffer_name (g, b));
    } else if (off > p->pool_bytes || bytes > p->pool_bytes - off) {
      violation (c, "buffer \"%s\" at offset %llu (%llu bytes) lies outside the pool of %llu bytes",
                 ps_buffer_name (g, b), (unsigned long long) off, (unsigned long long) bytes,
                 (unsigned long long) p->pool_bytes);
    } else {
      pooled[b] = 1;
      n_pooled++;
    }
  }
  if (n_pooled < 2 || !c->clocks) {
    free (pooled);
    return 0;
  }

  pool_ctx pc = { 0 };
  ps__kv *bd = NULL, *byfirst = NULL;
  uint32_t *rank = NULL;
  ps__rankset set = { 0 };
  int rc = collect_uses (c, &pc, pooled);
  if (rc < 0)
    goto out;
  bd = malloc ((size_t) n_pooled * 2 * sizeof *bd);
  byfirst = malloc ((size_t) n_pooled * sizeof *byfirst);
  rank = malloc ((size_t) B * sizeof *rank);
  if (!bd || !byfirst || !rank) {
    rc = PS_ENOMEM;
    goto out;
  }
  /* Buffers nobody uses, and empty ones, cannot conflict. */
  for (uint32_t b = 0; b < B; b++)
    if (pc.use_off[b] == pc.use_off[b + 1] || g->buffers[b].bytes == 0)
      pooled[b] = 0;
  /* Range ends go first so that, at equal offsets, the stable sort puts
   * them before starts: ranges are half-open. */
  uint32_t n_used = 0, n_bd = 0;
  for (int start = 0; start < 2; start++)
    for (uint32_t b = 0; b < B; b++)
      if (pooled[b])
        bd[n_bd++] = (ps__kv){ p->offsets[b] + (start ? 0 : g->buffers[b].bytes), b,
                           (uint32_t) start };
  for (uint32_t b = 0; b < B; b++)
    if (pooled[b])
      byfirst[n_used++] = (ps__kv){ pc.uses[pc.use_off[b]], b, 0 };
  if ((rc = ps__radix_sort_kv (byfirst, n_used)) < 0)
    goto out;
  for (uint32_t r = 0; r < n_used; r++)
    rank[byfirst[r].a] = r;
  for (uint32_t i = 0; i < n_bd; i++)
    bd[i].a = rank[bd[i].a];
  if ((rc = ps__radix_sort_kv (bd, n_bd)) < 0 || (rc = summarise_uses (c, &pc, byfirst, n_used)) < 0
      || (rc = ps__rankset_init (&set, n_used)) < 0)
    goto out;

  for (uint32_t i = 0; i < n_bd; i++) {
    uint32_t r = bd[i].a;
    if (!bd[i].b) {
      ps__rankset_erase (&set, r);
      continue;
    }
    ps__rankset_insert (&set, r);
    uint32_t before = ps__rankset_prev (&set, r), after = ps__rankset_next (&set, r);
    if (before != PS_NONE)
      check_pair (c, &pc, byfirst, before, r);
    if (after != PS_NONE)
      check_pair (c, &pc, byfirst, r, after);
  }
out:
  free (pooled);
  free (pc.use_off);
  free (pc.uses);
  free (pc.sum_off);
  free (pc.first);
  free (pc.last);
  free (bd);
  free (byfirst);
  free (rank);
  ps__rankset_free (&set);
  return rc;
}

size_t
ps_plan_verify (const ps_plan *p, ps_verify_report_fn report, void *ctx, size_t max_reports)
{
  vctx c = { 0 };
  c.p = p;
  c.report = report;
  c.ctx = ctx;
  c.max_reports = max_reports;
  if (!p || !p->graph) {
    violation (&c, "the plan has no graph");
    return c.count;
  }
  c.g = p->graph;
  if (p->n_steps > 0 && (!p->steps || !p->step_nodes)) {
    violation (&c, "the plan's step arrays are missing");
    return c.count;
  }
  const ps_graph *g = c.g;
  c.node_step = malloc ((g->n_nodes ? g->n_nodes : 1) * sizeof *c.node_step);
  if (!c.node_step)
    goto nomem;
  for (uint32_t v = 0; v < g->n_nodes; v++)
    c.node_step[v] = PS_NONE;

  verify_steps (&c);
  if (c.clocks) {
    if (build_clocks (&c) < 0)
      goto nomem;
    verify_edges (&c);
  }
  if (verify_pool (&c) < 0)
    goto nomem;
  goto out;
nomem:
  violation (&c, "out of memory while verifying the plan");
out:
  free (c.node_step);
  free (c.epoch_of);
  free (c.epochs);
  free (c.mark);
  return c.count;
}
