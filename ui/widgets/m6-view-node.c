/* SPDX-License-Identifier: MIT */
/* m6-view-node.c — the thread and the node a scope view shows. */
#include "m6-view-node.h"

M6Thread *
m6_view_thread (M6Session *session,
                guint      thread_index)
{
  return session ? m6_session_get_thread (session, thread_index) : NULL;
}

const M6Node *
m6_view_shown_node (M6Session *session,
                    guint      thread_index,
                    guint      node_id)
{
  M6Thread *thread = m6_view_thread (session, thread_index);

  if (thread == NULL)
    return NULL;
  if (node_id != 0 && node_id < m6_tree_get_n_nodes (m6_thread_get_tree (thread)))
    return m6_tree_get_node (m6_thread_get_tree (thread), node_id);
  return m6_tree_get_root (m6_thread_get_tree (thread))->first_child;
}
