/* SPDX-License-Identifier: MIT */
/* m6-thread.c — a session's thread (M6Thread, opaque outside core): its
 * fields as the viewer, the exports and the payload read them. Ingest
 * (m6-session.c) writes them; the struct is in m6-session-private.h. */
#include "m6-session-private.h"

guint
m6_thread_get_index (M6Thread *thread)
{
  return thread->index;
}

guint64
m6_thread_get_tid (M6Thread *thread)
{
  return thread->tid;
}

const char *
m6_thread_get_name (M6Thread *thread)
{
  return thread->name;
}

M6ThreadState
m6_thread_get_state (M6Thread *thread)
{
  return thread->state;
}

M6Tree *
m6_thread_get_tree (M6Thread *thread)
{
  return thread->tree;
}

GArray *
m6_thread_get_frames (M6Thread *thread)
{
  return thread->frames;
}

guint64
m6_thread_get_n_events (M6Thread *thread)
{
  return thread->n_events;
}

guint64
m6_thread_get_drops (M6Thread *thread)
{
  return thread->drops;
}

guint64
m6_thread_get_skipped (M6Thread *thread)
{
  return thread->skipped;
}

guint64
m6_thread_get_rejected (M6Thread *thread)
{
  return thread->rejected;
}

guint64
m6_thread_get_over_budget (M6Thread *thread)
{
  return m6_tree_get_over_budget (thread->tree);
}

guint64
m6_thread_get_stray_dones (M6Thread *thread)
{
  return thread->stray_dones;
}

guint64
m6_thread_get_depth_refused (M6Thread *thread)
{
  return thread->depth_refused;
}

guint64
m6_thread_get_label_full (M6Thread *thread)
{
  return thread->label_full;
}

guint64
m6_thread_get_n_frames (M6Thread *thread)
{
  return thread->n_frames;
}

gint64
m6_thread_get_first_frame_t_ns (M6Thread *thread)
{
  return thread->first_frame_t_ns;
}

gint64
m6_thread_get_last_frame_t_ns (M6Thread *thread)
{
  return thread->last_frame_t_ns;
}

gint64
m6_thread_get_last_t_ns (M6Thread *thread)
{
  return thread->last_t_ns;
}
