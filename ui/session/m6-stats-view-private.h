/* SPDX-License-Identifier: MIT */
/* m6-stats-view-private.h — the stats table's state, shared by
 * m6-stats-view.c (the model, selection, the API), m6-stats-cells.c
 * (what a cell shows, and the sort order) and m6-stats-columns.c (the
 * columns' widths, which fit, their header tooltips). Private to ui/. */
#pragma once

#include "m6-stats-view.h"
#include "m6-view-samples.h"

#define RESORT_INTERVAL_US G_USEC_PER_SEC
#define AUTO_EXPAND_ROWS   40   /* open second-level scopes while fewer rows show */
#define LABEL_MIN_WIDTH    180  /* the Scope column keeps this before other columns go */
#define LABEL_CLAIM_MAX    240  /* and claims what its rows need up to this: deeper
                                 * indents scroll, they do not take the columns */
#define LABEL_MIN_CHARS    14

typedef enum
{
  COL_LABEL,
  COL_COUNT,
  COL_TIME_AVG,
  COL_TIME_P50,
  COL_TIME_P90,
  COL_TIME_MAX,
  COL_MEM_DELTA,
  COL_ALLOC_RATE,
  COL_SELF_RATE,
  COL_DRIFT_RATE,
  N_COLUMNS
} Column;

struct _M6StatsView
{
  GtkWidget           parent_instance;

  GtkColumnView      *column_view;
  GtkScrolledWindow  *scroller;
  GtkColumnViewColumn *columns[N_COLUMNS];
  guint               fit_idle_id;

  M6Session          *session;
  M6Thread           *thread;
  guint               thread_index;
  M6SampleModel      *samples;       /* not owned, or NULL */
  GHashTable         *sampled_rows;  /* sampled id -> M6StatsRow*, once in its scope's store */
  guint64             samples_seen;  /* the model's sample count at the last sync */
  GPtrArray          *rows;          /* node id -> M6StatsRow* */
  GArray             *leaf_given;    /* node id -> gboolean: create_func said "no children" */
  GArray             *expanded_once; /* node id -> gboolean: a top-level row was opened for the user */
  guint               n_published;   /* rows placed in the model */
  GListStore         *top;
  GtkTreeListModel   *tree_model;
  GtkSortListModel   *sort_model;
  GtkSingleSelection *selection;
  gint64              last_resort;
  char               *search;        /* casefolded, NULL when not searching */
};

/* m6-stats-cells.c */
GtkListItemFactory *m6_stats_view_cell_factory_new (M6StatsView   *view,
                                                    guint          column);
int                 m6_stats_view_compare_rows     (gconstpointer  a,
                                                    gconstpointer  b,
                                                    gpointer       user_data);

/* m6-stats-columns.c */
/* Wide enough for the title with its sort arrow, and for the numbers. */
int                 m6_stats_view_column_width     (M6StatsView   *self,
                                                    const char    *title,
                                                    const char    *sample);
/* The table's width changed: hide what does not fit (in an idle, not in
 * the middle of a size allocation). */
void                m6_stats_view_fit_columns      (M6StatsView   *self);
/* The p50 and p90 headers say what the columns are computed from. */
void                m6_stats_view_set_header_tooltips (M6StatsView *self);
