/* ps-pool-peak.c: the exact peak of a plan's pool (ps-pool-peak.h).
 *
 * The network.  Happens-before is the graph of stream states of ps-hb.h.
 * Each pooled buffer that is used becomes two nodes, in and out, joined by
 * an arc that must carry at least the buffer's bytes.  Its in node is fed
 * by the state right before its first use when every other use comes no
 * earlier than that state (true of any buffer written before it is read);
 * its out node feeds, on every stream, the earliest state that follows all
 * its uses.  So a path leaves one buffer and enters another exactly when
 * every use of the first happens-before every use of the second: paths
 * are the chains of buffers that may share bytes, and the minimum flow
 * that covers every buffer's bytes equals the heaviest antichain.  The
 * rare buffer whose uses have no earliest state (read before any write,
 * by steps of several streams) is fed by a node of its own: from the last
 * state of each stream its uses all follow, from the buffers whose last
 * use follows all their others, and directly from each remaining buffer
 * whose uses all precede it.
 *
 * The flow.  A greedy start sweeps the work steps in issue order: each
 * buffer takes its bytes from buffers already released on its stream and
 * fresh from the source for the rest.  The minimum is then reached by
 * pushing flow back from the sink to the source through the residual
 * network (an arc can carry more forward, or give back what it carries
 * above its lower bound), by blocking flows along shortest paths where
 * only give-backs count as length: forward arcs are free, so the search
 * is not slowed by the length of a stream.  The first level, most of the
 * network, is known from each stream's frontier without walking it
 * (`lengths`), and the levels past it are walked.  Each blocking flow
 * walks only the nodes on those paths, found backwards from the source (a
 * few hundred where the levels span millions).  When no path is left, the
 * nodes the sink still reaches cut the network, and the buffers cut (out
 * reached, in not) are the antichain, whose bytes equal the flow. */
#include "ps-pool-peak.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/ps-plan-private.h"
#include "ps-array.h"
#include "ps-format.h"
#include "ps-hb.h"

#define INF UINT64_MAX
#define FAR UINT32_MAX
/* Buffers with no earliest use state times buffers with no latest use
 * above which the direct arcs are not drawn (the peak is then a bound). */
#define MAX_GAP_PAIRS ((uint64_t) 1 << 24)
/* The greedy start looks at this many of the latest supplies of a stream
 * for the one known on the fewest other streams. */
#define LOOK 16

/* An arc seen from one end: the node at the other end, and the arc with
 * the direction in its low bit (1: this end is the head, so going this
 * way gives flow back). */
typedef struct ps__adj {
  uint32_t to, e;
} ps__adj;

typedef struct net {
  ps__hb h;
  bool exact;
  uint32_t nk;            /* feeding nodes of buffers with no meet */
  uint32_t *kq;           /* per buffer: its feeding node, else PS_NONE */
  uint32_t *k_buf, *need; /* per feeding node: its buffer and clock */

  /* The network: states, then in/out per buffer, then feeding nodes; the
   * sink and the source last. */
  uint32_t nn, sink, source;
  uint32_t na, na_cap;
  uint32_t *tail, *head;
  uint64_t *flow;
  /* Adjacency (build_adjacency): of the states alone when `shaped`,
   * else of every node. */
  bool shaped;
  uint32_t *adj_off;
  ps__adj *adj;
  uint64_t *keep; /* per release arc (from a_rel), one bit: in the lists */
  uint32_t a_src, a_snk, a_acq, a_chain, a_rel; /* first arc of each kind */
  uint32_t *rel_off; /* per buffer: its release arcs, from a_rel */
  /* One bit each: per release arc (from a_rel), whether a path of free
   * arcs doubles it (implied, until build_adjacency); per arc, whether it
   * carries flow above its lower bound, so that going it backwards gives
   * some back (give). */
  uint64_t *implied, *give;
} net;

static void
net_free (net *k)
{
  ps__hb_free (&k->h);
  free (k->kq);
  free (k->k_buf);
  free (k->need);
  free (k->tail);
  free (k->head);
  free (k->flow);
  free (k->adj_off);
  free (k->adj);
  free (k->keep);
  free (k->rel_off);
  free (k->implied);
  free (k->give);
}

/* ---- the network ---- */

static inline uint32_t
node_in (const net *k, uint32_t j)
{
  return k->h.ns + 2 * j;
}

static inline uint32_t
node_out (const net *k, uint32_t j)
{
  return k->h.ns + 2 * j + 1;
}

static int
add_arc (net *k, uint32_t from, uint32_t to)
{
  if ((uint64_t) k->na + 1 > PS_POOL_PEAK_MAX_ARCS)
    return PS_ELIMIT;
  if (k->na == k->na_cap) {
    uint32_t c1 = k->na_cap, c2 = k->na_cap;
    if (PS_ARRAY_RESERVE (k->tail, c1, (uint64_t) k->na + 1) < 0
        || PS_ARRAY_RESERVE (k->head, c2, (uint64_t) k->na + 1) < 0)
      return PS_ENOMEM;
    k->na_cap = c1;
  }
  k->tail[k->na] = from;
  k->head[k->na++] = to;
  return 0;
}

/* The meet of buffer j's uses' clocks, for a feeding node. */
static void
meet_clock (const ps__hb *h, uint32_t j, uint32_t *need)
{
  uint32_t b = h->bid[j];
  for (uint32_t x = 0; x < h->S; x++)
    need[x] = UINT32_MAX;
  for (uint32_t i = h->use_off[b]; i < h->use_off[b + 1]; i++)
    for (uint32_t x = 0; x < h->S; x++) {
      uint32_t c = ps__hb_clock_before (h, h->use[i], x);
      if (c < need[x])
        need[x] = c;
    }
}

/* Whether every use of buffer j is known complete at clock nd. */
static bool
uses_within (const ps__hb *h, uint32_t j, const uint32_t *nd)
{
  uint32_t b = h->bid[j];
  for (uint32_t i = h->use_off[b]; i < h->use_off[b + 1]; i++)
    if (h->wk_pos[h->use[i]] > nd[h->wk_stream[h->use[i]]])
      return false;
  return true;
}

/* Arcs, in blocks: buffer j's own arc is j (so its lower bound is w[j]),
 * then the source's, the sink's, the feeding arcs, the stream chain (arc
 * a_chain + s enters state s), the waits, the releases (per buffer, in
 * rel_off) and the feeding nodes' arcs. */
static int
build_network (net *k)
{
  const ps__hb *h = &k->h;
  const uint32_t S = h->S, nb = h->nb, ns = h->ns;
  int rc;
  k->kq = malloc ((nb ? nb : 1) * sizeof *k->kq);
  k->rel_off = malloc (((size_t) nb + 1) * sizeof *k->rel_off);
  if (!k->kq || !k->rel_off)
    return PS_ENOMEM;

  uint32_t n_nojoin = 0, kcap = 0, ncap = 0;
  for (uint32_t j = 0; j < nb; j++) {
    k->kq[j] = PS_NONE;
    n_nojoin += !h->join[j];
    if (h->meet[j])
      continue;
    if (PS_ARRAY_RESERVE (k->k_buf, kcap, (uint64_t) k->nk + 1) < 0
        || PS_ARRAY_RESERVE (k->need, ncap, ((uint64_t) k->nk + 1) * S) < 0)
      return PS_ENOMEM;
    meet_clock (h, j, k->need + (size_t) k->nk * S);
    k->k_buf[k->nk] = j;
    k->kq[j] = k->nk++;
  }
  bool gaps = k->nk > 0 && (uint64_t) k->nk * n_nojoin <= MAX_GAP_PAIRS;
  if (k->nk > 0 && !gaps) {
    /* Too many pairs to draw: those buffers are fed at their first use
     * instead, which orders more pairs than the plan does, so the flow
     * can only get smaller: the peak found is a lower bound. */
    for (uint32_t j = 0; j < nb; j++)
      k->kq[j] = PS_NONE;
    k->nk = 0;
    k->exact = false;
  }
  if ((uint64_t) ns + 2 * (uint64_t) nb + k->nk > PS_ARRAY_MAX - 2)
    return PS_ELIMIT;
  k->nn = ns + 2 * nb + k->nk;
  k->sink = k->nn;
  k->source = k->nn + 1;
  /* Room for every arc but those of the feeding nodes' gaps, counted
   * first: growing the arrays arc by arc took a third of the network's
   * time on large plans. */
  uint64_t want = 4 * (uint64_t) nb + ns + (uint64_t) k->nk * S;
  for (uint32_t s = 0; s < ns; s++)
    want += h->st_wait[s] != PS_NONE;
  for (uint64_t i = 0; i < (uint64_t) nb * S; i++)
    want += h->release[i] != PS_NONE;
  if (k->nk > 0)
    want += nb;
  if (want <= PS_POOL_PEAK_MAX_ARCS) {
    uint32_t c1 = k->na_cap, c2 = k->na_cap;
    if (PS_ARRAY_RESERVE (k->tail, c1, want) < 0 || PS_ARRAY_RESERVE (k->head, c2, want) < 0)
      return PS_ENOMEM;
    k->na_cap = c1 < c2 ? c1 : c2;
  }

  for (uint32_t j = 0; j < nb; j++)
    if ((rc = add_arc (k, node_in (k, j), node_out (k, j))) < 0)
      return rc;
  k->a_src = k->na;
  for (uint32_t j = 0; j < nb; j++)
    if ((rc = add_arc (k, k->source, node_in (k, j))) < 0)
      return rc;
  k->a_snk = k->na;
  for (uint32_t j = 0; j < nb; j++)
    if ((rc = add_arc (k, node_out (k, j), k->sink)) < 0)
      return rc;
  k->a_acq = k->na;
  for (uint32_t j = 0; j < nb; j++) {
    uint32_t from = k->kq[j] != PS_NONE ? ns + 2 * nb + k->kq[j] : h->wk_before[h->first[j]];
    if ((rc = add_arc (k, from, node_in (k, j))) < 0)
      return rc;
  }
  k->a_chain = k->na;
  for (uint32_t s = 0; s < ns; s++)
    if ((rc = add_arc (k, h->st_prev[s], s)) < 0)
      return rc;
  for (uint32_t s = 0; s < ns; s++)
    if (h->st_wait[s] != PS_NONE && (rc = add_arc (k, h->st_wait[s], s)) < 0)
      return rc;
  k->a_rel = k->na;
  for (uint32_t j = 0; j < nb; j++) {
    k->rel_off[j] = k->na - k->a_rel;
    for (uint32_t t = 0; t < S; t++) {
      uint32_t s = h->release[(size_t) j * S + t];
      if (s != PS_NONE && (rc = add_arc (k, node_out (k, j), s)) < 0)
        return rc;
    }
    if (k->nk > 0 && h->join[j] && (rc = add_arc (k, node_out (k, j), h->wk_after[h->last[j]])) < 0)
      return rc;
    if (gaps && !h->join[j])
      for (uint32_t q = 0; q < k->nk; q++)
        if (k->k_buf[q] != j && uses_within (h, j, k->need + (size_t) q * S)
            && (rc = add_arc (k, node_out (k, j), ns + 2 * nb + q)) < 0)
          return rc;
  }
  k->rel_off[nb] = k->na - k->a_rel;
  for (uint32_t q = 0; q < k->nk; q++)
    for (uint32_t x = 0; x < S; x++) {
      uint32_t r = k->need[(size_t) q * S + x];
      if (r > 0
          && (rc = add_arc (k, h->wk_after[h->sw[h->sw_off[x] + r - 1]], ns + 2 * nb + q)) < 0)
        return rc;
    }

  k->flow = calloc (k->na ? k->na : 1, sizeof *k->flow);
  return k->flow ? 0 : PS_ENOMEM;
}

/* Marks the release arcs that a path of free arcs doubles: buffer j's arc
 * into stream t's release state, when j's release on the stream u of its
 * last use is the state right after that use and t's state knows that
 * use (ps__hb_epoch_at), is doubled by the arc into u's release and the
 * chain and waits from there.  The feeding nodes' arcs among j's (no
 * state) and the join arc (on u) are not marked. */
static int
mark_implied (net *k)
{
  const ps__hb *h = &k->h;
  const uint32_t S = h->S, ns = h->ns;
  k->implied = calloc ((size_t) k->rel_off[h->nb] / 64 + 1, sizeof *k->implied);
  uint32_t *ep_at = malloc ((ns ? ns : 1) * sizeof *ep_at);
  if (!k->implied || !ep_at) {
    free (ep_at);
    return PS_ENOMEM;
  }
  ps__hb_epoch_at (h, ep_at);
  for (uint32_t j = 0; j < h->nb; j++) {
    uint32_t lw = h->last[j], u = h->wk_stream[lw];
    if (h->release[(size_t) j * S + u] != h->wk_after[lw])
      continue;
    uint32_t at = h->wk_pos[lw];
    for (uint32_t r = k->rel_off[j]; r < k->rel_off[j + 1]; r++) {
      uint32_t s = k->head[k->a_rel + r];
      if (s < ns && h->st_stream[s] != u && h->epochs[(size_t) ep_at[s] * S + u] >= at)
        k->implied[r >> 6] |= (uint64_t) 1 << (r & 63);
    }
  }
  free (ep_at);
  return 0;
}

/* The least flow arc a must carry: a buffer's bytes on its own arc, else
 * nothing. */
static inline uint64_t
lower (const net *k, uint32_t a)
{
  return a < k->h.nb ? k->h.w[a] : 0;
}

static inline bool
bit (const uint64_t *m, uint32_t a)
{
  return m[a >> 6] >> (a & 63) & 1;
}

/* Whether arc a carries flow above its lower bound. */
static inline bool
gives (const net *k, uint32_t a)
{
  return k->flow[a] > lower (k, a);
}

/* Arc a's give bit, after its flow changed. */
static inline void
give_update (net *k, uint32_t a)
{
  uint64_t m = (uint64_t) 1 << (a & 63);
  k->give[a >> 6] = gives (k, a) ? k->give[a >> 6] | m : k->give[a >> 6] & ~m;
}

/* Which arcs carry flow above their lower bound, from the greedy start's
 * flow (the give bits). */
static int
give_bits (net *k)
{
  k->give = calloc ((size_t) k->na / 64 + 1, sizeof *k->give);
  if (!k->give)
    return PS_ENOMEM;
  for (uint32_t a = 0; a < k->na; a++)
    if (gives (k, a))
      k->give[a >> 6] |= (uint64_t) 1 << (a & 63);
  return 0;
}

/* The adjacency lists the search walks: both ends of every arc it needs
 * (heads have no chain arc: PS_NONE tails), with the flow of the greedy
 * start in place: an implied release arc that carries nothing is left
 * out.  Going it forwards is free, as is the path that implies it, and it
 * has nothing to give back (nor will it: the search never goes it), so
 * every node is reached at the same length and by the same amounts
 * without it, and the flow and the cut are the same.  On 1M-node layered
 * plans three in four release arcs are implied (2.9M of 3.9M), most of
 * them empty.  Made when first walked, before any flow moves: a plan
 * whose greedy start is already the minimum, with no level past the
 * first (`lengths`), needs none (1M-node transformer: 0.055 s).
 *
 * Without feeding nodes (`shaped`) only the states' lists are stored: a
 * buffer's in and out nodes, the sink and the source have lists the arc
 * blocks give directly (adj_at), in the same order.  Storing every node's
 * list scattered 11.4M entries over 91 MB for the 1M-node layered plan,
 * where a search walks a thousand nodes; the states' lists are 2.5M
 * entries. */
bool ps__peak_adjacency_whole = false;

/* Whether arc a is in the lists (once build_adjacency set k->keep). */
static inline bool
listed (const net *k, uint32_t a)
{
  uint32_t r = a - k->a_rel;
  return k->tail[a] != PS_NONE && (a < k->a_rel || r >= k->rel_off[k->h.nb] || bit (k->keep, r));
}

static int
build_adjacency (net *k)
{
  if (k->adj)
    return 0;
  const uint32_t ns = k->h.ns, nb = k->h.nb, n_rel = k->rel_off[nb];
  k->shaped = k->nk == 0 && !ps__peak_adjacency_whole;
  uint32_t N = k->shaped ? ns : k->nn + 2, first = k->shaped ? k->a_acq : 0;
  k->adj_off = calloc ((size_t) N + 2, sizeof *k->adj_off);
  if (!k->adj_off)
    return PS_ENOMEM;
  /* Which release arcs are listed, once: the lists below and adj_at
   * read it. */
  k->keep = malloc (((size_t) n_rel / 64 + 1) * sizeof *k->keep);
  if (!k->keep)
    return PS_ENOMEM;
  for (uint32_t r = 0; r < n_rel; r += 64) {
    uint64_t m = 0;
    for (uint32_t b = 0; b < 64 && r + b < n_rel; b++) {
      m |= (uint64_t) (bit (k->give, k->a_rel + r + b) || !bit (k->implied, r + b)) << b;
    }
    k->keep[r / 64] = m;
  }
  free (k->implied);
  k->implied = NULL;
  /* The ends below N are stored. */
  for (uint32_t a = first; a < k->na; a++)
    if (listed (k, a)) {
      if (k->tail[a] < N)
        k->adj_off[k->tail[a] + 2]++;
      if (k->head[a] < N)
        k->adj_off[k->head[a] + 2]++;
    }
  for (uint32_t v = 0; v < N; v++)
    k->adj_off[v + 2] += k->adj_off[v + 1];
  k->adj = malloc ((k->adj_off[N + 1] ? k->adj_off[N + 1] : 1) * sizeof *k->adj);
  if (!k->adj)
    return PS_ENOMEM;
  for (uint32_t a = first; a < k->na; a++)
    if (listed (k, a)) {
      if (k->tail[a] < N)
        k->adj[k->adj_off[k->tail[a] + 1]++] = (ps__adj){ k->head[a], a << 1 };
      if (k->head[a] < N)
        k->adj[k->adj_off[k->head[a] + 1]++] = (ps__adj){ k->tail[a], a << 1 | 1 };
    }
  return 0;
}

/* The length of node u's list (some entries may be left out: adj_at). */
static inline uint32_t
adj_len (const net *k, uint32_t u)
{
  const uint32_t ns = k->h.ns, nb = k->h.nb;
  if (!k->shaped || u < ns)
    return k->adj_off[u + 1] - k->adj_off[u];
  if (u >= k->sink)
    return nb;
  uint32_t j = (u - ns) / 2;
  return (u - ns) & 1 ? 2 + k->rel_off[j + 1] - k->rel_off[j] : 3;
}

/* Entry p of node u's list in *e; false when it is left out.  A shaped
 * network's buffer nodes list, in arc order: in: its buffer's arc, its
 * source arc, its acquisition; out: its buffer's arc, its sink arc, its
 * releases kept; the sink its buffers' sink arcs, the source their
 * source arcs. */
static inline bool
adj_at (const net *k, uint32_t u, uint32_t p, ps__adj *e)
{
  const uint32_t ns = k->h.ns;
  if (!k->shaped || u < ns) {
    *e = k->adj[k->adj_off[u] + p];
    return true;
  }
  if (u == k->sink) {
    *e = (ps__adj){ node_out (k, p), (k->a_snk + p) << 1 | 1 };
    return true;
  }
  if (u == k->source) {
    *e = (ps__adj){ node_in (k, p), (k->a_src + p) << 1 };
    return true;
  }
  uint32_t j = (u - ns) / 2, a;
  if ((u - ns) & 1) {
    if (p < 2) {
      *e = p == 0 ? (ps__adj){ node_in (k, j), j << 1 | 1 }
                  : (ps__adj){ k->sink, (k->a_snk + j) << 1 };
      return true;
    }
    uint32_t r = k->rel_off[j] + p - 2;
    if (!bit (k->keep, r))
      return false;
    a = k->a_rel + r;
    *e = (ps__adj){ k->head[a], a << 1 };
    return true;
  }
  switch (p) {
  case 0:
    *e = (ps__adj){ node_out (k, j), j << 1 };
    return true;
  case 1:
    *e = (ps__adj){ k->source, (k->a_src + j) << 1 | 1 };
    return true;
  default:
    a = k->a_acq + j;
    *e = (ps__adj){ k->tail[a], a << 1 | 1 };
    return k->tail[a] != PS_NONE;
  }
}

/* The first position from p on (n when none) of an entry of the sink's
 * (base a_snk) or the source's (base a_src) list whose arc gives back:
 * where only those are walked, the millions of others are skipped a word
 * of give bits at a time. */
static inline uint32_t
next_give (const net *k, uint32_t base, uint32_t p, uint32_t n)
{
  while (p < n) {
    uint32_t a = base + p;
    uint64_t w = k->give[a >> 6] >> (a & 63);
    if (w) {
      p += (uint32_t) __builtin_ctzll (w);
      return p < n ? p : n;
    }
    p += 64 - (a & 63);
  }
  return n;
}

/* The next listed entry of node u's list (of length n) from position *p
 * on, in *e and its position in *p; false past the end.  A walk that goes
 * the entries forwards from u (`reversed` false), or reversed, into u,
 * only follows the sink's, or the source's, arcs that give back: the
 * others are skipped a word of give bits at a time. */
static inline bool
adj_next (const net *k, uint32_t u, uint32_t *p, uint32_t n, bool reversed, ps__adj *e)
{
  for (; *p < n; ++*p) {
    if (u == k->sink && !reversed)
      *p = next_give (k, k->a_snk, *p, n);
    else if (u == k->source && reversed)
      *p = next_give (k, k->a_src, *p, n);
    if (*p < n && adj_at (k, u, *p, e))
      return true;
  }
  return false;
}

/* ---- the greedy start ---- */

/* In issue order, each buffer takes its bytes from the buffers released
 * on its stream before its first use, and fresh from the source for the
 * rest.  Of the latest LOOK supplies there it prefers the one that has
 * reached the fewest streams so far (the others keep what they can
 * reach), then the latest.  Spent supplies met on the way leave the stack. */
static int
greedy_flow (net *k)
{
  const ps__hb *h = &k->h;
  uint32_t nb = h->nb, ns = h->ns, S = h->S, n_rel = k->rel_off[nb];
  int rc = PS_ENOMEM;
  uint32_t *arr_off = calloc ((size_t) ns + 2, sizeof *arr_off);
  uint32_t *arr = malloc ((n_rel ? n_rel : 1) * sizeof *arr);
  uint32_t *st_off = calloc ((size_t) S + 1, sizeof *st_off);
  uint32_t *stack = malloc ((n_rel ? n_rel : 1) * sizeof *stack);
  /* Beside each supply on the stack, its buffer: the look at the latest
   * supplies reads it for every buffer acquired, and reading it off the
   * arc's tail instead, scattered over the network's arcs, took a third
   * of the greedy start's time on 1M-node plans. */
  uint32_t *stack_x = malloc ((n_rel ? n_rel : 1) * sizeof *stack_x);
  /* And the position of the state it reaches on its stream, where the
   * flow it gives joins the stream's chain (reading it off the arc's head
   * when the supply is taken missed the caches the same way). */
  uint32_t *stack_p = malloc ((n_rel ? n_rel : 1) * sizeof *stack_p);
  uint32_t *top = calloc (S, sizeof *top), *cursor = calloc (S, sizeof *cursor);
  uint32_t *fu_off = calloc ((size_t) h->nw + 2, sizeof *fu_off);
  uint32_t *fu = malloc ((nb ? nb : 1) * sizeof *fu);
  uint64_t *rem = malloc ((nb ? nb : 1) * sizeof *rem);
  uint64_t *diff = calloc ((size_t) ns + 1, sizeof *diff);
  uint8_t *known = calloc (nb ? nb : 1, 1);
  if (!known || !arr_off || !arr || !st_off || !stack || !stack_x || !stack_p || !top || !cursor
      || !fu_off || !fu || !rem || !diff)
    goto out;
  /* Release arcs by the state they reach; buffers by first use. */
  for (uint32_t r = 0; r < n_rel; r++) {
    uint32_t s = k->head[k->a_rel + r];
    if (s < ns) {
      arr_off[s + 2]++;
      st_off[h->st_stream[s] + 1]++;
    }
  }
  for (uint32_t s = 0; s < ns; s++)
    arr_off[s + 2] += arr_off[s + 1];
  for (uint32_t r = 0; r < n_rel; r++) {
    uint32_t s = k->head[k->a_rel + r];
    if (s < ns)
      arr[arr_off[s + 1]++] = k->a_rel + r;
  }
  for (uint32_t t = 0; t < S; t++)
    st_off[t + 1] += st_off[t];
  for (uint32_t j = 0; j < nb; j++) {
    fu_off[h->first[j] + 2]++;
    rem[j] = h->w[j];
    k->flow[j] = h->w[j];
  }
  for (uint32_t w = 0; w < h->nw; w++)
    fu_off[w + 2] += fu_off[w + 1];
  for (uint32_t j = 0; j < nb; j++)
    fu[fu_off[h->first[j] + 1]++] = j;

  for (uint32_t w = 0; w < h->nw; w++) {
    uint32_t t = h->wk_stream[w], a = h->wk_before[w], at = h->st_seq[a];
    uint32_t *stk = stack + st_off[t], *stx = stack_x + st_off[t], *stp = stack_p + st_off[t];
    for (; cursor[t] <= at; cursor[t]++) {
      uint32_t s = h->chain[h->ch_off[t] + cursor[t]], pos = h->st_seq[s];
      for (uint32_t i = arr_off[s]; i < arr_off[s + 1]; i++) {
        uint32_t x = (k->tail[arr[i]] - ns) / 2;
        stx[top[t]] = x;
        stp[top[t]] = pos;
        stk[top[t]++] = arr[i];
        known[x]++;
      }
    }
    for (uint32_t i = fu_off[w]; i < fu_off[w + 1]; i++) {
      uint32_t c = fu[i];
      uint64_t need = h->w[c];
      while (need > 0 && k->kq[c] == PS_NONE && top[t] > 0) {
        uint32_t best = PS_NONE, best_score = UINT32_MAX, live = 0, q = top[t];
        while (q > 0 && live < LOOK) {
          uint32_t x = stx[--q];
          if (rem[x] == 0) {
            stk[q] = PS_NONE;
            continue;
          }
          live++;
          uint32_t score = known[x];
          if (score < best_score) {
            best_score = score;
            best = q;
          }
        }
        uint32_t r = best == PS_NONE ? PS_NONE : stk[best], out_at = q;
        uint32_t x = best == PS_NONE ? PS_NONE : stx[best];
        uint32_t pos = best == PS_NONE ? 0 : stp[best];
        for (uint32_t e = q; e < top[t]; e++)
          if (stk[e] != PS_NONE) {
            stx[out_at] = stx[e];
            stp[out_at] = stp[e];
            stk[out_at++] = stk[e];
          }
        top[t] = out_at;
        if (r == PS_NONE)
          break;
        uint64_t take = rem[x] < need ? rem[x] : need;
        k->flow[r] += take;
        diff[h->ch_off[t] + pos + 1] += take;
        diff[h->ch_off[t] + at + 1] -= take;
        k->flow[k->a_acq + c] += take;
        rem[x] -= take;
        need -= take;
      }
      k->flow[k->a_src + c] += need;
    }
  }
  for (uint32_t j = 0; j < nb; j++)
    k->flow[k->a_snk + j] = rem[j];
  for (uint32_t t = 0; t < S; t++) {
    uint64_t run = 0;
    for (uint32_t i = h->ch_off[t]; i < h->ch_off[t + 1]; i++) {
      run += diff[i];
      k->flow[k->a_chain + h->chain[i]] = run;
    }
  }
  rc = 0;
out:
  free (arr_off);
  free (arr);
  free (st_off);
  free (stack);
  free (stack_x);
  free (stack_p);
  free (top);
  free (cursor);
  free (fu_off);
  free (fu);
  free (rem);
  free (diff);
  free (known);
  return rc;
}

/* ---- the minimum flow ---- */

/* Where adjacency entry e of a node leads, at what length, and how much it
 * can still carry: forward arcs without limit, backward ones what their
 * arc carries above its lower bound. */
static inline uint64_t
residual (const net *k, ps__adj e, uint32_t *len)
{
  uint32_t a = e.e >> 1;
  if (e.e & 1) {
    *len = 1;
    return k->flow[a] - lower (k, a);
  }
  *len = 0;
  return INF;
}

/* Lengths from the sink (one per give-back on the way: ps-pool-peak.c's
 * top), kept in `len` for the nodes a phase touched and found from the
 * network's shape for the rest.
 *
 * Level one floods: the sink gives back to the out nodes of the buffers
 * that still send bytes to it (the seeds), and free arcs lead on from
 * there to everything after them in the plan's order, 87% of the 1M-node
 * layered plan's network.  That set is known without walking it.  An out
 * node reaches, on each stream, its buffer's release state there and
 * nothing earlier (every state it reaches follows all the buffer's uses,
 * and the release is the earliest such; implied release arcs included),
 * and every state after it on that stream; so level one holds, on each
 * stream, the states from the earliest release of a seed there on (the
 * frontier: a state the frontier of one stream reaches on another follows
 * that seed's uses too, so it lies past the frontier there), the in node
 * of every buffer acquired at such a state, and the out node of every
 * such buffer and every seed.  What gives back from level one to a node
 * outside it is then few arcs (the frontier states' chain arcs, the waits
 * and releases that carry flow into it, seeds' own arcs, fresh bytes into
 * it), and the levels past one are walked as before from those.  Feeding
 * nodes (buffers with no earliest use state) are not in that picture:
 * with any, every level is walked (`implicit` off). */
#define UNSET (FAR - 1)

bool ps__peak_level_one_implicit = true;
uint64_t ps__peak_phases;

typedef struct lengths {
  uint32_t *len;     /* per node: its length, or UNSET (implicit) */
  uint32_t *touched; /* the nodes whose len is set, when implicit */
  uint32_t n_touched;
  bool implicit;
  uint32_t *front; /* per stream: the first chain position at level one */
  uint64_t *seed;  /* per buffer, a bit: a seed this phase */
} lengths;

static bool
level_one (const net *k, const lengths *lv, uint32_t v)
{
  const ps__hb *h = &k->h;
  if (v < h->ns)
    return h->st_seq[v] >= lv->front[h->st_stream[v]];
  if (v >= h->ns + 2 * h->nb)
    return false; /* the sink (level 0) and the source */
  uint32_t j = (v - h->ns) / 2;
  if (((v - h->ns) & 1) && bit (lv->seed, j))
    return true;
  uint32_t a = h->wk_before[h->first[j]];
  return h->st_seq[a] >= lv->front[h->st_stream[a]];
}

static inline uint32_t
dist_of (const net *k, const lengths *lv, uint32_t v)
{
  uint32_t d = lv->len[v];
  if (d != UNSET)
    return d;
  return level_one (k, lv, v) ? 1 : FAR;
}

static inline void
dist_set (lengths *lv, uint32_t v, uint32_t d)
{
  if (lv->implicit && lv->len[v] == UNSET)
    lv->touched[lv->n_touched++] = v;
  lv->len[v] = d;
}

/* Level one and the nodes one give-back past it (queued in qb, their
 * length set to 2); whether the source is among them. */
static bool
level_one_find (const net *k, lengths *lv, uint32_t *qb, uint32_t *nbq)
{
  const ps__hb *h = &k->h;
  uint32_t S = h->S, nb = h->nb, ns = h->ns;
  for (uint32_t t = 0; t < S; t++)
    lv->front[t] = FAR;
  memset (lv->seed, 0, ((size_t) nb / 64 + 1) * sizeof *lv->seed);
  for (uint32_t j = 0; j < nb; j++) {
    if (k->flow[k->a_snk + j] == 0)
      continue;
    lv->seed[j >> 6] |= (uint64_t) 1 << (j & 63);
    for (uint32_t t = 0; t < S; t++) {
      uint32_t r = h->release[(size_t) j * S + t];
      if (r != PS_NONE && h->st_seq[r] < lv->front[t])
        lv->front[t] = h->st_seq[r];
    }
  }
  uint32_t n = 0;
  bool source = false;
#define REACH(v)                                                                                   \
  do {                                                                                             \
    uint32_t v_ = (v);                                                                             \
    if (lv->len[v_] == UNSET && !level_one (k, lv, v_)) {                                          \
      dist_set (lv, v_, 2);                                                                        \
      qb[n++] = v_;                                                                                \
    }                                                                                              \
  } while (0)
  /* Each frontier state's chain arc, and the waits into level one. */
  for (uint32_t t = 0; t < S; t++)
    if (lv->front[t] != FAR && lv->front[t] > 0) {
      uint32_t s = h->chain[h->ch_off[t] + lv->front[t]];
      if (bit (k->give, k->a_chain + s))
        REACH (h->st_prev[s]);
    }
  for (uint32_t a = k->a_chain + ns; a < k->a_rel; a++)
    if (bit (k->give, a) && level_one (k, lv, k->head[a]))
      REACH (k->tail[a]);
  /* Releases into level one from buffers outside it, seeds' own arcs,
   * and fresh bytes into it. */
  for (uint32_t j = 0; j < nb; j++) {
    uint32_t in = node_in (k, j), out = node_out (k, j);
    bool in_one = level_one (k, lv, in);
    if (in_one) {
      source |= bit (k->give, k->a_src + j);
      continue;
    }
    if (bit (lv->seed, j)) {
      if (bit (k->give, j))
        REACH (in);
      continue;
    }
    for (uint32_t r = k->rel_off[j]; r < k->rel_off[j + 1]; r++) {
      uint32_t a = k->a_rel + r;
      if (bit (k->give, a) && level_one (k, lv, k->head[a])) {
        REACH (out);
        break;
      }
    }
  }
#undef REACH
  *nbq = n;
  return source;
}

/* Lengths from the sink by 0-1 breadth-first search, level by level; stops
 * at the source's level.  Returns whether the source was reached (1 or
 * 0), or PS_ENOMEM. */
static int
levels (net *k, lengths *lv, uint32_t *qa, uint32_t *qb)
{
  uint32_t N = k->nn + 2, na = 0, nbq = 0, L = 0;
  uint32_t *dist = lv->len;
  if (lv->implicit) {
    for (uint32_t i = 0; i < lv->n_touched; i++)
      dist[lv->touched[i]] = UNSET;
    lv->n_touched = 0;
    dist_set (lv, k->sink, 0);
    bool source = level_one_find (k, lv, qb, &nbq);
    if ((source || nbq > 0) && build_adjacency (k) < 0)
      return PS_ENOMEM;
    if (source) {
      dist_set (lv, k->source, 2);
      return 1;
    }
    L = 1;
  } else {
    if (build_adjacency (k) < 0)
      return PS_ENOMEM;
    for (uint32_t v = 0; v < N; v++)
      dist[v] = FAR;
    dist[k->sink] = 0;
    qa[na++] = k->sink;
  }
  for (;;) {
    while (na > 0) {
      uint32_t u = qa[--na];
      if (dist[u] != L)
        continue;
      ps__adj x;
      for (uint32_t i = 0, n = adj_len (k, u); adj_next (k, u, &i, n, false, &x); i++) {
        uint32_t v = x.to, e = x.e, len = e & 1;
        if ((len && !bit (k->give, e >> 1)) || dist_of (k, lv, v) <= L + len)
          continue;
        dist_set (lv, v, L + len);
        if (len == 0)
          qa[na++] = v;
        else
          qb[nbq++] = v;
      }
    }
    if (dist[k->source] == L + 1)
      return 1;
    for (uint32_t i = 0; i < nbq; i++)
      if (dist[qb[i]] == L + 1)
        qa[na++] = qb[i];
    nbq = 0;
    L++;
    if (na == 0)
      return 0;
  }
}

/* The nodes on some shortest path from the sink to the source: from the
 * source backwards over the level graph's arcs, marked in on with stamp
 * and listed in list (room for every node).  Returns how many.  Levels
 * flood the network (a free arc leads on to everything after it in the
 * plan's order), but the paths keep to a few hundred of its millions of
 * nodes: the blocking flow walks those alone. */
static uint32_t
on_paths (const net *k, const lengths *lv, uint32_t *on, uint32_t stamp, uint32_t *list)
{
  uint32_t D = dist_of (k, lv, k->source), n = 0, head = 0;
  on[k->source] = stamp;
  list[n++] = k->source;
  while (head < n) {
    uint32_t v = list[head++], dv = dist_of (k, lv, v), deg = adj_len (k, v);
    /* Only the sink is at length 0: nothing before it is on a path. */
    if (v == k->sink)
      continue;
    ps__adj x;
    for (uint32_t i = 0; adj_next (k, v, &i, deg, true, &x); i++) {
      /* The arc from u into v, as u's adjacency sees it: v's entry with
       * its direction turned. */
      uint32_t u = x.to, len;
      if (on[u] == stamp || residual (k, (ps__adj){ v, x.e ^ 1 }, &len) == 0)
        continue;
      uint32_t du = dist_of (k, lv, u);
      if (du >= D || du + len != dv)
        continue;
      on[u] = stamp;
      list[n++] = u;
    }
  }
  return n;
}

/* A blocking flow from the sink to the source along shortest paths, over
 * the n_on nodes of on_paths (list, marked stamp in on): depth-first, each
 * node's next arc remembered, dead ends dropped.  The admissible arcs form
 * no cycle (free arcs follow the plan's order, and every other arc is one
 * longer), so the path never meets itself. */
static void
block (net *k, lengths *lv, const uint32_t *on, uint32_t stamp, const uint32_t *list, uint32_t n_on,
       uint32_t *it, uint32_t *path, ps__adj *via, uint64_t *total)
{
  uint32_t d = 0;
  for (uint32_t i = 0; i < n_on; i++)
    it[list[i]] = 0;
  it[k->sink] = 0; /* listed whenever a path is */
  path[0] = k->sink;
  for (;;) {
    uint32_t u = path[d];
    if (u == k->source) {
      uint64_t delta = INF;
      for (uint32_t i = 0; i < d; i++) {
        uint32_t len;
        uint64_t c = residual (k, via[i], &len);
        if (c < delta)
          delta = c;
      }
      uint32_t cut = d;
      for (uint32_t i = 0; i < d; i++) {
        uint32_t a = via[i].e >> 1;
        if (via[i].e & 1) {
          k->flow[a] -= delta;
          if (cut == d && !gives (k, a))
            cut = i;
        } else {
          k->flow[a] += delta;
        }
        give_update (k, a);
      }
      *total -= delta;
      d = cut;
      continue;
    }
    bool moved = false;
    uint32_t du = dist_of (k, lv, u);
    ps__adj x;
    for (uint32_t n = adj_len (k, u); adj_next (k, u, &it[u], n, false, &x); it[u]++) {
      uint32_t v = x.to, len = x.e & 1;
      if (on[v] != stamp || dist_of (k, lv, v) != du + len || residual (k, x, &len) == 0)
        continue;
      via[d] = x;
      path[++d] = v;
      moved = true;
      break;
    }
    if (moved)
      continue;
    if (d == 0)
      return;
    dist_set (lv, u, FAR);
    d--;
    it[path[d]]++;
  }
}

/* ---- the fallback bound ---- */

/* Peak of bytes live from first to last use in issue order: a use issued
 * after another cannot happen before it, so buffers live at once here
 * are pairwise unordered. */
static int
issue_order_peak (const ps__hb *h, uint64_t *peak)
{
  uint64_t *delta = calloc ((size_t) h->nw + 1, sizeof *delta);
  if (!delta)
    return PS_ENOMEM;
  for (uint32_t j = 0; j < h->nb; j++) {
    delta[h->first[j]] += h->w[j];
    delta[h->last[j] + 1] -= h->w[j];
  }
  uint64_t live = 0;
  *peak = 0;
  for (uint32_t w = 0; w < h->nw; w++) {
    live += delta[w];
    if (live > *peak)
      *peak = live;
  }
  free (delta);
  return 0;
}

/* Whether the caller stopped the search (cancel may be NULL). */
static inline bool
stopped (const atomic_bool *cancel)
{
  return cancel && atomic_load_explicit (cancel, memory_order_relaxed);
}

/* The search proper, on a built order: 0 with the peak's buffers marked
 * in live (when not NULL), PS_ELIMIT when the plan is too large (or too
 * heavy) for it, or PS_ECANCELED when stopped (between its phases). */
static int
search (net *k, ps_pool_peak *out, uint8_t *live, const atomic_bool *cancel)
{
  ps__hb *h = &k->h;
  uint64_t sum = 0;
  for (uint32_t j = 0; j < h->nb; j++) {
    if (h->w[j] > UINT64_MAX - sum)
      return PS_ELIMIT; /* flows could not be counted in 64 bits */
    sum += h->w[j];
  }
  if (!h->release)
    return PS_ELIMIT;
  int rc;
  if ((rc = build_network (k)) < 0 || (rc = mark_implied (k)) < 0)
    return rc;
  if (stopped (cancel))
    return PS_ECANCELED;
  if ((rc = greedy_flow (k)) < 0 || (rc = give_bits (k)) < 0)
    return rc;
  uint64_t total = 0;
  for (uint32_t j = 0; j < h->nb; j++)
    total += k->flow[k->a_src + j];

  uint32_t N = k->nn + 2;
  lengths lv = { .implicit = ps__peak_level_one_implicit && k->nk == 0 };
  lv.len = malloc ((size_t) N * sizeof *lv.len);
  lv.touched = lv.implicit ? malloc ((size_t) N * sizeof *lv.touched) : NULL;
  lv.front = malloc ((size_t) h->S * sizeof *lv.front);
  lv.seed = malloc (((size_t) h->nb / 64 + 1) * sizeof *lv.seed);
  uint32_t *qa = malloc ((size_t) N * sizeof *qa);
  uint32_t *qb = malloc ((size_t) N * sizeof *qb), *it = malloc ((size_t) N * sizeof *it);
  uint32_t *path = malloc (((size_t) N + 1) * sizeof *path);
  ps__adj *via = malloc (((size_t) N + 1) * sizeof *via);
  uint32_t *on = calloc (N, sizeof *on);
  rc = PS_ENOMEM;
  if (!lv.len || (lv.implicit && !lv.touched) || !lv.front || !lv.seed || !qa || !qb || !it || !path
      || !via || !on)
    goto out;
  if (lv.implicit)
    for (uint32_t v = 0; v < N; v++)
      lv.len[v] = UNSET;
  for (uint32_t stamp = 1; !stopped (cancel) && (rc = levels (k, &lv, qa, qb)) == 1; stamp++) {
    ps__peak_phases++;
    uint32_t n_on = on_paths (k, &lv, on, stamp, qa);
    uint64_t before = total;
    block (k, &lv, on, stamp, qa, n_on, it, path, via, &total);
    if (total == before)
      break; /* a path the blocking flow cannot take: the cut below says so */
  }
  if (rc < 0)
    goto out;
  if (stopped (cancel)) {
    rc = PS_ECANCELED;
    goto out;
  }

  /* The cut: buffers whose out node the sink reaches and in node not. */
  uint64_t cut = 0;
  for (uint32_t j = 0; j < h->nb; j++)
    if (dist_of (k, &lv, node_out (k, j)) != FAR && dist_of (k, &lv, node_in (k, j)) == FAR) {
      cut += h->w[j];
      out->n_buffers++;
      if (live)
        live[h->bid[j]] = 1;
    }
  /* Max-flow min-cut: they cannot differ; say so rather than print a
   * wrong figure. */
  rc = cut == total ? 0 : PS_EINVAL;
  out->bytes = cut;
out:
  free (lv.len);
  free (lv.touched);
  free (lv.front);
  free (lv.seed);
  free (qa);
  free (qb);
  free (it);
  free (path);
  free (via);
  free (on);
  return rc;
}

static int
compute (const ps_plan *p, ps_pool_peak *out, uint8_t *live, const atomic_bool *cancel)
{
  memset (out, 0, sizeof *out);
  if (!p || !p->graph)
    return PS_EINVAL;
  const ps_graph *g = p->graph;
  if (live)
    memset (live, 0, g->n_buffers);
  out->exact = true;
  if (!p->offsets || g->n_buffers == 0)
    return 0;
  net k;
  memset (&k, 0, sizeof k);
  k.exact = true;
  int rc = ps__hb_build (&k.h, p);
  if (rc == 0 && stopped (cancel))
    rc = PS_ECANCELED;
  if (rc == 0) {
    rc = search (&k, out, live, cancel);
    if (rc == PS_ELIMIT) {
      /* Too large to search: the issue-order bound. */
      k.exact = false;
      out->n_buffers = 0;
      if (live)
        memset (live, 0, g->n_buffers);
      rc = issue_order_peak (&k.h, &out->bytes);
    }
  }
  if (rc == 0) {
    out->exact = k.exact;
    if (k.h.unused_max > out->bytes) {
      /* A buffer nobody uses needs its bytes all the same. */
      out->bytes = k.h.unused_max;
      out->n_buffers = 1;
      if (live) {
        memset (live, 0, g->n_buffers);
        for (uint32_t b = 0; b < g->n_buffers; b++)
          if (!(g->buffers[b].flags & PS_BUF_EXTERNAL) && k.h.dense[b] == PS_NONE
              && p->offsets[b] != UINT64_MAX && g->buffers[b].bytes == k.h.unused_max) {
            live[b] = 1;
            break;
          }
      }
    }
  }
  net_free (&k);
  return rc;
}

int
ps_pool_peak_compute (const ps_plan *p, ps_pool_peak *out, uint8_t *live)
{
  return compute (p, out, live, NULL);
}

/* ---- sought on a second thread ---- */

static void
seek_main (void *arg)
{
  struct ps__plan_peak *j = arg;
  ps_pool_peak pk;
  /* The planner's, sought beside the memory pass, the count the search
   * left running and the writing of the plan, and wanted last (the
   * summary's pool line): it takes the cores they leave. */
  if (j->low)
    ps__job_lower_priority ();
  j->rc = compute (&j->snap, &pk, NULL, &j->cancel);
  j->bytes = pk.bytes;
  j->n_buffers = pk.n_buffers;
  j->exact = pk.exact;
}

bool
ps__peak_seek_start (struct ps__plan_peak *j, const ps_plan *p, bool low)
{
  memset (j, 0, sizeof *j);
  j->low = low;
  j->snap = *p;
  j->snap.run = NULL;
  j->snap.peak = NULL;
  atomic_init (&j->cancel, false);
  ps__job_start (&j->job, seek_main, j, true);
  if (j->job.threaded)
    return true;
  /* No thread: sought where it is shown, as without one. */
  ps__job_drop (&j->job);
  return false;
}

int
ps__peak_seek_wait (struct ps__plan_peak *j, ps_pool_peak *out)
{
  ps__job_finish (&j->job);
  memset (out, 0, sizeof *out);
  out->bytes = j->bytes;
  out->n_buffers = j->n_buffers;
  out->exact = j->exact;
  return j->rc;
}

uint32_t ps__peak_early_min = 262144u;

bool
ps__plan_peak_start (ps_plan *p, uint32_t min_buffers)
{
  if (p->peak || p->pool_peak_known || !p->graph || p->graph->n_buffers < min_buffers)
    return false;
  struct ps__plan_peak *j = malloc (sizeof *j);
  if (!j)
    return false;
  if (!ps__peak_seek_start (j, p, true)) {
    free (j);
    return false;
  }
  p->peak = j;
  return true;
}

void
ps__plan_peak_drop (ps_plan *p)
{
  ps__plan_peak_stop (p->peak);
  free (p->peak);
  p->peak = NULL;
}

int
ps_plan_find_peak (ps_plan *p)
{
  if (!p)
    return PS_EINVAL;
  if (p->pool_peak_known)
    return 0;
  ps_pool_peak pk;
  int rc = p->peak ? ps__peak_seek_wait (p->peak, &pk) : ps_pool_peak_compute (p, &pk, NULL);
  if (p->peak) {
    free (p->peak);
    p->peak = NULL;
  }
  if (rc < 0)
    return rc;
  p->pool_peak = pk.bytes;
  p->pool_peak_exact = pk.exact;
  p->pool_peak_known = true;
  return 0;
}

int
ps_pool_peak_of (const ps_plan *p, ps_pool_peak *out)
{
  if (p && p->pool_peak_known) {
    memset (out, 0, sizeof *out);
    out->bytes = p->pool_peak;
    out->exact = p->pool_peak_exact;
    return 0;
  }
  if (p && p->peak)
    return ps__peak_seek_wait (p->peak, out);
  return ps_pool_peak_compute (p, out, NULL);
}

double
ps_pool_ratio (const ps_plan *p, const ps_pool_peak *pk)
{
  if (pk->bytes == 0)
    return p->pool_bytes == 0 ? 1.0 : INFINITY;
  return (double) p->pool_bytes / (double) pk->bytes;
}

const char *
ps_pool_text (const ps_plan *p, const ps_pool_peak *pk, char *buf, size_t cap)
{
  char a[PS_FORMAT_MAX], b[PS_FORMAT_MAX];
  ps_format_bytes ((double) p->pool_bytes, a, sizeof a);
  if (pk->bytes == 0)
    snprintf (buf, cap, "%s, nothing live at once", a);
  else
    snprintf (buf, cap, "%s, %.2fx %s of %s live at once", a, ps_pool_ratio (p, pk),
              pk->exact ? "the peak" : "a lower bound", ps_format_bytes ((double) pk->bytes, b, sizeof b));
  return buf;
}
