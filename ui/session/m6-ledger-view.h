/* SPDX-License-Identifier: MIT */
/* m6-ledger-view.h — the zero-sum ledger of the selected scope: its ΣD (a
 * top-level scope's drift) split into children, self and between frames,
 * with the residual that must be 0, and the answer of Find the Leak. */
#pragma once

#include <gtk/gtk.h>

#include "m6-ledger.h"
#include "m6-session.h"

G_BEGIN_DECLS

#define M6_TYPE_LEDGER_VIEW (m6_ledger_view_get_type ())
G_DECLARE_FINAL_TYPE (M6LedgerView, m6_ledger_view, M6, LEDGER_VIEW, GtkWidget)

GtkWidget      *m6_ledger_view_new            (void);
void            m6_ledger_view_set_thread     (M6LedgerView *self,
                                               M6Session    *session,
                                               guint         thread_index);
/* The scope shown; 0 follows the first top-level scope. */
void            m6_ledger_view_set_node       (M6LedgerView *self,
                                               guint         node_id);
/* The data changed: recompute and update the rows in place. */
void            m6_ledger_view_refresh        (M6LedgerView *self);
/* The sentence of Find the Leak, shown until the thread changes; NULL
 * hides it. */
void            m6_ledger_view_set_leak_text  (M6LedgerView *self,
                                               const char   *text);

/* For tests and the window: what is shown. */
const M6Ledger *m6_ledger_view_get_ledger     (M6LedgerView *self);
guint           m6_ledger_view_get_n_rows     (M6LedgerView *self);
const char     *m6_ledger_view_get_row_text   (M6LedgerView *self,
                                               guint         row,
                                               guint         column);
const char     *m6_ledger_view_get_residual_text (M6LedgerView *self);
const char     *m6_ledger_view_get_leak_text  (M6LedgerView *self);
/* The sentence saying the readings are process-wide, when it shows. */
const char     *m6_ledger_view_get_shared_text (M6LedgerView *self);

G_END_DECLS
