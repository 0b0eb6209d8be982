/* ps-diff.c: two runs compared by work name, stream and critical path
 * (see ps-diff.h).  One sort of both runs' ops by name, then a merge. */
#include "ps-diff.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ps-array.h"

typedef struct {
  const char *name;
  uint8_t run;
  uint8_t critical;
  double ns;
} item;

static int
cmp_item (const void *x, const void *y)
{
  const item *a = x, *b = y;
  return strcmp (a->name, b->name);
}

static int
cmp_change (const void *x, const void *y)
{
  const ps_diff_name *a = x, *b = y;
  double da = fabs (a->total_ns[1] - a->total_ns[0]), db = fabs (b->total_ns[1] - b->total_ns[0]);
  if (da != db)
    return da > db ? -1 : 1;
  return strcmp (a->name, b->name);
}

/* A span's name for matching: its kernel function when a plan's, else its
 * own name (a trace's kernel), else its node's. */
static const char *
work_name (const ps_timeline *tl, uint32_t s)
{
  const char *f = ps_timeline_span_function (tl, s);
  return f ? f : ps_timeline_span_name (tl, s);
}

static bool
is_work (const ps_span *s)
{
  return s->kind == PS_SPAN_KERNEL || s->kind == PS_SPAN_MEMCPY || s->kind == PS_SPAN_MEMSET ||
         s->kind == PS_SPAN_HOST;
}

void
ps_diff_free (ps_diff *d)
{
  for (uint32_t i = 0; i < d->n_names; i++)
    free (d->names[i].name);
  free (d->names);
  free (d->streams);
  memset (d, 0, sizeof *d);
}

static int
add_stream (ps_diff *d, int64_t id, int run, double busy)
{
  for (uint32_t i = 0; i < d->n_streams; i++)
    if (d->streams[i].id == id) {
      d->streams[i].busy_ns[run] = busy;
      return 0;
    }
  ps_diff_stream *p = realloc (d->streams, ((size_t) d->n_streams + 1) * sizeof *p);
  if (!p)
    return PS_ENOMEM;
  d->streams = p;
  d->streams[d->n_streams++] = (ps_diff_stream) { id, { -1, -1 } };
  d->streams[d->n_streams - 1].busy_ns[run] = busy;
  return 0;
}

int
ps_diff_runs (const ps_timeline *a, const ps_diagnosis *da, const ps_timeline *b,
              const ps_diagnosis *db, ps_diff *out)
{
  memset (out, 0, sizeof *out);
  const ps_timeline *tl[2] = { a, b };
  const ps_diagnosis *dg[2] = { da, db };
  size_t n = (size_t) a->n_spans + b->n_spans;
  item *it = malloc ((n + 1) * sizeof *it);
  uint8_t *crit[2] = { calloc ((size_t) a->n_spans + 1, 1), calloc ((size_t) b->n_spans + 1, 1) };
  int rc = 0;
  if (!it || !crit[0] || !crit[1]) {
    rc = PS_ENOMEM;
    goto out;
  }
  size_t m = 0;
  for (int r = 0; r < 2; r++) {
    for (uint32_t k = 0; k < dg[r]->n_critical; k++)
      if (dg[r]->critical[k] < tl[r]->n_spans)
        crit[r][dg[r]->critical[k]] = 1;
    out->makespan_ns[r] = tl[r]->makespan_ns;
    for (uint32_t s = 0; s < tl[r]->n_spans; s++) {
      const ps_span *sp = &tl[r]->spans[s];
      if (!is_work (sp))
        continue;
      it[m++] = (item) { work_name (tl[r], s), (uint8_t) r, crit[r][s], sp->end_ns - sp->start_ns };
      out->ops[r]++;
    }
    for (uint32_t q = 0; q < dg[r]->n_streams && q < tl[r]->n_streams && rc == 0; q++)
      rc = add_stream (out, tl[r]->streams[q].id, r, dg[r]->streams[q].busy_ns);
  }
  if (rc != 0)
    goto out;
  ps_array_sort (it, m, sizeof *it, cmp_item);
  out->names = calloc (m + 1, sizeof *out->names);
  if (!out->names) {
    rc = PS_ENOMEM;
    goto out;
  }
  for (size_t i = 0; i < m;) {
    ps_diff_name *dn = &out->names[out->n_names++];
    dn->name = strdup (it[i].name);
    if (!dn->name) {
      rc = PS_ENOMEM;
      goto out;
    }
    size_t j = i;
    for (; j < m && strcmp (it[j].name, it[i].name) == 0; j++) {
      dn->count[it[j].run]++;
      dn->total_ns[it[j].run] += it[j].ns;
      dn->critical[it[j].run] |= it[j].critical;
    }
    out->joined += !dn->critical[0] && dn->critical[1];
    out->left += dn->critical[0] && !dn->critical[1];
    i = j;
  }
  ps_array_sort (out->names, out->n_names, sizeof *out->names, cmp_change);
out:
  free (it);
  free (crit[0]);
  free (crit[1]);
  if (rc != 0)
    ps_diff_free (out);
  return rc;
}

const char *
ps_diff_name_critical_text (const ps_diff_name *n)
{
  return n->critical[0] && n->critical[1] ? "on both"
         : n->critical[1]                 ? "joined"
         : n->critical[0]                 ? "left"
                                          : "";
}
