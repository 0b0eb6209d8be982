/* ps-array.c: growing arrays by doubling, and sorting them (see
 * ps-array.h). */
#include "ps-array.h"

#include <stdlib.h>

#include "ps-status.h"

int
ps_array_grow (void *arrp, uint32_t *cap, uint64_t need, size_t elem, uint64_t limit)
{
  if (need <= *cap)
    return 0;
  if (limit > PS_ARRAY_MAX)
    limit = PS_ARRAY_MAX;
  if (need > limit)
    return PS_ELIMIT;
  uint64_t c = *cap ? *cap : 16;
  while (c < need)
    c *= 2;
  if (c > limit)
    c = limit;
  if (c > SIZE_MAX / elem)
    return PS_ENOMEM;
  void **pp = arrp;
  void *np = realloc (*pp, (size_t) c * elem);
  if (!np)
    return PS_ENOMEM;
  *pp = np;
  *cap = (uint32_t) c;
  return 0;
}

void
ps_array_sort (void *base, size_t n, size_t elem, int (*cmp) (const void *, const void *))
{
  /* Arrays often come in order already (a simulated stream's spans by
   * start): one pass tells, where qsort would still take n log n. */
  const char *a = base;
  size_t i = 1;
  while (i < n && cmp (a + (i - 1) * elem, a + i * elem) <= 0)
    i++;
  if (i < n)
    qsort (base, n, elem, cmp);
}
