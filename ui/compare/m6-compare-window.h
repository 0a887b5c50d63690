/* SPDX-License-Identifier: MIT */
/* m6-compare-window.h — a session (B) against baseline captures (A),
 * scope by scope: the shift of time per frame with its interval and
 * verdict (m6_diff_compute()), and the change of memory per frame. Each
 * side takes more captures of repeated runs. */
#pragma once

#include <adwaita.h>

#include "m6-compare-row.h"
#include "m6-diff.h"
#include "m6-session.h"

G_BEGIN_DECLS

#define M6_TYPE_COMPARE_WINDOW (m6_compare_window_get_type ())
G_DECLARE_FINAL_TYPE (M6CompareWindow, m6_compare_window, M6, COMPARE_WINDOW, AdwWindow)

/* Compare thread @thread_index of @session (named @session_name, its
 * events readable from the capture @session_file) with the matching
 * thread of @baseline (taken). */
M6CompareWindow *m6_compare_window_new                (GtkApplication  *app,
                                                       M6Session       *session,
                                                       const char      *session_name,
                                                       const char      *session_file,
                                                       guint            thread_index,
                                                       M6DiffRun       *baseline);
/* The capture @session's events can be read from (a live session's
 * recording so far); read again when due. */
/* This session's run, read on a thread (@cost_us: how long that took,
 * which spaces the next reading); takes @run. */
void             m6_compare_window_set_session_run    (M6CompareWindow *self,
                                                       M6DiffRun       *run,
                                                       gint64           cost_us);
/* Whether the session's events are due to be read again (a live
 * session's copy costs time: it is made only when due). */
gboolean         m6_compare_window_get_session_due    (M6CompareWindow *self);
/* Add the capture of another run to A (@to_baseline) or to B, read on a
 * thread; a file that cannot be read is said in a dialog. Also the actions
 * compare.add-a(s) and compare.add-b(s) ("" opens a chooser). */
void             m6_compare_window_add_capture        (M6CompareWindow *self,
                                                       gboolean         to_baseline,
                                                       const char      *path);
/* Captures are being read for it. */
gboolean         m6_compare_window_get_adding         (M6CompareWindow *self);
guint            m6_compare_window_get_n_runs         (M6CompareWindow *self,
                                                       gboolean         baseline);
guint            m6_compare_window_get_n_tested       (M6CompareWindow *self);
const char      *m6_compare_window_get_summary        (M6CompareWindow *self);
void             m6_compare_window_set_thread         (M6CompareWindow *self,
                                                       guint            thread_index);
/* Compare again with the sessions' current data (a live B grows). */
void             m6_compare_window_refresh            (M6CompareWindow *self);

/* Every row (M6CompareRow) in tree order, before sorting and filtering. */
GListModel      *m6_compare_window_get_model          (M6CompareWindow *self);
/* The rows as shown: filtered and sorted by the table's columns. */
GListModel      *m6_compare_window_get_shown_model    (M6CompareWindow *self);
M6CompareRow    *m6_compare_window_find               (M6CompareWindow *self,
                                                       const char      *path);
guint            m6_compare_window_get_n_significant  (M6CompareWindow *self);
/* M6NodeChange by node id of B's tree, for the flame graph's colours. */
GArray          *m6_compare_window_get_changes        (M6CompareWindow *self);
/* The path of the selected row ("frame/physics"), or NULL. */
const char      *m6_compare_window_get_selected_path  (M6CompareWindow *self);

G_END_DECLS
