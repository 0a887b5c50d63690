/* SPDX-License-Identifier: MIT */
/* m6-application-open.c — opening captures: each is read on a thread,
 * behind a window with its progress and Cancel shown once the read has
 * taken a quarter of a second, then given a session window; files from
 * the command line, the Open dialog and drops all come here. */
#include "m6-application-private.h"

#include <glib/gi18n.h>
#include <glib/gstdio.h>

#include "m6-capture.h"
#include "m6-job-bar.h"
#include "m6-sample-model.h"
#include "m6-samples.h"
#include "m6-session-window.h"

/* A loaded capture gets its window. */
static void
open_capture_show (M6Application       *self,
                   const char          *path,
                   M6Session           *session,
                   const M6CaptureInfo *loaded,
                   M6SampleModel       *samples,
                   const char          *samples_note)
{
  M6CaptureInfo info = *loaded;

  M6SessionWindow *window = m6_session_window_new_for_capture (GTK_APPLICATION (self), session, path);
  if (samples != NULL)
    m6_session_window_set_sample_model (window, samples, (GDestroyNotify) m6_sample_model_free);
  if (info.write_error)
    m6_session_window_show_notice (window, _("This recording stopped early because its file could not be written (a full disk?). "
                                             "Everything written until then is shown."));
  else if (!info.finished)
    {
      g_autofree char *bytes = g_format_size (info.ignored_bytes);
      g_autofree char *notice =
        info.ignored_bytes > 0
        ? g_strdup_printf (_("This capture was not finished: its recording stopped early. "
                             "Everything up to there is shown; the last %s were incomplete and are left out."), bytes)
        : g_strdup (_("This capture was not finished: its recording stopped early. Everything up to there is shown."));
      g_autofree char *from = info.from_checkpoint
        /* Translators: seconds into the session, then a count of events */
        ? g_strdup_printf (_("It opened from its last whole checkpoint, %.1f s into the session, and replayed the %llu events recorded after it."),
                           (double) info.checkpoint_t_ns / 1e9, (unsigned long long) info.replayed_events)
        : NULL;
      g_autofree char *both = from != NULL ? g_strconcat (notice, " ", from, NULL) : g_strdup (notice);
      m6_session_window_show_notice (window, both);
    }
  else if (samples_note != NULL)
    m6_session_window_show_notice (window, samples_note);
  if (info.rolls > 0)
    {
      g_autofree char *notice =
        g_strdup_printf (_("This is a rolling capture (a maximum size was set): the tree and its figures cover the "
                           "whole recording, but its oldest %llu events were dropped, so the frames shown are those "
                           "of the last part only."), (unsigned long long) info.dropped_events);
      m6_session_window_show_notice (window, notice);
    }
  gtk_window_present (GTK_WINDOW (window));
  if (self->picker != NULL)
    gtk_window_destroy (self->picker);

  m6_application_add_recent (self, path);
  if (self->settings != NULL)
    {
      g_autofree char *dir = g_path_get_dirname (path);
      g_settings_set_string (self->settings, "last-capture-dir", dir);
    }
}


/* Loading a capture: on a thread, behind a window with its progress and
 * Cancel, shown once the load has taken LOAD_WINDOW_DELAY_MS (a small
 * capture opens without a flash); the other windows stay usable. */
#define LOAD_WINDOW_DELAY_MS 250

typedef struct
{
  M6Application *self;
  char          *path;
  M6Session     *session;
  M6CaptureInfo  info;
  M6SampleModel *samples;        /* its call-stack samples, or NULL */
  char          *samples_note;   /* the samples could not be read: why */
  GtkWindow     *window;
  M6JobBar      *bar;
  guint          present_id;
} Load;

static gboolean
load_present_cb (gpointer data)
{
  Load *load = data;

  load->present_id = 0;
  gtk_window_present (load->window);
  return G_SOURCE_REMOVE;
}

static void
load_free (gpointer data)
{
  Load *load = data;

  g_object_unref (load->self);
  g_free (load->path);
  g_free (load->samples_note);
  g_clear_pointer (&load->samples, m6_sample_model_free);
  g_clear_object (&load->session);
  g_clear_object (&load->bar);
  g_free (load);
}

/* The capture with its call-stack samples placed under its scopes, in
 * one replay of its events (m6-sample-model.h); sample records that
 * cannot be read leave the capture to open without them, said in a notice. */
static void
load_thread (GTask        *task,
             gpointer      source,
             gpointer      data,
             GCancellable *cancellable)
{
  Load *load = data;
  GError *error = NULL;
  g_autoptr (GError) samples_error = NULL;
  g_autoptr (M6Samples) samples = m6_samples_load (load->path, &samples_error);

  if (samples == NULL && g_error_matches (samples_error, M6_CAPTURE_ERROR, M6_CAPTURE_ERROR_CORRUPT))
    load->samples_note = g_strdup_printf (_("Its call-stack samples could not be read, so they are not shown: %s"),
                                          samples_error->message);
  if (samples != NULL && (samples->threads->len > 0 || samples->status != NULL))
    {
      load->samples = m6_sample_model_new (load->session);
      m6_sample_model_add (load->samples, samples, FALSE);
    }
  if (!m6_capture_replay_into (load->path, load->session,
                               load->samples != NULL ? m6_sample_model_events_func : NULL, load->samples,
                               &load->info, cancellable, m6_job_bar_progress, load->bar, &error))
    {
      g_task_return_error (task, error);
      return;
    }
  if (load->samples != NULL)
    m6_sample_model_flush (load->samples);
  g_task_return_boolean (task, TRUE);
}

static void
load_done (GObject      *source,
           GAsyncResult *result,
           gpointer      user_data)
{
  GTask *task = G_TASK (result);
  Load *load = g_task_get_task_data (task);
  M6Application *self = load->self;
  g_autoptr (GError) error = NULL;

  self->n_loads--;
  g_clear_handle_id (&load->present_id, g_source_remove);
  m6_job_bar_end (load->bar);
  gtk_window_destroy (load->window);
  if (!g_task_propagate_boolean (task, &error))
    {
      g_autofree char *display = g_filename_display_basename (load->path);
      g_autofree char *heading = g_strdup_printf (_("Could Not Open “%s”"), display);

      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        {
          g_free (self->last_error);
          self->last_error = g_strdup_printf (_("Opening %s was cancelled."), display);
        }
      else
        m6_application_show_error (self, heading, error->message);
      g_application_release (G_APPLICATION (self));
      return;
    }
  open_capture_show (self, load->path, load->session, &load->info, g_steal_pointer (&load->samples), load->samples_note);
  g_application_release (G_APPLICATION (self));
}

void
m6_application_open_capture (M6Application *self,
              const char    *path)
{
  /* Always on a thread (even a small file: the main loop does no file
   * I/O); the window shows after LOAD_WINDOW_DELAY_MS, so a small capture
   * opens without a flash. A missing or damaged file is told by
   * load_done like any other failure. */
  Load *load = g_new0 (Load, 1);
  g_autofree char *display = g_filename_display_basename (path);
  g_autofree char *title = g_strdup_printf (_("Opening %s"), display);
  GtkWindow *active = gtk_application_get_active_window (GTK_APPLICATION (self));
  GTask *task;
  GCancellable *cancellable;

  load->self = g_object_ref (self);
  load->path = g_strdup (path);
  load->session = m6_session_new ();
  load->bar = g_object_ref_sink (m6_job_bar_new ());
  load->window = GTK_WINDOW (gtk_window_new ());
  gtk_window_set_title (load->window, title);
  gtk_window_set_default_size (load->window, 480, -1);
  gtk_window_set_application (load->window, GTK_APPLICATION (self));
  if (active != NULL)
    gtk_window_set_transient_for (load->window, active);
  gtk_window_set_child (load->window, GTK_WIDGET (load->bar));
  gtk_window_set_deletable (load->window, FALSE);
  cancellable = m6_job_bar_begin (load->bar, title);
  load->present_id = g_timeout_add (LOAD_WINDOW_DELAY_MS, load_present_cb, load);

  self->n_loads++;
  g_application_hold (G_APPLICATION (self));
  task = g_task_new (NULL, cancellable, load_done, NULL);
  g_task_set_task_data (task, load, load_free);
  g_task_run_in_thread (task, load_thread);
  g_object_unref (task);
}

guint
m6_application_get_n_loads (M6Application *self)
{
  return self->n_loads;
}

GtkWindow *
m6_application_get_load_window (M6Application *self)
{
  for (GList *l = gtk_application_get_windows (GTK_APPLICATION (self)); l != NULL; l = l->next)
    if (GTK_IS_WINDOW (l->data) && M6_IS_JOB_BAR (gtk_window_get_child (l->data)))
      return l->data;
  return NULL;
}

void
m6_application_open_file (M6Application *self,
                          GFile         *file)
{
  g_autofree char *path = g_file_get_path (file);

  if (path == NULL)
    {
      g_autofree char *uri = g_file_get_uri (file);
      g_autofree char *heading = g_strdup_printf (_("Could Not Open “%s”"), uri);
      m6_application_show_error (self, heading, _("Only captures on this computer’s file system can be opened."));
      return;
    }
  m6_application_open_capture (self, path);
}

gboolean
m6_application_open_dropped (M6Application *self,
                             const GValue  *value)
{
  if (G_VALUE_HOLDS (value, GDK_TYPE_FILE_LIST))
    {
      GSList *files = gdk_file_list_get_files (g_value_get_boxed (value));
      gboolean any = files != NULL;

      for (GSList *l = files; l; l = l->next)
        m6_application_open_file (self, l->data);
      g_slist_free (files);
      return any;
    }
  if (G_VALUE_HOLDS (value, G_TYPE_FILE) && g_value_get_object (value) != NULL)
    {
      m6_application_open_file (self, g_value_get_object (value));
      return TRUE;
    }
  return FALSE;
}

