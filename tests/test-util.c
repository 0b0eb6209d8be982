/* test-util.c: the small facts every layer shares: how durations, bytes
 * and counts are written, array growth, the name tables of the graph
 * format's enums, "did you mean" and quoted text in messages, and stage
 * timing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ps-array.h"
#include "ps-error.h"
#include "ps-format.h"
#include "ps-graph.h"
#include "ps-timeline.h"
#include "ps-timing.h"
#include "util/ps-outbuf.h"

#define MU "\xc2\xb5"
#define MINUS "\xe2\x88\x92"

static const char *
dur (double ns)
{
  static char buf[PS_FORMAT_MAX];
  return ps_format_duration (ns, buf, sizeof buf);
}

static void
core_util_format_durations (void **state)
{
  assert_string_equal (dur (0), "0 ns");
  assert_string_equal (dur (850), "850 ns");
  assert_string_equal (dur (999.4), "999 ns");
  /* Three significant digits in the largest unit that keeps one digit
   * before the point, rounding carried into the next unit. */
  assert_string_equal (dur (999.6), "1.00 " MU "s");
  assert_string_equal (dur (4480), "4.48 " MU "s");
  assert_string_equal (dur (9996), "10.0 " MU "s");
  assert_string_equal (dur (17400), "17.4 " MU "s");
  assert_string_equal (dur (99960), "100 " MU "s");
  assert_string_equal (dur (346000), "346 " MU "s");
  assert_string_equal (dur (999600), "1.00 ms");
  assert_string_equal (dur (2.254e6), "2.25 ms");
  assert_string_equal (dur (1.2e6), "1.20 ms");
  assert_string_equal (dur (12.9e9), "12.9 s");
  assert_string_equal (dur (5e12), "5000 s");
  assert_string_equal (dur (-4480), MINUS "4.48 " MU "s");
  assert_string_equal (dur (NAN), "unknown");
  assert_string_equal (dur (INFINITY), "infinite");
  char buf[PS_FORMAT_MAX];
  assert_string_equal (ps_format_duration_delta (1200, buf, sizeof buf), "+1.20 " MU "s");
  assert_string_equal (ps_format_duration_delta (-3400, buf, sizeof buf), MINUS "3.40 " MU "s");
  assert_string_equal (ps_format_duration_delta (0, buf, sizeof buf), "+0 ns");
  /* A short buffer gets a truncated, terminated string. */
  char tiny[4];
  ps_format_duration (346000, tiny, sizeof tiny);
  assert_int_equal (strlen (tiny), 3);
}

static void
core_util_format_bytes_and_counts (void **state)
{
  char buf[PS_FORMAT_MAX];
  assert_string_equal (ps_format_bytes (0, buf, sizeof buf), "0 B");
  assert_string_equal (ps_format_bytes (512, buf, sizeof buf), "512 B");
  assert_string_equal (ps_format_bytes (1536, buf, sizeof buf), "1.50 KiB");
  assert_string_equal (ps_format_bytes (4194304, buf, sizeof buf), "4 MiB");
  assert_string_equal (ps_format_bytes (24 << 20, buf, sizeof buf), "24 MiB");
  assert_string_equal (ps_format_bytes (84.0e6, buf, sizeof buf), "80.1 MiB");
  assert_string_equal (ps_format_bytes (1.5 * 1073741824.0, buf, sizeof buf), "1.50 GiB");
  assert_string_equal (ps_format_bytes_delta (-2048, buf, sizeof buf), MINUS "2 KiB");
  assert_string_equal (ps_format_count (0, buf, sizeof buf), "0");
  assert_string_equal (ps_format_count (999, buf, sizeof buf), "999");
  assert_string_equal (ps_format_count (1000, buf, sizeof buf), "1,000");
  assert_string_equal (ps_format_count (1048576, buf, sizeof buf), "1,048,576");
  assert_string_equal (ps_format_count (UINT64_MAX, buf, sizeof buf),
                       "18,446,744,073,709,551,615");
}

static void
core_util_array_growth (void **state)
{
  uint32_t *a = NULL, cap = 0;
  assert_int_equal (PS_ARRAY_RESERVE (a, cap, 1), 0);
  assert_int_equal (cap, 16);
  for (uint32_t i = 0; i < 16; i++)
    a[i] = i;
  assert_int_equal (PS_ARRAY_RESERVE (a, cap, 17), 0);
  assert_int_equal (cap, 32);
  assert_int_equal (a[15], 15);
  /* No growth when there is room. */
  assert_int_equal (PS_ARRAY_RESERVE (a, cap, 20), 0);
  assert_int_equal (cap, 32);
  /* The limit bounds the capacity, and a need above it fails with the
   * array unchanged. */
  assert_int_equal (ps_array_grow (&a, &cap, 40, sizeof *a, 50), 0);
  assert_int_equal (cap, 50);
  uint32_t *before = a;
  assert_int_equal (ps_array_grow (&a, &cap, 51, sizeof *a, 50), PS_ELIMIT);
  assert_ptr_equal (a, before);
  assert_int_equal (cap, 50);
  /* A size that cannot be allocated fails as out of memory. */
  assert_int_equal (ps_array_grow (&a, &cap, (uint64_t) 1 << 31, (size_t) 1 << 40,
                                   PS_ARRAY_MAX),
                    PS_ENOMEM);
  assert_int_equal (cap, 50);
  assert_int_equal (a[15], 15);
  free (a);
}

static int
cmp_first (const void *a, const void *b)
{
  uint32_t x = ((const uint32_t *) a)[0], y = ((const uint32_t *) b)[0];
  return x < y ? -1 : x > y;
}

/* Sorting: an array in order (ties included) is left exactly as it is;
 * one out of order anywhere, even only at its end, is sorted, ties kept
 * in their order as qsort's merge sort keeps them. */
static void
core_util_array_sort (void **state)
{
  uint32_t a[6][2] = { { 1, 0 }, { 2, 1 }, { 2, 2 }, { 3, 3 }, { 5, 4 }, { 7, 5 } };
  ps_array_sort (a, 6, sizeof a[0], cmp_first);
  for (uint32_t i = 0; i < 6; i++)
    assert_int_equal (a[i][1], i);
  a[5][0] = 4; /* 1 2 2 3 5 4 */
  ps_array_sort (a, 6, sizeof a[0], cmp_first);
  static const uint32_t keys[6] = { 1, 2, 2, 3, 4, 5 }, tags[6] = { 0, 1, 2, 3, 5, 4 };
  for (uint32_t i = 0; i < 6; i++) {
    assert_int_equal (a[i][0], keys[i]);
    assert_int_equal (a[i][1], tags[i]);
  }
  ps_array_sort (NULL, 0, sizeof a[0], cmp_first);
}

/* Every name of every table parses back to its value, with its length,
 * and nothing else does. */
static void
check_names (const ps_names *t, uint32_t count)
{
  assert_int_equal (t->count, count);
  for (uint32_t i = 0; i < count; i++) {
    assert_int_equal (t->len[i], strlen (t->name[i]));
    assert_int_equal (ps_names_find (t, count, t->name[i], t->len[i]), (int) i);
    for (uint32_t j = 0; j < i; j++)
      assert_string_not_equal (t->name[i], t->name[j]);
  }
  assert_int_equal (ps_names_find (t, count, "nonesuch", 8), -1);
}

static void
core_util_name_tables (void **state)
{
  check_names (&ps_op_names, PS_OP__COUNT);
  check_names (&ps_impl_names, PS_IMPL__COUNT);
  check_names (&ps_dtype_names, PS_DT__COUNT);
  check_names (&ps_copy_dir_names, PS_COPY__COUNT);
  check_names (&ps_assume_names, PS_ASSUME__COUNT);
  assert_string_equal (ps_op_name (PS_OP_EVENT_RECORD), "event_record");
  assert_string_equal (ps_op_short_name (PS_OP_EVENT_RECORD), "record");
  assert_string_equal (ps_op_short_name (PS_OP_CONDITIONAL), "cond");
  assert_string_equal (ps_op_name ((ps_op) 200), "?");
  /* A graph file may use the ops before PS_OP__FILE_COUNT only. */
  assert_int_equal (ps_names_find (&ps_op_names, PS_OP__FILE_COUNT, "conditional", 11),
                    PS_OP_CONDITIONAL);
  assert_int_equal (ps_names_find (&ps_op_names, PS_OP__FILE_COUNT, "empty", 5), -1);
  assert_int_equal (ps_dtype_size (PS_DT_BF16), 2);
  assert_int_equal (ps_dtype_size (PS_DT_U8), 1);
  assert_int_equal (ps_impl_reads (PS_IMPL_ADD), 2);
  assert_int_equal (ps_impl_reads (PS_IMPL_GELU), 1);
  assert_true (ps_impl_elementwise (PS_IMPL_FILL));
  assert_false (ps_impl_elementwise (PS_IMPL_SPIN));
  assert_false (ps_impl_elementwise (PS_IMPL_NONE));
  assert_int_equal (ps_copy_dir_reads (PS_COPY_H2D), 0);
  assert_int_equal (ps_copy_dir_writes (PS_COPY_D2H), 0);
  /* The op -> span kind mapping comes from the same list. */
  assert_int_equal (ps_span_kind_of_op (PS_OP_MEMSET), PS_SPAN_MEMSET);
  assert_int_equal (ps_span_kind_of_op (PS_OP_HOST), PS_SPAN_HOST);
  assert_int_equal (ps_span_kind_of_op (PS_OP_BARRIER), PS_SPAN_OTHER);
}

static void
core_util_messages (void **state)
{
  static const char *const keys[] = { "name", "bytes", NULL, "external", "dtype" };
  assert_string_equal (ps_suggest ("bytse", 5, keys, 5), "bytes");
  assert_string_equal (ps_suggest ("extrenal", 8, keys, 5), "external");
  assert_null (ps_suggest ("frobnicate", 10, keys, 5));
  char q[16];
  ps_quote_text (q, sizeof q, "a\nb\x1b", 4);
  assert_string_equal (q, "a?b?");
  ps_quote_text (q, sizeof q, "abcdefghijklmnopqrstuvwxyz", 26);
  assert_string_equal (q, "abcdefghijk...");
  /* A cut never splits a UTF-8 sequence. */
  ps_quote_text (q, sizeof q, "aaaaaaaa\xc3\xa9\xc3\xa9\xc3\xa9", 14);
  assert_string_equal (q, "aaaaaaaa\xc3\xa9...");
}

static void
core_util_timing (void **state)
{
  ps_timing t;
  ps_timing_reset (&t);
  double since = ps_clock_now ();
  ps_timing_mark (&t, "read", &since);
  ps_timing_mark (&t, "parse", &since);
  assert_int_equal (t.n, 2);
  assert_string_equal (t.stage[1], "parse");
  assert_true (t.seconds[0] >= 0 && t.seconds[1] >= 0);
  /* A stage that runs again adds to its time. */
  double parse = t.seconds[1];
  while (ps_clock_now () <= since)
    ;
  ps_timing_mark (&t, "parse", &since);
  assert_int_equal (t.n, 2);
  assert_true (t.seconds[1] > parse);
  static const char *const more[] = { "a", "b", "c", "d", "e", "f", "g", "h", "i", "j",
                                      "k", "l", "m", "n", "o", "p", "q", "r", "s", "t" };
  for (int i = 0; i < PS_TIMING_MAX + 4; i++)
    ps_timing_mark (&t, more[i], &since);
  assert_int_equal (t.n, PS_TIMING_MAX);
  ps_timing_mark (NULL, "nothing", &since);
}

/* Long output through ps_outbuf reads exactly as stdio writes it: fields
 * that cross the buffer's end, one larger than the buffer, a printf that
 * does not fit in what is left, padded numbers and names, and text from a
 * file with its control characters as '?'. */
static void
core_util_outbuf (void **state)
{
  char *got = NULL, *want = NULL;
  size_t got_len = 0, want_len = 0;
  FILE *g = open_memstream (&got, &got_len), *w = open_memstream (&want, &want_len);
  assert_non_null (g);
  assert_non_null (w);
  size_t big_len = PS_OUTBUF_CAP * 2 + 17;
  char *big = malloc (big_len + 1);
  assert_non_null (big);
  for (size_t i = 0; i < big_len; i++)
    big[i] = (char) ('a' + i % 26);
  big[big_len] = '\0';

  ps_outbuf *o = malloc (sizeof *o);
  assert_non_null (o);
  ps_outbuf_init (o, g);
  for (uint32_t i = 0; i < 3000; i++) {
    ps_outbuf_str (o, "  #");
    ps_outbuf_uint_left (o, i * 7919u, 6);
    ps_outbuf_char (o, ' ');
    ps_format_column_buf (o, i % 2 ? "kernel" : "wait", -7);
    ps_put_printable_buf (o, "name\twith\x1b[31mcontrols\x7f");
    ps_outbuf_printf (o, " %s=%.3f\n", "ms", i / 3.0);
    fprintf (w, "  #%-6u %-7sname?with?[31mcontrols? %s=%.3f\n", i * 7919u,
             i % 2 ? "kernel" : "wait", "ms", i / 3.0);
    if (i == 1000 || i == 2000) {
      ps_outbuf_str (o, big);
      ps_outbuf_printf (o, "<%s>", big);
      fprintf (w, "%s<%s>", big, big);
    }
  }
  ps_outbuf_uint_left (o, UINT64_MAX, 0);
  ps_outbuf_uint_left (o, 0, 3);
  ps_outbuf_char (o, '|');
  fprintf (w, "%llu0  |", (unsigned long long) UINT64_MAX);
  ps_outbuf_flush (o);
  fclose (g);
  fclose (w);
  assert_true (want_len > 3 * PS_OUTBUF_CAP);
  assert_int_equal (got_len, want_len);
  assert_memory_equal (got, want, want_len);
  free (o);
  free (big);
  free (got);
  free (want);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (core_util_format_durations),
    cmocka_unit_test (core_util_format_bytes_and_counts),
    cmocka_unit_test (core_util_array_growth),
    cmocka_unit_test (core_util_array_sort),
    cmocka_unit_test (core_util_name_tables),
    cmocka_unit_test (core_util_messages),
    cmocka_unit_test (core_util_timing),
    cmocka_unit_test (core_util_outbuf),
  };
  return cmocka_run_group_tests_name ("/core/util", tests, NULL, NULL);
}
