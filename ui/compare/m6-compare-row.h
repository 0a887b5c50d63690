/* SPDX-License-Identifier: MIT */
/* m6-compare-row.h — one scope of a comparison: an M6DiffRow (baseline A
 * against session B) as a list item, updated in place while a live
 * session goes on so the table keeps its selection. */
#pragma once

#include <glib-object.h>

#include "m6-diff.h"

G_BEGIN_DECLS

#define M6_TYPE_COMPARE_ROW (m6_compare_row_get_type ())
G_DECLARE_FINAL_TYPE (M6CompareRow, m6_compare_row, M6, COMPARE_ROW, GObject)

/* Takes @diff, a row of @whole (which says how many scopes were tested,
 * with which options: the row's reason). */
M6CompareRow    *m6_compare_row_new        (M6DiffRow    *diff,
                                            const M6Diff *whole);
const M6DiffRow *m6_compare_row_get_diff   (M6CompareRow *self);
/* Why the row is called or not, a sentence with its figures; NULL when untested. */
const char      *m6_compare_row_get_why    (M6CompareRow *self);
/* Replace the values (takes @diff) and emit "changed". */
void             m6_compare_row_set_diff   (M6CompareRow *self,
                                            M6DiffRow    *diff,
                                            const M6Diff *whole);

G_END_DECLS
