/* ps-heap.h: the planner's heap of groups by key, smaller first, ties to
 * the lower group id (groups are numbered in topological order of their
 * first member, so ties go in program order).  The keys live in the
 * entries, which keeps the sifting in cache on large graphs, and each node
 * has PS__HEAP_ARITY children, four entries of a cache line, so a pop
 * takes half the levels a binary heap does (1M-node fanout plan 2.5%
 * faster; the order is the keys', whatever the arity).  Used by the list
 * scheduler (ps-schedule.c) and the baselines (ps-baseline.c). */
#ifndef PS_HEAP_H
#define PS_HEAP_H

#include <stdbool.h>
#include <stdint.h>

#include "ps-array.h"
#include "ps-status.h"

#define PS__HEAP_ARITY 4u

typedef struct ps__hent {
  double key;
  uint32_t id;
} ps__hent;

typedef struct ps__heap {
  ps__hent *a;
  uint32_t n, cap;
  const double *key; /* where a pushed group's key comes from; NULL: 0 */
} ps__heap;

static inline bool
ps__hent_before (ps__hent x, ps__hent y)
{
  if (x.key != y.key)
    return x.key < y.key;
  return x.id < y.id;
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
    uint32_t end = h->n - first > PS__HEAP_ARITY ? first + PS__HEAP_ARITY : h->n;
    for (uint32_t j = first + 1; j < end; j++)
      if (ps__hent_before (h->a[j], h->a[c]))
        c = j;
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
