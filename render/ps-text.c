/* ps-text.c: measuring text with Pango (ps-text.h).
 *
 * One Pango context at 72 dpi with unhinted metrics measures every label,
 * so that a width in points is the same for the SVG writer, for a PNG at
 * any scale, and for the app.  Pango contexts are not thread-safe: a
 * mutex guards the shared one. */
#include "ps-text.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "ps-text-private.h"

static pthread_mutex_t measure_lock = PTHREAD_MUTEX_INITIALIZER;
static PangoContext *measure_ctx;
static PangoLayout *measure_layout;

void
ps_text_setup_context (PangoContext *ctx)
{
  cairo_font_options_t *fo = cairo_font_options_create ();
  cairo_font_options_set_hint_metrics (fo, CAIRO_HINT_METRICS_OFF);
  cairo_font_options_set_hint_style (fo, CAIRO_HINT_STYLE_NONE);
  pango_cairo_context_set_font_options (ctx, fo);
  cairo_font_options_destroy (fo);
  pango_cairo_context_set_resolution (ctx, 72.0);
}

PangoFontDescription *
ps_text_font_description (const ps_font *f)
{
  PangoFontDescription *d = pango_font_description_new ();
  pango_font_description_set_family (d, f->mono ? "DejaVu Sans Mono,monospace"
                                                : "DejaVu Sans,sans");
  pango_font_description_set_absolute_size (d, f->size * PANGO_SCALE);
  pango_font_description_set_weight (d, f->bold ? PANGO_WEIGHT_BOLD : PANGO_WEIGHT_NORMAL);
  return d;
}

/* Sets up the shared layout for f; call with the lock held. */
static PangoLayout *
measure_layout_for (const ps_font *f)
{
  if (!measure_ctx) {
    PangoFontMap *fm = pango_cairo_font_map_new ();
    measure_ctx = pango_font_map_create_context (fm);
    g_object_unref (fm);
    ps_text_setup_context (measure_ctx);
    measure_layout = pango_layout_new (measure_ctx);
  }
  PangoFontDescription *d = ps_text_font_description (f);
  pango_layout_set_font_description (measure_layout, d);
  pango_font_description_free (d);
  return measure_layout;
}

size_t
ps_utf8_sanitize (const char *in, char *out, size_t cap)
{
  size_t n = 0;
  const unsigned char *p = (const unsigned char *) in;
  if (cap == 0)
    return 0;
  while (*p && n + 4 < cap) {
    unsigned c = *p;
    int k = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3
            : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    bool ok = k > 0;
    for (int i = 1; i < k && ok; i++)
      ok = (p[i] & 0xc0) == 0x80;
    if (ok && k == 3) {
      unsigned cp = ((c & 0x0fu) << 12) | ((p[1] & 0x3fu) << 6) | (p[2] & 0x3fu);
      ok = cp >= 0x800 && (cp < 0xd800 || cp > 0xdfff);
    } else if (ok && k == 4) {
      unsigned cp = ((c & 0x07u) << 18) | ((p[1] & 0x3fu) << 12);
      ok = cp >= 0x10000 && cp <= 0x10ffff;
    }
    if (c == '\n' || c == '\r') {
      out[n++] = ' ';
      p++;
      continue;
    }
    if (ok && c < 0x20 && c != '\t')
      ok = false;
    if (ok) {
      memcpy (out + n, p, (size_t) k);
      n += (size_t) k;
      p += k;
    } else {
      memcpy (out + n, "\xef\xbf\xbd", 3);
      n += 3;
      p++;
    }
  }
  out[n] = '\0';
  return n;
}

double
ps_text_width (const char *text, const ps_font *f)
{
  if (!text || !*text)
    return 0;
  char clean[1024];
  ps_utf8_sanitize (text, clean, sizeof clean);
  pthread_mutex_lock (&measure_lock);
  PangoLayout *l = measure_layout_for (f);
  pango_layout_set_text (l, clean, -1);
  PangoRectangle logical;
  pango_layout_get_extents (l, NULL, &logical);
  pthread_mutex_unlock (&measure_lock);
  return (double) logical.width / PANGO_SCALE;
}

/* Length of the longest prefix of s (at most n bytes) that is valid
 * UTF-8 and ends on a character boundary. */
static size_t
utf8_prefix (const char *s, size_t n)
{
  while (n > 0 && ((unsigned char) s[n] & 0xc0) == 0x80)
    n--;
  return n;
}

const char *
ps_text_fit (const char *raw, const ps_font *f, double max_width, char *buf, size_t cap)
{
  if (cap == 0)
    return "";
  char text[1024];
  size_t len = ps_utf8_sanitize (raw, text, sizeof text);
  if (max_width <= 0 || ps_text_width (text, f) <= max_width) {
    size_t n = len < cap - 1 ? len : utf8_prefix (text, cap - 1);
    memcpy (buf, text, n);
    buf[n] = '\0';
    return buf;
  }
  /* Binary search for the longest prefix that fits with "…" (3 bytes). */
  size_t lo = 0, hi = len < cap - 4 ? len : cap - 4;
  while (lo < hi) {
    size_t mid = utf8_prefix (text, (lo + hi + 1) / 2);
    if (mid <= lo) {
      /* No boundary between lo and hi: try the next one up. */
      size_t up = (lo + hi + 1) / 2;
      while (up < hi && ((unsigned char) text[up] & 0xc0) == 0x80)
        up++;
      mid = up;
      if (mid <= lo)
        break;
    }
    memcpy (buf, text, mid);
    memcpy (buf + mid, "\xe2\x80\xa6", 4);
    if (ps_text_width (buf, f) <= max_width)
      lo = mid;
    else
      hi = mid - 1;
  }
  lo = utf8_prefix (text, lo);
  memcpy (buf, text, lo);
  memcpy (buf + lo, "\xe2\x80\xa6", 4);
  return buf;
}
