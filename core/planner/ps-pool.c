/* ps-pool.c: the memory pass: pool offsets for the non-external buffers.
 *
 * Two buffers may share bytes only when every use of one happens-before
 * every use of the other in the final plan (stream order and events); the
 * pass adds no wait of its own for that, so it never changes the
 * schedule.  Two packings over that order:
 *
 *  - an online allocator run in issue order, below: near-linear, and
 *    often at the peak already (then it equals the issue-order bound, a
 *    valid lower bound, and nothing more is tried);
 *  - else largest first (ps-pool-size.c), as TensorFlow Lite's and MNN's
 *    arena planners do: within a few percent of the exact peak
 *    (ps-pool-peak.h) on every generated shape and example, but its work
 *    grows with the buffers live at once times the buffers, so it runs
 *    only when an estimate of that work (the buffers live in issue order
 *    at each first use) is within BY_SIZE_LIVE per buffer.  The smaller
 *    pool of the two is kept.
 *
 * The online allocator: a buffer gets bytes at its first use and gives
 * them back after its last.  With the vector clocks of the sync pass,
 * reuse is a per-buffer test: `rel`, the latest position of a use on each
 * stream, must be covered by `need`, the componentwise minimum of the
 * clocks at the other buffer's uses.  The pool is tiled by blocks, held or
 * free; free blocks carry the buffer that last held them (and a copy of
 * its rel, which stays in cache), and a block can go to a new buffer only
 * if that buffer's rel is covered by the newcomer's need.  Neighbouring
 * free blocks merge when one holder's uses all precede the other's (the
 * merged block keeps the later holder); others stay apart, side by side.
 *
 * A buffer goes first to the lowest address where it fits: the lowest run
 * of adjacent free blocks, together at least its size, that it may all
 * reuse, placed at the run's start.  Runs are found through the maximal
 * runs of free bytes ("spans"), kept in address order in chunks of CH
 * with each chunk's largest span, so the spans large enough are found by
 * skipping chunks; within a span only its blocks are tested.  No more
 * than SPANS spans are tried (most buffers fit in the first few); failing
 * that, best fit: free blocks also sit in power-of-two size bins per home
 * stream (the stream of the holder's last use), oldest first, and a
 * buffer looks at no more than CANDIDATES blocks of its own stream's
 * bins, where reuse is likeliest, and CANDIDATES more of the others, then
 * at short runs of blocks too small alone; failing that the pool grows at
 * its end (reusing free blocks there when it can).  On layered graphs of
 * 50k nodes, best fit alone gave pools of 1.21x the exact peak; lowest
 * first before it, 1.09x.  Per buffer, O(S) work for each block tested,
 * at most SPANS spans, plus chunk upkeep of O(CH + spans / CH);
 * linear-time counting sorts for the order. */
#include "ps-planner-private.h"

#include "ps-pool-private.h"

#include <stdlib.h>
#include <string.h>

#include "ps-array.h"
#include "ps-pool-peak.h"

/* Plans are also packed by size when, per buffer, fewer than BY_SIZE_LIVE
 * buffers are live in issue order at its first use (plus BY_SIZE_MIN in
 * all), and the packing's own estimate of its comparisons is within
 * BY_SIZE_WORK per buffer (plus BY_SIZE_MIN_WORK).  On generated graphs
 * that leaves out layered graphs past about 35k nodes (where it would
 * take over half a second) and fanouts, whose streams share little. */
#define BY_SIZE_LIVE 300u
#define BY_SIZE_MIN ((uint64_t) 1 << 20)
#define BY_SIZE_WORK 16384u
#define BY_SIZE_MIN_WORK ((uint64_t) 1 << 24)
/* Past BY_SIZE_LIVE, plans of REPAIR_MIN_BUFFERS to REPAIR_BUFFERS
 * buffers and at most REPAIR_LIVE live per buffer are weighed against
 * their exact peak (about 0.02 s at 45k nodes, 0.05 s at 100k, found then
 * for the plan's outputs too) and packed by size when the online pool is
 * above POOL_TARGET times it, with a budget of REPAIR_WORK comparisons per
 * buffer, REPAIR_MAX_WORK in all (a few seconds): layered graphs of 45-60k
 * nodes on 4-6 streams get online pools of 1.10-1.14x the peak, largest
 * first 1.02-1.03x, in 0.3-0.6 s more. */
#define REPAIR_BUFFERS 262144u
#define REPAIR_MIN_BUFFERS 16384u
#define REPAIR_LIVE 2048u
#define REPAIR_WORK 65536u
#define REPAIR_MAX_WORK ((uint64_t) 1 << 32)
#define POOL_TARGET 1.10
/* Plans of at most SHUFFLE_BUFFERS pooled buffers packed by size are
 * weighed against their exact peak (a few milliseconds, found then for
 * the plan's outputs too) and, while above POOL_TARGET times it, packed
 * in up to SHUFFLE_TRIES more orders (ps__pool_by_size; a 1,500-node
 * layered graph on 6 streams 1.101x -> 1.02x, a 300-node one on 8
 * 1.105x -> 1.08x); those of at most SMALL_BUFFERS, until they reach it
 * (copy-compute-overlap without fusion on 5-8 streams: twelve 16 MiB
 * buffers in 7 slots where 6 suffice, 1.17x -> 1.00x); then in orders
 * found by local search while still above it (three 50-node layered
 * graphs 1.13-1.17x -> 1.00x), with a larger budget while above
 * POOL_TARGET times it. */
#define SHUFFLE_BUFFERS 4096u
#define SHUFFLE_TRIES 64u
#define SMALL_BUFFERS 128u
#define CANDIDATES 32
#define BINS 64
#define RUN 16
/* Spans tried per buffer before best fit; spans per chunk. */
#define SPANS 32
#define CH 64
/* The sweep in issue order asks for the clocks of buffers scattered over
 * arrays much larger than the caches, in an order known in advance: it
 * asks for them this many buffers ahead. */
#define AHEAD 8u
/* Largest buffers x streams for which buffers share bytes (two such
 * arrays of 32-bit clocks, 1 GiB each at the limit). */
#define MAX_CLOCK_WORDS ((uint64_t) 1 << 28)

typedef struct blk {
  uint64_t off, size;
  uint32_t tag; /* buffer that last held the block, or PS_NONE (never used) */
  uint32_t aprev, anext; /* address order */
  uint32_t fprev, fnext; /* free bin, oldest first */
  uint32_t bin;          /* home * BINS + size class */
  uint8_t free;
} blk;

/* Maximal runs of adjacent free bytes ("spans"), in address order, in
 * chunks of at most CH: each span's offset, bytes and first block; and by
 * rank of the chunks in address order, each chunk's first span's offset,
 * its largest span and where it is stored. */
typedef struct chunk {
  uint32_t n;
  uint64_t off[CH], len[CH];
  uint32_t head[CH];
} chunk;

typedef struct ch_rank {
  uint64_t first, max;
  uint32_t id;
} ch_rank;

typedef struct pool {
  blk *b;
  uint32_t nb, cap;
  uint32_t *spare;
  uint32_t n_spare;
  /* Free blocks by home stream (that of their holder's last use) and size
   * class: lists oldest first, and a mask of the non-empty classes. */
  uint32_t *head, *tail;
  uint64_t *occupied;
  uint32_t top; /* block at the highest address */
  chunk *ch;
  uint32_t *chfree;  /* stored chunks not in use */
  ch_rank *rk;       /* the chunks in use, in address order */
  uint32_t nch, n_chfree, chcap, fcap, rkcap;
  bool oom;
  uint64_t end;
  const uint32_t *rel, *need;
  const uint16_t *home; /* per buffer */
  /* Per block, a copy of its holder's rel: the blocks in use at once are
   * few, so the reuse tests read memory that stays in cache. */
  uint32_t *brel;
  uint32_t S;
} pool;

static inline uint32_t
bin_of (uint64_t size)
{
  return size ? 63u - (uint32_t) __builtin_clzll (size) : 0;
}

static void
ch_remax (pool *pl, uint32_t r)
{
  const chunk *c = &pl->ch[pl->rk[r].id];
  uint64_t m = 0;
  for (uint32_t i = 0; i < c->n; i++)
    m = c->len[i] > m ? c->len[i] : m;
  pl->rk[r].max = m;
  pl->rk[r].first = c->off[0];
}

/* A new chunk at rank r of the address order; PS_NONE when out of memory. */
static uint32_t
ch_new (pool *pl, uint32_t r)
{
  if (pl->n_chfree == 0) {
    uint32_t cap = pl->chcap;
    if (PS_ARRAY_RESERVE (pl->ch, cap, (uint64_t) pl->chcap + 1) < 0
        || PS_ARRAY_RESERVE (pl->chfree, pl->fcap, cap) < 0
        || PS_ARRAY_RESERVE (pl->rk, pl->rkcap, cap) < 0) {
      pl->oom = true;
      return PS_NONE;
    }
    for (uint32_t k = cap; k > pl->chcap; k--)
      pl->chfree[pl->n_chfree++] = k - 1;
    pl->chcap = cap;
  }
  uint32_t id = pl->chfree[--pl->n_chfree];
  memmove (pl->rk + r + 1, pl->rk + r, (pl->nch - r) * sizeof *pl->rk);
  pl->rk[r] = (ch_rank){ 0, 0, id };
  pl->nch++;
  pl->ch[id].n = 0;
  return id;
}

static void
ch_drop (pool *pl, uint32_t r)
{
  pl->chfree[pl->n_chfree++] = pl->rk[r].id;
  memmove (pl->rk + r, pl->rk + r + 1, (pl->nch - r - 1) * sizeof *pl->rk);
  pl->nch--;
}

/* The last span starting at or before o: chunk rank *r, index *i.  The
 * chunks are few: counted without branches; then a branchless binary
 * search in the chunk. */
static bool
sp_find (const pool *pl, uint64_t o, uint32_t *r, uint32_t *i)
{
  uint32_t lo = 0;
  for (uint32_t m = 0; m < pl->nch; m++)
    lo += pl->rk[m].first <= o;
  if (lo == 0)
    return false;
  const chunk *c = &pl->ch[pl->rk[lo - 1].id];
  const uint64_t *base = c->off;
  uint32_t n = c->n;
  while (n > 1) {
    uint32_t half = n / 2;
    base = base[half] <= o ? base + half : base;
    n -= half;
  }
  *r = lo - 1;
  *i = (uint32_t) (base - c->off);
  return true;
}

static void
sp_insert (pool *pl, uint64_t o, uint64_t len, uint32_t head)
{
  if (pl->oom)
    return;
  uint32_t r, i;
  if (sp_find (pl, o, &r, &i))
    i++;
  else if (r = 0, i = 0, pl->nch == 0 && ch_new (pl, 0) == PS_NONE)
    return;
  chunk *c = &pl->ch[pl->rk[r].id];
  if (c->n == CH) {
    uint32_t d = ch_new (pl, r + 1);
    if (d == PS_NONE)
      return;
    c = &pl->ch[pl->rk[r].id];
    chunk *e = &pl->ch[d];
    e->n = CH / 2;
    memcpy (e->off, c->off + CH / 2, CH / 2 * sizeof *e->off);
    memcpy (e->len, c->len + CH / 2, CH / 2 * sizeof *e->len);
    memcpy (e->head, c->head + CH / 2, CH / 2 * sizeof *e->head);
    c->n = CH / 2;
    ch_remax (pl, r);
    ch_remax (pl, r + 1);
    if (i > CH / 2) {
      i -= CH / 2;
      c = e;
      r++;
    }
  }
  memmove (c->off + i + 1, c->off + i, (c->n - i) * sizeof *c->off);
  memmove (c->len + i + 1, c->len + i, (c->n - i) * sizeof *c->len);
  memmove (c->head + i + 1, c->head + i, (c->n - i) * sizeof *c->head);
  c->off[i] = o;
  c->len[i] = len;
  c->head[i] = head;
  c->n++;
  if (len > pl->rk[r].max)
    pl->rk[r].max = len;
  pl->rk[r].first = c->off[0];
}

static void
sp_delete (pool *pl, uint32_t r, uint32_t i)
{
  chunk *c = &pl->ch[pl->rk[r].id];
  uint64_t len = c->len[i];
  memmove (c->off + i, c->off + i + 1, (c->n - i - 1) * sizeof *c->off);
  memmove (c->len + i, c->len + i + 1, (c->n - i - 1) * sizeof *c->len);
  memmove (c->head + i, c->head + i + 1, (c->n - i - 1) * sizeof *c->head);
  c->n--;
  if (c->n == 0) {
    ch_drop (pl, r);
    return;
  }
  pl->rk[r].first = c->off[0];
  if (len == pl->rk[r].max)
    ch_remax (pl, r);
  if (r + 1 < pl->nch) {
    chunk *e = &pl->ch[pl->rk[r + 1].id];
    if (c->n + e->n <= CH / 2) {
      memcpy (c->off + c->n, e->off, e->n * sizeof *e->off);
      memcpy (c->len + c->n, e->len, e->n * sizeof *e->len);
      memcpy (c->head + c->n, e->head, e->n * sizeof *e->head);
      c->n += e->n;
      if (pl->rk[r + 1].max > pl->rk[r].max)
        pl->rk[r].max = pl->rk[r + 1].max;
      ch_drop (pl, r + 1);
    }
  }
}

static void
sp_set (pool *pl, uint32_t r, uint32_t i, uint64_t o, uint64_t len, uint32_t head)
{
  chunk *c = &pl->ch[pl->rk[r].id];
  uint64_t old = c->len[i];
  c->off[i] = o;
  c->len[i] = len;
  c->head[i] = head;
  pl->rk[r].first = c->off[0];
  if (len >= pl->rk[r].max)
    pl->rk[r].max = len;
  else if (old == pl->rk[r].max)
    ch_remax (pl, r);
}

/* Bytes [p, p + z) of a span are taken (the pool may have grown past
 * it); head: the block at p + z, first of what is left above them. */
static void
sp_carve (pool *pl, uint64_t p, uint64_t z, uint32_t head)
{
  uint32_t r, i;
  if (pl->oom || !sp_find (pl, p, &r, &i))
    return;
  const chunk *c = &pl->ch[pl->rk[r].id];
  uint64_t h = c->off[i], end = h + c->len[i], right = end > p + z ? end - (p + z) : 0;
  if (p > h) {
    sp_set (pl, r, i, h, p - h, c->head[i]);
    if (right > 0)
      sp_insert (pl, p + z, right, head);
  } else if (right > 0) {
    sp_set (pl, r, i, p + z, right, head);
  } else {
    sp_delete (pl, r, i);
  }
}

/* Block x, bytes [o, o + len), is free again; left, right: whether the
 * blocks next to it were free. */
static void
sp_free (pool *pl, uint64_t o, uint64_t len, uint32_t x, bool left, bool right)
{
  uint32_t r, i;
  if (pl->oom)
    return;
  uint64_t add = len;
  if (right && sp_find (pl, o + len, &r, &i)) {
    add += pl->ch[pl->rk[r].id].len[i];
    if (!left) {
      sp_set (pl, r, i, o, add, x);
      return;
    }
    sp_delete (pl, r, i);
  }
  if (left && sp_find (pl, o - 1, &r, &i)) {
    const chunk *c = &pl->ch[pl->rk[r].id];
    sp_set (pl, r, i, c->off[i], c->len[i] + add, c->head[i]);
    return;
  }
  sp_insert (pl, o, add, x);
}

static inline bool compatible (const pool *pl, uint32_t x, uint32_t b);

/* Lowest first fit: the lowest run of adjacent free blocks, together at
 * least z bytes, that b may all reuse, looking at no more than SPANS of
 * the spans large enough.  *first and *last: its ends. */
static bool
search_low (pool *pl, uint32_t b, uint64_t z, uint32_t *first, uint32_t *last)
{
  uint32_t tried = 0;
  if (pl->oom)
    return false;
  for (uint32_t r = 0; r < pl->nch; r++) {
    if (pl->rk[r].max < z)
      continue;
    const chunk *c = &pl->ch[pl->rk[r].id];
    for (uint32_t i = 0; i < c->n; i++) {
      if (c->len[i] < z)
        continue;
      if (tried++ == SPANS)
        return false;
      uint32_t s = PS_NONE;
      uint64_t have = 0;
      for (uint32_t x = c->head[i]; x != PS_NONE && pl->b[x].free; x = pl->b[x].anext) {
        if (!compatible (pl, x, b)) {
          s = PS_NONE;
          continue;
        }
        if (s == PS_NONE) {
          s = x;
          have = 0;
        }
        have += pl->b[x].size;
        if (have >= z) {
          *first = s;
          *last = x;
          return true;
        }
      }
    }
  }
  return false;
}

/* Whether every use of block x's last holder precedes every use of b. */
static inline bool
compatible (const pool *pl, uint32_t x, uint32_t b)
{
  if (pl->b[x].tag == PS_NONE)
    return true;
  const uint32_t *r = pl->brel + (size_t) x * pl->S, *nd = pl->need + (size_t) b * pl->S;
  /* Without branches: which stream's clock fails is a coin toss to the
   * branch predictor, and S is small. */
  uint32_t late = 0;
  for (uint32_t t = 0; t < pl->S; t++)
    late |= r[t] > nd[t];
  return !late;
}

/* Block x's last holder is now tag (not PS_NONE); src: a block held last
 * by it, whose copy of its rel is read instead, or PS_NONE. */
static inline void
set_tag (pool *pl, uint32_t x, uint32_t tag, uint32_t src)
{
  pl->b[x].tag = tag;
  if (tag == PS_NONE)
    return;
  /* A few words: a loop, not a call to memcpy. */
  uint32_t *to = pl->brel + (size_t) x * pl->S;
  const uint32_t *from
      = src != PS_NONE ? pl->brel + (size_t) src * pl->S : pl->rel + (size_t) tag * pl->S;
  for (uint32_t t = 0; t < pl->S; t++)
    to[t] = from[t];
}

/* rel(a) <= rel(b) componentwise (a's uses all end no later than b's). */
static inline bool
older (const pool *pl, uint32_t a, uint32_t b)
{
  if (a == PS_NONE)
    return true;
  if (b == PS_NONE)
    return false;
  const uint32_t *x = pl->rel + (size_t) a * pl->S, *y = pl->rel + (size_t) b * pl->S;
  uint32_t late = 0;
  for (uint32_t t = 0; t < pl->S; t++)
    late |= x[t] > y[t];
  return !late;
}

static void
bin_insert (pool *pl, uint32_t x)
{
  blk *k = &pl->b[x];
  uint32_t home = k->tag == PS_NONE ? 0 : pl->home[k->tag], cls = bin_of (k->size);
  uint32_t bin = home * BINS + cls;
  k->bin = bin;
  pl->occupied[home] |= (uint64_t) 1 << cls;
  k->fnext = PS_NONE;
  k->fprev = pl->tail[bin];
  if (pl->tail[bin] != PS_NONE)
    pl->b[pl->tail[bin]].fnext = x;
  else
    pl->head[bin] = x;
  pl->tail[bin] = x;
}

static void
bin_remove (pool *pl, uint32_t x)
{
  blk *k = &pl->b[x];
  if (k->fprev != PS_NONE)
    pl->b[k->fprev].fnext = k->fnext;
  else
    pl->head[k->bin] = k->fnext;
  if (k->fnext != PS_NONE)
    pl->b[k->fnext].fprev = k->fprev;
  else
    pl->tail[k->bin] = k->fprev;
  if (pl->head[k->bin] == PS_NONE)
    pl->occupied[k->bin / BINS] &= ~((uint64_t) 1 << (k->bin % BINS));
}

/* Moves free block x to the back of its list. */
static void
bin_rotate (pool *pl, uint32_t x)
{
  if (pl->tail[pl->b[x].bin] == x)
    return;
  bin_remove (pl, x);
  bin_insert (pl, x);
}

/* Best fit for buffer b among the free blocks of one home stream, looking
 * at no more than *budget of them: an exact fit, else the smallest
 * compatible block among the first few that fit.  A block that is not
 * ordered before b goes to the back of its list: its holder's uses are
 * likely still concurrent with the next buffers of this stream too. */
static uint32_t
search_home (pool *pl, uint32_t home, uint32_t b, uint64_t z, uint32_t k0, uint32_t *budget)
{
  uint32_t best = PS_NONE, after_best = 4;
  uint64_t mask = pl->occupied[home] & (~(uint64_t) 0 << k0);
  while (mask != 0 && *budget > 0 && best == PS_NONE) {
    uint32_t cls = (uint32_t) __builtin_ctzll (mask), first_moved = PS_NONE;
    mask &= mask - 1;
    for (uint32_t x = pl->head[home * BINS + cls], next; x != PS_NONE && x != first_moved
         && *budget > 0 && after_best > 0; x = next) {
      next = pl->b[x].fnext;
      (*budget)--;
      if (best != PS_NONE)
        after_best--;
      if (pl->b[x].size < z)
        continue;
      if (!compatible (pl, x, b)) {
        if (next != PS_NONE) {
          bin_rotate (pl, x);
          if (first_moved == PS_NONE)
            first_moved = x;
        }
        continue;
      }
      if (best == PS_NONE || pl->b[x].size < pl->b[best].size)
        best = x;
      if (pl->b[x].size == z)
        break;
    }
  }
  return best;
}

static uint32_t
blk_new (pool *pl)
{
  if (pl->n_spare > 0)
    return pl->spare[--pl->n_spare];
  return pl->nb < pl->cap ? pl->nb++ : PS_NONE;
}

/* Allocates z bytes for b at the top of the pool, over the free blocks
 * there that b may reuse (the top block and up to RUN of its free
 * neighbours below, each ordered before b: blocks that could not merge
 * because their holders' uses were concurrent can still be reused
 * together), growing the pool by what they lack. */
static bool
alloc_top_run (pool *pl, uint32_t b, uint64_t z, uint32_t *out)
{
  uint32_t t = pl->top, s = t;
  uint64_t have = pl->b[t].size;
  for (uint32_t k = 0; k < RUN && have < z; k++) {
    uint32_t pv = pl->b[s].aprev;
    if (pv == PS_NONE || !pl->b[pv].free || !compatible (pl, pv, b))
      break;
    s = pv;
    have += pl->b[pv].size;
  }
  if (have < z && pl->end > UINT64_MAX - (z - have))
    return false;
  /* Blocks s..t leave their bins; those after s are recycled.  If the run
   * is larger than z, the bytes left over lie inside s (the run stopped as
   * soon as it was large enough) and s keeps them, free, under its tag. */
  for (uint32_t x = s;; x = pl->b[x].anext) {
    bin_remove (pl, x);
    if (x != s)
      pl->spare[pl->n_spare++] = x;
    if (x == t)
      break;
  }
  uint32_t x = s;
  if (have > z) {
    pl->b[s].size = have - z;
    bin_insert (pl, s);
    x = blk_new (pl);
    pl->b[x] = (blk){ .off = pl->end - z, .size = z, .tag = PS_NONE, .aprev = s,
                      .anext = PS_NONE, .fprev = PS_NONE, .fnext = PS_NONE, .free = 0 };
    pl->b[s].anext = x;
  } else {
    pl->end += z - have;
    pl->b[s].size = z;
    pl->b[s].free = 0;
    pl->b[s].anext = PS_NONE;
  }
  pl->top = x;
  *out = x;
  return true;
}

/* A run of adjacent free blocks that b may all reuse, together at least z
 * bytes, found from the free blocks of the classes up to k0 (of blocks too
 * small alone): the one with the fewest bytes over z, looking at no more
 * than *budget blocks.  *first and *last: its ends. */
static bool
search_run (pool *pl, uint32_t b, uint64_t z, uint32_t k0, uint32_t *budget, uint32_t *first,
            uint32_t *last)
{
  uint64_t best = UINT64_MAX;
  for (uint32_t home = 0; home < pl->S; home++) {
    uint64_t mask = pl->occupied[home] & ((k0 >= 63 ? ~(uint64_t) 0 : ((uint64_t) 2 << k0) - 1));
    while (mask != 0 && *budget > 0) {
      uint32_t cls = 63u - (uint32_t) __builtin_clzll (mask);
      mask &= ~((uint64_t) 1 << cls);
      for (uint32_t x = pl->head[home * BINS + cls]; x != PS_NONE && *budget > 0;
           x = pl->b[x].fnext) {
        (*budget)--;
        if (!compatible (pl, x, b))
          continue;
        uint32_t s = x, e = x;
        uint64_t have = pl->b[x].size;
        for (uint32_t n = 0; n < RUN; n++) {
          uint32_t pv = pl->b[s].aprev;
          if (pv == PS_NONE || !pl->b[pv].free || !compatible (pl, pv, b))
            break;
          s = pv;
          have += pl->b[pv].size;
        }
        for (uint32_t n = 0; n < RUN && have < z; n++) {
          uint32_t nx = pl->b[e].anext;
          if (nx == PS_NONE || !pl->b[nx].free || !compatible (pl, nx, b))
            break;
          e = nx;
          have += pl->b[nx].size;
        }
        if (have >= z && have < best) {
          best = have;
          *first = s;
          *last = e;
        }
      }
    }
  }
  return best != UINT64_MAX;
}

/* Allocates z bytes for b at the start of the free run s..e (which holds
 * at least z): the blocks after s are recycled, and what is left over
 * stays free at the end, under e's tag. */
static uint32_t
alloc_run (pool *pl, uint32_t s, uint32_t e, uint64_t z)
{
  uint64_t have = 0;
  for (uint32_t x = s;; x = pl->b[x].anext) {
    have += pl->b[x].size;
    bin_remove (pl, x);
    if (x == e)
      break;
  }
  uint32_t after = pl->b[e].anext;
  for (uint32_t x = pl->b[s].anext; x != after;) {
    uint32_t nx = pl->b[x].anext;
    if (x != e || have == z)
      pl->spare[pl->n_spare++] = x;
    x = nx;
  }
  blk *k = &pl->b[s];
  k->size = z;
  k->free = 0;
  if (have > z) {
    /* The bytes left over stay in e; a run of one block (s is e) is split
     * into a new block, as pool_alloc splits a block. */
    uint32_t rest = e;
    if (s == e) {
      rest = blk_new (pl);
      pl->b[rest] = (blk){ .tag = PS_NONE, .anext = after, .fprev = PS_NONE, .fnext = PS_NONE,
                           .free = 1 };
      set_tag (pl, rest, k->tag, s);
      if (after != PS_NONE)
        pl->b[after].aprev = rest;
      else
        pl->top = rest;
    }
    blk *r = &pl->b[rest];
    r->off = k->off + z;
    r->size = have - z;
    r->aprev = s;
    k->anext = rest;
    bin_insert (pl, rest);
  } else {
    k->anext = after;
    if (after != PS_NONE)
      pl->b[after].aprev = s;
    else
      pl->top = s;
  }
  return s;
}

static bool pool_place (pool *pl, uint32_t b, uint32_t home, uint64_t z, uint32_t *out);

/* Offset for buffer b of (aligned, nonzero) size z; false when the pool
 * would not fit in 64 bits (or, with pl->oom, memory ran out). */
static bool
pool_alloc (pool *pl, uint32_t b, uint32_t home, uint64_t z, uint32_t *out)
{
  uint64_t end = pl->end;
  uint32_t top = pl->top;
  bool top_free = top != PS_NONE && pl->b[top].free;
  if (pl->oom || !pool_place (pl, b, home, z, out))
    return false;
  /* Unless the pool only grew by a new block, the bytes came (at least in
   * part) from a span. */
  if (pl->end == end || top_free || pl->b[*out].aprev != top)
    sp_carve (pl, pl->b[*out].off, z, pl->b[*out].anext);
  return !pl->oom;
}

/* pool_alloc, but for the spans. */
static bool
pool_place (pool *pl, uint32_t b, uint32_t home, uint64_t z, uint32_t *out)
{
  uint32_t rs, re;
  if (search_low (pl, b, z, &rs, &re)) {
    *out = alloc_run (pl, rs, re, z);
    return true;
  }
  /* Blocks last used on the buffer's own stream are the likeliest to be
   * ordered before it; the other streams share a second budget. */
  uint32_t k0 = bin_of (z), own = CANDIDATES, rest = CANDIDATES;
  uint32_t best = search_home (pl, home, b, z, k0, &own);
  for (uint32_t k = 1; k < pl->S && best == PS_NONE && rest > 0; k++)
    best = search_home (pl, (home + k) % pl->S, b, z, k0, &rest);
  if (best != PS_NONE) {
    bin_remove (pl, best);
    blk *k = &pl->b[best];
    if (k->size > z) {
      uint32_t r = blk_new (pl);
      pl->b[r] = (blk){ .off = k->off + z, .size = k->size - z, .tag = PS_NONE, .aprev = best,
                        .anext = k->anext, .fprev = PS_NONE, .fnext = PS_NONE, .free = 1 };
      set_tag (pl, r, k->tag, best);
      if (k->anext != PS_NONE)
        pl->b[k->anext].aprev = r;
      else
        pl->top = r;
      k->anext = r;
      k->size = z;
      bin_insert (pl, r);
    }
    k->free = 0;
    *out = best;
    return true;
  }
  uint32_t run_budget = 4 * CANDIDATES;
  if (search_run (pl, b, z, k0, &run_budget, &rs, &re)) {
    *out = alloc_run (pl, rs, re, z);
    return true;
  }
  uint32_t t = pl->top;
  if (t != PS_NONE && pl->b[t].free && compatible (pl, t, b))
    return alloc_top_run (pl, b, z, out);
  if (pl->end > UINT64_MAX - z)
    return false;
  uint32_t x = blk_new (pl);
  pl->b[x] = (blk){ .off = pl->end, .size = z, .tag = PS_NONE, .aprev = t, .anext = PS_NONE,
                    .fprev = PS_NONE, .fnext = PS_NONE, .free = 0 };
  if (t != PS_NONE)
    pl->b[t].anext = x;
  pl->top = x;
  pl->end += z;
  *out = x;
  return true;
}

/* Gives block x back after the last use of buffer b. */
static void
pool_release (pool *pl, uint32_t x, uint32_t b)
{
  blk *k = &pl->b[x];
  k->free = 1;
  set_tag (pl, x, b, PS_NONE);
  uint32_t pv = k->aprev;
  uint64_t o = k->off, len = k->size;
  bool left = pv != PS_NONE && pl->b[pv].free;
  bool right = k->anext != PS_NONE && pl->b[k->anext].free;
  if (pv != PS_NONE && pl->b[pv].free) {
    uint32_t tp = pl->b[pv].tag;
    if (older (pl, tp, b) || older (pl, b, tp)) {
      bin_remove (pl, pv);
      blk *q = &pl->b[pv];
      q->size += k->size;
      if (older (pl, tp, b))
        set_tag (pl, pv, b, x);
      q->anext = k->anext;
      if (k->anext != PS_NONE)
        pl->b[k->anext].aprev = pv;
      else
        pl->top = pv;
      pl->spare[pl->n_spare++] = x;
      x = pv;
      k = q;
    }
  }
  uint32_t nx = k->anext;
  if (nx != PS_NONE && pl->b[nx].free) {
    uint32_t tn = pl->b[nx].tag, tk = k->tag;
    if (older (pl, tn, tk) || older (pl, tk, tn)) {
      bin_remove (pl, nx);
      blk *q = &pl->b[nx];
      k->size += q->size;
      if (!older (pl, tn, tk))
        set_tag (pl, x, tn, nx);
      k->anext = q->anext;
      if (q->anext != PS_NONE)
        pl->b[q->anext].aprev = x;
      else
        pl->top = x;
      pl->spare[pl->n_spare++] = nx;
    }
  }
  bin_insert (pl, x);
  sp_free (pl, o, len, x, left, right);
}

typedef struct uses {
  uint32_t *first, *last; /* issue index of the first and last use, or PS_NONE */
  uint32_t *need, *rel;   /* B x S clocks */
  uint32_t *acc_off, *acc; /* per group: the pooled buffers its nodes touch (CSR) */
  uint64_t *bytes;         /* size of each buffer (dense, for the sweeps) */
} uses;

static inline bool
is_pooled (const ps_graph *g, const uint8_t *pooled, uint32_t b)
{
  return b < g->n_buffers && pooled[b];
}

/* The pooled buffers each group touches (reads, writes, a conditional's
 * condition), gathered in one sequential pass so that the sweep in issue
 * order reads compact lists instead of node records.  pooled: per buffer,
 * whether it is pooled. */
static int
group_accesses (const ps__planner *pl, const uint8_t *pooled, uint32_t **acc_off_out,
                uint32_t **acc_out)
{
  const ps_graph *g = pl->g;
  uint32_t ng = pl->ng;
  /* One pass, into room for every access and condition of every node
   * (the members are scattered over the graph: a counting pass first
   * doubled the cache misses, 0.05 s of a 1M-node plan). */
  uint64_t cap = (uint64_t) g->n_access + pl->n + 1;
  if (cap > UINT32_MAX)
    return PS_ELIMIT;
  uint32_t *acc_off = malloc (((size_t) ng + 1) * sizeof *acc_off);
  uint32_t *acc = malloc ((size_t) cap * sizeof *acc);
  if (!acc_off || !acc) {
    free (acc_off);
    free (acc);
    return PS_ENOMEM;
  }
  uint32_t at = 0;
  acc_off[0] = 0;
  for (uint32_t gi = 0; gi < ng; gi++) {
    for (uint32_t k = pl->gm_off[gi]; k < pl->gm_off[gi + 1]; k++) {
      const ps_node *n = &g->nodes[pl->gm[k]];
      uint64_t r_end = (uint64_t) n->reads_begin + n->reads_count;
      uint64_t w_end = (uint64_t) n->writes_begin + n->writes_count;
      uint32_t cond = n->op == PS_OP_CONDITIONAL && n->aux < g->n_conds
                        ? g->conds[n->aux].condition : PS_NONE;
      for (uint64_t j = n->reads_begin; j <= r_end; j++) {
        uint32_t b = j < r_end ? (j < g->n_access ? g->access[j] : PS_NONE) : cond;
        if (is_pooled (g, pooled, b) && at < cap)
          acc[at++] = b;
      }
      for (uint64_t j = n->writes_begin; j < w_end && j < g->n_access; j++)
        if (is_pooled (g, pooled, g->access[j]) && at < cap)
          acc[at++] = g->access[j];
    }
    acc_off[gi + 1] = at;
  }
  *acc_off_out = acc_off;
  *acc_out = acc;
  return 0;
}

atomic_size_t ps__pool_accesses_beside;
atomic_size_t ps__pool_peak_at_bound;

int
ps__planner_pool_accesses (ps__planner *pl)
{
  const ps_graph *g = pl->g;
  /* Per buffer, whether it is pooled (not external): a megabyte per
   * million buffers, read for every access in place of the buffer
   * records, which are scattered over many more. */
  uint8_t *pooled = malloc (g->n_buffers ? g->n_buffers : 1);
  if (!pooled)
    return PS_ENOMEM;
  for (uint32_t b = 0; b < g->n_buffers; b++)
    pooled[b] = !(g->buffers[b].flags & PS_BUF_EXTERNAL);
  int rc = group_accesses (pl, pooled, &pl->acc_off, &pl->acc);
  free (pooled);
  return rc;
}

/* Replays the clocks in issue order and records every pooled buffer's
 * uses: the clock at a use is its stream's clock after the group's waits,
 * with the group itself not yet complete. */
static void
collect_uses (const ps__planner *pl, uint32_t *clk, uses *u)
{
  uint32_t S = pl->SC;
  for (uint32_t i = 0; i < pl->ng; i++) {
    uint32_t gi = pl->order[i], s = pl->gstream[gi], pos = pl->gpos[gi];
    if (i + AHEAD < pl->ng) {
      uint32_t ga = pl->order[i + AHEAD];
      for (uint32_t k = u->acc_off[ga]; k < u->acc_off[ga + 1] && k < u->acc_off[ga] + 4; k++) {
        __builtin_prefetch (u->need + (size_t) u->acc[k] * S);
        __builtin_prefetch (&u->first[u->acc[k]]);
      }
    }
    uint32_t *c = clk + (size_t) s * S;
    ps__planner_apply_waits (pl, i, clk);
    c[s] = pos - 1;
    for (uint32_t k = u->acc_off[gi]; k < u->acc_off[gi + 1]; k++) {
      uint32_t b = u->acc[k];
      uint32_t *nd = u->need + (size_t) b * S;
      if (u->first[b] == PS_NONE) {
        u->first[b] = i;
        memcpy (nd, c, S * sizeof *c);
      } else {
        for (uint32_t t = 0; t < S; t++)
          if (c[t] < nd[t])
            nd[t] = c[t];
      }
      u->rel[(size_t) b * S + s] = pos;
      u->last[b] = i;
    }
    c[s] = pos;
  }
}

/* Packs largest first (ps-pool-size.c; `tries` and `target` as there)
 * and keeps that packing if its pool is smaller than the online one
 * already in p.  PS_ELIMIT when the work would pass the budget. */
static int
pack_by_size (ps__planner *pl, uint64_t budget, uint32_t tries, uint64_t target, uint64_t must)
{
  const ps_graph *g = pl->g;
  ps_plan *p = pl->p;
  ps__hb h;
  int rc = ps__hb_build (&h, p);
  uint64_t *off = NULL, end = 0;
  if (rc == 0 && !h.release)
    rc = PS_ELIMIT;
  if (rc == 0 && !(off = malloc ((h.nb ? h.nb : 1) * sizeof *off)))
    rc = PS_ENOMEM;
  if (rc == 0)
    rc = ps__pool_by_size (&h, budget, tries, target, must, off, &end);
  uint64_t packed = end > h.unused_max ? end : h.unused_max;
  if (rc == 0 && packed < p->pool_bytes) {
    for (uint32_t b = 0; b < g->n_buffers; b++)
      if (!(g->buffers[b].flags & PS_BUF_EXTERNAL))
        p->offsets[b] = h.dense[b] != PS_NONE ? off[h.dense[b]] : 0;
    p->pool_bytes = packed;
  }
  free (off);
  ps__hb_free (&h);
  return rc;
}

/* From the issue order: the work of packing by size (per buffer, the
 * buffers live in issue order at its first use: those it is compared
 * with, about), and a lower bound on any pool (the most bytes live at
 * once in issue order: a use issued after another cannot happen before
 * it, so such buffers are pairwise unordered).  live: ng + 1 counts. */
static uint64_t
issue_order (const ps__planner *pl, const uses *u, uint32_t *live, uint64_t *bound)
{
  const ps_graph *g = pl->g;
  uint32_t ng = pl->ng;
  memset (live, 0, ((size_t) ng + 1) * sizeof *live);
  uint64_t *bytes = calloc ((size_t) ng + 1, sizeof *bytes);
  for (uint32_t b = 0; b < g->n_buffers; b++)
    if (u->first[b] != PS_NONE && !(g->buffers[b].flags & PS_BUF_EXTERNAL)) {
      live[u->first[b]]++;
      live[u->last[b] + 1]--;
      if (bytes) {
        bytes[u->first[b]] += u->bytes[b];
        bytes[u->last[b] + 1] -= u->bytes[b];
      }
    }
  /* Wrapping unsigned sums: every prefix is a true count. */
  uint64_t run = 0;
  *bound = 0;
  for (uint32_t i = 0; i <= ng; i++) {
    if (i > 0)
      live[i] += live[i - 1];
    if (bytes) {
      run += bytes[i];
      if (run > *bound)
        *bound = run;
    }
  }
  free (bytes);
  uint64_t work = 0;
  for (uint32_t b = 0; b < g->n_buffers; b++)
    if (u->first[b] != PS_NONE && !(g->buffers[b].flags & PS_BUF_EXTERNAL))
      work += live[u->first[b]];
  return work;
}

int
ps__planner_pool (ps__planner *pl)
{
  const ps_graph *g = pl->g;
  ps_plan *p = pl->p;
  uint32_t B = g->n_buffers, S = pl->SC, ng = pl->ng, b1 = B ? B : 1;
  int rc = 0;
  p->pool_peak_known = false; /* found again for these steps, when it is */
  bool seeking = false;        /* p->peak is this pass's */
  if ((uint64_t) B * S > MAX_CLOCK_WORDS) {
    /* Clocks that wide would cost more memory than the reuse is worth:
     * every buffer gets bytes of its own. */
    return ps__plan_pool_end_to_end (p, pl->diag);
  }
  uses u;
  u.acc_off = u.acc = NULL;
  u.bytes = malloc (b1 * sizeof *u.bytes);
  uint32_t *clk = calloc ((size_t) S * S, sizeof *clk);
  u.first = malloc (b1 * sizeof *u.first);
  u.last = malloc (b1 * sizeof *u.last);
  u.need = malloc ((size_t) b1 * S * sizeof *u.need);
  u.rel = calloc ((size_t) b1 * S, sizeof *u.rel);
  uint32_t *f_off = calloc ((size_t) ng + 2, sizeof *f_off);
  uint32_t *l_off = calloc ((size_t) ng + 2, sizeof *l_off);
  uint32_t *f_list = malloc (b1 * sizeof *f_list);
  uint32_t *l_list = malloc (b1 * sizeof *l_list);
  uint32_t *where = malloc (b1 * sizeof *where);
  uint16_t *home = malloc (b1 * sizeof *home);
  pool po;
  memset (&po, 0, sizeof po);
  po.head = malloc ((size_t) S * BINS * sizeof *po.head);
  po.tail = malloc ((size_t) S * BINS * sizeof *po.tail);
  po.occupied = calloc (S, sizeof *po.occupied);
  po.cap = b1 + 1; /* an allocation adds at most one block */
  po.b = malloc ((size_t) po.cap * sizeof *po.b);
  po.spare = malloc ((size_t) po.cap * sizeof *po.spare);
  po.brel = malloc ((size_t) po.cap * (S ? S : 1) * sizeof *po.brel);
  if (!clk || !u.first || !u.last || !u.need || !u.rel || !u.bytes || !f_off || !l_off || !f_list
      || !l_list || !where || !home || !po.head || !po.tail || !po.occupied || !po.b || !po.spare
      || !po.brel) {
    rc = PS_ENOMEM;
    goto out;
  }
  for (uint32_t b = 0; b < B; b++) {
    u.first[b] = u.last[b] = where[b] = PS_NONE;
    u.bytes[b] = g->buffers[b].bytes;
  }
  /* Past the by-size budget (below), the exact peak the pool may be
   * weighed against: sought on a second thread from here, while the
   * online allocator packs, and let go when it is not needed. */
  bool own = !p->peak; /* not the planner's (ps__plan_peak_start) */
  if (B <= REPAIR_BUFFERS && own)
    seeking = ps__plan_peak_start (p, REPAIR_MIN_BUFFERS);
  if (pl->acc) /* made beside the search */
    ps__pool_accesses_beside++;
  else if ((rc = ps__planner_pool_accesses (pl)) < 0)
    goto out;
  u.acc_off = pl->acc_off;
  u.acc = pl->acc;
  pl->acc_off = pl->acc = NULL;
  collect_uses (pl, clk, &u);

  uint32_t n_used = 0;
  for (uint32_t b = 0; b < B; b++)
    n_used += u.first[b] != PS_NONE && !(g->buffers[b].flags & PS_BUF_EXTERNAL);
  uint64_t bound, work = issue_order (pl, &u, f_off, &bound);
  memset (f_off, 0, ((size_t) ng + 2) * sizeof *f_off);
  bool by_size_cheap = work <= BY_SIZE_LIVE * (uint64_t) n_used + BY_SIZE_MIN;
  bool repair = !by_size_cheap && n_used <= REPAIR_BUFFERS
                && work <= REPAIR_LIVE * (uint64_t) n_used && own;
  if (seeking && !repair) {
    ps__plan_peak_drop (p);
    seeking = false;
  }

  /* Buffers by first use and by last use (counting sort).  A buffer nobody
   * uses conflicts with nothing: it goes at offset 0. */
  uint64_t unused_max = 0;
  for (uint32_t b = 0; b < B; b++) {
    if (g->buffers[b].flags & PS_BUF_EXTERNAL)
      continue;
    if (u.first[b] == PS_NONE) {
      p->offsets[b] = 0;
      if (g->buffers[b].bytes > unused_max)
        unused_max = g->buffers[b].bytes;
      continue;
    }
    f_off[u.first[b] + 2]++;
    l_off[u.last[b] + 2]++;
    home[b] = pl->gstream[pl->order[u.last[b]]];
  }
  for (uint32_t i = 0; i < ng; i++) {
    f_off[i + 2] += f_off[i + 1];
    l_off[i + 2] += l_off[i + 1];
  }
  for (uint32_t b = 0; b < B; b++)
    if (!(g->buffers[b].flags & PS_BUF_EXTERNAL) && u.first[b] != PS_NONE) {
      f_list[f_off[u.first[b] + 1]++] = b;
      l_list[l_off[u.last[b] + 1]++] = b;
    }

  po.rel = u.rel;
  po.need = u.need;
  po.home = home;
  po.S = S;
  po.top = PS_NONE;
  for (uint32_t k = 0; k < S * BINS; k++)
    po.head[k] = po.tail[k] = PS_NONE;
  uint32_t n_first = f_off[ng], n_last = l_off[ng];
  for (uint32_t i = 0; i < ng; i++) {
    uint32_t a0 = f_off[i], a1 = f_off[i + 1];
    /* Within one step the larger buffers go first; such buckets are small. */
    for (uint32_t k = a0 + 1; k < a1; k++)
      for (uint32_t j = k; j > a0 && u.bytes[f_list[j]] > u.bytes[f_list[j - 1]]; j--) {
        uint32_t x = f_list[j];
        f_list[j] = f_list[j - 1];
        f_list[j - 1] = x;
      }
    for (uint32_t k = a0; k < a1; k++) {
      uint32_t b = f_list[k];
      if (k + AHEAD < n_first) {
        __builtin_prefetch (u.need + (size_t) f_list[k + AHEAD] * S);
        __builtin_prefetch (&u.bytes[f_list[k + AHEAD]]);
      }
      uint64_t z = (u.bytes[b] + PS_POOL_ALIGN - 1) & ~(uint64_t) (PS_POOL_ALIGN - 1);
      if (z == 0) {
        /* Holds no bytes, so shares none (and blocks keep nonzero sizes). */
        p->offsets[b] = 0;
        continue;
      }
      if (!pool_alloc (&po, b, pl->gstream[pl->order[i]], z, &where[b])) {
        rc = po.oom ? PS_ENOMEM : PS_ELIMIT;
        goto out;
      }
      p->offsets[b] = po.b[where[b]].off;
    }
    for (uint32_t k = l_off[i]; k < l_off[i + 1]; k++) {
      if (k + AHEAD < n_last) {
        __builtin_prefetch (u.rel + (size_t) l_list[k + AHEAD] * S);
        __builtin_prefetch (&where[l_list[k + AHEAD]]);
      }
      if (k + AHEAD / 2 < n_last && where[l_list[k + AHEAD / 2]] != PS_NONE)
        __builtin_prefetch (&po.b[where[l_list[k + AHEAD / 2]]]);
      if (where[l_list[k]] != PS_NONE)
        pool_release (&po, where[l_list[k]], l_list[k]);
    }
  }
  p->pool_bytes = po.end > unused_max ? po.end : unused_max;

  /* Largest first too, when the online pool is above the issue-order
   * bound (else it is already as small as any) and that is affordable,
   * or, past that, when it is above POOL_TARGET times the exact peak;
   * the smaller pool is kept. */
  bool by_size = p->pool_bytes > bound && by_size_cheap;
  bool shuffle = by_size && n_used <= SHUFFLE_BUFFERS && own;
  uint64_t budget = BY_SIZE_WORK * (uint64_t) n_used + BY_SIZE_MIN_WORK, target = 0, must = 0;
  uint32_t tries = 0;
  if (shuffle || (repair && p->pool_bytes > bound)) {
    /* The steps are final: the plan keeps the peak for its outputs. */
    int prc = ps_plan_find_peak (p);
    seeking = false;
    if (prc == PS_ENOMEM) {
      rc = prc;
      goto out;
    }
    double peak = (double) p->pool_peak;
    if (prc == 0 && shuffle) {
      tries = SHUFFLE_TRIES;
      must = (uint64_t) (POOL_TARGET * peak);
      target = n_used <= SMALL_BUFFERS ? p->pool_peak : must;
    } else if (prc == 0) {
      by_size = (double) p->pool_bytes > POOL_TARGET * peak;
      budget = REPAIR_WORK * (uint64_t) n_used;
      if (budget > REPAIR_MAX_WORK)
        budget = REPAIR_MAX_WORK;
    }
  }
  if (by_size) {
    rc = pack_by_size (pl, budget, tries, target, must);
    if (rc == PS_ELIMIT)
      rc = 0;
  }
  /* A pool no larger than the issue-order bound, or than the largest
   * buffer nobody uses, is at the exact peak: no pool for these steps can
   * be smaller.  The peak is then known without its search, and a search
   * under way is told to stop (ps_plan_free waits for it): the 1M-node
   * transformer's plan, whose online pool is at the bound, spares the
   * 0.14 s of CPU it takes (the fanout's is 5 MiB above its bound of
   * 193 GiB, so its peak is still sought). */
  uint64_t least = bound > unused_max ? bound : unused_max;
  if (rc == 0 && p->pool_bytes <= least && !p->pool_peak_known) {
    if (p->peak && !seeking)
      ps__plan_peak_cancel (p->peak);
    p->pool_peak = p->pool_bytes;
    p->pool_peak_exact = true;
    p->pool_peak_known = true;
    ps__pool_peak_at_bound++;
  }

out:
  if (seeking)
    ps__plan_peak_drop (p);
  if (rc == PS_ENOMEM)
    rc = ps__planner_nomem (pl);
  else if (rc == PS_ELIMIT && pl->diag)
    ps_diag_error (pl->diag, 0, 0, "the buffers do not fit in a 64-bit memory pool");
  free (clk);
  free (u.first);
  free (u.last);
  free (u.need);
  free (u.rel);
  free (u.bytes);
  free (u.acc_off);
  free (u.acc);
  free (f_off);
  free (l_off);
  free (f_list);
  free (l_list);
  free (where);
  free (home);
  free (po.head);
  free (po.tail);
  free (po.occupied);
  free (po.b);
  free (po.spare);
  free (po.brel);
  free (po.ch);
  free (po.chfree);
  free (po.rk);
  return rc;
}
