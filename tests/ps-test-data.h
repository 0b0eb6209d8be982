/* ps-test-data.h: the third-party files the tests read (real CUDA-graph
 * dumps, Kineto traces), which stay outside the repository: in
 * $PLANSCOPE_REAL_DATA when set, else in ../shared/data beside the
 * checkout.  That folder holds real/ and wild/ (see their SOURCES.md).
 *
 * A suite that needs them keeps those tests in a group of their own, run
 * when the executable is given the argument "real-data".  The build
 * registers that run as a test of its own only where the folder exists
 * and otherwise says, at configure time and in the test command's last
 * line, which suites it left out and why (tests/meson.build). */
#ifndef PS_TEST_DATA_H
#define PS_TEST_DATA_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#ifndef PS_TEST_SOURCE_ROOT
#define PS_TEST_SOURCE_ROOT "."
#endif

/* The folder holding real/ and wild/, or NULL when there is none. */
static inline const char *
ps_test_data_root (void)
{
  static char buf[4096];
  const char *env = getenv ("PLANSCOPE_REAL_DATA");
  if (env && *env)
    snprintf (buf, sizeof buf, "%s", env);
  else {
    const char *root = getenv ("PS_SOURCE_ROOT");
    snprintf (buf, sizeof buf, "%s/../shared/data", root && *root ? root : PS_TEST_SOURCE_ROOT);
  }
  char real[4200];
  snprintf (real, sizeof real, "%s/real", buf);
  struct stat st;
  return stat (real, &st) == 0 && S_ISDIR (st.st_mode) ? buf : NULL;
}

/* The path of a file under that folder ("real/kineto/after_fix_trace.json");
 * eight calls can be in use at once. */
static inline const char *
ps_test_data (const char *rel)
{
  static char bufs[8][4608];
  static unsigned next;
  const char *root = ps_test_data_root ();
  char *buf = bufs[next++ % 8];
  snprintf (buf, sizeof bufs[0], "%s/%s", root ? root : "(no third-party data)", rel);
  return buf;
}

/* A real cudaGraphDebugDotPrint dump of real/cudagraph_dot. */
static inline const char *
ps_test_data_dump (const char *name)
{
  char rel[256];
  snprintf (rel, sizeof rel, "real/cudagraph_dot/%s", name);
  return ps_test_data (rel);
}

/* Runs `tests`, or with the argument "real-data" the group that reads the
 * third-party files; that group fails at once, saying where it looked,
 * when the folder is missing. */
#define PS_TEST_MAIN_WITH_DATA(argc, argv, name, tests, data_tests, setup, teardown)          \
  do {                                                                                      \
    if ((argc) > 1 && strcmp ((argv)[1], "real-data") == 0) {                               \
      if (!ps_test_data_root ()) {                                                          \
        fprintf (stderr,                                                                    \
                 "the third-party data is missing: set PLANSCOPE_REAL_DATA to the folder "  \
                 "that holds real/ and wild/, or put shared/data beside the checkout\n");   \
        return 1;                                                                           \
      }                                                                                     \
      return cmocka_run_group_tests_name (name "/real-data", data_tests, setup, teardown);  \
    }                                                                                       \
    return cmocka_run_group_tests_name (name, tests, setup, teardown);                      \
  } while (0)

#endif
