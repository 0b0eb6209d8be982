/* ps-hb.h: the happens-before order of a plan's steps, as the pool and
 * its peak need it: stream states, clocks, and when each pooled buffer's
 * bytes are free again on each stream.
 *
 * The order is read from the steps alone, as the verifier reads it:
 * each stream starts in a head state; a work step (any step that is not
 * an event record or wait) moves its stream to a new state, and so does a
 * wait that teaches its stream something new (its `wait` arc comes from
 * the state the record saw).  One state precedes another exactly when
 * everything before the first is known complete at the second.  States
 * are numbered in the order they are made, which is issue order, so along
 * one stream their ids grow.
 *
 * Each pooled buffer that some step uses gets a dense index j.  Its bytes
 * may go to buffer c exactly when every use of j happens-before every use
 * of c (j precedes c, ps__hb_before).  release[j * S + t] is the earliest
 * state of stream t that follows every use of j (PS_NONE: none does), so
 * a buffer first used on stream t after that state, with all its other
 * uses after its first, may take j's bytes.  Not installed; core/ only. */
#ifndef PS_HB_H
#define PS_HB_H

#include "ps-plan.h"

/* Largest used buffers x streams for which release states are kept (a
 * 32-bit state per pair, 1 GiB at the limit). */
#define PS__HB_MAX_RELEASE ((uint64_t) 1 << 28)

typedef struct ps__hb {
  const ps_plan *p;
  const ps_graph *g;
  uint32_t S; /* clock width: highest stream of any step + 1 */

  /* Work steps in issue order: stream, 1-based position on it, the epoch
   * of its stream's clock when issued, the states before and after it. */
  uint32_t nw;
  uint32_t *wk_stream, *wk_pos, *wk_epoch, *wk_before, *wk_after;
  uint32_t *sw_off, *sw; /* per stream, its work steps in order */

  /* States: the previous one on the stream (PS_NONE for heads), the
   * recorded state a wait state waits for, position on the stream (heads
   * 0), stream, and the epoch of a wait state (else PS_NONE). */
  uint32_t ns, ns_cap;
  uint32_t *st_prev, *st_wait, *st_seq, *st_stream, *st_epoch;
  uint32_t *ch_off; /* per stream, where its states start in chain order */
  uint32_t *chain;  /* states by stream, in chain order */
  uint32_t *ws_off, *ws_state; /* per stream, its wait states in order */
  uint32_t *epochs;            /* n_epochs x S: a stream's clock after a wait */
  uint32_t n_epochs, epochs_cap;

  /* Pooled buffers that are used, dense; uses per buffer id (CSR), as
   * work steps in issue order. */
  uint32_t nb, n_unused;
  uint64_t unused_max; /* largest pooled buffer nobody uses */
  uint32_t *bid, *dense;
  uint32_t *use_off, *use;
  uint64_t *w;

  /* Per used buffer: its first and last use, whether every other use
   * comes no earlier than the state before its first (meet) and whether
   * every other use happens-before its last (join), and its release
   * states (nb x S; NULL when nb x S > PS__HB_MAX_RELEASE). */
  uint32_t *first, *last;
  uint8_t *meet, *join;
  uint32_t *release;
  /* Per used buffer, the streams it uses and the position of its last use
   * on each (CSR). */
  uint32_t *lu_off, *lu_x, *lu_r;
} ps__hb;

/* Builds the order of p's steps and its buffers' uses and releases.  0 or
 * PS_ENOMEM; ps__hb_free in any case. */
int ps__hb_build (ps__hb *h, const ps_plan *p);
void ps__hb_free (ps__hb *h);

/* Component x of the clock of work step w before it runs: the number of
 * work steps of stream x known complete. */
static inline uint32_t
ps__hb_clock_before (const ps__hb *h, uint32_t w, uint32_t x)
{
  return x == h->wk_stream[w] ? h->wk_pos[w] - 1 : h->epochs[(size_t) h->wk_epoch[w] * h->S + x];
}

/* Per state, the epoch of its stream's clock there (that of the latest
 * wait state up to it; 0, nothing known, before any): ns entries in ep.
 * A state knows work step p of stream x (and every state up to the one
 * right after it) exactly when epochs[ep[state] * S + x] >= p. */
void ps__hb_epoch_at (const ps__hb *h, uint32_t *ep);

/* Whether every use of buffer a happens-before every use of buffer c
 * (dense indices, a != c).  O(1) when c's uses meet, else O(c's uses). */
bool ps__hb_before (const ps__hb *h, uint32_t a, uint32_t c);

#endif
