/* m6-frame-window-private.h — M6FrameWindow's fields, shared by the
 * window (m6-frame-window.c) and the code that builds its widgets
 * (m6-frame-window-build.c). */
#pragma once

#include "m6-flame-graph.h"
#include "m6-frame-window.h"
#include "m6-histogram.h"
#include "m6-recording.h"
#include "m6-toast-overlay.h"

G_BEGIN_DECLS

struct _M6FrameWindow
{
  AdwWindow         parent_instance;

  GtkWindow        *session_window;   /* weak */
  M6FlameGraph     *flame_graph;      /* the session window's, weak */
  M6FrameIndex     *index;
  M6Session        *session;
  guint             thread;
  gint64            budget_ns;

  gboolean          have_frame;
  M6FrameInfo       frame;
  GArray           *worst;            /* M6FrameHeaviest */
  M6ScopeHistogram *histogram;
  guint32           histogram_node;
  M6HistogramRun   *histogram_run;
  gint64            histogram_at;      /* monotonic µs it was begun */
  gint64            longest_slice_us;
  char             *message;
  guint             syncing;

  M6Recording      *recording;         /* live, or NULL */
  guint             refresh_source;
  guint             n_refreshes;

  AdwWindowTitle   *title;
  M6ToastOverlay   *toasts;
  M6Timeline       *timeline;
  GtkListBox       *worst_list;
  M6Chart          *histogram_chart;
  GtkListBox       *slowest_list;
};

/* The header bar, shortcuts, lists, timeline and histogram chart, laid
 * out (no signals connected). */
void       m6_frame_window_build_widgets (M6FrameWindow *self);
/* A row of the slowest frames or calls: @title, @value on the right and
 * a dim @subtitle (or NULL) under them. */
GtkWidget *m6_frame_window_make_row      (const char    *title,
                                          const char    *value,
                                          const char    *subtitle);

G_END_DECLS
