/* test-file.c: ps-file.h against hostile paths, pipes and races.
 *
 * Reading: a FIFO or a device named where a file is expected is refused
 * at once (an alarm fails the test rather than letting it hang), a pipe
 * the user names is read once when its writer comes, a long read can be
 * cancelled.  The input guard: no input is ever forgotten, whatever their
 * number.  Writing: the umask and the replaced file's mode are honoured
 * (no setuid carried over), a read-only file is refused, a name of 255
 * bytes can be written, link chains that end nowhere and link loops are
 * errors, a full device says so, and no temporary file exists while the
 * content is being made or survives a SIGTERM. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ps-device.h"
#include "ps-file.h"
#include "ps-gen.h"
#include "ps-graph.h"
#include "ps-import.h"
#include "import/json/ps-json-load.h"
#include "util/ps-file-private.h"

#ifndef PS_TEST_SOURCE_ROOT
#define PS_TEST_SOURCE_ROOT "."
#endif

static const char *
source_root (void)
{
  const char *s = getenv ("PS_SOURCE_ROOT");
  return s && *s ? s : PS_TEST_SOURCE_ROOT;
}

static char dir[64];

static int
setup (void **state)
{
  (void) state;
  snprintf (dir, sizeof dir, "/tmp/ps-test-file-XXXXXX");
  return mkdtemp (dir) ? 0 : -1;
}

/* Removes what a test left in dir (files, FIFOs, links), then dir. */
static int
teardown (void **state)
{
  (void) state;
  DIR *d = opendir (dir);
  struct dirent *e;
  while (d && (e = readdir (d)))
    if (strcmp (e->d_name, ".") && strcmp (e->d_name, "..")) {
      char p[512];
      snprintf (p, sizeof p, "%s/%s", dir, e->d_name);
      unlink (p);
    }
  if (d)
    closedir (d);
  return rmdir (dir);
}

static void
path_in (char *out, size_t cap, const char *name)
{
  snprintf (out, cap, "%s/%s", dir, name);
}

/* The names in dir, one string ("a b c "), for comparisons. */
static void
listing (char *out, size_t cap)
{
  out[0] = '\0';
  DIR *d = opendir (dir);
  assert_non_null (d);
  struct dirent *e;
  size_t n = 0;
  while ((e = readdir (d)))
    if (strcmp (e->d_name, ".") && strcmp (e->d_name, ".."))
      n += (size_t) snprintf (out + n, n < cap ? cap - n : 0, "%s ", e->d_name);
  closedir (d);
}

static void
put (const char *path, const char *text)
{
  FILE *f = fopen (path, "w");
  assert_non_null (f);
  fputs (text, f);
  assert_int_equal (fclose (f), 0);
}

static char *
slurp (const char *path)
{
  char *data;
  size_t len;
  ps_diag d;
  ps_diag_init (&d, path);
  int r = ps_file_read_own (path, 1 << 30, &data, &len, &d);
  ps_diag_free (&d);
  return r == 0 ? data : NULL;
}

static bool
diag_says (const ps_diag *d, const char *text)
{
  for (size_t i = 0; i < d->count; i++)
    if (strstr (d->entries[i].message, text))
      return true;
  return false;
}

/* ---- reading -------------------------------------------------------------- */

/* A FIFO named where a regular file is expected (a device profile, a
 * kernel module) is refused at once, with no writer ever coming; so is a
 * device, and /dev/zero is not read at all. */
static void
core_file_special_refused (void **state)
{
  (void) state;
  char fifo[256];
  path_in (fifo, sizeof fifo, "device.json");
  assert_int_equal (mkfifo (fifo, 0600), 0);
  alarm (20); /* a hang fails the test */
  char *data = NULL;
  size_t len;
  ps_diag d;
  ps_diag_init (&d, fifo);
  assert_int_equal (ps_file_read_named (fifo, 1 << 20, &data, &len, &d), PS_EIO);
  assert_null (data);
  assert_true (diag_says (&d, "it is a pipe, not a regular file"));
  ps_diag_free (&d);

  /* Through the device lookup, as a graph's "device" or --device names it. */
  ps_device dev;
  ps_diag_init (&d, fifo);
  assert_true (ps_device_find (&dev, fifo, &d) < 0);
  assert_true (diag_says (&d, "it is a pipe"));
  ps_diag_free (&d);

  /* Devices, as the main input too: refused before a byte is read. */
  static const char *const devices[] = { "/dev/zero", "/dev/null", "/dev/urandom" };
  for (size_t i = 0; i < sizeof devices / sizeof *devices; i++) {
    ps_diag_init (&d, devices[i]);
    assert_int_equal (ps_file_read_all (devices[i], (size_t) 1 << 31, &data, &len, &d), PS_EIO);
    assert_true (diag_says (&d, "it is a character device, not a regular file or a pipe"));
    ps_diag_free (&d);
    ps_diag_init (&d, devices[i]);
    assert_int_equal (ps_file_read_named (devices[i], 1 << 20, &data, &len, &d), PS_EIO);
    ps_diag_free (&d);
  }
  /* Standard input redirected from a device, as `plan - < /dev/zero`. */
  int saved = dup (STDIN_FILENO), zero = open ("/dev/zero", O_RDONLY);
  assert_true (saved >= 0 && zero >= 0);
  assert_int_equal (dup2 (zero, STDIN_FILENO), STDIN_FILENO);
  ps_diag_init (&d, "-");
  int r = ps_file_read_all ("-", (size_t) 1 << 31, &data, &len, &d);
  assert_int_equal (dup2 (saved, STDIN_FILENO), STDIN_FILENO);
  close (saved);
  close (zero);
  assert_int_equal (r, PS_EIO);
  assert_true (diag_says (&d, "standard input: it is a character device"));
  ps_diag_free (&d);
  alarm (0);
}

typedef struct {
  const char *path;
  const char *text;
  unsigned delay_ms;
} writer_job;

static void
sleep_ms (unsigned ms)
{
  struct timespec t = { ms / 1000, (long) (ms % 1000) * 1000000L };
  nanosleep (&t, NULL);
}

static void *
fifo_writer (void *arg)
{
  const writer_job *w = arg;
  sleep_ms (w->delay_ms);
  int fd = open (w->path, O_WRONLY);
  if (fd >= 0) {
    /* In two pieces, the second after a pause: the reader must wait for
     * the writer to close, not stop at the first empty read. */
    size_t n = strlen (w->text), half = n / 2;
    if (write (fd, w->text, half) != (ssize_t) half)
      abort ();
    sleep_ms (50);
    if (write (fd, w->text + half, n - half) != (ssize_t) (n - half))
      abort ();
    close (fd);
  }
  return NULL;
}

/* A pipe the user names as the graph is read once, when its writer comes,
 * however late: a JSON graph and a CUDA-graph dump alike. */
static void
core_file_pipe_read_once (void **state)
{
  (void) state;
  char fifo[256], dot_path[512];
  path_in (fifo, sizeof fifo, "graph.pipe");
  snprintf (dot_path, sizeof dot_path, "%s/tests/fuzz/seeds/dot/verbose-all-types.dot",
            source_root ());
  char *dot = slurp (dot_path);
  assert_non_null (dot);
  const char *json = "{\"format\": \"planscope-graph\", \"version\": 1, \"nodes\": "
                     "[{\"name\": \"a\", \"op\": \"host\"}]}";
  const char *texts[] = { json, dot };
  alarm (30);
  for (int i = 0; i < 2; i++) {
    assert_int_equal (mkfifo (fifo, 0600), 0);
    writer_job w = { fifo, texts[i], 300 };
    pthread_t t;
    assert_int_equal (pthread_create (&t, NULL, fifo_writer, &w), 0);
    ps_graph g;
    ps_diag d;
    ps_diag_init (&d, fifo);
    int r = ps_import_graph_file (&g, fifo, NULL, &d);
    pthread_join (t, NULL);
    if (r != 0)
      ps_diag_print (&d, stderr);
    assert_int_equal (r, 0);
    assert_true (g.n_nodes >= 1);
    ps_graph_free (&g);
    ps_diag_free (&d);
    /* A pipe is no file to guard: it can be written into. */
    assert_false (ps_file_is_input (fifo));
    assert_int_equal (unlink (fifo), 0);
  }
  alarm (0);
  free (dot);
}

static unsigned progress_calls;

static bool
stop_at_third (void *ctx, const char *stage, double fraction)
{
  (void) ctx;
  assert_string_equal (stage, "read");
  assert_true (fraction >= 0 && fraction <= 1);
  return ++progress_calls < 3;
}

/* A large regular file (read in two halves at once) comes back whole and
 * in order, at every size around the halves' edge. */
static void
core_file_read_halves (void **state)
{
  (void) state;
  char path[256];
  path_in (path, sizeof path, "halves.bin");
  size_t sizes[] = { (size_t) 8 << 20, ((size_t) 8 << 20) + 1, ((size_t) 20 << 20) + 12345 };
  for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
    size_t size = sizes[k];
    unsigned char *want = malloc (size);
    assert_non_null (want);
    for (size_t i = 0; i < size; i++)
      want[i] = (unsigned char) ((i * 31 + i / 4096) % 251);
    FILE *f = fopen (path, "wb");
    assert_non_null (f);
    assert_int_equal (fwrite (want, 1, size, f), size);
    assert_int_equal (fclose (f), 0);
    char *data;
    size_t len;
    ps_diag d;
    ps_diag_init (&d, path);
    assert_int_equal (ps_file_read_all (path, (size_t) 1 << 30, &data, &len, &d), 0);
    assert_int_equal (len, size);
    assert_memory_equal (data, want, size);
    assert_int_equal (data[len], '\0');
    free (data);
    free (want);
    ps_diag_free (&d);
  }
}

/* A large input mapped: its bytes, then zeros (a size of whole pages
 * too); cut short while mapped, the bytes it lost read as zeros instead
 * of raising SIGBUS, and the mapping says it was cut. */
static void
core_file_map_cut (void **state)
{
  (void) state;
  char path[256];
  path_in (path, sizeof path, "mapped.bin");
  size_t saved_min = ps__file_map_min;
  ps__file_map_min = (size_t) 1 << 20;
  size_t sizes[] = { (size_t) 3 << 20, ((size_t) 3 << 20) + 5 };
  for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
    size_t size = sizes[k];
    unsigned char *want = malloc (size);
    assert_non_null (want);
    for (size_t i = 0; i < size; i++)
      want[i] = (unsigned char) (1 + (i * 31 + i / 4096) % 251);
    FILE *f = fopen (path, "wb");
    assert_non_null (f);
    assert_int_equal (fwrite (want, 1, size, f), size);
    assert_int_equal (fclose (f), 0);
    ps_diag d;
    ps_diag_init (&d, path);
    ps_file_input in;
    assert_int_equal (ps_file_input_open (&in, path, (size_t) 1 << 30, &d), 0);
    const char *data;
    size_t len;
    ps_file_mapping *m;
    assert_int_equal (ps_file_input_map (&in, &data, &len, &m), 1);
    assert_int_equal (len, size);
    assert_memory_equal (data, want, size);
    assert_int_equal (data[len], '\0');
    assert_false (ps_file_mapping_cut (m));
    /* Another process (here: this one) cuts it to a third. */
    assert_int_equal (truncate (path, (off_t) (size / 3)), 0);
    volatile const char *v = data;
    assert_int_equal (v[size / 3 - 1], (char) want[size / 3 - 1]);
    assert_int_equal (v[size - 1], 0);
    assert_int_equal (v[size / 2], 0);
    assert_true (ps_file_mapping_cut (m));
    ps_file_mapping_free (m);
    ps_file_input_close (&in);

    /* An input read into before it came (standard input) is not mapped:
     * its bytes start where it stood. */
    assert_int_equal (ps_file_input_open (&in, path, (size_t) 1 << 30, &d), 0);
    assert_int_equal (lseek (in.fd, 5, SEEK_SET), 5);
    assert_int_equal (ps_file_input_map (&in, &data, &len, &m), 0);
    assert_null (m);
    ps_file_input_close (&in);

    /* The slot is taken again, uncut; mapped from the first byte after
     * a head was read. */
    assert_int_equal (ps_file_input_open (&in, path, (size_t) 1 << 30, &d), 0);
    char head[100];
    assert_int_equal (ps_file_input_read (&in, head, sizeof head), (long) sizeof head);
    assert_int_equal (ps_file_input_map (&in, &data, &len, &m), 1);
    assert_int_equal (len, size / 3);
    assert_memory_equal (data, want, len);
    assert_false (ps_file_mapping_cut (m));
    ps_file_mapping_free (m);
    ps_file_input_close (&in);
    free (want);
    ps_diag_free (&d);
  }
  /* Small files and pipes are read, not mapped. */
  ps__file_map_min = saved_min;
  FILE *f = fopen (path, "wb");
  assert_non_null (f);
  fputs ("small", f);
  assert_int_equal (fclose (f), 0);
  ps_diag d;
  ps_diag_init (&d, path);
  ps_file_input in;
  assert_int_equal (ps_file_input_open (&in, path, 1 << 20, &d), 0);
  const char *data;
  size_t len;
  ps_file_mapping *m;
  assert_int_equal (ps_file_input_map (&in, &data, &len, &m), 0);
  assert_null (m);
  ps_file_input_close (&in);
  ps_file_whole w;
  assert_int_equal (ps_file_read_whole (path, 1 << 20, &w, &d), 0);
  assert_non_null (w.buf);
  assert_null (w.map);
  assert_int_equal (w.len, 5);
  assert_string_equal (w.data, "small");
  ps_file_whole_free (&w);
  /* Large, it is mapped. */
  int fd = open (path, O_WRONLY | O_TRUNC);
  assert_true (fd >= 0);
  assert_int_equal (ftruncate (fd, (off_t) ps__file_map_min), 0);
  close (fd);
  assert_int_equal (ps_file_read_whole (path, (size_t) 1 << 30, &w, &d), 0);
  assert_null (w.buf);
  assert_non_null (w.map);
  assert_int_equal (w.len, ps__file_map_min);
  assert_int_equal (w.data[0], 0);
  assert_int_equal (w.data[w.len], 0);
  ps_file_whole_free (&w);
  ps_diag_free (&d);
}

/* A SIGBUS that is no mapped input's still ends the process: it is
 * passed on to what handled it before (here the default action), not
 * swallowed.  In a child, whose SIGBUS is the default's (the test
 * runner's own handler would go on with the tests there). */
static void
core_file_map_other_sigbus (void **state)
{
  (void) state;
  char path[256], other[256];
  path_in (path, sizeof path, "mapped.bin");
  path_in (other, sizeof other, "other.bin");
  for (int k = 0; k < 2; k++) {
    int fd = open (k ? other : path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true (fd >= 0);
    assert_int_equal (ftruncate (fd, 1 << 20), 0);
    close (fd);
  }
  fflush (NULL);
  pid_t pid = fork ();
  assert_true (pid >= 0);
  if (pid == 0) {
    struct sigaction dfl;
    memset (&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset (&dfl.sa_mask);
    sigaction (SIGBUS, &dfl, NULL);
    ps__file_map_min = 1;
    ps_diag d;
    ps_diag_init (&d, path);
    ps_file_input in;
    const char *data;
    size_t len;
    ps_file_mapping *m;
    if (ps_file_input_open (&in, path, (size_t) 1 << 30, &d) != 0
        || ps_file_input_map (&in, &data, &len, &m) != 1)
      _exit (3);
    int fd = open (other, O_RDONLY);
    volatile const char *o = fd >= 0 ? mmap (NULL, 1 << 20, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
    if (!o || o == MAP_FAILED || truncate (other, 0) != 0)
      _exit (3);
    char c = o[1 << 19]; /* past the end now: SIGBUS */
    _exit (c == 0 ? 0 : 4);
  }
  int status;
  assert_int_equal (waitpid (pid, &status, 0), pid);
  /* Killed by the signal, or ended by whatever handles it under a
   * sanitizer (which reports it and exits with 1): never on as if
   * nothing had happened. */
  assert_false (WIFEXITED (status) && (WEXITSTATUS (status) == 0 || WEXITSTATUS (status) == 3));
  if (WIFSIGNALED (status))
    assert_int_equal (WTERMSIG (status), SIGBUS);
}

/* A graph file cut short while it is loaded from its mapping: one error
 * that says so, no graph, whatever the zeros made the loader say; the
 * same file whole loads as its bytes do from memory. */
static bool
cut_at_first_parse (void *ctx, const char *stage, double fraction)
{
  (void) fraction;
  const char *path = ctx;
  struct stat st;
  if (strcmp (stage, "parse") == 0 && stat (path, &st) == 0 && st.st_size > 4096)
    assert_int_equal (truncate (path, st.st_size / 3), 0);
  return true;
}

static void
core_file_map_graph_cut (void **state)
{
  (void) state;
  char path[256];
  path_in (path, sizeof path, "mapped.json");
  FILE *f = fopen (path, "w");
  assert_non_null (f);
  ps_gen_options o;
  ps_gen_options_init (&o);
  o.nodes = 30000;
  assert_int_equal (ps_gen_write (&o, f), 0);
  assert_int_equal (fclose (f), 0);
  size_t saved_min = ps__file_map_min, saved_split = ps__json_split_min;
  ps__file_map_min = ps__json_split_min = (size_t) 1 << 20;

  char *text;
  size_t len;
  ps_diag d;
  ps_diag_init (&d, path);
  assert_int_equal (ps_file_read_all (path, (size_t) 1 << 30, &text, &len, &d), 0);
  assert_true (len > ((size_t) 2 << 20));
  ps_graph want, g;
  assert_int_equal (ps_import_graph_mem (&want, text, len, path, &d), 0);
  assert_int_equal (ps_import_graph_file (&g, path, NULL, &d), 0);
  assert_int_equal (g.n_nodes, want.n_nodes);
  assert_int_equal (g.n_buffers, want.n_buffers);
  assert_int_equal (g.n_edges, want.n_edges);
  for (uint32_t v = 0; v < g.n_nodes; v += 997)
    assert_string_equal (ps_graph_str (&g, g.nodes[v].name),
                         ps_graph_str (&want, want.nodes[v].name));
  assert_int_equal (d.errors, 0);
  ps_graph_free (&g);
  ps_graph_free (&want);
  free (text);

  d.progress = cut_at_first_parse;
  d.progress_ctx = path;
  assert_true (ps_import_graph_file (&g, path, NULL, &d) < 0);
  assert_int_equal (d.errors, 1);
  assert_int_equal (d.count, 1);
  assert_true (diag_says (&d, "was cut short while it was read"));
  assert_int_equal (g.n_nodes, 0);
  ps_graph_free (&g);
  ps_diag_free (&d);
  ps__file_map_min = saved_min;
  ps__json_split_min = saved_split;
}

/* A read asks whether to go on: a pipe whose writer never comes is given
 * up when the caller says so, and a large file stops part way. */
static void
core_file_read_cancelled (void **state)
{
  (void) state;
  char fifo[256], big[256];
  path_in (fifo, sizeof fifo, "never.pipe");
  assert_int_equal (mkfifo (fifo, 0600), 0);
  alarm (20);
  char *data = NULL;
  size_t len;
  ps_diag d;
  ps_diag_init (&d, fifo);
  d.progress = stop_at_third;
  progress_calls = 0;
  assert_int_equal (ps_file_read_all (fifo, 1 << 20, &data, &len, &d), PS_ECANCELED);
  assert_int_equal (progress_calls, 3);
  assert_true (diag_says (&d, "was cancelled"));
  ps_diag_free (&d);
  alarm (0);

  /* 64 MiB: eight pieces of 8 MiB; stopped at the third. */
  path_in (big, sizeof big, "big.bin");
  int fd = open (big, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  assert_true (fd >= 0);
  assert_int_equal (ftruncate (fd, 64 << 20), 0);
  close (fd);
  ps_diag_init (&d, big);
  d.progress = stop_at_third;
  progress_calls = 0;
  assert_int_equal (ps_file_read_all (big, 1u << 30, &data, &len, &d), PS_ECANCELED);
  assert_int_equal (progress_calls, 3);
  assert_null (data);
  ps_diag_free (&d);
}

/* The record of inputs has no fixed size: after 1,100 more inputs (an
 * app reading kernel-cache entries, say) the first is still guarded. */
/* A file made where an input was deleted may get the input's inode (ext4
 * hands the freed one out at once): it is a new file, not the input, and
 * may be written.  An input replaced by rename, as editors save, stays
 * guarded. */
static void
core_file_input_identity (void **state)
{
  (void) state;
  char a[256], b[256], err[256];
  char *data;
  size_t len;
  ps_diag d;
  ps_diag_init (&d, "identity");
  bool reused = false;
  for (int i = 0; i < 50 && !reused; i++) {
    snprintf (a, sizeof a, "%s/gone-%02d.json", dir, i);
    put (a, "{}");
    struct stat sa, sb;
    assert_int_equal (stat (a, &sa), 0);
    assert_int_equal (ps_file_read_all (a, 1 << 20, &data, &len, &d), 0);
    free (data);
    assert_int_equal (unlink (a), 0);
    snprintf (b, sizeof b, "%s/new-%02d.svg", dir, i);
    put (b, "old");
    assert_int_equal (stat (b, &sb), 0);
    reused = sb.st_ino == sa.st_ino && sb.st_dev == sa.st_dev;
    assert_false (ps_file_is_input (b));
    assert_int_equal (ps_file_write_bytes (b, "new", 3, err, sizeof err), 0);
  }
  if (!reused)
    print_message ("(this file system gave no freed inode to a new file)\n");

  char in[256], tmp[256];
  path_in (in, sizeof in, "edited.json");
  put (in, "{}");
  assert_int_equal (ps_file_read_all (in, 1 << 20, &data, &len, &d), 0);
  free (data);
  path_in (tmp, sizeof tmp, ".edited.json.swp");
  put (tmp, "{ }");
  assert_int_equal (rename (tmp, in), 0);
  assert_true (ps_file_is_input (in));
  assert_int_equal (ps_file_write_bytes (in, "over", 4, err, sizeof err), PS_EINVAL);
  char *now = slurp (in);
  assert_string_equal (now, "{ }");
  free (now);
  assert_int_equal (d.errors, 0);
  ps_diag_free (&d);
}

static void
core_file_inputs_never_forgotten (void **state)
{
  (void) state;
  char first[256], p[256], err[256];
  path_in (first, sizeof first, "graph.json");
  put (first, "{}");
  char *data;
  size_t len;
  ps_diag d;
  ps_diag_init (&d, "inputs");
  assert_int_equal (ps_file_read_all (first, 1 << 20, &data, &len, &d), 0);
  free (data);
  for (int i = 0; i < 1100; i++) {
    snprintf (p, sizeof p, "%s/in-%04d", dir, i);
    put (p, "x");
    assert_int_equal (ps_file_read_named (p, 1 << 20, &data, &len, &d), 0);
    free (data);
    assert_int_equal (unlink (p), 0);
  }
  assert_int_equal (d.errors, 0);
  ps_diag_free (&d);
  assert_true (ps_file_is_input (first));
  assert_int_equal (ps_file_write_bytes (first, "over", 4, err, sizeof err), PS_EINVAL);
  char *now = slurp (first);
  assert_string_equal (now, "{}");
  free (now);
}

/* ---- writing -------------------------------------------------------------- */

static mode_t
mode_of (const char *path)
{
  struct stat st;
  assert_int_equal (stat (path, &st), 0);
  return st.st_mode & 07777;
}

/* New files get 0666 less the umask; a replaced file keeps its
 * permissions but not a setuid or setgid bit; a file without any write
 * permission is refused and left as it was. */
static void
core_file_write_modes (void **state)
{
  (void) state;
  char p[256], err[256];
  static const mode_t masks[] = { 022, 077, 0, 027 };
  for (size_t i = 0; i < sizeof masks / sizeof *masks; i++) {
    snprintf (p, sizeof p, "%s/new-%zu", dir, i);
    mode_t old = umask (masks[i]);
    int r = ps_file_write_bytes (p, "x", 1, err, sizeof err);
    umask (old);
    assert_int_equal (r, 0);
    assert_int_equal (mode_of (p), 0666 & ~masks[i]);
  }

  path_in (p, sizeof p, "tool");
  put (p, "old");
  assert_int_equal (chmod (p, 06755), 0);
  assert_int_equal (ps_file_write_bytes (p, "new", 3, err, sizeof err), 0);
  assert_int_equal (mode_of (p), 0755);
  path_in (p, sizeof p, "private");
  put (p, "old");
  assert_int_equal (chmod (p, 0640), 0);
  assert_int_equal (ps_file_write_bytes (p, "new", 3, err, sizeof err), 0);
  assert_int_equal (mode_of (p), 0640);

  path_in (p, sizeof p, "frozen");
  put (p, "old");
  assert_int_equal (chmod (p, 0444), 0);
  assert_int_equal (ps_file_write_bytes (p, "new", 3, err, sizeof err), PS_EIO);
  assert_non_null (strstr (err, "it is read-only (mode 0444)"));
  char *now = slurp (p);
  assert_string_equal (now, "old");
  free (now);
  assert_int_equal (mode_of (p), 0444);

  /* An empty name is no file. */
  assert_int_equal (ps_file_write_bytes ("", "x", 1, err, sizeof err), PS_EINVAL);
}

/* A name of the longest a file system allows (255 bytes) can be written
 * and replaced: the temporary file's name is short. */
static void
core_file_write_long_name (void **state)
{
  (void) state;
  for (size_t n = 247; n <= 255; n += 4) {
    char name[256], p[512], err[256];
    memset (name, 'n', n);
    name[n] = '\0';
    memcpy (name + n - 5, ".json", 5);
    snprintf (p, sizeof p, "%s/%s", dir, name);
    assert_int_equal (ps_file_write_bytes (p, "one", 3, err, sizeof err), 0);
    assert_int_equal (ps_file_write_bytes (p, "two", 3, err, sizeof err), 0);
    char *now = slurp (p);
    assert_string_equal (now, "two");
    free (now);
    unlink (p);
  }
}

/* Links: a single link to no file yet is written through (the file is
 * created where it points), a chain of links that ends nowhere and a
 * loop are errors, and no link is ever replaced by a regular file. */
static void
core_file_write_links (void **state)
{
  (void) state;
  char a[256], b[256], target[256], err[256];
  struct stat st;
  path_in (a, sizeof a, "a.json");
  path_in (b, sizeof b, "b.json");
  path_in (target, sizeof target, "target.json");

  assert_int_equal (symlink ("target.json", a), 0);
  assert_int_equal (ps_file_write_bytes (a, "one", 3, err, sizeof err), 0);
  assert_int_equal (lstat (a, &st), 0);
  assert_true (S_ISLNK (st.st_mode));
  char *now = slurp (target);
  assert_string_equal (now, "one");
  free (now);
  unlink (a);
  unlink (target);

  /* a -> b -> nothing */
  assert_int_equal (symlink ("b.json", a), 0);
  assert_int_equal (symlink ("target.json", b), 0);
  assert_int_equal (ps_file_write_bytes (a, "two", 3, err, sizeof err), PS_EIO);
  assert_non_null (strstr (err, "a symbolic link that leads to no file"));
  assert_int_equal (lstat (a, &st), 0);
  assert_true (S_ISLNK (st.st_mode));
  assert_int_equal (lstat (b, &st), 0);
  assert_true (S_ISLNK (st.st_mode));
  assert_int_not_equal (lstat (target, &st), 0);
  unlink (b);

  /* a -> b -> a */
  assert_int_equal (symlink ("a.json", b), 0);
  assert_int_equal (ps_file_write_bytes (a, "three", 5, err, sizeof err), PS_EIO);
  assert_non_null (strstr (err, strerror (ELOOP)));
  assert_int_equal (lstat (a, &st), 0);
  assert_true (S_ISLNK (st.st_mode));
  assert_int_equal (lstat (b, &st), 0);
  assert_true (S_ISLNK (st.st_mode));
  unlink (a);
  unlink (b);
  char names[1024];
  listing (names, sizeof names);
  assert_string_equal (names, "");
}

static int
write_lots (FILE *out, void *ctx)
{
  (void) ctx;
  static const char line[] = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcd\n";
  for (int i = 0; i < 4096; i++)
    if (fputs (line, out) == EOF)
      return PS_EIO;
  return 0;
}

/* A full device is reported as such, by the writer of files and by the
 * one of standard output. */
static void
core_file_write_no_space (void **state)
{
  (void) state;
  if (access ("/dev/full", W_OK) != 0)
    fail_msg ("/dev/full is missing: cannot test a full device");
  char err[256];
  assert_int_equal (ps_file_write_atomic ("/dev/full", write_lots, NULL, err, sizeof err), PS_EIO);
  assert_non_null (strstr (err, "cannot write /dev/full: No space left on device"));

  int saved = dup (STDOUT_FILENO), full = open ("/dev/full", O_WRONLY);
  assert_true (saved >= 0 && full >= 0);
  fflush (stdout);
  assert_int_equal (dup2 (full, STDOUT_FILENO), STDOUT_FILENO);
  int r = ps_file_write_stdout (write_lots, NULL, err, sizeof err);
  assert_int_equal (dup2 (saved, STDOUT_FILENO), STDOUT_FILENO);
  close (saved);
  close (full);
  assert_int_equal (r, PS_EIO);
  assert_non_null (strstr (err, "cannot write to standard output: No space left on device"));
}

/* While the writer runs, the folder holds only what it held before: the
 * content gets a name once it is complete. */
static int
write_and_look (FILE *out, void *ctx)
{
  listing (ctx, 1024);
  return fputs ("done", out) == EOF ? PS_EIO : 0;
}

static int
write_then_term (FILE *out, void *ctx)
{
  (void) ctx;
  fputs ("half", out);
  fflush (out);
  raise (SIGTERM);
  return 0;
}

static void
core_file_write_temporaries (void **state)
{
  (void) state;
  char p[256], err[256], before[1024], during[1024], after[1024];
  path_in (p, sizeof p, "out.json");
  put (p, "old");
  listing (before, sizeof before);
  assert_int_equal (ps_file_write_atomic (p, write_and_look, during, err, sizeof err), 0);
  assert_string_equal (during, before);
  listing (after, sizeof after);
  assert_string_equal (after, before);
  char *now = slurp (p);
  assert_string_equal (now, "done");
  free (now);
  put (p, "old");

  /* Killed while writing, on both ways of making the temporary file: the
   * old file stays, and nothing is left beside it. */
  for (int named = 0; named < 2; named++) {
    pid_t pid = fork ();
    assert_true (pid >= 0);
    if (pid == 0) {
      ps__file_named_temporaries = named;
      ps_file_remove_temporaries_on_signals ();
      ps_file_write_atomic (p, write_then_term, NULL, err, sizeof err);
      _exit (0);
    }
    int status;
    assert_int_equal (waitpid (pid, &status, 0), pid);
    assert_true (WIFSIGNALED (status));
    assert_int_equal (WTERMSIG (status), SIGTERM);
    listing (after, sizeof after);
    assert_string_equal (after, before);
    now = slurp (p);
    assert_string_equal (now, "old");
    free (now);
  }
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup_teardown (core_file_special_refused, setup, teardown),
    cmocka_unit_test_setup_teardown (core_file_pipe_read_once, setup, teardown),
    cmocka_unit_test_setup_teardown (core_file_read_cancelled, setup, teardown),
    cmocka_unit_test_setup_teardown (core_file_read_halves, setup, teardown),
    cmocka_unit_test_setup_teardown (core_file_map_cut, setup, teardown),
    cmocka_unit_test_setup_teardown (core_file_map_other_sigbus, setup, teardown),
    cmocka_unit_test_setup_teardown (core_file_map_graph_cut, setup, teardown),
    cmocka_unit_test_setup_teardown (core_file_inputs_never_forgotten, setup, teardown),
    cmocka_unit_test_setup_teardown (core_file_input_identity, setup, teardown),
    cmocka_unit_test_setup_teardown (core_file_write_modes, setup, teardown),
    cmocka_unit_test_setup_teardown (core_file_write_long_name, setup, teardown),
    cmocka_unit_test_setup_teardown (core_file_write_links, setup, teardown),
    cmocka_unit_test_setup_teardown (core_file_write_no_space, setup, teardown),
    cmocka_unit_test_setup_teardown (core_file_write_temporaries, setup, teardown),
  };
  return cmocka_run_group_tests_name ("/core/file", tests, NULL, NULL);
}
