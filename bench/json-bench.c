/* json-bench.c: measures the JSON reader's token throughput.
 *
 *   json-bench gen N OUT        writes a graph-like document of N nodes to OUT
 *   json-bench FILE [--stream BYTES] [--repeat K] [--skip]
 *   json-bench FILE --load [--repeat K]
 *
 * The file is read into memory first, so the figures are the reader's own
 * (no disk).  --stream feeds it through the callback BYTES at a time;
 * --skip skips the "nodes" array with ps_json_skip_value instead of pulling
 * every token.  --load times the whole graph load instead, tokens to the
 * finished graph with its edges (ps_import_graph_mem, what `planscope-cli
 * --timing` reports as "parse"), and prints the node, buffer and edge
 * counts and the page faults of the last load (the memory it touched
 * first: on a virtual machine the kernel's page clearing is a good part of
 * a load).  The best of K runs is reported, in wall-clock and in CPU time
 * (the second is steadier on a busy machine); the reader's MB/s and
 * tokens/s are from the CPU time, the load's MB/s from the wall-clock
 * time (a long load reads its nodes on two threads) and its CPU MB/s
 * too. */
#include "ps-import.h"
#include "ps-json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static double
now (clockid_t clock)
{
  struct timespec ts;
  clock_gettime (clock, &ts);
  return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

static int
gen (long n, const char *path)
{
  FILE *f = fopen (path, "w");
  if (!f) {
    perror (path);
    return 1;
  }
  long nbuf = n / 2 + 3;
  fprintf (f, "{\n  \"format\": \"planscope-graph\", \"version\": 1, \"name\": \"bench\",\n");
  fprintf (f, "  \"buffers\": [\n");
  for (long i = 0; i < nbuf; i++)
    fprintf (f, "    {\"name\": \"b%ld\", \"bytes\": %ld}%s\n", i, 4096 + (i % 977) * 64,
             i + 1 < nbuf ? "," : "");
  fprintf (f, "  ],\n  \"nodes\": [\n");
  for (long i = 0; i < n; i++)
    fprintf (f,
             "    {\"name\": \"n%ld\", \"op\": \"kernel\", \"function\": \"f%ld\", "
             "\"grid\": [%ld, 16], \"block\": 256, \"reads\": [\"b%ld\", \"b%ld\"], "
             "\"writes\": [\"b%ld\"], \"fusible\": %s, \"cost_ns\": %ld.%ld}%s\n",
             i, i % 13, 1 + i % 64, i / 2, (i / 2 + 1) % nbuf, i / 2 + 2, i % 3 ? "true" : "false",
             1000 + (i * 37) % 100000, i % 10, i + 1 < n ? "," : "");
  fprintf (f, "  ]\n}\n");
  if (fclose (f) != 0) {
    perror (path);
    return 1;
  }
  return 0;
}

typedef struct {
  const char *data;
  size_t len, pos, chunk;
} mem_src;

static long
mem_read (void *ctx, char *buf, size_t cap)
{
  mem_src *m = ctx;
  size_t n = m->len - m->pos;
  if (n > m->chunk)
    n = m->chunk;
  if (n > cap)
    n = cap;
  memcpy (buf, m->data + m->pos, n);
  m->pos += n;
  return (long) n;
}

static int
run_once (const char *data, size_t len, size_t stream_chunk, int skip, long *tokens, double *wall,
          double *cpu)
{
  ps_json_reader r;
  mem_src src = { data, len, 0, stream_chunk };
  double w0 = now (CLOCK_MONOTONIC), c0 = now (CLOCK_PROCESS_CPUTIME_ID);
  int rc = stream_chunk ? ps_json_init_stream (&r, mem_read, &src)
                        : ps_json_init_mem (&r, data, len);
  if (rc < 0) {
    fprintf (stderr, "init failed\n");
    return 1;
  }
  long count = 0;
  ps_json_token t;
  while ((t = ps_json_next (&r)) > PS_JSON_EOF) {
    count++;
    if (skip && t == PS_JSON_KEY && r.depth == 1 && strcmp (r.str, "nodes") == 0)
      if (ps_json_skip_value (&r) == PS_JSON_ERROR)
        break;
  }
  *wall = now (CLOCK_MONOTONIC) - w0;
  *cpu = now (CLOCK_PROCESS_CPUTIME_ID) - c0;
  *tokens = count;
  if (t == PS_JSON_ERROR) {
    fprintf (stderr, "%u:%u: error: %s\n", r.error_line, r.error_col, r.error);
    ps_json_close (&r);
    return 1;
  }
  ps_json_close (&r);
  return 0;
}

static long
minor_faults (void)
{
  struct rusage ru;
  getrusage (RUSAGE_SELF, &ru);
  return ru.ru_minflt;
}

static int
load_once (const char *path, const char *data, size_t len, ps_graph *out, double *wall,
           double *cpu, long *faults)
{
  ps_diag diag;
  ps_diag_init (&diag, path);
  long f0 = minor_faults ();
  double w0 = now (CLOCK_MONOTONIC), c0 = now (CLOCK_PROCESS_CPUTIME_ID);
  int rc = ps_import_graph_mem (out, data, len, path, &diag);
  *wall = now (CLOCK_MONOTONIC) - w0;
  *cpu = now (CLOCK_PROCESS_CPUTIME_ID) - c0;
  *faults = minor_faults () - f0;
  ps_diag_print (&diag, stderr);
  ps_diag_free (&diag);
  return rc < 0;
}

int
main (int argc, char **argv)
{
  if (argc >= 4 && strcmp (argv[1], "gen") == 0)
    return gen (atol (argv[2]), argv[3]);
  if (argc < 2) {
    fprintf (stderr, "usage: json-bench gen N OUT | json-bench FILE [--stream BYTES] "
                     "[--repeat K] [--skip] | json-bench FILE --load [--repeat K]\n");
    return 2;
  }
  size_t chunk = 0;
  int repeat = 3, skip = 0, load = 0;
  for (int i = 2; i < argc; i++) {
    if (strcmp (argv[i], "--stream") == 0 && i + 1 < argc)
      chunk = (size_t) atol (argv[++i]);
    else if (strcmp (argv[i], "--repeat") == 0 && i + 1 < argc)
      repeat = atoi (argv[++i]);
    else if (strcmp (argv[i], "--skip") == 0)
      skip = 1;
    else if (strcmp (argv[i], "--load") == 0)
      load = 1;
  }

  FILE *f = fopen (argv[1], "rb");
  if (!f) {
    perror (argv[1]);
    return 1;
  }
  fseek (f, 0, SEEK_END);
  long size = ftell (f);
  fseek (f, 0, SEEK_SET);
  char *data = malloc (size > 0 ? (size_t) size : 1);
  if (!data || fread (data, 1, (size_t) size, f) != (size_t) size) {
    fprintf (stderr, "cannot read %s\n", argv[1]);
    return 1;
  }
  fclose (f);

  double best_wall = 1e30, best = 1e30;
  if (load) {
    ps_graph g;
    uint32_t nodes = 0, buffers = 0, edges = 0;
    long faults = 0;
    for (int k = 0; k < repeat; k++) {
      double wall, cpu;
      if (load_once (argv[1], data, (size_t) size, &g, &wall, &cpu, &faults))
        return 1;
      nodes = g.n_nodes;
      buffers = g.n_buffers;
      edges = g.succ_off ? g.succ_off[g.n_nodes] : 0;
      ps_graph_free (&g);
      best_wall = wall < best_wall ? wall : best_wall;
      best = cpu < best ? cpu : best;
    }
    double mb = (double) size / 1e6;
    printf ("%s: %.1f MB, %u nodes, %u buffers, %u edges, load, best of %d: %.3f s wall, "
            "%.3f s CPU, %.0f MB/s (%.0f MB/s of CPU), %ld page faults\n",
            argv[1], mb, nodes, buffers, edges, repeat, best_wall, best, mb / best_wall,
            mb / best, faults);
    free (data);
    return 0;
  }
  long tokens = 0;
  for (int k = 0; k < repeat; k++) {
    double wall, cpu;
    if (run_once (data, (size_t) size, chunk, skip, &tokens, &wall, &cpu))
      return 1;
    best_wall = wall < best_wall ? wall : best_wall;
    best = cpu < best ? cpu : best;
  }
  double mb = (double) size / 1e6;
  printf ("%s: %.1f MB, %ld tokens, %s%s, best of %d: %.3f s wall, %.3f s CPU, %.0f MB/s, "
          "%.1f M tokens/s\n",
          argv[1], mb, tokens, chunk ? "stream" : "memory", skip ? " (skip nodes)" : "", repeat,
          best_wall, best, mb / best, (double) tokens / best / 1e6);
  free (data);
  return 0;
}
