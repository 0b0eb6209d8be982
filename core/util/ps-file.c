/* ps-file.c: whole-file reads with a size limit, and all-or-nothing writes
 * (temporary file in the same folder, flushed, synced, renamed). */
/* statx (a file's birth time) and realpath are beyond the POSIX level the
 * build asks for. */
#define _GNU_SOURCE

#include "ps-file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ps-array.h"
#include "ps-file-private.h"

/* ---- inputs ------------------------------------------------------------- */

/* Every input of the process, never forgotten: a run reads a handful of
 * files, the app at most thousands (kernel-cache entries), and a write
 * looks them up once. */
typedef struct {
  ps__file_id id;
  char *path; /* canonical path when read, or NULL (standard input) */
} input;

static pthread_mutex_t inputs_lock = PTHREAD_MUTEX_INITIALIZER;
static input *inputs;
static uint32_t n_inputs, cap_inputs;

bool
ps__file_id_of (int dirfd, const char *path, int flags, ps__file_id *out)
{
  memset (out, 0, sizeof *out);
  struct statx sx;
  if (statx (dirfd, path, flags, STATX_TYPE | STATX_INO | STATX_CTIME | STATX_BTIME, &sx) == 0) {
    out->dev = ((uint64_t) sx.stx_dev_major << 32) | sx.stx_dev_minor;
    out->ino = sx.stx_ino;
    out->regular = S_ISREG (sx.stx_mode);
    /* Without a birth time the change time stands in: a new file that
     * got a freed inode was changed when it was made. */
    struct statx_timestamp t = (sx.stx_mask & STATX_BTIME) ? sx.stx_btime : sx.stx_ctime;
    out->birth_s = t.tv_sec;
    out->birth_ns = t.tv_nsec;
    return true;
  }
  if (errno != ENOSYS)
    return false;
  struct stat st;
  int r = (flags & AT_EMPTY_PATH) ? fstat (dirfd, &st) : fstatat (dirfd, path, &st, flags);
  if (r != 0)
    return false;
  out->dev = (uint64_t) st.st_dev;
  out->ino = (uint64_t) st.st_ino;
  out->regular = S_ISREG (st.st_mode);
  out->birth_s = (int64_t) st.st_ctim.tv_sec;
  out->birth_ns = (uint32_t) st.st_ctim.tv_nsec;
  return true;
}

bool
ps__file_id_same (const ps__file_id *a, const ps__file_id *b)
{
  return a->dev == b->dev && a->ino == b->ino && a->birth_s == b->birth_s
         && a->birth_ns == b->birth_ns;
}

/* The path a write to `path` lands on, made absolute and free of links,
 * even when the file does not exist yet (its folder must); NULL when it
 * cannot be worked out.  The caller frees it. */
static char *
canonical (const char *path)
{
  char *real = realpath (path, NULL);
  if (real)
    return real;
  const char *slash = strrchr (path, '/');
  char *dir = slash ? strndup (path, (size_t) (slash - path) + (slash == path)) : strdup (".");
  if (!dir)
    return NULL;
  char *rdir = realpath (dir, NULL);
  free (dir);
  if (!rdir)
    return NULL;
  const char *base = slash ? slash + 1 : path;
  size_t n = strlen (rdir) + strlen (base) + 2;
  char *out = malloc (n);
  if (out)
    snprintf (out, n, "%s%s%s", rdir, strcmp (rdir, "/") ? "/" : "", base);
  free (rdir);
  return out;
}

/* Notes the regular file open as fd (named `path`, or NULL for standard
 * input): a pipe or a terminal is no file to keep. */
static void
note (int fd, const char *path)
{
  ps__file_id id;
  if (!ps__file_id_of (fd, "", AT_EMPTY_PATH, &id) || !id.regular)
    return;
  char *canon = path ? canonical (path) : NULL;
  pthread_mutex_lock (&inputs_lock);
  bool known = false;
  for (uint32_t i = 0; i < n_inputs && !known; i++)
    known = ps__file_id_same (&inputs[i].id, &id)
            && (!canon || (inputs[i].path && strcmp (inputs[i].path, canon) == 0));
  if (!known && PS_ARRAY_RESERVE (inputs, cap_inputs, (uint64_t) n_inputs + 1) == 0) {
    inputs[n_inputs++] = (input){ id, canon };
    canon = NULL;
  }
  pthread_mutex_unlock (&inputs_lock);
  free (canon);
}

bool
ps_file_is_input (const char *path)
{
  ps__file_id id;
  bool have_id = ps__file_id_of (AT_FDCWD, path, 0, &id) && id.regular;
  char *canon = canonical (path);
  bool found = false;
  pthread_mutex_lock (&inputs_lock);
  for (uint32_t i = 0; i < n_inputs && !found; i++)
    found = (have_id && ps__file_id_same (&inputs[i].id, &id))
            || (canon && inputs[i].path && strcmp (inputs[i].path, canon) == 0);
  pthread_mutex_unlock (&inputs_lock);
  free (canon);
  return found;
}

/* ---- reading ------------------------------------------------------------ */

/* own: one of planscope's own files (its cache): a regular file only,
 * opened without blocking (a FIFO put there is refused, not waited on),
 * and not noted as an input. */
static int
open_file (const char *path, size_t max_bytes, struct stat *st, bool own, ps_diag *diag)
{
  bool std_in = !own && strcmp (path, "-") == 0;
  if (std_in)
    path = "standard input";
  int fd = std_in ? dup (STDIN_FILENO) : open (path, O_RDONLY | (own ? O_NONBLOCK : 0));
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
  } else if (own && !S_ISREG (st->st_mode)) {
    ps_diag_error (diag, 0, 0, "cannot read %s: not a regular file", path);
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
  if (!own)
    note (fd, std_in ? NULL : path);
  return fd;
}

int
ps_file_open_input (const char *path, size_t max_bytes, struct stat *st, ps_diag *diag)
{
  return open_file (path, max_bytes, st, false, diag);
}

static int
read_all (const char *path, size_t max_bytes, bool own, char **data, size_t *len, ps_diag *diag)
{
  *data = NULL;
  *len = 0;
  struct stat st;
  int fd = open_file (path, max_bytes, &st, own, diag);
  if (fd < 0)
    return fd;
  if (!own && strcmp (path, "-") == 0)
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

int
ps_file_read_all (const char *path, size_t max_bytes, char **data, size_t *len, ps_diag *diag)
{
  return read_all (path, max_bytes, false, data, len, diag);
}

int
ps_file_read_own (const char *path, size_t max_bytes, char **data, size_t *len, ps_diag *diag)
{
  return read_all (path, max_bytes, true, data, len, diag);
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
