/* m6-compare-window.h — a session (B) against a baseline capture (A),
 * scope by scope: counts, time avg and the change of avg, p50, p90 and
 * memory rate, with the Mann–Whitney significance of m6_diff_trees(). */
#pragma once

#include <adwaita.h>

#include "m6-compare-row.h"
#include "m6-session.h"

G_BEGIN_DECLS

#define M6_TYPE_COMPARE_WINDOW (m6_compare_window_get_type ())
G_DECLARE_FINAL_TYPE (M6CompareWindow, m6_compare_window, M6, COMPARE_WINDOW, AdwWindow)

/* Compare thread @thread_index of @session (named @session_name) with the
 * matching thread of @baseline, loaded from @baseline_path. */
M6CompareWindow *m6_compare_window_new                (GtkApplication  *app,
                                                       M6Session       *session,
                                                       const char      *session_name,
                                                       guint            thread_index,
                                                       M6Session       *baseline,
                                                       const char      *baseline_path);
void             m6_compare_window_set_thread         (M6CompareWindow *self,
                                                       guint            thread_index);
/* Compare again with the sessions' current data (a live B grows). */
void             m6_compare_window_refresh            (M6CompareWindow *self);
guint            m6_compare_window_get_n_refreshes    (M6CompareWindow *self);

M6Session       *m6_compare_window_get_baseline       (M6CompareWindow *self);
const char      *m6_compare_window_get_baseline_path  (M6CompareWindow *self);
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
