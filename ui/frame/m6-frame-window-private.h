/* SPDX-License-Identifier: MIT */
/* m6-frame-window-private.h — the frame view window's state, shared by
 * m6-frame-window.c (the slowest frames, the timeline, live refresh,
 * export, the widget) and m6-frame-window-histogram.c (the histogram of
 * the selected scope and its slowest calls). Private to ui/. */
#pragma once

#include "m6-frame-window.h"
#include "m6-histogram.h"
#include "m6-toast-overlay.h"

G_BEGIN_DECLS

struct _M6FrameWindow
{
  AdwWindow         parent_instance;

  M6FrameIndex     *index;
  M6Session        *session;
  guint             thread;
  gint64            budget_ns;
  gboolean          paused;

  gboolean          have_frame;
  M6FrameInfo       frame;
  GArray           *worst;            /* M6FrameHeaviest */
  M6ScopeHistogram *histogram;
  guint32           histogram_node;
  M6HistogramRun   *histogram_run;
  gint64            histogram_at;      /* monotonic µs it was begun */
  gint64            longest_slice_us;
  guint             syncing;

  M6Recording      *recording;         /* live, or NULL */
  guint             refresh_source;

  /* From the template. */
  AdwWindowTitle   *title;
  M6ToastOverlay   *toasts;
  M6Timeline       *timeline;
  GtkListBox       *worst_list;
  M6Chart          *histogram_chart;
  GtkListBox       *slowest_list;
};

/* m6-frame-window.c */
/* A row of the slowest frames or calls: @title, @value on the right and
 * a dim @subtitle (or NULL) under them. */
GtkWidget *m6_frame_window_make_row (const char *title,
                                     const char *value,
                                     const char *subtitle);

/* m6-frame-window-histogram.c */
/* Read the histogram of the shown scope again; what is drawn stays until
 * the new one is read. */
void m6_frame_window_start_histogram (M6FrameWindow *self);
void m6_frame_window_slowest_activated_cb (GtkListBox    *list,
                                           GtkListBoxRow *row,
                                           M6FrameWindow *self);

G_END_DECLS
