/* SPDX-License-Identifier: MIT */
/* test-sharing.c — sessions leaving the viewer and coming back: save and
 * reopen, recent files, opening corrupt and unfinished captures, and
 * dropping files on the viewer. Pictures, exports and comparing are
 * test-sharing-pictures.c's, -exports.c's and -compare.c's. Real windows
 * (Xvfb without a display), the real demo game, driven through the
 * actions. */
#include <string.h>

#include "m6-capture.h"
#include "m6-payload.h"
#include "m6-picker-window.h"
#include "m6-recording.h"
#include "sharing-util.h"
#include "ui-test-util.h"

static void
test_save_reopen (Fixture       *f,
                  gconstpointer  data)
{
  g_autofree char *path = g_build_filename (f->tmpdir, "saved.mach6", NULL);
  M6Session *live = m6_session_window_get_session (f->window);
  g_autoptr (GPtrArray) payloads = g_ptr_array_new_with_free_func (g_free);
  guint64 events;

  /* Save, then read the live trees before the next drain: the same point
   * (the copy runs on a thread; the worker is held still meanwhile). */
  M6Recording *recording = m6_session_window_get_recording (f->window);
  m6_recording_hold_worker (recording, TRUE);
  g_action_group_activate_action (G_ACTION_GROUP (f->window), "save-capture", g_variant_new_string (path));
  ui_wait_jobs (app);
  g_assert_cmpstr (m6_session_window_get_last_written (f->window), ==, path);
  events = m6_session_get_n_events (live);
  for (guint i = 0; i < m6_session_get_n_threads (live); i++)
    {
      M6Thread *thread = m6_session_get_thread (live, i);
      g_ptr_array_add (payloads, m6_payload_to_string (m6_thread_get_tree (thread), m6_tree_get_root (m6_thread_get_tree (thread)), FALSE));
    }
  g_assert_cmpuint (payloads->len, >=, 2);   /* main and a worker */

  M6SessionWindow *opened = open_capture (path, f->window);
  M6Session *session = m6_session_window_get_session (opened);

  /* Complete up to the save point: every event, every thread. */
  g_assert_null (m6_session_window_get_notice (opened));
  g_assert_cmpuint (m6_session_get_n_events (session), ==, events);
  g_assert_cmpuint (m6_session_get_n_threads (session), ==, payloads->len);
  for (guint i = 0; i < payloads->len; i++)
    {
      M6Thread *thread = m6_session_get_thread (session, i);
      g_autofree char *payload = m6_payload_to_string (m6_thread_get_tree (thread), m6_tree_get_root (m6_thread_get_tree (thread)), FALSE);
      if (g_strcmp0 (payload, g_ptr_array_index (payloads, i)) != 0)
        g_error ("thread %u: the reopened payload differs from the live one at the save point:\n%s\nagainst\n%s",
                 i, payload, (char *) g_ptr_array_index (payloads, i));
    }

  /* The same graphs: the drift history and the frame lane came along. */
  M6Thread *a = m6_session_get_thread (live, m6_session_window_get_thread (f->window));
  M6Thread *b = m6_session_get_thread (session, m6_session_window_get_thread (opened));
  g_assert_cmpuint (m6_thread_get_frames (b)->len, ==, m6_thread_get_frames (a)->len);
  m6_recording_hold_worker (recording, FALSE);
  M6Node *frame = ui_node_at (opened, "frame");
  g_assert_nonnull (frame);
  g_assert_cmpuint (m6_history_get_points (b, frame, NULL, NULL, 0), >=, 2);
}

static gboolean
xbel_lists_recent (gpointer data)
{
  g_autofree char *text = NULL;

  return g_file_get_contents (data, &text, NULL, NULL) && strstr (text, "recent.mach6") != NULL;
}

static void
test_recent_files (Fixture       *f,
                   gconstpointer  data)
{
  g_autofree char *path = g_build_filename (f->tmpdir, "recent.mach6", NULL);
  g_autoptr (GFile) file = g_file_new_for_path (path);
  g_autofree char *uri = g_file_get_uri (file);
  GtkRecentManager *recent = gtk_recent_manager_get_default ();

  g_assert_false (gtk_recent_manager_has_item (recent, uri));
  g_action_group_activate_action (G_ACTION_GROUP (f->window), "save-capture", g_variant_new_string (path));
  ui_wait_jobs (app);
  g_assert_true (gtk_recent_manager_has_item (recent, uri));

  g_autoptr (GtkRecentInfo) info = gtk_recent_manager_lookup_item (recent, uri, NULL);
  g_assert_cmpstr (gtk_recent_info_get_mime_type (info), ==, "application/x-mach6-capture");

  /* Written to the test's own data folder, not the user's. */
  g_autofree char *xbel = g_build_filename (ui_test_get_data_home (), "recently-used.xbel", NULL);
  /* GtkRecentManager writes the file from a timeout: wait for it rather
   * than for a fixed time, which a loaded machine overruns. */
  g_assert_true (ui_wait_for (xbel_lists_recent, xbel, 20.0));

  /* The picker lists it, activatable with app.open. */
  g_action_group_activate_action (G_ACTION_GROUP (app), "picker", NULL);
  GtkWindow *picker = m6_application_get_picker (app);
  GtkListBox *list = m6_picker_window_get_recent_list (M6_PICKER_WINDOW (picker));
  GtkListBoxRow *row = gtk_list_box_get_row_at_index (list, 0);
  g_assert_nonnull (row);
  g_assert_true (gtk_widget_get_visible (gtk_widget_get_parent (gtk_widget_get_parent (GTK_WIDGET (list)))));
  g_assert_cmpstr (gtk_actionable_get_action_name (GTK_ACTIONABLE (row)), ==, "app.open");
  g_assert_cmpstr (g_variant_get_string (gtk_actionable_get_action_target_value (GTK_ACTIONABLE (row)), NULL),
                   ==, path);
  gtk_window_destroy (picker);
}

static void
test_recent_list_limits (Fixture       *f,
                         gconstpointer  data)
{
  g_autofree char *capture = g_build_filename (f->tmpdir, "base.mach6", NULL);

  write_synthetic_capture (capture, 1, 1.0);
  /* Ten captures that exist, one that is gone and a file that is no capture. */
  for (guint i = 0; i < 10; i++)
    {
      g_autofree char *name = g_strdup_printf ("c%02u.mach6", i);
      g_autofree char *path = g_build_filename (f->tmpdir, name, NULL);
      g_autoptr (GFile) src = g_file_new_for_path (capture);
      g_autoptr (GFile) dest = g_file_new_for_path (path);
      g_assert_true (g_file_copy (src, dest, G_FILE_COPY_OVERWRITE, NULL, NULL, NULL, NULL));
      m6_application_add_recent (app, path);
    }
  g_autofree char *gone = g_build_filename (f->tmpdir, "gone.mach6", NULL);
  m6_application_add_recent (app, gone);

  g_action_group_activate_action (G_ACTION_GROUP (app), "picker", NULL);
  GtkWindow *picker = m6_application_get_picker (app);
  GtkListBox *list = m6_picker_window_get_recent_list (M6_PICKER_WINDOW (picker));
  guint n = 0;

  ui_spin (0.2);
  for (GtkListBoxRow *row; (row = gtk_list_box_get_row_at_index (list, n)) != NULL; n++)
    {
      const char *path = g_variant_get_string (gtk_actionable_get_action_target_value (GTK_ACTIONABLE (row)), NULL);
      g_assert_true (g_file_test (path, G_FILE_TEST_EXISTS));
    }
  g_assert_cmpuint (n, ==, 8);

  /* Activating a row opens that capture. */
  gtk_widget_activate (GTK_WIDGET (gtk_list_box_get_row_at_index (list, 0)));
  /* It loads on a thread: wait for that, not a fixed time. */
  ui_wait_jobs (app);
  g_assert_nonnull (other_session_window (NULL));
}

static void
test_open_corrupt (Fixture       *f,
                   gconstpointer  data)
{
  g_autofree char *path = g_build_filename (f->tmpdir, "corrupt.mach6", NULL);
  g_autoptr (GError) expected = NULL;
  g_autofree char *contents = NULL;
  gsize length;

  write_synthetic_capture (path, 1, 1.0);
  g_assert_true (g_file_get_contents (path, &contents, &length, NULL));
  contents[length / 2] ^= 0x5a;   /* inside a record: its CRC fails */
  g_assert_true (g_file_set_contents (path, contents, length, NULL));
  /* Read every record: a version 4 capture opens from its last
   * checkpoint and reads no record before it (docs/capture-format.md). */
  m6_capture_set_force_replay (TRUE);
  g_assert_null (m6_capture_load (path, &expected));

  g_action_group_activate_action (G_ACTION_GROUP (app), "open", g_variant_new_string (path));
  ui_wait_jobs (app);
  m6_capture_set_force_replay (FALSE);
  g_assert_null (other_session_window (NULL));
  g_assert_cmpstr (m6_application_get_last_error (app), ==, expected->message);
  g_assert_true (has_dialog ());
  GtkWindow *picker = m6_application_get_picker (app);
  if (picker != NULL)
    gtk_window_destroy (picker);
}

static void
test_open_unfinished (Fixture       *f,
                      gconstpointer  data)
{
  g_autofree char *path = g_build_filename (f->tmpdir, "unfinished.mach6", NULL);
  g_autofree char *contents = NULL;
  gsize length;

  write_synthetic_capture (path, 1, 1.0);
  g_assert_true (g_file_get_contents (path, &contents, &length, NULL));
  /* The END record cut in half, as a crash would leave it. */
  g_assert_true (g_file_set_contents (path, contents, length - 20, NULL));

  M6SessionWindow *opened = open_capture (path, NULL);
  const char *notice = m6_session_window_get_notice (opened);
  g_assert_nonnull (notice);
  g_assert_nonnull (strstr (notice, "not finished"));
  g_assert_nonnull (ui_node_at (opened, "frame/physics"));
  gtk_window_destroy (GTK_WINDOW (opened));
}

static void
test_drop (Fixture       *f,
           gconstpointer  data)
{
  g_autofree char *path = g_build_filename (f->tmpdir, "dropped.mach6", NULL);
  g_autoptr (GFile) file = g_file_new_for_path (path);
  GValue value = G_VALUE_INIT;
  GSList *files = g_slist_append (NULL, file);

  write_synthetic_capture (path, 1, 1.0);

  /* What a file manager drops: a GdkFileList. */
  g_value_init (&value, GDK_TYPE_FILE_LIST);
  g_value_take_boxed (&value, gdk_file_list_new_from_list (files));
  g_slist_free (files);
  g_assert_true (m6_application_open_dropped (app, &value));
  g_value_unset (&value);
  ui_wait_jobs (app);

  M6SessionWindow *opened = other_session_window (NULL);
  g_assert_nonnull (opened);
  g_assert_nonnull (ui_node_at (opened, "frame/render"));
  gtk_window_destroy (GTK_WINDOW (opened));

  /* A single GFile too; and a value without a file is refused. */
  g_value_init (&value, G_TYPE_FILE);
  g_value_set_object (&value, file);
  g_assert_true (m6_application_open_dropped (app, &value));
  g_value_unset (&value);
  ui_wait_jobs (app);
  opened = other_session_window (NULL);
  g_assert_nonnull (opened);
  gtk_window_destroy (GTK_WINDOW (opened));

  g_value_init (&value, G_TYPE_STRING);
  g_value_set_string (&value, path);
  g_assert_false (m6_application_open_dropped (app, &value));
  g_value_unset (&value);
}

int
main (int   argc,
      char *argv[])
{
  if (!ui_test_init (&argc, &argv, TRUE))
    return 0;
  app = ui_test_app_new ();

  g_test_add ("/ui/sharing/save-reopen", Fixture, NULL, live_setup, test_save_reopen, live_teardown);
  g_test_add ("/ui/sharing/recent-files", Fixture, NULL, live_setup, test_recent_files, live_teardown);
  g_test_add ("/ui/sharing/recent-list", Fixture, NULL, plain_setup, test_recent_list_limits, live_teardown);
  g_test_add ("/ui/sharing/open-corrupt", Fixture, NULL, plain_setup, test_open_corrupt, live_teardown);
  g_test_add ("/ui/sharing/open-unfinished", Fixture, NULL, plain_setup, test_open_unfinished, live_teardown);
  g_test_add ("/ui/sharing/drop", Fixture, NULL, plain_setup, test_drop, live_teardown);

  int status = g_test_run ();
  return ui_test_finish (app, status);
}
