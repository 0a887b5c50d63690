/* SPDX-License-Identifier: MIT */
/* test-sharing-exports.c — a live session's exports (JSON, NDJSON,
 * Chrome trace) from the window's actions, checked by parsing what they
 * wrote. Real windows (Xvfb without a display), the real demo game. */
#include <json-glib/json-glib.h>
#include <string.h>

#include "m6-job-bar.h"
#include "m6-recording.h"
#include "m6-test-hooks.h"
#include "sharing-util.h"
#include "ui-test-util.h"

static JsonNode *
parse_json (const char *text,
            const char *what)
{
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autoptr (GError) error = NULL;

  if (!json_parser_load_from_data (parser, text, -1, &error))
    g_error ("%s does not parse as JSON: %s", what, error->message);
  return json_node_ref (json_parser_get_root (parser));
}

static gboolean
job_bar_idle (gpointer bar)
{
  return !m6_job_bar_get_busy (bar);
}

static void
export_to (M6SessionWindow *window,
           const char      *format,
           const char      *path)
{
  g_autofree char *target = g_strdup_printf ("%s:%s", format, path);

  g_action_group_activate_action (G_ACTION_GROUP (window), "export", g_variant_new_string (target));
  ui_wait_jobs (app);
  /* A live window's exports are written behind its job bar. */
  ui_wait_for (job_bar_idle, m6_session_window_get_job_bar (window), 30);
  if (g_strcmp0 (m6_session_window_get_last_written (window), path) != 0)
    g_error ("win.export('%s') did not write %s: %s", format, path,
             m6_session_window_get_last_message (window));
}

static guint
count_nodes (M6Session *session)
{
  guint n = 0;

  for (guint i = 0; i < m6_session_get_n_threads (session); i++)
    n += m6_tree_get_n_nodes (m6_thread_get_tree (m6_session_get_thread (session, i))) - 1;
  return n;
}

static void
check_ndjson (const char *path)
{
  g_autofree char *text = read_text (path);
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  guint n = 0;

  for (guint i = 0; lines[i] != NULL; i++)
    {
      if (*lines[i] == '\0')
        continue;
      g_autoptr (JsonNode) node = parse_json (lines[i], "an ndjson line");
      g_assert_true (json_object_has_member (json_node_get_object (node), "threads"));
      n++;
    }
  g_assert_cmpuint (n, >=, 1);
}

static void
check_chrome (const char *path)
{
  g_autofree char *text = read_text (path);
  g_autoptr (JsonNode) root = parse_json (text, "the chrome trace");
  JsonArray *events = json_object_get_array_member (json_node_get_object (root), "traceEvents");
  guint complete = 0;

  g_assert_nonnull (events);
  for (guint i = 0; i < json_array_get_length (events); i++)
    {
      JsonObject *event = json_array_get_object_element (events, i);
      if (g_strcmp0 (json_object_get_string_member_with_default (event, "ph", ""), "X") == 0)
        {
          g_assert_true (json_object_has_member (event, "dur"));
          complete++;
        }
    }
  g_assert_cmpuint (complete, >, 30);
}

static void
test_exports (Fixture       *f,
              gconstpointer  data)
{
  M6Session *session = m6_session_window_get_session (f->window);
  g_autofree char *json = g_build_filename (f->tmpdir, "s.json", NULL);
  g_autofree char *ndjson = g_build_filename (f->tmpdir, "s.ndjson", NULL);
  g_autofree char *csv = g_build_filename (f->tmpdir, "s.csv", NULL);
  g_autofree char *folded = g_build_filename (f->tmpdir, "s.folded", NULL);
  g_autofree char *chrome = g_build_filename (f->tmpdir, "s.trace.json", NULL);
  g_autofree char *shortcut = g_build_filename (f->tmpdir, "shortcut.json", NULL);

  /* The trees are read before the next drain: the exports see them. A live
   * window writes them behind its job bar, so the worker is held while
   * the test waits for the bar. */
  M6Recording *recording = m6_session_window_get_recording (f->window);
  if (recording != NULL)
    m6_recording_hold_worker (recording, TRUE);
  export_to (f->window, "json", json);
  export_to (f->window, "csv", csv);
  export_to (f->window, "folded", folded);
  guint n_nodes = count_nodes (session);
  M6Thread *main_thread = m6_session_get_thread (session, m6_session_window_get_thread (f->window));
  M6Node *frame = ui_node_at (f->window, "frame");
  gint64 frame_total = frame->time_sum;
  g_autofree char *main_name = g_strdup (m6_thread_get_name (main_thread));
  guint n_threads = m6_session_get_n_threads (session);
  g_assert_nonnull (strstr (m6_session_window_get_last_message (f->window), "s.folded"));

  export_to (f->window, "ndjson", ndjson);
  export_to (f->window, "chrome", chrome);

  /* Ctrl+E is still the payload JSON, the same document. */
  g_action_group_activate_action (G_ACTION_GROUP (f->window), "export-json", g_variant_new_string (shortcut));
  ui_wait_jobs (app);
  g_autofree char *built = m6_session_window_build_json (f->window);
  g_autoptr (JsonNode) doc = parse_json (read_text (json), "the json export");
  g_assert_true (json_object_has_member (json_node_get_object (doc), "threads"));
  g_autoptr (JsonNode) again = parse_json (built, "the payload json");
  g_assert_true (json_object_has_member (json_node_get_object (again), "threads"));

  /* CSV: a header and one row per node. */
  g_autofree char *csv_text = read_text (csv);
  g_auto (GStrv) rows = g_strsplit (csv_text, "\n", -1);
  guint n_rows = g_strv_length (rows);
  if (n_rows > 0 && *rows[n_rows - 1] == '\0')
    n_rows--;
  g_assert_true (g_str_has_prefix (rows[0], "thread,tid,path,label,depth,count,"));
  g_assert_cmpuint (n_rows - 1, ==, n_nodes);

  /* Folded: the lines under frame add up to frame's total time. */
  g_autofree char *folded_text = read_text (folded);
  g_auto (GStrv) lines = g_strsplit (folded_text, "\n", -1);
  g_autofree char *prefix = n_threads > 1 ? g_strdup_printf ("%s;frame", main_name) : g_strdup ("frame");
  gint64 sum = 0;
  for (guint i = 0; lines[i] != NULL; i++)
    {
      const char *space = strrchr (lines[i], ' ');
      if (space == NULL)
        continue;
      if (strncmp (lines[i], prefix, strlen (prefix)) == 0
          && (lines[i][strlen (prefix)] == ';' || lines[i][strlen (prefix)] == ' '))
        sum += g_ascii_strtoll (space + 1, NULL, 10);
    }
  g_assert_cmpint (sum, ==, frame_total);
  if (recording != NULL)
    m6_recording_hold_worker (recording, FALSE);

  check_ndjson (ndjson);
  check_chrome (chrome);

  /* The same from a reopened capture, whose window keeps no raw events:
   * its exports replay the file (no event log is filled on open). */
  g_autofree char *capture = g_build_filename (f->tmpdir, "s.mach6", NULL);
  g_autofree char *ndjson2 = g_build_filename (f->tmpdir, "reopened.ndjson", NULL);
  g_autofree char *chrome2 = g_build_filename (f->tmpdir, "reopened.trace.json", NULL);
  g_action_group_activate_action (G_ACTION_GROUP (f->window), "save-capture", g_variant_new_string (capture));
  ui_wait_jobs (app);
  guint logged = m6_test_get_count (NULL, "event-log-batch");
  M6SessionWindow *opened = open_capture (capture, f->window);
  g_assert_cmpuint (m6_test_get_count (NULL, "event-log-batch"), ==, logged);
  export_to (opened, "ndjson", ndjson2);
  g_assert_cmpuint (m6_test_get_count (NULL, "event-log-batch"), >, logged);
  export_to (opened, "chrome", chrome2);
  check_ndjson (ndjson2);
  check_chrome (chrome2);

  /* An unknown format says so. */
  g_action_group_activate_action (G_ACTION_GROUP (opened), "export", g_variant_new_string ("xml:/tmp/x.xml"));
  ui_wait_jobs (app);
  g_assert_nonnull (strstr (m6_application_get_last_error (app), "xml"));
  g_assert_true (has_dialog ());
}

int
main (int   argc,
      char *argv[])
{
  if (!ui_test_init (&argc, &argv, TRUE))
    return 0;
  app = ui_test_app_new ();

  g_test_add ("/ui/sharing/exports", Fixture, NULL, live_setup, test_exports, live_teardown);

  int status = g_test_run ();
  return ui_test_finish (app, status);
}
