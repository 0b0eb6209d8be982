/* ps-import.c: the front door for graph files (see ps-import.h): one read,
 * one decision on the format, one loader. */
#include "ps-import.h"

#include <stdlib.h>
#include <string.h>

#include "import/dot/ps-dot-import.h"
#include "import/json/ps-json-load.h"
#include "ps-file.h"

ps_graph_format
ps_import_detect (const char *data, size_t len)
{
  return ps__dot_is_dump (data, len) ? PS_GRAPH_FORMAT_DOT : PS_GRAPH_FORMAT_JSON;
}

int
ps_import_graph_mem (ps_graph *g, const char *data, size_t len, const char *path, ps_diag *diag)
{
  if (data && ps_import_detect (data, len) == PS_GRAPH_FORMAT_DOT)
    return ps__dot_load_graph (g, data, len, path, diag);
  return ps__json_load_graph (g, data, len, path, diag);
}

int
ps_import_graph_file (ps_graph *g, const char *path, ps_timing *timing, ps_diag *diag)
{
  ps_graph_init (g);
  double t = ps_clock_now ();
  char *data;
  size_t len;
  int ret = ps_file_read_all (path, (size_t) PS_MAX_FILE_BYTES, &data, &len, diag);
  ps_timing_mark (timing, "read", &t);
  if (ret < 0)
    return ret;
  ret = ps_import_graph_mem (g, data, len, strcmp (path, "-") == 0 ? "<stdin>" : path, diag);
  ps_timing_mark (timing, "parse", &t);
  free (data);
  return ret;
}
