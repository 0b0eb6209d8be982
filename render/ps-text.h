/* ps-text.h: the fonts of planscope's drawings and how wide text is in
 * them, measured once with Pango for every back end (ps-canvas.h) and for
 * the scene's box sizes (ps-scene.h). */
#ifndef PS_TEXT_H
#define PS_TEXT_H

#include <stdbool.h>
#include <stddef.h>

typedef struct ps_font {
  double size; /* points */
  bool bold;
  bool mono;
} ps_font;

/* Copies text into out (at most cap bytes with the NUL), replacing bytes
 * that are not UTF-8 and control characters with U+FFFD, so that Pango and
 * XML accept it (line breaks become spaces).  Returns the length written. */
size_t ps_utf8_sanitize (const char *text, char *out, size_t cap);

/* Width of a text line in points. */
double ps_text_width (const char *text, const ps_font *f);
/* Copies into buf the longest prefix of text that fits max_width, with
 * "…" when cut (whole text when it fits).  Returns buf. */
const char *ps_text_fit (const char *text, const ps_font *f, double max_width, char *buf,
                         size_t cap);

#endif
