/* SPDX-License-Identifier: MIT */
/* sharing-util.c — see sharing-util.h. */
#include "sharing-util.h"

#include <signal.h>

#include "m6-capture.h"
#include "ui-test-util.h"

M6Application *app;

/* Session windows other than @except, newest last. */
M6SessionWindow *
other_session_window (M6SessionWindow *except)
{
  M6SessionWindow *found = NULL;

  for (GList *l = gtk_application_get_windows (GTK_APPLICATION (app)); l; l = l->next)
    if (M6_IS_SESSION_WINDOW (l->data) && l->data != except)
      {
        found = l->data;
        break;   /* the list is most recently focused first */
      }
  return found;
}

char *
read_text (const char *path)
{
  g_autoptr (GError) error = NULL;
  char *text = NULL;

  if (!g_file_get_contents (path, &text, NULL, &error))
    g_error ("could not read %s: %s", path, error->message);
  return text;
}

/* A frame loop of physics, render and ai with uniform noise, written with
 * M6CaptureWriter as it is ingested; @physics_scale and @ai_scale slow
 * those down, and @ai_spikes makes every tenth ai call take 20 ms. */
void
write_capture_full (const char *path,
                    guint32     seed,
                    double      physics_scale,
                    double      ai_scale,
                    gboolean    ai_spikes)
{
  g_autoptr (M6Session) session = m6_session_new ();
  g_autoptr (GError) error = NULL;
  g_autoptr (GArray) events = g_array_new (FALSE, FALSE, sizeof (M6Event));
  g_autoptr (GRand) rand = g_rand_new_with_seed (seed);
  M6CaptureWriter *writer;
  M6Thread *thread;
  guint32 frame, scopes[3];
  const double base_ms[3] = { 2.0 * physics_scale, 5.0, 1.0 * ai_scale };
  gint64 t = 1000, heap = 1 << 20;

  m6_session_set_process (session, 4242, "synthetic");
  m6_session_set_heap_source (session, M6_HEAP_SOURCE_HOOKS);
  thread = m6_session_add_thread (session, 4242, "main");
  frame = m6_session_intern_label (session, "frame", -1);
  scopes[0] = m6_session_intern_label (session, "physics", -1);
  scopes[1] = m6_session_intern_label (session, "render", -1);
  scopes[2] = m6_session_intern_label (session, "ai", -1);

  writer = m6_capture_writer_new (path, session, &error);
  g_assert_no_error (error);

  for (guint f = 0; f < SYNTH_FRAMES; f++)
    {
      M6Event ev = { t, heap, frame, 0 };

      g_array_set_size (events, 0);
      g_array_append_val (events, ev);
      for (guint s = 0; s < G_N_ELEMENTS (scopes); s++)
        {
          double ms = base_ms[s] * g_rand_double_range (rand, 1.0, 1.2);

          if (s == 2 && ai_spikes && f % 10 == 0)
            ms = 20.0;
          ev = (M6Event) { t, heap, scopes[s], 1 };
          g_array_append_val (events, ev);
          t += (gint64) (ms * 1e6);
          heap += 64;
          ev = (M6Event) { t, heap, M6_EVENT_DONE, 1 };
          g_array_append_val (events, ev);
        }
      t += 100000;
      ev = (M6Event) { t, heap, M6_EVENT_DONE, 0 };
      g_array_append_val (events, ev);
      t += 16 * 1000000;
      m6_session_ingest (session, thread, (M6Event *) events->data, events->len);
    }
  m6_session_notify_changed (session);

  g_assert_true (m6_capture_writer_finish (writer, &error));
  g_assert_no_error (error);
  m6_capture_writer_free (writer);
}

void
write_synthetic_capture (const char *path,
                         guint32     seed,
                         double      physics_scale)
{
  write_capture_full (path, seed, physics_scale, 1.0, FALSE);
}

void
live_setup (Fixture       *f,
            gconstpointer  data)
{
  f->tmpdir = g_dir_make_tmp ("mach6-sharing-XXXXXX", NULL);
  f->game = ui_start_game ("2", "1");
  ui_wait_listed (f->game);

  /* At least 20 frames: the drift graph and the exports need some data. */
  f->window = ui_attach_live (app, f->game, 20);
  g_object_add_weak_pointer (G_OBJECT (f->window), (gpointer *) &f->window);
}

void
live_teardown (Fixture       *f,
               gconstpointer  data)
{
  GList *windows = g_list_copy (gtk_application_get_windows (GTK_APPLICATION (app)));

  ui_stop_game (f->game, SIGKILL);
  for (GList *l = windows; l; l = l->next)
    gtk_window_destroy (l->data);
  g_list_free (windows);
  ui_spin (0.05);
  g_assert_null (f->window);
  ui_remove_tree (f->tmpdir);
  g_free (f->tmpdir);
}

void
plain_setup (Fixture       *f,
             gconstpointer  data)
{
  f->tmpdir = g_dir_make_tmp ("mach6-sharing-XXXXXX", NULL);
}

/* Open @path as app.open does; the window it made. */
M6SessionWindow *
open_capture (const char      *path,
              M6SessionWindow *except)
{
  g_action_group_activate_action (G_ACTION_GROUP (app), "open", g_variant_new_string (path));
  ui_wait_jobs (app);
  M6SessionWindow *opened = other_session_window (except);
  g_assert_nonnull (opened);
  g_assert_false (m6_session_window_get_live (opened));
  return opened;
}

gboolean
has_dialog (void)
{
  gboolean found = FALSE;
  GListModel *toplevels = gtk_window_get_toplevels ();

  for (guint i = 0; i < g_list_model_get_n_items (toplevels); i++)
    {
      g_autoptr (GtkWindow) w = g_list_model_get_item (toplevels, i);
      if (ADW_IS_MESSAGE_DIALOG (w))
        {
          found = TRUE;
          gtk_window_destroy (w);
          break;
        }
    }
  return found;
}
