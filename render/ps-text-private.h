/* ps-text-private.h: what ps-canvas.c lays text out with, so that drawn
 * text has the width ps-text.c measured: the Pango font of a ps_font, and
 * the context settings (72 dpi, no hinting) of the measurements.  Only for
 * render/'s drawing code, which links Pango. */
#ifndef PS_TEXT_PRIVATE_H
#define PS_TEXT_PRIVATE_H

#include <pango/pangocairo.h>

#include "ps-text.h"

PangoFontDescription *ps_text_font_description (const ps_font *f);
void ps_text_setup_context (PangoContext *ctx);

#endif
