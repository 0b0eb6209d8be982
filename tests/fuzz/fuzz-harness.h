/* fuzz-harness.h: the one-input entry points of the fuzz harnesses.
 *
 * Each tests/fuzz/fuzz-*.c defines one of these and, unless
 * PS_FUZZ_NO_MAIN is defined, the LLVMFuzzerTestOneInput that calls it.
 * tests/test-regressions.c is built from the same files with
 * PS_FUZZ_NO_MAIN, so every saved crash input goes through exactly the
 * code that found it, in the normal (ASan+UBSan) test build. */
#ifndef PS_FUZZ_HARNESS_H
#define PS_FUZZ_HARNESS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Each returns 0; a bug aborts (sanitizer report or broken invariant). */
int ps_fuzz_graph_json (const uint8_t *data, size_t size);
int ps_fuzz_dot (const uint8_t *data, size_t size);
/* data[0] % 3 picks the way in: 0 ps_trace_import_mem on the rest, 1 the
 * rest written to a file as is (plain or gzip: ps_trace_import_file tells
 * them apart), 2 the rest gzip-compressed into a file. */
int ps_fuzz_trace (const uint8_t *data, size_t size);
int ps_fuzz_pipeline (const uint8_t *data, size_t size);
int ps_fuzz_device (const uint8_t *data, size_t size);

/* Shared by the harnesses: a stream that discards what is written. */
FILE *ps_fuzz_devnull (void);

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

#endif
