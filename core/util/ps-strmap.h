/* ps-strmap.h: an open-addressing map from names to ids, used while loading.
 *
 * Keys are not copied: each key is an offset into a string pool of
 * NUL-terminated strings that the caller owns and passes to every call (the
 * pool may move between calls when it grows).  Keys must not contain NUL
 * bytes.  The table has a power-of-two capacity, linear probing and stores
 * each key's hash, so most failed probes never touch the pool. */
#ifndef PS_STRMAP_H
#define PS_STRMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct ps__strmap_slot {
  uint32_t hash;
  uint32_t key; /* pool offset; PS__STRMAP_EMPTY when the slot is free */
  uint32_t value;
} ps__strmap_slot;

typedef struct ps_strmap {
  ps__strmap_slot *slots;
  uint32_t mask; /* capacity - 1 */
  uint32_t count;
} ps_strmap;

#define PS__STRMAP_EMPTY UINT32_MAX

/* The hash of a string, for find and insert. */
uint32_t ps__strmap_hash (const char *s, size_t len);

/* Sizes the table for about `expected` keys (it grows as needed); on
 * PS_ENOMEM m is empty, and ps__strmap_free may still be called. */
int ps__strmap_init (ps_strmap *m, uint32_t expected);
/* Empties m (all zero, or a map) for about `expected` keys, in the table
 * it has when that is large enough: a table used again costs less than
 * the new memory of another (the kernel clears every new page). */
int ps__strmap_reset (ps_strmap *m, uint32_t expected);
void ps__strmap_free (ps_strmap *m);

/* The value stored for s[0..len), or UINT32_MAX when absent. */
uint32_t ps__strmap_find (const ps_strmap *m, const char *pool, const char *s, size_t len,
                          uint32_t hash);

/* Adds a key that is known to be absent (call find first).  `key` is the
 * pool offset of the key's copy.  Returns 0 or PS_ENOMEM. */
int ps__strmap_insert (ps_strmap *m, uint32_t key, uint32_t hash, uint32_t value);

/* Looks up n keys at once, much faster than n finds on a big table (see
 * ps-strmap.c).  Key i is the NUL-terminated string kalt + (koff[i] & ~alt)
 * when koff[i] has a bit of `alt` set (alt 0: never), else the string at
 * kpool + koff[i], which ends at its first '"' or NUL byte (a name as it
 * stands in a JSON document); out[i] gets its value or UINT32_MAX.  out
 * may be koff. */
void ps__strmap_find_many (const ps_strmap *m, const char *pool, const char *kpool,
                           const char *kalt, uint32_t alt, const uint32_t *koff, size_t n,
                           uint32_t *out);

/* Called by ps__strmap_build for a key equal to an earlier one; a negative
 * return stops the build with that code. */
typedef int (*ps__strmap_dup_fn) (void *ctx, uint32_t index, uint32_t first);

/* Fills m (all zero, or a map, emptied as by ps__strmap_reset) with keys
 * 0..n-1, key i being the pool offset stored at
 * (char *) keys + i * stride, with value i.  Keys equal to `skip` are left
 * out; a key equal to an earlier one is not added and reported to dup. */
int ps__strmap_build (ps_strmap *m, const char *pool, const uint32_t *keys, size_t stride,
                      size_t n, uint32_t skip, ps__strmap_dup_fn dup, void *ctx);

#endif
