/* ps-pool-size.c: pool offsets largest first (the offline planner of
 * TensorFlow Lite's and MNN's memory arenas, and of XLA's heap
 * simulator), over the plan's happens-before order.
 *
 * Buffers are placed largest first; each goes at the lowest offset where
 * it fits between the buffers already placed that it may not share bytes
 * with, or right above the highest of them.  Ties in size go by first use
 * in one pass and by the longest span first in another; the smaller pool
 * is kept.  Two buffers may share bytes when every use of one
 * happens-before every use of the other (ps__hb_before); the others are
 * its conflicts, found through two indexes per stream, in buckets of
 * positions on that stream:
 *
 *  - A: each placed buffer a over the positions of stream t from the
 *    first one not before a's first use to its release state on t (the
 *    stream's end if t never learns of it).  A buffer b first used on t at
 *    position p, and not before a, is unordered with a exactly when a
 *    covers p: that finds the conflicts that started no later than b.
 *  - B: each placed buffer at the position of its first use on the stream
 *    of that use.  The conflicts that started after b lie, on each stream
 *    x, between b's first use and b's release on x.
 *
 * (A buffer whose uses have no earliest state is looked up, and entered
 * in B, at the first use on each stream.)  The work is the buffers found
 * that way, about the buffers live at once per buffer; the packing gives
 * up (PS_ELIMIT) when an estimate of it passes a budget, and the caller
 * packs online instead. */
#include "ps-pool-private.h"

#include <stdlib.h>
#include <string.h>

#include "util/ps-job.h"
#include "util/ps-rankset.h"

/* Stream positions per bucket. */
#define BUCKET 16u

typedef struct gap_iv {
  uint64_t off, end;
} gap_iv;

/* Sorts n intervals by offset: spread into about n buckets by the top
 * bits of the offset (one counting pass), then insertion sort, which has
 * only the few inversions inside each bucket left to undo.  cnt: room for
 * n + 2 counts. */
static void
sort_by_offset (gap_iv *v, gap_iv *tmp, uint32_t *cnt, uint32_t n)
{
  if (n < 2)
    return;
  uint64_t hi = 0;
  for (uint32_t i = 0; i < n; i++)
    if (v[i].off > hi)
      hi = v[i].off;
  uint32_t shift = 0;
  while ((hi >> shift) >= n)
    shift++;
  memset (cnt, 0, ((size_t) n + 1) * sizeof *cnt);
  for (uint32_t i = 0; i < n; i++)
    cnt[(v[i].off >> shift) + 1]++;
  for (uint32_t k = 0; k < n; k++)
    cnt[k + 1] += cnt[k];
  for (uint32_t i = 0; i < n; i++)
    tmp[cnt[v[i].off >> shift]++] = v[i];
  for (uint32_t i = 0; i < n; i++) {
    gap_iv x = tmp[i];
    uint32_t k = i;
    for (; k > 0 && v[k - 1].off > x.off; k--)
      v[k] = v[k - 1];
    v[k] = x;
  }
}

/* The lowest offset where zb bytes lie clear of the m intervals in v
 * (first fit; v sorted here, tmp and cnt as sort_by_offset needs). */
static uint64_t
first_fit (gap_iv *v, gap_iv *tmp, uint32_t *cnt, uint32_t m, uint64_t zb)
{
  sort_by_offset (v, tmp, cnt, m);
  uint64_t cur = 0;
  for (uint32_t k = 0; k < m && !(v[k].off >= cur && v[k].off - cur >= zb); k++)
    if (v[k].end > cur)
      cur = v[k].end;
  return cur;
}

/* A bucketed index over the positions of every stream: CSR lists sized
 * in a first pass, filled as buffers are placed. */
typedef struct bidx {
  uint32_t *base;     /* per stream: its first bucket */
  uint32_t *off, *n;  /* per bucket: list start, entries so far */
  uint32_t *items;
  uint64_t entries;
} bidx;

static void
bidx_free (bidx *x)
{
  free (x->base);
  free (x->off);
  free (x->n);
  free (x->items);
}

/* What the comparisons read of a buffer, in one place: where it lies once
 * placed, and the stream and position of the state before its first use
 * (meet: every other use comes no earlier). */
typedef struct item {
  uint64_t off, end;
  uint32_t t, seq;
  uint32_t meet, slot;
} item;

/* Offsets in use, each a slot: conflicts at one offset count once (the
 * longest), so the sort sees distinct offsets only.  Open addressing,
 * grown at half full. */
typedef struct slots {
  uint64_t *key;  /* offset + 1; 0 for an empty cell */
  uint32_t *id;
  uint32_t mask, n;
  uint32_t *stamp; /* per slot: the last lookup it was met in */
  uint32_t *conf;  /* per slot: its entry in the lookup's conflict list */
  uint32_t cap;
} slots;

static void
slots_free (slots *m)
{
  free (m->key);
  free (m->id);
  free (m->stamp);
  free (m->conf);
}

static inline uint32_t
slot_hash (uint64_t off)
{
  uint64_t x = off >> 8;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  return (uint32_t) x;
}

/* The slot of offset off, made when new; PS_NONE when out of memory. */
static uint32_t
slot_of (slots *m, uint64_t off)
{
  if (2 * (m->n + 1) > m->mask + 1) {
    uint32_t cells = m->mask ? 2 * (m->mask + 1) : 1024;
    uint64_t *key = calloc (cells, sizeof *key);
    uint32_t *id = malloc (cells * sizeof *id);
    if (!key || !id) {
      free (key);
      free (id);
      return PS_NONE;
    }
    for (uint32_t c = 0; m->mask && c <= m->mask; c++)
      if (m->key[c]) {
        uint32_t at = slot_hash (m->key[c] - 1) & (cells - 1);
        while (key[at])
          at = (at + 1) & (cells - 1);
        key[at] = m->key[c];
        id[at] = m->id[c];
      }
    free (m->key);
    free (m->id);
    m->key = key;
    m->id = id;
    m->mask = cells - 1;
  }
  uint32_t at = slot_hash (off) & m->mask;
  for (; m->key[at]; at = (at + 1) & m->mask)
    if (m->key[at] == off + 1)
      return m->id[at];
  if (m->n == m->cap) {
    uint32_t cap = m->cap ? 2 * m->cap : 1024;
    uint32_t *st = realloc (m->stamp, cap * sizeof *st), *cf = NULL;
    if (st)
      m->stamp = st;
    if (st && (cf = realloc (m->conf, cap * sizeof *cf)))
      m->conf = cf;
    if (!st || !cf)
      return PS_NONE;
    m->cap = cap;
  }
  m->key[at] = off + 1;
  m->id[at] = m->n;
  m->stamp[m->n] = 0;
  return m->id[at] = m->n++;
}

typedef struct sz {
  const ps__hb *h;
  uint32_t S;
  uint32_t *s0;   /* per buffer: id of the state before its first use */
  item *it;
  uint32_t *rseq; /* nb x S: position of the release state on each stream, or UINT32_MAX */
  uint32_t *lo;   /* nb x S: see first_positions */
  bidx A, B;
} sz;

/* Whether every use of a happens-before every use of c. */
static inline bool
before (const sz *z, uint32_t a, uint32_t c)
{
  const item *ic = &z->it[c];
  if (ic->meet)
    return z->rseq[(size_t) a * z->S + ic->t] <= ic->seq;
  return ps__hb_before (z->h, a, c);
}

/* lo[j, t]: the first position on stream t whose state id is at least
 * s0[j], for every buffer: one sweep down the state ids with the buffers
 * bucketed by s0, keeping each stream's position of the lowest id seen. */
static int
first_positions (sz *z)
{
  const ps__hb *h = z->h;
  uint32_t S = z->S, nb = h->nb, ns = h->ns;
  uint32_t *b_off = calloc ((size_t) ns + 2, sizeof *b_off);
  uint32_t *by = malloc ((nb ? nb : 1) * sizeof *by), *cur = malloc (S * sizeof *cur);
  if (!b_off || !by || !cur) {
    free (b_off);
    free (by);
    free (cur);
    return PS_ENOMEM;
  }
  for (uint32_t j = 0; j < nb; j++)
    b_off[z->s0[j] + 2]++;
  for (uint32_t q = 0; q < ns; q++)
    b_off[q + 2] += b_off[q + 1];
  for (uint32_t j = 0; j < nb; j++)
    by[b_off[z->s0[j] + 1]++] = j;
  for (uint32_t t = 0; t < S; t++)
    cur[t] = h->ch_off[t + 1] - h->ch_off[t];
  for (uint32_t q = ns; q-- > 0;) {
    cur[h->st_stream[q]] = h->st_seq[q];
    for (uint32_t i = b_off[q]; i < b_off[q + 1]; i++)
      memcpy (z->lo + (size_t) by[i] * S, cur, S * sizeof *cur);
  }
  free (b_off);
  free (by);
  free (cur);
  return 0;
}

/* Where buffer j lies in index A on stream t: positions [*lo, *hi). */
static void
span_a (const sz *z, uint32_t j, uint32_t t, uint32_t *lo, uint32_t *hi)
{
  const ps__hb *h = z->h;
  uint32_t r = h->release[(size_t) j * z->S + t];
  *lo = z->lo[(size_t) j * z->S + t];
  *hi = r == PS_NONE ? h->ch_off[t + 1] - h->ch_off[t] : h->st_seq[r];
}

/* Where buffer j enters index B, as (stream, position) pairs in xs and
 * ps: its first use, or, without a meet, its first use on each stream.
 * Returns their count. */
static uint32_t
first_uses (const ps__hb *h, uint32_t j, uint32_t *xs, uint32_t *ps)
{
  uint32_t b = h->bid[j], n = 0;
  uint64_t seen[PS_MAX_STREAMS / 64] = { 0 };
  for (uint32_t i = h->use_off[b]; i < h->use_off[b + 1]; i++) {
    uint32_t v = h->use[i], x = h->wk_stream[v];
    if (seen[x / 64] >> (x % 64) & 1)
      continue;
    seen[x / 64] |= (uint64_t) 1 << (x % 64);
    xs[n] = x;
    ps[n++] = h->st_seq[h->wk_before[v]];
    if (h->meet[j])
      break;
  }
  return n;
}

static int
bidx_init (bidx *x, const ps__hb *h)
{
  memset (x, 0, sizeof *x);
  x->base = malloc (((size_t) h->S + 1) * sizeof *x->base);
  if (!x->base)
    return PS_ENOMEM;
  uint32_t nbk = 0;
  for (uint32_t t = 0; t < h->S; t++) {
    x->base[t] = nbk;
    nbk += (h->ch_off[t + 1] - h->ch_off[t]) / BUCKET + 1;
  }
  x->base[h->S] = nbk;
  x->off = calloc ((size_t) nbk + 2, sizeof *x->off);
  x->n = calloc ((size_t) nbk + 1, sizeof *x->n);
  return x->off && x->n ? 0 : PS_ENOMEM;
}

static int
bidx_alloc (bidx *x, uint32_t S)
{
  uint32_t nbk = x->base[S];
  for (uint32_t b = 0; b < nbk; b++) {
    x->entries += x->off[b + 2];
    x->off[b + 2] += x->off[b + 1];
  }
  x->items = malloc ((x->entries ? x->entries : 1) * sizeof *x->items);
  return x->items ? 0 : PS_ENOMEM;
}

/* About half the pairs in each bucket are met by the lookups. */
static uint64_t
bidx_work (const bidx *x, uint32_t S)
{
  uint64_t w = x->entries;
  for (uint32_t b = 0; b < x->base[S]; b++) {
    uint64_t n = x->off[b + 2] - x->off[b + 1];
    w += n * n / 2;
  }
  return w;
}

/* The lookups' scratch: conflicts found, and a sort buffer. */
typedef struct conflicts {
  gap_iv *v, *tmp;
  uint32_t *cnt;
  uint32_t n, cap;
} conflicts;

static int
conflicts_push (conflicts *c, gap_iv x)
{
  if (c->n == c->cap) {
    uint32_t cap = c->cap ? 2 * c->cap : 256;
    gap_iv *nv = realloc (c->v, cap * sizeof *nv);
    if (!nv)
      return PS_ENOMEM;
    c->v = nv;
    gap_iv *nt = realloc (c->tmp, cap * sizeof *nt);
    if (!nt)
      return PS_ENOMEM;
    c->tmp = nt;
    uint32_t *nc = realloc (c->cnt, ((size_t) cap + 2) * sizeof *nc);
    if (!nc)
      return PS_ENOMEM;
    c->cnt = nc;
    c->cap = cap;
  }
  c->v[c->n++] = x;
  return 0;
}

/* Collects the placed buffers that j may not share bytes with: from A at
 * each of j's first uses (one with a meet), and from B on each stream up
 * to j's release there.  Conflicts at one offset count once, with the
 * highest end.  mark: this lookup's stamp. */
static int
find_conflicts (sz *z, slots *sm, uint32_t *stamp, uint32_t mark, uint32_t j, conflicts *c)
{
  const ps__hb *h = z->h;
  uint32_t S = z->S, xs[PS_MAX_STREAMS], ps[PS_MAX_STREAMS];
  c->n = 0;
  for (int pass = 0; pass < 2; pass++) {
    const bidx *ix = pass == 0 ? &z->A : &z->B;
    uint32_t q0[PS_MAX_STREAMS], q1[PS_MAX_STREAMS], nq = 0;
    if (pass == 0) {
      uint32_t nf = first_uses (h, j, xs, ps);
      for (uint32_t k = 0; k < nf; k++) {
        q0[nq] = ix->base[xs[k]] + ps[k] / BUCKET;
        q1[nq++] = ix->base[xs[k]] + ps[k] / BUCKET + 1;
      }
    } else {
      for (uint32_t x = 0; x < S; x++) {
        uint32_t lo = z->lo[(size_t) j * S + x], r = h->release[(size_t) j * S + x];
        uint32_t hi = r == PS_NONE ? h->ch_off[x + 1] - h->ch_off[x] : h->st_seq[r];
        if (lo < hi) {
          q0[nq] = ix->base[x] + lo / BUCKET;
          q1[nq++] = ix->base[x] + (hi - 1) / BUCKET + 1;
        }
      }
    }
    for (uint32_t q = 0; q < nq; q++)
      for (uint32_t b = q0[q]; b < q1[q]; b++) {
        const uint32_t *list = ix->items + ix->off[b + 1];
        for (uint32_t e = 0; e < ix->n[b]; e++) {
          uint32_t a = list[e];
          if (stamp[a] == mark)
            continue;
          stamp[a] = mark;
          if (before (z, a, j) || before (z, j, a))
            continue;
          uint32_t sl = z->it[a].slot;
          if (sm->stamp[sl] == mark) {
            gap_iv *at = &c->v[sm->conf[sl]];
            if (z->it[a].end > at->end)
              at->end = z->it[a].end;
            continue;
          }
          sm->stamp[sl] = mark;
          sm->conf[sl] = c->n;
          if (conflicts_push (c, (gap_iv){ z->it[a].off, z->it[a].end }) < 0)
            return PS_ENOMEM;
        }
      }
  }
  return 0;
}

/* Places every buffer in the given order, each at the lowest offset where
 * it fits between its conflicts (first fit), and enters it in the
 * indexes.  *top: the highest byte used + 1. */
static int
place_all (sz *z, slots *sm, uint32_t *stamp, const ps__kv *order,
           uint64_t *off, uint64_t *top, conflicts *c)
{
  const ps__hb *h = z->h;
  uint32_t nb = h->nb, S = z->S, xs[PS_MAX_STREAMS], ps[PS_MAX_STREAMS];
  *top = 0;
  for (uint32_t i = 0; i < nb; i++) {
    uint32_t j = order[i].a;
    uint64_t zb = PS__POOL_ALIGNED (h->w[j]);
    if (find_conflicts (z, sm, stamp, i + 1, j, c) < 0)
      return PS_ENOMEM;
    uint64_t cur = first_fit (c->v, c->tmp, c->cnt, c->n, zb);
    off[j] = cur;
    if (cur > UINT64_MAX - zb)
      return PS_ELIMIT;
    if (cur + h->w[j] > *top)
      *top = cur + h->w[j];
    z->it[j].off = cur;
    z->it[j].end = cur + zb;
    if ((z->it[j].slot = slot_of (sm, cur)) == PS_NONE)
      return PS_ENOMEM;
    for (uint32_t t = 0; t < S; t++) {
      uint32_t lo, hi;
      span_a (z, j, t, &lo, &hi);
      for (uint32_t p = lo; p < hi; p = (p / BUCKET + 1) * BUCKET) {
        uint32_t b = z->A.base[t] + p / BUCKET;
        z->A.items[z->A.off[b + 1] + z->A.n[b]++] = j;
      }
    }
    uint32_t nf = first_uses (h, j, xs, ps);
    for (uint32_t k = 0; k < nf; k++) {
      uint32_t b = z->B.base[xs[k]] + ps[k] / BUCKET;
      z->B.items[z->B.off[b + 1] + z->B.n[b]++] = j;
    }
  }
  return 0;
}

/* One of the two packings: its own index entries, placements, slots and
 * stamps over the buckets' layout and the buffers' facts, which both
 * read (z->s0, rseq, lo, the indexes' base and off). */
typedef struct packing {
  sz z;
  slots sm;
  uint32_t *stamp;
  conflicts c;
  const ps__kv *order;
  uint64_t *off;
  uint64_t top;
  int rc;
  ps__job job;
} packing;

/* The second packing's own copies of what place_all writes: the items,
 * their counts per bucket, the buffers' records. */
static int
packing_init (packing *k, const sz *z, const ps__kv *order, uint64_t *off)
{
  uint32_t nb = z->h->nb;
  memset (k, 0, sizeof *k);
  k->z = *z;
  k->order = order;
  k->off = off;
  k->z.it = malloc ((nb ? nb : 1) * sizeof *k->z.it);
  k->stamp = calloc (nb ? nb : 1, sizeof *k->stamp);
  bidx *ix[2] = { &k->z.A, &k->z.B };
  const bidx *from[2] = { &z->A, &z->B };
  for (int i = 0; i < 2; i++) {
    ix[i]->n = calloc ((size_t) from[i]->base[z->S] + 1, sizeof *ix[i]->n);
    ix[i]->items = malloc ((from[i]->entries ? from[i]->entries : 1) * sizeof *ix[i]->items);
  }
  if (!k->z.it || !k->stamp || !k->z.A.n || !k->z.A.items || !k->z.B.n || !k->z.B.items)
    return PS_ENOMEM;
  memcpy (k->z.it, z->it, (nb ? nb : 1) * sizeof *k->z.it);
  return 0;
}

static void
packing_free (packing *k)
{
  free (k->z.it);
  free (k->stamp);
  free (k->z.A.n);
  free (k->z.A.items);
  free (k->z.B.n);
  free (k->z.B.items);
  slots_free (&k->sm);
  free (k->c.v);
  free (k->c.tmp);
  free (k->c.cnt);
}

static void
packing_main (void *arg)
{
  packing *k = arg;
  k->rc = place_all (&k->z, &k->sm, k->stamp, k->order, k->off, &k->top, &k->c);
}

/* Packings whose lookups meet more entries than this (bidx_work, both
 * indexes) are made two at once, the second on a second thread: each
 * reads the buffers' facts and writes only its own entries.  Layered
 * graphs of 30-40k nodes meet about five hundred placed buffers per
 * buffer in each order: the memory pass of a 40k-node one 0.43 -> 0.26 s
 * (the longest-span order, on the thread, takes the longer). */
#define PAIR_WORK ((uint64_t) 1 << 20)

/* Orders the buffers largest first, ties by `key` (stable sorts). */
static int
order_by_size (const ps__hb *h, ps__kv *order)
{
  if (ps__radix_sort_kv (order, h->nb) < 0)
    return PS_ENOMEM;
  for (uint32_t i = 0; i < h->nb; i++)
    order[i].key = UINT64_MAX - PS__POOL_ALIGNED (h->w[order[i].a]);
  return ps__radix_sort_kv (order, h->nb);
}

/* Up to `tries` packings largest first, ties shuffled (xorshift from a
 * fixed seed: the same on every run), while *top is above target: with
 * many buffers of one size, which slot each takes is a colouring that
 * neither order of ps__pool_by_size always gets right.  Each starts from
 * the items `it0` with indexes of its own; the smallest pool below *top
 * goes into off and *top.  order and scratch: nb entries each. */
static int
shuffled_orders (const sz *z, const item *it0, uint32_t tries, uint64_t target, ps__kv *order,
                 uint64_t *off, uint64_t *scratch, uint64_t *top)
{
  uint32_t nb = z->h->nb;
  uint64_t x = 0x9e3779b97f4a7c15u;
  for (uint32_t r = 0; r < tries && *top > target; r++) {
    for (uint32_t j = 0; j < nb; j++) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      order[j] = (ps__kv){ x >> 32, j, 0 };
    }
    packing k;
    memset (&k, 0, sizeof k);
    int rc = order_by_size (z->h, order) < 0 ? PS_ENOMEM : packing_init (&k, z, order, scratch);
    if (rc == 0) {
      memcpy (k.z.it, it0, (nb ? nb : 1) * sizeof *it0);
      packing_main (&k);
      rc = k.rc;
    }
    if (rc == 0 && k.top < *top) {
      memcpy (off, scratch, (size_t) nb * sizeof *off);
      *top = k.top;
    }
    packing_free (&k);
    if (rc < 0)
      return rc;
  }
  return 0;
}

/* Plans of at most LOCAL_BUFFERS buffers still above the target after the
 * orders above are packed in orders found by local search, from the
 * first order (largest first, ties by first use): a buffer moved to
 * another place in the order, the move kept when the pool is no larger
 * and the bytes placed lower on the whole (the sum of each buffer's end
 * times its size) no higher.  First fit in the order of a packing's
 * offsets gives that packing or a lower one, so some order gives the
 * smallest pool; shuffled orders seldom come near it, moves from a good
 * one do: three 50-node layered graphs (35-38 buffers) that stayed at
 * 1.13-1.17x their exact peak after 64 shuffled orders reach it in
 * 500-6,700 moves.  A move places again only the buffers from the first
 * place it changes on, and stops once the pool passes the current one.
 * At most LOCAL_WORK conflicts are read in all (a few hundredths of a
 * second), LOCAL_MUST_WORK while the pool is above `must` (under a
 * second: a 600-node layered graph with pins on 3 streams without fusion,
 * 567 buffers, 1.131x -> 1.097x, its memory pass 0.04 -> 0.34 s). */
#define LOCAL_BUFFERS 4096u
#define LOCAL_WORK ((uint64_t) 1 << 22)
#define LOCAL_MUST_WORK ((uint64_t) 1 << 26)

/* The buffers' conflicts (CSR) and sizes; the current order's offsets
 * (off) and its pool and low sum after each place (top, low); a
 * candidate's (noff, ntop, nlow) from the first place it changes; each
 * buffer's place (pos); scratch for first fit. */
typedef struct local {
  uint32_t n;
  uint32_t *c_off, *c;
  const uint64_t *w;
  uint64_t *zb;
  uint64_t *off, *noff, *top, *ntop;
  double *low, *nlow;
  uint32_t *pos;
  gap_iv *v, *tmp;
  uint32_t *cnt;
} local;

/* First fit in `order` from place `start` on (the places before it as
 * in the current order): noff, ntop and nlow from there; the conflicts
 * read added to *work.  False, once the pool passes `most` (or 64 bits),
 * the rest not placed. */
static bool
local_place (local *l, const uint32_t *order, uint32_t start, uint64_t most, uint64_t *work)
{
  l->ntop[start] = l->top[start];
  l->nlow[start] = l->low[start];
  for (uint32_t i = start; i < l->n; i++) {
    uint32_t j = order[i], m = 0;
    for (uint32_t e = l->c_off[j]; e < l->c_off[j + 1]; e++) {
      uint32_t a = l->c[e], at = l->pos[a];
      if (at >= i)
        continue;
      uint64_t o = at < start ? l->off[a] : l->noff[a];
      l->v[m++] = (gap_iv){ o, o + l->zb[a] };
    }
    *work += l->c_off[j + 1] - l->c_off[j];
    uint64_t zb = l->zb[j], cur = first_fit (l->v, l->tmp, l->cnt, m, zb);
    if (cur > UINT64_MAX - zb)
      return false;
    l->noff[j] = cur;
    l->ntop[i + 1] = cur + l->w[j] > l->ntop[i] ? cur + l->w[j] : l->ntop[i];
    l->nlow[i + 1] = l->nlow[i] + (double) (cur + zb) * (double) zb;
    if (l->ntop[i + 1] > most)
      return false;
  }
  return true;
}

/* The candidate placed from `start` on becomes the current order's
 * placement; its pool, when below *top, goes into off and *top. */
static void
local_keep (local *l, const uint32_t *order, uint32_t start, uint64_t *off, uint64_t *top)
{
  for (uint32_t i = start; i < l->n; i++) {
    l->off[order[i]] = l->noff[order[i]];
    l->top[i + 1] = l->ntop[i + 1];
    l->low[i + 1] = l->nlow[i + 1];
  }
  if (l->top[l->n] < *top) {
    memcpy (off, l->off, (size_t) l->n * sizeof *off);
    *top = l->top[l->n];
  }
}

static void
local_free (local *l)
{
  free (l->c_off);
  free (l->c);
  free (l->zb);
  free (l->off);
  free (l->noff);
  free (l->top);
  free (l->ntop);
  free (l->low);
  free (l->nlow);
  free (l->pos);
  free (l->v);
  free (l->tmp);
  free (l->cnt);
}

/* Local search (see LOCAL_BUFFERS) from the order `start`, while *top is
 * above target: a smaller pool goes into off and *top. */
static int
local_orders (const sz *z, const ps__kv *start, uint64_t target, uint64_t must, uint64_t *off,
              uint64_t *top)
{
  const ps__hb *h = z->h;
  uint32_t n = h->nb, n1 = n ? n : 1;
  if (n < 2)
    return 0;
  local l = { .n = n, .w = h->w };
  l.c_off = calloc ((size_t) n + 2, sizeof *l.c_off);
  l.zb = malloc (n1 * sizeof *l.zb);
  l.off = malloc (n1 * sizeof *l.off);
  l.noff = malloc (n1 * sizeof *l.noff);
  l.top = malloc (((size_t) n + 1) * sizeof *l.top);
  l.ntop = malloc (((size_t) n + 1) * sizeof *l.ntop);
  l.low = malloc (((size_t) n + 1) * sizeof *l.low);
  l.nlow = malloc (((size_t) n + 1) * sizeof *l.nlow);
  l.pos = malloc (n1 * sizeof *l.pos);
  l.v = malloc (n1 * sizeof *l.v);
  l.tmp = malloc (n1 * sizeof *l.tmp);
  l.cnt = malloc (((size_t) n + 2) * sizeof *l.cnt);
  uint32_t *cur = malloc (n1 * sizeof *cur), *cand = malloc (n1 * sizeof *cand);
  uint64_t *bits = NULL;
  int rc = PS_ENOMEM;
  if (!l.c_off || !l.zb || !l.off || !l.noff || !l.top || !l.ntop || !l.low || !l.nlow || !l.pos
      || !l.v || !l.tmp || !l.cnt || !cur || !cand)
    goto out;
  /* Conflicts: the pairs neither of which happens-before the other, found
   * once into a bit matrix (2 MiB at LOCAL_BUFFERS) and counted, then
   * listed in order (c_off[a + 2] counts, c_off[a + 1] fills). */
  size_t words = (n + 63) / 64;
  if (!(bits = calloc ((size_t) n * words, sizeof *bits)))
    goto out;
  for (uint32_t a = 0; a < n; a++)
    for (uint32_t b = a + 1; b < n; b++)
      if (!before (z, a, b) && !before (z, b, a)) {
        bits[a * words + b / 64] |= (uint64_t) 1 << (b % 64);
        bits[b * words + a / 64] |= (uint64_t) 1 << (a % 64);
        l.c_off[a + 2]++;
        l.c_off[b + 2]++;
      }
  for (uint32_t a = 0; a < n; a++)
    l.c_off[a + 2] += l.c_off[a + 1];
  if (!(l.c = malloc ((l.c_off[n + 1] ? l.c_off[n + 1] : 1) * sizeof *l.c)))
    goto out;
  for (uint32_t a = 0; a < n; a++)
    for (size_t w = 0; w < words; w++)
      for (uint64_t x = bits[a * words + w]; x; x &= x - 1)
        l.c[l.c_off[a + 1]++] = (uint32_t) (w * 64 + (uint64_t) __builtin_ctzll (x));
  for (uint32_t j = 0; j < n; j++)
    l.zb[j] = PS__POOL_ALIGNED (h->w[j]);
  for (uint32_t i = 0; i < n; i++) {
    cur[i] = start[i].a;
    l.pos[cur[i]] = i;
  }
  uint64_t work = 0;
  l.top[0] = 0;
  l.low[0] = 0;
  local_place (&l, cur, 0, UINT64_MAX, &work); /* as place_all placed it: it fits */
  local_keep (&l, cur, 0, off, top);
  uint64_t x = 0x2545f4914f6cdd1du;
  while (*top > target && (work < LOCAL_WORK || (*top > must && work < LOCAL_MUST_WORK))) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    uint32_t from = (uint32_t) ((x >> 32) % n), to = (uint32_t) (x % n);
    if (from == to)
      continue;
    /* cur with the buffer at `from` moved to `to`: places lo..hi change. */
    uint32_t lo = from < to ? from : to, hi = from < to ? to : from;
    memcpy (cand, cur, (size_t) n * sizeof *cand);
    uint32_t j = cand[from];
    if (from < to)
      memmove (cand + from, cand + from + 1, (size_t) (to - from) * sizeof *cand);
    else
      memmove (cand + to + 1, cand + to, (size_t) (from - to) * sizeof *cand);
    cand[to] = j;
    for (uint32_t i = lo; i <= hi; i++)
      l.pos[cand[i]] = i;
    if (!local_place (&l, cand, lo, l.top[n], &work) || l.ntop[n] > l.top[n]
        || (l.ntop[n] == l.top[n] && l.nlow[n] > l.low[n])) {
      for (uint32_t i = lo; i <= hi; i++)
        l.pos[cur[i]] = i;
      continue;
    }
    local_keep (&l, cand, lo, off, top);
    uint32_t *swap = cur;
    cur = cand;
    cand = swap;
  }
  rc = 0;
out:
  local_free (&l);
  free (bits);
  free (cur);
  free (cand);
  return rc;
}

int
ps__pool_by_size (const ps__hb *h, uint64_t budget, uint32_t tries, uint64_t target,
                  uint64_t must, uint64_t *off, uint64_t *pool_end)
{
  uint32_t nb = h->nb, S = h->S;
  int rc = PS_ENOMEM;
  sz z;
  slots sm;
  conflicts c = { 0 };
  packing second;
  memset (&second, 0, sizeof second);
  memset (&z, 0, sizeof z);
  memset (&sm, 0, sizeof sm);
  z.h = h;
  z.S = S;
  z.s0 = malloc ((nb ? nb : 1) * sizeof *z.s0);
  z.it = malloc ((nb ? nb : 1) * sizeof *z.it);
  z.rseq = malloc (((size_t) nb * S + 1) * sizeof *z.rseq);
  z.lo = malloc (((size_t) nb * S + 1) * sizeof *z.lo);
  ps__kv *by_start = malloc ((nb ? nb : 1) * sizeof *by_start);
  ps__kv *by_span = malloc ((nb ? nb : 1) * sizeof *by_span);
  uint64_t *off2 = malloc ((nb ? nb : 1) * sizeof *off2);
  uint32_t *stamp = calloc (nb ? nb : 1, sizeof *stamp);
  item *it0 = NULL;
  uint32_t xs[PS_MAX_STREAMS], ps[PS_MAX_STREAMS];
  if (!z.s0 || !z.it || !z.rseq || !z.lo || !by_start || !by_span || !off2 || !stamp
      || bidx_init (&z.A, h) < 0 || bidx_init (&z.B, h) < 0)
    goto out;

  /* Two orders, largest first both: ties by first use (buffers of one
   * size placed in the order they start fill the fewest slots, as first
   * fit does for intervals), and ties by the longest span first (the
   * buffers that constrain the most go first).  Neither wins everywhere;
   * the smaller pool is kept. */
  for (uint32_t j = 0; j < nb; j++) {
    z.s0[j] = h->wk_before[h->first[j]];
    z.it[j] = (item){ 0, 0, h->st_stream[z.s0[j]], h->st_seq[z.s0[j]], h->meet[j], 0 };
    uint32_t end = 0;
    for (uint32_t t = 0; t < S; t++) {
      uint32_t r = h->release[(size_t) j * S + t];
      z.rseq[(size_t) j * S + t] = r == PS_NONE ? UINT32_MAX : h->st_seq[r];
      end = end == PS_NONE || r == PS_NONE ? PS_NONE : r > end ? r : end;
    }
    by_start[j] = (ps__kv){ z.s0[j], j, 0 };
    by_span[j] = (ps__kv){ end == PS_NONE ? 0 : UINT32_MAX - (end - z.s0[j]), j, 0 };
  }
  if (order_by_size (h, by_start) < 0 || order_by_size (h, by_span) < 0
      || first_positions (&z) < 0)
    goto out;

  /* Size the indexes and estimate the work (twice: two orders). */
  for (uint32_t j = 0; j < nb; j++) {
    for (uint32_t t = 0; t < S; t++) {
      uint32_t lo, hi;
      span_a (&z, j, t, &lo, &hi);
      for (uint32_t p = lo; p < hi; p = (p / BUCKET + 1) * BUCKET)
        z.A.off[z.A.base[t] + p / BUCKET + 2]++;
    }
    uint32_t nf = first_uses (h, j, xs, ps);
    for (uint32_t k = 0; k < nf; k++)
      z.B.off[z.B.base[xs[k]] + ps[k] / BUCKET + 2]++;
  }
  if (bidx_alloc (&z.A, S) < 0 || bidx_alloc (&z.B, S) < 0)
    goto out;
  uint64_t work = bidx_work (&z.A, S) + bidx_work (&z.B, S);
  if (2 * work > budget) {
    rc = PS_ELIMIT;
    goto out;
  }

  uint64_t top1, top2;
  /* The second order from empty indexes and slots of its own, on a
   * second thread when the work is large; the same offsets either way. */
  if ((rc = packing_init (&second, &z, by_span, off2)) < 0)
    goto out;
  if (tries > 0) { /* the items as the packings start from them */
    if (!(it0 = malloc ((nb ? nb : 1) * sizeof *it0))) {
      rc = PS_ENOMEM;
      goto out;
    }
    memcpy (it0, z.it, (nb ? nb : 1) * sizeof *it0);
  }
  ps__job_start (&second.job, packing_main, &second, work > PAIR_WORK);
  if ((rc = place_all (&z, &sm, stamp, by_start, off, &top1, &c)) < 0)
    goto out;
  if (!ps__job_finish (&second.job))
    packing_main (&second);
  if ((rc = second.rc) < 0)
    goto out;
  top2 = second.top;
  if (top2 < top1) {
    memcpy (off, off2, (size_t) nb * sizeof *off);
    top1 = top2;
  }
  if (tries > 0
      && (rc = shuffled_orders (&z, it0, tries, target, by_span, off, off2, &top1)) < 0)
    goto out;
  if (tries > 0 && top1 > target && nb <= LOCAL_BUFFERS
      && (rc = local_orders (&z, by_start, target, must, off, &top1)) < 0)
    goto out;
  *pool_end = top1;
  rc = 0;
out:
  ps__job_drop (&second.job);
  packing_free (&second);
  slots_free (&sm);
  free (z.s0);
  free (z.it);
  free (z.rseq);
  free (z.lo);
  bidx_free (&z.A);
  bidx_free (&z.B);
  free (by_start);
  free (by_span);
  free (off2);
  free (stamp);
  free (it0);
  free (c.v);
  free (c.tmp);
  free (c.cnt);
  return rc;
}
