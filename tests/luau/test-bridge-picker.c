/* SPDX-License-Identifier: MIT */
/* test-bridge-picker.c — a Roblox Studio session, streamed by the module
 * (studio.luau in luau-test-host) to the real `mach6 bridge`, in the
 * viewer's process picker like any instrumented process, under the name the
 * module sent, and attached from there: a real GTK window (Xvfb under make
 * test) whose tree fills with the session's frames. */
#include <gtk/gtk.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "m6-flame-graph.h"
#include "m6-picker-window.h"
#include "m6-process-item.h"
#include "m6-process-picker.h"
#include "m6-screenshot.h"
#include "m6-session-window.h"
#include "ui-test-util.h"

static M6Application *app;

/* The bridge and the game end with the test, even when it fails. */
static void
die_with_parent (gpointer data)
{
  (void) data;
  prctl (PR_SET_PDEATHSIG, SIGTERM);
}

static void
shoot (GtkWidget *widget, const char *name)
{
  const char *dir = g_getenv ("MACH6_TEST_SHOTS");
  g_autofree char *path = dir ? g_build_filename (dir, name, NULL) : NULL;
  g_autoptr (GError) error = NULL;

  ui_spin (0.3);
  if (path != NULL && !m6_widget_save_png (widget, path, &error))
    g_test_message ("could not save %s: %s", path, error->message);
}

/* The pid `mach6 list` gives the process called @name, or 0. */
static GPid
listed_pid (const char *name)
{
  const char *argv[] = { MACH6_CLI, "list", NULL };
  g_autofree char *out = NULL;
  g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL, &out, NULL, NULL, NULL);
  g_autofree char *pattern = g_strdup_printf (" %s ", name);
  g_auto (GStrv) rows = g_strsplit (out ? out : "", "\n", -1);
  for (guint i = 0; rows[i] != NULL; i++)
    if (strstr (rows[i], pattern) != NULL)
      return (GPid) g_ascii_strtoll (rows[i] + strspn (rows[i], " "), NULL, 10);
  return 0;
}

typedef struct
{
  M6ProcessPicker *picker;
  GPid             pid;
  const char      *name;
  M6SessionWindow *window;
} Wait;

static gboolean
picker_lists (gpointer data)
{
  Wait *w = data;
  m6_process_picker_refresh (w->picker);
  M6ProcessItem *item = m6_process_picker_find (w->picker, w->pid);
  return item != NULL && m6_process_item_get_alive (item)
      && g_strcmp0 (m6_process_item_get_name (item), w->name) == 0;
}

static gboolean
session_fills (gpointer data)
{
  Wait *w = data;
  w->window = NULL;
  for (GList *l = gtk_application_get_windows (GTK_APPLICATION (app)); l; l = l->next)
    if (M6_IS_SESSION_WINDOW (l->data) && m6_session_window_get_pid (l->data) == w->pid)
      w->window = l->data;
  if (w->window == NULL)
    return FALSE;
  M6FlameGraph *flame = m6_session_window_get_flame_graph (w->window);
  const char *paths[] = { "frame", "frame/scope1", "frame/scope2", "frame/scope3" };
  graphene_rect_t rect;
  for (guint i = 0; i < G_N_ELEMENTS (paths); i++)
    {
      M6Node *node = ui_node_at (w->window, paths[i]);
      if (node == NULL || node->count < 30)
        return FALSE;
    }
  /* The scopes are microseconds of a 16.7 ms frame: only the frame is wide
   * enough to be drawn in the flame graph. */
  return m6_flame_graph_get_node_rect (flame, ui_node_at (w->window, "frame")->id, &rect);
}

static void
test_picker (void)
{
  /* The bridge, on a port of its own. */
  const char *bridge_argv[] = { MACH6_CLI, "bridge", "--listen", "127.0.0.1:0", NULL };
  GPid bridge;
  int bridge_fd;
  g_assert_true (g_spawn_async_with_pipes (NULL, (char **) bridge_argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD,
                                           die_with_parent, NULL, &bridge, NULL, &bridge_fd, NULL, NULL));
  char line[256];
  gsize len = 0;
  while (len < sizeof line - 1 && read (bridge_fd, line + len, 1) == 1 && line[len] != '\n')
    len++;
  line[len] = '\0';
  const char *http = strstr (line, "http://");
  g_assert_nonnull (http);
  g_autofree char *url = g_strndup (http, strcspn (http, " \n"));

  /* The game: 3 scopes a frame at 60 fps, frames labelled "frame" at once. */
  g_autofree char *name = g_strdup_printf ("picker%d", (int) getpid () % 100000);
  const char *game_argv[] = { LUAU_TEST_HOST, "--frames", "100000", "--fps", "60", STUDIO, url, name, "0", "3",
                              "nowait", NULL };
  GPid game;
  g_assert_true (g_spawn_async (NULL, (char **) game_argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDOUT_TO_DEV_NULL,
                                die_with_parent, NULL, &game, NULL));
  GPid pid = 0;
  for (int i = 0; i < 200 && pid == 0; i++)
    if ((pid = listed_pid (name)) == 0)
      g_usleep (50000);
  if (pid == 0)
    g_error ("the session %s is not in mach6 list", name);

  g_action_group_activate_action (G_ACTION_GROUP (app), "picker", NULL);
  GtkWindow *window = m6_application_get_picker (app);
  g_assert_nonnull (window);
  Wait w = { m6_picker_window_get_picker (M6_PICKER_WINDOW (window)), pid, name, NULL };
  if (!ui_wait_for (picker_lists, &w, 30))
    g_error ("the picker does not list the session %s (pid %d) alive", name, pid);
  g_assert_true (gtk_widget_get_mapped (GTK_WIDGET (w.picker)));
  shoot (GTK_WIDGET (window), "luau-bridge-picker.png");

  /* Attached from the picker's list: the session's tree in a window. */
  g_action_group_activate_action (G_ACTION_GROUP (app), "attach", g_variant_new_int32 (pid));
  if (!ui_wait_for (session_fills, &w, 60))
    {
      if (w.window != NULL)
        shoot (GTK_WIDGET (w.window), "luau-bridge-session-failed.png");
      const char *paths[] = { "frame", "frame/scope1", "frame/scope2", "frame/scope3" };
      for (guint i = 0; w.window != NULL && i < G_N_ELEMENTS (paths); i++)
        {
          M6Node *node = ui_node_at (w.window, paths[i]);
          g_test_message ("%s: %s, %" G_GUINT64_FORMAT " calls", paths[i], node ? "shown" : "absent",
                          node ? (guint64) node->count : 0);
        }
      g_error ("the session window of %s did not fill (%s)", name,
             m6_application_get_last_error (app) ? m6_application_get_last_error (app) : "no error");
    }
  shoot (GTK_WIDGET (w.window), "luau-bridge-session.png");
  gtk_window_destroy (GTK_WINDOW (w.window));
  if (m6_application_get_picker (app) != NULL)   /* attaching may have closed it */
    gtk_window_destroy (m6_application_get_picker (app));
  ui_spin (0.2);

  kill (game, SIGTERM);
  waitpid (game, NULL, 0);
  g_spawn_close_pid (game);
  kill (bridge, SIGTERM);
  waitpid (bridge, NULL, 0);
  g_spawn_close_pid (bridge);
  close (bridge_fd);
}

int
main (int argc, char **argv)
{
  if (!ui_test_init (&argc, &argv, FALSE))
    return 0;
  app = ui_test_app_new ();
  g_test_add_func ("/luau/bridge/picker", test_picker);
  return ui_test_finish (app, g_test_run ());
}
