/* SPDX-License-Identifier: MIT */
/* m6-export-ndjson.c — one payload per time window, replayed from the raw
 * events into a fresh session per window. */
#include "m6-export-private.h"

#include <errno.h>
#include <fcntl.h>
#include <gio/gunixoutputstream.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

/* --- ndjson: one payload per time window -------------------------------- */

/* A complete top-level scope of one thread: events [first, last]. */
typedef struct
{
  gint64 window;
  guint  thread;
  guint  first;
  guint  last;
} TopScope;

static int
compare_top_scope (gconstpointer a,
                   gconstpointer b)
{
  const TopScope *x = a, *y = b;

  if (x->window != y->window)
    return x->window < y->window ? -1 : 1;
  if (x->thread != y->thread)
    return x->thread < y->thread ? -1 : 1;
  return x->first < y->first ? -1 : x->first > y->first;
}

M6Session *
m6_export_window_session (M6Session *session)
{
  /* Same label ids (shared: a window costs no copy of 100,000 labels),
   * same thread indices (and so the same seeds). */
  M6Session *window = m6_session_new_with_labels (m6_session_get_labels (session));

  m6_session_set_process (window, m6_session_get_pid (session), m6_session_get_process_name (session));
  m6_session_set_heap_source (window, m6_session_get_heap_source (session));
  for (guint i = 0; i < m6_session_get_n_threads (session); i++)
    {
      M6Thread *thread = m6_session_get_thread (session, i);
      m6_session_add_thread (window, thread->tid, thread->name);
    }
  return window;
}

static void
write_window (Sink      *sink,
              M6Session *window,
              gint64     index,
              double     interval_s,
              gboolean  *used)
{
  m6_export_append_ndjson_window (sink->buf, window, index, interval_s, used);
}

void
m6_export_append_ndjson_window (GString        *out,
                                M6Session      *window,
                                gint64          index,
                                double          interval_s,
                                const gboolean *used)
{
  g_string_append_printf (out, "{\"window\":%" G_GINT64_FORMAT ",\"t_start\":", index);
  m6_json_append_double (out, (double) index * interval_s);
  g_string_append (out, ",\"t_end\":");
  m6_json_append_double (out, (double) (index + 1) * interval_s);
  g_string_append (out, ",\"threads\":[");

  gboolean first = TRUE;
  for (guint i = 0; i < m6_session_get_n_threads (window); i++)
    {
      M6Thread *thread = m6_session_get_thread (window, i);

      if (!used[i])
        continue;
      if (!first)
        g_string_append_c (out, ',');
      first = FALSE;
      g_string_append_printf (out, "{\"index\":%u,\"tid\":%" G_GUINT64_FORMAT ",\"name\":", i, thread->tid);
      m6_json_append_string (out, thread->name);
      g_string_append (out, ",\"payload\":");
      m6_payload_append (out, thread->tree, m6_tree_get_root (thread->tree));
      g_string_append_c (out, '}');
    }
  g_string_append (out, "]}\n");
}

gboolean
m6_export_ndjson_write (GOutputStream  *out,
                        gpointer        data,
                        GError        **error)
{
  ExportJob *job = data;
  M6Session *session = job->session;
  guint n_threads = m6_session_get_n_threads (session);
  double interval_s = job->options && job->options->interval_s > 0 ? job->options->interval_s : 1.0;
  gint64 interval_ns = MAX ((gint64) (interval_s * 1e9), 1);
  g_autoptr (GArray) scopes = g_array_new (FALSE, FALSE, sizeof (TopScope));
  Sink sink;

  /* Each complete top-level scope belongs to the window it starts in, so a
   * frame crossing a boundary is counted once, whole. */
  for (guint i = 0; i < n_threads && i < job->log->threads->len; i++)
    {
      GArray *events = g_ptr_array_index (job->log->threads, i);
      gint64 open = -1;

      for (guint e = 0; e < events->len; e++)
        {
          const M6Event *ev = &g_array_index (events, M6Event, e);

          if (!m6_event_in_range (ev))
            open = -1;   /* the session rejects it, and the scope with it */
          if (ev->depth != 0 || !m6_event_in_range (ev))
            continue;
          if (ev->label != M6_EVENT_DONE)
            open = e;
          else if (open >= 0)
            {
              const M6Event *mark = &g_array_index (events, M6Event, open);
              TopScope scope = { MAX (mark->t_ns, 0) / interval_ns, i, (guint) open, e };
              g_array_append_val (scopes, scope);
              open = -1;
            }
        }
    }
  g_array_sort (scopes, compare_top_scope);

  m6_export_sink_init (&sink, out, error);
  g_autofree gboolean *used = g_new0 (gboolean, MAX (n_threads, 1));

  /* Only the windows that hold scopes: a capture whose clock jumps far
   * ahead gives one more line, not one line per empty interval. */
  for (guint s = 0; s < scopes->len && !sink.failed;)
    {
      gint64 w = g_array_index (scopes, TopScope, s).window;
      g_autoptr (M6Session) window = m6_export_window_session (session);

      memset (used, 0, sizeof (gboolean) * MAX (n_threads, 1));
      for (; s < scopes->len && g_array_index (scopes, TopScope, s).window == w; s++)
        {
          const TopScope *scope = &g_array_index (scopes, TopScope, s);
          GArray *events = g_ptr_array_index (job->log->threads, scope->thread);

          m6_session_ingest (window, m6_session_get_thread (window, scope->thread),
                             &g_array_index (events, M6Event, scope->first),
                             scope->last - scope->first + 1);
          used[scope->thread] = TRUE;
        }
      write_window (&sink, window, w, interval_s, used);
      m6_export_sink_maybe_flush (&sink);
    }
  return m6_export_sink_finish (&sink);
}
