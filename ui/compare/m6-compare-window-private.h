/* SPDX-License-Identifier: MIT */
/* m6-compare-window-private.h — the comparison window's state, shared by
 * m6-compare-window.c (the table, its refresh, the GObject and its API)
 * and m6-compare-window-add.c (runs added to a side). Private to ui/. */
#pragma once

#include "m6-compare-columns.h"
#include "m6-compare-window.h"

struct _M6CompareWindow
{
  AdwWindow           parent_instance;

  /* template */
  AdwWindowTitle     *window_title;
  GtkToggleButton    *significant_button;
  GtkLabel           *summary_label;
  GtkColumnView      *column_view;

  M6Session          *session;
  guint               n_adding;      /* captures being read on a thread, or waiting */
  GQueue              add_queue;     /* AddRun: the captures waiting, in order */
  GCancellable       *adding;        /* cancelled when the window goes */
  char               *session_name;
  char               *session_file;  /* where B's own events can be read */
  M6DiffRun          *session_run;   /* B's own run, loaded from it */
  gint64              session_run_us;  /* when, and how long it took */
  gint64              session_run_cost_us;
  GPtrArray          *runs_a;        /* M6DiffRun */
  GPtrArray          *runs_b;        /* M6DiffRun: captures added to B */
  guint               thread_index;
  M6DiffOptions       options;

  GListStore         *store;         /* M6CompareRow, tree order */
  GHashTable         *by_path;       /* path -> M6CompareRow (the store holds it) */
  GtkFilterListModel *filter_model;
  GtkCustomFilter    *filter;
  GtkSortListModel   *sort_model;
  GtkSingleSelection *selection;
  GArray             *changes;       /* M6NodeChange by node id of B; new each refresh */
  GtkSorter          *sorters[M6_COMPARE_N_COLUMNS];
  guint               n_significant;
  guint               n_tested;
  char               *selected_path;
  char               *last_error;
};

/* The subtitle and title: which captures are on each side. */
void m6_compare_window_update_subtitle       (M6CompareWindow *self);
/* Cancel the reading under way and drop the captures waiting. */
void m6_compare_window_stop_adding           (M6CompareWindow *self);
/* compare.add-a(s) and compare.add-b(s). */
void m6_compare_window_class_add_run_actions (GtkWidgetClass  *widget_class);
