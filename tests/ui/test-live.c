/* SPDX-License-Identifier: MIT */
/* test-live.c — the live view of a program whose instrumented thread is not
 * its main one: a producer thread of this test process, recorded through
 * the window's own recording as a game would be; and the view's rate
 * while its recording is behind that thread. */
#include <glib/gstdio.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "mach6.h"
#include "m6-test-hooks.h"
#include "m6-flame-graph.h"
#include "m6-capture.h"
#include "m6-recording.h"
#include "m6-settings.h"
#include "m6-status-bar.h"
#include "ui-test-util.h"

static M6Application *app;
static gint stop;
static gint flat_out;   /* produce without a pause between frames */

static void *
produce (void *data)
{
  uint32_t frame = mach6_label_id ("frame");
  uint32_t work = mach6_label_id ("work");

  mach6_thread_name ("game");
  while (!g_atomic_int_get (&stop))
    {
      mach6_mark_id (frame);
      for (int i = 0; i < 20; i++)
        {
          mach6_mark_id (work);
          mach6_done ();
        }
      mach6_done ();
      if (!g_atomic_int_get (&flat_out))
        g_usleep (100);
    }
  return NULL;
}

static gboolean
tree_shown (gpointer window)
{
  return m6_flame_graph_get_tree (m6_session_window_get_flame_graph (window)) != NULL;
}

/* This process's segment, once the producer thread has made it. */
static M6Reader *
attach_self (void)
{
  g_autoptr (GError) error = NULL;

  /* The segment comes with the thread's first event. */
  M6Reader *reader = NULL;
  for (int i = 0; i < 500 && reader == NULL; i++)
    {
      g_clear_error (&error);
      reader = m6_reader_attach (getpid (), &error);
      if (reader == NULL)
        g_usleep (10000);
    }
  g_assert_no_error (error);
  return reader;
}

/* No thread has the pid's tid, and frames are in by the window's first
 * look: it shows the game thread all the same. */
static void
test_worker_thread_shown (void)
{
  pthread_t thread;

  g_atomic_int_set (&stop, 0);
  pthread_create (&thread, NULL, produce, NULL);
  M6SessionWindow *window = m6_session_window_new_live (GTK_APPLICATION (app), attach_self ());
  gtk_window_present (GTK_WINDOW (window));

  gboolean shown = ui_wait_for (tree_shown, window, 10);
  M6Session *session = m6_session_window_get_session (window);
  guint frames = m6_thread_get_frames (m6_session_get_thread (session, 0))->len;
  g_atomic_int_set (&stop, 1);
  pthread_join (thread, NULL);

  if (!shown)
    g_error ("the window showed no thread in 10 s; thread 0 had %u frames", frames);
  M6Thread *t = m6_session_get_thread (session, m6_session_window_get_thread (window));
  g_assert_cmpstr (m6_thread_get_name (t), ==, "game");
  gtk_window_destroy (GTK_WINDOW (window));
  ui_spin (0.05);
}

typedef struct
{
  M6SessionWindow *window;
  guint            refreshes, catch_ups;
} Rates;

static void
rates_mark (Rates *r)
{
  r->refreshes = m6_test_get_count (r->window, "refresh");
  r->catch_ups = m6_test_get_count (r->window, "catch-up-refresh");
}

/* Since rates_mark(): a refresh made while caught up? */
static gboolean
refreshed_caught_up (gpointer data)
{
  Rates *r = data;
  guint refreshes = m6_test_get_count (r->window, "refresh");
  guint catch_ups = m6_test_get_count (r->window, "catch-up-refresh");

  if (refreshes > r->refreshes && catch_ups == r->catch_ups)
    return TRUE;
  rates_mark (r);
  return FALSE;
}

static gboolean
caught_up_refresh (gpointer data)
{
  Rates *r = data;
  return m6_test_get_count (r->window, "catch-up-refresh") > r->catch_ups;
}

/* The status bar's first label: the state of the session. */
static gboolean
state_shows (M6SessionWindow *window,
             const char      *text)
{
  GtkWidget *bar = ui_find_descendant (GTK_WIDGET (window), M6_TYPE_STATUS_BAR);
  GtkWidget *state = bar != NULL ? gtk_widget_get_first_child (bar) : NULL;

  g_assert_true (GTK_IS_LABEL (state));
  return strstr (gtk_label_get_text (GTK_LABEL (state)), text) != NULL;
}

static gboolean
shows_catching_up (gpointer window)
{
  return state_shows (window, "Catching Up");
}

static gboolean
shows_live (gpointer window)
{
  return state_shows (window, "Live");
}

/* A recording behind its game gets the CPU the views would take: while
 * the rings have held a quarter of a ring since the worker last emptied
 * them (m6_recording_is_behind()), the views follow at
 * 10 Hz (the flame graph) and 5 Hz (table, drift graph), one a frame;
 * once it keeps up again, at the refresh rate. The worker is held for
 * 0.3 s while the thread runs flat out, so the rings are full when it
 * comes back and it is behind for certain. */
static void
test_catch_up (void)
{
  pthread_t thread;
  Rates r = { 0 };

  g_atomic_int_set (&stop, 0);
  g_atomic_int_set (&flat_out, 0);
  pthread_create (&thread, NULL, produce, NULL);
  r.window = m6_session_window_new_live (GTK_APPLICATION (app), attach_self ());
  gtk_window_present (GTK_WINDOW (r.window));
  g_assert_true (ui_wait_for (tree_shown, r.window, 10));
  M6Recording *recording = m6_session_window_get_recording (r.window);

  /* Keeping up with 20 frames a ms: refreshed at the refresh rate. */
  rates_mark (&r);
  g_assert_true (ui_wait_for (refreshed_caught_up, &r, 10));

  g_atomic_int_set (&flat_out, 1);
  m6_recording_hold_worker (recording, TRUE);
  ui_spin (0.3);
  g_assert_cmpint (m6_recording_get_lag_us (recording), >=, 250000);
  rates_mark (&r);
  m6_recording_hold_worker (recording, FALSE);
  g_assert_true (ui_wait_for (caught_up_refresh, &r, 10));
  /* The user is told why the views slowed down. */
  g_assert_true (ui_wait_for (shows_catching_up, r.window, 10));

  /* While catching up, no more than 20 refreshes a second (and a few for
   * a frame clock running late). */
  rates_mark (&r);
  gint64 t0 = g_get_monotonic_time ();
  ui_spin (1.0);
  double seconds = (g_get_monotonic_time () - t0) / 1e6;
  guint catch_ups = m6_test_get_count (r.window, "catch-up-refresh") - r.catch_ups;
  guint refreshes = m6_test_get_count (r.window, "refresh") - r.refreshes;
  g_test_message ("flat out for %.2f s: %u refreshes, %u of them catching up; lag %" G_GINT64_FORMAT " µs",
                  seconds, refreshes, catch_ups, m6_recording_get_lag_us (recording));
  g_assert_cmpuint (catch_ups, <=, (guint) (20 * seconds) + 3);

  /* Back to a pace it keeps up with: the views follow at their own rate
   * again, once the worker has kept up for a second. */
  g_atomic_int_set (&flat_out, 0);
  rates_mark (&r);
  g_assert_true (ui_wait_for (refreshed_caught_up, &r, 10));
  g_assert_true (ui_wait_for (shows_live, r.window, 10));

  g_atomic_int_set (&stop, 1);
  pthread_join (thread, NULL);
  gtk_window_destroy (GTK_WINDOW (r.window));
  ui_spin (0.05);
}

/* The recording-split setting: the window's own recording goes to a
 * series of capture files, each opening on its own. */
static void
test_recording_split (void)
{
  GSettings *settings = m6_settings_get_default ();
  pthread_t thread;

  g_assert_nonnull (settings);
  g_settings_set_string (settings, "recording-split", "0.4s");
  g_atomic_int_set (&stop, 0);
  g_atomic_int_set (&flat_out, 0);
  pthread_create (&thread, NULL, produce, NULL);
  M6SessionWindow *window = m6_session_window_new_live (GTK_APPLICATION (app), attach_self ());
  gtk_window_present (GTK_WINDOW (window));
  g_assert_true (ui_wait_for (tree_shown, window, 10));
  M6Recording *recording = m6_session_window_get_recording (window);
  ui_spin (1.5);
  g_atomic_int_set (&stop, 1);
  pthread_join (thread, NULL);

  g_auto (GStrv) files = m6_recording_dup_capture_paths (recording);
  guint n = g_strv_length (files);
  g_test_message ("%u files", n);
  g_assert_cmpuint (n, >=, 3);
  g_assert_true (g_str_has_suffix (files[0], "-001.mach6"));
  /* All but the current one are finished captures. */
  for (guint i = 0; i + 1 < n; i++)
    {
      M6CaptureInfo info;
      g_autoptr (GError) error = NULL;
      g_autoptr (M6Session) session = m6_capture_load_full (files[i], &info, &error);
      g_assert_no_error (error);
      g_assert_true (info.finished);
      g_assert_cmpuint (m6_session_get_n_threads (session), >=, 1);
    }
  gtk_window_destroy (GTK_WINDOW (window));
  ui_spin (0.05);
  g_settings_reset (settings, "recording-split");
}

/* The recording-max-size setting: the window's own recording is a
 * rolling capture that stays within it (a game flat out writes its 4 MB
 * in well under a second), and a copy saved from it opens and says it
 * rolled. */
static void
test_recording_max_size (void)
{
  GSettings *settings = m6_settings_get_default ();
  pthread_t thread;

  g_assert_nonnull (settings);
  g_settings_set_string (settings, "recording-max-size", "4M");
  g_atomic_int_set (&stop, 0);
  g_atomic_int_set (&flat_out, 1);
  pthread_create (&thread, NULL, produce, NULL);
  M6SessionWindow *window = m6_session_window_new_live (GTK_APPLICATION (app), attach_self ());
  gtk_window_present (GTK_WINDOW (window));
  g_assert_true (ui_wait_for (tree_shown, window, 10));
  M6Recording *recording = m6_session_window_get_recording (window);
  M6CaptureWriter *writer = m6_recording_get_capture_writer (recording);
  g_assert_nonnull (writer);
  guint64 biggest = 0;
  for (int i = 0; i < 1000 && m6_capture_writer_get_n_rolls (writer, NULL) < 2; i++)
    {
      ui_spin (0.02);
      biggest = MAX (biggest, m6_recording_get_capture_size (recording));
    }
  g_atomic_int_set (&stop, 1);
  pthread_join (thread, NULL);
  g_assert_cmpuint (m6_capture_writer_get_n_rolls (writer, NULL), >=, 2);
  g_assert_cmpuint (biggest, <=, 4 * 1024 * 1024);

  g_autofree char *dir = g_dir_make_tmp ("mach6-ui-XXXXXX", NULL);
  g_autofree char *copy = g_build_filename (dir, "copy.mach6", NULL);
  g_autoptr (GError) error = NULL;
  g_assert_true (m6_recording_save_copy (recording, copy, NULL, NULL, NULL, &error));
  g_assert_no_error (error);
  M6CaptureInfo info;
  g_autoptr (M6Session) session = m6_capture_load_full (copy, &info, &error);
  g_assert_no_error (error);
  g_test_message ("%llu rolls, %llu events kept, %llu dropped, %llu bytes", (unsigned long long) info.rolls,
                  (unsigned long long) info.n_events, (unsigned long long) info.dropped_events,
                  (unsigned long long) info.file_size);
  g_assert_cmpuint (info.rolls, >=, 2);
  g_assert_cmpuint (info.file_size, <=, 4 * 1024 * 1024);
  g_unlink (copy);
  g_rmdir (dir);
  gtk_window_destroy (GTK_WINDOW (window));
  ui_spin (0.05);
  g_settings_reset (settings, "recording-max-size");
}

int
main (int   argc,
      char *argv[])
{
  if (!ui_test_init (&argc, &argv, FALSE))
    return 0;
  app = ui_test_app_new ();

  g_test_add_func ("/ui/live/worker-thread-shown", test_worker_thread_shown);
  g_test_add_func ("/ui/live/catch-up", test_catch_up);
  g_test_add_func ("/ui/live/recording-split", test_recording_split);
  g_test_add_func ("/ui/live/recording-max-size", test_recording_max_size);

  int status = g_test_run ();
  return ui_test_finish (app, status);
}
