/* test-remote.c — "Connect to…" in the picker, against a real `mach6 serve
 * --listen` process and the real demo game: a wrong token is refused in
 * the dialog with its sentence, the right one lists the game with its
 * host, and attaching opens a normal session window whose flame graph
 * fills from the network. */
#include <adwaita.h>
#include <string.h>

#include "m6-application.h"
#include "m6-picker-window.h"
#include "m6-remote-targets.h"
#include "m6-session-window.h"
#include "m6-ui.h"
#include "remote-test-util.h"
#include "ui-test-util.h"

static M6Application *app;

typedef struct
{
  M6RemoteTargets *remote;
  const char      *text;
  M6SessionWindow *window;
  GPid             game;
} Wait;

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

static gboolean
session_fills (gpointer data)
{
  Wait *w = data;

  for (GList *l = gtk_application_get_windows (GTK_APPLICATION (app)); l; l = l->next)
    if (M6_IS_SESSION_WINDOW (l->data) && m6_session_window_get_pid (l->data) == w->game)
      w->window = l->data;
  if (w->window == NULL)
    return FALSE;
  M6Node *frame = ui_node_at (w->window, "frame");
  M6Node *ai = ui_node_at (w->window, "frame/ai");
  return frame != NULL && frame->count >= 20 && ai != NULL && ai->count >= 20;
}

static void
click_connect (GtkWindow *dialog)
{
  GtkWidget *button = gtk_window_get_default_widget (dialog);
  g_assert_nonnull (button);
  g_signal_emit_by_name (button, "clicked");
}

static void
test_connect_and_attach (void)
{
  g_autofree char *dir = g_dir_make_tmp ("mach6-ui-remote-XXXXXX", NULL);
  g_autofree char *server_config = g_build_filename (dir, "server", NULL);
  g_autoptr (TestServe) serve = test_serve_start (server_config, NULL);
  GPid game = ui_start_game ("0", NULL);
  g_autofree char *port = g_strdup_printf ("%u", serve->port);

  g_action_group_activate_action (G_ACTION_GROUP (app), "picker", NULL);
  GtkWindow *picker = m6_application_get_picker (app);
  g_assert_nonnull (picker);
  M6RemoteTargets *remote = m6_picker_window_get_remote (M6_PICKER_WINDOW (picker));
  Wait w = { remote, NULL, NULL, game };

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

  /* The right one: the dialog closes, the game is listed with its host. */
  gtk_editable_set_text (m6_remote_targets_get_dialog_entry (remote, "token"), serve->token);
  click_connect (dialog);
  g_assert_true (ui_wait_for (dialog_closed, &w, 30));
  g_autofree char *subtitle = g_strdup_printf ("pid %d on %s", game, serve->address);
  w.text = subtitle;
  g_assert_true (ui_wait_for (row_listed, &w, 30));

  /* Attach: a normal session window, its graph filling over the network. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (remote), "remote.attach", "(si)", serve->address, game));
  if (!ui_wait_for (session_fills, &w, 60))
    g_error ("no session window of pid %d filled from %s", game, serve->address);
  g_assert_true (m6_session_window_get_live (w.window));
  M6Session *session = m6_session_window_get_session (w.window);
  g_assert_cmpstr (m6_session_get_process_name (session), ==, "demo-game");

  gtk_window_destroy (GTK_WINDOW (w.window));
  ui_spin (0.2);
  ui_stop_game (game, SIGTERM);
  gtk_window_destroy (picker);
  g_autofree char *quoted = g_shell_quote (dir);
  g_autofree char *cmd = g_strdup_printf ("rm -rf %s", quoted);
  g_assert_cmpint (system (cmd), ==, 0);
}

int
main (int   argc,
      char *argv[])
{
  g_autoptr (GError) error = NULL;
  g_autofree char *cache = g_dir_make_tmp ("mach6-ui-cache-XXXXXX", NULL);
  g_autofree char *config = g_dir_make_tmp ("mach6-ui-config-XXXXXX", NULL);
  int status;

  g_setenv ("XDG_CACHE_HOME", cache, TRUE);
  g_setenv ("XDG_CONFIG_HOME", config, TRUE);
  g_setenv ("LANGUAGE", "C", TRUE);
  g_test_init (&argc, &argv, NULL);
  g_setenv ("GSETTINGS_BACKEND", "memory", TRUE);
  g_setenv ("GTK_A11Y", "none", TRUE);
  if (!gtk_init_check ())
    {
      g_print ("1..0 # SKIP no display\n");
      return 0;
    }
  m6_ui_init ();
  app = m6_application_new (G_APPLICATION_NON_UNIQUE);
  g_application_register (G_APPLICATION (app), NULL, &error);
  g_assert_no_error (error);
  g_application_hold (G_APPLICATION (app));

  g_test_add_func ("/ui/remote/connect-and-attach", test_connect_and_attach);
  status = g_test_run ();
  g_application_release (G_APPLICATION (app));
  g_clear_object (&app);
  g_autofree char *cmd = g_strdup_printf ("rm -rf '%s' '%s'", cache, config);
  (void) system (cmd);
  return status;
}
