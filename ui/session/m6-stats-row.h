/* SPDX-License-Identifier: MIT */
/* m6-stats-row.h — one row of the stats tree: a node id of a thread's tree
 * with its payload stats, recomputed lazily when the data changed. Rows are
 * kept and updated in place, so selection and expansion survive updates. */
#pragma once

#include <gio/gio.h>

#include "m6-payload.h"
#include "m6-session.h"

G_BEGIN_DECLS

#define M6_TYPE_STATS_ROW (m6_stats_row_get_type ())
G_DECLARE_FINAL_TYPE (M6StatsRow, m6_stats_row, M6, STATS_ROW, GObject)

M6StatsRow        *m6_stats_row_new            (M6Session  *session,
                                                M6Tree     *tree,
                                                guint       node_id);
/* A sampled function's row under its scope (m6-view-samples.h): its id
 * is the sampled id, its node the scope it ran in, its label the name. */
M6StatsRow        *m6_stats_row_new_sampled    (M6Session  *session,
                                                M6Tree     *tree,
                                                guint       sampled_id,
                                                guint       scope_id,
                                                guint32     symbol,
                                                const char *name);
gboolean           m6_stats_row_is_sampled     (M6StatsRow *self);
/* Its samples, their share of the scope's self samples (0-1; off-CPU:
 * of its self time) and the time it stands for per call of the scope, s. */
void               m6_stats_row_set_sampled    (M6StatsRow *self,
                                                guint64     samples,
                                                double      share,
                                                double      per_call);
gboolean           m6_stats_row_get_sampled    (M6StatsRow *self,
                                                guint32    *symbol,
                                                guint64    *samples,
                                                double     *share,
                                                double     *per_call);
guint              m6_stats_row_get_node_id    (M6StatsRow *self);
const M6Node      *m6_stats_row_get_node       (M6StatsRow *self);
const char        *m6_stats_row_get_label      (M6StatsRow *self);
const M6NodeStats *m6_stats_row_get_stats      (M6StatsRow *self);
/* Does the session have heap readings at all? */
gboolean           m6_stats_row_get_memory_available (M6StatsRow *self);

/* Children rows, created on first use (the tree list model asks when the
 * row is shown with an expander). */
GListStore        *m6_stats_row_get_children   (M6StatsRow *self);
gboolean           m6_stats_row_has_children_store (M6StatsRow *self);

/* Mark the stats stale; emits "changed" when cells are bound to the row. */
void               m6_stats_row_invalidate     (M6StatsRow *self);
/* Cells shown for this row, so only visible rows notify. */
void               m6_stats_row_bind           (M6StatsRow *self);
void               m6_stats_row_unbind         (M6StatsRow *self);

G_END_DECLS
