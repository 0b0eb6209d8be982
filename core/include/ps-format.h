/* ps-format.h: how planscope writes a duration, a byte count and a count
 * for people.  The CLI's text output, every export and every view of the
 * app call these, so that a figure reads the same wherever it appears.
 *
 * Durations: under 1 µs in whole nanoseconds ("850 ns"); otherwise in µs,
 * ms or s with three significant digits ("4.48 µs", "17.4 µs", "346 µs",
 * "2.25 ms"), whole seconds from 1000 s.  A negative duration (a change)
 * gets a minus sign, U+2212; NaN is "unknown".  Bytes: whole bytes under
 * 1 KiB ("512 B"), then KiB, MiB, GiB, TiB, PiB with three significant
 * digits, or none when the value is whole ("24 MiB", "80.1 MiB",
 * "1.50 GiB").  Counts: digits grouped by thousands with commas
 * ("1,048,576").  Every function writes at most cap bytes (NUL included)
 * and returns buf. */
#ifndef PS_FORMAT_H
#define PS_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Enough room for any of them. */
#define PS_FORMAT_MAX 40

const char *ps_format_duration (double ns, char *buf, size_t cap);
/* The same with " (estimated)" after it when estimated: a duration the
 * model guessed from a kernel's launch alone. */
const char *ps_format_duration_marked (double ns, bool estimated, char *buf, size_t cap);
/* The same with a sign always: "+1.20 µs", "−3.40 µs", "+0 ns". */
const char *ps_format_duration_delta (double ns, char *buf, size_t cap);
const char *ps_format_bytes (double bytes, char *buf, size_t cap);
const char *ps_format_bytes_delta (double bytes, char *buf, size_t cap);
const char *ps_format_count (uint64_t n, char *buf, size_t cap);

/* The characters (code points) of a UTF-8 string: its width in a table
 * of text ("µs" is two characters in three bytes). */
size_t ps_format_width (const char *s);
/* Writes s padded with spaces to `width` characters: right-aligned when
 * width > 0, left-aligned when width < 0.  Returns 0 or PS_EIO. */
int ps_format_column (FILE *out, const char *s, int width);
/* The same into a ps_outbuf (util/ps-outbuf.h). */
struct ps_outbuf;
void ps_format_column_buf (struct ps_outbuf *out, const char *s, int width);

#endif
