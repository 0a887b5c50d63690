/* SPDX-License-Identifier: MIT */
/* test-remote.c — "Connect to…" in the picker, against a real `mach6 serve
 * --listen` process (real TLS on loopback) and the real demo game: a wrong
 * token is refused in the dialog with its sentence, the right one (the
 * host typed with its port) lists the game with its host beside the local
 * processes, pins the certificate and keeps the token (0600);
 * attaching opens a normal session window whose flame graph, stats and
 * drift graph fill from the network, which saves, exports and compares
 * like a local one; a remote pid is told apart from a local one; and a
 * changed certificate is refused with its sentence.
 *
 * With $MACH6_TEST_SHOTS set to a folder, what the user sees is saved
 * there (picker, dialog, session window, comparison). */
#include <adwaita.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <string.h>

#include "m6-application.h"
#include "m6-capture.h"
#include "m6-picker-window.h"
#include "m6-process-item.h"
#include "m6-process-picker.h"
#include "m6-remote-targets.h"
#include "m6-remote-trust.h"
#include "m6-screenshot.h"
#include "m6-session-window.h"
#include "remote-test-util.h"
#include "ui-test-util.h"

/* The window's AdwWindowTitle (title and subtitle of its header bar). */
static GtkWidget *
find_window_title (GtkWidget *widget)
{
  if (ADW_IS_WINDOW_TITLE (widget))
    return widget;
  for (GtkWidget *c = gtk_widget_get_first_child (widget); c != NULL; c = gtk_widget_get_next_sibling (c))
    {
      GtkWidget *found = find_window_title (c);
      if (found != NULL)
        return found;
    }
  return NULL;
}

static M6Application *app;
static char *tmpdir;

typedef struct
{
  M6RemoteTargets *remote;
  const char      *text;
  M6SessionWindow *window;
  GPid             game;
  const char      *host;
} Wait;

static void
shoot (GtkWidget  *widget,
       const char *name)
{
  const char *dir = g_getenv ("MACH6_TEST_SHOTS");
  g_autofree char *path = dir ? g_build_filename (dir, name, NULL) : NULL;
  g_autoptr (GError) error = NULL;

  ui_spin (0.3);
  if (path != NULL && !m6_widget_save_png (widget, path, &error))
    g_test_message ("could not save %s: %s", path, error->message);
}

static gboolean
error_says (gpointer data)
{
  Wait *w = data;
  const char *error = m6_remote_targets_get_error (w->remote);
  return error != NULL && strstr (error, w->text) != NULL;
}

static gboolean
dialog_closed (gpointer data)
{
  return m6_remote_targets_get_dialog (((Wait *) data)->remote) == NULL;
}

static gboolean
row_listed (gpointer data)
{
  Wait *w = data;
  GtkWidget *list = GTK_WIDGET (m6_remote_targets_get_list (w->remote));

  for (GtkWidget *row = gtk_widget_get_first_child (list); row; row = gtk_widget_get_next_sibling (row))
    if (ADW_IS_ACTION_ROW (row) && strstr (adw_action_row_get_subtitle (ADW_ACTION_ROW (row)), w->text) != NULL)
      return TRUE;
  return FALSE;
}

static guint
n_session_windows (void)
{
  guint n = 0;

  for (GList *l = gtk_application_get_windows (GTK_APPLICATION (app)); l; l = l->next)
    n += M6_IS_SESSION_WINDOW (l->data);
  return n;
}

/* The remote window of the game has frames, ai and their stats and drift. */
static gboolean
session_fills (gpointer data)
{
  Wait *w = data;

  w->window = (M6SessionWindow *) m6_session_window_find_attached (GTK_APPLICATION (app), w->host, w->game);
  if (w->window == NULL)
    return FALSE;
  M6Node *frame = ui_node_at (w->window, "frame");
  M6Node *ai = ui_node_at (w->window, "frame/ai");
  M6StatsView *stats = m6_session_window_get_stats_view (w->window);
  M6DriftGraph *drift = m6_session_window_get_drift_graph (w->window);
  return frame != NULL && frame->count >= 40 && ai != NULL && ai->count >= 40
      && m6_stats_view_find_node (stats, ai->id) != GTK_INVALID_LIST_POSITION
      && m6_drift_graph_get_n_points (drift) >= 2;
}

static void
click_connect (GtkWindow *dialog)
{
  GtkWidget *button = gtk_window_get_default_widget (dialog);
  g_assert_nonnull (button);
  g_signal_emit_by_name (button, "clicked");
}

/* "Connect to" @serve with its token, until @game is listed. */
static void
connect_to (M6RemoteTargets *remote,
            TestServe       *serve,
            GPid             game)
{
  g_autofree char *subtitle = g_strdup_printf ("pid %d on %s", game, serve->address);
  Wait w = { remote, subtitle, NULL, game, serve->address };

  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (remote), "remote.connect-to", "(ss)", serve->address,
                                             serve->token));
  if (!ui_wait_for (row_listed, &w, 30))
    g_error ("pid %d was not listed for %s: %s", game, serve->address, m6_remote_targets_get_error (remote));
}

static M6RemoteTargets *
picker_remote (GtkWindow **picker)
{
  g_action_group_activate_action (G_ACTION_GROUP (app), "picker", NULL);
  *picker = m6_application_get_picker (app);
  g_assert_nonnull (*picker);
  return m6_picker_window_get_remote (M6_PICKER_WINDOW (*picker));
}

/* Attach the game through the picker's row action and wait until its
 * window fills; the token is the one kept for @serve. */
static M6SessionWindow *
attach_remote (M6RemoteTargets *remote,
               TestServe       *serve,
               GPid             game)
{
  Wait w = { remote, NULL, NULL, game, serve->address };

  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (remote), "remote.attach", "(si)", serve->address, game));
  if (!ui_wait_for (session_fills, &w, 60))
    g_error ("no session window of pid %d filled from %s", game, serve->address);
  g_assert_true (m6_session_window_get_live (w.window));
  g_assert_cmpstr (m6_session_window_get_host (M6_SESSION_WINDOW (w.window)), ==, serve->address);
  /* Its subtitle says where the game runs, not just its pid. */
  AdwWindowTitle *title = ADW_WINDOW_TITLE (find_window_title (GTK_WIDGET (w.window)));
  g_autofree char *where = g_strdup_printf ("pid %d on %s", game, serve->address);
  g_test_message ("subtitle: %s", adw_window_title_get_subtitle (title));
  g_assert_nonnull (strstr (adw_window_title_get_subtitle (title), where));
  return w.window;
}

/* The dialog's Host field may hold the port too; a bare IPv6 address is
 * bracketed; a bad port after the host is a sentence, not a connection. */
static void
test_compose_address (void)
{
  struct { const char *host, *port, *want; } cases[] = {
    { "rig", "7766", "rig:7766" },
    { " rig ", "7766", "rig:7766" },
    { "rig:7767", "7766", "rig:7767" },
    { "10.0.0.5:9000", "7766", "10.0.0.5:9000" },
    { "::1", "7766", "[::1]:7766" },
    { "fe80::1", "7000", "[fe80::1]:7000" },
    { "[::1]", "7766", "[::1]:7766" },
    { "[::1]:7767", "7766", "[::1]:7767" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr (GError) error = NULL;
      g_autofree char *got = m6_remote_targets_compose_address (cases[i].host, cases[i].port, &error);
      g_assert_no_error (error);
      g_assert_cmpstr (got, ==, cases[i].want);
    }
  const char *bad[] = { "rig:", "rig:port", "rig:70000", "[::1]:x" };
  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr (GError) error = NULL;
      g_autofree char *got = m6_remote_targets_compose_address (bad[i], "7766", &error);
      g_assert_null (got);
      g_assert_nonnull (error);
      g_assert_nonnull (strstr (error->message, "not a port"));
    }
}

static gboolean
window_disconnected (gpointer data)
{
  M6SessionWindow *window = data;
  const char *subtitle = m6_session_window_get_subtitle (window);

  return m6_session_window_get_notice (window) != NULL && subtitle != NULL
         && g_str_has_suffix (subtitle, "· disconnected");
}

static void
test_connect_and_attach (void)
{
  g_autofree char *server_config = g_build_filename (tmpdir, "server-connect", NULL);
  g_autoptr (TestServe) serve = test_serve_start (server_config, NULL);
  GPid game = ui_start_game ("0", NULL);
  g_autofree char *port = g_strdup_printf ("%u", serve->port);
  GtkWindow *picker = NULL;
  M6RemoteTargets *remote = picker_remote (&picker);
  Wait w = { remote, NULL, NULL, game, serve->address };

  /* The dialog, with a wrong token first. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (remote), "remote.connect", NULL));
  GtkWindow *dialog = m6_remote_targets_get_dialog (remote);
  g_assert_nonnull (dialog);
  gtk_editable_set_text (m6_remote_targets_get_dialog_entry (remote, "host"), "127.0.0.1");
  gtk_editable_set_text (m6_remote_targets_get_dialog_entry (remote, "port"), port);
  gtk_editable_set_text (m6_remote_targets_get_dialog_entry (remote, "token"), "0123456789abcdef-wrong");
  click_connect (dialog);
  w.text = "token is wrong";
  g_assert_true (ui_wait_for (error_says, &w, 30));
  g_assert_nonnull (m6_remote_targets_get_dialog (remote));
  shoot (GTK_WIDGET (dialog), "remote-dialog-wrong-token.png");

  /* The right one, the host typed with its port (which wins over the
   * Port field's): the dialog closes, the game is listed with its host. */
  gtk_editable_set_text (m6_remote_targets_get_dialog_entry (remote, "host"), serve->address);
  gtk_editable_set_text (m6_remote_targets_get_dialog_entry (remote, "port"), "7766");
  gtk_editable_set_text (m6_remote_targets_get_dialog_entry (remote, "token"), serve->token);
  click_connect (dialog);
  if (!ui_wait_for (dialog_closed, &w, 30))
    g_error ("the dialog stayed open for host “%s”: %s", serve->address, m6_remote_targets_get_error (remote));
  g_autofree char *subtitle = g_strdup_printf ("pid %d on %s", game, serve->address);
  w.text = subtitle;
  g_assert_true (ui_wait_for (row_listed, &w, 30));

  /* Beside the local processes, not instead of them: the same game is
   * listed there too (this machine), without a host, in the same window. */
  M6ProcessPicker *local = m6_picker_window_get_picker (M6_PICKER_WINDOW (picker));
  m6_process_picker_refresh (local);
  M6ProcessItem *item = m6_process_picker_find (local, game);
  g_assert_nonnull (item);
  g_assert_true (m6_process_item_get_alive (item));
  g_assert_cmpstr (m6_process_item_get_name (item), ==, "demo-game");
  g_assert_true (gtk_widget_get_root (GTK_WIDGET (local)) == GTK_ROOT (picker));
  g_assert_true (gtk_widget_get_root (GTK_WIDGET (remote)) == GTK_ROOT (picker));
  g_assert_true (gtk_widget_get_mapped (GTK_WIDGET (local)));
  g_assert_true (gtk_widget_get_mapped (GTK_WIDGET (remote)));
  /* The first connection shows the fingerprint and what to compare it
   * with, as the CLI does (issue 26 item 11, issue 21 item 13). */
  const char *notice = m6_remote_targets_get_notice (remote);
  g_autofree char *want = g_strdup_printf ("its certificate's fingerprint is SHA-256 %s", serve->fingerprint);
  if (notice == NULL || strstr (notice, want) == NULL || strstr (notice, "“mach6 serve” printed") == NULL)
    g_error ("the picker shows no fingerprint on first connection: %s", notice != NULL ? notice : "(nothing)");
  shoot (GTK_WIDGET (picker), "remote-picker.png");

  /* The certificate is pinned, the token kept for next time: 0600. */
  g_autofree char *known = g_build_filename (g_get_user_config_dir (), "mach6", "known-hosts", NULL);
  g_autofree char *known_text = NULL;
  g_assert_true (g_file_get_contents (known, &known_text, NULL, NULL));
  g_assert_nonnull (strstr (known_text, serve->fingerprint));
  g_autofree char *tokens = g_build_filename (g_get_user_config_dir (), "mach6", "remote-tokens", NULL);
  g_autofree char *tokens_text = NULL;
  GStatBuf st;
  g_assert_true (g_file_get_contents (tokens, &tokens_text, NULL, NULL));
  g_assert_nonnull (strstr (tokens_text, serve->token));
  g_assert_cmpint (g_stat (tokens, &st), ==, 0);
  g_assert_cmpint (st.st_mode & 0777, ==, 0600);

  /* Attach: a normal session window, its views filling over the network. */
  M6SessionWindow *window = attach_remote (remote, serve, game);
  M6Session *session = m6_session_window_get_session (window);
  g_assert_cmpstr (m6_session_get_process_name (session), ==, "demo-game");
  ui_spin (2.0);
  g_test_message ("remote session: %" G_GUINT64_FORMAT " events, %" G_GINT64_FORMAT " ns",
                  m6_session_get_n_events (session), m6_session_get_duration (session));
  shoot (GTK_WIDGET (window), "remote-session.png");

  /* Serve goes away, the game runs on: "disconnected", not "ended", and
   * the sentence has one period where the error ends in one (issue 21
   * item 13). */
  kill (serve->pid, SIGKILL);
  waitpid (serve->pid, NULL, 0);
  serve->pid = 0;
  g_assert_true (ui_wait_for (window_disconnected, window, 60));
  const char *said = m6_session_window_get_notice (window);
  g_test_message ("serve gone: “%s”, “%s”", m6_session_window_get_subtitle (window), said);
  g_assert_nonnull (said);
  g_assert_null (strstr (said, ".."));
  g_assert_cmpint (kill (game, 0), ==, 0);
  shoot (GTK_WIDGET (window), "remote-disconnected.png");

  gtk_window_destroy (GTK_WINDOW (window));
  ui_spin (0.2);
  ui_stop_game (game, SIGTERM);
  gtk_window_destroy (picker);
}

/* Save, export and compare a remote session, as a local one does. */
static void
test_save_export_compare (void)
{
  g_autofree char *server_config = g_build_filename (tmpdir, "server-save", NULL);
  g_autoptr (TestServe) serve = test_serve_start (server_config, NULL);
  GPid game = ui_start_game ("2", NULL);
  GtkWindow *picker = NULL;
  M6RemoteTargets *remote = picker_remote (&picker);
  g_autoptr (GError) error = NULL;

  /* A baseline recorded here, while the remote game runs. */
  g_autofree char *base = g_build_filename (tmpdir, "base.mach6", NULL);
  const char *run[] = { MACH6_CLI, "run", "-o", base, "--", DEMO_GAME, "--frames", "120", "--fps", "120",
                        "--leak-kb", "2", NULL };
  int status = 0;
  g_spawn_sync (NULL, (char **) run, NULL, G_SPAWN_STDOUT_TO_DEV_NULL | G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL,
                NULL, NULL, &status, &error);
  g_assert_no_error (error);
  g_assert_true (WIFEXITED (status) && WEXITSTATUS (status) == 0);

  connect_to (remote, serve, game);
  M6SessionWindow *window = attach_remote (remote, serve, game);

  g_autofree char *capture = g_build_filename (tmpdir, "remote.mach6", NULL);
  g_autofree char *json = g_build_filename (tmpdir, "remote.json", NULL);
  g_autofree char *csv = g_build_filename (tmpdir, "remote.csv", NULL);
  g_autofree char *folded = g_build_filename (tmpdir, "remote.folded", NULL);
  g_autofree char *csv_arg = g_strdup_printf ("csv:%s", csv);
  g_autofree char *folded_arg = g_strdup_printf ("folded:%s", folded);
  g_action_group_activate_action (G_ACTION_GROUP (window), "save-capture", g_variant_new_string (capture));
  g_action_group_activate_action (G_ACTION_GROUP (window), "export-json", g_variant_new_string (json));
  g_action_group_activate_action (G_ACTION_GROUP (window), "export", g_variant_new_string (csv_arg));
  g_action_group_activate_action (G_ACTION_GROUP (window), "export", g_variant_new_string (folded_arg));
  ui_wait_jobs (app);

  /* The saved capture is the remote game's: its name, pid, scopes, leak. */
  M6CaptureInfo info;
  g_autoptr (M6Session) saved = m6_capture_load_full (capture, &info, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (m6_session_get_process_name (saved), ==, "demo-game");
  g_assert_cmpint (m6_session_get_pid (saved), ==, game);
  M6Thread *main_thread = m6_session_get_thread (saved, 0);
  M6Node *remember = m6_tree_find_path (m6_thread_get_tree (main_thread), "frame/ai/remember");
  M6Node *frame = m6_tree_find_path (m6_thread_get_tree (main_thread), "frame");
  g_assert_nonnull (remember);
  g_assert_cmpuint (frame->count, >=, 40);
  double kb_per_frame = (double) (frame->mem_sum + frame->inverse_sum) / 1024 / frame->count;
  g_test_message ("saved: %" G_GUINT64_FORMAT " frames, %.3f KB/frame", frame->count, kb_per_frame);
  g_assert_cmpfloat (kb_per_frame, >, 1.8);
  g_assert_cmpfloat (kb_per_frame, <, 2.2);

  /* The exports hold the game's scopes. */
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_assert_true (json_parser_load_from_file (parser, json, &error));
  g_autofree char *json_text = NULL, *csv_text = NULL, *folded_text = NULL;
  g_assert_true (g_file_get_contents (json, &json_text, NULL, NULL));
  g_assert_nonnull (strstr (json_text, "\"remember\""));
  g_assert_true (g_file_get_contents (csv, &csv_text, NULL, NULL));
  g_assert_nonnull (strstr (csv_text, "frame/ai/remember"));
  g_assert_true (g_file_get_contents (folded, &folded_text, NULL, NULL));
  g_assert_nonnull (strstr (folded_text, "frame;ai;remember"));

  /* Compared with the baseline recorded here. */
  g_action_group_activate_action (G_ACTION_GROUP (window), "compare", g_variant_new_string (base));
  ui_wait_jobs (app);
  M6CompareWindow *compare = m6_session_window_get_compare_window (window);
  g_assert_nonnull (compare);
  g_test_message ("compare: %u scopes tested, %u flagged; %s", m6_compare_window_get_n_tested (compare),
                  m6_compare_window_get_n_significant (compare), m6_compare_window_get_summary (compare));
  g_assert_cmpuint (m6_compare_window_get_n_tested (compare), >=, 5);
  g_assert_nonnull (m6_compare_window_find (compare, "frame/ai/remember"));
  shoot (GTK_WIDGET (compare), "remote-compare.png");

  gtk_window_destroy (GTK_WINDOW (compare));
  gtk_window_destroy (GTK_WINDOW (window));
  ui_spin (0.2);
  ui_stop_game (game, SIGTERM);
  gtk_window_destroy (picker);
}

/* A remote game's pid is not a local one's: with the remote window open,
 * attaching that pid here tries this machine (here serve holds the game,
 * and says so), and the row again brings the same window back. */
static void
test_remote_pid_is_not_local (void)
{
  g_autofree char *server_config = g_build_filename (tmpdir, "server-pid", NULL);
  g_autoptr (TestServe) serve = test_serve_start (server_config, NULL);
  GPid game = ui_start_game ("0", NULL);
  GtkWindow *picker = NULL;
  M6RemoteTargets *remote = picker_remote (&picker);

  connect_to (remote, serve, game);
  M6SessionWindow *window = attach_remote (remote, serve, game);
  g_assert_true (m6_session_window_find_attached (GTK_APPLICATION (app), serve->address, game) == GTK_WINDOW (window));
  g_assert_null (m6_session_window_find_attached (GTK_APPLICATION (app), NULL, game));
  g_assert_null (m6_session_window_find_attached (GTK_APPLICATION (app), "127.0.0.1:1", game));

  /* The row again: the same window, no second stream. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (remote), "remote.attach", "(si)", serve->address, game));
  ui_spin (1.0);
  g_assert_cmpuint (n_session_windows (), ==, 1);

  /* This machine's pid: tried here, where serve's reader holds it. */
  g_action_group_activate_action (G_ACTION_GROUP (app), "attach", g_variant_new_int32 (game));
  ui_spin (0.5);
  const char *said = m6_application_get_last_error (app);
  g_autofree char *serve_pid = g_strdup_printf ("%d", serve->pid);
  g_test_message ("attaching pid %d here: %s", game, said);
  g_assert_nonnull (said);
  g_assert_nonnull (strstr (said, serve_pid));
  g_assert_cmpuint (n_session_windows (), ==, 1);

  gtk_window_destroy (GTK_WINDOW (window));
  ui_spin (0.2);
  ui_stop_game (game, SIGTERM);
  if (m6_application_get_picker (app) != NULL)
    gtk_window_destroy (m6_application_get_picker (app));
}

/* A server whose certificate is not the one pinned for its address: the
 * viewer refuses it with the sentence that says so, before the token goes
 * out (nothing is kept for it). */
static void
test_changed_certificate (void)
{
  g_autofree char *server_config = g_build_filename (tmpdir, "server-cert", NULL);
  g_autoptr (TestServe) serve = test_serve_start (server_config, NULL);
  g_autofree char *known = g_build_filename (g_get_user_config_dir (), "mach6", "known-hosts", NULL);
  const char *other = "00:11:22:33:44:55:66:77:88:99:aa:bb:cc:dd:ee:ff:"
                      "00:11:22:33:44:55:66:77:88:99:aa:bb:cc:dd:ee:ff";
  g_autoptr (GError) error = NULL;
  GtkWindow *picker = NULL;
  M6RemoteTargets *remote = picker_remote (&picker);
  Wait w = { remote, "different certificate", NULL, 0, serve->address };

  g_assert_true (m6_trust_add_pin (known, serve->address, other, &error));
  g_assert_no_error (error);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (remote), "remote.connect-to", "(ss)", serve->address,
                                             serve->token));
  g_assert_true (ui_wait_for (error_says, &w, 30));
  const char *said = m6_remote_targets_get_error (remote);
  g_test_message ("%s", said);
  g_assert_nonnull (strstr (said, serve->fingerprint));
  g_assert_nonnull (strstr (said, other));
  g_autofree char *tokens = g_build_filename (g_get_user_config_dir (), "mach6", "remote-tokens", NULL);
  g_autofree char *tokens_text = NULL;
  if (g_file_get_contents (tokens, &tokens_text, NULL, NULL))
    g_assert_null (strstr (tokens_text, serve->token));
  shoot (GTK_WIDGET (picker), "remote-picker-changed-certificate.png");
  gtk_window_destroy (picker);
}

int
main (int   argc,
      char *argv[])
{
  g_autoptr (GError) error = NULL;
  g_autofree char *config = g_dir_make_tmp ("mach6-ui-config-XXXXXX", NULL);

  /* The pins and tokens this test's viewer keeps, out of the user's. */
  g_setenv ("XDG_CONFIG_HOME", config, TRUE);
  g_setenv ("LANGUAGE", "C", TRUE);
  if (!ui_test_init (&argc, &argv, TRUE))
    return 0;
  tmpdir = g_dir_make_tmp ("mach6-ui-remote-XXXXXX", &error);
  g_assert_no_error (error);
  app = ui_test_app_new ();

  g_test_add_func ("/ui/remote/compose-address", test_compose_address);
  g_test_add_func ("/ui/remote/connect-and-attach", test_connect_and_attach);
  g_test_add_func ("/ui/remote/save-export-compare", test_save_export_compare);
  g_test_add_func ("/ui/remote/remote-pid-is-not-local", test_remote_pid_is_not_local);
  g_test_add_func ("/ui/remote/changed-certificate", test_changed_certificate);
  int status = g_test_run ();
  ui_remove_tree (tmpdir);
  ui_remove_tree (config);
  g_free (tmpdir);
  return ui_test_finish (app, status);
}
