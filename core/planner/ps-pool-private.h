/* ps-pool-private.h: the packings of the memory pass (ps-pool.c), each
 * over the happens-before order of ps-hb.h.  Offsets are per used buffer
 * (dense index), multiples of PS_POOL_ALIGN.  Not installed; core/ only. */
#ifndef PS_POOL_PRIVATE_H
#define PS_POOL_PRIVATE_H

#include "analysis/ps-hb.h"
#include "model/ps-plan-private.h"

/* A buffer's bytes rounded up to PS_POOL_ALIGN (the room it takes). */
#define PS__POOL_ALIGNED(z) (((z) + PS_POOL_ALIGN - 1) & ~(uint64_t) (PS_POOL_ALIGN - 1))

/* Largest first, best fit (ps-pool-size.c), in two orders, then in up to
 * `tries` more (ties shuffled) while the pool is above `target`, then (at
 * most 4,096 buffers, `tries` not 0) in orders found by local search
 * while it is still above target, with a larger budget while it is above
 * `must`; the smallest kept.  *pool_end: the highest byte used + 1.
 * PS_ELIMIT when the work of the two orders would pass `budget`
 * comparisons (or the pool would not fit in 64 bits), PS_ENOMEM. */
int ps__pool_by_size (const ps__hb *h, uint64_t budget, uint32_t tries, uint64_t target,
                      uint64_t must, uint64_t *off, uint64_t *pool_end);

#endif
