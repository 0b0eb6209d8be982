/* ps-jsonw.c: small helpers for writing JSON text.
 *
 * Strings: '"', '\\' and control characters are escaped; valid UTF-8 passes
 * through unchanged; a byte that does not start a valid UTF-8 sequence is
 * written as \ufffd, so the output is always valid JSON that ps-json reads
 * back.  Numbers: integral values below 2^53 in magnitude are written as
 * integers; others with the fewest of 15, 16 or 17 significant digits that
 * read back to the same double, always with '.' as the decimal point
 * whatever the locale.  Non-finite values have no JSON form: callers must
 * not pass them, and 0 is written if they do. */
#include "ps-jsonw.h"

#include <locale.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Length of the valid UTF-8 sequence at p (p[0] >= 0x80), or 0. */
static size_t
utf8_valid (const unsigned char *p)
{
  unsigned c = p[0], lo = 0x80, hi = 0xbf;
  size_t n;
  if (c < 0xc2 || c > 0xf4)
    return 0;
  if (c < 0xe0) {
    n = 2;
  } else if (c < 0xf0) {
    n = 3;
    lo = c == 0xe0 ? 0xa0 : lo;
    hi = c == 0xed ? 0x9f : hi;
  } else {
    n = 4;
    lo = c == 0xf0 ? 0x90 : lo;
    hi = c == 0xf4 ? 0x8f : hi;
  }
  if (p[1] < lo || p[1] > hi)
    return 0;
  /* The string is NUL-terminated, so a short sequence fails here before
   * anything past the terminator is read. */
  for (size_t i = 2; i < n; i++)
    if ((p[i] & 0xc0) != 0x80)
      return 0;
  return n;
}

void
ps_jsonw_string (FILE *out, const char *s)
{
  if (!s) {
    fputs ("null", out);
    return;
  }
  const unsigned char *p = (const unsigned char *) s, *run = p;
  putc ('"', out);
  for (;;) {
    unsigned c = *p;
    if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) {
      p++;
      continue;
    }
    if (c >= 0x80) {
      size_t n = utf8_valid (p);
      if (n > 0) {
        p += n;
        continue;
      }
    }
    fwrite (run, 1, (size_t) (p - run), out);
    if (c == '\0')
      break;
    switch (c) {
    case '"': fputs ("\\\"", out); break;
    case '\\': fputs ("\\\\", out); break;
    case '\b': fputs ("\\b", out); break;
    case '\f': fputs ("\\f", out); break;
    case '\n': fputs ("\\n", out); break;
    case '\r': fputs ("\\r", out); break;
    case '\t': fputs ("\\t", out); break;
    default:
      if (c < 0x20)
        fprintf (out, "\\u%04x", c);
      else
        fputs ("\\ufffd", out);
      break;
    }
    run = ++p;
  }
  putc ('"', out);
}

void
ps_jsonw_number (FILE *out, double v)
{
  if (!isfinite (v)) {
    putc ('0', out);
    return;
  }
  if (v == trunc (v) && fabs (v) < 9007199254740992.0) {
    fprintf (out, "%lld", (long long) v);
    return;
  }
  char buf[48];
  for (int prec = 15; prec <= 17; prec++) {
    snprintf (buf, sizeof buf, "%.*g", prec, v);
    if (prec == 17 || strtod (buf, NULL) == v)
      break;
  }
  /* printf writes the decimal point of LC_NUMERIC, which in a GTK program
   * is the user's (a German one writes "0,5"); JSON wants '.'. */
  const char *dp = localeconv ()->decimal_point;
  char *at = dp && *dp && strcmp (dp, ".") != 0 ? strstr (buf, dp) : NULL;
  if (at) {
    fwrite (buf, 1, (size_t) (at - buf), out);
    putc ('.', out);
    fputs (at + strlen (dp), out);
  } else {
    fputs (buf, out);
  }
}
