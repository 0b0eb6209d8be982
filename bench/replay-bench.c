/* replay-bench.c: how long importing and replaying a trace takes.
 *
 *   replay-bench TRACE... [--repeat K]
 *
 * Each trace is read into memory first, so the figures are the import
 * (decompression, parsing, the graph), the plan, the simulations and the
 * comparison of ps_replay_trace, not the disk.  Prints per trace its
 * events' size, GPU ops, and the best and median of K runs (wall clock). */
#include "ps-file.h"
#include "ps-replay.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double
now (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

int
main (int argc, char **argv)
{
  int repeat = 5;
  for (int i = 1; i < argc; i++)
    if (strcmp (argv[i], "--repeat") == 0 && i + 1 < argc)
      repeat = atoi (argv[++i]);
  if (repeat < 1 || repeat > 1000)
    repeat = 5;
  printf ("%-44s %10s %8s %10s %10s\n", "trace", "bytes", "GPU ops", "best s", "median s");
  for (int i = 1; i < argc; i++) {
    if (strcmp (argv[i], "--repeat") == 0) {
      i++;
      continue;
    }
    ps_diag d;
    ps_diag_init (&d, argv[i]);
    char *data;
    size_t len;
    if (ps_file_read_all (argv[i], (size_t) 1 << 31, &data, &len, &d) != 0) {
      ps_diag_print (&d, stderr);
      return 1;
    }
    double t[1000];
    uint32_t ops = 0;
    for (int k = 0; k < repeat; k++) {
      ps_replay r;
      double t0 = now ();
      int rc = ps_replay_trace (data, len, argv[i], NULL, ps_device_builtin (0), &r, &d);
      t[k] = now () - t0;
      if (rc != 0) {
        ps_diag_print (&d, stderr);
        return 1;
      }
      ops = r.gpu_ops;
      ps_replay_free (&r);
    }
    qsort (t, (size_t) repeat, sizeof t[0], cmp_double);
    const char *base = strrchr (argv[i], '/');
    printf ("%-44s %10zu %8u %10.3f %10.3f\n", base ? base + 1 : argv[i], len, ops, t[0],
            t[repeat / 2]);
    free (data);
    ps_diag_free (&d);
  }
  return 0;
}
