/* SPDX-License-Identifier: MIT */
/* m6-compare-columns.h — the Compare window's table, column by column:
 * the text, colour and tooltip of a scope's cell (durations auto-scaled,
 * like everywhere else), and the column view's columns with their
 * sorters. */
#pragma once

#include <gtk/gtk.h>

#include "m6-diff.h"
#include "m6-flame-graph.h"

G_BEGIN_DECLS

typedef enum
{
  M6_COMPARE_COL_SCOPE,
  M6_COMPARE_COL_FRAMES_A,
  M6_COMPARE_COL_FRAMES_B,
  M6_COMPARE_COL_TIME_A,
  M6_COMPARE_COL_SHIFT,
  M6_COMPARE_COL_INTERVAL,
  M6_COMPARE_COL_THRESHOLD,
  M6_COMPARE_COL_P_ADJUSTED,
  M6_COMPARE_COL_SIGNIFICANT,
  M6_COMPARE_COL_ALLOC,
  M6_COMPARE_COL_SELF,
  M6_COMPARE_COL_DRIFT,
  M6_COMPARE_N_COLUMNS
} M6CompareColumn;

/* What the cell of @column says for row @d ("41.2 ms", "+3.1 %", "—"). */
char         *m6_compare_cell_text    (const M6DiffRow  *d,
                                       M6CompareColumn   column);
/* How the flame graph colours the scope of row @d. */
M6ChangeKind  m6_compare_change_kind  (const M6DiffRow  *d);
/* Append every column to @view, each with its sorter, stored (a ref) in
 * @sorters[column] (M6_COMPARE_N_COLUMNS of them). */
void          m6_compare_columns_add  (GtkColumnView    *view,
                                       GtkSorter       **sorters);

G_END_DECLS
