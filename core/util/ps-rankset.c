/* ps-rankset.c: the ordered integer set and the radix sort of
 * ps-rankset.h. */
#include "ps-rankset.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ps-status.h"

static int
ctz64 (uint64_t w)
{
#if defined(__GNUC__)
  return __builtin_ctzll (w);
#else
  int n = 0;
  while (!(w & 1)) {
    w >>= 1;
    n++;
  }
  return n;
#endif
}

static int
msb64 (uint64_t w)
{
#if defined(__GNUC__)
  return 63 - __builtin_clzll (w);
#else
  int n = 0;
  while (w >>= 1)
    n++;
  return n;
#endif
}

int
ps__rankset_init (ps__rankset *s, uint32_t n)
{
  memset (s, 0, sizeof *s);
  uint64_t bits = n ? n : 1;
  do {
    uint64_t w = (bits + 63) / 64;
    s->lv[s->n_lv] = calloc (w, sizeof (uint64_t));
    if (!s->lv[s->n_lv])
      return PS_ENOMEM;
    s->words[s->n_lv++] = (uint32_t) w;
    bits = w;
  } while (bits > 1 && s->n_lv < 6);
  return 0;
}

void
ps__rankset_free (ps__rankset *s)
{
  for (int l = 0; l < s->n_lv; l++)
    free (s->lv[l]);
  memset (s, 0, sizeof *s);
}

void
ps__rankset_insert (ps__rankset *s, uint32_t r)
{
  uint64_t x = r;
  for (int l = 0; l < s->n_lv; l++, x >>= 6) {
    bool was_empty = s->lv[l][x >> 6] == 0;
    s->lv[l][x >> 6] |= (uint64_t) 1 << (x & 63);
    if (!was_empty)
      break;
  }
}

void
ps__rankset_erase (ps__rankset *s, uint32_t r)
{
  uint64_t x = r;
  for (int l = 0; l < s->n_lv; l++, x >>= 6) {
    s->lv[l][x >> 6] &= ~((uint64_t) 1 << (x & 63));
    if (s->lv[l][x >> 6] != 0)
      break;
  }
}

uint32_t
ps__rankset_next (const ps__rankset *s, uint32_t r)
{
  uint64_t x = (uint64_t) r + 1; /* search >= x at level l */
  int l = 0;
  for (; l < s->n_lv; l++) {
    uint64_t wi = x >> 6;
    if (wi >= s->words[l])
      return UINT32_MAX;
    uint64_t w = s->lv[l][wi] & (~(uint64_t) 0 << (x & 63));
    if (w) {
      x = wi << 6 | (uint64_t) ctz64 (w);
      break;
    }
    x = wi + 1;
  }
  if (l == s->n_lv)
    return UINT32_MAX;
  for (; l > 0; l--)
    x = x << 6 | (uint64_t) ctz64 (s->lv[l - 1][x]);
  return (uint32_t) x;
}

uint32_t
ps__rankset_prev (const ps__rankset *s, uint32_t r)
{
  if (r == 0)
    return UINT32_MAX;
  uint64_t x = (uint64_t) r - 1; /* search <= x at level l */
  int l = 0;
  for (; l < s->n_lv; l++) {
    uint64_t wi = x >> 6, bit = x & 63;
    uint64_t mask = bit == 63 ? ~(uint64_t) 0 : ((uint64_t) 1 << (bit + 1)) - 1;
    uint64_t w = s->lv[l][wi] & mask;
    if (w) {
      x = wi << 6 | (uint64_t) msb64 (w);
      break;
    }
    if (wi == 0)
      return UINT32_MAX;
    x = wi - 1;
  }
  if (l == s->n_lv)
    return UINT32_MAX;
  for (; l > 0; l--)
    x = x << 6 | (uint64_t) msb64 (s->lv[l - 1][x]);
  return (uint32_t) x;
}

/* Digits of RADIX_BITS bits for large arrays (six passes over 64-bit
 * keys instead of eight; the counts, 96 KiB, still sit in the second
 * level cache: 1M keys 0.034 -> 0.026 s), of 8 bits for small ones,
 * whose counts would cost more to clear than the passes saved. */
#define RADIX_BITS 11
#define RADIX_LARGE 65536u

int
ps__radix_sort_kv (ps__kv *v, size_t n)
{
  if (n < 2)
    return 0;
  int bits = n >= RADIX_LARGE ? RADIX_BITS : 8, digits = (64 + bits - 1) / bits;
  size_t buckets = (size_t) 1 << bits, mask = buckets - 1;
  ps__kv *tmp = malloc (n * sizeof *tmp);
  size_t *count = calloc ((size_t) digits * buckets, sizeof *count);
  if (!tmp || !count) {
    free (tmp);
    free (count);
    return PS_ENOMEM;
  }
  for (size_t i = 0; i < n; i++) {
    uint64_t key = v[i].key;
    for (int d = 0; d < digits; d++)
      count[d * buckets + ((key >> (bits * d)) & mask)]++;
  }
  ps__kv *src = v, *dst = tmp;
  for (int d = 0; d < digits; d++) {
    size_t *cnt = count + d * buckets, sum = 0;
    int shift = bits * d;
    if (cnt[(src[0].key >> shift) & mask] == n)
      continue;
    for (size_t k = 0; k < buckets; k++) {
      size_t c = cnt[k];
      cnt[k] = sum;
      sum += c;
    }
    for (size_t i = 0; i < n; i++)
      dst[cnt[(src[i].key >> shift) & mask]++] = src[i];
    ps__kv *t = src;
    src = dst;
    dst = t;
  }
  if (src != v)
    memcpy (v, src, n * sizeof *v);
  free (tmp);
  free (count);
  return 0;
}
