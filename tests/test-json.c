/* test-json.c: the streaming JSON reader and the JSON writer helpers.
 *
 * Every input goes through run(), which reads it from memory (from a
 * malloc'd block of exactly its size, so that ASan sees any over-read) and
 * through the stream callback in chunks of 1, 2, 3, 7 and 4096 bytes, and
 * checks that all of them give the same tokens, positions and errors. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ps-error.h"
#include "ps-json.h"
#include "ps-jsonw.h"

/* --- helpers ------------------------------------------------------------ */

typedef struct {
  const char *data;
  size_t len, pos, chunk;
  size_t fail_at; /* report a read error once pos reaches this; 0: never */
} src;

static long
src_read (void *ctx, char *buf, size_t cap)
{
  src *s = ctx;
  if (s->fail_at && s->pos >= s->fail_at)
    return -1;
  size_t n = s->len - s->pos;
  if (n > s->chunk)
    n = s->chunk;
  if (n > cap)
    n = cap;
  memcpy (buf, s->data + s->pos, n);
  s->pos += n;
  return (long) n;
}

typedef struct {
  char *buf;
  size_t len, cap;
} sbuf;

static void sb_printf (sbuf *b, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));

static void
sb_printf (sbuf *b, const char *fmt, ...)
{
  va_list ap;
  for (;;) {
    va_start (ap, fmt);
    size_t room = b->cap - b->len;
    int n = vsnprintf (b->buf ? b->buf + b->len : NULL, room, fmt, ap);
    va_end (ap);
    assert_true (n >= 0);
    if ((size_t) n < room) {
      b->len += (size_t) n;
      return;
    }
    b->cap = (b->cap + (size_t) n + 1) * 2;
    b->buf = realloc (b->buf, b->cap);
    assert_non_null (b->buf);
  }
}

static void
sb_string (sbuf *b, const char *s, size_t len)
{
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char) s[i];
    if (c >= 0x20 && c < 0x7f && c != '\\' && c != '"')
      sb_printf (b, "%c", c);
    else
      sb_printf (b, "\\x%02x", c);
  }
}

/* One token in words: "{", "k:name", "s:text", "n:1.5", "i:42", ... */
static void
sb_token (sbuf *b, const ps_json_reader *r, ps_json_token t)
{
  switch (t) {
  case PS_JSON_OBJECT_BEGIN: sb_printf (b, "{"); break;
  case PS_JSON_OBJECT_END: sb_printf (b, "}"); break;
  case PS_JSON_ARRAY_BEGIN: sb_printf (b, "["); break;
  case PS_JSON_ARRAY_END: sb_printf (b, "]"); break;
  case PS_JSON_KEY:
  case PS_JSON_STRING:
    sb_printf (b, t == PS_JSON_KEY ? "k:" : "s:");
    sb_string (b, r->str, r->len);
    break;
  case PS_JSON_NUMBER:
    if (r->is_int)
      sb_printf (b, "i:%lld", (long long) r->i64);
    else
      sb_printf (b, "n:%.17g", r->num);
    break;
  case PS_JSON_TRUE: sb_printf (b, "true"); break;
  case PS_JSON_FALSE: sb_printf (b, "false"); break;
  case PS_JSON_NULL: sb_printf (b, "null"); break;
  case PS_JSON_EOF: sb_printf (b, "eof"); break;
  case PS_JSON_ERROR: sb_printf (b, "error:%s", r->error); break;
  default: sb_printf (b, "?"); break;
  }
}

/* Reads the whole input (chunk 0: from memory) and returns
 * "LINE:COL/DEPTH TOKEN" lines; an error ends the list. */
static char *
transcript (const char *in, size_t len, size_t chunk, int max_depth, size_t max_string)
{
  ps_json_reader r;
  char *copy = malloc (len ? len : 1);
  assert_non_null (copy);
  memcpy (copy, in, len);
  src s = { copy, len, 0, chunk, 0 };
  int rc = chunk ? ps_json_init_stream (&r, src_read, &s) : ps_json_init_mem (&r, copy, len);
  assert_int_equal (rc, 0);
  if (max_depth)
    r.max_depth = max_depth;
  if (max_string)
    r.max_string = max_string;
  sbuf b = { 0 };
  sb_printf (&b, "%s", "");
  for (int guard = 0;; guard++) {
    assert_true (guard < 10000000);
    ps_json_token t = ps_json_next (&r);
    if (t == PS_JSON_ERROR) {
      assert_int_equal (r.line, r.error_line);
      assert_int_equal (r.col, r.error_col);
      sb_printf (&b, "%u:%u ", r.error_line, r.error_col);
    } else {
      assert_true (r.str != NULL);
      assert_int_equal (r.str[r.len], '\0');
      sb_printf (&b, "%u:%u/%d ", r.line, r.col, r.depth);
    }
    sb_token (&b, &r, t);
    sb_printf (&b, "\n");
    if (t == PS_JSON_ERROR || t == PS_JSON_EOF) {
      /* Both are sticky. */
      assert_int_equal (ps_json_next (&r), t);
      break;
    }
  }
  ps_json_close (&r);
  free (copy);
  return b.buf;
}

/* The memory-mode transcript, after checking that every chunk size gives
 * the same one. */
static char *
run_limits (const char *in, size_t len, int max_depth, size_t max_string)
{
  static const size_t chunks[] = { 1, 2, 3, 7, 4096 };
  char *mem = transcript (in, len, 0, max_depth, max_string);
  for (size_t i = 0; i < sizeof chunks / sizeof chunks[0]; i++) {
    char *st = transcript (in, len, chunks[i], max_depth, max_string);
    if (strcmp (mem, st) != 0) {
      fprintf (stderr, "chunk %zu differs for input of %zu bytes\n--- memory\n%s--- stream\n%s",
               chunks[i], len, mem, st);
      fail ();
    }
    free (st);
  }
  return mem;
}

static char *
run (const char *in)
{
  return run_limits (in, strlen (in), 0, 0);
}

/* The tokens of in without positions, space-separated. */
static char *
tokens_of (const char *in, size_t len)
{
  char *t = run_limits (in, len, 0, 0);
  sbuf b = { 0 };
  sb_printf (&b, "%s", "");
  for (char *line = t; *line;) {
    char *nl = strchr (line, '\n');
    char *sp = strchr (line, ' ');
    sb_printf (&b, "%s%.*s", b.len ? " " : "", (int) (nl - sp - 1), sp + 1);
    line = nl + 1;
  }
  free (t);
  return b.buf;
}

static void
expect_tokens (const char *in, const char *want)
{
  char *got = tokens_of (in, strlen (in));
  if (strcmp (got, want) != 0) {
    fprintf (stderr, "input: %s\n want: %s\n  got: %s\n", in, want, got);
    fail ();
  }
  free (got);
}

/* Runs in (of len bytes) to its end and checks the error and its place. */
static void
expect_error_n (const char *in, size_t len, const char *msg, unsigned line, unsigned col)
{
  char *t = run_limits (in, len, 0, 0);
  char want[256];
  snprintf (want, sizeof want, "%u:%u error:%s\n", line, col, msg);
  char *last = t + strlen (t) - 1;
  while (last > t && last[-1] != '\n')
    last--;
  if (strcmp (last, want) != 0) {
    fprintf (stderr, "input: ");
    for (size_t i = 0; i < len; i++) {
      unsigned char c = (unsigned char) in[i];
      fprintf (stderr, c < 0x20 || c >= 0x7f ? "\\x%02x" : "%c", c);
    }
    fprintf (stderr, "\n want: %s  got: %s", want, last);
    fail ();
  }
  free (t);
}

static void
expect_error (const char *in, const char *msg, unsigned line, unsigned col)
{
  expect_error_n (in, strlen (in), msg, line, col);
}

/* Reads a single scalar document in memory mode. */
static ps_json_token
read_scalar (const char *in, ps_json_reader *r)
{
  assert_int_equal (ps_json_init_mem (r, in, strlen (in)), 0);
  return ps_json_next (r);
}

/* --- tokens and positions ----------------------------------------------- */

static void
core_json_tokens (void **state)
{
  expect_tokens ("{\"format\": \"planscope-graph\", \"version\": 1,\n"
                 " \"nodes\": [{\"name\": \"a\", \"grid\": [64, 16], \"fusible\": true,"
                 " \"cost_ns\": 1234.5, \"x\": null, \"y\": false, \"e\": {}, \"f\": []}]}",
                 "{ k:format s:planscope-graph k:version i:1 k:nodes [ { k:name s:a k:grid [ i:64 "
                 "i:16 ] k:fusible true k:cost_ns n:1234.5 k:x null k:y false k:e { } k:f [ ] } ] "
                 "} eof");
  /* Top-level scalars are documents too; whitespace of all four kinds. */
  expect_tokens ("3", "i:3 eof");
  expect_tokens (" \t\r\n\"s\"\r\n", "s:s eof");
  expect_tokens ("[[[]],{}]", "[ [ [ ] ] { } ] eof");
  expect_tokens ("{\"\":\"\"}", "{ k: s: } eof");
}

static void
core_json_positions (void **state)
{
  /* "é" is two bytes, "中" three, "😀" four: each one column.  The escapes
   * count as the characters they are written with. */
  char *t = run ("{\"a\": 1,\n"
                 "\t\"b\" :\r\n"
                 "  [\"\xc3\xa9\xe4\xb8\xad\xf0\x9f\x98\x80\", true, \"\\n\\u00e9\", -2]}");
  assert_string_equal (t, "1:1/1 {\n"
                          "1:2/1 k:a\n"
                          "1:7/1 i:1\n"
                          "2:2/1 k:b\n"
                          "3:3/2 [\n"
                          "3:4/2 s:\\xc3\\xa9\\xe4\\xb8\\xad\\xf0\\x9f\\x98\\x80\n"
                          "3:11/2 true\n"
                          "3:17/2 s:\\x0a\\xc3\\xa9\n"
                          "3:29/2 i:-2\n"
                          "3:31/1 ]\n"
                          "3:32/0 }\n"
                          "3:33/0 eof\n");
  free (t);
  /* A byte order mark is skipped and not counted. */
  t = run ("\xef\xbb\xbf[1]");
  assert_string_equal (t, "1:1/1 [\n1:2/1 i:1\n1:3/0 ]\n1:4/0 eof\n");
  free (t);
  expect_error ("\xef\xbb[1]", "unexpected byte 0xef", 1, 1);
  expect_error (" \xef\xbb\xbf[1]", "unexpected byte 0xef", 1, 2);
  expect_error ("\xef\xbb\xbf\xef\xbb\xbf[1]", "unexpected byte 0xef", 1, 1);
  /* Errors after multi-byte characters and escapes, on later lines. */
  expect_error ("[\"\xc3\xa9\", x]", "unexpected character 'x'", 1, 7);
  expect_error ("[\"\\t\\u00e9\", x]", "unexpected character 'x'", 1, 14);
  expect_error ("{\n  \"a\": [1,\n    2,\n  ]\n}", "trailing comma before ']'", 4, 3);
  expect_error ("[\"\xe4\xb8\xad\xe4\xb8\xad\xff\"]", "invalid UTF-8 byte 0xff", 1, 5);
  /* Long indentation (skipped eight spaces at a time), tabs. */
  t = run ("[\n                   1,\n        \t2,\n                \n                x]");
  assert_string_equal (t, "1:1/1 [\n2:20/1 i:1\n3:10/1 i:2\n5:17 error:unexpected character 'x'\n");
  free (t);
}

/* --- errors ------------------------------------------------------------- */

static void
core_json_errors (void **state)
{
  expect_error ("", "empty input", 1, 1);
  expect_error (" \n  ", "empty input", 2, 3);
  /* Structure. */
  expect_error ("[1,]", "trailing comma before ']'", 1, 4);
  expect_error ("{\"a\":1,}", "trailing comma before '}'", 1, 8);
  expect_error ("{\"a\" 1}", "expected ':' after object key", 1, 6);
  expect_error ("{\"a\"}", "expected ':' after object key", 1, 5);
  expect_error ("{1:2}", "expected string as object key", 1, 2);
  expect_error ("{\"a\":1,2}", "expected string as object key", 1, 8);
  expect_error ("[1 2]", "expected ',' or ']' after array element", 1, 4);
  expect_error ("[1}", "expected ',' or ']' after array element", 1, 3);
  expect_error ("{\"a\":1 \"b\":2}", "expected ',' or '}' after object member", 1, 8);
  expect_error ("{\"a\":1]", "expected ',' or '}' after object member", 1, 7);
  expect_error ("{\"a\":}", "expected value, found '}'", 1, 6);
  expect_error ("[,1]", "unexpected character ','", 1, 2);
  expect_error ("]", "expected value, found ']'", 1, 1);
  expect_error ("NaN", "unexpected character 'N'", 1, 1);
  expect_error ("[\x01]", "unexpected byte 0x01", 1, 2);
  expect_error ("[\f1]", "unexpected byte 0x0c", 1, 2);
  expect_error ("\xc3\xa9", "unexpected byte 0xc3", 1, 1);
  expect_error_n ("[\0]", 3, "unexpected byte 0x00", 1, 2);
  /* Premature end. */
  expect_error ("[", "unexpected end of input inside array", 1, 2);
  expect_error ("[1,", "unexpected end of input inside array", 1, 4);
  expect_error ("{", "unexpected end of input inside object", 1, 2);
  expect_error ("{\"a\"", "unexpected end of input inside object", 1, 5);
  expect_error ("{\"a\":", "unexpected end of input inside object", 1, 6);
  expect_error ("{\"a\":1", "unexpected end of input inside object", 1, 7);
  expect_error ("\"abc", "unexpected end of input inside string", 1, 5);
  expect_error ("\"abc\\", "unexpected end of input inside string", 1, 6);
  expect_error ("\"\\u00", "unexpected end of input inside string", 1, 6);
  /* Literals. */
  expect_error ("tru", "invalid literal, expected 'true'", 1, 4);
  expect_error ("trux", "invalid literal, expected 'true'", 1, 4);
  expect_error ("truex", "invalid literal, expected 'true'", 1, 5);
  expect_error ("[nan]", "invalid literal, expected 'null'", 1, 3);
  expect_error ("False", "unexpected character 'F'", 1, 1);
  expect_error ("[falsey]", "invalid literal, expected 'false'", 1, 7);
  /* Strings. */
  expect_error ("\"a\\qb\"", "invalid escape '\\q' in string", 1, 3);
  expect_error ("\"a\\\x01\"", "invalid escape: byte 0x01 after '\\' in string", 1, 3);
  expect_error ("\"\\u12G4\"", "invalid \\u escape: expected four hex digits", 1, 2);
  expect_error ("\"\\u12\"", "invalid \\u escape: expected four hex digits", 1, 2);
  expect_error ("\"\\U0041\"", "invalid escape '\\U' in string", 1, 2);
  expect_error ("\"a\nb\"", "control character 0x0a in string (must be escaped)", 1, 3);
  expect_error ("\"\t\"", "control character 0x09 in string (must be escaped)", 1, 2);
  expect_error ("\"\xff\"", "invalid UTF-8 byte 0xff", 1, 2);
  /* Top level. */
  expect_error ("3 4", "trailing data after the top-level value", 1, 3);
  expect_error ("{} x", "trailing data after the top-level value", 1, 4);
  expect_error ("[]]", "trailing data after the top-level value", 1, 3);
  expect_error ("\"a\"\"b\"", "trailing data after the top-level value", 1, 4);
  expect_error ("1\n\n  }", "trailing data after the top-level value", 3, 3);
}

static void
core_json_read_error (void **state)
{
  const char *doc = "{\"a\": [1, 2, 3], \"b\": \"some text\"}";
  ps_json_reader r;
  src s = { doc, strlen (doc), 0, 4, 12 };
  assert_int_equal (ps_json_init_stream (&r, src_read, &s), 0);
  ps_json_token t;
  int n = 0;
  while ((t = ps_json_next (&r)) > PS_JSON_EOF)
    n++;
  assert_int_equal (t, PS_JSON_ERROR);
  assert_string_equal (r.error, "error reading input");
  assert_true (n >= 3 && n <= 6);
  assert_int_equal (ps_json_next (&r), PS_JSON_ERROR);
  ps_json_close (&r);
  assert_int_equal (ps_json_init_stream (&r, NULL, NULL), PS_EINVAL);
  ps_json_close (&r);
  assert_int_equal (ps_json_init_mem (&r, NULL, 3), PS_EINVAL);
  ps_json_close (&r);
  /* A NULL block of length 0 is an empty input. */
  assert_int_equal (ps_json_init_mem (&r, NULL, 0), 0);
  assert_int_equal (ps_json_next (&r), PS_JSON_ERROR);
  assert_string_equal (r.error, "empty input");
  ps_json_close (&r);
}

/* --- strings: escapes, surrogates, UTF-8 -------------------------------- */

static void
core_json_escapes (void **state)
{
  expect_tokens ("\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"", "s:\\x22\\x5c/\\x08\\x0c\\x0a\\x0d\\x09 eof");
  expect_tokens ("\"\\u0041\\u00e9\\u4E2D\\uffff\"",
                 "s:A\\xc3\\xa9\\xe4\\xb8\\xad\\xef\\xbf\\xbf eof");
  /* \u0000 is a NUL inside the string: len counts it. */
  ps_json_reader r;
  assert_int_equal (read_scalar ("\"a\\u0000b\"", &r), PS_JSON_STRING);
  assert_int_equal (r.len, 3);
  assert_memory_equal (r.str, "a\0b", 4);
  ps_json_close (&r);
  /* DEL and all printable ASCII pass unescaped. */
  expect_tokens ("\"\x7f~ \"", "s:\\x7f~  eof");
}

static void
core_json_surrogates (void **state)
{
  expect_tokens ("\"\\ud83d\\ude00\"", "s:\\xf0\\x9f\\x98\\x80 eof");
  expect_tokens ("\"\\uD800\\uDC00\\uDBFF\\uDFFF\"",
                 "s:\\xf0\\x90\\x80\\x80\\xf4\\x8f\\xbf\\xbf eof");
  expect_tokens ("[\"x\\ud834\\udd1ey\"]", "[ s:x\\xf0\\x9d\\x84\\x9ey ] eof");
  expect_error ("\"\\ud800\"", "unpaired surrogate \\ud800 in string", 1, 2);
  expect_error ("\"\\udc00\"", "unpaired surrogate \\udc00 in string", 1, 2);
  expect_error ("\"ab\\udfff\"", "unpaired surrogate \\udfff in string", 1, 4);
  expect_error ("\"\\ud800\\u0041\"", "unpaired surrogate \\ud800 in string", 1, 2);
  expect_error ("\"\\ud800\\ud800\"", "unpaired surrogate \\ud800 in string", 1, 2);
  expect_error ("\"\\ud800\\n\"", "unpaired surrogate \\ud800 in string", 1, 2);
  expect_error ("\"\\ud800x\\udc00\"", "unpaired surrogate \\ud800 in string", 1, 2);
  expect_error ("\"\\ud800\\u12\"", "invalid \\u escape: expected four hex digits", 1, 8);
  expect_error ("\"x\\ud800", "unexpected end of input inside string", 1, 9);
  expect_error ("\"x\\ud800\\", "unexpected end of input inside string", 1, 10);
  expect_error ("\"x\\ud800\\udc", "unexpected end of input inside string", 1, 13);
}

static void
core_json_utf8 (void **state)
{
  expect_tokens ("\"\xc2\x80\xdf\xbf\xe0\xa0\x80\xed\x9f\xbf\xee\x80\x80\xf0\x90\x80\x80"
                 "\xf4\x8f\xbf\xbf\"",
                 "s:\\xc2\\x80\\xdf\\xbf\\xe0\\xa0\\x80\\xed\\x9f\\xbf\\xee\\x80\\x80"
                 "\\xf0\\x90\\x80\\x80\\xf4\\x8f\\xbf\\xbf eof");
  expect_error ("\"\xc0\x80\"", "overlong UTF-8 sequence", 1, 2);
  expect_error ("\"\xc1\xbf\"", "overlong UTF-8 sequence", 1, 2);
  expect_error ("\"\xe0\x80\x80\"", "overlong UTF-8 sequence", 1, 2);
  expect_error ("\"\xe0\x9f\xbf\"", "overlong UTF-8 sequence", 1, 2);
  expect_error ("\"\xf0\x80\x80\x80\"", "overlong UTF-8 sequence", 1, 2);
  expect_error ("\"\xf0\x8f\xbf\xbf\"", "overlong UTF-8 sequence", 1, 2);
  expect_error ("\"\xed\xa0\x80\"", "UTF-8 encoded surrogate (U+D800..U+DFFF)", 1, 2);
  expect_error ("\"\xed\xbf\xbf\"", "UTF-8 encoded surrogate (U+D800..U+DFFF)", 1, 2);
  expect_error ("\"\xf4\x90\x80\x80\"", "UTF-8 sequence above U+10FFFF", 1, 2);
  expect_error ("\"\xf5\x80\x80\x80\"", "UTF-8 sequence above U+10FFFF", 1, 2);
  expect_error ("\"\xf8\x88\x80\x80\x80\"", "invalid UTF-8 byte 0xf8", 1, 2);
  expect_error ("\"\x80\"", "invalid UTF-8 byte 0x80", 1, 2);
  expect_error ("\"a\xbf\"", "invalid UTF-8 byte 0xbf", 1, 3);
  expect_error ("\"\xc3\"", "truncated UTF-8 sequence", 1, 2);
  expect_error ("\"\xe2\x82\"", "truncated UTF-8 sequence", 1, 2);
  expect_error ("\"\xf0\x9f\x98" "a\"", "truncated UTF-8 sequence", 1, 2);
  expect_error ("\"\xc3\xa9\xc3", "unexpected end of input inside string", 1, 4);
  expect_error ("\"\xf0\x9f\x98", "unexpected end of input inside string", 1, 5);
  /* Invalid sequences just past the eight-byte fast path. */
  expect_error ("\"abcdefgh\xc0\x80\"", "overlong UTF-8 sequence", 1, 10);
  expect_error ("\"abcdefghijklmno\xff\"", "invalid UTF-8 byte 0xff", 1, 17);
}

static void
core_json_long_strings (void **state)
{
  /* Strings of every length around the eight-byte steps, ending at every
   * place relative to the end of the input, with and without escapes. */
  char doc[128];
  for (int n = 0; n < 40; n++) {
    for (int esc = 0; esc < 2; esc++) {
      int k = 0;
      doc[k++] = '"';
      for (int i = 0; i < n; i++)
        doc[k++] = (char) ('a' + i % 26);
      if (esc) {
        memcpy (doc + k, "\\n", 2);
        k += 2;
      }
      doc[k++] = '"';
      char *t = tokens_of (doc, (size_t) k);
      assert_int_equal (strlen (t), 2 + (size_t) n + (esc ? 4 : 0) + 4);
      free (t);
      /* And the same cut short. */
      expect_error_n (doc, (size_t) k - 1, "unexpected end of input inside string", 1,
                      (unsigned) k);
    }
  }
  /* Longer than the initial buffers, with escapes and UTF-8 spread in. */
  size_t n = 100000;
  char *big = malloc (n * 3 + 8), *want = malloc (n * 3);
  assert_non_null (big);
  assert_non_null (want);
  size_t k = 0, wk = 0;
  big[k++] = '"';
  for (size_t i = 0; i < n; i++) {
    if (i % 1000 == 999) {
      memcpy (big + k, "\\t", 2);
      k += 2;
      want[wk++] = '\t';
    } else if (i % 777 == 0) {
      memcpy (big + k, "\xc3\xa9", 2);
      memcpy (want + wk, "\xc3\xa9", 2);
      k += 2;
      wk += 2;
    } else {
      big[k++] = (char) ('0' + i % 10);
      want[wk++] = (char) ('0' + i % 10);
    }
  }
  big[k++] = '"';
  ps_json_reader r;
  for (int pass = 0; pass < 2; pass++) {
    src s = { big, k, 0, 5, 0 };
    assert_int_equal (pass ? ps_json_init_stream (&r, src_read, &s) : ps_json_init_mem (&r, big, k),
                      0);
    assert_int_equal (ps_json_next (&r), PS_JSON_STRING);
    assert_int_equal (r.len, wk);
    assert_memory_equal (r.str, want, wk);
    assert_int_equal (ps_json_next (&r), PS_JSON_EOF);
    /* The quotes, a column per character, two per escape. */
    assert_int_equal (r.col, 1 + n + n / 1000 + 1 + 1);
    ps_json_close (&r);
  }
  free (big);
  free (want);
}

static void
core_json_string_limit (void **state)
{
  const char *doc = "[\"abcd\", \"abcde\"]";
  char *t = run_limits (doc, strlen (doc), 0, 4);
  assert_string_equal (t, "1:1/1 [\n1:2/1 s:abcd\n1:10 error:string longer than 4 bytes\n");
  free (t);
  /* The limit counts decoded bytes. */
  doc = "[\"\\u00e9\\u00e9\", \"\\u00e9\\u00e9x\"]";
  t = run_limits (doc, strlen (doc), 0, 4);
  assert_string_equal (t, "1:1/1 [\n1:2/1 s:\\xc3\\xa9\\xc3\\xa9\n"
                          "1:18 error:string longer than 4 bytes\n");
  free (t);
  /* Keys too, and long ones past the fast path. */
  doc = "{\"abcdefghijklmnopqrstuvwxyz\": 1}";
  t = run_limits (doc, strlen (doc), 0, 20);
  assert_string_equal (t, "1:1/1 {\n1:2 error:string longer than 20 bytes\n");
  free (t);
  /* Numbers are held to the same limit. */
  doc = "[1.25, 1.125]";
  t = run_limits (doc, strlen (doc), 0, 4);
  assert_string_equal (t, "1:1/1 [\n1:2/1 n:1.25\n1:8 error:number longer than 4 bytes\n");
  free (t);
}

/* --- numbers ------------------------------------------------------------ */

static void
expect_number (const char *in, double num, bool is_int, int64_t i64)
{
  ps_json_reader r;
  ps_json_token t = read_scalar (in, &r);
  if (t != PS_JSON_NUMBER)
    fprintf (stderr, "%s: %s\n", in, r.error);
  assert_int_equal (t, PS_JSON_NUMBER);
  assert_true (memcmp (&r.num, &num, sizeof num) == 0);
  assert_int_equal (r.is_int, is_int);
  assert_true (r.i64 == i64);
  assert_int_equal (ps_json_next (&r), PS_JSON_EOF);
  ps_json_close (&r);
  free (run (in));
}

static void
core_json_numbers (void **state)
{
  expect_number ("0", 0.0, true, 0);
  expect_number ("-0", -0.0, true, 0);
  expect_number ("7", 7.0, true, 7);
  expect_number ("-12", -12.0, true, -12);
  expect_number ("1e308", 1e308, false, 0);
  expect_number ("1.7976931348623157e308", 1.7976931348623157e308, false, 0);
  expect_number ("9223372036854775807", 9223372036854775807.0, true, INT64_MAX);
  expect_number ("-9223372036854775808", -9223372036854775808.0, true, INT64_MIN);
  expect_number ("9223372036854775808", 9223372036854775808.0, false, 0);
  expect_number ("-9223372036854775809", -9223372036854775809.0, false, 0);
  expect_number ("18446744073709551615", 18446744073709551615.0, false, 0);
  expect_number ("123456789012345678901234567890", 123456789012345678901234567890.0, false, 0);
  expect_number ("9007199254740993", 9007199254740992.0, true, 9007199254740993);
  expect_number ("1.0", 1.0, false, 0);
  expect_number ("1.5", 1.5, false, 0);
  expect_number ("0.1", 0.1, false, 0);
  expect_number ("-2.25e-3", -2.25e-3, false, 0);
  expect_number ("1E+2", 100.0, false, 0);
  expect_number ("1e-2", 0.01, false, 0);
  expect_number ("0e0", 0.0, false, 0);
  expect_number ("-0.0", -0.0, false, 0);
  expect_number ("1e-400", 0.0, false, 0);
  expect_number ("4.9e-324", 4.9e-324, false, 0);
  expect_number ("2.2250738585072011e-308", 2.2250738585072011e-308, false, 0);
  expect_number ("123456789012345678e-5", 1234567890123.45678, false, 0);
  expect_number ("0.000000000000000000000000000001", 1e-30, false, 0);
  expect_number ("1e00000000000000000000000000000001", 10.0, false, 0);

  expect_error ("1e309", "number out of range", 1, 1);
  expect_error ("[0, -1e400]", "number out of range", 1, 5);
  expect_error ("1" "000000000000000000000000000000000000000000000000000000000000000000000000000"
                "0000000000000000000000000000000000000000000000000000000000000000000000000000"
                "0000000000000000000000000000000000000000000000000000000000000000000000000000"
                "0000000000000000000000000000000000000000000000000000000000000000000000000000"
                "00000000000000",
                "number out of range", 1, 1);
  expect_error ("01", "leading zeros are not allowed in numbers", 1, 2);
  expect_error ("-00", "leading zeros are not allowed in numbers", 1, 3);
  expect_error ("1.", "unexpected end of input in number", 1, 3);
  expect_error ("[1.]", "expected digit after '.' in number", 1, 4);
  expect_error ("[1.e5]", "expected digit after '.' in number", 1, 4);
  expect_error (".5", "number must not start with '.'", 1, 1);
  expect_error ("+1", "number must not start with '+'", 1, 1);
  expect_error ("-", "unexpected end of input in number", 1, 2);
  expect_error ("- 1", "expected digit after '-'", 1, 2);
  expect_error ("[-]", "expected digit after '-'", 1, 3);
  expect_error ("1e", "unexpected end of input in number", 1, 3);
  expect_error ("1e+", "unexpected end of input in number", 1, 4);
  expect_error ("[1e]", "expected digit in exponent", 1, 4);
  expect_error ("[1E-x]", "expected digit in exponent", 1, 5);
  expect_error ("1x", "unexpected character 'x' after number", 1, 2);
  expect_error ("1.5.3", "unexpected character '.' after number", 1, 4);
  expect_error ("[1-2]", "unexpected character '-' after number", 1, 3);
  expect_error ("0x10", "unexpected character 'x' after number", 1, 2);
  expect_error ("-Infinity", "expected digit after '-'", 1, 2);
}

static uint64_t
rnd (uint64_t *s)
{
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

/* Integers and the fast decimal path must give exactly what strtod gives. */
static void
core_json_numbers_random (void **state)
{
  uint64_t seed = 0x9e3779b97f4a7c15u;
  char lit[96];
  for (int iter = 0; iter < 20000; iter++) {
    int k = 0;
    if (rnd (&seed) & 1)
      lit[k++] = '-';
    int idigits = 1 + (int) (rnd (&seed) % 20);
    for (int i = 0; i < idigits; i++)
      lit[k++] = (char) ('0' + rnd (&seed) % 10);
    if (idigits > 1 && lit[k - idigits] == '0')
      lit[k - idigits] = '1';
    if (rnd (&seed) & 1) {
      lit[k++] = '.';
      int f = 1 + (int) (rnd (&seed) % 18);
      for (int i = 0; i < f; i++)
        lit[k++] = (char) ('0' + rnd (&seed) % 10);
    }
    if (rnd (&seed) & 1)
      k += snprintf (lit + k, sizeof lit - (size_t) k, "e%d", (int) (rnd (&seed) % 61) - 30);
    lit[k] = '\0';
    ps_json_reader r;
    assert_int_equal (read_scalar (lit, &r), PS_JSON_NUMBER);
    double want = strtod (lit, NULL);
    if (memcmp (&r.num, &want, sizeof want) != 0) {
      fprintf (stderr, "%s: got %.17g want %.17g\n", lit, r.num, want);
      fail ();
    }
    if (r.is_int && (double) r.i64 != want)
      fail ();
    ps_json_close (&r);
  }
}

/* --- nesting, top level, skipping --------------------------------------- */

static void
core_json_depth (void **state)
{
  size_t n = 100000;
  char *deep = malloc (n);
  assert_non_null (deep);
  memset (deep, '[', n);
  clock_t t0 = clock ();
  char *t = run_limits (deep, n, 0, 0);
  double secs = (double) (clock () - t0) / CLOCKS_PER_SEC;
  const char *last = strrchr (t, '\n');
  while (last > t && last[-1] != '\n')
    last--;
  assert_string_equal (last, "1:257 error:nesting deeper than 256 levels\n");
  /* It stops at the limit instead of reading on: 6 passes take far less. */
  assert_true (secs < 2.0);
  free (t);
  free (deep);

  /* Exactly the limit is fine. */
  char doc[600];
  memset (doc, '[', 256);
  memset (doc + 256, ']', 256);
  char *tk = tokens_of (doc, 512);
  assert_int_equal (strlen (tk), 256 * 4 + 3);
  free (tk);

  /* A lowered limit, with objects. */
  const char *obj = "{\"a\": [{\"b\": 1}]}";
  t = run_limits (obj, strlen (obj), 2, 0);
  assert_string_equal (t, "1:1/1 {\n1:2/1 k:a\n1:7/2 [\n1:8 error:nesting deeper than 2 levels\n");
  free (t);
}

static void
core_json_skip (void **state)
{
  const char *doc = "{\"a\": {\"x\": [1, {\"y\": [[], {}]}], \"z\": \"s\"}, \"b\": [[1], 2],"
                    " \"c\": 3, \"d\": {}}";
  ps_json_reader r;
  assert_int_equal (ps_json_init_mem (&r, doc, strlen (doc)), 0);
  assert_int_equal (ps_json_next (&r), PS_JSON_OBJECT_BEGIN);
  assert_int_equal (ps_json_next (&r), PS_JSON_KEY);
  assert_string_equal (r.str, "a");
  assert_int_equal (ps_json_skip_value (&r), PS_JSON_OBJECT_BEGIN);
  assert_int_equal (r.token, PS_JSON_OBJECT_END);
  assert_int_equal (r.depth, 1);
  assert_int_equal (ps_json_next (&r), PS_JSON_KEY);
  assert_string_equal (r.str, "b");
  /* skip_current on an opening bracket skips to its end... */
  assert_int_equal (ps_json_next (&r), PS_JSON_ARRAY_BEGIN);
  assert_int_equal (ps_json_skip_current (&r), 0);
  assert_int_equal (r.token, PS_JSON_ARRAY_END);
  assert_int_equal (r.line, 1);
  assert_int_equal (r.col, 58);
  /* ...and does nothing on a scalar. */
  assert_int_equal (ps_json_next (&r), PS_JSON_KEY);
  assert_int_equal (ps_json_skip_current (&r), 0);
  assert_int_equal (r.token, PS_JSON_KEY);
  assert_int_equal (ps_json_skip_value (&r), PS_JSON_NUMBER);
  assert_int_equal (r.num, 3);
  assert_int_equal (ps_json_next (&r), PS_JSON_KEY);
  assert_int_equal (ps_json_skip_value (&r), PS_JSON_OBJECT_BEGIN);
  assert_int_equal (r.depth, 1);
  assert_int_equal (ps_json_next (&r), PS_JSON_OBJECT_END);
  assert_int_equal (ps_json_next (&r), PS_JSON_EOF);
  ps_json_close (&r);

  /* An error inside a skipped value is reported. */
  doc = "{\"a\": [1, [2, tru]], \"b\": 1}";
  assert_int_equal (ps_json_init_mem (&r, doc, strlen (doc)), 0);
  ps_json_next (&r);
  ps_json_next (&r);
  assert_int_equal (ps_json_skip_value (&r), PS_JSON_ERROR);
  assert_string_equal (r.error, "invalid literal, expected 'true'");
  assert_int_equal (r.error_col, 18);
  assert_int_equal (ps_json_skip_current (&r), PS_JSON_ERROR);
  ps_json_close (&r);
}

static void
core_json_token_names (void **state)
{
  assert_string_equal (ps_json_token_name (PS_JSON_OBJECT_BEGIN), "object");
  assert_string_equal (ps_json_token_name (PS_JSON_ARRAY_BEGIN), "array");
  assert_string_equal (ps_json_token_name (PS_JSON_STRING), "string");
  assert_string_equal (ps_json_token_name (PS_JSON_NUMBER), "number");
  assert_string_equal (ps_json_token_name (PS_JSON_TRUE), "true");
  assert_string_equal (ps_json_token_name (PS_JSON_NULL), "null");
  assert_string_equal (ps_json_token_name (PS_JSON_EOF), "end of input");
}

/* --- streaming ---------------------------------------------------------- */

/* A graph-like document with every kind of token, multi-line. */
static char *
sample_graph (int nodes, size_t *len)
{
  sbuf b = { 0 };
  sb_printf (&b, "{\n  \"format\": \"planscope-graph\", \"version\": 1,"
                 " \"name\": \"caf\\u00e9 \xe2\x98\x95\",\n  \"nodes\": [\n");
  for (int i = 0; i < nodes; i++)
    sb_printf (&b,
               "    {\"name\": \"n%d\", \"op\": \"kernel\", \"function\": \"f\\t%d\","
               " \"grid\": [%d, 16],"
               " \"block\": 256, \"reads\": [\"b%d\", \"\xce\xb2%d\"], \"writes\": [\"b%d\"],"
               " \"fusible\": %s, \"cost_ns\": %d.%d, \"flops\": %de%d, \"x\": null,"
               " \"p\": {\"alpha\": -0.5e-3, \"id\": %lld}}%s\n",
               i, i % 7, 1 + i % 64, i, i, i + 1, i % 2 ? "true" : "false", 1000 + i, i % 10,
               i + 1, i % 12, (long long) i * 1000003LL * 1000003LL, i + 1 < nodes ? "," : "");
  sb_printf (&b, "  ]\n}\n");
  *len = b.len;
  return b.buf;
}

static void
core_json_streaming (void **state)
{
  size_t len;
  char *doc = sample_graph (300, &len);
  /* run_limits compares the memory transcript with chunks of 1, 2, 3, 7
   * and 4096 bytes: tokens, positions and depths. */
  char *t = run_limits (doc, len, 0, 0);
  assert_non_null (strstr (t, "3:3/1 k:nodes\n"));
  assert_non_null (strstr (t, "s:f\\x093\n"));
  assert_non_null (strstr (t, "eof\n"));
  assert_null (strstr (t, "error"));
  size_t lines = 0;
  for (const char *c = t; *c; c++)
    lines += *c == '\n';
  assert_int_equal (lines, 9 + 300 * 39 + 3);
  free (t);
  /* Cut anywhere, every chunking reports the same error. */
  for (size_t cut = 1; cut < 400; cut += 13)
    free (run_limits (doc, cut, 0, 0));
  free (doc);
}

/* --- random mutations ----------------------------------------------------- */

/* The reader must finish every input, and an error must point inside it
 * (a line it has, a column at most one past that line's end). */
static void
check_within (const char *in, size_t len)
{
  ps_json_reader r;
  char *copy = malloc (len ? len : 1);
  assert_non_null (copy);
  memcpy (copy, in, len);
  assert_int_equal (ps_json_init_mem (&r, copy, len), 0);
  ps_json_token t;
  size_t count = 0;
  while ((t = ps_json_next (&r)) > PS_JSON_EOF)
    assert_true (++count <= len);
  if (t == PS_JSON_ERROR) {
    assert_true (r.error[0] != '\0');
    size_t line = 1, line_len = 0;
    for (size_t i = 0; i < len; i++) {
      if (in[i] == '\n') {
        if (line == r.error_line)
          break;
        line++;
        line_len = 0;
      } else if (line == r.error_line) {
        line_len++;
      }
    }
    if (r.error_line < 1 || r.error_line > line || r.error_col < 1 ||
        r.error_col > line_len + 1) {
      fprintf (stderr, "error %u:%u (%s) outside the input\n", r.error_line, r.error_col, r.error);
      fail ();
    }
  }
  ps_json_close (&r);
  free (copy);
}

static void
core_json_fuzz (void **state)
{
  size_t base_len;
  char *base = sample_graph (3, &base_len);
  static const char *const extra[] = {
    "[1, -0.5e+7, true, false, null, \"\\ud83d\\ude00\", {\"k\": []}]",
    "{\"s\": \"\xc3\xa9\xe4\xb8\xad\xf0\x9f\x98\x80\\u00e9\\n\", \"n\": -12345678901234567890}",
    "\"abcdefghijklmnopqrstuvwxyz\\\"\"",
  };
  static const char interesting[] = "{}[],:\"\\-+.eE0123456789tfnu \n\t\x80\xbf\xc3\xed\xf0\xff";
  uint64_t seed = 0x243f6a8885a308d3u;
  char *buf = malloc (base_len * 2 + 64);
  assert_non_null (buf);
  for (int iter = 0; iter < 4000; iter++) {
    const char *src_doc = iter % 4 == 0 ? extra[(iter / 4) % 3] : base;
    size_t len = src_doc == base ? base_len : strlen (src_doc);
    memcpy (buf, src_doc, len);
    int edits = 1 + (int) (rnd (&seed) % 4);
    for (int e = 0; e < edits && len > 0; e++) {
      size_t at = rnd (&seed) % len;
      uint64_t x = rnd (&seed);
      size_t pick = (size_t) ((x >> 16) % (sizeof interesting - 1));
      unsigned char b = (unsigned char) ((x >> 8) & 1 ? interesting[pick] : (char) (x >> 24));
      switch (x % 5) {
      case 0: buf[at] = (char) b; break;
      case 1: buf[at] ^= (char) (1u << ((x >> 32) % 8)); break;
      case 2:
        memmove (buf + at + 1, buf + at, len - at);
        buf[at] = (char) b;
        len++;
        break;
      case 3:
        memmove (buf + at, buf + at + 1, len - at - 1);
        len--;
        break;
      default: len = at; break;
      }
    }
    check_within (buf, len);
    /* Every tenth one also through all the chunk sizes. */
    if (iter % 10 == 0)
      free (run_limits (buf, len, 0, 0));
  }
  free (buf);
  free (base);
}

/* --- the writer ----------------------------------------------------------- */

static char *
write_string (const char *s, size_t *len)
{
  char *out = NULL;
  FILE *f = open_memstream (&out, len);
  assert_non_null (f);
  ps_jsonw_string (f, s);
  fclose (f);
  return out;
}

static char *
write_number (double v)
{
  char *out = NULL;
  size_t len;
  FILE *f = open_memstream (&out, &len);
  assert_non_null (f);
  ps_jsonw_number (f, v);
  fclose (f);
  return out;
}

static void
core_jsonw_roundtrip (void **state)
{
  /* Every control character, quotes, backslashes, DEL and UTF-8 of every
   * length: written, then read back equal. */
  char s[256];
  size_t k = 0;
  for (int c = 1; c < 0x20; c++)
    s[k++] = (char) c;
  const char *rest = "\"\\/\x7f plain \xc3\xa9\xe4\xb8\xad\xf0\x9f\x98\x80\xf4\x8f\xbf\xbf end";
  memcpy (s + k, rest, strlen (rest) + 1);
  size_t len;
  char *w = write_string (s, &len);
  assert_string_equal (w, "\"\\u0001\\u0002\\u0003\\u0004\\u0005\\u0006\\u0007\\b\\t\\n"
                          "\\u000b\\f\\r\\u000e\\u000f\\u0010\\u0011\\u0012\\u0013"
                          "\\u0014\\u0015\\u0016\\u0017"
                          "\\u0018\\u0019\\u001a\\u001b\\u001c\\u001d\\u001e\\u001f"
                          "\\\"\\\\/\x7f plain "
                          "\xc3\xa9\xe4\xb8\xad\xf0\x9f\x98\x80\xf4\x8f\xbf\xbf end\"");
  ps_json_reader r;
  assert_int_equal (ps_json_init_mem (&r, w, len), 0);
  assert_int_equal (ps_json_next (&r), PS_JSON_STRING);
  assert_int_equal (r.len, strlen (s));
  assert_string_equal (r.str, s);
  assert_int_equal (ps_json_next (&r), PS_JSON_EOF);
  ps_json_close (&r);
  free (w);

  /* Bytes that are not valid UTF-8 become U+FFFD, so the output stays
   * valid JSON. */
  w = write_string ("a\xff" "b\xc3" "c\xed\xa0\x80" "d\xf0\x9f\x98", &len);
  assert_string_equal (w, "\"a\\ufffdb\\ufffdc\\ufffd\\ufffd\\ufffdd\\ufffd\\ufffd\\ufffd\"");
  free (run (w));
  free (w);
  w = write_string (NULL, &len);
  assert_string_equal (w, "null");
  free (w);
}

static void
expect_written (double v, const char *want)
{
  char *w = write_number (v);
  assert_string_equal (w, want);
  free (w);
}

static void
core_jsonw_numbers (void **state)
{
  expect_written (0.0, "0");
  expect_written (-0.0, "0");
  expect_written (42.0, "42");
  expect_written (-7.0, "-7");
  expect_written (9007199254740991.0, "9007199254740991");
  expect_written (0.1, "0.1");
  expect_written (1234.5, "1234.5");
  expect_written (1e300, "1e+300");
  expect_written (1.0 / 3.0, "0.3333333333333333");
  expect_written (0.1 + 0.2, "0.30000000000000004");
  expect_written (INFINITY, "0");
  expect_written (NAN, "0");

  /* Round trip of awkward values, through the reader. */
  double vals[] = { 0.1, 1.0 / 3.0, 2.0 / 3.0, 1e-320, 4.9e-324, 1.7976931348623157e308,
                    -2.2250738585072014e-308, 9007199254740992.0, 9007199254740994.0,
                    18446744073709551616.0, 123456.789, 5e-7, -1e22, 3.0e23 };
  uint64_t seed = 12345;
  for (int i = 0; i < 2000 + (int) (sizeof vals / sizeof vals[0]); i++) {
    double v;
    if (i < (int) (sizeof vals / sizeof vals[0])) {
      v = vals[i];
    } else {
      uint64_t bits = rnd (&seed);
      memcpy (&v, &bits, sizeof v);
      if (!isfinite (v))
        continue;
    }
    char *w = write_number (v);
    ps_json_reader r;
    assert_int_equal (ps_json_init_mem (&r, w, strlen (w)), 0);
    assert_int_equal (ps_json_next (&r), PS_JSON_NUMBER);
    if (r.num != v) {
      fprintf (stderr, "%.17g written as %s read back as %.17g\n", v, w, r.num);
      fail ();
    }
    ps_json_close (&r);
    free (w);
  }
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (core_json_tokens),
    cmocka_unit_test (core_json_positions),
    cmocka_unit_test (core_json_errors),
    cmocka_unit_test (core_json_read_error),
    cmocka_unit_test (core_json_escapes),
    cmocka_unit_test (core_json_surrogates),
    cmocka_unit_test (core_json_utf8),
    cmocka_unit_test (core_json_long_strings),
    cmocka_unit_test (core_json_string_limit),
    cmocka_unit_test (core_json_numbers),
    cmocka_unit_test (core_json_numbers_random),
    cmocka_unit_test (core_json_depth),
    cmocka_unit_test (core_json_skip),
    cmocka_unit_test (core_json_token_names),
    cmocka_unit_test (core_json_streaming),
    cmocka_unit_test (core_json_fuzz),
    cmocka_unit_test (core_jsonw_roundtrip),
    cmocka_unit_test (core_jsonw_numbers),
  };
  return cmocka_run_group_tests_name ("/core/json", tests, NULL, NULL);
}
