/* ps-trace-export.h: a timeline as a Chrome trace (Trace Event Format
 * JSON), which Perfetto and chrome://tracing open.
 *
 * Each stream is one thread (tid = the stream id, named "stream N") whose
 * spans are complete ("X") events; the stalls of stream N sit on a thread
 * of their own right below it ("stream N waits"), so that no two slices on
 * a thread overlap.  Every event record -> wait pair is a flow arrow ("s"
 * and "f" events) from the recorded work to the stall, or to the first work
 * after the wait when it did not stall.  Spans on the critical path carry
 * "critical": 1 in their args.  Timestamps are microseconds with nanosecond
 * digits; spans keep their stream id and device in args, so that
 * ps-trace-import.h reads the file back. */
#ifndef PS_TRACE_EXPORT_H
#define PS_TRACE_EXPORT_H

#include <stdio.h>

#include "ps-diagnose.h"
#include "ps-timeline.h"

/* dg may be NULL (then nothing is marked critical). */
int ps_trace_write (const ps_timeline *tl, const ps_diagnosis *dg, FILE *out);
/* The same into the file at path, all or nothing (ps_file_write_atomic of
 * ps-file.h); on failure errbuf says why. */
int ps_trace_write_file (const char *path, const ps_timeline *tl, const ps_diagnosis *dg,
                         char *errbuf, size_t errlen);

#endif
