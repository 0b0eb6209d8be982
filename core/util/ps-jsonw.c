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

#include "ps-outbuf.h"

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
ps_jsonw_string_buf (ps_outbuf *out, const char *s)
{
  if (!s) {
    ps_outbuf_str (out, "null");
    return;
  }
  const unsigned char *p = (const unsigned char *) s, *run = p;
  ps_outbuf_char (out, '"');
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
    ps_outbuf_mem (out, (const char *) run, (size_t) (p - run));
    if (c == '\0')
      break;
    switch (c) {
    case '"': ps_outbuf_str (out, "\\\""); break;
    case '\\': ps_outbuf_str (out, "\\\\"); break;
    case '\b': ps_outbuf_str (out, "\\b"); break;
    case '\f': ps_outbuf_str (out, "\\f"); break;
    case '\n': ps_outbuf_str (out, "\\n"); break;
    case '\r': ps_outbuf_str (out, "\\r"); break;
    case '\t': ps_outbuf_str (out, "\\t"); break;
    default:
      if (c < 0x20)
        ps_outbuf_printf (out, "\\u%04x", c);
      else
        ps_outbuf_str (out, "\\ufffd");
      break;
    }
    run = ++p;
  }
  ps_outbuf_char (out, '"');
}

void
ps_jsonw_number_buf (ps_outbuf *out, double v)
{
  if (!isfinite (v)) {
    ps_outbuf_char (out, '0');
    return;
  }
  if (v == trunc (v) && fabs (v) < 9007199254740992.0) {
    if (v < 0)
      ps_outbuf_char (out, '-');
    ps_outbuf_uint_left (out, (uint64_t) fabs (v), 0);
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
    ps_outbuf_mem (out, buf, (size_t) (at - buf));
    ps_outbuf_char (out, '.');
    ps_outbuf_str (out, at + strlen (dp));
  } else {
    ps_outbuf_str (out, buf);
  }
}

/* The FILE forms: the same text, handed over whole. */
void
ps_jsonw_string (FILE *out, const char *s)
{
  ps_outbuf_put (out, ps_jsonw_string_buf, s);
}

void
ps_jsonw_number (FILE *out, double v)
{
  ps_outbuf o;
  ps_outbuf_init (&o, out);
  ps_jsonw_number_buf (&o, v);
  ps_outbuf_flush (&o);
}
