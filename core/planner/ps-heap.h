/* ps-heap.h: the planner's heap of groups by key, smaller first, ties to
 * the lower group id (groups are numbered in topological order of their
 * first member, so ties go in program order).  The keys live in the
 * entries, which keeps the sifting in cache on large graphs, and each node
 * has PS__HEAP_ARITY children, four entries of a cache line, so a pop
 * takes half the levels a binary heap does (1M-node fanout plan 2.5%
 * faster; the order is the keys', whatever the arity), and the least of
 * four children is found without branches (1M-node layered streams pass
 * 0.436 -> 0.418 s, medians of 5).  Used by the list scheduler
 * (ps-schedule.c) and the baselines (ps-baseline.c). */
#ifndef PS_HEAP_H
#define PS_HEAP_H

#include <stdbool.h>
#include <stdint.h>

#include "ps-array.h"
#include "ps-status.h"

#define PS__HEAP_ARITY 4u
_Static_assert(PS__HEAP_ARITY == 4,
               "ps__heap_pop takes the least of four children by a tournament");

typedef struct ps__hent {
  double key;
  uint32_t id;
} ps__hent;

typedef struct ps__heap {
  ps__hent *a;
  uint32_t n, cap;
  const double *key; /* where a pushed group's key comes from; NULL: 0 */
} ps__heap;

/* Without branches: which of two entries goes first is as good as a coin
 * toss to the branch predictor. */
static inline bool
ps__hent_before (ps__hent x, ps__hent y)
{
  return (x.key < y.key) | ((x.key == y.key) & (x.id < y.id));
}

static inline int
ps__heap_push (ps__heap *h, uint32_t id)
{
  if (PS_ARRAY_RESERVE (h->a, h->cap, (uint64_t) h->n + 1) < 0)
    return PS_ENOMEM;
  ps__hent x = { h->key ? h->key[id] : 0, id };
  uint32_t i = h->n++;
  while (i > 0) {
    uint32_t parent = (i - 1) / PS__HEAP_ARITY;
    if (!ps__hent_before (x, h->a[parent]))
      break;
    h->a[i] = h->a[parent];
    i = parent;
  }
  h->a[i] = x;
  return 0;
}

/* The first group; h must not be empty. */
static inline uint32_t
ps__heap_pop (ps__heap *h)
{
  uint32_t top = h->a[0].id, i = 0;
  ps__hent x = h->a[--h->n];
  for (;;) {
    uint64_t first64 = (uint64_t) PS__HEAP_ARITY * i + 1;
    if (first64 >= h->n)
      break;
    uint32_t first = (uint32_t) first64, c = first;
    if (h->n - first >= PS__HEAP_ARITY) {
      /* A full node: the least of its four children by a tournament. */
      const ps__hent *k = h->a + first;
      uint32_t c01 = ps__hent_before (k[1], k[0]), c23 = 2 + ps__hent_before (k[3], k[2]);
      c = first + (ps__hent_before (k[c23], k[c01]) ? c23 : c01);
    } else {
      for (uint32_t j = first + 1; j < h->n; j++)
        if (ps__hent_before (h->a[j], h->a[c]))
          c = j;
    }
    if (!ps__hent_before (h->a[c], x))
      break;
    h->a[i] = h->a[c];
    i = c;
  }
  if (h->n > 0)
    h->a[i] = x;
  return top;
}

#endif
