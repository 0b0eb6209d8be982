/* ps-trace-import.c: streaming Chrome / Kineto trace import (see
 * ps-trace-import.h).
 *
 * The first pass reads the file once, keeping only the fields planscope
 * uses in compact arrays: GPU work, cuda_sync records, runtime calls (by
 * correlation id) and planscope stalls.  Names are interned, since real
 * traces launch the same few kernels (with names of kilobytes) thousands of
 * times.  The second pass (resolve) turns them into a timeline once every
 * stream's work is known and sorted. */
#include "ps-trace-import.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "ps-array.h"
#include "ps-file.h"
#include "ps-json.h"
#include "ps-trace-private.h"
#include "util/ps-strmap.h"

typedef struct {
  ps_timeline *tl;
  ps_trace_stats *st;
  ps_diag *diag;
  ps__trace_op *ops;
  uint32_t n_ops, ops_cap;
  ps__trace_sync *syncs;
  uint32_t n_syncs, syncs_cap;
  ps__trace_call *rts;
  uint32_t n_rts, rts_cap;
  ps__trace_cpu *cpus;
  uint32_t n_cpus, cpus_cap;
  ps_strmap names;
  char *name;
  size_t name_len;
  uint32_t name_cap;
  char device[64];
  ps_json_reader *r;
  const ps__read_stop *stop; /* set by the file's reader when it gives up */
  size_t input_len;          /* of JSON text in memory, for progress; 0 for a stream */
  uint32_t max_records;
} ps__trace_importer;

/* The fields of one trace event that matter here. */
typedef struct {
  char ph[8], cat[32], sync_kind[32];
  bool has_ts, has_name;
  double ts, dur;
  int64_t pid, tid, stream, device, corr, other_stream, event, rec_corr;
  int64_t ext_id, rf_id;
  uint32_t grid[3], block[3];
} event;

/* Appends one record; each kind of record is limited to max_records. */
static int
push (ps__trace_importer *im, const char *what, void *arrp, uint32_t *n, uint32_t *cap,
      size_t elem, const void *item)
{
  if (*n >= im->max_records) {
    ps_diag_error (im->diag, im->r->line, im->r->col, "the trace has more than %u %s (the limit)",
                   im->max_records, what);
    return PS_ELIMIT;
  }
  if (ps_array_grow (arrp, cap, (uint64_t) *n + 1, elem, PS_ARRAY_MAX) < 0) {
    ps_diag_error (im->diag, im->r->line, im->r->col, "out of memory after %u %s", *n, what);
    return PS_ENOMEM;
  }
  memcpy ((char *) *(void **) arrp + *n * elem, item, elem);
  (*n)++;
  return 0;
}

int
ps__read_stop_report (const ps__read_stop *stop, const ps_json_reader *r, ps_diag *diag)
{
  if (stop && stop->code == PS_ELIMIT) {
    ps_diag_error (diag, r->error_line, r->error_col, "%s", stop->why);
    return PS_ELIMIT;
  }
  if (stop && stop->code) {
    ps_diag_error (diag, 0, 0, "%s", stop->why);
    return stop->code;
  }
  ps_diag_error (diag, r->error_line, r->error_col, "%s", r->error);
  return ps_json_error_status (r);
}

static int
json_error (ps__trace_importer *im, ps_json_reader *r)
{
  return ps__read_stop_report (im->stop, r, im->diag);
}

static bool
key_is (const ps_json_reader *r, const char *k)
{
  size_t l = strlen (k);
  return r->len == l && memcmp (r->str, k, l) == 0;
}

/* An integer field: integers, or numbers with no fraction in range. */
static int64_t
int_value (const ps_json_reader *r)
{
  if (r->token != PS_JSON_NUMBER)
    return PS__TRACE_NO_ID;
  if (r->is_int)
    return r->i64;
  if (r->num == floor (r->num) && fabs (r->num) < 9e18)
    return (int64_t) r->num;
  return PS__TRACE_NO_ID;
}

static void
copy_small (char *dst, size_t cap, const ps_json_reader *r)
{
  if (r->token != PS_JSON_STRING || r->len >= cap) {
    dst[0] = 0;
    return;
  }
  memcpy (dst, r->str, r->len);
  dst[r->len] = 0;
}

/* "grid": [x, y, z]: each a count from 1 to 2^31 - 1, else all 0 (not
 * said).  The current token opens the array. */
static int
read_dims (ps__trace_importer *im, ps_json_reader *r, uint32_t *dims)
{
  bool ok = true;
  for (int k = 0;; k++) {
    ps_json_token t = ps_json_next (r);
    if (t == PS_JSON_ERROR)
      return json_error (im, r);
    if (t == PS_JSON_ARRAY_END)
      break;
    int64_t v = int_value (r);
    if (k < 3 && v >= 1 && v <= 0x7fffffff)
      dims[k] = (uint32_t) v;
    else
      ok = false;
    if (ps_json_skip_current (r) < 0)
      return json_error (im, r);
  }
  if (!ok || !dims[0])
    dims[0] = dims[1] = dims[2] = 0;
  for (int k = 1; k < 3 && dims[0]; k++)
    dims[k] = dims[k] ? dims[k] : 1;
  return 0;
}

static int
parse_args (ps__trace_importer *im, ps_json_reader *r, event *e)
{
  for (;;) {
    ps_json_token t = ps_json_next (r);
    if (t == PS_JSON_ERROR)
      return json_error (im, r);
    if (t == PS_JSON_OBJECT_END)
      return 0;
    int which = key_is (r, "stream")          ? 1
                : key_is (r, "device")        ? 2
                : key_is (r, "correlation")   ? 3
                : key_is (r, "cuda_sync_kind") ? 4
                : key_is (r, "wait_on_stream") ? 5
                : key_is (r, "on_stream")     ? 5
                : key_is (r, "wait_on_cuda_event_id") ? 6
                : key_is (r, "event")         ? 6
                : key_is (r, "wait_on_cuda_event_record_corr_id") ? 7
                : key_is (r, "External id")   ? 8
                : key_is (r, "Record function id") ? 9
                : key_is (r, "grid")          ? 10
                : key_is (r, "block")         ? 11
                                              : 0;
    t = ps_json_next (r);
    if (t == PS_JSON_ERROR)
      return json_error (im, r);
    switch (which) {
    case 1:
      e->stream = int_value (r);
      break;
    case 2:
      e->device = int_value (r);
      break;
    case 3:
      e->corr = int_value (r);
      break;
    case 4:
      copy_small (e->sync_kind, sizeof e->sync_kind, r);
      break;
    case 5:
      e->other_stream = int_value (r);
      break;
    case 6:
      e->event = int_value (r);
      break;
    case 7:
      e->rec_corr = int_value (r);
      break;
    case 8:
      e->ext_id = int_value (r);
      break;
    case 9:
      e->rf_id = int_value (r);
      break;
    case 10:
    case 11:
      if (t == PS_JSON_ARRAY_BEGIN) {
        int rc = read_dims (im, r, which == 10 ? e->grid : e->block);
        if (rc < 0)
          return rc;
        continue;
      }
      break;
    default:
      break;
    }
    if (ps_json_skip_current (r) < 0)
      return json_error (im, r);
  }
}

static int
keep_name (ps__trace_importer *im, const ps_json_reader *r)
{
  if (r->token != PS_JSON_STRING)
    return 0;
  if (PS_ARRAY_RESERVE (im->name, im->name_cap, (uint64_t) r->len + 1) < 0)
    return PS_ENOMEM;
  memcpy (im->name, r->str, r->len);
  im->name[r->len] = 0;
  im->name_len = r->len;
  return 1;
}

static int
intern (ps__trace_importer *im, const char *s, size_t len, uint32_t *off)
{
  ps_timeline *tl = im->tl;
  if (len > 4096)
    len = 4096;
  uint32_t h = ps__strmap_hash (s, len);
  uint32_t v = ps__strmap_find (&im->names, tl->strings, s, len, h);
  if (v != UINT32_MAX) {
    *off = v;
    return 0;
  }
  int rc = ps_timeline_add_string (tl, s, len, off);
  if (rc < 0)
    return rc;
  /* The pool copy may be shorter (cut at a UTF-8 boundary) or have NULs
   * replaced; the map keys on what the pool holds. */
  const char *k = tl->strings + *off;
  size_t kl = strlen (k);
  if (kl != len || memcmp (k, s, len) != 0)
    return 0;
  return ps__strmap_insert (&im->names, *off, h, *off);
}

static int
gpu_kind (const char *cat)
{
  if (!strcasecmp (cat, "kernel"))
    return PS_SPAN_KERNEL;
  if (!strcasecmp (cat, "gpu_memcpy") || !strcasecmp (cat, "memcpy"))
    return PS_SPAN_MEMCPY;
  if (!strcasecmp (cat, "gpu_memset") || !strcasecmp (cat, "memset"))
    return PS_SPAN_MEMSET;
  if (!strcasecmp (cat, "gpu_host_callback"))
    return PS_SPAN_HOST;
  if (!strcasecmp (cat, "gpu_other"))
    return PS_SPAN_OTHER;
  return -1;
}

static int
store_event (ps__trace_importer *im, const event *e)
{
  if (strcmp (e->ph, "X") != 0 || !e->has_ts)
    return 0;
  if (!strcasecmp (e->cat, "cpu_op")) {
    im->st->cpu_ops++;
    /* Kept for what launched GPU work (by the runtime calls inside it). */
    ps__trace_cpu c = { e->ts, e->dur > 0 ? e->dur : 0, e->pid, e->tid,
                        e->rf_id != PS__TRACE_NO_ID   ? e->rf_id
                        : e->ext_id != PS__TRACE_NO_ID ? e->ext_id
                                                       : -1,
                        PS_NONE };
    if (e->has_name) {
      int rc = intern (im, im->name, im->name_len, &c.name);
      if (rc < 0)
        return rc;
    }
    return push (im, "CPU ops", &im->cpus, &im->n_cpus, &im->cpus_cap, sizeof c, &c);
  } else if (!strcasecmp (e->cat, "cuda_profiler_range"))
    im->st->profiler_ranges++;
  else if (!strncasecmp (e->cat, "mtia", 4))
    im->st->other_device++;
  double dur = e->dur > 0 ? e->dur : 0;
  int64_t device =
      e->device != PS__TRACE_NO_ID ? e->device : (e->pid != PS__TRACE_NO_ID ? e->pid : 0);
  if (device < 0 || device > INT32_MAX)
    device = 0;
  int kind = gpu_kind (e->cat);
  if (kind >= 0) {
    int64_t stream = e->stream != PS__TRACE_NO_ID ? e->stream : e->tid;
    if (!ps__trace_valid_stream (stream))
      return 0;
    ps__trace_op op = { e->ts, dur, stream, device, e->corr > 0 ? (uint64_t) e->corr : 0, PS_NONE,
                        { e->grid[0], e->grid[1], e->grid[2] },
                        { e->block[0], e->block[1], e->block[2] }, (uint8_t) kind };
    if (!op.block[0])
      op.grid[0] = op.grid[1] = op.grid[2] = 0;
    if (e->has_name) {
      int rc = intern (im, im->name, im->name_len, &op.name);
      if (rc < 0)
        return rc;
    }
    switch (kind) {
    case PS_SPAN_KERNEL:
      im->st->kernels++;
      break;
    case PS_SPAN_MEMCPY:
      im->st->memcpys++;
      break;
    case PS_SPAN_MEMSET:
      im->st->memsets++;
      break;
    default:
      im->st->others++;
      break;
    }
    return push (im, "GPU operations", &im->ops, &im->n_ops, &im->ops_cap, sizeof op, &op);
  }
  if (!strcasecmp (e->cat, "cuda_sync")) {
    const char *k = e->sync_kind[0] ? e->sync_kind : (e->has_name ? im->name : "");
    ps__trace_sync s = { e->ts, dur, e->stream != PS__TRACE_NO_ID ? e->stream : e->tid, device,
                   e->other_stream, e->event, e->rec_corr, 0 };
    if (!strcasecmp (k, "Stream Wait Event")) {
      s.kind = PS__TRACE_SY_WAIT_EVENT;
      im->st->stream_waits++;
      if ((e->other_stream != PS__TRACE_NO_ID && e->other_stream >= 0)
          || (e->rec_corr != PS__TRACE_NO_ID && e->rec_corr >= 0))
        im->st->stream_waits_named++;
    } else if (!strcasecmp (k, "Stream Sync")) {
      s.kind = PS__TRACE_SY_STREAM;
      im->st->host_syncs++;
    } else if (!strcasecmp (k, "Event Sync")) {
      s.kind = PS__TRACE_SY_EVENT;
      im->st->host_syncs++;
    } else if (!strcasecmp (k, "Context Sync")) {
      s.kind = PS__TRACE_SY_CONTEXT;
      im->st->host_syncs++;
    } else {
      return 0;
    }
    return push (im, "synchronisation records", &im->syncs, &im->n_syncs, &im->syncs_cap,
                 sizeof s, &s);
  }
  if (!strcmp (e->cat, "stall")) {
    ps__trace_sync s = { e->ts, dur, e->stream, device, e->other_stream, e->event, PS__TRACE_NO_ID,
                   PS__TRACE_SY_OWN_STALL };
    return push (im, "synchronisation records", &im->syncs, &im->n_syncs, &im->syncs_cap,
                 sizeof s, &s);
  }
  if ((!strcasecmp (e->cat, "cuda_runtime") || !strcasecmp (e->cat, "cuda_driver")
       || !strcasecmp (e->cat, "runtime"))
      && e->corr > 0) {
    ps__trace_call c = { (uint64_t) e->corr, e->ts, dur, e->pid, e->tid };
    im->st->runtime_calls++;
    return push (im, "runtime calls", &im->rts, &im->n_rts, &im->rts_cap, sizeof c, &c);
  }
  return 0;
}

static int
parse_event (ps__trace_importer *im, ps_json_reader *r)
{
  event e;
  memset (&e, 0, sizeof e);
  e.pid = e.tid = e.stream = e.device = e.corr = e.other_stream = e.event = e.rec_corr =
      e.ext_id = e.rf_id = PS__TRACE_NO_ID;
  for (;;) {
    ps_json_token t = ps_json_next (r);
    if (t == PS_JSON_ERROR)
      return json_error (im, r);
    if (t == PS_JSON_OBJECT_END)
      break;
    int which = key_is (r, "ph")     ? 1
                : key_is (r, "cat")  ? 2
                : key_is (r, "name") ? 3
                : key_is (r, "ts")   ? 4
                : key_is (r, "dur")  ? 5
                : key_is (r, "pid")  ? 6
                : key_is (r, "tid")  ? 7
                : key_is (r, "args") ? 8
                                     : 0;
    t = ps_json_next (r);
    if (t == PS_JSON_ERROR)
      return json_error (im, r);
    int rc = 0;
    switch (which) {
    case 1:
      copy_small (e.ph, sizeof e.ph, r);
      break;
    case 2:
      copy_small (e.cat, sizeof e.cat, r);
      break;
    case 3:
      rc = keep_name (im, r);
      if (rc > 0)
        e.has_name = true;
      break;
    case 4:
      if (t == PS_JSON_NUMBER && fabs (r->num) < 1e17) {
        e.ts = r->num;
        e.has_ts = true;
      }
      break;
    case 5:
      if (t == PS_JSON_NUMBER && r->num > 0 && r->num < 1e15)
        e.dur = r->num;
      break;
    case 6:
      e.pid = int_value (r);
      break;
    case 7:
      e.tid = int_value (r);
      break;
    case 8:
      if (t == PS_JSON_OBJECT_BEGIN) {
        rc = parse_args (im, r, &e);
        if (rc < 0)
          return rc;
        continue;
      }
      break;
    default:
      break;
    }
    if (rc < 0)
      return rc;
    if (ps_json_skip_current (r) < 0)
      return json_error (im, r);
  }
  im->st->events++;
  return store_event (im, &e);
}

/* "deviceProperties": [{"name": ...}, ...]: the first device's name. */
static int
parse_devices (ps__trace_importer *im, ps_json_reader *r)
{
  if (r->token != PS_JSON_ARRAY_BEGIN)
    return ps_json_skip_current (r) < 0 ? json_error (im, r) : 0;
  for (uint32_t n = 1;; n++) {
    ps_json_token t = ps_json_next (r);
    if (t == PS_JSON_ERROR)
      return json_error (im, r);
    if (t == PS_JSON_ARRAY_END)
      return 0;
    /* A long import can be stopped by its caller between events. */
    if (n % 4096 == 0) {
      double f = im->input_len ? (double) ps_json_offset (r) / (double) im->input_len : 0;
      int rc = ps_diag_progress (im->diag, "parse", f);
      if (rc < 0)
        return rc;
    }
    if (t != PS_JSON_OBJECT_BEGIN) {
      if (ps_json_skip_current (r) < 0)
        return json_error (im, r);
      continue;
    }
    for (;;) {
      t = ps_json_next (r);
      if (t == PS_JSON_ERROR)
        return json_error (im, r);
      if (t == PS_JSON_OBJECT_END)
        break;
      bool name = key_is (r, "name") || key_is (r, "device");
      t = ps_json_next (r);
      if (t == PS_JSON_ERROR)
        return json_error (im, r);
      if (name && !im->device[0])
        copy_small (im->device, sizeof im->device, r);
      if (ps_json_skip_current (r) < 0)
        return json_error (im, r);
    }
  }
}

static int
parse_events (ps__trace_importer *im, ps_json_reader *r)
{
  if (r->token != PS_JSON_ARRAY_BEGIN)
    return ps_json_skip_current (r) < 0 ? json_error (im, r) : 0;
  for (uint32_t n = 1;; n++) {
    ps_json_token t = ps_json_next (r);
    if (t == PS_JSON_ERROR)
      return json_error (im, r);
    if (t == PS_JSON_ARRAY_END)
      return 0;
    /* A long import can be stopped by its caller between events. */
    if (n % 4096 == 0) {
      double f = im->input_len ? (double) ps_json_offset (r) / (double) im->input_len : 0;
      int rc = ps_diag_progress (im->diag, "parse", f);
      if (rc < 0)
        return rc;
    }
    int rc = t == PS_JSON_OBJECT_BEGIN ? parse_event (im, r)
                                       : (ps_json_skip_current (r) < 0 ? json_error (im, r) : 0);
    if (rc < 0)
      return rc;
  }
}

static int
parse_top (ps__trace_importer *im, ps_json_reader *r)
{
  ps_json_token t = ps_json_next (r);
  if (t == PS_JSON_ERROR)
    return json_error (im, r);
  if (t == PS_JSON_ARRAY_BEGIN) {
    int rc = parse_events (im, r);
    if (rc < 0)
      return rc;
  } else if (t == PS_JSON_OBJECT_BEGIN) {
    for (;;) {
      t = ps_json_next (r);
      if (t == PS_JSON_ERROR)
        return json_error (im, r);
      if (t == PS_JSON_OBJECT_END)
        break;
      int which = key_is (r, "traceEvents")        ? 1
                  : key_is (r, "deviceProperties") ? 2
                  : key_is (r, "otherData")        ? 2
                                                   : 0;
      /* PyTorch's execution trace (Chakra schema): "schema" and "nodes". */
      if (key_is (r, "schema"))
        im->st->et_keys |= 1;
      else if (key_is (r, "nodes"))
        im->st->et_keys |= 2;
      t = ps_json_next (r);
      if (t == PS_JSON_ERROR)
        return json_error (im, r);
      int rc = 0;
      if (which == 1)
        rc = parse_events (im, r);
      else if (which == 2 && t == PS_JSON_OBJECT_BEGIN) {
        /* otherData: {"device": ...}, read like one device entry. */
        for (;;) {
          t = ps_json_next (r);
          if (t == PS_JSON_ERROR)
            return json_error (im, r);
          if (t == PS_JSON_OBJECT_END)
            break;
          bool dev = key_is (r, "device");
          t = ps_json_next (r);
          if (t == PS_JSON_ERROR)
            return json_error (im, r);
          if (dev)
            copy_small (im->device, sizeof im->device, r);
          if (ps_json_skip_current (r) < 0)
            return json_error (im, r);
        }
      } else if (which == 2)
        rc = parse_devices (im, r);
      else if (ps_json_skip_current (r) < 0)
        rc = json_error (im, r);
      if (rc < 0)
        return rc;
    }
  } else {
    return ps_diag_error (im->diag, r->line, r->col,
                          "a trace must be a JSON object with \"traceEvents\" or an array of "
                          "events, not %s", ps_json_token_name (t));
  }
  t = ps_json_next (r);
  if (t == PS_JSON_ERROR)
    return json_error (im, r);
  return 0;
}

static void
importer_free (ps__trace_importer *im)
{
  free (im->ops);
  free (im->syncs);
  free (im->rts);
  free (im->cpus);
  free (im->name);
  ps__strmap_free (&im->names);
}

static int
import (ps_timeline *tl, ps_json_reader *r, size_t input_len, const ps__read_stop *stop,
        uint32_t max_records, ps_trace_stats *stats, ps_diag *diag)
{
  ps_trace_stats local;
  ps__trace_importer im;
  memset (&im, 0, sizeof im);
  memset (stats ? stats : &local, 0, sizeof local);
  im.tl = tl;
  im.st = stats ? stats : &local;
  im.diag = diag;
  im.r = r;
  im.stop = stop;
  im.input_len = input_len;
  im.max_records = max_records;
  tl->source = PS_TL_IMPORTED;
  tl->graph = NULL;
  int rc = ps__strmap_init (&im.names, 256);
  if (rc == 0)
    rc = parse_top (&im, r);
  if (rc == 0) {
    snprintf (tl->device, sizeof tl->device, "%s", im.device[0] ? im.device : "unknown GPU");
    rc = ps__trace_resolve (tl, im.ops, im.n_ops, im.syncs, im.n_syncs, im.rts, im.n_rts, im.cpus,
                            im.n_cpus);
    if (rc < 0)
      ps_diag_error (diag, 0, 0, "cannot import the trace: %s", ps_strerror (rc));
  }
  importer_free (&im);
  return rc;
}

static const ps__trace_limits default_limits = { PS_TRACE_MAX_TEXT, PS_TRACE_MAX_RECORDS };

int
ps_trace_import_mem (ps_timeline *tl, const char *data, size_t len, ps_trace_stats *stats,
                     ps_diag *diag)
{
  size_t errors = diag->errors;
  int rc = ps__trace_import_mem (tl, data, len, &default_limits, stats, diag);
  return ps_diag_result (diag, errors, rc, "import the trace");
}

int
ps_trace_import_file (ps_timeline *tl, const char *path, ps_trace_stats *stats, ps_diag *diag)
{
  size_t errors = diag->errors;
  int rc = ps__trace_import_file (tl, path, &default_limits, stats, diag);
  return ps_diag_result (diag, errors, rc, "import the trace");
}

/* gzip data already in memory, inflated as the reader pulls. */
int
ps__zmem_init (ps__zmem *m, const char *data, size_t len, uint64_t max)
{
  memset (m, 0, sizeof *m);
  m->max = max;
  m->next = data;
  m->left = len;
  m->in_member = true;
  return inflateInit2 (&m->z, 16 + MAX_WBITS) == Z_OK ? 0 : PS_ENOMEM;
}

void
ps__zmem_end (ps__zmem *m)
{
  inflateEnd (&m->z);
}

static long
zmem_fail (ps__zmem *m, const char *why)
{
  m->stop.code = PS_EIO;
  snprintf (m->stop.why, sizeof m->stop.why, "cannot decompress: %s", why);
  return -1;
}

long
ps__zmem_pull (void *ctx, char *buf, size_t cap)
{
  ps__zmem *m = ctx;
  if (m->done)
    return 0;
  m->z.next_out = (Bytef *) buf;
  m->z.avail_out = cap > (1u << 30) ? (1u << 30) : (uInt) cap;
  while (m->z.avail_out > 0) {
    if (m->z.avail_in == 0 && m->left > 0) {
      /* zlib counts its input in 32 bits: larger data goes in pieces. */
      uInt n = m->left > (1u << 30) ? (1u << 30) : (uInt) m->left;
      m->z.next_in = (Bytef *) m->next;
      m->z.avail_in = n;
      m->next += n;
      m->left -= n;
    }
    int zr = inflate (&m->z, Z_NO_FLUSH);
    if (zr == Z_STREAM_END) {
      /* A member ends with its CRC and length, both checked by now;
       * another may follow (gzip allows concatenated members). */
      m->in_member = false;
      if ((m->z.avail_in == 0 && m->left == 0) || inflateReset (&m->z) != Z_OK) {
        m->done = true;
        break;
      }
      m->in_member = true;
    } else if (zr == Z_BUF_ERROR && m->z.avail_in == 0 && m->left == 0) {
      /* No more input: fine between members, not inside one. */
      if (m->in_member)
        return zmem_fail (m, "the data ends before the end of the gzip stream (a CRC and "
                             "length are missing: is the file cut short?)");
      m->done = true;
      break;
    } else if (zr != Z_OK) {
      return zmem_fail (m, m->z.msg ? m->z.msg : "corrupt data");
    }
  }
  long got = (long) ((char *) m->z.next_out - buf);
  m->total += (uint64_t) got;
  if (m->total > m->max) {
    m->stop.code = PS_ELIMIT;
    snprintf (m->stop.why, sizeof m->stop.why,
              "the trace is larger than %llu bytes (the limit, after decompression)",
              (unsigned long long) m->max);
    return -1;
  }
  return got;
}

static int
import_gzip_mem (ps_timeline *tl, const char *data, size_t len, const ps__trace_limits *lim,
                 ps_trace_stats *stats, ps_diag *diag)
{
  ps__zmem m;
  if (ps__zmem_init (&m, data, len, lim->max_text) < 0)
    return ps_diag_error (diag, 0, 0, "cannot decompress: out of memory");
  ps_json_reader r;
  int rc = ps_json_init_stream (&r, ps__zmem_pull, &m);
  if (rc == 0) {
    rc = import (tl, &r, 0, &m.stop, lim->max_records, stats, diag);
    ps_json_close (&r);
  }
  ps__zmem_end (&m);
  return rc;
}

int
ps__trace_import_mem (ps_timeline *tl, const char *data, size_t len,
                      const ps__trace_limits *lim, ps_trace_stats *stats, ps_diag *diag)
{
  if (len >= 2 && (unsigned char) data[0] == 0x1f && (unsigned char) data[1] == 0x8b)
    return import_gzip_mem (tl, data, len, lim, stats, diag);
  if (len > lim->max_text) {
    ps_diag_error (diag, 0, 0, "the trace is larger than %llu bytes (the limit)",
                   (unsigned long long) lim->max_text);
    return PS_ELIMIT;
  }
  ps_json_reader r;
  int rc = ps_json_init_mem (&r, data, len);
  if (rc < 0)
    return rc;
  rc = import (tl, &r, len, NULL, lim->max_records, stats, diag);
  ps_json_close (&r);
  return rc;
}

typedef struct {
  gzFile f;
  uint64_t total, max; /* bytes after decompression, so far and at most */
  ps__read_stop stop;
} gz_ctx;

static long
gz_pull (void *ctx, char *buf, size_t cap)
{
  gz_ctx *g = ctx;
  unsigned n = cap > (1u << 30) ? (1u << 30) : (unsigned) cap;
  int got = gzread (g->f, buf, n);
  int zerr = Z_OK;
  const char *msg = got <= 0 ? gzerror (g->f, &zerr) : NULL;
  /* gzread ends a file cut short inside a member as if it were the end,
   * saying so only through gzerror (Z_BUF_ERROR). */
  if (got < 0 || (got == 0 && zerr != Z_OK)) {
    /* zlib puts "<fd:N>: " before its messages about descriptors. */
    const char *colon = msg && strncmp (msg, "<fd:", 4) == 0 ? strstr (msg, ": ") : NULL;
    if (colon)
      msg = colon + 2;
    g->stop.code = PS_EIO;
    snprintf (g->stop.why, sizeof g->stop.why, "cannot decompress: %s",
              zerr == Z_BUF_ERROR ? "the data ends before the end of the gzip stream (a CRC and "
                                    "length are missing: is the file cut short?)"
                                  : msg);
    return -1;
  }
  g->total += (uint64_t) got;
  if (g->total > g->max) {
    /* A small .gz file can expand without end: stop at the limit. */
    g->stop.code = PS_ELIMIT;
    snprintf (g->stop.why, sizeof g->stop.why,
              "the trace is larger than %llu bytes (the limit, after decompression)",
              (unsigned long long) g->max);
    return -1;
  }
  return got;
}

int
ps__trace_import_file (ps_timeline *tl, const char *path, const ps__trace_limits *lim,
                       ps_trace_stats *stats, ps_diag *diag)
{
  /* No limit on the file itself: its text is counted as it is inflated. */
  struct stat st;
  int fd = ps_file_open_input (path, SIZE_MAX, &st, diag);
  if (fd < 0)
    return fd;
  gz_ctx g = { gzdopen (fd, "rb"), 0, lim->max_text, { 0, "" } };
  if (!g.f) {
    ps_diag_error (diag, 0, 0, "cannot open %s: out of memory", path);
    close (fd);
    return PS_ENOMEM;
  }
  gzbuffer (g.f, 256 * 1024);
  ps_json_reader r;
  int rc = ps_json_init_stream (&r, gz_pull, &g);
  if (rc < 0) {
    gzclose (g.f);
    return rc;
  }
  rc = import (tl, &r, 0, &g.stop, lim->max_records, stats, diag);
  ps_json_close (&r);
  gzclose (g.f);
  return rc;
}
