/* SPDX-License-Identifier: MIT */
/* m6-session-jobs.c — a session window's saves and exports on the job
 * thread: pictures drawn here and written there, trees serialised here or
 * exported there, copies and replaying exports of the capture there; one
 * at a time, the others waiting in order. The main loop does no file I/O. */
#include "m6-session-save-private.h"

#include <glib/gi18n.h>
#include <glib/gstdio.h>

#include "m6-save-task.h"

/* --- saves and exports on a thread -------------------------------------- */

typedef struct
{
  M6SessionWindow *self;
  M6JobBar        *bar;
  SaveJob          job;
  char            *path;
} SaveDone;

/* A save asked for while another runs: it starts when that one ends. */
typedef struct
{
  WriteFunc  write;
  SaveJob    job;
  char      *path;
} QueuedSave;


static void
queued_save_free (gpointer data)
{
  QueuedSave *queued = data;

  g_free (queued->path);
  g_free (queued);
}

void
m6_session_window_clear_save_queue (M6SessionWindow *self)
{
  g_queue_clear_full (&self->save_queue, queued_save_free);
}

gboolean
m6_session_window_get_saving (M6SessionWindow *self)
{
  g_return_val_if_fail (M6_IS_SESSION_WINDOW (self), FALSE);

  return m6_job_bar_get_busy (self->job_bar) || !g_queue_is_empty (&self->save_queue);
}

static void
save_done_cb (GObject      *source,
              GAsyncResult *result,
              gpointer      data)
{
  SaveDone *done = data;
  g_autoptr (GError) error = NULL;

  m6_save_task_finish (result, &error);
  m6_job_bar_end (done->bar);
  /* The window may have closed meanwhile: then there is no one to tell. */
  if (gtk_widget_get_root (GTK_WIDGET (done->bar)) != NULL)
    {
      m6_session_report_written (done->self, done->path, &done->job, error);
      QueuedSave *next = g_queue_pop_head (&done->self->save_queue);
      if (next != NULL)
        {
          m6_session_write_and_report (done->self, next->write, next->path, &next->job);
          queued_save_free (next);
        }
    }
  g_object_unref (done->self);
  g_object_unref (done->bar);
  g_free (done->path);
  g_free (done);
}

/* The job bar shows "Saving NAME"; @done comes back to save_done_cb. */
static SaveDone *
save_done_begin (M6SessionWindow  *self,
                 const char       *path,
                 const SaveJob    *job,
                 GCancellable    **cancellable)
{
  SaveDone *done = g_new0 (SaveDone, 1);
  g_autofree char *shown = m6_session_window_display_path (path);
  g_autofree char *title = g_strdup_printf (_("Saving %s"), shown);

  done->self = g_object_ref (self);
  done->bar = g_object_ref (self->job_bar);
  done->job = *job;
  done->path = g_strdup (path);
  *cancellable = m6_job_bar_begin (self->job_bar, title);
  return done;
}

/* Copies of the recording and the exports that replay it go on a thread
 * (m6-save-task.c) once they are big enough to be felt; the rest read the
 * session in place (a few ms). */
static gboolean
save_on_thread (M6SessionWindow *self,
                const char      *path,
                const SaveJob   *job)
{
  gboolean replays = job->kind == SAVED_EXPORT
                     && (job->format == M6_EXPORT_NDJSON || job->format == M6_EXPORT_CHROME);
  M6ExportOptions options = { job->interval_s > 0 ? job->interval_s : 1.0 };

  /* Pictures: drawn here (they read widgets and the session), written on
   * the thread. A drawing that fails says why in place. */
  if (job->kind == SAVED_FLAME_GRAPH || job->kind == SAVED_DRIFT_GRAPH)
    {
      int width, height;
      g_autoptr (GBytes) bytes = NULL;

      m6_session_picture_size (self, job, &width, &height);
      bytes = job->kind == SAVED_FLAME_GRAPH
        ? m6_flame_graph_render (self->flame_graph, path, width, height, NULL)
        : m6_drift_graph_render (self->drift_graph, path, width, height, NULL);
      if (bytes == NULL)
        return FALSE;

      GCancellable *cancellable;
      SaveDone *done = save_done_begin (self, path, job, &cancellable);

      m6_save_task_run_bytes (self->job_bar, cancellable, bytes, path,
                              save_done_cb, done);
      return TRUE;
    }

  /* A live session's trees: serialised here (the main thread holds the
   * lock; no I/O), written on the thread. */
  if (self->recording != NULL && (job->kind == SAVED_JSON || (job->kind == SAVED_EXPORT && !replays)))
    {
      g_autoptr (GOutputStream) out = g_memory_output_stream_new_resizable ();
      g_autoptr (GBytes) bytes = NULL;
      gboolean ok = job->kind == SAVED_JSON || job->format == M6_EXPORT_JSON
                    ? m6_export_write_json (self->session, -1, out, NULL)
                    : m6_export_session_to_stream (self->session, NULL, job->format, &options, out, NULL);

      if (!ok || !g_output_stream_close (out, NULL, NULL))
        return FALSE;   /* in place, which says why */
      bytes = g_memory_output_stream_steal_as_bytes (G_MEMORY_OUTPUT_STREAM (out));

      GCancellable *cancellable;
      SaveDone *done = save_done_begin (self, path, job, &cancellable);

      m6_save_task_run_bytes (self->job_bar, cancellable, bytes, path,
                              save_done_cb, done);
      return TRUE;
    }

  /* A loaded session's trees (json, csv, folded) on a thread too: nothing
   * ingests into it, so the thread and the window can both read it. */
  if (self->recording == NULL && (job->kind == SAVED_JSON || (job->kind == SAVED_EXPORT && !replays)))
    {
      GCancellable *cancellable;
      SaveDone *done = save_done_begin (self, path, job, &cancellable);

      m6_save_task_run_trees (self->job_bar, cancellable, self->session,
                              job->kind == SAVED_JSON ? M6_EXPORT_JSON : job->format, path,
                              save_done_cb, done);
      return TRUE;
    }

  /* A loaded capture's replaying exports too: its events are not kept,
   * so the thread replays the file (m6_save_task_export_replayed). */
  if (job->kind != SAVED_CAPTURE && !replays)
    return FALSE;
  if (self->recording != NULL ? m6_recording_get_capture_path (self->recording) == NULL
                               : self->capture_path == NULL)
    return FALSE;

  GCancellable *cancellable;
  SaveDone *done = save_done_begin (self, path, job, &cancellable);

  m6_save_task_run (self->job_bar, cancellable,
                    self->recording, self->capture_path, replays, job->format, &options, path,
                    save_done_cb, done);
  return TRUE;
}

void
m6_session_write_and_report (M6SessionWindow *self,
                  WriteFunc        write,
                  const char      *path,
                  const SaveJob   *job)
{
  g_autoptr (GError) error = NULL;

  /* One job at a time: the others wait their turn, in order. */
  if (m6_job_bar_get_busy (self->job_bar))
    {
      QueuedSave *queued = g_new0 (QueuedSave, 1);
      g_autofree char *shown = m6_session_window_display_path (path);
      g_autofree char *message = g_strdup_printf (_("%s will be saved when the save under way ends."), shown);

      queued->write = write;
      queued->job = *job;
      queued->path = g_strdup (path);
      g_queue_push_tail (&self->save_queue, queued);
      m6_session_window_show_toast (self, message);
      return;
    }
  if (save_on_thread (self, path, job))
    return;
  write (self, path, job, &error);
  m6_session_report_written (self, path, job, error);
}

