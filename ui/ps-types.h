/* ps-types.h: forward declarations of the ui/ types, so that headers need
 * not include each other, and the small value types they share. */
#ifndef PS_TYPES_H
#define PS_TYPES_H

#include <glib.h>

G_BEGIN_DECLS

typedef struct _PsSession PsSession;
typedef struct _PsWindow PsWindow;
typedef struct _PsApplication PsApplication;
typedef struct _PsDagWidget PsDagWidget;
typedef struct _PsDagPane PsDagPane;
typedef struct _PsTimelineWidget PsTimelineWidget;
typedef struct _PsMemoryWidget PsMemoryWidget;
typedef struct _PsInspector PsInspector;
typedef struct _PsStatusLine PsStatusLine;
typedef struct _PsBaselineView PsBaselineView;

/* What the selection refers to. */
typedef enum {
  PS_SELECTION_NONE = 0,
  PS_SELECTION_NODE,   /* a graph node (and so its plan step and span) */
  PS_SELECTION_WAIT,   /* a wait of the predicted timeline's diagnosis */
  PS_SELECTION_BUFFER, /* a buffer */
  PS_SELECTION_BOX,    /* a box of the DAG that stands for several nodes */
} PsSelectionKind;

/* The numbers of the status line, for one plan. */
typedef struct {
  gboolean valid;
  double makespan_ns;
  guint streams_used;
  guint streams_max;
  guint kernels_before;
  guint kernels_after;
  guint events;
  guint64 pool_bytes;
  guint n_nodes;
} PsSummary;

G_END_DECLS

#endif
