/* ps-pool-size.c: pool offsets by decreasing size, best fit (the offline
 * planner of TensorFlow Lite's and MNN's memory arenas, and of XLA's heap
 * simulator), over the plan's happens-before order.
 *
 * Buffers are placed largest first; each goes into the smallest gap left
 * between the buffers already placed that it may not share bytes with, or
 * right above the highest of them.  Two buffers may share bytes when every
 * use of one happens-before every use of the other (ps__hb_before); the
 * others are its conflicts, found through two indexes per stream, in
 * buckets of positions on that stream:
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

#include "util/ps-rankset.h"

/* Stream positions per bucket. */
#define BUCKET 32u

typedef struct gap_iv {
  uint64_t off, end;
} gap_iv;

/* Sorts n intervals by offset: LSD radix sort over the bytes that differ,
 * into and back from scratch tmp.  (Offsets are multiples of 256: the
 * lowest byte is always zero and costs one counting pass.) */
static void
sort_by_offset (gap_iv *v, gap_iv *tmp, uint32_t n)
{
  uint32_t count[256];
  uint64_t any = 0;
  for (uint32_t i = 0; i < n; i++)
    any |= v[i].off;
  gap_iv *src = v, *dst = tmp;
  for (int shift = 8; shift < 64 && (any >> shift) != 0; shift += 8) {
    memset (count, 0, sizeof count);
    for (uint32_t i = 0; i < n; i++)
      count[(src[i].off >> shift) & 255]++;
    uint32_t sum = 0;
    for (int d = 0; d < 256; d++) {
      uint32_t c = count[d];
      count[d] = sum;
      sum += c;
    }
    for (uint32_t i = 0; i < n; i++)
      dst[count[(src[i].off >> shift) & 255]++] = src[i];
    gap_iv *t = src;
    src = dst;
    dst = t;
  }
  if (src != v)
    memcpy (v, src, n * sizeof *v);
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

typedef struct sz {
  const ps__hb *h;
  uint32_t S;
  uint32_t *s0; /* per buffer: id of the state before its first use */
  bidx A, B;
} sz;

/* The first position on stream t whose state id is >= id. */
static uint32_t
pos_on (const ps__hb *h, uint32_t t, uint32_t id)
{
  uint32_t lo = 0, hi = h->ch_off[t + 1] - h->ch_off[t];
  const uint32_t *c = h->chain + h->ch_off[t];
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (c[mid] < id)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* Where buffer j lies in index A on stream t: positions [*lo, *hi). */
static void
span_a (const sz *z, uint32_t j, uint32_t t, uint32_t *lo, uint32_t *hi)
{
  const ps__hb *h = z->h;
  uint32_t r = h->release[(size_t) j * z->S + t];
  *lo = pos_on (h, t, z->s0[j]);
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

int
ps__pool_by_size (const ps__hb *h, uint64_t budget, uint64_t *off, uint64_t *pool_end)
{
  uint32_t nb = h->nb, S = h->S;
  int rc = PS_ENOMEM;
  sz z;
  memset (&z, 0, sizeof z);
  z.h = h;
  z.S = S;
  z.s0 = malloc ((nb ? nb : 1) * sizeof *z.s0);
  ps__kv *order = malloc ((nb ? nb : 1) * sizeof *order);
  uint32_t *stamp = calloc (nb ? nb : 1, sizeof *stamp);
  gap_iv *conf = NULL, *tmp = NULL;
  uint32_t conf_cap = 0, xs[PS_MAX_STREAMS], ps[PS_MAX_STREAMS];
  if (!z.s0 || !order || !stamp || bidx_init (&z.A, h) < 0 || bidx_init (&z.B, h) < 0)
    goto out;

  /* The order: size down, then longer spans first, then first use (two
   * stable sorts). */
  for (uint32_t j = 0; j < nb; j++) {
    z.s0[j] = h->wk_before[h->first[j]];
    uint32_t end = 0;
    for (uint32_t t = 0; t < S && end != PS_NONE; t++) {
      uint32_t r = h->release[(size_t) j * S + t];
      end = r == PS_NONE ? PS_NONE : r > end ? r : end;
    }
    order[j] = (ps__kv){ UINT32_MAX - (end == PS_NONE ? UINT32_MAX : end - z.s0[j]), j, 0 };
  }
  if (ps__radix_sort_kv (order, nb) < 0)
    goto out;
  for (uint32_t i = 0; i < nb; i++)
    order[i].key = UINT64_MAX - PS__POOL_ALIGNED (h->w[order[i].a]);
  if (ps__radix_sort_kv (order, nb) < 0)
    goto out;

  /* Size the indexes and estimate the work. */
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
  if (bidx_work (&z.A, S) + bidx_work (&z.B, S) > budget) {
    rc = PS_ELIMIT;
    goto out;
  }

  uint64_t top = 0;
  for (uint32_t i = 0; i < nb; i++) {
    uint32_t j = order[i].a, n_conf = 0;
    uint64_t zb = PS__POOL_ALIGNED (h->w[j]);
    /* Conflicts: from A at each of j's first uses (one with a meet), and
     * from B on each stream up to j's release there. */
    for (int pass = 0; pass < 2; pass++) {
      const bidx *ix = pass == 0 ? &z.A : &z.B;
      uint32_t q0[PS_MAX_STREAMS], q1[PS_MAX_STREAMS], nq = 0;
      if (pass == 0) {
        uint32_t nf = first_uses (h, j, xs, ps);
        for (uint32_t k = 0; k < nf; k++) {
          q0[nq] = ix->base[xs[k]] + ps[k] / BUCKET;
          q1[nq++] = ix->base[xs[k]] + ps[k] / BUCKET + 1;
        }
      } else {
        for (uint32_t x = 0; x < S; x++) {
          uint32_t lo = pos_on (h, x, z.s0[j]), r = h->release[(size_t) j * S + x];
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
            if (stamp[a] == i + 1)
              continue;
            stamp[a] = i + 1;
            if (ps__hb_before (h, a, j) || ps__hb_before (h, j, a))
              continue;
            if (n_conf == conf_cap) {
              uint32_t cap = conf_cap ? 2 * conf_cap : 256;
              gap_iv *nc = realloc (conf, cap * sizeof *nc), *nt = NULL;
              if (nc)
                conf = nc;
              if (nc && (nt = realloc (tmp, cap * sizeof *nt)))
                tmp = nt;
              if (!nc || !nt)
                goto out;
              conf_cap = cap;
            }
            conf[n_conf++] = (gap_iv){ off[a], off[a] + PS__POOL_ALIGNED (h->w[a]) };
          }
        }
    }
    /* The smallest gap that fits, else above them all. */
    sort_by_offset (conf, tmp, n_conf);
    uint64_t cur = 0, best = UINT64_MAX, best_at = 0;
    for (uint32_t k = 0; k < n_conf; k++) {
      if (conf[k].off >= cur && conf[k].off - cur >= zb && conf[k].off - cur < best) {
        best = conf[k].off - cur;
        best_at = cur;
      }
      if (conf[k].end > cur)
        cur = conf[k].end;
    }
    off[j] = best != UINT64_MAX ? best_at : cur;
    if (off[j] > UINT64_MAX - zb) {
      rc = PS_ELIMIT;
      goto out;
    }
    if (off[j] + h->w[j] > top)
      top = off[j] + h->w[j];
    for (uint32_t t = 0; t < S; t++) {
      uint32_t lo, hi;
      span_a (&z, j, t, &lo, &hi);
      for (uint32_t p = lo; p < hi; p = (p / BUCKET + 1) * BUCKET) {
        uint32_t b = z.A.base[t] + p / BUCKET;
        z.A.items[z.A.off[b + 1] + z.A.n[b]++] = j;
      }
    }
    uint32_t nf = first_uses (h, j, xs, ps);
    for (uint32_t k = 0; k < nf; k++) {
      uint32_t b = z.B.base[xs[k]] + ps[k] / BUCKET;
      z.B.items[z.B.off[b + 1] + z.B.n[b]++] = j;
    }
  }
  *pool_end = top;
  rc = 0;
out:
  free (z.s0);
  bidx_free (&z.A);
  bidx_free (&z.B);
  free (order);
  free (stamp);
  free (conf);
  free (tmp);
  return rc;
}
