/* ps-file.c: whole-file reads with a size limit, and all-or-nothing writes
 * (temporary file in the same folder, flushed, synced, renamed). */
/* realpath is X/Open, beyond the POSIX level the build asks for. */
#define _XOPEN_SOURCE 700

#include "ps-file.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- inputs ------------------------------------------------------------- */

#define N_INPUTS 1024

typedef struct {
  dev_t dev;
  ino_t ino;
} file_id;

static pthread_mutex_t inputs_lock = PTHREAD_MUTEX_INITIALIZER;
static file_id inputs[N_INPUTS];
static size_t n_inputs, next_input;

static bool
is_noted (const struct stat *st)
{
  for (size_t i = 0; i < n_inputs; i++)
    if (inputs[i].dev == st->st_dev && inputs[i].ino == st->st_ino)
      return true;
  return false;
}

/* Only regular files are noted: a pipe or a terminal is no file to keep. */
static void
note (const struct stat *st)
{
  if (!S_ISREG (st->st_mode))
    return;
  pthread_mutex_lock (&inputs_lock);
  if (!is_noted (st)) {
    inputs[next_input] = (file_id){ st->st_dev, st->st_ino };
    next_input = (next_input + 1) % N_INPUTS;
    if (n_inputs < N_INPUTS)
      n_inputs++;
  }
  pthread_mutex_unlock (&inputs_lock);
}

bool
ps_file_is_input (const char *path)
{
  struct stat st;
  if (stat (path, &st) != 0 || !S_ISREG (st.st_mode))
    return false;
  pthread_mutex_lock (&inputs_lock);
  bool found = is_noted (&st);
  pthread_mutex_unlock (&inputs_lock);
  return found;
}

/* ---- reading ------------------------------------------------------------ */

int
ps_file_open_input (const char *path, size_t max_bytes, struct stat *st, ps_diag *diag)
{
  bool std_in = strcmp (path, "-") == 0;
  if (std_in)
    path = "standard input";
  int fd = std_in ? dup (STDIN_FILENO) : open (path, O_RDONLY);
  if (fd < 0) {
    int e = errno;
    ps_diag_error (diag, 0, 0, "cannot open %s: %s", path, strerror (e));
    return e == ENOMEM ? PS_ENOMEM : PS_EIO;
  }
  int ret = 0;
  if (fstat (fd, st) < 0) {
    ps_diag_error (diag, 0, 0, "cannot read %s: %s", path, strerror (errno));
    ret = PS_EIO;
  } else if (S_ISDIR (st->st_mode)) {
    ps_diag_error (diag, 0, 0, "cannot read %s: it is a folder", path);
    ret = PS_EIO;
  } else if (S_ISREG (st->st_mode) && (uint64_t) st->st_size > max_bytes) {
    ps_diag_error (diag, 0, 0, "%s is too large (%llu bytes; the limit is %zu)", path,
                   (unsigned long long) st->st_size, max_bytes);
    ret = PS_ELIMIT;
  }
  if (ret < 0) {
    close (fd);
    return ret;
  }
  note (st);
  return fd;
}

int
ps_file_read_all (const char *path, size_t max_bytes, char **data, size_t *len, ps_diag *diag)
{
  *data = NULL;
  *len = 0;
  struct stat st;
  int fd = ps_file_open_input (path, max_bytes, &st, diag);
  if (fd < 0)
    return fd;
  if (strcmp (path, "-") == 0)
    path = "standard input";

  /* Regular files are read in one buffer of their size; pipes and other
   * streams grow the buffer by doubling.  Either way the size limit is
   * enforced on what is actually read, since a file can grow meanwhile. */
  size_t cap = S_ISREG (st.st_mode) ? (size_t) st.st_size + 1 : 65536;
  if (cap > max_bytes + 1)
    cap = max_bytes + 1;
  char *buf = malloc (cap);
  if (!buf) {
    ps_diag_error (diag, 0, 0, "cannot read %s: out of memory", path);
    close (fd);
    return PS_ENOMEM;
  }
  size_t n = 0;
  for (;;) {
    if (n + 1 >= cap) {
      if (cap > max_bytes) {
        ps_diag_error (diag, 0, 0, "%s is too large (the limit is %zu bytes)", path, max_bytes);
        free (buf);
        close (fd);
        return PS_ELIMIT;
      }
      size_t ncap = cap * 2 > max_bytes + 1 ? max_bytes + 2 : cap * 2;
      char *nb = realloc (buf, ncap);
      if (!nb) {
        ps_diag_error (diag, 0, 0, "cannot read %s: out of memory", path);
        free (buf);
        close (fd);
        return PS_ENOMEM;
      }
      buf = nb;
      cap = ncap;
    }
    ssize_t got = read (fd, buf + n, cap - 1 - n);
    if (got < 0) {
      if (errno == EINTR)
        continue;
      ps_diag_error (diag, 0, 0, "cannot read %s: %s", path, strerror (errno));
      free (buf);
      close (fd);
      return PS_EIO;
    }
    if (got == 0)
      break;
    n += (size_t) got;
    if (n > max_bytes) {
      ps_diag_error (diag, 0, 0, "%s is too large (the limit is %zu bytes)", path, max_bytes);
      free (buf);
      close (fd);
      return PS_ELIMIT;
    }
  }
  close (fd);
  buf[n] = '\0';
  *data = buf;
  *len = n;
  return 0;
}

/* ---- writing ------------------------------------------------------------ */

/* Syncs the folder so that the rename itself survives a crash.  Failure
 * is not an error: some file systems do not support syncing folders. */
static void
sync_dir (const char *dir)
{
  int fd = open (dir, O_RDONLY);
  if (fd >= 0) {
    fsync (fd);
    close (fd);
  }
}

/* Runs the writer on `out`, flushes (and, when `sync`, syncs) and closes
 * it; returns 0 or why not in errbuf. */
static int
run_writer (FILE *out, bool sync, const char *shown, ps_file_writer writer, void *ctx,
            char *errbuf, size_t errlen)
{
  int ret = writer (out, ctx);
  if (ret > 0)
    ret = PS_EIO;
  if (ret < 0 && errlen && !errbuf[0])
    snprintf (errbuf, errlen, "cannot write %s: %s", shown, ps_strerror (ret));
  if (ret == 0 && (fflush (out) != 0 || ferror (out) || (sync && fsync (fileno (out)) != 0))) {
    snprintf (errbuf, errlen, "cannot write %s: %s", shown, strerror (errno));
    ret = PS_EIO;
  }
  if (fclose (out) != 0 && ret == 0) {
    snprintf (errbuf, errlen, "cannot write %s: %s", shown, strerror (errno));
    ret = PS_EIO;
  }
  return ret;
}

/* Writes to a temporary file next to `path` and renames it over `path`,
 * which is a regular file or does not exist; `shown` names it in
 * messages. */
static int
write_replacing (const char *path, const char *shown, ps_file_writer writer, void *ctx,
                 char *errbuf, size_t errlen)
{
  const char *slash = strrchr (path, '/');
  size_t dlen = slash ? (size_t) (slash - path) + 1 : 0;
  const char *base = path + dlen;
  size_t tlen = dlen + 1 + strlen (base) + 8;
  char *tmp = malloc (tlen);
  char *dir = malloc (dlen + 2);
  if (!tmp || !dir) {
    free (tmp);
    free (dir);
    snprintf (errbuf, errlen, "cannot write %s: out of memory", shown);
    return PS_ENOMEM;
  }
  snprintf (tmp, tlen, "%.*s.%s.XXXXXX", (int) dlen, path, base);
  if (dlen)
    snprintf (dir, dlen + 2, "%.*s", (int) dlen, path);
  else
    strcpy (dir, ".");

  int fd = mkstemp (tmp);
  if (fd < 0) {
    snprintf (errbuf, errlen, "cannot write %s: %s", shown, strerror (errno));
    free (tmp);
    free (dir);
    return PS_EIO;
  }
  /* mkstemp creates the file 0600; give it the mode of the file it replaces,
   * or the usual 0644 for a new one. */
  struct stat st;
  mode_t mode = stat (path, &st) == 0 ? (st.st_mode & 07777) : 0644;
  fchmod (fd, mode);

  FILE *out = fdopen (fd, "w");
  if (!out) {
    snprintf (errbuf, errlen, "cannot write %s: %s", shown, strerror (errno));
    close (fd);
    unlink (tmp);
    free (tmp);
    free (dir);
    return PS_EIO;
  }
  int ret = run_writer (out, true, shown, writer, ctx, errbuf, errlen);
  if (ret == 0 && rename (tmp, path) != 0) {
    snprintf (errbuf, errlen, "cannot write %s: %s", shown, strerror (errno));
    ret = PS_EIO;
  }
  if (ret != 0)
    unlink (tmp);
  else
    sync_dir (dir);
  free (tmp);
  free (dir);
  return ret;
}

/* Writes straight into a device or a pipe (/dev/null, a FIFO): such a
 * file cannot be replaced, and must not be. */
static int
write_in_place (const char *path, const char *shown, ps_file_writer writer, void *ctx,
                char *errbuf, size_t errlen)
{
  FILE *out = fopen (path, "w");
  if (!out) {
    snprintf (errbuf, errlen, "cannot write %s: %s", shown, strerror (errno));
    return PS_EIO;
  }
  return run_writer (out, false, shown, writer, ctx, errbuf, errlen);
}

/* The file a symbolic link names, even when it does not exist yet (one
 * level of link, relative to the link's folder); NULL when it cannot be
 * read.  The caller frees it. */
static char *
link_target (const char *path)
{
  char *real = realpath (path, NULL);
  if (real)
    return real;
  char buf[4096];
  ssize_t n = readlink (path, buf, sizeof buf - 1);
  if (n <= 0)
    return NULL;
  buf[n] = '\0';
  const char *slash = strrchr (path, '/');
  if (buf[0] == '/' || !slash)
    return strdup (buf);
  size_t dl = (size_t) (slash - path) + 1, len = dl + (size_t) n + 1;
  char *out = malloc (len);
  if (out)
    snprintf (out, len, "%.*s%s", (int) dl, path, buf);
  return out;
}

int
ps_file_write_atomic (const char *path, ps_file_writer writer, void *ctx, char *errbuf,
                      size_t errlen)
{
  if (errlen)
    errbuf[0] = '\0';
  if (ps_file_is_input (path)) {
    snprintf (errbuf, errlen, "refusing to write %s: it is an input of this run", path);
    return PS_EINVAL;
  }
  /* A symbolic link keeps pointing where it did: the file it names is
   * replaced, not the link. */
  char *resolved = NULL;
  const char *target = path;
  struct stat st;
  if (lstat (path, &st) == 0 && S_ISLNK (st.st_mode)) {
    resolved = link_target (path);
    if (!resolved) {
      snprintf (errbuf, errlen, "cannot write %s: cannot read the symbolic link: %s", path,
                strerror (errno));
      return PS_EIO;
    }
    target = resolved;
  }
  int ret;
  if (stat (target, &st) == 0 && S_ISDIR (st.st_mode)) {
    snprintf (errbuf, errlen, "cannot write %s: it is a folder", path);
    ret = PS_EIO;
  } else if (stat (target, &st) == 0 && !S_ISREG (st.st_mode)) {
    ret = write_in_place (target, path, writer, ctx, errbuf, errlen);
  } else {
    ret = write_replacing (target, path, writer, ctx, errbuf, errlen);
  }
  free (resolved);
  return ret;
}

typedef struct {
  const void *data;
  size_t len;
} bytes_ctx;

static int
write_block (FILE *out, void *ctx)
{
  const bytes_ctx *b = ctx;
  return b->len && fwrite (b->data, 1, b->len, out) != b->len ? PS_EIO : 0;
}

int
ps_file_write_bytes (const char *path, const void *data, size_t len, char *errbuf, size_t errlen)
{
  bytes_ctx b = { data, len };
  return ps_file_write_atomic (path, write_block, &b, errbuf, errlen);
}
