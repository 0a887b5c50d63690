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

gboolean
m6_view_heap_shared (M6Session *session)
{
  if (session == NULL || m6_session_get_n_threads (session) < 2)
    return FALSE;
  /* The shim's default and the program's allocation hooks count the
   * whole process; MACH6_HEAP=thread and a heap callback (the Lua
   * module's is its Lua state's) do not. */
  switch (m6_session_get_heap_source (session))
    {
    case M6_HEAP_SOURCE_SHIM:
    case M6_HEAP_SOURCE_HOOKS:
      return TRUE;
    case M6_HEAP_SOURCE_NONE:
    case M6_HEAP_SOURCE_CALLBACK:
    case M6_HEAP_SOURCE_SHIM_THREAD:
    default:
      return FALSE;
    }
}
