/* ps-file-private.h: how ps-file.c tells files apart, and how
 * ps-file-write.c can be made to name its temporary files, for tests.
 *
 * A file is the same file when its device, inode and birth time (else its
 * change time, on file systems that keep no birth time) agree: an inode
 * freed by a deleted input and given to a new file is a new file, since
 * the new one was born later.  core/ only. */
#ifndef PS_FILE_PRIVATE_H
#define PS_FILE_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct ps__file_id {
  uint64_t dev, ino;
  int64_t birth_s;
  uint32_t birth_ns;
  bool regular;
} ps__file_id;

/* The identity of path, relative to dirfd (AT_FDCWD: the current folder),
 * as statx finds it with `flags` (AT_EMPTY_PATH with "": dirfd itself).
 * False when the file cannot be examined. */
bool ps__file_id_of (int dirfd, const char *path, int flags, ps__file_id *out);
bool ps__file_id_same (const ps__file_id *a, const ps__file_id *b);

/* When true, ps_file_write_atomic names its temporary file from the start,
 * as it does on file systems without unnamed files (O_TMPFILE), so that
 * tests can take that way on any file system.  False unless a test sets
 * it. */
extern bool ps__file_named_temporaries;

/* Inputs of at least this many bytes are mapped (ps_file_input_map):
 * 8 MiB unless a test lowers it. */
extern size_t ps__file_map_min;

#endif
