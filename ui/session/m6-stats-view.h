/* SPDX-License-Identifier: MIT */
/* m6-stats-view.h — the sortable stats tree of one thread: every payload
 * column per scope, updated in place while the data grows. */
#pragma once

#include "m6-payload.h"

#include <gtk/gtk.h>

#include "m6-sample-model.h"
#include "m6-session.h"

G_BEGIN_DECLS

#define M6_TYPE_STATS_VIEW (m6_stats_view_get_type ())
G_DECLARE_FINAL_TYPE (M6StatsView, m6_stats_view, M6, STATS_VIEW, GtkWidget)

GtkWidget          *m6_stats_view_new               (void);
void                m6_stats_view_set_thread        (M6StatsView *self,
                                                     M6Session   *session,
                                                     guint        thread_index);
/* The session's call-stack samples (m6-sample-model.h), or NULL: each
 * scope's row gets one child row per sampled function (and its time off
 * the CPU), with sampled ids (m6-view-samples.h). Not owned. */
void                m6_stats_view_set_sample_model  (M6StatsView   *self,
                                                     M6SampleModel *model);
/* The tree changed: add rows for new nodes and refresh shown values. */
void                m6_stats_view_refresh           (M6StatsView *self);

/* Node id of the selected row, 0 when none. Selecting expands the
 * ancestors and scrolls the row into view. */
guint               m6_stats_view_get_selected_node (M6StatsView *self);
void                m6_stats_view_set_selected_node (M6StatsView *self,
                                                     guint        node_id);

/* For tests: the models behind the view. */
GtkSingleSelection *m6_stats_view_get_selection     (M6StatsView *self);
GtkColumnView      *m6_stats_view_get_column_view   (M6StatsView *self);
/* Position of @node_id among the shown rows, or GTK_INVALID_LIST_POSITION. */
guint               m6_stats_view_find_node         (M6StatsView *self,
                                                     guint        node_id);

/* The width at which every column shows with room for the scope names. */
int           m6_stats_view_get_wanted_width (M6StatsView *self);

/* Highlight the scopes whose label contains @text (case-insensitive) and
 * dim the others, as the flame graph does; NULL or "" ends it. */
void          m6_stats_view_set_search_text  (M6StatsView *self,
                                              const char  *text);

/* A p50 or p90 cell's tooltip (@percent 50 or 90): its value and what it
 * is computed from, over how many calls. */
char        *m6_stats_view_quantile_tooltip (guint              percent,
                                            const M6NodeStats *stats);

G_END_DECLS
