/* ps-test-cli.h: what the profiler tests share for running planscope-cli:
 * the source root, running the CLI with extra environment
 * and checking its exit code and output, and temporary folders. */
#ifndef PS_TEST_CLI_H
#define PS_TEST_CLI_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

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
  snprintf (buf, cap, "'%s/data/examples/%s.json'", source_root (), name);
}

static inline int
run_cli (const char *env, const char *args, char **out)
{
#ifdef PS_TEST_CLI
  size_t cl = strlen (env ? env : "") + strlen (PS_TEST_CLI) + strlen (args) + 32;
  char *cmd = malloc (cl);
  assert_non_null (cmd);
  snprintf (cmd, cl, "env %s '%s' %s 2>&1", env ? env : "", PS_TEST_CLI, args);
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
#else
  (void) env, (void) args, (void) out;
  fail_msg ("PS_TEST_CLI not set");
  return -1;
#endif
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
