/* ps-rankset.h: a set of integers [0, n) with predecessor and successor
 * queries, and the radix sort of (64-bit key, two ids) records that goes
 * with it: the sweeps over pool offsets (the verifier's, the exact peak's)
 * are built on the two.
 *
 * The set is a bitmap with summary levels, 64 children per word, so every
 * operation costs at most six word operations whatever n.  Not installed;
 * core/ only. */
#ifndef PS_RANKSET_H
#define PS_RANKSET_H

#include <stddef.h>
#include <stdint.h>

typedef struct ps__rankset {
  uint64_t *lv[6];
  uint32_t words[6];
  int n_lv;
} ps__rankset;

/* An empty set for members below n; PS_ENOMEM.  Free with ps__rankset_free
 * (also after a failed init). */
int ps__rankset_init (ps__rankset *s, uint32_t n);
void ps__rankset_free (ps__rankset *s);
void ps__rankset_insert (ps__rankset *s, uint32_t r);
void ps__rankset_erase (ps__rankset *s, uint32_t r);
/* The smallest member > r, or the largest member < r; UINT32_MAX (the
 * value of PS_NONE) when there is none. */
uint32_t ps__rankset_next (const ps__rankset *s, uint32_t r);
uint32_t ps__rankset_prev (const ps__rankset *s, uint32_t r);

/* A queue of members, the least first: a set that keeps its least member
 * (first, when n > 0).  Zeroed, then ps__rankset_init on s. */
typedef struct ps__rankqueue {
  ps__rankset s;
  uint32_t n;
  uint32_t first;
} ps__rankqueue;

static inline void
ps__rankqueue_push (ps__rankqueue *q, uint32_t r)
{
  ps__rankset_insert (&q->s, r);
  if (q->n++ == 0 || r < q->first)
    q->first = r;
}

/* Takes the least member; q must not be empty. */
static inline uint32_t
ps__rankqueue_pop (ps__rankqueue *q)
{
  uint32_t r = q->first;
  ps__rankset_erase (&q->s, r);
  if (--q->n > 0)
    q->first = ps__rankset_next (&q->s, r); /* the least left: none was below it */
  return r;
}

typedef struct ps__kv {
  uint64_t key;
  uint32_t a, b;
} ps__kv;

/* Stable LSD radix sort by key, a digit at a time (8 bits, 11 on large
 * arrays); digits that are the same in every key cost no pass of their
 * own.  0 or PS_ENOMEM. */
int ps__radix_sort_kv (ps__kv *v, size_t n);

#endif
