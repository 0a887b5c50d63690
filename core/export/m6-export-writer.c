/* SPDX-License-Identifier: MIT */
/* m6-export-writer.c — what every exporter writes with: the event log
 * that keeps a capture's raw events for the exporters that need time,
 * atomic output (a temporary file renamed once synced), a buffered sink,
 * the path of a node and the pre-order walk. */
#include "m6-export-private.h"

#include <errno.h>
#include <fcntl.h>
#include <gio/gunixoutputstream.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "m6-test-hooks.h"

M6EventLog *
m6_event_log_new (void)
{
  M6EventLog *self = g_new0 (M6EventLog, 1);

  self->threads = g_ptr_array_new_with_free_func ((GDestroyNotify) g_array_unref);
  return self;
}

void
m6_event_log_free (M6EventLog *self)
{
  if (self == NULL)
    return;
  g_ptr_array_unref (self->threads);
  g_free (self);
}

static GArray *
log_thread (M6EventLog *self,
            guint       index)
{
  while (self->threads->len <= index)
    g_ptr_array_add (self->threads, g_array_new (FALSE, FALSE, sizeof (M6Event)));
  return g_ptr_array_index (self->threads, index);
}

void
m6_event_log_record (M6Session     *session,
                     M6Thread      *thread,
                     const M6Event *events,
                     gsize          n_events,
                     gpointer       log)
{
  /* Tests see who holds raw events, and when (a loaded capture's window
   * never does). */
  m6_test_count (NULL, "event-log-batch");
  g_array_append_vals (log_thread (log, thread->index), events, n_events);
}

/* --- atomic output ------------------------------------------------------ */

gboolean
m6_write_atomically (const char   *path,
                     M6WriteFunc   write,
                     gpointer      user_data,
                     GError      **error)
{
  g_autofree char *tmp = NULL;
  g_autoptr (GError) local_error = NULL;
  int fd = m6_tempfile_open (path, 0644, &tmp);

  if (fd < 0)
    {
      int saved = errno;
      g_autofree char *dir = g_path_get_dirname (path);
      g_set_error (error, M6_EXPORT_ERROR, M6_EXPORT_ERROR_WRITE,
                   _("Could not create a file in “%s”: %s"), dir, g_strerror (saved));
      return FALSE;
    }

  g_autoptr (GOutputStream) raw = g_unix_output_stream_new (fd, FALSE);
  g_autoptr (GOutputStream) out = g_buffered_output_stream_new_sized (raw, 1 << 16);
  gboolean ok = write (out, user_data, &local_error)
             && g_output_stream_flush (out, NULL, &local_error);

  if (ok && fsync (fd) != 0)
    {
      int saved = errno;
      g_set_error_literal (&local_error, G_IO_ERROR, g_io_error_from_errno (saved), g_strerror (saved));
      ok = FALSE;
    }
  g_output_stream_close (out, NULL, NULL);
  if (close (fd) != 0 && ok)
    {
      int saved = errno;
      g_set_error_literal (&local_error, G_IO_ERROR, g_io_error_from_errno (saved), g_strerror (saved));
      ok = FALSE;
    }
  if (ok && g_rename (tmp, path) != 0)
    {
      int saved = errno;
      g_set_error_literal (&local_error, G_IO_ERROR, g_io_error_from_errno (saved), g_strerror (saved));
      ok = FALSE;
    }

  if (!ok)
    {
      g_unlink (tmp);
      g_set_error (error, M6_EXPORT_ERROR, M6_EXPORT_ERROR_WRITE,
                   _("Could not write “%s”: %s"), path,
                   local_error ? local_error->message : _("unknown error"));
      return FALSE;
    }
  return TRUE;
}

gboolean
m6_export_sink_flush (Sink *sink)
{
  if (!sink->failed && sink->buf->len > 0)
    {
      if (!g_output_stream_write_all (sink->out, sink->buf->str, sink->buf->len, NULL, NULL, sink->error))
        sink->failed = TRUE;
    }
  g_string_truncate (sink->buf, 0);
  return !sink->failed;
}

void
m6_export_sink_init (Sink           *sink,
                     GOutputStream  *out,
                     GError        **error)
{
  sink->out = out;
  sink->buf = g_string_sized_new (1 << 17);
  sink->error = error;
  sink->failed = FALSE;
}

gboolean
m6_export_sink_finish (Sink *sink)
{
  gboolean ok = m6_export_sink_flush (sink);
  g_string_free (sink->buf, TRUE);
  return ok;
}

void
m6_export_path_stack_init (PathStack *ps,
                           char       separator,
                           gboolean   folded)
{
  ps->path = g_string_new (NULL);
  ps->ends = g_array_new (FALSE, FALSE, sizeof (guint));
  ps->separator = separator;
  ps->folded = folded;
}

void
m6_export_path_stack_clear (PathStack *ps)
{
  g_string_free (ps->path, TRUE);
  g_array_unref (ps->ends);
}

/* @node's parent must be the root or pushed before (pre-order). Returns
 * @node's label as in the path. */
const char *
m6_export_path_stack_push (PathStack    *ps,
                           M6Tree       *tree,
                           const M6Node *node)
{
  guint depth = node->depth;
  guint parent_end = depth >= 2 ? g_array_index (ps->ends, guint, depth - 2) : 0;
  g_autofree char *label = m6_payload_label (tree, node);

  g_string_truncate (ps->path, parent_end);
  if (depth >= 2)
    g_string_append_c (ps->path, ps->separator);
  if (ps->folded)
    {
      /* flamegraph.pl splits frames on ';' and the count on the last
       * space; a line break would end the record. */
      for (char *p = label; *p; p++)
        if (*p == ';')
          *p = ':';
        else if (*p == '\n' || *p == '\r')
          *p = ' ';
    }
  g_string_append (ps->path, label);
  g_array_set_size (ps->ends, depth);
  g_array_index (ps->ends, guint, depth - 1) = (guint) ps->path->len;
  return ps->path->str + parent_end + (depth >= 2);
}

/* "exited" only when the thread or its program is known to have exited;
 * a recording that stopped while it ran says "stopped". */
const char *
m6_export_thread_state_name (M6Session *session,
                             M6Thread  *thread)
{
  if (thread->state == M6_THREAD_STATE_EXITED || m6_session_get_process_exited (session))
    return "exited";
  return m6_session_get_ended (session) ? "stopped" : "live";
}
