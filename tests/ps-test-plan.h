/* ps-test-plan.h: helpers for tests of plans: collecting verifier
 * reports, building plans step by step with the planner's own helpers
 * (core/ps-plan-private.h), and capturing plan output in memory.  Include
 * after cmocka.h. */
#ifndef PS_TEST_PLAN_H
#define PS_TEST_PLAN_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/ps-planner-private.h"
#include "ps-verify.h"

#define MAX_KEPT 64

typedef struct reports {
  char *msg[MAX_KEPT];
  size_t n;
} reports;

static inline void
collect (void *ctx, const char *message)
{
  reports *r = ctx;
  if (r->n < MAX_KEPT)
    r->msg[r->n++] = strdup (message);
}

static inline void
reports_clear (reports *r)
{
  for (size_t i = 0; i < r->n; i++)
    free (r->msg[i]);
  r->n = 0;
}

static inline size_t
verify (const ps_plan *p, reports *r)
{
  reports_clear (r);
  return ps_plan_verify (p, collect, r, MAX_KEPT);
}

/* Fails the test, printing every report, unless one contains needle. */
static inline void
assert_reported (const reports *r, const char *needle)
{
  for (size_t i = 0; i < r->n; i++)
    if (strstr (r->msg[i], needle))
      return;
  for (size_t i = 0; i < r->n; i++)
    print_message ("report: %s\n", r->msg[i]);
  fail_msg ("no report contains \"%s\"", needle);
}

static inline void
assert_verifies (const ps_plan *p)
{
  reports r = { 0 };
  size_t n = verify (p, &r);
  for (size_t i = 0; i < r.n; i++)
    print_message ("unexpected: %s\n", r.msg[i]);
  reports_clear (&r);
  assert_int_equal (n, 0);
}

static inline void
manual_begin (ps_plan *p, const ps_graph *g, uint32_t streams)
{
  ps_plan_options o;
  ps_plan_options_init (&o);
  o.streams = streams;
  assert_int_equal (ps__plan_begin (p, g, &o), 0);
}

static inline void
put_step (ps_plan *p, uint32_t v, uint32_t stream)
{
  assert_int_equal (ps__plan_add_node_step (p, v, stream, NULL), 0);
}

static inline void
put_record (ps_plan *p, uint32_t stream, uint32_t ev)
{
  if (ev >= p->n_events)
    p->n_events = ev + 1;
  assert_int_equal (ps__plan_add_record (p, stream, ev, NULL), 0);
}

static inline void
put_wait (ps_plan *p, uint32_t stream, uint32_t ev)
{
  if (ev >= p->n_events)
    p->n_events = ev + 1;
  assert_int_equal (ps__plan_add_wait (p, stream, ev, PS_WAIT_DEPENDENCY, PS_NONE, NULL), 0);
}

static inline void
manual_end (ps_plan *p)
{
  assert_int_equal (ps__plan_pool_end_to_end (p, NULL), 0);
  assert_int_equal (ps__plan_finish (p), 0);
}

/* Not inlined: inlined, GCC 12 takes the stream's pointer to buf for the
 * text it returns (-Wdangling-pointer, a false positive). */
__attribute__ ((noinline, unused)) static char *
capture (int (*write) (const ps_plan *, FILE *), const ps_plan *p)
{
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream (&buf, &len);
  assert_non_null (f);
  assert_int_equal (write (p, f), 0);
  fclose (f);
  return buf;
}

#endif
