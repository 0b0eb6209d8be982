/* ps-test-cli.h: what the profiler tests share for running planscope-cli:
 * the source root, every example (and loading one), running the CLI (PS_CLI names it, else
 * the build's) with extra environment and checking its exit code and
 * output, and temporary folders. */
#ifndef PS_TEST_CLI_H
#define PS_TEST_CLI_H

#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "ps-import.h"
#include "ps-plan.h"

#ifndef PS_TEST_SOURCE_ROOT
#define PS_TEST_SOURCE_ROOT "."
#endif

static inline const char *
source_root (void)
{
  const char *r = getenv ("PS_SOURCE_ROOT");
  return r && *r ? r : PS_TEST_SOURCE_ROOT;
}

static inline void
example_path (char *buf, size_t cap, const char *name)
{
  snprintf (buf, cap, "'%.3000s/data/examples/%.120s.json'", source_root (), name);
}

/* Every JSON file of data/examples by name ("transformer-block"), sorted: a new
 * example is tested without being listed here. */
#define PS_TEST_MAX_EXAMPLES 64
static inline size_t
test_examples (char names[PS_TEST_MAX_EXAMPLES][128])
{
  char pattern[4200];
  snprintf (pattern, sizeof pattern, "%s/data/examples/*.json", source_root ());
  glob_t gl;
  size_t n = 0;
  if (glob (pattern, 0, NULL, &gl) == 0) {
    for (size_t i = 0; i < gl.gl_pathc && n < PS_TEST_MAX_EXAMPLES; i++) {
      const char *base = strrchr (gl.gl_pathv[i], '/');
      base = base ? base + 1 : gl.gl_pathv[i];
      size_t len = strlen (base);
      if (len > 5 && len - 5 < 128)
        snprintf (names[n++], 128, "%.*s", (int) (len - 5), base);
    }
    globfree (&gl);
  }
  assert_true (n >= 6); /* the examples are there */
  return n;
}

/* Loads a graph into g (initialised here), from the file at path or, when
 * text is not NULL, from text (path then names it), and, when p is not
 * NULL, plans it with the default options; fails the test on error. */
static inline void
test_load (const char *path, const char *text, ps_graph *g, ps_plan *p)
{
  ps_graph_init (g);
  ps_diag d;
  ps_diag_init (&d, path);
  int rc = text ? ps_import_graph_mem (g, text, strlen (text), path, &d)
                : ps_import_graph_file (g, path, NULL, &d);
  if (rc == 0 && p) {
    ps_plan_options o;
    ps_plan_options_init (&o);
    rc = ps_plan_build (p, g, &o, &d);
  }
  if (rc != 0)
    ps_diag_print (&d, stderr);
  ps_diag_free (&d);
  assert_int_equal (rc, 0);
}

static inline void
test_load_file (const char *path, ps_graph *g, ps_plan *p)
{
  test_load (path, NULL, g, p);
}

/* The same for example NAME ("transformer-block"). */
static inline void
test_load_example (const char *name, ps_graph *g, ps_plan *p)
{
  char path[4300];
  snprintf (path, sizeof path, "%.3000s/data/examples/%.120s.json", source_root (), name);
  test_load_file (path, g, p);
}

/* The CLI under test: $PS_CLI (a bundle run on another machine), else the
 * one this build made; NULL when neither. */
static inline const char *
test_cli (void)
{
  const char *env = getenv ("PS_CLI");
  if (env && *env)
    return env;
#ifdef PS_TEST_CLI
  return PS_TEST_CLI;
#else
  return NULL;
#endif
}

static inline int
run_cli (const char *env, const char *args, char **out)
{
  const char *cli = test_cli ();
  if (cli) {
  size_t cl = strlen (env ? env : "") + strlen (cli) + strlen (args) + 32;
  char *cmd = malloc (cl);
  assert_non_null (cmd);
  snprintf (cmd, cl, "env %s '%s' %s 2>&1", env ? env : "", cli, args);
  FILE *f = popen (cmd, "r");
  free (cmd);
  assert_non_null (f);
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc (cap + 1);
  assert_non_null (buf);
  size_t got;
  while ((got = fread (buf + n, 1, cap - n, f)) > 0) {
    n += got;
    if (n == cap) {
      cap *= 2;
      buf = realloc (buf, cap + 1);
      assert_non_null (buf);
    }
  }
  buf[n] = '\0';
  int st = pclose (f);
  if (out)
    *out = buf;
  else
    free (buf);
  return WIFEXITED (st) ? WEXITSTATUS (st) : -1;
  }
  (void) env, (void) args, (void) out;
  fail_msg ("no planscope-cli to test: set PS_CLI");
  return -1;
}

static inline void
expect_cli (const char *env, const char *args, int code, const char *needle)
{
  char *out = NULL;
  int rc = run_cli (env, args, &out);
  if (rc != code || (needle && !strstr (out, needle)))
    fail_msg ("planscope-cli %s (env %s): exit %d, expected %d with \"%s\"; output:\n%s", args,
              env ? env : "", rc, code, needle ? needle : "", out);
  free (out);
}

static inline char *
make_temp_dir (void)
{
  char tmpl[] = "/tmp/planscope-test-XXXXXX";
  char *d = mkdtemp (tmpl);
  assert_non_null (d);
  return strdup (d);
}

static inline void
remove_dir (char *dir)
{
  char cmd[4200];
  snprintf (cmd, sizeof cmd, "rm -rf '%s'", dir);
  assert_int_equal (system (cmd), 0);
  free (dir);
}

#endif
