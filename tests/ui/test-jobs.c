/* SPDX-License-Identifier: MIT */
/* test-jobs.c — long work off the main loop, in real windows (under Xvfb
 * when there is no display): a large capture loads on a thread while
 * another window is driven through its actions, shows its progress and
 * can be cancelled; a live window keeps answering while its recording's
 * worker is held; a large save runs behind the session window's job bar. */
#include <adwaita.h>
#include <glib/gstdio.h>
#include <signal.h>

#include "m6-application.h"
#include "m6-test-hooks.h"
#include "m6-capture.h"
#include "m6-job-bar.h"
#include "m6-recording.h"
#include "m6-screenshot.h"
#include "m6-session-window.h"
#include "m6-ui.h"
#include "ui-test-util.h"

static M6Application *app;
static char *tmpdir;
static char *big_path;      /* a capture of BIG_FRAMES frames */
static char *small_path;

#define BIG_FRAMES 200000u  /* x 10 events: 2 M events, 8 MB packed */

/* A capture of @frames frames of frame → a, b (heap moving), written
 * through the real writer. */
static void
write_capture (const char *path,
               guint       frames)
{
  g_autoptr (M6Session) session = m6_session_new ();
  g_autoptr (GError) error = NULL;
  M6CaptureWriter *writer;
  M6Thread *thread;
  guint32 frame, a, b;
  g_autoptr (GArray) events = g_array_new (FALSE, FALSE, sizeof (M6Event));
  gint64 t = 0, heap = 1000;

  m6_session_set_process (session, 4242, "big-game");
  m6_session_set_heap_source (session, M6_HEAP_SOURCE_HOOKS);
  thread = m6_session_add_thread (session, 4242, "main");
  frame = m6_session_intern_label (session, "frame", -1);
  a = m6_session_intern_label (session, "physics", -1);
  b = m6_session_intern_label (session, "render", -1);
  writer = m6_capture_writer_new (path, session, &error);
  g_assert_no_error (error);

  for (guint f = 0; f < frames; f++)
    {
      M6Event evs[] = {
        { t += 10, heap, frame, 0 },
        { t += 10, heap += 16, a, 1 },
        { t += 10, heap, M6_EVENT_DONE, 1 },
        { t += 10, heap += 8, b, 1 },
        { t += 10, heap -= 8, M6_EVENT_DONE, 1 },
        { t += 10, heap, a, 1 },
        { t += 10, heap, M6_EVENT_DONE, 1 },
        { t += 10, heap, b, 1 },
        { t += 10, heap, M6_EVENT_DONE, 1 },
        { t += 10, heap, M6_EVENT_DONE, 0 },
      };
      g_array_append_vals (events, evs, G_N_ELEMENTS (evs));
      if (events->len >= 65536 || f + 1 == frames)
        {
          m6_session_ingest (session, thread, (M6Event *) events->data, events->len);
          g_array_set_size (events, 0);
        }
    }
  g_assert_true (m6_capture_writer_finish (writer, &error));
  g_assert_no_error (error);
  m6_capture_writer_free (writer);
}

/* With $MACH6_TEST_SHOTS set to a folder, save what the user sees there. */
static void
shoot (GtkWidget  *widget,
       const char *name)
{
  const char *dir = g_getenv ("MACH6_TEST_SHOTS");
  g_autofree char *path = dir ? g_build_filename (dir, name, NULL) : NULL;

  if (path != NULL && !m6_widget_save_png (widget, path, NULL))
    g_test_message ("could not save %s", path);
}

static M6SessionWindow *
find_session_window (const char *path)
{
  for (GList *l = gtk_application_get_windows (GTK_APPLICATION (app)); l; l = l->next)
    if (M6_IS_SESSION_WINDOW (l->data))
      {
        M6SessionWindow *w = l->data;
        if (path == NULL && m6_session_window_get_live (w))
          return w;
        if (path != NULL && g_strcmp0 (m6_session_window_get_capture_path (w), path) == 0)
          return w;
      }
  return NULL;
}

static gboolean
no_loads (gpointer data)
{
  return m6_application_get_n_loads (app) == 0;
}

static void
open_and_wait (const char *path)
{
  g_action_group_activate_action (G_ACTION_GROUP (app), "open", g_variant_new_string (path));
  g_assert_true (ui_wait_for (no_loads, NULL, 60));
}

/* The big capture loads on a thread: meanwhile the main loop turns and
 * another window answers its actions; the load shows progress, and the
 * window it opens has every frame. */
static void
test_load_keeps_ui_responsive (void)
{
  M6SessionWindow *small, *big;
  guint turns = 0, answered = 0;
  double fraction = 0;

  open_and_wait (small_path);
  small = find_session_window (small_path);
  g_assert_nonnull (small);

  g_action_group_activate_action (G_ACTION_GROUP (app), "open", g_variant_new_string (big_path));
  g_assert_cmpuint (m6_application_get_n_loads (app), ==, 1);
  GtkWindow *load_window = m6_application_get_load_window (app);
  g_assert_nonnull (load_window);
  M6JobBar *bar = M6_JOB_BAR (gtk_window_get_child (load_window));
  g_assert_true (m6_job_bar_get_busy (bar));
  g_assert_nonnull (strstr (m6_job_bar_get_title (bar), "big.mach6"));

  /* Drive the other window while the load runs. */
  while (m6_application_get_n_loads (app) > 0)
    {
      gboolean searching;
      g_autoptr (GVariant) state = NULL;

      g_action_group_activate_action (G_ACTION_GROUP (small), "search", NULL);
      state = g_action_group_get_action_state (G_ACTION_GROUP (small), "search");
      searching = g_variant_get_boolean (state);
      answered += searching == (answered % 2 == 0);
      if (m6_application_get_n_loads (app) > 0)
        fraction = MAX (fraction, m6_job_bar_get_fraction (bar));
      g_main_context_iteration (NULL, FALSE);
      turns++;
    }
  g_test_message ("%u main-loop turns and %u actions answered during the load; progress seen %.2f",
                  turns, answered, fraction);
  g_assert_cmpuint (turns, >, 2);
  g_assert_cmpuint (answered, ==, turns);
  g_assert_cmpfloat (fraction, >, 0.0);

  big = find_session_window (big_path);
  g_assert_nonnull (big);
  M6Thread *thread = m6_session_get_thread (m6_session_window_get_session (big), 0);
  g_assert_cmpuint (m6_tree_get_root (m6_thread_get_tree (thread))->first_child->count, ==, BIG_FRAMES);
  gtk_window_destroy (GTK_WINDOW (big));
  gtk_window_destroy (GTK_WINDOW (small));
  ui_spin (0.05);
}

/* Cancel: no window, no error dialog, a sentence saying so. */
static void
test_load_cancel (void)
{
  g_action_group_activate_action (G_ACTION_GROUP (app), "open", g_variant_new_string (big_path));
  GtkWindow *load_window = m6_application_get_load_window (app);
  g_assert_nonnull (load_window);
  if (g_getenv ("MACH6_TEST_SHOTS") != NULL)
    {
      /* Give it a frame to draw itself in (a picture only: the load may
       * finish meanwhile, then there is nothing to cancel). */
      for (int i = 0; i < 50 && m6_application_get_n_loads (app) > 0
                      && gtk_widget_get_width (GTK_WIDGET (load_window)) == 0; i++)
        g_main_context_iteration (NULL, FALSE);
      if (m6_application_get_n_loads (app) == 0)
        return;
      shoot (GTK_WIDGET (load_window), "jobs-loading.png");
    }
  m6_job_bar_cancel (M6_JOB_BAR (gtk_window_get_child (load_window)));
  g_assert_true (ui_wait_for (no_loads, NULL, 30));
  g_assert_null (find_session_window (big_path));
  g_assert_nonnull (strstr (m6_application_get_last_error (app), "cancelled"));
}

static gboolean
events_above (gpointer data)
{
  M6SessionWindow *w = find_session_window (NULL);
  return w != NULL && m6_session_get_n_events (m6_session_window_get_session (w)) > GPOINTER_TO_SIZE (data);
}

/* The worker held: the window still answers (zoom, search, thread, a
 * screenshot); released, the data comes again. */
static void
test_held_worker_window_answers (void)
{
  g_autofree char *png = g_build_filename (tmpdir, "held.png", NULL);
  GPid game = ui_start_game ("0", NULL);

  ui_wait_listed (game);
  M6SessionWindow *window = ui_attach_live (app, game, 1);
  M6Recording *recording = m6_session_window_get_recording (window);
  M6Session *session = m6_session_window_get_session (window);

  m6_recording_hold_worker (recording, TRUE);
  ui_spin (0.1);
  guint64 events = m6_session_get_n_events (session);

  g_action_group_activate_action (G_ACTION_GROUP (window), "search", NULL);
  g_action_group_activate_action (G_ACTION_GROUP (window), "zoom-reset", NULL);
  g_action_group_activate_action (G_ACTION_GROUP (window), "screenshot", g_variant_new_string (png));
  g_test_message ("after the screenshot: %s", m6_session_window_get_last_message (window));
  g_assert_cmpstr (m6_session_window_get_last_written (window), ==, png);
  ui_spin (0.3);
  g_assert_cmpuint (m6_session_get_n_events (session), ==, events);

  m6_recording_hold_worker (recording, FALSE);
  g_assert_true (ui_wait_for (events_above, GSIZE_TO_POINTER (events), 10));

  ui_stop_game (game, SIGKILL);
  gtk_window_destroy (GTK_WINDOW (window));
  ui_spin (0.05);
  g_unlink (png);
}

/* Saves asked for while one runs wait their turn, in order, and all end
 * written: none runs on the main loop, none is lost. */
static void
test_saves_wait_their_turn (void)
{
  g_autofree char *capture = g_build_filename (tmpdir, "turn.mach6", NULL);
  g_autofree char *ndjson = g_build_filename (tmpdir, "turn.ndjson", NULL);
  g_autofree char *json = g_build_filename (tmpdir, "turn.json", NULL);
  g_autofree char *ndjson_arg = g_strdup_printf ("ndjson:%s", ndjson);
  GPid game = ui_start_game ("0", NULL);

  ui_wait_listed (game);
  M6SessionWindow *window = ui_attach_live (app, game, 1);

  g_action_group_activate_action (G_ACTION_GROUP (window), "save-capture", g_variant_new_string (capture));
  g_action_group_activate_action (G_ACTION_GROUP (window), "export", g_variant_new_string (ndjson_arg));
  g_action_group_activate_action (G_ACTION_GROUP (window), "export-json", g_variant_new_string (json));
  /* Nothing was written in place: the first runs, the others wait. */
  g_assert_true (m6_session_window_get_saving (window));
  g_assert_null (m6_session_window_get_last_written (window));
  ui_wait_jobs (app);

  g_assert_cmpstr (m6_session_window_get_last_written (window), ==, json);
  const char *paths[] = { capture, ndjson, json };
  for (guint i = 0; i < G_N_ELEMENTS (paths); i++)
    {
      GStatBuf st;
      g_assert_cmpint (g_stat (paths[i], &st), ==, 0);
      g_assert_cmpint (st.st_size, >, 0);
      g_unlink (paths[i]);
    }

  ui_stop_game (game, SIGKILL);
  gtk_window_destroy (GTK_WINDOW (window));
  ui_spin (0.05);
}

/* The window gives the lock up while GTK renders a frame and takes it
 * back after: outside poll(), after frames have been drawn, no batch can
 * land while this thread runs. */
static void
test_render_gives_lock_back (void)
{
  GPid game = ui_start_game ("0", NULL);

  ui_wait_listed (game);
  M6SessionWindow *window = ui_attach_live (app, game, 1);
  M6Session *session = m6_session_window_get_session (window);
  guint refreshes = m6_test_get_count (window, "refresh");

  ui_spin (0.5);
  g_assert_cmpuint (m6_test_get_count (window, "refresh"), >, refreshes);
  for (int i = 0; i < 3; i++)
    {
      guint64 events = m6_session_get_n_events (session);
      g_usleep (50000);
      g_assert_cmpuint (m6_session_get_n_events (session), ==, events);
      ui_spin (0.1);
    }
  g_assert_true (m6_session_window_get_live (window));

  ui_stop_game (game, SIGKILL);
  gtk_window_destroy (GTK_WINDOW (window));
  ui_spin (0.05);
}

static gboolean
bar_idle (gpointer data)
{
  return !m6_job_bar_get_busy (data);
}

/* A save over the threshold runs behind the window's job bar. */
static void
test_save_behind_job_bar (void)
{
  g_autofree char *copy = g_build_filename (tmpdir, "copy.mach6", NULL);
  M6SessionWindow *window;

  /* 8 MB packed: a load that takes a while. */
  open_and_wait (big_path);
  window = find_session_window (big_path);
  g_action_group_activate_action (G_ACTION_GROUP (window), "save-capture", g_variant_new_string (copy));
  M6JobBar *bar = m6_session_window_get_job_bar (window);
  g_assert_true (m6_job_bar_get_busy (bar));
  g_assert_true (gtk_widget_get_visible (GTK_WIDGET (bar)));
  for (int i = 0; i < 50 && m6_job_bar_get_busy (bar) && gtk_widget_get_width (GTK_WIDGET (bar)) == 0; i++)
    g_main_context_iteration (NULL, FALSE);
  if (m6_job_bar_get_busy (bar))
    shoot (GTK_WIDGET (window), "jobs-saving.png");
  g_assert_true (ui_wait_for (bar_idle, bar, 30));
  g_assert_cmpstr (m6_session_window_get_last_written (window), ==, copy);
  g_assert_true (g_file_test (copy, G_FILE_TEST_EXISTS));
  gtk_window_destroy (GTK_WINDOW (window));
  ui_spin (0.05);
  g_unlink (copy);
}

/* A live session's exports from its trees go behind the job bar however
 * small: serialised in place (the point the user asked for), written on
 * the job thread, so the main loop writes no file. */
static void
test_live_exports_behind_job_bar (void)
{
  GPid game = ui_start_game ("0", NULL);

  ui_wait_listed (game);
  M6SessionWindow *window = ui_attach_live (app, game, 1);
  M6JobBar *bar = m6_session_window_get_job_bar (window);

  g_assert_true (ui_wait_for (events_above, GSIZE_TO_POINTER (1000), 10));

  static const char *const formats[] = { "json", "csv", "folded" };
  for (guint i = 0; i < G_N_ELEMENTS (formats); i++)
    {
      g_autofree char *out = g_strdup_printf ("%s/live.%s", tmpdir, formats[i]);
      g_autofree char *arg = g_strdup_printf ("%s:%s", formats[i], out);
      g_autofree char *text = NULL;

      g_action_group_activate_action (G_ACTION_GROUP (window), "export", g_variant_new_string (arg));
      g_assert_true (m6_job_bar_get_busy (bar));
      g_assert_true (ui_wait_for (bar_idle, bar, 30));
      g_assert_cmpstr (m6_session_window_get_last_written (window), ==, out);
      g_assert_true (g_file_get_contents (out, &text, NULL, NULL));
      g_assert_nonnull (strstr (text, "frame"));
      g_unlink (out);
    }

  ui_stop_game (game, SIGKILL);
  gtk_window_destroy (GTK_WINDOW (window));
  ui_spin (0.05);
}

/* The Chrome trace of a large loaded capture is written on a thread too,
 * and has every frame. */
static void
test_export_behind_job_bar (void)
{
  g_autofree char *trace = g_build_filename (tmpdir, "big.trace.json", NULL);
  g_autofree char *action = g_strdup_printf ("chrome:%s", trace);
  g_autofree char *text = NULL;
  M6SessionWindow *window;

  open_and_wait (big_path);
  window = find_session_window (big_path);
  g_action_group_activate_action (G_ACTION_GROUP (window), "export", g_variant_new_string (action));
  M6JobBar *bar = m6_session_window_get_job_bar (window);
  g_assert_true (m6_job_bar_get_busy (bar));
  g_assert_true (ui_wait_for (bar_idle, bar, 60));
  g_assert_cmpstr (m6_session_window_get_last_written (window), ==, trace);
  g_assert_true (g_file_get_contents (trace, &text, NULL, NULL));
  g_assert_true (g_str_has_prefix (text, "{") || g_str_has_prefix (text, "["));
  gtk_window_destroy (GTK_WINDOW (window));
  ui_spin (0.05);
  g_unlink (trace);
}

/* A loaded session of 6,001 nodes: its payload JSON is written on a
 * thread, and is the document the window builds in place. */
static void
test_json_of_wide_tree_behind_job_bar (void)
{
  g_autofree char *wide = g_build_filename (tmpdir, "wide.mach6", NULL);
  g_autofree char *json = g_build_filename (tmpdir, "wide.json", NULL);
  g_autofree char *action = g_strdup_printf ("json:%s", json);
  g_autofree char *text = NULL;
  g_autoptr (GError) error = NULL;

  {
    g_autoptr (M6Session) session = m6_session_new ();
    M6Thread *thread = m6_session_add_thread (session, 5, "main");
    guint32 frame = m6_session_intern_label (session, "frame", -1);
    M6CaptureWriter *writer = m6_capture_writer_new (wide, session, &error);
    g_autoptr (GArray) events = g_array_new (FALSE, FALSE, sizeof (M6Event));
    gint64 t = 0;

    g_assert_no_error (error);
    for (guint f = 0; f < 2; f++)
      {
        M6Event open = { t += 10, 0, frame, 0 };
        g_array_append_val (events, open);
        for (guint i = 0; i < 6000; i++)
          {
            char name[32];
            g_snprintf (name, sizeof name, "scope_%u", i);
            M6Event mark = { t += 10, i, m6_session_intern_label (session, name, -1), 1 };
            M6Event done = { t += 10, i + 1, M6_EVENT_DONE, 1 };
            g_array_append_val (events, mark);
            g_array_append_val (events, done);
          }
        M6Event close = { t += 10, 0, M6_EVENT_DONE, 0 };
        g_array_append_val (events, close);
      }
    m6_session_ingest (session, thread, (M6Event *) events->data, events->len);
    g_assert_true (m6_capture_writer_finish (writer, &error));
    m6_capture_writer_free (writer);
  }

  open_and_wait (wide);
  M6SessionWindow *window = find_session_window (wide);
  g_assert_nonnull (window);
  g_action_group_activate_action (G_ACTION_GROUP (window), "export", g_variant_new_string (action));
  M6JobBar *bar = m6_session_window_get_job_bar (window);
  g_assert_true (m6_job_bar_get_busy (bar));
  g_assert_true (ui_wait_for (bar_idle, bar, 60));
  g_assert_cmpstr (m6_session_window_get_last_written (window), ==, json);
  g_assert_true (g_file_get_contents (json, &text, NULL, NULL));
  g_autofree char *in_place = m6_session_window_build_json (window);
  g_assert_cmpstr (text, ==, in_place);
  gtk_window_destroy (GTK_WINDOW (window));
  ui_spin (0.05);
  g_unlink (json);
  g_unlink (wide);
}

int
main (int   argc,
      char *argv[])
{
  if (!ui_test_init (&argc, &argv, FALSE))
    return 0;
  tmpdir = g_dir_make_tmp ("mach6-jobs-XXXXXX", NULL);
  big_path = g_build_filename (tmpdir, "big.mach6", NULL);
  small_path = g_build_filename (tmpdir, "small.mach6", NULL);
  write_capture (big_path, BIG_FRAMES);
  write_capture (small_path, 100);
  /* These tests are about a long load (progress, cancel, a window that
   * answers meanwhile): every event replayed, as an old-format capture
   * opens, not from the final checkpoint in a moment. */
  m6_capture_set_force_replay (TRUE);
  app = ui_test_app_new ();

  g_test_add_func ("/ui/jobs/load-keeps-ui-responsive", test_load_keeps_ui_responsive);
  g_test_add_func ("/ui/jobs/load-cancel", test_load_cancel);
  g_test_add_func ("/ui/jobs/held-worker-window-answers", test_held_worker_window_answers);
  g_test_add_func ("/ui/jobs/render-gives-lock-back", test_render_gives_lock_back);
  g_test_add_func ("/ui/jobs/save-behind-job-bar", test_save_behind_job_bar);
  g_test_add_func ("/ui/jobs/saves-wait-their-turn", test_saves_wait_their_turn);
  g_test_add_func ("/ui/jobs/export-behind-job-bar", test_export_behind_job_bar);
  g_test_add_func ("/ui/jobs/live-exports-behind-job-bar", test_live_exports_behind_job_bar);
  g_test_add_func ("/ui/jobs/json-of-wide-tree-behind-job-bar", test_json_of_wide_tree_behind_job_bar);

  int status = g_test_run ();
  ui_remove_tree (tmpdir);
  return ui_test_finish (app, status);
}
