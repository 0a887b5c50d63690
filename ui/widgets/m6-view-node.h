/* SPDX-License-Identifier: MIT */
/* m6-view-node.h — what the views of one scope (the drift graph, the
 * ledger) show: a thread of the session, and the node chosen in it or,
 * when none is, the first top-level scope. */
#pragma once

#include "m6-session.h"

G_BEGIN_DECLS

/* The thread @thread_index of @session (which may be NULL), or NULL. */
M6Thread     *m6_view_thread     (M6Session *session,
                                  guint      thread_index);
/* Node @node_id of that thread when it exists (0: none chosen), else its
 * first top-level scope; NULL without a thread or scopes. */
const M6Node *m6_view_shown_node (M6Session *session,
                                  guint      thread_index,
                                  guint      node_id);

G_END_DECLS
