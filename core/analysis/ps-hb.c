/* ps-hb.c: the happens-before order of a plan (ps-hb.h): one pass over the
 * steps for the states and clocks, two over the nodes' accesses for the
 * uses, and for the releases one sweep per pair of streams over the
 * buffers sorted by their last use there: O(steps + accesses + streams^2
 * x (buffers + waits)). */
#include "ps-hb.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ps-array.h"

void
ps__hb_free (ps__hb *h)
{
  free (h->wk_stream);
  free (h->wk_pos);
  free (h->wk_epoch);
  free (h->wk_before);
  free (h->wk_after);
  free (h->sw_off);
  free (h->sw);
  free (h->st_prev);
  free (h->st_wait);
  free (h->st_seq);
  free (h->st_stream);
  free (h->st_epoch);
  free (h->ch_off);
  free (h->chain);
  free (h->ws_off);
  free (h->ws_state);
  free (h->epochs);
  free (h->bid);
  free (h->dense);
  free (h->use_off);
  free (h->use);
  free (h->w);
  free (h->first);
  free (h->last);
  free (h->meet);
  free (h->join);
  free (h->release);
  free (h->lu_off);
  free (h->lu_x);
  free (h->lu_r);
  memset (h, 0, sizeof *h);
}

static inline bool
is_event (const ps_step *st)
{
  return st->op == PS_OP_EVENT_RECORD || st->op == PS_OP_EVENT_WAIT;
}

/* ---- states and clocks ---- */

static int
new_state (ps__hb *h, uint32_t stream, uint32_t prev, uint32_t wait, uint32_t epoch)
{
  if (h->ns == h->ns_cap) {
    uint32_t c[5] = { h->ns_cap, h->ns_cap, h->ns_cap, h->ns_cap, h->ns_cap };
    uint64_t need = (uint64_t) h->ns + 1;
    if (PS_ARRAY_RESERVE (h->st_prev, c[0], need) < 0
        || PS_ARRAY_RESERVE (h->st_wait, c[1], need) < 0
        || PS_ARRAY_RESERVE (h->st_seq, c[2], need) < 0
        || PS_ARRAY_RESERVE (h->st_stream, c[3], need) < 0
        || PS_ARRAY_RESERVE (h->st_epoch, c[4], need) < 0)
      return PS_ENOMEM;
    /* Every array grew the same way from the same capacity. */
    h->ns_cap = c[0];
  }
  uint32_t s = h->ns++;
  h->st_prev[s] = prev;
  h->st_wait[s] = wait;
  h->st_stream[s] = stream;
  h->st_seq[s] = prev == PS_NONE ? 0 : h->st_seq[prev] + 1;
  h->st_epoch[s] = epoch;
  return 0;
}

/* Replays the steps: states, and the clock of every work step (the epoch
 * of its stream when it was issued; its own component is its position). */
static int
build_states (ps__hb *h)
{
  const ps_plan *p = h->p;
  uint32_t S = h->S, n_ev = p->n_events;
  int rc = PS_ENOMEM;
  uint32_t *cur = calloc (S, sizeof *cur), *cur_ep = calloc (S, sizeof *cur_ep);
  uint32_t *pos = calloc (S, sizeof *pos);
  /* Per event: the state its latest record saw, that state's stream,
   * epoch, and position there. */
  uint32_t *rec = malloc ((n_ev ? n_ev : 1) * 4 * sizeof *rec);
  uint32_t nw = 0;
  for (uint32_t i = 0; i < p->n_steps; i++)
    nw += !is_event (&p->steps[i]);
  uint32_t n1 = nw ? nw : 1;
  h->wk_stream = malloc (n1 * sizeof *h->wk_stream);
  h->wk_pos = malloc (n1 * sizeof *h->wk_pos);
  h->wk_epoch = malloc (n1 * sizeof *h->wk_epoch);
  h->wk_before = malloc (n1 * sizeof *h->wk_before);
  h->wk_after = malloc (n1 * sizeof *h->wk_after);
  h->sw_off = calloc ((size_t) S + 1, sizeof *h->sw_off);
  h->sw = malloc (n1 * sizeof *h->sw);
  if (!cur || !cur_ep || !pos || !rec || !h->wk_stream || !h->wk_pos || !h->wk_epoch
      || !h->wk_before || !h->wk_after || !h->sw_off || !h->sw)
    goto out;
  if (PS_ARRAY_RESERVE (h->epochs, h->epochs_cap, S) < 0)
    goto out;
  memset (h->epochs, 0, S * sizeof *h->epochs); /* epoch 0: nothing known */
  h->n_epochs = 1;
  for (uint32_t t = 0; t < S; t++) {
    if (new_state (h, t, PS_NONE, PS_NONE, PS_NONE) < 0)
      goto out;
    cur[t] = t;
  }
  for (uint32_t e = 0; e < n_ev; e++)
    rec[4 * e] = PS_NONE;
  for (uint32_t i = 0; i < p->n_steps; i++) {
    const ps_step *st = &p->steps[i];
    uint32_t t = st->stream;
    if (st->op == PS_OP_EVENT_RECORD) {
      if (st->event < n_ev) {
        uint32_t *r = rec + 4 * st->event;
        r[0] = cur[t];
        r[1] = t;
        r[2] = cur_ep[t];
        r[3] = pos[t];
      }
      continue;
    }
    if (st->op == PS_OP_EVENT_WAIT) {
      if (st->event >= n_ev || rec[4 * st->event] == PS_NONE || rec[4 * st->event + 1] == t)
        continue;
      const uint32_t *r = rec + 4 * st->event;
      const uint32_t *have = h->epochs + (size_t) cur_ep[t] * S;
      const uint32_t *got = h->epochs + (size_t) r[2] * S;
      bool news = false;
      for (uint32_t x = 0; x < S && !news; x++)
        if (x != t)
          news = (x == r[1] ? r[3] : got[x]) > have[x];
      if (!news)
        continue; /* implied by what the stream knows: no new state */
      if (PS_ARRAY_RESERVE (h->epochs, h->epochs_cap, ((uint64_t) h->n_epochs + 1) * S) < 0)
        goto out;
      have = h->epochs + (size_t) cur_ep[t] * S;
      got = h->epochs + (size_t) r[2] * S;
      uint32_t *now = h->epochs + (size_t) h->n_epochs * S;
      for (uint32_t x = 0; x < S; x++) {
        uint32_t v = x == r[1] ? r[3] : got[x];
        now[x] = x == t ? pos[t] : v > have[x] ? v : have[x];
      }
      if (new_state (h, t, cur[t], r[0], h->n_epochs) < 0)
        goto out;
      cur_ep[t] = h->n_epochs++;
      cur[t] = h->ns - 1;
      continue;
    }
    uint32_t w = h->nw++;
    h->wk_stream[w] = t;
    h->wk_epoch[w] = cur_ep[t];
    h->wk_before[w] = cur[t];
    h->wk_pos[w] = ++pos[t];
    if (new_state (h, t, cur[t], PS_NONE, PS_NONE) < 0)
      goto out;
    cur[t] = h->wk_after[w] = h->ns - 1;
    h->sw_off[t + 1]++;
  }
  for (uint32_t t = 0; t < S; t++)
    h->sw_off[t + 1] += h->sw_off[t];
  for (uint32_t w = 0; w < h->nw; w++)
    h->sw[h->sw_off[h->wk_stream[w]] + h->wk_pos[w] - 1] = w;

  /* Chain order and the wait states of each stream. */
  h->ch_off = calloc ((size_t) S + 1, sizeof *h->ch_off);
  h->ws_off = calloc ((size_t) S + 1, sizeof *h->ws_off);
  h->chain = malloc ((h->ns ? h->ns : 1) * sizeof *h->chain);
  h->ws_state = malloc ((h->ns ? h->ns : 1) * sizeof *h->ws_state);
  if (!h->ch_off || !h->ws_off || !h->chain || !h->ws_state)
    goto out;
  for (uint32_t s = 0; s < h->ns; s++) {
    h->ch_off[h->st_stream[s] + 1]++;
    if (h->st_epoch[s] != PS_NONE)
      h->ws_off[h->st_stream[s] + 1]++;
  }
  for (uint32_t t = 0; t < S; t++) {
    h->ch_off[t + 1] += h->ch_off[t];
    h->ws_off[t + 1] += h->ws_off[t];
  }
  memcpy (pos, h->ws_off, S * sizeof *pos);
  for (uint32_t s = 0; s < h->ns; s++) {
    h->chain[h->ch_off[h->st_stream[s]] + h->st_seq[s]] = s;
    if (h->st_epoch[s] != PS_NONE)
      h->ws_state[pos[h->st_stream[s]]++] = s;
  }
  rc = 0;
out:
  free (cur);
  free (cur_ep);
  free (pos);
  free (rec);
  return rc;
}

/* ---- uses ---- */

/* Notes that work step w uses buffer b (pair n), once per step. */
static inline uint64_t
note_use (ps__hb *h, const uint8_t *pooled, uint32_t *last, uint32_t *pb, uint64_t n, uint64_t cap,
          uint32_t b, uint32_t w)
{
  if (b >= h->g->n_buffers || !pooled[b] || last[b] == w || n >= cap)
    return n;
  last[b] = w;
  pb[n] = b;
  h->use_off[b + 2]++;
  return n + 1;
}

/* Every pooled buffer's uses as work steps in issue order (CSR by buffer
 * id, repeated uses by one step dropped), and the dense numbering of the
 * used ones: one pass over the steps' accesses into a list of (step,
 * buffer) pairs, then a counting sort by buffer. */
static int
collect_uses (ps__hb *h)
{
  const ps_plan *p = h->p;
  const ps_graph *g = h->g;
  uint32_t B = g->n_buffers, B1 = B ? B : 1;
  /* Each node's accesses and condition once (more only in a plan that
   * lists a node twice, whose extra uses are dropped). */
  uint64_t cap = (uint64_t) g->n_access + g->n_nodes + 1;
  int rc = PS_ENOMEM;
  uint8_t *pooled = malloc (B1);
  uint32_t *last = malloc (B1 * sizeof *last);
  uint32_t *pb = cap <= SIZE_MAX / sizeof (uint32_t) ? malloc (cap * sizeof *pb) : NULL;
  uint32_t *po = malloc (((size_t) h->nw + 1) * sizeof *po);
  h->use_off = calloc ((size_t) B + 2, sizeof *h->use_off);
  h->dense = malloc (B1 * sizeof *h->dense);
  if (!pooled || !last || !pb || !po || !h->use_off || !h->dense)
    goto out;
  for (uint32_t b = 0; b < B; b++) {
    pooled[b] = !(g->buffers[b].flags & PS_BUF_EXTERNAL);
    last[b] = PS_NONE;
  }
  uint64_t n = 0;
  uint32_t w = 0;
  for (uint32_t i = 0; i < p->n_steps; i++) {
    const ps_step *st = &p->steps[i];
    if (is_event (st))
      continue;
    po[w] = (uint32_t) n;
    for (uint32_t j = 0;
         j < st->nodes_count && (uint64_t) st->nodes_begin + j < p->n_step_nodes; j++) {
      uint64_t at = (uint64_t) st->nodes_begin + j;
      ps_node_prefetch (g, p->step_nodes, p->n_step_nodes, at, pooled, sizeof *pooled, last,
                        sizeof *last);
      uint32_t v = p->step_nodes[at];
      if (v >= g->n_nodes)
        continue;
      const ps_node *nd = &g->nodes[v];
      uint64_t r1 = (uint64_t) nd->reads_begin + nd->reads_count;
      uint64_t w1 = (uint64_t) nd->writes_begin + nd->writes_count;
      for (uint64_t a = nd->reads_begin; a < r1 && a < g->n_access; a++)
        n = note_use (h, pooled, last, pb, n, cap, g->access[a], w);
      for (uint64_t a = nd->writes_begin; a < w1 && a < g->n_access; a++)
        n = note_use (h, pooled, last, pb, n, cap, g->access[a], w);
      if (nd->op == PS_OP_CONDITIONAL && nd->aux < g->n_conds)
        n = note_use (h, pooled, last, pb, n, cap, g->conds[nd->aux].condition, w);
    }
    w++;
  }
  po[w] = (uint32_t) n;
  for (uint32_t b = 0; b < B; b++)
    h->use_off[b + 2] += h->use_off[b + 1];
  h->use = malloc ((n ? n : 1) * sizeof *h->use);
  if (!h->use)
    goto out;
  for (uint32_t x = 0; x < w; x++)
    for (uint32_t i = po[x]; i < po[x + 1]; i++)
      h->use[h->use_off[pb[i] + 1]++] = x;

  /* Dense indices in order of first use, so that buffers live at once
   * sit near each other in every per-buffer array (a counting sort by
   * the first use; po is free again). */
  memset (po, 0, ((size_t) h->nw + 1) * sizeof *po);
  for (uint32_t b = 0; b < B; b++) {
    h->dense[b] = PS_NONE;
    if (!pooled[b])
      continue;
    if (h->use_off[b] == h->use_off[b + 1]) {
      h->n_unused++;
      if (g->buffers[b].bytes > h->unused_max)
        h->unused_max = g->buffers[b].bytes;
    } else {
      h->nb++;
      if (h->use[h->use_off[b]] + 1 < w)
        po[h->use[h->use_off[b]] + 1]++;
    }
  }
  for (uint32_t x = 1; x < w; x++)
    po[x] += po[x - 1];
  for (uint32_t b = 0; b < B; b++)
    if (pooled[b] && h->use_off[b] < h->use_off[b + 1])
      h->dense[b] = po[h->use[h->use_off[b]]]++;
  uint32_t nb1 = h->nb ? h->nb : 1;
  h->bid = malloc (nb1 * sizeof *h->bid);
  h->w = malloc (nb1 * sizeof *h->w);
  h->first = malloc (nb1 * sizeof *h->first);
  h->last = malloc (nb1 * sizeof *h->last);
  h->meet = malloc (nb1);
  h->join = malloc (nb1);
  if (!h->bid || !h->w || !h->first || !h->last || !h->meet || !h->join)
    goto out;
  for (uint32_t b = 0; b < B; b++)
    if (h->dense[b] != PS_NONE) {
      uint32_t j = h->dense[b];
      h->bid[j] = b;
      h->w[j] = g->buffers[b].bytes;
      h->first[j] = h->use[h->use_off[b]];
      h->last[j] = h->use[h->use_off[b + 1] - 1];
    }
  rc = 0;
out:
  free (pooled);
  free (last);
  free (pb);
  free (po);
  return rc;
}

/* Meet and join of every buffer's uses (see ps-hb.h), and its last use
 * on each stream it uses (lu). */
static int
meet_join (ps__hb *h)
{
  uint32_t S = h->S, nb = h->nb;
  uint32_t *rel = calloc (S, sizeof *rel), *xs = malloc (S * sizeof *xs);
  size_t n_use = h->use_off[h->g->n_buffers + 1];
  h->lu_off = malloc (((size_t) nb + 1) * sizeof *h->lu_off);
  h->lu_x = malloc ((n_use ? n_use : 1) * sizeof *h->lu_x);
  h->lu_r = malloc ((n_use ? n_use : 1) * sizeof *h->lu_r);
  if (!rel || !xs || !h->lu_off || !h->lu_x || !h->lu_r) {
    free (rel);
    free (xs);
    return PS_ENOMEM;
  }
  uint32_t n = 0;
  for (uint32_t j = 0; j < nb; j++) {
    /* The buffers come in order of first use, their uses scattered: asks
     * for the offset of the buffer A places on, the uses of the one half as
     * far, and the steps of the first use of the one a quarter. */
    const uint32_t A = 16;
    if (j + A < nb)
      __builtin_prefetch (&h->use_off[h->bid[j + A]]);
    if (j + A / 2 < nb)
      __builtin_prefetch (&h->use[h->use_off[h->bid[j + A / 2]]]);
    if (j + A / 4 < nb) {
      uint32_t v = h->use[h->use_off[h->bid[j + A / 4]]];
      __builtin_prefetch (&h->wk_stream[v]);
      __builtin_prefetch (&h->wk_pos[v]);
      __builtin_prefetch (&h->wk_epoch[v]);
    }
    uint32_t b = h->bid[j], f = h->first[j], u = h->last[j], nx = 0;
    bool meet = true;
    for (uint32_t i = h->use_off[b]; i < h->use_off[b + 1]; i++) {
      uint32_t v = h->use[i], x = h->wk_stream[v];
      for (uint32_t y = 0; y < S && meet && i > h->use_off[b]; y++)
        meet = ps__hb_clock_before (h, v, y) >= ps__hb_clock_before (h, f, y);
      if (rel[x] == 0)
        xs[nx++] = x;
      rel[x] = h->wk_pos[v];
    }
    h->meet[j] = meet;
    bool join = true;
    h->lu_off[j] = n;
    for (uint32_t i = 0; i < nx; i++) {
      uint32_t x = xs[i];
      join = join && (x == h->wk_stream[u] ? h->wk_pos[u] : ps__hb_clock_before (h, u, x)) >= rel[x];
      h->lu_x[n] = x;
      h->lu_r[n++] = rel[x];
      rel[x] = 0;
    }
    h->join[j] = join;
  }
  h->lu_off[nb] = n;
  free (rel);
  free (xs);
  return 0;
}

/* ---- releases ---- */

#define UNSET (PS_NONE - 1)

/* The release states: for each stream x, the buffers' last uses there
 * sorted by position (a counting sort); then for each stream t one sweep
 * over t's wait states finds, for each, the first state of t that knows
 * it.  release[j, t] is the latest of those over the streams j uses, and
 * PS_NONE as soon as one is missing. */
static int
releases (ps__hb *h)
{
  uint32_t S = h->S, nb = h->nb;
  if ((uint64_t) nb * S > PS__HB_MAX_RELEASE)
    return 0;
  int rc = PS_ENOMEM;
  size_t nq = h->lu_off[nb];
  uint32_t *q_off = calloc ((size_t) S + 1, sizeof *q_off);
  uint32_t *qj = malloc ((nq ? nq : 1) * sizeof *qj), *qr = malloc ((nq ? nq : 1) * sizeof *qr);
  uint32_t *sj = malloc ((nq ? nq : 1) * sizeof *sj), *sr = malloc ((nq ? nq : 1) * sizeof *sr);
  uint32_t *cnt = NULL, *wp = malloc ((size_t) S * sizeof *wp);
  size_t n_rel = (size_t) nb * S;
  h->release = malloc ((n_rel ? n_rel : 1) * sizeof *h->release);
  if (!q_off || !qj || !qr || !sj || !sr || !wp || !h->release)
    goto out;
  for (size_t i = 0; i < n_rel; i++)
    h->release[i] = UNSET;
  /* Queries (j, r): buffer j's last use on stream x is its r-th step,
   * grouped by x, then sorted by r within each group. */
  for (size_t i = 0; i < nq; i++)
    q_off[h->lu_x[i] + 1]++;
  for (uint32_t x = 0; x < S; x++)
    q_off[x + 1] += q_off[x];
  cnt = malloc ((size_t) S * sizeof *cnt);
  if (!cnt)
    goto out;
  memcpy (cnt, q_off, S * sizeof *cnt);
  for (uint32_t j = 0; j < nb; j++)
    for (uint32_t i = h->lu_off[j]; i < h->lu_off[j + 1]; i++) {
      qj[cnt[h->lu_x[i]]] = j;
      qr[cnt[h->lu_x[i]]++] = h->lu_r[i];
    }
  for (uint32_t x = 0; x < S; x++) {
    uint32_t q0 = q_off[x], q1 = q_off[x + 1], nwx = h->sw_off[x + 1] - h->sw_off[x];
    if (q0 == q1)
      continue;
    /* Counting sort by r in [1, nwx]. */
    free (cnt);
    cnt = calloc ((size_t) nwx + 2, sizeof *cnt);
    if (!cnt)
      goto out;
    for (uint32_t i = q0; i < q1; i++)
      cnt[qr[i] + 1]++;
    for (uint32_t r = 0; r <= nwx; r++)
      cnt[r + 1] += cnt[r];
    for (uint32_t i = q0; i < q1; i++) {
      uint32_t at = q0 + cnt[qr[i]]++;
      sj[at] = qj[i];
      sr[at] = qr[i];
    }
    /* One pointer into each stream's wait states; each buffer's row is
     * updated in one go. */
    for (uint32_t t = 0; t < S; t++)
      wp[t] = h->ws_off[t];
    for (uint32_t i = q0; i < q1; i++) {
      uint32_t r = sr[i], *row = h->release + (size_t) sj[i] * S;
      for (uint32_t t = 0; t < S; t++) {
        uint32_t cand, we = h->ws_off[t + 1];
        if (t == x) {
          cand = h->wk_after[h->sw[h->sw_off[t] + r - 1]];
        } else {
          while (wp[t] < we && h->epochs[(size_t) h->st_epoch[h->ws_state[wp[t]]] * S + x] < r)
            wp[t]++;
          cand = wp[t] < we ? h->ws_state[wp[t]] : PS_NONE;
        }
        if (cand == PS_NONE)
          row[t] = PS_NONE;
        else if (row[t] == UNSET || (row[t] != PS_NONE && h->st_seq[cand] > h->st_seq[row[t]]))
          row[t] = cand;
      }
    }
  }
  rc = 0;
out:
  free (q_off);
  free (wp);
  free (qj);
  free (qr);
  free (sj);
  free (sr);
  free (cnt);
  if (rc < 0) {
    free (h->release);
    h->release = NULL;
  }
  return rc;
}

int
ps__hb_build (ps__hb *h, const ps_plan *p)
{
  memset (h, 0, sizeof *h);
  h->p = p;
  h->g = p->graph;
  for (uint32_t i = 0; i < p->n_steps; i++)
    if (p->steps[i].stream + 1u > h->S)
      h->S = p->steps[i].stream + 1u;
  if (h->S == 0)
    h->S = 1;
  int rc;
  if ((rc = build_states (h)) < 0 || (rc = collect_uses (h)) < 0 || (rc = meet_join (h)) < 0
      || (rc = releases (h)) < 0)
    return rc;
  return 0;
}

void
ps__hb_epoch_at (const ps__hb *h, uint32_t *ep)
{
  for (uint32_t t = 0; t < h->S; t++) {
    uint32_t now = 0;
    for (uint32_t i = h->ch_off[t]; i < h->ch_off[t + 1]; i++) {
      uint32_t s = h->chain[i];
      if (h->st_epoch[s] != PS_NONE)
        now = h->st_epoch[s];
      ep[s] = now;
    }
  }
}

bool
ps__hb_before (const ps__hb *h, uint32_t a, uint32_t c)
{
  uint32_t b = h->bid[c];
  if (h->release) {
    const uint32_t *rel = h->release + (size_t) a * h->S;
    uint32_t i0 = h->use_off[b], i1 = h->meet[c] ? i0 + 1 : h->use_off[b + 1];
    for (uint32_t i = i0; i < i1; i++) {
      uint32_t v = h->use[i], r = rel[h->wk_stream[v]];
      if (r == PS_NONE || h->st_seq[r] > h->st_seq[h->wk_before[v]])
        return false;
    }
    return true;
  }
  /* Without release states: a's last use on each stream against the
   * clock of c's first use (with a meet), or of each of its uses. */
  uint32_t i0 = h->use_off[b], i1 = h->meet[c] ? i0 + 1 : h->use_off[b + 1];
  for (uint32_t i = h->lu_off[a]; i < h->lu_off[a + 1]; i++)
    for (uint32_t k = i0; k < i1; k++)
      if (ps__hb_clock_before (h, h->use[k], h->lu_x[i]) < h->lu_r[i])
        return false;
  return true;
}
