/* SPDX-License-Identifier: MIT */
/* m6-drift-graph.h — mem.net of one node over session time with its fitted
 * leak rate, the top-level inverse-delta lane and the frame-time lane. */
#pragma once

#include <gtk/gtk.h>

#include "m6-chart.h"
#include "m6-frame-lane.h"
#include "m6-session.h"

G_BEGIN_DECLS

#define M6_TYPE_DRIFT_GRAPH (m6_drift_graph_get_type ())
G_DECLARE_FINAL_TYPE (M6DriftGraph, m6_drift_graph, M6, DRIFT_GRAPH, GtkWidget)

GtkWidget *m6_drift_graph_new            (void);
void       m6_drift_graph_set_thread     (M6DriftGraph *self,
                                          M6Session    *session,
                                          guint         thread_index);
/* The node whose mem.net is drawn; 0 follows the first top-level scope. */
void       m6_drift_graph_set_node       (M6DriftGraph *self,
                                          guint         node_id);
/* The node actually drawn (resolves 0 to the first top-level scope). */
guint      m6_drift_graph_get_shown_node (M6DriftGraph *self);
void       m6_drift_graph_invalidate     (M6DriftGraph *self);

/* Drift/frame of the shown node (mem.net over the thread's frames) and per
 * minute; FALSE for a child scope (its mem.net includes its gaps and is no
 * leak rate) and with fewer than two history points. */
gboolean   m6_drift_graph_get_leak_rate  (M6DriftGraph *self,
                                          double       *kb_per_frame,
                                          double       *kb_per_minute);
guint      m6_drift_graph_get_n_points   (M6DriftGraph *self);
/* The last drawing's time-axis step (s), and whether the leak rate had to
 * go under the title for want of room. */
double     m6_drift_graph_get_time_step  (M6DriftGraph *self);
gboolean   m6_drift_graph_get_title_wrapped (M6DriftGraph *self);

/* Write the graph to @path, a .svg, .pdf or .png of @width × @height,
 * atomically. */
gboolean   m6_drift_graph_export         (M6DriftGraph *self,
                                          const char   *path,
                                          int           width,
                                          int           height,
                                          GError      **error);
/* The same picture in memory, for a thread to write. */
GBytes    *m6_drift_graph_render         (M6DriftGraph *self,
                                          const char   *path,
                                          int           width,
                                          int           height,
                                          GError      **error);

/* The three charts' frame-time lane (its marks are frames) and drift lane. */
M6Chart   *m6_drift_graph_get_frame_chart  (M6DriftGraph *self);
M6Chart   *m6_drift_graph_get_memory_chart (M6DriftGraph *self);
/* The frame behind mark (@layer, @index) of the frame chart, or NULL. */
const M6LaneFrame *m6_drift_graph_get_lane_frame (M6DriftGraph *self,
                                                  guint         layer,
                                                  guint         index);
/* Columns the frame-time lane holds as last filled (0: no frames shown). */
guint      m6_drift_graph_get_n_lane_columns (M6DriftGraph *self);
/* Frames over budget in the lane's range, and the budget (ns; 0 resets
 * to 60 fps). */
guint      m6_drift_graph_get_n_over_budget (M6DriftGraph *self);
void       m6_drift_graph_set_budget       (M6DriftGraph *self,
                                            gint64        budget_ns);

/* Signals: "frame-activated" (gint64 start_ns, gint64 end_ns, guint64
 * number) when a frame of the lane is clicked; "range-activated" (gint64
 * t0_ns, gint64 t1_ns) when a time range of it is dragged. */

G_END_DECLS
