/* ps-strmap.c: the name -> id map used by the loaders.
 *
 * A table for a million names is tens of megabytes, so nearly every probe
 * and every key comparison is a cache and TLB miss.  The batch operations
 * keep that cheap: they work on many keys at once, prefetching the slots
 * and keys a few lookups ahead so that the misses overlap.  (Big tables
 * used to ask for transparent huge pages: fewer TLB misses, but each
 * first touch of a 2 MiB page cleared it whole, and loading a 1M-node
 * graph took 0.05 s longer, 0.505 -> 0.450 s layered and 0.46 -> 0.41 s
 * fanout, medians of 8.) */
#include "ps-strmap.h"

#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__)
#define PREFETCH(p) __builtin_prefetch (p)
#else
#define PREFETCH(p) ((void) 0)
#endif

#include "ps-error.h"

uint32_t
ps__strmap_hash (const char *s, size_t len)
{
  /* Eight bytes at a time (byte-wise FNV-1a was a multiply per byte, a
   * tenth of loading a large graph), each word xored in and multiplied,
   * the tail gathered into one more word, then the finaliser of
   * MurmurHash3 (fmix64), so that every bit of the words reaches the low
   * bits the table's mask uses. */
  const uint64_t k = 0x9e3779b97f4a7c15ull;
  uint64_t h = (uint64_t) len * k, w;
  if (len >= 8) {
    size_t i = 0;
    for (; i + 8 < len; i += 8) {
      memcpy (&w, s + i, 8);
      h = (h ^ w) * k;
    }
    /* The last eight bytes, which may overlap the word before. */
    memcpy (&w, s + len - 8, 8);
  } else if (len >= 4) {
    uint32_t a, b;
    memcpy (&a, s, 4);
    memcpy (&b, s + len - 4, 4);
    w = (uint64_t) a | (uint64_t) b << 32;
  } else {
    /* 0 to 3 bytes: the first, the middle and the last. */
    w = len ? (uint64_t) (unsigned char) s[0] | (uint64_t) (unsigned char) s[len / 2] << 8
                | (uint64_t) (unsigned char) s[len - 1] << 16
            : 0;
  }
  h = (h ^ w) * k;
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 33;
  return (uint32_t) h;
}

static int
alloc_slots (ps_strmap *m, uint32_t cap)
{
  ps__strmap_slot *s = malloc ((size_t) cap * sizeof *s);
  if (!s)
    return PS_ENOMEM;
  for (uint32_t i = 0; i < cap; i++)
    s[i].key = PS__STRMAP_EMPTY;
  m->slots = s;
  m->mask = cap - 1;
  return 0;
}

/* The capacity for `expected` keys: the load factor stays at or below one
 * half. */
static uint32_t
capacity_for (uint32_t expected)
{
  uint32_t cap = 16;
  while (cap < (1u << 30) && cap / 2 < expected)
    cap *= 2;
  return cap;
}

int
ps__strmap_init (ps_strmap *m, uint32_t expected)
{
  m->slots = NULL; /* freeable when the table cannot be made */
  m->mask = 0;
  m->count = 0;
  return alloc_slots (m, capacity_for (expected));
}

int
ps__strmap_reset (ps_strmap *m, uint32_t expected)
{
  uint32_t cap = capacity_for (expected);
  if (m->slots && cap <= m->mask + 1) {
    /* An empty table is all free slots already. */
    if (m->count)
      for (uint32_t i = 0; i <= m->mask; i++)
        m->slots[i].key = PS__STRMAP_EMPTY;
    m->count = 0;
    return 0;
  }
  ps__strmap_free (m);
  return ps__strmap_init (m, expected);
}

void
ps__strmap_free (ps_strmap *m)
{
  free (m->slots);
  m->slots = NULL;
  m->mask = 0;
  m->count = 0;
}

uint32_t
ps__strmap_find (const ps_strmap *m, const char *pool, const char *s, size_t len,
                 uint32_t hash)
{
  for (uint32_t i = hash & m->mask;; i = (i + 1) & m->mask) {
    const ps__strmap_slot *sl = &m->slots[i];
    if (sl->key == PS__STRMAP_EMPTY)
      return UINT32_MAX;
    if (sl->hash == hash) {
      const char *k = pool + sl->key;
      if (memcmp (k, s, len) == 0 && k[len] == '\0')
        return sl->value;
    }
  }
}

static void
place (ps__strmap_slot *slots, uint32_t mask, uint32_t key, uint32_t hash, uint32_t value)
{
  uint32_t i = hash & mask;
  while (slots[i].key != PS__STRMAP_EMPTY)
    i = (i + 1) & mask;
  slots[i] = (ps__strmap_slot){ hash, key, value };
}

int
ps__strmap_insert (ps_strmap *m, uint32_t key, uint32_t hash, uint32_t value)
{
  if ((m->count + 1) > (m->mask + 1) / 2) {
    uint32_t old_cap = m->mask + 1;
    if (old_cap >= (1u << 31))
      return PS_ENOMEM;
    ps__strmap_slot *old = m->slots;
    if (alloc_slots (m, old_cap * 2) < 0) {
      m->slots = old;
      return PS_ENOMEM;
    }
    for (uint32_t i = 0; i < old_cap; i++)
      if (old[i].key != PS__STRMAP_EMPTY)
        place (m->slots, m->mask, old[i].key, old[i].hash, old[i].value);
    free (old);
  }
  place (m->slots, m->mask, key, hash, value);
  m->count++;
  return 0;
}

/* How many keys ahead the batch operations prefetch. */
#define AHEAD 8
#define RING 32 /* a power of two > 2 * AHEAD */

/* The NUL-terminated key a equals k[0, len): names are short, and a loop
 * beats a call to memcmp for them. */
static inline bool
same_key (const char *a, const char *k, size_t len)
{
  if (len > 32)
    return memcmp (a, k, len) == 0 && a[len] == '\0';
  for (size_t i = 0; i < len; i++)
    if (a[i] != k[i])
      return false;
  return a[len] == '\0';
}

/* The length of key i of ps__strmap_find_many, and where it is. */
static inline const char *
many_key (const char *kpool, const char *kalt, uint32_t alt, uint32_t off, size_t *len)
{
  if (off & alt) {
    const char *k = kalt + (off & ~alt);
    *len = strlen (k);
    return k;
  }
  const char *k = kpool + off;
  size_t n = 0;
  while (k[n] != '"' && k[n] != '\0')
    n++;
  *len = n;
  return k;
}

void
ps__strmap_find_many (const ps_strmap *m, const char *pool, const char *kpool, const char *kalt,
                      uint32_t alt, const uint32_t *koff, size_t n, uint32_t *out)
{
  const ps__strmap_slot *slots = m->slots;
  uint32_t mask = m->mask;
  uint32_t ring_hash[RING], ring_len[RING], ring_slot[RING];
  /* Three stages: at i + 2 AHEAD hash the key and prefetch its first slot;
   * at i + AHEAD find the first slot with the same hash and prefetch that
   * slot's key; at i compare (and go on probing on a mismatch). */
  for (size_t i = 0; i < n + 2 * AHEAD; i++) {
    if (i < n) {
      size_t len;
      const char *k = many_key (kpool, kalt, alt, koff[i], &len);
      uint32_t h = ps__strmap_hash (k, len);
      ring_hash[i % RING] = h;
      ring_len[i % RING] = (uint32_t) len;
      PREFETCH (&slots[h & mask]);
    }
    if (i >= AHEAD && i - AHEAD < n) {
      size_t j = i - AHEAD;
      uint32_t h = ring_hash[j % RING], p = h & mask;
      while (slots[p].key != PS__STRMAP_EMPTY && slots[p].hash != h)
        p = (p + 1) & mask;
      ring_slot[j % RING] = p;
      if (slots[p].key != PS__STRMAP_EMPTY)
        PREFETCH (pool + slots[p].key);
    }
    if (i >= 2 * AHEAD) {
      size_t j = i - 2 * AHEAD;
      uint32_t off = koff[j];
      const char *k = off & alt ? kalt + (off & ~alt) : kpool + off;
      uint32_t h = ring_hash[j % RING], len = ring_len[j % RING], p = ring_slot[j % RING];
      uint32_t v = UINT32_MAX;
      for (;; p = (p + 1) & mask) {
        const ps__strmap_slot *sl = &slots[p];
        if (sl->key == PS__STRMAP_EMPTY)
          break;
        if (sl->hash == h && same_key (pool + sl->key, k, len)) {
          v = sl->value;
          break;
        }
      }
      out[j] = v;
    }
  }
}

int
ps__strmap_build (ps_strmap *m, const char *pool, const uint32_t *keys, size_t stride, size_t n,
                  uint32_t skip, ps__strmap_dup_fn dup, void *ctx)
{
  if (n > UINT32_MAX / 2)
    return PS_ELIMIT;
  int ret = ps__strmap_reset (m, (uint32_t) n);
  if (ret < 0)
    return ret;
  ps__strmap_slot *slots = m->slots;
  uint32_t mask = m->mask;
  uint32_t ring_hash[RING];
#define KEY(i) (*(const uint32_t *) ((const char *) keys + (i) * stride))
  for (size_t i = 0; i < n + AHEAD; i++) {
    if (i < n && KEY (i) != skip) {
      const char *k = pool + KEY (i);
      uint32_t h = ps__strmap_hash (k, strlen (k));
      ring_hash[i % RING] = h;
      PREFETCH (&slots[h & mask]);
    }
    if (i < AHEAD)
      continue;
    size_t j = i - AHEAD;
    uint32_t key = KEY (j);
    if (key == skip)
      continue;
    uint32_t h = ring_hash[j % RING], p = h & mask;
    bool found = false;
    for (; slots[p].key != PS__STRMAP_EMPTY; p = (p + 1) & mask)
      if (slots[p].hash == h && strcmp (pool + slots[p].key, pool + key) == 0) {
        found = true;
        if ((ret = dup (ctx, (uint32_t) j, slots[p].value)) < 0)
          return ret;
        break;
      }
    if (!found) {
      slots[p] = (ps__strmap_slot){ h, key, (uint32_t) j };
      m->count++;
    }
  }
#undef KEY
  return 0;
}
