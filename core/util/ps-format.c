/* ps-format.c: durations, byte counts and counts for people (see
 * ps-format.h). */
#include "ps-format.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "ps-outbuf.h"
#include "ps-status.h"

#define MINUS "\xe2\x88\x92" /* U+2212 */

/* Three significant digits of v (>= 1, < 1000), then the unit. */
static void
three_digits (double v, const char *unit, char *buf, size_t cap)
{
  /* Round first, so that 9.996 is "10.0" and 99.96 is "100", not "10.00"
   * or "100.0". */
  int decimals = v < 9.995 ? 2 : v < 99.95 ? 1 : 0;
  snprintf (buf, cap, "%.*f %s", decimals, v, unit);
}

static void
duration (double ns, char *buf, size_t cap)
{
  if (ns < 999.5)
    snprintf (buf, cap, "%.0f ns", ns);
  else if (ns < 999.5e3)
    three_digits (ns / 1e3, "\xc2\xb5s", buf, cap);
  else if (ns < 999.5e6)
    three_digits (ns / 1e6, "ms", buf, cap);
  else if (ns < 1e12)
    three_digits (ns / 1e9, "s", buf, cap);
  else
    snprintf (buf, cap, "%.0f s", ns / 1e9);
}

static const char *
signed_value (double v, bool plus, void (*fmt) (double, char *, size_t), char *buf, size_t cap)
{
  if (cap == 0)
    return buf;
  if (isnan (v)) {
    snprintf (buf, cap, "unknown");
    return buf;
  }
  const char *sign = v < 0 ? MINUS : plus ? "+" : "";
  size_t n = strlen (sign);
  if (n >= cap) {
    buf[0] = '\0';
    return buf;
  }
  memcpy (buf, sign, n);
  double a = fabs (v);
  if (!isfinite (a))
    snprintf (buf + n, cap - n, "infinite");
  else
    fmt (a, buf + n, cap - n);
  return buf;
}

const char *
ps_format_duration (double ns, char *buf, size_t cap)
{
  return signed_value (ns, false, duration, buf, cap);
}

const char *
ps_format_duration_delta (double ns, char *buf, size_t cap)
{
  return signed_value (ns, true, duration, buf, cap);
}

static void
bytes_text (double bytes, char *buf, size_t cap)
{
  static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
  int u = 0;
  while (bytes >= 1023.5 && u < 5) {
    bytes /= 1024;
    u++;
  }
  if (u == 0 || bytes == floor (bytes))
    snprintf (buf, cap, "%.0f %s", bytes, units[u]);
  else
    three_digits (bytes, units[u], buf, cap);
}

const char *
ps_format_bytes (double bytes, char *buf, size_t cap)
{
  return signed_value (bytes, false, bytes_text, buf, cap);
}

const char *
ps_format_bytes_delta (double bytes, char *buf, size_t cap)
{
  return signed_value (bytes, true, bytes_text, buf, cap);
}

const char *
ps_format_count (uint64_t n, char *buf, size_t cap)
{
  char digits[24];
  int len = snprintf (digits, sizeof digits, "%llu", (unsigned long long) n);
  size_t o = 0;
  for (int i = 0; i < len && o + 1 < cap; i++) {
    if (i > 0 && (len - i) % 3 == 0) {
      if (o + 2 >= cap)
        break;
      buf[o++] = ',';
    }
    buf[o++] = digits[i];
  }
  if (cap)
    buf[o] = '\0';
  return buf;
}

size_t
ps_format_width (const char *s)
{
  size_t n = 0;
  for (const unsigned char *p = (const unsigned char *) s; *p; p++)
    n += (*p & 0xc0) != 0x80;
  return n;
}

void
ps_format_column_buf (ps_outbuf *out, const char *s, int width)
{
  size_t w = ps_format_width (s);
  size_t want = (size_t) (width < 0 ? -(long) width : width);
  size_t pad = w < want ? want - w : 0;
  if (width > 0)
    ps_outbuf_spaces (out, pad);
  ps_outbuf_str (out, s);
  if (width < 0)
    ps_outbuf_spaces (out, pad);
}

int
ps_format_column (FILE *out, const char *s, int width)
{
  ps_outbuf o;
  ps_outbuf_init (&o, out);
  ps_format_column_buf (&o, s, width);
  ps_outbuf_flush (&o);
  return ferror (out) ? PS_EIO : 0;
}

const char *
ps_format_duration_marked (double ns, bool estimated, char *buf, size_t cap)
{
  ps_format_duration (ns, buf, cap);
  if (estimated) {
    size_t n = strlen (buf);
    snprintf (buf + n, cap > n ? cap - n : 0, " (estimated)");
  }
  return buf;
}
