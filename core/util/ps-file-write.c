/* ps-file-write.c: the all-or-nothing writer (see ps-file.h).  The new
 * content goes to a file with no name in the target's folder (O_TMPFILE),
 * which gets a short temporary name only once it is complete, flushed and
 * synced, and is then renamed over the target: a write that fails or is
 * interrupted leaves the old file as it was and nothing beside it. */
/* O_TMPFILE, fopencookie and linkat through /proc are GNU and Linux. */
#define _GNU_SOURCE

#include "ps-file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ps-file-private.h"

bool ps__file_named_temporaries;

/* ---- temporary files a signal must not leave behind --------------------- */

/* A temporary file that has a name, from the moment it gets one until it
 * is renamed into place or removed.  The slots form a list that only
 * grows (to the most writes ever made at once) and is never freed, so
 * that a signal handler can walk it at any moment without a lock. */
enum { SLOT_FREE, SLOT_TAKEN, SLOT_NAMED };

typedef struct slot {
  atomic_int state;
  int dirfd;
  char name[32];
  struct slot *next;
} slot;

static _Atomic (slot *) slots;

static slot *
slot_take (void)
{
  for (slot *s = atomic_load (&slots); s; s = s->next) {
    int expect = SLOT_FREE;
    if (atomic_compare_exchange_strong (&s->state, &expect, SLOT_TAKEN))
      return s;
  }
  slot *s = calloc (1, sizeof *s);
  if (!s)
    return NULL;
  atomic_init (&s->state, SLOT_TAKEN);
  s->next = atomic_load (&slots);
  while (!atomic_compare_exchange_weak (&slots, &s->next, s))
    ;
  return s;
}

static void
slot_release (slot *s)
{
  if (s)
    atomic_store (&s->state, SLOT_FREE);
}

static void
remove_temporaries (int sig)
{
  int saved = errno;
  for (slot *s = atomic_load (&slots); s; s = s->next)
    if (atomic_load (&s->state) == SLOT_NAMED)
      unlinkat (s->dirfd, s->name, 0);
  errno = saved;
  /* The handler was reset on entry (SA_RESETHAND): the signal does what
   * it would have done, once this returns. */
  raise (sig);
}

void
ps_file_remove_temporaries_on_signals (void)
{
  static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
  for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
    struct sigaction old;
    /* A signal the program handles or ignores (nohup) is left alone. */
    if (sigaction (sigs[i], NULL, &old) != 0 || old.sa_handler != SIG_DFL)
      continue;
    struct sigaction sa;
    memset (&sa, 0, sizeof sa);
    sa.sa_handler = remove_temporaries;
    sa.sa_flags = SA_RESETHAND;
    sigemptyset (&sa.sa_mask);
    sigaction (sigs[i], &sa, NULL);
  }
}

/* ---- streams that know why they failed ---------------------------------- */

/* A stdio stream over a descriptor that keeps the first error write(2)
 * gave, so that a full disk is reported as such rather than as whatever
 * errno holds by the time the writer returns. */
typedef struct {
  int fd;
  int err;
} sink;

static ssize_t
sink_write (void *cookie, const char *buf, size_t n)
{
  sink *s = cookie;
  size_t done = 0;
  while (done < n) {
    ssize_t w = write (s->fd, buf + done, n - done);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0) {
      if (!s->err)
        s->err = w < 0 ? errno : EIO;
      return (ssize_t) done;
    }
    done += (size_t) w;
  }
  return (ssize_t) n;
}

static FILE *
sink_open (sink *s, int fd)
{
  s->fd = fd;
  s->err = 0;
  cookie_io_functions_t io = { .write = sink_write };
  FILE *f = fopencookie (s, "w", io);
  if (f)
    setvbuf (f, NULL, _IOFBF, 1 << 16);
  return f;
}

/* Runs the writer into s's descriptor, flushes (and, when `sync`, syncs)
 * it; returns 0 or why not in errbuf.  The descriptor stays open. */
static int
run_writer (sink *s, bool sync, const char *shown, ps_file_writer writer, void *ctx,
            char *errbuf, size_t errlen)
{
  FILE *out = sink_open (s, s->fd);
  if (!out) {
    snprintf (errbuf, errlen, "cannot write %s: out of memory", shown);
    return PS_ENOMEM;
  }
  int ret = writer (out, ctx);
  if (ret > 0)
    ret = PS_EIO;
  if (fflush (out) != 0 || ferror (out))
    ret = ret < 0 ? ret : PS_EIO;
  fclose (out);
  if (ret == 0 && sync && fsync (s->fd) != 0) {
    s->err = errno;
    ret = PS_EIO;
  }
  if (ret < 0 && errlen && !errbuf[0])
    snprintf (errbuf, errlen, "cannot write %s: %s", shown,
              s->err ? strerror (s->err) : ps_strerror (ret));
  return ret;
}

/* ---- replacing a file --------------------------------------------------- */

/* A temporary name for the finished content: short, so that a target
 * name of any valid length can be written beside it. */
static void
temp_name (char *out, size_t cap)
{
  static atomic_uint counter;
  static const char digits[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  uint64_t x = (uint64_t) ts.tv_nsec * 0x9e3779b97f4a7c15ull ^ (uint64_t) getpid () << 32
               ^ atomic_fetch_add (&counter, 1) * 0xbf58476d1ce4e5b9ull;
  char tail[9];
  for (int i = 0; i < 8; i++, x /= 36)
    tail[i] = digits[x % 36];
  tail[8] = '\0';
  snprintf (out, cap, ".planscope-%s", tail);
}

/* Whether unnamed files can be given a name: linkat needs /proc for that
 * without privileges. */
static bool
can_link_unnamed (void)
{
  static atomic_int known; /* 0 not yet asked, 1 yes, 2 no */
  int k = atomic_load (&known);
  if (k == 0) {
    k = access ("/proc/self/fd", X_OK) == 0 ? 1 : 2;
    atomic_store (&known, k);
  }
  return k == 1;
}

/* Creates the temporary file in dirfd: without a name when the file
 * system can (*named false), else under a fresh temporary name recorded
 * in s (*named true), which a signal then removes.  Returns the
 * descriptor or -1 (errno). */
static int
create_temp (int dirfd, slot *s, bool *named)
{
  *named = false;
  if (!ps__file_named_temporaries && can_link_unnamed ()) {
    int fd = openat (dirfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
    if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL))
      return fd;
  }
  for (int tries = 0; tries < 100; tries++) {
    s->dirfd = dirfd;
    temp_name (s->name, sizeof s->name);
    atomic_store (&s->state, SLOT_NAMED);
    int fd = openat (dirfd, s->name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) {
      *named = true;
      return fd;
    }
    atomic_store (&s->state, SLOT_TAKEN);
    if (errno != EEXIST)
      return -1;
  }
  errno = EEXIST;
  return -1;
}

/* Gives the finished unnamed file fd a temporary name in dirfd. */
static int
name_temp (int fd, int dirfd, slot *s)
{
  char proc[64];
  snprintf (proc, sizeof proc, "/proc/self/fd/%d", fd);
  for (int tries = 0; tries < 100; tries++) {
    s->dirfd = dirfd;
    temp_name (s->name, sizeof s->name);
    atomic_store (&s->state, SLOT_NAMED);
    if (linkat (AT_FDCWD, proc, dirfd, s->name, AT_SYMLINK_FOLLOW) == 0)
      return 0;
    atomic_store (&s->state, SLOT_TAKEN);
    if (errno != EEXIST)
      return -1;
  }
  errno = EEXIST;
  return -1;
}

/* Writes `path` (a regular file, or none yet) by way of a temporary file
 * in its folder; `old` is its status when it exists, else NULL.  `shown`
 * names it in messages. */
static int
write_replacing (const char *path, const struct stat *old, const char *shown,
                 ps_file_writer writer, void *ctx, char *errbuf, size_t errlen)
{
  const char *slash = strrchr (path, '/');
  const char *base = slash ? slash + 1 : path;
  char *dir = slash ? strndup (path, (size_t) (slash - path) + (slash == path)) : strdup (".");
  if (!dir) {
    snprintf (errbuf, errlen, "cannot write %s: out of memory", shown);
    return PS_ENOMEM;
  }
  int dirfd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  free (dir);
  if (dirfd < 0) {
    snprintf (errbuf, errlen, "cannot write %s: %s", shown, strerror (errno));
    return PS_EIO;
  }
  slot *s = slot_take ();
  if (!s) {
    snprintf (errbuf, errlen, "cannot write %s: out of memory", shown);
    close (dirfd);
    return PS_ENOMEM;
  }
  bool named;
  int fd = create_temp (dirfd, s, &named);
  if (fd < 0) {
    int e = errno;
    snprintf (errbuf, errlen, "cannot write %s: %s", shown, strerror (e));
    slot_release (s);
    close (dirfd);
    return e == ENOMEM ? PS_ENOMEM : PS_EIO;
  }
  /* A new file is made 0666 less the umask; a replaced one keeps its
   * owner (where that is allowed) and its permissions, but not a setuid
   * or setgid bit, which belonged to the old content. */
  if (old) {
    /* Where the owner cannot be given back, the group may still be. */
    if (fchown (fd, old->st_uid, old->st_gid) != 0 && fchown (fd, (uid_t) -1, old->st_gid) != 0)
      errno = 0;
    fchmod (fd, old->st_mode & 0777);
  }
  sink k = { fd, 0 };
  int ret = run_writer (&k, true, shown, writer, ctx, errbuf, errlen);
  if (ret == 0 && !named && name_temp (fd, dirfd, s) != 0) {
    snprintf (errbuf, errlen, "cannot write %s: %s", shown, strerror (errno));
    ret = PS_EIO;
  }
  if (ret == 0 && renameat (dirfd, s->name, dirfd, base) != 0) {
    snprintf (errbuf, errlen, "cannot write %s: %s", shown, strerror (errno));
    ret = PS_EIO;
  }
  if (ret != 0 && atomic_load (&s->state) == SLOT_NAMED)
    unlinkat (dirfd, s->name, 0);
  slot_release (s);
  close (fd);
  /* The rename itself survives a crash once the folder is synced; some
   * file systems cannot sync folders, which is no error. */
  if (ret == 0)
    fsync (dirfd);
  close (dirfd);
  return ret;
}

/* Writes straight into a device or a pipe (/dev/null, a FIFO): such a
 * file cannot be replaced, and must not be. */
static int
write_in_place (const char *path, const char *shown, ps_file_writer writer, void *ctx,
                char *errbuf, size_t errlen)
{
  int fd = open (path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    snprintf (errbuf, errlen, "cannot write %s: %s", shown, strerror (errno));
    return PS_EIO;
  }
  sink k = { fd, 0 };
  int ret = run_writer (&k, false, shown, writer, ctx, errbuf, errlen);
  if (close (fd) != 0 && ret == 0) {
    snprintf (errbuf, errlen, "cannot write %s: %s", shown, strerror (errno));
    ret = PS_EIO;
  }
  return ret;
}

/* ---- where a write lands ------------------------------------------------ */

/* The file a path names once its symbolic links are followed: the path
 * itself when it is no link; the end of the chain when the chain ends at
 * a file; the name a single link gives when that names nothing yet (the
 * file is created there, as a shell's `>` would).  A loop, or a chain
 * whose last link names nothing, is an error: which of its links was
 * meant is anybody's guess, and none is replaced by a regular file.
 * Returns a string the caller frees, or NULL with errbuf set. */
static char *
landing (const char *path, char *errbuf, size_t errlen)
{
  struct stat lst;
  if (lstat (path, &lst) != 0 || !S_ISLNK (lst.st_mode))
    return strdup (path);
  char *real = realpath (path, NULL);
  if (real)
    return real;
  if (errno != ENOENT) {
    snprintf (errbuf, errlen, "cannot write %s: %s", path, strerror (errno));
    return NULL;
  }
  char buf[PATH_MAX];
  ssize_t n = readlink (path, buf, sizeof buf - 1);
  if (n <= 0) {
    snprintf (errbuf, errlen, "cannot write %s: cannot read the symbolic link: %s", path,
              n < 0 ? strerror (errno) : "it is empty");
    return NULL;
  }
  buf[n] = '\0';
  const char *slash = strrchr (path, '/');
  char *next;
  if (buf[0] == '/' || !slash) {
    next = strdup (buf);
  } else {
    size_t dl = (size_t) (slash - path) + 1, len = dl + (size_t) n + 1;
    next = malloc (len);
    if (next)
      snprintf (next, len, "%.*s%s", (int) dl, path, buf);
  }
  if (!next) {
    snprintf (errbuf, errlen, "cannot write %s: out of memory", path);
    return NULL;
  }
  if (lstat (next, &lst) == 0 && S_ISLNK (lst.st_mode)) {
    snprintf (errbuf, errlen,
              "cannot write %s: it is a symbolic link to %s, a symbolic link that leads to no "
              "file",
              path, buf);
    free (next);
    return NULL;
  }
  return next;
}

int
ps_file_write_atomic (const char *path, ps_file_writer writer, void *ctx, char *errbuf,
                      size_t errlen)
{
  if (errlen)
    errbuf[0] = '\0';
  if (!*path) {
    snprintf (errbuf, errlen, "cannot write a file with an empty name");
    return PS_EINVAL;
  }
  if (ps_file_is_input (path)) {
    snprintf (errbuf, errlen, "refusing to write %s: it is an input of this run", path);
    return PS_EINVAL;
  }
  /* A symbolic link keeps pointing where it did: the file it names is
   * replaced, not the link. */
  char *target = landing (path, errbuf, errlen);
  if (!target)
    return errbuf[0] ? PS_EIO : PS_ENOMEM;
  int ret;
  struct stat st;
  bool exists = stat (target, &st) == 0;
  if (exists && S_ISDIR (st.st_mode)) {
    snprintf (errbuf, errlen, "cannot write %s: it is a folder", path);
    ret = PS_EIO;
  } else if (exists && !S_ISREG (st.st_mode)) {
    ret = write_in_place (target, path, writer, ctx, errbuf, errlen);
  } else if (exists && (st.st_mode & 0222) == 0) {
    /* Renaming over a file needs only the folder's permission: a file its
     * owner made read-only is left alone rather than replaced behind the
     * owner's back (even for root, which could). */
    snprintf (errbuf, errlen,
              "cannot write %s: it is read-only (mode %04o); make it writable or remove it "
              "first",
              path, (unsigned) (st.st_mode & 07777));
    ret = PS_EIO;
  } else if (exists && access (target, W_OK) != 0) {
    snprintf (errbuf, errlen, "cannot write %s: %s", path, strerror (errno));
    ret = PS_EIO;
  } else {
    ret = write_replacing (target, exists ? &st : NULL, path, writer, ctx, errbuf, errlen);
  }
  free (target);
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

int
ps_file_write_stdout (ps_file_writer writer, void *ctx, char *errbuf, size_t errlen)
{
  if (errlen)
    errbuf[0] = '\0';
  /* What the program printed before comes first. */
  if (fflush (stdout) != 0) {
    snprintf (errbuf, errlen, "cannot write to standard output: %s", strerror (errno));
    return PS_EIO;
  }
  sink k = { STDOUT_FILENO, 0 };
  return run_writer (&k, false, "to standard output", writer, ctx, errbuf, errlen);
}
