/* SPDX-License-Identifier: MIT */
/* m6-export-json.c — the payload JSON of a session, as a JsonNode or
 * streamed node by node (memory bounded by the trees, not the text). */
#include "m6-export-private.h"

#include <errno.h>
#include <fcntl.h>
#include <gio/gunixoutputstream.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

/* --- json --------------------------------------------------------------- */

static void
add_session_metadata (JsonBuilder *builder,
                      M6Session   *session)
{
  g_autoptr (GDateTime) start =
    g_date_time_new_from_unix_utc (m6_session_get_start_time (session) / G_USEC_PER_SEC);
  g_autofree char *iso = start ? g_date_time_format_iso8601 (start) : g_strdup ("");

  json_builder_set_member_name (builder, "format");
  json_builder_add_string_value (builder, "mach6");
  json_builder_set_member_name (builder, "version");
  json_builder_add_int_value (builder, 1);
  json_builder_set_member_name (builder, "process");
  json_builder_add_string_value (builder, m6_session_get_process_name (session));
  json_builder_set_member_name (builder, "pid");
  json_builder_add_int_value (builder, m6_session_get_pid (session));
  json_builder_set_member_name (builder, "start_time");
  json_builder_add_string_value (builder, iso);
  json_builder_set_member_name (builder, "duration");
  json_builder_add_double_value (builder, (double) m6_session_get_duration (session) / 1e9);
  json_builder_set_member_name (builder, "drops");
  json_builder_add_int_value (builder, (gint64) m6_session_get_drops (session));
  json_builder_set_member_name (builder, "unbalanced");
  json_builder_add_int_value (builder, (gint64) m6_session_get_unbalanced (session));
  json_builder_set_member_name (builder, "threads_unslotted");
  json_builder_add_int_value (builder, (gint64) m6_session_get_threads_unslotted (session));
  json_builder_set_member_name (builder, "depth_refused");
  json_builder_add_int_value (builder, (gint64) m6_session_get_depth_refused (session));
  json_builder_set_member_name (builder, "label_full");
  json_builder_add_int_value (builder, (gint64) m6_session_get_label_full (session));
  /* The node budget (docs/accounting.md#the-node-budget): each thread's
   * tree's limit (0: none), and the marks accounted to (other) nodes. */
  json_builder_set_member_name (builder, "max_nodes");
  json_builder_add_int_value (builder, m6_session_get_max_nodes (session));
  json_builder_set_member_name (builder, "over_budget");
  json_builder_add_int_value (builder, (gint64) m6_session_get_over_budget (session));
  json_builder_set_member_name (builder, "memory_available");
  json_builder_add_boolean_value (builder, m6_session_get_memory_available (session));
  json_builder_set_member_name (builder, "ended");
  json_builder_add_boolean_value (builder, m6_session_get_ended (session));
}

static void
add_thread (JsonBuilder *builder,
            M6Session   *session,
            M6Thread    *thread,
            gboolean     with_payload)
{
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "index");
  json_builder_add_int_value (builder, thread->index);
  json_builder_set_member_name (builder, "tid");
  json_builder_add_int_value (builder, (gint64) thread->tid);
  json_builder_set_member_name (builder, "name");
  json_builder_add_string_value (builder, thread->name);
  json_builder_set_member_name (builder, "state");
  json_builder_add_string_value (builder, m6_export_thread_state_name (session, thread));
  json_builder_set_member_name (builder, "drops");
  json_builder_add_int_value (builder, (gint64) thread->drops);
  json_builder_set_member_name (builder, "stray_dones");
  json_builder_add_int_value (builder, (gint64) thread->stray_dones);
  json_builder_set_member_name (builder, "depth_refused");
  json_builder_add_int_value (builder, (gint64) thread->depth_refused);
  json_builder_set_member_name (builder, "label_full");
  json_builder_add_int_value (builder, (gint64) thread->label_full);
  /* What the session itself set aside (docs/accounting.md, "Validating
   * the stream"): events that failed validation, and events before the
   * thread's first top-level mark or its next one after a bad event. */
  json_builder_set_member_name (builder, "rejected");
  json_builder_add_int_value (builder, (gint64) thread->rejected);
  json_builder_set_member_name (builder, "skipped");
  json_builder_add_int_value (builder, (gint64) thread->skipped);
  json_builder_set_member_name (builder, "over_budget");
  json_builder_add_int_value (builder, (gint64) m6_thread_get_over_budget (thread));
  json_builder_set_member_name (builder, "payload");
  if (with_payload)
    json_builder_add_value (builder, m6_payload_build (thread->tree, m6_tree_get_root (thread->tree)));
  else
    json_builder_add_null_value (builder);   /* streamed in its place */
  json_builder_end_object (builder);
}

JsonNode *
m6_export_session_json (M6Session *session)
{
  return m6_export_session_json_thread (session, -1);
}

static JsonNode *
session_json (M6Session *session,
              gint       only_thread,
              gboolean   with_payload)
{
  g_autoptr (JsonBuilder) builder = json_builder_new_immutable ();

  json_builder_begin_object (builder);
  add_session_metadata (builder, session);
  json_builder_set_member_name (builder, "threads");
  json_builder_begin_array (builder);
  for (guint i = 0; i < m6_session_get_n_threads (session); i++)
    if (only_thread < 0 || (guint) only_thread == i)
      add_thread (builder, session, m6_session_get_thread (session, i), with_payload);
  json_builder_end_array (builder);
  json_builder_end_object (builder);
  return json_builder_get_root (builder);
}

JsonNode *
m6_export_session_json_thread (M6Session *session,
                               gint       only_thread)
{
  return session_json (session, only_thread, TRUE);
}

static gboolean
sink_flush_payload (GString  *out,
                    gpointer  data)
{
  return m6_export_sink_flush (data);
}

/* The members of @object, pretty at @level, in order. The "payload" member
 * of a thread (null in the skeleton) is written straight from its tree. */
static gboolean
stream_object (Sink       *sink,
               M6Session  *session,
               JsonObject *object,
               guint       level,
               M6Thread   *thread)
{
  JsonObjectIter iter;
  const char *name;
  JsonNode *member;
  gboolean first = TRUE;

  g_string_append_c (sink->buf, '{');
  json_object_iter_init_ordered (&iter, object);
  while (json_object_iter_next_ordered (&iter, &name, &member))
    {
      if (!first)
        g_string_append_c (sink->buf, ',');
      first = FALSE;
      m6_json_indent (sink->buf, TRUE, level + 1);
      m6_json_append_string (sink->buf, name);
      g_string_append (sink->buf, ": ");

      if (thread != NULL && strcmp (name, "payload") == 0)
        {
          if (!m6_payload_write (sink->buf, thread->tree, m6_tree_get_root (thread->tree),
                                 TRUE, level + 1, sink_flush_payload, sink))
            return FALSE;
        }
      else if (thread == NULL && strcmp (name, "threads") == 0 && JSON_NODE_HOLDS_ARRAY (member))
        {
          JsonArray *threads = json_node_get_array (member);
          guint n = json_array_get_length (threads);

          g_string_append_c (sink->buf, '[');
          for (guint i = 0; i < n; i++)
            {
              JsonObject *t = json_array_get_object_element (threads, i);
              M6Thread *th = m6_session_get_thread (session, (guint) json_object_get_int_member (t, "index"));

              if (i > 0)
                g_string_append_c (sink->buf, ',');
              m6_json_indent (sink->buf, TRUE, level + 2);
              if (!stream_object (sink, session, t, level + 2, th))
                return FALSE;
            }
          if (n > 0)
            m6_json_indent (sink->buf, TRUE, level + 1);
          g_string_append_c (sink->buf, ']');
        }
      else
        m6_json_append_at (sink->buf, member, TRUE, level + 1);
      if (!m6_export_sink_maybe_flush (sink))
        return FALSE;
    }
  if (!first)
    m6_json_indent (sink->buf, TRUE, level);
  g_string_append_c (sink->buf, '}');
  return TRUE;
}

/* The json document, streamed: the same text m6_json_append() would give
 * for m6_export_session_json_thread(), while only the metadata is built in
 * memory; the payloads go to @sink as they are written. */
static gboolean
stream_session_json (Sink      *sink,
                     M6Session *session,
                     gint       only_thread)
{
  g_autoptr (JsonNode) skeleton = session_json (session, only_thread, FALSE);

  if (!stream_object (sink, session, json_node_get_object (skeleton), 0, NULL))
    return FALSE;
  g_string_append_c (sink->buf, '\n');
  return TRUE;
}

gboolean
m6_export_write_json (M6Session      *session,
                      gint            only_thread,
                      GOutputStream  *out,
                      GError        **error)
{
  Sink sink;

  m6_export_sink_init (&sink, out, error);
  stream_session_json (&sink, session, only_thread);
  return m6_export_sink_finish (&sink);
}

gboolean
m6_export_json_write (GOutputStream  *out,
                      gpointer        data,
                      GError        **error)
{
  ExportJob *job = data;

  return m6_export_write_json (job->session, -1, out, error);
}
