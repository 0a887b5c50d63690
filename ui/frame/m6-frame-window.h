/* SPDX-License-Identifier: MIT */
/* m6-frame-window.h — hunting a hitch: one frame of a session as a
 * timeline (all threads), the slowest frames of the window or capture,
 * and "where does this scope's time go": the histogram of the selected
 * scope's durations with its slowest calls. Its session window keeps the
 * selection in step with its flame graph and stats tree, both ways
 * (ui/session/m6-session-frames.c).
 *
 * Its actions ("frame." group; keys in brackets):
 *   frame.previous [, Alt+Left    frame.next ], Alt+Right
 *   frame.previous-slow Ctrl+[    frame.next-slow Ctrl+]   (slower than the budget)
 *   frame.export(s)  the timeline as .svg, .pdf or .png ('' asks where) */
#pragma once

#include <adwaita.h>

#include "m6-chart.h"
#include "m6-frame-index.h"
#include "m6-recording.h"
#include "m6-timeline.h"

G_BEGIN_DECLS

#define M6_TYPE_FRAME_WINDOW (m6_frame_window_get_type ())
G_DECLARE_FINAL_TYPE (M6FrameWindow, m6_frame_window, M6, FRAME_WINDOW, AdwWindow)

/* A frame view of @index's frames of thread @thread, over @parent (or
 * NULL). The index must outlive the window. It tells of a scope selected
 * in its timeline with "scope-selected" (thread, node), is told of one
 * selected elsewhere with m6_frame_window_select_scope(), and holds still
 * while "paused". */
M6FrameWindow *m6_frame_window_new             (GtkWindow     *parent,
                                                M6FrameIndex  *index,
                                                guint          thread);
/* A scope selected elsewhere: node @node_id of thread @thread's tree is
 * outlined in the timeline and its histogram shown (if it is this
 * window's thread). */
void           m6_frame_window_select_scope    (M6FrameWindow *self,
                                                guint          thread,
                                                guint32        node_id);
void           m6_frame_window_set_paused      (M6FrameWindow *self,
                                                gboolean       paused);
/* Show frame @number of the thread; FALSE (and a message) if it is gone. */
gboolean       m6_frame_window_open_frame      (M6FrameWindow *self,
                                                guint64        number);
/* Show the frames of the thread in [@t0, @t1) (ns of session time). */
void           m6_frame_window_open_range      (M6FrameWindow *self,
                                                gint64         t0,
                                                gint64         t1);
/* Fill the list of slowest frames again (live: the window moved). */
void           m6_frame_window_refresh_worst   (M6FrameWindow *self);
/* A live session: the slowest frames are looked at again (at most once
 * a second while @recording's events come in, not while the session
 * window is paused) and the histogram every 5 s. NULL: a capture. */
void           m6_frame_window_set_recording   (M6FrameWindow *self,
                                                M6Recording   *recording);
/* The budget "next slow frame" looks for, ns. */
void           m6_frame_window_set_budget      (M6FrameWindow *self,
                                                gint64         budget_ns);
/* The session's call-stack samples (not owned; NULL: none): each lane
 * shows its samples and off-CPU spans under its scopes. */
void           m6_frame_window_set_sample_model (M6FrameWindow *self,
                                                M6SampleModel *model);
/* Show the histogram of node @node_id of the thread's tree (0: none). */
void           m6_frame_window_show_scope      (M6FrameWindow *self,
                                                guint32        node_id);

/* What is shown (tests): the frame (FALSE for a range or nothing), the
 * timeline, the slowest frames (M6FrameHeaviest), the histogram (or
 * NULL), its chart and its list of slowest calls (M6ScopeOccurrence). */
gboolean       m6_frame_window_get_frame       (M6FrameWindow *self,
                                                M6FrameInfo   *frame);
M6Timeline    *m6_frame_window_get_timeline    (M6FrameWindow *self);
GArray        *m6_frame_window_get_worst       (M6FrameWindow *self);
GtkListBox    *m6_frame_window_get_worst_list  (M6FrameWindow *self);
const M6ScopeHistogram *m6_frame_window_get_histogram (M6FrameWindow *self);
M6Chart       *m6_frame_window_get_histogram_chart (M6FrameWindow *self);
GtkListBox    *m6_frame_window_get_slowest_list (M6FrameWindow *self);
/* The histogram is being read (a slice per main loop turn); the longest
 * slice so far, µs. */
gboolean       m6_frame_window_get_histogram_reading (M6FrameWindow *self);
gint64         m6_frame_window_get_longest_slice_us  (M6FrameWindow *self);

G_END_DECLS
