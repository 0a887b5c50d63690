/* SPDX-License-Identifier: MIT */
/* m6-save-task.c — saves and exports of a session on a thread (see the
 * header). A live recording's copy needs its lock only while the writer
 * flushes; the export then replays that copy into a private session. */
#include "m6-save-task.h"

#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <unistd.h>

#include "m6-capture.h"

typedef struct
{
  M6JobBar        *bar;
  M6Recording     *recording;
  char            *capture_path;
  gboolean         export;
  M6ExportFormat   format;
  M6ExportOptions  options;
  char            *dest;
  M6Session       *session;       /* trees only */
  GBytes          *bytes;         /* a live session's export, serialised */
} SaveTask;

static void
save_task_free (gpointer data)
{
  SaveTask *save = data;

  g_object_unref (save->bar);
  g_clear_object (&save->recording);
  g_free (save->capture_path);
  g_free (save->dest);
  g_clear_object (&save->session);
  g_clear_pointer (&save->bytes, g_bytes_unref);
  g_free (save);
}

gboolean
m6_save_task_export_replayed (M6Recording            *recording,
                              const char             *capture_path,
                              M6ExportFormat          format,
                              const M6ExportOptions  *options,
                              const char             *dest,
                              GCancellable           *cancellable,
                              M6JobBar               *bar,
                              GError                **error)
{
  g_autofree char *copy = NULL;
  const char *source = capture_path;
  gboolean ok;

  if (recording != NULL)
    {
      if (!m6_recording_save_temp_copy (recording, cancellable, &copy, error))
        return FALSE;
      source = copy;
    }
  else if (source == NULL)
    {
      g_set_error_literal (error, M6_EXPORT_ERROR, M6_EXPORT_ERROR_FORMAT,
                           _("This session was not recorded, so its events are not at hand for a time series or a trace."));
      return FALSE;
    }
  ok = m6_export_capture (source, format, options, dest, cancellable,
                          bar != NULL ? m6_job_bar_progress : NULL, bar, error);
  if (copy != NULL)
    g_unlink (copy);
  return ok;
}

static void
file_progress (goffset  current,
               goffset  total,
               gpointer bar)
{
  m6_job_bar_progress ((guint64) current, (guint64) total, bar);
}

static gboolean
write_bytes (GOutputStream  *out,
             gpointer        bytes,
             GError        **error)
{
  gsize length;
  const void *data = g_bytes_get_data (bytes, &length);

  return g_output_stream_write_all (out, data, length, NULL, NULL, error);
}

static void
save_task_thread (GTask        *task,
                  gpointer      source,
                  gpointer      data,
                  GCancellable *cancellable)
{
  SaveTask *save = data;
  GError *error = NULL;
  gboolean ok;

  if (save->bytes != NULL)
    ok = m6_write_atomically (save->dest, write_bytes, save->bytes, &error);
  else if (save->session != NULL)
    {
      ok = m6_export_session (save->session, NULL, save->format, &save->options, save->dest, &error);
      /* It cannot stop half-way; a cancel takes back what it wrote. */
      if (ok && g_cancellable_set_error_if_cancelled (cancellable, &error))
        {
          g_unlink (save->dest);
          ok = FALSE;
        }
    }
  else if (save->export)
    ok = m6_save_task_export_replayed (save->recording, save->capture_path, save->format, &save->options,
                                       save->dest, cancellable, save->bar, &error);
  else if (save->recording != NULL)
    ok = m6_recording_save_copy (save->recording, save->dest, cancellable, m6_job_bar_progress, save->bar, &error);
  else
    {
      g_autoptr (GFile) src = g_file_new_for_path (save->capture_path);
      g_autoptr (GFile) dest = g_file_new_for_path (save->dest);
      ok = g_file_equal (src, dest)
           || g_file_copy (src, dest, G_FILE_COPY_OVERWRITE, cancellable, file_progress, save->bar, &error);
    }
  if (ok)
    g_task_return_boolean (task, TRUE);
  else
    g_task_return_error (task, error);
}

void
m6_save_task_run (M6JobBar               *bar,
                  GCancellable           *cancellable,
                  M6Recording            *recording,
                  const char             *capture_path,
                  gboolean                export,
                  M6ExportFormat          format,
                  const M6ExportOptions  *options,
                  const char             *dest,
                  GAsyncReadyCallback     callback,
                  gpointer                user_data)
{
  SaveTask *save = g_new0 (SaveTask, 1);
  g_autoptr (GTask) task = g_task_new (NULL, cancellable, callback, user_data);

  save->bar = g_object_ref (bar);
  save->recording = recording ? g_object_ref (recording) : NULL;
  save->capture_path = g_strdup (capture_path);
  save->export = export;
  save->format = format;
  if (options != NULL)
    save->options = *options;
  save->dest = g_strdup (dest);
  g_task_set_task_data (task, save, save_task_free);
  g_task_run_in_thread (task, save_task_thread);
}

void
m6_save_task_run_trees (M6JobBar             *bar,
                        GCancellable         *cancellable,
                        M6Session            *session,
                        M6ExportFormat        format,
                        const char           *dest,
                        GAsyncReadyCallback   callback,
                        gpointer              user_data)
{
  SaveTask *save = g_new0 (SaveTask, 1);
  g_autoptr (GTask) task = g_task_new (NULL, cancellable, callback, user_data);

  save->bar = g_object_ref (bar);
  save->session = g_object_ref (session);
  save->format = format;
  save->options.interval_s = 1.0;
  save->dest = g_strdup (dest);
  g_task_set_task_data (task, save, save_task_free);
  g_task_run_in_thread (task, save_task_thread);
}

void
m6_save_task_run_bytes (M6JobBar             *bar,
                        GCancellable         *cancellable,
                        GBytes               *bytes,
                        const char           *dest,
                        GAsyncReadyCallback   callback,
                        gpointer              user_data)
{
  SaveTask *save = g_new0 (SaveTask, 1);
  g_autoptr (GTask) task = g_task_new (NULL, cancellable, callback, user_data);

  save->bar = g_object_ref (bar);
  save->bytes = g_bytes_ref (bytes);
  save->dest = g_strdup (dest);
  g_task_set_task_data (task, save, save_task_free);
  g_task_run_in_thread (task, save_task_thread);
}

gboolean
m6_save_task_finish (GAsyncResult  *result,
                     GError       **error)
{
  return g_task_propagate_boolean (G_TASK (result), error);
}
