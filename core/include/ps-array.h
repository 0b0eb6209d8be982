/* ps-array.h: the one way planscope grows an array, and the one way it
 * sorts one.
 *
 * An array is a pointer with a count and a capacity, both in elements.
 * ps_array_grow makes room for `need` elements: the capacity doubles,
 * from 16, until it holds them, but never past `limit` (nor PS_ARRAY_MAX,
 * so that an index always fits a uint32_t id other than PS_NONE).  Growth
 * by doubling keeps n appends linear.  On failure the array is left as it
 * was, so the caller still owns (and frees) it.  This is libuv's
 * uv__reallocf and maybe_resize idiom. */
#ifndef PS_ARRAY_H
#define PS_ARRAY_H

#include <stddef.h>
#include <stdint.h>

#define PS_ARRAY_MAX (UINT32_MAX - 1)

/* arrp is the address of the array pointer (a T **).  Returns 0,
 * PS_ELIMIT when need exceeds limit, or PS_ENOMEM. */
int ps_array_grow (void *arrp, uint32_t *cap, uint64_t need, size_t elem, uint64_t limit);

/* ps_array_grow with the usual case, room enough, inline: arrays grow by
 * one element at a time in the loaders' loops. */
static inline int
ps__array_reserve (void *arrp, uint32_t *cap, uint64_t need, size_t elem, uint64_t limit)
{
  return need <= *cap ? 0 : ps_array_grow (arrp, cap, need, elem, limit);
}

/* Room for `need` elements of the array `arr` whose capacity is `cap`. */
#define PS_ARRAY_RESERVE(arr, cap, need) \
  ps__array_reserve (&(arr), &(cap), (need), sizeof *(arr), PS_ARRAY_MAX)

/* qsort for arrays that may be empty: an empty array may have no storage
 * (NULL), which qsort must not be given even with a count of 0 (C11
 * 7.22.5; UBSan reports it).  An array already in order is left as it is
 * (as a stable sort leaves it).  Every sort of planscope's goes through
 * this. */
void ps_array_sort (void *base, size_t n, size_t elem, int (*cmp) (const void *, const void *));

#endif
